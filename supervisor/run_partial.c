/*
 * The partial result of a run the token budget ended. The budget is
 * checked before each LLM turn, so the run stops once it is spent (turns
 * already on the wire finish and count: the total can pass the budget by
 * what they used). The root then cannot take the turn that would have put
 * its subagents' results together, and the run fails; what those agents
 * finished is not thrown away: it is added to the run's failure, which is
 * stored as the run's result and printed.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "agent/profile.h"
#include "common/buf.h"
#include "supervisor/run.h"

#define RUN_PARTIAL_MAX	(256u * 1024)	/* bytes of results kept */

/* 1 added, 0 nothing to add, -1 the text is full. */
static int
run_partial_node(struct buf *b, const struct node *n)
{
	if (n->depth == 0 || n->result == NULL || *n->result == '\0' ||
	    (n->end != NODE_END_COMPLETE && n->end != NODE_END_AUTO_COMPLETE))
		return 0;
	if (buf_addf(b, "\n\n--- %s (%s): %.200s\n%s", n->path,
	    n->profile != NULL ? n->profile->name : "?", n->task != NULL ?
	    n->task : "", n->result) == -1)
		return -1;
	return 1;
}

void
run_partial(struct run *r)
{
	struct buf	 b;
	size_t		 i, nfound = 0;
	char		*text;
	int		 rc = 0;

	if (!r->budget_spent || r->root == NULL ||
	    r->root->end == NODE_END_COMPLETE)
		return;
	buf_init(&b, RUN_PARTIAL_MAX);
	if (buf_addf(&b, "%s\n\nPartial result: the token budget ran out "
	    "before the task was done. What the agents finished:",
	    r->root->error != NULL ? r->root->error : "failed") == -1)
		goto out;
	for (i = 0; i < r->nnodes && rc != -1; i++)
		if ((rc = run_partial_node(&b, r->nodes[i])) == 1)
			nfound++;	/* -1: over RUN_PARTIAL_MAX, the rest */
	if (nfound == 0 || (text = buf_release(&b, NULL)) == NULL)
		goto out;
	free(r->root->error);
	r->root->error = text;
	return;
out:
	buf_free(&b);
}

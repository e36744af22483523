/*
 * The memory a finished agent leaves: its node's summary, and the merge
 * node that joins the results of parallel subagents (docs/memory.md).
 *
 * A completed subagent's summary is its complete() result, unless the
 * result or its transcript is longer than the run's limits: then the
 * summary is an LLM request through the broker (purpose "summary", step 0
 * of the agent's path, so cassettes record and replay it like any turn),
 * and the parent is told only when the summary is stored, so whatever the
 * parent does next (delegate with inherit_context, synthesize) sees it.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "agent/profile.h"
#include "common/log.h"
#include "common/xmalloc.h"
#include "supervisor/run.h"
#include "supervisor/store.h"

#define RUN_SUMMARY_STEP	0	/* agents' own turns start at 1 */
#define RUN_MERGE_LABEL_MAX	200

static void
run_summary_result(struct run *r, struct node *n)
{
	if (store_node_set_summary(r->store, n->store_node, n->result,
	    STORE_SUMMARY_RESULT, NULL) == -1)
		log_warnx("store: summary of %s: %s", n->path,
		    store_errmsg(r->store));
}

static void
run_summary_done(struct run *r, void *arg, struct msg_reply *reply,
    const char *code, const char *error)
{
	struct node	*n = arg;

	n->summarizing = 0;
	/* The summary's tokens are the node's, not its next message's. */
	memset(&n->usage_unsaved, 0, sizeof(n->usage_unsaved));
	if (reply != NULL && reply->msg.text != NULL &&
	    *reply->msg.text != '\0') {
		if (store_node_set_summary(r->store, n->store_node,
		    reply->msg.text, STORE_SUMMARY_LLM, &reply->usage) == -1)
			log_warnx("store: summary of %s: %s", n->path,
			    store_errmsg(r->store));
	} else {
		log_warnx("agent %s: LLM summary failed (%s): %s; its result "
		    "is its summary", n->path, code ? code : "empty",
		    error ? error : "the model wrote no text");
		run_record_event(r, n, "summary_failed", NULL,
		    error ? error : "empty summary");
		run_summary_result(r, n);
	}
	if (store_flush(r->store) == -1)
		log_warnx("store: %s", store_errmsg(r->store));
	run_node_tell(r, n);
}

int
run_summary_start(struct run *r, struct node *n)
{
	struct store_summary_policy	 pol;
	struct msg_list			 req;
	int				 need;

	if (r->store == NULL || n->store_node <= 0 ||
	    n->end != NODE_END_COMPLETE || n->result == NULL)
		return 0;
	pol.result_max = (size_t)r->opts.limits.summary_result_max;
	pol.transcript_max = (size_t)r->opts.limits.summary_transcript_max;
	need = store_summary_needed(r->store, n->store_node, n->result, &pol);
	if (need == -1)
		log_warnx("store: %s", store_errmsg(r->store));
	/* The root's result is the run's: nobody reads its summary. */
	if (need != 1 || n == r->root || r->cancelling) {
		run_summary_result(r, n);
		return 0;
	}
	msg_list_init(&req);
	if (store_summary_prompt(r->store, n->store_node, n->result,
	    &req) == -1) {
		log_warnx("store: %s", store_errmsg(r->store));
		msg_list_free(&req);
		run_summary_result(r, n);
		return 0;
	}
	log_info("agent %s: long result or transcript: asking for a summary",
	    n->path);
	n->summarizing = 1;
	/* run_summary_done runs exactly once, maybe from in here. */
	(void)broker_submit(r, n, RUN_SUMMARY_STEP, IPC_PURPOSE_SUMMARY, &req,
	    NULL, 0, run_summary_done, n);
	msg_list_free(&req);
	return 1;
}

/*
 * One merge node for the subagents one turn of parent ran in parallel,
 * once all of them ended; its summary lists each one's summary (or
 * result), so the graph holds the synthesis step's input in one place.
 */
void
run_merge(struct run *r, struct node *parent, struct node *const *children,
    size_t n)
{
	struct store_node	 sn;
	struct store_graph	 g;
	struct buf		 b;
	int64_t			*ids, merge;
	char			 label[RUN_MERGE_LABEL_MAX];
	char			*text;
	size_t			 i, k, nids = 0;

	if (r->store == NULL || n < 2)
		return;
	ids = xcalloc(n, sizeof(*ids));
	for (i = 0; i < n; i++)
		if (children[i] != NULL && children[i]->store_node > 0 &&
		    children[i]->end == NODE_END_COMPLETE)
			ids[nids++] = children[i]->store_node;
	if (nids < 2) {
		free(ids);
		return;
	}
	memset(&g, 0, sizeof(g));
	if (store_graph_load(r->store, r->run_id, &g) == -1) {
		log_warnx("store: %s", store_errmsg(r->store));
		free(ids);
		return;
	}
	snprintf(label, sizeof(label), "parallel results for agent %s",
	    parent->path);
	buf_init(&b, 0);
	for (i = 0; i < n; i++) {
		if (children[i] == NULL || children[i]->end !=
		    NODE_END_COMPLETE)
			continue;
		memset(&sn, 0, sizeof(sn));
		for (k = 0; k < g.nnodes; k++)
			if (g.nodes[k].id == children[i]->store_node)
				sn = g.nodes[k];
		buf_addf(&b, "%sagent %s (%s): %s", b.len ? "\n\n" : "",
		    children[i]->path, children[i]->profile->name,
		    sn.summary ? sn.summary : (children[i]->result ?
		    children[i]->result : ""));
	}
	text = buf_release(&b, NULL);
	store_graph_free(&g);
	if (store_node_merge(r->store, r->run_id, ids, nids, label,
	    &merge) == -1 || store_node_set_summary(r->store, merge,
	    text ? text : "", STORE_SUMMARY_RESULT, NULL) == -1)
		log_warnx("store: merge for %s: %s", parent->path,
		    store_errmsg(r->store));
	else
		parent->merge_node = merge;
	free(text);
	free(ids);
}

void
run_batch_merge(struct run *r, struct node *n)
{
	if (n->nbatch >= 2)
		run_merge(r, n, n->batch, n->nbatch);
	free(n->batch);
	n->batch = NULL;
	n->nbatch = 0;
}

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
#include "store/store.h"
#include "supervisor/run.h"

#define RUN_SUMMARY_STEP	0	/* agents' own turns start at 1 */
#define RUN_MERGE_LABEL_MAX	200

static void
run_summary_result(struct run *r, struct node *n)
{
	if (store_node_set_summary(r->store, n->store_node, n->result,
	    STORE_SUMMARY_RESULT, NULL) == -1)
		run_store_warn(r, "summary of %s", n->path);
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
			run_store_warn(r, "summary of %s", n->path);
	} else {
		log_warnx("agent %s: LLM summary failed (%s): %s; its result "
		    "is its summary", n->path, code ? code : "empty",
		    error ? error : "the model wrote no text");
		run_record_event(r, n, "summary_failed", NULL,
		    error ? error : "empty summary");
		run_summary_result(r, n);
	}
	if (store_flush(r->store) == -1)
		run_store_warn(r, "run %lld", (long long)r->run_id);
	run_node_tell(r, n);
}

/* What the store holds of a finished node is on disk before anyone hears
 * of it: its status, and its summary if it has one (docs/memory.md). One
 * commit per finished agent (run_store_done leaves it to us). */
static void
run_summary_durable(struct run *r)
{
	if (r->store != NULL && store_flush(r->store) == -1)
		run_store_warn(r, "run %lld", (long long)r->run_id);
}

int
run_summary_start(struct run *r, struct node *n)
{
	struct store_summary_policy	 pol;
	struct msg_list			 req;
	int				 need;

	if (r->store == NULL || n->store_node <= 0 ||
	    !run_end_ok(n->end) || n->result == NULL) {
		run_summary_durable(r);
		return 0;
	}
	pol.result_max = (size_t)r->opts.limits.summary_result_max;
	pol.transcript_max = (size_t)r->opts.limits.summary_transcript_max;
	need = store_summary_needed(r->store, n->store_node, n->result, &pol);
	if (need == -1)
		run_store_warn(r, "run %lld", (long long)r->run_id);
	/* The root's result is the run's: nobody reads its summary. */
	if (need != 1 || n == r->root || r->cancelling) {
		run_summary_result(r, n);
		run_summary_durable(r);
		return 0;
	}
	msg_list_init(&req);
	if (store_summary_prompt(r->store, n->store_node, n->result,
	    &req) == -1) {
		run_store_warn(r, "run %lld", (long long)r->run_id);
		msg_list_free(&req);
		run_summary_result(r, n);
		run_summary_durable(r);
		return 0;
	}
	/* The status is durable while the summary is being written. */
	run_summary_durable(r);
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
 * One merge node joining parts[0..n-1] (at least two), for the synthesis
 * step of the agent at parent_path; its summary lists each part's node
 * summary, or its result. With once, nothing when the same merge exists
 * (a resumed run may have written it before it stopped). The merge
 * node's id, 0 if none was written.
 */
int64_t
run_merge_parts(struct run *r, const char *parent_path,
    const struct run_merge_part *parts, size_t n, int once)
{
	struct buf	 b;
	int64_t		*ids, merge = 0;
	char		 label[RUN_MERGE_LABEL_MAX];
	char		*text, *summary;
	size_t		 i;
	int		 found;

	if (r->store == NULL || n < 2)
		return 0;
	ids = xcalloc(n, sizeof(*ids));
	for (i = 0; i < n; i++)
		ids[i] = parts[i].node;
	/* Only these nodes are read: the run's whole graph was, per batch. */
	if (once && (found = store_merge_find(r->store, ids, n, &merge)) != 0) {
		if (found == -1)
			run_store_warn(r, "run %lld", (long long)r->run_id);
		free(ids);
		return 0;
	}
	snprintf(label, sizeof(label), "parallel results for agent %s",
	    parent_path);
	buf_init(&b, 0);
	for (i = 0; i < n; i++) {
		summary = NULL;
		if (store_node_summary(r->store, parts[i].node, &summary) == -1)
			run_store_warn(r, "run %lld", (long long)r->run_id);
		buf_addf(&b, "%sagent %s (%s): %s", b.len ? "\n\n" : "",
		    parts[i].path, parts[i].profile, summary ? summary :
		    (parts[i].result ? parts[i].result : ""));
		free(summary);
	}
	text = buf_release(&b, NULL);
	merge = 0;
	if (store_node_merge(r->store, r->run_id, ids, n, label,
	    &merge) == -1 || store_node_set_summary(r->store, merge,
	    text ? text : "", STORE_SUMMARY_RESULT, NULL) == -1) {
		run_store_warn(r, "merge for %s", parent_path);
		merge = 0;
	}
	free(text);
	free(ids);
	return merge;
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
	struct run_merge_part	*parts;
	int64_t			 merge;
	size_t			 i, nparts = 0;

	parts = xcalloc(n + 1, sizeof(*parts));
	for (i = 0; i < n; i++) {
		if (children[i] == NULL || children[i]->store_node <= 0 ||
		    !run_end_ok(children[i]->end))
			continue;
		parts[nparts].node = children[i]->store_node;
		parts[nparts].path = children[i]->path;
		parts[nparts].profile = children[i]->profile->name;
		parts[nparts].result = children[i]->result;
		nparts++;
	}
	if ((merge = run_merge_parts(r, parent->path, parts, nparts, 0)) > 0)
		parent->merge_node = merge;
	free(parts);
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

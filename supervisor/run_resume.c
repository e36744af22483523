/*
 * Resuming an interrupted run from the store's plan (warren resume RUN).
 *
 * The orchestrator restarts from its last written messages. A subagent
 * that finished is never run again: its stored result answers the delegate
 * call it was made for (matched by the call id). A delegate call whose
 * subagent had not finished gets the agent core's "interrupted" result and
 * the orchestrator delegates again; that subagent starts afresh (the worker
 * protocol carries no message history into a worker), and the unfinished
 * row is marked cancelled so the graph shows what happened.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/log.h"
#include "common/xmalloc.h"
#include "supervisor/run.h"
#include "supervisor/store.h"

/* The plan agent that is a direct child of path and answers call_id. */
static const struct store_plan_agent *
run_resume_child(const struct store_plan *p, const char *parent,
    const char *call_id)
{
	const struct store_agent	*a;
	size_t				 i, len = strlen(parent);

	for (i = 0; i < p->nagents; i++) {
		a = &p->agents[i].agent;
		if (a->call_id == NULL || strcmp(a->call_id, call_id) != 0)
			continue;
		if (strncmp(a->path, parent, len) == 0 && a->path[len] == '.' &&
		    strchr(a->path + len + 1, '.') == NULL)
			return &p->agents[i];
	}
	return NULL;
}

static void
run_resume_answer(struct msg_list *out, const struct msg_call *call,
    const struct store_plan_agent *child)
{
	const struct store_agent	*a = &child->agent;
	struct msg			 m;

	memset(&m, 0, sizeof(m));
	m.role = MSG_TOOL;
	m.call_id = xstrdup(call->id);
	m.name = xstrdup(call->name);
	if (a->status == STORE_AGENT_DONE)
		m.text = xstrdup(a->result ? a->result : "");
	else {
		m.is_error = 1;
		xasprintf(&m.text, "subagent %s (%s) failed: %s", a->path,
		    a->profile ? a->profile : "?", a->result ? a->result :
		    (a->exit_reason ? a->exit_reason : "no reason recorded"));
	}
	if (msg_list_take(out, &m) == -1)
		fatal("msg_list_take");
}

/*
 * Fill the root's node from the plan and build the messages the
 * orchestrator resumes from. Returns 0, or 1 when the root had already
 * finished (nothing to run).
 */
int
run_resume_prepare(struct run *r, const struct store_plan *p,
    struct msg_list *out)
{
	const struct store_plan_agent	*root = NULL, *child;
	struct node			*n = r->root;
	unsigned			 nchild;
	size_t				 i;

	for (i = 0; i < p->nagents; i++)
		if (strcmp(p->agents[i].agent.path, "0") == 0)
			root = &p->agents[i];
	if (root == NULL)
		return -1;
	if (root->finished)
		return 1;
	n->store_agent = root->agent.id;
	n->store_node = root->agent.node;
	if (msg_list_copy(out, &root->messages) == -1)
		fatal("msg_list_copy");
	n->ckpt_seq = (uint32_t)root->messages.n;
	/* New children take fresh paths after the earlier ones. */
	for (i = 0, nchild = 0; i < p->nagents; i++) {
		const char *path = p->agents[i].agent.path;

		if (strncmp(path, "0.", 2) == 0 && strchr(path + 2, '.') ==
		    NULL && (unsigned)strtoul(path + 2, NULL, 10) > nchild)
			nchild = (unsigned)strtoul(path + 2, NULL, 10);
	}
	n->nchildren = nchild;
	r->nagents = 0;
	for (i = 0; i < p->nagents; i++) {
		if (strcmp(p->agents[i].agent.path, "0") == 0)
			continue;
		r->nagents++;	/* they count against --max-agents */
		if (!p->agents[i].finished && r->store != NULL)
			(void)store_agent_set_status(r->store,
			    p->agents[i].agent.id, STORE_AGENT_CANCELLED,
			    NULL, "restarted on resume");
	}
	/* Calls in flight when it died: finished children answer them. */
	for (i = 0; i < root->npending; i++) {
		if (strcmp(root->pending[i].name, "delegate") != 0 ||
		    (child = run_resume_child(p, "0",
		    root->pending[i].id)) == NULL || !child->finished)
			continue;
		log_info("resume: %s already finished: not run again",
		    child->agent.path);
		run_resume_answer(out, &root->pending[i], child);
	}
	return 0;
}

/*
 * The orchestrator: the root agent (path "0", depth 0), run inside the
 * supervisor with the orchestrator profile. It plans and delegates and runs
 * no file or shell tool. The same sans-IO agent loop as in the workers,
 * driven here by callbacks from the event loop instead of blocking calls:
 * an LLM answer or a subagent's end feeds the agent, then orch_drive()
 * asks it what it needs next.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "agent/agent.h"
#include "agent/profile.h"
#include "common/clock.h"
#include "common/jschema.h"
#include "common/log.h"
#include "common/xmalloc.h"
#include "store/store.h"
#include "supervisor/compose.h"
#include "supervisor/loop.h"
#include "supervisor/run.h"

struct orch_state {
	struct run		*run;
	unsigned		 step;
	int			 llm_wait;	/* a turn is in flight */
	uint64_t		 llm_handle;
	int			 tools_wait;	/* results are being collected */
	struct agent_result	*res;
	char			**texts;
	struct node		**children;	/* delegated by this turn */
	size_t			 ncalls;
	size_t			 npending;
	int			 driving;	/* orch_drive is on the stack */
	int			 again;		/* drive once more after it */
	uint64_t		 timer;
	uint64_t		 timer_due;
};

static void	orch_drive(struct run *);

static void
orch_checkpoint(struct run *r)
{
	const struct msg_list	*log = agent_messages(r->orch);
	struct node		*n = r->root;
	size_t			 i;

	for (i = n->ckpt_seq; i < log->n; i++)
		run_store_msg(r, n, &log->v[i]);
	n->ckpt_seq = (uint32_t)log->n;
}

static void
orch_event(const struct agent_event *ev, void *arg)
{
	struct run	*r = arg;

	switch (ev->type) {
	case AGENT_EV_TOOL_CALL:
		ui_tool(r->root, ev->name ? ev->name : "?", ev->text);
		run_record_event(r, r->root, "tool_call", ev->name, ev->text);
		break;
	case AGENT_EV_TOOL_RESULT:
		ui_tool_result(r->root, ev->name ? ev->name : "?", ev->text,
		    ev->is_error);
		run_record_event(r, r->root, ev->is_error ? "tool_error" :
		    "tool_result", ev->name, ev->text);
		break;
	case AGENT_EV_REMINDER:
	case AGENT_EV_NUDGE:
	case AGENT_EV_LOOP_WARNING:
		run_record_event(r, r->root, "note", ev->name, ev->text);
		break;
	case AGENT_EV_LLM:
	case AGENT_EV_SUMMARY:
	case AGENT_EV_CLEAR:
	case AGENT_EV_DONE:
	default:
		break;
	}
}

static void
orch_llm_done(struct run *r, void *arg, struct msg_reply *reply,
    const char *code, const char *error)
{
	struct orch_state	*o = r->orch_state;

	(void)arg;
	if (o == NULL)
		return;
	o->llm_wait = 0;
	o->llm_handle = 0;
	if (reply != NULL)
		(void)agent_feed_llm(r->orch, reply);
	else {
		log_warnx("agent 0: LLM turn failed (%s): %s", code, error);
		if (strcmp(code, IPC_ERR_CANCELLED) != 0 &&
		    strcmp(code, IPC_ERR_BUDGET) != 0)
			r->llm_failed = 1;
		(void)agent_feed_llm_error(r->orch, error);
	}
	orch_checkpoint(r);
	orch_drive(r);
}

static void
orch_feed_results(struct run *r)
{
	struct orch_state	*o = r->orch_state;
	size_t			 i;

	o->tools_wait = 0;
	/* Parallel subagents' results joined for the synthesis step. */
	run_merge(r, r->root, o->children, o->ncalls);
	(void)agent_feed_results(r->orch, o->res, o->ncalls);
	for (i = 0; i < o->ncalls; i++)
		free(o->texts[i]);
	free(o->texts);
	free(o->res);
	free(o->children);
	o->texts = NULL;
	o->res = NULL;
	o->children = NULL;
	o->ncalls = 0;
	orch_checkpoint(r);
}

static void
orch_compose_done(struct run *r, void *arg, const char *text, int is_error)
{
	struct orch_state	*o = r->orch_state;
	size_t			 i = (size_t)(uintptr_t)arg;

	if (o == NULL || !o->tools_wait || i >= o->ncalls)
		return;
	o->texts[i] = xstrdup(text);
	o->res[i].text = o->texts[i];
	o->res[i].is_error = is_error;
	if (--o->npending == 0) {
		orch_feed_results(r);
		orch_drive(r);
	}
}

static void
orch_child_done(struct run *r, struct node *child, void *arg)
{
	struct orch_state	*o = r->orch_state;
	size_t			 i = (size_t)(uintptr_t)arg;
	int			 is_error;

	if (o == NULL || !o->tools_wait || i >= o->ncalls)
		return;
	o->texts[i] = run_node_answer(child, &is_error);
	o->res[i].text = o->texts[i];
	o->res[i].is_error = is_error;
	if (--o->npending == 0) {
		orch_feed_results(r);
		orch_drive(r);
	}
}

/* Start every call of a turn: delegations run in parallel. */
static void
orch_calls(struct run *r, const struct agent_action *act)
{
	struct orch_state	*o = r->orch_state;
	const struct agent_call	*c;
	struct run_deleg	 d;
	const char		*code;
	char			 msg[512];
	size_t			 i;

	o->ncalls = act->ncalls;
	o->res = xcalloc(act->ncalls, sizeof(*o->res));
	o->texts = xcalloc(act->ncalls, sizeof(*o->texts));
	o->children = xcalloc(act->ncalls, sizeof(*o->children));
	o->npending = 0;
	o->tools_wait = 1;
	for (i = 0; i < act->ncalls; i++) {
		c = &act->calls[i];
		memset(&d, 0, sizeof(d));
		d.profile = c->profile;
		d.task = c->task;
		d.inherit = c->inherit_context;
		d.tools = c->tools;
		d.ntools = c->ntools;
		d.filtered = c->filtered;
		d.call_id = c->id;
		if (c->kind == AGENT_CALL_COMPOSE) {
			/* Answers later, from the loop (compose.h). */
			if (compose_start(r, c, orch_compose_done,
			    (void *)(uintptr_t)i, msg, sizeof(msg)) == 0) {
				o->npending++;
				continue;
			}
			o->texts[i] = xstrdup(msg);
			o->res[i].is_error = 1;
		} else if (c->kind != AGENT_CALL_DELEGATE) {
			xasprintf(&o->texts[i], "the orchestrator runs no "
			    "tool (%s): delegate it to a subagent", c->name);
			o->res[i].is_error = 1;
		} else if (run_delegate_as(r, r->root, &d, orch_child_done,
		    (void *)(uintptr_t)i, &o->children[i], &code, msg,
		    sizeof(msg)) == 0) {
			o->npending++;
			continue;
		} else {
			o->texts[i] = xstrdup(msg);
			o->res[i].is_error = 1;
		}
		o->res[i].text = o->texts[i];
	}
	if (o->npending == 0)
		orch_feed_results(r);
}

static void
orch_finish(struct run *r, const struct agent_action *act)
{
	struct node	*n = r->root;

	switch (act->status) {
	case AGENT_COMPLETE:
		n->end = NODE_END_COMPLETE;
		break;
	case AGENT_AUTO_COMPLETE:
		n->end = NODE_END_AUTO_COMPLETE;
		break;
	case AGENT_FAIL:
		n->end = NODE_END_FAIL;
		break;
	case AGENT_LIMIT:
	case AGENT_RUNNING:
	default:
		n->end = r->cancelling ? NODE_END_CANCELLED : NODE_END_LIMIT;
		break;
	}
	n->result = xstrdup(act->result ? act->result : "");
	if (n->end != NODE_END_COMPLETE)	/* auto-complete: why */
		n->error = xstrdup(act->reason ? act->reason :
		    (act->result ? act->result : run_end_name(n->end)));
	n->usage = agent_usage(r->orch);
	n->iterations = agent_iterations(r->orch);
	orch_checkpoint(r);
	run_node_done(r, n);
}

static void
orch_timer_cb(void *arg)
{
	struct run	*r = arg;

	if (r->orch_state == NULL)
		return;
	r->orch_state->timer = 0;
	orch_drive(r);
}

/* The agent's own deadline: wake it then, even while it waits. */
static void
orch_arm_deadline(struct run *r)
{
	struct orch_state	*o = r->orch_state;
	uint64_t		 due = agent_deadline_ms(r->orch), now;

	if (due == 0 || due == o->timer_due)
		return;
	now = clock_mono_ms();
	loop_timer_del(r->loop, o->timer);
	o->timer_due = due;
	o->timer = loop_timer_add(r->loop, due > now ? due - now : 0,
	    orch_timer_cb, r);
}

static void
orch_drive(struct run *r)
{
	struct orch_state	*o = r->orch_state;
	struct agent_action	 act;
	enum agent_need		 need;

	if (o == NULL || r->root->state == NODE_DONE)
		return;
	if (o->driving) {
		o->again = 1;
		return;
	}
	o->driving = 1;
	do {
		o->again = 0;
		memset(&act, 0, sizeof(act));
		need = agent_next(r->orch, clock_mono_ms(), &act);
		switch (need) {
		case AGENT_NEED_LLM:
			if (o->llm_wait)
				break;
			o->llm_wait = 1;
			o->step++;
			o->llm_handle = broker_submit(r, r->root, o->step,
			    act.purpose == AGENT_LLM_SUMMARY ?
			    IPC_PURPOSE_SUMMARY : IPC_PURPOSE_TURN,
			    act.messages, act.tools, act.ntools,
			    orch_llm_done, NULL);
			break;
		case AGENT_NEED_TOOLS:
			if (o->tools_wait)
				break;
			orch_calls(r, &act);
			if (!o->tools_wait)
				o->again = 1;
			break;
		case AGENT_NEED_DONE:
			orch_finish(r, &act);
			o->driving = 0;
			return;
		default:
			break;
		}
	} while (o->again && r->root->state != NODE_DONE);
	o->driving = 0;
	if (r->root->state != NODE_DONE)
		orch_arm_deadline(r);
}

int
orch_start(struct run *r, const struct msg_list *resume, char *err,
    size_t errsz)
{
	struct agent_config	 cfg;
	struct msg_list		 ctx;
	struct node		*n = r->root;
	char			 extra[1024];
	size_t			 i;

	memset(&cfg, 0, sizeof(cfg));
	snprintf(extra, sizeof(extra), "You are agent 0, the orchestrator of "
	    "this run. You run no tool yourself: delegate work to subagents "
	    "(several delegate calls in one turn run in parallel), then "
	    "complete with a synthesis of what they found. Limits: depth %u, "
	    "%u subagents in this run.", r->opts.limits.max_depth,
	    r->opts.limits.max_agents);
	cfg.profile = n->profile;
	cfg.path = n->path;
	cfg.depth = 0;
	cfg.task = n->task;
	cfg.system_extra = extra;
	cfg.delegates = r->delegates;
	cfg.ndelegates = r->ndelegates;
	cfg.limits.max_iterations = r->opts.limits.max_iterations;
	cfg.on_event = orch_event;
	cfg.event_arg = r;
	cfg.resume = resume;
	if (r->opts.schema != NULL) {
		cfg.check_result = jschema_agent_check;
		cfg.check_arg = &r->opts.schema;
	}
	/* A follow-up (run --continue): the earlier run's memory. */
	msg_list_init(&ctx);
	if (n->inherit && !agent_resume_has_turn(resume)) {
		run_inherited(r, n, &ctx);
		cfg.inherited = &ctx;
	}
	r->orch = agent_new(&cfg, err, errsz);
	msg_list_free(&ctx);
	if (r->orch == NULL)
		return -1;
	r->orch_state = xcalloc(1, sizeof(*r->orch_state));
	r->orch_state->run = r;
	/* Replay keys go on from the turns the earlier run made. */
	for (i = 0; resume != NULL && i < resume->n; i++)
		if (resume->v[i].role == MSG_ASSISTANT)
			r->orch_state->step++;
	n->state = NODE_RUNNING;
	n->started_ms = clock_mono_ms();
	orch_drive(r);
	return 0;
}

void
orch_cancel(struct run *r, const char *reason)
{
	struct orch_state	*o = r->orch_state;

	if (o == NULL || r->root->state == NODE_DONE)
		return;
	if (o->llm_wait)
		broker_cancel(r, o->llm_handle);
	agent_cancel(r->orch, reason);
	if (o->tools_wait) {
		/* The children are cancelled with the run; answer now. */
		o->tools_wait = 0;
	}
	orch_drive(r);
}

void
orch_free(struct run *r)
{
	struct orch_state	*o = r->orch_state;
	size_t			 i;

	if (o != NULL) {
		loop_timer_del(r->loop, o->timer);
		for (i = 0; i < o->ncalls; i++)
			free(o->texts[i]);
		free(o->texts);
		free(o->res);
		free(o->children);
		free(o);
		r->orch_state = NULL;
	}
	compose_free_all(r);
	agent_free(r->orch);
	r->orch = NULL;
}

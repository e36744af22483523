/*
 * The LLM broker: every turn of every agent, the orchestrator's and the
 * workers', goes through here. Workers hold no key and no socket. The
 * broker checks the run's token budget, hands the turn to the engine
 * (which applies the concurrency cap, retries and record/replay keyed by
 * agent path and step) and counts the tokens of every answer.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/clock.h"
#include "common/log.h"
#include "common/xmalloc.h"
#include "agent/profile.h"
#include "ipc/ipc.h"
#include "llm/llm.h"
#include "supervisor/run.h"

struct broker_req {
	struct run	*run;
	struct node	*node;
	broker_fn	 fn;
	broker_http_fn	 http_fn;	/* a pass-through request's */
	broker_part_fn	 part_fn;	/* its stream's parts */
	void		*arg;
	unsigned	 step;
	int64_t		 start_ms;	/* wall clock, when it was asked */
};

static const char *
broker_code(enum llm_err err)
{
	switch (err) {
	case LLM_ERR_REPLAY_MISSING:
		return IPC_ERR_REPLAY_MISSING;
	case LLM_ERR_CANCELLED:
		return IPC_ERR_CANCELLED;
	case LLM_OK:
	case LLM_ERR_EXHAUSTED:
	case LLM_ERR_HTTP:
	case LLM_ERR_TIMEOUT:
	case LLM_ERR_PARSE:
	case LLM_ERR_TRANSPORT:
	case LLM_ERR_SYSTEM:
	default:
		return IPC_ERR_ENDPOINT;
	}
}

/*
 * An "llm" event per turn: when it was asked and how long it took (the
 * wait for a slot of llm_concurrency included), its tokens or its error.
 * `warren report` draws the run's timeline from these.
 */
static void
broker_record(struct broker_req *b, const struct llm_result *res)
{
	char	detail[160];
	int64_t	now = clock_wall_ms();

	snprintf(detail, sizeof(detail), "{\"step\":%u,\"start_ms\":%lld,"
	    "\"ms\":%lld,\"in\":%llu,\"out\":%llu,\"ok\":%s}", b->step,
	    (long long)b->start_ms, (long long)(now - b->start_ms),
	    (unsigned long long)(res->err == LLM_OK ?
	    res->reply.usage.input : 0),
	    (unsigned long long)(res->err == LLM_OK ?
	    res->reply.usage.output : 0),
	    res->err == LLM_OK ? "true" : "false");
	run_record_event(b->run, b->node, "llm", NULL, detail);
}

/* An answer's tokens: the run's budget, the node's count. */
static void
broker_count(struct broker_req *b, const struct msg_usage *u)
{
	b->run->tokens += u->input + u->output;
	b->node->usage_unsaved.input += u->input;
	b->node->usage_unsaved.output += u->output;
	/* The node's count is what we measured, never what a worker
	 * claims in its done message. */
	b->node->usage.input += u->input;
	b->node->usage.output += u->output;
	ui_live_dirty();
}

static void
broker_done(struct llm_result *res, void *arg)
{
	struct broker_req	*b = arg;
	struct run		*r = b->run;

	if (b->node->ui.llm > 0)
		b->node->ui.llm--;
	broker_record(b, res);
	if (b->http_fn != NULL) {
		if (res->err == LLM_OK)
			broker_count(b, &res->reply.usage);
		b->http_fn(r, b->arg, res->err == LLM_OK ? res : NULL,
		    res->err == LLM_OK ? NULL : broker_code(res->err),
		    res->error ? res->error : llm_err_name(res->err));
		free(b);
		return;
	}
	if (res->err == LLM_OK) {
		broker_count(b, &res->reply.usage);
		b->fn(r, b->arg, &res->reply, NULL, NULL);
	} else
		b->fn(r, b->arg, NULL, broker_code(res->err),
		    res->error ? res->error : llm_err_name(res->err));
	free(b);
}

/* After a submit: a request the client refused (id 0) is answered
 * with msg and freed; an accepted one shows on the agent's live line. */
static uint64_t
broker_sent(struct node *n, struct broker_req *b, uint64_t id,
    const char *msg)
{
	struct run		*r = b->run;
	broker_fn		 fn = b->fn;
	broker_http_fn		 http_fn = b->http_fn;
	void			*arg = b->arg;

	if (id == 0) {
		free(b);
		if (http_fn != NULL)
			http_fn(r, arg, NULL, IPC_ERR_ENDPOINT, msg);
		else
			fn(r, arg, NULL, IPC_ERR_ENDPOINT, msg);
		return 0;
	}
	n->ui.llm++;
	n->ui.llm_id = id;
	ui_live_dirty();
	return id;
}

uint64_t
broker_submit(struct run *r, struct node *n, unsigned step,
    enum ipc_purpose purpose, const struct msg_list *msgs,
    const struct msg_tool *tools, size_t ntools, broker_fn fn, void *arg)
{
	struct llm_request	 req;
	struct broker_req	*b;
	char			 msg[256];
	uint64_t		 id;

	if (!limits_budget_left(r, msg, sizeof(msg))) {
		r->budget_spent = 1;
		fn(r, arg, NULL, IPC_ERR_BUDGET, msg);
		return 0;
	}
	if (r->cancelling) {
		fn(r, arg, NULL, IPC_ERR_CANCELLED, "the run was cancelled");
		return 0;
	}
	memset(&req, 0, sizeof(req));
	req.agent = n->path;
	req.step = step;
	req.purpose = purpose == IPC_PURPOSE_SUMMARY ? LLM_PURPOSE_SUMMARY :
	    LLM_PURPOSE_TURN;
	/* An agent file's model: that agent's turns go to it (the engine
	 * records the model of each request in a cassette). Its summaries
	 * keep the configured summary model. */
	if (req.purpose == LLM_PURPOSE_TURN)
		req.model = n->profile->model;
	req.msgs = msgs;
	req.tools = tools;
	req.ntools = ntools;
	b = xcalloc(1, sizeof(*b));
	b->run = r;
	b->node = n;
	b->fn = fn;
	b->arg = arg;
	b->step = step;
	b->start_ms = clock_wall_ms();
	r->nturns++;
	if ((id = llm_submit(r->llm, &req, broker_done, b)) == 0)
		snprintf(msg, sizeof(msg), "the LLM request of agent %s step "
		    "%u was refused by the client", n->path, step);
	return broker_sent(n, b, id, msg);
}

/* Refusals before anything is sent: budget, cancel, the wire, a body
 * that asks the endpoint to reach the network. */
static int
broker_http_refused(struct run *r, const char *wire, const char *body,
    char *msg, size_t msgsz, const char **code)
{
	const char	*mine;
	char		 why[160];

	*code = IPC_ERR_BUDGET;
	if (!limits_budget_left(r, msg, msgsz)) {
		r->budget_spent = 1;
		return 1;
	}
	*code = IPC_ERR_CANCELLED;
	if (r->cancelling) {
		snprintf(msg, msgsz, "the run was cancelled");
		return 1;
	}
	*code = IPC_ERR_REFUSED;
	if ((mine = llm_http_wire_check(r->llm, wire)) != NULL) {
		snprintf(msg, msgsz, "this agent's program speaks the %s API "
		    "and the run's endpoint speaks %s: run it with a provider "
		    "of that API (provider = %s in the config, or --provider "
		    "%s, with its base_url and key)", wire, mine,
		    strcmp(wire, "anthropic") == 0 ? "anthropic" : "openai",
		    strcmp(wire, "anthropic") == 0 ? "anthropic" : "openai");
		return 1;
	}
	if (llm_http_body_check(body, why, sizeof(why)) == -1) {
		snprintf(msg, msgsz, "warren refused this request: %s; a "
		    "backend's only network is its model (docs/backends.md)",
		    why);
		return 1;
	}
	return 0;
}

static void
broker_part(const char *data, size_t len, long status, const char *ctype,
    void *arg)
{
	struct broker_req	*b = arg;

	b->part_fn(b->arg, data, len, status, ctype);
}

uint64_t
broker_http_submit(struct run *r, struct node *n, const struct ipc_http *h,
    broker_http_fn fn, broker_part_fn part, void *arg)
{
	struct llm_http_request	 req;
	struct broker_req	*b;
	const char		*code;
	char			 msg[512];
	uint64_t		 id;

	if (broker_http_refused(r, h->wire, h->body, msg, sizeof(msg),
	    &code)) {
		fn(r, arg, NULL, code, msg);
		return 0;
	}
	/* A backend runs no loop of ours to count its turns: each model
	 * request is one, held to max_iterations as a loop agent's are. */
	if (n->http_step >= r->opts.limits.max_iterations) {
		snprintf(msg, sizeof(msg), "agent %s sent %u model requests, "
		    "its limit (max_iterations %u): raise max_iterations "
		    "(WARREN_MAX_ITERATIONS) for a longer task", n->path,
		    n->http_step, r->opts.limits.max_iterations);
		fn(r, arg, NULL, IPC_ERR_LIMIT, msg);
		return 0;
	}
	memset(&req, 0, sizeof(req));
	req.agent = n->path;
	req.step = n->http_step++;
	req.wire = h->wire;
	req.path = h->path;
	req.headers = (const char *const *)h->headers;
	req.nheaders = h->nheaders;
	req.body = h->body;
	b = xcalloc(1, sizeof(*b));
	b->run = r;
	b->node = n;
	b->http_fn = fn;
	b->part_fn = part;
	b->arg = arg;
	if (part != NULL) {
		req.on_part = broker_part;
		req.part_arg = b;
	}
	b->step = req.step;
	b->start_ms = clock_wall_ms();
	r->nturns++;
	if ((id = llm_submit_http(r->llm, &req, broker_done, b)) == 0)
		snprintf(msg, sizeof(msg), "the request of agent %s (%s %s) "
		    "was refused by the client", n->path, h->wire, h->path);
	return broker_sent(n, b, id, msg);
}

void
broker_cancel(struct run *r, uint64_t handle)
{
	if (handle != 0)
		(void)llm_cancel(r->llm, handle);
}

/*
 * The cells of the worker table that read a message (proc_dispatch_worker
 * in proc.c hands them over): the hello check and start, and a running
 * worker's requests: an LLM turn (to the broker), a subagent (to the run's
 * delegation), an event, a checkpoint, its done. Every field was checked
 * by the IPC decoder; what is checked here is the supervisor's policy.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "agent/agent.h"
#include "agent/profile.h"
#include "common/jschema.h"
#include "common/log.h"
#include "common/xmalloc.h"
#include "ipc/ipc.h"
#include "llm/llm.h"
#include "sandbox/sandbox.h"
#include "store/store.h"
#include "supervisor/mcp.h"
#include "supervisor/proc_int.h"
#include "supervisor/run.h"

static void	proc_spawn_answer(struct worker *, uint32_t,
		    const struct node *);

#define PROC_SCHEMA_WHY_MAX	4096	/* the errors a refused done lists */

static void	proc_do_event(struct worker *);
static void	proc_do_checkpoint(struct worker *);
static void	proc_do_done(struct worker *);

/* Cancelled or done: take its last words (done, checkpoint, event); a
 * request is not answered any more. */
void
proc_drain_message(struct worker *w)
{
	switch (w->msg->type) {
	case IPC_DONE:
		if (!w->got_done && w->node->state != NODE_DONE)
			proc_do_done(w);
		break;
	case IPC_CHECKPOINT:
		proc_do_checkpoint(w);
		break;
	case IPC_EVENT:
		proc_do_event(w);
		break;
	case IPC_NONE:
	case IPC_HELLO:
	case IPC_START:
	case IPC_LLM:
	case IPC_LLM_OK:
	case IPC_LLM_ERR:
	case IPC_SPAWN:
	case IPC_SPAWN_OK:
	case IPC_SPAWN_ERR:
	case IPC_MCP:
	case IPC_MCP_OK:
	case IPC_MCP_ERR:
	case IPC_HTTP:
	case IPC_HTTP_OK:
	case IPC_HTTP_ERR:
	case IPC_CANCEL:
	default:
		break;
	}
}

/* --- hello and start ------------------------------------------------ */

static void
proc_start_profile(struct ipc_profile *ip, const struct profile *p)
{
	size_t	i;

	ip->name = p->name;
	ip->prompt = p->prompt ? p->prompt : "";
	ip->tools = xcalloc(p->ntools + 1, sizeof(char *));
	for (i = 0; i < p->ntools; i++)
		ip->tools[i] = (char *)(uintptr_t)p->tools[i];
	ip->ntools = p->ntools;
}

static void
proc_send_start(struct worker *w)
{
	const struct run_limits	*l = &w->run->opts.limits;
	struct node		*n = w->node;
	struct ipc_msg		 m;
	struct ipc_start	*s = &m.u.start;

	memset(&m, 0, sizeof(m));
	m.type = IPC_START;
	s->path = n->path;
	s->depth = n->depth;
	proc_start_profile(&s->profile, n->profile);
	s->task = n->task;
	msg_list_init(&s->context);
	msg_list_init(&s->history);
	/* Stored messages without a model turn are a start cut short: it
	 * starts as new (the checkpoint skips what is stored). */
	if (n->resume != NULL && agent_resume_has_turn(n->resume))
		s->history = *n->resume;	/* borrowed */
	else if (n->inherit)
		run_inherited(w->run, n, &s->context);
	s->limits.max_iterations = l->max_iterations;
	s->limits.timeout_ms = l->agent_timeout_ms;
	s->limits.max_output_bytes = l->max_output_bytes;
	s->workspace = (char *)(uintptr_t)w->run->opts.workspace;
	if (n->profile->delegate) {
		s->delegates = w->run->dnames;
		s->delegate_descs = w->run->ddescs;
		s->ndelegates = w->run->ndelegates;
	}
	s->mcp_tools = (struct msg_tool *)(uintptr_t)mcp_worker_tools(w,
	    &s->nmcp_tools);
	/* A worker root is held to the run's output schema. */
	if (n == w->run->root && w->run->opts.schema != NULL)
		s->schema = (char *)(uintptr_t)w->run->opts.schema;
	proc_send(w, &m);
	free(s->profile.tools);
	msg_list_free(&s->context);
}

void
proc_on_hello(struct worker *w)
{
	const struct ipc_hello	*h = &w->msg->u.hello;
	struct sandbox_report	 rep;
	struct sandbox_error	 e;
	char			 msg[SANDBOX_ERR_LEN + 64], layers[256];

	/* The version was checked with the message (ipc/perm.c). */
	memset(&rep, 0, sizeof(rep));
	memset(&e, 0, sizeof(e));
	if (sandbox_report_parse(&rep, (const char *const *)h->layers,
	    (int)h->nlayers, &e) == -1 ||
	    sandbox_report_check(w->policy, &rep, &e) == -1) {
		snprintf(msg, sizeof(msg), "sandbox short of profile %s: %s",
		    w->policy->name, e.msg);
		proc_kill(w, NODE_END_PROTOCOL, msg);
		return;
	}
	sandbox_report_string(&rep, layers, sizeof(layers));
	log_debug("agent %s: hello, sandbox %s", w->node->path, layers);
	run_record_event(w->run, w->node, "hello", NULL, layers);
	w->state = PROC_READY;
	proc_arm(w, w->run->opts.limits.agent_timeout_ms +
	    w->run->opts.limits.grace_ms);
	/* Its MCP servers' tools go in start: wait for them to list them. */
	if (w->mcp_wait > 0) {
		w->start_held = 1;
		return;
	}
	proc_send_start(w);
}

void
proc_mcp_settled(struct worker *w)
{
	if (!w->start_held || w->state != PROC_READY)
		return;
	w->start_held = 0;
	proc_send_start(w);
}

/* --- requests from a running worker --------------------------------- */

static void
proc_llm_err(struct worker *w, uint32_t id, const char *code,
    const char *error)
{
	struct ipc_msg	 m;

	memset(&m, 0, sizeof(m));
	m.type = IPC_LLM_ERR;
	m.u.llm_err.id = id;
	m.u.llm_err.code = (char *)(uintptr_t)code;
	m.u.llm_err.message = (char *)(uintptr_t)error;
	proc_send(w, &m);
}

/*
 * The model's answer for a worker. One too large for the protocol (a text
 * or tool arguments over 4 MiB, the frame over 16 MiB, more than 256 calls:
 * max_response allows 32 MiB) is the endpoint's doing, not the worker's:
 * the agent gets an LLM error it ends on, as the orchestrator would.
 */
static void
proc_llm_answer(struct worker *w, uint32_t id, struct msg_reply *reply,
    const char *code, const char *error)
{
	struct ipc_msg	 m;
	char		 err[IPC_ERR_LEN], msg[IPC_ERR_LEN + 256];

	if (reply == NULL) {
		proc_llm_err(w, id, code, error);
		return;
	}
	memset(&m, 0, sizeof(m));
	m.type = IPC_LLM_OK;
	m.u.llm_ok.id = id;
	m.u.llm_ok.reply = *reply;	/* borrowed */
	if (proc_send_answer(w, &m, err, sizeof(err)) == 0)
		return;
	snprintf(msg, sizeof(msg), "the model's answer is too large for a "
	    "subagent (%s; a subagent's turn carries at most %u MiB a text "
	    "and %u MiB in all): ask for less at once", err,
	    IPC_STR_MAX >> 20, IPC_FRAME_MAX >> 20);
	log_warnx("agent %s: LLM turn failed (%s): %s", w->node->path,
	    IPC_ERR_ENDPOINT, msg);
	run_record_event(w->run, w->node, "llm_error", NULL, msg);
	proc_llm_err(w, id, IPC_ERR_ENDPOINT, msg);
}

static void
proc_llm_done(struct run *r, void *arg, struct msg_reply *reply,
    const char *code, const char *error)
{
	struct proc_llm	*pl = arg, **pp;
	struct worker	*w = pl->w;

	/* A root in a worker ends on the endpoint's error as the
	 * orchestrator would: the run exits 4, not 1. */
	if (w != NULL && w->node == r->root && reply == NULL &&
	    strcmp(code, IPC_ERR_CANCELLED) != 0 &&
	    strcmp(code, IPC_ERR_BUDGET) != 0)
		r->llm_failed = 1;
	if (w != NULL) {
		for (pp = &w->llm; *pp != NULL; pp = &(*pp)->next) {
			if (*pp == pl) {
				*pp = pl->next;
				break;
			}
		}
		if (w->state == PROC_READY || w->state == PROC_BUSY)
			proc_llm_answer(w, pl->id, reply, code, error);
		proc_update_busy(w);
	}
	free(pl);
}

static void
proc_do_llm(struct worker *w)
{
	const struct ipc_llm	*q = &w->msg->u.llm;
	struct proc_llm		*pl;
	uint64_t		 handle;

	run_batch_merge(w->run, w->node);	/* before its synthesis step */
	pl = xcalloc(1, sizeof(*pl));
	pl->w = w;
	pl->id = q->id;
	pl->next = w->llm;
	w->llm = pl;
	w->state = PROC_BUSY;
	/* proc_llm_done may run from inside (a refusal): pl is gone then,
	 * and the handle is 0. */
	handle = broker_submit(w->run, w->node, q->step, q->purpose,
	    &q->messages, q->tools, q->ntools, proc_llm_done, pl);
	if (handle != 0)
		pl->handle = handle;
	proc_update_busy(w);
}

/*
 * Part of a backend's streamed answer, sent on as it comes (http_ok with
 * more). A part the channel cannot carry (a NUL byte, too long) stops the
 * parts: the end of the answer then says it failed.
 */
static void
proc_http_part(void *arg, const char *data, size_t len, long status,
    const char *ctype)
{
	struct proc_llm	*pl = arg;
	struct worker	*w = pl->w;
	struct ipc_msg	 m;
	char		 err[IPC_ERR_LEN], *body;

	if (w == NULL || pl->broken || (w->state != PROC_READY &&
	    w->state != PROC_BUSY))
		return;
	if (memchr(data, '\0', len) != NULL || len > IPC_STR_MAX) {
		pl->broken = 1;
		return;
	}
	body = xmalloc(len + 1);
	memcpy(body, data, len);
	body[len] = '\0';
	memset(&m, 0, sizeof(m));
	m.type = IPC_HTTP_OK;
	m.u.http_ok.id = pl->id;
	m.u.http_ok.status = (uint32_t)status;
	m.u.http_ok.content_type = (char *)(uintptr_t)ctype;
	m.u.http_ok.body = body;
	m.u.http_ok.more = 1;
	if (proc_send_answer(w, &m, err, sizeof(err)) == 0)
		pl->parts = 1;
	else
		pl->broken = 1;
	free(body);
}

/* A backend's request answered: the endpoint's answer, or an error the
 * program reads as one (worker/proxy.c). */
static void
proc_http_done(struct run *r, void *arg, const struct llm_result *res,
    const char *code, const char *error)
{
	struct proc_llm	*pl = arg, **pp;
	struct worker	*w = pl->w;
	struct ipc_msg	 m;
	char		 err[IPC_ERR_LEN], msg[IPC_ERR_LEN + 128];

	(void)r;
	if (w != NULL) {
		for (pp = &w->llm; *pp != NULL; pp = &(*pp)->next)
			if (*pp == pl) {
				*pp = pl->next;
				break;
			}
		memset(&m, 0, sizeof(m));
		if (w->state == PROC_READY || w->state == PROC_BUSY) {
			if (res != NULL && pl->broken) {
				code = IPC_ERR_ENDPOINT;
				error = "part of the endpoint's stream could "
				    "not be passed on (a NUL byte, or too "
				    "long)";
			} else if (res != NULL) {
				m.type = IPC_HTTP_OK;
				m.u.http_ok.id = pl->id;
				m.u.http_ok.status = (uint32_t)res->status;
				m.u.http_ok.content_type = res->http_type;
				/* Streamed: all of it went in parts. */
				m.u.http_ok.body = pl->parts ? "" :
				    res->http_body;
				if (proc_send_answer(w, &m, err,
				    sizeof(err)) == 0)
					goto out;
				snprintf(msg, sizeof(msg), "the endpoint's "
				    "answer is too large for a backend's "
				    "channel (%s)", err);
				code = IPC_ERR_ENDPOINT;
				error = msg;
			}
			m.type = IPC_HTTP_ERR;
			m.u.http_err.id = pl->id;
			m.u.http_err.code = (char *)(uintptr_t)code;
			m.u.http_err.message = (char *)(uintptr_t)error;
			if (strlen(error) > IPC_ERRMSG_MAX)
				m.u.http_err.message = (char *)(uintptr_t)
				    "the request failed (its message is too "
				    "long to pass)";
			proc_send(w, &m);
		}
out:
		proc_update_busy(w);
	}
	free(pl);
}

/* Only a backend's worker passes requests through (its profile says). */
static void
proc_do_http(struct worker *w)
{
	struct proc_llm		*pl;
	uint64_t		 handle;

	char			 why[128];

	if (w->node->profile->backend == BACKEND_LOOP) {
		snprintf(why, sizeof(why), "sent http, but its profile %s "
		    "runs no backend", w->node->profile->name);
		proc_kill(w, NODE_END_PROTOCOL, why);
		return;
	}
	pl = xcalloc(1, sizeof(*pl));
	pl->w = w;
	pl->id = w->msg->u.http.id;
	pl->next = w->llm;
	w->llm = pl;
	w->state = PROC_BUSY;
	handle = broker_http_submit(w->run, w->node, &w->msg->u.http,
	    proc_http_done, proc_http_part, pl);
	if (handle != 0)
		pl->handle = handle;
	proc_update_busy(w);
}

static void
proc_child_done(struct run *r, struct node *child, void *arg)
{
	struct node	*parent = child->parent;
	struct worker	*w = parent->worker;

	(void)r;
	if (w == NULL || w->state == PROC_DEAD)
		return;
	if (w->nspawn > 0)
		w->nspawn--;
	if (w->state == PROC_READY || w->state == PROC_BUSY)
		proc_spawn_answer(w, (uint32_t)(uintptr_t)arg, child);
	proc_update_busy(w);
}

/* A child's end as its parent's spawn_err code. */
static const char *
proc_end_code(enum node_end end)
{
	switch (end) {
	case NODE_END_FAIL:
		return IPC_ERR_FAILED;
	case NODE_END_LIMIT:
		return IPC_ERR_LIMIT;
	case NODE_END_TIMEOUT:
		return IPC_ERR_TIMEOUT;
	case NODE_END_KILLED:
	case NODE_END_QUOTA:
		return IPC_ERR_KILLED;
	case NODE_END_PROTOCOL:
		return IPC_ERR_PROTOCOL;
	case NODE_END_CANCELLED:
		return IPC_ERR_CANCELLED;
	case NODE_END_SPAWN:
		return IPC_ERR_REFUSED;
	case NODE_END_NONE:
	case NODE_END_COMPLETE:
	case NODE_END_AUTO_COMPLETE:
	case NODE_END_CRASHED:
	default:
		return IPC_ERR_CRASHED;
	}
}

/*
 * A spawn_err message holds at most IPC_ERRMSG_MAX bytes, a failed child's
 * answer may be longer (its partial result): keep the head, say what was
 * cut, and never blame the parent for it.
 */
static void
proc_clip_errmsg(char *text)
{
	size_t	len = strlen(text), keep = IPC_ERRMSG_MAX - 64;

	if (len <= IPC_ERRMSG_MAX)
		return;
	while (keep > 0 && ((unsigned char)text[keep] & 0xC0) == 0x80)
		keep--;		/* not inside a UTF-8 sequence */
	snprintf(text + keep, len + 1 - keep, " [... %zu bytes cut]",
	    len - keep);
}

static void
proc_spawn_answer(struct worker *w, uint32_t id, const struct node *child)
{
	struct ipc_msg	 m;
	char		*text;
	int		 is_error;

	memset(&m, 0, sizeof(m));
	text = run_node_answer(child, &is_error);
	if (!is_error) {
		m.type = IPC_SPAWN_OK;
		m.u.spawn_ok.id = id;
		m.u.spawn_ok.path = (char *)(uintptr_t)child->path;
		m.u.spawn_ok.result = text;
		m.u.spawn_ok.usage = child->usage;
	} else {
		m.type = IPC_SPAWN_ERR;
		m.u.spawn_err.id = id;
		m.u.spawn_err.code = (char *)(uintptr_t)proc_end_code(
		    child->end);
		proc_clip_errmsg(text);
		m.u.spawn_err.message = text;
	}
	proc_send(w, &m);
	free(text);
}

static void
proc_do_spawn(struct worker *w)
{
	const struct ipc_spawn	*q = &w->msg->u.spawn;
	struct ipc_msg		 m;
	struct run_deleg	 d;
	const char		*code = NULL;
	char			 msg[512];

	memset(&d, 0, sizeof(d));
	d.profile = q->profile;
	d.task = q->task;
	d.inherit = q->inherit_context;
	d.tools = (const char *const *)q->tools;
	d.ntools = q->ntools;
	d.filtered = q->filtered;
	d.call_id = q->call_id != NULL && *q->call_id != '\0' ? q->call_id :
	    NULL;
	if (run_delegate_as(w->run, w->node, &d, proc_child_done,
	    (void *)(uintptr_t)q->id, NULL, &code, msg, sizeof(msg)) == 0) {
		w->nspawn++;
		proc_update_busy(w);
		return;
	}
	memset(&m, 0, sizeof(m));
	m.type = IPC_SPAWN_ERR;
	m.u.spawn_err.id = q->id;
	m.u.spawn_err.code = (char *)(uintptr_t)code;
	m.u.spawn_err.message = msg;
	proc_send(w, &m);
}

/*
 * What a worker asks the store to keep is bounded: past its quota it is
 * killed (store_quota) and nothing more of it is kept, also from frames
 * already read. 0: keep this one.
 */
static int
proc_quota(struct worker *w, uint64_t bytes)
{
	char	msg[256];

	if (w->over_quota)
		return -1;
	if (limits_store_quota(w->run, &w->store_rows, &w->store_bytes, 1,
	    bytes, msg, sizeof(msg)) == 0)
		return 0;
	w->over_quota = 1;
	proc_kill(w, NODE_END_QUOTA, msg);
	return -1;
}

/* Bytes of a message as the store keeps them. */
static uint64_t
proc_msg_bytes(const struct msg *m)
{
	uint64_t	n = msg_chars(m);
	size_t		i;

	for (i = 0; i < m->ncalls; i++)
		n += m->calls[i].id != NULL ? strlen(m->calls[i].id) : 0;
	n += m->call_id != NULL ? strlen(m->call_id) : 0;
	n += m->name != NULL ? strlen(m->name) : 0;
	return n;
}

/* An MCP call is recorded (its tool_call event, offered or not) before
 * it is brokered: charged to the worker's store quota like its own
 * events. */
static void
proc_do_mcp(struct worker *w)
{
	const struct ipc_mcp	*m = &w->msg->u.mcp;
	char			 full[IPC_NAME_MAX * 2 + 8];

	snprintf(full, sizeof(full), MCP_PREFIX "%s" MCP_SEP "%s", m->server,
	    m->tool);
	if (proc_quota(w, run_event_bytes("tool_call", full, m->args)) == -1)
		return;
	mcp_call(w);
}

static void
proc_do_event(struct worker *w)
{
	const struct ipc_event	*ev = &w->msg->u.event;
	enum log_level		 lvl;

	if (proc_quota(w, run_event_bytes(ev->kind, ev->tool, ev->text)) == -1)
		return;
	/* A call of an MCP tool it was offered is brokered, its events the
	   supervisor's own (mcp_proc.c): what the worker says of it is not
	   shown twice. */
	if (ev->tool != NULL && strncmp(ev->kind, "tool_", 5) == 0 &&
	    mcp_worker_offers(w, ev->tool))
		return;
	if (strcmp(ev->kind, "tool_call") == 0)
		ui_tool(w->node, ev->tool ? ev->tool : "?", ev->text);
	else if (strcmp(ev->kind, "tool_result") == 0)
		ui_tool_result(w->node, ev->tool ? ev->tool : "?", ev->text, 0);
	else if (strcmp(ev->kind, "tool_error") == 0)
		ui_tool_result(w->node, ev->tool ? ev->tool : "?", ev->text, 1);
	else if (strcmp(ev->kind, "log") == 0) {
		lvl = ev->has_level && ev->level <= LOG_LEVEL_DEBUG ?
		    (enum log_level)ev->level : LOG_LEVEL_INFO;
		if (lvl <= log_getlevel())
			log_warnx("agent %s: %s", w->node->path, ev->text);
	} else
		ui_note(w->node, ev->kind, ev->text);
	run_record_event(w->run, w->node, ev->kind, ev->tool, ev->text);
}

static void
proc_do_checkpoint(struct worker *w)
{
	const struct ipc_checkpoint	*c = &w->msg->u.checkpoint;
	struct node			*n = w->node;
	size_t				 i, skip;

	/* Messages arrive in order; a resent prefix is skipped, a gap is a lie. */
	if (c->seq > n->ckpt_seq) {
		proc_kill(w, NODE_END_PROTOCOL, "checkpoint skips messages");
		return;
	}
	skip = n->ckpt_seq - c->seq;
	for (i = skip; i < c->messages.n; i++) {
		if (proc_quota(w, proc_msg_bytes(&c->messages.v[i])) == -1)
			return;
		run_store_msg(w->run, n, &c->messages.v[i]);
		n->ckpt_seq++;
	}
}

/*
 * A worker root's complete() against the run's output schema, here on
 * the trusted side: the worker's agent checked it and answered each
 * refusal to its model, but a worker is not trusted, so a result that
 * does not match fails the root with the errors.
 */
static void
proc_done_schema(struct run *r, struct node *n)
{
	char	why[PROC_SCHEMA_WHY_MAX], msg[PROC_SCHEMA_WHY_MAX + 128];

	if (r->opts.schema == NULL || n != r->root ||
	    jschema_agent_check(&r->opts.schema, n->result, why,
	    sizeof(why)) == 0)
		return;
	snprintf(msg, sizeof(msg), "the worker's %sresult does not "
	    "match the output schema: %s", n->end == NODE_END_COMPLETE ?
	    "complete() " : "", why);
	log_warnx("agent %s: %s", n->path, msg);
	n->end = NODE_END_FAIL;
	free(n->error);
	n->error = xstrdup(msg);
}

static void
proc_do_done(struct worker *w)
{
	const struct ipc_done	*d = &w->msg->u.done;
	struct node		*n = w->node;

	w->got_done = 1;
	switch (d->status) {
	case IPC_STATUS_COMPLETE:
		n->end = NODE_END_COMPLETE;
		break;
	case IPC_STATUS_AUTO_COMPLETE:
		n->end = NODE_END_AUTO_COMPLETE;
		break;
	case IPC_STATUS_FAIL:
		n->end = NODE_END_FAIL;
		break;
	case IPC_STATUS_LIMIT:
	default:
		n->end = NODE_END_LIMIT;
		break;
	}
	free(n->result);
	n->result = xstrdup(d->result ? d->result : "");
	if (n->end != NODE_END_COMPLETE) {	/* auto-complete: why */
		free(n->error);
		n->error = xstrdup(d->reason ? d->reason : n->result);
	}
	/* Called or auto-completed, a result is held to the schema. */
	if (n->end == NODE_END_COMPLETE || n->end == NODE_END_AUTO_COMPLETE)
		proc_done_schema(w->run, n);
	/* n->usage is the broker's own count (broker.c): d->usage is only
	 * the worker's claim. */
	n->iterations = d->iterations;
	if (w->kill_end != NODE_END_NONE) {
		/* Cancelled or timed out: that is what the parent hears. */
		n->end = w->kill_end;
		free(n->error);
		n->error = xstrdup(w->kill_reason);
	}
	w->state = PROC_DRAINING;
	/*
	 * Its work is over: its --jobs slot goes to the next agent now, not
	 * after its exit and the teardown of its namespaces and cgroup
	 * (several ms). The drain deadline still bounds how long it lives.
	 */
	if (!w->parked) {
		w->parked = 1;
		run_slot_park(w->run, n, 1);
	}
	proc_arm(w, w->run->opts.limits.grace_ms + PROC_EOF_MS);
	run_node_done(w->run, n);
}

/* The one message switch for a running worker (proc_dispatch_worker). */
void
proc_on_message(struct worker *w)
{
	switch (w->msg->type) {
	case IPC_LLM:
		proc_do_llm(w);
		break;
	case IPC_SPAWN:
		proc_do_spawn(w);
		break;
	case IPC_MCP:
		proc_do_mcp(w);
		break;
	case IPC_EVENT:
		proc_do_event(w);
		break;
	case IPC_CHECKPOINT:
		proc_do_checkpoint(w);
		break;
	case IPC_DONE:
		proc_do_done(w);
		break;
	case IPC_HTTP:
		proc_do_http(w);
		break;
	case IPC_NONE:
	case IPC_HELLO:
	case IPC_START:
	case IPC_LLM_OK:
	case IPC_LLM_ERR:
	case IPC_SPAWN_OK:
	case IPC_SPAWN_ERR:
	case IPC_MCP_OK:
	case IPC_MCP_ERR:
	case IPC_HTTP_OK:
	case IPC_HTTP_ERR:
	case IPC_CANCEL:
	default:
		proc_out_of_turn(w);
		break;
	}
}


/*
 * The worker: hello, start, then one agent driven with blocking IPC calls.
 *
 * The supervisor is trusted: anything from it that is not what the
 * protocol says is a bug or an attack on the channel, and the worker dies
 * (fatalx). Every LLM turn and every subagent is asked of the supervisor;
 * workspace tools run here, in the sandbox (worker/tools.h). Logs go to the
 * supervisor as event records once the channel is up.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "agent/agent.h"
#include "agent/profile.h"
#include "agent/tooldef.h"
#include "common/clock.h"
#include "common/jschema.h"
#include "common/log.h"
#include "common/xmalloc.h"
#include "ipc/ipc.h"
#include "sandbox/sandbox.h"
#include "worker/hold.h"
#include "worker/tools.h"
#include "worker/worker.h"

/*
 * How long the tool_call events of a batch of in-process tools may wait
 * for the batch to end (hold.h). Long enough for the usual glob, grep or
 * read (microseconds to milliseconds), short enough that nobody watching
 * sees a slow one late; the events' "ms" is up to this much late.
 */
#define WORKER_HOLD_MS	50

struct worker_state {
	const struct worker_args *args;
	struct ipc_peer		 peer;
	struct agent		*agent;
	struct profile		 profile;
	struct agent_profile_ref *delegates;	/* during agent_new only */
	struct tool_ctx		 tools;
	struct hold		 hold;		/* tool_call events held back */
	uint32_t		 nextid;
	unsigned		 step;
	size_t			 ckpt;		/* messages sent in checkpoints */
	int			 cancelled;
	int			 in_log;	/* the log hook is sending */
	char			*schema;	/* a root's output schema */
};

/*
 * Queue m for the supervisor without writing it. Events, checkpoints and
 * spawn requests are queued; they go out, in order, with the next
 * worker_send or worker_recv, or before tools run (worker_flush). A turn
 * then costs the supervisor two wake-ups instead of one a frame.
 */
static void
worker_post(struct worker_state *ws, const struct ipc_msg *m)
{
	char	line[IPC_DESCRIBE_LEN];

	if (ws->args->trace) {
		ipc_msg_describe(m, line, sizeof(line));
		fprintf(stderr, "ipc -> %s\n", line);
	}
	if (ipc_peer_queue(&ws->peer, m) == -1)
		fatalx("send %s to the supervisor: %s", ipc_type_name(m->type),
		    ws->peer.err);
}

static void
worker_flush(struct worker_state *ws)
{
	if (ipc_peer_drain(&ws->peer, -1) == -1)
		fatalx("write to the supervisor: %s", ws->peer.err);
}

/* The hold's release, from whichever tool thread ticks past it. */
static void
worker_release(void *arg)
{
	worker_flush(arg);
}

static void
worker_send(struct worker_state *ws, const struct ipc_msg *m)
{
	worker_post(ws, m);
	worker_flush(ws);
}

/* Block for the next message; garbage or EOF from the supervisor is fatal. */
static void
worker_recv(struct worker_state *ws, struct ipc_msg *m)
{
	char	line[IPC_DESCRIBE_LEN];

	memset(m, 0, sizeof(*m));
	if (ipc_peer_recv(&ws->peer, m, -1) == -1) {
		if (errno == EPIPE)
			fatalx("the supervisor closed the channel");
		fatalx("from the supervisor: %s", ws->peer.err);
	}
	if (ws->args->trace) {
		ipc_msg_describe(m, line, sizeof(line));
		fprintf(stderr, "ipc <- %s\n", line);
	}
}

/* Log records travel to the supervisor as bounded "log" events. */
static void
worker_log_hook(enum log_level level, const char *line, void *arg)
{
	struct worker_state	*ws = arg;
	struct ipc_msg		 m;

	if (ws->in_log) {
		dprintf(STDERR_FILENO, "warren-worker: %s\n", line);
		return;
	}
	ws->in_log = 1;
	memset(&m, 0, sizeof(m));
	m.type = IPC_EVENT;
	m.u.event.kind = "log";
	m.u.event.text = (char *)(uintptr_t)line;
	m.u.event.has_level = 1;
	m.u.event.level = (uint32_t)level;
	if (ipc_peer_send(&ws->peer, &m, -1) == -1)
		dprintf(STDERR_FILENO, "warren-worker: %s\n", line);
	ws->in_log = 0;
}

static void
worker_event(const struct agent_event *ev, void *arg)
{
	struct worker_state	*ws = arg;
	struct ipc_msg		 m;
	const char		*kind;

	switch (ev->type) {
	case AGENT_EV_TOOL_CALL:
		kind = "tool_call";
		break;
	case AGENT_EV_TOOL_RESULT:
		kind = ev->is_error ? "tool_error" : "tool_result";
		break;
	case AGENT_EV_REMINDER:
		kind = "reminder";
		break;
	case AGENT_EV_NUDGE:
		kind = "nudge";
		break;
	case AGENT_EV_LOOP_WARNING:
		kind = "loop_warning";
		break;
	case AGENT_EV_LLM:
	case AGENT_EV_SUMMARY:
	case AGENT_EV_CLEAR:
	case AGENT_EV_DONE:
	default:
		return;
	}
	memset(&m, 0, sizeof(m));
	m.type = IPC_EVENT;
	m.u.event.kind = (char *)(uintptr_t)kind;
	m.u.event.tool = (char *)(uintptr_t)ev->name;
	/* Bounded by the protocol: cut long results, the supervisor only
	 * shows a line of them. */
	m.u.event.text = xstrdup(ev->text ? ev->text : "");
	if (strlen(m.u.event.text) > IPC_EVENT_MAX - 1)
		m.u.event.text[IPC_EVENT_MAX - 1] = '\0';
	worker_post(ws, &m);
	free(m.u.event.text);
}

/* Messages the agent logged since the last checkpoint. */
static void
worker_checkpoint(struct worker_state *ws)
{
	const struct msg_list	*log = agent_messages(ws->agent);
	struct ipc_msg		 m;
	size_t			 n;

	if (log->n <= ws->ckpt)
		return;
	n = log->n - ws->ckpt;
	if (n > IPC_MSGS_MAX)
		n = IPC_MSGS_MAX;
	memset(&m, 0, sizeof(m));
	m.type = IPC_CHECKPOINT;
	m.u.checkpoint.seq = (uint32_t)ws->ckpt;
	/* Borrow the agent's messages: a view, not a copy. */
	m.u.checkpoint.messages.v = log->v + ws->ckpt;
	m.u.checkpoint.messages.n = n;
	m.u.checkpoint.messages.cap = n;
	worker_post(ws, &m);
	ws->ckpt += n;
}

/* A cancel may arrive while we wait for anything: stop the agent. */
static int
worker_is_cancel(struct worker_state *ws, struct ipc_msg *m)
{
	if (m->type != IPC_CANCEL)
		return 0;
	ws->cancelled = 1;
	agent_cancel(ws->agent, m->u.cancel.reason ? m->u.cancel.reason :
	    "cancelled by the supervisor");
	ipc_msg_free(m);
	return 1;
}

static void
worker_llm(struct worker_state *ws, const struct agent_action *act)
{
	struct ipc_msg	m, a;
	uint32_t	id = ++ws->nextid;

	memset(&m, 0, sizeof(m));
	m.type = IPC_LLM;
	m.u.llm.id = id;
	m.u.llm.step = ++ws->step;
	m.u.llm.purpose = act->purpose == AGENT_LLM_SUMMARY ?
	    IPC_PURPOSE_SUMMARY : IPC_PURPOSE_TURN;
	m.u.llm.messages = *act->messages;	/* borrowed view */
	m.u.llm.tools = (struct msg_tool *)(uintptr_t)act->tools;
	m.u.llm.ntools = act->ntools;
	worker_send(ws, &m);
	worker_recv(ws, &a);
	if (worker_is_cancel(ws, &a))
		return;
	if (a.type == IPC_LLM_OK && a.u.llm_ok.id == id)
		(void)agent_feed_llm(ws->agent, &a.u.llm_ok.reply);
	else if (a.type == IPC_LLM_ERR && a.u.llm_err.id == id)
		(void)agent_feed_llm_error(ws->agent, a.u.llm_err.message);
	else
		fatalx("the supervisor answered llm %u with %s", id,
		    ipc_type_name(a.type));
	ipc_msg_free(&a);
	worker_checkpoint(ws);
}

/* Whether every one of these calls runs inside the worker (no bash). */
static int
worker_in_process(const struct agent_call *calls, size_t n)
{
	size_t	i;

	for (i = 0; i < n; i++)
		if (!tools_in_process(calls[i].name))
			return 0;
	return 1;
}

/*
 * The calls of one turn. Per call: its result as agent_feed_results takes
 * them (res) and, for a delegation, the spawn it waits for (wait). The
 * calls this worker runs itself are copied to mine, with their results in
 * tr, because tools_run_batch takes them as arrays of their own.
 */
struct worker_wait {
	uint32_t		 id;	/* the spawn awaited, 0 when none */
	char			*text;	/* the subagent's answer (owned) */
};

struct worker_batch {
	const struct agent_action *act;
	struct agent_result	*res;
	struct worker_wait	*wait;
	struct agent_call	*mine;
	struct tool_result	*tr;
	size_t			 nmine, nwait;
};

static void
worker_batch_init(struct worker_batch *b, const struct agent_action *act)
{
	memset(b, 0, sizeof(*b));
	b->act = act;
	b->res = xcalloc(act->ncalls, sizeof(*b->res));
	b->wait = xcalloc(act->ncalls, sizeof(*b->wait));
	b->mine = xcalloc(act->ncalls, sizeof(*b->mine));
	b->tr = xcalloc(act->ncalls, sizeof(*b->tr));
}

static void
worker_batch_free(struct worker_batch *b)
{
	size_t	 i;

	for (i = 0; i < b->nmine; i++)
		tool_result_free(&b->tr[i]);
	for (i = 0; i < b->act->ncalls; i++)
		free(b->wait[i].text);
	free(b->wait);
	free(b->tr);
	free(b->mine);
	free(b->res);
}

/* The supervisor answers delegations and MCP calls; we run the rest. */
static int
worker_remote(const struct agent_call *c)
{
	return c->kind == AGENT_CALL_DELEGATE || c->kind == AGENT_CALL_MCP;
}

/* An MCP call, "mcp__SERVER__TOOL", to the supervisor that holds the
 * server (the agent offered only the names the supervisor listed). */
static void
worker_batch_mcp(struct worker_state *ws, struct worker_batch *b, size_t i)
{
	const struct agent_call	*c = &b->act->calls[i];
	struct ipc_msg		 m;
	char			 server[IPC_NAME_MAX + 1];
	const char		*p, *sep;

	p = c->name + 5;	/* "mcp__" */
	if (strncmp(c->name, "mcp__", 5) != 0 ||
	    (sep = strstr(p, "__")) == NULL ||
	    (size_t)(sep - p) >= sizeof(server))
		fatalx("agent: %s is no MCP tool name", c->name);
	memcpy(server, p, (size_t)(sep - p));
	server[sep - p] = '\0';
	memset(&m, 0, sizeof(m));
	m.type = IPC_MCP;
	m.u.mcp.id = b->wait[i].id = ++ws->nextid;
	m.u.mcp.server = server;
	m.u.mcp.tool = (char *)(uintptr_t)(sep + 2);
	m.u.mcp.args = (char *)(uintptr_t)c->args;
	worker_post(ws, &m);
	b->nwait++;
}

/* Ask the supervisor for each delegation and MCP call; set the others
 * aside in mine. */
static void
worker_batch_spawn(struct worker_state *ws, struct worker_batch *b)
{
	const struct agent_call	*c;
	struct ipc_msg		 m;
	size_t			 i;

	for (i = 0; i < b->act->ncalls; i++) {
		c = &b->act->calls[i];
		if (c->kind == AGENT_CALL_MCP) {
			worker_batch_mcp(ws, b, i);
			continue;
		}
		if (c->kind != AGENT_CALL_DELEGATE) {
			b->mine[b->nmine++] = *c;
			continue;
		}
		memset(&m, 0, sizeof(m));
		m.type = IPC_SPAWN;
		m.u.spawn.id = b->wait[i].id = ++ws->nextid;
		m.u.spawn.profile = (char *)(uintptr_t)(c->profile ?
		    c->profile : "general");
		m.u.spawn.task = (char *)(uintptr_t)c->task;
		m.u.spawn.inherit_context = c->inherit_context;
		m.u.spawn.call_id = (char *)(uintptr_t)c->id;
		m.u.spawn.filtered = c->filtered;
		m.u.spawn.tools = (char **)(uintptr_t)c->tools;
		m.u.spawn.ntools = c->ntools;
		worker_post(ws, &m);
		b->nwait++;
	}
}

/* Run the calls set aside in mine; their results go to their calls. */
static void
worker_batch_run(struct worker_state *ws, struct worker_batch *b)
{
	size_t	 i, k;

	/*
	 * The spawns start, and the user sees the calls, before our tools
	 * run: a tool may take minutes. Only in-process tools hold the calls
	 * back, for WORKER_HOLD_MS: most end sooner, and their calls then go
	 * out with their results in the next write.
	 */
	if (b->nwait == 0 && b->nmine > 0 &&
	    worker_in_process(b->mine, b->nmine))
		hold_arm(&ws->hold, clock_mono_ms(), WORKER_HOLD_MS);
	else
		worker_flush(ws);
	if (b->nmine > 0 &&
	    tools_run_batch(&ws->tools, b->mine, b->nmine, b->tr) == -1)
		fatal("tools");
	hold_disarm(&ws->hold);
	for (i = 0, k = 0; i < b->act->ncalls; i++) {
		if (worker_remote(&b->act->calls[i]))
			continue;
		b->res[i].text = b->tr[k].text;
		b->res[i].is_error = b->tr[k].is_error;
		k++;
	}
}

/* The call whose spawn m answers; a message that answers none is fatal. */
static size_t
worker_batch_match(const struct worker_batch *b, const struct ipc_msg *m)
{
	size_t	 i;

	for (i = 0; i < b->act->ncalls; i++)
		if (b->wait[i].id != 0 && ((m->type == IPC_SPAWN_OK &&
		    m->u.spawn_ok.id == b->wait[i].id) ||
		    (m->type == IPC_SPAWN_ERR &&
		    m->u.spawn_err.id == b->wait[i].id) ||
		    (m->type == IPC_MCP_OK &&
		    m->u.mcp_ok.id == b->wait[i].id) ||
		    (m->type == IPC_MCP_ERR &&
		    m->u.mcp_err.id == b->wait[i].id)))
			return i;
	fatalx("unexpected %s while waiting for subagents",
	    ipc_type_name(m->type));
}

/* Wait for every subagent's answer, unless cancelled first. */
static void
worker_batch_wait(struct worker_state *ws, struct worker_batch *b)
{
	struct ipc_msg	 m;
	size_t		 i;

	while (b->nwait > 0 && !ws->cancelled) {
		worker_recv(ws, &m);
		if (worker_is_cancel(ws, &m))
			break;
		i = worker_batch_match(b, &m);
		b->wait[i].id = 0;
		b->nwait--;
		if (m.type == IPC_SPAWN_OK) {
			b->wait[i].text = xstrdup(m.u.spawn_ok.result);
		} else if (m.type == IPC_MCP_OK) {
			b->wait[i].text = xstrdup(m.u.mcp_ok.text);
			b->res[i].is_error = m.u.mcp_ok.is_error;
		} else if (m.type == IPC_MCP_ERR) {
			b->wait[i].text = xstrdup(m.u.mcp_err.message);
			b->res[i].is_error = 1;
		} else {
			b->wait[i].text = xstrdup(m.u.spawn_err.message);
			b->res[i].is_error = 1;
		}
		b->res[i].text = b->wait[i].text;
		ipc_msg_free(&m);
	}
}

/* Delegations first (they run in parallel elsewhere), then our tools. */
static void
worker_tools(struct worker_state *ws, const struct agent_action *act)
{
	struct worker_batch	 b;

	worker_batch_init(&b, act);
	worker_batch_spawn(ws, &b);
	worker_batch_run(ws, &b);
	worker_batch_wait(ws, &b);
	if (!ws->cancelled) {
		(void)agent_feed_results(ws->agent, b.res, act->ncalls);
		worker_checkpoint(ws);
	}
	worker_batch_free(&b);
}

static void
worker_done(struct worker_state *ws, const struct agent_action *act)
{
	struct ipc_msg	m;

	worker_checkpoint(ws);
	memset(&m, 0, sizeof(m));
	m.type = IPC_DONE;
	switch (act->status) {
	case AGENT_COMPLETE:
		m.u.done.status = IPC_STATUS_COMPLETE;
		break;
	case AGENT_AUTO_COMPLETE:
		m.u.done.status = IPC_STATUS_AUTO_COMPLETE;
		break;
	case AGENT_FAIL:
		m.u.done.status = IPC_STATUS_FAIL;
		break;
	case AGENT_LIMIT:
	case AGENT_RUNNING:
	default:
		m.u.done.status = IPC_STATUS_LIMIT;
		break;
	}
	m.u.done.result = (char *)(uintptr_t)(act->result ? act->result : "");
	m.u.done.reason = (char *)(uintptr_t)act->reason;
	m.u.done.usage = agent_usage(ws->agent);
	m.u.done.iterations = agent_iterations(ws->agent);
	log_sethook(NULL, NULL);
	worker_send(ws, &m);
}

/* The profile the supervisor sent, as the agent core knows profiles. */
static void
worker_profile(struct worker_state *ws, const struct ipc_profile *ip)
{
	const struct tooldef	*td;
	const char		*name;
	size_t			 i;

	memset(&ws->profile, 0, sizeof(ws->profile));
	ws->profile.name = xstrdup(ip->name);
	ws->profile.prompt = xstrdup(ip->prompt ? ip->prompt : "");
	ws->profile.source = xstrdup("supervisor");
	for (i = 0; i < ip->ntools; i++) {
		if ((name = tooldef_canonical(ip->tools[i])) == NULL ||
		    ((td = tooldef_find(name)) == NULL &&
		    strncmp(name, "mcp__", 5) != 0))
			fatalx("start: unknown tool %s", ip->tools[i]);
		if (ws->profile.ntools == PROFILE_MAX_TOOLS)
			fatalx("start: too many tools");
		ws->profile.tools[ws->profile.ntools++] = name;
	}
	profile_derive(&ws->profile);
}

static void
worker_hello(struct worker_state *ws, const struct sandbox_report *rep)
{
	struct ipc_msg	m;
	int		i;

	memset(&m, 0, sizeof(m));
	m.type = IPC_HELLO;
	m.u.hello.version = IPC_PROTOCOL_VERSION;
	m.u.hello.pid = (uint32_t)getpid();
	for (i = 0; i < rep->nlayers && i < IPC_LAYERS_MAX; i++)
		m.u.hello.layers[i] = (char *)(uintptr_t)rep->layers[i];
	m.u.hello.nlayers = (size_t)i;
	m.u.hello.weaker = rep->weaker;
	worker_send(ws, &m);
}

static void
worker_agent(struct worker_state *ws, const struct ipc_start *s)
{
	struct agent_config	cfg;
	char			err[512], extra[512];
	size_t			i;

	memset(&cfg, 0, sizeof(cfg));
	snprintf(extra, sizeof(extra), "You are agent %s (depth %u) in a "
	    "sandbox. Paths are relative to the workspace root. Finish with "
	    "complete(result): your result is all your parent sees.",
	    s->path, s->depth);
	cfg.profile = &ws->profile;
	cfg.path = s->path;
	cfg.depth = s->depth;
	cfg.task = s->task;
	cfg.system_extra = extra;
	cfg.inherited = &s->context;
	/* The profiles its delegate may name: the supervisor's list. */
	if (s->ndelegates > 0) {
		ws->delegates = xcalloc(s->ndelegates, sizeof(*ws->delegates));
		for (i = 0; i < s->ndelegates; i++) {
			ws->delegates[i].name = s->delegates[i];
			ws->delegates[i].description = s->delegate_descs[i];
		}
		cfg.delegates = ws->delegates;
		cfg.ndelegates = s->ndelegates;
	}
	/* Resumed: the agent goes on from its messages; its first checkpoint
	 * resends them from 0 and the supervisor skips what it has. */
	if (s->history.n > 0) {
		cfg.resume = &s->history;
		for (i = 0; i < s->history.n; i++)
			if (s->history.v[i].role == MSG_ASSISTANT)
				ws->step++;	/* replay keys go on */
	}
	/* The MCP servers' tools the supervisor listed for us. */
	cfg.mcp_tools = s->mcp_tools;
	cfg.nmcp_tools = s->nmcp_tools;
	cfg.limits.max_iterations = s->limits.max_iterations;
	cfg.limits.timeout_ms = s->limits.timeout_ms;
	if (s->limits.max_output_bytes > 0)
		cfg.limits.max_result = s->limits.max_output_bytes;
	cfg.on_event = worker_event;
	cfg.event_arg = ws;
	/* A root with an output schema: complete() is checked here, so the
	 * model hears a refusal; the supervisor checks the done again. */
	if (s->schema != NULL) {
		ws->schema = xstrdup(s->schema);
		cfg.check_result = jschema_agent_check;
		cfg.check_arg = &ws->schema;
	}
	ws->agent = agent_new(&cfg, err, sizeof(err));
	free(ws->delegates);
	ws->delegates = NULL;
	if (ws->agent == NULL)
		fatalx("agent: %s", err);
}

int
worker_main(const struct worker_args *a, const struct sandbox_report *rep)
{
	struct worker_state	 ws;
	struct ipc_msg		 m;
	struct agent_action	 act;
	char			 err[512];

	memset(&ws, 0, sizeof(ws));
	ws.args = a;
	ipc_peer_init(&ws.peer, a->in_fd, a->out_fd, IPC_SIDE_WORKER);
	worker_hello(&ws, rep);
	worker_recv(&ws, &m);
	if (m.type == IPC_CANCEL) {
		ipc_msg_free(&m);
		return 0;
	}
	if (m.type != IPC_START)
		fatalx("expected start, got %s", ipc_type_name(m.type));
	if (strcmp(m.u.start.path, a->path) != 0 ||
	    strcmp(m.u.start.profile.name, a->profile) != 0)
		fatalx("start is for %s (%s), we are %s (%s)", m.u.start.path,
		    m.u.start.profile.name, a->path, a->profile);
	log_procinit("warren-worker");
	log_sethook(worker_log_hook, &ws);
	if (a->backend.backend != NULL) {
		(void)proxy_main(&ws.peer, a, &m.u.start);
		ipc_msg_free(&m);
		ipc_peer_free(&ws.peer);
		return 0;
	}
	worker_profile(&ws, &m.u.start.profile);
	if (tool_ctx_open(&ws.tools, m.u.start.workspace, err,
	    sizeof(err)) == -1)
		fatalx("workspace: %s", err);
	hold_init(&ws.hold, worker_release, &ws);
	ws.tools.progress = hold_progress;
	ws.tools.progress_arg = &ws.hold;
	if (m.u.start.limits.max_output_bytes > 0)
		ws.tools.max_output = m.u.start.limits.max_output_bytes;
	if (chdir(m.u.start.workspace) == -1)
		log_warn("chdir %s", m.u.start.workspace);
	worker_agent(&ws, &m.u.start);
	ipc_msg_free(&m);
	for (;;) {
		memset(&act, 0, sizeof(act));
		switch (agent_next(ws.agent, clock_mono_ms(), &act)) {
		case AGENT_NEED_LLM:
			worker_llm(&ws, &act);
			break;
		case AGENT_NEED_TOOLS:
			worker_tools(&ws, &act);
			break;
		case AGENT_NEED_DONE:
			worker_done(&ws, &act);
			goto out;
		default:
			fatalx("agent: unknown need");
		}
	}
out:
	agent_free(ws.agent);
	tool_ctx_close(&ws.tools);
	hold_free(&ws.hold);
	ipc_peer_free(&ws.peer);
	free(ws.profile.name);
	free(ws.profile.prompt);
	free(ws.profile.source);
	free(ws.schema);
	return 0;
}

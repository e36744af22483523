/*
 * The MCP servers of a run's workers: each is started when the worker
 * that names it in its tools is, through the spawn server (SPAWN_STDIO:
 * every sandbox layer before its exec), and stopped with it. Its pipes
 * are held here, in the loop: initialize, notifications/initialized and
 * tools/list before the worker's start (which carries the tools), then
 * one tools/call per IPC mcp request, answered with mcp_ok or mcp_err.
 * A server that dies, does not answer in time, prints more than
 * MCP_READ_MAX for one answer or a line over MCP_LINE_MAX is stopped, and
 * each call it owed is an error the model reads; the worker and the run
 * go on. Lines that are no JSON object are skipped (within MCP_READ_MAX);
 * an answer that is no result (a JSON-RPC error, a result that is no
 * object) is an error result for that call.
 */
#include <sys/epoll.h>

#include <errno.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <jansson.h>

#include "agent/profile.h"
#include "common/log.h"
#include "common/str.h"
#include "common/xmalloc.h"
#include "ipc/ipc.h"
#include "spawnd/spawn.h"
#include "supervisor/loop.h"
#include "supervisor/mcp.h"
#include "supervisor/proc_int.h"
#include "supervisor/run.h"
#include "supervisor/spawnd_client.h"

#define MCP_ID_INIT	1
#define MCP_ID_LIST	2
#define MCP_ERRLOG_MAX	(64u * 1024)	/* its stderr logged, bytes */

enum mcp_state {
	MCP_FORKING = 0,	/* asked of the spawn server */
	MCP_INIT,		/* initialize sent */
	MCP_LIST,		/* tools/list sent */
	MCP_READY,		/* serving calls */
	MCP_DEAD,		/* stopped or failed: why says why */
};

struct mcp_call {
	uint64_t	 rpc_id;
	uint32_t	 ipc_id;
	uint64_t	 timer;
	struct mcp_proc *s;
	char		*tool;		/* mcp__SERVER__TOOL */
	struct mcp_call	*next;
};

struct mcp_proc {
	struct run		*run;
	struct worker		*w;	/* NULL once its agent is gone */
	const struct mcp_entry	*e;
	struct sandbox_policy	 policy;
	char			 prog[PATH_MAX];
	enum mcp_state		 state;
	uint32_t		 spawn_id;
	struct spawn_child	 child;
	int			 attached;	/* fds in the loop */
	int			 exited;
	struct buf		 out;	/* lines not yet written */
	int			 out_armed;
	struct mcp_lines	 lines;
	uint64_t		 next_id;
	uint64_t		 timer;	/* the start's deadline */
	struct msg_tool		*tools;
	size_t			 ntools;
	struct mcp_call		*calls;
	size_t			 errlogged;
	unsigned		 garbage;	/* lines that were no JSON */
	char			 errline[256];
	size_t			 errlen;
	char			 why[512];
	int			 settled;	/* its worker was told */
	struct mcp_proc	*next;		/* run->mcp_servers */
	struct mcp_proc	*wnext;		/* w->mcp */
};

static void	mcp_fail(struct mcp_proc *, const char *fmt, ...)
		    __attribute__((format(printf, 2, 3)));

/* --- answers to the worker ------------------------------------------ */

static void
mcp_answer_err(struct worker *w, uint32_t id, const char *code,
    const char *text)
{
	struct ipc_msg	 m;
	char		 err[256];

	if (w == NULL || w->state == PROC_DEAD || w->got_done)
		return;
	memset(&m, 0, sizeof(m));
	m.type = IPC_MCP_ERR;
	m.u.mcp_err.id = id;
	m.u.mcp_err.code = (char *)(uintptr_t)code;
	m.u.mcp_err.message = (char *)(uintptr_t)text;
	if (proc_send_answer(w, &m, err, sizeof(err)) == -1)
		log_warnx("agent %s: mcp_err: %s", w->node->path, err);
}

static void
mcp_answer_ok(struct worker *w, uint32_t id, const char *text, int is_error)
{
	struct ipc_msg	 m;
	char		 err[256];

	if (w == NULL || w->state == PROC_DEAD || w->got_done)
		return;
	memset(&m, 0, sizeof(m));
	m.type = IPC_MCP_OK;
	m.u.mcp_ok.id = id;
	m.u.mcp_ok.text = (char *)(uintptr_t)text;
	m.u.mcp_ok.is_error = is_error;
	if (proc_send_answer(w, &m, err, sizeof(err)) == -1)
		mcp_answer_err(w, id, IPC_ERR_REFUSED, err);
}

/* The supervisor's own record of a brokered call: the store, --json
 * events, the live view (the worker's own events of it are dropped). */
static void
mcp_event_result(struct mcp_proc *s, const char *tool, const char *text,
    int is_error)
{
	if (s->w == NULL)
		return;
	ui_tool_result(s->w->node, tool, text, is_error);
	run_record_event(s->run, s->w->node, is_error ? "tool_error" :
	    "tool_result", tool, text);
}

static void
mcp_call_free(struct mcp_proc *s, struct mcp_call *c)
{
	struct mcp_call	**pp;

	for (pp = &s->calls; *pp != NULL; pp = &(*pp)->next)
		if (*pp == c) {
			*pp = c->next;
			break;
		}
	if (c->timer != 0)
		loop_timer_del(s->run->loop, c->timer);
	free(c->tool);
	free(c);
}

/* --- the server's end ----------------------------------------------- */

static void
mcp_settle(struct mcp_proc *s)
{
	struct worker	*w = s->w;

	if (s->settled || w == NULL)
		return;
	s->settled = 1;
	if (w->mcp_wait > 0 && --w->mcp_wait == 0)
		proc_mcp_settled(w);
}

static void
mcp_detach(struct mcp_proc *s)
{
	struct loop	*l = s->run->loop;

	if (!s->attached)
		return;
	s->attached = 0;
	loop_del_fd(l, s->child.from_fd);
	loop_del_fd(l, s->child.to_fd);
	loop_del_fd(l, s->child.err_fd);
	spawn_release(&s->child);
}

/* Stop s for good: every call it owed fails with why, the process is
 * killed, the worker (if still waiting for the tools) goes on without. */
static void
mcp_fail(struct mcp_proc *s, const char *fmt, ...)
{
	struct mcp_call	*c;
	char		 msg[768];
	va_list		 ap;

	if (s->state == MCP_DEAD)
		return;
	va_start(ap, fmt);
	vsnprintf(s->why, sizeof(s->why), fmt, ap);
	va_end(ap);
	if (s->errline[0] != '\0' && strlen(s->why) + 20 < sizeof(s->why)) {
		size_t	len = strlen(s->why);

		snprintf(s->why + len, sizeof(s->why) - len, " (its stderr: "
		    "%s)", s->errline);
	}
	s->state = MCP_DEAD;
	if (s->w != NULL)
		log_warnx("agent %s: MCP server %s: %s", s->w->node->path,
		    s->e->name, s->why);
	while ((c = s->calls) != NULL) {
		snprintf(msg, sizeof(msg), "MCP server %s: %s", s->e->name,
		    s->why);
		mcp_event_result(s, c->tool, msg, 1);
		mcp_answer_err(s->w, c->ipc_id, IPC_ERR_CRASHED, msg);
		mcp_call_free(s, c);
	}
	if (s->timer != 0) {
		loop_timer_del(s->run->loop, s->timer);
		s->timer = 0;
	}
	if (s->spawn_id != 0 && s->run->spawnd != NULL) {
		spawnd_client_forget(s->run->spawnd, s->spawn_id);
		s->spawn_id = 0;
	}
	if (s->child.pid > 0 && !s->exited) {
		if (s->child.remote && s->run->spawnd != NULL)
			spawnd_client_kill(s->run->spawnd, s->child.pid,
			    SIGKILL);
		else
			spawn_kill(&s->child, SIGKILL);
	}
	mcp_detach(s);
	mcp_settle(s);
}

/* --- writing and reading -------------------------------------------- */

static void
mcp_flush(struct mcp_proc *s)
{
	ssize_t	n;

	while (buf_left(&s->out) > 0) {
		n = write(s->child.to_fd, buf_head(&s->out), buf_left(&s->out));
		if (n == -1 && errno == EINTR)
			continue;
		if (n == -1 && errno == EAGAIN)
			break;
		if (n == -1) {
			mcp_fail(s, "its stdin: %s", strerror(errno));
			return;
		}
		buf_consume(&s->out, (size_t)n);
	}
	if ((buf_left(&s->out) > 0) != s->out_armed) {
		s->out_armed = buf_left(&s->out) > 0;
		(void)loop_mod_fd(s->run->loop, s->child.to_fd,
		    s->out_armed ? EPOLLOUT : 0);
	}
}

static void
mcp_write_cb(int fd, uint32_t events, void *arg)
{
	(void)fd;
	(void)events;
	mcp_flush(arg);
}

static int
mcp_send(struct mcp_proc *s, uint64_t id, const char *method,
    json_t *params)
{
	if (mcp_rpc_request(&s->out, id, method, params) == -1) {
		mcp_fail(s, "cannot queue %s", method);
		return -1;
	}
	mcp_flush(s);
	return 0;
}

static void
mcp_initialize(struct mcp_proc *s)
{
	json_t	*p;

	p = json_pack("{s:s, s:{}, s:{s:s, s:s}}", "protocolVersion",
	    MCP_PROTOCOL, "capabilities", "clientInfo", "name", "warren",
	    "version", "1");
	s->state = MCP_INIT;
	(void)mcp_send(s, MCP_ID_INIT, "initialize", p);
}

/* Which of the server's tools w's profile names: mcp__S (all) or
 * mcp__S__TOOL. */
static int
mcp_offered(const struct profile *p, const char *server, const char *full)
{
	char		 name[MCP_NAME_MAX + 1];
	const char	*tool;
	size_t		 i;

	for (i = 0; i < p->ntools; i++) {
		if (mcp_split(p->tools[i], name, sizeof(name), &tool) == -1 ||
		    strcmp(name, server) != 0)
			continue;
		if (*tool == '\0' || strcmp(p->tools[i], full) == 0)
			return 1;
	}
	return 0;
}

static void
mcp_on_tools(struct mcp_proc *s, json_t *result)
{
	struct worker	*w = s->w;
	char		 err[256];
	size_t		 i;

	if (mcp_rpc_tools(result, s->e->name, &s->tools, &s->ntools, err,
	    sizeof(err)) == -1) {
		mcp_fail(s, "%s", err);
		return;
	}
	loop_timer_del(s->run->loop, s->timer);
	s->timer = 0;
	s->state = MCP_READY;
	if (w == NULL)
		return;
	for (i = 0; i < s->ntools; i++) {
		if (!mcp_offered(w->node->profile, s->e->name,
		    s->tools[i].name))
			continue;
		if (w->nmcp_tools == MCP_TOOLS_MAX) {
			log_warnx("agent %s: MCP server %s: its tools past "
			    "%d MCP tools in all are left out", w->node->path,
			    s->e->name, MCP_TOOLS_MAX);
			break;
		}
		w->mcp_tools = xreallocarray(w->mcp_tools, w->nmcp_tools + 1,
		    sizeof(*w->mcp_tools));
		if (msg_tool_copy(&w->mcp_tools[w->nmcp_tools],
		    &s->tools[i]) == -1)
			fatal("msg_tool_copy");
		w->nmcp_tools++;
	}
	mcp_settle(s);
}

static struct mcp_call *
mcp_call_find(struct mcp_proc *s, uint64_t id)
{
	struct mcp_call	*c;

	for (c = s->calls; c != NULL; c = c->next)
		if (c->rpc_id == id)
			return c;
	return NULL;
}

/* 1 if msg answered a request of ours still owed, 0 if nobody's. */
static int
mcp_on_answer(struct mcp_proc *s, uint64_t id, json_t *result,
    const char *err)
{
	struct mcp_call	*c;
	char		*text, msg[768];
	int		 is_error;

	if (s->state == MCP_INIT && id == MCP_ID_INIT) {
		if (result == NULL) {
			mcp_fail(s, "initialize: %s", err);
			return 1;
		}
		if (mcp_rpc_note(&s->out, "notifications/initialized") ==
		    -1)
			fatal("mcp_rpc_note");
		s->state = MCP_LIST;
		(void)mcp_send(s, MCP_ID_LIST, "tools/list", json_object());
		return 1;
	}
	if (s->state == MCP_LIST && id == MCP_ID_LIST) {
		if (result == NULL)
			mcp_fail(s, "tools/list: %s", err);
		else
			mcp_on_tools(s, result);
		return 1;
	}
	/* A late answer to a call that timed out is nobody's. */
	if (s->state != MCP_READY || (c = mcp_call_find(s, id)) == NULL)
		return 0;
	if (result == NULL) {
		snprintf(msg, sizeof(msg), "MCP server %s: %s", s->e->name,
		    err);
		mcp_event_result(s, c->tool, msg, 1);
		mcp_answer_ok(s->w, c->ipc_id, msg, 1);
	} else {
		text = mcp_rpc_result_text(result, MCP_RESULT_MAX, &is_error);
		mcp_event_result(s, c->tool, text, is_error);
		mcp_answer_ok(s->w, c->ipc_id, text, is_error);
		free(text);
	}
	mcp_call_free(s, c);
	return 1;
}

static void
mcp_read_lines(struct mcp_proc *s)
{
	json_t		*msg, *result;
	uint64_t	 id;
	char		 err[256];
	int		 rc;

	while (s->state != MCP_DEAD) {
		if ((rc = mcp_lines_next(&s->lines, &msg, err,
		    sizeof(err))) == 0)
			return;
		/* A line that is no JSON object (a stray print) answers
		   nothing: skipped, counted against MCP_READ_MAX. */
		if (rc == -1) {
			if (s->garbage++ == 0)
				log_debug("MCP server %s: skipped a line: %s",
				    s->e->name, err);
			continue;
		}
		/* Only an answer owed restarts the count: answers to ids
		   never sent (or sent twice) are as much noise as any. */
		if (mcp_rpc_answer(msg, &id, &result, err, sizeof(err)) == 1 &&
		    mcp_on_answer(s, id, result, err) == 1)
			s->lines.read = 0;
		json_decref(msg);
	}
}

static void	mcp_err_drain(struct mcp_proc *);

static void
mcp_read_cb(int fd, uint32_t events, void *arg)
{
	struct mcp_proc	*s = arg;
	char			 b[65536], err[256];
	ssize_t			 n;

	(void)events;
	for (;;) {
		n = read(fd, b, sizeof(b));
		if (n == -1 && errno == EINTR)
			continue;
		if (n == -1 && errno == EAGAIN)
			return;
		if (n <= 0) {
			mcp_err_drain(s);
			mcp_fail(s, "it closed its stdout (exited?)");
			return;
		}
		if (mcp_lines_feed(&s->lines, b, (size_t)n, err,
		    sizeof(err)) == -1) {
			mcp_fail(s, "stopped: %s", err);
			return;
		}
		if (s->lines.read > MCP_READ_MAX) {
			mcp_fail(s, "stopped: it wrote more than %u bytes "
			    "without answering", MCP_READ_MAX);
			return;
		}
		mcp_read_lines(s);
		if (s->state == MCP_DEAD || (size_t)n < sizeof(b))
			return;
	}
}

/* Its stderr: drained, the last line kept for errors, a bounded part
 * logged at debug level, escaped. */
static void
mcp_err_cb(int fd, uint32_t events, void *arg)
{
	struct mcp_proc	*s = arg;
	char			 b[4096], esc[1024];
	ssize_t			 n, i;

	(void)events;
	while ((n = read(fd, b, sizeof(b))) > 0) {
		for (i = 0; i < n; i++) {
			if (b[i] != '\n') {
				if (s->errlen + 1 < sizeof(s->errline) / 4)
					s->errline[s->errlen++] = b[i];
				continue;
			}
			if (s->errlen == 0)
				continue;
			str_escape(esc, sizeof(esc), s->errline, s->errlen);
			if (s->errlogged < MCP_ERRLOG_MAX) {
				s->errlogged += s->errlen;
				log_debug("MCP server %s: %s", s->e->name, esc);
			}
			strlcpy(s->errline, esc, sizeof(s->errline));
			s->errlen = 0;
		}
		if ((size_t)n < sizeof(b))
			break;
	}
	if (n == 0 || (n == -1 && errno != EAGAIN && errno != EINTR))
		loop_mod_fd(s->run->loop, fd, 0);
}

/*
 * Its stderr as far as it is written, before it is failed for the end of
 * its stdout or its exit: the epoll batch that brings that end may not
 * have read the stderr written before it.
 */
static void
mcp_err_drain(struct mcp_proc *s)
{
	if (s->attached)
		mcp_err_cb(s->child.err_fd, EPOLLIN, s);
}

static void
mcp_start_timeout(void *arg)
{
	struct mcp_proc	*s = arg;

	s->timer = 0;
	mcp_fail(s, "no tools within %u ms of its start", MCP_START_MS);
}

static void
mcp_attach(struct mcp_proc *s, const struct spawn_child *c)
{
	struct loop	*l = s->run->loop;

	s->child = *c;
	if (loop_add_fd(l, s->child.from_fd, EPOLLIN, mcp_read_cb, s) == -1 ||
	    loop_add_fd(l, s->child.to_fd, 0, mcp_write_cb, s) == -1 ||
	    loop_add_fd(l, s->child.err_fd, EPOLLIN, mcp_err_cb, s) == -1)
		fatal("epoll_ctl");
	s->attached = 1;
	mcp_initialize(s);
}

/* --- the spawn server's answers ------------------------------------- */

static struct mcp_proc *
mcp_find_cookie(struct run *r, void *cookie)
{
	struct mcp_proc	*s;

	for (s = r->mcp_servers; s != NULL; s = s->next)
		if (s == cookie)
			return s;
	return NULL;
}

int
mcp_spawned(struct run *r, void *cookie, const struct spawn_child *c,
    const char *err)
{
	struct mcp_proc	*s;

	if ((s = mcp_find_cookie(r, cookie)) == NULL)
		return 0;
	s->spawn_id = 0;
	if (c == NULL) {
		mcp_fail(s, "cannot start: %s", err);
		return 1;
	}
	if (s->state == MCP_DEAD) {
		/* Stopped while forking: it dies on arrival. */
		if (r->spawnd != NULL)
			spawnd_client_kill(r->spawnd, c->pid, SIGKILL);
		s->child = *c;
		spawn_release(&s->child);
		return 1;
	}
	mcp_attach(s, c);
	return 1;
}

int
mcp_exited(struct run *r, int pid)
{
	struct mcp_proc	*s;

	for (s = r->mcp_servers; s != NULL; s = s->next) {
		if (s->child.pid != pid || s->exited)
			continue;
		/* What it wrote before it died is read first: its stderr
		 * before its stdout, whose end fails it with its last
		 * stderr line. */
		mcp_err_drain(s);
		if (s->attached)
			mcp_read_cb(s->child.from_fd, EPOLLIN, s);
		s->exited = 1;
		mcp_fail(s, "it exited");
		return 1;
	}
	return 0;
}

/* --- the worker's side ---------------------------------------------- */

static struct mcp_proc *
mcp_server_new(struct worker *w, const struct mcp_entry *e)
{
	struct mcp_proc	*s;

	s = xcalloc(1, sizeof(*s));
	s->run = w->run;
	s->w = w;
	s->e = e;
	s->next_id = MCP_ID_LIST + 1;
	s->child.to_fd = s->child.from_fd = s->child.err_fd = -1;
	buf_init(&s->out, 0);
	buf_init(&s->lines.in, 0);
	s->next = w->run->mcp_servers;
	w->run->mcp_servers = s;
	s->wnext = w->mcp;
	w->mcp = s;
	return s;
}

static void
mcp_server_spawn(struct mcp_proc *s)
{
	struct run		*r = s->run;
	struct spawn_req	 req;
	struct mcp_launch	 l;
	char			 err[512];

	if (mcp_sandbox_policy(s->e, s->w->policy, &s->policy, s->prog,
	    sizeof(s->prog), err, sizeof(err)) == -1) {
		mcp_fail(s, "%s", err);
		return;
	}
	if (r->spawnd == NULL) {
		mcp_fail(s, "cannot start: this run has no spawn server "
		    "(WARREN_SPAWN_DIRECT, or it failed to start), and MCP "
		    "servers start only through it");
		return;
	}
	/* The workers' clean environment (no key), then the entry's. */
	mcp_sandbox_launch(&l, s->e, s->prog, &s->policy, &req);
	s->spawn_id = spawnd_client_request(r->spawnd, &req, s, err,
	    sizeof(err));
	mcp_sandbox_launch_free(&l);
	if (s->spawn_id == 0) {
		mcp_fail(s, "cannot start: %s", err);
		return;
	}
	s->timer = loop_timer_add(r->loop, MCP_START_MS, mcp_start_timeout,
	    s);
}

int
mcp_worker_start(struct worker *w)
{
	const struct profile	*p = w->node->profile;
	const struct mcp_entry	*e;
	struct mcp_proc	*s;
	char			 name[MCP_NAME_MAX + 1];
	const char		*tool;
	size_t			 i;

	for (i = 0; i < p->ntools; i++) {
		if (mcp_split(p->tools[i], name, sizeof(name), &tool) == -1)
			continue;
		for (s = w->mcp; s != NULL; s = s->wnext)
			if (strcmp(s->e->name, name) == 0)
				break;
		if (s != NULL)
			continue;
		if ((e = mcp_config_find(w->run->opts.mcp, name)) == NULL) {
			log_warnx("agent %s: profile %s names %s, but no MCP "
			    "server %s is declared (mcp.json)", w->node->path,
			    p->name, p->tools[i], name);
			continue;
		}
		s = mcp_server_new(w, e);
		w->mcp_wait++;
		mcp_server_spawn(s);
	}
	return w->mcp_wait > 0;
}

const struct msg_tool *
mcp_worker_tools(struct worker *w, size_t *n)
{
	*n = w->nmcp_tools;
	return w->mcp_tools;
}

int
mcp_worker_offers(struct worker *w, const char *name)
{
	size_t	i;

	for (i = 0; i < w->nmcp_tools; i++)
		if (strcmp(w->mcp_tools[i].name, name) == 0)
			return 1;
	return 0;
}

static void
mcp_call_timeout(void *arg)
{
	struct mcp_call		*c = arg;
	struct mcp_proc	*s = c->s;

	c->timer = 0;
	mcp_fail(s, "did not answer %s within %llu ms: stopped", c->tool,
	    (unsigned long long)(s->e->timeout_ms ? s->e->timeout_ms :
	    MCP_TIMEOUT_MS));
}

/* Whether s takes one more call: at most MCP_OUT_MAX bytes it has not
 * read yet (a server that reads nothing would have the rest held in our
 * memory, and the calls with it); -1 with why in msg. */
static int
mcp_call_room(struct mcp_proc *s, char *msg, size_t msgsz)
{
	if (buf_left(&s->out) >= MCP_OUT_MAX) {
		snprintf(msg, msgsz, "MCP server %s: it has not read the %zu "
		    "bytes of calls queued for it: call refused (call again "
		    "once some have answered)", s->e->name,
		    buf_left(&s->out));
		return -1;
	}
	return 0;
}

void
mcp_call(struct worker *w)
{
	const struct ipc_mcp	*m = &w->msg->u.mcp;
	struct mcp_proc	*s;
	struct mcp_call		*c;
	json_t			*args;
	char			 full[IPC_NAME_MAX * 2 + 8], msg[768];

	snprintf(full, sizeof(full), MCP_PREFIX "%s" MCP_SEP "%s", m->server,
	    m->tool);
	ui_tool(w->node, full, m->args);
	run_record_event(w->run, w->node, "tool_call", full, m->args);
	for (s = w->mcp; s != NULL; s = s->wnext)
		if (strcmp(s->e->name, m->server) == 0)
			break;
	if (!mcp_worker_offers(w, full) || s == NULL) {
		snprintf(msg, sizeof(msg), "%s is not one of your tools", full);
		mcp_answer_err(w, m->id, IPC_ERR_REFUSED, msg);
		return;
	}
	if (s->state != MCP_READY) {
		snprintf(msg, sizeof(msg), "MCP server %s is stopped: %s",
		    s->e->name, s->why);
		mcp_event_result(s, full, msg, 1);
		mcp_answer_err(w, m->id, IPC_ERR_CRASHED, msg);
		return;
	}
	if (mcp_call_room(s, msg, sizeof(msg)) == -1) {
		mcp_event_result(s, full, msg, 1);
		mcp_answer_err(w, m->id, IPC_ERR_REFUSED, msg);
		return;
	}
	/* json_is_object() is a macro that names its argument twice. */
	args = json_loads(m->args, 0, NULL);
	if (!json_is_object(args)) {
		json_decref(args);
		mcp_answer_err(w, m->id, IPC_ERR_REFUSED, "arguments must be "
		    "a JSON object");
		return;
	}
	c = xcalloc(1, sizeof(*c));
	c->s = s;
	c->rpc_id = s->next_id++;
	c->ipc_id = m->id;
	c->tool = xstrdup(full);
	c->next = s->calls;
	s->calls = c;
	c->timer = loop_timer_add(w->run->loop, s->e->timeout_ms ?
	    s->e->timeout_ms : MCP_TIMEOUT_MS, mcp_call_timeout, c);
	(void)mcp_send(s, c->rpc_id, "tools/call", json_pack("{s:s, s:o}",
	    "name", m->tool, "arguments", args));
}

void
mcp_worker_stop(struct worker *w)
{
	struct mcp_proc	*s;

	while ((s = w->mcp) != NULL) {
		w->mcp = s->wnext;
		s->settled = 1;
		mcp_fail(s, "its agent is gone");
		s->w = NULL;
	}
	w->mcp_wait = 0;
	for (size_t i = 0; i < w->nmcp_tools; i++)
		msg_tool_free(&w->mcp_tools[i]);
	free(w->mcp_tools);
	w->mcp_tools = NULL;
	w->nmcp_tools = 0;
}

void
mcp_run_free(struct run *r)
{
	struct mcp_proc	*s;
	size_t			 i;

	while ((s = r->mcp_servers) != NULL) {
		r->mcp_servers = s->next;
		s->w = NULL;
		mcp_fail(s, "the run ended");
		for (i = 0; i < s->ntools; i++)
			msg_tool_free(&s->tools[i]);
		free(s->tools);
		buf_free(&s->out);
		mcp_lines_free(&s->lines);
		free(s);
	}
}

/*
 * `warren mcp`'s loop: one poll() over stdin and every call's child, so
 * a run that takes minutes never stops the server reading the next
 * request (or the cancel of that run). Each line of stdin is one
 * JSON-RPC message, bounded (MCP_LINE_MAX); the methods a client may ask
 * are dispatched in one place. When stdin ends, every run still going is
 * stopped (SIGTERM, SIGKILL to its process group after the grace), the
 * other calls end by themselves, and the server exits once all are gone.
 */
#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "cli/mcp.h"
#include "common/exitcode.h"
#include "common/version.h"

#define MCP_PROTOCOL_LATEST	"2025-06-18"

/* The protocol versions this server speaks; a client's own is answered
 * with itself, any other with the latest. */
static const char *const mcp_server_versions[] = {
	"2025-11-25", "2025-06-18", "2025-03-26", "2024-11-05",
};

uint64_t
mcp_now(void)
{
	struct timespec	ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

static void
mcp_server_initialize(struct mcp_server *s, json_t *id, json_t *params)
{
	json_t		*v = json_object_get(params, "protocolVersion");
	const char	*want = json_string_value(v), *ver;
	size_t		 i;

	if (!json_is_string(v)) {
		mcp_rpc_error(s, id, MCP_EPARAMS, "initialize: "
		    "\"protocolVersion\" must be a string");
		return;
	}
	ver = MCP_PROTOCOL_LATEST;
	for (i = 0; i < sizeof(mcp_server_versions) /
	    sizeof(mcp_server_versions[0]); i++)
		if (strcmp(want, mcp_server_versions[i]) == 0)
			ver = mcp_server_versions[i];
	s->initialized = 1;
	mcp_rpc_result(s, id, json_pack("{s:s, s:{s:{s:b}}, s:{s:s, s:s}, "
	    "s:s}", "protocolVersion", ver, "capabilities", "tools",
	    "listChanged", 0, "serverInfo", "name", "warren", "version",
	    WARREN_VERSION, "instructions", "warren runs tasks with sandboxed "
	    "LLM agents. `run` works on a workspace and leaves its changes in "
	    "a copy-on-write layer: review them with `diff`; `apply` writes "
	    "them only if the user allowed it."));
}

static struct mcp_call *
mcp_server_find(struct mcp_server *s, json_t *id)
{
	size_t	i;

	for (i = 0; i < MCP_CALLS_MAX; i++)
		if (s->calls[i] != NULL && json_equal(s->calls[i]->id, id))
			return s->calls[i];
	return NULL;
}

static void
mcp_server_call_free(struct mcp_call *c)
{
	if (c->is_run)
		queue_runner_free(&c->run);
	else
		mcp_child_free(&c->ch);
	json_decref(c->id);
	json_decref(c->token);
	free(c->schema);
	free(c);
}

/* A new call with id in a free slot, or NULL (all busy). */
static struct mcp_call *
mcp_server_call_new(struct mcp_server *s, json_t *id, json_t *token,
    const struct mcp_tool *t, size_t *slot)
{
	struct mcp_call	*c;

	for (*slot = 0; *slot < MCP_CALLS_MAX; (*slot)++)
		if (s->calls[*slot] == NULL)
			break;
	if (*slot == MCP_CALLS_MAX || (c = calloc(1, sizeof(*c))) == NULL)
		return NULL;
	c->id = json_incref(id);
	c->token = json_incref(token);
	c->tool = t;
	c->ch.pid = c->run.pid = -1;
	c->ch.out = c->ch.err = c->run.out = c->run.err = -1;
	return c;
}

/* tools/call's params: the tool, its arguments, the progress token. */
static int
mcp_server_call_params(json_t *params, const struct mcp_tool **t,
    json_t **args, json_t **token, char *why, size_t whysz)
{
	json_t	*name = json_object_get(params, "name");
	json_t	*meta = json_object_get(params, "_meta");

	*args = json_object_get(params, "arguments");
	*token = meta != NULL ? json_object_get(meta, "progressToken") : NULL;
	if (!json_is_string(name))
		snprintf(why, whysz, "tools/call: \"name\" must be a string");
	else if ((*t = mcp_tool_find(json_string_value(name))) == NULL)
		snprintf(why, whysz, "tools/call: no tool \"%.64s\": "
		    "tools/list lists them", json_string_value(name));
	else if (*args != NULL && !json_is_object(*args))
		snprintf(why, whysz, "tools/call: \"arguments\" must be an "
		    "object");
	else if (meta != NULL && !json_is_object(meta))
		snprintf(why, whysz, "tools/call: \"_meta\" must be an object");
	else if (*token != NULL && !json_is_string(*token) &&
	    !json_is_integer(*token))
		snprintf(why, whysz, "tools/call: \"_meta.progressToken\" must "
		    "be a string or an integer");
	else if (*args != NULL)
		return mcp_tool_check(*t, *args, why, whysz);
	else if ((*args = json_object()) == NULL)
		snprintf(why, whysz, "out of memory");
	else if (mcp_tool_check(*t, *args, why, whysz) == 0)
		return 0;		/* *args: the caller's to free */
	else {
		json_decref(*args);
		*args = NULL;
	}
	return -1;
}

static void
mcp_server_call(struct mcp_server *s, json_t *id, json_t *params)
{
	const struct mcp_tool	*t = NULL;
	struct mcp_call		*c;
	json_t			*args, *token, *empty;
	char			 why[1024];
	size_t			 slot;

	if (mcp_server_call_params(params, &t, &args, &token, why,
	    sizeof(why)) == -1) {
		mcp_rpc_error(s, id, MCP_EPARAMS, "%s", why);
		return;
	}
	/* Arguments left out: an object of our own, freed here. */
	empty = json_object_get(params, "arguments") == NULL ? args : NULL;
	if (mcp_server_find(s, id) != NULL)
		mcp_rpc_error(s, id, MCP_EINVALID, "the id of a call still in "
		    "flight: give each request an id of its own");
	else if ((c = mcp_server_call_new(s, id, token, t, &slot)) == NULL) {
		snprintf(why, sizeof(why), "too many calls in flight (%d, the "
		    "most this server runs at once): wait for one to end",
		    MCP_CALLS_MAX);
		mcp_rpc_result(s, id, json_pack("{s:[{s:s, s:s}], s:b}",
		    "content", "type", "text", "text", why, "isError", 1));
	}
	else if (t->start(s, c, args) == -1)
		mcp_server_call_free(c);
	else
		s->calls[slot] = c;
	json_decref(empty);
}

/* notifications/cancelled: stop that call; it gets no answer. */
static void
mcp_server_cancel(struct mcp_server *s, json_t *params)
{
	struct mcp_call	*c;

	if ((c = mcp_server_find(s, json_object_get(params, "requestId"))) ==
	    NULL)
		return;
	fprintf(stderr, "warren mcp: the client cancelled a %s call\n",
	    c->tool->name);
	c->cancelled = 1;
	if (c->is_run)
		queue_runner_stop(&c->run, QRUN_CANCEL, mcp_now());
	else
		mcp_child_stop(&c->ch, mcp_now());
}

/* One message: a request (id), a notification, or an answer (ignored). */
static void
mcp_server_dispatch(struct mcp_server *s, json_t *req, json_t *id)
{
	const char	*m = json_string_value(json_object_get(req, "method"));
	json_t		*params = json_object_get(req, "params");

	if (m == NULL)
		return;			/* an answer: we ask nothing */
	if (id == NULL) {
		if (strcmp(m, "notifications/cancelled") == 0 && params)
			mcp_server_cancel(s, params);
		return;			/* others need nothing */
	}
	if (strcmp(m, "initialize") == 0)
		mcp_server_initialize(s, id, params);
	else if (strcmp(m, "ping") == 0)
		mcp_rpc_result(s, id, json_object());
	else if (strcmp(m, "tools/list") != 0 && strcmp(m, "tools/call") != 0)
		mcp_rpc_error(s, id, MCP_ENOMETHOD, "no method \"%.64s\" "
		    "(this server offers tools: initialize, tools/list, "
		    "tools/call, ping)", m);
	else if (!s->initialized)
		mcp_rpc_error(s, id, MCP_EINVALID, "%s before initialize: "
		    "initialize first", m);
	else if (strcmp(m, "tools/list") == 0)
		mcp_rpc_result(s, id, mcp_tools_list());
	else if (params == NULL)
		mcp_rpc_error(s, id, MCP_EPARAMS, "tools/call needs params");
	else
		mcp_server_call(s, id, params);
}

/* One stdin line (linebuf_line): a message; NULL, one past MCP_LINE_MAX,
 * is answered with a parse error. */
static void
mcp_server_line(void *arg, char *line, size_t len)
{
	struct mcp_server	*s = arg;
	json_t			*req, *id;
	char			 why[1024];
	int			 code;

	if (line == NULL) {
		mcp_rpc_error(s, NULL, MCP_EPARSE, "a line over %u bytes "
		    "(the most a request may take): not read", MCP_LINE_MAX);
		return;
	}
	if (len == 0 || (len == 1 && line[0] == '\r'))
		return;
	if ((code = mcp_rpc_parse(line, len, &req, &id, why,
	    sizeof(why))) != 0)
		mcp_rpc_error(s, id, code, "%s", why);
	else
		mcp_server_dispatch(s, req, id);
	json_decref(req);
	json_decref(id);
}

static void
mcp_server_input(struct mcp_server *s)
{
	char	buf[65536];
	ssize_t	n;

	if ((n = read(STDIN_FILENO, buf, sizeof(buf))) == -1 &&
	    (errno == EINTR || errno == EAGAIN))
		return;
	if (n > 0) {
		linebuf_put(&s->in, buf, (size_t)n, MCP_LINE_MAX,
		    mcp_server_line, s);
		return;
	}
	if (n == -1)
		fprintf(stderr, "warren mcp: reading stdin: %s\n",
		    strerror(errno));
	if (s->in.len > 0 || s->in.skipping) /* a last line, no newline */
		linebuf_put(&s->in, "\n", 1, MCP_LINE_MAX,
		    mcp_server_line, s);
	s->eof = 1;
}

/* Every call's fds into pfd after stdin's, each pair's call in owner;
 * how many. */
static nfds_t
mcp_server_fds(struct mcp_server *s, struct pollfd *pfd,
    struct mcp_call **owner)
{
	struct mcp_call	*c;
	nfds_t		 n = 0;
	size_t		 i;

	pfd[n++] = (struct pollfd){ s->eof ? -1 : STDIN_FILENO, POLLIN, 0 };
	for (i = 0; i < MCP_CALLS_MAX; i++) {
		if ((c = s->calls[i]) == NULL)
			continue;
		owner[(n - 1) / 2] = c;
		pfd[n++] = (struct pollfd){ c->is_run ? c->run.out : c->ch.out,
		    POLLIN, 0 };
		pfd[n++] = (struct pollfd){ c->is_run ? c->run.err : c->ch.err,
		    POLLIN, 0 };
	}
	return n;
}

/* Read what the calls' children wrote (pfd as mcp_server_fds made it:
 * a call started since has no entry). */
static void
mcp_server_read(const struct pollfd *pfd, nfds_t n, struct mcp_call **owner)
{
	struct mcp_call	*c;
	nfds_t		 k;

	for (k = 1; k < n; k++) {
		c = owner[(k - 1) / 2];
		if (pfd[k].fd == -1 || pfd[k].revents == 0)
			continue;
		if (c->is_run)
			queue_runner_read(&c->run, pfd[k].fd);
		else
			mcp_child_read(&c->ch, pfd[k].fd);
	}
}

/* Tick each call's clock, stop it when stdin ended, answer it when it
 * has ended. */
static void
mcp_server_calls(struct mcp_server *s)
{
	struct mcp_call	*c;
	uint64_t	 now = mcp_now();
	size_t		 i;
	int		 ended;

	for (i = 0; i < MCP_CALLS_MAX; i++) {
		if ((c = s->calls[i]) == NULL)
			continue;
		/* The client is gone: its runs stop (the others end soon
		 * by themselves, answered if stdout still takes it). */
		if ((s->eof || s->out_failed) && c->is_run && !c->cancelled) {
			c->cancelled = 1;
			queue_runner_stop(&c->run, QRUN_INTERRUPT, now);
		}
		if (c->is_run) {
			mcp_run_progress(s, c);
			queue_runner_tick(&c->run, now);
			ended = queue_runner_reap(&c->run);
		} else {
			mcp_child_tick(&c->ch, now);
			ended = mcp_child_reap(&c->ch);
		}
		if (!ended)
			continue;
		if (!c->cancelled)
			c->tool->done(s, c);
		s->calls[i] = NULL;
		mcp_server_call_free(c);
	}
}

static int
mcp_server_busy(const struct mcp_server *s)
{
	size_t	i;

	for (i = 0; i < MCP_CALLS_MAX; i++)
		if (s->calls[i] != NULL)
			return 1;
	return 0;
}

int
mcp_serve(struct mcp_server *s)
{
	struct pollfd	 pfd[1 + 2 * MCP_CALLS_MAX];
	struct mcp_call	*owner[1 + MCP_CALLS_MAX];
	nfds_t		 n;
	int		 busy;

	signal(SIGPIPE, SIG_IGN);
	fprintf(stderr, "warren mcp: serving MCP on stdin/stdout (%zu "
	    "root%s, apply %s)\n", s->nroots, s->nroots == 1 ? "" : "s",
	    s->allow_apply ? "allowed" : "refused");
	for (;;) {
		busy = mcp_server_busy(s);
		if ((s->eof || s->out_failed) && !busy)
			break;
		if (s->out_failed)
			s->eof = 1;
		n = mcp_server_fds(s, pfd, owner);
		if (poll(pfd, n, busy ? 100 : -1) == -1 && errno != EINTR) {
			fprintf(stderr, "warren mcp: poll: %s\n",
			    strerror(errno));
			return WARREN_EXIT_INTERNAL;
		}
		mcp_server_read(pfd, n, owner);
		if (pfd[0].fd != -1 && pfd[0].revents != 0)
			mcp_server_input(s);
		mcp_server_calls(s);
	}
	return s->out_failed ? WARREN_EXIT_FAIL : WARREN_EXIT_OK;
}

/*
 * The decoders of what a worker sends (hello, llm, spawn, mcp, event,
 * checkpoint, done, http): the supervisor reads these from a peer it does
 * not trust, so each is bounded and checked here before the supervisor's
 * policy sees it (supervisor/proc_msg.c). Separate from what the
 * supervisor sends (decode_from_supervisor.c) and the dispatch on "type"
 * (decode.c); see decode.c for how every decoder reads its map.
 */
#include <stdlib.h>
#include <string.h>

#include "common/log.h"
#include "ipc/codec.h"
#include "ipc/decode_int.h"
#include "ipc/ipc.h"

static void
decode_hello_member(struct mp_reader *r, int key, void *arg,
    const char *what)
{
	struct ipc_hello	*h = arg;
	uint32_t		 j, cnt;

	(void)what;
	switch (key) {
	case 0:
		mp_get_u32(r, &h->version, "hello.version");
		break;
	case 1:
		mp_get_u32(r, &h->pid, "hello.pid");
		break;
	case 2:
		if (mp_get_array(r, &cnt, IPC_LAYERS_MAX,
		    "hello.layers") == -1)
			break;
		for (j = 0; j < cnt && !r->failed; j++)
			if (wire_get_tok(r, &h->layers[j],
			    IPC_LAYER_MAX, "hello.layers") == 0)
				h->nlayers = j + 1;
		mp_leave(r);
		break;
	case 3:
		mp_get_bool(r, &h->weaker, "hello.weaker");
		break;
	}
}

int
decode_hello(struct mp_reader *r, uint32_t n, struct ipc_hello *h)
{
	static const char *const keys[] = { "version", "pid", "layers",
	    "weaker" };
	static const struct wire_map map = {
		keys, WIRE_KEYS(keys), 0xf, decode_hello_member, NULL
	};

	return wire_members(r, n, &map, h, "hello");
}

static int
decode_purpose(struct mp_reader *r, enum ipc_purpose *purpose)
{
	const char	*s;
	size_t		 len;

	if (mp_get_str(r, &s, &len, IPC_NAME_MAX, "llm.purpose") == -1)
		return -1;
	if (len == 4 && memcmp(s, "turn", 4) == 0)
		*purpose = IPC_PURPOSE_TURN;
	else if (len == 7 && memcmp(s, "summary", 7) == 0)
		*purpose = IPC_PURPOSE_SUMMARY;
	else
		return mp_fail(r, "llm.purpose: expected \"turn\" or "
		    "\"summary\"");
	return 0;
}

static void
decode_llm_member(struct mp_reader *r, int key, void *arg,
    const char *what)
{
	struct ipc_llm	*l = arg;

	(void)what;
	switch (key) {
	case 0:
		mp_get_u32(r, &l->id, "llm.id");
		break;
	case 1:
		mp_get_u32(r, &l->step, "llm.step");
		break;
	case 2:
		decode_purpose(r, &l->purpose);
		break;
	case 3:
		wire_get_msgs(r, &l->messages, "llm.messages");
		break;
	case 4:
		wire_get_tools(r, &l->tools, &l->ntools, "llm.tools");
		break;
	}
}

int
decode_llm(struct mp_reader *r, uint32_t n, struct ipc_llm *l)
{
	static const char *const keys[] = { "id", "step", "purpose",
	    "messages", "tools" };
	static const struct wire_map map = {
		keys, WIRE_KEYS(keys), 0x1f, decode_llm_member, NULL
	};

	return wire_members(r, n, &map, l, "llm");
}

static void
decode_mcp_member(struct mp_reader *r, int key, void *arg, const char *what)
{
	struct ipc_mcp	*c = arg;

	(void)what;
	switch (key) {
	case 0:
		mp_get_u32(r, &c->id, "mcp.id");
		break;
	case 1:
		wire_get_tok(r, &c->server, IPC_NAME_MAX, "mcp.server");
		break;
	case 2:
		wire_get_tok(r, &c->tool, IPC_NAME_MAX, "mcp.tool");
		break;
	case 3:
		mp_get_strdup(r, &c->args, IPC_STR_MAX, "mcp.args");
		break;
	}
}

int
decode_mcp(struct mp_reader *r, uint32_t n, struct ipc_mcp *c)
{
	static const char *const keys[] = { "id", "server", "tool", "args" };
	static const struct wire_map map = {
		keys, WIRE_KEYS(keys), 0xf, decode_mcp_member, NULL
	};

	return wire_members(r, n, &map, c, "mcp");
}

static void
decode_spawn_member(struct mp_reader *r, int key, void *arg,
    const char *what)
{
	struct ipc_spawn	*s = arg;

	(void)what;
	switch (key) {
	case 0:
		mp_get_u32(r, &s->id, "spawn.id");
		break;
	case 1:
		wire_get_tok(r, &s->profile, IPC_NAME_MAX,
		    "spawn.profile");
		break;
	case 2:
		mp_get_strdup(r, &s->task, IPC_STR_MAX, "spawn.task");
		break;
	case 3:
		mp_get_bool(r, &s->inherit_context,
		    "spawn.inherit_context");
		break;
	case 4:
		mp_get_strdup(r, &s->call_id, IPC_CALLSTR_MAX,
		    "spawn.call_id");
		break;
	case 5:
		s->filtered = 1;
		wire_get_strs(r, &s->tools, &s->ntools, IPC_NAME_MAX,
		    wire_get_tok, "spawn.tool_filter");
		break;
	}
}

int
decode_spawn(struct mp_reader *r, uint32_t n, struct ipc_spawn *s)
{
	static const char *const keys[] = { "id", "profile", "task",
	    "inherit_context", "call_id", "tool_filter" };
	static const struct wire_map map = {
		keys, WIRE_KEYS(keys), 0x1f, decode_spawn_member, NULL
	};

	return wire_members(r, n, &map, s, "spawn");
}

static void
decode_event_member(struct mp_reader *r, int key, void *arg,
    const char *what)
{
	struct ipc_event	*v = arg;

	(void)what;
	switch (key) {
	case 0:
		wire_get_tok(r, &v->kind, IPC_NAME_MAX, "event.kind");
		break;
	case 1:
		mp_get_strdup(r, &v->text, IPC_EVENT_MAX, "event.text");
		break;
	case 2:
		wire_get_tok(r, &v->tool, IPC_NAME_MAX, "event.tool");
		break;
	case 3:
		if (mp_get_u32(r, &v->level, "event.level") == 0) {
			v->has_level = 1;
			if (v->level > LOG_LEVEL_DEBUG)
				mp_fail(r, "event.level: %u is not a "
				    "log level (0 to %d)", v->level,
				    LOG_LEVEL_DEBUG);
		}
		break;
	}
}

int
decode_event(struct mp_reader *r, uint32_t n, struct ipc_event *v)
{
	static const char *const keys[] = { "kind", "text", "tool", "level" };
	static const struct wire_map map = {
		keys, WIRE_KEYS(keys), 0x3, decode_event_member, NULL
	};

	if (wire_members(r, n, &map, v, "event") == -1)
		return -1;
	/* Log records are smaller than other events (LOG_MAX_RECORD). */
	if (strcmp(v->kind, "log") == 0 && strlen(v->text) > IPC_LOG_MAX)
		return mp_fail(r, "event.text: log record of %zu bytes, at "
		    "most %d allowed", strlen(v->text), IPC_LOG_MAX);
	return 0;
}

static void
decode_checkpoint_member(struct mp_reader *r, int key, void *arg,
    const char *what)
{
	struct ipc_checkpoint	*c = arg;

	(void)what;
	switch (key) {
	case 0:
		mp_get_u32(r, &c->seq, "checkpoint.seq");
		break;
	case 1:
		wire_get_msgs(r, &c->messages, "checkpoint.messages");
		break;
	}
}

int
decode_checkpoint(struct mp_reader *r, uint32_t n, struct ipc_checkpoint *c)
{
	static const char *const keys[] = { "seq", "messages" };
	static const struct wire_map map = {
		keys, WIRE_KEYS(keys), 0x3, decode_checkpoint_member, NULL
	};

	return wire_members(r, n, &map, c, "checkpoint");
}

static int
decode_status(struct mp_reader *r, enum ipc_status *status)
{
	char		 name[16];
	const char	*s;
	size_t		 len;

	if (mp_get_str(r, &s, &len, sizeof(name) - 1, "done.status") == -1)
		return -1;
	memcpy(name, s, len);
	name[len] = '\0';
	if (ipc_status_parse(name, status) == -1)
		return mp_fail(r, "done.status: expected complete, fail, "
		    "auto_complete or limit");
	return 0;
}

static void
decode_done_member(struct mp_reader *r, int key, void *arg,
    const char *what)
{
	struct ipc_done	*d = arg;

	(void)what;
	switch (key) {
	case 0:
		decode_status(r, &d->status);
		break;
	case 1:
		mp_get_strdup(r, &d->result, IPC_STR_MAX, "done.result");
		break;
	case 2:
		wire_get_usage(r, &d->usage, "done.usage");
		break;
	case 3:
		mp_get_u32(r, &d->iterations, "done.iterations");
		break;
	case 4:
		mp_get_strdup(r, &d->reason, IPC_ERRMSG_MAX,
		    "done.reason");
		break;
	}
}

int
decode_done(struct mp_reader *r, uint32_t n, struct ipc_done *d)
{
	static const char *const keys[] = { "status", "result", "usage",
	    "iterations", "reason" };
	static const struct wire_map map = {
		keys, WIRE_KEYS(keys), 0xf, decode_done_member, NULL
	};

	return wire_members(r, n, &map, d, "done");
}

static int
decode_http_headers(struct mp_reader *r, struct ipc_http *h)
{
	const char	*s;
	size_t		 len;
	uint32_t	 n, i;

	if (mp_get_array(r, &n, IPC_HTTP_HEADERS_MAX, "http.headers") == -1)
		return -1;
	for (i = 0; i < n && !r->failed; i++) {
		if (mp_get_str(r, &s, &len, IPC_HTTP_HEADER_MAX,
		    "http.headers") == -1)
			break;
		if (!ipc_http_header_ok(s, len))
			return mp_fail(r, "http.headers: not a header a "
			    "request may carry (content-type, accept, "
			    "anthropic-version, anthropic-beta)");
		if ((h->headers[i] = strndup(s, len)) == NULL)
			return mp_fail(r, "http.headers: out of memory");
		h->nheaders = i + 1;
	}
	mp_leave(r);
	return r->failed ? -1 : 0;
}

static void
decode_http_member(struct mp_reader *r, int key, void *arg,
    const char *what)
{
	struct ipc_http	*h = arg;

	(void)what;
	switch (key) {
	case 0:
		mp_get_u32(r, &h->id, "http.id");
		break;
	case 1:
		if (wire_get_tok(r, &h->wire, IPC_NAME_MAX, "http.wire") == 0 &&
		    !ipc_http_wire_ok(h->wire))
			mp_fail(r, "http.wire: expected anthropic, responses "
			    "or openai");
		break;
	case 2:
		if (wire_get_tok(r, &h->method, IPC_NAME_MAX,
		    "http.method") == 0 && strcmp(h->method, "POST") != 0)
			mp_fail(r, "http.method: only POST is passed through");
		break;
	case 3:
		if (mp_get_strdup(r, &h->path, IPC_HTTP_PATH_MAX,
		    "http.path") == 0 && h->path[0] != '/')
			mp_fail(r, "http.path: does not start with /");
		break;
	case 4:
		decode_http_headers(r, h);
		break;
	case 5:
		mp_get_strdup(r, &h->body, IPC_STR_MAX, "http.body");
		break;
	}
}

/* The path is one of the wire's: the supervisor sends nothing else. */
static int
decode_http_check(struct mp_reader *r, uint32_t seen, void *arg)
{
	const struct ipc_http	*h = arg;

	if ((seen & 0xa) == 0xa && !ipc_http_path_ok(h->wire, h->path))
		return mp_fail(r, "http.path: not a path of wire %s",
		    h->wire);
	return 0;
}

int
decode_http(struct mp_reader *r, uint32_t n, struct ipc_http *h)
{
	static const char *const keys[] = { "id", "wire", "method", "path",
	    "headers", "body" };
	static const struct wire_map map = {
		keys, WIRE_KEYS(keys), 0x3f, decode_http_member,
		decode_http_check
	};

	return wire_members(r, n, &map, h, "http");
}

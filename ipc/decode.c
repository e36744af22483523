/*
 * Typed decoders, one per message, and ipc_msg_free().
 *
 * Each decoder walks the rest of the top-level map: a key from its own
 * table (unknown or repeated keys fail in mp_get_key), the value with a
 * typed, bounded getter, then wire_required() for what was missing. Values
 * are copied once into the struct that owns them; on any failure the whole
 * message is freed and zeroed, so a caller never sees half a message.
 */
#include <stdlib.h>
#include <string.h>

#include "common/log.h"
#include "ipc/ipc.h"
#include "ipc/codec.h"

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

static int
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
decode_tools(struct mp_reader *r, struct ipc_profile *p)
{
	uint32_t	n, i;
	const char	*what = "start.profile.tools";

	if (mp_get_array(r, &n, IPC_TOOLS_MAX, what) == -1)
		return -1;
	if (n > 0) {
		if ((p->tools = calloc(n, sizeof(*p->tools))) == NULL)
			return mp_fail(r, "%s: out of memory", what);
		p->ntools = n;
	}
	for (i = 0; i < n && !r->failed; i++)
		wire_get_tok(r, &p->tools[i], IPC_NAME_MAX, what);
	mp_leave(r);
	return r->failed ? -1 : 0;
}

static void
decode_profile_member(struct mp_reader *r, int key, void *arg,
    const char *what)
{
	struct ipc_profile	*p = arg;

	(void)what;
	switch (key) {
	case 0:
		wire_get_tok(r, &p->name, IPC_NAME_MAX,
		    "start.profile.name");
		break;
	case 1:
		mp_get_strdup(r, &p->prompt, IPC_STR_MAX,
		    "start.profile.prompt");
		break;
	case 2:
		decode_tools(r, p);
		break;
	}
}

static int
decode_profile(struct mp_reader *r, struct ipc_profile *p)
{
	static const char *const keys[] = { "name", "prompt", "tools" };
	static const struct wire_map map = {
		keys, WIRE_KEYS(keys), 0x7, decode_profile_member, NULL
	};

	return wire_get_map(r, &map, p, "start.profile");
}

static void
decode_limits_member(struct mp_reader *r, int key, void *arg,
    const char *what)
{
	struct ipc_limits	*l = arg;

	switch (key) {
	case 0:
		mp_get_u32(r, &l->max_iterations, what);
		break;
	case 1:
		mp_get_u64(r, &l->timeout_ms, what);
		break;
	case 2:
		mp_get_u32(r, &l->context_tokens, what);
		break;
	case 3:
		mp_get_u32(r, &l->loop_threshold, what);
		break;
	case 4:
		mp_get_u32(r, &l->max_output_bytes, what);
		break;
	}
}

static int
decode_limits(struct mp_reader *r, struct ipc_limits *l)
{
	static const char *const keys[] = { "max_iterations", "timeout_ms",
	    "context_tokens", "loop_threshold", "max_output_bytes" };
	static const struct wire_map map = {
		keys, WIRE_KEYS(keys), 0x1f, decode_limits_member, NULL
	};

	return wire_get_map(r, &map, l, "start.limits");
}

/* An agent path: digits and dots, checked before it is copied. */
static int
decode_path(struct mp_reader *r, char **path, const char *what)
{
	const char	*s;
	size_t		 len;

	if (mp_get_str(r, &s, &len, IPC_PATH_MAX, what) == -1)
		return -1;
	if (!ipc_path_valid(s, len))
		return mp_fail(r, "%s: not an agent path (\"0\", \"0.2\", "
		    "\"0.2.1\")", what);
	if ((*path = strndup(s, len)) == NULL)
		return mp_fail(r, "%s: out of memory", what);
	return 0;
}

static int
decode_workspace(struct mp_reader *r, char **ws)
{
	if (mp_get_strdup(r, ws, IPC_WORKSPACE_MAX, "start.workspace") == -1)
		return -1;
	if ((*ws)[0] != '/')
		return mp_fail(r, "start.workspace: not an absolute path");
	return 0;
}

/* An array of strings of at most max bytes. */
static int
decode_strs(struct mp_reader *r, char ***v, size_t *nv, size_t max,
    const char *what)
{
	uint32_t	n, i;

	if (*v != NULL)
		return mp_fail(r, "%s: given twice", what);
	if (mp_get_array(r, &n, IPC_TOOLS_MAX, what) == -1)
		return -1;
	if (n > 0) {
		if ((*v = calloc(n, sizeof(**v))) == NULL)
			return mp_fail(r, "%s: out of memory", what);
		*nv = n;
	}
	for (i = 0; i < n && !r->failed; i++)
		mp_get_strdup(r, &(*v)[i], max, what);
	mp_leave(r);
	return r->failed ? -1 : 0;
}

static int
decode_mcp_tools(struct mp_reader *r, struct ipc_start *s)
{
	uint32_t	n, i;

	if (mp_get_array(r, &n, IPC_TOOLS_MAX, "start.mcp_tools") == -1)
		return -1;
	if (n > 0) {
		if ((s->mcp_tools = calloc(n, sizeof(*s->mcp_tools))) == NULL)
			return mp_fail(r, "start.mcp_tools: out of memory");
		s->nmcp_tools = n;
	}
	for (i = 0; i < n && !r->failed; i++)
		wire_get_tool(r, &s->mcp_tools[i], "start.mcp_tools");
	return r->failed ? -1 : 0;
}

static void
decode_start_member(struct mp_reader *r, int key, void *arg,
    const char *what)
{
	struct ipc_start	*s = arg;

	(void)what;
	switch (key) {
	case 0:
		decode_path(r, &s->path, "start.path");
		break;
	case 1:
		mp_get_u32(r, &s->depth, "start.depth");
		break;
	case 2:
		decode_profile(r, &s->profile);
		break;
	case 3:
		mp_get_strdup(r, &s->task, IPC_STR_MAX, "start.task");
		break;
	case 4:
		wire_get_msgs(r, &s->context, "start.context");
		break;
	case 5:
		decode_limits(r, &s->limits);
		break;
	case 6:
		decode_workspace(r, &s->workspace);
		break;
	case 7:
		wire_get_msgs(r, &s->history, "start.history");
		break;
	case 8:
		decode_strs(r, &s->delegates, &s->ndelegates,
		    IPC_NAME_MAX, "start.delegates");
		break;
	case 9:
		decode_strs(r, &s->delegate_descs, &s->ndescs,
		    IPC_CALLSTR_MAX, "start.delegate_descs");
		break;
	case 10:
		mp_get_strdup(r, &s->schema, IPC_STR_MAX,
		    "start.schema");
		break;
	case 11:
		decode_mcp_tools(r, s);
		break;
	}
}

/* delegates and delegate_descs: both or neither, one description a name. */
static int
decode_start_check(struct mp_reader *r, uint32_t seen, void *arg)
{
	const struct ipc_start	*s = arg;

	if (((seen >> 8) & 3) != 0 && (((seen >> 8) & 3) != 3 ||
	    s->ndescs != s->ndelegates))
		return mp_fail(r, "start.delegates: not one description a "
		    "name");
	return 0;
}

static int
decode_start(struct mp_reader *r, uint32_t n, struct ipc_start *s)
{
	static const char *const keys[] = { "path", "depth", "profile",
	    "task", "context", "limits", "workspace", "history", "delegates",
	    "delegate_descs", "schema", "mcp_tools" };
	static const struct wire_map map = {
		keys, WIRE_KEYS(keys), 0xff, decode_start_member,
		decode_start_check
	};

	return wire_members(r, n, &map, s, "start");
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

static int
decode_llm_tools(struct mp_reader *r, struct ipc_llm *l)
{
	uint32_t	n, i;

	if (mp_get_array(r, &n, IPC_TOOLS_MAX, "llm.tools") == -1)
		return -1;
	if (n > 0) {
		if ((l->tools = calloc(n, sizeof(*l->tools))) == NULL)
			return mp_fail(r, "llm.tools: out of memory");
		l->ntools = n;
	}
	for (i = 0; i < n && !r->failed; i++)
		wire_get_tool(r, &l->tools[i], "llm.tools");
	mp_leave(r);
	return r->failed ? -1 : 0;
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
		decode_llm_tools(r, l);
		break;
	}
}

static int
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
decode_llm_ok_member(struct mp_reader *r, int key, void *arg,
    const char *what)
{
	struct ipc_llm_ok	*o = arg;

	(void)what;
	switch (key) {
	case 0:
		mp_get_u32(r, &o->id, "llm_ok.id");
		break;
	case 1:
		wire_get_reply(r, &o->reply, "llm_ok.reply");
		break;
	}
}

static int
decode_llm_ok(struct mp_reader *r, uint32_t n, struct ipc_llm_ok *o)
{
	static const char *const keys[] = { "id", "reply" };
	static const struct wire_map map = {
		keys, WIRE_KEYS(keys), 0x3, decode_llm_ok_member, NULL
	};

	return wire_members(r, n, &map, o, "llm_ok");
}

/* llm_err and spawn_err share their shape. */
static void
decode_error_member(struct mp_reader *r, int key, void *arg,
    const char *what)
{
	struct ipc_error	*x = arg;

	switch (key) {
	case 0:
		mp_get_u32(r, &x->id, what);
		break;
	case 1:
		wire_get_tok(r, &x->code, IPC_NAME_MAX, what);
		break;
	case 2:
		mp_get_strdup(r, &x->message, IPC_ERRMSG_MAX, what);
		break;
	}
}

static int
decode_error(struct mp_reader *r, uint32_t n, struct ipc_error *x,
    const char *what)
{
	static const char *const keys[] = { "id", "code", "message" };
	static const struct wire_map map = {
		keys, WIRE_KEYS(keys), 0x7, decode_error_member, NULL
	};

	return wire_members(r, n, &map, x, what);
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

static int
decode_mcp(struct mp_reader *r, uint32_t n, struct ipc_mcp *c)
{
	static const char *const keys[] = { "id", "server", "tool", "args" };
	static const struct wire_map map = {
		keys, WIRE_KEYS(keys), 0xf, decode_mcp_member, NULL
	};

	return wire_members(r, n, &map, c, "mcp");
}

static void
decode_mcp_ok_member(struct mp_reader *r, int key, void *arg,
    const char *what)
{
	struct ipc_mcp_ok	*o = arg;

	(void)what;
	switch (key) {
	case 0:
		mp_get_u32(r, &o->id, "mcp_ok.id");
		break;
	case 1:
		mp_get_strdup(r, &o->text, IPC_STR_MAX, "mcp_ok.text");
		break;
	case 2:
		mp_get_bool(r, &o->is_error, "mcp_ok.is_error");
		break;
	}
}

static int
decode_mcp_ok(struct mp_reader *r, uint32_t n, struct ipc_mcp_ok *o)
{
	static const char *const keys[] = { "id", "text", "is_error" };
	static const struct wire_map map = {
		keys, WIRE_KEYS(keys), 0x7, decode_mcp_ok_member, NULL
	};

	return wire_members(r, n, &map, o, "mcp_ok");
}

static int
decode_spawn_filter(struct mp_reader *r, struct ipc_spawn *s)
{
	uint32_t	n, i;
	const char	*what = "spawn.tool_filter";

	s->filtered = 1;
	if (mp_get_array(r, &n, IPC_TOOLS_MAX, what) == -1)
		return -1;
	if (n > 0) {
		if ((s->tools = calloc(n, sizeof(*s->tools))) == NULL)
			return mp_fail(r, "%s: out of memory", what);
		s->ntools = n;
	}
	for (i = 0; i < n && !r->failed; i++)
		wire_get_tok(r, &s->tools[i], IPC_NAME_MAX, what);
	mp_leave(r);
	return r->failed ? -1 : 0;
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
		decode_spawn_filter(r, s);
		break;
	}
}

static int
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
decode_spawn_ok_member(struct mp_reader *r, int key, void *arg,
    const char *what)
{
	struct ipc_spawn_ok	*s = arg;

	(void)what;
	switch (key) {
	case 0:
		mp_get_u32(r, &s->id, "spawn_ok.id");
		break;
	case 1:
		decode_path(r, &s->path, "spawn_ok.path");
		break;
	case 2:
		mp_get_strdup(r, &s->result, IPC_STR_MAX,
		    "spawn_ok.result");
		break;
	case 3:
		wire_get_usage(r, &s->usage, "spawn_ok.usage");
		break;
	}
}

static int
decode_spawn_ok(struct mp_reader *r, uint32_t n, struct ipc_spawn_ok *s)
{
	static const char *const keys[] = { "id", "path", "result", "usage" };
	static const struct wire_map map = {
		keys, WIRE_KEYS(keys), 0xf, decode_spawn_ok_member, NULL
	};

	return wire_members(r, n, &map, s, "spawn_ok");
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

static int
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

static int
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

static int
decode_done(struct mp_reader *r, uint32_t n, struct ipc_done *d)
{
	static const char *const keys[] = { "status", "result", "usage",
	    "iterations", "reason" };
	static const struct wire_map map = {
		keys, WIRE_KEYS(keys), 0xf, decode_done_member, NULL
	};

	return wire_members(r, n, &map, d, "done");
}

static void
decode_cancel_member(struct mp_reader *r, int key, void *arg,
    const char *what)
{
	struct ipc_cancel	*c = arg;

	(void)what;
	switch (key) {
	case 0:
		mp_get_strdup(r, &c->reason, IPC_ERRMSG_MAX,
		    "cancel.reason");
		break;
	}
}

static int
decode_cancel(struct mp_reader *r, uint32_t n, struct ipc_cancel *c)
{
	static const char *const keys[] = { "reason" };
	static const struct wire_map map = {
		keys, WIRE_KEYS(keys), 0x1, decode_cancel_member, NULL
	};

	return wire_members(r, n, &map, c, "cancel");
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

static int
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

static void
decode_http_ok_member(struct mp_reader *r, int key, void *arg,
    const char *what)
{
	struct ipc_http_ok	*o = arg;

	(void)what;
	switch (key) {
	case 0:
		mp_get_u32(r, &o->id, "http_ok.id");
		break;
	case 1:
		if (mp_get_u32(r, &o->status, "http_ok.status") == 0 &&
		    (o->status < 100 || o->status > 599))
			mp_fail(r, "http_ok.status: %u is not an HTTP status",
			    o->status);
		break;
	case 2:
		mp_get_strdup(r, &o->content_type, IPC_HTTP_TYPE_MAX,
		    "http_ok.content_type");
		break;
	case 3:
		mp_get_strdup(r, &o->body, IPC_STR_MAX, "http_ok.body");
		break;
	case 4:
		/* Only true is ever sent: the encoder leaves false out, so
		 * one message has one encoding. */
		if (mp_get_bool(r, &o->more, "http_ok.more") == 0 && !o->more)
			mp_fail(r, "http_ok.more: false is left out");
		break;
	}
}

static int
decode_http_ok(struct mp_reader *r, uint32_t n, struct ipc_http_ok *o)
{
	static const char *const keys[] = { "id", "status", "content_type",
	    "body", "more" };
	static const struct wire_map map = {
		keys, WIRE_KEYS(keys), 0xf, decode_http_ok_member, NULL
	};

	return wire_members(r, n, &map, o, "http_ok");
}

static int
decode_body(struct mp_reader *r, uint32_t n, struct ipc_msg *m)
{
	switch (m->type) {
	case IPC_HELLO:		return decode_hello(r, n, &m->u.hello);
	case IPC_START:		return decode_start(r, n, &m->u.start);
	case IPC_LLM:		return decode_llm(r, n, &m->u.llm);
	case IPC_LLM_OK:	return decode_llm_ok(r, n, &m->u.llm_ok);
	case IPC_LLM_ERR:
		return decode_error(r, n, &m->u.llm_err, "llm_err");
	case IPC_SPAWN:		return decode_spawn(r, n, &m->u.spawn);
	case IPC_SPAWN_OK:	return decode_spawn_ok(r, n, &m->u.spawn_ok);
	case IPC_SPAWN_ERR:
		return decode_error(r, n, &m->u.spawn_err, "spawn_err");
	case IPC_MCP:		return decode_mcp(r, n, &m->u.mcp);
	case IPC_MCP_OK:	return decode_mcp_ok(r, n, &m->u.mcp_ok);
	case IPC_MCP_ERR:
		return decode_error(r, n, &m->u.mcp_err, "mcp_err");
	case IPC_EVENT:		return decode_event(r, n, &m->u.event);
	case IPC_CHECKPOINT:
		return decode_checkpoint(r, n, &m->u.checkpoint);
	case IPC_DONE:		return decode_done(r, n, &m->u.done);
	case IPC_CANCEL:	return decode_cancel(r, n, &m->u.cancel);
	case IPC_HTTP:		return decode_http(r, n, &m->u.http);
	case IPC_HTTP_OK:	return decode_http_ok(r, n, &m->u.http_ok);
	case IPC_HTTP_ERR:
		return decode_error(r, n, &m->u.http_err, "http_err");
	case IPC_NONE:
		break;
	}
	return -1;
}

/* "type" first, so the rest of the map can be read with its own table. */
static int
decode_type(struct mp_reader *r, struct ipc_msg *m)
{
	static const char *const keys[] = { "type" };
	uint32_t	seen = 0, t;

	if (mp_get_key(r, keys, 1, &seen, "message (first key must be "
	    "\"type\")") == -1)
		return -1;
	if (mp_get_u32(r, &t, "type") == -1)
		return -1;
	if (strcmp(ipc_type_name((enum ipc_type)t), "unknown") == 0)
		return mp_fail(r, "unknown message type %u", t);
	m->type = (enum ipc_type)t;
	return 0;
}

int
ipc_msg_decode(const void *data, size_t len, struct ipc_msg *m, char *err,
    size_t errsz)
{
	struct mp_reader	r;
	uint32_t		n;

	memset(m, 0, sizeof(*m));
	mp_reader_init(&r, data, len, err, errsz);
	if (mp_get_map(&r, &n, 16, "message") == -1)
		goto fail;
	if (n == 0) {
		mp_fail(&r, "message: empty map, no \"type\"");
		goto fail;
	}
	if (decode_type(&r, m) == -1 || decode_body(&r, n - 1, m) == -1)
		goto fail;
	mp_leave(&r);
	if (mp_end(&r) == -1)
		goto fail;
	return 0;
fail:
	ipc_msg_free(m);
	return -1;
}

static void
decode_free_error(struct ipc_error *x)
{
	free(x->code);
	free(x->message);
}

void
ipc_msg_free(struct ipc_msg *m)
{
	size_t	i;

	switch (m->type) {
	case IPC_HELLO:
		for (i = 0; i < m->u.hello.nlayers; i++)
			free(m->u.hello.layers[i]);
		break;
	case IPC_START:
		free(m->u.start.path);
		free(m->u.start.profile.name);
		free(m->u.start.profile.prompt);
		for (i = 0; i < m->u.start.profile.ntools; i++)
			free(m->u.start.profile.tools[i]);
		free(m->u.start.profile.tools);
		free(m->u.start.task);
		msg_list_free(&m->u.start.context);
		msg_list_free(&m->u.start.history);
		free(m->u.start.workspace);
		for (i = 0; i < m->u.start.ndelegates; i++)
			free(m->u.start.delegates[i]);
		for (i = 0; i < m->u.start.ndescs; i++)
			free(m->u.start.delegate_descs[i]);
		free(m->u.start.delegates);
		free(m->u.start.delegate_descs);
		free(m->u.start.schema);
		for (i = 0; i < m->u.start.nmcp_tools; i++)
			msg_tool_free(&m->u.start.mcp_tools[i]);
		free(m->u.start.mcp_tools);
		break;
	case IPC_LLM:
		msg_list_free(&m->u.llm.messages);
		for (i = 0; i < m->u.llm.ntools; i++)
			msg_tool_free(&m->u.llm.tools[i]);
		free(m->u.llm.tools);
		break;
	case IPC_LLM_OK:
		msg_reply_free(&m->u.llm_ok.reply);
		break;
	case IPC_LLM_ERR:
		decode_free_error(&m->u.llm_err);
		break;
	case IPC_SPAWN:
		free(m->u.spawn.profile);
		free(m->u.spawn.task);
		free(m->u.spawn.call_id);
		for (i = 0; i < m->u.spawn.ntools; i++)
			free(m->u.spawn.tools[i]);
		free(m->u.spawn.tools);
		break;
	case IPC_SPAWN_OK:
		free(m->u.spawn_ok.path);
		free(m->u.spawn_ok.result);
		break;
	case IPC_SPAWN_ERR:
		decode_free_error(&m->u.spawn_err);
		break;
	case IPC_MCP:
		free(m->u.mcp.server);
		free(m->u.mcp.tool);
		free(m->u.mcp.args);
		break;
	case IPC_MCP_OK:
		free(m->u.mcp_ok.text);
		break;
	case IPC_MCP_ERR:
		decode_free_error(&m->u.mcp_err);
		break;
	case IPC_EVENT:
		free(m->u.event.kind);
		free(m->u.event.text);
		free(m->u.event.tool);
		break;
	case IPC_CHECKPOINT:
		msg_list_free(&m->u.checkpoint.messages);
		break;
	case IPC_DONE:
		free(m->u.done.result);
		free(m->u.done.reason);
		break;
	case IPC_CANCEL:
		free(m->u.cancel.reason);
		break;
	case IPC_HTTP:
		free(m->u.http.wire);
		free(m->u.http.method);
		free(m->u.http.path);
		for (i = 0; i < m->u.http.nheaders; i++)
			free(m->u.http.headers[i]);
		free(m->u.http.body);
		break;
	case IPC_HTTP_OK:
		free(m->u.http_ok.content_type);
		free(m->u.http_ok.body);
		break;
	case IPC_HTTP_ERR:
		decode_free_error(&m->u.http_err);
		break;
	case IPC_NONE:
		break;
	}
	memset(m, 0, sizeof(*m));
}

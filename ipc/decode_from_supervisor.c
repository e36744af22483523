/*
 * The decoders of what the supervisor sends (start, llm_ok, spawn_ok,
 * mcp_ok, http_ok, the four errors, cancel): a worker reads these, start
 * the largest (its profile, limits, workspace, delegates, MCP tools).
 * Separate from what a worker sends (decode_from_worker.c) and the
 * dispatch on "type" (decode.c); see decode.c for how every decoder reads
 * its map.
 */
#include <stdlib.h>
#include <string.h>

#include "ipc/codec.h"
#include "ipc/decode_int.h"
#include "ipc/ipc.h"

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
		wire_get_strs(r, &p->tools, &p->ntools, IPC_NAME_MAX,
		    wire_get_tok, "start.profile.tools");
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
		wire_get_strs(r, &s->delegates, &s->ndelegates,
		    IPC_NAME_MAX, mp_get_strdup, "start.delegates");
		break;
	case 9:
		wire_get_strs(r, &s->delegate_descs, &s->ndescs,
		    IPC_CALLSTR_MAX, mp_get_strdup, "start.delegate_descs");
		break;
	case 10:
		mp_get_strdup(r, &s->schema, IPC_STR_MAX,
		    "start.schema");
		break;
	case 11:
		wire_get_tools(r, &s->mcp_tools, &s->nmcp_tools,
		    "start.mcp_tools");
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

int
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

int
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

int
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

int
decode_mcp_ok(struct mp_reader *r, uint32_t n, struct ipc_mcp_ok *o)
{
	static const char *const keys[] = { "id", "text", "is_error" };
	static const struct wire_map map = {
		keys, WIRE_KEYS(keys), 0x7, decode_mcp_ok_member, NULL
	};

	return wire_members(r, n, &map, o, "mcp_ok");
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

int
decode_spawn_ok(struct mp_reader *r, uint32_t n, struct ipc_spawn_ok *s)
{
	static const char *const keys[] = { "id", "path", "result", "usage" };
	static const struct wire_map map = {
		keys, WIRE_KEYS(keys), 0xf, decode_spawn_ok_member, NULL
	};

	return wire_members(r, n, &map, s, "spawn_ok");
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

int
decode_cancel(struct mp_reader *r, uint32_t n, struct ipc_cancel *c)
{
	static const char *const keys[] = { "reason" };
	static const struct wire_map map = {
		keys, WIRE_KEYS(keys), 0x1, decode_cancel_member, NULL
	};

	return wire_members(r, n, &map, c, "cancel");
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

int
decode_http_ok(struct mp_reader *r, uint32_t n, struct ipc_http_ok *o)
{
	static const char *const keys[] = { "id", "status", "content_type",
	    "body", "more" };
	static const struct wire_map map = {
		keys, WIRE_KEYS(keys), 0xf, decode_http_ok_member, NULL
	};

	return wire_members(r, n, &map, o, "http_ok");
}

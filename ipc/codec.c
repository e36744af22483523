/*
 * Typed encode and decode of every IPC message (docs/protocol.md).
 *
 * A message is one msgpack map whose first key is "type" (an enum ipc_type
 * number); the decoder reads it, then hands the rest of the map to the
 * message's own decoder, which knows its keys: each case opens, gets, and
 * the caller ends (OpenSMTPD m_get_*, m_end). Unknown, duplicate and
 * missing keys, wrong types, oversize values and trailing bytes all fail
 * with a message naming the field. The encoder checks the same limits, so
 * what we send is what the other side accepts.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/log.h"
#include "common/str.h"
#include "ipc/ipc.h"
#include "ipc/ipc_testapi.h"
#include "ipc/codec.h"

#define NITEMS(a)	(sizeof(a) / sizeof((a)[0]))

static const char *const codec_purposes[] = { "turn", "summary" };
static const char *const codec_statuses[] = { "complete", "fail",
    "auto_complete", "limit" };

int
enc_fail(struct enc *e, const char *fmt, ...)
{
	va_list	ap;

	if (e->failed)
		return -1;
	e->failed = 1;
	if (e->err != NULL && e->errsz > 0) {
		va_start(ap, fmt);
		vsnprintf(e->err, e->errsz, fmt, ap);
		va_end(ap);
	}
	return -1;
}

/* A buffer error: the frame outgrew its queue, or memory ran out. */
static void
enc_check(struct enc *e, int rv)
{
	if (rv == -1)
		enc_fail(e, "%s", errno == EMSGSIZE ?
		    "message does not fit the output queue" : "out of memory");
}

void
enc_map(struct enc *e, uint32_t n)
{
	if (!e->failed)
		enc_check(e, mp_put_map(e->b, n));
}

void
enc_array(struct enc *e, size_t n, uint32_t max, const char *what)
{
	if (e->failed)
		return;
	if (n > max) {
		enc_fail(e, "%s: more than %u entries", what, max);
		return;
	}
	enc_check(e, mp_put_array(e->b, (uint32_t)n));
}

void
enc_key(struct enc *e, const char *key)
{
	if (!e->failed)
		enc_check(e, mp_put_cstr(e->b, key));
}

void
enc_str(struct enc *e, const char *s, size_t max, const char *what)
{
	size_t	len;

	if (e->failed)
		return;
	if (s == NULL) {
		enc_fail(e, "%s: required string is NULL", what);
		return;
	}
	if ((len = strlen(s)) > max) {
		enc_fail(e, "%s: %zu bytes, at most %zu allowed", what, len,
		    max);
		return;
	}
	/* Strings make up the bulk: stop before copying past a frame. */
	if (buf_left(e->b) > e->limit || len > e->limit - buf_left(e->b)) {
		enc_fail(e, "%s: message over the frame limit of %u bytes",
		    what, IPC_FRAME_MAX);
		errno = EMSGSIZE;
		return;
	}
	enc_check(e, mp_put_str(e->b, s, len));
}

void
enc_tok(struct enc *e, const char *s, size_t max, const char *what)
{
	if (e->failed)
		return;
	if (s == NULL || !ipc_token_valid(s, strlen(s), max)) {
		enc_fail(e, "%s: not a name ([A-Za-z0-9_.:-], 1 to %zu bytes)",
		    what, max);
		return;
	}
	enc_check(e, mp_put_cstr(e->b, s));
}

void
enc_u64(struct enc *e, uint64_t v)
{
	if (!e->failed)
		enc_check(e, mp_put_u64(e->b, v));
}

void
enc_bool(struct enc *e, int v)
{
	if (!e->failed)
		enc_check(e, mp_put_bool(e->b, v));
}

const char *
ipc_type_name(enum ipc_type type)
{
	switch (type) {
	case IPC_HELLO:		return "hello";
	case IPC_START:		return "start";
	case IPC_LLM:		return "llm";
	case IPC_LLM_OK:	return "llm_ok";
	case IPC_LLM_ERR:	return "llm_err";
	case IPC_SPAWN:		return "spawn";
	case IPC_SPAWN_OK:	return "spawn_ok";
	case IPC_SPAWN_ERR:	return "spawn_err";
	case IPC_EVENT:		return "event";
	case IPC_CHECKPOINT:	return "checkpoint";
	case IPC_MCP:		return "mcp";
	case IPC_MCP_OK:	return "mcp_ok";
	case IPC_MCP_ERR:	return "mcp_err";
	case IPC_DONE:		return "done";
	case IPC_CANCEL:	return "cancel";
	case IPC_HTTP:		return "http";
	case IPC_HTTP_OK:	return "http_ok";
	case IPC_HTTP_ERR:	return "http_err";
	case IPC_NONE:		break;
	}
	return "unknown";
}

const char *
ipc_purpose_name(enum ipc_purpose purpose)
{
	if ((size_t)purpose >= NITEMS(codec_purposes))
		return "unknown";
	return codec_purposes[purpose];
}

const char *
ipc_status_name(enum ipc_status status)
{
	if ((size_t)status >= NITEMS(codec_statuses))
		return "unknown";
	return codec_statuses[status];
}

int
ipc_status_parse(const char *name, enum ipc_status *status)
{
	size_t	i;

	for (i = 0; i < NITEMS(codec_statuses); i++) {
		if (strcmp(name, codec_statuses[i]) == 0) {
			*status = (enum ipc_status)i;
			return 0;
		}
	}
	errno = EINVAL;
	return -1;
}

int
ipc_path_valid(const char *s, size_t len)
{
	size_t	i;
	int	digits = 0;

	/* "0" then ".N" parts: the root is 0, children count from 1. */
	if (len == 0 || len > IPC_PATH_MAX || s[0] != '0')
		return 0;
	if (len > 1 && s[1] != '.')
		return 0;
	for (i = 1; i < len; i++) {
		if (s[i] == '.') {
			if (i + 1 == len || s[i + 1] == '.' || s[i + 1] == '0')
				return 0;
			digits = 0;
		} else if (s[i] >= '0' && s[i] <= '9') {
			/* Keep each part within a u32 (10 digits at most). */
			if (++digits > 9)
				return 0;
		} else
			return 0;
	}
	return 1;
}

int
ipc_token_valid(const char *s, size_t len, size_t max)
{
	size_t	i;
	char	c;

	if (len == 0 || len > max)
		return 0;
	for (i = 0; i < len; i++) {
		c = s[i];
		if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
		    (c >= '0' && c <= '9') || c == '_' || c == '.' ||
		    c == ':' || c == '-'))
			return 0;
	}
	return 1;
}

/* The request headers a backend program's request may carry upstream:
 * what the APIs read to shape the answer, never credentials. */
static const char *const codec_http_headers[] = { "content-type",
    "accept", "anthropic-version", "anthropic-beta" };

int
ipc_http_header_ok(const char *line, size_t len)
{
	const char	*colon;
	size_t		 i, n;

	if (len == 0 || len > IPC_HTTP_HEADER_MAX ||
	    (colon = memchr(line, ':', len)) == NULL)
		return 0;
	n = (size_t)(colon - line);
	for (i = 0; i < NITEMS(codec_http_headers); i++)
		if (strlen(codec_http_headers[i]) == n &&
		    memcmp(codec_http_headers[i], line, n) == 0)
			break;
	if (i == NITEMS(codec_http_headers) || n + 1 >= len ||
	    line[n + 1] != ' ')
		return 0;
	for (i = n + 2; i < len; i++)
		if ((unsigned char)line[i] < 0x20 || line[i] == 0x7f)
			return 0;
	return 1;
}

int
ipc_http_wire_ok(const char *wire)
{
	return wire != NULL && (strcmp(wire, "anthropic") == 0 ||
	    strcmp(wire, "responses") == 0 || strcmp(wire, "openai") == 0);
}

static const struct {
	const char	*wire;
	const char	*path;
} codec_http_paths[] = {
	{ "anthropic", "/v1/messages" },
	{ "anthropic", "/v1/messages/count_tokens" },
	{ "responses", "/v1/responses" },
	{ "openai", "/v1/chat/completions" },
};

int
ipc_http_path_ok(const char *wire, const char *path)
{
	size_t	i, n;

	if (wire == NULL || path == NULL)
		return 0;
	n = strcspn(path, "?");
	if (path[n] == '?' && strspn(path + n + 1, "abcdefghijklmnopqrstuvwxyz"
	    "ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789=&_.-") !=
	    strlen(path + n + 1))
		return 0;
	for (i = 0; i < NITEMS(codec_http_paths); i++)
		if (strcmp(wire, codec_http_paths[i].wire) == 0 &&
		    strlen(codec_http_paths[i].path) == n &&
		    memcmp(path, codec_http_paths[i].path, n) == 0)
			return 1;
	return 0;
}

/* Encoders: one per message, keys in the order of docs/protocol.md. */

/* An array of at most nmax strings of at most max bytes each, each put
 * by put: enc_str, or enc_tok for tokens. */
static void
codec_put_strs(struct enc *e, char *const *v, size_t n, uint32_t nmax,
    size_t max, void (*put)(struct enc *, const char *, size_t,
    const char *), const char *what)
{
	size_t	i;

	enc_array(e, n, nmax, what);
	for (i = 0; i < n && !e->failed; i++)
		put(e, v[i], max, what);
}

static void
codec_put_hello(struct enc *e, const struct ipc_hello *h)
{
	enc_key(e, "version");
	enc_u64(e, h->version);
	enc_key(e, "pid");
	enc_u64(e, h->pid);
	enc_key(e, "layers");
	codec_put_strs(e, h->layers, h->nlayers, IPC_LAYERS_MAX, IPC_LAYER_MAX,
	    enc_tok, "hello.layers");
	enc_key(e, "weaker");
	enc_bool(e, h->weaker);
}

static void
codec_put_profile(struct enc *e, const struct ipc_profile *p)
{
	enc_map(e, 3);
	enc_key(e, "name");
	enc_tok(e, p->name, IPC_NAME_MAX, "start.profile.name");
	enc_key(e, "prompt");
	enc_str(e, p->prompt, IPC_STR_MAX, "start.profile.prompt");
	enc_key(e, "tools");
	codec_put_strs(e, p->tools, p->ntools, IPC_TOOLS_MAX, IPC_NAME_MAX,
	    enc_tok, "start.profile.tools");
}

static void
codec_put_limits(struct enc *e, const struct ipc_limits *l)
{
	enc_map(e, 5);
	enc_key(e, "max_iterations");
	enc_u64(e, l->max_iterations);
	enc_key(e, "timeout_ms");
	enc_u64(e, l->timeout_ms);
	enc_key(e, "context_tokens");
	enc_u64(e, l->context_tokens);
	enc_key(e, "loop_threshold");
	enc_u64(e, l->loop_threshold);
	enc_key(e, "max_output_bytes");
	enc_u64(e, l->max_output_bytes);
}

static void
codec_put_start(struct enc *e, const struct ipc_start *s)
{
	if (s->path == NULL || !ipc_path_valid(s->path, strlen(s->path))) {
		enc_fail(e, "start.path: not an agent path (\"0\", \"0.2\")");
		return;
	}
	if (s->workspace == NULL || s->workspace[0] != '/') {
		enc_fail(e, "start.workspace: not an absolute path");
		return;
	}
	enc_key(e, "path");
	enc_str(e, s->path, IPC_PATH_MAX, "start.path");
	enc_key(e, "depth");
	enc_u64(e, s->depth);
	enc_key(e, "profile");
	codec_put_profile(e, &s->profile);
	enc_key(e, "task");
	enc_str(e, s->task, IPC_STR_MAX, "start.task");
	enc_key(e, "context");
	wire_put_msgs(e, &s->context, "start.context");
	enc_key(e, "history");
	wire_put_msgs(e, &s->history, "start.history");
	enc_key(e, "limits");
	codec_put_limits(e, &s->limits);
	enc_key(e, "workspace");
	enc_str(e, s->workspace, IPC_WORKSPACE_MAX, "start.workspace");
	if (s->schema != NULL) {
		enc_key(e, "schema");
		enc_str(e, s->schema, IPC_STR_MAX, "start.schema");
	}
	if (s->nmcp_tools > 0) {
		enc_key(e, "mcp_tools");
		wire_put_tools(e, s->mcp_tools, s->nmcp_tools,
		    "start.mcp_tools");
	}
	if (s->ndelegates == 0)
		return;
	enc_key(e, "delegates");
	codec_put_strs(e, s->delegates, s->ndelegates, IPC_TOOLS_MAX,
	    IPC_NAME_MAX, enc_str, "start.delegates");
	enc_key(e, "delegate_descs");
	codec_put_strs(e, s->delegate_descs, s->ndelegates, IPC_TOOLS_MAX,
	    IPC_CALLSTR_MAX, enc_str, "start.delegate_descs");
}

static void
codec_put_llm(struct enc *e, const struct ipc_llm *l)
{
	if ((unsigned)l->purpose > IPC_PURPOSE_SUMMARY) {
		enc_fail(e, "llm.purpose: invalid value %d", (int)l->purpose);
		return;
	}
	enc_key(e, "id");
	enc_u64(e, l->id);
	enc_key(e, "step");
	enc_u64(e, l->step);
	enc_key(e, "purpose");
	enc_str(e, ipc_purpose_name(l->purpose), IPC_NAME_MAX, "llm.purpose");
	enc_key(e, "messages");
	wire_put_msgs(e, &l->messages, "llm.messages");
	enc_key(e, "tools");
	wire_put_tools(e, l->tools, l->ntools, "llm.tools");
}

static void
codec_put_llm_ok(struct enc *e, const struct ipc_llm_ok *o)
{
	enc_key(e, "id");
	enc_u64(e, o->id);
	enc_key(e, "reply");
	wire_put_reply(e, &o->reply);
}

static void
codec_put_error(struct enc *e, const struct ipc_error *x, const char *what)
{
	enc_key(e, "id");
	enc_u64(e, x->id);
	enc_key(e, "code");
	enc_tok(e, x->code, IPC_NAME_MAX, what);
	enc_key(e, "message");
	enc_str(e, x->message, IPC_ERRMSG_MAX, what);
}

static void
codec_put_spawn(struct enc *e, const struct ipc_spawn *s)
{
	enc_key(e, "id");
	enc_u64(e, s->id);
	enc_key(e, "profile");
	enc_tok(e, s->profile, IPC_NAME_MAX, "spawn.profile");
	enc_key(e, "task");
	enc_str(e, s->task, IPC_STR_MAX, "spawn.task");
	enc_key(e, "inherit_context");
	enc_bool(e, s->inherit_context);
	enc_key(e, "call_id");
	enc_str(e, s->call_id ? s->call_id : "", IPC_CALLSTR_MAX,
	    "spawn.call_id");
	if (!s->filtered)
		return;
	enc_key(e, "tool_filter");
	codec_put_strs(e, s->tools, s->ntools, IPC_TOOLS_MAX, IPC_NAME_MAX,
	    enc_tok, "spawn.tool_filter");
}

static void
codec_put_spawn_ok(struct enc *e, const struct ipc_spawn_ok *s)
{
	if (s->path == NULL || !ipc_path_valid(s->path, strlen(s->path))) {
		enc_fail(e, "spawn_ok.path: not an agent path");
		return;
	}
	enc_key(e, "id");
	enc_u64(e, s->id);
	enc_key(e, "path");
	enc_str(e, s->path, IPC_PATH_MAX, "spawn_ok.path");
	enc_key(e, "result");
	enc_str(e, s->result, IPC_STR_MAX, "spawn_ok.result");
	enc_key(e, "usage");
	wire_put_usage(e, &s->usage);
}

static void
codec_put_mcp(struct enc *e, const struct ipc_mcp *c)
{
	enc_key(e, "id");
	enc_u64(e, c->id);
	enc_key(e, "server");
	enc_tok(e, c->server, IPC_NAME_MAX, "mcp.server");
	enc_key(e, "tool");
	enc_tok(e, c->tool, IPC_NAME_MAX, "mcp.tool");
	enc_key(e, "args");
	enc_str(e, c->args, IPC_STR_MAX, "mcp.args");
}

static void
codec_put_mcp_ok(struct enc *e, const struct ipc_mcp_ok *o)
{
	enc_key(e, "id");
	enc_u64(e, o->id);
	enc_key(e, "text");
	enc_str(e, o->text, IPC_STR_MAX, "mcp_ok.text");
	enc_key(e, "is_error");
	enc_bool(e, o->is_error);
}

static size_t
codec_event_max(const char *kind)
{
	return kind != NULL && strcmp(kind, "log") == 0 ? IPC_LOG_MAX :
	    IPC_EVENT_MAX;
}

static void
codec_put_event(struct enc *e, const struct ipc_event *v)
{
	if (v->has_level && v->level > LOG_LEVEL_DEBUG) {
		enc_fail(e, "event.level: %u is not a log level", v->level);
		return;
	}
	enc_key(e, "kind");
	enc_tok(e, v->kind, IPC_NAME_MAX, "event.kind");
	enc_key(e, "text");
	enc_str(e, v->text, codec_event_max(v->kind), "event.text");
	if (v->tool != NULL) {
		enc_key(e, "tool");
		enc_tok(e, v->tool, IPC_NAME_MAX, "event.tool");
	}
	if (v->has_level) {
		enc_key(e, "level");
		enc_u64(e, v->level);
	}
}

static void
codec_put_checkpoint(struct enc *e, const struct ipc_checkpoint *c)
{
	enc_key(e, "seq");
	enc_u64(e, c->seq);
	enc_key(e, "messages");
	wire_put_msgs(e, &c->messages, "checkpoint.messages");
}

static void
codec_put_done(struct enc *e, const struct ipc_done *d)
{
	if ((unsigned)d->status > IPC_STATUS_LIMIT) {
		enc_fail(e, "done.status: invalid value %d", (int)d->status);
		return;
	}
	enc_key(e, "status");
	enc_str(e, ipc_status_name(d->status), IPC_NAME_MAX, "done.status");
	enc_key(e, "result");
	enc_str(e, d->result, IPC_STR_MAX, "done.result");
	enc_key(e, "usage");
	wire_put_usage(e, &d->usage);
	enc_key(e, "iterations");
	enc_u64(e, d->iterations);
	if (d->reason != NULL) {
		enc_key(e, "reason");
		enc_str(e, d->reason, IPC_ERRMSG_MAX, "done.reason");
	}
}

static void
codec_put_http(struct enc *e, const struct ipc_http *h)
{
	size_t	i;

	if (!ipc_http_wire_ok(h->wire)) {
		enc_fail(e, "http.wire: not anthropic, responses or openai");
		return;
	}
	if (!ipc_http_path_ok(h->wire, h->path)) {
		enc_fail(e, "http.path: not a path of wire %s", h->wire);
		return;
	}
	enc_key(e, "id");
	enc_u64(e, h->id);
	enc_key(e, "wire");
	enc_tok(e, h->wire, IPC_NAME_MAX, "http.wire");
	enc_key(e, "method");
	enc_tok(e, h->method, IPC_NAME_MAX, "http.method");
	enc_key(e, "path");
	enc_str(e, h->path, IPC_HTTP_PATH_MAX, "http.path");
	enc_key(e, "headers");
	enc_array(e, h->nheaders, IPC_HTTP_HEADERS_MAX, "http.headers");
	for (i = 0; i < h->nheaders && !e->failed; i++) {
		if (h->headers[i] == NULL || !ipc_http_header_ok(h->headers[i],
		    strlen(h->headers[i]))) {
			enc_fail(e, "http.headers: not a header a request may "
			    "carry");
			return;
		}
		enc_str(e, h->headers[i], IPC_HTTP_HEADER_MAX,
		    "http.headers");
	}
	enc_key(e, "body");
	enc_str(e, h->body, IPC_STR_MAX, "http.body");
}

static void
codec_put_http_ok(struct enc *e, const struct ipc_http_ok *o)
{
	if (o->status < 100 || o->status > 599) {
		enc_fail(e, "http_ok.status: %u is not an HTTP status",
		    o->status);
		return;
	}
	enc_key(e, "id");
	enc_u64(e, o->id);
	enc_key(e, "status");
	enc_u64(e, o->status);
	enc_key(e, "content_type");
	enc_str(e, o->content_type, IPC_HTTP_TYPE_MAX, "http_ok.content_type");
	enc_key(e, "body");
	enc_str(e, o->body, IPC_STR_MAX, "http_ok.body");
	if (o->more) {
		enc_key(e, "more");
		enc_bool(e, 1);
	}
}

static void
codec_put_cancel(struct enc *e, const struct ipc_cancel *c)
{
	enc_key(e, "reason");
	enc_str(e, c->reason, IPC_ERRMSG_MAX, "cancel.reason");
}

/* Top-level keys after "type": the map header is written first. */
static uint32_t
codec_nfields(const struct ipc_msg *m)
{
	switch (m->type) {
	case IPC_HELLO:		return 4;
	case IPC_START:		return 8 + 2 * (m->u.start.ndelegates > 0) +
				    (m->u.start.schema != NULL) +
				    (m->u.start.nmcp_tools > 0);
	case IPC_MCP:		return 4;
	case IPC_MCP_OK:	return 3;
	case IPC_MCP_ERR:	return 3;
	case IPC_LLM:		return 5;
	case IPC_LLM_OK:	return 2;
	case IPC_LLM_ERR:	return 3;
	case IPC_SPAWN:		return 5 + (m->u.spawn.filtered != 0);
	case IPC_SPAWN_OK:	return 4;
	case IPC_SPAWN_ERR:	return 3;
	case IPC_EVENT:
		return 2 + (m->u.event.tool != NULL) +
		    (m->u.event.has_level != 0);
	case IPC_CHECKPOINT:	return 2;
	case IPC_DONE:		return 4 + (m->u.done.reason != NULL);
	case IPC_CANCEL:	return 1;
	case IPC_HTTP:		return 6;
	case IPC_HTTP_OK:	return 4 + (m->u.http_ok.more != 0);
	case IPC_HTTP_ERR:	return 3;
	case IPC_NONE:
		break;
	}
	return 0;
}

static int
codec_put(struct enc *e, const struct ipc_msg *m)
{
	switch (m->type) {
	case IPC_HELLO:		codec_put_hello(e, &m->u.hello); break;
	case IPC_START:		codec_put_start(e, &m->u.start); break;
	case IPC_LLM:		codec_put_llm(e, &m->u.llm); break;
	case IPC_LLM_OK:	codec_put_llm_ok(e, &m->u.llm_ok); break;
	case IPC_LLM_ERR:
		codec_put_error(e, &m->u.llm_err, "llm_err");
		break;
	case IPC_SPAWN:		codec_put_spawn(e, &m->u.spawn); break;
	case IPC_SPAWN_OK:	codec_put_spawn_ok(e, &m->u.spawn_ok); break;
	case IPC_SPAWN_ERR:
		codec_put_error(e, &m->u.spawn_err, "spawn_err");
		break;
	case IPC_MCP:		codec_put_mcp(e, &m->u.mcp); break;
	case IPC_MCP_OK:	codec_put_mcp_ok(e, &m->u.mcp_ok); break;
	case IPC_MCP_ERR:
		codec_put_error(e, &m->u.mcp_err, "mcp_err");
		break;
	case IPC_EVENT:		codec_put_event(e, &m->u.event); break;
	case IPC_CHECKPOINT:	codec_put_checkpoint(e, &m->u.checkpoint); break;
	case IPC_DONE:		codec_put_done(e, &m->u.done); break;
	case IPC_CANCEL:	codec_put_cancel(e, &m->u.cancel); break;
	case IPC_HTTP:		codec_put_http(e, &m->u.http); break;
	case IPC_HTTP_OK:	codec_put_http_ok(e, &m->u.http_ok); break;
	case IPC_HTTP_ERR:
		codec_put_error(e, &m->u.http_err, "http_err");
		break;
	case IPC_NONE:
	default:
		return enc_fail(e, "cannot encode message type %d",
		    (int)m->type);
	}
	return e->failed ? -1 : 0;
}

int
ipc_msg_encode(struct buf *out, const struct ipc_msg *m, char *err,
    size_t errsz)
{
	size_t		start = buf_left(out);
	struct enc	e = { out, 0, err, errsz, start + IPC_FRAME_MAX };

	if (err != NULL && errsz > 0)
		err[0] = '\0';
	enc_map(&e, codec_nfields(m) + 1);
	enc_key(&e, "type");
	enc_u64(&e, (uint64_t)m->type);
	if (codec_put(&e, m) == -1) {
		/* Drop the partial message; compaction keeps head-relative
		   offsets valid. */
		out->len = out->off + start;
		if (out->len == out->off)
			buf_reset(out);
		return -1;
	}
	return 0;
}

int
ipc_msg_frame(struct buf *out, const struct ipc_msg *m, char *err,
    size_t errsz)
{
	size_t	mark;
	int	saved;

	if (ipc_frame_begin(out, &mark) == -1) {
		snprintf(err, errsz, "%s: cannot queue: %s",
		    ipc_type_name(m->type), strerror(errno));
		return -1;
	}
	if (ipc_msg_encode(out, m, err, errsz) == -1) {
		saved = errno == ENOMEM || errno == EMSGSIZE ? errno : EINVAL;
		ipc_frame_end(out, mark);	/* drops the empty frame */
		errno = saved;
		return -1;
	}
	if (ipc_frame_end(out, mark) == -1) {
		snprintf(err, errsz, "%s: frame over %u bytes",
		    ipc_type_name(m->type), IPC_FRAME_MAX);
		errno = EMSGSIZE;
		return -1;
	}
	return 0;
}

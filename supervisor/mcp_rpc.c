/*
 * JSON-RPC 2.0 over MCP's stdio transport: one JSON object a line, both
 * ways. What a server writes is hostile: a line is judged by its length
 * before it is parsed (MCP_LINE_MAX), parsed with jansson (which refuses
 * invalid UTF-8), and every field used is checked for its type and
 * bounded (tool names, descriptions, schemas, result text).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "common/buf.h"
#include "common/msg.h"
#include "common/str.h"
#include "common/xmalloc.h"
#include "ipc/ipc.h"
#include "supervisor/mcp.h"

static int
mcp_rpc_line(struct buf *out, json_t *o)
{
	char	*s;
	int	 rc;

	s = json_dumps(o, JSON_COMPACT);
	json_decref(o);
	if (s == NULL)
		return -1;
	rc = buf_addstr(out, s) == -1 || buf_addc(out, '\n') == -1 ? -1 : 0;
	free(s);
	return rc;
}

int
mcp_rpc_request(struct buf *out, uint64_t id, const char *method,
    json_t *params)
{
	json_t	*o;

	o = json_pack("{s:s, s:I, s:s}", "jsonrpc", "2.0", "id",
	    (json_int_t)id, "method", method);
	if (o == NULL) {
		json_decref(params);
		return -1;
	}
	if (params != NULL)
		json_object_set_new(o, "params", params);
	return mcp_rpc_line(out, o);
}

int
mcp_rpc_note(struct buf *out, const char *method)
{
	json_t	*o;

	if ((o = json_pack("{s:s, s:s}", "jsonrpc", "2.0", "method",
	    method)) == NULL)
		return -1;
	return mcp_rpc_line(out, o);
}

int
mcp_lines_feed(struct mcp_lines *l, const char *p, size_t n, char *err,
    size_t errsz)
{
	const unsigned char	*nl;

	l->read += n;
	if (buf_add(&l->in, p, n) == -1) {
		snprintf(err, errsz, "out of memory");
		return -1;
	}
	/* The part after the last newline is one line still coming. */
	if (buf_left(&l->in) == 0)
		return 0;
	nl = memrchr(buf_head(&l->in), '\n', buf_left(&l->in));
	if (buf_left(&l->in) - (nl == NULL ? 0 :
	    (size_t)(nl - buf_head(&l->in)) + 1) > MCP_LINE_MAX) {
		snprintf(err, errsz, "a line of more than %u bytes",
		    MCP_LINE_MAX);
		return -1;
	}
	return 0;
}

int
mcp_lines_next(struct mcp_lines *l, json_t **msg, char *err, size_t errsz)
{
	const unsigned char	*p, *nl;
	json_error_t		 je;
	size_t			 len;

	*msg = NULL;
	for (;;) {
		p = buf_head(&l->in);
		if (buf_left(&l->in) == 0 ||
		    (nl = memchr(p, '\n', buf_left(&l->in))) == NULL)
			return 0;
		len = (size_t)(nl - p);
		if (len > MCP_LINE_MAX) {
			buf_consume(&l->in, len + 1);
			snprintf(err, errsz, "a line of more than %u bytes",
			    MCP_LINE_MAX);
			return -1;
		}
		/* Blank lines (and a \r before the newline) are nothing. */
		if (len == 0 || (len == 1 && p[0] == '\r')) {
			buf_consume(&l->in, len + 1);
			continue;
		}
		*msg = json_loadb((const char *)p, len, JSON_REJECT_DUPLICATES,
		    &je);
		buf_consume(&l->in, len + 1);
		if (json_is_object(*msg))
			return 1;
		json_decref(*msg);
		*msg = NULL;
		snprintf(err, errsz, "not a JSON object: %.80s", je.text);
		return -1;
	}
}

void
mcp_lines_free(struct mcp_lines *l)
{
	buf_free(&l->in);
	l->read = 0;
}

int
mcp_rpc_answer(json_t *msg, uint64_t *id, json_t **result, char *err,
    size_t errsz)
{
	json_t	*jid, *e, *m;

	*result = NULL;
	err[0] = '\0';
	jid = json_object_get(msg, "id");
	/* A request or notification from the server: none of ours. */
	if (json_object_get(msg, "method") != NULL || !json_is_integer(jid) ||
	    json_integer_value(jid) < 0)
		return 0;
	*id = (uint64_t)json_integer_value(jid);
	if ((e = json_object_get(msg, "error")) != NULL) {
		m = json_object_get(e, "message");
		snprintf(err, errsz, "error %lld: %.200s",
		    (long long)json_integer_value(json_object_get(e, "code")),
		    json_is_string(m) ? json_string_value(m) : "(no message)");
		return 1;
	}
	if (!json_is_object(*result = json_object_get(msg, "result"))) {
		*result = NULL;
		snprintf(err, errsz, "an answer with neither result nor "
		    "error");
	}
	return 1;
}

/* [A-Za-z0-9_-]: what every LLM API takes in a tool name. */
static int
mcp_rpc_name_ok(const char *s)
{
	size_t	i;

	for (i = 0; s[i] != '\0'; i++)
		if (!((s[i] >= 'a' && s[i] <= 'z') ||
		    (s[i] >= 'A' && s[i] <= 'Z') ||
		    (s[i] >= '0' && s[i] <= '9') || s[i] == '_' || s[i] == '-'))
			return 0;
	return i > 0;
}

/* A prefix of s of at most max bytes that ends on a UTF-8 boundary. */
static size_t
mcp_rpc_cut(const char *s, size_t len, size_t max)
{
	if (len <= max)
		return len;
	while (max > 0 && ((unsigned char)s[max] & 0xc0) == 0x80)
		max--;
	return max;
}

static int
mcp_rpc_tool(const json_t *t, const char *server, struct msg_tool *out,
    char *err, size_t errsz)
{
	const json_t	*name, *desc, *schema;
	char		 full[MCP_TOOL_NAME_MAX + 1], *s;
	const char	*d;
	int		 n;

	name = json_object_get(t, "name");
	if (!json_is_string(name) ||
	    !mcp_rpc_name_ok(json_string_value(name))) {
		snprintf(err, errsz, "a tool whose name is not [A-Za-z0-9_-]+");
		return -1;
	}
	n = snprintf(full, sizeof(full), MCP_PREFIX "%s" MCP_SEP "%s", server,
	    json_string_value(name));
	if (n < 0 || (size_t)n >= sizeof(full)) {
		snprintf(err, errsz, "tool %.64s: mcp__%s__NAME is over %d "
		    "bytes", json_string_value(name), server,
		    MCP_TOOL_NAME_MAX);
		return -1;
	}
	schema = json_object_get(t, "inputSchema");
	if (!json_is_object(schema)) {
		snprintf(err, errsz, "tool %s: inputSchema is not an object",
		    full);
		return -1;
	}
	if ((s = json_dumps(schema, JSON_COMPACT)) == NULL ||
	    strlen(s) > MCP_SCHEMA_MAX) {
		free(s);
		snprintf(err, errsz, "tool %s: inputSchema over %u bytes",
		    full, MCP_SCHEMA_MAX);
		return -1;
	}
	desc = json_object_get(t, "description");
	d = json_is_string(desc) ? json_string_value(desc) : "";
	out->name = xstrdup(full);
	out->description = str_ndup(d, mcp_rpc_cut(d, strlen(d),
	    MCP_DESC_MAX));
	out->schema = s;
	return 0;
}

int
mcp_rpc_tools(const json_t *result, const char *server,
    struct msg_tool **tools, size_t *ntools, char *err, size_t errsz)
{
	const json_t	*v, *t;
	size_t		 i, n;

	*tools = NULL;
	*ntools = 0;
	v = json_object_get(result, "tools");
	if (!json_is_array(v)) {
		snprintf(err, errsz, "tools/list: no array \"tools\"");
		return -1;
	}
	if ((n = json_array_size(v)) > IPC_TOOLS_MAX) {
		snprintf(err, errsz, "tools/list: %zu tools, at most %d",
		    n, IPC_TOOLS_MAX);
		return -1;
	}
	*tools = xcalloc(n + 1, sizeof(**tools));
	json_array_foreach(v, i, t) {
		if (mcp_rpc_tool(t, server, &(*tools)[i], err, errsz) == -1) {
			while (i > 0)
				msg_tool_free(&(*tools)[--i]);
			free(*tools);
			*tools = NULL;
			return -1;
		}
	}
	*ntools = n;
	return 0;
}

char *
mcp_rpc_result_text(const json_t *result, size_t max, int *is_error)
{
	const json_t	*content, *c, *type, *text;
	struct buf	 b;
	const char	*s;
	size_t		 i, len;

	*is_error = json_is_true(json_object_get(result, "isError"));
	buf_init(&b, 0);
	content = json_object_get(result, "content");
	json_array_foreach(content, i, c) {
		if (buf_left(&b) >= max)
			break;
		type = json_object_get(c, "type");
		text = json_object_get(c, "text");
		if (i > 0)
			buf_addc(&b, '\n');
		if (json_is_string(text)) {
			s = json_string_value(text);	/* cut at a NUL */
			len = strlen(s);
			buf_add(&b, s, mcp_rpc_cut(s, len, max - buf_left(&b)));
		} else
			buf_addf(&b, "[%.32s content]", json_is_string(type) ?
			    json_string_value(type) : "unknown");
	}
	if (buf_left(&b) >= max)
		buf_addf(&b, "\n[cut at %zu bytes]", max);
	if (buf_left(&b) == 0)
		buf_addstr(&b, *is_error ? "(error without text)" :
		    "(no content)");
	return buf_release(&b, NULL);
}

/*
 * The JSON-RPC 2.0 messages of `warren mcp`: a request line checked
 * before anything acts on it (one object, "jsonrpc": "2.0", an id that is
 * a string or an integer, a method that is a string, params an object),
 * and the answers written as one line each on stdout, where nothing else
 * goes.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli/mcp.h"
#include "common/str.h"

/* The id, if it is one a request may have. */
static int
mcp_rpc_id(json_t *req, json_t **id, char *why, size_t whysz)
{
	json_t	*v = json_object_get(req, "id");

	if (v == NULL)
		return 0;
	if (!json_is_string(v) && !json_is_integer(v)) {
		snprintf(why, whysz, "\"id\" must be a string or an integer, "
		    "not %s", json_is_null(v) ? "null" : json_is_real(v) ?
		    "a fraction" : json_is_boolean(v) ? "a boolean" :
		    json_is_array(v) ? "an array" : "an object");
		return -1;
	}
	*id = json_incref(v);
	return 0;
}

int
mcp_rpc_parse(const char *line, size_t len, json_t **req, json_t **id,
    char *why, size_t whysz)
{
	json_error_t	 jerr;
	json_t		*o, *m, *p, *v;

	*req = *id = NULL;
	if ((o = json_loadb(line, len, JSON_REJECT_DUPLICATES, &jerr)) ==
	    NULL) {
		snprintf(why, whysz, "not JSON: %s (at byte %d)", jerr.text,
		    jerr.position);
		return MCP_EPARSE;
	}
	if (!json_is_object(o)) {
		snprintf(why, whysz, "%s", json_is_array(o) ? "a batch (an "
		    "array): send one request a line" : "a request is a JSON "
		    "object");
		json_decref(o);
		return MCP_EINVALID;
	}
	if (mcp_rpc_id(o, id, why, whysz) == -1) {
		json_decref(o);
		return MCP_EINVALID;
	}
	v = json_object_get(o, "jsonrpc");
	m = json_object_get(o, "method");
	p = json_object_get(o, "params");
	if (!json_is_string(v) || strcmp(json_string_value(v), "2.0") != 0)
		snprintf(why, whysz, "\"jsonrpc\" must be \"2.0\"");
	else if (m == NULL && *id != NULL && (json_object_get(o, "result") ||
	    json_object_get(o, "error"))) {
		*req = o;		/* an answer: the server asks nothing */
		return 0;
	} else if (!json_is_string(m) || json_string_length(m) == 0)
		snprintf(why, whysz, "\"method\" must be a string");
	else if (p != NULL && !json_is_object(p))
		snprintf(why, whysz, "\"params\" must be an object");
	else {
		*req = o;
		return 0;
	}
	json_decref(o);
	return MCP_EINVALID;
}

/* Write one message as a line on stdout; takes msg. -1 if stdout failed
 * (then s->out_failed: the server stops). */
static int
mcp_rpc_send(struct mcp_server *s, json_t *msg)
{
	char	*t;
	size_t	 len, off = 0;
	ssize_t	 n;

	if (msg == NULL || s->out_failed) {
		json_decref(msg);
		return -1;
	}
	t = json_dumps(msg, JSON_COMPACT);
	json_decref(msg);
	if (t == NULL) {
		fprintf(stderr, "warren mcp: an answer could not be encoded "
		    "(out of memory)\n");
		return -1;
	}
	len = strlen(t);
	t[len++] = '\n';	/* over the NUL: written by length */
	while (off < len) {
		if ((n = write(STDOUT_FILENO, t + off, len - off)) == -1 &&
		    errno == EINTR)
			continue;
		if (n <= 0) {
			fprintf(stderr, "warren mcp: writing to stdout: %s; "
			    "stopping\n", n == 0 ? "nothing written" :
			    strerror(errno));
			s->out_failed = 1;
			free(t);
			return -1;
		}
		off += (size_t)n;
	}
	free(t);
	return 0;
}

int
mcp_rpc_result(struct mcp_server *s, json_t *id, json_t *result)
{
	if (result == NULL)
		return mcp_rpc_error(s, id, MCP_EINTERNAL, "out of memory");
	return mcp_rpc_send(s, json_pack("{s:s, s:O, s:o}", "jsonrpc", "2.0",
	    "id", id, "result", result));
}

int
mcp_rpc_error(struct mcp_server *s, json_t *id, int code, const char *fmt,
    ...)
{
	char	msg[2048];
	va_list	ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	return mcp_rpc_send(s, json_pack("{s:s, s:O, s:{s:i, s:o}}",
	    "jsonrpc", "2.0", "id", id != NULL ? id : json_null(), "error",
	    "code", code, "message", mcp_rpc_text(msg, strlen(msg))));
}

int
mcp_rpc_notify(struct mcp_server *s, const char *method, json_t *params)
{
	if (params == NULL)
		return -1;
	return mcp_rpc_send(s, json_pack("{s:s, s:s, s:o}", "jsonrpc", "2.0",
	    "method", method, "params", params));
}

json_t *
mcp_rpc_text(const char *s, size_t len)
{
	json_t	*j;
	char	*e;

	if (memchr(s, '\0', len) == NULL && str_utf8_valid(s, len))
		return json_stringn(s, len);
	if ((e = str_escape_dup(s, len, STR_ESC_KEEP_NL)) == NULL)
		return NULL;
	j = json_string(e);
	free(e);
	return j;
}

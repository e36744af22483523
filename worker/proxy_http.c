/*
 * HTTP/1.1 as a backend's program speaks it to the worker's proxy: one
 * request at a time per connection, bodies with Content-Length or chunked,
 * every size bounded; a whole answer is made here (a stream's parts are
 * chunked in proxy.c). The program is as
 * hostile as the model that drives it: a request the proxy does not
 * understand gets an error status, never a crash.
 */
#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "common/str.h"
#include "ipc/ipc.h"
#include "worker/proxy.h"

#define HTTP_FAIL(st, ...) do {						\
	*status = (st);							\
	snprintf(why, whylen, __VA_ARGS__);				\
	return -1;							\
} while (0)

void
proxy_http_free(struct proxy_req *r)
{
	size_t	i;

	free(r->head);
	for (i = 0; i < r->nheaders; i++)
		free(r->headers[i]);
	free(r->body);
	memset(r, 0, sizeof(*r));
}

int
proxy_http_route(const char *wire, const char *method, const char *path)
{
	return strcmp(method, "POST") == 0 && ipc_http_path_ok(wire, path);
}

/* One header line: the ones that shape the body or the answer are kept
 * (lower-case names, ipc_http_header_ok), the rest dropped. */
static int
proxy_http_header(struct proxy_req *r, const char *line, size_t len,
    int *status, char *why, size_t whylen)
{
	const char	*colon, *v;
	char		 name[64], *kept;
	size_t		 n, vlen, i;

	if ((colon = memchr(line, ':', len)) == NULL)
		HTTP_FAIL(400, "a header line without ':'");
	n = (size_t)(colon - line);
	if (n == 0 || n >= sizeof(name))
		HTTP_FAIL(400, "a header name of %zu bytes", n);
	for (i = 0; i < n; i++)
		name[i] = (char)tolower((unsigned char)line[i]);
	name[n] = '\0';
	v = colon + 1;
	vlen = len - n - 1;
	while (vlen > 0 && (*v == ' ' || *v == '\t')) {
		v++;
		vlen--;
	}
	while (vlen > 0 && (v[vlen - 1] == ' ' || v[vlen - 1] == '\t'))
		vlen--;
	if (strcmp(name, "content-length") == 0) {
		char		 num[24];
		const char	*errstr;

		if (vlen == 0 || vlen >= sizeof(num))
			HTTP_FAIL(400, "a bad Content-Length");
		memcpy(num, v, vlen);
		num[vlen] = '\0';
		r->clen = (size_t)strtonum(num, 0, PROXY_BODY_MAX, &errstr);
		if (errstr != NULL)
			HTTP_FAIL(413, "Content-Length %s (at most %u)", errstr,
			    PROXY_BODY_MAX);
		return 0;
	}
	if (strcmp(name, "transfer-encoding") == 0) {
		if (vlen != 7 || strncasecmp(v, "chunked", 7) != 0)
			HTTP_FAIL(501, "Transfer-Encoding other than chunked");
		r->chunked = 1;
		return 0;
	}
	if (strcmp(name, "expect") == 0) {
		r->expect100 = vlen == 12 && strncasecmp(v, "100-continue",
		    12) == 0;
		return 0;
	}
	if (r->nheaders == IPC_HTTP_HEADERS_MAX ||
	    asprintf(&kept, "%s: %.*s", name, (int)vlen, v) == -1)
		return 0;
	if (!ipc_http_header_ok(kept, strlen(kept))) {
		free(kept);
		return 0;
	}
	r->headers[r->nheaders++] = kept;
	return 0;
}

/* The request line and the headers, once the blank line is in. */
static int
proxy_http_head(struct proxy_req *r, const char *buf, size_t hlen,
    int *status, char *why, size_t whylen)
{
	const char	*p = buf, *end = buf + hlen, *eol, *sp1, *sp2;

	eol = memmem(p, (size_t)(end - p), "\r\n", 2);
	sp1 = memchr(p, ' ', (size_t)(eol - p));
	sp2 = sp1 != NULL ? memchr(sp1 + 1, ' ', (size_t)(eol - sp1 - 1)) :
	    NULL;
	if (sp1 == NULL || sp2 == NULL ||
	    (size_t)(sp1 - p) >= sizeof(r->method) ||
	    (size_t)(eol - sp2 - 1) != 8 || memcmp(sp2 + 1, "HTTP/1.", 7) != 0)
		HTTP_FAIL(400, "not an HTTP/1.x request line");
	memcpy(r->method, p, (size_t)(sp1 - p));
	r->method[sp1 - p] = '\0';
	if ((size_t)(sp2 - sp1 - 1) > IPC_HTTP_PATH_MAX || sp1[1] != '/')
		HTTP_FAIL(414, "a request target of %zu bytes, or not a path",
		    (size_t)(sp2 - sp1 - 1));
	memcpy(r->path, sp1 + 1, (size_t)(sp2 - sp1 - 1));
	r->path[sp2 - sp1 - 1] = '\0';
	for (p = eol + 2; p < end - 2; p = eol + 2) {
		eol = memmem(p, (size_t)(end - p), "\r\n", 2);
		if (eol == p)
			break;
		if (proxy_http_header(r, p, (size_t)(eol - p), status, why,
		    whylen) == -1)
			return -1;
	}
	return 0;
}

/* A chunked body: 1 when whole (*used: to its end), 0 for more. */
static int
proxy_http_chunks(struct proxy_req *r, const char *buf, size_t len,
    size_t *used, int *status, char *why, size_t whylen)
{
	const char	*p = buf, *end = buf + len, *eol;
	char		*nb;
	unsigned long	 n;
	char		*ep;

	r->bodylen = 0;
	for (;;) {
		if ((eol = memmem(p, (size_t)(end - p), "\r\n", 2)) == NULL) {
			if (end - p > 64)
				HTTP_FAIL(400, "a chunk size line over 64 "
				    "bytes");
			return 0;
		}
		errno = 0;
		n = strtoul(p, &ep, 16);
		if (ep == p || errno != 0 || (ep != eol && *ep != ';'))
			HTTP_FAIL(400, "a bad chunk size");
		if (n > PROXY_BODY_MAX || r->bodylen + n > PROXY_BODY_MAX)
			HTTP_FAIL(413, "a chunked body over %u bytes",
			    PROXY_BODY_MAX);
		p = eol + 2;
		if (n == 0) {
			/* No trailers are sent by the programs we serve. */
			if (end - p < 2)
				return 0;
			if (p[0] != '\r' || p[1] != '\n')
				HTTP_FAIL(400, "trailers after a chunked body");
			*used = (size_t)(p + 2 - buf);
			return 1;
		}
		if ((size_t)(end - p) < n + 2)
			return 0;
		if ((nb = realloc(r->body, r->bodylen + n + 1)) == NULL)
			HTTP_FAIL(500, "out of memory");
		r->body = nb;
		memcpy(r->body + r->bodylen, p, n);
		r->bodylen += n;
		r->body[r->bodylen] = '\0';
		if (p[n] != '\r' || p[n + 1] != '\n')
			HTTP_FAIL(400, "a chunk not ended by CRLF");
		p += n + 2;
	}
}

int
proxy_http_parse(const char *buf, size_t len, struct proxy_req *r,
    size_t *used, int *status, char *why, size_t whylen)
{
	const char	*blank;
	size_t		 bused;
	int		 rc;

	proxy_http_free(r);
	*status = 0;
	if ((blank = memmem(buf, len, "\r\n\r\n", 4)) == NULL) {
		if (len > PROXY_HEAD_MAX)
			HTTP_FAIL(431, "request head over %u bytes",
			    PROXY_HEAD_MAX);
		return 0;
	}
	r->headlen = (size_t)(blank + 4 - buf);
	if (r->headlen > PROXY_HEAD_MAX)
		HTTP_FAIL(431, "request head over %u bytes", PROXY_HEAD_MAX);
	if (proxy_http_head(r, buf, r->headlen, status, why, whylen) == -1)
		return -1;
	if (r->chunked) {
		rc = proxy_http_chunks(r, buf + r->headlen, len - r->headlen,
		    &bused, status, why, whylen);
		if (rc == 1)
			*used = r->headlen + bused;
	} else if (len - r->headlen < r->clen)
		rc = 0;
	else {
		if ((r->body = malloc(r->clen + 1)) == NULL)
			HTTP_FAIL(500, "out of memory");
		memcpy(r->body, buf + r->headlen, r->clen);
		r->body[r->clen] = '\0';
		r->bodylen = r->clen;
		*used = r->headlen + r->clen;
		rc = 1;
	}
	if (rc == 0 && r->expect100)
		*status = 100;
	if (rc == 1 && memchr(r->body != NULL ? r->body : "", '\0',
	    r->bodylen) != NULL)
		HTTP_FAIL(400, "a body with a NUL byte (JSON has none)");
	return rc;
}

static const char *
proxy_http_reason(int status)
{
	switch (status) {
	case 200: return "OK";
	case 400: return "Bad Request";
	case 404: return "Not Found";
	case 413: return "Content Too Large";
	case 414: return "URI Too Long";
	case 429: return "Too Many Requests";
	case 431: return "Request Header Fields Too Large";
	case 500: return "Internal Server Error";
	case 501: return "Not Implemented";
	case 502: return "Bad Gateway";
	default: return "Status";
	}
}

int
proxy_http_response(int status, const char *ctype, const char *body,
    size_t bodylen, char **out, size_t *outlen)
{
	char	head[512];
	int	n;

	n = snprintf(head, sizeof(head), "HTTP/1.1 %d %s\r\nContent-Type: "
	    "%s\r\nContent-Length: %zu\r\nCache-Control: no-cache\r\n\r\n",
	    status, proxy_http_reason(status), ctype != NULL && *ctype != '\0' ?
	    ctype : "application/json", bodylen);
	if (n < 0 || (size_t)n >= sizeof(head) ||
	    (*out = malloc((size_t)n + bodylen)) == NULL)
		return -1;
	memcpy(*out, head, (size_t)n);
	memcpy(*out + n, body, bodylen);
	*outlen = (size_t)n + bodylen;
	return 0;
}

char *
proxy_http_error_body(const char *wire, const char *msg)
{
	char	*esc, *out;
	size_t	 i, len = strlen(msg);

	/* JSON string: no quote, backslash or control byte left. */
	if ((esc = strdup(msg)) == NULL)
		return NULL;
	for (i = 0; i < len; i++)
		if (esc[i] == '"' || esc[i] == '\\' ||
		    (unsigned char)esc[i] < 0x20)
			esc[i] = '\'';
	if (strcmp(wire, "anthropic") == 0) {
		if (asprintf(&out, "{\"type\":\"error\",\"error\":{\"type\":"
		    "\"api_error\",\"message\":\"%s\"}}", esc) == -1)
			out = NULL;
	} else if (asprintf(&out, "{\"error\":{\"type\":\"api_error\","
	    "\"message\":\"%s\"}}", esc) == -1)
		out = NULL;
	free(esc);
	return out;
}

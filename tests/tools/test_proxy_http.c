/*
 * The backend proxy's HTTP (worker/proxy_http.c): a program's request as
 * it arrives in pieces, Content-Length and chunked bodies, 100-continue,
 * bounds, the headers forwarded (never one that could carry a key), the
 * paths each wire serves.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "worker/proxy.h"

static int
parse(const char *buf, size_t len, struct proxy_req *r, size_t *used,
    int *status)
{
	char	why[160];

	return proxy_http_parse(buf, len, r, used, status, why, sizeof(why));
}

static void
test_content_length(void **state)
{
	static const char req[] = "POST /v1/messages?beta=true HTTP/1.1\r\n"
	    "Host: x\r\nContent-Type: application/json\r\n"
	    "X-Api-Key: warren-brokered\r\nAuthorization: Bearer k\r\n"
	    "anthropic-version:  2023-06-01 \r\nContent-Length: 7\r\n\r\n"
	    "{\"a\":1}GET";
	struct proxy_req	 r;
	size_t			 used, i;
	int			 status;

	(void)state;
	memset(&r, 0, sizeof(r));
	/* Every cut short of the body: more is needed. */
	for (i = 0; i < sizeof(req) - 4; i++)
		assert_int_equal(parse(req, i, &r, &used, &status), 0);
	assert_int_equal(parse(req, sizeof(req) - 1, &r, &used, &status), 1);
	assert_int_equal(used, sizeof(req) - 4);	/* "GET" is the next */
	assert_string_equal(r.method, "POST");
	assert_string_equal(r.path, "/v1/messages?beta=true");
	assert_string_equal(r.body, "{\"a\":1}");
	/* Forwarded: content-type and anthropic-version, lower case,
	 * trimmed; the program's key headers never. */
	assert_int_equal(r.nheaders, 2);
	assert_string_equal(r.headers[0], "content-type: application/json");
	assert_string_equal(r.headers[1], "anthropic-version: 2023-06-01");
	proxy_http_free(&r);
}

static void
test_chunked(void **state)
{
	static const char req[] = "POST /v1/responses HTTP/1.1\r\n"
	    "Transfer-Encoding: chunked\r\nExpect: 100-continue\r\n\r\n"
	    "3\r\n{\"a\r\n4;x=y\r\n\":2}\r\n0\r\n\r\n";
	struct proxy_req	 r;
	size_t			 used, head;
	int			 status;

	(void)state;
	memset(&r, 0, sizeof(r));
	head = strstr(req, "\r\n\r\n") + 4 - req;
	/* The head alone asks for 100-continue. */
	assert_int_equal(parse(req, head, &r, &used, &status), 0);
	assert_int_equal(status, 100);
	assert_int_equal(parse(req, sizeof(req) - 3, &r, &used, &status), 0);
	assert_int_equal(parse(req, sizeof(req) - 1, &r, &used, &status), 1);
	assert_int_equal(used, sizeof(req) - 1);
	assert_string_equal(r.body, "{\"a\":2}");
	assert_int_equal(r.bodylen, 7);
	proxy_http_free(&r);
}

static void
expect_status_len(const char *req, size_t len, int want)
{
	struct proxy_req	r;
	size_t			used;
	int			status;

	memset(&r, 0, sizeof(r));
	if (parse(req, len, &r, &used, &status) != -1 ||
	    status != want)
		fail_msg("%s: status %d, want %d", req, status, want);
	proxy_http_free(&r);
}

static void
expect_status(const char *req, int want)
{
	expect_status_len(req, strlen(req), want);
}

static void
test_refused(void **state)
{
	char	*big;

	(void)state;
	expect_status("BREW /\r\n\r\n", 400);
	expect_status("POST /v1/messages SPDY/3\r\n\r\n", 400);
	expect_status("POST /v1/messages HTTP/1.1\r\nContent-Length: "
	    "99999999999\r\n\r\n", 413);
	expect_status("POST /v1/messages HTTP/1.1\r\nTransfer-Encoding: "
	    "gzip\r\n\r\n", 501);
	expect_status("POST /v1/messages HTTP/1.1\r\nTransfer-Encoding: "
	    "chunked\r\n\r\nzz\r\n", 400);
	expect_status("POST /v1/messages HTTP/1.1\r\nTransfer-Encoding: "
	    "chunked\r\n\r\nfffffffff\r\n", 413);
	expect_status("POST /v1/messages HTTP/1.1\r\nbad header\r\n\r\n",
	    400);
	expect_status_len("POST /v1/messages HTTP/1.1\r\nContent-Length: 3\r\n"
	    "\r\na\0b", 52, 400);
	/* A head that never ends, past its bound. */
	big = malloc(PROXY_HEAD_MAX + 2);
	memset(big, 'a', PROXY_HEAD_MAX + 1);
	big[PROXY_HEAD_MAX + 1] = '\0';
	expect_status(big, 431);
	free(big);
}

/* Parse req (len bytes, whole): 1 with the request, or -1 with status. */
static int
parse_whole(const char *req, size_t len, int *status)
{
	struct proxy_req	r;
	size_t			used = 0;
	int			rc;

	memset(&r, 0, sizeof(r));
	*status = 0;
	rc = parse(req, len, &r, &used, status);
	if (rc == 1)
		assert_int_equal(used, len);
	proxy_http_free(&r);
	return rc;
}

/* A request target of n bytes ("/aaa..."), with a body of 2 bytes. */
static int
parse_path(size_t n, int *status)
{
	char	*req;
	size_t	 len;
	int	 rc;

	assert_non_null(req = malloc(n + 64));
	len = (size_t)sprintf(req, "POST /");
	memset(req + len, 'a', n - 1);
	len += n - 1;
	len += (size_t)sprintf(req + len, " HTTP/1.1\r\nContent-Length: "
	    "2\r\n\r\n{}");
	rc = parse_whole(req, len, status);
	free(req);
	return rc;
}

/* A head of exactly n bytes (padded in one header), no body. */
static int
parse_head(size_t n, int *status)
{
	static const char	 pre[] = "POST /v1/messages HTTP/1.1\r\nx-pad: ";
	char			*req;
	size_t			 pad = n - (sizeof(pre) - 1) - 4;
	int			 rc;

	assert_non_null(req = malloc(n));
	memcpy(req, pre, sizeof(pre) - 1);
	memset(req + sizeof(pre) - 1, 'p', pad);
	memcpy(req + n - 4, "\r\n\r\n", 4);
	rc = parse_whole(req, n, status);
	free(req);
	return rc;
}

/* A chunked body of n bytes in one chunk, or in two (n - 2, then 2). */
static int
parse_chunks(size_t n, int two, int *status)
{
	static const char	 pre[] = "POST /v1/messages HTTP/1.1\r\n"
	    "Transfer-Encoding: chunked\r\n\r\n";
	char			*req;
	size_t			 len;
	int			 rc;

	assert_non_null(req = malloc(n + 128));
	len = (size_t)sprintf(req, "%s%zx\r\n", pre, two ? n - 2 : n);
	memset(req + len, 'b', two ? n - 2 : n);
	len += two ? n - 2 : n;
	if (two)
		len += (size_t)sprintf(req + len, "\r\n2\r\nbb");
	len += (size_t)sprintf(req + len, "\r\n0\r\n\r\n");
	rc = parse_whole(req, len, status);
	free(req);
	return rc;
}

/* Each bound at its value goes, one byte over it is refused: the
 * request target (IPC_HTTP_PATH_MAX), the head (PROXY_HEAD_MAX), a
 * chunked body in one chunk and in two (PROXY_BODY_MAX). */
static void
test_bounds_exact(void **state)
{
	int	status;

	(void)state;
	assert_int_equal(parse_path(IPC_HTTP_PATH_MAX, &status), 1);
	assert_int_equal(parse_path(IPC_HTTP_PATH_MAX + 1, &status), -1);
	assert_int_equal(status, 414);
	assert_int_equal(parse_head(PROXY_HEAD_MAX, &status), 1);
	assert_int_equal(parse_head(PROXY_HEAD_MAX + 1, &status), -1);
	assert_int_equal(status, 431);
	assert_int_equal(parse_chunks(PROXY_BODY_MAX, 0, &status), 1);
	assert_int_equal(parse_chunks(PROXY_BODY_MAX + 1, 0, &status), -1);
	assert_int_equal(status, 413);
	assert_int_equal(parse_chunks(PROXY_BODY_MAX, 1, &status), 1);
	assert_int_equal(parse_chunks(PROXY_BODY_MAX + 1, 1, &status), -1);
	assert_int_equal(status, 413);
}

static void
test_routes(void **state)
{
	(void)state;
	assert_true(proxy_http_route("anthropic", "POST", "/v1/messages"));
	assert_true(proxy_http_route("anthropic", "POST",
	    "/v1/messages/count_tokens?beta=true"));
	assert_false(proxy_http_route("anthropic", "GET", "/v1/messages"));
	assert_false(proxy_http_route("anthropic", "POST", "/v1/models"));
	assert_false(proxy_http_route("anthropic", "POST",
	    "/v1/chat/completions"));
	assert_true(proxy_http_route("responses", "POST", "/v1/responses"));
	assert_true(proxy_http_route("openai", "POST",
	    "/v1/chat/completions"));
	assert_false(proxy_http_route("openai", "POST", "/v1/responses"));
	assert_false(proxy_http_route("openai", "POST",
	    "/v1/chat/completions/../x"));
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_content_length),
		cmocka_unit_test(test_chunked),
		cmocka_unit_test(test_refused),
		cmocka_unit_test(test_bounds_exact),
		cmocka_unit_test(test_routes),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}

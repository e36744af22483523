/*
 * Unit tests of the LLM client's parsers and builders: SSE, the three
 * wire formats on captured real-shaped payloads (whole and streamed in
 * every chunking), request bodies, text-mode tool calls, cassettes.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "llm/llm_int.h"
#include "tests/llm/llm_testutil.h"

/* ---- SSE ---- */

struct sse_seen {
	char	events[16][32];
	char	data[16][256];
	size_t	n;
};

static int
sse_collect(const char *event, const char *data, size_t len, void *arg)
{
	struct sse_seen	*s = arg;

	assert_true(s->n < 16);
	assert_int_equal(strlen(data), len);
	snprintf(s->events[s->n], sizeof(s->events[0]), "%s", event);
	snprintf(s->data[s->n], sizeof(s->data[0]), "%s", data);
	s->n++;
	return 0;
}

static const char sse_text[] =
    ": keep-alive comment\r\n"
    "event: one\r\n"
    "data: a\r\n"
    "data:b\r\n"
    "\r\n"
    "id: 7\n"
    "retry: 100\n"
    "data: {\"x\": 1}\n"
    "\n"
    "event: three\r"
    "data: cr only\r"
    "\r"
    "data\n"
    "\n"
    "data: unterminated event at EOF is dropped\n";

static void
sse_check(const struct sse_seen *s)
{
	assert_int_equal(s->n, 4);
	assert_string_equal(s->events[0], "one");
	assert_string_equal(s->data[0], "a\nb");
	assert_string_equal(s->events[1], "message");
	assert_string_equal(s->data[1], "{\"x\": 1}");
	assert_string_equal(s->events[2], "three");
	assert_string_equal(s->data[2], "cr only");
	assert_string_equal(s->data[3], "");
}

static void
test_sse_whole_and_split(void **state)
{
	struct llm_sse	 p;
	struct sse_seen	 s;
	size_t		 len = sizeof(sse_text) - 1, i, step;

	(void)state;
	/* Every chunk size gives the same events, \r\n split or not. */
	for (step = 1; step <= len; step++) {
		memset(&s, 0, sizeof(s));
		llm_sse_init(&p, 1024);
		for (i = 0; i < len; i += step)
			assert_int_equal(llm_sse_feed(&p, sse_text + i,
			    i + step > len ? len - i : step, sse_collect,
			    &s), 0);
		sse_check(&s);
		llm_sse_free(&p);
	}
}

static void
test_sse_bounded(void **state)
{
	struct llm_sse	 p;
	struct sse_seen	 s;
	char		 big[300];
	const char	*line = "data: 0123456789012345678901234567890123456789\n";
	int		 i;

	(void)state;
	memset(&s, 0, sizeof(s));
	memset(big, 'x', sizeof(big));
	llm_sse_init(&p, 128);
	assert_int_equal(llm_sse_feed(&p, "data: ", 6, sse_collect, &s), 0);
	/* One line over the bound fails instead of growing. */
	assert_int_equal(llm_sse_feed(&p, big, sizeof(big), sse_collect, &s),
	    -1);
	llm_sse_free(&p);
	/* Many data lines adding up over the bound fail too. */
	llm_sse_init(&p, 128);
	for (i = 0; i < 3; i++)
		assert_int_equal(llm_sse_feed(&p, line, strlen(line),
		    sse_collect, &s), 0);
	assert_int_equal(llm_sse_feed(&p, line, strlen(line), sse_collect, &s),
	    -1);
	assert_int_equal(s.n, 0);
	llm_sse_free(&p);
}

/* ---- wire formats ---- */

static int
feed_event(const char *event, const char *data, size_t len, void *arg)
{
	struct llm_acc	*a = arg;
	const struct llm_wire *w = a->arg;

	return w->event(a, event, data, len);
}

/* Parse a captured payload, whole or as a stream fed in `step` bytes. */
static int
parse_payload(const struct llm_wire *w, const char *file, size_t step,
    struct msg_reply *r, char *err, size_t errsz)
{
	struct llm_acc	 a;
	struct llm_sse	 s;
	char		*p;
	size_t		 len, i;
	int		 rc = 0;

	p = llm_test_slurp(llm_test_path(file), &len);
	llm_acc_init(&a, 0);
	if (strstr(file, ".sse") != NULL) {
		a.arg = (void *)(uintptr_t)w;	/* for feed_event */
		llm_sse_init(&s, 0);
		for (i = 0; rc == 0 && i < len; i += step)
			rc = llm_sse_feed(&s, p + i, i + step > len ? len - i :
			    step, feed_event, &a);
		llm_sse_free(&s);
		if (rc == 0 && !a.done)
			rc = -1;
	} else
		rc = w->parse(&a, p, len);
	if (rc == 0)
		rc = llm_acc_finish(&a, r);
	snprintf(err, errsz, "%s", a.err);
	llm_acc_free(&a);
	free(p);
	return rc;
}

static void
test_openai_whole(void **state)
{
	struct msg_reply	r;
	char			err[LLM_ERRSZ];

	(void)state;
	assert_int_equal(parse_payload(&llm_openai_wire, "payloads/openai_chat.json",
	    0, &r, err, sizeof(err)), 0);
	assert_string_equal(r.msg.text, "Let me look at both files.");
	assert_int_equal(r.msg.ncalls, 2);
	assert_string_equal(r.msg.calls[0].id, "call_Xy1");
	assert_string_equal(r.msg.calls[0].name, "read");
	assert_string_equal(r.msg.calls[0].args, "{\"path\":\"src/main.c\"}");
	assert_string_equal(r.msg.calls[1].name, "grep");
	assert_int_equal(r.stop, MSG_STOP_TOOL_CALLS);
	assert_int_equal(r.usage.input, 412);
	assert_int_equal(r.usage.output, 57);
	msg_reply_free(&r);

	/* Ollama: arguments as an object, "stop" although it called a tool. */
	assert_int_equal(parse_payload(&llm_openai_wire, "payloads/ollama_chat.json",
	    0, &r, err, sizeof(err)), 0);
	assert_null(r.msg.text);
	assert_int_equal(r.msg.ncalls, 1);
	assert_string_equal(r.msg.calls[0].args, "{\"pattern\":\"*.c\"}");
	assert_int_equal(r.stop, MSG_STOP_TOOL_CALLS);
	msg_reply_free(&r);
}

static void
test_openai_stream(void **state)
{
	struct msg_reply	r;
	char			err[LLM_ERRSZ];
	size_t			step;

	(void)state;
	for (step = 1; step < 600; step += 37) {
		assert_int_equal(parse_payload(&llm_openai_wire,
		    "payloads/openai_stream.sse", step, &r, err, sizeof(err)), 0);
		assert_string_equal(r.msg.text, "Checking caf\xc3\xa9.");
		assert_int_equal(r.msg.ncalls, 2);
		assert_string_equal(r.msg.calls[0].id, "call_A");
		assert_string_equal(r.msg.calls[0].args, "{\"path\":\"a.c\"}");
		assert_string_equal(r.msg.calls[1].id, "call_B");
		assert_string_equal(r.msg.calls[1].name, "list");
		assert_int_equal(r.stop, MSG_STOP_TOOL_CALLS);
		assert_int_equal(r.usage.input, 120);
		assert_int_equal(r.usage.output, 31);
		msg_reply_free(&r);
	}
}

static void
test_anthropic(void **state)
{
	struct msg_reply	r;
	char			err[LLM_ERRSZ];
	size_t			step;

	(void)state;
	assert_int_equal(parse_payload(&llm_anthropic_wire,
	    "payloads/anthropic_message.json", 0, &r, err, sizeof(err)), 0);
	assert_string_equal(r.msg.text, "I'll read the file.");
	assert_int_equal(r.msg.ncalls, 1);
	assert_string_equal(r.msg.calls[0].id, "toolu_01A09q90qw90lq917835lq9");
	assert_string_equal(r.msg.calls[0].args,
	    "{\"path\":\"README.md\",\"limit\":40}");
	assert_int_equal(r.stop, MSG_STOP_TOOL_CALLS);
	assert_int_equal(r.usage.input, 572);	/* cache reads count */
	assert_int_equal(r.usage.output, 71);
	msg_reply_free(&r);
	for (step = 1; step < 500; step += 29) {
		assert_int_equal(parse_payload(&llm_anthropic_wire,
		    "payloads/anthropic_stream.sse", step, &r, err,
		    sizeof(err)), 0);
		assert_string_equal(r.msg.text, "Okay, reading.");
		assert_int_equal(r.msg.ncalls, 1);
		assert_string_equal(r.msg.calls[0].name, "read");
		assert_string_equal(r.msg.calls[0].args, "{\"path\": \"src/a.c\"}");
		assert_int_equal(r.usage.input, 472);
		assert_int_equal(r.usage.output, 89);
		msg_reply_free(&r);
	}
}

static void
test_responses(void **state)
{
	struct msg_reply	r;
	char			err[LLM_ERRSZ];
	size_t			step;

	(void)state;
	assert_int_equal(parse_payload(&llm_responses_wire,
	    "payloads/responses.json", 0, &r, err, sizeof(err)), 0);
	assert_string_equal(r.msg.text, "Listing the directory first.");
	assert_int_equal(r.msg.ncalls, 1);
	assert_string_equal(r.msg.calls[0].id, "call_12345xyz");
	assert_string_equal(r.msg.calls[0].args, "{\"path\":\"src\"}");
	assert_int_equal(r.stop, MSG_STOP_TOOL_CALLS);
	assert_int_equal(r.usage.output, 87);
	msg_reply_free(&r);
	for (step = 1; step < 700; step += 41) {
		assert_int_equal(parse_payload(&llm_responses_wire,
		    "payloads/responses_stream.sse", step, &r, err,
		    sizeof(err)), 0);
		assert_string_equal(r.msg.text, "Hi there");
		assert_int_equal(r.msg.ncalls, 1);
		assert_string_equal(r.msg.calls[0].id, "call_1");
		assert_string_equal(r.msg.calls[0].args,
		    "{\"pattern\":\"main\"}");
		assert_int_equal(r.usage.input, 55);
		msg_reply_free(&r);
	}
}

static void
test_malformed_quoted(void **state)
{
	const struct llm_wire	*w[3] = { &llm_openai_wire,
				    &llm_anthropic_wire, &llm_responses_wire };
	static const char	 bad[] = "\x1b[31m{\"choices\": [tru";
	static const char	 notool[] = "{\"type\":\"content_block_delta\","
				    "\"index\":4,\"delta\":{\"type\":"
				    "\"input_json_delta\",\"partial_json\":\"{\"}}";
	struct llm_acc		 a;
	char			 big[4096];
	size_t			 i;

	(void)state;
	for (i = 0; i < 3; i++) {
		llm_acc_init(&a, 0);
		assert_int_equal(w[i]->parse(&a, bad, sizeof(bad) - 1), -1);
		assert_non_null(strstr(a.err, "malformed JSON"));
		/* The escape byte is quoted visibly, never raw. */
		assert_non_null(strstr(a.err, "\\x1b[31m"));
		assert_null(strchr(a.err, '\x1b'));
		llm_acc_free(&a);
	}
	/* A long body is quoted in a bounded snippet. */
	memset(big, 'A', sizeof(big));
	big[0] = '<';
	llm_acc_init(&a, 0);
	assert_int_equal(llm_openai_wire.parse(&a, big, sizeof(big)), -1);
	assert_true(strlen(a.err) < LLM_SNIPPET + 120);
	assert_non_null(strstr(a.err, "..."));
	llm_acc_free(&a);
	/* Valid JSON of the wrong shape. */
	llm_acc_init(&a, 0);
	assert_int_equal(llm_openai_wire.parse(&a, "{\"choices\": 3}", 14), -1);
	assert_non_null(strstr(a.err, "choices"));
	llm_acc_free(&a);
	llm_acc_init(&a, 0);
	assert_int_equal(llm_anthropic_wire.parse(&a, "[1]", 3), -1);
	llm_acc_free(&a);
	/* A stream delta for a block that is not a tool_use. */
	llm_acc_init(&a, 0);
	assert_int_equal(llm_anthropic_wire.event(&a, "content_block_delta",
	    notool, strlen(notool)), -1);
	assert_non_null(strstr(a.err, "not a tool_use"));
	llm_acc_free(&a);
}

static void
test_server_error_inband(void **state)
{
	struct llm_acc	a;
	const char	*ovl = "{\"type\":\"error\",\"error\":{\"type\":"
			    "\"overloaded_error\",\"message\":\"Overloaded\"}}";
	const char	*died = "{\"error\":{\"message\":\"upstream died\"}}";

	(void)state;
	llm_acc_init(&a, 0);
	assert_int_equal(llm_anthropic_wire.event(&a, "error", ovl, strlen(ovl)),
	    -1);
	assert_true(a.server_error);
	assert_non_null(strstr(a.err, "Overloaded"));
	llm_acc_free(&a);
	llm_acc_init(&a, 0);
	assert_int_equal(llm_openai_wire.event(&a, "message", died,
	    strlen(died)), -1);
	assert_true(a.server_error);
	llm_acc_free(&a);
}

/* ---- request bodies ---- */

static void
conv(struct msg_list *l)
{
	struct msg	m;

	msg_list_init(l);
	assert_int_equal(msg_list_add_text(l, MSG_SYSTEM, "You are terse."), 0);
	assert_int_equal(msg_list_add_text(l, MSG_USER, "List src."), 0);
	memset(&m, 0, sizeof(m));
	m.role = MSG_ASSISTANT;
	assert_int_equal(msg_add_call(&m, "c1", "list", "{\"path\":\"src\"}"), 0);
	assert_int_equal(msg_add_call(&m, "c2", "read", "not json"), 0);
	assert_int_equal(msg_list_take(l, &m), 0);
	memset(&m, 0, sizeof(m));
	m.role = MSG_TOOL;
	m.call_id = strdup("c1");
	m.name = strdup("list");
	m.text = strdup("a.c\nb.c\xff");	/* invalid UTF-8 from a file */
	assert_int_equal(msg_list_take(l, &m), 0);
	memset(&m, 0, sizeof(m));
	m.role = MSG_TOOL;
	m.call_id = strdup("c2");
	m.name = strdup("read");
	m.text = strdup("no such file");
	m.is_error = 1;
	assert_int_equal(msg_list_take(l, &m), 0);
}

static const struct msg_tool test_tools[] = {
	{ "list", "List a directory", "{\"type\":\"object\",\"properties\":"
	    "{\"path\":{\"type\":\"string\"}}}" },
	{ "read", NULL, NULL },
};

static json_t *
build(const struct llm_wire *w, const struct msg_list *l, int stream)
{
	struct llm_config	cfg;
	struct llm_wire_req	req;
	json_t			*o;
	char			*s, err[LLM_ERRSZ];

	llm_config_init(&cfg);
	cfg.temperature = 0.5;
	memset(&req, 0, sizeof(req));
	req.cfg = &cfg;
	req.model = "m1";
	req.max_tokens = 100;
	req.msgs = l;
	req.tools = test_tools;
	req.ntools = 2;
	req.stream = stream;
	assert_non_null(s = w->build(&req, err, sizeof(err)));
	assert_non_null(o = json_loads(s, 0, NULL));
	free(s);
	return o;
}

static void
test_build_openai(void **state)
{
	struct msg_list	 l;
	json_t		*o, *m;

	(void)state;
	conv(&l);
	o = build(&llm_openai_wire, &l, 1);
	assert_string_equal(llm_json_str(o, "model"), "m1");
	assert_true(json_is_true(json_object_get(o, "stream")));
	assert_int_equal(json_integer_value(json_object_get(o, "max_tokens")),
	    100);
	m = json_object_get(o, "messages");
	assert_int_equal(json_array_size(m), 5);
	assert_string_equal(llm_json_str(json_array_get(m, 0), "role"), "system");
	assert_string_equal(llm_json_str(json_array_get(m, 2), "role"),
	    "assistant");
	assert_true(json_is_null(json_object_get(json_array_get(m, 2),
	    "content")));
	assert_string_equal(llm_json_str(json_object_get(json_array_get(
	    json_object_get(json_array_get(m, 2), "tool_calls"), 1),
	    "function"), "arguments"), "not json");
	assert_string_equal(llm_json_str(json_array_get(m, 3), "tool_call_id"),
	    "c1");
	/* The invalid byte became U+FFFD instead of failing the request. */
	assert_string_equal(llm_json_str(json_array_get(m, 3), "content"),
	    "a.c\nb.c\xef\xbf\xbd");
	assert_int_equal(json_array_size(json_object_get(o, "tools")), 2);
	assert_string_equal(llm_json_str(json_object_get(json_array_get(
	    json_object_get(o, "tools"), 0), "function"), "description"),
	    "List a directory");
	json_decref(o);
	msg_list_free(&l);
}

static void
test_build_anthropic(void **state)
{
	struct msg_list	 l;
	json_t		*o, *m, *c;

	(void)state;
	conv(&l);
	o = build(&llm_anthropic_wire, &l, 0);
	assert_string_equal(llm_json_str(o, "system"), "You are terse.");
	m = json_object_get(o, "messages");
	/* user, assistant, then both results merged into one user turn */
	assert_int_equal(json_array_size(m), 3);
	c = json_object_get(json_array_get(m, 1), "content");
	assert_int_equal(json_array_size(c), 2);
	assert_string_equal(llm_json_str(json_array_get(c, 0), "type"),
	    "tool_use");
	assert_string_equal(llm_json_str(json_object_get(json_array_get(c, 0),
	    "input"), "path"), "src");
	/* Garbage arguments become an empty object, never a bad request. */
	assert_int_equal(json_object_size(json_object_get(json_array_get(c, 1),
	    "input")), 0);
	c = json_object_get(json_array_get(m, 2), "content");
	assert_int_equal(json_array_size(c), 2);
	assert_string_equal(llm_json_str(json_array_get(c, 1), "tool_use_id"),
	    "c2");
	assert_true(json_is_true(json_object_get(json_array_get(c, 1),
	    "is_error")));
	assert_non_null(json_object_get(json_array_get(json_object_get(o,
	    "tools"), 1), "input_schema"));
	json_decref(o);
	msg_list_free(&l);
}

static void
test_build_responses(void **state)
{
	struct msg_list	 l;
	json_t		*o, *in;

	(void)state;
	conv(&l);
	o = build(&llm_responses_wire, &l, 1);
	assert_string_equal(llm_json_str(o, "instructions"), "You are terse.");
	assert_true(json_is_false(json_object_get(o, "store")));
	in = json_object_get(o, "input");
	assert_int_equal(json_array_size(in), 5);
	assert_string_equal(llm_json_str(json_array_get(in, 1), "type"),
	    "function_call");
	assert_string_equal(llm_json_str(json_array_get(in, 1), "call_id"), "c1");
	assert_string_equal(llm_json_str(json_array_get(in, 3), "type"),
	    "function_call_output");
	assert_int_equal(json_integer_value(json_object_get(o,
	    "max_output_tokens")), 100);
	json_decref(o);
	msg_list_free(&l);
}

/* ---- text-mode tool calls ---- */

static void
test_textcall_parse(void **state)
{
	struct msg	m;

	(void)state;
	memset(&m, 0, sizeof(m));
	m.role = MSG_ASSISTANT;
	m.text = strdup("I will look.\n<tool_call>\n{\"name\": \"read\", "
	    "\"arguments\": {\"path\": \"a.c\"}}\n</tool_call>\n<tool_call>"
	    "{\"name\": \"list\", \"arguments\": \"{}\"}</tool_call>");
	assert_int_equal(llm_textcall_parse(&m), 2);
	assert_string_equal(m.text, "I will look.");
	assert_string_equal(m.calls[0].name, "read");
	assert_string_equal(m.calls[0].args, "{\"path\":\"a.c\"}");
	assert_string_equal(m.calls[1].args, "{}");
	msg_free(&m);

	/* Fenced JSON, with an array of calls. */
	m.text = strdup("Plan:\n```json\n[{\"name\":\"glob\",\"parameters\":"
	    "{\"pattern\":\"*.h\"}},{\"name\":\"grep\",\"arguments\":{}}]\n```\n");
	assert_int_equal(llm_textcall_parse(&m), 2);
	assert_string_equal(m.text, "Plan:");
	assert_string_equal(m.calls[0].name, "glob");
	msg_free(&m);

	/* An unclosed block at the end (the model stopped there). */
	m.text = strdup("<tool_call>{\"name\":\"bash\",\"arguments\":{\"cmd\":"
	    "\"ls\"}}");
	assert_int_equal(llm_textcall_parse(&m), 1);
	assert_null(m.text);
	msg_free(&m);

	/* Not calls: prose, a code fence of C, broken JSON stay text. */
	m.text = strdup("Use ```c\nint x;\n``` and <tool_call>{broken"
	    "</tool_call>.");
	assert_int_equal(llm_textcall_parse(&m), 0);
	assert_int_equal(m.ncalls, 0);
	assert_non_null(strstr(m.text, "{broken"));
	msg_free(&m);

	/* A bare call object as the whole answer. */
	m.text = strdup(" {\"name\":\"list\",\"arguments\":{\"path\":\".\"}} ");
	assert_int_equal(llm_textcall_parse(&m), 1);
	msg_free(&m);
}

static void
test_textcall_rewrite(void **state)
{
	struct msg_list	l, out;

	(void)state;
	conv(&l);
	assert_int_equal(llm_textcall_rewrite(&l, test_tools, 2, &out), 0);
	assert_int_equal(out.n, 4);
	assert_int_equal(out.v[0].role, MSG_SYSTEM);
	assert_non_null(strstr(out.v[0].text, "You are terse."));
	assert_non_null(strstr(out.v[0].text, "\"name\":\"list\""));
	assert_non_null(strstr(out.v[0].text, "<tool_call>"));
	assert_int_equal(out.v[2].role, MSG_ASSISTANT);
	assert_int_equal(out.v[2].ncalls, 0);
	assert_non_null(strstr(out.v[2].text, "<tool_call>\n{\"name\":\"list\""));
	assert_int_equal(out.v[3].role, MSG_USER);
	assert_non_null(strstr(out.v[3].text, "\"error\":true"));
	assert_non_null(strstr(out.v[3].text, "no such file"));
	msg_list_free(&out);
	msg_list_free(&l);
}

/* ---- cassettes ---- */

static void
test_cassette_roundtrip(void **state)
{
	struct llm_cassette	*c;
	struct llm_result	 res, got;
	char			 path[] = "/tmp/warren-cassette.XXXXXX", err[512];
	int			 fd;
	FILE			*f;

	(void)state;
	assert_true((fd = mkstemp(path)) != -1);
	close(fd);
	assert_non_null(c = llm_cassette_open(path, 1, err, sizeof(err)));
	memset(&res, 0, sizeof(res));
	res.reply.msg.role = MSG_ASSISTANT;
	res.reply.msg.text = strdup("answer \x01");
	assert_int_equal(msg_add_call(&res.reply.msg, "k1", "read", "{\"a\":1}"),
	    0);
	res.reply.stop = MSG_STOP_TOOL_CALLS;
	res.reply.usage.input = 3;
	res.reply.usage.output = 4;
	assert_int_equal(llm_cassette_write(c, "0.1", 2, LLM_PURPOSE_TURN,
	    "openai", "m", "{\"model\":\"m\"}", &res), 0);
	llm_result_free(&res);
	res.err = LLM_ERR_HTTP;
	res.status = 401;
	res.error = strdup("bad key");
	assert_int_equal(llm_cassette_write(c, "0.2", 0, LLM_PURPOSE_SUMMARY,
	    "openai", "m", "{}", &res), 0);
	llm_result_free(&res);
	llm_cassette_close(c);

	assert_non_null(c = llm_cassette_open(path, 0, err, sizeof(err)));
	memset(&got, 0, sizeof(got));
	assert_int_equal(llm_cassette_find(c, "0.1", 2, LLM_PURPOSE_TURN, &got),
	    0);
	assert_int_equal(got.err, LLM_OK);
	assert_string_equal(got.reply.msg.text, "answer \x01");
	assert_string_equal(got.reply.msg.calls[0].id, "k1");
	assert_int_equal(got.reply.stop, MSG_STOP_TOOL_CALLS);
	assert_int_equal(got.reply.usage.output, 4);
	llm_result_free(&got);
	assert_int_equal(llm_cassette_find(c, "0.2", 0, LLM_PURPOSE_SUMMARY,
	    &got), 0);
	assert_int_equal(got.err, LLM_ERR_HTTP);
	assert_int_equal(got.status, 401);
	llm_result_free(&got);
	/* Purpose and step are part of the key. */
	assert_int_equal(llm_cassette_find(c, "0.1", 2, LLM_PURPOSE_SUMMARY,
	    &got), -1);
	assert_int_equal(llm_cassette_find(c, "0.1", 3, LLM_PURPOSE_TURN, &got),
	    -1);
	/* Each answer is the caller's own: asked again, the same reply. */
	assert_int_equal(llm_cassette_find(c, "0.1", 2, LLM_PURPOSE_TURN, &got),
	    0);
	assert_string_equal(got.reply.msg.calls[0].args, "{\"a\":1}");
	llm_result_free(&got);
	llm_cassette_close(c);

	/* A reply that cannot be used loads, and fails only the step that
	   asks for it; a recorded error's message comes back escaped. */
	assert_non_null(f = fopen(path, "a"));
	fprintf(f, "{\"agent\":\"0.3\",\"step\":1,\"reply\":"
	    "{\"stop\":\"sideways\"}}\n{\"agent\":\"0.4\",\"step\":1,"
	    "\"error\":{\"kind\":\"http\",\"status\":500,\"message\":"
	    "\"x\\u0001y\"}}\n");
	fclose(f);
	assert_non_null(c = llm_cassette_open(path, 0, err, sizeof(err)));
	assert_int_equal(llm_cassette_find(c, "0.3", 1, LLM_PURPOSE_TURN, &got),
	    0);
	assert_int_equal(got.err, LLM_ERR_PARSE);
	assert_non_null(strstr(got.error, "agent 0.3 step 1: unknown stop "
	    "reason \"sideways\""));
	llm_result_free(&got);
	assert_int_equal(llm_cassette_find(c, "0.4", 1, LLM_PURPOSE_TURN, &got),
	    0);
	assert_int_equal(got.err, LLM_ERR_HTTP);
	assert_int_equal(got.status, 500);
	assert_null(strchr(got.error, '\x01'));
	llm_result_free(&got);
	assert_int_equal(llm_cassette_find(c, "0.1", 2, LLM_PURPOSE_TURN, &got),
	    0);
	assert_int_equal(got.err, LLM_OK);
	llm_result_free(&got);
	llm_cassette_close(c);

	/* A bad line is reported with file:line. */
	assert_non_null(f = fopen(path, "a"));
	fprintf(f, "{\"agent\":\"0\",\"step\":1}\n");
	fclose(f);
	assert_null(c = llm_cassette_open(path, 0, err, sizeof(err)));
	assert_non_null(strstr(err, ":6: neither \"reply\" nor \"error\""));
	unlink(path);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_sse_whole_and_split),
		cmocka_unit_test(test_sse_bounded),
		cmocka_unit_test(test_openai_whole),
		cmocka_unit_test(test_openai_stream),
		cmocka_unit_test(test_anthropic),
		cmocka_unit_test(test_responses),
		cmocka_unit_test(test_malformed_quoted),
		cmocka_unit_test(test_server_error_inband),
		cmocka_unit_test(test_build_openai),
		cmocka_unit_test(test_build_anthropic),
		cmocka_unit_test(test_build_responses),
		cmocka_unit_test(test_textcall_parse),
		cmocka_unit_test(test_textcall_rewrite),
		cmocka_unit_test(test_cassette_roundtrip),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}

/*
 * The tokens a passed-through answer reports (llm_http_usage), which the
 * run's budget counts: each wire's body whole and streamed.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "llm/llm.h"

static void
expect(const char *body, int sse, uint64_t in, uint64_t out)
{
	struct msg_usage	u;

	llm_http_usage(body, strlen(body), sse, &u);
	if (u.input != in || u.output != out)
		fail_msg("%s: %llu/%llu, want %llu/%llu", body,
		    (unsigned long long)u.input, (unsigned long long)u.output,
		    (unsigned long long)in, (unsigned long long)out);
}

static void
test_usage(void **state)
{
	(void)state;
	/* Anthropic: cache reads and writes are input too. */
	expect("{\"type\":\"message\",\"usage\":{\"input_tokens\":10,"
	    "\"cache_read_input_tokens\":5,\"cache_creation_input_tokens\":2,"
	    "\"output_tokens\":4}}", 0, 17, 4);
	expect("event: message_start\ndata: {\"type\":\"message_start\","
	    "\"message\":{\"usage\":{\"input_tokens\":25,\"output_tokens\":1}}}"
	    "\n\nevent: content_block_delta\ndata: {\"type\":"
	    "\"content_block_delta\",\"delta\":{\"text\":\"usage\"}}\n\n"
	    "event: message_delta\ndata: {\"type\":\"message_delta\",\"usage\":"
	    "{\"output_tokens\":15}}\n\n", 1, 25, 15);
	/* Responses. */
	expect("{\"object\":\"response\",\"usage\":{\"input_tokens\":30,"
	    "\"output_tokens\":6}}", 0, 30, 6);
	expect("data: {\"type\":\"response.created\",\"response\":{}}\n\n"
	    "data: {\"type\":\"response.completed\",\"response\":{\"usage\":"
	    "{\"input_tokens\":31,\"output_tokens\":7}}}\n\n", 1, 31, 7);
	/* Chat completions. */
	expect("{\"choices\":[],\"usage\":{\"prompt_tokens\":40,"
	    "\"completion_tokens\":8}}", 0, 40, 8);
	expect("data: {\"choices\":[{\"delta\":{\"content\":\"hi\"}}]}\n\n"
	    "data: {\"choices\":[],\"usage\":{\"prompt_tokens\":41,"
	    "\"completion_tokens\":9}}\n\ndata: [DONE]\n\n", 1, 41, 9);
	/* Hostile or broken: nothing counted, nothing crashes. */
	expect("not json", 0, 0, 0);
	expect("{\"usage\":{\"input_tokens\":-5,\"output_tokens\":\"9\"}}", 0,
	    0, 0);
	expect("data: {\"usage\":", 1, 0, 0);
	expect("", 1, 0, 0);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_usage),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}

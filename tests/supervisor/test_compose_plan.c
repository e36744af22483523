/*
 * compose_plan.c: what a plan agent's answer and a pattern's arguments
 * must be before anything runs (docs/composition.md). The plan is the
 * model's output: every malformed shape is refused with a message that
 * says what is wrong.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "supervisor/compose.h"
#include "supervisor/compose_testapi.h"

/* The error of a refused plan (static), or fail if it was accepted. */
static const char *
refused(const char *text)
{
	static char		 err[512];
	struct compose_stepdef	*v;
	size_t			 n;

	if (compose_plan_parse(text, &v, &n, err, sizeof(err)) == 0) {
		compose_plan_free(v, n);
		fail_msg("accepted: %s", text);
	}
	assert_null(v);
	return err;
}

static void
test_plan_accepted(void **state)
{
	struct compose_stepdef	*v;
	char			 err[256];
	size_t			 n;

	(void)state;
	/* In prose and a code fence, as models write it. */
	assert_int_equal(compose_plan_parse("Here is the plan:\n```json\n"
	    "{\"steps\":[{\"id\":\"A\",\"task\":\"a\"},"
	    "{\"id\":\"B\",\"task\":\"b\",\"profile\":\"explore\","
	    "\"depends_on\":[\"A\"]},"
	    "{\"id\":\"D\",\"task\":\"d\",\"depends_on\":[\"B\",\"A\"]}]}\n"
	    "```\nDone.", &v, &n, err, sizeof(err)), 0);
	assert_int_equal(n, 3);
	assert_string_equal(v[0].profile, "general");
	assert_string_equal(v[1].profile, "explore");
	assert_int_equal(v[2].ndeps, 2);
	assert_int_equal(v[2].deps[0], 1);
	assert_int_equal(v[2].deps[1], 0);
	compose_plan_free(v, n);
	/* A bare array of steps, depending on a later one. */
	assert_int_equal(compose_plan_parse("[{\"id\":\"x\",\"task\":\"t\","
	    "\"depends_on\":[\"y\"]},{\"id\":\"y\",\"task\":\"u\"}]", &v, &n,
	    err, sizeof(err)), 0);
	assert_int_equal(n, 2);
	assert_int_equal(v[0].deps[0], 1);
	compose_plan_free(v, n);
}

static void
test_plan_refused(void **state)
{
	char	big[2048];
	size_t	i, len = 0;

	(void)state;
	assert_non_null(strstr(refused("no plan at all"), "holds no JSON"));
	assert_non_null(strstr(refused("{\"plan\":[]}"), "\"steps\" array"));
	assert_non_null(strstr(refused("{\"steps\":[]}"), "1 to 16 steps"));
	assert_non_null(strstr(refused("{\"steps\":[{\"id\":\"A\"}]}"),
	    "needs an \"id\""));
	assert_non_null(strstr(refused("{\"steps\":[{\"id\":\"A B\","
	    "\"task\":\"t\"}]}"), "needs an \"id\""));
	assert_non_null(strstr(refused("{\"steps\":[{\"id\":\"A\",\"task\":"
	    "\"t\"},{\"id\":\"A\",\"task\":\"u\"}]}"), "two steps have the id"));
	assert_non_null(strstr(refused("{\"steps\":[{\"id\":\"A\",\"task\":"
	    "\"t\",\"depends_on\":[\"Z\"]}]}"),
	    "step \"A\" depends on unknown step \"Z\""));
	assert_non_null(strstr(refused("{\"steps\":[{\"id\":\"A\",\"task\":"
	    "\"t\",\"depends_on\":[\"A\"]}]}"), "depends on itself"));
	assert_non_null(strstr(refused("{\"steps\":[{\"id\":\"A\",\"task\":"
	    "\"t\",\"depends_on\":\"B\"}]}"), "must be an array"));
	assert_string_equal(refused("{\"steps\":["
	    "{\"id\":\"A\",\"task\":\"t\"},"
	    "{\"id\":\"B\",\"task\":\"t\",\"depends_on\":[\"A\",\"D\"]},"
	    "{\"id\":\"C\",\"task\":\"t\",\"depends_on\":[\"B\"]},"
	    "{\"id\":\"D\",\"task\":\"t\",\"depends_on\":[\"C\"]}]}"),
	    "the steps' depends_on form a cycle through B C D");
	/* 17 steps. */
	len = (size_t)snprintf(big, sizeof(big), "{\"steps\":[");
	for (i = 0; i < 17; i++)
		len += (size_t)snprintf(big + len, sizeof(big) - len,
		    "%s{\"id\":\"s%zu\",\"task\":\"t\"}", i ? "," : "", i);
	snprintf(big + len, sizeof(big) - len, "]}");
	assert_non_null(strstr(refused(big), "not 17"));
}

static void
test_args(void **state)
{
	struct compose_stepdef	*v;
	char			*task, err[256];
	size_t			 n;

	(void)state;
	assert_int_equal(compose_plan_args(COMPOSE_PARALLEL_EXPLORE,
	    "{\"task\":\"T\",\"aspects\":[\"a\",\"b\"]}", &task, &v, &n, err,
	    sizeof(err)), 0);
	assert_string_equal(task, "T");
	assert_int_equal(n, 2);
	assert_string_equal(v[1].id, "2");
	assert_string_equal(v[1].profile, "explore");
	free(task);
	compose_plan_free(v, n);
	assert_int_equal(compose_plan_args(COMPOSE_PARALLEL_EXPLORE,
	    "{\"task\":\"T\",\"aspects\":[\"a\",7]}", &task, &v, &n, err,
	    sizeof(err)), -1);
	assert_non_null(strstr(err, "aspect 2 must be a non-empty string"));
	assert_int_equal(compose_plan_args(COMPOSE_SEQUENTIAL,
	    "{\"steps\":[{\"task\":\"one\"},{\"task\":\"\"}]}", &task, &v, &n,
	    err, sizeof(err)), -1);
	assert_non_null(strstr(err, "step 2 needs a non-empty \"task\""));
	assert_int_equal(compose_plan_args(COMPOSE_PLAN_EXECUTE, "{}", &task,
	    &v, &n, err, sizeof(err)), -1);
	assert_non_null(strstr(err, "plan_execute needs a non-empty \"task\""));
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_plan_accepted),
		cmocka_unit_test(test_plan_refused),
		cmocka_unit_test(test_args),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}

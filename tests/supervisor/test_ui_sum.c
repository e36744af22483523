/*
 * ui_sum.c: the one-line summaries of tool calls and results that the
 * live view and the line log show. The text is a worker's, so hostile:
 * output that imitates bash's trailer, a cut UTF-8 sequence, no trailer.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "supervisor/run.h"

static void
sum(const char *tool, const char *text, int is_error, int want_bad,
    const char *want)
{
	char	buf[128];
	int	bad = -1;

	ui_sum_result(tool, text, is_error, &bad, buf, sizeof(buf));
	if (strcmp(buf, want) != 0 || bad != want_bad)
		fail_msg("%s %s: got \"%s\" bad %d, want \"%s\" bad %d", tool,
		    text, buf, bad, want, want_bad);
}

static void
test_bash(void **state)
{
	(void)state;
	sum("bash", "one\ntwo\n[exit status 0]\n", 0, 0, "exit 0: two");
	sum("bash", "compile error\n[exit status 1]\n", 0, 1,
	    "exit 1: compile error");
	sum("bash", "[exit status 2]\n", 0, 1, "exit 2");
	/* Output that imitates the trailer is output: the last line wins. */
	sum("bash", "[exit status 0]\n[exit status 7]\n", 0, 1,
	    "exit 7: [exit status 0]");
	sum("bash", "x\n[killed by signal 9]\n", 0, 1, "killed by signal 9: x");
	sum("bash", "[killed: timeout after 5 ms; the process group was "
	    "killed]\n", 0, 1, "killed: timeout after 5 ms; the process group "
	    "was killed");
	sum("bash", "bash: empty command", 1, 1, "bash: empty command");
}

static void
test_counts(void **state)
{
	(void)state;
	sum("glob", "a.c\nb.c\n", 0, 0, "2 files");
	sum("glob", "a.c\n[3 more matches not shown; narrow the pattern]\n",
	    0, 0, "4 files");
	sum("glob", "(no files match *.x)\n", 0, 0, "0 files");
	sum("grep", "a.c:1:x\na.c:9:y\nb.c:2:z\n", 0, 0,
	    "3 matches in 2 files");
	sum("grep", "a.c:1:x\n", 0, 0, "1 match in 1 file");
	sum("read", "     1\tfirst\n     2\tlast\n", 0, 0, "2 last");
}

static void
test_args(void **state)
{
	char	buf[64];

	(void)state;
	ui_sum_args("bash", "{\"command\":\"make test\\nmake install\"}", buf,
	    sizeof(buf));
	assert_string_equal(buf, "make test");
	ui_sum_args("delegate", "{\"profile\":\"explore\",\"task\":\"find\"}",
	    buf, sizeof(buf));
	assert_string_equal(buf, "explore: find");
	ui_sum_args("edit", "{\"path\":\"a.c\",\"old_string\":\"x\"}", buf,
	    sizeof(buf));
	assert_string_equal(buf, "a.c");
	/* A tool not in the table: its first string argument. */
	ui_sum_args("fan_out", "{\"aspects\":[\"a\"],\"task\":\"review\"}",
	    buf, sizeof(buf));
	assert_string_equal(buf, "review");
	ui_sum_args("plan", "{\"n\":1}", buf, sizeof(buf));
	assert_string_equal(buf, "{\"n\":1}");
	ui_sum_args("bash", "not json", buf, sizeof(buf));
	assert_string_equal(buf, "not json");
	/* Cut on a whole UTF-8 sequence. */
	ui_sum_args("bash", "{\"command\":\"\xc3\xa9\xc3\xa9\xc3\xa9\"}", buf,
	    4);
	assert_string_equal(buf, "\xc3\xa9");
}

static void
test_diff(void **state)
{
	char	**v;
	size_t	  more;

	(void)state;
	v = ui_sum_diff("{\"path\":\"a\",\"old_string\":\"o1\\no2\\no3\\no4\","
	    "\"new_string\":\"n1\"}", 4, 40, &more);
	assert_non_null(v);
	assert_string_equal(v[0], "- o1");
	assert_string_equal(v[1], "- o2");
	assert_string_equal(v[2], "+ n1");
	assert_null(v[3]);
	assert_int_equal(more, 2);
	ui_sum_lines_free(v);
	assert_null(ui_sum_diff("{\"path\":\"a\"}", 4, 40, &more));
	assert_null(ui_sum_diff("nope", 4, 40, &more));
}

/* The end summary's time: a short run in ms, not "0.0 s". */
static void
test_took(void **state)
{
	char	buf[32];

	(void)state;
	ui_sum_took(buf, sizeof(buf), 0);
	assert_string_equal(buf, "0 ms");
	ui_sum_took(buf, sizeof(buf), 42);
	assert_string_equal(buf, "42 ms");
	ui_sum_took(buf, sizeof(buf), 999);
	assert_string_equal(buf, "999 ms");
	ui_sum_took(buf, sizeof(buf), 1000);
	assert_string_equal(buf, "1.0 s");
	ui_sum_took(buf, sizeof(buf), 12345);
	assert_string_equal(buf, "12.3 s");
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_bash),
		cmocka_unit_test(test_counts),
		cmocka_unit_test(test_args),
		cmocka_unit_test(test_diff),
		cmocka_unit_test(test_took),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}

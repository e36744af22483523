/*
 * What an agent leaves in the workspace for the file tools, through the
 * real `warren run` with sandboxed workers and a replayed cassette
 * (SANDBOX-TESTS.md, cases 46 and 47): a FIFO made with bash, then read,
 * grepped and edited, must end the run in seconds with the tools' errors
 * in the transcript; a hard link in the workspace to a file outside it,
 * written and edited, must leave that file unchanged.
 */
#include <sys/stat.h>
#include <sys/types.h>

#include <errno.h>
#include <limits.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "tests/e2e/harness.h"

static int
setup(void **state)
{
	struct h_ws	*c = calloc(1, sizeof(*c));

	h_ws_open(c, "data\n");
	*state = c;
	return 0;
}

static int
teardown(void **state)
{
	struct h_ws	*c = *state;

	h_ws_close(c);
	free(c);
	return 0;
}

/* warren run --json on the cassette; a stuck tool shows as the agent's
 * timeout (60 s), well before the harness's hang guard. */
static void
run(struct h_ws *c, struct h_run *r)
{
	char	*argv[] = { "warren", "run", "--json", "--no-store",
		    "--agent-timeout", "60s", "--workspace", c->ws, "--replay",
		    c->cas, "tool files task", NULL };

	h_ws_cassette_close(c);
	assert_int_equal(h_warren(r, argv, NULL, NULL, NULL), 0);
}

/* 0 delegates to a general agent 0.1, whose turns are given; both end. */
static void
general(struct h_ws *c, const char *const *turns, int n)
{
	int	i;

	h_turn(c->f, "0", 1, h_calls1("a", "delegate",
	    "{\"profile\":\"general\",\"task\":\"files\"}"));
	for (i = 0; i < n; i++)
		h_turn(c->f, "0.1", i + 1, turns[i]);
	h_turn(c->f, "0.1", n + 1, h_calls1("z", "complete",
	    "{\"result\":\"x\"}"));
	h_turn(c->f, "0", 2, h_calls1("b", "complete", "{\"result\":\"ok\"}"));
}

#define RESULT(out, text) h_count_lines(out, "\"event\":\"tool_result\"", text)

/*
 * SANDBOX-TESTS.md 46: `mkfifo p`, then read, grep and edit of p, and a
 * grep of the whole workspace: each an immediate tool error (the grep of
 * the tree passes the FIFO by), no hang.
 */
static void
test_case46_fifo(void **state)
{
	struct h_ws	*c = *state;
	struct h_run	 r;
	struct stat	 st;
	char		 path[PATH_MAX], turn2[4096], c1[512], c2[512], c3[512];
	const char	*turns[3];

	turns[0] = h_calls1("m", "bash",
	    "{\"command\":\"mkfifo p && echo MADE-FIFO\"}");
	snprintf(turn2, sizeof(turn2), "[%s,%s,%s]",
	    h_call(c1, sizeof(c1), "r", "read", "{\"path\":\"p\"}"),
	    h_call(c2, sizeof(c2), "g", "grep",
	    "{\"pattern\":\"x\",\"path\":\"p\"}"),
	    h_call(c3, sizeof(c3), "t", "grep", "{\"pattern\":\"data\"}"));
	turns[1] = turn2;
	turns[2] = h_calls1("e", "edit",
	    "{\"path\":\"p\",\"old_string\":\"a\",\"new_string\":\"b\"}");
	general(c, turns, 3);
	run(c, &r);
	if (RESULT(r.out, "MADE-FIFO") != 1)
		fail_msg("the agent's bash could not make the FIFO:\n%s", r.out);
	snprintf(path, sizeof(path), "%s/p", c->ws);
	assert_int_equal(lstat(path, &st), 0);
	assert_true(S_ISFIFO(st.st_mode));
	assert_int_equal(r.status, 0);
	if (RESULT(r.out, "read: p is a FIFO, not a regular file; refused")
	    != 1 || RESULT(r.out, "grep: p is a FIFO, not a regular file")
	    != 1 || RESULT(r.out, "data.txt:1:data") != 1 ||
	    RESULT(r.out, "edit: p is a FIFO, not a regular file") != 1)
		fail_msg("the tools' answers:\n%s", r.out);
	assert_int_equal(h_count_lines(r.out, "\"path\":\"0.1\"",
	    "\"end\":\"complete\""), 1);
	h_run_free(&r);
}

/*
 * SANDBOX-TESTS.md 47: the test makes a file outside the workspace
 * (writable by anyone, so a write in place would succeed) and two hard
 * links to it inside; the agent writes one and edits the other. The file
 * outside is unchanged; the workspace's names hold the agent's text.
 */
static void
test_case47_hard_link(void **state)
{
	struct h_ws	*c = *state;
	struct h_run	 r;
	char		 out[PATH_MAX], in[PATH_MAX], in2[PATH_MAX], *s;
	const char	*turns[2];

	h_write(c->dir, "outside.txt", "OUTSIDE-ORIGINAL\n", 0666);
	snprintf(out, sizeof(out), "%s/outside.txt", c->dir);
	snprintf(in, sizeof(in), "%s/hl.txt", c->ws);
	snprintf(in2, sizeof(in2), "%s/hl2.txt", c->ws);
	assert_int_equal(link(out, in), 0);
	assert_int_equal(link(out, in2), 0);
	turns[0] = h_calls1("w", "write",
	    "{\"path\":\"hl.txt\",\"content\":\"AGENT-TEXT\\n\"}");
	turns[1] = h_calls1("e", "edit", "{\"path\":\"hl2.txt\","
	    "\"old_string\":\"OUTSIDE\",\"new_string\":\"AGENT\"}");
	general(c, turns, 2);
	run(c, &r);
	s = h_read_file(out);
	assert_string_equal(s, "OUTSIDE-ORIGINAL\n");
	free(s);
	assert_int_equal(r.status, 0);
	if (RESULT(r.out, "wrote 11 bytes to hl.txt (overwritten)") != 1 ||
	    RESULT(r.out, "edited hl2.txt: 1 replacement") != 1)
		fail_msg("the tools' answers:\n%s", r.out);
	s = h_read_file(in);
	assert_string_equal(s, "AGENT-TEXT\n");
	free(s);
	s = h_read_file(in2);
	assert_string_equal(s, "AGENT-ORIGINAL\n");
	free(s);
	h_run_free(&r);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_case46_fifo, setup,
		    teardown),
		cmocka_unit_test_setup_teardown(test_case47_hard_link, setup,
		    teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}

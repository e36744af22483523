/*
 * What an agent leaves in the workspace for the file tools, through the
 * real `warren run` with sandboxed workers and a replayed cassette
 * (SANDBOX-TESTS.md, cases 46 and 47): a FIFO made with bash, then read,
 * grepped and edited, must end the run in seconds with the tools' errors
 * in the transcript; a hard link in the workspace to a file outside it,
 * written and edited, must leave that file unchanged (the run allows the
 * link with --allow-hard-links). An --in-place run of a workspace holding
 * a hard link to a file outside is refused before it starts; links
 * whose names are all inside are not.
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
	*state = h_ws_new("data\n");
	return 0;
}

/* warren run --json on the cassette; a stuck tool shows as the agent's
 * timeout (60 s), well before the harness's hang guard. */
static void
run(struct h_ws *c, struct h_run *r)
{
	char	*argv[] = { "warren", "run", "--json", "--no-store",
		    "--agent-timeout", "60s", "--allow-hard-links",
		    "--workspace", c->ws, "--replay", c->cas, "tool files task",
		    NULL };

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

/* warren run --in-place --profile general on the cassette: the root
 * agent 0 runs turns, then completes. */
static void
run_in_place(struct h_ws *c, struct h_run *r, const char *const *turns,
    int n)
{
	char	*argv[] = { "warren", "run", "--json", "--no-store",
		    "--in-place", "--profile", "general", "--agent-timeout",
		    "60s", "--workspace", c->ws, "--replay", c->cas,
		    "in place task", NULL };
	int	 i;

	for (i = 0; i < n; i++)
		h_turn(c->f, "0", i + 1, turns[i]);
	h_turn(c->f, "0", n + 1, h_calls1("z", "complete",
	    "{\"result\":\"IN-PLACE-DONE\"}"));
	h_ws_cassette_close(c);
	assert_int_equal(h_warren(r, argv, NULL, NULL, NULL), 0);
}

/*
 * Issue 31, item 9: node_modules/lib/index.js hard-linked to a file of a
 * store outside the workspace (as pnpm lays packages out), and a second
 * file whose name holds an escape sequence. The in-place run is refused
 * before any agent starts (exit 5), naming both files escaped and what
 * to do; the agent's `echo >>` never runs, the file outside is unchanged.
 */
static void
test_in_place_link_outside_refused(void **state)
{
	struct h_ws	*c = *state;
	struct h_run	 r;
	char		 store[PATH_MAX], in[PATH_MAX], evil[PATH_MAX], *s;
	const char	*turns[1];

	snprintf(store, sizeof(store), "%s/store", c->dir);
	assert_int_equal(mkdir(store, 0755), 0);
	h_write(store, "index.js", "STORE-ORIGINAL\n", 0666);
	h_write(store, "evil.js", "E\n", 0666);
	h_write(c->ws, "node_modules/lib/keep.txt", "k\n", 0644);
	snprintf(in, sizeof(in), "%s/node_modules/lib/index.js", c->ws);
	snprintf(evil, sizeof(evil), "%s/evil\033[2Jname", c->ws);
	snprintf(store, sizeof(store), "%s/store/evil.js", c->dir);
	assert_int_equal(link(store, evil), 0);
	snprintf(store, sizeof(store), "%s/store/index.js", c->dir);
	assert_int_equal(link(store, in), 0);
	turns[0] = h_calls1("b", "bash", "{\"command\":\"echo AGENT >> "
	    "node_modules/lib/index.js && echo APPENDED\"}");
	run_in_place(c, &r, turns, 1);
	if (r.status != 5)
		fail_msg("status %d, not 5 (refused):\n%s", r.status, r.err);
	if (strstr(r.err, "2 files in the workspace have a hard link "
	    "outside it") == NULL || strstr(r.err,
	    "node_modules/lib/index.js") == NULL ||
	    strstr(r.err, "evil\\x1b[2Jname") == NULL ||
	    strchr(r.err, '\033') != NULL ||
	    strstr(r.err, "--allow-hard-links") == NULL ||
	    strstr(r.err, "Run without --in-place") == NULL)
		fail_msg("the refusal:\n%s", r.err);
	assert_null(strstr(r.out, "\"event\":\"spawned\""));
	s = h_read_file(store);
	assert_string_equal(s, "STORE-ORIGINAL\n");
	free(s);
	h_run_free(&r);
}

/*
 * The linked file in a directory the user made unreadable (000): the
 * check could not count its names, and the agent, running as the user,
 * chmods it back and appends (review31: the store's file changed as an
 * ordinary user). Refused before any agent starts: as root by the count
 * (root reads it), as a user because it cannot be read.
 */
static void
test_in_place_link_shut(void **state)
{
	struct h_ws	*c = *state;
	struct h_run	 r;
	char		 store[PATH_MAX], in[PATH_MAX], dir[PATH_MAX], *s;
	const char	*turns[1];

	snprintf(store, sizeof(store), "%s/store", c->dir);
	assert_int_equal(mkdir(store, 0755), 0);
	h_write(store, "lib.js", "STORE-ORIGINAL\n", 0666);
	h_write(c->ws, "vendor/keep.txt", "k\n", 0644);
	snprintf(in, sizeof(in), "%s/vendor/lib.js", c->ws);
	snprintf(store, sizeof(store), "%s/store/lib.js", c->dir);
	assert_int_equal(link(store, in), 0);
	snprintf(dir, sizeof(dir), "%s/vendor", c->ws);
	assert_int_equal(chmod(dir, 0), 0);
	turns[0] = h_calls1("b", "bash", "{\"command\":\"chmod 755 vendor; "
	    "echo AGENT >> vendor/lib.js && echo APPENDED\"}");
	run_in_place(c, &r, turns, 1);
	assert_int_equal(chmod(dir, 0755), 0);
	if (r.status != 5 || (strstr(r.err, "1 file in the workspace has a "
	    "hard link outside it") == NULL && strstr(r.err, "the directory "
	    "vendor cannot be read, and an agent running as you could make "
	    "it readable") == NULL) || strstr(r.err, "--allow-hard-links") ==
	    NULL)
		fail_msg("status %d, not 5 (refused):\n%s", r.status, r.err);
	assert_null(strstr(r.out, "\"event\":\"spawned\""));
	s = h_read_file(store);
	assert_string_equal(s, "STORE-ORIGINAL\n");
	free(s);
	h_run_free(&r);
}

/*
 * Hard links whose names are all in the workspace are no reason to
 * refuse: the run goes on, and the agent's append shows under both
 * names. Its `ln` of a file outside the workspace into it fails (the
 * sandbox does not show it the file).
 */
static void
test_in_place_links_inside(void **state)
{
	struct h_ws	*c = *state;
	struct h_run	 r;
	char		 a[PATH_MAX], b[PATH_MAX], out[PATH_MAX], cmd[PATH_MAX * 2];
	char		 args[PATH_MAX * 3], *s;
	const char	*turns[2];

	h_write(c->ws, "a/x.js", "X\n", 0666);
	h_write(c->dir, "outside.txt", "OUTSIDE-ORIGINAL\n", 0666);
	snprintf(a, sizeof(a), "%s/a/x.js", c->ws);
	snprintf(b, sizeof(b), "%s/b.js", c->ws);
	snprintf(out, sizeof(out), "%s/outside.txt", c->dir);
	assert_int_equal(link(a, b), 0);
	turns[0] = h_calls1("b", "bash", "{\"command\":\"echo AGENT >> a/x.js "
	    "&& echo APPENDED\"}");
	snprintf(cmd, sizeof(cmd), "ln %s l.txt && echo LINKED-IN || echo "
	    "NO-LINK", out);
	snprintf(args, sizeof(args), "{\"command\":%s}", h_js(cmd));
	turns[1] = h_calls1("l", "bash", args);
	run_in_place(c, &r, turns, 2);
	if (r.status != 0 || RESULT(r.out, "APPENDED") != 1)
		fail_msg("status %d:\n%s\n%s", r.status, r.err, r.out);
	if (RESULT(r.out, "NO-LINK") != 1 || RESULT(r.out, "LINKED-IN") != 0)
		fail_msg("the ln of a file outside:\n%s", r.out);
	s = h_read_file(b);
	assert_string_equal(s, "X\nAGENT\n");
	free(s);
	s = h_read_file(out);
	assert_string_equal(s, "OUTSIDE-ORIGINAL\n");
	free(s);
	h_run_free(&r);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_case46_fifo, setup,
		    h_ws_teardown),
		cmocka_unit_test_setup_teardown(test_case47_hard_link, setup,
		    h_ws_teardown),
		cmocka_unit_test_setup_teardown(
		    test_in_place_link_outside_refused, setup, h_ws_teardown),
		cmocka_unit_test_setup_teardown(test_in_place_link_shut,
		    setup, h_ws_teardown),
		cmocka_unit_test_setup_teardown(test_in_place_links_inside,
		    setup, h_ws_teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}

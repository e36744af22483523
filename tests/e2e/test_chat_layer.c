/*
 * warren chat's turns, and warren run --continue, share one
 * copy-on-write layer: a follow-up goes on in the layer of the run it
 * follows up (cli/cmd_run_layer.c), so it reads what the turn before
 * wrote, and its diff is the whole conversation's; the earlier run's
 * layer cannot be applied or discarded apart. And a turn's run is the one
 * its child names, not the workspace's newest run (a concurrent `warren
 * run` in the same workspace).
 */
#include <sys/stat.h>
#include <sys/types.h>

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

/* The latest turn's rule first: its requests hold the earlier turns'. */
static const char layer_script[] =
"{\"rules\": [\n"
" {\"match\": \"FRESH-MSG\", \"responses\": [{\"reply\":"
"  {\"calls\": [{\"id\": \"f1\", \"name\": \"read\", \"arguments\":"
"  {\"path\": \"chat-two.txt\"}}]}},"
"  {\"reply\": {\"calls\": [{\"id\": \"f2\", \"name\": \"complete\","
"  \"arguments\": {\"result\": \"FRESH-ANSWER\"}}]}}]},\n"
" {\"match\": \"RUN-MSG\", \"responses\": [{\"reply\":"
"  {\"calls\": [{\"id\": \"u1\", \"name\": \"read\", \"arguments\":"
"  {\"path\": \"chat-two.txt\"}}]}},"
"  {\"reply\": {\"calls\": [{\"id\": \"u2\", \"name\": \"complete\","
"  \"arguments\": {\"result\": \"RUN-ANSWER\"}}]}}]},\n"
" {\"match\": \"READ-MSG\", \"responses\": [{\"reply\":"
"  {\"calls\": [{\"id\": \"r1\", \"name\": \"read\", \"arguments\":"
"  {\"path\": \"chat-one.txt\"}}]}},"
"  {\"reply\": {\"calls\": [{\"id\": \"r2\", \"name\": \"write\","
"  \"arguments\": {\"path\": \"chat-two.txt\", \"content\":"
"  \"BODY-OF-TWO\\n\"}}]}},"
"  {\"reply\": {\"calls\": [{\"id\": \"r3\", \"name\": \"complete\","
"  \"arguments\": {\"result\": \"READ-ANSWER\"}}]}}]},\n"
" {\"match\": \"WRITE-MSG\", \"responses\": [{\"reply\":"
"  {\"calls\": [{\"id\": \"w1\", \"name\": \"write\", \"arguments\":"
"  {\"path\": \"chat-one.txt\", \"content\": \"BODY-OF-ONE\\n\"}}]}},"
"  {\"reply\": {\"calls\": [{\"id\": \"w2\", \"name\": \"complete\","
"  \"arguments\": {\"result\": \"WRITE-ANSWER\"}}]}}]}\n"
"]}\n";

static void
chat_input(struct h_ws *c, const char *name, const char *text)
{
	static char	path[PATH_MAX];

	h_write(c->dir, name, text, 0644);
	snprintf(path, sizeof(path), "%s/%s", c->dir, name);
	h_stdin_path = path;
}

/* warren NAME --db db RUN: its exit code; r filled (the caller frees). */
static int
on_run(struct h_run *r, char *const *env, const char *name, const char *db,
    const char *run)
{
	assert_int_equal(h_warren_l(r, env, name, "--db", db, run, NULL), 0);
	return r->status;
}

/* The request after the read call id: the tool's result, which holds
 * want (1) or not (0). */
static void
read_result(const char *reqs, const char *id, const char *want, int has)
{
	char	key[64];

	snprintf(key, sizeof(key), "\"tool_call_id\":\"%s\"", id);
	if ((h_count_lines(reqs, key, want) > 0) != has)
		fail_msg("the result of read %s %s %s:\n%s", id, has ?
		    "lacks" : "holds", want, reqs);
}

/* The turns' layer: copied (--cow copy, everywhere) or what this machine
 * gets (auto: an overlay where there is one). */
static void
chat_one_layer(struct h_ws *c, char *cow)
{
	struct h_fakellm fl;
	struct h_run	 r;
	char		 db[PATH_MAX], xdg[PATH_MAX + 32], *reqs;
	char		*chat[] = { "warren", "chat", "--db", db, "--workspace",
			    c->ws, "--profile", "general", "--cow", cow,
			    NULL };
	char		*env[] = { fl.env_url, "WARREN_API_KEY=k",
			    "WARREN_MODEL=fake-model", "WARREN_RETRIES=0",
			    "WARREN_WORKSPACE_MODE=cow", xdg, NULL };

	h_ws_cassette_close(c);
	snprintf(xdg, sizeof(xdg), "XDG_STATE_HOME=%s/state", c->dir);
	snprintf(db, sizeof(db), "%s/chat.db", c->dir);
	if (h_fakellm_start(&fl, c->dir, layer_script) == 1)
		skip();
	chat_input(c, "in1", "WRITE-MSG\nREAD-MSG\n/diff\n/quit\n");
	assert_int_equal(h_warren(&r, chat, env, NULL, NULL), 0);
	if (r.status != 0 || strstr(r.out, "READ-ANSWER") == NULL)
		fail_msg("%d\n%s\n%s", r.status, r.out, r.err);
	/* /diff of turn 2: what both turns wrote */
	if (strstr(r.out, "+BODY-OF-ONE") == NULL ||
	    strstr(r.out, "+BODY-OF-TWO") == NULL)
		fail_msg("/diff lacks a turn's file:\n%s\n%s", r.out, r.err);
	h_run_free(&r);
	/* warren diff 2: the same */
	assert_int_equal(on_run(&r, env, "diff", db, "2"), 0);
	if (strstr(r.out, "+BODY-OF-ONE") == NULL ||
	    strstr(r.out, "+BODY-OF-TWO") == NULL)
		fail_msg("warren diff 2 lacks a turn's file:\n%s", r.out);
	h_run_free(&r);
	/* Turn 1's layer is turn 2's now: not discarded or applied apart. */
	assert_int_equal(on_run(&r, env, "discard", db, "1"), 2);
	assert_non_null(strstr(r.err, "run 1's layer went on to run 2"));
	assert_non_null(strstr(r.err, "warren discard 2"));
	h_run_free(&r);
	assert_int_equal(on_run(&r, env, "apply", db, "1"), 2);
	assert_non_null(strstr(r.err, "warren apply 2"));
	h_run_free(&r);
	assert_int_equal(h_warren_l(&r, env, "runs", "--db", db, "--all",
	    NULL), 0);
	assert_non_null(strstr(r.out, "continued"));
	h_run_free(&r);
	/* warren run --continue goes on in it too, and holds it then. */
	assert_int_equal(h_warren_l(&r, env, "run", "--db", db,
	    "--workspace", c->ws, "--profile", "general", "--cow", cow,
	    "--continue", "2", "RUN-MSG", NULL), 0);
	assert_int_equal(r.status, 0);
	h_run_free(&r);
	assert_int_equal(on_run(&r, env, "discard", db, "2"), 2);
	assert_non_null(strstr(r.err, "run 2's layer went on to run 3"));
	h_run_free(&r);
	/* Discarded: the next follow-up starts a layer of its own. */
	assert_int_equal(on_run(&r, env, "discard", db, "3"), 0);
	h_run_free(&r);
	assert_int_equal(h_warren_l(&r, env, "run", "--db", db,
	    "--workspace", c->ws, "--profile", "general", "--cow", cow,
	    "--continue", "3", "FRESH-MSG", NULL), 0);
	assert_int_equal(r.status, 0);
	h_run_free(&r);
	h_fakellm_stop(&fl);
	reqs = h_read_file(fl.log);
	/* Turn 2's read of turn 1's file, and run 3's of turn 2's, found
	 * them in the layer; run 4's, after the discard, did not. */
	read_result(reqs, "r1", "BODY-OF-ONE", 1);
	read_result(reqs, "u1", "BODY-OF-TWO", 1);
	read_result(reqs, "f1", "BODY-OF-TWO", 0);
	free(reqs);
}

static void
test_chat_one_layer(void **state)
{
	chat_one_layer(*state, "copy");
}

static void
test_chat_one_layer_auto(void **state)
{
	chat_one_layer(*state, "auto");
}

/* Both requests held until both came: turn 1's and the concurrent
 * run's, so that the concurrent run is the workspace's newest when turn 1
 * ends. */
static const char race_script[] =
"{\"gather\": 2, \"rules\": [\n"
" {\"match\": \"NEXT-MSG\", \"repeat\": true, \"responses\": [{\"reply\":"
"  {\"calls\": [{\"id\": \"n1\", \"name\": \"complete\", \"arguments\":"
"  {\"result\": \"NEXT-ANSWER\"}}]}}]},\n"
" {\"match\": \"OTHER-TASK\", \"responses\": [{\"reply\":"
"  {\"calls\": [{\"id\": \"o1\", \"name\": \"complete\", \"arguments\":"
"  {\"result\": \"OTHER-ANSWER\"}}]}}]},\n"
" {\"match\": \"FIRST-MSG\", \"responses\": [{\"reply\":"
"  {\"calls\": [{\"id\": \"t1\", \"name\": \"complete\", \"arguments\":"
"  {\"result\": \"FIRST-ANSWER\"}}]}}]}\n"
"]}\n";

struct race {
	struct h_fakellm	*fl;
	char *const		*env;
	const char		*db;
	const char		*ws;
	int			 ran;	/* the concurrent run ran */
};

/* fakellm was asked for turn 1 (its log names the file). */
static int
asked_first(void *arg)
{
	char	*s = h_read_file(arg);
	int	 yes = s != NULL && strstr(s, "FIRST-MSG") != NULL;

	free(s);
	return yes;
}

/* While turn 1 waits for its answer: a `warren run` in the same
 * workspace, begun after turn 1's run. */
static void
race_during(pid_t pid, void *arg)
{
	struct race	*x = arg;
	struct h_run	 r;

	if (h_wait_for(asked_first, x->fl->log, 60, pid,
	    "fakellm asked for turn 1") == -1)
		return;
	if (h_warren_l(&r, x->env, "run", "--db", x->db, "--workspace",
	    x->ws, "--in-place", "OTHER-TASK", NULL) == 0 && r.status == 0 &&
	    strstr(r.out, "OTHER-ANSWER") != NULL)
		x->ran = 1;
	h_run_free(&r);
}

static void
test_chat_concurrent_run(void **state)
{
	struct h_fakellm fl;
	struct h_ws	*c = *state;
	struct h_run	 r;
	char		 db[PATH_MAX], xdg[PATH_MAX + 32], *reqs;
	char		*chat[] = { "warren", "chat", "--db", db, "--workspace",
			    c->ws, "--in-place", NULL };
	char		*env[] = { fl.env_url, "WARREN_API_KEY=k",
			    "WARREN_MODEL=fake-model", "WARREN_RETRIES=0",
			    xdg, NULL };
	struct race	 x = { &fl, env, db, c->ws, 0 };

	h_ws_cassette_close(c);
	snprintf(xdg, sizeof(xdg), "XDG_STATE_HOME=%s/state", c->dir);
	snprintf(db, sizeof(db), "%s/race.db", c->dir);
	if (h_fakellm_start(&fl, c->dir, race_script) == 1)
		skip();
	chat_input(c, "in2", "FIRST-MSG\n/show\nNEXT-MSG\n/quit\n");
	assert_int_equal(h_warren(&r, chat, env, race_during, &x), 0);
	if (!x.ran)
		fail_msg("the concurrent run did not run: %s", h_wait_why);
	if (r.status != 0 || strstr(r.out, "NEXT-ANSWER") == NULL)
		fail_msg("%d\n%s\n%s", r.status, r.out, r.err);
	/* /show after turn 1: turn 1's run (1), not the newer one (2). */
	if (strstr(r.out, "OTHER-TASK") != NULL)
		fail_msg("/show showed the concurrent run:\n%s", r.out);
	h_run_free(&r);
	h_fakellm_stop(&fl);
	reqs = h_read_file(fl.log);
	/* Turn 2 followed up turn 1, not the concurrent run. */
	assert_int_equal(h_count_lines(reqs, "NEXT-MSG",
	    "\"role\":\"user\",\"content\":\"FIRST-MSG\""), 1);
	assert_int_equal(h_count_lines(reqs, "NEXT-MSG", "OTHER-TASK"), 0);
	free(reqs);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_chat_one_layer, setup,
		    h_ws_teardown),
		cmocka_unit_test_setup_teardown(test_chat_one_layer_auto,
		    setup, h_ws_teardown),
		cmocka_unit_test_setup_teardown(test_chat_concurrent_run,
		    setup, h_ws_teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}

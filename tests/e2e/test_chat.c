/*
 * warren chat with piped standard input against fakellm: two turns, the
 * second a follow-up given the first turn in full (its message as the
 * user's, its answer as the assistant's); /diff of what the first turn
 * wrote in its layer, /apply into the workspace; --continue after the
 * conversation ended goes on from its last turn. The turns, and warren
 * run --continue, share one copy-on-write layer: a follow-up goes on in
 * the layer of the run it follows up (cli/cmd_run_layer.c), so it reads
 * what the turn before wrote, and its diff is the whole conversation's;
 * the earlier run's layer cannot be applied or discarded apart. A turn's
 * run is the one its child names, not the workspace's newest run (a
 * concurrent `warren run` in the same workspace).
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

/* The second turn's rule first: its request holds FIRST-MSG too. */
static const char chat_script[] =
"{\"rules\": [\n"
" {\"match\": \"THIRD-MSG\", \"repeat\": true, \"responses\": [{\"reply\":"
"  {\"calls\": [{\"id\": \"c5\", \"name\": \"complete\", \"arguments\":"
"  {\"result\": \"THIRD-ANSWER\"}}]}}]},\n"
" {\"match\": \"SECOND-MSG\", \"repeat\": true, \"responses\": [{\"reply\":"
"  {\"calls\": [{\"id\": \"c3\", \"name\": \"complete\", \"arguments\":"
"  {\"result\": \"SECOND-ANSWER\"}}]}}]},\n"
" {\"match\": \"FIRST-MSG\", \"responses\": [{\"reply\":"
"  {\"calls\": [{\"id\": \"c1\", \"name\": \"write\", \"arguments\":"
"  {\"path\": \"chat-file.txt\", \"content\": \"WRITTEN-IN-TURN-ONE\\n\"}}]}},"
"  {\"reply\": {\"calls\": [{\"id\": \"c2\", \"name\": \"complete\","
"  \"arguments\": {\"result\": \"FIRST-ANSWER\"}}]}}]}\n"
"]}\n";

/* A test's chat: fakellm, scripted; the database dir/chat.db; the
 * environment of warren (cow: every run copy-on-write). */
struct chat_fx {
	struct h_fakellm fl;
	char		 db[PATH_MAX];
	char		 xdg[PATH_MAX + 32];
	char		*env[7];
};

static void
chat_fx_open(struct chat_fx *fx, struct h_ws *c, const char *script, int cow)
{
	int	n = 0;

	h_ws_cassette_close(c);
	snprintf(fx->xdg, sizeof(fx->xdg), "XDG_STATE_HOME=%s/state", c->dir);
	snprintf(fx->db, sizeof(fx->db), "%s/chat.db", c->dir);
	fx->env[n++] = fx->fl.env_url;
	fx->env[n++] = "WARREN_API_KEY=k";
	fx->env[n++] = "WARREN_MODEL=fake-model";
	fx->env[n++] = "WARREN_RETRIES=0";
	if (cow)
		fx->env[n++] = "WARREN_WORKSPACE_MODE=cow";
	fx->env[n++] = fx->xdg;
	fx->env[n] = NULL;
	if (h_fakellm_start(&fx->fl, c->dir, script) == 1)
		skip();
}

static void
chat_input(struct h_ws *c, const char *name, const char *text)
{
	static char	path[PATH_MAX];

	h_write(c->dir, name, text, 0644);
	snprintf(path, sizeof(path), "%s/%s", c->dir, name);
	h_stdin_path = path;
}

static void
test_chat_turns(void **state)
{
	struct chat_fx	 fx;
	struct h_ws	*c = *state;
	struct h_run	 r;
	char		 file[PATH_MAX], *reqs, *s;
	char		*chat[] = { "warren", "chat", "--db", fx.db,
			    "--workspace", c->ws, "--profile", "general",
			    NULL };
	char		*cont[] = { "warren", "chat", "--db", fx.db,
			    "--workspace", c->ws, "--profile", "general",
			    "--continue", NULL };
	char		*json[] = { "warren", "chat", "--db", fx.db, "--json",
			    NULL };
	char		*missing[] = { "warren", "chat", "--db", fx.db,
			    "--continue", "99", NULL };
	char		*nostore[] = { "warren", "chat", "--no-store", NULL };
	char		*help[] = { "warren", "help", "chat", NULL };
	char		*runs[] = { "warren", "runs", "--all", "--db", fx.db,
			    NULL };

	snprintf(file, sizeof(file), "%s/chat-file.txt", c->ws);
	chat_fx_open(&fx, c, chat_script, 1);
	chat_input(c, "in1", "FIRST-MSG\n/diff\n/apply\nSECOND-MSG\n/quit\n"
	    "NEVER-SENT\n");
	assert_int_equal(h_warren(&r, chat, fx.env, NULL, NULL), 0);
	if (r.status != 0 || strstr(r.out, "FIRST-ANSWER") == NULL ||
	    strstr(r.out, "SECOND-ANSWER") == NULL)
		fail_msg("%d\n%s\n%s", r.status, r.out, r.err);
	/* /diff: the first turn's file, in its layer */
	if (strstr(r.out, "chat-file.txt") == NULL ||
	    strstr(r.out, "+WRITTEN-IN-TURN-ONE") == NULL)
		fail_msg("no diff of chat-file.txt:\n%s\n%s", r.out, r.err);
	h_run_free(&r);
	/* /apply: in the workspace now */
	s = h_read_file(file);
	assert_string_equal(s, "WRITTEN-IN-TURN-ONE\n");
	free(s);
	/* A conversation after the end: --continue, from turn 2. */
	chat_input(c, "in2", "THIRD-MSG\n");
	assert_int_equal(h_warren(&r, cont, fx.env, NULL, NULL), 0);
	if (r.status != 0 || strstr(r.out, "THIRD-ANSWER") == NULL ||
	    strstr(r.out, "going on from run 2") == NULL)
		fail_msg("%d\n%s\n%s", r.status, r.out, r.err);
	h_run_free(&r);
	h_fakellm_stop(&fx.fl);
	reqs = h_read_file(fx.fl.log);
	/* Turn 2 was sent turn 1 in full: its message as the user's and
	 * its answer as the assistant's, not only as memory (turn 3's
	 * request, which holds SECOND-MSG too, the second line). */
	assert_int_equal(h_count_lines(reqs, "SECOND-MSG",
	    "\"role\":\"user\",\"content\":\"FIRST-MSG\""), 2);
	assert_int_equal(h_count_lines(reqs, "SECOND-MSG",
	    "\"role\":\"assistant\",\"content\":\"FIRST-ANSWER\""), 2);
	/* Turn 3 (the resumed conversation): both before it. */
	assert_int_equal(h_count_lines(reqs, "THIRD-MSG",
	    "\"role\":\"assistant\",\"content\":\"SECOND-ANSWER\""), 1);
	assert_int_equal(h_count_lines(reqs, "THIRD-MSG",
	    "\"role\":\"assistant\",\"content\":\"FIRST-ANSWER\""), 1);
	/* /quit ended it: the line after was never a turn. */
	assert_null(strstr(reqs, "NEVER-SENT"));
	free(reqs);
	/* Each turn is a run. */
	assert_int_equal(h_warren(&r, runs, NULL, NULL, NULL), 0);
	if (strstr(r.out, "SECOND-MSG") == NULL ||
	    strstr(r.out, "THIRD-MSG") == NULL)
		fail_msg("%s\n%s", r.out, r.err);
	h_run_free(&r);
	/* --continue of a run that is not there: refused, exit 2. */
	assert_int_equal(h_warren(&r, missing, fx.env, NULL, NULL), 0);
	assert_int_equal(r.status, 2);
	assert_non_null(strstr(r.err, "--continue: run 99: "));
	h_run_free(&r);
	/* --json is warren run's: refused, nothing run. */
	assert_int_equal(h_warren(&r, json, fx.env, NULL, NULL), 0);
	assert_int_equal(r.status, 2);
	assert_non_null(strstr(r.err, "--json is warren run's only"));
	h_run_free(&r);
	/* --no-store: turns are stored runs; refused. */
	assert_int_equal(h_warren(&r, nostore, fx.env, NULL, NULL), 0);
	assert_int_equal(r.status, 2);
	assert_non_null(strstr(r.err, "--no-store: a conversation"));
	h_run_free(&r);
	/* warren help chat: the commands between turns. */
	assert_int_equal(h_warren(&r, help, NULL, NULL, NULL), 0);
	assert_int_equal(r.status, 0);
	assert_non_null(strstr(r.out, "/apply [PATH...]"));
	h_run_free(&r);
}

static const char kill_script[] =
"{\"rules\": [\n"
" {\"match\": \"AFTER-KILL-MSG\", \"repeat\": true, \"responses\": [{\"reply\":"
"  {\"calls\": [{\"id\": \"c2\", \"name\": \"complete\", \"arguments\":"
"  {\"result\": \"AFTER-KILL-ANSWER\"}}]}}]},\n"
" {\"match\": \"HANG-MSG\", \"repeat\": true, \"responses\": [{\"hang\": true}]}\n"
"]}\n";

/* fakellm was asked for want (its log is the file). */
struct asked {
	const char	*log;
	const char	*want;
};

static int
asked(void *arg)
{
	const struct asked	*q = arg;
	char			*s = h_read_file(q->log);
	int			 yes = s != NULL && strstr(s, q->want) != NULL;

	free(s);
	return yes;
}

static void
kill_at_hang(pid_t pid, void *arg)
{
	int	*killed = ((void **)arg)[1];

	struct asked	 q = { ((void **)arg)[0], "HANG-MSG" };

	*killed = h_kill_when(pid, asked, &q, 60,
	    "fakellm asked for the hanging turn");
}

/* kill -9 of warren chat during a turn: the turn's run ends (cancelled,
 * not left running), and `warren chat --resume` goes on from it. */
static void
test_chat_killed(void **state)
{
	struct chat_fx	 fx;
	struct h_ws	*c = *state;
	struct h_run	 r;
	char		 *reqs;
	int		 killed = 0;
	void		*arg[2] = { fx.fl.log, &killed };
	char		*chat[] = { "warren", "chat", "--db", fx.db,
			    "--workspace", c->ws, "--in-place", NULL };
	char		*resume[] = { "warren", "chat", "--db", fx.db,
			    "--workspace", c->ws, "--in-place", "--resume",
			    NULL };

	chat_fx_open(&fx, c, kill_script, 0);
	chat_input(c, "in3", "HANG-MSG\n");
	assert_int_equal(h_warren(&r, chat, fx.env, kill_at_hang, arg), 0);
	if (!killed)
		fail_msg("%s", h_wait_why);
	h_run_free(&r);
	/* The turn's run ended with its chat: --resume is not refused as
	 * "still running" and the next turn is given the killed one. */
	chat_input(c, "in4", "AFTER-KILL-MSG\n");
	assert_int_equal(h_warren(&r, resume, fx.env, NULL, NULL), 0);
	if (r.status != 0 || strstr(r.out, "AFTER-KILL-ANSWER") == NULL ||
	    strstr(r.out, "going on from run 1") == NULL)
		fail_msg("%d\n%s\n%s", r.status, r.out, r.err);
	h_run_free(&r);
	h_fakellm_stop(&fx.fl);
	reqs = h_read_file(fx.fl.log);
	assert_int_equal(h_count_lines(reqs, "AFTER-KILL-MSG",
	    "\"role\":\"user\",\"content\":\"HANG-MSG\""), 1);
	free(reqs);
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

/* warren NAME --db db RUN: its exit code; r filled (the caller frees). */
static int
on_run(struct h_run *r, char *const *env, const char *name, const char *db,
    const char *run)
{
	assert_int_equal(h_warren_l(r, env, name, "--db", db, run, NULL), 0);
	return r->status;
}

/* warren run --continue RUN TASK in c's workspace, which ends well. */
static void
follow_up(struct h_ws *c, char *const *env, const char *db, const char *cow,
    const char *run, const char *task)
{
	struct h_run	r;

	assert_int_equal(h_warren_l(&r, env, "run", "--db", db,
	    "--workspace", c->ws, "--profile", "general", "--cow", cow,
	    "--continue", run, task, NULL), 0);
	if (r.status != 0)
		fail_msg("run --continue %s %s: %d\n%s", run, task, r.status,
		    r.err);
	h_run_free(&r);
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
	struct chat_fx	 fx;
	struct h_run	 r;
	char		*reqs;
	char		*chat[] = { "warren", "chat", "--db", fx.db,
			    "--workspace", c->ws, "--profile", "general",
			    "--cow", cow, NULL };

	chat_fx_open(&fx, c, layer_script, 1);
	chat_input(c, "in1", "WRITE-MSG\nREAD-MSG\n/diff\n/quit\n");
	assert_int_equal(h_warren(&r, chat, fx.env, NULL, NULL), 0);
	if (r.status != 0 || strstr(r.out, "READ-ANSWER") == NULL)
		fail_msg("%d\n%s\n%s", r.status, r.out, r.err);
	/* /diff of turn 2: what both turns wrote */
	if (strstr(r.out, "+BODY-OF-ONE") == NULL ||
	    strstr(r.out, "+BODY-OF-TWO") == NULL)
		fail_msg("/diff lacks a turn's file:\n%s\n%s", r.out, r.err);
	h_run_free(&r);
	/* warren diff 2: the same */
	assert_int_equal(on_run(&r, fx.env, "diff", fx.db, "2"), 0);
	if (strstr(r.out, "+BODY-OF-ONE") == NULL ||
	    strstr(r.out, "+BODY-OF-TWO") == NULL)
		fail_msg("warren diff 2 lacks a turn's file:\n%s", r.out);
	h_run_free(&r);
	/* Turn 1's layer is turn 2's now: not discarded or applied apart. */
	assert_int_equal(on_run(&r, fx.env, "discard", fx.db, "1"), 2);
	assert_non_null(strstr(r.err, "run 1's layer went on to run 2"));
	assert_non_null(strstr(r.err, "warren discard 2"));
	h_run_free(&r);
	assert_int_equal(on_run(&r, fx.env, "apply", fx.db, "1"), 2);
	assert_non_null(strstr(r.err, "warren apply 2"));
	h_run_free(&r);
	assert_int_equal(h_warren_l(&r, fx.env, "runs", "--db", fx.db, "--all",
	    NULL), 0);
	assert_non_null(strstr(r.out, "continued"));
	h_run_free(&r);
	/* warren run --continue goes on in it too, and holds it then. */
	follow_up(c, fx.env, fx.db, cow, "2", "RUN-MSG");
	assert_int_equal(on_run(&r, fx.env, "discard", fx.db, "2"), 2);
	assert_non_null(strstr(r.err, "run 2's layer went on to run 3"));
	h_run_free(&r);
	/* Discarded: the next follow-up starts a layer of its own. */
	assert_int_equal(on_run(&r, fx.env, "discard", fx.db, "3"), 0);
	h_run_free(&r);
	follow_up(c, fx.env, fx.db, cow, "3", "FRESH-MSG");
	h_fakellm_stop(&fx.fl);
	reqs = h_read_file(fx.fl.log);
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

/* A follow-up of a run whose layer is gone (removed by hand): said, and
 * the follow-up runs in a layer of its own. */
static void
test_continue_layer_gone(void **state)
{
	struct chat_fx	 fx;
	struct h_ws	*c = *state;
	struct h_run	 r;
	char		 cow[PATH_MAX], *reqs;

	chat_fx_open(&fx, c, layer_script, 1);
	assert_int_equal(h_warren_l(&r, fx.env, "run", "--db", fx.db,
	    "--workspace", c->ws, "--profile", "general", "--cow", "copy",
	    "WRITE-MSG", NULL), 0);
	assert_int_equal(r.status, 0);
	h_run_free(&r);
	snprintf(cow, sizeof(cow), "%s/state/warren/cow", c->dir);
	h_rm_rf(cow);
	assert_int_equal(h_warren_l(&r, fx.env, "run", "--db", fx.db,
	    "--workspace", c->ws, "--profile", "general", "--cow", "copy",
	    "--continue", "1", "READ-MSG", NULL), 0);
	if (r.status != 0 || strstr(r.err, "run 1's layer cannot be opened") ==
	    NULL || strstr(r.err, "a layer of its own") == NULL)
		fail_msg("%d\n%s", r.status, r.err);
	h_run_free(&r);
	h_fakellm_stop(&fx.fl);
	reqs = h_read_file(fx.fl.log);
	read_result(reqs, "r1", "BODY-OF-ONE", 0);
	free(reqs);
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

/* While turn 1 waits for its answer: a `warren run` in the same
 * workspace, begun after turn 1's run. */
static void
race_during(pid_t pid, void *arg)
{
	struct race	*x = arg;
	struct h_run	 r;

	struct asked	 q = { x->fl->log, "FIRST-MSG" };

	if (h_wait_for(asked, &q, 60, pid, "fakellm asked for turn 1") == -1)
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
	struct chat_fx	 fx;
	struct h_ws	*c = *state;
	struct h_run	 r;
	char		*reqs;
	char		*chat[] = { "warren", "chat", "--db", fx.db,
			    "--workspace", c->ws, "--in-place", NULL };
	struct race	 x = { &fx.fl, fx.env, fx.db, c->ws, 0 };

	chat_fx_open(&fx, c, race_script, 0);
	chat_input(c, "in2", "FIRST-MSG\n/show\nNEXT-MSG\n/quit\n");
	assert_int_equal(h_warren(&r, chat, fx.env, race_during, &x), 0);
	if (!x.ran)
		fail_msg("the concurrent run did not run: %s", h_wait_why);
	if (r.status != 0 || strstr(r.out, "NEXT-ANSWER") == NULL)
		fail_msg("%d\n%s\n%s", r.status, r.out, r.err);
	/* /show after turn 1: turn 1's run (1), not the newer one (2). */
	if (strstr(r.out, "OTHER-TASK") != NULL)
		fail_msg("/show showed the concurrent run:\n%s", r.out);
	h_run_free(&r);
	h_fakellm_stop(&fx.fl);
	reqs = h_read_file(fx.fl.log);
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
		cmocka_unit_test_setup_teardown(test_chat_turns, setup,
		    h_ws_teardown),
		cmocka_unit_test_setup_teardown(test_chat_killed, setup,
		    h_ws_teardown),
		cmocka_unit_test_setup_teardown(test_chat_one_layer, setup,
		    h_ws_teardown),
		cmocka_unit_test_setup_teardown(test_chat_one_layer_auto,
		    setup, h_ws_teardown),
		cmocka_unit_test_setup_teardown(test_chat_concurrent_run,
		    setup, h_ws_teardown),
		cmocka_unit_test_setup_teardown(test_continue_layer_gone,
		    setup, h_ws_teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}

/*
 * warren chat with piped standard input against fakellm: two turns, the
 * second a follow-up given the first turn in full (its message as the
 * user's, its answer as the assistant's); /diff of what the first turn
 * wrote in its layer, /apply into the workspace; --continue after the
 * conversation ended goes on from its last turn.
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
	struct h_fakellm fl;
	struct h_ws	*c = *state;
	struct h_run	 r;
	char		 db[PATH_MAX], file[PATH_MAX], *reqs, *s;
	char		*chat[] = { "warren", "chat", "--db", db, "--workspace",
			    c->ws, "--profile", "general", NULL };
	char		*cont[] = { "warren", "chat", "--db", db, "--workspace",
			    c->ws, "--profile", "general", "--continue", NULL };
	char		*json[] = { "warren", "chat", "--db", db, "--json", NULL };
	char		*missing[] = { "warren", "chat", "--db", db,
			    "--continue", "99", NULL };
	char		*nostore[] = { "warren", "chat", "--no-store", NULL };
	char		*help[] = { "warren", "help", "chat", NULL };
	char		*runs[] = { "warren", "runs", "--all", "--db", db,
			    NULL };
	char		 xdg[PATH_MAX + 32];
	char		*env[] = { fl.env_url, "WARREN_API_KEY=k",
			    "WARREN_MODEL=fake-model", "WARREN_RETRIES=0",
			    "WARREN_WORKSPACE_MODE=cow", xdg, NULL };

	h_ws_cassette_close(c);
	snprintf(xdg, sizeof(xdg), "XDG_STATE_HOME=%s/state", c->dir);
	snprintf(db, sizeof(db), "%s/chat.db", c->dir);
	snprintf(file, sizeof(file), "%s/chat-file.txt", c->ws);
	if (h_fakellm_start(&fl, c->dir, chat_script) == 1)
		skip();
	chat_input(c, "in1", "FIRST-MSG\n/diff\n/apply\nSECOND-MSG\n/quit\n"
	    "NEVER-SENT\n");
	assert_int_equal(h_warren(&r, chat, env, NULL, NULL), 0);
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
	assert_int_equal(h_warren(&r, cont, env, NULL, NULL), 0);
	if (r.status != 0 || strstr(r.out, "THIRD-ANSWER") == NULL ||
	    strstr(r.out, "going on from run 2") == NULL)
		fail_msg("%d\n%s\n%s", r.status, r.out, r.err);
	h_run_free(&r);
	h_fakellm_stop(&fl);
	reqs = h_read_file(fl.log);
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
	assert_int_equal(h_warren(&r, missing, env, NULL, NULL), 0);
	assert_int_equal(r.status, 2);
	assert_non_null(strstr(r.err, "--continue: run 99: "));
	h_run_free(&r);
	/* --json is warren run's: refused, nothing run. */
	assert_int_equal(h_warren(&r, json, env, NULL, NULL), 0);
	assert_int_equal(r.status, 2);
	assert_non_null(strstr(r.err, "--json is warren run's only"));
	h_run_free(&r);
	/* --no-store: turns are stored runs; refused. */
	assert_int_equal(h_warren(&r, nostore, env, NULL, NULL), 0);
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

/* fakellm was asked for HANG-MSG (its log names the file). */
static int
asked_hang(void *arg)
{
	char	*s = h_read_file(arg);
	int	 yes = s != NULL && strstr(s, "HANG-MSG") != NULL;

	free(s);
	return yes;
}

static void
kill_at_hang(pid_t pid, void *arg)
{
	int	*killed = ((void **)arg)[1];

	*killed = h_kill_when(pid, asked_hang, ((void **)arg)[0], 60,
	    "fakellm asked for the hanging turn");
}

/* kill -9 of warren chat during a turn: the turn's run ends (cancelled,
 * not left running), and `warren chat --resume` goes on from it. */
static void
test_chat_killed(void **state)
{
	struct h_fakellm fl;
	struct h_ws	*c = *state;
	struct h_run	 r;
	char		 db[PATH_MAX], xdg[PATH_MAX + 32], *reqs;
	int		 killed = 0;
	void		*arg[2] = { fl.log, &killed };
	char		*chat[] = { "warren", "chat", "--db", db, "--workspace",
			    c->ws, "--in-place", NULL };
	char		*resume[] = { "warren", "chat", "--db", db,
			    "--workspace", c->ws, "--in-place", "--resume",
			    NULL };
	char		*env[] = { fl.env_url, "WARREN_API_KEY=k",
			    "WARREN_MODEL=fake-model", "WARREN_RETRIES=0",
			    xdg, NULL };

	h_ws_cassette_close(c);
	snprintf(xdg, sizeof(xdg), "XDG_STATE_HOME=%s/state", c->dir);
	snprintf(db, sizeof(db), "%s/kill.db", c->dir);
	if (h_fakellm_start(&fl, c->dir, kill_script) == 1)
		skip();
	chat_input(c, "in3", "HANG-MSG\n");
	assert_int_equal(h_warren(&r, chat, env, kill_at_hang, arg), 0);
	if (!killed)
		fail_msg("%s", h_wait_why);
	h_run_free(&r);
	/* The turn's run ended with its chat: --resume is not refused as
	 * "still running" and the next turn is given the killed one. */
	chat_input(c, "in4", "AFTER-KILL-MSG\n");
	assert_int_equal(h_warren(&r, resume, env, NULL, NULL), 0);
	if (r.status != 0 || strstr(r.out, "AFTER-KILL-ANSWER") == NULL ||
	    strstr(r.out, "going on from run 1") == NULL)
		fail_msg("%d\n%s\n%s", r.status, r.out, r.err);
	h_run_free(&r);
	h_fakellm_stop(&fl);
	reqs = h_read_file(fl.log);
	assert_int_equal(h_count_lines(reqs, "AFTER-KILL-MSG",
	    "\"role\":\"user\",\"content\":\"HANG-MSG\""), 1);
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
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}

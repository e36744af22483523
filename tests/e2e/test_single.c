/*
 * One agent as the root (issue 23): `warren run --profile P` runs the root
 * agent in a sandboxed worker (path 0, depth 0) whose tools work and
 * whose delegations go through the supervisor; `run -` takes the task
 * from stdin; `run --continue` starts a follow-up whose root sees the
 * earlier run's memory; a delegate call's tool_filter narrows a
 * subagent's tools and sandbox; agent files: model:, descriptions in the
 * delegate schema, an unknown tool a warning. The model is a cassette
 * (keyed by agent path and step) or the fakellm server, whose request
 * log shows what reached the endpoint.
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
#include <sqlite3.h>

#include "tests/e2e/harness.h"

static int
setup(void **state)
{
	*state = h_ws_new("MAGIC-LINE-42\nsecond line\n");
	return 0;
}

/* warren run --json --no-store --workspace WS --replay CAS OPTS... TASK */
static void
run(struct h_ws *c, struct h_run *r, const char *const *opts,
    const char *task, char *const *env)
{
	h_ws_replay(c, r, opts, task, env, NULL, NULL);
}

#define SPAWNED(out, path) h_count_lines(out, "\"event\":\"spawned\"", \
	"\"path\":\"" path "\"")
#define RESULT(out, text) h_count_lines(out, "\"event\":\"result\"", \
	"\"result\":\"" text "\"")

static void
check_ok(const struct h_run *r, const char *result)
{
	char	want[256];

	snprintf(want, sizeof(want), "\"result\":\"%s\"", result);
	if (r->status != 0 || h_count_lines(r->out, "\"event\":\"result\"",
	    want) != 1)
		fail_msg("status %d, want %s\n%s\n%s", r->status, want,
		    r->out, r->err);
}

/* --profile explore: glob and grep run in the root's worker, the answer
 * is the root's own. */
static void
test_root_explore(void **state)
{
	struct h_ws	*c = *state;
	struct h_run	 r;
	const char	*opts[] = { "--profile", "explore", NULL };

	h_turn(c->f, "0", 1, h_calls2("a", "glob", "{\"pattern\":\"*.txt\"}",
	    "b", "grep", "{\"pattern\":\"MAGIC-[A-Z]+\"}"));
	h_turn(c->f, "0", 2, h_calls1("c", "complete",
	    "{\"result\":\"EXPLORED-OK\"}"));
	run(c, &r, opts, "find the magic line", NULL);
	check_ok(&r, "EXPLORED-OK");
	/* A worker process, depth 0, whose real tools answered. */
	assert_int_equal(h_count_lines(r.out, "\"event\":\"spawned\"",
	    "\"path\":\"0\",\"profile\":\"explore\",\"depth\":0"), 1);
	assert_int_equal(h_count_lines(r.out, "\"event\":\"tool_result\"",
	    "data.txt:1:MAGIC-LINE-42"), 1);
	assert_int_equal(h_count_lines(r.out, "\"tool\":\"glob\"",
	    "\"error\":false"), 1);
	assert_null(strstr(r.out, "runs no tool"));
	h_run_free(&r);
}

/* --profile general: it edits a file itself and delegates to explore
 * (0.1, depth 1), whose answer it gets back. */
static void
test_root_general(void **state)
{
	struct h_ws	*c = *state;
	struct h_run	 r;
	const char	*opts[] = { "--profile", "general", NULL };
	char		 path[PATH_MAX], *s;

	h_turn(c->f, "0", 1, h_calls1("a", "delegate",
	    "{\"profile\":\"explore\",\"task\":\"read data.txt\"}"));
	h_turn(c->f, "0.1", 1, h_calls1("b", "read",
	    "{\"path\":\"data.txt\"}"));
	h_turn(c->f, "0.1", 2, h_calls1("c", "complete",
	    "{\"result\":\"CHILD-SAW-IT\"}"));
	h_turn(c->f, "0", 2, h_calls1("d", "edit",
	    "{\"path\":\"data.txt\",\"old_string\":\"second line\","
	    "\"new_string\":\"EDITED BY ROOT\"}"));
	h_turn(c->f, "0", 3, h_calls1("e", "complete",
	    "{\"result\":\"GENERAL-DONE\"}"));
	run(c, &r, opts, "fix data.txt", NULL);
	check_ok(&r, "GENERAL-DONE");
	assert_int_equal(h_count_lines(r.out, "\"event\":\"spawned\"",
	    "\"path\":\"0.1\",\"profile\":\"explore\",\"depth\":1"), 1);
	assert_true(h_count_lines(r.out, "\"path\":\"0\"", "CHILD-SAW-IT")
	    >= 1);
	snprintf(path, sizeof(path), "%s/data.txt", c->ws);
	s = h_read_file(path);
	assert_string_equal(s, "MAGIC-LINE-42\nEDITED BY ROOT\n");
	free(s);
	h_run_free(&r);
}

/* A root in a worker writes the run's copy-on-write layer like any
 * agent: the workspace is untouched, `warren diff` shows its edit. */
static void
test_root_cow(void **state)
{
	struct h_ws	*c = *state;
	struct h_run	 r;
	char		 db[PATH_MAX], path[PATH_MAX], *s;
	char		*argv[] = { "warren", "run", "--db", db, "--workspace",
			    c->ws, "--replay", c->cas, "--profile", "general",
			    "edit in the layer", NULL };
	char		*diff[] = { "warren", "diff", "--db", db, "1", NULL };
	char		*env[] = { "WARREN_WORKSPACE_MODE=cow", NULL };

	h_turn(c->f, "0", 1, h_calls1("a", "edit",
	    "{\"path\":\"data.txt\",\"old_string\":\"second line\","
	    "\"new_string\":\"LAYER EDIT\"}"));
	h_turn(c->f, "0", 2, h_calls1("b", "complete",
	    "{\"result\":\"COW-OK\"}"));
	h_ws_cassette_close(c);
	snprintf(db, sizeof(db), "%s/cow.db", c->dir);
	assert_int_equal(h_warren(&r, argv, env, NULL, NULL), 0);
	if (r.status != 0 || strstr(r.out, "COW-OK") == NULL)
		fail_msg("%d\n%s\n%s", r.status, r.out, r.err);
	h_run_free(&r);
	snprintf(path, sizeof(path), "%s/data.txt", c->ws);
	s = h_read_file(path);
	assert_string_equal(s, "MAGIC-LINE-42\nsecond line\n");
	free(s);
	assert_int_equal(h_warren(&r, diff, env, NULL, NULL), 0);
	if (strstr(r.out, "+LAYER EDIT") == NULL)
		fail_msg("%s\n%s", r.out, r.err);
	h_run_free(&r);
}

/* plan, review and test as the root: each runs its own tools. */
static void
test_root_plan_review_test(void **state)
{
	struct h_ws	*c = *state;
	struct h_run	 r;
	const char	*plan[] = { "--profile", "plan", NULL };
	const char	*review[] = { "--profile", "review", NULL };
	const char	*test[] = { "--profile", "test", NULL };

	h_turn(c->f, "0", 1, h_calls2("a", "todo",
	    "{\"todos\":[{\"content\":\"step one\",\"status\":\"pending\"}]}",
	    "b", "read", "{\"path\":\"data.txt\"}"));
	h_turn(c->f, "0", 2, h_calls1("c", "complete",
	    "{\"result\":\"PLAN-OK\"}"));
	run(c, &r, plan, "plan it", NULL);
	check_ok(&r, "PLAN-OK");
	assert_int_equal(h_count_lines(r.out, "\"tool\":\"read\"",
	    "MAGIC-LINE-42"), 1);
	h_run_free(&r);

	c->f = h_cassette_open(c->cas);
	h_turn(c->f, "0", 1, h_calls1("a", "grep",
	    "{\"pattern\":\"second\"}"));
	h_turn(c->f, "0", 2, h_calls1("b", "complete",
	    "{\"result\":\"REVIEW-OK\"}"));
	run(c, &r, review, "review it", NULL);
	check_ok(&r, "REVIEW-OK");
	assert_int_equal(h_count_lines(r.out, "\"tool\":\"grep\"",
	    "data.txt:2:second line"), 1);
	h_run_free(&r);

	c->f = h_cassette_open(c->cas);
	h_turn(c->f, "0", 1, h_calls1("a", "bash",
	    "{\"command\":\"echo TESTS-$((40+2)) passed\"}"));
	h_turn(c->f, "0", 2, h_calls1("b", "complete",
	    "{\"result\":\"TEST-OK\"}"));
	run(c, &r, test, "run the tests", NULL);
	check_ok(&r, "TEST-OK");
	assert_int_equal(h_count_lines(r.out, "\"tool\":\"bash\"",
	    "TESTS-42 passed"), 1);
	h_run_free(&r);
}

/* The run's limits hold for a root in a worker: --max-agents 1 refuses
 * the second delegation, the model reads why. */
static void
test_root_limits(void **state)
{
	struct h_ws	*c = *state;
	struct h_run	 r;
	const char	*opts[] = { "--profile", "general", "--max-agents",
			    "1", NULL };

	h_turn(c->f, "0", 1, h_calls2("a", "delegate",
	    "{\"profile\":\"explore\",\"task\":\"one\"}", "b", "delegate",
	    "{\"profile\":\"explore\",\"task\":\"two\"}"));
	h_turn(c->f, "0.1", 1, h_calls1("c", "complete",
	    "{\"result\":\"one done\"}"));
	h_turn(c->f, "0", 2, h_calls1("d", "complete",
	    "{\"result\":\"LIMITS-OK\"}"));
	run(c, &r, opts, "two at once", NULL);
	check_ok(&r, "LIMITS-OK");
	assert_int_equal(SPAWNED(r.out, "0.1"), 1);
	assert_int_equal(SPAWNED(r.out, "0.2"), 0);
	assert_int_equal(h_count_lines(r.out, "\"event\":\"tool_result\"",
	    "max agents 1 reached"), 1);
	h_run_free(&r);
}

/* run -: the task is stdin (its last newline dropped); blank is refused
 * with the usage exit code. */
static void
test_stdin_task(void **state)
{
	struct h_ws	*c = *state;
	struct h_run	 r;
	const char	*opts[] = { "--profile", "explore", NULL };
	char		 in[PATH_MAX];

	h_turn(c->f, "0", 1, h_calls1("a", "complete",
	    "{\"result\":\"STDIN-OK\"}"));
	snprintf(in, sizeof(in), "%s/task.txt", c->dir);
	h_write(c->dir, "task.txt", "TASK FROM STDIN 77\nline two\n", 0);
	h_stdin_path = in;
	run(c, &r, opts, "-", NULL);
	check_ok(&r, "STDIN-OK");
	assert_int_equal(h_count_lines(r.out, "\"event\":\"spawned\"",
	    "\"task\":\"TASK FROM STDIN 77\\nline two\""), 1);
	h_run_free(&r);

	h_write(c->dir, "task.txt", " \n\t\n", 0);
	h_stdin_path = in;
	run(c, &r, opts, "-", NULL);
	assert_int_equal(r.status, 2);
	assert_non_null(strstr(r.err, "the TASK read from standard input is "
	    "empty"));
	h_run_free(&r);
	/* the same refusal for a blank TASK argument */
	run(c, &r, opts, "   ", NULL);
	assert_int_equal(r.status, 2);
	h_run_free(&r);
}

/*
 * tool_filter: general narrowed to read, write and edit has no exec in
 * its sandbox (exec_probe stands in for the worker and tries), the same
 * profile unfiltered has; a filter naming a tool outside the profile is
 * refused to the model.
 */
static void
test_tool_filter_sandbox(void **state)
{
	struct h_ws	*c = *state;
	struct h_run	 r;
	const char	*probe = getenv("EXEC_PROBE");
	const char	*opts[] = { "--worker", probe, NULL };
	char		 calls[4096], a[1024], b[1024], d[1024];

	assert_non_null(probe);
	h_call(a, sizeof(a), "a", "delegate", "{\"profile\":\"general\","
	    "\"task\":\"no exec\",\"tool_filter\":[\"read\",\"write\","
	    "\"Edit\"]}");
	h_call(b, sizeof(b), "b", "delegate", "{\"profile\":\"general\","
	    "\"task\":\"exec\"}");
	h_call(d, sizeof(d), "d", "delegate", "{\"profile\":\"explore\","
	    "\"task\":\"x\",\"tool_filter\":[\"read\",\"bash\"]}");
	snprintf(calls, sizeof(calls), "[%s,%s,%s]", a, b, d);
	h_turn(c->f, "0", 1, calls);
	h_turn(c->f, "0", 2, h_calls1("e", "complete",
	    "{\"result\":\"FILTER-OK\"}"));
	run(c, &r, opts, "filters", NULL);
	check_ok(&r, "FILTER-OK");
	if (h_count_lines(r.err, "agent 0.1 stderr", "EXECPROBE: refused")
	    != 1 || h_count_lines(r.err, "agent 0.2 stderr",
	    "EXECPROBE: allowed") != 1)
		fail_msg("%s", r.err);
	assert_int_equal(SPAWNED(r.out, "0.3"), 0);
	assert_int_equal(h_count_lines(r.out, "\"event\":\"refused\"",
	    "\\\"bash\\\" is not a tool of profile explore"), 1);
	h_run_free(&r);
}

/*
 * tool_filter from a worker (the IPC spawn carries it): a general root
 * delegates general narrowed to read; the child's bash is an unknown
 * tool to it and its model is shown read only.
 */
static void
test_tool_filter_from_worker(void **state)
{
	struct h_ws	*c = *state;
	struct h_run	 r;
	const char	*opts[] = { "--profile", "general", NULL };

	h_turn(c->f, "0", 1, h_calls1("a", "delegate",
	    "{\"profile\":\"general\",\"task\":\"look\","
	    "\"tool_filter\":[\"read\"]}"));
	h_turn(c->f, "0.1", 1, h_calls1("b", "bash",
	    "{\"command\":\"echo RAN\"}"));
	h_turn(c->f, "0.1", 2, h_calls1("c", "complete",
	    "{\"result\":\"child done\"}"));
	h_turn(c->f, "0", 2, h_calls1("d", "complete",
	    "{\"result\":\"WORKER-FILTER-OK\"}"));
	run(c, &r, opts, "narrow", NULL);
	check_ok(&r, "WORKER-FILTER-OK");
	assert_int_equal(SPAWNED(r.out, "0.1"), 1);
	if (h_count_lines(r.out, "\"path\":\"0.1\"", "unknown tool "
	    "\\\"bash\\\"; your tools are: read, complete, fail") != 1)
		fail_msg("%s", r.out);
	assert_null(strstr(r.out, "RAN\\n"));
	h_run_free(&r);
}

/* The fakellm server on 127.0.0.1, or skip when it is not built. */
static int
fake_start(struct h_fakellm *fl, const char *dir, const char *script)
{
	int	rc;

	if ((rc = h_fakellm_start(fl, dir, script)) == 1)
		return 1;
	assert_int_equal(rc, 0);
	return 0;
}

/* The endpoint fails the root's turn (fakellm answers 404, not retried):
 * a root in a worker exits 4 (LLM endpoint) as the orchestrator does. */
static void
test_root_llm_error(void **state)
{
	struct h_fakellm fl;
	struct h_ws	*c = *state;
	struct h_run	 r;
	char		*argv[] = { "warren", "run", "--no-store", "--in-place",
			    "--workspace", c->ws, "--profile", "explore",
			    "NO-RULE-TASK", NULL };
	char		*env[] = { fl.env_url, "WARREN_API_KEY=k",
			    "WARREN_MODEL=fake-model", "WARREN_RETRIES=0",
			    NULL };

	h_ws_cassette_close(c);
	if (fake_start(&fl, c->dir, "{\"rules\": []}\n") == 1)
		skip();
	assert_int_equal(h_warren(&r, argv, env, NULL, NULL), 0);
	h_fakellm_stop(&fl);
	if (r.status != 4)
		fail_msg("status %d\n%s", r.status, r.err);
	h_run_free(&r);
}

/* --- the output schema for a root in a worker ------------------------ */

/* {"n": integer}, as the --schema tests of test_e2e.c. */
#define SCHEMA_N	"{\"type\":\"object\",\"required\":[\"n\"]," \
			"\"properties\":{\"n\":{\"type\":\"integer\"}}}"

/* A rule: a request holding every marker (a JSON array of strings, or
 * one string) gets a complete() with result, JSON text. */
#define SCHEMA_RULE(match, result) \
	" {\"match\": " match ", \"repeat\": true, \"responses\": [{\"reply\":" \
	"  {\"calls\": [{\"id\": \"c1\", \"name\": \"complete\", \"arguments\":" \
	"  {\"result\": \"" result "\"}}]}}]}"

/* The model answers {"n": "six"} until its request holds the error the
 * refusal names, then {"n": 6}. */
static const char schema_fix_script[] = "{\"rules\": [\n"
    SCHEMA_RULE("[\"SCHEMA-TASK\", \"expected integer, got string\"]",
    "{\\\"n\\\": 6}") ",\n"
    SCHEMA_RULE("\"SCHEMA-TASK\"", "{\\\"n\\\": \\\"six\\\"}") "\n]}\n";

/* One that never complies. */
static const char schema_never_script[] = "{\"rules\": [\n"
    SCHEMA_RULE("\"SCHEMA-TASK\"", "{\\\"n\\\": \\\"six\\\"}") "\n]}\n";

/* warren run --profile P --schema s.json SCHEMA-TASK against fakellm with
 * script, in a directory name of its own; the request log in *reqs (the
 * caller frees). 1: skip. */
static int
schema_run(struct h_ws *c, struct h_run *r, const char *profile,
    const char *script, const char *name, char **reqs)
{
	struct h_fakellm fl;
	char		 schema[PATH_MAX + 16], dir[PATH_MAX];
	char		*argv[] = { "warren", "run", "--no-store", "--in-place",
			    "--workspace", c->ws, "--profile",
			    (char *)(uintptr_t)profile, "--schema", schema,
			    "SCHEMA-TASK", NULL };
	char		*env[] = { fl.env_url, "WARREN_API_KEY=k",
			    "WARREN_MODEL=fake-model", "WARREN_RETRIES=0",
			    NULL };

	h_ws_cassette_close(c);
	snprintf(dir, sizeof(dir), "%s/%s", c->dir, name);
	assert_int_equal(mkdir(dir, 0700), 0);
	snprintf(schema, sizeof(schema), "%s/s.json", dir);
	h_write(dir, "s.json", SCHEMA_N, 0644);
	if (fake_start(&fl, dir, script) == 1)
		return 1;
	assert_int_equal(h_warren(r, argv, env, NULL, NULL), 0);
	h_fakellm_stop(&fl);
	*reqs = h_read_file(fl.log);
	assert_non_null(*reqs);
	return 0;
}

/*
 * A root in a worker (general, explore) is held to --schema as the
 * orchestrator is: {"n": "six"} is refused, the model is told why in
 * complete()'s result, and its {"n": 6} ends the run done with it.
 */
static void
test_schema_worker_root(void **state)
{
	static const char *const profiles[] = { "general", "explore" };
	struct h_ws	*c = *state;
	struct h_run	 r;
	char		*reqs;
	size_t		 i;

	for (i = 0; i < 2; i++) {
		if (schema_run(c, &r, profiles[i], schema_fix_script,
		    profiles[i], &reqs) == 1)
			skip();
		if (r.status != 0 || strcmp(r.out, "{\"n\": 6}\n") != 0)
			fail_msg("%s: status %d\n%s\n%s", profiles[i],
			    r.status, r.out, r.err);
		/* The second request carried the refusal, as the result of
		 * the first complete() call. */
		if (strstr(reqs, "complete() refused (1 of 3): the result "
		    "does not match the output schema:\\n$.n: expected "
		    "integer, got string") == NULL)
			fail_msg("%s: no refusal sent\n%s", profiles[i], reqs);
		free(reqs);
		h_run_free(&r);
	}
}

/* A model that never complies: the third refusal fails the run, exit 1,
 * with the errors, as for the orchestrator. */
static void
test_schema_worker_never(void **state)
{
	struct h_ws	*c = *state;
	struct h_run	 r;
	char		*reqs;

	if (schema_run(c, &r, "general", schema_never_script, "never",
	    &reqs) == 1)
		skip();
	if (r.status != 1 || strstr(r.err, "complete() refused 3 times by "
	    "the output schema; the last result: $.n: expected integer, "
	    "got string") == NULL || strstr(r.out, "six") != NULL)
		fail_msg("status %d\n%s\n%s", r.status, r.out, r.err);
	/* Three complete() calls, three requests: no fourth turn. */
	assert_int_equal(h_count_lines(reqs, "SCHEMA-TASK", NULL), 3);
	free(reqs);
	h_run_free(&r);
}

/* One that never calls complete(): it answers in text, every time. */
static const char schema_text_script[] = "{\"rules\": [\n"
    " {\"match\": \"SCHEMA-TASK\", \"repeat\": true, \"responses\":"
    " [{\"reply\": {\"text\": \"n is six\"}}]}\n]}\n";

/*
 * A root that never calls complete() is auto-completed with its last
 * text after the reminders; with --schema that text is held to the schema
 * too (orchestrator, general, explore alike): "n is six" fails the run,
 * exit 1, with why, and is not printed as the result. Before, the run
 * printed it and exited 0.
 */
static void
test_schema_auto(void **state)
{
	static const char *const profiles[] = { "orchestrator", "general",
	    "explore" };
	struct h_ws	*c = *state;
	struct h_run	 r;
	char		*reqs, name[32];
	size_t		 i;

	for (i = 0; i < 3; i++) {
		snprintf(name, sizeof(name), "auto-%s", profiles[i]);
		if (schema_run(c, &r, profiles[i], schema_text_script, name,
		    &reqs) == 1)
			skip();
		if (r.status != 1 || strstr(r.err, "does not match the output "
		    "schema") == NULL || strstr(r.out, "n is six") != NULL)
			fail_msg("%s: status %d\n%s\n%s", profiles[i],
			    r.status, r.out, r.err);
		free(reqs);
		h_run_free(&r);
	}
}

static const char cont_script[] =
"{\"rules\": [\n"
" {\"match\": \"THIRD-TASK\", \"repeat\": true, \"responses\": [{\"reply\":"
"  {\"calls\": [{\"id\": \"c3\", \"name\": \"complete\", \"arguments\":"
"  {\"result\": \"THIRD-ANSWER\"}}]}}]},\n"
" {\"match\": \"SECOND-TASK\", \"repeat\": true, \"responses\": [{\"reply\":"
"  {\"calls\": [{\"id\": \"c2\", \"name\": \"complete\", \"arguments\":"
"  {\"result\": \"SECOND-ANSWER\"}}]}}]},\n"
" {\"match\": \"FIRST-TASK\", \"repeat\": true, \"responses\": [{\"reply\":"
"  {\"calls\": [{\"id\": \"c1\", \"name\": \"complete\", \"arguments\":"
"  {\"result\": \"EARLIER-ANSWER-31\"}}]}}]}\n"
"]}\n";

/*
 * --continue: run 2 (explore, in a worker) follows up run 1, run 3 (the
 * orchestrator) run 2 by id; each follow-up's request to the model holds
 * the earlier answers, and warren show links the runs.
 */
static void
test_continue(void **state)
{
	struct h_fakellm fl;
	struct h_ws	*c = *state;
	struct h_run	 r;
	char		 db[PATH_MAX], *reqs;
	char		*first[] = { "warren", "run", "--db", db, "--in-place",
			    "--workspace", c->ws, "--profile", "explore",
			    "FIRST-TASK", NULL };
	char		*second[] = { "warren", "run", "--db", db,
			    "--in-place", "--workspace", c->ws, "--profile",
			    "explore", "--continue", "SECOND-TASK", NULL };
	char		*third[] = { "warren", "run", "--db", db, "--in-place",
			    "--workspace", c->ws, "--continue", "2",
			    "THIRD-TASK", NULL };
	char		*show[] = { "warren", "show", "--db", db, "2", NULL };
	char		*env[] = { fl.env_url, "WARREN_API_KEY=k",
			    "WARREN_MODEL=fake-model", "WARREN_RETRIES=0",
			    NULL };

	h_ws_cassette_close(c);
	snprintf(db, sizeof(db), "%s/cont.db", c->dir);
	if (fake_start(&fl, c->dir, cont_script) == 1)
		skip();
	assert_int_equal(h_warren(&r, first, env, NULL, NULL), 0);
	assert_int_equal(r.status, 0);
	h_run_free(&r);
	assert_int_equal(h_warren(&r, second, env, NULL, NULL), 0);
	if (r.status != 0 || strstr(r.out, "SECOND-ANSWER") == NULL)
		fail_msg("%d\n%s\n%s", r.status, r.out, r.err);
	h_run_free(&r);
	assert_int_equal(h_warren(&r, third, env, NULL, NULL), 0);
	if (r.status != 0 || strstr(r.out, "THIRD-ANSWER") == NULL)
		fail_msg("%d\n%s\n%s", r.status, r.out, r.err);
	h_run_free(&r);
	h_fakellm_stop(&fl);
	reqs = h_read_file(fl.log);
	/* What the model was sent: the earlier answers, as memory. */
	/* (run 3's request names SECOND-TASK too, in its memory) */
	assert_int_equal(h_count_lines(reqs, "SECOND-TASK",
	    "EARLIER-ANSWER-31"), 2);
	assert_int_equal(h_count_lines(reqs, "THIRD-TASK", "SECOND-ANSWER"),
	    1);
	assert_int_equal(h_count_lines(reqs, "THIRD-TASK",
	    "EARLIER-ANSWER-31"), 1);
	/* and without --continue, none: run 1's request has no memory */
	assert_int_equal(h_count_lines(reqs, "\"method\":\"POST\"", NULL), 3);
	assert_int_equal(h_count_lines(reqs, "FIRST-TASK", "memory of"), 2);
	free(reqs);
	assert_int_equal(h_warren(&r, show, NULL, NULL, NULL), 0);
	if (strstr(r.out, "continues run 1\n") == NULL ||
	    strstr(r.out, "continued by run 3\n") == NULL)
		fail_msg("%s\n%s", r.out, r.err);
	h_run_free(&r);
}

/* --continue refuses what cannot be followed up. */
static void
test_continue_refused(void **state)
{
	struct h_ws	*c = *state;
	struct h_run	 r;
	char		 db[PATH_MAX];
	char		*none[] = { "warren", "run", "--db", db, "--in-place",
			    "--workspace", c->ws, "--replay", c->cas,
			    "--continue", "T", NULL };
	char		*nostore[] = { "warren", "run", "--no-store",
			    "--workspace", c->ws, "--replay", c->cas,
			    "--continue", "T", NULL };
	char		*missing[] = { "warren", "run", "--db", db,
			    "--in-place", "--workspace", c->ws, "--replay",
			    c->cas, "--continue", "99", "T", NULL };

	h_ws_cassette_close(c);
	snprintf(db, sizeof(db), "%s/empty.db", c->dir);
	assert_int_equal(h_warren(&r, none, NULL, NULL, NULL), 0);
	assert_int_equal(r.status, 2);
	assert_non_null(strstr(r.err, "--continue: no run to continue"));
	h_run_free(&r);
	assert_int_equal(h_warren(&r, nostore, NULL, NULL, NULL), 0);
	assert_int_equal(r.status, 2);
	assert_non_null(strstr(r.err, "--continue needs the store"));
	h_run_free(&r);
	assert_int_equal(h_warren(&r, missing, NULL, NULL, NULL), 0);
	assert_int_equal(r.status, 2);
	assert_non_null(strstr(r.err, "--continue: run 99"));
	h_run_free(&r);
}

static const char model_script[] =
"{\"rules\": [\n"
" {\"match\": \"SCOUT-RESULT\", \"repeat\": true, \"responses\": [{\"reply\":"
"  {\"calls\": [{\"id\": \"c3\", \"name\": \"complete\", \"arguments\":"
"  {\"result\": \"MODEL-RUN-DONE\"}}]}}]},\n"
" {\"match\": \"SCOUT-JOB\", \"repeat\": true, \"responses\": [{\"reply\":"
"  {\"calls\": [{\"id\": \"c2\", \"name\": \"complete\", \"arguments\":"
"  {\"result\": \"SCOUT-RESULT\"}}]}}]},\n"
" {\"match\": \"MODEL-TASK\", \"repeat\": true, \"responses\": [{\"reply\":"
"  {\"calls\": [{\"id\": \"c1\", \"name\": \"delegate\", \"arguments\":"
"  {\"profile\": \"scout\", \"task\": \"SCOUT-JOB\"}}]}}]}\n"
"]}\n";

/*
 * An agent file in the user's config (Claude Code's shape): its model:
 * reaches the endpoint for that agent's turns only; its description is
 * in the orchestrator's delegate schema with its name in the enum; its
 * unknown tool (WebFetch) is a warning naming file:line and the file's
 * Read still loads.
 */
static void
test_agent_file(void **state)
{
	struct h_fakellm fl;
	struct h_ws	*c = *state;
	struct h_run	 r;
	char		 cfg[1024], agents[PATH_MAX], envcfg[PATH_MAX + 32];
	char		*reqs;
	char		*argv[] = { "warren", "run", "--json", "--no-store",
			    "--in-place", "--workspace", c->ws, "MODEL-TASK",
			    NULL };
	char		*env[] = { fl.env_url, "WARREN_API_KEY=k", envcfg,
			    "WARREN_MODEL=fake-model", "WARREN_RETRIES=0",
			    NULL };

	h_ws_cassette_close(c);
	snprintf(cfg, sizeof(cfg), "%s/config", c->dir);
	snprintf(agents, sizeof(agents), "%s/warren/agents", cfg);
	snprintf(envcfg, sizeof(envcfg), "XDG_CONFIG_HOME=%s", cfg);
	assert_int_equal(mkdir(cfg, 0755), 0);
	snprintf(agents, sizeof(agents), "%s/warren", cfg);
	assert_int_equal(mkdir(agents, 0755), 0);
	snprintf(agents, sizeof(agents), "%s/warren/agents", cfg);
	assert_int_equal(mkdir(agents, 0755), 0);
	h_write(agents, "scout.md", "---\nname: scout\ndescription: "
	    "SCOUT-DESC-55 looks around\nmodel: scout-model-9\n"
	    "tools: Read, WebFetch\n---\nYou scout.\n", 0);
	if (fake_start(&fl, c->dir, model_script) == 1)
		skip();
	assert_int_equal(h_warren(&r, argv, env, NULL, NULL), 0);
	h_fakellm_stop(&fl);
	check_ok(&r, "MODEL-RUN-DONE");
	if (h_count_lines(r.err, "scout.md:5: unknown tool \"WebFetch\" "
	    "left out", NULL) != 1)
		fail_msg("%s", r.err);
	h_run_free(&r);
	reqs = h_read_file(fl.log);
	/* Three turns: the scout's with its model, the others' with the
	 * configured one. */
	assert_int_equal(h_count_lines(reqs, "\"method\":\"POST\"", NULL), 3);
	assert_int_equal(h_count_lines(reqs, "\"model\":\"scout-model-9\"",
	    NULL), 1);
	assert_int_equal(h_count_lines(reqs, "\"model\":\"scout-model-9\"",
	    "You scout."), 1);
	assert_int_equal(h_count_lines(reqs, "\"model\":\"fake-model\"",
	    NULL), 2);
	/* The orchestrator's delegate schema: every profile, described. */
	assert_int_equal(h_count_lines(reqs, "MODEL-TASK",
	    "scout: SCOUT-DESC-55 looks around"), 2);
	assert_int_equal(h_count_lines(reqs, "MODEL-TASK",
	    "\"enum\":[\"explore\",\"plan\",\"review\",\"test\",\"general\","
	    "\"scout\"]"), 2);
	assert_int_equal(h_count_lines(reqs, "MODEL-TASK",
	    "explore: Find things in the workspace, read-only"), 2);
	/* The scout has read, not WebFetch, and no delegate. */
	assert_int_equal(h_count_lines(reqs, "You scout.",
	    "\"name\":\"read\""), 1);
	assert_int_equal(h_count_lines(reqs, "You scout.",
	    "\"name\":\"delegate\""), 0);
	free(reqs);
}

/* One run of model_script in c->ws with env; its requests' log. */
static char *
alias_run(struct h_ws *c, char *const env[], struct h_fakellm *fl)
{
	struct h_run	 r;
	char		*argv[] = { "warren", "run", "--json", "--no-store",
			    "--in-place", "--workspace", c->ws, "MODEL-TASK",
			    NULL };
	char		 path[PATH_MAX + 32], *reqs;

	/* A fresh endpoint each time: not the last one's port or log. */
	snprintf(path, sizeof(path), "%s/port", c->dir);
	(void)unlink(path);
	snprintf(path, sizeof(path), "%s/requests.log", c->dir);
	(void)unlink(path);
	if (fake_start(fl, c->dir, model_script) == 1)
		return NULL;
	assert_int_equal(h_warren(&r, argv, env, NULL, NULL), 0);
	h_fakellm_stop(fl);
	check_ok(&r, "MODEL-RUN-DONE");
	h_run_free(&r);
	reqs = h_read_file(fl->log);
	assert_int_equal(h_count_lines(reqs, "\"method\":\"POST\"", NULL), 3);
	return reqs;
}

/*
 * Claude Code's model aliases in an agent file (issue 34): with the
 * anthropic provider `model: sonnet` goes out as the built-in id, a
 * user's model_aliases line overrides it, and `model: inherit` is the
 * run's model.
 */
static void
test_agent_alias(void **state)
{
	struct h_fakellm fl;
	struct h_ws	*c = *state;
	char		 cfg[PATH_MAX], envcfg[PATH_MAX + 32];
	char		*reqs;
	char		*env[] = { fl.env_url, "WARREN_API_KEY=k", envcfg,
			    "WARREN_PROVIDER=anthropic",
			    "WARREN_MODEL=fake-model", "WARREN_RETRIES=0",
			    NULL };

	h_ws_cassette_close(c);
	snprintf(cfg, sizeof(cfg), "%s/config", c->dir);
	snprintf(envcfg, sizeof(envcfg), "XDG_CONFIG_HOME=%s", cfg);
	h_write(c->dir, "config/warren/agents/scout.md", "---\nname: scout\n"
	    "model: sonnet\n"
	    "tools: Read\n---\nYou scout.\n", 0);
	if ((reqs = alias_run(c, env, &fl)) == NULL)
		skip();
	if (h_count_lines(reqs, "\"model\":\"claude-sonnet-4-5\"",
	    "You scout.") != 1 || h_count_lines(reqs, "\"model\":\"sonnet\"",
	    NULL) != 0)
		fail_msg("sonnet not sent as claude-sonnet-4-5:\n%s", reqs);
	assert_int_equal(h_count_lines(reqs, "\"model\":\"fake-model\"",
	    NULL), 2);
	free(reqs);

	h_write(c->dir, "config/warren/config", "model_aliases = opus=x\n"
	    "model_aliases = sonnet=my-sonnet-7\n", 0);
	reqs = alias_run(c, env, &fl);
	if (h_count_lines(reqs, "\"model\":\"my-sonnet-7\"", "You scout.") !=
	    1 || h_count_lines(reqs, "claude-sonnet-4-5", NULL) != 0)
		fail_msg("the user's model_aliases not taken:\n%s", reqs);
	free(reqs);

	h_write(c->dir, "config/warren/agents/scout.md", "---\nname: scout\n"
	    "model: inherit\n"
	    "tools: Read\n---\nYou scout.\n", 0);
	reqs = alias_run(c, env, &fl);
	if (h_count_lines(reqs, "\"model\":\"fake-model\"", "You scout.") !=
	    1 || h_count_lines(reqs, "\"model\":\"fake-model\"", NULL) != 3)
		fail_msg("inherit is not the run's model:\n%s", reqs);
	free(reqs);
}

/* Does the file at path hold needle anywhere (binary)? */
static int
file_has(const char *path, const char *needle)
{
	char	buf[1 << 16];
	size_t	n, len = strlen(needle), keep = 0;
	FILE	*f;

	if ((f = fopen(path, "rb")) == NULL)
		return 0;
	while ((n = fread(buf + keep, 1, sizeof(buf) - keep, f)) > 0) {
		n += keep;
		if (memmem(buf, n, needle, len) != NULL) {
			fclose(f);
			return 1;
		}
		keep = n < len ? n : len - 1;
		memmove(buf, buf + n - keep, keep);
	}
	fclose(f);
	return 0;
}

/* Run 1 of db is running again, its supervisor gone. */
static void
set_running(const char *db)
{
	sqlite3	*h;

	assert_int_equal(sqlite3_open(db, &h), SQLITE_OK);
	assert_int_equal(sqlite3_exec(h, "UPDATE runs SET status='running', "
	    "pid=0, ended_ms=0 WHERE id=1", NULL, NULL, NULL), SQLITE_OK);
	assert_int_equal(sqlite3_changes(h), 1);
	sqlite3_close(h);
}

/*
 * A base URL's password is masked where the run stores it (its params,
 * shown by `warren show`), with '@' in the password (issue 31); a resume
 * whose configured base URL masks the same says nothing, one that does
 * not says the stored one held credentials.
 */
static void
test_stored_url(void **state)
{
	struct h_ws	*c = *state;
	struct h_run	 r;
	char		 db[PATH_MAX], wal[PATH_MAX + 8];
	char		*argv[] = { "warren", "run", "--json", "--db", db,
			    "--workspace", c->ws, "--replay", c->cas,
			    "--profile", "explore", "--base-url",
			    "https://user:p@SECss@host.example/v1", "look", NULL };
	char		*show[] = { "warren", "show", "--db", db, "--json", "1",
			    NULL };
	char		*same[] = { "warren", "resume", "--db", db, "--replay",
			    c->cas, "--base-url",
			    "https://user:p@SECss@host.example/v1", "1", NULL };
	char		*other[] = { "warren", "resume", "--db", db, "--replay",
			    c->cas, "1", NULL };

	snprintf(db, sizeof(db), "%s/runs.db", c->dir);
	h_turn(c->f, "0", 1, h_calls1("a", "complete",
	    "{\"result\":\"URL-OK\"}"));
	h_ws_cassette_close(c);
	assert_int_equal(h_warren(&r, argv, NULL, NULL, NULL), 0);
	check_ok(&r, "URL-OK");
	assert_null(strstr(r.out, "SEC"));
	assert_null(strstr(r.err, "SEC"));
	h_run_free(&r);
	assert_int_equal(h_warren(&r, show, NULL, NULL, NULL), 0);
	assert_int_equal(r.status, 0);
	if (strstr(r.out, "https://user:***@host.example/v1") == NULL ||
	    strstr(r.out, "SEC") != NULL)
		fail_msg("warren show: %s", r.out);
	h_run_free(&r);
	snprintf(wal, sizeof(wal), "%s-wal", db);
	assert_false(file_has(db, "SECss"));
	assert_false(file_has(wal, "SECss"));

	/* As if its supervisor had been killed: a run to resume. */
	set_running(db);
	assert_int_equal(h_warren(&r, same, NULL, NULL, NULL), 0);
	if (r.status != 0 || strstr(r.err, "held credentials") != NULL)
		fail_msg("resume, same URL: %d\n%s", r.status, r.err);
	h_run_free(&r);
	set_running(db);
	assert_int_equal(h_warren(&r, other, NULL, NULL, NULL), 0);
	if (strstr(r.err, "run 1's base_url https://user:***@host.example/v1 "
	    "held credentials, which were not stored") == NULL)
		fail_msg("resume: %d\n%s", r.status, r.err);
	h_run_free(&r);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_root_explore, setup,
		    h_ws_teardown),
		cmocka_unit_test_setup_teardown(test_root_general, setup,
		    h_ws_teardown),
		cmocka_unit_test_setup_teardown(test_root_cow, setup,
		    h_ws_teardown),
		cmocka_unit_test_setup_teardown(test_root_plan_review_test,
		    setup, h_ws_teardown),
		cmocka_unit_test_setup_teardown(test_root_limits, setup,
		    h_ws_teardown),
		cmocka_unit_test_setup_teardown(test_stdin_task, setup,
		    h_ws_teardown),
		cmocka_unit_test_setup_teardown(test_tool_filter_sandbox,
		    setup, h_ws_teardown),
		cmocka_unit_test_setup_teardown(test_tool_filter_from_worker,
		    setup, h_ws_teardown),
		cmocka_unit_test_setup_teardown(test_agent_alias, setup,
		    h_ws_teardown),
		cmocka_unit_test_setup_teardown(test_root_llm_error, setup,
		    h_ws_teardown),
		cmocka_unit_test_setup_teardown(test_schema_worker_root, setup,
		    h_ws_teardown),
		cmocka_unit_test_setup_teardown(test_schema_worker_never,
		    setup, h_ws_teardown),
		cmocka_unit_test_setup_teardown(test_schema_auto, setup,
		    h_ws_teardown),
		cmocka_unit_test_setup_teardown(test_continue, setup,
		    h_ws_teardown),
		cmocka_unit_test_setup_teardown(test_continue_refused, setup,
		    h_ws_teardown),
		cmocka_unit_test_setup_teardown(test_agent_file, setup,
		    h_ws_teardown),
		cmocka_unit_test_setup_teardown(test_stored_url, setup,
		    h_ws_teardown),
	};
	int	rc;

	rc = cmocka_run_group_tests(tests, NULL, NULL);
	h_fakellm_teardown(NULL);
	return rc;
}

/*
 * End-to-end tests of `warren run`: the real binaries, real sandboxed
 * workers, real tools on a real workspace; the model's side comes from a
 * cassette each test writes (keyed by agent path and step, so parallel
 * agents replay deterministically). Assertions read the --json events.
 * No timing is asserted: waits are hang guards only.
 */
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/types.h>

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "store/store.h"
#include "tests/e2e/harness.h"

static int
setup(void **state)
{
	*state = h_ws_new("MAGIC-LINE-42\nsecond line\n");
	return 0;
}

static void
run(struct h_ws *c, struct h_run *r, const char *const *opts,
    char *const *env, void (*during)(pid_t, void *), void *arg)
{
	h_ws_replay(c, r, opts, "e2e task", env, during, arg);
}

#define SPAWNED(out, path) h_count_lines(out, "\"event\":\"spawned\"", \
	"\"path\":\"" path "\"")
#define DONE_AS(out, path, end) h_count_lines(out, "\"path\":\"" path "\"", \
	"\"end\":\"" end "\"")

/* 0 -> 0.1 general -> 0.1.1 general -> 0.1.1.1 explore reads a file. */
static void
tree(struct h_ws *c, const char *const *opts)
{
	struct h_run	 r;

	h_turn(c->f, "0", 1, h_calls1("a", "delegate",
	    "{\"profile\":\"general\",\"task\":\"level one\"}"));
	h_turn(c->f, "0.1", 1, h_calls1("b", "delegate",
	    "{\"profile\":\"general\",\"task\":\"level two\"}"));
	h_turn(c->f, "0.1.1", 1, h_calls1("c", "delegate",
	    "{\"profile\":\"explore\",\"task\":\"read data.txt\"}"));
	h_turn(c->f, "0.1.1.1", 1, h_calls1("d", "read",
	    "{\"path\":\"data.txt\"}"));
	h_turn(c->f, "0.1.1.1", 2, h_calls1("e", "complete",
	    "{\"result\":\"deepest read it\"}"));
	h_turn(c->f, "0.1.1", 2, h_calls1("f", "complete",
	    "{\"result\":\"level two done\"}"));
	h_turn(c->f, "0.1", 2, h_calls1("g", "complete",
	    "{\"result\":\"level one done\"}"));
	h_turn(c->f, "0", 2, h_calls1("h", "complete",
	    "{\"result\":\"TREE-DONE\"}"));
	run(c, &r, opts, NULL, NULL, NULL);
	assert_int_equal(r.status, 0);
	assert_int_equal(SPAWNED(r.out, "0.1"), 1);
	assert_int_equal(SPAWNED(r.out, "0.1.1"), 1);
	assert_int_equal(SPAWNED(r.out, "0.1.1.1"), 1);
	assert_int_equal(DONE_AS(r.out, "0.1.1.1", "complete"), 1);
	assert_int_equal(DONE_AS(r.out, "0.1", "complete"), 1);
	/* The real read tool ran in the deepest sandboxed worker. */
	assert_true(h_count_lines(r.out, "\"path\":\"0.1.1.1\"",
	    "MAGIC-LINE-42") >= 1);
	/* Each parent got its child's result. */
	assert_true(h_count_lines(r.out, "\"path\":\"0.1.1\"",
	    "deepest read it") >= 1);
	assert_true(h_count_lines(r.out, "\"event\":\"result\"", "TREE-DONE")
	    == 1);
	h_run_free(&r);
}

static void
test_tree_three_deep(void **state)
{
	tree(*state, NULL);
}

/* One slot: parents waiting on their children give it back. */
static void
test_tree_one_job(void **state)
{
	static const char *const opts[] = { "--jobs", "1", NULL };

	tree(*state, opts);
}

static void
test_max_agents_refused(void **state)
{
	static const char *const opts[] = { "--max-agents", "1", NULL };
	struct h_ws	*c = *state;
	struct h_run	 r;

	h_turn(c->f, "0", 1, h_calls2("a", "delegate",
	    "{\"profile\":\"explore\",\"task\":\"first\"}", "b", "delegate",
	    "{\"profile\":\"explore\",\"task\":\"second\"}"));
	h_turn(c->f, "0.1", 1, h_calls1("c", "complete",
	    "{\"result\":\"one\"}"));
	h_turn(c->f, "0", 2, h_calls1("d", "complete", "{\"result\":\"ok\"}"));
	run(c, &r, opts, NULL, NULL, NULL);
	assert_int_equal(r.status, 0);
	assert_int_equal(h_count_lines(r.out, "\"event\":\"spawned\"", NULL),
	    1);
	/* The model reads the refusal as the delegate call's result. */
	assert_true(h_count_lines(r.out, "\"event\":\"tool_result\"",
	    "max agents 1 reached: finish the work yourself") >= 1);
	h_run_free(&r);
}

static void
test_max_depth_refused(void **state)
{
	static const char *const opts[] = { "--max-depth", "1", NULL };
	struct h_ws	*c = *state;
	struct h_run	 r;

	h_turn(c->f, "0", 1, h_calls1("a", "delegate",
	    "{\"profile\":\"general\",\"task\":\"go deep\"}"));
	h_turn(c->f, "0.1", 1, h_calls1("b", "delegate",
	    "{\"profile\":\"explore\",\"task\":\"deeper\"}"));
	h_turn(c->f, "0.1", 2, h_calls1("c", "complete",
	    "{\"result\":\"did it myself\"}"));
	h_turn(c->f, "0", 2, h_calls1("d", "complete", "{\"result\":\"ok\"}"));
	run(c, &r, opts, NULL, NULL, NULL);
	assert_int_equal(r.status, 0);
	assert_int_equal(SPAWNED(r.out, "0.1.1"), 0);
	assert_true(h_count_lines(r.out, "\"path\":\"0.1\"",
	    "max depth 1 reached: finish the work yourself") >= 1);
	assert_int_equal(DONE_AS(r.out, "0.1", "complete"), 1);
	h_run_free(&r);
}

/* Each agent waits for the other's mark: only overlapping agents pass. */
static void
test_parallel_overlap(void **state)
{
	static const char *const opts[] = { "--jobs", "2", NULL };
	struct h_ws	*c = *state;
	struct h_run	 r;
	char		 cmd[512], args[1024];
	const char	*me[2] = { "A", "B" }, *other[2] = { "B", "A" };
	int		 i;

	h_turn(c->f, "0", 1, h_calls2("a", "delegate",
	    "{\"profile\":\"test\",\"task\":\"A\"}", "b", "delegate",
	    "{\"profile\":\"test\",\"task\":\"B\"}"));
	for (i = 0; i < 2; i++) {
		snprintf(cmd, sizeof(cmd), "touch %s.started; n=0; while "
		    "[ ! -e %s.started ] && [ $n -lt 1200 ]; do sleep 0.1; "
		    "n=$((n+1)); done; [ -e %s.started ] && echo OVERLAP-%s",
		    me[i], other[i], other[i], me[i]);
		snprintf(args, sizeof(args), "{\"command\":%s}", h_js(cmd));
		h_turn(c->f, i == 0 ? "0.1" : "0.2", 1, h_calls1("x", "bash",
		    args));
		h_turn(c->f, i == 0 ? "0.1" : "0.2", 2, h_calls1("y",
		    "complete", "{\"result\":\"done\"}"));
	}
	h_turn(c->f, "0", 2, h_calls1("d", "complete", "{\"result\":\"ok\"}"));
	run(c, &r, opts, NULL, NULL, NULL);
	assert_int_equal(r.status, 0);
	assert_true(h_count_lines(r.out, "\"event\":\"tool_result\"",
	    "OVERLAP-A") == 1);
	assert_true(h_count_lines(r.out, "\"event\":\"tool_result\"",
	    "OVERLAP-B") == 1);
	h_run_free(&r);
}

/* Offset of the first line of text holding both a and b; -1 if none. */
static long
line_at(const char *text, const char *a, const char *b)
{
	const char	*p = text, *nl;
	size_t		 len;
	char		 line[8192];

	for (; *p != '\0'; p = nl + 1) {
		if ((nl = strchr(p, '\n')) == NULL)
			nl = p + strlen(p);
		len = (size_t)(nl - p) < sizeof(line) - 1 ? (size_t)(nl - p) :
		    sizeof(line) - 1;
		memcpy(line, p, len);
		line[len] = '\0';
		if (strstr(line, a) != NULL && strstr(line, b) != NULL)
			return (long)(p - text);
		if (*nl == '\0')
			break;
	}
	return -1;
}

/*
 * One slot: the second agent is spawned, and its first tool runs, only
 * after the first agent's done (its slot frees at done; spawns are
 * answered through the event loop, so nothing else decides the order).
 */
static void
test_jobs_one_in_turn(void **state)
{
	static const char *const opts[] = { "--jobs", "1", NULL };
	struct h_ws	*c = *state;
	struct h_run	 r;
	long		 done1, spawn2, call2;

	h_turn(c->f, "0", 1, h_calls2("a", "delegate",
	    "{\"profile\":\"explore\",\"task\":\"first\"}", "b",
	    "delegate", "{\"profile\":\"explore\",\"task\":\"second\"}"));
	h_turn(c->f, "0.1", 1, h_calls1("g", "glob", 
	    "{\"pattern\":\"*.txt\"}"));
	h_turn(c->f, "0.1", 2, h_calls1("c", "complete",
	    "{\"result\":\"one\"}"));
	h_turn(c->f, "0.2", 1, h_calls1("g", "glob", 
	    "{\"pattern\":\"*.txt\"}"));
	h_turn(c->f, "0.2", 2, h_calls1("c", "complete",
	    "{\"result\":\"two\"}"));
	h_turn(c->f, "0", 2, h_calls1("d", "complete", "{\"result\":\"ok\"}"));
	run(c, &r, opts, NULL, NULL, NULL);
	assert_int_equal(r.status, 0);
	done1 = line_at(r.out, "\"event\":\"done\"", "\"path\":\"0.1\"");
	spawn2 = line_at(r.out, "\"event\":\"spawned\"",
	    "\"path\":\"0.2\"");
	call2 = line_at(r.out, "\"event\":\"tool_call\"",
	    "\"path\":\"0.2\"");
	assert_true(done1 >= 0);
	assert_true(call2 >= 0);
	if (spawn2 < done1)
		fail_msg("0.2 spawned (line %ld) before 0.1 was done (line "
		    "%ld) under --jobs 1:\n%s", spawn2, done1, r.out);
	assert_true(done1 < call2);
	assert_int_equal(DONE_AS(r.out, "0.2", "complete"), 1);
	h_run_free(&r);
}

/*
 * Finished workers give their fds back at once: 30 subagents one after
 * another under RLIMIT_NOFILE 48. Until 23 Nov each kept its three pipe
 * ends until the run ended, and the 11th could not be started (EMFILE);
 * an ordinary user's 1,024 ran out at about 330 agents.
 */
#define FDS_AGENTS	30
static void
test_fds_released(void **state)
{
	static const char *const opts[] = { "--max-agents", "40", NULL };
	struct h_ws	*c = *state;
	struct h_run	 r;
	struct rlimit	 old, low;
	char		 task[96], agent[16];
	int		 i;

	for (i = 1; i <= FDS_AGENTS; i++) {
		snprintf(task, sizeof(task), "{\"profile\":\"explore\","
		    "\"task\":\"part %d\"}", i);
		h_turn(c->f, "0", (unsigned)i, h_calls1("a", "delegate", task));
		snprintf(agent, sizeof(agent), "0.%d", i);
		h_turn(c->f, agent, 1, h_calls1("c", "complete",
		    "{\"result\":\"seen\"}"));
	}
	h_turn(c->f, "0", FDS_AGENTS + 1, h_calls1("d", "complete",
	    "{\"result\":\"ok\"}"));
	assert_int_equal(getrlimit(RLIMIT_NOFILE, &old), 0);
	low = old;
	low.rlim_cur = 48;
	assert_int_equal(setrlimit(RLIMIT_NOFILE, &low), 0);
	run(c, &r, opts, NULL, NULL, NULL);
	assert_int_equal(setrlimit(RLIMIT_NOFILE, &old), 0);
	if (r.status != 0 || h_count_lines(r.out, "\"event\":\"done\"",
	    "\"end\":\"complete\"") != FDS_AGENTS + 1)
		fail_msg("status %d\n%s\n%s", r.status, r.out, r.err);
	h_run_free(&r);
}

/* Each cassette turn costs 110 tokens; a budget of 150 allows two. */
static void
test_token_budget(void **state)
{
	static const char *const opts[] = { "--budget", "150", NULL };
	struct h_ws	*c = *state;
	struct h_run	 r;

	h_turn(c->f, "0", 1, h_calls1("a", "delegate",
	    "{\"profile\":\"explore\",\"task\":\"spend\"}"));
	h_turn(c->f, "0.1", 1, h_calls1("b", "read",
	    "{\"path\":\"data.txt\"}"));
	h_turn(c->f, "0.1", 2, h_calls1("c", "complete", "{\"result\":\"x\"}"));
	h_turn(c->f, "0", 2, h_calls1("d", "complete", "{\"result\":\"ok\"}"));
	run(c, &r, opts, NULL, NULL, NULL);
	/* 0.1's second turn and the orchestrator's second are refused. */
	assert_int_equal(r.status, 1);
	assert_true(h_count_lines(r.out, "\"path\":\"0.1\"",
	    "token budget of 150 tokens for this run is spent") >= 1);
	assert_int_equal(DONE_AS(r.out, "0.1", "failed"), 1);
	assert_true(h_count_lines(r.out, "\"event\":\"result\"",
	    "\"ok\":false") == 1);
	h_run_free(&r);
}

/* A turn with text and no tool call. */
static void
text_turn(FILE *f, const char *agent, unsigned step, const char *text)
{
	fprintf(f, "{\"agent\":\"%s\",\"step\":%u,\"purpose\":\"turn\","
	    "\"reply\":{\"stop\":\"end\",\"usage\":{\"input\":100,"
	    "\"output\":10},\"text\":%s}}\n", agent, step, h_js(text));
	fflush(f);
}

/* warren run -T --json with a store in the test's directory. */
static void
run_stored(struct h_ws *c, struct h_run *r, char *db, char *const *env)
{
	char	*argv[] = { "warren", "run", "--json", "-T", "--workspace",
		    c->ws, "--replay", c->cas, "--db", db, "e2e task", NULL };

	h_ws_cassette_close(c);
	assert_int_equal(h_warren(r, argv, env, NULL, NULL), 0);
}

/*
 * How a subagent ended, as its parent (a worker) hears it: fail() as
 * failed with its reason, its own limit as limit, never crashed; an
 * auto-complete as its result, recorded as auto_complete with its reason
 * (the --json done event, the store, warren show).
 */
static void
test_outcomes(void **state)
{
	struct h_ws		*c = *state;
	struct h_run		 r;
	struct store		*st;
	struct store_agent	*ag;
	struct store_event	*ev;
	size_t			 nag, nev, i;
	int64_t			 run;
	char			 db[PATH_MAX], err[512], calls[3][256];
	char			*env[] = { "WARREN_MAX_ITERATIONS=3", NULL };
	char			*show[] = { "warren", "show", "--db", db,
				    "--workspace", c->ws, "last", NULL };
	int			 found = 0;

	snprintf(db, sizeof(db), "%s/w.db", c->dir);
	h_turn(c->f, "0", 1, h_calls1("a", "delegate",
	    "{\"profile\":\"general\",\"task\":\"manage\"}"));
	fprintf(c->f, "{\"agent\":\"0.1\",\"step\":1,\"purpose\":\"turn\","
	    "\"reply\":{\"stop\":\"tool_calls\",\"usage\":{\"input\":100,"
	    "\"output\":10},\"calls\":[%s,%s,%s]}}\n",
	    h_call(calls[0], 256, "d1", "delegate",
	    "{\"profile\":\"explore\",\"task\":\"give up\"}"),
	    h_call(calls[1], 256, "d2", "delegate",
	    "{\"profile\":\"explore\",\"task\":\"run long\"}"),
	    h_call(calls[2], 256, "d3", "delegate",
	    "{\"profile\":\"explore\",\"task\":\"chat\"}"));
	h_turn(c->f, "0.1.1", 1, h_calls1("f", "fail",
	    "{\"reason\":\"NO-SUCH-THING\"}"));
	for (i = 1; i <= 3; i++) {
		h_turn(c->f, "0.1.2", (unsigned)i, h_calls1("r", "read",
		    "{\"path\":\"data.txt\"}"));
		text_turn(c->f, "0.1.3", (unsigned)i, i < 3 ? "thinking" :
		    "CHATTY-ANSWER");
	}
	h_turn(c->f, "0.1", 2, h_calls1("c", "complete",
	    "{\"result\":\"MANAGED\"}"));
	h_turn(c->f, "0", 2, h_calls1("e", "complete",
	    "{\"result\":\"ok\"}"));
	run_stored(c, &r, db, env);
	if (r.status != 0 || DONE_AS(r.out, "0.1.1", "failed") != 1 ||
	    DONE_AS(r.out, "0.1.2", "limit") != 1 ||
	    DONE_AS(r.out, "0.1.3", "auto_complete") != 1)
		fail_msg("status %d\n%s\n%s", r.status, r.out, r.err);
	/* The parent's answers: codes on the wire, texts for its model. */
	assert_int_equal(h_count_lines(r.err, "ipc 0.1 <- spawn_err",
	    "code=failed"), 1);
	assert_int_equal(h_count_lines(r.err, "ipc 0.1 <- spawn_err",
	    "code=limit"), 1);
	assert_int_equal(h_count_lines(r.err, "ipc 0.1 <- spawn_err",
	    "code=crashed"), 0);
	assert_int_equal(h_count_lines(r.err, "ipc 0.1 <- spawn_ok",
	    "path=0.1.3"), 1);
	assert_true(h_count_lines(r.out, "\"event\":\"tool_result\"",
	    "subagent 0.1.1 (explore) failed: NO-SUCH-THING") >= 1);
	assert_true(h_count_lines(r.out, "\"event\":\"tool_result\"",
	    "subagent 0.1.2 (explore) stopped by its own limits: max "
	    "iterations") >= 1);
	assert_int_equal(h_count_lines(r.out, "\"end\":\"auto_complete\"",
	    "\"result\":\"CHATTY-ANSWER\",\"error\":null,\"reason\":"
	    "\"auto-completed: no complete() or fail() call after 2 "
	    "reminders"), 1);
	h_run_free(&r);
	/* The store: done, with its own end reason, the reason an event. */
	st = store_open(db, STORE_READ, err, sizeof(err));
	assert_non_null(st);
	assert_int_equal(store_run_latest(st, NULL, &run), 0);
	assert_int_equal(store_agents_list(st, run, &ag, &nag), 0);
	for (i = 0; i < nag; i++)
		if (strcmp(ag[i].path, "0.1.3") == 0) {
			assert_int_equal(ag[i].status, STORE_AGENT_DONE);
			assert_string_equal(ag[i].exit_reason,
			    "auto_complete");
			assert_string_equal(ag[i].result, "CHATTY-ANSWER");
			found++;
		} else if (strcmp(ag[i].path, "0.1.1") == 0)
			assert_string_equal(ag[i].exit_reason, "failed");
	store_agents_free(ag, nag);
	assert_int_equal(store_events_list(st, run, &ev, &nev), 0);
	for (i = 0; i < nev; i++)
		if (ev[i].path != NULL && strcmp(ev[i].path, "0.1.3") == 0 &&
		    strcmp(ev[i].type, "auto_complete") == 0 &&
		    strstr(ev[i].detail, "after 2 reminders") != NULL)
			found++;
	store_events_free(ev, nev);
	store_close(st);
	assert_int_equal(found, 2);
	assert_int_equal(h_warren(&r, show, NULL, NULL, NULL), 0);
	if (r.status != 0 ||
	    h_count_lines(r.out, "0.1.3 [done: auto_complete]", NULL) != 1 ||
	    h_count_lines(r.out, "0.1.1 [failed] ", NULL) != 1 ||
	    h_count_lines(r.out, "0.1 [done]", NULL) != 1)
		fail_msg("warren show:\n%s\n%s", r.out, r.err);
	h_run_free(&r);
}

/* The output schema of the --schema tests: {"n": integer}. */
#define SCHEMA_N	"{\"type\":\"object\",\"required\":[\"n\"]," \
			"\"properties\":{\"n\":{\"type\":\"integer\"}}}"

static void
schema_complete(struct h_ws *c, unsigned step, const char *result)
{
	char	args[256];

	snprintf(args, sizeof(args), "{\"result\":%s}", h_js(result));
	h_turn(c->f, "0", step, h_calls1("s", "complete", args));
}

/*
 * --schema: a complete() whose result does not match is answered with the
 * validation errors and the root goes on; the next, matching one ends the
 * run done with it.
 */
static void
test_schema_refused_then_done(void **state)
{
	struct h_ws	*c = *state;
	struct h_run	 r;
	char		 path[PATH_MAX];
	const char	*opts[] = { "--schema", path, NULL };

	snprintf(path, sizeof(path), "%s/schema.json", c->dir);
	h_write(c->dir, "schema.json", SCHEMA_N, 0644);
	schema_complete(c, 1, "{\"n\": \"five\"}");
	schema_complete(c, 2, "{\"n\": 5}");
	run(c, &r, opts, NULL, NULL, NULL);
	if (r.status != 0)
		fail_msg("status %d\n%s\n%s", r.status, r.out, r.err);
	assert_int_equal(h_count_lines(r.out, "\"event\":\"tool_result\"",
	    "$.n: expected integer, got string"), 1);
	assert_int_equal(h_count_lines(r.out, "\"event\":\"tool_result\"",
	    "complete() refused (1 of 3)"), 1);
	assert_int_equal(h_count_lines(r.out, "\"event\":\"result\"",
	    "{\\\"n\\\": 5}"), 1);
	h_run_free(&r);
}

/* Three results that do not match: the run fails with the last errors
 * (it does not go on to max_iterations). */
static void
test_schema_three_refusals(void **state)
{
	struct h_ws	*c = *state;
	struct h_run	 r;
	char		 path[PATH_MAX];
	const char	*opts[] = { "--schema", path, NULL };
	unsigned	 i;

	snprintf(path, sizeof(path), "%s/schema.json", c->dir);
	h_write(c->dir, "schema.json", SCHEMA_N, 0644);
	for (i = 1; i <= 4; i++)
		schema_complete(c, i, i < 3 ? "not json" : "{\"m\": 1}");
	run(c, &r, opts, NULL, NULL, NULL);
	if (r.status != 1)
		fail_msg("status %d\n%s\n%s", r.status, r.out, r.err);
	assert_int_equal(h_count_lines(r.out, "\"event\":\"tool_result\"",
	    "the answer is not JSON"), 2);
	assert_int_equal(h_count_lines(r.out, "\"event\":\"done\"",
	    "complete() refused 3 times by the output schema; the last "
	    "result: $: missing required property \\\"n\\\""), 1);
	h_run_free(&r);
}

/* A --schema file that cannot be read, is not JSON or not a usable
 * schema: exit 3 with why, before anything runs. */
static void
test_schema_bad_file(void **state)
{
	struct h_ws	*c = *state;
	struct h_run	 r;
	char		 path[PATH_MAX];
	const char	*opts[] = { "--schema", path, NULL };
	static const char *const bad[][2] = {
		{ "absent.json", "--schema" },
		{ "notjson.json", "give a file holding a JSON Schema object" },
		{ "array.json", "not a usable JSON Schema: not an object" },
		{ "thing.json", "not a usable JSON Schema: $.type: \"thing\" is "
		    "not a type" },
		/* Keywords the run reads only for an object value, nested:
		 * refused before the run, not at each complete(). */
		{ "required.json", "not a usable JSON Schema: "
		    "$.properties.a.required: must be a list of property "
		    "names, not string" },
		{ "items.json", "not a usable JSON Schema: $.items: must be a "
		    "schema (an object or true or false), not integer" },
	};
	size_t		 i;

	h_write(c->dir, "notjson.json", "{\"type\":", 0644);
	h_write(c->dir, "array.json", "[1]", 0644);
	h_write(c->dir, "thing.json", "{\"type\":\"thing\"}", 0644);
	h_write(c->dir, "required.json", "{\"properties\":{\"a\":"
	    "{\"required\":\"n\"}}}", 0644);
	h_write(c->dir, "items.json", "{\"type\":\"array\",\"items\":3}",
	    0644);
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		snprintf(path, sizeof(path), "%s/%s", c->dir, bad[i][0]);
		run(c, &r, opts, NULL, NULL, NULL);
		if (r.status != 3 || strstr(r.err, bad[i][1]) == NULL ||
		    strstr(r.out, "\"event\":\"result\"") != NULL)
			fail_msg("%s: status %d\n%s", bad[i][0], r.status,
			    r.err);
		h_run_free(&r);
	}
}

/* The orchestrator auto-completed: the run is done, exit 0. */
static void
test_root_auto_complete(void **state)
{
	struct h_ws	*c = *state;
	struct h_run	 r;

	text_turn(c->f, "0", 1, "hmm");
	text_turn(c->f, "0", 2, "hmm");
	text_turn(c->f, "0", 3, "ROOT-ANSWER");
	run(c, &r, NULL, NULL, NULL, NULL);
	if (r.status != 0 || DONE_AS(r.out, "0", "auto_complete") != 1 ||
	    h_count_lines(r.out, "\"event\":\"result\"",
	    "\"result\":\"ROOT-ANSWER\"") != 1)
		fail_msg("status %d\n%s\n%s", r.status, r.out, r.err);
	h_run_free(&r);
}

/*
 * A subagent's LLM answer over the protocol's 4 MiB a string (but under
 * max_response): the agent ends on an LLM error naming the size, its
 * worker is not killed for a protocol violation, the run goes on. Once as
 * a text, once as a tool call's arguments.
 */
static void
big_answer(struct h_ws *c, int as_call)
{
	struct h_run	 r;
	char		*big;
	size_t		 n = 5000000;

	assert_non_null(big = malloc(n + 64));
	memset(big, 'x', n);
	big[n] = '\0';
	h_turn(c->f, "0", 1, h_calls1("a", "delegate",
	    "{\"profile\":\"explore\",\"task\":\"say a lot\"}"));
	if (as_call)
		fprintf(c->f, "{\"agent\":\"0.1\",\"step\":1,\"purpose\":"
		    "\"turn\",\"reply\":{\"stop\":\"tool_calls\",\"usage\":"
		    "{\"input\":100,\"output\":10},\"calls\":[{\"id\":\"w\","
		    "\"name\":\"complete\",\"arguments\":\"{\\\"result\\\":"
		    "\\\"%s\\\"}\"}]}}\n", big);
	else
		fprintf(c->f, "{\"agent\":\"0.1\",\"step\":1,\"purpose\":"
		    "\"turn\",\"reply\":{\"stop\":\"end\",\"usage\":{\"input\":"
		    "100,\"output\":10},\"text\":\"%s\"}}\n", big);
	free(big);
	h_turn(c->f, "0", 2, h_calls1("b", "complete",
	    "{\"result\":\"SURVIVED\"}"));
	run(c, &r, NULL, NULL, NULL, NULL);
	if (r.status != 0 || DONE_AS(r.out, "0.1", "failed") != 1 ||
	    h_count_lines(r.out, "\"event\":\"tool_result\"", "subagent 0.1 "
	    "(explore) failed: llm: the model's answer is too large for a "
	    "subagent") != 1 ||
	    h_count_lines(r.out, "\"event\":\"tool_result\"",
	    as_call ? "bytes, at most 4194304 allowed" :
	    "reply.msg: 5000000 bytes, at most 4194304 allowed") != 1 ||
	    h_count_lines(r.out, "\"event\":\"result\"", "SURVIVED") != 1 ||
	    h_count_lines(r.out, "\"end\":\"protocol\"", NULL) != 0)
		fail_msg("status %d\n%.4000s\n%.4000s", r.status, r.out, r.err);
	h_run_free(&r);
}

static void
test_big_answer_text(void **state)
{
	big_answer(*state, 0);
}

static void
test_big_answer_call(void **state)
{
	big_answer(*state, 1);
}

/*
 * A failed child's answer longer than a spawn_err message (16 KiB: its
 * partial result is its last text): its parent gets the head and a note,
 * and is not killed for it.
 */
static void
test_long_failure_answer(void **state)
{
	struct h_ws	*c = *state;
	struct h_run	 r;
	char		 big[20001];

	memset(big, 'y', sizeof(big) - 1);
	big[sizeof(big) - 1] = '\0';
	h_turn(c->f, "0", 1, h_calls1("a", "delegate",
	    "{\"profile\":\"general\",\"task\":\"manage\"}"));
	h_turn(c->f, "0.1", 1, h_calls1("b", "delegate",
	    "{\"profile\":\"explore\",\"task\":\"talk then fail\"}"));
	fprintf(c->f, "{\"agent\":\"0.1.1\",\"step\":1,\"purpose\":\"turn\","
	    "\"reply\":{\"stop\":\"tool_calls\",\"usage\":{\"input\":100,"
	    "\"output\":10},\"text\":\"%s\",\"calls\":%s}}\n", big,
	    h_calls1("r", "read", "{\"path\":\"data.txt\"}"));
	h_turn(c->f, "0.1.1", 2, h_calls1("f", "fail",
	    "{\"reason\":\"GAVE-UP\"}"));
	h_turn(c->f, "0.1", 2, h_calls1("c", "complete",
	    "{\"result\":\"PARENT-OK\"}"));
	h_turn(c->f, "0", 2, h_calls1("d", "complete", "{\"result\":\"ok\"}"));
	run(c, &r, NULL, NULL, NULL, NULL);
	if (r.status != 0 || DONE_AS(r.out, "0.1.1", "failed") != 1 ||
	    DONE_AS(r.out, "0.1", "complete") != 1 ||
	    h_count_lines(r.out, "\"path\":\"0.1\"", "subagent 0.1.1 "
	    "(explore) failed: GAVE-UP; partial result: yyyy") != 1 ||
	    /* 16,320 bytes kept, then " [... 3738 bytes cut]" */
	    h_count_lines(r.out, "\"path\":\"0.1\"",
	    "\"error\":true,\"bytes\":16341,") != 1)
		fail_msg("status %d\n%.3000s\n%.3000s", r.status, r.out, r.err);
	h_run_free(&r);
}

/* The supervisor's wall clock: cancel, a grace, then the whole tree. */
static void
test_agent_timeout(void **state)
{
	static const char *const opts[] = { "--agent-timeout", "2s", NULL };
	struct h_ws	*c = *state;
	struct h_run	 r;

	h_turn(c->f, "0", 1, h_calls1("a", "delegate",
	    "{\"profile\":\"test\",\"task\":\"dawdle\"}"));
	h_turn(c->f, "0.1", 1, h_calls1("b", "bash",
	    "{\"command\":\"sleep 600\"}"));
	h_turn(c->f, "0", 2, h_calls1("c", "complete", "{\"result\":\"ok\"}"));
	/* Not the hang guard's minutes if the timeout does not fire. */
	h_hang_guard = 30;
	run(c, &r, opts, NULL, NULL, NULL);
	if (r.hung)
		fail_msg("%s", h_deadline_missed(&r,
		    "the agent timeout (2 s)"));
	assert_int_equal(r.status, 0);
	assert_int_equal(DONE_AS(r.out, "0.1", "timeout"), 1);
	assert_true(h_count_lines(r.out, "\"event\":\"tool_result\"",
	    "subagent 0.1 (test) timed out") >= 1);
	h_run_free(&r);
}

struct killer {
	char	mark[PATH_MAX];
	char	needle[64];
	int	sig;
	int	killed;
};

static void
kill_worker(pid_t warren, void *arg)
{
	struct killer	*k = arg;
	pid_t		 pids[8];
	int		 n, i;

	if (h_wait_file(k->mark, H_HANG_GUARD_S / 2) == -1)
		return;
	n = h_find_procs(k->needle, pids, 8);
	/* Only this run's worker: another suite may run at the same time. */
	for (i = 0; i < n; i++)
		if (h_descends(pids[i], warren) && kill(pids[i], k->sig) == 0)
			k->killed++;
}

/* A test worker in `sleep 600` gets sig from outside; the run goes on. */
static void
signal_mid_step(struct h_ws *c, int sig, struct h_run *r)
{
	struct killer	 k;
	char		 args[512];

	memset(&k, 0, sizeof(k));
	k.sig = sig;
	snprintf(k.mark, sizeof(k.mark), "%s/victim.started", c->ws);
	/* The worker's title: "warren-worker: test 0.1 (depth 1)". */
	snprintf(k.needle, sizeof(k.needle), "warren-worker: test 0.1 ");
	snprintf(args, sizeof(args), "{\"command\":\"touch victim.started; "
	    "sleep 600\"}");
	h_turn(c->f, "0", 1, h_calls1("a", "delegate",
	    "{\"profile\":\"test\",\"task\":\"victim\"}"));
	h_turn(c->f, "0.1", 1, h_calls1("b", "bash", args));
	h_turn(c->f, "0", 2, h_calls1("c", "complete",
	    "{\"result\":\"SURVIVED\"}"));
	run(c, r, NULL, NULL, kill_worker, &k);
	assert_true(k.killed >= 1);
	assert_int_equal(r->status, 0);
	assert_true(h_count_lines(r->out, "\"event\":\"result\"", "SURVIVED")
	    == 1);
}

static void
test_sigkill_mid_step(void **state)
{
	struct h_ws	*c = *state;
	struct h_run	 r;

	signal_mid_step(c, SIGKILL, &r);
	assert_int_equal(DONE_AS(r.out, "0.1", "crashed"), 1);
	assert_true(h_count_lines(r.out, "\"path\":\"0.1\"", "signal 9") >= 1);
	/* The parent heard why. */
	assert_true(h_count_lines(r.out, "\"event\":\"tool_result\"",
	    "subagent 0.1 (test) crashed") >= 1);
	h_run_free(&r);
}

/*
 * RLIMIT_CPU's signal, sent by hand: the worker, pid 1 of its namespace,
 * would ignore it without its handler; with it the end is "killed" by
 * the CPU limit, not a crash.
 */
static void
test_cpu_limit_signal(void **state)
{
	struct h_ws	*c = *state;
	struct h_run	 r;

	signal_mid_step(c, SIGXCPU, &r);
	assert_int_equal(DONE_AS(r.out, "0.1", "killed"), 1);
	assert_true(h_count_lines(r.out, "\"path\":\"0.1\"",
	    "killed by the CPU limit") >= 1);
	h_run_free(&r);
}

struct interrupter {
	char	mark[PATH_MAX];
	int	sent;
	int	twice;		/* a second SIGINT: kill at once */
};

static void
interrupt(pid_t warren, void *arg)
{
	struct interrupter	*it = arg;

	if (h_wait_file(it->mark, H_HANG_GUARD_S / 2) == -1)
		return;
	if (kill(warren, SIGINT) == 0)
		it->sent = 1;
	if (it->twice && kill(warren, SIGINT) == -1)
		it->sent = 0;
}

static void
no_orphans(struct h_ws *c, int twice)
{
	struct h_run		 r;
	struct interrupter	 it;
	pid_t			 pids[16];
	char			 cmd[512], args[1024], needle[64];
	unsigned		 u = 900000 + (unsigned)getpid() % 90000;

	memset(&it, 0, sizeof(it));
	it.twice = twice;
	snprintf(it.mark, sizeof(it.mark), "%s/sig.started", c->ws);
	/* A detached grandchild, a background child, a foreground sleep. */
	snprintf(cmd, sizeof(cmd), "setsid sleep %u.1 >/dev/null 2>&1 & "
	    "sleep %u.2 >/dev/null 2>&1 & sleep 0.2; touch sig.started; "
	    "sleep %u.3", u, u, u);
	snprintf(args, sizeof(args), "{\"command\":%s}", h_js(cmd));
	h_turn(c->f, "0", 1, h_calls2("a", "delegate",
	    "{\"profile\":\"test\",\"task\":\"A\"}", "b", "delegate",
	    "{\"profile\":\"explore\",\"task\":\"B\"}"));
	h_turn(c->f, "0.1", 1, h_calls1("b", "bash", args));
	h_turn(c->f, "0.2", 1, h_calls1("c", "bash", "{\"command\":\"true\"}"));
	run(c, &r, NULL, NULL, interrupt, &it);
	assert_true(it.sent);
	assert_int_equal(r.status, 130);
	snprintf(needle, sizeof(needle), "sleep %u.", u);
	assert_int_equal(h_find_procs(needle, pids, 16), 0);
	h_run_free(&r);
}

static void
test_no_orphans_after_sigint(void **state)
{
	no_orphans(*state, 0);
}

static void
test_no_orphans_after_two_sigints(void **state)
{
	no_orphans(*state, 1);
}

/* 0 delegates one general agent, which runs cmd in bash and completes. */
static void
general_bash(struct h_ws *c, const char *task, const char *cmd)
{
	char	args[8192], del[256];

	snprintf(args, sizeof(args), "{\"command\":%s}", h_js(cmd));
	snprintf(del, sizeof(del), "{\"profile\":\"general\",\"task\":"
	    "\"%s\"}", task);
	h_turn(c->f, "0", 1, h_calls1("a", "delegate", del));
	h_turn(c->f, "0.1", 1, h_calls1("b", "bash", args));
	h_turn(c->f, "0.1", 2, h_calls1("c", "complete", "{\"result\":\"x\"}"));
	h_turn(c->f, "0", 2, h_calls1("d", "complete", "{\"result\":\"ok\"}"));
}

struct snoop {
	char	mark[PATH_MAX];
	int	checked;
	int	found;
};

/* From outside: the supervisor's environment block holds no key. */
static void
snoop_env(pid_t warren, void *arg)
{
	struct snoop	*s = arg;
	char		 path[64], buf[65536];
	ssize_t		 n, i;
	int		 fd;

	if (h_wait_file(s->mark, H_HANG_GUARD_S / 2) == -1)
		return;
	snprintf(path, sizeof(path), "/proc/%d/environ", (int)warren);
	if ((fd = open(path, O_RDONLY)) == -1)
		return;	/* non-dumpable: not even we can read it */
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	s->checked = 1;
	for (i = 0; i < n; i++)
		if (buf[i] == '\0')
			buf[i] = '\n';
	buf[n > 0 ? n : 0] = '\0';
	if (strstr(buf, "7c1d93ab") != NULL)
		s->found = 1;
}

static void
test_api_key_hidden(void **state)
{
	static char *const env[] = {
		"WARREN_API_KEY=sk-warren-e2e-7c1d93ab", NULL
	};
	struct h_ws	*c = *state;
	struct h_run	 r;
	struct snoop	 s;
	const char	*cmd;

	memset(&s, 0, sizeof(s));
	snprintf(s.mark, sizeof(s.mark), "%s/snoop.started", c->ws);
	/* The key's tail is split so the command itself never holds it. */
	cmd = "touch snoop.started; k=7c1d; k=${k}93ab; "
	    "(env; cat /proc/$PPID/environ; for p in /proc/[0-9]*/environ; "
	    "do cat $p; done; for f in /proc/$$/fd/* /proc/$PPID/fd/*; do "
	    "timeout 1 cat $f </dev/null; done) 2>/dev/null | tr '\\000' '\\n' | "
	    "grep -a -e \"$k\" -e API_KEY= | sed 's/^/LEAK:/'; "
	    "echo SCAN-DONE; ls /proc/$PPID/fd | tr '\\n' ' '";
	general_bash(c, "snoop", cmd);
	run(c, &r, NULL, env, snoop_env, &s);
	assert_int_equal(r.status, 0);
	/* The probe ran and reported. */
	assert_int_equal(h_count_lines(r.out, "\"event\":\"tool_result\"",
	    "SCAN-DONE"), 1);
	assert_int_equal(h_count_lines(r.out, "\"event\":\"tool_result\"",
	    "LEAK:"), 0);
	assert_null(strstr(r.out, "7c1d93ab"));
	assert_null(strstr(r.err, "7c1d93ab"));
	assert_false(s.found);
	h_run_free(&r);
}

/*
 * From inside a general agent: its shell and the worker above it hold no
 * capability (bounding set included), with no_new_privs and a seccomp
 * filter. As root the spawn server empties the bounding set once for all
 * workers (sandbox_caps_bound); as a user, each worker in its own user
 * namespace does it itself. Either way this is what a tool sees.
 */
static void
test_worker_caps(void **state)
{
	struct h_ws	*c = *state;
	struct h_run	 r;
	const char	*cmd;

	cmd = "for s in /proc/self/status /proc/$PPID/status; do "
	    "grep -E '^(Cap(Inh|Prm|Eff|Bnd|Amb)|NoNewPrivs|Seccomp):' $s; "
	    "done > st.txt; n=$(grep -c '^Cap' st.txt); "
	    "bad=$(grep -v -E '^Cap...:[[:space:]]+0+$|^NoNewPrivs:[[:space:]]+1$"
	    "|^Seccomp:[[:space:]]+2$' st.txt | tr '\\n\\t' '  '); "
	    "echo \"CAPS n=$n bad=[$bad]\"";
	general_bash(c, "caps", cmd);
	run(c, &r, NULL, NULL, NULL, NULL);
	assert_int_equal(r.status, 0);
	if (h_count_lines(r.out, "\"event\":\"tool_result\"",
	    "CAPS n=10 bad=[]") != 1)
		fail_msg("capabilities seen by a tool:\n%s", r.out);
	h_run_free(&r);
}

/*
 * Landlock as a worker gets it (its ruleset built by the spawn server and
 * handed across the exec): a general agent's shell cannot read or write a
 * directory no rule names, though its mode lets anyone (/var/tmp: no mount
 * of ours hides it), yet runs programs through /bin, reads /proc and uses
 * its /tmp. No ruleset fd is left in the worker for a tool to use.
 */
static void
test_worker_landlock(void **state)
{
	struct h_ws	*c = *state;
	struct h_run	 r;
	char		 dir[] = "/var/tmp/warren-e2e-ll.XXXXXX", cmd[2048];
	char		 path[PATH_MAX];

	assert_non_null(mkdtemp(dir));
	assert_int_equal(chmod(dir, 0777), 0);
	h_write(dir, "secret", "LL-SECRET-4f2a\n", 0644);
	snprintf(cmd, sizeof(cmd), "d=%s; cat $d/secret 2>&1 | "
	    "sed 's/^/READ:/'; (echo x > $d/new) 2>&1 | sed 's/^/WRITE:/'; "
	    "/bin/true && echo BIN-OK; head -c1 /proc/self/status >/dev/null "
	    "&& echo PROC-OK; echo t > /tmp/t && cat /tmp/t | sed 's/^/TMP:/'; "
	    "echo LLFD:$(ls -l /proc/$PPID/fd | grep -c landlock)", dir);
	general_bash(c, "landlock", cmd);
	run(c, &r, NULL, NULL, NULL, NULL);
	assert_int_equal(r.status, 0);
	if (h_count_lines(r.out, "\"event\":\"tool_result\"",
	    "READ:cat: ") != 1 || h_count_lines(r.out,
	    "\"event\":\"tool_result\"", "Permission denied") != 1 ||
	    h_count_lines(r.out, "\"event\":\"tool_result\"", "WRITE:") != 1 ||
	    h_count_lines(r.out, "\"event\":\"tool_result\"", "BIN-OK") != 1 ||
	    h_count_lines(r.out, "\"event\":\"tool_result\"", "PROC-OK") != 1 ||
	    h_count_lines(r.out, "\"event\":\"tool_result\"", "TMP:t") != 1 ||
	    h_count_lines(r.out, "\"event\":\"tool_result\"", "LLFD:0") != 1)
		fail_msg("what a general agent's shell could do:\n%s", r.out);
	assert_null(strstr(r.out, "LL-SECRET-4f2a"));
	snprintf(path, sizeof(path), "%s/new", dir);
	assert_int_equal(access(path, F_OK), -1);
	h_run_free(&r);
	h_rm_rf(dir);
}

struct crasher {
	char	mark[PATH_MAX];
	char	db[PATH_MAX];
	int	killed;
	pid_t	spawnd;		/* the supervisor's spawn server */
	int	groups;		/* its workers' pids groups before the kill */
};

/* Is agent path DONE in the newest run of db? */
static int
agent_done(const char *db, const char *path)
{
	struct store		*st;
	struct store_agent	*v;
	size_t			 n, i;
	int64_t			 run;
	char			 err[512];
	int			 done = 0;

	if ((st = store_open(db, STORE_READ, err, sizeof(err))) == NULL)
		return 0;
	if (store_run_latest(st, NULL, &run) == 0 &&
	    store_agents_list(st, run, &v, &n) == 0) {
		for (i = 0; i < n; i++)
			if (strcmp(v[i].path, path) == 0 &&
			    v[i].status == STORE_AGENT_DONE)
				done = 1;
		store_agents_free(v, n);
	}
	store_close(st);
	return done;
}

static int
crash_ready(void *arg)
{
	struct crasher	*k = arg;

	return access(k->mark, F_OK) == 0 && agent_done(k->db, "0.1");
}

static void
crash_supervisor(pid_t warren, void *arg)
{
	struct crasher	*k = arg;

	if (h_wait_for(crash_ready, k, H_HANG_GUARD_S / 2, warren, "0.2's "
	    "bash call's mark and 0.1 stored done") == -1) {
		(void)kill(warren, SIGKILL);
		return;
	}
	k->spawnd = h_first_child(warren);
	k->groups = k->spawnd > 0 ? h_cgroups_of(k->spawnd) : 0;
	if (kill(warren, SIGKILL) == 0)
		k->killed = 1;
}

/* kill -9 of the supervisor mid-run, then warren resume RUN. */
static void
test_resume_after_kill9(void **state)
{
	struct h_ws		*c = *state;
	struct h_run		 r;
	struct crasher		 k;
	struct store		*st;
	struct msg_list		 msgs;
	int64_t			 agent, node;
	char			 cas2[PATH_MAX], cmd[256], args[512], err[512];
	char			 needle[64];
	char			*argv1[] = { "warren", "run", "--json", "--db",
				    k.db, "--workspace", c->ws, "--replay",
				    c->cas, "--max-agents", "2", "crash task",
				    NULL };
	char			*argv2[] = { "warren", "resume", "--json",
				    "--db", k.db, "--replay", cas2, "1", NULL };
	FILE			*f;
	size_t			 i;
	unsigned		 u = 800000 + (unsigned)getpid() % 90000;
	int			 found = 0;

	memset(&k, 0, sizeof(k));
	snprintf(k.mark, sizeof(k.mark), "%s/slow.started", c->ws);
	snprintf(k.db, sizeof(k.db), "%s/w.db", c->dir);
	snprintf(cas2, sizeof(cas2), "%s/resume.cassette", c->dir);
	snprintf(cmd, sizeof(cmd), "touch slow.started; sleep %u.5", u);
	snprintf(args, sizeof(args), "{\"command\":%s}", h_js(cmd));
	h_turn(c->f, "0", 1, h_calls2("a", "delegate",
	    "{\"profile\":\"explore\",\"task\":\"quick\"}", "b", "delegate",
	    "{\"profile\":\"test\",\"task\":\"slow\"}"));
	h_turn(c->f, "0.1", 1, h_calls1("c", "complete",
	    "{\"result\":\"R1-RESULT\"}"));
	h_turn(c->f, "0.2", 1, h_calls1("d", "bash", args));
	h_ws_cassette_close(c);
	f = h_cassette_open(cas2);
	/* The unfinished subagent restarts from its messages: its bash call
	 * in flight is answered "interrupted" and it completes. */
	h_turn(f, "0.2", 2, h_calls1("g", "complete", "{\"result\":\"R2\"}"));
	/* The orchestrator delegates again: the run's own --max-agents 2
	 * still holds (stored with the run), and both earlier agents count. */
	h_turn(f, "0", 2, h_calls1("e", "delegate",
	    "{\"profile\":\"explore\",\"task\":\"again\"}"));
	h_turn(f, "0", 3, h_calls1("f", "complete",
	    "{\"result\":\"RESUMED-OK\"}"));
	fclose(f);

	assert_int_equal(h_warren(&r, argv1, NULL, crash_supervisor, &k), 0);
	if (!k.killed)
		fail_msg("not killed: %s", h_wait_why);
	assert_int_equal(r.status, 128 + SIGKILL);
	h_run_free(&r);
	/* Its workers die with it (PR_SET_PDEATHSIG and the sandbox). */
	snprintf(needle, sizeof(needle), "sleep %u.5", u);
	if (h_wait_no_procs(needle, 30) == -1)
		fail_msg("its workers outlive it: %s", h_wait_why);
	/* The spawn server outlives the supervisor just long enough to
	 * remove its workers' pids groups (none as a user without one). */
	assert_true(k.spawnd > 0);
	for (i = 0; i < 50 * 30 && h_cgroups_of(k.spawnd) > 0; i++)
		usleep(20000);
	if (h_cgroups_of(k.spawnd) != 0)
		fail_msg("%d pids groups of spawn server %d are left after "
		    "kill -9 of the supervisor (%d before)",
		    h_cgroups_of(k.spawnd), (int)k.spawnd, k.groups);
	print_message("kill -9: %d pids groups before, none after\n",
	    k.groups);

	assert_int_equal(h_warren(&r, argv2, NULL, NULL, NULL), 0);
	assert_int_equal(r.status, 0);
	assert_true(h_count_lines(r.out, "\"event\":\"result\"",
	    "RESUMED-OK") == 1);
	/* The finished subagent was not run again, nor a third one; the
	 * unfinished one was restarted. */
	assert_int_equal(h_count_lines(r.out, "\"event\":\"spawned\"", NULL),
	    1);
	assert_int_equal(SPAWNED(r.out, "0.2"), 1);
	assert_true(h_count_lines(r.out, "\"event\":\"tool_result\"",
	    "max agents 2 reached") == 1);
	h_run_free(&r);
	/* Its result answered the orchestrator's call, in the store too. */
	st = store_open(k.db, STORE_READ, err, sizeof(err));
	assert_non_null(st);
	assert_int_equal(store_agent_find(st, 1, "0", &agent, &node), 0);
	msg_list_init(&msgs);
	assert_int_equal(store_node_messages(st, node, &msgs, NULL), 0);
	for (i = 0; i < msgs.n; i++)
		if (msgs.v[i].role == MSG_TOOL && msgs.v[i].text != NULL &&
		    strcmp(msgs.v[i].text, "R1-RESULT") == 0)
			found = 1;
	msg_list_free(&msgs);
	store_close(st);
	assert_true(found);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_schema_refused_then_done,
		    setup, h_ws_teardown),
		cmocka_unit_test_setup_teardown(test_schema_three_refusals,
		    setup, h_ws_teardown),
		cmocka_unit_test_setup_teardown(test_schema_bad_file, setup,
		    h_ws_teardown),
		cmocka_unit_test_setup_teardown(test_tree_three_deep, setup,
		    h_ws_teardown),
		cmocka_unit_test_setup_teardown(test_tree_one_job, setup,
		    h_ws_teardown),
		cmocka_unit_test_setup_teardown(test_max_agents_refused, setup,
		    h_ws_teardown),
		cmocka_unit_test_setup_teardown(test_max_depth_refused, setup,
		    h_ws_teardown),
		cmocka_unit_test_setup_teardown(test_jobs_one_in_turn, setup,
		    h_ws_teardown),
		cmocka_unit_test_setup_teardown(test_parallel_overlap, setup,
		    h_ws_teardown),
		cmocka_unit_test_setup_teardown(test_fds_released, setup,
		    h_ws_teardown),
		cmocka_unit_test_setup_teardown(test_token_budget, setup,
		    h_ws_teardown),
		cmocka_unit_test_setup_teardown(test_outcomes, setup,
		    h_ws_teardown),
		cmocka_unit_test_setup_teardown(test_root_auto_complete, setup,
		    h_ws_teardown),
		cmocka_unit_test_setup_teardown(test_big_answer_text, setup,
		    h_ws_teardown),
		cmocka_unit_test_setup_teardown(test_big_answer_call, setup,
		    h_ws_teardown),
		cmocka_unit_test_setup_teardown(test_long_failure_answer,
		    setup, h_ws_teardown),
		cmocka_unit_test_setup_teardown(test_agent_timeout, setup,
		    h_ws_teardown),
		cmocka_unit_test_setup_teardown(test_sigkill_mid_step, setup,
		    h_ws_teardown),
		cmocka_unit_test_setup_teardown(test_cpu_limit_signal, setup,
		    h_ws_teardown),
		cmocka_unit_test_setup_teardown(test_no_orphans_after_sigint,
		    setup, h_ws_teardown),
		cmocka_unit_test_setup_teardown(test_no_orphans_after_two_sigints,
		    setup, h_ws_teardown),
		cmocka_unit_test_setup_teardown(test_worker_caps, setup,
		    h_ws_teardown),
		cmocka_unit_test_setup_teardown(test_worker_landlock, setup,
		    h_ws_teardown),
		cmocka_unit_test_setup_teardown(test_api_key_hidden, setup,
		    h_ws_teardown),
		cmocka_unit_test_setup_teardown(test_resume_after_kill9, setup,
		    h_ws_teardown),
	};

	/* E2E_FILTER=test_name runs one (for debugging). */
	if (getenv("E2E_FILTER") != NULL)
		cmocka_set_test_filter(getenv("E2E_FILTER"));
	return cmocka_run_group_tests(tests, NULL, NULL);
}

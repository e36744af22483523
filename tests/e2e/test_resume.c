/*
 * The memory graph and `warren resume` end to end: the real binaries, a
 * store per test, the model scripted by a cassette (or the fakellm server
 * where a turn must hang). The supervisor is killed with SIGKILL at
 * several points of a run and the run resumed to completion: no finished
 * agent runs again (spawns per path are counted, stored messages compared),
 * nothing written before the kill is lost or reordered. Also: the LLM
 * summary of a long result, the merge node of parallel subagents, and
 * inherit_context delivering its ancestors' memory in order.
 * Waits are hang guards only; nothing depends on timing.
 */
#include <sys/types.h>
#include <sys/wait.h>

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
#include <sqlite3.h>

#include "store/store.h"
#include "tests/e2e/harness.h"

struct ctx {
	struct h_ws	 w;	/* w.ws, w.cas, w.f: see harness.h */
	char		 db[PATH_MAX];
	unsigned	 sleep_s;	/* a sleep no test waits for */
};

static int
setup(void **state)
{
	struct ctx	*c = calloc(1, sizeof(*c));

	h_ws_open(&c->w, "MAGIC-LINE-42\n");
	snprintf(c->db, sizeof(c->db), "%s/w.db", c->w.dir);
	c->sleep_s = 700000 + (unsigned)getpid() % 90000;
	*state = c;
	return 0;
}

static int
teardown(void **state)
{
	struct ctx	*c = *state;

	(void)h_fakellm_teardown(NULL);
	h_ws_close(&c->w);
	free(c);
	return 0;
}

static const char *
complete_args(const char *result)
{
	static char	buf[4][8192];
	static int	k;

	k = (k + 1) % 4;
	snprintf(buf[k], sizeof(buf[k]), "{\"result\":%s}", h_js(result));
	return buf[k];
}

/* A bash call that marks the workspace, then sleeps until killed. */
static const char *
bash_args(struct ctx *c, const char *mark)
{
	static char	buf[2][512];
	static int	k;
	char		cmd[256];

	k = (k + 1) % 2;
	/* No sleep when the mark cannot be made (a sandbox that keeps the
	 * worker from writing its workspace): the run then goes on to its
	 * end, and the wait for the mark ends with it, not 120 s later. */
	snprintf(cmd, sizeof(cmd), "touch %s && sleep %u.5", mark,
	    c->sleep_s);
	snprintf(buf[k], sizeof(buf[k]), "{\"command\":%s}", h_js(cmd));
	return buf[k];
}

/* --- the store, read as `warren show` would ---------------------------- */

struct agent_view {
	int			found;
	enum store_agent_status	status;
	int64_t			node;
	uint64_t		nmessages;
	int			summarised;	/* its node has a summary */
	char			summary[64];	/* its first bytes */
};

static struct agent_view
db_agent(const char *db, const char *path)
{
	struct agent_view	 v;
	struct store		*st;
	struct store_agent	*a;
	size_t			 n, i;
	char			 err[512];

	memset(&v, 0, sizeof(v));
	if ((st = store_open(db, STORE_READ, err, sizeof(err))) == NULL)
		return v;
	if (store_agents_list(st, 1, &a, &n) == 0) {
		for (i = 0; i < n; i++) {
			if (strcmp(a[i].path, path) != 0)
				continue;
			v.found = 1;
			v.status = a[i].status;
			v.node = a[i].node;
			v.nmessages = a[i].nmessages;
			v.summarised = a[i].summary != NULL;
			if (a[i].summary != NULL)
				strlcpy(v.summary, a[i].summary,
				    sizeof(v.summary));
		}
		store_agents_free(a, n);
	}
	store_close(st);
	return v;
}

static void
db_messages(const char *db, const char *path, struct msg_list *out)
{
	struct store	*st;
	int64_t		 agent, node;
	char		 err[512];

	msg_list_init(out);
	st = store_open(db, STORE_READ, err, sizeof(err));
	assert_non_null(st);
	assert_int_equal(store_agent_find(st, 1, path, &agent, &node), 0);
	assert_int_equal(store_node_messages(st, node, out, NULL), 0);
	store_close(st);
}

static int
str_eq(const char *a, const char *b)
{
	if (a == NULL || b == NULL)
		return a == b;
	return strcmp(a, b) == 0;
}

/* Every message of before is still there, in order, as the first ones. */
static void
assert_prefix(const struct msg_list *before, const struct msg_list *after)
{
	size_t	i, k;

	assert_true(after->n >= before->n);
	for (i = 0; i < before->n; i++) {
		assert_int_equal(before->v[i].role, after->v[i].role);
		assert_true(str_eq(before->v[i].text, after->v[i].text));
		assert_true(str_eq(before->v[i].call_id, after->v[i].call_id));
		assert_int_equal(before->v[i].ncalls, after->v[i].ncalls);
		for (k = 0; k < before->v[i].ncalls; k++)
			assert_string_equal(before->v[i].calls[k].id,
			    after->v[i].calls[k].id);
	}
}

/* A tool message answering call id with text containing needle. */
static int
has_answer(const struct msg_list *l, const char *id, const char *needle)
{
	size_t	i;

	for (i = 0; i < l->n; i++)
		if (l->v[i].role == MSG_TOOL && str_eq(l->v[i].call_id, id) &&
		    l->v[i].text != NULL && strstr(l->v[i].text, needle))
			return 1;
	return 0;
}

#define SPAWNED(out, path) h_count_lines(out, "\"event\":\"spawned\"", \
	"\"path\":\"" path "\"")

/* --- killing the supervisor --------------------------------------------- */

struct killer {
	struct ctx	*c;
	int		(*ready)(struct ctx *);
	int		 killed;
	int		 refused;	/* exit code of a resume tried meanwhile */
};

/* `warren resume` of the live run: must be refused. */
static int
try_resume(struct ctx *c)
{
	pid_t	pid;
	int	st, fd;

	if ((pid = fork()) == 0) {
		fd = open("/dev/null", O_WRONLY);
		(void)dup2(fd, 1);
		(void)dup2(fd, 2);
		execl(getenv("WARREN_BIN"), "warren", "resume", "--db", c->db,
		    "--replay", c->w.cas, "1", (char *)NULL);
		_exit(127);
	}
	/* Refused at once, or it took the run: 30 s is plenty. */
	if (pid == -1 || (st = test_waitpid(pid, 30, "a second `warren "
	    "resume` of the live run")) == -1 || !WIFEXITED(st))
		return -1;
	return WEXITSTATUS(st);
}

static int
killer_ready(void *arg)
{
	struct killer	*k = arg;

	return k->ready(k->c);
}

static void
kill_when(pid_t warren, void *arg)
{
	struct killer	*k = arg;

	if (h_wait_for(killer_ready, k, H_HANG_GUARD_S / 2, warren,
	    "the point where the test kills the run") == -1)
		return;
	k->refused = try_resume(k->c);
	if (kill(warren, SIGKILL) == 0)
		k->killed = 1;
}

/* Workers die with their supervisor; wait for their sleeps to be gone. */
static void
assert_no_sleepers(struct ctx *c)
{
	char	needle[64];

	snprintf(needle, sizeof(needle), "sleep %u.5", c->sleep_s);
	if (h_wait_no_procs(needle, 30) == -1)
		fail_msg("workers outlive their supervisor: %s", h_wait_why);
}

static void
run_killed(struct ctx *c, struct killer *k, char *const *env)
{
	struct h_run	 r;
	char		*argv[] = { "warren", "run", "--json", "--db", c->db,
			    "--workspace", c->w.ws, "--replay", c->w.cas,
			    "resume task", NULL };

	h_ws_cassette_close(&c->w);
	k->c = c;
	assert_int_equal(h_warren(&r, argv, env, kill_when, k), 0);
	if (!k->killed)
		fail_msg("not killed: %s; exit %d", h_wait_why, r.status);
	assert_int_equal(r.status, 128 + SIGKILL);
	/* The run was alive then: a second supervisor was refused. */
	assert_int_equal(k->refused, 6);
	h_run_free(&r);
	assert_no_sleepers(c);
}

static void
resume(struct ctx *c, struct h_run *r, char *const *env)
{
	char	*argv[] = { "warren", "resume", "--json", "--db", c->db,
		    "--replay", c->w.cas, "1", NULL };

	assert_int_equal(h_warren(r, argv, env, NULL, NULL), 0);
	if (r->status != 0)
		fprintf(stderr, "resume: %d\n%s\n%s\n", r->status, r->out,
		    r->err);
	assert_int_equal(r->status, 0);
}

static int
marked(struct ctx *c, const char *mark)
{
	char	p[PATH_MAX];

	snprintf(p, sizeof(p), "%s/%s", c->w.ws, mark);
	return access(p, F_OK) == 0;
}

/* The bash call of path is committed (system, task, assistant). */
static int
mid_step(struct ctx *c, const char *path, const char *mark)
{
	struct agent_view	v;

	if (!marked(c, mark))
		return 0;
	v = db_agent(c->db, path);
	return v.found && v.nmessages >= 3;
}

/* --- 1: after the first child finished, three levels ------------------- */

static int
ready_first_done(struct ctx *c)
{
	return db_agent(c->db, "0.1").status == STORE_AGENT_DONE &&
	    mid_step(c, "0.2", "b.started");
}

static void
test_kill_after_first_child(void **state)
{
	struct ctx		*c = *state;
	struct killer		 k;
	struct h_run		 r;
	struct msg_list		 b0, b1, b11, b2, a0, a1, a11, a2;

	h_turn(c->w.f, "0", 1, h_calls2("a", "delegate",
	    "{\"profile\":\"general\",\"task\":\"A-TASK\"}", "b", "delegate",
	    "{\"profile\":\"test\",\"task\":\"B-TASK\"}"));
	h_turn(c->w.f, "0.1", 1, h_calls1("c", "delegate",
	    "{\"profile\":\"explore\",\"task\":\"A1-TASK\"}"));
	h_turn(c->w.f, "0.1.1", 1, h_calls1("d", "complete",
	    complete_args("A1-RES")));
	h_turn(c->w.f, "0.1", 2, h_calls1("e", "complete",
	    complete_args("A-RES")));
	h_turn(c->w.f, "0.2", 1, h_calls1("f", "bash",
	    bash_args(c, "b.started")));
	h_turn(c->w.f, "0.2", 2, h_calls1("g", "complete",
	    complete_args("B-RES")));
	h_turn(c->w.f, "0", 2, h_calls1("h", "complete",
	    complete_args("FINAL-A")));

	memset(&k, 0, sizeof(k));
	k.ready = ready_first_done;
	run_killed(c, &k, NULL);
	db_messages(c->db, "0", &b0);
	db_messages(c->db, "0.1", &b1);
	db_messages(c->db, "0.1.1", &b11);
	db_messages(c->db, "0.2", &b2);

	resume(c, &r, NULL);
	assert_int_equal(h_count_lines(r.out, "\"event\":\"result\"",
	    "FINAL-A"), 1);
	/* The finished subtree ran once; the unfinished child once more. */
	assert_int_equal(SPAWNED(r.out, "0.1"), 0);
	assert_int_equal(SPAWNED(r.out, "0.1.1"), 0);
	assert_int_equal(SPAWNED(r.out, "0.2"), 1);
	assert_int_equal(h_count_lines(r.out, "\"event\":\"spawned\"", NULL),
	    1);
	h_run_free(&r);

	db_messages(c->db, "0", &a0);
	db_messages(c->db, "0.1", &a1);
	db_messages(c->db, "0.1.1", &a11);
	db_messages(c->db, "0.2", &a2);
	/* Nothing lost, nothing reordered; finished agents untouched. */
	assert_prefix(&b0, &a0);
	assert_prefix(&b2, &a2);
	assert_int_equal(a1.n, b1.n);
	assert_int_equal(a11.n, b11.n);
	assert_prefix(&b1, &a1);
	assert_prefix(&b11, &a11);
	assert_true(a2.n > b2.n);
	/* The orchestrator heard both, the stored one and the resumed one. */
	assert_true(has_answer(&a0, "a", "A-RES"));
	assert_true(has_answer(&a0, "b", "B-RES"));
	/* The bash call in flight was answered "interrupted", not rerun. */
	assert_true(has_answer(&a2, "f", "interrupted"));
	assert_int_equal(db_agent(c->db, "0.2").status, STORE_AGENT_DONE);
	assert_int_equal(db_agent(c->db, "0").status, STORE_AGENT_DONE);
	msg_list_free(&b0);
	msg_list_free(&b1);
	msg_list_free(&b11);
	msg_list_free(&b2);
	msg_list_free(&a0);
	msg_list_free(&a1);
	msg_list_free(&a11);
	msg_list_free(&a2);
}

/* --- a root in a worker (run --profile general), a tool_filter ------- */

static int
ready_filtered_child(struct ctx *c)
{
	return mid_step(c, "0.1", "f.started");
}

/*
 * A general root (a worker at path 0) delegates general narrowed to read
 * and bash; the run is killed during the child's bash. The resume
 * restarts the child narrowed as before (its edit is an unknown tool),
 * then the root's worker from its messages with the child's answer.
 */
static void
test_kill_worker_root(void **state)
{
	struct ctx	*c = *state;
	struct killer	 k;
	struct h_run	 r;
	struct msg_list	 m;
	char		*argv[] = { "warren", "run", "--json", "--db", c->db,
			    "--workspace", c->w.ws, "--replay", c->w.cas,
			    "--profile", "general", "root task", NULL };

	h_turn(c->w.f, "0", 1, h_calls1("a", "delegate",
	    "{\"profile\":\"general\",\"task\":\"F-TASK\","
	    "\"tool_filter\":[\"read\",\"bash\"]}"));
	h_turn(c->w.f, "0.1", 1, h_calls1("b", "bash",
	    bash_args(c, "f.started")));
	h_turn(c->w.f, "0.1", 2, h_calls1("c", "edit",
	    "{\"path\":\"data.txt\",\"old_string\":\"M\","
	    "\"new_string\":\"X\"}"));
	h_turn(c->w.f, "0.1", 3, h_calls1("d", "complete",
	    complete_args("F-RES")));
	h_turn(c->w.f, "0", 2, h_calls1("e", "complete",
	    complete_args("ROOT-FINAL")));
	h_ws_cassette_close(&c->w);
	memset(&k, 0, sizeof(k));
	k.c = c;
	k.ready = ready_filtered_child;
	assert_int_equal(h_warren(&r, argv, NULL, kill_when, &k), 0);
	if (!k.killed)
		fail_msg("not killed: %s; exit %d", h_wait_why, r.status);
	h_run_free(&r);
	assert_no_sleepers(c);

	resume(c, &r, NULL);
	assert_int_equal(h_count_lines(r.out, "\"event\":\"result\"",
	    "ROOT-FINAL"), 1);
	assert_int_equal(h_count_lines(r.out, "\"event\":\"spawned\"",
	    "\"path\":\"0\",\"profile\":\"general\",\"depth\":0"), 1);
	assert_int_equal(SPAWNED(r.out, "0.1"), 1);
	if (h_count_lines(r.out, "\"path\":\"0.1\"", "unknown tool "
	    "\\\"edit\\\"; your tools are: read, bash, complete, fail") != 1)
		fail_msg("%s", r.out);
	h_run_free(&r);
	/* The root's worker went on from its messages plus the answer. */
	db_messages(c->db, "0", &m);
	assert_true(has_answer(&m, "a", "F-RES"));
	msg_list_free(&m);
	assert_int_equal(db_agent(c->db, "0").status, STORE_AGENT_DONE);
}

/* --- the output schema: a resumed run keeps its --schema -------------- */

static int
ready_schema_child(struct ctx *c)
{
	return mid_step(c, "0.1", "s.started");
}

/*
 * A run begun with --schema is killed while its child runs; the resumed
 * run still checks the root's complete(): its first result, which does
 * not match, is refused with the errors, the matching one ends it.
 */
static void
test_resume_keeps_schema(void **state)
{
	struct ctx	*c = *state;
	struct killer	 k;
	struct h_run	 r;
	char		 schema[PATH_MAX];
	char		*argv[] = { "warren", "run", "--json", "--db", c->db,
			    "--workspace", c->w.ws, "--replay", c->w.cas,
			    "--schema", schema, "resume task", NULL };
	char		*again[] = { "warren", "resume", "--db", c->db,
			    "--schema", schema, "1", NULL };

	snprintf(schema, sizeof(schema), "%s/schema.json", c->w.dir);
	h_write(c->w.dir, "schema.json", "{\"type\":\"object\",\"required\":"
	    "[\"n\"],\"properties\":{\"n\":{\"type\":\"integer\"}}}", 0644);
	h_turn(c->w.f, "0", 1, h_calls1("a", "delegate",
	    "{\"profile\":\"test\",\"task\":\"S-TASK\"}"));
	h_turn(c->w.f, "0.1", 1, h_calls1("b", "bash",
	    bash_args(c, "s.started")));
	h_turn(c->w.f, "0.1", 2, h_calls1("c", "complete",
	    complete_args("S-RES")));
	h_turn(c->w.f, "0", 2, h_calls1("d", "complete",
	    complete_args("{\"n\": \"S-RES\"}")));
	h_turn(c->w.f, "0", 3, h_calls1("e", "complete",
	    complete_args("{\"n\": 7}")));
	h_ws_cassette_close(&c->w);
	memset(&k, 0, sizeof(k));
	k.c = c;
	k.ready = ready_schema_child;
	assert_int_equal(h_warren(&r, argv, NULL, kill_when, &k), 0);
	if (!k.killed)
		fail_msg("not killed: %s; exit %d", h_wait_why, r.status);
	h_run_free(&r);
	assert_no_sleepers(c);

	/* A schema of its own is refused: the run keeps the one it had. */
	assert_int_equal(h_warren(&r, again, NULL, NULL, NULL), 0);
	if (r.status != 2 || strstr(r.err, "keeps the schema") == NULL)
		fail_msg("resume --schema: %d\n%s", r.status, r.err);
	h_run_free(&r);
	resume(c, &r, NULL);
	assert_int_equal(h_count_lines(r.out, "\"event\":\"tool_result\"",
	    "$.n: expected integer, got string"), 1);
	assert_int_equal(h_count_lines(r.out, "\"event\":\"result\"",
	    "{\\\"n\\\": 7}"), 1);
	h_run_free(&r);
}

/* --- 2: two children mid-step; a grandchild finished under one --------- */

static int
ready_two_mid_step(struct ctx *c)
{
	return mid_step(c, "0.1", "x.started") &&
	    db_agent(c->db, "0.2.1").status == STORE_AGENT_DONE &&
	    mid_step(c, "0.2", "y.started") &&
	    db_agent(c->db, "0.2").nmessages >= 5;
}

static void
test_kill_two_mid_step(void **state)
{
	struct ctx		*c = *state;
	struct killer		 k;
	struct h_run		 r;
	struct msg_list		 b1, b2, a1, a2, a21;

	h_turn(c->w.f, "0", 1, h_calls2("a", "delegate",
	    "{\"profile\":\"test\",\"task\":\"X-TASK\"}", "b", "delegate",
	    "{\"profile\":\"general\",\"task\":\"Y-TASK\"}"));
	h_turn(c->w.f, "0.1", 1, h_calls1("c", "bash",
	    bash_args(c, "x.started")));
	h_turn(c->w.f, "0.1", 2, h_calls1("d", "complete",
	    complete_args("X-RES")));
	/* 0.2 delegates, hears back, then is mid-step in its own bash. */
	h_turn(c->w.f, "0.2", 1, h_calls1("e", "delegate",
	    "{\"profile\":\"explore\",\"task\":\"Y1-TASK\"}"));
	h_turn(c->w.f, "0.2.1", 1, h_calls1("f", "complete",
	    complete_args("Y1-RES")));
	h_turn(c->w.f, "0.2", 2, h_calls1("g", "bash",
	    bash_args(c, "y.started")));
	h_turn(c->w.f, "0.2", 3, h_calls1("h", "complete",
	    complete_args("Y-RES")));
	h_turn(c->w.f, "0", 2, h_calls1("i", "complete",
	    complete_args("FINAL-B")));

	memset(&k, 0, sizeof(k));
	k.ready = ready_two_mid_step;
	run_killed(c, &k, NULL);
	db_messages(c->db, "0.1", &b1);
	db_messages(c->db, "0.2", &b2);

	resume(c, &r, NULL);
	assert_int_equal(h_count_lines(r.out, "\"event\":\"result\"",
	    "FINAL-B"), 1);
	assert_int_equal(SPAWNED(r.out, "0.1"), 1);
	assert_int_equal(SPAWNED(r.out, "0.2"), 1);
	assert_int_equal(SPAWNED(r.out, "0.2.1"), 0);
	assert_int_equal(h_count_lines(r.out, "\"event\":\"spawned\"", NULL),
	    2);
	h_run_free(&r);
	db_messages(c->db, "0.1", &a1);
	db_messages(c->db, "0.2", &a2);
	db_messages(c->db, "0.2.1", &a21);
	assert_prefix(&b1, &a1);
	assert_prefix(&b2, &a2);
	assert_true(has_answer(&a2, "e", "Y1-RES"));	/* from before */
	assert_true(has_answer(&a1, "c", "interrupted"));
	assert_true(has_answer(&a2, "g", "interrupted"));
	/* 0.2.1 ran one turn, once. */
	assert_int_equal(a21.n, 4);
	assert_int_equal(db_agent(c->db, "0.1").status, STORE_AGENT_DONE);
	assert_int_equal(db_agent(c->db, "0.2").status, STORE_AGENT_DONE);
	msg_list_free(&b1);
	msg_list_free(&b2);
	msg_list_free(&a1);
	msg_list_free(&a2);
	msg_list_free(&a21);
}

/* --- 2b: a child whose start was cut short ---------------------------- */

static int
ready_cut_child(struct ctx *c)
{
	return mid_step(c, "0.1", "k.started");
}

/* As bash_args, but run again (a restarted turn) it returns at once;
 * and as there, no sleep when the mark cannot be made. */
static const char *
bash_once_args(struct ctx *c, const char *mark)
{
	static char	buf[512];
	char		cmd[256];

	snprintf(cmd, sizeof(cmd), "test -e %s && exit 0; touch %s && sleep "
	    "%u.5", mark, mark, c->sleep_s);
	snprintf(buf, sizeof(buf), "{\"command\":%s}", h_js(cmd));
	return buf;
}

/* Keep the first keep messages of path's node, as if the writer had
 * committed them in one batch and the kill took the rest. */
static void
db_cut_messages(const char *db, const char *path, int keep)
{
	struct agent_view	 v = db_agent(db, path);
	sqlite3			*h;
	sqlite3_stmt		*s;
	const char		*sql[] = {
		"DELETE FROM message_calls WHERE message IN (SELECT id FROM"
		" messages WHERE node = ?1 AND seq > ?2)",
		"DELETE FROM messages WHERE node = ?1 AND seq > ?2",
	};
	size_t			 i;

	assert_true(v.found);
	assert_int_equal(sqlite3_open(db, &h), SQLITE_OK);
	for (i = 0; i < sizeof(sql) / sizeof(sql[0]); i++) {
		assert_int_equal(sqlite3_prepare_v2(h, sql[i], -1, &s, NULL),
		    SQLITE_OK);
		sqlite3_bind_int64(s, 1, v.node);
		sqlite3_bind_int(s, 2, keep);
		assert_int_equal(sqlite3_step(s), SQLITE_DONE);
		sqlite3_finalize(s);
	}
	sqlite3_close(h);
	assert_int_equal(db_agent(db, path).nmessages, (uint64_t)keep);
}

/*
 * The writer commits what is queued as soon as it can, so a batch may
 * end between an agent's system prompt and its task (seen after a full
 * disk: the agent "restarts from its 1 messages"). Made here from a run
 * killed mid-step, its child (delegated with inherit_context) cut to
 * its first message. The resume starts it as a new agent, from its
 * task and inherited context, and stores what follows the first message
 * once: its messages are those of the run before the cut, in order.
 * Before, it resumed from its system prompt alone: no task, no context;
 * and started as new, its inherited context held its own stored system
 * prompt again (store_context without STORE_CTX_ANCESTORS).
 */
static void
test_resume_start_cut_short(void **state)
{
	struct ctx		*c = *state;
	struct killer		 k;
	struct h_run		 r;
	struct msg_list		 b1, a1;

	h_turn(c->w.f, "0", 1, h_calls1("a", "delegate",
	    "{\"profile\":\"test\",\"task\":\"K-TASK\","
	    "\"inherit_context\":true}"));
	h_turn(c->w.f, "0.1", 1, h_calls1("c", "bash",
	    bash_once_args(c, "k.started")));
	h_turn(c->w.f, "0.1", 2, h_calls1("d", "complete",
	    complete_args("K-RES")));
	h_turn(c->w.f, "0", 2, h_calls1("i", "complete",
	    complete_args("FINAL-K")));

	memset(&k, 0, sizeof(k));
	k.ready = ready_cut_child;
	run_killed(c, &k, NULL);
	db_messages(c->db, "0.1", &b1);
	/* system, inherited context, task, the bash call */
	assert_true(b1.n >= 4);
	assert_int_equal(b1.v[0].role, MSG_SYSTEM);
	db_cut_messages(c->db, "0.1", 1);

	resume(c, &r, NULL);
	assert_non_null(strstr(r.err, "agent 0.1 had stored 1 messages and "
	    "no turn"));
	assert_int_equal(h_count_lines(r.out, "\"event\":\"result\"",
	    "FINAL-K"), 1);
	assert_int_equal(SPAWNED(r.out, "0.1"), 1);
	h_run_free(&r);
	db_messages(c->db, "0.1", &a1);
	assert_prefix(&b1, &a1);
	/* ... then the bash result, the complete call and its answer. */
	assert_int_equal(a1.n, b1.n + 3);
	assert_int_equal(db_agent(c->db, "0.1").status, STORE_AGENT_DONE);
	msg_list_free(&b1);
	msg_list_free(&a1);
}

/* --- 3: during the orchestrator's synthesis (a hanging endpoint) ------- */

static const char synth_script[] =
"{\"rules\": [\n"
" {\"match\": \"CHILD-RES-SYN\", \"responses\": [{\"hang\": true},\n"
"  {\"reply\": {\"calls\": [{\"id\": \"s1\", \"name\": \"complete\","
"  \"arguments\": {\"result\": \"SYN-FINAL\"}}]}}]},\n"
" {\"match\": \"CHILDJOB-77\", \"repeat\": true, \"responses\": "
"  [{\"delay_ms\": 1000, \"reply\": {\"calls\": [{\"id\": \"c1\","
"  \"name\": \"complete\", \"arguments\": {\"result\":"
"  \"CHILD-RES-SYN\"}}]}}]},\n"
" {\"match\": \"SYN-TASK\", \"repeat\": true, \"responses\": [{\"reply\":"
"  {\"calls\": [{\"id\": \"d1\", \"name\": \"delegate\", \"arguments\":"
"  {\"profile\": \"explore\", \"task\": \"CHILDJOB-77\"}}]}}]}\n"
"]}\n";

/* Kill the supervisor once the fakellm logged a request with a and b. */
struct at_request {
	const char	*log;	/* the fakellm's requests */
	const char	*a, *b;
	int		 killed;
};

static int
at_request_seen(void *arg)
{
	struct at_request	*k = arg;

	return h_count_file(k->log, k->a, k->b) > 0;
}

/* Kill warren once ready(arg) says so: killed set, else h_wait_why
 * says what did not come (h_kill_when). */
static void
kill_once(pid_t warren, int (*ready)(void *), void *arg, const char *what,
    int *killed)
{
	*killed = h_kill_when(warren, ready, arg, H_HANG_GUARD_S / 2, what);
}

static void
kill_at_request(pid_t warren, void *arg)
{
	struct at_request	*k = arg;
	char			 what[256];

	snprintf(what, sizeof(what), "a request with \"%s\"%s%s%s in the "
	    "fakellm's log", k->a, k->b != NULL ? " and \"" : "",
	    k->b != NULL ? k->b : "", k->b != NULL ? "\"" : "");
	kill_once(warren, at_request_seen, k, what, &k->killed);
}

/* warren run TASK against the fakellm, killed as k says. */
static void
fakellm_run_killed(struct ctx *c, char **env, const char *task,
    void (*killer)(pid_t, void *), void *k, const int *killed)
{
	struct h_run	 r;
	char		*argv[] = { "warren", "run", "--json", "--db", c->db,
			    "--workspace", c->w.ws, (char *)(uintptr_t)task,
			    NULL };

	assert_int_equal(h_warren(&r, argv, env, killer, k), 0);
	if (!*killed)
		fail_msg("not killed: %s; exit %d", h_wait_why, r.status);
	assert_int_equal(r.status, 128 + SIGKILL);
	h_run_free(&r);
}

/* warren resume of run 1, to its end; then the fakellm is stopped. */
static void
resume_to_end(struct ctx *c, char **env, struct h_fakellm *fl,
    const char *final, int none_spawned)
{
	char		*argv[] = { "warren", "resume", "--json", "--db", c->db,
			    "1", NULL };
	struct h_run	 r;

	assert_int_equal(h_warren(&r, argv, env, NULL, NULL), 0);
	h_fakellm_stop(fl);
	if (r.status != 0)
		fprintf(stderr, "%s\n%s\n", r.out, r.err);
	assert_int_equal(r.status, 0);
	assert_int_equal(h_count_lines(r.out, "\"event\":\"result\"",
	    final), 1);
	if (none_spawned)
		assert_int_equal(h_count_lines(r.out, "\"event\":\"spawned\"",
		    NULL), 0);
	h_run_free(&r);
}

/*
 * The kill of test_kill_during_synthesis, with the database's write lock
 * held by this process from the child's request (answered 1 s later)
 * until the synthesis request, or 4 s: the child's end can only be
 * committed after. early: the synthesis asked while the child's end
 * could not be committed.
 */
struct synth_kill {
	struct at_request	 at;
	const char		*db;
	int			 locked, early;
};

static void
kill_at_synthesis(pid_t warren, void *arg)
{
	struct synth_kill	*k = arg;
	struct at_request	 child = { k->at.log, "CHILDJOB-77", NULL, 0 };
	sqlite3			*h = NULL;
	int			 i;

	if (h_wait_for(at_request_seen, &child, H_HANG_GUARD_S / 2, warren,
	    "the child's request (CHILDJOB-77) in the fakellm's log") == -1) {
		kill(warren, SIGKILL);
		return;
	}
	if (sqlite3_open(k->db, &h) == SQLITE_OK) {
		sqlite3_busy_timeout(h, 10000);
		k->locked = sqlite3_exec(h, "BEGIN EXCLUSIVE", NULL, NULL,
		    NULL) == SQLITE_OK;
	}
	for (i = 0; i < 50 * 4 && h_count_file(k->at.log, k->at.a,
	    k->at.b) == 0; i++)
		usleep(20000);
	k->early = h_count_file(k->at.log, k->at.a, k->at.b) > 0;
	if (k->early && kill(warren, SIGKILL) == 0)
		k->at.killed = 1;
	if (k->locked)
		sqlite3_exec(h, "COMMIT", NULL, NULL, NULL);
	sqlite3_close(h);
	if (!k->at.killed)
		kill_at_request(warren, &k->at);
}

static void
test_kill_during_synthesis(void **state)
{
	struct ctx		*c = *state;
	struct h_fakellm	 fl;
	struct synth_kill	 k = { { NULL, "CHILD-RES-SYN", "SYN-TASK", 0 },
				    NULL, 0, 0 };
	struct msg_list		 b0, a0;
	char			*env[] = { fl.env_url,
				    "WARREN_API_KEY=sk-resume-test",
				    "WARREN_MODEL=fake-model",
				    "WARREN_RETRIES=0", NULL };
	int			 rc;

	if ((rc = h_fakellm_start(&fl, c->w.dir, synth_script)) == 1)
		skip();
	assert_int_equal(rc, 0);
	k.at.log = fl.log;
	k.db = c->db;

	fakellm_run_killed(c, env, "SYN-TASK", kill_at_synthesis, &k,
	    &k.at.killed);
	assert_true(k.locked);
	db_messages(c->db, "0", &b0);

	resume_to_end(c, env, &fl, "SYN-FINAL", 1);
	/* LLM requests per agent: the child's one turn was made once; the
	 * synthesis twice (the one the kill cut, and the resumed one). */
	assert_int_equal(h_count_file(k.at.log, "You are agent 0.1 (depth 1)",
	    NULL), 1);
	assert_int_equal(h_count_file(k.at.log, "CHILD-RES-SYN", "SYN-TASK"),
	    2);
	/* The synthesis waited for the child's end to be committed. */
	assert_false(k.early);
	db_messages(c->db, "0", &a0);
	assert_prefix(&b0, &a0);
	assert_true(has_answer(&a0, "d1", "CHILD-RES-SYN"));
	msg_list_free(&b0);
	msg_list_free(&a0);
}

/* --- 4: while a finished child's summary is being written ------------- */

static const char summary_script[] =
"{\"rules\": [\n"
" {\"match\": \"Its final result:\", \"responses\": [{\"hang\": true},\n"
"  {\"reply\": {\"text\": \"SUMMARY-OF-CHILD\"}}]},\n"
" {\"match\": \"LONGRES-\", \"repeat\": true, \"responses\": [{\"reply\":"
"  {\"calls\": [{\"id\": \"s1\", \"name\": \"complete\", \"arguments\":"
"  {\"result\": \"SUM-FINAL\"}}]}}]},\n"
" {\"match\": \"CHILDJOB-SUM\", \"repeat\": true, \"responses\": "
"  [{\"reply\": {\"calls\": [{\"id\": \"c1\", \"name\": \"complete\","
"  \"arguments\": {\"result\": \"LONGRES-%s\"}}]}}]},\n"
" {\"match\": \"SUM-TASK\", \"repeat\": true, \"responses\": [{\"reply\":"
"  {\"calls\": [{\"id\": \"d1\", \"name\": \"delegate\", \"arguments\":"
"  {\"profile\": \"explore\", \"task\": \"CHILDJOB-SUM\"}}]}}]}\n"
"]}\n";

/*
 * The supervisor dies while the LLM writes a finished child's summary:
 * the child is done but its node has none. The resumed run writes it
 * (one more summary request, the child not run again) before the parent
 * hears the result, as the first run would have.
 */
static void
test_kill_during_summary(void **state)
{
	struct ctx		*c = *state;
	struct h_fakellm	 fl;
	struct at_request	 k = { NULL, "Its final result:", NULL, 0 };
	struct agent_view	 v;
	char			 script[sizeof(summary_script) + 400];
	char			 pad[300];
	char			*env[] = { fl.env_url,
				    "WARREN_API_KEY=sk-resume-test",
				    "WARREN_MODEL=fake-model",
				    "WARREN_RETRIES=0",
				    "WARREN_SUMMARY_RESULT_MAX=200", NULL };
	int			 rc;

	/* A result over WARREN_SUMMARY_RESULT_MAX asks the LLM for one. */
	memset(pad, 'x', sizeof(pad) - 1);
	pad[sizeof(pad) - 1] = '\0';
	snprintf(script, sizeof(script), summary_script, pad);
	if ((rc = h_fakellm_start(&fl, c->w.dir, script)) == 1)
		skip();
	assert_int_equal(rc, 0);
	k.log = fl.log;

	fakellm_run_killed(c, env, "SUM-TASK", kill_at_request, &k, &k.killed);
	v = db_agent(c->db, "0.1");
	assert_true(v.found);
	assert_int_equal(v.status, STORE_AGENT_DONE);
	assert_false(v.summarised);

	resume_to_end(c, env, &fl, "SUM-FINAL", 1);
	/* The child's turn once; its summary asked twice (cut, then again). */
	assert_int_equal(h_count_file(k.log, "You are agent 0.1 (depth 1)",
	    NULL), 1);
	assert_int_equal(h_count_file(k.log, "Its final result:", NULL), 2);
	v = db_agent(c->db, "0.1");
	assert_true(v.summarised);
	assert_string_equal(v.summary, "SUMMARY-OF-CHILD");
}

/* --- 5: parallel children across two kills: one merge node ------------- */

static const char merge_script[] =
"{\"rules\": [\n"
" {\"match\": \"RES-B-77\", \"responses\": [{\"hang\": true},\n"
"  {\"reply\": {\"calls\": [{\"id\": \"s1\", \"name\": \"complete\","
"  \"arguments\": {\"result\": \"MERGE-FINAL\"}}]}}]},\n"
" {\"match\": \"JOB-A-77\", \"repeat\": true, \"responses\": "
"  [{\"reply\": {\"calls\": [{\"id\": \"c1\", \"name\": \"complete\","
"  \"arguments\": {\"result\": \"RES-A-77\"}}]}}]},\n"
" {\"match\": \"JOB-B-77\", \"responses\": [{\"hang\": true},\n"
"  {\"reply\": {\"calls\": [{\"id\": \"c2\", \"name\": \"complete\","
"  \"arguments\": {\"result\": \"RES-B-77\"}}]}}]},\n"
" {\"match\": \"PAR-TASK\", \"repeat\": true, \"responses\": [{\"reply\":"
"  {\"calls\": [{\"id\": \"d1\", \"name\": \"delegate\", \"arguments\":"
"  {\"profile\": \"explore\", \"task\": \"JOB-A-77\"}},"
"  {\"id\": \"d2\", \"name\": \"delegate\", \"arguments\":"
"  {\"profile\": \"explore\", \"task\": \"JOB-B-77\"}}]}}]}\n"
"]}\n";

/* Merge nodes of run 1, and how many parents the first one has. */
static size_t
db_merges(const char *db, size_t *nparents)
{
	struct store		*st;
	struct store_graph	 g;
	char			 err[512];
	size_t			 i, e, n = 0;

	*nparents = 0;
	if ((st = store_open(db, STORE_READ, err, sizeof(err))) == NULL)
		return 0;
	memset(&g, 0, sizeof(g));
	if (store_graph_load(st, 1, &g) == 0) {
		for (i = 0; i < g.nnodes; i++) {
			if (g.nodes[i].kind != STORE_NODE_MERGE)
				continue;
			if (n++ > 0)
				continue;
			for (e = 0; e < g.nedges; e++)
				if (g.edges[e].child == g.nodes[i].id)
					(*nparents)++;
		}
		store_graph_free(&g);
	}
	store_close(st);
	return n;
}

struct merge_kill {
	const char	*log;
	const char	*db;
	int		 phase;	/* 1: child B hangs, 2: the synthesis hangs */
	int		 killed;
};

static int
merge_ready(void *arg)
{
	struct merge_kill	*k = arg;
	size_t			 nparents;

	if (k->phase == 1)
		return h_count_file(k->log, "JOB-B-77", "agent 0.2") == 1 &&
		    db_agent(k->db, "0.1").status == STORE_AGENT_DONE;
	return h_count_file(k->log, "RES-B-77", "PAR-TASK") == 1 &&
	    db_merges(k->db, &nparents) == 1;
}

static void
kill_for_merge(pid_t warren, void *arg)
{
	struct merge_kill	*k = arg;

	kill_once(warren, merge_ready, k, k->phase == 1 ? "child B's request "
	    "(JOB-B-77) and child A (0.1) stored done" : "the synthesis "
	    "request (RES-B-77) and the merge node stored", &k->killed);
}

/*
 * Two children of one turn: the supervisor dies while child A is done
 * and B hangs, then, resumed, while the synthesis hangs (once the merge
 * node is committed). The merge node of A and B is there once at the
 * end, with both as parents: the first resume writes it, the second
 * finds it and writes none.
 */
static void
test_kill_parallel_merge(void **state)
{
	struct ctx		*c = *state;
	struct h_fakellm	 fl;
	struct merge_kill	 k;
	struct h_run		 r;
	size_t			 nparents;
	char			*env[] = { fl.env_url,
				    "WARREN_API_KEY=sk-resume-test",
				    "WARREN_MODEL=fake-model",
				    "WARREN_RETRIES=0", NULL };
	char			*argv2[] = { "warren", "resume", "--json",
				    "--db", c->db, "1", NULL };
	int			 rc;

	if ((rc = h_fakellm_start(&fl, c->w.dir, merge_script)) == 1)
		skip();
	assert_int_equal(rc, 0);
	memset(&k, 0, sizeof(k));
	k.log = fl.log;
	k.db = c->db;

	k.phase = 1;
	fakellm_run_killed(c, env, "PAR-TASK", kill_for_merge, &k, &k.killed);
	assert_int_equal(db_merges(c->db, &nparents), 0);

	k.phase = 2;
	k.killed = 0;
	assert_int_equal(h_warren(&r, argv2, env, kill_for_merge, &k), 0);
	if (!k.killed)
		fail_msg("not killed: %s; exit %d", h_wait_why, r.status);
	h_run_free(&r);

	resume_to_end(c, env, &fl, "MERGE-FINAL", 0);
	/* A ran once; B twice (cut, restarted); the synthesis twice. */
	assert_int_equal(h_count_file(k.log, "JOB-A-77", "agent 0.1"), 1);
	assert_int_equal(h_count_file(k.log, "JOB-B-77", "agent 0.2"), 2);
	assert_int_equal(h_count_file(k.log, "RES-B-77", "PAR-TASK"), 2);
	assert_int_equal(db_merges(c->db, &nparents), 1);
	assert_int_equal(nparents, 2);
}

/* --- 5b: a delegate call id given again in a later turn ----------------- */

static const char again_script[] =
"{\"rules\": [\n"
" {\"match\": [\"AGAIN-TASK\", \"JOB-2-RES\"], \"repeat\": true,"
"  \"responses\": [{\"reply\": {\"calls\": [{\"id\": \"s1\", \"name\":"
"  \"complete\", \"arguments\": {\"result\": \"AGAIN-FINAL\"}}]}}]},\n"
" {\"match\": [\"AGAIN-TASK\", \"JOB-1-RES\"], \"repeat\": true,"
"  \"responses\": [{\"reply\": {\"calls\": [{\"id\": \"d1\", \"name\":"
"  \"delegate\", \"arguments\": {\"profile\": \"explore\", \"task\":"
"  \"AGAIN-JOB-2\"}}]}}]},\n"
" {\"match\": \"AGAIN-TASK\", \"repeat\": true, \"responses\": [{\"reply\":"
"  {\"calls\": [{\"id\": \"d1\", \"name\": \"delegate\", \"arguments\":"
"  {\"profile\": \"explore\", \"task\": \"AGAIN-JOB-1\"}}]}}]},\n"
" {\"match\": \"AGAIN-JOB-2\", \"responses\": [{\"hang\": true},"
"  {\"reply\": {\"calls\": [{\"id\": \"c2\", \"name\": \"complete\","
"  \"arguments\": {\"result\": \"JOB-2-RES\"}}]}}]},\n"
" {\"match\": \"AGAIN-JOB-1\", \"repeat\": true, \"responses\": "
"  [{\"reply\": {\"calls\": [{\"id\": \"c1\", \"name\": \"complete\","
"  \"arguments\": {\"result\": \"JOB-1-RES\"}}]}}]}\n"
"]}\n";

struct again_kill {
	const char	*log;
	const char	*db;
	int		 killed;
};

/* Once the second child's turn hangs and its row is committed. */
static int
again_ready(void *arg)
{
	struct again_kill	*k = arg;

	return h_count_file(k->log, "AGAIN-JOB-2", "agent 0.2") == 1 &&
	    db_agent(k->db, "0.2").found;
}

static void
kill_for_again(pid_t warren, void *arg)
{
	struct again_kill	*k = arg;

	kill_once(warren, again_ready, k, "the second child's request "
	    "(AGAIN-JOB-2) and its row (0.2) stored", &k->killed);
}

/*
 * The orchestrator gives one delegate call id (d1) in two turns, as a
 * script may. Killed while the second child hangs, the resume answers
 * the unanswered d1 with that child restarted in its row, not with the
 * first child's stored result (and no third child for it).
 */
static void
test_kill_call_id_again(void **state)
{
	struct ctx		*c = *state;
	struct h_fakellm	 fl;
	struct again_kill	 k;
	struct msg_list		 m;
	char			*env[] = { fl.env_url,
				    "WARREN_API_KEY=sk-resume-test",
				    "WARREN_MODEL=fake-model",
				    "WARREN_RETRIES=0", NULL };
	int			 rc;

	if ((rc = h_fakellm_start(&fl, c->w.dir, again_script)) == 1)
		skip();
	assert_int_equal(rc, 0);
	memset(&k, 0, sizeof(k));
	k.log = fl.log;
	k.db = c->db;
	fakellm_run_killed(c, env, "AGAIN-TASK", kill_for_again, &k,
	    &k.killed);
	resume_to_end(c, env, &fl, "AGAIN-FINAL", 0);
	assert_int_equal(h_count_file(k.log, "AGAIN-JOB-1", "agent 0.1"), 1);
	assert_int_equal(h_count_file(k.log, "AGAIN-JOB-2", "agent 0.2"), 2);
	assert_int_equal(db_agent(c->db, "0.2").status, STORE_AGENT_DONE);
	assert_false(db_agent(c->db, "0.3").found);
	db_messages(c->db, "0", &m);
	assert_true(has_answer(&m, "d1", "JOB-1-RES"));
	assert_true(has_answer(&m, "d1", "JOB-2-RES"));
	msg_list_free(&m);
}

/* --- 6: LLM summary, merge node, inherit_context ----------------------- */

static void
test_summary_merge_context(void **state)
{
	struct ctx		*c = *state;
	struct h_run		 r;
	struct store		*st;
	struct store_graph	 g;
	struct msg_list		 m3;
	const struct store_node	*n1 = NULL, *n2 = NULL, *mg = NULL;
	struct agent_view	 v3;
	char			 longres[600], err[512];
	char			*env[] = { "WARREN_SUMMARY_RESULT_MAX=200", NULL };
	char			*argv[] = { "warren", "run", "--json", "--db",
				    c->db, "--workspace", c->w.ws, "--replay",
				    c->w.cas, "graph task", NULL };
	char			*gargv[] = { "warren", "graph", "--db", c->db,
				    "--format", "json", "1", NULL };
	size_t			 i, k, p1 = 0, p2 = 0, pm = 0;
	int			 e1 = 0, e2 = 0, e3 = 0;

	memset(longres, 'L', sizeof(longres) - 1);
	longres[sizeof(longres) - 1] = '\0';
	memcpy(longres, "LONG-RESULT ", 12);
	h_turn(c->w.f, "0", 1, h_calls2("a", "delegate",
	    "{\"profile\":\"explore\",\"task\":\"P-TASK\"}", "b", "delegate",
	    "{\"profile\":\"explore\",\"task\":\"Q-TASK\"}"));
	h_turn(c->w.f, "0.1", 1, h_calls1("c", "complete",
	    complete_args(longres)));
	fprintf(c->w.f, "{\"agent\":\"0.1\",\"step\":0,\"purpose\":\"summary\","
	    "\"reply\":{\"stop\":\"end\",\"usage\":{\"input\":77,\"output\":7},"
	    "\"text\":\"SHORT-SUMMARY-P\",\"calls\":[]}}\n");
	h_turn(c->w.f, "0.2", 1, h_calls1("d", "complete",
	    complete_args("Q-RES")));
	h_turn(c->w.f, "0", 2, h_calls1("e", "delegate",
	    "{\"profile\":\"explore\",\"task\":\"R-TASK\","
	    "\"inherit_context\":true}"));
	h_turn(c->w.f, "0.3", 1, h_calls1("f", "complete",
	    complete_args("R-RES")));
	h_turn(c->w.f, "0", 3, h_calls1("g", "complete",
	    complete_args("FINAL-D")));
	h_ws_cassette_close(&c->w);

	assert_int_equal(h_warren(&r, argv, env, NULL, NULL), 0);
	if (r.status != 0)
		fprintf(stderr, "%s\n%s\n", r.out, r.err);
	assert_int_equal(r.status, 0);
	assert_int_equal(h_count_lines(r.out, "\"event\":\"result\"",
	    "FINAL-D"), 1);
	/* The parent heard the whole result, not the summary. */
	assert_int_equal(h_count_lines(r.out, "\"tool\":\"delegate\"",
	    "LONG-RESULT"), 1);
	h_run_free(&r);

	st = store_open(c->db, STORE_READ, err, sizeof(err));
	assert_non_null(st);
	memset(&g, 0, sizeof(g));
	assert_int_equal(store_graph_load(st, 1, &g), 0);
	for (i = 0; i < g.nnodes; i++) {
		if (g.nodes[i].path != NULL && !strcmp(g.nodes[i].path, "0.1"))
			n1 = &g.nodes[i];
		if (g.nodes[i].path != NULL && !strcmp(g.nodes[i].path, "0.2"))
			n2 = &g.nodes[i];
		if (g.nodes[i].kind == STORE_NODE_MERGE) {
			assert_null(mg);	/* one batch, one merge */
			mg = &g.nodes[i];
		}
	}
	assert_non_null(n1);
	assert_non_null(n2);
	assert_non_null(mg);
	/* The long result got the LLM's summary and its tokens. */
	assert_int_equal(n1->summary_kind, STORE_SUMMARY_LLM);
	assert_string_equal(n1->summary, "SHORT-SUMMARY-P");
	assert_int_equal(n1->summary_usage.input, 77);
	assert_int_equal(n1->summary_usage.output, 7);
	/* The short one is its own summary. */
	assert_int_equal(n2->summary_kind, STORE_SUMMARY_RESULT);
	assert_string_equal(n2->summary, "Q-RES");
	/* The merge node has both as parents, and 0.3 under it. */
	v3 = db_agent(c->db, "0.3");
	assert_true(v3.found);
	for (k = 0; k < g.nedges; k++) {
		e1 |= g.edges[k].parent == n1->id && g.edges[k].child == mg->id;
		e2 |= g.edges[k].parent == n2->id && g.edges[k].child == mg->id;
		e3 |= g.edges[k].parent == mg->id && g.edges[k].child ==
		    v3.node;
	}
	assert_true(e1 && e2 && e3);
	assert_non_null(strstr(mg->summary, "SHORT-SUMMARY-P"));
	assert_non_null(strstr(mg->summary, "Q-RES"));
	store_graph_free(&g);
	store_close(st);

	/* inherit_context: 0.3 started from its ancestors' memory, in order
	 * (0.1, 0.2, their merge), then its parent's conversation. */
	db_messages(c->db, "0.3", &m3);
	for (i = 0; i < m3.n; i++) {
		const char *t = m3.v[i].text;

		if (m3.v[i].role != MSG_USER || t == NULL)
			continue;
		if (strstr(t, "[memory of agent 0.1") == t) {
			p1 = i;
			assert_non_null(strstr(t, "SHORT-SUMMARY-P"));
			assert_null(strstr(t, "LONG-RESULT"));
		} else if (strstr(t, "[memory of agent 0.2") == t)
			p2 = i;
		else if (strstr(t, "[merged memory") == t)
			pm = i;
	}
	assert_true(p1 > 0 && p2 > p1 && pm > p2);
	msg_list_free(&m3);

	/* And `warren graph` shows the merge with its two parents. */
	assert_int_equal(h_warren(&r, gargv, NULL, NULL, NULL), 0);
	assert_int_equal(r.status, 0);
	assert_non_null(strstr(r.out, "\"merge\""));
	assert_non_null(strstr(r.out, "SHORT-SUMMARY-P"));
	h_run_free(&r);
}

/* A worker's parallel subagents get their merge node too. */
static void
test_worker_merge(void **state)
{
	struct ctx		*c = *state;
	struct h_run		 r;
	struct store		*st;
	struct store_graph	 g;
	struct agent_view	 v1, v2;
	char			 err[512];
	char			*argv[] = { "warren", "run", "--json", "--db",
				    c->db, "--workspace", c->w.ws, "--replay",
				    c->w.cas, "worker merge task", NULL };
	size_t			 i, k, nmerge = 0;
	int			 e1, e2;

	h_turn(c->w.f, "0", 1, h_calls1("a", "delegate",
	    "{\"profile\":\"general\",\"task\":\"W-TASK\"}"));
	h_turn(c->w.f, "0.1", 1, h_calls2("b", "delegate",
	    "{\"profile\":\"explore\",\"task\":\"W1\"}", "c", "delegate",
	    "{\"profile\":\"explore\",\"task\":\"W2\"}"));
	h_turn(c->w.f, "0.1.1", 1, h_calls1("d", "complete",
	    complete_args("W1-R")));
	h_turn(c->w.f, "0.1.2", 1, h_calls1("e", "complete",
	    complete_args("W2-R")));
	h_turn(c->w.f, "0.1", 2, h_calls1("f", "complete",
	    complete_args("W-R")));
	h_turn(c->w.f, "0", 2, h_calls1("g", "complete",
	    complete_args("FINAL-W")));
	h_ws_cassette_close(&c->w);
	assert_int_equal(h_warren(&r, argv, NULL, NULL, NULL), 0);
	assert_int_equal(r.status, 0);
	h_run_free(&r);
	v1 = db_agent(c->db, "0.1.1");
	v2 = db_agent(c->db, "0.1.2");
	st = store_open(c->db, STORE_READ, err, sizeof(err));
	assert_non_null(st);
	memset(&g, 0, sizeof(g));
	assert_int_equal(store_graph_load(st, 1, &g), 0);
	for (i = 0; i < g.nnodes; i++) {
		if (g.nodes[i].kind != STORE_NODE_MERGE)
			continue;
		nmerge++;
		e1 = e2 = 0;
		for (k = 0; k < g.nedges; k++) {
			e1 |= g.edges[k].parent == v1.node &&
			    g.edges[k].child == g.nodes[i].id;
			e2 |= g.edges[k].parent == v2.node &&
			    g.edges[k].child == g.nodes[i].id;
		}
		assert_true(e1 && e2);
		assert_non_null(strstr(g.nodes[i].label, "agent 0.1"));
		assert_non_null(strstr(g.nodes[i].summary, "W1-R"));
		assert_non_null(strstr(g.nodes[i].summary, "W2-R"));
	}
	assert_int_equal(nmerge, 1);
	store_graph_free(&g);
	store_close(st);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_summary_merge_context,
		    setup, teardown),
		cmocka_unit_test_setup_teardown(test_worker_merge,
		    setup, teardown),
		cmocka_unit_test_setup_teardown(test_resume_keeps_schema,
		    setup, teardown),
		cmocka_unit_test_setup_teardown(test_kill_after_first_child,
		    setup, teardown),
		cmocka_unit_test_setup_teardown(test_kill_worker_root,
		    setup, teardown),
		cmocka_unit_test_setup_teardown(test_kill_two_mid_step,
		    setup, teardown),
		cmocka_unit_test_setup_teardown(test_resume_start_cut_short,
		    setup, teardown),
		cmocka_unit_test_setup_teardown(test_kill_during_synthesis,
		    setup, teardown),
		cmocka_unit_test_setup_teardown(test_kill_during_summary,
		    setup, teardown),
		cmocka_unit_test_setup_teardown(test_kill_parallel_merge,
		    setup, teardown),
		cmocka_unit_test_setup_teardown(test_kill_call_id_again,
		    setup, teardown),
	};

	if (getenv("E2E_FILTER") != NULL)
		cmocka_set_test_filter(getenv("E2E_FILTER"));
	return cmocka_run_group_tests(tests, NULL, NULL);
}

/*
 * The queue and the shared rate gate where a user has them by default
 * (issue 30, docs/queue.md "Where the queue lives"): the real warren,
 * the fakellm server as its endpoint (no cassette: the gate is asked
 * before every request), a private $HOME, state and config directory,
 * and the rate limit set in the user's config file as a user sets it.
 *
 *   - a run of several LLM requests with llm_rpm is not held up by its own
 *     store: on the default queue (queue.db beside the state database),
 *     and with queue_url naming the state database itself;
 *   - `queue work` started while another process holds the queue's write
 *     lock waits for it, says so, and works;
 *   - the default queue file beside a state database kept in the
 *     workspace is masked from every worker, gate or not.
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

#define KEY	"sk-queue-default-77c1"
#define RUN_MAX_MS	2000	/* a run of three requests, gate and all */

/* A general root that reads twice, then completes: three requests. */
static const char script[] =
"{\"rules\": [\n"
" {\"match\": \"SELFLOCK-TASK\", \"repeat\": true, \"responses\": [\n"
"  {\"reply\": {\"calls\": [{\"id\": \"c1\", \"name\": \"read\","
"   \"arguments\": {\"path\": \"data.txt\"}}]}},\n"
"  {\"reply\": {\"calls\": [{\"id\": \"c2\", \"name\": \"read\","
"   \"arguments\": {\"path\": \"data.txt\"}}]}},\n"
"  {\"reply\": {\"calls\": [{\"id\": \"c3\", \"name\": \"complete\","
"   \"arguments\": {\"result\": \"SELFLOCK-DONE\"}}]}}]}\n"
"]}\n";

/* One test's directory, fakellm and environment. */
struct tg {
	char		*dir;
	char		 ws[PATH_MAX];
	char		 state[PATH_MAX + 16];	/* $XDG_STATE_HOME/warren */
	char		 db[PATH_MAX + 32];	/* the state database */
	char		 queue[PATH_MAX + 32];	/* the default queue */
	char		 home[PATH_MAX + 16], st[PATH_MAX + 32];
	char		 cf[PATH_MAX + 32];
	struct h_fakellm fl;
	char		*env[12];
};

/* Start fakellm; the user's config holds conf. 1: skip. */
static int
tg_open(struct tg *t, const char *sc, const char *conf)
{
	char	cfg[PATH_MAX + 16];
	int	rc, n = 0;

	memset(t, 0, sizeof(*t));
	t->dir = h_tmpdir();
	snprintf(t->ws, sizeof(t->ws), "%s/ws", t->dir);
	h_write(t->ws, "data.txt", "data\n", 0);
	snprintf(t->state, sizeof(t->state), "%s/state/warren", t->dir);
	snprintf(t->db, sizeof(t->db), "%s/warren.db", t->state);
	snprintf(t->queue, sizeof(t->queue), "%s/queue.db", t->state);
	snprintf(t->home, sizeof(t->home), "HOME=%s", t->dir);
	snprintf(t->st, sizeof(t->st), "XDG_STATE_HOME=%s/state", t->dir);
	snprintf(t->cf, sizeof(t->cf), "XDG_CONFIG_HOME=%s/config", t->dir);
	snprintf(cfg, sizeof(cfg), "%s/config", t->dir);
	h_write(cfg, "warren/config", conf, 0);
	/* Nothing of the caller's says where the queue or database is. */
	unsetenv("WARREN_QUEUE_URL");
	unsetenv("WARREN_DB");
	unsetenv("WARREN_LLM_RPM");
	unsetenv("WARREN_LLM_TPM");
	unsetenv("WARREN_LLM_RATE_SHARE");
	unsetenv("WARREN_REPLAY");
	if ((rc = h_fakellm_start(&t->fl, t->dir, sc)) == 1)
		return 1;
	assert_int_equal(rc, 0);
	t->env[n++] = t->home;
	t->env[n++] = t->st;
	t->env[n++] = t->cf;
	t->env[n++] = t->fl.env_url;
	t->env[n++] = "WARREN_API_KEY=" KEY;
	t->env[n++] = "WARREN_MODEL=fake-model";
	t->env[n++] = "WARREN_RETRIES=0";
	t->env[n] = NULL;
	return 0;
}

static void
tg_close(struct tg *t)
{
	h_fakellm_stop(&t->fl);
	h_rm_rf(t->dir);
	free(t->dir);
}

/* One integer from sql on the file db (-1: no such file or table). */
static long long
tg_query(const char *db, const char *sql)
{
	sqlite3		*h;
	sqlite3_stmt	*s;
	long long	 v = -1;

	if (access(db, F_OK) == -1)
		return -1;
	assert_int_equal(sqlite3_open_v2(db, &h, SQLITE_OPEN_READONLY, NULL),
	    SQLITE_OK);
	if (sqlite3_prepare_v2(h, sql, -1, &s, NULL) == SQLITE_OK) {
		if (sqlite3_step(s) == SQLITE_ROW)
			v = sqlite3_column_int64(s, 0);
		sqlite3_finalize(s);
	}
	sqlite3_close(h);
	return v;
}

/*
 * `warren run --profile general` of three LLM requests, the gate on by
 * llm_rpm in the user's config: done in RUN_MAX_MS, its gate row in
 * gatedb. Before issue 30 every request waited the queue's 30 s busy
 * timeout for the run's own store: the harness stops it at 10 s.
 */
static void
tg_run_fast(struct tg *t, const char *gatedb)
{
	struct h_run	 r;
	char		*argv[] = { "warren", "run", "--json", "--profile",
			    "general", "--workspace", t->ws,
			    "SELFLOCK-TASK: read data.txt twice", NULL };

	h_hang_guard = 10;
	assert_int_equal(h_warren(&r, argv, t->env, NULL, NULL), 0);
	if (r.hung)
		fail_msg("%s", h_deadline_missed(&r, "the end of a run of "
		    "three LLM requests (due in 2 s; the gate waits on the "
		    "run's own store: issue 30)"));
	assert_int_equal(r.status, 0);
	assert_non_null(strstr(r.out, "SELFLOCK-DONE"));
	fprintf(stderr, "the run took %llu ms (at most %d)\n", r.ms,
	    RUN_MAX_MS);
	if (r.ms >= RUN_MAX_MS)
		fail_msg("the run took %llu ms, not under %d", r.ms,
		    RUN_MAX_MS);
	assert_null(strstr(r.err, "locked"));
	assert_null(strstr(r.err, "held the database"));
	assert_null(strstr(r.err, "rate limits"));
	assert_int_equal(h_count_file(t->fl.log, "/chat/completions", NULL),
	    3);
	h_run_free(&r);
	/* The gate was asked: its endpoint's row is there. */
	assert_int_equal(tg_query(gatedb, "SELECT count(*) FROM queue_rate"),
	    1);
}

/* The default: the gate on queue.db beside the state database. */
static void
test_gate_default(void **state)
{
	struct tg	t;

	(void)state;
	if (tg_open(&t, script, "llm_rpm = 600\n") == 1)
		skip();
	tg_run_fast(&t, t.queue);
	/* The state database holds runs, not the gate. */
	assert_int_equal(tg_query(t.db, "SELECT count(*) FROM sqlite_master"
	    " WHERE name = 'queue_rate'"), 0);
	assert_int_equal(tg_query(t.db, "SELECT count(*) FROM runs"), 1);
	tg_close(&t);
}

/* queue_url names the state database itself: one file for the run's
 * store and its gate, and still no wait on itself. */
static void
test_gate_on_state_db(void **state)
{
	struct tg	t;
	char		conf[PATH_MAX + 64], cfg[PATH_MAX + 16];

	(void)state;
	if (tg_open(&t, script, "") == 1)
		skip();
	snprintf(conf, sizeof(conf), "llm_rpm = 600\nqueue_url = %s\n", t.db);
	snprintf(cfg, sizeof(cfg), "%s/config", t.dir);
	h_write(cfg, "warren/config", conf, 0);
	tg_run_fast(&t, t.db);
	assert_int_equal(access(t.queue, F_OK), -1);
	assert_int_equal(tg_query(t.db, "SELECT count(*) FROM runs"), 1);
	tg_close(&t);
}

/* The lock test_work_waits holds, let go by tg_unlock_later. */
static sqlite3	*tg_lock;

static void
tg_unlock_later(pid_t pid, void *arg)
{
	(void)pid;
	(void)arg;
	sleep(6);
	assert_int_equal(sqlite3_exec(tg_lock, "ROLLBACK", NULL, NULL, NULL),
	    SQLITE_OK);
	sqlite3_close(tg_lock);
	tg_lock = NULL;
}

/*
 * `queue work` started while another process holds the queue's write
 * lock for 6 s (longer than the store's 5 s busy timeout at open, which
 * it used to fail on, exit 6): it waits, says once what for and who
 * holds it, and works the queue.
 */
static void
test_work_waits(void **state)
{
	struct tg	 t;
	struct h_run	 r;
	char		*add[] = { "warren", "queue", "add", "--profile",
			    "general", "--workspace", NULL,
			    "SELFLOCK-TASK: read data.txt twice", NULL };
	char		*work[] = { "warren", "queue", "work", NULL };

	(void)state;
	if (tg_open(&t, script, "") == 1)
		skip();
	add[6] = t.ws;
	assert_int_equal(h_warren(&r, add, t.env, NULL, NULL), 0);
	assert_int_equal(r.status, 0);
	h_run_free(&r);
	assert_int_equal(sqlite3_open(t.queue, &tg_lock), SQLITE_OK);
	assert_int_equal(sqlite3_exec(tg_lock, "BEGIN IMMEDIATE", NULL, NULL,
	    NULL), SQLITE_OK);
	h_hang_guard = 60;
	assert_int_equal(h_warren(&r, work, t.env, tg_unlock_later, NULL), 0);
	assert_null(tg_lock);
	if (r.status != 0)
		fail_msg("queue work under a held lock: exit %d: %s", r.status,
		    r.err);
	assert_true(r.ms >= 5000);
	assert_int_equal(h_count_lines(r.err, "another process holds its "
	    "write lock", "waiting for it, at most 30 s"), 1);
	assert_non_null(strstr(r.err, t.queue));
	/* Who holds it: this test (its name as /proc says). */
	assert_non_null(strstr(r.err, "pid "));
	h_run_free(&r);
	assert_int_equal(tg_query(t.queue, "SELECT count(*) FROM queue_jobs"
	    " WHERE status = 'done'"), 1);
	tg_close(&t);
}

/* A general agent's shell tries the state database and the queue kept
 * in the workspace. */
static const char mask_script[] =
"{\"rules\": [\n"
" {\"match\": \"QMASK-END\", \"repeat\": true, \"responses\": [{\"reply\":"
"  {\"calls\": [{\"id\": \"c2\", \"name\": \"complete\", \"arguments\":"
"  {\"result\": \"QMASK-DONE\"}}]}}]},\n"
" {\"match\": \"QMASK-TASK\", \"repeat\": true, \"responses\": [{\"reply\":"
"  {\"calls\": [{\"id\": \"c1\", \"name\": \"bash\", \"arguments\":"
"  {\"command\": \"for f in st/w.db st/queue.db; do "
"if head -c 1 $f >/dev/null 2>&1; then echo GOT:$f; else echo NO:$f; fi; "
"done; echo >> st/queue.db && echo WROTE; echo QMASK-END\"}}]}}]}\n"
"]}\n";

/*
 * WARREN_DB in the workspace puts the default queue there too
 * (st/queue.db beside st/w.db): masked in every worker, also in a run
 * whose rate gate is off, so no agent can read or write the queue.
 */
static void
test_mask_default_queue(void **state)
{
	struct tg	 t;
	struct h_run	 r;
	char		 dbenv[PATH_MAX + 32], st[PATH_MAX + 16];
	char		*argv[] = { "warren", "run", "--json", "--profile",
			    "general", "--workspace", NULL, "QMASK-TASK", NULL };
	char		*add[] = { "warren", "queue", "add", "--workspace", NULL,
			    "a job", NULL };
	char		*env[16];
	int		 n;

	(void)state;
	if (tg_open(&t, mask_script, "") == 1)
		skip();
	snprintf(st, sizeof(st), "%s/st", t.ws);
	snprintf(dbenv, sizeof(dbenv), "WARREN_DB=%s/w.db", st);
	for (n = 0; t.env[n] != NULL; n++)
		env[n] = t.env[n];
	env[n++] = dbenv;
	env[n] = NULL;
	argv[6] = add[4] = t.ws;
	assert_int_equal(h_warren(&r, add, env, NULL, NULL), 0);
	assert_int_equal(r.status, 0);
	h_run_free(&r);
	snprintf(t.queue, sizeof(t.queue), "%s/queue.db", st);
	assert_int_equal(tg_query(t.queue, "SELECT count(*) FROM queue_jobs"),
	    1);
	assert_int_equal(h_warren(&r, argv, env, NULL, NULL), 0);
	assert_int_equal(r.status, 0);
	assert_non_null(strstr(r.out, "QMASK-DONE"));
	assert_int_equal(h_count_lines(r.out, "\"event\":\"tool_result\"",
	    "GOT:"), 0);
	assert_int_equal(h_count_lines(r.out, "\"event\":\"tool_result\"",
	    "NO:st/w.db\\nNO:st/queue.db"), 1);
	assert_int_equal(h_count_lines(r.out, "\"event\":\"tool_result\"",
	    "WROTE"), 0);
	h_run_free(&r);
	assert_int_equal(tg_query(t.queue, "SELECT count(*) FROM queue_jobs"),
	    1);
	tg_close(&t);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_teardown(test_gate_default,
		    h_fakellm_teardown),
		cmocka_unit_test_teardown(test_gate_on_state_db,
		    h_fakellm_teardown),
		cmocka_unit_test_teardown(test_work_waits,
		    h_fakellm_teardown),
		cmocka_unit_test_teardown(test_mask_default_queue,
		    h_fakellm_teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}

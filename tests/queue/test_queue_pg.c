/*
 * What only the PostgreSQL backend has (queue_pg*.c), on a server of the
 * test's own (pg_server.sh): its schema version and the newer one it
 * refuses, LISTEN/NOTIFY for idle workers, a connection lost to a server
 * restart and found again with nothing lost, text that is not UTF-8, a
 * late result refused once a claim has taken its job over, a cancel
 * that meets a claim asking its worker to stop, and
 * passwords masked in what it says. The URL masking runs without a
 * server too.
 */
#include <sys/types.h>
#include <sys/wait.h>

#include <errno.h>
#include <poll.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "common/clock.h"
#include "common/urlmask.h"
#include "queue/queue.h"
#include "queue/queue_testapi.h"
#include "tests/queue/queue_test.h"
#include "tests/test_wait.h"

#define LEASE	10000

static int
setup(void **state)
{
	struct qt	*t = calloc(1, sizeof(*t));

	if (!qt_is_pg()) {
		free(t);
		return 0;
	}
	qt_make(t);
	if ((t->q = qt_open(t)) == NULL)
		fail_msg("cannot open the queue");
	*state = t;
	return 0;
}

static int
teardown(void **state)
{
	struct qt	*t = *state;

	if (t == NULL)
		return 0;
	queue_close(t->q);
	qt_remove(t);
	free(t);
	return 0;
}

#define NEED_PG(t)	do { if ((t) == NULL) skip(); } while (0)

/* The password of the test's URL (between "user:" and '@'). */
static const char *
password(const struct qt *t)
{
	static char	pw[128];
	const char	*p = strstr(t->db, "://"), *colon, *at;

	assert_non_null(p);
	colon = strchr(p + 3, ':');
	at = strchr(p + 3, '@');
	assert_true(colon != NULL && at != NULL && colon < at);
	snprintf(pw, sizeof(pw), "%.*s", (int)(at - colon - 1), colon + 1);
	assert_true(strlen(pw) >= 16);
	return pw;
}

static void
expect_mask(const char *url, const char *want)
{
	char	out[256];

	urlmask(url, out, sizeof(out));
	assert_string_equal(out, want);
}

static void
test_mask(void **state)
{
	char	small[8];

	(void)state;
	expect_mask("postgresql://u:pw@h:5432/db", "postgresql://u:***@h:5432/db");
	expect_mask("postgres://u@h/db", "postgres://***@h/db");
	expect_mask("postgresql://h/db?user=u&password=pw&sslmode=require",
	    "postgresql://h/db?user=u&password=***&sslmode=require");
	expect_mask("postgresql:host=h password=pw dbname=d",
	    "postgresql:host=h password=*** dbname=d");
	/* '@' in the password, a path with '@' after it. */
	expect_mask("postgresql://u:p@w@h/d@b", "postgresql://u:***@h/d@b");
	expect_mask("/var/lib/warren.db", "/var/lib/warren.db");
	urlmask("postgresql://u:pw@h", small, sizeof(small));
	assert_string_equal(small, "postgre");
	assert_true(queue_url_is_pg("postgresql://h"));
	assert_true(queue_url_is_pg("postgres://h"));
	assert_true(queue_url_is_pg("postgresql:host=h"));
	assert_false(queue_url_is_pg("/tmp/postgresql://x"));
	assert_false(queue_url_is_pg(NULL));
}

/* queue_meta holds the version; a newer one is refused with what to do,
 * and the refusal does not show the password. */
static void
test_schema(void **state)
{
	struct qt	*t = *state;
	char		 err[QUEUE_ERR_MAX];

	NEED_PG(t);
	assert_int_equal(qt_sql_int(t, "SELECT value FROM queue_meta WHERE"
	    " name = 'schema_version'"), 3);
	assert_int_equal(qt_sql(t, "UPDATE queue_meta SET value = 99 WHERE"
	    " name = 'schema_version'"), 0);
	assert_null(queue_open(t->db, err, sizeof(err)));
	if (strstr(err, "version 99") == NULL ||
	    strstr(err, "newer warren") == NULL)
		fail_msg("error: %s", err);
	assert_non_null(strstr(err, "postgresql://warren:***@"));
	assert_null(strstr(err, password(t)));
	/* Version 1, before change sets: migrated to 2 on open. */
	assert_int_equal(qt_sql(t, "ALTER TABLE queue_jobs DROP COLUMN changes,"
	    " DROP COLUMN run_where, DROP COLUMN applied_ms, DROP COLUMN"
	    " applied_by; UPDATE queue_meta SET value = 1 WHERE"
	    " name = 'schema_version'"), 0);
	queue_close(t->q);
	if ((t->q = qt_open(t)) == NULL)
		fail_msg("reopen at version 1");
	assert_int_equal(qt_sql_int(t, "SELECT value FROM queue_meta WHERE"
	    " name = 'schema_version'"), 3);
	assert_int_equal(qt_sql_int(t, "SELECT count(*) FROM"
	    " information_schema.columns WHERE table_schema = current_schema()"
	    " AND table_name = 'queue_jobs' AND column_name IN ('changes',"
	    " 'run_where', 'applied_ms', 'applied_by')"), 4);
}

static int64_t
add(struct queue *q, const char *task)
{
	struct queue_job_new	n = { .task = task, .workspace = "/w" };
	int64_t			id = 0;

	if (queue_add(q, &n, &id, NULL) == -1)
		fail_msg("queue_add: %s", queue_errmsg(q));
	return id;
}

/* An idle worker's descriptor wakes when another connection adds a job,
 * and when a result frees a slot; not otherwise. */
static void
test_notify(void **state)
{
	struct qt		*t = *state;
	struct queue		*other;
	struct queue_job	 j;
	struct pollfd		 pfd;

	NEED_PG(t);
	assert_non_null(other = qt_open(t));
	pfd.fd = queue_wait_fd(t->q);
	assert_true(pfd.fd >= 0);
	pfd.events = POLLIN;
	(void)queue_woken(t->q);	/* what came before LISTEN */
	assert_int_equal(queue_woken(t->q), 0);
	assert_int_equal(poll(&pfd, 1, 200), 0);
	add(other, "x");
	assert_int_equal(poll(&pfd, 1, 5000), 1);
	assert_int_equal(queue_woken(t->q), 1);
	assert_int_equal(queue_woken(t->q), 0);
	assert_int_equal(queue_claim(other, "w", LEASE, 0, &j), 1);
	assert_int_equal(queue_complete(other, j.id, 1, "w", NULL), 0);
	queue_job_free(&j);
	pfd.fd = queue_wait_fd(t->q);
	assert_int_equal(poll(&pfd, 1, 5000), 1);
	assert_int_equal(queue_woken(t->q), 1);
	queue_close(other);
}

static void
pg_ctl(const char *what)
{
	const char	*ctl = getenv("WARREN_TEST_PG_CTL");
	char		 cmd[1200];

	if (ctl == NULL)
		fail_msg("WARREN_TEST_PG_CTL is not set (run under pg_server.sh)");
	snprintf(cmd, sizeof(cmd), "sh '%s' %s >/dev/null", ctl, what);
	if (system(cmd) != 0)
		fail_msg("%s", cmd);
}

/* Call counts until it succeeds, at most 15 s; the calls it took. */
static int
until_counts(struct queue *q, struct queue_counts *c)
{
	uint64_t	end = clock_mono_ms() + 15000;
	int		calls = 0;

	for (;;) {
		calls++;
		if (queue_counts(q, c) == 0)
			return calls;
		if (clock_mono_ms() > end)
			fail_msg("no connection after 15 s: %s",
			    queue_errmsg(q));
		usleep(50000);
	}
}

/*
 * The server stops under an open handle: calls fail at once and say so
 * (no hang), with backoff between connects; once it is back the handle
 * connects again, LISTENs again, and every job is there.
 */
static void
test_reconnect(void **state)
{
	struct qt		*t = *state;
	struct queue_counts	 c;
	uint64_t		 t0;

	NEED_PG(t);
	add(t->q, "a");
	add(t->q, "b");
	assert_true(queue_wait_fd(t->q) >= 0);
	pg_ctl("stop");
	t0 = clock_mono_ms();
	assert_int_equal(queue_counts(t->q, &c), -1);
	if (strstr(queue_errmsg(t->q), "lost") == NULL)
		fail_msg("error: %s", queue_errmsg(t->q));
	assert_int_equal(queue_counts(t->q, &c), -1);
	assert_non_null(strstr(queue_errmsg(t->q), "cannot connect"));
	/* Within the backoff: refused without trying. */
	assert_int_equal(queue_counts(t->q, &c), -1);
	assert_non_null(strstr(queue_errmsg(t->q), "trying again in"));
	assert_null(strstr(queue_errmsg(t->q), password(t)));
	assert_int_equal(queue_wait_fd(t->q), -1);
	assert_true(clock_mono_ms() - t0 < 3000);
	pg_ctl("start");
	until_counts(t->q, &c);
	assert_int_equal(c.n[QUEUE_QUEUED], 2);
	assert_true(queue_wait_fd(t->q) >= 0);
	/* A restart (as a crash) between two calls: the next call may fail,
	 * then the handle is back. */
	pg_ctl("restart");
	until_counts(t->q, &c);
	assert_int_equal(c.n[QUEUE_QUEUED], 2);
	add(t->q, "c");
}

/* PostgreSQL refuses text that is not UTF-8: its bad bytes are kept as
 * \xNN, the rest as it was. */
static void
test_not_utf8(void **state)
{
	struct qt		*t = *state;
	struct queue_result	 r = { .error = "bad \xff byte \xc3\xa9t\xc3" };
	struct queue_job	 j;
	int64_t			 id;

	NEED_PG(t);
	id = add(t->q, "x");
	assert_int_equal(queue_claim(t->q, "w", LEASE, 0, &j), 1);
	queue_job_free(&j);
	assert_int_equal(queue_fail(t->q, id, 1, "w", &r, 0), 0);
	assert_int_equal(queue_get(t->q, id, &j, NULL, NULL), 0);
	assert_string_equal(j.error, "bad \\xFF byte \xc3\xa9t\\xC3");
	queue_job_free(&j);
}

/* Without a test's clock the times are the server's: near the wall
 * clock here (one machine), and not the injected time once unset. */
static void
test_server_clock(void **state)
{
	struct qt		*t = *state;
	struct queue_job	 j;
	struct timespec		 ts;
	int64_t			 wall;

	NEED_PG(t);
	queue_set_clock(t->q, NULL, NULL);
	add(t->q, "x");
	clock_gettime(CLOCK_REALTIME, &ts);
	wall = (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
	assert_int_equal(queue_claim(t->q, "w", LEASE, 0, &j), 1);
	assert_true(j.lease_until_ms > wall + LEASE - 5000);
	assert_true(j.lease_until_ms < wall + LEASE + 5000);
	queue_job_free(&j);
}

/* One statement on c that must succeed; the first row's first value as
 * an integer (0 without rows). */
static int64_t
pg_do(PGconn *c, const char *sql)
{
	PGresult	*r = PQexec(c, sql);
	int64_t		 v = 0;

	if (PQresultStatus(r) != PGRES_COMMAND_OK &&
	    PQresultStatus(r) != PGRES_TUPLES_OK)
		fail_msg("%s: %s", sql, PQresultErrorMessage(r));
	if (PQresultStatus(r) == PGRES_TUPLES_OK && PQntuples(r) > 0)
		v = strtoll(PQgetvalue(r, 0, 0), NULL, 10);
	PQclear(r);
	return v;
}

/* 0 once another session waits for a lock (pg_stat_activity, read anew
 * each time), -1 after 10 s without one. */
static int
lock_waiter(PGconn *c)
{
	int	i;

	for (i = 0; i < 1000; i++) {
		pg_do(c, "SELECT pg_stat_clear_snapshot()");
		if (pg_do(c, "SELECT count(*) FROM pg_stat_activity WHERE"
		    " wait_event_type = 'Lock'") == 1)
			return 0;
		usleep(10000);
	}
	return -1;
}

/* The operations a test below runs in a child against a held row: 0 when
 * the operation answered as it must, else what it returned, plus 11. */
static int
op_late_complete(struct queue *q, int64_t id)
{
	int	rc = queue_complete(q, id, 1, "w1", NULL);

	return rc == 1 ? 0 : 11 + rc;	/* refused: the lease is gone */
}

static int
op_cancel(struct queue *q, int64_t id)
{
	int	rc = queue_cancel(q, id);

	return rc == 0 ? 0 : 11 + rc;
}

/*
 * A transaction of the test's own holds job id's row after running sql
 * (what a claim's take does); op runs in a child, must wait for the row's
 * lock (seen in pg_stat_activity within 10 s), and, once the transaction
 * commits, end as it must (exit 0). name names the test in the failures.
 */
static void
meets_held_row(struct qt *t, int64_t id, const char *sql,
    int (*op)(struct queue *, int64_t), const char *name)
{
	struct queue	*q;
	PGconn		*c;
	pid_t		 pid;
	int		 waited, status;

	c = PQconnectdb(t->db);
	assert_int_equal(PQstatus(c), CONNECTION_OK);
	pg_do(c, "BEGIN");
	pg_do(c, sql);
	if ((pid = fork()) == 0) {
		if ((q = qt_open(t)) == NULL)
			_exit(10);
		_exit(op(q, id));
	}
	assert_true(pid > 0);
	waited = lock_waiter(c);
	pg_do(c, "COMMIT");
	PQfinish(c);
	if (waited == -1)
		fail_msg("%s: waited 10 s for the child's operation to wait for "
		    "the row's lock (pg_stat_activity)", name);
	assert_true((status = test_waitpid(pid, 240, name)) != -1);
	assert_true(WIFEXITED(status));
	assert_int_equal(WEXITSTATUS(status), 0);
}

/*
 * A result that meets the claim taking its job over: the claim holds the
 * job's row (here the test's own transaction, doing what a claim's take
 * does); the late complete waits for it, then finds the lease gone and is
 * refused (the lease checked on the row it locks, FOR UPDATE), instead of
 * writing over the attempt that took over.
 */
static void
test_result_meets_take(void **state)
{
	struct qt		*t = *state;
	struct queue_job	 j;
	char			 sql[256];
	int64_t			 id;

	NEED_PG(t);
	id = add(t->q, "x");
	assert_int_equal(queue_claim(t->q, "w1", LEASE, 0, &j), 1);
	queue_job_free(&j);
	snprintf(sql, sizeof(sql), "UPDATE queue_jobs SET attempts = 2,"
	    " worker = 'w2' WHERE id = %lld", (long long)id);
	meets_held_row(t, id, sql, op_late_complete, "test_result_meets_take");
	assert_int_equal(queue_get(t->q, id, &j, NULL, NULL), 0);
	assert_int_equal(j.status, QUEUE_RUNNING);
	assert_string_equal(j.worker, "w2");
	queue_job_free(&j);
}

/*
 * A cancel that meets a claim: the claim holds the queued job's row
 * (here the test's own transaction, doing what a claim's take does) and
 * makes it running. The cancel reads the job's state on the row it
 * locks (FOR UPDATE), so it waits for the claim and then finds the job
 * running: it asks the worker to stop (cancel_asked), instead of marking
 * cancelled a job whose worker runs on, told nothing.
 */
static void
test_cancel_meets_claim(void **state)
{
	struct qt		*t = *state;
	struct queue_job	 j;
	char			 sql[256];
	int64_t			 id;

	NEED_PG(t);
	id = add(t->q, "x");
	snprintf(sql, sizeof(sql), "UPDATE queue_jobs SET status = 'running',"
	    " attempts = 1, worker = 'w2', lease_until_ms ="
	    " queue_clock_ms() + 3600000 WHERE id = %lld", (long long)id);
	meets_held_row(t, id, sql, op_cancel, "test_cancel_meets_claim");
	assert_int_equal(queue_get(t->q, id, &j, NULL, NULL), 0);
	assert_int_equal(j.status, QUEUE_RUNNING);
	assert_string_equal(j.worker, "w2");
	assert_int_equal(j.cancel_asked, 1);
	queue_job_free(&j);
}

/* What the child of test_claim_skips_locked reports. */
struct claim_seen {
	int	rc;
	int64_t	id, ms;
};

/*
 * A claim while another holds the oldest job's row (a claim on another
 * machine between its select and its commit: here the test's own
 * transaction, SELECT ... FOR UPDATE): it passes over that row and takes
 * the next job at once (under 1 s), neither waiting for the lock (FOR
 * UPDATE alone) nor coming back empty or failing (NOWAIT). The claim runs
 * in a child, so that a claim that waits is seen in 5 s, not hung.
 */
static void
test_claim_skips_locked(void **state)
{
	struct qt		*t = *state;
	struct claim_seen	 seen = { .rc = -2 };
	struct queue_job	 j;
	struct queue		*q;
	struct pollfd		 pfd;
	PGconn			*c;
	int64_t			 first, second, t0;
	pid_t			 pid;
	int			 fd[2], status;

	NEED_PG(t);
	first = add(t->q, "held by another claim");
	second = add(t->q, "free");
	c = PQconnectdb(t->db);
	assert_int_equal(PQstatus(c), CONNECTION_OK);
	pg_do(c, "BEGIN");
	assert_int_equal(pg_do(c, "SELECT id FROM queue_jobs ORDER BY id"
	    " LIMIT 1 FOR UPDATE"), first);
	assert_int_equal(pipe(fd), 0);
	if ((pid = fork()) == 0) {
		close(fd[0]);
		if ((q = qt_open(t)) == NULL)
			_exit(10);
		t0 = (int64_t)clock_mono_ms();
		seen.rc = queue_claim(q, "w2", LEASE, 0, &j);
		seen.ms = (int64_t)clock_mono_ms() - t0;
		seen.id = seen.rc == 1 ? j.id : 0;
		if (write(fd[1], &seen, sizeof(seen)) != sizeof(seen))
			_exit(11);
		_exit(0);
	}
	assert_true(pid > 0);
	close(fd[1]);
	pfd.fd = fd[0];
	pfd.events = POLLIN;
	if (poll(&pfd, 1, 5000) != 1) {
		kill(pid, SIGKILL);
		waitpid(pid, &status, 0);	/* after SIGKILL: it ends */
		pg_do(c, "ROLLBACK");
		PQfinish(c);
		fail_msg("a claim waited over 5 s while another transaction "
		    "held job %lld's row: it did not skip the locked row",
		    (long long)first);
	}
	assert_int_equal(read(fd[0], &seen, sizeof(seen)), sizeof(seen));
	close(fd[0]);
	assert_true((status = test_waitpid(pid, 30, "the second claimer, "
	    "which wrote what it claimed")) != -1);
	pg_do(c, "ROLLBACK");
	PQfinish(c);
	if (seen.rc != 1)
		fail_msg("the claim beside a held row returned %d (1: a job)",
		    seen.rc);
	assert_int_equal(seen.id, second);
	if (seen.ms >= 1000)
		fail_msg("the claim beside a held row took %lld ms", (long long)
		    seen.ms);
	/* The held job was not touched, and is claimed once it is free. */
	assert_int_equal(queue_claim(t->q, "w1", LEASE, 0, &j), 1);
	assert_int_equal(j.id, first);
	assert_int_equal(j.attempts, 1);
	queue_job_free(&j);
}

/* Statements sent to the server since the last reset, but the counting
 * connection's own. */
static int64_t
statements(PGconn *c)
{
	return pg_do(c, "SELECT coalesce(sum(calls), 0) FROM"
	    " public.pg_stat_statements WHERE query NOT LIKE"
	    " '%pg_stat_statements%'");
}

/*
 * A claim is one statement, and so are a complete, a fail and a
 * heartbeat (issue 33: at most 4 for a claim and its complete; here 2),
 * as the server counts them (pg_stat_statements, loaded by
 * pg_server.sh): one round trip each, the clock read in it. The
 * statements are prepared at their first use on a connection, before
 * the count.
 */
static void
test_statements(void **state)
{
	struct qt		*t = *state;
	struct queue_result	 res = { .answer = "a", .error = "e" };
	struct queue_job	 j;
	PGconn			*c;
	int64_t			 id;

	NEED_PG(t);
	qt_pg_admin("CREATE EXTENSION IF NOT EXISTS pg_stat_statements"
	    " SCHEMA public");
	/* The server's clock, as a user runs it. */
	queue_set_clock(t->q, NULL, NULL);
	add(t->q, "warm");
	assert_int_equal(queue_claim(t->q, "w", LEASE, 1, &j), 1);
	assert_int_equal(queue_heartbeat(t->q, j.id, 1, "w", LEASE), 0);
	assert_int_equal(queue_complete(t->q, j.id, 1, "w", &res), 0);
	queue_job_free(&j);
	id = add(t->q, "counted");
	c = PQconnectdb(t->db);
	assert_int_equal(PQstatus(c), CONNECTION_OK);
	pg_do(c, "SELECT public.pg_stat_statements_reset()");
	assert_int_equal(queue_claim(t->q, "w", LEASE, 1, &j), 1);
	assert_int_equal(j.id, id);
	queue_job_free(&j);
	assert_int_equal(statements(c), 1);
	pg_do(c, "SELECT public.pg_stat_statements_reset()");
	assert_int_equal(queue_heartbeat(t->q, id, 1, "w", LEASE), 0);
	assert_int_equal(statements(c), 1);
	pg_do(c, "SELECT public.pg_stat_statements_reset()");
	assert_int_equal(queue_fail(t->q, id, 1, "w", &res, 0), 0);
	assert_int_equal(statements(c), 1);
	assert_int_equal(qt_sql_int(t, "SELECT count(*) FROM queue_jobs WHERE"
	    " status = 'retrying'"), 1);
	qt_sql(t, "UPDATE queue_jobs SET run_at_ms = 0");
	assert_int_equal(queue_claim(t->q, "w", LEASE, 0, &j), 1);
	queue_job_free(&j);
	pg_do(c, "SELECT public.pg_stat_statements_reset()");
	assert_int_equal(queue_complete(t->q, id, 2, "w", &res), 0);
	assert_int_equal(statements(c), 1);
	PQfinish(c);
	assert_int_equal(queue_get(t->q, id, &j, NULL, NULL), 0);
	assert_int_equal(j.status, QUEUE_DONE);
	assert_int_equal(j.attempts, 2);
	assert_string_equal(j.answer, "a");
	assert_null(j.error);
	queue_job_free(&j);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
#define T(f)	cmocka_unit_test_setup_teardown(f, setup, teardown)
		cmocka_unit_test(test_mask),
		T(test_schema),
		T(test_notify),
		T(test_not_utf8),
		T(test_server_clock),
		T(test_result_meets_take),
		T(test_cancel_meets_claim),
		T(test_claim_skips_locked),
		T(test_statements),
		T(test_reconnect),
#undef T
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}

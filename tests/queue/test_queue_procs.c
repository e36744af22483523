/*
 * The queue under two processes, as two `warren queue work` on one state
 * database: 1,000 jobs claimed and completed concurrently, each claimed
 * exactly once; max_running held across both; two first opens of a
 * fresh database at once; and a worker killed -9 at random moments.
 */
#include <sys/types.h>
#include <sys/wait.h>

#include <errno.h>
#include <signal.h>
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
#include "tests/queue/queue_test.h"
#include "tests/test_wait.h"

#define NJOBS	1000
#define NPROCS	2
#define LEASE	600000

/* What a worker sends the test for each job it claimed. */
struct claimed {
	int64_t	id;
	int	attempt;
	int	running;	/* jobs running just after the claim */
};

/*
 * One worker: wait for the start, then claim and complete until nothing
 * is left, writing each claim to fd. Exit 0, or the step that failed.
 */
static int
worker(struct qt *t, int start, int fd, const char *name,
    unsigned max_running)
{
	struct queue_counts	c;
	struct queue_job	j;
	struct claimed		cl;
	struct queue		*q;
	char			go;
	int			rc;

	if ((q = qt_open(t)) == NULL)
		return 10;
	queue_set_clock(q, NULL, NULL);
	if (read(start, &go, 1) != 1)
		return 11;
	while ((rc = queue_claim(q, name, LEASE, max_running, &j)) != -1) {
		if (rc == 0) {
			/* max_running full: claim again while jobs are left,
			 * so that the claims race at every job's end. */
			if (max_running == 0 || queue_counts(q, &c) == -1 ||
			    c.n[QUEUE_QUEUED] == 0)
				break;
			continue;
		}
		if (queue_counts(q, &c) == -1)
			return 12;
		cl = (struct claimed){ j.id, j.attempts,
		    (int)c.n[QUEUE_RUNNING] };
		if (write(fd, &cl, sizeof(cl)) != sizeof(cl))
			return 13;
		if (queue_complete(q, j.id, j.attempts, name, NULL) != 0) {
			fprintf(stderr, "%s: %s\n", name, queue_errmsg(q));
			return 14;
		}
		queue_job_free(&j);
	}
	if (rc == -1) {
		fprintf(stderr, "%s: %s\n", name, queue_errmsg(q));
		return 15;
	}
	queue_close(q);
	return 0;
}

/* Run NPROCS workers over the queue; count each job's claims. */
static void
run_workers(struct qt *t, unsigned max_running, int *seen, int *per_proc,
    int *max_seen)
{
	struct claimed	cl;
	pid_t		pid[NPROCS];
	char		name[32];
	int		start[2], res[NPROCS][2], i, status;

	assert_int_equal(pipe(start), 0);
	for (i = 0; i < NPROCS; i++) {
		assert_int_equal(pipe(res[i]), 0);
		snprintf(name, sizeof(name), "worker-%d", i);
		if ((pid[i] = fork()) == 0) {
			close(start[1]);
			close(res[i][0]);
			_exit(worker(t, start[0], res[i][1], name,
			    max_running));
		}
		assert_true(pid[i] > 0);
		close(res[i][1]);
	}
	close(start[0]);
	/* Both open before either claims: they start together. */
	assert_int_equal(write(start[1], "gg", NPROCS), NPROCS);
	close(start[1]);
	for (i = 0; i < NPROCS; i++) {
		/* Each claim within 240 s (the whole run takes seconds); a
		 * worker that hangs fails the wait below, which kills it. */
		while (test_read(res[i][0], &cl, sizeof(cl), 240, "a worker's "
		    "next claim") == sizeof(cl)) {
			assert_true(cl.id >= 1 && cl.id <= NJOBS);
			assert_int_equal(cl.attempt, 1);
			seen[cl.id]++;
			per_proc[i]++;
			if (cl.running > *max_seen)
				*max_seen = cl.running;
		}
		close(res[i][0]);
	}
	for (i = 0; i < NPROCS; i++) {
		assert_true((status = test_waitpid(pid[i], 240,
		    "the child of run_workers")) != -1);
		assert_true(WIFEXITED(status));
		assert_int_equal(WEXITSTATUS(status), 0);
	}
}

static void
add_jobs(struct qt *t, int n)
{
	struct queue_job_new	j = { .task = "job", .workspace = "/w" };
	char			key[32];
	int64_t			id;
	int			i;

	for (i = 0; i < n; i++) {
		snprintf(key, sizeof(key), "k%d", i);
		j.key = key;
		if (queue_add(t->q, &j, &id, NULL) == -1)
			fail_msg("%s", queue_errmsg(t->q));
	}
}

static void
test_two_processes(void **state)
{
	struct qt		*t = *state;
	struct queue_counts	 c;
	static int		 seen[NJOBS + 1];
	int			 per_proc[NPROCS] = { 0 }, max_seen = 0, i;

	memset(seen, 0, sizeof(seen));
	add_jobs(t, NJOBS);
	run_workers(t, 0, seen, per_proc, &max_seen);
	for (i = 1; i <= NJOBS; i++)
		if (seen[i] != 1)
			fail_msg("job %d claimed %d times", i, seen[i]);
	for (i = 0; i < NPROCS; i++)
		assert_true(per_proc[i] > 0);
	assert_int_equal(queue_counts(t->q, &c), 0);
	assert_int_equal(c.n[QUEUE_DONE], NJOBS);
	assert_int_equal(c.n[QUEUE_QUEUED] + c.n[QUEUE_RUNNING], 0);
	fprintf(stderr, "claims per process: %d %d\n", per_proc[0],
	    per_proc[1]);
}

/* max_running 1 across both processes: never two running at once. */
static void
test_max_running_shared(void **state)
{
	struct qt		*t = *state;
	static int		 seen[NJOBS + 1];
	int			 per_proc[NPROCS] = { 0 }, max_seen = 0, i;

	memset(seen, 0, sizeof(seen));
	add_jobs(t, 200);
	run_workers(t, 1, seen, per_proc, &max_seen);
	for (i = 1; i <= 200; i++)
		assert_int_equal(seen[i], 1);
	assert_int_equal(max_seen, 1);
}

/* Two first uses of a fresh state database at once: both open it (the
 * store's tables and the queue's are made once) and both add. */
static void
test_open_together(void **state)
{
	struct qt		*t = *state;
	struct queue_counts	 c;
	struct queue_job_new	 j = { .task = "x", .workspace = "/w" };
	struct queue		*q;
	pid_t			 pid[NPROCS];
	int			 start[2], i, status;
	char			 go;
	struct qt		 fresh;

	/* A database nobody opened yet. */
	qt_make(&fresh);
	if (qt_is_pg())
		snprintf(t->db, sizeof(t->db), "%s", fresh.db);
	else
		snprintf(t->db, sizeof(t->db), "%s/fresh/warren.db", t->dir);
	assert_int_equal(pipe(start), 0);
	for (i = 0; i < NPROCS; i++) {
		if ((pid[i] = fork()) == 0) {
			close(start[1]);
			if (read(start[0], &go, 1) != 1)
				_exit(10);
			if ((q = qt_open(t)) == NULL)
				_exit(11);
			if (queue_add(q, &j, NULL, NULL) == -1)
				_exit(12);
			queue_close(q);
			_exit(0);
		}
		assert_true(pid[i] > 0);
	}
	assert_int_equal(write(start[1], "gg", NPROCS), NPROCS);
	close(start[1]);
	close(start[0]);
	for (i = 0; i < NPROCS; i++) {
		assert_true((status = test_waitpid(pid[i], 240,
		    "the child of test_open_together")) != -1);
		assert_true(WIFEXITED(status));
		assert_int_equal(WEXITSTATUS(status), 0);
	}
	assert_non_null(q = qt_open(t));
	assert_int_equal(queue_counts(q, &c), 0);
	assert_int_equal(c.n[QUEUE_QUEUED], NPROCS);
	queue_close(q);
	qt_remove(&fresh);
}

static int64_t
one_row(struct qt *t, const char *sql)
{
	return qt_sql_int(t, sql);
}

/* A worker that claims and completes until killed. */
static void
kill_worker(struct qt *t)
{
	struct queue_job	 j;
	struct queue		*q;

	if ((q = qt_open(t)) == NULL)
		_exit(10);
	queue_set_clock(q, NULL, NULL);
	while (queue_claim(q, "doomed", LEASE, 0, &j) == 1) {
		if (queue_complete(q, j.id, j.attempts, "doomed", NULL) != 0)
			_exit(11);
		queue_job_free(&j);
	}
	_exit(0);
}

/*
 * A worker killed -9 at random moments, 20 times: every transaction lands
 * whole or not at all. Then, past the leases, one drain: every job ends
 * done with exactly one done attempt, and its attempts agree with
 * queue_attempts.
 */
static void
test_kill9(void **state)
{
	struct qt		*t = *state;
	struct queue_counts	 c;
	struct queue_job	 j;
	pid_t			 pid;
	int			 i, status;

	add_jobs(t, 300);
	srandom((unsigned)getpid());
	for (i = 0; i < 20; i++) {
		if ((pid = fork()) == 0)
			kill_worker(t);
		assert_true(pid > 0);
		usleep((useconds_t)(5000 + random() % 20000));
		kill(pid, SIGKILL);
		/* After SIGKILL: it ends. */
		assert_int_equal(waitpid(pid, &status, 0), pid);
	}
	/* Every running job has its attempt open; no other attempt is. */
	assert_int_equal(one_row(t, "SELECT count(*) FROM queue_jobs j WHERE"
	    " attempts <> (SELECT count(*) FROM queue_attempts a"
	    " WHERE a.job = j.id)"), 0);
	assert_int_equal(one_row(t, "SELECT count(*) FROM queue_attempts a"
	    " JOIN queue_jobs j ON j.id = a.job WHERE (a.ended_ms = 0) <>"
	    " (j.status = 'running' AND a.n = j.attempts)"), 0);
	/* Past every lease: the drain takes the killed workers' jobs. */
	t->now = (int64_t)time(NULL) * 1000 + 10 * LEASE;
	while (queue_claim(t->q, "drain", LEASE, 0, &j) == 1) {
		assert_int_equal(queue_complete(t->q, j.id, j.attempts, "drain",
		    NULL), 0);
		queue_job_free(&j);
	}
	assert_int_equal(queue_counts(t->q, &c), 0);
	assert_int_equal(c.n[QUEUE_DONE], 300);
	assert_int_equal(one_row(t, "SELECT count(*) FROM queue_jobs j WHERE"
	    " (SELECT count(*) FROM queue_attempts a WHERE a.job = j.id AND"
	    " a.outcome = 'done') <> 1"), 0);
	assert_int_equal(one_row(t, "SELECT count(*) FROM queue_attempts"
	    " WHERE ended_ms = 0"), 0);
	fprintf(stderr, "attempts ended by an expired lease: %lld\n",
	    (long long)one_row(t, "SELECT count(*) FROM queue_attempts WHERE"
	    " outcome = 'lease expired'"));
}

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

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_two_processes, setup,
		    teardown),
		cmocka_unit_test_setup_teardown(test_max_running_shared,
		    setup, teardown),
		cmocka_unit_test_setup_teardown(test_open_together, setup,
		    teardown),
		cmocka_unit_test_setup_teardown(test_kill9, setup, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}

/*
 * The queue under two processes, as two `warren queue work` on one state
 * database: 1,000 jobs claimed and completed concurrently, each claimed
 * exactly once; and max_running held across both.
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
	while ((rc = queue_claim(q, name, LEASE, max_running, &j)) == 1) {
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
		while (read(res[i][0], &cl, sizeof(cl)) == sizeof(cl)) {
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
		assert_int_equal(waitpid(pid[i], &status, 0), pid[i]);
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
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}

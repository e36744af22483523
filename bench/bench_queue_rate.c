/*
 * bench_queue_rate: what the shared LLM gate costs a request (queue_rate
 * on SQLite, docs/queue.md "Shared limits"): the time of one TAKE, SPEND
 * and PAUSE, by 1 and 2 processes on one database, as two runs' engines
 * would ask before each request.
 *
 *   bench_queue_rate [-n CALLS] [-r REPEATS] [-d DIR]
 *
 * Each repeat makes a fresh database in DIR (default $TMPDIR or /tmp);
 * each process makes CALLS calls of one kind, on a clock that moves a
 * second a call, so that every TAKE is granted and writes the row (at
 * rpm 1,000,000 the wall clock would hold most of them, a cheaper read
 * only). The figure is the wall time per call over all
 * processes, median of REPEATS.
 */
#include <sys/types.h>
#include <sys/wait.h>

#include <err.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/clock.h"
#include "queue/queue.h"
#include "queue/queue_testapi.h"

#define EP	"http://127.0.0.1:1/v1"

static char	bench_dir[512];
static int	bench_seq;

/* A second a call: a TAKE is never held. */
static int64_t
bench_clock(void *arg)
{
	int64_t	*t = arg;

	return *t += 1000;
}

static void
bench_calls(const char *db, enum queue_rate_op op, int n)
{
	int64_t			 now = clock_wall_ms();
	struct queue		*q;
	struct queue_rate_req	 r = { op, 1000000, 1000000000, 1 };
	char			 err[QUEUE_ERR_MAX];
	uint64_t		 wait;
	int			 i;

	if ((q = queue_open(db, err, sizeof(err))) == NULL)
		errx(1, "%s", err);
	queue_set_clock(q, bench_clock, &now);
	for (i = 0; i < n; i++)
		if (queue_rate(q, EP, &r, &wait) == -1)
			errx(1, "%s", queue_errmsg(q));
	queue_close(q);
}

/* µs per call with nproc processes making n calls each. */
static double
bench_once(enum queue_rate_op op, int nproc, int n)
{
	char		 db[1024], cmd[1200];
	struct queue	*q;
	uint64_t	 t0, t;
	pid_t		 pid;
	int		 i, st;

	snprintf(db, sizeof(db), "%s/bench-rate-%ld-%d/warren.db", bench_dir,
	    (long)getpid(), bench_seq++);
	if ((q = queue_open(db, cmd, sizeof(cmd))) == NULL)
		errx(1, "%s", cmd);
	queue_close(q);
	t0 = clock_mono_ms();
	for (i = 0; i < nproc; i++) {
		if ((pid = fork()) == -1)
			err(1, "fork");
		if (pid == 0) {
			bench_calls(db, op, n);
			_exit(0);
		}
	}
	for (i = 0; i < nproc; i++)
		if (wait(&st) == -1 || !WIFEXITED(st) || WEXITSTATUS(st) != 0)
			errx(1, "a process failed");
	t = clock_mono_ms() - t0;
	*strrchr(db, '/') = '\0';
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", db);
	if (system(cmd) != 0)
		warnx("could not remove %s", db);
	return (double)t * 1000.0 / ((double)n * nproc);
}

static int
bench_cmp(const void *a, const void *b)
{
	double	x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

int
main(int argc, char **argv)
{
	static const char *const names[] = { "take", "spend", "pause" };
	const char	*tmp = getenv("TMPDIR");
	double		 v[99];
	int		 c, n = 5000, reps = 3, op, np, i;

	snprintf(bench_dir, sizeof(bench_dir), "%s", tmp ? tmp : "/tmp");
	while ((c = getopt(argc, argv, "n:r:d:")) != -1) {
		switch (c) {
		case 'n': n = atoi(optarg); break;
		case 'r': reps = atoi(optarg); break;
		case 'd': snprintf(bench_dir, sizeof(bench_dir), "%s", optarg);
			break;
		default:
			fprintf(stderr, "usage: bench_queue_rate [-n CALLS] "
			    "[-r REPEATS] [-d DIR]\n");
			return 2;
		}
	}
	if (n < 1 || reps < 1 || reps > 99)
		errx(2, "-n at least 1, -r from 1 to 99");
	printf("| call | processes | µs per call (median of %d) |\n", reps);
	printf("| --- | --- | --- |\n");
	for (op = 0; op < 3; op++)
		for (np = 1; np <= 2; np++) {
			for (i = 0; i < reps; i++)
				v[i] = bench_once((enum queue_rate_op)op, np, n);
			qsort(v, (size_t)reps, sizeof(v[0]), bench_cmp);
			printf("| %s | %d | %.1f |\n", names[op], np,
			    v[reps / 2]);
		}
	return 0;
}

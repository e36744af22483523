/*
 * bench_queue: claim and complete throughput of the queue alone (no run),
 * by processes sharing one database, as `warren queue work` processes
 * would: on SQLite, or on PostgreSQL with -u.
 *
 *   bench_queue [-n JOBS] [-r REPEATS] [-d DIR] [-p 1,2,...] [-u URL]
 *
 * -p lists the process counts (default 1,2; at most 16). -u URL: a
 * PostgreSQL server; each repeat has a schema of its own there, dropped
 * after (bench/bench_queue_pg.sh starts a server and passes it).
 * Each repeat makes a fresh database in DIR (default $TMPDIR or /tmp),
 * adds JOBS jobs (default 10,000; the add rate is reported too), then
 * starts the workers together; each claims (lease 60 s) and completes
 * until nothing is left. The figure is JOBS over the wall time from the
 * start to the last worker's exit, and the workers' CPU time per job.
 * 1 and 2 processes alternate; each figure is the median of REPEATS.
 */
#include <sys/resource.h>
#include <sys/types.h>
#include <sys/wait.h>

#include <err.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <libpq-fe.h>

#include "common/clock.h"
#include "queue/queue.h"
#include "queue/queue_testapi.h"

#define BENCH_MAXPROCS	16

static char	bench_dir[512];
static int	bench_seq;
static const char *bench_url;	/* PostgreSQL, or NULL: SQLite */
static char	bench_schema[64];

struct bench_fig {
	double	add_rate;	/* jobs added per second */
	double	rate;		/* claimed and completed per second */
	double	cpu_us;		/* workers' CPU per job */
};

static void
bench_quiet(void *arg, const char *msg)
{
	(void)arg;
	(void)msg;
}

static void
bench_pg(const char *sql)
{
	PGconn		*c = PQconnectdb(bench_url);
	PGresult	*r;

	PQsetNoticeProcessor(c, bench_quiet, NULL);
	if (PQstatus(c) != CONNECTION_OK)
		errx(1, "%s", PQerrorMessage(c));
	r = PQexec(c, sql);
	if (PQresultStatus(r) != PGRES_COMMAND_OK)
		errx(1, "%s: %s", sql, PQresultErrorMessage(r));
	PQclear(r);
	PQfinish(c);
}

static void
bench_db(char *out, size_t outsz)
{
	char	sql[128];

	if (bench_url != NULL) {
		snprintf(bench_schema, sizeof(bench_schema), "bq_%ld_%d",
		    (long)getpid(), bench_seq++);
		snprintf(sql, sizeof(sql), "CREATE SCHEMA %s", bench_schema);
		bench_pg(sql);
		snprintf(out, outsz, "%s%coptions=-csearch_path%%3D%s",
		    bench_url, strchr(bench_url, '?') != NULL ? '&' : '?',
		    bench_schema);
		return;
	}
	snprintf(out, outsz, "%s/bench-queue-%ld-%d/warren.db", bench_dir,
	    (long)getpid(), bench_seq++);
}

static void
bench_rm(const char *db)
{
	char	cmd[1200], dir[1024];
	char	*slash;

	if (bench_url != NULL) {
		snprintf(cmd, sizeof(cmd), "DROP SCHEMA %s CASCADE",
		    bench_schema);
		bench_pg(cmd);
		return;
	}
	snprintf(dir, sizeof(dir), "%s", db);
	if ((slash = strrchr(dir, '/')) != NULL)
		*slash = '\0';
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	if (system(cmd) != 0)
		warnx("could not remove %s", dir);
}

static double
bench_add(const char *db, long n)
{
	struct queue_job_new	 j = { .task = "a task of a batch",
	    .workspace = "/srv/work" };
	struct queue		*q;
	char			 err[QUEUE_ERR_MAX];
	uint64_t		 t0;
	int64_t			 id;
	long			 i;

	if ((q = queue_open(db, err, sizeof(err))) == NULL)
		errx(1, "%s", err);
	t0 = clock_mono_ns();
	for (i = 0; i < n; i++)
		if (queue_add(q, &j, &id, NULL) == -1)
			errx(1, "add: %s", queue_errmsg(q));
	queue_close(q);
	return (double)n / ((double)(clock_mono_ns() - t0) / 1e9);
}

/* One worker process: open, wait for the start, drain. */
static void
bench_worker(const char *db, int start, int k)
{
	struct queue_job	 j;
	struct queue		*q;
	char			 msg[QUEUE_ERR_MAX], name[32], go;
	int			 rc;

	snprintf(name, sizeof(name), "bench-%d", k);
	if ((q = queue_open(db, msg, sizeof(msg))) == NULL)
		errx(1, "%s", msg);
	if (read(start, &go, 1) != 0)
		errx(1, "start: the pipe is written to");
	while ((rc = queue_claim(q, name, 60000, 0, &j)) == 1) {
		if (queue_complete(q, j.id, j.attempts, name, NULL) != 0)
			errx(1, "complete %lld: %s", (long long)j.id,
			    queue_errmsg(q));
		queue_job_free(&j);
	}
	if (rc == -1)
		errx(1, "claim: %s", queue_errmsg(q));
	queue_close(q);
	_exit(0);
}

static double
bench_child_cpu_us(void)
{
	struct rusage	ru;

	getrusage(RUSAGE_CHILDREN, &ru);
	return (double)(ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) * 1e6 +
	    (double)(ru.ru_utime.tv_usec + ru.ru_stime.tv_usec);
}

static struct bench_fig
bench_one(long n, int nprocs)
{
	struct bench_fig	f;
	char			db[1024];
	uint64_t		t0;
	double			cpu0;
	pid_t			pid[BENCH_MAXPROCS];
	int			start[2], i, status;

	bench_db(db, sizeof(db));
	f.add_rate = bench_add(db, n);
	if (pipe(start) == -1)
		err(1, "pipe");
	cpu0 = bench_child_cpu_us();
	for (i = 0; i < nprocs; i++) {
		if ((pid[i] = fork()) == -1)
			err(1, "fork");
		if (pid[i] == 0) {
			close(start[1]);
			bench_worker(db, start[0], i);
		}
	}
	/* Let them open (and prepare) before the clock starts. */
	usleep(200000);
	t0 = clock_mono_ns();
	/* Closing the pipe starts them all (each reads its end of file). */
	close(start[1]);
	for (i = 0; i < nprocs; i++)
		if (waitpid(pid[i], &status, 0) != pid[i] ||
		    !WIFEXITED(status) || WEXITSTATUS(status) != 0)
			errx(1, "worker %d failed", i);
	f.rate = (double)n / ((double)(clock_mono_ns() - t0) / 1e9);
	f.cpu_us = (bench_child_cpu_us() - cpu0) / (double)n;
	close(start[0]);
	bench_rm(db);
	return f;
}

static int
bench_cmp(const void *a, const void *b)
{
	double	x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

static double
bench_median(double *v, int n)
{
	qsort(v, (size_t)n, sizeof(*v), bench_cmp);
	return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

int
main(int argc, char **argv)
{
	struct bench_fig	 f;
	const char		*errstr, *tmp;
	static double		 rate[BENCH_MAXPROCS][100],
				    cpu[BENCH_MAXPROCS][100], add[1600];
	long			 n = 10000;
	int			 reps = 3, ch, r, p, nadd = 0;
	int			 procs[BENCH_MAXPROCS] = { 1, 2 }, np = 2;
	char			*list, *w;

	tmp = getenv("TMPDIR");
	snprintf(bench_dir, sizeof(bench_dir), "%s", tmp != NULL && *tmp ?
	    tmp : "/tmp");
	while ((ch = getopt(argc, argv, "n:r:d:p:u:")) != -1) {
		switch (ch) {
		case 'u':
			bench_url = optarg;
			break;
		case 'p':
			np = 0;
			list = optarg;
			while ((w = strsep(&list, ",")) != NULL) {
				if (np == BENCH_MAXPROCS)
					errx(2, "-p: at most %d counts",
					    BENCH_MAXPROCS);
				procs[np++] = (int)strtonum(w, 1,
				    BENCH_MAXPROCS, &errstr);
				if (errstr != NULL)
					errx(2, "-p %s: %s", w, errstr);
			}
			break;
		case 'n':
			n = strtonum(optarg, 1, 10000000, &errstr);
			if (errstr != NULL)
				errx(2, "-n %s: %s", optarg, errstr);
			break;
		case 'r':
			reps = (int)strtonum(optarg, 1, 100, &errstr);
			if (errstr != NULL)
				errx(2, "-r %s: %s", optarg, errstr);
			break;
		case 'd':
			snprintf(bench_dir, sizeof(bench_dir), "%s", optarg);
			break;
		default:
			fprintf(stderr, "usage: bench_queue [-n JOBS]"
			    " [-r REPEATS] [-d DIR] [-p 1,2,...] [-u URL]\n");
			return 2;
		}
	}
	for (r = 0; r < reps; r++)
		for (p = 0; p < np; p++) {
			f = bench_one(n, procs[p]);
			rate[p][r] = f.rate;
			cpu[p][r] = f.cpu_us;
			add[nadd++] = f.add_rate;
		}
	if (bench_url != NULL)
		printf("jobs %ld, repeats %d, PostgreSQL (a schema each)\n", n,
		    reps);
	else
		printf("jobs %ld, repeats %d, SQLite %s, in %s\n", n, reps,
		    "(WAL, synchronous=NORMAL)", bench_dir);
	printf("add: %.0f jobs/s (one process, a transaction each)\n",
	    bench_median(add, nadd));
	for (p = 0; p < np; p++)
		printf("claim+complete, %d process%s: %.0f jobs/s, %.1f us"
		    " CPU/job (the workers' only)\n", procs[p],
		    procs[p] > 1 ? "es" : "", bench_median(rate[p], reps),
		    bench_median(cpu[p], reps));
	return 0;
}

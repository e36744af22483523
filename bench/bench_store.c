/*
 * bench_store: how fast the store takes a run's writes, and how long a
 * deep node's context takes to assemble.
 *
 *   bench_store [-n NODES] [-m MESSAGES] [-r REPEATS] [-d DIR] [-w]
 *
 * -w: every measure through the store's writer thread (store_writer.c),
 * as `warren run` writes: from the first write queued to store_sync()
 * returning (everything committed); the context is then a read that goes
 * through the queue.
 *
 * 1. agent nodes/s: store_agent_add (agent row + memory node + edge from
 *    its parent), batched (default cap), a wide tree of depth <= 3;
 * 2. messages/s: store_msg_append of a realistic mix (1 in 3 an assistant
 *    message with a tool call and usage, 1 in 3 a tool result, 1 in 3
 *    user text; 200-byte texts), at batch caps 1, 64 and the default;
 * 3. merge nodes/s: store_node_merge with 3 parents each;
 * 3b. -w only: messages one at a time, 1 ms apart, as a run writes them
 *    (a turn, a tool result): the CPU per message, the writer's commits
 *    included;
 * 4. context: store_context of a node 10 levels deep with 100 summarised
 *    ancestors (plus the unsummarised root)
 *    (10 levels of 10 nodes, each node a child of every node of the
 *    level above), each ancestor with a 500-byte summary, the node with 50
 *    messages of its own.
 * Each figure is the median of REPEATS runs on a fresh file in DIR
 * (default $TMPDIR or /tmp), WAL, synchronous=NORMAL.
 */
#include <sys/stat.h>

#include <err.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "common/clock.h"
#include "common/msg.h"
#include "store/store.h"
#include "store/store_testapi.h"

static char	 bench_dir[512];
static int	 bench_seq;
static int	 bench_writer;	/* -w: writes through the writer thread */

/* Rates by wall clock and by this process's CPU time: the machine may be
 * shared, and the CPU figure is what the store itself costs. */
struct bench_rate {
	double	wall;
	double	cpu;
};

struct bench_clock {
	uint64_t	wall;
	uint64_t	cpu;
};

static uint64_t
bench_cpu_ns(void)
{
	struct timespec	ts;

	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static void
bench_start(struct bench_clock *c)
{
	c->wall = clock_mono_ns();
	c->cpu = bench_cpu_ns();
}

static struct bench_rate
bench_stop(const struct bench_clock *c, double n)
{
	struct bench_rate	r;

	r.wall = n / ((double)(clock_mono_ns() - c->wall) / 1e9);
	r.cpu = n / ((double)(bench_cpu_ns() - c->cpu) / 1e9);
	return r;
}

static int
bench_cmp(const void *a, const void *b)
{
	double	x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

static double
bench_median(double *v, int n)
{
	qsort(v, (size_t)n, sizeof(*v), bench_cmp);
	return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

/* A fresh database with one run and its root agent. */
static struct store *
bench_open(int64_t *run, int64_t *root)
{
	struct store_run_params	 p = { .task = "bench" };
	struct store_agent_new	 a = { .path = "0", .task = "root" };
	struct store		*st;
	char			 path[600], e[STORE_ERRMSG_MAX];

	snprintf(path, sizeof(path), "%s/bench-%d-%d.db", bench_dir,
	    (int)getpid(), bench_seq++);
	if ((st = store_open(path, STORE_CREATE, e, sizeof(e))) == NULL)
		errx(1, "%s", e);
	if (store_run_begin(st, &p, run) == -1 ||
	    store_agent_add(st, *run, &a, NULL, root) == -1 ||
	    store_flush(st) == -1)
		errx(1, "%s", store_errmsg(st));
	return st;
}

static void
bench_close(struct store *st)
{
	char	path[600], side[640];

	snprintf(path, sizeof(path), "%s", store_filename(st));
	store_close(st);
	unlink(path);
	snprintf(side, sizeof(side), "%s-wal", path);
	unlink(side);
	snprintf(side, sizeof(side), "%s-shm", path);
	unlink(side);
}

static void
bench_check(struct store *st, int rc)
{
	if (rc == -1)
		errx(1, "%s", store_lost(st) ? store_lost(st) :
		    store_errmsg(st));
}

/* -w: from here on the writes go through the writer thread. */
static void
bench_go(struct store *st, struct bench_clock *c)
{
	if (bench_writer)
		bench_check(st, store_writer_start(st));
	if (c != NULL)
		bench_start(c);
}

/* Agents 0.1 .. 0.K, then 0.i.j, then 0.i.j.k: a wide tree. */
static struct bench_rate
bench_agents(long n)
{
	struct store		*st;
	struct store_agent_new	 a = { .profile = "explore",
	    .task = "explore the code base and report what you find" };
	char			 path[64];
	int64_t			 run, root, id, node;
	struct bench_clock	 c;
	struct bench_rate	 rate;
	long			 i, width = 100;

	st = bench_open(&run, &root);
	bench_go(st, &c);
	for (i = 0; i < n; i++) {
		if (i < width)
			snprintf(path, sizeof(path), "0.%ld", i + 1);
		else if (i < width + width * width)
			snprintf(path, sizeof(path), "0.%ld.%ld",
			    (i - width) / width + 1, (i - width) % width + 1);
		else
			snprintf(path, sizeof(path), "0.%ld.%ld.%ld",
			    (i - width - width * width) / width / width + 1,
			    (i - width - width * width) / width % width + 1,
			    (i - width - width * width) % width + 1);
		a.path = path;
		bench_check(st, store_agent_add(st, run, &a, &id, &node));
	}
	bench_check(st, store_sync(st));
	rate = bench_stop(&c, (double)n);
	bench_close(st);
	return rate;
}

static struct bench_rate
bench_messages(long n, size_t batch)
{
	struct store		*st;
	struct msg		 m[3];
	struct msg_usage	 u = { 1200, 80 };
	char			 text[201];
	int64_t			 run, root, nodes[8];
	struct bench_clock	 c;
	struct bench_rate	 rate;
	long			 i;
	int			 k;

	st = bench_open(&run, &root);
	memset(text, 'x', 200);
	text[200] = '\0';
	memset(m, 0, sizeof(m));
	m[0].role = MSG_ASSISTANT;
	m[0].text = text;
	msg_add_call(&m[0], "call_0001", "grep",
	    "{\"pattern\":\"store_flush\",\"path\":\"supervisor\"}");
	m[1].role = MSG_TOOL;
	m[1].text = text;
	m[1].call_id = (char *)"call_0001";
	m[1].name = (char *)"grep";
	m[2].role = MSG_USER;
	m[2].text = text;
	for (k = 0; k < 8; k++) {
		struct store_agent_new	a = { .task = "t" };
		char			path[16];

		snprintf(path, sizeof(path), "0.%d", k + 1);
		a.path = path;
		bench_check(st, store_agent_add(st, run, &a, NULL, &nodes[k]));
	}
	bench_check(st, store_flush(st));
	store_set_batch_max(st, batch);
	bench_go(st, &c);
	for (i = 0; i < n; i++)
		bench_check(st, store_msg_append(st, nodes[i % 8], &m[i % 3],
		    i % 3 == 0 ? &u : NULL));
	bench_check(st, store_sync(st));
	rate = bench_stop(&c, (double)n);
	free(m[0].calls[0].id);
	free(m[0].calls[0].name);
	free(m[0].calls[0].args);
	free(m[0].calls);
	bench_close(st);
	return rate;
}

/* The bench_messages mix, but one message at a time, 1 ms apart: what a
 * run's turns and tool results cost the store, commits included. */
static struct bench_rate
bench_trickle(long n)
{
	struct store		*st;
	struct msg		 m = { .role = MSG_USER };
	struct timespec		 gap = { 0, 1000 * 1000 };
	char			 text[201];
	int64_t			 run, root;
	struct bench_clock	 c;
	struct bench_rate	 rate;
	long			 i;

	st = bench_open(&run, &root);
	memset(text, 'x', 200);
	text[200] = '\0';
	m.text = text;
	bench_go(st, &c);
	for (i = 0; i < n; i++) {
		bench_check(st, store_msg_append(st, root, &m, NULL));
		nanosleep(&gap, NULL);
	}
	bench_check(st, store_sync(st));
	rate = bench_stop(&c, (double)n);
	bench_close(st);
	return rate;
}

static struct bench_rate
bench_merges(long n)
{
	struct store		*st;
	struct store_agent_new	 a = { .task = "t" };
	int64_t			 run, root, kids[64], parents[3], node;
	struct bench_clock	 c;
	struct bench_rate	 rate;
	char			 path[16];
	long			 i;

	st = bench_open(&run, &root);
	for (i = 0; i < 64; i++) {
		snprintf(path, sizeof(path), "0.%ld", i + 1);
		a.path = path;
		bench_check(st, store_agent_add(st, run, &a, NULL, &kids[i]));
	}
	bench_check(st, store_flush(st));
	bench_go(st, &c);
	for (i = 0; i < n; i++) {
		parents[0] = kids[i % 64];
		parents[1] = kids[(i + 1) % 64];
		parents[2] = kids[(i + 2) % 64];
		bench_check(st, store_node_merge(st, run, parents, 3, "merge",
		    &node));
	}
	bench_check(st, store_sync(st));
	rate = bench_stop(&c, (double)n);
	bench_close(st);
	return rate;
}

/* Median microseconds of store_context on the deep node. */
static double
bench_context(int reps, size_t *nctx, double *cpu_us)
{
	struct store		*st;
	struct store_agent_new	 a = { .task = "level task" };
	struct msg_list		 l;
	struct msg		 m = { .role = MSG_USER };
	char			 summary[501], path[16];
	int64_t			 run, root, level[10][10], target, node;
	double			*t, *cpu, wall;
	uint64_t		 t0, c0;
	int			 i, j, k, r;


	st = bench_open(&run, &root);
	memset(summary, 's', 500);
	summary[500] = '\0';
	m.text = summary;
	/* Level 0 hangs under the root's agents; merges build the rest. */
	for (j = 0; j < 10; j++) {
		snprintf(path, sizeof(path), "0.%d", j + 1);
		a.path = path;
		bench_check(st, store_agent_add(st, run, &a, NULL, &level[0][j]));
	}
	for (i = 1; i < 10; i++)
		for (j = 0; j < 10; j++)
			bench_check(st, store_node_merge(st, run, level[i - 1],
			    10, "level", &level[i][j]));
	for (i = 0; i < 10; i++)
		for (j = 0; j < 10; j++)
			bench_check(st, store_node_set_summary(st, level[i][j],
			    summary, STORE_SUMMARY_LLM, NULL));
	bench_check(st, store_node_merge(st, run, level[9], 10, "target",
	    &target));
	for (k = 0; k < 50; k++)
		bench_check(st, store_msg_append(st, target, &m, NULL));
	bench_check(st, store_flush(st));
	bench_go(st, NULL);
	(void)node;
	if ((t = calloc((size_t)reps, sizeof(*t))) == NULL ||
	    (cpu = calloc((size_t)reps, sizeof(*cpu))) == NULL)
		err(1, NULL);
	for (r = 0; r < reps; r++) {
		msg_list_init(&l);
		t0 = clock_mono_ns();
		c0 = bench_cpu_ns();
		bench_check(st, store_context(st, target, 0, &l));
		cpu[r] = (double)(bench_cpu_ns() - c0) / 1e3;
		t[r] = (double)(clock_mono_ns() - t0) / 1e3;
		*nctx = l.n;
		msg_list_free(&l);
	}
	bench_close(st);
	*cpu_us = bench_median(cpu, reps);
	free(cpu);
	wall = bench_median(t, reps);
	free(t);
	return wall;
}

int
main(int argc, char **argv)
{
	const char	*errstr, *tmp;
	double		*v, *w, ctx, ctxcpu;
	struct bench_rate rt;
	long		 nodes = 100000, msgs = 200000;
	int		 reps = 5, ch, r;
	size_t		 nctx = 0, caps[3] = { 1, 64, STORE_DEFAULT_BATCH_MAX };
	size_t		 c;

	tmp = getenv("TMPDIR");
	snprintf(bench_dir, sizeof(bench_dir), "%s", tmp != NULL && *tmp ?
	    tmp : "/tmp");
	while ((ch = getopt(argc, argv, "n:m:r:d:w")) != -1) {
		switch (ch) {
		case 'w':
			bench_writer = 1;
			break;
		case 'n':
			nodes = strtonum(optarg, 1, 10000000, &errstr);
			if (errstr != NULL)
				errx(2, "-n %s: %s", optarg, errstr);
			break;
		case 'm':
			msgs = strtonum(optarg, 1, 100000000, &errstr);
			if (errstr != NULL)
				errx(2, "-m %s: %s", optarg, errstr);
			break;
		case 'r':
			reps = (int)strtonum(optarg, 1, 1000, &errstr);
			if (errstr != NULL)
				errx(2, "-r %s: %s", optarg, errstr);
			break;
		case 'd':
			snprintf(bench_dir, sizeof(bench_dir), "%s", optarg);
			break;
		default:
			fprintf(stderr, "usage: bench_store [-n NODES]"
			    " [-m MESSAGES] [-r REPEATS] [-d DIR] [-w]\n");
			return 2;
		}
	}
	if ((v = calloc((size_t)reps, sizeof(*v))) == NULL ||
	    (w = calloc((size_t)reps, sizeof(*w))) == NULL)
		err(1, NULL);
	printf("bench_store: %ld nodes, %ld messages, %d repeats, medians,"
	    " files in %s\n", nodes, msgs, reps, bench_dir);
	printf("%-44s %12s %12s\n", "", "per s (wall)", "per s (cpu)");
	for (r = 0; r < reps; r++) {
		rt = bench_agents(nodes);
		v[r] = rt.wall;
		w[r] = rt.cpu;
	}
	printf("%-44s %12.0f %12.0f\n", "agent nodes (agent+node+edge), batched",
	    bench_median(v, reps), bench_median(w, reps));
	for (r = 0; r < reps; r++) {
		rt = bench_merges(nodes);
		v[r] = rt.wall;
		w[r] = rt.cpu;
	}
	printf("%-44s %12.0f %12.0f\n", "merge nodes (3 parents each), batched",
	    bench_median(v, reps), bench_median(w, reps));
	for (c = 0; c < 3; c++) {
		long	n = caps[c] == 1 ? msgs / 50 : msgs;

		char	label[64];

		for (r = 0; r < reps; r++) {
			rt = bench_messages(n, caps[c]);
			v[r] = rt.wall;
			w[r] = rt.cpu;
		}
		snprintf(label, sizeof(label), "messages, batch cap %zu (%ld msgs)",
		    caps[c], n);
		printf("%-44s %12.0f %12.0f\n", label, bench_median(v, reps),
		    bench_median(w, reps));
	}
	for (r = 0; bench_writer && r < reps; r++) {
		rt = bench_trickle(2000);
		v[r] = 1e6 / rt.wall;
		w[r] = 1e6 / rt.cpu;
	}
	if (bench_writer)
		printf("messages one at a time, 1 ms apart: %.1f us cpu a"
		    " message (%.0f us wall)\n", bench_median(w, reps),
		    bench_median(v, reps));
	ctx = bench_context(200, &nctx, &ctxcpu);
	printf("context of a node 10 levels deep, 100 summarised ancestors,"
	    " 50 own messages:\n  %.0f us wall, %.0f us cpu (median of 200;"
	    " %zu messages out)\n", ctx, ctxcpu, nctx);
	free(v);
	free(w);
	return 0;
}

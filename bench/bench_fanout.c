/*
 * bench_fanout: N explore subagents at once against an LLM that takes
 * DELAY ms a turn (tests/llm/fakellm.c), next to one subagent: the wall
 * time of `warren run` with the defaults of --jobs and llm_concurrency
 * (nothing set), and with the defaults before issue 33 (--jobs 16
 * --llm-concurrency 32), as a ratio to the one-agent run. The
 * orchestrator delegates all N in one turn; each does TURNS turns (glob
 * calls, then complete). Rounds are interleaved; medians are printed.
 *
 *	bench_fanout [N [TURNS [DELAY_MS [ROUNDS]]]]	(64 3 200 3)
 *
 * Run from the build directory, or set WARREN_BIN, WARREN_WORKER_BIN and
 * WARREN_FAKELLM_BIN.
 */
#include <sys/stat.h>
#include <sys/wait.h>

#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/clock.h"

#define MAX_N		64	/* calls the agent core takes in one turn */
#define MAX_ROUNDS	15

static const char	*warren_bin, *fake_bin;

static const char *
env_or(const char *name, const char *dflt)
{
	const char	*v = getenv(name);

	return v != NULL && *v != '\0' ? v : dflt;
}

static FILE *
open_or_die(const char *path, const char *mode)
{
	FILE	*f;

	if ((f = fopen(path, mode)) == NULL) {
		perror(path);
		exit(1);
	}
	return f;
}

/* One response: after delay ms, the calls in calls (a JSON array). */
static void
resp(FILE *f, int delay, const char *calls)
{
	fprintf(f, "[{\"delay_ms\": %d, \"reply\": {\"calls\": %s}}]", delay,
	    calls);
}

/*
 * The script: the root's last turn, each turn of a kid (the highest
 * first: a later turn's request holds every earlier call id), a kid's
 * first turn, and the root's first turn for the one-agent and the
 * N-agent task.
 */
static void
script(const char *path, int n, int turns, int delay)
{
	FILE	*f = open_or_die(path, "w");
	char	 calls[256];
	int	 k, i;

	fputs("{\"rules\": [\n{\"match\": [\"FANOUT-\", \"KIDS-DONE\"], "
	    "\"repeat\": true, \"responses\": ", f);
	resp(f, delay, "[{\"id\": \"end\", \"name\": \"complete\", "
	    "\"arguments\": {\"result\": \"ALL\"}}]");
	fputs("},\n", f);
	for (k = turns; k >= 1; k--) {
		if (k == turns)
			snprintf(calls, sizeof(calls), "[{\"id\": \"c\", "
			    "\"name\": \"complete\", \"arguments\": "
			    "{\"result\": \"KIDS-DONE\"}}]");
		else
			snprintf(calls, sizeof(calls), "[{\"id\": \"call_g%d\", "
			    "\"name\": \"glob\", \"arguments\": {\"pattern\": "
			    "\"%d*\"}}]", k, k);
		if (k > 1)
			fprintf(f, "{\"match\": [\"KID-\", \"call_g%d\"], ",
			    k - 1);
		else
			fputs("{\"match\": \"KID-\", ", f);
		fputs("\"repeat\": true, \"responses\": ", f);
		resp(f, delay, calls);
		fputs("},\n", f);
	}
	fputs("{\"match\": \"FANOUT-ONE\", \"repeat\": true, \"responses\": "
	    "[{\"delay_ms\": 0, \"reply\": {\"calls\": [{\"id\": \"d1\", "
	    "\"name\": \"delegate\", \"arguments\": {\"profile\": "
	    "\"explore\", \"task\": \"KID-1\"}}]}}]},\n", f);
	fputs("{\"match\": \"FANOUT-MANY\", \"repeat\": true, \"responses\": "
	    "[{\"delay_ms\": 0, \"reply\": {\"calls\": [", f);
	for (i = 1; i <= n; i++)
		fprintf(f, "%s{\"id\": \"d%d\", \"name\": \"delegate\", "
		    "\"arguments\": {\"profile\": \"explore\", \"task\": "
		    "\"KID-%d\"}}", i > 1 ? ", " : "", i, i);
	fputs("]}}]}\n]}\n", f);
	fclose(f);
}

/* fakellm on an ephemeral port; its pid, and url filled. */
static pid_t
fake_start(const char *dir, char *url, size_t len)
{
	char	 spath[PATH_MAX], port[PATH_MAX], line[64] = "";
	FILE	*f;
	pid_t	 pid;
	int	 i;

	snprintf(spath, sizeof(spath), "%s/script.json", dir);
	snprintf(port, sizeof(port), "%s/port", dir);
	if ((pid = fork()) == 0) {
		execl(fake_bin, "fakellm", "--script", spath, "--port-file",
		    port, (char *)NULL);
		_exit(127);
	}
	/* The port file, up to 10 s. */
	for (i = 0; i < 1000 && line[0] == '\0'; i++) {
		if ((f = fopen(port, "r")) != NULL) {
			if (fgets(line, sizeof(line), f) == NULL)
				line[0] = '\0';
			fclose(f);
		}
		if (line[0] == '\0')
			usleep(10000);
	}
	line[strcspn(line, "\n")] = '\0';
	if (line[0] == '\0') {
		fprintf(stderr, "bench_fanout: fakellm (%s) wrote no port in "
		    "10 s\n", fake_bin);
		kill(pid, SIGKILL);
		exit(1);
	}
	snprintf(url, len, "WARREN_BASE_URL=http://127.0.0.1:%s/v1", line);
	return pid;
}

/* One run; its wall time in seconds, or -1 if it failed. */
static double
run(const char *dir, const char *url, const char *task, int n,
    const char *jobs, const char *llm)
{
	char	 ws[PATH_MAX], db[PATH_MAX + 16], st[PATH_MAX + 32];
	char	 errp[PATH_MAX], nag[16];
	char	*argv[16], *envp[8];
	uint64_t t0;
	pid_t	 pid;
	int	 i = 0, status, fd;

	snprintf(ws, sizeof(ws), "%s/ws", dir);
	snprintf(db, sizeof(db), "WARREN_DB=%s/w.db", dir);
	snprintf(st, sizeof(st), "XDG_STATE_HOME=%s/state", dir);
	snprintf(errp, sizeof(errp), "%s/stderr", dir);
	snprintf(nag, sizeof(nag), "%d", n);
	argv[i++] = "warren";
	argv[i++] = "run";
	argv[i++] = "--json";
	argv[i++] = "--in-place";
	argv[i++] = "--workspace";
	argv[i++] = ws;
	argv[i++] = "--max-agents";
	argv[i++] = nag;
	if (jobs != NULL) {
		argv[i++] = "--jobs";
		argv[i++] = (char *)(uintptr_t)jobs;
		argv[i++] = "--llm-concurrency";
		argv[i++] = (char *)(uintptr_t)llm;
	}
	argv[i++] = (char *)(uintptr_t)task;
	argv[i] = NULL;
	envp[0] = (char *)(uintptr_t)url;
	envp[1] = db;
	envp[2] = st;
	envp[3] = "WARREN_API_KEY=k";
	envp[4] = "WARREN_MODEL=fake";
	envp[5] = "WARREN_RETRIES=0";
	envp[6] = NULL;
	t0 = clock_mono_ns();
	if ((pid = fork()) == 0) {
		if ((fd = open("/dev/null", O_WRONLY)) != -1)
			dup2(fd, 1);
		if ((fd = open(errp, O_WRONLY | O_CREAT | O_TRUNC, 0644)) != -1)
			dup2(fd, 2);
		setenv("WARREN_WORKER_BIN", getenv("WARREN_WORKER_BIN"), 1);
		execve(warren_bin, argv, envp);
		_exit(127);
	}
	if (pid == -1 || waitpid(pid, &status, 0) != pid ||
	    !WIFEXITED(status) || WEXITSTATUS(status) != 0) {
		fprintf(stderr, "bench_fanout: %s with %d agents failed: see "
		    "%s\n", task, n, errp);
		return -1;
	}
	return (clock_mono_ns() - t0) / 1e9;
}

static int
cmp_double(const void *a, const void *b)
{
	double	 x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

static double
median(double *v, int n)
{
	qsort(v, (size_t)n, sizeof(v[0]), cmp_double);
	return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

int
main(int argc, char **argv)
{
	int	 n = argc > 1 ? atoi(argv[1]) : 64;
	int	 turns = argc > 2 ? atoi(argv[2]) : 3;
	int	 delay = argc > 3 ? atoi(argv[3]) : 200;
	int	 rounds = argc > 4 ? atoi(argv[4]) : 3;
	double	 one[MAX_ROUNDS], many[MAX_ROUNDS], old[MAX_ROUNDS];
	double	 m1, mn, mo;
	char	 dir[] = "/tmp/bench-fanout.XXXXXX", path[PATH_MAX + 16];
	char	 url[128];
	pid_t	 fake;
	int	 r, ok = 1;

	if (n < 1 || n > MAX_N || turns < 1 || delay < 0 || rounds < 1 ||
	    rounds > MAX_ROUNDS) {
		fprintf(stderr, "usage: bench_fanout [N (1-%d) [TURNS "
		    "[DELAY_MS [ROUNDS (1-%d)]]]]\n", MAX_N, MAX_ROUNDS);
		return 2;
	}
	warren_bin = env_or("WARREN_BIN", "./cli/warren");
	fake_bin = env_or("WARREN_FAKELLM_BIN", "./tests/llm/fakellm");
	setenv("WARREN_WORKER_BIN", env_or("WARREN_WORKER_BIN",
	    "./worker/warren-worker"), 1);
	if (mkdtemp(dir) == NULL) {
		perror(dir);
		return 1;
	}
	snprintf(path, sizeof(path), "%s/ws", dir);
	mkdir(path, 0755);
	snprintf(path, sizeof(path), "%s/script.json", dir);
	script(path, n, turns, delay);
	fake = fake_start(dir, url, sizeof(url));
	for (r = 0; r < rounds && ok; r++) {
		one[r] = run(dir, url, "FANOUT-ONE", 1, NULL, NULL);
		many[r] = run(dir, url, "FANOUT-MANY", n, NULL, NULL);
		old[r] = run(dir, url, "FANOUT-MANY", n, "16", "32");
		ok = one[r] > 0 && many[r] > 0 && old[r] > 0;
		if (ok)
			printf("round %d: one %.3f s, %d agents %.3f s, with "
			    "--jobs 16 --llm-concurrency 32 %.3f s\n", r + 1,
			    one[r], n, many[r], old[r]);
	}
	kill(fake, SIGTERM);
	waitpid(fake, NULL, 0);
	if (!ok)
		return 1;
	m1 = median(one, rounds);
	mn = median(many, rounds);
	mo = median(old, rounds);
	printf("%d agents x %d turns of %d ms, medians of %d rounds: one "
	    "agent %.3f s; %d agents %.3f s (%.2f x one) with the defaults, "
	    "%.3f s (%.2f x one) with --jobs 16 --llm-concurrency 32\n", n,
	    turns, delay, rounds, m1, n, mn, mn / m1, mo, mo / m1);
	snprintf(path, sizeof(path), "rm -rf %s", dir);
	if (system(path) != 0)
		fprintf(stderr, "bench_fanout: could not remove %s\n", dir);
	return 0;
}

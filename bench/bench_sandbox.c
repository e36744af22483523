/*
 * bench_sandbox: the cost of each sandbox layer, measured in-process.
 *
 * Every figure is the median over N runs of fork + LAYER + _exit (or exec
 * of /bin/true), minus nothing: the first row is the floor to subtract.
 * Then the per-syscall overhead of the seccomp filter: a getppid() loop
 * without and with the general profile's filter. Run by
 * scripts/bench-sandbox.sh next to hyperfine's end-to-end comparison.
 *
 *	bench_sandbox [RUNS]
 */
#include <sys/types.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>

#include <linux/filter.h>
#include <linux/seccomp.h>

#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "agent/profile.h"
#include "sandbox/sandbox.h"
#include "sandbox/sandbox_int.h"
#include "sandbox/sandbox_testapi.h"

#define GETPPID_LOOPS	1000000

static struct sandbox_policy	 pol_explore, pol_general;

static double
now_us(void)
{
	struct timespec	 ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e6 + ts.tv_nsec / 1e3;
}

static int
cmp_double(const void *a, const void *b)
{
	double	 x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

static int
l_none(void)
{
	return 0;
}

static int
l_exec_true(void)
{
	execl("/bin/true", "true", (char *)NULL);
	return 1;
}

static int
l_rlimits(void)
{
	char			 note[64] = "";
	struct sandbox_error	 e;

	return sandbox_rlimit_apply(&pol_general.limits, 0, note, sizeof(note),
	    &e);
}

static int
l_caps(void)
{
	struct sandbox_error	 e;

	return sandbox_caps_drop(&e);
}

static int
l_nnp(void)
{
	return prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) |
	    prctl(PR_SET_DUMPABLE, 0, 0, 0, 0);
}

static int
l_landlock(void)
{
	struct sandbox_error	 e;
	int			 abi;

	return sandbox_landlock_apply(&pol_general, &abi, &e);
}

/* What each process paid before the programs were compiled at build time. */
static int
l_seccomp_build(void)
{
	struct sandbox_error	 e;
	struct sock_fprog	 prog;

	prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0);
	if (sandbox_seccomp_compile(&pol_general, 0, &prog, &e) == -1)
		return -1;
	return prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &prog, 0, 0);
}

static int
l_seccomp_table(void)
{
	struct sandbox_error	 e;
	int			 nfd;

	prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0);
	return sandbox_seccomp_apply(&pol_general, 0, &nfd, &e);
}

static int
l_mounts(void)
{
	struct sandbox_error	 e;

	return sandbox_ns_mounts(&pol_general, 0, 0, &e);
}

struct layer {
	const char	*name;
	int		 cloneflags;
	int		(*fn)(void);
};

static const struct layer layers[] = {
	{ "fork + _exit (floor)", 0, l_none },
	{ "fork + exec /bin/true", 0, l_exec_true },
	{ "rlimits", 0, l_rlimits },
	{ "caps drop", 0, l_caps },
	{ "nnp + nodump", 0, l_nnp },
	{ "landlock (general)", 0, l_landlock },
	{ "seccomp, libseccomp build + load", 0, l_seccomp_build },
	{ "seccomp, build-time program load", 0, l_seccomp_table },
	{ "clone NEWNS", CLONE_NEWNS, l_none },
	{ "clone NEWNS + mounts (tmp, shm, git)", CLONE_NEWNS, l_mounts },
	{ "clone NEWPID", CLONE_NEWPID, l_none },
	{ "clone NEWIPC|NEWUTS", CLONE_NEWIPC | CLONE_NEWUTS, l_none },
	{ "clone NEWNET", CLONE_NEWNET, l_none },
	{ "clone NEWNS|PID|IPC|UTS (no net)", CLONE_NEWNS | CLONE_NEWPID |
	    CLONE_NEWIPC | CLONE_NEWUTS, l_none },
};

/* One fork + layer + _exit; microseconds, or -1. */
static double
run_layer_once(const struct layer *l)
{
	double	 t0;
	pid_t	 pid;
	int	 status, flags = l->cloneflags;

	if (geteuid() != 0 && flags != 0)
		flags |= CLONE_NEWUSER;
	t0 = now_us();
	if ((pid = sandbox_ns_clone(flags)) == -1)
		return -1;
	if (pid == 0)
		_exit(l->fn() == 0 ? 0 : 1);
	if (waitpid(pid, &status, 0) == -1 || !WIFEXITED(status) ||
	    WEXITSTATUS(status) != 0)
		return -1;
	return now_us() - t0;
}

static double
median(double *t, int n)
{
	qsort(t, (size_t)n, sizeof(*t), cmp_double);
	return t[n / 2];
}

/* Whole phase 1 + exec as the supervisor runs it: prepare, fork, child. */
static double
run_spawn_once(const struct sandbox_policy *p, unsigned want)
{
	struct sandbox_policy	 q;
	struct sandbox_error	 e;
	struct sandbox		 sb;
	double			 t0;
	pid_t			 pid;
	int			 status;

	memcpy(&q, p, sizeof(q));
	q.want = want;
	q.allow_weaker = 1;
	t0 = now_us();
	if (sandbox_prepare(&sb, &q, &e) == -1 ||
	    (pid = sandbox_fork(&sb, &e)) == -1) {
		fprintf(stderr, "spawn: %s\n", e.msg);
		return -1;
	}
	if (pid == 0) {
		if (sandbox_child(&sb, NULL, 0, &e) == -1)
			_exit(1);
		execl("/bin/true", "true", (char *)NULL);
		_exit(1);
	}
	waitpid(pid, &status, 0);
	sandbox_release(&sb);
	return now_us() - t0;
}

static double
getppid_loop(void)
{
	double	 t0;
	int	 i;

	t0 = now_us();
	for (i = 0; i < GETPPID_LOOPS; i++)
		syscall(SYS_getppid);
	return (now_us() - t0) * 1000.0 / GETPPID_LOOPS;
}

static const struct {
	const char	*name;
	unsigned	 want;
} spawns[] = {
	{ "phase 1, no pids, no namespaces", SANDBOX_RLIMITS | SANDBOX_SETSID |
	    SANDBOX_CLOSEFDS },
	{ "phase 1 + pids cgroup, no namespaces",
	    SANDBOX_ALL & ~SANDBOX_NAMESPACES },
	{ "phase 1, namespaces but net", SANDBOX_ALL & ~SANDBOX_NETNS },
	{ "phase 1, all", SANDBOX_ALL },
};
#define NLAYERS (sizeof(layers) / sizeof(layers[0]))
#define NSPAWNS (sizeof(spawns) / sizeof(spawns[0]))

/* The getppid loop in a child, with or without the filter: ns/call. */
static double
getppid_child(int filtered)
{
	struct sandbox_error	 e;
	double			 v = -1;
	pid_t			 pid;
	int			 pfd[2], nfd;

	if (pipe(pfd) == -1 || (pid = fork()) == -1)
		return -1;
	if (pid == 0) {
		if (filtered) {
			prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0);
			if (sandbox_seccomp_apply(&pol_general, 0, &nfd,
			    &e) == -1)
				_exit(1);
		}
		v = getppid_loop();
		if (write(pfd[1], &v, sizeof(v)) != sizeof(v))
			_exit(1);
		_exit(0);
	}
	close(pfd[1]);
	if (read(pfd[0], &v, sizeof(v)) != sizeof(v))
		v = -1;
	close(pfd[0]);
	waitpid(pid, NULL, 0);
	return v;
}

int
main(int argc, char **argv)
{
	struct sandbox_error	 e;
	struct sock_fprog	 general;
	double			*t[NLAYERS + NSPAWNS], bare = 1e9, filt = 1e9,
				 v, floor_us;
	size_t			 i;
	int			 runs = argc > 1 ? atoi(argv[1]) : 200, r,
				 bad[NLAYERS + NSPAWNS];

	if (runs < 10)
		runs = 10;
	if (profile_policy(&pol_explore, "explore", ".", &e) == -1 ||
	    profile_policy(&pol_general, "general", ".", &e) == -1) {
		fprintf(stderr, "bench_sandbox: %s\n", e.msg);
		return 1;
	}
	memset(bad, 0, sizeof(bad));
	for (i = 0; i < NLAYERS + NSPAWNS; i++)
		if ((t[i] = calloc((size_t)runs, sizeof(double))) == NULL)
			return 1;
	/* Round robin, so a load change hits every row alike. */
	for (r = 0; r < runs; r++) {
		for (i = 0; i < NLAYERS; i++)
			if ((t[i][r] = run_layer_once(&layers[i])) < 0)
				bad[i] = 1;
		for (i = 0; i < NSPAWNS; i++)
			if ((t[NLAYERS + i][r] = run_spawn_once(&pol_general,
			    spawns[i].want)) < 0)
				bad[NLAYERS + i] = 1;
	}
	getloadavg(&v, 1);
	sandbox_seccomp_program(&pol_general, 0, &general);
	printf("bench_sandbox: median of %d interleaved runs, uid %u, load "
	    "%.2f; general filter: %u BPF instructions\n\n", runs,
	    (unsigned)geteuid(), v, (unsigned)general.len);
	printf("%-42s %10s %10s\n", "fork + layer + _exit", "median us",
	    "- floor");
	floor_us = median(t[0], runs);
	for (i = 0; i < NLAYERS; i++) {
		if (bad[i]) {
			printf("%-42s %10s\n", layers[i].name, "n/a");
			continue;
		}
		v = median(t[i], runs);
		printf("%-42s %10.1f %+10.1f\n", layers[i].name, v,
		    v - floor_us);
	}
	printf("\n%-42s %10s\n", "spawn: prepare + fork + child + exec true",
	    "median us");
	for (i = 0; i < NSPAWNS; i++)
		printf("%-42s %10.1f\n", spawns[i].name, bad[NLAYERS + i] ?
		    -1.0 : median(t[NLAYERS + i], runs));
	/* Per-syscall cost of the filter: best of 11 alternating runs. */
	for (r = 0; r < 11; r++) {
		if ((v = getppid_child(0)) > 0 && v < bare)
			bare = v;
		if ((v = getppid_child(1)) > 0 && v < filt)
			filt = v;
	}
	printf("\ngetppid(), best of 11 x %d calls: %.1f ns bare, %.1f ns under "
	    "the general filter (%+.1f ns per syscall)\n", GETPPID_LOOPS,
	    bare, filt, filt - bare);
	for (i = 0; i < NLAYERS + NSPAWNS; i++)
		free(t[i]);
	return 0;
}

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
#include <seccomp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "sandbox/sandbox.h"
#include "sandbox/sandbox_int.h"

#define GETPPID_LOOPS	2000000

static struct sandbox_policy	 pol_explore, pol_general;
static struct sock_fprog	 prebuilt;

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

static int
l_seccomp_build(void)
{
	struct sandbox_error	 e;
	int			 nfd;

	prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0);
	return sandbox_seccomp_apply(&pol_general, 0, &nfd, &e);
}

static int
l_seccomp_prebuilt(void)
{
	prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0);
	return prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &prebuilt, 0, 0);
}

static int
l_mounts(void)
{
	struct sandbox_error	 e;

	return sandbox_ns_mounts(&pol_general, 0, &e);
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
	{ "seccomp, prebuilt BPF load", 0, l_seccomp_prebuilt },
	{ "clone NEWNS", CLONE_NEWNS, l_none },
	{ "clone NEWNS + mounts (tmp, shm, git)", CLONE_NEWNS, l_mounts },
	{ "clone NEWPID", CLONE_NEWPID, l_none },
	{ "clone NEWIPC|NEWUTS", CLONE_NEWIPC | CLONE_NEWUTS, l_none },
	{ "clone NEWNET", CLONE_NEWNET, l_none },
	{ "clone NEWNS|PID|IPC|UTS (no net)", CLONE_NEWNS | CLONE_NEWPID |
	    CLONE_NEWIPC | CLONE_NEWUTS, l_none },
};

static double
run_layer(const struct layer *l, int runs)
{
	double	*t, t0, med;
	pid_t	 pid;
	int	 i, status, flags = l->cloneflags;

	if (geteuid() != 0 && flags != 0)
		flags |= CLONE_NEWUSER;
	if ((t = calloc((size_t)runs, sizeof(*t))) == NULL)
		return -1;
	for (i = 0; i < runs; i++) {
		t0 = now_us();
		if ((pid = sandbox_ns_clone(flags)) == -1) {
			free(t);
			return -1;
		}
		if (pid == 0)
			_exit(l->fn() == 0 ? 0 : 1);
		if (waitpid(pid, &status, 0) == -1 || !WIFEXITED(status) ||
		    WEXITSTATUS(status) != 0) {
			free(t);
			return -1;
		}
		t[i] = now_us() - t0;
	}
	qsort(t, (size_t)runs, sizeof(*t), cmp_double);
	med = t[runs / 2];
	free(t);
	return med;
}

/* Whole phase 1 + exec as the supervisor runs it: prepare, fork, child. */
static double
run_spawn(const struct sandbox_policy *p, unsigned want, int runs)
{
	struct sandbox_policy	 q;
	struct sandbox_error	 e;
	struct sandbox		 sb;
	double			*t, t0, med;
	pid_t			 pid;
	int			 i, status;

	memcpy(&q, p, sizeof(q));
	q.want = want;
	q.allow_weaker = 1;
	if ((t = calloc((size_t)runs, sizeof(*t))) == NULL)
		return -1;
	for (i = 0; i < runs; i++) {
		t0 = now_us();
		if (sandbox_prepare(&sb, &q, &e) == -1 ||
		    (pid = sandbox_fork(&sb, &e)) == -1) {
			fprintf(stderr, "spawn: %s\n", e.msg);
			free(t);
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
		t[i] = now_us() - t0;
	}
	qsort(t, (size_t)runs, sizeof(*t), cmp_double);
	med = t[runs / 2];
	free(t);
	return med;
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

int
main(int argc, char **argv)
{
	struct sandbox_error	 e;
	double			 floor_us, us, bare, filt;
	size_t			 i;
	int			 runs = argc > 1 ? atoi(argv[1]) : 200, pfd[2],
				 nfd;
	pid_t			 pid;

	if (runs < 10)
		runs = 10;
	if (sandbox_policy_for_profile(&pol_explore, "explore", ".", &e) == -1 ||
	    sandbox_policy_for_profile(&pol_general, "general", ".", &e) == -1) {
		fprintf(stderr, "bench_sandbox: %s\n", e.msg);
		return 1;
	}
	if (sandbox_seccomp_export(&pol_general, 0, &prebuilt, &e) == -1) {
		fprintf(stderr, "bench_sandbox: %s\n", e.msg);
		return 1;
	}
	printf("bench_sandbox: median of %d runs, uid %u; general filter: %u "
	    "BPF instructions\n\n", runs, (unsigned)geteuid(),
	    (unsigned)prebuilt.len);
	printf("%-40s %10s %10s\n", "layer", "median us", "+ floor us");
	floor_us = run_layer(&layers[0], runs);
	for (i = 0; i < sizeof(layers) / sizeof(layers[0]); i++) {
		us = i == 0 ? floor_us : run_layer(&layers[i], runs);
		if (us < 0)
			printf("%-40s %10s\n", layers[i].name, "n/a");
		else
			printf("%-40s %10.1f %+10.1f\n", layers[i].name, us,
			    us - floor_us);
	}
	printf("\nsupervisor spawn (prepare + fork + child + exec /bin/true):\n");
	us = run_spawn(&pol_general, SANDBOX_RLIMITS | SANDBOX_SETSID |
	    SANDBOX_CLOSEFDS, runs);
	printf("%-40s %10.1f\n", "phase 1 without pids or namespaces", us);
	us = run_spawn(&pol_general, SANDBOX_ALL & ~SANDBOX_NAMESPACES, runs);
	printf("%-40s %10.1f\n", "phase 1 + pids, no namespaces", us);
	us = run_spawn(&pol_general, SANDBOX_ALL & ~SANDBOX_NETNS, runs);
	printf("%-40s %10.1f\n", "phase 1, namespaces but net", us);
	us = run_spawn(&pol_general, SANDBOX_ALL, runs);
	printf("%-40s %10.1f\n", "phase 1, all", us);

	/* Per-syscall cost of the filter: getppid() in a loop. */
	bare = getppid_loop();
	if (pipe(pfd) == -1 || (pid = fork()) == -1)
		return 1;
	if (pid == 0) {
		prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0);
		if (sandbox_seccomp_apply(&pol_general, 0, &nfd, &e) == -1)
			_exit(1);
		filt = getppid_loop();
		if (write(pfd[1], &filt, sizeof(filt)) != sizeof(filt))
			_exit(1);
		_exit(0);
	}
	close(pfd[1]);
	if (read(pfd[0], &filt, sizeof(filt)) != sizeof(filt))
		filt = -1;
	waitpid(pid, NULL, 0);
	printf("\ngetppid(): %.1f ns bare, %.1f ns under the general filter "
	    "(+%.1f ns per syscall)\n", bare, filt, filt - bare);
	return 0;
}

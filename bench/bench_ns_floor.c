/*
 * bench_ns_floor: the least a namespaced exec can cost here, for
 * scripts/bench-sandbox.sh and docs/benchmarks.md to set beside `warren
 * sandbox exec`, bwrap and whole runs.
 *
 *	bench_ns_floor [-n | -N] [-v] [-c COUNT [-j JOBS]] CMD [ARG ...]
 *
 * One clone(2) into new mount, pid, net, ipc and uts namespaces (-n: no
 * net, as warren's workers get as root; -N: no namespace at all, for
 * what they add; -v: sharing our memory until the
 * exec, CLONE_VM | CLONE_VFORK, as sandbox_spawn does, instead of copying
 * it as fork does), the command exec'd straight away
 * as pid 1, and a wait: no mounts, no init, no rlimits, no Landlock, no
 * seccomp. Nothing a sandbox can skip, so a sandbox cannot be faster than
 * this on the same machine. With -c, COUNT of them, JOBS at a time
 * (default 1), and the wall time of the lot on stdout: the floor under
 * "1,000 subagents on 2 cores". Root only (no user namespace).
 */
#include <sys/types.h>
#include <sys/syscall.h>
#include <sys/wait.h>

#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static char	 vstack[64 * 1024];

static int
vchild(void *arg)
{
	char	**cmd = arg;

	execv(cmd[0], cmd);
	_exit(127);
}

static pid_t
start(long flags, char **cmd)
{
	pid_t	 pid;

	if (flags & CLONE_VM)
		return clone(vchild, vstack + sizeof(vstack), (int)flags |
		    SIGCHLD, cmd);
	pid = (pid_t)syscall(SYS_clone, flags | SIGCHLD, NULL, NULL, NULL,
	    NULL);
	if (pid == 0) {
		execv(cmd[0], cmd);
		_exit(127);
	}
	return pid;
}

static double
now(void)
{
	struct timespec	 ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

int
main(int argc, char *argv[])
{
	long	 flags = CLONE_NEWNS | CLONE_NEWPID | CLONE_NEWNET |
		    CLONE_NEWIPC | CLONE_NEWUTS;
	long	 count = 0, jobs = 1, started = 0, done = 0, live = 0;
	double	 t0;
	pid_t	 pid;
	int	 ch, st, rc = 0;

	while ((ch = getopt(argc, argv, "+nNvc:j:")) != -1) {
		switch (ch) {
		case 'n':
			flags &= ~CLONE_NEWNET;
			break;
		case 'N':
			flags &= CLONE_VM | CLONE_VFORK;
			break;
		case 'v':
			flags |= CLONE_VM | CLONE_VFORK;
			break;
		case 'c':
			count = atol(optarg);
			break;
		case 'j':
			jobs = atol(optarg);
			break;
		default:
			goto usage;
		}
	}
	if (optind >= argc || count < 0 || jobs < 1)
		goto usage;
	if (count == 0) {
		if ((pid = start(flags, argv + optind)) == -1) {
			perror("bench_ns_floor: clone");
			return 1;
		}
		if (waitpid(pid, &st, 0) == -1)
			return 1;
		return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
	}
	t0 = now();
	while (done < count) {
		while (live < jobs && started < count) {
			if (start(flags, argv + optind) == -1) {
				perror("bench_ns_floor: clone");
				return 1;
			}
			started++;
			live++;
		}
		if (wait(&st) == -1)
			return 1;
		if (!WIFEXITED(st) || WEXITSTATUS(st) != 0)
			rc = 1;
		live--;
		done++;
	}
	printf("bench_ns_floor: %ld %s execs of %s, %ld at a time: "
	    "%.3f s\n", count, flags & ~(CLONE_VM | CLONE_VFORK) ?
	    "namespaced" : "plain", argv[optind], jobs, now() - t0);
	return rc;
usage:
	fprintf(stderr, "usage: bench_ns_floor [-n | -N] [-v] "
	    "[-c COUNT [-j JOBS]] CMD [ARG ...]\n");
	return 2;
}

/*
 * bench_ns_floor: the least a namespaced exec can cost here, for
 * scripts/bench-sandbox.sh to set beside `warren sandbox exec` and bwrap.
 *
 *	bench_ns_floor [-n] CMD [ARG ...]
 *
 * One clone(2) into new mount, pid, net, ipc and uts namespaces (-n: no
 * net), the command exec'd straight away as pid 1, and a wait: no mounts,
 * no init, no rlimits, no Landlock, no seccomp, no error reporting worth
 * the name. Nothing a sandbox can skip, so a sandbox cannot be faster than
 * this on the same machine. Root only (no user namespace).
 */
#include <sys/types.h>
#include <sys/syscall.h>
#include <sys/wait.h>

#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

int
main(int argc, char *argv[])
{
	long	 flags = CLONE_NEWNS | CLONE_NEWPID | CLONE_NEWNET |
		    CLONE_NEWIPC | CLONE_NEWUTS;
	pid_t	 pid;
	int	 st, i = 1;

	if (argc > 1 && strcmp(argv[1], "-n") == 0) {
		flags &= ~CLONE_NEWNET;
		i++;
	}
	if (i >= argc) {
		fprintf(stderr, "usage: bench_ns_floor [-n] CMD [ARG ...]\n");
		return 2;
	}
	pid = (pid_t)syscall(SYS_clone, flags | SIGCHLD, NULL, NULL, NULL,
	    NULL);
	if (pid == -1) {
		perror("bench_ns_floor: clone");
		return 1;
	}
	if (pid == 0) {
		execv(argv[i], argv + i);
		_exit(127);
	}
	if (waitpid(pid, &st, 0) == -1)
		return 1;
	return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}

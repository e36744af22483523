/*
 * A stand-in for warren-worker (run --worker) that tells whether its
 * sandbox lets it run a program: it enters the sandbox the supervisor
 * gave it, as warren-worker does, forks, execs /bin/sh in the child and
 * prints on stderr "EXECPROBE: allowed" (the shell ran) or "EXECPROBE:
 * refused" (execve failed or the child was killed), then exits 3 without
 * a result (the supervisor logs its stderr line and calls it crashed).
 * Built without sanitizers: ASan's runtime is no worker's code.
 */
#include <sys/types.h>
#include <sys/wait.h>

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "sandbox/sandbox.h"

int
main(void)
{
	struct sandbox_report	 rep;
	struct sandbox_error	 e;
	char			*argv[] = { "sh", "-c", "exit 42", NULL };
	char			*envp[] = { NULL };
	pid_t			 pid;
	int			 st;

	memset(&rep, 0, sizeof(rep));
	memset(&e, 0, sizeof(e));
	if (sandbox_enter(NULL, &rep, &e) == -1) {
		fprintf(stderr, "EXECPROBE: no sandbox: %s\n", e.msg);
		return 5;
	}
	if ((pid = fork()) == -1) {
		fprintf(stderr, "EXECPROBE: fork: %s\n", strerror(errno));
		return 4;
	}
	if (pid == 0) {
		execve("/bin/sh", argv, envp);
		_exit(7);
	}
	if (waitpid(pid, &st, 0) == -1) {
		fprintf(stderr, "EXECPROBE: waitpid: %s\n", strerror(errno));
		return 4;
	}
	fprintf(stderr, "EXECPROBE: %s\n", WIFEXITED(st) &&
	    WEXITSTATUS(st) == 42 ? "allowed" : "refused");
	return 3;
}

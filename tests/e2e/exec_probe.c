/*
 * A stand-in for warren-worker (run --worker) that tells whether its
 * sandbox lets it run a program: it enters the sandbox the supervisor
 * gave it, as warren-worker does, forks, execs /bin/sh in the child and
 * prints on stderr "EXECPROBE: allowed" (the shell ran) or "EXECPROBE:
 * refused" (execve failed or the child was killed), then exits 3 without
 * a result (the supervisor logs its stderr line and calls it crashed).
 * A child that has not ended within EXECPROBE_WAIT_S is a hang, said
 * ("EXECPROBE: ... still runs"), killed, and neither verdict printed.
 * Built without sanitizers: ASan's runtime is no worker's code.
 */
#include <sys/types.h>
#include <sys/wait.h>

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "sandbox/sandbox.h"

#define EXECPROBE_WAIT_S	30	/* "exit 42" takes milliseconds */

static void
execprobe_alarm(int sig)
{
	(void)sig;
}

/* waitpid(pid) within EXECPROBE_WAIT_S: 0 and its status; else -1, said
 * on stderr (past the deadline, the child killed and reaped). */
static int
execprobe_wait(pid_t pid, int *st)
{
	struct sigaction	sa;
	pid_t			r;
	int			err;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = execprobe_alarm;	/* no SA_RESTART */
	sigemptyset(&sa.sa_mask);
	sigaction(SIGALRM, &sa, NULL);
	alarm(EXECPROBE_WAIT_S);
	r = waitpid(pid, st, 0);
	err = errno;
	alarm(0);
	if (r != -1)
		return 0;
	if (err != EINTR) {
		fprintf(stderr, "EXECPROBE: waitpid: %s\n", strerror(err));
		return -1;
	}
	fprintf(stderr, "EXECPROBE: the child running /bin/sh -c 'exit 42' "
	    "(pid %d) still runs after %d s: killed\n", (int)pid,
	    EXECPROBE_WAIT_S);
	kill(pid, SIGKILL);
	(void)waitpid(pid, st, 0);	/* after SIGKILL: it ends */
	return -1;
}

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
	if (execprobe_wait(pid, &st) == -1)
		return 4;
	fprintf(stderr, "EXECPROBE: %s\n", WIFEXITED(st) &&
	    WEXITSTATUS(st) == 42 ? "allowed" : "refused");
	return 3;
}

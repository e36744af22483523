/* test_wait.h */
#include <sys/wait.h>

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "tests/test_wait.h"

static long long
test_wait_ms(void)
{
	struct timespec	ts;

	(void)clock_gettime(CLOCK_MONOTONIC, &ts);
	return (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

int
test_waitpid(pid_t pid, int seconds, const char *what)
{
	long long	t0 = test_wait_ms();
	pid_t		r;
	int		st;

	while ((r = waitpid(pid, &st, WNOHANG)) == 0) {
		if (test_wait_ms() - t0 >= (long long)seconds * 1000) {
			fprintf(stderr, "test: %s (pid %d) still runs after "
			    "%d s: killing it\n", what, (int)pid, seconds);
			kill(pid, SIGKILL);
			(void)waitpid(pid, &st, 0);
			return -1;
		}
		usleep(10000);
	}
	if (r == -1) {
		fprintf(stderr, "test: waiting for %s (pid %d): %s\n", what,
		    (int)pid, strerror(errno));
		return -1;
	}
	return st;
}

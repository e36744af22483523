/* test_wait.h */
#include <sys/wait.h>

#include <errno.h>
#include <poll.h>
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

ssize_t
test_read(int fd, void *buf, size_t len, int seconds, const char *what)
{
	struct pollfd	 pfd = { fd, POLLIN, 0 };
	long long	 t0 = test_wait_ms(), left;
	size_t		 got = 0;
	ssize_t		 n;

	while (got < len) {
		left = (long long)seconds * 1000 - (test_wait_ms() - t0);
		if (left <= 0 || (n = poll(&pfd, 1, (int)left)) == 0) {
			fprintf(stderr, "test: %s: %zu of %zu bytes after %d s\n",
			    what, got, len, seconds);
			return -1;
		}
		if (n == -1 || (n = read(fd, (char *)buf + got, len - got)) ==
		    -1) {
			if (errno == EINTR)
				continue;
			fprintf(stderr, "test: reading %s: %s\n", what,
			    strerror(errno));
			return -1;
		}
		if (n == 0)
			break;
		got += (size_t)n;
	}
	return (ssize_t)got;
}

/*
 * The waits for a child every test helper uses (test_wait.c, linked
 * into every test by warren_test): with a deadline, and saying what it
 * waited for when the deadline passes.
 */
#ifndef WARREN_TEST_WAIT_H
#define WARREN_TEST_WAIT_H

#include <sys/types.h>

/* The child pid's wait status, within seconds. -1 past them (it is
 * killed with SIGKILL and reaped) or when it cannot be waited for, said
 * on stderr with what it is. */
int	 test_waitpid(pid_t pid, int seconds, const char *what);
/* Up to len bytes from fd (a child's pipe) within seconds: how many came
 * (fewer than len only at its end). -1 past them or on an error, said on
 * stderr with what (the caller kills the child that did not write). */
ssize_t	 test_read(int fd, void *buf, size_t len, int seconds,
	    const char *what);

#endif

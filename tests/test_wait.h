/*
 * The one wait for a child every test helper uses (test_wait.c, linked
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

#endif

/*
 * test_waitpid's deadline (tests/test_wait.c), the one wait every test
 * helper uses for a child: a child that runs past it is given up on in
 * about the time asked, killed and reaped, and what was waited for is
 * said on stderr; a child that ends in time gives its status. The same
 * for test_read of a child's pipe.
 */
#include <sys/wait.h>

#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "tests/test_wait.h"

static long long
twd_now_ms(void)
{
	struct timespec	ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* A child that sleeps secs, then exits with code. */
static pid_t
twd_child(unsigned secs, int code)
{
	pid_t	pid;

	if ((pid = fork()) == -1)
		fail_msg("fork: %s", strerror(errno));
	if (pid == 0) {
		sleep(secs);
		_exit(code);
	}
	return pid;
}

/* test_waitpid(pid, seconds, what) with stderr caught in err. */
static int
twd_wait(pid_t pid, int seconds, const char *what, char *err, size_t sz)
{
	char	path[] = "/tmp/test_wait_deadline.XXXXXX";
	int	fd, saved, st;
	ssize_t	n;

	if ((fd = mkstemp(path)) == -1)
		fail_msg("mkstemp %s: %s", path, strerror(errno));
	unlink(path);
	fflush(stderr);
	saved = dup(2);
	dup2(fd, 2);
	st = test_waitpid(pid, seconds, what);
	fflush(stderr);
	dup2(saved, 2);
	close(saved);
	n = pread(fd, err, sz - 1, 0);
	err[n > 0 ? n : 0] = '\0';
	close(fd);
	fprintf(stderr, "%s", err);
	return st;
}

/* A child sleeping 5 s, waited for 1 s: -1 after about 1 s, the child
 * killed and reaped, its description said. */
static void
test_deadline_passes(void **state)
{
	char		 err[1024];
	long long	 t0, ms;
	pid_t		 pid;
	int		 st;

	(void)state;
	pid = twd_child(5, 0);
	t0 = twd_now_ms();
	st = twd_wait(pid, 1, "the sleeping child of test_deadline_passes",
	    err, sizeof(err));
	ms = twd_now_ms() - t0;
	print_message("test_waitpid gave up after %lld ms\n", ms);
	if (st != -1)
		fail_msg("test_waitpid returned status %d after %lld ms, not -1 "
		    "at its 1 s deadline", st, ms);
	if (ms < 900 || ms > 2500)
		fail_msg("test_waitpid gave up after %lld ms, not within "
		    "0.9-2.5 s of its 1 s deadline", ms);
	/* Killed and reaped: no such process, no zombie left to reap. */
	assert_int_equal(kill(pid, 0), -1);
	assert_int_equal(errno, ESRCH);
	assert_int_equal(waitpid(pid, NULL, WNOHANG), -1);
	assert_int_equal(errno, ECHILD);
	if (strstr(err, "the sleeping child of test_deadline_passes") == NULL
	    || strstr(err, "after 1 s") == NULL)
		fail_msg("stderr does not say what was waited for and how "
		    "long: \"%s\"", err);
}

/* A child that ends in time: its wait status, nothing said. */
static void
test_ends_in_time(void **state)
{
	char	err[1024];
	pid_t	pid;
	int	st;

	(void)state;
	pid = twd_child(0, 3);
	st = twd_wait(pid, 5, "the quick child", err, sizeof(err));
	assert_true(st != -1 && WIFEXITED(st));
	assert_int_equal(WEXITSTATUS(st), 3);
	assert_string_equal(err, "");
}

/* No such child: -1 at once, the error said with what. */
static void
test_not_a_child(void **state)
{
	char	err[1024];

	(void)state;
	assert_int_equal(twd_wait(1, 5, "init, not our child", err,
	    sizeof(err)), -1);
	assert_non_null(strstr(err, "init, not our child"));
	assert_non_null(strstr(err, strerror(ECHILD)));
}

/* A child that writes what on a pipe, then sleeps secs; the pipe's
 * read end in *fd. */
static pid_t
twd_writer(const char *what, unsigned secs, int *fd)
{
	int	p[2];
	pid_t	pid;

	if (pipe(p) == -1 || (pid = fork()) == -1)
		fail_msg("pipe, fork: %s", strerror(errno));
	if (pid == 0) {
		close(p[0]);
		if (write(p[1], what, strlen(what)) == -1)
			_exit(1);
		sleep(secs);
		_exit(0);
	}
	close(p[1]);
	*fd = p[0];
	return pid;
}

/* test_read(fd, buf, len, seconds, what) with stderr caught in err. */
static ssize_t
twd_read(int fd, char *buf, size_t len, const char *what, char *err,
    size_t sz)
{
	char	path[] = "/tmp/test_wait_deadline.XXXXXX";
	int	efd, saved;
	ssize_t	n, r;

	if ((efd = mkstemp(path)) == -1)
		fail_msg("mkstemp %s: %s", path, strerror(errno));
	unlink(path);
	fflush(stderr);
	saved = dup(2);
	dup2(efd, 2);
	r = test_read(fd, buf, len, 1, what);
	fflush(stderr);
	dup2(saved, 2);
	close(saved);
	n = pread(efd, err, sz - 1, 0);
	err[n > 0 ? n : 0] = '\0';
	close(efd);
	fprintf(stderr, "%s", err);
	return r;
}

/* A child that writes 3 of the 8 bytes asked and sleeps 5 s: -1 after
 * about 1 s, saying what and how much came. */
static void
test_read_deadline(void **state)
{
	char		 buf[8], err[1024];
	long long	 t0, ms;
	ssize_t		 r;
	pid_t		 pid;
	int		 fd;

	(void)state;
	pid = twd_writer("abc", 5, &fd);
	t0 = twd_now_ms();
	r = twd_read(fd, buf, sizeof(buf), "the slow writer's 8 bytes", err,
	    sizeof(err));
	ms = twd_now_ms() - t0;
	kill(pid, SIGKILL);
	(void)waitpid(pid, NULL, 0);	/* after SIGKILL: it ends */
	close(fd);
	print_message("test_read gave up after %lld ms\n", ms);
	if (r != -1 || ms < 900 || ms > 2500)
		fail_msg("test_read returned %zd after %lld ms, not -1 at its "
		    "1 s deadline", r, ms);
	if (strstr(err, "the slow writer's 8 bytes: 3 of 8 bytes after 1 s")
	    == NULL)
		fail_msg("stderr does not say what was read, how much and how "
		    "long: \"%s\"", err);
}

/* A child that writes 3 bytes and ends: 3 at its end, nothing said. */
static void
test_read_to_end(void **state)
{
	char	buf[8], err[1024];
	pid_t	pid;
	int	fd;

	(void)state;
	pid = twd_writer("abc", 0, &fd);
	assert_int_equal(twd_read(fd, buf, sizeof(buf), "the quick writer",
	    err, sizeof(err)), 3);
	assert_memory_equal(buf, "abc", 3);
	assert_string_equal(err, "");
	close(fd);
	assert_true(test_waitpid(pid, 5, "the quick writer") != -1);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_deadline_passes),
		cmocka_unit_test(test_ends_in_time),
		cmocka_unit_test(test_not_a_child),
		cmocka_unit_test(test_read_deadline),
		cmocka_unit_test(test_read_to_end),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}

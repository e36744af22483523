/*
 * What a spawner shares between its workers (docs/sandbox.md, "Per-spawn
 * cost"): the sealed, prebuilt seccomp program and its checks in the
 * worker, and the shared network namespace (root only).
 */
#include <sys/types.h>
#include <sys/mman.h>
#include <sys/wait.h>

#include <errno.h>
#include <fcntl.h>
#include <linux/filter.h>
#include <sched.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "sandbox/sandbox.h"
#include "sandbox/sandbox_int.h"

#ifndef F_GET_SEALS
#define F_ADD_SEALS	1033
#define F_GET_SEALS	1034
#define F_SEAL_SEAL	0x0001
#define F_SEAL_SHRINK	0x0002
#define F_SEAL_GROW	0x0004
#define F_SEAL_WRITE	0x0008
#endif

static void
policy(struct sandbox_policy *p, const char *name)
{
	struct sandbox_error	e;

	memset(&e, 0, sizeof(e));
	assert_int_equal(sandbox_policy_for_profile(p, name, "/tmp", &e), 0);
}

/* Put a dup of fd under SANDBOX_BPF_ENV, as spawn.c does with fd 6. */
static int
hand_over(int fd)
{
	char	v[16];
	int	d;

	assert_true((d = fcntl(fd, F_DUPFD_CLOEXEC, 3)) >= 3);
	snprintf(v, sizeof(v), "%d", d);
	assert_int_equal(setenv(SANDBOX_BPF_ENV, v, 1), 0);
	return d;
}

static void
test_sealed_and_cached(void **state)
{
	struct sandbox_policy	p;
	struct sandbox_error	e;
	int			fd, seals;

	(void)state;
	policy(&p, "explore");
	memset(&e, 0, sizeof(e));
	fd = sandbox_bpf_fd(&p, &e);
	assert_true(fd >= 0);
	assert_int_equal(sandbox_bpf_fd(&p, &e), fd);	/* built once */
	seals = fcntl(fd, F_GET_SEALS);
	assert_int_equal(seals & (F_SEAL_SEAL | F_SEAL_SHRINK | F_SEAL_GROW |
	    F_SEAL_WRITE), F_SEAL_SEAL | F_SEAL_SHRINK | F_SEAL_GROW |
	    F_SEAL_WRITE);
	/* No worker can change what its siblings load. */
	assert_int_equal(pwrite(fd, "x", 1, 8), -1);
	assert_int_equal(errno, EPERM);
	assert_int_equal(ftruncate(fd, 0), -1);
	assert_true(fcntl(fd, F_GETFD) & FD_CLOEXEC);
}

static void
test_inherited(void **state)
{
	struct sandbox_policy	p;
	struct sandbox_error	e;
	struct sock_fprog	prog, ref;
	int			fd, d;

	(void)state;
	policy(&p, "explore");
	memset(&e, 0, sizeof(e));
	assert_true((fd = sandbox_bpf_fd(&p, &e)) >= 0);
	d = hand_over(fd);
	assert_int_equal(sandbox_bpf_inherited(&p, &prog), 0);
	assert_null(getenv(SANDBOX_BPF_ENV));
	assert_int_equal(fcntl(d, F_GETFD), -1);	/* closed */
	/* The very program the worker would have built. */
	assert_int_equal(sandbox_seccomp_export(&p, SANDBOX_SECCOMP_SELF, &ref,
	    &e), 0);
	assert_int_equal(prog.len, ref.len);
	assert_memory_equal(prog.filter, ref.filter,
	    ref.len * sizeof(struct sock_filter));
	free(prog.filter);
	free(ref.filter);
}

static void
test_refused(void **state)
{
	struct sandbox_policy	ro, rw;
	struct sandbox_error	e;
	struct sock_fprog	prog;
	char			buf[64];
	int			fd, d, m;

	(void)state;
	policy(&ro, "explore");
	policy(&rw, "general");
	memset(&e, 0, sizeof(e));
	assert_true((fd = sandbox_bpf_fd(&ro, &e)) >= 0);
	/* Built for another profile: the worker builds its own. */
	d = hand_over(fd);
	assert_int_equal(sandbox_bpf_inherited(&rw, &prog), -1);
	assert_null(prog.filter);
	assert_int_equal(fcntl(d, F_GETFD), -1);
	/* Not sealed: refused, even with the right bytes. */
	assert_true((m = memfd_create("t", MFD_CLOEXEC)) >= 0);
	assert_true(pread(fd, buf, sizeof(buf), 0) == (ssize_t)sizeof(buf));
	assert_int_equal(write(m, buf, sizeof(buf)), (ssize_t)sizeof(buf));
	d = hand_over(m);
	assert_int_equal(sandbox_bpf_inherited(&ro, &prog), -1);
	close(m);
	/* Not an fd number; no variable. */
	assert_int_equal(setenv(SANDBOX_BPF_ENV, "6x", 1), 0);
	assert_int_equal(sandbox_bpf_inherited(&ro, &prog), -1);
	assert_null(getenv(SANDBOX_BPF_ENV));
	assert_int_equal(sandbox_bpf_inherited(&ro, &prog), -1);
	(void)d;
}

/* Root: the spawner's netns is new and its children get no other. */
static void
test_shared_netns(void **state)
{
	struct sandbox_policy	p;
	struct sandbox_error	e;
	struct sandbox		sb;
	char			mine[64], now[64];
	pid_t			pid;
	int			st;
	ssize_t			n;

	(void)state;
	memset(&e, 0, sizeof(e));
	if (geteuid() != 0) {
		/* Not root: refused, workers keep their own. */
		assert_int_equal(sandbox_netns_share(&e), -1);
		assert_int_equal(e.missing, 1);
		return;
	}
	policy(&p, "explore");
	n = readlink("/proc/self/ns/net", mine, sizeof(mine) - 1);
	assert_true(n > 0);
	mine[n] = '\0';
	if ((pid = fork()) == 0) {
		/* In a child, so this test process keeps its namespace. */
		if (sandbox_netns_share(&e) == -1)
			_exit(2);
		n = readlink("/proc/self/ns/net", now, sizeof(now) - 1);
		if (n <= 0)
			_exit(3);
		now[n] = '\0';
		if (strcmp(now, mine) == 0)
			_exit(4);
		if (sandbox_prepare(&sb, &p, &e) == -1)
			_exit(5);
		if (sb.cloneflags & CLONE_NEWNET)
			_exit(6);
		if (sb.caps.netns && !(sb.planned & SANDBOX_NETNS))
			_exit(7);
		sandbox_release(&sb);
		_exit(0);
	}
	assert_true(pid > 0);
	assert_int_equal(waitpid(pid, &st, 0), pid);
	assert_true(WIFEXITED(st));
	assert_int_equal(WEXITSTATUS(st), 0);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_sealed_and_cached),
		cmocka_unit_test(test_inherited),
		cmocka_unit_test(test_refused),
		cmocka_unit_test(test_shared_netns),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}

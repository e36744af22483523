/*
 * What every sandboxed process shares (docs/sandbox.md, "Per-spawn cost"):
 * the seccomp programs compiled at build time, and the spawner's network
 * namespace (root only).
 */
#include <sys/types.h>
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

#include "agent/profile.h"
#include "sandbox/sandbox.h"
#include "sandbox/sandbox_int.h"
#include "sandbox/sandbox_testapi.h"
#include "tests/test_wait.h"

static void
policy(struct sandbox_policy *p, const char *name)
{
	struct sandbox_error	e;

	memset(&e, 0, sizeof(e));
	assert_int_equal(profile_policy(p, name, "/tmp", &e), 0);
}

/*
 * The program loaded is the one the rules compile to, for every profile
 * and mode: the build-time table is not stale and is indexed the way the
 * loader looks it up.
 */
static void
test_table_is_the_rules(void **state)
{
	static const int	 flags[] = { SANDBOX_SECCOMP_SELF, 0,
				    SANDBOX_SECCOMP_NOTIFY };
	const struct profile	*b;
	struct sandbox_policy	 p;
	struct sandbox_error	 e;
	struct sock_fprog	 got, want;
	size_t			 i, j, k;

	(void)state;
	/* Every built-in of the profile table (agent/profile.c). */
	for (i = 0; (b = profile_builtin_at(i)) != NULL; i++)
		for (j = 0; j < sizeof(flags) / sizeof(flags[0]); j++)
			for (k = 0; k < 2; k++) {
				policy(&p, b->name);
				if (k == 1)
					strlcpy(p.program, "/bin/true",
					    sizeof(p.program));
				sandbox_seccomp_program(&p, flags[j], &got);
				memset(&e, 0, sizeof(e));
				assert_int_equal(sandbox_seccomp_compile(&p,
				    flags[j], &want, &e), 0);
				assert_int_equal(got.len, want.len);
				assert_memory_equal(got.filter, want.filter,
				    want.len * sizeof(struct sock_filter));
				free(want.filter);
			}
}

/* What the policy changes, the program changes. */
static void
test_table_differs(void **state)
{
	struct sandbox_policy	 ro, rw, p;
	struct sock_fprog	 a, b;

	(void)state;
	policy(&ro, "explore");
	policy(&rw, "general");
	sandbox_seccomp_program(&ro, SANDBOX_SECCOMP_SELF, &a);
	sandbox_seccomp_program(&rw, SANDBOX_SECCOMP_SELF, &b);
	assert_true(a.len > b.len);	/* the read-only rules */
	/* A no-exec command under sandbox exec: execve goes to the listener. */
	memcpy(&p, &ro, sizeof(p));
	sandbox_seccomp_program(&p, SANDBOX_SECCOMP_NOTIFY, &a);
	strlcpy(p.program, "/bin/true", sizeof(p.program));
	sandbox_seccomp_program(&p, SANDBOX_SECCOMP_NOTIFY, &b);
	assert_true(a.len != b.len || memcmp(a.filter, b.filter,
	    a.len * sizeof(struct sock_filter)) != 0);
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
	assert_true((st = test_waitpid(pid, 240,
	    "the child of test_shared_netns")) != -1);
	assert_true(WIFEXITED(st));
	assert_int_equal(WEXITSTATUS(st), 0);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_table_is_the_rules),
		cmocka_unit_test(test_table_differs),
		cmocka_unit_test(test_shared_netns),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}

/*
 * A child's cgroup join (sandbox_cgroup.c:sandbox_cgroup_join): it lands
 * in its pids and memory groups, and the join costs no RCU grace period.
 * A write of a whole process to cgroup.procs takes the kernel's global
 * cgroup_threadgroup_rwsem, whose first writer after a quiet spell waits
 * for a grace period (10-13 ms on the build VM, every `sandbox exec` paid
 * it); the single-threaded child writes its one thread to v1 "tasks".
 * A child that waits for it sleeps (a voluntary context switch, counted
 * by getrusage); one that does not runs sandbox_child through without.
 * Each trial waits 1.5 s first, so that the kernel's rcu_sync is back to
 * idle unless other work on the machine moves processes between groups
 * meanwhile (then both ways are fast and this test cannot tell them
 * apart: it can pass without the fix, never fail with it).
 * Needs a writable cgroup (root here); skipped where there is none.
 */
#include <sys/types.h>
#include <sys/resource.h>
#include <sys/wait.h>

#include <errno.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "agent/profile.h"
#include "sandbox/sandbox.h"
#include "sandbox/sandbox_int.h"
#include "tests/test_wait.h"

#define TRIALS		5
#define QUIET_MS	1500

/* What the child tells its parent. */
struct join_result {
	int		 rc;
	long		 us;		/* sandbox_child's time */
	long		 sleeps;	/* its voluntary context switches */
	int		 in_pids;	/* /proc/self/cgroup names its groups */
	int		 in_mem;
	char		 err[SANDBOX_ERR_LEN];
};

static long
now_us(void)
{
	struct timespec	 ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000000L + ts.tv_nsec / 1000;
}

/* 1 if a line of /proc/self/cgroup ends in the last part of group. */
static int
in_group(const char *group)
{
	char		 buf[4096], *line, *save;
	const char	*base;
	FILE		*fp;
	size_t		 n, bl;

	if (group[0] == '\0' || (base = strrchr(group, '/')) == NULL ||
	    (fp = fopen("/proc/self/cgroup", "re")) == NULL)
		return 0;
	n = fread(buf, 1, sizeof(buf) - 1, fp);
	fclose(fp);
	buf[n] = '\0';
	bl = strlen(base);
	for (line = strtok_r(buf, "\n", &save); line != NULL;
	    line = strtok_r(NULL, "\n", &save))
		if (strlen(line) >= bl &&
		    strcmp(line + strlen(line) - bl, base) == 0)
			return 1;
	return 0;
}

static void __attribute__((noreturn))
child(struct sandbox *sb, int fd)
{
	struct join_result	 r;
	struct sandbox_error	 e;
	struct rusage		 ru0, ru1;
	long			 t0;

	memset(&r, 0, sizeof(r));
	getrusage(RUSAGE_SELF, &ru0);
	t0 = now_us();
	r.rc = sandbox_child(sb, &fd, 1, &e);
	r.us = now_us() - t0;
	getrusage(RUSAGE_SELF, &ru1);
	r.sleeps = ru1.ru_nvcsw - ru0.ru_nvcsw;
	if (r.rc == -1)
		snprintf(r.err, sizeof(r.err), "%s", e.msg);
	r.in_pids = in_group(sb->cgroup);
	r.in_mem = in_group(sb->memcg[0] != '\0' ? sb->memcg : sb->cgroup);
	_exit(write(fd, &r, sizeof(r)) == (ssize_t)sizeof(r) ? 0 : 1);
}

/* One sandboxed child with pids and memory groups; its result. */
static void
one_join(struct join_result *r)
{
	struct sandbox_policy	 p;
	struct sandbox		 sb;
	struct sandbox_error	 e;
	int			 fd[2], st;
	pid_t			 pid;

	assert_int_equal(profile_policy(&p, "explore", "/", &e),
	    0);
	p.want = SANDBOX_SETSID | SANDBOX_CLOSEFDS | SANDBOX_PIDS |
	    SANDBOX_MEMORY;
	p.require = 0;
	p.limits.mem_bytes = 64ULL << 20;
	if (sandbox_prepare(&sb, &p, &e) == -1)
		fail_msg("sandbox_prepare: %s", e.msg);
	assert_int_equal(pipe(fd), 0);
	if ((pid = sandbox_fork(&sb, &e)) == -1)
		fail_msg("sandbox_fork: %s", e.msg);
	if (pid == 0) {
		close(fd[0]);
		child(&sb, fd[1]);
	}
	close(fd[1]);
	memset(r, 0, sizeof(*r));
	if (test_read(fd[0], r, sizeof(*r), 60, "the cgroup child's result")
	    != (ssize_t)sizeof(*r)) {
		kill(pid, SIGKILL);
		(void)test_waitpid(pid, 10, "the cgroup child, killed");
		fail_msg("no result from the child (pid %d) within 60 s",
		    (int)pid);
	}
	close(fd[0]);
	assert_true((st = test_waitpid(pid, 60, "the cgroup child")) != -1);
	sandbox_release(&sb);
	if (r->rc == -1)
		fail_msg("sandbox_child: %s", r->err);
}

static void
test_cgroup_join(void **state)
{
	struct sandbox_caps	 caps;
	struct join_result	 r;
	struct timespec		 quiet = { QUIET_MS / 1000,
				    (QUIET_MS % 1000) * 1000000L };
	int			 i, slept = 0;

	(void)state;
	memset(&caps, 0, sizeof(caps));
	if (sandbox_caps_probe(&caps, 0) == -1 || caps.cgroup == 0 ||
	    caps.memcg == 0) {
		print_message("skip: no writable pids and memory cgroups "
		    "for this user\n");
		skip();
	}
	for (i = 0; i < TRIALS; i++) {
		nanosleep(&quiet, NULL);
		one_join(&r);
		if (!r.in_pids || !r.in_mem)
			fail_msg("trial %d: the child is not in its %s group "
			    "(/proc/self/cgroup)", i, !r.in_pids ? "pids" :
			    "memory");
		slept += r.sleeps > 0;
		print_message("trial %d: sandbox_child %ld us, %ld voluntary "
		    "context switches (cgroup v%d pids, v%d memory)\n", i,
		    r.us, r.sleeps, caps.cgroup, caps.memcg);
	}
	if (caps.cgroup == 2 || caps.memcg == 2) {
		print_message("a v2 join goes through cgroup.procs: not "
		    "checked\n");
		return;
	}
	/* A join that sleeps waits for the grace period; the rest of
	 * sandbox_child here (setsid, rlimits, close_range) never sleeps. */
	if (slept > TRIALS / 2)
		fail_msg("%d of %d children slept in sandbox_child: a grace "
		    "period per cgroup join", slept, TRIALS);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_cgroup_join),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}

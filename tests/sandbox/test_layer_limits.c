/*
 * The limits layers on their own, against the policy's limits
 * (struct sandbox_limits), not through what a bomb in the escape suite
 * happens to meet:
 *
 *   rlimits	a forked child applies only sandbox_rlimit_apply and reads
 *		each limit back with getrlimit: CPU soft N and hard N + 2,
 *		AS (not in a sanitizer build), FSIZE, NOFILE and NPROC soft
 *		and hard as asked, CORE 0 and 0 (no way back up).
 *   cgroups	sandbox_prepare's groups: pids.max the process count,
 *		memory.max the memory limit and, with cgroup v2 and swap
 *		accounting, memory.swap.max 0 (no swap beyond it); v1's
 *		memory.limit_in_bytes likewise, and memsw.limit_in_bytes
 *		(memory and swap) the same where swap is accounted.
 *
 * Without a writable cgroup (an ordinary user on most machines) the
 * cgroup half says so and checks nothing; the rlimit half always runs.
 */
#include <sys/types.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/wait.h>

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <setjmp.h>
#include <signal.h>
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
#include "tests/test_wait.h"

#define L_CPU		7
#define L_AS		(3ULL << 30)
#define L_FSIZE		(5ULL << 20)
#define L_NOFILE	77
#define L_NPROC		33
#define L_MEM		(48ULL << 20)

/* One limit as the child read it back. */
struct rl_got {
	int		 resource;
	const char	*name;
	rlim_t		 soft, hard;	/* what the policy asks */
	struct rlimit	 got;
};

/* In a child: apply only the rlimits, read each back; the failures. */
static int
rl_child(void)
{
	struct sandbox_limits	 l;
	struct sandbox_error	 e;
	struct rl_got		 v[] = {
		{ RLIMIT_CPU, "CPU", L_CPU, L_CPU + 2, { 0, 0 } },
		{ RLIMIT_AS, "AS", L_AS, L_AS, { 0, 0 } },
		{ RLIMIT_FSIZE, "FSIZE", L_FSIZE, L_FSIZE, { 0, 0 } },
		{ RLIMIT_NOFILE, "NOFILE", L_NOFILE, L_NOFILE, { 0, 0 } },
		{ RLIMIT_NPROC, "NPROC", L_NPROC, L_NPROC, { 0, 0 } },
		{ RLIMIT_CORE, "CORE", 0, 0, { 0, 0 } },
	};
	char			 note[256] = "";
	size_t			 i;
	int			 bad = 0;

	memset(&l, 0, sizeof(l));
	memset(&e, 0, sizeof(e));
	l.cpu_sec = L_CPU;
	l.as_bytes = L_AS;
	l.fsize_bytes = L_FSIZE;
	l.nofile = L_NOFILE;
	if (sandbox_rlimit_apply(&l, L_NPROC, note, sizeof(note), &e) == -1) {
		fprintf(stderr, "  sandbox_rlimit_apply: %s\n", e.msg);
		return 1;
	}
	for (i = 0; i < sizeof(v) / sizeof(v[0]); i++) {
		if (getrlimit(v[i].resource, &v[i].got) == -1) {
			fprintf(stderr, "  getrlimit %s: %s\n", v[i].name,
			    strerror(errno));
			bad++;
			continue;
		}
		if (v[i].resource == RLIMIT_AS && SANDBOX_SANITIZER) {
			fprintf(stderr, "  %-6s skipped in a sanitizer build "
			    "(%s)\n", v[i].name, note);
			continue;
		}
		/* Limits only go down: a hard limit lower than asked stays. */
		if (v[i].got.rlim_cur == v[i].soft && (v[i].got.rlim_max ==
		    v[i].hard || (v[i].got.rlim_max < v[i].hard &&
		    v[i].got.rlim_max >= v[i].got.rlim_cur))) {
			fprintf(stderr, "  %-6s %llu/%llu ok\n", v[i].name,
			    (unsigned long long)v[i].got.rlim_cur,
			    (unsigned long long)v[i].got.rlim_max);
			continue;
		}
		fprintf(stderr, "  %-6s got soft %llu hard %llu, want soft %llu "
		    "hard %llu\n", v[i].name,
		    (unsigned long long)v[i].got.rlim_cur,
		    (unsigned long long)v[i].got.rlim_max,
		    (unsigned long long)v[i].soft,
		    (unsigned long long)v[i].hard);
		bad++;
	}
	return bad;
}

static void
test_rlimits(void **state)
{
	pid_t	 pid;
	int	 st;

	(void)state;
	fflush(NULL);
	if ((pid = fork()) == -1)
		fail_msg("fork: %s", strerror(errno));
	if (pid == 0) {
		(void)prctl(PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0);
		_exit(rl_child());
	}
	if ((st = test_waitpid(pid, 30, "the rlimit child")) == -1)
		fail_msg("the rlimit child (pid %ld) had not ended after 30 s",
		    (long)pid);
	if (!WIFEXITED(st) || WEXITSTATUS(st) != 0)
		fail_msg("%d limits not as the policy asks (above; status "
		    "0x%x)", WIFEXITED(st) ? WEXITSTATUS(st) : -1, st);
}

/* dir/file's first line into buf; -1 if it cannot be read. */
static int
cg_read(const char *dir, const char *file, char *buf, size_t len)
{
	char	 path[PATH_MAX + 64];
	ssize_t	 n;
	int	 fd;

	snprintf(path, sizeof(path), "%s/%s", dir, file);
	if ((fd = open(path, O_RDONLY | O_CLOEXEC)) == -1)
		return -1;
	n = read(fd, buf, len - 1);
	close(fd);
	if (n < 0)
		return -1;
	buf[n] = '\0';
	buf[strcspn(buf, "\n")] = '\0';
	return 0;
}

/* dir/file must read want (a file that is not there: optional). */
static int
cg_want(const char *dir, const char *file, const char *want, int optional)
{
	char	 got[64];

	if (cg_read(dir, file, got, sizeof(got)) == -1) {
		if (optional && errno == ENOENT) {
			fprintf(stderr, "  %s/%s: not there (no swap "
			    "accounting)\n", dir, file);
			return 0;
		}
		fprintf(stderr, "  %s/%s: %s\n", dir, file, strerror(errno));
		return 1;
	}
	fprintf(stderr, "  %s/%s = %s, want %s%s\n", dir, file, got, want,
	    strcmp(got, want) == 0 ? "" : ": FAIL");
	return strcmp(got, want) != 0;
}

static void
test_cgroups(void **state)
{
	struct sandbox_policy	 p;
	struct sandbox		 sb;
	struct sandbox_error	 e;
	struct sandbox_caps	 caps;
	const char		*mem;
	char			 v[32];
	int			 bad = 0;

	(void)state;
	memset(&caps, 0, sizeof(caps));
	if (sandbox_caps_probe(&caps, 0) == -1 || caps.cgroup == 0 ||
	    caps.memcg == 0) {
		print_message("skip: no writable pids and memory cgroups "
		    "for this user\n");
		skip();
	}
	memset(&e, 0, sizeof(e));
	assert_int_equal(profile_policy(&p, "explore", "/", &e), 0);
	p.want = SANDBOX_PIDS | SANDBOX_MEMORY;
	p.require = SANDBOX_PIDS | SANDBOX_MEMORY;
	p.limits.nproc = L_NPROC;
	p.limits.mem_bytes = L_MEM;
	if (sandbox_prepare(&sb, &p, &e) == -1)
		fail_msg("sandbox_prepare: %s", e.msg);
	mem = sb.memcg[0] != '\0' ? sb.memcg : sb.cgroup;
	snprintf(v, sizeof(v), "%d", L_NPROC);
	bad += cg_want(sb.cgroup, "pids.max", v, 0);
	snprintf(v, sizeof(v), "%llu", (unsigned long long)L_MEM);
	if (caps.memcg == 2) {
		bad += cg_want(mem, "memory.max", v, 0);
		bad += cg_want(mem, "memory.swap.max", "0", 1);
	} else {
		bad += cg_want(mem, "memory.limit_in_bytes", v, 0);
		bad += cg_want(mem, "memory.memsw.limit_in_bytes", v, 1);
	}
	sandbox_release(&sb);
	if (bad != 0)
		fail_msg("%d cgroup limits not as the policy asks (above)",
		    bad);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_rlimits),
		cmocka_unit_test(test_cgroups),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}

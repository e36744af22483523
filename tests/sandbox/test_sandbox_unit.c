/*
 * Unit tests of the sandbox library: policies, the SANDBOX_ENV encoding,
 * reports and their check, and the two-phase flow a supervisor uses
 * (sandbox_fork + sandbox_child + exec + sandbox_enter) on this binary
 * re-executed with --enter; sandbox_spawn's child re-executed with --pid1.
 */
#include <sys/types.h>
#include <sys/stat.h>
#include <sys/socket.h>
#include <sys/wait.h>

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
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
#include "sandbox/sandbox_testapi.h"
#include "sandbox/sandbox_int.h"
#include "tests/test_wait.h"

static char	 self_path[PATH_MAX];

static void
test_profiles(void **state)
{
	struct sandbox_policy	 p;
	struct sandbox_error	 e;

	(void)state;
	assert_int_equal(profile_policy(&p, "explore", "/", &e), 0);
	assert_false(p.fs_write);
	assert_false(p.exec);
	assert_string_equal(p.workspace, "/");
	assert_true(p.require & SANDBOX_SECCOMP);
	assert_true(p.require & SANDBOX_LANDLOCK);
	/* Root's masks over /etc/shadow and the SSH host keys are mounts. */
	assert_int_equal((p.require & SANDBOX_MNTNS) != 0, geteuid() == 0);
	assert_int_equal(profile_policy(&p, "general", "/tmp", &e),
	    0);
	assert_true(p.fs_write);
	assert_true(p.exec);
	assert_true(p.require & SANDBOX_MNTNS);
	/* A writable "/" is refused. */
	assert_int_equal(profile_policy(&p, "general", "/", &e),
	    -1);
	assert_non_null(strstr(e.msg, "whole filesystem"));
	assert_int_equal(profile_policy(&p, "test", ".", &e), 0);
	assert_int_equal(p.workspace[0], '/');
	/* Unknown names and missing workspaces are refused by name. */
	assert_int_equal(profile_policy(&p, "root", "/", &e), -1);
	assert_non_null(strstr(e.msg, "unknown profile 'root'"));
	assert_int_equal(profile_policy(&p, "explore",
	    "/nonexistent/ws", &e), -1);
	assert_non_null(strstr(e.msg, "/nonexistent/ws"));
	/* A user profile: write/edit tools and bash, from (fs_write, exec). */
	assert_int_equal(sandbox_policy_init(&p, "docs-writer", "/tmp", 1, 0,
	    &e), 0);
	assert_true(p.fs_write);
	assert_false(p.exec);
	assert_int_equal(sandbox_policy_init(&p, "bad;name", "/tmp", 1, 0,
	    &e), -1);
}

static void
test_encode_decode(void **state)
{
	struct sandbox_policy	 p, q;
	struct sandbox_phase1	 ph1 = { SANDBOX_PIDNS | SANDBOX_RLIMITS, 7, 6 };
	struct sandbox_phase1	 back, none = { 0, -1, 0 };
	struct sandbox_error	 e;
	char			 buf[SANDBOX_ENV_LEN];
	size_t			 i;
	static const char *const bad[] = {
		"v2;a=0",
		"v1;a=zz;w=0;x=0;aw=0;want=0;req=0;u=0;ll=-1;lla=0;i=0;n=x;ws=/",
		"v1;a=0;w=7;x=0;aw=0;want=0;req=0;u=0;ll=-1;lla=0;i=0;n=x;ws=/",
		"v1;a=0;w=0;x=0;aw=0;want=0;req=0;u=0;ll=-1;lla=0;i=0;n=x;"
		    "ws=relative",
		"v1;a=0;w=0;x=0;aw=0;want=0;req=0;u=0;ll=-1;lla=0;i=0;n=;ws=/",
		/* The ruleset: missing, on stdio, without or with no known
		 * ABI, or no fd with an ABI. */
		"v1;a=0;w=0;x=0;aw=0;want=0;req=0;u=0;n=x;ws=/",
		"v1;a=0;w=0;x=0;aw=0;want=0;req=0;u=0;ll=2;lla=6;i=0;n=x;ws=/",
		"v1;a=0;w=0;x=0;aw=0;want=0;req=0;u=0;ll=9;lla=0;i=0;n=x;ws=/",
		"v1;a=0;w=0;x=0;aw=0;want=0;req=0;u=0;ll=9;lla=99;i=0;n=x;ws=/",
		"v1;a=0;w=0;x=0;aw=0;want=0;req=0;u=0;ll=-1;lla=6;i=0;n=x;ws=/",
		/* inet is 0 or 1, and present. */
		"v1;a=0;w=0;x=0;aw=0;want=0;req=0;u=0;ll=-1;lla=0;i=2;n=x;ws=/",
		"v1;a=0;w=0;x=0;aw=0;want=0;req=0;u=0;ll=-1;lla=0;n=x;ws=/",
	};

	(void)state;
	assert_int_equal(profile_policy(&p, "test", "/tmp", &e), 0);
	p.allow_weaker = 1;
	assert_int_equal(sandbox_policy_encode(&p, &ph1, buf, sizeof(buf)), 0);
	assert_int_equal(sandbox_policy_decode(buf, &q, &back, &e), 0);
	assert_string_equal(q.name, "test");
	assert_string_equal(q.workspace, p.workspace);
	assert_int_equal(q.fs_write, 1);
	assert_int_equal(q.exec, 1);
	assert_int_equal(q.allow_weaker, 1);
	assert_int_equal(q.require, p.require);
	assert_int_equal(back.applied, SANDBOX_PIDNS | SANDBOX_RLIMITS);
	assert_int_equal(back.landlock_fd, 7);
	assert_int_equal(back.landlock_abi, 6);
	assert_int_equal(sandbox_policy_encode(&p, &none, buf, sizeof(buf)), 0);
	assert_int_equal(sandbox_policy_decode(buf, &q, &back, &e), 0);
	assert_int_equal(back.landlock_fd, -1);
	assert_int_equal(back.landlock_abi, 0);
	assert_int_equal(q.inet, 0);
	/* A backend's policy keeps its sockets across the exec. */
	p.inet = 1;
	assert_int_equal(sandbox_policy_encode(&p, &none, buf, sizeof(buf)), 0);
	assert_int_equal(sandbox_policy_decode(buf, &q, &back, &e), 0);
	assert_int_equal(q.inet, 1);
	/* Too small a buffer, and damaged strings, are errors. */
	assert_int_equal(sandbox_policy_encode(&p, &ph1, buf, 16), -1);
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		if (sandbox_policy_decode(bad[i], &q, &back, &e) != -1)
			fail_msg("decoded: %s", bad[i]);
}

/* The protected paths of a policy: where they are kept, and refusals. */
static void
test_protect(void **state)
{
	struct sandbox_policy	 p;
	struct sandbox_error	 e;
	char			 dir[] = "/tmp/warren-protect.XXXXXX";
	char			 ws[PATH_MAX], path[PATH_MAX * 2], link[PATH_MAX];
	const char		*s;
	unsigned		 flags;
	int			 i;

	(void)state;
	assert_non_null(mkdtemp(dir));
	snprintf(ws, sizeof(ws), "%s/ws", dir);
	assert_int_equal(mkdir(ws, 0755), 0);
	assert_int_equal(profile_policy(&p, "explore", ws, &e), 0);
	/* .git and .warren, read-only, by default. */
	assert_int_equal(p.nprotect, 2);
	assert_string_equal(sandbox_policy_protected(&p, 0, &flags), ".git");
	assert_int_equal(flags, SANDBOX_PROTECT_RO);
	assert_string_equal(sandbox_policy_protected(&p, 1, &flags),
	    ".warren");
	assert_null(sandbox_policy_protected(&p, 2, &flags));
	/* A read-only profile needs no mount namespace for read-only paths
	 * (Landlock and seccomp refuse the writes), but does for a mask
	 * under the workspace: nothing else keeps it from reading. */
	if (geteuid() != 0)
		assert_false(p.require & SANDBOX_MNTNS);
	/* Under the workspace, even not there yet: kept relative to it. */
	snprintf(path, sizeof(path), "%s/.local/state/warren", ws);
	assert_int_equal(sandbox_policy_protect(&p, path, SANDBOX_PROTECT_MASK,
	    &e), 0);
	assert_string_equal(sandbox_policy_protected(&p, 2, &flags),
	    ".local/state/warren");
	assert_int_equal(flags, SANDBOX_PROTECT_MASK);
	assert_true(p.require & SANDBOX_MNTNS);
	/* Through a symlink to the workspace: found under it all the same. */
	snprintf(link, sizeof(link), "%s/link", dir);
	assert_int_equal(symlink("ws", link), 0);
	snprintf(path, sizeof(path), "%s/.config//warren/", link);
	assert_int_equal(sandbox_policy_protect(&p, path, SANDBOX_PROTECT_RO,
	    &e), 0);
	assert_string_equal(sandbox_policy_protected(&p, 3, NULL),
	    ".config/warren");
	/* The same path again: one entry, both flags. */
	assert_int_equal(sandbox_policy_protect(&p, ".git",
	    SANDBOX_PROTECT_MASK, &e), 0);
	assert_int_equal(p.nprotect, 4);
	sandbox_policy_protected(&p, 0, &flags);
	assert_int_equal(flags, SANDBOX_PROTECT_RO | SANDBOX_PROTECT_MASK);
	/* Outside the workspace: absolute and canonical. */
	assert_int_equal(sandbox_policy_protect(&p, link,
	    SANDBOX_PROTECT_MASK, &e), -1);
	assert_non_null(strstr(e.msg, "lies inside"));
	snprintf(path, sizeof(path), "%s/state", dir);
	assert_int_equal(sandbox_policy_protect(&p, path,
	    SANDBOX_PROTECT_MASK, &e), 0);
	assert_string_equal(sandbox_policy_protected(&p, 4, NULL), path);
	/* Missing from the top: kept as given, empty parts dropped. */
	assert_int_equal(sandbox_policy_protect(&p, "/nonexistent-warren//a/",
	    SANDBOX_PROTECT_MASK, &e), 0);
	assert_string_equal(sandbox_policy_protected(&p, 5, NULL),
	    "/nonexistent-warren/a");
	/* Refused: a workspace inside (or equal to) the path, "." and ".."
	 * parts, no flags, and a full policy. */
	assert_int_equal(sandbox_policy_protect(&p, ws, SANDBOX_PROTECT_RO,
	    &e), -1);
	assert_int_equal(sandbox_policy_protect(&p, dir, SANDBOX_PROTECT_RO,
	    &e), -1);
	assert_int_equal(sandbox_policy_protect(&p, "a/../b",
	    SANDBOX_PROTECT_RO, &e), -1);
	assert_int_equal(sandbox_policy_protect(&p, "./a", SANDBOX_PROTECT_RO,
	    &e), -1);
	assert_int_equal(sandbox_policy_protect(&p, "a", 0, &e), -1);
	assert_int_equal(sandbox_policy_protect(&p, "a", 4, &e), -1);
	for (i = p.nprotect; i < SANDBOX_PROTECT_MAX; i++) {
		snprintf(path, sizeof(path), "d%d", i);
		assert_int_equal(sandbox_policy_protect(&p, path,
		    SANDBOX_PROTECT_RO, &e), 0);
	}
	assert_int_equal(sandbox_policy_protect(&p, "one-more",
	    SANDBOX_PROTECT_RO, &e), -1);
	assert_int_equal(e.errnum, ENOSPC);
	s = sandbox_policy_protected(&p, SANDBOX_PROTECT_MAX - 1, NULL);
	snprintf(path, sizeof(path), "d%d", SANDBOX_PROTECT_MAX - 1);
	assert_string_equal(s, path);
	assert_int_equal(unlink(link), 0);
	assert_int_equal(rmdir(ws), 0);
	assert_int_equal(rmdir(dir), 0);
}

static void
test_report(void **state)
{
	struct sandbox_policy	 p;
	struct sandbox_report	 r, back;
	struct sandbox_error	 e;
	const char		*strs[SANDBOX_REPORT_MAX + 1];
	char			 line[1024];
	int			 i;

	(void)state;
	assert_int_equal(profile_policy(&p, "general", "/tmp", &e),
	    0);
	sandbox_report_init(&r, p.require);
	/* Every layer a root worker can have (no user namespace). */
	sandbox_report_fill(&r, SANDBOX_ALL & ~SANDBOX_USERNS, 7, 65534, 1);
	assert_false(r.weaker);
	assert_int_equal(r.nlayers, SANDBOX_REPORT_MAX);
	sandbox_report_string(&r, line, sizeof(line));
	assert_non_null(strstr(line, "landlock:abi7"));
	assert_non_null(strstr(line, "cgroup:pids"));
	assert_non_null(strstr(line, "cgroup:memory"));
	assert_non_null(strstr(line, "uid:65534"));
	assert_non_null(strstr(line, "seccomp"));
	/* Round trip through the strings of a hello. */
	for (i = 0; i < r.nlayers; i++)
		strs[i] = r.layers[i];
	if (sandbox_report_parse(&back, strs, r.nlayers, &e) == -1)
		fail_msg("parse: %s", e.msg);
	assert_int_equal(back.applied, r.applied);
	assert_int_equal(back.landlock_abi, 7);
	assert_int_equal(sandbox_report_check(&p, &back, &e), 0);
	/* A worker without seccomp is refused, naming the layer... */
	sandbox_report_fill(&r, SANDBOX_ALL & ~SANDBOX_SECCOMP, 7, 1000, 1);
	assert_true(r.weaker);
	for (i = 0; i < r.nlayers; i++)
		strs[i] = r.layers[i];
	assert_int_equal(sandbox_report_parse(&back, strs, r.nlayers, &e), 0);
	assert_int_equal(sandbox_report_check(&p, &back, &e), -1);
	assert_true(e.missing);
	assert_non_null(strstr(e.msg, "seccomp"));
	/* ...unless the user accepted a weaker sandbox. */
	p.allow_weaker = 1;
	assert_int_equal(sandbox_report_check(&p, &back, &e), 0);
	/* Unknown, duplicate, overlong and too many strings. */
	strs[0] = "landlock:abi7";
	strs[1] = "magic";
	assert_int_equal(sandbox_report_parse(&back, strs, 2, &e), -1);
	strs[1] = "landlock:abi6";
	assert_int_equal(sandbox_report_parse(&back, strs, 2, &e), -1);
	strs[1] = "uid:0";
	assert_int_equal(sandbox_report_parse(&back, strs, 2, &e), -1);
	strs[1] = "seccompseccompseccompseccompseccompseccomp";
	assert_int_equal(sandbox_report_parse(&back, strs, 2, &e), -1);
	assert_int_equal(sandbox_report_parse(&back, strs,
	    SANDBOX_REPORT_MAX + 1, &e), -1);
	assert_string_equal(sandbox_layer_name(SANDBOX_PIDNS), "pidns");
}

/* Everything a child writes to the pipe pfd, then its wait status. */
static int
child_output(int pfd[2], pid_t pid, char *out, size_t len)
{
	ssize_t	 n;
	int	 status;

	close(pfd[1]);
	if ((n = test_read(pfd[0], out, len - 1, 240, "the output of "
	    "child_output's child")) == -1) {
		kill(pid, SIGKILL);
		(void)test_waitpid(pid, 10, "child_output's child, killed");
		fail_msg("child_output: its child (pid %d) had not closed its "
		    "output after 240 s", (int)pid);
	}
	out[n] = '\0';
	close(pfd[0]);
	assert_true((status = test_waitpid(pid, 240,
	    "the child of child_output")) != -1);
	return status;
}

/* The supervisor's way: fork, phase 1, exec with sb->env, phase 2. */
static void
test_two_phases(void **state)
{
	struct sandbox_policy	 p;
	struct sandbox_error	 e;
	struct sandbox		 sb;
	char			 out[2048];
	char			*envp[2], *argv[3];
	int			 pfd[2], keep[2], status;
	pid_t			 pid;

	(void)state;
	assert_int_equal(profile_policy(&p, "explore", ".", &e), 0);
	strlcpy(p.program, self_path, sizeof(p.program));
	if (sandbox_prepare(&sb, &p, &e) == -1) {
		fail_msg("sandbox_prepare: %s", e.msg);
		return;
	}
	assert_int_equal(pipe(pfd), 0);
	pid = sandbox_fork(&sb, &e);
	assert_int_not_equal(pid, -1);
	if (pid == 0) {
		/* The IPC fds of a worker: 3 and 4 (here both the pipe). */
		if (dup2(pfd[1], 4) == -1 || dup2(pfd[1], 3) == -1)
			_exit(90);
		keep[0] = 3;
		keep[1] = 4;
		if (sandbox_child(&sb, keep, 2, &e) == -1) {
			dprintf(4, "child: %s\n", e.msg);
			_exit(91);
		}
		envp[0] = sb.env;
		envp[1] = NULL;
		argv[0] = self_path;
		argv[1] = "--enter";
		argv[2] = NULL;
		execve(self_path, argv, envp);
		_exit(92);
	}
	status = child_output(pfd, pid, out, sizeof(out));
	sandbox_release(&sb);
	printf("%s", out);
	assert_true(WIFEXITED(status));
	assert_int_equal(WEXITSTATUS(status), 0);
	assert_non_null(strstr(out, "seccomp"));
	assert_non_null(strstr(out, "socket: blocked"));
	assert_non_null(strstr(out, "exec: blocked"));
	assert_non_null(strstr(out, "fd 5: closed"));
}

/* What a sandbox_spawn child is told, and writes its end to. */
struct spawn_arg {
	int	 wfd;		/* its fd 3: it says who it is */
	int	 rfd;		/* its fd 4: it exits at EOF */
	int	 fail;
};

static void __attribute__((noreturn))
spawn_exec_self(struct sandbox *sb, int rc, struct sandbox_error *e,
    void *arg)
{
	char	*argv[] = { self_path, "--pid1", NULL };
	char	*envp[] = { sb->env, NULL };

	(void)arg;
	if (rc == -1) {
		dprintf(3, "child: %s\n", e->msg);
		_exit(91);
	}
	execve(self_path, argv, envp);
	_exit(92);
}

static void
spawn_fn(struct sandbox *sb, void *arg)
{
	static const int	 keep[] = { 3, 4 };
	const struct spawn_arg	*a = arg;
	struct sandbox_error	 e;

	if (a->fail)
		_exit(77);
	if (dup2(a->wfd, 3) == -1 || dup2(a->rfd, 4) == -1)
		_exit(90);
	/* The child's own copy: the parent must not see these. */
	strlcpy(sb->note, "written by the child", sizeof(sb->note));
	sb->exec_fn = spawn_exec_self;
	(void)sandbox_child(sb, keep, 2, &e);
	_exit(93);
}

/*
 * sandbox_spawn, the workers' way: the program is pid 1 with no init, it
 * has exec'd by the time sandbox_spawn returns, and the child's writes to
 * its sandbox do not reach the parent's although it shared our memory.
 */
static void
test_spawn(void **state)
{
	struct sandbox_policy	 p;
	struct sandbox_error	 e;
	struct sandbox		 sb;
	struct spawn_arg	 a;
	char			 exe[PATH_MAX], out[256], want[64];
	char			 link[64];
	ssize_t			 n;
	int			 pfd[2], hold[2], status;
	pid_t			 pid;

	(void)state;
	assert_int_equal(profile_policy(&p, "explore", ".", &e), 0);
	assert_int_equal(sandbox_prepare(&sb, &p, &e), 0);
	assert_int_equal(pipe(pfd), 0);
	assert_int_equal(pipe(hold), 0);
	a.wfd = pfd[1];
	a.rfd = hold[0];
	a.fail = 0;
	pid = sandbox_spawn(&sb, spawn_fn, &a, &e);
	assert_true(pid > 0);
	snprintf(link, sizeof(link), "/proc/%d/exe", (int)pid);
	n = readlink(link, exe, sizeof(exe) - 1);
	assert_true(n > 0);
	exe[n] = '\0';
	assert_string_equal(exe, self_path);
	assert_int_equal(sb.pid, pid);
	assert_int_equal(sb.direct, 0);
	assert_null(sb.exec_fn);
	assert_null(strstr(sb.note, "written by the child"));
	assert_int_equal(sb.env[0], '\0');
	close(hold[0]);
	close(hold[1]);
	status = child_output(pfd, pid, out, sizeof(out));
	printf("%s", out);
	assert_true(WIFEXITED(status));
	assert_int_equal(WEXITSTATUS(status), 0);
	if (sb.planned & SANDBOX_PIDNS)
		strlcpy(want, "pid 1 ppid 0\n", sizeof(want));
	else
		snprintf(want, sizeof(want), "pid %d ppid %d\n", (int)pid,
		    (int)getpid());
	assert_string_equal(out, want);
	sandbox_release(&sb);

	/* A child that dies before its exec lets us go too, with its code. */
	assert_int_equal(sandbox_prepare(&sb, &p, &e), 0);
	a.fail = 1;
	pid = sandbox_spawn(&sb, spawn_fn, &a, &e);
	assert_true(pid > 0);
	assert_true((status = test_waitpid(pid, 240,
	    "the child of test_spawn")) != -1);
	assert_true(WIFEXITED(status));
	assert_int_equal(WEXITSTATUS(status), 77);
	sandbox_release(&sb);
}

/* sandbox_apply_self in a child: no namespaces, but the filter and
 * Landlock hold, and the report says what was left out. */
static void
test_apply_self(void **state)
{
	struct sandbox_policy	 p;
	struct sandbox_report	 r;
	struct sandbox_error	 e;
	pid_t			 pid;
	int			 status, fd;

	(void)state;
	assert_int_equal(profile_policy(&p, "explore", "/tmp", &e),
	    0);
	p.allow_weaker = 1;
	fflush(NULL);
	pid = fork();
	assert_int_not_equal(pid, -1);
	if (pid == 0) {
		if (sandbox_apply_self(&p, &r, &e) == -1)
			_exit(1);
		if (!(r.applied & SANDBOX_SECCOMP) ||
		    !(r.applied & SANDBOX_LANDLOCK) ||
		    (r.applied & SANDBOX_MNTNS))
			_exit(2);
		if (socket(AF_INET, SOCK_STREAM, 0) != -1 || errno != EPERM)
			_exit(3);
		if ((fd = open("/tmp/warren-apply-self", O_WRONLY | O_CREAT,
		    0600)) != -1 || (errno != EPERM && errno != EACCES))
			_exit(4);
		if (open("/etc/hostname", O_RDONLY) == -1 && errno != ENOENT)
			_exit(5);
		_exit(0);
	}
	assert_true((status = test_waitpid(pid, 240,
	    "the child of test_apply_self")) != -1);
	assert_true(WIFEXITED(status));
	assert_int_equal(WEXITSTATUS(status), 0);
}

/* A layer the profile needs but cannot have: refused by name, or run
 * weaker when the user accepts it. */
static void
test_missing_layer(void **state)
{
	struct sandbox_policy	 p;
	struct sandbox_error	 e;
	struct sandbox		 sb;

	(void)state;
	assert_int_equal(profile_policy(&p, "general", ".", &e), 0);
	p.want &= ~SANDBOX_MNTNS;
	memset(&e, 0, sizeof(e));
	assert_int_equal(sandbox_prepare(&sb, &p, &e), -1);
	assert_true(e.missing);
	assert_non_null(strstr(e.msg, "mntns"));
	assert_non_null(strstr(e.msg, "general"));
	p.allow_weaker = 1;
	assert_int_equal(sandbox_prepare(&sb, &p, &e), 0);
	assert_non_null(strstr(sb.note, "weaker"));
	sandbox_release(&sb);
}

/* A sandbox exec ends in well under this; one that does not is a hang
 * (a broken flag), failed now rather than at ctest's timeout. */
#define RUN_WARREN_S	60

static long long
run_warren_ms(void)
{
	struct timespec	ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* argv as one line, for a message (static buffer). */
static const char *
run_warren_line(const char *const *argv)
{
	static char	line[1024];
	size_t		len = 0;

	line[0] = '\0';
	for (; *argv != NULL && len < sizeof(line); argv++)
		len += (size_t)snprintf(line + len, sizeof(line) - len, "%s%s",
		    len > 0 ? " " : "", *argv);
	return line;
}

/* The child's output on fd into out (past outlen - 1 bytes, read and
 * dropped) until its end, within RUN_WARREN_S: 0; -1 past it. */
static int
run_warren_read(int fd, char *out, size_t outlen)
{
	struct pollfd	 pfd = { fd, POLLIN, 0 };
	long long	 t0 = run_warren_ms(), left;
	char		 drop[4096];
	size_t		 got = 0;
	ssize_t		 r;

	for (;;) {
		left = RUN_WARREN_S * 1000LL - (run_warren_ms() - t0);
		if (left <= 0 || poll(&pfd, 1, (int)left) == 0)
			return -1;
		if (got < outlen - 1)
			r = read(fd, out + got, outlen - 1 - got);
		else
			r = read(fd, drop, sizeof(drop));
		if (r == -1 && errno == EINTR)
			continue;
		if (r <= 0)
			break;
		if (got < outlen - 1)
			got += (size_t)r;
	}
	out[got] = '\0';
	return 0;
}

/* Run warren with argv; its exit status (128 + signal), output in out.
 * A run whose output has not ended within RUN_WARREN_S fails the test,
 * naming the command. */
static int
run_warren(char *out, size_t outlen, const char *const *args)
{
	const char	*argv[32];
	int		 pfd[2], n = 0, status, rd;
	pid_t		 pid;

	argv[n++] = "warren";
	while (*args != NULL && n < 31)
		argv[n++] = *args++;
	argv[n] = NULL;
	if (pipe(pfd) == -1 || (pid = fork()) == -1)
		return -1;
	if (pid == 0) {
		dup2(pfd[1], 1);
		dup2(pfd[1], 2);
		close(pfd[0]);
		execv(getenv("WARREN_BIN"), (char *const *)(uintptr_t)argv);
		_exit(99);
	}
	close(pfd[1]);
	rd = run_warren_read(pfd[0], out, outlen);
	close(pfd[0]);
	if (rd == -1) {
		kill(pid, SIGKILL);
		(void)waitpid(pid, NULL, 0);	/* after SIGKILL: it ends */
		fail_msg("%s: its output had not ended after %d s: killed",
		    run_warren_line(argv), RUN_WARREN_S);
	}
	if ((status = test_waitpid(pid, RUN_WARREN_S, run_warren_line(argv)))
	    == -1)
		fail_msg("%s: closed its output but had not ended after %d s",
		    run_warren_line(argv), RUN_WARREN_S);
	return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

#define EXEC(...) run_warren(out, sizeof(out), (const char *const []){ \
	"sandbox", "exec", __VA_ARGS__, NULL })

static void
test_cli_exit_codes(void **state)
{
	char	 out[4096];

	(void)state;
	if (getenv("WARREN_BIN") == NULL)
		fail_msg("WARREN_BIN is not set: run this test through ctest");
	assert_int_equal(EXEC("--profile", "test", "--", "sh", "-c",
	    "exit 3"), 3);
	assert_string_equal(out, "");
	assert_int_equal(EXEC("--profile", "test", "--", "sh", "-c",
	    "kill -9 $$"), 128 + 9);
	assert_int_equal(EXEC("--profile", "explore", "--",
	    "/nonexistent/cmd"), 127);
	assert_int_equal(EXEC("--profile", "explore", "--",
	    "no-such-command-warren"), 127);
	assert_int_equal(EXEC("--profile", "explore", "--", "/etc/passwd"),
	    126);
	assert_int_equal(EXEC("--profile", "nosuch", "--", "true"), 125);
	assert_non_null(strstr(out, "unknown profile"));
	assert_int_equal(EXEC("--profile", "explore", "--timeout", "x", "--",
	    "true"), 125);
	assert_int_equal(EXEC("--profile", "explore", "--rlimit", "cpu=-1",
	    "--", "true"), 125);
	assert_int_equal(EXEC("--profile", "test", "--timeout", "0.5", "--",
	    "sleep", "30"), 124);
	/* The timeout's SIGTERM reaches the command (forwarded by the
	 * sandbox's pid 1): its trap runs before the SIGKILL 2 s later. */
	assert_int_equal(EXEC("--profile", "test", "--timeout", "0.5", "--",
	    "sh", "-c", "trap 'echo got-TERM; exit 0' TERM; sleep 30 & wait"),
	    124);
	if (strstr(out, "got-TERM") == NULL)
		fail_msg("the timeout's SIGTERM never reached the command: "
		    "\"%s\"", out);
	/* --rlimit fsize is met as in a shell: the command's write past it
	 * is killed by SIGXFSZ (153), though warren ignores the signal. */
	assert_int_equal(EXEC("--profile", "test", "--rlimit", "fsize=65536",
	    "--", "sh", "-c", "head -c 100000 /dev/zero > /tmp/fsz.$$; "
	    "s=$?; rm -f /tmp/fsz.$$; exit $s"), 153);
	/* -v names the layers; a no-exec profile names the denied exec. */
	assert_int_equal(EXEC("-v", "--profile", "explore", "--", "sh", "-c",
	    "/bin/true"), 126);
	assert_non_null(strstr(out, "seccomp"));
	assert_non_null(strstr(out, "landlock:abi"));
	assert_non_null(strstr(out, "tried execve: denied"));
	assert_int_equal(run_warren(out, sizeof(out), (const char *const []){
	    "sandbox", "check", NULL }), 0);
	assert_non_null(strstr(out, "landlock"));
	assert_non_null(strstr(out, "explore  ok"));
	/* The memory layer, whichever this machine gives. */
	assert_non_null(strstr(out, "\n  memory           "));
	assert_non_null(strstr(out, "memory cgroup"));
	assert_int_equal(EXEC("--profile", "explore", "--rlimit", "mem=x",
	    "--", "true"), 125);
	assert_non_null(strstr(out, "tmpfs or mem"));
}

/*
 * What the protected paths refuse before anything runs: a .git or
 * .warren that is a symlink (planted: never followed) or neither a file
 * nor a directory, and a workspace inside warren's state directory.
 */
static void
test_cli_protect(void **state)
{
	struct sandbox_caps	 c;
	char			 dir[] = "/tmp/warren-cliprot.XXXXXX";
	char			 out[4096], ws[PATH_MAX], path[PATH_MAX + 16];
	char			 etc[64];

	(void)state;
	sandbox_caps_probe(&c, 1);
	if (!c.mntns)
		skip();
	assert_non_null(mkdtemp(dir));
	snprintf(ws, sizeof(ws), "%s/ws", dir);
	assert_int_equal(mkdir(ws, 0755), 0);
	snprintf(path, sizeof(path), "%s/.git", ws);
	assert_int_equal(symlink(dir, path), 0);
	assert_int_equal(EXEC("--profile", "general", "--workspace", ws, "--",
	    "true"), 125);
	assert_non_null(strstr(out, ".git is, or lies under, a symlink"));
	assert_int_equal(unlink(path), 0);
	snprintf(path, sizeof(path), "%s/.warren", ws);
	assert_int_equal(mkfifo(path, 0600), 0);
	assert_int_equal(EXEC("--profile", "general", "--workspace", ws, "--",
	    "true"), 125);
	assert_non_null(strstr(out, "neither a directory nor a file"));
	assert_int_equal(unlink(path), 0);
	assert_int_equal(EXEC("--profile", "general", "--workspace", ws, "--",
	    "true"), 0);
	/* Warren's state directory under a symlink to nowhere (planted
	 * where the directory will be): refused the same way. One that
	 * resolves is followed when the policy is made, by warren. */
	snprintf(path, sizeof(path), "%s/st", ws);
	assert_int_equal(symlink("/nonexistent-warren-target", path), 0);
	setenv("XDG_STATE_HOME", path, 1);
	assert_int_equal(EXEC("--profile", "explore", "--workspace", ws, "--",
	    "true"), 125);
	assert_non_null(strstr(out, "symlink"));
	assert_int_equal(unlink(path), 0);
	/* Root: a state directory outside the workspace, but under /etc,
	 * which Landlock lets every profile read, is masked all the same. */
	if (geteuid() == 0) {
		snprintf(etc, sizeof(etc), "/etc/warren-unit-%d",
		    (int)getpid());
		setenv("XDG_STATE_HOME", etc, 1);
		assert_int_equal(mkdir(etc, 0755), 0);
		snprintf(path, sizeof(path), "%s/warren", etc);
		assert_int_equal(mkdir(path, 0755), 0);
		snprintf(path, sizeof(path), "%s/warren/db", etc);
		assert_int_equal(close(open(path, O_WRONLY | O_CREAT, 0644)),
		    0);
		assert_int_equal(EXEC("--profile", "explore", "--workspace", ws,
		    "--", "/bin/cat", path), 1);
		assert_non_null(strstr(out, "Permission denied"));
		assert_int_equal(unlink(path), 0);
		snprintf(path, sizeof(path), "%s/warren", etc);
		assert_int_equal(rmdir(path), 0);
		assert_int_equal(rmdir(etc), 0);
	}
	/* A workspace inside warren's state directory. */
	setenv("XDG_STATE_HOME", dir, 1);
	snprintf(path, sizeof(path), "%s/warren", dir);
	assert_int_equal(rename(ws, path), 0);
	assert_int_equal(EXEC("--profile", "explore", "--workspace", path,
	    "--", "true"), 125);
	assert_non_null(strstr(out, "lies inside"));
	unsetenv("XDG_STATE_HOME");
	assert_int_equal(rmdir(path), 0);
	assert_int_equal(rmdir(dir), 0);
}

/* The worker side of test_two_phases: sandbox_enter, then probe. */
static int
enter_main(void)
{
	struct sandbox_report	 r;
	struct sandbox_error	 e;
	char			 line[1024];
	int			 fd;

	if (sandbox_enter(NULL, &r, &e) == -1) {
		dprintf(4, "sandbox_enter: %s\n", e.msg);
		return 1;
	}
	sandbox_report_string(&r, line, sizeof(line));
	dprintf(4, "worker report: %s\n", line);
	if (getenv(SANDBOX_ENV) != NULL)
		return 2;
	fd = socket(AF_INET, SOCK_STREAM, 0);
	dprintf(4, "socket: %s\n", fd == -1 && errno == EPERM ? "blocked" :
	    "allowed");
	execl("/bin/true", "true", (char *)NULL);
	dprintf(4, "exec: %s\n", errno == EPERM || errno == EACCES ?
	    "blocked" : "allowed");
	dprintf(4, "fd 5: %s\n", fcntl(5, F_GETFD) == -1 ? "closed" : "open");
	return 0;
}

/* sandbox_spawn's program: who it is on fd 3, then alive until EOF on 4. */
static int
pid1_main(void)
{
	char	 c;

	if (dprintf(3, "pid %d ppid %d\n", (int)getpid(), (int)getppid()) <= 0)
		return 1;
	while (read(4, &c, 1) > 0)
		;
	return 0;
}

/* Leftover groups of a dead spawner, or under our own pid, go; another
 * live owner's and others' stay. */
static void
test_cgroup_sweep(void **state)
{
	char	 dir[] = "/tmp/warren-sweep.XXXXXX", p[256];
	char	*names[6];
	pid_t	 dead;
	size_t	 i;
	int	 st;

	(void)state;
	assert_non_null(mkdtemp(dir));
	/* A pid that was ours and is reaped: gone, as a killed spawner's. */
	if ((dead = fork()) == 0)
		_exit(0);
	assert_true(dead > 0);
	assert_true((st = test_waitpid(dead, 240,
	    "the child of test_cgroup_sweep")) != -1);
	assert_true(asprintf(&names[0], "warren-%d-0", (int)dead) > 0);
	assert_true(asprintf(&names[1], "warren-%d-17", (int)dead) > 0);
	assert_true(asprintf(&names[2], "warren-%d-2", (int)getpid()) > 0);
	assert_true(asprintf(&names[3], "warren-%d-3", (int)getppid()) > 0);
	assert_true(asprintf(&names[4], "warren-%d-x", (int)dead) > 0);
	assert_true(asprintf(&names[5], "other-%d-0", (int)dead) > 0);
	for (i = 0; i < 6; i++) {
		snprintf(p, sizeof(p), "%s/%s", dir, names[i]);
		assert_int_equal(mkdir(p, 0755), 0);
	}
	assert_int_equal(sandbox_cgroup_sweep_dir(dir), 3);
	for (i = 0; i < 6; i++) {
		snprintf(p, sizeof(p), "%s/%s", dir, names[i]);
		assert_int_equal(access(p, F_OK) == 0, i >= 3);
		(void)rmdir(p);
		free(names[i]);
	}
	assert_int_equal(sandbox_cgroup_sweep_dir("/nonexistent/warren"), 0);
	assert_int_equal(rmdir(dir), 0);
}

int
main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_profiles),
		cmocka_unit_test(test_encode_decode),
		cmocka_unit_test(test_protect),
		cmocka_unit_test(test_report),
		cmocka_unit_test(test_two_phases),
		cmocka_unit_test(test_spawn),
		cmocka_unit_test(test_missing_layer),
		cmocka_unit_test(test_apply_self),
		cmocka_unit_test(test_cli_exit_codes),
		cmocka_unit_test(test_cli_protect),
		cmocka_unit_test(test_cgroup_sweep),
	};

	if (argc == 2 && strcmp(argv[1], "--enter") == 0)
		return enter_main();
	if (argc == 2 && strcmp(argv[1], "--pid1") == 0)
		return pid1_main();
	if (realpath("/proc/self/exe", self_path) == NULL)
		return 1;
	return cmocka_run_group_tests(tests, NULL, NULL);
}

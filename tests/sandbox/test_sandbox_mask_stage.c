/*
 * The mask file's tmpfs (sandbox_protect.c:sandbox_protect_stage): a
 * masked file is an empty mode-000 file of a read-only tmpfs, and making
 * it costs no RCU grace period. Every unmount waits for one (the
 * kernel's namespace_unlock), 2-20 ms on the build VM; the tmpfs used to
 * be mounted on /tmp and detached again in every sandbox that masks a
 * file, which root-started ones do (the host's password hashes). It is
 * now attached beneath /proc and left there. A child that waits for a
 * grace period sleeps (a voluntary context switch, counted by
 * getrusage); one that does not runs sandbox_protect_mounts through
 * without. As an ordinary user the mount beneath the user namespace's
 * locked /proc is refused and the tmpfs is staged and detached as
 * before: there only the mask itself is checked.
 */
#include <sys/types.h>
#include <sys/mount.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <sched.h>
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

#define TRIALS		6

/* What the child tells its parent. */
struct mask_result {
	int		 rc;
	long		 sleeps;	/* voluntary context switches */
	unsigned	 mode;		/* the masked file's, after */
	long long	 size;
	int		 write_errno;	/* of an open for writing */
	char		 err[SANDBOX_ERR_LEN];
};

static char	ws[] = "/tmp/warren-mask-stage.XXXXXX";

/* As an ordinary user: root of a user namespace of our own. */
static int
userns(void)
{
	char	 map[64];
	uid_t	 uid = geteuid();
	gid_t	 gid = getegid();
	int	 fd;

	if (unshare(CLONE_NEWUSER) == -1)
		return -1;
	if ((fd = open("/proc/self/setgroups", O_WRONLY)) != -1) {
		if (write(fd, "deny", 4) != 4) {
			close(fd);
			return -1;
		}
		close(fd);
	}
	snprintf(map, sizeof(map), "0 %u 1", (unsigned)uid);
	if ((fd = open("/proc/self/uid_map", O_WRONLY)) == -1 ||
	    write(fd, map, strlen(map)) != (ssize_t)strlen(map))
		return -1;
	close(fd);
	snprintf(map, sizeof(map), "0 %u 1", (unsigned)gid);
	if ((fd = open("/proc/self/gid_map", O_WRONLY)) == -1 ||
	    write(fd, map, strlen(map)) != (ssize_t)strlen(map))
		return -1;
	close(fd);
	return 0;
}

static void __attribute__((noreturn))
child(const struct sandbox_policy *p, int out)
{
	struct mask_result	 r;
	struct sandbox_error	 e;
	struct rusage		 ru0, ru1;
	struct stat		 st;
	char			 path[PATH_MAX];
	int			 wsfd, fd;

	memset(&r, 0, sizeof(r));
	r.rc = -1;
	if ((geteuid() != 0 && userns() == -1) || unshare(CLONE_NEWNS) == -1 ||
	    mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) == -1 ||
	    (wsfd = open(ws, O_PATH | O_DIRECTORY | O_CLOEXEC)) == -1) {
		snprintf(r.err, sizeof(r.err), "a mount namespace: %s",
		    strerror(errno));
		_exit(write(out, &r, sizeof(r)) == (ssize_t)sizeof(r) ? 0 : 1);
	}
	getrusage(RUSAGE_SELF, &ru0);
	r.rc = sandbox_protect_mounts(p, wsfd, 0, &e);
	getrusage(RUSAGE_SELF, &ru1);
	r.sleeps = ru1.ru_nvcsw - ru0.ru_nvcsw;
	if (r.rc == -1)
		snprintf(r.err, sizeof(r.err), "%s", e.msg);
	snprintf(path, sizeof(path), "%s/secret.txt", ws);
	if (stat(path, &st) == 0) {
		r.mode = st.st_mode & 07777;
		r.size = (long long)st.st_size;
	}
	if ((fd = open(path, O_WRONLY | O_CLOEXEC)) != -1)
		close(fd);
	else
		r.write_errno = errno;
	_exit(write(out, &r, sizeof(r)) == (ssize_t)sizeof(r) ? 0 : 1);
}

static void
one_trial(const struct sandbox_policy *p, struct mask_result *r)
{
	int	 fd[2], st;
	pid_t	 pid;

	assert_int_equal(pipe(fd), 0);
	if ((pid = fork()) == -1)
		fail_msg("fork: %s", strerror(errno));
	if (pid == 0) {
		close(fd[0]);
		child(p, fd[1]);
	}
	close(fd[1]);
	memset(r, 0, sizeof(*r));
	if (test_read(fd[0], r, sizeof(*r), 60, "the mask child's result") !=
	    (ssize_t)sizeof(*r)) {
		kill(pid, SIGKILL);
		(void)test_waitpid(pid, 10, "the mask child, killed");
		fail_msg("no result from the child (pid %d) within 60 s",
		    (int)pid);
	}
	close(fd[0]);
	assert_true((st = test_waitpid(pid, 60, "the mask child")) != -1);
	if (r->rc == -1)
		fail_msg("sandbox_protect_mounts: %s", r->err);
}

static void
test_mask_no_grace_period(void **state)
{
	struct sandbox_policy	 p;
	struct sandbox_error	 e;
	struct mask_result	 r;
	char			 path[PATH_MAX];
	int			 i, fd, slept = 0;

	(void)state;
	assert_non_null(mkdtemp(ws));
	snprintf(path, sizeof(path), "%s/secret.txt", ws);
	assert_int_not_equal(fd = open(path, O_WRONLY | O_CREAT, 0644), -1);
	assert_int_equal(write(fd, "hunter2\n", 8), 8);
	close(fd);
	assert_int_equal(profile_policy(&p, "general", ws, &e), 0);
	if (sandbox_policy_protect(&p, "secret.txt", SANDBOX_PROTECT_MASK,
	    &e) == -1)
		fail_msg("sandbox_policy_protect: %s", e.msg);
	one_trial(&p, &r);	/* unmeasured: the first touches cold pages */
	for (i = 0; i < TRIALS; i++) {
		one_trial(&p, &r);
		fprintf(stderr, "trial %d: %ld voluntary switches; the mask "
		    "mode %04o, %lld bytes, open for writing: %s\n", i,
		    r.sleeps, r.mode, r.size, strerror(r.write_errno));
		assert_int_equal(r.mode, 0);
		assert_int_equal(r.size, 0);
		assert_int_not_equal(r.write_errno, 0);
		if (r.sleeps > 0)
			slept++;
	}
	unlink(path);
	rmdir(ws);
	if (geteuid() != 0)
		return;	/* staged and detached: it sleeps, as before */
	if (slept > 0)
		fail_msg("%d of %d children slept in sandbox_protect_mounts "
		    "(an unmount's RCU grace period)", slept, TRIALS);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_mask_no_grace_period),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}

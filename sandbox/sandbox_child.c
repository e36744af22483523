/*
 * The child's side, in the order the layers are applied:
 *
 *   phase 1 (child, before exec): userns map, cgroup join, mounts, [pid 1
 *	init], setsid, rlimits, uid drop, close_range
 *   phase 2 (after exec, before untrusted input): caps, no_new_privs,
 *	not dumpable, Landlock, seccomp last
 *
 * A layer a profile requires but this machine cannot give fails the call
 * with e->missing set, unless the policy allows a weaker sandbox; then the
 * report says so (weaker = 1) and the note says what was skipped.
 */

#include <sys/types.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/syscall.h>

#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "sandbox/sandbox_int.h"
#include "sandbox/sandbox_testapi.h"

/* phase 1 */

/* close_range around the fds kept (0-2, keep[] and the two others). */
static int
sandbox_closefds(const int *keep, int nkeep, int also, int also2,
    struct sandbox_error *e)
{
	int	 fds[72], n = 0, i, j, t, lo;

	if (nkeep < 0 || nkeep > 64)
		return sandbox_fail(e, SANDBOX_CLOSEFDS, EINVAL,
		    "%d fds to keep (at most 64)", nkeep);

	for (i = 0; i < 3; i++)
		fds[n++] = i;
	for (i = 0; i < nkeep && n < 70; i++)
		if (keep[i] > 2)
			fds[n++] = keep[i];
	if (also > 2)
		fds[n++] = also;
	if (also2 > 2)
		fds[n++] = also2;
	for (i = 1; i < n; i++)
		for (j = i; j > 0 && fds[j - 1] > fds[j]; j--) {
			t = fds[j];
			fds[j] = fds[j - 1];
			fds[j - 1] = t;
		}
	lo = 0;
	for (i = 0; i < n; i++) {
		if (fds[i] > lo && syscall(SYS_close_range, (unsigned)lo,
		    (unsigned)fds[i] - 1, 0U) == -1)
			return sandbox_fail(e, SANDBOX_CLOSEFDS, errno,
			    "close_range");
		if (fds[i] + 1 > lo)
			lo = fds[i] + 1;
	}
	if (syscall(SYS_close_range, (unsigned)lo, ~0U, 0U) == -1)
		return sandbox_fail(e, SANDBOX_CLOSEFDS, errno, "close_range");
	return 0;
}

void
sandbox_close_from(const struct sandbox *sb, int lowfd)
{
	int	 ll = sb->landlock_fd;

	if (ll >= lowfd) {
		if (ll > lowfd)
			(void)syscall(SYS_close_range, (unsigned)lowfd,
			    (unsigned)ll - 1, 0U);
		lowfd = ll + 1;
	}
	(void)syscall(SYS_close_range, (unsigned)lowfd, ~0U, 0U);
}

/* Phase 1 after the pid-1 split: in the process that will exec. */
static int
sandbox_child_rest(struct sandbox *sb, const int *keep, int nkeep,
    unsigned a, struct sandbox_error *e)
{
	const struct sandbox_policy	*p = &sb->policy;
	struct sandbox_phase1		 ph1;
	int				 nproc = 0;

	if (setsid() == -1)
		return sandbox_fail(e, SANDBOX_SETSID, errno, "setsid%s",
		    errno == EPERM && getpgrp() == getpid() ? " (the child is "
		    "already a process group leader: do not setpgid it, "
		    "sandbox_child starts a session)" : "");
	a |= SANDBOX_SETSID;
	if ((sb->planned & SANDBOX_PIDS) && !(a & SANDBOX_PIDS)) {
		nproc = (int)p->limits.nproc;
		a |= SANDBOX_PIDS;
	}
	if (sandbox_rlimit_apply(&p->limits, nproc, sb->note, sizeof(sb->note),
	    e) == -1)
		return -1;
	a |= SANDBOX_RLIMITS;
	if (sandbox_caps_bound_child((sb->cloneflags & CLONE_NEWUSER) != 0,
	    e) == -1)
		return -1;
	if (sb->planned & SANDBOX_UIDDROP) {
		if (sandbox_caps_uid_drop(p->uid, p->gid, e) == -1)
			return -1;
		a |= SANDBOX_UIDDROP;
	}
	/*
	 * The parent's Landlock ruleset (sandbox_parent_open), with the
	 * rules for our own mounts now that they are done. Phase 2
	 * restricts itself with it, so it stays open across the exec.
	 */
	if (sb->landlock_fd != -1) {
		if (sandbox_landlock_ruleset_own(sb->landlock_fd, p,
		    sb->landlock_abi, e) == -1)
			return -1;
		if (fcntl(sb->landlock_fd, F_SETFD, 0) == -1)
			return sandbox_fail(e, SANDBOX_LANDLOCK, errno,
			    "keep the Landlock ruleset (fd %d) across exec",
			    sb->landlock_fd);
	}
	if (sandbox_closefds(keep, nkeep, sb->sock[1], sb->landlock_fd,
	    e) == -1)
		return -1;
	a |= SANDBOX_CLOSEFDS;
	sb->applied = a;
	ph1.applied = a;
	ph1.landlock_fd = sb->landlock_fd;
	ph1.landlock_abi = sb->landlock_fd != -1 ? sb->landlock_abi : 0;
	memcpy(sb->env, SANDBOX_ENV "=", sizeof(SANDBOX_ENV));
	if (sandbox_policy_encode(p, &ph1, sb->env + sizeof(SANDBOX_ENV),
	    sizeof(sb->env) - sizeof(SANDBOX_ENV)) == -1)
		return sandbox_fail(e, 0, ENAMETOOLONG, "encode %s",
		    SANDBOX_ENV);
	return 0;
}

struct sandbox_vfork {
	struct sandbox		*sb;
	const int		*keep;
	int			 nkeep;
	unsigned		 applied;
	sigset_t		 old;
	struct sandbox_error	*e;
};

#define SANDBOX_VFORK_STACK	(512 * 1024)

/* The command's process, sharing pid 1's memory until it execs. */
static int
sandbox_vfork_main(void *arg)
{
	struct sandbox_vfork	*v = arg;
	int			 rc;

	sandbox_ns_init_restore(&v->old);
	prctl(PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0);
	rc = sandbox_child_rest(v->sb, v->keep, v->nkeep, v->applied, v->e);
	v->sb->exec_fn(v->sb, rc, v->e, v->sb->exec_arg);
	_exit(WARREN_SANDBOX_EXEC_FAILED);
}

/* pid 1 starts the command: vfork-style with exec_fn, else fork(). */
static int
sandbox_child_init(struct sandbox *sb, const int *keep, int nkeep,
    unsigned a, struct sandbox_error *e)
{
	struct sandbox_vfork	 v;
	void			*stack;
	pid_t			 pid;

	memset(&v, 0, sizeof(v));
	sandbox_ns_init_signals(&v.old);
	if (sb->exec_fn != NULL && !SANDBOX_SANITIZER) {
		v.sb = sb;
		v.keep = keep;
		v.nkeep = nkeep;
		v.applied = a;
		v.e = e;
		if ((stack = mmap(NULL, SANDBOX_VFORK_STACK, PROT_READ |
		    PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_STACK, -1,
		    0)) == MAP_FAILED)
			return sandbox_fail(e, SANDBOX_PIDNS, errno,
			    "mmap a stack for the command");
		pid = clone(sandbox_vfork_main, (char *)stack +
		    SANDBOX_VFORK_STACK, CLONE_VM | CLONE_VFORK | SIGCHLD, &v);
		if (pid == -1)
			return sandbox_fail(e, SANDBOX_PIDNS, errno,
			    "clone the command from pid 1");
		munmap(stack, SANDBOX_VFORK_STACK);
		sandbox_ruleset_close(sb);	/* the command has its own */
		sandbox_ns_init(pid);
	}
	if ((pid = fork()) == -1)
		return sandbox_fail(e, SANDBOX_PIDNS, errno,
		    "fork the command from pid 1");
	if (pid != 0) {
		sandbox_ruleset_close(sb);
		sandbox_ns_init(pid);
	}
	sandbox_ns_init_restore(&v.old);
	prctl(PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0);
	return 0;
}

int
sandbox_child(struct sandbox *sb, const int *keep, int nkeep,
    struct sandbox_error *e)
{
	const struct sandbox_policy	*p = &sb->policy;
	int				 flags = sb->cloneflags, rc;
	unsigned			 a = 0;

	prctl(PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0);
	if (flags & CLONE_NEWUSER) {
		if (sandbox_ns_userns_map(sb->outer_uid, sb->outer_gid,
		    e) == -1)
			goto done;
		a |= SANDBOX_USERNS;
	}
	if (sb->cgroup[0] != '\0') {
		if (sandbox_cgroup_join(sb->cgroup, sb->cgroup_version,
		    SANDBOX_PIDS, e) == -1)
			goto done;
		a |= SANDBOX_PIDS;
	}
	if (sb->memcg[0] != '\0' &&
	    sandbox_cgroup_join(sb->memcg, sb->caps.memcg,
	    SANDBOX_MEMORY, e) == -1)
		goto done;
	if (sb->memory)
		a |= SANDBOX_MEMORY;
	if (flags & CLONE_NEWNS) {
		/*
		 * A read-only profile with a Landlock ruleset gets neither a
		 * private /tmp and /dev/shm nor read-only binds of /proc/sys
		 * and /proc/sysrq-trigger, nor read-only protected paths.
		 * Its ruleset grants nothing under the first two and only
		 * reads under /proc and the workspace, and seccomp denies it
		 * every open for writing and every rename: two walls
		 * already, where those mounts, four a worker, would hide
		 * only what it cannot open. It keeps the masks (what it
		 * must not even read). A child whose ruleset fails to apply
		 * does not run (phase 2). Read-write profiles keep them all.
		 */
		if (sandbox_ns_mounts(p, (flags & CLONE_NEWPID) != 0,
		    sb->landlock_fd != -1, e) == -1)
			goto done;
		a |= SANDBOX_MNTNS;
		if (flags & CLONE_NEWPID)
			a |= SANDBOX_PIDNS;
	}
	if ((flags & CLONE_NEWNET) || sandbox_ns_netns_inherited(sb))
		a |= SANDBOX_NETNS;
	if (p->hostnet && sandbox_ns_hostnet(e) == -1)
		goto done;
	/* A backend's proxy: loopback of its own namespace, or nothing
	 * (--weaker does not waive it: the host's loopback reaches the
	 * host's services). */
	if (p->inet && !(a & SANDBOX_NETNS)) {
		sandbox_fail(e, SANDBOX_NETNS, ENOTSUP, "a backend's loopback "
		    "needs a network namespace of its own, and none can be "
		    "had here (warren sandbox check)");
		goto done;
	}
	if (p->inet && sandbox_ns_lo_up(e) == -1)
		goto done;
	if (flags & CLONE_NEWIPC)
		a |= SANDBOX_IPCNS;
	if ((flags & CLONE_NEWPID) && !sb->direct &&
	    sandbox_child_init(sb, keep, nkeep, a, e) == -1)
		goto done;
	if (sandbox_child_rest(sb, keep, nkeep, a, e) == -1)
		goto done;
	if (sb->exec_fn != NULL)
		sb->exec_fn(sb, 0, e, sb->exec_arg);
	return 0;
done:
	rc = -1;
	if (sb->exec_fn != NULL) {
		sb->exec_fn(sb, rc, e, sb->exec_arg);
		_exit(WARREN_SANDBOX_EXEC_FAILED);
	}
	return rc;
}

/* A missing layer: fatal when required, unless weaker is accepted. */
static int
sandbox_lack(const struct sandbox_policy *p, unsigned bit, char *note,
    size_t notelen, struct sandbox_error *e)
{
	if ((p->require & bit) && !p->allow_weaker)
		return -1;
	sandbox_note(note, notelen, "%s", e->msg);
	return 0;
}

/* phase 2 */

int
sandbox_phase2(const struct sandbox_policy *p, const struct sandbox_phase1 *ph1,
    int scflags, int *notify_fd, uid_t uid, int cgroup,
    struct sandbox_report *r, struct sandbox_error *e)
{
	unsigned	 applied = ph1->applied;
	int		 abi = 0, llfd = ph1->landlock_fd, rc;

	sandbox_report_init(r, p->require);
	if (sandbox_caps_drop(e) == -1)
		goto fail;
	applied |= SANDBOX_CAPS;
	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) == -1) {
		sandbox_fail(e, SANDBOX_NNP, errno, "PR_SET_NO_NEW_PRIVS");
		goto fail;
	}
	applied |= SANDBOX_NNP;
	if (prctl(PR_SET_DUMPABLE, 0, 0, 0, 0) == -1) {
		sandbox_fail(e, SANDBOX_NODUMP, errno, "PR_SET_DUMPABLE 0");
		goto fail;
	}
	applied |= SANDBOX_NODUMP;
	if (!(p->want & SANDBOX_LANDLOCK))
		rc = -1;
	else if (llfd != -1) {
		/* Phase 1's ruleset (sandbox_child_rest); closed either way. */
		rc = sandbox_landlock_restrict(llfd, ph1->landlock_abi, e);
		llfd = -1;
		abi = rc == 0 ? ph1->landlock_abi : 0;
	} else
		rc = sandbox_landlock_apply(p, &abi, e);
	if (rc == 0)
		applied |= sandbox_landlock_layers(abi);
	else if (!(p->want & SANDBOX_LANDLOCK) || e->missing) {
		if (sandbox_lack(p, SANDBOX_LANDLOCK, r->note, sizeof(r->note),
		    e) == -1)
			goto fail;
	} else
		goto fail;
	if (llfd != -1) {
		close(llfd);
		llfd = -1;
	}
	if (SANDBOX_SANITIZER && (scflags & SANDBOX_SECCOMP_SELF))
		sandbox_note(r->note, sizeof(r->note), "sanitizer build: "
		    "ptrace and PR_SET_DUMPABLE allowed for LeakSanitizer");
	if (sandbox_seccomp_apply(p, scflags, notify_fd, e) == -1)
		return -1;
	applied |= SANDBOX_SECCOMP;
	sandbox_report_fill(r, applied, abi, uid, cgroup);
	if (r->weaker && !p->allow_weaker) {
		char	 names[SANDBOX_ERR_LEN];

		sandbox_mask_names(p->require & ~applied, names,
		    sizeof(names));
		return sandbox_missing(e, p->require & ~applied,
		    "profile %s requires %s", p->name, names);
	}
	return 0;
fail:
	/* Never leave an unapplied ruleset to what runs next. */
	if (llfd != -1)
		close(llfd);
	return -1;
}

int
sandbox_enter(const struct sandbox_policy *p, struct sandbox_report *r,
    struct sandbox_error *e)
{
	struct sandbox_policy	 envp;
	struct sandbox_phase1	 ph1 = { 0, -1, 0 };
	const char		*env;
	int			 nfd;

	env = getenv(SANDBOX_ENV);
	if (env != NULL) {
		if (sandbox_policy_decode(env, &envp, &ph1, e) == -1)
			return -1;
		if (p == NULL)
			p = &envp;
		else if (strcmp(p->name, envp.name) != 0 ||
		    p->fs_write != envp.fs_write || p->exec != envp.exec)
			return sandbox_fail(e, 0, EINVAL, "%s was set up for "
			    "profile %s, not %s", SANDBOX_ENV, envp.name,
			    p->name);
		unsetenv(SANDBOX_ENV);
	} else if (p == NULL)
		return sandbox_fail(e, 0, EINVAL, "no policy and no %s",
		    SANDBOX_ENV);
	if (sandbox_phase2(p, &ph1, SANDBOX_SECCOMP_SELF, &nfd,
	    (ph1.applied & SANDBOX_UIDDROP) ? geteuid() : 0,
	    (ph1.applied & SANDBOX_PIDS) &&
	    (ph1.applied & SANDBOX_UIDDROP) == 0 && getuid() == 0, r,
	    e) == -1)
		return -1;
	return 0;
}

int
sandbox_apply_self(const struct sandbox_policy *p, struct sandbox_report *r,
    struct sandbox_error *e)
{
	char			 note[SANDBOX_ERR_LEN] = "";
	struct sandbox_phase1	 ph1 = { 0, -1, 0 };
	unsigned		 a = 0;
	int			 nfd;

	if (setsid() != -1 || errno == EPERM)
		a |= SANDBOX_SETSID;
	if (sandbox_rlimit_apply(&p->limits, getuid() != 0 ?
	    (int)p->limits.nproc : 0, note, sizeof(note), e) == -1)
		return -1;
	a |= SANDBOX_RLIMITS | (getuid() != 0 ? SANDBOX_PIDS : 0);
	ph1.applied = a;
	if (sandbox_phase2(p, &ph1, SANDBOX_SECCOMP_SELF, &nfd, 0, 0, r,
	    e) == -1 && !(p->allow_weaker && e->missing))
		return -1;
	if (note[0] != '\0')
		sandbox_note(r->note, sizeof(r->note), "%s", note);
	return 0;
}

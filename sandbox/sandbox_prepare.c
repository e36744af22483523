/*
 * The spawner's side: probe and plan a sandbox (sandbox_prepare), clone
 * the child into its namespaces (sandbox_fork, sandbox_spawn), and later
 * signal and release what it left (sandbox_kill, sandbox_release).
 */

#include <sys/types.h>
#include <sys/mman.h>
#include <sys/socket.h>

#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "sandbox/sandbox_int.h"

/* sandbox_caps_freeze(): the probe of the first call, for every later one. */
static struct sandbox_caps	sandbox_caps_cache;
static int			sandbox_caps_cached;

void
sandbox_caps_freeze(void)
{
	sandbox_caps_probe(&sandbox_caps_cache, 0);
	sandbox_caps_cached = 1;
}

int
sandbox_cgroup_sweep(void)
{
	struct sandbox_caps	c;
	int			n;

	if (sandbox_caps_cached)
		memcpy(&c, &sandbox_caps_cache, sizeof(c));
	else
		sandbox_caps_probe(&c, 0);
	n = c.cgroup != 0 ? sandbox_cgroup_sweep_dir(c.cgroup_path) : 0;
	if (c.memcg != 0 && (c.cgroup == 0 ||
	    strcmp(c.memcg_path, c.cgroup_path) != 0))
		n += sandbox_cgroup_sweep_dir(c.memcg_path);
	return n;
}

int
sandbox_prepare(struct sandbox *sb, const struct sandbox_policy *p,
    struct sandbox_error *e)
{
	char		 names[SANDBOX_ERR_LEN];
	unsigned	 planned, missing;
	int		 flags;

	memset(sb, 0, sizeof(*sb));
	memcpy(&sb->policy, p, sizeof(*p));
	sb->pid = -1;
	sb->notify_fd = -1;
	sb->sock[0] = sb->sock[1] = -1;
	sb->landlock_fd = -1;
	if (sb->policy.workspace[0] != '/')
		return sandbox_fail(e, 0, EINVAL, "workspace must be absolute");
	if (sandbox_caps_cached)
		memcpy(&sb->caps, &sandbox_caps_cache, sizeof(sb->caps));
	else
		sandbox_caps_probe(&sb->caps, 0);
	planned = SANDBOX_SETSID | SANDBOX_CLOSEFDS | SANDBOX_RLIMITS;
	if ((p->want & SANDBOX_PIDS) && sb->caps.cgroup != 0) {
		if (sandbox_cgroup_create(sb, e) == 0)
			planned |= SANDBOX_PIDS;
		else
			sandbox_note(sb->note, sizeof(sb->note), "%s", e->msg);
	}
	if ((p->want & SANDBOX_MEMORY) && p->limits.mem_bytes != 0 &&
	    sb->caps.memcg != 0) {
		if (sandbox_cgroup_create_mem(sb, e) == 0)
			planned |= SANDBOX_MEMORY;
		else
			sandbox_note(sb->note, sizeof(sb->note), "%s", e->msg);
	}
	if ((p->want & SANDBOX_PIDS) && !(planned & SANDBOX_PIDS)) {
		/* RLIMIT_NPROC, which needs a uid other than 0. */
		if (!sb->caps.root)
			planned |= SANDBOX_PIDS;
		else if ((p->want & SANDBOX_UIDDROP) && p->uid != 0)
			planned |= SANDBOX_PIDS | SANDBOX_UIDDROP;
	}
	flags = sandbox_ns_flags(sb);
	if (flags & CLONE_NEWUSER)
		planned |= SANDBOX_USERNS;
	if (flags & CLONE_NEWNS)
		planned |= SANDBOX_MNTNS;
	if (flags & CLONE_NEWPID)
		planned |= SANDBOX_PIDNS;
	if ((flags & CLONE_NEWNET) || sandbox_ns_netns_inherited(sb))
		planned |= SANDBOX_NETNS;
	if (flags & CLONE_NEWIPC)
		planned |= SANDBOX_IPCNS;
	if (sb->caps.landlock_abi == 0)
		missing = SANDBOX_LANDLOCK;
	else {
		missing = 0;
		if (p->want & SANDBOX_LANDLOCK)
			sandbox_landlock_preopen();
	}
	if (!sb->caps.seccomp)
		missing |= SANDBOX_SECCOMP;
	missing |= p->require & SANDBOX_PHASE1 & ~planned;
	sb->cloneflags = flags;
	sb->planned = planned;
	sb->outer_uid = getuid();
	sb->outer_gid = getgid();
	if (missing != 0) {
		sandbox_mask_names(missing, names, sizeof(names));
		if ((missing & p->require) && !p->allow_weaker) {
			sandbox_missing(e, missing & p->require, "this machine "
			    "cannot apply %s, which profile %s requires (%s); "
			    "--allow-weaker-sandbox runs it anyway", names,
			    p->name, sb->caps.detail[0] != '\0' ?
			    sb->caps.detail : "see warren sandbox check");
			sandbox_release(sb);
			return -1;
		}
		sandbox_note(sb->note, sizeof(sb->note), "weaker sandbox: "
		    "no %s", names);
	}
	return 0;
}

/*
 * Clone with the namespaces planned; when the kernel refuses them and the
 * profile allows it, clone again without. clonefn returns like fork().
 */
static pid_t
sandbox_clone(struct sandbox *sb, pid_t (*clonefn)(int, void *), void *arg,
    struct sandbox_error *e)
{
	pid_t	 pid;

	pid = clonefn(sb->cloneflags, arg);
	if (pid == -1 && sb->cloneflags != 0 && (errno == EPERM ||
	    errno == EINVAL || errno == ENOSPC || errno == EUSERS)) {
		sandbox_note(sb->note, sizeof(sb->note), "namespaces refused "
		    "by the kernel (clone: %s)", strerror(errno));
		if ((sb->policy.require & SANDBOX_NAMESPACES & sb->planned) &&
		    !sb->policy.allow_weaker)
			return sandbox_missing(e, sb->planned &
			    SANDBOX_NAMESPACES & sb->policy.require,
			    "clone into namespaces: %s", strerror(errno));
		sb->planned &= ~SANDBOX_NAMESPACES;
		sb->cloneflags = 0;
		pid = clonefn(0, arg);
	}
	if (pid == -1)
		return sandbox_fail(e, 0, errno, "clone");
	return pid;
}

static pid_t
sandbox_fork_clone(int flags, void *arg)
{
	(void)arg;
	return sandbox_ns_clone(flags);
}

/*
 * Before the clone: the seccomp-notify channel if asked for, and the
 * Landlock ruleset with the rules on what the child sees as we do (the
 * child adds those on its own mounts). Building it here, from the paths
 * this process opened once, is what makes the layer cheap per child.
 */
static int
sandbox_parent_open(struct sandbox *sb, struct sandbox_error *e)
{
	int	 fd;

	if (sb->use_notify && socketpair(AF_UNIX, SOCK_SEQPACKET |
	    SOCK_CLOEXEC, 0, sb->sock) == -1)
		return sandbox_fail(e, 0, errno, "socketpair");
	if (!(sb->policy.want & SANDBOX_LANDLOCK) || sb->caps.landlock_abi < 1)
		return 0;
	if ((fd = sandbox_landlock_ruleset(&sb->policy, sb->caps.landlock_abi,
	    e)) == -1)
		return -1;
	/* Out of the way of the caller's dup2s in the child. */
	if (fd < SANDBOX_FD_OWN) {
		sb->landlock_fd = fcntl(fd, F_DUPFD_CLOEXEC, SANDBOX_FD_OWN);
		close(fd);
		if (sb->landlock_fd == -1)
			return sandbox_fail(e, SANDBOX_LANDLOCK, errno,
			    "move the Landlock ruleset to an fd from %d up",
			    SANDBOX_FD_OWN);
	} else
		sb->landlock_fd = fd;
	sb->landlock_abi = sb->caps.landlock_abi;
	return 0;
}

/* Our copy of the ruleset, once the child has its own (or none). */
void
sandbox_ruleset_close(struct sandbox *sb)
{
	if (sb->landlock_fd != -1) {
		close(sb->landlock_fd);
		sb->landlock_fd = -1;
	}
}

/* In the child: no pid, and not the parent's end of the channel. */
static void
sandbox_forked_child(struct sandbox *sb)
{
	if (sb->sock[0] != -1)
		close(sb->sock[0]);
	sb->sock[0] = -1;
	sb->pid = 0;
}

/* In the parent: the child's pid, and not its end of the channel. */
static void
sandbox_forked_parent(struct sandbox *sb, pid_t pid)
{
	sandbox_ruleset_close(sb);
	sb->pid = pid;
	if (sb->sock[1] != -1) {
		close(sb->sock[1]);
		sb->sock[1] = -1;
	}
}

pid_t
sandbox_fork(struct sandbox *sb, struct sandbox_error *e)
{
	pid_t	 pid;

	if (sandbox_parent_open(sb, e) == -1)
		return -1;
	if ((pid = sandbox_clone(sb, sandbox_fork_clone, NULL, e)) == -1) {
		sandbox_ruleset_close(sb);
		return -1;
	}
	if (pid == 0)
		sandbox_forked_child(sb);
	else
		sandbox_forked_parent(sb, pid);
	return pid;
}

struct sandbox_spawn {
	struct sandbox		*sb;
	sandbox_spawn_fn	 fn;
	void			*arg;
};

/*
 * The child of sandbox_spawn. With CLONE_VM it shares the parent's memory
 * until its exec, so it works on a copy of the sandbox: nothing it writes
 * may change what the parent holds.
 */
static int
sandbox_spawn_main(void *arg)
{
	struct sandbox_spawn	*s = arg;
	struct sandbox		 sb;

	memcpy(&sb, s->sb, sizeof(sb));
	sandbox_forked_child(&sb);
	sb.direct = 1;
	s->fn(&sb, s->arg);
	_exit(WARREN_SANDBOX_EXEC_FAILED);
}

/*
 * The stack the child runs on, above a guard page. One is enough:
 * CLONE_VFORK holds this thread until the child has exec'd or died, and
 * it is kept, so its pages are faulted in once per process, not once per
 * spawn.
 */
#define SANDBOX_SPAWN_STACK	(256 * 1024)
#define SANDBOX_SPAWN_GUARD	4096
static char	*sandbox_spawn_stack;

static int
sandbox_spawn_stack_get(struct sandbox_error *e)
{
	void	*p;

	if (sandbox_spawn_stack != NULL)
		return 0;
	p = mmap(NULL, SANDBOX_SPAWN_GUARD + SANDBOX_SPAWN_STACK, PROT_READ |
	    PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_STACK, -1, 0);
	if (p == MAP_FAILED)
		return sandbox_fail(e, 0, errno, "mmap a stack of %d kB for "
		    "the child", SANDBOX_SPAWN_STACK / 1024);
	if (mprotect(p, SANDBOX_SPAWN_GUARD, PROT_NONE) == -1) {
		sandbox_fail(e, 0, errno, "mprotect the child's guard page");
		munmap(p, SANDBOX_SPAWN_GUARD + SANDBOX_SPAWN_STACK);
		return -1;
	}
	sandbox_spawn_stack = (char *)p + SANDBOX_SPAWN_GUARD;
	return 0;
}

static pid_t
sandbox_spawn_clone(int flags, void *arg)
{
	pid_t	 pid;

	if (SANDBOX_SANITIZER) {
		/* ASan cannot follow a CLONE_VM child on its own stack. */
		pid = sandbox_ns_clone(flags | CLONE_VFORK);
		if (pid == 0)
			(void)sandbox_spawn_main(arg);
		return pid;
	}
	return clone(sandbox_spawn_main, sandbox_spawn_stack +
	    SANDBOX_SPAWN_STACK, flags | CLONE_VM | CLONE_VFORK | SIGCHLD,
	    arg);
}

pid_t
sandbox_spawn(struct sandbox *sb, sandbox_spawn_fn fn, void *arg,
    struct sandbox_error *e)
{
	struct sandbox_spawn	 s;
	sigset_t		 all, old;
	pid_t			 pid;

	if (!SANDBOX_SANITIZER && sandbox_spawn_stack_get(e) == -1)
		return -1;
	if (sandbox_parent_open(sb, e) == -1)
		return -1;
	s.sb = sb;
	s.fn = fn;
	s.arg = arg;
	/* No handler of ours may run in the child while it shares memory. */
	sigfillset(&all);
	sigprocmask(SIG_SETMASK, &all, &old);
	pid = sandbox_clone(sb, sandbox_spawn_clone, &s, e);
	sigprocmask(SIG_SETMASK, &old, NULL);
	if (pid == -1) {
		sandbox_ruleset_close(sb);
		return -1;
	}
	sandbox_forked_parent(sb, pid);
	return pid;
}

int
sandbox_kill(struct sandbox *sb, int sig)
{
	if (sb->pid <= 0)
		return -1;
	/* SIGKILL of pid 1 ends the whole pid namespace. */
	if (kill(sb->pid, sig) == -1 && errno != ESRCH)
		return -1;
	if (!(sb->planned & SANDBOX_PIDNS))
		kill(-sb->pid, sig);
	if (sig == SIGKILL) {
		sandbox_cgroup_kill(sb->cgroup, sb->cgroup_version);
		sandbox_cgroup_kill(sb->memcg, sb->caps.memcg);
	}
	return 0;
}

void
sandbox_release(struct sandbox *sb)
{
	if (sb->pid > 0 && !(sb->planned & SANDBOX_PIDNS))
		kill(-sb->pid, SIGKILL);
	/* Kills only if a process is left (rmdir says EBUSY): after a pid
	 * namespace's init is reaped, none is. */
	sandbox_cgroup_remove(sb->cgroup, sb->cgroup_version);
	sb->cgroup[0] = '\0';
	sandbox_cgroup_remove(sb->memcg, sb->caps.memcg);
	sb->memcg[0] = '\0';
	if (sb->notify_fd != -1)
		close(sb->notify_fd);
	if (sb->sock[0] != -1)
		close(sb->sock[0]);
	if (sb->sock[1] != -1)
		close(sb->sock[1]);
	sb->notify_fd = sb->sock[0] = sb->sock[1] = -1;
}

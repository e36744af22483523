/*
 * Namespaces: the child is cloned straight into new user (when not root),
 * mount, pid, net, ipc and uts namespaces, as many as this kernel and user
 * allow. In its mount namespace it gets a private /tmp and /dev/shm (size
 * bounded tmpfs), the protected paths read-only or masked and the host's
 * secrets masked (sandbox_protect.c) and, with a pid namespace, a fresh
 * /proc that shows only the sandbox. With a pid namespace a tiny init stays pid 1: it forwards
 * signals to the command and reaps orphans, and when it exits the kernel
 * kills everything left in the namespace.
 *
 * The child of a raw clone shares no locks with a multi-threaded parent's
 * other threads: code here runs before exec and avoids malloc.
 */
#include <sys/types.h>
#include <sys/ioctl.h>
#include <sys/mount.h>
#include <sys/socket.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <sys/syscall.h>
#include <sys/wait.h>

#include <errno.h>
#include <fcntl.h>
#include <net/if.h>
#include <limits.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>


#include "common/userns.h"
#include "sandbox/sandbox_int.h"

/* Signals the init passes on to the command. */
static const int sandbox_ns_fwd[] = {
	SIGHUP, SIGINT, SIGQUIT, SIGTERM, SIGUSR1, SIGUSR2, SIGALRM, SIGCONT,
	SIGTSTP, SIGWINCH,
};

/*
 * Set once by sandbox_netns_share(): this process already sits in an empty
 * network namespace of its own, which every child inherits.
 */
static int	sandbox_netns_shared;
#define SANDBOX_NETNS_FD_MIN	64
static int	sandbox_netns_host = -1;	/* the namespace we left */

int
sandbox_netns_share(struct sandbox_error *e)
{
	int	 fd, saved;

	if (geteuid() != 0)
		return sandbox_missing(e, SANDBOX_NETNS, "a shared network "
		    "namespace needs root (workers get their own)");
	if ((fd = open("/proc/self/ns/net", O_RDONLY | O_CLOEXEC)) == -1)
		return sandbox_fail(e, SANDBOX_NETNS, errno,
		    "open /proc/self/ns/net");
	/* High, above the fixed slots a spawner dup2s its child's pipes
	 * and program onto before sandbox_child runs. */
	sandbox_netns_host = fcntl(fd, F_DUPFD_CLOEXEC, SANDBOX_NETNS_FD_MIN);
	saved = errno;
	close(fd);
	if (sandbox_netns_host == -1)
		return sandbox_fail(e, SANDBOX_NETNS, saved, "move the host's "
		    "network namespace fd above %d", SANDBOX_NETNS_FD_MIN);
	if (unshare(CLONE_NEWNET) == -1) {
		saved = errno;
		close(sandbox_netns_host);
		sandbox_netns_host = -1;
		return sandbox_fail(e, SANDBOX_NETNS, saved,
		    "unshare(CLONE_NEWNET)");
	}
	sandbox_netns_shared = 1;
	return 0;
}

/* A hostnet child (docs/mcp.md): the host's network, which as root means
 * leaving the spawner's shared empty namespace; otherwise it is where it
 * was cloned (no CLONE_NEWNET). */
int
sandbox_ns_hostnet(struct sandbox_error *e)
{
	if (!sandbox_netns_shared)
		return 0;
	if (setns(sandbox_netns_host, CLONE_NEWNET) == -1)
		return sandbox_fail(e, SANDBOX_NETNS, errno, "setns (the "
		    "host's network)");
	return 0;
}

int
sandbox_ns_lo_up(struct sandbox_error *e)
{
	struct ifreq	 ifr;
	int		 fd, saved;

	if ((fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0)) == -1)
		return sandbox_fail(e, SANDBOX_NETNS, errno, "socket for lo");
	memset(&ifr, 0, sizeof(ifr));
	memcpy(ifr.ifr_name, "lo", 3);
	if (ioctl(fd, SIOCGIFFLAGS, &ifr) == -1)
		goto fail;
	if (!(ifr.ifr_flags & IFF_UP)) {
		ifr.ifr_flags |= IFF_UP;
		if (ioctl(fd, SIOCSIFFLAGS, &ifr) == -1)
			goto fail;
	}
	close(fd);
	return 0;
fail:
	saved = errno;
	close(fd);
	return sandbox_fail(e, SANDBOX_NETNS, saved, "bring lo up in the "
	    "network namespace");
}

/* The child gets no netns of its own but is in the shared empty one. A
 * backend's worker (inet) always gets its own: its loopback carries its
 * program's model traffic, which no other worker may reach. */
int
sandbox_ns_netns_inherited(const struct sandbox *sb)
{
	return sandbox_netns_shared && sb->caps.root &&
	    (sb->policy.want & SANDBOX_NETNS) && !sb->policy.inet;
}

int
sandbox_ns_flags(const struct sandbox *sb)
{
	const struct sandbox_caps	*c = &sb->caps;
	unsigned			 want = sb->policy.want;
	int				 flags = 0, userns = 0;

	if (!c->root) {
		if (!c->userns || !(want & (SANDBOX_NAMESPACES)))
			return 0;
		userns = 1;
		flags |= CLONE_NEWUSER;
	}
	if ((want & SANDBOX_MNTNS) && c->mntns)
		flags |= CLONE_NEWNS;
	if ((want & SANDBOX_PIDNS) && c->pidns && (flags & CLONE_NEWNS))
		flags |= CLONE_NEWPID;		/* a fresh /proc needs mntns */
	if ((want & SANDBOX_NETNS) && c->netns &&
	    !sandbox_ns_netns_inherited(sb))
		flags |= CLONE_NEWNET;
	if ((want & SANDBOX_IPCNS) && c->ipcns)
		flags |= CLONE_NEWIPC | CLONE_NEWUTS;
	if (userns && flags == CLONE_NEWUSER)
		return 0;
	return flags;
}

/* fork(), into the namespaces in flags. */
pid_t
sandbox_ns_clone(int flags)
{
	return (pid_t)syscall(SYS_clone, (unsigned long)flags | SIGCHLD,
	    NULL, NULL, NULL, NULL);
}

/* In a new user ns: map our own uid and gid to themselves. */
int
sandbox_ns_userns_map(uid_t uid, gid_t gid, struct sandbox_error *e)
{
	const char	*step;

	if (userns_map_self(uid, gid, &step) == -1)
		return sandbox_fail(e, SANDBOX_USERNS, errno, "write %s",
		    step);
	return 0;
}

/* Mount flags a bind remount must keep (locked in a user namespace). */
static unsigned long
sandbox_ns_locked(const char *path)
{
	struct statvfs	 sv;
	unsigned long	 fl = 0;

	if (statvfs(path, &sv) == -1)
		return 0;
	if (sv.f_flag & ST_NOSUID)
		fl |= MS_NOSUID;
	if (sv.f_flag & ST_NODEV)
		fl |= MS_NODEV;
	if (sv.f_flag & ST_NOEXEC)
		fl |= MS_NOEXEC;
	if (sv.f_flag & ST_NOATIME)
		fl |= MS_NOATIME;
	if (sv.f_flag & ST_NODIRATIME)
		fl |= MS_NODIRATIME;
	if (sv.f_flag & ST_RELATIME)
		fl |= MS_RELATIME;
	return fl;
}

static int
sandbox_ns_bind_ro(const char *path, struct sandbox_error *e)
{
	unsigned long	 fl;

	fl = sandbox_ns_locked(path);
	if (mount(path, path, NULL, MS_BIND | MS_REC, NULL) == -1)
		return sandbox_fail(e, SANDBOX_MNTNS, errno, "bind %s", path);
	if (mount(NULL, path, NULL, MS_BIND | MS_REMOUNT | MS_RDONLY |
	    MS_NOSUID | MS_NODEV | fl, NULL) == -1)
		return sandbox_fail(e, SANDBOX_MNTNS, errno,
		    "remount %s read-only", path);
	return 0;
}

/* mkdir -p of an absolute path; used to recreate a workspace under the
 * private /tmp before binding it back. */
static int
sandbox_ns_mkdirs(const char *path)
{
	char	 buf[PATH_MAX], *p;

	if (strlcpy(buf, path, sizeof(buf)) >= sizeof(buf)) {
		errno = ENAMETOOLONG;
		return -1;
	}
	for (p = buf + 1; *p != '\0'; p++) {
		if (*p != '/')
			continue;
		*p = '\0';
		if (mkdir(buf, 0755) == -1 && errno != EEXIST)
			return -1;
		*p = '/';
	}
	if (mkdir(buf, 0755) == -1 && errno != EEXIST)
		return -1;
	return 0;
}

/* Under a new tmpfs at top, bind the directory dir back from fd. */
static int
sandbox_ns_bindback(const char *top, int fd, const char *dir, int ro,
    struct sandbox_error *e)
{
	char	 src[64];
	size_t	 len;

	len = strlen(top);
	if (fd == -1 || dir[0] == '\0' || strncmp(dir, top, len) != 0 ||
	    dir[len] != '/')
		return 0;
	if (sandbox_ns_mkdirs(dir) == -1)
		return sandbox_fail(e, SANDBOX_MNTNS, errno,
		    "mkdir %s in the private %s", dir, top);
	snprintf(src, sizeof(src), "/proc/self/fd/%d", fd);
	if (mount(src, dir, NULL, MS_BIND | MS_REC, NULL) == -1)
		return sandbox_fail(e, SANDBOX_MNTNS, errno,
		    "bind %s back into the private %s", dir, top);
	if (ro && sandbox_ns_bind_ro(dir, e) == -1)
		return -1;
	return 0;
}

static int
sandbox_ns_tmpfs(const char *path, rlim_t size, int wsfd, const char *ws,
    int progfd, const char *progdir, struct sandbox_error *e)
{
	char	 opts[64];

	if (access(path, F_OK) == -1)
		return 0;
	snprintf(opts, sizeof(opts), "mode=1777,size=%llu",
	    (unsigned long long)(size != 0 ? size : 64ULL << 20));
	if (mount("tmpfs", path, "tmpfs", MS_NOSUID | MS_NODEV, opts) == -1)
		return sandbox_fail(e, SANDBOX_MNTNS, errno,
		    "mount tmpfs on %s", path);
	/* A program or workspace under it (mkdtemp) is bound back in, the
	 * workspace last: it may lie below the program's directory. */
	if (strcmp(progdir, ws) != 0 &&
	    sandbox_ns_bindback(path, progfd, progdir, 1, e) == -1)
		return -1;
	if (sandbox_ns_bindback(path, wsfd, ws, 0, e) == -1)
		return -1;
	return 0;
}

/*
 * A private /tmp and /dev/shm, with the workspace and the program's
 * directory (a backend's: its package) bound back in where they lie below
 * them.
 */
static int
sandbox_ns_private_tmp(const struct sandbox_policy *p, int wsfd,
    struct sandbox_error *e)
{
	char	 progdir[PATH_MAX], *slash;
	int	 progfd = -1, ret = -1, modules;

	strlcpy(progdir, p->program, sizeof(progdir));
	/* A backend's program: its whole package, which Landlock opens
	 * (npm may have put it under /tmp: a test's copy of the tree). */
	if (p->inet && p->program[0] != '\0' && sandbox_package_dir(p->program,
	    progdir, sizeof(progdir), &modules) == 0 && progdir[0] != '\0')
		progfd = open(progdir, O_PATH | O_DIRECTORY | O_CLOEXEC);
	else if ((slash = strrchr(progdir, '/')) != NULL && slash != progdir) {
		*slash = '\0';
		progfd = open(progdir, O_PATH | O_DIRECTORY | O_CLOEXEC);
	} else
		progdir[0] = '\0';
	if (sandbox_ns_tmpfs("/tmp", p->limits.tmpfs_bytes, wsfd,
	    p->workspace, progfd, progdir, e) == 0 &&
	    sandbox_ns_tmpfs("/dev/shm", p->limits.tmpfs_bytes, wsfd,
	    p->workspace, progfd, progdir, e) == 0)
		ret = 0;
	if (progfd != -1)
		close(progfd);
	return ret;
}

/*
 * In the child's new mount namespace, before anything untrusted runs.
 * landlocked: the child will have a Landlock ruleset. A read-only profile
 * with one (sandbox_child says why) gets no private /tmp and /dev/shm and
 * no read-only /proc/sys, and only the masks of protected paths.
 */
int
sandbox_ns_mounts(const struct sandbox_policy *p, int pidns, int landlocked,
    struct sandbox_error *e)
{
	char	 cwd[PATH_MAX];
	int	 havecwd, wsfd, rc, ro_landlocked;

	ro_landlocked = !p->fs_write && landlocked;
	havecwd = getcwd(cwd, sizeof(cwd)) != NULL;
	if (mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) == -1)
		return sandbox_fail(e, SANDBOX_MNTNS, errno,
		    "make / private");
	/* The workspace, for the private /tmp's bind and for the protected
	 * paths under it (a read-only profile's masks only). */
	wsfd = -1;
	if ((!ro_landlocked || sandbox_protect_masks_ws(p)) &&
	    (wsfd = open(p->workspace, O_PATH | O_DIRECTORY | O_CLOEXEC)) ==
	    -1)
		return sandbox_fail(e, SANDBOX_MNTNS, errno,
		    "open workspace %s", p->workspace);
	/* Before the private /tmp, whose bind of a workspace under /tmp
	 * back in is recursive and carries these mounts along. */
	rc = sandbox_protect_mounts(p, wsfd, landlocked, e);
	if (rc == 0 && !ro_landlocked)
		rc = sandbox_ns_private_tmp(p, wsfd, e);
	if (wsfd != -1)
		close(wsfd);
	if (rc == -1)
		return -1;
	if (pidns && mount("proc", "/proc", "proc", MS_NOSUID | MS_NODEV |
	    MS_NOEXEC, NULL) == -1)
		return sandbox_fail(e, SANDBOX_PIDNS, errno,
		    "mount a fresh /proc");
	/* sysctls and sysrq answer to uid 0 without any capability. */
	if (pidns && !ro_landlocked && ((access("/proc/sys", F_OK) == 0 &&
	    sandbox_ns_bind_ro("/proc/sys", e) == -1) ||
	    (access("/proc/sysrq-trigger", F_OK) == 0 &&
	    sandbox_ns_bind_ro("/proc/sysrq-trigger", e) == -1)))
		return -1;
	/* The old cwd dentry predates the mounts: walk to it again. */
	if ((!havecwd || chdir(cwd) == -1) && chdir(p->workspace) == -1)
		return sandbox_fail(e, SANDBOX_MNTNS, errno, "chdir %s",
		    p->workspace);
	return 0;
}

static void
sandbox_ns_handler(int sig)
{
	(void)sig;
}

/*
 * Before forking the command: pid 1 only receives signals it has a handler
 * for, so install no-op handlers and block them (sigwaitinfo takes them).
 */
void
sandbox_ns_init_signals(sigset_t *old)
{
	struct sigaction	 sa;
	sigset_t		 set;
	size_t			 i;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = sandbox_ns_handler;
	sigemptyset(&set);
	sigaddset(&set, SIGCHLD);
	for (i = 0; i < sizeof(sandbox_ns_fwd) / sizeof(sandbox_ns_fwd[0]);
	    i++) {
		sigaddset(&set, sandbox_ns_fwd[i]);
		sigaction(sandbox_ns_fwd[i], &sa, NULL);
	}
	sigaction(SIGCHLD, &sa, NULL);
	sigprocmask(SIG_BLOCK, &set, old);
}

/* In the command: default handlers and the mask it had. */
void
sandbox_ns_init_restore(const sigset_t *old)
{
	struct sigaction	 sa;
	size_t			 i;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = SIG_DFL;
	for (i = 0; i < sizeof(sandbox_ns_fwd) / sizeof(sandbox_ns_fwd[0]);
	    i++)
		sigaction(sandbox_ns_fwd[i], &sa, NULL);
	sigaction(SIGCHLD, &sa, NULL);
	sigprocmask(SIG_SETMASK, old, NULL);
}

/*
 * pid 1 of the sandbox: forward signals to the command, reap every orphan,
 * and exit with the command's status (128 + signal if it was killed; pid 1
 * cannot die of a signal sent to itself). Its own exit tears the pid
 * namespace down, so nothing the command started survives it.
 */
void
sandbox_ns_init(pid_t child)
{
	sigset_t	 set;
	siginfo_t	 si;
	pid_t		 pid;
	size_t		 i;
	int		 status, sig;

	sigemptyset(&set);
	sigaddset(&set, SIGCHLD);
	for (i = 0; i < sizeof(sandbox_ns_fwd) / sizeof(sandbox_ns_fwd[0]);
	    i++)
		sigaddset(&set, sandbox_ns_fwd[i]);
	syscall(SYS_close_range, 0U, ~0U, 0U);
	/* A copy of the parent's memory and environment: not for reading. */
	prctl(PR_SET_DUMPABLE, 0, 0, 0, 0);
	prctl(PR_SET_NAME, "warren-init", 0, 0, 0);
	for (;;) {
		while ((pid = waitpid(-1, &status, WNOHANG)) > 0) {
			if (pid != child)
				continue;
			if (WIFEXITED(status))
				_exit(WEXITSTATUS(status));
			_exit(128 + WTERMSIG(status));
		}
		if (pid == -1 && errno == ECHILD)
			_exit(SANDBOX_INIT_LOST);
		if ((sig = sigwaitinfo(&set, &si)) == -1)
			continue;
		if (sig != SIGCHLD)
			kill(child, sig);
	}
}

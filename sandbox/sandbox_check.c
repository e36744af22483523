/*
 * What this kernel and user can apply: `warren sandbox check`, and the
 * plan of sandbox_prepare(). The cheap probe reads /proc and asks Landlock
 * its ABI; the thorough one (check) also forks a child per namespace kind
 * to see whether the kernel really grants it (an LSM or a container may
 * refuse what sysctls allow).
 */
#include <sys/types.h>
#include <sys/prctl.h>
#include <sys/wait.h>

#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>


#include "sandbox/sandbox_int.h"

static int
sandbox_check_read_int(const char *path, int dflt)
{
	char	 buf[32];
	ssize_t	 n;
	int	 fd;

	if ((fd = open(path, O_RDONLY | O_CLOEXEC)) == -1)
		return dflt;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return dflt;
	buf[n] = '\0';
	return atoi(buf);
}

/* Fork a child into flags; 1 if the kernel allowed it. */
static int
sandbox_check_try(int flags)
{
	pid_t	 pid;
	int	 status;

	if ((pid = sandbox_ns_clone(flags)) == -1)
		return 0;
	if (pid == 0)
		_exit(0);
	if (waitpid(pid, &status, 0) == -1)
		return 0;
	return WIFEXITED(status) && WEXITSTATUS(status) == 0;
}

int
sandbox_caps_probe(struct sandbox_caps *c, int thorough)
{
	int	 userns, base;

	memset(c, 0, sizeof(*c));
	c->root = geteuid() == 0;
	c->landlock_abi = sandbox_landlock_abi();
	c->seccomp = sandbox_seccomp_available();
	c->sanitizer = SANDBOX_SANITIZER;
	/* Root uses no user namespace: the sysctls matter to users only. */
	userns = c->root || (sandbox_check_read_int(
	    "/proc/sys/user/max_user_namespaces", 1) > 0 && sandbox_check_read_int(
	    "/proc/sys/kernel/unprivileged_userns_clone", 1) != 0 &&
	    sandbox_check_read_int(
	    "/proc/sys/kernel/apparmor_restrict_unprivileged_userns", 0) == 0);
	c->userns = userns;
	/* As a user, the other namespaces come with a user namespace. */
	c->mntns = c->pidns = c->netns = c->ipcns = c->userns;
	if (thorough) {
		base = c->root ? 0 : CLONE_NEWUSER;
		if (!c->root)
			c->userns = sandbox_check_try(CLONE_NEWUSER);
		c->mntns = sandbox_check_try(base | CLONE_NEWNS);
		c->pidns = sandbox_check_try(base | CLONE_NEWPID);
		c->netns = sandbox_check_try(base | CLONE_NEWNET);
		c->ipcns = sandbox_check_try(base | CLONE_NEWIPC |
		    CLONE_NEWUTS);
	}
	sandbox_cgroup_find(c);
	c->uiddrop = c->root;
	if (c->landlock_abi == 0)
		strlcpy(c->detail, "no Landlock in this kernel "
		    "(CONFIG_SECURITY_LANDLOCK, lsm=)", sizeof(c->detail));
	else if (!c->seccomp)
		strlcpy(c->detail, "no seccomp filter support",
		    sizeof(c->detail));
	else if (!c->root && !c->userns)
		strlcpy(c->detail, "unprivileged user namespaces disabled",
		    sizeof(c->detail));
	return 0;
}

static void
sandbox_check_line(FILE *f, const char *layer, int ok, const char *what)
{
	fprintf(f, "  %-16s %-4s %s\n", layer, ok ? "yes" : "no", what);
}

static void
sandbox_check_memory(const struct sandbox_caps *c, FILE *f)
{
	char	 buf[PATH_MAX + 96];

	if (c->memcg == 2)
		snprintf(buf, sizeof(buf), "memory cgroup v2 under %s: "
		    "memory.max, memory.swap.max 0", c->memcg_path);
	else if (c->memcg == 1)
		snprintf(buf, sizeof(buf), "memory cgroup v1 under %s: "
		    "limit_in_bytes, %s", c->memcg_path, c->memsw ?
		    "memsw (no swap)" : "swappiness 0 (no memsw: swap not "
		    "bounded)");
	else
		snprintf(buf, sizeof(buf), "no writable memory cgroup: "
		    "RLIMIT_AS bounds mapped memory only, not memfd, tmpfs "
		    "or SysV shm pages (docs/sandbox.md, \"Memory\")");
	sandbox_check_line(f, "memory", c->memcg != 0, buf);
}

void
sandbox_caps_print(const struct sandbox_caps *c, FILE *f)
{
	char	 buf[PATH_MAX + 64];

	fprintf(f, "warren sandbox check: uid %u%s\n", (unsigned)geteuid(),
	    c->root ? " (root)" : "");
	snprintf(buf, sizeof(buf), "ABI %d (code knows up to 7)%s",
	    c->landlock_abi, c->landlock_abi >= 6 ?
	    "; signal and abstract-unix scoping" : c->landlock_abi >= 1 ?
	    "; no scoping (ABI < 6)" : "");
	sandbox_check_line(f, "landlock", c->landlock_abi > 0, buf);
	sandbox_check_line(f, "seccomp", c->seccomp,
	    "filter compiled at build time, native arch only, bad arch kills");
	sandbox_check_line(f, "nnp", 1, "PR_SET_NO_NEW_PRIVS");
	sandbox_check_line(f, "nodump", 1, "PR_SET_DUMPABLE 0");
	sandbox_check_line(f, "caps", 1, c->root ? "root: bounding, ambient "
	    "and all sets dropped, securebits locked" : "none held (not root)");
	sandbox_check_line(f, "rlimits", 1, c->sanitizer ? "CPU FSIZE NOFILE "
	    "CORE=0 (AS skipped: sanitizer build)" :
	    "CPU AS FSIZE NOFILE CORE=0");
	if (c->cgroup != 0)
		snprintf(buf, sizeof(buf), "pids cgroup v%d under %s",
		    c->cgroup, c->cgroup_path);
	else if (c->root)
		snprintf(buf, sizeof(buf), "no writable pids cgroup: uid drop "
		    "to an unprivileged uid + RLIMIT_NPROC");
	else
		snprintf(buf, sizeof(buf), "RLIMIT_NPROC (no writable pids "
		    "cgroup for this user)");
	sandbox_check_line(f, "pids", 1, buf);
	sandbox_check_memory(c, f);
	sandbox_check_line(f, "userns", c->userns, c->root ?
	    "not used as root" : "unprivileged user namespace");
	sandbox_check_line(f, "mntns", c->mntns, "private /tmp, /dev/shm; "
	    ".git, .warren read-only; state, config dirs masked");
	if (c->root)
		sandbox_check_line(f, "", c->mntns, "/etc/shadow, gshadow, SSH "
		    "host keys masked");
	sandbox_check_line(f, "pidns", c->pidns, "fresh /proc, init as pid 1");
	sandbox_check_line(f, "netns", c->netns, "no interfaces but lo (down)");
	sandbox_check_line(f, "ipcns", c->ipcns, "ipc and uts");
	sandbox_check_line(f, "uiddrop", c->uiddrop, c->root ?
	    "possible (used when no pids cgroup)" : "not root");
	if (c->detail[0] != '\0')
		fprintf(f, "note: %s\n", c->detail);
	if (!c->mntns)
		fprintf(f, "note: without a mount namespace (only with "
		    "--allow-weaker-sandbox) read-write profiles can write,\n"
		    "  rename and replace .git, .warren and warren's config "
		    "directory in the workspace\n  (git then runs what they "
		    "put there); every profile can read warren's state\n"
		    "  and config directories (every run's database, the "
		    "user's config) if they lie\n  in the workspace; /tmp "
		    "and /dev/shm are the host's\n");
}

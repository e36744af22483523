/*
 * Policies: what a profile may do (fs_write, exec: its caller says, from
 * the profile's tools; a built-in's by name is profile_policy() in
 * agent/profile.c, the one table of the built-ins), what it requires on
 * this machine, and the one-line form a policy crosses an exec in
 * (SANDBOX_ENV, argv).
 */

#include <sys/types.h>

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sandbox/sandbox_int.h"

#define SANDBOX_BASE_REQUIRE	(SANDBOX_SETSID | SANDBOX_CLOSEFDS | \
				 SANDBOX_PIDS | SANDBOX_RLIMITS | \
				 SANDBOX_CAPS | SANDBOX_NNP | SANDBOX_NODUMP | \
				 SANDBOX_LANDLOCK | SANDBOX_SECCOMP)

void
sandbox_policy_require(struct sandbox_policy *p, const struct sandbox_caps *c)
{
	p->require = SANDBOX_BASE_REQUIRE;
	/* The protected paths are mounts: they exist only in a mount
	 * namespace, and so do the masks over the host's secrets, which a
	 * root-started worker would read by owning them. */
	p->require |= sandbox_protect_require(p);
	if (c != NULL ? c->root : geteuid() == 0)
		p->require |= SANDBOX_MNTNS;
	/* A backend's loopback must not be the host's; its HOME is in the
	 * private /tmp. */
	if (p->inet)
		p->require |= SANDBOX_NETNS | SANDBOX_MNTNS;
}

void
sandbox_policy_hostnet(struct sandbox_policy *p)
{
	p->inet = 0;
	p->hostnet = 1;
	p->want &= ~(unsigned)SANDBOX_NETNS;
	p->require &= ~(unsigned)SANDBOX_NETNS;
}

int
sandbox_policy_init(struct sandbox_policy *p, const char *name,
    const char *workspace, int fs_write, int exec, struct sandbox_error *e)
{
	char	 real[PATH_MAX];

	memset(p, 0, sizeof(*p));
	if (name == NULL || name[0] == '\0' || strlcpy(p->name, name,
	    sizeof(p->name)) >= sizeof(p->name) || strchr(name, ';') != NULL)
		return sandbox_fail(e, 0, EINVAL, "bad profile name");
	if (workspace == NULL || workspace[0] == '\0')
		workspace = ".";
	if (realpath(workspace, real) == NULL)
		return sandbox_fail(e, 0, errno, "workspace %s", workspace);
	/* A writable "/" would hand root the whole system. */
	if (fs_write && strcmp(real, "/") == 0)
		return sandbox_fail(e, 0, EINVAL, "workspace / is the whole "
		    "filesystem: give a project directory for profile %s",
		    name);
	strlcpy(p->workspace, real, sizeof(p->workspace));
	p->fs_write = fs_write != 0;
	p->exec = exec != 0;
	p->want = SANDBOX_ALL;
	/*
	 * A worker of a profile that runs no program runs only our own
	 * code, which uses no SysV IPC or POSIX message queue: seccomp
	 * denies those calls there (sandbox_seccomp_rules.c; so it does to
	 * the one command of `sandbox exec`), which reaches no IPC object at
	 * all, where a namespace of its own would still let it make some.
	 * It also spares each worker a namespace's mqueue mount and its
	 * deferred free. Profiles that run programs keep CLONE_NEWIPC.
	 */
	if (!p->exec)
		p->want &= ~SANDBOX_IPCNS;
	p->limits.cpu_sec = 600;
	p->limits.as_bytes = 4ULL << 30;
	p->limits.fsize_bytes = 1ULL << 30;
	p->limits.nofile = 1024;
	p->limits.nproc = 256;
	p->limits.tmpfs_bytes = 256ULL << 20;
	p->limits.mem_bytes = 4ULL << 30;
	p->uid = 65534;
	p->gid = 65534;
	/*
	 * What git and warren read outside any sandbox: the whole of .git
	 * (hooks, config and its fsmonitor, and the rest: a renamed and
	 * rebuilt copy of it ran them all), and .warren.
	 */
	if (sandbox_policy_protect(p, ".git", SANDBOX_PROTECT_RO, e) == -1 ||
	    sandbox_policy_protect(p, ".warren", SANDBOX_PROTECT_RO, e) == -1)
		return -1;
	sandbox_policy_require(p, NULL);
	return 0;
}

/* "v1;a=HEX;w=0;x=0;aw=0;want=HEX;req=HEX;u=N;ll=FD;lla=ABI;i=0;n=NAME;
 * ws=PATH" (ws last: a path may hold ';'). */
int
sandbox_policy_encode(const struct sandbox_policy *p,
    const struct sandbox_phase1 *ph1, char *buf, size_t len)
{
	int	 n;

	n = snprintf(buf, len, "v1;a=%x;w=%d;x=%d;aw=%d;want=%x;req=%x;u=%u;"
	    "ll=%d;lla=%d;i=%d;n=%s;ws=%s", ph1->applied, p->fs_write, p->exec,
	    p->allow_weaker, p->want, p->require, (unsigned)p->uid,
	    ph1->landlock_fd, ph1->landlock_abi, p->inet != 0, p->name,
	    p->workspace);
	if (n < 0 || (size_t)n >= len) {
		errno = ENAMETOOLONG;
		return -1;
	}
	return 0;
}

static int
sandbox_decode_hex(const char *s, unsigned *out)
{
	char		*end;
	unsigned long	 v;

	errno = 0;
	v = strtoul(s, &end, 16);
	if (errno != 0 || end == s || (*end != ';' && *end != '\0') ||
	    v > SANDBOX_ALL)
		return -1;
	*out = (unsigned)v;
	return 0;
}

int
sandbox_policy_decode(const char *s, struct sandbox_policy *p,
    struct sandbox_phase1 *ph1, struct sandbox_error *e)
{
	char		 name[SANDBOX_NAME_LEN];
	const char	*ws, *f;
	unsigned	 a, want, req, w, x, aw, uid, inet;
	int		 llfd, llabi;
	size_t		 n;

	if (s == NULL || strncmp(s, "v1;", 3) != 0)
		return sandbox_fail(e, 0, EINVAL, "bad %s (version)",
		    SANDBOX_ENV);
	if ((f = strstr(s, ";a=")) == NULL ||
	    sandbox_decode_hex(f + 3, &a) == -1 ||
	    (f = strstr(s, ";want=")) == NULL ||
	    sandbox_decode_hex(f + 6, &want) == -1 ||
	    (f = strstr(s, ";req=")) == NULL ||
	    sandbox_decode_hex(f + 5, &req) == -1 ||
	    sscanf(s, "v1;a=%*x;w=%u;x=%u;aw=%u;want=%*x;req=%*x;u=%u;"
	    "ll=%d;lla=%d;i=%u;", &w, &x, &aw, &uid, &llfd, &llabi,
	    &inet) != 7 || w > 1 || x > 1 || aw > 1 || inet > 1 ||
	    (f = strstr(s, ";n=")) == NULL || (ws = strstr(s, ";ws=")) == NULL ||
	    ws < f)
		return sandbox_fail(e, 0, EINVAL, "bad %s", SANDBOX_ENV);
	/* No ruleset, or one on an fd above stdio with an ABI we know. */
	if (llfd == -1 ? llabi != 0 : llfd < 3 || llabi < 1 ||
	    llabi > SANDBOX_LANDLOCK_MAX)
		return sandbox_fail(e, 0, EINVAL, "bad %s (Landlock ruleset "
		    "fd %d, ABI %d)", SANDBOX_ENV, llfd, llabi);
	n = (size_t)(ws - (f + 3));
	if (n == 0 || n >= sizeof(name))
		return sandbox_fail(e, 0, EINVAL, "bad %s (name)", SANDBOX_ENV);
	memcpy(name, f + 3, n);
	name[n] = '\0';
	ws += 4;
	if (ws[0] != '/')
		return sandbox_fail(e, 0, EINVAL, "bad %s (workspace)",
		    SANDBOX_ENV);
	if (sandbox_policy_init(p, name, ws, (int)w, (int)x, e) == -1)
		return -1;
	p->allow_weaker = (int)aw;
	p->inet = (int)inet;
	p->want = want;
	p->require = req;
	p->uid = (uid_t)uid;
	if (ph1 != NULL) {
		ph1->applied = a & SANDBOX_PHASE1;
		ph1->landlock_fd = llfd;
		ph1->landlock_abi = llabi;
	}
	return 0;
}

int
sandbox_policy_read(struct sandbox_policy *p, const char *path,
    struct sandbox_error *e)
{
	char	 real[PATH_MAX];
	size_t	 n;

	if (path == NULL || path[0] != '/')
		return sandbox_fail(e, 0, EINVAL, "read path %s: not absolute",
		    path == NULL ? "(null)" : path);
	if (realpath(path, real) == NULL)
		return sandbox_fail(e, 0, errno, "read path %s", path);
	n = strlen(real) + 1;
	if (p->nread >= SANDBOX_READ_MAX ||
	    p->read_used + n > sizeof(p->read_pool))
		return sandbox_fail(e, 0, ENOSPC, "read path %s: a policy "
		    "holds at most %d such paths (%zu bytes)", real,
		    SANDBOX_READ_MAX, sizeof(p->read_pool));
	memcpy(p->read_pool + p->read_used, real, n);
	p->read_used += n;
	p->nread++;
	return 0;
}

/*
 * The copy-on-write layer's mount (cow.h): the calling process (the
 * spawn server, before it forks any worker) moves into a mount namespace
 * of its own where the workspace's path is the run's tree. Each part, and
 * why:
 *
 *  - A user namespace when not root (CLONE_NEWUSER | CLONE_NEWNS):
 *    an ordinary user may mount overlayfs (Linux 5.11) or bind a
 *    directory only in a mount namespace its own user namespace owns.
 *    setgroups is denied and the uid and gid map to themselves: what the
 *    layer creates belongs to the user, and geteuid() stays what it was,
 *    so the sandbox still plans for an ordinary user and each worker
 *    makes its own user namespace inside this one. Root takes a mount
 *    namespace alone.
 *  - / made private, recursively: a new mount namespace copies the
 *    host's shared mounts as shared, and the layer's mount would
 *    propagate back to the host.
 *  - The new mount API (fsopen, fsconfig, fsmount, move_mount): each path
 *    is a string of its own, so a ',' needs no escaping; "lowerdir+"
 *    (Linux 6.8) takes one lower layer as it is, ':' included. Before
 *    6.8, "lowerdir" splits on ':' and a workspace path with one is
 *    refused with a clear error.
 *  - userxattr when not root: overlayfs in a user namespace cannot write
 *    trusted.* xattrs; its opaque markers are then user.overlay.opaque.
 *  - redirect_dir=nofollow, metacopy, index and xino off, whatever the
 *    kernel's defaults: the upper layer then holds only plain files,
 *    directories, whiteouts (0/0 character devices) and opaque markers,
 *    the formats cow_changes reads (a renamed directory is copied up
 *    whole, a chmod copies the data up, not a metadata-only file pointing
 *    below). nofollow, not off: with the module's redirect_always_follow
 *    (its default) "off" means follow, which userxattr refuses
 *    ("conflicting options"); nofollow neither makes redirects nor
 *    follows them.
 *  - nosuid, nodev: a set-user-ID bit or a device node an agent left in
 *    the layer means nothing while the layer is mounted.
 *  - The cwd walked again: it predates the mount, and in the workspace
 *    it would still be the real tree, for this process and every worker
 *    it forks.
 *
 * Copy mode binds the cow directory's tree/ over the workspace the same
 * way (open_tree, move_mount).
 */
#include <sys/types.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/utsname.h>
#include <sys/wait.h>

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/path.h"
#include "common/userns.h"
#include "common/xdg.h"
#include "workspace/cow.h"

/* What each failing step fills: what failed, on what, why. */
static int
cow_mount_fail(char *why, size_t whysz, int errnum, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

static int
cow_mount_fail(char *why, size_t whysz, int errnum, const char *fmt, ...)
{
	va_list	 ap;
	size_t	 n;

	va_start(ap, fmt);
	vsnprintf(why, whysz, fmt, ap);
	va_end(ap);
	n = strlen(why);
	if (errnum != 0 && n < whysz)
		snprintf(why + n, whysz - n, ": %s", strerror(errnum));
	return -1;
}

/*
 * Set in the probe's child (cow_mount_try) when a step failed because
 * the kernel refuses it here (no user namespaces, an overlay it will not
 * mount): an answer that holds for the next runs too. Any other failure
 * (ENOSPC, EMFILE, a uid_map a non-dumpable process may not write) says
 * nothing about them.
 */
static int	cow_mount_refused;

/* errnum from a namespace or mount step: the kernel's refusal? */
static int
cow_mount_refusal(int errnum)
{
	if (errnum == EPERM || errnum == EINVAL || errnum == ENODEV ||
	    errnum == ENOSYS || errnum == EOPNOTSUPP)
		cow_mount_refused = 1;
	return errnum;
}

/* An ordinary user: a user namespace mapping our ids to themselves. */
static int
cow_mount_userns(char *why, size_t whysz)
{
	uid_t		 uid = geteuid();
	gid_t		 gid = getegid();
	const char	*step;

	if (unshare(CLONE_NEWUSER | CLONE_NEWNS) == -1)
		return cow_mount_fail(why, whysz, cow_mount_refusal(errno),
		    "unshare(CLONE_NEWUSER"
		    " | CLONE_NEWNS) (are unprivileged user namespaces "
		    "allowed? see warren sandbox check)");
	if (userns_map_self(uid, gid, &step) == -1)
		return cow_mount_fail(why, whysz, errno, "write %s", step);
	return 0;
}

/* Namespaces of our own, with nothing propagating back to the host. */
static int
cow_mount_ns(char *why, size_t whysz)
{
	if (geteuid() != 0) {
		if (cow_mount_userns(why, whysz) == -1)
			return -1;
	} else if (unshare(CLONE_NEWNS) == -1)
		return cow_mount_fail(why, whysz, cow_mount_refusal(errno),
		    "unshare(CLONE_NEWNS)");
	if (mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) == -1)
		return cow_mount_fail(why, whysz, cow_mount_refusal(errno),
		    "make / private");
	return 0;
}

/* The kernel's own words on a failed fsconfig (the last error it logged). */
static void
cow_mount_kmsg(int fs, char *buf, size_t bufsz)
{
	char	 m[512];
	ssize_t	 n;

	buf[0] = '\0';
	while ((n = read(fs, m, sizeof(m) - 1)) > 0) {
		m[n] = '\0';
		if (m[0] == 'e' && m[1] == ' ')
			snprintf(buf, bufsz, " (kernel: %s)", m + 2);
	}
}

static int
cow_mount_set(int fs, const char *key, const char *val, char *why,
    size_t whysz)
{
	char	 kmsg[600];
	int	 saved;

	if (fsconfig(fs, val != NULL ? FSCONFIG_SET_STRING : FSCONFIG_SET_FLAG,
	    key, val, 0) == 0)
		return 0;
	saved = cow_mount_refusal(errno);
	cow_mount_kmsg(fs, kmsg, sizeof(kmsg));
	return cow_mount_fail(why, whysz, saved, "overlay option %s%s%s%s",
	    key, val != NULL ? "=" : "", val != NULL ? val : "", kmsg);
}

/* Linux a.b or later (the running kernel). */
static int
cow_mount_kernel_at_least(int major, int minor)
{
	struct utsname	 u;
	int		 ma, mi;

	if (uname(&u) == -1 || sscanf(u.release, "%d.%d", &ma, &mi) != 2)
		return 0;
	return ma > major || (ma == major && mi >= minor);
}

/* The workspace as the one lower layer, ':' and all where we can. */
static int
cow_mount_lower(int fs, const char *ws, char *why, size_t whysz)
{
	if (cow_mount_kernel_at_least(6, 8))
		return cow_mount_set(fs, "lowerdir+", ws, why, whysz);
	if (strpbrk(ws, ":\\") != NULL)
		return cow_mount_fail(why, whysz, 0, "the workspace path %s "
		    "holds ':' or '\\', which overlayfs before Linux 6.8 "
		    "reads as a layer separator: rename the directory, or "
		    "use copy mode", ws);
	return cow_mount_set(fs, "lowerdir", ws, why, whysz);
}

/* The overlay's options; every one must be taken. */
static int
cow_mount_options(int fs, const struct cow *c, char *why, size_t whysz)
{
	static const char *const opts[][2] = {
		{ "redirect_dir", "nofollow" }, { "metacopy", "off" },
		{ "index", "off" }, { "xino", "off" },
	};
	const char *mem = c->bound != 0 ? "/mem" : "";	/* cow_bound.c */
	char	 upper[PATH_MAX], work[PATH_MAX];
	size_t	 i;

	if ((size_t)snprintf(upper, sizeof(upper), "%s%s/upper", c->dir,
	    mem) >= sizeof(upper) || (size_t)snprintf(work, sizeof(work),
	    "%s%s/work", c->dir, mem) >= sizeof(work))
		return cow_mount_fail(why, whysz, ENAMETOOLONG, "%s/upper",
		    c->dir);
	if (cow_mount_lower(fs, c->workspace, why, whysz) == -1 ||
	    cow_mount_set(fs, "upperdir", upper, why, whysz) == -1 ||
	    cow_mount_set(fs, "workdir", work, why, whysz) == -1)
		return -1;
	if (geteuid() != 0 &&
	    cow_mount_set(fs, "userxattr", NULL, why, whysz) == -1)
		return -1;
	for (i = 0; i < sizeof(opts) / sizeof(opts[0]); i++)
		if (cow_mount_set(fs, opts[i][0], opts[i][1], why, whysz) == -1)
			return -1;
	return 0;
}

/* A detached mount (fd) onto the workspace's path. */
static int
cow_mount_attach(int mnt, const char *ws, char *why, size_t whysz)
{
	if (move_mount(mnt, "", AT_FDCWD, ws, MOVE_MOUNT_F_EMPTY_PATH) == -1)
		return cow_mount_fail(why, whysz, cow_mount_refusal(errno),
		    "move_mount onto %s", ws);
	return 0;
}

static int
cow_mount_overlay(const struct cow *c, char *why, size_t whysz)
{
	char	 kmsg[600];
	int	 fs, mnt, saved, rc;

	if ((fs = fsopen("overlay", FSOPEN_CLOEXEC)) == -1)
		return cow_mount_fail(why, whysz, cow_mount_refusal(errno),
		    "fsopen(\"overlay\") "
		    "(no overlayfs in this kernel? copy mode needs none)");
	if (cow_mount_options(fs, c, why, whysz) == -1) {
		close(fs);
		return -1;
	}
	if (fsconfig(fs, FSCONFIG_CMD_CREATE, NULL, NULL, 0) == -1) {
		saved = cow_mount_refusal(errno);
		cow_mount_kmsg(fs, kmsg, sizeof(kmsg));
		close(fs);
		return cow_mount_fail(why, whysz, saved, "create the overlay "
		    "(lower %s, upper and work in %s)%s", c->workspace, c->dir,
		    kmsg[0] != '\0' ? kmsg : " (dmesg may say more)");
	}
	mnt = fsmount(fs, FSMOUNT_CLOEXEC, MOUNT_ATTR_NOSUID |
	    MOUNT_ATTR_NODEV);
	saved = mnt == -1 ? cow_mount_refusal(errno) : 0;
	close(fs);
	if (mnt == -1)
		return cow_mount_fail(why, whysz, saved, "fsmount the overlay");
	rc = cow_mount_attach(mnt, c->workspace, why, whysz);
	close(mnt);
	return rc;
}

static int
cow_mount_copy(const struct cow *c, char *why, size_t whysz)
{
	struct mount_attr	 a;
	char			 tree[PATH_MAX];
	int			 mnt, rc;

	if ((size_t)snprintf(tree, sizeof(tree), "%s/tree", c->dir) >=
	    sizeof(tree))
		return cow_mount_fail(why, whysz, ENAMETOOLONG, "%s/tree",
		    c->dir);
	if ((mnt = open_tree(AT_FDCWD, tree, OPEN_TREE_CLONE |
	    OPEN_TREE_CLOEXEC | AT_SYMLINK_NOFOLLOW)) == -1)
		return cow_mount_fail(why, whysz, cow_mount_refusal(errno),
		    "open_tree %s", tree);
	memset(&a, 0, sizeof(a));
	a.attr_set = MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV;
	if (mount_setattr(mnt, "", AT_EMPTY_PATH, &a, sizeof(a)) == -1) {
		rc = cow_mount_fail(why, whysz, cow_mount_refusal(errno),
		    "nosuid, nodev on the "
		    "bind of %s", tree);
		close(mnt);
		return rc;
	}
	rc = cow_mount_attach(mnt, c->workspace, why, whysz);
	close(mnt);
	return rc;
}

int
cow_enter(const struct cow *c, char *err, size_t errsz)
{
	const char	*mode = c->mode == COW_OVERLAY ? "overlay" : "copy";
	char		 why[1536], cwd[PATH_MAX];
	int		 havecwd, rc;

	if ((c->mode != COW_OVERLAY && c->mode != COW_COPY) ||
	    c->dir[0] != '/' || c->workspace[0] != '/') {
		snprintf(err, errsz, "copy-on-write layer '%s' of workspace "
		    "'%s': mode %d, or a path that is not absolute (a bug)",
		    c->dir, c->workspace, (int)c->mode);
		errno = EINVAL;
		return -1;
	}
	havecwd = getcwd(cwd, sizeof(cwd)) != NULL;
	rc = cow_mount_ns(why, sizeof(why));
	if (rc == 0 && c->mode == COW_OVERLAY && c->bound != 0)
		rc = cow_bound_enter(c, why, sizeof(why));
	if (rc == 0 && c->mode == COW_OVERLAY)
		rc = cow_mount_overlay(c, why, sizeof(why));
	else if (rc == 0)
		rc = cow_mount_copy(c, why, sizeof(why));
	/* The old cwd's dentry predates the mount: walk to it again. */
	if (rc == 0 && havecwd && chdir(cwd) == -1)
		rc = cow_mount_fail(why, sizeof(why), errno, "chdir %s in the "
		    "layer", cwd);
	if (rc == -1)
		snprintf(err, errsz, "copy-on-write layer %s (%s of %s): %s",
		    c->dir, mode, c->workspace, why);
	return rc;
}

/* rm -r of name in dirfd, never following a link; dirs made searchable
 * first (overlayfs leaves work/work mode 0). */
static int
cow_mount_rmtree(int at, const char *name)
{
	struct dirent	*d;
	struct stat	 st;
	DIR		*dp;
	int		 fd, rc = 0;

	if (fstatat(at, name, &st, AT_SYMLINK_NOFOLLOW) == -1)
		return errno == ENOENT ? 0 : -1;
	if (!S_ISDIR(st.st_mode))
		return unlinkat(at, name, 0);
	(void)fchmodat(at, name, 0700, 0);
	if ((fd = openat(at, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW |
	    O_CLOEXEC)) == -1)
		return -1;
	if ((dp = fdopendir(fd)) == NULL) {
		close(fd);
		return -1;
	}
	while ((d = readdir(dp)) != NULL)
		if (strcmp(d->d_name, ".") != 0 && strcmp(d->d_name, "..") != 0 &&
		    cow_mount_rmtree(dirfd(dp), d->d_name) == -1)
			rc = -1;
	closedir(dp);
	if (unlinkat(at, name, AT_REMOVEDIR) == -1)
		rc = -1;
	return rc;
}

/* The probe's scratch directories: COW_PROBE_PREFIX, the prober's pid. */
#define COW_PROBE_PREFIX	"cow-probe."

/*
 * Scratch directories of probes whose process is gone (killed in the
 * middle): removed, so none is left behind for good. A live prober's
 * are its own.
 */
static void
cow_mount_sweep(const char *statedir)
{
	struct dirent	*d;
	DIR		*dp;
	char		*end;
	long		 pid;
	size_t		 plen = strlen(COW_PROBE_PREFIX);

	if ((dp = opendir(statedir)) == NULL)
		return;
	while ((d = readdir(dp)) != NULL) {
		if (strncmp(d->d_name, COW_PROBE_PREFIX, plen) != 0)
			continue;
		errno = 0;
		pid = strtol(d->d_name + plen, &end, 10);
		if (errno != 0 || pid <= 0 || *end != '.' ||
		    (kill((pid_t)pid, 0) == 0 || errno != ESRCH))
			continue;
		(void)cow_mount_rmtree(dirfd(dp), d->d_name);
	}
	closedir(dp);
}

/*
 * The probe's scratch layer: lower/ (the workspace, with a file "old"),
 * and upper/ and work/, or tree/ for a copy.
 */
static int
cow_mount_scratch(struct cow *c, enum cow_mode mode, const char *statedir,
    char *why, size_t whysz)
{
	char	 p[PATH_MAX + 16], tmpl[PATH_MAX];
	int	 fd;

	memset(c, 0, sizeof(*c));
	c->mode = mode;
	if ((size_t)snprintf(tmpl, sizeof(tmpl), "%s/" COW_PROBE_PREFIX
	    "%ld.XXXXXX", statedir, (long)getpid()) >= sizeof(tmpl) - 16)
		return cow_mount_fail(why, whysz, ENAMETOOLONG, "%s", statedir);
	if (path_mkdirs(statedir, 0700, 0) == -1 || mkdtemp(tmpl) == NULL)
		return cow_mount_fail(why, whysz, errno, "make a scratch "
		    "directory under %s", statedir);
	strlcpy(c->dir, tmpl, sizeof(c->dir));
	if ((size_t)snprintf(c->workspace, sizeof(c->workspace), "%s/lower",
	    c->dir) >= sizeof(c->workspace))
		return cow_mount_fail(why, whysz, ENAMETOOLONG, "%s", c->dir);
	snprintf(p, sizeof(p), "%s/old", c->workspace);
	if (mkdir(c->workspace, 0700) == -1 ||
	    (fd = open(p, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600)) == -1)
		return cow_mount_fail(why, whysz, errno, "%s", p);
	close(fd);
	snprintf(p, sizeof(p), "%s/%s", c->dir,
	    mode == COW_OVERLAY ? "upper" : "tree");
	if (mkdir(p, 0700) == -1)
		return cow_mount_fail(why, whysz, errno, "mkdir %s", p);
	snprintf(p, sizeof(p), "%s/work", c->dir);
	if (mode == COW_OVERLAY && mkdir(p, 0700) == -1)
		return cow_mount_fail(why, whysz, errno, "mkdir %s", p);
	return 0;
}

/*
 * In the probe's child: enter the layer, write through it, look below.
 * A layer that takes the write or the delete wrongly is refused too.
 */
static int
cow_mount_try(const struct cow *c, char *why, size_t whysz)
{
	struct stat	 st;
	char		 p[PATH_MAX + 16];
	int		 fd;

	if (cow_enter(c, why, whysz) == -1)
		return -1;
	snprintf(p, sizeof(p), "%s/new", c->workspace);
	if ((fd = open(p, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600)) == -1)
		return cow_mount_fail(why, whysz, cow_mount_refusal(errno),
		    "create %s in the layer", p);
	close(fd);
	snprintf(p, sizeof(p), "%s/%s/new", c->dir,
	    c->mode == COW_OVERLAY ? "upper" : "tree");
	cow_mount_refused = 1;
	if (lstat(p, &st) == -1)
		return cow_mount_fail(why, whysz, errno, "a file made in the "
		    "layer is not in %s", p);
	cow_mount_refused = 0;
	if (c->mode != COW_OVERLAY)
		return 0;
	snprintf(p, sizeof(p), "%s/old", c->workspace);
	if (unlink(p) == -1)
		return cow_mount_fail(why, whysz, cow_mount_refusal(errno),
		    "delete %s in the layer", p);
	snprintf(p, sizeof(p), "%s/upper/old", c->dir);
	cow_mount_refused = 1;
	if (lstat(p, &st) == -1 || !S_ISCHR(st.st_mode) || st.st_rdev != 0)
		return cow_mount_fail(why, whysz, errno, "a delete in the "
		    "layer left no whiteout (%s)", p);
	cow_mount_refused = 0;
	return 0;
}

/* The host's side of the scratch layer: untouched? */
static int
cow_mount_untouched(const struct cow *c, char *why, size_t whysz)
{
	char	 p[PATH_MAX + 16];

	snprintf(p, sizeof(p), "%s/new", c->workspace);
	if (access(p, F_OK) == 0)
		return cow_mount_fail(why, whysz, 0, "a write in the layer "
		    "reached the workspace below (%s)", p);
	snprintf(p, sizeof(p), "%s/old", c->workspace);
	if (access(p, F_OK) == -1)
		return cow_mount_fail(why, whysz, errno, "a delete in the "
		    "layer reached the workspace below (%s)", p);
	return 0;
}

/*
 * Fork the child that tries; 1 it worked, 0 the kernel refused (why
 * filled), -1 the child failed otherwise or was killed (why filled): an
 * answer for now only. The child exits 0, COW_MOUNT_NO or COW_MOUNT_ERR.
 */
#define COW_MOUNT_NO	1
#define COW_MOUNT_ERR	2

static int
cow_mount_fork(const struct cow *c, char *why, size_t whysz)
{
	ssize_t	 n;
	size_t	 got = 0;
	pid_t	 pid;
	int	 p[2], st;

	if (pipe2(p, O_CLOEXEC) == -1)
		return cow_mount_fail(why, whysz, errno, "pipe");
	if ((pid = fork()) == -1) {
		close(p[0]);
		close(p[1]);
		return cow_mount_fail(why, whysz, errno, "fork");
	}
	if (pid == 0) {
		close(p[0]);
		cow_mount_refused = 0;
		if (cow_mount_try(c, why, whysz) == 0)
			_exit(0);
		(void)write(p[1], why, strlen(why));
		_exit(cow_mount_refused ? COW_MOUNT_NO : COW_MOUNT_ERR);
	}
	close(p[1]);
	why[0] = '\0';
	while (got < whysz - 1 && ((n = read(p[0], why + got,
	    whysz - 1 - got)) > 0 || (n == -1 && errno == EINTR)))
		got += n > 0 ? (size_t)n : 0;
	why[got] = '\0';
	close(p[0]);
	while (waitpid(pid, &st, 0) == -1)
		if (errno != EINTR)
			return cow_mount_fail(why, whysz, errno, "waitpid");
	if (WIFEXITED(st) && WEXITSTATUS(st) == 0)
		return cow_mount_untouched(c, why, whysz) == 0;
	if (WIFEXITED(st) && WEXITSTATUS(st) == COW_MOUNT_NO && why[0] != '\0')
		return 0;
	if (WIFSIGNALED(st))
		return cow_mount_fail(why, whysz, 0, "the probe's child was "
		    "killed by signal %d", WTERMSIG(st));
	if (why[0] == '\0')
		snprintf(why, whysz, "the probe's child ended with status %d",
		    WIFEXITED(st) ? WEXITSTATUS(st) : st);
	return -1;
}

int
cow_probe(enum cow_mode mode, const char *statedir, char *why, size_t whysz)
{
	struct cow	 c;
	char		 sd[PATH_MAX];
	int		 rc;

	if (statedir == NULL) {
		if (xdg_state_dir(sd, sizeof(sd)) == -1)
			return cow_mount_fail(why, whysz, errno, "no state "
			    "directory (set HOME or XDG_STATE_HOME)");
		statedir = sd;
	}
	cow_mount_sweep(statedir);
	if (cow_mount_scratch(&c, mode, statedir, why, whysz) == -1)
		rc = -1;
	else
		rc = cow_mount_fork(&c, why, whysz);
	if (c.dir[0] != '\0' && cow_mount_rmtree(AT_FDCWD, c.dir) == -1 &&
	    rc == 1)
		rc = cow_mount_fail(why, whysz, errno, "remove the probe's "
		    "scratch directory %s", c.dir);
	return rc;
}

int
cow_probe_overlay(const char *statedir, char *why, size_t whysz)
{
	return cow_probe(COW_OVERLAY, statedir, why, whysz);
}

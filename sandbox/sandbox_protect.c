/*
 * Protected paths: what a write-capable agent must not change because the
 * trusted side reads it later outside any sandbox (the whole `.git`, which
 * git runs hooks and config from; `.warren`; warren's config directory),
 * or must not read at all (warren's state directory, which holds every
 * run's database, when it lies inside the workspace; the host's password
 * hashes and SSH host keys, which a root-started worker owns).
 *
 * In the child's mount namespace, before anything untrusted runs:
 *
 *   read-only	the path's own tree cloned (open_tree), made read-only
 *		(mount_setattr) and moved onto the path (move_mount): a
 *		mount point, so it cannot be renamed, removed or replaced
 *		(EBUSY), and nothing under it can be written (EROFS).
 *   masked	a directory gets an empty read-only tmpfs of mode 000 over
 *		it; a file, an empty mode-000 file of a read-only tmpfs.
 *		Opening anything there fails (EACCES, ENOENT).
 *
 * The workspace is hostile, and other agents of the run write it while a
 * worker starts: each path is walked one part at a time from an fd, every
 * part opened O_PATH | O_NOFOLLOW, and the mounts are made on the fd, not
 * on a name that could be swapped in between. A symlink on the way is
 * refused (ELOOP), never followed. A path that does not exist is skipped.
 * Each directory on the way down from the workspace becomes a mount point
 * too (read-write): renaming `.local` would otherwise carry a masked
 * `.local/state/warren` away and leave room for a planted one.
 *
 * The child of a raw clone runs no malloc: buffers are on the stack.
 */
#include <sys/types.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/syscall.h>

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/path.h"
#include "sandbox/sandbox_int.h"
#include "sandbox/sandbox_testapi.h"

/* The host's secrets a root-started worker would own (and read). */
static const char *const sandbox_protect_secrets[] = {
	"/etc/shadow", "/etc/shadow-", "/etc/gshadow", "/etc/gshadow-",
	"/etc/security/opasswd",
};
#define SANDBOX_SSH_DIR		"/etc/ssh"

/* The mask file's tmpfs: where it is attached while binds are made. */
static const char *const sandbox_protect_stages[] = { "/tmp", "/proc" };

/* policies */

/* 0 if path has no "." or ".." part (empty parts are ignored). */
static int
sandbox_protect_parts_ok(const char *path)
{
	const char	*s, *end;
	size_t		 n;

	for (s = path; *s != '\0'; s = *end != '\0' ? end + 1 : end) {
		end = strchrnul(s, '/');
		n = (size_t)(end - s);
		if ((n == 1 && s[0] == '.') || (n == 2 && s[0] == '.' &&
		    s[1] == '.'))
			return -1;
	}
	return 0;
}

/*
 * The canonical form of an absolute path: realpath of its longest prefix
 * that exists, then the rest as given (a state directory warren has not
 * made yet, under a $HOME that is itself a symlink, is still found).
 */
static int
sandbox_protect_canon(const char *path, char *out, size_t len)
{
	char		 head[PATH_MAX], real[PATH_MAX], *slash;
	const char	*s, *end;

	if (strlcpy(head, path, sizeof(head)) >= sizeof(head)) {
		errno = ENAMETOOLONG;
		return -1;
	}
	while (realpath(head, real) == NULL) {
		if (errno != ENOENT && errno != ENOTDIR)
			return -1;
		if ((slash = strrchr(head, '/')) == NULL)
			return -1;
		if (slash == head) {
			strlcpy(real, "/", sizeof(real));
			head[0] = '\0';
			break;
		}
		*slash = '\0';
	}
	if (strlcpy(out, real, len) >= len)
		goto toolong;
	/* The rest, one part at a time: no empty parts, no trailing '/'. */
	for (s = path + strlen(head); *s != '\0'; s = *end != '\0' ?
	    end + 1 : end) {
		end = strchrnul(s, '/');
		if (end == s)
			continue;
		if ((strcmp(out, "/") != 0 && strlcat(out, "/", len) >= len) ||
		    strlen(out) + (size_t)(end - s) >= len)
			goto toolong;
		strncat(out, s, (size_t)(end - s));
	}
	return 0;
toolong:
	errno = ENAMETOOLONG;
	return -1;
}


/* SANDBOX_MNTNS if a protected path under the workspace needs one. */
unsigned
sandbox_protect_require(const struct sandbox_policy *p)
{
	const char	*path;
	unsigned	 flags;
	int		 i;

	for (i = 0; i < p->nprotect; i++) {
		path = sandbox_policy_protected(p, i, &flags);
		if (path[0] != '/' && (p->fs_write ||
		    (flags & SANDBOX_PROTECT_MASK)))
			return SANDBOX_MNTNS;
	}
	return 0;
}

/* 1 if a path under the workspace is masked (in every profile). */
int
sandbox_protect_masks_ws(const struct sandbox_policy *p)
{
	const char	*path;
	unsigned	 flags;
	int		 i;

	for (i = 0; i < p->nprotect; i++) {
		path = sandbox_policy_protected(p, i, &flags);
		if (path[0] != '/' && (flags & SANDBOX_PROTECT_MASK))
			return 1;
	}
	return 0;
}

static int
sandbox_protect_add(struct sandbox_policy *p, const char *rel,
    unsigned flags, struct sandbox_error *e)
{
	unsigned	 f;
	size_t		 n;
	int		 i;

	for (i = 0; i < p->nprotect; i++)
		if (strcmp(sandbox_policy_protected(p, i, &f), rel) == 0) {
			p->protect[i].flags |= (unsigned short)flags;
			return 0;
		}
	n = strlen(rel) + 1;
	if (p->nprotect == SANDBOX_PROTECT_MAX ||
	    p->protect_used + n > sizeof(p->protect_pool))
		return sandbox_fail(e, SANDBOX_MNTNS, ENOSPC, "protect %s: "
		    "the policy holds %d paths, %zu bytes", rel,
		    SANDBOX_PROTECT_MAX, sizeof(p->protect_pool));
	memcpy(p->protect_pool + p->protect_used, rel, n);
	p->protect[p->nprotect].off = (unsigned short)p->protect_used;
	p->protect[p->nprotect].flags = (unsigned short)flags;
	p->nprotect++;
	p->protect_used += n;
	return 0;
}

int
sandbox_policy_protect(struct sandbox_policy *p, const char *path,
    unsigned flags, struct sandbox_error *e)
{
	char	 canon[PATH_MAX];
	size_t	 n;

	if (path == NULL || path[0] == '\0' || flags == 0 ||
	    (flags & ~(SANDBOX_PROTECT_RO | SANDBOX_PROTECT_MASK)) != 0 ||
	    sandbox_protect_parts_ok(path) == -1)
		return sandbox_fail(e, SANDBOX_MNTNS, EINVAL, "protect '%s': "
		    "give a path without . or .. parts, and RO or MASK",
		    path == NULL ? "" : path);
	if (path[0] != '/') {
		if (sandbox_protect_add(p, path, flags, e) == -1)
			return -1;
	} else {
		if (sandbox_protect_canon(path, canon, sizeof(canon)) == -1)
			return sandbox_fail(e, SANDBOX_MNTNS, errno,
			    "protect %s", path);
		if (path_under(p->workspace, canon))
			return sandbox_fail(e, SANDBOX_MNTNS, EINVAL, "the "
			    "workspace %s lies inside %s, which warren "
			    "protects from its agents: choose another "
			    "workspace", p->workspace, canon);
		n = strcmp(p->workspace, "/") == 0 ? 1 :
		    strlen(p->workspace) + 1;
		if (path_under(canon, p->workspace) &&
		    sandbox_protect_add(p, canon + n, flags, e) == -1)
			return -1;
		if (!path_under(canon, p->workspace) &&
		    sandbox_protect_add(p, canon, flags, e) == -1)
			return -1;
	}
	p->require |= sandbox_protect_require(p);
	return 0;
}

const char *
sandbox_policy_protected(const struct sandbox_policy *p, int i,
    unsigned *flags)
{
	if (i < 0 || i >= p->nprotect ||
	    p->protect[i].off >= sizeof(p->protect_pool))
		return NULL;
	if (flags != NULL)
		*flags = p->protect[i].flags;
	return p->protect_pool + p->protect[i].off;
}

/* the child's mounts */

/* The mask file: an empty mode-000 file of a read-only tmpfs. */
struct sandbox_mask {
	int		 file;		/* O_PATH fd, or -1 */
	const char	*stage;		/* where its tmpfs is attached, if on
					 * top (to detach), or NULL */
};

#ifndef MOVE_MOUNT_BENEATH
#define MOVE_MOUNT_BENEATH	0x00000200	/* Linux 6.5 */
#endif

/* The mask file's tmpfs made, detached: its fd (mfd), the file in it. */
static int
sandbox_protect_mask_fs(struct sandbox_mask *m, int *mfd,
    struct sandbox_error *e)
{
	struct mount_attr	 attr;
	int			 fs, fd, saved;

	if ((fs = fsopen("tmpfs", FSOPEN_CLOEXEC)) == -1)
		return sandbox_fail(e, SANDBOX_MNTNS, errno, "fsopen the mask "
		    "file's tmpfs");
	if (fsconfig(fs, FSCONFIG_SET_STRING, "size", "4k", 0) == -1 ||
	    fsconfig(fs, FSCONFIG_SET_STRING, "nr_inodes", "4", 0) == -1 ||
	    fsconfig(fs, FSCONFIG_SET_STRING, "mode", "0700", 0) == -1 ||
	    fsconfig(fs, FSCONFIG_CMD_CREATE, NULL, NULL, 0) == -1 ||
	    (*mfd = fsmount(fs, FSMOUNT_CLOEXEC, MOUNT_ATTR_NOSUID |
	    MOUNT_ATTR_NODEV | MOUNT_ATTR_NOEXEC)) == -1) {
		saved = errno;
		close(fs);
		return sandbox_fail(e, SANDBOX_MNTNS, saved, "make the mask "
		    "file's tmpfs");
	}
	if ((fd = openat(*mfd, "mask", O_WRONLY | O_CREAT | O_EXCL |
	    O_NOFOLLOW | O_CLOEXEC, 0)) == -1) {
		saved = errno;
		close(fs);
		return sandbox_fail(e, SANDBOX_MNTNS, saved, "create the mask "
		    "file");
	}
	close(fd);
	/* The superblock read-only: no chmod through any bind of it; and
	 * the mount, which every bind of the file is cloned from. */
	memset(&attr, 0, sizeof(attr));
	attr.attr_set = MOUNT_ATTR_RDONLY;
	if (fsconfig(fs, FSCONFIG_SET_FLAG, "ro", NULL, 0) == -1 ||
	    fsconfig(fs, FSCONFIG_CMD_RECONFIGURE, NULL, NULL, 0) == -1 ||
	    mount_setattr(*mfd, "", AT_EMPTY_PATH, &attr, sizeof(attr)) ==
	    -1) {
		saved = errno;
		close(fs);
		return sandbox_fail(e, SANDBOX_MNTNS, saved, "make the mask "
		    "tmpfs read-only");
	}
	close(fs);
	if ((m->file = openat(*mfd, "mask", O_PATH | O_NOFOLLOW |
	    O_CLOEXEC)) == -1)
		return sandbox_fail(e, SANDBOX_MNTNS, errno, "open the mask "
		    "file");
	return 0;
}

/*
 * Attach the mask file's tmpfs (once): a bind needs a mount of this
 * namespace. Beneath the mount on a stage (MOVE_MOUNT_BENEATH), where it
 * stays hidden under the host's /proc until the namespace dies; where
 * that is refused (before 6.5, a mount a user namespace locked) on top of
 * a stage, detached again by sandbox_protect_unstage. Every unmount waits
 * for an RCU grace period, 2-20 ms on a busy machine; the mount beneath
 * needs none (docs/benchmarks.md, "warren sandbox exec, end to end").
 */
static int
sandbox_protect_stage(struct sandbox_mask *m, struct sandbox_error *e)
{
	struct stat	 st;
	size_t		 i;
	int		 mfd = -1, rc, saved;

	if (m->file != -1)
		return 0;
	for (i = 0; i < sizeof(sandbox_protect_stages) /
	    sizeof(sandbox_protect_stages[0]); i++)
		if (stat(sandbox_protect_stages[i], &st) == 0 &&
		    S_ISDIR(st.st_mode))
			break;
	if (i == sizeof(sandbox_protect_stages) /
	    sizeof(sandbox_protect_stages[0]))
		return sandbox_fail(e, SANDBOX_MNTNS, ENOENT, "no /tmp or "
		    "/proc to stage the mask file on");
	if (sandbox_protect_mask_fs(m, &mfd, e) == -1) {
		if (mfd != -1)
			close(mfd);
		return -1;
	}
	if (move_mount(mfd, "", AT_FDCWD, "/proc", MOVE_MOUNT_F_EMPTY_PATH |
	    MOVE_MOUNT_BENEATH) == 0) {
		close(mfd);
		return 0;
	}
	rc = move_mount(mfd, "", AT_FDCWD, sandbox_protect_stages[i],
	    MOVE_MOUNT_F_EMPTY_PATH);
	saved = errno;
	close(mfd);
	if (rc == -1)
		return sandbox_fail(e, SANDBOX_MNTNS, saved, "mount the mask "
		    "tmpfs on %s", sandbox_protect_stages[i]);
	m->stage = sandbox_protect_stages[i];
	return 0;
}

/* The binds of the mask file outlive its tmpfs's detach. */
static int
sandbox_protect_unstage(struct sandbox_mask *m, struct sandbox_error *e)
{
	if (m->file != -1)
		close(m->file);
	m->file = -1;
	if (m->stage == NULL)
		return 0;
	if (umount2(m->stage, MNT_DETACH) == -1)
		return sandbox_fail(e, SANDBOX_MNTNS, errno, "detach the mask "
		    "tmpfs from %s", m->stage);
	return 0;
}

/* Move the detached tree tfd onto target (an O_PATH fd); closes tfd. */
static int
sandbox_protect_attach(int tfd, int target, const char *name,
    struct sandbox_error *e)
{
	int	 rc, saved;

	rc = move_mount(tfd, "", target, "", MOVE_MOUNT_F_EMPTY_PATH |
	    MOVE_MOUNT_T_EMPTY_PATH);
	saved = errno;
	close(tfd);
	if (rc == -1)
		return sandbox_fail(e, SANDBOX_MNTNS, saved, "mount over %s",
		    name);
	return 0;
}

/*
 * A clone of target's own tree (read-only if ro) moved onto it: target
 * becomes a mount point, which cannot be renamed or removed. The clone's
 * fd, which now names the mount on top (walk on from it), or -1.
 */
static int
sandbox_protect_pin(int target, int ro, const char *name,
    struct sandbox_error *e)
{
	struct mount_attr	 attr;
	int			 tfd, saved;

	if ((tfd = open_tree(target, "", OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC |
	    AT_EMPTY_PATH | AT_RECURSIVE)) == -1)
		return sandbox_fail(e, SANDBOX_MNTNS, errno, "clone %s", name);
	memset(&attr, 0, sizeof(attr));
	attr.attr_set = MOUNT_ATTR_RDONLY | MOUNT_ATTR_NOSUID |
	    MOUNT_ATTR_NODEV;
	if (ro && mount_setattr(tfd, "", AT_EMPTY_PATH | AT_RECURSIVE, &attr,
	    sizeof(attr)) == -1) {
		saved = errno;
		close(tfd);
		return sandbox_fail(e, SANDBOX_MNTNS, saved,
		    "make %s read-only", name);
	}
	if (move_mount(tfd, "", target, "", MOVE_MOUNT_F_EMPTY_PATH |
	    MOVE_MOUNT_T_EMPTY_PATH) == -1) {
		saved = errno;
		close(tfd);
		return sandbox_fail(e, SANDBOX_MNTNS, saved, "mount over %s",
		    name);
	}
	return tfd;
}

/* An empty read-only tmpfs of mode 000 over the directory target. */
static int
sandbox_protect_mask_dir(int target, const char *name,
    struct sandbox_error *e)
{
	int	 fs, mfd, saved;

	if ((fs = fsopen("tmpfs", FSOPEN_CLOEXEC)) == -1)
		return sandbox_fail(e, SANDBOX_MNTNS, errno, "fsopen tmpfs "
		    "to mask %s", name);
	if (fsconfig(fs, FSCONFIG_SET_STRING, "size", "4k", 0) == -1 ||
	    fsconfig(fs, FSCONFIG_SET_STRING, "nr_inodes", "2", 0) == -1 ||
	    fsconfig(fs, FSCONFIG_SET_STRING, "mode", "0", 0) == -1 ||
	    fsconfig(fs, FSCONFIG_CMD_CREATE, NULL, NULL, 0) == -1 ||
	    (mfd = fsmount(fs, FSMOUNT_CLOEXEC, MOUNT_ATTR_RDONLY |
	    MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV | MOUNT_ATTR_NOEXEC)) == -1) {
		saved = errno;
		close(fs);
		return sandbox_fail(e, SANDBOX_MNTNS, saved, "make the tmpfs "
		    "that masks %s", name);
	}
	close(fs);
	return sandbox_protect_attach(mfd, target, name, e);
}

/* The mask file over the regular file target. */
static int
sandbox_protect_mask_file(struct sandbox_mask *m, int target,
    const char *name, struct sandbox_error *e)
{
	int	 tfd;

	if (sandbox_protect_stage(m, e) == -1)
		return -1;
	if ((tfd = open_tree(m->file, "", OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC |
	    AT_EMPTY_PATH)) == -1)
		return sandbox_fail(e, SANDBOX_MNTNS, errno, "clone the mask "
		    "file for %s", name);
	return sandbox_protect_attach(tfd, target, name, e);
}

/*
 * rel below the directory fd dir (name in errors), each part opened
 * O_PATH | O_NOFOLLOW; with pin, each directory on the way is made a
 * mount point (sandbox_protect_pin) so that an agent cannot rename it and
 * put a tree of its own in its place. The last part's fd and stat; -2 if
 * a part is missing or not a directory (nothing to protect); -1 with e
 * filled if a part is a symlink (refused, never followed) or a call
 * failed.
 */
static int
sandbox_protect_walk(int dir, const char *rel, const char *name, int pin,
    struct stat *st, struct sandbox_error *e)
{
	char		 part[NAME_MAX + 1];
	const char	*s, *end;
	size_t		 n;
	int		 cur = -1, fd;

	for (s = rel; *s != '\0'; s = *end != '\0' ? end + 1 : end) {
		end = strchrnul(s, '/');
		if ((n = (size_t)(end - s)) == 0)
			continue;
		if (cur != -1 && !S_ISDIR(st->st_mode))
			goto absent;
		if (cur != -1 && pin) {
			fd = sandbox_protect_pin(cur, 0, name, e);
			close(cur);
			if ((cur = fd) == -1)
				return -1;
		}
		if (n >= sizeof(part)) {
			sandbox_fail(e, SANDBOX_MNTNS, ENAMETOOLONG, "%s", name);
			goto fail;
		}
		memcpy(part, s, n);
		part[n] = '\0';
		fd = openat(cur == -1 ? dir : cur, part, O_PATH | O_NOFOLLOW |
		    O_CLOEXEC);
		if (cur != -1)
			close(cur);
		if ((cur = fd) == -1 && (errno == ENOENT || errno == ENOTDIR))
			return -2;
		if (cur == -1)
			return sandbox_fail(e, SANDBOX_MNTNS, errno, "open %s",
			    name);
		if (fstat(cur, st) == -1) {
			sandbox_fail(e, SANDBOX_MNTNS, errno, "stat %s", name);
			goto fail;
		}
		if (S_ISLNK(st->st_mode)) {
			sandbox_fail(e, SANDBOX_MNTNS, ELOOP, "%s is, or lies "
			    "under, a symlink: warren does not follow one "
			    "there (an agent may have planted it); replace it "
			    "with the directory or file", name);
			goto fail;
		}
	}
	if (cur == -1)
		return sandbox_fail(e, SANDBOX_MNTNS, EINVAL, "empty path");
	return cur;
absent:
	close(cur);
	return -2;
fail:
	if (cur != -1)
		close(cur);
	return -1;
}

/* One protected path, walked from dir (shown as name in errors). */
static int
sandbox_protect_one(struct sandbox_mask *m, int dir, const char *rel,
    const char *name, unsigned flags, int pin, struct sandbox_error *e)
{
	struct stat	 st;
	int		 fd, rc;

	if ((fd = sandbox_protect_walk(dir, rel, name, pin, &st, e)) < 0)
		return fd == -2 ? 0 : -1;
	if (!S_ISDIR(st.st_mode) && !S_ISREG(st.st_mode))
		rc = sandbox_fail(e, SANDBOX_MNTNS, EINVAL, "%s is neither a "
		    "directory nor a file: remove it", name);
	else if (!(flags & SANDBOX_PROTECT_MASK)) {
		if ((rc = sandbox_protect_pin(fd, 1, name, e)) != -1) {
			close(rc);
			rc = 0;
		}
	} else if (S_ISDIR(st.st_mode))
		rc = sandbox_protect_mask_dir(fd, name, e);
	else
		rc = sandbox_protect_mask_file(m, fd, name, e);
	close(fd);
	return rc;
}

/* The host's secret at path, if this process could read it. */
static int
sandbox_protect_secret(struct sandbox_mask *m, const char *path,
    struct sandbox_error *e)
{
	struct stat	 st;
	int		 fd, rc;

	if ((fd = open(path, O_PATH | O_NOFOLLOW | O_CLOEXEC)) == -1)
		return 0;
	/* Root reads it by owning it (mode 0640 root:shadow): no capability
	 * is needed, so dropping them does not help. An ordinary user
	 * usually cannot, and pays nothing. */
	if (fstat(fd, &st) == -1 || !S_ISREG(st.st_mode) ||
	    faccessat(AT_FDCWD, path, R_OK, AT_EACCESS) == -1)
		rc = 0;
	else
		rc = sandbox_protect_mask_file(m, fd, path, e);
	close(fd);
	return rc;
}

/* /etc/ssh/ssh_host_*_key, read with getdents64 (no malloc here). */
static int
sandbox_protect_ssh_keys(struct sandbox_mask *m, struct sandbox_error *e)
{
	char		 buf[4096], path[PATH_MAX];
	struct dirent64	*de;
	long		 n, off;
	size_t		 len;
	int		 dfd, rc = 0;

	if ((dfd = open(SANDBOX_SSH_DIR, O_RDONLY | O_DIRECTORY |
	    O_CLOEXEC)) == -1)
		return 0;
	while (rc == 0 && (n = syscall(SYS_getdents64, dfd, buf,
	    sizeof(buf))) > 0)
		for (off = 0; rc == 0 && off < n; off += de->d_reclen) {
			de = (struct dirent64 *)(void *)(buf + off);
			len = strlen(de->d_name);
			if (strncmp(de->d_name, "ssh_host_", 9) != 0 ||
			    len < 13 || strcmp(de->d_name + len - 4,
			    "_key") != 0)
				continue;
			snprintf(path, sizeof(path), "%s/%s", SANDBOX_SSH_DIR,
			    de->d_name);
			rc = sandbox_protect_secret(m, path, e);
		}
	close(dfd);
	return rc;
}

static int
sandbox_protect_secrets_all(struct sandbox_mask *m, struct sandbox_error *e)
{
	size_t	 i;

	for (i = 0; i < sizeof(sandbox_protect_secrets) /
	    sizeof(sandbox_protect_secrets[0]); i++)
		if (sandbox_protect_secret(m, sandbox_protect_secrets[i],
		    e) == -1)
			return -1;
	return sandbox_protect_ssh_keys(m, e);
}

/*
 * Whether entry i is mounted in this sandbox. Under the workspace, masks
 * always and read-only mounts where writes are not already refused (a
 * read-only profile with a Landlock ruleset: it and seccomp refuse every
 * write and rename). Outside it, Landlock lets a sandbox read only system
 * directories and write nothing: so only without a ruleset, or a mask of
 * a path Landlock would let it read.
 */
static int
sandbox_protect_wanted(const struct sandbox_policy *p, const char *path,
    unsigned flags, int landlocked)
{
	if (path[0] != '/')
		return (flags & SANDBOX_PROTECT_MASK) || p->fs_write ||
		    !landlocked;
	return !landlocked || ((flags & SANDBOX_PROTECT_MASK) &&
	    sandbox_landlock_reads(path));
}

static int
sandbox_protect_paths(const struct sandbox_policy *p, struct sandbox_mask *m,
    int wsfd, int landlocked, struct sandbox_error *e)
{
	char		 name[PATH_MAX];
	const char	*path;
	unsigned	 flags;
	int		 i, root = -1, rc = 0;

	for (i = 0; rc == 0 && i < p->nprotect; i++) {
		path = sandbox_policy_protected(p, i, &flags);
		if (!sandbox_protect_wanted(p, path, flags, landlocked))
			continue;
		if (path[0] == '/' && root == -1 && (root = open("/", O_PATH |
		    O_DIRECTORY | O_CLOEXEC)) == -1)
			return sandbox_fail(e, SANDBOX_MNTNS, errno, "open /");
		/* Outside the workspace nothing is writable but where no
		 * Landlock holds, and then nothing is safe anyway. */
		if (path[0] == '/')
			rc = sandbox_protect_one(m, root, path + 1, path,
			    flags, 0, e);
		else if (wsfd == -1)
			rc = sandbox_fail(e, SANDBOX_MNTNS, EBADF, "%s: no "
			    "workspace fd", path);
		else {
			snprintf(name, sizeof(name), "%s/%s", p->workspace,
			    path);
			rc = sandbox_protect_one(m, wsfd, path, name, flags,
			    p->fs_write || !landlocked, e);
		}
	}
	if (root != -1)
		close(root);
	return rc;
}

/*
 * In the child's new mount namespace, before the private /tmp (whose
 * bind of the workspace back in is recursive, so it carries these mounts
 * along): wsfd is the workspace opened before any mount (-1 if the
 * sandbox wants no path under it); landlocked, the child will have a
 * Landlock ruleset.
 */
int
sandbox_protect_mounts(const struct sandbox_policy *p, int wsfd,
    int landlocked, struct sandbox_error *e)
{
	struct sandbox_mask	 m = { -1, NULL };
	int			 rc;

	rc = sandbox_protect_paths(p, &m, wsfd, landlocked, e);
	if (rc == 0)
		rc = sandbox_protect_secrets_all(&m, e);
	if (sandbox_protect_unstage(&m, rc == 0 ? e : NULL) == -1)
		rc = -1;
	return rc;
}

/*
 * The disk limit the kernel holds (cow.h, c->bound): an overlay layer
 * whose upper directory is a tmpfs of c->bound bytes, mounted in the
 * mount namespace of whoever enters the layer (the spawn server, or
 * `sandbox exec --cow`), so every worker of the run writes into it and a
 * write past it fails with ENOSPC, at the call, however many files and
 * processes write at once. tmpfs is the one size-limited filesystem an
 * ordinary user may mount (in its own user namespace); as root it is the
 * same, so both run one code path.
 *
 * The tmpfs is mounted on the cow directory's mem/ (in the host's mount
 * namespace an empty directory) and holds mem/upper and mem/work. Its
 * pages are memory: what the agents write is held in RAM (or swap) until
 * the layer is saved, charged to the writer's memory cgroup, and at most
 * c->bound of it.
 *
 * The layer on disk stays the cow directory's upper/, which diff, apply
 * and resume read: cow_bound_enter copies it into the tmpfs (a resumed
 * run goes on from it; it counts against the limit), and cow_bound_save
 * copies the tmpfs back when the last writer is gone (the spawn server's
 * end, however the supervisor ended: its EOF or its death). The save
 * writes upper.new and swaps it with upper (RENAME_EXCHANGE), so a save
 * cut short leaves upper as the last whole one, and upper.new is removed
 * by the next enter. The process that holds the tmpfs holds an flock on
 * the cow directory from enter to the end of its save, and an enter waits
 * for it (COW_BOUND_LOCK_S at most): a `warren resume` right after its
 * supervisor's `kill -9` starts from what the old server saves, not from
 * before it. The copy keeps what the overlay's upper holds:
 * directories (with their opaque markers), files (holes kept: a sparse
 * file takes on disk what it took in the tmpfs), hard links as links (a
 * file linked a thousand times is one file's blocks), symbolic links,
 * whiteouts (0/0 character devices, which any user may make since Linux
 * 5.8), FIFOs and sockets, with their modes and times.
 */
#include <sys/types.h>
#include <sys/file.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/xattr.h>

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/xmalloc.h"
#include "workspace/cow_int.h"

#define COW_MEM		"mem"		/* the tmpfs mounts here */
#define COW_UPPER_NEW	"upper.new"	/* a save being written */
#define COW_BOUND_PAGE		4096ull
#define COW_BOUND_MIN_INODES	1024ull
#define COW_BOUND_LOCK_S	50	/* an enter waits for a save */

/* The flock on the cow directory of the layer this process holds. */
static int	cow_bound_lockfd = -1;

/* A file with more than one link, copied once: where its copy is. */
struct cow_bound_link {
	dev_t		 dev;
	ino_t		 ino;
	char		*rel;		/* under the destination */
};

struct cow_bound_cp {
	int		 dstroot;
	struct cow_bound_link *links;
	size_t		 nlinks, caplinks;
	size_t		 entries;
	int		 failed;	/* entries not copied */
	char		 rel[PATH_MAX];
	char		*err;
	size_t		 errsz;
};

static int	cow_bound_copy_dir(struct cow_bound_cp *, int, int, unsigned);

static int
cow_bound_fail(struct cow_bound_cp *cp, int errnum, const char *what)
{
	if (cp->failed++ == 0)
		snprintf(cp->err, cp->errsz, "%s %s: %s", what, cp->rel,
		    strerror(errnum));
	return -1;
}

/* The opaque marker overlayfs puts on a directory that hides below. */
static void
cow_bound_copy_opaque(int sfd, int dfd)
{
	static const char *const names[] = {
		"trusted.overlay.opaque", "user.overlay.opaque",
	};
	char	v[8];
	ssize_t	n;
	size_t	i;

	for (i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		if ((n = fgetxattr(sfd, names[i], v, sizeof(v))) > 0)
			(void)fsetxattr(dfd, names[i], v, (size_t)n, 0);
}

static void
cow_bound_copy_meta(int dfd, const struct stat *st)
{
	struct timespec	ts[2];

	if (geteuid() == 0)
		(void)fchown(dfd, st->st_uid, st->st_gid);
	(void)fchmod(dfd, st->st_mode & 07777);
	ts[0] = st->st_atim;
	ts[1] = st->st_mtim;
	(void)futimens(dfd, ts);
}

/* The bytes of sfd into dfd, holes kept. */
static int
cow_bound_copy_data(int sfd, int dfd, off_t size)
{
	char	 buf[65536];
	off_t	 data = 0, hole, off;
	ssize_t	 n;

	while (data < size) {
		if ((data = lseek(sfd, data, SEEK_DATA)) == -1)
			return errno == ENXIO ? ftruncate(dfd, size) : -1;
		if ((hole = lseek(sfd, data, SEEK_HOLE)) == -1)
			return -1;
		for (off = data; off < hole; off += n) {
			n = pread(sfd, buf, hole - off < (off_t)sizeof(buf) ?
			    (size_t)(hole - off) : sizeof(buf), off);
			if (n <= 0)
				return n == 0 ? 0 : -1;
			if (pwrite(dfd, buf, (size_t)n, off) != n)
				return -1;
		}
		data = hole;
	}
	return ftruncate(dfd, size);
}

/* A second name of a file already copied: a link to its copy. */
static int
cow_bound_copy_linked(struct cow_bound_cp *cp, int dfd, const char *name,
    const struct stat *st)
{
	struct cow_bound_link	*l;
	size_t		 i;

	if (st->st_nlink < 2)
		return 0;
	for (i = 0; i < cp->nlinks; i++)
		if (cp->links[i].dev == st->st_dev &&
		    cp->links[i].ino == st->st_ino)
			return linkat(cp->dstroot, cp->links[i].rel, dfd, name,
			    0) == 0 ? 1 : -1;
	if (cp->nlinks == cp->caplinks) {
		cp->caplinks = cp->caplinks ? cp->caplinks * 2 : 16;
		cp->links = xreallocarray(cp->links, cp->caplinks,
		    sizeof(*cp->links));
	}
	l = &cp->links[cp->nlinks++];
	l->dev = st->st_dev;
	l->ino = st->st_ino;
	l->rel = xstrdup(cp->rel);
	return 0;
}

static int
cow_bound_copy_file(struct cow_bound_cp *cp, int sdir, int ddir,
    const char *name, const struct stat *st)
{
	int	sfd, dfd, rc;

	if ((rc = cow_bound_copy_linked(cp, ddir, name, st)) != 0)
		return rc == 1 ? 0 : cow_bound_fail(cp, errno, "link");
	if ((sfd = openat(sdir, name, O_RDONLY | O_NOFOLLOW | O_CLOEXEC)) ==
	    -1)
		return cow_bound_fail(cp, errno, "open");
	if ((dfd = openat(ddir, name, O_WRONLY | O_CREAT | O_EXCL |
	    O_NOFOLLOW | O_CLOEXEC, 0600)) == -1) {
		rc = errno;
		close(sfd);
		return cow_bound_fail(cp, rc, "create");
	}
	rc = cow_bound_copy_data(sfd, dfd, st->st_size) == -1 ? errno : 0;
	if (rc == 0)
		cow_bound_copy_meta(dfd, st);
	close(sfd);
	close(dfd);
	return rc == 0 ? 0 : cow_bound_fail(cp, rc, "copy");
}

static int
cow_bound_copy_link(struct cow_bound_cp *cp, int sdir, int ddir,
    const char *name)
{
	char	t[PATH_MAX];
	ssize_t	n;

	if ((n = readlinkat(sdir, name, t, sizeof(t) - 1)) == -1)
		return cow_bound_fail(cp, errno, "readlink");
	t[n] = '\0';
	if (symlinkat(t, ddir, name) == -1)
		return cow_bound_fail(cp, errno, "symlink");
	return 0;
}

/* A whiteout, FIFO or socket: made again, no content. */
static int
cow_bound_copy_node(struct cow_bound_cp *cp, int ddir, const char *name,
    const struct stat *st)
{
	if (S_ISCHR(st->st_mode) && st->st_rdev != 0)
		return cow_bound_fail(cp, EPERM, "a device node (not a "
		    "whiteout)");
	if (mknodat(ddir, name, st->st_mode & (S_IFMT | 0777),
	    S_ISCHR(st->st_mode) ? 0 : st->st_rdev) == -1)
		return cow_bound_fail(cp, errno, "mknod");
	return 0;
}

static int
cow_bound_copy_subdir(struct cow_bound_cp *cp, int sdir, int ddir,
    const char *name, unsigned depth)
{
	int	sfd, dfd, rc;

	if (depth >= COW_MAX_DEPTH)
		return cow_bound_fail(cp, ELOOP, "nested too deep");
	if (mkdirat(ddir, name, 0700) == -1)
		return cow_bound_fail(cp, errno, "mkdir");
	if ((sfd = openat(sdir, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW |
	    O_CLOEXEC)) == -1)
		return cow_bound_fail(cp, errno, "open");
	if ((dfd = openat(ddir, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW |
	    O_CLOEXEC)) == -1) {
		rc = errno;
		close(sfd);
		return cow_bound_fail(cp, rc, "open");
	}
	cow_bound_copy_opaque(sfd, dfd);
	rc = cow_bound_copy_dir(cp, sfd, dfd, depth + 1);
	close(sfd);
	close(dfd);
	return rc;
}

/* One entry of a directory; cp->rel its path. */
static int
cow_bound_copy_entry(struct cow_bound_cp *cp, int sdir, int ddir,
    const char *name, unsigned depth)
{
	struct stat	st;

	if (++cp->entries > COW_MAX_ENTRIES)
		return cow_bound_fail(cp, EFBIG, "more entries than a layer "
		    "may hold, at");
	if (fstatat(sdir, name, &st, AT_SYMLINK_NOFOLLOW) == -1)
		return cow_bound_fail(cp, errno, "lstat");
	switch (st.st_mode & S_IFMT) {
	case S_IFDIR:
		return cow_bound_copy_subdir(cp, sdir, ddir, name, depth);
	case S_IFREG:
		return cow_bound_copy_file(cp, sdir, ddir, name, &st);
	case S_IFLNK:
		return cow_bound_copy_link(cp, sdir, ddir, name);
	default:
		return cow_bound_copy_node(cp, ddir, name, &st);
	}
}

/* The entries of sfd into dfd; the directory's own meta after them. */
static int
cow_bound_copy_dir(struct cow_bound_cp *cp, int sfd, int dfd, unsigned depth)
{
	struct dirent	*d;
	struct stat	 st;
	DIR		*dp;
	size_t		 len = strlen(cp->rel);
	int		 fd;

	if ((fd = dup(sfd)) == -1 || (dp = fdopendir(fd)) == NULL) {
		if (fd != -1)
			close(fd);
		return cow_bound_fail(cp, errno, "read the directory");
	}
	while ((d = readdir(dp)) != NULL) {
		if (strcmp(d->d_name, ".") == 0 || strcmp(d->d_name, "..") == 0)
			continue;
		snprintf(cp->rel + len, sizeof(cp->rel) - len, "%s%s",
		    len ? "/" : "", d->d_name);
		/* One entry's failure is said; the others are copied. */
		(void)cow_bound_copy_entry(cp, dirfd(dp), dfd, d->d_name,
		    depth);
		cp->rel[len] = '\0';
	}
	closedir(dp);
	if (fstat(sfd, &st) == 0)
		cow_bound_copy_meta(dfd, &st);
	return cp->failed ? -1 : 0;
}

/* The tree under src (a directory) into dst (an empty one). */
static int
cow_bound_copy(const char *src, const char *dst, char *err, size_t errsz)
{
	struct cow_bound_cp	 cp;
	size_t		 i;
	int		 sfd, dfd, rc;

	memset(&cp, 0, sizeof(cp));
	cp.err = err;
	cp.errsz = errsz;
	if ((sfd = open(src, O_RDONLY | O_DIRECTORY | O_NOFOLLOW |
	    O_CLOEXEC)) == -1 || (dfd = open(dst, O_RDONLY | O_DIRECTORY |
	    O_NOFOLLOW | O_CLOEXEC)) == -1) {
		snprintf(err, errsz, "open %s: %s", sfd == -1 ? src : dst,
		    strerror(errno));
		if (sfd != -1)
			close(sfd);
		return -1;
	}
	cp.dstroot = dfd;
	cow_bound_copy_opaque(sfd, dfd);
	rc = cow_bound_copy_dir(&cp, sfd, dfd, 0);
	if (rc == -1 && cp.failed > 1) {
		i = strlen(err);
		snprintf(err + i, errsz - i, " (and %d more)", cp.failed - 1);
	}
	for (i = 0; i < cp.nlinks; i++)
		free(cp.links[i].rel);
	free(cp.links);
	close(sfd);
	close(dfd);
	return rc;
}

static int
cow_bound_path(char *p, size_t psz, const struct cow *c, const char *rel,
    char *err, size_t errsz)
{
	if ((size_t)snprintf(p, psz, "%s/%s", c->dir, rel) < psz)
		return 0;
	snprintf(err, errsz, "%s/%s: %s", c->dir, rel, strerror(ENAMETOOLONG));
	errno = ENAMETOOLONG;
	return -1;
}

/* The tmpfs: bound bytes (whole pages), an inode per page of it. */
static int
cow_bound_mount(const struct cow *c, const char *mem, char *err,
    size_t errsz)
{
	unsigned long long	 size, inodes;
	char			 opts[128];

	size = (c->bound + COW_BOUND_PAGE - 1) / COW_BOUND_PAGE *
	    COW_BOUND_PAGE + COW_BOUND_SLACK;
	inodes = size / COW_BOUND_PAGE;
	if (inodes < COW_BOUND_MIN_INODES)
		inodes = COW_BOUND_MIN_INODES;
	snprintf(opts, sizeof(opts), "size=%llu,nr_inodes=%llu,mode=0700",
	    size, inodes);
	if (mkdirat(AT_FDCWD, mem, 0700) == -1 && errno != EEXIST) {
		snprintf(err, errsz, "mkdir %s: %s", mem, strerror(errno));
		return -1;
	}
	if (mount("warren-layer", mem, "tmpfs", MS_NOSUID | MS_NODEV, opts) ==
	    -1) {
		snprintf(err, errsz, "mount a tmpfs (%s) on %s for disk_max: "
		    "%s", opts, mem, strerror(errno));
		return -1;
	}
	return 0;
}

/* The overlay keeps its opaque markers in xattrs: can the tmpfs? */
static int
cow_bound_xattr(const char *upper, char *err, size_t errsz)
{
	const char	*name = geteuid() == 0 ? "trusted.warren.probe" :
			    "user.warren.probe";

	if (setxattr(upper, name, "y", 1, 0) == 0) {
		(void)removexattr(upper, name);
		return 0;
	}
	snprintf(err, errsz, "the disk limit's tmpfs cannot keep the "
	    "overlay's %s xattrs (%s; an ordinary user needs Linux 6.6): "
	    "set disk_max 0 (--disk-max 0) for a layer without the limit",
	    geteuid() == 0 ? "trusted.*" : "user.*", strerror(errno));
	return -1;
}

/* The cow directory's flock, waited for: another process's save. */
static int
cow_bound_lock(const struct cow *c, char *err, size_t errsz)
{
	int	fd, i;

	if (cow_bound_lockfd != -1)
		return 0;
	if ((fd = open(c->dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW |
	    O_CLOEXEC)) == -1) {
		snprintf(err, errsz, "open %s: %s", c->dir, strerror(errno));
		return -1;
	}
	for (i = 0; flock(fd, LOCK_EX | LOCK_NB) == -1; i++) {
		if ((errno != EWOULDBLOCK && errno != EINTR) ||
		    i >= COW_BOUND_LOCK_S * 10) {
			snprintf(err, errsz, "lock %s: %s%s", c->dir,
			    strerror(errno), errno == EWOULDBLOCK ? " (another "
			    "process holds the layer: a run still saving it? "
			    "try again)" : "");
			close(fd);
			return -1;
		}
		usleep(100 * 1000);
	}
	cow_bound_lockfd = fd;
	return 0;
}

int
cow_bound_enter(const struct cow *c, char *err, size_t errsz)
{
	char	mem[PATH_MAX], up[PATH_MAX], wk[PATH_MAX], disk[PATH_MAX];
	char	e[512];

	if (cow_bound_path(mem, sizeof(mem), c, COW_MEM, err, errsz) == -1 ||
	    cow_bound_path(up, sizeof(up), c, COW_MEM "/" COW_UPPER, err,
	    errsz) == -1 || cow_bound_path(wk, sizeof(wk), c, COW_MEM "/"
	    COW_WORK, err, errsz) == -1 || cow_bound_path(disk, sizeof(disk),
	    c, COW_UPPER_NEW, err, errsz) == -1)
		return -1;
	if (cow_bound_lock(c, err, errsz) == -1)
		return -1;
	/* A save cut short: upper is the last whole one. */
	if (access(disk, F_OK) == 0 && cow_rmtree(disk, err, errsz) == -1)
		return -1;
	if (cow_bound_path(disk, sizeof(disk), c, COW_UPPER, err, errsz) ==
	    -1 || cow_bound_mount(c, mem, err, errsz) == -1)
		return -1;
	if (mkdir(up, 0700) == -1 || mkdir(wk, 0700) == -1) {
		snprintf(err, errsz, "mkdir %s and %s: %s", up, wk,
		    strerror(errno));
		return -1;
	}
	if (cow_bound_xattr(up, err, errsz) == -1)
		return -1;
	if (cow_bound_copy(disk, up, e, sizeof(e)) == -1) {
		snprintf(err, errsz, "the layer %s into its tmpfs of %" PRIu64
		    " bytes (disk_max): %s%s", disk, c->bound, e,
		    strstr(e, strerror(ENOSPC)) != NULL ? " (the layer "
		    "already holds more than disk_max: raise it)" : "");
		return -1;
	}
	return 0;
}

int
cow_bound_save(const struct cow *c, char *err, size_t errsz)
{
	char	mem[PATH_MAX], nw[PATH_MAX], e[512];
	int	rc;

	if (cow_bound_path(mem, sizeof(mem), c, COW_MEM "/" COW_UPPER, err,
	    errsz) == -1 || cow_bound_path(nw, sizeof(nw), c, COW_UPPER_NEW,
	    err, errsz) == -1 || cow_bound_lock(c, err, errsz) == -1)
		return -1;
	if (mkdir(nw, 0700) == -1) {
		snprintf(err, errsz, "mkdir %s: %s", nw, strerror(errno));
		return -1;
	}
	/* What could be copied is kept: a file lost beats a layer lost. */
	rc = cow_bound_copy(mem, nw, e, sizeof(e));
	if (cow_bound_path(mem, sizeof(mem), c, COW_UPPER, err, errsz) == -1)
		return -1;
	if (renameat2(AT_FDCWD, nw, AT_FDCWD, mem, RENAME_EXCHANGE) == -1) {
		snprintf(err, errsz, "swap %s with %s: %s", nw, mem,
		    strerror(errno));
		return -1;
	}
	if (cow_rmtree(nw, err, errsz) == -1)
		return -1;
	if (rc == -1) {
		snprintf(err, errsz, "the layer's tmpfs into %s, partly: %s",
		    mem, e);
		return -1;
	}
	return 0;
}

int
cow_bound_open(const struct cow *c, char *err, size_t errsz)
{
	char	mem[PATH_MAX];
	int	fd;

	if (cow_bound_path(mem, sizeof(mem), c, COW_MEM, err, errsz) == -1)
		return -1;
	if ((fd = open(mem, O_RDONLY | O_DIRECTORY | O_NOFOLLOW |
	    O_CLOEXEC)) == -1)
		snprintf(err, errsz, "open %s: %s", mem, strerror(errno));
	return fd;
}

int
cow_bound_used(int fd, uint64_t *bytes)
{
	struct statfs	sf;

	if (fstatfs(fd, &sf) == -1)
		return -1;
	*bytes = (uint64_t)(sf.f_blocks - sf.f_bfree) * (uint64_t)sf.f_bsize;
	return 0;
}

/*
 * The copy mode's tree/ (cow_int.h): where overlayfs cannot be had, the
 * run gets a copy of the workspace bound over it. Regular files are
 * reflinked where the filesystem can (FICLONE: btrfs, XFS, bcachefs),
 * else copied in the kernel (copy_file_range), else read and written;
 * symbolic links are copied as links; modes and mtimes are kept (and
 * owners, as root); FIFOs, sockets and devices are left out. One walk
 * copies and writes the base manifest, so the two tell of the same tree.
 */
#include <sys/ioctl.h>
#include <sys/stat.h>

#include <linux/fs.h>

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "workspace/cow_int.h"

#define COW_COPY_CHUNK	(1 << 20)	/* bytes per copy_file_range */

struct cc_copy {
	int			 dst[COW_MAX_DEPTH + 1]; /* the copy's dir of
							    depth d's entries */
	struct cow_mwriter	*base;
	int			 root;		/* keep owners too */
};

static int
cc_fail(struct cow_walk *w, const char *what)
{
	char	esc[512];
	int	saved = errno;

	snprintf(w->err, w->errsz, "copy of the workspace: %s \"%s\": %s",
	    what, cow_esc(esc, sizeof(esc), w->path), strerror(saved));
	return -1;
}

/* Owner (as root), mode and times of fd from sb. */
static int
cc_attrs(struct cc_copy *cc, int fd, const struct stat *sb)
{
	struct timespec	ts[2];

	if (cc->root && fchown(fd, sb->st_uid, sb->st_gid) == -1)
		return -1;
	if (fchmod(fd, sb->st_mode & 07777) == -1)
		return -1;
	ts[0] = sb->st_atim;
	ts[1] = sb->st_mtim;
	return futimens(fd, ts);
}

/* The bytes of src into dst, when they cannot be shared. */
static int
cc_data(int src, int dst)
{
	char	*buf;
	ssize_t	 n, r;
	int	 fallback = 0;

	for (;;) {
		n = copy_file_range(src, NULL, dst, NULL, COW_COPY_CHUNK, 0);
		if (n == 0)
			return 0;
		if (n == -1 && (errno == EXDEV || errno == ENOSYS ||
		    errno == EINVAL || errno == EOPNOTSUPP)) {
			fallback = 1;
			break;
		}
		if (n == -1 && errno != EINTR)
			return -1;
	}
	if ((buf = malloc(COW_COPY_CHUNK)) == NULL)
		return -1;
	while (fallback && (n = read(src, buf, COW_COPY_CHUNK)) != 0) {
		if (n == -1 && errno == EINTR)
			continue;
		if (n == -1)
			break;
		for (r = 0; r < n; ) {
			ssize_t	w = write(dst, buf + r, (size_t)(n - r));

			if (w == -1 && errno == EINTR)
				continue;
			if (w == -1) {
				free(buf);
				return -1;
			}
			r += w;
		}
	}
	free(buf);
	return n == 0 ? 0 : -1;
}

static int
cc_file(struct cc_copy *cc, struct cow_walk *w, int dirfd, const char *name,
    const struct stat *sb)
{
	struct stat	now;
	int		src, dst, rv = -1;

	if ((src = openat(dirfd, name, O_RDONLY | O_NOFOLLOW | O_NOCTTY |
	    O_CLOEXEC)) == -1)
		return cc_fail(w, "cannot read");
	if (fstat(src, &now) == -1 || now.st_ino != sb->st_ino ||
	    !S_ISREG(now.st_mode)) {
		errno = EAGAIN;
		close(src);
		return cc_fail(w, "changed while copied:");
	}
	if ((dst = openat(cc->dst[w->depth], name, O_WRONLY | O_CREAT |
	    O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600)) == -1) {
		close(src);
		return cc_fail(w, "cannot create the copy of");
	}
	if (ioctl(dst, FICLONE, src) == -1 && cc_data(src, dst) == -1)
		cc_fail(w, "cannot copy");
	else if (cc_attrs(cc, dst, sb) == -1)
		cc_fail(w, "cannot set the mode, owner or times of");
	else
		rv = 0;
	close(src);
	close(dst);
	return rv;
}

static int
cc_link(struct cc_copy *cc, struct cow_walk *w, int dirfd, const char *name,
    const struct stat *sb)
{
	struct timespec	ts[2];
	char		target[PATH_MAX + 1];
	ssize_t		n;
	int		to = cc->dst[w->depth];

	if ((n = readlinkat(dirfd, name, target, sizeof(target))) == -1)
		return cc_fail(w, "cannot read the link");
	if ((size_t)n >= sizeof(target)) {
		errno = ENAMETOOLONG;
		return cc_fail(w, "the link's target is too long:");
	}
	target[n] = '\0';
	if (symlinkat(target, to, name) == -1)
		return cc_fail(w, "cannot create the copy of");
	ts[0] = sb->st_atim;
	ts[1] = sb->st_mtim;
	if ((cc->root && fchownat(to, name, sb->st_uid, sb->st_gid,
	    AT_SYMLINK_NOFOLLOW) == -1) ||
	    utimensat(to, name, ts, AT_SYMLINK_NOFOLLOW) == -1)
		return cc_fail(w, "cannot set the owner or times of");
	return 0;
}

/* A directory: made 0700 now, its mode and times set on leaving it. */
static int
cc_dir(struct cc_copy *cc, struct cow_walk *w, const char *name,
    const struct stat *sb)
{
	int	fd;

	if (mkdirat(cc->dst[w->depth], name, 0700) == -1 ||
	    (fd = openat(cc->dst[w->depth], name, O_RDONLY | O_DIRECTORY |
	    O_NOFOLLOW | O_CLOEXEC)) == -1)
		return cc_fail(w, "cannot create the copy of");
	if (sb->st_dev != w->dev) {	/* a mount point: not entered */
		if (cc_attrs(cc, fd, sb) == -1) {
			close(fd);
			return cc_fail(w, "cannot set the mode of");
		}
		close(fd);
		return 1;
	}
	cc->dst[w->depth + 1] = fd;
	return 0;
}

static int
cc_entry(struct cow_walk *w, int dirfd, const char *name,
    const struct stat *sb)
{
	struct cc_copy	*cc = w->arg;

	if (cow_manifest_add(cc->base, w->path, sb, w->err, w->errsz) == -1)
		return -1;
	switch (sb->st_mode & S_IFMT) {
	case S_IFDIR:
		return cc_dir(cc, w, name, sb);
	case S_IFREG:
		return cc_file(cc, w, dirfd, name, sb);
	case S_IFLNK:
		return cc_link(cc, w, dirfd, name, sb);
	default:
		return 0;	/* FIFOs, sockets, devices: not copied */
	}
}

static int
cc_leave(struct cow_walk *w, int fd, const struct stat *sb)
{
	struct cc_copy	*cc = w->arg;
	int		*to = &cc->dst[w->depth + 1];
	int		 rv = 0;

	(void)fd;
	if (cc_attrs(cc, *to, sb) == -1)
		rv = cc_fail(w, "cannot set the mode, owner or times of");
	close(*to);
	*to = -1;
	return rv;
}

int
cow_copy(int srcfd, int dstfd, struct cow_mwriter *base, char *err,
    size_t errsz)
{
	struct cc_copy	cc;
	struct cow_walk	w;
	size_t		i;
	int		rv;

	memset(&w, 0, sizeof(w));
	for (i = 0; i < COW_MAX_DEPTH + 1; i++)
		cc.dst[i] = -1;
	cc.dst[0] = dstfd;
	cc.base = base;
	cc.root = geteuid() == 0;
	w.entry = cc_entry;
	w.leave = cc_leave;
	w.arg = &cc;
	/* A directory we may not read is copied empty: the agents, who are
	 * us, could not read it either. */
	w.unreadable_ok = 1;
	rv = cow_walk(&w, srcfd, err, errsz);
	for (i = 1; i < COW_MAX_DEPTH + 1; i++)
		if (cc.dst[i] != -1)
			close(cc.dst[i]);
	return rv;
}

int
cow_same_bytes(int a, int b)
{
	char		ba[32768], bb[32768];
	struct stat	sa, sb;
	off_t		off = 0;
	ssize_t		na, nb;

	if (fstat(a, &sa) == -1 || fstat(b, &sb) == -1)
		return -1;
	if (sa.st_size != sb.st_size)
		return 0;
	for (;;) {
		if ((na = pread(a, ba, sizeof(ba), off)) == -1 ||
		    (nb = pread(b, bb, sizeof(bb), off)) == -1)
			return -1;
		if (na != nb || memcmp(ba, bb, (size_t)na) != 0)
			return 0;
		if (na == 0)
			return 1;
		off += na;
	}
}

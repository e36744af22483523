/*
 * cow_usage (cow.h): the disk a run's layer takes, measured while its
 * agents write it (the disk limit polls it).
 *
 * So it must not be the agents' to defeat: no depth of nesting stops it
 * (one directory is open at a time; the walk goes back up through "..",
 * checked against the inode it came from, and on from where it was with
 * seekdir), an entry that vanishes between readdir and lstat is skipped
 * (agents remove files as they go). It never follows a link nor leaves
 * the layer's filesystem, and it stops with an error past 2,000,000
 * entries.
 *
 * What it counts is what the layer could take: a file's allocated blocks
 * or its size, whichever is more, so a sparse file counts at the size
 * `apply` would write it at and space kept beyond its end
 * (FALLOC_FL_KEEP_SIZE) counts too. A directory it may not read (an
 * ordinary user's walk, an agent's chmod 0) fails it with EACCES, its
 * name in err: what it holds is unknown, and the disk limit counts
 * unknown as over (supervisor/run_disk.c). The one exception is the
 * overlay's own work/work, mode 0 by the kernel, which the agents cannot
 * name.
 */
#include <sys/stat.h>

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/xmalloc.h"
#include "workspace/cow_int.h"

#define COW_USAGE_MAX	(2 * COW_MAX_ENTRIES)

/* A directory on the way down: where its parent's read was, the parent. */
struct us_level {
	long	 off;
	ino_t	 pino;
};

struct us_walk {
	struct us_level	*v;
	size_t		 n, cap;
	dev_t		 dev;
	size_t		 entries;
	uint64_t	 bytes;
	ino_t		 work;		/* work/ at the top, overlay mode */
	char		 denied[NAME_MAX + 1];	/* the name refused */
	DIR		*d;
};

/* The overlay's work/work, which the kernel makes mode 0. */
static int
us_workdir(const struct us_walk *w, const char *name)
{
	struct stat	 sb;

	return w->n == 1 && w->work != 0 && strcmp(name, "work") == 0 &&
	    fstat(dirfd(w->d), &sb) == 0 && sb.st_ino == w->work;
}

/* Into the directory name of w->d: 1 entered, 0 not (gone, not ours),
 * -1 error (EACCES: not readable, its name in w->denied). */
static int
us_down(struct us_walk *w, const char *name)
{
	struct stat	 sb;
	DIR		*sub;
	long		 off;
	int		 fd;

	if ((fd = openat(dirfd(w->d), name, O_RDONLY | O_DIRECTORY |
	    O_NOFOLLOW | O_CLOEXEC)) == -1) {
		if (errno != EACCES)
			return errno == ENOENT || errno == ENOTDIR ||
			    errno == ELOOP ? 0 : -1;
		if (us_workdir(w, name))
			return 0;
		strlcpy(w->denied, name, sizeof(w->denied));
		errno = EACCES;
		return -1;
	}
	if (fstat(dirfd(w->d), &sb) == -1 || (off = telldir(w->d)) == -1 ||
	    (sub = fdopendir(fd)) == NULL) {
		close(fd);
		return -1;
	}
	if (w->n == w->cap) {
		w->cap = w->cap ? w->cap * 2 : 16;
		w->v = xreallocarray(w->v, w->cap, sizeof(*w->v));
	}
	w->v[w->n].off = off;
	w->v[w->n].pino = sb.st_ino;
	w->n++;
	closedir(w->d);
	w->d = sub;
	return 1;
}

/* Back to the parent, where its read was; -1 if it is not the same. */
static int
us_up(struct us_walk *w)
{
	struct us_level	*l = &w->v[w->n - 1];
	struct stat	 sb;
	DIR		*up;
	int		 fd;

	if ((fd = openat(dirfd(w->d), "..", O_RDONLY | O_DIRECTORY |
	    O_NOFOLLOW | O_CLOEXEC)) == -1)
		return -1;
	if (fstat(fd, &sb) == -1 || sb.st_ino != l->pino ||
	    sb.st_dev != w->dev || (up = fdopendir(fd)) == NULL) {
		close(fd);
		errno = ESTALE;
		return -1;
	}
	seekdir(up, l->off);
	closedir(w->d);
	w->d = up;
	w->n--;
	return 0;
}

/* What one entry could take: its blocks, or its size if more. */
static uint64_t
us_size(const struct stat *sb)
{
	uint64_t	 blocks = (uint64_t)sb->st_blocks * 512;

	if (S_ISREG(sb->st_mode) && sb->st_size > 0 &&
	    (uint64_t)sb->st_size > blocks)
		return (uint64_t)sb->st_size;
	return blocks;
}

/* One entry of w->d: what it could take, and into it if it is a
 * directory. */
static int
us_entry(struct us_walk *w, const char *name)
{
	struct stat	sb;

	if (++w->entries > COW_USAGE_MAX) {
		errno = EFBIG;
		return -1;
	}
	if (fstatat(dirfd(w->d), name, &sb, AT_SYMLINK_NOFOLLOW) == -1) {
		if (errno == EACCES)
			strlcpy(w->denied, name, sizeof(w->denied));
		return errno == ENOENT ? 0 : -1;
	}
	w->bytes += us_size(&sb);
	if (S_ISDIR(sb.st_mode) && sb.st_dev == w->dev)
		return us_down(w, name) == -1 ? -1 : 0;
	return 0;
}

static int
us_walk(struct us_walk *w)
{
	struct dirent	*de;

	for (;;) {
		errno = 0;
		if ((de = readdir(w->d)) == NULL) {
			if (errno != 0)
				return -1;
			if (w->n == 0)
				return 0;
			if (us_up(w) == -1)
				return -1;
			continue;
		}
		if (strcmp(de->d_name, ".") == 0 ||
		    strcmp(de->d_name, "..") == 0)
			continue;
		if (us_entry(w, de->d_name) == -1)
			return -1;
	}
}

/* The overlay's work/ at the top of the cow directory, 0 if none. */
static ino_t
us_workino(int fd)
{
	struct stat	 sb;

	if (fstatat(fd, "work", &sb, AT_SYMLINK_NOFOLLOW) == -1 ||
	    !S_ISDIR(sb.st_mode))
		return 0;
	return sb.st_ino;
}

static void
us_error(const struct us_walk *w, const struct cow *c, char *err,
    size_t errsz)
{
	if (errno == EFBIG)
		snprintf(err, errsz, "disk use of %s: more than %d entries, "
		    "not measured", c->dir, COW_USAGE_MAX);
	else if (errno == EACCES && w->denied[0] != '\0')
		snprintf(err, errsz, "disk use of %s: \"%s\" in it cannot be "
		    "read or reached (%s): a directory's mode keeps the walk "
		    "out, so what it holds is unknown", c->dir, w->denied,
		    strerror(errno));
	else
		snprintf(err, errsz, "disk use of %s: %s", c->dir,
		    strerror(errno));
}

/* The layer's disk use in *bytes; -1 with err filled and errno kept. */
int
cow_usage(const struct cow *c, uint64_t *bytes, char *err, size_t errsz)
{
	struct us_walk	w;
	struct stat	sb;
	int		fd, rv, serrno;

	memset(&w, 0, sizeof(w));
	*bytes = 0;
	if ((fd = open(c->dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW |
	    O_CLOEXEC)) == -1 || fstat(fd, &sb) == -1 ||
	    (w.d = fdopendir(fd)) == NULL) {
		serrno = errno;
		snprintf(err, errsz, "cow directory %s: %s", c->dir,
		    strerror(errno));
		if (fd != -1)
			close(fd);
		errno = serrno;
		return -1;
	}
	w.dev = sb.st_dev;
	w.bytes = (uint64_t)sb.st_blocks * 512;
	w.work = us_workino(fd);
	serrno = 0;
	if ((rv = us_walk(&w)) == -1) {
		serrno = errno;
		us_error(&w, c, err, errsz);
	} else
		*bytes = w.bytes;
	closedir(w.d);
	free(w.v);
	errno = serrno;
	return rv;
}

/*
 * Walking the workspace and the layer one component at a time (diff and
 * apply): every directory on the way is opened with O_NOFOLLOW and
 * O_DIRECTORY from the one above, so a symbolic link an agent (or anyone)
 * planted on a path is never followed.
 */
#ifndef WARREN_COW_WALK_H
#define WARREN_COW_WALK_H

#include <sys/stat.h>

#include <stddef.h>
#include <stdint.h>

#include "workspace/cow.h"

/* Files over this many bytes are not diffed or compared in memory. */
#define COW_FILE_MAX	(8 * 1024 * 1024)

/* cow_walk.c */
/*
 * The directory that holds path (relative, '/'-separated, no "." or
 * ".."), opened from rootfd; *name points at path's last part. -1 with
 * errno: ENOENT a directory on the way is missing, ELOOP or ENOTDIR one
 * is a link or not a directory.
 */
int	cow_walk_parent(int rootfd, const char *path, const char **name);
/* lstat() of path under rootfd: 0, or -1 with errno (as above, or the
 * entry's ENOENT). */
int	cow_walk_lstat(int rootfd, const char *path, struct stat *sb);
/* Open path under rootfd, never following a link on the way or at the
 * end (O_NOFOLLOW is added to flags). */
int	cow_walk_open(int rootfd, const char *path, int flags);
/* The target of the link at path under rootfd, NUL-terminated. */
int	cow_walk_readlink(int rootfd, const char *path, char *buf,
	    size_t bufsz);
/* The change's new content opened for reading (a regular file) or its
 * link target read (a symlink): src under c->dir is walked from there.
 * Returns the fd, or -2 with the target in buf (NUL-terminated) for a
 * link; -1 with errno. */
int	cow_walk_src(const struct cow *c, const struct cow_change *ch,
	    char *buf, size_t bufsz);
/* Read all of fd (at most max bytes; EFBIG if more). */
int	cow_walk_read(int fd, size_t max, char **data, size_t *len);
/* The change for path, or NULL (the changes are sorted by
 * hostexec_pathcmp). */
const struct cow_change *cow_walk_find(const struct cow_changes *,
	    const char *path);

/* A file split in lines: line i is data[off[i]] up to data[off[i + 1]],
 * its '\n' included (the last may have none). */
struct cow_lines {
	const char	*data;
	size_t		*off;		/* n + 1 offsets */
	uint32_t	*hash;
	size_t		 n;
};

/* One step of an edit script: keep, delete a's line, insert b's line. */
struct cow_op {
	char	 t;		/* '=', '-', '+' */
	size_t	 a, b;		/* line indices (a for '=' and '-', b for
				   '=' and '+') */
};

/* Beyond this many differences the middle is shown replaced whole. */
#define COW_LINES_DMAX	2000

/* cow_lines.c */
int	cow_lines_split(struct cow_lines *, const char *data, size_t len);
void	cow_lines_free(struct cow_lines *);
/* The edit script from a to b, deletions before insertions in a block
 * (Myers, bounded by COW_LINES_DMAX). -1 on ENOMEM. */
int	cow_lines_diff(const struct cow_lines *a, const struct cow_lines *b,
	    struct cow_op **ops, size_t *nops);

#endif

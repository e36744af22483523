/*
 * What the cow*.c files share (cow.h is the interface): the names in a
 * cow directory, the bounded walk that never follows a link, the base
 * manifest and its reader, and opening a path under a directory one
 * component at a time.
 */
#ifndef WARREN_COW_INT_H
#define WARREN_COW_INT_H

#include <sys/types.h>
#include <sys/stat.h>

#include <limits.h>
#include <stddef.h>
#include <stdio.h>

#include "workspace/cow.h"

#define COW_MAX_ENTRIES		1000000	/* entries of one walk, changes */
#define COW_MAX_DEPTH		256	/* directories below a walk's root */

/* In a cow directory. */
#define COW_SUBDIR		"cow"		/* under the state dir */
#define COW_BASE		"base"
#define COW_UPPER		"upper"
#define COW_WORK		"work"
#define COW_TREE		"tree"
#define COW_TREE_BASE		"tree.base"
#define COW_JOURNAL		"apply.journal"
#define COW_APPLY_PREFIX	".warren-apply."	/* apply's temp files */
#define COW_JOURNAL_MAX		(16 * 1024 * 1024)	/* bytes read */

/*
 * A walk of the tree under a directory fd: every entry once, never
 * through a symbolic link, never into another filesystem (a mount point
 * is seen, not entered), at most COW_MAX_ENTRIES entries and
 * COW_MAX_DEPTH directories deep (past either: an error).
 */
struct cow_walk {
	/* Each entry, its path in path (relative to the root), depth 0 at
	 * the root's entries: 0 goes on (into a directory), 1 does not go
	 * into it, -1 stops the walk (err filled). */
	int		 (*entry)(struct cow_walk *, int dirfd,
			    const char *name, const struct stat *);
	/* After a directory's entries, fd the directory (-1: it could not
	 * be read, see unreadable_ok); may be NULL. */
	int		 (*leave)(struct cow_walk *, int fd,
			    const struct stat *);
	void		*arg;
	size_t		 max;		/* entries; 0: COW_MAX_ENTRIES */
	int		 unreadable_ok;	/* a directory we may not read
					   (EACCES) is seen, not entered */
	/* Set by cow_walk. */
	dev_t		 dev;		/* the root's filesystem */
	size_t		 n;		/* entries seen */
	unsigned	 depth;
	char		 path[PATH_MAX];
	char		*err;
	size_t		 errsz;
};

/* One record of a manifest: a path relative to its root, and lstat. */
struct cow_base_ent {
	char		*path;
	struct cow_stat	 st;
};

/* A manifest read back: sorted by hostexec_pathcmp, no duplicates. */
struct cow_base {
	struct cow_base_ent	*v;
	size_t			 n;
};

/* A manifest being written (to NAME.tmp, renamed to NAME at the end). */
struct cow_mwriter {
	FILE		*f;
	size_t		 n;		/* records written */
	int		 dirfd;
	char		 name[64];
	char		 tmp[80];
};

/* cow_manifest.c */
/* path, escaped for a message (names are hostile), in buf: buf. */
const char	*cow_esc(char *buf, size_t bufsz, const char *path);
int		 cow_walk(struct cow_walk *, int rootfd, char *err,
		    size_t errsz);
void		 cow_stat_set(struct cow_stat *, const struct stat *);
int		 cow_manifest_begin(struct cow_mwriter *, int dirfd,
		    const char *name, char *err, size_t errsz);
int		 cow_manifest_add(struct cow_mwriter *, const char *path,
		    const struct stat *, char *err, size_t errsz);
int		 cow_manifest_end(struct cow_mwriter *, char *err,
		    size_t errsz);
void		 cow_manifest_abort(struct cow_mwriter *);
/* The manifest of everything under rootfd, as dirfd/name. */
int		 cow_manifest_write(int rootfd, int dirfd, const char *name,
		    char *err, size_t errsz);
int		 cow_manifest_read(int dirfd, const char *name,
		    struct cow_base *, char *err, size_t errsz);
void		 cow_base_free(struct cow_base *);
/* The index of path, or -1. */
ssize_t		 cow_base_find(const struct cow_base *, const char *path);
/* The index past the entries under v[i] (they follow it at once). */
size_t		 cow_base_end(const struct cow_base *, size_t i);
/*
 * Open rel (a path under rootfd without "." or ".." parts) one
 * component at a time, never through a symbolic link: the parent
 * directory's fd, *last pointing at the last component of rel. -1 with
 * errno (ELOOP: a link on the way).
 */
int		 cow_open_parent(int rootfd, const char *rel,
		    const char **last);
/* The same, opening rel itself with flags (O_NOFOLLOW added). */
int		 cow_open_under(int rootfd, const char *rel, int flags);

/* cow.c: c's dir and workspace (absolute, under PATH_MAX), else -1 with
 * err said and c zeroed. */
int		 cow_paths(struct cow *c, const char *dir,
		    const char *workspace, char *err, size_t errsz);

/* cow_base.c: is the workspace's entry still a change's base? */
/* By lstat (COW_BASE_STAT): NULL if sb is still b, else what changed. */
const char	*cow_base_stat_diff(const struct stat *sb,
		    const struct cow_stat *b);
/* By content (COW_BASE_SUM, COW_BASE_UNKNOWN): sb is the entry at
 * ch->path under rootfd now. NULL if it is the base, else why not. */
const char	*cow_base_sum_diff(int rootfd, const struct cow_change *ch,
		    const struct stat *sb);
/* The content sum of the entry at path under rootfd (sb its lstat, which
 * must still hold: ESTALE if a file was put in its place): a file's
 * bytes, a link's target; zeros for a directory. */
int		 cow_base_sum(int rootfd, const char *path,
		    const struct stat *sb, unsigned char sum[COW_SUM_LEN]);

/* cow_copy.c: the copy mode's tree/ and the base, in one walk */
int		 cow_copy(int srcfd, int dstfd, struct cow_mwriter *base,
		    char *err, size_t errsz);
/* Do two open regular files hold the same bytes? 1 yes, 0 no, -1. */
int		 cow_same_bytes(int, int);
/* cow_remove.c: rm -rf that never follows a link (cow_remove's). */
int		 cow_rmtree(const char *dir, char *err, size_t errsz);

/* cow_side.c: one side of a change as the diff reads it */
struct cow_side {
	int		 present;
	mode_t		 mode;
	char		*data;		/* content or link target */
	size_t		 len;
	int64_t		 size;
	int		 big;		/* over COW_FILE_MAX: not read */
	int		 errnum;	/* could not be read */
	nlink_t		 links;		/* a file's st_nlink */
};
/* The workspace's entry at path now (absent if it or a directory on its
 * way is gone or no longer a directory), and the layer's side. */
void		 cow_side_old(int rootfd, const char *path, struct cow_side *);
void		 cow_side_new(const struct cow *c, const struct cow_change *,
		    struct cow_side *);
void		 cow_side_free(struct cow_side *);
/* A regular file with a NUL byte anywhere (shown as binary): a text
 * file's NUL, and a sparse file's holes, which read as NULs. */
int		 cow_side_binary(const struct cow_side *);
/* Neither a file, a link nor a directory. */
int		 cow_side_special(mode_t);
/* Both present with the same mode and bytes. */
int		 cow_side_same(const struct cow_side *,
		    const struct cow_side *);
/* Why the diff cannot show the new side's content in full, or NULL:
 * the change is then unreviewed. */
const char	*cow_side_hidden(const struct cow_side *old,
		    const struct cow_side *new);

#endif

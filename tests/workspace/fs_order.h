/*
 * The file system calls a test makes the code under it record, in order
 * (fs_order.c): linked with -Wl,--wrap for each call, so that only a test
 * binary has them; the real call is made every time.
 */
#ifndef WARREN_FS_ORDER_H
#define WARREN_FS_ORDER_H

#include <stddef.h>

#define FS_ORDER_MAX	4096

/* What was called, one entry per call: "syncfs", "fsync DIR/NAME",
 * "create NAME", "mkdir NAME", "rename FROM TO", "unlink NAME"; NAME
 * as the call was given it (relative to its directory fd), fsync's the
 * file's path as /proc/self/fd says. */
struct fs_order {
	char	*v[FS_ORDER_MAX];
	size_t	 n;
	int	 on;
	/* When not NULL: a temporary apply makes (a name that starts with
	 * .warren-apply.) in this directory fails with ENOSPC, as on a full
	 * disk, while recording. */
	const char *fail_in;
	/* When not NULL: an unlinkat of this name (as it is given) finds
	 * it gone, removed just before, as by the user while apply runs. */
	const char *vanish;
};

extern struct fs_order fs_order;

/* Start recording (what was recorded before is dropped), stop. */
void	 fs_order_start(void);
void	 fs_order_stop(void);
/* The index of the first (last) entry that starts with prefix and
 * contains sub (NULL: anything); -1 if none. */
long	 fs_order_first(const char *prefix, const char *sub);
long	 fs_order_last(const char *prefix, const char *sub);
/* The index of the first entry that is exactly s; -1 if none. */
long	 fs_order_index(const char *s);
/* Every entry, one a line, for a failure's message. */
char	*fs_order_dump(void);

#endif

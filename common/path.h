/*
 * Paths as warren compares and makes them.
 */
#ifndef WARREN_PATH_H
#define WARREN_PATH_H

#include <sys/types.h>

/* path_mkdirs() flags. */
#define PATH_NOFOLLOW	0x01	/* refuse a symlink on the way (ELOOP) */

/* path.c */
/* 1 if path is dir or lies below it (both absolute and canonical). */
int	path_under(const char *path, const char *dir);
/*
 * mkdir -p with mode for what it creates. Every component must end up a
 * directory (ENOTDIR); with PATH_NOFOLLOW one that is a symlink is refused
 * with ELOOP instead of followed. -1 with errno.
 */
int	path_mkdirs(const char *dir, mode_t mode, int flags);

#endif

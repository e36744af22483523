/*
 * The one user namespace set-up both the sandbox (each worker's) and the
 * copy-on-write layer (the spawn server's) make: our own uid and gid mapped
 * to themselves, setgroups denied (which an unprivileged gid_map needs).
 * Safe in the child of a raw clone: no malloc, no locks.
 */
#ifndef WARREN_USERNS_H
#define WARREN_USERNS_H

#include <sys/types.h>

/* userns.c */
/* In a new user namespace: 0, or -1 with errno and *step naming the
 * /proc file whose write failed. */
int	userns_map_self(uid_t uid, gid_t gid, const char **step);

#endif

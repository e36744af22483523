/*
 * Files of a workspace with a hard link outside it (hardlinks.c): an
 * in-place run's write through one changes the file outside too.
 */
#ifndef WARREN_HARDLINKS_H
#define WARREN_HARDLINKS_H

#include <stddef.h>

#define HARDLINKS_NAMED	3	/* files named in the answer */

struct hardlinks {
	size_t	 nout;			/* files with a link outside */
	char	*named[HARDLINKS_NAMED];/* the first of them, relative */
	size_t	 nentries;		/* entries looked at */
};

/*
 * Walk the workspace ws (never through a symlink; its top .git and
 * .warren left out, which an in-place run mounts read-only) and find the
 * regular files with more links than the walk found names for: one of
 * their links is outside. A directory that cannot be read is passed by
 * when an agent running as this user could not reach in either (not
 * theirs, not searchable by them); else it is an error, said: the files
 * in it cannot be counted. 0 (h filled), -1 error (err says).
 */
int	 hardlinks_outside(const char *ws, struct hardlinks *h, char *err,
	    size_t errsz);
void	 hardlinks_free(struct hardlinks *h);

#endif

/* Helpers of the copy-on-write tests: a private directory, files in it. */
#ifndef WARREN_COW_TEST_H
#define WARREN_COW_TEST_H

#include <sys/types.h>

#include <limits.h>
#include <stddef.h>

struct cow_tdir {
	char	root[PATH_MAX];		/* mkdtemp'd */
	char	ws[PATH_MAX];		/* root/ws: the workspace */
	char	state[PATH_MAX];	/* root/state: the state dir */
};

void	cow_tdir_make(struct cow_tdir *);
void	cow_tdir_remove(struct cow_tdir *);
/* dir/rel made or written (fatal on error): a file of len bytes, a
 * directory, a symbolic link to target. */
void	tput(const char *dir, const char *rel, const char *data, size_t len,
	    mode_t mode);
void	tmkdir(const char *dir, const char *rel, mode_t mode);
void	tlink(const char *dir, const char *rel, const char *target);
/* 1 if dir/rel exists (lstat). */
int	texists(const char *dir, const char *rel);
/* Entries in dir, but "." and "..". */
size_t	tcount(const char *dir);

#endif

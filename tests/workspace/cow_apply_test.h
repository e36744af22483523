/* The harness of the apply tests: see cow_apply_test.c. */
#ifndef WARREN_COW_APPLY_TEST_H
#define WARREN_COW_APPLY_TEST_H

#include <limits.h>
#include <stddef.h>

#include "workspace/cow.h"

struct t {
	char		 root[64];
	char		 ws[80];		/* W */
	char		 view[PATH_MAX + 16];	/* V: cow dir's upper/ */
	struct cow	 c;
	struct cow_changes ch;
};

/* A shell command that must succeed (fatal otherwise). */
void	 sh(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* Everything of a tree as text: type, mode, name, link target, and each
 * file's hash. */
char	*tree(const char *dir);
void	 t_open(struct t *);
/* V starts as a copy of W. */
void	 t_fork(struct t *);
void	 t_close(struct t *);
/* The changes from W to V, W's entries as the base. */
void	 t_changes(struct t *);
/* cow_diff's output as a string. */
char	*t_diff(struct t *, unsigned flags, size_t *lenp);
/* cow_apply's return, its report in *report. */
int	 t_apply(struct t *, unsigned flags, char **report);
/* The same for another layer's changes. */
int	 t_apply_set(const struct cow *c, const struct cow_changes *ch,
	    unsigned flags, char **report);
void	 t_no_journal(const struct t *);
/* An apply that returned rc with report rep changed nothing: rc is 1,
 * rep holds the line want and says the workspace is unchanged, W is as
 * before (tree) says, no journal is left. Frees rep and before. */
void	 t_unchanged(const struct t *, int rc, char *rep, const char *want,
	    char *before);
/* W with one of each kind of entry; V with one of each kind of change. */
void	 t_layout_all(struct t *);

#endif

/*
 * What workspace/cow_apply.c (the writes) and cow_apply_check.c (the
 * check before them) share: one apply's state and what it does with each
 * change.
 */
#ifndef WARREN_COW_APPLY_INT_H
#define WARREN_COW_APPLY_INT_H

#include <sys/types.h>
#include <sys/stat.h>

#include <stddef.h>
#include <stdio.h>

#include "workspace/cow.h"

/* What apply does with one change, decided by the check. */
enum cow_act {
	ACT_NONE = 0,		/* nothing (equal already, or skipped) */
	ACT_DONE,		/* the workspace has it already */
	ACT_SKIP,		/* runs code on the host: not without the flag */
	ACT_WRITE,		/* a file or link: temporary, then rename */
	ACT_WRITE_LATE,		/* the same over a directory: after it goes */
	ACT_MKDIR,		/* a new directory */
	ACT_MKDIR_REPLACE,	/* a directory where a file or link was */
	ACT_CHMOD,		/* a directory's mode */
	ACT_DELETE,		/* a file, link or (empty by then) directory */
};

struct cow_apply {
	const struct cow	 *c;
	const struct cow_changes *ch;
	unsigned		  flags;
	mode_t			  umask;	/* the user's, at the start */
	FILE			 *out;
	int			  rootfd;
	enum cow_act		 *act;
	struct stat		 *cur;		/* the workspace's entry now */
	char			**tmp;		/* temporaries' names */
	size_t			  nconflicts, nrefused;
	char			 *err;
	size_t			  errsz;
};

/* cow_apply.c */
/* "what path: why" on a line of out, the path escaped. */
void	 cow_apply_say(const struct cow_apply *, const char *what,
	    const char *path, const char *why);
/* The permissions apply gives a change's file or directory. */
mode_t	 cow_apply_perms(const struct cow_apply *, const struct cow_change *);

/* cow_apply_check.c */
/* Every change checked, its act set; the paths left out named. 0 go on,
 * 1 refused (each conflict and refusal printed, nothing touched), -1
 * error (a->err). */
int	 cow_apply_check(struct cow_apply *);

/* cow_apply_fold.c */
/* Two changes apply writes whose names the workspace takes for one (it
 * folds case): each pair a conflict, said and counted. 0, or -1 for no
 * memory. */
int	 cow_apply_folds(struct cow_apply *);

#endif

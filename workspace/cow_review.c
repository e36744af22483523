/*
 * Which changes apply leaves out: those that run code on the host
 * (hostexec) and those the diff cannot show (cow_side_hidden, the rule
 * `warren diff` prints by), each unless asked for.
 */
#include <sys/stat.h>

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "workspace/cow.h"
#include "workspace/cow_int.h"

int
cow_review(const struct cow *c, struct cow_changes *ch, char *err,
    size_t errsz)
{
	struct cow_side	 old, new;
	size_t		 i;
	int		 rootfd;

	if ((rootfd = open(c->workspace, O_RDONLY | O_DIRECTORY |
	    O_CLOEXEC)) == -1) {
		snprintf(err, errsz, "the workspace %s: %s", c->workspace,
		    strerror(errno));
		return -1;
	}
	for (i = 0; i < ch->n; i++) {
		ch->v[i].unreviewed = NULL;
		if (ch->v[i].kind == COW_DELETED || ch->v[i].kind ==
		    COW_UNSUPPORTED || (!S_ISREG(ch->v[i].new_mode) &&
		    !S_ISLNK(ch->v[i].new_mode)))
			continue;
		cow_side_old(rootfd, ch->v[i].path, &old);
		cow_side_new(c, &ch->v[i], &new);
		ch->v[i].unreviewed = cow_side_hidden(&old, &new);
		cow_side_free(&old);
		cow_side_free(&new);
	}
	close(rootfd);
	return 0;
}

const char *
cow_review_held(const struct cow_change *ch, unsigned flags)
{
	if (ch->sensitive != NULL && !(flags & COW_APPLY_SENSITIVE))
		return ch->sensitive;
	if (ch->unreviewed != NULL && !(flags & COW_APPLY_UNREVIEWED))
		return ch->unreviewed;
	return NULL;
}

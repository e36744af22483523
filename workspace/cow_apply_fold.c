/*
 * Two changes, one name, on a workspace that folds names (review31): a
 * layer is written on the state directory, which tells lib/util.js from
 * lib/UTIL.JS, and the diff shows them as two new files; on a vfat,
 * exFAT, NTFS, SMB or casefold workspace they are one file, and apply
 * wrote both, the second over the first ("created" each), so the file
 * held what the review showed under the other name. Such a pair is a
 * conflict, before anything is written, where the workspace folds (or
 * where that cannot be told); on a case-sensitive workspace the two are
 * two files, as the diff showed them.
 */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "workspace/cow_apply_int.h"
#include "workspace/hostexec.h"

struct cow_fold {
	char	*folded;
	size_t	 i;
};

static int
cow_fold_cmp(const void *x, const void *y)
{
	const struct cow_fold	*a = x, *b = y;
	int			 c = strcmp(a->folded, b->folded);

	return c != 0 ? c : a->i < b->i ? -1 : a->i > b->i;
}

/* Does apply write something at change i (not a deletion or a mode)? */
static int
cow_fold_writes(enum cow_act act)
{
	return act == ACT_WRITE || act == ACT_WRITE_LATE ||
	    act == ACT_MKDIR || act == ACT_MKDIR_REPLACE;
}

/* The pairs v[0..n) (sorted) holds, each a conflict said. */
static void
cow_fold_say(struct cow_apply *a, const struct cow_fold *v, size_t n,
    const char *why)
{
	char	msg[PATH_MAX + 512];
	size_t	k;

	for (k = 1; k < n; k++) {
		if (strcmp(v[k - 1].folded, v[k].folded) != 0)
			continue;
		snprintf(msg, sizeof(msg), "the workspace's filesystem takes "
		    "it for %s, which the run wrote too, so apply would write "
		    "one over the other (%s)", a->ch->v[v[k - 1].i].path, why);
		cow_apply_say(a, "conflict:", a->ch->v[v[k].i].path, msg);
		a->nconflicts++;
	}
}

int
cow_apply_folds(struct cow_apply *a)
{
	struct cow_fold	*v;
	char		 why[PATH_MAX + 256];
	size_t		 i, n = 0, k, len, pairs = 0;
	int		 rc = 0;

	if ((v = calloc(a->ch->n + 1, sizeof(*v))) == NULL)
		return -1;
	for (i = 0; i < a->ch->n && rc == 0; i++) {
		if (!cow_fold_writes(a->act[i]))
			continue;
		len = strlen(a->ch->v[i].path) * 3 + 1;
		if ((v[n].folded = malloc(len)) == NULL)
			rc = -1;
		else if (hostexec_fold(a->ch->v[i].path, v[n].folded, len) ==
		    (size_t)-1)
			memcpy(v[n].folded, a->ch->v[i].path, len / 3 + 1);
		v[n++].i = i;
	}
	if (rc == 0) {
		qsort(v, n, sizeof(*v), cow_fold_cmp);
		for (k = 1; k < n; k++)
			pairs += strcmp(v[k - 1].folded, v[k].folded) == 0;
		if (pairs > 0 && hostexec_fs_folds(a->c->workspace, why,
		    sizeof(why)) != 0)
			cow_fold_say(a, v, n, why[0] != '\0' ? why :
			    "it cannot be told whether it folds names");
	}
	for (k = 0; k < n; k++)
		free(v[k].folded);
	free(v);
	return rc;
}

/*
 * warren diff | apply | discard RUN: a copy-on-write run's layer
 * (workspace/cow.h) reviewed, written into the workspace, or thrown away.
 * cmd_store.c parses the command line, opens the store and finds the run;
 * this file checks the run has a layer to act on and acts.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cmd.h"
#include "cli/layer.h"
#include "common/exitcode.h"
#include "common/str.h"
#include "store/store.h"
#include "workspace/cow.h"

static void
cmd_cow_error(const char *name, const char *msg)
{
	char	*e;

	e = str_escape_dup(msg, strlen(msg), 0);
	fprintf(stderr, "warren %s: %s\n", name, e != NULL ? e : msg);
	free(e);
}

/* A run whose layer is there to act on: 0, else an exit code (said on
 * stderr). live: a run still running is refused. */
int
cmd_cow_check(const char *name, const struct store_run *r, int live)
{
	long long	id = (long long)r->id;

	if (r->cow_mode == NULL || r->cow_dir == NULL) {
		fprintf(stderr, "warren %s: run %lld wrote the workspace in "
		    "place: it has no copy-on-write layer to %s\n", name, id,
		    name);
		return WARREN_EXIT_USAGE;
	}
	if (!layer_pending(r)) {
		fprintf(stderr, "warren %s: run %lld's layer is %s: there is "
		    "nothing left to %s\n", name, id, strcmp(r->cow_state,
		    "empty") == 0 ? "gone (the run wrote nothing)" :
		    strcmp(r->cow_state, "applied") == 0 ? "applied" :
		    "discarded", name);
		return WARREN_EXIT_USAGE;
	}
	if (live && r->alive) {
		fprintf(stderr, "warren %s: run %lld is running (supervisor "
		    "pid %lld): stop it first, or wait for its end\n", name,
		    id, (long long)r->pid);
		return WARREN_EXIT_USAGE;
	}
	return 0;
}

/* The run's layer and its changes. */
static int
cmd_cow_load(const char *name, const struct store_run *r, struct cow *c,
    struct cow_changes *ch)
{
	char		err[1024];

	memset(ch, 0, sizeof(*ch));
	if (layer_open(r, c, err, sizeof(err)) == -1) {
		cmd_cow_error(name, err);
		return WARREN_EXIT_INTERNAL;
	}
	if (cow_changes(c, ch, err, sizeof(err)) == -1) {
		cmd_cow_error(name, err);
		return WARREN_EXIT_INTERNAL;
	}
	return 0;
}

static int
cmd_include_add(const char *name, struct cmd_include *inc, const char *path)
{
	if (inc->n == CMD_INCLUDE_MAX) {
		fprintf(stderr, "warren %s: --include: at most %d paths; "
		    "--include-unreviewed or --include-sensitive take them "
		    "all\n", name, CMD_INCLUDE_MAX);
		return -1;
	}
	inc->v[inc->n++] = path;
	return 0;
}

int
cmd_change_opt(const char *name, int ch, const char *arg,
    struct cmd_change_opts *o)
{
	switch (ch) {
	case CMD_CHANGE_OPT_DB:
		o->db = arg;
		return 0;
	case CMD_CHANGE_OPT_WORKSPACE:
		o->workspace = arg;
		return 0;
	case CMD_CHANGE_OPT_STAT:
		o->diff |= COW_DIFF_STAT;
		return 0;
	case CMD_CHANGE_OPT_RAW:
		o->diff |= COW_DIFF_RAW;
		return 0;
	case CMD_CHANGE_OPT_SENSITIVE:
		o->apply |= COW_APPLY_SENSITIVE;
		return 0;
	case CMD_CHANGE_OPT_UNREVIEWED:
		o->apply |= COW_APPLY_UNREVIEWED;
		return 0;
	case CMD_CHANGE_OPT_INCLUDE:
		return cmd_include_add(name, &o->include, arg);
	default:
		return 1;
	}
}

int
cmd_cow_include(const char *name, struct cow_changes *ch, unsigned flags,
    const struct cmd_include *inc)
{
	size_t	i, k;
	char	*e;

	for (k = 0; inc != NULL && k < inc->n; k++) {
		for (i = 0; i < ch->n; i++)
			if (strcmp(ch->v[i].path, inc->v[k]) == 0)
				break;
		if (i == ch->n || cow_review_held(&ch->v[i], flags) == NULL) {
			e = str_escape_dup(inc->v[k], strlen(inc->v[k]), 0);
			fprintf(stderr, "warren %s: --include %s: not a path "
			    "this apply leaves out (give it as `left out:` "
			    "names it, relative to the workspace)\n", name,
			    e != NULL ? e : "?");
			free(e);
			return -1;
		}
		ch->v[i].sensitive = NULL;
		ch->v[i].unreviewed = NULL;
	}
	return 0;
}

/* The layer and its changes, each marked if the diff cannot show it
 * (cow_review): what apply holds back. */
static int
cmd_cow_load_reviewed(const struct store_run *r, struct cow *c,
    struct cow_changes *ch)
{
	char	err[1024];
	int	ex;

	if ((ex = cmd_cow_load("apply", r, c, ch)) != 0)
		return ex;
	if (cow_review(c, ch, err, sizeof(err)) == -1) {
		cmd_cow_error("apply", err);
		cow_changes_free(ch);
		return WARREN_EXIT_INTERNAL;
	}
	return 0;
}

int
cmd_cow_diff(const struct store_run *r, unsigned flags)
{
	struct cow_changes	 ch;
	struct cow		 c;
	char			 err[1024];
	int			 ex;

	if ((ex = cmd_cow_load("diff", r, &c, &ch)) != 0)
		return ex;
	if (ch.n == 0)
		printf("run %lld changed nothing in the workspace\n",
		    (long long)r->id);
	else if (cow_diff(&c, &ch, stdout, flags, err, sizeof(err)) == -1) {
		cmd_cow_error("diff", err);
		ex = WARREN_EXIT_INTERNAL;
	}
	cow_changes_free(&ch);
	return ex;
}

size_t
cmd_cow_left_out(const struct cow_changes *ch, unsigned flags)
{
	size_t	i, n = 0;

	for (i = 0; i < ch->n; i++)
		n += cow_review_held(&ch->v[i], flags) != NULL;
	return n;
}

/* Applied: the layer goes, unless paths were left out of it. */
static int
cmd_cow_applied(struct store *st, const struct store_run *r,
    const struct cow *c, size_t left)
{
	char	err[1024];

	if (left > 0) {
		printf("the layer of run %lld is kept for the %zu path%s left "
		    "out: `warren apply --include-sensitive "
		    "--include-unreviewed %lld` applies them, `warren discard "
		    "%lld` drops them\n", (long long)r->id, left, left == 1 ?
		    "" : "s", (long long)r->id, (long long)r->id);
		return WARREN_EXIT_OK;
	}
	if (store_run_cow_state(st, r->id, "applied") == -1) {
		cmd_cow_error("apply", store_errmsg(st));
		return WARREN_EXIT_STORE;
	}
	if (cow_remove(c, err, sizeof(err)) == -1) {
		cmd_cow_error("apply", err);
		return WARREN_EXIT_INTERNAL;
	}
	return WARREN_EXIT_OK;
}

int
cmd_cow_apply(struct store *st, const struct store_run *r, unsigned flags,
    const struct cmd_include *inc)
{
	struct cow_changes	 ch;
	struct cow		 c;
	char			 err[1024];
	int			 ex, rc;

	if ((ex = cmd_cow_load_reviewed(r, &c, &ch)) != 0)
		return ex;
	if (cmd_cow_include("apply", &ch, flags, inc) == -1) {
		cow_changes_free(&ch);
		return WARREN_EXIT_USAGE;
	}
	rc = cow_apply(&c, &ch, flags, stdout, err, sizeof(err));
	if (rc == -1) {
		cmd_cow_error("apply", err);
		fprintf(stderr, "warren apply: run it again once that is fixed:"
		    " what was applied is kept, the rest follows\n");
		ex = WARREN_EXIT_INTERNAL;
	} else if (rc == 1)
		ex = WARREN_EXIT_FAIL;
	else
		ex = cmd_cow_applied(st, r, &c, cmd_cow_left_out(&ch, flags));
	cow_changes_free(&ch);
	return ex;
}

int
cmd_cow_discard(struct store *st, const struct store_run *r)
{
	struct cow	c;
	char		err[1024];

	if (layer_open(r, &c, err, sizeof(err)) == -1) {
		cmd_cow_error("discard", err);
		return WARREN_EXIT_INTERNAL;
	}
	if (cow_apply_clean(&c, err, sizeof(err)) == -1 ||
	    cow_remove(&c, err, sizeof(err)) == -1) {
		cmd_cow_error("discard", err);
		return WARREN_EXIT_INTERNAL;
	}
	if (store_run_cow_state(st, r->id, "discarded") == -1) {
		cmd_cow_error("discard", store_errmsg(st));
		return WARREN_EXIT_STORE;
	}
	printf("discarded the changes of run %lld\n", (long long)r->id);
	return WARREN_EXIT_OK;
}

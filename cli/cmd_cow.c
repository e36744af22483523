/*
 * warren diff | apply | discard RUN: a copy-on-write run's layer
 * (workspace/cow.h) reviewed, written into the workspace, or thrown away.
 * cmd_store.c parses the command line, opens the store and finds the run;
 * this file checks the run has a layer to act on and acts.
 */
#include <sys/file.h>

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli/cmd.h"
#include "cli/layer.h"
#include "common/exitcode.h"
#include "common/str.h"
#include "store/store.h"
#include "workspace/cow.h"

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
	if (layer_continued(r)) {
		fprintf(stderr, "warren %s: run %lld's layer went on to a "
		    "follow-up run (--continue), which holds it with what both "
		    "wrote: %s that run (`warren runs` names it)\n", name, id,
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

int
cmd_cow_holder(struct store *st, const char *name, const struct store_run *r)
{
	int64_t	holder;

	if (!layer_continued(r) || store_run_layer_holder(st, r->id,
	    &holder) == -1 || holder <= 0)
		return cmd_cow_check(name, r, 0);
	fprintf(stderr, "warren %s: run %lld's layer went on to run %lld, a "
	    "follow-up (--continue), which holds it now with what both "
	    "wrote: warren %s %lld\n", name, (long long)r->id,
	    (long long)holder, name, (long long)holder);
	return WARREN_EXIT_USAGE;
}

/* The run's layer and its changes. */
static int
cmd_cow_load(const char *name, const struct store_run *r, struct cow *c,
    struct cow_changes *ch)
{
	char		err[1024];

	memset(ch, 0, sizeof(*ch));
	if (layer_open(r, c, err, sizeof(err)) == -1) {
		cmd_error(name, "%s", err);
		return WARREN_EXIT_INTERNAL;
	}
	if (cow_changes(c, ch, err, sizeof(err)) == -1) {
		cmd_error(name, "%s", err);
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
	case CMD_CHANGE_OPT_IGNORED:
		o->apply |= CMD_APPLY_IGNORED;
		return 0;
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
		cmd_error("apply", "%s", err);
		cow_changes_free(ch);
		return WARREN_EXIT_INTERNAL;
	}
	return 0;
}

/*
 * What diff or apply acts on: the changes the named paths select
 * (LAYER_SEL, LAYER_NAMED), and which of them the workspace's .gitignore
 * ignores (ign); the note says why .gitignore could not be used.
 */
struct cmd_cow_pick {
	unsigned char	*sel;
	unsigned char	*ign;
	char		 note[512];
};

static void
cmd_cow_pick_free(struct cmd_cow_pick *pk)
{
	free(pk->sel);
	free(pk->ign);
}

/* 0, or an exit code (said). */
static int
cmd_cow_pick(const char *name, const struct cow *c,
    const struct cow_changes *ch, char *const *paths, size_t npaths,
    struct cmd_cow_pick *pk)
{
	char	err[1024];

	memset(pk, 0, sizeof(*pk));
	if ((pk->sel = calloc(ch->n + 1, 1)) == NULL ||
	    (pk->ign = calloc(ch->n + 1, 1)) == NULL) {
		cmd_error(name, "%s", "out of memory");
		return WARREN_EXIT_INTERNAL;
	}
	if (layer_paths_select(c->workspace, ch, paths, npaths, pk->sel, err,
	    sizeof(err)) == -1) {
		cmd_error(name, "%s", err);
		return WARREN_EXIT_USAGE;
	}
	if (layer_ignore(c->workspace, ch, pk->ign, pk->note,
	    sizeof(pk->note)) == -1) {
		snprintf(err, sizeof(err), "git check-ignore: %s",
		    strerror(errno));
		cmd_error(name, "%s", err);
		return WARREN_EXIT_INTERNAL;
	}
	if (pk->note[0] != '\0')
		cmd_error(name, "%s", pk->note);
	return 0;
}

/* Selected and set apart: ignored, and not named exactly. */
static int
cmd_cow_apart(const struct cmd_cow_pick *pk, size_t i)
{
	return (pk->sel[i] & LAYER_SEL) && pk->ign[i] &&
	    !(pk->sel[i] & LAYER_NAMED);
}

/* The changes .gitignore ignores, after the diff: named (--stat: their
 * stat), never their content. --raw keeps stdout for patch: stderr. */
static int
cmd_cow_diff_apart(const struct cow *c, const struct cow_changes *apart,
    unsigned flags)
{
	FILE	*o = (flags & COW_DIFF_RAW) ? stderr : stdout;
	char	 err[1024], *e;
	size_t	 i;

	fprintf(o, "# %zu path%s the workspace's .gitignore ignores, not "
	    "applied without --include-ignored:\n", apart->n, apart->n == 1 ?
	    "" : "s");
	if ((flags & COW_DIFF_STAT) && !(flags & COW_DIFF_RAW)) {
		if (cow_diff(c, apart, stdout, flags, err, sizeof(err)) == -1) {
			cmd_error("diff", "%s", err);
			return WARREN_EXIT_INTERNAL;
		}
		return 0;
	}
	for (i = 0; i < apart->n; i++) {
		e = str_escape_dup(apart->v[i].path, strlen(apart->v[i].path),
		    0);
		fprintf(o, "#   %s\n", e != NULL ? e : "?");
		free(e);
	}
	return 0;
}

int
cmd_cow_diff(const struct store_run *r, unsigned flags)
{
	return cmd_cow_diff_paths(r, flags, NULL, 0);
}

int
cmd_cow_diff_paths(const struct store_run *r, unsigned flags,
    char *const *paths, size_t npaths)
{
	struct cow_changes	 ch, shown = { 0 }, apart = { 0 };
	struct cmd_cow_pick	 pk;
	struct cow		 c;
	char			 err[1024];
	unsigned char		*keep = NULL;
	size_t			 i;
	int			 ex;

	if ((ex = cmd_cow_load("diff", r, &c, &ch)) != 0)
		return ex;
	if (ch.n == 0) {
		printf("run %lld changed nothing in the workspace\n",
		    (long long)r->id);
		goto out;
	}
	if ((ex = cmd_cow_pick("diff", &c, &ch, paths, npaths, &pk)) != 0)
		goto out_pk;
	if ((keep = calloc(ch.n, 1)) == NULL)
		goto nomem;
	for (i = 0; i < ch.n; i++)
		keep[i] = (pk.sel[i] & LAYER_SEL) && !cmd_cow_apart(&pk, i);
	if (layer_paths_subset(&ch, keep, &shown) == -1)
		goto nomem;
	for (i = 0; i < ch.n; i++)
		keep[i] = cmd_cow_apart(&pk, i);
	if (layer_paths_subset(&ch, keep, &apart) == -1)
		goto nomem;
	if (shown.n > 0 && cow_diff(&c, &shown, stdout, flags, err,
	    sizeof(err)) == -1) {
		cmd_error("diff", "%s", err);
		ex = WARREN_EXIT_INTERNAL;
	} else if (apart.n > 0)
		ex = cmd_cow_diff_apart(&c, &apart, flags);
	goto out_pk;
 nomem:
	cmd_error("diff", "%s", "out of memory");
	ex = WARREN_EXIT_INTERNAL;
 out_pk:
	free(shown.v);
	free(apart.v);
	free(keep);
	cmd_cow_pick_free(&pk);
 out:
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

/* Applied: the layer goes, unless paths were left out of it (held: by
 * the review rules; rest: not named, or ignored by .gitignore). */
static int
cmd_cow_applied(struct store *st, const struct store_run *r,
    const struct cow *c, size_t held, size_t rest)
{
	long long	id = (long long)r->id;
	char		err[1024];
	size_t		left = held + rest;

	if (left > 0 && rest == 0) {
		printf("the layer of run %lld is kept for the %zu path%s left "
		    "out: `warren apply --include-sensitive "
		    "--include-unreviewed %lld` applies them, `warren discard "
		    "%lld` drops them\n", id, left, left == 1 ? "" : "s", id,
		    id);
		return WARREN_EXIT_OK;
	}
	if (left > 0) {
		printf("the layer of run %lld is kept for the %zu path%s not "
		    "applied (not named, or left out): `warren diff %lld` "
		    "shows them, `warren apply %lld` applies them (those held "
		    "back with --include-ignored, --include-sensitive, "
		    "--include-unreviewed), `warren discard %lld` drops them\n",
		    id, left, left == 1 ? "" : "s", id, id, id);
		return WARREN_EXIT_OK;
	}
	if (store_run_cow_state(st, r->id, "applied") == -1) {
		cmd_error("apply", "%s", store_errmsg(st));
		return WARREN_EXIT_STORE;
	}
	if (cow_remove(c, err, sizeof(err)) == -1) {
		cmd_error("apply", "%s", err);
		return WARREN_EXIT_INTERNAL;
	}
	return WARREN_EXIT_OK;
}

/* The paths left out as .gitignore ignores them, named, and a count. */
static void
cmd_cow_apply_apart(const struct cow_changes *ch,
    const struct cmd_cow_pick *pk, const unsigned char *keep)
{
	size_t	i, n = 0;
	char	*e;

	for (i = 0; i < ch->n; i++) {
		if (!(pk->sel[i] & LAYER_SEL) || keep[i])
			continue;
		e = str_escape_dup(ch->v[i].path, strlen(ch->v[i].path), 0);
		printf("left out: %s (the workspace's .gitignore ignores it)\n",
		    e != NULL ? e : "?");
		free(e);
		n++;
	}
	if (n > 0)
		printf("%zu path%s the workspace's .gitignore ignores left "
		    "out: apply %s with --include-ignored\n", n, n == 1 ? "" :
		    "s", n == 1 ? "it" : "them");
}

/*
 * One apply or discard of a layer at a time: an flock on its directory
 * (two at once, as two MCP calls make them, would each remove the layer
 * and its journal under the other). The fd to close when done; -2 when
 * the directory is not there (loading the layer says so); -1 refused,
 * said.
 */
static int
cmd_cow_lock(const char *name, const struct store_run *r)
{
	char	msg[PATH_MAX + 256];
	int	fd;

	if (r->cow_dir == NULL || (fd = open(r->cow_dir, O_RDONLY |
	    O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)) == -1)
		return -2;
	if (flock(fd, LOCK_EX | LOCK_NB) == 0)
		return fd;
	snprintf(msg, sizeof(msg), "run %lld's layer is in use (%s): another "
	    "apply or discard of it, or a run in it, is going on; try again "
	    "once that ends", (long long)r->id, errno == EWOULDBLOCK ?
	    "locked" : strerror(errno));
	cmd_error(name, "%s", msg);
	close(fd);
	return -1;
}

static void
cmd_cow_unlock(int fd)
{
	if (fd >= 0)
		close(fd);
}

int
cmd_cow_apply(struct store *st, const struct store_run *r, unsigned flags,
    const struct cmd_include *inc)
{
	return cmd_cow_apply_paths(st, r, flags, inc, NULL, 0);
}

int
cmd_cow_apply_paths(struct store *st, const struct store_run *r,
    unsigned flags, const struct cmd_include *inc, char *const *paths,
    size_t npaths)
{
	struct cow_changes	 ch, sub = { 0 };
	struct cmd_cow_pick	 pk;
	struct cow		 c;
	char			 err[1024];
	unsigned char		*keep = NULL;
	unsigned		 cflags = flags & ~CMD_APPLY_IGNORED;
	size_t			 i;
	int			 ex, rc, lock;

	if ((lock = cmd_cow_lock("apply", r)) == -1)
		return WARREN_EXIT_FAIL;
	if ((ex = cmd_cow_load_reviewed(r, &c, &ch)) != 0) {
		cmd_cow_unlock(lock);
		return ex;
	}
	memset(&pk, 0, sizeof(pk));
	if (cmd_cow_include("apply", &ch, cflags, inc) == -1) {
		ex = WARREN_EXIT_USAGE;
		goto out;
	}
	if ((ex = cmd_cow_pick("apply", &c, &ch, paths, npaths, &pk)) != 0)
		goto out;
	if ((keep = calloc(ch.n + 1, 1)) == NULL) {
		cmd_error("apply", "%s", "out of memory");
		ex = WARREN_EXIT_INTERNAL;
		goto out;
	}
	for (i = 0; i < ch.n; i++) {
		if (pk.sel[i] & LAYER_NAMED) {	/* as --include PATH */
			ch.v[i].sensitive = NULL;
			ch.v[i].unreviewed = NULL;
		}
		keep[i] = (pk.sel[i] & LAYER_SEL) && (!cmd_cow_apart(&pk, i) ||
		    (flags & CMD_APPLY_IGNORED));
	}
	layer_paths_keep_parents(&ch, keep);
	if (layer_paths_subset(&ch, keep, &sub) == -1) {
		cmd_error("apply", "%s", "out of memory");
		ex = WARREN_EXIT_INTERNAL;
		goto out;
	}
	rc = cow_apply(&c, &sub, cflags, stdout, err, sizeof(err));
	if (rc == -1) {
		cmd_error("apply", "%s", err);
		fprintf(stderr, "warren apply: run it again once that is fixed:"
		    " what was applied is kept, the rest follows\n");
		ex = WARREN_EXIT_INTERNAL;
	} else if (rc == 1)
		ex = WARREN_EXIT_FAIL;
	else {
		cmd_cow_apply_apart(&ch, &pk, keep);
		ex = cmd_cow_applied(st, r, &c, cmd_cow_left_out(&sub, cflags),
		    ch.n - sub.n);
	}
 out:
	free(sub.v);
	free(keep);
	cmd_cow_pick_free(&pk);
	cow_changes_free(&ch);
	cmd_cow_unlock(lock);
	return ex;
}

int
cmd_cow_discard(struct store *st, const struct store_run *r)
{
	struct cow	c;
	char		err[1024], msg[PATH_MAX + 1200];
	int		lock, ex = WARREN_EXIT_OK;

	if ((lock = cmd_cow_lock("discard", r)) == -1)
		return WARREN_EXIT_FAIL;
	if (layer_open(r, &c, err, sizeof(err)) == -1) {
		cmd_error("discard", "%s", err);
		ex = WARREN_EXIT_INTERNAL;
	/* Recorded first: a follow-up that took the layer over since the
	 * run was read keeps it (store_run_cow_state refuses). */
	} else if (store_run_cow_state(st, r->id, "discarded") == -1) {
		cmd_error("discard", "%s", store_errmsg(st));
		ex = WARREN_EXIT_STORE;
	} else if (cow_apply_clean(&c, err, sizeof(err)) == -1 ||
	    cow_remove(&c, err, sizeof(err)) == -1) {
		snprintf(msg, sizeof(msg), "run %lld is discarded, but its "
		    "layer %s stays (remove it by hand): %s", (long long)r->id,
		    c.dir, err);
		cmd_error("discard", "%s", msg);
		ex = WARREN_EXIT_INTERNAL;
	} else
		printf("discarded the changes of run %lld\n", (long long)r->id);
	cmd_cow_unlock(lock);
	return ex;
}

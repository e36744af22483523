/*
 * A run's copy-on-write layer (workspace/cow.h), seen from `warren run`
 * and `warren resume`: whether the run gets one, making it, and what is
 * said (or applied, with --apply) when the run ends.
 *
 * A run gets a layer unless the user asked for the real tree (--in-place,
 * or workspace_mode = in-place in the user's config: a project file cannot
 * ask for it), or no agent of the run could write (its root cannot write
 * and cannot delegate to a profile that can). An in-place run is refused
 * when a workspace file has a hard link outside the workspace (pnpm's
 * store, a `cp -al` backup): a write through it would change that file.
 */
#include <sys/types.h>
#include <sys/prctl.h>

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "agent/profile.h"
#include "cli/layer.h"
#include "common/clock.h"
#include "common/config.h"
#include "common/exitcode.h"
#include "common/log.h"
#include "common/str.h"
#include "common/xdg.h"
#include "store/store.h"
#include "workspace/cow.h"
#include "workspace/hardlinks.h"
#include "workspace/hostexec.h"

/* Could an agent of this run write the workspace? */
static int
layer_writers(const struct profile_set *ps, const struct profile *root)
{
	size_t	i;

	if (root->fs_write)
		return 1;
	if (!root->delegate)
		return 0;
	for (i = 0; i < ps->n; i++)
		if (ps->v[i]->fs_write)
			return 1;
	return 0;
}

/*
 * The layer's mode for a new run: COW_NONE in place, else overlay where
 * this machine and user can have one (the `cow` key: auto, or forced).
 */
int
layer_choose(const struct config *c, const struct profile_set *ps,
    const struct profile *root, enum cow_mode *mode, char *err, size_t errsz)
{
	*mode = COW_NONE;
	if (strcmp(config_str(c, "workspace_mode"), "in-place") == 0 ||
	    !layer_writers(ps, root))
		return 0;
	return layer_mechanism(config_str(c, "cow"), mode, err, errsz);
}

/* The files hl names, escaped, into buf: "a, b, c and 4 more". */
static void
layer_links_names(const struct hardlinks *hl, char *buf, size_t sz)
{
	size_t	 i, n = hl->nout < HARDLINKS_NAMED ? hl->nout :
		    HARDLINKS_NAMED;
	char	*e;
	size_t	 len = 0;

	buf[0] = '\0';
	for (i = 0; i < n && len < sz; i++) {
		e = str_escape_dup(hl->named[i], strlen(hl->named[i]), 0);
		len += (size_t)snprintf(buf + len, sz - len, "%s%s",
		    i > 0 ? ", " : "", e != NULL ? e : "?");
		free(e);
	}
	if (hl->nout > n && len < sz)
		snprintf(buf + len, sz - len, " and %zu more", hl->nout - n);
}

int
layer_links(const struct profile_set *ps, const struct profile *root,
    const char *ws, char *err, size_t errsz)
{
	struct hardlinks	 hl;
	char			 names[768], why[512];
	uint64_t		 t0 = clock_mono_ms();

	if (!layer_writers(ps, root))
		return 0;
	if (hardlinks_outside(ws, &hl, why, sizeof(why)) == -1) {
		snprintf(err, errsz, "--in-place: %s. Run without --in-place "
		    "(a copy-on-write layer, the default), or give "
		    "--allow-hard-links to run anyway", why);
		return -1;
	}
	log_debug("in place: %zu workspace entries checked for hard links in "
	    "%llu ms", hl.nentries, (unsigned long long)(clock_mono_ms() - t0));
	if (hl.nout == 0)
		return 0;
	layer_links_names(&hl, names, sizeof(names));
	snprintf(err, errsz, "--in-place: %zu file%s in the workspace ha%s a "
	    "hard link outside it, so an agent's write would change the file "
	    "outside too: %s. Run without --in-place (a copy-on-write layer, "
	    "the default), or give --allow-hard-links to run anyway",
	    hl.nout, hl.nout == 1 ? "" : "s", hl.nout == 1 ? "s" : "ve",
	    names);
	hardlinks_free(&hl);
	return -1;
}

/*
 * The sandbox's read-only mount points on .git and .warren hold a name,
 * not its other spellings: where the filesystem takes .GIT for .git and
 * makes it a dentry of its own (FUSE, 9p), a write to .GIT/hooks lands in
 * .git/hooks. A layer holds such names back at apply; in place nothing
 * would, so a run whose agents write is refused there.
 */
int
layer_in_place_ok(const struct profile_set *ps, const struct profile *root,
    const char *ws, char *err, size_t errsz)
{
	char	why[PATH_MAX + 256];
	int	rc;

	if (!layer_writers(ps, root))
		return 0;
	if ((rc = hostexec_fs_folds(ws, why, sizeof(why))) == 0)
		return 0;
	snprintf(err, errsz, "%s: --in-place is refused on a case-insensitive "
	    "workspace (its read-only .git and .warren would not hold "
	    "against .GIT and .WARREN); run copy-on-write (drop --in-place: "
	    "warren apply holds such names back)", rc == 1 ? why :
	    "cannot tell whether the workspace is case-insensitive");
	if (rc == -1)
		snprintf(err + strlen(err), errsz - strlen(err), " (%s)", why);
	return -1;
}

/*
 * Can a layer be an overlay here? The answer kept in the state directory
 * (workspace/cow_probe_cache.c), or a probe when none is kept or flags
 * ask for one (COW_PROBE_AGAIN).
 */
int
layer_probe(const char *state, unsigned flags, char *why, size_t whysz)
{
	int	 rc, probed;

	rc = cow_probe_cached(state, flags, &probed, why, whysz);
	if (probed == COW_PROBED_UNKEPT && prctl(PR_GET_DUMPABLE) != 1)
		log_debug("overlay: a non-dumpable process's probe is not "
		    "kept (its child may not map its own uid)");
	else if (probed == COW_PROBED_UNKEPT)
		log_warnx("the overlay probe's answer could not be kept in %s "
		    "(the next run probes again): %s", state != NULL ? state :
		    "the state directory", strerror(errno));
	log_debug("overlay: %s (%s)", rc == 1 ? "yes" : rc == 0 ? "no" :
	    "the probe failed", probed ? "probed" : "the answer kept in "
	    "the state directory");
	return rc;
}

/*
 * The early probe's answer (layer_probe_early), for layer_mechanism:
 * LAYER_EARLY_NONE when it did not run.
 */
#define LAYER_EARLY_NONE	(-2)
static int	layer_early_rc = LAYER_EARLY_NONE;
static char	layer_early_why[1024];

/*
 * Before the run makes itself non-dumpable: the probe's child writes its
 * own /proc/self/uid_map and setgroups, which a non-dumpable process may
 * not (EACCES), so a probe from there said "no overlay" to every
 * ordinary user. Here it probes only when no answer is kept, and
 * layer_choose then takes this answer, kept or not (a probe after would
 * be a non-dumpable one).
 */
void
layer_probe_early(const struct config *c)
{
	char	 state[PATH_MAX];

	if (strcmp(config_str(c, "workspace_mode"), "in-place") == 0 ||
	    strcmp(config_str(c, "cow"), "copy") == 0 ||
	    xdg_state_dir(state, sizeof(state)) == -1)
		return;
	layer_early_rc = layer_probe(state, 0, layer_early_why,
	    sizeof(layer_early_why));
}

/*
 * The spawn server could not enter the run's overlay: the kept answer
 * is dropped, and the next run's early probe (from a dumpable process)
 * decides again. No probe here: this process is non-dumpable, and its
 * probe would say "no" to every ordinary user.
 */
void
layer_enter_failed(const struct cow *cw, char *err, size_t errsz)
{
	char	 state[PATH_MAX];
	size_t	 n;

	if (cw->mode != COW_OVERLAY || xdg_state_dir(state, sizeof(state)) ==
	    -1)
		return;
	n = strlen(err);
	if (cow_probe_forget(state) == -1)
		log_warn("%s/" COW_PROBE_CACHE ": the kept overlay answer "
		    "stays (remove it, or run `warren sandbox check`)", state);
	else if (n < errsz)
		snprintf(err + n, errsz - n, " (the kept overlay answer is "
		    "dropped: the next run probes again)");
}

int
layer_mechanism(const char *want, enum cow_mode *mode, char *err,
    size_t errsz)
{
	char	 state[PATH_MAX], why[1024];
	int	 rc;

	if (strcmp(want, "copy") == 0) {
		*mode = COW_COPY;
		return 0;
	}
	if (xdg_state_dir(state, sizeof(state)) == -1) {
		snprintf(err, errsz, "no state directory for the run's "
		    "copy-on-write layer (%s): set HOME or XDG_STATE_HOME, "
		    "or run with --in-place", strerror(errno));
		return -1;
	}
	if (layer_early_rc != LAYER_EARLY_NONE) {
		rc = layer_early_rc;
		snprintf(why, sizeof(why), "%s", layer_early_why);
	} else
		rc = layer_probe(state, 0, why, sizeof(why));
	if (rc == 1) {
		*mode = COW_OVERLAY;
		return 0;
	}
	if (strcmp(want, "overlay") == 0) {
		snprintf(err, errsz, "no overlay filesystem here (%s): use "
		    "--cow copy, or --in-place", rc == 0 ? why :
		    "the probe failed");
		return -1;
	}
	log_info("copy-on-write by copying the workspace: no overlay here "
	    "(%s; `warren sandbox check` probes again)", rc == 0 ? why :
	    "the probe failed");
	*mode = COW_COPY;
	return 0;
}

/*
 * Layers whose warren died before it recorded their run: nothing names
 * them, so nothing else would ever remove them. An hour old at least, so
 * that a run being recorded right now keeps its own.
 */
void
layer_sweep(void)
{
	char	err[1024];
	int	n;

	if (cow_sweep(NULL, LAYER_SWEEP_AGE_MS, &n, err, sizeof(err)) == -1)
		log_warnx("layers no run was recorded for: %s", err);
	if (n > 0)
		log_info("removed %d layer%s no run was recorded for", n,
		    n == 1 ? "" : "s");
}

/* The resumed run's layer, as its row names it. */
int
layer_reopen(const struct store_run *run, struct cow *cw, char *err,
    size_t errsz)
{
	if (run->cow_mode == NULL)
		return 0;
	if (layer_continued(run)) {
		snprintf(err, errsz, "run %lld's layer went on to a follow-up "
		    "run (--continue), which holds it now: there is no layer "
		    "to resume in (`warren runs` names the follow-up)",
		    (long long)run->id);
		return -1;
	}
	if (!layer_pending(run)) {
		snprintf(err, errsz, "run %lld's changes were already %s: "
		    "there is no layer to resume in", (long long)run->id,
		    run->cow_state);
		return -1;
	}
	return layer_open(run, cw, err, errsz);
}

int
layer_pending(const struct store_run *run)
{
	return run->cow_mode != NULL && (run->cow_state == NULL ||
	    strcmp(run->cow_state, "pending") == 0);
}

int
layer_continued(const struct store_run *run)
{
	return run->cow_mode != NULL && run->cow_state != NULL &&
	    strcmp(run->cow_state, "continued") == 0;
}

int
layer_open(const struct store_run *run, struct cow *cw, char *err,
    size_t errsz)
{
	enum cow_mode	 mode;

	if (run->cow_mode == NULL) {
		snprintf(err, errsz, "run %lld wrote the workspace in place: "
		    "it has no layer", (long long)run->id);
		return -1;
	}
	if (cow_mode_parse(run->cow_mode, &mode) == -1 || run->cow_dir ==
	    NULL || run->workspace == NULL) {
		snprintf(err, errsz, "run %lld: the database names no usable "
		    "layer (mode %s)", (long long)run->id, run->cow_mode);
		return -1;
	}
	return cow_open(cw, mode, run->cow_dir, run->workspace, err, errsz);
}

/* The files the diff cannot show (cow_review), one a line: `warren
 * apply` leaves them out. How many. */
static size_t
layer_say_unreviewed(int64_t run, const struct cow_changes *ch)
{
	size_t	 i, n = 0;
	char	*e;

	for (i = 0; i < ch->n; i++) {
		if (ch->v[i].unreviewed == NULL)
			continue;
		if (n++ == 0)
			fprintf(stderr, "warren: run %lld: files the diff cannot "
			    "show, which apply leaves out without "
			    "--include-unreviewed:\n", (long long)run);
		e = str_escape_dup(ch->v[i].path, strlen(ch->v[i].path), 0);
		fprintf(stderr, "warren:   %s (%s)\n", e != NULL ? e : "?",
		    ch->v[i].unreviewed);
		free(e);
	}
	return n;
}

/* Print the changes' count and the two commands; 1 if one is sensitive
 * or unreviewed. */
static int
layer_say(int64_t run, const struct cow_changes *ch, int json)
{
	size_t	 i, nsens = 0, nunrev = 0;

	for (i = 0; i < ch->n; i++) {
		if (ch->v[i].sensitive != NULL)
			nsens++;
		if (ch->v[i].unreviewed != NULL)
			nunrev++;
	}
	if (json) {
		printf("{\"event\":\"changes\",\"run\":%lld,\"files\":%zu,"
		    "\"sensitive\":%zu,\"unreviewed\":%zu}\n",
		    (long long)run, ch->n, nsens, nunrev);
		fflush(stdout);
	}
	if (ch->n == 0) {
		fprintf(stderr, "warren: run %lld changed no file\n",
		    (long long)run);
		return 0;
	}
	fprintf(stderr, "warren: run %lld changed %zu file%s in its layer "
	    "(the workspace is untouched)%s\n", (long long)run, ch->n,
	    ch->n == 1 ? "" : "s", nsens > 0 ? "; some run code on the host: "
	    "`warren diff` flags them" : "");
	layer_say_unreviewed(run, ch);
	fprintf(stderr, "warren: review: warren diff %lld    apply: warren "
	    "apply %lld    discard: warren discard %lld\n", (long long)run,
	    (long long)run, (long long)run);
	return nsens > 0 || nunrev > 0;
}

/*
 * Applied, or nothing to apply ("empty"): record it, then free the
 * layer. Through a connection of its
 * own: the run's has its writer thread (store_run_cow_state wants none).
 */
static void
layer_settle(const char *db, int64_t run, const struct cow *cw,
    const char *state)
{
	struct store	*st;
	char		 err[1024];

	if (db == NULL)
		return;
	if ((st = store_open(db, 0, err, sizeof(err))) == NULL ||
	    store_run_cow_state(st, run, state) == -1) {
		fprintf(stderr, "warren: run %lld: its layer is %s, but that "
		    "is not recorded (`warren discard %lld` frees it): %s\n",
		    (long long)run, state, (long long)run, st != NULL ?
		    store_errmsg(st) : err);
		store_close(st);
		return;
	}
	store_close(st);
	if (cow_remove(cw, err, sizeof(err)) == -1)
		fprintf(stderr, "warren: run %lld: its layer (%s) stays: %s\n",
		    (long long)run, state, err);
}

/*
 * --apply: everything but what the workspace's .gitignore ignores (the
 * objects of a run that ran make), which stays in the layer for `warren
 * apply --include-ignored`; *nign how many. cow_apply's result.
 */
static int
layer_end_apply(int64_t run, const struct cow *cw,
    const struct cow_changes *ch, size_t *nign, char *err, size_t errsz)
{
	struct cow_changes	 sub;
	unsigned char		*ign;
	char			 note[512];
	size_t			 i;
	int			 rc;

	*nign = 0;
	if ((ign = calloc(ch->n + 1, 1)) == NULL ||
	    layer_ignore(cw->workspace, ch, ign, note, sizeof(note)) == -1) {
		snprintf(err, errsz, "asking git what .gitignore ignores: %s",
		    strerror(errno));
		free(ign);
		return -1;
	}
	if (note[0] != '\0')
		fprintf(stderr, "warren: --apply: %s\n", note);
	for (i = 0; i < ch->n; i++) {
		ign[i] = !ign[i];	/* what to apply */
		*nign += !ign[i];
	}
	if (layer_paths_subset(ch, ign, &sub) == -1) {
		snprintf(err, errsz, "out of memory");
		free(ign);
		return -1;
	}
	rc = cow_apply(cw, &sub, 0, stderr, err, errsz);
	if (rc == 0 && *nign > 0)
		fprintf(stderr, "warren: --apply: %zu path%s the workspace's "
		    ".gitignore ignores left in the layer: `warren diff %lld` "
		    "lists them, `warren apply --include-ignored %lld` applies "
		    "them\n", *nign, *nign == 1 ? "" : "s", (long long)run,
		    (long long)run);
	free(sub.v);
	free(ign);
	return rc;
}

/*
 * The run ended: say what its layer holds, and with --apply (the run
 * done, nothing sensitive) apply it. Returns the exit code to use: code,
 * or WARREN_EXIT_FAIL when --apply could not apply.
 */
int
layer_end(const char *db, int64_t run, const struct cow *cw, int apply,
    int json, int code)
{
	struct cow_changes	 ch;
	char			 err[1024];
	size_t			 nign = 0;
	int			 sens, rc;

	memset(&ch, 0, sizeof(ch));
	if (cow_changes(cw, &ch, err, sizeof(err)) == -1 ||
	    cow_review(cw, &ch, err, sizeof(err)) == -1) {
		cow_changes_free(&ch);
		fprintf(stderr, "warren: run %lld: its layer cannot be read: "
		    "%s\n", (long long)run, err);
		return code == WARREN_EXIT_OK && apply ? WARREN_EXIT_FAIL :
		    code;
	}
	sens = layer_say(run, &ch, json);
	/* A finished run that wrote nothing leaves no layer behind. */
	if (ch.n == 0 && code == WARREN_EXIT_OK)
		layer_settle(db, run, cw, "empty");
	if (!apply || ch.n == 0) {
		cow_changes_free(&ch);
		return code;
	}
	if (code != WARREN_EXIT_OK || sens) {
		fprintf(stderr, "warren: --apply: not applied (%s)\n",
		    code != WARREN_EXIT_OK ? "the run did not finish well" :
		    "files that run code on the host, or that the diff cannot "
		    "show, changed");
		cow_changes_free(&ch);
		return code == WARREN_EXIT_OK ? WARREN_EXIT_FAIL : code;
	}
	rc = layer_end_apply(run, cw, &ch, &nign, err, sizeof(err));
	cow_changes_free(&ch);
	if (rc != 0) {
		if (rc == -1)
			fprintf(stderr, "warren: --apply: %s\n", err);
		fprintf(stderr, "warren: --apply: nothing applied; the layer "
		    "stays for `warren diff %lld`\n", (long long)run);
		return WARREN_EXIT_FAIL;
	}
	if (nign == 0)
		layer_settle(db, run, cw, "applied");
	return code;
}

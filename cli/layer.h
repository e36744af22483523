/*
 * A run's copy-on-write layer (workspace/cow.h) as `warren run` and
 * `warren resume` see it: whether the run gets one, the one a resumed run
 * had, and what is said (or applied, with --apply) when the run ends.
 */
#ifndef WARREN_LAYER_H
#define WARREN_LAYER_H

#include <stddef.h>
#include <stdint.h>

#include "workspace/cow.h"

struct config;
struct profile;
struct profile_set;
struct store_run;

/* layer.c */
/* The mode of a new run's layer; COW_NONE: it writes in place. */
int	layer_choose(const struct config *c, const struct profile_set *ps,
	    const struct profile *root, enum cow_mode *mode, char *err,
	    size_t errsz);
/* An in-place run whose agents could write: 0 if no workspace file has
 * a hard link outside ws, else -1 and err names them and what to do. */
int	layer_links(const struct profile_set *ps, const struct profile *root,
	    const char *ws, char *err, size_t errsz);
/* An in-place run (no layer) whose agents write: refused (-1, err says
 * why) on a workspace that takes .GIT for .git. */
int	layer_in_place_ok(const struct profile_set *ps,
	    const struct profile *root, const char *ws, char *err,
	    size_t errsz);
/* Can a layer be an overlay here (the kept answer, or a probe)? 1 yes,
 * 0 no (why filled), -1 error. */
int	layer_probe(const char *state, unsigned flags, char *why,
	    size_t whysz);
/* The overlay answer kept, probing if none is, while the process is
 * still dumpable (a new run, before PR_SET_DUMPABLE 0); layer_mechanism
 * then takes this answer. */
void	layer_probe_early(const struct config *c);
/* After the spawn server failed to enter cw (an overlay): drop the kept
 * answer, so the next run probes again; err says so. No probe here. */
void	layer_enter_failed(const struct cow *cw, char *err, size_t errsz);
/* How a layer is made here: want is "auto", "overlay" or "copy". */
int	layer_mechanism(const char *want, enum cow_mode *mode, char *err,
	    size_t errsz);
/* Remove the layers no run was recorded for (a warren killed between
 * the two), older than LAYER_SWEEP_AGE_MS. */
#define LAYER_SWEEP_AGE_MS	(60 * 60 * 1000)
void	layer_sweep(void);
/* A resumed run's layer (cw->mode COW_NONE if it had none). */
int	layer_reopen(const struct store_run *run, struct cow *cw, char *err,
	    size_t errsz);
/* The layer a run's row names, whatever its state; -1 if none. */
int	layer_open(const struct store_run *run, struct cow *cw, char *err,
	    size_t errsz);
/* The run has a layer neither applied nor discarded. */
int	layer_pending(const struct store_run *run);
/* The run's layer went on to a follow-up (--continue), which holds it. */
int	layer_continued(const struct store_run *run);
/* The run ended with code: say what the layer holds; --apply applies it.
 * Returns the exit code to use. db: the run's database, for the state. */
int	layer_end(const char *db, int64_t run, const struct cow *cw,
	    int apply, int json, int code);

/* layer_paths.c: `warren diff|apply RUN PATH...` */
#define LAYER_SEL	0x1	/* a named path holds the change */
#define LAYER_NAMED	0x2	/* named exactly: released like --include */
/*
 * sel[i] for each change of ch (LAYER_SEL, LAYER_NAMED): what paths (below
 * ws, or absolute in it; a directory names what is under it) select, all
 * when npaths is 0. -1 with err naming a path that selects nothing, or
 * one outside the workspace.
 */
int	layer_paths_select(const char *ws, const struct cow_changes *ch,
	    char *const *paths, size_t npaths, unsigned char *sel, char *err,
	    size_t errsz);
/* Also keep the directories apply must make for a kept change (added,
 * or a file before), once what is kept is decided: a named file in a
 * new directory .gitignore ignores brings the directory. */
void	layer_paths_keep_parents(const struct cow_changes *ch,
	    unsigned char *keep);
/* out: the changes of ch whose keep[i] is set, borrowed from ch (free
 * out->v only). -1 out of memory. */
int	layer_paths_subset(const struct cow_changes *ch,
	    const unsigned char *keep, struct cow_changes *out);
/* layer_ignore.c */
/*
 * ign[i]: the workspace's own .gitignore rules ignore change i (git
 * check-ignore, run in ws on the host: never the layer's .gitignore).
 * A path in a submodule: not ignored, and note says so. No git or no
 * work tree: none, and note says why (with git's stderr) if ws has a
 * .gitignore. -1 (errno) if git could not be started.
 */
int	layer_ignore(const char *ws, const struct cow_changes *ch,
	    unsigned char *ign, char *note, size_t notesz);

#endif

/*
 * The workspace of a run (cmd_run.c): a copy-on-write layer chosen and
 * made, reopened for a resume, or the layer of the run a --continue
 * follows up, gone on in; entered by the spawn server. Or no layer, where
 * an in-place run is refused on a workspace it cannot guard.
 */

#include <limits.h>
#include <stdio.h>
#include <string.h>

#include "cli/cmd_run.h"
#include "cli/layer.h"
#include "common/config.h"
#include "common/exitcode.h"
#include "common/log.h"
#include "store/store.h"
#include "supervisor/run.h"
#include "supervisor/spawnd_client.h"

/* The spawn server enters the layer (spawnd/spawnd.h). Without one we
 * would have to enter it ourselves, and then could not read the real
 * workspace to compare the layer with at the end. */
static int
cmd_run_enter(struct spawnd_client *d, const struct cow *cw, int *memfd,
    char *err, size_t errsz)
{
	if (d == NULL) {
		snprintf(err, errsz, "it needs the spawn server, which did not "
		    "start (or WARREN_SPAWN_DIRECT is set): run with "
		    "--in-place, or fix the cause above");
		return -1;
	}
	return spawnd_client_layer(d, cw, memfd, err, errsz);
}

/* A layer made for a run that never started: nothing wrote it. One gone
 * on in is the earlier run's still. */
void
cmd_run_unlayer(struct cmd_run_ctx *x)
{
	char	err[1024];

	if (x->cow.mode != COW_NONE && x->adopted == 0 &&
	    cow_remove(&x->cow, err, sizeof(err)) == -1)
		log_warnx("%s", err);
}

/*
 * No layer: the agents write the workspace. Refused, before any agent
 * starts, where the workspace's filesystem folds names (the sandbox's
 * read-only .git and .warren hold one spelling only) or a write could go
 * through a hard link to a file outside it (cli/layer.c).
 */
static int
cmd_run_in_place(const struct cmd_run_args *a, struct run *r,
    struct cmd_run_ctx *x, const char *cmd)
{
	char	err[PATH_MAX + 1536];

	if (layer_in_place_ok(&x->ps, r->root->profile, x->ws, err,
	    sizeof(err)) == -1 || (!a->hardlinks && layer_links(&x->ps,
	    r->root->profile, x->ws, err, sizeof(err)) == -1)) {
		cmd_run_error(cmd, "%s", err);
		return WARREN_EXIT_SANDBOX;
	}
	return WARREN_EXIT_OK;
}

/*
 * A follow-up (--continue) goes on in the layer of the run it follows up,
 * as a resumed run does in its own: it sees what that run wrote and not
 * yet applied, and its diff is the whole conversation's. Not when that
 * layer was applied, discarded or already gone on in (the run starts a
 * layer of its own), when the user asked for in-place, when the run
 * followed up ran in another workspace, or when its layer cannot be
 * opened (said). 1 gone on in, 0 not.
 */
static int
cmd_run_adopt(const struct config *c, struct cmd_run_ctx *x)
{
	const struct store_run	*p = &x->prev;
	char			 why[768];

	if (p->id <= 0 || !layer_pending(p) ||
	    strcmp(config_str(c, "workspace_mode"), "in-place") == 0)
		return 0;
	if (p->workspace == NULL || strcmp(p->workspace, x->ws) != 0) {
		log_info("run %lld ran in another workspace: this one gets a "
		    "layer of its own", (long long)p->id);
		return 0;
	}
	if (layer_open(p, &x->cow, why, sizeof(why)) == -1) {
		memset(&x->cow, 0, sizeof(x->cow));
		log_warnx("--continue: run %lld's layer cannot be opened (%s): "
		    "this run gets a layer of its own, without what run %lld "
		    "wrote", (long long)p->id, why, (long long)p->id);
		return 0;
	}
	x->adopted = p->id;
	log_info("going on in run %lld's layer (%s, %s): this run sees what "
	    "it wrote", (long long)p->id, cow_mode_name(x->cow.mode),
	    x->cow.dir);
	return 1;
}

/*
 * The run's layer: chosen and made (a new run) or reopened (a resumed
 * one), then entered by the spawn server before its first worker.
 */
int
cmd_run_layer(const struct cmd_run_args *a, const struct config *c,
    struct run *r, struct cmd_run_ctx *x, const struct store_plan *plan)
{
	enum cow_mode	 mode;
	char		 err[1024];
	const char	*cmd = plan != NULL ? "resume" : "run";

	if (plan != NULL) {
		if (layer_reopen(&plan->run, &x->cow, err, sizeof(err)) ==
		    -1) {
			cmd_run_error(cmd, "%s", err);
			return WARREN_EXIT_STORE;
		}
	} else if (!cmd_run_adopt(c, x)) {
		if (layer_choose(c, &x->ps, r->root->profile, &mode, err,
		    sizeof(err)) == -1) {
			cmd_run_error(cmd, "%s", err);
			return WARREN_EXIT_SANDBOX;
		}
		if (mode == COW_NONE)
			return cmd_run_in_place(a, r, x, cmd);
		layer_sweep();
		if (a->nostore) {
			cmd_run_error(cmd, "--no-store keeps no run to review "
			    "the copy-on-write layer with: add --in-place "
			    "(agents write the workspace) or drop --no-store");
			return WARREN_EXIT_USAGE;
		}
		if (cow_create(&x->cow, mode, x->ws, NULL, err, sizeof(err)) ==
		    -1) {
			cmd_run_error(cmd, "%s", err);
			return WARREN_EXIT_SANDBOX;
		}
	}
	if (x->cow.mode == COW_NONE)
		return cmd_run_in_place(a, r, x, cmd);
	/* disk_max held by the kernel: the overlay's upper on a tmpfs that
	 * big (workspace/cow_bound.c). A copy's tree holds the workspace
	 * too: its limit is the watch alone (supervisor/run_disk.c). */
	x->cow.bound = x->cow.mode == COW_OVERLAY ?
	    r->opts.limits.disk_max : 0;
	if (cmd_run_enter(r->spawnd, &x->cow, &r->disk_fd, err,
	    sizeof(err)) == -1) {
		layer_enter_failed(&x->cow, err, sizeof(err));
		cmd_run_error(cmd, "%s", err);
		if (plan == NULL)
			cmd_run_unlayer(x);
		return WARREN_EXIT_SANDBOX;
	}
	r->opts.cow = &x->cow;
	log_debug("the workspace is a copy-on-write layer (%s) in %s",
	    cow_mode_name(x->cow.mode), x->cow.dir);
	return WARREN_EXIT_OK;
}

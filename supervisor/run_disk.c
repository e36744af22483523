/*
 * The disk limit of a copy-on-write run (disk_max): every agent of the run
 * writes one layer (workspace/cow.h), and when the layer takes more disk
 * than disk_max the run stops with "disk limit", as it stops when the
 * store cannot be written: every agent is cancelled, then killed after the
 * grace period, and the run ends failed.
 *
 * Its workers are killed at once (a writer given the grace period would
 * write on), the way the memory cgroup kills.
 *
 * The layer lives on the state directory's filesystem, which an ordinary
 * user cannot bound (no size-limited disk filesystem mounts in a user
 * namespace), so the limit is watched: the layer's allocated blocks are
 * summed every RUN_DISK_MS while workers live, and once more when the last
 * one is gone. A writer can pass the limit by what it writes in one
 * period; RLIMIT_FSIZE still bounds each file. A copy counts what grew
 * since the run (or its resume) began, not the copy of the workspace.
 * Five measures failing in a row stop the run too: an agent must not
 * lift its limit by making the walk fail. docs/workspaces.md gives
 * the overshoot measured by tests/e2e/test_cow_run.c.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/log.h"
#include "common/xmalloc.h"
#include "supervisor/loop.h"
#include "supervisor/run.h"
#include "workspace/cow.h"

#define RUN_DISK_MS	200
#define RUN_DISK_ERRORS	5	/* failed measures in a row: stop */

static void	run_disk_timer(void *);

static void
run_disk_arm(struct run *r)
{
	r->disk_timer = loop_timer_add(r->loop, RUN_DISK_MS, run_disk_timer,
	    r);
}

/* Killed at once, as the memory limit kills: a writer given the grace
 * period to finish would write on. */
static void
run_disk_kill(struct run *r)
{
	size_t	i;

	for (i = 0; i < r->nnodes; i++)
		if (r->nodes[i]->worker != NULL)
			proc_kill(r->nodes[i]->worker, NODE_END_KILLED,
			    r->stop_reason);
	run_cancel(r, 0);
}

/* Over the limit: stop the run, once. */
static void
run_disk_over(struct run *r, uint64_t used)
{
	char	 msg[256];

	snprintf(msg, sizeof(msg), "disk limit: the run's copy-on-write "
	    "layer holds %" PRIu64 " KiB, over disk_max %" PRIu64 " KiB "
	    "(raise disk_max or --disk-max)", used / 1024,
	    r->opts.limits.disk_max / 1024);
	log_warnx("run %lld: %s", (long long)r->run_id, msg);
	r->stop_reason = xstrdup(msg);
	run_disk_kill(r);
}

/*
 * What the agents added to the layer. A copy starts as big as the
 * workspace: its size when this run (or this resume) began is not theirs.
 * -1 when the layer cannot be measured.
 */
static int
run_disk_used(struct run *r, uint64_t *used, char *err, size_t errsz)
{
	if (cow_usage(r->opts.cow, used, err, errsz) == -1)
		return -1;
	if (r->opts.cow->mode == COW_COPY) {
		if (!r->disk_based) {
			r->disk_base = *used;
			r->disk_based = 1;
		}
		*used = *used > r->disk_base ? *used - r->disk_base : 0;
	}
	return 0;
}

/* 1 if the layer is over its limit (and the run now stopping). */
int
run_disk_check(struct run *r)
{
	char		 err[512];
	uint64_t	 used;

	if (r->opts.cow == NULL || r->opts.limits.disk_max == 0 ||
	    r->stop_reason != NULL)
		return r->stop_reason != NULL;
	if (run_disk_used(r, &used, err, sizeof(err)) == -1) {
		/* An agent can make the walk fail (a huge tree, renames
		 * under it): failing to measure must not lift the limit. */
		log_warnx("disk limit: %s", err);
		if (++r->disk_errors < RUN_DISK_ERRORS)
			return 0;
		r->stop_reason = xstrdup("disk limit: the run's copy-on-write "
		    "layer cannot be measured (see the log above)");
		run_disk_kill(r);
		return 1;
	}
	r->disk_errors = 0;
	if (used <= r->opts.limits.disk_max)
		return 0;
	run_disk_over(r, used);
	return 1;
}

static void
run_disk_timer(void *arg)
{
	struct run	*r = arg;

	r->disk_timer = 0;
	if (run_disk_check(r) || r->nlive == 0)
		return;
	run_disk_arm(r);
}

/* A worker started: watch the layer while any runs. */
void
run_disk_watch(struct run *r)
{
	if (r->opts.cow != NULL && r->opts.limits.disk_max != 0 &&
	    r->disk_timer == 0 && r->stop_reason == NULL)
		run_disk_arm(r);
}

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
 * In overlay mode the kernel holds the sum: the layer's upper is a tmpfs
 * of disk_max in the spawn server's namespace (workspace/cow_bound.c), a
 * write past it fails with ENOSPC, and the server passes a descriptor of
 * it (r->disk_fd) for the watch below. A copy's tree holds the whole
 * workspace and stays on disk, where an ordinary user can mount no
 * size-limited filesystem: there the limit is the rest. Two parts hold
 * at the system call: no worker file bigger than disk_max (RLIMIT_FSIZE,
 * run_disk_policy) and no fallocate (seccomp, sandbox_seccomp_rules.c).
 * The sum is watched: the layer is measured every RUN_DISK_MS while
 * workers live, and once more when the last one is gone, counting each
 * file's blocks or its size, whichever is more (cow_usage; a sparse file
 * at its size, which the tmpfs does not count). In copy mode a writer of
 * many files can pass the limit by what it writes in one period. A copy
 * counts what grew since the run (or its resume) began, not the copy of
 * the workspace, measured before any worker starts.
 *
 * Not measured counts as over: failures (a directory the walk may not
 * read, an agent's chmod 0; renames under the walk) stop the run after
 * RUN_DISK_ERRORS in a row, and a failed last measure at once: no worker
 * is left to undo what made it fail. docs/workspaces.md gives what
 * tests/e2e/test_cow_run.c shows.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/log.h"
#include "common/xmalloc.h"
#include "sandbox/sandbox.h"
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
 * A layer on a tmpfs (r->disk_fd, workspace/cow_bound.c): the walk goes
 * through our descriptor of it (the mount is the spawn server's, not in
 * our namespace), and the tmpfs's own count of its blocks, which no mode
 * or name can hide, counts when it is more.
 */
static int
run_disk_bound(struct run *r, uint64_t *used, char *err, size_t errsz)
{
	struct cow	 c;
	uint64_t	 blocks;

	memset(&c, 0, sizeof(c));
	c.mode = COW_OVERLAY;
	snprintf(c.dir, sizeof(c.dir), "/proc/self/fd/%d/.", r->disk_fd);
	if (cow_bound_used(r->disk_fd, &blocks) == -1) {
		snprintf(err, errsz, "statfs of the layer's tmpfs: %s",
		    strerror(errno));
		return -1;
	}
	if (cow_usage(&c, used, err, errsz) == -1)
		return -1;
	if (*used < blocks)
		*used = blocks;
	return 0;
}

/*
 * What the agents added to the layer. A copy starts as big as the
 * workspace: its size when this run (or this resume) began is not theirs,
 * and is measured before any worker starts (run_disk_begin); if that
 * failed, the layer cannot be measured. -1 when it cannot.
 */
static int
run_disk_used(struct run *r, uint64_t *used, char *err, size_t errsz)
{
	if (r->disk_fd != -1)
		return run_disk_bound(r, used, err, errsz);
	if (r->opts.cow->mode == COW_COPY && !r->disk_based) {
		snprintf(err, errsz, "the copy's size when the run began is "
		    "unknown (see the log above)");
		errno = EIO;
		return -1;
	}
	if (cow_usage(r->opts.cow, used, err, errsz) == -1)
		return -1;
	if (r->opts.cow->mode == COW_COPY)
		*used = *used > r->disk_base ? *used - r->disk_base : 0;
	return 0;
}

void
run_disk_begin(struct run *r)
{
	char	 err[512];

	if (r->opts.cow == NULL || r->opts.limits.disk_max == 0 ||
	    r->opts.cow->mode != COW_COPY)
		return;
	if (cow_usage(r->opts.cow, &r->disk_base, err, sizeof(err)) == -1) {
		log_warnx("disk limit: the copy before the run: %s", err);
		return;
	}
	r->disk_based = 1;
}

/* Not measured: what the layer holds is unknown, and unknown is over. */
static void
run_disk_unknown(struct run *r, const char *err)
{
	char	 msg[768];

	snprintf(msg, sizeof(msg), "disk limit: the run's copy-on-write "
	    "layer cannot be measured, which counts as over disk_max: %s",
	    err);
	log_warnx("run %lld: %s", (long long)r->run_id, msg);
	r->stop_reason = xstrdup(msg);
	run_disk_kill(r);
}

/*
 * 1 if the layer is over its limit (and the run now stopping). last: no
 * worker is left, so a measure that fails will fail again.
 */
static int
run_disk_measure(struct run *r, int last)
{
	char		 err[512];
	uint64_t	 used;

	if (r->opts.cow == NULL || r->opts.limits.disk_max == 0 ||
	    r->stop_reason != NULL)
		return r->stop_reason != NULL;
	if (run_disk_used(r, &used, err, sizeof(err)) == -1) {
		/* An agent can make the walk fail (a huge tree, renames
		 * under it, a directory it made unreadable): failing to
		 * measure must not lift the limit. A failure that passes
		 * (a rename, a test suite's chmod 000 directory) is let be
		 * RUN_DISK_ERRORS - 1 times: what it hid is counted by the
		 * next measure that succeeds. */
		log_warnx("disk limit: %s", err);
		if (!last && ++r->disk_errors < RUN_DISK_ERRORS)
			return 0;
		run_disk_unknown(r, err);
		return 1;
	}
	r->disk_errors = 0;
	if (used <= r->opts.limits.disk_max)
		return 0;
	run_disk_over(r, used);
	return 1;
}

static int
run_disk_check(struct run *r)
{
	return run_disk_measure(r, 0);
}

void
run_disk_end(struct run *r)
{
	(void)run_disk_measure(r, 1);
}

/*
 * No file of a worker may be bigger than the whole layer may be: its
 * RLIMIT_FSIZE is disk_max when that is lower. Unlike the watch, this
 * holds at the call: a write, truncate or fallocate past it fails with
 * EFBIG (and SIGXFSZ). A file that is sparse counts at its size here as
 * in cow_usage.
 */
void
run_disk_policy(const struct run *r, struct sandbox_policy *p)
{
	uint64_t	 max = r->opts.limits.disk_max;

	if (r->opts.cow != NULL && max != 0 && max < p->limits.fsize_bytes)
		p->limits.fsize_bytes = (rlim_t)max;
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

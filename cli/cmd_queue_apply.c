/*
 * warren queue apply JOB | --all-done: a done job's run wrote a
 * copy-on-write layer; write it into the workspace as `warren apply RUN`
 * does (cmd_cow.c), found through the job's run id. --all-done applies
 * every done job's layer still pending, one after the other: a job whose
 * changes conflict with the workspace (an earlier job's changes
 * included) is named and left for review, and the others go on.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli/cmd.h"
#include "cli/cmd_queue.h"
#include "cli/layer.h"
#include "common/exitcode.h"
#include "store/store.h"
#include "workspace/cow.h"

#define CMD_QUEUE_APPLY	"apply"

static struct store *
cmd_queue_apply_store(const struct cmd_queue_opts *o, int *exitp)
{
	struct store	*st;
	char		 path[4096], err[STORE_ERRMSG_MAX + 64];

	if (store_path(path, sizeof(path), o->db) == -1) {
		cmd_queue_error(CMD_QUEUE_APPLY, "no run database path (%s): "
		    "set HOME or XDG_STATE_HOME, or give --db FILE",
		    strerror(errno));
		*exitp = WARREN_EXIT_USAGE;
		return NULL;
	}
	if ((st = store_open(path, 0, err, sizeof(err))) == NULL) {
		cmd_queue_error(CMD_QUEUE_APPLY, "%s", err);
		*exitp = WARREN_EXIT_STORE;
	}
	return st;
}

/* A done job with a run: its layer applied (cmd_cow.c says what). */
static int
cmd_queue_apply_job(struct store *st, const struct queue_job *j,
    unsigned flags)
{
	struct store_run	r;
	int			ex;

	if (j->status != QUEUE_DONE || j->run_id <= 0) {
		cmd_queue_error(CMD_QUEUE_APPLY, "job %lld is %s%s: only a done "
		    "job's run has changes to apply", (long long)j->id,
		    queue_status_name(j->status), j->run_id <= 0 &&
		    j->status == QUEUE_DONE ? " without a run" : "");
		return WARREN_EXIT_USAGE;
	}
	if (store_run_get(st, j->run_id, &r) == -1) {
		cmd_queue_error(CMD_QUEUE_APPLY, "job %lld: run %lld: %s",
		    (long long)j->id, (long long)j->run_id, store_errmsg(st));
		return store_errcode(st) == STORE_ENOTFOUND ?
		    WARREN_EXIT_USAGE : WARREN_EXIT_STORE;
	}
	if ((ex = cmd_cow_check("queue apply", &r, 1)) == 0) {
		printf("job %lld (run %lld):\n", (long long)j->id,
		    (long long)j->run_id);
		ex = cmd_cow_apply(st, &r, flags);
	}
	store_run_free(&r);
	return ex;
}

/* A done job whose run's layer waits to be applied. */
static int
cmd_queue_apply_pending(struct store *st, const struct queue_job *j)
{
	struct store_run	r;
	int			pending;

	if (j->run_id <= 0 || store_run_get(st, j->run_id, &r) == -1)
		return 0;
	pending = r.cow_mode != NULL && layer_pending(&r);
	store_run_free(&r);
	return pending;
}

/* The worse of two exit codes: internal over database over conflict. */
static int
cmd_queue_apply_worse(int a, int b)
{
	if (a == WARREN_EXIT_INTERNAL || b == WARREN_EXIT_INTERNAL)
		return WARREN_EXIT_INTERNAL;
	return a > b ? a : b;
}

static int
cmd_queue_apply_all(struct queue *q, struct store *st, unsigned flags)
{
	struct queue_job	*v;
	size_t			 n, i, applied = 0, left = 0;
	int			 ex = WARREN_EXIT_OK, rc;

	if (queue_list(q, QUEUE_DONE, &v, &n) == -1)
		return cmd_queue_fail(q, CMD_QUEUE_APPLY);
	for (i = 0; i < n; i++) {
		if (!cmd_queue_apply_pending(st, &v[i]))
			continue;
		if ((rc = cmd_queue_apply_job(st, &v[i], flags)) == 0)
			applied++;
		else
			left++;
		ex = cmd_queue_apply_worse(ex, rc);
	}
	queue_jobs_free(v, n);
	printf("applied the changes of %zu done job%s", applied,
	    applied == 1 ? "" : "s");
	if (left > 0)
		printf("; %zu left to review (`warren queue show JOB`, `warren "
		    "diff RUN`)", left);
	printf("\n");
	return ex;
}

int
cmd_queue_apply(int argc, char **argv)
{
	struct cmd_queue_opts	 o;
	struct queue		*q;
	struct store		*st = NULL;
	struct queue_job	 j;
	struct queue_attempt	*a;
	size_t			 n;
	int64_t			 id = 0;
	int			 rc, ex = WARREN_EXIT_OK;

	if ((rc = cmd_queue_parse(argc, argv, CMD_QUEUE_O_APPLY, &o)) != 0)
		return rc == 1 ? WARREN_EXIT_OK : WARREN_EXIT_USAGE;
	if (o.all_done != (optind == argc) || argc - optind > 1) {
		cmd_queue_error(argv[0], "give one JOB or --all-done");
		return WARREN_EXIT_USAGE;
	}
	if (!o.all_done && cmd_queue_job_arg(argv[0], argv[optind], &id) == -1)
		return WARREN_EXIT_USAGE;
	if ((q = cmd_queue_open(argv[0], o.url, &ex)) == NULL)
		return ex;
	if ((st = cmd_queue_apply_store(&o, &ex)) == NULL)
		goto out;
	if (o.all_done)
		ex = cmd_queue_apply_all(q, st, o.sensitive ?
		    COW_APPLY_SENSITIVE : 0);
	else if (queue_get(q, id, &j, &a, &n) == -1)
		ex = cmd_queue_fail(q, argv[0]);
	else {
		ex = cmd_queue_apply_job(st, &j, o.sensitive ?
		    COW_APPLY_SENSITIVE : 0);
		queue_job_free(&j);
		queue_attempts_free(a, n);
	}
out:
	store_close(st);
	queue_close(q);
	return ex;
}

/*
 * warren queue cancel JOB | retry JOB|--dead | purge: steering jobs. A
 * running job is not cancelled here but asked to be: the worker holding
 * its lease hears it at its next heartbeat and stops the run.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli/cmd.h"
#include "cli/cmd_queue.h"
#include "common/exitcode.h"

static int
cmd_queue_cancel_job(struct queue *q, int64_t id)
{
	struct queue_job	 j;
	struct queue_attempt	*a;
	size_t			 n;
	int			 rc;

	if (queue_get(q, id, &j, &a, &n) == -1)
		return cmd_queue_fail(q, "cancel");
	queue_attempts_free(a, n);
	if ((rc = queue_cancel(q, id)) == -1)
		rc = cmd_queue_fail(q, "cancel");
	else if (rc == 1) {
		cmd_queue_error("cancel", "job %lld is %s: there is nothing to "
		    "cancel", (long long)id, queue_status_name(j.status));
		rc = WARREN_EXIT_USAGE;
	} else if (j.status == QUEUE_RUNNING)
		printf("job %lld is running: cancel asked, its worker stops it "
		    "at its next heartbeat\n", (long long)id);
	else
		printf("cancelled job %lld\n", (long long)id);
	queue_job_free(&j);
	return rc;
}

int
cmd_queue_cancel(int argc, char **argv)
{
	struct cmd_queue_opts	 o;
	struct queue		*q;
	int64_t			 id;
	int			 rc, ex = WARREN_EXIT_OK;

	if ((rc = cmd_queue_parse(argc, argv, 0, &o)) != 0)
		return rc == 1 ? WARREN_EXIT_OK : WARREN_EXIT_USAGE;
	if (cmd_queue_one_job(argc, argv, &id) == -1)
		return WARREN_EXIT_USAGE;
	if ((q = cmd_queue_open(argv[0], o.url, &ex)) == NULL)
		return ex;
	ex = cmd_queue_cancel_job(q, id);
	queue_close(q);
	return ex;
}

static int
cmd_queue_retry_job(struct queue *q, int64_t id)
{
	struct queue_job	 j;
	struct queue_attempt	*a;
	size_t			 n;
	int			 rc;

	if ((rc = queue_retry(q, id)) == 0) {
		printf("job %lld is queued again, its attempts counted "
		    "afresh\n", (long long)id);
		return WARREN_EXIT_OK;
	}
	if (rc == -1 || queue_get(q, id, &j, &a, &n) == -1)
		return cmd_queue_fail(q, "retry");
	cmd_queue_error("retry", "job %lld is %s: only a dead or cancelled job "
	    "is retried", (long long)id, queue_status_name(j.status));
	queue_job_free(&j);
	queue_attempts_free(a, n);
	return WARREN_EXIT_USAGE;
}

int
cmd_queue_retry(int argc, char **argv)
{
	struct cmd_queue_opts	 o;
	struct queue		*q;
	uint64_t		 n;
	int64_t			 id = 0;
	int			 rc, ex = WARREN_EXIT_OK, dead;

	if ((rc = cmd_queue_parse(argc, argv, CMD_QUEUE_O_PURGE, &o)) != 0)
		return rc == 1 ? WARREN_EXIT_OK : WARREN_EXIT_USAGE;
	dead = o.mask == 1u << QUEUE_DEAD && !o.has_older;
	if ((o.mask != 0 || o.has_older) && !dead) {
		cmd_queue_error(argv[0], "retry takes JOB or --dead only");
		return WARREN_EXIT_USAGE;
	}
	if (dead && optind != argc) {
		cmd_queue_error(argv[0], "give JOB or --dead, not both");
		return WARREN_EXIT_USAGE;
	}
	if (!dead && cmd_queue_one_job(argc, argv, &id) == -1)
		return WARREN_EXIT_USAGE;
	if ((q = cmd_queue_open(argv[0], o.url, &ex)) == NULL)
		return ex;
	if (!dead)
		ex = cmd_queue_retry_job(q, id);
	else if (queue_retry_dead(q, &n) == -1)
		ex = cmd_queue_fail(q, argv[0]);
	else
		printf("%llu dead job%s queued again\n", (unsigned long long)n,
		    n == 1 ? "" : "s");
	queue_close(q);
	return ex;
}

int
cmd_queue_purge(int argc, char **argv)
{
	struct cmd_queue_opts	 o;
	struct queue		*q;
	uint64_t		 n;
	int64_t			 before;
	int			 rc, ex = WARREN_EXIT_OK;

	if ((rc = cmd_queue_parse(argc, argv, CMD_QUEUE_O_PURGE, &o)) != 0)
		return rc == 1 ? WARREN_EXIT_OK : WARREN_EXIT_USAGE;
	if (o.mask == 0 || optind != argc) {
		cmd_queue_error(argv[0], "give which finished jobs to remove: "
		    "--done, --dead, --cancelled (and --older-than D to keep "
		    "the recent ones)");
		return WARREN_EXIT_USAGE;
	}
	if ((q = cmd_queue_open(argv[0], o.url, &ex)) == NULL)
		return ex;
	before = queue_now(q) - (int64_t)o.older_ms;
	if (queue_purge(q, o.mask, before, &n) == -1)
		ex = cmd_queue_fail(q, argv[0]);
	else
		printf("purged %llu job%s\n", (unsigned long long)n,
		    n == 1 ? "" : "s");
	queue_close(q);
	return ex;
}

/*
 * What `queue cancel/retry/purge/ls/show` do on SQLite: the user's side
 * of the queue, beside the workers' leases (queue_sqlite_lease.c).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "queue/queue_sqlite_int.h"

static sqlite3 *
qs_db(struct queue *q)
{
	return ((struct queue_sqlite *)q->be)->db;
}

/* A job's status and lease: 1 found, 0 none, -1 error (the write lock
 * held since begin keeps it). */
int
qs_job_status(struct queue *q, int64_t job, enum queue_status *st,
    int64_t *lease_until, int *attempts)
{
	sqlite3_stmt	*s;
	int		 rc;

	if ((s = qs_stmt(q, QS_STATUS)) == NULL)
		return -1;
	sqlite3_bind_int64(s, 1, job);
	if ((rc = sqlite3_step(s)) == SQLITE_ROW) {
		if (queue_status_parse((const char *)sqlite3_column_text(s, 0),
		    st) == -1)
			*st = QUEUE_DEAD;
		*lease_until = sqlite3_column_int64(s, 1);
		*attempts = sqlite3_column_int(s, 2);
	}
	sqlite3_reset(s);
	if (rc != SQLITE_ROW && rc != SQLITE_DONE)
		return qs_dberr(q, "reading job %lld", (long long)job);
	return rc == SQLITE_ROW;
}

int
qs_cancel_ask(struct queue *q, int64_t job)
{
	sqlite3_stmt	*s;

	if ((s = qs_stmt(q, QS_CANCEL_ASK)) == NULL)
		return -1;
	sqlite3_bind_int64(s, 1, job);
	return qs_run(q, QS_CANCEL_ASK, "asking for a cancel");
}

int
qs_cancel_now(struct queue *q, int64_t job, int64_t now)
{
	sqlite3_stmt	*s;

	if ((s = qs_stmt(q, QS_CANCEL_NOW)) == NULL)
		return -1;
	sqlite3_bind_int64(s, 1, job);
	sqlite3_bind_int64(s, 2, now);
	return qs_run(q, QS_CANCEL_NOW, "cancelling a job");
}

int
qs_requeue(struct queue *q, int64_t job, int64_t now, int64_t *rows)
{
	enum qs_stmt_id	 id = job > 0 ? QS_RETRY : QS_RETRY_DEAD;
	sqlite3_stmt	*s;

	if ((s = qs_stmt(q, id)) == NULL)
		return -1;
	sqlite3_bind_int64(s, 1, now);
	if (job > 0)
		sqlite3_bind_int64(s, 2, job);
	if (qs_run(q, id, "queueing again") == -1)
		return -1;
	*rows = sqlite3_changes(qs_db(q));
	return 0;
}

/* Bind the statuses of mask to ?1..?3 (NULL matches nothing). */
static void
qs_bind_mask(sqlite3_stmt *s, unsigned mask, int64_t before_ms)
{
	static const enum queue_status	ends[] = {
		QUEUE_DONE, QUEUE_DEAD, QUEUE_CANCELLED,
	};
	int				i;

	for (i = 0; i < 3; i++)
		qs_bind_text(s, i + 1, (mask & (1u << ends[i])) ?
		    qs_status(ends[i]) : NULL);
	sqlite3_bind_int64(s, 4, before_ms);
}

int
qs_purge_rows(struct queue *q, unsigned mask, int64_t before_ms,
    uint64_t *n)
{
	sqlite3_stmt	*s;

	if ((s = qs_stmt(q, QS_PURGE_ATTEMPTS)) == NULL)
		return -1;
	qs_bind_mask(s, mask, before_ms);
	if (qs_run(q, QS_PURGE_ATTEMPTS, "removing attempts") == -1)
		return -1;
	if ((s = qs_stmt(q, QS_PURGE_JOBS)) == NULL)
		return -1;
	qs_bind_mask(s, mask, before_ms);
	if (qs_run(q, QS_PURGE_JOBS, "removing jobs") == -1)
		return -1;
	*n = (uint64_t)sqlite3_changes(qs_db(q));
	return 0;
}

int
qs_list(struct queue *q, int status, unsigned limit, struct queue_job **v,
    size_t *n)
{
	struct queue_job	*nv;
	sqlite3_stmt		*s;
	size_t			 cap = 0;
	int			 rc;

	if ((s = qs_stmt(q, limit > 0 ? QS_LIST_NEWEST : QS_LIST)) == NULL)
		return -1;
	qs_bind_text(s, 1, status >= 0 ?
	    qs_status((enum queue_status)status) : NULL);
	if (limit > 0)
		sqlite3_bind_int64(s, 2, (sqlite3_int64)limit);
	while ((rc = sqlite3_step(s)) == SQLITE_ROW) {
		if (*n == cap) {
			cap = cap ? cap * 2 : 16;
			if ((nv = reallocarray(*v, cap, sizeof(**v))) == NULL)
				goto nomem;
			*v = nv;
		}
		if (qs_job_row(s, &(*v)[*n]) == -1)
			goto nomem;
		(*n)++;
	}
	sqlite3_reset(s);
	if (rc != SQLITE_DONE) {
		qs_dberr(q, "listing jobs");
		goto fail;
	}
	return 0;
nomem:
	sqlite3_reset(s);
	queue_seterr(q, "listing jobs: out of memory after %zu", *n);
fail:
	queue_jobs_free(*v, *n);
	*v = NULL;
	*n = 0;
	return -1;
}

static int
qs_attempt_row(sqlite3_stmt *s, struct queue_attempt *a)
{
	const unsigned char	*t;

	memset(a, 0, sizeof(*a));
	a->n = sqlite3_column_int(s, 0);
	a->started_ms = sqlite3_column_int64(s, 2);
	a->ended_ms = sqlite3_column_int64(s, 3);
	a->run_id = sqlite3_column_int64(s, 6);
	if ((t = sqlite3_column_text(s, 1)) != NULL &&
	    (a->worker = strdup((const char *)t)) == NULL)
		return -1;
	if ((t = sqlite3_column_text(s, 4)) != NULL &&
	    (a->outcome = strdup((const char *)t)) == NULL)
		return -1;
	if ((t = sqlite3_column_text(s, 5)) != NULL &&
	    (a->error = strdup((const char *)t)) == NULL)
		return -1;
	return 0;
}

static int
qs_attempts(struct queue *q, int64_t job, struct queue_attempt **v,
    size_t *n)
{
	struct queue_attempt	*nv;
	sqlite3_stmt		*s;
	size_t			 cap = 0;
	int			 rc;

	if ((s = qs_stmt(q, QS_ATTEMPTS)) == NULL)
		return -1;
	sqlite3_bind_int64(s, 1, job);
	while ((rc = sqlite3_step(s)) == SQLITE_ROW) {
		if (*n == cap) {
			cap = cap ? cap * 2 : 8;
			if ((nv = reallocarray(*v, cap, sizeof(**v))) == NULL)
				break;
			*v = nv;
		}
		memset(&(*v)[*n], 0, sizeof(**v));
		(*n)++;
		if (qs_attempt_row(s, &(*v)[*n - 1]) == -1)
			break;
	}
	sqlite3_reset(s);
	if (rc == SQLITE_ROW)
		return queue_seterr(q, "job %lld: attempts: out of memory",
		    (long long)job);
	if (rc != SQLITE_DONE)
		return qs_dberr(q, "reading the attempts of job %lld",
		    (long long)job);
	return 0;
}

/* The job and its attempts read in one snapshot. */
int
qs_get(struct queue *q, int64_t id, struct queue_job *j,
    struct queue_attempt **v, size_t *n)
{
	int	rc;

	if (qs_stmt(q, QS_READ_BEGIN) == NULL ||
	    qs_run(q, QS_READ_BEGIN, "reading a job") == -1)
		return -1;
	rc = qs_job_read(q, id, j);
	if (rc == 0 && v != NULL && qs_attempts(q, id, v, n) == -1) {
		queue_job_free(j);
		queue_attempts_free(*v, *n);
		*v = NULL;
		*n = 0;
		rc = -1;
	}
	qs_rollback(q);
	return rc;
}

int
qs_counts(struct queue *q, struct queue_counts *c)
{
	enum queue_status	 st;
	sqlite3_stmt		*s;
	int			 rc;

	if ((s = qs_stmt(q, QS_COUNTS)) == NULL)
		return -1;
	while ((rc = sqlite3_step(s)) == SQLITE_ROW)
		if (queue_status_parse((const char *)sqlite3_column_text(s, 0),
		    &st) == 0)
			c->n[st] = (uint64_t)sqlite3_column_int64(s, 1);
	sqlite3_reset(s);
	if (rc != SQLITE_DONE)
		return qs_dberr(q, "counting jobs");
	return 0;
}

/* The figures of one row of QS_STATS (NULL, as min() of nothing: 0). */
static int
qs_stats_read(struct queue *q, int64_t since, struct queue_stats *st)
{
	sqlite3_stmt	*s;
	int		 rc;

	if ((s = qs_stmt(q, QS_STATS)) == NULL)
		return -1;
	sqlite3_bind_int64(s, 1, since);
	if ((rc = sqlite3_step(s)) == SQLITE_ROW) {
		st->attempts = (uint64_t)sqlite3_column_int64(s, 0);
		st->attempts_failed = (uint64_t)sqlite3_column_int64(s, 1);
		st->done_recent = (uint64_t)sqlite3_column_int64(s, 2);
		st->first_active_ms = sqlite3_column_int64(s, 3);
		st->oldest_queued = sqlite3_column_int64(s, 4);
		st->oldest_queued_ms = sqlite3_column_int64(s, 5);
	}
	sqlite3_reset(s);
	if (rc != SQLITE_ROW)
		return qs_dberr(q, "reading the queue's figures");
	return 0;
}

/* The counts and the figures in one snapshot. */
int
qs_stats(struct queue *q, uint64_t window_ms, struct queue_stats *st)
{
	int	rc;

	if (qs_stmt(q, QS_READ_BEGIN) == NULL ||
	    qs_run(q, QS_READ_BEGIN, "reading the queue's figures") == -1)
		return -1;
	st->now_ms = queue_now(q);
	rc = qs_counts(q, &st->counts);
	if (rc == 0)
		rc = qs_stats_read(q, st->now_ms - (int64_t)window_ms, st);
	qs_rollback(q);
	return rc;
}

/*
 * Leases on SQLite: the primitives queue_lease.c's algorithm runs on
 * (queue_int.h, struct queue_ops). Every lease call runs in BEGIN
 * IMMEDIATE (qs_begin): the one write lock serializes claims, so a
 * claim's reads need no lock of their own and max_running needs no other
 * (running_lock is NULL). The time is queue_now(), read after the lock.
 */
#include <stdio.h>
#include <string.h>

#include "queue/queue_sqlite_int.h"

int
qs_now(struct queue *q, int64_t *now)
{
	*now = queue_now(q);
	return 0;
}

int
qs_running(struct queue *q, int64_t now, int64_t *n)
{
	sqlite3_stmt	*s;
	int		 rc;

	if ((s = qs_stmt(q, QS_RUNNING_COUNT)) == NULL)
		return -1;
	sqlite3_bind_int64(s, 1, now);
	rc = sqlite3_step(s);
	*n = sqlite3_column_int64(s, 0);
	sqlite3_reset(s);
	if (rc != SQLITE_ROW)
		return qs_dberr(q, "counting running jobs");
	return 0;
}

int
qs_next(struct queue *q, int64_t now, struct queue_cand *c)
{
	sqlite3_stmt		*s;
	const unsigned char	*w;
	int			 rc;

	if ((s = qs_stmt(q, QS_NEXT)) == NULL)
		return -1;
	sqlite3_bind_int64(s, 1, now);
	if ((rc = sqlite3_step(s)) == SQLITE_ROW) {
		c->id = sqlite3_column_int64(s, 0);
		if (queue_status_parse((const char *)sqlite3_column_text(s, 1),
		    &c->status) == -1)
			c->status = QUEUE_QUEUED;
		c->attempts = sqlite3_column_int(s, 2);
		c->max_attempts = sqlite3_column_int(s, 3);
		c->cancel_asked = sqlite3_column_int(s, 4);
		w = sqlite3_column_text(s, 5);
		snprintf(c->worker, sizeof(c->worker), "%s",
		    w != NULL ? (const char *)w : "?");
		c->lease_until_ms = sqlite3_column_int64(s, 6);
	}
	sqlite3_reset(s);
	if (rc != SQLITE_ROW && rc != SQLITE_DONE)
		return qs_dberr(q, "finding the next job");
	return rc == SQLITE_ROW;
}

int
qs_expire(struct queue *q, const struct queue_cand *c, int64_t now,
    const char *why, enum queue_status end)
{
	sqlite3_stmt	*s;

	if ((s = qs_stmt(q, QS_ATTEMPT_EXPIRE)) == NULL)
		return -1;
	sqlite3_bind_int64(s, 1, c->id);
	sqlite3_bind_int(s, 2, c->attempts);
	sqlite3_bind_int64(s, 3, now);
	qs_bind_text(s, 4, why);
	if (qs_run(q, QS_ATTEMPT_EXPIRE, "closing an expired attempt") == -1)
		return -1;
	if (end == QUEUE_RUNNING)
		return 0;
	if ((s = qs_stmt(q, QS_JOB_EXPIRED_END)) == NULL)
		return -1;
	sqlite3_bind_int64(s, 1, c->id);
	qs_bind_text(s, 2, qs_status(end));
	sqlite3_bind_int64(s, 3, now);
	qs_bind_text(s, 4, why);
	return qs_run(q, QS_JOB_EXPIRED_END, "ending an expired job");
}

int
qs_take(struct queue *q, const struct queue_cand *c, const char *worker,
    int64_t now, int64_t lease_until)
{
	sqlite3_stmt	*s;

	if ((s = qs_stmt(q, QS_TAKE)) == NULL)
		return -1;
	sqlite3_bind_int64(s, 1, c->id);
	qs_bind_text(s, 2, worker);
	sqlite3_bind_int64(s, 3, lease_until);
	if (qs_run(q, QS_TAKE, "leasing a job") == -1)
		return -1;
	if ((s = qs_stmt(q, QS_ATTEMPT_START)) == NULL)
		return -1;
	sqlite3_bind_int64(s, 1, c->id);
	sqlite3_bind_int(s, 2, c->attempts + 1);
	qs_bind_text(s, 3, worker);
	sqlite3_bind_int64(s, 4, now);
	return qs_run(q, QS_ATTEMPT_START, "recording an attempt");
}

int
qs_extend(struct queue *q, int64_t job, int attempt, const char *worker,
    int64_t lease_until, int *cancel_asked)
{
	sqlite3_stmt	*s;
	int		 rc;

	if ((s = qs_stmt(q, QS_HEARTBEAT)) == NULL)
		return -1;
	sqlite3_bind_int64(s, 1, job);
	sqlite3_bind_int(s, 2, attempt);
	qs_bind_text(s, 3, worker);
	sqlite3_bind_int64(s, 4, lease_until);
	if ((rc = sqlite3_step(s)) == SQLITE_ROW) {
		*cancel_asked = sqlite3_column_int(s, 0);
		rc = sqlite3_step(s);
	}
	sqlite3_reset(s);
	if (rc != SQLITE_DONE)
		return qs_dberr(q, "extending the lease of job %lld",
		    (long long)job);
	return sqlite3_changes(((struct queue_sqlite *)q->be)->db) > 0;
}

int
qs_holder(struct queue *q, int64_t job, int attempt, const char *worker,
    int *max_attempts, int *cancel_asked)
{
	sqlite3_stmt	*s;
	int		 rc;

	if ((s = qs_stmt(q, QS_HOLDER)) == NULL)
		return -1;
	sqlite3_bind_int64(s, 1, job);
	sqlite3_bind_int(s, 2, attempt);
	qs_bind_text(s, 3, worker);
	if ((rc = sqlite3_step(s)) == SQLITE_ROW) {
		*max_attempts = sqlite3_column_int(s, 0);
		*cancel_asked = sqlite3_column_int(s, 1);
	}
	sqlite3_reset(s);
	if (rc != SQLITE_ROW && rc != SQLITE_DONE)
		return qs_dberr(q, "checking the lease of job %lld",
		    (long long)job);
	return rc == SQLITE_ROW;
}

int
qs_result_set(struct queue *q, int64_t job, enum queue_status st,
    int64_t run_at, int64_t finished, const struct queue_result *r)
{
	sqlite3_stmt	*s;

	if ((s = qs_stmt(q, QS_RESULT_SET)) == NULL)
		return -1;
	sqlite3_bind_int64(s, 1, job);
	qs_bind_text(s, 2, qs_status(st));
	if (run_at >= 0)
		sqlite3_bind_int64(s, 3, run_at);
	sqlite3_bind_int64(s, 4, finished);
	qs_bind_text(s, 5, r->answer);
	qs_bind_text(s, 6, r->output);
	qs_bind_text(s, 7, r->error);
	qs_bind_text(s, 8, r->diff_stat);
	sqlite3_bind_int64(s, 9, r->run_id);
	sqlite3_bind_int64(s, 10, (int64_t)r->tokens_in);
	sqlite3_bind_int64(s, 11, (int64_t)r->tokens_out);
	sqlite3_bind_int64(s, 12, r->wall_ms);
	if (r->changes != NULL)
		sqlite3_bind_blob64(s, 13, r->changes, r->changes_len,
		    SQLITE_STATIC);
	else
		sqlite3_bind_null(s, 13);
	qs_bind_text(s, 14, r->run_where);
	return qs_run(q, QS_RESULT_SET, st == QUEUE_DONE ?
	    "recording a result" : "recording a failure");
}

int
qs_attempt_end(struct queue *q, int64_t job, int attempt, int64_t now,
    const char *outcome, const char *error, int64_t run_id)
{
	sqlite3_stmt	*s;

	if ((s = qs_stmt(q, QS_ATTEMPT_END)) == NULL)
		return -1;
	sqlite3_bind_int64(s, 1, job);
	sqlite3_bind_int(s, 2, attempt);
	sqlite3_bind_int64(s, 3, now);
	qs_bind_text(s, 4, outcome);
	qs_bind_text(s, 5, error);
	sqlite3_bind_int64(s, 6, run_id);
	return qs_run(q, QS_ATTEMPT_END, "ending an attempt");
}

/*
 * Leases on SQLite: claim, heartbeat, complete, fail. A lease is the
 * pair (worker, attempt number) written on the job when it is claimed;
 * complete and fail change the job only while that pair is still on it
 * and the job still runs, in the same statement that checks it, so a
 * worker whose lease expired and was taken can no longer record anything
 * ("recorded once", queue.h).
 */
#include <stdio.h>
#include <string.h>

#include "queue/queue_sqlite_int.h"

/* What a claim learns of its candidate. */
struct qs_cand {
	int64_t			 id;
	enum queue_status	 status;
	int			 attempts, max_attempts, cancel_asked;
	char			 worker[128];
	int64_t			 lease_until_ms;
};

/* Jobs running on a live lease, across every worker. */
static int
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

/* The next claimable job: 1 found, 0 none, -1 error. */
static int
qs_next(struct queue *q, int64_t now, struct qs_cand *c)
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

/*
 * The candidate's lease expired (its worker died or stalled): its attempt
 * ends "lease expired" and counts. A job with no attempt left ends dead,
 * one with a cancel asked ends cancelled; 1 if it ended, 0 if it may run
 * again.
 */
static int
qs_expire(struct queue *q, int64_t now, const struct qs_cand *c)
{
	sqlite3_stmt	*s;
	char		 why[256];
	const char	*end = NULL;

	snprintf(why, sizeof(why), "lease expired: worker %s held it until "
	    "%lld and did not finish", c->worker,
	    (long long)c->lease_until_ms);
	if ((s = qs_stmt(q, QS_ATTEMPT_EXPIRE)) == NULL)
		return -1;
	sqlite3_bind_int64(s, 1, c->id);
	sqlite3_bind_int(s, 2, c->attempts);
	sqlite3_bind_int64(s, 3, now);
	qs_bind_text(s, 4, why);
	if (qs_run(q, QS_ATTEMPT_EXPIRE, "closing an expired attempt") == -1)
		return -1;
	if (c->cancel_asked)
		end = qs_status(QUEUE_CANCELLED);
	else if (c->attempts >= c->max_attempts)
		end = qs_status(QUEUE_DEAD);
	if (end == NULL)
		return 0;
	if ((s = qs_stmt(q, QS_JOB_EXPIRED_END)) == NULL)
		return -1;
	sqlite3_bind_int64(s, 1, c->id);
	qs_bind_text(s, 2, end);
	sqlite3_bind_int64(s, 3, now);
	qs_bind_text(s, 4, why);
	if (qs_run(q, QS_JOB_EXPIRED_END, "ending an expired job") == -1)
		return -1;
	return 1;
}

/* Lease the candidate to worker: its next attempt starts. */
static int
qs_take(struct queue *q, int64_t now, const struct qs_cand *c,
    const char *worker, uint64_t lease_ms)
{
	sqlite3_stmt	*s;

	if ((s = qs_stmt(q, QS_TAKE)) == NULL)
		return -1;
	sqlite3_bind_int64(s, 1, c->id);
	qs_bind_text(s, 2, worker);
	sqlite3_bind_int64(s, 3, now + (int64_t)lease_ms);
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

/* Under the write lock: 1 claimed into out, 0 nothing, -1 error. */
static int
qs_claim_locked(struct queue *q, const char *worker, uint64_t lease_ms,
    unsigned max_running, struct queue_job *out)
{
	struct qs_cand	c;
	int64_t		now = queue_now(q), running;
	int		rc;

	if (max_running > 0) {
		if (qs_running(q, now, &running) == -1)
			return -1;
		if (running >= (int64_t)max_running)
			return 0;
	}
	for (;;) {
		memset(&c, 0, sizeof(c));
		if ((rc = qs_next(q, now, &c)) <= 0)
			return rc;
		if (c.status != QUEUE_RUNNING)
			break;
		if ((rc = qs_expire(q, now, &c)) == -1)
			return -1;
		if (rc == 0)
			break;
	}
	if (qs_take(q, now, &c, worker, lease_ms) == -1 ||
	    qs_job_read(q, c.id, out) == -1)
		return -1;
	return 1;
}

int
qs_claim(struct queue *q, const char *worker, uint64_t lease_ms,
    unsigned max_running, struct queue_job *out)
{
	int	rc;

	if (qs_begin(q) == -1)
		return -1;
	rc = qs_claim_locked(q, worker, lease_ms, max_running, out);
	if (rc == -1) {
		qs_rollback(q);
		queue_job_free(out);
		return -1;
	}
	if (qs_commit(q) == -1) {
		queue_job_free(out);
		return -1;
	}
	return rc;
}

int
qs_heartbeat(struct queue *q, int64_t job, int attempt, const char *worker,
    uint64_t lease_ms)
{
	sqlite3_stmt	*s;
	int		 rc, asked = 0;

	if ((s = qs_stmt(q, QS_HEARTBEAT)) == NULL)
		return -1;
	sqlite3_bind_int64(s, 1, job);
	sqlite3_bind_int(s, 2, attempt);
	qs_bind_text(s, 3, worker);
	sqlite3_bind_int64(s, 4, queue_now(q) + (int64_t)lease_ms);
	if ((rc = sqlite3_step(s)) == SQLITE_ROW) {
		asked = sqlite3_column_int(s, 0);
		rc = sqlite3_step(s);
	}
	sqlite3_reset(s);
	if (rc != SQLITE_DONE)
		return qs_dberr(q, "extending the lease of job %lld",
		    (long long)job);
	if (sqlite3_changes(((struct queue_sqlite *)q->be)->db) == 0)
		return 1;
	return asked ? 2 : 0;
}

/* The attempt's row ends with outcome and error. */
static int
qs_attempt_end(struct queue *q, int64_t job, int attempt, int64_t now,
    const char *outcome, const struct queue_result *r)
{
	sqlite3_stmt	*s;

	if ((s = qs_stmt(q, QS_ATTEMPT_END)) == NULL)
		return -1;
	sqlite3_bind_int64(s, 1, job);
	sqlite3_bind_int(s, 2, attempt);
	sqlite3_bind_int64(s, 3, now);
	qs_bind_text(s, 4, outcome);
	qs_bind_text(s, 5, r->error);
	sqlite3_bind_int64(s, 6, r->run_id);
	return qs_run(q, QS_ATTEMPT_END, "ending an attempt");
}

/* Under the write lock: 0 recorded, 1 refused, -1 error. */
static int
qs_complete_locked(struct queue *q, int64_t job, int attempt,
    const char *worker, const struct queue_result *r)
{
	sqlite3_stmt	*s;
	int64_t		 now = queue_now(q);

	if ((s = qs_stmt(q, QS_COMPLETE)) == NULL)
		return -1;
	sqlite3_bind_int64(s, 1, job);
	sqlite3_bind_int(s, 2, attempt);
	qs_bind_text(s, 3, worker);
	sqlite3_bind_int64(s, 4, now);
	qs_bind_text(s, 5, r->answer);
	qs_bind_text(s, 6, r->output);
	qs_bind_text(s, 7, r->diff_stat);
	sqlite3_bind_int64(s, 8, r->run_id);
	sqlite3_bind_int64(s, 9, (int64_t)r->tokens_in);
	sqlite3_bind_int64(s, 10, (int64_t)r->tokens_out);
	sqlite3_bind_int64(s, 11, r->wall_ms);
	if (r->changes != NULL)
		sqlite3_bind_blob64(s, 12, r->changes, r->changes_len,
		    SQLITE_STATIC);
	else
		sqlite3_bind_null(s, 12);
	qs_bind_text(s, 13, r->run_where);
	if (qs_run(q, QS_COMPLETE, "recording a result") == -1)
		return -1;
	if (sqlite3_changes(((struct queue_sqlite *)q->be)->db) == 0)
		return 1;
	return qs_attempt_end(q, job, attempt, now, "done", r);
}

int
qs_complete(struct queue *q, int64_t job, int attempt, const char *worker,
    const struct queue_result *r)
{
	int	rc;

	if (qs_begin(q) == -1)
		return -1;
	if ((rc = qs_complete_locked(q, job, attempt, worker, r)) != 0) {
		qs_rollback(q);
		return rc;
	}
	return qs_commit(q);
}

/* Does worker hold attempt of job? 1 with its limits, 0 no, -1 error. */
static int
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

/*
 * Where a failed attempt leaves its job: cancelled when it was stopped
 * for a cancel or a cancel was asked meanwhile (the user does not want it
 * run again), dead when it may not be retried or has no attempt left,
 * else retrying after the backoff.
 */
static enum queue_status
qs_fail_status(int attempt, int max_attempts, int cancel_asked,
    unsigned flags)
{
	if ((flags & QUEUE_FAIL_CANCELLED) || cancel_asked)
		return QUEUE_CANCELLED;
	if ((flags & QUEUE_FAIL_FINAL) || attempt >= max_attempts)
		return QUEUE_DEAD;
	return QUEUE_RETRYING;
}

static int
qs_fail_locked(struct queue *q, int64_t job, int attempt, const char *worker,
    const struct queue_result *r, unsigned flags)
{
	enum queue_status	 st;
	sqlite3_stmt		*s;
	int64_t			 now = queue_now(q);
	int			 rc, max_attempts = 0, asked = 0;

	if ((rc = qs_holder(q, job, attempt, worker, &max_attempts, &asked))
	    != 1)
		return rc == 0 ? 1 : -1;
	st = qs_fail_status(attempt, max_attempts, asked, flags);
	if ((s = qs_stmt(q, QS_FAIL)) == NULL)
		return -1;
	sqlite3_bind_int64(s, 1, job);
	qs_bind_text(s, 2, qs_status(st));
	sqlite3_bind_int64(s, 3, st == QUEUE_RETRYING ? now +
	    (int64_t)queue_backoff_ms(attempt + 1, queue_jitter(q)) : now);
	sqlite3_bind_int64(s, 4, st == QUEUE_RETRYING ? 0 : now);
	qs_bind_text(s, 5, r->answer);
	qs_bind_text(s, 6, r->output);
	qs_bind_text(s, 7, r->error);
	qs_bind_text(s, 8, r->diff_stat);
	sqlite3_bind_int64(s, 9, r->run_id);
	sqlite3_bind_int64(s, 10, (int64_t)r->tokens_in);
	sqlite3_bind_int64(s, 11, (int64_t)r->tokens_out);
	sqlite3_bind_int64(s, 12, r->wall_ms);
	qs_bind_text(s, 13, r->run_where);
	if (qs_run(q, QS_FAIL, "recording a failure") == -1)
		return -1;
	return qs_attempt_end(q, job, attempt, now, st == QUEUE_CANCELLED &&
	    (flags & QUEUE_FAIL_CANCELLED) ? "cancelled" : "failed", r);
}

int
qs_fail(struct queue *q, int64_t job, int attempt, const char *worker,
    const struct queue_result *r, unsigned flags)
{
	int	rc;

	if (qs_begin(q) == -1)
		return -1;
	if ((rc = qs_fail_locked(q, job, attempt, worker, r, flags)) != 0) {
		qs_rollback(q);
		return rc;
	}
	return qs_commit(q);
}

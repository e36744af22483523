/*
 * Leases on PostgreSQL: claim, heartbeat, complete, fail, as
 * queue_sqlite_lease.c has them. A claim locks its candidate row with
 * FOR UPDATE SKIP LOCKED: claims on other machines pass over it to the
 * next job instead of waiting. complete and fail lock the job's row and
 * check the lease (worker, attempt) in the statement that writes, so a
 * worker whose lease was taken records nothing.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "queue/queue_pg_int.h"

/* The advisory lock claims with max_running take ("warren m"). */
#define QP_LOCK_RUNNING	"8603505752355022189"

struct qp_cand {
	int64_t			 id;
	enum queue_status	 status;
	int			 attempts, max_attempts, cancel_asked;
	char			 worker[128];
	int64_t			 lease_until_ms;
};

static int
qp_running(struct queue *q, int64_t now, int64_t *n)
{
	struct qp_params	 p = { .n = 0 };
	PGresult		*r;

	qp_i64(&p, now);
	if ((r = qp_exec(q, "SELECT count(*) FROM queue_jobs WHERE status ="
	    " 'running' AND lease_until_ms > $1", &p, "counting running jobs"))
	    == NULL)
		return -1;
	*n = qp_int(r, 0, 0);
	PQclear(r);
	return 0;
}

/* The next claimable job, locked: 1 found, 0 none, -1 error. */
static int
qp_next(struct queue *q, int64_t now, struct qp_cand *c)
{
	struct qp_params	 p = { .n = 0 };
	PGresult		*r;

	qp_i64(&p, now);
	if ((r = qp_exec(q, "SELECT id, status, attempts, max_attempts,"
	    " cancel_asked, worker, lease_until_ms FROM queue_jobs"
	    " WHERE status IN ('queued', 'retrying', 'running')"
	    " AND ((status <> 'running' AND run_at_ms <= $1) OR"
	    " (status = 'running' AND lease_until_ms <= $1))"
	    " ORDER BY priority DESC, run_at_ms, id LIMIT 1"
	    " FOR UPDATE SKIP LOCKED", &p, "finding the next job")) == NULL)
		return -1;
	if (PQntuples(r) == 0) {
		PQclear(r);
		return 0;
	}
	c->id = qp_int(r, 0, 0);
	if (queue_status_parse(PQgetvalue(r, 0, 1), &c->status) == -1)
		c->status = QUEUE_QUEUED;
	c->attempts = (int)qp_int(r, 0, 2);
	c->max_attempts = (int)qp_int(r, 0, 3);
	c->cancel_asked = (int)qp_int(r, 0, 4);
	snprintf(c->worker, sizeof(c->worker), "%s", PQgetisnull(r, 0, 5) ?
	    "?" : PQgetvalue(r, 0, 5));
	c->lease_until_ms = qp_int(r, 0, 6);
	PQclear(r);
	return 1;
}

/* The candidate's lease expired: its attempt ends "lease expired". 1 if
 * the job ended (dead, or cancelled), 0 if it may run again. */
static int
qp_expire(struct queue *q, int64_t now, const struct qp_cand *c)
{
	struct qp_params	 p = { .n = 0 };
	char			 why[256];
	const char		*end = NULL;

	snprintf(why, sizeof(why), "lease expired: worker %s held it until "
	    "%lld and did not finish", c->worker,
	    (long long)c->lease_until_ms);
	qp_i64(&p, c->id);
	qp_i64(&p, c->attempts);
	qp_i64(&p, now);
	qp_str(&p, why);
	if (qp_cmd(q, "UPDATE queue_attempts SET ended_ms = $3, outcome ="
	    " 'lease expired', error = $4 WHERE job = $1 AND n = $2 AND"
	    " ended_ms = 0", &p, "closing an expired attempt", NULL) == -1)
		return -1;
	if (c->cancel_asked)
		end = queue_status_name(QUEUE_CANCELLED);
	else if (c->attempts >= c->max_attempts)
		end = queue_status_name(QUEUE_DEAD);
	if (end == NULL)
		return 0;
	qp_i64(&p, c->id);
	qp_str(&p, end);
	qp_i64(&p, now);
	qp_str(&p, why);
	if (qp_cmd(q, "UPDATE queue_jobs SET status = $2, finished_ms = $3,"
	    " lease_until_ms = 0, error = $4 WHERE id = $1", &p,
	    "ending an expired job", NULL) == -1)
		return -1;
	return 1;
}

static int
qp_take(struct queue *q, int64_t now, const struct qp_cand *c,
    const char *worker, uint64_t lease_ms)
{
	struct qp_params	p = { .n = 0 };

	qp_i64(&p, c->id);
	qp_str(&p, worker);
	qp_i64(&p, now + (int64_t)lease_ms);
	if (qp_cmd(q, "UPDATE queue_jobs SET status = 'running', attempts ="
	    " attempts + 1, worker = $2, lease_until_ms = $3, cancel_asked = 0"
	    " WHERE id = $1", &p, "leasing a job", NULL) == -1)
		return -1;
	qp_i64(&p, c->id);
	qp_i64(&p, c->attempts + 1);
	qp_str(&p, worker);
	qp_i64(&p, now);
	return qp_cmd(q, "INSERT INTO queue_attempts (job, n, worker,"
	    " started_ms) VALUES ($1, $2, $3, $4)", &p, "recording an attempt",
	    NULL);
}

static int
qp_claim_locked(struct queue *q, const char *worker, uint64_t lease_ms,
    unsigned max_running, struct queue_job *out)
{
	struct qp_cand	c;
	int64_t		now, running;
	int		rc;

	if (max_running > 0 && qp_cmd(q, "SELECT pg_advisory_xact_lock("
	    QP_LOCK_RUNNING ")", NULL, "waiting for the other claims", NULL)
	    == -1)
		return -1;
	if (qp_now(q, &now) == -1)
		return -1;
	if (max_running > 0) {
		if (qp_running(q, now, &running) == -1)
			return -1;
		if (running >= (int64_t)max_running)
			return 0;
	}
	for (;;) {
		memset(&c, 0, sizeof(c));
		if ((rc = qp_next(q, now, &c)) <= 0)
			return rc;
		if (c.status != QUEUE_RUNNING)
			break;
		if ((rc = qp_expire(q, now, &c)) == -1)
			return -1;
		if (rc == 0)
			break;
	}
	if (qp_take(q, now, &c, worker, lease_ms) == -1 ||
	    qp_job_read(q, c.id, out) == -1)
		return -1;
	return 1;
}

int
qp_claim(struct queue *q, const char *worker, uint64_t lease_ms,
    unsigned max_running, struct queue_job *out)
{
	int	rc;

	if (qp_begin(q) == -1)
		return -1;
	rc = qp_claim_locked(q, worker, lease_ms, max_running, out);
	if (rc == -1) {
		qp_rollback(q);
		queue_job_free(out);
		return -1;
	}
	if (qp_commit(q) == -1) {
		queue_job_free(out);
		return -1;
	}
	return rc;
}

int
qp_heartbeat(struct queue *q, int64_t job, int attempt, const char *worker,
    uint64_t lease_ms)
{
	struct qp_params	 p = { .n = 0 };
	PGresult		*r;
	int64_t			 now;
	int			 rc;

	if (qp_ready(q) == -1 || qp_now(q, &now) == -1)
		return -1;
	qp_i64(&p, job);
	qp_i64(&p, attempt);
	qp_str(&p, worker);
	qp_i64(&p, now + (int64_t)lease_ms);
	if ((r = qp_exec(q, "UPDATE queue_jobs SET lease_until_ms = $4"
	    " WHERE id = $1 AND status = 'running' AND attempts = $2"
	    " AND worker = $3 RETURNING cancel_asked", &p,
	    "extending a lease")) == NULL)
		return -1;
	if (PQntuples(r) == 0)
		rc = 1;
	else
		rc = qp_int(r, 0, 0) ? 2 : 0;
	PQclear(r);
	return rc;
}

static int
qp_attempt_end(struct queue *q, int64_t job, int attempt, int64_t now,
    const char *outcome, const struct queue_result *res)
{
	struct qp_params	p = { .n = 0 };

	qp_i64(&p, job);
	qp_i64(&p, attempt);
	qp_i64(&p, now);
	qp_str(&p, outcome);
	qp_str(&p, res->error);
	qp_i64(&p, res->run_id);
	return qp_cmd(q, "UPDATE queue_attempts SET ended_ms = $3, outcome ="
	    " $4, error = $5, run_id = $6 WHERE job = $1 AND n = $2", &p,
	    "ending an attempt", NULL);
}

static int
qp_complete_locked(struct queue *q, int64_t job, int attempt,
    const char *worker, const struct queue_result *res)
{
	struct qp_params	p = { .n = 0 };
	int64_t			now, rows;

	if (qp_now(q, &now) == -1)
		return -1;
	qp_i64(&p, job);
	qp_i64(&p, attempt);
	qp_str(&p, worker);
	qp_i64(&p, now);
	qp_str(&p, res->answer);
	qp_str(&p, res->output);
	qp_str(&p, res->diff_stat);
	qp_i64(&p, res->run_id);
	qp_i64(&p, (int64_t)res->tokens_in);
	qp_i64(&p, (int64_t)res->tokens_out);
	qp_i64(&p, res->wall_ms);
	if (res->changes != NULL)
		qp_bin(&p, res->changes, res->changes_len);
	else
		qp_str(&p, NULL);
	qp_str(&p, res->run_where);
	if (qp_cmd(q, "UPDATE queue_jobs SET status = 'done', finished_ms ="
	    " $4, lease_until_ms = 0, answer = $5, output = $6, error = NULL,"
	    " diff_stat = $7, run_id = $8, tokens_in = $9, tokens_out = $10,"
	    " wall_ms = $11, changes = $12, run_where = $13, applied_ms = 0,"
	    " applied_by = NULL WHERE id = $1 AND status = 'running' AND attempts"
	    " = $2 AND worker = $3", &p, "recording a result", &rows) == -1)
		return -1;
	if (rows == 0)
		return 1;
	if (qp_attempt_end(q, job, attempt, now, "done", res) == -1)
		return -1;
	return qp_notify(q);
}

int
qp_complete(struct queue *q, int64_t job, int attempt, const char *worker,
    const struct queue_result *res)
{
	int	rc;

	if (qp_begin(q) == -1)
		return -1;
	if ((rc = qp_complete_locked(q, job, attempt, worker, res)) != 0) {
		qp_rollback(q);
		return rc;
	}
	return qp_commit(q);
}

/* Does worker hold attempt of job? 1 (the row locked), 0 no, -1. */
static int
qp_holder(struct queue *q, int64_t job, int attempt, const char *worker,
    int *max_attempts, int *cancel_asked)
{
	struct qp_params	 p = { .n = 0 };
	PGresult		*r;
	int			 rc;

	qp_i64(&p, job);
	qp_i64(&p, attempt);
	qp_str(&p, worker);
	if ((r = qp_exec(q, "SELECT max_attempts, cancel_asked FROM"
	    " queue_jobs WHERE id = $1 AND status = 'running' AND attempts ="
	    " $2 AND worker = $3 FOR UPDATE", &p, "checking a lease")) == NULL)
		return -1;
	if ((rc = PQntuples(r) == 1)) {
		*max_attempts = (int)qp_int(r, 0, 0);
		*cancel_asked = (int)qp_int(r, 0, 1);
	}
	PQclear(r);
	return rc;
}

static enum queue_status
qp_fail_status(int attempt, int max_attempts, int cancel_asked,
    unsigned flags)
{
	if ((flags & QUEUE_FAIL_CANCELLED) || cancel_asked)
		return QUEUE_CANCELLED;
	if ((flags & QUEUE_FAIL_FINAL) || attempt >= max_attempts)
		return QUEUE_DEAD;
	return QUEUE_RETRYING;
}

static int
qp_fail_locked(struct queue *q, int64_t job, int attempt, const char *worker,
    const struct queue_result *res, unsigned flags)
{
	enum queue_status	st;
	struct qp_params	p = { .n = 0 };
	int64_t			now;
	int			rc, max_attempts = 0, asked = 0;

	if ((rc = qp_holder(q, job, attempt, worker, &max_attempts, &asked))
	    != 1)
		return rc == 0 ? 1 : -1;
	if (qp_now(q, &now) == -1)
		return -1;
	st = qp_fail_status(attempt, max_attempts, asked, flags);
	qp_i64(&p, job);
	qp_str(&p, queue_status_name(st));
	qp_i64(&p, st == QUEUE_RETRYING ? now +
	    (int64_t)queue_backoff_ms(attempt + 1, queue_jitter(q)) : now);
	qp_i64(&p, st == QUEUE_RETRYING ? 0 : now);
	qp_str(&p, res->answer);
	qp_str(&p, res->output);
	qp_str(&p, res->error);
	qp_str(&p, res->diff_stat);
	qp_i64(&p, res->run_id);
	qp_i64(&p, (int64_t)res->tokens_in);
	qp_i64(&p, (int64_t)res->tokens_out);
	qp_i64(&p, res->wall_ms);
	qp_str(&p, res->run_where);
	if (qp_cmd(q, "UPDATE queue_jobs SET status = $2, run_at_ms = $3,"
	    " finished_ms = $4, lease_until_ms = 0, answer = $5, output = $6,"
	    " error = $7, diff_stat = $8, run_id = $9, tokens_in = $10,"
	    " tokens_out = $11, wall_ms = $12, changes = NULL, run_where = $13,"
	    " applied_ms = 0, applied_by = NULL WHERE id = $1", &p,
	    "recording a failure", NULL) == -1)
		return -1;
	if (qp_attempt_end(q, job, attempt, now, st == QUEUE_CANCELLED &&
	    (flags & QUEUE_FAIL_CANCELLED) ? "cancelled" : "failed", res) == -1)
		return -1;
	return qp_notify(q);
}

int
qp_fail(struct queue *q, int64_t job, int attempt, const char *worker,
    const struct queue_result *res, unsigned flags)
{
	int	rc;

	if (qp_begin(q) == -1)
		return -1;
	if ((rc = qp_fail_locked(q, job, attempt, worker, res, flags)) != 0) {
		qp_rollback(q);
		return rc;
	}
	return qp_commit(q);
}

/*
 * Leases on PostgreSQL: the primitives queue_lease.c's algorithm runs on
 * (queue_int.h, struct queue_ops). A claim locks its candidate row with
 * FOR UPDATE SKIP LOCKED: claims on other machines pass over it to the
 * next job instead of waiting. With max_running, claims take turns on a
 * transaction advisory lock, the count of running jobs being what they
 * share. holder locks the job's row (FOR UPDATE) before complete and
 * fail write it, so a worker whose lease was taken records nothing.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "queue/queue_pg_int.h"

/* The advisory lock claims with max_running take ("warren m"). */
#define QP_LOCK_RUNNING	"8603505752355022189"

int
qp_running_lock(struct queue *q)
{
	return qp_cmd(q, "SELECT pg_advisory_xact_lock(" QP_LOCK_RUNNING ")",
	    NULL, "waiting for the other claims", NULL);
}

int
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

int
qp_next(struct queue *q, int64_t now, struct queue_cand *c)
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

int
qp_expire(struct queue *q, const struct queue_cand *c, int64_t now,
    const char *why, enum queue_status end)
{
	struct qp_params	p = { .n = 0 };

	qp_i64(&p, c->id);
	qp_i64(&p, c->attempts);
	qp_i64(&p, now);
	qp_str(&p, why);
	if (qp_cmd(q, "UPDATE queue_attempts SET ended_ms = $3, outcome ="
	    " 'lease expired', error = $4 WHERE job = $1 AND n = $2 AND"
	    " ended_ms = 0", &p, "closing an expired attempt", NULL) == -1)
		return -1;
	if (end == QUEUE_RUNNING)
		return 0;
	qp_i64(&p, c->id);
	qp_str(&p, queue_status_name(end));
	qp_i64(&p, now);
	qp_str(&p, why);
	return qp_cmd(q, "UPDATE queue_jobs SET status = $2, finished_ms = $3,"
	    " lease_until_ms = 0, error = $4 WHERE id = $1", &p,
	    "ending an expired job", NULL);
}

int
qp_take(struct queue *q, const struct queue_cand *c, const char *worker,
    int64_t now, int64_t lease_until)
{
	struct qp_params	p = { .n = 0 };

	qp_i64(&p, c->id);
	qp_str(&p, worker);
	qp_i64(&p, lease_until);
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

int
qp_extend(struct queue *q, int64_t job, int attempt, const char *worker,
    int64_t lease_until, int *cancel_asked)
{
	struct qp_params	 p = { .n = 0 };
	PGresult		*r;
	int			 rc;

	qp_i64(&p, job);
	qp_i64(&p, attempt);
	qp_str(&p, worker);
	qp_i64(&p, lease_until);
	if ((r = qp_exec(q, "UPDATE queue_jobs SET lease_until_ms = $4"
	    " WHERE id = $1 AND status = 'running' AND attempts = $2"
	    " AND worker = $3 RETURNING cancel_asked", &p,
	    "extending a lease")) == NULL)
		return -1;
	if ((rc = PQntuples(r) > 0))
		*cancel_asked = (int)qp_int(r, 0, 0);
	PQclear(r);
	return rc;
}

int
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

int
qp_result_set(struct queue *q, int64_t job, enum queue_status st,
    int64_t run_at, int64_t finished, const struct queue_result *res)
{
	struct qp_params	p = { .n = 0 };

	qp_i64(&p, job);
	qp_str(&p, queue_status_name(st));
	if (run_at >= 0)
		qp_i64(&p, run_at);
	else
		qp_str(&p, NULL);	/* kept: coalesce below */
	qp_i64(&p, finished);
	qp_str(&p, res->answer);
	qp_str(&p, res->output);
	qp_str(&p, res->error);
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
	return qp_cmd(q, "UPDATE queue_jobs SET status = $2, run_at_ms ="
	    " coalesce($3::bigint, run_at_ms), finished_ms = $4,"
	    " lease_until_ms = 0, answer = $5, output = $6, error = $7,"
	    " diff_stat = $8, run_id = $9, tokens_in = $10, tokens_out = $11,"
	    " wall_ms = $12, changes = $13, run_where = $14, applied_ms = 0,"
	    " applied_by = NULL WHERE id = $1", &p, st == QUEUE_DONE ?
	    "recording a result" : "recording a failure", NULL);
}

int
qp_attempt_end(struct queue *q, int64_t job, int attempt, int64_t now,
    const char *outcome, const char *error, int64_t run_id)
{
	struct qp_params	p = { .n = 0 };

	qp_i64(&p, job);
	qp_i64(&p, attempt);
	qp_i64(&p, now);
	qp_str(&p, outcome);
	qp_str(&p, error);
	qp_i64(&p, run_id);
	return qp_cmd(q, "UPDATE queue_attempts SET ended_ms = $3, outcome ="
	    " $4, error = $5, run_id = $6 WHERE job = $1 AND n = $2", &p,
	    "ending an attempt", NULL);
}

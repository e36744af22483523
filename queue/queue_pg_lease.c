/*
 * Leases on PostgreSQL: a claim, a heartbeat and a result are one
 * statement each, prepared once per connection, run in the statement's
 * own transaction. The claim and the result call the functions that
 * schema version 3 made (queue_pg.c: queue_claim, queue_end), which run
 * queue_lease.c's algorithm on the server: a claim locks its candidate
 * row with FOR UPDATE SKIP LOCKED, so claims on other machines pass over
 * it to the next job instead of waiting; with max_running, claims take
 * turns on a transaction advisory lock, the count of running jobs being
 * what they share; a result locks the job's row (FOR UPDATE) and checks
 * the lease on it, so a worker whose lease was taken records nothing.
 * The time is the server's, read in the statement after its locks, or a
 * test's clock (queue_set_clock) sent with it.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "queue/queue_pg_int.h"

/* The call's time as a parameter: a test's clock, else NULL (the
 * server's, read by the statement). */
static void
qp_clock_param(struct queue *q, struct qp_params *p)
{
	if (q->clock_set)
		qp_i64(p, queue_now(q));
	else
		qp_str(p, NULL);
}

int
qp_claim(struct queue *q, const char *worker, uint64_t lease_ms,
    unsigned max_running, struct queue_job *out)
{
	struct qp_params	 p = { .n = 0 };
	PGresult		*r;
	int			 rc;

	qp_str(&p, worker);
	qp_i64(&p, (int64_t)lease_ms);
	qp_i64(&p, (int64_t)max_running);
	qp_clock_param(q, &p);
	if ((r = qp_prepared(q, QP_PREP_CLAIM, "SELECT " QUEUE_JOB_COLS
	    " FROM queue_claim($1, $2, $3, $4)", &p, "claiming a job")) ==
	    NULL)
		return -1;
	if (PQntuples(r) == 0) {
		PQclear(r);
		return 0;
	}
	rc = qp_job_row(r, 0, out);
	PQclear(r);
	if (rc == -1)
		return queue_seterr(q, "claiming a job: out of memory");
	return 1;
}

/* 0 extended, 1 lease lost, 2 cancel asked. */
int
qp_heartbeat(struct queue *q, int64_t job, int attempt, const char *worker,
    uint64_t lease_ms)
{
	struct qp_params	 p = { .n = 0 };
	PGresult		*r;
	int			 rc = 1;

	qp_i64(&p, job);
	qp_i64(&p, attempt);
	qp_str(&p, worker);
	qp_i64(&p, (int64_t)lease_ms);
	qp_clock_param(q, &p);
	if ((r = qp_prepared(q, QP_PREP_BEAT, "UPDATE queue_jobs SET"
	    " lease_until_ms = coalesce($5::bigint, queue_clock_ms()) +"
	    " $4::bigint WHERE id = $1 AND status = 'running' AND attempts ="
	    " $2 AND worker = $3 RETURNING cancel_asked", &p,
	    "extending a lease")) == NULL)
		return -1;
	if (PQntuples(r) > 0)
		rc = qp_int(r, 0, 0) != 0 ? 2 : 0;
	PQclear(r);
	return rc;
}

/* queue_end's p_flags for fail's flags (or QUEUE_LEASE_DONE). */
static int64_t
qp_end_flags(unsigned flags)
{
	int64_t	f = 0;

	if (flags & QUEUE_LEASE_DONE)
		f |= QP_END_DONE;
	if (flags & QUEUE_FAIL_CANCELLED)
		f |= QP_END_CANCELLED;
	if (flags & QUEUE_FAIL_FINAL)
		f |= QP_END_FINAL;
	return f;
}

/* complete or fail: 0 recorded, 1 refused (the lease was lost). */
int
qp_end(struct queue *q, int64_t job, int attempt, const char *worker,
    const struct queue_result *res, unsigned flags, uint64_t retry_ms)
{
	struct qp_params	 p = { .n = 0 };
	PGresult		*r;
	int			 rc;

	qp_i64(&p, job);
	qp_i64(&p, attempt);
	qp_str(&p, worker);
	qp_clock_param(q, &p);
	qp_i64(&p, qp_end_flags(flags));
	qp_i64(&p, (int64_t)retry_ms);
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
	if ((r = qp_prepared(q, QP_PREP_END, "SELECT queue_end($1, $2, $3, $4,"
	    " $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16)", &p,
	    (flags & QUEUE_LEASE_DONE) ? "recording a result" :
	    "recording a failure")) == NULL)
		return -1;
	rc = (int)qp_int(r, 0, 0);
	PQclear(r);
	return rc;
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

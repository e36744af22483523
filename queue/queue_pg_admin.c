/*
 * What `queue cancel/retry/purge/ls/show` and the shared rate limits do
 * on PostgreSQL (queue_sqlite_admin.c and queue_sqlite_rate.c on
 * SQLite), and the LISTEN side of new work for idle workers.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "queue/queue_pg_int.h"

/* A job's status and lease, its row locked until the commit: 1 found, 0
 * none, -1 error. */
int
qp_job_status(struct queue *q, int64_t job, enum queue_status *st,
    int64_t *lease_until, int *attempts)
{
	struct qp_params	 p = { .n = 0 };
	PGresult		*r;

	qp_i64(&p, job);
	if ((r = qp_exec(q, "SELECT status, lease_until_ms, attempts FROM"
	    " queue_jobs WHERE id = $1 FOR UPDATE", &p, "reading a job")) ==
	    NULL)
		return -1;
	if (PQntuples(r) == 0) {
		PQclear(r);
		return 0;
	}
	if (queue_status_parse(PQgetvalue(r, 0, 0), st) == -1)
		*st = QUEUE_DEAD;
	*lease_until = qp_int(r, 0, 1);
	*attempts = (int)qp_int(r, 0, 2);
	PQclear(r);
	return 1;
}

int
qp_cancel_ask(struct queue *q, int64_t job)
{
	struct qp_params	p = { .n = 0 };

	qp_i64(&p, job);
	return qp_cmd(q, "UPDATE queue_jobs SET cancel_asked = 1 WHERE id ="
	    " $1", &p, "asking for a cancel", NULL);
}

int
qp_cancel_now(struct queue *q, int64_t job, int64_t now)
{
	struct qp_params	p = { .n = 0 };

	qp_i64(&p, job);
	qp_i64(&p, now);
	return qp_cmd(q, "UPDATE queue_jobs SET status = 'cancelled',"
	    " finished_ms = $2, lease_until_ms = 0 WHERE id = $1", &p,
	    "cancelling a job", NULL);
}

int
qp_requeue(struct queue *q, int64_t job, int64_t now, int64_t *rows)
{
	struct qp_params	p = { .n = 0 };

	qp_i64(&p, now);
	qp_i64(&p, job);
	return qp_cmd(q, "UPDATE queue_jobs SET status = 'queued', max_attempts"
	    " = attempts + round_attempts, run_at_ms = $1, finished_ms = 0,"
	    " lease_until_ms = 0, cancel_asked = 0 WHERE ($2::bigint = 0 AND"
	    " status = 'dead') OR ($2::bigint > 0 AND id = $2::bigint AND"
	    " status IN ('dead', 'cancelled'))", &p, "queueing again", rows);
}

int
qp_purge_rows(struct queue *q, unsigned mask, int64_t before_ms,
    uint64_t *n)
{
	static const enum queue_status	ends[] = {
		QUEUE_DONE, QUEUE_DEAD, QUEUE_CANCELLED,
	};
	struct qp_params		p = { .n = 0 };
	PGresult			*r;
	int				i;

	/* One statement, so one snapshot: a job that a retry requeues, or
	 * one that ends, between two statements would lose its attempts or
	 * leave them behind. */
	for (i = 0; i < 3; i++)
		qp_str(&p, (mask & (1u << ends[i])) ?
		    queue_status_name(ends[i]) : NULL);
	qp_i64(&p, before_ms);
	if ((r = qp_exec(q, "WITH j AS (DELETE FROM queue_jobs WHERE status"
	    " IN ($1, $2, $3) AND finished_ms < $4 RETURNING id),"
	    " a AS (DELETE FROM queue_attempts WHERE job IN (SELECT id FROM"
	    " j)) SELECT count(*) FROM j", &p, "removing finished jobs")) ==
	    NULL)
		return -1;
	*n = (uint64_t)qp_int(r, 0, 0);
	PQclear(r);
	return 0;
}

int
qp_list(struct queue *q, int status, unsigned limit, struct queue_job **v,
    size_t *n)
{
	struct qp_params	 p = { .n = 0 };
	PGresult		*r;
	char			 sql[1024];
	int			 i, rows;

	if (qp_ready(q) == -1)
		return -1;
	/* LIMIT NULL is no limit. */
	snprintf(sql, sizeof(sql), "SELECT * FROM (SELECT %s FROM queue_jobs"
	    " WHERE $1::text IS NULL OR status = $1 ORDER BY id DESC LIMIT"
	    " $2::bigint) AS j ORDER BY id", QUEUE_JOB_COLS);
	qp_str(&p, status >= 0 ? queue_status_name((enum queue_status)status) :
	    NULL);
	if (limit > 0)
		qp_i64(&p, (int64_t)limit);
	else
		qp_str(&p, NULL);
	if ((r = qp_exec(q, sql, &p, "listing jobs")) == NULL)
		return -1;
	rows = PQntuples(r);
	if (rows > 0 && (*v = calloc((size_t)rows, sizeof(**v))) == NULL)
		goto nomem;
	for (i = 0; i < rows; i++) {
		if (qp_job_row(r, i, &(*v)[i]) == -1)
			goto nomem;
		(*n)++;
	}
	PQclear(r);
	return 0;
nomem:
	PQclear(r);
	queue_jobs_free(*v, *n);
	*v = NULL;
	*n = 0;
	return queue_seterr(q, "listing jobs: out of memory");
}

static int
qp_attempt_row(const PGresult *r, int i, struct queue_attempt *a)
{
	memset(a, 0, sizeof(*a));
	a->n = (int)qp_int(r, i, 0);
	a->started_ms = qp_int(r, i, 2);
	a->ended_ms = qp_int(r, i, 3);
	a->run_id = qp_int(r, i, 6);
	if ((!PQgetisnull(r, i, 1) &&
	    (a->worker = strdup(PQgetvalue(r, i, 1))) == NULL) ||
	    (!PQgetisnull(r, i, 4) &&
	    (a->outcome = strdup(PQgetvalue(r, i, 4))) == NULL) ||
	    (!PQgetisnull(r, i, 5) &&
	    (a->error = strdup(PQgetvalue(r, i, 5))) == NULL))
		return -1;
	return 0;
}

static int
qp_attempts(struct queue *q, int64_t job, struct queue_attempt **v,
    size_t *n)
{
	struct qp_params	 p = { .n = 0 };
	PGresult		*r;
	int			 i, rows;

	qp_i64(&p, job);
	if ((r = qp_exec(q, "SELECT n, worker, started_ms, ended_ms, outcome,"
	    " error, run_id FROM queue_attempts WHERE job = $1 ORDER BY n", &p,
	    "reading the attempts")) == NULL)
		return -1;
	rows = PQntuples(r);
	if (rows > 0 && (*v = calloc((size_t)rows, sizeof(**v))) == NULL) {
		PQclear(r);
		return queue_seterr(q, "attempts: out of memory");
	}
	for (i = 0; i < rows; i++) {
		(*n)++;
		if (qp_attempt_row(r, i, &(*v)[i]) == -1) {
			PQclear(r);
			return queue_seterr(q, "attempts: out of memory");
		}
	}
	PQclear(r);
	return 0;
}

/* The job and its attempts in one snapshot. */
int
qp_get(struct queue *q, int64_t id, struct queue_job *j,
    struct queue_attempt **v, size_t *n)
{
	int	rc;

	if (qp_ready(q) == -1 || qp_cmd(q, "BEGIN ISOLATION LEVEL REPEATABLE"
	    " READ READ ONLY", NULL, "reading a job", NULL) == -1)
		return -1;
	rc = qp_job_read(q, id, j);
	if (rc == 0 && v != NULL && qp_attempts(q, id, v, n) == -1) {
		queue_job_free(j);
		queue_attempts_free(*v, *n);
		*v = NULL;
		*n = 0;
		rc = -1;
	}
	qp_rollback(q);
	return rc;
}

int
qp_counts(struct queue *q, struct queue_counts *c)
{
	enum queue_status	 st;
	PGresult		*r;
	int			 i;

	if (qp_ready(q) == -1)
		return -1;
	if ((r = qp_exec(q, "SELECT status, count(*) FROM queue_jobs GROUP BY"
	    " status", NULL, "counting jobs")) == NULL)
		return -1;
	for (i = 0; i < PQntuples(r); i++)
		if (queue_status_parse(PQgetvalue(r, i, 0), &st) == 0)
			c->n[st] = (uint64_t)qp_int(r, i, 1);
	PQclear(r);
	return 0;
}

/* The figures of struct queue_stats but the counts, since since. */
static int
qp_stats_read(struct queue *q, int64_t since, struct queue_stats *st)
{
	struct qp_params	 p = { .n = 0 };
	PGresult		*r;

	qp_i64(&p, since);
	if ((r = qp_exec(q, "SELECT (SELECT count(*) FROM queue_attempts),"
	    " (SELECT count(*) FROM queue_attempts WHERE ended_ms > 0 AND"
	    " outcome <> 'done'),"
	    " (SELECT count(*) FROM queue_jobs WHERE status = 'done' AND"
	    " finished_ms >= $1::bigint),"
	    " (SELECT min(started_ms) FROM queue_attempts WHERE ended_ms = 0"
	    " OR ended_ms >= $1::bigint),"
	    " (SELECT id FROM queue_jobs WHERE status = 'queued' ORDER BY"
	    " run_at_ms, id LIMIT 1),"
	    " (SELECT min(run_at_ms) FROM queue_jobs WHERE status = 'queued')",
	    &p, "reading the queue's figures")) == NULL)
		return -1;
	st->attempts = (uint64_t)qp_int(r, 0, 0);
	st->attempts_failed = (uint64_t)qp_int(r, 0, 1);
	st->done_recent = (uint64_t)qp_int(r, 0, 2);
	st->first_active_ms = qp_int(r, 0, 3);
	st->oldest_queued = qp_int(r, 0, 4);
	st->oldest_queued_ms = qp_int(r, 0, 5);
	PQclear(r);
	return 0;
}

/* The counts and the figures in one snapshot, at the server's time. */
int
qp_stats(struct queue *q, uint64_t window_ms, struct queue_stats *st)
{
	enum queue_status	 s;
	PGresult		*r;
	int			 i, rc = -1;

	if (qp_ready(q) == -1 || qp_cmd(q, "BEGIN ISOLATION LEVEL REPEATABLE"
	    " READ READ ONLY", NULL, "reading the queue's figures", NULL) ==
	    -1)
		return -1;
	if (qp_now(q, &st->now_ms) == -1 || (r = qp_exec(q, "SELECT status,"
	    " count(*) FROM queue_jobs GROUP BY status", NULL,
	    "counting jobs")) == NULL)
		goto out;
	for (i = 0; i < PQntuples(r); i++)
		if (queue_status_parse(PQgetvalue(r, i, 0), &s) == 0)
			st->counts.n[s] = (uint64_t)qp_int(r, i, 1);
	PQclear(r);
	rc = qp_stats_read(q, st->now_ms - (int64_t)window_ms, st);
out:
	qp_rollback(q);
	return rc;
}

/* The endpoint's row, made if absent, locked until the commit. */
static int
qp_rate_read(struct queue *q, const char *endpoint,
    struct queue_rate_state *st)
{
	struct qp_params	 p = { .n = 0 };
	PGresult		*r;

	qp_str(&p, endpoint);
	if (qp_cmd(q, "INSERT INTO queue_rate (endpoint, req_tat_ms,"
	    " tok_tat_ms, pause_until_ms) VALUES ($1, 0, 0, 0) ON CONFLICT"
	    " DO NOTHING", &p, "making a rate row", NULL) == -1)
		return -1;
	qp_str(&p, endpoint);
	if ((r = qp_exec(q, "SELECT req_tat_ms, tok_tat_ms, pause_until_ms"
	    " FROM queue_rate WHERE endpoint = $1 FOR UPDATE", &p,
	    "reading a rate")) == NULL)
		return -1;
	memset(st, 0, sizeof(*st));
	if (PQntuples(r) == 1) {
		st->req_tat_ms = qp_int(r, 0, 0);
		st->tok_tat_ms = qp_int(r, 0, 1);
		st->pause_until_ms = qp_int(r, 0, 2);
	}
	PQclear(r);
	return 0;
}

int
qp_rate(struct queue *q, const char *endpoint,
    const struct queue_rate_req *req, uint64_t *wait_ms)
{
	struct queue_rate_state	st, before;
	struct qp_params	p = { .n = 0 };
	int64_t			now;

	if (qp_begin(q) == -1 || qp_rate_read(q, endpoint, &st) == -1 ||
	    qp_now(q, &now) == -1)
		goto fail;
	before = st;
	*wait_ms = queue_rate_step(&st, now, req);
	if (memcmp(&st, &before, sizeof(st)) != 0) {
		qp_str(&p, endpoint);
		qp_i64(&p, st.req_tat_ms);
		qp_i64(&p, st.tok_tat_ms);
		qp_i64(&p, st.pause_until_ms);
		if (qp_cmd(q, "UPDATE queue_rate SET req_tat_ms = $2,"
		    " tok_tat_ms = $3, pause_until_ms = $4 WHERE endpoint = $1",
		    &p, "writing a rate", NULL) == -1)
			goto fail;
	}
	return qp_commit(q);
fail:
	qp_rollback(q);
	return -1;
}

/* LISTEN on this connection (again after a reconnect); its socket. */
int
qp_wait_fd(struct queue *q)
{
	struct queue_pg	*be = qp_be(q);

	if (qp_ready(q) == -1)
		return -1;
	if (!be->listening) {
		if (qp_cmd(q, "LISTEN " QP_CHANNEL, NULL, "listening for new "
		    "work", NULL) == -1)
			return -1;
		be->listening = 1;
		be->woken = 1;	/* what was added before LISTEN */
	}
	return PQsocket(be->conn);
}

int
qp_woken(struct queue *q)
{
	struct queue_pg	*be = qp_be(q);
	PGnotify	*n;
	int		 woken;

	if (be->conn != NULL && PQstatus(be->conn) == CONNECTION_OK &&
	    PQtransactionStatus(be->conn) == PQTRANS_IDLE) {
		PQconsumeInput(be->conn);
		while ((n = PQnotifies(be->conn)) != NULL) {
			be->woken = 1;
			PQfreemem(n);
		}
	}
	woken = be->woken;
	be->woken = 0;
	return woken;
}

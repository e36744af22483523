/*
 * What `queue cancel`, `retry` and `purge` do, for every backend: one
 * algorithm over the backend's primitives (queue_int.h, struct
 * queue_ops), each call one transaction that writes (begin, a _locked
 * body, queue_lease_close), as the leases in queue_lease.c.
 */
#include "queue/queue_int.h"

/* Under the transaction: 0 cancelled or asked, 1 finished already (left
 * as it is), -1 error (ENOENT: no such job). */
static int
queue_admin_cancel_locked(struct queue *q, int64_t job)
{
	struct queue_cand	c = { .id = job };
	enum queue_status	st;
	int64_t			now, lease_until;
	int			rc;

	if ((rc = q->ops->status(q, job, &st, &lease_until, &c.attempts)) !=
	    1)
		return rc == 0 ? queue_notfound(q, job) : -1;
	if (st == QUEUE_DONE || st == QUEUE_DEAD || st == QUEUE_CANCELLED)
		return 1;
	if (q->ops->now(q, &now) == -1)
		return -1;
	if (st == QUEUE_RUNNING && lease_until > now)
		return q->ops->cancel_ask(q, job);
	/* A running job whose lease expired: its worker is gone and nobody
	 * would stop it, so it ends now, its attempt "lease expired". */
	if (st == QUEUE_RUNNING && q->ops->expire(q, &c, now,
	    "lease expired; then cancelled", QUEUE_RUNNING) == -1)
		return -1;
	return q->ops->cancel_now(q, job, now);
}

int
queue_admin_cancel(struct queue *q, int64_t job)
{
	if (q->ops->begin(q) == -1)
		return -1;
	return queue_lease_close(q, queue_admin_cancel_locked(q, job));
}

/* Under the transaction: job (0: every dead job) queued again, idle
 * workers told; 1 when job is there but neither dead nor cancelled. */
static int
queue_admin_requeue_locked(struct queue *q, int64_t job, int64_t *rows)
{
	enum queue_status	st;
	int64_t			now, lease_until;
	int			rc, attempts;

	if (q->ops->now(q, &now) == -1 ||
	    q->ops->requeue(q, job, now, rows) == -1)
		return -1;
	if (*rows > 0)
		return q->ops->notify != NULL ? q->ops->notify(q) : 0;
	if (job == 0)
		return 0;
	if ((rc = q->ops->status(q, job, &st, &lease_until, &attempts)) !=
	    1)
		return rc == 0 ? queue_notfound(q, job) : -1;
	return 1;
}

int
queue_admin_retry(struct queue *q, int64_t job)
{
	int64_t	rows = 0;

	if (q->ops->begin(q) == -1)
		return -1;
	return queue_lease_close(q, queue_admin_requeue_locked(q, job,
	    &rows));
}

int
queue_admin_retry_dead(struct queue *q, uint64_t *n)
{
	int64_t	rows = 0;

	if (q->ops->begin(q) == -1)
		return -1;
	if (queue_lease_close(q, queue_admin_requeue_locked(q, 0, &rows)) ==
	    -1)
		return -1;
	*n = (uint64_t)rows;
	return 0;
}

int
queue_admin_purge(struct queue *q, unsigned mask, int64_t before_ms,
    uint64_t *n)
{
	if (q->ops->begin(q) == -1)
		return -1;
	return queue_lease_close(q, q->ops->purge_rows(q, mask, before_ms,
	    n));
}

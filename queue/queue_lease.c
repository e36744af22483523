/*
 * Leases, for every backend: claim, heartbeat, complete, fail, as one
 * algorithm over the backend's primitives (queue_int.h, struct
 * queue_ops). A lease is the pair (worker, attempt number) written on
 * the job when it is claimed; heartbeat, complete and fail change the job
 * only while that pair is still on it and the job still runs, checked in
 * the transaction that writes, so a worker whose lease expired and was
 * taken can no longer record anything ("recorded once", queue.h).
 *
 * Each call is one transaction that writes (begin): on SQLite the
 * database's write lock, taken first. The time is read once per call,
 * after the locks it waited for (now). A backend that runs the algorithm
 * itself gives the whole call instead (claim, heartbeat, end): PostgreSQL
 * runs it on the server, one statement a call, its rows locked as they
 * are read (the candidate FOR UPDATE SKIP LOCKED, so claims on many
 * machines pass over each other's; the holder FOR UPDATE), the same
 * decisions as queue_lease_expire and queue_lease_to here
 * (queue_pg.c, queue_claim and queue_end).
 */
#include <stdio.h>
#include <string.h>

#include "queue/queue_int.h"

/* Where an attempt that ended leaves its job (queue_lease_to). */
struct queue_lease_to {
	enum queue_status	 status;
	int64_t			 run_at;	/* < 0: kept as it is */
	int64_t			 finished;
	const char		*outcome;	/* the attempt's */
};

/* The end of a call's transaction, whose body returned rc: rolled back
 * on -1, else committed (what it wrote, or nothing); rc, or -1 when the
 * commit failed. */
int
queue_lease_close(struct queue *q, int rc)
{
	if (rc == -1) {
		q->ops->rollback(q);
		return -1;
	}
	if (q->ops->commit(q) == -1)
		return -1;
	return rc;
}

/* Under the transaction: 1 with the candidate's lease expired and the
 * job ended by it (dead, or cancelled), 0 when it may run again. */
static int
queue_lease_expire(struct queue *q, int64_t now, const struct queue_cand *c)
{
	enum queue_status	end = QUEUE_RUNNING;
	char			why[256];

	snprintf(why, sizeof(why), "lease expired: worker %s held it until "
	    "%lld and did not finish", c->worker,
	    (long long)c->lease_until_ms);
	if (c->cancel_asked)
		end = QUEUE_CANCELLED;
	else if (c->attempts >= c->max_attempts)
		end = QUEUE_DEAD;
	if (q->ops->expire(q, c, now, why, end) == -1)
		return -1;
	return end != QUEUE_RUNNING;
}

/* Under the transaction: 1 claimed into out, 0 nothing, -1 error. */
static int
queue_lease_claim_locked(struct queue *q, const char *worker,
    uint64_t lease_ms, unsigned max_running, struct queue_job *out)
{
	const struct queue_ops	*ops = q->ops;
	struct queue_cand	 c;
	int64_t			 now, running;
	int			 rc;

	if (max_running > 0 && ops->running_lock != NULL &&
	    ops->running_lock(q) == -1)
		return -1;
	if (ops->now(q, &now) == -1)
		return -1;
	if (max_running > 0) {
		if (ops->running(q, now, &running) == -1)
			return -1;
		if (running >= (int64_t)max_running)
			return 0;
	}
	for (;;) {
		memset(&c, 0, sizeof(c));
		if ((rc = ops->next(q, now, &c)) <= 0)
			return rc;
		if (c.status != QUEUE_RUNNING)
			break;
		if ((rc = queue_lease_expire(q, now, &c)) == -1)
			return -1;
		if (rc == 0)
			break;
	}
	if (ops->take(q, &c, worker, now, now + (int64_t)lease_ms) == -1 ||
	    ops->job_read(q, c.id, out) == -1)
		return -1;
	return 1;
}

int
queue_lease_claim(struct queue *q, const char *worker, uint64_t lease_ms,
    unsigned max_running, struct queue_job *out)
{
	int	rc;

	if (q->ops->claim != NULL)
		return q->ops->claim(q, worker, lease_ms, max_running, out);
	if (q->ops->begin(q) == -1)
		return -1;
	if ((rc = queue_lease_close(q, queue_lease_claim_locked(q, worker,
	    lease_ms, max_running, out))) == -1)
		queue_job_free(out);
	return rc;
}

/* Under the transaction: 0 extended, 1 lease lost, 2 cancel asked. */
static int
queue_lease_heartbeat_locked(struct queue *q, int64_t job, int attempt,
    const char *worker, uint64_t lease_ms)
{
	int64_t	now;
	int	rc, asked = 0;

	if (q->ops->now(q, &now) == -1)
		return -1;
	if ((rc = q->ops->extend(q, job, attempt, worker,
	    now + (int64_t)lease_ms, &asked)) == -1)
		return -1;
	if (rc == 0)
		return 1;
	return asked ? 2 : 0;
}

int
queue_lease_heartbeat(struct queue *q, int64_t job, int attempt,
    const char *worker, uint64_t lease_ms)
{
	if (q->ops->heartbeat != NULL)
		return q->ops->heartbeat(q, job, attempt, worker, lease_ms);
	if (q->ops->begin(q) == -1)
		return -1;
	return queue_lease_close(q, queue_lease_heartbeat_locked(q, job,
	    attempt, worker, lease_ms));
}

/* A result written: idle workers may have a slot (PostgreSQL's NOTIFY,
 * sent when the transaction commits; nothing on SQLite). */
static int
queue_lease_announce(struct queue *q)
{
	if (q->ops->notify == NULL)
		return 0;
	return q->ops->notify(q);
}

/*
 * Where an attempt that ended leaves its job: done when it completed;
 * when it failed, cancelled if it was stopped for a cancel or a cancel
 * was asked meanwhile (the user does not want it run again), dead if it
 * may not be retried or has no attempt left, else retrying after the
 * backoff.
 */
static void
queue_lease_to(struct queue *q, int64_t now, int attempt, int max_attempts,
    int cancel_asked, unsigned flags, struct queue_lease_to *to)
{
	to->run_at = now;
	to->finished = now;
	to->outcome = "failed";
	if (flags & QUEUE_LEASE_DONE) {
		to->status = QUEUE_DONE;
		to->run_at = -1;
		to->outcome = "done";
	} else if ((flags & QUEUE_FAIL_CANCELLED) || cancel_asked) {
		to->status = QUEUE_CANCELLED;
		if (flags & QUEUE_FAIL_CANCELLED)
			to->outcome = "cancelled";
	} else if ((flags & QUEUE_FAIL_FINAL) || attempt >= max_attempts)
		to->status = QUEUE_DEAD;
	else {
		to->status = QUEUE_RETRYING;
		to->run_at = now + (int64_t)queue_backoff_ms(attempt + 1,
		    queue_jitter(q));
		to->finished = 0;
	}
}

/* Under the transaction: the attempt's result on its job and its
 * attempt's row while worker still holds it; 0 recorded, 1 refused
 * (the lease was lost), -1 error. */
static int
queue_lease_record(struct queue *q, int64_t job, int attempt,
    const char *worker, const struct queue_result *r, unsigned flags)
{
	struct queue_result	res = *r;
	struct queue_lease_to	to;
	int64_t			now;
	int			rc, max_attempts = 0, asked = 0;

	if ((rc = q->ops->holder(q, job, attempt, worker, &max_attempts,
	    &asked)) != 1)
		return rc == 0 ? 1 : -1;
	if (q->ops->now(q, &now) == -1)
		return -1;
	queue_lease_to(q, now, attempt, max_attempts, asked, flags, &to);
	if (to.status == QUEUE_DONE)
		res.error = NULL;	/* its attempts keep theirs */
	else {
		res.changes = NULL;	/* a failure's are not applied */
		res.changes_len = 0;
	}
	if (q->ops->result_set(q, job, to.status, to.run_at, to.finished,
	    &res) == -1 || q->ops->attempt_end(q, job, attempt, now,
	    to.outcome, r->error, r->run_id) == -1)
		return -1;
	return queue_lease_announce(q);
}

/* complete (flags QUEUE_LEASE_DONE) or fail, in one transaction. */
static int
queue_lease_end(struct queue *q, int64_t job, int attempt,
    const char *worker, const struct queue_result *r, unsigned flags)
{
	if (q->ops->end != NULL)
		return q->ops->end(q, job, attempt, worker, r, flags,
		    queue_backoff_ms(attempt + 1, queue_jitter(q)));
	if (q->ops->begin(q) == -1)
		return -1;
	return queue_lease_close(q, queue_lease_record(q, job, attempt,
	    worker, r, flags));
}

int
queue_lease_complete(struct queue *q, int64_t job, int attempt,
    const char *worker, const struct queue_result *r)
{
	return queue_lease_end(q, job, attempt, worker, r, QUEUE_LEASE_DONE);
}

int
queue_lease_fail(struct queue *q, int64_t job, int attempt,
    const char *worker, const struct queue_result *r, unsigned flags)
{
	return queue_lease_end(q, job, attempt, worker, r, flags);
}

/*
 * Adding jobs, for every backend: all of them in one transaction (begin,
 * a _locked body, queue_lease_close), over the backend's add_one
 * (queue_int.h, struct queue_ops). An error on any job adds none, and
 * the error names the job, counted from 1.
 */
#include <stdio.h>

#include "queue/queue_int.h"

static int
queue_add_locked(struct queue *q, const struct queue_job_new *n,
    size_t count, int64_t *ids, int *existed)
{
	char	why[QUEUE_ERR_MAX];
	int64_t	now;
	size_t	i;

	if (q->ops->now(q, &now) == -1)	/* after the wait for the lock */
		return -1;
	for (i = 0; i < count; i++) {
		if (q->ops->add_one(q, &n[i], now, &ids[i], &existed[i]) ==
		    -1) {
			if (count > 1) {
				snprintf(why, sizeof(why), "%s", q->err);
				queue_seterr(q, "job %zu of %zu: %s; none of "
				    "the %zu was added", i + 1, count, why,
				    count);
			}
			return -1;
		}
	}
	return q->ops->notify != NULL ? q->ops->notify(q) : 0;
}

int
queue_add_all(struct queue *q, const struct queue_job_new *n, size_t count,
    int64_t *ids, int *existed)
{
	if (q->ops->begin(q) == -1)
		return -1;
	return queue_lease_close(q, queue_add_locked(q, n, count, ids,
	    existed));
}

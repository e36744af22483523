/*
 * What tests call directly of the queue: production reaches each only
 * through queue_add_many and the wall clock. Only tests and the files
 * defining these include this (scripts/check-exports.py).
 */

#ifndef WARREN_QUEUE_TESTAPI_H
#define WARREN_QUEUE_TESTAPI_H

#include <stdint.h>

#include "queue/queue.h"

/* The queue's clock (default: the wall clock). */
void		 queue_set_clock(struct queue *, int64_t (*now_ms)(void *),
		    void *arg);
/* Add a job: 0 with *id; *existed 1 when the key was already there (the
 * existing job's id, nothing added). */
int		 queue_add(struct queue *, const struct queue_job_new *,
		    int64_t *id, int *existed);

#endif

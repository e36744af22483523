/*
 * Helpers shared by the queue's tests: a private directory with a fresh
 * state database, a clock the test moves, and short ways to add, claim
 * and end jobs.
 */
#ifndef WARREN_QUEUE_TEST_H
#define WARREN_QUEUE_TEST_H

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "queue/queue.h"

struct qt {
	char		 dir[512];
	char		 db[1024];
	int64_t		 now;		/* the injected clock */
	struct queue	*q;
};

static inline int64_t
qt_clock(void *arg)
{
	return ((struct qt *)arg)->now;
}

static inline void
qt_make(struct qt *t)
{
	const char	*tmp = getenv("TMPDIR");

	snprintf(t->dir, sizeof(t->dir), "%s/warren-queue-XXXXXX",
	    tmp != NULL && *tmp != '\0' ? tmp : "/tmp");
	if (mkdtemp(t->dir) == NULL) {
		perror("mkdtemp");
		abort();
	}
	snprintf(t->db, sizeof(t->db), "%s/state/warren.db", t->dir);
	t->now = 1000000;
}

static inline void
qt_remove(struct qt *t)
{
	char	cmd[600];

	/* Our own mkdtemp directory: nothing else can be named by it. */
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", t->dir);
	if (system(cmd) != 0)
		fprintf(stderr, "could not remove %s\n", t->dir);
}

/* Open the test's queue on its clock; NULL with the error printed. */
static inline struct queue *
qt_open(struct qt *t)
{
	struct queue	*q;
	char		 err[QUEUE_ERR_MAX];

	if ((q = queue_open(t->db, err, sizeof(err))) == NULL) {
		fprintf(stderr, "queue_open: %s\n", err);
		return NULL;
	}
	queue_set_clock(q, qt_clock, t);
	return q;
}

#endif

/*
 * The queue's internals, shared by queue*.c and its tests: the handle, the
 * backend's table of operations and error reporting. Nothing outside
 * queue/ and tests/queue/ includes this.
 *
 * The frontend (queue.c) checks every argument, then calls the backend;
 * a backend may assume them checked (worker not empty, lease_ms > 0, a
 * fail's error set, job ids > 0). A backend takes its times from
 * queue_now() (SQLite) or from its database's clock (PostgreSQL, unless a
 * test set a clock: clock_set), and its jitter from queue_jitter().
 */
#ifndef WARREN_QUEUE_INT_H
#define WARREN_QUEUE_INT_H

#include <sys/types.h>

#include <stdarg.h>

#include "queue/queue.h"

/* How long a call waits for a lock another process holds (a claim
 * behind a run's batch commit) before it fails. */
#define QUEUE_BUSY_TIMEOUT_MS	30000

/* queue_meta's schema_version of this program's SQLite tables. */
#define QUEUE_SQLITE_SCHEMA_VERSION	3

struct queue_ops {
	const char	*name;
	int	(*open)(struct queue *, const char *url);
	void	(*close)(struct queue *);
	int	(*add)(struct queue *, const struct queue_job_new *,
		    int64_t *, int *);
	/* All or nothing, in one transaction. */
	int	(*add_many)(struct queue *, const struct queue_job_new *,
		    size_t, int64_t *, int *);
	int	(*claim)(struct queue *, const char *, uint64_t, unsigned,
		    struct queue_job *);
	int	(*heartbeat)(struct queue *, int64_t, int, const char *,
		    uint64_t);
	int	(*complete)(struct queue *, int64_t, int, const char *,
		    const struct queue_result *);
	int	(*fail)(struct queue *, int64_t, int, const char *,
		    const struct queue_result *, unsigned);
	int	(*cancel)(struct queue *, int64_t);
	int	(*retry)(struct queue *, int64_t);
	int	(*retry_dead)(struct queue *, uint64_t *);
	int	(*purge)(struct queue *, unsigned, int64_t, uint64_t *);
	int	(*list)(struct queue *, int, struct queue_job **, size_t *);
	int	(*get)(struct queue *, int64_t, struct queue_job *,
		    struct queue_attempt **, size_t *);
	int	(*counts)(struct queue *, struct queue_counts *);
	int	(*changes)(struct queue *, int64_t, void **, size_t *);
	int	(*applied)(struct queue *, int64_t, const char *);
	/* Read endpoint's row (absent: zeros), queue_rate_step() it at the
	 * backend's time, write it back, in one transaction. */
	int	(*rate)(struct queue *, const char *,
		    const struct queue_rate_req *, uint64_t *);
	/* queue_wait_fd and queue_woken (queue.h); NULL: the backend has
	 * no way to announce new work (SQLite: workers look again). */
	int	(*wait_fd)(struct queue *);
	int	(*woken)(struct queue *);
};

struct queue {
	const struct queue_ops	*ops;
	void			*be;		/* the backend's state */
	pid_t			 owner;		/* the process that opened it */
	int64_t			(*now_ms)(void *);
	void			*now_arg;
	int			 clock_set;	/* a test's clock (PostgreSQL
						   then takes it, not its own) */
	char			 err[QUEUE_ERR_MAX];
};

/* queue.c */
int	queue_seterr(struct queue *, const char *, ...)
	    __attribute__((format(printf, 2, 3)));
/* Like queue_seterr, and errno = ENOENT for the caller (no such job). */
int	queue_notfound(struct queue *, int64_t);
double	queue_jitter(struct queue *);

/* queue_sqlite.c */
extern const struct queue_ops queue_sqlite_ops;
/* queue_pg.c */
extern const struct queue_ops queue_pg_ops;

#endif

/*
 * The queue's internals, shared by queue*.c and its tests: the handle, the
 * backend's table of operations and error reporting. Nothing outside
 * queue/ and tests/queue/ includes this.
 *
 * The frontend (queue.c) checks every argument, then calls the backend,
 * or for leases queue_lease.c, which runs the one lease algorithm on the
 * backend's primitives; a backend may assume them checked (worker not
 * empty, lease_ms > 0, a fail's error set, job ids > 0). A backend takes
 * its times from
 * queue_now() (SQLite) or from its database's clock (PostgreSQL, unless a
 * test set a clock: clock_set), and its jitter from queue_jitter().
 */
#ifndef WARREN_QUEUE_INT_H
#define WARREN_QUEUE_INT_H

#include <sys/types.h>

#include <stdarg.h>

#include "common/version.h"
#include "queue/queue.h"

/* How long a call waits for a lock another process holds (a claim
 * behind a run's batch commit) before it fails. */
#define QUEUE_BUSY_TIMEOUT_MS	30000
/* A lock held longer at open is said (qs_lock_wait). */
#define QS_LOCK_QUIET_MS	1000

/* Among fail's flags (queue.h), a complete: queue_fail refuses it. */
#define QUEUE_LEASE_DONE	0x100

/* queue_meta's schema_version of this program's SQLite tables. */
#define QUEUE_SQLITE_SCHEMA_VERSION	3

/* What a claim learns of its candidate (struct queue_ops' next). */
struct queue_cand {
	int64_t			 id;
	enum queue_status	 status;
	int			 attempts, max_attempts, cancel_asked;
	char			 worker[128];	/* the expired lease's holder */
	int64_t			 lease_until_ms;
};

/*
 * The job row, one list for both backends: each column's SQL, the field
 * of struct queue_job it fills and its kind. QUEUE_JOB_COLS is the SQL
 * every backend selects; queue_row_job (queue_row.c) decodes a row of it
 * through the backend's reader (struct queue_row). length() of a blob or
 * bytea is its bytes on both, NULL (no change set) read as 0.
 */
#define QUEUE_JOB_COLUMNS(X, SEP) \
	X("id", id, I64) SEP X("task", task, TEXT) SEP \
	X("profile", profile, TEXT) SEP X("workspace", workspace, TEXT) SEP \
	X("schema", schema, TEXT) SEP X("key", key, TEXT) SEP \
	X("params", params, TEXT) SEP X("status", status, STATUS) SEP \
	X("priority", priority, INT) SEP X("attempts", attempts, INT) SEP \
	X("max_attempts", max_attempts, INT) SEP \
	X("timeout_ms", timeout_ms, U64) SEP X("budget", budget, U64) SEP \
	X("created_ms", created_ms, I64) SEP X("run_at_ms", run_at_ms, I64) SEP \
	X("lease_until_ms", lease_until_ms, I64) SEP \
	X("finished_ms", finished_ms, I64) SEP X("worker", worker, TEXT) SEP \
	X("cancel_asked", cancel_asked, INT) SEP X("answer", answer, TEXT) SEP \
	X("output", output, TEXT) SEP X("error", error, TEXT) SEP \
	X("diff_stat", diff_stat, TEXT) SEP X("run_id", run_id, I64) SEP \
	X("tokens_in", tokens_in, U64) SEP X("tokens_out", tokens_out, U64) SEP \
	X("wall_ms", wall_ms, I64) SEP \
	X("length(changes)", changes_len, SIZE) SEP \
	X("run_where", run_where, TEXT) SEP X("applied_ms", applied_ms, I64) SEP \
	X("applied_by", applied_by, TEXT)
#define QUEUE_JOB_COL_SQL(sql, field, kind)	sql
#define QUEUE_JOB_COLS	QUEUE_JOB_COLUMNS(QUEUE_JOB_COL_SQL, ", ")

/* How a backend reads column i of the row at hand (arg): text is NULL
 * for SQL NULL (null says so) or when out of memory (null says not). */
struct queue_row {
	void		*arg;
	int		(*null)(void *, int);
	int64_t		(*i64)(void *, int);
	const char	*(*text)(void *, int);
};

struct queue_ops {
	const char	*name;
	/* flags: queue_open_flags' (QUEUE_OPEN_EXISTING: queue_absent) */
	int	(*open)(struct queue *, const char *url, unsigned flags);
	void	(*close)(struct queue *);
	/* One job at now, inside begin's transaction (queue_add.c): its
	 * id, or the id of the job that has its key (existed 1). */
	int	(*add_one)(struct queue *, const struct queue_job_new *,
		    int64_t now, int64_t *, int *);
	/*
	 * A whole claim, heartbeat, complete or fail (queue_lease.c's
	 * calls), where the backend runs the lease algorithm itself
	 * (PostgreSQL: one statement each, its functions); NULL: the
	 * algorithm runs on the primitives below. end's flags are
	 * queue_fail's, or QUEUE_LEASE_DONE; retry_ms the backoff of a
	 * failure that may be retried.
	 */
	int	(*claim)(struct queue *, const char *, uint64_t, unsigned,
		    struct queue_job *);
	int	(*heartbeat)(struct queue *, int64_t, int, const char *,
		    uint64_t);
	int	(*end)(struct queue *, int64_t, int, const char *,
		    const struct queue_result *, unsigned, uint64_t);
	/*
	 * Leases: the primitives queue_lease.c's one algorithm runs on
	 * where claim, heartbeat and end are NULL (SQLite); begin, commit,
	 * rollback, now, expire and notify serve queue_add.c and
	 * queue_admin.c too, on every backend. Each returns 0, or -1 with
	 * the error set, unless it says more; all but begin run inside the
	 * transaction begin opened.
	 */
	/* A transaction that writes: SQLite takes the database's write
	 * lock first (BEGIN IMMEDIATE); PostgreSQL begins, and its rows are
	 * locked as they are read. */
	int	(*begin)(struct queue *);
	/* Commit; a failed commit rolls back. */
	int	(*commit)(struct queue *);
	/* Keeps errno and the error message of the failure it follows. */
	void	(*rollback)(struct queue *);
	/* The call's time (see above), read after the locks waited for. */
	int	(*now)(struct queue *, int64_t *);
	/* Claims that count running jobs (max_running) take turns here,
	 * before the time is read; NULL where begin already serializes
	 * every claim (SQLite). */
	int	(*running_lock)(struct queue *);
	/* Jobs running on a live lease at now, every worker's. */
	int	(*running)(struct queue *, int64_t now, int64_t *n);
	/* The next claimable job (queued or retrying with run_at reached,
	 * or running with its lease expired), in claim order, locked
	 * against other claims: 1 found, 0 none, -1 error. */
	int	(*next)(struct queue *, int64_t now, struct queue_cand *);
	/* The candidate's attempt ends "lease expired" with why; unless
	 * end is QUEUE_RUNNING (it may run again), the job ends too, in
	 * status end with why as its error. */
	int	(*expire)(struct queue *, const struct queue_cand *,
		    int64_t now, const char *why, enum queue_status end);
	/* Lease the candidate to worker until lease_until: the job runs,
	 * its next attempt starts at now, a cancel asked is forgotten. */
	int	(*take)(struct queue *, const struct queue_cand *,
		    const char *worker, int64_t now, int64_t lease_until);
	/* One job by id: 0, or -1 (ENOENT: no such job). */
	int	(*job_read)(struct queue *, int64_t, struct queue_job *);
	/* Extend the lease worker holds on attempt of job until
	 * lease_until: 1 with *cancel_asked, 0 when it does not hold it. */
	int	(*extend)(struct queue *, int64_t job, int attempt,
		    const char *worker, int64_t lease_until,
		    int *cancel_asked);
	/* Does worker hold attempt of job (running, not taken since)? 1
	 * with the job's limits, the row locked until the end of the
	 * transaction; 0 no; -1 error. */
	int	(*holder)(struct queue *, int64_t job, int attempt,
		    const char *worker, int *max_attempts, int *cancel_asked);
	/* A finished attempt's result onto job: status, run_at (< 0: kept
	 * as it is), finished, the lease cleared, and every field of r.
	 * The one place a backend writes a queue_result. */
	int	(*result_set)(struct queue *, int64_t job, enum queue_status,
		    int64_t run_at, int64_t finished,
		    const struct queue_result *);
	/* The attempt's row ends at now with outcome, error and run id. */
	int	(*attempt_end)(struct queue *, int64_t job, int attempt,
		    int64_t now, const char *outcome, const char *error,
		    int64_t run_id);
	/* Tell idle workers a slot may be free, on commit; NULL: the
	 * backend has no way to (wait_fd below). */
	int	(*notify)(struct queue *);
	/*
	 * cancel, retry and purge (queue_admin.c), inside begin's
	 * transaction, with expire and notify above.
	 */
	/* A job's status, lease end and attempts, its row locked until
	 * the end of the transaction: 1 found, 0 no such job, -1 error. */
	int	(*status)(struct queue *, int64_t, enum queue_status *,
		    int64_t *lease_until, int *attempts);
	/* The running job's worker is asked to stop it. */
	int	(*cancel_ask)(struct queue *, int64_t);
	/* The job ends cancelled at now. */
	int	(*cancel_now)(struct queue *, int64_t, int64_t now);
	/* Queued again at now, its attempts for a new round: job if dead
	 * or cancelled, or (job 0) every dead job; *rows how many. */
	int	(*requeue)(struct queue *, int64_t, int64_t now,
		    int64_t *rows);
	/* The finished jobs of mask's statuses finished before, with
	 * their attempts; *n jobs removed. */
	int	(*purge_rows)(struct queue *, unsigned, int64_t, uint64_t *);
	/* The rest, each done whole by the backend. */
	/* Jobs of a status (-1 every one) by id; limit > 0: the newest
	 * limit of them, still in id order. */
	int	(*list)(struct queue *, int, unsigned, struct queue_job **,
		    size_t *);
	int	(*get)(struct queue *, int64_t, struct queue_job *,
		    struct queue_attempt **, size_t *);
	int	(*counts)(struct queue *, struct queue_counts *);
	/* struct queue_stats at the backend's time, in one snapshot;
	 * window_ms > 0. */
	int	(*stats)(struct queue *, uint64_t, struct queue_stats *);
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
	int			 absent;	/* open found no queue there
						   (queue_absent) */
	int			 final;		/* the last error will not pass
						   by trying again
						   (queue_err_final) */
	char			 err[QUEUE_ERR_MAX];
};

/* queue.c */
int	queue_seterr(struct queue *, const char *, ...)
	    __attribute__((format(printf, 2, 3)));
/* Like queue_seterr, and errno = ENOENT for the caller (no such job). */
int	queue_notfound(struct queue *, int64_t);
double	queue_jitter(struct queue *);
/* No queue at where (a path, a masked URL), because why; errno ENOENT. */
int	queue_absent(struct queue *, const char *, const char *);

/* queue_row.c */
/* One row of QUEUE_JOB_COLS into j: 0, or -1 out of memory (j freed). A
 * status not ours reads as dead: never run it. */
int	queue_row_job(const struct queue_row *, struct queue_job *);

/* queue_add.c: all or nothing, in one transaction */
int	queue_add_all(struct queue *, const struct queue_job_new *, size_t,
	    int64_t *, int *);

/* queue_admin.c: cancel, retry and purge over the backend's primitives */
int	queue_admin_cancel(struct queue *, int64_t);
int	queue_admin_retry(struct queue *, int64_t);
int	queue_admin_retry_dead(struct queue *, uint64_t *);
int	queue_admin_purge(struct queue *, unsigned, int64_t, uint64_t *);

/* queue_lease.c */
/* The end of a transaction whose body returned rc: rolled back on -1,
 * else committed; rc, or -1 when the commit failed. */
int	queue_lease_close(struct queue *, int);
int	queue_lease_claim(struct queue *, const char *, uint64_t, unsigned,
	    struct queue_job *);
int	queue_lease_heartbeat(struct queue *, int64_t, int, const char *,
	    uint64_t);
int	queue_lease_complete(struct queue *, int64_t, int, const char *,
	    const struct queue_result *);
int	queue_lease_fail(struct queue *, int64_t, int, const char *,
	    const struct queue_result *, unsigned);

/* queue_sqlite.c */
extern const struct queue_ops queue_sqlite_ops;
/* queue_pg.c: in the PostgreSQL module (queue_load.c) */
extern const struct queue_ops queue_pg_ops;

/* queue_load.c: the PostgreSQL backend's table, from the module
 * QUEUE_MODULE_FILE (loaded once); NULL with err filled (errno ENOPKG)
 * when it cannot be loaded. */
#define QUEUE_MODULE_FILE	"warren-queue-pg.so"
const struct queue_ops	*queue_load_pg(char *, size_t);

/* queue_module.c: the module's build, which the loader checks against
 * its own: the same version, the same layout of the two structs. */
struct queue_module_abi {
	char	 version[32];
	size_t	 ops_size, queue_size;
};
#define QUEUE_MODULE_ABI_INIT	{ WARREN_VERSION, \
	sizeof(struct queue_ops), sizeof(struct queue) }

#endif

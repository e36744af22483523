/*
 * The SQLite backend's internals, shared by queue_sqlite*.c: the
 * connection, its cached statements and the helpers around them.
 */
#ifndef WARREN_QUEUE_SQLITE_INT_H
#define WARREN_QUEUE_SQLITE_INT_H

#include <limits.h>

#include <sqlite3.h>

#include "queue/queue_int.h"

/* Cached statements; the SQL is in queue_sqlite.c's table. */
enum qs_stmt_id {
	QS_BEGIN = 0,		/* BEGIN IMMEDIATE */
	QS_COMMIT,
	QS_ROLLBACK,
	QS_KEY_FIND,
	QS_INSERT,
	QS_RUNNING_COUNT,
	QS_NEXT,
	QS_ATTEMPT_EXPIRE,
	QS_JOB_EXPIRED_END,
	QS_TAKE,
	QS_ATTEMPT_START,
	QS_JOB_GET,
	QS_HEARTBEAT,
	QS_ATTEMPT_END,
	QS_HOLDER,
	QS_RESULT_SET,
	QS_STATUS,
	QS_CANCEL_NOW,
	QS_CANCEL_ASK,
	QS_RETRY,
	QS_RETRY_DEAD,
	QS_PURGE_ATTEMPTS,
	QS_PURGE_JOBS,
	QS_LIST,
	QS_ATTEMPTS,
	QS_COUNTS,
	QS_READ_BEGIN,		/* BEGIN (deferred): one snapshot to read */
	QS_RATE_GET,
	QS_RATE_PUT,
	QS_CHANGES_GET,
	QS_APPLIED,
	QS_LIST_NEWEST,
	QS_STATS,
	QS__COUNT
};

struct queue_sqlite {
	sqlite3		*db;
	char		 path[PATH_MAX];
	sqlite3_stmt	*stmts[QS__COUNT];
};

/* queue_sqlite.c */
sqlite3_stmt	*qs_stmt(struct queue *, enum qs_stmt_id);
int		 qs_dberr(struct queue *, const char *, ...)
		    __attribute__((format(printf, 2, 3)));
int		 qs_run(struct queue *, enum qs_stmt_id, const char *);
int		 qs_begin(struct queue *);
int		 qs_commit(struct queue *);
void		 qs_rollback(struct queue *);
int		 qs_bind_text(sqlite3_stmt *, int, const char *);
int		 qs_job_row(sqlite3_stmt *, struct queue_job *);
int		 qs_job_read(struct queue *, int64_t, struct queue_job *);
const char	*qs_status(enum queue_status);

/* queue_sqlite_lease.c */
/* queue_int.h's lease primitives (struct queue_ops) */
int	qs_now(struct queue *, int64_t *);
int	qs_running(struct queue *, int64_t, int64_t *);
int	qs_next(struct queue *, int64_t, struct queue_cand *);
int	qs_expire(struct queue *, const struct queue_cand *, int64_t,
	    const char *, enum queue_status);
int	qs_take(struct queue *, const struct queue_cand *, const char *,
	    int64_t, int64_t);
int	qs_extend(struct queue *, int64_t, int, const char *, int64_t, int *);
int	qs_holder(struct queue *, int64_t, int, const char *, int *, int *);
int	qs_result_set(struct queue *, int64_t, enum queue_status, int64_t,
	    int64_t, const struct queue_result *);
int	qs_attempt_end(struct queue *, int64_t, int, int64_t, const char *,
	    const char *, int64_t);

/* queue_sqlite_apply.c */
int	qs_changes(struct queue *, int64_t, void **, size_t *);
int	qs_applied(struct queue *, int64_t, const char *);

/* queue_sqlite_admin.c */
/* queue_int.h's primitives of cancel, retry, purge (struct queue_ops) */
int	qs_job_status(struct queue *, int64_t, enum queue_status *, int64_t *,
	    int *);
int	qs_cancel_ask(struct queue *, int64_t);
int	qs_cancel_now(struct queue *, int64_t, int64_t);
int	qs_requeue(struct queue *, int64_t, int64_t, int64_t *);
int	qs_purge_rows(struct queue *, unsigned, int64_t, uint64_t *);
int	qs_list(struct queue *, int, unsigned, struct queue_job **, size_t *);
int	qs_get(struct queue *, int64_t, struct queue_job *,
	    struct queue_attempt **, size_t *);
int	qs_counts(struct queue *, struct queue_counts *);
int	qs_stats(struct queue *, uint64_t, struct queue_stats *);

/* queue_sqlite_rate.c */
int	qs_rate(struct queue *, const char *, const struct queue_rate_req *,
	    uint64_t *);

#endif

/*
 * The PostgreSQL backend's internals, shared by queue_pg*.c: the
 * connection (lost and found again with backoff), statements with their
 * parameters as text, and the helpers around them.
 */
#ifndef WARREN_QUEUE_PG_INT_H
#define WARREN_QUEUE_PG_INT_H

#include <libpq-fe.h>

#include "queue/queue_int.h"

/* queue_meta's schema_version of this program's PostgreSQL tables. */
#define QUEUE_PG_SCHEMA_VERSION	3

/* The channel NOTIFY announces new work on (queue_wait_fd). */
#define QP_CHANNEL		"warren_queue"

/* Reconnecting after a lost connection: waits from QP_BACKOFF_MIN_MS,
 * doubled per failure, up to QP_BACKOFF_MAX_MS; a call meanwhile fails at
 * once rather than block the worker's loop. */
#define QP_BACKOFF_MIN_MS	100
#define QP_BACKOFF_MAX_MS	10000

#define QP_PARAMS_MAX	16
#define QP_URL_MAX	4096

struct queue_pg {
	PGconn		*conn;
	char		 url[QP_URL_MAX];
	char		 shown[QP_URL_MAX];	/* url, its password masked */
	int		 listening;	/* LISTEN done on this connection */
	int		 woken;		/* a NOTIFY seen, not yet told */
	unsigned	 prepared;	/* 1 << enum qp_prep_id: prepared
					   on this connection */
	unsigned	 failures;	/* connects failed in a row */
	int64_t		 retry_at;	/* monotonic ms of the next connect */
};

/* queue_end's p_flags (queue_pg.c) */
#define QP_END_DONE		1
#define QP_END_CANCELLED	2
#define QP_END_FINAL		4

/* Statements prepared once on each connection (qp_prepared). */
enum qp_prep_id {
	QP_PREP_CLAIM = 0,
	QP_PREP_END,
	QP_PREP_BEAT,
	QP_PREP__COUNT
};

/* A statement's parameters, as text. */
struct qp_params {
	const char	*v[QP_PARAMS_MAX];
	char		 num[QP_PARAMS_MAX][24];
	char		*own[QP_PARAMS_MAX];	/* text made valid UTF-8 */
	int		 len[QP_PARAMS_MAX];	/* binary ones' lengths */
	int		 fmt[QP_PARAMS_MAX];	/* 1: binary (qp_bin) */
	int		 n;
	int		 binary;		/* one is binary */
	int		 binary_result;		/* rows come as binary */
};

/* queue_pg.c */
struct queue_pg	*qp_be(struct queue *);
int		 qp_ready(struct queue *);
PGresult	*qp_exec(struct queue *, const char *, struct qp_params *,
		    const char *);
PGresult	*qp_prepared(struct queue *, enum qp_prep_id, const char *,
		    struct qp_params *, const char *);
int		 qp_cmd(struct queue *, const char *, struct qp_params *,
		    const char *, int64_t *);
int		 qp_begin(struct queue *);
int		 qp_commit(struct queue *);
void		 qp_rollback(struct queue *);
int		 qp_now(struct queue *, int64_t *);
void		 qp_i64(struct qp_params *, int64_t);
void		 qp_str(struct qp_params *, const char *);
/* A bytea parameter: len bytes at data, sent as binary. */
void		 qp_bin(struct qp_params *, const void *, size_t);
int64_t		 qp_int(const PGresult *, int, int);
int		 qp_job_row(const PGresult *, int, struct queue_job *);
int		 qp_job_read(struct queue *, int64_t, struct queue_job *);

/* queue_pg_lease.c */
/* queue_int.h's whole lease calls and expire (struct queue_ops) */
int	qp_claim(struct queue *, const char *, uint64_t, unsigned,
	    struct queue_job *);
int	qp_heartbeat(struct queue *, int64_t, int, const char *, uint64_t);
int	qp_end(struct queue *, int64_t, int, const char *,
	    const struct queue_result *, unsigned, uint64_t);
int	qp_expire(struct queue *, const struct queue_cand *, int64_t,
	    const char *, enum queue_status);

/* queue_pg_apply.c */
int	qp_changes(struct queue *, int64_t, void **, size_t *);
int	qp_applied(struct queue *, int64_t, const char *);

/* queue_pg_admin.c */
/* queue_int.h's primitives of cancel, retry, purge (struct queue_ops) */
int	qp_job_status(struct queue *, int64_t, enum queue_status *, int64_t *,
	    int *);
int	qp_cancel_ask(struct queue *, int64_t);
int	qp_cancel_now(struct queue *, int64_t, int64_t);
int	qp_requeue(struct queue *, int64_t, int64_t, int64_t *);
int	qp_purge_rows(struct queue *, unsigned, int64_t, uint64_t *);
int	qp_list(struct queue *, int, unsigned, struct queue_job **, size_t *);
int	qp_get(struct queue *, int64_t, struct queue_job *,
	    struct queue_attempt **, size_t *);
int	qp_counts(struct queue *, struct queue_counts *);
int	qp_stats(struct queue *, uint64_t, struct queue_stats *);
int	qp_rate(struct queue *, const char *, const struct queue_rate_req *,
	    uint64_t *);
int	qp_wait_fd(struct queue *);
int	qp_woken(struct queue *);

#endif

/*
 * The batch queue: jobs added by `warren queue add`, leased to
 * `warren queue work` processes, each run as one `warren run` (its own
 * agent tree, memory graph and copy-on-write layer), retried with backoff,
 * their results kept. docs/queue.md is the user's page.
 *
 * A backend keeps the queue: SQLite (queue_sqlite.c: by default a file of
 * its own beside the state database, $XDG_STATE_HOME/warren/queue.db,
 * WAL; queue_path.c) or PostgreSQL (queue_pg.c), behind the same
 * functions (struct queue_ops, private to queue/). Everything here is durable once a call returns 0.
 *
 * Lifecycle of a job:
 *
 *	queued --claim--> running --complete--> done
 *	   ^                 |  \--fail--> retrying --(run_at)--> (claimable)
 *	   |                 |       \--(attempts used up)--> dead
 *	   |                 \--lease expired: the next claim takes it
 *	   |                    (that attempt fails "lease expired")
 *	   +--retry-- dead, cancelled
 *	queued/retrying --cancel--> cancelled; running --cancel--> cancel asked
 *	(the holder's next heartbeat says so; it stops the run, then
 *	queue_fail with QUEUE_FAIL_CANCELLED ends the job cancelled)
 *
 * A result is recorded once: complete and fail are refused (1) unless the
 * caller still holds the lease of that attempt (worker id and attempt
 * number), so a worker that lost its lease cannot overwrite the attempt
 * that followed.
 *
 * Times are milliseconds since the epoch, on the queue's clock: SQLite
 * takes the machine's, PostgreSQL the database server's (so that leases
 * and backoffs mean the same on every machine), and a clock a test sets
 * with queue_set_clock replaces either. Functions return 0 or -1 with queue_errmsg() set (what
 * failed, on which job, what to do), unless said otherwise.
 */
#ifndef WARREN_QUEUE_H
#define WARREN_QUEUE_H

#include <stddef.h>
#include <stdint.h>

#define QUEUE_ERR_MAX		512
#define QUEUE_DEFAULT_ATTEMPTS	3
#define QUEUE_DEFAULT_LEASE_MS	60000	/* heartbeats every lease / 3 */
#define QUEUE_BACKOFF_BASE_MS	2000	/* attempt n waits base * 2^(n-1) */
#define QUEUE_BACKOFF_MAX_MS	(30u * 60 * 1000)

enum queue_status {
	QUEUE_QUEUED = 0,	/* claimable now */
	QUEUE_RUNNING,		/* leased to a worker */
	QUEUE_RETRYING,		/* failed; claimable again at run_at */
	QUEUE_DONE,
	QUEUE_DEAD,		/* failed max_attempts times */
	QUEUE_CANCELLED,
};
#define QUEUE_NSTATUS	6

/* What `queue add` gives; NULL strings and 0 numbers take defaults. */
struct queue_job_new {
	const char	*task;		/* required, not empty */
	const char	*profile;	/* the root agent's; NULL: orchestrator */
	const char	*workspace;	/* absolute, canonical; required */
	const char	*schema;	/* JSON Schema text for the result, or NULL */
	const char	*key;		/* idempotency key, or NULL */
	const char	*params;	/* JSON object text (from --jsonl), or NULL */
	int		 priority;	/* higher first; default 0 */
	int		 max_attempts;	/* default QUEUE_DEFAULT_ATTEMPTS */
	uint64_t	 timeout_ms;	/* one attempt's wall clock; 0 = run's */
	uint64_t	 budget;	/* tokens per attempt; 0 = none */
};

/* What an attempt produced (complete or fail). */
struct queue_result {
	const char	*answer;	/* the root's final answer, or NULL */
	const char	*output;	/* structured output (JSON text), or NULL */
	const char	*error;		/* fail: why (required) */
	int64_t		 run_id;	/* the warren run, 0 if none started */
	uint64_t	 tokens_in, tokens_out;
	int64_t		 wall_ms;
	const char	*diff_stat;	/* the layer's `diff --stat`, or NULL */
	/* complete: the layer's change set (workspace/cow.h, cow_pack), so
	 * that any machine can apply it; NULL when the run changed nothing
	 * or the set was over COW_PACK_MAX (then only run_where has it). */
	const void	*changes;
	size_t		 changes_len;
	const char	*run_where;	/* the state database run_id is in:
					   "HOST:PATH" (queue_where) */
};

struct queue_job {
	int64_t			 id;
	char			*task, *profile, *workspace, *schema, *key;
	char			*params;
	enum queue_status	 status;
	int			 priority;
	int			 attempts;	/* started so far */
	int			 max_attempts;
	uint64_t		 timeout_ms, budget;
	int64_t			 created_ms;
	int64_t			 run_at_ms;	/* claimable from */
	int64_t			 lease_until_ms; /* running: lease end */
	int64_t			 finished_ms;	/* done, dead, cancelled */
	char			*worker;	/* running: the lease holder */
	int			 cancel_asked;
	/* The last attempt's result (done) or error (retrying, dead). */
	char			*answer, *output, *error, *diff_stat;
	int64_t			 run_id;
	uint64_t		 tokens_in, tokens_out;
	int64_t			 wall_ms;
	size_t			 changes_len;	/* the stored change set's
						   bytes (queue_changes) */
	char			*run_where;
	int64_t			 applied_ms;	/* `queue apply` applied its
						   changes; 0 not yet */
	char			*applied_by;	/* where: "HOST:WORKSPACE" */
};

struct queue_attempt {
	int			 n;		/* 1, 2, ... */
	char			*worker;
	int64_t			 started_ms, ended_ms;	/* 0: not ended */
	char			*outcome;	/* "done", "failed", "lease
						   expired", "cancelled" */
	char			*error;
	int64_t			 run_id;
};

struct queue_counts {
	uint64_t	 n[QUEUE_NSTATUS];	/* by enum queue_status */
};

/* What `queue stats` shows, read in one snapshot (queue_stats). */
#define QUEUE_STATS_WINDOW_MS	(10u * 60 * 1000)	/* the rate's */
struct queue_stats {
	struct queue_counts counts;	/* jobs by status */
	uint64_t	 attempts;	/* every attempt of the jobs there */
	uint64_t	 attempts_failed; /* those ended other than done */
	uint64_t	 done_recent;	/* jobs done since now - window */
	int64_t		 now_ms;	/* the queue's time of the snapshot */
	/* The start of the earliest attempt running, or ended since now -
	 * window (when the work of the window began); 0: none. */
	int64_t		 first_active_ms;
	int64_t		 oldest_queued;	/* the job queued the longest, 0 */
	int64_t		 oldest_queued_ms; /* claimable since (its run_at) */
};

struct queue;

/* queue.c: the frontend (dispatches to the backend) */
/*
 * url: a file path (SQLite; created with its directory, 0700) or a
 * postgresql:// (postgres://) URL or "postgresql:" followed by libpq
 * keywords. NULL or "": queue.db beside the state database (queue_path).
 * errsz bytes of err say why on NULL (a URL's password masked). A SQLite
 * file whose write lock another process holds is waited for, up to
 * QUEUE_OPEN_WAIT_MS, said once on stderr with who holds it.
 */
#define QUEUE_OPEN_WAIT_MS	30000
struct queue	*queue_open(const char *url, char *err, size_t errsz);
/* queue_open with flags: QUEUE_OPEN_EXISTING opens only a queue that is
 * there (a SQLite file with the queue's tables, a PostgreSQL database
 * with them), making nothing: otherwise NULL with errno ENOENT and err
 * saying so. Commands that only read or steer jobs take it. */
#define QUEUE_OPEN_EXISTING	0x1
struct queue	*queue_open_flags(const char *url, unsigned flags, char *err,
		    size_t errsz);
void		 queue_close(struct queue *);
const char	*queue_errmsg(const struct queue *);
/* 1 if the last error will not pass by trying again: a write past the
 * process's file size limit (ulimit -f), which only raising it cures. */
int		 queue_err_final(const struct queue *);
int64_t		 queue_now(struct queue *);
const char	*queue_status_name(enum queue_status);
int		 queue_status_parse(const char *, enum queue_status *);

/* Add n jobs, all or nothing: every job is checked first, then all are
 * added in one transaction; on any error none is (the error names the
 * job, counted from 1). ids[i] and existed[i] as queue_add's (queue_testapi.h); a key
 * given twice in the batch adds the job once, the second finds it. */
int		 queue_add_many(struct queue *, const struct queue_job_new *,
		    size_t n, int64_t *ids, int *existed);
/*
 * Lease the next claimable job (queued, or retrying past its run_at, or
 * running with an expired lease), highest priority then oldest run_at,
 * to worker for lease_ms: 1 with *out filled (attempts counts this one),
 * 0 none claimable, -1 error. max_running > 0: none is claimed while that
 * many jobs run across every worker of the queue.
 */
int		 queue_claim(struct queue *, const char *worker,
		    uint64_t lease_ms, unsigned max_running,
		    struct queue_job *out);
/* Extend the lease: 0 held, 1 lost (expired and taken, or the job is
 * gone), 2 held but cancel asked, -1 error. */
int		 queue_heartbeat(struct queue *, int64_t job, int attempt,
		    const char *worker, uint64_t lease_ms);
/* The attempt succeeded: 0 recorded, 1 refused (lease lost), -1 error. */
int		 queue_complete(struct queue *, int64_t job, int attempt,
		    const char *worker, const struct queue_result *);
#define QUEUE_FAIL_CANCELLED	0x1	/* it was stopped for a cancel */
#define QUEUE_FAIL_FINAL	0x2	/* no retry (e.g. a usage error) */
/* The attempt failed: retrying with backoff, or dead when its attempts
 * are used up; cancelled with QUEUE_FAIL_CANCELLED. 0, 1 (lease lost),
 * -1. */
int		 queue_fail(struct queue *, int64_t job, int attempt,
		    const char *worker, const struct queue_result *,
		    unsigned flags);
/* queued or retrying: cancelled now (0); running: cancel asked (0, the
 * holder stops it); done, dead or cancelled: 1 (nothing to cancel). */
int		 queue_cancel(struct queue *, int64_t job);
/* A dead or cancelled job queued again with fresh attempts: 0, or 1 if it
 * is in another state. */
int		 queue_retry(struct queue *, int64_t job);
int		 queue_retry_dead(struct queue *, uint64_t *n);
/* Remove jobs in the statuses of mask (1 << status) that finished before
 * before_ms, with their attempts. */
int		 queue_purge(struct queue *, unsigned mask, int64_t before_ms,
		    uint64_t *n);
/* Jobs in status (or every job with -1), by id; free with
 * queue_jobs_free. */
int		 queue_list(struct queue *, int status, struct queue_job **v,
		    size_t *n);
/* The newest limit (> 0) of them, by id, in id order. */
int		 queue_list_newest(struct queue *, int status, unsigned limit,
		    struct queue_job **v, size_t *n);
/* One job and every attempt: 0, or -1 (ENOENT: no such job). */
int		 queue_get(struct queue *, int64_t id, struct queue_job *,
		    struct queue_attempt **attempts, size_t *nattempts);
int		 queue_counts(struct queue *, struct queue_counts *);
/* The queue's figures at its time (struct queue_stats), the rate's
 * window window_ms (> 0), in one snapshot. */
int		 queue_stats(struct queue *, uint64_t window_ms,
		    struct queue_stats *);
/* Jobs done a minute: done_recent over the minutes from the later of
 * now - window_ms and first_active_ms to now; 0 when no attempt was
 * active in the window. *span_ms says how long that was. */
double		 queue_stats_rate(const struct queue_stats *, uint64_t window_ms,
		    int64_t *span_ms);
/*
 * New work: a descriptor that becomes readable when another process may
 * have added or freed a job (PostgreSQL's LISTEN/NOTIFY), for the
 * caller's poll(); -1 when the backend has none (SQLite: look again
 * now and then) or cannot say now (a lost connection). Valid until the
 * next call on q.
 */
int		 queue_wait_fd(struct queue *);
/* 1 if new work was announced since the last call (reads the
 * descriptor's pending data), else 0. */
int		 queue_woken(struct queue *);
/* A job's stored change set: 0 with *data (malloc'd) and *len, *data
 * NULL when it has none; -1 (ENOENT: no such job). */
int		 queue_changes(struct queue *, int64_t id, void **data,
		    size_t *len);
/* The job's changes were applied (by: where, "HOST:WORKSPACE"): 0, -1. */
int		 queue_applied(struct queue *, int64_t id, const char *by);
/* Is url a PostgreSQL one? */
int		 queue_url_is_pg(const char *url);

/* queue_path.c: where the queue lives by default */
/* Is url the default (NULL or "")? */
int		 queue_url_default(const char *url);
/* The SQLite file of a queue url that is not PostgreSQL: url itself, or
 * for the default queue.db in the state database's directory (WARREN_DB's,
 * else $XDG_STATE_HOME/warren). 0, or -1 with errno. */
int		 queue_path(char *out, size_t outsz, const char *url);
/* Does the state database statedb hold the queue of an older warren (its
 * queue_jobs table, with jobs)? 1 with *jobs and *open (queued, running,
 * retrying), else 0 (no file, no table, no job, not readable). */
int		 queue_legacy(const char *statedb, int64_t *jobs, int64_t *open);
void		 queue_job_free(struct queue_job *);
void		 queue_jobs_free(struct queue_job *, size_t);
void		 queue_attempts_free(struct queue_attempt *, size_t);

/*
 * queue_rate.c: the LLM rate limits every process on one queue database
 * shares (docs/queue.md "Shared limits"). Each endpoint (a base URL) has
 * one row: a generic cell rate algorithm (GCRA) for requests and one for
 * tokens, and a pause a 429's Retry-After sets. A run asks before each
 * request (TAKE), says what the answer cost (SPEND), and reports a 429
 * (PAUSE). Requests are spaced 60000 / rpm ms apart with a burst of one
 * second's worth; tokens are charged when spent, so a request is held
 * while the tokens already spent exceed tpm's rate (plus one second's
 * worth). Times are on the queue's clock.
 */
enum queue_rate_op {
	QUEUE_RATE_TAKE = 0,	/* may one request go now? */
	QUEUE_RATE_SPEND,	/* n tokens (in + out) were spent */
	QUEUE_RATE_PAUSE,	/* a 429: nobody sends for n ms */
};

struct queue_rate_req {
	enum queue_rate_op	 op;
	uint32_t		 rpm;	/* requests a minute; 0: no limit */
	uint64_t		 tpm;	/* tokens a minute; 0: no limit */
	uint64_t		 n;	/* SPEND: tokens; PAUSE: ms */
};

/* One endpoint's row. 0 everywhere: nothing sent yet. */
struct queue_rate_state {
	int64_t		 req_tat_ms;	/* when the request rate is caught up */
	int64_t		 tok_tat_ms;	/* when the token rate is caught up */
	int64_t		 pause_until_ms; /* the latest Retry-After's end */
};

#define QUEUE_RATE_ENDPOINT_MAX	512
/* At most this many ms a PAUSE holds (a hostile Retry-After). */
#define QUEUE_RATE_PAUSE_MAX_MS	(10u * 60 * 1000)

/*
 * Apply req to endpoint's row at the queue's time, in one transaction:
 * 0 with *wait_ms 0 when TAKE was granted (and counted), or the ms to
 * wait before asking again (nothing counted); SPEND and PAUSE set
 * *wait_ms 0. endpoint: not empty, at most QUEUE_RATE_ENDPOINT_MAX bytes.
 */
int		 queue_rate(struct queue *, const char *endpoint,
		    const struct queue_rate_req *, uint64_t *wait_ms);
/* The pure step queue_rate's backends run on the row they read: returns
 * *wait_ms's value and updates *st when granted (or for SPEND, PAUSE). */
uint64_t	 queue_rate_step(struct queue_rate_state *st, int64_t now_ms,
		    const struct queue_rate_req *);

/* queue_backoff.c */
/* The wait before attempt (attempt >= 2): QUEUE_BACKOFF_BASE_MS *
 * 2^(attempt - 2), capped at QUEUE_BACKOFF_MAX_MS, with full jitter in
 * [half, whole] drawn from r (0 <= r < 1). */
uint64_t	 queue_backoff_ms(int attempt, double r);

#endif

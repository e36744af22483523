/*
 * The queue on PostgreSQL, for many machines on one database: the same
 * jobs, leases and results as on SQLite (queue_sqlite.c is the model;
 * docs/queue.md "Running on many machines"), through libpq. qp_ is this
 * backend's prefix (queue_pg*.c).
 *
 * What differs from SQLite:
 * - A claim, a heartbeat and a result are one prepared statement each
 *   (queue_pg_lease.c), the lease algorithm run by the server in the
 *   functions queue_claim and queue_end that the tables carry.
 * - A claim locks its candidate with SELECT ... FOR UPDATE SKIP LOCKED,
 *   so claims on many machines do not queue behind each other; with
 *   max_running they are serialized by a transaction advisory lock, the
 *   count of running jobs being what they share.
 * - Times come from the database server's clock (clock_timestamp()), one
 *   reading per call, so that a lease or a backoff means the same on
 *   every machine whatever its own clock says; a test's clock
 *   (queue_set_clock) replaces it.
 * - A change that makes work (add, retry, a result that frees a slot)
 *   sends NOTIFY warren_queue; idle workers LISTEN (queue_wait_fd).
 * - A lost connection is found again on a later call, with backoff
 *   (QP_BACKOFF_*): meanwhile calls fail at once, which a worker takes as
 *   "no claim now", and its leases run out unless it is back in time.
 * - Text that is not valid UTF-8 (an error line a run printed) is kept
 *   with its bad bytes as \xNN: PostgreSQL refuses invalid text.
 * - The schema is versioned in queue_meta as on SQLite; creating or
 *   migrating it takes an advisory lock, so two first opens do not race.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/clock.h"
#include "common/str.h"
#include "common/urlmask.h"
#include "queue/queue_pg_int.h"

/* pg_advisory_xact_lock keys: "warren q" in ASCII, and one more. */
#define QP_LOCK_SCHEMA	"8603505752355025265"

static const char qp_schema_v1[] =
	"CREATE TABLE queue_meta ("
	" name text PRIMARY KEY,"
	" value bigint NOT NULL);"
	"CREATE TABLE queue_jobs ("
	" id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,"
	" task text NOT NULL, profile text, workspace text NOT NULL,"
	" schema text, key text, params text,"
	" status text NOT NULL DEFAULT 'queued',"
	" priority integer NOT NULL DEFAULT 0,"
	" attempts integer NOT NULL DEFAULT 0,"
	" max_attempts integer NOT NULL,"
	" round_attempts integer NOT NULL,"
	" timeout_ms bigint NOT NULL DEFAULT 0,"
	" budget bigint NOT NULL DEFAULT 0,"
	" created_ms bigint NOT NULL,"
	" run_at_ms bigint NOT NULL,"
	" lease_until_ms bigint NOT NULL DEFAULT 0,"
	" finished_ms bigint NOT NULL DEFAULT 0,"
	" worker text,"
	" cancel_asked integer NOT NULL DEFAULT 0,"
	" answer text, output text, error text, diff_stat text,"
	" run_id bigint NOT NULL DEFAULT 0,"
	" tokens_in bigint NOT NULL DEFAULT 0,"
	" tokens_out bigint NOT NULL DEFAULT 0,"
	" wall_ms bigint NOT NULL DEFAULT 0);"
	"CREATE UNIQUE INDEX queue_jobs_key ON queue_jobs(key)"
	" WHERE key IS NOT NULL;"
	"CREATE INDEX queue_jobs_claim ON queue_jobs(priority DESC,"
	" run_at_ms, id) WHERE status IN ('queued', 'retrying', 'running');"
	"CREATE INDEX queue_jobs_status ON queue_jobs(status, finished_ms);"
	"CREATE TABLE queue_attempts ("
	" job bigint NOT NULL,"
	" n integer NOT NULL,"
	" worker text NOT NULL,"
	" started_ms bigint NOT NULL,"
	" ended_ms bigint NOT NULL DEFAULT 0,"
	" outcome text, error text,"
	" run_id bigint NOT NULL DEFAULT 0,"
	" PRIMARY KEY (job, n));"
	"CREATE TABLE queue_rate ("
	" endpoint text PRIMARY KEY,"
	" req_tat_ms bigint NOT NULL,"
	" tok_tat_ms bigint NOT NULL,"
	" pause_until_ms bigint NOT NULL);"
	"INSERT INTO queue_meta (name, value) VALUES ('schema_version', 1);";

/*
 * The leases' functions (schema version 3), so that a claim and a
 * result are one statement each (queue_pg_lease.c): queue_lease.c's
 * algorithm, run by the server in the statement's one transaction.
 * p_now: a test's clock, NULL for the server's (queue_clock_ms, read
 * after the locks waited for).
 */
#define QP_CLOCK_FN \
	"CREATE OR REPLACE FUNCTION queue_clock_ms() RETURNS bigint" \
	" LANGUAGE sql VOLATILE AS" \
	" 'SELECT (extract(epoch FROM clock_timestamp()) * 1000)::bigint';"
/* queue_lease_claim_locked: with max_running, claims take turns on an
 * advisory lock ("warren m"); the next job locked with SKIP LOCKED, so
 * claims pass over each other's; an expired lease ends its attempt and
 * the job with it when it may not run again (queue_lease_expire). */
#define QP_CLAIM_FN \
	"CREATE OR REPLACE FUNCTION queue_claim(p_worker text, p_lease bigint," \
	" p_max_running integer, p_now bigint) RETURNS SETOF queue_jobs" \
	" LANGUAGE plpgsql AS $f$" \
	" DECLARE v_now bigint; c record; v_end text; v_why text;" \
	" BEGIN" \
	"  IF p_max_running > 0 THEN" \
	"   PERFORM pg_advisory_xact_lock(8603505752355022189);" \
	"  END IF;" \
	"  v_now := coalesce(p_now, queue_clock_ms());" \
	"  IF p_max_running > 0 AND (SELECT count(*) FROM queue_jobs WHERE" \
	"   status = 'running' AND lease_until_ms > v_now) >= p_max_running" \
	"  THEN RETURN; END IF;" \
	"  LOOP" \
	"   SELECT id, status, attempts, max_attempts, cancel_asked, worker," \
	"    lease_until_ms INTO c FROM queue_jobs" \
	"    WHERE status IN ('queued', 'retrying', 'running')" \
	"    AND ((status <> 'running' AND run_at_ms <= v_now) OR" \
	"    (status = 'running' AND lease_until_ms <= v_now))" \
	"    ORDER BY priority DESC, run_at_ms, id LIMIT 1" \
	"    FOR UPDATE SKIP LOCKED;" \
	"   IF NOT FOUND THEN RETURN; END IF;" \
	"   EXIT WHEN c.status <> 'running';" \
	"   v_why := format('lease expired: worker %s held it until %s and" \
	" did not finish', coalesce(c.worker, '?'), c.lease_until_ms);" \
	"   UPDATE queue_attempts SET ended_ms = v_now, outcome =" \
	"    'lease expired', error = v_why WHERE job = c.id AND" \
	"    n = c.attempts AND ended_ms = 0;" \
	"   v_end := CASE WHEN c.cancel_asked <> 0 THEN 'cancelled'" \
	"    WHEN c.attempts >= c.max_attempts THEN 'dead' END;" \
	"   EXIT WHEN v_end IS NULL;" \
	"   UPDATE queue_jobs SET status = v_end, finished_ms = v_now," \
	"    lease_until_ms = 0, error = v_why WHERE id = c.id;" \
	"  END LOOP;" \
	"  UPDATE queue_jobs SET status = 'running', attempts = attempts + 1," \
	"   worker = p_worker, lease_until_ms = v_now + p_lease," \
	"   cancel_asked = 0 WHERE id = c.id;" \
	"  INSERT INTO queue_attempts (job, n, worker, started_ms)" \
	"   VALUES (c.id, c.attempts + 1, p_worker, v_now);" \
	"  RETURN QUERY SELECT * FROM queue_jobs WHERE id = c.id;" \
	" END $f$;"
/* queue_lease_record: while p_worker holds p_attempt (the row locked),
 * the result on the job, where queue_lease_to leaves it (p_flags
 * QP_END_*), and on its attempt; idle workers told. 0 recorded, 1 the
 * lease was lost. */
#define QP_END_FN \
	"CREATE OR REPLACE FUNCTION queue_end(p_job bigint, p_attempt integer," \
	" p_worker text, p_now bigint, p_flags integer, p_retry_ms bigint," \
	" p_answer text, p_output text, p_error text, p_diff_stat text," \
	" p_run_id bigint, p_tokens_in bigint, p_tokens_out bigint," \
	" p_wall_ms bigint, p_changes bytea, p_run_where text)" \
	" RETURNS integer LANGUAGE plpgsql AS $f$" \
	" DECLARE j record; v_now bigint; v_st text; v_run_at bigint;" \
	"  v_fin bigint; v_out text := 'failed';" \
	" BEGIN" \
	"  SELECT max_attempts, cancel_asked INTO j FROM queue_jobs" \
	"   WHERE id = p_job AND status = 'running' AND attempts = p_attempt" \
	"   AND worker = p_worker FOR UPDATE;" \
	"  IF NOT FOUND THEN RETURN 1; END IF;" \
	"  v_now := coalesce(p_now, queue_clock_ms());" \
	"  v_run_at := v_now; v_fin := v_now;" \
	"  IF p_flags & 1 <> 0 THEN" \
	"   v_st := 'done'; v_run_at := NULL; v_out := 'done';" \
	"  ELSIF p_flags & 2 <> 0 OR j.cancel_asked <> 0 THEN" \
	"   v_st := 'cancelled';" \
	"   IF p_flags & 2 <> 0 THEN v_out := 'cancelled'; END IF;" \
	"  ELSIF p_flags & 4 <> 0 OR p_attempt >= j.max_attempts THEN" \
	"   v_st := 'dead';" \
	"  ELSE" \
	"   v_st := 'retrying'; v_run_at := v_now + p_retry_ms; v_fin := 0;" \
	"  END IF;" \
	"  UPDATE queue_jobs SET status = v_st," \
	"   run_at_ms = coalesce(v_run_at, run_at_ms), finished_ms = v_fin," \
	"   lease_until_ms = 0, answer = p_answer, output = p_output," \
	"   error = CASE WHEN v_st = 'done' THEN NULL ELSE p_error END," \
	"   diff_stat = p_diff_stat, run_id = p_run_id," \
	"   tokens_in = p_tokens_in, tokens_out = p_tokens_out," \
	"   wall_ms = p_wall_ms," \
	"   changes = CASE WHEN v_st = 'done' THEN p_changes END," \
	"   run_where = p_run_where, applied_ms = 0, applied_by = NULL" \
	"   WHERE id = p_job;" \
	"  UPDATE queue_attempts SET ended_ms = v_now, outcome = v_out," \
	"   error = p_error, run_id = p_run_id" \
	"   WHERE job = p_job AND n = p_attempt;" \
	"  PERFORM pg_notify('" QP_CHANNEL "', '');" \
	"  RETURN 0;" \
	" END $f$;"

/* qp_migrations[i] takes version i + 1 to i + 2 and sets the version,
 * as qp_schema_v1 ends by inserting 1. */
static const char *const qp_migrations[] = {
	/* 2: results any machine applies (cmd_queue_apply.c) */
	"ALTER TABLE queue_jobs ADD COLUMN changes bytea,"
	" ADD COLUMN run_where text,"
	" ADD COLUMN applied_ms bigint NOT NULL DEFAULT 0,"
	" ADD COLUMN applied_by text;"
	"UPDATE queue_meta SET value = 2 WHERE name = 'schema_version';",
	/* 3: a claim and a result in one statement each (queue_pg_lease.c) */
	QP_CLOCK_FN QP_CLAIM_FN QP_END_FN
	"UPDATE queue_meta SET value = 3 WHERE name = 'schema_version';",
};

struct queue_pg *
qp_be(struct queue *q)
{
	return q->be;
}

/* libpq prints notices on stderr by default: a worker's terminal line
 * is not the place for "relation already exists, skipping". */
static void
qp_notice(void *arg, const char *msg)
{
	(void)arg;
	(void)msg;
}

static void
qp_take_notifies(struct queue_pg *be)
{
	PGnotify	*n;

	while ((n = PQnotifies(be->conn)) != NULL) {
		be->woken = 1;
		PQfreemem(n);
	}
}

/* libpq's message, its trailing newline cut. */
static void
qp_msg(char *buf, size_t sz, const char *m)
{
	size_t	len;

	snprintf(buf, sz, "%s", m != NULL && *m != '\0' ? m :
	    "unknown error");
	len = strlen(buf);
	while (len > 0 && (buf[len - 1] == '\n' || buf[len - 1] == ' '))
		buf[--len] = '\0';
}

static void
qp_backoff(struct queue_pg *be)
{
	uint64_t	wait = QP_BACKOFF_MIN_MS;
	unsigned	i;

	for (i = 0; i < be->failures && wait < QP_BACKOFF_MAX_MS; i++)
		wait *= 2;
	if (wait > QP_BACKOFF_MAX_MS)
		wait = QP_BACKOFF_MAX_MS;
	be->failures++;
	be->retry_at = (int64_t)(clock_mono_ms() + wait);
}

/* libpq's message about the URL may quote it ("invalid percent-encoded
 * token: \"p%zzSECRET\"", a bad URI whole): what the mask hides is
 * scrubbed from it. No memory for that: the message is not shown. */
static void
qp_scrub(const struct queue_pg *be, char *msg, size_t sz)
{
	char	url[sizeof(be->url) + 16];

	snprintf(url, sizeof(url), "%s%s", strstr(be->url, "://") != NULL ?
	    "" : "postgresql:", be->url);
	if (urlmask_scrub(url, msg, sz) == -1)
		snprintf(msg, sz, "(not shown: no memory to mask the URL "
		    "in it)");
	explicit_bzero(url, sizeof(url));
}

/*
 * Connect: keepalives and a TCP user timeout so that a machine cut off
 * from the database learns it in seconds, not at TCP's retransmission
 * limit; the URL's own settings win (it is expanded last).
 */
static int
qp_connect(struct queue *q)
{
	static const char *const keys[] = { "connect_timeout",
	    "application_name", "keepalives", "keepalives_idle",
	    "keepalives_interval", "keepalives_count", "tcp_user_timeout",
	    "dbname", NULL };
	struct queue_pg		*be = qp_be(q);
	const char		*vals[] = { "10", "warren", "1", "10", "5", "3",
	    "20000", be->url, NULL };
	char			 msg[QUEUE_ERR_MAX];

	if (be->conn != NULL)
		PQfinish(be->conn);
	be->listening = 0;
	be->prepared = 0;
	be->conn = PQconnectdbParams(keys, vals, 1);
	if (be->conn == NULL)
		return queue_seterr(q, "queue %s: out of memory", be->shown);
	if (PQstatus(be->conn) != CONNECTION_OK) {
		qp_msg(msg, sizeof(msg), PQerrorMessage(be->conn));
		qp_scrub(be, msg, sizeof(msg));
		qp_backoff(be);
		return queue_seterr(q, "queue %s: cannot connect: %s (check "
		    "the URL, that the server runs and lets this machine in)",
		    be->shown, msg);
	}
	PQsetNoticeProcessor(be->conn, qp_notice, NULL);
	be->failures = 0;
	return 0;
}

/* A connection to use: the one we have, or a new one once the backoff
 * after the last failure has passed. */
int
qp_ready(struct queue *q)
{
	struct queue_pg	*be = qp_be(q);
	int64_t		 now;

	if (be->conn != NULL && PQstatus(be->conn) == CONNECTION_OK)
		return 0;
	now = (int64_t)clock_mono_ms();
	if (be->failures > 0 && now < be->retry_at)
		return queue_seterr(q, "queue %s: no connection to the "
		    "database; trying again in %lld ms", be->shown,
		    (long long)(be->retry_at - now));
	return qp_connect(q);
}

void
qp_i64(struct qp_params *p, int64_t v)
{
	snprintf(p->num[p->n], sizeof(p->num[p->n]), "%lld", (long long)v);
	p->v[p->n] = p->num[p->n];
	p->n++;
}

/* Invalid UTF-8 bytes as \xNN; valid sequences kept. NULL: no memory. */
static char *
qp_utf8_fix(const char *s)
{
	size_t	len = strlen(s), i = 0, k, o = 0;
	char	*out;

	if ((out = malloc(len * 4 + 1)) == NULL)
		return NULL;
	while (i < len) {
		for (k = 4; k > 0; k--)
			if (i + k <= len && str_utf8_valid(s + i, k))
				break;
		if (k == 0) {
			o += (size_t)sprintf(out + o, "\\x%02X",
			    (unsigned char)s[i]);
			i++;
			continue;
		}
		memcpy(out + o, s + i, k);
		o += k;
		i += k;
	}
	out[o] = '\0';
	return out;
}

void
qp_str(struct qp_params *p, const char *s)
{
	p->own[p->n] = NULL;
	p->v[p->n] = s;
	if (s != NULL && !str_utf8_valid(s, strlen(s)) &&
	    (p->own[p->n] = qp_utf8_fix(s)) != NULL)
		p->v[p->n] = p->own[p->n];
	p->n++;
}

/* A bytea parameter, sent as binary (NULL: SQL NULL). */
void
qp_bin(struct qp_params *p, const void *data, size_t len)
{
	p->own[p->n] = NULL;
	p->v[p->n] = (const char *)data;
	p->len[p->n] = (int)len;
	p->fmt[p->n] = 1;
	p->binary = 1;
	p->n++;
}

static void
qp_params_free(struct qp_params *p)
{
	int	i;

	if (p == NULL)
		return;
	for (i = 0; i < p->n; i++) {
		free(p->own[i]);
		p->own[i] = NULL;
	}
	p->n = 0;
	p->binary = p->binary_result = 0;
}

/* A statement's result r: r when it succeeded, else NULL with the
 * error set (r freed). A lost connection is said, and found again
 * later. */
static PGresult *
qp_result(struct queue *q, PGresult *r, const char *what)
{
	struct queue_pg	*be = qp_be(q);
	ExecStatusType	 st;
	char		 msg[QUEUE_ERR_MAX];

	qp_take_notifies(be);
	st = r != NULL ? PQresultStatus(r) : PGRES_FATAL_ERROR;
	if (st == PGRES_COMMAND_OK || st == PGRES_TUPLES_OK)
		return r;
	qp_msg(msg, sizeof(msg), r != NULL ? PQresultErrorMessage(r) :
	    PQerrorMessage(be->conn));
	PQclear(r);
	if (PQstatus(be->conn) != CONNECTION_OK) {
		qp_backoff(be);
		be->retry_at = (int64_t)clock_mono_ms();
		queue_seterr(q, "queue %s: %s: the connection to the "
		    "database was lost (%s); it is tried again on the next "
		    "call", be->shown, what, msg);
	} else
		queue_seterr(q, "queue %s: %s: %s", be->shown, what, msg);
	return NULL;
}

/* Run a statement; its result (free with PQclear), or NULL with the
 * error set. */
PGresult *
qp_exec(struct queue *q, const char *sql, struct qp_params *p,
    const char *what)
{
	struct queue_pg	*be = qp_be(q);
	PGresult	*r;

	/* Without parameters, PQexec: the schema is many statements. */
	r = p == NULL ? PQexec(be->conn, sql) : PQexecParams(be->conn, sql,
	    p->n, NULL, p->v, p->binary ? p->len : NULL, p->binary ? p->fmt :
	    NULL, p->binary_result);
	qp_params_free(p);
	return qp_result(q, r, what);
}

/* Run statement id, sql prepared on this connection at its first use;
 * as qp_exec. The connection is made ready first. */
PGresult *
qp_prepared(struct queue *q, enum qp_prep_id id, const char *sql,
    struct qp_params *p, const char *what)
{
	struct queue_pg	*be = qp_be(q);
	PGresult	*r;
	char		 name[16];

	snprintf(name, sizeof(name), "warren_%d", (int)id);
	if (qp_ready(q) == -1) {
		qp_params_free(p);
		return NULL;
	}
	if (!(be->prepared & (1u << id))) {
		if ((r = qp_result(q, PQprepare(be->conn, name, sql, p->n, NULL),
		    what)) == NULL) {
			qp_params_free(p);
			return NULL;
		}
		PQclear(r);
		be->prepared |= 1u << id;
	}
	r = PQexecPrepared(be->conn, name, p->n, p->v, p->binary ? p->len :
	    NULL, p->binary ? p->fmt : NULL, p->binary_result);
	qp_params_free(p);
	return qp_result(q, r, what);
}

/* A statement without rows to read: 0 with *rows changed, or -1. */
int
qp_cmd(struct queue *q, const char *sql, struct qp_params *p,
    const char *what, int64_t *rows)
{
	PGresult	*r;

	if ((r = qp_exec(q, sql, p, what)) == NULL)
		return -1;
	if (rows != NULL)
		*rows = strtoll(PQcmdTuples(r), NULL, 10);
	PQclear(r);
	return 0;
}

int
qp_begin(struct queue *q)
{
	if (qp_ready(q) == -1)
		return -1;
	return qp_cmd(q, "BEGIN", NULL, "beginning a transaction", NULL);
}

int
qp_commit(struct queue *q)
{
	if (qp_cmd(q, "COMMIT", NULL, "committing", NULL) == -1) {
		qp_rollback(q);
		return -1;
	}
	return 0;
}

/* Keeps errno and the error message: the caller's survive it. */
void
qp_rollback(struct queue *q)
{
	struct queue_pg	*be = qp_be(q);
	PGresult	*r;
	int		 e = errno;

	if (be->conn != NULL && PQstatus(be->conn) == CONNECTION_OK &&
	    PQtransactionStatus(be->conn) != PQTRANS_IDLE) {
		r = PQexec(be->conn, "ROLLBACK");
		PQclear(r);
	}
	errno = e;
}

/* The call's time: a test's clock, else the server's, read now (after
 * any lock the transaction waited for). */
int
qp_now(struct queue *q, int64_t *now)
{
	PGresult	*r;

	if (q->clock_set) {
		*now = queue_now(q);
		return 0;
	}
	if ((r = qp_exec(q, "SELECT (extract(epoch FROM clock_timestamp())"
	    " * 1000)::bigint", NULL, "reading the database's clock")) == NULL)
		return -1;
	*now = qp_int(r, 0, 0);
	PQclear(r);
	return 0;
}

int64_t
qp_int(const PGresult *r, int row, int col)
{
	if (PQgetisnull(r, row, col))
		return 0;
	return strtoll(PQgetvalue(r, row, col), NULL, 10);
}

/* A row of a result, read through struct queue_row. */
struct qp_row {
	const PGresult	*r;
	int		 row;
};

static int
qp_row_null(void *arg, int i)
{
	struct qp_row	*pr = arg;

	return PQgetisnull(pr->r, pr->row, i);
}

static int64_t
qp_row_i64(void *arg, int i)
{
	struct qp_row	*pr = arg;

	return qp_int(pr->r, pr->row, i);
}

static const char *
qp_row_text(void *arg, int i)
{
	struct qp_row	*pr = arg;

	if (PQgetisnull(pr->r, pr->row, i))
		return NULL;
	return PQgetvalue(pr->r, pr->row, i);
}

/* Row row of QUEUE_JOB_COLS; -1 out of memory (j freed). */
int
qp_job_row(const PGresult *r, int row, struct queue_job *j)
{
	struct qp_row		pr = { r, row };
	const struct queue_row	qr = { &pr, qp_row_null, qp_row_i64,
	    qp_row_text };

	return queue_row_job(&qr, j);
}

/* One job by id: 0, or -1 (ENOENT: no such job). */
int
qp_job_read(struct queue *q, int64_t id, struct queue_job *j)
{
	struct qp_params	 p = { .n = 0 };
	PGresult		*r;
	int			 rc;

	qp_i64(&p, id);
	if ((r = qp_exec(q, "SELECT " QUEUE_JOB_COLS " FROM queue_jobs WHERE"
	    " id = $1", &p, "reading a job")) == NULL)
		return -1;
	if (PQntuples(r) == 0) {
		PQclear(r);
		return queue_notfound(q, id);
	}
	rc = qp_job_row(r, 0, j);
	PQclear(r);
	if (rc == -1)
		return queue_seterr(q, "job %lld: out of memory",
		    (long long)id);
	return 0;
}

/* Wake the idle workers: delivered when the transaction commits. */
static int
qp_notify(struct queue *q)
{
	return qp_cmd(q, "NOTIFY " QP_CHANNEL, NULL, "announcing new work",
	    NULL);
}

/* One job inside the caller's transaction. A key is inserted with ON
 * CONFLICT DO NOTHING, which waits for another adder of the same key
 * to commit; then the job it made is found. */
static int
qp_add_one(struct queue *q, const struct queue_job_new *n, int64_t now,
    int64_t *id, int *existed)
{
	struct qp_params	 p = { .n = 0 };
	PGresult		*r;

	*existed = 0;
	qp_str(&p, n->task);
	qp_str(&p, n->profile);
	qp_str(&p, n->workspace);
	qp_str(&p, n->schema);
	qp_str(&p, n->key);
	qp_str(&p, n->params);
	qp_i64(&p, n->priority);
	qp_i64(&p, n->max_attempts > 0 ? n->max_attempts :
	    QUEUE_DEFAULT_ATTEMPTS);
	qp_i64(&p, (int64_t)n->timeout_ms);
	qp_i64(&p, (int64_t)n->budget);
	qp_i64(&p, now);
	if ((r = qp_exec(q, "INSERT INTO queue_jobs (task, profile,"
	    " workspace, schema, key, params, priority, max_attempts,"
	    " round_attempts, timeout_ms, budget, created_ms, run_at_ms)"
	    " VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $8, $9, $10, $11, $11)"
	    " ON CONFLICT (key) WHERE key IS NOT NULL DO NOTHING RETURNING id",
	    &p, "adding a job")) == NULL)
		return -1;
	if (PQntuples(r) == 1) {
		*id = qp_int(r, 0, 0);
		PQclear(r);
		return 0;
	}
	PQclear(r);
	qp_str(&p, n->key);
	if ((r = qp_exec(q, "SELECT id FROM queue_jobs WHERE key = $1", &p,
	    "looking up a key")) == NULL)
		return -1;
	if (PQntuples(r) != 1) {
		PQclear(r);
		return queue_seterr(q, "job key %s: neither added nor found; "
		    "try again", n->key != NULL ? n->key : "(none)");
	}
	*id = qp_int(r, 0, 0);
	*existed = 1;
	PQclear(r);
	return 0;
}

/* The tables' version: 0 when there are none yet. */
static int
qp_version(struct queue *q, int64_t *v)
{
	PGresult	*r;

	*v = 0;
	if ((r = qp_exec(q, "SELECT to_regclass('queue_meta') IS NOT NULL",
	    NULL, "looking for the queue's tables")) == NULL)
		return -1;
	if (strcmp(PQgetvalue(r, 0, 0), "t") != 0) {
		PQclear(r);
		return 0;
	}
	PQclear(r);
	if ((r = qp_exec(q, "SELECT value FROM queue_meta WHERE name ="
	    " 'schema_version'", NULL, "reading the queue's schema version"))
	    == NULL)
		return -1;
	if (PQntuples(r) == 1)
		*v = qp_int(r, 0, 0);
	PQclear(r);
	return 0;
}

/* The tables at this program's version, under an advisory lock: two
 * first opens at once must not both create them. QUEUE_OPEN_EXISTING:
 * no tables is no queue, and none are made. */
static int
qp_schema(struct queue *q, unsigned flags)
{
	int64_t	v;

	if (qp_begin(q) == -1 ||
	    qp_cmd(q, "SELECT pg_advisory_xact_lock(" QP_LOCK_SCHEMA ")",
	    NULL, "locking the queue's schema", NULL) == -1 ||
	    qp_version(q, &v) == -1)
		goto fail;
	if (v == 0 && (flags & QUEUE_OPEN_EXISTING)) {
		queue_absent(q, qp_be(q)->shown, "the database has no queue's "
		    "tables yet");
		goto fail;
	}
	if (v > QUEUE_PG_SCHEMA_VERSION) {
		queue_seterr(q, "queue %s: its tables are at version %lld, "
		    "this warren knows up to %d: use a newer warren",
		    qp_be(q)->shown, (long long)v, QUEUE_PG_SCHEMA_VERSION);
		goto fail;
	}
	if (v == 0 && qp_cmd(q, qp_schema_v1, NULL, "creating the queue's "
	    "tables", NULL) == -1)
		goto fail;
	for (v = v > 0 ? v : 1; v < QUEUE_PG_SCHEMA_VERSION; v++)
		if (qp_cmd(q, qp_migrations[v - 1], NULL, "migrating the "
		    "queue's tables", NULL) == -1)
			goto fail;
	return qp_commit(q);
fail:
	qp_rollback(q);
	return -1;
}

static int
qp_open(struct queue *q, const char *url, unsigned flags)
{
	struct queue_pg	*be;

	if ((be = calloc(1, sizeof(*be))) == NULL)
		return queue_seterr(q, "queue: out of memory");
	q->be = be;
	urlmask(url, be->shown, sizeof(be->shown));
	if (strlen(url) >= sizeof(be->url))
		return queue_seterr(q, "queue %.64s...: the URL is longer than "
		    "%zu bytes", be->shown, sizeof(be->url) - 1);
	/* "postgresql:" followed by keywords: libpq takes the keywords. */
	snprintf(be->url, sizeof(be->url), "%s", strstr(url, "://") != NULL ?
	    url : url + strlen("postgresql:"));
	if (qp_connect(q) == -1)
		return -1;
	return qp_schema(q, flags);
}

static void
qp_close(struct queue *q)
{
	struct queue_pg	*be = qp_be(q);

	if (be == NULL)
		return;
	/* In a forked child the connection is the parent's: PQfinish
	 * would tell the server to end it. Leave it. */
	if (q->owner == getpid() && be->conn != NULL)
		PQfinish(be->conn);
	explicit_bzero(be->url, sizeof(be->url));
	free(be);
	q->be = NULL;
}

const struct queue_ops queue_pg_ops = {
	.name = "postgresql",
	.open = qp_open,
	.close = qp_close,
	.add_one = qp_add_one,
	.claim = qp_claim,
	.heartbeat = qp_heartbeat,
	.end = qp_end,
	.begin = qp_begin,
	.commit = qp_commit,
	.rollback = qp_rollback,
	.now = qp_now,
	.expire = qp_expire,
	.notify = qp_notify,
	.status = qp_job_status,
	.cancel_ask = qp_cancel_ask,
	.cancel_now = qp_cancel_now,
	.requeue = qp_requeue,
	.purge_rows = qp_purge_rows,
	.list = qp_list,
	.get = qp_get,
	.counts = qp_counts,
	.stats = qp_stats,
	.rate = qp_rate,
	.changes = qp_changes,
	.applied = qp_applied,
	.wait_fd = qp_wait_fd,
	.woken = qp_woken,
};

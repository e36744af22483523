/*
 * The queue on SQLite: tables of its own (queue_jobs, queue_attempts,
 * queue_meta, queue_rate) in a warren database file: by default queue.db
 * beside the state database (queue_path.c), or the file --queue names
 * (the state database itself too); it never touches the store's tables
 * there. qs_ is this backend's prefix (queue_sqlite*.c).
 *
 * Every change that reads then writes (add, claim, heartbeat, complete,
 * fail, cancel, purge) runs in BEGIN IMMEDIATE: the write lock is taken
 * first, so two `queue work` processes see each other's claims and never
 * take one job twice, and no transaction has to be upgraded (an upgrade that
 * meets another writer fails at once, without waiting). WAL lets `queue
 * ls` read while workers write; busy_timeout makes a call wait for
 * another process's commit (a run's batch, a claim) rather than fail.
 *
 * The schema is versioned in queue_meta (schema_version), apart from the
 * store's PRAGMA user_version: the queue's tables migrate on their own.
 * docs/queue.md describes the tables.
 */
#include <sys/resource.h>
#include <sys/stat.h>

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/log.h"
#include "queue/queue_sqlite_int.h"
#include "store/store.h"

/* Jobs a claim may take; the same term as queue_jobs_claim's WHERE, so
 * that the index (in claim order) serves the claim: a claim reads the
 * index from its first row and stops at the first claimable job. Named
 * with INDEXED BY, since without statistics SQLite prefers the status
 * index and sorts every open job on each claim. */
#define QS_OPEN_STATUS	"status IN ('queued', 'retrying', 'running')"

static const char *const qs_sql[QS__COUNT] = {
	[QS_BEGIN] = "BEGIN IMMEDIATE",
	[QS_COMMIT] = "COMMIT",
	[QS_ROLLBACK] = "ROLLBACK",
	[QS_READ_BEGIN] = "BEGIN",
	[QS_KEY_FIND] = "SELECT id FROM queue_jobs WHERE key = ?1",
	[QS_INSERT] = "INSERT INTO queue_jobs (task, profile, workspace,"
	    " schema, key, params, priority, max_attempts, round_attempts,"
	    " timeout_ms, budget, created_ms, run_at_ms) VALUES (?1, ?2, ?3,"
	    " ?4, ?5, ?6, ?7, ?8, ?8, ?9, ?10, ?11, ?11)",
	[QS_RUNNING_COUNT] = "SELECT count(*) FROM queue_jobs"
	    " WHERE status = 'running' AND lease_until_ms > ?1",
	[QS_NEXT] = "SELECT id, status, attempts, max_attempts, cancel_asked,"
	    " worker, lease_until_ms FROM queue_jobs"
	    " INDEXED BY queue_jobs_claim WHERE " QS_OPEN_STATUS
	    " AND ((status <> 'running' AND run_at_ms <= ?1) OR"
	    " (status = 'running' AND lease_until_ms <= ?1))"
	    " ORDER BY priority DESC, run_at_ms, id LIMIT 1",
	[QS_ATTEMPT_EXPIRE] = "UPDATE queue_attempts SET ended_ms = ?3,"
	    " outcome = 'lease expired', error = ?4"
	    " WHERE job = ?1 AND n = ?2 AND ended_ms = 0",
	[QS_JOB_EXPIRED_END] = "UPDATE queue_jobs SET status = ?2,"
	    " finished_ms = ?3, lease_until_ms = 0, error = ?4 WHERE id = ?1",
	[QS_TAKE] = "UPDATE queue_jobs SET status = 'running',"
	    " attempts = attempts + 1, worker = ?2, lease_until_ms = ?3,"
	    " cancel_asked = 0 WHERE id = ?1",
	[QS_ATTEMPT_START] = "INSERT INTO queue_attempts (job, n, worker,"
	    " started_ms) VALUES (?1, ?2, ?3, ?4)",
	[QS_JOB_GET] = "SELECT " QUEUE_JOB_COLS " FROM queue_jobs WHERE id = ?1",
	[QS_HEARTBEAT] = "UPDATE queue_jobs SET lease_until_ms = ?4"
	    " WHERE id = ?1 AND status = 'running' AND attempts = ?2"
	    " AND worker = ?3 RETURNING cancel_asked",
	[QS_ATTEMPT_END] = "UPDATE queue_attempts SET ended_ms = ?3,"
	    " outcome = ?4, error = ?5, run_id = ?6 WHERE job = ?1 AND n = ?2",
	[QS_HOLDER] = "SELECT max_attempts, cancel_asked FROM queue_jobs"
	    " WHERE id = ?1 AND status = 'running' AND attempts = ?2"
	    " AND worker = ?3",
	/* run_at_ms NULL: kept (a job done keeps the run_at it ran at) */
	[QS_RESULT_SET] = "UPDATE queue_jobs SET status = ?2,"
	    " run_at_ms = coalesce(?3, run_at_ms), finished_ms = ?4,"
	    " lease_until_ms = 0, answer = ?5, output = ?6, error = ?7,"
	    " diff_stat = ?8, run_id = ?9, tokens_in = ?10, tokens_out = ?11,"
	    " wall_ms = ?12, changes = ?13, run_where = ?14, applied_ms = 0,"
	    " applied_by = NULL WHERE id = ?1",
	[QS_STATUS] = "SELECT status, lease_until_ms, attempts"
	    " FROM queue_jobs WHERE id = ?1",
	[QS_CANCEL_NOW] = "UPDATE queue_jobs SET status = 'cancelled',"
	    " finished_ms = ?2, lease_until_ms = 0 WHERE id = ?1",
	[QS_CANCEL_ASK] = "UPDATE queue_jobs SET cancel_asked = 1"
	    " WHERE id = ?1",
	[QS_RETRY] = "UPDATE queue_jobs SET status = 'queued',"
	    " max_attempts = attempts + round_attempts, run_at_ms = ?1,"
	    " finished_ms = 0, lease_until_ms = 0, cancel_asked = 0"
	    " WHERE id = ?2 AND status IN ('dead', 'cancelled')",
	[QS_RETRY_DEAD] = "UPDATE queue_jobs SET status = 'queued',"
	    " max_attempts = attempts + round_attempts, run_at_ms = ?1,"
	    " finished_ms = 0, lease_until_ms = 0, cancel_asked = 0"
	    " WHERE status = 'dead'",
	[QS_PURGE_ATTEMPTS] = "DELETE FROM queue_attempts WHERE job IN"
	    " (SELECT id FROM queue_jobs WHERE status IN (?1, ?2, ?3)"
	    " AND finished_ms < ?4)",
	[QS_PURGE_JOBS] = "DELETE FROM queue_jobs WHERE status IN"
	    " (?1, ?2, ?3) AND finished_ms < ?4",
	[QS_LIST] = "SELECT " QUEUE_JOB_COLS " FROM queue_jobs"
	    " WHERE ?1 IS NULL OR status = ?1 ORDER BY id",
	[QS_LIST_NEWEST] = "SELECT * FROM (SELECT " QUEUE_JOB_COLS
	    " FROM queue_jobs WHERE ?1 IS NULL OR status = ?1"
	    " ORDER BY id DESC LIMIT ?2) ORDER BY id",
	[QS_ATTEMPTS] = "SELECT n, worker, started_ms, ended_ms, outcome,"
	    " error, run_id FROM queue_attempts WHERE job = ?1 ORDER BY n",
	[QS_COUNTS] = "SELECT status, count(*) FROM queue_jobs"
	    " GROUP BY status",
	/* Since ?1: the rate's window. An attempt not ended has ended_ms 0
	 * and no outcome. */
	[QS_STATS] = "SELECT (SELECT count(*) FROM queue_attempts),"
	    " (SELECT count(*) FROM queue_attempts WHERE ended_ms > 0"
	    " AND outcome <> 'done'),"
	    " (SELECT count(*) FROM queue_jobs WHERE status = 'done'"
	    " AND finished_ms >= ?1),"
	    " (SELECT min(started_ms) FROM queue_attempts WHERE ended_ms = 0"
	    " OR ended_ms >= ?1),"
	    " (SELECT id FROM queue_jobs WHERE status = 'queued'"
	    " ORDER BY run_at_ms, id LIMIT 1),"
	    " (SELECT min(run_at_ms) FROM queue_jobs WHERE status = 'queued')",
	[QS_CHANGES_GET] = "SELECT changes FROM queue_jobs WHERE id = ?1",
	[QS_APPLIED] = "UPDATE queue_jobs SET applied_ms = ?2,"
	    " applied_by = ?3 WHERE id = ?1",
	[QS_RATE_GET] = "SELECT req_tat_ms, tok_tat_ms, pause_until_ms"
	    " FROM queue_rate WHERE endpoint = ?1",
	[QS_RATE_PUT] = "INSERT OR REPLACE INTO queue_rate (endpoint,"
	    " req_tat_ms, tok_tat_ms, pause_until_ms) VALUES (?1, ?2, ?3, ?4)",
};

static const char qs_schema_v1[] =
	"CREATE TABLE queue_meta ("
	" name TEXT PRIMARY KEY,"
	" value INTEGER NOT NULL) WITHOUT ROWID;"
	"CREATE TABLE queue_jobs ("
	" id INTEGER PRIMARY KEY AUTOINCREMENT,"
	" task TEXT NOT NULL, profile TEXT, workspace TEXT NOT NULL,"
	" schema TEXT, key TEXT, params TEXT,"
	" status TEXT NOT NULL DEFAULT 'queued',"
	" priority INTEGER NOT NULL DEFAULT 0,"
	" attempts INTEGER NOT NULL DEFAULT 0,"
	" max_attempts INTEGER NOT NULL,"
	" round_attempts INTEGER NOT NULL,"
	" timeout_ms INTEGER NOT NULL DEFAULT 0,"
	" budget INTEGER NOT NULL DEFAULT 0,"
	" created_ms INTEGER NOT NULL,"
	" run_at_ms INTEGER NOT NULL,"
	" lease_until_ms INTEGER NOT NULL DEFAULT 0,"
	" finished_ms INTEGER NOT NULL DEFAULT 0,"
	" worker TEXT,"
	" cancel_asked INTEGER NOT NULL DEFAULT 0,"
	" answer TEXT, output TEXT, error TEXT, diff_stat TEXT,"
	" run_id INTEGER NOT NULL DEFAULT 0,"
	" tokens_in INTEGER NOT NULL DEFAULT 0,"
	" tokens_out INTEGER NOT NULL DEFAULT 0,"
	" wall_ms INTEGER NOT NULL DEFAULT 0);"
	"CREATE UNIQUE INDEX queue_jobs_key ON queue_jobs(key)"
	" WHERE key IS NOT NULL;"
	"CREATE INDEX queue_jobs_claim ON queue_jobs(priority DESC,"
	" run_at_ms, id) WHERE " QS_OPEN_STATUS ";"
	"CREATE INDEX queue_jobs_status ON queue_jobs(status, finished_ms);"
	"CREATE TABLE queue_attempts ("
	" job INTEGER NOT NULL,"
	" n INTEGER NOT NULL,"
	" worker TEXT NOT NULL,"
	" started_ms INTEGER NOT NULL,"
	" ended_ms INTEGER NOT NULL DEFAULT 0,"
	" outcome TEXT, error TEXT,"
	" run_id INTEGER NOT NULL DEFAULT 0,"
	" PRIMARY KEY (job, n)) WITHOUT ROWID;"
	"INSERT INTO queue_meta (name, value) VALUES ('schema_version', 1);";

/* qs_migrations[i] takes version i + 1 to i + 2; each ends with "UPDATE
 * queue_meta SET value = i + 2 WHERE name = 'schema_version'", as
 * schema_v1 ends by inserting 1. */
static const char *const qs_migrations[] = {
	/* 2: the shared LLM rate limits (queue_sqlite_rate.c) */
	"CREATE TABLE queue_rate ("
	" endpoint TEXT PRIMARY KEY,"
	" req_tat_ms INTEGER NOT NULL,"
	" tok_tat_ms INTEGER NOT NULL,"
	" pause_until_ms INTEGER NOT NULL) WITHOUT ROWID;"
	"UPDATE queue_meta SET value = 2 WHERE name = 'schema_version';",
	/* 3: results any machine applies (cmd_queue_apply.c) */
	"ALTER TABLE queue_jobs ADD COLUMN changes BLOB;"
	"ALTER TABLE queue_jobs ADD COLUMN run_where TEXT;"
	"ALTER TABLE queue_jobs ADD COLUMN applied_ms INTEGER NOT NULL"
	" DEFAULT 0;"
	"ALTER TABLE queue_jobs ADD COLUMN applied_by TEXT;"
	"UPDATE queue_meta SET value = 3 WHERE name = 'schema_version';",
};

static struct queue_sqlite *
qs_be(struct queue *q)
{
	return q->be;
}

const char *
qs_status(enum queue_status s)
{
	return queue_status_name(s);
}

/*
 * Did a write, a resize or the shared memory's growth fail under a file
 * size limit (ulimit -f)? warren ignores SIGXFSZ, so such a write fails
 * with EFBIG, which SQLite reports as an I/O error of that kind; its
 * errno is not reliably kept (sqlite3_system_errno reads errno later), so
 * a finite limit and a failed write are taken for it.
 */
static int
qs_fsize_hit(sqlite3 *db)
{
	struct rlimit	rl;
	int		ext = sqlite3_extended_errcode(db);

	if (getrlimit(RLIMIT_FSIZE, &rl) == -1 || rl.rlim_cur == RLIM_INFINITY)
		return 0;
	return sqlite3_system_errno(db) == EFBIG ||
	    ext == SQLITE_IOERR_WRITE || ext == SQLITE_IOERR_TRUNCATE ||
	    ext == SQLITE_IOERR_SHMSIZE;
}

/*
 * A write past the file size limit: no retry cures it, so the error is
 * final (queue_err_final) and says what to raise.
 */
static int
qs_fsize(struct queue *q, const char *what)
{
	struct rlimit	rl;
	unsigned long long lim = 0;

	if (getrlimit(RLIMIT_FSIZE, &rl) == 0)
		lim = (unsigned long long)rl.rlim_cur;
	queue_seterr(q, "queue %s: %s: a write past the file size limit of "
	    "%llu bytes (ulimit -f, RLIMIT_FSIZE) failed (File too large): "
	    "raise the limit and start again", qs_be(q)->path, what, lim);
	q->final = 1;
	return -1;
}

int
qs_dberr(struct queue *q, const char *fmt, ...)
{
	struct queue_sqlite	*be = qs_be(q);
	char			 what[256];
	va_list			 ap;
	int			 rc;

	va_start(ap, fmt);
	vsnprintf(what, sizeof(what), fmt, ap);
	va_end(ap);
	rc = sqlite3_extended_errcode(be->db) & 0xff;
	if (rc == SQLITE_BUSY || rc == SQLITE_LOCKED)
		return queue_seterr(q, "queue %s: %s: another process held the"
		    " database for %d ms; try again", be->path, what,
		    QUEUE_BUSY_TIMEOUT_MS);
	if (rc == SQLITE_IOERR && qs_fsize_hit(be->db))
		return qs_fsize(q, what);
	return queue_seterr(q, "queue %s: %s: %s", be->path, what,
	    sqlite3_errmsg(be->db));
}

/* A cached statement, reset and unbound; NULL with the error set. */
sqlite3_stmt *
qs_stmt(struct queue *q, enum qs_stmt_id id)
{
	struct queue_sqlite	*be = qs_be(q);
	sqlite3_stmt		*s = be->stmts[id];

	if (s != NULL) {
		sqlite3_reset(s);
		sqlite3_clear_bindings(s);
		return s;
	}
	if (sqlite3_prepare_v3(be->db, qs_sql[id], -1,
	    SQLITE_PREPARE_PERSISTENT, &s, NULL) != SQLITE_OK) {
		qs_dberr(q, "preparing statement %d", (int)id);
		return NULL;
	}
	be->stmts[id] = s;
	return s;
}

/* Run a statement that returns no row (bound by the caller). */
int
qs_run(struct queue *q, enum qs_stmt_id id, const char *what)
{
	sqlite3_stmt	*s = qs_be(q)->stmts[id];
	int		 rc;

	rc = sqlite3_step(s);
	sqlite3_reset(s);
	if (rc != SQLITE_DONE && rc != SQLITE_ROW)
		return qs_dberr(q, "%s", what);
	return 0;
}

static int
qs_simple(struct queue *q, enum qs_stmt_id id, const char *what)
{
	if (qs_stmt(q, id) == NULL)
		return -1;
	return qs_run(q, id, what);
}

int
qs_begin(struct queue *q)
{
	return qs_simple(q, QS_BEGIN, "taking the write lock");
}

int
qs_commit(struct queue *q)
{
	if (qs_simple(q, QS_COMMIT, "committing") == -1) {
		qs_rollback(q);
		return -1;
	}
	return 0;
}

/* Keeps errno: the caller's ENOENT (no such job) survives it. */
void
qs_rollback(struct queue *q)
{
	int	e = errno;

	if (!sqlite3_get_autocommit(qs_be(q)->db))
		sqlite3_exec(qs_be(q)->db, "ROLLBACK", NULL, NULL, NULL);
	errno = e;
}

int
qs_bind_text(sqlite3_stmt *s, int i, const char *v)
{
	if (v == NULL)
		return sqlite3_bind_null(s, i);
	return sqlite3_bind_text(s, i, v, -1, SQLITE_STATIC);
}

static int
qs_row_null(void *arg, int i)
{
	return sqlite3_column_type(arg, i) == SQLITE_NULL;
}

static int64_t
qs_row_i64(void *arg, int i)
{
	return sqlite3_column_int64(arg, i);
}

static const char *
qs_row_text(void *arg, int i)
{
	return (const char *)sqlite3_column_text(arg, i);
}

/* The row s is on, of QUEUE_JOB_COLS; -1 out of memory (j freed). */
int
qs_job_row(sqlite3_stmt *s, struct queue_job *j)
{
	const struct queue_row	r = { s, qs_row_null, qs_row_i64,
	    qs_row_text };

	return queue_row_job(&r, j);
}

/* One job by id: 0, or -1 (ENOENT: no such job). */
int
qs_job_read(struct queue *q, int64_t id, struct queue_job *j)
{
	sqlite3_stmt	*s;
	int		 rc;

	if ((s = qs_stmt(q, QS_JOB_GET)) == NULL)
		return -1;
	sqlite3_bind_int64(s, 1, id);
	rc = sqlite3_step(s);
	if (rc == SQLITE_ROW && qs_job_row(s, j) == -1) {
		sqlite3_reset(s);
		return queue_seterr(q, "job %lld: out of memory",
		    (long long)id);
	}
	sqlite3_reset(s);
	if (rc == SQLITE_DONE)
		return queue_notfound(q, id);
	if (rc != SQLITE_ROW)
		return qs_dberr(q, "reading job %lld", (long long)id);
	return 0;
}

/* One job inside the caller's transaction: the key is looked up first,
 * so a key added earlier in the same batch is found too. */
static int
qs_add_one(struct queue *q, const struct queue_job_new *n, int64_t now,
    int64_t *id, int *existed)
{
	sqlite3_stmt	*s;
	int		 rc;

	*existed = 0;
	if (n->key != NULL) {
		if ((s = qs_stmt(q, QS_KEY_FIND)) == NULL)
			return -1;
		qs_bind_text(s, 1, n->key);
		if ((rc = sqlite3_step(s)) == SQLITE_ROW) {
			*id = sqlite3_column_int64(s, 0);
			*existed = 1;
		}
		sqlite3_reset(s);
		if (rc != SQLITE_ROW && rc != SQLITE_DONE)
			return qs_dberr(q, "looking up key %s", n->key);
		if (*existed)
			return 0;
	}
	if ((s = qs_stmt(q, QS_INSERT)) == NULL)
		return -1;
	qs_bind_text(s, 1, n->task);
	qs_bind_text(s, 2, n->profile);
	qs_bind_text(s, 3, n->workspace);
	qs_bind_text(s, 4, n->schema);
	qs_bind_text(s, 5, n->key);
	qs_bind_text(s, 6, n->params);
	sqlite3_bind_int(s, 7, n->priority);
	sqlite3_bind_int(s, 8, n->max_attempts > 0 ? n->max_attempts :
	    QUEUE_DEFAULT_ATTEMPTS);
	sqlite3_bind_int64(s, 9, (int64_t)n->timeout_ms);
	sqlite3_bind_int64(s, 10, (int64_t)n->budget);
	sqlite3_bind_int64(s, 11, now);
	if (qs_run(q, QS_INSERT, "adding a job") == -1)
		return -1;
	*id = sqlite3_last_insert_rowid(qs_be(q)->db);
	return 0;
}

static int
qs_exec(struct queue *q, const char *sql, const char *what)
{
	if (sqlite3_exec(qs_be(q)->db, sql, NULL, NULL, NULL) != SQLITE_OK)
		return qs_dberr(q, "%s", what);
	return 0;
}

/* One integer from a query; 0 when it returns no row. */
static int
qs_query_int(struct queue *q, const char *sql, int64_t *v)
{
	sqlite3_stmt	*s;
	int		 rc;

	*v = 0;
	if (sqlite3_prepare_v2(qs_be(q)->db, sql, -1, &s, NULL) != SQLITE_OK)
		return qs_dberr(q, "reading the queue's schema version");
	if ((rc = sqlite3_step(s)) == SQLITE_ROW)
		*v = sqlite3_column_int64(s, 0);
	sqlite3_finalize(s);
	if (rc != SQLITE_ROW && rc != SQLITE_DONE)
		return qs_dberr(q, "reading the queue's schema version");
	return 0;
}

/* The queue's tables at this program's version, under the write lock:
 * two first `queue add` at once must not both create them.
 * QUEUE_OPEN_EXISTING: no tables is no queue, and none are made. */
static int
qs_schema(struct queue *q, unsigned flags)
{
	int64_t	ntables, v;

	if (qs_exec(q, "BEGIN IMMEDIATE", "locking the database to create "
	    "the queue's tables") == -1)
		return -1;
	if (qs_query_int(q, "SELECT count(*) FROM sqlite_master WHERE "
	    "type = 'table' AND name = 'queue_meta'", &ntables) == -1)
		goto fail;
	v = 0;
	if (ntables > 0 && qs_query_int(q, "SELECT value FROM queue_meta "
	    "WHERE name = 'schema_version'", &v) == -1)
		goto fail;
	if (v == 0 && (flags & QUEUE_OPEN_EXISTING)) {
		queue_absent(q, qs_be(q)->path, "the database holds no queue "
		    "yet");
		goto fail;
	}
	if (v > QUEUE_SQLITE_SCHEMA_VERSION) {
		queue_seterr(q, "queue %s: its tables are at version %lld, "
		    "this warren knows up to %d: use a newer warren",
		    qs_be(q)->path, (long long)v, QUEUE_SQLITE_SCHEMA_VERSION);
		goto fail;
	}
	if (v == 0 && qs_exec(q, qs_schema_v1, "creating the queue's "
	    "tables") == -1)
		goto fail;
	for (v = v > 0 ? v : 1; v < QUEUE_SQLITE_SCHEMA_VERSION; v++)
		if (qs_exec(q, qs_migrations[v - 1], "migrating the queue's "
		    "tables") == -1)
			goto fail;
	return qs_exec(q, "COMMIT", "committing the queue's tables");
fail:
	qs_rollback(q);
	return -1;
}

/*
 * The store makes the file a warren database (its header and tables)
 * before the queue adds its own: a file the queue created alone would
 * have tables but no warren header, and the store would refuse it.
 * QUEUE_OPEN_EXISTING: a file that is not there is no queue, and is not
 * made.
 */
static int
qs_store_ready(struct queue *q, const char *path, unsigned flags)
{
	struct store	*st;
	struct stat	 sb;
	char		 err[STORE_ERRMSG_MAX + 64];

	if ((flags & QUEUE_OPEN_EXISTING) && stat(path, &sb) == -1 &&
	    errno == ENOENT)
		return queue_absent(q, path, "the file does not exist");
	if ((st = store_open(path, (flags & QUEUE_OPEN_EXISTING) ? 0 :
	    STORE_CREATE, err, sizeof(err))) == NULL)
		return queue_seterr(q, "queue %s: %s", path, err);
	store_close(st);
	return 0;
}

/*
 * Another process may hold the file's write lock for a while: a run
 * committing, a worker killed in a transaction whose runs live on,
 * sqlite3 in a shell. Wait for it before opening, up to
 * QUEUE_OPEN_WAIT_MS, saying once who holds it, rather than fail at the
 * first busy timeout. A file that is not there or cannot be written is
 * left to store_open to report.
 */
static int
qs_lock_wait(struct queue *q, const char *path)
{
	sqlite3		*h = NULL;
	char		 who[256];
	int		 rc;

	if (access(path, F_OK) == -1)
		return 0;
	if (sqlite3_open_v2(path, &h, SQLITE_OPEN_READWRITE |
	    SQLITE_OPEN_NOMUTEX, NULL) != SQLITE_OK) {
		sqlite3_close(h);
		return 0;
	}
	sqlite3_busy_timeout(h, QS_LOCK_QUIET_MS);
	rc = sqlite3_exec(h, "BEGIN IMMEDIATE", NULL, NULL, NULL) & 0xff;
	if (rc == SQLITE_BUSY) {
		store_lock_holders(path, who, sizeof(who));
		log_warnx("queue %s: another process holds its write lock "
		    "(%s); waiting for it, at most %d s", path, *who ? who :
		    "not one of this user's processes: see fuser(1)",
		    QUEUE_OPEN_WAIT_MS / 1000);
		sqlite3_busy_timeout(h, QUEUE_OPEN_WAIT_MS - QS_LOCK_QUIET_MS);
		rc = sqlite3_exec(h, "BEGIN IMMEDIATE", NULL, NULL, NULL) &
		    0xff;
	}
	if (rc == SQLITE_OK)
		sqlite3_exec(h, "ROLLBACK", NULL, NULL, NULL);
	sqlite3_close(h);
	if (rc == SQLITE_BUSY) {
		store_lock_holders(path, who, sizeof(who));
		return queue_seterr(q, "queue %s: another process held its "
		    "write lock for %d s (%s): wait for it to end, or stop it",
		    path, QUEUE_OPEN_WAIT_MS / 1000, *who ? who :
		    "not one of this user's processes: see fuser(1)");
	}
	return 0;
}

static int
qs_open(struct queue *q, const char *url, unsigned flags)
{
	struct queue_sqlite	*be;

	if ((be = calloc(1, sizeof(*be))) == NULL)
		return queue_seterr(q, "queue: out of memory");
	q->be = be;
	if (queue_path(be->path, sizeof(be->path), url) == -1)
		return queue_seterr(q, "queue: no path for the queue: %s "
		    "(set XDG_STATE_HOME or WARREN_DB, or give --queue)",
		    strerror(errno));
	if (qs_lock_wait(q, be->path) == -1)
		return -1;
	if (qs_store_ready(q, be->path, flags) == -1)
		return -1;
	if (sqlite3_open_v2(be->path, &be->db, SQLITE_OPEN_READWRITE |
	    SQLITE_OPEN_NOMUTEX, NULL) != SQLITE_OK)
		return qs_dberr(q, "cannot open");
	sqlite3_extended_result_codes(be->db, 1);
	sqlite3_busy_timeout(be->db, QUEUE_BUSY_TIMEOUT_MS);
	if (qs_exec(q, "PRAGMA journal_mode = WAL", "setting WAL mode") == -1 ||
	    qs_exec(q, "PRAGMA synchronous = NORMAL", "setting synchronous")
	    == -1)
		return -1;
	return qs_schema(q, flags);
}

static void
qs_close(struct queue *q)
{
	struct queue_sqlite	*be = qs_be(q);
	size_t			 i;

	if (be == NULL)
		return;
	/* In a forked child the connection is the parent's: leave it. */
	if (q->owner == getpid() && be->db != NULL) {
		for (i = 0; i < QS__COUNT; i++)
			sqlite3_finalize(be->stmts[i]);
		sqlite3_close(be->db);
	}
	free(be);
	q->be = NULL;
}

const struct queue_ops queue_sqlite_ops = {
	.name = "sqlite",
	.open = qs_open,
	.close = qs_close,
	.add_one = qs_add_one,
	.begin = qs_begin,
	.commit = qs_commit,
	.rollback = qs_rollback,
	.now = qs_now,
	.running = qs_running,
	.next = qs_next,
	.expire = qs_expire,
	.take = qs_take,
	.job_read = qs_job_read,
	.extend = qs_extend,
	.holder = qs_holder,
	.result_set = qs_result_set,
	.attempt_end = qs_attempt_end,
	.status = qs_job_status,
	.cancel_ask = qs_cancel_ask,
	.cancel_now = qs_cancel_now,
	.requeue = qs_requeue,
	.purge_rows = qs_purge_rows,
	.list = qs_list,
	.get = qs_get,
	.counts = qs_counts,
	.stats = qs_stats,
	.rate = qs_rate,
	.changes = qs_changes,
	.applied = qs_applied,
};

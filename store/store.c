/*
 * The store: opening the database, the single writer's batches, the
 * statement cache and error reporting. docs/memory.md explains the design.
 */
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/types.h>

#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <sqlite3.h>

#include "common/clock.h"
#include "common/log.h"
#include "common/path.h"
#include "common/xdg.h"
#include "store/store_int.h"
#include "store/store_testapi.h"

static const struct store_sql store_sql_begin = {
	SQ_BEGIN, "BEGIN IMMEDIATE"
};

static const struct store_sql store_sql_commit = {
	SQ_COMMIT, "COMMIT"
};

static void	store_lose(struct store *, size_t);

/* What the user can do about an error of this kind. */
static const char *
store_hint(enum store_err err)
{
	switch (err) {
	case STORE_ECORRUPT:
		return "the file is damaged or not a database: move it aside"
		    " (`sqlite3 FILE .recover` may save its runs) and run again";
	case STORE_ENOTWARREN:
		return "it is another program's SQLite database: name another"
		    " file with --db or WARREN_DB";
	case STORE_ENEWER:
		return "it was written by a newer warren: use that version, or"
		    " name another database with --db or WARREN_DB";
	case STORE_EREADONLY:
		return "check the permissions of the file and of its directory,"
		    " or name another database with --db or WARREN_DB";
	case STORE_EBUSY:
		return "another process holds it locked";
	case STORE_EFORK:
		return "only the process that opened the store may use it";
	case STORE_EIO:
		return "check the disk (free space, errors) and run again";
	case STORE_OK:
	case STORE_EINVAL:
	case STORE_ENOTFOUND:
	case STORE_EEXIST:
	case STORE_ECYCLE:
	case STORE_ENOMEM:
		break;
	}
	return NULL;
}

/*
 * An I/O error under a file size limit (ulimit -f): SQLite says "disk I/O
 * error" of a write past it (EFBIG: warren ignores SIGXFSZ, cli/main.c),
 * and its errno is gone by then. The limit is named as a cause to check.
 */
static const char *
store_hint_fsize(const char *hint, char *buf, size_t bufsz)
{
	struct rlimit	rl;

	if (getrlimit(RLIMIT_FSIZE, &rl) == -1 || rl.rlim_cur == RLIM_INFINITY)
		return hint;
	snprintf(buf, bufsz, "a file size limit of %llu bytes is set (ulimit "
	    "-f, RLIMIT_FSIZE), and a write past it fails (File too large): "
	    "raise it, check the disk (free space, errors) and run again",
	    (unsigned long long)rl.rlim_cur);
	return buf;
}

/* snprintf that may cut: error messages are bounded on purpose. */
static void __attribute__((format(printf, 3, 4)))
store_fmt(char *dst, size_t dstsz, const char *fmt, ...)
{
	va_list	ap;

	va_start(ap, fmt);
	vsnprintf(dst, dstsz, fmt, ap);
	va_end(ap);
}

static int
store_vseterr(struct store *st, enum store_err err, const char *fmt,
    va_list ap)
{
	char		 what[STORE_ERRMSG_MAX], limit[256];
	const char	*hint;

	char		 who[256];

	vsnprintf(what, sizeof(what), fmt, ap);
	hint = store_hint(err);
	if (err == STORE_EIO)
		hint = store_hint_fsize(hint, limit, sizeof(limit));
	who[0] = '\0';
	/* Busy: name who holds it, not the disk, when it can be found. */
	if (err == STORE_EBUSY)
		store_lock_holders(st->path, who, sizeof(who));
	store_fmt(st->errmsg, sizeof(st->errmsg), "database %s: %s%s%s%s%s%s",
	    st->path, what, hint != NULL ? "; " : "", hint != NULL ? hint : "",
	    err == STORE_EBUSY ? " (" : "", err == STORE_EBUSY ? (*who ?
	    who : "not one of this user's processes: see fuser(1)") : "",
	    err == STORE_EBUSY ? "): wait for it to end, or stop it" : "");
	st->err = err;
	return -1;
}

int
store_seterr(struct store *st, enum store_err err, const char *fmt, ...)
{
	va_list	ap;

	va_start(ap, fmt);
	store_vseterr(st, err, fmt, ap);
	va_end(ap);
	return -1;
}

static enum store_err
store_err_from_sqlite(int rc)
{
	switch (rc & 0xff) {
	case SQLITE_OK:
	case SQLITE_DONE:
	case SQLITE_ROW:
		return STORE_OK;
	case SQLITE_NOTADB:
	case SQLITE_CORRUPT:
		return STORE_ECORRUPT;
	case SQLITE_READONLY:
	case SQLITE_PERM:
	case SQLITE_CANTOPEN:
		return STORE_EREADONLY;
	case SQLITE_BUSY:
	case SQLITE_LOCKED:
		return STORE_EBUSY;
	case SQLITE_NOMEM:
		return STORE_ENOMEM;
	case SQLITE_CONSTRAINT:
		return STORE_EINVAL;
	default:
		return STORE_EIO;
	}
}

int
store_setdberr(struct store *st, int rc, const char *what)
{
	const char	*detail;

	detail = st->db != NULL ? sqlite3_errmsg(st->db) : sqlite3_errstr(rc);
	return store_seterr(st, store_err_from_sqlite(rc), "%s: %s", what,
	    detail);
}

/*
 * This process's id, cached: getpid() is a system call and the owner
 * check runs on every write. fork() clears the cache in the child
 * (pthread_atfork), so a child always sees its own id.
 */
static pid_t		store_self;
static pthread_once_t	store_once = PTHREAD_ONCE_INIT;

static void
store_atfork_child(void)
{
	store_self = 0;
}

static void
store_init_once(void)
{
	pthread_atfork(NULL, NULL, store_atfork_child);
}

pid_t
store_getpid(void)
{
	if (store_self == 0)
		store_self = getpid();
	return store_self;
}

int
store_check_owner(struct store *st)
{
	/* The connection is the writer thread's: a call without a front
	 * end (store_writer.c) must not touch it. */
	if (st->w != NULL)
		return store_seterr(st, STORE_EINVAL, "this call is not"
		    " available while the writer thread runs");
	if (st->owner != store_getpid())
		return store_seterr(st, STORE_EFORK,
		    "used by process %ld, opened by %ld", (long)store_getpid(),
		    (long)st->owner);
	return 0;
}

sqlite3_stmt *
store_stmt(struct store *st, const struct store_sql *q)
{
	enum store_stmt_id	id = q->id;
	int			rc;

	if (st->stmts[id] == NULL) {
		rc = sqlite3_prepare_v3(st->db, q->text, -1,
		    SQLITE_PREPARE_PERSISTENT, &st->stmts[id], NULL);
		if (rc != SQLITE_OK) {
			store_setdberr(st, rc, "preparing a query");
			st->stmts[id] = NULL;
			return NULL;
		}
	}
	return st->stmts[id];
}

int
store_exec_stmt(struct store *st, sqlite3_stmt *s, const char *what)
{
	int	rc;

	rc = sqlite3_step(s);
	if (rc != SQLITE_DONE && rc != SQLITE_ROW) {
		store_setdberr(st, rc, what);
		sqlite3_reset(s);
		return -1;
	}
	sqlite3_reset(s);
	if (st->depth > 0)
		st->op_done++;
	return 0;
}

int
store_bind_text(sqlite3_stmt *s, int idx, const char *v)
{
	if (v == NULL)
		return sqlite3_bind_null(s, idx);
	return sqlite3_bind_text(s, idx, v, -1, SQLITE_STATIC);
}

char *
store_col_dup(sqlite3_stmt *s, int col, int *ok)
{
	const unsigned char	*v;
	char			*d;
	int			 n;

	if (sqlite3_column_type(s, col) == SQLITE_NULL)
		return NULL;
	v = sqlite3_column_text(s, col);
	n = sqlite3_column_bytes(s, col);
	if (v == NULL || (d = malloc((size_t)n + 1)) == NULL) {
		*ok = 0;
		return NULL;
	}
	memcpy(d, v, (size_t)n);
	d[n] = '\0';
	return d;
}

void
store_cache_clear(struct store *st)
{
	st->cache_run = 0;
	st->valid_run = 0;
	memset(st->valid_nodes, 0, sizeof(st->valid_nodes));
}

/*
 * The open batch is gone: the connection dropped it (I/O error, full
 * disk), or an operation failed half-way and the batch was rolled back so
 * that no half operation can ever be committed. Say so in the error.
 */
static void
store_batch_lost(struct store *st)
{
	char	prev[STORE_ERRMSG_MAX];

	if (!st->in_tx)
		return;
	if (!sqlite3_get_autocommit(st->db))
		sqlite3_exec(st->db, "ROLLBACK", NULL, NULL, NULL);
	strlcpy(prev, st->errmsg, sizeof(prev));
	store_fmt(st->errmsg, sizeof(st->errmsg),
	    "%s (the open batch of %zu rows was rolled back)", prev,
	    st->pending);
	store_lose(st, st->pending);
	st->in_tx = 0;
	st->pending = 0;
	store_cache_clear(st);
}

static void
store_lose(struct store *st, size_t rows)
{
	if (st->lost == STORE_OK) {
		st->lost = st->err != STORE_OK ? st->err : STORE_EIO;
		strlcpy(st->lostmsg, st->errmsg, sizeof(st->lostmsg));
	}
	st->lost_rows += rows;
}

const char *
store_lost(struct store *st)
{
	if (st != NULL && st->w != NULL)
		return store_w_lost(st);
	if (st == NULL || st->lost == STORE_OK)
		return NULL;
	store_fmt(st->lostdesc, sizeof(st->lostdesc), "%s; lost: %zu rows"
	    " not committed, %zu later writes refused", st->lostmsg,
	    st->lost_rows, st->lost_refused);
	return st->lostdesc;
}

/*
 * Errors that are the caller's (a bad id, a duplicate path): the write
 * was refused, nothing that should be on disk is missing. Only what can
 * fail inside an operation reaches store_op_end: a refused edge
 * (STORE_ECYCLE, STORE_EEXIST of an edge) is refused before its
 * store_op_begin, and a call from another process (STORE_EFORK) by it.
 */
static int
store_err_logical(enum store_err err)
{
	return err == STORE_EINVAL || err == STORE_ENOTFOUND ||
	    err == STORE_EEXIST;
}

/*
 * BEGIN IMMEDIATE takes the write lock. Another process may hold it (a
 * second warren committing, sqlite3 in a shell): wait for it, saying who
 * it is, up to STORE_WRITE_WAIT_MS; each try waits busy_timeout.
 */
static int
store_begin_batch(struct store *st)
{
	sqlite3_stmt	*s;
	uint64_t	 t0;
	int		 rc;

	if ((s = store_stmt(st, &store_sql_begin)) == NULL)
		return -1;
	t0 = clock_mono_ms();
	for (;;) {
		rc = sqlite3_step(s);
		sqlite3_reset(s);
		if (rc == SQLITE_DONE)
			return 0;
		store_setdberr(st, rc, "starting a batch");
		if (st->err != STORE_EBUSY ||
		    clock_mono_ms() - t0 >= STORE_WRITE_WAIT_MS)
			return -1;
		log_warnx("%s; still waiting (%llu s so far, at most %d s)",
		    st->errmsg, (unsigned long long)(clock_mono_ms() - t0) /
		    1000, STORE_WRITE_WAIT_MS / 1000);
	}
}

int
store_op_begin(struct store *st)
{
	if (store_check_owner(st) == -1)
		return -1;
	if (st->flags & STORE_READ)
		return store_seterr(st, STORE_EREADONLY,
		    "opened for reading only");
	if (st->lost != STORE_OK && !st->final) {
		st->lost_refused++;
		return store_seterr(st, st->lost, "not written: an earlier"
		    " write failed (%s)", st->lostmsg);
	}
	if (!st->in_tx) {
		if (store_begin_batch(st) == -1) {
			st->lost_refused++;
			store_lose(st, 0);
			return -1;
		}
		st->in_tx = 1;
		st->pending = 0;
	}
	st->op_done = 0;
	st->depth++;
	return 0;
}

/*
 * A failed statement undoes itself, so an operation that fails at its
 * first write leaves the batch as it was (a refused edge, a duplicate
 * path). The later statements of an operation can only fail for reasons
 * that also threaten the batch (no memory, I/O): then the whole batch is
 * rolled back rather than committed with half an operation in it. This
 * costs nothing on the common path, unlike a savepoint per operation.
 */
int
store_op_end(struct store *st, int ok, size_t rows)
{
	st->depth--;
	if (!ok) {
		if (st->in_tx && (sqlite3_get_autocommit(st->db) ||
		    st->op_done > 0))
			store_batch_lost(st);
		if (!store_err_logical(st->err))
			store_lose(st, rows);
		return -1;
	}
	st->pending += rows;
	if (st->depth == 0 && st->pending >= st->batch_max)
		return store_commit(st);
	return 0;
}

int
store_commit(struct store *st)
{
	size_t	n;
	int	rc;

	if (store_check_owner(st) == -1)
		return -1;
	if (!st->in_tx)
		return 0;
	n = st->pending;
	rc = sqlite3_step(store_stmt(st, &store_sql_commit));
	sqlite3_reset(store_stmt(st, &store_sql_commit));
	if (rc != SQLITE_DONE) {
		store_seterr(st, store_err_from_sqlite(rc), "committing a batch"
		    " of %zu rows: %s (the batch is lost)", n,
		    sqlite3_errmsg(st->db));
		if (!sqlite3_get_autocommit(st->db))
			sqlite3_exec(st->db, "ROLLBACK", NULL, NULL, NULL);
		store_lose(st, n);
		st->in_tx = 0;
		st->pending = 0;
		store_cache_clear(st);
		return -1;
	}
	st->in_tx = 0;
	st->pending = 0;
	return 0;
}

static int
store_flush_apply(struct store *st, struct store_op *op)
{
	(void)op;
	return store_commit(st);
}

static const struct store_op_type store_flush_type = {
	"committing a batch", STORE_OP_COMMIT, store_flush_apply, NULL
};

int
store_flush(struct store *st)
{
	struct store_op	*op;

	if (st == NULL)
		return 0;
	if ((op = store_op_new(st, &store_flush_type, sizeof(*op))) == NULL)
		return -1;
	return store_op_submit(st, op);
}

/* A consistent snapshot for a multi-query read (nothing if a batch is
 * open: the writer reads inside it). */
int
store_read_begin(struct store *st)
{
	int	rc;

	if (st->in_tx)
		return 0;
	if ((rc = sqlite3_exec(st->db, "BEGIN", NULL, NULL, NULL)) != SQLITE_OK)
		return store_setdberr(st, rc, "starting a read");
	return 0;
}

void
store_read_end(struct store *st)
{
	if (!st->in_tx && !sqlite3_get_autocommit(st->db))
		sqlite3_exec(st->db, "COMMIT", NULL, NULL, NULL);
}

size_t
store_pending(const struct store *st)
{
	return st->pending;
}

void
store_set_batch_max(struct store *st, size_t rows)
{
	if (st->w != NULL)
		return;		/* the writer's: set it before */
	st->batch_max = rows == 0 ? 1 : rows;
}

const char *
store_filename(const struct store *st)
{
	return st->path;
}

enum store_err
store_errcode(const struct store *st)
{
	return st->err;
}

const char *
store_errmsg(const struct store *st)
{
	return st->err == STORE_OK ? "no error" : st->errmsg;
}

int
store_path(char *out, size_t outsz, const char *explicit_path)
{
	const char	*env;
	char		 dir[PATH_MAX];
	int		 n;

	if (explicit_path != NULL && *explicit_path != '\0')
		n = snprintf(out, outsz, "%s", explicit_path);
	else if ((env = getenv("WARREN_DB")) != NULL && *env != '\0')
		n = snprintf(out, outsz, "%s", env);
	else if (xdg_state_dir(dir, sizeof(dir)) == -1)
		return -1;
	else
		n = snprintf(out, outsz, "%s/warren.db", dir);
	if (n < 0 || (size_t)n >= outsz) {
		errno = ENAMETOOLONG;
		return -1;
	}
	return 0;
}

/* One integer from a query ("PRAGMA user_version"). */
static int
store_query_int(struct store *st, const char *sql, int64_t *v)
{
	sqlite3_stmt	*s;
	int		 rc;

	if ((rc = sqlite3_prepare_v2(st->db, sql, -1, &s, NULL)) != SQLITE_OK)
		return store_setdberr(st, rc, "reading the header");
	rc = sqlite3_step(s);
	if (rc == SQLITE_ROW)
		*v = sqlite3_column_int64(s, 0);
	sqlite3_finalize(s);
	if (rc != SQLITE_ROW)
		return store_setdberr(st, rc, "reading the header");
	return 0;
}

/*
 * Make the directories of a new database file (~/.local/state/warren may
 * be the first of its kind on the machine). Created ones are private: the
 * database holds every run's transcript.
 */
static int
store_mkdir_parent(struct store *st)
{
	char	 dir[PATH_MAX];
	char	*slash;

	if (strlcpy(dir, st->path, sizeof(dir)) >= sizeof(dir))
		return store_seterr(st, STORE_EINVAL, "path too long");
	if ((slash = strrchr(dir, '/')) == NULL || slash == dir)
		return 0;
	*slash = '\0';
	if (path_mkdirs(dir, 0700, 0) == -1)
		return store_seterr(st, errno == ENOENT || errno == ENOTDIR ?
		    STORE_EINVAL : STORE_EREADONLY, "cannot create directory"
		    " %s: %s", dir, strerror(errno));
	return 0;
}

static int
store_exec(struct store *st, const char *sql, const char *what)
{
	int	rc;

	if ((rc = sqlite3_exec(st->db, sql, NULL, NULL, NULL)) != SQLITE_OK)
		return store_setdberr(st, rc, what);
	return 0;
}

/* Can this connection write? BEGIN IMMEDIATE takes the write lock, which
 * needs the file, the WAL and its directory writable. */
static int
store_probe_write(struct store *st)
{
	if (sqlite3_db_readonly(st->db, "main") == 1)
		return store_seterr(st, STORE_EREADONLY,
		    "cannot open for writing");
	if (store_exec(st, "BEGIN IMMEDIATE", "cannot write") == -1)
		return -1;
	return store_exec(st, "ROLLBACK", "cannot write");
}

/*
 * WAL mode, for readers beside the writer. Switching takes an exclusive
 * lock and SQLite does not always wait in its busy handler for it: a
 * second warren opening the same fresh file retries here for as long as
 * the busy timeout, and finds WAL already set by the first.
 */
static int
store_wal(struct store *st)
{
	struct timespec	 nap = { 0, 10 * 1000 * 1000 };
	int64_t		 waited_ms;
	int		 rc;

	for (waited_ms = 0;; waited_ms += 10) {
		rc = sqlite3_exec(st->db, "PRAGMA journal_mode = WAL", NULL,
		    NULL, NULL);
		if (rc == SQLITE_OK)
			return 0;
		if ((rc & 0xff) != SQLITE_BUSY && (rc & 0xff) != SQLITE_LOCKED)
			break;
		if (waited_ms >= STORE_BUSY_TIMEOUT_MS)
			return store_seterr(st, STORE_EBUSY, "setting WAL mode:"
			    " another process held the database for %d ms",
			    STORE_BUSY_TIMEOUT_MS);
		nanosleep(&nap, NULL);
	}
	return store_setdberr(st, rc, "setting WAL mode");
}

/* The header and whether the file has any table yet. */
static int
store_schema_read(struct store *st, int64_t *appid, int64_t *version,
    int64_t *ntables)
{
	if (store_query_int(st, "PRAGMA application_id", appid) == -1 ||
	    store_query_int(st, "PRAGMA user_version", version) == -1 ||
	    store_query_int(st, "SELECT count(*) FROM sqlite_master",
	    ntables) == -1)
		return -1;
	return 0;
}

/* Is the header one this program can use (perhaps after a migration)? */
static int
store_schema_check(struct store *st, int64_t appid, int64_t version)
{
	if ((uint32_t)appid != STORE_APPLICATION_ID)
		return store_seterr(st, STORE_ENOTWARREN,
		    "not a warren database (application_id %#x)",
		    (unsigned)appid);
	if (version > STORE_SCHEMA_VERSION)
		return store_seterr(st, STORE_ENEWER,
		    "schema version %lld, this warren knows up to %d",
		    (long long)version, STORE_SCHEMA_VERSION);
	if (version < 1)
		return store_seterr(st, STORE_ECORRUPT,
		    "schema version %lld is not valid", (long long)version);
	return 0;
}

/*
 * Create or migrate under the write lock. What was read before the lock
 * is read again under it: another warren may have created the tables in
 * between (two first runs at once), and then there is nothing to do.
 */
static int
store_schema_upgrade(struct store *st)
{
	char	*msg = NULL;
	int64_t	 appid, version, ntables;
	int	 rc = -1;

	if (store_exec(st, "BEGIN IMMEDIATE", "locking the database to "
	    "create or upgrade its schema") == -1)
		return -1;
	if (store_schema_read(st, &appid, &version, &ntables) == -1)
		goto out;
	if (appid == 0 && version == 0 && ntables == 0)
		version = 0;
	else if (store_schema_check(st, appid, version) == -1)
		goto out;
	if (version < STORE_SCHEMA_VERSION && store_schema_build(st->db,
	    (int)version, STORE_SCHEMA_VERSION, &msg) == -1) {
		store_seterr(st, STORE_EIO, "creating or upgrading the schema"
		    " from version %lld: %s", (long long)version,
		    msg != NULL ? msg : sqlite3_errmsg(st->db));
		if (msg != NULL && strstr(msg, "readonly") != NULL)
			st->err = STORE_EREADONLY;
		goto out;
	}
	if (store_exec(st, "COMMIT", "committing the schema") == -1)
		goto out;
	if (version > 0 && version < STORE_SCHEMA_VERSION)
		log_info("database %s: schema upgraded from version %lld to"
		    " %d", st->path, (long long)version, STORE_SCHEMA_VERSION);
	rc = 0;
out:
	if (rc == -1)
		sqlite3_exec(st->db, "ROLLBACK", NULL, NULL, NULL);
	free(msg);
	return rc;
}

/*
 * Make the file's schema current. WAL is set before the transaction (it
 * cannot change inside one); a second warren setting it at the same time
 * waits for the first and finds it set.
 */
static int
store_schema_ready(struct store *st)
{
	int64_t	 appid, version, ntables;
	int	 fresh, rc;

	/* One snapshot: another warren may commit the schema between two
	 * of these reads (tables there, header not yet read as set). */
	if (store_exec(st, "BEGIN", "reading the header") == -1)
		return -1;
	rc = store_schema_read(st, &appid, &version, &ntables);
	sqlite3_exec(st->db, "COMMIT", NULL, NULL, NULL);
	if (rc == -1)
		return -1;
	fresh = appid == 0 && version == 0 && ntables == 0;
	if (fresh && (st->flags & STORE_READ))
		return store_seterr(st, STORE_ENOTFOUND,
		    "empty: no run has been recorded in it yet");
	if (!fresh && store_schema_check(st, appid, version) == -1)
		return -1;
	if (version == STORE_SCHEMA_VERSION)
		return 0;
	if (sqlite3_db_readonly(st->db, "main") == 1)
		return store_seterr(st, STORE_EREADONLY,
		    "schema version %lld must be upgraded to %d, which needs"
		    " write access", (long long)version, STORE_SCHEMA_VERSION);
	if (fresh && store_wal(st) == -1)
		return -1;
	return store_schema_upgrade(st);
}

static int
store_open_db(struct store *st)
{
	struct stat	sb;
	int		oflags, rc;

	if (stat(st->path, &sb) == -1) {
		if (errno == ENOTDIR || errno == EACCES)
			return store_seterr(st, errno == EACCES ?
			    STORE_EREADONLY : STORE_EINVAL, "cannot reach it: "
			    "%s", strerror(errno));
		if (errno != ENOENT)
			return store_seterr(st, STORE_EIO, "%s",
			    strerror(errno));
		if (!(st->flags & STORE_CREATE))
			return store_seterr(st, STORE_ENOTFOUND,
			    "no such file: no run has been recorded here (name"
			    " another database with --db or WARREN_DB)");
		if (store_mkdir_parent(st) == -1)
			return -1;
	} else if (!S_ISREG(sb.st_mode))
		return store_seterr(st, STORE_EINVAL, "not a regular file");

	/* One thread uses a connection (the supervisor's loop): no mutex. */
	oflags = SQLITE_OPEN_READWRITE | SQLITE_OPEN_NOMUTEX;
	if (st->flags & STORE_CREATE)
		oflags |= SQLITE_OPEN_CREATE;
	rc = sqlite3_open_v2(st->path, &st->db, oflags, NULL);
	if (rc != SQLITE_OK)
		return store_setdberr(st, rc, "cannot open");
	sqlite3_extended_result_codes(st->db, 1);
	sqlite3_busy_timeout(st->db, STORE_BUSY_TIMEOUT_MS);
	if (store_schema_ready(st) == -1)
		return -1;
	if (!(st->flags & STORE_READ) && store_probe_write(st) == -1)
		return -1;
	/* A batch of thousands of rows stays in the page cache instead of
	 * spilling to the WAL before its commit; temporary tables of large
	 * queries stay in memory. The REFERENCES of the schema are checked
	 * by the store's code (store_run.c), not by SQLite on every insert:
	 * that costs a third of the write rate (docs/memory.md). */
	if (store_exec(st, "PRAGMA synchronous = NORMAL",
	    "setting synchronous") == -1 ||
	    store_exec(st, "PRAGMA cache_size = -32768",
	    "setting the cache size") == -1 ||
	    store_exec(st, "PRAGMA temp_store = MEMORY",
	    "setting temp_store") == -1 ||
	    store_exec(st, "PRAGMA foreign_keys = OFF",
	    "setting foreign keys") == -1)
		return -1;
	return 0;
}

struct store *
store_open(const char *path, int flags, char *err, size_t errsz)
{
	struct store	*st;

	if ((st = calloc(1, sizeof(*st))) == NULL ||
	    (st->path = strdup(path)) == NULL) {
		free(st);
		snprintf(err, errsz, "database %s: out of memory", path);
		return NULL;
	}
	pthread_once(&store_once, store_init_once);
	st->owner = store_getpid();
	st->flags = flags;
	st->batch_max = STORE_DEFAULT_BATCH_MAX;
	if (store_open_db(st) == -1) {
		snprintf(err, errsz, "%s", st->errmsg);
		store_close(st);
		return NULL;
	}
	return st;
}

void
store_close(struct store *st)
{
	size_t	i;

	if (st == NULL)
		return;
	store_writer_stop(st);
	/* In a forked child the connection is the parent's: leave it. */
	if (st->owner == store_getpid() && st->db != NULL) {
		if (st->in_tx && store_commit(st) == -1)
			log_warnx("%s", st->errmsg);
		for (i = 0; i < SQ__COUNT; i++)
			sqlite3_finalize(st->stmts[i]);
		sqlite3_close(st->db);
	}
	free(st->map);
	free(st->path);
	free(st);
}

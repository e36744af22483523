/*
 * Helpers shared by the queue's tests: a private directory with a fresh
 * state database, a clock the test moves, and short ways to add, claim
 * and end jobs.
 *
 * The same tests run on PostgreSQL when WARREN_TEST_QUEUE_URL is set
 * (tests/queue/pg_server.sh starts a server and sets it; ctest's *_on_pg
 * entries): each test gets a schema of its own, made by qt_make and
 * dropped by qt_remove, and qt_sql_int / qt_sql run SQL on whichever
 * backend it is. A test that only applies to SQLite calls qt_sqlite_only.
 */
#ifndef WARREN_QUEUE_TEST_H
#define WARREN_QUEUE_TEST_H

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <libpq-fe.h>
#include <sqlite3.h>

#include "queue/queue.h"
#include "queue/queue_testapi.h"

struct qt {
	char		 dir[512];
	char		 db[1024];	/* a file, or a PostgreSQL URL */
	char		 pgname[64];	/* the test's database, "" on SQLite */
	int64_t		 now;		/* the injected clock */
	struct queue	*q;
};

static inline int64_t
qt_clock(void *arg)
{
	return ((struct qt *)arg)->now;
}

static inline const char *
qt_pg_url(void)
{
	const char	*u = getenv("WARREN_TEST_QUEUE_URL");

	return u != NULL && *u != '\0' ? u : NULL;
}

static inline void
qt_pg_quiet(void *arg, const char *msg)
{
	(void)arg;
	(void)msg;
}

/* Run SQL on the server's own database (CREATE/DROP SCHEMA). */
static inline void
qt_pg_admin(const char *sql)
{
	PGconn		*c = PQconnectdb(qt_pg_url());
	PGresult	*r;

	PQsetNoticeProcessor(c, qt_pg_quiet, NULL);
	if (PQstatus(c) != CONNECTION_OK) {
		fprintf(stderr, "qt: %s", PQerrorMessage(c));
		abort();
	}
	r = PQexec(c, sql);
	if (PQresultStatus(r) != PGRES_COMMAND_OK) {
		fprintf(stderr, "qt: %s: %s", sql, PQresultErrorMessage(r));
		abort();
	}
	PQclear(r);
	PQfinish(c);
}

/* On PostgreSQL: a fresh schema of the server's database (a database
 * each would cost a second a test), first on the search_path of the
 * URL the test opens. */
static inline void
qt_pg_make(struct qt *t)
{
	static unsigned	 seq;
	const char	*u = qt_pg_url();
	char		 sql[128];

	t->pgname[0] = '\0';
	if (u == NULL)
		return;
	snprintf(t->pgname, sizeof(t->pgname), "wq_%ld_%u", (long)getpid(),
	    seq++);
	snprintf(sql, sizeof(sql), "CREATE SCHEMA %s", t->pgname);
	qt_pg_admin(sql);
	snprintf(t->db, sizeof(t->db), "%s?options=-csearch_path%%3D%s", u,
	    t->pgname);
}

static inline int
qt_is_pg(void)
{
	return qt_pg_url() != NULL;
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
	qt_pg_make(t);
}

static inline void
qt_remove(struct qt *t)
{
	char	cmd[600];

	/* Our own mkdtemp directory: nothing else can be named by it. */
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", t->dir);
	if (system(cmd) != 0)
		fprintf(stderr, "could not remove %s\n", t->dir);
	if (t->pgname[0] != '\0') {
		snprintf(cmd, sizeof(cmd), "DROP SCHEMA %s CASCADE",
		    t->pgname);
		qt_pg_admin(cmd);
		t->pgname[0] = '\0';
	}
}

/* One integer from a query on the test's queue database (-1: no row). */
static inline int64_t
qt_sql_int(struct qt *t, const char *sql)
{
	sqlite3_stmt	*s;
	sqlite3		*db;
	PGconn		*c;
	PGresult	*r;
	int64_t		 v = -1;

	if (t->pgname[0] != '\0') {
		c = PQconnectdb(t->db);
		r = PQexec(c, sql);
		if (PQresultStatus(r) != PGRES_TUPLES_OK) {
			fprintf(stderr, "qt: %s: %s", sql,
			    PQresultErrorMessage(r));
			abort();
		}
		if (PQntuples(r) > 0)
			v = strtoll(PQgetvalue(r, 0, 0), NULL, 10);
		PQclear(r);
		PQfinish(c);
		return v;
	}
	if (sqlite3_open(t->db, &db) != SQLITE_OK ||
	    sqlite3_prepare_v2(db, sql, -1, &s, NULL) != SQLITE_OK) {
		fprintf(stderr, "qt: %s: %s\n", sql, sqlite3_errmsg(db));
		abort();
	}
	if (sqlite3_step(s) == SQLITE_ROW)
		v = sqlite3_column_int64(s, 0);
	sqlite3_finalize(s);
	sqlite3_close(db);
	return v;
}

/* Run statements on the test's queue database; 0, or -1 said. */
static inline int
qt_sql(struct qt *t, const char *sql)
{
	sqlite3		*db;
	PGconn		*c;
	PGresult	*r;
	char		*e = NULL;
	int		 rc = 0;

	if (t->pgname[0] != '\0') {
		c = PQconnectdb(t->db);
		r = PQexec(c, sql);
		if (PQresultStatus(r) != PGRES_COMMAND_OK &&
		    PQresultStatus(r) != PGRES_TUPLES_OK) {
			fprintf(stderr, "qt: %s: %s", sql,
			    PQresultErrorMessage(r));
			rc = -1;
		}
		PQclear(r);
		PQfinish(c);
		return rc;
	}
	if (sqlite3_open(t->db, &db) != SQLITE_OK ||
	    sqlite3_exec(db, sql, NULL, NULL, &e) != SQLITE_OK) {
		fprintf(stderr, "qt: %s: %s\n", sql, e != NULL ? e :
		    sqlite3_errmsg(db));
		rc = -1;
	}
	sqlite3_free(e);
	sqlite3_close(db);
	return rc;
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

/*
 * Several processes on one database file, with real files:
 *   - first runs at once: pairs of processes open a fresh file together
 *     (schema creation races), 20 times; both must succeed and write;
 *   - a lock held by another process: the busy message names that
 *     process, not the disk.
 */
#include <sys/types.h>
#include <sys/wait.h>

#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>
#include <sqlite3.h>

#include "store/store.h"
#include "tests/store/store_test.h"
#include "tests/test_wait.h"

#define FIRST_RUN_PAIRS	20

/* A child: wait for the start, open the fresh file, write a run, commit. */
static void
first_run_child(const char *db, int gate)
{
	struct store_run_params	 p = { .task = "first run" };
	struct store		*st;
	char			 err[512], c;
	int64_t			 run;

	if (read(gate, &c, 1) == -1)
		_exit(3);
	if ((st = store_open(db, STORE_CREATE, err, sizeof(err))) == NULL) {
		fprintf(stderr, "pid %ld: %s\n", (long)getpid(), err);
		_exit(1);
	}
	if (store_run_begin(st, &p, &run) == -1 || store_flush(st) == -1) {
		fprintf(stderr, "pid %ld: %s\n", (long)getpid(),
		    store_errmsg(st));
		_exit(2);
	}
	store_close(st);
	_exit(0);
}

static int
count_runs(const char *db)
{
	sqlite3		*h;
	sqlite3_stmt	*s;
	int		 n = -1;

	assert_int_equal(sqlite3_open_v2(db, &h, SQLITE_OPEN_READONLY, NULL),
	    SQLITE_OK);
	assert_int_equal(sqlite3_prepare_v2(h, "SELECT count(*) FROM runs",
	    -1, &s, NULL), SQLITE_OK);
	if (sqlite3_step(s) == SQLITE_ROW)
		n = sqlite3_column_int(s, 0);
	sqlite3_finalize(s);
	sqlite3_close(h);
	return n;
}

static void
test_first_runs_in_pairs(void **state)
{
	struct store_tdir	 t;
	pid_t			 pid[2];
	int			 gate[2], i, k, st;

	(void)state;
	for (i = 0; i < FIRST_RUN_PAIRS; i++) {
		store_tdir_make(&t);
		assert_int_equal(pipe(gate), 0);
		for (k = 0; k < 2; k++) {
			pid[k] = fork();
			assert_true(pid[k] != -1);
			if (pid[k] == 0) {
				close(gate[1]);
				first_run_child(t.db, gate[0]);
			}
		}
		close(gate[0]);
		close(gate[1]);		/* both start now (EOF) */
		for (k = 0; k < 2; k++) {
			assert_true((st = test_waitpid(pid[k], 240,
			    "the child of test_first_runs_in_pairs")) != -1);
			if (!WIFEXITED(st) || WEXITSTATUS(st) != 0)
				fail_msg("pair %d: process %d failed (%d)", i,
				    k, st);
		}
		assert_int_equal(count_runs(t.db), 2);
		store_tdir_remove(&t);
	}
}

/* Another process holds the write lock longer than the busy timeout. */
static void
test_busy_names_holder(void **state)
{
	struct store_tdir	 t;
	struct store		*st;
	sqlite3			*h;
	char			 err[1024], want[64], c;
	pid_t			 pid;
	int			 ready[2], status;

	(void)state;
	store_tdir_make(&t);
	assert_non_null(st = store_open(t.db, STORE_CREATE, err, sizeof(err)));
	store_close(st);
	assert_int_equal(pipe(ready), 0);
	if ((pid = fork()) == 0) {
		close(ready[0]);
		if (sqlite3_open(t.db, &h) != SQLITE_OK ||
		    sqlite3_exec(h, "BEGIN EXCLUSIVE", NULL, NULL,
		    NULL) != SQLITE_OK)
			_exit(1);
		if (write(ready[1], "x", 1) != 1)
			_exit(1);
		pause();
		_exit(0);
	}
	close(ready[1]);
	if (test_read(ready[0], &c, 1, 30, "the lock holder's ready byte") !=
	    1) {
		kill(pid, SIGKILL);
		(void)test_waitpid(pid, 10, "the lock holder, killed");
		fail_msg("the child holding the database's lock did not say "
		    "ready within 30 s");
	}
	st = store_open(t.db, STORE_CREATE, err, sizeof(err));
	kill(pid, SIGKILL);
	waitpid(pid, &status, 0);	/* after SIGKILL: it ends */
	close(ready[0]);
	assert_null(st);
	fprintf(stderr, "busy: %s\n", err);
	snprintf(want, sizeof(want), "pid %ld (", (long)pid);
	assert_non_null(strstr(err, want));
	assert_non_null(strstr(err, "locked"));
	assert_null(strstr(err, "check the disk"));
	store_tdir_remove(&t);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_first_runs_in_pairs),
		cmocka_unit_test(test_busy_names_holder),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}

/*
 * A run the token budget ends keeps what its agents finished: subagent
 * 0.1 completes, 0.2's second turn is refused (the budget is spent), the
 * root cannot take its synthesis turn and the run fails (exit 1), and its
 * failure, printed and stored as the run's result, carries 0.1's result
 * as the partial result.
 */
#include <sys/types.h>

#include <limits.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "store/store.h"
#include "tests/e2e/harness.h"

static const char script[] =
"{\"rules\": [\n"
" {\"match\": [\"KID-B\", \"call_b1\"], \"repeat\": true, \"responses\":"
"  [{\"reply\": {\"calls\": [{\"id\": \"b2\", \"name\": \"complete\","
"  \"arguments\": {\"result\": \"RESULT-B\"}}], \"usage\": {\"input\": 10,"
"  \"output\": 10}}}]},\n"
" {\"match\": \"KID-B\", \"repeat\": true, \"responses\": [{\"delay_ms\": 400,"
"  \"reply\": {\"calls\": [{\"id\": \"call_b1\", \"name\": \"read\","
"  \"arguments\": {\"path\": \"data.txt\"}}], \"usage\": {\"input\": 300,"
"  \"output\": 100}}}]},\n"
" {\"match\": \"KID-A\", \"repeat\": true, \"responses\": [{\"reply\":"
"  {\"calls\": [{\"id\": \"a1\", \"name\": \"complete\", \"arguments\":"
"  {\"result\": \"RESULT-A-KEPT\"}}], \"usage\": {\"input\": 80,"
"  \"output\": 20}}}]},\n"
" {\"match\": \"BUDGET-TASK\", \"repeat\": true, \"responses\": [{\"reply\":"
"  {\"calls\": ["
"  {\"id\": \"d1\", \"name\": \"delegate\", \"arguments\":"
"   {\"profile\": \"explore\", \"task\": \"KID-A\"}},"
"  {\"id\": \"d2\", \"name\": \"delegate\", \"arguments\":"
"   {\"profile\": \"explore\", \"task\": \"KID-B\"}}"
"  ], \"usage\": {\"input\": 80, \"output\": 20}}}]}\n"
"]}\n";

static void
test_budget_partial(void **state)
{
	struct h_fakellm fl;
	struct h_run	 r;
	struct store	*st;
	struct store_run run;
	int64_t		 id;
	char		*dir, ws[PATH_MAX], db[PATH_MAX], dbenv[PATH_MAX + 16];
	char		 err[STORE_ERRMSG_MAX];
	char		*argv[] = { "warren", "run", "--budget", "500",
			    "--workspace", ws, "BUDGET-TASK", NULL };
	char		*env[] = { fl.env_url, dbenv, "WARREN_API_KEY=k",
			    "WARREN_MODEL=fake", "WARREN_RETRIES=0", NULL };
	int		 rc;

	(void)state;
	dir = h_tmpdir();
	snprintf(ws, sizeof(ws), "%s/ws", dir);
	h_write(ws, "data.txt", "x\n", 0);
	snprintf(db, sizeof(db), "%s/w.db", dir);
	snprintf(dbenv, sizeof(dbenv), "WARREN_DB=%s", db);
	if ((rc = h_fakellm_start(&fl, dir, script)) == 1) {
		h_rm_rf(dir);
		free(dir);
		skip();
	}
	assert_int_equal(rc, 0);
	assert_int_equal(h_warren(&r, argv, env, NULL, NULL), 0);
	h_fakellm_stop(&fl);
	if (r.status != 1 || strstr(r.err, "token budget of 500") == NULL ||
	    strstr(r.err, "Partial result") == NULL ||
	    strstr(r.err, "RESULT-A-KEPT") == NULL ||
	    strstr(r.err, "RESULT-B") != NULL)
		fail_msg("budget run: exit %d\n%s", r.status, r.err);
	h_run_free(&r);
	assert_non_null(st = store_open(db, STORE_READ, err, sizeof(err)));
	assert_int_equal(store_run_latest(st, NULL, &id), 0);
	assert_int_equal(store_run_get(st, id, &run), 0);
	assert_int_equal(run.status, STORE_RUN_FAILED);
	assert_non_null(strstr(run.result, "--- 0.1 (explore): KID-A\n"
	    "RESULT-A-KEPT"));
	store_run_free(&run);
	store_close(st);
	h_rm_rf(dir);
	free(dir);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_teardown(test_budget_partial,
		    h_fakellm_teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}

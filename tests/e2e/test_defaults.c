/*
 * The defaults of --jobs and llm_concurrency are sized for agents that wait
 * on the LLM, not on a core: six subagents whose every turn takes 300 ms,
 * started with no --jobs, no WARREN_JOBS and no llm_concurrency, all run at
 * once (on a 2-core machine the old default, the number of cores, ran them
 * two by two), and the run takes about one agent's time, not three.
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
#include "supervisor/run.h"
#include "tests/e2e/harness.h"

#define KIDS	6

#define KID(n) \
"  {\"id\": \"d" #n "\", \"name\": \"delegate\", \"arguments\":" \
"   {\"profile\": \"explore\", \"task\": \"KID-" #n "\"}}"

static const char script[] =
"{\"rules\": [\n"
" {\"match\": [\"DEFAULTS-TASK\", \"KIDS-DONE\"], \"repeat\": true,"
"  \"responses\": [{\"reply\": {\"calls\": [{\"id\": \"r2\", \"name\":"
"  \"complete\", \"arguments\": {\"result\": \"ALL\"}}]}}]},\n"
" {\"match\": [\"KID-\", \"call_g\"], \"repeat\": true, \"responses\":"
"  [{\"delay_ms\": 300, \"reply\": {\"calls\": [{\"id\": \"c2\", \"name\":"
"  \"complete\", \"arguments\": {\"result\": \"KIDS-DONE\"}}]}}]},\n"
" {\"match\": \"KID-\", \"repeat\": true, \"responses\": [{\"delay_ms\": 300,"
"  \"reply\": {\"calls\": [{\"id\": \"call_g\", \"name\": \"glob\","
"  \"arguments\": {\"pattern\": \"*\"}}]}}]},\n"
" {\"match\": \"DEFAULTS-TASK\", \"repeat\": true, \"responses\": [{\"reply\":"
"  {\"calls\": [" KID(1) "," KID(2) "," KID(3) "," KID(4) "," KID(5) ","
  KID(6) "]}}]}\n"
"]}\n";

/* The most subagents whose [started, ended] overlap at one instant. */
static int
most_at_once(const struct store_agent *a, size_t n)
{
	size_t	i, j;
	int	best = 0, k;

	for (i = 0; i < n; i++) {
		if (a[i].depth != 1)
			continue;
		for (k = 0, j = 0; j < n; j++)
			k += a[j].depth == 1 && a[j].started_ms <=
			    a[i].started_ms && a[i].started_ms < a[j].ended_ms;
		if (k > best)
			best = k;
	}
	return best;
}

static void
test_defaults(void **state)
{
	struct h_fakellm fl;
	struct h_run	 r;
	struct store	*st;
	struct store_agent *ag;
	struct run_limits l;
	size_t		 nag;
	int64_t		 run;
	char		*dir, ws[PATH_MAX], db[PATH_MAX], dbenv[PATH_MAX + 16];
	char		 err[STORE_ERRMSG_MAX];
	char		*argv[] = { "warren", "run", "--json", "--workspace", ws,
			    "DEFAULTS-TASK", NULL };
	char		*env[] = { fl.env_url, dbenv, "WARREN_API_KEY=k",
			    "WARREN_MODEL=fake", "WARREN_RETRIES=0", NULL };
	int		 rc;

	(void)state;
	limits_default(&l);
	assert_int_equal(l.jobs, 64);
	unsetenv("WARREN_JOBS");
	unsetenv("WARREN_LLM_CONCURRENCY");
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
	if (r.status != 0)
		fail_msg("run: %d\n%s", r.status, r.err);
	h_run_free(&r);
	assert_non_null(st = store_open(db, STORE_READ, err, sizeof(err)));
	assert_int_equal(store_run_latest(st, NULL, &run), 0);
	assert_int_equal(store_agents_list(st, run, &ag, &nag), 0);
	assert_int_equal(nag, KIDS + 1);
	if ((rc = most_at_once(ag, nag)) != KIDS)
		fail_msg("only %d of the %d subagents ran at once", rc, KIDS);
	store_agents_free(ag, nag);
	store_close(st);
	h_rm_rf(dir);
	free(dir);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_teardown(test_defaults, h_fakellm_teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}

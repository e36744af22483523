/*
 * The defaults of --jobs and llm_concurrency are sized for agents that wait
 * on the LLM, not on a core: six subagents whose every turn takes 300 ms,
 * started with no --jobs, no WARREN_JOBS and no llm_concurrency, all run at
 * once (on a 2-core machine the old default, the number of cores, ran them
 * two by two), and the run takes about one agent's time, not three.
 * test_fanout: 64 of them (--max-agents 64, nothing else set) are not run
 * in waves of 16 as under the defaults before issue 33 (--jobs 16,
 * llm_concurrency 32): more than 32 are alive at one instant.
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
#define FANOUT	64
#define FANOUT_MIN	33	/* above both old defaults */
/* A kid's turn: long enough for 64 workers to start in an ASan build on
 * two busy cores (28 of them overlapped with 300 ms turns). */
#define FANOUT_DELAY_MS	2000

/*
 * The script's rules before the root's first turn, a kid's turn delay in
 * it (%d twice): the root's last turn, a kid's second and first turns.
 * Then fanout_script adds the root's first turn, which delegates them.
 */
static const char script_kids[] =
"{\"rules\": [\n"
" {\"match\": [\"DEFAULTS-TASK\", \"KIDS-DONE\"], \"repeat\": true,"
"  \"responses\": [{\"reply\": {\"calls\": [{\"id\": \"r2\", \"name\":"
"  \"complete\", \"arguments\": {\"result\": \"ALL\"}}]}}]},\n"
" {\"match\": [\"KID-\", \"call_g\"], \"repeat\": true, \"responses\":"
"  [{\"delay_ms\": %d, \"reply\": {\"calls\": [{\"id\": \"c2\", \"name\":"
"  \"complete\", \"arguments\": {\"result\": \"KIDS-DONE\"}}]}}]},\n"
" {\"match\": \"KID-\", \"repeat\": true, \"responses\": [{\"delay_ms\": %d,"
"  \"reply\": {\"calls\": [{\"id\": \"call_g\", \"name\": \"glob\","
"  \"arguments\": {\"pattern\": \"*\"}}]}}]},\n";

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

/* The script with n kids delegated in one turn, each turn delay ms. */
static char *
fanout_script(int n, int delay)
{
	char	*s;
	size_t	 len = sizeof(script_kids) + 256 + (size_t)n * 128;
	int	 i, k;

	if ((s = malloc(len)) == NULL)
		fail_msg("out of memory for a script of %d kids", n);
	i = snprintf(s, len, script_kids, delay, delay);
	i += snprintf(s + i, len - (size_t)i, " {\"match\": \"DEFAULTS-TASK\", "
	    "\"repeat\": true, \"responses\": [{\"reply\": {\"calls\": [");
	for (k = 1; k <= n; k++)
		i += snprintf(s + i, len - (size_t)i, "%s{\"id\": \"d%d\", "
		    "\"name\": \"delegate\", \"arguments\": {\"profile\": "
		    "\"explore\", \"task\": \"KID-%d\"}}", k > 1 ? "," : "", k,
		    k);
	snprintf(s + i, len - (size_t)i, "]}}]}\n]}\n");
	return s;
}

/* A run of n kids with the defaults, each turn delay ms; the most alive
 * at one instant. */
static int
run_kids(int n, int delay)
{
	struct h_fakellm fl;
	struct h_run	 r;
	struct store	*st;
	struct store_agent *ag;
	size_t		 nag;
	int64_t		 run;
	char		*dir, ws[PATH_MAX], db[PATH_MAX], dbenv[PATH_MAX + 16];
	char		 err[STORE_ERRMSG_MAX], nkids[16], *scr;
	char		*argv[] = { "warren", "run", "--json", "--workspace", ws,
			    "--max-agents", nkids, "DEFAULTS-TASK", NULL };
	char		*env[] = { fl.env_url, dbenv, "WARREN_API_KEY=k",
			    "WARREN_MODEL=fake", "WARREN_RETRIES=0", NULL };
	int		 rc, most;

	unsetenv("WARREN_JOBS");
	unsetenv("WARREN_LLM_CONCURRENCY");
	snprintf(nkids, sizeof(nkids), "%d", n);
	dir = h_tmpdir();
	snprintf(ws, sizeof(ws), "%s/ws", dir);
	h_write(ws, "data.txt", "x\n", 0);
	snprintf(db, sizeof(db), "%s/w.db", dir);
	snprintf(dbenv, sizeof(dbenv), "WARREN_DB=%s", db);
	scr = fanout_script(n, delay);
	rc = h_fakellm_start(&fl, dir, scr);
	free(scr);
	if (rc == 1) {
		h_rm_rf(dir);
		free(dir);
		skip();
	}
	assert_int_equal(rc, 0);
	assert_int_equal(h_warren(&r, argv, env, NULL, NULL), 0);
	h_fakellm_stop(&fl);
	if (r.status != 0)
		fail_msg("run of %d kids: %d\n%s", n, r.status, r.err);
	h_run_free(&r);
	assert_non_null(st = store_open(db, STORE_READ, err, sizeof(err)));
	assert_int_equal(store_run_latest(st, NULL, &run), 0);
	assert_int_equal(store_agents_list(st, run, &ag, &nag), 0);
	assert_int_equal(nag, (size_t)n + 1);
	most = most_at_once(ag, nag);
	store_agents_free(ag, nag);
	store_close(st);
	h_rm_rf(dir);
	free(dir);
	return most;
}

static void
test_fanout(void **state)
{
	int	 most;

	(void)state;
	if ((most = run_kids(FANOUT, FANOUT_DELAY_MS)) < FANOUT_MIN)
		fail_msg("only %d of the %d subagents ran at once (at least "
		    "%d: more than the old --jobs 16 and llm_concurrency 32)",
		    most, FANOUT, FANOUT_MIN);
	print_message("%d of %d subagents alive at one instant\n", most,
	    FANOUT);
}

static void
test_defaults(void **state)
{
	struct run_limits l;
	int		 most;

	(void)state;
	limits_default(&l);
	assert_int_equal(l.jobs, 64);
	if ((most = run_kids(KIDS, 300)) != KIDS)
		fail_msg("only %d of the %d subagents ran at once", most, KIDS);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_teardown(test_defaults, h_fakellm_teardown),
		cmocka_unit_test_teardown(test_fanout, h_fakellm_teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}

/*
 * warren run against a real HTTP endpoint: the fakellm server on
 * 127.0.0.1 (tests/llm/fakellm.c), scripted by what each request body
 * holds. The orchestrator delegates, the explore worker reads a file, its
 * result goes back up; every LLM turn (the worker's too) arrives at the
 * endpoint from the supervisor with the key, and the key reaches no worker.
 */
#include <sys/types.h>
#include <sys/wait.h>

#include <limits.h>
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

#include "tests/e2e/harness.h"

#define KEY	"sk-fakellm-e2e-51ac0e"

/* Rules are tried in order; the first whose text is in the body answers. */
static const char script[] =
"{\"rules\": [\n"
" {\"match\": \"SUB-RESULT-XYZ\", \"repeat\": true, \"responses\": [{\"reply\":"
"  {\"calls\": [{\"id\": \"c4\", \"name\": \"complete\", \"arguments\":"
"  {\"result\": \"FINAL-VIA-HTTP\"}}]}}]},\n"
" {\"match\": \"MAGIC-LINE-42\", \"repeat\": true, \"responses\": [{\"reply\":"
"  {\"calls\": [{\"id\": \"c3\", \"name\": \"complete\", \"arguments\":"
"  {\"result\": \"SUB-RESULT-XYZ\"}}]}}]},\n"
" {\"match\": \"CHILD-TASK-QQ\", \"repeat\": true, \"responses\": [{\"reply\":"
"  {\"calls\": [{\"id\": \"c2\", \"name\": \"read\", \"arguments\":"
"  {\"path\": \"data.txt\"}}]}}]},\n"
" {\"match\": \"FAKE-TASK-1\", \"repeat\": true, \"responses\": [{\"reply\":"
"  {\"calls\": [{\"id\": \"c1\", \"name\": \"delegate\", \"arguments\":"
"  {\"profile\": \"explore\", \"task\": \"CHILD-TASK-QQ: read data.txt\","
"  \"inherit_context\": true}}]}}]}\n"
"]}\n";

/* The run's output: the result came back up through the child. */
static void
assert_delegated(const struct h_run *r)
{
	assert_int_equal(r->status, 0);
	assert_int_equal(h_count_lines(r->out, "\"event\":\"result\"",
	    "FINAL-VIA-HTTP"), 1);
	assert_true(h_count_lines(r->out, "\"path\":\"0.1\"",
	    "MAGIC-LINE-42") >= 1);
}

static void
test_http_endpoint_delegation(void **state)
{
	struct h_fakellm fl;
	struct h_run	 r;
	char		*dir, ws[1024], cas[PATH_MAX], *reqs;
	char		*argv[] = { "warren", "run", "--json", "--no-store",
			    "--workspace", ws, "--record", cas, "FAKE-TASK-1",
			    NULL };
	char		*argv2[] = { "warren", "run", "--json", "--no-store",
			    "--workspace", ws, "--replay", cas, "FAKE-TASK-1",
			    NULL };
	char		*env[] = { fl.env_url, "WARREN_API_KEY=" KEY,
			    "WARREN_MODEL=fake-model", "WARREN_RETRIES=0", NULL };
	int		 rc;

	(void)state;
	dir = h_tmpdir();
	snprintf(ws, sizeof(ws), "%s/ws", dir);
	h_write(ws, "data.txt", "MAGIC-LINE-42\n", 0);
	snprintf(cas, sizeof(cas), "%s/recorded.cassette", dir);
	if ((rc = h_fakellm_start(&fl, dir, script)) == 1) {
		h_rm_rf(dir);
		free(dir);
		skip();
	}
	assert_int_equal(rc, 0);

	assert_int_equal(h_warren(&r, argv, env, NULL, NULL), 0);
	h_fakellm_stop(&fl);

	assert_delegated(&r);
	assert_null(strstr(r.out, KEY));
	assert_null(strstr(r.err, KEY));
	/* Four turns (0, 0.1, 0.1, 0), all from the supervisor, with the key. */
	h_run_free(&r);
	reqs = h_read_file(fl.log);
	assert_int_equal(h_count_lines(reqs, "\"method\":\"POST\"", NULL), 4);
	assert_int_equal(h_count_lines(reqs, "\"method\":\"POST\"",
	    "Bearer " KEY), 4);
	/* inherit_context: the child's turns carry its ancestor's task. */
	assert_true(h_count_lines(reqs, "CHILD-TASK-QQ",
	    "whose task is: FAKE-TASK-1") >= 1);
	free(reqs);

	/* The recorded session replays with no endpoint at all, the same
	 * way: keys are agent path + step, whatever order the turns took. */
	assert_int_equal(h_warren(&r, argv2, NULL, NULL, NULL), 0);
	assert_delegated(&r);
	assert_null(strstr(r.err, "recorded for another task"));
	h_run_free(&r);
	/* Another task replays the same answers, and is told so. */
	argv2[8] = "ANOTHER-TASK";
	assert_int_equal(h_warren(&r, argv2, NULL, NULL, NULL), 0);
	assert_delegated(&r);
	if (strstr(r.err, "recorded.cassette was recorded for another task")
	    == NULL)
		fail_msg("no note of another task:\n%s", r.err);
	h_run_free(&r);
	reqs = h_read_file(cas);
	assert_null(strstr(reqs, KEY));	/* never in a cassette */
	free(reqs);
	h_rm_rf(dir);
	free(dir);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_teardown(test_http_endpoint_delegation,
		    h_fakellm_teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}

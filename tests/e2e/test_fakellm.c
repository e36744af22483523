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

static void
test_http_endpoint_delegation(void **state)
{
	const char	*fake = getenv("WARREN_FAKELLM_BIN");
	char		*dir, ws[1024], spath[PATH_MAX], port[PATH_MAX];
	char		 logp[PATH_MAX], url[128], env_url[160];
	char		 cas[PATH_MAX];
	char		*argv[] = { "warren", "run", "--json", "--no-store",
			    "--workspace", ws, "--record", cas, "FAKE-TASK-1",
			    NULL };
	char		*argv2[] = { "warren", "run", "--json", "--no-store",
			    "--workspace", ws, "--replay", cas, "FAKE-TASK-1",
			    NULL };
	char		*env[] = { env_url, "WARREN_API_KEY=" KEY,
			    "WARREN_MODEL=fake-model", "WARREN_RETRIES=0", NULL };
	struct h_run	 r;
	FILE		*f;
	char		 line[64] = "";
	static char	 reqs[1 << 16];
	size_t		 n;
	pid_t		 pid;
	int		 st, i;

	(void)state;
	if (fake == NULL || access(fake, X_OK) == -1) {
		fprintf(stderr, "skip: no fakellm (WARREN_FAKELLM_BIN)\n");
		skip();
	}
	dir = h_tmpdir();
	snprintf(ws, sizeof(ws), "%s/ws", dir);
	h_write(ws, "data.txt", "MAGIC-LINE-42\n", 0);
	h_write(dir, "script.json", script, 0);
	snprintf(spath, sizeof(spath), "%s/script.json", dir);
	snprintf(port, sizeof(port), "%s/port", dir);
	snprintf(logp, sizeof(logp), "%s/requests.log", dir);
	snprintf(cas, sizeof(cas), "%s/recorded.cassette", dir);
	if ((pid = fork()) == 0) {
		execl(fake, "fakellm", "--script", spath, "--port-file", port,
		    "--log", logp, (char *)NULL);
		_exit(127);
	}
	assert_int_equal(h_wait_file(port, 60), 0);
	for (i = 0; i < 500 && line[0] == '\0'; i++) {
		if ((f = fopen(port, "r")) != NULL) {
			if (fgets(line, sizeof(line), f) == NULL)
				line[0] = '\0';
			fclose(f);
		}
		if (line[0] == '\0')
			usleep(10000);
	}
	line[strcspn(line, "\n")] = '\0';
	snprintf(url, sizeof(url), "http://127.0.0.1:%s/v1", line);
	snprintf(env_url, sizeof(env_url), "WARREN_BASE_URL=%s", url);

	assert_int_equal(h_warren(&r, argv, env, NULL, NULL), 0);
	kill(pid, SIGTERM);
	(void)waitpid(pid, &st, 0);

	assert_int_equal(r.status, 0);
	assert_int_equal(h_count_lines(r.out, "\"event\":\"result\"",
	    "FINAL-VIA-HTTP"), 1);
	assert_true(h_count_lines(r.out, "\"path\":\"0.1\"", "MAGIC-LINE-42")
	    >= 1);
	assert_null(strstr(r.out, KEY));
	assert_null(strstr(r.err, KEY));
	/* Four turns (0, 0.1, 0.1, 0), all from the supervisor, with the key. */
	h_run_free(&r);
	f = fopen(logp, "r");
	assert_non_null(f);
	n = fread(reqs, 1, sizeof(reqs) - 1, f);
	fclose(f);
	reqs[n] = '\0';
	assert_int_equal(h_count_lines(reqs, "\"method\":\"POST\"", NULL), 4);
	assert_int_equal(h_count_lines(reqs, "\"method\":\"POST\"",
	    "Bearer " KEY), 4);
	/* inherit_context: the child's turns carry its ancestor's task. */
	assert_true(h_count_lines(reqs, "CHILD-TASK-QQ",
	    "whose task is: FAKE-TASK-1") >= 1);

	/* The recorded session replays with no endpoint at all, the same
	 * way: keys are agent path + step, whatever order the turns took. */
	assert_int_equal(h_warren(&r, argv2, NULL, NULL, NULL), 0);
	assert_int_equal(r.status, 0);
	assert_int_equal(h_count_lines(r.out, "\"event\":\"result\"",
	    "FINAL-VIA-HTTP"), 1);
	assert_true(h_count_lines(r.out, "\"path\":\"0.1\"", "MAGIC-LINE-42")
	    >= 1);
	h_run_free(&r);
	f = fopen(cas, "r");
	assert_non_null(f);
	n = fread(reqs, 1, sizeof(reqs) - 1, f);
	fclose(f);
	reqs[n] = '\0';
	assert_null(strstr(reqs, KEY));	/* never in a cassette */
	h_rm_rf(dir);
	free(dir);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_http_endpoint_delegation),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}

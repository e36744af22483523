/*
 * `backend: claude-code` end to end (docs/backends.md): an orchestrator
 * scripted on fakellm delegates to an agent file whose backend is Claude
 * Code (the pinned npm install, tests/npm). It runs in the worker's
 * sandbox with the preset's launch (agent/backend_presets.c); the model
 * of tests/agents/claude_code.json has it save its environment with Bash
 * and write hello.txt: every request it sends reaches fakellm through the
 * broker with the user's key, never the placeholder; both files land in
 * the run's layer, not the workspace; the environment it saved holds no
 * key; its final answer is the subagent's result.
 */
#include <sys/stat.h>

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
#include <jansson.h>

#include "tests/e2e/harness.h"

#define KEY	"sk-user-KEY-0836"

/* The orchestrator's two turns, then the fixture's rules for the agent. */
static char *
script_text(void)
{
	const char	*src = getenv("WARREN_SOURCE_DIR");
	char		 path[PATH_MAX];
	json_t		*fix, *rules, *orch;
	json_error_t	 je;
	char		*s;

	assert_non_null(src);
	snprintf(path, sizeof(path), "%s/tests/agents/claude_code.json", src);
	if ((fix = json_load_file(path, 0, &je)) == NULL)
		fail_msg("%s:%d: %s", path, je.line, je.text);
	orch = json_loads("["
	    "{\"match\": [\"ORCH-TASK\", \"CLAUDE-CODE-FINAL\"], "
	    " \"repeat\": true, \"responses\": [{\"reply\": {\"calls\": "
	    " [{\"id\": \"c2\", \"name\": \"complete\", \"arguments\": "
	    " {\"result\": \"ORCH-DONE-OK\"}}]}}]},"
	    "{\"match\": \"ORCH-TASK\", \"responses\": [{\"reply\": "
	    " {\"calls\": [{\"id\": \"c1\", \"name\": \"delegate\", "
	    " \"arguments\": {\"profile\": \"cc\", \"task\": \"Save the "
	    "environment, then write hello.txt. TASK-CLAUDE-CODE\"}}]}}]}]",
	    0, &je);
	assert_non_null(orch);
	rules = json_object_get(fix, "rules");
	assert_true(json_is_array(rules));
	assert_int_equal(json_array_extend(orch, rules), 0);
	json_object_set_new(fix, "rules", orch);
	s = json_dumps(fix, JSON_COMPACT);
	assert_non_null(s);
	json_decref(fix);
	return s;
}

static void
test_claude_code_run(void **state)
{
	struct h_ws	 w;
	struct h_fakellm fl;
	struct h_run	 r;
	const char	*prog;
	char		 cfg[PATH_MAX], dir[PATH_MAX + 32], db[PATH_MAX];
	char		 envcfg[PATH_MAX + 32], envpath[PATH_MAX + 32];
	char		 path[PATH_MAX], *script, *reqs, *d;
	char		*argv[] = { "warren", "run", "--json", "--db", db,
			    "--workspace", w.ws, "ORCH-TASK", NULL };
	char		*env[] = { fl.env_url, "WARREN_API_KEY=" KEY, envcfg,
			    envpath, "WARREN_PROVIDER=anthropic",
			    "WARREN_MODEL=fake-model", "WARREN_RETRIES=0",
			    "WARREN_WORKSPACE_MODE=cow", NULL };
	char		*dargv[] = { "warren", "diff", "--db", db, "1", NULL };
	char		*denv[] = { envcfg, NULL };

	(void)state;
	if ((prog = h_npm_path("claude")) == NULL)
		skip();
	/* claude found in PATH, as a user's npm install puts it. */
	snprintf(envpath, sizeof(envpath), "PATH=%.*s:/usr/bin:/bin",
	    (int)(strrchr(prog, '/') - prog), prog);
	h_ws_open(&w, "DATA\n");
	h_ws_cassette_close(&w);
	snprintf(cfg, sizeof(cfg), "%s/config", w.dir);
	snprintf(envcfg, sizeof(envcfg), "XDG_CONFIG_HOME=%s", cfg);
	snprintf(db, sizeof(db), "%s/runs.db", w.dir);
	(void)mkdir(cfg, 0755);
	snprintf(dir, sizeof(dir), "%s/warren", cfg);
	(void)mkdir(dir, 0755);
	snprintf(dir, sizeof(dir), "%s/warren/agents", cfg);
	(void)mkdir(dir, 0755);
	h_write(dir, "cc.md", "---\nname: cc\ndescription: Claude Code\n"
	    "backend: claude-code\n---\nYou are careful.\n", 0);
	script = script_text();
	if (h_fakellm_start(&fl, w.dir, script) == 1) {
		free(script);
		h_ws_close(&w);
		skip();
	}
	free(script);
	assert_int_equal(h_warren(&r, argv, env, NULL, NULL), 0);
	h_fakellm_stop(&fl);
	printf("warren run: exit %d after %llu ms\n", r.status, r.ms);
	if (r.status != 0 || h_count_lines(r.out, "\"event\":\"result\"",
	    "ORCH-DONE-OK") != 1 || h_count_lines(r.out,
	    "\"event\":\"done\",\"path\":\"0.1\"",
	    "CLAUDE-CODE-FINAL: env.txt saved, hello.txt written") != 1)
		fail_msg("status %d\n%s\n%s", r.status, r.out, r.err);
	h_run_free(&r);

	/* Claude Code's three requests (its path has ?beta=true, the
	 * orchestrator's not): the user's key, never ours. */
	reqs = h_read_file(fl.log);
	assert_int_equal(h_count_lines(reqs, "\"/v1/messages?beta=true\"",
	    NULL), 3);
	assert_int_equal(h_count_lines(reqs, "\"/v1/messages?beta=true\"",
	    "\"x-api-key\":\"" KEY "\""), 3);
	assert_null(strstr(reqs, "warren-brokered"));
	free(reqs);

	/* Its files are in the layer, not the workspace. */
	snprintf(path, sizeof(path), "%s/hello.txt", w.ws);
	assert_int_equal(access(path, F_OK), -1);
	snprintf(path, sizeof(path), "%s/env.txt", w.ws);
	assert_int_equal(access(path, F_OK), -1);
	assert_int_equal(h_warren(&r, dargv, denv, NULL, NULL), 0);
	d = r.out;
	if (r.status != 0 || strstr(d, "+written by claude code") == NULL ||
	    strstr(d, "+ANTHROPIC_API_KEY=warren-brokered") == NULL ||
	    strstr(d, "+IS_SANDBOX=1") == NULL)
		fail_msg("diff: %d\n%s\n%s", r.status, d, r.err);
	assert_null(strstr(d, KEY));
	assert_null(strstr(d, "WARREN_API_KEY"));
	h_run_free(&r);
	h_ws_close(&w);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_teardown(test_claude_code_run,
		    h_fakellm_teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}

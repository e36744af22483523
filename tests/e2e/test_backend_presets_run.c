/*
 * `backend: claude-code` and `backend: codex` end to end
 * (docs/backends.md): an orchestrator scripted on fakellm delegates to an
 * agent file whose backend is Claude Code or Codex CLI (the pinned npm
 * installs, tests/npm). Each runs in the worker's sandbox with the
 * preset's launch (agent/backend_presets.c); the model of its fixture
 * (tests/agents/claude_code.json, codex.json) has it save its environment
 * with its shell tool and write hello.txt: every request it sends reaches
 * fakellm through the broker with the user's key, never the placeholder;
 * both files land in the run's layer, not the workspace; the environment
 * it saved holds no key; its final answer is the subagent's result.
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

/* One program's case. */
struct prog {
	const char	*npm;		/* its name in node_modules/.bin */
	const char	*backend;	/* the agent file's backend: */
	const char	*fixture;	/* tests/agents/FILE */
	const char	*provider;	/* the run's wire, the program's */
	const char	*task;		/* its fixture's task marker */
	const char	*final;		/* its fixture's final answer */
	const char	*reqpath;	/* its requests' path, as logged */
	const char	*keyhdr;	/* the user's key as fakellm logs it */
	int		 nreqs;		/* requests on reqpath naming its task:
					   its own, and for Codex (the run's
					   wire is its wire) the orchestrator's
					   second turn, which quotes it */
	const char	*written;	/* hello.txt's line in the diff */
	const char	*envkey;	/* its placeholder key in env.txt */
};

static const struct prog claude_code = {
	"claude", "claude-code", "claude_code.json", "anthropic",
	"TASK-CLAUDE-CODE", "CLAUDE-CODE-FINAL: env.txt saved, hello.txt "
	"written", "\"/v1/messages?beta=true\"", "\"x-api-key\":\"" KEY "\"",
	3, "+written by claude code", "+ANTHROPIC_API_KEY=warren-brokered",
};

static const struct prog codex = {
	"codex", "codex", "codex.json", "responses", "TASK-CODEX",
	"CODEX-FINAL: env.txt saved, hello.txt written",
	"\"/v1/responses\"", "\"authorization\":\"Bearer " KEY "\"",
	3 + 1, "+written by codex", "+WARREN_BROKER_KEY=warren-brokered",
};

/* The orchestrator's two turns, then the fixture's rules for the agent. */
static char *
script_text(const struct prog *pg)
{
	char		 orchs[1024];
	const char	*src = getenv("WARREN_SOURCE_DIR");
	char		 path[PATH_MAX];
	json_t		*fix, *rules, *orch;
	json_error_t	 je;
	char		*s;

	assert_non_null(src);
	snprintf(path, sizeof(path), "%s/tests/agents/%s", src, pg->fixture);
	if ((fix = json_load_file(path, 0, &je)) == NULL)
		fail_msg("%s:%d: %s", path, je.line, je.text);
	snprintf(orchs, sizeof(orchs), "["
	    "{\"match\": [\"ORCH-TASK\", \"%s\"], "
	    " \"repeat\": true, \"responses\": [{\"reply\": {\"calls\": "
	    " [{\"id\": \"c2\", \"name\": \"complete\", \"arguments\": "
	    " {\"result\": \"ORCH-DONE-OK\"}}]}}]},"
	    "{\"match\": \"ORCH-TASK\", \"responses\": [{\"reply\": "
	    " {\"calls\": [{\"id\": \"c1\", \"name\": \"delegate\", "
	    " \"arguments\": {\"profile\": \"cc\", \"task\": \"Save the "
	    "environment, then write hello.txt. %s\"}}]}}]}]", pg->final,
	    pg->task);
	orch = json_loads(orchs, 0, &je);
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
run_backend(const struct prog *pg)
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
	char		 provider[64], agentmd[256], done[256];
	char		*env[] = { fl.env_url, "WARREN_API_KEY=" KEY, envcfg,
			    envpath, provider,
			    "WARREN_MODEL=fake-model", "WARREN_RETRIES=0",
			    "WARREN_WORKSPACE_MODE=cow", NULL };
	char		*dargv[] = { "warren", "diff", "--db", db, "1", NULL };
	char		*denv[] = { envcfg, NULL };

	if ((prog = h_npm_path(pg->npm)) == NULL)
		skip();
	snprintf(provider, sizeof(provider), "WARREN_PROVIDER=%s",
	    pg->provider);
	/* The program found in PATH, as a user's npm install puts it. */
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
	snprintf(agentmd, sizeof(agentmd), "---\nname: cc\ndescription: "
	    "%s\nbackend: %s\n---\nYou are careful.\n", pg->npm, pg->backend);
	h_write(dir, "cc.md", agentmd, 0);
	script = script_text(pg);
	if (h_fakellm_start(&fl, w.dir, script) == 1) {
		free(script);
		h_ws_close(&w);
		skip();
	}
	free(script);
	assert_int_equal(h_warren(&r, argv, env, NULL, NULL), 0);
	h_fakellm_stop(&fl);
	printf("warren run: exit %d after %llu ms\n", r.status, r.ms);
	snprintf(done, sizeof(done), "%s", pg->final);
	if (r.status != 0 || h_count_lines(r.out, "\"event\":\"result\"",
	    "ORCH-DONE-OK") != 1 || h_count_lines(r.out,
	    "\"event\":\"done\",\"path\":\"0.1\"", done) != 1)
		fail_msg("status %d\n%s\n%s", r.status, r.out, r.err);
	h_run_free(&r);

	/* The program's requests (Claude Code's path has ?beta=true, the
	 * orchestrator's not; Codex's carry its task): the user's key,
	 * never ours. */
	reqs = h_read_file(fl.log);
	assert_int_equal(h_count_lines(reqs, pg->reqpath, pg->task),
	    pg->nreqs);
	assert_int_equal(h_count_lines(reqs, pg->task, pg->keyhdr),
	    h_count_lines(reqs, pg->task, NULL));
	assert_null(strstr(reqs, "warren-brokered"));
	free(reqs);

	/* Its files are in the layer, not the workspace. */
	snprintf(path, sizeof(path), "%s/hello.txt", w.ws);
	assert_int_equal(access(path, F_OK), -1);
	snprintf(path, sizeof(path), "%s/env.txt", w.ws);
	assert_int_equal(access(path, F_OK), -1);
	assert_int_equal(h_warren(&r, dargv, denv, NULL, NULL), 0);
	d = r.out;
	if (r.status != 0 || strstr(d, pg->written) == NULL ||
	    strstr(d, pg->envkey) == NULL)
		fail_msg("diff: %d\n%s\n%s", r.status, d, r.err);
	assert_null(strstr(d, KEY));
	assert_null(strstr(d, "WARREN_API_KEY"));
	h_run_free(&r);
	h_ws_close(&w);
}

static void
test_claude_code_run(void **state)
{
	(void)state;
	run_backend(&claude_code);
}

static void
test_codex_run(void **state)
{
	(void)state;
	run_backend(&codex);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_teardown(test_claude_code_run,
		    h_fakellm_teardown),
		cmocka_unit_test_teardown(test_codex_run, h_fakellm_teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}

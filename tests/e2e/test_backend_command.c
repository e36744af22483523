/*
 * `backend: command` end to end (docs/backends.md): an orchestrator
 * scripted on fakellm delegates to an agent file whose backend is
 * tests/agents/fake_agent, an agent CLI. The program runs in the worker's
 * sandbox with its base URL on the worker's own loopback; its Messages
 * requests (one whole, one streamed with a chunked body) reach fakellm
 * through the broker with the user's key; its edit lands in the run's
 * copy-on-write layer; its environment and HOME hold no key; a connect
 * outside fails; its stdout is the subagent's result. Then the same run
 * is recorded and replayed with no endpoint.
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

#include "tests/e2e/harness.h"

#define KEY	"sk-user-KEY-4711"

static const char script[] =
"{\"rules\": [\n"
" {\"match\": \"FAKE-AGENT-Q1 FAKE-TASK-7\", \"path\": \"/messages\","
"  \"repeat\": true, \"responses\": [{\"reply\": {\"text\": \"ANSWER-ONE\","
"  \"usage\": {\"input\": 1000, \"output\": 7}}}]},\n"
" {\"match\": \"FAKE-AGENT-Q2 after ANSWER-ONE\", \"path\": \"/messages\","
"  \"repeat\": true, \"responses\": [{\"reply\": {\"text\": \"ANSWER-TWO\","
"  \"usage\": {\"input\": 2000, \"output\": 9}}}]},\n"
" {\"match\": \"FAKE-AGENT-Q3\", \"path\": \"/messages\","
"  \"repeat\": true, \"responses\": [{\"reply\": {\"text\": "
"  \"ANSWER-THREE\", \"usage\": {\"input\": 0, \"output\": 0}}}]},\n"
" {\"match\": [\"ORCH-TASK\", \"FAKE-AGENT-RESULT one=ANSWER-ONE "
"two=ANSWER-TWO outside=blocked pipelined=ok\"], \"responses\": [{\"reply\":"
"  {\"calls\": [{\"id\": \"c2\", \"name\": \"complete\", \"arguments\":"
"  {\"result\": \"ORCH-DONE-OK\"}}]}}]},\n"
" {\"match\": \"ORCH-TASK\", \"responses\": [{\"reply\":"
"  {\"calls\": [{\"id\": \"c1\", \"name\": \"delegate\", \"arguments\":"
"  {\"profile\": \"fakeagent\", \"task\": \"FAKE-TASK-7\"}}]}}]}\n"
"]}\n";

struct bk {
	struct h_ws	 w;
	char		 cfg[PATH_MAX];
	char		 envcfg[PATH_MAX + 32];
	char		 db[PATH_MAX];
};

static int
setup(void **state)
{
	struct bk	*b;

	if ((b = calloc(1, sizeof(*b))) == NULL)
		return -1;
	h_ws_open(&b->w, "BACKEND-DATA\n");
	h_ws_cassette_close(&b->w);
	snprintf(b->cfg, sizeof(b->cfg), "%s/config", b->w.dir);
	snprintf(b->envcfg, sizeof(b->envcfg), "XDG_CONFIG_HOME=%s", b->cfg);
	snprintf(b->db, sizeof(b->db), "%s/runs.db", b->w.dir);
	*state = b;
	return 0;
}

static int
teardown(void **state)
{
	struct bk	*b = *state;

	h_ws_close(&b->w);
	free(b);
	return 0;
}

/* The config's agents directory, made, in dir. */
static void
agents_dir(struct bk *b, char *dir, size_t dirsz)
{
	snprintf(dir, dirsz, "%s", b->cfg);
	(void)mkdir(dir, 0755);
	snprintf(dir, dirsz, "%s/warren", b->cfg);
	(void)mkdir(dir, 0755);
	snprintf(dir, dirsz, "%s/warren/agents", b->cfg);
	(void)mkdir(dir, 0755);
}

/* The agent file: fake_agent with the task and an address outside. */
static void
agent_file(struct bk *b, const char *outside)
{
	char	dir[PATH_MAX + 32], text[PATH_MAX * 2];
	const char *build = getenv("WARREN_BUILD_DIR");

	assert_non_null(build);
	agents_dir(b, dir, sizeof(dir));
	snprintf(text, sizeof(text), "---\nname: fakeagent\ndescription: "
	    "runs the fake agent CLI\nbackend: command\ncommand: "
	    "%s/tests/agents/fake_agent\nargs: [\"{task}\", \"%s\"]\n---\n"
	    "You are the fake agent.\n", build, outside);
	h_write(dir, "fakeagent.md", text, 0);
}

/* fakellm on script (the test skipped without it), and the agent file
 * with nothing outside to reach (port 9). */
static void
bk_fake(struct bk *b, struct h_fakellm *fl, const char *script_text)
{
	if (h_fakellm_start(fl, b->w.dir, script_text) == 1)
		skip();
	agent_file(b, "127.0.0.1:9");
}

/*
 * warren run --json --db DB --workspace WS args... (NULL-terminated)
 * against url (fakellm's WARREN_BASE_URL=..., or one that answers
 * nothing), with the user's key, the config, model fake-model, no
 * retries, provider anthropic unless extra_env names one, and extra_env
 * (NULL-terminated).
 */
static void
bk_run(struct bk *b, const char *url, const char *const extra_env[],
    const char *const args[], struct h_run *r)
{
	char	*argv[16] = { "warren", "run", "--json", "--db", b->db,
		    "--workspace", b->w.ws };
	char	*env[16] = { (char *)(uintptr_t)url, "WARREN_API_KEY=" KEY,
		    b->envcfg, "WARREN_MODEL=fake-model", "WARREN_RETRIES=0" };
	size_t	 a = 7, e = 5, i;
	int	 provider = 0;

	for (i = 0; args[i] != NULL; i++) {
		assert_true(a + 1 < sizeof(argv) / sizeof(argv[0]));
		argv[a++] = (char *)(uintptr_t)args[i];
	}
	for (i = 0; extra_env[i] != NULL; i++) {
		assert_true(e + 2 < sizeof(env) / sizeof(env[0]));
		provider |= strncmp(extra_env[i], "WARREN_PROVIDER=", 16) == 0;
		env[e++] = (char *)(uintptr_t)extra_env[i];
	}
	if (!provider)
		env[e++] = "WARREN_PROVIDER=anthropic";
	assert_int_equal(h_warren(r, argv, env, NULL, NULL), 0);
}

/* What `warren CMD --db DB RUN` shows (CMD diff or show). */
static char *
warren_of(struct bk *b, const char *cmd, const char *run)
{
	struct h_run	 r;
	char		*argv[] = { "warren", (char *)(uintptr_t)cmd, "--db",
			    b->db, (char *)(uintptr_t)run, NULL };
	char		*env[] = { b->envcfg, NULL };
	char		*out;

	assert_int_equal(h_warren(&r, argv, env, NULL, NULL), 0);
	if (r.status != 0)
		fail_msg("%s %s: %d\n%s", cmd, run, r.status, r.err);
	out = strdup(r.out);
	h_run_free(&r);
	return out;
}

static void
check_result(const struct h_run *r)
{
	if (r->status != 0 || h_count_lines(r->out, "\"event\":\"result\"",
	    "ORCH-DONE-OK") != 1)
		fail_msg("status %d\n%s\n%s", r->status, r->out, r->err);
	/* Its requests' tokens (one whole answer, one stream) counted. */
	if (h_count_lines(r->out, "\"event\":\"done\",\"path\":\"0.1\"",
	    "\"tokens\":{\"in\":3000,\"out\":16}") != 1)
		fail_msg("tokens of 0.1\n%s", r->out);
	/* The subagent was the program, its stdout its result. */
	if (h_count_lines(r->out, "\"path\":\"0.1\"",
	    "FAKE-AGENT-RESULT one=ANSWER-ONE two=ANSWER-TWO "
	    "outside=blocked pipelined=ok") < 1)
		fail_msg("no result of 0.1\n%s\n%s", r->out, r->err);
}

static void
test_command_backend(void **state)
{
	struct bk	*b = *state;
	struct h_fakellm fl;
	struct h_run	 r;
	char		 port[16], outside[64], cas[PATH_MAX], *reqs, *d;
	char		 path[PATH_MAX];
	const char	*p;
	const char	*cow[] = { "WARREN_WORKSPACE_MODE=cow", NULL };

	snprintf(cas, sizeof(cas), "%s/backend.cassette", b->w.dir);
	if (h_fakellm_start(&fl, b->w.dir, script) == 1)
		skip();
	/* fakellm's port on the host: the program must not reach it. */
	p = strrchr(fl.env_url, ':');
	snprintf(port, sizeof(port), "%.*s", (int)strcspn(p + 1, "/"), p + 1);
	snprintf(outside, sizeof(outside), "127.0.0.1:%s", port);
	agent_file(b, outside);
	bk_run(b, fl.env_url, cow, (const char *[]){ "--record", cas,
	    "ORCH-TASK", NULL }, &r);
	h_fakellm_stop(&fl);
	check_result(&r);
	h_run_free(&r);

	/* Both requests reached the endpoint with the user's key, never
	 * the program's placeholder. */
	reqs = h_read_file(fl.log);
	assert_int_equal(h_count_lines(reqs, "FAKE-AGENT-Q1 FAKE-TASK-7",
	    "\"x-api-key\":\"" KEY "\""), 1);
	assert_int_equal(h_count_lines(reqs, "FAKE-AGENT-Q2 after ANSWER-ONE",
	    "\"x-api-key\":\"" KEY "\""), 1);
	assert_null(strstr(reqs, "warren-brokered"));
	assert_null(strstr(reqs, "\"authorization\""));
	free(reqs);

	/* The edit is in the layer, not the workspace. */
	snprintf(path, sizeof(path), "%s/fake-agent-edit.txt", b->w.ws);
	assert_int_equal(access(path, F_OK), -1);
	d = warren_of(b, "diff", "1");
	if (strstr(d, "+EDITED BY FAKE AGENT") == NULL)
		fail_msg("no edit in the layer:\n%s", d);
	/* The stream reached it as it came: chunked, not whole. */
	if (strstr(d, "+++ b/stream.txt\n@@ -0,0 +1 @@\n+chunked") == NULL)
		fail_msg("the stream came whole:\n%s", d);
	/* Its environment: the private HOME, its base URL, no key. */
	if (strstr(d, "+HOME=/tmp/warren-home") == NULL ||
	    strstr(d, "+ANTHROPIC_BASE_URL=http://127.0.0.1:") == NULL ||
	    strstr(d, "+ANTHROPIC_API_KEY=warren-brokered") == NULL)
		fail_msg("env.txt:\n%s", d);
	assert_null(strstr(d, KEY));
	assert_null(strstr(d, "WARREN_API_KEY"));
	/* Nothing outside answered: not 10.0.0.1, not fakellm's port. */
	if (strstr(d, "+connect 10.0.0.1:80: ") == NULL ||
	    strstr(d, "CONNECTED") != NULL)
		fail_msg("outside.txt:\n%s", d);
	free(d);

	/* The store keeps it as any agent's: its task and answer, its
	 * requests as turns. */
	d = warren_of(b, "show", "1");
	if (strstr(d, "FAKE-AGENT-RESULT one=ANSWER-ONE") == NULL ||
	    strstr(d, "FAKE-TASK-7") == NULL)
		fail_msg("warren show 1:\n%s", d);
	free(d);

	/* The report draws it: its transcript and its requests' turns. */
	{
		char	*rep[] = { "warren", "report", "--db", b->db, "-o",
			    "-", "1", NULL };
		char	*renv0[] = { b->envcfg, NULL };

		assert_int_equal(h_warren(&r, rep, renv0, NULL, NULL), 0);
		if (r.status != 0 || strstr(r.out, "FAKE-AGENT-RESULT one="
		    "ANSWER-ONE") == NULL || strstr(r.out, "fakeagent") ==
		    NULL)
			fail_msg("report: %d\n%s", r.status, r.err);
		h_run_free(&r);
	}

	/* Replay: no endpoint (port 9 answers nothing), same result. */
	bk_run(b, "WARREN_BASE_URL=http://127.0.0.1:9/v1", cow,
	    (const char *[]){ "--replay", cas, "ORCH-TASK", NULL }, &r);
	check_result(&r);
	h_run_free(&r);
	d = warren_of(b, "diff", "2");
	if (strstr(d, "+EDITED BY FAKE AGENT") == NULL)
		fail_msg("replayed run left no edit:\n%s", d);
	/* Replay hands the recorded stream over whole. */
	if (strstr(d, "+++ b/stream.txt\n@@ -0,0 +1 @@\n+whole") == NULL)
		fail_msg("replayed stream:\n%s", d);
	free(d);
}

/*
 * The run's token budget holds for a backend's requests: the first one
 * (1007 tokens) spends a budget of 1000, the second is refused before it
 * is sent, the program hears a 400 it does not retry, and fails.
 */
static void
test_command_budget(void **state)
{
	struct bk	*b = *state;
	struct h_fakellm fl;
	struct h_run	 r;
	char		*reqs;

	bk_fake(b, &fl, script);
	bk_run(b, fl.env_url, (const char *[]){ NULL }, (const char *[]){
	    "--budget", "1000", "ORCH-TASK", NULL }, &r);
	h_fakellm_stop(&fl);
	if (r.status == 0 || h_count_lines(r.out, "\"event\":\"done\","
	    "\"path\":\"0.1\"", "token budget") != 1)
		fail_msg("status %d\n%s\n%s", r.status, r.out, r.err);
	h_run_free(&r);
	reqs = h_read_file(fl.log);
	assert_int_equal(h_count_lines(reqs, "FAKE-AGENT-Q1", NULL), 1);
	assert_int_equal(h_count_lines(reqs, "FAKE-AGENT-Q2", NULL), 0);
	free(reqs);
}

/*
 * A backend runs no loop of warren's: each model request is one of its
 * turns, held to max_iterations (2 here: the orchestrator needs both of
 * its own); the program's third and fourth requests (its pipelined
 * pair) are refused, the endpoint never seeing them.
 */
static void
test_command_iterations(void **state)
{
	struct bk	*b = *state;
	struct h_fakellm fl;
	struct h_run	 r;
	char		*reqs;

	bk_fake(b, &fl, script);
	bk_run(b, fl.env_url, (const char *[]){ "WARREN_MAX_ITERATIONS=2",
	    NULL }, (const char *[]){ "ORCH-TASK", NULL }, &r);
	h_fakellm_stop(&fl);
	/* Its pipelined pair, requests 3 and 4, were refused. */
	if (h_count_lines(r.out, "\"event\":\"done\",\"path\":\"0.1\"",
	    "pipelined=BAD") != 1)
		fail_msg("status %d\n%s\n%s", r.status, r.out, r.err);
	h_run_free(&r);
	reqs = h_read_file(fl.log);
	assert_int_equal(h_count_lines(reqs, "FAKE-AGENT-Q", NULL), 2);
	free(reqs);
}

/*
 * Two backends at once, each on a loopback of its own: a network
 * namespace a worker, also as root, where other workers share one. Two
 * programs in one namespace would each reach the other's proxy and have
 * their requests counted to the other agent.
 */
static void
test_command_netns(void **state)
{
	static const char two[] =
	"{\"rules\": [\n"
	" {\"match\": \"FAKE-AGENT-Q1\", \"path\": \"/messages\","
	"  \"repeat\": true, \"responses\": [{\"reply\": {\"text\": "
	"  \"ANSWER-ONE\"}}]},\n"
	" {\"match\": \"FAKE-AGENT-Q2\", \"path\": \"/messages\","
	"  \"repeat\": true, \"responses\": [{\"reply\": {\"text\": "
	"  \"ANSWER-TWO\"}}]},\n"
	" {\"match\": \"FAKE-AGENT-Q3\", \"path\": \"/messages\","
	"  \"repeat\": true, \"responses\": [{\"reply\": {\"text\": "
	"  \"ANSWER-THREE\"}}]},\n"
	" {\"match\": [\"NETNS-TASK\", \"FAKE-AGENT-RESULT\"], \"responses\":"
	"  [{\"reply\": {\"calls\": [{\"id\": \"c3\", \"name\": \"complete\","
	"  \"arguments\": {\"result\": \"NETNS-DONE\"}}]}}]},\n"
	" {\"match\": \"NETNS-TASK\", \"responses\": [{\"reply\":"
	"  {\"calls\": [{\"id\": \"c1\", \"name\": \"delegate\", \"arguments\":"
	"  {\"profile\": \"fakeagent\", \"task\": \"T-ONE\"}},"
	"  {\"id\": \"c2\", \"name\": \"delegate\", \"arguments\":"
	"  {\"profile\": \"fakeagent\", \"task\": \"T-TWO\"}}]}}]}\n"
	"]}\n";
	struct bk	*b = *state;
	struct h_fakellm fl;
	struct h_run	 r;
	char		*d;

	bk_fake(b, &fl, two);
	bk_run(b, fl.env_url, (const char *[]){ "WARREN_WORKSPACE_MODE=cow",
	    NULL }, (const char *[]){ "NETNS-TASK", NULL }, &r);
	h_fakellm_stop(&fl);
	if (r.status != 0 || h_count_lines(r.out, "\"event\":\"result\"",
	    "NETNS-DONE") != 1)
		fail_msg("status %d\n%s\n%s", r.status, r.out, r.err);
	h_run_free(&r);
	d = warren_of(b, "diff", "1");
	if (h_count_lines(d, "+++ b/netns-", NULL) != 2)
		fail_msg("not two network namespaces:\n%s", d);
	free(d);
}

/* A backend as the run's root: `warren run --profile fakeagent TASK`
 * runs the program alone, its stdout the run's result. */
static void
test_command_root(void **state)
{
	struct bk	*b = *state;
	struct h_fakellm fl;
	struct h_run	 r;

	bk_fake(b, &fl, script);
	bk_run(b, fl.env_url, (const char *[]){ NULL }, (const char *[]){
	    "--profile", "fakeagent", "FAKE-TASK-7", NULL }, &r);
	h_fakellm_stop(&fl);
	if (r.status != 0 || h_count_lines(r.out, "\"event\":\"result\"",
	    "FAKE-AGENT-RESULT one=ANSWER-ONE two=ANSWER-TWO outside=blocked "
	    "pipelined=ok") != 1)
		fail_msg("status %d\n%s\n%s", r.status, r.out, r.err);
	h_run_free(&r);
}

/* One run delegating to fakeagent whose command is command; its
 * stderr must hold want. */
static void
refused_run(struct bk *b, const char *command, const char *provider,
    const char *want)
{
	struct h_fakellm fl;
	struct h_run	 r;
	char		 dir[PATH_MAX + 32], text[PATH_MAX * 2], prov[64];
	char		 port[PATH_MAX];

	snprintf(prov, sizeof(prov), "WARREN_PROVIDER=%s", provider);
	snprintf(port, sizeof(port), "%s/port", b->w.dir);
	(void)unlink(port);
	if (h_fakellm_start(&fl, b->w.dir, script) == 1)
		skip();
	agents_dir(b, dir, sizeof(dir));
	snprintf(text, sizeof(text), "---\nname: fakeagent\ndescription: "
	    "runs the fake agent CLI\nbackend: command\ncommand: %s\n---\n",
	    command);
	h_write(dir, "fakeagent.md", text, 0);
	bk_run(b, fl.env_url, (const char *[]){ prov, NULL },
	    (const char *[]){ "ORCH-TASK", NULL }, &r);
	h_fakellm_stop(&fl);
	if (strstr(r.err, want) == NULL && strstr(r.out, want) == NULL)
		fail_msg("want \"%s\":\n%s\n%s", want, r.out, r.err);
	h_run_free(&r);
}

/*
 * A backend's program is found when its worker is to start, outside the
 * workspace, and speaking a wire the run's endpoint speaks; each refusal
 * says what to do.
 */
static void
test_command_refused(void **state)
{
	struct bk	*b = *state;
	char		 inws[PATH_MAX + 32], cmd[PATH_MAX * 2];
	const char	*build = getenv("WARREN_BUILD_DIR");

	refused_run(b, "no-such-agent-cli-77", "anthropic",
	    "program no-such-agent-cli-77 not found: install the program "
	    "named by the agent file's command: line");
	/* A copy of the program in the workspace: an agent's, refused. */
	snprintf(inws, sizeof(inws), "%s/agent-bin", b->w.ws);
	snprintf(cmd, sizeof(cmd), "cp %s/tests/agents/fake_agent %s",
	    build, inws);
	assert_int_equal(system(cmd), 0);
	refused_run(b, inws, "anthropic", "lies in the workspace, which "
	    "agents write: install it outside");
	snprintf(cmd, sizeof(cmd), "%s/tests/agents/fake_agent", build);
	refused_run(b, cmd, "openai", "speaks the anthropic API and the "
	    "run's endpoint speaks openai: set provider = anthropic");
}

/*
 * A program whose package directory would be HOME: a script at
 * ~/tools/agent with a ~/package.json (npm leaves one in HOME after an
 * `npm install` run there), then one at ~/agent (HOME in the build
 * directory: the sandbox's /tmp is its own). Its package rule would
 * make all of HOME readable, secrets included: the run is refused,
 * naming the directory, and the script never reads the secret.
 */
static void
test_command_home_package(void **state)
{
	struct bk	*b = *state;
	struct h_fakellm fl;
	struct h_run	 r;
	char		 home[PATH_MAX], tools[PATH_MAX + 16];
	char		 prog[PATH_MAX + 32], text[PATH_MAX * 2];
	char		 envhome[PATH_MAX + 8], dir[PATH_MAX + 32];
	int		 round;

	/* Not under /tmp: the sandbox's /tmp is its own. */
	assert_non_null(getenv("WARREN_BUILD_DIR"));
	snprintf(home, sizeof(home), "%s/tests/e2e/home-pkg.XXXXXX",
	    getenv("WARREN_BUILD_DIR"));
	assert_non_null(mkdtemp(home));
	snprintf(envhome, sizeof(envhome), "HOME=%s", home);
	snprintf(tools, sizeof(tools), "%s/tools", home);
	assert_int_equal(mkdir(tools, 0755), 0);
	h_write(home, "package.json", "{}\n", 0644);
	h_write(home, "secret.txt", "HOME-SECRET-31337\n", 0600);
	snprintf(text, sizeof(text), "#!/bin/sh\ncat %s/secret.txt\n"
	    "echo read-done\n", home);
	h_write(tools, "agent", text, 0755);
	h_write(home, "agent", text, 0755);
	agents_dir(b, dir, sizeof(dir));
	if (h_fakellm_start(&fl, b->w.dir, script) == 1)
		skip();
	for (round = 0; round < 2; round++) {
		snprintf(prog, sizeof(prog), "%s/agent", round == 0 ? tools :
		    home);
		snprintf(text, sizeof(text), "---\nname: fakeagent\n"
		    "description: reads HOME\nbackend: command\ncommand: "
		    "%s\n---\n", prog);
		h_write(dir, "fakeagent.md", text, 0);
		bk_run(b, fl.env_url, (const char *[]){ envhome, NULL },
		    (const char *[]){ "--profile", "fakeagent", "HOME-TASK",
		    NULL }, &r);
		if (strstr(r.out, "HOME-SECRET-31337") != NULL ||
		    strstr(r.err, "HOME-SECRET-31337") != NULL)
			fail_msg("%s read HOME's secret:\n%s\n%s", prog, r.out,
			    r.err);
		snprintf(text, sizeof(text), "the program's package directory "
		    "%.1000s, which it may read, holds %.1000s", home, home);
		if (r.status == 0 || (strstr(r.err, text) == NULL &&
		    strstr(r.out, text) == NULL))
			fail_msg("%s: status %d, want \"%s\":\n%s\n%s", prog,
			    r.status, text, r.out, r.err);
		h_run_free(&r);
	}
	h_fakellm_stop(&fl);
	snprintf(text, sizeof(text), "rm -rf '%s'", home);
	assert_int_equal(system(text), 0);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_command_backend, setup,
		    teardown),
		cmocka_unit_test_setup_teardown(test_command_iterations, setup,
		    teardown),
		cmocka_unit_test_setup_teardown(test_command_budget, setup,
		    teardown),
		cmocka_unit_test_setup_teardown(test_command_refused, setup,
		    teardown),
		cmocka_unit_test_setup_teardown(test_command_netns, setup,
		    teardown),
		cmocka_unit_test_setup_teardown(test_command_root, setup,
		    teardown),
		cmocka_unit_test_setup_teardown(test_command_home_package,
		    setup, teardown),
	};
	int	rc;

	rc = cmocka_run_group_tests(tests, NULL, NULL);
	h_fakellm_teardown(NULL);
	return rc;
}

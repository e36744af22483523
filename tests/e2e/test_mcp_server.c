/*
 * warren mcp, the MCP server on stdio: the official TypeScript SDK's
 * client (tests/e2e/mcp_sdk_client.mjs, with node) runs a task on the
 * fakellm model and gets progress, the answer, the run's id and the file
 * its layer changed; diff, apply (refused, then allowed), runs and show;
 * a cancel stops the run. The run is an ordinary one (warren runs, warren
 * diff). Then, without the SDK: malformed requests answered with the
 * JSON-RPC errors, and stdin closing during a run stops the run.
 */
#include <sys/types.h>
#include <sys/wait.h>

#include <errno.h>
#include <fcntl.h>
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

/* The file the run writes holds an escape sequence: the diff shows it
 * escaped. */
static const char mcp_script[] =
"{\"rules\": [\n"
" {\"match\": \"MCP-HANG\", \"repeat\": true, \"responses\": [{\"hang\": true}]},\n"
" {\"match\": \"MCP-TASK\", \"responses\": [\n"
"  {\"reply\": {\"calls\": [{\"id\": \"c1\", \"name\": \"write\", \"arguments\":"
"   {\"path\": \"mcp-file.txt\", \"content\": \"WRITTEN-BY-MCP\\u001b[31m\\n\"}}]}},\n"
"  {\"reply\": {\"calls\": [{\"id\": \"c2\", \"name\": \"complete\", \"arguments\":"
"   {\"result\": \"{\\\"n\\\": 6}\"}}]}}]}\n"
"]}\n";

struct mcp_t {
	struct h_ws	*w;
	struct h_fakellm fl;
	char		 xdg[PATH_MAX + 32];
	char		*env[8];
};

static int
setup(void **state)
{
	struct mcp_t	*t = calloc(1, sizeof(*t));

	assert_non_null(t);
	t->w = h_ws_new("data\n");
	h_ws_cassette_close(t->w);
	snprintf(t->xdg, sizeof(t->xdg), "XDG_STATE_HOME=%s/state", t->w->dir);
	*state = t;
	return 0;
}

static int
teardown(void **state)
{
	struct mcp_t	*t = *state;

	h_fakellm_teardown(NULL);
	*state = t->w;
	h_ws_teardown(state);
	free(t);
	return 0;
}

/* The model, and the environment of every warren: copy-on-write runs
 * (the tests' default is in place) on it. */
static int
mcp_start(struct mcp_t *t)
{
	int	rc;

	if ((rc = h_fakellm_start(&t->fl, t->w->dir, mcp_script)) != 0)
		return rc;
	t->env[0] = t->fl.env_url;
	t->env[1] = "WARREN_API_KEY=k";
	t->env[2] = "WARREN_MODEL=fake-model";
	t->env[3] = "WARREN_RETRIES=0";
	t->env[4] = "WARREN_WORKSPACE_MODE=cow";
	t->env[5] = t->xdg;
	t->env[6] = NULL;
	return 0;
}

/* Fork argv[0] (a path) with env's entries added to ours, in dir: its
 * stdin a pipe (*in, or /dev/null when in is NULL), its stdout *out. */
static pid_t
mcp_spawn(char *const argv[], char *const env[], const char *dir, int *in,
    int *out)
{
	int	pi[2], po[2];
	pid_t	pid;
	size_t	i;

	if (pipe(pi) == -1 || pipe(po) == -1)
		fail_msg("pipe: %s", strerror(errno));
	if ((pid = fork()) == -1)
		fail_msg("fork: %s", strerror(errno));
	if (pid == 0) {
		for (i = 0; env[i] != NULL; i++)
			putenv(env[i]);
		if (in == NULL) {
			close(pi[0]);
			pi[0] = open("/dev/null", O_RDONLY);
		}
		if (chdir(dir) == -1 || dup2(pi[0], 0) == -1 ||
		    dup2(po[1], 1) == -1)
			_exit(127);
		close(pi[1]);
		close(po[0]);
		execv(argv[0], argv);
		fprintf(stderr, "%s: %s\n", argv[0], strerror(errno));
		_exit(127);
	}
	close(pi[0]);
	close(po[1]);
	if (in != NULL)
		*in = pi[1];
	else
		close(pi[1]);
	*out = po[0];
	return pid;
}

/* node mcp_sdk_client.mjs SDK WARREN WS MODE [ARG]: what it printed. */
static char *
mcp_node(struct mcp_t *t, const char *sdk, const char *mode, const char *arg)
{
	char	 script[PATH_MAX], node[] = "/usr/bin/node", *out;
	char	 sdkdir[PATH_MAX], *slash;
	char	*argv[] = { node, script, sdkdir, getenv("WARREN_BIN"),
		    t->w->ws, (char *)(uintptr_t)mode, (char *)(uintptr_t)arg,
		    NULL };
	int	 fd, st;
	pid_t	 pid;

	snprintf(script, sizeof(script), "%s/tests/e2e/mcp_sdk_client.mjs",
	    getenv("WARREN_SOURCE_DIR"));
	strlcpy(sdkdir, sdk, sizeof(sdkdir));
	if ((slash = strrchr(sdkdir, '/')) != NULL)
		*slash = '\0';		/* .../sdk/package.json: .../sdk */
	pid = mcp_spawn(argv, t->env, t->w->ws, NULL, &fd);
	out = h_read_all(fd, 180, "the SDK client's output", NULL);
	close(fd);
	if (out == NULL)
		kill(pid, SIGKILL);
	st = test_waitpid(pid, 30, "the SDK client");
	if (out == NULL || st != 0)
		fail_msg("node %s %s: status %d, printed:\n%s", script, mode,
		    st, out ? out : "(nothing in time)");
	return out;
}

/* The line of out that holds "step":"NAME" (static copy), or fail. */
static const char *
mcp_step(const char *out, const char *name)
{
	static char	 line[1 << 16];
	char		 key[64];
	const char	*p, *e;

	snprintf(key, sizeof(key), "{\"step\":\"%s\"", name);
	if ((p = strstr(out, key)) == NULL)
		fail_msg("no step %s in:\n%s", name, out);
	e = strchr(p, '\n');
	snprintf(line, sizeof(line), "%.*s", (int)(e ? e - p : (long)strlen(p)),
	    p);
	return line;
}

static void
mcp_has(const char *line, const char *what)
{
	if (strstr(line, what) == NULL)
		fail_msg("no %s in:\n%s", what, line);
}

static void
test_sdk_client(void **state)
{
	struct mcp_t	*t = *state;
	struct h_run	 r;
	const char	*sdk, *l;
	char		*out, file[PATH_MAX], *s;
	char		*runs[] = { "warren", "runs", "--workspace", t->w->ws,
			    NULL };
	char		*diff[] = { "warren", "diff", "1", NULL };
	int		 rc;

	if ((sdk = h_npm_path("@modelcontextprotocol/sdk/package.json")) ==
	    NULL)
		skip();
	if ((rc = mcp_start(t)) == 1)
		skip();
	assert_int_equal(rc, 0);
	out = mcp_node(t, sdk, "run", NULL);
	/* initialize: the SDK's own version answered with itself */
	mcp_has(mcp_step(out, "init"), "\"version\":\"2025-11-25\","
	    "\"server\":\"warren\"");
	mcp_has(mcp_step(out, "tools"), "\"names\":[\"run\",\"diff\","
	    "\"apply\",\"runs\",\"show\",\"queue_add\",\"queue_status\"]");
	/* the run: its answer, id, end, the file its layer changed, and
	 * the answer as structured content (it had a schema) */
	l = mcp_step(out, "run");
	mcp_has(l, "\"isError\":false");
	mcp_has(l, "{\\\"n\\\": 6}");
	mcp_has(l, "Run 1: done.");
	mcp_has(l, "added mcp-file.txt");
	mcp_has(l, "\"structured\":{\"n\":6}");
	/* progress while it ran, numbered upward, its agent's events */
	l = mcp_step(out, "progress");
	mcp_has(l, "\"increasing\":true");
	mcp_has(l, "\"run 1 started\"");
	mcp_has(l, "[0 general] write -> wrote");
	assert_null(strstr(l, "\"n\":0,"));
	/* diff: escaped; apply: refused and says how to allow it */
	l = mcp_step(out, "diff");
	mcp_has(l, "\"isError\":false");
	mcp_has(l, "+WRITTEN-BY-MCP\\\\x1b[31m");
	l = mcp_step(out, "apply");
	mcp_has(l, "\"isError\":true");
	mcp_has(l, "--allow-apply");
	mcp_has(mcp_step(out, "runs"), "MCP-TASK: write the file");
	mcp_has(mcp_step(out, "show"), "\\\"profile\\\": \\\"general\\\"");
	/* a workspace outside the root; arguments of the wrong type */
	l = mcp_step(out, "outside");
	mcp_has(l, "\"isError\":true");
	mcp_has(l, "is outside the directories this server may use");
	mcp_has(mcp_step(out, "badargs"), "\"code\":-32602");
	free(out);
	/* Nothing applied yet; an ordinary run: runs and diff show it. */
	snprintf(file, sizeof(file), "%s/mcp-file.txt", t->w->ws);
	assert_int_equal(access(file, F_OK), -1);
	assert_int_equal(h_warren(&r, runs, t->env, NULL, NULL), 0);
	if (r.status != 0 || strstr(r.out, "MCP-TASK") == NULL ||
	    strstr(r.out, "to review") == NULL)
		fail_msg("%d\n%s\n%s", r.status, r.out, r.err);
	h_run_free(&r);
	assert_int_equal(h_warren(&r, diff, t->env, NULL, NULL), 0);
	if (r.status != 0 || strstr(r.out, "+WRITTEN-BY-MCP") == NULL)
		fail_msg("%d\n%s\n%s", r.status, r.out, r.err);
	h_run_free(&r);
	/* With --allow-apply: written into the workspace. */
	out = mcp_node(t, sdk, "apply", "1");
	l = mcp_step(out, "apply");
	mcp_has(l, "\"isError\":false");
	mcp_has(l, "mcp-file.txt");
	free(out);
	s = h_read_file(file);
	assert_string_equal(s, "WRITTEN-BY-MCP\033[31m\n");
	free(s);
	/* A cancel stops the run: it ends cancelled, nothing of it runs. */
	out = mcp_node(t, sdk, "cancel", NULL);
	mcp_has(mcp_step(out, "started"), "run 2 started");
	mcp_has(mcp_step(out, "cancel"), "\"threw\":true");
	mcp_has(mcp_step(out, "after"), "\"isError\":false");
	free(out);
	assert_int_equal(h_wait_no_procs(t->w->ws, 20), 0);
	assert_int_equal(h_warren(&r, runs, t->env, NULL, NULL), 0);
	if (h_count_lines(r.out, "MCP-HANG", "cancelled") != 1)
		fail_msg("run 2 not cancelled:\n%s\n%s", r.out, r.err);
	h_run_free(&r);
	h_fakellm_stop(&t->fl);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_sdk_client, setup,
		    teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}

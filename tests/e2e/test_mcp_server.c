/*
 * warren mcp, the MCP server on stdio: the official TypeScript SDK's
 * client (tests/e2e/mcp_sdk_client.mjs, with node) runs a task on the
 * fakellm model and gets progress, the answer, the run's id and the file
 * its layer changed; diff, apply (refused, then allowed), runs and show;
 * a cancel stops the run. The run is an ordinary one (warren runs, warren
 * diff). Then, without the SDK: malformed requests answered with the
 * JSON-RPC errors, and stdin closing during a run stops the run.
 */
#include <sys/file.h>
#include <sys/types.h>
#include <sys/wait.h>

#include <errno.h>
#include <poll.h>
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
" {\"match\": \"MCP-ENVRC\", \"responses\": [\n"
"  {\"reply\": {\"calls\": [{\"id\": \"e1\", \"name\": \"write\", \"arguments\":"
"   {\"path\": \".envrc\", \"content\": \"echo ENVRC-RAN\\n\"}}]}},\n"
"  {\"reply\": {\"calls\": [{\"id\": \"e2\", \"name\": \"complete\", \"arguments\":"
"   {\"result\": \"ok\"}}]}}]},\n"
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

/* Its stdout (fd) to its end within secs (what: NULL past it, and pid
 * killed), fd closed, then pid reaped within 30 s (reaped: what for):
 * *st its status. */
static char *
mcp_reap(pid_t pid, int fd, int secs, const char *what, const char *reaped,
    int *st)
{
	char	*out;

	out = h_read_all(fd, secs, what, NULL);
	close(fd);
	if (out == NULL)
		kill(pid, SIGKILL);
	*st = test_waitpid(pid, 30, reaped);
	return out;
}

/* ready (h_wait_for) within secs, or pid killed and the test failed
 * saying what it waited for. */
static void
mcp_wait(int (*ready)(void *), void *arg, int secs, pid_t pid,
    const char *what)
{
	if (h_wait_for(ready, arg, secs, pid, what) == -1) {
		kill(pid, SIGKILL);
		fail_msg("%s", h_wait_why);
	}
}

/* Nothing of the workspace's runs left within 20 s, warren runs says n
 * runs of MCP-HANG cancelled; the model stopped. */
static void
mcp_cancelled(struct mcp_t *t, int n)
{
	struct h_run	 r;
	char		*runs[] = { "warren", "runs", "--workspace", t->w->ws,
			    NULL };

	assert_int_equal(h_wait_no_procs(t->w->ws, 20), 0);
	assert_int_equal(h_warren(&r, runs, t->env, NULL, NULL), 0);
	if (h_count_lines(r.out, "MCP-HANG", "cancelled") != n)
		fail_msg("not %d runs of MCP-HANG cancelled:\n%s\n%s", n, r.out,
		    r.err);
	h_run_free(&r);
	h_fakellm_stop(&t->fl);
}

/* The model, then run 1: the general profile on task in the workspace,
 * done. */
static void
mcp_run1(struct mcp_t *t, const char *task)
{
	struct h_run	 r;
	char		*run[] = { "warren", "run", "--profile", "general",
			    "--workspace", t->w->ws, (char *)(uintptr_t)task,
			    NULL };
	int		 rc;

	if ((rc = mcp_start(t)) == 1)
		skip();
	assert_int_equal(rc, 0);
	assert_int_equal(h_warren(&r, run, t->env, NULL, NULL), 0);
	if (r.status != 0)
		fail_msg("run: %d\n%s", r.status, r.err);
	h_run_free(&r);
}

/* warren mcp --allow-apply --root WS, its stdin initialize and then
 * lines (a file); in r. */
static void
mcp_serve_apply(struct mcp_t *t, const char *lines, struct h_run *r)
{
	char	 in[PATH_MAX];
	char	*mcp[] = { "warren", "mcp", "--allow-apply", "--root",
		    t->w->ws, NULL };
	FILE	*f;

	snprintf(in, sizeof(in), "%s/requests", t->w->dir);
	assert_non_null(f = fopen(in, "w"));
	fputs("{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"initialize\","
	    "\"params\":{\"protocolVersion\":\"2025-06-18\"}}\n", f);
	fputs(lines, f);
	fclose(f);
	h_stdin_path = in;
	assert_int_equal(h_warren(r, mcp, t->env, NULL, NULL), 0);
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
	out = mcp_reap(pid, fd, 180, "the SDK client's output",
	    "the SDK client", &st);
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
	/* batch work: a job on the default queue, and its status */
	l = mcp_step(out, "queue_add");
	mcp_has(l, "\"isError\":false");
	mcp_has(l, "\\\"id\\\": 1,");
	l = mcp_step(out, "queue_status");
	mcp_has(l, "\\\"task\\\": \\\"QUEUED-TASK\\\"");
	mcp_has(l, "\\\"status\\\": \\\"queued\\\"");
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
	l = mcp_step(out, "apply_dash");
	mcp_has(l, "\"isError\":true");
	mcp_has(l, "--include-sensitive");
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
	/* cancelled while the client is still connected */
	mcp_has(mcp_step(out, "after"), "\"run\":2,\"status\":\"cancelled\"");
	free(out);
	mcp_cancelled(t, 1);
}

/* The requests of test_malformed, a line each (the huge one apart). */
static const char *const bad_lines[] = {
	"{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/list\"}",
	"not json",
	"[{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"ping\"}]",
	"{\"jsonrpc\":\"2.0\",\"id\":true,\"method\":\"ping\"}",
	"{\"jsonrpc\":\"1.0\",\"id\":3,\"method\":\"ping\"}",
	"{\"jsonrpc\":\"2.0\",\"id\":4,\"method\":\"initialize\",\"params\":"
	    "{\"protocolVersion\":5}}",
	"{\"jsonrpc\":\"2.0\",\"id\":5,\"method\":\"initialize\",\"params\":"
	    "{\"protocolVersion\":\"2025-06-18\",\"capabilities\":{},"
	    "\"clientInfo\":{\"name\":\"t\",\"version\":\"1\"}}}",
	"{\"jsonrpc\":\"2.0\",\"method\":\"notifications/initialized\"}",
	"{\"jsonrpc\":\"2.0\",\"id\":6,\"method\":\"resources/list\"}",
	"{\"jsonrpc\":\"2.0\",\"id\":7,\"method\":\"tools/call\",\"params\":"
	    "{\"name\":\"nope\"}}",
	"{\"jsonrpc\":\"2.0\",\"id\":8,\"method\":\"tools/call\",\"params\":"
	    "{\"name\":\"run\",\"arguments\":{\"task\":[\"x\"]}}}",
	"{\"jsonrpc\":\"2.0\",\"id\":9,\"method\":\"tools/call\",\"params\":"
	    "{\"name\":\"run\",\"arguments\":{\"task\":\"x\",\"cwd\":\"/\"}}}",
	"{\"jsonrpc\":\"2.0\",\"id\":10,\"method\":\"tools/call\",\"params\":"
	    "{\"name\":\"diff\",\"arguments\":{\"run\":\"1\"}}}",
	"{\"jsonrpc\":\"2.0\",\"id\":11,\"method\":\"tools/call\",\"params\":"
	    "{\"name\":\"run\",\"arguments\":{\"task\":\"x\",\"workspace\":"
	    "\"/\"}}}",
	"{\"jsonrpc\":\"2.0\",\"id\":12,\"method\":\"tools/call\",\"params\":"
	    "{\"name\":\"run\",\"arguments\":{\"task\":\"x\",\"workspace\":"
	    "\"%s\"}}}",		/* the link's path */
	"{\"jsonrpc\":\"2.0\",\"id\":13,\"method\":\"tools/call\",\"params\":"
	    "{\"name\":\"apply\",\"arguments\":{\"run\":1}}}",
	NULL,	/* the huge line: MCP_LINE_MAX + 1 bytes */
	"{\"jsonrpc\":\"2.0\",\"id\":14,\"method\":\"ping\"}",
	"{\"jsonrpc\":\"2.0\",\"id\":15,\"method\":\"tools/call\",\"params\":"
	    "{\"name\":\"runs\",\"_meta\":{\"progressToken\":1.5}}}",
	"{\"jsonrpc\":\"2.0\",\"id\":16,\"id\":17,\"method\":\"ping\"}",
	"{\"jsonrpc\":\"2.0\",\"id\":18,\"method\":\"tools/call\",\"params\":"
	    "{\"name\":\"queue_add\",\"arguments\":{\"task\":\"x\","
	    "\"workspace\":\"..\"}}}",
	"{\"jsonrpc\":\"2.0\",\"id\":19,\"method\":\"tools/call\",\"params\":"
	    "{\"name\":\"runs\",\"arguments\":{\"limit\":0}}}",
	"{\"jsonrpc\":\"2.0\",\"id\":20,\"method\":\"tools/call\",\"params\":"
	    "[1]}",
	"{\"jsonrpc\":\"2.0\",\"id\":22,\"method\":\"tools/call\",\"params\":"
	    "{\"name\":\"queue_status\",\"arguments\":{\"job\":1}}}",
	"{\"jsonrpc\":\"2.0\",\"id\":23,\"method\":\"tools/call\",\"params\":"
	    "{\"name\":\"run\",\"arguments\":{\"task\":\"x\",\"schema\":"
	    "{\"type\":5}}}}",
	"",	/* the task over 1 MiB, id 24 */
};

/* Hostile requests, one a line on stdin: each gets its JSON-RPC error
 * (or, where the request is sound but the tool refuses, a tool error),
 * nothing but JSON-RPC reaches stdout, and the server ends with stdin. */
static void
test_malformed(void **state)
{
	struct mcp_t	*t = *state;
	struct h_run	 r;
	char		 in[PATH_MAX], link[PATH_MAX];
	char		*mcp[] = { "warren", "mcp", "--root", t->w->ws, NULL };
	char		*qadd[] = { "warren", "queue", "add", "--workspace",
			    t->w->dir, "QUEUED-OUTSIDE", NULL };
	const char	*p;
	size_t		 i, k;
	FILE		*f;
	int		 lines = 0;

	/* A link inside the root to the test's directory, outside it. */
	snprintf(link, sizeof(link), "%s/link-out", t->w->ws);
	assert_int_equal(symlink(t->w->dir, link), 0);
	snprintf(in, sizeof(in), "%s/requests", t->w->dir);
	assert_non_null(f = fopen(in, "w"));
	for (i = 0; i < sizeof(bad_lines) / sizeof(bad_lines[0]); i++) {
		if (bad_lines[i] != NULL && *bad_lines[i] == '\0') {
			fputs("{\"jsonrpc\":\"2.0\",\"id\":24,\"method\":"
			    "\"tools/call\",\"params\":{\"name\":\"run\","
			    "\"arguments\":{\"task\":\"", f);
			for (k = 0; k < 1024 * 1024 + 1; k++)
				fputc('t', f);
			fputs("\"}}}\n", f);
			continue;
		}
		if (bad_lines[i] != NULL && strstr(bad_lines[i], "%s"))
			fprintf(f, bad_lines[i], link);
		if (bad_lines[i] != NULL)
			fprintf(f, "%s\n", strstr(bad_lines[i], "%s") ? "" :
			    bad_lines[i]);
		else {
			/* One byte over MCP_LINE_MAX (4 MiB). */
			for (k = 0; k < 4194304 + 1; k++)
				fputc('x', f);
			fputc('\n', f);
		}
	}
	/* the NUL byte inside a line */
	fwrite("{\"jsonrpc\":\"2.0\",\"id\":21,\"method\":\"pi\0ng\"}\n", 1, 43,
	    f);
	/* A ping of exactly MCP_LINE_MAX bytes (spaces after it): read. */
	fputs("{\"jsonrpc\":\"2.0\",\"id\":25,\"method\":\"ping\"}", f);
	for (k = strlen("{\"jsonrpc\":\"2.0\",\"id\":25,\"method\":\"ping\"}");
	    k < 4194304; k++)
		fputc(' ', f);
	fputc('\n', f);
	fclose(f);
	/* Job 1 runs in the test's directory, outside the root. */
	assert_int_equal(h_warren(&r, qadd, NULL, NULL, NULL), 0);
	if (r.status != 0)
		fail_msg("queue add: %d\n%s", r.status, r.err);
	h_run_free(&r);
	h_stdin_path = in;
	assert_int_equal(h_warren(&r, mcp, NULL, NULL, NULL), 0);
	if (r.status != 0)
		fail_msg("exit %d\n%s", r.status, r.err);
	/* Nothing but JSON-RPC on stdout, one answer a request. */
	for (p = r.out; *p != '\0'; p = strchr(p, '\n') + 1, lines++)
		if (strncmp(p, "{\"jsonrpc\":\"2.0\",", 17) != 0 ||
		    strchr(p, '\n') == NULL)
			fail_msg("not a JSON-RPC line: %.200s", p);
	assert_int_equal(lines, 27);
#define HAS(a, b, n) do { if (h_count_lines(r.out, a, b) != n) \
	fail_msg("%d lines with %s and %s, not %d:\n%s", h_count_lines(r.out, \
	a, b), a, b, n, r.out); } while (0)
	HAS("\"id\":1,", "\"code\":-32600", 1);		/* before initialize */
	HAS("\"id\":null", "\"code\":-32700", 4);	/* not JSON, huge,
							   duplicate, NUL */
	HAS("\"id\":null", "a line over 4194304 bytes", 1);
	HAS("\"id\":null", "\"code\":-32600", 2);	/* batch, id true */
	HAS("\"id\":3,", "\"code\":-32600", 1);		/* jsonrpc 1.0 */
	HAS("\"id\":4,", "\"code\":-32602", 1);
	HAS("\"id\":5,", "\"protocolVersion\":\"2025-06-18\"", 1);
	HAS("\"id\":6,", "\"code\":-32601", 1);
	HAS("\"id\":7,", "\"code\":-32602", 1);
	HAS("\"id\":8,", "\\\"task\\\" must be a non-empty string", 1);
	HAS("\"id\":9,", "takes no argument \\\"cwd\\\"", 1);
	HAS("\"id\":10,", "\\\"run\\\" must be an integer", 1);
	HAS("\"id\":11,", "is outside the directories this server may use", 1);
	HAS("\"id\":12,", "is outside the directories this server may use", 1);
	HAS("\"id\":11,", "\"isError\":true", 1);
	HAS("\"id\":13,", "started without --allow-apply", 1);
	HAS("\"id\":14,", "\"result\":{}", 1);	/* goes on after the huge line */
	HAS("\"id\":25,", "\"result\":{}", 1);	/* 4 MiB exactly */
	HAS("\"id\":15,", "progressToken\\\" must be a string or an integer",
	    1);
	HAS("\"id\":18,", "is outside the directories this server may use", 1);
	HAS("\"id\":19,", "\\\"limit\\\" must be an integer of 1 or more", 1);
	HAS("\"id\":20,", "\"code\":-32600", 1);
	HAS("\"id\":22,", "that job runs in", 1);
	HAS("\"id\":23,", "not a usable JSON Schema: $.type", 1);
	HAS("\"id\":24,", "the task is 1048577 bytes, over the 1048576", 1);
	assert_null(strstr(r.out, "QUEUED-OUTSIDE"));
#undef HAS
	/* Nothing ran, nothing was queued. */
	assert_null(strstr(r.err, "run started"));
	h_run_free(&r);
}

/* A --root that is not a directory: exit 2, said, nothing served. */
static void
test_bad_root(void **state)
{
	struct mcp_t	*t = *state;
	struct h_run	 r;
	char		 missing[PATH_MAX], file[PATH_MAX];
	char		*gone[] = { "warren", "mcp", "--root", missing, NULL };
	char		*notdir[] = { "warren", "mcp", "--root", file, NULL };

	snprintf(missing, sizeof(missing), "%s/missing", t->w->dir);
	snprintf(file, sizeof(file), "%s/data.txt", t->w->ws);
	assert_int_equal(h_warren(&r, gone, NULL, NULL, NULL), 0);
	assert_int_equal(r.status, 2);
	assert_non_null(strstr(r.err, "/missing: No such file or directory"));
	assert_string_equal(r.out, "");
	h_run_free(&r);
	assert_int_equal(h_warren(&r, notdir, NULL, NULL, NULL), 0);
	assert_int_equal(r.status, 2);
	assert_non_null(strstr(r.err, "data.txt: not a directory"));
	h_run_free(&r);
}

/* fakellm was asked for both runs' hanging turns (its log names the
 * file). */
static int
asked_hang(void *arg)
{
	char	*s = h_read_file(arg);
	int	 yes = s != NULL && strstr(s, "MCP-HANG\"") != NULL &&
		    strstr(s, "MCP-HANG two") != NULL;

	free(s);
	return yes;
}

/* What warren mcp wrote so far, kept in mcp_seen: the ping's answer? */
static char	mcp_seen[1 << 16];
static size_t	mcp_nseen;

static int
answered(void *arg)
{
	struct pollfd	pfd = { *(int *)arg, POLLIN, 0 };
	ssize_t		n;

	while (poll(&pfd, 1, 0) == 1 && mcp_nseen < sizeof(mcp_seen) - 1 &&
	    (n = read(pfd.fd, mcp_seen + mcp_nseen, sizeof(mcp_seen) - 1 -
	    mcp_nseen)) > 0)
		mcp_nseen += (size_t)n;
	mcp_seen[mcp_nseen] = '\0';
	return strstr(mcp_seen, "\"id\":3,\"result\":{}") != NULL;
}

static int
answered17(void *arg)
{
	answered(arg);
	return strstr(mcp_seen, "\"id\":17,") != NULL;
}

/* Two runs in flight at once, each waiting on the model, and the server
 * still answers; then the client goes away (stdin closes): both runs are
 * stopped, the server exits, nothing of them is left. */
static void
test_stdin_closes(void **state)
{
	struct mcp_t	*t = *state;
	char		*mcp[] = { getenv("WARREN_BIN"), "mcp", NULL };
	const char	 req[] =
	    "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"initialize\",\"params\":"
	    "{\"protocolVersion\":\"2025-06-18\"}}\n"
	    "{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"tools/call\",\"params\":"
	    "{\"name\":\"run\",\"arguments\":{\"task\":\"MCP-HANG\","
	    "\"profile\":\"general\"}}}\n"
	    "{\"jsonrpc\":\"2.0\",\"id\":4,\"method\":\"tools/call\",\"params\":"
	    "{\"name\":\"run\",\"arguments\":{\"task\":\"MCP-HANG two\","
	    "\"profile\":\"general\"}}}\n";
	const char	 more[] =
	    "{\"jsonrpc\":\"2.0\",\"id\":3,\"method\":\"ping\"}\n"
	    "{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"tools/call\",\"params\":"
	    "{\"name\":\"runs\"}}\n";
	char		*out;
	int		 in, fd, rc, st;
	pid_t		 pid;

	if ((rc = mcp_start(t)) == 1)
		skip();
	assert_int_equal(rc, 0);
	pid = mcp_spawn(mcp, t->env, t->w->ws, &in, &fd);
	assert_int_equal(write(in, req, sizeof(req) - 1),
	    (ssize_t)sizeof(req) - 1);
	mcp_wait(asked_hang, t->fl.log, 60, pid, "both runs asked fakellm "
	    "for their turns");
	/* Answered while the run goes on: a ping, and a call that reuses
	 * the id of the run in flight. */
	assert_int_equal(write(in, more, sizeof(more) - 1),
	    (ssize_t)sizeof(more) - 1);
	mcp_wait(answered, &fd, 30, pid, "the ping's answer");
	close(in);
	out = mcp_reap(pid, fd, 30, "warren mcp's output after stdin closed",
	    "warren mcp after its stdin closed", &st);
	if (out != NULL) {
		char *all;

		if (asprintf(&all, "%s%s", mcp_seen, out) == -1)
			fail_msg("asprintf");
		free(out);
		out = all;
	}
	if (out == NULL || st != 0)
		fail_msg("warren mcp: status %d, stdout:\n%s", st, out ? out :
		    "(not ended in 30 s)");
	/* the initialize answer, none for the stopped runs but the refusal
	 * of an id's reuse */
	assert_int_equal(h_count_lines(out, "\"id\":1,", NULL), 1);
	assert_int_equal(h_count_lines(out, "\"id\":2,", NULL), 1);
	assert_int_equal(h_count_lines(out, "\"id\":2,", "\"code\":-32600"),
	    1);
	assert_int_equal(h_count_lines(out, "\"id\":4,", NULL), 0);
	free(out);
	mcp_cancelled(t, 2);
}

/* More calls in flight than the server runs at once (16): the one more
 * is answered with a tool error at once; stdin closing stops the rest. */
static void
test_calls_max(void **state)
{
	struct mcp_t	*t = *state;
	char		*mcp[] = { getenv("WARREN_BIN"), "mcp", NULL };
	char		 req[512], *out;
	int		 in, fd, rc, st, i;
	pid_t		 pid;

	if ((rc = mcp_start(t)) == 1)
		skip();
	assert_int_equal(rc, 0);
	pid = mcp_spawn(mcp, t->env, t->w->ws, &in, &fd);
	snprintf(req, sizeof(req), "{\"jsonrpc\":\"2.0\",\"id\":0,\"method\":"
	    "\"initialize\",\"params\":{\"protocolVersion\":\"2025-06-18\"}}\n");
	assert_int_equal(write(in, req, strlen(req)), (ssize_t)strlen(req));
	for (i = 1; i <= 17; i++) {
		snprintf(req, sizeof(req), "{\"jsonrpc\":\"2.0\",\"id\":%d,"
		    "\"method\":\"tools/call\",\"params\":{\"name\":\"run\","
		    "\"arguments\":{\"task\":\"MCP-HANG %d\"}}}\n", i, i);
		assert_int_equal(write(in, req, strlen(req)),
		    (ssize_t)strlen(req));
	}
	mcp_nseen = 0;
	mcp_wait(answered17, &fd, 60, pid, "the answer to call 17");
	close(in);
	out = mcp_reap(pid, fd, 60, "warren mcp's output after stdin closed",
	    "warren mcp after its stdin closed", &st);
	if (out == NULL || st != 0)
		fail_msg("warren mcp: status %d", st);
	free(out);
	/* call 17 refused, calls 1 to 16 (stopped) not answered */
	assert_int_equal(h_count_lines(mcp_seen, "\"id\":17,",
	    "too many calls in flight"), 1);
	assert_int_equal(h_count_lines(mcp_seen, "\"isError\":true", NULL),
	    1);
	assert_int_equal(h_wait_no_procs(t->w->ws, 30), 0);
	h_fakellm_stop(&t->fl);
}

/* With --allow-apply, an apply whose paths name a file that runs code on
 * the host (.envrc, for direnv) is refused as a tool error, naming it:
 * the tool holds such files back for the user, and a path named exactly
 * would release it as `warren apply RUN PATH` does for a user. */
static void
test_apply_named_held(void **state)
{
	struct mcp_t	*t = *state;
	struct h_run	 r;
	char		 envrc[PATH_MAX];

	mcp_run1(t, "MCP-ENVRC: write it");
	snprintf(envrc, sizeof(envrc), "%s/.envrc", t->w->ws);
	assert_int_equal(access(envrc, F_OK), -1);
	mcp_serve_apply(t, "{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":"
	    "\"tools/call\",\"params\":{\"name\":\"apply\",\"arguments\":"
	    "{\"run\":1,\"paths\":[\".envrc\"]}}}\n"
	    "{\"jsonrpc\":\"2.0\",\"id\":3,\"method\":\"tools/call\","
	    "\"params\":{\"name\":\"apply\",\"arguments\":{\"run\":1,"
	    "\"paths\":[\"./.envrc\"]}}}\n", &r);
	if (r.status != 0)
		fail_msg("exit %d\n%s", r.status, r.err);
	if (h_count_lines(r.out, "\"id\":2,", "\"isError\":true") != 1 ||
	    h_count_lines(r.out, "\"id\":2,", ".envrc: runs code on the "
	    "host") != 1 || h_count_lines(r.out, "\"id\":3,",
	    "\"isError\":true") != 1)
		fail_msg("not refused:\n%s\n%s", r.out, r.err);
	h_run_free(&r);
	if (access(envrc, F_OK) == 0)
		fail_msg("%s was applied through the MCP apply tool", envrc);
	/* Still in the layer, for the user. */
	assert_int_equal(h_warren_l(&r, t->env, "diff", "--stat", "1", NULL),
	    0);
	if (r.status != 0 || strstr(r.out, ".envrc") == NULL)
		fail_msg("diff: %d\n%s\n%s", r.status, r.out, r.err);
	h_run_free(&r);
	h_fakellm_stop(&t->fl);
}

/* Two applies of one run at once (two MCP calls) would each remove the
 * layer and its journal under the other: an apply while the layer's
 * directory is locked (as another apply or a discard holds it) is
 * refused, nothing written; once it is free, the apply goes through. */
static void
test_apply_locked(void **state)
{
	struct mcp_t	*t = *state;
	struct h_run	 r;
	char		 file[PATH_MAX], dir[PATH_MAX];
	const char	*p;
	int		 fd;

	mcp_run1(t, "MCP-TASK: write it");
	/* the layer's directory, as runs --json names it */
	assert_int_equal(h_warren_l(&r, t->env, "runs", "--json",
	    "--workspace", t->w->ws, NULL), 0);
	if ((p = strstr(r.out, "\"dir\": \"")) == NULL)
		fail_msg("no layer dir in:\n%s", r.out);
	p += 8;
	snprintf(dir, sizeof(dir), "%.*s", (int)strcspn(p, "\""), p);
	h_run_free(&r);
	assert_true((fd = open(dir, O_RDONLY | O_DIRECTORY)) >= 0);
	assert_int_equal(flock(fd, LOCK_EX | LOCK_NB), 0);
	mcp_serve_apply(t, "{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":"
	    "\"tools/call\",\"params\":{\"name\":\"apply\",\"arguments\":"
	    "{\"run\":1}}}\n", &r);
	if (r.status != 0 || h_count_lines(r.out, "\"id\":2,",
	    "\"isError\":true") != 1 || h_count_lines(r.out, "\"id\":2,",
	    "run 1's layer is in use") != 1)
		fail_msg("not refused: %d\n%s\n%s", r.status, r.out, r.err);
	h_run_free(&r);
	snprintf(file, sizeof(file), "%s/mcp-file.txt", t->w->ws);
	if (access(file, F_OK) == 0)
		fail_msg("%s applied while the layer was locked", file);
	close(fd);
	assert_int_equal(h_warren_l(&r, t->env, "apply", "1", NULL), 0);
	if (r.status != 0 || access(file, F_OK) != 0)
		fail_msg("apply: %d\n%s\n%s", r.status, r.out, r.err);
	h_run_free(&r);
	h_fakellm_stop(&t->fl);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_sdk_client, setup,
		    teardown),
		cmocka_unit_test_setup_teardown(test_malformed, setup,
		    teardown),
		cmocka_unit_test_setup_teardown(test_stdin_closes, setup,
		    teardown),
		cmocka_unit_test_setup_teardown(test_bad_root, setup, teardown),
		cmocka_unit_test_setup_teardown(test_calls_max, setup, teardown),
		cmocka_unit_test_setup_teardown(test_apply_named_held, setup,
		    teardown),
		cmocka_unit_test_setup_teardown(test_apply_locked, setup,
		    teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}

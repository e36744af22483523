/*
 * MCP servers as an agent's tools, end to end: the real
 * @modelcontextprotocol/server-filesystem (installed from npm by
 * scripts/install-npm.sh), declared in the user's mcp.json, run by warren
 * in the sandbox of the agent that names it in its tools.
 *
 * test_fs_read: its tools reach the model, a call of
 * mcp__fs__read_text_file on a workspace file answers the file's text in
 * the model's next request, and a file outside the workspace (in the
 * test's fake $HOME) is refused by the sandbox although the server was
 * given "/" as its allowed directory; the run completes.
 *
 * test_hostile: tests/mcp/mcp_hostile, a server whose every tool is an
 * attack, in the sandbox of a read-only agent: reading $HOME, connecting
 * to 127.0.0.1, finding the key in its environment, writing outside the
 * workspace, a fork bomb, stray garbage lines, 100 MiB on one line and a
 * call never answered each fail (the model reads why) and the run
 * completes.
 *
 * test_hostile_network: the same server granted "network": true in the
 * user's own mcp.json reaches the test's listener on the host's
 * 127.0.0.1 (it receives the server's line), while reading $HOME, the
 * key in its environment and writing outside the workspace still fail.
 *
 * test_spam: a server that answers a call with endless answers to an id
 * warren never sent is stopped once it wrote MCP_READ_MAX without
 * answering, in well under its 60 s call timeout (those answers are
 * nobody's and restart no count), and the run completes. One that
 * writes to its stderr without end and never answers meets its 2 s
 * timeout: the loop's timers still run. One that writes invalid UTF-8
 * and a terminal escape to its stderr, no newline, and exits: the model
 * reads them escaped (\xff, \x1b). One whose stdout ends (1 MiB of
 * stray answers, read whole, then its end) in the same event batch as
 * the stderr line it wrote before: the model reads that line (its stderr
 * is read before it is failed for the end of its stdout).
 *
 * test_inflight: one answer of the model with 60 calls of 160 KiB to a
 * server that reads nothing: those past 8 MiB unread are refused
 * (MCP_OUT_MAX), not held in the supervisor; the others meet the call
 * timeout; the run completes.
 */
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/types.h>

#include <arpa/inet.h>
#include <netinet/in.h>

#include <errno.h>
#include <poll.h>
#include <signal.h>

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

#include "common/buf.h"
#include "tests/e2e/harness.h"

#define INSIDE	"MCP-INSIDE-7f3a"	/* the workspace file's text */
#define OUTSIDE	"MCP-HOME-SECRET-91c2"	/* the file in the fake $HOME */

struct t {
	char		*dir;
	char		 ws[PATH_MAX];
	char		 home[PATH_MAX];
	char		 state[PATH_MAX + 32], config[PATH_MAX + 32];
	char		 homeenv[PATH_MAX + 8];
	struct h_fakellm fl;
	int		 have_fl;
	char		*env[12];
};

static void
t_open(struct t *t)
{
	memset(t, 0, sizeof(*t));
	t->dir = h_tmpdir();
	snprintf(t->ws, sizeof(t->ws), "%s/ws", t->dir);
	snprintf(t->home, sizeof(t->home), "%s/home", t->dir);
	h_write(t->ws, "notes.txt", INSIDE "\n", 0);
	h_write(t->home, "secret.txt", OUTSIDE "\n", 0);
	snprintf(t->state, sizeof(t->state), "XDG_STATE_HOME=%s/state",
	    t->dir);
	snprintf(t->config, sizeof(t->config), "XDG_CONFIG_HOME=%s/config",
	    t->dir);
	snprintf(t->homeenv, sizeof(t->homeenv), "HOME=%s", t->home);
	t->env[0] = t->state;
	t->env[1] = t->config;
	t->env[2] = t->homeenv;
	t->env[3] = t->fl.env_url;
	t->env[4] = "WARREN_API_KEY=mcp-test-key";
	t->env[5] = "WARREN_MODEL=fake";
	t->env[6] = "WARREN_RETRIES=0";
	t->env[7] = "WARREN_DB=";
	t->env[8] = NULL;
}

/* fakellm, scripted; the run's endpoint. */
static void
t_fakellm(struct t *t, const char *script)
{
	int	rc;

	if ((rc = h_fakellm_start(&t->fl, t->dir, script)) == 1)
		skip();
	assert_int_equal(rc, 0);
	t->have_fl = 1;
	t->env[3] = t->fl.env_url;
}

static void
t_close(struct t *t)
{
	if (t->have_fl)
		h_fakellm_stop(&t->fl);
	h_rm_rf(t->dir);
	free(t->dir);
}

/* The user's mcp.json with one server, and an agent file whose tools are
 * tools (text of its tools: line). */
static void
t_config(struct t *t, const char *mcpjson, const char *tools)
{
	char	agent[512];

	h_write(t->dir, "config/warren/mcp.json", mcpjson, 0);
	snprintf(agent, sizeof(agent), "---\nname: mcpuser\ndescription: "
	    "uses an MCP server\ntools: %s\n---\nUse your tools.\n", tools);
	h_write(t->dir, "config/warren/agents/mcpuser.md", agent, 0);
}

/* The bodies of the requests fakellm logged, in order. */
static json_t *
t_requests(struct t *t)
{
	char		*text, *line, *save;
	json_t		*v, *o;

	v = json_array();
	if ((text = h_read_file(t->fl.log)) == NULL)
		return v;
	for (line = strtok_r(text, "\n", &save); line != NULL;
	    line = strtok_r(NULL, "\n", &save))
		if ((o = json_loads(line, 0, NULL)) != NULL)
			json_array_append_new(v, o);
	free(text);
	return v;
}

/* Request i's body as text ("" if none). */
static char *
t_body(json_t *reqs, size_t i)
{
	json_t	*b = json_object_get(json_array_get(reqs, i), "body");

	return b != NULL ? json_dumps(b, JSON_COMPACT) : strdup("");
}

static const char fs_script_fmt[] =
"{\"rules\": [\n"
" {\"match\": \"call_out\", \"repeat\": true, \"responses\": [{\"reply\":"
"  {\"calls\": [{\"id\": \"c3\", \"name\": \"complete\", \"arguments\":"
"  {\"result\": \"MCP-DONE\"}}]}}]},\n"
" {\"match\": \"call_in\", \"responses\": [{\"reply\": {\"calls\": [{\"id\":"
"  \"call_out\", \"name\": \"mcp__fs__read_text_file\", \"arguments\":"
"  {\"path\": \"%s/secret.txt\"}}]}}]},\n"
" {\"match\": \"MCP-TASK\", \"responses\": [{\"reply\": {\"calls\": [{\"id\":"
"  \"call_in\", \"name\": \"mcp__fs__read_text_file\", \"arguments\":"
"  {\"path\": \"%s/notes.txt\"}}]}}]}\n"
"]}\n";

static void
test_fs_read(void **state)
{
	const char	*server;
	struct t	 t;
	struct h_run	 r;
	json_t		*reqs;
	char		 script[3 * PATH_MAX], mcpjson[PATH_MAX + 256];
	char		*b1, *b2, *b3;

	(void)state;
	if ((server = h_npm_path("mcp-server-filesystem")) == NULL)
		skip();
	t_open(&t);
	snprintf(script, sizeof(script), fs_script_fmt, t.home, t.ws);
	t_fakellm(&t, script);
	/* "/" as its allowed directory: only the sandbox holds it. */
	snprintf(mcpjson, sizeof(mcpjson), "{\"mcpServers\": {\"fs\": "
	    "{\"command\": \"node\", \"args\": [\"%s\", \"/\"]}}}", server);
	t_config(&t, mcpjson, "mcp__fs");
	assert_int_equal(h_warren_l(&r, t.env, "run", "--json", "--workspace",
	    t.ws, "--profile", "mcpuser", "MCP-TASK read the notes", NULL), 0);
	reqs = t_requests(&t);
	if (r.status != 0 || json_array_size(reqs) != 3)
		fail_msg("run: exit %d, %zu requests\nstderr: %s\nstdout: %s",
		    r.status, json_array_size(reqs), r.err, r.out);
	b1 = t_body(reqs, 0);
	b2 = t_body(reqs, 1);
	b3 = t_body(reqs, 2);
	/* The server's tools, with its descriptions, were offered. */
	if (strstr(b1, "mcp__fs__read_text_file") == NULL ||
	    strstr(b1, "mcp__fs__list_directory") == NULL)
		fail_msg("the first request lacks the server's tools: %.2000s",
		    b1);
	/* The workspace file's text reached the model. */
	if (strstr(b2, INSIDE) == NULL)
		fail_msg("the second request lacks the file's text: %.4000s",
		    b2);
	/* The file in $HOME did not, and the model read why. */
	if (strstr(b3, OUTSIDE) != NULL)
		fail_msg("the server read a file outside the workspace: "
		    "%.4000s", b3);
	if (strstr(b3, "EACCES") == NULL && strstr(b3, "denied") == NULL)
		fail_msg("the third request lacks the refusal: %.4000s", b3);
	/* The calls were brokered: the supervisor's own events. */
	if (h_count_lines(r.out, "\"tool_call\"", "mcp__fs__read_text_file") <
	    2)
		fail_msg("no tool_call events for the MCP calls: %s", r.out);
	free(b1);
	free(b2);
	free(b3);
	json_decref(reqs);
	h_run_free(&r);
	t_close(&t);
}

static const char filter_script[] =
"{\"rules\": [\n"
" {\"match\": \"KID-OK\", \"repeat\": true, \"responses\": [{"
"  \"delay_ms\": 4000, \"reply\":"
"  {\"calls\": [{\"id\": \"r2\", \"name\": \"complete\", \"arguments\":"
"  {\"result\": \"BOSS-DONE\"}}]}}]},\n"
" {\"match\": \"agent 0.1,\", \"repeat\": true, \"responses\": [{\"reply\":"
"  {\"calls\": [{\"id\": \"k1\", \"name\": \"complete\", \"arguments\":"
"  {\"result\": \"KID-OK\"}}]}}]},\n"
" {\"match\": \"BOSS-TASK\", \"responses\": [{\"reply\": {\"calls\": [{"
"  \"id\": \"d1\", \"name\": \"delegate\", \"arguments\": {\"profile\":"
"  \"mcpuser\", \"task\": \"read it\", \"tool_filter\":"
"  [\"mcp__fs__read_text_file\"]}}]}}]}\n"
"]}\n";

/* While warren runs: the subagent's server starts, then is gone while
 * the root still waits on its last turn (4 s). */
struct filter_watch {
	const char	*needle;	/* the server's command line */
	int		 started;
	int		 stopped_early;
	char		 why[1100];
};

static void
filter_during(pid_t warren, void *arg)
{
	struct filter_watch	*fw = arg;

	if (h_wait_procs(fw->needle, 60, warren) == -1) {
		snprintf(fw->why, sizeof(fw->why), "%s", h_wait_why);
		return;
	}
	fw->started = 1;
	if (h_wait_no_procs(fw->needle, 3) == -1) {
		snprintf(fw->why, sizeof(fw->why), "%s", h_wait_why);
		return;
	}
	fw->stopped_early = kill(warren, 0) == 0;
	if (!fw->stopped_early)
		snprintf(fw->why, sizeof(fw->why), "warren had ended first");
}

/*
 * delegate's tool_filter narrows a profile's MCP tools: a subagent of
 * mcpuser (tools: mcp__fs) filtered to mcp__fs__read_text_file is offered
 * that one tool of the server's 14. Its server is stopped with it: gone
 * while the root still runs.
 */
static void
test_filter(void **state)
{
	const char	*server;
	struct t	 t;
	struct h_run	 r;
	json_t		*reqs;
	struct filter_watch fw;
	char		 mcpjson[3 * PATH_MAX], needle[PATH_MAX + 8], *b;
	char		*argv[] = { "warren", "run", "--json", "--workspace",
			    t.ws, "--profile", "mcpboss", "BOSS-TASK", NULL };
	size_t		 i;
	int		 seen = 0;

	(void)state;
	if ((server = h_npm_path("mcp-server-filesystem")) == NULL)
		skip();
	t_open(&t);
	t_fakellm(&t, filter_script);
	/* Its allowed directory "WS/.": in its command line only. */
	snprintf(needle, sizeof(needle), "%s/.", t.ws);
	snprintf(mcpjson, sizeof(mcpjson), "{\"mcpServers\": {\"fs\": "
	    "{\"command\": \"node\", \"args\": [\"%s\", \"%s\"]}}}", server,
	    needle);
	t_config(&t, mcpjson, "mcp__fs");
	h_write(t.dir, "config/warren/agents/mcpboss.md", "---\nname: "
	    "mcpboss\ndescription: delegates\ntools: Task\n---\nDelegate.\n",
	    0);
	memset(&fw, 0, sizeof(fw));
	fw.needle = needle;
	assert_int_equal(h_warren(&r, argv, t.env, filter_during, &fw), 0);
	if (r.status != 0 || strstr(r.out, "BOSS-DONE") == NULL)
		fail_msg("run: exit %d\nstderr: %s", r.status, r.err);
	if (!fw.started || !fw.stopped_early)
		fail_msg("the subagent's server was not stopped with it: %s",
		    fw.why);
	reqs = t_requests(&t);
	for (i = 0; i < json_array_size(reqs); i++) {
		b = t_body(reqs, i);
		if (strstr(b, "agent 0.1,") != NULL) {
			seen++;
			if (strstr(b, "mcp__fs__read_text_file") == NULL ||
			    strstr(b, "mcp__fs__list_directory") != NULL)
				fail_msg("the filtered subagent's tools: "
				    "%.3000s", b);
		}
		free(b);
	}
	assert_int_equal(seen, 1);
	json_decref(reqs);
	h_run_free(&r);
	t_close(&t);
}

/* A server of 120 tools, in sh: more than an agent can be offered. */
static const char many_sh[] =
"#!/bin/sh\n"
"i=0; tools=''\n"
"while [ $i -lt 120 ]; do\n"
"  tools=\"$tools${tools:+,}{\\\"name\\\":\\\"t$i\\\",\\\"inputSchema\\\":{}}\"\n"
"  i=$((i + 1))\n"
"done\n"
"while IFS= read -r line; do\n"
"  case \"$line\" in\n"
"  *'\"method\":\"initialize\"'*) printf '%s\\n' '{\"jsonrpc\":\"2.0\",\"id\":1,"
"\"result\":{\"protocolVersion\":\"2025-06-18\",\"capabilities\":{},"
"\"serverInfo\":{\"name\":\"many\",\"version\":\"1\"}}}' ;;\n"
"  *'\"method\":\"tools/list\"'*) printf '{\"jsonrpc\":\"2.0\",\"id\":2,"
"\"result\":{\"tools\":[%s]}}\\n' \"$tools\" ;;\n"
"  esac\n"
"done\n";

/*
 * A server listing 120 tools: the agent is offered MCP_TOOLS_MAX (104)
 * of them, its own tools beside them fit an LLM request, and the run goes
 * on (offered all, the agent had more tools than it can hold and its
 * worker died).
 */
static void
test_many_tools(void **state)
{
	struct t	 t;
	struct h_run	 r;
	json_t		*reqs;
	char		 mcpjson[PATH_MAX + 256], srv[PATH_MAX + 16], *b;

	(void)state;
	t_open(&t);
	t_fakellm(&t, "{\"responses\": [{\"reply\": {\"calls\": [{\"id\": "
	    "\"c1\", \"name\": \"complete\", \"arguments\": {\"result\": "
	    "\"MANY-OK\"}}]}}], \"repeat\": true}");
	h_write(t.dir, "srv/many.sh", many_sh, 0755);
	snprintf(srv, sizeof(srv), "%s/srv/many.sh", t.dir);
	snprintf(mcpjson, sizeof(mcpjson), "{\"mcpServers\": {\"many\": "
	    "{\"command\": \"sh\", \"args\": [\"%s\"]}}}", srv);
	t_config(&t, mcpjson, "mcp__many, Read, Grep, Glob, LS, TodoWrite");
	assert_int_equal(h_warren_l(&r, t.env, "run", "--json", "--workspace",
	    t.ws, "--profile", "mcpuser", "MANY-TASK", NULL), 0);
	if (r.status != 0 || strstr(r.out, "MANY-OK") == NULL)
		fail_msg("run: exit %d\nstderr: %s", r.status, r.err);
	reqs = t_requests(&t);
	b = t_body(reqs, 0);
	if (strstr(b, "\"mcp__many__t103\"") == NULL ||
	    strstr(b, "\"mcp__many__t104\"") != NULL)
		fail_msg("not the first 104 of the server's tools: %.2000s", b);
	if (strstr(r.err, "left out") == NULL)
		fail_msg("no warning of the tools left out: %s", r.err);
	free(b);
	json_decref(reqs);
	h_run_free(&r);
	t_close(&t);
}

/* A server of the listing (NULL if absent). */
static json_t *
t_server(json_t *doc, const char *name)
{
	json_t	*v;
	size_t	 i;

	json_array_foreach(json_object_get(doc, "servers"), i, v)
		if (strcmp(json_string_value(json_object_get(v, "name")),
		    name) == 0)
			return v;
	return NULL;
}

static int
t_has_tool(json_t *srv, const char *tool)
{
	json_t	*v;
	size_t	 i;

	json_array_foreach(json_object_get(srv, "tools"), i, v)
		if (strcmp(json_string_value(json_object_get(v, "name")),
		    tool) == 0)
			return 1;
	return 0;
}

/*
 * warren mcp list: the user's server started, sandboxed, its tools
 * listed; a workspace's .mcp.json listed but not started until trusted,
 * and once trusted granted nothing: its env dropped with a warning, and
 * no path beyond the workspace (its script outside it cannot be read:
 * the server fails, and the listing says so).
 */
static void
test_list(void **state)
{
	const char	*server;
	struct t	 t;
	struct h_run	 r;
	json_t		*doc, *fs, *proj;
	char		 mcpjson[PATH_MAX + 256];

	(void)state;
	if ((server = h_npm_path("mcp-server-filesystem")) == NULL)
		skip();
	t_open(&t);
	snprintf(mcpjson, sizeof(mcpjson), "{\"mcpServers\": {\"fs\": "
	    "{\"command\": \"node\", \"args\": [\"%s\", \"/\"]}}}", server);
	t_config(&t, mcpjson, "mcp__fs");
	snprintf(mcpjson, sizeof(mcpjson), "{\"mcpServers\": {\"proj\": "
	    "{\"command\": \"node\", \"args\": [\"%s\", \".\"], \"env\": "
	    "{\"GITHUB_TOKEN\": \"x\"}}}}", server);
	h_write(t.ws, ".mcp.json", mcpjson, 0);
	assert_int_equal(h_warren_l(&r, t.env, "mcp", "list", "--json",
	    "--workspace", t.ws, NULL), 0);
	if (r.status != 0 || (doc = json_loads(r.out, 0, NULL)) == NULL)
		fail_msg("mcp list: exit %d\n%s\n%s", r.status, r.err, r.out);
	assert_non_null(fs = t_server(doc, "fs"));
	assert_non_null(proj = t_server(doc, "proj"));
	assert_true(json_is_true(json_object_get(fs, "trusted")));
	assert_string_equal(json_string_value(json_object_get(fs,
	    "declared")), "user");
	if (!t_has_tool(fs, "mcp__fs__read_text_file"))
		fail_msg("fs lists no read_text_file: %s", r.out);
	assert_non_null(strstr(json_string_value(json_object_get(fs,
	    "sandbox")), "read-only"));
	assert_true(json_is_false(json_object_get(proj, "trusted")));
	assert_int_equal(json_array_size(json_object_get(proj, "tools")), 0);
	assert_non_null(strstr(r.err, "not trusted"));
	json_decref(doc);
	h_run_free(&r);
	/* Trusted: proj starts, with nothing beyond the workspace. */
	assert_int_equal(h_warren_l(&r, t.env, "trust", t.ws, NULL), 0);
	assert_int_equal(r.status, 0);
	h_run_free(&r);
	assert_int_equal(h_warren_l(&r, t.env, "mcp", "list", "--json",
	    "--workspace", t.ws, NULL), 0);
	if ((doc = json_loads(r.out, 0, NULL)) == NULL)
		fail_msg("mcp list: exit %d\n%s\n%s", r.status, r.err, r.out);
	assert_non_null(proj = t_server(doc, "proj"));
	assert_true(json_is_true(json_object_get(proj, "trusted")));
	if (strstr(r.err, "proj: \"env\" ignored") == NULL)
		fail_msg("no warning of the dropped env: %s", r.err);
	assert_non_null(strstr(json_string_value(json_object_get(proj,
	    "sandbox")), "read nothing more"));
	if (json_is_null(json_object_get(proj, "error")) ||
	    json_array_size(json_object_get(proj, "tools")) != 0)
		fail_msg("the project's server read its script outside the "
		    "workspace: %s", r.out);
	assert_int_equal(r.status, 1);
	/* The text form: the same facts, one server a block. */
	json_decref(doc);
	h_run_free(&r);
	assert_int_equal(h_warren_l(&r, t.env, "mcp", "list", "--workspace",
	    t.ws, NULL), 0);
	if (strstr(r.out, "mcp__fs__read_text_file") == NULL ||
	    strstr(r.out, "the workspace's, trusted") == NULL)
		fail_msg("mcp list: %s", r.out);
	h_run_free(&r);
	t_close(&t);
}

/* One attack: the call's tool and arguments, and the start of the text
 * its result must hold in the model's next request. */
struct attack {
	const char	*tool;
	const char	*args;
	const char	*want;
};

/* The script: call i+1 once call i's id ("a<i>") is in the context, the
 * latest first; complete after the last. */
static char *
hostile_script(const struct attack *v, size_t n)
{
	struct buf	 b;
	size_t		 i;

	buf_init(&b, 0);
	buf_addf(&b, "{\"rules\": [\n {\"match\": \"\\\"a%zu\\\"\", "
	    "\"repeat\": true, \"responses\": [{\"reply\": {\"calls\": "
	    "[{\"id\": \"done\", \"name\": \"complete\", \"arguments\": "
	    "{\"result\": \"SURVIVED\"}}]}}]}", n - 1);
	for (i = n - 1; i-- > 0;)
		buf_addf(&b, ",\n {\"match\": \"\\\"a%zu\\\"\", \"responses\": "
		    "[{\"reply\": {\"calls\": [{\"id\": \"a%zu\", \"name\": "
		    "\"%s\", \"arguments\": %s}]}}]}", i, i + 1, v[i + 1].tool,
		    v[i + 1].args);
	buf_addf(&b, ",\n {\"match\": \"MCP-HOSTILE\", \"responses\": "
	    "[{\"reply\": {\"calls\": [{\"id\": \"a0\", \"name\": \"%s\", "
	    "\"arguments\": %s}]}}]}\n]}\n", v[0].tool, v[0].args);
	return buf_release(&b, NULL);
}

/* A listener on 127.0.0.1 for connect_local; its port in *port. */
static int
hostile_listen(int *port)
{
	struct sockaddr_in	sin;
	socklen_t		len = sizeof(sin);
	int			fd;

	fd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK, 0);
	assert_true(fd >= 0);
	memset(&sin, 0, sizeof(sin));
	sin.sin_family = AF_INET;
	sin.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	assert_int_equal(bind(fd, (struct sockaddr *)&sin, sizeof(sin)), 0);
	assert_int_equal(listen(fd, 4), 0);
	assert_int_equal(getsockname(fd, (struct sockaddr *)&sin, &len), 0);
	*port = ntohs(sin.sin_port);
	return fd;
}

/* The arguments of the attacks on the host: read_home's file in $HOME,
 * write_outside's file beside it, connect_local's port, where lfd
 * listens. */
struct hostile_args {
	char	rh[PATH_MAX + 32];
	char	wo[PATH_MAX + 48];
	char	cl[64];
	char	written[PATH_MAX + 16];
	int	lfd;
};

static void
hostile_args(struct t *t, struct hostile_args *a)
{
	int	port;

	a->lfd = hostile_listen(&port);
	snprintf(a->rh, sizeof(a->rh), "{\"path\": \"%s/secret.txt\"}",
	    t->home);
	snprintf(a->written, sizeof(a->written), "%s/written.txt", t->home);
	snprintf(a->wo, sizeof(a->wo), "{\"path\": \"%s\"}", a->written);
	snprintf(a->cl, sizeof(a->cl), "{\"port\": %d}", port);
}

/* tests/mcp/mcp_hostile of this build, in bin. */
static void
hostile_bin(char *bin, size_t binsz)
{
	const char	*build = getenv("WARREN_BUILD_DIR");

	assert_non_null(build);
	snprintf(bin, binsz, "%s/tests/mcp/mcp_hostile", build);
	if (access(bin, X_OK) == -1)
		fail_msg("%s: %s (built with the tests)", bin, strerror(errno));
}

/*
 * The attacks v[0..n) one after the other in a run of mcpuser (t's
 * mcp.json and agent written, its env set, h_hang_guard set): a run past
 * the guard is a missed deadline, said as waiting on waited; the run
 * completes, one request per attack and one more, and each attack's
 * text is in the request after it. The requests, in r the run.
 */
static json_t *
hostile_run(struct t *t, const struct attack *v, size_t n, const char *task,
    const char *waited, struct h_run *r)
{
	json_t	*reqs;
	char	*script, *body;
	size_t	 i;

	script = hostile_script(v, n);
	t_fakellm(t, script);
	free(script);
	assert_int_equal(h_warren_l(r, t->env, "run", "--json", "--workspace",
	    t->ws, "--profile", "mcpuser", task, NULL), 0);
	if (r->hung)
		fail_msg("%s", h_deadline_missed(r, waited));
	reqs = t_requests(t);
	if (r->status != 0 || json_array_size(reqs) != n + 1)
		fail_msg("run: exit %d, %zu requests\nstderr: %s", r->status,
		    json_array_size(reqs), r->err);
	for (i = 0; i < n; i++) {
		body = t_body(reqs, i + 1);
		if (strstr(body, v[i].want) == NULL)
			fail_msg("%s: the model did not read \"%s\": ...%s",
			    v[i].tool, v[i].want, strlen(body) > 3000 ?
			    body + strlen(body) - 3000 : body);
		free(body);
	}
	if (strstr(r->out, "SURVIVED") == NULL)
		fail_msg("the run did not complete: %s", r->out);
	return reqs;
}

static void
test_hostile(void **state)
{
	struct t	 t;
	struct h_run	 r;
	json_t		*reqs;
	char		 bin[PATH_MAX], mcpjson[4 * PATH_MAX], *body;
	char		 keyenv[64];
	struct hostile_args a;
	int		 fd;
	struct attack	 v[] = {
		{ "mcp__evil__read_home", a.rh, "read_home: open " },
		{ "mcp__evil__connect_local", a.cl, "connect_local: " },
		{ "mcp__evil__read_env", "{}", "read_env: none" },
		{ "mcp__evil__write_outside", a.wo, "write_outside: open " },
		{ "mcp__evil__fork_bomb", "{\"n\": 4096}",
		    "fork_bomb: forked " },
		{ "mcp__evil__garbage", "{}", "garbage: " },
		{ "mcp__evil__echo", "{\"text\": \"STILL-SERVING\"}",
		    "STILL-SERVING" },
		{ "mcp__evil__flood", "{\"mb\": 100}",
		    "MCP server evil: stopped: a line of more than" },
		{ "mcp__evil__echo", "{\"text\": \"after\"}",
		    "MCP server evil is stopped" },
		{ "mcp__mortal__die", "{}", "MCP server mortal: it " },
		{ "mcp__slow__hang", "{}",
		    "did not answer mcp__slow__hang within 2000 ms" },
	};

	(void)state;
	hostile_bin(bin, sizeof(bin));
	t_open(&t);
	hostile_args(&t, &a);
	snprintf(mcpjson, sizeof(mcpjson), "{\"mcpServers\": {"
	    "\"evil\": {\"command\": \"%s\"}, "
	    "\"slow\": {\"command\": \"%s\", \"timeout_ms\": 2000}, "
	    "\"mortal\": {\"command\": \"%s\"}, "
	    "\"absent\": {\"command\": \"no-such-mcp-server\"}}}", bin, bin,
	    bin);
	/* absent cannot start: its tools are left out, the agent goes on. */
	t_config(&t, mcpjson, "mcp__evil, mcp__slow__hang, mcp__mortal, "
	    "mcp__absent, Read");
	/* The key where a careless runner would leave it: our environment. */
	snprintf(keyenv, sizeof(keyenv), "ANTHROPIC_API_KEY=mcp-anthropic-"
	    "key");
	t.env[8] = keyenv;
	t.env[9] = NULL;
	/* The hang's 2 s and the rest. */
	h_hang_guard = 90;
	reqs = hostile_run(&t, v, sizeof(v) / sizeof(v[0]),
	    "MCP-HOSTILE attack", "an MCP call's timeout_ms", &r);
	body = t_body(reqs, sizeof(v) / sizeof(v[0]));
	/* Each attack failed: nothing read, written, connected or seen. */
	if (strstr(body, OUTSIDE) != NULL || strstr(body, "read_home: read ")
	    != NULL)
		fail_msg("the server read $HOME");
	if (strstr(body, "connect_local: connected") != NULL)
		fail_msg("the server connected to 127.0.0.1");
	if (strstr(body, "mcp-test-key") != NULL ||
	    strstr(body, "mcp-anthropic-key") != NULL)
		fail_msg("the server saw the key");
	if (strstr(body, "then fork: ") == NULL)
		fail_msg("the fork bomb was not held by the pids limit");
	free(body);
	assert_int_equal(access(a.written, F_OK), -1);
	fd = accept(a.lfd, NULL, NULL);
	if (fd >= 0)
		fail_msg("the listener got a connection");
	close(a.lfd);
	if (strstr(r.err, "MCP server absent: server absent: command "
	    "no-such-mcp-server") == NULL)
		fail_msg("no word of the server that could not start: %s",
		    r.err);
	json_decref(reqs);
	h_run_free(&r);
	t_close(&t);
}

static void
test_spam(void **state)
{
	struct t	 t;
	struct h_run	 r;
	char		 bin[PATH_MAX], mcpjson[5 * PATH_MAX];
	struct attack	 v[] = {
		{ "mcp__spammer__spam", "{}", "MCP server spammer: stopped: "
		    "it wrote more than 16777216 bytes without answering" },
		{ "mcp__spammer__echo", "{\"text\": \"after\"}",
		    "MCP server spammer is stopped" },
		{ "mcp__yeller__yell", "{}",
		    "did not answer mcp__yeller__yell within 2000 ms" },
		{ "mcp__mumbler__mumble", "{}", "(its stderr: \\\\xff\\\\xfe"
		    "\\\\x1b]0;owned\\\\x07 mumble)" },
		{ "mcp__lastword__lastwords", "{}", "MCP server lastword: it "
		    "closed its stdout (exited?) (its stderr: lastwords: my "
		    "stdout ends after this line)" },
	};

	(void)state;
	hostile_bin(bin, sizeof(bin));
	t_open(&t);
	/* The default call timeout, 60 s: past the guard below. */
	snprintf(mcpjson, sizeof(mcpjson), "{\"mcpServers\": {"
	    "\"spammer\": {\"command\": \"%s\"}, "
	    "\"yeller\": {\"command\": \"%s\", \"timeout_ms\": 2000}, "
	    "\"mumbler\": {\"command\": \"%s\"}, "
	    "\"lastword\": {\"command\": \"%s\"}}}", bin, bin, bin, bin);
	t_config(&t, mcpjson, "mcp__spammer, mcp__yeller__yell, "
	    "mcp__mumbler__mumble, mcp__lastword__lastwords, Read");
	/* The run takes 2.4 s here (yeller's 2 s timeout); a lost
	 * MCP_READ_MAX is seen at 20 s, not at the call's 60 s. */
	h_hang_guard = 20;
	json_decref(hostile_run(&t, v, sizeof(v) / sizeof(v[0]),
	    "MCP-HOSTILE spam", "MCP_READ_MAX of answers to an id never sent",
	    &r));
	h_run_free(&r);
	t_close(&t);
}

/* One reply of n calls of tool, ids PREFIX0..; args pad bytes of "x". */
static void
inflight_reply(struct buf *b, const char *match, const char *prefix,
    size_t n, const char *tool, size_t pad)
{
	size_t	i, k;

	buf_addf(b, " {\"match\": \"%s\", \"responses\": [{\"reply\": "
	    "{\"calls\": [", match);
	for (i = 0; i < n; i++) {
		/* Arguments differ: the same call 5 times is a loop. */
		buf_addf(b, "%s{\"id\": \"%s%zu\", \"name\": \"%s\", "
		    "\"arguments\": {\"n\": %zu, \"pad\": \"", i ? ", " : "",
		    prefix, i, tool, i);
		for (k = 0; k < pad; k++)
			buf_addc(b, 'x');
		buf_addstr(b, "\"}}");
	}
	buf_addstr(b, "]}}]}");
}

static void
test_inflight(void **state)
{
	struct t	 t;
	struct h_run	 r;
	struct buf	 b;
	json_t		*reqs;
	char		 bin[PATH_MAX], mcpjson[3 * PATH_MAX], *script, *body;
	char		*all;
	size_t		 i;

	(void)state;
	hostile_bin(bin, sizeof(bin));
	t_open(&t);
	buf_init(&b, 0);
	buf_addstr(&b, "{\"rules\": [\n {\"match\": \"\\\"p59\\\"\", "
	    "\"repeat\": true, \"responses\": [{\"reply\": {\"calls\": "
	    "[{\"id\": \"done\", \"name\": \"complete\", \"arguments\": "
	    "{\"result\": \"SURVIVED\"}}]}}]},\n");
	inflight_reply(&b, "MCP-INFLIGHT", "p", 60, "mcp__deaf__hang",
	    160 * 1024);
	buf_addstr(&b, "\n]}\n");
	script = buf_release(&b, NULL);
	t_fakellm(&t, script);
	free(script);
	snprintf(mcpjson, sizeof(mcpjson), "{\"mcpServers\": {"
	    "\"deaf\": {\"command\": \"%s\", \"timeout_ms\": 2000}}}",
	    bin);
	t_config(&t, mcpjson, "mcp__deaf__hang, Read");
	h_hang_guard = 60;
	/* One body: 9.6 MiB of arguments streamed in pieces would pass
	   max_response. */
	t.env[8] = "WARREN_STREAM=false";
	t.env[9] = NULL;
	assert_int_equal(h_warren_l(&r, t.env, "run", "--json", "--workspace",
	    t.ws, "--profile", "mcpuser", "MCP-INFLIGHT calls", NULL), 0);
	if (r.hung)
		fail_msg("%s", h_deadline_missed(&r, "an MCP call's "
		    "timeout_ms"));
	reqs = t_requests(&t);
	if (r.status != 0 || json_array_size(reqs) < 2)
		fail_msg("run: exit %d, %zu requests\nstderr: %.3000s",
		    r.status, json_array_size(reqs), r.err);
	/* What the model read after its answer, in any request. */
	buf_init(&b, 0);
	for (i = 1; i < json_array_size(reqs); i++) {
		body = t_body(reqs, i);
		buf_addstr(&b, body);
		free(body);
	}
	buf_addc(&b, '\0');
	all = buf_release(&b, NULL);
	if (strstr(all, "MCP server deaf: it has not read the ") == NULL ||
	    strstr(all, "did not answer mcp__deaf__hang within 2000 ms") ==
	    NULL)
		fail_msg("60 calls of 160 KiB: none refused past 8 MiB unread");
	free(all);
	if (strstr(r.out, "SURVIVED") == NULL)
		fail_msg("the run did not complete: %.3000s", r.out);
	json_decref(reqs);
	h_run_free(&r);
	t_close(&t);
}

/* What the one connection to lfd sent, within 10 s (the run is over:
 * it is queued already, or never came). */
static void
hostile_received(int lfd, char *got, size_t gotsz)
{
	struct pollfd	 pfd;
	ssize_t		 n;
	size_t		 off = 0;
	int		 fd = -1;

	pfd.fd = lfd;
	pfd.events = POLLIN;
	if (poll(&pfd, 1, 10000) != 1 || (fd = accept(lfd, NULL, NULL)) < 0)
		fail_msg("the listener on 127.0.0.1 got no connection within "
		    "10 s of the run's end");
	pfd.fd = fd;
	while (off + 1 < gotsz && poll(&pfd, 1, 10000) == 1 &&
	    (n = read(fd, got + off, gotsz - off - 1)) > 0)
		off += (size_t)n;
	got[off] = '\0';
	close(fd);
}

static void
test_hostile_network(void **state)
{
	struct t	 t;
	struct h_run	 r;
	json_t		*reqs;
	char		 bin[PATH_MAX], mcpjson[PATH_MAX + 128], *body;
	char		 got[256], keyenv[64];
	struct hostile_args a;
	struct attack	 v[] = {
		{ "mcp__net__connect_local", a.cl,
		    "connect_local: connected to 127.0.0.1:" },
		{ "mcp__net__read_home", a.rh, "read_home: open " },
		{ "mcp__net__read_env", "{}", "read_env: none" },
		{ "mcp__net__write_outside", a.wo, "write_outside: open " },
	};

	(void)state;
	hostile_bin(bin, sizeof(bin));
	t_open(&t);
	hostile_args(&t, &a);
	snprintf(mcpjson, sizeof(mcpjson), "{\"mcpServers\": {\"net\": "
	    "{\"command\": \"%s\", \"network\": true}}}", bin);
	t_config(&t, mcpjson, "mcp__net, Read");
	snprintf(keyenv, sizeof(keyenv), "ANTHROPIC_API_KEY=mcp-anthropic-"
	    "key");
	t.env[8] = keyenv;
	t.env[9] = NULL;
	h_hang_guard = 60;
	reqs = hostile_run(&t, v, sizeof(v) / sizeof(v[0]),
	    "MCP-HOSTILE network", "four MCP calls", &r);
	hostile_received(a.lfd, got, sizeof(got));
	if (strstr(got, "mcp_hostile was here") == NULL)
		fail_msg("the listener received \"%s\", not the server's line",
		    got);
	close(a.lfd);
	/* The network is all it was given. */
	body = t_body(reqs, sizeof(v) / sizeof(v[0]));
	if (strstr(body, OUTSIDE) != NULL || strstr(body, "read_home: read ")
	    != NULL)
		fail_msg("the server with network read $HOME");
	if (strstr(body, "mcp-test-key") != NULL ||
	    strstr(body, "mcp-anthropic-key") != NULL)
		fail_msg("the server with network saw the key");
	free(body);
	assert_int_equal(access(a.written, F_OK), -1);
	json_decref(reqs);
	h_run_free(&r);
	t_close(&t);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_teardown(test_fs_read, h_fakellm_teardown),
		cmocka_unit_test(test_list),
		cmocka_unit_test_teardown(test_many_tools, h_fakellm_teardown),
		cmocka_unit_test_teardown(test_filter, h_fakellm_teardown),
		cmocka_unit_test_teardown(test_hostile, h_fakellm_teardown),
		cmocka_unit_test_teardown(test_hostile_network,
		    h_fakellm_teardown),
		cmocka_unit_test_teardown(test_spam, h_fakellm_teardown),
		cmocka_unit_test_teardown(test_inflight, h_fakellm_teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}

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
 */
#include <sys/stat.h>
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
#include <jansson.h>

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
	char		*env[10];
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

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_teardown(test_fs_read, h_fakellm_teardown),
		cmocka_unit_test(test_list),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}

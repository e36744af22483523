/*
 * The mcpServers of an mcp.json, in Claude Code's shape:
 *
 *	{"mcpServers": {"fs": {"command": "node", "args": ["server.js", "."],
 *	    "env": {"TOKEN": "..."}, "timeout_ms": 30000,
 *	    "network": true, "read": ["/opt/data"]}}}
 *
 * The user's file ($XDG_CONFIG_HOME/warren/mcp.json) is trusted. The
 * workspace's .mcp.json is agent-writable: read only once the user
 * trusted it (cli/project.c), and even then it grants nothing beyond the
 * agent's own sandbox: its network, read and env are dropped with a
 * warning, and an entry named as one of the user's does not replace it.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "common/xmalloc.h"
#include "supervisor/mcp.h"

/* [A-Za-z0-9_-], no "__" (the separator of mcp__SERVER__TOOL). */
static int
mcp_config_name_ok(const char *s)
{
	size_t	i;

	for (i = 0; s[i] != '\0'; i++) {
		if (!((s[i] >= 'a' && s[i] <= 'z') ||
		    (s[i] >= 'A' && s[i] <= 'Z') ||
		    (s[i] >= '0' && s[i] <= '9') || s[i] == '_' || s[i] == '-'))
			return 0;
		if (s[i] == '_' && s[i + 1] == '_')
			return 0;
	}
	return i > 0 && i <= MCP_NAME_MAX && s[0] != '_' && s[i - 1] != '_';
}

int
mcp_split(const char *name, char *server, size_t serversz, const char **tool)
{
	const char	*p, *sep;
	size_t		 len;

	if (name == NULL || strncmp(name, MCP_PREFIX, 5) != 0)
		return -1;
	p = name + 5;
	sep = strstr(p, MCP_SEP);
	len = sep != NULL ? (size_t)(sep - p) : strlen(p);
	if (len == 0 || len >= serversz)
		return -1;
	memcpy(server, p, len);
	server[len] = '\0';
	if (!mcp_config_name_ok(server))
		return -1;
	*tool = sep != NULL ? sep + 2 : "";
	if (sep != NULL && **tool == '\0')
		return -1;
	return 0;
}

static void
mcp_entry_free(struct mcp_entry *e)
{
	size_t	i;

	free(e->name);
	free(e->command);
	for (i = 0; i < e->nargs; i++)
		free(e->args[i]);
	for (i = 0; i < e->nenv; i++)
		free(e->env[i]);
	for (i = 0; i < e->nread; i++)
		free(e->read[i]);
	free(e->file);
	memset(e, 0, sizeof(*e));
}

void
mcp_config_free(struct mcp_config *c)
{
	size_t	i;

	for (i = 0; i < c->n; i++)
		mcp_entry_free(&c->v[i]);
	free(c->v);
	c->v = NULL;
	c->n = 0;
}

const struct mcp_entry *
mcp_config_find(const struct mcp_config *c, const char *name)
{
	size_t	i;

	for (i = 0; c != NULL && i < c->n; i++)
		if (strcmp(c->v[i].name, name) == 0)
			return &c->v[i];
	return NULL;
}

static void
mcp_config_warn(char *warn, size_t warnsz, const char *fmt, const char *file,
    const char *name)
{
	size_t	len = strlen(warn);

	if (len + 1 < warnsz)
		snprintf(warn + len, warnsz - len, fmt, file, name);
}

static int
mcp_config_strings(const json_t *v, char **out, size_t *n, size_t max,
    const char *what, char *err, size_t errsz)
{
	const json_t	*s;
	size_t		 i;

	if (v == NULL)
		return 0;
	if (!json_is_array(v) || json_array_size(v) > max) {
		snprintf(err, errsz, "%s: not an array of at most %zu strings",
		    what, max);
		return -1;
	}
	json_array_foreach(v, i, s) {
		if (!json_is_string(s) || json_string_length(s) == 0 ||
		    json_string_length(s) >= 4096 ||
		    strlen(json_string_value(s)) != json_string_length(s)) {
			snprintf(err, errsz, "%s[%zu]: not a string of 1 to "
			    "4095 bytes", what, i);
			return -1;
		}
		out[(*n)++] = xstrdup(json_string_value(s));
	}
	return 0;
}

static int
mcp_config_env(const json_t *v, struct mcp_entry *e, char *err,
    size_t errsz)
{
	const char	*k;
	const json_t	*s;
	char		*kv;

	if (!json_is_object(v) || json_object_size(v) > MCP_ENV_MAX) {
		snprintf(err, errsz, "%s: env: not an object of at most %d "
		    "strings", e->name, MCP_ENV_MAX);
		return -1;
	}
	json_object_foreach((json_t *)(uintptr_t)v, k, s) {
		if (!json_is_string(s) || k[0] == '\0' ||
		    strchr(k, '=') != NULL) {
			snprintf(err, errsz, "%s: env.%.64s: not a string",
			    e->name, k);
			return -1;
		}
		if (xasprintf(&kv, "%s=%s", k, json_string_value(s)) == -1)
			return -1;
		e->env[e->nenv++] = kv;
	}
	return 0;
}

/* One entry's fields, the project's grants dropped with a warning. */
static int
mcp_config_entry(struct mcp_entry *e, const json_t *o, int project,
    char *warn, size_t warnsz, char *err, size_t errsz)
{
	const json_t	*v;
	char		 what[64];

	if (!json_is_object(o) ||
	    !json_is_string(v = json_object_get(o, "command")) ||
	    json_string_length(v) == 0 || json_string_length(v) >= 4096) {
		snprintf(err, errsz, "%s: \"command\" must be a string",
		    e->name);
		return -1;
	}
	e->command = xstrdup(json_string_value(v));
	if ((v = json_object_get(o, "type")) != NULL && (!json_is_string(v) ||
	    strcmp(json_string_value(v), "stdio") != 0)) {
		snprintf(err, errsz, "%s: only the stdio transport is "
		    "supported (type \"stdio\")", e->name);
		return -1;
	}
	snprintf(what, sizeof(what), "%s: args", e->name);
	if (mcp_config_strings(json_object_get(o, "args"), e->args, &e->nargs,
	    MCP_ARGS_MAX - 2, what, err, errsz) == -1)
		return -1;
	if ((v = json_object_get(o, "timeout_ms")) != NULL) {
		if (!json_is_integer(v) || json_integer_value(v) < 1 ||
		    json_integer_value(v) > 3600000) {
			snprintf(err, errsz, "%s: timeout_ms: an integer "
			    "from 1 to 3600000", e->name);
			return -1;
		}
		e->timeout_ms = (uint64_t)json_integer_value(v);
	}
	if (project) {
		if (json_object_get(o, "network") != NULL)
			mcp_config_warn(warn, warnsz, "%s: %s: \"network\" "
			    "ignored: only your own mcp.json grants it\n",
			    e->file, e->name);
		if (json_object_get(o, "read") != NULL)
			mcp_config_warn(warn, warnsz, "%s: %s: \"read\" "
			    "ignored: only your own mcp.json grants paths\n",
			    e->file, e->name);
		if (json_object_get(o, "env") != NULL)
			mcp_config_warn(warn, warnsz, "%s: %s: \"env\" "
			    "ignored: a server's environment comes from your "
			    "own mcp.json only\n", e->file, e->name);
		return 0;
	}
	if ((v = json_object_get(o, "network")) != NULL) {
		if (!json_is_boolean(v)) {
			snprintf(err, errsz, "%s: network: true or false",
			    e->name);
			return -1;
		}
		/* The host's network (mcp_sandbox_policy). */
		e->network = json_is_true(v);
	}
	snprintf(what, sizeof(what), "%s: read", e->name);
	if (mcp_config_strings(json_object_get(o, "read"), e->read, &e->nread,
	    SANDBOX_READ_MAX - 4, what, err, errsz) == -1)
		return -1;
	for (size_t i = 0; i < e->nread; i++)
		if (e->read[i][0] != '/') {
			snprintf(err, errsz, "%s: read: %.200s is not an "
			    "absolute path", e->name, e->read[i]);
			return -1;
		}
	if ((v = json_object_get(o, "env")) != NULL &&
	    mcp_config_env(v, e, err, errsz) == -1)
		return -1;
	return 0;
}

int
mcp_config_parse(struct mcp_config *c, const char *text, size_t len,
    const char *file, int project, char *warn, size_t warnsz, char *err,
    size_t errsz)
{
	json_error_t	 je;
	json_t		*root, *servers, *o;
	const char	*name;
	struct mcp_entry e;
	char		 why[512];
	size_t		 n0 = c->n;

	if ((root = json_loadb(text, len, JSON_REJECT_DUPLICATES, &je)) ==
	    NULL) {
		snprintf(err, errsz, "%s:%d: %s", file, je.line, je.text);
		return -1;
	}
	servers = json_object_get(root, "mcpServers");
	if (servers != NULL && !json_is_object(servers)) {
		snprintf(err, errsz, "%s: \"mcpServers\" is not an object",
		    file);
		json_decref(root);
		return -1;
	}
	json_object_foreach(servers, name, o) {
		if (!mcp_config_name_ok(name)) {
			snprintf(err, errsz, "%s: server name \"%.64s\": 1 to "
			    "%d of [A-Za-z0-9_-], no \"__\"", file, name,
			    MCP_NAME_MAX);
			goto fail;
		}
		if (mcp_config_find(c, name) != NULL) {
			if (project)
				mcp_config_warn(warn, warnsz, "%s: %s: "
				    "ignored: your own mcp.json declares a "
				    "server of that name\n", file, name);
			continue;
		}
		memset(&e, 0, sizeof(e));
		e.name = xstrdup(name);
		e.file = xstrdup(file);
		e.project = project;
		if (mcp_config_entry(&e, o, project, warn, warnsz, why,
		    sizeof(why)) == -1) {
			snprintf(err, errsz, "%s: %s", file, why);
			mcp_entry_free(&e);
			goto fail;
		}
		c->v = xreallocarray(c->v, c->n + 1, sizeof(*c->v));
		c->v[c->n++] = e;
	}
	json_decref(root);
	return 0;
fail:
	while (c->n > n0)
		mcp_entry_free(&c->v[--c->n]);
	json_decref(root);
	return -1;
}

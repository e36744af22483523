/*
 * The tool table: one place says what each tool takes, so the schema the
 * model sees, the validation the agent applies and the worker's parsing
 * cannot drift apart. Descriptions are short on purpose: every byte here is
 * sent with every call of every agent that has the tool.
 */
#include <stdio.h>
#include <stdlib.h>
#include <ctype.h>
#include <string.h>

#include <jansson.h>

#include "agent/tooldef.h"
#include "agent/tooldef_testapi.h"

#define TOOLDEF_MAX_ARGS	(8u * 1024 * 1024)

static const struct tooldef_param read_params[] = {
	{ "path", TOOLDEF_STRING, 1,
	    "File path, relative to the workspace", NULL },
	{ "offset", TOOLDEF_INTEGER, 0, "First line to read, 1-based", NULL },
	{ "limit", TOOLDEF_INTEGER, 0,
	    "Maximum lines to read (default 2000)", NULL },
};
static const struct tooldef_param write_params[] = {
	{ "path", TOOLDEF_STRING, 1,
	    "File path, relative to the workspace", NULL },
	{ "content", TOOLDEF_STRING, 1, "The whole new content", NULL },
};
static const struct tooldef_param edit_params[] = {
	{ "path", TOOLDEF_STRING, 1,
	    "File path, relative to the workspace", NULL },
	{ "old_string", TOOLDEF_STRING, 1, "Exact text to replace", NULL },
	{ "new_string", TOOLDEF_STRING, 1, "Replacement text", NULL },
	{ "replace_all", TOOLDEF_BOOLEAN, 0,
	    "Replace every occurrence (default: old_string must occur once)",
	    NULL },
};
static const struct tooldef_param list_params[] = {
	{ "path", TOOLDEF_STRING, 0,
	    "Directory (default: the workspace root)", NULL },
};
static const struct tooldef_param glob_params[] = {
	{ "pattern", TOOLDEF_STRING, 1,
	    "Glob, ** matches any depth (e.g. src/**/*.c)", NULL },
	{ "path", TOOLDEF_STRING, 0,
	    "Directory to search from (default: root)", NULL },
	{ "include_ignored", TOOLDEF_BOOLEAN, 0,
	    "Also files .gitignore excludes (default false)", NULL },
};
static const struct tooldef_param grep_params[] = {
	{ "pattern", TOOLDEF_STRING, 1, "PCRE2 regular expression", NULL },
	{ "path", TOOLDEF_STRING, 0,
	    "File or directory (default: root)", NULL },
	{ "include", TOOLDEF_STRING, 0,
	    "Only files matching these globs, comma-separated (e.g. *.c,*.h)",
	    NULL },
	{ "exclude", TOOLDEF_STRING, 0,
	    "Skip files matching these globs, comma-separated", NULL },
	{ "ignore_case", TOOLDEF_BOOLEAN, 0, "Case-insensitive match", NULL },
	{ "max_results", TOOLDEF_INTEGER, 0,
	    "Stop after this many matching lines (default 500)", NULL },
	{ "include_ignored", TOOLDEF_BOOLEAN, 0,
	    "Also files .gitignore excludes (default false)", NULL },
};
static const struct tooldef_param bash_params[] = {
	{ "command", TOOLDEF_STRING, 1,
	    "Shell command, run with /bin/sh -c in the workspace", NULL },
	{ "timeout_ms", TOOLDEF_INTEGER, 0,
	    "Kill it after this many ms (default and maximum 120000)", NULL },
};
static const struct tooldef_param todo_params[] = {
	{ "todos", TOOLDEF_ARRAY, 1,
	    "The whole task list (replaces the previous one)",
	    "{\"type\":\"object\",\"properties\":{"
	    "\"content\":{\"type\":\"string\"},"
	    "\"status\":{\"type\":\"string\",\"enum\":"
	    "[\"pending\",\"in_progress\",\"completed\"]}},"
	    "\"required\":[\"content\",\"status\"]}" },
};
static const struct tooldef_param note_params[] = {
	{ "text", TOOLDEF_STRING, 1,
	    "A fact worth keeping when old context is dropped", NULL },
};
static const struct tooldef_param plan_execute_params[] = {
	{ "task", TOOLDEF_STRING, 1, "The task to plan and run", NULL },
};
static const struct tooldef_param parallel_explore_params[] = {
	{ "task", TOOLDEF_STRING, 1, "What it is for", NULL },
	{ "aspects", TOOLDEF_ARRAY, 1, "One read-only agent each",
	    "{\"type\":\"string\"}" },
};
static const struct tooldef_param sequential_delegate_params[] = {
	{ "steps", TOOLDEF_ARRAY, 1,
	    "Subtasks, in order",
	    "{\"type\":\"object\",\"properties\":{"
	    "\"task\":{\"type\":\"string\"},"
	    "\"profile\":{\"type\":\"string\"}},"
	    "\"required\":[\"task\"]}" },
};
static const struct tooldef_param complete_params[] = {
	{ "result", TOOLDEF_STRING, 1,
	    "The final answer or report of the task", NULL },
};
static const struct tooldef_param fail_params[] = {
	{ "reason", TOOLDEF_STRING, 1, "Why the task cannot be done", NULL },
};
static const struct tooldef_param delegate_params[] = {
	{ "task", TOOLDEF_STRING, 1, "The subtask, self-contained", NULL },
	{ "profile", TOOLDEF_STRING, 0,
	    "explore, plan, review, test, general or a user profile "
	    "(default general)",
	    NULL },
	{ "inherit_context", TOOLDEF_BOOLEAN, 0,
	    "Give the subagent the summaries of its ancestors", NULL },
	{ "tool_filter", TOOLDEF_ARRAY, 0,
	    "Only these of the profile's tools (e.g. [\"read\",\"edit\"]: "
	    "no bash, so no program runs)", "{\"type\":\"string\"}" },
};

#define P(a)	a, sizeof(a) / sizeof((a)[0])

static const struct tooldef tooldef_table[] = {
	{ "read", "Read a text file with line numbers.", P(read_params),
	    TOOLDEF_WORKER, 1, 0, 0 },
	{ "write",
	    "Create or overwrite a file (parent directories are created).",
	    P(write_params), TOOLDEF_WORKER, 0, 1, 0 },
	{ "edit", "Replace exact text in a file.", P(edit_params),
	    TOOLDEF_WORKER, 0, 1, 0 },
	{ "list", "List a directory.", P(list_params),
	    TOOLDEF_WORKER, 1, 0, 0 },
	{ "glob", "Find files by name pattern.", P(glob_params),
	    TOOLDEF_WORKER, 1, 0, 0 },
	{ "grep", "Search file contents; prints file:line:text.",
	    P(grep_params), TOOLDEF_WORKER, 1, 0, 0 },
	{ "bash", "Run a shell command; prints output and exit status.",
	    P(bash_params), TOOLDEF_WORKER, 0, 1, 1 },
	{ "todo", "Set your task list.", P(todo_params),
	    TOOLDEF_AGENT, 0, 0, 0 },
	{ "note", "Keep a note across context compaction.", P(note_params),
	    TOOLDEF_AGENT, 0, 0, 0 },
	{ "complete", "Finish the task with its result.", P(complete_params),
	    TOOLDEF_AGENT, 0, 0, 0 },
	{ "fail", "Give up on the task, saying why.", P(fail_params),
	    TOOLDEF_AGENT, 0, 0, 0 },
	{ "delegate", "Run a subtask in a new subagent; returns its result.",
	    P(delegate_params), TOOLDEF_DELEGATE, 1, 0, 0 },
	{ "plan_execute", "A plan agent's steps (depends_on) run as a DAG, "
	    "then a synthesis.",
	    P(plan_execute_params), TOOLDEF_COMPOSE, 1, 0, 0 },
	{ "parallel_explore", "Explore aspects in parallel; merged findings.",
	    P(parallel_explore_params), TOOLDEF_COMPOSE, 1, 0, 0 },
	{ "sequential_delegate", "Subtasks in order, each from the previous "
	    "one's summary.",
	    P(sequential_delegate_params), TOOLDEF_COMPOSE, 1, 0, 0 },
};

#define TOOLDEF_COUNT	(sizeof(tooldef_table) / sizeof(tooldef_table[0]))

/* Names users write in profile files, mapped to ours. */
static const struct {
	const char	*alias;
	const char	*name;
} tooldef_aliases[] = {
	{ "Read", "read" }, { "Write", "write" }, { "Edit", "edit" },
	{ "MultiEdit", "edit" }, { "LS", "list" }, { "Glob", "glob" },
	{ "Grep", "grep" }, { "Bash", "bash" }, { "TodoWrite", "todo" },
	{ "Task", "delegate" }, { "Agent", "delegate" },
};

const struct tooldef *
tooldef_find(const char *name)
{
	size_t	i;

	if (name == NULL)
		return NULL;
	for (i = 0; i < TOOLDEF_COUNT; i++)
		if (strcmp(tooldef_table[i].name, name) == 0)
			return &tooldef_table[i];
	return NULL;
}

const struct tooldef *
tooldef_at(size_t i)
{
	return i < TOOLDEF_COUNT ? &tooldef_table[i] : NULL;
}

/*
 * An MCP server's tools as a profile names them: "mcp__SERVER" (all of
 * them) or "mcp__SERVER__TOOL", [A-Za-z0-9_-], at most 64 bytes. Kept for
 * the life of the process (profiles hold canonical names as static
 * strings), TOOLDEF_MCP_NAMES at most.
 */
#define TOOLDEF_MCP_NAMES	256

static const char *
tooldef_mcp(const char *name)
{
	static char	*names[TOOLDEF_MCP_NAMES];
	static size_t	 n;
	size_t		 i, len;

	if (strncmp(name, "mcp__", 5) != 0 || (len = strlen(name)) <= 5 ||
	    len > 64 || name[5] == '_' || name[len - 1] == '_')
		return NULL;
	for (i = 5; i < len; i++)
		if (!isalnum((unsigned char)name[i]) && name[i] != '_' &&
		    name[i] != '-')
			return NULL;
	for (i = 0; i < n; i++)
		if (strcmp(names[i], name) == 0)
			return names[i];
	if (n == TOOLDEF_MCP_NAMES || (names[n] = strdup(name)) == NULL)
		return NULL;
	return names[n++];
}

const char *
tooldef_canonical(const char *name)
{
	const struct tooldef	*t;
	size_t			 i;

	if ((t = tooldef_find(name)) != NULL)
		return t->name;
	if (strncmp(name, "mcp__", 5) == 0)
		return tooldef_mcp(name);
	for (i = 0; i < sizeof(tooldef_aliases) / sizeof(tooldef_aliases[0]);
	    i++)
		if (strcmp(tooldef_aliases[i].alias, name) == 0)
			return tooldef_aliases[i].name;
	return NULL;
}

static const char *
tooldef_type_name(enum tooldef_type type)
{
	switch (type) {
	case TOOLDEF_STRING:
		return "string";
	case TOOLDEF_INTEGER:
		return "integer";
	case TOOLDEF_BOOLEAN:
		return "boolean";
	case TOOLDEF_ARRAY:
		return "array";
	}
	return "?";
}

static json_t *
tooldef_schema_json(const struct tooldef *t)
{
	json_t		*schema, *props, *req, *p, *items;
	size_t		 i;

	schema = json_object();
	props = json_object();
	req = json_array();
	if (schema == NULL || props == NULL || req == NULL)
		goto fail;
	for (i = 0; i < t->nparams; i++) {
		const struct tooldef_param *tp = &t->params[i];

		if ((p = json_object()) == NULL ||
		    json_object_set_new(props, tp->name, p) == -1)
			goto fail;
		json_object_set_new(p, "type",
		    json_string(tooldef_type_name(tp->type)));
		json_object_set_new(p, "description",
		    json_string(tp->description));
		if (tp->items != NULL) {
			if ((items = json_loads(tp->items, 0, NULL)) == NULL)
				goto fail;
			json_object_set_new(p, "items", items);
		}
		if (tp->required)
			json_array_append_new(req, json_string(tp->name));
	}
	json_object_set_new(schema, "type", json_string("object"));
	json_object_set_new(schema, "properties", props);
	json_object_set_new(schema, "required", req);
	return schema;
 fail:
	json_decref(schema);
	json_decref(props);
	json_decref(req);
	return NULL;
}

char *
tooldef_schema(const struct tooldef *t)
{
	json_t	*schema;
	char	*s;

	if ((schema = tooldef_schema_json(t)) == NULL)
		return NULL;
	s = json_dumps(schema, JSON_COMPACT | JSON_PRESERVE_ORDER);
	json_decref(schema);
	return s;
}

char *
tooldef_wire(const struct tooldef *t)
{
	json_t	*w, *f, *schema;
	char	*s = NULL;

	if ((schema = tooldef_schema_json(t)) == NULL)
		return NULL;
	w = json_object();
	f = json_object();
	if (w == NULL || f == NULL) {
		json_decref(schema);
		goto out;
	}
	json_object_set_new(f, "name", json_string(t->name));
	json_object_set_new(f, "description", json_string(t->description));
	json_object_set_new(f, "parameters", schema);
	json_object_set_new(w, "type", json_string("function"));
	json_object_set(w, "function", f);
	s = json_dumps(w, JSON_COMPACT | JSON_PRESERVE_ORDER);
 out:
	json_decref(w);
	json_decref(f);
	return s;
}

static int
tooldef_type_ok(enum tooldef_type type, const json_t *v)
{
	switch (type) {
	case TOOLDEF_STRING:
		return json_is_string(v);
	case TOOLDEF_INTEGER:
		return json_is_integer(v);
	case TOOLDEF_BOOLEAN:
		return json_is_boolean(v);
	case TOOLDEF_ARRAY:
		return json_is_array(v);
	}
	return 0;
}

static const char *
tooldef_json_type_name(const json_t *v)
{
	switch (json_typeof(v)) {
	case JSON_OBJECT:
		return "an object";
	case JSON_ARRAY:
		return "an array";
	case JSON_STRING:
		return "a string";
	case JSON_INTEGER:
		return "an integer";
	case JSON_REAL:
		return "a number with a fraction";
	case JSON_TRUE:
	case JSON_FALSE:
		return "a boolean";
	case JSON_NULL:
		return "null";
	}
	return "?";
}

/* Print "a, b, c" of t's parameter names for error messages. */
static void
tooldef_param_names(const struct tooldef *t, char *dst, size_t dstsz)
{
	size_t	i;

	dst[0] = '\0';
	for (i = 0; i < t->nparams; i++) {
		if (i > 0)
			strlcat(dst, ", ", dstsz);
		strlcat(dst, t->params[i].name, dstsz);
	}
}

int
tooldef_validate(const struct tooldef *t, const char *args, char *err,
    size_t errlen)
{
	json_t		*root = NULL, *v;
	json_error_t	 jerr;
	const char	*key;
	char		 names[256];
	size_t		 i, len;
	int		 rc = -1;

	len = args == NULL ? 0 : strlen(args);
	if (len > TOOLDEF_MAX_ARGS) {
		snprintf(err, errlen, "%s: arguments too large (%zu bytes, "
		    "limit %u)", t->name, len, TOOLDEF_MAX_ARGS);
		return -1;
	}
	/* Some models send "" for a call without arguments. */
	if (len == 0 || strspn(args, " \t\r\n") == len)
		root = json_object();
	else if ((root = json_loadb(args, len, 0,
	    &jerr)) == NULL) {
		snprintf(err, errlen, "%s: arguments are not valid JSON "
		    "(%s at character %d); send one JSON object", t->name,
		    jerr.text, jerr.position);
		return -1;
	}
	if (!json_is_object(root)) {
		snprintf(err, errlen, "%s: arguments must be a JSON object, "
		    "not %s", t->name, tooldef_json_type_name(root));
		goto out;
	}
	tooldef_param_names(t, names, sizeof(names));
	for (i = 0; i < t->nparams; i++) {
		const struct tooldef_param *tp = &t->params[i];

		v = json_object_get(root, tp->name);
		if (v == NULL || json_is_null(v)) {
			if (!tp->required)
				continue;
			snprintf(err, errlen, "%s: missing required field "
			    "\"%s\" (%s)", t->name, tp->name,
			    tooldef_type_name(tp->type));
			goto out;
		}
		if (!tooldef_type_ok(tp->type, v)) {
			snprintf(err, errlen, "%s: field \"%s\" must be %s %s, "
			    "not %s", t->name, tp->name,
			    tp->type == TOOLDEF_INTEGER ? "an" : "a",
			    tooldef_type_name(tp->type),
			    tooldef_json_type_name(v));
			goto out;
		}
	}
	json_object_foreach(root, key, v) {
		for (i = 0; i < t->nparams; i++)
			if (strcmp(t->params[i].name, key) == 0)
				break;
		if (i == t->nparams) {
			snprintf(err, errlen, "%s: unknown field \"%.64s\"; "
			    "fields are: %s", t->name, key,
			    t->nparams ? names : "(none)");
			goto out;
		}
	}
	rc = 0;
 out:
	json_decref(root);
	return rc;
}

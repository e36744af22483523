/*
 * The tools `warren mcp` offers: one table gives each tool's description,
 * its arguments (from which both tools/list's JSON Schema and the strict
 * check of a call's arguments are made, so the two cannot drift), and the
 * functions that start and answer a call.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cmd.h"
#include "cli/mcp.h"

#define WS_HELP	"The directory to work in (default: the directory warren " \
	"mcp was started in). It must lie under the directories the server " \
	"was started with (--root)."
#define RUN_HELP "A run's id, as `run` or `runs` gave it."

const struct mcp_tool mcp_tools[] = {
	{ "run", "Run a task with warren: an orchestrator agent and "
	  "sandboxed subagents (or one agent of the given profile) work on "
	  "the workspace. Their changes go to a copy-on-write layer, not the "
	  "workspace: review them with `diff` and write them with `apply`. "
	  "Returns the run's answer, its id, how it ended and the files its "
	  "layer changed. Takes minutes; progress is reported while it runs.",
	  { { "task", MCP_ARG_STR, 1, "What to do, in plain words, with all "
	      "the context the agents need (they see only this and the "
	      "workspace)." },
	    { "workspace", MCP_ARG_STR, 0, WS_HELP },
	    { "profile", MCP_ARG_STR, 0, "The root agent's profile (default "
	      "orchestrator, which delegates to subagents; explore reads "
	      "only, general reads and writes)." },
	    { "schema", MCP_ARG_OBJ, 0, "A JSON Schema the answer must match "
	      "(a JSON value); it is returned as structured content too." } },
	  mcp_run_start, mcp_run_done },
	{ "diff", "Show what a run changed in its copy-on-write layer, as a "
	  "unified diff against the workspace as it is now. Control "
	  "characters are escaped.",
	  { { "run", MCP_ARG_ID, 1, RUN_HELP } },
	  mcp_cmd_diff, mcp_cmd_done },
	{ "apply", "Write a run's changes into its workspace (files that run "
	  "code on the host, such as git hooks or Makefiles, are held back "
	  "for the user). Only if the user started the server with "
	  "--allow-apply; otherwise ask the user to review and apply.",
	  { { "run", MCP_ARG_ID, 1, RUN_HELP },
	    { "paths", MCP_ARG_STRS, 0, "Only the changes under these paths, "
	      "relative to the workspace." } },
	  mcp_cmd_apply, mcp_cmd_done },
	{ "runs", "List recent runs of a workspace as JSON: id, task, "
	  "status, tokens, layer.",
	  { { "workspace", MCP_ARG_STR, 0, WS_HELP },
	    { "limit", MCP_ARG_ID, 0, "The newest this many runs." } },
	  mcp_cmd_runs, mcp_cmd_done },
	{ "show", "Show one run as JSON: its task, status, result and the "
	  "tree of its agents.",
	  { { "run", MCP_ARG_ID, 1, RUN_HELP } },
	  mcp_cmd_show, mcp_cmd_done },
	{ "queue_add", "Add a task to warren's batch queue (the user's "
	  "default queue), to be run later by `warren queue work`. Returns "
	  "the job's id.",
	  { { "task", MCP_ARG_STR, 1, "What to do, in plain words." },
	    { "workspace", MCP_ARG_STR, 0, WS_HELP },
	    { "profile", MCP_ARG_STR, 0, "The root agent's profile." },
	    { "schema", MCP_ARG_OBJ, 0, "A JSON Schema the answer must "
	      "match." },
	    { "key", MCP_ARG_STR, 0, "A key: a job with a key already queued "
	      "is not added again." } },
	  mcp_cmd_queue_add, mcp_cmd_done },
	{ "queue_status", "A queued job's status, attempts and result as "
	  "JSON; without a job, the queue's counts by status.",
	  { { "job", MCP_ARG_ID, 0, "The job's id, as queue_add gave it." } },
	  mcp_cmd_queue_status, mcp_cmd_queue_status_done },
};
const size_t mcp_ntools = sizeof(mcp_tools) / sizeof(mcp_tools[0]);

const struct mcp_tool *
mcp_tool_find(const char *name)
{
	size_t	i;

	for (i = 0; i < mcp_ntools; i++)
		if (strcmp(mcp_tools[i].name, name) == 0)
			return &mcp_tools[i];
	return NULL;
}

static json_t *
mcp_tool_arg_schema(const struct mcp_arg *a)
{
	switch (a->type) {
	case MCP_ARG_STR:
		return json_pack("{s:s, s:i, s:s}", "type", "string",
		    "minLength", 1, "description", a->help);
	case MCP_ARG_ID:
		return json_pack("{s:s, s:i, s:s}", "type", "integer",
		    "minimum", 1, "description", a->help);
	case MCP_ARG_OBJ:
		return json_pack("{s:s, s:s}", "type", "object",
		    "description", a->help);
	case MCP_ARG_STRS:
		return json_pack("{s:s, s:{s:s, s:i}, s:s}", "type", "array",
		    "items", "type", "string", "minLength", 1, "description",
		    a->help);
	}
	return NULL;
}

static json_t *
mcp_tool_schema(const struct mcp_tool *t)
{
	json_t		*props = json_object(), *req = json_array();
	const struct mcp_arg *a;

	for (a = t->args; a < t->args + MCP_TOOL_ARGS_MAX && a->name; a++) {
		json_object_set_new(props, a->name, mcp_tool_arg_schema(a));
		if (a->required)
			json_array_append_new(req, json_string(a->name));
	}
	return json_pack("{s:s, s:o, s:o, s:b}", "type", "object",
	    "properties", props, "required", req, "additionalProperties", 0);
}

json_t *
mcp_tools_list(void)
{
	json_t	*v = json_array();
	size_t	 i;

	for (i = 0; i < mcp_ntools; i++)
		json_array_append_new(v, json_pack("{s:s, s:s, s:o}", "name",
		    mcp_tools[i].name, "description", mcp_tools[i].help,
		    "inputSchema", mcp_tool_schema(&mcp_tools[i])));
	return json_pack("{s:o}", "tools", v);
}

/* A string argument: not empty, no NUL. */
static int
mcp_tool_str(json_t *v)
{
	return json_is_string(v) && json_string_length(v) > 0 &&
	    strlen(json_string_value(v)) == json_string_length(v);
}

static int
mcp_tool_check_one(const struct mcp_arg *a, json_t *v, char *why,
    size_t whysz)
{
	size_t	 i;
	json_t	*e;

	switch (a->type) {
	case MCP_ARG_STR:
		if (mcp_tool_str(v))
			return 0;
		snprintf(why, whysz, "\"%s\" must be a non-empty string",
		    a->name);
		return -1;
	case MCP_ARG_ID:
		if (json_is_integer(v) && json_integer_value(v) >= 1)
			return 0;
		snprintf(why, whysz, "\"%s\" must be an integer of 1 or more",
		    a->name);
		return -1;
	case MCP_ARG_OBJ:
		if (json_is_object(v))
			return 0;
		snprintf(why, whysz, "\"%s\" must be an object", a->name);
		return -1;
	case MCP_ARG_STRS:
		if (!json_is_array(v) || json_array_size(v) > CMD_INCLUDE_MAX) {
			snprintf(why, whysz, "\"%s\" must be an array of at "
			    "most %d strings", a->name, CMD_INCLUDE_MAX);
			return -1;
		}
		json_array_foreach(v, i, e)
			if (!mcp_tool_str(e)) {
				snprintf(why, whysz, "\"%s\"[%zu] must be a "
				    "non-empty string", a->name, i);
				return -1;
			}
		return 0;
	}
	return -1;
}

int
mcp_tool_check(const struct mcp_tool *t, json_t *args, char *why,
    size_t whysz)
{
	const struct mcp_arg	*a;
	const char		*k;
	json_t			*v;
	int			 known;

	json_object_foreach(args, k, v) {
		known = 0;
		for (a = t->args; a < t->args + MCP_TOOL_ARGS_MAX && a->name;
		    a++)
			if (strcmp(a->name, k) == 0)
				known = 1;
		if (!known) {
			snprintf(why, whysz, "tool %s takes no argument "
			    "\"%.64s\"", t->name, k);
			return -1;
		}
	}
	for (a = t->args; a < t->args + MCP_TOOL_ARGS_MAX && a->name; a++) {
		v = json_object_get(args, a->name);
		if (v == NULL && a->required) {
			snprintf(why, whysz, "tool %s needs \"%s\"", t->name,
			    a->name);
			return -1;
		}
		if (v != NULL && mcp_tool_check_one(a, v, why, whysz) == -1)
			return -1;
	}
	return 0;
}

void
mcp_tool_answer(struct mcp_server *s, struct mcp_call *c, const char *text,
    size_t len, int is_error, json_t *structured)
{
	json_t	*r;

	r = json_pack("{s:[{s:s, s:o}], s:b}", "content", "type", "text",
	    "text", mcp_rpc_text(text, len), "isError", is_error);
	if (r != NULL && structured != NULL)
		json_object_set_new(r, "structuredContent", structured);
	else
		json_decref(structured);
	if (!c->cancelled)
		mcp_rpc_result(s, c->id, r);
	else
		json_decref(r);
}

void
mcp_tool_error(struct mcp_server *s, struct mcp_call *c, const char *fmt,
    ...)
{
	char	msg[4096];
	va_list	ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	mcp_tool_answer(s, c, msg, strlen(msg), 1, NULL);
}

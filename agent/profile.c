/*
 * Built-in profiles and what a profile implies: its sandbox (derived from
 * its tools, so a profile cannot ask for write access it does not use) and
 * the tokens its tool schemas cost per call.
 */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "agent/profile.h"
#include "agent/tooldef.h"

#define CTX_APPEND	{ AGENT_CTX_APPEND, 0, 0, 0, 0 }
#define CTX_HIER	{ AGENT_CTX_HIERARCHICAL, 0, 0, 0, 0 }

/*
 * The built-ins, the one table of their facts: what a profile may do
 * (fs_write, exec, delegate) is not written here but derived from its
 * tools (profile_derive, on first use), for the agent and for the
 * sandbox alike (profile_policy: `warren sandbox exec --profile`, the
 * tests of each layer).
 */
static struct profile profile_builtins[] = {
	{ .name = "explore",
	  .description = "Find things in the workspace, read-only",
	  .prompt = "You explore a code base to answer a question. Search "
	  "with glob and grep, read what matters, and report facts with file "
	  "paths and line numbers. You cannot change anything.",
	  .tools = { "glob", "grep", "read", "list" }, .ntools = 4,
	  .builtin = 1, .context = CTX_APPEND, .source = "built-in" },
	{ .name = "plan",
	  .description = "Explore, then write a step-by-step plan",
	  .prompt = "You plan a change. Explore the workspace read-only, then "
	  "return a plan: ordered steps, the files each touches, and how to "
	  "check it. Keep the steps in your task list.",
	  .tools = { "glob", "grep", "read", "list", "todo" }, .ntools = 5,
	  .builtin = 1, .context = CTX_HIER, .source = "built-in" },
	{ .name = "review",
	  .description = "Review code for bugs and risks, read-only",
	  .prompt = "You review code. Read it, look for bugs, unsafe input "
	  "handling, races and missing error paths, and report each finding "
	  "with file, line, severity and a suggested fix.",
	  .tools = { "read", "grep", "glob", "todo" }, .ntools = 4,
	  .builtin = 1, .context = CTX_APPEND, .source = "built-in" },
	{ .name = "test",
	  .description = "Run tests and report failures",
	  .prompt = "You run tests. Find how the project is tested, run the "
	  "tests with bash, and report what passed and what failed with the "
	  "relevant output. Do not change source files.",
	  .tools = { "read", "grep", "glob", "list", "bash" }, .ntools = 5,
	  .builtin = 1, .context = CTX_APPEND, .source = "built-in" },
	{ .name = "general",
	  .description = "Read, change and run anything in the workspace",
	  .prompt = "You carry out a software task in the workspace: read, "
	  "edit, run, check. Delegate a self-contained subtask when that "
	  "helps.",
	  .tools = { "read", "write", "edit", "list", "glob", "grep", "bash",
	    "todo", "delegate" }, .ntools = 9,
	  .builtin = 1, .context = CTX_APPEND, .source = "built-in" },
	{ .name = "orchestrator",
	  .description = "Routes a task to subagents; runs no tool itself",
	  .prompt = "You are the orchestrator. You cannot read or change files "
	  "or run commands yourself: delegate(task, profile, inherit_context) "
	  "each piece of work to a subagent (explore, plan, review and test "
	  "are read-only or test-only; general can change files) and combine "
	  "their results. Independent subtasks can be delegated in one turn; "
	  "they run in parallel. For larger work, compose: plan_execute(task) "
	  "plans steps with dependencies and runs them as a DAG; "
	  "parallel_explore(task, aspects) explores the aspects you name in "
	  "parallel; sequential_delegate(steps) runs steps in order, each "
	  "from the previous one's summary. A failed step comes back to you: "
	  "decide what to do. Finish with complete(result).",
	  .tools = { "delegate", "plan_execute", "parallel_explore",
	    "sequential_delegate" }, .ntools = 4,
	  .builtin = 1, .context = CTX_APPEND, .source = "built-in" },
};

#define PROFILE_NBUILTIN (sizeof(profile_builtins) / sizeof(profile_builtins[0]))

static pthread_once_t	 profile_builtins_once = PTHREAD_ONCE_INIT;

static void
profile_builtins_derive(void)
{
	size_t	i;

	for (i = 0; i < PROFILE_NBUILTIN; i++)
		profile_derive(&profile_builtins[i]);
}

const struct profile *
profile_builtin(const char *name)
{
	size_t	i;

	pthread_once(&profile_builtins_once, profile_builtins_derive);
	for (i = 0; name != NULL && i < PROFILE_NBUILTIN; i++)
		if (strcmp(profile_builtins[i].name, name) == 0)
			return &profile_builtins[i];
	return NULL;
}

const struct profile *
profile_builtin_at(size_t i)
{
	pthread_once(&profile_builtins_once, profile_builtins_derive);
	return i < PROFILE_NBUILTIN ? &profile_builtins[i] : NULL;
}

int
profile_has_tool(const struct profile *p, const char *tool)
{
	size_t	i, len;

	for (i = 0; i < p->ntools; i++) {
		if (strcmp(p->tools[i], tool) == 0)
			return 1;
		/* "mcp__fs" lists every tool of server fs. */
		len = strlen(p->tools[i]);
		if (strncmp(p->tools[i], "mcp__", 5) == 0 &&
		    strstr(p->tools[i] + 5, "__") == NULL &&
		    strncmp(tool, p->tools[i], len) == 0 &&
		    strncmp(tool + len, "__", 2) == 0)
			return 1;
	}
	return 0;
}

static size_t
profile_tool_chars(const char *name)
{
	const struct tooldef	*t;
	char			*w;
	size_t			 n;

	if ((t = tooldef_find(name)) == NULL || (w = tooldef_wire(t)) == NULL)
		return 0;
	n = strlen(w);
	free(w);
	return n;
}

size_t
profile_schema_tokens(const struct profile *p)
{
	size_t	i, chars;

	chars = profile_tool_chars("complete") + profile_tool_chars("fail");
	for (i = 0; i < p->ntools; i++)
		chars += profile_tool_chars(p->tools[i]);
	return chars / 4;
}

void
profile_derive(struct profile *p)
{
	const struct tooldef	*t;
	size_t			 i;

	p->fs_write = p->exec = p->delegate = 0;
	for (i = 0; i < p->ntools; i++) {
		if ((t = tooldef_find(p->tools[i])) == NULL)
			continue;
		p->fs_write |= t->writes && strcmp(t->name, "bash") != 0;
		p->exec |= t->execs;
		p->delegate |= t->where == TOOLDEF_DELEGATE;
	}
	/* bash can write files too: exec implies a writable workspace. */
	p->fs_write |= p->exec;
	if (p->backend != BACKEND_LOOP) {
		p->fs_write = p->exec = 1;
		p->delegate = 0;
	}
}

int
profile_in_worker(const struct profile *p)
{
	const struct tooldef	*t;
	size_t			 i;

	if (p->backend != BACKEND_LOOP)
		return 1;
	for (i = 0; i < p->ntools; i++)
		if (((t = tooldef_find(p->tools[i])) != NULL &&
		    t->where == TOOLDEF_WORKER) ||
		    strncmp(p->tools[i], "mcp__", 5) == 0)
			return 1;
	return 0;
}

int
profile_policy(struct sandbox_policy *sp, const char *name,
    const char *workspace, struct sandbox_error *e)
{
	const struct profile	*p;

	if ((p = profile_builtin(name)) == NULL) {
		memset(e, 0, sizeof(*e));
		e->errnum = ENOENT;
		snprintf(e->msg, sizeof(e->msg), "unknown profile '%s' "
		    "(explore, plan, review, test, general)",
		    name == NULL ? "" : name);
		errno = ENOENT;
		return -1;
	}
	return sandbox_policy_init(sp, p->name, workspace, p->fs_write,
	    p->exec, e);
}

static void
profile_tool_list(const struct profile *p, char *out, size_t outsz)
{
	size_t	i, len;

	*out = '\0';
	for (i = 0; i < p->ntools; i++) {
		len = strlen(out);
		snprintf(out + len, outsz - len, "%s%s", i ? ", " : "",
		    p->tools[i]);
	}
}

static int
profile_narrow_add(struct profile *q, const struct profile *p,
    const char *name, char *err, size_t errsz)
{
	const char	*canon;
	char		 list[256];

	if ((canon = tooldef_canonical(name)) == NULL ||
	    !profile_has_tool(p, canon)) {
		profile_tool_list(p, list, sizeof(list));
		snprintf(err, errsz, "tool_filter: \"%.64s\" is not a tool of "
		    "profile %s (its tools: %s)", name, p->name, list);
		return -1;
	}
	if (!profile_has_tool(q, canon))
		q->tools[q->ntools++] = canon;
	return 0;
}

struct profile *
profile_narrow(const struct profile *p, const char *const *tools, size_t n,
    char *err, size_t errsz)
{
	struct profile	*q;
	size_t		 i;

	if (p->backend != BACKEND_LOOP) {
		snprintf(err, errsz, "tool_filter: profile %s runs the backend "
		    "%s, whose program has its own tools: leave tool_filter "
		    "out", p->name, backend_name(p->backend));
		return NULL;
	}
	if ((q = calloc(1, sizeof(*q))) == NULL)
		goto nomem;
	q->context = p->context;
	q->name = strdup(p->name);
	q->description = strdup(p->description ? p->description : "");
	q->model = p->model ? strdup(p->model) : NULL;
	q->prompt = strdup(p->prompt ? p->prompt : "");
	q->source = strdup(p->source ? p->source : "built-in");
	if (q->name == NULL || q->description == NULL || q->prompt == NULL ||
	    q->source == NULL || (p->model != NULL && q->model == NULL))
		goto nomem;
	for (i = 0; i < n; i++)
		if (profile_narrow_add(q, p, tools[i], err, errsz) == -1) {
			profile_free(q);
			return NULL;
		}
	profile_derive(q);
	return q;
 nomem:
	profile_free(q);
	snprintf(err, errsz, "tool_filter: out of memory");
	return NULL;
}

void
profile_free(struct profile *p)
{
	size_t	i;

	if (p == NULL || p->builtin)
		return;
	free(p->name);
	free(p->description);
	free(p->model);
	free(p->prompt);
	free(p->source);
	free(p->command);
	for (i = 0; i < p->nargs; i++)
		free(p->args[i]);
	free(p->wire);
	free(p);
}

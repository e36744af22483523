/*
 * Profiles: built-ins, the sandbox derived from tools, schema cost, and
 * .warren/agents/NAME.md files, valid and malformed (errors name file and
 * line). Also the tool table's argument validation.
 */
#include <sys/stat.h>

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "agent/profile.h"
#include "agent/profile_testapi.h"
#include "agent/tooldef.h"
#include "common/log.h"

/* What the parser logged (its warnings), for the test to read. */
static char	warned[4096];

static void
warn_hook(enum log_level level, const char *line, void *arg)
{
	size_t	len = strlen(warned);

	(void)level;
	(void)arg;
	snprintf(warned + len, sizeof(warned) - len, "%s\n", line);
}

static int
parse(const char *text, struct profile **p, char *err, size_t errlen)
{
	return profile_parse(text, strlen(text), "agents/x.md", "x", p, err,
	    errlen);
}

static void
test_builtins(void **state)
{
	const struct profile	*p;

	(void)state;
	p = profile_builtin("explore");
	assert_non_null(p);
	assert_int_equal(p->ntools, 4);
	assert_false(p->fs_write);
	assert_false(p->exec);
	p = profile_builtin("test");
	assert_true(p->fs_write);
	assert_true(p->exec);
	p = profile_builtin("general");
	assert_true(p->delegate);
	assert_true(profile_has_tool(p, "edit"));
	p = profile_builtin("orchestrator");
	assert_int_equal(p->ntools, 4);
	assert_string_equal(p->tools[0], "delegate");
	assert_string_equal(p->tools[1], "plan_execute");
	assert_string_equal(p->tools[2], "parallel_explore");
	assert_string_equal(p->tools[3], "sequential_delegate");
	assert_false(p->fs_write);
	assert_null(profile_builtin("nope"));
	/* fewer tools, fewer tokens per call */
	assert_true(profile_schema_tokens(profile_builtin("explore")) * 10 <
	    profile_schema_tokens(profile_builtin("general")) * 6);
	assert_true(profile_schema_tokens(profile_builtin("orchestrator")) <
	    profile_schema_tokens(profile_builtin("explore")));
}

static void
test_parse_valid(void **state)
{
	struct profile	*p;
	char		 err[256];

	(void)state;
	assert_int_equal(parse("---\n"
	    "name: code-reviewer\n"
	    "description: \"Reviews diffs\"\n"
	    "tools: Read, Grep, Glob, TodoWrite\n"
	    "model: gpt-4o-mini\n"
	    "color: blue\n"
	    "---\n"
	    "You review code.\n\nBe strict.\n", &p, err, sizeof(err)), 0);
	assert_string_equal(p->name, "code-reviewer");
	assert_string_equal(p->description, "Reviews diffs");
	assert_string_equal(p->model, "gpt-4o-mini");
	assert_string_equal(p->prompt, "You review code.\n\nBe strict.");
	assert_int_equal(p->ntools, 4);
	assert_string_equal(p->tools[0], "read");
	assert_string_equal(p->tools[3], "todo");
	assert_false(p->fs_write);
	assert_false(p->exec);
	assert_string_equal(p->source, "agents/x.md");
	profile_free(p);

	/* YAML list, our names, context keys, CRLF, no name (file's) */
	assert_int_equal(parse("---\r\n"
	    "tools:\r\n"
	    "  - bash\r\n"
	    "  - Edit\r\n"
	    "  - complete\r\n"
	    "context: hierarchical\r\n"
	    "keep: 6\r\n"
	    "budget: 16000\r\n"
	    "---\r\n", &p, err, sizeof(err)), 0);
	assert_string_equal(p->name, "x");
	assert_int_equal(p->ntools, 2);
	assert_true(p->exec);
	assert_true(p->fs_write);
	assert_int_equal(p->context.strategy, AGENT_CTX_HIERARCHICAL);
	assert_int_equal(p->context.keep_exchanges, 6);
	assert_int_equal(p->context.budget_tokens, 16000);
	assert_null(p->model);
	profile_free(p);

	/* no tools line: read-only explore tools, never more */
	assert_int_equal(parse("---\nname: q\n---\nbody", &p, err,
	    sizeof(err)), 0);
	assert_int_equal(p->ntools, 4);
	assert_false(p->fs_write);
	profile_free(p);

	/* comments, as in docs/agent.md's example */
	assert_int_equal(parse("---\n"
	    "name: c   # the name\n"
	    "description: \"say #1\"  # quoted # stays\n"
	    "tools: Read, Grep # or a list\n"
	    "tools:\n"
	    "  - Glob   # one more\n"
	    "# a whole comment line\n"
	    "---\n", &p, err, sizeof(err)), 0);
	assert_string_equal(p->name, "c");
	assert_string_equal(p->description, "say #1");
	assert_int_equal(p->ntools, 3);
	assert_string_equal(p->tools[2], "glob");
	profile_free(p);

	/* flow list */
	assert_int_equal(parse("---\nname: f\ntools: [Write, LS]\n---\n", &p,
	    err, sizeof(err)), 0);
	assert_int_equal(p->ntools, 2);
	assert_true(p->fs_write);
	assert_false(p->exec);
	profile_free(p);
}

static void
expect_error(const char *text, const char *what)
{
	struct profile	*p = NULL;
	char		 err[512];

	assert_int_equal(parse(text, &p, err, sizeof(err)), -1);
	assert_null(p);
	if (strstr(err, what) == NULL)
		fail_msg("error \"%s\" lacks \"%s\"", err, what);
}

static void
test_parse_malformed(void **state)
{
	(void)state;
	expect_error("", "agents/x.md:");
	expect_error("name: x\n", "agents/x.md:1: expected a \"---\" line");
	expect_error("---\nname: x\n", "no closing \"---\"");
	expect_error("---\nname: x\ntols: Read\n---\n",
	    "agents/x.md:3: unknown key \"tols\"");
	expect_error("---\nname: Bad Name\n---\n", "agents/x.md:2: name");
	expect_error("---\nname: x\njust words\n---\n",
	    "agents/x.md:3: expected \"key: value\"");
	expect_error("---\nname: x\nkeep: lots\n---\n", "agents/x.md:3:");
	expect_error("---\nname: x\ncontext: magic\n---\n",
	    "agents/x.md:3: context");
	/* Quoted file text is escaped: the message reaches a terminal. */
	expect_error("---\nname: x\nt\x1b]0;x\x07: 1\n---\n",
	    "unknown key \"t\\x1b]0;x\\x07\"");
	expect_error("---\nname: x\ncontext: \x9b" "31m\n---\n",
	    "context \"\\x9b31m\"");
}

/*
 * backend: command with its program, its arguments in each form a file
 * may write them, and its wire; what each backend needs and refuses.
 */
static void
test_parse_backend(void **state)
{
	struct profile	*p = NULL;
	char		 err[512];

	(void)state;
	if (parse("---\nname: x\nbackend: command\ncommand: /opt/a/agent\n"
	    "args: [\"--task\", \"{task}\", 'a b', --url={base_url}]\n"
	    "wire: responses\n---\nBe brief.\n", &p, err, sizeof(err)) == -1)
		fail_msg("%s", err);
	assert_int_equal(p->backend, BACKEND_COMMAND);
	assert_string_equal(p->command, "/opt/a/agent");
	assert_int_equal(p->nargs, 4);
	assert_string_equal(p->args[0], "--task");
	assert_string_equal(p->args[1], "{task}");
	assert_string_equal(p->args[2], "a b");
	assert_string_equal(p->args[3], "--url={base_url}");
	assert_null(p->args[4]);
	assert_string_equal(p->wire, "responses");
	/* Its program writes and runs programs: the sandbox follows; it
	 * has none of warren's tools and delegates nothing. */
	assert_int_equal(p->ntools, 0);
	assert_true(p->fs_write && p->exec && !p->delegate);
	assert_true(profile_in_worker(p));
	/* A delegate call's tool_filter does not narrow a program. */
	{
		const char	*tools[] = { "read" };

		assert_null(profile_narrow(p, tools, 1, err, sizeof(err)));
		assert_non_null(strstr(err, "tool_filter: profile x runs the "
		    "backend command"));
	}
	profile_free(p);
	/* A YAML list and a one-line form split at blanks. */
	if (parse("---\nname: x\nbackend: command\ncommand: agent\nargs:\n"
	    "  - -p\n  - \"{task}\"\n---\n", &p, err, sizeof(err)) == -1)
		fail_msg("%s", err);
	assert_int_equal(p->nargs, 2);
	assert_string_equal(p->args[0], "-p");
	assert_string_equal(p->args[1], "{task}");
	profile_free(p);
	if (parse("---\nname: x\nbackend: command\ncommand: agent\n"
	    "args: run \"{task}\" --yes\n---\n", &p, err, sizeof(err)) == -1)
		fail_msg("%s", err);
	assert_int_equal(p->nargs, 3);
	assert_string_equal(p->args[1], "{task}");
	profile_free(p);
	if (parse("---\nname: x\nbackend: claude-code\n---\n", &p, err,
	    sizeof(err)) == -1)
		fail_msg("%s", err);
	assert_int_equal(p->backend, BACKEND_CLAUDE_CODE);
	assert_int_equal(p->ntools, 0);
	profile_free(p);
	expect_error("---\nname: x\nbackend: gemini\n---\n",
	    "agents/x.md:3: backend \"gemini\" must be claude-code, codex, "
	    "command or loop");
	expect_error("---\nname: x\nbackend: command\n---\n",
	    "backend: command needs \"command: PROGRAM\"");
	expect_error("---\nname: x\nbackend: command\ncommand: ./agent\n"
	    "---\n", "agents/x.md:4: command \"./agent\" must be an absolute "
	    "path or a program name");
	expect_error("---\nname: x\nbackend: command\ncommand: a\n"
	    "tools: Read\n---\n", "tools: does not apply to a backend");
	expect_error("---\nname: x\ncommand: /bin/a\n---\n",
	    "command, args and wire are for \"backend: command\"");
	expect_error("---\nname: x\nbackend: codex\nargs: [a]\n---\n",
	    "args and wire are for \"backend: command\"");
	expect_error("---\nname: x\nbackend: command\ncommand: a\n"
	    "wire: grpc\n---\n", "wire \"grpc\" must be anthropic");
	expect_error("---\nname: x\nbackend: command\ncommand: a\n"
	    "args: \"open\n---\n", "args: a quote is not closed");
}

/* p parsed from text with one warning containing what; its tools. */
static struct profile *
expect_warning(const char *text, const char *what)
{
	struct profile	*p = NULL;
	char		 err[512];

	warned[0] = '\0';
	log_sethook(warn_hook, NULL);
	if (parse(text, &p, err, sizeof(err)) == -1)
		fail_msg("%s", err);
	log_sethook(NULL, NULL);
	if (strstr(warned, what) == NULL)
		fail_msg("warnings \"%s\" lack \"%s\"", warned, what);
	return p;
}

/*
 * A tool warren lacks (a Claude Code file's WebFetch) is a warning naming
 * file and line; the file's other tools load, and so does the file.
 */
static void
test_parse_unknown_tool(void **state)
{
	struct profile	*p;

	(void)state;
	p = expect_warning("---\nname: x\ntools: Read, WebFetch, Bash\n---\n",
	    "agents/x.md:3: unknown tool \"WebFetch\" left out");
	assert_int_equal(p->ntools, 2);
	assert_true(profile_has_tool(p, "read"));
	assert_true(profile_has_tool(p, "bash"));
	assert_true(p->exec);
	profile_free(p);
	p = expect_warning("---\nname: x\ntools:\n  - Read\n  - Teleport\n"
	    "---\n", "agents/x.md:5: unknown tool \"Teleport\"");
	assert_int_equal(p->ntools, 1);
	profile_free(p);
	/* Quoted file text is escaped: the warning reaches a terminal. */
	p = expect_warning("---\nname: x\ntools: R\x1b[2Jead\n---\n",
	    "unknown tool \"R\\x1b[2Jead\"");
	assert_int_equal(p->ntools, 0);
	assert_false(p->fs_write);
	profile_free(p);
}

/* tool_filter: a subset of the profile's tools, its sandbox derived from
 * them (general without bash runs no program); a tool outside the
 * profile is refused, naming it. */
static void
test_narrow(void **state)
{
	const char *const	 nobash[] = { "read", "Edit", "write" };
	const char *const	 outside[] = { "read", "bash" };
	struct profile		*q;
	char			 err[512];

	(void)state;
	q = profile_narrow(profile_builtin("general"), nobash, 3, err,
	    sizeof(err));
	assert_non_null(q);
	assert_int_equal(q->ntools, 3);
	assert_true(profile_has_tool(q, "edit"));
	assert_true(q->fs_write);
	assert_false(q->exec);
	assert_false(q->delegate);
	assert_string_equal(q->name, "general");
	profile_free(q);
	q = profile_narrow(profile_builtin("explore"), outside, 2, err,
	    sizeof(err));
	assert_null(q);
	assert_non_null(strstr(err, "\"bash\" is not a tool of profile "
	    "explore"));
	q = profile_narrow(profile_builtin("test"), NULL, 0, err,
	    sizeof(err));
	assert_int_equal(q->ntools, 0);
	assert_false(q->exec);
	assert_false(q->fs_write);
	profile_free(q);
}

/* MCP tools in a profile: mcp__fs names all of fs's tools, a tool_filter
 * keeps only the ones named, and a name of another server is refused. */
static void
test_mcp_tools(void **state)
{
	static const char text[] = "---\nname: m\ndescription: d\ntools: "
	    "mcp__fs, mcp__gh__search, Read\n---\nbody\n";
	const char *const	 one[] = { "mcp__fs__read_text_file" };
	const char *const	 other[] = { "mcp__gh__create_issue" };
	struct profile		*p = NULL, *q;
	char			 err[512];

	(void)state;
	assert_int_equal(profile_parse(text, sizeof(text) - 1, "m.md", "m",
	    &p, err, sizeof(err)), 0);
	assert_int_equal(p->ntools, 3);
	assert_true(profile_has_tool(p, "mcp__fs__read_text_file"));
	assert_true(profile_has_tool(p, "mcp__gh__search"));
	assert_false(profile_has_tool(p, "mcp__gh__create_issue"));
	assert_false(profile_has_tool(p, "mcp__fsx__read"));
	/* MCP tools run in the server's sandbox: no exec of the agent's. */
	assert_false(p->exec);
	assert_false(p->fs_write);
	assert_true(profile_in_worker(p));
	q = profile_narrow(p, one, 1, err, sizeof(err));
	assert_non_null(q);
	assert_int_equal(q->ntools, 1);
	assert_string_equal(q->tools[0], "mcp__fs__read_text_file");
	assert_false(profile_has_tool(q, "mcp__fs__write_file"));
	profile_free(q);
	assert_null(profile_narrow(p, other, 1, err, sizeof(err)));
	assert_non_null(strstr(err, "\"mcp__gh__create_issue\" is not a "
	    "tool of profile m"));
	/* Not a tool name: a space, a trailing _, no server. */
	assert_null(tooldef_canonical("mcp__a b"));
	assert_null(tooldef_canonical("mcp__fs_"));
	assert_null(tooldef_canonical("mcp__"));
	profile_free(p);
}

/* A profile file name with control bytes is quoted escaped. */
static void
test_parse_hostile_name(void **state)
{
	struct profile	*p = NULL;
	char		 err[512];

	(void)state;
	assert_int_equal(profile_parse("nope", 4, "agents/\x1b" "[31m.md", "x",
	    &p, err, sizeof(err)), -1);
	assert_null(strchr(err, '\x1b'));
	assert_non_null(strstr(err, "agents/\\x1b[31m.md:1:"));
}

static void
test_parse_nul(void **state)
{
	static const char	 text[] = "---\nname: x\n\0\n---\n";
	struct profile		*p = NULL;
	char			 err[256];

	(void)state;
	assert_int_equal(profile_parse(text, sizeof(text) - 1, "f.md", "f", &p,
	    err, sizeof(err)), -1);
	assert_non_null(strstr(err, "NUL"));
}

static void
write_file(const char *path, const char *text)
{
	FILE	*f = fopen(path, "w");

	assert_non_null(f);
	fputs(text, f);
	fclose(f);
}

static void
test_set_load(void **state)
{
	struct profile_set	 set;
	const struct profile	*p;
	char			 dir[] = "/tmp/warren-prof-XXXXXX", path[512];
	char			 agents[256], err[512];

	(void)state;
	assert_non_null(mkdtemp(dir));
	snprintf(agents, sizeof(agents), "%s/agents", dir);
	/* no agents directory: built-ins only */
	assert_int_equal(profile_set_load(&set, agents, err, sizeof(err)), 0);
	assert_int_equal(set.n, 6);
	profile_set_free(&set);
	assert_int_equal(profile_set_load(&set, NULL, err, sizeof(err)), 0);
	assert_int_equal(set.n, 6);
	profile_set_free(&set);

	mkdir(agents, 0755);
	snprintf(path, sizeof(path), "%s/sec.md", agents);
	write_file(path, "---\nname: sec\ndescription: security\ntools: Read, "
	    "Grep\n---\nFind vulnerabilities.\n");
	snprintf(path, sizeof(path), "%s/explore.md", agents);
	write_file(path, "---\ndescription: my explore\ntools: Read\n---\n");
	snprintf(path, sizeof(path), "%s/notes.txt", agents);
	write_file(path, "not a profile");
	assert_int_equal(profile_set_load(&set, agents, err, sizeof(err)), 0);
	assert_int_equal(set.n, 7);
	p = profile_set_find(&set, "sec");
	assert_non_null(p);
	assert_string_equal(p->prompt, "Find vulnerabilities.");
	/* the directory's explore replaces the built-in */
	p = profile_set_find(&set, "explore");
	assert_false(p->builtin);
	assert_int_equal(p->ntools, 1);
	/* a later layer replaces an earlier one's profile of the same name */
	profile_set_layer(&set);
	assert_int_equal(profile_set_add_text(&set, "---\nname: sec\n"
	    "tools: Glob\n---\nlayer two\n", 40, "/p/sec.md", err,
	    sizeof(err)), 0);
	assert_int_equal(set.n, 7);
	assert_string_equal(profile_set_find(&set, "sec")->prompt,
	    "layer two");
	/* but two of one name in one layer are an error */
	assert_int_equal(profile_set_add_text(&set, "---\nname: sec\n---\n",
	    18, "/p/sec2.md", err, sizeof(err)), -1);
	assert_non_null(strstr(err, "is also defined in"));
	profile_set_free(&set);

	/* one malformed file fails the load, naming file and line */
	snprintf(path, sizeof(path), "%s/broken.md", agents);
	write_file(path, "---\nname: broken\nmodel: x\nmodel: y\ncontext: z\n---\n");
	assert_int_equal(profile_set_load(&set, agents, err, sizeof(err)), -1);
	assert_non_null(strstr(err, "broken.md:5: context"));
	unlink(path);

	/* two files, one name */
	snprintf(path, sizeof(path), "%s/sec2.md", agents);
	write_file(path, "---\nname: sec\n---\n");
	assert_int_equal(profile_set_load(&set, agents, err, sizeof(err)), -1);
	assert_non_null(strstr(err, "is also defined in"));
	unlink(path);

	snprintf(path, sizeof(path), "rm -rf %s", dir);
	assert_int_equal(system(path), 0);
}

static void
test_tooldef_validate(void **state)
{
	const struct tooldef	*t = tooldef_find("edit");
	char			 err[256];

	(void)state;
	assert_non_null(t);
	assert_int_equal(tooldef_validate(t, "{\"path\":\"a\",\"old_string\":"
	    "\"x\",\"new_string\":\"y\"}", err, sizeof(err)), 0);
	assert_int_equal(tooldef_validate(t, "{\"path\":\"a\",\"old_string\":"
	    "\"x\",\"new_string\":\"y\",\"replace_all\":\"yes\"}", err,
	    sizeof(err)), -1);
	assert_non_null(strstr(err, "\"replace_all\" must be a boolean, not a "
	    "string"));
	assert_int_equal(tooldef_validate(tooldef_find("list"), "", err,
	    sizeof(err)), 0);
	assert_int_equal(tooldef_validate(tooldef_find("list"), "null", err,
	    sizeof(err)), -1);
	assert_string_equal(tooldef_canonical("TodoWrite"), "todo");
	assert_string_equal(tooldef_canonical("grep"), "grep");
	assert_null(tooldef_canonical("Fly"));
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_builtins),
		cmocka_unit_test(test_parse_valid),
		cmocka_unit_test(test_parse_malformed),
		cmocka_unit_test(test_parse_backend),
		cmocka_unit_test(test_parse_unknown_tool),
		cmocka_unit_test(test_narrow),
		cmocka_unit_test(test_mcp_tools),
		cmocka_unit_test(test_parse_hostile_name),
		cmocka_unit_test(test_parse_nul),
		cmocka_unit_test(test_set_load),
		cmocka_unit_test(test_tooldef_validate),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}

/*
 * Backends (agent/backend.c): the names, finding a program, and the
 * launch of `command`: its arguments with {task} and {base_url} put in,
 * an environment made from nothing (never the caller's, so never a key),
 * the wire.
 */
#include <sys/stat.h>

#include <errno.h>
#include <limits.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "agent/backend.h"

static void
test_names(void **state)
{
	enum backend_kind	k;

	(void)state;
	assert_int_equal(backend_parse("claude-code", &k), 0);
	assert_int_equal(k, BACKEND_CLAUDE_CODE);
	assert_int_equal(backend_parse("codex", &k), 0);
	assert_int_equal(k, BACKEND_CODEX);
	assert_int_equal(backend_parse("command", &k), 0);
	assert_int_equal(k, BACKEND_COMMAND);
	assert_int_equal(backend_parse("loop", &k), 0);
	assert_int_equal(k, BACKEND_LOOP);
	assert_int_equal(backend_parse("Claude-Code", &k), -1);
	assert_int_equal(backend_parse(NULL, &k), -1);
	assert_string_equal(backend_name(BACKEND_CODEX), "codex");
	assert_string_equal(backend_program_name(BACKEND_CLAUDE_CODE),
	    "claude");
	assert_null(backend_program_name(BACKEND_COMMAND));
	assert_non_null(strstr(backend_install_hint(BACKEND_CODEX),
	    "npm install -g @openai/codex"));
}

/* A name is looked up in PATH's absolute entries only: a relative one
 * would be the workspace. */
static void
test_find(void **state)
{
	char	dir[] = "/tmp/warren-backend.XXXXXX", path[PATH_MAX];
	char	out[PATH_MAX], env[PATH_MAX * 2], *old;
	FILE	*f;

	(void)state;
	assert_non_null(mkdtemp(dir));
	snprintf(path, sizeof(path), "%s/my-agent", dir);
	assert_non_null(f = fopen(path, "w"));
	fputs("#!/bin/sh\n", f);
	fclose(f);
	assert_int_equal(chmod(path, 0755), 0);
	old = getenv("PATH") ? strdup(getenv("PATH")) : NULL;
	snprintf(env, sizeof(env), "/nonexistent:%s", dir);
	setenv("PATH", env, 1);
	assert_int_equal(backend_find_program("my-agent", out, sizeof(out)),
	    0);
	assert_string_equal(out, path);
	assert_int_equal(backend_find_program(path, out, sizeof(out)), 0);
	assert_int_equal(backend_find_program("no-such-agent", out,
	    sizeof(out)), -1);
	assert_int_equal(errno, ENOENT);
	/* "." and "" in PATH are the current directory: skipped. */
	assert_int_equal(chdir(dir), 0);
	setenv("PATH", ".::rel/bin", 1);
	assert_int_equal(backend_find_program("my-agent", out, sizeof(out)),
	    -1);
	/* Not executable: refused. */
	assert_int_equal(chmod(path, 0644), 0);
	assert_int_equal(backend_find_program(path, out, sizeof(out)), -1);
	if (old != NULL)
		setenv("PATH", old, 1);
	free(old);
	assert_int_equal(chdir("/"), 0);
	unlink(path);
	rmdir(dir);
}

static const char *
env_get(const struct backend_launch *l, const char *name)
{
	size_t	n = strlen(name);
	int	i;

	for (i = 0; i < l->envc; i++)
		if (strncmp(l->envp[i], name, n) == 0 && l->envp[i][n] == '=')
			return l->envp[i] + n + 1;
	return NULL;
}

static void
test_command_launch(void **state)
{
	struct backend_launch	 l;
	struct backend_args	 a;
	char			*args[] = { "-p", "{task}", "--url={base_url}/x",
				    "{task}{task}", "{nope}", NULL };
	char			 err[256];
	int			 i;

	(void)state;
	setenv("WARREN_API_KEY", "sk-secret-99", 1);
	setenv("ANTHROPIC_AUTH_TOKEN", "sk-secret-98", 1);
	memset(&a, 0, sizeof(a));
	a.program = "/opt/agent/bin/agent";
	a.args = args;
	a.task = "fix {base_url} it";
	a.base_url = "http://127.0.0.1:4000";
	a.home = "/tmp/warren-home";
	a.workspace = "/work/ws";
	assert_int_equal(backend_launch_build(BACKEND_COMMAND, &a, &l, err,
	    sizeof(err)), 0);
	assert_int_equal(l.argc, 6);
	assert_string_equal(l.argv[0], "/opt/agent/bin/agent");
	assert_string_equal(l.argv[1], "-p");
	/* The task's own text is not expanded again. */
	assert_string_equal(l.argv[2], "fix {base_url} it");
	assert_string_equal(l.argv[3], "--url=http://127.0.0.1:4000/x");
	assert_string_equal(l.argv[4], "fix {base_url} itfix {base_url} it");
	assert_string_equal(l.argv[5], "{nope}");
	assert_null(l.argv[6]);
	assert_string_equal(env_get(&l, "HOME"), "/tmp/warren-home");
	assert_string_equal(env_get(&l, "TERM"), "dumb");
	assert_string_equal(env_get(&l, "ANTHROPIC_BASE_URL"),
	    "http://127.0.0.1:4000");
	assert_string_equal(env_get(&l, "OPENAI_BASE_URL"),
	    "http://127.0.0.1:4000/v1");
	assert_string_equal(env_get(&l, "WARREN_AGENT_BASE_URL"),
	    "http://127.0.0.1:4000");
	assert_string_equal(env_get(&l, "ANTHROPIC_API_KEY"),
	    BACKEND_KEY_PLACEHOLDER);
	/* Nothing of ours: no key, no variable it was not given. */
	assert_null(env_get(&l, "WARREN_API_KEY"));
	assert_null(env_get(&l, "ANTHROPIC_AUTH_TOKEN"));
	for (i = 0; i < l.envc; i++)
		assert_null(strstr(l.envp[i], "sk-secret"));
	assert_null(l.envp[l.envc]);
	assert_string_equal(l.wire, "anthropic");
	backend_launch_free(&l);
	a.wire = "openai";
	assert_int_equal(backend_launch_build(BACKEND_COMMAND, &a, &l, err,
	    sizeof(err)), 0);
	assert_string_equal(l.wire, "openai");
	backend_launch_free(&l);
	a.wire = "grpc";
	assert_int_equal(backend_launch_build(BACKEND_COMMAND, &a, &l, err,
	    sizeof(err)), -1);
	assert_non_null(strstr(err, "wire \"grpc\""));
	a.wire = NULL;
	a.program = "agent";
	assert_int_equal(backend_launch_build(BACKEND_COMMAND, &a, &l, err,
	    sizeof(err)), -1);
	assert_non_null(strstr(err, "absolute"));
	a.program = "/bin/true";
	assert_int_equal(backend_launch_build(BACKEND_LOOP, &a, &l, err,
	    sizeof(err)), -1);
	unsetenv("WARREN_API_KEY");
	unsetenv("ANTHROPIC_AUTH_TOKEN");
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_names),
		cmocka_unit_test(test_find),
		cmocka_unit_test(test_command_launch),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}

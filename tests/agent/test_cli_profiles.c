/*
 * `warren profiles` as a user runs it: the built-ins, the user's own
 * profiles, a workspace's once trusted (ignored with a warning before, and
 * again once a file changes), one profile in full, and a malformed file
 * (`warren trust` refuses it: exit 3, file and line on stderr).
 */
#include <sys/stat.h>
#include <sys/wait.h>

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

static char	ws[] = "/tmp/warren-cliprof-XXXXXX";

/* A `warren profiles` or `warren trust` ends in well under this. */
#define WARREN_CMD_S	60

/* Run `warren CMD` with args (shell words), output (stdout+stderr) into
 * out. One still running after WARREN_CMD_S is killed (timeout(1)) and
 * fails the test, naming it. */
static int
warren_cmd(const char *cmdname, const char *args, char *out, size_t outsz)
{
	const char	*bin = getenv("WARREN_BIN");
	char		 cmd[1024];
	size_t		 n;
	FILE		*p;
	int		 st;

	assert_non_null(bin);
	if (strcmp(cmdname, "trust") == 0)
		snprintf(cmd, sizeof(cmd), "timeout -k 5 %d '%s' trust %s '%s' "
		    "2>&1", WARREN_CMD_S, bin, args, ws);
	else
		snprintf(cmd, sizeof(cmd), "timeout -k 5 %d '%s' %s "
		    "--workspace '%s' %s 2>&1", WARREN_CMD_S, bin, cmdname, ws,
		    args);
	assert_non_null(p = popen(cmd, "r"));
	n = fread(out, 1, outsz - 1, p);
	out[n] = '\0';
	st = pclose(p);
	if (WIFEXITED(st) && (WEXITSTATUS(st) == 124 ||
	    WEXITSTATUS(st) == 137))
		fail_msg("%s: still running after %d s: killed", cmd,
		    WARREN_CMD_S);
	return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

static int
warren(const char *args, char *out, size_t outsz)
{
	return warren_cmd("profiles", args, out, outsz);
}

static void
put(const char *rel, const char *text)
{
	char	path[512];
	FILE	*f;

	snprintf(path, sizeof(path), "%s/%s", ws, rel);
	assert_non_null(f = fopen(path, "w"));
	fputs(text, f);
	fclose(f);
}

static void
test_cli(void **state)
{
	char	out[16384], path[512];

	(void)state;
	assert_non_null(mkdtemp(ws));
	assert_int_equal(warren("", out, sizeof(out)), 0);
	assert_non_null(strstr(out, "explore        ro   no "));
	assert_non_null(strstr(out, "general        rw   yes"));
	assert_non_null(strstr(out, "orchestrator"));

	snprintf(path, sizeof(path), "%s/.warren", ws);
	mkdir(path, 0755);
	snprintf(path, sizeof(path), "%s/.warren/agents", ws);
	mkdir(path, 0755);
	put(".warren/agents/fixer.md", "---\nname: fixer\ndescription: fixes "
	    "\x1b[31mbugs\ntools: Read, Edit, Bash\n---\nFix the bug.\n");
	/* Not trusted yet: left out, and said so. */
	assert_int_equal(warren("", out, sizeof(out)), 0);
	assert_null(strstr(out, "fixer          rw"));
	assert_non_null(strstr(out, "not trusted (never trusted: .warren/agents/fixer.md)"));
	assert_non_null(strstr(out, "warren trust"));
	assert_int_equal(warren_cmd("trust", "", out, sizeof(out)), 0);
	assert_non_null(strstr(out, ".warren/agents/fixer.md"));
	assert_int_equal(warren("", out, sizeof(out)), 0);
	assert_null(strstr(out, "not trusted"));
	assert_non_null(strstr(out, "fixer          rw   yes"));
	assert_non_null(strstr(out, "file     read,edit,bash"));
	assert_int_equal(warren("fixer", out, sizeof(out)), 0);
	assert_non_null(strstr(out, "Fix the bug."));
	assert_non_null(strstr(out, "fs rw, exec yes"));
	/* the escape sequence from the file is not sent to the terminal */
	assert_null(strchr(out, '\x1b'));
	assert_int_equal(warren("--json fixer", out, sizeof(out)), 0);
	assert_non_null(strstr(out, "\"schema_tokens\":"));
	assert_int_equal(warren("nosuch", out, sizeof(out)), 2);
	assert_non_null(strstr(out, "no profile named \"nosuch\""));

	/* A changed file untrusts the set; an added one too. */
	put(".warren/agents/fixer.md", "---\nname: fixer\ntools: Read\n---\n");
	assert_int_equal(warren("", out, sizeof(out)), 0);
	assert_null(strstr(out, "fixer          r"));
	assert_non_null(strstr(out, ".warren/agents/fixer.md changed"));
	put(".warren/agents/broken.md", "---\nname: broken\ntools: Read,\n"
	    "  Fly\nmodel x\n---\n");
	assert_int_equal(warren("", out, sizeof(out)), 0);
	assert_non_null(strstr(out, ".warren/agents/broken.md added"));
	/* trust checks before it trusts: a malformed file is refused */
	assert_int_equal(warren_cmd("trust", "", out, sizeof(out)), 3);
	assert_non_null(strstr(out, "broken.md:4: expected \"key: value\""));
	assert_int_equal(warren("", out, sizeof(out)), 0);
	assert_null(strstr(out, "fixer          r"));
	/* --revoke trusts nothing */
	snprintf(path, sizeof(path), "%s/.warren/agents/broken.md", ws);
	unlink(path);
	assert_int_equal(warren_cmd("trust", "", out, sizeof(out)), 0);
	assert_int_equal(warren("", out, sizeof(out)), 0);
	assert_non_null(strstr(out, "fixer          ro   no"));
	assert_int_equal(warren_cmd("trust", "--revoke", out, sizeof(out)), 0);
	assert_int_equal(warren("", out, sizeof(out)), 0);
	assert_null(strstr(out, "fixer          ro"));
	/* A symlink where a profile goes is never followed nor trusted. */
	snprintf(path, sizeof(path), "%s/.warren/agents/link.md", ws);
	assert_int_equal(symlink("/etc/passwd", path), 0);
	assert_int_equal(warren_cmd("trust", "", out, sizeof(out)), 3);
	assert_non_null(strstr(out, "link.md is a symlink"));
	assert_int_equal(warren("", out, sizeof(out)), 0);
	assert_non_null(strstr(out, "link.md is a symlink"));
	unlink(path);

	/* The user's own profiles need no trust. */
	assert_non_null(getenv("XDG_CONFIG_HOME"));
	snprintf(path, sizeof(path), "mkdir -p '%s/warren/agents'",
	    getenv("XDG_CONFIG_HOME"));
	assert_int_equal(system(path), 0);
	snprintf(path, sizeof(path), "%s/warren/agents/mine.md",
	    getenv("XDG_CONFIG_HOME"));
	{
		FILE	*f;

		assert_non_null(f = fopen(path, "w"));
		fputs("---\nname: mine\ntools: Grep\n---\nMine.\n", f);
		fclose(f);
	}
	assert_int_equal(warren("", out, sizeof(out)), 0);
	assert_non_null(strstr(out, "mine           ro   no"));
	unlink(path);

	snprintf(path, sizeof(path), "rm -rf '%s'", ws);
	assert_int_equal(system(path), 0);
}

/* mkdir -p ws/rel */
static void
mkdirs(const char *rel)
{
	char	cmd[1024];

	snprintf(cmd, sizeof(cmd), "mkdir -p '%s/%s'", ws, rel);
	assert_int_equal(system(cmd), 0);
}

/*
 * Claude Code's .claude/agents (issue 34): trusted like .warren/agents
 * (left out before `warren trust`, read after, untrusted again when it
 * changes); a name in both is .warren's; .warren/agents as a symlink to
 * the workspace's .claude/agents is read once, through .claude/agents;
 * a symlink anywhere else, or .claude/agents itself a symlink, is never
 * followed nor trusted.
 */
static void
test_claude_agents(void **state)
{
	char	out[16384], path[1024], outside[] = "/tmp/warren-cliout-XXXXXX";

	(void)state;
	snprintf(ws, sizeof(ws), "/tmp/warren-cliprof-XXXXXX");
	assert_non_null(mkdtemp(ws));
	assert_non_null(mkdtemp(outside));
	mkdirs(".claude/agents");
	put(".claude/agents/rev.md", "---\nname: rev\ndescription: CLAUDE-REV"
	    "\ntools: Read, Grep\nmodel: sonnet\n---\nReview.\n");
	assert_int_equal(warren("", out, sizeof(out)), 0);
	assert_null(strstr(out, "rev            ro"));
	if (strstr(out, "never trusted: .claude/agents/rev.md") == NULL)
		fail_msg("%s", out);
	assert_int_equal(warren_cmd("trust", "", out, sizeof(out)), 0);
	assert_non_null(strstr(out, ".claude/agents/rev.md"));
	assert_int_equal(warren("rev", out, sizeof(out)), 0);
	if (strstr(out, "CLAUDE-REV") == NULL ||
	    strstr(out, ".claude/agents/rev.md") == NULL)
		fail_msg("%s", out);
	put(".claude/agents/rev.md", "---\nname: rev\ntools: Bash\n---\n");
	assert_int_equal(warren("", out, sizeof(out)), 0);
	assert_non_null(strstr(out, ".claude/agents/rev.md changed"));
	assert_null(strstr(out, "rev            rw"));

	/* The same name in both: .warren's. */
	mkdirs(".warren/agents");
	put(".warren/agents/rev.md", "---\nname: rev\ndescription: WARREN-REV"
	    "\ntools: Read\n---\nReview.\n");
	assert_int_equal(warren_cmd("trust", "", out, sizeof(out)), 0);
	assert_int_equal(warren("rev", out, sizeof(out)), 0);
	if (strstr(out, "WARREN-REV") == NULL || strstr(out, "CLAUDE-REV") !=
	    NULL)
		fail_msg("%s", out);

	/* .warren/agents -> ../.claude/agents: one set, read once. */
	snprintf(path, sizeof(path), "rm -r '%s/.warren/agents'", ws);
	assert_int_equal(system(path), 0);
	snprintf(path, sizeof(path), "%s/.warren/agents", ws);
	assert_int_equal(symlink("../.claude/agents", path), 0);
	assert_int_equal(warren_cmd("trust", "", out, sizeof(out)), 0);
	if (strstr(out, "trusted 1 file") == NULL ||
	    strstr(out, ".claude/agents/rev.md") == NULL)
		fail_msg("%s", out);
	assert_int_equal(warren("", out, sizeof(out)), 0);
	if (strstr(out, "rev            rw   yes") == NULL ||
	    strstr(out, "not trusted") != NULL)
		fail_msg("%s", out);

	/* Pointing out of the workspace: not followed, never trusted. */
	snprintf(path, sizeof(path), "%s/x.md", outside);
	{
		FILE	*f;

		assert_non_null(f = fopen(path, "w"));
		fputs("---\nname: outsider\ntools: Bash\n---\nOUT\n", f);
		fclose(f);
	}
	snprintf(path, sizeof(path), "%s/.warren/agents", ws);
	assert_int_equal(unlink(path), 0);
	assert_int_equal(symlink(outside, path), 0);
	assert_int_equal(warren_cmd("trust", "", out, sizeof(out)), 3);
	if (strstr(out, ".warren/agents is a symlink, and not to") == NULL)
		fail_msg("%s", out);
	assert_int_equal(warren("", out, sizeof(out)), 0);
	if (strstr(out, "outsider") != NULL || strstr(out, "rev            r")
	    != NULL || strstr(out, ".warren/agents is a symlink, and not to") == NULL)
		fail_msg("%s", out);
	assert_int_equal(unlink(path), 0);
	/* .claude/agents itself a symlink out: likewise. */
	snprintf(path, sizeof(path), "rm -r '%s/.claude/agents'", ws);
	assert_int_equal(system(path), 0);
	snprintf(path, sizeof(path), "%s/.claude/agents", ws);
	assert_int_equal(symlink(outside, path), 0);
	assert_int_equal(warren_cmd("trust", "", out, sizeof(out)), 3);
	if (strstr(out, ".claude/agents is a symlink") == NULL)
		fail_msg("%s", out);
	assert_int_equal(warren("", out, sizeof(out)), 0);
	assert_null(strstr(out, "outsider"));

	snprintf(path, sizeof(path), "rm -rf '%s' '%s'", ws, outside);
	assert_int_equal(system(path), 0);
}

/* The user's agent file webby.md: a tool warren lacks, and version. */
static void
put_webby(const char *version)
{
	char	path[1024];
	FILE	*f;

	snprintf(path, sizeof(path), "%s/warren/agents/webby.md",
	    getenv("XDG_CONFIG_HOME"));
	assert_non_null(f = fopen(path, "w"));
	fprintf(f, "---\nname: webby\ndescription: %s\ntools: Read, WebFetch"
	    "\n---\nFetch.\n", version);
	fclose(f);
}

/*
 * A tool warren lacks is warned about once per version of the file
 * (issue 34): the first command says it, the next does not, an edited
 * file is said again. The versions seen are in the state directory.
 */
static void
test_warn_once(void **state)
{
	char	out[16384], path[1024], v1[64], v2[64];

	(void)state;
	snprintf(ws, sizeof(ws), "/tmp/warren-cliprof-XXXXXX");
	assert_non_null(mkdtemp(ws));
	assert_non_null(getenv("XDG_CONFIG_HOME"));
	snprintf(path, sizeof(path), "mkdir -p '%s/warren/agents'",
	    getenv("XDG_CONFIG_HOME"));
	assert_int_equal(system(path), 0);
	/* Versions of this test's own (the state directory outlives it). */
	snprintf(v1, sizeof(v1), "%s one", ws);
	snprintf(v2, sizeof(v2), "%s two", ws);
	put_webby(v1);
	assert_int_equal(warren("", out, sizeof(out)), 0);
	if (strstr(out, "webby.md:4: unknown tool \"WebFetch\" left out") ==
	    NULL || strstr(out, "webby          ro") == NULL)
		fail_msg("first command: %s", out);
	assert_int_equal(warren("", out, sizeof(out)), 0);
	if (strstr(out, "WebFetch") != NULL ||
	    strstr(out, "webby          ro") == NULL)
		fail_msg("second command warned again: %s", out);
	put_webby(v2);
	assert_int_equal(warren("", out, sizeof(out)), 0);
	if (strstr(out, "unknown tool \"WebFetch\"") == NULL)
		fail_msg("the edited file: %s", out);
	assert_int_equal(warren("webby", out, sizeof(out)), 0);
	assert_null(strstr(out, "WebFetch"));
	/* Kept in the state directory, not the workspace. */
	snprintf(path, sizeof(path), "%s/warren/agent-warnings",
	    getenv("XDG_STATE_HOME"));
	assert_int_equal(access(path, F_OK), 0);
	snprintf(path, sizeof(path), "%s/warren/agents/webby.md",
	    getenv("XDG_CONFIG_HOME"));
	unlink(path);
	snprintf(path, sizeof(path), "rm -rf '%s'", ws);
	assert_int_equal(system(path), 0);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_cli),
		cmocka_unit_test(test_claude_agents),
		cmocka_unit_test(test_warn_once),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}

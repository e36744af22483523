/*
 * `warren profiles` as a user runs it: the built-ins, the user's own
 * profiles, a workspace's once trusted (ignored with a warning before, and
 * again once a file changes), one profile in full, and a malformed file
 * (`warren trust` refuses it: exit 3, file and line on stderr). The
 * list of agent-file warnings already given is believed only as a
 * regular file of ours no one else may write; a FIFO there holds no
 * command.
 */
#include <sys/stat.h>
#include <sys/wait.h>

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

static char	ws[] = "/tmp/warren-cliprof-XXXXXX";

/* Run `warren CMD` with args (shell words), output (stdout+stderr) into
 * out; killed past WARREN_CMD_DEADLINE seconds (exit 137, said). */
#define WARREN_CMD_DEADLINE	30
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
		snprintf(cmd, sizeof(cmd), "timeout -s KILL %d '%s' trust %s "
		    "'%s' 2>&1", WARREN_CMD_DEADLINE, bin, args, ws);
	else
		snprintf(cmd, sizeof(cmd), "timeout -s KILL %d '%s' %s "
		    "--workspace '%s' %s 2>&1", WARREN_CMD_DEADLINE, bin,
		    cmdname, ws, args);
	assert_non_null(p = popen(cmd, "r"));
	n = fread(out, 1, outsz - 1, p);
	out[n] = '\0';
	st = pclose(p);
	if (WIFEXITED(st) && WEXITSTATUS(st) == 128 + SIGKILL)
		fail_msg("warren %s %s did not end within %d s: %s", cmdname,
		    args, WARREN_CMD_DEADLINE, out);
	return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

static int
warren(const char *args, char *out, size_t outsz)
{
	return warren_cmd("profiles", args, out, outsz);
}

/* How many times needle is in text. */
static int
count(const char *text, const char *needle)
{
	int	n = 0;

	while ((text = strstr(text, needle)) != NULL) {
		n++;
		text += strlen(needle);
	}
	return n;
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
	assert_non_null(strstr(out, "file     loop        read,edit,bash"));
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
	int	i;

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
	/* .claude/agents itself a symlink out: not followed, and skipped
	 * alone (said once, with why): .warren's own agent is trusted and
	 * used. */
	mkdirs(".warren/agents");
	put(".warren/agents/wag.md", "---\nname: wag\ndescription: WAG\n"
	    "tools: Read\n---\nW.\n");
	snprintf(path, sizeof(path), "rm -r '%s/.claude/agents'", ws);
	assert_int_equal(system(path), 0);
	snprintf(path, sizeof(path), "%s/.claude/agents", ws);
	assert_int_equal(symlink(outside, path), 0);
	assert_int_equal(warren_cmd("trust", "", out, sizeof(out)), 0);
	if (count(out, "/.claude/agents is skipped (none of its "
	    "agents is read): .claude/agents is a symlink") != 1 ||
	    strstr(out, ".warren/agents/wag.md") == NULL)
		fail_msg("%s", out);
	assert_int_equal(warren("", out, sizeof(out)), 0);
	if (strstr(out, "outsider") != NULL || strstr(out, "wag            ro"
	    "   no ") == NULL || strstr(out, "not trusted") != NULL ||
	    count(out, ".claude/agents is a symlink") != 1)
		fail_msg("%s", out);
	assert_int_equal(unlink(path), 0);

	/* .claude a symlink: likewise. */
	snprintf(path, sizeof(path), "rmdir '%s/.claude'", ws);
	assert_int_equal(system(path), 0);
	snprintf(path, sizeof(path), "%s/.claude", ws);
	assert_int_equal(symlink(outside, path), 0);
	assert_int_equal(warren("", out, sizeof(out)), 0);
	if (strstr(out, "wag            ro   no ") == NULL ||
	    strstr(out, ".claude is a symlink") == NULL)
		fail_msg("%s", out);
	assert_int_equal(unlink(path), 0);

	/* More agent files than PROJECT_MAX_CLAUDE: skipped, not the
	 * project. */
	mkdirs(".claude/agents");
	for (i = 0; i <= 64; i++) {
		snprintf(path, sizeof(path), ".claude/agents/a%d.md", i);
		put(path, "---\nname: many\ntools: Read\n---\nM.\n");
	}
	assert_int_equal(warren("", out, sizeof(out)), 0);
	if (strstr(out, "wag            ro   no ") == NULL ||
	    strstr(out, "is skipped (none of its agents is read): "
	    ".claude/agents/") == NULL || strstr(out, "one file too many") ==
	    NULL || strstr(out, "many           ") != NULL)
		fail_msg("%s", out);

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

/*
 * The list of warnings given, $XDG_STATE_HOME/warren/agent-warnings (a
 * state directory of the test's own), as put(how) leaves it before a
 * second command: that command warns again (the list is not believed)
 * and ends (a FIFO does not hold it), and the list is then a regular
 * file of ours, mode 0600, that a third command believes.
 */
static void
t_list_not_believed(const char *how)
{
	char	 out[16384], path[1024], cmd[2200], *old, *tmp;
	struct stat	 st;

	assert_non_null(old = getenv("XDG_STATE_HOME"));
	assert_non_null(old = strdup(old));
	tmp = strdup("/tmp/warren-cliprof-state-XXXXXX");
	assert_non_null(tmp);
	assert_non_null(mkdtemp(tmp));
	assert_int_equal(chmod(tmp, 0755), 0);
	assert_int_equal(setenv("XDG_STATE_HOME", tmp, 1), 0);
	snprintf(ws, sizeof(ws), "/tmp/warren-cliprof-XXXXXX");
	assert_non_null(mkdtemp(ws));
	snprintf(path, sizeof(path), "mkdir -p '%s/warren/agents'",
	    getenv("XDG_CONFIG_HOME"));
	assert_int_equal(system(path), 0);
	put_webby(how);
	assert_int_equal(warren("", out, sizeof(out)), 0);
	assert_non_null(strstr(out, "unknown tool \"WebFetch\""));
	snprintf(path, sizeof(path), "%s/warren/agent-warnings", tmp);
	if (strcmp(how, "fifo") == 0) {
		assert_int_equal(unlink(path), 0);
		assert_int_equal(mkfifo(path, 0600), 0);
	} else if (strcmp(how, "group-writable") == 0)
		assert_int_equal(chmod(path, 0620), 0);
	else
		assert_int_equal(chown(path, 65534, 65534), 0);
	assert_int_equal(warren("", out, sizeof(out)), 0);
	if (strstr(out, "unknown tool \"WebFetch\"") == NULL)
		fail_msg("a %s list was believed: %s", how, out);
	assert_int_equal(lstat(path, &st), 0);
	assert_true(S_ISREG(st.st_mode));
	assert_int_equal(st.st_uid, geteuid());
	assert_int_equal(st.st_mode & 07777, 0600);
	assert_int_equal(warren("", out, sizeof(out)), 0);
	if (strstr(out, "WebFetch") != NULL)
		fail_msg("the list written again is not believed: %s", out);
	snprintf(path, sizeof(path), "%s/warren/agents/webby.md",
	    getenv("XDG_CONFIG_HOME"));
	unlink(path);
	snprintf(cmd, sizeof(cmd), "rm -rf '%s' '%s'", ws, tmp);
	assert_int_equal(system(cmd), 0);
	assert_int_equal(setenv("XDG_STATE_HOME", old, 1), 0);
	free(old);
	free(tmp);
}

static void
test_list_fifo(void **state)
{
	(void)state;
	t_list_not_believed("fifo");
}

static void
test_list_group_writable(void **state)
{
	(void)state;
	t_list_not_believed("group-writable");
}

/* Root can give the list away; an ordinary user cannot. */
static void
test_list_foreign(void **state)
{
	(void)state;
	if (geteuid() != 0)
		skip();
	t_list_not_believed("foreign");
}

/*
 * Each profile's backend (loop for warren's own) and, for another agent
 * program, whether it is found as a worker looks it up (PATH, or the
 * command: line's absolute path), with what to install when it is not;
 * the same in --json and in the full view.
 */
static void
test_backends(void **state)
{
	char	 out[16384], path[1024], bin[600], *oldpath;
	FILE	*f;

	(void)state;
	strcpy(ws, "/tmp/warren-cliprof-XXXXXX");
	assert_non_null(mkdtemp(ws));
	mkdirs(".warren/agents");
	mkdirs("bin");
	snprintf(bin, sizeof(bin), "%s/bin", ws);
	/* claude here, codex nowhere. */
	snprintf(path, sizeof(path), "%s/claude", bin);
	assert_non_null(f = fopen(path, "w"));
	fputs("#!/bin/sh\n", f);
	fclose(f);
	assert_int_equal(chmod(path, 0755), 0);
	put(".warren/agents/cc.md", "---\nname: cc\nbackend: claude-code\n"
	    "---\nRole.\n");
	put(".warren/agents/cx.md", "---\nname: cx\nbackend: codex\n---\n");
	put(".warren/agents/cmd.md", "---\nname: cmd\nbackend: command\n"
	    "command: /bin/true\n---\n");
	put(".warren/agents/gone.md", "---\nname: gone\nbackend: command\n"
	    "command: /nonexistent/agent\n---\n");
	assert_int_equal(warren_cmd("trust", "", out, sizeof(out)), 0);
	assert_non_null(oldpath = strdup(getenv("PATH")));
	snprintf(path, sizeof(path), "%s:/usr/bin:/bin", bin);
	setenv("PATH", path, 1);

	assert_int_equal(warren("", out, sizeof(out)), 0);
	assert_non_null(strstr(out, "BACKEND"));
	assert_non_null(strstr(out, "built-in loop        "));
	snprintf(path, sizeof(path), "file     claude-code %s/claude\n", bin);
	assert_non_null(strstr(out, path));
	assert_non_null(strstr(out, "file     codex       codex not found: "
	    "install Codex CLI: npm install -g @openai/codex"));
	assert_non_null(strstr(out, "file     command     /usr/bin/true") ||
	    strstr(out, "file     command     /bin/true"));
	assert_non_null(strstr(out, "file     command     /nonexistent/agent "
	    "not found: install the program"));

	assert_int_equal(warren("--json", out, sizeof(out)), 0);
	assert_non_null(strstr(out, "\"backend\": \"loop\",\n    "
	    "\"program\": null"));
	assert_non_null(strstr(out, "\"backend\": \"codex\""));
	assert_non_null(strstr(out, "\"name\": \"codex\",\n      "
	    "\"path\": null,\n      \"install\": \"install Codex CLI"));
	snprintf(path, sizeof(path), "\"name\": \"claude\",\n      "
	    "\"path\": \"%s/claude\"\n", bin);
	assert_non_null(strstr(out, path));

	assert_int_equal(warren("cx", out, sizeof(out)), 0);
	assert_non_null(strstr(out, "backend:     codex\nprogram:     codex "
	    "not found: install Codex CLI"));
	assert_int_equal(warren("explore", out, sizeof(out)), 0);
	assert_non_null(strstr(out, "backend:     loop (warren's own)"));

	setenv("PATH", oldpath, 1);
	free(oldpath);
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
		cmocka_unit_test(test_list_fifo),
		cmocka_unit_test(test_list_group_writable),
		cmocka_unit_test(test_list_foreign),
		cmocka_unit_test(test_backends),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}

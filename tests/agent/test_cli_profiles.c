/*
 * `warren profiles` as a user runs it: the built-ins, a workspace's own
 * profiles, one profile in full, and a malformed file (exit 3, file and
 * line on stderr).
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

/* Run warren with args (shell words), output (stdout+stderr) into out. */
static int
warren(const char *args, char *out, size_t outsz)
{
	const char	*bin = getenv("WARREN_BIN");
	char		 cmd[1024];
	size_t		 n;
	FILE		*p;
	int		 st;

	assert_non_null(bin);
	snprintf(cmd, sizeof(cmd), "'%s' profiles --workspace '%s' %s 2>&1",
	    bin, ws, args);
	assert_non_null(p = popen(cmd, "r"));
	n = fread(out, 1, outsz - 1, p);
	out[n] = '\0';
	st = pclose(p);
	return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
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
	assert_int_equal(warren("", out, sizeof(out)), 0);
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

	put(".warren/agents/broken.md", "---\nname: broken\ntools: Read,\n"
	    "  Fly\nmodel x\n---\n");
	assert_int_equal(warren("", out, sizeof(out)), 3);
	assert_non_null(strstr(out, "broken.md:4: expected \"key: value\""));

	snprintf(path, sizeof(path), "rm -rf '%s'", ws);
	assert_int_equal(system(path), 0);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_cli),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}

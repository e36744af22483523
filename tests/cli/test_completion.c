/*
 * The shell completions warren-gen-completion writes (cli/warren.bash,
 * .zsh, .fish in the build directory), run in the shell as a user's would
 * run them: the bash one sourced in bash, _warren called on a command
 * line, COMPREPLY read back. zsh and fish, where installed, parse theirs.
 */
#include <sys/wait.h>

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

static char	script[PATH_MAX];

/* bash: source the script, complete words (the last one the cursor's),
 * the candidates sorted one a line into out. */
static void
complete(char *out, size_t outsz, const char *words)
{
	char	 cmd[PATH_MAX + 1024];
	FILE	*p;
	size_t	 n;
	int	 st;

	snprintf(cmd, sizeof(cmd), "bash --norc --noprofile -c '"
	    "source \"$0\" || exit 9; COMP_WORDS=(%s); "
	    "COMP_CWORD=$((${#COMP_WORDS[@]} - 1)); "
	    "COMP_LINE=\"${COMP_WORDS[*]}\"; _warren; "
	    "printf \"%%s\\n\" \"${COMPREPLY[@]}\" | sort' %s", words, script);
	if ((p = popen(cmd, "r")) == NULL)
		fail_msg("popen bash: %s", cmd);
	n = fread(out, 1, outsz - 1, p);
	out[n] = '\0';
	st = pclose(p);
	if (st == -1 || !WIFEXITED(st) || WEXITSTATUS(st) != 0)
		fail_msg("bash exited %d completing %s", st, words);
}

static void
expect(const char *words, const char *want)
{
	char	got[4096];

	complete(got, sizeof(got), words);
	if (strcmp(got, want) != 0)
		fail_msg("warren completion of [%s]:\n got: %s\nwant: %s",
		    words, got, want);
}

static void
test_bash(void **state)
{
	(void)state;
	/* warren ru<TAB>: the commands that begin so. */
	expect("warren ru", "run\nruns\n");
	/* warren run --pro<TAB>: run's options from the table. */
	expect("warren run --pro", "--profile\n--provider\n");
	expect("warren run --cow \"\"", "auto\ncopy\noverlay\n");
	expect("warren run --profile ex", "explore\n");
	expect("warren ask --provider oll", "ollama\n");
	expect("warren resume --hello", "--hello-timeout\n");
	expect("warren help ru", "run\nruns\n");
	/* A command without table rows: --help. */
	expect("warren forget --he", "--help\n");
}

/* zsh and fish, where the machine has them, parse their scripts. */
static void
test_other_shells(void **state)
{
	static const char *const sh[][2] = { { "zsh", "zsh -n" },
	    { "fish", "fish --no-execute" } };
	char	 cmd[PATH_MAX + 64], path[PATH_MAX];
	size_t	 i;

	(void)state;
	for (i = 0; i < 2; i++) {
		snprintf(path, sizeof(path), "%s/cli/warren.%s",
		    getenv("WARREN_BUILD_DIR"), sh[i][0]);
		if (access(path, R_OK) != 0)
			fail_msg("%s: not written by the build", path);
		snprintf(cmd, sizeof(cmd), "command -v %s >/dev/null",
		    sh[i][0]);
		if (system(cmd) != 0) {
			printf("%s is not installed: %s not parsed\n",
			    sh[i][0], path);
			continue;
		}
		snprintf(cmd, sizeof(cmd), "%s %s", sh[i][1], path);
		if (system(cmd) != 0)
			fail_msg("%s does not parse %s", sh[i][0], path);
	}
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_bash),
		cmocka_unit_test(test_other_shells),
	};

	if (getenv("WARREN_BUILD_DIR") == NULL) {
		fprintf(stderr, "test_completion: WARREN_BUILD_DIR is not "
		    "set\n");
		return 1;
	}
	snprintf(script, sizeof(script), "%s/cli/warren.bash",
	    getenv("WARREN_BUILD_DIR"));
	return cmocka_run_group_tests(tests, NULL, NULL);
}

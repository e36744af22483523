/*
 * What the workspace's .gitignore ignores (cli/layer_ignore.c), asked of
 * git by a warren whose fd 0 (and 1) were closed when it started: the
 * memory file of paths is then fd 0, and git must still read it there
 * (dup2(0, 0) does nothing and would leave it close-on-exec). Through
 * the real binary this cannot be seen: SQLite, opening the store first,
 * fills fds 0 to 2 with /dev/null.
 */
#include <sys/stat.h>

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

#include "cli/layer.h"
#include "tests/e2e/harness.h"
#include "workspace/cow.h"

/* A git work tree whose .gitignore ignores *.o, in dir; 1 if there is
 * no git to make one with. */
static int
t_repo(char **dir, char *ws, size_t wssz)
{
	char	cmd[PATH_MAX + 64];

	*dir = h_tmpdir();
	h_write(*dir, ".gitignore", "*.o\n", 0);
	if (realpath(*dir, ws) == NULL || strlen(ws) >= wssz)
		fail_msg("realpath %s", *dir);
	snprintf(cmd, sizeof(cmd), "git init -q '%s' >/dev/null 2>&1", ws);
	return system(cmd) != 0;
}

/* layer_ignore of a.c and a.o with fds 0 (and 1 if both) closed, then
 * put back: a.o ignored, a.c not. */
static void
t_closed(int both)
{
	struct cow_change	v[2];
	struct cow_changes	ch = { v, 2 };
	unsigned char		ign[2];
	char			ws[PATH_MAX], note[512], *dir;
	int			s0, s1 = -1, rc;

	if (t_repo(&dir, ws, sizeof(ws)) == 1)
		skip();
	memset(v, 0, sizeof(v));
	v[0].path = "a.c";
	v[1].path = "a.o";
	v[0].kind = v[1].kind = COW_ADDED;
	v[0].new_mode = v[1].new_mode = S_IFREG | 0644;
	fflush(stdout);
	assert_true((s0 = dup(0)) > 2);
	if (both)
		assert_true((s1 = dup(1)) > 2);
	close(0);
	if (both)
		close(1);
	rc = layer_ignore(ws, &ch, ign, note, sizeof(note));
	assert_int_equal(dup2(s0, 0), 0);
	close(s0);
	if (both) {
		assert_int_equal(dup2(s1, 1), 1);
		close(s1);
	}
	if (rc != 0 || ign[0] != 0 || ign[1] != 1 || note[0] != '\0')
		fail_msg("fd 0%s closed: rc %d, a.c %d, a.o %d (want 0 1), "
		    "note: %s", both ? " and 1" : "", rc, ign[0], ign[1], note);
	h_rm_rf(dir);
	free(dir);
}

static void
test_stdin_closed(void **state)
{
	(void)state;
	t_closed(0);
}

static void
test_stdin_stdout_closed(void **state)
{
	(void)state;
	t_closed(1);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_stdin_closed),
		cmocka_unit_test(test_stdin_stdout_closed),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}

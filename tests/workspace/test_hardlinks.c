/*
 * hardlinks_outside (workspace/hardlinks.h) on trees laid out here: a
 * file linked from outside the workspace is found, and named; links
 * whose names are all inside are not; a symlink to the directory outside
 * is not followed (it would count the outside name as inside); the top
 * .git is left out, so a file linked to one of its objects is found; a
 * directory that cannot be read is passed by.
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

#include "workspace/hardlinks.h"

#include "cow_apply_test.h"

/* hardlinks_outside of t's W: how many files it finds, the first named
 * in *first (the caller frees), NULL if none. */
static size_t
t_outside(const struct t *t, char **first)
{
	struct hardlinks	 hl;
	char			 err[512];
	size_t			 n;

	if (hardlinks_outside(t->ws, &hl, err, sizeof(err)) != 0)
		fail_msg("hardlinks_outside: %s", err);
	n = hl.nout;
	*first = n > 0 ? strdup(hl.named[0]) : NULL;
	hardlinks_free(&hl);
	return n;
}

static void
test_found(void **state)
{
	struct t	 t;
	char		*first;

	(void)state;
	t_open(&t);
	sh("cd '%s' && mkdir -p out ws/node_modules/lib && echo s > out/s.js && "
	    "ln out/s.js ws/node_modules/lib/index.js && echo a > ws/a && "
	    "ln ws/a ws/node_modules/a2 && ln ws/a ws/a3", t.root);
	assert_int_equal(t_outside(&t, &first), 1);
	assert_string_equal(first, "node_modules/lib/index.js");
	free(first);
	/* The link outside gone: every name of a is inside. */
	sh("rm '%s/out/s.js'", t.root);
	assert_int_equal(t_outside(&t, &first), 0);
	assert_null(first);
	t_close(&t);
}

static void
test_symlink_not_followed(void **state)
{
	struct t	 t;
	char		*first;

	(void)state;
	t_open(&t);
	sh("cd '%s' && mkdir out && echo s > out/s.js && ln out/s.js ws/s.js "
	    "&& ln -s ../out ws/outlink", t.root);
	assert_int_equal(t_outside(&t, &first), 1);
	assert_string_equal(first, "s.js");
	free(first);
	t_close(&t);
}

static void
test_git_left_out(void **state)
{
	struct t	 t;
	char		*first;

	(void)state;
	t_open(&t);
	sh("cd '%s' && mkdir -p .git/objects sub/.git && echo o > "
	    ".git/objects/o && ln .git/objects/o obj && echo g > sub/.git/g && "
	    "ln sub/.git/g g2", t.ws);
	assert_int_equal(t_outside(&t, &first), 1);
	assert_string_equal(first, "obj");
	free(first);
	t_close(&t);
}

/* Run as an ordinary user only: root reads any directory. */
static void
test_unreadable_passed(void **state)
{
	struct t	 t;
	char		*first;

	(void)state;
	if (geteuid() == 0)
		skip();
	t_open(&t);
	sh("cd '%s' && mkdir out && echo s > out/s.js && mkdir ws/shut && "
	    "ln out/s.js ws/shut/s.js && chmod 000 ws/shut", t.root);
	assert_int_equal(t_outside(&t, &first), 0);
	sh("chmod 755 '%s/shut'", t.ws);
	assert_int_equal(t_outside(&t, &first), 1);
	free(first);
	t_close(&t);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_found),
		cmocka_unit_test(test_symlink_not_followed),
		cmocka_unit_test(test_git_left_out),
		cmocka_unit_test(test_unreadable_passed),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}

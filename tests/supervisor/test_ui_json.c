/*
 * The --json event writer (supervisor/ui_json.c) against jansson: every
 * line must be byte for byte json_dumps(JSON_COMPACT | JSON_ENSURE_ASCII)
 * of the same object, whatever the text holds: quotes, controls, UTF-8
 * of every length, text that is not UTF-8 (escaped first, as jtext does),
 * and random bytes.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/jtext.h"
#include "supervisor/run.h"

/* What the writer wrote for one line (through a memory stream). */
static char *
written(void)
{
	char	*buf = NULL;
	size_t	 len = 0;
	FILE	*f;

	assert_non_null(f = open_memstream(&buf, &len));
	ui_json_end(f);
	assert_int_equal(fclose(f), 0);
	return buf;
}

/* What jansson writes for o, with the newline the writer ends with. */
static char *
dumped(json_t *o)
{
	char	*s, *line;

	assert_non_null(s = json_dumps(o, JSON_COMPACT | JSON_ENSURE_ASCII));
	assert_true(asprintf(&line, "%s\n", s) > 0);
	free(s);
	json_decref(o);
	return line;
}

static void
same_text(const char *text)
{
	json_t	*o = json_object();
	char	*a, *b;

	json_object_set_new(o, "event", json_string("note"));
	json_object_set_new(o, "text", jtext(text));
	json_object_set_new(o, "n", json_integer(-42));
	ui_json_begin("note");
	ui_json_str("text", text);
	ui_json_int("n", -42);
	a = written();
	b = dumped(o);
	assert_string_equal(a, b);
	free(a);
	free(b);
}

static void
test_ui_json_text(void **state)
{
	static const char *const texts[] = {
		"", "plain", "a \"quoted\" \\ back", "\b\f\n\r\t\x01\x1f\x7f",
		"caf\xc3\xa9", "\xe2\x82\xac and \xe2\x80\xae bidi",
		"\xf0\x9f\x98\x80 smile", "\xf4\x8f\xbf\xbf last",
		"bad \xff byte", "cut \xe2\x82", "overlong \xc0\xaf",
		"surrogate \xed\xa0\x80", "C1 \xc2\x85", "/slash/",
		NULL,
	};
	size_t	i;

	(void)state;
	for (i = 0; i < sizeof(texts) / sizeof(texts[0]); i++)
		same_text(texts[i]);
}

static void
test_ui_json_random(void **state)
{
	char		 s[64];
	unsigned	 seed = 33, i, k, len;

	(void)state;
	for (i = 0; i < 2000; i++) {
		len = (unsigned)rand_r(&seed) % (sizeof(s) - 1);
		for (k = 0; k < len; k++) {
			s[k] = (char)(rand_r(&seed) % 255 + 1);
			/* Mostly ASCII, as real text is. */
			if (rand_r(&seed) % 3 != 0)
				s[k] = (char)(s[k] & 0x7f ? s[k] & 0x7f : 'x');
		}
		s[len] = '\0';
		same_text(s);
	}
}

static void
test_ui_json_shapes(void **state)
{
	json_t	*o, *args, *rep;
	char	*a, *b;

	(void)state;
	/* Nested objects, booleans, a cut text, parsed arguments. */
	args = json_loads("{\"path\":\"a\\u00e9\",\"n\":[1,2]}", 0, NULL);
	assert_non_null(args);
	o = json_pack("{s:s, s:{s:I, s:I}, s:b, s:b, s:s, s:O}", "event",
	    "tool_result", "tokens", "in", (json_int_t)7, "out",
	    (json_int_t)8, "error", 1, "failed", 0, "text", "abc", "args",
	    args);
	ui_json_begin("tool_result");
	ui_json_open("tokens");
	ui_json_int("in", 7);
	ui_json_int("out", 8);
	ui_json_close();
	ui_json_bool("error", 1);
	ui_json_bool("failed", 0);
	ui_json_strn("text", "abcdef", 3);
	assert_int_equal(ui_json_tree("args", args), 0);
	json_decref(args);
	a = written();
	b = dumped(o);
	assert_string_equal(a, b);
	free(a);
	free(b);

	/* A report's members, then what the writer adds after them. */
	rep = json_pack("{s:s, s:i}", "event", "host_files", "count", 2);
	assert_int_equal(ui_json_object(rep), 0);
	ui_json_int("ms", 5);
	json_object_set_new(rep, "ms", json_integer(5));
	a = written();
	b = dumped(rep);
	assert_string_equal(a, b);
	free(a);
	free(b);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_ui_json_text),
		cmocka_unit_test(test_ui_json_random),
		cmocka_unit_test(test_ui_json_shapes),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}

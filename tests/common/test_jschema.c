/*
 * The JSON Schema subset (common/jschema.c) a queue job's answer is
 * checked against: each keyword accepts what it should and names what it
 * refuses, with the path; a broken schema is the schema's fault, not the
 * answer's; fenced answers are read; hostile depth is refused.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>
#include <jansson.h>

#include "common/jschema.h"

static const char schema[] =
"{\"type\":\"object\",\"required\":[\"name\",\"tags\"],"
" \"additionalProperties\":false,"
" \"properties\":{"
"  \"name\":{\"type\":\"string\"},"
"  \"n\":{\"type\":\"integer\"},"
"  \"score\":{\"type\":[\"number\",\"null\"]},"
"  \"level\":{\"enum\":[\"low\",\"high\"]},"
"  \"tags\":{\"type\":\"array\",\"items\":{\"type\":\"string\"}},"
"  \"ok\":{\"type\":\"boolean\"}}}";

/* Errors of text against schema (-1 for an unusable schema). */
static int
check(const char *s, const char *text, char *out, size_t outsz)
{
	json_t	*js, *jv;
	int	 n;

	assert_non_null(js = json_loads(s, JSON_DECODE_ANY, NULL));
	assert_non_null(jv = json_loads(text, JSON_DECODE_ANY, NULL));
	n = jschema_validate(js, jv, out, outsz);
	json_decref(js);
	json_decref(jv);
	return n;
}

static void
test_valid(void **state)
{
	char	out[512];

	(void)state;
	assert_int_equal(check(schema, "{\"name\":\"a\",\"tags\":[],"
	    "\"n\":3,\"score\":null,\"level\":\"low\",\"ok\":true}", out,
	    sizeof(out)), 0);
	assert_string_equal(out, "");
	assert_int_equal(check(schema, "{\"name\":\"a\",\"tags\":[\"x\"],"
	    "\"score\":1.5,\"n\":2.0}", out, sizeof(out)), 0);
	/* Unknown keywords are ignored, not refused. */
	assert_int_equal(check("{\"type\":\"string\",\"minLength\":99}",
	    "\"x\"", out, sizeof(out)), 0);
	assert_int_equal(check("true", "[1,{}]", out, sizeof(out)), 0);
}

static void
test_each_keyword_refuses(void **state)
{
	char	out[1024];

	(void)state;
	/* type, at the root */
	assert_int_equal(check(schema, "[1]", out, sizeof(out)), 1);
	assert_string_equal(out, "$: expected object, got array");
	/* required, additionalProperties, nested type, items, enum */
	assert_int_equal(check(schema, "{\"name\":7,\"tags\":[\"a\",2],"
	    "\"extra\":1,\"level\":\"mid\",\"n\":1.5,\"score\":\"s\"}", out,
	    sizeof(out)), 6);
	assert_non_null(strstr(out, "$.name: expected string, got integer"));
	assert_non_null(strstr(out, "$.tags[1]: expected string, got "
	    "integer"));
	assert_non_null(strstr(out, "$: property \"extra\" is not allowed"));
	assert_non_null(strstr(out, "$.level: not one of the values"));
	assert_non_null(strstr(out, "$.n: expected integer, got number"));
	assert_non_null(strstr(out, "$.score: expected one of the types"));
	assert_int_equal(check(schema, "{}", out, sizeof(out)), 2);
	assert_non_null(strstr(out, "missing required property \"name\""));
	assert_non_null(strstr(out, "missing required property \"tags\""));
	/* additionalProperties as a schema; const; false */
	assert_int_equal(check("{\"additionalProperties\":{\"type\":"
	    "\"integer\"}}", "{\"a\":1,\"b\":\"x\"}", out, sizeof(out)), 1);
	assert_string_equal(out, "$.b: expected integer, got string");
	assert_int_equal(check("{\"const\":3}", "4", out, sizeof(out)), 1);
	assert_int_equal(check("{\"items\":false}", "[1]", out, sizeof(out)),
	    1);
	assert_string_equal(out, "$[0]: no value is allowed here");
}

static void
test_bad_schema(void **state)
{
	char	out[256];

	(void)state;
	assert_int_equal(check("{\"type\":\"thing\"}", "1", out, sizeof(out)),
	    -1);
	assert_non_null(strstr(out, "the schema is not usable"));
	assert_int_equal(check("{\"required\":\"a\"}", "{}", out,
	    sizeof(out)), -1);
	assert_int_equal(check("{\"properties\":[]}", "{}", out, sizeof(out)),
	    -1);
	assert_int_equal(check("[]", "1", out, sizeof(out)), -1);
}

/* Many errors in a small buffer: cut, marked, never overrun. */
static void
test_cut(void **state)
{
	char	out[40];

	(void)state;
	memset(out, 'Z', sizeof(out));
	assert_int_equal(check("{\"items\":{\"type\":\"string\"}}",
	    "[1,2,3,4,5,6,7,8,9]", out, 32), 9);
	assert_int_equal(strlen(out), 31);
	assert_string_equal(out + 28, "...");
	assert_int_equal(out[32], 'Z');
}

/* A schema and a value 100 levels deep: refused past the limit, not
 * walked to the end. */
static void
test_deep_value(void **state)
{
	char	out[256], *text, *sch;
	size_t	i, n = 100, len;

	(void)state;
	assert_non_null(text = malloc(2 * n + 1));
	assert_non_null(sch = malloc(n * 12 + 3 + n + 1));
	for (i = 0; i < n; i++) {
		text[i] = '[';
		text[2 * n - 1 - i] = ']';
	}
	text[2 * n] = '\0';
	sch[0] = '\0';
	for (i = 0; i < n; i++)
		strcat(sch, "{\"items\":");
	strcat(sch, "{}");
	len = strlen(sch);
	for (i = 0; i < n; i++)
		sch[len + i] = '}';
	sch[len + n] = '\0';
	assert_int_equal(check(sch, text, out, sizeof(out)), 1);
	assert_non_null(strstr(out, "nested deeper than 64 levels"));
	free(text);
	free(sch);
}

static void
test_check_text(void **state)
{
	char	out[256], *o;

	(void)state;
	assert_int_equal(jschema_check_text(schema, "```json\n{\"name\":"
	    "\"a\", \"tags\": []}\n```\n", &o, out, sizeof(out)), 0);
	assert_string_equal(o, "{\"name\":\"a\",\"tags\":[]}");
	free(o);
	assert_int_equal(jschema_check_text(schema, "the answer is 4", &o,
	    out, sizeof(out)), 1);
	assert_null(o);
	assert_non_null(strstr(out, "the answer is not JSON"));
	assert_int_equal(jschema_check_text(schema, "{\"name\":1}", &o, out,
	    sizeof(out)), 1);
	assert_non_null(strstr(out, "$.name: expected string"));
	assert_int_equal(jschema_check_text("{nope", "{}", &o, out,
	    sizeof(out)), -1);
	assert_non_null(strstr(out, "schema is not JSON"));
	assert_int_equal(jschema_check_text(schema, NULL, &o, out,
	    sizeof(out)), 1);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_valid),
		cmocka_unit_test(test_each_keyword_refuses),
		cmocka_unit_test(test_bad_schema),
		cmocka_unit_test(test_cut),
		cmocka_unit_test(test_deep_value),
		cmocka_unit_test(test_check_text),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}

/*
 * The JSON Schema subset (common/jschema.c) a queue job's answer is
 * checked against: each keyword accepts what it should and names what it
 * refuses, with the path; a broken schema is the schema's fault, not the
 * answer's, named by the path of the keyword at fault (jschema_usable);
 * fenced answers are read; a schema too deep is refused.
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
#include "common/jschema_testapi.h"

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

/* A schema 100 levels deep is not usable (the walk of a value would stop
 * at 64); one 64 deep is, and a value as deep is checked to the end. */
static void
test_deep_schema(void **state)
{
	char	out[1024], *text, *sch;
	size_t	i, n = 100, len;
	json_t	*js;

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
	assert_int_equal(check(sch, text, out, sizeof(out)), -1);
	assert_non_null(strstr(out, "the schema is not usable: $.items.items."));
	assert_non_null(strstr(out, ": nested deeper than 64 levels"));
	assert_non_null(js = json_loads(sch, 0, NULL));
	assert_int_equal(jschema_usable(js, out, sizeof(out)), -1);
	json_decref(js);
	/* 64 levels of items, the innermost a string's: usable, and the
	 * value's 65th level (1) is checked against it. */
	sch[0] = '\0';
	for (i = 0; i < 64; i++)
		strcat(sch, "{\"items\":");
	strcat(sch, "{\"type\":\"string\"}");
	len = strlen(sch);
	for (i = 0; i < 64; i++)
		sch[len + i] = '}';
	sch[len + 64] = '\0';
	memset(text, '[', 64);
	text[64] = '1';
	memset(text + 65, ']', 64);
	text[129] = '\0';
	assert_int_equal(check(sch, text, out, sizeof(out)), 1);
	assert_non_null(strstr(out, "[0][0]: expected string, got integer"));
	free(text);
	free(sch);
}

/*
 * Every keyword the subset reads, holding what it cannot use, anywhere a
 * schema nests, is refused with the path of the keyword at fault;
 * keywords it ignores are not looked at.
 */
static void
test_usable(void **state)
{
	static const char *const bad[][2] = {
		{ "{\"required\":\"n\"}", "$.required: must be a list of "
		    "property names, not string" },
		{ "{\"required\":[\"a\",3]}", "$.required[1]: must be a "
		    "property's name (a string), not integer" },
		{ "{\"properties\":[1,2]}", "$.properties: must be an object "
		    "of a schema per property, not array" },
		{ "{\"type\":5}", "$.type: must be a type's name or a list of "
		    "them, not integer" },
		{ "{\"type\":\"nonsense\"}", "$.type: \"nonsense\" is not a "
		    "type" },
		{ "{\"type\":[\"string\",\"thing\"]}", "$.type[1]: \"thing\" "
		    "is not a type" },
		{ "{\"items\":3}", "$.items: must be a schema (an object or "
		    "true or false), not integer" },
		{ "{\"enum\":{}}", "$.enum: must be a list of the values "
		    "allowed, not object" },
		{ "{\"additionalProperties\":1}", "$.additionalProperties: "
		    "must be a schema (an object or true or false), not "
		    "integer" },
		{ "{\"properties\":{\"a\":{\"items\":{\"required\":\"n\"}}}}",
		    "$.properties.a.items.required: must be a list" },
		{ "{\"properties\":{\"a\":3}}", "$.properties.a: must be a "
		    "schema" },
		{ "{\"items\":{\"additionalProperties\":{\"type\":5}}}",
		    "$.items.additionalProperties.type: must be a type's" },
		{ "{\"properties\":{\"a\":{\"enum\":{}}}}",
		    "$.properties.a.enum: must be a list" },
		{ "{\"additionalProperties\":{\"items\":3}}",
		    "$.additionalProperties.items: must be a schema" },
		{ "[1]", "not an object (a JSON Schema is one)" },
		{ "true", "not an object" },
	};
	static const char *const good[] = {
		"{}",
		"{\"type\":[\"number\",\"null\"],\"enum\":[],\"const\":{}}",
		"{\"items\":false,\"additionalProperties\":true}",
		"{\"properties\":{\"a\":true,\"b\":{\"required\":[]}}}",
		/* Ignored keywords: not read, not refused. */
		"{\"anyOf\":[{\"type\":5}],\"minLength\":\"x\"}",
	};
	char	why[256];
	json_t	*js;
	size_t	i;

	(void)state;
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		assert_non_null(js = json_loads(bad[i][0], JSON_DECODE_ANY,
		    NULL));
		assert_int_equal(jschema_usable(js, why, sizeof(why)), -1);
		if (strncmp(why, bad[i][1], strlen(bad[i][1])) != 0)
			fail_msg("%s: \"%s\", not \"%s...\"", bad[i][0], why,
			    bad[i][1]);
		json_decref(js);
		assert_int_equal(jschema_usable_text(bad[i][0], why,
		    sizeof(why)), -1);
		/* The value check refuses it too, whatever the value. */
		/* json_is_object is a macro that names its argument twice. */
		js = json_loads(bad[i][0], 0, NULL);
		if (json_is_object(js))
			assert_int_equal(check(bad[i][0], "null", why,
			    sizeof(why)), -1);
		json_decref(js);
	}
	for (i = 0; i < sizeof(good) / sizeof(good[0]); i++) {
		assert_non_null(js = json_loads(good[i], 0, NULL));
		if (jschema_usable(js, why, sizeof(why)) != 0)
			fail_msg("%s: %s", good[i], why);
		json_decref(js);
	}
	assert_int_equal(jschema_usable_text("{\"type\":", why, sizeof(why)),
	    -1);
	assert_non_null(strstr(why, "not JSON: line 1"));
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
		cmocka_unit_test(test_deep_schema),
		cmocka_unit_test(test_usable),
		cmocka_unit_test(test_check_text),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}

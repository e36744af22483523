/*
 * A practical subset of JSON Schema (jschema.h). One walk over the schema
 * says whether it is usable, naming the first keyword at fault; one walk
 * over the value, its path kept in a buffer, trusts the schema so checked;
 * every error is a line in the caller's buffer, which the queue sends back
 * as the attempt's error.
 */
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "common/jschema.h"
#include "common/jschema_testapi.h"

#define JSCHEMA_PATH_MAX	512

struct jschema {
	char	*out;
	size_t	 outsz, len;
	int	 nerr;
	char	 path[JSCHEMA_PATH_MAX];
};

static void	jschema_walk(struct jschema *, const json_t *, const json_t *,
		    int);
static int	jschema_sub(const json_t *, char *, size_t);

static void
jschema_say(struct jschema *j, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

/* One line "$.path: what"; past the buffer, the last bytes say "...". */
static void
jschema_say(struct jschema *j, const char *fmt, ...)
{
	va_list	ap;
	int	n;

	j->nerr++;
	if (j->outsz == 0 || j->len + 1 >= j->outsz)
		return;
	n = snprintf(j->out + j->len, j->outsz - j->len, "%s%s: ",
	    j->len > 0 ? "\n" : "", j->path);
	if (n > 0)
		j->len += (size_t)n;
	if (j->len < j->outsz) {
		va_start(ap, fmt);
		n = vsnprintf(j->out + j->len, j->outsz - j->len, fmt, ap);
		va_end(ap);
		if (n > 0)
			j->len += (size_t)n;
	}
	if (j->len >= j->outsz) {
		j->len = j->outsz - 1;
		if (j->outsz > 4)
			memcpy(j->out + j->outsz - 4, "...", 4);
	}
}

static const char *
jschema_type_of(const json_t *v)
{
	switch (json_typeof(v)) {
	case JSON_OBJECT:	return "object";
	case JSON_ARRAY:	return "array";
	case JSON_STRING:	return "string";
	case JSON_INTEGER:	return "integer";
	case JSON_REAL:		return "number";
	case JSON_TRUE:
	case JSON_FALSE:	return "boolean";
	case JSON_NULL:		return "null";
	}
	return "unknown";
}

/* v is of the type named; -1 for a name JSON Schema does not have. */
static int
jschema_is(const json_t *v, const char *name)
{
	if (strcmp(name, "number") == 0)
		return json_is_number(v);
	if (strcmp(name, "integer") == 0)
		return json_is_integer(v) || (json_is_real(v) &&
		    json_real_value(v) == (double)(long long)json_real_value(v));
	if (strcmp(name, "object") == 0 || strcmp(name, "array") == 0 ||
	    strcmp(name, "string") == 0 || strcmp(name, "null") == 0)
		return strcmp(jschema_type_of(v), name) == 0;
	if (strcmp(name, "boolean") == 0)
		return json_is_boolean(v);
	return -1;
}

/* "type": a name or a list of names (checked usable). */
static int
jschema_type(struct jschema *j, const json_t *type, const json_t *v)
{
	size_t	 i;
	json_t	*t;

	if (json_is_string(type)) {
		if (jschema_is(v, json_string_value(type)) == 1)
			return 1;
		jschema_say(j, "expected %s, got %s",
		    json_string_value(type), jschema_type_of(v));
		return 0;
	}
	json_array_foreach(type, i, t)
		if (jschema_is(v, json_string_value(t)) == 1)
			return 1;
	jschema_say(j, "expected one of the types listed, got %s",
	    jschema_type_of(v));
	return 0;
}

static void
jschema_enum(struct jschema *j, const json_t *e, const json_t *v)
{
	size_t	 i;
	json_t	*x;

	json_array_foreach(e, i, x)
		if (json_equal(x, v))
			return;
	jschema_say(j, "not one of the values the schema's enum allows");
}

/* Walk into a child with path suffix appended; restore after. */
static void
jschema_child(struct jschema *j, const json_t *s, const json_t *v, int depth,
    const char *fmt, const char *key, size_t idx)
{
	size_t	len = strlen(j->path);

	if (key != NULL)
		snprintf(j->path + len, sizeof(j->path) - len, fmt, key);
	else
		snprintf(j->path + len, sizeof(j->path) - len, fmt, idx);
	jschema_walk(j, s, v, depth + 1);
	j->path[len] = '\0';
}

static void
jschema_required(struct jschema *j, const json_t *req, const json_t *v)
{
	size_t	 i;
	json_t	*k;

	json_array_foreach(req, i, k)
		if (json_object_get(v, json_string_value(k)) == NULL)
			jschema_say(j, "missing required property \"%s\"",
			    json_string_value(k));
}

static void
jschema_object(struct jschema *j, const json_t *s, const json_t *v, int depth)
{
	const json_t	*props = json_object_get(s, "properties");
	const json_t	*add = json_object_get(s, "additionalProperties");
	const json_t	*ps;
	const char	*k;
	json_t		*x;

	if (json_object_get(s, "required") != NULL)
		jschema_required(j, json_object_get(s, "required"), v);
	json_object_foreach((json_t *)(uintptr_t)v, k, x) {
		if ((ps = props ? json_object_get(props, k) : NULL) != NULL)
			jschema_child(j, ps, x, depth, ".%s", k, 0);
		else if (json_is_false(add))
			jschema_say(j, "property \"%s\" is not allowed "
			    "(additionalProperties is false)", k);
		else if (json_is_object(add))
			jschema_child(j, add, x, depth, ".%s", k, 0);
	}
}

static void
jschema_array(struct jschema *j, const json_t *s, const json_t *v, int depth)
{
	const json_t	*items = json_object_get(s, "items");
	size_t		 i;
	json_t		*x;

	if (items == NULL)
		return;
	json_array_foreach(v, i, x)
		jschema_child(j, items, x, depth, "[%zu]", NULL, i);
}

/*
 * Is the schema usable: each keyword this subset knows holds what it must,
 * in every schema nested under properties, items and additionalProperties.
 * The first fault goes in why as "$.path.keyword: what".
 */
struct jschema_use {
	char	*why;
	size_t	 whysz;
	char	 path[JSCHEMA_PATH_MAX];
};

static int	jschema_use_walk(struct jschema_use *, const json_t *, int);

static int
jschema_use_bad(struct jschema_use *u, const char *what, const json_t *x)
{
	snprintf(u->why, u->whysz, "%s: %s%s%s", u->path, what,
	    x != NULL ? ", not " : "", x != NULL ? jschema_type_of(x) : "");
	return -1;
}

/* A name jschema_is knows. */
static int
jschema_use_typename(struct jschema_use *u, const json_t *t)
{
	char	what[160];

	if (!json_is_string(t))
		return jschema_use_bad(u, "must be a type's name (a string)",
		    t);
	if (jschema_is(json_null(), json_string_value(t)) != -1)
		return 0;
	snprintf(what, sizeof(what), "\"%.40s\" is not a type (give object, "
	    "array, string, number, integer, boolean or null)",
	    json_string_value(t));
	return jschema_use_bad(u, what, NULL);
}

/* Each element of a list, its index on the path. */
static int
jschema_use_each(struct jschema_use *u, const json_t *list,
    int (*ok)(struct jschema_use *, const json_t *))
{
	size_t	 i, len = strlen(u->path);
	json_t	*x;

	json_array_foreach(list, i, x) {
		snprintf(u->path + len, sizeof(u->path) - len, "[%zu]", i);
		if (ok(u, x) == -1)
			return -1;
		u->path[len] = '\0';
	}
	return 0;
}

static int
jschema_use_type(struct jschema_use *u, const json_t *x, int depth)
{
	(void)depth;
	if (json_is_array(x))
		return jschema_use_each(u, x, jschema_use_typename);
	if (!json_is_string(x))
		return jschema_use_bad(u, "must be a type's name or a list of "
		    "them", x);
	return jschema_use_typename(u, x);
}

static int
jschema_use_name(struct jschema_use *u, const json_t *x)
{
	return json_is_string(x) ? 0 : jschema_use_bad(u, "must be a "
	    "property's name (a string)", x);
}

static int
jschema_use_required(struct jschema_use *u, const json_t *x, int depth)
{
	(void)depth;
	if (!json_is_array(x))
		return jschema_use_bad(u, "must be a list of property names",
		    x);
	return jschema_use_each(u, x, jschema_use_name);
}

static int
jschema_use_enum(struct jschema_use *u, const json_t *x, int depth)
{
	(void)depth;
	return json_is_array(x) ? 0 : jschema_use_bad(u, "must be a list of "
	    "the values allowed", x);
}

/* A schema in its own right: items, additionalProperties. */
static int
jschema_use_sub(struct jschema_use *u, const json_t *x, int depth)
{
	return jschema_use_walk(u, x, depth + 1);
}

static int
jschema_use_props(struct jschema_use *u, const json_t *x, int depth)
{
	size_t		 len = strlen(u->path);
	const char	*k;
	json_t		*ps;

	if (!json_is_object(x))
		return jschema_use_bad(u, "must be an object of a schema per "
		    "property", x);
	json_object_foreach((json_t *)(uintptr_t)x, k, ps) {
		snprintf(u->path + len, sizeof(u->path) - len, ".%s", k);
		if (jschema_use_walk(u, ps, depth + 1) == -1)
			return -1;
		u->path[len] = '\0';
	}
	return 0;
}

/* The keywords jschema_walk reads, and what each must hold. */
static const struct {
	const char	*key;
	int		(*ok)(struct jschema_use *, const json_t *, int);
} jschema_keywords[] = {
	{ "type", jschema_use_type },
	{ "properties", jschema_use_props },
	{ "required", jschema_use_required },
	{ "items", jschema_use_sub },
	{ "enum", jschema_use_enum },
	{ "additionalProperties", jschema_use_sub },
};

static int
jschema_use_walk(struct jschema_use *u, const json_t *s, int depth)
{
	size_t		 i, len = strlen(u->path);
	const json_t	*x;

	char		 deep[64];

	if (depth > JSCHEMA_MAX_DEPTH) {
		snprintf(deep, sizeof(deep), "nested deeper than %d levels",
		    JSCHEMA_MAX_DEPTH);
		return jschema_use_bad(u, deep, NULL);
	}
	if (json_is_boolean(s))
		return 0;
	if (!json_is_object(s))
		return jschema_use_bad(u, "must be a schema (an object or "
		    "true or false)", s);
	for (i = 0; i < sizeof(jschema_keywords) /
	    sizeof(jschema_keywords[0]); i++) {
		if ((x = json_object_get(s, jschema_keywords[i].key)) == NULL)
			continue;
		snprintf(u->path + len, sizeof(u->path) - len, ".%s",
		    jschema_keywords[i].key);
		if (jschema_keywords[i].ok(u, x, depth) == -1)
			return -1;
		u->path[len] = '\0';
	}
	return 0;
}

/* A schema at any depth, a boolean too: 0 or -1 (why says). */
static int
jschema_sub(const json_t *s, char *why, size_t whysz)
{
	struct jschema_use	u;

	memset(&u, 0, sizeof(u));
	u.why = why;
	u.whysz = whysz;
	strlcpy(u.path, "$", sizeof(u.path));
	if (whysz > 0)
		why[0] = '\0';
	return jschema_use_walk(&u, s, 0);
}

int
jschema_usable(const json_t *schema, char *why, size_t whysz)
{
	if (!json_is_object(schema)) {
		snprintf(why, whysz, "not an object (a JSON Schema is one)");
		return -1;
	}
	return jschema_sub(schema, why, whysz);
}

int
jschema_usable_text(const char *text, char *why, size_t whysz)
{
	json_error_t	 je;
	json_t		*s;
	int		 rc;

	if ((s = json_loads(text, JSON_DECODE_ANY, &je)) == NULL) {
		snprintf(why, whysz, "not JSON: line %d: %s", je.line,
		    je.text);
		return -1;
	}
	rc = jschema_usable(s, why, whysz);
	json_decref(s);
	return rc;
}

/* v against s, a schema jschema_sub found usable: no deeper than
 * JSCHEMA_MAX_DEPTH, and so is the walk, one level of s a level of v. */
static void
jschema_walk(struct jschema *j, const json_t *s, const json_t *v, int depth)
{
	const json_t	*x;

	if (json_is_true(s))
		return;
	if (json_is_false(s)) {
		jschema_say(j, "no value is allowed here");
		return;
	}
	if ((x = json_object_get(s, "type")) != NULL &&
	    !jschema_type(j, x, v))
		return;
	if ((x = json_object_get(s, "enum")) != NULL)
		jschema_enum(j, x, v);
	if ((x = json_object_get(s, "const")) != NULL && !json_equal(x, v))
		jschema_say(j, "not the value the schema's const requires");
	if (json_is_object(v))
		jschema_object(j, s, v, depth);
	else if (json_is_array(v))
		jschema_array(j, s, v, depth);
}

int
jschema_validate(const json_t *schema, const json_t *v, char *out,
    size_t outsz)
{
	struct jschema	j;
	char		why[JSCHEMA_PATH_MAX + 256];

	if (jschema_sub(schema, why, sizeof(why)) == -1) {
		snprintf(out, outsz, "the schema is not usable: %s", why);
		return -1;
	}
	memset(&j, 0, sizeof(j));
	j.out = out;
	j.outsz = outsz;
	if (outsz > 0)
		out[0] = '\0';
	strlcpy(j.path, "$", sizeof(j.path));
	jschema_walk(&j, schema, v, 0);
	return j.nerr;
}

/* The text inside one ``` fence (```json too), or the text itself. */
static char *
jschema_unfence(const char *s)
{
	const char	*p, *end;

	while (*s == ' ' || *s == '\n' || *s == '\t' || *s == '\r')
		s++;
	if (strncmp(s, "```", 3) != 0 || (p = strchr(s, '\n')) == NULL)
		return strdup(s);
	end = s + strlen(s);
	while (end > p && strchr(" \n\t\r", end[-1]) != NULL)
		end--;
	if (end - p < 3 || strncmp(end - 3, "```", 3) != 0)
		return strdup(s);
	return strndup(p + 1, (size_t)(end - 3 - (p + 1)));
}

int
jschema_check_text(const char *schema, const char *answer, char **output,
    char *out, size_t outsz)
{
	json_error_t	 je;
	json_t		*s, *v = NULL;
	char		*text;
	int		 rc;

	*output = NULL;
	if ((s = json_loads(schema, 0, &je)) == NULL) {
		snprintf(out, outsz, "the job's schema is not JSON: line %d: "
		    "%s", je.line, je.text);
		return -1;
	}
	if ((text = jschema_unfence(answer ? answer : "")) == NULL) {
		snprintf(out, outsz, "out of memory");
		rc = -1;
	} else if ((v = json_loads(text, JSON_DECODE_ANY, &je)) == NULL) {
		snprintf(out, outsz, "the answer is not JSON (the schema "
		    "asks for JSON): line %d: %s", je.line, je.text);
		rc = 1;
	} else if ((rc = jschema_validate(s, v, out, outsz)) > 0)
		rc = 1;
	else if (rc == 0 && (*output = json_dumps(v, JSON_COMPACT |
	    JSON_ENCODE_ANY)) == NULL) {
		snprintf(out, outsz, "out of memory");
		rc = -1;
	}
	free(text);
	json_decref(v);
	json_decref(s);
	return rc;
}

int
jschema_agent_check(void *arg, const char *result, char *why, size_t whysz)
{
	const char *const	*schema = arg;
	char			*output = NULL;
	int			 rc;

	rc = jschema_check_text(*schema, result, &output, why, whysz);
	free(output);
	return rc == 0 ? 0 : -1;
}

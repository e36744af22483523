/*
 * A practical subset of JSON Schema (jschema.h). One walk over the value,
 * its path kept in a buffer; every error is a line in the caller's buffer,
 * which the queue sends back as the attempt's error.
 */
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "common/jschema.h"

#define JSCHEMA_PATH_MAX	512

struct jschema {
	char	*out;
	size_t	 outsz, len;
	int	 nerr;
	int	 bad;		/* the schema itself is unusable */
	char	 path[JSCHEMA_PATH_MAX];
};

static void	jschema_walk(struct jschema *, const json_t *, const json_t *,
		    int);

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

static void
jschema_bad(struct jschema *j, const char *what)
{
	j->bad = 1;
	jschema_say(j, "the schema is not usable: %s", what);
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

/* "type": a name or a list of names. */
static int
jschema_type(struct jschema *j, const json_t *type, const json_t *v)
{
	size_t	 i;
	json_t	*t;
	int	 r;

	if (json_is_string(type)) {
		if ((r = jschema_is(v, json_string_value(type))) == -1)
			jschema_bad(j, "\"type\" names an unknown type");
		else if (r == 0)
			jschema_say(j, "expected %s, got %s",
			    json_string_value(type), jschema_type_of(v));
		return r == 1;
	}
	if (!json_is_array(type)) {
		jschema_bad(j, "\"type\" is neither a string nor a list");
		return 0;
	}
	json_array_foreach(type, i, t) {
		if (!json_is_string(t) || (r = jschema_is(v,
		    json_string_value(t))) == -1) {
			jschema_bad(j, "\"type\" lists an unknown type");
			return 0;
		}
		if (r == 1)
			return 1;
	}
	jschema_say(j, "expected one of the types listed, got %s",
	    jschema_type_of(v));
	return 0;
}

static void
jschema_enum(struct jschema *j, const json_t *e, const json_t *v)
{
	size_t	 i;
	json_t	*x;

	if (!json_is_array(e)) {
		jschema_bad(j, "\"enum\" is not a list");
		return;
	}
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

	if (!json_is_array(req)) {
		jschema_bad(j, "\"required\" is not a list");
		return;
	}
	json_array_foreach(req, i, k) {
		if (!json_is_string(k)) {
			jschema_bad(j, "\"required\" lists a non-string");
			return;
		}
		if (json_object_get(v, json_string_value(k)) == NULL)
			jschema_say(j, "missing required property \"%s\"",
			    json_string_value(k));
	}
}

static void
jschema_object(struct jschema *j, const json_t *s, const json_t *v, int depth)
{
	const json_t	*props = json_object_get(s, "properties");
	const json_t	*add = json_object_get(s, "additionalProperties");
	const json_t	*ps;
	const char	*k;
	json_t		*x;

	if (props != NULL && !json_is_object(props)) {
		jschema_bad(j, "\"properties\" is not an object");
		return;
	}
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
	if (!json_is_object(items) && !json_is_boolean(items)) {
		jschema_bad(j, "\"items\" is not a schema");
		return;
	}
	json_array_foreach(v, i, x)
		jschema_child(j, items, x, depth, "[%zu]", NULL, i);
}

static void
jschema_walk(struct jschema *j, const json_t *s, const json_t *v, int depth)
{
	const json_t	*x;

	if (j->bad)
		return;
	if (depth > JSCHEMA_MAX_DEPTH) {
		jschema_say(j, "nested deeper than %d levels",
		    JSCHEMA_MAX_DEPTH);
		return;
	}
	if (json_is_true(s))
		return;
	if (json_is_false(s)) {
		jschema_say(j, "no value is allowed here");
		return;
	}
	if (!json_is_object(s)) {
		jschema_bad(j, "a schema is an object or a boolean");
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

	memset(&j, 0, sizeof(j));
	j.out = out;
	j.outsz = outsz;
	if (outsz > 0)
		out[0] = '\0';
	strlcpy(j.path, "$", sizeof(j.path));
	jschema_walk(&j, schema, v, 0);
	if (j.bad) {
		/* Only the schema's fault is worth saying. */
		snprintf(out, outsz, "%s", strstr(out, "the schema is not") ?
		    strstr(out, "the schema is not") : "the schema is not "
		    "usable");
		return -1;
	}
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

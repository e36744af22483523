/*
 * warren queue export --format csv: one row a job, what went in and what
 * came out spread over columns a spreadsheet sorts and filters
 * (docs/queue.md, "Results: export and apply"):
 *
 *	id, key, status, attempts, task,
 *	param.K ...	every key of the jobs' params, first seen first (a
 *			CSV's header columns, a JSON line's params keys);
 *			params: a job's params that are not a JSON object
 *	answer,
 *	output.K ...	the properties of the jobs' schemas in their order,
 *			then every other key of their outputs;
 *			output: an output that is not a JSON object
 *	error, tokens_in, tokens_out, wall_ms, run_id, diff_stat (one line),
 *	changes_bytes, run_where, applied_ms, applied_by
 *
 * The prefixes are always there, so that no key takes another's column
 * and a column's name does not depend on which jobs are exported. Every
 * text cell came from a user, a model or a tool: it is escaped as on a
 * terminal (\xNN), and one a spreadsheet would take for a formula is
 * neutralised (csv_write_neutral). Numbers warren counts, and JSON
 * numbers (printed by jansson, so numbers), go out as they are.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "cli/cmd_queue.h"
#include "cli/csv.h"
#include "common/str.h"

/* Columns drawn from a JSON object of each job (params, output). */
struct qcsv_group {
	const char	*prefix;	/* "param." */
	const char	*whole;		/* "params": a value not an object */
	json_t		*keys;		/* the keys, in column order */
	json_t		*seen;		/* key -> true */
	int		 has_whole;
	json_t		**val;		/* a job's value; NULL: none */
};

static int
qcsv_group_init(struct qcsv_group *g, const char *prefix, const char *whole,
    size_t n)
{
	memset(g, 0, sizeof(*g));
	g->prefix = prefix;
	g->whole = whole;
	g->keys = json_array();
	g->seen = json_object();
	g->val = calloc(n > 0 ? n : 1, sizeof(*g->val));
	return g->keys != NULL && g->seen != NULL && g->val != NULL ? 0 : -1;
}

static void
qcsv_group_free(struct qcsv_group *g, size_t n)
{
	size_t	i;

	for (i = 0; g->val != NULL && i < n; i++)
		json_decref(g->val[i]);
	free(g->val);
	json_decref(g->keys);
	json_decref(g->seen);
}

static int
qcsv_group_key(struct qcsv_group *g, const char *k)
{
	if (json_object_get(g->seen, k) != NULL)
		return 0;
	if (json_object_set_new(g->seen, k, json_true()) == -1 ||
	    json_array_append_new(g->keys, json_string(k)) == -1)
		return -1;
	return 0;
}

/* Job i's stored JSON text: its keys become columns. */
static int
qcsv_group_scan(struct qcsv_group *g, size_t i, const char *text)
{
	const char	*k;
	json_t		*v, *x;

	if (text == NULL || (v = cmd_queue_json_text(text)) == NULL)
		return text == NULL ? 0 : -1;
	if (json_is_null(v)) {
		json_decref(v);
		return 0;
	}
	g->val[i] = v;
	if (!json_is_object(v)) {
		g->has_whole = 1;
		return 0;
	}
	json_object_foreach(v, k, x)
		if (qcsv_group_key(g, k) == -1)
			return -1;
	return 0;
}

/* The properties a job's schema names, in its order. */
static int
qcsv_schema_keys(struct qcsv_group *g, const char *schema)
{
	const char	*k;
	json_t		*s, *props, *x;
	int		 rc = 0;

	if (schema == NULL || (s = json_loads(schema, 0, NULL)) == NULL)
		return 0;
	props = json_object_get(s, "properties");
	if (json_is_object(props))
		json_object_foreach(props, k, x)
			if ((rc = qcsv_group_key(g, k)) == -1)
				break;
	json_decref(s);
	return rc;
}

/* A text cell: escaped, neutralised if it reads as a formula. */
static void
qcsv_text(const char *raw, int flags)
{
	char	*e;

	putchar(',');
	if (raw == NULL || (e = str_escape_dup(raw, strlen(raw), flags)) ==
	    NULL)
		return;
	if (csv_formula_like(raw) || csv_formula_like(e))
		csv_write_neutral(stdout, e);
	else
		csv_write_field(stdout, e);
	free(e);
}

static void
qcsv_num(long long n)
{
	printf(",%lld", n);
}

/* A JSON value's cell: text as text, numbers and booleans as they are,
 * objects and arrays as compact JSON text; null and absent empty. */
static void
qcsv_json(json_t *v)
{
	char	*s;

	if (json_is_string(v)) {
		qcsv_text(json_string_value(v), STR_ESC_KEEP_NL);
		return;
	}
	if (v == NULL || json_is_null(v)) {
		putchar(',');
		return;
	}
	s = json_dumps(v, JSON_COMPACT | JSON_ENCODE_ANY);
	if (json_is_number(v) || json_is_boolean(v)) {
		putchar(',');
		if (s != NULL)
			fputs(s, stdout);
	} else
		qcsv_text(s, STR_ESC_KEEP_NL);
	free(s);
}

/* The diff stat on one line: its lines trimmed, joined by "; ". */
static char *
qcsv_one_line(const char *s)
{
	const char	*p, *e, *nl;
	char		*out, *o;

	if (s == NULL || (out = malloc(2 * strlen(s) + 1)) == NULL)
		return NULL;
	o = out;
	for (p = s; *p != '\0'; p = *nl != '\0' ? nl + 1 : nl) {
		if ((nl = strchr(p, '\n')) == NULL)
			nl = p + strlen(p);
		for (e = nl; e > p && strchr(" \t\r", e[-1]) != NULL; e--)
			;
		while (p < e && strchr(" \t", *p) != NULL)
			p++;
		if (p == e)
			continue;
		if (o != out) {
			*o++ = ';';
			*o++ = ' ';
		}
		memcpy(o, p, (size_t)(e - p));
		o += e - p;
	}
	*o = '\0';
	return out;
}

static void
qcsv_group_header(const struct qcsv_group *g)
{
	size_t	 i;
	char	*name;

	for (i = 0; i < json_array_size(g->keys); i++) {
		if (asprintf(&name, "%s%s", g->prefix, json_string_value(
		    json_array_get(g->keys, i))) == -1) {
			putchar(',');
			continue;
		}
		qcsv_text(name, 0);
		free(name);
	}
	if (g->has_whole)
		printf(",%s", g->whole);
}

static void
qcsv_header(const struct qcsv_group *params, const struct qcsv_group *output)
{
	printf("id,key,status,attempts,task");
	qcsv_group_header(params);
	printf(",answer");
	qcsv_group_header(output);
	printf(",error,tokens_in,tokens_out,wall_ms,run_id,diff_stat,"
	    "changes_bytes,run_where,applied_ms,applied_by\r\n");
}

/* Job i's cells of g: each key's value, then the value whole if it is
 * not an object. */
static void
qcsv_group_row(const struct qcsv_group *g, size_t i)
{
	json_t	*v = g->val[i];
	size_t	 k;

	for (k = 0; k < json_array_size(g->keys); k++)
		qcsv_json(json_is_object(v) ? json_object_get(v,
		    json_string_value(json_array_get(g->keys, k))) : NULL);
	if (g->has_whole)
		qcsv_json(json_is_object(v) ? NULL : v);
}

static void
qcsv_row(const struct queue_job *j, const struct qcsv_group *params,
    const struct qcsv_group *output, size_t i)
{
	char	*diff;

	printf("%lld", (long long)j->id);
	qcsv_text(j->key, STR_ESC_KEEP_NL);
	qcsv_text(queue_status_name(j->status), 0);
	qcsv_num(j->attempts);
	qcsv_text(j->task, STR_ESC_KEEP_NL);
	qcsv_group_row(params, i);
	qcsv_text(j->answer, STR_ESC_KEEP_NL);
	qcsv_group_row(output, i);
	qcsv_text(j->error, STR_ESC_KEEP_NL);
	qcsv_num((long long)j->tokens_in);
	qcsv_num((long long)j->tokens_out);
	qcsv_num(j->wall_ms);
	qcsv_num(j->run_id);
	diff = qcsv_one_line(j->diff_stat);
	qcsv_text(diff, 0);
	free(diff);
	qcsv_num((long long)j->changes_len);
	qcsv_text(j->run_where, 0);
	qcsv_num(j->applied_ms);
	qcsv_text(j->applied_by, 0);
	fputs("\r\n", stdout);
}

/* The columns every exported job brings. */
static int
qcsv_scan(const struct queue_job *v, size_t n, struct qcsv_group *params,
    struct qcsv_group *output)
{
	size_t	i;

	for (i = 0; i < n; i++)
		if (qcsv_schema_keys(output, v[i].schema) == -1)
			return -1;
	for (i = 0; i < n; i++)
		if (qcsv_group_scan(params, i, v[i].params) == -1 ||
		    qcsv_group_scan(output, i, v[i].output) == -1)
			return -1;
	return 0;
}

int
cmd_queue_export_csv(const struct queue_job *v, size_t n)
{
	struct qcsv_group	params, output;
	size_t			i;
	int			rc = -1;

	memset(&params, 0, sizeof(params));
	memset(&output, 0, sizeof(output));
	if (qcsv_group_init(&params, "param.", "params", n) == 0 &&
	    qcsv_group_init(&output, "output.", "output", n) == 0 &&
	    qcsv_scan(v, n, &params, &output) == 0) {
		qcsv_header(&params, &output);
		for (i = 0; i < n; i++)
			qcsv_row(&v[i], &params, &output, i);
		rc = ferror(stdout) ? -1 : 0;
	}
	qcsv_group_free(&params, n);
	qcsv_group_free(&output, n);
	return rc;
}

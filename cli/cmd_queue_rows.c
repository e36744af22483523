/*
 * warren queue add --jsonl FILE | --csv FILE --template T: a file of jobs
 * read into rows, every row checked before any job is added, every error
 * naming its line. The file is the user's, yet it may have been made by a
 * script from untrusted data: nothing in it is guessed at.
 */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "cli/cmd_queue.h"
#include "cli/csv.h"
#include "common/buf.h"
#include "common/jschema.h"
#include "common/str.h"
#include "common/xmalloc.h"

static struct cmd_queue_row *
cmd_queue_rows_new(struct cmd_queue_rows *rows, unsigned long line)
{
	struct cmd_queue_row	*r;

	if (rows->n == rows->cap) {
		rows->cap = rows->cap ? rows->cap * 2 : 64;
		rows->v = xreallocarray(rows->v, rows->cap, sizeof(*rows->v));
	}
	r = &rows->v[rows->n++];
	memset(r, 0, sizeof(*r));
	r->line = line;
	return r;
}

void
cmd_queue_rows_free(struct cmd_queue_rows *rows)
{
	struct cmd_queue_row	*r;
	size_t			 i;

	for (i = 0; i < rows->n; i++) {
		r = &rows->v[i];
		free(r->task);
		free(r->profile);
		free(r->workspace);
		free(r->schema);
		free(r->key);
		free(r->params);
	}
	free(rows->v);
	memset(rows, 0, sizeof(*rows));
}

/* A string field, not empty (jansson refuses \u0000 when it parses). */
static int
cmd_queue_jsonl_str(json_t *v, const char *k, char **out, unsigned long line,
    char *err, size_t errsz)
{
	if (!json_is_string(v) || json_string_length(v) == 0) {
		snprintf(err, errsz, "line %lu: \"%s\" must be a string, not "
		    "empty", line, k);
		return -1;
	}
	free(*out);
	*out = xstrdup(json_string_value(v));
	return 0;
}

static int
cmd_queue_jsonl_int(json_t *v, const char *k, int lo, int hi, int *out,
    unsigned long line, char *err, size_t errsz)
{
	if (!json_is_integer(v) || json_integer_value(v) < lo ||
	    json_integer_value(v) > hi) {
		snprintf(err, errsz, "line %lu: \"%s\" must be an integer from "
		    "%d to %d", line, k, lo, hi);
		return -1;
	}
	*out = (int)json_integer_value(v);
	return 0;
}

/* "schema": a JSON object, or the name of a file holding one. */
static int
cmd_queue_jsonl_schema(json_t *v, struct cmd_queue_row *r, char *err,
    size_t errsz)
{
	char	sub[1024];

	if (json_is_object(v) && jschema_usable(v, sub, sizeof(sub)) == -1) {
		snprintf(err, errsz, "line %lu: \"schema\": not a usable JSON "
		    "Schema: %s", r->line, sub);
		return -1;
	}
	if (json_is_object(v)) {
		r->schema = json_dumps(v, JSON_COMPACT | JSON_PRESERVE_ORDER);
		return r->schema != NULL ? 0 : -1;
	}
	if (!json_is_string(v)) {
		snprintf(err, errsz, "line %lu: \"schema\" must be a JSON "
		    "object or a file name", r->line);
		return -1;
	}
	if ((r->schema = cmd_queue_schema_file(json_string_value(v), sub,
	    sizeof(sub))) == NULL) {
		snprintf(err, errsz, "line %lu: %s", r->line, sub);
		return -1;
	}
	return 0;
}

static int
cmd_queue_jsonl_field(const char *k, json_t *v, struct cmd_queue_row *r,
    char *err, size_t errsz)
{
	if (strcmp(k, "task") == 0)
		return cmd_queue_jsonl_str(v, k, &r->task, r->line, err, errsz);
	if (strcmp(k, "profile") == 0)
		return cmd_queue_jsonl_str(v, k, &r->profile, r->line, err,
		    errsz);
	if (strcmp(k, "workspace") == 0)
		return cmd_queue_jsonl_str(v, k, &r->workspace, r->line, err,
		    errsz);
	if (strcmp(k, "key") == 0)
		return cmd_queue_jsonl_str(v, k, &r->key, r->line, err, errsz);
	if (strcmp(k, "schema") == 0)
		return cmd_queue_jsonl_schema(v, r, err, errsz);
	if (strcmp(k, "params") == 0 && json_is_object(v)) {
		r->params = json_dumps(v, JSON_COMPACT | JSON_PRESERVE_ORDER);
		return r->params != NULL ? 0 : -1;
	}
	if (strcmp(k, "params") == 0) {
		snprintf(err, errsz, "line %lu: \"params\" must be a JSON "
		    "object", r->line);
		return -1;
	}
	if (strcmp(k, "priority") == 0) {
		r->has_priority = 1;
		return cmd_queue_jsonl_int(v, k, -CMD_QUEUE_PRIORITY_MAX,
		    CMD_QUEUE_PRIORITY_MAX, &r->priority, r->line, err, errsz);
	}
	if (strcmp(k, "max_attempts") == 0) {
		r->has_attempts = 1;
		return cmd_queue_jsonl_int(v, k, 1, CMD_QUEUE_ATTEMPTS_MAX,
		    &r->max_attempts, r->line, err, errsz);
	}
	snprintf(err, errsz, "line %lu: unknown field \"%s\" (a job has task, "
	    "profile, workspace, params, schema, key, priority, max_attempts)",
	    r->line, k);
	return -1;
}

static int
cmd_queue_jsonl_line(const char *s, size_t len, unsigned long line,
    struct cmd_queue_rows *rows, char *err, size_t errsz)
{
	struct cmd_queue_row	*r;
	json_error_t		 jerr;
	json_t			*j, *v;
	const char		*k;
	int			 rc = 0;

	if ((j = json_loadb(s, len, 0, &jerr)) == NULL) {
		snprintf(err, errsz, "line %lu: not valid JSON: %s (column "
		    "%d)", line, jerr.text, jerr.column);
		return -1;
	}
	if (!json_is_object(j)) {
		snprintf(err, errsz, "line %lu: not a JSON object", line);
		json_decref(j);
		return -1;
	}
	r = cmd_queue_rows_new(rows, line);
	json_object_foreach(j, k, v) {
		if ((rc = cmd_queue_jsonl_field(k, v, r, err, errsz)) == -1)
			break;
	}
	if (rc == 0 && r->task == NULL) {
		snprintf(err, errsz, "line %lu: no \"task\"", line);
		rc = -1;
	}
	json_decref(j);
	return rc;
}

int
cmd_queue_rows_jsonl(const char *text, size_t len,
    struct cmd_queue_rows *rows, char *err, size_t errsz)
{
	const char	*p = text, *end = text + len, *nl;
	unsigned long	 line;
	size_t		 n;

	for (line = 1; p < end; line++, p = nl + 1) {
		if ((nl = memchr(p, '\n', (size_t)(end - p))) == NULL)
			nl = end;
		n = (size_t)(nl - p);
		if (strspn(p, " \t\r") >= n)
			continue;	/* a blank line */
		if (cmd_queue_jsonl_line(p, n, line, rows, err, errsz) == -1)
			return -1;
	}
	if (rows->n == 0) {
		snprintf(err, errsz, "no jobs in it (one JSON object a line)");
		return -1;
	}
	return 0;
}

/* The header's column named name[0..len), or -1. */
static int
cmd_queue_csv_column(const struct csv_record *hdr, const char *name,
    size_t len)
{
	size_t	i;

	for (i = 0; i < hdr->n; i++)
		if (strlen(hdr->v[i]) == len &&
		    memcmp(hdr->v[i], name, len) == 0)
			return (int)i;
	return -1;
}

/*
 * Fill tmpl's {column}s from row into out ({{ and }} are braces); with
 * row NULL, only check every placeholder names a column of hdr.
 */
static int
cmd_queue_tmpl(const char *what, const char *tmpl,
    const struct csv_record *hdr, const struct csv_record *row,
    struct buf *out, char *err, size_t errsz)
{
	const char	*p, *close;
	int		 col;

	for (p = tmpl; *p != '\0'; p++) {
		if ((*p == '{' && p[1] == '{') || (*p == '}' && p[1] == '}')) {
			buf_addc(out, *p++);
			continue;
		}
		if (*p == '}' || (*p == '{' &&
		    (close = strchr(p + 1, '}')) == NULL)) {
			snprintf(err, errsz, "%s: a lone %c (write {{ or }} for "
			    "a brace)", what, *p);
			return -1;
		}
		if (*p != '{') {
			buf_addc(out, *p);
			continue;
		}
		if ((col = cmd_queue_csv_column(hdr, p + 1,
		    (size_t)(close - p - 1))) == -1) {
			snprintf(err, errsz, "%s: {%.*s} is not a column of the "
			    "header on line %lu", what, (int)(close - p - 1),
			    p + 1, hdr->line);
			return -1;
		}
		if (row != NULL)
			buf_addstr(out, row->v[col]);
		p = close;
	}
	return 0;
}

/* The header: columns named, each once, and every placeholder one. */
static int
cmd_queue_csv_header(const struct csv_record *hdr, const char *tmpl,
    const char *keytmpl, char *err, size_t errsz)
{
	struct buf	b;
	size_t		i;
	int		rc;

	for (i = 0; i < hdr->n; i++) {
		if (!str_utf8_valid(hdr->v[i], strlen(hdr->v[i]))) {
			snprintf(err, errsz, "line %lu: the header's column %zu "
			    "is not UTF-8 text", hdr->line, i + 1);
			return -1;
		}
		if (hdr->v[i][0] == '\0' || cmd_queue_csv_column(hdr,
		    hdr->v[i], strlen(hdr->v[i])) != (int)i) {
			snprintf(err, errsz, "line %lu: the header's column %zu "
			    "is %s", hdr->line, i + 1, hdr->v[i][0] == '\0' ?
			    "unnamed" : "named twice");
			return -1;
		}
	}
	buf_init(&b, 0);
	rc = cmd_queue_tmpl("--template", tmpl, hdr, NULL, &b, err, errsz);
	if (rc == 0 && keytmpl != NULL)
		rc = cmd_queue_tmpl("--key", keytmpl, hdr, NULL, &b, err,
		    errsz);
	if (rc == 0 && keytmpl != NULL && strchr(keytmpl, '{') == NULL) {
		snprintf(err, errsz, "--key with --csv is a template: name a "
		    "column, as in {id}, so that each row has its own key");
		rc = -1;
	}
	buf_free(&b);
	return rc;
}

/* The row as params: {column: value}. */
static char *
cmd_queue_csv_params(const struct csv_record *hdr,
    const struct csv_record *row)
{
	json_t	*o;
	char	*s;
	size_t	 i;

	if ((o = json_object()) == NULL)
		return NULL;
	for (i = 0; i < hdr->n; i++)
		json_object_set_new(o, hdr->v[i], json_string(row->v[i]));
	s = json_dumps(o, JSON_COMPACT | JSON_PRESERVE_ORDER);
	json_decref(o);
	return s;
}

/* A template filled from row, or NULL (err said why). */
static char *
cmd_queue_csv_fill(const char *what, const char *tmpl,
    const struct csv_record *hdr, const struct csv_record *row, char *err,
    size_t errsz)
{
	struct buf	 b;
	char		*s;

	buf_init(&b, 0);
	if (cmd_queue_tmpl(what, tmpl, hdr, row, &b, err, errsz) == -1 ||
	    (s = buf_release(&b, NULL)) == NULL) {
		buf_free(&b);
		return NULL;
	}
	if (*s == '\0') {
		snprintf(err, errsz, "line %lu: %s comes out empty", row->line,
		    what);
		free(s);
		return NULL;
	}
	return s;
}

static int
cmd_queue_csv_row(const struct csv_record *hdr, const struct csv_record *rec,
    const char *tmpl, const char *keytmpl, struct cmd_queue_rows *rows,
    char *err, size_t errsz)
{
	struct cmd_queue_row	*r;
	size_t			 i;

	if (rec->n != hdr->n) {
		snprintf(err, errsz, "line %lu: %zu field%s where the header "
		    "(line %lu) has %zu", rec->line, rec->n,
		    rec->n == 1 ? "" : "s", hdr->line, hdr->n);
		return -1;
	}
	for (i = 0; i < rec->n; i++) {
		if (!str_utf8_valid(rec->v[i], strlen(rec->v[i]))) {
			snprintf(err, errsz, "line %lu: column %s is not UTF-8 "
			    "text", rec->line, hdr->v[i]);
			return -1;
		}
	}
	r = cmd_queue_rows_new(rows, rec->line);
	if ((r->task = cmd_queue_csv_fill("the task", tmpl, hdr, rec, err,
	    errsz)) == NULL)
		return -1;
	if (keytmpl != NULL && (r->key = cmd_queue_csv_fill("the key",
	    keytmpl, hdr, rec, err, errsz)) == NULL)
		return -1;
	if ((r->params = cmd_queue_csv_params(hdr, rec)) == NULL) {
		snprintf(err, errsz, "line %lu: out of memory", rec->line);
		return -1;
	}
	return 0;
}

int
cmd_queue_rows_csv(const char *text, size_t len, const char *tmpl,
    const char *keytmpl, struct cmd_queue_rows *rows, char *err,
    size_t errsz)
{
	struct csv		c;
	struct csv_record	hdr, rec;
	int			rc;

	csv_init(&c, text, len);
	if ((rc = csv_next(&c, &hdr, err, errsz)) <= 0) {
		if (rc == 0)
			snprintf(err, errsz, "it is empty (a header row naming "
			    "the columns comes first)");
		return -1;
	}
	for (rc = cmd_queue_csv_header(&hdr, tmpl, keytmpl, err, errsz);
	    rc == 0;) {
		if ((rc = csv_next(&c, &rec, err, errsz)) != 1)
			break;
		rc = cmd_queue_csv_row(&hdr, &rec, tmpl, keytmpl, rows, err,
		    errsz);
		csv_record_free(&rec);
	}
	csv_record_free(&hdr);
	if (rc == 0 && rows->n == 0) {
		snprintf(err, errsz, "no rows after the header");
		rc = -1;
	}
	return rc == -1 ? -1 : 0;
}

/*
 * An RFC 4180 reader and a field writer (csv.h). The reader works on the
 * whole input in memory and keeps count of lines, so that a user's bad
 * row is named by its line in their editor.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/csv.h"
#include "common/buf.h"
#include "common/xmalloc.h"

void
csv_init(struct csv *c, const char *buf, size_t len)
{
	c->p = buf;
	c->end = buf + len;
	c->line = 1;
	if (len >= 3 && memcmp(buf, "\xef\xbb\xbf", 3) == 0)
		c->p += 3;
}

/* At a record's end: LF, CRLF or the input's end. */
static int
csv_at_eol(const struct csv *c)
{
	return c->p == c->end || *c->p == '\n' ||
	    (*c->p == '\r' && c->p + 1 < c->end && c->p[1] == '\n');
}

static void
csv_skip_eol(struct csv *c)
{
	if (c->p < c->end && *c->p == '\r')
		c->p++;
	if (c->p < c->end && *c->p == '\n') {
		c->p++;
		c->line++;
	}
}

static void
csv_push(struct csv_record *r, struct buf *b)
{
	char	*s;

	if (r->n == r->cap) {
		r->cap = r->cap ? r->cap * 2 : 8;
		r->v = xreallocarray(r->v, r->cap, sizeof(*r->v));
	}
	if ((s = buf_release(b, NULL)) == NULL)
		s = xstrdup("");
	r->v[r->n++] = s;
}

static int
csv_quoted(struct csv *c, struct buf *b, char *err, size_t errsz)
{
	unsigned long	start = c->line;

	for (c->p++;; c->p++) {
		if (c->p == c->end) {
			snprintf(err, errsz, "line %lu: a quoted field opened "
			    "here is never closed (a quote inside a field is "
			    "written \"\")", start);
			return -1;
		}
		if (*c->p == '"') {
			if (c->p + 1 < c->end && c->p[1] == '"') {
				c->p++;
				if (buf_addc(b, '"') == -1)
					goto toobig;
				continue;
			}
			c->p++;
			break;
		}
		if (*c->p == '\n')
			c->line++;
		if (buf_addc(b, *c->p) == -1)
			goto toobig;
	}
	if (!csv_at_eol(c) && *c->p != ',') {
		snprintf(err, errsz, "line %lu: text after a closing quote (a "
		    "quote inside a quoted field is written \"\")", c->line);
		return -1;
	}
	return 0;
toobig:
	snprintf(err, errsz, "line %lu: a field too large", start);
	return -1;
}

static int
csv_plain(struct csv *c, struct buf *b, char *err, size_t errsz)
{
	for (; !csv_at_eol(c) && *c->p != ','; c->p++) {
		if (*c->p == '"') {
			snprintf(err, errsz, "line %lu: a quote inside an "
			    "unquoted field (quote the whole field and double "
			    "the quote: \"a \"\"b\"\" c\")", c->line);
			return -1;
		}
		if (buf_addc(b, *c->p) == -1) {
			snprintf(err, errsz, "line %lu: a field too large",
			    c->line);
			return -1;
		}
	}
	return 0;
}

int
csv_next(struct csv *c, struct csv_record *r, char *err, size_t errsz)
{
	struct buf	b;
	int		rc;

	memset(r, 0, sizeof(*r));
	while (c->p < c->end && csv_at_eol(c))
		csv_skip_eol(c);
	if (c->p == c->end)
		return 0;
	r->line = c->line;
	buf_init(&b, 0);
	for (;;) {
		rc = *c->p == '"' ? csv_quoted(c, &b, err, errsz) :
		    csv_plain(c, &b, err, errsz);
		if (rc == -1) {
			buf_free(&b);
			csv_record_free(r);
			return -1;
		}
		csv_push(r, &b);
		if (csv_at_eol(c))
			break;
		c->p++;		/* the comma */
		if (c->p == c->end || csv_at_eol(c)) {
			csv_push(r, &b);	/* "a," ends on an empty field */
			break;
		}
	}
	csv_skip_eol(c);
	return 1;
}

void
csv_record_free(struct csv_record *r)
{
	size_t	i;

	for (i = 0; i < r->n; i++)
		free(r->v[i]);
	free(r->v);
	memset(r, 0, sizeof(*r));
}

static void
csv_write_quoted(FILE *f, const char *lead, const char *s)
{
	putc('"', f);
	fputs(lead, f);
	for (; *s != '\0'; s++) {
		if (*s == '"')
			putc('"', f);
		putc(*s, f);
	}
	putc('"', f);
}

void
csv_write_field(FILE *f, const char *s)
{
	if (s == NULL)
		return;
	if (strpbrk(s, ",\"\r\n") == NULL) {
		fputs(s, f);
		return;
	}
	csv_write_quoted(f, "", s);
}

int
csv_formula_like(const char *s)
{
	return s != NULL && s[0] != '\0' &&
	    strchr("=+-@\t\r", s[0]) != NULL;
}

void
csv_write_neutral(FILE *f, const char *s)
{
	if (s != NULL)
		csv_write_quoted(f, "'", s);
}

/*
 * CSV as RFC 4180 has it, for `warren queue add --csv` and `warren queue
 * export --format csv`: fields separated by commas, records by CRLF or
 * LF, a field in double quotes may hold commas, quotes (doubled) and line
 * breaks. The input is the user's file: every malformation is an error
 * naming the line, never a guess.
 */
#ifndef WARREN_CSV_H
#define WARREN_CSV_H

#include <stddef.h>
#include <stdio.h>

struct csv {
	const char	*p, *end;
	unsigned long	 line;		/* the line p is on, from 1 */
};

struct csv_record {
	char		**v;		/* NUL-terminated fields */
	size_t		  n, cap;
	unsigned long	  line;		/* the line the record starts on */
};

/* csv.c */
/* Read buf (len bytes, no NUL inside; a UTF-8 byte order mark is
 * skipped). */
void	csv_init(struct csv *c, const char *buf, size_t len);
/* The next record (blank lines are skipped): 1 read, 0 end of input, -1
 * malformed (err says how, with the line). */
int	csv_next(struct csv *c, struct csv_record *r, char *err,
	    size_t errsz);
void	csv_record_free(struct csv_record *r);
/* One field, quoted when it holds a comma, quote, CR or LF. */
void	csv_write_field(FILE *f, const char *s);
/* Would a spreadsheet take a cell of s for a formula? It begins with =,
 * +, -, @, a tab or a carriage return (OWASP, "CSV Injection"). */
int	csv_formula_like(const char *s);
/* One field of text, neutralised as OWASP has it: quoted, with a single
 * quote before it ('=1+1), so that a spreadsheet shows it as text. */
void	csv_write_neutral(FILE *f, const char *s);

#endif

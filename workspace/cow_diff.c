/*
 * warren diff: a run's layer against the workspace as it is now, as a
 * git-style unified diff, or as a diffstat. Everything printed from the
 * layer was written by an agent: names are quoted the way git quotes them
 * (printable ASCII only), and a content line with a byte a terminal would
 * act on or hide (a control, invalid UTF-8, a bidi control, an invisible
 * character) is printed escaped and marked, in colour or not, to a
 * terminal or a pipe, so no byte of theirs reaches a terminal as a
 * control sequence and what the user reads is what apply writes. Only
 * with COW_DIFF_RAW is the content raw bytes, for `git apply` and
 * `patch -p1`. A file whose new content is not shown is named
 * unreviewed (cow_side.c's rule), and apply holds it back.
 */
#include <sys/stat.h>

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/str.h"
#include "workspace/cow.h"
#include "workspace/cow_int.h"
#include "workspace/cow_walk.h"

#define COW_DIFF_CONTEXT	3
#define COW_DIFF_BAR		50
/* How a content line is escaped: tabs kept, backslashes doubled. */
#define COW_DIFF_ESC		(STR_ESC_KEEP_NL | STR_ESC_STRICT)

#define COW_COLOR_BOLD		"\033[1m"
#define COW_COLOR_RED		"\033[31m"
#define COW_COLOR_GREEN		"\033[32m"
#define COW_COLOR_CYAN		"\033[36m"
#define COW_COLOR_RESET		"\033[m"

/* One file's counts for --stat. */
struct cow_stat_row {
	char		*name;		/* quoted */
	size_t		 add, del;
	const char	*note;		/* binary, directory, too large ... */
	const char	*sensitive;	/* what runs it on the host, or NULL */
	int		 unreviewed;	/* its new content is not shown */
};

struct cow_diff_out {
	FILE			*f;
	unsigned		 flags;
	struct cow_stat_row	*rows;
	size_t			 nrows;
	size_t			 files, add, del;
	const char		*sensitive;	/* of the change at hand */
	int			 unreviewed;	/* of the change at hand */
};

static const char *
cow_diff_color(const struct cow_diff_out *o, const char *code)
{
	return (o->flags & COW_DIFF_COLOR) ? code : "";
}

/* The path as git writes it: prefix and name, in double quotes with C
 * escapes (octal for bytes outside printable ASCII) when it needs them. */
static char *
cow_diff_quote(const char *prefix, const char *name)
{
	const unsigned char	*p;
	char			*out, *q;
	int			 need = 0;

	for (p = (const unsigned char *)name; *p != '\0'; p++)
		if (*p < 0x20 || *p >= 0x7f || *p == '"' || *p == '\\')
			need = 1;
	if ((out = malloc(strlen(prefix) + 4 * strlen(name) + 3)) == NULL)
		return NULL;
	q = out;
	if (need)
		*q++ = '"';
	q = stpcpy(q, prefix);
	for (p = (const unsigned char *)name; *p != '\0'; p++) {
		if (!need || (*p >= 0x20 && *p < 0x7f && *p != '"' &&
		    *p != '\\'))
			*q++ = (char)*p;
		else if (*p == '"' || *p == '\\')
			q += sprintf(q, "\\%c", *p);
		else if (*p == '\t')
			q = stpcpy(q, "\\t");
		else if (*p == '\n')
			q = stpcpy(q, "\\n");
		else
			q += sprintf(q, "\\%03o", *p);
	}
	if (need)
		*q++ = '"';
	*q = '\0';
	return out;
}

/* Does the line hold a byte the escape changes, a backslash aside (a
 * line with nothing else is shown as it is, unmarked)? */
static int
cow_diff_needs_esc(const char *p, size_t len)
{
	size_t	i, nbs = 0;

	for (i = 0; i < len; i++)
		nbs += p[i] == '\\';
	return str_escape_len(p, len, COW_DIFF_ESC) != len + nbs;
}

/* One line of a hunk (-1: no memory to escape it): its sign, then the line as is (raw, or nothing in
 * it to escape), or escaped and followed by the marker that says so; the
 * marker git writes after a last line without '\n'. */
static int
cow_diff_line(const struct cow_diff_out *o, char sign,
    const struct cow_lines *l, size_t i)
{
	const char	*p = l->data + l->off[i];
	size_t		 len = l->off[i + 1] - l->off[i];
	int		 nl = len > 0 && p[len - 1] == '\n', esc;
	char		*e = NULL;

	if (nl)
		len--;
	esc = !(o->flags & COW_DIFF_RAW) && cow_diff_needs_esc(p, len);
	if (esc && (e = str_escape_dup(p, len, COW_DIFF_ESC)) == NULL)
		return -1;
	fputs(cow_diff_color(o, sign == '-' ? COW_COLOR_RED : sign == '+' ?
	    COW_COLOR_GREEN : ""), o->f);
	putc(sign, o->f);
	if (esc)
		fputs(e, o->f);
	else
		fwrite(p, 1, len, o->f);
	fprintf(o->f, "%s\n", sign != ' ' ? cow_diff_color(o,
	    COW_COLOR_RESET) : "");
	free(e);
	if (esc)
		fprintf(o->f, "%s\\ escaped: \\xNN is a byte, \\\\ a "
		    "backslash%s\n", cow_diff_color(o, COW_COLOR_CYAN),
		    cow_diff_color(o, COW_COLOR_RESET));
	if (!nl)
		fputs("\\ No newline at end of file\n", o->f);
	return 0;
}

/* "-start,count" as git writes it: count 1 left out, start 0 before the
 * first line when count is 0. */
static void
cow_diff_range(FILE *f, char sign, size_t before, size_t count)
{
	if (count == 1)
		fprintf(f, "%c%zu", sign, before + 1);
	else
		fprintf(f, "%c%zu,%zu", sign, count == 0 ? before : before + 1,
		    count);
}

static int
cow_diff_hunk(const struct cow_diff_out *o, const struct cow_lines *a,
    const struct cow_lines *b, const struct cow_op *ops, size_t start,
    size_t end)
{
	size_t	k, na = 0, nb = 0;

	for (k = start; k < end; k++) {
		na += ops[k].t != '+';
		nb += ops[k].t != '-';
	}
	fprintf(o->f, "%s@@ ", cow_diff_color(o, COW_COLOR_CYAN));
	cow_diff_range(o->f, '-', ops[start].a, na);
	putc(' ', o->f);
	cow_diff_range(o->f, '+', ops[start].b, nb);
	fprintf(o->f, " @@%s\n", cow_diff_color(o, COW_COLOR_RESET));
	for (k = start; k < end; k++)
		if ((ops[k].t == '+' ? cow_diff_line(o, '+', b, ops[k].b) :
		    cow_diff_line(o, ops[k].t == '-' ? '-' : ' ', a,
		    ops[k].a)) == -1)
			return -1;
	return 0;
}

/* The hunks of an edit script, with COW_DIFF_CONTEXT lines of context;
 * changes closer than twice that share a hunk. */
static int
cow_diff_hunks(const struct cow_diff_out *o, const struct cow_lines *a,
    const struct cow_lines *b, const struct cow_op *ops, size_t nops)
{
	size_t	i = 0, c, e, k, start, end;

	for (;;) {
		for (c = i; c < nops && ops[c].t == '='; c++)
			;
		if (c == nops)
			return 0;
		start = c > i + COW_DIFF_CONTEXT ? c - COW_DIFF_CONTEXT : i;
		for (e = c, k = c + 1; k < nops; k++) {
			if (ops[k].t != '=')
				e = k;
			else if (k - e > 2 * COW_DIFF_CONTEXT)
				break;
		}
		end = e + 1 + COW_DIFF_CONTEXT < nops ?
		    e + 1 + COW_DIFF_CONTEXT : nops;
		if (cow_diff_hunk(o, a, b, ops, start, end) == -1)
			return -1;
		i = end;
	}
}

/* Content of both sides as lines and their edit script; counts for the
 * stat, hunks for the diff. */
static int
cow_diff_text(struct cow_diff_out *o, const struct cow_side *old,
    const struct cow_side *new, size_t *add, size_t *del)
{
	struct cow_lines	 a, b;
	struct cow_op		*ops = NULL;
	size_t			 nops = 0, k;
	int			 rc = -1;

	if (cow_lines_split(&a, old->present ? old->data : "", old->len) ==
	    -1)
		return -1;
	if (cow_lines_split(&b, new->present ? new->data : "", new->len) ==
	    -1)
		goto out;
	if (cow_lines_diff(&a, &b, &ops, &nops) == -1)
		goto out;
	for (k = 0; k < nops; k++) {
		*add += ops[k].t == '+';
		*del += ops[k].t == '-';
	}
	if (!(o->flags & COW_DIFF_STAT) && cow_diff_hunks(o, &a, &b, ops,
	    nops) == -1)
		goto out;
	rc = 0;
out:
	free(ops);
	cow_lines_free(&a);
	cow_lines_free(&b);
	return rc;
}

/* A --stat row, or a "#" line in the diff. */
static int
cow_diff_note(struct cow_diff_out *o, const char *path, const char *note,
    size_t add, size_t del)
{
	struct cow_stat_row	*v;
	char			*q;

	if ((q = cow_diff_quote("", path)) == NULL)
		return -1;
	if (!(o->flags & COW_DIFF_STAT)) {
		if (note != NULL)
			fprintf(o->f, "%s# %s: %s%s\n", cow_diff_color(o,
			    COW_COLOR_CYAN), q, note, cow_diff_color(o,
			    COW_COLOR_RESET));
		free(q);
		return 0;
	}
	if ((v = reallocarray(o->rows, o->nrows + 1, sizeof(*v))) == NULL) {
		free(q);
		return -1;
	}
	o->rows = v;
	v[o->nrows++] = (struct cow_stat_row){ q, add, del, note,
	    o->sensitive, o->unreviewed };
	o->files++;
	o->add += add;
	o->del += del;
	return 0;
}

/* A mode as git writes it: a link's permissions mean nothing. */
static unsigned
cow_diff_mode(mode_t m)
{
	return S_ISLNK(m) ? 0120000 : (unsigned)m;
}

/* The header lines of one file's section. */
static void
cow_diff_header(const struct cow_diff_out *o, const char *qa, const char *qb,
    const struct cow_side *old, const struct cow_side *new)
{
	const char	*bold = cow_diff_color(o, COW_COLOR_BOLD);
	const char	*reset = cow_diff_color(o, COW_COLOR_RESET);

	fprintf(o->f, "%sdiff --git %s %s%s\n", bold, qa, qb, reset);
	if (!old->present)
		fprintf(o->f, "%snew file mode %06o%s\n", bold,
		    cow_diff_mode(new->mode), reset);
	else if (!new->present)
		fprintf(o->f, "%sdeleted file mode %06o%s\n", bold,
		    cow_diff_mode(old->mode), reset);
	else if (cow_diff_mode(old->mode) != cow_diff_mode(new->mode))
		fprintf(o->f, "%sold mode %06o\nnew mode %06o%s\n", bold,
		    cow_diff_mode(old->mode), cow_diff_mode(new->mode), reset);
}

/* "--- a/P" and "+++ b/P": a tab after a name with a space, as git. */
static void
cow_diff_names(const struct cow_diff_out *o, const char *qa, const char *qb,
    const struct cow_side *old, const struct cow_side *new)
{
	const char	*bold = cow_diff_color(o, COW_COLOR_BOLD);
	const char	*reset = cow_diff_color(o, COW_COLOR_RESET);

	fprintf(o->f, "%s--- %s%s%s\n", bold, old->present ? qa : "/dev/null",
	    old->present && strchr(qa, ' ') != NULL ? "\t" : "", reset);
	fprintf(o->f, "%s+++ %s%s%s\n", bold, new->present ? qb : "/dev/null",
	    new->present && strchr(qb, ' ') != NULL ? "\t" : "", reset);
}

/* One file's section: old to new, either side absent. */
static int
cow_diff_file(struct cow_diff_out *o, const char *path,
    const struct cow_side *old, const struct cow_side *new)
{
	char	*qa = NULL, *qb = NULL;
	size_t	 add = 0, del = 0;
	int	 bin, rc = -1;

	if (cow_side_same(old, new))
		return 0;
	bin = cow_side_binary(old) || cow_side_binary(new);
	if ((o->flags & COW_DIFF_STAT) && bin)
		return cow_diff_note(o, path, "binary", 0, 0);
	if ((qa = cow_diff_quote("a/", path)) == NULL ||
	    (qb = cow_diff_quote("b/", path)) == NULL)
		goto out;
	if (!(o->flags & COW_DIFF_STAT))
		cow_diff_header(o, qa, qb, old, new);
	if (bin)
		fprintf(o->f, "Binary files %s and %s differ\n",
		    old->present ? qa : "/dev/null",
		    new->present ? qb : "/dev/null");
	else if (old->len != new->len || (old->len > 0 &&
	    memcmp(old->data, new->data, old->len) != 0)) {
		if (!(o->flags & COW_DIFF_STAT))
			cow_diff_names(o, qa, qb, old, new);
		if (cow_diff_text(o, old, new, &add, &del) == -1)
			goto out;
	}
	rc = (o->flags & COW_DIFF_STAT) ? cow_diff_note(o, path, NULL, add,
	    del) : 0;
out:
	free(qa);
	free(qb);
	return rc;
}

/* Directories, and a file turned into a directory or back: a "#" line
 * for the directory, a section for the file. */
static int
cow_diff_types(struct cow_diff_out *o, const char *path, struct cow_side *old,
    struct cow_side *new)
{
	struct cow_side	 none;
	char		 note[64];
	int		 od = old->present && S_ISDIR(old->mode);
	int		 nd = new->present && S_ISDIR(new->mode);

	memset(&none, 0, sizeof(none));
	if (od && nd) {
		if ((old->mode & 07777) == (new->mode & 07777))
			return 0;
		snprintf(note, sizeof(note), "directory, mode %04o -> %04o",
		    (unsigned)(old->mode & 07777),
		    (unsigned)(new->mode & 07777));
		return cow_diff_note(o, path, note, 0, 0);
	}
	if (od && cow_diff_note(o, path, "directory removed", 0, 0) == -1)
		return -1;
	old->present &= !od;
	new->present &= !nd;
	if (old->present && new->present &&
	    (old->mode & S_IFMT) != (new->mode & S_IFMT)) {
		if (cow_diff_file(o, path, old, &none) == -1 ||
		    cow_diff_file(o, path, &none, new) == -1)
			return -1;
	} else if (old->present || new->present) {
		if (cow_diff_file(o, path, old, new) == -1)
			return -1;
	} else if (!od && !nd)
		return cow_diff_note(o, path, "deleted, and already gone from "
		    "the workspace", 0, 0);
	return nd ? cow_diff_note(o, path, "directory created", 0, 0) : 0;
}

/* The "# unreviewed:" line before a file the diff does not show. */
static int
cow_diff_unreviewed(struct cow_diff_out *o, const char *path,
    const char *why)
{
	char	*q;

	if ((q = cow_diff_quote("", path)) == NULL)
		return -1;
	fprintf(o->f, "%s# unreviewed: %s: %s: apply leaves it out without "
	    "--include-unreviewed%s\n", cow_diff_color(o, COW_COLOR_RED), q,
	    why, cow_diff_color(o, COW_COLOR_RESET));
	free(q);
	return 0;
}

static int
cow_diff_change(struct cow_diff_out *o, int rootfd, const struct cow *c,
    const struct cow_change *ch)
{
	struct cow_side	 old, new;
	const char	*hidden;
	char		 note[128];
	int		 rc;

	cow_side_old(rootfd, ch->path, &old);
	cow_side_new(c, ch, &new);
	o->sensitive = ch->sensitive;
	hidden = cow_side_hidden(&old, &new);
	o->unreviewed = hidden != NULL;
	if (ch->sensitive != NULL && !(o->flags & COW_DIFF_STAT))
		fprintf(o->f, "%s# runs on the host: %s%s\n",
		    cow_diff_color(o, COW_COLOR_RED), ch->sensitive,
		    cow_diff_color(o, COW_COLOR_RESET));
	if (hidden != NULL && !(o->flags & COW_DIFF_STAT) &&
	    cow_diff_unreviewed(o, ch->path, hidden) == -1)
		rc = -1;
	else if (ch->kind == COW_UNSUPPORTED)
		rc = cow_diff_note(o, ch->path, "a fifo, socket, device or "
		    "overlay redirect: apply refuses the run", 0, 0);
	else if (old.errnum != 0 || new.errnum != 0) {
		snprintf(note, sizeof(note), "cannot read the %s: %s",
		    old.errnum != 0 ? "workspace's file" : "run's file",
		    strerror(old.errnum != 0 ? old.errnum : new.errnum));
		rc = cow_diff_note(o, ch->path, note, 0, 0);
	} else if (old.big || new.big)
		rc = cow_diff_note(o, ch->path, "too large to show (over 8 MB)",
		    0, 0);
	else if (new.present && cow_side_special(new.mode))
		rc = cow_diff_note(o, ch->path, "a fifo, device or socket: "
		    "apply refuses it", 0, 0);
	else if (old.present && cow_side_special(old.mode))
		rc = cow_diff_note(o, ch->path, "a fifo, device or socket in "
		    "the workspace: not shown", 0, 0);
	else
		rc = cow_diff_types(o, ch->path, &old, &new);
	cow_side_free(&old);
	cow_side_free(&new);
	return rc;
}

static void
cow_diff_bar(const struct cow_diff_out *o, size_t n, char c, const char *col)
{
	if (n == 0)
		return;
	fputs(cow_diff_color(o, col), o->f);
	while (n-- > 0)
		putc(c, o->f);
	fputs(cow_diff_color(o, COW_COLOR_RESET), o->f);
}

/* --stat: "name | N ++--" per file, bars scaled to COW_DIFF_BAR. */
static void
cow_diff_stat(const struct cow_diff_out *o)
{
	size_t	i, w = 0, max = 0, add, del;

	for (i = 0; i < o->nrows; i++) {
		if (strlen(o->rows[i].name) > w)
			w = strlen(o->rows[i].name);
		if (o->rows[i].add + o->rows[i].del > max)
			max = o->rows[i].add + o->rows[i].del;
	}
	for (i = 0; i < o->nrows; i++) {
		fprintf(o->f, " %-*s | ", (int)w, o->rows[i].name);
		add = o->rows[i].add;
		del = o->rows[i].del;
		if (o->rows[i].note != NULL)
			fputs(o->rows[i].note, o->f);
		else {
			if (max > COW_DIFF_BAR) {
				add = (add * COW_DIFF_BAR + max - 1) / max;
				del = (del * COW_DIFF_BAR + max - 1) / max;
			}
			fprintf(o->f, "%zu%s", o->rows[i].add + o->rows[i].del,
			    add + del > 0 ? " " : "");
			cow_diff_bar(o, add, '+', COW_COLOR_GREEN);
			cow_diff_bar(o, del, '-', COW_COLOR_RED);
		}
		if (o->rows[i].sensitive != NULL)
			fprintf(o->f, "  %s# runs on the host: %s%s",
			    cow_diff_color(o, COW_COLOR_RED),
			    o->rows[i].sensitive,
			    cow_diff_color(o, COW_COLOR_RESET));
		if (o->rows[i].unreviewed)
			fprintf(o->f, "  %s# unreviewed%s", cow_diff_color(o,
			    COW_COLOR_RED), cow_diff_color(o, COW_COLOR_RESET));
		putc('\n', o->f);
	}
	fprintf(o->f, " %zu file%s changed, %zu insertion%s(+), %zu "
	    "deletion%s(-)\n", o->files, o->files == 1 ? "" : "s", o->add,
	    o->add == 1 ? "" : "s", o->del, o->del == 1 ? "" : "s");
}

int
cow_diff(const struct cow *c, const struct cow_changes *ch, FILE *out,
    unsigned flags, char *err, size_t errsz)
{
	struct cow_diff_out	 o;
	size_t			 i;
	int			 rootfd, rc = -1;

	memset(&o, 0, sizeof(o));
	o.f = out;
	o.flags = flags;
	if ((rootfd = open(c->workspace, O_RDONLY | O_DIRECTORY |
	    O_CLOEXEC)) == -1) {
		snprintf(err, errsz, "the workspace %s: %s", c->workspace,
		    strerror(errno));
		return -1;
	}
	for (i = 0; i < ch->n; i++)
		if (cow_diff_change(&o, rootfd, c, &ch->v[i]) == -1) {
			snprintf(err, errsz, "diff of %s: %s", ch->v[i].path,
			    strerror(ENOMEM));
			goto out;
		}
	if (flags & COW_DIFF_STAT)
		cow_diff_stat(&o);
	if (fflush(out) == EOF || ferror(out)) {
		snprintf(err, errsz, "writing the diff: %s", strerror(errno));
		goto out;
	}
	rc = 0;
out:
	for (i = 0; i < o.nrows; i++)
		free(o.rows[i].name);
	free(o.rows);
	close(rootfd);
	return rc;
}

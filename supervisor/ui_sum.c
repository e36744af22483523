/*
 * One short line of what a tool call asks and what its result says, for
 * the live view and the line log: bash's command and exit status, the
 * counts of glob and grep, an edit's few changed lines, how long a run
 * took. Everything here
 * is raw text from a worker: the caller escapes it before it reaches a
 * terminal.
 */
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/str.h"
#include "common/xmalloc.h"
#include "supervisor/run.h"

/* The argument that says what each tool call does, by tool. */
static const struct {
	const char	*tool;
	const char	*key;
} ui_sum_keys[] = {
	{ "bash", "command" }, { "read", "path" }, { "write", "path" },
	{ "edit", "path" }, { "list", "path" }, { "glob", "pattern" },
	{ "grep", "pattern" }, { "delegate", "task" }, { "note", "text" },
	{ "complete", "result" }, { "fail", "reason" },
};

/* The first line of s (at most sz - 1 bytes, whole UTF-8) into buf. */
static void
ui_sum_line(const char *s, char *buf, size_t sz)
{
	size_t	n = strcspn(s, "\n");

	if (sz == 0)
		return;
	if (n >= sz)
		n = sz - 1;
	/* Not in the middle of a UTF-8 sequence. */
	while (n > 0 && s[n] != '\0' && ((unsigned char)s[n] & 0xc0) == 0x80)
		n--;
	memcpy(buf, s, n);
	buf[n] = '\0';
}

/* A tool we do not know (a plan's, a pattern's): its first string
 * argument ("task" ...) says more than its JSON. */
static json_t *
ui_sum_first_string(json_t *o)
{
	const char	*k;
	json_t		*v;

	json_object_foreach(o, k, v)
		if (json_is_string(v))
			return v;
	return NULL;
}

void
ui_sum_args(const char *tool, const char *args, char *buf, size_t sz)
{
	json_t		*o, *v;
	const char	*key = NULL;
	size_t		 i;
	char		 more[96];

	if (sz == 0)
		return;
	buf[0] = '\0';
	if (args == NULL)
		return;
	if ((o = json_loads(args, 0, NULL)) == NULL || !json_is_object(o)) {
		json_decref(o);
		ui_sum_line(args, buf, sz);
		return;
	}
	for (i = 0; i < sizeof(ui_sum_keys) / sizeof(ui_sum_keys[0]); i++)
		if (strcmp(ui_sum_keys[i].tool, tool) == 0)
			key = ui_sum_keys[i].key;
	if (key != NULL && json_is_string(v = json_object_get(o, key)))
		ui_sum_line(json_string_value(v), buf, sz);
	else if (key == NULL && (v = ui_sum_first_string(o)) != NULL)
		ui_sum_line(json_string_value(v), buf, sz);
	else if (key == NULL)
		ui_sum_line(args, buf, sz);	/* no string at all: its JSON */
	if (strcmp(tool, "delegate") == 0 &&
	    json_is_string(v = json_object_get(o, "profile"))) {
		snprintf(more, sizeof(more), "%s: ", json_string_value(v));
		if (strlen(more) + strlen(buf) < sz) {
			memmove(buf + strlen(more), buf, strlen(buf) + 1);
			memcpy(buf, more, strlen(more));
		}
	}
	json_decref(o);
}

/* The last non-empty line of text[0..len) into buf, without the blanks
 * around it, tabs as spaces; the offset of its line. */
static size_t
ui_sum_last(const char *text, size_t len, char *buf, size_t sz)
{
	size_t	end = len, start, at, i;

	while (end > 0 && (text[end - 1] == '\n' || text[end - 1] == ' ' ||
	    text[end - 1] == '\r' || text[end - 1] == '\t'))
		end--;
	start = end;
	while (start > 0 && text[start - 1] != '\n')
		start--;
	at = start;
	while (start < end && (text[start] == ' ' || text[start] == '\t'))
		start++;
	if (end - start >= sz)
		end = start + sz - 1;
	while (end > start && ((unsigned char)text[end] & 0xc0) == 0x80)
		end--;
	for (i = 0; i < end - start; i++)
		buf[i] = text[start + i] == '\t' ? ' ' : text[start + i];
	buf[end - start] = '\0';
	return at;
}

/* bash's trailer: "[exit status N]", "[killed by signal N]" or
 * "[killed: timeout ...]"; the output's last line before it. */
static void
ui_sum_bash(const char *text, int *bad, char *buf, size_t sz)
{
	char	trailer[128], last[512];
	size_t	at;
	int	st;

	at = ui_sum_last(text, strlen(text), trailer, sizeof(trailer));
	(void)ui_sum_last(text, at, last, sizeof(last));
	if (sscanf(trailer, "[exit status %d]", &st) == 1) {
		*bad = *bad || st != 0;
		snprintf(buf, sz, "exit %d%s%s", st, *last ? ": " : "", last);
	} else if (strncmp(trailer, "[killed", 7) == 0) {
		*bad = 1;
		snprintf(buf, sz, "%.*s%s%s", (int)strcspn(trailer + 1, "]"),
		    trailer + 1, *last ? ": " : "", last);
	} else
		snprintf(buf, sz, "%s", trailer);
}

/* glob: a path a line, then maybe "[N more matches ...]" or "(no files". */
static void
ui_sum_glob(const char *text, char *buf, size_t sz)
{
	unsigned long	 n = 0, more = 0;
	const char	*p, *nl;

	for (p = text; *p != '\0'; p = nl + 1) {
		nl = p + strcspn(p, "\n");
		if (*p == '[')
			(void)sscanf(p, "[%lu more", &more);
		else if (*p != '(' && nl > p)
			n++;
		if (*nl == '\0')
			break;
	}
	snprintf(buf, sz, "%lu file%s", n + more, n + more == 1 ? "" : "s");
}

/* grep: "path:line:text" lines, grouped by file. */
static void
ui_sum_grep(const char *text, char *buf, size_t sz)
{
	unsigned long	 n = 0, files = 0;
	const char	*p, *nl, *prev = NULL;
	size_t		 plen = 0, k;

	for (p = text; *p != '\0'; p = nl + 1) {
		nl = p + strcspn(p, "\n");
		if (*p != '[' && *p != '(' && (k = strcspn(p, ":\n")) <
		    (size_t)(nl - p)) {
			n++;
			if (prev == NULL || k != plen || memcmp(prev, p, k) != 0)
				files++;
			prev = p;
			plen = k;
		}
		if (*nl == '\0')
			break;
	}
	snprintf(buf, sz, "%lu match%s in %lu file%s", n, n == 1 ? "" : "es",
	    files, files == 1 ? "" : "s");
}

void
ui_sum_result(const char *tool, const char *text, int is_error, int *bad,
    char *buf, size_t sz)
{
	*bad = is_error;
	if (sz == 0)
		return;
	buf[0] = '\0';
	if (text == NULL)
		return;
	if (!is_error && strcmp(tool, "bash") == 0)
		ui_sum_bash(text, bad, buf, sz);
	else if (!is_error && strcmp(tool, "glob") == 0)
		ui_sum_glob(text, buf, sz);
	else if (!is_error && strcmp(tool, "grep") == 0)
		ui_sum_grep(text, buf, sz);
	else
		(void)ui_sum_last(text, strlen(text), buf, sz);
}

/* Up to max lines of s, each prefixed by mark, appended to v at *n. */
static void
ui_sum_diff_add(char **v, size_t *n, size_t max, const char *mark,
    const char *s, size_t width, size_t *more)
{
	const char	*p, *nl;
	char		 line[1024];

	if (width >= sizeof(line) - 4)
		width = sizeof(line) - 5;
	for (p = s; *p != '\0'; p = nl + 1) {
		nl = p + strcspn(p, "\n");
		if (*n < max) {
			line[0] = mark[0];
			line[1] = ' ';
			ui_sum_line(p, line + 2, width + 1);
			v[(*n)++] = xstrdup(line);
		} else
			(*more)++;
		if (*nl == '\0')
			break;
	}
}

char **
ui_sum_diff(const char *args, size_t max, size_t width, size_t *more)
{
	json_t		*o;
	const char	*old, *new;
	char		**v;
	size_t		 n = 0, half;

	*more = 0;
	if (args == NULL || (o = json_loads(args, 0, NULL)) == NULL)
		return NULL;
	old = json_string_value(json_object_get(o, "old_string"));
	new = json_string_value(json_object_get(o, "new_string"));
	if (old == NULL || new == NULL) {
		json_decref(o);
		return NULL;
	}
	v = xcalloc(max + 1, sizeof(*v));
	half = max / 2 > 0 ? max / 2 : 1;
	ui_sum_diff_add(v, &n, half, "-", old, width, more);
	ui_sum_diff_add(v, &n, max, "+", new, width, more);
	json_decref(o);
	return v;
}

void
ui_sum_lines_free(char **v)
{
	size_t	i;

	if (v == NULL)
		return;
	for (i = 0; v[i] != NULL; i++)
		free(v[i]);
	free(v);
}

void
ui_sum_took(char *buf, size_t sz, uint64_t ms)
{
	if (ms < 1000)
		snprintf(buf, sz, "%llu ms", (unsigned long long)ms);
	else
		snprintf(buf, sz, "%llu.%01llu s", (unsigned long long)(ms /
		    1000), (unsigned long long)(ms % 1000 / 100));
}

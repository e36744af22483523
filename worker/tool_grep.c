/*
 * grep: PCRE2 over the workspace, "file:line:text" per matching line.
 *
 * The whole file is searched in one pcre2_match call per match (JIT when
 * available) rather than one call per line: on a typical tree almost no
 * line matches, and per-line calls would dominate. A match that spans a
 * newline is re-checked against its first line alone, so results are
 * per-line as with grep(1). Binary files (a NUL in the first 8 KiB) and
 * .git are skipped; include/exclude are comma-separated globs.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define PCRE2_CODE_UNIT_WIDTH 8
#include <pcre2.h>

#include "worker/tool_int.h"

#define GREP_MAX_TEXT	300	/* chars of a matching line shown */
#define GREP_MAX_GLOBS	16

struct grep_state {
	pcre2_code		*re;
	pcre2_match_data	*md;
	char			*include[GREP_MAX_GLOBS];
	size_t			 ninclude;
	char			*exclude[GREP_MAX_GLOBS];
	size_t			 nexclude;
	char			*globbuf[2];
	const struct tool_ctx	*ctx;
	struct buf		*out;
	size_t			 found;
	size_t			 max;
	size_t			 files;
	size_t			 skipped_binary;
	size_t			 skipped_big;
};

static size_t
grep_globs(char *s, char **v)
{
	size_t	n = 0;
	char	*p, *save = NULL;

	for (p = strtok_r(s, ",", &save); p != NULL && n < GREP_MAX_GLOBS;
	    p = strtok_r(NULL, ",", &save)) {
		while (*p == ' ')
			p++;
		if (*p != '\0')
			v[n++] = p;
	}
	return n;
}

static int
grep_wanted(const struct grep_state *g, const char *relpath)
{
	size_t	i;

	for (i = 0; i < g->nexclude; i++)
		if (tool_glob_match(g->exclude[i], relpath))
			return 0;
	if (g->ninclude == 0)
		return 1;
	for (i = 0; i < g->ninclude; i++)
		if (tool_glob_match(g->include[i], relpath))
			return 1;
	return 0;
}

/* Report the line [ls, le) of relpath; 1 when the cap is reached. */
static int
grep_report(struct grep_state *g, const char *relpath, size_t lineno,
    const char *ls, const char *le)
{
	size_t	len = le - ls;

	if (g->found++ >= g->max)
		return 1;
	buf_addf(g->out, "%s:%zu:%.*s%s\n", relpath, lineno,
	    (int)(len > GREP_MAX_TEXT ? GREP_MAX_TEXT : len), ls,
	    len > GREP_MAX_TEXT ? " [line cut]" : "");
	return 0;
}

static int
grep_buffer(struct grep_state *g, const char *relpath, const char *data,
    size_t len)
{
	PCRE2_SIZE	*ov;
	const char	*ls, *le, *lc = data;
	size_t		 off = 0, lineno = 1;
	int		 rc;

	while (off <= len) {
		rc = pcre2_match(g->re, (PCRE2_SPTR)data, len, off, 0, g->md,
		    NULL);
		if (rc < 0)
			break;	/* no match, or an error (e.g. match limit) */
		ov = pcre2_get_ovector_pointer(g->md);
		/* Line of the match start; count lines since the last one. */
		ls = data + ov[0];
		while (ls > data && ls[-1] != '\n')
			ls--;
		for (; lc < ls; lc++)
			if (*lc == '\n')
				lineno++;
		le = memchr(data + ov[0], '\n', len - ov[0]);
		if (le == NULL)
			le = data + len;
		if (data + ov[1] <= le || pcre2_match(g->re, (PCRE2_SPTR)ls,
		    le - ls, 0, 0, g->md, NULL) >= 0)
			if (grep_report(g, relpath, lineno, ls, le))
				return 1;
		if (le >= data + len)
			break;
		off = le - data + 1;
	}
	return 0;
}

static int
grep_visit(const char *relpath, int dfd, const char *name, int is_link,
    void *arg)
{
	struct grep_state	*g = arg;
	struct stat		 st;
	char			*data;
	size_t			 len;
	int			 fd, rc;

	if (!grep_wanted(g, relpath))
		return 0;
	/* A symlink is followed only if it stays beneath the root, and to a
	 * regular file. An entry the walk saw as a regular file is opened
	 * without blocking: one swapped for a FIFO since does not hang us,
	 * and tool_slurp refuses it. */
	if (is_link)
		fd = tool_file_open(g->ctx, relpath, O_RDONLY, 0, &st);
	else
		fd = openat(dfd, name, O_RDONLY | O_NOFOLLOW | O_NOCTTY |
		    O_CLOEXEC | O_NONBLOCK);
	if (fd == -1)
		return 0;
	if (tool_slurp(fd, TOOL_MAX_FILE, &data, &len) == -1) {
		if (errno == EFBIG)
			g->skipped_big++;
		close(fd);
		return 0;
	}
	close(fd);
	g->files++;
	if (tool_is_binary(data, len)) {
		g->skipped_binary++;
		free(data);
		return 0;
	}
	rc = grep_buffer(g, relpath, data, len);
	free(data);
	return rc;
}

static void
grep_state_free(struct grep_state *g)
{
	pcre2_match_data_free(g->md);
	pcre2_code_free(g->re);
	free(g->globbuf[0]);
	free(g->globbuf[1]);
}

int
tool_grep(const struct tool_ctx *ctx, json_t *args, struct tool_result *res)
{
	const char		*pattern = json_string_value(
				    json_object_get(args, "pattern"));
	const char		*path = json_string_value(
				    json_object_get(args, "path"));
	const char		*inc = json_string_value(
				    json_object_get(args, "include"));
	const char		*exc = json_string_value(
				    json_object_get(args, "exclude"));
	json_t			*jmax = json_object_get(args, "max_results");
	struct grep_state	 g;
	struct buf		 b;
	PCRE2_UCHAR		 msg[256];
	PCRE2_SIZE		 eoff;
	uint32_t		 opts = 0;
	char			 rel[4096], err[512];
	size_t			 i;
	int			 ecode, rc;

	memset(&g, 0, sizeof(g));
	g.ctx = ctx;
	g.max = TOOLS_DEFAULT_MAX_MATCHES;
	if (jmax != NULL) {
		if (json_integer_value(jmax) < 1 ||
		    json_integer_value(jmax) > 100000)
			return tool_fail(res, "grep: max_results must be 1 to "
			    "100000");
		g.max = json_integer_value(jmax);
	}
	if (json_is_true(json_object_get(args, "ignore_case")))
		opts |= PCRE2_CASELESS;
	if (tool_path_rel(ctx, path, rel, sizeof(rel), err, sizeof(err)) == -1)
		return tool_fail(res, "grep: %s", err);
	tool_path_clean(rel);
	g.re = pcre2_compile((PCRE2_SPTR)pattern, PCRE2_ZERO_TERMINATED,
	    opts | PCRE2_MULTILINE, &ecode, &eoff, NULL);
	if (g.re == NULL) {
		pcre2_get_error_message(ecode, msg, sizeof(msg));
		return tool_fail(res, "grep: bad pattern at offset %zu: %s",
		    (size_t)eoff, (const char *)msg);
	}
	(void)pcre2_jit_compile(g.re, PCRE2_JIT_COMPLETE);
	if ((g.md = pcre2_match_data_create_from_pattern(g.re, NULL)) == NULL ||
	    (inc != NULL && (g.globbuf[0] = strdup(inc)) == NULL) ||
	    (exc != NULL && (g.globbuf[1] = strdup(exc)) == NULL)) {
		grep_state_free(&g);
		return -1;
	}
	if (g.globbuf[0] != NULL)
		g.ninclude = grep_globs(g.globbuf[0], g.include);
	if (g.globbuf[1] != NULL)
		g.nexclude = grep_globs(g.globbuf[1], g.exclude);
	for (i = 0; i < g.ninclude + g.nexclude; i++) {
		if (tool_glob_valid(i < g.ninclude ? g.include[i] :
		    g.exclude[i - g.ninclude], err, sizeof(err)) == 0)
			continue;
		grep_state_free(&g);
		return tool_fail(res, "grep: include/exclude: %s", err);
	}
	buf_init(&b, 0);
	g.out = &b;
	if (tool_walk(ctx, rel, json_is_true(json_object_get(args,
	    "include_ignored")) ? TOOL_WALK_IGNORED : 0, grep_visit, &g, err,
	    sizeof(err)) == -1) {
		grep_state_free(&g);
		buf_free(&b);
		return tool_fail(res, "grep: %s", err);
	}
	if (g.found > g.max)
		buf_addf(&b, "[stopped after %zu matching lines; narrow the "
		    "search or raise max_results]\n", g.max);
	else if (g.found == 0)
		buf_addf(&b, "(no matches in %zu files)\n", g.files);
	if (g.skipped_binary > 0 || g.skipped_big > 0)
		buf_addf(&b, "[skipped %zu binary files, %zu files over %u "
		    "MiB]\n", g.skipped_binary, g.skipped_big,
		    TOOL_MAX_FILE >> 20);
	grep_state_free(&g);
	rc = tool_done(ctx, res, &b);
	return rc;
}

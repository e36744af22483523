/*
 * glob: file names matching a pattern, ** for any number of directories.
 * A pattern without '/' matches the base name at any depth (as in
 * .gitignore), because "*.c" meaning "only at the top" surprises models and
 * people alike; a pattern with a slash (src/x.c, ./y.c) is anchored.
 */
#include <fnmatch.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "worker/tool_int.h"

#define GLOB_MAX_SEGS	80	/* > TOOL_MAX_DEPTH: no walked path is cut */
#define GLOB_MAX_STARS	16	/* fnmatch backtracks: bound its work */

static size_t
glob_split(char *s, char **segs)
{
	size_t	n = 0;
	char	*p, *save = NULL;

	/* strtok_r: tools run on several threads at once. */
	for (p = strtok_r(s, "/", &save); p != NULL && n < GLOB_MAX_SEGS;
	    p = strtok_r(NULL, "/", &save))
		if (strcmp(p, ".") != 0)
			segs[n++] = p;
	return n;
}

/*
 * Does ps[pi..] match ss[si..]? Memoised on (pi, si): with several ** a
 * plain recursion is exponential in the path depth, and patterns come from
 * the model (grep's include/exclude too).
 */
struct glob_memo {
	char		 **ps, **ss;
	size_t		   np, ns;
	unsigned char	   m[GLOB_MAX_SEGS + 1][GLOB_MAX_SEGS + 1];
};

static int
glob_segs(struct glob_memo *g, size_t pi, size_t si)
{
	size_t	k;
	int	r;

	if (g->m[pi][si] != 0)
		return g->m[pi][si] == 1;
	if (pi == g->np)
		r = si == g->ns;
	else if (strcmp(g->ps[pi], "**") == 0) {
		r = 0;
		for (k = si; k <= g->ns && !r; k++)
			r = glob_segs(g, pi + 1, k);
	} else
		r = si < g->ns && fnmatch(g->ps[pi], g->ss[si], 0) == 0 &&
		    glob_segs(g, pi + 1, si + 1);
	g->m[pi][si] = r ? 1 : 2;
	return r;
}

int
tool_glob_valid(const char *pattern, char *err, size_t errlen)
{
	const char	*p, *seg;
	size_t		 stars = 0, segs = 1;

	/* Count the * that fnmatch sees: those outside whole ** segments. */
	for (seg = p = pattern; ; p++) {
		if (*p != '/' && *p != '\0')
			continue;
		if (!(p - seg == 2 && seg[0] == '*' && seg[1] == '*'))
			for (; seg < p; seg++)
				stars += *seg == '*';
		if (*p == '\0')
			break;
		segs++;
		seg = p + 1;
	}
	if (*pattern == '\0' || strlen(pattern) >= 1024 ||
	    stars > GLOB_MAX_STARS || segs > GLOB_MAX_SEGS) {
		snprintf(err, errlen, "glob \"%.64s\" is empty, too long or "
		    "too complex (at most 1023 bytes, %d segments, %d * "
		    "outside **)", pattern, GLOB_MAX_SEGS, GLOB_MAX_STARS);
		return -1;
	}
	return 0;
}

int
tool_glob_match(const char *pattern, const char *path)
{
	char		 pbuf[1024], sbuf[4096], *ps[GLOB_MAX_SEGS];
	char		*ss[GLOB_MAX_SEGS];
	struct glob_memo g;
	const char	*base;

	if (tool_glob_valid(pattern, pbuf, sizeof(pbuf)) == -1)
		return 0;
	if (strchr(pattern, '/') == NULL) {
		base = strrchr(path, '/') ? strrchr(path, '/') + 1 : path;
		return fnmatch(pattern, base, 0) == 0;
	}
	if (strlcpy(pbuf, pattern, sizeof(pbuf)) >= sizeof(pbuf) ||
	    strlcpy(sbuf, path, sizeof(sbuf)) >= sizeof(sbuf))
		return 0;
	memset(&g, 0, sizeof(g));
	g.ps = ps;
	g.ss = ss;
	g.np = glob_split(pbuf, ps);
	g.ns = glob_split(sbuf, ss);
	return glob_segs(&g, 0, 0);
}

struct glob_state {
	const char	*pattern;
	size_t		 baselen;	/* strip this prefix of relpath */
	struct buf	*out;
	size_t		 found;
	size_t		 max;
};

static int
glob_visit(const char *relpath, int dfd, const char *name, int is_link,
    void *arg)
{
	struct glob_state	*g = arg;
	const char		*sub;

	(void)dfd;
	(void)name;
	(void)is_link;
	sub = strlen(relpath) >= g->baselen ? relpath + g->baselen : name;
	if (!tool_glob_match(g->pattern, sub))
		return 0;
	if (g->found++ < g->max)
		buf_addf(g->out, "%s\n", relpath);
	return 0;
}

int
tool_glob(const struct tool_ctx *ctx, json_t *args, struct tool_result *res)
{
	const char		*pattern = json_string_value(
				    json_object_get(args, "pattern"));
	const char		*path = json_string_value(
				    json_object_get(args, "path"));
	struct glob_state	 g;
	struct buf		 b;
	char			 rel[4096], err[512];

	if (tool_glob_valid(pattern, err, sizeof(err)) == -1)
		return tool_fail(res, "glob: %s", err);
	while (strncmp(pattern, "./", 2) == 0)
		pattern += 2;
	if (tool_path_rel(ctx, path, rel, sizeof(rel), err, sizeof(err)) == -1)
		return tool_fail(res, "glob: %s", err);
	memset(&g, 0, sizeof(g));
	g.pattern = pattern;
	g.max = TOOLS_DEFAULT_MAX_MATCHES;
	buf_init(&b, 0);
	g.out = &b;
	tool_path_clean(rel);
	if (strcmp(rel, ".") != 0)
		g.baselen = strlen(rel) + 1;
	if (tool_walk(ctx, rel, json_is_true(json_object_get(args,
	    "include_ignored")) ? TOOL_WALK_IGNORED : 0, glob_visit, &g, err,
	    sizeof(err)) == -1) {
		buf_free(&b);
		return tool_fail(res, "glob: %s", err);
	}
	if (g.found > g.max)
		buf_addf(&b, "[%zu more matches not shown; narrow the "
		    "pattern]\n", g.found - g.max);
	if (g.found == 0)
		buf_addf(&b, "(no files match %s)\n", pattern);
	return tool_done(ctx, res, &b);
}

/*
 * .gitignore for the walk under glob and grep: each directory's
 * .gitignore adds its rules while the walk is inside it; an entry is
 * ignored when the last rule that matches it is not a negation ("!").
 * Patterns are matched as git does for the common forms: blank lines and
 * "#" comments skipped, "\#" and "\!" escaped, trailing blanks dropped, a
 * trailing "/" for directories only, a pattern with a "/" before its end
 * anchored to its .gitignore's directory, one without matched against the
 * name at any depth, "**" for any number of directories (tool_glob_match).
 * Not read: .git/info/exclude, core.excludesFile, nested repositories'
 * rules beyond their .gitignore files.
 *
 * A .gitignore is workspace content, written by whoever wrote the
 * workspace (an agent too): it is read through the walk's directory fd
 * (O_NOFOLLOW: a link named .gitignore is not followed), at most
 * IGNORE_FILE_MAX bytes of it, at most IGNORE_RULES_MAX rules in all, and
 * a pattern tool_glob_valid refuses (too long, too many "*") is skipped.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "worker/tool_int.h"

static void
ignore_rule_free(struct ignore_rule *r)
{
	free(r->pat);
	free(r->base);
}

/* One line of a .gitignore in dir (relative to the root, "" for it). */
static int
ignore_add(struct ignore *ig, char *line, const char *dir)
{
	struct ignore_rule	 r, *nv;
	char			 why[256];
	size_t			 len;

	memset(&r, 0, sizeof(r));
	len = strlen(line);
	while (len > 0 && (line[len - 1] == ' ' || line[len - 1] == '\t' ||
	    line[len - 1] == '\r') && !(len > 1 && line[len - 2] == '\\'))
		line[--len] = '\0';
	if (len == 0 || line[0] == '#')
		return 0;
	if (line[0] == '!') {
		r.neg = 1;
		line++;
	} else if (line[0] == '\\' && (line[1] == '#' || line[1] == '!'))
		line++;
	len = strlen(line);
	if (len > 0 && line[len - 1] == '/') {
		r.dironly = 1;
		line[--len] = '\0';
	}
	/* A slash before the end anchors it to dir; "./x" keeps a slash
	 * for tool_glob_match once the leading one is gone. */
	r.anchored = strchr(line, '/') != NULL;
	if (line[0] == '/')
		line++;
	if (*line == '\0')
		return 0;
	if (r.anchored && strchr(line, '/') == NULL) {
		if (asprintf(&r.pat, "./%s", line) == -1)
			return -1;
	} else
		r.pat = strdup(line);
	if (r.pat != NULL && tool_glob_valid(r.pat, why, sizeof(why)) == -1) {
		free(r.pat);
		return 0;	/* too long or too costly a pattern */
	}
	if (r.pat == NULL || (r.base = strdup(dir)) == NULL) {
		ignore_rule_free(&r);
		return -1;
	}
	if (ig->n == ig->cap) {
		ig->cap = ig->cap ? ig->cap * 2 : 16;
		if ((nv = reallocarray(ig->v, ig->cap, sizeof(*nv))) == NULL) {
			ignore_rule_free(&r);
			return -1;
		}
		ig->v = nv;
	}
	ig->v[ig->n++] = r;
	return 0;
}

int
ignore_load(struct ignore *ig, int dfd, const char *dir, size_t *added)
{
	char	 buf[IGNORE_FILE_MAX + 1], *line, *save = NULL;
	ssize_t	 n;
	size_t	 got = 0, before = ig->n;
	int	 fd;

	*added = 0;
	if ((fd = openat(dfd, ".gitignore", O_RDONLY | O_NOFOLLOW |
	    O_NONBLOCK | O_CLOEXEC)) == -1)
		return 0;	/* none, a link, unreadable: no rules */
	while (got < IGNORE_FILE_MAX &&
	    (n = read(fd, buf + got, IGNORE_FILE_MAX - got)) > 0)
		got += (size_t)n;
	close(fd);
	buf[got] = '\0';
	for (line = strtok_r(buf, "\n", &save); line != NULL &&
	    ig->n < IGNORE_RULES_MAX; line = strtok_r(NULL, "\n", &save))
		if (ignore_add(ig, line, dir) == -1)
			return -1;
	*added = ig->n - before;
	return 0;
}

void
ignore_pop(struct ignore *ig, size_t n)
{
	while (n-- > 0 && ig->n > 0)
		ignore_rule_free(&ig->v[--ig->n]);
}

void
ignore_free(struct ignore *ig)
{
	ignore_pop(ig, ig->n);
	free(ig->v);
	memset(ig, 0, sizeof(*ig));
}

/* path: relative to the root. The last rule that matches decides. */
int
ignore_match(const struct ignore *ig, const char *path, int isdir)
{
	const struct ignore_rule	*r;
	const char			*sub;
	size_t				 i, blen;

	for (i = ig->n; i-- > 0; ) {
		r = &ig->v[i];
		if (r->dironly && !isdir)
			continue;
		blen = strlen(r->base);
		if (blen > 0 && (strncmp(path, r->base, blen) != 0 ||
		    path[blen] != '/'))
			continue;	/* not below its .gitignore */
		sub = blen > 0 ? path + blen + 1 : path;
		if (tool_glob_match(r->pat, sub))
			return !r->neg;
	}
	return 0;
}

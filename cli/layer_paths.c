/*
 * `warren diff RUN PATH...` and `warren apply RUN PATH...`: which of a
 * layer's changes the named paths select. A path is relative to the
 * workspace (an absolute one must lie in it); a directory names what is
 * under it, "." everything. A named path that selects no change is an
 * error naming it, before anything is shown or written. Which changes a
 * path names exactly is kept apart: naming a file is as explicit as
 * `--include PATH`, so it is applied even when the review rules (or the
 * workspace's .gitignore) would hold it back; a directory does not
 * release what is held under it.
 */
#include <sys/stat.h>

#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/layer.h"
#include "common/str.h"
#include "workspace/cow_walk.h"

/* p as a path below ws: "./a//b/" is "a/b", "/ws/a" is "a", "." is "";
 * NULL (err set) if it leaves the workspace. */
static char *
layer_paths_norm(const char *ws, const char *p, char *err, size_t errsz)
{
	char	*out, *s, *d, *e;
	size_t	 wl = strlen(ws);

	if (p[0] == '/') {
		if (strncmp(p, ws, wl) != 0 || (p[wl] != '/' && p[wl] != '\0'))
			goto outside;
		p += wl;
	}
	if ((out = calloc(1, strlen(p) + 1)) == NULL) {
		snprintf(err, errsz, "out of memory");
		return NULL;
	}
	for (s = (char *)(uintptr_t)p, d = out; *s != '\0';) {
		while (*s == '/')
			s++;
		if ((e = strchr(s, '/')) == NULL)
			e = s + strlen(s);
		if (e - s == 2 && s[0] == '.' && s[1] == '.') {
			free(out);
			goto outside;
		}
		if (e > s && !(e - s == 1 && s[0] == '.')) {
			if (d > out)
				*d++ = '/';
			memcpy(d, s, e - s);
			d += e - s;
		}
		s = e;
	}
	*d = '\0';
	return out;
 outside:
	e = str_escape_dup(p, strlen(p), 0);
	snprintf(err, errsz, "%s: not a path in the workspace %s (name it "
	    "relative to the workspace)", e != NULL ? e : "?", ws);
	free(e);
	return NULL;
}

/* Does the named path n ("" for all) hold change path c? 2 exactly, 1
 * under it, 0 not. */
static int
layer_paths_holds(const char *n, const char *c)
{
	size_t	l = strlen(n);

	if (l == 0)
		return 1;
	if (strncmp(c, n, l) != 0)
		return 0;
	return c[l] == '\0' ? 2 : c[l] == '/';
}

/* A directory apply must make for a selected path under it: added, or a
 * file before. */
static int
layer_paths_made_dir(const struct cow_change *ch)
{
	return S_ISDIR(ch->new_mode) && ch->kind != COW_DELETED &&
	    (ch->kind == COW_ADDED || !S_ISDIR(ch->base.mode));
}

/* Keep the directories above path that apply must make. */
static void
layer_paths_parents(const struct cow_changes *ch, const char *path,
    unsigned char *keep)
{
	const struct cow_change	*p;
	char			 dir[PATH_MAX];
	char			*slash;

	if (strlcpy(dir, path, sizeof(dir)) >= sizeof(dir))
		return;
	while ((slash = strrchr(dir, '/')) != NULL) {
		*slash = '\0';
		if ((p = cow_walk_find(ch, dir)) != NULL &&
		    layer_paths_made_dir(p))
			keep[p - ch->v] = 1;
	}
}

void
layer_paths_keep_parents(const struct cow_changes *ch, unsigned char *keep)
{
	size_t	i;

	for (i = 0; i < ch->n; i++)
		if (keep[i])
			layer_paths_parents(ch, ch->v[i].path, keep);
}

int
layer_paths_select(const char *ws, const struct cow_changes *ch,
    char *const *paths, size_t npaths, unsigned char *sel, char *err,
    size_t errsz)
{
	char	*n;
	size_t	 i, k, hits;
	int	 h;

	memset(sel, npaths == 0 ? LAYER_SEL : 0, ch->n);
	for (k = 0; k < npaths; k++) {
		if ((n = layer_paths_norm(ws, paths[k], err, errsz)) == NULL)
			return -1;
		for (i = 0, hits = 0; i < ch->n; i++) {
			if ((h = layer_paths_holds(n, ch->v[i].path)) == 0)
				continue;
			sel[i] |= LAYER_SEL | (h == 2 ? LAYER_NAMED : 0);
			hits++;
		}
		free(n);
		if (hits == 0) {
			n = str_escape_dup(paths[k], strlen(paths[k]), 0);
			snprintf(err, errsz, "%s: the run changed nothing there "
			    "(`warren diff --stat RUN` lists what it changed, "
			    "relative to the workspace)", n != NULL ? n : "?");
			free(n);
			return -1;
		}
	}
	return 0;
}

int
layer_paths_subset(const struct cow_changes *ch, const unsigned char *keep,
    struct cow_changes *out)
{
	size_t	i;

	memset(out, 0, sizeof(*out));
	if ((out->v = calloc(ch->n + 1, sizeof(*out->v))) == NULL)
		return -1;
	for (i = 0; i < ch->n; i++)
		if (keep[i])
			out->v[out->n++] = ch->v[i];	/* borrowed */
	return 0;
}

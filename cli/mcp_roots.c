/*
 * Where `warren mcp` may act: the directories it was started with
 * (--root DIR, default its working directory), as real paths. A workspace
 * a client names is resolved (symlinks and all) and must lie under one;
 * a run a client names must have run under one.
 */
#include <sys/stat.h>

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/mcp.h"
#include "store/store.h"

int
mcp_roots_add(struct mcp_server *s, const char *dir, char *err,
    size_t errsz)
{
	char		real[PATH_MAX];
	struct stat	sb;

	if (s->nroots == MCP_ROOTS_MAX) {
		snprintf(err, errsz, "more than %d --root", MCP_ROOTS_MAX);
		return -1;
	}
	if (realpath(dir, real) == NULL || stat(real, &sb) == -1) {
		snprintf(err, errsz, "--root %s: %s", dir, strerror(errno));
		return -1;
	}
	if (!S_ISDIR(sb.st_mode)) {
		snprintf(err, errsz, "--root %s: not a directory", dir);
		return -1;
	}
	if ((s->roots[s->nroots] = strdup(real)) == NULL) {
		snprintf(err, errsz, "out of memory");
		return -1;
	}
	s->nroots++;
	return 0;
}

int
mcp_roots_under(const struct mcp_server *s, const char *p)
{
	size_t	i, n;

	for (i = 0; i < s->nroots; i++) {
		n = strlen(s->roots[i]);
		if (strncmp(p, s->roots[i], n) == 0 && (p[n] == '\0' ||
		    p[n] == '/' || (n == 1 && s->roots[i][0] == '/')))
			return 1;
	}
	return 0;
}

/* "ROOT, ROOT" for a refusal. */
static void
mcp_roots_list(const struct mcp_server *s, char *out, size_t outsz)
{
	size_t	i, off = 0;
	int	n;

	out[0] = '\0';
	for (i = 0; i < s->nroots && off < outsz; i++) {
		n = snprintf(out + off, outsz - off, "%s%s", i ? ", " : "",
		    s->roots[i]);
		if (n < 0)
			break;
		off += (size_t)n;
	}
}

int
mcp_roots_workspace(const struct mcp_server *s, const char *ws, char *out,
    size_t outsz, char *why, size_t whysz)
{
	char		real[PATH_MAX], roots[1024];
	struct stat	sb;

	if (ws == NULL)
		ws = s->cwd;
	if (realpath(ws, real) == NULL) {
		snprintf(why, whysz, "workspace %s: %s", ws, strerror(errno));
		return -1;
	}
	if (stat(real, &sb) == -1 || !S_ISDIR(sb.st_mode)) {
		snprintf(why, whysz, "workspace %s: not a directory", ws);
		return -1;
	}
	if (!mcp_roots_under(s, real)) {
		mcp_roots_list(s, roots, sizeof(roots));
		snprintf(why, whysz, "workspace %s (%s) is outside the "
		    "directories this server may use (%s): name one under "
		    "them, or start `warren mcp --root DIR` with it", ws, real,
		    roots);
		return -1;
	}
	if (strlcpy(out, real, outsz) >= outsz) {
		snprintf(why, whysz, "workspace %s: path too long", ws);
		return -1;
	}
	return 0;
}

int
mcp_roots_run(const struct mcp_server *s, int64_t run, char *out,
    size_t outsz, char *why, size_t whysz)
{
	struct store		*st;
	struct store_run	 r;
	char			 path[PATH_MAX], err[1024], roots[1024];
	struct stat		 sb;
	int			 rc = -1, got = 0;

	if (store_path(path, sizeof(path), NULL) == -1) {
		snprintf(why, whysz, "no database path (%s): set HOME or "
		    "XDG_STATE_HOME for warren mcp", strerror(errno));
		return -1;
	}
	if (stat(path, &sb) == -1 && errno == ENOENT) {
		snprintf(why, whysz, "run %lld: no runs recorded yet (no "
		    "database at %s)", (long long)run, path);
		return -1;
	}
	if ((st = store_open(path, STORE_READ, err, sizeof(err))) == NULL) {
		snprintf(why, whysz, "run %lld: %s", (long long)run, err);
		return -1;
	}
	memset(&r, 0, sizeof(r));
	if ((got = store_run_get(st, run, &r) == 0) == 0)
		snprintf(why, whysz, "run %lld: %s: `runs` lists the runs",
		    (long long)run, store_errmsg(st));
	else if (r.workspace == NULL || !mcp_roots_under(s, r.workspace)) {
		mcp_roots_list(s, roots, sizeof(roots));
		snprintf(why, whysz, "run %lld ran in %s, outside the "
		    "directories this server may use (%s)", (long long)run,
		    r.workspace ? r.workspace : "no workspace", roots);
	} else if (strlcpy(out, r.workspace, outsz) >= outsz)
		snprintf(why, whysz, "run %lld: workspace path too long",
		    (long long)run);
	else
		rc = 0;
	if (got)
		store_run_free(&r);
	store_close(st);
	return rc;
}

/*
 * The project files a user trusted (`warren trust`): per workspace, each
 * file's path below the workspace and the SHA-256 of the contents the user
 * saw. project.c compares what is on disk now against this set.
 */
#include <stdlib.h>
#include <string.h>

#include <sqlite3.h>

#include "common/clock.h"
#include "store/store_int.h"

void
store_trusted_free(struct store_trusted *v, size_t n)
{
	size_t	i;

	for (i = 0; i < n; i++)
		free(v[i].path);
	free(v);
}

int
store_trust_get(struct store *st, const char *workspace,
    struct store_trusted **out, size_t *nout)
{
	struct store_trusted	*v = NULL, *nv;
	sqlite3_stmt		*s;
	const char		*hash;
	size_t			 n = 0;
	int			 rc, ok = 1;

	*out = NULL;
	*nout = 0;
	if (store_check_owner(st) == -1)
		return -1;
	if ((rc = sqlite3_prepare_v2(st->db, "SELECT path, sha256 FROM "
	    "trusted_files WHERE workspace = ? ORDER BY path", -1, &s,
	    NULL)) != SQLITE_OK)
		return store_setdberr(st, rc, "reading trusted files");
	sqlite3_bind_text(s, 1, workspace, -1, SQLITE_STATIC);
	while (ok && (rc = sqlite3_step(s)) == SQLITE_ROW) {
		if ((nv = reallocarray(v, n + 1, sizeof(*v))) == NULL) {
			ok = 0;
			break;
		}
		v = nv;
		memset(&v[n], 0, sizeof(v[n]));
		hash = (const char *)sqlite3_column_text(s, 1);
		strlcpy(v[n].sha256, hash != NULL ? hash : "",
		    sizeof(v[n].sha256));
		v[n].path = store_col_dup(s, 0, &ok);
		n++;
	}
	sqlite3_finalize(s);
	if (!ok) {
		store_trusted_free(v, n);
		return store_seterr(st, STORE_ENOMEM, "reading trusted files");
	}
	if (rc != SQLITE_DONE) {
		store_trusted_free(v, n);
		return store_setdberr(st, rc, "reading trusted files");
	}
	*out = v;
	*nout = n;
	return 0;
}

/* Run one statement with the workspace and maybe a file bound. */
static int
store_trust_exec(struct store *st, const char *sql, const char *workspace,
    const struct store_trusted *f)
{
	sqlite3_stmt	*s;
	int		 rc;

	if ((rc = sqlite3_prepare_v2(st->db, sql, -1, &s, NULL)) != SQLITE_OK)
		return store_setdberr(st, rc, "recording trusted files");
	sqlite3_bind_text(s, 1, workspace, -1, SQLITE_STATIC);
	if (f != NULL) {
		sqlite3_bind_text(s, 2, f->path, -1, SQLITE_STATIC);
		sqlite3_bind_text(s, 3, f->sha256, -1, SQLITE_STATIC);
		sqlite3_bind_int64(s, 4, clock_wall_ms());
	}
	rc = store_exec_stmt(st, s, "recording trusted files");
	sqlite3_finalize(s);
	return rc;
}

int
store_trust_set(struct store *st, const char *workspace,
    const struct store_trusted *v, size_t n)
{
	size_t	i;
	int	ok;

	if (store_op_begin(st) == -1)
		return -1;
	ok = store_trust_exec(st, "DELETE FROM trusted_files WHERE "
	    "workspace = ?", workspace, NULL) == 0;
	for (i = 0; ok && i < n; i++)
		ok = store_trust_exec(st, "INSERT INTO trusted_files (workspace,"
		    " path, sha256, trusted_ms) VALUES (?, ?, ?, ?)", workspace,
		    &v[i]) == 0;
	if (store_op_end(st, ok, n + 1) == -1)
		return -1;
	return store_flush(st);
}

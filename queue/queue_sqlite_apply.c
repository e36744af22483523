/*
 * What `warren queue apply` reads and writes on SQLite: a job's change
 * set (a blob beside its result, read only when asked: `ls` and `show`
 * read its length) and where it was applied.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "queue/queue_sqlite_int.h"

int
qs_changes(struct queue *q, int64_t id, void **data, size_t *len)
{
	sqlite3_stmt	*s;
	const void	*b;
	int		 rc;

	if ((s = qs_stmt(q, QS_CHANGES_GET)) == NULL)
		return -1;
	sqlite3_bind_int64(s, 1, id);
	if ((rc = sqlite3_step(s)) == SQLITE_ROW &&
	    sqlite3_column_type(s, 0) == SQLITE_BLOB &&
	    (*len = (size_t)sqlite3_column_bytes(s, 0)) > 0) {
		b = sqlite3_column_blob(s, 0);
		if (b == NULL || (*data = malloc(*len)) == NULL) {
			sqlite3_reset(s);
			*len = 0;
			return queue_seterr(q, "job %lld: reading its changes: "
			    "%s", (long long)id, strerror(ENOMEM));
		}
		memcpy(*data, b, *len);
	} else
		*len = 0;
	sqlite3_reset(s);
	if (rc == SQLITE_DONE)
		return queue_notfound(q, id);
	if (rc != SQLITE_ROW)
		return qs_dberr(q, "job %lld: reading its changes",
		    (long long)id);
	return 0;
}

int
qs_applied(struct queue *q, int64_t id, const char *by)
{
	sqlite3_stmt	*s;

	if ((s = qs_stmt(q, QS_APPLIED)) == NULL)
		return -1;
	sqlite3_bind_int64(s, 1, id);
	sqlite3_bind_int64(s, 2, queue_now(q));
	qs_bind_text(s, 3, by);
	if (qs_run(q, QS_APPLIED, "recording where a job was applied") == -1)
		return -1;
	if (sqlite3_changes(sqlite3_db_handle(s)) == 0)
		return queue_notfound(q, id);
	return 0;
}

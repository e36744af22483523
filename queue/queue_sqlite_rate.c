/*
 * The shared LLM rate limits on SQLite: one row per endpoint in
 * queue_rate, read, stepped (queue_rate_step) and written back under
 * BEGIN IMMEDIATE, so two processes never both take the same slot.
 */
#include <string.h>

#include "queue/queue_sqlite_int.h"

static int
qs_rate_read(struct queue *q, const char *endpoint,
    struct queue_rate_state *st)
{
	sqlite3_stmt	*s;
	int		 rc;

	memset(st, 0, sizeof(*st));
	if ((s = qs_stmt(q, QS_RATE_GET)) == NULL)
		return -1;
	if (qs_bind_text(s, 1, endpoint) != SQLITE_OK)
		return qs_dberr(q, "reading the rate of %s", endpoint);
	if ((rc = sqlite3_step(s)) == SQLITE_ROW) {
		st->req_tat_ms = sqlite3_column_int64(s, 0);
		st->tok_tat_ms = sqlite3_column_int64(s, 1);
		st->pause_until_ms = sqlite3_column_int64(s, 2);
	}
	sqlite3_reset(s);
	if (rc != SQLITE_ROW && rc != SQLITE_DONE)
		return qs_dberr(q, "reading the rate of %s", endpoint);
	return 0;
}

static int
qs_rate_write(struct queue *q, const char *endpoint,
    const struct queue_rate_state *st)
{
	sqlite3_stmt	*s;

	if ((s = qs_stmt(q, QS_RATE_PUT)) == NULL)
		return -1;
	if (qs_bind_text(s, 1, endpoint) != SQLITE_OK ||
	    sqlite3_bind_int64(s, 2, st->req_tat_ms) != SQLITE_OK ||
	    sqlite3_bind_int64(s, 3, st->tok_tat_ms) != SQLITE_OK ||
	    sqlite3_bind_int64(s, 4, st->pause_until_ms) != SQLITE_OK)
		return qs_dberr(q, "writing the rate of %s", endpoint);
	return qs_run(q, QS_RATE_PUT, "writing the rate");
}

int
qs_rate(struct queue *q, const char *endpoint,
    const struct queue_rate_req *r, uint64_t *wait_ms)
{
	struct queue_rate_state	st, before;

	if (qs_begin(q) == -1)
		return -1;
	if (qs_rate_read(q, endpoint, &st) == -1)
		goto fail;
	before = st;
	*wait_ms = queue_rate_step(&st, queue_now(q), r);
	if (memcmp(&st, &before, sizeof(st)) != 0 &&
	    qs_rate_write(q, endpoint, &st) == -1)
		goto fail;
	return qs_commit(q);
fail:
	qs_rollback(q);
	return -1;
}

/*
 * What `warren queue apply` reads and writes on PostgreSQL: a job's
 * change set (bytea beside its result, sent and read as binary, read
 * only when asked: `ls` and `show` read its length) and where it was
 * applied, on the server's clock.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "queue/queue_pg_int.h"

int
qp_changes(struct queue *q, int64_t id, void **data, size_t *len)
{
	struct qp_params	 p = { .n = 0 };
	PGresult		*r;

	if (qp_ready(q) == -1)
		return -1;
	qp_i64(&p, id);
	p.binary_result = 1;
	if ((r = qp_exec(q, "SELECT changes FROM queue_jobs WHERE id = $1",
	    &p, "reading a job's changes")) == NULL)
		return -1;
	if (PQntuples(r) == 0) {
		PQclear(r);
		return queue_notfound(q, id);
	}
	if (!PQgetisnull(r, 0, 0) && (*len = (size_t)PQgetlength(r, 0, 0)) >
	    0) {
		if ((*data = malloc(*len)) == NULL) {
			PQclear(r);
			*len = 0;
			return queue_seterr(q, "job %lld: reading its changes: "
			    "%s", (long long)id, strerror(ENOMEM));
		}
		memcpy(*data, PQgetvalue(r, 0, 0), *len);
	}
	PQclear(r);
	return 0;
}

int
qp_applied(struct queue *q, int64_t id, const char *by)
{
	struct qp_params	p = { .n = 0 };
	int64_t			rows = 0, now;

	if (qp_ready(q) == -1 || qp_now(q, &now) == -1)
		return -1;
	qp_i64(&p, id);
	qp_i64(&p, now);
	qp_str(&p, by);
	if (qp_cmd(q, "UPDATE queue_jobs SET applied_ms = $2, applied_by = $3"
	    " WHERE id = $1", &p, "recording where a job was applied",
	    &rows) == -1)
		return -1;
	return rows == 0 ? queue_notfound(q, id) : 0;
}

/*
 * The job row, decoded once for every backend: QUEUE_JOB_COLUMNS
 * (queue_int.h) is the one list of its columns, their fields and kinds;
 * each backend reads its columns through struct queue_row.
 */
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "queue/queue_int.h"

enum queue_row_kind {
	QR_I64,
	QR_INT,
	QR_U64,
	QR_SIZE,
	QR_TEXT,
	QR_STATUS,
};

struct queue_row_col {
	enum queue_row_kind	kind;
	size_t			off;	/* in struct queue_job */
};

#define QR_COL(sql, field, kind) \
	{ QR_##kind, offsetof(struct queue_job, field) }
#define QR_NEXT	,

static const struct queue_row_col queue_row_cols[] = {
	QUEUE_JOB_COLUMNS(QR_COL, QR_NEXT)
};

/* Column i as text copied into *out (NULL for NULL); -1 out of memory. */
static int
queue_row_text(const struct queue_row *r, int i, char **out)
{
	const char	*t = r->text(r->arg, i);

	*out = NULL;
	if (t == NULL)
		return r->null(r->arg, i) ? 0 : -1;
	return (*out = strdup(t)) == NULL ? -1 : 0;
}

static enum queue_status
queue_row_status(const struct queue_row *r, int i)
{
	enum queue_status	 st;
	const char		*t = r->text(r->arg, i);

	if (t == NULL || queue_status_parse(t, &st) == -1)
		return QUEUE_DEAD;	/* not written by us: never run it */
	return st;
}

static int
queue_row_col(const struct queue_row *r, int i, struct queue_job *j)
{
	const struct queue_row_col	*c = &queue_row_cols[i];
	char				*f = (char *)j + c->off;

	switch (c->kind) {
	case QR_I64:
		*(int64_t *)(void *)f = r->i64(r->arg, i);
		return 0;
	case QR_INT:
		*(int *)(void *)f = (int)r->i64(r->arg, i);
		return 0;
	case QR_U64:
		*(uint64_t *)(void *)f = (uint64_t)r->i64(r->arg, i);
		return 0;
	case QR_SIZE:
		*(size_t *)(void *)f = (size_t)r->i64(r->arg, i);
		return 0;
	case QR_TEXT:
		return queue_row_text(r, i, (char **)(void *)f);
	case QR_STATUS:
		*(enum queue_status *)(void *)f = queue_row_status(r, i);
		return 0;
	}
	return -1;
}

int
queue_row_job(const struct queue_row *r, struct queue_job *j)
{
	size_t	i;

	memset(j, 0, sizeof(*j));
	for (i = 0; i < sizeof(queue_row_cols) / sizeof(queue_row_cols[0]);
	    i++) {
		if (queue_row_col(r, (int)i, j) == -1) {
			queue_job_free(j);
			return -1;
		}
	}
	return 0;
}

/*
 * One path for every write: the call builds its typed operation (its own
 * struct, struct store_op at its head) and submits it. Without a writer
 * thread the connection's owner applies it at once, with the same apply
 * function the writer thread runs on its connection once it is queued
 * (store_writer.c). Ids of rows an operation creates are handles while it
 * is queued; store_real() turns them into the rows' ids on the owner.
 */
#include <stdlib.h>
#include <string.h>

#include "common/log.h"
#include "store/store_int.h"
#include "store/store_testapi.h"

void *
store_op_new(struct store *st, const struct store_op_type *t, size_t size)
{
	struct store_op	*op;

	if ((op = calloc(1, size)) == NULL) {
		store_seterr(st, STORE_ENOMEM, "%s: out of memory", t->what);
		return NULL;
	}
	op->type = t;
	op->bytes = size;
	return op;
}

int
store_op_str(struct store_op *op, char **dst, const char *s)
{
	*dst = NULL;
	if (s == NULL)
		return 0;
	if ((*dst = strdup(s)) == NULL)
		return -1;
	op->bytes += strlen(s);
	return 0;
}

int
store_op_ids(struct store_op *op, int64_t **dst, const int64_t *ids,
    size_t n)
{
	*dst = NULL;
	if (n == 0)
		return 0;
	if ((*dst = calloc(n, sizeof(**dst))) == NULL)
		return -1;
	memcpy(*dst, ids, n * sizeof(**dst));
	op->bytes += n * sizeof(**dst);
	return 0;
}

void
store_op_free(struct store_op *op)
{
	if (op == NULL)
		return;
	if (op->type->clear != NULL)
		op->type->clear(op);
	free(op);
}

int
store_op_submit(struct store *st, struct store_op *op)
{
	size_t	i;
	int	rc;

	if (st->w != NULL)
		return store_w_queue(st, op);
	rc = op->type->apply(st, op);
	for (i = 0; rc == 0 && i < op->nmade; i++)
		if (op->out[i] != NULL)
			*op->out[i] = op->made[i];
	if (op->type->kind != STORE_OP_CALL)
		store_op_free(op);
	return rc;
}

void
store_op_made(struct store *st, struct store_op *op, size_t i, int64_t id)
{
	size_t	 k, cap;
	int64_t	*m;

	if (op->made[i] >= STORE_HANDLE_BASE) {
		k = (size_t)(op->made[i] - STORE_HANDLE_BASE);
		if (k >= st->mapcap) {
			cap = st->mapcap ? st->mapcap : 64;
			while (cap <= k)
				cap *= 2;
			if ((m = reallocarray(st->map, cap, sizeof(*m))) == NULL)
				fatal("store: id map");
			memset(m + st->mapcap, 0, (cap - st->mapcap) * sizeof(*m));
			st->map = m;
			st->mapcap = cap;
		}
		st->map[k] = id;
	}
	op->made[i] = id;
}

int64_t
store_real(struct store *st, int64_t id)
{
	uint64_t	k;

	if (id < STORE_HANDLE_BASE)
		return id;
	k = (uint64_t)(id - STORE_HANDLE_BASE);
	return k < st->mapcap ? st->map[k] : 0;
}

/* --- calls: run a function on the owner and wait -------------------------- */

struct store_call_op {
	struct store_op	  hdr;
	int		(*fn)(struct store *, void *);
	void		 *arg;
};

static int
store_call_apply(struct store *st, struct store_op *op)
{
	struct store_call_op	*c = (struct store_call_op *)op;

	return c->fn(st, c->arg);
}

static const struct store_op_type store_call_type = {
	"a read", STORE_OP_CALL, store_call_apply, NULL
};

int
store_call(struct store *st, int (*fn)(struct store *, void *), void *arg)
{
	struct store_call_op	c;

	memset(&c, 0, sizeof(c));
	c.hdr.type = &store_call_type;
	c.hdr.bytes = sizeof(c);
	c.fn = fn;
	c.arg = arg;
	return store_op_submit(st, &c.hdr);
}

int
store_op_nomem(struct store *st, struct store_op *op)
{
	const char	*what = op->type->what;

	store_op_free(op);
	return store_seterr(st, STORE_ENOMEM, "%s: out of memory", what);
}

static int
store_sync_nothing(struct store *st, void *arg)
{
	(void)st;
	(void)arg;
	return 0;
}

int
store_sync(struct store *st)
{
	if (store_flush(st) == -1 ||
	    store_call(st, store_sync_nothing, NULL) == -1)
		return -1;
	return store_lost(st) != NULL ? -1 : 0;
}

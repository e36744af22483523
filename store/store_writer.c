/*
 * The store's writer thread: a run's writes leave the supervisor's event
 * loop. docs/memory.md ("The writer thread") says why and how.
 *
 * store_writer_start() moves the connection into a second struct store
 * (w->in) that only the writer thread uses from then on: SQLite still has
 * one owner, now a thread. The struct the caller holds becomes a front
 * end. A write builds its typed operation (store_op.c) and queues it,
 * returning at once; the writer applies the operations in order (with
 * the apply functions a store without a writer runs at once) and commits
 * once the queue is empty (group commit; also at a store_flush() and at
 * the batch cap), so no batch stays open while the writer waits. When a commit waits
 * for a lock another process holds, agents, LLM turns and tools go on and
 * their writes queue. The queue is bounded (items and bytes): a producer
 * that finds it full waits for room; nothing is ever dropped. The writer
 * takes the whole queue at once and applies it without the lock, so at
 * most twice the bound is ever held.
 *
 * Ids. store_agent_add() and store_node_merge() return ids before their
 * rows exist: handles (STORE_HANDLE_BASE + k) that the writer maps to the
 * real ids when it inserts the rows (store_op_made). Every id handed back
 * to the store is translated (store_real), so the caller never sees the difference. The two reads the
 * end of an agent needs at once (does its node need an LLM summary? what
 * is a finished node's summary?) are answered from what the front end
 * wrote itself, so finishing an agent never waits for a lock.
 *
 * Other reads (an inherited context, the prompt of an LLM summary, a merge
 * node on resume) go through the queue and wait for their answer: they
 * must see every write queued before them.
 *
 * Errors. A write the writer could not apply because of the caller (an
 * unknown id) is logged; a lost write is sticky in w->in and copied here,
 * where store_lost() reads it (run.c stops the run: exit 6).
 */
#include <sys/eventfd.h>

#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/log.h"
#include "store/store_int.h"

/* What the front end knows of a node it created (by handle index). */
struct store_wnode {
	uint64_t	 chars;		/* its messages, as store_sql_msg_chars */
	char		*summary;
};

struct store_writer {
	struct store		*in;		/* the connection's owner */
	pthread_t		 thread;
	pthread_mutex_t		 mu;
	pthread_cond_t		 more, room, done;
	struct store_op		*head, *tail;
	size_t			 nitems, bytes;
	int			 stop;
	/* Shared under mu: the first lost write; efd is readable from
	 * then on (the loop's wake-up). */
	enum store_err		 lost;
	int			 efd;
	/* Under mu: items queued, and committed (store_commit_mark); cfd
	 * is readable after a commit someone waits for (the loop's wake-up:
	 * cwant, set when store_committed() said no). */
	uint64_t		 nqueued, ncommitted;
	int			 cfd, cwant;
	char			 lostdesc[STORE_ERRMSG_MAX + 128];
	/* A call's error, read by the caller once it is done. */
	enum store_err		 call_err;
	char			 call_errmsg[STORE_ERRMSG_MAX];
	/* The front end's. */
	int64_t			 next_handle;
	struct store_wnode	*nodes;
	size_t			 nnodes;
};

/* --- the writer thread --------------------------------------------------- */

/* A write failed: sticky if it lost rows, else the caller's mistake. */
static void
store_w_failed(struct store_writer *w)
{
	const char	*lost;

	if ((lost = store_lost(w->in)) == NULL) {
		log_warnx("store: %s", store_errmsg(w->in));
		return;
	}
	pthread_mutex_lock(&w->mu);
	if (w->lost == STORE_OK)
		(void)eventfd_write(w->efd, 1);
	w->lost = w->in->lost;
	strlcpy(w->lostdesc, lost, sizeof(w->lostdesc));
	pthread_mutex_unlock(&w->mu);
}

int
store_lost_fd(const struct store *st)
{
	return st->w != NULL ? st->w->efd : -1;
}

uint64_t
store_commit_mark(struct store *st)
{
	struct store_writer	*w = st->w;
	uint64_t		 mark;

	if (w == NULL)
		return 0;
	pthread_mutex_lock(&w->mu);
	mark = w->nqueued;
	pthread_mutex_unlock(&w->mu);
	return mark;
}

int
store_committed(struct store *st, uint64_t mark)
{
	struct store_writer	*w = st->w;
	int			 yes;

	if (w == NULL)
		return 1;
	pthread_mutex_lock(&w->mu);
	yes = w->ncommitted >= mark || w->lost != STORE_OK;
	if (!yes)
		w->cwant = 1;
	pthread_mutex_unlock(&w->mu);
	return yes;
}

int
store_commit_fd(const struct store *st)
{
	return st->w != NULL ? st->w->cfd : -1;
}

void
store_commit_ack(struct store *st)
{
	eventfd_t	v;

	if (st->w != NULL)
		(void)eventfd_read(st->w->cfd, &v);
}

/* One queued op, on the writer's connection. A call's caller waits: the
 * op is its, and done hands it back. */
static void
store_w_apply(struct store_writer *w, struct store_op *op)
{
	int	rc;

	rc = op->type->apply(w->in, op);
	if (op->type->kind != STORE_OP_CALL) {
		if (rc == -1)
			store_w_failed(w);
		store_op_free(op);
		return;
	}
	if (rc == -1) {
		w->call_err = w->in->err;
		strlcpy(w->call_errmsg, w->in->errmsg, sizeof(w->call_errmsg));
	}
	pthread_mutex_lock(&w->mu);
	op->rc = rc;
	op->done = 1;
	pthread_cond_broadcast(&w->done);
	pthread_mutex_unlock(&w->mu);
}

/* Take the whole queue (under mu): one lock per burst, not per row. What
 * is taken is still in memory until applied, so at most twice the bound
 * is held. */
static struct store_op *
store_w_take(struct store_writer *w)
{
	struct store_op	*list = w->head;

	w->head = w->tail = NULL;
	w->nitems = 0;
	w->bytes = 0;
	pthread_cond_broadcast(&w->room);
	return list;
}

/* Everything up to item last is committed: store_committed() says so
 * and the loop wakes. */
static void
store_w_committed(struct store_writer *w, uint64_t last)
{
	int	wake;

	pthread_mutex_lock(&w->mu);
	if (last > w->ncommitted)
		w->ncommitted = last;
	wake = w->cwant;
	w->cwant = 0;
	pthread_mutex_unlock(&w->mu);
	if (wake)
		(void)eventfd_write(w->cfd, 1);
}

/*
 * Group commit: apply what is queued, and what came meanwhile, then
 * commit as soon as the queue is empty; what comes during the commit is
 * the next batch. The batch transaction is never open while the writer
 * waits for more: nothing it holds waits on the event loop (a rate gate
 * or a queue on the same file, in this process or another, waits at
 * most for a batch being applied and committed). The batch cap still
 * commits a long burst on the way (store_op_end).
 */
static void *
store_w_main(void *arg)
{
	struct store_writer	*w = arg;
	struct store_op		*list, *it;
	uint64_t		 last = 0;

	pthread_mutex_lock(&w->mu);
	for (;;) {
		while (w->head == NULL && !w->stop)
			pthread_cond_wait(&w->more, &w->mu);
		if (w->head == NULL)
			break;
		while ((list = store_w_take(w)) != NULL) {
			pthread_mutex_unlock(&w->mu);
			while ((it = list) != NULL) {
				list = it->next;
				last = it->seq;
				store_w_apply(w, it);
			}
			pthread_mutex_lock(&w->mu);
		}
		pthread_mutex_unlock(&w->mu);
		if (store_commit(w->in) == -1)
			store_w_failed(w);
		else if (store_lost(w->in) == NULL)
			store_w_committed(w, last);
		pthread_mutex_lock(&w->mu);
	}
	pthread_mutex_unlock(&w->mu);
	return NULL;
}

/* --- the front end ------------------------------------------------------- */

/* Queue it; wait while the queue is full (never drop). */
static void
store_w_push(struct store_writer *w, struct store_op *it)
{
	pthread_mutex_lock(&w->mu);
	while (w->nitems > 0 && (w->nitems >= STORE_WRITER_MAX_ITEMS ||
	    w->bytes + it->bytes > STORE_WRITER_MAX_BYTES))
		pthread_cond_wait(&w->room, &w->mu);
	it->seq = ++w->nqueued;
	if (w->tail != NULL)
		w->tail->next = it;
	else
		w->head = it;
	w->tail = it;
	w->nitems++;
	w->bytes += it->bytes;
	pthread_cond_signal(&w->more);
	pthread_mutex_unlock(&w->mu);
}

static int64_t
store_w_handle(struct store *st)
{
	struct store_writer	*w = st->w;
	struct store_wnode	*v;
	size_t			 k = (size_t)w->next_handle;

	if (k >= w->nnodes) {
		if ((v = reallocarray(w->nodes, k * 2 + 16,
		    sizeof(*v))) == NULL)
			fatal("store writer: handles");
		memset(v + w->nnodes, 0, (k * 2 + 16 - w->nnodes) *
		    sizeof(*v));
		w->nodes = v;
		w->nnodes = k * 2 + 16;
	}
	w->next_handle++;
	return STORE_HANDLE_BASE + (int64_t)k;
}

/* The front end's record of a node it created, or NULL. */
static struct store_wnode *
store_w_node(struct store *st, int64_t node)
{
	uint64_t	k;

	if (node < STORE_HANDLE_BASE)
		return NULL;
	k = (uint64_t)(node - STORE_HANDLE_BASE);
	return k < (uint64_t)st->w->next_handle ? &st->w->nodes[k] : NULL;
}

/*
 * Queue op: the rows it creates get handles, which the caller gets at
 * once. A call waits for its answer (its error comes back to st).
 */
int
store_w_queue(struct store *st, struct store_op *op)
{
	struct store_writer	*w = st->w;
	enum store_op_kind	 kind = op->type->kind;
	size_t			 i;

	/* Once pushed, a write is the writer's (it may be freed already). */
	for (i = 0; i < op->nmade; i++) {
		op->made[i] = store_w_handle(st);
		if (op->out[i] != NULL)
			*op->out[i] = op->made[i];
		op->out[i] = NULL;
	}
	if (kind == STORE_OP_ROWS)
		st->pending++;
	else if (kind == STORE_OP_COMMIT)
		st->pending = 0;
	store_w_push(w, op);
	if (kind != STORE_OP_CALL)
		return 0;
	pthread_mutex_lock(&w->mu);
	while (!op->done)
		pthread_cond_wait(&w->done, &w->mu);
	pthread_mutex_unlock(&w->mu);
	if (op->rc == -1) {
		st->err = w->call_err;
		strlcpy(st->errmsg, w->call_errmsg, sizeof(st->errmsg));
	}
	return op->rc;
}

void
store_w_note_chars(struct store *st, int64_t node, uint64_t chars)
{
	struct store_wnode	*wn;

	if (st->w != NULL && (wn = store_w_node(st, node)) != NULL)
		wn->chars += chars;
}

void
store_w_note_summary(struct store *st, int64_t node, const char *summary)
{
	struct store_wnode	*wn;

	if (st->w == NULL || (wn = store_w_node(st, node)) == NULL ||
	    summary == NULL)
		return;
	free(wn->summary);
	if ((wn->summary = strdup(summary)) == NULL)
		fatal("store writer: summary");
}

const char *
store_w_lost(struct store *st)
{
	struct store_writer	*w = st->w;
	int			 lost;

	pthread_mutex_lock(&w->mu);
	lost = w->lost != STORE_OK;
	if (lost)
		strlcpy(st->lostdesc, w->lostdesc, sizeof(st->lostdesc));
	pthread_mutex_unlock(&w->mu);
	return lost ? st->lostdesc : NULL;
}

/*
 * Needs the node an LLM summary? A node this front end created: from the
 * bytes of its messages it queued; any other: ask the database.
 */
int
store_w_summary_known(struct store *st, int64_t node, const char *result,
    const struct store_summary_policy *policy, int *need)
{
	struct store_wnode	*wn;

	if (st->w == NULL || (wn = store_w_node(st, node)) == NULL)
		return 0;
	if (policy->result_max > 0 && result != NULL &&
	    strlen(result) > policy->result_max)
		*need = 1;
	else
		*need = policy->transcript_max > 0 &&
		    wn->chars > policy->transcript_max;
	return 1;
}

/* A node's summary as this front end wrote it: 1 known (*summary
 * malloc'ed or NULL), 0 ask the database. */
int
store_w_summary_of(struct store *st, int64_t node, char **summary)
{
	struct store_wnode	*wn;

	if (st->w == NULL || (wn = store_w_node(st, node)) == NULL)
		return 0;
	*summary = NULL;
	if (wn->summary != NULL && (*summary = strdup(wn->summary)) == NULL)
		fatal("store writer: summary");
	return 1;
}

int
store_writer_start(struct store *st)
{
	struct store_writer	*w;
	struct store		*in;
	sigset_t		 all, old;
	int			 rc;

	if (st->w != NULL || (st->flags & STORE_READ))
		return 0;
	if (store_check_owner(st) == -1)
		return -1;
	if ((w = calloc(1, sizeof(*w))) == NULL ||
	    (in = malloc(sizeof(*in))) == NULL) {
		free(w);
		return store_seterr(st, STORE_ENOMEM, "starting the writer");
	}
	/* The connection, its statements and its batch move to in. */
	memcpy(in, st, sizeof(*in));
	if ((in->path = strdup(st->path)) == NULL) {
		free(in);
		free(w);
		return store_seterr(st, STORE_ENOMEM, "starting the writer");
	}
	w->in = in;
	if ((w->efd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK)) == -1 ||
	    (w->cfd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK)) == -1) {
		if (w->efd != -1)
			close(w->efd);
		free(in->path);
		free(in);
		free(w);
		return store_seterr(st, STORE_EIO, "starting the writer:"
		    " eventfd: %s", strerror(errno));
	}
	pthread_mutex_init(&w->mu, NULL);
	pthread_cond_init(&w->more, NULL);
	pthread_cond_init(&w->room, NULL);
	pthread_cond_init(&w->done, NULL);
	/* Signals are the loop's (signalfd): the writer takes none. */
	sigfillset(&all);
	pthread_sigmask(SIG_BLOCK, &all, &old);
	rc = pthread_create(&w->thread, NULL, store_w_main, w);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (rc != 0) {
		close(w->efd);
		close(w->cfd);
		free(in->path);
		free(in);
		free(w);
		return store_seterr(st, STORE_EIO, "starting the writer"
		    " thread: %s", strerror(rc));
	}
	st->db = NULL;
	memset(st->stmts, 0, sizeof(st->stmts));
	st->in_tx = 0;
	st->pending = 0;
	st->map = NULL;
	st->mapcap = 0;
	st->w = w;
	return 0;
}

/* Apply everything queued, commit, join; the connection comes back to
 * st (store_close closes it). In a forked child: memory only. */
void
store_writer_stop(struct store *st)
{
	struct store_writer	*w = st->w;
	char			*path;
	size_t			 i;

	if (w == NULL)
		return;
	if (st->owner == store_getpid()) {
		pthread_mutex_lock(&w->mu);
		w->stop = 1;
		pthread_cond_signal(&w->more);
		pthread_mutex_unlock(&w->mu);
		pthread_join(w->thread, NULL);
		/* Everything back, the lost write too (store_lost). */
		path = st->path;
		memcpy(st, w->in, sizeof(*st));
		st->path = path;
		pthread_mutex_destroy(&w->mu);
		pthread_cond_destroy(&w->more);
		pthread_cond_destroy(&w->room);
		pthread_cond_destroy(&w->done);
	}
	close(w->efd);
	close(w->cfd);
	for (i = 0; i < w->nnodes; i++)
		free(w->nodes[i].summary);
	free(w->nodes);
	if (st->owner != store_getpid())
		free(w->in->map);
	free(w->in->path);
	free(w->in);
	free(w);
	st->w = NULL;
}

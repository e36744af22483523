/*
 * The store's writer thread: a run's writes leave the supervisor's event
 * loop. docs/memory.md ("The writer thread") says why and how.
 *
 * store_writer_start() moves the connection into a second struct store
 * (w->in) that only the writer thread uses from then on: SQLite still has
 * one owner, now a thread. The struct the caller holds becomes a front
 * end. A write copies its arguments into a queue item and returns at once;
 * the writer applies the items in order and commits once the queue is
 * empty (group commit; also at a store_flush() and at the batch cap), so
 * no batch stays open while the writer waits. When a commit waits
 * for a lock another process holds, agents, LLM turns and tools go on and
 * their writes queue. The queue is bounded (items and bytes): a producer
 * that finds it full waits for room; nothing is ever dropped. The writer
 * takes the whole queue at once and applies it without the lock, so at
 * most twice the bound is ever held.
 *
 * Ids. store_agent_add() and store_node_merge() return ids before their
 * rows exist: handles (STORE_HANDLE_BASE + k) that the writer maps to the
 * real ids when it inserts the rows. Every id handed back to the store is
 * translated, so the caller never sees the difference. The two reads the
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
#include <stdarg.h>
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/log.h"
#include "store/store_int.h"

enum store_wop {
	W_RUN_END = 0,
	W_RUN_RESUMED,
	W_AGENT_ADD,
	W_AGENT_STARTED,
	W_AGENT_STATUS,
	W_MSG,
	W_EVENT,
	W_MERGE,
	W_EDGE,
	W_SUMMARY,
	W_FLUSH,
	W_CALL,
};

struct store_witem {
	struct store_witem	*next;
	uint64_t		 seq;		/* 1, 2, ... in queue order */
	enum store_wop		 op;
	size_t			 bytes;		/* counted against the bound */
	int64_t			 id[3];
	int			 n;
	char			*s[5];
	struct msg		 msg;
	int			 has_usage;
	struct msg_usage	 usage;
	int64_t			*ids;
	size_t			 nids;
	/* W_CALL: run fn on the writer, then done (the caller frees). */
	int			(*fn)(struct store *, struct store_writer *,
				    void *);
	void			*arg;
	int			 rc, done;
};

/* What the front end knows of a node it created (by handle index). */
struct store_wnode {
	uint64_t	 chars;		/* its messages, as SQ_MSG_CHARS */
	char		*summary;
};

struct store_writer {
	struct store		*in;		/* the connection's owner */
	pthread_t		 thread;
	pthread_mutex_t		 mu;
	pthread_cond_t		 more, room, done;
	struct store_witem	*head, *tail;
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
	/* The writer's: handle index -> real id. */
	int64_t			*map;
	size_t			 mapcap;
	/* A sync call's error, read by the caller once it is done. */
	enum store_err		 call_err;
	char			 call_errmsg[STORE_ERRMSG_MAX];
	/* The front end's. */
	int64_t			 next_handle;
	size_t			 pending;
	struct store_wnode	*nodes;
	size_t			 nnodes;
};

/* --- the writer thread --------------------------------------------------- */

static int64_t
store_w_id(struct store_writer *w, int64_t id)
{
	uint64_t	k;

	if (id < STORE_HANDLE_BASE)
		return id;
	k = (uint64_t)(id - STORE_HANDLE_BASE);
	return k < w->mapcap ? w->map[k] : 0;
}

static void
store_w_map(struct store_writer *w, int64_t handle, int64_t real)
{
	size_t	 k = (size_t)(handle - STORE_HANDLE_BASE), cap;
	int64_t	*m;

	if (k >= w->mapcap) {
		cap = w->mapcap ? w->mapcap : 64;
		while (cap <= k)
			cap *= 2;
		if ((m = reallocarray(w->map, cap, sizeof(*m))) == NULL)
			fatal("store writer: id map");
		memset(m + w->mapcap, 0, (cap - w->mapcap) * sizeof(*m));
		w->map = m;
		w->mapcap = cap;
	}
	w->map[k] = real;
}

static int
store_w_apply_merge(struct store_writer *w, struct store_witem *it)
{
	int64_t	node;
	size_t	i;

	for (i = 0; i < it->nids; i++)
		it->ids[i] = store_w_id(w, it->ids[i]);
	if (store_node_merge(w->in, store_w_id(w, it->id[0]), it->ids,
	    it->nids, it->s[0], &node) == -1)
		return -1;
	store_w_map(w, it->id[1], node);
	return 0;
}

static int
store_w_apply_agent(struct store_writer *w, struct store_witem *it)
{
	struct store_agent_new	a;
	int64_t			agent, node;
	size_t			i;

	a.path = it->s[0];
	a.profile = it->s[1];
	a.task = it->s[2];
	a.call_id = it->s[3];
	a.tool_filter = it->s[4];
	a.inherit_context = it->n;
	for (i = 0; i < it->nids; i++)
		it->ids[i] = store_w_id(w, it->ids[i]);
	a.parent_nodes = it->ids;
	a.nparent_nodes = it->nids;
	if (store_agent_add(w->in, store_w_id(w, it->id[0]), &a, &agent,
	    &node) == -1)
		return -1;
	store_w_map(w, it->id[1], agent);
	store_w_map(w, it->id[2], node);
	return 0;
}

/* One queued write, on the writer's connection. */
static int
store_w_write(struct store_writer *w, struct store_witem *it)
{
	struct store	*in = w->in;

	switch (it->op) {
	case W_RUN_END:
		return store_run_end(in, it->id[0],
		    (enum store_run_status)it->n, it->s[0]);
	case W_RUN_RESUMED:
		return store_run_resumed(in, it->id[0]);
	case W_AGENT_ADD:
		return store_w_apply_agent(w, it);
	case W_AGENT_STARTED:
		return store_agent_started(in, store_w_id(w, it->id[0]),
		    it->id[1]);
	case W_AGENT_STATUS:
		return store_agent_set_status(in, store_w_id(w, it->id[0]),
		    (enum store_agent_status)it->n, it->s[0], it->s[1]);
	case W_MSG:
		return store_msg_append(in, store_w_id(w, it->id[0]), &it->msg,
		    it->has_usage ? &it->usage : NULL);
	case W_EVENT:
		return store_event(in, it->id[0], it->s[0], it->s[1], it->s[2]);
	case W_MERGE:
		return store_w_apply_merge(w, it);
	case W_EDGE:
		return store_edge_add(in, store_w_id(w, it->id[0]),
		    store_w_id(w, it->id[1]));
	case W_SUMMARY:
		return store_node_set_summary(in, store_w_id(w, it->id[0]),
		    it->s[0], (enum store_summary_kind)it->n,
		    it->has_usage ? &it->usage : NULL);
	case W_FLUSH:
		return store_flush(in);
	case W_CALL:
		break;
	}
	return 0;
}

static void
store_w_item_free(struct store_witem *it)
{
	size_t	i;

	for (i = 0; i < 5; i++)
		free(it->s[i]);
	if (it->op == W_MSG)
		msg_free(&it->msg);
	free(it->ids);
	free(it);
}

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

static void
store_w_apply(struct store_writer *w, struct store_witem *it)
{
	if (it->op != W_CALL) {
		if (store_w_write(w, it) == -1)
			store_w_failed(w);
		store_w_item_free(it);
		return;
	}
	it->rc = it->fn(w->in, w, it->arg);
	if (it->rc == -1) {
		w->call_err = w->in->err;
		strlcpy(w->call_errmsg, w->in->errmsg, sizeof(w->call_errmsg));
	}
	pthread_mutex_lock(&w->mu);
	it->done = 1;
	pthread_cond_broadcast(&w->done);
	pthread_mutex_unlock(&w->mu);
}

/* Take the whole queue (under mu): one lock per burst, not per row. What
 * is taken is still in memory until applied, so at most twice the bound
 * is held. */
static struct store_witem *
store_w_take(struct store_writer *w)
{
	struct store_witem	*list = w->head;

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
	struct store_witem	*list, *it;
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
		if (store_flush(w->in) == -1)
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
store_w_push(struct store_writer *w, struct store_witem *it)
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

static struct store_witem *
store_w_item(struct store *st, enum store_wop op)
{
	struct store_witem	*it;

	if ((it = calloc(1, sizeof(*it))) == NULL) {
		store_seterr(st, STORE_ENOMEM, "queueing a write");
		return NULL;
	}
	it->op = op;
	it->bytes = sizeof(*it);
	return it;
}

/* Copy the strings (NULL stays NULL) into it->s; -1 out of memory. */
static int
store_w_strs(struct store *st, struct store_witem *it, size_t n, ...)
{
	const char	*v;
	va_list		 ap;
	size_t		 i;
	int		 rc = 0;

	va_start(ap, n);
	for (i = 0; i < n; i++) {
		if ((v = va_arg(ap, const char *)) == NULL)
			continue;
		if ((it->s[i] = strdup(v)) == NULL)
			rc = -1;
		else
			it->bytes += strlen(v);
	}
	va_end(ap);
	if (rc == -1) {
		store_w_item_free(it);
		return store_seterr(st, STORE_ENOMEM, "queueing a write");
	}
	return 0;
}

static int
store_w_queue(struct store *st, struct store_witem *it)
{
	if (it->op != W_FLUSH && it->op != W_CALL)
		st->w->pending++;
	store_w_push(st->w, it);
	return 0;
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

int
store_w_run_end(struct store *st, int64_t run, enum store_run_status status,
    const char *result)
{
	struct store_witem	*it;

	if ((it = store_w_item(st, W_RUN_END)) == NULL ||
	    store_w_strs(st, it, 1, result) == -1)
		return -1;
	it->id[0] = run;
	it->n = (int)status;
	return store_w_queue(st, it);
}

int
store_w_run_resumed(struct store *st, int64_t run)
{
	struct store_witem	*it;

	if ((it = store_w_item(st, W_RUN_RESUMED)) == NULL)
		return -1;
	it->id[0] = run;
	return store_w_queue(st, it);
}

int
store_w_agent_add(struct store *st, int64_t run,
    const struct store_agent_new *a, int64_t *agent, int64_t *node)
{
	struct store_witem	*it;

	if ((it = store_w_item(st, W_AGENT_ADD)) == NULL ||
	    store_w_strs(st, it, 5, a->path, a->profile, a->task,
	    a->call_id, a->tool_filter) == -1)
		return -1;
	if (a->nparent_nodes > 0) {
		if ((it->ids = calloc(a->nparent_nodes,
		    sizeof(*it->ids))) == NULL) {
			store_w_item_free(it);
			return store_seterr(st, STORE_ENOMEM,
			    "queueing an agent");
		}
		memcpy(it->ids, a->parent_nodes,
		    a->nparent_nodes * sizeof(*it->ids));
		it->nids = a->nparent_nodes;
	}
	it->id[0] = run;
	it->id[1] = store_w_handle(st);
	it->id[2] = store_w_handle(st);
	it->n = a->inherit_context;
	if (agent != NULL)
		*agent = it->id[1];
	if (node != NULL)
		*node = it->id[2];
	return store_w_queue(st, it);
}

int
store_w_agent_started(struct store *st, int64_t agent, int64_t pid)
{
	struct store_witem	*it;

	if ((it = store_w_item(st, W_AGENT_STARTED)) == NULL)
		return -1;
	it->id[0] = agent;
	it->id[1] = pid;
	return store_w_queue(st, it);
}

int
store_w_agent_set_status(struct store *st, int64_t agent,
    enum store_agent_status status, const char *result,
    const char *exit_reason)
{
	struct store_witem	*it;

	if ((it = store_w_item(st, W_AGENT_STATUS)) == NULL ||
	    store_w_strs(st, it, 2, result, exit_reason) == -1)
		return -1;
	it->id[0] = agent;
	it->n = (int)status;
	return store_w_queue(st, it);
}

/* The bytes SQ_MSG_CHARS counts for one message. */
static uint64_t
store_w_chars(const struct msg *m)
{
	uint64_t	n = m->text != NULL ? strlen(m->text) : 0;
	size_t		i;

	for (i = 0; i < m->ncalls; i++)
		n += (m->calls[i].args ? strlen(m->calls[i].args) : 0) +
		    (m->calls[i].name ? strlen(m->calls[i].name) : 0);
	return n;
}

int
store_w_msg_append(struct store *st, int64_t node, const struct msg *m,
    const struct msg_usage *usage)
{
	struct store_witem	*it;
	struct store_wnode	*wn;
	uint64_t		 chars = store_w_chars(m);

	if ((it = store_w_item(st, W_MSG)) == NULL)
		return -1;
	if (msg_copy(&it->msg, m) == -1) {
		free(it);
		return store_seterr(st, STORE_ENOMEM, "queueing a message");
	}
	it->id[0] = node;
	it->bytes += chars + (m->call_id ? strlen(m->call_id) : 0);
	if (usage != NULL) {
		it->has_usage = 1;
		it->usage = *usage;
	}
	if ((wn = store_w_node(st, node)) != NULL)
		wn->chars += chars;
	return store_w_queue(st, it);
}

int
store_w_event(struct store *st, int64_t run, const char *path,
    const char *type, const char *detail)
{
	struct store_witem	*it;

	if ((it = store_w_item(st, W_EVENT)) == NULL ||
	    store_w_strs(st, it, 3, path, type, detail) == -1)
		return -1;
	it->id[0] = run;
	return store_w_queue(st, it);
}

int
store_w_node_merge(struct store *st, int64_t run, const int64_t *parents,
    size_t nparents, const char *label, int64_t *node)
{
	struct store_witem	*it;

	if (nparents == 0)
		return store_seterr(st, STORE_EINVAL, "a merge needs parents");
	if ((it = store_w_item(st, W_MERGE)) == NULL ||
	    store_w_strs(st, it, 1, label) == -1)
		return -1;
	if ((it->ids = calloc(nparents, sizeof(*it->ids))) == NULL) {
		store_w_item_free(it);
		return store_seterr(st, STORE_ENOMEM, "queueing a merge");
	}
	memcpy(it->ids, parents, nparents * sizeof(*parents));
	it->nids = nparents;
	it->id[0] = run;
	it->id[1] = store_w_handle(st);
	*node = it->id[1];
	return store_w_queue(st, it);
}

int
store_w_edge_add(struct store *st, int64_t parent, int64_t child)
{
	struct store_witem	*it;

	if ((it = store_w_item(st, W_EDGE)) == NULL)
		return -1;
	it->id[0] = parent;
	it->id[1] = child;
	return store_w_queue(st, it);
}

int
store_w_node_set_summary(struct store *st, int64_t node, const char *summary,
    enum store_summary_kind kind, const struct msg_usage *usage)
{
	struct store_witem	*it;
	struct store_wnode	*wn;

	if ((it = store_w_item(st, W_SUMMARY)) == NULL ||
	    store_w_strs(st, it, 1, summary) == -1)
		return -1;
	it->id[0] = node;
	it->n = (int)kind;
	if (usage != NULL) {
		it->has_usage = 1;
		it->usage = *usage;
	}
	if ((wn = store_w_node(st, node)) != NULL && summary != NULL) {
		free(wn->summary);
		if ((wn->summary = strdup(summary)) == NULL)
			fatal("store writer: summary");
	}
	return store_w_queue(st, it);
}

int
store_w_flush(struct store *st)
{
	struct store_witem	*it;

	if ((it = store_w_item(st, W_FLUSH)) == NULL)
		return -1;
	st->w->pending = 0;
	return store_w_queue(st, it);
}

size_t
store_w_pending(const struct store *st)
{
	return st->w->pending;
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
 * Run fn(in, w, arg) on the writer, after everything queued before, and
 * wait for it: the reads that must see every write, and store_sync().
 */
int
store_w_call(struct store *st, int (*fn)(struct store *,
    struct store_writer *, void *), void *arg)
{
	struct store_writer	*w = st->w;
	struct store_witem	*it;
	int			 rc;

	if ((it = store_w_item(st, W_CALL)) == NULL)
		return -1;
	it->fn = fn;
	it->arg = arg;
	store_w_push(w, it);
	pthread_mutex_lock(&w->mu);
	while (!it->done)
		pthread_cond_wait(&w->done, &w->mu);
	pthread_mutex_unlock(&w->mu);
	if ((rc = it->rc) == -1) {
		st->err = w->call_err;
		strlcpy(st->errmsg, w->call_errmsg, sizeof(st->errmsg));
	}
	free(it);
	return rc;
}

int64_t
store_w_real(struct store_writer *w, int64_t id)
{
	return store_w_id(w, id);
}

static int
store_w_nothing(struct store *in, struct store_writer *w, void *arg)
{
	(void)in;
	(void)w;
	(void)arg;
	return 0;
}

int
store_sync(struct store *st)
{
	if (st->w == NULL) {
		if (store_flush(st) == -1)
			return -1;
		return store_lost(st) != NULL ? -1 : 0;
	}
	if (store_w_flush(st) == -1 ||
	    store_w_call(st, store_w_nothing, NULL) == -1)
		return -1;
	return store_w_lost(st) != NULL ? -1 : 0;
}

struct store_w_end {
	int64_t			 run;
	enum store_run_status	 status;
	const char		*result;
};

static int
store_w_end_fn(struct store *in, struct store_writer *w, void *arg)
{
	struct store_w_end	*e = arg;

	(void)w;
	if (store_run_end(in, e->run, e->status, e->result) == -1 ||
	    store_flush(in) == -1)
		return -1;
	return 0;
}

int
store_run_finish(struct store *st, int64_t run, enum store_run_status status,
    const char *result)
{
	struct store_w_end	e = { run, status, result };

	if (st->w != NULL)
		return store_w_call(st, store_w_end_fn, &e);
	if (store_run_end(st, run, status, result) == -1)
		return -1;
	return store_flush(st);
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

	if ((wn = store_w_node(st, node)) == NULL)
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

	if ((wn = store_w_node(st, node)) == NULL)
		return 0;
	*summary = NULL;
	if (wn->summary != NULL && (*summary = strdup(wn->summary)) == NULL)
		fatal("store writer: summary");
	return 1;
}

/* --- reads that wait for the writes before them ------------------------ */

static int
store_w_read_fn(struct store *in, struct store_writer *w, void *arg)
{
	struct store_wreq	*q = arg;
	int64_t			 id = store_w_id(w, q->id), *v;
	size_t			 i;
	int			 rc;

	switch (q->kind) {
	case STORE_R_CONTEXT:
		return store_context(in, id, q->flags, q->list);
	case STORE_R_SUMMARY_NEEDED:
		return store_summary_needed(in, id, q->text, q->policy);
	case STORE_R_SUMMARY_PROMPT:
		return store_summary_prompt(in, id, q->text, q->list);
	case STORE_R_NODE_SUMMARY:
		return store_node_summary(in, id, q->summary);
	case STORE_R_EVENT_LAST:
		return store_event_last(in, id, q->text, q->ev);
	case STORE_R_MERGE_FIND:
		if ((v = calloc(q->nids, sizeof(*v))) == NULL)
			return store_seterr(in, STORE_ENOMEM, "finding a merge");
		for (i = 0; i < q->nids; i++)
			v[i] = store_w_id(w, q->ids[i]);
		rc = store_merge_find(in, v, q->nids, q->out);
		free(v);
		return rc;
	}
	return store_seterr(in, STORE_EINVAL, "unknown read");
}

int
store_w_read(struct store *st, struct store_wreq *q)
{
	return store_w_call(st, store_w_read_fn, q);
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
	free(w->map);
	free(w->in->path);
	free(w->in);
	free(w);
	st->w = NULL;
}

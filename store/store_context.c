/*
 * A node's context (RFC-004's MemoryGraph, kept in SQLite): its
 * ancestors' summaries in topological order (roots first; among nodes
 * whose parents are all placed, the oldest first), then its own messages.
 * Every ancestor appears once however many paths lead to it, so a merge
 * node with several parents sees each branch once.
 */
#include <sys/types.h>

#include <stdlib.h>
#include <string.h>

#include <sqlite3.h>

#include "common/buf.h"
#include "store/store_int.h"

/*
 * A node's ancestors, walked once (MATERIALIZED): kind 0 rows are the
 * edges into the node and its ancestors, kind 1 rows the ancestors
 * with what their context message needs.
 */
static const struct store_sql store_sql_ancestors = {
	SQ_ANCESTORS, "WITH RECURSIVE anc(id) AS MATERIALIZED (SELECT ?1"
	    " UNION SELECT e.parent FROM memory_edges e"
	    " JOIN anc ON e.child = anc.id)"
	    " SELECT 0, e.parent, e.child, NULL, NULL, NULL, NULL"
	    " FROM anc JOIN memory_edges e ON e.child = anc.id"
	    " UNION ALL"
	    " SELECT 1, n.id, 0, n.summary, n.kind, n.label, a.path"
	    " FROM anc JOIN memory_nodes n ON n.id = anc.id"
	    " LEFT JOIN agents a ON a.id = n.agent WHERE anc.id <> ?1"
};

/* One ancestor as context assembly needs it. */
struct store_anc_node {
	int64_t	 id;
	char	*summary;
	char	*label;
	char	*path;
	int	 merge;
};

/* The ancestors of a node, and the edges between them and to the node. */
struct store_anc {
	int64_t			*ids;	/* sorted */
	struct store_anc_node	*nodes;	/* same order as ids */
	size_t			 n;
	struct store_edge	*edges;
	size_t			 nedges;
};

static int
store_id_cmp(const void *a, const void *b)
{
	int64_t	x = *(const int64_t *)a, y = *(const int64_t *)b;

	return x < y ? -1 : x > y;
}

static int
store_edge_cmp(const void *a, const void *b)
{
	const struct store_edge	*x = a, *y = b;

	if (x->parent != y->parent)
		return x->parent < y->parent ? -1 : 1;
	return x->child < y->child ? -1 : x->child > y->child;
}

static ssize_t
store_anc_index(const struct store_anc *a, int64_t id)
{
	int64_t	*p;

	if (a->n == 0)
		return -1;
	p = bsearch(&id, a->ids, a->n, sizeof(*a->ids), store_id_cmp);
	return p == NULL ? -1 : p - a->ids;
}

static int
store_anc_node_cmp(const void *x, const void *y)
{
	return store_id_cmp(&((const struct store_anc_node *)x)->id,
	    &((const struct store_anc_node *)y)->id);
}

/* Append one edge row of the ancestors query. */
static int
store_anc_add_edge(struct store_anc *a, sqlite3_stmt *s, size_t *cap)
{
	struct store_edge	*e;

	if (a->nedges == *cap) {
		*cap = *cap == 0 ? 16 : *cap * 2;
		if ((e = reallocarray(a->edges, *cap, sizeof(*e))) == NULL)
			return -1;
		a->edges = e;
	}
	a->edges[a->nedges].parent = sqlite3_column_int64(s, 1);
	a->edges[a->nedges++].child = sqlite3_column_int64(s, 2);
	return 0;
}

/* Append one node row of the ancestors query. */
static int
store_anc_add_node(struct store_anc *a, sqlite3_stmt *s, size_t *cap)
{
	struct store_anc_node	*v;
	const char		*kind;
	int			 ok = 1;

	if (a->n == *cap) {
		*cap = *cap == 0 ? 16 : *cap * 2;
		if ((v = reallocarray(a->nodes, *cap, sizeof(*v))) == NULL)
			return -1;
		a->nodes = v;
	}
	v = &a->nodes[a->n++];
	memset(v, 0, sizeof(*v));
	v->id = sqlite3_column_int64(s, 1);
	v->summary = store_col_dup(s, 3, &ok);
	kind = (const char *)sqlite3_column_text(s, 4);
	v->merge = kind != NULL && strcmp(kind, "merge") == 0;
	v->label = store_col_dup(s, 5, &ok);
	v->path = store_col_dup(s, 6, &ok);
	return ok ? 0 : -1;
}

/*
 * The ancestors of a node and the edges among them (and to the node), in
 * one query: the recursive walk runs once. Nodes end sorted by id, edges
 * by parent.
 */
static int
store_anc_load(struct store *st, int64_t node, struct store_anc *a)
{
	sqlite3_stmt	*s;
	size_t		 ecap = 0, ncap = 0, i;
	int		 rc, ok = 1;

	memset(a, 0, sizeof(*a));
	if ((s = store_stmt(st, &store_sql_ancestors)) == NULL)
		return -1;
	sqlite3_bind_int64(s, 1, node);
	while (ok && (rc = sqlite3_step(s)) == SQLITE_ROW) {
		if (sqlite3_column_int(s, 0) == 0)
			ok = store_anc_add_edge(a, s, &ecap) == 0;
		else
			ok = store_anc_add_node(a, s, &ncap) == 0;
	}
	sqlite3_reset(s);
	if (ok && rc != SQLITE_DONE)
		return store_setdberr(st, rc, "loading ancestors");
	if (!ok || (a->n > 0 &&
	    (a->ids = calloc(a->n, sizeof(*a->ids))) == NULL))
		return store_seterr(st, STORE_ENOMEM, "loading ancestors");
	if (a->nedges > 0)
		qsort(a->edges, a->nedges, sizeof(*a->edges), store_edge_cmp);
	if (a->n > 0)
		qsort(a->nodes, a->n, sizeof(*a->nodes), store_anc_node_cmp);
	for (i = 0; i < a->n; i++)
		a->ids[i] = a->nodes[i].id;
	return 0;
}

static void
store_anc_free(struct store_anc *a)
{
	size_t	i;

	for (i = 0; i < a->n; i++) {
		free(a->nodes[i].summary);
		free(a->nodes[i].label);
		free(a->nodes[i].path);
	}
	free(a->nodes);
	free(a->ids);
	free(a->edges);
}

/* A binary min-heap of ancestor indexes (index order is id order). */
static void
store_heap_push(size_t *h, size_t *n, size_t v)
{
	size_t	i = (*n)++, p, t;

	h[i] = v;
	while (i > 0 && h[p = (i - 1) / 2] > h[i]) {
		t = h[p], h[p] = h[i], h[i] = t;
		i = p;
	}
}

static size_t
store_heap_pop(size_t *h, size_t *n)
{
	size_t	top = h[0], i = 0, l, m, t;

	h[0] = h[--(*n)];
	for (;;) {
		l = 2 * i + 1;
		m = i;
		if (l < *n && h[l] < h[m])
			m = l;
		if (l + 1 < *n && h[l + 1] < h[m])
			m = l + 1;
		if (m == i)
			break;
		t = h[m], h[m] = h[i], h[i] = t;
		i = m;
	}
	return top;
}

/* Index of the first edge (sorted by parent) from parent. */
static size_t
store_edge_first(const struct store_anc *a, int64_t parent)
{
	size_t	lo = 0, hi = a->nedges, mid;

	while (lo < hi) {
		mid = lo + (hi - lo) / 2;
		if (a->edges[mid].parent < parent)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

/*
 * Kahn's algorithm over the ancestors, the oldest ready node first. order
 * gets a->n indexes. A cycle (only in a file edited by hand) cannot stop
 * it: what is left is appended in id order.
 */
static int
store_anc_order(const struct store_anc *a, size_t *order)
{
	size_t		*indeg, *heap, nheap = 0, nout = 0, i, k;
	unsigned char	*done;
	ssize_t		 c;

	indeg = calloc(a->n, sizeof(*indeg));
	heap = calloc(a->n, sizeof(*heap));
	done = calloc(a->n, 1);
	if (indeg == NULL || heap == NULL || done == NULL) {
		free(indeg);
		free(heap);
		free(done);
		return -1;
	}
	for (i = 0; i < a->nedges; i++)
		if ((c = store_anc_index(a, a->edges[i].child)) >= 0)
			indeg[c]++;
	for (i = 0; i < a->n; i++)
		if (indeg[i] == 0)
			store_heap_push(heap, &nheap, i);
	while (nheap > 0) {
		i = store_heap_pop(heap, &nheap);
		done[i] = 1;
		order[nout++] = i;
		/* Edges are sorted by parent: find this node's run of them. */
		for (k = store_edge_first(a, a->ids[i]); k < a->nedges && a->edges[k].parent == a->ids[i]; k++)
			if ((c = store_anc_index(a, a->edges[k].child)) >= 0 &&
			    --indeg[c] == 0)
				store_heap_push(heap, &nheap, (size_t)c);
	}
	for (i = 0; i < a->n && nout < a->n; i++)
		if (!done[i])
			order[nout++] = i;
	free(indeg);
	free(heap);
	free(done);
	return 0;
}

/* Is there an edge parent -> child among the loaded ones? */
static int
store_anc_edge(const struct store_anc *a, int64_t parent, int64_t child)
{
	struct store_edge	key = { parent, child };

	if (a->nedges == 0)
		return 0;
	return bsearch(&key, a->edges, a->nedges, sizeof(key),
	    store_edge_cmp) != NULL;
}

/* The context message of one ancestor, or none. */
static int
store_context_one(struct store *st, const struct store_anc_node *an,
    int inherit, struct msg_list *out)
{
	struct msg_list	 l;
	struct buf	 b;
	const char	*label = an->label != NULL ? an->label : "";
	const char	*path = an->path != NULL ? an->path : "?";
	char		*text;
	int		 ok = 1;

	if (an->summary == NULL && !inherit)
		return 0;
	buf_init(&b, 0);
	msg_list_init(&l);
	if (an->summary != NULL && an->merge)
		ok = store_cat(&b, "[merged memory: ", label, "]\n",
		    an->summary, (char *)NULL) == 0;
	else if (an->summary != NULL)
		ok = store_cat(&b, "[memory of agent ", path, ": ", label,
		    "]\n", an->summary, (char *)NULL) == 0;
	else {
		ok = store_cat(&b, "[context inherited from agent ", path,
		    ": ", label, "]\n", (char *)NULL) == 0;
		if (ok && store_msg_load(st, an->id, &l, NULL) == -1) {
			msg_list_free(&l);
			buf_free(&b);
			return -1;
		}
		ok = ok && store_render(&b, &l, 1) == 0;
	}
	if (ok)
		ok = (text = buf_cstr(&b)) != NULL &&
		    msg_list_add_text(out, MSG_USER, text) == 0;
	msg_list_free(&l);
	buf_free(&b);
	if (!ok)
		return store_seterr(st, STORE_ENOMEM, "assembling a context");
	return 0;
}

static int	store_context_on(struct store *, void *);

struct store_context_arg {
	int64_t		 node;
	int		 flags;
	struct msg_list	*out;
};

int
store_context(struct store *st, int64_t node, int flags, struct msg_list *out)
{
	struct store_context_arg	c = { node, flags, out };

	return store_call(st, store_context_on, &c);
}

static int
store_context_on(struct store *st, void *arg)
{
	struct store_context_arg	*c = arg;
	struct msg_list			*out = c->out;
	int64_t				 node = store_real(st, c->node);
	int				 flags = c->flags;
	struct store_anc		 a;
	enum store_node_kind		 kind;
	size_t				*order = NULL, i;
	int64_t				 run, id;
	int				 rc = -1, inherit;

	memset(&a, 0, sizeof(a));
	if (store_check_owner(st) == -1 || store_read_begin(st) == -1)
		return -1;
	if (store_node_get(st, node, &run, &kind) == -1 ||
	    store_anc_load(st, node, &a) == -1)
		goto out;
	if (a.n > 0 && ((order = calloc(a.n, sizeof(*order))) == NULL ||
	    store_anc_order(&a, order) == -1)) {
		store_seterr(st, STORE_ENOMEM, "assembling a context");
		goto out;
	}
	for (i = 0; i < a.n; i++) {
		id = a.ids[order[i]];
		inherit = (flags & STORE_CTX_PARENT_MESSAGES) &&
		    store_anc_edge(&a, id, node);
		if (store_context_one(st, &a.nodes[order[i]], inherit,
		    out) == -1)
			goto out;
	}
	rc = (flags & STORE_CTX_ANCESTORS) ? 0 :
	    store_msg_load(st, node, out, NULL);
out:
	store_read_end(st);
	free(order);
	store_anc_free(&a);
	return rc;
}

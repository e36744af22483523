/*
 * The memory graph: merge nodes, edges with cycle refusal, summaries and
 * context assembly (RFC-004's MemoryGraph, kept in SQLite).
 *
 * A node's context is its ancestors' summaries in topological order (roots
 * first; among nodes whose parents are all placed, the oldest first), then
 * its own messages. Every ancestor appears once however many paths lead to
 * it, so a merge node with several parents sees each branch once.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <sqlite3.h>

#include "common/buf.h"
#include "store/store_int.h"

/* Longest transcript put in a summary request; the middle is cut. */
#define STORE_SUMMARY_PROMPT_MAX	(128u * 1024)

static const char store_summary_system[] =
	"You summarise the work of one agent for the agents that come after"
	" it. Write a concise summary (at most 300 words) of what it found,"
	" decided and produced: facts, file paths, commands and their outcome,"
	" results and open problems. Leave out the steps that led nowhere."
	" Answer with the summary only.";

/* A node's run and kind; ENOTFOUND if it does not exist. */
static int
store_node_get(struct store *st, int64_t node, int64_t *run,
    enum store_node_kind *kind)
{
	sqlite3_stmt	*s;
	const char	*k;
	int		 rc;

	if ((s = store_stmt(st, SQ_NODE_GET)) == NULL)
		return -1;
	sqlite3_bind_int64(s, 1, node);
	rc = sqlite3_step(s);
	if (rc == SQLITE_ROW) {
		*run = sqlite3_column_int64(s, 0);
		k = (const char *)sqlite3_column_text(s, 2);
		*kind = k != NULL && strcmp(k, "merge") == 0 ?
		    STORE_NODE_MERGE : STORE_NODE_AGENT;
	}
	sqlite3_reset(s);
	if (rc == SQLITE_ROW)
		return 0;
	if (rc == SQLITE_DONE)
		return store_seterr(st, STORE_ENOTFOUND, "no memory node %lld",
		    (long long)node);
	return store_setdberr(st, rc, "reading a memory node");
}

/* 1 if the query (two int64 parameters) has a row, 0 if not, -1 error. */
static int	store_merge_match(struct store *, const int64_t *, size_t,
		    int64_t *);

static int
store_has_row(struct store *st, enum store_stmt_id id, int64_t a, int64_t b)
{
	sqlite3_stmt	*s;
	int		 rc;

	if ((s = store_stmt(st, id)) == NULL)
		return -1;
	sqlite3_bind_int64(s, 1, a);
	sqlite3_bind_int64(s, 2, b);
	rc = sqlite3_step(s);
	sqlite3_reset(s);
	if (rc == SQLITE_ROW)
		return 1;
	if (rc == SQLITE_DONE)
		return 0;
	return store_setdberr(st, rc, "walking the memory graph");
}

struct store_merge_find_arg {
	const int64_t	*parents;
	size_t		 nparents;
	int64_t		*node;
};

static int
store_merge_find_on(struct store *st, void *arg)
{
	struct store_merge_find_arg	*m = arg;
	int64_t				*parents;
	size_t				 i;
	int				 rc;

	*m->node = 0;
	if (m->nparents == 0)
		return 0;
	if ((parents = calloc(m->nparents, sizeof(*parents))) == NULL)
		return store_seterr(st, STORE_ENOMEM, "finding a merge");
	for (i = 0; i < m->nparents; i++)
		parents[i] = store_real(st, m->parents[i]);
	rc = store_merge_match(st, parents, m->nparents, m->node);
	free(parents);
	return rc;
}

int
store_merge_find(struct store *st, const int64_t *parents, size_t nparents,
    int64_t *node)
{
	struct store_merge_find_arg	m = { parents, nparents, node };

	return store_call(st, store_merge_find_on, &m);
}

/* A merge node whose parents are exactly these: 1 (*node), 0 none. */
static int
store_merge_match(struct store *st, const int64_t *parents, size_t nparents,
    int64_t *node)
{
	sqlite3_stmt	*c, *p;
	int64_t		 cand, par;
	size_t		 n, i;
	int		 rc, prc, match, found = 0;

	if (store_check_owner(st) == -1 ||
	    (c = store_stmt(st, SQ_MERGE_CANDIDATES)) == NULL ||
	    (p = store_stmt(st, SQ_EDGE_PARENTS)) == NULL)
		return -1;
	/* Any such merge is a child of parents[0]: check each one's set. */
	sqlite3_bind_int64(c, 1, parents[0]);
	while (!found && (rc = sqlite3_step(c)) == SQLITE_ROW) {
		cand = sqlite3_column_int64(c, 0);
		sqlite3_bind_int64(p, 1, cand);
		for (n = 0, match = 1; (prc = sqlite3_step(p)) == SQLITE_ROW;
		    n++) {
			par = sqlite3_column_int64(p, 0);
			for (i = 0; i < nparents && parents[i] != par; i++)
				;
			match &= i < nparents;
		}
		sqlite3_reset(p);
		if (prc != SQLITE_DONE) {
			sqlite3_reset(c);
			return store_setdberr(st, prc, "walking the memory "
			    "graph");
		}
		if (match && n == nparents) {
			*node = cand;
			found = 1;
		}
	}
	sqlite3_reset(c);
	if (!found && rc != SQLITE_DONE)
		return store_setdberr(st, rc, "walking the memory graph");
	return found;
}

/* Column col (a text) of a node's SQ_NODE_INFO row, malloc'd, or NULL. */
static int
store_node_info_text(struct store *st, int64_t node, int col, char **out)
{
	sqlite3_stmt	*s;
	int		 ok = 1, rc;

	*out = NULL;
	if (store_check_owner(st) == -1 ||
	    (s = store_stmt(st, SQ_NODE_INFO)) == NULL)
		return -1;
	sqlite3_bind_int64(s, 1, node);
	if ((rc = sqlite3_step(s)) == SQLITE_ROW)
		*out = store_col_dup(s, col, &ok);
	sqlite3_reset(s);
	if (rc == SQLITE_DONE)
		return store_seterr(st, STORE_ENOTFOUND, "no memory node %lld",
		    (long long)node);
	if (rc != SQLITE_ROW)
		return store_setdberr(st, rc, "reading a memory node");
	if (!ok)
		return store_seterr(st, STORE_ENOMEM, "reading a memory node");
	return 0;
}

struct store_node_summary_arg {
	int64_t	  node;
	char	**summary;
};

static int
store_node_summary_on(struct store *st, void *arg)
{
	struct store_node_summary_arg	*a = arg;

	return store_node_info_text(st, store_real(st, a->node), 0,
	    a->summary);
}

int
store_node_summary(struct store *st, int64_t node, char **summary)
{
	struct store_node_summary_arg	a = { node, summary };

	/* The writer's front end knows the nodes it made (store_writer.c). */
	if (store_w_summary_of(st, node, summary) == 1)
		return 0;
	return store_call(st, store_node_summary_on, &a);
}

struct store_edge_op {
	struct store_op	 hdr;
	int64_t		 parent, child;
};

static int
store_edge_apply(struct store *st, struct store_op *op)
{
	struct store_edge_op	*o = (struct store_edge_op *)op;
	int64_t			 parent = store_real(st, o->parent);
	int64_t			 child = store_real(st, o->child);
	int64_t			 rp, rc;
	int			 r, ok;

	if (store_check_owner(st) == -1 ||
	    store_node_run(st, parent, &rp) == -1 ||
	    store_node_run(st, child, &rc) == -1)
		return -1;
	if (rp != rc)
		return store_seterr(st, STORE_EINVAL, "nodes %lld and %lld"
		    " belong to different runs", (long long)parent,
		    (long long)child);
	if (parent == child)
		return store_seterr(st, STORE_ECYCLE, "node %lld cannot be its"
		    " own parent", (long long)parent);
	if ((r = store_has_row(st, SQ_EDGE_EXISTS, parent, child)) != 0)
		return r == 1 ? store_seterr(st, STORE_EEXIST, "edge %lld -> %lld"
		    " exists", (long long)parent, (long long)child) : -1;
	/* parent -> child closes a cycle iff child is an ancestor of parent. */
	if ((r = store_has_row(st, SQ_EDGE_REACHES, parent, child)) != 0)
		return r == 1 ? store_seterr(st, STORE_ECYCLE, "edge %lld -> %lld"
		    " refused: %lld is an ancestor of %lld", (long long)parent,
		    (long long)child, (long long)child, (long long)parent) : -1;
	if (store_op_begin(st) == -1)
		return -1;
	ok = store_edge_insert(st, parent, child) == 0;
	return store_op_end(st, ok, 1);
}

static const struct store_op_type store_edge_type = {
	"adding a memory edge", STORE_OP_ROWS, store_edge_apply, NULL
};

int
store_edge_add(struct store *st, int64_t parent, int64_t child)
{
	struct store_edge_op	*o;

	if ((o = store_op_new(st, &store_edge_type, sizeof(*o))) == NULL)
		return -1;
	o->parent = parent;
	o->child = child;
	return store_op_submit(st, &o->hdr);
}

struct store_merge_op {
	struct store_op	 hdr;
	int64_t		 run;
	int64_t		*parents;
	size_t		 nparents;
	char		*label;
};

static int
store_merge_apply(struct store *st, struct store_op *op)
{
	struct store_merge_op	*o = (struct store_merge_op *)op;
	int64_t			 run = store_real(st, o->run), prun, node = 0;
	size_t			 i, j;
	int			 ok;

	if (store_check_owner(st) == -1)
		return -1;
	for (i = 0; i < o->nparents; i++) {
		o->parents[i] = store_real(st, o->parents[i]);
		if (store_node_run(st, o->parents[i], &prun) == -1)
			return -1;
		if (prun != run)
			return store_seterr(st, STORE_EINVAL, "node %lld is not"
			    " in run %lld", (long long)o->parents[i],
			    (long long)run);
		for (j = 0; j < i; j++)
			if (o->parents[j] == o->parents[i])
				return store_seterr(st, STORE_EINVAL, "node %lld"
				    " listed twice in a merge",
				    (long long)o->parents[i]);
	}
	if (store_op_begin(st) == -1)
		return -1;
	ok = store_node_insert(st, run, 0, STORE_NODE_MERGE, o->label,
	    &node) == 0;
	for (i = 0; ok && i < o->nparents; i++)
		ok = store_edge_insert(st, o->parents[i], node) == 0;
	if (store_op_end(st, ok, 1 + o->nparents) == -1)
		return -1;
	store_op_made(st, op, 0, node);
	return 0;
}

static void
store_merge_clear(struct store_op *op)
{
	struct store_merge_op	*o = (struct store_merge_op *)op;

	free(o->parents);
	free(o->label);
}

static const struct store_op_type store_merge_type = {
	"adding a merge node", STORE_OP_ROWS, store_merge_apply,
	store_merge_clear
};

int
store_node_merge(struct store *st, int64_t run, const int64_t *parents,
    size_t nparents, const char *label, int64_t *nodep)
{
	struct store_merge_op	*o;

	if (parents == NULL || nparents == 0)
		return store_seterr(st, STORE_EINVAL, "a merge needs a parent");
	if ((o = store_op_new(st, &store_merge_type, sizeof(*o))) == NULL)
		return -1;
	o->run = run;
	o->nparents = nparents;
	o->hdr.nmade = 1;
	o->hdr.out[0] = nodep;
	if (store_op_ids(&o->hdr, &o->parents, parents, nparents) == -1 ||
	    store_op_str(&o->hdr, &o->label, label) == -1)
		return store_op_nomem(st, &o->hdr);
	return store_op_submit(st, &o->hdr);
}

struct store_summary_op {
	struct store_op		 hdr;
	int64_t			 node;
	char			*summary;
	enum store_summary_kind	 kind;
	int			 has_usage;
	struct msg_usage	 usage;
};

static int
store_summary_apply(struct store *st, struct store_op *op)
{
	struct store_summary_op	*o = (struct store_summary_op *)op;
	int64_t			 node = store_real(st, o->node);
	sqlite3_stmt		*s;
	int			 ok;

	if (store_op_begin(st) == -1)
		return -1;
	ok = (s = store_stmt(st, SQ_NODE_SUMMARY)) != NULL;
	if (ok) {
		sqlite3_bind_int64(s, 1, node);
		store_bind_text(s, 2, o->summary);
		store_bind_text(s, 3, store_summary_kind_name(o->summary ?
		    o->kind : STORE_SUMMARY_NONE));
		sqlite3_bind_int64(s, 4, o->has_usage ?
		    (int64_t)o->usage.input : 0);
		sqlite3_bind_int64(s, 5, o->has_usage ?
		    (int64_t)o->usage.output : 0);
		ok = store_exec_stmt(st, s, "setting a summary") == 0;
		if (ok && sqlite3_changes(st->db) == 0) {
			st->op_done--;		/* it wrote nothing */
			ok = store_seterr(st, STORE_ENOTFOUND, "no memory node"
			    " %lld", (long long)node) == 0;
		}
	}
	return store_op_end(st, ok, 1);
}

static void
store_summary_clear(struct store_op *op)
{
	free(((struct store_summary_op *)op)->summary);
}

static const struct store_op_type store_summary_type = {
	"setting a summary", STORE_OP_ROWS, store_summary_apply,
	store_summary_clear
};

int
store_node_set_summary(struct store *st, int64_t node, const char *summary,
    enum store_summary_kind kind, const struct msg_usage *usage)
{
	struct store_summary_op	*o;

	if ((o = store_op_new(st, &store_summary_type, sizeof(*o))) == NULL)
		return -1;
	o->node = node;
	o->kind = kind;
	if (usage != NULL) {
		o->has_usage = 1;
		o->usage = *usage;
	}
	if (store_op_str(&o->hdr, &o->summary, summary) == -1)
		return store_op_nomem(st, &o->hdr);
	if (store_op_submit(st, &o->hdr) == -1)
		return -1;
	store_w_note_summary(st, node, summary);
	return 0;
}

/* Bytes of text, tool names and arguments in a node's messages. */
static int
store_transcript_chars(struct store *st, int64_t node, uint64_t *chars)
{
	sqlite3_stmt	*s;
	int		 rc;

	if ((s = store_stmt(st, SQ_MSG_CHARS)) == NULL)
		return -1;
	sqlite3_bind_int64(s, 1, node);
	if ((rc = sqlite3_step(s)) == SQLITE_ROW)
		*chars = (uint64_t)sqlite3_column_int64(s, 0);
	sqlite3_reset(s);
	if (rc != SQLITE_ROW)
		return store_setdberr(st, rc, "measuring a transcript");
	return 0;
}

struct store_summary_needed_arg {
	int64_t					 node;
	const char				*result;
	const struct store_summary_policy	*policy;
};

static int
store_summary_needed_on(struct store *st, void *arg)
{
	struct store_summary_needed_arg		*a = arg;
	const struct store_summary_policy	*policy = a->policy;
	const char				*result = a->result;
	enum store_node_kind			 kind;
	uint64_t				 chars = 0;
	int64_t					 run, node;

	node = store_real(st, a->node);
	if (store_check_owner(st) == -1 ||
	    store_node_get(st, node, &run, &kind) == -1)
		return -1;
	if (policy->result_max > 0 && result != NULL &&
	    strlen(result) > policy->result_max)
		return 1;
	if (policy->transcript_max == 0)
		return 0;
	if (store_transcript_chars(st, node, &chars) == -1)
		return -1;
	return chars > policy->transcript_max;
}

int
store_summary_needed(struct store *st, int64_t node, const char *result,
    const struct store_summary_policy *policy)
{
	static const struct store_summary_policy	def = {
		STORE_SUMMARY_RESULT_MAX, STORE_SUMMARY_TRANSCRIPT_MAX
	};
	struct store_summary_needed_arg			a = { node, result,
							    policy };
	int						need;

	if (policy == NULL)
		a.policy = &def;
	/* The writer's front end knows the nodes it made (store_writer.c). */
	if (store_w_summary_known(st, node, result, a.policy, &need) == 1)
		return need;
	return store_call(st, store_summary_needed_on, &a);
}

static int	store_summary_prompt_on(struct store *, void *);

/* Append NULL-terminated pieces: cheaper than buf_addf for long text,
 * which would be formatted twice. */
static int	store_cat(struct buf *, ...) __attribute__((sentinel));

static int
store_cat(struct buf *b, ...)
{
	va_list		 ap;
	const char	*p;
	int		 rc = 0;

	va_start(ap, b);
	while (rc == 0 && (p = va_arg(ap, const char *)) != NULL)
		rc = buf_addstr(b, p);
	va_end(ap);
	return rc;
}

/* Render messages as plain text, one block per message. */
static int
store_render(struct buf *b, const struct msg_list *l, int skip_system)
{
	const struct msg	*m;
	size_t			 i, j;
	int			 rc = 0;

	for (i = 0; rc == 0 && i < l->n; i++) {
		m = &l->v[i];
		if (skip_system && m->role == MSG_SYSTEM)
			continue;
		if (m->role == MSG_TOOL)
			rc = buf_addf(b, "[tool %s%s]\n", m->name != NULL ?
			    m->name : "?", m->is_error ? ", error" : "");
		else
			rc = buf_addf(b, "[%s]\n", msg_role_name(m->role));
		if (rc == 0 && m->text != NULL && *m->text != '\0')
			rc = store_cat(b, m->text, "\n", (char *)NULL);
		for (j = 0; rc == 0 && j < m->ncalls; j++)
			rc = store_cat(b, "-> ", m->calls[j].name != NULL ?
			    m->calls[j].name : "?", " ", m->calls[j].args != NULL ?
			    m->calls[j].args : "", "\n", (char *)NULL);
	}
	return rc;
}

/* Keep the head and the tail of a long transcript, say what was cut. */
static int
store_clip(struct buf *b, size_t max)
{
	struct buf	 o;
	size_t		 head, tail;
	char		*s;

	if (b->len <= max)
		return 0;
	head = max / 4;
	tail = max - head;
	buf_init(&o, 0);
	if (buf_add(&o, b->data, head) == -1 ||
	    buf_addf(&o, "\n[... %zu bytes left out ...]\n",
	    b->len - head - tail) == -1 ||
	    buf_add(&o, b->data + b->len - tail, tail) == -1) {
		buf_free(&o);
		return -1;
	}
	s = (char *)b->data;
	*b = o;
	free(s);
	return 0;
}

struct store_summary_prompt_arg {
	int64_t		 node;
	const char	*result;
	struct msg_list	*out;
};

int
store_summary_prompt(struct store *st, int64_t node, const char *result,
    struct msg_list *out)
{
	struct store_summary_prompt_arg	a = { node, result, out };

	return store_call(st, store_summary_prompt_on, &a);
}

static int
store_summary_prompt_on(struct store *st, void *arg)
{
	struct store_summary_prompt_arg	*a = arg;
	struct msg_list			*out = a->out;
	const char			*result = a->result;
	int64_t				 node = store_real(st, a->node);
	struct msg_list			 l;
	struct buf			 b;
	char				*label, *text;
	int				 ok = 1;

	if (store_node_info_text(st, node, 2, &label) == -1)
		return -1;
	msg_list_init(&l);
	buf_init(&b, 0);
	if (store_msg_load(st, node, &l, NULL) == -1) {
		ok = 0;
		goto out;
	}
	ok = store_cat(&b, "Task of the agent:\n", label != NULL ? label : "",
	    "\n\nTranscript:\n", (char *)NULL) == 0 &&
	    store_render(&b, &l, 1) == 0 &&
	    store_clip(&b, STORE_SUMMARY_PROMPT_MAX) == 0 &&
	    store_cat(&b, "\nIts final result:\n", result != NULL ?
	    result : "(none)", "\n", (char *)NULL) == 0 &&
	    (text = buf_cstr(&b)) != NULL &&
	    msg_list_add_text(out, MSG_SYSTEM, store_summary_system) == 0 &&
	    msg_list_add_text(out, MSG_USER, text) == 0;
	if (!ok)
		store_seterr(st, STORE_ENOMEM, "building a summary request");
out:
	msg_list_free(&l);
	buf_free(&b);
	free(label);
	return ok ? 0 : -1;
}

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
	if ((s = store_stmt(st, SQ_ANCESTORS)) == NULL)
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

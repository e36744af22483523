/*
 * The memory graph: nodes and edges, merge nodes, edges with cycle
 * refusal, and the checks that a node exists. Summaries are in
 * store_summary.c, a node's context in store_context.c.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <sqlite3.h>

#include "common/clock.h"
#include "store/store_int.h"

static const struct store_sql store_sql_node_insert = {
	SQ_NODE_INSERT, "INSERT INTO memory_nodes (run, agent, kind, label,"
	    " created_ms) VALUES (?,?,?,?,?)"
};

static const struct store_sql store_sql_node_get = {
	SQ_NODE_GET, "SELECT run, agent, kind FROM memory_nodes WHERE id = ?"
};

static const struct store_sql store_sql_edge_insert = {
	SQ_EDGE_INSERT, "INSERT INTO memory_edges (parent, child)"
	    " VALUES (?,?)"
};

static const struct store_sql store_sql_edge_exists = {
	SQ_EDGE_EXISTS, "SELECT 1 FROM memory_edges"
	    " WHERE parent = ? AND child = ?"
};

/* Is ?2 among ?1 and its ancestors? */
static const struct store_sql store_sql_edge_reaches = {
	SQ_EDGE_REACHES, "WITH RECURSIVE anc(id) AS (SELECT ?1"
	    " UNION SELECT e.parent FROM memory_edges e"
	    " JOIN anc ON e.child = anc.id)"
	    " SELECT 1 FROM anc WHERE id = ?2 LIMIT 1"
};

/* The merge nodes with an edge from ?1 (store_merge_find). */
static const struct store_sql store_sql_merge_candidates = {
	SQ_MERGE_CANDIDATES, "SELECT e.child FROM memory_edges e"
	    " JOIN memory_nodes n ON n.id = e.child"
	    " WHERE e.parent = ?1 AND n.kind = 'merge'"
};

static const struct store_sql store_sql_edge_parents = {
	SQ_EDGE_PARENTS, "SELECT parent FROM memory_edges WHERE child = ?"
};

/* A node's run and kind; ENOTFOUND if it does not exist. */
int
store_node_get(struct store *st, int64_t node, int64_t *run,
    enum store_node_kind *kind)
{
	sqlite3_stmt	*s;
	const char	*k;
	int		 rc;

	if ((s = store_stmt(st, &store_sql_node_get)) == NULL)
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

static int	store_merge_match(struct store *, const int64_t *, size_t,
		    int64_t *);
static int	store_node_run(struct store *, int64_t, int64_t *);

/* 1 if the query (two int64 parameters) has a row, 0 if not, -1 error. */
static int
store_has_row(struct store *st, const struct store_sql *q, int64_t a,
    int64_t b)
{
	sqlite3_stmt	*s;
	int		 rc;

	if ((s = store_stmt(st, q)) == NULL)
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
	    (c = store_stmt(st, &store_sql_merge_candidates)) == NULL ||
	    (p = store_stmt(st, &store_sql_edge_parents)) == NULL)
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
	if ((r = store_has_row(st, &store_sql_edge_exists, parent, child)) != 0)
		return r == 1 ? store_seterr(st, STORE_EEXIST, "edge %lld -> %lld"
		    " exists", (long long)parent, (long long)child) : -1;
	/* parent -> child closes a cycle iff child is an ancestor of parent. */
	if ((r = store_has_row(st, &store_sql_edge_reaches, parent, child)) != 0)
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

int
store_node_insert(struct store *st, int64_t run, int64_t agent,
    enum store_node_kind kind, const char *label, int64_t *node)
{
	sqlite3_stmt	*s;

	if ((s = store_stmt(st, &store_sql_node_insert)) == NULL)
		return -1;
	sqlite3_bind_int64(s, 1, run);
	if (agent > 0)
		sqlite3_bind_int64(s, 2, agent);
	else
		sqlite3_bind_null(s, 2);
	store_bind_text(s, 3, kind == STORE_NODE_AGENT ? "agent" : "merge");
	store_bind_text(s, 4, label);
	sqlite3_bind_int64(s, 5, clock_wall_ms());
	if (store_exec_stmt(st, s, "adding a memory node") == -1)
		return -1;
	*node = sqlite3_last_insert_rowid(st->db);
	return 0;
}

int
store_edge_insert(struct store *st, int64_t parent, int64_t child)
{
	sqlite3_stmt	*s;

	if ((s = store_stmt(st, &store_sql_edge_insert)) == NULL)
		return -1;
	sqlite3_bind_int64(s, 1, parent);
	sqlite3_bind_int64(s, 2, child);
	return store_exec_stmt(st, s, "adding a memory edge");
}

static int
store_node_run(struct store *st, int64_t node, int64_t *run)
{
	sqlite3_stmt	*s;
	size_t		 slot;
	int		 rc;

	slot = (size_t)((uint64_t)node % STORE_NODE_CACHE);
	if (node > 0 && st->valid_nodes[slot] == node) {
		if (run != NULL)
			*run = st->valid_node_runs[slot];
		return 0;
	}
	if ((s = store_stmt(st, &store_sql_node_get)) == NULL)
		return -1;
	sqlite3_bind_int64(s, 1, node);
	rc = sqlite3_step(s);
	if (rc == SQLITE_ROW) {
		st->valid_nodes[slot] = node;
		st->valid_node_runs[slot] = sqlite3_column_int64(s, 0);
		if (run != NULL)
			*run = st->valid_node_runs[slot];
	}
	sqlite3_reset(s);
	if (rc == SQLITE_ROW)
		return 0;
	if (rc == SQLITE_DONE)
		return store_seterr(st, STORE_ENOTFOUND, "no memory node %lld",
		    (long long)node);
	return store_setdberr(st, rc, "finding a memory node");
}

int
store_node_exists(struct store *st, int64_t node)
{
	return store_node_run(st, node, NULL);
}

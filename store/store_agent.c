/*
 * A run's agents: adding one (its row, its memory node and the edges to
 * its parents), its start and its status, and finding one by path. Each
 * write is one typed operation (store_op.c).
 */
#include <stdlib.h>
#include <string.h>

#include <sqlite3.h>

#include "common/clock.h"
#include "store/store_int.h"

static const struct store_sql store_sql_agent_insert = {
	SQ_AGENT_INSERT, "INSERT INTO agents (run, parent, path, depth,"
	    " profile, task, call_id, inherit_context, created_ms,"
	    " tool_filter) VALUES (?,?,?,?,?,?,?,?,?,?)"
};

static const struct store_sql store_sql_agent_find = {
	SQ_AGENT_FIND, "SELECT a.id, n.id FROM agents a"
	    " JOIN memory_nodes n ON n.agent = a.id"
	    " WHERE a.run = ? AND a.path = ?"
};

static const struct store_sql store_sql_agent_started = {
	SQ_AGENT_STARTED, "UPDATE agents SET pid = ?2, status = 'running',"
	    " started_ms = ?3, ended_ms = 0 WHERE id = ?1"
};

static const struct store_sql store_sql_agent_status = {
	SQ_AGENT_STATUS, "UPDATE agents SET status = ?2,"
	    " result = coalesce(?3, result),"
	    " exit_reason = coalesce(?4, exit_reason), ended_ms = ?5"
	    " WHERE id = ?1"
};

/*
 * Check an agent path ("0", "0.1", "0.12.3": a 0 then positive decimal
 * components without leading zeros), give its depth and its parent's path
 * (empty for the root).
 */
static int
store_path_check(const char *path, int *depth, char *parent, size_t parentsz)
{
	const char	*p, *last = NULL;
	size_t		 len, digits;

	if (path == NULL || (len = strlen(path)) == 0 || len >= STORE_PATH_MAX ||
	    path[0] != '0' || (path[1] != '\0' && path[1] != '.'))
		return -1;
	*depth = 0;
	for (p = path + 1; *p != '\0'; ) {
		if (*p != '.')
			return -1;
		last = p++;
		if (*p < '1' || *p > '9')
			return -1;
		for (digits = 0; *p >= '0' && *p <= '9'; p++)
			digits++;
		if (digits > 9)
			return -1;
		(*depth)++;
	}
	if (last == NULL)
		parent[0] = '\0';
	else {
		if ((size_t)(last - path) >= parentsz)
			return -1;
		memcpy(parent, path, (size_t)(last - path));
		parent[last - path] = '\0';
	}
	return 0;
}

int
store_agent_find(struct store *st, int64_t run, const char *path,
    int64_t *agent, int64_t *node)
{
	sqlite3_stmt	*s;
	int		 rc;

	*agent = *node = 0;
	if (store_check_owner(st) == -1)
		return -1;
	if (st->cache_run == run && strcmp(st->cache_path, path) == 0) {
		*agent = st->cache_agent;
		*node = st->cache_node;
		return 0;
	}
	if ((s = store_stmt(st, &store_sql_agent_find)) == NULL)
		return -1;
	sqlite3_bind_int64(s, 1, run);
	store_bind_text(s, 2, path);
	rc = sqlite3_step(s);
	if (rc == SQLITE_ROW) {
		*agent = sqlite3_column_int64(s, 0);
		*node = sqlite3_column_int64(s, 1);
	}
	sqlite3_reset(s);
	if (rc == SQLITE_ROW) {
		/* Agents are never deleted: the entry stays true unless the
		 * batch that wrote the agent is lost (store_batch_lost). */
		if (strlcpy(st->cache_path, path, sizeof(st->cache_path)) <
		    sizeof(st->cache_path)) {
			st->cache_run = run;
			st->cache_agent = *agent;
			st->cache_node = *node;
		}
		return 0;
	}
	if (rc == SQLITE_DONE)
		return store_seterr(st, STORE_ENOTFOUND,
		    "run %lld has no agent %s", (long long)run, path);
	return store_setdberr(st, rc, "finding an agent");
}

static int
store_agent_insert(struct store *st, int64_t run, const struct store_agent_new *a,
    int depth, int64_t parent, int64_t *agent)
{
	sqlite3_stmt	*s;

	if ((s = store_stmt(st, &store_sql_agent_insert)) == NULL)
		return -1;
	sqlite3_bind_int64(s, 1, run);
	if (parent > 0)
		sqlite3_bind_int64(s, 2, parent);
	else
		sqlite3_bind_null(s, 2);
	store_bind_text(s, 3, a->path);
	sqlite3_bind_int(s, 4, depth);
	store_bind_text(s, 5, a->profile);
	store_bind_text(s, 6, a->task);
	store_bind_text(s, 7, a->call_id);
	sqlite3_bind_int(s, 8, a->inherit_context != 0);
	sqlite3_bind_int64(s, 9, clock_wall_ms());
	store_bind_text(s, 10, a->tool_filter);
	if (store_exec_stmt(st, s, "adding an agent") == -1) {
		if (st->err == STORE_EINVAL)	/* UNIQUE (run, path) */
			return store_seterr(st, STORE_EEXIST,
			    "run %lld already has an agent %s",
			    (long long)run, a->path);
		return -1;
	}
	*agent = sqlite3_last_insert_rowid(st->db);
	return 0;
}

struct store_agent_add_op {
	struct store_op	 hdr;
	int64_t		 run;
	char		*path, *profile, *task, *call_id, *tool_filter;
	int		 inherit_context;
	int64_t		*parents;
	size_t		 nparents;
};

static int
store_agent_add_apply(struct store *st, struct store_op *op)
{
	struct store_agent_add_op	*o = (struct store_agent_add_op *)op;
	struct store_agent_new		 a = { o->path, o->profile, o->task,
					    o->call_id, o->inherit_context,
					    o->tool_filter, o->parents,
					    o->nparents };
	char				 parent[STORE_PATH_MAX];
	int64_t				 run = store_real(st, o->run);
	int64_t				 pagent = 0, pnode = 0, agent = 0;
	int64_t				 node = 0;
	size_t				 i, nedges;
	int				 depth, ok;

	for (i = 0; i < o->nparents; i++)
		o->parents[i] = store_real(st, o->parents[i]);
	(void)store_path_check(a.path, &depth, parent, sizeof(parent));
	if (depth > 0 &&
	    store_agent_find(st, run, parent, &pagent, &pnode) == -1)
		return -1;
	if (depth == 0 && store_run_exists(st, run) == -1)
		return -1;
	if (store_op_begin(st) == -1)
		return -1;
	ok = store_agent_insert(st, run, &a, depth, pagent, &agent) == 0 &&
	    store_node_insert(st, run, agent, STORE_NODE_AGENT, a.task,
	    &node) == 0;
	nedges = a.nparent_nodes > 0 ? a.nparent_nodes : pnode != 0;
	if (a.nparent_nodes > 0)
		for (i = 0; ok && i < a.nparent_nodes; i++)
			ok = store_edge_insert(st, a.parent_nodes[i],
			    node) == 0;
	else if (ok && pnode != 0)
		ok = store_edge_insert(st, pnode, node) == 0;
	if (store_op_end(st, ok, 2 + nedges) == -1)
		return -1;
	store_op_made(st, op, 0, agent);
	store_op_made(st, op, 1, node);
	return 0;
}

static void
store_agent_add_clear(struct store_op *op)
{
	struct store_agent_add_op	*o = (struct store_agent_add_op *)op;

	free(o->path);
	free(o->profile);
	free(o->task);
	free(o->call_id);
	free(o->tool_filter);
	free(o->parents);
}

static const struct store_op_type store_agent_add_type = {
	"adding an agent", STORE_OP_ROWS, store_agent_add_apply,
	store_agent_add_clear
};

int
store_agent_add(struct store *st, int64_t run, const struct store_agent_new *a,
    int64_t *agentp, int64_t *nodep)
{
	struct store_agent_add_op	*o;
	char				 parent[STORE_PATH_MAX];
	int				 depth;

	if (a == NULL || a->task == NULL)
		return store_seterr(st, STORE_EINVAL, "an agent needs a task");
	if (store_path_check(a->path, &depth, parent, sizeof(parent)) == -1)
		return store_seterr(st, STORE_EINVAL, "bad agent path \"%.64s\""
		    " (expected 0, 0.1, 0.1.2 ...)", a->path != NULL ?
		    a->path : "(null)");
	if ((o = store_op_new(st, &store_agent_add_type, sizeof(*o))) == NULL)
		return -1;
	o->run = run;
	o->inherit_context = a->inherit_context;
	o->nparents = a->nparent_nodes;
	o->hdr.nmade = 2;
	o->hdr.out[0] = agentp;
	o->hdr.out[1] = nodep;
	if (store_op_str(&o->hdr, &o->path, a->path) == -1 ||
	    store_op_str(&o->hdr, &o->profile, a->profile) == -1 ||
	    store_op_str(&o->hdr, &o->task, a->task) == -1 ||
	    store_op_str(&o->hdr, &o->call_id, a->call_id) == -1 ||
	    store_op_str(&o->hdr, &o->tool_filter, a->tool_filter) == -1 ||
	    store_op_ids(&o->hdr, &o->parents, a->parent_nodes,
	    a->nparent_nodes) == -1)
		return store_op_nomem(st, &o->hdr);
	return store_op_submit(st, &o->hdr);
}

static int
store_agent_update(struct store *st, sqlite3_stmt *s, int64_t agent)
{
	if (store_exec_stmt(st, s, "updating an agent") == -1)
		return -1;
	if (sqlite3_changes(st->db) == 0) {
		st->op_done--;		/* it wrote nothing */
		return store_seterr(st, STORE_ENOTFOUND, "no agent %lld",
		    (long long)agent);
	}
	return 0;
}

struct store_agent_started_op {
	struct store_op	 hdr;
	int64_t		 agent, pid;
};

static int
store_agent_started_apply(struct store *st, struct store_op *op)
{
	struct store_agent_started_op	*o =
					    (struct store_agent_started_op *)op;
	int64_t				 agent = store_real(st, o->agent);
	sqlite3_stmt			*s;
	int				 ok;

	if (store_op_begin(st) == -1)
		return -1;
	ok = (s = store_stmt(st, &store_sql_agent_started)) != NULL;
	if (ok) {
		sqlite3_bind_int64(s, 1, agent);
		sqlite3_bind_int64(s, 2, o->pid);
		sqlite3_bind_int64(s, 3, clock_wall_ms());
		ok = store_agent_update(st, s, agent) == 0;
	}
	return store_op_end(st, ok, 1);
}

static const struct store_op_type store_agent_started_type = {
	"marking an agent started", STORE_OP_ROWS, store_agent_started_apply,
	NULL
};

int
store_agent_started(struct store *st, int64_t agent, int64_t pid)
{
	struct store_agent_started_op	*o;

	if ((o = store_op_new(st, &store_agent_started_type,
	    sizeof(*o))) == NULL)
		return -1;
	o->agent = agent;
	o->pid = pid;
	return store_op_submit(st, &o->hdr);
}

struct store_agent_status_op {
	struct store_op		 hdr;
	int64_t			 agent;
	enum store_agent_status	 status;
	char			*result, *exit_reason;
};

static int
store_agent_status_apply(struct store *st, struct store_op *op)
{
	struct store_agent_status_op	*o =
					    (struct store_agent_status_op *)op;
	int64_t				 agent = store_real(st, o->agent);
	sqlite3_stmt			*s;
	int				 ok, final;

	final = o->status == STORE_AGENT_DONE ||
	    o->status == STORE_AGENT_FAILED ||
	    o->status == STORE_AGENT_CANCELLED;
	if (store_op_begin(st) == -1)
		return -1;
	ok = (s = store_stmt(st, &store_sql_agent_status)) != NULL;
	if (ok) {
		sqlite3_bind_int64(s, 1, agent);
		store_bind_text(s, 2, store_agent_status_name(o->status));
		store_bind_text(s, 3, o->result);
		store_bind_text(s, 4, o->exit_reason);
		sqlite3_bind_int64(s, 5, final ? clock_wall_ms() : 0);
		ok = store_agent_update(st, s, agent) == 0;
	}
	return store_op_end(st, ok, 1);
}

static void
store_agent_status_clear(struct store_op *op)
{
	struct store_agent_status_op	*o =
					    (struct store_agent_status_op *)op;

	free(o->result);
	free(o->exit_reason);
}

static const struct store_op_type store_agent_status_type = {
	"setting an agent's status", STORE_OP_ROWS, store_agent_status_apply,
	store_agent_status_clear
};

int
store_agent_set_status(struct store *st, int64_t agent,
    enum store_agent_status status, const char *result,
    const char *exit_reason)
{
	struct store_agent_status_op	*o;

	if ((o = store_op_new(st, &store_agent_status_type,
	    sizeof(*o))) == NULL)
		return -1;
	o->agent = agent;
	o->status = status;
	if (store_op_str(&o->hdr, &o->result, result) == -1 ||
	    store_op_str(&o->hdr, &o->exit_reason, exit_reason) == -1)
		return store_op_nomem(st, &o->hdr);
	return store_op_submit(st, &o->hdr);
}

const char *
store_agent_status_name(enum store_agent_status s)
{
	switch (s) {
	case STORE_AGENT_PENDING:
		return "pending";
	case STORE_AGENT_RUNNING:
		return "running";
	case STORE_AGENT_DONE:
		return "done";
	case STORE_AGENT_FAILED:
		return "failed";
	case STORE_AGENT_CANCELLED:
		return "cancelled";
	}
	return "unknown";
}

enum store_agent_status
store_agent_status_parse(const char *name)
{
	int	i;

	for (i = STORE_AGENT_PENDING; i <= STORE_AGENT_CANCELLED; i++)
		if (name != NULL && strcmp(name,
		    store_agent_status_name((enum store_agent_status)i)) == 0)
			return (enum store_agent_status)i;
	return STORE_AGENT_FAILED;
}

/*
 * The store's writes of a run as it goes: the run, its agents, every
 * message (the checkpoint) and events. Each call is one operation of the
 * open batch (store.c): it lands whole with the batch or not at all.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <sqlite3.h>

#include "common/clock.h"
#include "store/store_int.h"

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

static int
store_run_insert(struct store *st, const struct store_run_params *p,
    int64_t *run)
{
	sqlite3_stmt	*s;

	if ((s = store_stmt(st, SQ_RUN_INSERT)) == NULL)
		return -1;
	store_bind_text(s, 1, p->task);
	store_bind_text(s, 2, p->workspace);
	store_bind_text(s, 3, p->profile);
	store_bind_text(s, 4, p->model);
	store_bind_text(s, 5, p->params);
	sqlite3_bind_int64(s, 6, (int64_t)store_getpid());
	sqlite3_bind_int64(s, 7, clock_wall_ms());
	store_bind_text(s, 8, p->cow_mode);
	store_bind_text(s, 9, p->cow_dir);
	if (p->continues > 0)
		sqlite3_bind_int64(s, 10, p->continues);
	else
		sqlite3_bind_null(s, 10);
	if (store_exec_stmt(st, s, "recording a run") == -1)
		return -1;
	*run = sqlite3_last_insert_rowid(st->db);
	return 0;
}

int
store_run_begin(struct store *st, const struct store_run_params *p,
    int64_t *run)
{
	if (p == NULL || p->task == NULL)
		return store_seterr(st, STORE_EINVAL, "a run needs a task");
	if (store_op_begin(st) == -1)
		return -1;
	return store_op_end(st, store_run_insert(st, p, run) == 0, 1);
}

/*
 * The only edge across runs: old's root node is the parent of a follow-up
 * run's root node. No cycle is possible (node is new, old's nodes are
 * older). Not through the writer: cmd_run calls it before it starts one.
 */
int
store_run_continue(struct store *st, int64_t old, int64_t node)
{
	int64_t	agent, root;
	int	ok;

	if (st->w != NULL)
		return store_seterr(st, STORE_EINVAL, "a follow-up's edge is "
		    "written with the writer thread stopped");
	if (store_op_begin(st) == -1)
		return -1;
	ok = store_agent_find(st, old, "0", &agent, &root) == 0 &&
	    store_edge_insert(st, root, node) == 0;
	return store_op_end(st, ok, 1);
}

/* Run one UPDATE on a run; ENOTFOUND when no row changed. */
static int
store_run_update(struct store *st, sqlite3_stmt *s, int64_t run,
    const char *what)
{
	if (store_exec_stmt(st, s, what) == -1)
		return -1;
	if (sqlite3_changes(st->db) == 0) {
		st->op_done--;		/* it wrote nothing */
		return store_seterr(st, STORE_ENOTFOUND, "no run %lld",
		    (long long)run);
	}
	return 0;
}

struct store_run_resumed_op {
	struct store_op	 hdr;
	int64_t		 run;
};

static int
store_run_resumed_apply(struct store *st, struct store_op *op)
{
	struct store_run_resumed_op	*o = (struct store_run_resumed_op *)op;
	sqlite3_stmt			*s;
	int				 ok;

	if (store_op_begin(st) == -1)
		return -1;
	ok = (s = store_stmt(st, SQ_RUN_RESUMED)) != NULL;
	if (ok) {
		sqlite3_bind_int64(s, 1, o->run);
		sqlite3_bind_int64(s, 2, (int64_t)store_getpid());
		ok = store_run_update(st, s, o->run,
		    "marking a run resumed") == 0;
	}
	return store_op_end(st, ok, 1);
}

static const struct store_op_type store_run_resumed_type = {
	"marking a run resumed", STORE_OP_ROWS, store_run_resumed_apply, NULL
};

int
store_run_resumed(struct store *st, int64_t run)
{
	struct store_run_resumed_op	*o;

	if ((o = store_op_new(st, &store_run_resumed_type,
	    sizeof(*o))) == NULL)
		return -1;
	o->run = run;
	return store_op_submit(st, &o->hdr);
}

struct store_run_end_op {
	struct store_op		 hdr;
	int64_t			 run;
	enum store_run_status	 status;
	char			*result;
};

static int
store_run_end_apply(struct store *st, struct store_op *op)
{
	struct store_run_end_op	*o = (struct store_run_end_op *)op;
	sqlite3_stmt		*s;
	int			 ok;

	/* After a lost write only this status is tried: the run says why
	 * it stopped, where the file still takes it. */
	if (o->status == STORE_RUN_STORE_FAILED)
		st->final = 1;
	if (store_op_begin(st) == -1)
		return -1;
	ok = (s = store_stmt(st, SQ_RUN_END)) != NULL;
	if (ok) {
		sqlite3_bind_int64(s, 1, o->run);
		store_bind_text(s, 2, store_run_status_name(o->status));
		store_bind_text(s, 3, o->result);
		sqlite3_bind_int64(s, 4, o->status == STORE_RUN_RUNNING ? 0 :
		    clock_wall_ms());
		ok = store_run_update(st, s, o->run, "ending a run") == 0;
	}
	return store_op_end(st, ok, 1);
}

static void
store_run_end_clear(struct store_op *op)
{
	free(((struct store_run_end_op *)op)->result);
}

static const struct store_op_type store_run_end_type = {
	"ending a run", STORE_OP_ROWS, store_run_end_apply, store_run_end_clear
};

int
store_run_end(struct store *st, int64_t run, enum store_run_status status,
    const char *result)
{
	struct store_run_end_op	*o;

	if ((o = store_op_new(st, &store_run_end_type, sizeof(*o))) == NULL)
		return -1;
	o->run = run;
	o->status = status;
	if (store_op_str(&o->hdr, &o->result, result) == -1)
		return store_op_nomem(st, &o->hdr);
	return store_op_submit(st, &o->hdr);
}

struct store_run_finish_arg {
	int64_t			 run;
	enum store_run_status	 status;
	const char		*result;
};

static int
store_run_finish_on(struct store *st, void *arg)
{
	struct store_run_finish_arg	*f = arg;

	if (store_run_end(st, f->run, f->status, f->result) == -1)
		return -1;
	return store_commit(st);
}

int
store_run_finish(struct store *st, int64_t run, enum store_run_status status,
    const char *result)
{
	struct store_run_finish_arg	f = { run, status, result };

	return store_call(st, store_run_finish_on, &f);
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
	if ((s = store_stmt(st, SQ_AGENT_FIND)) == NULL)
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

int
store_node_insert(struct store *st, int64_t run, int64_t agent,
    enum store_node_kind kind, const char *label, int64_t *node)
{
	sqlite3_stmt	*s;

	if ((s = store_stmt(st, SQ_NODE_INSERT)) == NULL)
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

	if ((s = store_stmt(st, SQ_EDGE_INSERT)) == NULL)
		return -1;
	sqlite3_bind_int64(s, 1, parent);
	sqlite3_bind_int64(s, 2, child);
	return store_exec_stmt(st, s, "adding a memory edge");
}

static int
store_agent_insert(struct store *st, int64_t run, const struct store_agent_new *a,
    int depth, int64_t parent, int64_t *agent)
{
	sqlite3_stmt	*s;

	if ((s = store_stmt(st, SQ_AGENT_INSERT)) == NULL)
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
	ok = (s = store_stmt(st, SQ_AGENT_STARTED)) != NULL;
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
	ok = (s = store_stmt(st, SQ_AGENT_STATUS)) != NULL;
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

static int
store_msg_insert_calls(struct store *st, int64_t msgid, const struct msg *m)
{
	sqlite3_stmt	*s;
	size_t		 i;

	for (i = 0; i < m->ncalls; i++) {
		if ((s = store_stmt(st, SQ_CALL_INSERT)) == NULL)
			return -1;
		sqlite3_bind_int64(s, 1, msgid);
		sqlite3_bind_int64(s, 2, (int64_t)i);
		store_bind_text(s, 3, m->calls[i].id);
		store_bind_text(s, 4, m->calls[i].name);
		store_bind_text(s, 5, m->calls[i].args);
		if (store_exec_stmt(st, s, "recording a tool call") == -1)
			return -1;
	}
	return 0;
}

static int
store_msg_insert(struct store *st, int64_t node, const struct msg *m,
    const struct msg_usage *u)
{
	sqlite3_stmt	*s;
	int64_t		 seq = 0;
	int		 rc;

	if (store_node_exists(st, node) == -1)
		return -1;
	if ((s = store_stmt(st, SQ_MSG_NEXTSEQ)) == NULL)
		return -1;
	sqlite3_bind_int64(s, 1, node);
	if ((rc = sqlite3_step(s)) == SQLITE_ROW)
		seq = sqlite3_column_int64(s, 0);
	sqlite3_reset(s);
	if (rc != SQLITE_ROW)
		return store_setdberr(st, rc, "numbering a message");
	if ((s = store_stmt(st, SQ_MSG_INSERT)) == NULL)
		return -1;
	sqlite3_bind_int64(s, 1, node);
	sqlite3_bind_int64(s, 2, seq);
	store_bind_text(s, 3, msg_role_name(m->role));
	store_bind_text(s, 4, m->text);
	store_bind_text(s, 5, m->call_id);
	store_bind_text(s, 6, m->name);
	sqlite3_bind_int(s, 7, m->is_error != 0);
	sqlite3_bind_int64(s, 8, (int64_t)m->ncalls);
	sqlite3_bind_int64(s, 9, u != NULL ? (int64_t)u->input : 0);
	sqlite3_bind_int64(s, 10, u != NULL ? (int64_t)u->output : 0);
	sqlite3_bind_int64(s, 11, clock_wall_ms());
	if (store_exec_stmt(st, s, "recording a message") == -1)
		return -1;
	return store_msg_insert_calls(st, sqlite3_last_insert_rowid(st->db), m);
}

static int
store_msg_tokens(struct store *st, int64_t node, const struct msg_usage *u)
{
	sqlite3_stmt	*s;

	if (u == NULL || (u->input == 0 && u->output == 0))
		return 0;
	if ((s = store_stmt(st, SQ_AGENT_TOKENS)) == NULL)
		return -1;
	sqlite3_bind_int64(s, 1, node);
	sqlite3_bind_int64(s, 2, (int64_t)u->input);
	sqlite3_bind_int64(s, 3, (int64_t)u->output);
	return store_exec_stmt(st, s, "counting tokens");
}

/* The bytes SQ_MSG_CHARS counts for one message. */
static uint64_t
store_msg_chars(const struct msg *m)
{
	uint64_t	n = m->text != NULL ? strlen(m->text) : 0;
	size_t		i;

	for (i = 0; i < m->ncalls; i++)
		n += (m->calls[i].args ? strlen(m->calls[i].args) : 0) +
		    (m->calls[i].name ? strlen(m->calls[i].name) : 0);
	return n;
}

struct store_msg_op {
	struct store_op		 hdr;
	int64_t			 node;
	struct msg		 msg;
	int			 has_usage;
	struct msg_usage	 usage;
};

static int
store_msg_apply(struct store *st, struct store_op *op)
{
	struct store_msg_op	*o = (struct store_msg_op *)op;
	struct msg_usage	*u = o->has_usage ? &o->usage : NULL;
	int64_t			 node = store_real(st, o->node);
	int			 ok;

	if (store_op_begin(st) == -1)
		return -1;
	ok = store_msg_insert(st, node, &o->msg, u) == 0 &&
	    store_msg_tokens(st, node, u) == 0;
	return store_op_end(st, ok, 1 + o->msg.ncalls);
}

static void
store_msg_clear(struct store_op *op)
{
	msg_free(&((struct store_msg_op *)op)->msg);
}

static const struct store_op_type store_msg_type = {
	"recording a message", STORE_OP_ROWS, store_msg_apply, store_msg_clear
};

int
store_msg_append(struct store *st, int64_t node, const struct msg *m,
    const struct msg_usage *usage)
{
	struct store_msg_op	*o;
	uint64_t		 chars;

	if (m == NULL || (unsigned)m->role > MSG_TOOL ||
	    (m->ncalls > 0 && m->calls == NULL))
		return store_seterr(st, STORE_EINVAL, "bad message");
	if ((o = store_op_new(st, &store_msg_type, sizeof(*o))) == NULL)
		return -1;
	if (msg_copy(&o->msg, m) == -1) {
		free(o);
		return store_seterr(st, STORE_ENOMEM, "recording a message:"
		    " out of memory");
	}
	chars = store_msg_chars(m);
	o->node = node;
	o->hdr.bytes += chars + (m->call_id ? strlen(m->call_id) : 0);
	if (usage != NULL) {
		o->has_usage = 1;
		o->usage = *usage;
	}
	if (store_op_submit(st, &o->hdr) == -1)
		return -1;
	store_w_note_chars(st, node, chars);
	return 0;
}

struct store_event_op {
	struct store_op	 hdr;
	int64_t		 run;
	char		*path, *type, *detail;
};

static int
store_event_apply(struct store *st, struct store_op *op)
{
	struct store_event_op	*o = (struct store_event_op *)op;
	sqlite3_stmt		*s;
	int			 ok;

	if (store_check_owner(st) == -1 ||
	    store_run_exists(st, o->run) == -1 || store_op_begin(st) == -1)
		return -1;
	ok = (s = store_stmt(st, SQ_EVENT_INSERT)) != NULL;
	if (ok) {
		sqlite3_bind_int64(s, 1, o->run);
		sqlite3_bind_int64(s, 2, clock_wall_ms());
		store_bind_text(s, 3, o->path);
		store_bind_text(s, 4, o->type);
		store_bind_text(s, 5, o->detail);
		ok = store_exec_stmt(st, s, "recording an event") == 0;
	}
	return store_op_end(st, ok, 1);
}

static void
store_event_clear(struct store_op *op)
{
	struct store_event_op	*o = (struct store_event_op *)op;

	free(o->path);
	free(o->type);
	free(o->detail);
}

static const struct store_op_type store_event_type = {
	"recording an event", STORE_OP_ROWS, store_event_apply,
	store_event_clear
};

int
store_event(struct store *st, int64_t run, const char *path,
    const char *type, const char *detail)
{
	struct store_event_op	*o;

	if (type == NULL)
		return store_seterr(st, STORE_EINVAL, "an event needs a type");
	if ((o = store_op_new(st, &store_event_type, sizeof(*o))) == NULL)
		return -1;
	o->run = run;
	if (store_op_str(&o->hdr, &o->path, path) == -1 ||
	    store_op_str(&o->hdr, &o->type, type) == -1 ||
	    store_op_str(&o->hdr, &o->detail, detail) == -1)
		return store_op_nomem(st, &o->hdr);
	return store_op_submit(st, &o->hdr);
}

/*
 * Delete run and everything of it (agents, messages, memory nodes and
 * edges, events) in one transaction of its own: all of it or nothing.
 * The caller makes sure no supervisor still writes to it.
 */
int
store_run_delete(struct store *st, int64_t run)
{
	static const enum store_stmt_id	 del[] = { SQ_DEL_CALLS, SQ_DEL_MSGS,
					    SQ_DEL_EDGES, SQ_DEL_NODES,
					    SQ_DEL_EVENTS, SQ_DEL_AGENTS,
					    SQ_DEL_CONTINUES, SQ_DEL_RUN };
	sqlite3_stmt			*s;
	size_t				 i;
	int				 ok;

	if (store_flush(st) == -1 || store_op_begin(st) == -1)
		return -1;
	ok = store_run_exists(st, run) == 0;
	for (i = 0; ok && i < sizeof(del) / sizeof(del[0]); i++) {
		ok = (s = store_stmt(st, del[i])) != NULL;
		if (ok) {
			sqlite3_bind_int64(s, 1, run);
			ok = store_exec_stmt(st, s, "deleting a run") == 0;
		}
	}
	store_cache_clear(st);
	if (store_op_end(st, ok, 1) == -1)
		return -1;
	return store_flush(st);
}

/*
 * A run's layer was applied or discarded ("applied", "discarded"). Not
 * through the writer thread: the commands that call it (`warren apply`,
 * `discard`, the end of `run --apply`) run with no writer.
 */
int
store_run_cow_state(struct store *st, int64_t run, const char *state)
{
	sqlite3_stmt	*s;
	int		 rc, ok;

	if (st->w != NULL)
		return store_seterr(st, STORE_EINVAL, "the layer's state is "
		    "written with the writer thread stopped");
	if (store_op_begin(st) == -1)
		return -1;
	rc = sqlite3_prepare_v2(st->db, "UPDATE runs SET cow_state = ?2 "
	    "WHERE id = ?1 AND cow_mode IS NOT NULL", -1, &s, NULL);
	if (rc != SQLITE_OK) {
		(void)store_setdberr(st, rc, "recording a layer's state");
		return store_op_end(st, 0, 1);
	}
	sqlite3_bind_int64(s, 1, run);
	sqlite3_bind_text(s, 2, state, -1, SQLITE_STATIC);
	ok = store_run_update(st, s, run, "recording a layer's state") == 0;
	sqlite3_finalize(s);
	if (store_op_end(st, ok, 1) == -1)
		return -1;
	return store_flush(st);
}

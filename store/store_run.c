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

int
store_run_resumed(struct store *st, int64_t run)
{
	sqlite3_stmt	*s;
	int		 ok;

	if (st->w != NULL)
		return store_w_run_resumed(st, run);
	if (store_op_begin(st) == -1)
		return -1;
	ok = (s = store_stmt(st, SQ_RUN_RESUMED)) != NULL;
	if (ok) {
		sqlite3_bind_int64(s, 1, run);
		sqlite3_bind_int64(s, 2, (int64_t)store_getpid());
		ok = store_run_update(st, s, run, "marking a run resumed") == 0;
	}
	return store_op_end(st, ok, 1);
}

int
store_run_end(struct store *st, int64_t run, enum store_run_status status,
    const char *result)
{
	sqlite3_stmt	*s;
	int		 ok;

	if (st->w != NULL)
		return store_w_run_end(st, run, status, result);
	/* After a lost write only this status is tried: the run says why
	 * it stopped, where the file still takes it. */
	if (status == STORE_RUN_STORE_FAILED)
		st->final = 1;
	if (store_op_begin(st) == -1)
		return -1;
	ok = (s = store_stmt(st, SQ_RUN_END)) != NULL;
	if (ok) {
		sqlite3_bind_int64(s, 1, run);
		store_bind_text(s, 2, store_run_status_name(status));
		store_bind_text(s, 3, result);
		sqlite3_bind_int64(s, 4, status == STORE_RUN_RUNNING ? 0 :
		    clock_wall_ms());
		ok = store_run_update(st, s, run, "ending a run") == 0;
	}
	return store_op_end(st, ok, 1);
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

int
store_agent_add(struct store *st, int64_t run, const struct store_agent_new *a,
    int64_t *agentp, int64_t *nodep)
{
	char	 parent[STORE_PATH_MAX];
	int64_t	 pagent = 0, pnode = 0, agent = 0, node = 0;
	size_t	 i, nedges;
	int	 depth, ok;

	if (a == NULL || a->task == NULL)
		return store_seterr(st, STORE_EINVAL, "an agent needs a task");
	if (store_path_check(a->path, &depth, parent, sizeof(parent)) == -1)
		return store_seterr(st, STORE_EINVAL, "bad agent path \"%.64s\""
		    " (expected 0, 0.1, 0.1.2 ...)", a->path != NULL ?
		    a->path : "(null)");
	if (st->w != NULL)
		return store_w_agent_add(st, run, a, agentp, nodep);
	if (depth > 0 &&
	    store_agent_find(st, run, parent, &pagent, &pnode) == -1)
		return -1;
	if (depth == 0 && store_run_exists(st, run) == -1)
		return -1;
	if (store_op_begin(st) == -1)
		return -1;
	ok = store_agent_insert(st, run, a, depth, pagent, &agent) == 0 &&
	    store_node_insert(st, run, agent, STORE_NODE_AGENT, a->task,
	    &node) == 0;
	nedges = a->nparent_nodes > 0 ? a->nparent_nodes : pnode != 0;
	if (a->nparent_nodes > 0)
		for (i = 0; ok && i < a->nparent_nodes; i++)
			ok = store_edge_insert(st, a->parent_nodes[i],
			    node) == 0;
	else if (ok && pnode != 0)
		ok = store_edge_insert(st, pnode, node) == 0;
	if (store_op_end(st, ok, 2 + nedges) == -1)
		return -1;
	if (agentp != NULL)
		*agentp = agent;
	if (nodep != NULL)
		*nodep = node;
	return 0;
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

int
store_agent_started(struct store *st, int64_t agent, int64_t pid)
{
	sqlite3_stmt	*s;
	int		 ok;

	if (st->w != NULL)
		return store_w_agent_started(st, agent, pid);
	if (store_op_begin(st) == -1)
		return -1;
	ok = (s = store_stmt(st, SQ_AGENT_STARTED)) != NULL;
	if (ok) {
		sqlite3_bind_int64(s, 1, agent);
		sqlite3_bind_int64(s, 2, pid);
		sqlite3_bind_int64(s, 3, clock_wall_ms());
		ok = store_agent_update(st, s, agent) == 0;
	}
	return store_op_end(st, ok, 1);
}

int
store_agent_set_status(struct store *st, int64_t agent,
    enum store_agent_status status, const char *result,
    const char *exit_reason)
{
	sqlite3_stmt	*s;
	int		 ok, final;

	if (st->w != NULL)
		return store_w_agent_set_status(st, agent, status,
		    result, exit_reason);
	final = status == STORE_AGENT_DONE || status == STORE_AGENT_FAILED ||
	    status == STORE_AGENT_CANCELLED;
	if (store_op_begin(st) == -1)
		return -1;
	ok = (s = store_stmt(st, SQ_AGENT_STATUS)) != NULL;
	if (ok) {
		sqlite3_bind_int64(s, 1, agent);
		store_bind_text(s, 2, store_agent_status_name(status));
		store_bind_text(s, 3, result);
		store_bind_text(s, 4, exit_reason);
		sqlite3_bind_int64(s, 5, final ? clock_wall_ms() : 0);
		ok = store_agent_update(st, s, agent) == 0;
	}
	return store_op_end(st, ok, 1);
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

int
store_msg_append(struct store *st, int64_t node, const struct msg *m,
    const struct msg_usage *usage)
{
	int	ok;

	if (m == NULL || (unsigned)m->role > MSG_TOOL ||
	    (m->ncalls > 0 && m->calls == NULL))
		return store_seterr(st, STORE_EINVAL, "bad message");
	if (st->w != NULL)
		return store_w_msg_append(st, node, m, usage);
	if (store_op_begin(st) == -1)
		return -1;
	ok = store_msg_insert(st, node, m, usage) == 0 &&
	    store_msg_tokens(st, node, usage) == 0;
	return store_op_end(st, ok, 1 + m->ncalls);
}

int
store_event(struct store *st, int64_t run, const char *path,
    const char *type, const char *detail)
{
	sqlite3_stmt	*s;
	int		 ok;

	if (type == NULL)
		return store_seterr(st, STORE_EINVAL, "an event needs a type");
	if (st->w != NULL)
		return store_w_event(st, run, path, type, detail);
	if (store_check_owner(st) == -1 || store_run_exists(st, run) == -1 ||
	    store_op_begin(st) == -1)
		return -1;
	ok = (s = store_stmt(st, SQ_EVENT_INSERT)) != NULL;
	if (ok) {
		sqlite3_bind_int64(s, 1, run);
		sqlite3_bind_int64(s, 2, clock_wall_ms());
		store_bind_text(s, 3, path);
		store_bind_text(s, 4, type);
		store_bind_text(s, 5, detail);
		ok = store_exec_stmt(st, s, "recording an event") == 0;
	}
	return store_op_end(st, ok, 1);
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

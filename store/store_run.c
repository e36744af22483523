/*
 * A run's rows: the run itself (begun, resumed, ended, continued, its
 * layer's state, deleted) and its events. Each write is one operation of
 * the open batch (store.c): it lands whole with the batch or not at all.
 * Agents are in store_agent.c, messages in store_msg.c, the memory graph
 * in store_graph.c.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <sqlite3.h>

#include "common/clock.h"
#include "store/store_int.h"
#include "store/store_testapi.h"

static const struct store_sql store_sql_run_insert = {
	SQ_RUN_INSERT, "INSERT INTO runs (task, workspace, profile, model,"
	    " params, status, pid, started_ms, cow_mode, cow_dir, cow_state,"
	    " continues) VALUES (?,?,?,?,?,'running',?,?,?8,?9,"
	    " CASE WHEN ?8 IS NULL THEN NULL ELSE 'pending' END, ?10)"
};

static const struct store_sql store_sql_run_resumed = {
	SQ_RUN_RESUMED, "UPDATE runs SET status = 'running', pid = ?2,"
	    " resumes = resumes + 1, ended_ms = 0 WHERE id = ?1"
};

static const struct store_sql store_sql_run_end = {
	SQ_RUN_END, "UPDATE runs SET status = ?2, result = ?3,"
	    " ended_ms = ?4 WHERE id = ?1"
};

static const struct store_sql store_sql_run_exists = {
	SQ_RUN_EXISTS, "SELECT 1 FROM runs WHERE id = ?"
};

static const struct store_sql store_sql_event_insert = {
	SQ_EVENT_INSERT, "INSERT INTO events (run, time_ms, path, type,"
	    " detail) VALUES (?,?,?,?,?)"
};

/* store_run_delete: a run's rows, those that point at others first. */
static const struct store_sql store_sql_del_calls = {
	SQ_DEL_CALLS, "DELETE FROM message_calls WHERE message IN"
	    " (SELECT m.id FROM messages m JOIN memory_nodes n"
	    " ON m.node = n.id WHERE n.run = ?1)"
};

static const struct store_sql store_sql_del_msgs = {
	SQ_DEL_MSGS, "DELETE FROM messages WHERE node IN"
	    " (SELECT id FROM memory_nodes WHERE run = ?1)"
};

static const struct store_sql store_sql_del_edges = {
	SQ_DEL_EDGES, "DELETE FROM memory_edges WHERE parent IN"
	    " (SELECT id FROM memory_nodes WHERE run = ?1) OR child IN"
	    " (SELECT id FROM memory_nodes WHERE run = ?1)"
};

static const struct store_sql store_sql_del_nodes = {
	SQ_DEL_NODES, "DELETE FROM memory_nodes WHERE run = ?1"
};

static const struct store_sql store_sql_del_events = {
	SQ_DEL_EVENTS, "DELETE FROM events WHERE run = ?1"
};

static const struct store_sql store_sql_del_agents = {
	SQ_DEL_AGENTS, "DELETE FROM agents WHERE run = ?1"
};

/* Its follow-ups stay, continuing no run. */
static const struct store_sql store_sql_del_continues = {
	SQ_DEL_CONTINUES, "UPDATE runs SET continues = NULL"
	    " WHERE continues = ?1"
};

static const struct store_sql store_sql_del_run = {
	SQ_DEL_RUN, "DELETE FROM runs WHERE id = ?1"
};

static int
store_run_insert(struct store *st, const struct store_run_params *p,
    int64_t *run)
{
	sqlite3_stmt	*s;

	if ((s = store_stmt(st, &store_sql_run_insert)) == NULL)
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

/*
 * A follow-up goes on in the layer of the run it continues: that run's
 * layer is "continued" from now on. First, so that a layer applied,
 * discarded or taken by another follow-up meanwhile refuses the run
 * before anything is written (a logical error leaves the batch alone).
 */
static int
store_run_adopt(struct store *st, const struct store_run_params *p)
{
	sqlite3_stmt	*s;
	int		 rc;

	rc = sqlite3_prepare_v2(st->db, "UPDATE runs SET cow_state ="
	    " 'continued' WHERE id = ?1 AND cow_dir = ?2 AND"
	    " coalesce(cow_state, 'pending') = 'pending'", -1, &s, NULL);
	if (rc != SQLITE_OK)
		return store_setdberr(st, rc, "taking over a run's layer");
	sqlite3_bind_int64(s, 1, p->adopts);
	store_bind_text(s, 2, p->cow_dir);
	rc = store_exec_stmt(st, s, "taking over a run's layer");
	sqlite3_finalize(s);
	if (rc == -1)
		return -1;
	if (sqlite3_changes(st->db) == 1)
		return 0;
	st->op_done--;		/* it wrote nothing */
	return store_seterr(st, STORE_EEXIST, "run %lld's layer is no longer "
	    "there to go on in (applied, discarded or taken over by another "
	    "follow-up meanwhile): run again for a layer of its own",
	    (long long)p->adopts);
}

int
store_run_begin(struct store *st, const struct store_run_params *p,
    int64_t *run)
{
	int	ok;

	if (p == NULL || p->task == NULL)
		return store_seterr(st, STORE_EINVAL, "a run needs a task");
	if (p->adopts > 0 && p->cow_dir == NULL)
		return store_seterr(st, STORE_EINVAL, "a run going on in "
		    "another's layer needs the layer's directory");
	if (store_op_begin(st) == -1)
		return -1;
	ok = (p->adopts <= 0 || store_run_adopt(st, p) == 0) &&
	    store_run_insert(st, p, run) == 0;
	return store_op_end(st, ok, p->adopts > 0 ? 2 : 1);
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
	ok = (s = store_stmt(st, &store_sql_run_resumed)) != NULL;
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
	ok = (s = store_stmt(st, &store_sql_run_end)) != NULL;
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
	ok = (s = store_stmt(st, &store_sql_event_insert)) != NULL;
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
	static const struct store_sql	*const del[] = {
		&store_sql_del_calls, &store_sql_del_msgs, &store_sql_del_edges,
		&store_sql_del_nodes, &store_sql_del_events,
		&store_sql_del_agents, &store_sql_del_continues,
		&store_sql_del_run
	};
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

/* Nothing was updated: a layer a follow-up took over meanwhile
 * (EEXIST), else no run with a layer (ENOTFOUND). */
static int
store_run_cow_state_none(struct store *st, int64_t run)
{
	sqlite3_stmt	*s;
	int		 taken = 0;

	if (sqlite3_prepare_v2(st->db, "SELECT 1 FROM runs WHERE id = ?1 AND"
	    " cow_state = 'continued'", -1, &s, NULL) == SQLITE_OK) {
		sqlite3_bind_int64(s, 1, run);
		taken = sqlite3_step(s) == SQLITE_ROW;
		sqlite3_finalize(s);
	}
	if (!taken)
		return store_seterr(st, STORE_ENOTFOUND, "no run %lld with a "
		    "layer", (long long)run);
	return store_seterr(st, STORE_EEXIST, "run %lld's layer went on to a "
	    "follow-up run (--continue) meanwhile, which holds it now: left "
	    "as it is", (long long)run);
}

/*
 * A run's layer was applied or discarded ("applied", "discarded"). Not
 * through the writer thread: the commands that call it (`warren apply`,
 * `discard`, the end of `run --apply`) run with no writer. Not a layer a
 * follow-up went on in ("continued"), even one taken over after the
 * caller read the run: the caller must then leave the layer be.
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
	    "WHERE id = ?1 AND cow_mode IS NOT NULL AND"
	    " coalesce(cow_state, 'pending') != 'continued'", -1, &s, NULL);
	if (rc != SQLITE_OK) {
		(void)store_setdberr(st, rc, "recording a layer's state");
		return store_op_end(st, 0, 1);
	}
	sqlite3_bind_int64(s, 1, run);
	sqlite3_bind_text(s, 2, state, -1, SQLITE_STATIC);
	ok = store_exec_stmt(st, s, "recording a layer's state") == 0;
	if (ok && sqlite3_changes(st->db) == 0) {
		st->op_done--;		/* it wrote nothing */
		ok = 0;
		(void)store_run_cow_state_none(st, run);
	}
	sqlite3_finalize(s);
	if (store_op_end(st, ok, 1) == -1)
		return -1;
	return store_flush(st);
}

int
store_run_exists(struct store *st, int64_t run)
{
	sqlite3_stmt	*s;
	int		 rc;

	if (run > 0 && run == st->valid_run)
		return 0;
	if ((s = store_stmt(st, &store_sql_run_exists)) == NULL)
		return -1;
	sqlite3_bind_int64(s, 1, run);
	rc = sqlite3_step(s);
	sqlite3_reset(s);
	if (rc == SQLITE_ROW) {
		st->valid_run = run;
		return 0;
	}
	if (rc == SQLITE_DONE)
		return store_seterr(st, STORE_ENOTFOUND, "no run %lld",
		    (long long)run);
	return store_setdberr(st, rc, "finding a run");
}

const char *
store_run_status_name(enum store_run_status s)
{
	switch (s) {
	case STORE_RUN_RUNNING:
		return "running";
	case STORE_RUN_DONE:
		return "done";
	case STORE_RUN_FAILED:
		return "failed";
	case STORE_RUN_CANCELLED:
		return "cancelled";
	case STORE_RUN_STORE_FAILED:
		return "store_failed";
	}
	return "unknown";
}

enum store_run_status
store_run_status_parse(const char *name)
{
	int	i;

	for (i = STORE_RUN_RUNNING; i <= STORE_RUN_STORE_FAILED; i++)
		if (name != NULL && strcmp(name,
		    store_run_status_name((enum store_run_status)i)) == 0)
			return (enum store_run_status)i;
	return STORE_RUN_FAILED;
}

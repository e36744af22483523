/*
 * The store's reads: runs, agents, the graph and events for the commands,
 * and the resume plan. A reader in another process sees only committed
 * batches; the writer itself also sees its open batch.
 */
#include <sys/types.h>

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <sqlite3.h>

#include "store/store_int.h"

static void	store_agent_free(struct store_agent *);

#define RUN_COLUMNS \
	"SELECT r.id, r.task, r.workspace, r.profile, r.model, r.params," \
	" r.status, r.result, r.pid, r.resumes, r.started_ms, r.ended_ms," \
	" (SELECT count(*) FROM agents a WHERE a.run = r.id)," \
	" (SELECT coalesce(sum(a.tokens_in), 0) FROM agents a" \
	"  WHERE a.run = r.id)" \
	" + (SELECT coalesce(sum(n.summary_in), 0) FROM memory_nodes n" \
	"  WHERE n.run = r.id)," \
	" (SELECT coalesce(sum(a.tokens_out), 0) FROM agents a" \
	"  WHERE a.run = r.id)" \
	" + (SELECT coalesce(sum(n.summary_out), 0) FROM memory_nodes n" \
	"  WHERE n.run = r.id)" \
	", r.cow_mode, r.cow_dir, r.cow_state, coalesce(r.continues, 0)," \
	" (SELECT group_concat(c.id, ', ') FROM runs c" \
	"  WHERE c.continues = r.id)" \
	" FROM runs r "

/*
 * Runs "of a workspace" W: those whose workspace is W or contains W, so
 * `warren runs` in a subdirectory of a project shows the project's runs.
 * ?1 is W, or NULL for every run. r.workspace is a realpath, so a
 * component-wise prefix test is a textual one ending at a '/'.
 */
#define RUN_IN_WORKSPACE \
	"(?1 IS NULL OR r.workspace = ?1 OR r.workspace = '/' OR" \
	" substr(?1, 1, length(r.workspace) + 1) = r.workspace || '/') "

#define EVENT_COLUMNS \
	"SELECT id, time_ms, path, type, detail FROM events "

#define AGENT_COLUMNS \
	"SELECT a.id, a.run, coalesce(n.id, 0), coalesce(a.parent, 0)," \
	" a.path, a.depth, a.profile, a.task, a.call_id, a.inherit_context," \
	" a.pid, a.status, a.result, a.exit_reason, a.tokens_in," \
	" a.tokens_out, a.created_ms, a.started_ms, a.ended_ms," \
	" (SELECT count(*) FROM messages m WHERE m.node = n.id), n.summary," \
	" a.tool_filter" \
	" FROM agents a LEFT JOIN memory_nodes n ON n.agent = a.id" \
	" WHERE a.run = ?"

static int
store_prepare(struct store *st, const char *sql, sqlite3_stmt **s)
{
	int	rc;

	if (store_check_owner(st) == -1)
		return -1;
	if ((rc = sqlite3_prepare_v2(st->db, sql, -1, s, NULL)) != SQLITE_OK)
		return store_setdberr(st, rc, "preparing a query");
	return 0;
}

/* One row of s into elem; 0, or -1 (out of memory, nothing kept). */
typedef int store_query_row(sqlite3_stmt *s, void *elem);

/*
 * Step s to its end, each row into a new element of sz bytes at the end
 * of *vp (empty at first: NULL, *np 0) by row; then finalize it. 0, or
 * -1 with st's error: STORE_ENOMEM (no memory, or a row that could not
 * be copied) or the failed step's, naming what (the rows read). Either
 * way the rows read are in *vp, *np of them, for the caller to free.
 */
static int
store_query_rows(struct store *st, sqlite3_stmt *s, void **vp, size_t *np,
    size_t sz, store_query_row *row, const char *what)
{
	char	*v = NULL, *nv;
	size_t	 n = 0, cap = 0;
	int	 rc;

	while ((rc = sqlite3_step(s)) == SQLITE_ROW) {
		if (n == cap) {
			cap = cap == 0 ? 16 : cap * 2;
			if ((nv = reallocarray(v, cap, sz)) == NULL)
				break;
			v = nv;
		}
		if (row(s, v + n * sz) == -1)
			break;
		n++;
	}
	sqlite3_finalize(s);
	*vp = v;
	*np = n;
	if (rc == SQLITE_ROW)
		return store_seterr(st, STORE_ENOMEM, "%s", what);
	if (rc != SQLITE_DONE)
		return store_setdberr(st, rc, what);
	return 0;
}

/* A zombie: dead, its parent has yet to reap it (a killed supervisor
 * waits as one until init gets to it). */
static int
store_pid_zombie(pid_t pid)
{
	char	 path[64], buf[512], *p;
	ssize_t	 n;
	int	 fd;

	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	if ((fd = open(path, O_RDONLY | O_CLOEXEC)) == -1)
		return 0;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return 0;
	buf[n] = '\0';
	/* "pid (comm) S ...": comm may hold spaces and ')'. */
	return (p = strrchr(buf, ')')) != NULL && (p[1] == ' ') &&
	    (p[2] == 'Z' || p[2] == 'X');
}

static int
store_pid_alive(int64_t pid)
{
	if (pid <= 0 || pid > INT32_MAX)
		return 0;
	if ((pid_t)pid == store_getpid())
		return 1;
	return (kill((pid_t)pid, 0) == 0 || errno == EPERM) &&
	    !store_pid_zombie((pid_t)pid);
}

static int
store_run_row(sqlite3_stmt *s, void *elem)
{
	struct store_run	*r = elem;
	int			 ok = 1;

	memset(r, 0, sizeof(*r));
	r->id = sqlite3_column_int64(s, 0);
	r->task = store_col_dup(s, 1, &ok);
	r->workspace = store_col_dup(s, 2, &ok);
	r->profile = store_col_dup(s, 3, &ok);
	r->model = store_col_dup(s, 4, &ok);
	r->params = store_col_dup(s, 5, &ok);
	r->status = store_run_status_parse((const char *)
	    sqlite3_column_text(s, 6));
	r->result = store_col_dup(s, 7, &ok);
	r->pid = sqlite3_column_int64(s, 8);
	r->resumes = sqlite3_column_int(s, 9);
	r->started_ms = sqlite3_column_int64(s, 10);
	r->ended_ms = sqlite3_column_int64(s, 11);
	r->nagents = (uint64_t)sqlite3_column_int64(s, 12);
	r->usage.input = (uint64_t)sqlite3_column_int64(s, 13);
	r->usage.output = (uint64_t)sqlite3_column_int64(s, 14);
	r->cow_mode = store_col_dup(s, 15, &ok);
	r->cow_dir = store_col_dup(s, 16, &ok);
	r->cow_state = store_col_dup(s, 17, &ok);
	r->continues = sqlite3_column_int64(s, 18);
	r->continued_by = store_col_dup(s, 19, &ok);
	r->alive = r->status == STORE_RUN_RUNNING && store_pid_alive(r->pid);
	if (!ok) {
		store_run_free(r);
		return -1;
	}
	return 0;
}

int
store_runs_list(struct store *st, const char *workspace, size_t limit,
    struct store_run **runsp, size_t *nrunsp)
{
	sqlite3_stmt	*s;
	void		*v;
	size_t		 n;

	*runsp = NULL;
	*nrunsp = 0;
	if (store_prepare(st, RUN_COLUMNS "WHERE " RUN_IN_WORKSPACE
	    "ORDER BY r.id DESC LIMIT ?2", &s) == -1)
		return -1;
	if (workspace != NULL)
		sqlite3_bind_text(s, 1, workspace, -1, SQLITE_STATIC);
	sqlite3_bind_int64(s, 2, limit == 0 ? -1 : (int64_t)limit);
	if (store_query_rows(st, s, &v, &n, sizeof(struct store_run),
	    store_run_row, "listing runs") == -1) {
		store_runs_free(v, n);
		return -1;
	}
	*runsp = v;
	*nrunsp = n;
	return 0;
}

int
store_run_get(struct store *st, int64_t run, struct store_run *out)
{
	sqlite3_stmt	*s;
	int		 rc;

	memset(out, 0, sizeof(*out));
	if (store_prepare(st, RUN_COLUMNS "WHERE r.id = ?", &s) == -1)
		return -1;
	sqlite3_bind_int64(s, 1, run);
	rc = sqlite3_step(s);
	if (rc == SQLITE_ROW && store_run_row(s, out) == -1) {
		sqlite3_finalize(s);
		return store_seterr(st, STORE_ENOMEM, "reading a run");
	}
	sqlite3_finalize(s);
	if (rc == SQLITE_DONE)
		return store_seterr(st, STORE_ENOTFOUND, "no run %lld (`warren"
		    " runs` lists them)", (long long)run);
	if (rc != SQLITE_ROW)
		return store_setdberr(st, rc, "reading a run");
	return 0;
}

int
store_run_latest(struct store *st, const char *workspace, int64_t *run)
{
	sqlite3_stmt	*s;
	int		 rc;

	if (store_prepare(st, "SELECT max(r.id) FROM runs r WHERE "
	    RUN_IN_WORKSPACE, &s) == -1)
		return -1;
	if (workspace != NULL)
		sqlite3_bind_text(s, 1, workspace, -1, SQLITE_STATIC);
	rc = sqlite3_step(s);
	*run = rc == SQLITE_ROW ? sqlite3_column_int64(s, 0) : 0;
	sqlite3_finalize(s);
	if (rc != SQLITE_ROW)
		return store_setdberr(st, rc, "finding the latest run");
	if (*run == 0 && workspace != NULL)
		return store_seterr(st, STORE_ENOTFOUND, "no run recorded yet "
		    "in workspace %s (`warren runs --all` lists every "
		    "workspace's runs)", workspace);
	if (*run == 0)
		return store_seterr(st, STORE_ENOTFOUND, "no run recorded yet");
	return 0;
}

int
store_run_layer_holder(struct store *st, int64_t run, int64_t *holder)
{
	sqlite3_stmt	*s;
	int		 rc;

	*holder = 0;
	if (store_prepare(st, "SELECT coalesce(max(o.id), 0) FROM runs r"
	    " JOIN runs o ON o.cow_dir = r.cow_dir AND o.id != r.id"
	    " WHERE r.id = ?1", &s) == -1)
		return -1;
	sqlite3_bind_int64(s, 1, run);
	rc = sqlite3_step(s);
	if (rc == SQLITE_ROW)
		*holder = sqlite3_column_int64(s, 0);
	sqlite3_finalize(s);
	if (rc != SQLITE_ROW)
		return store_setdberr(st, rc, "finding who holds a layer");
	return 0;
}

static int
store_agent_row(sqlite3_stmt *s, void *elem)
{
	struct store_agent	*a = elem;
	int			 ok = 1;

	memset(a, 0, sizeof(*a));
	a->id = sqlite3_column_int64(s, 0);
	a->run = sqlite3_column_int64(s, 1);
	a->node = sqlite3_column_int64(s, 2);
	a->parent = sqlite3_column_int64(s, 3);
	a->path = store_col_dup(s, 4, &ok);
	a->depth = sqlite3_column_int(s, 5);
	a->profile = store_col_dup(s, 6, &ok);
	a->task = store_col_dup(s, 7, &ok);
	a->call_id = store_col_dup(s, 8, &ok);
	a->inherit_context = sqlite3_column_int(s, 9);
	a->pid = sqlite3_column_int64(s, 10);
	a->status = store_agent_status_parse((const char *)
	    sqlite3_column_text(s, 11));
	a->result = store_col_dup(s, 12, &ok);
	a->exit_reason = store_col_dup(s, 13, &ok);
	a->usage.input = (uint64_t)sqlite3_column_int64(s, 14);
	a->usage.output = (uint64_t)sqlite3_column_int64(s, 15);
	a->created_ms = sqlite3_column_int64(s, 16);
	a->started_ms = sqlite3_column_int64(s, 17);
	a->ended_ms = sqlite3_column_int64(s, 18);
	a->nmessages = (uint64_t)sqlite3_column_int64(s, 19);
	a->summary = store_col_dup(s, 20, &ok);
	a->tool_filter = store_col_dup(s, 21, &ok);
	if (a->path == NULL)
		ok = 0;
	if (!ok) {
		store_agent_free(a);
		return -1;
	}
	return 0;
}

/* Compare agent paths component by component, numerically: "0.2" <
 * "0.10", and a parent before its children (pre-order). */
static int
store_path_cmp(const char *a, const char *b)
{
	unsigned long	x, y;
	char		*ea, *eb;

	for (;;) {
		x = strtoul(a, &ea, 10);
		y = strtoul(b, &eb, 10);
		if (x != y)
			return x < y ? -1 : 1;
		if (*ea == '\0' || *eb == '\0')
			return (*ea != '\0') - (*eb != '\0');
		a = ea + 1;
		b = eb + 1;
	}
}

static int
store_agent_preorder(const void *x, const void *y)
{
	return store_path_cmp(((const struct store_agent *)x)->path,
	    ((const struct store_agent *)y)->path);
}

static int
store_agent_bydepth(const void *x, const void *y)
{
	const struct store_agent	*a = x, *b = y;

	if (a->depth != b->depth)
		return a->depth < b->depth ? -1 : 1;
	return store_path_cmp(a->path, b->path);
}

int
store_agents_list(struct store *st, int64_t run, struct store_agent **agentsp,
    size_t *nagentsp)
{
	sqlite3_stmt	*s;
	void		*v;
	size_t		 n;

	*agentsp = NULL;
	*nagentsp = 0;
	if (store_prepare(st, AGENT_COLUMNS, &s) == -1)
		return -1;
	sqlite3_bind_int64(s, 1, run);
	if (store_query_rows(st, s, &v, &n, sizeof(struct store_agent),
	    store_agent_row, "listing agents") == -1) {
		store_agents_free(v, n);
		return -1;
	}
	if (n > 0)
		qsort(v, n, sizeof(struct store_agent), store_agent_preorder);
	*agentsp = v;
	*nagentsp = n;
	return 0;
}

static int
store_node_row(sqlite3_stmt *s, void *elem)
{
	struct store_node	*n = elem;
	const char		*kind;
	int		 ok = 1;

	memset(n, 0, sizeof(*n));
	n->id = sqlite3_column_int64(s, 0);
	n->agent = sqlite3_column_int64(s, 1);
	n->path = store_col_dup(s, 2, &ok);
	kind = (const char *)sqlite3_column_text(s, 3);
	n->kind = kind != NULL && strcmp(kind, "merge") == 0 ?
	    STORE_NODE_MERGE : STORE_NODE_AGENT;
	n->label = store_col_dup(s, 4, &ok);
	n->summary = store_col_dup(s, 5, &ok);
	n->summary_kind = store_summary_kind_parse((const char *)
	    sqlite3_column_text(s, 6));
	n->summary_usage.input = (uint64_t)sqlite3_column_int64(s, 7);
	n->summary_usage.output = (uint64_t)sqlite3_column_int64(s, 8);
	n->nmessages = (uint64_t)sqlite3_column_int64(s, 9);
	n->created_ms = sqlite3_column_int64(s, 10);
	n->profile = store_col_dup(s, 11, &ok);
	n->status = sqlite3_column_type(s, 12) == SQLITE_NULL ?
	    STORE_AGENT_PENDING : store_agent_status_parse((const char *)
	    sqlite3_column_text(s, 12));
	n->exit_reason = store_col_dup(s, 13, &ok);
	if (!ok) {
		free(n->path);
		free(n->label);
		free(n->summary);
		free(n->profile);
		free(n->exit_reason);
		return -1;
	}
	return 0;
}

static int
store_graph_nodes(struct store *st, int64_t run, struct store_graph *g)
{
	sqlite3_stmt	*s;
	void		*v;
	int		 rc;

	if (store_prepare(st, "SELECT n.id, coalesce(n.agent, 0), a.path,"
	    " n.kind, n.label, n.summary, n.summary_kind, n.summary_in,"
	    " n.summary_out, (SELECT count(*) FROM messages m"
	    " WHERE m.node = n.id), n.created_ms, a.profile, a.status,"
	    " a.exit_reason"
	    " FROM memory_nodes n LEFT JOIN agents a ON a.id = n.agent"
	    " WHERE n.run = ? ORDER BY n.id", &s) == -1)
		return -1;
	sqlite3_bind_int64(s, 1, run);
	rc = store_query_rows(st, s, &v, &g->nnodes, sizeof(struct store_node),
	    store_node_row, "loading the graph");
	g->nodes = v;
	return rc;
}

static int
store_edge_row(sqlite3_stmt *s, void *elem)
{
	struct store_edge	*e = elem;

	e->parent = sqlite3_column_int64(s, 0);
	e->child = sqlite3_column_int64(s, 1);
	return 0;
}

static int
store_graph_edges(struct store *st, int64_t run, struct store_graph *g)
{
	sqlite3_stmt	*s;
	void		*v;
	int		 rc;

	/* Within the run: a follow-up's edge from the run it continues is
	 * not one of its graph's. */
	if (store_prepare(st, "SELECT e.parent, e.child FROM memory_edges e"
	    " JOIN memory_nodes n ON n.id = e.child"
	    " JOIN memory_nodes p ON p.id = e.parent AND p.run = n.run"
	    " WHERE n.run = ?"
	    " ORDER BY e.child, e.parent", &s) == -1)
		return -1;
	sqlite3_bind_int64(s, 1, run);
	rc = store_query_rows(st, s, &v, &g->nedges, sizeof(struct store_edge),
	    store_edge_row, "loading the graph");
	g->edges = v;
	return rc;
}

int
store_graph_load(struct store *st, int64_t run, struct store_graph *g)
{
	struct store_run	r;
	int			rc;

	memset(g, 0, sizeof(*g));
	if (store_check_owner(st) == -1 || store_read_begin(st) == -1)
		return -1;
	rc = store_run_get(st, run, &r);
	store_run_free(&r);
	if (rc == 0)
		rc = store_graph_nodes(st, run, g);
	if (rc == 0)
		rc = store_graph_edges(st, run, g);
	store_read_end(st);
	if (rc == -1)
		store_graph_free(g);
	return rc;
}

/* A row of EVENT_COLUMNS. */
static int
store_event_row(sqlite3_stmt *s, void *elem)
{
	struct store_event	*e = elem;
	int			 ok = 1;

	e->id = sqlite3_column_int64(s, 0);
	e->time_ms = sqlite3_column_int64(s, 1);
	e->path = store_col_dup(s, 2, &ok);
	e->type = store_col_dup(s, 3, &ok);
	e->detail = store_col_dup(s, 4, &ok);
	if (ok)
		return 0;
	store_event_free(e);
	return -1;
}

int
store_events_list(struct store *st, int64_t run, struct store_event **evp,
    size_t *nevp)
{
	sqlite3_stmt	*s;
	void		*v;
	size_t		 n;

	*evp = NULL;
	*nevp = 0;
	if (store_prepare(st, EVENT_COLUMNS "WHERE run = ? ORDER BY id",
	    &s) == -1)
		return -1;
	sqlite3_bind_int64(s, 1, run);
	if (store_query_rows(st, s, &v, &n, sizeof(struct store_event),
	    store_event_row, "listing events") == -1) {
		store_events_free(v, n);
		return -1;
	}
	*evp = v;
	*nevp = n;
	return 0;
}

struct store_event_last_arg {
	int64_t			 run;
	const char		*type;
	struct store_event	*ev;
};

static int	store_event_last_on(struct store *, void *);

int
store_event_last(struct store *st, int64_t run, const char *type,
    struct store_event *ev)
{
	struct store_event_last_arg	a = { run, type, ev };

	return store_call(st, store_event_last_on, &a);
}

static int
store_event_last_on(struct store *st, void *arg)
{
	struct store_event_last_arg	*a = arg;
	struct store_event		*ev = a->ev;
	const char			*type = a->type;
	int64_t				 run = a->run;
	sqlite3_stmt			*s;
	int				 rc, ok = 1;

	memset(ev, 0, sizeof(*ev));
	if (store_prepare(st, EVENT_COLUMNS "WHERE run = ? AND type = ?"
	    " ORDER BY id DESC LIMIT 1", &s) == -1)
		return -1;
	sqlite3_bind_int64(s, 1, run);
	sqlite3_bind_text(s, 2, type, -1, SQLITE_STATIC);
	if ((rc = sqlite3_step(s)) == SQLITE_ROW)
		ok = store_event_row(s, ev) == 0;
	sqlite3_finalize(s);
	if (rc == SQLITE_DONE)
		return store_seterr(st, STORE_ENOTFOUND, "run %lld has no %s "
		    "event", (long long)run, type);
	if (rc != SQLITE_ROW || !ok) {
		store_event_free(ev);
		if (!ok)
			return store_seterr(st, STORE_ENOMEM, "reading an event");
		return store_setdberr(st, rc, "reading an event");
	}
	return 0;
}

/* Is call id answered by a tool message at or after index from? */
static int
store_plan_answered(const struct msg_list *l, size_t from, const char *id)
{
	size_t	k;

	if (id == NULL)
		return 0;
	for (k = from; k < l->n; k++)
		if (l->v[k].role == MSG_TOOL && l->v[k].call_id != NULL &&
		    strcmp(l->v[k].call_id, id) == 0)
			return 1;
	return 0;
}

/* Copy the calls of the last assistant message that no tool message
 * answers: they were in flight when the supervisor died. */
static int
store_plan_pending(struct store_plan_agent *pa)
{
	struct msg_list	*l = &pa->messages;
	struct msg	 tmp;
	struct msg_call	*c;
	size_t		 last, i;

	for (last = l->n; last > 0; last--)
		if (l->v[last - 1].role == MSG_ASSISTANT)
			break;
	if (last == 0)
		return 0;
	memset(&tmp, 0, sizeof(tmp));
	for (i = 0; i < l->v[last - 1].ncalls; i++) {
		c = &l->v[last - 1].calls[i];
		if (store_plan_answered(l, last, c->id))
			continue;
		if (msg_add_call(&tmp, c->id, c->name, c->args) == -1) {
			msg_free(&tmp);
			return -1;
		}
	}
	pa->pending = tmp.calls;
	pa->npending = tmp.ncalls;
	return 0;
}

int
store_resume_plan(struct store *st, int64_t run, struct store_plan *plan)
{
	struct store_agent	*agents = NULL;
	size_t			 n = 0, i;
	int			 rc = -1;

	memset(plan, 0, sizeof(*plan));
	if (store_check_owner(st) == -1 || store_read_begin(st) == -1)
		return -1;
	if (store_run_get(st, run, &plan->run) == -1 ||
	    store_agents_list(st, run, &agents, &n) == -1)
		goto out;
	if (n > 0)
		qsort(agents, n, sizeof(*agents), store_agent_bydepth);
	if (n > 0 && (plan->agents = calloc(n, sizeof(*plan->agents))) ==
	    NULL) {
		store_seterr(st, STORE_ENOMEM, "building a resume plan");
		goto out;
	}
	for (i = 0; i < n; i++) {
		plan->agents[i].agent = agents[i];
		memset(&agents[i], 0, sizeof(agents[i]));
		plan->nagents++;
		msg_list_init(&plan->agents[i].messages);
		plan->agents[i].finished =
		    plan->agents[i].agent.status == STORE_AGENT_DONE ||
		    plan->agents[i].agent.status == STORE_AGENT_FAILED;
		if (plan->agents[i].finished)
			continue;
		if (store_msg_load(st, plan->agents[i].agent.node,
		    &plan->agents[i].messages, NULL) == -1)
			goto out;
		if (store_plan_pending(&plan->agents[i]) == -1) {
			store_seterr(st, STORE_ENOMEM, "building a resume plan");
			goto out;
		}
	}
	rc = 0;
out:
	store_read_end(st);
	store_agents_free(agents, n);
	if (rc == -1)
		store_plan_free(plan);
	return rc;
}

void
store_run_free(struct store_run *r)
{
	if (r == NULL)
		return;
	free(r->task);
	free(r->workspace);
	free(r->profile);
	free(r->model);
	free(r->params);
	free(r->result);
	free(r->cow_mode);
	free(r->cow_dir);
	free(r->cow_state);
	free(r->continued_by);
	memset(r, 0, sizeof(*r));
}

void
store_runs_free(struct store_run *v, size_t n)
{
	size_t	i;

	for (i = 0; i < n; i++)
		store_run_free(&v[i]);
	free(v);
}

static void
store_agent_free(struct store_agent *a)
{
	if (a == NULL)
		return;
	free(a->path);
	free(a->profile);
	free(a->task);
	free(a->call_id);
	free(a->tool_filter);
	free(a->result);
	free(a->exit_reason);
	free(a->summary);
	memset(a, 0, sizeof(*a));
}

void
store_agents_free(struct store_agent *v, size_t n)
{
	size_t	i;

	for (i = 0; i < n; i++)
		store_agent_free(&v[i]);
	free(v);
}

void
store_graph_free(struct store_graph *g)
{
	size_t	i;

	if (g == NULL)
		return;
	for (i = 0; i < g->nnodes; i++) {
		free(g->nodes[i].path);
		free(g->nodes[i].label);
		free(g->nodes[i].summary);
		free(g->nodes[i].profile);
		free(g->nodes[i].exit_reason);
	}
	free(g->nodes);
	free(g->edges);
	memset(g, 0, sizeof(*g));
}

void
store_events_free(struct store_event *v, size_t n)
{
	size_t	i;

	for (i = 0; i < n; i++)
		store_event_free(&v[i]);
	free(v);
}

void
store_event_free(struct store_event *ev)
{
	free(ev->path);
	free(ev->type);
	free(ev->detail);
	memset(ev, 0, sizeof(*ev));
}

void
store_plan_free(struct store_plan *p)
{
	size_t	i, j;

	if (p == NULL)
		return;
	store_run_free(&p->run);
	for (i = 0; i < p->nagents; i++) {
		store_agent_free(&p->agents[i].agent);
		msg_list_free(&p->agents[i].messages);
		for (j = 0; j < p->agents[i].npending; j++) {
			free(p->agents[i].pending[j].id);
			free(p->agents[i].pending[j].name);
			free(p->agents[i].pending[j].args);
		}
		free(p->agents[i].pending);
	}
	free(p->agents);
	memset(p, 0, sizeof(*p));
}

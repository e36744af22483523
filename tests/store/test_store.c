/*
 * Unit tests of the store: schema and migration, message round trips,
 * the memory graph (cycles, merges, context order), batching, the resume
 * plan and the errors a user meets (corrupt, foreign, newer, read-only).
 */
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/wait.h>

#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>
#include <sqlite3.h>

#include "common/msg.h"
#include "store/store.h"
#include "store/store_testapi.h"
#include "store/store_int.h"
#include "tests/store/store_test.h"
#include "tests/test_wait.h"

struct fx {
	struct store_tdir	 t;
	struct store		*st;
	int64_t			 run;
};

static int
setup(void **state)
{
	struct fx			*fx;
	char				 err[STORE_ERRMSG_MAX];
	struct store_run_params		 p = { .task = "the task",
	    .workspace = "/w", .profile = "general", .model = "m",
	    .params = "{\"max_depth\":3}" };

	fx = calloc(1, sizeof(*fx));
	store_tdir_make(&fx->t);
	fx->st = store_open(fx->t.db, STORE_CREATE, err, sizeof(err));
	if (fx->st == NULL)
		fail_msg("%s", err);
	assert_int_equal(store_run_begin(fx->st, &p, &fx->run), 0);
	*state = fx;
	return 0;
}

static int64_t	count(struct store *, const char *);

static int
teardown(void **state)
{
	struct fx	*fx = *state;

	/* Whatever the test did, every REFERENCES of the schema holds. */
	if (fx->st != NULL) {
		assert_int_equal(store_flush(fx->st), 0);
		assert_int_equal(count(fx->st, "SELECT count(*) FROM"
		    " pragma_foreign_key_check"), 0);
	}
	store_close(fx->st);
	store_tdir_remove(&fx->t);
	free(fx);
	return 0;
}

static int64_t
add_agent(struct fx *fx, const char *path, const char *call_id, int64_t *agent)
{
	struct store_agent_new	a = { .path = path, .profile = "explore",
	    .task = path, .call_id = call_id };
	int64_t			id, node;

	if (store_agent_add(fx->st, fx->run, &a, &id, &node) == -1)
		fail_msg("%s", store_errmsg(fx->st));
	if (agent != NULL)
		*agent = id;
	return node;
}

static void
add_text(struct fx *fx, int64_t node, enum msg_role role, const char *text)
{
	struct msg	m = { .role = role, .text = (char *)(uintptr_t)text };

	if (store_msg_append(fx->st, node, &m, NULL) == -1)
		fail_msg("%s", store_errmsg(fx->st));
}

static int64_t
count(struct store *st, const char *sql)
{
	sqlite3_stmt	*s;
	int64_t		 n = -1;

	assert_int_equal(sqlite3_prepare_v2(st->db, sql, -1, &s, NULL),
	    SQLITE_OK);
	if (sqlite3_step(s) == SQLITE_ROW)
		n = sqlite3_column_int64(s, 0);
	sqlite3_finalize(s);
	return n;
}

static void
assert_str_eq_null(const char *a, const char *b)
{
	if (a == NULL || b == NULL)
		assert_ptr_equal(a, b);
	else
		assert_string_equal(a, b);
}

static void
assert_msg_equal(const struct msg *a, const struct msg *b)
{
	size_t	i;

	assert_int_equal(a->role, b->role);
	assert_str_eq_null(a->text, b->text);
	assert_str_eq_null(a->call_id, b->call_id);
	assert_str_eq_null(a->name, b->name);
	assert_int_equal(a->is_error != 0, b->is_error != 0);
	assert_int_equal(a->ncalls, b->ncalls);
	for (i = 0; i < a->ncalls; i++) {
		assert_str_eq_null(a->calls[i].id, b->calls[i].id);
		assert_str_eq_null(a->calls[i].name, b->calls[i].name);
		assert_str_eq_null(a->calls[i].args, b->calls[i].args);
	}
}

static void
test_schema_created(void **state)
{
	struct fx	*fx = *state;

	assert_int_equal(count(fx->st, "PRAGMA user_version"), STORE_SCHEMA_VERSION);
	assert_int_equal(count(fx->st, "PRAGMA application_id"),
	    STORE_APPLICATION_ID);
	assert_int_equal(count(fx->st, "SELECT count(*) FROM sqlite_master"
	    " WHERE type = 'table' AND name IN ('runs', 'agents',"
	    " 'memory_nodes', 'memory_edges', 'messages', 'message_calls',"
	    " 'events')"), 7);
	assert_int_equal(count(fx->st, "SELECT count(*) FROM"
	    " pragma_journal_mode WHERE journal_mode = 'wal'"), 1);
	/* Reopening an up-to-date file changes nothing. */
	store_close(fx->st);
	fx->st = store_open(fx->t.db, 0, NULL, 0);
	assert_non_null(fx->st);
	assert_int_equal(count(fx->st, "PRAGMA user_version"), STORE_SCHEMA_VERSION);
}

/* A version 1 file with data (tool calls as JSON) is upgraded whole. */
static void
test_migrate_v1(void **state)
{
	struct fx		*fx = *state;
	struct store_tdir	 t;
	struct msg_list		 l;
	struct store_agent	*agents;
	struct store_graph	 g;
	struct store_run	 r;
	sqlite3			*db;
	char			*e = NULL, err[STORE_ERRMSG_MAX];
	size_t			 n;

	(void)fx;
	store_tdir_make(&t);
	mkdir(t.dir, 0700);
	snprintf(t.db, sizeof(t.db), "%s/old.db", t.dir);
	assert_int_equal(sqlite3_open(t.db, &db), SQLITE_OK);
	assert_int_equal(store_schema_create(db, 1, &e), 0);
	assert_int_equal(sqlite3_exec(db,
	    "INSERT INTO runs (id, task, status, started_ms)"
	    " VALUES (1, 'old task', 'done', 1000);"
	    "INSERT INTO agents (id, run, path, depth, task, status, result,"
	    " tokens_in, tokens_out, created_ms)"
	    " VALUES (1, 1, '0', 0, 'old task', 'done', 'it worked', 10, 5, 1);"
	    "INSERT INTO agents (id, run, parent, path, depth, task, status,"
	    " created_ms) VALUES (2, 1, 1, '0.1', 1, 'child', 'running', 2);"
	    "INSERT INTO memory_nodes (id, run, agent, kind, label, summary,"
	    " summary_kind, created_ms) VALUES (1, 1, 1, 'agent', 'old task',"
	    " 'sum', 'result', 1), (2, 1, 2, 'agent', 'child', NULL, 'none', 2);"
	    "INSERT INTO memory_edges VALUES (1, 2);"
	    "INSERT INTO messages (node, seq, role, text, created_ms)"
	    " VALUES (2, 1, 'user', 'do it', 3);"
	    "INSERT INTO messages (node, seq, role, text, calls, created_ms)"
	    " VALUES (2, 2, 'assistant', NULL, '[{\"id\":\"c1\",\"name\":"
	    "\"read\",\"args\":\"{\\\"path\\\":\\\"a \\\\\\\"b\\\\\\\"\\\"}\"},"
	    "{\"id\":\"c2\",\"name\":\"grep\",\"args\":{\"q\":1}}]', 4);"
	    "INSERT INTO messages (node, seq, role, text, call_id, name,"
	    " is_error, created_ms) VALUES (2, 3, 'tool', 'contents', 'c1',"
	    " 'read', 1, 5);"
	    "INSERT INTO events (run, time_ms, type) VALUES (1, 6, 'spawn');",
	    NULL, NULL, &e), SQLITE_OK);
	sqlite3_close(db);
	free(e);

	struct store *st = store_open(t.db, 0, err, sizeof(err));
	if (st == NULL)
		fail_msg("%s", err);
	assert_int_equal(count(st, "PRAGMA user_version"), STORE_SCHEMA_VERSION);
	assert_int_equal(store_run_get(st, 1, &r), 0);
	assert_string_equal(r.task, "old task");
	assert_int_equal(r.status, STORE_RUN_DONE);
	assert_int_equal(r.resumes, 0);
	assert_int_equal(r.nagents, 2);
	assert_int_equal(r.usage.input, 10);
	store_run_free(&r);
	assert_int_equal(store_agents_list(st, 1, &agents, &n), 0);
	assert_int_equal(n, 2);
	assert_string_equal(agents[0].result, "it worked");
	assert_string_equal(agents[0].summary, "sum");
	assert_null(agents[1].call_id);
	assert_int_equal(agents[1].nmessages, 3);
	store_agents_free(agents, n);
	msg_list_init(&l);
	assert_int_equal(store_node_messages(st, 2, &l, NULL), 0);
	assert_int_equal(l.n, 3);
	assert_int_equal(l.v[1].role, MSG_ASSISTANT);
	assert_null(l.v[1].text);
	assert_int_equal(l.v[1].ncalls, 2);
	assert_string_equal(l.v[1].calls[0].id, "c1");
	assert_string_equal(l.v[1].calls[0].name, "read");
	assert_string_equal(l.v[1].calls[0].args, "{\"path\":\"a \\\"b\\\"\"}");
	assert_string_equal(l.v[1].calls[1].args, "{\"q\":1}");
	assert_string_equal(l.v[2].call_id, "c1");
	assert_true(l.v[2].is_error);
	msg_list_free(&l);
	assert_int_equal(store_graph_load(st, 1, &g), 0);
	assert_int_equal(g.nnodes, 2);
	assert_int_equal(g.nedges, 1);
	store_graph_free(&g);
	/* The upgraded file takes new writes with the v2 columns. */
	{
		struct store_agent_new	a = { .path = "0.2", .task = "new",
		    .call_id = "c9" };
		int64_t			id, node;

		assert_int_equal(store_agent_add(st, 1, &a, &id, &node), 0);
		assert_int_equal(store_flush(st), 0);
	}
	store_close(st);
	store_tdir_remove(&t);
}

/* A migration that fails leaves the file at its old version, data intact. */
static void
test_migrate_fails_whole(void **state)
{
	struct fx		*fx = *state;
	struct store_tdir	 t;
	struct store		*st;
	sqlite3			*db;
	char			*e = NULL, err[STORE_ERRMSG_MAX];
	sqlite3_stmt		*s;

	(void)fx;
	store_tdir_make(&t);
	snprintf(t.db, sizeof(t.db), "%s/old.db", t.dir);
	assert_int_equal(sqlite3_open(t.db, &db), SQLITE_OK);
	assert_int_equal(store_schema_create(db, 1, &e), 0);
	/* A table in the way of version 2's message_calls. */
	assert_int_equal(sqlite3_exec(db,
	    "INSERT INTO runs (task, started_ms) VALUES ('keep me', 1);"
	    "CREATE TABLE message_calls (x);", NULL, NULL, &e), SQLITE_OK);
	sqlite3_close(db);
	st = store_open(t.db, 0, err, sizeof(err));
	assert_null(st);
	assert_non_null(strstr(err, "upgrading the schema"));
	assert_non_null(strstr(err, t.db));
	assert_int_equal(sqlite3_open(t.db, &db), SQLITE_OK);
	assert_int_equal(sqlite3_prepare_v2(db, "SELECT (SELECT user_version"
	    " FROM pragma_user_version), (SELECT task FROM runs),"
	    " (SELECT count(*) FROM pragma_table_info('agents')"
	    " WHERE name = 'call_id')", -1, &s, NULL), SQLITE_OK);
	assert_int_equal(sqlite3_step(s), SQLITE_ROW);
	assert_int_equal(sqlite3_column_int(s, 0), 1);
	assert_string_equal((const char *)sqlite3_column_text(s, 1), "keep me");
	assert_int_equal(sqlite3_column_int(s, 2), 0);
	sqlite3_finalize(s);
	sqlite3_close(db);
	free(e);
	store_tdir_remove(&t);
}

static void
test_msg_roundtrip(void **state)
{
	struct fx		*fx = *state;
	struct msg		 in[5];
	struct msg_list		 out;
	struct msg_usage	 u = { 100, 7 }, *usage;
	struct store_agent	*agents;
	int64_t			 node;
	size_t			 i, n;

	node = add_agent(fx, "0", NULL, NULL);
	memset(in, 0, sizeof(in));
	in[0].role = MSG_SYSTEM;
	in[0].text = strdup("you are \"warren\"\n\ttabs, \x1b[31m escapes");
	in[1].role = MSG_USER;
	in[1].text = strdup("");		/* empty is not NULL */
	in[2].role = MSG_ASSISTANT;
	assert_int_equal(msg_add_call(&in[2], "call_1", "read",
	    "{\"path\": \"\xff\xfe not utf-8\"}"), 0);
	assert_int_equal(msg_add_call(&in[2], "call_2", "bash", "not json {"),
	    0);
	in[3].role = MSG_TOOL;
	in[3].text = strdup("caf\xc3\xa9 \xe2\x82");
	in[3].call_id = strdup("call_1");
	in[3].name = strdup("read");
	in[3].is_error = 1;
	in[4].role = MSG_ASSISTANT;
	in[4].text = strdup("done");
	for (i = 0; i < 5; i++)
		assert_int_equal(store_msg_append(fx->st, node, &in[i],
		    i == 2 ? &u : NULL), 0);
	/* Read inside the open batch, then after a commit. */
	for (n = 0; n < 2; n++) {
		msg_list_init(&out);
		assert_int_equal(store_node_messages(fx->st, node, &out,
		    &usage), 0);
		assert_int_equal(out.n, 5);
		for (i = 0; i < 5; i++)
			assert_msg_equal(&in[i], &out.v[i]);
		assert_int_equal(usage[2].input, 100);
		assert_int_equal(usage[2].output, 7);
		assert_int_equal(usage[0].input, 0);
		free(usage);
		msg_list_free(&out);
		assert_int_equal(store_flush(fx->st), 0);
	}
	assert_int_equal(store_agents_list(fx->st, fx->run, &agents, &n), 0);
	assert_int_equal(agents[0].usage.input, 100);
	assert_int_equal(agents[0].usage.output, 7);
	assert_int_equal(agents[0].nmessages, 5);
	store_agents_free(agents, n);
	for (i = 0; i < 5; i++)
		msg_free(&in[i]);
	/* A bad message or an unknown node is refused, nothing written. */
	{
		struct msg	bad = { .role = (enum msg_role)9 };
		struct msg	ok = { .role = MSG_USER, .text = (char *)"x" };

		assert_int_equal(store_msg_append(fx->st, node, &bad, NULL), -1);
		assert_int_equal(store_errcode(fx->st), STORE_EINVAL);
		assert_int_equal(store_msg_append(fx->st, 999, &ok, NULL), -1);
		assert_int_equal(store_errcode(fx->st), STORE_ENOTFOUND);
		assert_int_equal(count(fx->st, "SELECT count(*) FROM messages"),
		    5);
	}
}

/* The longest agent path is STORE_PATH_MAX - 1 bytes ("0" and 25
 * components of 9 digits, then ".123"), each of its ancestors added
 * first; one byte more (".1234") is refused, not cut. */
static void
test_path_max(void **state)
{
	struct fx		*fx = *state;
	struct store_agent_new	 a = { .task = "t" };
	struct store_agent	*v;
	char			 path[STORE_PATH_MAX + 8];
	size_t			 n, len = 1;
	int			 i;
	int64_t			 id, node;

	strlcpy(path, "0", sizeof(path));
	add_agent(fx, path, NULL, NULL);
	for (i = 0; i < 25; i++) {
		len += (size_t)snprintf(path + len, sizeof(path) - len,
		    ".123456789");
		add_agent(fx, path, NULL, NULL);
	}
	snprintf(path + len, sizeof(path) - len, ".123");
	assert_int_equal(strlen(path), STORE_PATH_MAX - 1);
	add_agent(fx, path, NULL, NULL);
	snprintf(path + len, sizeof(path) - len, ".1234");
	assert_int_equal(strlen(path), STORE_PATH_MAX);
	a.path = path;
	assert_int_equal(store_agent_add(fx->st, fx->run, &a, &id, &node), -1);
	assert_int_equal(store_errcode(fx->st), STORE_EINVAL);
	assert_int_equal(store_agents_list(fx->st, fx->run, &v, &n), 0);
	assert_int_equal(n, 27);
	path[len + 4] = '\0';
	for (i = 0; i < 27 && strcmp(v[i].path, path) != 0; i++)
		continue;
	if (i == 27)
		fail_msg("the agent of %zu bytes is not listed", strlen(path));
	store_agents_free(v, n);
}

static void
test_agents(void **state)
{
	struct fx		*fx = *state;
	struct store_agent_new	 a = { .task = "t" };
	struct store_agent	*v;
	int64_t			 id, node;
	size_t			 n;
	static const char	*bad[] = { "", "1", "0.", "0.0", "0.01", "0..1",
	    "00", "0.1a", "0.1234567890", "x" };

	for (n = 0; n < sizeof(bad) / sizeof(bad[0]); n++) {
		a.path = bad[n];
		assert_int_equal(store_agent_add(fx->st, fx->run, &a, &id,
		    &node), -1);
		assert_int_equal(store_errcode(fx->st), STORE_EINVAL);
	}
	a.path = "0.1";		/* no parent "0" yet */
	assert_int_equal(store_agent_add(fx->st, fx->run, &a, &id, &node), -1);
	assert_int_equal(store_errcode(fx->st), STORE_ENOTFOUND);
	add_agent(fx, "0", NULL, NULL);
	add_agent(fx, "0.2", "c2", NULL);
	add_agent(fx, "0.10", "c10", NULL);
	add_agent(fx, "0.1", "c1", &id);
	add_agent(fx, "0.1.1", NULL, NULL);
	a.path = "0.1";
	assert_int_equal(store_agent_add(fx->st, fx->run, &a, NULL, NULL), -1);
	assert_int_equal(store_errcode(fx->st), STORE_EEXIST);
	assert_int_equal(store_agent_add(fx->st, 4242, &a, NULL, NULL), -1);
	assert_int_equal(store_agent_started(fx->st, id, 1234), 0);
	assert_int_equal(store_agent_set_status(fx->st, id, STORE_AGENT_DONE,
	    "the result", "completed"), 0);
	assert_int_equal(store_agent_set_status(fx->st, 999, STORE_AGENT_DONE,
	    NULL, NULL), -1);
	assert_int_equal(store_errcode(fx->st), STORE_ENOTFOUND);
	assert_int_equal(store_agents_list(fx->st, fx->run, &v, &n), 0);
	assert_int_equal(n, 5);
	/* Pre-order, siblings numerically. */
	assert_string_equal(v[0].path, "0");
	assert_string_equal(v[1].path, "0.1");
	assert_string_equal(v[2].path, "0.1.1");
	assert_string_equal(v[3].path, "0.2");
	assert_string_equal(v[4].path, "0.10");
	assert_int_equal(v[1].status, STORE_AGENT_DONE);
	assert_int_equal(v[1].pid, 1234);
	assert_int_equal(v[1].depth, 1);
	assert_int_equal(v[2].depth, 2);
	assert_int_equal(v[2].parent, v[1].id);
	assert_string_equal(v[1].result, "the result");
	assert_string_equal(v[1].call_id, "c1");
	assert_true(v[1].ended_ms >= v[1].started_ms);
	store_agents_free(v, n);
	assert_int_equal(store_agent_find(fx->st, fx->run, "0.1.1", &id,
	    &node), 0);
	assert_true(id > 0 && node > 0);
	assert_int_equal(store_agent_find(fx->st, fx->run, "0.7", &id, &node),
	    -1);
	assert_int_equal(id, 0);
}

static void
test_cycle_refused(void **state)
{
	struct fx	*fx = *state;
	int64_t		 a, b, c, d, other, run2;
	struct store_graph g;
	struct store_run_params p = { .task = "other" };

	a = add_agent(fx, "0", NULL, NULL);
	b = add_agent(fx, "0.1", NULL, NULL);
	c = add_agent(fx, "0.1.1", NULL, NULL);
	d = add_agent(fx, "0.2", NULL, NULL);
	assert_int_equal(store_edge_add(fx->st, c, a), -1);
	assert_int_equal(store_errcode(fx->st), STORE_ECYCLE);
	assert_non_null(strstr(store_errmsg(fx->st), "ancestor"));
	assert_int_equal(store_edge_add(fx->st, b, a), -1);
	assert_int_equal(store_errcode(fx->st), STORE_ECYCLE);
	assert_int_equal(store_edge_add(fx->st, b, b), -1);
	assert_int_equal(store_errcode(fx->st), STORE_ECYCLE);
	assert_int_equal(store_edge_add(fx->st, a, b), -1);
	assert_int_equal(store_errcode(fx->st), STORE_EEXIST);
	/* A second parent is fine, and then closing a loop through it is not. */
	assert_int_equal(store_edge_add(fx->st, d, c), 0);
	assert_int_equal(store_edge_add(fx->st, c, d), -1);
	assert_int_equal(store_errcode(fx->st), STORE_ECYCLE);
	assert_int_equal(store_edge_add(fx->st, a, 999), -1);
	assert_int_equal(store_errcode(fx->st), STORE_ENOTFOUND);
	assert_int_equal(store_run_begin(fx->st, &p, &run2), 0);
	{
		struct store_agent_new	x = { .path = "0", .task = "x" };

		assert_int_equal(store_agent_add(fx->st, run2, &x, NULL,
		    &other), 0);
	}
	assert_int_equal(store_edge_add(fx->st, other, c), -1);
	assert_int_equal(store_errcode(fx->st), STORE_EINVAL);
	/* Refusals left the batch intact and the graph as it was. */
	assert_int_equal(store_flush(fx->st), 0);
	assert_int_equal(store_graph_load(fx->st, fx->run, &g), 0);
	assert_int_equal(g.nnodes, 4);
	assert_int_equal(g.nedges, 4);	/* a-b, b-c, a-d, d-c */
	store_graph_free(&g);
}

static void
test_merge(void **state)
{
	struct fx		*fx = *state;
	int64_t			 root, k[3], m, after, dup[2];
	struct store_graph	 g;
	struct msg_list		 l;
	size_t			 i, parents = 0;

	root = add_agent(fx, "0", NULL, NULL);
	k[0] = add_agent(fx, "0.1", NULL, NULL);
	k[1] = add_agent(fx, "0.2", NULL, NULL);
	k[2] = add_agent(fx, "0.3", NULL, NULL);
	for (i = 0; i < 3; i++) {
		char	s[32];

		snprintf(s, sizeof(s), "found %zu", i + 1);
		assert_int_equal(store_node_set_summary(fx->st, k[i], s,
		    STORE_SUMMARY_RESULT, NULL), 0);
	}
	assert_int_equal(store_node_merge(fx->st, fx->run, k, 3,
	    "explorations", &m), 0);
	dup[0] = dup[1] = k[0];
	assert_int_equal(store_node_merge(fx->st, fx->run, dup, 2, "x", NULL),
	    -1);
	assert_int_equal(store_errcode(fx->st), STORE_EINVAL);
	assert_int_equal(store_node_merge(fx->st, fx->run, k, 0, "x", NULL),
	    -1);
	/* The merge is a node like any other: it can be a parent, not a child
	 * of its own descendants. */
	assert_int_equal(store_edge_add(fx->st, m, k[0]), -1);
	assert_int_equal(store_errcode(fx->st), STORE_ECYCLE);
	/* Found by its exact set of parents, in any order; not by a subset,
	 * a superset or another node's parents. */
	{
		int64_t	 rev[3] = { k[2], k[0], k[1] }, found;
		char	*sum;

		assert_int_equal(store_merge_find(fx->st, rev, 3, &found), 1);
		assert_true(found == m);
		assert_int_equal(store_merge_find(fx->st, k, 2, &found), 0);
		assert_true(found == 0);
		rev[2] = root;
		assert_int_equal(store_merge_find(fx->st, rev, 3, &found), 0);
		assert_int_equal(store_merge_find(fx->st, &root, 1, &found), 0);
		assert_int_equal(store_node_summary(fx->st, k[1], &sum), 0);
		assert_string_equal(sum, "found 2");
		free(sum);
		assert_int_equal(store_node_summary(fx->st, m, &sum), 0);
		assert_null(sum);
		assert_int_equal(store_node_summary(fx->st, m + 1000, &sum), -1);
		assert_int_equal(store_errcode(fx->st), STORE_ENOTFOUND);
	}
	assert_int_equal(store_graph_load(fx->st, fx->run, &g), 0);
	assert_int_equal(g.nnodes, 5);
	for (i = 0; i < g.nedges; i++)
		if (g.edges[i].child == m)
			parents++;
	assert_int_equal(parents, 3);
	assert_int_equal(g.nodes[4].kind, STORE_NODE_MERGE);
	assert_null(g.nodes[4].path);
	assert_string_equal(g.nodes[4].label, "explorations");
	store_graph_free(&g);
	/* A node after the merge sees root's and each branch's memory once. */
	assert_int_equal(store_node_set_summary(fx->st, root, "root memory",
	    STORE_SUMMARY_LLM, NULL), 0);
	assert_int_equal(store_node_set_summary(fx->st, m, "all three",
	    STORE_SUMMARY_LLM, NULL), 0);
	assert_int_equal(store_node_merge(fx->st, fx->run, &m, 1, "synthesis",
	    &after), 0);
	msg_list_init(&l);
	assert_int_equal(store_context(fx->st, after, 0, &l), 0);
	assert_int_equal(l.n, 5);
	assert_non_null(strstr(l.v[0].text, "root memory"));
	assert_non_null(strstr(l.v[1].text, "found 1"));
	assert_non_null(strstr(l.v[2].text, "found 2"));
	assert_non_null(strstr(l.v[3].text, "found 3"));
	assert_non_null(strstr(l.v[4].text, "all three"));
	assert_non_null(strstr(l.v[4].text, "[merged memory: explorations]"));
	msg_list_free(&l);
	(void)root;
}

/*
 * Context order is topological, not creation order: here node 5 (created
 * last) is made a parent of node 2, so it must come before 2.
 */
static void
test_context_order(void **state)
{
	struct fx	*fx = *state;
	int64_t		 n0, n1, n11, n2, late, leaf;
	struct msg_list	 l;
	size_t		 i;
	static const char *want[] = { "s0", "s1", "late", "s11", "s2" };

	n0 = add_agent(fx, "0", NULL, NULL);
	n1 = add_agent(fx, "0.1", NULL, NULL);
	n11 = add_agent(fx, "0.1.1", NULL, NULL);
	n2 = add_agent(fx, "0.2", NULL, NULL);
	late = add_agent(fx, "0.3", NULL, NULL);
	assert_int_equal(store_edge_add(fx->st, late, n11), 0);
	assert_int_equal(store_edge_add(fx->st, n11, n2), 0);
	assert_int_equal(store_node_merge(fx->st, fx->run, &n2, 1, "leaf",
	    &leaf), 0);
	assert_int_equal(store_node_set_summary(fx->st, n0, "s0",
	    STORE_SUMMARY_RESULT, NULL), 0);
	assert_int_equal(store_node_set_summary(fx->st, n1, "s1",
	    STORE_SUMMARY_RESULT, NULL), 0);
	assert_int_equal(store_node_set_summary(fx->st, n11, "s11",
	    STORE_SUMMARY_RESULT, NULL), 0);
	assert_int_equal(store_node_set_summary(fx->st, n2, "s2",
	    STORE_SUMMARY_RESULT, NULL), 0);
	assert_int_equal(store_node_set_summary(fx->st, late, "late",
	    STORE_SUMMARY_RESULT, NULL), 0);
	add_text(fx, leaf, MSG_USER, "own 1");
	add_text(fx, leaf, MSG_ASSISTANT, "own 2");
	msg_list_init(&l);
	assert_int_equal(store_context(fx->st, leaf, 0, &l), 0);
	assert_int_equal(l.n, 7);
	for (i = 0; i < 5; i++) {
		char	needle[32];

		snprintf(needle, sizeof(needle), "]\n%s", want[i]);
		if (strstr(l.v[i].text, needle) == NULL)
			fail_msg("context[%zu] = %s, want %s", i, l.v[i].text,
			    want[i]);
		assert_int_equal(l.v[i].role, MSG_USER);
	}
	assert_string_equal(l.v[5].text, "own 1");
	assert_int_equal(l.v[6].role, MSG_ASSISTANT);
	msg_list_free(&l);

	/* Unsummarised ancestors are skipped, unless a direct parent's
	 * transcript is asked for (inherit_context). */
	assert_int_equal(store_node_set_summary(fx->st, n2, NULL,
	    STORE_SUMMARY_NONE, NULL), 0);
	add_text(fx, n2, MSG_SYSTEM, "parent system prompt");
	add_text(fx, n2, MSG_USER, "parent asked");
	msg_list_init(&l);
	assert_int_equal(store_context(fx->st, leaf, 0, &l), 0);
	assert_int_equal(l.n, 6);
	msg_list_free(&l);
	msg_list_init(&l);
	assert_int_equal(store_context(fx->st, leaf,
	    STORE_CTX_PARENT_MESSAGES, &l), 0);
	assert_int_equal(l.n, 7);
	assert_non_null(strstr(l.v[4].text, "context inherited from agent 0.2"));
	assert_non_null(strstr(l.v[4].text, "parent asked"));
	assert_null(strstr(l.v[4].text, "parent system prompt"));
	msg_list_free(&l);
	/* A root node's context is its own messages. */
	msg_list_init(&l);
	assert_int_equal(store_context(fx->st, n0, 0, &l), 0);
	assert_int_equal(l.n, 0);
	assert_int_equal(store_context(fx->st, 999, 0, &l), -1);
	assert_int_equal(store_errcode(fx->st), STORE_ENOTFOUND);
	msg_list_free(&l);
}

static void
test_summary_policy(void **state)
{
	struct fx			*fx = *state;
	struct store_summary_policy	 p = { 10, 100 };
	struct msg_list			 l;
	struct store_graph		 g;
	struct msg_usage		 u = { 50, 20 };
	struct store_run		 r;
	int64_t				 n;
	char				 big[200];

	n = add_agent(fx, "0", NULL, NULL);
	assert_int_equal(store_summary_needed(fx->st, n, "short", &p), 0);
	assert_int_equal(store_summary_needed(fx->st, n, "longer than ten",
	    &p), 1);
	memset(big, 'x', sizeof(big) - 1);
	big[sizeof(big) - 1] = '\0';
	add_text(fx, n, MSG_USER, big);
	assert_int_equal(store_summary_needed(fx->st, n, "short", &p), 1);
	assert_int_equal(store_summary_needed(fx->st, n, "short", NULL), 0);
	p.transcript_max = 0;
	assert_int_equal(store_summary_needed(fx->st, n, "short", &p), 0);
	msg_list_init(&l);
	assert_int_equal(store_summary_prompt(fx->st, n, "the result", &l), 0);
	assert_int_equal(l.n, 2);
	assert_int_equal(l.v[0].role, MSG_SYSTEM);
	assert_non_null(strstr(l.v[1].text, big));
	assert_non_null(strstr(l.v[1].text, "the result"));
	msg_list_free(&l);
	assert_int_equal(store_node_set_summary(fx->st, n, "short sum",
	    STORE_SUMMARY_LLM, &u), 0);
	assert_int_equal(store_graph_load(fx->st, fx->run, &g), 0);
	assert_string_equal(g.nodes[0].summary, "short sum");
	assert_int_equal(g.nodes[0].summary_kind, STORE_SUMMARY_LLM);
	assert_int_equal(g.nodes[0].summary_usage.input, 50);
	store_graph_free(&g);
	/* Summary tokens count toward the run's. */
	assert_int_equal(store_run_get(fx->st, fx->run, &r), 0);
	assert_int_equal(r.usage.input, 50);
	assert_int_equal(r.usage.output, 20);
	store_run_free(&r);
}

/* Another connection sees a batch only when it is committed; the cap
 * commits by itself. */
static void
test_batching(void **state)
{
	struct fx	*fx = *state;
	struct store	*rd;
	int64_t		 node;
	int		 i;

	assert_int_equal(store_flush(fx->st), 0);
	rd = store_open(fx->t.db, STORE_READ, NULL, 0);
	assert_non_null(rd);
	node = add_agent(fx, "0", NULL, NULL);
	for (i = 0; i < 10; i++)
		add_text(fx, node, MSG_USER, "m");
	assert_int_equal(store_pending(fx->st), 2 + 10);
	assert_int_equal(count(rd, "SELECT count(*) FROM messages"), 0);
	assert_int_equal(store_flush(fx->st), 0);
	assert_int_equal(store_pending(fx->st), 0);
	assert_int_equal(count(rd, "SELECT count(*) FROM messages"), 10);
	store_set_batch_max(fx->st, 5);
	for (i = 0; i < 4; i++)
		add_text(fx, node, MSG_USER, "m");
	assert_int_equal(count(rd, "SELECT count(*) FROM messages"), 10);
	add_text(fx, node, MSG_USER, "m");	/* the fifth row commits */
	assert_int_equal(store_pending(fx->st), 0);
	assert_int_equal(count(rd, "SELECT count(*) FROM messages"), 15);
	/* A reader cannot write. */
	assert_int_equal(store_event(rd, fx->run, NULL, "x", NULL), -1);
	assert_int_equal(store_errcode(rd), STORE_EREADONLY);
	store_close(rd);
}

static void
test_resume_plan(void **state)
{
	struct fx		*fx = *state;
	struct store_plan	 p;
	struct msg		 m;
	int64_t			 root, a1, n1, n2, a2;

	root = add_agent(fx, "0", NULL, NULL);
	n1 = add_agent(fx, "0.1", "d1", &a1);
	n2 = add_agent(fx, "0.2", "d2", &a2);
	add_text(fx, root, MSG_USER, "task");
	memset(&m, 0, sizeof(m));
	m.role = MSG_ASSISTANT;
	msg_add_call(&m, "d1", "delegate", "{}");
	msg_add_call(&m, "d2", "delegate", "{}");
	assert_int_equal(store_msg_append(fx->st, root, &m, NULL), 0);
	msg_free(&m);
	add_text(fx, n1, MSG_USER, "sub 1");
	assert_int_equal(store_agent_set_status(fx->st, a1, STORE_AGENT_DONE,
	    "r1", "completed"), 0);
	add_text(fx, n2, MSG_USER, "sub 2");
	memset(&m, 0, sizeof(m));
	m.role = MSG_ASSISTANT;
	msg_add_call(&m, "t1", "bash", "{\"cmd\":\"make\"}");
	msg_add_call(&m, "t2", "read", "{}");
	msg_add_call(&m, "t3", "grep", "{}");
	assert_int_equal(store_msg_append(fx->st, n2, &m, NULL), 0);
	msg_free(&m);
	memset(&m, 0, sizeof(m));
	m.role = MSG_TOOL;
	m.call_id = (char *)"t2";
	m.text = (char *)"answered";
	assert_int_equal(store_msg_append(fx->st, n2, &m, NULL), 0);
	assert_int_equal(store_agent_started(fx->st, a2, 77), 0);
	assert_int_equal(store_flush(fx->st), 0);

	assert_int_equal(store_resume_plan(fx->st, fx->run, &p), 0);
	assert_string_equal(p.run.params, "{\"max_depth\":3}");
	assert_string_equal(p.run.task, "the task");
	assert_int_equal(p.nagents, 3);
	assert_string_equal(p.agents[0].agent.path, "0");
	assert_false(p.agents[0].finished);
	assert_int_equal(p.agents[0].messages.n, 2);
	assert_int_equal(p.agents[0].npending, 2);
	assert_string_equal(p.agents[0].pending[1].id, "d2");
	assert_string_equal(p.agents[1].agent.path, "0.1");
	assert_true(p.agents[1].finished);
	assert_string_equal(p.agents[1].agent.result, "r1");
	assert_string_equal(p.agents[1].agent.call_id, "d1");
	assert_int_equal(p.agents[1].messages.n, 0);
	assert_false(p.agents[2].finished);
	assert_int_equal(p.agents[2].agent.status, STORE_AGENT_RUNNING);
	assert_int_equal(p.agents[2].messages.n, 3);
	assert_int_equal(p.agents[2].npending, 2);
	assert_string_equal(p.agents[2].pending[0].id, "t1");
	assert_string_equal(p.agents[2].pending[0].args, "{\"cmd\":\"make\"}");
	assert_string_equal(p.agents[2].pending[1].id, "t3");
	store_plan_free(&p);
	assert_int_equal(store_run_resumed(fx->st, fx->run), 0);
	assert_int_equal(store_run_end(fx->st, fx->run, STORE_RUN_DONE, "ok"),
	    0);
	assert_int_equal(store_resume_plan(fx->st, 4242, &p), -1);
	assert_int_equal(store_errcode(fx->st), STORE_ENOTFOUND);
	{
		struct store_run	r;

		assert_int_equal(store_run_get(fx->st, fx->run, &r), 0);
		assert_int_equal(r.resumes, 1);
		assert_int_equal(r.status, STORE_RUN_DONE);
		assert_true(r.ended_ms >= r.started_ms);
		store_run_free(&r);
	}
}

/* An operation that fails half-way never leaves half of itself in a
 * batch: the batch is rolled back, and the error says so. */
static void
test_half_operation(void **state)
{
	struct fx		*fx = *state;
	struct store_agent_new	 a = { .path = "0.1", .task = "t" };
	int64_t			 root;

	root = add_agent(fx, "0", NULL, NULL);
	assert_int_equal(store_flush(fx->st), 0);
	add_text(fx, root, MSG_USER, "pending");
	/* The third statement of store_agent_add (the edge) will fail. */
	assert_int_equal(sqlite3_exec(fx->st->db, "CREATE TEMP TRIGGER no_edge"
	    " BEFORE INSERT ON memory_edges BEGIN SELECT RAISE(ABORT,"
	    " 'injected'); END", NULL, NULL, NULL), SQLITE_OK);
	assert_int_equal(store_agent_add(fx->st, fx->run, &a, NULL, NULL), -1);
	assert_non_null(strstr(store_errmsg(fx->st), "injected"));
	assert_non_null(strstr(store_errmsg(fx->st), "rolled back"));
	assert_int_equal(store_pending(fx->st), 0);
	assert_int_equal(count(fx->st, "SELECT count(*) FROM agents"), 1);
	assert_int_equal(count(fx->st, "SELECT count(*) FROM memory_nodes"), 1);
	assert_int_equal(count(fx->st, "SELECT count(*) FROM messages"), 0);
	/* The lost batch is sticky: every later write is refused, so no
	 * later row can land without the lost ones before it. */
	assert_non_null(store_lost(fx->st));
	assert_non_null(strstr(store_lost(fx->st), "injected"));
	assert_non_null(strstr(store_lost(fx->st), "not committed"));
	assert_int_equal(store_agent_add(fx->st, fx->run, &a, NULL, NULL), -1);
	assert_non_null(strstr(store_errmsg(fx->st), "earlier write failed"));
	assert_non_null(strstr(store_lost(fx->st), "1 later writes refused"));
	assert_int_equal(store_flush(fx->st), 0);
	assert_int_equal(count(fx->st, "SELECT count(*) FROM memory_edges"), 0);
	/* Only the run's final status is still tried. */
	assert_int_equal(store_run_end(fx->st, fx->run, STORE_RUN_STORE_FAILED,
	    "lost"), 0);
	assert_int_equal(store_flush(fx->st), 0);
	assert_int_equal(count(fx->st, "SELECT count(*) FROM runs WHERE"
	    " status = 'store_failed'"), 1);
}

/* A logical refusal (a duplicate path) loses nothing: not sticky. */
static void
test_refusal_not_lost(void **state)
{
	struct fx		*fx = *state;
	struct store_agent_new	 a = { .path = "0", .task = "t" };

	(void)add_agent(fx, "0", NULL, NULL);
	assert_int_equal(store_agent_add(fx->st, fx->run, &a, NULL, NULL), -1);
	assert_int_equal(store_errcode(fx->st), STORE_EEXIST);
	assert_null(store_lost(fx->st));
	assert_int_equal(store_event(fx->st, fx->run, NULL, "x", "y"), 0);
	assert_int_equal(store_flush(fx->st), 0);
}

static void
test_events(void **state)
{
	struct fx		*fx = *state;
	struct store_event	*v;
	size_t			 n;

	assert_int_equal(store_event(fx->st, fx->run, "0.1", "spawn",
	    "{\"pid\":1}"), 0);
	assert_int_equal(store_event(fx->st, fx->run, NULL, "limit", NULL), 0);
	assert_int_equal(store_event(fx->st, 999, NULL, "x", NULL), -1);
	assert_int_equal(store_errcode(fx->st), STORE_ENOTFOUND);
	assert_int_equal(store_events_list(fx->st, fx->run, &v, &n), 0);
	assert_int_equal(n, 2);
	assert_string_equal(v[0].path, "0.1");
	assert_string_equal(v[0].type, "spawn");
	assert_null(v[1].path);
	store_events_free(v, n);
}

/* Write a file of bytes. */
static void
write_file(const char *path, const void *data, size_t len)
{
	int	fd;

	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	assert_true(fd >= 0);
	assert_int_equal(write(fd, data, len), (ssize_t)len);
	close(fd);
}

static void
expect_open_error(const char *path, int flags, enum store_err want,
    const char *needle)
{
	struct store	*st;
	char		 err[STORE_ERRMSG_MAX];

	err[0] = '\0';
	st = store_open(path, flags, err, sizeof(err));
	if (st != NULL) {
		store_close(st);
		fail_msg("%s opened, expected an error", path);
	}
	if (strstr(err, path) == NULL || strstr(err, needle) == NULL)
		fail_msg("error \"%s\" lacks \"%s\" or the path", err, needle);
	(void)want;
}

static void
test_corrupt_and_foreign(void **state)
{
	struct fx	*fx = *state;
	char		 path[1024], junk[8192];
	sqlite3		*db;
	int		 fd;

	(void)fx;
	/* Garbage. */
	snprintf(path, sizeof(path), "%s/junk.db", fx->t.dir);
	memset(junk, 'J', sizeof(junk));
	write_file(path, junk, sizeof(junk));
	expect_open_error(path, 0, STORE_ECORRUPT, "move it aside");
	expect_open_error(path, STORE_READ, STORE_ECORRUPT, "damaged");
	/* A warren file whose schema page was overwritten. */
	store_close(fx->st);
	fx->st = NULL;
	fd = open(fx->t.db, O_WRONLY);
	assert_true(fd >= 0);
	memset(junk, 0xa5, 3000);
	assert_int_equal(pwrite(fd, junk, 3000, 100), 3000);
	close(fd);
	expect_open_error(fx->t.db, 0, STORE_ECORRUPT, "damaged");
	/* Another program's database. */
	snprintf(path, sizeof(path), "%s/other.db", fx->t.dir);
	assert_int_equal(sqlite3_open(path, &db), SQLITE_OK);
	assert_int_equal(sqlite3_exec(db, "CREATE TABLE t (x)", NULL, NULL,
	    NULL), SQLITE_OK);
	sqlite3_close(db);
	expect_open_error(path, STORE_CREATE, STORE_ENOTWARREN,
	    "another program");
	/* Written by a newer warren. */
	snprintf(path, sizeof(path), "%s/newer.db", fx->t.dir);
	assert_int_equal(sqlite3_open(path, &db), SQLITE_OK);
	{
		char	*e = NULL;

		assert_int_equal(store_schema_create(db, STORE_SCHEMA_VERSION,
		    &e), 0);
	}
	assert_int_equal(sqlite3_exec(db, "PRAGMA user_version = 99", NULL,
	    NULL, NULL), SQLITE_OK);
	sqlite3_close(db);
	expect_open_error(path, 0, STORE_ENEWER, "newer warren");
	/* Missing file: readers say so, writers create it. */
	snprintf(path, sizeof(path), "%s/none.db", fx->t.dir);
	expect_open_error(path, STORE_READ, STORE_ENOTFOUND, "no such file");
	/* Directories are made as needed, private; not through a file. */
	snprintf(path, sizeof(path), "%s/nodir/x/none.db", fx->t.dir);
	{
		struct store	*st;
		struct stat	 sb;
		char		 err[STORE_ERRMSG_MAX];

		assert_non_null(st = store_open(path, STORE_CREATE, err,
		    sizeof(err)));
		store_close(st);
		snprintf(path, sizeof(path), "%s/nodir/x", fx->t.dir);
		assert_int_equal(stat(path, &sb), 0);
		assert_int_equal(sb.st_mode & 0777, 0700);
	}
	snprintf(path, sizeof(path), "%s/afile", fx->t.dir);
	close(open(path, O_WRONLY | O_CREAT, 0600));
	snprintf(path, sizeof(path), "%s/afile/x/y.db", fx->t.dir);
	expect_open_error(path, STORE_CREATE, STORE_EINVAL, "cannot reach");
	snprintf(path, sizeof(path), "%s", fx->t.dir);
	expect_open_error(path, 0, STORE_EINVAL, "not a regular file");
}

/* Open a read-only file for writing, as a user who cannot write it. */
static void
test_readonly(void **state)
{
	struct fx	*fx = *state;
	char		 err[STORE_ERRMSG_MAX], rodir[1024];
	struct store	*st;
	pid_t		 pid;
	int		 status;

	store_close(fx->st);
	fx->st = NULL;
	assert_int_equal(chmod(fx->t.db, 0444), 0);
	snprintf(rodir, sizeof(rodir), "%s/.warren", fx->t.dir);
	assert_int_equal(chmod(rodir, 0755), 0);
	assert_int_equal(chmod(fx->t.dir, 0755), 0);
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		/* root writes anything: become nobody to meet the permissions
		 * an ordinary user meets. */
		if (geteuid() == 0 && (setgroups(0, NULL) == -1 ||
		    setresgid(65534, 65534, 65534) == -1 ||
		    setresuid(65534, 65534, 65534) == -1))
			_exit(3);
		st = store_open(fx->t.db, 0, err, sizeof(err));
		if (st != NULL)
			_exit(1);
		if (strstr(err, fx->t.db) == NULL ||
		    strstr(err, "permissions") == NULL) {
			fprintf(stderr, "unexpected: %s\n", err);
			_exit(2);
		}
		/* Reading works, or (WAL needs its -shm file beside the
		 * database, in a directory we cannot write) says why. */
		st = store_open(fx->t.db, STORE_READ, err, sizeof(err));
		if (st == NULL && (strstr(err, fx->t.db) == NULL ||
		    strstr(err, "permissions") == NULL)) {
			fprintf(stderr, "read: %s\n", err);
			_exit(4);
		}
		store_close(st);
		_exit(0);
	}
	assert_true((status = test_waitpid(pid, 240,
	    "the child of test_readonly")) != -1);
	assert_true(WIFEXITED(status));
	assert_int_equal(WEXITSTATUS(status), 0);
	assert_int_equal(chmod(fx->t.db, 0644), 0);
}

/* A forked child must not use its parent's connection. */
static void
test_fork_refused(void **state)
{
	struct fx	*fx = *state;
	pid_t		 pid;
	int		 status;

	add_agent(fx, "0", NULL, NULL);
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		if (store_event(fx->st, fx->run, NULL, "x", NULL) != -1 ||
		    store_errcode(fx->st) != STORE_EFORK ||
		    store_flush(fx->st) != -1)
			_exit(1);
		store_close(fx->st);	/* frees memory, leaves the file */
		_exit(0);
	}
	assert_true((status = test_waitpid(pid, 240,
	    "the child of test_fork_refused")) != -1);
	assert_true(WIFEXITED(status));
	assert_int_equal(WEXITSTATUS(status), 0);
	assert_int_equal(store_flush(fx->st), 0);
	assert_int_equal(count(fx->st, "SELECT count(*) FROM agents"), 1);
}

/* A run's copy-on-write layer: recorded at its start, its state after. */
static void
test_cow_columns(void **state)
{
	struct fx			*fx = *state;
	struct store_run_params		 p = { .task = "t", .workspace = "/w",
	    .cow_mode = "overlay", .cow_dir = "/s/warren/cow/run-x" };
	struct store_run		 r;
	int64_t				 run;

	assert_int_equal(store_run_begin(fx->st, &p, &run), 0);
	assert_int_equal(store_run_get(fx->st, run, &r), 0);
	assert_string_equal(r.cow_mode, "overlay");
	assert_string_equal(r.cow_dir, "/s/warren/cow/run-x");
	assert_string_equal(r.cow_state, "pending");
	store_run_free(&r);
	assert_int_equal(store_run_cow_state(fx->st, run, "applied"), 0);
	assert_int_equal(store_run_get(fx->st, run, &r), 0);
	assert_string_equal(r.cow_state, "applied");
	store_run_free(&r);
	/* An in-place run has no layer, and no state to set. */
	assert_int_equal(store_run_get(fx->st, fx->run, &r), 0);
	assert_null(r.cow_mode);
	assert_null(r.cow_state);
	store_run_free(&r);
	assert_int_equal(store_run_cow_state(fx->st, fx->run, "applied"), -1);
	assert_int_equal(store_errcode(fx->st), STORE_ENOTFOUND);
}

/* A follow-up takes its run's layer over: that run's state "continued",
 * the holder found; a second follow-up of the same run is refused with
 * nothing written, and the store goes on. */
static void
test_cow_adopt(void **state)
{
	struct fx			*fx = *state;
	struct store_run_params		 p = { .task = "t", .workspace = "/w",
	    .cow_mode = "copy", .cow_dir = "/s/warren/cow/run-y" };
	struct store_run		 r;
	int64_t				 one, two, three, holder;

	assert_int_equal(store_run_begin(fx->st, &p, &one), 0);
	p.continues = p.adopts = one;
	assert_int_equal(store_run_begin(fx->st, &p, &two), 0);
	assert_int_equal(store_run_get(fx->st, one, &r), 0);
	assert_string_equal(r.cow_state, "continued");
	store_run_free(&r);
	assert_int_equal(store_run_layer_holder(fx->st, one, &holder), 0);
	assert_int_equal(holder, two);
	assert_int_equal(store_run_layer_holder(fx->st, fx->run, &holder), 0);
	assert_int_equal(holder, 0);
	/* An apply or discard of run one that read it pending before the
	 * follow-up took its layer over records nothing (it must then leave
	 * the layer, the holder's now, be). */
	assert_int_equal(store_run_cow_state(fx->st, one, "applied"), -1);
	assert_int_equal(store_errcode(fx->st), STORE_EEXIST);
	assert_non_null(strstr(store_errmsg(fx->st), "follow-up"));
	assert_int_equal(store_run_cow_state(fx->st, one, "discarded"), -1);
	assert_int_equal(store_run_get(fx->st, one, &r), 0);
	assert_string_equal(r.cow_state, "continued");
	store_run_free(&r);
	/* Taken: a second follow-up of run one does not get it. */
	assert_int_equal(store_run_begin(fx->st, &p, &three), -1);
	assert_int_equal(store_errcode(fx->st), STORE_EEXIST);
	assert_non_null(strstr(store_errmsg(fx->st), "no longer there"));
	assert_int_equal(count(fx->st, "SELECT count(*) FROM runs WHERE "
	    "cow_dir = '/s/warren/cow/run-y'"), 2);
	/* The holder's own follow-up takes it on. */
	p.continues = p.adopts = two;
	assert_int_equal(store_run_begin(fx->st, &p, &three), 0);
	assert_int_equal(store_run_layer_holder(fx->st, one, &holder), 0);
	assert_int_equal(holder, three);
	assert_int_equal(store_flush(fx->st), 0);
}

static void
test_path(void **state)
{
	char	out[64];

	(void)state;
	unsetenv("WARREN_DB");
	setenv("XDG_STATE_HOME", "/state", 1);
	assert_int_equal(store_path(out, sizeof(out), NULL), 0);
	assert_string_equal(out, "/state/warren/warren.db");
	/* Not absolute: ignored, as the XDG spec says. */
	setenv("XDG_STATE_HOME", "rel", 1);
	setenv("HOME", "/home/u", 1);
	assert_int_equal(store_path(out, sizeof(out), NULL), 0);
	assert_string_equal(out, "/home/u/.local/state/warren/warren.db");
	unsetenv("XDG_STATE_HOME");
	unsetenv("HOME");
	assert_int_equal(store_path(out, sizeof(out), NULL), -1);
	assert_int_equal(errno, ENOENT);
	setenv("WARREN_DB", "/env.db", 1);
	assert_int_equal(store_path(out, sizeof(out), NULL), 0);
	assert_string_equal(out, "/env.db");
	assert_int_equal(store_path(out, sizeof(out), "/x.db"), 0);
	assert_string_equal(out, "/x.db");
	unsetenv("WARREN_DB");
	setenv("XDG_STATE_HOME", "/a/long/state/directory", 1);
	assert_int_equal(store_path(out, 8, NULL), -1);
	assert_int_equal(errno, ENAMETOOLONG);
}

/* A run's pid in the database, then whether the store calls it alive. */
static int
alive_as(struct fx *fx, pid_t pid)
{
	struct store_run	 r;
	char			 sql[128];
	int			 alive;

	assert_int_equal(store_flush(fx->st), 0);
	snprintf(sql, sizeof(sql), "UPDATE runs SET pid = %d WHERE id = %lld",
	    (int)pid, (long long)fx->run);
	assert_int_equal(sqlite3_exec(fx->st->db, sql, NULL, NULL, NULL),
	    SQLITE_OK);
	assert_int_equal(store_run_get(fx->st, fx->run, &r), 0);
	alive = r.alive;
	store_run_free(&r);
	return alive;
}

/* A running run whose supervisor is a zombie (killed, not yet reaped by
 * a slow init) is not alive: `warren runs` says interrupted. */
static void
test_zombie_not_alive(void **state)
{
	struct fx	*fx = *state;
	siginfo_t	 si;
	pid_t		 pid;

	if ((pid = fork()) == 0) {
		pause();
		_exit(0);
	}
	assert_true(pid > 0);
	assert_int_equal(alive_as(fx, pid), 1);
	assert_int_equal(kill(pid, SIGKILL), 0);
	/* Dead, and left unreaped. */
	memset(&si, 0, sizeof(si));
	assert_int_equal(waitid(P_PID, (id_t)pid, &si, WEXITED | WNOWAIT), 0);
	assert_int_equal(si.si_pid, pid);
	assert_int_equal(alive_as(fx, pid), 0);
	assert_int_equal(waitpid(pid, NULL, 0), pid);	/* dead: no wait */
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_schema_created, setup,
		    teardown),
		cmocka_unit_test_setup_teardown(test_migrate_v1, setup,
		    teardown),
		cmocka_unit_test_setup_teardown(test_migrate_fails_whole, setup,
		    teardown),
		cmocka_unit_test_setup_teardown(test_msg_roundtrip, setup,
		    teardown),
		cmocka_unit_test_setup_teardown(test_agents, setup, teardown),
		cmocka_unit_test_setup_teardown(test_path_max, setup, teardown),
		cmocka_unit_test_setup_teardown(test_cycle_refused, setup,
		    teardown),
		cmocka_unit_test_setup_teardown(test_merge, setup, teardown),
		cmocka_unit_test_setup_teardown(test_context_order, setup,
		    teardown),
		cmocka_unit_test_setup_teardown(test_summary_policy, setup,
		    teardown),
		cmocka_unit_test_setup_teardown(test_batching, setup,
		    teardown),
		cmocka_unit_test_setup_teardown(test_resume_plan, setup,
		    teardown),
		cmocka_unit_test_setup_teardown(test_events, setup, teardown),
		cmocka_unit_test_setup_teardown(test_refusal_not_lost,
		    setup, teardown),
		cmocka_unit_test_setup_teardown(test_half_operation, setup,
		    teardown),
		cmocka_unit_test_setup_teardown(test_corrupt_and_foreign, setup,
		    teardown),
		cmocka_unit_test_setup_teardown(test_readonly, setup,
		    teardown),
		cmocka_unit_test_setup_teardown(test_fork_refused, setup,
		    teardown),
		cmocka_unit_test_setup_teardown(test_cow_adopt, setup,
		    teardown),
		cmocka_unit_test_setup_teardown(test_cow_columns, setup,
		    teardown),
		cmocka_unit_test_setup_teardown(test_zombie_not_alive, setup,
		    teardown),
		cmocka_unit_test(test_path),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}

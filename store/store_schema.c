/*
 * The store's schema and its forward migrations.
 *
 * A new file is created at version 1 and then migrated, so a fresh
 * database and an upgraded old one take the same path and the migrations
 * are exercised on every first run. PRAGMA user_version holds the version,
 * PRAGMA application_id marks the file as warren's. Migrations only go
 * forward; a file newer than this program is refused (store.c).
 *
 * Version 1: runs, agents, memory_nodes, memory_edges, messages (tool
 *   calls as a JSON array in messages.calls), events.
 * Version 2: what resume and summaries need:
 *   - agents.call_id: the parent's delegate call that made the agent, so a
 *     resumed parent re-issuing that call gets the finished child's result
 *     instead of running it again;
 *   - runs.resumes: how many times a run was resumed;
 *   - memory_nodes.summary_in/summary_out: tokens of an LLM summary;
 *   - message_calls: one row per tool call, moved out of messages.calls.
 *     JSON cannot hold the invalid UTF-8 a model or tool may produce, and
 *     every byte of a call must round-trip; the v1 JSON is converted and
 *     the column dropped.
 * Version 3: trusted_files, the project config files (.warren/config,
 *   .warren/agents/NAME.md) the user trusted with `warren trust`, by
 *   workspace, with the SHA-256 of the contents trusted (store_trust.c).
 *
 * Version 4: runs.cow_mode, cow_dir, cow_state: the run's copy-on-write
 *   layer.
 * Version 5: runs.continues: the run a `run --continue` follows up (its
 *   root node is the parent of the new root's, an edge across runs);
 *   agents.tool_filter: the tools a delegate call narrowed the agent to
 *   (a resumed agent keeps its narrower sandbox).
 *
 * The caller holds a write transaction (BEGIN IMMEDIATE) around a build
 * and decides in it whether one is needed: two first runs on a fresh
 * file must not both create the tables (store.c, store_schema_ready).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <sqlite3.h>

#include "store/store_int.h"
#include "store/store_testapi.h"

static const char schema_v1[] =
	"CREATE TABLE runs ("
	" id INTEGER PRIMARY KEY,"
	" task TEXT NOT NULL,"
	" workspace TEXT, profile TEXT, model TEXT, params TEXT,"
	" status TEXT NOT NULL DEFAULT 'running',"
	" result TEXT,"
	" pid INTEGER NOT NULL DEFAULT 0,"
	" started_ms INTEGER NOT NULL,"
	" ended_ms INTEGER NOT NULL DEFAULT 0);"
	"CREATE TABLE agents ("
	" id INTEGER PRIMARY KEY,"
	" run INTEGER NOT NULL REFERENCES runs(id),"
	" parent INTEGER REFERENCES agents(id),"
	" path TEXT NOT NULL,"
	" depth INTEGER NOT NULL,"
	" profile TEXT,"
	" task TEXT NOT NULL,"
	" inherit_context INTEGER NOT NULL DEFAULT 0,"
	" pid INTEGER NOT NULL DEFAULT 0,"
	" status TEXT NOT NULL DEFAULT 'pending',"
	" result TEXT, exit_reason TEXT,"
	" tokens_in INTEGER NOT NULL DEFAULT 0,"
	" tokens_out INTEGER NOT NULL DEFAULT 0,"
	" created_ms INTEGER NOT NULL,"
	" started_ms INTEGER NOT NULL DEFAULT 0,"
	" ended_ms INTEGER NOT NULL DEFAULT 0,"
	" UNIQUE (run, path));"
	"CREATE TABLE memory_nodes ("
	" id INTEGER PRIMARY KEY,"
	" run INTEGER NOT NULL REFERENCES runs(id),"
	" agent INTEGER UNIQUE REFERENCES agents(id),"
	" kind TEXT NOT NULL,"
	" label TEXT,"
	" summary TEXT,"
	" summary_kind TEXT NOT NULL DEFAULT 'none',"
	" created_ms INTEGER NOT NULL);"
	"CREATE INDEX memory_nodes_run ON memory_nodes(run);"
	"CREATE TABLE memory_edges ("
	" parent INTEGER NOT NULL REFERENCES memory_nodes(id),"
	" child INTEGER NOT NULL REFERENCES memory_nodes(id),"
	" PRIMARY KEY (parent, child)) WITHOUT ROWID;"
	"CREATE INDEX memory_edges_child ON memory_edges(child, parent);"
	"CREATE TABLE messages ("
	" id INTEGER PRIMARY KEY,"
	" node INTEGER NOT NULL REFERENCES memory_nodes(id),"
	" seq INTEGER NOT NULL,"
	" role TEXT NOT NULL,"
	" text TEXT, call_id TEXT, name TEXT,"
	" is_error INTEGER NOT NULL DEFAULT 0,"
	" calls TEXT,"
	" tokens_in INTEGER NOT NULL DEFAULT 0,"
	" tokens_out INTEGER NOT NULL DEFAULT 0,"
	" created_ms INTEGER NOT NULL,"
	" UNIQUE (node, seq));"
	"CREATE TABLE events ("
	" id INTEGER PRIMARY KEY,"
	" run INTEGER NOT NULL REFERENCES runs(id),"
	" time_ms INTEGER NOT NULL,"
	" path TEXT, type TEXT NOT NULL, detail TEXT);"
	"CREATE INDEX events_run ON events(run, id);"
	"PRAGMA user_version = 1;";

static const char migrate_v2[] =
	"ALTER TABLE agents ADD COLUMN call_id TEXT;"
	"ALTER TABLE runs ADD COLUMN resumes INTEGER NOT NULL DEFAULT 0;"
	"ALTER TABLE memory_nodes ADD COLUMN summary_in INTEGER NOT NULL "
	"DEFAULT 0;"
	"ALTER TABLE memory_nodes ADD COLUMN summary_out INTEGER NOT NULL "
	"DEFAULT 0;"
	"CREATE TABLE message_calls ("
	" message INTEGER NOT NULL REFERENCES messages(id),"
	" idx INTEGER NOT NULL,"
	" call_id TEXT, name TEXT, args TEXT,"
	" PRIMARY KEY (message, idx)) WITHOUT ROWID;"
	"INSERT INTO message_calls (message, idx, call_id, name, args)"
	" SELECT m.id, CAST(j.key AS INTEGER),"
	"  json_extract(j.value, '$.id'), json_extract(j.value, '$.name'),"
	"  CASE json_type(j.value, '$.args') WHEN 'text'"
	"   THEN json_extract(j.value, '$.args')"
	"   ELSE json(json_extract(j.value, '$.args')) END"
	" FROM messages m, json_each(m.calls) j"
	" WHERE m.calls IS NOT NULL AND json_valid(m.calls);"
	"ALTER TABLE messages DROP COLUMN calls;"
	"ALTER TABLE messages ADD COLUMN ncalls INTEGER NOT NULL DEFAULT 0;"
	"UPDATE messages SET ncalls = (SELECT count(*) FROM message_calls c"
	" WHERE c.message = messages.id);"
	"PRAGMA user_version = 2;";

static const char migrate_v3[] =
	"CREATE TABLE trusted_files ("
	" workspace TEXT NOT NULL,"
	" path TEXT NOT NULL,"
	" sha256 TEXT NOT NULL,"
	" trusted_ms INTEGER NOT NULL,"
	" PRIMARY KEY (workspace, path)) WITHOUT ROWID;"
	"PRAGMA user_version = 3;";

/* A run's copy-on-write layer (workspace/cow.h): its mode, its directory
 * and whether its changes were applied or discarded. */
static const char migrate_v4[] =
	"ALTER TABLE runs ADD COLUMN cow_mode TEXT;"
	"ALTER TABLE runs ADD COLUMN cow_dir TEXT;"
	"ALTER TABLE runs ADD COLUMN cow_state TEXT;"
	"PRAGMA user_version = 4;";

/* run --continue: the run a run follows up. */
static const char migrate_v5[] =
	"ALTER TABLE runs ADD COLUMN continues INTEGER REFERENCES runs(id);"
	"ALTER TABLE agents ADD COLUMN tool_filter TEXT;"
	"CREATE INDEX runs_continues ON runs(continues);"
	"PRAGMA user_version = 5;";

/* migrations[i] takes version i + 1 to version i + 2. */
static const char *const migrations[] = {
	migrate_v2,
	migrate_v3,
	migrate_v4,
	migrate_v5,
};

#define NMIGRATIONS (sizeof(migrations) / sizeof(migrations[0]))

static int
store_schema_exec(sqlite3 *db, const char *sql, char **errmsg)
{
	char	*e = NULL;

	if (sqlite3_exec(db, sql, NULL, NULL, &e) != SQLITE_OK) {
		free(*errmsg);
		*errmsg = NULL;
		if (e != NULL) {
			*errmsg = strdup(e);
			sqlite3_free(e);
		}
		return -1;
	}
	return 0;
}

/* Apply steps from version `from` up to `to`. */
static int
store_schema_steps(sqlite3 *db, int from, int to, char **errmsg)
{
	int	v;

	for (v = from; v < to; v++) {
		if (v < 1 || (size_t)v > NMIGRATIONS)
			return -1;
		if (store_schema_exec(db, migrations[v - 1], errmsg) == -1)
			return -1;
	}
	return 0;
}

int
store_schema_build(sqlite3 *db, int from, int to, char **errmsg)
{
	char	 sql[64];

	if (from < 0 || to < 1 || from > to || to > STORE_SCHEMA_VERSION)
		return -1;
	if (from == 0) {
		snprintf(sql, sizeof(sql), "PRAGMA application_id = %d",
		    STORE_APPLICATION_ID);
		if (store_schema_exec(db, sql, errmsg) == -1 ||
		    store_schema_exec(db, schema_v1, errmsg) == -1)
			return -1;
		from = 1;
	}
	return store_schema_steps(db, from, to, errmsg);
}

int
store_schema_create(sqlite3 *db, int version, char **errmsg)
{
	if (store_schema_exec(db, "BEGIN IMMEDIATE", errmsg) == -1)
		return -1;
	if (store_schema_build(db, 0, version, errmsg) == -1 ||
	    store_schema_exec(db, "COMMIT", errmsg) == -1) {
		sqlite3_exec(db, "ROLLBACK", NULL, NULL, NULL);
		return -1;
	}
	return 0;
}

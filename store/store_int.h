/*
 * The store's internals, shared by store*.c and its tests: the connection,
 * the statement cache, the write batch, error reporting and the schema.
 * Nothing outside store/store*.c and tests/store/ includes this.
 */
#ifndef WARREN_STORE_INT_H
#define WARREN_STORE_INT_H

#include <sys/types.h>

#include <sqlite3.h>
#include <stdarg.h>

#include "store/store.h"

/* The SQLite application_id of a warren database: "WRRN". */
#define STORE_APPLICATION_ID	0x5752524e

#define STORE_NODE_CACHE	64

/*
 * Cached prepared statements: the slot of each; its SQL (a struct
 * store_sql) is in the file that uses it.
 */
enum store_stmt_id {
	SQ_BEGIN = 0,
	SQ_COMMIT,
	SQ_RUN_INSERT,
	SQ_RUN_RESUMED,
	SQ_RUN_END,
	SQ_AGENT_INSERT,
	SQ_AGENT_FIND,
	SQ_AGENT_STARTED,
	SQ_AGENT_STATUS,
	SQ_AGENT_TOKENS,
	SQ_NODE_INSERT,
	SQ_NODE_GET,
	SQ_RUN_EXISTS,
	SQ_NODE_SUMMARY,
	SQ_EDGE_INSERT,
	SQ_EDGE_EXISTS,
	SQ_EDGE_REACHES,
	SQ_MSG_NEXTSEQ,
	SQ_MSG_INSERT,
	SQ_CALL_INSERT,
	SQ_MSG_LIST,
	SQ_MSG_CHARS,
	SQ_EVENT_INSERT,
	SQ_NODE_INFO,
	SQ_MERGE_CANDIDATES,
	SQ_EDGE_PARENTS,
	SQ_ANCESTORS,
	SQ_DEL_CALLS,
	SQ_DEL_MSGS,
	SQ_DEL_EDGES,
	SQ_DEL_NODES,
	SQ_DEL_EVENTS,
	SQ_DEL_AGENTS,
	SQ_DEL_CONTINUES,
	SQ_DEL_RUN,
	SQ__COUNT
};

/* A statement: its cache slot and its text. */
struct store_sql {
	enum store_stmt_id	 id;
	const char		*text;
};

/* Ids handed out before their rows exist (store_writer.c). */
#define STORE_HANDLE_BASE	((int64_t)1 << 60)
/* The writer's queue: a producer that would pass either waits. */
#define STORE_WRITER_MAX_ITEMS	16384
#define STORE_WRITER_MAX_BYTES	(64u * 1024 * 1024)

struct store_writer;

struct store {
	struct store_writer *w;		/* NULL: no writer thread (yet) */
	sqlite3		*db;
	char		*path;
	pid_t		 owner;		/* the process that opened it */
	int		 flags;
	int		 in_tx;		/* a batch transaction is open */
	size_t		 pending;	/* rows in the open batch */
	size_t		 batch_max;
	int		 depth;		/* nested store_op_begin() */
	int		 op_done;	/* statements done by the open operation */
	/* The last agent looked up by path (siblings share a parent);
	 * cleared whenever a batch is lost. */
	int64_t		 cache_run;
	int64_t		 cache_agent, cache_node;
	char		 cache_path[STORE_PATH_MAX];
	/* Ids known to exist (rows are never deleted; cleared with the
	 * cache above): the REFERENCES checks of the hot path. */
	int64_t		 valid_run;
	int64_t		 valid_nodes[STORE_NODE_CACHE];
	int64_t		 valid_node_runs[STORE_NODE_CACHE];
	enum store_err	 err;
	char		 errmsg[STORE_ERRMSG_MAX];
	/* The first write that was lost (store_lost), what it lost, and the
	 * writes refused since. */
	enum store_err	 lost;
	char		 lostmsg[STORE_ERRMSG_MAX];
	char		 lostdesc[STORE_ERRMSG_MAX + 128];
	size_t		 lost_rows, lost_refused;
	int		 final;		/* store_run_end(STORE_FAILED) */
	/* The owner's: handle index -> real id (store_op_made). */
	int64_t		*map;
	size_t		 mapcap;
	sqlite3_stmt	*stmts[SQ__COUNT];
};

/* store.c */
/* Set the error; the message gets the file name and a hint for err. */
int		 store_seterr(struct store *st, enum store_err err,
		    const char *fmt, ...) __attribute__((format(printf, 3, 4)));
/* Set the error from SQLite's last error; what = what was being done. */
int		 store_setdberr(struct store *st, int rc, const char *what);
/* The cached, reset statement; NULL (error set) if it cannot prepare. */
sqlite3_stmt	*store_stmt(struct store *st, const struct store_sql *q);
/* Step a write statement to completion (SQLITE_DONE), then reset it. */
int		 store_exec_stmt(struct store *st, sqlite3_stmt *s,
		    const char *what);
/* Commit the open batch, on the connection's owner. */
int		 store_commit(struct store *st);
/* Checks the owner and opens the batch for one operation. */
int		 store_op_begin(struct store *st);
/* Ends the operation: ok counts its rows toward the batch (and commits a
 * full batch); !ok leaves the batch as it was if nothing was written, else
 * rolls the batch back (store.c says why). Returns ok ? 0 : -1. */
int		 store_op_end(struct store *st, int ok, size_t rows);
/* Forget every cached lookup (a batch was lost). */
void		 store_cache_clear(struct store *st);
/* A consistent snapshot for several reads, and one lock instead of one
 * per statement (nothing when the writer's batch is open: it reads inside
 * it). */
int		 store_read_begin(struct store *st);
void		 store_read_end(struct store *st);
/* getpid(), cached; reset in a forked child. */
pid_t		 store_getpid(void);
/* Checks that a read runs in the owner process. */
int		 store_check_owner(struct store *st);
/* Bind a possibly NULL string. */
int		 store_bind_text(sqlite3_stmt *s, int idx, const char *v);
/* Copy a column as a new string (NULL stays NULL); *ok cleared on ENOMEM. */
char		*store_col_dup(sqlite3_stmt *s, int col, int *ok);
/* Names stored in TEXT columns back to enums (unknown: the safe value):
 * store_run.c, store_agent.c, store_summary.c. */
enum store_run_status	 store_run_status_parse(const char *name);
enum store_agent_status	 store_agent_status_parse(const char *name);
enum store_summary_kind	 store_summary_kind_parse(const char *name);

/* store_op.c: every write is one typed operation (struct store_op at the
 * head of its own struct, built by the call that makes it). Submitted, it
 * is applied at once by the connection's owner, or queued for the writer
 * thread (store_writer.c) that owns the connection. */
enum store_op_kind {
	STORE_OP_ROWS = 0,	/* writes rows: counts toward store_pending() */
	STORE_OP_COMMIT,	/* commits the batch */
	STORE_OP_CALL,		/* a read or a barrier: the caller waits */
};
struct store_op;
struct store_op_type {
	const char		*what;		/* "recording a message" */
	enum store_op_kind	 kind;
	/* On the connection's owner; its ids may be handles (store_real). */
	int			(*apply)(struct store *, struct store_op *);
	void			(*clear)(struct store_op *);	/* or NULL */
};
struct store_op {
	struct store_op			*next;
	uint64_t			 seq;	/* 1, 2, ... in queue order */
	const struct store_op_type	*type;
	size_t				 bytes;	/* counted against the bound */
	/* The rows it creates: handles when queued, the real ids once
	 * applied (store_op_made); *out[i] gets what the caller may use. */
	size_t				 nmade;
	int64_t				 made[2];
	int64_t				*out[2];
	int				 rc, done;	/* STORE_OP_CALL */
};
/* A zeroed op of size bytes with its type; NULL (error set) on ENOMEM. */
void		*store_op_new(struct store *st, const struct store_op_type *t,
		    size_t size);
/* Copy a string (NULL stays NULL) / ids into the op; -1 on ENOMEM. */
int		 store_op_str(struct store_op *op, char **dst, const char *s);
int		 store_op_ids(struct store_op *op, int64_t **dst,
		    const int64_t *ids, size_t n);
/* Apply it now (no writer) or queue it; the op is the store's from here,
 * freed even on failure. */
int		 store_op_submit(struct store *st, struct store_op *op);
void		 store_op_free(struct store_op *op);
/* Free op after a failed copy into it: -1, ENOMEM set. */
int		 store_op_nomem(struct store *st, struct store_op *op);
/* The op made row i with this id (the handle it was given maps to it). */
void		 store_op_made(struct store *st, struct store_op *op, size_t i,
		    int64_t id);
/* An id handed out by the front end, as the row's real id. */
int64_t		 store_real(struct store *st, int64_t id);
/* Run fn(owner, arg) on the connection's owner after every write before
 * it, and wait for it: the reads that must see them all, the barriers. */
int		 store_call(struct store *st, int (*fn)(struct store *, void *),
		    void *arg);

/* store_writer.c: the front end's side, when st->w is set */
/* Queue op (waits for room; a STORE_OP_CALL waits for its answer). */
int		 store_w_queue(struct store *st, struct store_op *op);
void		 store_writer_stop(struct store *st);
const char	*store_w_lost(struct store *st);
/* What the front end wrote of a node it created (nothing for others). */
void		 store_w_note_chars(struct store *st, int64_t node,
		    uint64_t chars);
void		 store_w_note_summary(struct store *st, int64_t node,
		    const char *summary);
/* Answered by the front end from what it wrote: 1 (and *need / *summary),
 * 0 the database must be asked. */
int		 store_w_summary_known(struct store *st, int64_t node,
		    const char *result,
		    const struct store_summary_policy *policy, int *need);
int		 store_w_summary_of(struct store *st, int64_t node,
		    char **summary);

/* store_schema.c */
/*
 * Take the schema from version from (0: an empty file) to version to,
 * inside the caller's write transaction. -1 with *errmsg (malloc'ed, may
 * stay NULL) on failure; the caller rolls back.
 */
int		 store_schema_build(sqlite3 *db, int from, int to,
		    char **errmsg);

/* store_run.c */
/* 0 if the run exists, else -1 with STORE_ENOTFOUND. SQLite does not
 * enforce the schema's REFERENCES (store.c says why): writes check the
 * ids they are given with these. */
int		 store_run_exists(struct store *st, int64_t run);

/* store_graph.c */
/* Same for a node. */
int		 store_node_exists(struct store *st, int64_t node);
/* One memory node row (agent 0 for none), inside an operation. */
int		 store_node_insert(struct store *st, int64_t run, int64_t agent,
		    enum store_node_kind kind, const char *label, int64_t *node);
/* One edge row, unchecked, inside an operation. */
int		 store_edge_insert(struct store *st, int64_t parent,
		    int64_t child);
/* A node's run and kind; ENOTFOUND if it does not exist. */
int		 store_node_get(struct store *st, int64_t node, int64_t *run,
		    enum store_node_kind *kind);

/* store_summary.c */
struct buf;
/* Append the NULL-terminated strings to b: 0, -1 on ENOMEM. */
int		 store_cat(struct buf *b, ...) __attribute__((sentinel));
/* Messages as plain text, one block each (system ones left out). */
int		 store_render(struct buf *b, const struct msg_list *l,
		    int skip_system);

/* store_msg.c */
/* Read a node's messages (with tool calls) in order. */
int		 store_msg_load(struct store *st, int64_t node,
		    struct msg_list *out, struct msg_usage **usage);

#endif

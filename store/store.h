/*
 * The store: runs, agents, the memory graph, every message and event of a
 * run, kept in one SQLite file (WAL) per workspace. docs/memory.md is the
 * reference (schema, graph semantics, resume, durability).
 *
 * One owner. Only the supervisor opens the database, after it has forked
 * nothing that will use it: workers are started by fork + exec and never
 * touch the connection. A store used from a process other than the one that
 * opened it refuses every call (STORE_EFORK), and store_close() there frees
 * memory only, so a forked child can never write to or checkpoint the file.
 *
 * Batching. Every write goes into one transaction that the store opens on
 * the first write after a commit; store_flush() commits it. The supervisor's
 * event loop calls store_flush() on a short timer, when an agent finishes,
 * and always before it acknowledges anything that must be durable. When a
 * batch reaches the cap (store_set_batch_max), the write that reaches it
 * commits the batch itself. A batch lands whole or not at all.
 *
 * The writer thread. After store_writer_start() a thread of the store's
 * own holds the connection and applies the writes in order, from a bounded
 * queue; the calls below return at once (docs/memory.md, "The writer
 * thread"), and a commit waiting for another process's lock does not stop
 * the caller. It commits on its own whenever it has applied what is
 * queued: no batch is held open waiting for the loop's store_flush().
 *
 * Durability: WAL with synchronous=NORMAL. A committed batch survives a
 * crash or kill -9 of the supervisor; only a power loss or OS crash can
 * lose the last committed batches (never corrupt the file). Rows still in
 * the open transaction are lost by any crash: that is what store_flush() is
 * for.
 *
 * Readers (warren runs/show/graph in another process) open the same file
 * with STORE_READ and read while a run writes; busy_timeout covers the
 * short moments a checkpoint holds a lock.
 *
 * Errors: functions return -1 (or NULL) and set an error code and a message
 * naming the file and what to do, read with store_errcode()/store_errmsg().
 * store_open() writes its message into the caller's buffer.
 *
 * Identifiers: runs, agents and memory nodes have int64 ids (> 0). Within a
 * run an agent is also named by its path: "0" is the root (orchestrator,
 * depth 0), "0.1", "0.2" its subagents, "0.1.3" theirs. Every agent owns one
 * memory node; merge nodes have no agent. Messages belong to a node.
 *
 * Strings returned in structs are owned by the struct and freed by its
 * *_free function. Stored text came from LLMs and tools: escape it
 * (common/str.h) before printing.
 */
#ifndef WARREN_STORE_H
#define WARREN_STORE_H

#include <stddef.h>
#include <stdint.h>

#include "common/msg.h"

#define STORE_SCHEMA_VERSION	5
#define STORE_DEFAULT_BATCH_MAX	4096	/* rows per transaction */
#define STORE_BUSY_TIMEOUT_MS	5000
/* How long a write waits for a lock another process holds before the
 * write fails (and with it the run: exit 6). */
#define STORE_WRITE_WAIT_MS	60000
#define STORE_PATH_MAX		256	/* longest agent path ("0.1.2...") */
#define STORE_ERRMSG_MAX	512

/* store_open() flags. */
#define STORE_CREATE	0x01	/* create the file (and its directory) */
#define STORE_READ	0x02	/* read-only use: warren runs/show/graph */

enum store_err {
	STORE_OK = 0,
	STORE_EINVAL,		/* bad argument (path syntax, unknown id) */
	STORE_ENOTFOUND,	/* no such run, agent or node */
	STORE_EEXIST,		/* agent path or edge already there */
	STORE_ECYCLE,		/* the edge would make the graph cyclic */
	STORE_ECORRUPT,		/* not a database, or a damaged one */
	STORE_ENOTWARREN,	/* an SQLite file, but not warren's */
	STORE_ENEWER,		/* schema newer than this warren knows */
	STORE_EREADONLY,	/* file or directory not writable */
	STORE_EBUSY,		/* locked longer than busy_timeout */
	STORE_EFORK,		/* used from a process that did not open it */
	STORE_ENOMEM,
	STORE_EIO,		/* disk full, I/O error, anything else */
};

enum store_run_status {
	STORE_RUN_RUNNING = 0,	/* being run (or interrupted: see pid) */
	STORE_RUN_DONE,		/* the root completed */
	STORE_RUN_FAILED,	/* the root failed, or limits ended it */
	STORE_RUN_CANCELLED,	/* SIGINT/SIGTERM; resumable */
	STORE_RUN_STORE_FAILED,	/* a write failed: stopped; resumable */
};

/*
 * Agent lifecycle. DONE and FAILED are final: resume never reruns them and
 * hands their result to whoever asks for them again. PENDING, RUNNING and
 * CANCELLED agents are unfinished: resume restarts them from their last
 * written messages.
 */
enum store_agent_status {
	STORE_AGENT_PENDING = 0,	/* recorded, not started */
	STORE_AGENT_RUNNING,		/* started (pid known) */
	STORE_AGENT_DONE,		/* complete(result) */
	STORE_AGENT_FAILED,		/* fail(reason), killed, limits */
	STORE_AGENT_CANCELLED,		/* stopped with its run */
};

enum store_node_kind {
	STORE_NODE_AGENT = 0,	/* the memory of one agent */
	STORE_NODE_MERGE,	/* parallel results joined; several parents */
};

enum store_summary_kind {
	STORE_SUMMARY_NONE = 0,
	STORE_SUMMARY_RESULT,	/* the agent's complete() result as is */
	STORE_SUMMARY_LLM,	/* written by an LLM call (long result/transcript) */
};

struct store;

/* What a run was started with; everything resume needs to start it again. */
struct store_run_params {
	const char	*task;		/* required */
	const char	*workspace;	/* absolute path; may be NULL */
	const char	*profile;	/* the root's profile; may be NULL */
	const char	*model;		/* may be NULL */
	const char	*params;	/* opaque JSON text the supervisor reads
					   back on resume (limits, provider...);
					   may be NULL */
	const char	*cow_mode;	/* "overlay", "copy", or NULL: in place */
	const char	*cow_dir;	/* its layer's directory, or NULL */
	int64_t		 continues;	/* run --continue: the run it follows
					   up; 0: none */
	int64_t		 adopts;	/* the run whose layer (cow_dir) it
					   goes on in: that run's layer state
					   becomes "continued" in the same
					   write, EEXIST if it is no longer
					   pending; 0: none */
};

/* A new agent. The parent (path minus its last component) must exist. */
struct store_agent_new {
	const char	*path;		/* "0", "0.1", ... */
	const char	*profile;	/* may be NULL */
	const char	*task;		/* required */
	const char	*call_id;	/* the parent's delegate tool call id:
					   resume finds a finished child by it;
					   NULL for the root */
	int		 inherit_context; /* started from its parent's context */
	const char	*tool_filter;	/* its delegate call's tool_filter, the
					   tools as "read,edit"; NULL: none */
	/* Its memory node's parents instead of its parent agent's node (a
	 * composition pattern's step hangs under the pattern's node or the
	 * steps it depends on); 0 of them: the parent agent's node. */
	const int64_t	*parent_nodes;
	size_t		 nparent_nodes;
};

struct store_run {
	int64_t			 id;
	char			*task;
	char			*workspace;
	char			*profile;
	char			*model;
	char			*params;
	enum store_run_status	 status;
	char			*result;	/* root's result or failure reason */
	int64_t			 pid;		/* supervisor that last ran it */
	int			 alive;		/* that pid still runs (heuristic) */
	int			 resumes;	/* times resumed */
	int64_t			 started_ms;	/* wall clock, ms since epoch */
	int64_t			 ended_ms;	/* 0 while running */
	uint64_t		 nagents;
	struct msg_usage	 usage;		/* sum over its agents */
	char			*cow_mode;	/* NULL: the run wrote in place */
	char			*cow_dir;
	char			*cow_state;	/* "pending", "applied",
						   "discarded", "empty",
						   "continued" (a follow-up
						   went on in the layer) */
	int64_t			 continues;	/* the run it follows up, 0 */
	char			*continued_by;	/* the runs that follow it up:
						   "7, 9"; NULL: none */
};

struct store_agent {
	int64_t			 id;
	int64_t			 run;
	int64_t			 node;		/* its memory node */
	int64_t			 parent;	/* parent agent id; 0 for the root */
	char			*path;
	int			 depth;
	char			*profile;
	char			*task;
	char			*call_id;
	int			 inherit_context;
	int64_t			 pid;		/* 0 before start */
	enum store_agent_status	 status;
	char			*result;	/* complete() result / fail reason */
	char			*exit_reason;	/* "completed", "timeout", "killed" ... */
	struct msg_usage	 usage;		/* tokens of its LLM turns */
	int64_t			 created_ms, started_ms, ended_ms;
	uint64_t		 nmessages;
	char			*summary;	/* its node's summary; may be NULL */
	char			*tool_filter;	/* "read,edit"; NULL: none */
};

struct store_node {
	int64_t			 id;
	int64_t			 agent;		/* 0 for a merge node */
	char			*path;		/* agent path; NULL for a merge node */
	enum store_node_kind	 kind;
	char			*label;		/* agent task, or the merge's label */
	char			*summary;	/* NULL until set */
	enum store_summary_kind	 summary_kind;
	struct msg_usage	 summary_usage;	/* tokens of the summary LLM call */
	uint64_t		 nmessages;
	int64_t			 created_ms;
	/* Its agent's, for an agent node; NULL and PENDING for a merge. */
	char			*profile;
	enum store_agent_status	 status;
	char			*exit_reason;
};

struct store_edge {
	int64_t	parent;
	int64_t	child;
};

/* A run's whole memory graph, nodes in creation order. */
struct store_graph {
	struct store_node	*nodes;
	size_t			 nnodes;
	struct store_edge	*edges;
	size_t			 nedges;
};

struct store_event {
	int64_t	 id;
	int64_t	 time_ms;
	char	*path;		/* agent path; NULL for run-wide events */
	char	*type;
	char	*detail;
};

/* One agent in a resume plan. */
struct store_plan_agent {
	struct store_agent	 agent;
	int			 finished;	/* DONE or FAILED: never rerun */
	/* Unfinished agents only: every message written, in order, and the
	 * tool calls of its last assistant message that have no result yet
	 * (in flight when the supervisor died: run again, at-least-once). */
	struct msg_list		 messages;
	struct msg_call		*pending;	/* copies, owned by the plan */
	size_t			 npending;
};

/*
 * What `warren resume RUN` needs: the run and its parameters, and every
 * agent ordered by depth then path (parents before children). A finished
 * agent's result answers its parent's delegate call with the same call_id;
 * an unfinished one restarts from its messages.
 */
struct store_plan {
	struct store_run	 run;
	struct store_plan_agent	*agents;
	size_t			 nagents;
};

/* When a finished agent's summary must be an LLM summary. */
struct store_summary_policy {
	size_t	result_max;	/* result longer than this (chars); 0 = never */
	size_t	transcript_max;	/* transcript longer than this; 0 = never */
};
#define STORE_SUMMARY_RESULT_MAX	4000
#define STORE_SUMMARY_TRANSCRIPT_MAX	65536

/* store_context() flags. */
#define STORE_CTX_PARENT_MESSAGES 0x01	/* an unsummarised direct parent gives
					   its transcript (inherit_context) */
#define STORE_CTX_ANCESTORS	0x02	/* without the node's own messages:
					   what it inherits before its start
					   (a restarted agent has some) */

/* store.c: open, close, batching, errors */
/*
 * The database path: explicit if not NULL, else $WARREN_DB if set, else
 * warren.db in warren's state directory (common/xdg.h), outside every
 * workspace: an agent must not write what warren reads back.
 * -1 (ENAMETOOLONG) if it does not fit, (ENOENT) if there is no home.
 */
int		 store_path(char *out, size_t outsz, const char *explicit_path);
/* store_lock.c: other processes that have a database file open (their
 * pids and names), for a busy message: "pid 123 (sqlite3)"; "" if none
 * is found (another user's processes cannot be seen). */
void		 store_lock_holders(const char *path, char *out, size_t outsz);
/* NULL on error, with the reason (naming the file) in err. */
struct store	*store_open(const char *path, int flags, char *err, size_t errsz);
/* Flushes (errors are logged), then closes. NULL is fine. */
void		 store_close(struct store *st);
const char	*store_filename(const struct store *st);
enum store_err	 store_errcode(const struct store *st);
const char	*store_errmsg(const struct store *st);	/* borrowed */
/* Commit the open batch, if any. On -1 the whole batch is lost. */
int		 store_flush(struct store *st);
/*
 * Lost writes are sticky. Once a batch was rolled back (disk full, I/O
 * error, a damaged page, a lock held past STORE_WRITE_WAIT_MS), every
 * later write is refused, so the file keeps exactly what was committed
 * before the failure and never a later row without an earlier one:
 * `warren resume` redoes the rest. NULL while nothing was lost, else what
 * failed and how much was lost (borrowed, valid until the next call).
 * store_run_end(..., STORE_RUN_STORE_FAILED, ...) is still tried.
 */
const char	*store_lost(struct store *st);
/*
 * From now on a thread of the store's own applies the writes
 * (store_writer.c, docs/memory.md): writes return at once and their
 * failures are reported by store_lost(); ids returned before their rows
 * exist are valid for every call of this store; reads wait for the writes
 * queued before them. Call once the run's first rows are committed.
 */
int		 store_writer_start(struct store *st);
/* With the writer thread: a descriptor that becomes readable when a
 * write is lost (the loop polls it, then reads store_lost()); else -1. */
int		 store_lost_fd(const struct store *st);
/*
 * A barrier that does not block: store_commit_mark() names every write
 * queued so far; store_committed() is 1 once they are all committed (at
 * once without the writer thread, whose writes commit at store_flush();
 * also once a write was lost: nothing more will be, the run stops), else
 * 0. store_commit_fd() becomes readable after the writer's next commit
 * once store_committed() said 0 (-1 without the writer: no wait);
 * store_commit_ack() clears it.
 */
uint64_t	 store_commit_mark(struct store *st);
int		 store_committed(struct store *st, uint64_t mark);
int		 store_commit_fd(const struct store *st);
void		 store_commit_ack(struct store *st);
/* store_run_end() and a commit, waited for: 0 both done, -1 not. */
int		 store_run_finish(struct store *st, int64_t run,
		    enum store_run_status status, const char *result);
/* Rows written since the last commit. */
size_t		 store_pending(const struct store *st);

/* store_run.c: runs, agents, messages, events (writes) */
int		 store_run_begin(struct store *st,
		    const struct store_run_params *p, int64_t *run);
/* Marks a run running again under this process; counts the resume. */
int		 store_run_resumed(struct store *st, int64_t run);
/* Delete a finished run and all of it, committed at once. */
int		 store_run_delete(struct store *st, int64_t run);
/* The run's copy-on-write layer is now state ("applied", "discarded");
 * ENOTFOUND if the run has no layer, EEXIST (nothing written) if a
 * follow-up went on in it ("continued"). With no writer thread running. */
int		 store_run_cow_state(struct store *st, int64_t run,
		    const char *state);
/* The run that holds run's layer now: the newest other run with the same
 * layer directory (a follow-up went on in it), in *holder; 0 if none. */
int		 store_run_layer_holder(struct store *st, int64_t run,
		    int64_t *holder);
/* run --continue: the memory edge from the root node of run old (the
 * run being followed up) to node, the new run's root node: its context
 * holds old's memory. Across runs, unlike store_edge_add. With no writer
 * thread running. */
int		 store_run_continue(struct store *st, int64_t old,
		    int64_t node);

/* Creates the agent, its memory node and the edge from its parent's node. */
int		 store_agent_add(struct store *st, int64_t run,
		    const struct store_agent_new *a, int64_t *agent,
		    int64_t *node);
int		 store_agent_started(struct store *st, int64_t agent,
		    int64_t pid);
/* Any status; a final one sets ended_ms. result/exit_reason may be NULL. */
int		 store_agent_set_status(struct store *st, int64_t agent,
		    enum store_agent_status status, const char *result,
		    const char *exit_reason);
/* Find an agent of a run by path; absent: ids 0, -1, STORE_ENOTFOUND. */
int		 store_agent_find(struct store *st, int64_t run,
		    const char *path, int64_t *agent, int64_t *node);

/*
 * Append one message to a node (in order; seq is assigned). usage, when
 * not NULL, is the LLM turn that produced it and is added to the agent's
 * tokens. Tool calls and every string round-trip byte for byte.
 */
int		 store_msg_append(struct store *st, int64_t node,
		    const struct msg *m, const struct msg_usage *usage);
/* An event of a run; path NULL for run-wide; detail free text or JSON. */
int		 store_event(struct store *st, int64_t run, const char *path,
		    const char *type, const char *detail);

/* store_graph.c: the memory graph */
/* A merge node (no agent) with an edge from each parent (n >= 1). */
int		 store_node_merge(struct store *st, int64_t run,
		    const int64_t *parents, size_t nparents, const char *label,
		    int64_t *node);
/* The merge node whose parents are exactly parents[0..n-1] (in any
 * order): 1 and *node, 0 if there is none, -1 error. */
int		 store_merge_find(struct store *st, const int64_t *parents,
		    size_t nparents, int64_t *node);
/* A node's summary (malloc'd) or NULL if it has none yet; -1 error
 * (STORE_ENOTFOUND: no such node). */
int		 store_node_summary(struct store *st, int64_t node,
		    char **summary);
/* Edge parent -> child, same run; STORE_ECYCLE if child reaches parent
 * (with the writer thread the edge is queued: a refusal is logged). */
int		 store_edge_add(struct store *st, int64_t parent, int64_t child);
int		 store_node_set_summary(struct store *st, int64_t node,
		    const char *summary, enum store_summary_kind kind,
		    const struct msg_usage *usage);
/*
 * Does a finished agent with this result and node need an LLM summary?
 * 1 yes (then build the request with store_summary_prompt), 0 no (use the
 * result: store_node_set_summary(..., STORE_SUMMARY_RESULT, NULL)), -1
 * error. policy NULL = the defaults above.
 */
int		 store_summary_needed(struct store *st, int64_t node,
		    const char *result,
		    const struct store_summary_policy *policy);
/* The messages of an LLM summary request for a node (system + user). */
int		 store_summary_prompt(struct store *st, int64_t node,
		    const char *result, struct msg_list *out);
/*
 * The model's context for a node: one user message per ancestor that has
 * a summary, ancestors in topological order (roots first, ties by creation
 * order), then the node's own messages. Appended to out.
 */
int		 store_context(struct store *st, int64_t node, int flags,
		    struct msg_list *out);

/* A project file the user trusted (store_trust.c). */
struct store_trusted {
	char		*path;		/* below the workspace: ".warren/config" */
	char		 sha256[65];	/* of its contents, hex */
};

/* store_trust.c */
/* The trusted files of a workspace (a realpath), sorted by path. */
int		 store_trust_get(struct store *st, const char *workspace,
		    struct store_trusted **v, size_t *n);
/* Replace the workspace's trusted set with v (n 0: trust nothing), and
 * commit. */
int		 store_trust_set(struct store *st, const char *workspace,
		    const struct store_trusted *v, size_t n);
void		 store_trusted_free(struct store_trusted *v, size_t n);

/* store_query.c: reads for the commands and for resume */
/*
 * The newest runs first; limit 0 = all. workspace (a realpath) keeps the
 * runs whose workspace is it or contains it; NULL keeps every run.
 */
int		 store_runs_list(struct store *st, const char *workspace,
		    size_t limit, struct store_run **runs, size_t *nruns);
int		 store_run_get(struct store *st, int64_t run,
		    struct store_run *out);
/* store_turns.c: the runs that run's --continue chain names (a warren
 * chat's earlier turns), the last max of them oldest first, into out: a
 * user message (the task) and an assistant one (the result), each cut to
 * textmax bytes. */
struct msg_list;
int		 store_turns(struct store *st, int64_t run, size_t max,
		    size_t textmax, struct msg_list *out);
/* The newest run's id, of workspace as above (NULL: of any);
 * STORE_ENOTFOUND when there is none. */
int		 store_run_latest(struct store *st, const char *workspace,
		    int64_t *run);
/* A run's agents, parents before children, siblings in numeric order. */
int		 store_agents_list(struct store *st, int64_t run,
		    struct store_agent **agents, size_t *nagents);
/* A node's messages in order (usage per message optional: may be NULL). */
int		 store_node_messages(struct store *st, int64_t node,
		    struct msg_list *out, struct msg_usage **usage);
int		 store_graph_load(struct store *st, int64_t run,
		    struct store_graph *g);
int		 store_events_list(struct store *st, int64_t run,
		    struct store_event **events, size_t *nevents);
int		 store_resume_plan(struct store *st, int64_t run,
		    struct store_plan *plan);
/* The newest event of this type in a run (STORE_ENOTFOUND: none). */
int		 store_event_last(struct store *st, int64_t run,
		    const char *type, struct store_event *ev);

void		 store_run_free(struct store_run *r);
void		 store_runs_free(struct store_run *v, size_t n);
void		 store_agents_free(struct store_agent *v, size_t n);
void		 store_graph_free(struct store_graph *g);
void		 store_events_free(struct store_event *v, size_t n);
void		 store_event_free(struct store_event *ev);	/* one, not v */
void		 store_plan_free(struct store_plan *p);

const char	*store_run_status_name(enum store_run_status s);
const char	*store_agent_status_name(enum store_agent_status s);
const char	*store_summary_kind_name(enum store_summary_kind k);

#endif

/*
 * One run of `warren run`: the agent tree, the workers, the LLM broker, the
 * orchestrator and the limits, all driven by one event loop (loop.h).
 * The internal header of the supervisor's run; prototypes by file.
 *
 * Ownership: struct run owns every node; a node owns its worker (if any)
 * until the worker is reaped; the worker owns its pipes and IPC peer.
 */
#ifndef WARREN_RUN_H
#define WARREN_RUN_H

#include <sys/queue.h>
#include <sys/types.h>

#include <stdint.h>
#include <stdio.h>

#include "common/msg.h"
#include "common/price.h"
#include "ipc/ipc.h"

struct loop;
struct llm_engine;
struct llm_config;
struct profile;
struct profile_set;
struct agent;
struct agent_profile_ref;
struct worker;
struct mcp_config;
struct mcp_proc;
struct run;
struct store;
struct sandbox_caps;
struct spawnd_client;
struct node;
struct orch_state;
struct resume_wait;
struct hostexec_snap;
struct json_t;
struct cow;
struct compose;

/* limits.c: every limit of a run, in one place. */
struct run_limits {
	unsigned	max_depth;	/* deepest subagent (root is 0) [3] */
	unsigned	max_agents;	/* subagents per run [10] */
	unsigned	jobs;		/* concurrent worker processes [cores] */
	uint64_t	token_budget;	/* input+output tokens per run; 0 = none */
	uint64_t	hello_ms;	/* spawn -> hello deadline [10 s] */
	uint64_t	agent_timeout_ms; /* wall clock of one subagent [30 min] */
	uint64_t	grace_ms;	/* cancel -> SIGKILL [2 s] */
	unsigned	max_iterations;	/* LLM turns of one agent [50] */
	uint32_t	max_output_bytes; /* of one tool result [64 KiB] */
	/* A finished agent's node summary is an LLM summary when its result
	 * or its transcript is longer than these (0 = never) [4000, 64 KiB]. */
	uint64_t	summary_result_max;
	uint64_t	summary_transcript_max;
	/* What one worker may have the store keep: events and checkpointed
	 * messages together, rows and bytes [20000, 64 MiB]. */
	uint64_t	store_rows;
	uint64_t	store_bytes;
	/* A worker tree's memory cgroup limit, where there is one [4 GiB]. */
	uint64_t	mem_bytes;
	/* Disk the run's copy-on-write layer may take; 0 = none [1 GiB]. */
	uint64_t	disk_max;
};

#define LIMITS_DEFAULT_MAX_DEPTH	3
#define LIMITS_DEFAULT_MAX_AGENTS	10
/*
 * Workers at once. Agents spend most of their time waiting for the LLM,
 * not on a core: six agents with 300 ms turns took 23.5 s at --jobs 2 and
 * 14.5 s at 6, and 64 took 2.56 times one agent's time at 16 (issue 33).
 * 64 runs a fan-out of 64 subagents at once, whatever the number of
 * cores; an idle worker is 1.3 MB, and agent_memory bounds each one.
 */
#define LIMITS_DEFAULT_JOBS		64
#define LIMITS_DEFAULT_HELLO_MS		10000
#define LIMITS_DEFAULT_TIMEOUT_MS	(30u * 60 * 1000)
#define LIMITS_DEFAULT_GRACE_MS		2000
#define LIMITS_DEFAULT_ITERATIONS	50
#define LIMITS_DEFAULT_OUTPUT		(64u * 1024)
#define LIMITS_DEFAULT_STORE_ROWS	20000
#define LIMITS_DEFAULT_STORE_BYTES	(64u * 1024 * 1024)
#define LIMITS_DEFAULT_MEM_BYTES	(4ULL << 30)
#define LIMITS_DEFAULT_DISK_MAX		(1024ull * 1024 * 1024)

/* Where a node is in its life. */
enum node_state {
	NODE_QUEUED = 0,	/* accepted, waiting for a worker slot */
	NODE_RUNNING,		/* a worker (or the orchestrator) runs it */
	NODE_DONE,		/* finished: result or error set */
};

/* How a node ended, as its parent will be told. */
enum node_end {
	NODE_END_NONE = 0,
	NODE_END_COMPLETE,	/* complete(result) */
	NODE_END_FAIL,		/* fail(reason) */
	NODE_END_LIMIT,		/* the agent's own iteration/time limit */
	NODE_END_CRASHED,	/* died of a signal or exited without done */
	NODE_END_KILLED,	/* killed by a resource limit (CPU, memory) */
	NODE_END_TIMEOUT,	/* the supervisor's wall-clock deadline */
	NODE_END_PROTOCOL,	/* broke the protocol, lied in its hello, late hello */
	NODE_END_CANCELLED,	/* the run was cancelled */
	NODE_END_SPAWN,		/* could not be started */
	NODE_END_QUOTA,		/* asked the store to keep more than its quota */
	NODE_END_AUTO_COMPLETE,	/* no tool call after every reminder: its
				   last text is the result, error says why */
};

/* What the live view and the line log show of a node now (ui.c). The
 * strings are raw (escaped when shown) and owned by the node. */
struct node_ui {
	char		*tool;		/* the tool running, or NULL */
	char		*args;		/* its arguments, one short line */
	char		*last;		/* its last result, one short line */
	int		 last_bad;	/* that result failed (exit != 0 ...) */
	uint64_t	 tool_ms;	/* when the tool started */
	unsigned	 llm;		/* its LLM requests in flight */
	uint64_t	 llm_id;	/* the latest one's engine id */
	int		 hello;		/* its worker has a pid */
};

/* Who is waiting for a node's result. */
typedef void	(*node_done_fn)(struct run *, struct node *, void *arg);

/* One agent of the tree. The root (path "0") is the orchestrator. */
struct node {
	struct run		*run;
	struct node		*parent;
	char			 path[IPC_PATH_MAX];
	unsigned		 depth;
	const struct profile	*profile;
	struct profile		*narrowed;	/* profile, if a tool_filter
						   narrowed it: owned */
	char			*task;
	int			 inherit;
	unsigned		 nchildren;	/* for the next child's path */
	struct node		*kids, *kids_tail;	/* its children, in */
	struct node		*next_kid;		/* the order made */
	enum node_state		 state;
	struct worker		*worker;	/* NODE_RUNNING in a worker */
	node_done_fn		 done_cb;	/* tells the parent */
	void			*done_arg;
	uint64_t		 started_ms, ended_ms;
	/* The outcome. */
	enum node_end		 end;
	char			*result;	/* complete()'s text, or NULL */
	char			*error;		/* why it did not complete */
	struct msg_usage	 usage;
	struct msg_usage	 usage_unsaved;	/* turns not yet in the store */
	unsigned		 iterations;
	int64_t			 store_agent;	/* rows in the store, 0 = none */
	int64_t			 store_node;
	const char		*call_id;	/* the parent's delegate call id */
	uint32_t		 ckpt_seq;	/* messages checkpointed so far */
	int			 summarizing;	/* its LLM summary is in flight */
	struct node		**batch;	/* a worker's subagents since its
						   last LLM turn */
	size_t			 nbatch;
	int64_t			 merge_node;	/* its last parallel batch's merge
						   node: later inherit_context
						   children hang under it too */
	/* Resume: the messages an unfinished agent restarts from, and its
	 * finished children answering its delegate calls. */
	struct msg_list		*resume;
	struct node		*qnext;		/* the queue of NODE_QUEUED */
	/* Its end told once its rows are committed (run_node_tell). */
	struct node		*tell_next;
	uint64_t		 tell_mark;
	struct node_ui		 ui;
	unsigned		 http_step;	/* a backend's requests so far:
						   their cassette steps */
};

struct run_policy {
	const struct profile	*profile;
	struct sandbox_policy	*policy;
	struct run_policy	*next;
};

struct run_opts {
	const char	*task;
	int		 priced;	/* the user gives the model's price */
	struct price	 price;		/* its cost in the end summary */
	const char	*profile;	/* the root's profile [orchestrator] */
	const char	*workspace;	/* absolute */
	const char	*worker_bin;
	int		 json;
	int		 plain;		/* --plain: the line log, never the
					   live view */
	int		 trace;		/* -T: log every IPC message */
	int		 weaker;	/* accept a weaker sandbox than asked */
	/* Files of the user's that may lie in the workspace but no worker
	   may read: the database and its WAL, the key file. NULL-ended. */
	const char *const *masks;
	/* The run's copy-on-write layer, which the spawn server has entered;
	   NULL: agents write the workspace in place. */
	const struct cow *cow;
	/* The output schema (JSON Schema text, checked usable) the root's
	   complete() result must match (docs/supervisor.md); NULL: none. */
	const char	*schema;
	/* run --continue: the root starts from its memory node's ancestors,
	   the root node of the run it follows up (run_inherited). */
	int		 root_inherit;
	/* warren chat's turn: with root_inherit, the root starts from the
	   earlier turns in full (store_turns), not their memory. */
	int		 root_chat;
	/* The MCP servers agents may use (supervisor/mcp.h); NULL: none. */
	const struct mcp_config *mcp;
	struct run_limits limits;
};

struct run {
	struct run_opts		 opts;
	struct loop		*loop;
	struct llm_engine	*llm;
	struct profile_set	*profiles;
	/* The profiles a delegate call may name (every one but the
	   orchestrator) with their descriptions, cut to RUN_DESC_MAX: what
	   the delegate schema lists. Borrowed from profiles. */
	struct agent_profile_ref *delegates;
	char			**dnames, **ddescs;	/* the same, for IPC */
	size_t			 ndelegates;
	struct store		*store;		/* NULL: nothing persisted */
	struct sandbox_caps	*caps;		/* what this machine can apply */
	struct spawnd_client	*spawnd;	/* forks workers; NULL: we do */
	/* Workers with a pid that have not exited: what an exit is looked
	   up in, instead of every node of the run (proc.c). */
	LIST_HEAD(worker_list, worker) live;
	int64_t			 run_id;
	struct node		**nodes;	/* every node, root first */
	size_t			 nnodes, nodecap;
	struct node		*root;
	struct node		*qhead, *qtail;	/* NODE_QUEUED, FIFO */
	struct node		*tell_head, *tell_tail;	/* ended, their
						   rows not yet committed */
	unsigned		 nagents;	/* subagents accepted */
	unsigned		 nlive;		/* worker processes alive */
	unsigned		 nactive;	/* counted against --jobs */
	uint64_t		 tokens;	/* input + output, all agents */
	uint64_t		 nturns;	/* LLM turns brokered */
	int			 cancelling;	/* SIGINT/SIGTERM seen */
	int			 nsigint;
	int			 interrupted;	/* exit 130 */
	uint64_t		 flush_timer;
	uint64_t		 kill_timer;
	int			 finished;	/* the root is done */
	int			 llm_failed;	/* the root ended on an LLM error */
	int			 budget_spent;	/* a turn was refused: no budget */
	int			 store_failed;	/* a store write was lost: exit 6 */
	int			 spawnd_failed;	/* the spawn server died: exit 70 */
	char			*stop_reason;	/* a run limit stopped it (the
						   disk limit): exit 1 */
	uint64_t		 disk_timer;
	uint64_t		 disk_base;	/* copy mode: the layer at start */
	int			 disk_based;
	unsigned		 disk_errors;	/* failed measures in a row */
	int			 disk_fd;	/* the layer's tmpfs (disk_max
						   held by the kernel,
						   cow_bound.c), or -1 */
	/* The root's profile is not the orchestrator: the root is a worker
	   (path "0", depth 0) like any subagent, not an agent in here. */
	int			 root_worker;
	struct agent		*orch;		/* the orchestrator's agent */
	struct orch_state	*orch_state;
	int			 orch_deferred;	/* resume: waits on subagents */
	struct resume_wait	*resume_waits;	/* run_resume.c */
	const struct store_plan	*resume_plan;	/* what resume reads: borrowed */
	char			**worker_env;
	/* Each profile's sandbox policy, made at its first spawn (proc.c):
	   the workspace is resolved once per run, not once per worker. */
	struct run_policy	*policies;
	/* Files that run code on the host, before any agent ran (or when
	   the run first started, for a resumed run): run_hostexec.c. */
	struct hostexec_snap	*hx_base;
	/* The composition patterns running for the orchestrator
	   (compose.c). */
	struct compose		*composes;
	/* Every MCP server started for an agent (mcp_proc.c). */
	struct mcp_proc	*mcp_servers;
};

/* run_partial.c */
/* A run the budget ended: add what its agents finished to its error. */
void	run_partial(struct run *r);

/* run.c: the tree, delegation, an agent's end and its parent told. */
struct run	*run_new(const struct run_opts *, struct llm_engine *,
		    struct profile_set *, char *err, size_t errsz);
void		 run_free(struct run *);
/* Persist the run from now on (the root's row is written here). */
void		 run_set_store(struct run *, struct store *, int64_t run_id);
/* Start the root agent: the orchestrator here (orch_start), any other
 * profile queued for a worker. resume: its messages, or NULL. */
int		 run_root_start(struct run *, const struct msg_list *resume,
		    char *err, size_t errsz);
/* A delegation with every argument of the delegate tool. */
struct run_deleg {
	const char		*profile;	/* NULL: general */
	const char		*task;
	int			 inherit;
	const char *const	*tools;		/* tool_filter: */
	size_t			 ntools;
	int			 filtered;	/* given (maybe empty) */
	const char		*call_id;
	/* Its memory node's parents instead of the parent agent's node: a
	   composition pattern's step (compose.c); 0 of them: the usual. */
	const int64_t		*mem_parents;
	size_t			 nmem_parents;
};
/*
 * A delegation request from parent: refused (-1, code and message set for
 * the model) or accepted (0, *childp queued; cb runs when it ends).
 */
int		 run_delegate_as(struct run *, struct node *parent,
		    const struct run_deleg *, node_done_fn cb, void *arg,
		    struct node **childp, const char **code, char *msg,
		    size_t msgsz);
/* A node for an agent of an interrupted run (its stored path). */
struct node	*run_node_restore(struct run *, struct node *parent,
		    const struct profile *, const char *path, const char *task,
		    int inherit);
/* A node ended (outcome fields set): tell the parent, free a slot. */
void		 run_node_done(struct run *, struct node *);
/* Text for the parent: the result, or "subagent 0.2 (explore) crashed: ..." */
char		*run_node_answer(const struct node *, int *is_error);
const char	*run_end_name(enum node_end);
/* Did it end with a result (complete or auto-complete)? */
int		 run_end_ok(enum node_end);
/* Messages a child inherits (ancestors' tasks and finished results). */
void		 run_inherited(struct run *, const struct node *,
		    struct msg_list *);

/* run_sched.c: the --jobs queue and slots. */
/* Queue a node for a worker slot. */
void		 run_enqueue(struct run *, struct node *);
/* A worker process is gone: its slot and its process count. */
void		 run_worker_gone(struct run *, struct node *);
/* A worker waits only on its subagents: give its --jobs slot back. */
void		 run_slot_park(struct run *, struct node *, int parked);
/* Start queued nodes while slots are free. */
void		 run_schedule(struct run *);
/* Take a queued node out of the queue. */
void		 run_unqueue(struct run *, struct node *);

/* run_main.c: the run's loop, its cancellation and its end. */
/* Run the task to the end; returns a warren exit code. resume: the
 * root's messages of an interrupted run, or NULL. */
int		 run_main(struct run *, const struct msg_list *resume);
/* SIGINT/SIGTERM: cancel everything; hard = kill now. */
void		 run_cancel(struct run *, int hard);

/* run_record.c: what the run writes to its store as it goes. */
void		 run_record_event(struct run *, const struct node *,
		    const char *kind, const char *tool, const char *text);
/* The bytes run_record_event keeps of such an event. */
size_t		 run_event_bytes(const char *kind, const char *tool,
		    const char *text);
/* A store call failed: logged, unless it lost a write (store_lost), which
 * the next loop pass reports once and which stops the run (exit 6). */
void		 run_store_warn(struct run *, const char *fmt, ...)
		    __attribute__((format(printf, 2, 3)));
/* Append a message of n to the store; an assistant message carries the
 * usage of the turns that produced it. */
void		 run_store_msg(struct run *, struct node *, const struct msg *);
/* An agent's row and memory node (the parents of its node, or its
 * parent agent's when none). */
void		 run_store_agent(struct run *, struct node *,
		    const char *call_id, const int64_t *mem_parents,
		    size_t nmem_parents);
/* A lost write stops the run, once (exit 6). */
void		 run_store_check(struct run *);
/* An ended agent's status and result. */
void		 run_store_done(struct run *, struct node *);
/* The run's status; the exit code, 6 whenever a write was lost. */
int		 run_store_end(struct run *, int code);

/* run_summary.c: the node summary of a finished agent, the merge node
 * of parallel children. */
/* 1: an LLM summary was asked and run_node_tell() follows its answer;
 * 0: the summary (if any) is written, tell the parent now. Either way
 * what the store holds of n (its status too) is committed first. */
int		 run_summary_start(struct run *, struct node *);
/* A finished subagent joined into a merge node. */
struct run_merge_part {
	int64_t		 node;		/* its memory node */
	const char	*path;
	const char	*profile;
	const char	*result;	/* if its node has no summary */
};
int64_t		 run_merge_parts(struct run *, const char *parent_path,
		    const struct run_merge_part *, size_t n, int once);
/* The parallel children of one turn of parent all ended: one merge node. */
void		 run_merge(struct run *, struct node *parent,
		    struct node *const *children, size_t n);
/* A worker's next LLM turn (its synthesis step): merge the subagents it
 * delegated in parallel since its last turn. */
void		 run_batch_merge(struct run *, struct node *);
/* Tell the parent a node ended (after its summary), once what the store
 * holds of it is committed. */
void		 run_node_tell(struct run *, struct node *);
void		 run_tell_ready(struct run *);

/* run_resume.c */
struct store_plan;
struct store_plan_agent;
int		 run_resume_prepare(struct run *, const struct store_plan *,
		    struct msg_list *);
/* The root's child the interrupted run stored for call id (a pattern's
 * step: "CALL#STEP"), numbered floor or later, the latest such; NULL if
 * none. Borrowed from the resume plan. */
const struct store_plan_agent *run_resume_stored(const struct run *,
		    const char *call_id, unsigned floor);
/* Resume that child as a delegate's subagent is resumed: cb with its node
 * when it has ended (finished: from in here, after its summary if that
 * was never written; unfinished: restarted in place from its messages).
 * 0, or -1 if it cannot be resumed here (its profile is gone). */
int		 run_resume_step(struct run *, const struct store_plan_agent *,
		    node_done_fn cb, void *arg, struct node **childp);
void		 run_resume_free(struct run *);

/* run_parent.c: a run that dies with its parent (a parent-death signal
 * was set for it: `warren queue work`'s runs). */
/* At the start, before the loop takes the signals: note the parent. */
void		 run_parent_note(void);
/* Once the spawn server is known: watch the parent from a thread. */
void		 run_parent_watch(struct run *);
/* 1 if the noted parent is gone. */
int		 run_parent_gone(void);
/* The parent is gone: record the run as cancelled, exit 130. */
void		 run_parent_stop(struct run *) __attribute__((noreturn));

/* run_disk.c: the copy-on-write layer's disk limit. */
/* Workers run: watch the layer. */
void		 run_disk_watch(struct run *);
/* 1 if the layer is over disk_max (the run is now stopping). */
/* Before any worker: a copy's size, which is not the agents'. */
void		 run_disk_begin(struct run *);
/* The last measure, every worker gone: one that fails stops the run. */
void		 run_disk_end(struct run *);
/* A worker's RLIMIT_FSIZE no more than disk_max in a copy-on-write run. */
void		 run_disk_policy(const struct run *, struct sandbox_policy *);
/* run_hostexec.c: files that run code on the host, reported at the end. */
/* Before any agent runs: the snapshot (a resumed run's stored one). */
void		 run_hostexec_begin(struct run *, int resumed);
/* After every agent ended: compare, report, store the report. */
void		 run_hostexec_end(struct run *);
void		 run_hostexec_free(struct run *);

/* proc.c, proc_msg.c, proc_launch.c: worker processes, a state x event
 * table. */
struct spawn_child;
/* 0: started, or asked of the spawn server (proc_spawned follows). */
int		 proc_start(struct run *, struct node *);
/* The spawn server can take another request now. */
int		 proc_can_start(const struct run *);
/* The spawn server's answer for w: its process, or c NULL and why not. */
void		 proc_spawned(struct worker *, const struct spawn_child *c,
		    const char *err);
void		 proc_cancel(struct worker *, const char *reason);
void		 proc_kill(struct worker *, enum node_end, const char *reason);
void		 proc_killall(struct run *);
void		 proc_free(struct worker *);
void		 proc_policies_free(struct run *);
/* Send a spawn answer to the worker that asked (if still alive). */
/* A SIGCHLD arrived: reap every exited child. */
void		 proc_reap(struct run *);
/* The spawn server reaped worker pid (si_code, si_status). */
void		 proc_exit_pid(struct run *, pid_t, int code, int status);
/* The spawn server is gone: its workers are too. */
void		 proc_server_gone(struct run *);
/* proc_orphans.c: kill and reap children reparented to us (we are a
 * subreaper). */
void		 proc_sweep_orphans(pid_t keep);
/* SIGKILL every child of ours but keep, and its process group; no
 * reaping, so any thread may call it. */
void		 proc_kill_children(pid_t keep);

/* broker.c: every LLM turn goes through here. */
typedef void	(*broker_fn)(struct run *, void *arg, struct msg_reply *reply,
		    const char *code, const char *error);
/* Submit a turn for node; fn is called exactly once (maybe from here,
 * with an error, when refused by the budget). Returns a handle for
 * broker_cancel or 0 if fn was already called. */
uint64_t	 broker_submit(struct run *, struct node *, unsigned step,
		    enum ipc_purpose, const struct msg_list *,
		    const struct msg_tool *, size_t ntools, broker_fn, void *arg);
void		 broker_cancel(struct run *, uint64_t handle);
/*
 * A backend program's request (docs/backends.md), passed through to the
 * endpoint of its wire; fn gets the endpoint's answer (status, type,
 * body in res) or a code and an error, exactly once. Budget, cancel and
 * a wire the run's endpoint does not speak are refused from here.
 */
struct llm_result;
typedef void	(*broker_http_fn)(struct run *, void *arg,
		    const struct llm_result *res, const char *code,
		    const char *error);
/* A streamed answer's bytes as they come (part may be NULL). */
typedef void	(*broker_part_fn)(void *arg, const char *data, size_t len,
		    long status, const char *ctype);
uint64_t	 broker_http_submit(struct run *, struct node *,
		    const struct ipc_http *, broker_http_fn, broker_part_fn part,
		    void *arg);

/* orchestrator.c: the root agent, driven from the loop. */
/* resume: the root's messages of an earlier run (NULL: a fresh start). */
int		 orch_start(struct run *, const struct msg_list *resume,
		    char *err, size_t errsz);
void		 orch_cancel(struct run *, const char *reason);
void		 orch_free(struct run *);

/* ui.c: the live view (a terminal), the line log on stderr, or JSON
 * events on stdout (docs/supervisor.md, "What a run shows"). */
void		 ui_init(struct run *);
/* The run's loop starts: the live view, where it can be drawn. */
void		 ui_start(struct run *);
/* The run's loop has ended: the last frame, the log hook given back. */
void		 ui_end(struct run *);
void		 ui_spawned(struct node *, pid_t);
void		 ui_queued(const struct node *);
void		 ui_tool(struct node *, const char *tool, const char *args);
void		 ui_tool_result(struct node *, const char *tool,
		    const char *text, int is_error);
void		 ui_refused(struct node *parent, const char *profile,
		    const char *msg);
void		 ui_done(struct node *);
void		 ui_note(const struct node *, const char *what, const char *text);
/* The end: the summary (agents, tokens, time) on stderr, the result
 * once on stdout (or "run failed: why" on stderr). r may be NULL (a
 * resume of a run that had ended). */
void		 ui_result(const struct run *, const char *text, int ok,
		    int code);
/* The report of files that run code on the host (hostexec.h). */
void		 ui_host_files(struct json_t *report);
/* Write the JSON events held since the last call (once per loop pass). */
void		 ui_flush(void);
void		 ui_node_free(struct node *);

/* ui_json.c: one --json event line, keys in the order written. */
void		 ui_json_begin(const char *event);
void		 ui_json_open(const char *key);
void		 ui_json_close(void);
void		 ui_json_strn(const char *key, const char *s, size_t len);
void		 ui_json_str(const char *key, const char *s);
void		 ui_json_int(const char *key, long long v);
void		 ui_json_bool(const char *key, int v);
/* US dollars (price_usd), at most 6 decimals: 0.015 */
void		 ui_json_usd(const char *key, double usd);
int		 ui_json_tree(const char *key, const struct json_t *j);
int		 ui_json_object(const struct json_t *o);
void		 ui_json_end(FILE *out);

/* ui_sum.c: one short line of a tool call or result, raw (not escaped). */
/* The arguments that say what a call does: bash's command, a path, a
 * pattern, a subtask ... (not the JSON). */
void		 ui_sum_args(const char *tool, const char *args, char *buf,
		    size_t sz);
/* A result: bash "exit 1: last line", glob "12 files", grep "5 matches
 * in 2 files", else its last line. *bad: it failed (an error, a bash
 * exit status not 0, a signal, a timeout). */
void		 ui_sum_result(const char *tool, const char *text, int is_error,
		    int *bad, char *buf, size_t sz);
/* An edit's short diff: up to max lines of "- old" then "+ new", each
 * at most width bytes, raw; *more gets the lines left out. NULL-ended,
 * the caller frees it with ui_sum_lines_free; NULL if not an edit. */
char		**ui_sum_diff(const char *args, size_t max, size_t width,
		    size_t *more);
void		 ui_sum_lines_free(char **);
/* How long something took: "340 ms" under a second, else "12.3 s". */
void		 ui_sum_took(char *buf, size_t sz, uint64_t ms);

/* ui_live.c: the live tree on a terminal. */
/* 0: drawing (stderr is a terminal we could reopen), else -1. */
int		 ui_live_start(struct run *);
/* Something changed: the next tick redraws. */
void		 ui_live_dirty(void);
/* The last frame (every subtree folded), then stop drawing. */
void		 ui_live_stop(void);
int		 ui_live_on(void);

/* limits.c */
void		 limits_default(struct run_limits *);
/* Check a delegation against the limits: NULL if allowed, else the code
 * (IPC_ERR_*) with a message the model can act on. */
const char	*limits_check_delegate(const struct run *, const struct node *parent,
		    char *msg, size_t msgsz);
int		 limits_slot_free(const struct run *);
int		 limits_budget_left(const struct run *, char *msg, size_t msgsz);
/* Would rows and bytes more kept for a worker pass the store quota,
 * which already holds *rows and *bytes? 0 and the counts raised if not,
 * else -1 with the reason in msg. */
int		 limits_store_quota(const struct run *, uint64_t *rows,
		    uint64_t *bytes, uint64_t addrows, uint64_t addbytes,
		    char *msg, size_t msgsz);

#endif

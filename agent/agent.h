/*
 * The agent loop, sans I/O.
 *
 * One state machine runs the orchestrator (inside the supervisor's event
 * loop) and every subagent (inside a worker, driven by blocking calls).
 * It never reads a clock, opens a file or talks to a network: the driver
 * asks agent_next() what the agent needs, does it, and feeds the answer
 * back. Tests drive it with scripted answers.
 *
 *	struct agent_action act;
 *	for (;;) {
 *		switch (agent_next(a, now_ms(), &act)) {
 *		case AGENT_NEED_LLM:	reply = llm(act.messages, act.tools);
 *					agent_feed_llm(a, &reply);	break;
 *		case AGENT_NEED_TOOLS:	run act.calls (delegate = spawn);
 *					agent_feed_results(a, res, n);	break;
 *		case AGENT_NEED_DONE:	report act.status, act.result; return;
 *		}
 *	}
 *
 * agent_next() is idempotent while a request is outstanding: it returns the
 * same need (and the same borrowed pointers) until the answer is fed. Every
 * pointer in an agent_action is borrowed from the agent and stays valid
 * until the next agent_feed_*() or agent_free().
 *
 * Tool calls are validated before they are handed out: bad JSON, a missing
 * or mistyped field and an unknown tool become tool-error results for the
 * model (never a crash, never a NEED_TOOLS entry). complete, fail, todo and
 * note are answered inside the agent; only workspace tools (read, write,
 * edit, list, glob, grep, bash) and delegate reach the driver.
 */
#ifndef WARREN_AGENT_H
#define WARREN_AGENT_H

#include <stddef.h>
#include <stdint.h>

#include "common/msg.h"

struct agent;
struct profile;

enum agent_need {
	AGENT_NEED_LLM = 0,	/* an LLM turn: messages + tools */
	AGENT_NEED_TOOLS,	/* tool calls to execute, results in call order */
	AGENT_NEED_DONE,	/* finished: status, result, reason */
};

enum agent_llm_purpose {
	AGENT_LLM_TURN = 0,	/* a reasoning turn of the agent */
	AGENT_LLM_SUMMARY,	/* summarise dropped context (no tools sent) */
};

enum agent_status {
	AGENT_RUNNING = 0,
	AGENT_COMPLETE,		/* the model called complete(result) */
	AGENT_FAIL,		/* the model called fail(reason), or the LLM failed */
	AGENT_AUTO_COMPLETE,	/* no tool call after every reminder: last text */
	AGENT_LIMIT,		/* max iterations, timeout, loop, cancel */
};

enum agent_call_kind {
	AGENT_CALL_TOOL = 0,	/* a workspace tool: worker/tools.h runs it */
	AGENT_CALL_DELEGATE,	/* delegate(): the supervisor spawns a subagent */
	AGENT_CALL_COMPOSE,	/* plan_execute ...: the supervisor runs a
				   composition pattern (args: JSON, validated) */
	AGENT_CALL_MCP,		/* mcp__SERVER__TOOL: the supervisor calls
				   the MCP server (args: a JSON object) */
};

/* One validated call the driver must execute. Strings are borrowed. */
struct agent_call {
	size_t			 index;	/* position among the turn's calls */
	const char		*id;	/* the model's call id */
	const char		*name;	/* canonical tool name ("read", "delegate") */
	const char		*args;	/* JSON object text, validated */
	enum agent_call_kind	 kind;
	int			 parallel; /* may run concurrently with other
					      parallel calls of this batch */
	/* AGENT_CALL_DELEGATE only */
	const char		*profile;	/* profile name, "general" if omitted */
	const char		*task;
	int			 inherit_context;
	/* tool_filter: only these of the profile's tools (names as the
	 * model wrote them; the supervisor checks them) */
	const char *const	*tools;
	size_t			 ntools;
	int			 filtered;	/* tool_filter given (maybe []) */
};

/* The driver's answer to one agent_call. */
struct agent_result {
	const char	*text;		/* copied by the agent; NULL = empty */
	int		 is_error;
};

struct agent_action {
	enum agent_need		 need;

	/* AGENT_NEED_LLM */
	enum agent_llm_purpose	 purpose;
	const struct msg_list	*messages;	/* the context to send */
	const struct msg_tool	*tools;		/* NULL/0 for summaries */
	size_t			 ntools;

	/* AGENT_NEED_TOOLS */
	const struct agent_call	*calls;
	size_t			 ncalls;

	/* AGENT_NEED_DONE */
	enum agent_status	 status;
	const char		*result;	/* complete()'s result or last text */
	const char		*reason;	/* why it ended, for humans */
};

/* Context strategies, each a behavior (see docs/agent.md). */
enum agent_strategy {
	AGENT_CTX_DEFAULT = 0,		/* take the profile's */
	AGENT_CTX_APPEND,		/* append until full, then summarise */
	AGENT_CTX_HIERARCHICAL,		/* keep last N exchanges, clear on subtask */
	AGENT_CTX_NONE,			/* keep everything (tests, tiny tasks) */
};

struct agent_context_cfg {
	enum agent_strategy	 strategy;
	uint64_t		 budget_tokens;	/* context budget; 0 = 32000 */
	unsigned		 compact_pct;	/* append: summarise at this % of
						   the budget; 0 = 75 */
	unsigned		 keep_recent;	/* append: messages kept verbatim;
						   0 = 10 */
	unsigned		 keep_exchanges; /* hierarchical: last N
						    exchanges; 0 = 12 */
};

/* Zero fields take the defaults in brackets. */
struct agent_limits {
	unsigned	max_iterations;	/* LLM turns [50] */
	unsigned	nudge_iterations; /* nudge when this many remain [2] */
	uint64_t	timeout_ms;	/* wall clock from the first agent_next
					   [0 = none] */
	uint64_t	nudge_ms;	/* nudge at this age [timeout * 4/5] */
	unsigned	loop_threshold;	/* same call N times: warning [3] */
	unsigned	loop_stop;	/* ... M times: stop [threshold + 2] */
	unsigned	loop_window;	/* calls remembered for it [20] */
	unsigned	max_reminders;	/* reminders before auto-complete [2] */
	size_t		max_result;	/* bytes of one tool result kept in
					   context (head+tail) [64 KiB] */
};

enum agent_event_type {
	AGENT_EV_LLM = 0,	/* a turn was answered: text = its text */
	AGENT_EV_TOOL_CALL,	/* name, text = args */
	AGENT_EV_TOOL_RESULT,	/* name, text = result, is_error */
	AGENT_EV_REMINDER,	/* text = the reminder */
	AGENT_EV_NUDGE,		/* text = the nudge (iterations or time) */
	AGENT_EV_LOOP_WARNING,	/* name, text = the warning */
	AGENT_EV_SUMMARY,	/* text = the summary that replaced context */
	AGENT_EV_CLEAR,		/* hierarchical clear on a subtask change */
	AGENT_EV_DONE,		/* text = result, name = status name */
};

struct agent_event {
	enum agent_event_type	 type;
	const char		*path;		/* the agent's path ("0.1") */
	const char		*name;		/* tool name or NULL */
	const char		*text;		/* may be NULL; untrusted text */
	int			 is_error;
	unsigned		 iteration;
};

typedef void (*agent_event_fn)(const struct agent_event *ev, void *arg);

/* A profile a delegate call may name, as the model is told of it. */
struct agent_profile_ref {
	const char	*name;
	const char	*description;
};

struct agent_config {
	const struct profile	*profile;	/* required; borrowed for the
						   agent's life */
	const char		*path;		/* "0", "0.1", ... [ "0" ] */
	unsigned		 depth;		/* 0 = orchestrator */
	const char		*task;		/* the goal; required */
	const char		*system_extra;	/* appended to the system prompt
						   (workspace, date ...) */
	/* Ancestors' summaries (given by the supervisor), pinned after the
	 * system prompt and never dropped by a strategy. Copied. */
	const struct msg_list	*inherited;
	/* A checkpoint to resume from: messages an earlier run of this agent
	 * logged (agent_messages()), replayed into the context. Copied.
	 * One with no model turn (agent_resume_has_turn() false) is a start
	 * cut short: the agent starts as new, and its log begins again with
	 * what was stored (the supervisor skips that many). */
	const struct msg_list	*resume;
	struct agent_limits	 limits;
	struct agent_context_cfg context;	/* zero fields: the profile's */
	agent_event_fn		 on_event;
	void			*event_arg;
	/*
	 * A check of complete()'s result (the run's output schema): 0
	 * accepts it; otherwise why (the errors) answers the call as an
	 * error and the agent goes on. After max_rejections rejections
	 * [3] the agent fails with the last why. NULL: every result goes.
	 */
	/*
	 * The profiles delegate may name, built-in and the user's, with
	 * their descriptions: the delegate schema's "profile" is an enum of
	 * the names, its description lists what each is for. Copied into
	 * the schema. NULL: the tool's generic text.
	 */
	const struct agent_profile_ref *delegates;
	size_t			 ndelegates;
	/* MCP servers' tools (mcp__SERVER__TOOL, the supervisor's list):
	 * offered as given, their calls AGENT_CALL_MCP. Copied. */
	const struct msg_tool	*mcp_tools;
	size_t			 nmcp_tools;
	int			(*check_result)(void *arg, const char *result,
				    char *why, size_t whysz);
	void			*check_arg;
	unsigned		 max_rejections;
};

/*
 * Behaviors compose an agent. Each hook is optional. Tools a behavior
 * provides are answered by its handle_tool (internal tools); duplicate tool
 * names are refused by agent_add_behavior() (agent_testapi.h).
 */
enum agent_hook {
	AGENT_HOOK_GOAL_START = 0,
	AGENT_HOOK_TOOL_CALL,		/* after a call got its result */
	AGENT_HOOK_ROUND_END,		/* after a turn and its tools */
	AGENT_HOOK_TIMEOUT,		/* the wall clock or iteration limit */
	AGENT_HOOK_GOAL_COMPLETE,
	AGENT_HOOK_SUBTASK,		/* a todo item changed to completed */
};

struct agent_hook_info {
	enum agent_hook		 hook;
	const char		*name;		/* TOOL_CALL: tool name */
	const char		*args;		/* TOOL_CALL: its arguments */
	const char		*result;	/* TOOL_CALL: result text;
						   ROUND_END: the turn's text */
	int			 is_error;
	size_t			 ncalls;	/* ROUND_END: calls in the turn */
	int			 writes;	/* TOOL_CALL: the tool changes the
						   workspace (write, edit, bash) */
};

struct agent_behavior {
	const char		*name;
	/* Text added to the system prompt; NULL for none. */
	const char		*(*instructions)(void *self);
	/* Tools provided (names must be unique in the agent). */
	const struct msg_tool	*tools;
	size_t			 ntools;
	/* Its tools are MCP servers' (AGENT_CALL_MCP): the driver runs
	 * them, their arguments only checked to be a JSON object. */
	int			 mcp;
	/* Answer one of its tools: set *text (malloc'd) and *is_error;
	 * -1 only on ENOMEM. */
	int			(*handle_tool)(void *self, struct agent *a,
				    const char *name, const char *args,
				    char **text, int *is_error);
	/* Rewrite the context before a turn. Return 0, or -1 (ENOMEM). */
	int			(*before_turn)(void *self, struct agent *a,
				    struct msg_list *ctx);
	void			(*on_hook)(void *self, struct agent *a,
				    const struct agent_hook_info *info);
	void			(*free)(void *self);
};

/* agent.c */
/* NULL on error, with a message in err (bad config, ENOMEM). */
struct agent	*agent_new(const struct agent_config *cfg, char *err,
		    size_t errlen);
void		 agent_free(struct agent *a);

enum agent_need	 agent_next(struct agent *a, uint64_t now_ms,
		    struct agent_action *act);
/* Feed the answer to a NEED_LLM (copied). -1 if none was asked. */
int		 agent_feed_llm(struct agent *a, const struct msg_reply *r);
/* The LLM failed for good (after the client's retries): the agent ends
 * with AGENT_FAIL; a failed summary falls back to a plain list instead. */
int		 agent_feed_llm_error(struct agent *a, const char *error);
/* Results of the last NEED_TOOLS, n == act.ncalls, in call order. */
int		 agent_feed_results(struct agent *a,
		    const struct agent_result *res, size_t n);
/* Stop now (driver's cancel, worker killed): DONE, AGENT_LIMIT, reason. */
void		 agent_cancel(struct agent *a, const char *reason);

/* Append-only log of every message of the agent, in order (system prompt,
 * task, turns, results, reminders, summaries): checkpoint with "messages
 * since index N". Borrowed. */
const struct msg_list *agent_messages(const struct agent *a);
/* Whether a checkpoint holds a model turn (an assistant message). */
int		 agent_resume_has_turn(const struct msg_list *resume);
/* Usage totals reported by the API (summaries included). */
struct msg_usage agent_usage(const struct agent *a);
unsigned	 agent_iterations(const struct agent *a);
/* The absolute deadline (ms, the driver's clock), 0 when none or not
 * started: the event loop arms its timer with it. */
uint64_t	 agent_deadline_ms(const struct agent *a);
/* Inject a user message before the next turn (copied); -1 on ENOMEM. */
int		 agent_inject(struct agent *a, const char *text);
/* Fire a hook on every behavior (behaviors use it to signal others). */
void		 agent_fire(struct agent *a, const struct agent_hook_info *h);

#endif

/*
 * Inside the agent core: the agent's state and what the built-in behaviors
 * (termination, loop detection, todo, note, context strategies) may call.
 * Not for drivers: they use agent/agent.h.
 */
#ifndef WARREN_AGENT_INT_H
#define WARREN_AGENT_INT_H

#include <stddef.h>
#include <stdint.h>

#include "agent/agent.h"
#include "agent/tooldef.h"

#define AGENT_MAX_BEHAVIORS	16
#define AGENT_MAX_TOOLS		128	/* IPC_TOOLS_MAX: MCP tools */
#define AGENT_MAX_CALLS		64	/* calls of one turn; more are refused */
#define AGENT_MAX_TRANSCRIPT	(400u * 1024)	/* bytes sent to summarise */

enum agent_state {
	AGENT_ST_NEW = 0,
	AGENT_ST_READY,
	AGENT_ST_WAIT_LLM,
	AGENT_ST_WAIT_SUMMARY,
	AGENT_ST_WAIT_TOOLS,
	AGENT_ST_DONE,
};

struct agent_beh {
	struct agent_behavior	 ops;
	void			*self;
};

struct agent_tool_entry {
	struct msg_tool		 tool;		/* as sent to the model */
	const struct tooldef	*def;		/* NULL for a custom tool */
	size_t			 beh;		/* owning behavior */
	int			 external;	/* the driver runs it */
	int			 mcp;		/* an MCP server's tool */
};

/* One call of the current turn. */
struct agent_pending {
	size_t		 entry;		/* registry index, SIZE_MAX if unknown */
	int		 valid;
	int		 external;
	int		 answered;
	char		*text;		/* result (owned) */
	int		 is_error;
	char		*task;		/* delegate: parsed, owned */
	char		*profile;
	int		 inherit;
	char		**tools;	/* delegate: tool_filter, owned */
	size_t		 ntools;
	int		 filtered;	/* a tool_filter was given */
};

struct agent {
	enum agent_state	 state;
	const struct profile	*profile;
	char			*path;
	char			*task;
	char			*system_extra;
	unsigned		 depth;
	struct agent_limits	 lim;
	struct agent_context_cfg ctxcfg;
	agent_event_fn		 on_event;
	void			*event_arg;

	struct agent_beh	 behs[AGENT_MAX_BEHAVIORS];
	size_t			 nbehs;
	struct agent_tool_entry	 tools[AGENT_MAX_TOOLS];
	size_t			 ntools;
	struct msg_tool		 wire[AGENT_MAX_TOOLS];	/* shallow copies */
	size_t			 tools_chars;	/* of the schemas as sent */

	struct msg_list		 log;		/* append-only record */
	struct msg_list		 ctx;		/* what the model sees */
	size_t			 pinned;	/* ctx[0, pinned) never dropped */
	struct msg_list		 inherited;	/* until start */
	struct msg_list		 resume;	/* until start */

	/* the current turn's calls */
	struct agent_pending	*pend;
	size_t			 npend;
	struct agent_call	*calls;		/* the external ones */
	size_t			 ncalls;

	/* a summary in flight */
	struct msg_list		 sumreq;
	size_t			 sum_from, sum_to;
	int			 sum_wanted;

	uint64_t		 start_ms;
	uint64_t		 last_now;
	unsigned		 iterations;
	int			 nudged_iter, nudged_time;
	struct msg_usage	 usage;
	double			 tok_per_char;	/* calibrated; 0.25 before */
	size_t			 sent_chars;	/* chars of the last request */
	char			*last_text;	/* last non-empty assistant text */

	enum agent_status	 status;
	char			*result;
	char			*reason;
	char			*todo_text;	/* rendered by the todo behavior */
	char			*notes_text;	/* rendered by the note behavior */
	int			(*check_result)(void *, const char *, char *,
				    size_t);	/* agent_config's */
	void			*check_arg;
	unsigned		 max_rejections;
};

/* agent.c */
/* End the agent (the first call wins); hooks and events fire. */
void	agent_finish(struct agent *a, enum agent_status st, const char *result,
	    const char *reason);
void	agent_emit(struct agent *a, enum agent_event_type type,
	    const char *name, const char *text, int is_error);
/* strdup, NULL for NULL. */
char	*agent_strdup(const char *s);
/* Free the pending batch of calls (their checked arguments). */
void	agent_batch_free(struct agent *a);

/* agent_calls.c */
/* Check each call of m and make the batch the caller runs; -1 on ENOMEM. */
int	agent_make_batch(struct agent *a, const struct msg *m);
/* A call of m without an id gets call_<turn>_<i>, without a name "";
 * -1 on ENOMEM. */
int	agent_fix_ids(struct agent *a, struct msg *m);

/* agent_context.c */
/* Ask for ctx[from, to) to be summarised before the next turn. */
void	agent_request_summary(struct agent *a, size_t from, size_t to);
/* Replace ctx[from, to) with one user message (copied), also appended to
 * the record when record is set; -1 on ENOMEM. */
int	agent_replace(struct agent *a, size_t from, size_t to,
	    const char *text, int record);
/* "N messages: 3 assistant turns, tools read×2 grep×1, 2 user messages" */
char	*agent_describe(const struct agent *a, size_t from, size_t to);
/* Move a cut point back so no tool result is separated from its call. */
size_t	agent_safe_cut(const struct agent *a, size_t cut);
uint64_t agent_estimate(const struct agent *a);
/* Add the task list and notes (what must survive a drop) to b. */
struct buf;
void	agent_carry(const struct agent *a, struct buf *b);
/* A copy of s, cut in the middle to max bytes when longer (max >= 64),
 * invalid UTF-8 escaped (the APIs take only UTF-8); NULL on ENOMEM. */
char	*agent_clip(const char *s, size_t max);
/* Characters of l[from, to), the base of every estimate. */
size_t	agent_list_chars(const struct msg_list *l, size_t from, size_t to);
/* Fill a->sumreq with the transcript of ctx[sum_from, sum_to). */
int	agent_summary_request(struct agent *a);
/* Put the summary (or, with why, only a note) in place of that range. */
int	agent_summary_apply(struct agent *a, const char *summary,
	    const char *why);

/* behav_*.c: each fills ops and returns its state; NULL on ENOMEM. */
void	*behav_termination(struct agent_behavior *ops);
void	*behav_loop(struct agent_behavior *ops, const struct agent_limits *l);
void	*behav_todo(struct agent_behavior *ops);
void	*behav_note(struct agent_behavior *ops);
void	*behav_append(struct agent_behavior *ops,
	    const struct agent_context_cfg *c);
void	*behav_hier(struct agent_behavior *ops,
	    const struct agent_context_cfg *c);
/* The profile's workspace and delegate tools, run by the driver. */
void	*behav_workspace(struct agent_behavior *ops, const struct profile *p,
	    const struct agent_profile_ref *delegates, size_t ndelegates);
/* A tool table entry for tooldef t, into *tool (strings owned). */
int	behav_tool_from_def(const struct tooldef *t, struct msg_tool *tool);
void	behav_tools_free(struct msg_tool *v, size_t n);

/* behav_mcp.c */
void	*behav_mcp(struct agent_behavior *ops, const struct msg_tool *tools,
	    size_t n);

#endif

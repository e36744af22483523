/*
 * Inside proc.c, proc_msg.c and proc_launch.c: one worker process as the
 * supervisor sees it. Private to those files; the rest of the supervisor
 * knows only struct worker's name (run.h).
 */
#ifndef WARREN_PROC_INT_H
#define WARREN_PROC_INT_H

#include "ipc/ipc.h"
#include "sandbox/sandbox.h"
#include "spawnd/spawn.h"
#include "supervisor/run.h"

#define PROC_ERRLINE	512		/* one stderr line kept */
#define PROC_ERRMAX	(64u * 1024)	/* stderr bytes logged per worker */
#define PROC_EOF_MS	5000		/* channel closed -> kill if still alive */

enum proc_state {
	PROC_FORKING = 0,	/* asked of the spawn server, no pid yet */
	PROC_SPAWNING,		/* forked, waiting for hello */
	PROC_READY,		/* started, working on its own */
	PROC_BUSY,		/* waiting on the supervisor (llm, spawn) */
	PROC_DRAINING,		/* done or cancelled: waiting for its exit */
	PROC_DEAD,		/* reaped */
	PROC_NSTATES
};

enum proc_event {
	PROC_EV_HELLO = 0,
	PROC_EV_MESSAGE,
	PROC_EV_EXIT,
	PROC_EV_TIMEOUT,
	PROC_EV_CANCEL,
	PROC_NEVENTS
};

/* An LLM turn in flight for a worker; outlives the worker if need be. */
struct proc_llm {
	struct worker	*w;		/* NULL once the worker is gone */
	uint32_t	 id;
	uint64_t	 handle;
	int		 parts;		/* http: parts of a stream went */
	int		 broken;	/* http: a part could not go */
	struct proc_llm	*next;
};

struct worker {
	struct run		*run;
	struct node		*node;
	struct spawn_child	 child;
	struct ipc_peer		 peer;
	const struct sandbox_policy *policy;	/* its profile's, the run's */
	enum proc_state		 state;
	uint32_t		 spawn_id;	/* spawn server request in flight */
	uint64_t		 timer;
	int			 chan_open;	/* from_fd still in the loop */
	int			 out_armed;	/* EPOLLOUT requested */
	int			 got_done;
	enum node_end		 kill_end;	/* set when we killed it */
	char			*kill_reason;
	struct proc_llm		*llm;		/* turns in flight */
	unsigned		 nspawn;	/* subagents it waits for */
	int			 parked;
	char			 errline[PROC_ERRLINE];	/* last stderr line */
	size_t			 errlen;
	size_t			 errtotal;
	char			 errlast[PROC_ERRLINE];
	uint64_t		 store_rows;	/* its events and messages kept */
	uint64_t		 store_bytes;	/* (limits_store_quota) */
	int			 over_quota;	/* killed for it: keep no more */
	const struct ipc_msg	*msg;		/* the message being handled */
	LIST_ENTRY(worker)	 live_entry;	/* in run->live while on_live */
	int			 on_live;
	/* Its MCP servers (mcp_proc.c): start waits for each to list its
	   tools (or fail); the tools it may call, offered in start. */
	struct mcp_proc	*mcp;
	unsigned		 mcp_wait;
	int			 start_held;	/* hello came, start waits */
	struct msg_tool		*mcp_tools;
	size_t			 nmcp_tools;
};

/* proc.c: lifecycle helpers the message handlers use */
void	proc_send(struct worker *, const struct ipc_msg *);
/* proc_send, but -1 (nothing sent, the worker not blamed, err says why)
 * when m itself breaks the protocol's limits: a string or the frame too
 * long, too many entries. */
int	proc_send_answer(struct worker *, const struct ipc_msg *, char *err,
	    size_t errsz);
void	proc_arm(struct worker *, uint64_t ms);
void	proc_update_busy(struct worker *);
void	proc_out_of_turn(struct worker *);

/* proc_msg.c: the cells of the table that read a message */
void	proc_on_hello(struct worker *);
void	proc_on_message(struct worker *);
/* Every MCP server of w answered or failed: send start if held. */
void	proc_mcp_settled(struct worker *);
void	proc_drain_message(struct worker *);

/* proc_launch.c: what a worker is started with */
/* Its argv (freed by proc_argv_free). */
char	**proc_argv(struct worker *);
void	 proc_argv_free(char **);
/* n's profile's policy, made once a run; NULL and err says why. */
const struct sandbox_policy *proc_policy(struct run *, const struct node *,
	    char *err, size_t errsz);

#endif

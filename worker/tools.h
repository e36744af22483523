/*
 * The workspace tools, run by the worker: read, write, edit, list, glob,
 * grep, bash. Each takes its arguments as JSON text (validated again here:
 * the tools are a second line behind the agent's validation) and fills a
 * tool_result. Every path is resolved beneath the workspace root
 * (openat2 RESOLVE_BENEATH: "..", absolute paths outside the root and
 * symlinks that leave it are refused by the tool; the sandbox is the second
 * wall). The schemas are in agent/tooldef.c and docs/tools.md.
 *
 * todo, note, complete and fail are answered by the agent core; delegate by
 * the supervisor. tools_run() refuses them with a clear error.
 */
#ifndef WARREN_TOOLS_H
#define WARREN_TOOLS_H

#include <stddef.h>
#include <stdint.h>

#include "agent/agent.h"

#define TOOLS_DEFAULT_MAX_OUTPUT	(64u * 1024)	/* bytes of a result */
#define TOOLS_DEFAULT_BASH_TIMEOUT	(120u * 1000)	/* ms */
#define TOOLS_DEFAULT_READ_LINES	2000
#define TOOLS_DEFAULT_MAX_MATCHES	500		/* grep and glob */
#define TOOLS_MAX_THREADS		8

struct tool_ctx {
	char		*root;		/* workspace, absolute, no trailing / */
	int		 rootfd;	/* O_DIRECTORY|O_PATH fd of root */
	size_t		 max_output;	/* cap of one result's text */
	uint64_t	 bash_timeout_ms; /* default bash timeout (the call
					    may ask for less, not more) */
	unsigned	 max_threads;	/* parallel calls at once [4] */
	int		 walk_only;	/* openat2 refused: tool_open_walk */
	/*
	 * Called now and then by a tool that may run long (the directory
	 * walk under glob and grep), from whichever thread of a batch runs
	 * it: the worker sends the progress it held back (worker/hold.h).
	 * Must be thread-safe and cheap. NULL: nothing to call.
	 */
	void		(*progress)(void *);
	void		*progress_arg;
};

struct tool_result {
	char	*text;		/* malloc'd, NUL-terminated, never NULL
				   after tools_run */
	int	 is_error;
	int	 exit_status;	/* bash: exit code, 128+N for signal N,
				   -1 for a timeout; 0 otherwise */
};

/* tools.c */
/* Open the workspace (must be a directory); zero fields of limits get the
 * defaults. -1 with err set. */
int	tool_ctx_open(struct tool_ctx *ctx, const char *root, char *err,
	    size_t errlen);
void	tool_ctx_close(struct tool_ctx *ctx);
/* Whether name runs inside the worker, starting no program (not bash). */
int	tools_in_process(const char *name);
/*
 * Run a batch of agent calls (AGENT_CALL_TOOL only; a delegate call gets an
 * error result: the worker forwards those). Consecutive parallel calls run
 * together on up to max_threads POSIX threads; a call that is not
 * parallel-safe (write, edit, bash) runs alone, after everything before it
 * and before everything after it. res[i] answers calls[i]. 0, or -1 on
 * ENOMEM/thread failure (res then freed).
 */
int	tools_run_batch(const struct tool_ctx *ctx,
	    const struct agent_call *calls, size_t n, struct tool_result *res);
void	tool_result_free(struct tool_result *res);

#endif

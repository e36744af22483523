/*
 * Starting a worker: fork (through the sandbox, which may clone into new
 * namespaces) + exec of warren-worker with its IPC channel on fixed fds
 * (3: supervisor -> worker, 4: worker -> supervisor), stdin and stdout on
 * /dev/null, stderr on a pipe the supervisor drains into its log, every
 * other fd closed, its own session and process group, SIGKILL on the
 * supervisor's death, a clean environment, and the profile's sandbox
 * child phase (sandbox_child) before exec.
 */
#ifndef WARREN_SPAWN_H
#define WARREN_SPAWN_H

#include <sys/types.h>

#include <stdint.h>

#include "sandbox/sandbox.h"

#define SPAWN_FD_IN	3	/* the worker reads frames here */
#define SPAWN_FD_OUT	4	/* the worker writes frames here */
#define SPAWN_FD_BIN	5	/* the program, until exec (close-on-exec) */

struct spawn_req {
	const char			*bin;	/* path of warren-worker */
	char *const			*argv;
	char *const			*envp;	/* the worker's whole environment
						   (the sandbox's variable is added) */
	const struct sandbox_policy	*policy;
	/*
	 * SPAWN_STDIO: a program that is not warren-worker (an MCP server):
	 * its stdin and stdout are the two pipes (to_fd, from_fd), and the
	 * whole sandbox, phase 2 too, is applied before its exec.
	 */
	int				 mode;
};
#define SPAWN_WORKER	0
#define SPAWN_STDIO	1

struct spawn_child {
	pid_t		 pid;		/* the child we reap */
	int		 to_fd;		/* frames to the worker (non-blocking) */
	int		 from_fd;	/* frames from the worker (non-blocking) */
	int		 err_fd;	/* the worker's stderr (non-blocking) */
	struct sandbox	*sb;		/* kill/release through it */
	int		 remote;	/* started by the spawn server */
};

/* spawn.c */
/* -1 with a readable reason in err. */
int	spawn_worker(const struct spawn_req *, struct spawn_child *,
	    char *err, size_t errsz);
/* Signal the worker's whole tree (pid ns, cgroup, process group). */
void	spawn_kill(struct spawn_child *, int signo);
/* After reaping: kill stragglers, free the sandbox, close the fds. */
void	spawn_release(struct spawn_child *);
/* Before spawn_release: 1 if its memory group's OOM killer struck. */
int	spawn_oom_killed(const struct spawn_child *);
/*
 * The si_code of a worker's exit when its memory group's OOM killer killed
 * in it (with the exit's own si_status): what the spawn server reports in
 * SPAWND_EXIT, and the supervisor's reaper uses, instead of CLD_KILLED
 * (or the init's CLD_EXITED 137). Not a kernel CLD_* value.
 */
#define SPAWN_CLD_OOM	64
/*
 * warren's own directories in every sandbox of p: the state directory
 * masked, the config directory read-only (docs/sandbox.md, "What crosses
 * from the workspace back to the host"); and files, NULL-terminated or
 * NULL, masked. -1 with a readable reason.
 */
int	spawn_protect(struct sandbox_policy *p, const char *const *files,
	    char *err, size_t errsz);
/* The minimal environment every worker gets (no key, no proxy). */
char  **spawn_env(void);
void	spawn_env_free(char **);

#endif

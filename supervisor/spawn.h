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
};

struct spawn_child {
	pid_t		 pid;		/* the child we reap */
	int		 to_fd;		/* frames to the worker (non-blocking) */
	int		 from_fd;	/* frames from the worker (non-blocking) */
	int		 err_fd;	/* the worker's stderr (non-blocking) */
	struct sandbox	*sb;		/* kill/release through it */
	int		 remote;	/* started by the spawn server */
};

struct spawnd;

/* spawn.c */
/* -1 with a readable reason in err. */
int	spawn_worker(const struct spawn_req *, struct spawn_child *,
	    char *err, size_t errsz);
/* Signal the worker's whole tree (pid ns, cgroup, process group). */
void	spawn_kill(struct spawn_child *, int signo);
/* After reaping: kill stragglers, free the sandbox, close the fds. */
void	spawn_release(struct spawn_child *);
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

/* spawnd.c: the spawn server (forks workers for the supervisor). */
/* What the server's answers are delivered to (spawnd_read). */
struct spawnd_ops {
	/* The answer to spawnd_request(cookie): the worker (c->remote set,
	 * c->sb NULL), or c NULL and a readable reason in err. */
	void	(*spawned)(void *cookie, const struct spawn_child *c,
		    const char *err, void *arg);
	/* The server reaped worker pid (si_code, si_status). */
	void	(*exited)(pid_t pid, int code, int status, void *arg);
};

/* Requests in flight at most: beyond it, wait for an answer (the
 * requests of the server's queue then stay in the socket's buffer). */
#define SPAWND_INFLIGHT_MAX	8

/* Fork it now, before the key is read and the heap grows; NULL on error. */
struct spawnd	*spawnd_start(void);
int		 spawnd_fd(const struct spawnd *);
pid_t		 spawnd_pid(const struct spawnd *);
/* SPAWND_INFLIGHT_MAX requests are unanswered: ask later. */
int		 spawnd_full(const struct spawnd *);
/*
 * Ask the server for a worker, without waiting: the answer comes through
 * spawnd_read's ops->spawned(cookie, ...). Returns the request's id, or 0
 * with a reason in err (nothing will be delivered then).
 */
uint32_t	 spawnd_request(struct spawnd *, const struct spawn_req *,
		    void *cookie, char *err, size_t errsz);
/* Nobody waits for request id any more: its worker is killed on arrival. */
void		 spawnd_forget(struct spawnd *, uint32_t id);
/* Signal a worker's whole tree. */
void		 spawnd_kill(struct spawnd *, pid_t, int signo);
/* Deliver every answer and exit the server sent. 0 when drained, -1 when
 * the server is gone. */
int		 spawnd_read(struct spawnd *, const struct spawnd_ops *,
		    void *arg);
/* The server is gone: the cookie of each request left unanswered, once;
 * then NULL. */
void		*spawnd_orphan(struct spawnd *);
/* Close the channel (the server kills what is left and exits); reap it. */
void		 spawnd_stop(struct spawnd *);

#endif

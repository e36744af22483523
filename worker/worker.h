/*
 * The worker process: one subagent in its sandbox, driven with blocking
 * IPC calls to the supervisor (the only peer it has).
 */
#ifndef WARREN_WORKER_H
#define WARREN_WORKER_H

#include "worker/proxy.h"

struct sandbox_report;

struct worker_args {
	const char	*path;		/* agent path, from argv (trusted) */
	unsigned	 depth;
	const char	*profile;
	int		 trace;
	int		 in_fd;		/* frames from the supervisor */
	int		 out_fd;	/* frames to the supervisor */
	/* A backend's worker (--backend): the program it runs instead of
	 * the agent loop (worker/proxy.c). backend.backend NULL: none. */
	struct proxy_cfg backend;
};

/* worker.c */
/* After sandbox_enter(): hello, start, the agent, done. Returns an exit
 * code; any garbage from the supervisor is fatal. */
int	worker_main(const struct worker_args *, const struct sandbox_report *);

/* prefault.c */
/* First thing in main: map the pages the worker will write anyway. */
void	worker_prefault(void);

#endif

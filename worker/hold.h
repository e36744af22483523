/*
 * Progress held back for a while. Before a batch of in-process tools the
 * worker arms the hold instead of writing the tool_call events it queued:
 * if the tools end within the hold, those events go out with the results
 * and the next request, in one write; if a tool is still running when the
 * hold ends, its next progress tick (the directory walk under glob and
 * grep, tools.h) releases them, so the user sees a slow call while it
 * runs. Ticks come from any thread of the batch; the release runs once.
 *
 * Why (docs/benchmarks.md, "Profiles of a whole run"): a write the
 * worker follows with more work wakes the supervisor, which then waits
 * for the CPU the worker keeps, while the other CPU may be idle.
 */
#ifndef WARREN_HOLD_H
#define WARREN_HOLD_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>

struct hold {
	pthread_mutex_t	 lock;		/* one release at a time */
	atomic_int	 armed;
	uint64_t	 until;		/* release due at, ms (clock_mono_ms) */
	void		(*release)(void *);
	void		*arg;
};

/* hold.c */
void	hold_init(struct hold *h, void (*release)(void *), void *arg);
void	hold_free(struct hold *h);
/* Hold from now (ms, monotonic) for ms milliseconds. One thread, no batch
 * running. */
void	hold_arm(struct hold *h, uint64_t now, uint64_t ms);
/* A tool_ctx.progress hook (arg: the hold): hold_tick at the monotonic
 * clock (hold_testapi.h), read only while armed (the walk calls it for every entry). */
void	hold_progress(void *arg);
/* After the batch (every tick has returned): stop holding, release
 * nothing; what is still queued goes with the next write. */
void	hold_disarm(struct hold *h);

#endif

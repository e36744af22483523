/*
 * Composition patterns run by the supervisor for the orchestrator
 * (compose.c), and the parsing of their arguments and of a plan agent's
 * plan (compose_plan.c). docs/composition.md.
 */
#ifndef WARREN_COMPOSE_H
#define WARREN_COMPOSE_H

#include <stddef.h>

struct run;
struct agent_call;

enum compose_kind {
	COMPOSE_PLAN_EXECUTE = 0,
	COMPOSE_PARALLEL_EXPLORE,
	COMPOSE_SEQUENTIAL,
};

#define COMPOSE_MAX_STEPS	16	/* of a plan, aspects, or a sequence */
#define COMPOSE_ID_MAX		32	/* a plan step's id */
#define COMPOSE_TASK_MAX	(16u * 1024)	/* one step's task */

/* A pattern ended: its tool result (borrowed for the call). */
typedef void	(*compose_done_fn)(struct run *, void *arg, const char *text,
		    int is_error);

/* One step as parsed: owned strings, deps as indexes of earlier or later
 * steps of the same list. */
struct compose_stepdef {
	char	*id;
	char	*task;
	char	*profile;
	size_t	*deps;
	size_t	 ndeps;
};

/* compose.c */
const char	*compose_name(enum compose_kind);
/* The pattern a tool name calls: 0, or -1 if it names none. */
int		 compose_kind_of(const char *name, enum compose_kind *);
/*
 * Run the pattern call (a validated AGENT_CALL_COMPOSE) for the root: 0
 * and cb called exactly once later, from the loop (never from here); -1
 * and err for the model when its arguments are unusable.
 */
int		 compose_start(struct run *, const struct agent_call *,
		    compose_done_fn cb, void *arg, char *err, size_t errsz);
/*
 * warren resume: the orchestrator's pattern call (tool name, call id and
 * arguments as stored) that the interrupted run left unanswered, run
 * again keeping what its agents stored: a finished step's agent is not
 * run again (its stored result, memory node and place in the graph are
 * the step's), an unfinished one is restarted in place from its messages,
 * the rest start as usual. As compose_start otherwise.
 */
int		 compose_resume(struct run *, const char *name,
		    const char *id, const char *args, compose_done_fn cb,
		    void *arg, char *err, size_t errsz);
/* The run is over: free every pattern without calling back. */
void		 compose_free_all(struct run *);

/* compose_plan.c */
/*
 * The steps of a plan agent's answer: JSON {"steps":[{"id","task",
 * "profile","depends_on":[ids]}]} (or the bare array), possibly in prose or
 * a code fence. 0, or -1 and err saying what is wrong (unknown or
 * duplicate id, a cycle, too many steps ...).
 */
int		 compose_plan_parse(const char *text,
		    struct compose_stepdef **out, size_t *n, char *err,
		    size_t errsz);
/* A pattern's arguments: its task (plan_execute, parallel_explore) and
 * its steps (the aspects; the sequence). */
int		 compose_plan_args(enum compose_kind, const char *args,
		    char **task, struct compose_stepdef **out, size_t *n,
		    char *err, size_t errsz);

#endif

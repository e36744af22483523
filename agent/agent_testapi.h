/*
 * What tests call directly of the agent core: production reaches each
 * only through agent_new (its built-in behaviors), agent_next and the
 * events it emits. Only tests and the files defining these include this
 * (scripts/check-exports.py).
 */

#ifndef WARREN_AGENT_TESTAPI_H
#define WARREN_AGENT_TESTAPI_H

#include <stddef.h>
#include <stdint.h>

#include "agent/agent.h"

/* agent_new.c */
/* Add a behavior (takes ownership of self even on failure); -1 with a
 * message naming the conflicting tool. Only before the first agent_next. */
int		 agent_add_behavior(struct agent *a,
		    const struct agent_behavior *b, void *self, char *err,
		    size_t errlen);

/* agent.c */
/* The context the next turn will see. Borrowed. */
const struct msg_list *agent_context(const struct agent *a);
/* Running, or how it ended. */
enum agent_status agent_status(const struct agent *a);
/* The todo list as text ("" when empty); borrowed. */
const char	*agent_todo_text(const struct agent *a);

/* agent_context.c */
/* Estimated tokens of the current context (calibrated, see docs). */
uint64_t	 agent_context_tokens(const struct agent *a);

#endif

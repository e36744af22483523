/*
 * Loop detection: the same tool with the same arguments, seen loop_threshold
 * times among the last loop_window calls, injects a warning; seen loop_stop
 * times, it ends the agent (AGENT_LIMIT) with that reason. A call that
 * changes the workspace (write, edit, bash) forgets the history: after it,
 * reading the same file again is progress, not a loop.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "agent/agent_int.h"

struct behav_loop {
	uint64_t	*ring;
	unsigned	 window;
	unsigned	 n;		/* entries in use */
	unsigned	 next;
	unsigned	 threshold;
	unsigned	 stop;
};

/* FNV-1a over name, a separator and the arguments. */
static uint64_t
behav_loop_hash(const char *name, const char *args)
{
	uint64_t		 h = 1469598103934665603ULL;
	const unsigned char	*p;

	for (p = (const unsigned char *)name; *p != '\0'; p++)
		h = (h ^ *p) * 1099511628211ULL;
	h = (h ^ 0xff) * 1099511628211ULL;
	for (p = (const unsigned char *)args; *p != '\0'; p++)
		h = (h ^ *p) * 1099511628211ULL;
	return h;
}

static void
behav_loop_hook(void *self, struct agent *a, const struct agent_hook_info *h)
{
	struct behav_loop	*l = self;
	uint64_t		 sig;
	unsigned		 i, count = 1;
	char			 msg[512];

	if (h->hook != AGENT_HOOK_TOOL_CALL || a->status != AGENT_RUNNING)
		return;
	if (h->writes && !h->is_error) {
		l->n = l->next = 0;
		return;
	}
	sig = behav_loop_hash(h->name, h->args);
	for (i = 0; i < l->n; i++)
		if (l->ring[i] == sig)
			count++;
	l->ring[l->next] = sig;
	l->next = (l->next + 1) % l->window;
	if (l->n < l->window)
		l->n++;
	if (count >= l->stop) {
		snprintf(msg, sizeof(msg), "loop detected: %.64s called %u "
		    "times with the same arguments", h->name, count);
		agent_finish(a, AGENT_LIMIT, a->last_text, msg);
		return;
	}
	if (count >= l->threshold) {
		snprintf(msg, sizeof(msg), "Warning: you called %.64s with the "
		    "same arguments %u times; the result will not change. Try "
		    "something different, or call complete(result) or "
		    "fail(reason). At %u times the agent is stopped.", h->name,
		    count, l->stop);
		if (agent_inject(a, msg) == 0)
			agent_emit(a, AGENT_EV_LOOP_WARNING, h->name, msg, 0);
	}
}

static void
behav_loop_free(void *self)
{
	struct behav_loop	*l = self;

	if (l == NULL)
		return;
	free(l->ring);
	free(l);
}

void *
behav_loop(struct agent_behavior *ops, const struct agent_limits *lim)
{
	struct behav_loop	*l;

	memset(ops, 0, sizeof(*ops));
	if ((l = calloc(1, sizeof(*l))) == NULL)
		return NULL;
	l->window = lim->loop_window;
	l->threshold = lim->loop_threshold;
	l->stop = lim->loop_stop;
	if ((l->ring = calloc(l->window, sizeof(*l->ring))) == NULL) {
		free(l);
		return NULL;
	}
	ops->name = "loop-detection";
	ops->on_hook = behav_loop_hook;
	ops->free = behav_loop_free;
	return l;
}

/*
 * A scripted model for the agent tests: build replies (text, calls, usage)
 * and feed them; no process, no network, time passed in by the test.
 */
#ifndef WARREN_TEST_SCRIPT_H
#define WARREN_TEST_SCRIPT_H

#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "agent/agent.h"
#include "agent/profile.h"
#include "common/msg.h"

/* A reply with text (may be NULL) and ncalls calls given as name, args. */
static inline struct msg_reply *
script_reply(const char *text, size_t ncalls, ...)
{
	struct msg_reply	*r = calloc(1, sizeof(*r));
	va_list			 ap;
	char			 id[32];
	size_t			 i;
	static unsigned		 seq;

	r->msg.role = MSG_ASSISTANT;
	r->msg.text = text ? strdup(text) : NULL;
	va_start(ap, ncalls);
	for (i = 0; i < ncalls; i++) {
		const char *name = va_arg(ap, const char *);
		const char *args = va_arg(ap, const char *);

		snprintf(id, sizeof(id), "c%u", ++seq);
		msg_add_call(&r->msg, id, name, args);
	}
	va_end(ap);
	r->stop = ncalls ? MSG_STOP_TOOL_CALLS : MSG_STOP_END;
	return r;
}

static inline void
script_feed(struct agent *a, struct msg_reply *r)
{
	if (agent_feed_llm(a, r) != 0)
		abort();
	msg_reply_free(r);
	free(r);
}

/* Answer every external call with "ok NAME" (or a fixed text). */
static inline void
script_results(struct agent *a, const struct agent_action *act,
    const char *text)
{
	struct agent_result	res[64];
	char			buf[64][128];
	size_t			i;

	for (i = 0; i < act->ncalls && i < 64; i++) {
		snprintf(buf[i], sizeof(buf[i]), "ok %s", act->calls[i].name);
		res[i].text = text ? text : buf[i];
		res[i].is_error = 0;
	}
	if (agent_feed_results(a, res, act->ncalls) != 0)
		abort();
}

static inline struct agent *
script_agent(const char *profile, const char *task,
    const struct agent_limits *lim, const struct agent_context_cfg *ctx)
{
	struct agent_config	cfg;
	struct agent		*a;
	char			err[256];

	memset(&cfg, 0, sizeof(cfg));
	cfg.profile = profile_builtin(profile);
	cfg.task = task;
	cfg.path = "0.1";
	cfg.depth = 1;
	if (lim != NULL)
		cfg.limits = *lim;
	if (ctx != NULL)
		cfg.context = *ctx;
	if ((a = agent_new(&cfg, err, sizeof(err))) == NULL) {
		fprintf(stderr, "agent_new: %s\n", err);
		abort();
	}
	return a;
}

/* Every tool result in l answers a call of an assistant message before it,
 * and every call has its result: no pair is separated or orphaned. */
static inline int
script_pairs_intact(const struct msg_list *l)
{
	size_t	i, j, k;

	for (i = 0; i < l->n; i++) {
		const struct msg *m = &l->v[i];

		if (m->role != MSG_ASSISTANT)
			continue;
		for (k = 0; k < m->ncalls; k++) {
			for (j = i + 1; j < l->n && l->v[j].role == MSG_TOOL;
			    j++)
				if (strcmp(l->v[j].call_id, m->calls[k].id) ==
				    0)
					break;
			if (j >= l->n || l->v[j].role != MSG_TOOL)
				return 0;
		}
	}
	for (i = 0; i < l->n; i++) {
		if (l->v[i].role != MSG_TOOL)
			continue;
		for (j = i; j > 0; j--)
			if (l->v[j - 1].role != MSG_TOOL)
				break;
		if (j == 0 || l->v[j - 1].role != MSG_ASSISTANT)
			return 0;
		for (k = 0; k < l->v[j - 1].ncalls; k++)
			if (strcmp(l->v[j - 1].calls[k].id,
			    l->v[i].call_id) == 0)
				break;
		if (k == l->v[j - 1].ncalls)
			return 0;
	}
	return 1;
}

static inline size_t
script_count_text(const struct msg_list *l, const char *needle)
{
	size_t	i, n = 0;

	for (i = 0; i < l->n; i++)
		if (l->v[i].text != NULL && strstr(l->v[i].text, needle))
			n++;
	return n;
}

#endif

/*
 * Append until full: the context grows until its estimated size reaches
 * compact_pct of the budget; then everything between the pinned prefix
 * (system prompt, inherited summaries, task) and the keep_recent most
 * recent messages is summarised by an LLM call and replaced by the summary,
 * which also records what was dropped. The cut never falls between an
 * assistant's tool calls and their results. An earlier summary is part of
 * the next range, so summaries roll up instead of piling up.
 */
#include <stdlib.h>
#include <string.h>

#include "agent/agent_int.h"

struct behav_append {
	struct agent_context_cfg	cfg;
};

static int
behav_append_before(void *self, struct agent *a, struct msg_list *ctx)
{
	struct behav_append	*ap = self;
	uint64_t		 limit;
	size_t			 cut;

	limit = ap->cfg.budget_tokens * ap->cfg.compact_pct / 100;
	if (agent_estimate(a) < limit || ctx->n <= a->pinned + 1 ||
	    ctx->n <= ap->cfg.keep_recent)
		return 0;
	cut = agent_safe_cut(a, ctx->n - ap->cfg.keep_recent);
	/* One message is not worth an LLM call (and could be our summary). */
	if (cut < a->pinned + 2)
		return 0;
	agent_request_summary(a, a->pinned, cut);
	return 0;
}

void *
behav_append(struct agent_behavior *ops, const struct agent_context_cfg *c)
{
	struct behav_append	*ap;

	memset(ops, 0, sizeof(*ops));
	if ((ap = calloc(1, sizeof(*ap))) == NULL)
		return NULL;
	ap->cfg = *c;
	ops->name = "context-append";
	ops->before_turn = behav_append_before;
	ops->free = free;
	return ap;
}

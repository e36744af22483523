/*
 * Hierarchical context: the model sees the pinned prefix (system prompt,
 * inherited summaries, task), one marker of what was dropped (with the task
 * list and notes), and the last keep_exchanges exchanges (an exchange = an
 * assistant turn with its tool results and any message after them). When a
 * todo item is completed (a subtask transition) everything before the
 * current exchange is cleared. No LLM call is made.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "agent/agent_int.h"
#include "common/buf.h"

#define HIER_MARKER	"[Earlier context dropped"

struct behav_hier {
	struct agent_context_cfg	 cfg;
	int				 clear;		/* subtask done */
	char				*subtask;
	size_t				 dropped;	/* messages, in total */
};

static void
behav_hier_hook(void *self, struct agent *a, const struct agent_hook_info *h)
{
	struct behav_hier	*hr = self;

	(void)a;
	if (h->hook != AGENT_HOOK_SUBTASK)
		return;
	hr->clear = 1;
	free(hr->subtask);
	hr->subtask = h->name != NULL ? strdup(h->name) : NULL;
}

/* Index of the k-th assistant message from the end, or SIZE_MAX. */
static size_t
behav_hier_nth_turn(const struct agent *a, const struct msg_list *ctx,
    size_t k)
{
	size_t	i, seen = 0;

	for (i = ctx->n; i > a->pinned; i--)
		if (ctx->v[i - 1].role == MSG_ASSISTANT && ++seen == k)
			return i - 1;
	return SIZE_MAX;
}

static int
behav_hier_before(void *self, struct agent *a, struct msg_list *ctx)
{
	struct behav_hier	*hr = self;
	struct buf		 b;
	size_t			 cut;
	char			*what, *text;
	int			 rc, cleared = hr->clear;

	if (hr->clear)
		cut = behav_hier_nth_turn(a, ctx, 1);
	else
		cut = behav_hier_nth_turn(a, ctx, hr->cfg.keep_exchanges);
	hr->clear = 0;
	if (cut == SIZE_MAX || cut <= a->pinned)
		return 0;
	/* Only the old marker before the cut: nothing new to drop. */
	if (cut == a->pinned + 1 && ctx->v[a->pinned].text != NULL &&
	    strncmp(ctx->v[a->pinned].text, HIER_MARKER,
	    strlen(HIER_MARKER)) == 0 && !cleared)
		return 0;
	if ((what = agent_describe(a, a->pinned, cut)) == NULL)
		return -1;
	hr->dropped += cut - a->pinned;
	buf_init(&b, 0);
	if (cleared)
		buf_addf(&b, "%s: subtask \"%.200s\" completed, context "
		    "cleared (%zu messages dropped in all; this time %s).]\n",
		    HIER_MARKER, hr->subtask ? hr->subtask : "?", hr->dropped,
		    what);
	else
		buf_addf(&b, "%s: only the last %u exchanges are kept (%zu "
		    "messages dropped in all; this time %s).]\n", HIER_MARKER,
		    hr->cfg.keep_exchanges, hr->dropped, what);
	agent_carry(a, &b);
	free(what);
	if ((text = buf_release(&b, NULL)) == NULL)
		return -1;
	/* A clear is an event worth recording; the rolling window's marker
	 * changes every turn and would only fill the record. */
	rc = agent_replace(a, a->pinned, cut, text, cleared);
	if (rc == 0)
		agent_emit(a, cleared ? AGENT_EV_CLEAR : AGENT_EV_SUMMARY,
		    NULL, text, 0);
	free(text);
	return rc;
}

static void
behav_hier_free(void *self)
{
	struct behav_hier	*hr = self;

	if (hr == NULL)
		return;
	free(hr->subtask);
	free(hr);
}

void *
behav_hier(struct agent_behavior *ops, const struct agent_context_cfg *c)
{
	struct behav_hier	*hr;

	memset(ops, 0, sizeof(*ops));
	if ((hr = calloc(1, sizeof(*hr))) == NULL)
		return NULL;
	hr->cfg = *c;
	ops->name = "context-hierarchical";
	ops->before_turn = behav_hier_before;
	ops->on_hook = behav_hier_hook;
	ops->free = behav_hier_free;
	return hr;
}

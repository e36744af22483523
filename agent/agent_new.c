/*
 * An agent made and freed: its configuration with defaults, its tools and
 * the behaviors it runs (built-in ones first, in registration order).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "agent/agent_int.h"
#include "agent/profile.h"
#include "agent/agent_testapi.h"

#define AGENT_DEFAULT_TOK_PER_CHAR	0.25

static int
agent_add_beh(struct agent *a, const struct agent_behavior *b, void *self,
    int builtin, char *err, size_t errlen)
{
	struct agent_tool_entry	*e;
	size_t			 i, j, n0 = a->ntools;

	if (a->state != AGENT_ST_NEW) {
		snprintf(err, errlen, "behavior %s: the agent has started",
		    b->name);
		goto fail;
	}
	if (a->nbehs == AGENT_MAX_BEHAVIORS ||
	    a->ntools + b->ntools > AGENT_MAX_TOOLS) {
		snprintf(err, errlen, "behavior %s: too many behaviors or "
		    "tools (limits %d, %d)", b->name, AGENT_MAX_BEHAVIORS,
		    AGENT_MAX_TOOLS);
		goto fail;
	}
	for (i = 0; i < b->ntools; i++) {
		for (j = 0; j < a->ntools; j++) {
			if (strcmp(a->tools[j].tool.name, b->tools[i].name)
			    != 0)
				continue;
			snprintf(err, errlen, "behavior %s: tool \"%s\" is "
			    "already provided by behavior %s", b->name,
			    b->tools[i].name, a->behs[a->tools[j].beh].ops.name);
			goto fail;
		}
		e = &a->tools[a->ntools];
		memset(e, 0, sizeof(*e));
		if (msg_tool_copy(&e->tool, &b->tools[i]) == -1) {
			snprintf(err, errlen, "out of memory");
			goto fail;
		}
		e->beh = a->nbehs;
		if (builtin)
			e->def = tooldef_find(b->tools[i].name);
		e->external = e->def != NULL && e->def->where != TOOLDEF_AGENT;
		if (b->mcp)
			e->external = e->mcp = 1;
		if (!e->external && b->handle_tool == NULL) {
			msg_tool_free(&e->tool);
			snprintf(err, errlen, "behavior %s: tool \"%s\" has no "
			    "handler", b->name, b->tools[i].name);
			goto fail;
		}
		a->ntools++;
	}
	a->behs[a->nbehs].ops = *b;
	a->behs[a->nbehs].self = self;
	a->nbehs++;
	return 0;
 fail:
	while (a->ntools > n0)
		msg_tool_free(&a->tools[--a->ntools].tool);
	if (b->free != NULL)
		b->free(self);
	return -1;
}

int
agent_add_behavior(struct agent *a, const struct agent_behavior *b,
    void *self, char *err, size_t errlen)
{
	return agent_add_beh(a, b, self, 0, err, errlen);
}

static int
agent_add_builtin(struct agent *a, void *self, struct agent_behavior *ops,
    char *err, size_t errlen)
{
	if (self == NULL) {
		snprintf(err, errlen, "out of memory");
		return -1;
	}
	return agent_add_beh(a, ops, self, 1, err, errlen);
}

static void
agent_defaults(struct agent *a, const struct agent_config *cfg)
{
	const struct agent_context_cfg	*pc = &cfg->profile->context;
	const struct agent_context_cfg	*cc = &cfg->context;
	struct agent_limits		*l = &a->lim;

	*l = cfg->limits;
	if (l->max_iterations == 0)
		l->max_iterations = 50;
	if (l->nudge_iterations == 0)
		l->nudge_iterations = 2;
	if (l->timeout_ms != 0 && l->nudge_ms == 0)
		l->nudge_ms = l->timeout_ms / 5 * 4;
	if (l->loop_threshold == 0)
		l->loop_threshold = 3;
	if (l->loop_stop <= l->loop_threshold)
		l->loop_stop = l->loop_threshold + 2;
	if (l->loop_window == 0)
		l->loop_window = 20;
	if (l->max_reminders == 0)
		l->max_reminders = 2;
	if (l->max_result == 0)
		l->max_result = 64 * 1024;

	a->ctxcfg.strategy = cc->strategy ? cc->strategy : pc->strategy;
	if (a->ctxcfg.strategy == AGENT_CTX_DEFAULT)
		a->ctxcfg.strategy = AGENT_CTX_APPEND;
	a->ctxcfg.budget_tokens = cc->budget_tokens ? cc->budget_tokens :
	    pc->budget_tokens ? pc->budget_tokens : 32000;
	a->ctxcfg.compact_pct = cc->compact_pct ? cc->compact_pct :
	    pc->compact_pct ? pc->compact_pct : 75;
	if (a->ctxcfg.compact_pct > 100)
		a->ctxcfg.compact_pct = 100;
	a->ctxcfg.keep_recent = cc->keep_recent ? cc->keep_recent :
	    pc->keep_recent ? pc->keep_recent : 10;
	a->ctxcfg.keep_exchanges = cc->keep_exchanges ? cc->keep_exchanges :
	    pc->keep_exchanges ? pc->keep_exchanges : 12;
}

static int
agent_builtins(struct agent *a, const struct agent_config *cfg, char *err,
    size_t errlen)
{
	struct agent_behavior	ops;

	if (agent_add_builtin(a, behav_workspace(&ops, a->profile,
	    cfg->delegates, cfg->ndelegates), &ops, err, errlen) == -1)
		return -1;
	if (cfg->nmcp_tools > 0 && agent_add_builtin(a, behav_mcp(&ops,
	    cfg->mcp_tools, cfg->nmcp_tools), &ops, err, errlen) == -1)
		return -1;
	if (profile_has_tool(a->profile, "todo") &&
	    agent_add_builtin(a, behav_todo(&ops), &ops, err, errlen) == -1)
		return -1;
	if (profile_has_tool(a->profile, "note") &&
	    agent_add_builtin(a, behav_note(&ops), &ops, err, errlen) == -1)
		return -1;
	if (agent_add_builtin(a, behav_termination(&ops), &ops, err,
	    errlen) == -1)
		return -1;
	if (agent_add_builtin(a, behav_loop(&ops, &a->lim), &ops, err,
	    errlen) == -1)
		return -1;
	switch (a->ctxcfg.strategy) {
	case AGENT_CTX_APPEND:
		return agent_add_builtin(a, behav_append(&ops, &a->ctxcfg),
		    &ops, err, errlen);
	case AGENT_CTX_HIERARCHICAL:
		return agent_add_builtin(a, behav_hier(&ops, &a->ctxcfg),
		    &ops, err, errlen);
	case AGENT_CTX_DEFAULT:
	case AGENT_CTX_NONE:
		break;
	}
	return 0;
}

struct agent *
agent_new(const struct agent_config *cfg, char *err, size_t errlen)
{
	struct agent	*a;

	if (cfg == NULL || cfg->profile == NULL || cfg->task == NULL) {
		snprintf(err, errlen, "agent: a profile and a task are "
		    "required");
		return NULL;
	}
	if ((a = calloc(1, sizeof(*a))) == NULL) {
		snprintf(err, errlen, "agent: out of memory");
		return NULL;
	}
	msg_list_init(&a->log);
	msg_list_init(&a->ctx);
	msg_list_init(&a->inherited);
	msg_list_init(&a->resume);
	msg_list_init(&a->sumreq);
	a->profile = cfg->profile;
	a->depth = cfg->depth;
	a->on_event = cfg->on_event;
	a->event_arg = cfg->event_arg;
	a->check_result = cfg->check_result;
	a->check_arg = cfg->check_arg;
	a->max_rejections = cfg->max_rejections ? cfg->max_rejections : 3;
	a->tok_per_char = AGENT_DEFAULT_TOK_PER_CHAR;
	a->path = strdup(cfg->path != NULL ? cfg->path : "0");
	a->task = strdup(cfg->task);
	a->system_extra = agent_strdup(cfg->system_extra);
	if (a->path == NULL || a->task == NULL ||
	    (cfg->system_extra != NULL && a->system_extra == NULL) ||
	    (cfg->inherited != NULL &&
	    msg_list_copy(&a->inherited, cfg->inherited) == -1) ||
	    (cfg->resume != NULL &&
	    msg_list_copy(&a->resume, cfg->resume) == -1)) {
		snprintf(err, errlen, "agent: out of memory");
		goto fail;
	}
	agent_defaults(a, cfg);
	if (agent_builtins(a, cfg, err, errlen) == -1)
		goto fail;
	return a;
 fail:
	agent_free(a);
	return NULL;
}

void
agent_free(struct agent *a)
{
	size_t	i;

	if (a == NULL)
		return;
	agent_batch_free(a);
	for (i = 0; i < a->nbehs; i++)
		if (a->behs[i].ops.free != NULL)
			a->behs[i].ops.free(a->behs[i].self);
	for (i = 0; i < a->ntools; i++)
		msg_tool_free(&a->tools[i].tool);
	msg_list_free(&a->log);
	msg_list_free(&a->ctx);
	msg_list_free(&a->inherited);
	msg_list_free(&a->resume);
	msg_list_free(&a->sumreq);
	free(a->path);
	free(a->task);
	free(a->system_extra);
	free(a->last_text);
	free(a->result);
	free(a->reason);
	free(a->todo_text);
	free(a->notes_text);
	free(a);
}

/*
 * A model's tool calls checked before anything runs: the tool known and
 * offered, its arguments valid against its schema (and a tool filter
 * against the profile), missing call ids and names filled in, and the
 * batch of calls the caller runs.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "agent/agent_int.h"
#include "agent/profile.h"
#include "common/buf.h"

static const struct agent_tool_entry *
agent_tool(const struct agent *a, const char *name, size_t *idx)
{
	size_t	i;

	for (i = 0; name != NULL && i < a->ntools; i++)
		if (strcmp(a->tools[i].tool.name, name) == 0) {
			*idx = i;
			return &a->tools[i];
		}
	*idx = SIZE_MAX;
	return NULL;
}

static char *
agent_unknown_tool(const struct agent *a, const char *name)
{
	struct buf	b;
	size_t		i;

	buf_init(&b, 0);
	buf_addf(&b, "unknown tool \"%.64s\"; your tools are:", name ? name :
	    "");
	for (i = 0; i < a->ntools; i++)
		buf_addf(&b, "%s %s", i ? "," : "", a->tools[i].tool.name);
	return buf_release(&b, NULL);
}

/*
 * delegate's tool_filter: names (strings, at most PROFILE_MAX_TOOLS); a
 * wrong one makes the call an error for the model. Whether each is a tool
 * of the profile is the supervisor's check (run_delegate_as). -1: ENOMEM.
 */
static int
agent_check_filter(struct agent_pending *p, const json_t *v)
{
	const json_t	*t;
	size_t		 i;

	if (v == NULL)
		return 0;
	p->filtered = 1;
	if (json_array_size(v) > PROFILE_MAX_TOOLS) {
		p->valid = 0;
		p->is_error = 1;
		p->text = strdup("delegate: tool_filter names more tools than "
		    "a profile has");
		return p->text == NULL ? -1 : 0;
	}
	if ((p->tools = calloc(json_array_size(v) + 1,
	    sizeof(*p->tools))) == NULL)
		return -1;
	json_array_foreach(v, i, t) {
		if (!json_is_string(t) || json_string_length(t) == 0 ||
		    json_string_length(t) > 64) {
			p->valid = 0;
			p->is_error = 1;
			p->text = strdup("delegate: tool_filter must be an "
			    "array of tool names, e.g. [\"read\", \"grep\"]");
			return p->text == NULL ? -1 : 0;
		}
		if ((p->tools[p->ntools++] = strdup(json_string_value(t))) ==
		    NULL)
			return -1;
	}
	return 0;
}

static int
agent_check_call(struct agent *a, const struct msg_call *c,
    struct agent_pending *p)
{
	const struct agent_tool_entry	*e;
	json_t				*root, *v;
	char				 err[512];
	int				 rc;

	if ((e = agent_tool(a, c->name, &p->entry)) == NULL) {
		p->is_error = 1;
		p->text = agent_unknown_tool(a, c->name);
		return p->text == NULL ? -1 : 0;
	}
	if (e->def != NULL) {
		if (tooldef_validate(e->def, c->args, err, sizeof(err)) == -1) {
			p->is_error = 1;
			p->text = strdup(err);
			return p->text == NULL ? -1 : 0;
		}
	} else {
		root = json_loads(c->args ? c->args : "", 0, NULL);
		if (!json_is_object(root)) {
			json_decref(root);
			p->is_error = 1;
			p->text = strdup("arguments must be a JSON object");
			return p->text == NULL ? -1 : 0;
		}
		json_decref(root);
	}
	p->valid = 1;
	p->external = e->external;
	if (e->def == NULL || e->def->where != TOOLDEF_DELEGATE)
		return 0;
	if ((root = json_loads(c->args, 0, NULL)) == NULL)
		return -1;
	v = json_object_get(root, "profile");
	p->profile = strdup(json_is_string(v) ? json_string_value(v) :
	    "general");
	p->task = strdup(json_string_value(json_object_get(root, "task")));
	p->inherit = json_is_true(json_object_get(root, "inherit_context"));
	rc = agent_check_filter(p, json_object_get(root, "tool_filter"));
	json_decref(root);
	return rc == -1 || p->profile == NULL || p->task == NULL ? -1 : 0;
}

int
agent_fix_ids(struct agent *a, struct msg *m)
{
	char	id[64];
	size_t	i;

	for (i = 0; i < m->ncalls; i++) {
		if (m->calls[i].id != NULL && *m->calls[i].id != '\0')
			continue;
		snprintf(id, sizeof(id), "call_%u_%zu", a->iterations, i);
		free(m->calls[i].id);
		if ((m->calls[i].id = strdup(id)) == NULL)
			return -1;
	}
	for (i = 0; i < m->ncalls; i++)
		if (m->calls[i].name == NULL &&
		    (m->calls[i].name = strdup("")) == NULL)
			return -1;
	return 0;
}

static enum agent_call_kind
agent_call_kind(const struct agent_tool_entry *e)
{
	const struct tooldef	*t = e->def;

	if (e->mcp || t == NULL)
		return AGENT_CALL_MCP;
	if (t->where == TOOLDEF_DELEGATE)
		return AGENT_CALL_DELEGATE;
	if (t->where == TOOLDEF_COMPOSE)
		return AGENT_CALL_COMPOSE;
	return AGENT_CALL_TOOL;
}

int
agent_make_batch(struct agent *a, const struct msg *m)
{
	const struct msg_call	*c;
	struct agent_call	*ac;
	size_t			 i;

	a->npend = m->ncalls;
	if ((a->pend = calloc(m->ncalls, sizeof(*a->pend))) == NULL ||
	    (a->calls = calloc(m->ncalls, sizeof(*a->calls))) == NULL)
		return -1;
	for (i = 0; i < m->ncalls; i++) {
		c = &m->calls[i];
		agent_emit(a, AGENT_EV_TOOL_CALL, c->name, c->args, 0);
		if (i >= AGENT_MAX_CALLS) {
			a->pend[i].entry = SIZE_MAX;
			a->pend[i].is_error = 1;
			if ((a->pend[i].text = strdup("not run: too many calls "
			    "in one turn (limit 64)")) == NULL)
				return -1;
			continue;
		}
		if (agent_check_call(a, c, &a->pend[i]) == -1)
			return -1;
		if (!a->pend[i].valid || !a->pend[i].external)
			continue;
		ac = &a->calls[a->ncalls++];
		ac->index = i;
		ac->id = c->id;
		ac->name = a->tools[a->pend[i].entry].tool.name;
		ac->args = c->args != NULL && *c->args != '\0' ? c->args : "{}";
		ac->kind = agent_call_kind(&a->tools[a->pend[i].entry]);
		ac->parallel = a->tools[a->pend[i].entry].def != NULL &&
		    a->tools[a->pend[i].entry].def->parallel;
		ac->profile = a->pend[i].profile;
		ac->task = a->pend[i].task;
		ac->inherit_context = a->pend[i].inherit;
		ac->tools = (const char *const *)a->pend[i].tools;
		ac->ntools = a->pend[i].ntools;
		ac->filtered = a->pend[i].filtered;
	}
	return 0;
}

/*
 * The profile's tools that leave the agent: workspace tools (the worker
 * runs them) and delegate (the supervisor spawns). This behavior only
 * registers them, in the profile's order; the core hands their calls to
 * the driver.
 */
#include <stdlib.h>
#include <string.h>

#include "agent/agent_int.h"
#include "agent/profile.h"

struct behav_workspace {
	struct msg_tool	tools[PROFILE_MAX_TOOLS];
	size_t		ntools;
};

int
behav_tool_from_def(const struct tooldef *t, struct msg_tool *tool)
{
	memset(tool, 0, sizeof(*tool));
	tool->name = strdup(t->name);
	tool->description = strdup(t->description);
	tool->schema = tooldef_schema(t);
	if (tool->name == NULL || tool->description == NULL ||
	    tool->schema == NULL) {
		msg_tool_free(tool);
		return -1;
	}
	return 0;
}

void
behav_tools_free(struct msg_tool *v, size_t n)
{
	size_t	i;

	for (i = 0; i < n; i++)
		msg_tool_free(&v[i]);
}

static void
behav_workspace_free(void *self)
{
	struct behav_workspace	*w = self;

	if (w == NULL)
		return;
	behav_tools_free(w->tools, w->ntools);
	free(w);
}

void *
behav_workspace(struct agent_behavior *ops, const struct profile *p)
{
	struct behav_workspace	*w;
	const struct tooldef	*t;
	size_t			 i;

	memset(ops, 0, sizeof(*ops));
	if ((w = calloc(1, sizeof(*w))) == NULL)
		return NULL;
	for (i = 0; i < p->ntools; i++) {
		if ((t = tooldef_find(p->tools[i])) == NULL ||
		    t->where == TOOLDEF_AGENT)
			continue;
		if (behav_tool_from_def(t, &w->tools[w->ntools]) == -1) {
			behav_workspace_free(w);
			return NULL;
		}
		w->ntools++;
	}
	ops->name = "workspace-tools";
	ops->tools = w->tools;
	ops->ntools = w->ntools;
	ops->free = behav_workspace_free;
	return w;
}

/*
 * The profile's tools that leave the agent: workspace tools (the worker
 * runs them) and delegate (the supervisor spawns). This behavior only
 * registers them, in the profile's order; the core hands their calls to
 * the driver.
 */
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "agent/agent_int.h"
#include "agent/profile.h"
#include "common/buf.h"

#define BEHAV_DESC_MAX	300	/* chars of one profile's description */

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

/* "explore: Find things ...; plan: ..." (each description cut). */
static char *
behav_delegate_desc(const struct agent_profile_ref *v, size_t n)
{
	struct buf	 b;
	size_t		 i;

	buf_init(&b, 0);
	buf_addstr(&b, "The subagent's profile (default general). Profiles: ");
	for (i = 0; i < n; i++)
		buf_addf(&b, "%s%s: %.*s", i ? "; " : "", v[i].name,
		    BEHAV_DESC_MAX, v[i].description && *v[i].description ?
		    v[i].description : "(no description)");
	return buf_release(&b, NULL);
}

/*
 * delegate's schema naming the profiles there are: "profile" an enum of
 * their names, its description what each is for. 0, or -1 (ENOMEM).
 */
static int
behav_delegate_schema(struct msg_tool *tool,
    const struct agent_profile_ref *v, size_t n)
{
	json_t	*s, *prof, *en;
	char	*desc, *out = NULL;
	size_t	 i;

	if ((s = json_loads(tool->schema, 0, NULL)) == NULL)
		return -1;
	prof = json_object_get(json_object_get(s, "properties"), "profile");
	en = json_array();
	desc = behav_delegate_desc(v, n);
	if (json_is_object(prof) && en != NULL && desc != NULL) {
		for (i = 0; i < n; i++)
			json_array_append_new(en, json_string(v[i].name));
		json_object_set_new(prof, "enum", en);
		en = NULL;
		json_object_set_new(prof, "description", json_string(desc));
		out = json_dumps(s, JSON_COMPACT);
	}
	json_decref(en);
	json_decref(s);
	free(desc);
	if (out == NULL)
		return -1;
	free(tool->schema);
	tool->schema = out;
	return 0;
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
behav_workspace(struct agent_behavior *ops, const struct profile *p,
    const struct agent_profile_ref *delegates, size_t ndelegates)
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
		if (t->where == TOOLDEF_DELEGATE && ndelegates > 0 &&
		    behav_delegate_schema(&w->tools[w->ntools - 1], delegates,
		    ndelegates) == -1) {
			behav_workspace_free(w);
			return NULL;
		}
	}
	ops->name = "workspace-tools";
	ops->tools = w->tools;
	ops->ntools = w->ntools;
	ops->free = behav_workspace_free;
	return w;
}

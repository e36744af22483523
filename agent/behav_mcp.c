/*
 * MCP servers' tools (mcp__SERVER__TOOL): offered to the model as the
 * supervisor listed them (each server's description and inputSchema,
 * bounded there: supervisor/mcp_rpc.c); their calls leave the agent as
 * AGENT_CALL_MCP, for the supervisor to broker.
 */
#include <stdlib.h>
#include <string.h>

#include "agent/agent_int.h"

struct behav_mcp {
	struct msg_tool	*tools;
	size_t		 ntools;
};

static void
behav_mcp_free(void *self)
{
	struct behav_mcp	*m = self;

	if (m == NULL)
		return;
	behav_tools_free(m->tools, m->ntools);
	free(m->tools);
	free(m);
}

void *
behav_mcp(struct agent_behavior *ops, const struct msg_tool *tools, size_t n)
{
	struct behav_mcp	*m;

	memset(ops, 0, sizeof(*ops));
	if ((m = calloc(1, sizeof(*m))) == NULL ||
	    (m->tools = calloc(n + 1, sizeof(*m->tools))) == NULL) {
		free(m);
		return NULL;
	}
	for (m->ntools = 0; m->ntools < n; m->ntools++)
		if (msg_tool_copy(&m->tools[m->ntools], &tools[m->ntools]) ==
		    -1) {
			behav_mcp_free(m);
			return NULL;
		}
	ops->name = "mcp-tools";
	ops->tools = m->tools;
	ops->ntools = m->ntools;
	ops->mcp = 1;
	ops->free = behav_mcp_free;
	return m;
}

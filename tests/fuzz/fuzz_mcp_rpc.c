/*
 * Fuzz what `warren mcp` reads from its client (cli/mcp_rpc.c,
 * cli/mcp_tools.c): the input is one request line. A line that parses
 * must be what the server's dispatch relies on without checking again:
 * an object with "jsonrpc": "2.0", an id that is absent, a string or an
 * integer, and either a string method with params absent or an object,
 * or (an answer) a result or error. A tools/call's arguments that pass
 * the check hold only the tool's arguments, each of its type.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "cli/mcp.h"

int	LLVMFuzzerTestOneInput(const uint8_t *, size_t);

static void
fuzz_args(json_t *params)
{
	const struct mcp_tool	*t;
	const struct mcp_arg	*a;
	json_t			*args = json_object_get(params, "arguments");
	const char		*k;
	json_t			*v;
	char			 why[1024];
	int			 known;

	if ((t = mcp_tool_find(json_string_value(json_object_get(params,
	    "name")) ? json_string_value(json_object_get(params, "name")) :
	    "")) == NULL || !json_is_object(args) ||
	    mcp_tool_check(t, args, why, sizeof(why)) != 0)
		return;
	json_object_foreach(args, k, v) {
		known = 0;
		for (a = t->args; a < t->args + MCP_TOOL_ARGS_MAX && a->name;
		    a++)
			if (strcmp(a->name, k) == 0)
				known = (a->type == MCP_ARG_STR &&
				    json_is_string(v) && *json_string_value(v))
				    || (a->type == MCP_ARG_ID &&
				    json_integer_value(v) >= 1) ||
				    (a->type == MCP_ARG_OBJ &&
				    json_is_object(v)) ||
				    (a->type == MCP_ARG_STRS &&
				    json_is_array(v));
		if (!known)
			abort();
	}
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	json_t		*req, *id, *m, *p, *t;
	char		 why[1024];

	t = mcp_rpc_text((const char *)data, size);
	json_decref(t);
	if (mcp_rpc_parse((const char *)data, size, &req, &id, why,
	    sizeof(why)) != 0) {
		if (req != NULL)
			abort();
		json_decref(id);
		return 0;
	}
	if (!json_is_object(req) || (id != NULL && !json_is_string(id) &&
	    !json_is_integer(id)))
		abort();
	m = json_object_get(req, "method");
	p = json_object_get(req, "params");
	if (m == NULL && (id == NULL || (json_object_get(req, "result") ==
	    NULL && json_object_get(req, "error") == NULL)))
		abort();
	if (m != NULL && (!json_is_string(m) || (p != NULL &&
	    !json_is_object(p))))
		abort();
	if (m != NULL && strcmp(json_string_value(m), "tools/call") == 0)
		fuzz_args(p);
	json_decref(req);
	json_decref(id);
	return 0;
}

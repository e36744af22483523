/*
 * warren mcp list: the MCP servers agents may use (the client side of
 * MCP). Not built in this tree: the client side is built apart.
 */
#include <stdio.h>

#include "cli/cmd.h"
#include "common/exitcode.h"

int
cmd_mcp_list(int argc, char **argv)
{
	(void)argc;
	(void)argv;
	fprintf(stderr, "warren mcp list: not built in this tree\n");
	return WARREN_EXIT_USAGE;
}

/*
 * warren mcp: `list` (cmd_mcp_list.c) on this branch, the client's half of
 * issue 35; the server's `warren mcp` (serving over stdio) has its own
 * dispatcher, which takes `list` over when the two are merged.
 */
#include <stdio.h>
#include <string.h>

#include "cli/cmd.h"
#include "common/exitcode.h"

int
cmd_mcp(int argc, char **argv)
{
	if (argc >= 2 && strcmp(argv[1], "list") == 0)
		return cmd_mcp_list(argc - 1, argv + 1);
	if (argc >= 2 && (strcmp(argv[1], "--help") == 0 ||
	    strcmp(argv[1], "-h") == 0)) {
		cmd_mcp_list_usage(stdout);
		return WARREN_EXIT_OK;
	}
	cmd_usage_error("mcp", "expected 'list', not '%s'", argc >= 2 ?
	    argv[1] : "");
	return WARREN_EXIT_USAGE;
}

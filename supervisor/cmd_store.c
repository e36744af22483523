/*
 * Placeholder until issue 7 lands: says so and exits with a usage error.
 */
#include <stdio.h>

#include "common/exitcode.h"
#include "supervisor/cmd.h"

int
cmd_runs(int argc, char **argv)
{
	(void)argc;
	fprintf(stderr, "warren %s: not implemented yet (issue 7)\n", argv[0]);
	return WARREN_EXIT_USAGE;
}

int
cmd_show(int argc, char **argv)
{
	(void)argc;
	fprintf(stderr, "warren %s: not implemented yet (issue 7)\n", argv[0]);
	return WARREN_EXIT_USAGE;
}

int
cmd_graph(int argc, char **argv)
{
	(void)argc;
	fprintf(stderr, "warren %s: not implemented yet (issue 7)\n", argv[0]);
	return WARREN_EXIT_USAGE;
}

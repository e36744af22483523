/*
 * Placeholder until issue 5 lands: says so and exits with a usage error.
 */
#include <stdio.h>

#include "common/exitcode.h"
#include "supervisor/cmd.h"

int
cmd_sandbox(int argc, char **argv)
{
	(void)argc;
	fprintf(stderr, "warren %s: not implemented yet (issue 5)\n", argv[0]);
	return WARREN_EXIT_USAGE;
}

/*
 * Placeholder until issue 4 lands: says so and exits with a usage error.
 */
#include <stdio.h>

#include "common/exitcode.h"
#include "supervisor/cmd.h"

int
cmd_profiles(int argc, char **argv)
{
	(void)argc;
	fprintf(stderr, "warren %s: not implemented yet (issue 4)\n", argv[0]);
	return WARREN_EXIT_USAGE;
}

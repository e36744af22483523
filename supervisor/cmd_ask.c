/*
 * Placeholder until issue 3 lands: says so and exits with a usage error.
 */
#include <stdio.h>

#include "common/exitcode.h"
#include "supervisor/cmd.h"

int
cmd_ask(int argc, char **argv)
{
	(void)argc;
	fprintf(stderr, "warren %s: not implemented yet (issue 3)\n", argv[0]);
	return WARREN_EXIT_USAGE;
}

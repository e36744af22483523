/*
 * Placeholder until issue 6 lands: says so and exits with a usage error.
 */
#include <stdio.h>

#include "common/exitcode.h"
#include "supervisor/cmd.h"

int
cmd_run(int argc, char **argv)
{
	(void)argc;
	fprintf(stderr, "warren %s: not implemented yet (issue 6)\n", argv[0]);
	return WARREN_EXIT_USAGE;
}

int
cmd_resume(int argc, char **argv)
{
	(void)argc;
	fprintf(stderr, "warren %s: not implemented yet (issue 6)\n", argv[0]);
	return WARREN_EXIT_USAGE;
}

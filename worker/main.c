/*
 * warren-worker: one sandboxed subagent. Started by the supervisor with its
 * IPC channel on fixed fds; see docs/architecture.md.
 */
#include <stdio.h>
#include <string.h>

#include "common/exitcode.h"
#include "common/log.h"
#include "common/version.h"

int
main(int argc, char **argv)
{
	log_init("warren-worker", LOG_LEVEL_INFO);
	if (argc == 2 && strcmp(argv[1], "--version") == 0) {
		printf("warren-worker %s\n", WARREN_VERSION);
		return WARREN_EXIT_OK;
	}
	fprintf(stderr, "warren-worker: this program is started by warren, "
	    "not by hand (issue 6 makes it run an agent)\n");
	return WARREN_EXIT_USAGE;
}

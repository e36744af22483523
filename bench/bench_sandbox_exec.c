/*
 * bench_sandbox_exec: `warren sandbox exec` without the rest of warren.
 *
 * The same code (cli/cmd_sandbox.c), linked alone: only libseccomp
 * and libbsd are loaded, not the LLM client's libcurl and its thirty-odd
 * libraries. scripts/bench-sandbox.sh runs it next to the real command to
 * separate the sandbox's cost from warren's start-up.
 *
 *	bench_sandbox_exec sandbox exec --profile P -- CMD [ARG ...]
 */
#include <stdio.h>
#include <string.h>

#include "cli/cmd.h"
#include "common/exitcode.h"
#include "common/log.h"

int
main(int argc, char **argv)
{
	log_init("warren", LOG_LEVEL_INFO);
	if (argc < 2 || strcmp(argv[1], "sandbox") != 0) {
		fprintf(stderr, "usage: bench_sandbox_exec sandbox exec|check "
		    "...\n");
		return WARREN_EXIT_USAGE;
	}
	return cmd_sandbox(argc - 1, argv + 1);
}

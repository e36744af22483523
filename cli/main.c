/*
 * warren: the command line front end. Finds the subcommand and runs it.
 */
#include <getopt.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cmd.h"
#include "common/exitcode.h"
#include "common/log.h"
#include "common/version.h"


/* An unknown command: the one meant, if it is a slip away from one. */
static void
main_unknown(const char *who, const char *name)
{
	const char	*names[64], *near;
	size_t		 i;

	for (i = 0; i < warren_ncmds && i < 64; i++)
		names[i] = warren_cmds[i].name;
	near = cmd_getopt_near(name, strlen(name), names, i);
	if (near != NULL)
		fprintf(stderr, "%s: unknown command '%s': did you mean "
		    "'%s'?; try 'warren --help'\n", who, name, near);
	else
		fprintf(stderr, "%s: unknown command '%s'; try 'warren "
		    "--help'\n", who, name);
}

static void
usage(FILE *f)
{
	size_t	i;

	fprintf(f, "usage: warren COMMAND [ARGS]\n\ncommands:\n");
	for (i = 0; i < warren_ncmds; i++)
		fprintf(f, "  %-8s %s\n", warren_cmds[i].name, warren_cmds[i].summary);
	fprintf(f, "\n'warren COMMAND --help' describes a command; "
	    "man warren (docs/warren.1) describes them all.\n");
}

static int
main_help(int argc, char **argv)
{
	char	*args[4];
	size_t	 i;

	for (i = 0; i < warren_ncmds; i++) {
		if (strcmp(argv[0], warren_cmds[i].name) != 0)
			continue;
		args[0] = argv[0];
		args[1] = argc > 1 ? argv[1] : (char *)"--help";
		args[2] = argc > 1 ? (char *)"--help" : NULL;
		args[3] = NULL;
		optind = 1;
		return warren_cmds[i].main(argc > 1 ? 3 : 2, args);
	}
	main_unknown("warren help", argv[0]);
	return WARREN_EXIT_USAGE;
}

int
main(int argc, char **argv)
{
	size_t	i;

	log_init("warren", LOG_LEVEL_INFO);
	/*
	 * A write past RLIMIT_FSIZE (ulimit -f) fails with EFBIG, which the
	 * store reports (exit 6), instead of killing warren without a word.
	 * Every process warren forks inherits it (the spawn server, queue
	 * work's runs); what runs a user's or an agent's command sets it
	 * back (spawn.c, cmd_sandbox.c).
	 */
	signal(SIGXFSZ, SIG_IGN);
	if (argc < 2) {
		usage(stderr);
		return WARREN_EXIT_USAGE;
	}
	if (strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0 ||
	    (strcmp(argv[1], "help") == 0 && argc == 2)) {
		usage(stdout);
		return WARREN_EXIT_OK;
	}
	/* warren help COMMAND [SUB]: that command's --help. */
	if (strcmp(argv[1], "help") == 0)
		return main_help(argc - 2, argv + 2);
	if (strcmp(argv[1], "--version") == 0 || strcmp(argv[1], "version") == 0) {
		printf("warren %s\n", WARREN_VERSION);
		return WARREN_EXIT_OK;
	}
	for (i = 0; i < warren_ncmds; i++) {
		if (strcmp(argv[1], warren_cmds[i].name) == 0)
			return warren_cmds[i].main(argc - 1, argv + 1);
	}
	main_unknown("warren", argv[1]);
	return WARREN_EXIT_USAGE;
}

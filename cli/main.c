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

static const struct cmd commands[] = {
	{ "run", "[options] TASK", "run a task with an orchestrator and sandboxed subagents",
	    cmd_run },
	{ "chat", "[run options] [--continue [RUN]]",
	    "a conversation: each message a follow-up run", cmd_chat },
	{ "resume", "RUN", "continue an interrupted run", cmd_resume },
	{ "ask", "[--provider P] [--base-url URL] [--model M] PROMPT",
	    "send one prompt to an LLM endpoint and print the answer", cmd_ask },
	{ "sandbox", "exec|check ...", "run a command under a profile's sandbox",
	    cmd_sandbox },
	{ "profiles", "[NAME]", "list agent profiles, their tools and sandbox",
	    cmd_profiles },
	{ "runs", "", "list recent runs", cmd_runs },
	{ "show", "[--messages] RUN", "show a run's agent tree", cmd_show },
	{ "graph", "[--format json|dot|mermaid] RUN", "print a run's memory graph",
	    cmd_graph },
	{ "report", "[-o FILE] RUN", "write a run's report: one HTML page",
	    cmd_report },
	{ "forget", "RUN ...", "delete runs and all they stored", cmd_forget },
	{ "diff", "[--stat] [--color=WHEN | --raw] RUN [PATH ...]",
	    "show what a copy-on-write run changed", cmd_diff },
	{ "apply", "[--include-sensitive] [--include-unreviewed] "
	    "[--include-ignored] [--include PATH ...] RUN [PATH ...]",
	    "write a copy-on-write run's changes into the workspace",
	    cmd_apply },
	{ "discard", "RUN", "throw a copy-on-write run's changes away",
	    cmd_discard },
	{ "queue", "add|work|ls|show|cancel|retry|purge|export|apply ...",
	    "a durable queue of tasks, each run as its own run", cmd_queue },
	{ "trust", "[--revoke] [DIR]", "trust a project's .warren/config and agents",
	    cmd_trust },
};

static void
usage(FILE *f)
{
	size_t	i;

	fprintf(f, "usage: warren COMMAND [ARGS]\n\ncommands:\n");
	for (i = 0; i < sizeof(commands) / sizeof(commands[0]); i++)
		fprintf(f, "  %-8s %s\n", commands[i].name, commands[i].summary);
	fprintf(f, "\n'warren COMMAND --help' describes a command; "
	    "man warren (docs/warren.1) describes them all.\n");
}

static int
main_help(int argc, char **argv)
{
	char	*args[4];
	size_t	 i;

	for (i = 0; i < sizeof(commands) / sizeof(commands[0]); i++) {
		if (strcmp(argv[0], commands[i].name) != 0)
			continue;
		args[0] = argv[0];
		args[1] = argc > 1 ? argv[1] : (char *)"--help";
		args[2] = argc > 1 ? (char *)"--help" : NULL;
		args[3] = NULL;
		optind = 1;
		return commands[i].main(argc > 1 ? 3 : 2, args);
	}
	fprintf(stderr, "warren help: unknown command '%s'; try 'warren "
	    "--help'\n", argv[0]);
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
	for (i = 0; i < sizeof(commands) / sizeof(commands[0]); i++) {
		if (strcmp(argv[1], commands[i].name) == 0)
			return commands[i].main(argc - 1, argv + 1);
	}
	fprintf(stderr, "warren: unknown command '%s'; try 'warren --help'\n",
	    argv[1]);
	return WARREN_EXIT_USAGE;
}

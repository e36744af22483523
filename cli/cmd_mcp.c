/*
 * warren mcp [--root DIR ...] [--allow-apply]: warren as an MCP server on
 * stdio (cli/mcp.h, docs/mcp.md). `warren mcp list ...` is the client
 * side's (cmd_mcp_list.c).
 */
#include <getopt.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli/cmd.h"
#include "cli/mcp.h"
#include "cli/opttab.h"
#include "common/exitcode.h"

enum {
	CMD_MCP_OPT_ROOT = 0x100,
	CMD_MCP_OPT_ALLOW_APPLY,
};

static int
cmd_mcp_usage(FILE *f)
{
	fprintf(f, "usage: warren mcp [--root DIR ...] [--allow-apply]\n"
	    "       warren mcp list ...\n"
	    "Serves MCP (the Model Context Protocol) on standard input and "
	    "output, so that\nanother agent (Claude Code, Codex, ...) can "
	    "run tasks with warren: the tools run,\ndiff, apply, runs, show, "
	    "queue_add and queue_status. Add it to Claude Code with\n"
	    "`claude mcp add warren -- warren mcp`; see docs/mcp.md.\n");
	opt_doc_help(f, "mcp");
	return f == stdout ? WARREN_EXIT_OK : WARREN_EXIT_USAGE;
}

static void
cmd_mcp_free(struct mcp_server *s)
{
	size_t	i;

	for (i = 0; i < s->nroots; i++)
		free(s->roots[i]);
	linebuf_free(&s->in);
}

/* The options into s; an exit code, or -1 to go on. */
static int
cmd_mcp_options(int argc, char **argv, struct mcp_server *s)
{
	static const struct option longopts[] = {
		{ "root", required_argument, NULL, CMD_MCP_OPT_ROOT },
		{ "allow-apply", no_argument, NULL, CMD_MCP_OPT_ALLOW_APPLY },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 }
	};
	char	err[PATH_MAX + 64];
	int	ch;

	while ((ch = cmd_getopt("mcp", argc, argv, "h", longopts)) != -1) {
		switch (ch) {
		case CMD_MCP_OPT_ROOT:
			if (mcp_roots_add(s, optarg, err, sizeof(err)) == -1) {
				fprintf(stderr, "warren mcp: %s\n", err);
				return WARREN_EXIT_USAGE;
			}
			break;
		case CMD_MCP_OPT_ALLOW_APPLY:
			s->allow_apply = 1;
			break;
		case 'h':
			return cmd_mcp_usage(stdout);
		default:
			return WARREN_EXIT_USAGE;
		}
	}
	if (optind != argc) {
		cmd_usage_error("mcp", "it takes no operands but list");
		return WARREN_EXIT_USAGE;
	}
	return -1;
}

/* This warren, the working directory, the default root. */
static int
cmd_mcp_setup(struct mcp_server *s)
{
	char	err[PATH_MAX + 64];
	ssize_t	n;

	if ((n = readlink("/proc/self/exe", s->exe, sizeof(s->exe) - 1)) <=
	    0) {
		perror("warren mcp: /proc/self/exe");
		return WARREN_EXIT_INTERNAL;
	}
	s->exe[n] = '\0';
	if (realpath(".", s->cwd) == NULL) {
		perror("warren mcp: the working directory");
		return WARREN_EXIT_USAGE;
	}
	if (s->nroots == 0 && mcp_roots_add(s, s->cwd, err,
	    sizeof(err)) == -1) {
		fprintf(stderr, "warren mcp: %s\n", err);
		return WARREN_EXIT_USAGE;
	}
	return -1;
}

int
cmd_mcp(int argc, char **argv)
{
	struct mcp_server	*s;
	int			 ex;

	if (argc > 1 && strcmp(argv[1], "list") == 0)
		return cmd_mcp_list(argc - 1, argv + 1);
	if ((s = calloc(1, sizeof(*s))) == NULL) {
		perror("warren mcp");
		return WARREN_EXIT_INTERNAL;
	}
	if ((ex = cmd_mcp_options(argc, argv, s)) == -1 &&
	    (ex = cmd_mcp_setup(s)) == -1)
		ex = mcp_serve(s);
	cmd_mcp_free(s);
	free(s);
	return ex;
}

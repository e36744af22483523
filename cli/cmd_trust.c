/*
 * warren trust [--db FILE] [--revoke] [DIR]: record that the user trusts
 * the project config of workspace DIR as it is now (cli/project.h).
 *
 * The files are checked before they are trusted, as a run would load
 * them: a key a project may not set (the endpoint, a path) or a malformed
 * profile is refused here, so a trusted project never fails a run later.
 */
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "agent/profile.h"
#include "cli/cmd.h"
#include "cli/project.h"
#include "common/config.h"
#include "common/exitcode.h"
#include "common/log.h"
#include "common/str.h"
#include "store/store.h"

static int
cmd_trust_usage(FILE *f)
{
	fprintf(f, "usage: warren trust [--db FILE] [--revoke] [DIR]\n"
	    "Trusts the project config of workspace DIR (default: the current"
	    " directory),\n.warren/config, .warren/agents/*.md and "
	    ".claude/agents/*.md, as they are\nnow. Read them first:\nanyone who can write the workspace can "
	    "write them, agents included.\n--revoke trusts none of them.\n");
	return f == stdout ? WARREN_EXIT_OK : WARREN_EXIT_USAGE;
}

/* An error on stderr, escaped: it quotes file names and contents. */
static int
cmd_trust_fail(const char *msg, int code)
{
	cmd_error("trust", "%s", msg);
	return code;
}

/* Load the files as a run would; -1 with err set if a run would fail. */
static int
cmd_trust_validate(struct project *pr, char *err, size_t errlen)
{
	struct profile_set	 ps;
	struct config		*c;
	int			 rc = 0;

	if ((c = config_new()) == NULL)
		fatal("config_new");
	if (cmd_run_declare(c) == -1)
		fatalx("config: %s", config_error(c));
	pr->trusted = 1;	/* what project_load_* require */
	if (project_load_config(pr, c) == -1) {
		snprintf(err, errlen, "%s", config_error(c));
		rc = -1;
	} else if (project_load_profiles(pr, &ps, err, errlen) == -1)
		rc = -1;
	else
		profile_set_free(&ps);
	pr->trusted = 0;
	config_free(c);
	return rc;
}

static void
cmd_trust_print(const struct project *pr, int revoke)
{
	char	ews[PATH_MAX], epath[PATH_MAX];
	size_t	i;

	str_escape(ews, sizeof(ews), pr->workspace, strlen(pr->workspace));
	if (revoke) {
		printf("warren trust: no project config of %s is trusted now\n",
		    ews);
		return;
	}
	if (pr->nfiles == 0) {
		printf("warren trust: %s has no project config (.warren/config,"
		    " .warren/agents/*.md, .claude/agents/*.md); any added later is not trusted\n",
		    ews);
		return;
	}
	printf("warren trust: trusted %zu file%s of %s as they are now:\n",
	    pr->nfiles, pr->nfiles == 1 ? "" : "s", ews);
	for (i = 0; i < pr->nfiles; i++) {
		str_escape(epath, sizeof(epath), pr->files[i].path,
		    strlen(pr->files[i].path));
		printf("  %-32s sha256:%.16s\n", epath, pr->files[i].sha256);
	}
	printf("A change to any of them, or a file added or removed, makes "
	    "them untrusted again.\n");
}

int
cmd_trust(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "db", required_argument, NULL, 'd' },
		{ "revoke", no_argument, NULL, 'r' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	struct project	 pr;
	const char	*db = NULL, *dir = ".";
	char		 ws[PATH_MAX], path[PATH_MAX], err[2048];
	int		 ch, revoke = 0, code = WARREN_EXIT_OK;

	optind = 1;
	while ((ch = cmd_getopt("trust", argc, argv, "h", opts)) != -1) {
		switch (ch) {
		case 'd': db = optarg; break;
		case 'r': revoke = 1; break;
		case 'h': return cmd_trust_usage(stdout);
		default: return WARREN_EXIT_USAGE;
		}
	}
	if (argc - optind > 1) {
		cmd_usage_error("trust", "one DIR at most, not '%s'",
		    argv[optind + 1]);
		return WARREN_EXIT_USAGE;
	}
	if (argc - optind == 1)
		dir = argv[optind];
	if (realpath(dir, ws) == NULL) {
		snprintf(err, sizeof(err), "workspace %s: %s", dir,
		    strerror(errno));
		return cmd_trust_fail(err, WARREN_EXIT_USAGE);
	}
	if (store_path(path, sizeof(path), db) == -1)
		return cmd_trust_fail("no database path: set HOME, "
		    "XDG_STATE_HOME or --db", WARREN_EXIT_STORE);
	if (project_scan(&pr, ws, err, sizeof(err)) == -1)
		return cmd_trust_fail(err, WARREN_EXIT_CONFIG);
	if (!revoke)
		project_claude_warn(&pr, "trust");
	if (revoke) {
		project_free(&pr);	/* the empty set */
		pr.unsafe = 0;
	}
	if (!revoke && pr.unsafe) {
		snprintf(err, sizeof(err), "not trusted: %s", pr.why);
		code = cmd_trust_fail(err, WARREN_EXIT_CONFIG);
	} else if (!revoke && cmd_trust_validate(&pr, err, sizeof(err)) == -1)
		code = cmd_trust_fail(err, WARREN_EXIT_CONFIG);
	else if (project_trust(&pr, path, err, sizeof(err)) == -1)
		code = cmd_trust_fail(err, WARREN_EXIT_STORE);
	else
		cmd_trust_print(&pr, revoke);
	project_free(&pr);
	return code;
}

/*
 * What the commands that read a workspace's runs share: cmd_store.c (their
 * options, the database, finding a run, runs, graph, report, forget and
 * the layer's commands) and cmd_show.c (warren show).
 */
#ifndef WARREN_CMD_STORE_H
#define WARREN_CMD_STORE_H

#include <limits.h>
#include <stdint.h>
#include <stdio.h>

#include <jansson.h>

#include "cli/cmd.h"
#include "cli/graph.h"
#include "store/store.h"

#define CMD_TASK_WIDTH	60
#define CMD_SUMMARY_MAX	2000
#define CMD_HOST_FILES_MAX 200	/* files that run code listed by show */

/* Options every store command takes. */
struct cmd_store_opts {
	struct cmd_change_opts chg;	/* --db, --workspace, diff --stat
					   --raw, apply --include... */
	char		 ws[PATH_MAX];	/* its realpath: whose runs to list */
	int		 all;		/* every workspace's runs */
	int		 json;
	int		 messages;
	int		 color;		/* diff: 1 always, 0 never, -1 auto */
	long long	 limit;
	enum graph_format format;
	const char	*output;	/* report -o FILE */
};

enum {
	OPT_JSON = 256,
	OPT_MESSAGES,
	OPT_LIMIT,
	OPT_FORMAT,
	OPT_ALL,
	OPT_COLOR,
	OPT_OUTPUT,
	OPT_HELP,
};

/* The bit of option x in a command's allowed mask: its own, then the
 * change options (--db and --workspace are always taken). */
#define ALLOW(x)	((int)(x) >= (int)CMD_CHANGE_OPT_DB ? \
			    1 << (16 + (int)(x) - (int)CMD_CHANGE_OPT_DB) : \
			    1 << ((int)(x) - (int)OPT_JSON))

/* cmd_store.c */
int	cmd_store_usage(const char *name, FILE *f);
/* Parse the options; -1 on a usage error, 1 for --help. allowed lists the
 * options this command takes beyond --db/--workspace/--help (ALLOW). */
int	cmd_store_parse(int argc, char **argv, int allowed,
	    struct cmd_store_opts *o);
/* The database, opened with flags; NULL (said, *exitp set) if not. */
struct store *cmd_store_open(const char *name, const struct cmd_store_opts *o,
	    int flags, int *exitp);
/* RUN: a positive id or "last", the latest run of the workspace. */
int	cmd_store_run_arg(struct store *st, const struct cmd_store_opts *o,
	    const char *name, const char *arg, int64_t *run, int *exitp);
/* A store error as an exit: an unknown run is the user's, the rest the
 * database's. */
int	cmd_store_fail(struct store *st, const char *name);
/* A run's status as shown, its duration, and the run as JSON. */
const char *cmd_run_status(const struct store_run *r);
/* Its cost ("$0.0123") at the user's price for the run's model: 1, or 0
 * (buf empty) where the user gives none (docs/configuration.md). */
int	cmd_run_cost(const struct store_run *r, char *buf, size_t sz);
int64_t	cmd_run_duration(const struct store_run *r);
json_t	*cmd_json_run(const struct store_run *r);

#endif

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
/* A command of one RUN (show, graph, report): its options (allowed as
 * cmd_store_parse's), the database opened to read and *run; NULL (said,
 * *exitp the exit code: --help's is WARREN_EXIT_OK) if not. */
struct store *cmd_store_open_run(int argc, char **argv, int allowed,
	    struct cmd_store_opts *o, int64_t *run, int *exitp);
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

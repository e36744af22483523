/*
 * warren run's and warren resume's parts (cli/cmd_run*.c), shared by them
 * only: what the command line asked, what a run needs besides the store,
 * and the calls from one part to another. The commands themselves are
 * in cli/cmd.h.
 */
#ifndef WARREN_CLI_CMD_RUN_H
#define WARREN_CLI_CMD_RUN_H

#include <limits.h>
#include <stdint.h>

#include "agent/profile.h"
#include "cli/project.h"
#include "supervisor/mcp.h"
#include "llm/llm.h"
#include "store/store.h"
#include "workspace/cow.h"

struct config;
struct rate_gate;
struct run;
struct store;
struct store_plan;

/* What `warren run` was asked, before the config resolves it. */
struct cmd_run_args {
	const char	*task;
	const char	*profile;
	const char	*workspace;
	const char	*db;
	const char	*worker;
	int		 json, plain, nostore, weaker, trace, verbose;
	int		 hardlinks;	/* --allow-hard-links */
	int		 apply;		/* --apply: the layer, at the end */
	const char	*schema_file;	/* --schema FILE */
	char		*schema;	/* its JSON, compact (or the resumed
					   run's); NULL: none */
	int64_t		 resume;	/* run id, or 0 */
	int		 is_resume;	/* warren resume, not run */
	int		 cont;		/* --continue */
	int64_t		 cont_run;	/* its RUN; -1: the latest */
	int		 chat;		/* a turn of warren chat */
	char		*task_buf;	/* TASK "-": read from stdin */
};

/* What a run needs besides the store, resolved from the command line. */
struct cmd_run_ctx {
	struct llm_config	 lc;
	struct llm_engine	*llm;
	struct profile_set	 ps;
	struct project		 pr;
	char			 ws[PATH_MAX];
	char			 worker[PATH_MAX];
	char			 db[PATH_MAX];
	struct cow		 cow;	/* the run's layer; COW_NONE: none */
	int			 ran;	/* run_main ran: the layer is final */
	struct store_run	 prev;	/* --continue: the run followed up
					   (id 0: none) */
	int64_t			 adopted; /* cow is prev's layer, gone on
					   in (cmd_run_adopt): not ours to
					   remove before the run's row */
	struct rate_gate	*rate;	/* the shared LLM gate, or NULL */
	/* What no worker may read though it may lie in the workspace
	   (cmd_run_masks); maskv points into mask, NULL-ended. */
	char			 mask[8][PATH_MAX];
	const char		*maskv[9];
	struct mcp_config	 mcp;	/* the MCP servers (mcp_load) */
};

/* cmd_run.c */
void	cmd_run_error(const char *cmd, const char *fmt, ...)
	    __attribute__((format(printf, 2, 3)));
struct store	*cmd_run_store(const struct cmd_run_args *a, const char *path,
	    int *code);

/* cmd_run_args.c */
int	cmd_run_parse(int argc, char **argv, struct config *c,
	    struct cmd_run_args *a, int resume);
int	cmd_run_schema(struct cmd_run_args *a);
int	cmd_run_schema_resume(struct cmd_run_args *a, const char *params);

/* cmd_run_setup.c */
void	cmd_run_masks(struct cmd_run_ctx *x, const struct config *c);
int	cmd_run_setup(struct cmd_run_args *a, struct config *c,
	    struct cmd_run_ctx *x);

/* cmd_run_resume.c */
char	*cmd_run_params(const struct config *c, const char *schema);
void	cmd_run_params_load(struct config *c, const char *params, int64_t run,
	    int endpoint);
int	cmd_run_resume_ws(struct cmd_run_args *a, const char *dbpath,
	    const struct store_plan *plan, int *endpoint);
int	cmd_run_plan(struct cmd_run_args *a, const char *dbpath,
	    struct store **stp, struct store_plan *plan);
int	cmd_run_finished(const struct store_plan *plan, struct run *r);
int	cmd_run_cont(const struct cmd_run_args *a, struct store *st,
	    const char *ws, struct store_run *old);

/* cmd_run_layer.c */
void	cmd_run_unlayer(struct cmd_run_ctx *x);
int	cmd_run_layer(const struct cmd_run_args *a, const struct config *c,
	    struct run *r, struct cmd_run_ctx *x, const struct store_plan *plan);

#endif

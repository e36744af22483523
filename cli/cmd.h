/*
 * The subcommands of the warren command line. Each lives in its own
 * cmd_NAME.c, takes the arguments after its name (argv[0] is the name) and
 * returns an exit code from common/exitcode.h.
 */
#ifndef WARREN_CMD_H
#define WARREN_CMD_H

#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdint.h>

struct cmd {
	const char	*name;
	const char	*usage;		/* one line, after "warren NAME " */
	const char	*summary;
	int		(*main)(int argc, char **argv);
};

struct config;

/* cmdtab.c: every command, in --help's order. */
extern const struct cmd	warren_cmds[];
extern const size_t	warren_ncmds;

/* cmd_getopt.c: getopt_long for command cmd ("run", "queue add"):
 * options anywhere before "--" unless shortopts begins with '+'; a bad
 * option said in one line (with "did you mean"), then '?'. */
struct option;
int	cmd_getopt(const char *cmd, int argc, char **argv,
	    const char *shortopts, const struct option *longopts);
/* "warren CMD: MSG; try 'warren help CMD'" on stderr, MSG escaped. */
void	cmd_usage_error(const char *cmd, const char *fmt, ...)
	    __attribute__((format(printf, 2, 3)));
/* "warren CMD: MSG" on stderr, MSG escaped (it may quote a path, an
 * option or a stored value) and whole up to CMD_ERROR_MAX bytes
 * (test_cli_help test_error_whole). For every command's errors. */
#define CMD_ERROR_MAX	(16u << 10)
void	cmd_error(const char *cmd, const char *fmt, ...)
	    __attribute__((format(printf, 2, 3)));
void	cmd_verror(const char *cmd, const char *tail, const char *fmt,
	    va_list ap) __attribute__((format(printf, 3, 0)));
/* The options of a command that takes --workspace DIR (*ws, "." if not
 * given), --json (*json) and --help (`warren profiles`, `warren mcp
 * list`): 0, 1 for --help (its usage is the caller's to say), or -1 on a
 * usage error (said). */
int	cmd_getopt_ws(const char *cmd, int argc, char **argv, const char **ws,
	    int *json);
/* The name of names near enough to s's first len bytes to be a slip (an
 * edit or two: cmd_getopt.c), or NULL. */
const char *cmd_getopt_near(const char *s, size_t len,
	    const char *const *names, size_t n);

/* cmd_run.c */
/* Bytes of a task `warren run -` reads from stdin, the most it takes;
 * queue add refuses a longer task, since queue work sends it that way. */
#define CMD_RUN_TASK_MAX	(1024 * 1024)
int	cmd_run(int argc, char **argv);
int	cmd_resume(int argc, char **argv);
int	cmd_run_turn(int argc, char **argv);
/* The run's id, once its row is written, goes to fd ("ID\n", one write)
 * and fd is closed: how warren chat learns which run its turn is (its
 * child calls this, then cmd_run_turn). */
void	cmd_run_tell(int fd);
/* cmd_chat.c */
int	cmd_chat(int argc, char **argv);
/* cmd_run_args.c: declare every key a run reads (the LLM's and the
 * run's own). */
int	cmd_run_declare(struct config *c);
/* cmd_trust.c */
int	cmd_trust(int argc, char **argv);
/* cmd_ask.c */
int	cmd_ask(int argc, char **argv);
/* cmd_sandbox.c */
int	cmd_sandbox(int argc, char **argv);
/* cmd_profiles.c */
int	cmd_profiles(int argc, char **argv);
/* cmd_store.c */
int	cmd_runs(int argc, char **argv);
int	cmd_show(int argc, char **argv);
int	cmd_graph(int argc, char **argv);
int	cmd_report(int argc, char **argv);
int	cmd_forget(int argc, char **argv);
int	cmd_diff(int argc, char **argv);
int	cmd_apply(int argc, char **argv);
int	cmd_discard(int argc, char **argv);
/* Untrusted text on stdout, escaped (common/str.h), cut to max bytes (0:
 * no cut); a block: each line after indent, '\n' kept. */
void	cmd_print_text(const char *s, size_t max);
void	cmd_print_block(const char *indent, const char *s, size_t max);
/* 12345 as "12.3k"; 90000 ms as "1m30s"; ms since the epoch as local
 * "YYYY-MM-DD HH:MM". */
void	cmd_fmt_tokens(char *out, size_t outsz, uint64_t n);
void	cmd_fmt_duration(char *out, size_t outsz, int64_t ms);
void	cmd_fmt_time(char *out, size_t outsz, int64_t ms);
/* Print j indented on stdout and take it (NULL: out of memory); an exit
 * code. */
struct json_t;
int	cmd_json_print(struct json_t *j);
/* Say on stderr that WORKSPACE/.warren/warren.db, the database of an
 * older warren, is there and not read (db: the --db given, or NULL). */
void	cmd_legacy_db(const char *name, const char *db, const char *ws);

/* cmd_mcp.c: warren mcp, an MCP server on stdio; warren mcp list ... */
int	cmd_mcp(int argc, char **argv);
/* cmd_mcp_list.c: warren mcp list (argv[0] is "list"): the MCP servers
 * agents may use, their sandbox and tools */
int	cmd_mcp_list(int argc, char **argv);

/* cmd_queue.c: warren queue SUBCOMMAND */
int	cmd_queue(int argc, char **argv);
/* Declare queue_url (WARREN_QUEUE_URL), which the user's config may set
 * for every `warren queue` command; cmd_run_declare declares it too. */
int	cmd_queue_declare(struct config *c);
/* cmd_queue_work.c: warren queue work (argv[0] is "work") */
int	cmd_queue_work(int argc, char **argv);

/* cmd_cow.c: a run's copy-on-write layer (cmd_store.c finds the run) */
struct store;
struct store_run;
struct cow_changes;
/* 0 if the run has a layer left to act on, else an exit code (said on
 * stderr); live: refuse a run still running. */
int	cmd_cow_check(const char *name, const struct store_run *r, int live);
/* A run whose layer went on to a follow-up: refused, naming the run that
 * holds the layer now (st: the store it is looked up in). An exit code. */
int	cmd_cow_holder(struct store *st, const char *name,
	    const struct store_run *r);
int	cmd_cow_diff(const struct store_run *r, unsigned flags);
/* Only the changes under paths (layer_paths.c; all if npaths is 0);
 * those the workspace's .gitignore ignores listed apart. */
int	cmd_cow_diff_paths(const struct store_run *r, unsigned flags,
	    char *const *paths, size_t npaths);
/* apply: also what the workspace's .gitignore ignores (--include-ignored;
 * beside COW_APPLY_SENSITIVE and COW_APPLY_UNREVIEWED). */
#define CMD_APPLY_IGNORED	0x100
/* The paths named with --include PATH (apply, queue apply): each is
 * applied though apply would leave it out (unreviewed, or it runs code
 * on the host). */
#define CMD_INCLUDE_MAX	64
struct cmd_include {
	const char	*v[CMD_INCLUDE_MAX];
	size_t		 n;
};
/*
 * The options of the commands that show or apply a run's changes (warren
 * diff and apply, warren queue diff and apply): one table and one parser.
 * Their values are outside any command's own option values.
 */
enum {
	CMD_CHANGE_OPT_DB = 0x1000,
	CMD_CHANGE_OPT_WORKSPACE,
	CMD_CHANGE_OPT_STAT,
	CMD_CHANGE_OPT_RAW,
	CMD_CHANGE_OPT_SENSITIVE,
	CMD_CHANGE_OPT_UNREVIEWED,
	CMD_CHANGE_OPT_INCLUDE,
	CMD_CHANGE_OPT_IGNORED,
};
#define CMD_CHANGE_LONGOPTS \
	{ "db", required_argument, NULL, CMD_CHANGE_OPT_DB }, \
	{ "workspace", required_argument, NULL, CMD_CHANGE_OPT_WORKSPACE }, \
	{ "stat", no_argument, NULL, CMD_CHANGE_OPT_STAT }, \
	{ "raw", no_argument, NULL, CMD_CHANGE_OPT_RAW }, \
	{ "include-sensitive", no_argument, NULL, CMD_CHANGE_OPT_SENSITIVE }, \
	{ "include-unreviewed", no_argument, NULL, \
	    CMD_CHANGE_OPT_UNREVIEWED }, \
	{ "include", required_argument, NULL, CMD_CHANGE_OPT_INCLUDE }, \
	{ "include-ignored", no_argument, NULL, CMD_CHANGE_OPT_IGNORED }
struct cmd_change_opts {
	const char		*db;		/* --db FILE */
	const char		*workspace;	/* --workspace DIR */
	unsigned		 diff;		/* COW_DIFF_STAT, COW_DIFF_RAW */
	unsigned		 apply;		/* COW_APPLY_SENSITIVE,
						   COW_APPLY_UNREVIEWED,
						   CMD_APPLY_IGNORED */
	struct cmd_include	 include;	/* --include PATH ... */
};
/* ch (with its argument arg) into o: 0, or -1 (said on stderr); 1 when ch
 * is not one of CMD_CHANGE_OPT_*. */
int	cmd_change_opt(const char *name, int ch, const char *arg,
	    struct cmd_change_opts *o);
/* Release the named paths in ch: -1 (said) if one is not a path apply
 * with flags leaves out. */
int	cmd_cow_include(const char *name, struct cow_changes *ch,
	    unsigned flags, const struct cmd_include *);
int	cmd_cow_apply(struct store *st, const struct store_run *r,
	    unsigned flags, const struct cmd_include *);
/* Only the changes under paths; a path named exactly is applied though
 * it would be left out (as --include PATH), a directory releases none. */
int	cmd_cow_apply_paths(struct store *st, const struct store_run *r,
	    unsigned flags, const struct cmd_include *, char *const *paths,
	    size_t npaths);
int	cmd_cow_discard(struct store *st, const struct store_run *r);
/* Paths left out of an apply with flags (cow_review_held). */
size_t	cmd_cow_left_out(const struct cow_changes *ch, unsigned flags);

#endif

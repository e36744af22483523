/*
 * The commands of `warren queue` (queue/queue.h is the queue): what
 * cmd_queue.c (the dispatcher and the small commands), cmd_queue_add.c,
 * cmd_queue_rows.c (--jsonl and --csv), cmd_queue_export.c and
 * cmd_queue_apply.c share.
 */
#ifndef WARREN_CMD_QUEUE_H
#define WARREN_CMD_QUEUE_H

#include <stddef.h>
#include <stdint.h>

#include <jansson.h>

#include "cli/cmd.h"
#include "queue/queue.h"

#define CMD_QUEUE_INPUT_MAX	(64u * 1024 * 1024)	/* a file of jobs */
#define CMD_QUEUE_ATTEMPTS_MAX	100
#define CMD_QUEUE_PRIORITY_MAX	1000000
#define CMD_QUEUE_LIMIT_MAX	1000000		/* ls --limit */

/* A job read from --jsonl or --csv; strings are owned. */
struct cmd_queue_row {
	unsigned long		 line;
	char			*task, *profile, *workspace, *schema, *key;
	char			*params;
	int			 priority, max_attempts;
	int			 has_priority, has_attempts;
};

struct cmd_queue_rows {
	struct cmd_queue_row	*v;
	size_t			 n, cap;
};

/* What cmd_queue_parse read. */
struct cmd_queue_opts {
	const char		*url;		/* --queue */
	int			 json;
	int			 has_status;
	enum queue_status	 status;
	unsigned		 mask;		/* purge: 1 << status */
	int			 has_older;
	uint64_t		 older_ms;
	const char		*format;
	int			 all_done;
	struct cmd_change_opts	 chg;		/* apply, diff: --db (the run
						   database), --workspace (where
						   to), --stat ... */
	int			 any_workspace;	/* apply, diff: a job of
						   another workspace too */
	unsigned		 limit;		/* ls: --limit, 0 none */
};

/* Options of cmd_queue_parse, as bits of its allowed mask. */
#define CMD_QUEUE_O_JSON	0x01
#define CMD_QUEUE_O_STATUS	0x02
#define CMD_QUEUE_O_PURGE	0x04	/* --done --dead --cancelled
					   --older-than */
#define CMD_QUEUE_O_FORMAT	0x08
#define CMD_QUEUE_O_APPLY	0x10	/* --all-done --include-sensitive
					   --include-unreviewed --include */
#define CMD_QUEUE_O_WHERE	0x20	/* --db --workspace --any-workspace */
#define CMD_QUEUE_O_STAT	0x40	/* --stat --raw */
#define CMD_QUEUE_O_LIMIT	0x80	/* --limit */
#define CMD_QUEUE_O_NOARGS	0x100	/* not an option: no operands */

/* cmd_queue.c */
int	cmd_queue_parse(int argc, char **argv, unsigned allowed,
	    struct cmd_queue_opts *o);
/* Say msg on stderr as "warren queue NAME: msg", escaped. */
void	cmd_queue_error(const char *name, const char *fmt, ...)
	    __attribute__((format(printf, 2, 3)));
/* The queue --queue URL names, else queue_url ($WARREN_QUEUE_URL or the
 * user's config), else queue.db beside the state database (an older
 * warren's queue in the state database is said, cmd_queue_legacy); NULL
 * with *exitp set (said on stderr). cmd_queue_open takes
 * only a queue that is there (ls, show, cancel ...: none is exit 2, and
 * nothing is made); cmd_queue_create makes it if need be (add, work). */
struct queue *cmd_queue_open(const char *name, const char *url, int *exitp);
struct queue *cmd_queue_create(const char *name, const char *url,
	    int *exitp);
/* A queue error as an exit code (said on stderr): an unknown job is the
 * user's (2), the rest the database's (6). */
int	cmd_queue_fail(struct queue *q, const char *name);
/* JOB: a positive id; -1 (said) if it is not one. */
int	cmd_queue_job_arg(const char *name, const char *arg, int64_t *id);
/* The one JOB operand of show, cancel and retry (after the options);
 * -1 (said) if there is not exactly one or it is no id. */
int	cmd_queue_one_job(int argc, char **argv, int64_t *id);
/* A whole file, or stdin for "-", NUL-terminated, at most
 * CMD_QUEUE_INPUT_MAX bytes; NULL (said) on error. */
char	*cmd_queue_slurp(const char *name, const char *path, size_t *lenp);
/* "7d", "12h", "30m", "90s", "500ms": -1 (said) if not a duration. */
int	cmd_queue_duration(const char *name, const char *opt, const char *s,
	    uint64_t *ms);

/* Where a file is, as a queue's results name it: "HOST:PATH" (the host
 * name, the path made absolute), in buf (truncated to bufsz): a state
 * database (struct queue_result's run_where: a run id means something
 * only there) or a workspace (where a job was applied). */
void	queue_where(char *buf, size_t bufsz, const char *db);

/* cmd_queue_add.c */
int	cmd_queue_add(int argc, char **argv);
/* A schema: a file's JSON object, usable (jschema_usable), as compact
 * text; NULL (err says why). */
char	*cmd_queue_schema_file(const char *path, char *err, size_t errsz);
/* DIR made canonical; NULL (err says why) if it is not a directory. */

/* cmd_queue_profile.c */
/* Every job's profile (NULL: the orchestrator) is one its workspace
 * offers: 0, or -1 with *bad the job and err why. */
int	cmd_queue_profiles_check(const struct queue_job_new *jobs, size_t n,
	    size_t *bad, char *err, size_t errsz);

/* cmd_queue_rows.c */
/* One job a JSON line; -1 with err naming the line. */
int	cmd_queue_rows_jsonl(const char *text, size_t len,
	    struct cmd_queue_rows *rows, char *err, size_t errsz);
/* One job a CSV row, its task tmpl with {column} filled in (and the key
 * keytmpl, if not NULL); -1 with err naming the line. */
int	cmd_queue_rows_csv(const char *text, size_t len, const char *tmpl,
	    const char *keytmpl, struct cmd_queue_rows *rows, char *err,
	    size_t errsz);
void	cmd_queue_rows_free(struct cmd_queue_rows *rows);

/* cmd_queue_ls.c: ls and show */
int	cmd_queue_ls(int argc, char **argv);
int	cmd_queue_show(int argc, char **argv);
/* A JSON value of stored JSON text (params, schema, output), or the text
 * as a string if it does not parse; null for NULL. */
json_t	*cmd_queue_json_text(const char *s);

/* cmd_queue_steer.c: cancel, retry, purge */
int	cmd_queue_cancel(int argc, char **argv);
int	cmd_queue_retry(int argc, char **argv);
int	cmd_queue_purge(int argc, char **argv);

/* cmd_queue_stats.c */
int	cmd_queue_stats(int argc, char **argv);

/* cmd_queue_export.c */
int	cmd_queue_export(int argc, char **argv);
/* cmd_queue_export_csv.c */
/* The jobs as CSV on stdout, a header then a row a job: 0, or -1. */
int	cmd_queue_export_csv(const struct queue_job *v, size_t n);
/* cmd_queue_apply.c */
int	cmd_queue_apply(int argc, char **argv);
int	cmd_queue_diff(int argc, char **argv);

#endif

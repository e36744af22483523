/*
 * warren queue SUBCOMMAND: the batch queue (queue/queue.h) from the
 * command line. This file finds the subcommand and holds what the
 * subcommands share: options, opening the queue, errors, reading input.
 * Each subcommand lives in a cmd_queue_*.c of its own (work is
 * cmd_queue_work.c's).
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <jansson.h>

#include "cli/cmd.h"
#include "cli/cmd_queue.h"
#include "common/config.h"
#include "common/exitcode.h"
#include "common/jtext.h"
#include "common/str.h"
#include "common/xmalloc.h"
#include "store/store.h"

static const struct cmd cmd_queue_cmds[] = {
	{ "add", "[options] TASK | --jsonl FILE | --csv FILE --template T",
	    "add jobs", cmd_queue_add },
	{ "work", "[--jobs N] [--follow] [--lease D] [--json]",
	    "run the queued jobs", cmd_queue_work },
	{ "ls", "[--status S] [--limit N] [--json]",
	    "list the jobs (--limit: the newest N)", cmd_queue_ls },
	{ "show", "[--json] JOB", "show a job and every attempt",
	    cmd_queue_show },
	{ "cancel", "JOB", "cancel a job (a running one is stopped)",
	    cmd_queue_cancel },
	{ "retry", "JOB | --dead", "queue a dead or cancelled job again",
	    cmd_queue_retry },
	{ "purge", "--done|--dead|--cancelled ... [--older-than D]",
	    "remove finished jobs", cmd_queue_purge },
	{ "stats", "[--json]", "jobs by status, attempts, jobs done a "
	    "minute, the job queued longest", cmd_queue_stats },
	{ "export", "--format jsonl|csv [--status S]",
	    "print the jobs' results", cmd_queue_export },
	{ "diff", "[--stat] [--raw] [--db FILE] [--workspace DIR] "
	    "[--any-workspace] JOB", "show a done job's changes against the "
	    "workspace here", cmd_queue_diff },
	{ "apply", "[--include-sensitive] [--include-unreviewed] "
	    "[--include-ignored] [--include PATH ...] [--db FILE] [--workspace DIR] [--any-workspace] JOB | "
	    "--all-done", "apply a done job's changes into the workspace here "
	    "(or DIR), on any machine",
	    cmd_queue_apply },
};
#define CMD_QUEUE_NCMDS	(sizeof(cmd_queue_cmds) / sizeof(cmd_queue_cmds[0]))

static int
cmd_queue_usage(FILE *f)
{
	size_t	i;

	fprintf(f, "usage: warren queue SUBCOMMAND [--queue URL] [ARGS]\n\n");
	for (i = 0; i < CMD_QUEUE_NCMDS; i++)
		fprintf(f, "  %-7s %s\n          %s\n", cmd_queue_cmds[i].name,
		    cmd_queue_cmds[i].usage, cmd_queue_cmds[i].summary);
	fprintf(f, "\nThe queue is --queue URL, else $WARREN_QUEUE_URL, else "
	    "queue_url in your config,\nelse queue.db beside the state "
	    "database ($XDG_STATE_HOME/warren/queue.db).\n"
	    "docs/queue.md tells more.\n");
	return f == stdout ? WARREN_EXIT_OK : WARREN_EXIT_USAGE;
}

/* An unknown subcommand: the one meant, if a slip away from one. */
static void
cmd_queue_unknown(const char *name)
{
	const char	*names[CMD_QUEUE_NCMDS], *near;
	size_t		 i;

	for (i = 0; i < CMD_QUEUE_NCMDS; i++)
		names[i] = cmd_queue_cmds[i].name;
	near = cmd_getopt_near(name, strlen(name), names, CMD_QUEUE_NCMDS);
	cmd_usage_error("queue", "unknown subcommand '%s'%s%s%s", name,
	    near != NULL ? ": did you mean '" : "", near != NULL ? near : "",
	    near != NULL ? "'?" : "");
}

int
cmd_queue(int argc, char **argv)
{
	size_t	i;

	if (argc < 2)
		return cmd_queue_usage(stderr);
	if (strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0 ||
	    strcmp(argv[1], "help") == 0)
		return cmd_queue_usage(stdout);
	for (i = 0; i < CMD_QUEUE_NCMDS; i++)
		if (strcmp(argv[1], cmd_queue_cmds[i].name) == 0)
			return cmd_queue_cmds[i].main(argc - 1, argv + 1);
	cmd_queue_unknown(argv[1]);
	return WARREN_EXIT_USAGE;
}

void
cmd_queue_error(const char *name, const char *fmt, ...)
{
	va_list	ap;
	char	cmd[128];

	snprintf(cmd, sizeof(cmd), "queue%s%s", *name != '\0' ? " " : "",
	    name);
	va_start(ap, fmt);
	cmd_verror(cmd, "", fmt, ap);
	va_end(ap);
}

/* A password in the URL: only the user's file or the environment may
 * hold it, and config_dump says "set", never the value. */
static const struct config_key cmd_queue_keys[] = {
	{ "queue_url", CONFIG_STRING, "WARREN_QUEUE_URL", NULL, 0, 0, NULL,
	    CONFIG_NOPROJECT | CONFIG_SECRET, "the queue of `warren queue`: "
	    "a SQLite file or postgresql://USER@HOST/DB (many machines); "
	    "unset: queue.db beside the state database" },
};

int
cmd_queue_declare(struct config *c)
{
	return config_declare(c, cmd_queue_keys,
	    sizeof(cmd_queue_keys) / sizeof(cmd_queue_keys[0]));
}

/* queue_url from the environment or the user's config (with every key a
 * run reads declared, so that the file reads as it does for a run): 0
 * with *url (NULL: the default, queue.db beside the state database;
 * free it), or -1 said. */
static int
cmd_queue_config_url(const char *name, char **url)
{
	struct config	*c;
	const char	*v;
	int		 rc = 0;

	*url = NULL;
	if ((c = config_new()) == NULL || cmd_run_declare(c) == -1) {
		cmd_queue_error(name, "config: out of memory");
		config_free(c);
		return -1;
	}
	if (config_load_standard(c) == -1) {
		cmd_queue_error(name, "%s", config_error(c));
		rc = -1;
	} else if ((v = config_str(c, "queue_url")) != NULL && *v != '\0' &&
	    (*url = strdup(v)) == NULL) {
		cmd_queue_error(name, "out of memory");
		rc = -1;
	}
	config_free(c);
	return rc;
}

/*
 * The default queue (queue.db) where the state database holds the queue
 * an older warren kept there: a command that only reads, finding no
 * queue.db, says where the old one is and how to reach it rather than
 * "no queue"; any command says so while the old one has jobs to run.
 * Nothing is moved (docs/queue.md "Where the queue lives"). -1 said.
 */
static int
cmd_queue_legacy(const char *name, unsigned flags)
{
	char	db[PATH_MAX], qf[PATH_MAX];
	int64_t	jobs, open;

	if (store_path(db, sizeof(db), NULL) == -1 ||
	    queue_path(qf, sizeof(qf), NULL) == -1 || strcmp(db, qf) == 0 ||
	    !queue_legacy(db, &jobs, &open))
		return 0;
	if ((flags & QUEUE_OPEN_EXISTING) && access(qf, F_OK) == -1) {
		cmd_queue_error(name, "no queue at %s: the file does not exist;"
		    " the state database %s holds the queue an older warren "
		    "kept there (%lld jobs, %lld to run): give --queue %s (or "
		    "queue_url in your config) to reach it", qf, db,
		    (long long)jobs, (long long)open, db);
		return -1;
	}
	if (open > 0)
		cmd_queue_error(name, "note: the queue is %s; the state "
		    "database %s still holds %lld jobs to run in the queue an "
		    "older warren kept there: `warren queue work --queue %s` "
		    "runs them", qf, db, (long long)open, db);
	return 0;
}

/* No queue there (QUEUE_OPEN_EXISTING) is the user's, as an unknown
 * job is: exit 2; the rest the database's: exit 6. */
static struct queue *
cmd_queue_open_flags(const char *name, const char *url, unsigned flags,
    int *exitp)
{
	struct queue	*q;
	char		 err[QUEUE_ERR_MAX + 64], *conf = NULL;

	if (url == NULL && cmd_queue_config_url(name, &conf) == -1) {
		*exitp = WARREN_EXIT_CONFIG;
		return NULL;
	}
	if (url == NULL)
		url = conf;
	if (queue_url_default(url) && cmd_queue_legacy(name, flags) == -1) {
		*exitp = WARREN_EXIT_USAGE;
		return NULL;
	}
	if ((q = queue_open_flags(url, flags, err, sizeof(err))) == NULL) {
		*exitp = errno == ENOENT ? WARREN_EXIT_USAGE :
		    WARREN_EXIT_STORE;
		cmd_queue_error(name, "%s", err);
	}
	if (conf != NULL)
		freezero(conf, strlen(conf));
	return q;
}

struct queue *
cmd_queue_open(const char *name, const char *url, int *exitp)
{
	return cmd_queue_open_flags(name, url, QUEUE_OPEN_EXISTING, exitp);
}

struct queue *
cmd_queue_create(const char *name, const char *url, int *exitp)
{
	return cmd_queue_open_flags(name, url, 0, exitp);
}

int
cmd_queue_fail(struct queue *q, const char *name)
{
	int	saved = errno;

	cmd_queue_error(name, "%s", queue_errmsg(q));
	return saved == ENOENT || saved == EINVAL ? WARREN_EXIT_USAGE :
	    WARREN_EXIT_STORE;
}

int
cmd_queue_job_arg(const char *name, const char *arg, int64_t *id)
{
	const char	*errstr;

	*id = strtonum(arg, 1, INT64_MAX, &errstr);
	if (errstr != NULL) {
		cmd_queue_error(name, "job \"%s\" is %s: give an id from `warren"
		    " queue ls`", arg, errstr);
		return -1;
	}
	return 0;
}

int
cmd_queue_one_job(int argc, char **argv, int64_t *id)
{
	if (optind != argc - 1) {
		cmd_queue_error(argv[0], "give one JOB (an id from `warren "
		    "queue ls`)");
		return -1;
	}
	return cmd_queue_job_arg(argv[0], argv[optind], id);
}

int
cmd_queue_duration(const char *name, const char *opt, const char *s,
    uint64_t *ms)
{
	double	d;

	if (config_parse_duration(s, &d) == -1) {
		cmd_queue_error(name, "%s %s: not a duration (give 7d, 12h, "
		    "30m, 90s or 500ms)", opt, s);
		return -1;
	}
	*ms = (uint64_t)d;
	return 0;
}

/* Read fd to its end into a NUL-terminated string. */
static char *
cmd_queue_read_fd(const char *name, const char *what, int fd, size_t *lenp)
{
	char	*s = NULL;
	size_t	 len = 0, cap = 0;
	ssize_t	 r;

	for (;;) {
		if (len + 1 >= cap) {
			if (cap >= CMD_QUEUE_INPUT_MAX) {
				cmd_queue_error(name, "%s is over %u MB: split "
				    "it", what, CMD_QUEUE_INPUT_MAX >> 20);
				free(s);
				return NULL;
			}
			cap = cap ? cap * 2 : 65536;
			s = xreallocarray(s, 1, cap);
		}
		if ((r = read(fd, s + len, cap - len - 1)) == -1 &&
		    errno == EINTR)
			continue;
		if (r == -1) {
			cmd_queue_error(name, "reading %s: %s", what,
			    strerror(errno));
			free(s);
			return NULL;
		}
		if (r == 0)
			break;
		len += (size_t)r;
	}
	s[len] = '\0';
	*lenp = len;
	return s;
}

char *
cmd_queue_slurp(const char *name, const char *path, size_t *lenp)
{
	char	*s;
	int	 fd;

	if (strcmp(path, "-") == 0)
		s = cmd_queue_read_fd(name, "stdin", STDIN_FILENO, lenp);
	else if ((fd = open(path, O_RDONLY | O_CLOEXEC)) == -1) {
		cmd_queue_error(name, "%s: %s", path, strerror(errno));
		return NULL;
	} else {
		s = cmd_queue_read_fd(name, path, fd, lenp);
		close(fd);
	}
	if (s != NULL && memchr(s, '\0', *lenp) != NULL) {
		cmd_queue_error(name, "%s holds a NUL byte: give a text file",
		    strcmp(path, "-") == 0 ? "stdin" : path);
		free(s);
		return NULL;
	}
	return s;
}

enum {
	OPT_QUEUE = 256,
	OPT_JSON,
	OPT_STATUS,
	OPT_DONE,
	OPT_DEAD,
	OPT_CANCELLED,
	OPT_OLDER,
	OPT_FORMAT,
	OPT_ALLDONE,
	OPT_ANYWS,
	OPT_LIMIT,
	OPT_HELP,
};

static const struct option cmd_queue_longopts[] = {
	{ "queue", required_argument, NULL, OPT_QUEUE },
	{ "json", no_argument, NULL, OPT_JSON },
	{ "status", required_argument, NULL, OPT_STATUS },
	{ "done", no_argument, NULL, OPT_DONE },
	{ "dead", no_argument, NULL, OPT_DEAD },
	{ "cancelled", no_argument, NULL, OPT_CANCELLED },
	{ "older-than", required_argument, NULL, OPT_OLDER },
	{ "format", required_argument, NULL, OPT_FORMAT },
	{ "all-done", no_argument, NULL, OPT_ALLDONE },
	{ "any-workspace", no_argument, NULL, OPT_ANYWS },
	{ "limit", required_argument, NULL, OPT_LIMIT },
	{ "help", no_argument, NULL, OPT_HELP },
	CMD_CHANGE_LONGOPTS,
	{ NULL, 0, NULL, 0 },
};

static unsigned
cmd_queue_opt_bit(int ch)
{
	switch (ch) {
	case OPT_JSON:
		return CMD_QUEUE_O_JSON;
	case OPT_STATUS:
		return CMD_QUEUE_O_STATUS;
	case OPT_DONE:
	case OPT_DEAD:
	case OPT_CANCELLED:
	case OPT_OLDER:
		return CMD_QUEUE_O_PURGE;
	case OPT_FORMAT:
		return CMD_QUEUE_O_FORMAT;
	case OPT_ALLDONE:
	case CMD_CHANGE_OPT_SENSITIVE:
	case CMD_CHANGE_OPT_UNREVIEWED:
	case CMD_CHANGE_OPT_INCLUDE:
	case CMD_CHANGE_OPT_IGNORED:
		return CMD_QUEUE_O_APPLY;
	case CMD_CHANGE_OPT_DB:
	case CMD_CHANGE_OPT_WORKSPACE:
	case OPT_ANYWS:
		return CMD_QUEUE_O_WHERE;
	case CMD_CHANGE_OPT_STAT:
	case CMD_CHANGE_OPT_RAW:
		return CMD_QUEUE_O_STAT;
	case OPT_LIMIT:
		return CMD_QUEUE_O_LIMIT;
	default:
		return 0;
	}
}

/* The usage line of the subcommand name. */
static int
cmd_queue_sub_usage(const char *name, FILE *f)
{
	size_t	i;

	for (i = 0; i < CMD_QUEUE_NCMDS; i++)
		if (strcmp(cmd_queue_cmds[i].name, name) == 0)
			fprintf(f, "usage: warren queue %s [--queue URL] %s\n"
			    "%s.\n", name, cmd_queue_cmds[i].usage,
			    cmd_queue_cmds[i].summary);
	fprintf(f, "docs/queue.md and man warren tell more.\n");
	return f == stdout ? WARREN_EXIT_OK : WARREN_EXIT_USAGE;
}

/* --limit N: 1 to CMD_QUEUE_LIMIT_MAX. */
static int
cmd_queue_limit(const char *name, const char *arg, unsigned *limit)
{
	const char	*errstr;

	*limit = (unsigned)strtonum(arg, 1, CMD_QUEUE_LIMIT_MAX, &errstr);
	if (errstr != NULL) {
		cmd_queue_error(name, "--limit %s: a number of jobs from 1 to %d",
		    arg, CMD_QUEUE_LIMIT_MAX);
		return -1;
	}
	return 0;
}

static int
cmd_queue_opt(const char *name, int ch, struct cmd_queue_opts *o)
{
	switch (ch) {
	case OPT_QUEUE:
		o->url = optarg;
		break;
	case OPT_JSON:
		o->json = 1;
		break;
	case OPT_STATUS:
		if (queue_status_parse(optarg, &o->status) == -1) {
			cmd_queue_error(name, "--status %s: give queued, "
			    "running, retrying, done, dead or cancelled",
			    optarg);
			return -1;
		}
		o->has_status = 1;
		break;
	case OPT_DONE:
		o->mask |= 1u << QUEUE_DONE;
		break;
	case OPT_DEAD:
		o->mask |= 1u << QUEUE_DEAD;
		break;
	case OPT_CANCELLED:
		o->mask |= 1u << QUEUE_CANCELLED;
		break;
	case OPT_OLDER:
		o->has_older = 1;
		return cmd_queue_duration(name, "--older-than", optarg,
		    &o->older_ms);
	case OPT_FORMAT:
		o->format = optarg;
		break;
	case OPT_ALLDONE:
		o->all_done = 1;
		break;
	case OPT_ANYWS:
		o->any_workspace = 1;
		break;
	case OPT_LIMIT:
		return cmd_queue_limit(name, optarg, &o->limit);
	default:
		return cmd_change_opt(name, ch, optarg, &o->chg) == 0 ? 0 : -1;
	}
	return 0;
}

/*
 * The options of ls, show, cancel, retry, purge, export and apply (allowed
 * is a mask of CMD_QUEUE_O_*, --queue and --help always taken), the
 * arguments left at argv[optind]. 0; 1 --help (said); -1 a usage error
 * (said).
 */
int
cmd_queue_parse(int argc, char **argv, unsigned allowed,
    struct cmd_queue_opts *o)
{
	char	cmd[48];
	int	ch, li;

	memset(o, 0, sizeof(*o));
	snprintf(cmd, sizeof(cmd), "queue %s", argv[0]);
	optind = 1;
	while ((ch = cmd_getopt(cmd, argc, argv, "", cmd_queue_longopts)) !=
	    -1) {
		if (ch == OPT_HELP) {
			cmd_queue_sub_usage(argv[0], stdout);
			return 1;
		}
		if (ch == '?')
			return -1;
		if (ch != OPT_QUEUE && !(allowed & cmd_queue_opt_bit(ch))) {
			for (li = 0; cmd_queue_longopts[li].val != ch; li++)
				;
			cmd_usage_error(cmd, "--%s is not an option of %s",
			    cmd_queue_longopts[li].name, cmd);
			return -1;
		}
		if (cmd_queue_opt(argv[0], ch, o) == -1)
			return -1;
	}
	if ((allowed & CMD_QUEUE_O_NOARGS) && optind != argc) {
		cmd_queue_error(argv[0], "unexpected argument \"%s\"",
		    argv[optind]);
		return -1;
	}
	return 0;
}

void
queue_where(char *buf, size_t bufsz, const char *db)
{
	char	host[HOST_NAME_MAX + 1], real[PATH_MAX];

	if (gethostname(host, sizeof(host)) == -1)
		snprintf(host, sizeof(host), "?");
	host[sizeof(host) - 1] = '\0';
	if (realpath(db, real) == NULL)
		snprintf(real, sizeof(real), "%s", db);
	snprintf(buf, bufsz, "%s:%s", host, real);
}

/*
 * The commands that read a workspace's runs (store/store.h): their
 * options and how they open the database and find a run, and warren runs,
 * graph, report, forget, diff, apply and discard (warren show is in
 * cmd_show.c). Every stored text came from an LLM or a tool and is
 * escaped before it reaches the terminal.
 */
#include <sys/stat.h>

#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <jansson.h>

#include "cli/cmd.h"
#include "cli/cmd_store.h"
#include "cli/graph.h"
#include "cli/layer.h"
#include "cli/report.h"
#include "common/clock.h"
#include "common/config.h"
#include "common/exitcode.h"
#include "common/jtext.h"
#include "common/price.h"
#include "common/str.h"
#include "store/store.h"
#include "workspace/cow.h"
#include "workspace/hostexec.h"

static const struct option cmd_store_longopts[] = {
	{ "json", no_argument, NULL, OPT_JSON },
	{ "messages", no_argument, NULL, OPT_MESSAGES },
	{ "limit", required_argument, NULL, OPT_LIMIT },
	{ "format", required_argument, NULL, OPT_FORMAT },
	{ "all", no_argument, NULL, OPT_ALL },
	{ "color", required_argument, NULL, OPT_COLOR },
	{ "output", required_argument, NULL, OPT_OUTPUT },
	{ "help", no_argument, NULL, OPT_HELP },
	CMD_CHANGE_LONGOPTS,
	{ NULL, 0, NULL, 0 },
};

/* A usage error cmd_store_parse has said already (cmd_getopt). */
static int	cmd_store_said;

/* Each command's usage, and what its operands must be; the last, graph,
 * for any other name. */
static const struct {
	const char	*name, *operands, *usage;
} cmd_store_usages[] = {
	{ "runs", "it takes no operands",
	    "usage: warren runs [--db FILE] [--workspace DIR |"
	    " --all] [--limit N] [--json]\n"
	    "Lists the runs of the workspace DIR (default: the one the "
	    "current directory\nis in), or of every workspace.\n" },
	{ "show", "give one RUN",
	    "usage: warren show [--db FILE] [--workspace DIR]"
	    " [--messages] [--json] RUN\n" },
	{ "forget", "give one RUN or more",
	    "usage: warren forget [--db FILE] [--workspace DIR]"
	    " RUN ...\n" },
	{ "diff", "give one RUN",
	    "usage: warren diff [--db FILE] [--workspace DIR]"
	    " [--stat] [--color=auto|always|never | --raw] RUN\n"
	    "    [PATH ...]\n"
	    "Shows what a copy-on-write run changed, against the "
	    "workspace as it is now\n(only under each PATH, relative to "
	    "the workspace, if given). A line holding\ncontrol bytes, "
	    "bidi controls or invisible characters is shown escaped "
	    "(\\xNN,\na backslash as \\\\) and marked; --raw prints "
	    "the bytes as they are, for git\napply or patch -p1. Files "
	    "the workspace's .gitignore ignores are listed apart.\n" },
	{ "apply", "give one RUN",
	    "usage: warren apply [--db FILE] [--workspace DIR]"
	    " [--include-sensitive] [--include-unreviewed]\n"
	    "    [--include-ignored] [--include PATH ...] RUN [PATH ...]\n"
	    "Writes a copy-on-write run's changes into the workspace "
	    "(only under each PATH,\nrelative to the workspace, if "
	    "given), or nothing if the workspace changed\nunder any of "
	    "them since the run started (exit 1). Files the workspace's"
	    "\n.gitignore ignores are left out without --include-ignored;"
	    " a PATH naming a file\nexactly applies it as --include "
	    "does.\n" },
	{ "discard", "give one RUN",
	    "usage: warren discard [--db FILE] [--workspace DIR]"
	    " RUN\nThrows a copy-on-write run's changes away.\n" },
	{ "report", "give one RUN",
	    "usage: warren report [--db FILE] [--workspace DIR]"
	    " [-o FILE] RUN\n"
	    "Writes the run as one self-contained HTML page: a timeline "
	    "of its agents, its\nmemory graph, tokens per agent and each"
	    " transcript. FILE is warren-run-ID.html\nby default; - is "
	    "stdout.\n" },
	{ "graph", "give one RUN",
	    "usage: warren graph [--db FILE] [--workspace DIR]"
	    " [--format json|dot|mermaid] RUN\n" },
};

static int
cmd_store_usage(const char *name, FILE *f)
{
	size_t	i, last = sizeof(cmd_store_usages) /
		    sizeof(cmd_store_usages[0]) - 1;

	for (i = 0; i < last; i++)
		if (strcmp(name, cmd_store_usages[i].name) == 0)
			break;
	if (f == stderr) {
		/* One line: what was wrong, and where the help is. */
		if (!cmd_store_said)
			cmd_usage_error(name, "%s",
			    cmd_store_usages[i].operands);
		cmd_store_said = 0;
		return WARREN_EXIT_USAGE;
	}
	fputs(cmd_store_usages[i].usage, f);
	fprintf(f, "RUN is a run id from `warren runs`, or \"last\" (the "
	    "workspace's latest). The\ndatabase is FILE, else $WARREN_DB, "
	    "else $XDG_STATE_HOME/warren/warren.db.\n");
	return f == stdout ? WARREN_EXIT_OK : WARREN_EXIT_USAGE;
}

/* --color=auto|always|never: -1, 1, 0. */
static int
cmd_store_color(const char *name, const char *arg, int *color)
{
	if (strcmp(arg, "auto") == 0)
		*color = -1;
	else if (strcmp(arg, "always") == 0)
		*color = 1;
	else if (strcmp(arg, "never") == 0)
		*color = 0;
	else {
		fprintf(stderr, "warren %s: --color=%s: give auto, always or "
		    "never\n", name, arg);
		return -1;
	}
	return 0;
}

/* An option another of these commands takes, not name. */
static void
cmd_store_refuse(const char *name, int ch)
{
	size_t	i;

	for (i = 0; cmd_store_longopts[i].val != ch; i++)
		;
	cmd_usage_error(name, "--%s is not an option of %s",
	    cmd_store_longopts[i].name, name);
}

/* Parse the options; -1 on a usage error, 1 for --help. allowed lists the
 * options this command takes beyond --db/--workspace/--help. */
static int
cmd_store_parse_opts(int argc, char **argv, int allowed,
    struct cmd_store_opts *o)
{
	const char	*errstr;
	int		 ch;

	memset(o, 0, sizeof(*o));
	o->limit = 20;
	o->color = -1;
	optind = 1;
	while ((ch = cmd_getopt(argv[0], argc, argv, "o:",
	    cmd_store_longopts)) != -1) {
		if (ch == 'o')
			ch = OPT_OUTPUT;
		if (ch != '?' && ch != OPT_HELP && ch != CMD_CHANGE_OPT_DB &&
		    ch != CMD_CHANGE_OPT_WORKSPACE && !(allowed & ALLOW(ch))) {
			cmd_store_refuse(argv[0], ch);
			return -1;
		}
		switch (ch) {
		case OPT_JSON:
			o->json = 1;
			break;
		case OPT_MESSAGES:
			o->messages = 1;
			break;
		case OPT_LIMIT:
			o->limit = strtonum(optarg, 0, 1000000, &errstr);
			if (errstr != NULL) {
				fprintf(stderr, "warren %s: --limit %s is %s\n",
				    argv[0], optarg, errstr);
				return -1;
			}
			break;
		case OPT_ALL:
			o->all = 1;
			break;
		case OPT_COLOR:
			if (cmd_store_color(argv[0], optarg, &o->color) == -1)
				return -1;
			break;
		case OPT_OUTPUT:
			o->output = optarg;
			break;
		case OPT_FORMAT:
			if (graph_format_parse(optarg, &o->format) == -1) {
				fprintf(stderr, "warren %s: unknown format \"%s\""
				    " (json, dot or mermaid)\n", argv[0], optarg);
				return -1;
			}
			break;
		case OPT_HELP:
			return 1;
		default:
			if (ch == '?')
				return -1;
			if (cmd_change_opt(argv[0], ch, optarg, &o->chg) != 0)
				return -1;
			break;
		}
	}
	if (realpath(o->chg.workspace != NULL ? o->chg.workspace : ".",
	    o->ws) == NULL) {
		fprintf(stderr, "warren %s: workspace %s: %s\n", argv[0],
		    o->chg.workspace != NULL ? o->chg.workspace : ".",
		    strerror(errno));
		return -1;
	}
	return 0;
}

/* The options; a usage error is said here, not again by the caller. */
static int
cmd_store_parse(int argc, char **argv, int allowed, struct cmd_store_opts *o)
{
	int	rc = cmd_store_parse_opts(argc, argv, allowed, o);

	cmd_store_said = rc == -1;
	return rc;
}

static int
cmd_store_path(const char *name, const struct cmd_store_opts *o, char *path,
    size_t pathsz)
{
	if (store_path(path, pathsz, o->chg.db) == -1) {
		fprintf(stderr, "warren %s: no database path (%s): set HOME or "
		    "XDG_STATE_HOME, or give --db FILE\n", name,
		    strerror(errno));
		return -1;
	}
	return 0;
}

/*
 * Where runs were kept before: WORKSPACE/.warren/warren.db, a file any
 * write-capable agent of the workspace could rewrite. It is never read
 * unless named with --db; say it is there (db: the --db given, or NULL).
 */
void
cmd_legacy_db(const char *name, const char *db, const char *ws)
{
	const char	*env = getenv("WARREN_DB");
	char		 old[PATH_MAX], msg[2 * PATH_MAX + 256];

	if (db != NULL || (env != NULL && *env != '\0') ||
	    (size_t)snprintf(old, sizeof(old), "%s/.warren/warren.db", ws) >=
	    sizeof(old) || access(old, F_OK) == -1)
		return;
	snprintf(msg, sizeof(msg), "%s holds runs of an older warren; it is "
	    "no longer read, since an agent could have rewritten it. Its runs "
	    "stay readable with --db %s; nothing is resumed from it unless you"
	    " name it that way", old, old);
	cmd_error(name, "%s", msg);
}

/* The database, opened with flags; NULL (said, *exitp set) if not. */
static struct store *
cmd_store_open(const char *name, const struct cmd_store_opts *o, int flags,
    int *exitp)
{
	char		 path[4096], err[STORE_ERRMSG_MAX + 64];
	struct store	*st;

	if (cmd_store_path(name, o, path, sizeof(path)) == -1) {
		*exitp = WARREN_EXIT_USAGE;
		return NULL;
	}
	if ((st = store_open(path, flags, err, sizeof(err))) == NULL) {
		cmd_error(name, "%s", err);
		*exitp = WARREN_EXIT_STORE;
	}
	return st;
}

/* RUN: a positive id or "last", the latest run of the workspace. */
static int
cmd_store_run_arg(struct store *st, const struct cmd_store_opts *o,
    const char *name, const char *arg, int64_t *run, int *exitp)
{
	const char	*errstr;

	if (strcmp(arg, "last") == 0) {
		if (store_run_latest(st, o->ws, run) == 0)
			return 0;
		cmd_error(name, "%s", store_errmsg(st));
		*exitp = store_errcode(st) == STORE_ENOTFOUND ?
		    WARREN_EXIT_USAGE : WARREN_EXIT_STORE;
		return -1;
	}
	*run = strtonum(arg, 1, INT64_MAX, &errstr);
	if (errstr != NULL) {
		fprintf(stderr, "warren %s: run \"%s\" is %s: give an id from"
		    " `warren runs` or \"last\"\n", name, arg, errstr);
		*exitp = WARREN_EXIT_USAGE;
		return -1;
	}
	return 0;
}

struct store *
cmd_store_open_run(int argc, char **argv, int allowed,
    struct cmd_store_opts *o, int64_t *run, int *exitp)
{
	struct store	*st;
	int		 rc;

	if ((rc = cmd_store_parse(argc, argv, allowed, o)) != 0) {
		*exitp = cmd_store_usage(argv[0], rc == 1 ? stdout : stderr);
		return NULL;
	}
	if (optind != argc - 1) {
		*exitp = cmd_store_usage(argv[0], stderr);
		return NULL;
	}
	if ((st = cmd_store_open(argv[0], o, STORE_READ, exitp)) == NULL)
		return NULL;
	if (cmd_store_run_arg(st, o, argv[0], argv[optind], run, exitp) ==
	    -1) {
		store_close(st);
		return NULL;
	}
	return st;
}

/* A store error as an exit: an unknown run is the user's, the rest the
 * database's. */
int
cmd_store_fail(struct store *st, const char *name)
{
	cmd_error(name, "%s", store_errmsg(st));
	return store_errcode(st) == STORE_ENOTFOUND ? WARREN_EXIT_USAGE :
	    WARREN_EXIT_STORE;
}

static mode_t
cmd_umask(void)
{
	mode_t	m = umask(022);

	umask(m);
	return m;
}

/* Print untrusted text escaped, cut to max bytes (0 = no cut). */
void
cmd_print_text(const char *s, size_t max)
{
	char	*e;
	size_t	 len;

	if (s == NULL)
		return;
	len = strlen(s);
	if (max > 0 && len > max) {
		if ((e = malloc(max + 1)) == NULL)
			return;
		str_escape(e, max + 1, s, len);
	} else if ((e = str_escape_dup(s, len, 0)) == NULL)
		return;
	fputs(e, stdout);
	free(e);
}

/* Print a multi-line block, each line indented; control bytes escaped. */
void
cmd_print_block(const char *indent, const char *s, size_t max)
{
	char	*e, *line, *next;
	size_t	 len;

	if (s == NULL)
		return;
	len = strlen(s);
	if (max > 0 && len > max)
		len = max;
	if ((e = str_escape_dup(s, len, STR_ESC_KEEP_NL)) == NULL)
		return;
	for (line = e; line != NULL; line = next) {
		if ((next = strchr(line, '\n')) != NULL)
			*next++ = '\0';
		printf("%s%s\n", indent, line);
	}
	if (strlen(s) > len)
		printf("%s[... %zu more bytes]\n", indent, strlen(s) - len);
	free(e);
}

void
cmd_fmt_tokens(char *out, size_t outsz, uint64_t n)
{
	if (n >= 1000000)
		snprintf(out, outsz, "%.1fM", (double)n / 1e6);
	else if (n >= 10000)
		snprintf(out, outsz, "%.1fk", (double)n / 1e3);
	else
		snprintf(out, outsz, "%llu", (unsigned long long)n);
}

void
cmd_fmt_duration(char *out, size_t outsz, int64_t ms)
{
	if (ms < 0)
		ms = 0;
	if (ms < 60000)
		snprintf(out, outsz, "%.1fs", (double)ms / 1000);
	else if (ms < 3600000)
		snprintf(out, outsz, "%lldm%02llds", (long long)(ms / 60000),
		    (long long)(ms / 1000 % 60));
	else
		snprintf(out, outsz, "%lldh%02lldm", (long long)(ms / 3600000),
		    (long long)(ms / 60000 % 60));
}

void
cmd_fmt_time(char *out, size_t outsz, int64_t ms)
{
	struct tm	tm;
	time_t		t = (time_t)(ms / 1000);

	if (localtime_r(&t, &tm) == NULL ||
	    strftime(out, outsz, "%Y-%m-%d %H:%M", &tm) == 0)
		snprintf(out, outsz, "?");
}

/* "running" is shown as "interrupted" once its supervisor is gone. */
const char *
cmd_run_status(const struct store_run *r)
{
	if (r->status == STORE_RUN_RUNNING && !r->alive)
		return "interrupted";
	return store_run_status_name(r->status);
}

/* The user's config alone (never a project's: a workspace could make its
 * runs look cheap), loaded once for every run shown; NULL if it cannot be
 * read, said once. */
static const struct config *
cmd_user_config(void)
{
	static struct config	*c;
	static int		 tried;

	if (tried)
		return c;
	tried = 1;
	if ((c = config_new()) == NULL || cmd_run_declare(c) == -1 ||
	    config_load_standard(c) == -1) {
		fprintf(stderr, "warren: costs not shown: %s\n", c != NULL ?
		    config_error(c) : "out of memory");
		config_free(c);
		c = NULL;
	}
	return c;
}

/* The run's cost in *usd: 1, or 0 where its model has no price (or the
 * prices cannot be read: said once). */
static int
cmd_run_price(const struct store_run *r, double *usd)
{
	const struct config	*c;
	struct price		 p;
	char			 err[512];
	int			 rc;
	static int		 said;

	*usd = 0;
	if ((c = cmd_user_config()) == NULL)
		return 0;
	if ((rc = price_find(c, r->model, &p, err, sizeof(err))) == -1) {
		if (!said++)	/* once, not for every run listed */
			fprintf(stderr, "warren: costs not shown: %s\n", err);
		return 0;
	}
	if (rc == 1)
		*usd = price_cost(&p, &r->usage);
	return rc;
}

int
cmd_run_cost(const struct store_run *r, char *buf, size_t sz)
{
	double	usd;

	buf[0] = '\0';
	if (!cmd_run_price(r, &usd))
		return 0;
	price_fmt(buf, sz, usd);
	return 1;
}

int64_t
cmd_run_duration(const struct store_run *r)
{
	if (r->ended_ms > 0)
		return r->ended_ms - r->started_ms;
	return clock_wall_ms() - r->started_ms;
}

/* Its copy-on-write layer: {mode, state, dir}, or null (in place). */
static json_t *
cmd_json_layer(const struct store_run *r)
{
	if (r->cow_mode == NULL)
		return json_null();
	return json_pack("{s:o, s:o, s:o}", "mode", jtext(r->cow_mode),
	    "state", jtext(r->cow_state), "dir", jtext(r->cow_dir));
}

/* The CHANGES column: what became of the run's layer. */
static const char *
cmd_run_layer(const struct store_run *r)
{
	if (r->cow_mode == NULL)
		return "in place";
	if (layer_pending(r))
		return "to review";
	if (strcmp(r->cow_state, "empty") == 0)
		return "none";
	return r->cow_state;
}

/* The run's parameters as the object they are; text that is not one (a
 * damaged row) stays a string. */
static json_t *
cmd_json_params(const char *params)
{
	json_t	*o;

	if (params != NULL && (o = json_loads(params, JSON_DECODE_ANY,
	    NULL)) != NULL) {
		if (json_is_object(o))
			return o;
		json_decref(o);
	}
	return jtext(params);
}

static json_t *
cmd_json_run_row(const struct store_run *r)
{
	return json_pack("{s:I, s:o, s:s, s:o, s:o, s:o, s:I, s:I, s:I, s:I,"
	    " s:I, s:i, s:o, s:o, s:o, s:o}",
	    "id", (json_int_t)r->id, "task", jtext(r->task),
	    "status", cmd_run_status(r), "result", jtext(r->result),
	    "workspace", jtext(r->workspace),
	    "model", jtext(r->model),
	    "agents", (json_int_t)r->nagents,
	    "tokens_in", (json_int_t)r->usage.input,
	    "tokens_out", (json_int_t)r->usage.output,
	    "started_ms", (json_int_t)r->started_ms,
	    "duration_ms", (json_int_t)cmd_run_duration(r),
	    "resumes", r->resumes,
	    "params", cmd_json_params(r->params),
	    "layer", cmd_json_layer(r),
	    "continues", r->continues > 0 ?
	    json_integer((json_int_t)r->continues) : json_null(),
	    "continued_by", jtext(r->continued_by));
}

/* The run, and its "cost_usd" where its model has a price. */
json_t *
cmd_json_run(const struct store_run *r)
{
	json_t	*o;
	double	 usd;

	o = cmd_json_run_row(r);
	if (o != NULL && cmd_run_price(r, &usd))
		json_object_set_new(o, "cost_usd", json_real(price_usd(usd)));
	return o;
}

int
cmd_json_print(json_t *j)
{
	int	rc;

	if (j == NULL) {
		fprintf(stderr, "warren: out of memory\n");
		return WARREN_EXIT_INTERNAL;
	}
	/* 15 digits: a cost_usd (price_usd) reads as 0.015, not as
	 * 0.014999999999999999. */
	rc = json_dumpf(j, stdout, JSON_INDENT(2) | JSON_REAL_PRECISION(15));
	json_decref(j);
	if (rc == -1 || putchar('\n') == EOF) {
		fprintf(stderr, "warren: writing the output: %s\n",
		    strerror(errno));
		return WARREN_EXIT_INTERNAL;
	}
	return WARREN_EXIT_OK;
}

/* ws: the workspace whose runs these are, NULL for every one. */
#define CMD_WS_WIDTH	28

/* A run's workspace in a column of its own (runs --all): escaped, its
 * end kept when it is longer (the directory that names it). */
static void
cmd_runs_ws(const char *ws)
{
	char	 esc[CMD_WS_WIDTH * 4 + 1], col[CMD_WS_WIDTH + 1];
	size_t	 len;

	if (ws == NULL)
		ws = "-";
	if ((len = strlen(ws)) > CMD_WS_WIDTH)	/* the end is what shows */
		ws += len - CMD_WS_WIDTH;
	str_escape(esc, sizeof(esc), ws, strlen(ws));
	len = strlen(esc);
	if (len > CMD_WS_WIDTH) {	/* escapes made it longer */
		memcpy(col, "...", 3);
		memcpy(col + 3, esc + len - (CMD_WS_WIDTH - 3),
		    CMD_WS_WIDTH - 3);
		len = CMD_WS_WIDTH;
	} else
		memcpy(col, esc, len);
	col[len] = '\0';
	printf("%-*s  ", CMD_WS_WIDTH, col);
}

static int
cmd_runs_print(const struct store_run *v, size_t n, const char *ws, int json)
{
	json_t	*arr;
	char	 tin[16], tout[16], dur[32], when[32], cost[32];
	size_t	 i;
	int	 priced = 0;

	if (json) {
		if ((arr = json_array()) == NULL)
			return cmd_json_print(NULL);
		for (i = 0; i < n; i++)
			json_array_append_new(arr, cmd_json_run(&v[i]));
		return cmd_json_print(arr);
	}
	if (n == 0 && ws != NULL) {
		cmd_print_text(ws, 0);
		printf(": no runs in this workspace (`warren runs --all` lists "
		    "every workspace's)\n");
		return WARREN_EXIT_OK;
	}
	if (n == 0) {
		printf("no runs recorded yet\n");
		return WARREN_EXIT_OK;
	}
	for (i = 0; i < n && !priced; i++)	/* a COST column if any has one */
		priced = cmd_run_cost(&v[i], cost, sizeof(cost));
	printf("%-6s %-11s %-9s %6s %15s %s%8s  %-16s  %s%s\n", "ID", "STATUS",
	    "CHANGES", "AGENTS", "TOKENS IN/OUT", priced ? "     COST " : "",
	    "TIME", "STARTED", ws == NULL ?
	    "WORKSPACE                     " : "", "TASK");
	for (i = 0; i < n; i++) {
		cmd_fmt_tokens(tin, sizeof(tin), v[i].usage.input);
		cmd_fmt_tokens(tout, sizeof(tout), v[i].usage.output);
		cmd_fmt_duration(dur, sizeof(dur), cmd_run_duration(&v[i]));
		cmd_fmt_time(when, sizeof(when), v[i].started_ms);
		printf("%-6lld %-11s %-9s %6llu %7s/%-7s ", (long long)v[i].id,
		    cmd_run_status(&v[i]), cmd_run_layer(&v[i]),
		    (unsigned long long)v[i].nagents, tin, tout);
		if (priced && cmd_run_cost(&v[i], cost, sizeof(cost)) == 0)
			snprintf(cost, sizeof(cost), "-");
		if (priced)
			printf("%9s ", cost);
		printf("%8s  %-16s  ", dur, when);
		if (ws == NULL)		/* --all: whose run it is */
			cmd_runs_ws(v[i].workspace);
		cmd_print_text(v[i].task, CMD_TASK_WIDTH);
		putchar('\n');
	}
	return WARREN_EXIT_OK;
}

int
cmd_runs(int argc, char **argv)
{
	struct cmd_store_opts	 o;
	struct store		*st;
	struct store_run	*v;
	struct stat		 sb;
	char			 path[4096], *e;
	size_t			 n;
	int			 rc, ex = WARREN_EXIT_OK;

	if ((rc = cmd_store_parse(argc, argv, ALLOW(OPT_JSON) |
	    ALLOW(OPT_LIMIT) | ALLOW(OPT_ALL), &o)) != 0)
		return cmd_store_usage(argv[0], rc == 1 ? stdout : stderr);
	if (optind != argc)
		return cmd_store_usage(argv[0], stderr);
	if (cmd_store_path(argv[0], &o, path, sizeof(path)) == -1)
		return WARREN_EXIT_USAGE;
	cmd_legacy_db(argv[0], o.chg.db, o.ws);
	if (stat(path, &sb) == -1 && errno == ENOENT) {
		if (o.json)
			printf("[]\n");
		else {
			e = str_escape_dup(path, strlen(path), 0);
			printf("no runs recorded yet (no database at %s)\n",
			    e != NULL ? e : "?");
			free(e);
		}
		return WARREN_EXIT_OK;
	}
	if ((st = cmd_store_open(argv[0], &o, STORE_READ, &ex)) == NULL)
		return ex;
	if (store_runs_list(st, o.all ? NULL : o.ws, (size_t)o.limit, &v,
	    &n) == -1)
		ex = cmd_store_fail(st, argv[0]);
	else {
		ex = cmd_runs_print(v, n, o.all ? NULL : o.ws, o.json);
		store_runs_free(v, n);
	}
	store_close(st);
	return ex;
}

int
cmd_graph(int argc, char **argv)
{
	struct cmd_store_opts	 o;
	struct store		*st;
	struct store_run	 r;
	struct store_graph	 g;
	int64_t			 run;
	int			 ex = WARREN_EXIT_OK;

	if ((st = cmd_store_open_run(argc, argv, ALLOW(OPT_FORMAT), &o, &run,
	    &ex)) == NULL)
		return ex;
	if (store_run_get(st, run, &r) == -1) {
		ex = cmd_store_fail(st, argv[0]);
		goto out;
	}
	if (store_graph_load(st, run, &g) == -1)
		ex = cmd_store_fail(st, argv[0]);
	else {
		if (graph_write(stdout, o.format, &r, &g) == -1 ||
		    fflush(stdout) == EOF) {
			fprintf(stderr, "warren graph: writing the graph: %s\n",
			    strerror(errno));
			ex = WARREN_EXIT_INTERNAL;
		}
		store_graph_free(&g);
	}
	store_run_free(&r);
out:
	store_close(st);
	return ex;
}

/* Write the report to path ("-": stdout) through a file renamed into
 * place, so a failed report never leaves half a page under its name. */
static int
cmd_report_write(struct store *st, int64_t run, const char *path)
{
	char	 tmp[PATH_MAX], err[STORE_ERRMSG_MAX + 64];
	FILE	*f;
	int	 fd;

	if (strcmp(path, "-") == 0)
		return report_write(stdout, st, run, err, sizeof(err)) == -1 ?
		    (cmd_error("report", "%s", err), -1) : 0;
	if ((size_t)snprintf(tmp, sizeof(tmp), "%s.XXXXXX", path) >=
	    sizeof(tmp) || (fd = mkstemp(tmp)) == -1 ||
	    (f = fdopen(fd, "w")) == NULL) {
		fprintf(stderr, "warren report: cannot write next to %s: %s\n",
		    path, strerror(errno));
		return -1;
	}
	(void)fchmod(fd, 0644 & ~cmd_umask());
	if (report_write(f, st, run, err, sizeof(err)) == -1) {
		cmd_error("report", "%s", err);
		fclose(f);
		unlink(tmp);
		return -1;
	}
	if (fclose(f) == EOF || rename(tmp, path) == -1) {
		fprintf(stderr, "warren report: writing %s: %s\n", path,
		    strerror(errno));
		unlink(tmp);
		return -1;
	}
	return 0;
}

/* warren report RUN [-o FILE]: one self-contained HTML file (report.h). */
int
cmd_report(int argc, char **argv)
{
	struct cmd_store_opts	 o;
	struct store		*st;
	int64_t			 run;
	char			 def[64];
	int			 ex = WARREN_EXIT_OK;

	if ((st = cmd_store_open_run(argc, argv, ALLOW(OPT_OUTPUT), &o, &run,
	    &ex)) == NULL)
		return ex;
	snprintf(def, sizeof(def), "warren-run-%lld.html", (long long)run);
	if (cmd_report_write(st, run, o.output != NULL ? o.output : def) ==
	    -1)
		ex = store_errcode(st) == STORE_ENOTFOUND ? WARREN_EXIT_USAGE :
		    store_errcode(st) != STORE_OK ? WARREN_EXIT_STORE :
		    WARREN_EXIT_INTERNAL;
	else if (o.output == NULL || strcmp(o.output, "-") != 0)
		fprintf(stderr, "warren report: run %lld written to %s\n",
		    (long long)run, o.output != NULL ? o.output : def);
	store_close(st);
	return ex;
}

/*
 * warren forget RUN ...: delete runs, each with its agents, messages,
 * memory graph and events, one transaction per run. A run a live
 * supervisor still writes is refused (as `warren resume` refuses it).
 */
/* A forgotten run's layer goes with it: no one could apply it after. */
static int
cmd_forget_layer(const char *name, const struct store_run *run)
{
	struct cow	 cw;
	char		 err[1024], *e;

	if (!layer_pending(run) || (run->cow_dir != NULL &&
	    access(run->cow_dir, F_OK) == -1 && errno == ENOENT))
		return 0;
	if (layer_open(run, &cw, err, sizeof(err)) == 0 &&
	    cow_remove(&cw, err, sizeof(err)) == 0)
		return 0;
	e = str_escape_dup(err, strlen(err), 0);
	fprintf(stderr, "warren %s: run %lld: its layer: %s (nothing "
	    "forgotten)\n", name, (long long)run->id, e != NULL ? e : err);
	free(e);
	return -1;
}

int
cmd_forget(int argc, char **argv)
{
	struct cmd_store_opts	 o;
	struct store		*st;
	struct store_run	 run;
	char			 path[4096], err[STORE_ERRMSG_MAX + 64];
	int64_t			 id;
	int			 rc, i, ex = WARREN_EXIT_OK;

	if ((rc = cmd_store_parse(argc, argv, 0, &o)) != 0)
		return cmd_store_usage(argv[0], rc == 1 ? stdout : stderr);
	if (optind == argc)
		return cmd_store_usage(argv[0], stderr);
	if (cmd_store_path(argv[0], &o, path, sizeof(path)) == -1)
		return WARREN_EXIT_USAGE;
	if ((st = store_open(path, 0, err, sizeof(err))) == NULL) {
		cmd_error(argv[0], "%s", err);
		return WARREN_EXIT_STORE;
	}
	for (i = optind; i < argc && ex == WARREN_EXIT_OK; i++) {
		if (cmd_store_run_arg(st, &o, argv[0], argv[i], &id, &ex) == -1)
			break;
		if (store_run_get(st, id, &run) == -1) {
			ex = cmd_store_fail(st, argv[0]);
			break;
		}
		if (run.alive) {
			fprintf(stderr, "warren %s: run %lld is running "
			    "(supervisor pid %lld): stop it first\n", argv[0],
			    (long long)id, (long long)run.pid);
			ex = WARREN_EXIT_STORE;
		} else if (cmd_forget_layer(argv[0], &run) == -1)
			ex = WARREN_EXIT_FAIL;
		else if (store_run_delete(st, id) == -1)
			ex = cmd_store_fail(st, argv[0]);
		else
			printf("forgot run %lld\n", (long long)id);
		store_run_free(&run);
	}
	store_close(st);
	return ex;
}

/*
 * warren diff | apply | discard RUN: the run found as show finds it, its
 * copy-on-write layer handled by cmd_cow.c. diff only reads (a running
 * run's layer may be looked at); apply and discard write the run's row
 * and refuse a run still running.
 */
static int
cmd_store_cow(int argc, char **argv, int allowed)
{
	struct cmd_store_opts	 o;
	struct store		*st;
	struct store_run	 r;
	int64_t			 run;
	int			 rc, ex = WARREN_EXIT_OK, diff;
	unsigned		 flags = 0;

	diff = strcmp(argv[0], "diff") == 0;
	if ((rc = cmd_store_parse(argc, argv, allowed, &o)) != 0)
		return cmd_store_usage(argv[0], rc == 1 ? stdout : stderr);
	if (optind >= argc || (!diff && strcmp(argv[0], "apply") != 0 &&
	    optind != argc - 1))
		return cmd_store_usage(argv[0], stderr);
	if ((o.chg.diff & COW_DIFF_RAW) && o.color == 1) {
		fprintf(stderr, "warren diff: --raw prints the bytes for git "
		    "apply or patch: it takes no --color=always\n");
		return WARREN_EXIT_USAGE;
	}
	if ((st = cmd_store_open(argv[0], &o, diff ? STORE_READ : 0, &ex)) ==
	    NULL)
		return ex;
	if (cmd_store_run_arg(st, &o, argv[0], argv[optind], &run, &ex) == -1)
		goto out;
	if (store_run_get(st, run, &r) == -1) {
		ex = cmd_store_fail(st, argv[0]);
		goto out;
	}
	if (layer_continued(&r))
		ex = cmd_cow_holder(st, argv[0], &r);
	else if ((ex = cmd_cow_check(argv[0], &r, !diff)) == 0) {
		if (diff) {
			flags = o.chg.diff;
			if ((flags & COW_DIFF_RAW) == 0 && (o.color == 1 ||
			    (o.color == -1 && isatty(STDOUT_FILENO) &&
			    getenv("NO_COLOR") == NULL)))
				flags |= COW_DIFF_COLOR;
			ex = cmd_cow_diff_paths(&r, flags, argv + optind + 1,
			    argc - optind - 1);
		} else if (strcmp(argv[0], "apply") == 0)
			ex = cmd_cow_apply_paths(st, &r, o.chg.apply,
			    &o.chg.include, argv + optind + 1, argc - optind - 1);
		else
			ex = cmd_cow_discard(st, &r);
	}
	store_run_free(&r);
out:
	store_close(st);
	return ex;
}

int
cmd_diff(int argc, char **argv)
{
	return cmd_store_cow(argc, argv, ALLOW(CMD_CHANGE_OPT_STAT) |
	    ALLOW(OPT_COLOR) | ALLOW(CMD_CHANGE_OPT_RAW));
}

int
cmd_apply(int argc, char **argv)
{
	return cmd_store_cow(argc, argv, ALLOW(CMD_CHANGE_OPT_SENSITIVE) |
	    ALLOW(CMD_CHANGE_OPT_UNREVIEWED) | ALLOW(CMD_CHANGE_OPT_INCLUDE) |
	    ALLOW(CMD_CHANGE_OPT_IGNORED));
}

int
cmd_discard(int argc, char **argv)
{
	return cmd_store_cow(argc, argv, 0);
}

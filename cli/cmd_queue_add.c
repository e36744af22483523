/*
 * warren queue add: one job from the command line (TASK, or - for stdin),
 * or a file of them (--jsonl FILE, --csv FILE --template T; - is stdin).
 * Every job of a file is checked (task, workspace, schema) before the
 * first is added, so a bad row adds nothing; a job whose key is there
 * already is not added again, and that is said.
 */
#include <sys/stat.h>

#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <jansson.h>

#include "cli/cmd.h"
#include "cli/cmd_queue.h"
#include "common/exitcode.h"
#include "common/jschema.h"
#include "common/str.h"
#include "common/xmalloc.h"

struct cmd_queue_add_opts {
	const char		*url, *jsonl, *csv, *tmpl, *schema_file;
	const char		*workspace;
	int			 json;
	struct queue_job_new	 def;	/* what every job takes by default */
};

enum {
	OPT_QUEUE = 256, OPT_PROFILE, OPT_WORKSPACE, OPT_SCHEMA, OPT_KEY,
	OPT_PRIORITY, OPT_ATTEMPTS, OPT_TIMEOUT, OPT_BUDGET, OPT_JSONL,
	OPT_CSV, OPT_TEMPLATE, OPT_JSON, OPT_HELP,
};

static const struct option cmd_queue_add_longopts[] = {
	{ "queue", required_argument, NULL, OPT_QUEUE },
	{ "profile", required_argument, NULL, OPT_PROFILE },
	{ "workspace", required_argument, NULL, OPT_WORKSPACE },
	{ "schema", required_argument, NULL, OPT_SCHEMA },
	{ "key", required_argument, NULL, OPT_KEY },
	{ "priority", required_argument, NULL, OPT_PRIORITY },
	{ "max-attempts", required_argument, NULL, OPT_ATTEMPTS },
	{ "timeout", required_argument, NULL, OPT_TIMEOUT },
	{ "budget", required_argument, NULL, OPT_BUDGET },
	{ "jsonl", required_argument, NULL, OPT_JSONL },
	{ "csv", required_argument, NULL, OPT_CSV },
	{ "template", required_argument, NULL, OPT_TEMPLATE },
	{ "json", no_argument, NULL, OPT_JSON },
	{ "help", no_argument, NULL, OPT_HELP },
	{ NULL, 0, NULL, 0 },
};

static int
cmd_queue_add_usage(FILE *f)
{
	fprintf(f, "usage: warren queue add [--queue URL] [--profile P] "
	    "[--workspace DIR] [--schema FILE]\n"
	    "           [--key K] [--priority N] [--max-attempts N] "
	    "[--timeout D] [--budget TOKENS]\n"
	    "           [--json] TASK | - | --jsonl FILE | --csv FILE "
	    "--template TEXT\n"
	    "Adds a job (TASK, or the task read from stdin with -), or a job "
	    "per line of\n--jsonl FILE or per row of --csv FILE (- reads "
	    "stdin). With --csv, the\ntemplate's {column}s are filled from "
	    "each row, and so is --key's. A job\nwhose key is queued already "
	    "is not added again. docs/queue.md tells more.\n");
	return f == stdout ? WARREN_EXIT_OK : WARREN_EXIT_USAGE;
}

static int
cmd_queue_add_num(const char *opt, const char *arg, long long lo,
    long long hi, long long *out)
{
	const char	*errstr;

	*out = strtonum(arg, lo, hi, &errstr);
	if (errstr != NULL) {
		cmd_queue_error("add", "%s %s is %s (from %lld to %lld)", opt,
		    arg, errstr, lo, hi);
		return -1;
	}
	return 0;
}

static int
cmd_queue_add_opt(int ch, struct cmd_queue_add_opts *o)
{
	long long	n;

	switch (ch) {
	case OPT_QUEUE:
		o->url = optarg;
		break;
	case OPT_PROFILE:
		o->def.profile = optarg;
		break;
	case OPT_WORKSPACE:
		o->workspace = optarg;
		break;
	case OPT_SCHEMA:
		o->schema_file = optarg;
		break;
	case OPT_KEY:
		o->def.key = optarg;
		break;
	case OPT_PRIORITY:
		if (cmd_queue_add_num("--priority", optarg,
		    -CMD_QUEUE_PRIORITY_MAX, CMD_QUEUE_PRIORITY_MAX, &n) == -1)
			return -1;
		o->def.priority = (int)n;
		break;
	case OPT_ATTEMPTS:
		if (cmd_queue_add_num("--max-attempts", optarg, 1,
		    CMD_QUEUE_ATTEMPTS_MAX, &n) == -1)
			return -1;
		o->def.max_attempts = (int)n;
		break;
	case OPT_TIMEOUT:
		return cmd_queue_duration("add", "--timeout", optarg,
		    &o->def.timeout_ms);
	case OPT_BUDGET:
		if (cmd_queue_add_num("--budget", optarg, 1, LLONG_MAX,
		    &n) == -1)
			return -1;
		o->def.budget = (uint64_t)n;
		break;
	case OPT_JSONL:
		o->jsonl = optarg;
		break;
	case OPT_CSV:
		o->csv = optarg;
		break;
	case OPT_TEMPLATE:
		o->tmpl = optarg;
		break;
	case OPT_JSON:
		o->json = 1;
		break;
	default:
		return -1;
	}
	return 0;
}

/* The options, and whether they go together: 0, 1 --help, -1 (said). */
static int
cmd_queue_add_parse(int argc, char **argv, struct cmd_queue_add_opts *o)
{
	int	ch, tasks;

	memset(o, 0, sizeof(*o));
	optind = 1;
	while ((ch = cmd_getopt("queue add", argc, argv, "",
	    cmd_queue_add_longopts)) != -1) {
		if (ch == OPT_HELP)
			return 1;
		if (ch == '?' || cmd_queue_add_opt(ch, o) == -1)
			return -1;
	}
	tasks = argc - optind;
	if ((o->jsonl != NULL) + (o->csv != NULL) + (tasks > 0) != 1) {
		cmd_usage_error("queue add", "give one TASK (quoted), or --jsonl "
		    "FILE, or --csv FILE");
		return -1;
	}
	if (tasks > 1) {
		cmd_usage_error("queue add", "one TASK only: quote it (\"%s %s ...\")",
		    argv[optind], argv[optind + 1]);
		return -1;
	}
	if ((o->csv != NULL) != (o->tmpl != NULL)) {
		cmd_usage_error("queue add", "--csv and --template go together: the "
		    "template's {column}s are filled from each row");
		return -1;
	}
	if (o->jsonl != NULL && o->def.key != NULL) {
		cmd_usage_error("queue add", "--key with --jsonl: give each line its "
		    "own \"key\"");
		return -1;
	}
	return 0;
}

char *
cmd_queue_schema_file(const char *path, char *err, size_t errsz)
{
	json_error_t	 jerr;
	json_t		*j;
	char		*s, why[1024];

	if ((j = json_load_file(path, 0, &jerr)) == NULL) {
		if (jerr.line > 0)
			snprintf(err, errsz, "schema %s: line %d: %s: give a "
			    "JSON Schema object", path, jerr.line, jerr.text);
		else
			snprintf(err, errsz, "schema %s: %s", path, jerr.text);
		return NULL;
	}
	if (jschema_usable(j, why, sizeof(why)) == -1) {
		snprintf(err, errsz, "schema %s: not a usable JSON Schema: %s",
		    path, why);
		json_decref(j);
		return NULL;
	}
	s = json_dumps(j, JSON_COMPACT | JSON_PRESERVE_ORDER);
	json_decref(j);
	if (s == NULL)
		snprintf(err, errsz, "schema %s: out of memory", path);
	return s;
}

static char *
cmd_queue_workspace(const char *dir, char *err, size_t errsz)
{
	char		path[PATH_MAX];
	struct stat	sb;

	if (realpath(dir, path) == NULL || stat(path, &sb) == -1) {
		snprintf(err, errsz, "workspace %s: %s", dir, strerror(errno));
		return NULL;
	}
	if (!S_ISDIR(sb.st_mode)) {
		snprintf(err, errsz, "workspace %s: not a directory", dir);
		return NULL;
	}
	return xstrdup(path);
}

/* The task from stdin, its trailing newlines dropped. */
static char *
cmd_queue_add_stdin_task(void)
{
	char	*s;
	size_t	 len;

	if ((s = cmd_queue_slurp("add", "-", &len)) == NULL)
		return NULL;
	while (len > 0 && (s[len - 1] == '\n' || s[len - 1] == '\r'))
		s[--len] = '\0';
	return s;
}

/* The rows the command line gives: TASK, or a file's. */
static int
cmd_queue_add_rows(const struct cmd_queue_add_opts *o, const char *task,
    struct cmd_queue_rows *rows)
{
	const char	*file = o->jsonl != NULL ? o->jsonl : o->csv;
	char		*text, err[2048];
	size_t		 len;
	int		 rc;

	if (file == NULL) {
		rows->v = xcalloc(1, sizeof(*rows->v));
		rows->n = rows->cap = 1;
		rows->v[0].task = strcmp(task, "-") == 0 ?
		    cmd_queue_add_stdin_task() : xstrdup(task);
		if (rows->v[0].task == NULL)
			return -1;
		if (o->def.key != NULL)
			rows->v[0].key = xstrdup(o->def.key);
		return 0;
	}
	if ((text = cmd_queue_slurp("add", file, &len)) == NULL)
		return -1;
	if (o->jsonl != NULL)
		rc = cmd_queue_rows_jsonl(text, len, rows, err, sizeof(err));
	else
		rc = cmd_queue_rows_csv(text, len, o->tmpl, o->def.key, rows,
		    err, sizeof(err));
	free(text);
	if (rc == -1)
		cmd_queue_error("add", "%s: %s; nothing added",
		    strcmp(file, "-") == 0 ? "stdin" : file, err);
	return rc;
}

/* Where the error is: "stdin: line 3", "jobs.csv: line 3" or "". */
static void
cmd_queue_add_where(const struct cmd_queue_add_opts *o,
    const struct cmd_queue_row *r, char *out, size_t outsz)
{
	const char	*file = o->jsonl != NULL ? o->jsonl : o->csv;

	if (file == NULL)
		out[0] = '\0';
	else
		snprintf(out, outsz, "%s: line %lu: ", strcmp(file, "-") == 0 ?
		    "stdin" : file, r->line);
}

/* Each row's job, its defaults from the command line, checked: 0 or -1
 * (said, naming the line). */
static int
cmd_queue_add_resolve(const struct cmd_queue_add_opts *o,
    struct cmd_queue_rows *rows, const char *ws, const char *schema,
    struct queue_job_new *jobs)
{
	struct cmd_queue_row	*r;
	char			 where[PATH_MAX + 64], err[PATH_MAX + 256];
	char			*canon;
	size_t			 i;

	for (i = 0; i < rows->n; i++) {
		r = &rows->v[i];
		cmd_queue_add_where(o, r, where, sizeof(where));
		if (r->task[0] == '\0' || !str_utf8_valid(r->task,
		    strlen(r->task))) {
			cmd_queue_error("add", "%sthe task is %s; nothing added",
			    where, r->task[0] == '\0' ? "empty" :
			    "not UTF-8 text");
			return -1;
		}
		if (strlen(r->task) > CMD_RUN_TASK_MAX) {
			cmd_queue_error("add", "%sthe task is %zu bytes, over "
			    "the %d a run takes: make it shorter (put the bulk "
			    "in a file of the workspace and name it); nothing "
			    "added", where, strlen(r->task), CMD_RUN_TASK_MAX);
			return -1;
		}
		if (r->workspace != NULL) {
			if ((canon = cmd_queue_workspace(r->workspace, err,
			    sizeof(err))) == NULL) {
				cmd_queue_error("add", "%s%s; nothing added",
				    where, err);
				return -1;
			}
			free(r->workspace);
			r->workspace = canon;
		}
		jobs[i] = o->def;
		jobs[i].task = r->task;
		jobs[i].profile = r->profile != NULL ? r->profile :
		    o->def.profile;
		jobs[i].workspace = r->workspace != NULL ? r->workspace : ws;
		jobs[i].schema = r->schema != NULL ? r->schema : schema;
		jobs[i].key = r->key;
		jobs[i].params = r->params;
		if (r->has_priority)
			jobs[i].priority = r->priority;
		if (r->has_attempts)
			jobs[i].max_attempts = r->max_attempts;
	}
	return 0;
}

/* What was added, with --json. */
static int
cmd_queue_add_json(const struct cmd_queue_add_opts *o,
    const struct cmd_queue_rows *rows, const int64_t *ids,
    const int *existed)
{
	json_t	*arr, *root;
	size_t	 i, n = 0;

	if (o->jsonl == NULL && o->csv == NULL)
		return cmd_json_print(json_pack("{s:I, s:b}", "id",
		    (json_int_t)ids[0], "existed", existed[0]));
	if ((arr = json_array()) == NULL)
		return cmd_json_print(NULL);
	for (i = 0; i < rows->n; i++) {
		n += existed[i] != 0;
		json_array_append_new(arr, json_pack("{s:I, s:I, s:b}", "line",
		    (json_int_t)rows->v[i].line, "id", (json_int_t)ids[i],
		    "existed", existed[i]));
	}
	root = json_pack("{s:I, s:I, s:o}", "added", (json_int_t)(rows->n - n),
	    "existed", (json_int_t)n, "jobs", arr);
	return cmd_json_print(root);
}

/* The key of row i is a job's already. */
static void
cmd_queue_add_existed(const struct cmd_queue_add_opts *o,
    const struct cmd_queue_rows *rows, const int64_t *ids, size_t i)
{
	if (o->jsonl != NULL || o->csv != NULL)
		printf("line %lu: ", rows->v[i].line);
	printf("the key ");
	cmd_print_text(rows->v[i].key, 0);
	printf(" is job %lld's already: not added again\n", (long long)ids[i]);
}

static int
cmd_queue_add_print(const struct cmd_queue_add_opts *o,
    const struct cmd_queue_rows *rows, const int64_t *ids,
    const int *existed)
{
	size_t	i, n = 0;
	int64_t	first = 0, last = 0;

	if (o->json)
		return cmd_queue_add_json(o, rows, ids, existed);
	for (i = 0; i < rows->n; i++) {
		if (!existed[i]) {
			first = first == 0 ? ids[i] : first;
			last = ids[i];
			n++;
		}
	}
	/* One TASK: its job; a file: a count, not a line a row. */
	if (rows->n == 1 && existed[0])
		cmd_queue_add_existed(o, rows, ids, 0);
	if (n == 1)
		printf("added job %lld\n", (long long)first);
	else if (n > 1)
		printf("added %zu jobs, ids %lld to %lld\n", n,
		    (long long)first, (long long)last);
	if (n == 0 && rows->n > 1)
		printf("nothing added: the key of each of the %zu jobs is "
		    "there already\n", rows->n);
	else if (n < rows->n && rows->n > 1)
		printf("%zu of the %zu jobs not added again: their keys are "
		    "queued already (--json lists each)\n", rows->n - n,
		    rows->n);
	return ferror(stdout) ? WARREN_EXIT_INTERNAL : WARREN_EXIT_OK;
}

/* All or nothing: the error names the job, counted from 1 in file order. */
static int
cmd_queue_add_all(struct queue *q, const struct cmd_queue_rows *rows,
    const struct queue_job_new *jobs, int64_t *ids, int *existed)
{
	if (queue_add_many(q, jobs, rows->n, ids, existed) == -1)
		return cmd_queue_fail(q, "add");
	return 0;
}

int
cmd_queue_add(int argc, char **argv)
{
	struct cmd_queue_add_opts	 o;
	struct cmd_queue_rows		 rows;
	struct queue_job_new		*jobs = NULL;
	struct queue			*q;
	char				*ws = NULL, *schema = NULL, err[PATH_MAX + 256];
	char				 where[PATH_MAX + 64];
	int64_t				*ids = NULL;
	size_t				 bad = 0;
	int				*existed = NULL, rc, ex = WARREN_EXIT_USAGE;

	memset(&rows, 0, sizeof(rows));
	if ((rc = cmd_queue_add_parse(argc, argv, &o)) == 1)
		return cmd_queue_add_usage(stdout);
	if (rc != 0)	/* said in cmd_queue_add_parse */
		return WARREN_EXIT_USAGE;
	if ((ws = cmd_queue_workspace(o.workspace != NULL ? o.workspace : ".",
	    err, sizeof(err))) == NULL || (o.schema_file != NULL &&
	    (schema = cmd_queue_schema_file(o.schema_file, err,
	    sizeof(err))) == NULL)) {
		cmd_queue_error("add", "%s", err);
		goto out;
	}
	if (cmd_queue_add_rows(&o, argv[optind], &rows) == -1)
		goto out;
	jobs = xcalloc(rows.n, sizeof(*jobs));
	ids = xcalloc(rows.n, sizeof(*ids));
	existed = xcalloc(rows.n, sizeof(*existed));
	if (cmd_queue_add_resolve(&o, &rows, ws, schema, jobs) == -1)
		goto out;
	if (cmd_queue_profiles_check(jobs, rows.n, &bad, err, sizeof(err)) ==
	    -1) {
		cmd_queue_add_where(&o, &rows.v[bad], where, sizeof(where));
		cmd_queue_error("add", "%s%s; nothing added", where, err);
		goto out;
	}
	if ((q = cmd_queue_create("add", o.url, &ex)) == NULL)
		goto out;
	if ((ex = cmd_queue_add_all(q, &rows, jobs, ids, existed)) == 0)
		ex = cmd_queue_add_print(&o, &rows, ids, existed);
	queue_close(q);
out:
	free(jobs);
	free(ids);
	free(existed);
	cmd_queue_rows_free(&rows);
	free(schema);
	free(ws);
	return ex;
}

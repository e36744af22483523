/*
 * warren run [options] TASK, and warren resume RUN.
 *
 * Parses the command line into a config (flags > environment > config
 * files), reads the API key once (the LLM config scrubs it from the
 * environment block), makes the supervisor non-dumpable, opens the store,
 * and hands everything to the run (run.c). Exit codes: common/exitcode.h.
 */
#include <sys/prctl.h>
#include <sys/stat.h>

#include <errno.h>
#include <jansson.h>
#include <getopt.h>
#include <limits.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "agent/profile.h"
#include "cli/cmd.h"
#include "cli/opttab.h"
#include "cli/layer.h"
#include "cli/project.h"
#include "cli/rate_gate.h"
#include "common/buf.h"
#include "common/config.h"
#include "common/exitcode.h"
#include "common/jschema.h"
#include "common/log.h"
#include "common/path.h"
#include "common/str.h"
#include "common/urlmask.h"
#include "common/xmalloc.h"
#include "llm/llm.h"
#include "queue/queue.h"
#include "spawnd/spawn.h"
#include "store/store.h"
#include "supervisor/run.h"
#include "supervisor/spawnd_client.h"

/*
 * An error on stderr, escaped: store, config and profile messages quote
 * file names and file contents that an agent with write access may have
 * chosen.
 */
static void __attribute__((format(printf, 2, 3)))
cmd_run_error(const char *cmd, const char *fmt, ...)
{
	char	raw[2048], esc[2048];
	va_list	ap;

	va_start(ap, fmt);
	vsnprintf(raw, sizeof(raw), fmt, ap);
	va_end(ap);
	str_escape(esc, sizeof(esc), raw, strlen(raw));
	fprintf(stderr, "warren %s: %s\n", cmd, esc);
}

static const char *const cmd_run_ws_modes[] = { "cow", "in-place", NULL };
static const char *const cmd_run_cow_kinds[] = { "auto", "overlay", "copy",
    NULL };

static const struct config_key cmd_run_keys[] = {
	{ "max_depth", CONFIG_UINT, "WARREN_MAX_DEPTH", "3", 0, 16, NULL,
	    CONFIG_LOWER, "deepest subagent (the orchestrator is depth 0)" },
	{ "max_agents", CONFIG_UINT, "WARREN_MAX_AGENTS", "10", 0, 100000,
	    NULL, CONFIG_LOWER, "subagents per run" },
	{ "jobs", CONFIG_UINT, "WARREN_JOBS", "16", 1, 4096, NULL,
	    CONFIG_LOWER, "worker processes at once (agents mostly wait for "
	    "the LLM: not the number of cores)" },
	{ "token_budget", CONFIG_UINT, "WARREN_TOKEN_BUDGET", "0", 0, 0, NULL,
	    CONFIG_LOWER | CONFIG_ZEROINF,
	    "input+output tokens per run; 0 = no budget" },
	{ "agent_timeout", CONFIG_DURATION, "WARREN_AGENT_TIMEOUT", "30m", 1,
	    86400000, NULL, CONFIG_LOWER, "wall clock of one subagent" },
	{ "hello_timeout", CONFIG_DURATION, "WARREN_HELLO_TIMEOUT", "10s", 1,
	    600000, NULL, CONFIG_LOWER, "time a new worker has to say hello" },
	{ "max_iterations", CONFIG_UINT, "WARREN_MAX_ITERATIONS", "50", 1,
	    10000, NULL, CONFIG_LOWER, "LLM turns of one agent" },
	{ "summary_result_max", CONFIG_UINT, "WARREN_SUMMARY_RESULT_MAX",
	    "4000", 0, 0, NULL, 0, "a finished subagent's result longer than "
	    "this (bytes) gets an LLM summary; 0 = never" },
	{ "summary_transcript_max", CONFIG_UINT,
	    "WARREN_SUMMARY_TRANSCRIPT_MAX", "65536", 0, 0, NULL, 0,
	    "so does one whose transcript is longer; 0 = never" },
	{ "agent_store_rows", CONFIG_UINT, "WARREN_AGENT_STORE_ROWS", "20000",
	    1, 1e12, NULL, CONFIG_LOWER, "events and messages one subagent "
	    "may have the store keep; past it the subagent is stopped" },
	{ "agent_store_bytes", CONFIG_SIZE, "WARREN_AGENT_STORE_BYTES", "64M",
	    1024, 1e15, NULL, CONFIG_LOWER, "bytes of events and messages "
	    "one subagent may have the store keep" },
	{ "agent_memory", CONFIG_SIZE, "WARREN_AGENT_MEMORY", "4G",
	    16 * 1024 * 1024, 1e15, NULL, CONFIG_LOWER, "memory of one "
	    "subagent's process tree (its memory cgroup, where there is one)" },
	{ "workspace_mode", CONFIG_ENUM, "WARREN_WORKSPACE_MODE", "cow", 0, 0,
	    cmd_run_ws_modes, CONFIG_NOPROJECT, "cow: agents write a "
	    "copy-on-write layer you review (warren diff/apply); in-place: "
	    "they write the workspace" },
	{ "cow", CONFIG_ENUM, "WARREN_COW", "auto", 0, 0, cmd_run_cow_kinds,
	    0, "how the layer is made: auto (overlay where the kernel lets "
	    "us, else a copy), overlay, copy" },
	{ "disk_max", CONFIG_SIZE, "WARREN_DISK_MAX", "1G", 0, 1e15, NULL,
	    CONFIG_LOWER | CONFIG_ZEROINF, "disk the run's copy-on-write "
	    "layer may take; past it the run stops (disk limit); 0 = none" },
};

static void
cmd_run_usage(FILE *f)
{
	fprintf(f,
"usage: warren run [options] TASK | -\n"
"\n"
"Runs TASK with an orchestrator that delegates to sandboxed subagents;\n"
"--profile P (explore, general, ...): one agent of that profile in a\n"
"sandboxed worker. TASK - reads the task from standard input.\n"
"--continue [RUN]: a follow-up of run RUN (default: this workspace's\n"
"latest run), whose root sees that run's memory.\n"
"Agents write a copy-on-write layer over the workspace, never the\n"
"workspace itself: `warren diff RUN` shows it, `warren apply RUN` applies\n"
"it, `warren discard RUN` drops it.\n"
"The final result goes to stdout, progress to stderr: a live tree of the\n"
"agents on a terminal, one line per event otherwise (--plain, or\n"
"TERM=dumb: the lines on a terminal too; --json: one JSON event per\n"
"line on stdout instead).\n");
	opt_doc_help(f, "run");
	fprintf(f, "\n"
"Exit: 0 done, 1 the task failed, 2 usage, 3 configuration, 4 LLM\n"
"endpoint, 5 sandbox, 6 store, 70 internal error, 130 interrupted.\n");
}

static void
cmd_resume_usage(FILE *f)
{
	fprintf(f,
"usage: warren resume [options] RUN\n"
"\n"
"Continues run RUN (an id from `warren runs`, or \"last\") after its\n"
"supervisor crashed or was killed: finished agents are not run again,\n"
"unfinished ones restart from their last written messages. Options given\n"
"here win over the ones the run was started with.\n");
	opt_doc_help(f, "resume");
}

enum {
	OPT_PROFILE = 256, OPT_WORKSPACE, OPT_MAX_DEPTH, OPT_MAX_AGENTS,
	OPT_JOBS, OPT_BUDGET, OPT_PROVIDER, OPT_BASE_URL, OPT_MODEL,
	OPT_RECORD, OPT_REPLAY, OPT_JSON, OPT_DB, OPT_NO_STORE, OPT_WEAKER,
	OPT_TIMEOUT, OPT_HELLO, OPT_WORKER, OPT_LLM_JOBS, OPT_IN_PLACE,
	OPT_COW, OPT_DISK_MAX, OPT_APPLY, OPT_SCHEMA, OPT_CONTINUE, OPT_PLAIN,
	OPT_HARD_LINKS,
};

static const struct option cmd_run_opts[] = {
	{ "profile", required_argument, NULL, OPT_PROFILE },
	{ "workspace", required_argument, NULL, OPT_WORKSPACE },
	{ "max-depth", required_argument, NULL, OPT_MAX_DEPTH },
	{ "max-agents", required_argument, NULL, OPT_MAX_AGENTS },
	{ "jobs", required_argument, NULL, OPT_JOBS },
	{ "budget", required_argument, NULL, OPT_BUDGET },
	{ "provider", required_argument, NULL, OPT_PROVIDER },
	{ "base-url", required_argument, NULL, OPT_BASE_URL },
	{ "model", required_argument, NULL, OPT_MODEL },
	{ "record", required_argument, NULL, OPT_RECORD },
	{ "replay", required_argument, NULL, OPT_REPLAY },
	{ "json", no_argument, NULL, OPT_JSON },
	{ "plain", no_argument, NULL, OPT_PLAIN },
	{ "db", required_argument, NULL, OPT_DB },
	{ "no-store", no_argument, NULL, OPT_NO_STORE },
	{ "allow-weaker-sandbox", no_argument, NULL, OPT_WEAKER },
	{ "agent-timeout", required_argument, NULL, OPT_TIMEOUT },
	{ "hello-timeout", required_argument, NULL, OPT_HELLO },
	{ "worker", required_argument, NULL, OPT_WORKER },
	{ "llm-concurrency", required_argument, NULL, OPT_LLM_JOBS },
	{ "in-place", no_argument, NULL, OPT_IN_PLACE },
	{ "allow-hard-links", no_argument, NULL, OPT_HARD_LINKS },
	{ "cow", required_argument, NULL, OPT_COW },
	{ "disk-max", required_argument, NULL, OPT_DISK_MAX },
	{ "apply", no_argument, NULL, OPT_APPLY },
	{ "schema", required_argument, NULL, OPT_SCHEMA },
	{ "continue", no_argument, NULL, OPT_CONTINUE },
	{ "verbose", no_argument, NULL, 'v' },
	{ "help", no_argument, NULL, 'h' },
	{ NULL, 0, NULL, 0 },
};

const struct option *
cmd_run_options(void)
{
	return cmd_run_opts;
}

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
	char		*task_buf;	/* TASK "-": read from stdin */
};

/* Find warren-worker: $WARREN_WORKER_BIN, next to us, the build tree. */
static int
cmd_run_worker_bin(const char *explicit_path, char *out, size_t outsz)
{
	static const char *const rel[] = {
		"warren-worker", "../worker/warren-worker",
		"../libexec/warren/warren-worker",
	};
	char		 self[PATH_MAX], *slash;
	const char	*env;
	ssize_t		 n;
	size_t		 i;

	if (explicit_path != NULL ||
	    ((env = getenv("WARREN_WORKER_BIN")) != NULL && *env != '\0' &&
	    (explicit_path = env) != NULL)) {
		if (realpath(explicit_path, out) == NULL ||
		    access(out, X_OK) == -1)
			return -1;
		return 0;
	}
	if ((n = readlink("/proc/self/exe", self, sizeof(self) - 1)) <= 0)
		return -1;
	self[n] = '\0';
	if ((slash = strrchr(self, '/')) == NULL)
		return -1;
	*slash = '\0';
	for (i = 0; i < sizeof(rel) / sizeof(rel[0]); i++) {
		if (snprintf(out, outsz, "%s/%s", self, rel[i]) >= (int)outsz)
			continue;
		if (access(out, X_OK) == 0)
			return 0;
	}
	return -1;
}

static int
cmd_run_flag(struct config *c, const char *key, const char *val,
    const char *flag)
{
	if (config_set(c, key, val, CONFIG_SRC_FLAG, flag) == -1) {
		cmd_run_error("run", "%s", config_error(c));
		return -1;
	}
	return 0;
}

/* The options that set a configuration key, as the key and the flag
 * config_error names when the value is refused. */
static const struct {
	int		 opt;
	const char	*key;
	const char	*flag;
} cmd_run_setters[] = {
	{ OPT_MAX_DEPTH, "max_depth", "--max-depth" },
	{ OPT_MAX_AGENTS, "max_agents", "--max-agents" },
	{ 'j', "jobs", "--jobs" },
	{ OPT_JOBS, "jobs", "--jobs" },
	{ OPT_BUDGET, "token_budget", "--budget" },
	{ OPT_PROVIDER, "provider", "--provider" },
	{ OPT_BASE_URL, "base_url", "--base-url" },
	{ OPT_MODEL, "model", "--model" },
	{ OPT_RECORD, "record", "--record" },
	{ OPT_REPLAY, "replay", "--replay" },
	{ OPT_TIMEOUT, "agent_timeout", "--agent-timeout" },
	{ OPT_HELLO, "hello_timeout", "--hello-timeout" },
	{ OPT_LLM_JOBS, "llm_concurrency", "--llm-concurrency" },
	{ OPT_COW, "cow", "--cow" },
	{ OPT_DISK_MAX, "disk_max", "--disk-max" },
};

/* Option ch with its argument: 0, -1 (refused, said why), or 1 when ch
 * is not one of warren run's. */
static int
cmd_run_option(int ch, struct config *c, struct cmd_run_args *a)
{
	size_t	 i;

	for (i = 0; i < sizeof(cmd_run_setters) / sizeof(cmd_run_setters[0]);
	    i++)
		if (cmd_run_setters[i].opt == ch)
			return cmd_run_flag(c, cmd_run_setters[i].key, optarg,
			    cmd_run_setters[i].flag);
	switch (ch) {
	case OPT_PROFILE: a->profile = optarg; break;
	case 'w':
	case OPT_WORKSPACE: a->workspace = optarg; break;
	case OPT_JSON: a->json = 1; break;
	case OPT_PLAIN: a->plain = 1; break;
	case OPT_DB: a->db = optarg; break;
	case OPT_NO_STORE: a->nostore = 1; break;
	case OPT_WEAKER: a->weaker = 1; break;
	case OPT_WORKER: a->worker = optarg; break;
	case OPT_APPLY: a->apply = 1; break;
	case OPT_HARD_LINKS: a->hardlinks = 1; break;
	case OPT_SCHEMA: a->schema_file = optarg; break;
	case OPT_CONTINUE: a->cont = 1; break;
	case OPT_IN_PLACE:
		return cmd_run_flag(c, "workspace_mode", "in-place",
		    "--in-place");
	case 'T': a->trace = 1; break;
	case 'v': a->verbose = 1; break;
	case 'h':
		if (a->is_resume)
			cmd_resume_usage(stdout);
		else
			cmd_run_usage(stdout);
		exit(WARREN_EXIT_OK);
	default:
		return 1;
	}
	return 0;
}

/* warren resume's one operand: a run id, or "last", which is resolved
 * once the store is open (cmd_run_plan). */
static int
cmd_run_parse_resume(int argc, char **argv, struct cmd_run_args *a)
{
	const char	*errstr;

	if (optind != argc - 1) {
		cmd_resume_usage(stderr);
		return -1;
	}
	if (strcmp(argv[optind], "last") == 0) {
		a->resume = -1;
		return 0;
	}
	a->resume = strtonum(argv[optind], 1, INT64_MAX, &errstr);
	if (errstr != NULL) {
		fprintf(stderr, "warren resume: run id %s is %s\n",
		    argv[optind], errstr);
		return -1;
	}
	return 0;
}

/* TASK "-": the task is standard input, all of it. */
static int
cmd_run_task_stdin(struct cmd_run_args *a)
{
	struct buf	 b;
	char		 chunk[8192];
	size_t		 n, len = 0;

	buf_init(&b, CMD_RUN_TASK_MAX);
	while ((n = fread(chunk, 1, sizeof(chunk), stdin)) > 0) {
		if (buf_add(&b, chunk, n) == -1) {
			fprintf(stderr, "warren run: the task on standard "
			    "input is over %d bytes\n", CMD_RUN_TASK_MAX);
			buf_free(&b);
			return -1;
		}
	}
	if (ferror(stdin)) {
		/* Never run half a task as if it were all. */
		fprintf(stderr, "warren run: reading the task from standard "
		    "input: %s\n", strerror(errno));
		buf_free(&b);
		return -1;
	}
	if ((a->task_buf = buf_release(&b, &len)) == NULL)
		a->task_buf = xstrdup("");
	if (memchr(a->task_buf, '\0', len) != NULL) {
		fprintf(stderr, "warren run: the task on standard input holds "
		    "a NUL byte: give text\n");
		return -1;
	}
	/* echo's and a heredoc's last newline is no part of the task. */
	while (len > 0 && (a->task_buf[len - 1] == '\n' ||
	    a->task_buf[len - 1] == '\r'))
		a->task_buf[--len] = '\0';
	a->task = a->task_buf;
	return 0;
}

/* --continue's RUN: a run id, or "last" (as leaving it out). */
static int
cmd_run_parse_cont(const char *s, struct cmd_run_args *a)
{
	const char	*errstr;

	if (strcmp(s, "last") == 0) {
		a->cont_run = -1;
		return 0;
	}
	a->cont_run = strtonum(s, 1, INT64_MAX, &errstr);
	if (errstr != NULL) {
		fprintf(stderr, "warren run: --continue: run id %s is %s\n",
		    s, errstr);
		return -1;
	}
	return 0;
}

/* warren run's operands: [RUN] (with --continue) and the TASK, or "-" for
 * standard input; not empty or only blanks. */
static int
cmd_run_parse_task(int argc, char **argv, struct cmd_run_args *a)
{
	const char	*p;

	a->cont_run = -1;
	if (a->cont && optind == argc - 2) {
		if (cmd_run_parse_cont(argv[optind], a) == -1)
			return -1;
		optind++;
	}
	if (optind != argc - 1) {
		fprintf(stderr, "warren run: give exactly one TASK (quote it)"
		    "%s\n", a->cont ? " after --continue's RUN" : "");
		cmd_run_usage(stderr);
		return -1;
	}
	a->task = argv[optind];
	if (strcmp(a->task, "-") == 0 && cmd_run_task_stdin(a) == -1)
		return -1;
	for (p = a->task; *p != '\0' && strchr(" \t\r\n\v\f", *p) != NULL;
	    p++)
		;
	if (*p == '\0') {
		fprintf(stderr, "warren run: the TASK%s is empty: say what "
		    "to do\n", a->task == a->task_buf ? " read from standard "
		    "input" : "");
		return -1;
	}
	return 0;
}

static int
cmd_run_parse(int argc, char **argv, struct config *c, struct cmd_run_args *a,
    int resume)
{
	int	ch, rc;

	optind = 1;
	a->is_resume = resume;
	while ((ch = getopt_long(argc, argv, "+hvTj:w:", cmd_run_opts,
	    NULL)) != -1) {
		if ((rc = cmd_run_option(ch, c, a)) == 1 && resume)
			cmd_resume_usage(stderr);
		else if (rc == 1)
			cmd_run_usage(stderr);
		if (rc != 0)
			return -1;
	}
	if (resume && a->cont) {
		fprintf(stderr, "warren resume: --continue is warren run's: a "
		    "resumed run goes on where it stopped\n");
		return -1;
	}
	if (resume)
		return cmd_run_parse_resume(argc, argv, a);
	return cmd_run_parse_task(argc, argv, a);
}

static void
cmd_run_limits(const struct config *c, struct run_limits *l)
{
	limits_default(l);
	l->max_depth = (unsigned)config_uint(c, "max_depth");
	l->max_agents = (unsigned)config_uint(c, "max_agents");
	if (config_isset(c, "jobs"))
		l->jobs = (unsigned)config_uint(c, "jobs");
	l->token_budget = config_uint(c, "token_budget");
	l->agent_timeout_ms = config_ms(c, "agent_timeout");
	l->hello_ms = config_ms(c, "hello_timeout");
	l->max_iterations = (unsigned)config_uint(c, "max_iterations");
	l->summary_result_max = config_uint(c, "summary_result_max");
	l->summary_transcript_max = config_uint(c, "summary_transcript_max");
	l->store_rows = config_uint(c, "agent_store_rows");
	l->store_bytes = config_bytes(c, "agent_store_bytes");
	l->mem_bytes = config_bytes(c, "agent_memory");
	l->disk_max = config_bytes(c, "disk_max");
}

static struct store *
cmd_run_store(const struct cmd_run_args *a, const char *path, int *code)
{
	struct store	*st;
	char		 err[STORE_ERRMSG_MAX];

	if (a->nostore)
		return NULL;
	if ((st = store_open(path, STORE_CREATE, err, sizeof(err))) == NULL) {
		cmd_run_error("run", "%s (--db FILE to use another, "
		    "--no-store to keep nothing)", err);
		*code = WARREN_EXIT_STORE;
	}
	return st;
}

/* A text parameter; a URL masked (urlmask.h): the row is shown by
 * `warren show`, and a password in it is not the database's to keep. */
static void
cmd_run_params_str(json_t *o, const char *key, const char *v)
{
	char	*m;

	if (strcmp(key, "base_url") != 0) {
		json_object_set_new(o, key, json_string(v));
		return;
	}
	if ((m = urlmask_dup(v)) != NULL)
		json_object_set_new(o, key, json_string(m));
	free(m);
}

/* Resume: a stored base_url that was masked cannot be used as it is; the
 * user's own (the flag, environment or file) is, if it is the same URL
 * masked. 1 take the stored one, 0 leave the key alone. */
static int
cmd_run_params_url(const struct config *c, const char *stored, int64_t run)
{
	const char	*cur = config_str(c, "base_url");
	char		*m;
	int		 same;

	if (strstr(stored, "***") == NULL)
		return 1;
	m = cur != NULL ? urlmask_dup(cur) : NULL;
	same = m != NULL && strcmp(m, stored) == 0;
	free(m);
	if (!same)
		log_warnx("run %lld's base_url %s held credentials, which were "
		    "not stored: the configured one is used (set base_url, "
		    "WARREN_BASE_URL or --base-url to it)", (long long)run,
		    stored);
	return 0;
}

/* What a resume needs to run the same way: limits and endpoint, as JSON. */
static char *
cmd_run_params(const struct config *c, const char *schema)
{
	static const char *const keys[] = { "max_depth", "max_agents", "jobs",
	    "token_budget", "max_iterations", "summary_result_max",
	    "summary_transcript_max", "agent_store_rows", "provider",
	    "base_url", "model" };
	json_t	*o = json_object();
	char	*s;
	size_t	 i;

	for (i = 0; i < sizeof(keys) / sizeof(keys[0]); i++) {
		if (!config_isset(c, keys[i]) && strcmp(keys[i], "max_depth") &&
		    strcmp(keys[i], "max_agents"))
			continue;
		if (i < 8)
			json_object_set_new(o, keys[i],
			    json_integer((json_int_t)config_uint(c, keys[i])));
		else if (config_str(c, keys[i]) != NULL)
			cmd_run_params_str(o, keys[i], config_str(c, keys[i]));
	}
	json_object_set_new(o, "agent_timeout_ms", json_integer((json_int_t)
	    config_ms(c, "agent_timeout")));
	json_object_set_new(o, "hello_timeout_ms", json_integer((json_int_t)
	    config_ms(c, "hello_timeout")));
	if (config_isset(c, "agent_store_bytes"))
		json_object_set_new(o, "agent_store_bytes", json_integer(
		    (json_int_t)config_bytes(c, "agent_store_bytes")));
	if (schema != NULL)
		json_object_set_new(o, "schema", json_string(schema));
	s = json_dumps(o, JSON_COMPACT | JSON_SORT_KEYS);
	json_decref(o);
	return s;
}

/* Resume: the interrupted run's parameters, weaker than flags and env,
 * stronger than the user's file. endpoint 0 (a database agents could
 * write): none of them, neither where the key goes (provider, base_url)
 * nor a limit (token_budget 0, max_iterations 10000 would lift the
 * user's). */
static void
cmd_run_params_load(struct config *c, const char *params, int64_t run,
    int endpoint)
{
	const char	*k;
	json_t		*o, *v;
	char		 val[2048], where[64];

	if (!endpoint || params == NULL || (o = json_loads(params, 0,
	    NULL)) == NULL)
		return;
	snprintf(where, sizeof(where), "run %lld", (long long)run);
	json_object_foreach(o, k, v) {
		const char	*key = k;

		if (json_is_integer(v) && (strcmp(k, "agent_timeout_ms") == 0 ||
		    strcmp(k, "hello_timeout_ms") == 0)) {
			snprintf(val, sizeof(val), "%lldms",
			    (long long)json_integer_value(v));
			key = k[0] == 'a' ? "agent_timeout" : "hello_timeout";
		} else if (json_is_integer(v))
			snprintf(val, sizeof(val), "%lld",
			    (long long)json_integer_value(v));
		else if (json_is_string(v))
			snprintf(val, sizeof(val), "%s", json_string_value(v));
		else
			continue;
		if (strcmp(key, "base_url") == 0 && !cmd_run_params_url(c, val,
		    run))
			continue;
		/* A bad stored value is ignored: the default stands. */
		(void)config_set(c, key, val, CONFIG_SRC_RUN, where);
	}
	json_decref(o);
}

/*
 * Is pid a warren supervisor? The store says its pid is alive; a pid
 * reused by another program is told apart by its executable. When that
 * cannot be read (another user's process), assume it is: refusing is safe.
 */
static int
cmd_run_is_warren(pid_t pid)
{
	char	proc[64], exe[PATH_MAX], self[PATH_MAX];
	ssize_t	n, m;

	if (pid == getpid())
		return 0;	/* our own pid: a stale row from a pid reuse */
	snprintf(proc, sizeof(proc), "/proc/%ld/exe", (long)pid);
	if ((n = readlink(proc, exe, sizeof(exe) - 1)) <= 0 ||
	    (m = readlink("/proc/self/exe", self, sizeof(self) - 1)) <= 0)
		return 1;
	exe[n] = '\0';
	self[m] = '\0';
	/* A deleted binary (rebuilt since) still counts. */
	if (n > 10 && strcmp(exe + n - 10, " (deleted)") == 0)
		exe[n - 10] = '\0';
	return strcmp(exe, self) == 0;
}

/*
 * Resume runs a run where it ran: the workspace is the stored one, and a
 * --workspace naming another is refused (a stored workspace must never be
 * swapped for one the user did not mean). A database inside the workspace
 * (an old .warren/warren.db, named with --db) is one its agents could have
 * written: neither its endpoint nor its limits are restored, so the key
 * goes only where the user's own config says, within the user's limits.
 */
static int
cmd_run_resume_ws(struct cmd_run_args *a, const char *dbpath,
    const struct store_plan *plan, int *endpoint)
{
	char	 ws[PATH_MAX], db[PATH_MAX];
	char	*stored = plan->run.workspace;

	if (stored == NULL || *stored != '/') {
		cmd_run_error("resume", "run %lld has no workspace stored: "
		    "it cannot be resumed", (long long)a->resume);
		return WARREN_EXIT_STORE;
	}
	if (a->workspace != NULL && (realpath(a->workspace, ws) == NULL ||
	    strcmp(ws, stored) != 0)) {
		cmd_run_error("resume", "run %lld ran in workspace %s, not %s:"
		    " resume runs it where it ran (leave out --workspace)",
		    (long long)a->resume, stored, a->workspace);
		return WARREN_EXIT_USAGE;
	}
	*endpoint = realpath(dbpath, db) == NULL ||
	    !path_under(db, stored);
	if (!*endpoint)
		cmd_run_error("resume", "the database %s lies inside the "
		    "workspace, where agents could have rewritten it; its "
		    "stored endpoint and limits are not used (yours are)",
		    dbpath);
	a->workspace = stored;
	return WARREN_EXIT_OK;
}

/* Resume: the plan of run a->resume ("last": of the workspace the user is
 * in, or names), from the database at dbpath. */
static int
cmd_run_plan(struct cmd_run_args *a, const char *dbpath, struct store **stp,
    struct store_plan *plan)
{
	char	ws[PATH_MAX];
	int	code = WARREN_EXIT_OK;

	if (a->nostore) {
		fprintf(stderr, "warren resume: needs the store (no --no-store)\n");
		return WARREN_EXIT_USAGE;
	}
	if (realpath(a->workspace ? a->workspace : ".", ws) == NULL) {
		cmd_run_error("resume", "workspace %s: %s",
		    a->workspace ? a->workspace : ".", strerror(errno));
		return WARREN_EXIT_CONFIG;
	}
	if ((*stp = cmd_run_store(a, dbpath, &code)) == NULL)
		return code;
	if (a->resume == -1 &&
	    store_run_latest(*stp, ws, &a->resume) == -1) {
		cmd_run_error("resume", "no run to resume: %s",
		    store_errmsg(*stp));
		return store_errcode(*stp) == STORE_ENOTFOUND ?
		    WARREN_EXIT_USAGE : WARREN_EXIT_STORE;
	}
	if (store_resume_plan(*stp, a->resume, plan) == -1) {
		cmd_run_error("resume", "run %lld: %s", (long long)a->resume,
		    store_errmsg(*stp));
		return store_errcode(*stp) == STORE_ENOTFOUND ?
		    WARREN_EXIT_USAGE : WARREN_EXIT_STORE;
	}
	/* A finished run has nothing left to do; its result stays stored. */
	if (plan->run.status == STORE_RUN_DONE ||
	    plan->run.status == STORE_RUN_FAILED) {
		fprintf(stderr, "warren resume: run %lld already ended (%s); "
		    "nothing to resume: see `warren show %lld`\n",
		    (long long)a->resume,
		    plan->run.status == STORE_RUN_DONE ? "done" : "failed",
		    (long long)a->resume);
		return WARREN_EXIT_USAGE;
	}
	/* Two supervisors on one run would be two writers of its rows. */
	if (plan->run.alive && cmd_run_is_warren((pid_t)plan->run.pid)) {
		fprintf(stderr, "warren resume: run %lld is still running "
		    "(supervisor pid %lld): stop it first (kill -TERM %lld), "
		    "or wait for it\n", (long long)a->resume,
		    (long long)plan->run.pid, (long long)plan->run.pid);
		return WARREN_EXIT_STORE;
	}
	return WARREN_EXIT_OK;
}

/* The root of the plan had finished: say so, nothing to run. */
static int
cmd_run_finished(const struct store_plan *plan, struct run *r)
{
	size_t	i;

	for (i = 0; i < plan->nagents; i++) {
		const struct store_agent *ag = &plan->agents[i].agent;

		if (strcmp(ag->path, "0") != 0)
			continue;
		ui_init(r);
		ui_result(NULL, ag->result ? ag->result : "",
		    ag->status == STORE_AGENT_DONE, ag->status ==
		    STORE_AGENT_DONE ? WARREN_EXIT_OK : WARREN_EXIT_FAIL);
		return ag->status == STORE_AGENT_DONE ? WARREN_EXIT_OK :
		    WARREN_EXIT_FAIL;
	}
	return WARREN_EXIT_STORE;
}

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
	struct rate_gate	*rate;	/* the shared LLM gate, or NULL */
	/* What no worker may read though it may lie in the workspace
	   (cmd_run_masks); maskv points into mask, NULL-ended. */
	char			 mask[8][PATH_MAX];
	const char		*maskv[9];
};

/*
 * The database, its WAL and shared-memory files, the key file and the
 * cassette being recorded, by their real paths: any of them kept inside
 * the workspace is masked in every sandbox (spawn_protect). Called once
 * the database and the cassette exist, before the first worker.
 */
/* A SQLite database's three files, by their real paths, from mask n. */
static size_t
cmd_run_mask_db(struct cmd_run_ctx *x, const char *db, size_t n)
{
	static const char *const sfx[] = { "", "-wal", "-shm" };
	char		 real[PATH_MAX];
	size_t		 i;

	for (i = 0; i < sizeof(sfx) / sizeof(sfx[0]); i++) {
		if (realpath(db, real) == NULL ||
		    (size_t)snprintf(x->mask[n], sizeof(x->mask[n]), "%s%s",
		    real, sfx[i]) >= sizeof(x->mask[n]))
			continue;
		x->maskv[n] = x->mask[n];
		n++;
	}
	return n;
}

static void
cmd_run_masks(struct cmd_run_ctx *x, const struct config *c)
{
	static const char *const files[] = { "api_key_file", "record" };
	const char	*f;
	char		 q[PATH_MAX];
	size_t		 i, n;

	n = cmd_run_mask_db(x, x->db, 0);
	/* The queue's file, when it is another (queue.db beside the
	 * database, or queue_url's), whether this run's rate gate uses it
	 * or not: a worker that could write it could add jobs. */
	f = config_str(c, "queue_url");
	if (!queue_url_is_pg(f) && queue_path(q, sizeof(q), f) == 0 &&
	    strcmp(q, x->db) != 0)
		n = cmd_run_mask_db(x, q, n);
	for (i = 0; i < sizeof(files) / sizeof(files[0]); i++) {
		if ((f = config_str(c, files[i])) == NULL ||
		    realpath(f, x->mask[n]) == NULL)
			continue;
		x->maskv[n] = x->mask[n];
		n++;
	}
	x->maskv[n] = NULL;
}

/*
 * The workspace must be a directory warren can list and read: said here,
 * once, not by every agent's first tool call. (Workers that run under
 * another uid need it readable by that uid too: docs/sandbox.md.)
 */
static int
cmd_run_ws_check(const char *given, const char *real)
{
	struct stat	st;

	if (stat(real, &st) == -1) {
		cmd_run_error("run", "workspace %s: %s", given,
		    strerror(errno));
		return -1;
	}
	if (!S_ISDIR(st.st_mode)) {
		cmd_run_error("run", "workspace %s is not a directory: give "
		    "the directory the agents work in", given);
		return -1;
	}
	if (access(real, R_OK | X_OK) == -1) {
		cmd_run_error("run", "workspace %s cannot be read (%s): the "
		    "agents could neither list nor read it; fix its "
		    "permissions", given, strerror(errno));
		return -1;
	}
	return 0;
}

/*
 * The workspace, the worker binary, the config (the user's, then a
 * trusted project's), the key (read once, then scrubbed from our
 * environment block), the LLM client and the profiles.
 */
static int
cmd_run_setup(struct cmd_run_args *a, struct config *c, struct cmd_run_ctx *x)
{
	char	err[1024];

	if (realpath(a->workspace ? a->workspace : ".", x->ws) == NULL) {
		cmd_run_error("run", "workspace %s: %s",
		    a->workspace ? a->workspace : ".", strerror(errno));
		return WARREN_EXIT_CONFIG;
	}
	if (cmd_run_ws_check(a->workspace ? a->workspace : ".", x->ws) == -1)
		return WARREN_EXIT_CONFIG;
	if (cmd_run_worker_bin(a->worker, x->worker, sizeof(x->worker)) == -1) {
		fprintf(stderr, "warren run: cannot find warren-worker next to"
		    " warren, in ../libexec/warren/ or in the build tree (install"
		    " with `cmake --install`, or set WARREN_WORKER_BIN or "
		    "--worker)\n");
		return WARREN_EXIT_CONFIG;
	}
	cmd_legacy_db("run", a->db, x->ws);
	if (project_open(&x->pr, x->ws, x->db, "run", err, sizeof(err)) ==
	    -1) {
		cmd_run_error("run", "%s", err);
		return WARREN_EXIT_CONFIG;
	}
	if (config_load_standard(c) == -1 ||
	    project_load_config(&x->pr, c) == -1) {
		cmd_run_error("run", "%s", config_error(c));
		return WARREN_EXIT_CONFIG;
	}
	if (llm_config_load(&x->lc, c, err, sizeof(err)) == -1) {
		cmd_run_error("run", "%s", err);
		return WARREN_EXIT_CONFIG;
	}
	/* Replay answers by agent and step, whatever the task says. */
	if (x->lc.replay != NULL && !a->is_resume && a->task != NULL &&
	    llm_cassette_task_check(x->lc.replay, a->task) == 1)
		cmd_run_error("run", "note: %s was recorded for another task;"
		    " its answers are replayed by agent and step all the same",
		    x->lc.replay);
	if ((x->llm = llm_engine_new(&x->lc, err, sizeof(err))) == NULL ||
	    project_load_profiles(&x->pr, &x->ps, err, sizeof(err)) == -1) {
		cmd_run_error("run", "%s", err);
		return WARREN_EXIT_CONFIG;
	}
	/* Without its database the run goes on, as it does when the
	 * database fails later (rate_gate.c): the endpoint's own 429s still
	 * slow it, and a queue's job must not fail for a full server. */
	if (x->lc.rate_share && x->lc.replay == NULL && (x->rate =
	    rate_gate_open(&x->lc, x->llm, config_str(c, "queue_url"), err,
	    sizeof(err))) == NULL)
		log_warnx("the shared LLM rate limits (llm_rpm, llm_tpm, "
		    "llm_rate_share) are off for this run: %s", err);
	return WARREN_EXIT_OK;
}

static struct run *
cmd_run_new(const struct cmd_run_args *a, const struct config *c,
    struct cmd_run_ctx *x)
{
	struct run_opts	 o;
	struct run	*r;
	char		 err[1024];

	memset(&o, 0, sizeof(o));
	o.task = a->task;
	o.profile = a->profile;
	o.workspace = x->ws;
	o.worker_bin = x->worker;
	o.json = a->json;
	o.plain = a->plain;
	o.trace = a->trace;
	o.weaker = a->weaker;
	o.masks = x->maskv;
	o.schema = a->schema;
	o.root_inherit = a->cont;
	cmd_run_limits(c, &o.limits);
	if ((r = run_new(&o, x->llm, &x->ps, err, sizeof(err))) == NULL)
		cmd_run_error("run", "%s", err);
	return r;
}

/* The spawn server enters the layer (spawnd/spawnd.h). Without one we
 * would have to enter it ourselves, and then could not read the real
 * workspace to compare the layer with at the end. */
static int
cmd_run_enter(struct spawnd_client *d, const struct cow *cw, int *memfd,
    char *err, size_t errsz)
{
	if (d == NULL) {
		snprintf(err, errsz, "it needs the spawn server, which did not "
		    "start (or WARREN_SPAWN_DIRECT is set): run with "
		    "--in-place, or fix the cause above");
		return -1;
	}
	return spawnd_client_layer(d, cw, memfd, err, errsz);
}

/* A layer made for a run that never started: nothing wrote it. */
static void
cmd_run_unlayer(struct cmd_run_ctx *x)
{
	char	err[1024];

	if (x->cow.mode != COW_NONE && cow_remove(&x->cow, err,
	    sizeof(err)) == -1)
		log_warnx("%s", err);
}

/*
 * No layer: the agents write the workspace. Refused, before any agent
 * starts, where the workspace's filesystem folds names (the sandbox's
 * read-only .git and .warren hold one spelling only) or a write could go
 * through a hard link to a file outside it (cli/layer.c).
 */
static int
cmd_run_in_place(const struct cmd_run_args *a, struct run *r,
    struct cmd_run_ctx *x, const char *cmd)
{
	char	err[PATH_MAX + 1536];

	if (layer_in_place_ok(&x->ps, r->root->profile, x->ws, err,
	    sizeof(err)) == -1 || (!a->hardlinks && layer_links(&x->ps,
	    r->root->profile, x->ws, err, sizeof(err)) == -1)) {
		cmd_run_error(cmd, "%s", err);
		return WARREN_EXIT_SANDBOX;
	}
	return WARREN_EXIT_OK;
}

/*
 * The run's layer: chosen and made (a new run) or reopened (a resumed
 * one), then entered by the spawn server before its first worker.
 */
static int
cmd_run_layer(const struct cmd_run_args *a, const struct config *c,
    struct run *r, struct cmd_run_ctx *x, const struct store_plan *plan)
{
	enum cow_mode	 mode;
	char		 err[1024];
	const char	*cmd = plan != NULL ? "resume" : "run";

	if (plan != NULL) {
		if (layer_reopen(&plan->run, &x->cow, err, sizeof(err)) ==
		    -1) {
			cmd_run_error(cmd, "%s", err);
			return WARREN_EXIT_STORE;
		}
	} else {
		if (layer_choose(c, &x->ps, r->root->profile, &mode, err,
		    sizeof(err)) == -1) {
			cmd_run_error(cmd, "%s", err);
			return WARREN_EXIT_SANDBOX;
		}
		if (mode == COW_NONE)
			return cmd_run_in_place(a, r, x, cmd);
		layer_sweep();
		if (a->nostore) {
			cmd_run_error(cmd, "--no-store keeps no run to review "
			    "the copy-on-write layer with: add --in-place "
			    "(agents write the workspace) or drop --no-store");
			return WARREN_EXIT_USAGE;
		}
		if (cow_create(&x->cow, mode, x->ws, NULL, err, sizeof(err)) ==
		    -1) {
			cmd_run_error(cmd, "%s", err);
			return WARREN_EXIT_SANDBOX;
		}
	}
	if (x->cow.mode == COW_NONE)
		return cmd_run_in_place(a, r, x, cmd);
	/* disk_max held by the kernel: the overlay's upper on a tmpfs that
	 * big (workspace/cow_bound.c). A copy's tree holds the workspace
	 * too: its limit is the watch alone (supervisor/run_disk.c). */
	x->cow.bound = x->cow.mode == COW_OVERLAY ?
	    r->opts.limits.disk_max : 0;
	if (cmd_run_enter(r->spawnd, &x->cow, &r->disk_fd, err,
	    sizeof(err)) == -1) {
		cmd_run_error(cmd, "%s", err);
		if (plan == NULL)
			cmd_run_unlayer(x);
		return WARREN_EXIT_SANDBOX;
	}
	r->opts.cow = &x->cow;
	log_debug("the workspace is a copy-on-write layer (%s) in %s",
	    cow_mode_name(x->cow.mode), x->cow.dir);
	return WARREN_EXIT_OK;
}

/* From here the run's writes go to the store's writer thread: a lock
 * another process holds does not stop the loop (docs/memory.md). */
static void
cmd_run_writer(struct store *st)
{
	if (getenv("WARREN_STORE_INLINE") != NULL)
		return;
	if (store_writer_start(st) == -1)
		log_warnx("%s; writing from the event loop instead",
		    store_errmsg(st));
}

/*
 * --continue [RUN]: the run followed up, RUN or the workspace's latest.
 * One still running is refused: its memory is not written yet. An exit
 * code; *old the run.
 */
static int
cmd_run_cont(const struct cmd_run_args *a, struct store *st, const char *ws,
    int64_t *old)
{
	struct store_run	 run;
	int			 alive;

	*old = a->cont_run;
	if (*old == -1 && store_run_latest(st, ws, old) == -1) {
		cmd_run_error("run", "--continue: no run to continue in %s: %s",
		    ws, store_errmsg(st));
		return store_errcode(st) == STORE_ENOTFOUND ?
		    WARREN_EXIT_USAGE : WARREN_EXIT_STORE;
	}
	if (store_run_get(st, *old, &run) == -1) {
		cmd_run_error("run", "--continue: run %lld: %s",
		    (long long)*old, store_errmsg(st));
		return store_errcode(st) == STORE_ENOTFOUND ?
		    WARREN_EXIT_USAGE : WARREN_EXIT_STORE;
	}
	alive = run.alive;
	store_run_free(&run);
	if (alive) {
		fprintf(stderr, "warren run: --continue: run %lld is still "
		    "running: wait for it to end\n", (long long)*old);
		return WARREN_EXIT_USAGE;
	}
	return WARREN_EXIT_OK;
}

/* A new run: its row first, so a crash from here on can be resumed. */
static int
cmd_run_fresh(const struct cmd_run_args *a, const struct config *c,
    struct run *r, struct cmd_run_ctx *x, struct store **stp)
{
	struct store_run_params	 sp;
	char			 err[1024];
	int64_t			 run_id;
	int			 code = WARREN_EXIT_OK;

	if ((*stp = cmd_run_store(a, x->db, &code)) == NULL) {
		if (!a->nostore) {
			cmd_run_unlayer(x);
			return code;
		}
		x->ran = 1;
		return run_main(r, NULL);
	}
	memset(&sp, 0, sizeof(sp));
	if (a->cont && (code = cmd_run_cont(a, *stp, x->ws, &sp.continues)) !=
	    WARREN_EXIT_OK) {
		cmd_run_unlayer(x);
		return code;
	}
	sp.task = a->task;
	sp.workspace = x->ws;
	sp.profile = r->root->profile->name;
	sp.model = x->lc.model;
	sp.params = cmd_run_params(c, a->schema);
	if (x->cow.mode != COW_NONE) {
		sp.cow_mode = cow_mode_name(x->cow.mode);
		sp.cow_dir = x->cow.dir;
	}
	code = store_run_begin(*stp, &sp, &run_id);
	free((char *)(uintptr_t)sp.params);
	if (code == 0 && x->cow.mode != COW_NONE && cow_mark(&x->cow, x->db,
	    run_id, err, sizeof(err)) == -1) {
		cmd_run_error("run", "its layer: %s", err);
		return WARREN_EXIT_SANDBOX;
	}
	if (code == -1) {
		cmd_run_unlayer(x);
		cmd_run_error("run", "%s", store_errmsg(*stp));
		return WARREN_EXIT_STORE;
	}
	run_set_store(r, *stp, run_id);
	if (sp.continues > 0 && (r->root->store_node <= 0 ||
	    store_run_continue(*stp, sp.continues, r->root->store_node) ==
	    -1)) {
		cmd_run_error("run", "--continue: linking run %lld to run %lld "
		    "(nothing ran): %s", (long long)run_id,
		    (long long)sp.continues, store_errmsg(*stp));
		(void)store_run_finish(*stp, run_id, STORE_RUN_FAILED,
		    "its link to the run it continues could not be written");
		return WARREN_EXIT_STORE;
	}
	if (store_flush(*stp) == -1 || store_lost(*stp) != NULL) {
		cmd_run_error("run", "the run's first rows could not be written"
		    " (nothing ran): %s", store_lost(*stp) ? store_lost(*stp) :
		    store_errmsg(*stp));
		return WARREN_EXIT_STORE;
	}
	cmd_run_writer(*stp);
	cmd_run_masks(x, c);
	log_info("run %lld in %s", (long long)run_id, store_filename(*stp));
	/* Its id, for whoever reads the events (`warren queue work`). */
	if (a->json) {
		printf("{\"event\":\"run\",\"run\":%lld}\n",
		    (long long)run_id);
		fflush(stdout);
	}
	x->ran = 1;
	return run_main(r, NULL);
}

/* An interrupted run, from what its plan says is left. */
static int
cmd_run_again(const struct cmd_run_args *a, struct run *r, struct store *st,
    struct store_plan *plan, struct cmd_run_ctx *x)
{
	struct msg_list	 resume;
	int		 rc, code;

	msg_list_init(&resume);
	r->store = st;
	r->run_id = a->resume;
	if ((rc = run_resume_prepare(r, plan, &resume)) == 1) {
		code = cmd_run_finished(plan, r);
		goto out;
	} else if (rc == -1) {
		fprintf(stderr, "warren resume: run %lld has no root agent\n",
		    (long long)a->resume);
		code = WARREN_EXIT_STORE;
		goto out;
	}
	if (store_run_resumed(st, a->resume) == -1)
		log_warnx("store: %s", store_errmsg(st));
	run_set_store(r, st, a->resume);
	if (store_flush(st) == -1 || store_lost(st) != NULL) {
		cmd_run_error("resume", "run %lld: nothing resumed: %s",
		    (long long)a->resume, store_lost(st) ? store_lost(st) :
		    store_errmsg(st));
		code = WARREN_EXIT_STORE;
		goto out;
	}
	cmd_run_writer(st);
	log_info("resuming run %lld in %s", (long long)a->resume,
	    a->workspace);
	x->ran = 1;
	code = run_main(r, &resume);
out:
	msg_list_free(&resume);
	return code;
}

#define CMD_RUN_SCHEMA_MAX	(1024 * 1024)	/* bytes of a --schema file */

/* --schema FILE: a JSON Schema object jschema can use, kept compact in
 * a->schema (the run's params keep it for a resume). An exit code. */
static int
cmd_run_schema(struct cmd_run_args *a)
{
	json_error_t	 je;
	json_t		*s;
	char		 why[1024];

	if ((s = json_load_file(a->schema_file, 0, &je)) == NULL) {
		cmd_run_error("run", "--schema %s: %s (line %d): give a file "
		    "holding a JSON Schema object", a->schema_file, je.text,
		    je.line);
		return WARREN_EXIT_CONFIG;
	}
	if (jschema_usable(s, why, sizeof(why)) == -1) {
		cmd_run_error("run", "--schema %s: not a usable JSON Schema: "
		    "%s", a->schema_file, why);
		json_decref(s);
		return WARREN_EXIT_CONFIG;
	}
	a->schema = json_dumps(s, JSON_COMPACT);
	json_decref(s);
	if (a->schema == NULL || strlen(a->schema) > CMD_RUN_SCHEMA_MAX) {
		cmd_run_error("run", "--schema %s: larger than %d bytes",
		    a->schema_file, CMD_RUN_SCHEMA_MAX);
		return WARREN_EXIT_CONFIG;
	}
	return WARREN_EXIT_OK;
}

/* Resume: the interrupted run's schema, kept in its params. A --schema
 * given to resume is refused: the run's results must match one. */
static int
cmd_run_schema_resume(struct cmd_run_args *a, const char *params)
{
	json_t		*o, *v;

	if (a->schema_file != NULL) {
		fprintf(stderr, "warren resume: --schema: a resumed run keeps "
		    "the schema it began with (leave out --schema)\n");
		return WARREN_EXIT_USAGE;
	}
	if (params == NULL || (o = json_loads(params, 0, NULL)) == NULL)
		return WARREN_EXIT_OK;
	if ((v = json_object_get(o, "schema")) != NULL && json_is_string(v))
		a->schema = xstrdup(json_string_value(v));
	json_decref(o);
	return WARREN_EXIT_OK;
}

/* Run (or resume) with everything resolved. */
static int
cmd_run_go(struct cmd_run_args *a, struct config *c)
{
	struct cmd_run_ctx	 x;
	struct store		*st = NULL;
	struct store_plan	 plan;
	struct spawnd_client	*spawnd = NULL;
	struct run		*r = NULL;
	char			 err[1024];
	int			 code, endpoint = 1;

	memset(&x, 0, sizeof(x));
	memset(&plan, 0, sizeof(plan));
	llm_config_init(&x.lc);
	/* First, while we hold no key and little memory (spawnd/spawnd.c). */
	if (getenv("WARREN_SPAWN_DIRECT") == NULL &&
	    (spawnd = spawnd_client_start(err, sizeof(err))) == NULL)
		log_warnx("spawn server: %s; forking workers ourselves", err);
	/* Not dumpable before the key is read (cmd_run_setup): a same-uid
	 * process must never find it in a core or through ptrace. */
	(void)prctl(PR_SET_DUMPABLE, 0);
	if (store_path(x.db, sizeof(x.db), a->db) == -1) {
		cmd_run_error(a->resume ? "resume" : "run", "no database path "
		    "(%s): set HOME or XDG_STATE_HOME, or give --db FILE",
		    strerror(errno));
		code = WARREN_EXIT_STORE;
		goto out;
	}
	if (a->resume) {
		if ((code = cmd_run_plan(a, x.db, &st, &plan)) !=
		    WARREN_EXIT_OK || (code = cmd_run_resume_ws(a, x.db, &plan,
		    &endpoint)) != WARREN_EXIT_OK)
			goto out;
		a->task = plan.run.task;
		if (a->profile == NULL)
			a->profile = plan.run.profile;
		cmd_run_params_load(c, plan.run.params, a->resume, endpoint);
		if ((code = cmd_run_schema_resume(a, plan.run.params)) !=
		    WARREN_EXIT_OK)
			goto out;
	} else if (a->cont && a->nostore) {
		fprintf(stderr, "warren run: --continue needs the store (no "
		    "--no-store): the earlier run's memory is there\n");
		code = WARREN_EXIT_USAGE;
		goto out;
	} else if (a->schema_file != NULL &&
	    (code = cmd_run_schema(a)) != WARREN_EXIT_OK)
		goto out;
	if ((code = cmd_run_setup(a, c, &x)) != WARREN_EXIT_OK)
		goto out;
	if ((r = cmd_run_new(a, c, &x)) == NULL) {
		code = WARREN_EXIT_CONFIG;
		goto out;
	}
	r->spawnd = spawnd;
	if ((code = cmd_run_layer(a, c, r, &x, a->resume ? &plan : NULL)) !=
	    WARREN_EXIT_OK)
		goto out;
	if (a->resume)
		cmd_run_masks(&x, c);
	code = a->resume ? cmd_run_again(a, r, st, &plan, &x) :
	    cmd_run_fresh(a, c, r, &x, &st);
	/* A layer on a tmpfs is on disk once the spawn server has ended. */
	if (x.cow.bound != 0) {
		spawnd_client_stop(spawnd);
		spawnd = r->spawnd = NULL;
	}
	if (x.ran && x.cow.mode != COW_NONE && r->run_id > 0)
		code = layer_end(x.db, r->run_id, &x.cow, a->apply, a->json,
		    code);
out:
	run_free(r);
	spawnd_client_stop(spawnd);
	store_close(st);
	store_plan_free(&plan);
	rate_gate_close(x.rate, x.llm);
	llm_engine_free(x.llm);
	profile_set_free(&x.ps);
	project_free(&x.pr);
	llm_config_free(&x.lc);
	return code;
}

int
cmd_run_declare(struct config *c)
{
	if (llm_config_declare(c) == -1 || cmd_queue_declare(c) == -1)
		return -1;
	return config_declare(c, cmd_run_keys,
	    sizeof(cmd_run_keys) / sizeof(cmd_run_keys[0]));
}

static int
cmd_run_common(int argc, char **argv, int resume)
{
	struct cmd_run_args	 a;
	struct config		*c;
	int			 code;

	memset(&a, 0, sizeof(a));
	if ((c = config_new()) == NULL)
		fatal("config_new");
	if (cmd_run_declare(c) == -1)
		fatalx("config: %s", config_error(c));
	if (cmd_run_parse(argc, argv, c, &a, resume) == -1) {
		free(a.task_buf);
		config_free(c);
		return WARREN_EXIT_USAGE;
	}
	if (a.verbose)
		log_setlevel(LOG_LEVEL_DEBUG);
	code = cmd_run_go(&a, c);
	free(a.schema);
	free(a.task_buf);
	config_free(c);
	return code;
}

int
cmd_run(int argc, char **argv)
{
	return cmd_run_common(argc, argv, 0);
}

int
cmd_resume(int argc, char **argv)
{
	return cmd_run_common(argc, argv, 1);
}

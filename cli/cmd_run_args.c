/*
 * warren run's and warren resume's command line (cmd_run.c): the option
 * table and configuration keys, the usage texts, each option into the
 * config or the arguments, the operands (TASK, "-", RUN), and --schema.
 */

#include <errno.h>
#include <jansson.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cmd.h"
#include "cli/cmd_run.h"
#include "cli/opttab.h"
#include "cli/opttab_testapi.h"
#include "common/config.h"
#include "common/exitcode.h"
#include "common/jschema.h"
#include "common/xmalloc.h"
#include "supervisor/run.h"

static const char *const cmd_run_ws_modes[] = { "cow", "in-place", NULL };
static const char *const cmd_run_cow_kinds[] = { "auto", "overlay", "copy",
    NULL };

static const struct config_key cmd_run_keys[] = {
	{ "max_depth", CONFIG_UINT, "WARREN_MAX_DEPTH", "3", 0, 16, NULL,
	    CONFIG_LOWER, "deepest subagent (the orchestrator is depth 0)" },
	{ "max_agents", CONFIG_UINT, "WARREN_MAX_AGENTS", "10", 0, 100000,
	    NULL, CONFIG_LOWER, "subagents per run" },
	{ "jobs", CONFIG_UINT, "WARREN_JOBS", "64", 1, 4096, NULL,
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

int
cmd_run_declare(struct config *c)
{
	if (llm_config_declare(c) == -1 || cmd_queue_declare(c) == -1)
		return -1;
	return config_declare(c, cmd_run_keys,
	    sizeof(cmd_run_keys) / sizeof(cmd_run_keys[0]));
}

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
		cmd_usage_error("resume", "give exactly one RUN (an id, or "
		    "last)");
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
		cmd_usage_error("run", "give exactly one TASK (quote it)%s",
		    a->cont ? " after --continue's RUN" : "");
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

int
cmd_run_parse(int argc, char **argv, struct config *c, struct cmd_run_args *a,
    int resume)
{
	int	ch, rc;

	optind = 1;
	a->is_resume = resume;
	while ((ch = cmd_getopt(resume ? "resume" : "run", argc, argv,
	    "hvTj:w:", cmd_run_opts)) != -1) {
		if ((rc = cmd_run_option(ch, c, a)) != 0)
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

#define CMD_RUN_SCHEMA_MAX	(1024 * 1024)	/* bytes of a --schema file */

/* --schema FILE: a JSON Schema object jschema can use, kept compact in
 * a->schema (the run's params keep it for a resume). An exit code. */
int
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
int
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

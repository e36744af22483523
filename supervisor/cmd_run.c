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
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "agent/profile.h"
#include "common/exitcode.h"
#include "common/log.h"
#include "common/xmalloc.h"
#include "supervisor/cmd.h"
#include "supervisor/config.h"
#include "supervisor/llm.h"
#include "supervisor/run.h"
#include "supervisor/spawn.h"
#include "supervisor/store.h"

static const struct config_key cmd_run_keys[] = {
	{ "max_depth", CONFIG_UINT, "WARREN_MAX_DEPTH", "3", 0, 16, NULL, 0,
	    "deepest subagent (the orchestrator is depth 0)" },
	{ "max_agents", CONFIG_UINT, "WARREN_MAX_AGENTS", "10", 0, 100000,
	    NULL, 0, "subagents per run" },
	{ "jobs", CONFIG_UINT, "WARREN_JOBS", NULL, 1, 4096, NULL, 0,
	    "worker processes at once (default: the number of cores)" },
	{ "token_budget", CONFIG_UINT, "WARREN_TOKEN_BUDGET", "0", 0, 0, NULL,
	    0, "input+output tokens per run; 0 = no budget" },
	{ "agent_timeout", CONFIG_DURATION, "WARREN_AGENT_TIMEOUT", "30m", 1,
	    86400000, NULL, 0, "wall clock of one subagent" },
	{ "hello_timeout", CONFIG_DURATION, "WARREN_HELLO_TIMEOUT", "10s", 1,
	    600000, NULL, 0, "time a new worker has to say hello" },
	{ "max_iterations", CONFIG_UINT, "WARREN_MAX_ITERATIONS", "50", 1,
	    10000, NULL, 0, "LLM turns of one agent" },
	{ "summary_result_max", CONFIG_UINT, "WARREN_SUMMARY_RESULT_MAX",
	    "4000", 0, 0, NULL, 0, "a finished subagent's result longer than "
	    "this (bytes) gets an LLM summary; 0 = never" },
	{ "summary_transcript_max", CONFIG_UINT,
	    "WARREN_SUMMARY_TRANSCRIPT_MAX", "65536", 0, 0, NULL, 0,
	    "so does one whose transcript is longer; 0 = never" },
};

static void
cmd_run_usage(FILE *f)
{
	fprintf(f,
"usage: warren run [--profile P] [--workspace DIR] [--max-depth N]\n"
"                  [--max-agents N] [--jobs N] [--budget TOKENS]\n"
"                  [--llm-concurrency N]\n"
"                  [--provider P] [--base-url URL] [--model M]\n"
"                  [--record FILE | --replay FILE] [--json] [--db FILE]\n"
"                  [--no-store] [--allow-weaker-sandbox] [-v] [-T] TASK\n"
"\n"
"Runs TASK with an orchestrator that delegates to sandboxed subagents.\n"
"The final result goes to stdout, progress to stderr (--json: one JSON\n"
"event per line on stdout instead).\n"
"Exit: 0 done, 1 the task failed, 2 usage, 3 configuration, 4 LLM\n"
"endpoint, 5 sandbox, 6 store, 70 internal error, 130 interrupted.\n");
}

enum {
	OPT_PROFILE = 256, OPT_WORKSPACE, OPT_MAX_DEPTH, OPT_MAX_AGENTS,
	OPT_JOBS, OPT_BUDGET, OPT_PROVIDER, OPT_BASE_URL, OPT_MODEL,
	OPT_RECORD, OPT_REPLAY, OPT_JSON, OPT_DB, OPT_NO_STORE, OPT_WEAKER,
	OPT_TIMEOUT, OPT_HELLO, OPT_WORKER, OPT_LLM_JOBS,
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
	{ "db", required_argument, NULL, OPT_DB },
	{ "no-store", no_argument, NULL, OPT_NO_STORE },
	{ "allow-weaker-sandbox", no_argument, NULL, OPT_WEAKER },
	{ "agent-timeout", required_argument, NULL, OPT_TIMEOUT },
	{ "hello-timeout", required_argument, NULL, OPT_HELLO },
	{ "worker", required_argument, NULL, OPT_WORKER },
	{ "llm-concurrency", required_argument, NULL, OPT_LLM_JOBS },
	{ "verbose", no_argument, NULL, 'v' },
	{ "help", no_argument, NULL, 'h' },
	{ NULL, 0, NULL, 0 },
};

/* What `warren run` was asked, before the config resolves it. */
struct cmd_run_args {
	const char	*task;
	const char	*profile;
	const char	*workspace;
	const char	*db;
	const char	*worker;
	int		 json, nostore, weaker, trace, verbose;
	int64_t		 resume;	/* run id, or 0 */
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
		fprintf(stderr, "warren run: %s\n", config_error(c));
		return -1;
	}
	return 0;
}

static int
cmd_run_parse(int argc, char **argv, struct config *c, struct cmd_run_args *a,
    int resume)
{
	int	ch, rc = 0;

	optind = 1;
	while ((ch = getopt_long(argc, argv, "+hvTj:w:", cmd_run_opts,
	    NULL)) != -1) {
		switch (ch) {
		case OPT_PROFILE: a->profile = optarg; break;
		case 'w':
		case OPT_WORKSPACE: a->workspace = optarg; break;
		case OPT_MAX_DEPTH:
			rc = cmd_run_flag(c, "max_depth", optarg, "--max-depth");
			break;
		case OPT_MAX_AGENTS:
			rc = cmd_run_flag(c, "max_agents", optarg,
			    "--max-agents");
			break;
		case 'j':
		case OPT_JOBS: rc = cmd_run_flag(c, "jobs", optarg, "--jobs");
			break;
		case OPT_BUDGET:
			rc = cmd_run_flag(c, "token_budget", optarg, "--budget");
			break;
		case OPT_PROVIDER:
			rc = cmd_run_flag(c, "provider", optarg, "--provider");
			break;
		case OPT_BASE_URL:
			rc = cmd_run_flag(c, "base_url", optarg, "--base-url");
			break;
		case OPT_MODEL:
			rc = cmd_run_flag(c, "model", optarg, "--model");
			break;
		case OPT_RECORD:
			rc = cmd_run_flag(c, "record", optarg, "--record");
			break;
		case OPT_REPLAY:
			rc = cmd_run_flag(c, "replay", optarg, "--replay");
			break;
		case OPT_TIMEOUT:
			rc = cmd_run_flag(c, "agent_timeout", optarg,
			    "--agent-timeout");
			break;
		case OPT_HELLO:
			rc = cmd_run_flag(c, "hello_timeout", optarg,
			    "--hello-timeout");
			break;
		case OPT_LLM_JOBS:
			rc = cmd_run_flag(c, "llm_concurrency", optarg,
			    "--llm-concurrency");
			break;
		case OPT_JSON: a->json = 1; break;
		case OPT_DB: a->db = optarg; break;
		case OPT_NO_STORE: a->nostore = 1; break;
		case OPT_WEAKER: a->weaker = 1; break;
		case OPT_WORKER: a->worker = optarg; break;
		case 'T': a->trace = 1; break;
		case 'v': a->verbose = 1; break;
		case 'h':
			cmd_run_usage(stdout);
			exit(WARREN_EXIT_OK);
		default:
			cmd_run_usage(stderr);
			return -1;
		}
		if (rc == -1)
			return -1;
	}
	if (resume) {
		const char *errstr;

		if (optind != argc - 1) {
			fprintf(stderr, "usage: warren resume [--workspace DIR] "
			    "[--db FILE] [run options] RUN\n"
			    "RUN is a run id from `warren runs`, or \"last\".\n");
			return -1;
		}
		/* "last" is resolved once the store is open (cmd_run_plan). */
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
	if (optind != argc - 1) {
		fprintf(stderr, "warren run: give exactly one TASK (quote it)\n");
		cmd_run_usage(stderr);
		return -1;
	}
	a->task = argv[optind];
	if (*a->task == '\0') {
		fprintf(stderr, "warren run: the TASK is empty\n");
		return -1;
	}
	return 0;
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
}

static struct store *
cmd_run_store(const struct cmd_run_args *a, const char *ws, int *code)
{
	struct store	*st;
	char		 path[PATH_MAX], err[STORE_ERRMSG_MAX];

	if (a->nostore)
		return NULL;
	if (store_path(path, sizeof(path), a->db, ws) == -1) {
		fprintf(stderr, "warren run: database path too long\n");
		*code = WARREN_EXIT_STORE;
		return NULL;
	}
	if ((st = store_open(path, STORE_CREATE, err, sizeof(err))) == NULL) {
		fprintf(stderr, "warren run: %s (--db FILE to use another, "
		    "--no-store to keep nothing)\n", err);
		*code = WARREN_EXIT_STORE;
	}
	return st;
}

/* What a resume needs to run the same way: limits and endpoint, as JSON. */
static char *
cmd_run_params(const struct config *c)
{
	static const char *const keys[] = { "max_depth", "max_agents", "jobs",
	    "token_budget", "max_iterations", "summary_result_max",
	    "summary_transcript_max", "provider", "base_url", "model" };
	json_t	*o = json_object();
	char	*s;
	size_t	 i;

	for (i = 0; i < sizeof(keys) / sizeof(keys[0]); i++) {
		if (!config_isset(c, keys[i]) && strcmp(keys[i], "max_depth") &&
		    strcmp(keys[i], "max_agents"))
			continue;
		if (i < 7)
			json_object_set_new(o, keys[i],
			    json_integer((json_int_t)config_uint(c, keys[i])));
		else if (config_str(c, keys[i]) != NULL)
			json_object_set_new(o, keys[i],
			    json_string(config_str(c, keys[i])));
	}
	json_object_set_new(o, "agent_timeout_ms", json_integer((json_int_t)
	    config_ms(c, "agent_timeout")));
	json_object_set_new(o, "hello_timeout_ms", json_integer((json_int_t)
	    config_ms(c, "hello_timeout")));
	s = json_dumps(o, JSON_COMPACT | JSON_SORT_KEYS);
	json_decref(o);
	return s;
}

/* Resume: the interrupted run's parameters, weaker than flags and env. */
static void
cmd_run_params_load(struct config *c, const char *params, int64_t run)
{
	const char	*k;
	json_t		*o, *v;
	char		 val[2048], where[64];

	if (params == NULL || (o = json_loads(params, 0, NULL)) == NULL)
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
		/* A bad stored value is ignored: the default stands. */
		(void)config_set(c, key, val, CONFIG_SRC_WORKSPACE, where);
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

/* Resume: the plan of run a->resume, from the store the flags name. */
static int
cmd_run_plan(struct cmd_run_args *a, struct store **stp,
    struct store_plan *plan)
{
	char	ws[PATH_MAX];
	int	code = WARREN_EXIT_OK;

	if (a->nostore) {
		fprintf(stderr, "warren resume: needs the store (no --no-store)\n");
		return WARREN_EXIT_USAGE;
	}
	if (realpath(a->workspace ? a->workspace : ".", ws) == NULL) {
		fprintf(stderr, "warren resume: workspace %s: %s\n",
		    a->workspace ? a->workspace : ".", strerror(errno));
		return WARREN_EXIT_CONFIG;
	}
	if ((*stp = cmd_run_store(a, ws, &code)) == NULL)
		return code;
	if (a->resume == -1 && store_run_latest(*stp, &a->resume) == -1) {
		fprintf(stderr, "warren resume: no run to resume in %s: %s\n",
		    ws, store_errmsg(*stp));
		return store_errcode(*stp) == STORE_ENOTFOUND ?
		    WARREN_EXIT_USAGE : WARREN_EXIT_STORE;
	}
	if (store_resume_plan(*stp, a->resume, plan) == -1) {
		fprintf(stderr, "warren resume: run %lld: %s\n",
		    (long long)a->resume, store_errmsg(*stp));
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
cmd_run_finished(const struct store_plan *plan, int json)
{
	size_t	i;

	for (i = 0; i < plan->nagents; i++) {
		const struct store_agent *ag = &plan->agents[i].agent;

		if (strcmp(ag->path, "0") != 0)
			continue;
		ui_init(json);
		ui_result(ag->result ? ag->result : "",
		    ag->status == STORE_AGENT_DONE, ag->status ==
		    STORE_AGENT_DONE ? WARREN_EXIT_OK : WARREN_EXIT_FAIL);
		return ag->status == STORE_AGENT_DONE ? WARREN_EXIT_OK :
		    WARREN_EXIT_FAIL;
	}
	return WARREN_EXIT_STORE;
}

/* Run (or resume) with everything resolved. */
static int
cmd_run_go(struct cmd_run_args *a, struct config *c)
{
	struct llm_config	 lc;
	struct llm_engine	*llm = NULL;
	struct profile_set	 ps;
	struct store		*st = NULL;
	struct store_plan	 plan;
	struct msg_list		 resume;
	struct run_opts		 o;
	struct run		*r = NULL;
	struct store_run_params	 sp;
	char			 ws[PATH_MAX], worker[PATH_MAX], err[1024];
	struct spawnd		*spawnd = NULL;
	char			*params = NULL;
	int64_t			 run_id = 0;
	int			 code = WARREN_EXIT_CONFIG, rc;

	memset(&ps, 0, sizeof(ps));
	memset(&plan, 0, sizeof(plan));
	msg_list_init(&resume);
	llm_config_init(&lc);
	/* First, while we hold no key and little memory (spawnd.c). */
	if (getenv("WARREN_SPAWN_DIRECT") == NULL &&
	    (spawnd = spawnd_start()) == NULL)
		log_warn("spawn server; forking workers ourselves");
	if (a->resume) {
		if ((code = cmd_run_plan(a, &st, &plan)) != WARREN_EXIT_OK)
			goto out;
		code = WARREN_EXIT_CONFIG;
		a->task = plan.run.task;
		if (a->profile == NULL)
			a->profile = plan.run.profile;
		if (plan.run.workspace != NULL)
			a->workspace = plan.run.workspace;
	}
	if (realpath(a->workspace ? a->workspace : ".", ws) == NULL) {
		fprintf(stderr, "warren run: workspace %s: %s\n",
		    a->workspace ? a->workspace : ".", strerror(errno));
		goto out;
	}
	if (cmd_run_worker_bin(a->worker, worker, sizeof(worker)) == -1) {
		fprintf(stderr, "warren run: cannot find warren-worker (set "
		    "WARREN_WORKER_BIN or --worker)\n");
		goto out;
	}
	if (a->resume)
		cmd_run_params_load(c, plan.run.params, a->resume);
	if (config_load_standard(c, ws) == -1) {
		fprintf(stderr, "warren run: %s\n", config_error(c));
		goto out;
	}
	/* Reads the key once and scrubs it from our environment block. */
	if (llm_config_load(&lc, c, err, sizeof(err)) == -1) {
		fprintf(stderr, "warren run: %s\n", err);
		goto out;
	}
	(void)prctl(PR_SET_DUMPABLE, 0);
	if ((llm = llm_engine_new(&lc, err, sizeof(err))) == NULL) {
		fprintf(stderr, "warren run: %s\n", err);
		goto out;
	}
	if (profile_set_load(&ps, ws, err, sizeof(err)) == -1) {
		fprintf(stderr, "warren run: %s\n", err);
		goto out;
	}
	memset(&o, 0, sizeof(o));
	o.task = a->task;
	o.profile = a->profile;
	o.workspace = ws;
	o.worker_bin = worker;
	o.json = a->json;
	o.trace = a->trace;
	o.weaker = a->weaker;
	cmd_run_limits(c, &o.limits);
	if ((r = run_new(&o, llm, &ps, err, sizeof(err))) == NULL) {
		fprintf(stderr, "warren run: %s\n", err);
		goto out;
	}
	r->spawnd = spawnd;
	code = WARREN_EXIT_OK;
	if (a->resume) {
		r->store = st;
		r->run_id = a->resume;
		if ((rc = run_resume_prepare(r, &plan, &resume)) == 1) {
			code = cmd_run_finished(&plan, a->json);
			goto out;
		} else if (rc == -1) {
			fprintf(stderr, "warren resume: run %lld has no root "
			    "agent\n", (long long)a->resume);
			code = WARREN_EXIT_STORE;
			goto out;
		}
		if (store_run_resumed(st, a->resume) == -1)
			log_warnx("store: %s", store_errmsg(st));
		run_set_store(r, st, a->resume);
		(void)store_flush(st);
		log_info("resuming run %lld", (long long)a->resume);
		code = run_main(r, &resume);
		goto out;
	}
	st = cmd_run_store(a, ws, &code);
	if (code != WARREN_EXIT_OK)
		goto out;
	if (st != NULL) {
		memset(&sp, 0, sizeof(sp));
		sp.task = a->task;
		sp.workspace = ws;
		sp.profile = r->root->profile->name;
		sp.model = lc.model;
		sp.params = params = cmd_run_params(c);
		if (store_run_begin(st, &sp, &run_id) == -1) {
			fprintf(stderr, "warren run: %s\n", store_errmsg(st));
			code = WARREN_EXIT_STORE;
			goto out;
		}
		run_set_store(r, st, run_id);
		(void)store_flush(st);
		log_info("run %lld in %s", (long long)run_id,
		    store_filename(st));
	}
	code = run_main(r, NULL);
out:
	run_free(r);
	spawnd_stop(spawnd);
	store_close(st);
	store_plan_free(&plan);
	msg_list_free(&resume);
	llm_engine_free(llm);
	profile_set_free(&ps);
	llm_config_free(&lc);
	free(params);
	return code;
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
	if (llm_config_declare(c) == -1 ||
	    config_declare(c, cmd_run_keys,
	    sizeof(cmd_run_keys) / sizeof(cmd_run_keys[0])) == -1)
		fatalx("config: %s", config_error(c));
	if (cmd_run_parse(argc, argv, c, &a, resume) == -1) {
		config_free(c);
		return WARREN_EXIT_USAGE;
	}
	if (a.verbose)
		log_setlevel(LOG_LEVEL_DEBUG);
	code = cmd_run_go(&a, c);
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

/*
 * warren resume and warren run --continue (cmd_run.c): the parameters a
 * run keeps so that it can be resumed the same way, the plan of what is
 * left of an interrupted run, and the run a --continue follows up.
 */

#include <errno.h>
#include <jansson.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli/cmd_run.h"
#include "common/config.h"
#include "common/exitcode.h"
#include "common/jschema.h"
#include "common/log.h"
#include "common/path.h"
#include "common/urlmask.h"
#include "store/store.h"
#include "supervisor/run.h"

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
char *
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
void
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
int
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
int
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
int
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

/*
 * --continue [RUN]: the run followed up, RUN or the workspace's latest.
 * One still running is refused: its memory is not written yet. An exit
 * code; *old the run's row (the caller frees it).
 */
int
cmd_run_cont(const struct cmd_run_args *a, struct store *st, const char *ws,
    struct store_run *old)
{
	int64_t	id = a->cont_run;

	memset(old, 0, sizeof(*old));
	if (id == -1 && store_run_latest(st, ws, &id) == -1) {
		cmd_run_error("run", "--continue: no run to continue in %s: %s",
		    ws, store_errmsg(st));
		return store_errcode(st) == STORE_ENOTFOUND ?
		    WARREN_EXIT_USAGE : WARREN_EXIT_STORE;
	}
	if (store_run_get(st, id, old) == -1) {
		memset(old, 0, sizeof(*old));
		cmd_run_error("run", "--continue: run %lld: %s",
		    (long long)id, store_errmsg(st));
		return store_errcode(st) == STORE_ENOTFOUND ?
		    WARREN_EXIT_USAGE : WARREN_EXIT_STORE;
	}
	if (old->alive) {
		fprintf(stderr, "warren run: --continue: run %lld is still "
		    "running: wait for it to end\n", (long long)id);
		return WARREN_EXIT_USAGE;
	}
	return WARREN_EXIT_OK;
}

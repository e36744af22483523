/*
 * What a run needs besides the store, resolved before it starts
 * (cmd_run.c): the worker program, the workspace, the profiles, the LLM
 * engine, and the files no worker may read though they may lie in the
 * workspace.
 */

#include <sys/stat.h>

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli/cmd.h"
#include "cli/cmd_run.h"
#include "cli/rate_gate.h"
#include "common/config.h"
#include "common/exitcode.h"
#include "common/jschema.h"
#include "common/log.h"
#include "queue/queue.h"

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

void
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
int
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
	    project_load_profiles(&x->pr, &x->ps, err, sizeof(err)) == -1 ||
	    mcp_load(&x->mcp, &x->pr, "run", err, sizeof(err)) == -1) {
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

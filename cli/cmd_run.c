/*
 * warren run [options] TASK, and warren resume RUN.
 *
 * Parses the command line into a config (flags > environment > config
 * files), reads the API key once (the LLM config scrubs it from the
 * environment block), makes the supervisor non-dumpable, opens the store,
 * and hands everything to the run (run.c). Exit codes: common/exitcode.h.
 * This file holds the course of a run: a new one or an interrupted one
 * started again; the rest is cmd_run_args.c (the command line),
 * cmd_run_setup.c (what a run needs before it starts),
 * cmd_run_resume.c (resume and --continue) and cmd_run_layer.c (the
 * workspace's copy-on-write layer).
 */
#include <sys/prctl.h>

#include <errno.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli/cmd.h"
#include "cli/cmd_run.h"
#include "cli/layer.h"
#include "cli/rate_gate.h"
#include "common/config.h"
#include "common/exitcode.h"
#include "common/jschema.h"
#include "common/log.h"
#include "common/price.h"
#include "common/str.h"
#include "store/store.h"
#include "supervisor/run.h"
#include "supervisor/spawnd_client.h"

/*
 * An error on stderr, escaped: store, config and profile messages quote
 * file names and file contents that an agent with write access may have
 * chosen.
 */
void __attribute__((format(printf, 2, 3)))
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

struct store *
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
	o.root_chat = a->chat;
	o.mcp = &x->mcp;
	cmd_run_limits(c, &o.limits);
	/* By the run's model; a bad entry anywhere stops the run. */
	if ((o.priced = price_find(c, x->lc.model, &o.price, err,
	    sizeof(err))) == -1) {
		cmd_run_error("run", "%s", err);
		return NULL;
	}
	if ((r = run_new(&o, x->llm, &x->ps, err, sizeof(err))) == NULL)
		cmd_run_error("run", "%s", err);
	return r;
}

/* cmd_run_tell's fd, -1: none. */
static int	cmd_run_tell_fd = -1;

void
cmd_run_tell(int fd)
{
	cmd_run_tell_fd = fd;
}

/* The run exists: its id to whoever asked (warren chat), once. */
static void
cmd_run_told(int64_t run_id)
{
	char	buf[32];
	int	n;

	if (cmd_run_tell_fd == -1)
		return;
	n = snprintf(buf, sizeof(buf), "%lld\n", (long long)run_id);
	if (write(cmd_run_tell_fd, buf, (size_t)n) != n)
		log_warn("telling warren chat the turn's run id %lld",
		    (long long)run_id);
	close(cmd_run_tell_fd);
	cmd_run_tell_fd = -1;
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

/* A new run: its row first, so a crash from here on can be resumed. */
static int
cmd_run_fresh(const struct cmd_run_args *a, const struct config *c,
    struct run *r, struct cmd_run_ctx *x, struct store **stp)
{
	struct store_run_params	 sp;
	char			 err[1024];
	int64_t			 run_id;
	int			 code = WARREN_EXIT_OK;

	if (*stp == NULL && (*stp = cmd_run_store(a, x->db, &code)) == NULL) {
		if (!a->nostore) {
			cmd_run_unlayer(x);
			return code;
		}
		x->ran = 1;
		return run_main(r, NULL);
	}
	memset(&sp, 0, sizeof(sp));
	sp.continues = x->prev.id;
	sp.adopts = x->adopted;
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
	cmd_run_told(run_id);
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
	if (!a->resume)
		layer_probe_early(c);
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
	/* The run followed up, before the layer: a follow-up goes on in
	 * its layer (cmd_run_layer.c). */
	if (a->cont && ((st = cmd_run_store(a, x.db, &code)) == NULL ||
	    (code = cmd_run_cont(a, st, x.ws, &x.prev)) != WARREN_EXIT_OK))
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
	if (x.prev.id > 0)
		store_run_free(&x.prev);
	rate_gate_close(x.rate, x.llm);
	llm_engine_free(x.llm);
	profile_set_free(&x.ps);
	project_free(&x.pr);
	mcp_config_free(&x.mcp);
	llm_config_free(&x.lc);
	return code;
}

static int
cmd_run_common(int argc, char **argv, int resume, int chat)
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
	a.chat = chat;
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
	return cmd_run_common(argc, argv, 0, 0);
}

int
cmd_resume(int argc, char **argv)
{
	return cmd_run_common(argc, argv, 1, 0);
}

/* One turn of warren chat (cmd_chat.c): warren run's arguments, the root
 * given the earlier turns in full. */
int
cmd_run_turn(int argc, char **argv)
{
	return cmd_run_common(argc, argv, 0, 1);
}

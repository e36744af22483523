/*
 * A run as a process: its event loop and the loop's hooks (signals, the
 * spawn server, the store's descriptors, the LLM engine, timers, idle),
 * cancellation, and its end (the -v stats, the exit code).
 */
#include <sys/epoll.h>
#include <sys/prctl.h>
#include <sys/resource.h>

#include <signal.h>
#include <string.h>

#include "common/exitcode.h"
#include "common/log.h"
#include "common/xmalloc.h"
#include "llm/llm.h"
#include "store/store.h"
#include "supervisor/loop.h"
#include "supervisor/mcp.h"
#include "supervisor/run.h"
#include "supervisor/spawnd_client.h"

#define RUN_FLUSH_MS		200	/* store batch commit period */
#define RUN_STORE_STOP		"the run stopped: its database cannot be written"
#define RUN_SPAWND_STOP		"the run stopped: the spawn server died, no " \
				"agent can start"

static void
run_kill_timer(void *arg)
{
	struct run	*r = arg;

	r->kill_timer = 0;
	proc_killall(r);
}

/* Why the run stops when it was not asked to: the store, the spawn
 * server, a run limit (the disk); else asked. */
static const char *
run_stop_reason(const struct run *r, const char *asked)
{
	if (r->store_failed)
		return RUN_STORE_STOP;
	if (r->spawnd_failed)
		return RUN_SPAWND_STOP;
	if (r->stop_reason != NULL)
		return r->stop_reason;
	return asked;
}

void
run_cancel(struct run *r, int hard)
{
	size_t		 i;
	struct node	*n;

	if (hard) {
		proc_killall(r);
		return;
	}
	if (r->cancelling)
		return;
	r->cancelling = 1;
	while ((n = r->qhead) != NULL) {
		run_unqueue(r, n);
		n->end = NODE_END_CANCELLED;
		n->error = xstrdup("the run was cancelled before it started");
		run_node_done(r, n);
	}
	for (i = 0; i < r->nnodes; i++) {
		n = r->nodes[i];
		if (n->worker != NULL && n->state == NODE_RUNNING)
			proc_cancel(n->worker, r->finished ?
			    "the run finished" : run_stop_reason(r,
			    "the run was cancelled"));
	}
	if (!r->finished && r->orch_deferred) {
		/* Resuming: the orchestrator waited on its subagents. */
		r->orch_deferred = 0;
		r->root->end = NODE_END_CANCELLED;
		r->root->error = xstrdup(run_stop_reason(r, "the run was "
		    "cancelled while it resumed its subagents"));
		run_node_done(r, r->root);
	} else if (!r->finished)
		orch_cancel(r, run_stop_reason(r,
		    "the run was cancelled (SIGINT/SIGTERM)"));
	r->kill_timer = loop_timer_add(r->loop, r->opts.limits.grace_ms,
	    run_kill_timer, r);
}

/* --- the loop's hooks --------------------------------------------------- */

static void
run_signal(int signo, void *arg)
{
	struct run	*r = arg;

	switch (signo) {
	case SIGCHLD:
		proc_reap(r);
		break;
	case SIGINT:
	case SIGTERM:
	case SIGHUP:
		if (run_parent_gone())
			run_parent_stop(r);	/* no graceful stop */
		if (r->nsigint++ == 0 && !r->finished) {
			log_warnx("%s: cancelling every agent (again to kill "
			    "at once)", strsignal(signo));
			r->interrupted = 1;
			run_cancel(r, 0);
		} else {
			log_warnx("%s: killing every worker", strsignal(signo));
			r->interrupted = 1;
			run_cancel(r, 1);
		}
		break;
	default:
		break;
	}
}

static void
run_spawnd_exit(pid_t pid, int code, int status, void *arg)
{
	if (mcp_exited(arg, pid))
		return;
	proc_exit_pid(arg, pid, code, status);
}

static void
run_spawnd_spawned(void *cookie, const struct spawn_child *c, const char *err,
    void *arg)
{
	if (mcp_spawned(arg, cookie, c, err))
		return;
	proc_spawned(cookie, c, err);
}

static const struct spawnd_client_ops run_spawnd_ops = {
	.spawned = run_spawnd_spawned,
	.exited = run_spawnd_exit,
};

/*
 * The spawn server is gone (killed from outside, or it failed): the agents
 * it started are dead to us (their exits would come through it), and no
 * agent can start any more. Stop the run (exit 70) rather than let the
 * orchestrator delegate into a void, each attempt refused.
 */
static void
run_spawnd_gone(struct run *r)
{
	if (r->finished) {
		/* Its result is in: only the teardown is left. */
		log_warnx("the spawn server died");
		proc_server_gone(r);
		return;
	}
	log_warnx("the spawn server died: no agent can start any more; "
	    "stopping the run");
	r->spawnd_failed = 1;
	proc_server_gone(r);	/* their parents hear it (replies come later) */
	run_cancel(r, 0);
}

static void
run_spawnd_ready(int fd, uint32_t events, void *arg)
{
	struct run	*r = arg;

	if (events & EPOLLOUT)
		(void)spawnd_client_flush(r->spawnd);	/* -1: EOF follows */
	if (spawnd_client_read(r->spawnd, &run_spawnd_ops, r) == -1) {
		loop_del_fd(r->loop, fd);
		run_spawnd_gone(r);
	}
}

/* The writer committed: the ends it made durable are told. */
static void
run_store_commit_ready(int fd, uint32_t events, void *arg)
{
	struct run	*r = arg;

	(void)fd;
	(void)events;
	store_commit_ack(r->store);
	run_tell_ready(r);
}

/* The writer lost a write while the loop had nothing else to do. */
static void
run_store_lost_ready(int fd, uint32_t events, void *arg)
{
	struct run	*r = arg;

	(void)events;
	loop_del_fd(r->loop, fd);
	run_store_check(r);
}

static void
run_llm_ready(int fd, uint32_t events, void *arg)
{
	struct run	*r = arg;

	(void)fd;
	(void)events;
	llm_engine_process(r->llm);
}

static long
run_timeout(void *arg)
{
	struct run	*r = arg;

	return llm_engine_timeout_ms(r->llm);
}

static void
run_flush_timer(void *arg)
{
	struct run	*r = arg;

	r->flush_timer = 0;
	if (r->store != NULL && store_flush(r->store) == -1)
		run_store_warn(r, "run %lld", (long long)r->run_id);
}

static void
run_idle(void *arg)
{
	struct run	*r = arg;

	llm_engine_process(r->llm);
	run_schedule(r);
	ui_flush();
	run_store_check(r);
	run_tell_ready(r);
	if (r->store != NULL && r->flush_timer == 0 &&
	    store_pending(r->store) > 0)
		r->flush_timer = loop_timer_add(r->loop, RUN_FLUSH_MS,
		    run_flush_timer, r);
	if (r->finished && r->nlive == 0 && llm_engine_pending(r->llm) == 0 &&
	    r->tell_head == NULL)
		loop_break(r->loop);
}

/* -v: what the supervisor itself cost (bench/bench_run reads this). */
static void
run_stats(struct run *r)
{
	struct rusage	ru;

	if (getrusage(RUSAGE_SELF, &ru) == -1)
		return;
	log_debug("stats: %zu agents, %llu llm turns, %llu tokens, "
	    "supervisor cpu %ld.%06ld s user %ld.%06ld s sys, maxrss %ld kB",
	    r->nnodes, (unsigned long long)r->nturns,
	    (unsigned long long)r->tokens, (long)ru.ru_utime.tv_sec,
	    (long)ru.ru_utime.tv_usec, (long)ru.ru_stime.tv_sec,
	    (long)ru.ru_stime.tv_usec, ru.ru_maxrss);
}

static int
run_exit_code(struct run *r)
{
	if (r->store_failed)
		return WARREN_EXIT_STORE;
	if (r->spawnd_failed)
		return WARREN_EXIT_INTERNAL;
	if (r->stop_reason != NULL)
		return WARREN_EXIT_FAIL;	/* the disk limit */
	if (r->interrupted)
		return WARREN_EXIT_INTERRUPTED;
	if (run_end_ok(r->root->end))
		return WARREN_EXIT_OK;
	if (r->root->end == NODE_END_CANCELLED)
		return WARREN_EXIT_INTERRUPTED;
	return r->llm_failed ? WARREN_EXIT_LLM : WARREN_EXIT_FAIL;
}

int
run_main(struct run *r, const struct msg_list *resume)
{
	char	err[512];
	int	code;

	/* Orphaned tool processes come to us, not to init: we kill them. */
	(void)prctl(PR_SET_CHILD_SUBREAPER, 1);
	/* Until the loop takes SIGTERM, a parent's death signal kills. */
	run_parent_note();
	ui_init(r);
	if (loop_signals(r->loop, run_signal, r) == -1)
		fatal("signalfd");
	run_parent_watch(r);
	ui_start(r);
	if (loop_add_fd(r->loop, llm_engine_fd(r->llm), EPOLLIN,
	    run_llm_ready, r) == -1)
		fatal("epoll_ctl llm");
	if (r->spawnd != NULL && loop_add_fd(r->loop,
	    spawnd_client_fd(r->spawnd), EPOLLIN, run_spawnd_ready, r) == -1)
		fatal("epoll_ctl spawnd");
	if (r->spawnd != NULL)
		spawnd_client_watch(r->spawnd, r->loop);
	if (r->store != NULL && store_lost_fd(r->store) != -1 &&
	    loop_add_fd(r->loop, store_lost_fd(r->store), EPOLLIN,
	    run_store_lost_ready, r) == -1)
		fatal("epoll_ctl store");
	if (r->store != NULL && store_commit_fd(r->store) != -1 &&
	    loop_add_fd(r->loop, store_commit_fd(r->store), EPOLLIN,
	    run_store_commit_ready, r) == -1)
		fatal("epoll_ctl store");
	loop_set_timeout_hook(r->loop, run_timeout, r);
	loop_set_idle_hook(r->loop, run_idle, r);
	/* Before any agent can write to the workspace. */
	run_hostexec_begin(r, resume != NULL);
	run_disk_begin(r);
	if (!r->orch_deferred && run_root_start(r, resume, err,
	    sizeof(err)) == -1) {
		ui_end(r);
		log_warnx("orchestrator: %s", err);
		return WARREN_EXIT_CONFIG;
	}
	/* Resumed subagents may be queued before any event comes. */
	run_schedule(r);
	if (!r->finished || r->nlive > 0)
		if (loop_run(r->loop) == -1) {
			ui_end(r);
			return WARREN_EXIT_INTERNAL;
		}
	ui_end(r);
	proc_killall(r);
	proc_sweep_orphans(r->spawnd ? spawnd_client_pid(r->spawnd) : 0);
	/* What the last writer left counts too; not measured is over. */
	run_disk_end(r);
	if (r->disk_timer != 0)
		loop_timer_del(r->loop, r->disk_timer);
	run_stats(r);
	/* Every worker is gone: what they left is final. */
	run_hostexec_end(r);
	run_store_check(r);
	run_partial(r);
	code = run_store_end(r, run_exit_code(r));
	ui_result(r, code == 0 ? r->root->result : code == WARREN_EXIT_STORE ?
	    RUN_STORE_STOP : r->spawnd_failed ? RUN_SPAWND_STOP :
	    r->root->error, code == 0, code);
	return code;
}

/*
 * Worker processes: start, talk, time out, kill, reap.
 *
 * A worker's life is a state x event table (s6-supervise): states
 * spawning, ready, busy, draining, dead; events hello, message, exit,
 * timeout, cancel. Each cell is a small action function. Everything a
 * worker sends is hostile: the IPC layer checks every frame and what this
 * side may receive in which state; a worker that breaks the protocol, is
 * late or lies about its sandbox is killed and the reason recorded, and
 * the supervisor goes on (tmux server_client_dispatch -> proc_kill_peer).
 *
 * The cells that read a message are in proc_msg.c, what a worker is
 * started with (its argv, its sandbox policy) in proc_launch.c, and the
 * orphans a run leaves behind in proc_orphans.c.
 */
#include <sys/epoll.h>
#include <sys/wait.h>

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "agent/profile.h"
#include "agent/tooldef.h"
#include "common/clock.h"
#include "common/exitcode.h"
#include "common/log.h"
#include "common/str.h"
#include "common/xmalloc.h"
#include "ipc/ipc.h"
#include "llm/llm.h"
#include "sandbox/sandbox.h"
#include "spawnd/spawn.h"
#include "store/store.h"
#include "supervisor/loop.h"
#include "supervisor/mcp.h"
#include "supervisor/proc_int.h"
#include "supervisor/run.h"
#include "supervisor/spawnd_client.h"

typedef void	(*proc_action)(struct worker *);

static void	proc_on_exit(struct worker *);
static void	proc_hello_late(struct worker *);
static void	proc_deadline(struct worker *);
static void	proc_grace_over(struct worker *);
static void	proc_kill_now(struct worker *);
static void	proc_send_cancel(struct worker *);
static void	proc_ignore(struct worker *);

static const proc_action proc_table[PROC_NSTATES][PROC_NEVENTS] = {
	/*		  hello		   message	       exit
			  timeout	   cancel */
	/* No channel and no pid yet: only a cancel can come. */
	[PROC_FORKING] = { proc_ignore,	   proc_ignore,	       proc_ignore,
			  proc_ignore,	   proc_kill_now },
	[PROC_SPAWNING] = { proc_on_hello, proc_out_of_turn, proc_on_exit,
			  proc_hello_late, proc_kill_now },
	[PROC_READY] =	{ proc_out_of_turn, proc_on_message,   proc_on_exit,
			  proc_deadline,   proc_send_cancel },
	[PROC_BUSY] =	{ proc_out_of_turn, proc_on_message,   proc_on_exit,
			  proc_deadline,   proc_send_cancel },
	[PROC_DRAINING] = { proc_ignore,   proc_drain_message, proc_on_exit,
			  proc_grace_over, proc_ignore },
	[PROC_DEAD] =	{ proc_ignore,     proc_ignore,        proc_ignore,
			  proc_ignore,     proc_ignore },
};

static const char *const proc_state_names[PROC_NSTATES] = {
	"forking", "spawning", "ready", "busy", "draining", "dead"
};

static void	proc_fire(struct worker *, enum proc_event);

/* Signal the worker's whole tree, ourselves or through the spawn server. */
static void
proc_signal(struct worker *w, int signo)
{
	if (w->child.pid <= 0)
		return;		/* not forked yet: killed when it comes */
	if (w->child.remote)
		spawnd_client_kill(w->run->spawnd, w->child.pid, signo);
	else
		spawn_kill(&w->child, signo);
}
static void	proc_read(int, uint32_t, void *);

static void
proc_fire(struct worker *w, enum proc_event ev)
{
	proc_table[w->state][ev](w);
}

static void
proc_ignore(struct worker *w)
{
	(void)w;
}

static void
proc_timer_cb(void *arg)
{
	struct worker	*w = arg;

	w->timer = 0;
	proc_fire(w, PROC_EV_TIMEOUT);
}

void
proc_arm(struct worker *w, uint64_t ms)
{
	loop_timer_del(w->run->loop, w->timer);
	w->timer = ms ? loop_timer_add(w->run->loop, ms, proc_timer_cb, w) : 0;
}

/* Watch the write end only while frames wait in the queue. */
static void
proc_flush(struct worker *w)
{
	int	rc;

	if (w->child.to_fd == -1)
		return;
	rc = ipc_peer_flush(&w->peer);
	if (rc == 1 && !w->out_armed) {
		if (loop_mod_fd(w->run->loop, w->child.to_fd, EPOLLOUT) == 0)
			w->out_armed = 1;
	} else if (rc != 1 && w->out_armed) {
		(void)loop_mod_fd(w->run->loop, w->child.to_fd, 0);
		w->out_armed = 0;
	}
	if (rc == -1 && errno != EPIPE)
		log_debug("worker %s: write: %s", w->node->path, w->peer.err);
}

static void
proc_write_cb(int fd, uint32_t events, void *arg)
{
	struct worker	*w = arg;

	/*
	 * The worker closed its end (it exited; its exit event comes from
	 * the spawn server later). EPOLLERR is reported whatever the
	 * events asked, so left in the set the pipe made every
	 * epoll_wait return at once until then: a busy loop.
	 */
	if (events & (EPOLLERR | EPOLLHUP)) {
		loop_del_fd(w->run->loop, fd);
		w->out_armed = 0;
		return;
	}
	proc_flush(w);
}

void
proc_send(struct worker *w, const struct ipc_msg *m)
{
	char	err[IPC_ERR_LEN];

	if (proc_send_answer(w, m, err, sizeof(err)) == -1)
		proc_kill(w, NODE_END_PROTOCOL, err);
}

int
proc_send_answer(struct worker *w, const struct ipc_msg *m, char *err,
    size_t errsz)
{
	char	line[IPC_DESCRIBE_LEN];
	size_t	before;

	if (w->state == PROC_DEAD || w->child.to_fd == -1)
		return 0;
	if (w->run->opts.trace) {
		ipc_msg_describe(m, line, sizeof(line));
		log_info("ipc %s <- %s", w->node->path, line);
	}
	before = ipc_peer_queued(&w->peer);
	if (ipc_peer_queue(&w->peer, m) == 0) {
		proc_flush(w);
		return 0;
	}
	/*
	 * A field or the frame over the protocol's limits is our message's
	 * fault (a queue this short cannot overflow with one frame); over
	 * the queue cap, the worker does not read its channel.
	 */
	if (errno == EINVAL || (errno == EMSGSIZE && before <=
	    IPC_QUEUE_MAX - IPC_HDR_LEN - IPC_FRAME_MAX)) {
		snprintf(err, errsz, "%s", w->peer.err);
		return -1;
	}
	proc_kill(w, NODE_END_PROTOCOL, w->peer.err);
	return 0;
}

/* busy while it waits on us; parked (no --jobs slot) if only on children */
void
proc_update_busy(struct worker *w)
{
	int	parked;

	if (w->state != PROC_READY && w->state != PROC_BUSY)
		return;
	w->state = (w->llm != NULL || w->nspawn > 0) ? PROC_BUSY : PROC_READY;
	parked = w->llm == NULL && w->nspawn > 0;
	if (parked != w->parked) {
		w->parked = parked;
		run_slot_park(w->run, w->node, parked);
	}
}

void
proc_kill(struct worker *w, enum node_end end, const char *reason)
{
	if (w->state == PROC_DEAD)
		return;
	if (w->kill_end == NODE_END_NONE && !w->got_done) {
		w->kill_end = end;
		free(w->kill_reason);
		w->kill_reason = xstrdup(reason ? reason : run_end_name(end));
		log_warnx("agent %s (%s): killing: %s", w->node->path,
		    w->node->profile->name, w->kill_reason);
		run_record_event(w->run, w->node, "killed", NULL,
		    w->kill_reason);
	}
	proc_signal(w, SIGKILL);
	if (w->state != PROC_DRAINING) {
		w->state = PROC_DRAINING;
		proc_arm(w, w->run->opts.limits.grace_ms + PROC_EOF_MS);
	}
}

void
proc_cancel(struct worker *w, const char *reason)
{
	if (w->kill_end == NODE_END_NONE && !w->got_done) {
		w->kill_end = NODE_END_CANCELLED;
		w->kill_reason = xstrdup(reason);
	}
	proc_fire(w, PROC_EV_CANCEL);
}

static void
proc_kill_now(struct worker *w)
{
	proc_kill(w, w->kill_end ? w->kill_end : NODE_END_CANCELLED,
	    w->kill_reason);
}

static void
proc_send_cancel(struct worker *w)
{
	struct ipc_msg	m;

	memset(&m, 0, sizeof(m));
	m.type = IPC_CANCEL;
	m.u.cancel.reason = w->kill_reason ? w->kill_reason : "cancelled";
	proc_send(w, &m);
	w->state = PROC_DRAINING;
	proc_arm(w, w->run->opts.limits.grace_ms);
}

static void
proc_grace_over(struct worker *w)
{
	if (w->got_done && w->kill_end == NODE_END_NONE)
		w->kill_end = NODE_END_COMPLETE;	/* result is in */
	/* proc_kill says why only of a first kill: this one is news too. */
	if (w->kill_end != NODE_END_NONE)
		log_warnx("agent %s (%s): did not exit within the grace "
		    "period of %llu ms: killing", w->node->path,
		    w->node->profile->name,
		    (unsigned long long)w->run->opts.limits.grace_ms);
	proc_kill(w, w->kill_end ? w->kill_end : NODE_END_CANCELLED,
	    "did not exit within the grace period");
}

static void
proc_hello_late(struct worker *w)
{
	char	msg[128];

	snprintf(msg, sizeof(msg), "no hello within %llu ms",
	    (unsigned long long)w->run->opts.limits.hello_ms);
	proc_kill(w, NODE_END_PROTOCOL, msg);
}

static void
proc_deadline(struct worker *w)
{
	char	msg[128];

	snprintf(msg, sizeof(msg), "no result after %llu ms (--agent-timeout)",
	    (unsigned long long)w->run->opts.limits.agent_timeout_ms);
	w->kill_end = NODE_END_TIMEOUT;
	w->kill_reason = xstrdup(msg);
	proc_send_cancel(w);
}

void
proc_out_of_turn(struct worker *w)
{
	char	msg[128];

	snprintf(msg, sizeof(msg), "sent %s while %s",
	    ipc_type_name(w->msg ? w->msg->type : IPC_NONE),
	    proc_state_names[w->state]);
	proc_kill(w, NODE_END_PROTOCOL, msg);
}

/* --- reading the channel and stderr ----------------------------------- */

static void
proc_close_chan(struct worker *w)
{
	if (!w->chan_open)
		return;
	loop_del_fd(w->run->loop, w->child.from_fd);
	w->chan_open = 0;
}

/* Take every whole frame out of the input buffer. */
static void
proc_dispatch_worker(struct worker *w)
{
	struct ipc_msg	m;
	char		line[IPC_DESCRIBE_LEN];
	int		rc;

	while (w->state != PROC_DEAD && w->chan_open) {
		memset(&m, 0, sizeof(m));
		rc = ipc_peer_get(&w->peer, &m);
		if (rc == 0)
			return;
		if (rc == -1) {
			w->msg = NULL;
			proc_kill(w, NODE_END_PROTOCOL, w->peer.err);
			proc_close_chan(w);
			return;
		}
		if (w->run->opts.trace) {
			ipc_msg_describe(&m, line, sizeof(line));
			log_info("ipc %s -> %s", w->node->path, line);
		}
		w->msg = &m;
		proc_fire(w, m.type == IPC_HELLO ? PROC_EV_HELLO :
		    PROC_EV_MESSAGE);
		w->msg = NULL;
		ipc_msg_free(&m);
	}
}

static void
proc_read(int fd, uint32_t events, void *arg)
{
	struct worker	*w = arg;
	ssize_t		 n;

	(void)fd;
	(void)events;
	for (;;) {
		n = ipc_peer_fill(&w->peer);
		if (n > 0) {
			proc_dispatch_worker(w);
			/* A short read emptied the pipe: epoll says when
			   there is more, no read needed to hear EAGAIN. */
			if (!w->chan_open || w->peer.drained)
				return;
			continue;
		}
		if (n == -1 && (errno == EAGAIN || errno == EINTR))
			return;
		/* EOF or error: the exit (or the timer) says the rest. */
		proc_dispatch_worker(w);
		proc_close_chan(w);
		if (w->state != PROC_DRAINING && w->state != PROC_DEAD) {
			w->state = PROC_DRAINING;
			proc_arm(w, PROC_EOF_MS);
		}
		return;
	}
}

/* Worker stderr: bounded, escaped by the log, line by line. */
static void
proc_err_line(struct worker *w)
{
	w->errline[w->errlen] = '\0';
	if (w->errlen > 0) {
		strlcpy(w->errlast, w->errline, sizeof(w->errlast));
		if (w->errtotal < PROC_ERRMAX)
			log_warnx("agent %s stderr: %s", w->node->path,
			    w->errline);
	}
	w->errtotal += w->errlen;
	w->errlen = 0;
}

static void
proc_err_read(int fd, uint32_t events, void *arg)
{
	struct worker	*w = arg;
	char		 buf[4096];
	ssize_t		 n, i;

	(void)events;
	for (;;) {
		n = read(fd, buf, sizeof(buf));
		if (n == -1 && errno == EINTR)
			continue;
		if (n <= 0) {
			if (n == 0 || errno != EAGAIN) {
				proc_err_line(w);
				loop_del_fd(w->run->loop, fd);
			}
			return;
		}
		for (i = 0; i < n; i++) {
			if (buf[i] == '\n' || w->errlen == sizeof(w->errline) - 1)
				proc_err_line(w);
			if (buf[i] != '\n')
				w->errline[w->errlen++] = buf[i];
		}
	}
}

/* --- start, exit, reap ------------------------------------------------ */

/* The worker's process exists: its channel into the loop, the hello due. */
static void
proc_attach(struct worker *w)
{
	struct run	*r = w->run;
	struct node	*n = w->node;

	ipc_peer_init(&w->peer, w->child.from_fd, w->child.to_fd,
	    IPC_SIDE_SUPERVISOR);
	if (loop_add_fd(r->loop, w->child.from_fd, EPOLLIN, proc_read, w) == -1 ||
	    loop_add_fd(r->loop, w->child.to_fd, 0, proc_write_cb, w) == -1 ||
	    loop_add_fd(r->loop, w->child.err_fd, EPOLLIN, proc_err_read,
	    w) == -1)
		fatal("epoll_ctl");
	w->chan_open = 1;
	LIST_INSERT_HEAD(&r->live, w, live_entry);
	w->on_live = 1;
	ui_spawned(n, w->child.pid);
	if (r->store != NULL && n->store_agent > 0 &&
	    store_agent_started(r->store, n->store_agent, w->child.pid) == -1)
		run_store_warn(r, "agent %s started", n->path);
	if (w->state == PROC_FORKING) {
		w->state = PROC_SPAWNING;
		proc_arm(w, r->opts.limits.hello_ms);
	} else
		proc_signal(w, SIGKILL);	/* killed while forking */
}

/* The spawn server could not start it: the node ends here. */
static void
proc_start_failed(struct worker *w, const char *err)
{
	struct run	*r = w->run;
	struct node	*n = w->node;

	free(n->error);
	if (w->kill_end != NODE_END_NONE) {
		n->end = w->kill_end;
		n->error = xstrdup(w->kill_reason ? w->kill_reason :
		    run_end_name(w->kill_end));
	} else {
		n->end = NODE_END_SPAWN;
		n->error = xstrdup(err);
		log_warnx("agent %s (%s): cannot start: %s", n->path,
		    n->profile->name, err);
	}
	w->state = PROC_DEAD;
	proc_arm(w, 0);
	mcp_worker_stop(w);
	run_worker_gone(r, n);
	if (n->state != NODE_DONE)
		run_node_done(r, n);
}

void
proc_spawned(struct worker *w, const struct spawn_child *c, const char *err)
{
	w->spawn_id = 0;
	if (c == NULL) {
		proc_start_failed(w, err);
		return;
	}
	w->child = *c;
	proc_attach(w);
}

int
proc_can_start(const struct run *r)
{
	return r->spawnd == NULL || !spawnd_client_full(r->spawnd);
}

/*
 * Start n's worker. Through the spawn server the request is only sent:
 * the loop goes on, proc_spawned() follows with the worker (or the
 * reason it failed).
 */
int
proc_start(struct run *r, struct node *n)
{
	struct spawn_req	 req;
	struct worker		*w;
	char			**argv, err[512];
	int			 rc;

	w = xcalloc(1, sizeof(*w));
	w->run = r;
	w->node = n;
	w->child.to_fd = w->child.from_fd = w->child.err_fd = -1;
	if ((w->policy = proc_policy(r, n, err, sizeof(err))) == NULL)
		goto fail;
	argv = proc_argv(w);
	memset(&req, 0, sizeof(req));
	req.bin = r->opts.worker_bin;
	req.argv = argv;
	req.envp = r->worker_env;
	req.policy = w->policy;
	if (r->spawnd != NULL) {
		w->spawn_id = spawnd_client_request(r->spawnd, &req, w, err,
		    sizeof(err));
		rc = w->spawn_id != 0 ? 0 : -1;
	} else
		rc = spawn_worker(&req, &w->child, err, sizeof(err));
	proc_argv_free(argv);
	if (rc == -1)
		goto fail;
	w->state = PROC_FORKING;
	n->worker = w;
	r->nlive++;
	(void)mcp_worker_start(w);
	run_disk_watch(r);
	if (w->spawn_id == 0)
		proc_attach(w);
	return 0;
fail:
	free(n->error);
	n->error = xstrdup(err);
	n->end = NODE_END_SPAWN;
	log_warnx("agent %s (%s): cannot start: %s", n->path,
	    n->profile->name, err);
	free(w);
	return -1;
}

/* The true reason a worker is gone, from its wait status. */
static void
proc_exit_reason(struct worker *w, const siginfo_t *si)
{
	struct node	*n = w->node;
	char		 msg[PROC_ERRLINE + 128];
	int		 sig = si->si_status;

	if (w->got_done)
		return;
	if (w->kill_end != NODE_END_NONE) {
		n->end = w->kill_end;
		snprintf(msg, sizeof(msg), "%s", w->kill_reason);
	} else if (si->si_code == SPAWN_CLD_OOM) {
		n->end = NODE_END_KILLED;
		snprintf(msg, sizeof(msg), "killed by the memory limit (%llu "
		    "MiB): its memory group's OOM killer ended it",
		    (unsigned long long)(w->policy->limits.mem_bytes >> 20));
	} else if (si->si_code == CLD_KILLED || si->si_code == CLD_DUMPED) {
		if (sig == SIGXCPU) {
			n->end = NODE_END_KILLED;
			snprintf(msg, sizeof(msg), "killed by the CPU limit "
			    "(SIGXCPU)");
		} else if (sig == SIGXFSZ) {
			n->end = NODE_END_KILLED;
			snprintf(msg, sizeof(msg), "killed by the file size "
			    "limit (SIGXFSZ)");
		} else {
			n->end = NODE_END_CRASHED;
			snprintf(msg, sizeof(msg), "killed by signal "
			    "%d (SIG%s)%s", sig, sigabbrev_np(sig) ?
			    sigabbrev_np(sig) : "?", sig == SIGKILL ?
			    ", from outside or out of memory" : "");
		}
	} else if (si->si_status == WARREN_EXIT_WORKER_CPU) {
		/* The worker is pid 1: it exits on SIGXCPU (worker/main.c). */
		n->end = NODE_END_KILLED;
		snprintf(msg, sizeof(msg), "killed by the CPU limit "
		    "(SIGXCPU)");
	} else if (strstr(w->errlast, "Cannot allocate memory") != NULL) {
		n->end = NODE_END_KILLED;
		snprintf(msg, sizeof(msg), "killed by the memory limit: %s",
		    w->errlast);
	} else {
		n->end = NODE_END_CRASHED;
		snprintf(msg, sizeof(msg), "exited with status %d "
		    "without a result%s%s", si->si_status,
		    w->errlast[0] ? ": " : "", w->errlast);
	}
	free(n->error);
	n->error = xstrdup(msg);
}

static void
proc_live_remove(struct worker *w)
{
	if (w->on_live) {
		LIST_REMOVE(w, live_entry);
		w->on_live = 0;
	}
}

static void
proc_on_exit(struct worker *w)
{
	struct run	*r = w->run;
	struct node	*n = w->node;
	struct proc_llm	*pl;

	w->state = PROC_DEAD;
	proc_live_remove(w);
	proc_arm(w, 0);
	mcp_worker_stop(w);
	proc_close_chan(w);
	loop_del_fd(r->loop, w->child.to_fd);
	loop_del_fd(r->loop, w->child.err_fd);
	/*
	 * Reaped, its last frames and stderr read (proc_exited): give back
	 * its fds, buffers and sandbox now, not when the run ends. A run
	 * keeps every node, and 1,000 finished workers held 3,000 fds (over
	 * an ordinary user's 1,024) and 47 MB.
	 */
	spawn_release(&w->child);
	ipc_peer_free(&w->peer);
	for (pl = w->llm; pl != NULL; pl = pl->next) {
		pl->w = NULL;
		broker_cancel(r, pl->handle);
	}
	w->llm = NULL;
	if (w->parked)
		run_slot_park(r, n, 0);
	w->parked = 0;
	run_worker_gone(r, n);
	if (n->state != NODE_DONE)
		run_node_done(r, n);
}

/* Handle one exited worker: drain its last frames, then the exit event. */
static void
proc_exited(struct worker *w, const siginfo_t *si)
{
	if (w->chan_open)
		proc_read(w->child.from_fd, EPOLLIN, w);
	if (w->child.err_fd != -1)
		proc_err_read(w->child.err_fd, EPOLLIN, w);
	proc_exit_reason(w, si);
	proc_fire(w, PROC_EV_EXIT);
}

/* Among the live workers only: a run may hold thousands of finished ones. */
static struct worker *
proc_find(struct run *r, pid_t pid)
{
	struct worker	*w;

	LIST_FOREACH(w, &r->live, live_entry)
		if (w->child.pid == pid && w->state != PROC_DEAD)
			return w;
	return NULL;
}

void
proc_reap(struct run *r)
{
	struct worker	*w;
	siginfo_t	 si, si2;

	for (;;) {
		memset(&si, 0, sizeof(si));
		if (waitid(P_ALL, 0, &si, WEXITED | WNOHANG | WNOWAIT) == -1 ||
		    si.si_pid == 0)
			return;
		if ((w = proc_find(r, si.si_pid)) != NULL) {
			/* The zombie holds the group: kill what it left. */
			spawn_kill(&w->child, SIGKILL);
		}
		memset(&si2, 0, sizeof(si2));
		if (waitid(P_PID, (id_t)si.si_pid, &si2, WEXITED) == -1)
			continue;
		if (w != NULL && spawn_oom_killed(&w->child))
			si2.si_code = SPAWN_CLD_OOM;	/* as the server says */
		if (w != NULL)
			proc_exited(w, &si2);
	}
}

void
proc_exit_pid(struct run *r, pid_t pid, int code, int status)
{
	struct worker	*w;
	siginfo_t	 si;

	if ((w = proc_find(r, pid)) == NULL)
		return;
	memset(&si, 0, sizeof(si));
	si.si_pid = pid;
	si.si_code = code;
	si.si_status = status;
	proc_exited(w, &si);
}

void
proc_server_gone(struct run *r)
{
	struct worker	*w;
	size_t		 i;

	while ((w = spawnd_client_orphan(r->spawnd)) != NULL)
		if (!mcp_spawned(r, w, NULL, "the spawn server died"))
			proc_spawned(w, NULL, "the spawn server died");

	for (i = 0; i < r->nnodes; i++) {
		w = r->nodes[i]->worker;
		if (w == NULL || w->state == PROC_DEAD || !w->child.remote)
			continue;
		if (w->kill_end == NODE_END_NONE && !w->got_done) {
			w->kill_end = NODE_END_CRASHED;
			w->kill_reason = xstrdup("the spawn server died");
		}
		proc_exit_pid(r, w->child.pid, CLD_KILLED, SIGKILL);
	}
}

void
proc_killall(struct run *r)
{
	size_t	i;

	for (i = 0; i < r->nnodes; i++) {
		if (r->nodes[i]->worker != NULL &&
		    r->nodes[i]->worker->state != PROC_DEAD)
			proc_kill(r->nodes[i]->worker, NODE_END_CANCELLED,
			    "the run was cancelled");
	}
}

void
proc_free(struct worker *w)
{
	if (w == NULL)
		return;
	if (w->spawn_id != 0)
		spawnd_client_forget(w->run->spawnd, w->spawn_id);
	if (w->state != PROC_DEAD) {
		proc_signal(w, SIGKILL);
		if (!w->child.remote && w->child.pid > 0)
			(void)waitpid(w->child.pid, NULL, 0);
	}
	proc_live_remove(w);
	mcp_worker_stop(w);
	loop_timer_del(w->run->loop, w->timer);
	ipc_peer_free(&w->peer);
	spawn_release(&w->child);
	free(w->kill_reason);
	free(w);
}

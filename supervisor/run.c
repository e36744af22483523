/*
 * One run: the agent tree, the --jobs scheduler, delegation, the end of an
 * agent and of the run, cancellation and the memory written as it goes.
 *
 * Only the supervisor forks. A delegation (from the orchestrator or from a
 * worker's spawn request) is checked against the limits, becomes a queued
 * node, and is started when a worker slot is free; its end answers the
 * parent with the result or a clear error.
 */
#include <sys/epoll.h>
#include <sys/prctl.h>
#include <sys/resource.h>

#include <errno.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "agent/agent.h"
#include "agent/profile.h"
#include "common/clock.h"
#include "common/exitcode.h"
#include "common/log.h"
#include "common/str.h"
#include "common/xmalloc.h"
#include "llm/llm.h"
#include "sandbox/sandbox.h"
#include "spawnd/spawn.h"
#include "store/store.h"
#include "supervisor/loop.h"
#include "supervisor/run.h"
#include "supervisor/spawnd_client.h"

#define RUN_INHERIT_RESULT_MAX	4000	/* chars of one inherited result */
#define RUN_INHERIT_MAX		32	/* inherited messages */
#define RUN_EVENT_MAX		4096	/* chars of an event's detail stored */
#define RUN_FLUSH_MS		200	/* store batch commit period */
#define RUN_STORE_STOP		"the run stopped: its database cannot be written"
#define RUN_SPAWND_STOP		"the run stopped: the spawn server died, no " \
				"agent can start"

static const char *const run_end_names[] = {
	[NODE_END_NONE] = "running",
	[NODE_END_COMPLETE] = "complete",
	[NODE_END_FAIL] = "failed",
	[NODE_END_LIMIT] = "limit",
	[NODE_END_CRASHED] = "crashed",
	[NODE_END_KILLED] = "killed",
	[NODE_END_TIMEOUT] = "timeout",
	[NODE_END_PROTOCOL] = "protocol",
	[NODE_END_CANCELLED] = "cancelled",
	[NODE_END_SPAWN] = "spawn_failed",
	[NODE_END_QUOTA] = "store_quota",
	[NODE_END_AUTO_COMPLETE] = "auto_complete",
};

const char *
run_end_name(enum node_end e)
{
	if ((size_t)e >= sizeof(run_end_names) / sizeof(run_end_names[0]))
		return "unknown";
	return run_end_names[e];
}

int
run_end_ok(enum node_end e)
{
	return e == NODE_END_COMPLETE || e == NODE_END_AUTO_COMPLETE;
}

static struct node *
run_node_add(struct run *r, struct node *parent, const struct profile *p,
    const char *task, int inherit)
{
	struct node	*n;

	if (r->nnodes == r->nodecap) {
		r->nodecap = r->nodecap ? r->nodecap * 2 : 16;
		r->nodes = xreallocarray(r->nodes, r->nodecap,
		    sizeof(*r->nodes));
	}
	n = xcalloc(1, sizeof(*n));
	n->run = r;
	n->parent = parent;
	n->profile = p;
	n->task = xstrdup(task);
	n->inherit = inherit;
	if (parent == NULL)
		strlcpy(n->path, "0", sizeof(n->path));
	else {
		n->depth = parent->depth + 1;
		if (snprintf(n->path, sizeof(n->path), "%s.%u", parent->path,
		    ++parent->nchildren) >= (int)sizeof(n->path))
			fatalx("agent path of a child of %s too long",
			    parent->path);	/* run_delegate checked */
		if (parent->kids_tail != NULL)
			parent->kids_tail->next_kid = n;
		else
			parent->kids = n;
		parent->kids_tail = n;
	}
	r->nodes[r->nnodes++] = n;
	return n;
}

static void
run_store_agent(struct run *r, struct node *n, const char *call_id,
    const int64_t *mem_parents, size_t nmem_parents)
{
	struct store_agent_new	a;
	char			filter[PROFILE_MAX_TOOLS * 16];
	size_t			i, len;

	if (r->store == NULL)
		return;
	memset(&a, 0, sizeof(a));
	/* Kept so a resumed agent gets its narrower sandbox again. */
	if (n->narrowed != NULL) {
		filter[0] = '\0';
		for (i = 0; i < n->narrowed->ntools; i++) {
			len = strlen(filter);
			snprintf(filter + len, sizeof(filter) - len, "%s%s",
			    i ? "," : "", n->narrowed->tools[i]);
		}
		a.tool_filter = filter;
	}
	a.path = n->path;
	a.profile = n->profile->name;
	a.task = n->task;
	a.call_id = call_id;
	a.inherit_context = n->inherit;
	a.parent_nodes = mem_parents;
	a.nparent_nodes = nmem_parents;
	if (store_agent_add(r->store, r->run_id, &a, &n->store_agent,
	    &n->store_node) == -1) {
		run_store_warn(r, "agent %s", n->path);
		return;
	}
	/* Delegated after a parallel batch with inherit_context: the batch's
	 * merge node is an ancestor too, so its memory is in the context. */
	if (n->inherit && n->parent != NULL && n->parent->merge_node > 0 &&
	    nmem_parents == 0 && store_edge_add(r->store,
	    n->parent->merge_node, n->store_node) == -1)
		run_store_warn(r, "edge to %s", n->path);
}

void
run_record_event(struct run *r, const struct node *n, const char *kind,
    const char *tool, const char *text)
{
	char	detail[RUN_EVENT_MAX];

	if (r->store == NULL)
		return;
	snprintf(detail, sizeof(detail), "%s%s%s", tool ? tool : "",
	    tool ? ": " : "", text ? text : "");
	if (store_event(r->store, r->run_id, n ? n->path : NULL, kind,
	    detail) == -1)
		run_store_warn(r, "event");
}

void
run_store_warn(struct run *r, const char *fmt, ...)
{
	char	what[256];
	va_list	ap;

	if (store_lost(r->store) != NULL)
		return;		/* run_store_check says it, once */
	va_start(ap, fmt);
	vsnprintf(what, sizeof(what), fmt, ap);
	va_end(ap);
	log_warnx("store: %s%s%s", what, *what ? ": " : "",
	    store_errmsg(r->store));
}

/*
 * A write was lost: nothing the run does from now on can be recorded, and
 * what it did since the last commit is gone. Stop it (exit 6) rather than
 * spend tokens on work that `warren resume` would redo anyway.
 */
static void
run_store_check(struct run *r)
{
	const char	*lost;

	if (r->store == NULL || r->store_failed ||
	    (lost = store_lost(r->store)) == NULL)
		return;
	r->store_failed = 1;
	log_warnx("store: %s", lost);
	log_warnx("run %lld: stopping every agent: the database cannot be"
	    " written", (long long)r->run_id);
	if (!r->finished)
		run_cancel(r, 0);
}

size_t
run_event_bytes(const char *kind, const char *tool, const char *text)
{
	size_t	n;

	n = (tool ? strlen(tool) + 2 : 0) + (text ? strlen(text) : 0);
	if (n > RUN_EVENT_MAX - 1)
		n = RUN_EVENT_MAX - 1;	/* the rest is cut (run_record_event) */
	return strlen(kind) + n;
}

void
run_store_msg(struct run *r, struct node *n, const struct msg *m)
{
	const struct msg_usage	*u = NULL;

	if (r->store == NULL || n->store_node <= 0)
		return;
	if (m->role == MSG_ASSISTANT && (n->usage_unsaved.input > 0 ||
	    n->usage_unsaved.output > 0))
		u = &n->usage_unsaved;
	if (store_msg_append(r->store, n->store_node, m, u) == -1)
		run_store_warn(r, "run %lld", (long long)r->run_id);
	else if (u != NULL)
		memset(&n->usage_unsaved, 0, sizeof(n->usage_unsaved));
}

int
run_delegate(struct run *r, struct node *parent, const char *profile,
    const char *task, int inherit, const char *call_id, node_done_fn cb,
    void *arg, struct node **childp, const char **code, char *msg,
    size_t msgsz)
{
	struct run_deleg	d;

	memset(&d, 0, sizeof(d));
	d.profile = profile;
	d.task = task;
	d.inherit = inherit;
	d.call_id = call_id;
	return run_delegate_as(r, parent, &d, cb, arg, childp, code, msg,
	    msgsz);
}

/* The profile a delegation asks for, narrowed by its tool_filter (owned by
 * the node then, *narrowed); NULL with msg for the model. */
static const struct profile *
run_deleg_profile(struct run *r, const struct run_deleg *d,
    struct profile **narrowed, char *msg, size_t msgsz)
{
	const struct profile	*p;
	const char		*name = d->profile;

	*narrowed = NULL;
	if (name == NULL || *name == '\0')
		name = "general";
	if ((p = profile_set_find(r->profiles, name)) == NULL ||
	    strcmp(p->name, "orchestrator") == 0) {
		snprintf(msg, msgsz, "unknown profile \"%s\": use explore, "
		    "plan, review, test or general", name);
		return NULL;
	}
	if (!d->filtered)
		return p;
	return *narrowed = profile_narrow(p, d->tools, d->ntools, msg, msgsz);
}

int
run_delegate_as(struct run *r, struct node *parent, const struct run_deleg *d,
    node_done_fn cb, void *arg, struct node **childp, const char **code,
    char *msg, size_t msgsz)
{
	const struct profile	*p;
	struct profile		*narrowed;
	struct node		*n;

	if ((*code = limits_check_delegate(r, parent, msg, msgsz)) != NULL)
		goto refused;
	if ((p = run_deleg_profile(r, d, &narrowed, msg, msgsz)) == NULL) {
		*code = IPC_ERR_REFUSED;
		goto refused;
	}
	if (strlen(parent->path) + 12 >= IPC_PATH_MAX) {
		profile_free(narrowed);
		snprintf(msg, msgsz, "agent path too long: finish the work "
		    "yourself");
		*code = IPC_ERR_MAX_DEPTH;
		goto refused;
	}
	n = run_node_add(r, parent, p, d->task ? d->task : "", d->inherit);
	n->narrowed = narrowed;
	n->done_cb = cb;
	n->done_arg = arg;
	r->nagents++;
	/* A worker's spawns of one turn arrive one by one: batch them until
	 * its next LLM turn (the orchestrator knows its turns itself). */
	if (parent != r->root || r->root_worker) {
		parent->batch = xreallocarray(parent->batch,
		    parent->nbatch + 1, sizeof(*parent->batch));
		parent->batch[parent->nbatch++] = n;
	}
	run_store_agent(r, n, d->call_id, d->mem_parents, d->nmem_parents);
	run_enqueue(r, n);
	if (childp != NULL)
		*childp = n;
	return 0;
refused:
	ui_refused(parent, d->profile, msg);
	run_record_event(r, parent, "refused", d->profile, msg);
	return -1;
}

/*
 * The orchestrator profile runs in the supervisor: it runs no tool, only
 * delegates. Any other root runs in a sandboxed worker like a subagent,
 * path "0" and depth 0, so a subagent it delegates is 0.1 at depth 1 as
 * under the orchestrator, and --max-depth means the same either way.
 */
int
run_root_start(struct run *r, const struct msg_list *resume, char *err,
    size_t errsz)
{
	struct node	*n = r->root;

	if (!r->root_worker)
		return orch_start(r, resume, err, errsz);
	if (resume != NULL && resume->n > 0) {
		n->resume = xcalloc(1, sizeof(*n->resume));
		msg_list_init(n->resume);
		if (msg_list_copy(n->resume, resume) == -1)
			fatal("msg_list_copy");
	}
	run_enqueue(r, n);
	return 0;
}

void
run_enqueue(struct run *r, struct node *n)
{
	n->state = NODE_QUEUED;
	n->qnext = NULL;
	if (r->qtail != NULL)
		r->qtail->qnext = n;
	else
		r->qhead = n;
	r->qtail = n;
	ui_queued(n);
}

/* An agent of an interrupted run, under its stored path and rows. */
struct node *
run_node_restore(struct run *r, struct node *parent, const struct profile *p,
    const char *path, const char *task, int inherit)
{
	struct node	*n;
	unsigned	 keep = parent->nchildren;

	n = run_node_add(r, parent, p, task, inherit);
	parent->nchildren = keep;
	strlcpy(n->path, path, sizeof(n->path));
	n->state = NODE_QUEUED;		/* waiting: not in the queue yet */
	return n;
}

void
run_schedule(struct run *r)
{
	struct node	*n;

	while (r->qhead != NULL && (limits_slot_free(r) || r->cancelling)) {
		if (!r->cancelling && !proc_can_start(r))
			break;	/* the spawn server's answers come first */
		n = r->qhead;
		r->qhead = n->qnext;
		if (r->qhead == NULL)
			r->qtail = NULL;
		n->qnext = NULL;
		n->started_ms = clock_mono_ms();
		if (r->cancelling) {
			n->end = NODE_END_CANCELLED;
			n->error = xstrdup("the run was cancelled before it "
			    "started");
			run_node_done(r, n);
			continue;
		}
		n->state = NODE_RUNNING;
		if (proc_start(r, n) == -1) {
			run_node_done(r, n);
			continue;
		}
		r->nactive++;
	}
}

/*
 * The two counters below 0 are a bug in the bookkeeping, never something
 * a worker can cause (w->parked keeps a worker from parking twice). They
 * fail loudly, in release builds too: clamped at 0 they went wrong
 * silently, a lost slot letting --jobs start one agent too many, a lost
 * worker ending the run before its last exit.
 */
void
run_slot_park(struct run *r, struct node *n, int parked)
{
	if (!parked)
		r->nactive++;
	else if (r->nactive == 0)
		WARREN_BUG("agent %s parks with no --jobs slot taken", n->path);
	else
		r->nactive--;
}

void
run_worker_gone(struct run *r, struct node *n)
{
	if (r->nlive == 0 || r->nactive == 0)
		WARREN_BUG("agent %s gone with %u workers alive and %u slots "
		    "taken", n->path, r->nlive, r->nactive);
	r->nlive--;
	r->nactive--;
}

/* Remove a queued node from the queue. */
static void
run_unqueue(struct run *r, struct node *n)
{
	struct node	**pp;

	for (pp = &r->qhead; *pp != NULL; pp = &(*pp)->qnext) {
		if (*pp == n) {
			*pp = n->qnext;
			break;
		}
	}
	r->qtail = NULL;
	for (pp = &r->qhead; *pp != NULL; pp = &(*pp)->qnext)
		r->qtail = *pp;
	n->qnext = NULL;
}

/* A finished node's unfinished children are of no use to anyone. */
static void
run_cancel_children(struct run *r, struct node *n, const char *why)
{
	struct node	*c;

	for (c = n->kids; c != NULL; c = c->next_kid) {
		if (c->state == NODE_DONE)
			continue;
		if (c->state == NODE_QUEUED) {
			run_unqueue(r, c);
			c->end = NODE_END_CANCELLED;
			c->error = xstrdup(why);
			run_node_done(r, c);
		} else if (c->worker != NULL)
			proc_cancel(c->worker, why);
	}
}

static void
run_store_done(struct run *r, struct node *n)
{
	enum store_agent_status	 st;
	const char		*text;

	if (r->store == NULL || n->store_agent <= 0)
		return;
	switch (n->end) {
	case NODE_END_COMPLETE:
	case NODE_END_AUTO_COMPLETE:
		st = STORE_AGENT_DONE;
		break;
	case NODE_END_CANCELLED:
		st = STORE_AGENT_CANCELLED;
		break;
	case NODE_END_NONE:
	case NODE_END_FAIL:
	case NODE_END_LIMIT:
	case NODE_END_CRASHED:
	case NODE_END_KILLED:
	case NODE_END_TIMEOUT:
	case NODE_END_PROTOCOL:
	case NODE_END_SPAWN:
	case NODE_END_QUOTA:
	default:
		st = STORE_AGENT_FAILED;
		break;
	}
	text = run_end_ok(n->end) ? n->result : n->error;
	if (n->end == NODE_END_AUTO_COMPLETE)
		run_record_event(r, n, "auto_complete", NULL, n->error);
	if (store_agent_set_status(r->store, n->store_agent, st, text,
	    run_end_name(n->end)) == -1)
		run_store_warn(r, "run %lld", (long long)r->run_id);
	/* Committed with its summary by run_summary_start, which follows. */
}

void
run_node_done(struct run *r, struct node *n)
{
	if (n->state == NODE_DONE)
		return;
	n->state = NODE_DONE;
	n->ended_ms = clock_mono_ms();
	if (n->started_ms == 0)
		n->started_ms = n->ended_ms;
	if (n->end == NODE_END_NONE) {
		n->end = NODE_END_CRASHED;
		n->error = xstrdup("ended without a result");
	}
	ui_done(n);
	run_store_done(r, n);
	run_cancel_children(r, n, "its parent finished");
	/* The summary is part of finishing: the parent hears after it. */
	if (run_summary_start(r, n) == 1)
		return;
	run_node_tell(r, n);
}

static void
run_node_tell_now(struct run *r, struct node *n)
{
	node_done_fn	cb = n->done_cb;

	n->done_cb = NULL;
	if (cb != NULL)
		cb(r, n, n->done_arg);
	if (n == r->root) {
		r->finished = 1;
		run_cancel(r, 0);
	}
}

/*
 * The parent hears of an ended node only once its rows (messages, status,
 * summary) are committed: its next LLM request never goes out while the
 * child's end could still be lost, so a resume never runs a finished
 * child again (docs/supervisor.md). The loop does not wait: the tell is
 * held, in order, until the writer's commit passes its mark.
 */
void
run_node_tell(struct run *r, struct node *n)
{
	/* The root has no parent: the run's end waits for its commit
	 * (store_run_finish). */
	if (r->store != NULL && (n != r->root || r->tell_head != NULL)) {
		n->tell_mark = store_commit_mark(r->store);
		if (r->tell_head != NULL ||
		    !store_committed(r->store, n->tell_mark)) {
			n->tell_next = NULL;
			if (r->tell_tail != NULL)
				r->tell_tail->tell_next = n;
			else
				r->tell_head = n;
			r->tell_tail = n;
			return;
		}
	}
	run_node_tell_now(r, n);
}

/* Tell what the writer has committed since. */
void
run_tell_ready(struct run *r)
{
	struct node	*n;

	while ((n = r->tell_head) != NULL &&
	    store_committed(r->store, n->tell_mark)) {
		if ((r->tell_head = n->tell_next) == NULL)
			r->tell_tail = NULL;
		n->tell_next = NULL;
		run_node_tell_now(r, n);
	}
}

char *
run_node_answer(const struct node *n, int *is_error)
{
	char		*s;
	const char	*what;

	*is_error = !run_end_ok(n->end);
	if (!*is_error)
		return xstrdup(n->result ? n->result : "");
	switch (n->end) {
	case NODE_END_FAIL:
		what = "failed";
		break;
	case NODE_END_LIMIT:
		what = "stopped by its own limits";
		break;
	case NODE_END_CRASHED:
		what = "crashed";
		break;
	case NODE_END_KILLED:
		what = "was killed by a limit";
		break;
	case NODE_END_TIMEOUT:
		what = "timed out";
		break;
	case NODE_END_PROTOCOL:
		what = "was killed for a protocol violation";
		break;
	case NODE_END_CANCELLED:
		what = "was cancelled";
		break;
	case NODE_END_SPAWN:
		what = "could not be started";
		break;
	case NODE_END_QUOTA:
		what = "was stopped by its store quota";
		break;
	case NODE_END_NONE:
	case NODE_END_COMPLETE:
	case NODE_END_AUTO_COMPLETE:
	default:
		what = "ended";
		break;
	}
	xasprintf(&s, "subagent %s (%s) %s: %s%s%s", n->path,
	    n->profile->name, what, n->error ? n->error : "no reason given",
	    n->result && *n->result ? "; partial result: " : "",
	    n->result ? n->result : "");
	return s;
}

static void
run_inherit_add(struct msg_list *out, const char *fmt, const char *path,
    const char *profile, const char *text)
{
	char	*s, *cut = NULL;

	if (out->n >= RUN_INHERIT_MAX)
		return;
	if (strlen(text) > RUN_INHERIT_RESULT_MAX)
		text = cut = str_ndup(text, RUN_INHERIT_RESULT_MAX);
	xasprintf(&s, fmt, path, profile, text);
	if (msg_list_add_text(out, MSG_USER, s) == -1)
		fatal("msg_list_add_text");
	free(s);
	free(cut);
}

/*
 * A child delegated with inherit_context starts from its memory graph:
 * store_context() of its node. Without a store: its ancestors' tasks (root
 * first) and the results of every finished subagent of those ancestors.
 */
void
run_inherited(struct run *r, const struct node *n, struct msg_list *out)
{
	const struct node	*chain[IPC_PATH_MAX];
	const struct node	*a, *c;
	size_t			 nchain = 0;

	/* The memory graph: ancestors' summaries in order, and the
	 * parent's conversation while it has none (docs/memory.md). */
	if (r->store != NULL && n->store_node > 0) {
		if (store_context(r->store, n->store_node,
		    STORE_CTX_PARENT_MESSAGES | STORE_CTX_ANCESTORS, out) == 0)
			return;
		run_store_warn(r, "context of %s", n->path);
		msg_list_free(out);
		msg_list_init(out);
	}
	for (a = n->parent; a != NULL && nchain < IPC_PATH_MAX; a = a->parent)
		chain[nchain++] = a;
	while (nchain-- > 0) {
		a = chain[nchain];
		run_inherit_add(out, "Context from ancestor agent %s (%s), "
		    "whose task is: %s", a->path, a->profile->name, a->task);
		for (c = a->kids; c != NULL; c = c->next_kid) {
			if (c == n || c->state != NODE_DONE ||
			    !run_end_ok(c->end))
				continue;
			run_inherit_add(out, "Finished subagent %s (%s) "
			    "reported: %s", c->path, c->profile->name,
			    c->result ? c->result : "");
		}
	}
}

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
	proc_exit_pid(arg, pid, code, status);
}

static void
run_spawnd_spawned(void *cookie, const struct spawn_child *c, const char *err,
    void *arg)
{
	(void)arg;
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

#define RUN_DESC_MAX	300	/* bytes of a profile's description listed */

/* A description cut to RUN_DESC_MAX, not inside a UTF-8 sequence. */
static char *
run_desc(const char *s)
{
	size_t	len = s != NULL ? strlen(s) : 0;

	if (len > RUN_DESC_MAX) {
		len = RUN_DESC_MAX;
		while (len > 0 && ((unsigned char)s[len] & 0xC0) == 0x80)
			len--;
	}
	return str_ndup(s != NULL ? s : "", len);
}

/* What the delegate schema lists: every profile but the orchestrator. */
static void
run_delegates(struct run *r)
{
	const struct profile	*p;
	size_t			 i, n = 0;

	r->delegates = xcalloc(r->profiles->n + 1, sizeof(*r->delegates));
	r->dnames = xcalloc(r->profiles->n + 1, sizeof(*r->dnames));
	r->ddescs = xcalloc(r->profiles->n + 1, sizeof(*r->ddescs));
	for (i = 0; i < r->profiles->n && n < IPC_TOOLS_MAX; i++) {
		p = r->profiles->v[i];
		if (strcmp(p->name, "orchestrator") == 0)
			continue;
		r->dnames[n] = p->name;
		r->ddescs[n] = run_desc(p->description);
		r->delegates[n].name = r->dnames[n];
		r->delegates[n].description = r->ddescs[n];
		n++;
	}
	r->ndelegates = n;
}

struct run *
run_new(const struct run_opts *o, struct llm_engine *llm,
    struct profile_set *profiles, char *err, size_t errsz)
{
	const struct profile	*rootp;
	struct run		*r;

	if ((rootp = profile_set_find(profiles, o->profile ? o->profile :
	    "orchestrator")) == NULL) {
		snprintf(err, errsz, "unknown profile \"%s\"; 'warren "
		    "profiles' lists them", o->profile);
		return NULL;
	}
	r = xcalloc(1, sizeof(*r));
	r->disk_fd = -1;
	LIST_INIT(&r->live);
	r->opts = *o;
	r->llm = llm;
	r->profiles = profiles;
	r->caps = xcalloc(1, sizeof(*r->caps));
	if (sandbox_caps_probe(r->caps, 0) == -1)
		log_warnx("sandbox: probing this machine failed; every "
		    "layer counts as missing");
	if ((r->loop = loop_new()) == NULL) {
		snprintf(err, errsz, "epoll: %s", strerror(errno));
		free(r->caps);
		free(r);
		return NULL;
	}
	r->worker_env = spawn_env();
	run_delegates(r);
	r->root = run_node_add(r, NULL, rootp, o->task, o->root_inherit);
	r->root_worker = strcmp(rootp->name, "orchestrator") != 0;
	return r;
}

void
run_set_store(struct run *r, struct store *st, int64_t run_id)
{
	r->store = st;
	r->run_id = run_id;
	if (r->root->store_agent == 0)
		run_store_agent(r, r->root, NULL, NULL, 0);
	if (r->root->store_agent > 0 && store_agent_started(st,
	    r->root->store_agent, (int64_t)getpid()) == -1)
		run_store_warn(r, "the orchestrator started");
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
	switch (r->root->end) {
	case NODE_END_COMPLETE:
	case NODE_END_AUTO_COMPLETE:
		return WARREN_EXIT_OK;
	case NODE_END_CANCELLED:
		return WARREN_EXIT_INTERRUPTED;
	case NODE_END_NONE:
	case NODE_END_FAIL:
	case NODE_END_LIMIT:
	case NODE_END_CRASHED:
	case NODE_END_KILLED:
	case NODE_END_TIMEOUT:
	case NODE_END_PROTOCOL:
	case NODE_END_SPAWN:
	case NODE_END_QUOTA:
	default:
		return r->llm_failed ? WARREN_EXIT_LLM : WARREN_EXIT_FAIL;
	}
}

/* What was lost and what to do, on stderr: the run's last words. */
static void
run_store_report(struct run *r, int status_written)
{
	const char	*lost = store_lost(r->store);

	fprintf(stderr, "warren: run %lld: the database could not be "
	    "written: %s\n", (long long)r->run_id, lost ? lost :
	    store_errmsg(r->store));
	fprintf(stderr, "warren: run %lld stopped. The database keeps "
	    "everything committed before the failure; the rows above were not "
	    "written%s. Fix the cause, then `warren resume %lld` redoes only "
	    "what is not in the database.\n", (long long)r->run_id,
	    status_written ? " (its status is store_failed)" :
	    "; its status could not be written either (it shows as "
	    "interrupted)", (long long)r->run_id);
}

/* The run's status, and the exit code: 6 whenever a write was lost,
 * whatever the agents did. */
static int
run_store_end(struct run *r, int code)
{
	int	ok;

	if (r->store == NULL)
		return code;
	if (!r->store_failed) {
		if (store_run_finish(r->store, r->run_id, code == 0 ?
		    STORE_RUN_DONE : code == WARREN_EXIT_INTERRUPTED ?
		    STORE_RUN_CANCELLED : STORE_RUN_FAILED,
		    code == 0 ? r->root->result : r->root->error) == 0 &&
		    store_lost(r->store) == NULL)
			return code;
		if (store_lost(r->store) == NULL) {
			/* A refused status (the run's row is gone). */
			run_store_warn(r, "run %lld", (long long)r->run_id);
			return code;
		}
		r->store_failed = 1;
	}
	ok = store_run_finish(r->store, r->run_id, STORE_RUN_STORE_FAILED,
	    store_lost(r->store)) == 0;
	run_store_report(r, ok);
	return WARREN_EXIT_STORE;
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

void
run_free(struct run *r)
{
	size_t		 i;
	struct node	*n;

	if (r == NULL)
		return;
	if (r->disk_fd != -1)
		close(r->disk_fd);
	orch_free(r);
	for (i = 0; i < r->nnodes; i++) {
		n = r->nodes[i];
		proc_free(n->worker);
		profile_free(n->narrowed);
		free(n->task);
		free(n->result);
		free(n->error);
		free(n->batch);
		ui_node_free(n);
		if (n->resume != NULL)
			msg_list_free(n->resume);
		free(n->resume);
		free(n);
	}
	for (i = 0; i < r->ndelegates; i++)
		free(r->ddescs[i]);
	free(r->ddescs);
	free(r->dnames);
	free(r->delegates);
	run_resume_free(r);
	run_hostexec_free(r);
	free(r->stop_reason);
	free(r->nodes);
	spawn_env_free(r->worker_env);
	proc_policies_free(r);
	loop_free(r->loop);
	free(r->caps);
	free(r);
}

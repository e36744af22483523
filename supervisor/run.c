/*
 * One run: the agent tree, delegation, the end of an agent and its parent
 * told. The --jobs queue is run_sched.c, the loop, cancellation and the
 * run's end run_main.c, what is written to the store run_record.c.
 *
 * Only the supervisor forks. A delegation (from the orchestrator or from a
 * worker's spawn request) is checked against the limits, becomes a queued
 * node, and is started when a worker slot is free; its end answers the
 * parent with the result or a clear error.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "agent/profile.h"
#include "common/clock.h"
#include "common/log.h"
#include "common/str.h"
#include "common/xmalloc.h"
#include "sandbox/sandbox.h"
#include "spawnd/spawn.h"
#include "store/store.h"
#include "supervisor/loop.h"
#include "supervisor/mcp.h"
#include "supervisor/run.h"
#include "supervisor/spawnd_client.h"

#define RUN_INHERIT_RESULT_MAX	4000	/* chars of one inherited result */
#define RUN_INHERIT_MAX		32	/* inherited messages */
#define RUN_CHAT_TURNS		64	/* earlier turns of a chat given */
#define RUN_CHAT_TEXT_MAX	16000	/* bytes of one of their messages */

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
			    parent->path);	/* run_delegate_as checked */
		if (parent->kids_tail != NULL)
			parent->kids_tail->next_kid = n;
		else
			parent->kids = n;
		parent->kids_tail = n;
	}
	r->nodes[r->nnodes++] = n;
	return n;
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
	if (r->store != NULL && n == r->root && r->opts.root_chat) {
		if (store_turns(r->store, r->run_id, RUN_CHAT_TURNS,
		    RUN_CHAT_TEXT_MAX, out) == 0)
			return;
		run_store_warn(r, "the conversation before run %lld",
		    (long long)r->run_id);
		msg_list_free(out);
		msg_list_init(out);
	}
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
	mcp_run_free(r);
	loop_free(r->loop);
	free(r->caps);
	free(r);
}

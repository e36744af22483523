/*
 * Resuming an interrupted run from the store's plan (warren resume RUN).
 *
 * Every agent restarts from what was written. The orchestrator restarts
 * from its messages. A delegate call its last turn left unanswered is
 * answered by the subagent it started (matched by the call id stored with
 * the subagent): a finished one (done or failed) is never run again, its
 * stored result is the answer; an unfinished one is restarted, in a new
 * worker, from its own messages (IPC start.history), and the same rule
 * applies to its own unanswered delegate calls, down the tree. An agent
 * waits, not started, until the subagents it is owed have ended, then goes
 * on from its messages plus their answers. Any other tool call left
 * unanswered was in flight: the agent core answers it "interrupted" and
 * the model calls it again if it still needs it (at-least-once; see
 * docs/supervisor.md). A root delegate call that left no subagent in the
 * store is delegated again (run_resume_redelegate). A finished subagent whose summary was still being
 * written when the supervisor died (done, but its node has none) gets it
 * now, before its parent hears its result, as when it first finished.
 *
 * A composition pattern the orchestrator's last turn left unanswered
 * (plan_execute, parallel_explore, sequential_delegate) runs again
 * (compose_resume); each step it reaches asks here for the agent the
 * interrupted run stored for it (call id "CALL#STEP") and reuses it by
 * the same rules: finished, its stored outcome; unfinished, restarted in
 * its own row. The pattern's report answers the call.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "agent/agent.h"
#include "agent/profile.h"
#include "agent/tooldef.h"
#include "common/log.h"
#include "common/xmalloc.h"
#include "store/store.h"
#include "supervisor/compose.h"
#include "supervisor/run.h"

/* One agent waiting for the subagents its unanswered calls started. */
struct resume_slot {
	struct resume_wait	*wait;
	size_t			 i;		/* index in pending */
};

struct resume_wait {
	struct resume_wait	*next;
	struct node		*node;
	const struct store_plan_agent *pa;
	struct msg_list		*msgs;		/* what it resumes from */
	struct msg		*answers;	/* one per pending call */
	int			*have;
	struct resume_slot	*slots;
	/* The subagent each pending delegate call started, or NULL. */
	const struct store_plan_agent **kids;
	size_t			 nwait;
	int			 released;
};

static void	run_resume_node(struct run *, const struct store_plan *,
		    struct node *, const struct store_plan_agent *,
		    struct msg_list *);

/* Its number among its parent's children: 3 for 0.2.3. */
static unsigned
run_resume_num(const char *path)
{
	const char	*dot = strrchr(path, '.');

	return dot != NULL ? (unsigned)strtoul(dot + 1, NULL, 10) : 0;
}

/*
 * The plan agent that is a direct child of parent, answers call_id and is
 * numbered floor or later; the latest such: a model may give a call id
 * again in a later turn, and the unanswered call is the latest one.
 */
static const struct store_plan_agent *
run_resume_find(const struct store_plan *p, const char *parent,
    const char *call_id, unsigned floor)
{
	const struct store_plan_agent	*found = NULL;
	const struct store_agent	*a;
	size_t				 i, len = strlen(parent);

	if (call_id == NULL)
		return NULL;
	for (i = 0; i < p->nagents; i++) {
		a = &p->agents[i].agent;
		if (a->call_id == NULL || strcmp(a->call_id, call_id) != 0)
			continue;
		if (strncmp(a->path, parent, len) != 0 || a->path[len] != '.' ||
		    strchr(a->path + len + 1, '.') != NULL ||
		    run_resume_num(a->path) < floor)
			continue;
		if (found == NULL || run_resume_num(a->path) >
		    run_resume_num(found->agent.path))
			found = &p->agents[i];
	}
	return found;
}

/* The highest child number under path: new children go on after it. */
static unsigned
run_resume_nchildren(const struct store_plan *p, const char *parent)
{
	const char	*path, *rest;
	size_t		 i, len = strlen(parent);
	unsigned	 max = 0, k;

	for (i = 0; i < p->nagents; i++) {
		path = p->agents[i].agent.path;
		if (strncmp(path, parent, len) != 0 || path[len] != '.')
			continue;
		rest = path + len + 1;
		if (strchr(rest, '.') != NULL)
			continue;
		k = (unsigned)strtoul(rest, NULL, 10);
		if (k > max)
			max = k;
	}
	return max;
}

static void
run_resume_tool_msg(struct msg *m, const struct msg_call *call,
    const char *text, int is_error)
{
	memset(m, 0, sizeof(*m));
	m->role = MSG_TOOL;
	m->call_id = xstrdup(call->id);
	m->name = xstrdup(call->name);
	m->text = xstrdup(text != NULL ? text : "");
	m->is_error = is_error;
}

/* A finished subagent's stored outcome, as its parent hears it. */
static void
run_resume_stored_answer(struct msg *m, const struct msg_call *call,
    const struct store_agent *a)
{
	char	*text;

	if (a->status == STORE_AGENT_DONE) {
		run_resume_tool_msg(m, call, a->result, 0);
		return;
	}
	xasprintf(&text, "subagent %s (%s) failed: %s", a->path,
	    a->profile ? a->profile : "?", a->result ? a->result :
	    (a->exit_reason ? a->exit_reason : "no reason recorded"));
	run_resume_tool_msg(m, call, text, 1);
	free(text);
}

/*
 * The merge node of the subagents one turn of w's agent started in
 * parallel, as the first run would have written before the synthesis
 * step, unless it did so before it stopped.
 */
static void
run_resume_merge(struct run *r, struct resume_wait *w)
{
	const struct store_plan_agent	*c;
	struct run_merge_part		*parts;
	int64_t				 merge;
	size_t				 i, n = 0;

	parts = xcalloc(w->pa->npending + 1, sizeof(*parts));
	for (i = 0; i < w->pa->npending; i++) {
		if ((c = w->kids[i]) == NULL || !w->have[i] ||
		    w->answers[i].is_error || c->agent.node <= 0)
			continue;
		parts[n].node = c->agent.node;
		parts[n].path = c->agent.path;
		parts[n].profile = c->agent.profile ? c->agent.profile : "?";
		parts[n].result = w->answers[i].text;
		n++;
	}
	if ((merge = run_merge_parts(r, w->node->path, parts, n, 1)) > 0)
		w->node->merge_node = merge;
	free(parts);
}

/* Every subagent it was owed has ended: start the agent. */
static void
run_resume_release(struct run *r, struct resume_wait *w)
{
	struct node	*n = w->node;
	size_t		 i;
	char		 err[512];

	if (w->released)
		return;
	w->released = 1;
	run_resume_merge(r, w);
	for (i = 0; i < w->pa->npending; i++) {
		if (!w->have[i])
			continue;
		if (msg_list_take(w->msgs, &w->answers[i]) == -1)
			fatal("msg_list_take");
		w->have[i] = 0;
	}
	if (n == r->root) {
		if (!r->orch_deferred || n->state == NODE_DONE)
			return;
		r->orch_deferred = 0;
		if (run_root_start(r, w->msgs, err, sizeof(err)) == -1) {
			log_warnx("orchestrator: %s", err);
			n->end = NODE_END_FAIL;
			n->error = xstrdup(err);
			run_node_done(r, n);
		}
		return;
	}
	run_enqueue(r, n);
}

/* A restarted subagent ended: its outcome answers the call it was for. */
static void
run_resume_answered(struct run *r, struct node *child, void *arg)
{
	struct resume_slot	*s = arg;
	struct resume_wait	*w = s->wait;
	const struct msg_call	*call = &w->pa->pending[s->i];
	char			*text;
	int			 is_error;

	text = run_node_answer(child, &is_error);
	run_resume_tool_msg(&w->answers[s->i], call, text, is_error);
	free(text);
	w->have[s->i] = 1;
	if (--w->nwait == 0)
		run_resume_release(r, w);
}

/* A stored tool_filter ("read,edit") applied to p again; NULL (logged)
 * if p no longer has one of those tools. */
static struct profile *
run_resume_narrow(const struct profile *p, const char *filter)
{
	struct profile	*q;
	char		*copy, *s, *tok, *tools[PROFILE_MAX_TOOLS], err[512];
	size_t		 n = 0;

	copy = xstrdup(filter);
	for (s = copy; (tok = strsep(&s, ",")) != NULL;)
		if (*tok != '\0' && n < PROFILE_MAX_TOOLS)
			tools[n++] = tok;
	if ((q = profile_narrow(p, (const char *const *)tools, n, err,
	    sizeof(err))) == NULL)
		log_warnx("resume: %s", err);
	free(copy);
	return q;
}

/* Plan agent pa's node under parent, with its stored ids; NULL if its
 * path or profile cannot be used here. */
static struct node *
run_resume_restore(struct run *r, struct node *parent,
    const struct store_plan_agent *pa)
{
	const struct store_agent	*a = &pa->agent;
	const struct profile		*prof;
	struct node			*n;

	struct profile			*narrowed = NULL;

	if (strlen(a->path) >= IPC_PATH_MAX || (prof = profile_set_find(
	    r->profiles, a->profile ? a->profile : "general")) == NULL)
		return NULL;
	if (a->tool_filter != NULL &&
	    (prof = narrowed = run_resume_narrow(prof, a->tool_filter)) == NULL)
		return NULL;
	n = run_node_restore(r, parent, prof, a->path, a->task ? a->task :
	    "", a->inherit_context);
	n->narrowed = narrowed;
	n->store_agent = a->id;
	n->store_node = a->node;
	return n;
}

/* Restart the unfinished subagent pa under parent; NULL if it cannot. */
static struct node *
run_resume_restart(struct run *r, const struct store_plan *p,
    struct node *parent, const struct store_plan_agent *pa)
{
	const struct store_agent	*a = &pa->agent;
	struct node			*n;

	if ((n = run_resume_restore(r, parent, pa)) == NULL) {
		log_warnx("resume: agent %s (%s) cannot be restarted here (no "
		    "such profile, or its tool_filter does not apply): it "
		    "stays cancelled (interrupted)", a->path,
		    a->profile ? a->profile : "?");
		return NULL;
	}
	n->call_id = NULL;
	n->nchildren = run_resume_nchildren(p, a->path);
	/* None written (it waited for a slot), or no model turn (its start
	 * cut short, e.g. the system prompt committed and the task not): it
	 * starts as a new agent does, from its task and the context it
	 * inherits (proc_start, orch_start); what is stored is skipped. */
	if (pa->messages.n > 0) {
		n->resume = xcalloc(1, sizeof(*n->resume));
		msg_list_init(n->resume);
		if (msg_list_copy(n->resume, &pa->messages) == -1)
			fatal("msg_list_copy");
	}
	/* What is stored; the worker's first checkpoint resends from 0. */
	n->ckpt_seq = (uint32_t)pa->messages.n;
	if (r->store != NULL && store_agent_set_status(r->store, a->id,
	    STORE_AGENT_PENDING, NULL, NULL) == -1)
		run_store_warn(r, "run %lld", (long long)r->run_id);
	if (agent_resume_has_turn(&pa->messages))
		log_info("resume: agent %s restarts from its %zu messages",
		    a->path, pa->messages.n);
	else if (pa->messages.n > 0)
		log_info("resume: agent %s had stored %zu messages and no "
		    "turn: it starts again from its task", a->path,
		    pa->messages.n);
	else
		log_info("resume: agent %s had stored no message: it starts "
		    "again from its task", a->path);
	run_record_event(r, n, "resumed", NULL, "restarted from its messages");
	return n;
}

/*
 * A finished subagent whose node has no summary: the supervisor died
 * while it was being written. Its node, done, to write it again through
 * run_summary_start; NULL when there is nothing to redo.
 */
static struct node *
run_resume_summary(struct run *r, struct node *parent,
    const struct store_plan_agent *pa)
{
	const struct store_agent	*a = &pa->agent;
	struct node			*n;

	if (r->store == NULL || a->status != STORE_AGENT_DONE ||
	    a->summary != NULL || a->node <= 0 || a->result == NULL ||
	    (n = run_resume_restore(r, parent, pa)) == NULL)
		return NULL;
	n->state = NODE_DONE;
	n->end = NODE_END_COMPLETE;
	n->result = xstrdup(a->result);
	log_info("resume: agent %s finished without a summary: writing it",
	    a->path);
	run_record_event(r, n, "resumed", NULL, "its summary was not "
	    "written: writing it");
	return n;
}

/*
 * A finished agent's node, which never runs again: where its profile is
 * gone from this machine (a user's profile file removed since), a
 * stand-in with its name and no tool. NULL if its path is too long.
 */
static struct node *
run_resume_record(struct run *r, struct node *parent,
    const struct store_plan_agent *pa)
{
	const struct store_agent	*a = &pa->agent;
	struct profile			*q;
	struct node			*n;
	char				 err[256];

	if ((n = run_resume_restore(r, parent, pa)) != NULL)
		return n;
	if (strlen(a->path) >= IPC_PATH_MAX || (q = profile_narrow(
	    profile_builtin("explore"), NULL, 0, err, sizeof(err))) == NULL)
		return NULL;
	free(q->name);
	q->name = xstrdup(a->profile != NULL ? a->profile : "?");
	n = run_node_restore(r, parent, q, a->path, a->task ? a->task : "",
	    a->inherit_context);
	n->narrowed = q;
	n->store_agent = a->id;
	n->store_node = a->node;
	return n;
}

/*
 * A finished subagent whose summary is written, as a node that has
 * ended with its stored outcome (what run_node_answer tells its parent);
 * NULL if its path cannot be used here.
 */
static struct node *
run_resume_ended(struct run *r, struct node *parent,
    const struct store_plan_agent *pa)
{
	const struct store_agent	*a = &pa->agent;
	struct node			*n;

	if ((n = run_resume_record(r, parent, pa)) == NULL)
		return NULL;
	n->state = NODE_DONE;
	if (a->status == STORE_AGENT_DONE) {
		n->end = NODE_END_COMPLETE;
		n->result = xstrdup(a->result != NULL ? a->result : "");
	} else {
		n->end = NODE_END_FAIL;
		n->error = xstrdup(a->result != NULL ? a->result :
		    (a->exit_reason != NULL ? a->exit_reason :
		    "no reason recorded"));
	}
	log_info("resume: %s already finished: not run again", a->path);
	run_record_event(r, n, "resumed", NULL, "finished before the run "
	    "stopped: not run again");
	return n;
}

const struct store_plan_agent *
run_resume_stored(const struct run *r, const char *call_id, unsigned floor)
{
	if (r->resume_plan == NULL)
		return NULL;
	return run_resume_find(r->resume_plan, r->root->path, call_id, floor);
}

int
run_resume_step(struct run *r, const struct store_plan_agent *pa,
    node_done_fn cb, void *arg, struct node **childp)
{
	struct node	*n;
	int		 summary = 0;

	if (pa->finished && (n = run_resume_summary(r, r->root, pa)) != NULL)
		summary = 1;
	else if (pa->finished)
		n = run_resume_ended(r, r->root, pa);
	else
		n = run_resume_restart(r, r->resume_plan, r->root, pa);
	if (n == NULL)
		return -1;
	*childp = n;
	n->done_cb = cb;
	n->done_arg = arg;
	if (!pa->finished)
		run_resume_node(r, r->resume_plan, n, pa, n->resume);
	else if (!summary || run_summary_start(r, n) == 0)
		run_node_tell(r, n);
	return 0;
}

/* A pattern the root resumed (compose_resume) ended: its report is the
 * answer to the call. */
static void
run_resume_composed(struct run *r, void *arg, const char *text,
    int is_error)
{
	struct resume_slot	*s = arg;
	struct resume_wait	*w = s->wait;

	run_resume_tool_msg(&w->answers[s->i], &w->pa->pending[s->i], text,
	    is_error);
	w->have[s->i] = 1;
	if (--w->nwait == 0)
		run_resume_release(r, w);
}

/*
 * The orchestrator's unanswered call i, if it is a composition pattern:
 * the pattern runs again keeping what its agents stored, and answers the
 * call when it ends. 0, or -1 if the call is no pattern of the root's.
 */
static int
run_resume_pattern(struct run *r, struct resume_wait *w, size_t i)
{
	const struct msg_call	*call = &w->pa->pending[i];
	const char		*name;
	enum compose_kind	 k;
	char			 err[512];

	if (w->node != r->root || r->root_worker || call->name == NULL ||
	    (name = tooldef_canonical(call->name)) == NULL ||
	    compose_kind_of(name, &k) == -1)
		return -1;
	w->slots[i].wait = w;
	w->slots[i].i = i;
	w->nwait++;
	if (compose_resume(r, name, call->id, call->args, run_resume_composed,
	    &w->slots[i], err, sizeof(err)) == 0)
		return 0;
	/* Its arguments were refused the first time too. */
	w->nwait--;
	run_resume_tool_msg(&w->answers[i], call, err, 1);
	w->have[i] = 1;
	return 0;
}

/*
 * The orchestrator's unanswered delegate call i that left no subagent in
 * the store (the run stopped between the call and the spawn, or the batch
 * holding the subagent's row was lost to a full disk): it is delegated
 * now, as the call asked, since resume redoes what the database lacks.
 * A refusal (a limit, a profile gone) answers the call, as it would have.
 * A worker's own calls are its agent's to answer ("interrupted").
 */
static void
run_resume_redelegate(struct run *r, struct resume_wait *w, size_t i)
{
	const struct msg_call	*call = &w->pa->pending[i];
	const char		*tools[PROFILE_MAX_TOOLS + 1], *code;
	struct run_deleg	 d;
	struct node		*cn;
	json_t			*a, *f, *t;
	char			 msg[512];
	size_t			 k;

	if (w->node != r->root || r->root_worker || call->args == NULL ||
	    (a = json_loads(call->args, 0, NULL)) == NULL)
		return;
	memset(&d, 0, sizeof(d));
	d.profile = json_string_value(json_object_get(a, "profile"));
	d.task = json_string_value(json_object_get(a, "task"));
	d.inherit = json_is_true(json_object_get(a, "inherit_context"));
	d.call_id = call->id;
	if ((f = json_object_get(a, "tool_filter")) != NULL) {
		d.filtered = 1;
		json_array_foreach(f, k, t)
			if (json_is_string(t) && d.ntools < PROFILE_MAX_TOOLS)
				tools[d.ntools++] = json_string_value(t);
		d.tools = tools;
	}
	if (d.profile == NULL || d.task == NULL) {
		json_decref(a);
		return;		/* refused the first time: "interrupted" */
	}
	w->slots[i].wait = w;
	w->slots[i].i = i;
	if (run_delegate_as(r, w->node, &d, run_resume_answered, &w->slots[i],
	    &cn, &code, msg, sizeof(msg)) == 0) {
		log_info("resume: delegate call %s stored no subagent: "
		    "delegated again as %s", call->id, cn->path);
		w->nwait++;
	} else {
		run_resume_tool_msg(&w->answers[i], call, msg, 1);
		w->have[i] = 1;
	}
	json_decref(a);
}

/* w's agent's unanswered call i, a delegate: answered by the finished
 * subagent it started, or by that subagent restarted. */
static void
run_resume_delegate(struct run *r, const struct store_plan *p,
    struct resume_wait *w, size_t i)
{
	const struct msg_call		*call = &w->pa->pending[i];
	const struct store_plan_agent	*c;
	struct node			*cn;

	if (call->name == NULL || strcmp(call->name, "delegate") != 0)
		return;
	if ((c = run_resume_find(p, w->pa->agent.path, call->id, 0)) == NULL) {
		run_resume_redelegate(r, w, i);
		return;
	}
	w->kids[i] = c;
	if (c->finished && (cn = run_resume_summary(r, w->node, c)) != NULL) {
		w->slots[i].wait = w;
		w->slots[i].i = i;
		cn->done_cb = run_resume_answered;
		cn->done_arg = &w->slots[i];
		w->nwait++;
		if (run_summary_start(r, cn) == 0)
			run_node_tell(r, cn);
		return;
	}
	if (c->finished) {
		log_info("resume: %s already finished: not run again",
		    c->agent.path);
		run_resume_stored_answer(&w->answers[i], call, &c->agent);
		w->have[i] = 1;
		return;
	}
	if ((cn = run_resume_restart(r, p, w->node, c)) == NULL)
		return;
	w->slots[i].wait = w;
	w->slots[i].i = i;
	cn->done_cb = run_resume_answered;
	cn->done_arg = &w->slots[i];
	w->nwait++;
	run_resume_node(r, p, cn, c, cn->resume);
}

/*
 * Resume n (plan agent pa) from msgs: answer its unanswered delegate
 * calls from finished subagents, restart unfinished ones, run the
 * root's unanswered patterns again, and start n when nothing is owed any
 * more (the root: run_main or the release).
 */
static void
run_resume_node(struct run *r, const struct store_plan *p, struct node *n,
    const struct store_plan_agent *pa, struct msg_list *msgs)
{
	struct resume_wait		*w;
	size_t				 i;

	w = xcalloc(1, sizeof(*w));
	w->node = n;
	w->pa = pa;
	w->msgs = msgs;
	w->answers = xcalloc(pa->npending + 1, sizeof(*w->answers));
	w->have = xcalloc(pa->npending + 1, sizeof(*w->have));
	w->slots = xcalloc(pa->npending + 1, sizeof(*w->slots));
	w->kids = xcalloc(pa->npending + 1, sizeof(*w->kids));
	w->next = r->resume_waits;
	r->resume_waits = w;
	/* Held until every call is looked at: an answer may come at once. */
	w->nwait = 1;
	for (i = 0; i < pa->npending; i++)
		if (run_resume_pattern(r, w, i) == -1)
			run_resume_delegate(r, p, w, i);
	if (n == r->root && w->nwait > 1)
		r->orch_deferred = 1;
	if (--w->nwait == 0)
		run_resume_release(r, w);
}

/*
 * Fill the root's node from the plan, restart what must be, and build the
 * messages the orchestrator resumes from. Returns 0, 1 when the root had
 * already finished (nothing to run), -1 when the plan has no root.
 */
int
run_resume_prepare(struct run *r, const struct store_plan *p,
    struct msg_list *out)
{
	const struct store_plan_agent	*root = NULL;
	struct node			*n = r->root;
	size_t				 i;

	for (i = 0; i < p->nagents; i++)
		if (strcmp(p->agents[i].agent.path, "0") == 0)
			root = &p->agents[i];
	if (root == NULL)
		return -1;
	if (root->finished)
		return 1;
	r->resume_plan = p;
	ui_init(r);	/* restarted agents are queued from here */
	n->store_agent = root->agent.id;
	n->store_node = root->agent.node;
	if (msg_list_copy(out, &root->messages) == -1)
		fatal("msg_list_copy");
	n->ckpt_seq = (uint32_t)root->messages.n;
	n->nchildren = run_resume_nchildren(p, "0");
	r->nagents = 0;
	for (i = 0; i < p->nagents; i++) {
		if (strcmp(p->agents[i].agent.path, "0") == 0)
			continue;
		r->nagents++;	/* they count against --max-agents */
		/* Restarted ones are marked again below. */
		if (!p->agents[i].finished && r->store != NULL &&
		    p->agents[i].agent.status != STORE_AGENT_CANCELLED &&
		    store_agent_set_status(r->store, p->agents[i].agent.id,
		    STORE_AGENT_CANCELLED, NULL, "interrupted") == -1)
			run_store_warn(r, "agent %s marked interrupted",
			    p->agents[i].agent.path);
	}
	run_resume_node(r, p, n, root, out);
	return 0;
}

void
run_resume_free(struct run *r)
{
	struct resume_wait	*w;
	size_t			 i;

	while ((w = r->resume_waits) != NULL) {
		r->resume_waits = w->next;
		for (i = 0; i < w->pa->npending; i++)
			if (w->have[i])
				msg_free(&w->answers[i]);
		free(w->answers);
		free(w->have);
		free(w->slots);
		free(w->kids);
		free(w);
	}
}

/*
 * Composition patterns (RFC-004), called by the orchestrator as tools and
 * run here, by the supervisor: plan_execute (a plan agent's steps run as
 * a DAG, then a synthesis), parallel_explore (read-only agents on the
 * aspects the model names, merged into one node) and sequential_delegate
 * (each step from the previous one's summary). docs/composition.md.
 *
 * Every agent of a pattern is an ordinary subagent of the root, made by
 * run_delegate_as(): depth, max agents, --jobs and the token budget hold as
 * for any delegation. What is new is the memory graph's shape: a pattern
 * node under the root's node, steps under it or under the steps they
 * depend on (a node with several parents), merge nodes joining results.
 *
 * A pattern never answers from inside compose_start(): its end is posted
 * to a zero timer, so the orchestrator's turn is never re-entered.
 *
 * warren resume runs a pattern call the interrupted run left unanswered
 * again (compose_resume): it keeps the pattern node, and every step it
 * reaches takes the agent the interrupted run stored for it, if any
 * (compose_reuse): finished, its outcome is the step's at once, without a
 * turn; unfinished, it is restarted in its own row. The rest runs as the
 * first time, so the report is the one an uninterrupted run gives.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "agent/agent.h"
#include "agent/profile.h"
#include "common/buf.h"
#include "common/log.h"
#include "common/str.h"
#include "common/xmalloc.h"
#include "store/store.h"
#include "supervisor/compose.h"
#include "supervisor/loop.h"
#include "supervisor/run.h"

#define COMPOSE_LABEL_MAX	160	/* of a pattern node's label */
#define COMPOSE_ANSWER_MAX	4000	/* of one step's text in a report */

enum compose_step_state {
	STEP_WAIT = 0,		/* its dependencies are not all done */
	STEP_RUNNING,
	STEP_DONE,		/* ended with a result */
	STEP_FAILED,		/* refused, failed, crashed ... */
	STEP_SKIPPED,		/* a dependency failed: never started */
};

struct compose_step {
	struct compose		*c;
	char			*id;		/* plan id, or "1", "2" ... */
	char			*task;		/* the model's words */
	char			*prompt;	/* the agent's task, if not */
	char			*profile;
	size_t			*deps;		/* indexes of steps */
	size_t			 ndeps;
	enum compose_step_state	 state;
	struct node		*node;
	char			*answer;	/* its result or why it failed */
	int64_t			 mem;		/* its memory node */
};

struct compose {
	struct run		*run;
	enum compose_kind	 kind;
	char			*task;
	char			*call_id;
	struct compose_step	*steps;
	size_t			 nsteps;
	size_t			 nrunning;
	int64_t			 pattern_node;
	/* plan_execute's plan agent, then its synthesis agent */
	struct compose_step	 extra;
	int			 phase;		/* 0 plan, 1 steps, 2 synthesis */
	int			 driving, again, ended;
	/* warren resume: the steps' agents the interrupted run stored are
	 * reused, the root's children numbered floor or later. */
	int			 resumed;
	unsigned		 floor;
	char			*text;		/* the tool result */
	int			 is_error;
	uint64_t		 timer;
	compose_done_fn		 cb;
	void			*arg;
	struct compose		*next;		/* the run's patterns */
};

static const char *const compose_names[] = {
	[COMPOSE_PLAN_EXECUTE] = "plan_execute",
	[COMPOSE_PARALLEL_EXPLORE] = "parallel_explore",
	[COMPOSE_SEQUENTIAL] = "sequential_delegate",
};

static void	compose_advance(struct compose *);

const char *
compose_name(enum compose_kind k)
{
	return compose_names[k];
}

int
compose_kind_of(const char *name, enum compose_kind *k)
{
	size_t	i;

	for (i = 0; i < sizeof(compose_names) / sizeof(compose_names[0]); i++)
		if (name != NULL && strcmp(name, compose_names[i]) == 0) {
			*k = (enum compose_kind)i;
			return 0;
		}
	return -1;
}

static void
compose_step_clear(struct compose_step *s)
{
	free(s->id);
	free(s->task);
	free(s->prompt);
	free(s->profile);
	free(s->deps);
	free(s->answer);
	memset(s, 0, sizeof(*s));
}

static void
compose_free(struct compose *c)
{
	size_t	i;

	for (i = 0; i < c->nsteps; i++)
		compose_step_clear(&c->steps[i]);
	free(c->steps);
	compose_step_clear(&c->extra);
	loop_timer_del(c->run->loop, c->timer);
	free(c->task);
	free(c->call_id);
	free(c->text);
	free(c);
}

static void
compose_unlink(struct compose *c)
{
	struct compose	**pp;

	for (pp = &c->run->composes; *pp != NULL; pp = &(*pp)->next)
		if (*pp == c) {
			*pp = c->next;
			return;
		}
}

/* The run ended with patterns unfinished: nobody waits for them. */
void
compose_free_all(struct run *r)
{
	struct compose	*c, *next;
	size_t		 i;

	for (c = r->composes; c != NULL; c = next) {
		next = c->next;
		/* Their nodes outlive us: they must not call back. */
		for (i = 0; i < c->nsteps; i++)
			if (c->steps[i].node != NULL &&
			    c->steps[i].node->done_arg == &c->steps[i])
				c->steps[i].node->done_cb = NULL;
		if (c->extra.node != NULL &&
		    c->extra.node->done_arg == &c->extra)
			c->extra.node->done_cb = NULL;
		compose_free(c);
	}
	r->composes = NULL;
}

static void
compose_timer_cb(void *arg)
{
	struct compose	*c = arg;

	c->timer = 0;
	compose_unlink(c);
	c->cb(c->run, c->arg, c->text ? c->text : "", c->is_error);
	compose_free(c);
}

/* The tool result is ready: answer from the loop, not from here. */
static void
compose_end(struct compose *c, char *text, int is_error)
{
	if (c->ended) {
		free(text);
		return;
	}
	c->ended = 1;
	c->text = text;
	c->is_error = is_error;
	log_info("%s: %s", compose_name(c->kind), is_error ? "ended with "
	    "failures: reported to the orchestrator" : "done");
	run_record_event(c->run, c->run->root, "pattern_end",
	    compose_name(c->kind), is_error ? "failed" : "done");
	c->timer = loop_timer_add(c->run->loop, 0, compose_timer_cb, c);
}

/* --- the memory graph ---------------------------------------------------- */

/* The pattern's node: under the root's node, its summary the task. */
static void
compose_pattern_node(struct compose *c)
{
	struct run	*r = c->run;
	char		 label[COMPOSE_LABEL_MAX];
	char		*summary;

	if (r->store == NULL || r->root->store_node <= 0)
		return;
	snprintf(label, sizeof(label), "pattern %s: %s",
	    compose_name(c->kind), c->task);
	xasprintf(&summary, "The %s pattern called by agent 0 for this "
	    "task: %s", compose_name(c->kind), c->task);
	if (store_node_merge(r->store, r->run_id, &r->root->store_node, 1,
	    label, &c->pattern_node) == -1 ||
	    store_node_set_summary(r->store, c->pattern_node, summary,
	    STORE_SUMMARY_RESULT, NULL) == -1) {
		run_store_warn(r, "pattern node of %s", compose_name(c->kind));
		c->pattern_node = 0;
	}
	free(summary);
}

/* A merge node whose parents are the steps that ended with a result. */
static int64_t
compose_merge(struct compose *c, const char *what, const char *text)
{
	struct run	*r = c->run;
	int64_t		*ids, merge = 0;
	char		 label[COMPOSE_LABEL_MAX];
	size_t		 i, n = 0;

	if (r->store == NULL)
		return 0;
	ids = xcalloc(c->nsteps + 1, sizeof(*ids));
	for (i = 0; i < c->nsteps; i++)
		if (c->steps[i].state == STEP_DONE && c->steps[i].mem > 0)
			ids[n++] = c->steps[i].mem;
	snprintf(label, sizeof(label), "pattern %s %s: %s",
	    compose_name(c->kind), what, c->task);
	/* Resumed: the interrupted run may have written it already. */
	if (n > 0 && c->resumed &&
	    store_merge_find(r->store, ids, n, &merge) == 1) {
		free(ids);
		return merge;
	}
	if (n > 0 && (store_node_merge(r->store, r->run_id, ids, n, label,
	    &merge) == -1 || store_node_set_summary(r->store, merge, text,
	    STORE_SUMMARY_RESULT, NULL) == -1)) {
		run_store_warn(r, "merge node of %s", compose_name(c->kind));
		merge = 0;
	}
	free(ids);
	return merge;
}

/*
 * warren resume: the pattern node of the interrupted run, the parent of
 * node (its first step's) labelled as compose_pattern_node does; 0 if
 * there is none.
 */
static int64_t
compose_pattern_find(struct compose *c, int64_t node)
{
	struct run		*r = c->run;
	struct store_graph	 g;
	const struct store_node	*p;
	char			 prefix[64];
	int64_t			 found = 0;
	size_t			 i, j;

	if (r->store == NULL || node <= 0)
		return 0;
	memset(&g, 0, sizeof(g));
	if (store_graph_load(r->store, r->run_id, &g) == -1) {
		run_store_warn(r, "pattern node of %s", compose_name(c->kind));
		return 0;
	}
	snprintf(prefix, sizeof(prefix), "pattern %s: ", compose_name(c->kind));
	for (i = 0; i < g.nedges && found == 0; i++) {
		if (g.edges[i].child != node)
			continue;
		for (j = 0; j < g.nnodes; j++) {
			p = &g.nodes[j];
			if (p->id == g.edges[i].parent &&
			    p->kind == STORE_NODE_MERGE && p->label != NULL &&
			    strncmp(p->label, prefix, strlen(prefix)) == 0)
				found = p->id;
		}
	}
	store_graph_free(&g);
	return found;
}

/*
 * warren resume: what the interrupted run stored of this pattern. Its
 * first step's agent (the plan agent, or step 1) says whether it started
 * one, from which child number of the root its agents are, and which is
 * its pattern node. Nothing stored: the pattern starts as the first time.
 */
static void
compose_resume_anchor(struct compose *c)
{
	const struct store_plan_agent	*pa;
	const char			*dot;
	char				*id;

	xasprintf(&id, "%s#%s", c->call_id, c->kind == COMPOSE_PLAN_EXECUTE ?
	    "plan" : "1");
	pa = run_resume_stored(c->run, id, 0);
	free(id);
	if (pa == NULL) {
		compose_pattern_node(c);
		return;
	}
	c->resumed = 1;
	dot = strrchr(pa->agent.path, '.');
	c->floor = dot != NULL ? (unsigned)strtoul(dot + 1, NULL, 10) : 0;
	if ((c->pattern_node = compose_pattern_find(c, pa->agent.node)) <= 0)
		compose_pattern_node(c);
}

/* --- steps ------------------------------------------------------------ */

static void
compose_step_done(struct run *r, struct node *n, void *arg)
{
	struct compose_step	*s = arg;
	struct compose		*c = s->c;
	int			 is_error;

	(void)r;
	s->answer = run_node_answer(n, &is_error);
	s->state = is_error ? STEP_FAILED : STEP_DONE;
	s->mem = n->store_node;
	if (s != &c->extra)
		c->nrunning--;
	compose_advance(c);
}

/*
 * warren resume: the agent the interrupted run started for this step, as
 * a delegate call's subagent is resumed: finished, its stored outcome
 * (compose_step_done may run from in here); unfinished, restarted in
 * place from its messages. 0, or -1 when there is none (start one).
 */
static int
compose_reuse(struct compose *c, struct compose_step *s, const char *call_id)
{
	const struct store_plan_agent	*pa;

	if (!c->resumed ||
	    (pa = run_resume_stored(c->run, call_id, c->floor)) == NULL)
		return -1;
	return run_resume_step(c->run, pa, compose_step_done, s, &s->node);
}

/* Start a step as a subagent of the root whose memory node hangs under
 * parents (the pattern node if none). 0 started, -1 refused (its answer
 * says why). */
static int
compose_spawn(struct compose *c, struct compose_step *s, const char *what,
    const int64_t *parents, size_t nparents)
{
	struct run		*r = c->run;
	struct run_deleg	 d;
	const char		*code;
	char			*task, *call_id, msg[512];
	int			 rc;

	xasprintf(&task, "[%s %s] %s", compose_name(c->kind), what,
	    s->prompt != NULL ? s->prompt : s->task);
	xasprintf(&call_id, "%s#%s", c->call_id, s->id);
	if (nparents == 0 && c->pattern_node > 0) {
		parents = &c->pattern_node;
		nparents = 1;
	}
	memset(&d, 0, sizeof(d));
	d.profile = s->profile;
	d.task = task;
	d.inherit = 1;
	d.call_id = call_id;
	d.mem_parents = parents;
	d.nmem_parents = nparents;
	s->state = STEP_RUNNING;
	if (s != &c->extra)
		c->nrunning++;
	if (compose_reuse(c, s, call_id) == 0) {
		free(task);
		free(call_id);
		return 0;
	}
	rc = run_delegate_as(r, r->root, &d, compose_step_done, s, &s->node,
	    &code, msg, sizeof(msg));
	free(task);
	free(call_id);
	if (rc == -1) {
		s->state = STEP_FAILED;
		s->node = NULL;
		if (s != &c->extra)
			c->nrunning--;
		xasprintf(&s->answer, "refused: %s", msg);
	}
	return rc;
}

/* One line per step for the orchestrator: what each did or why not. */
static char *
compose_report(const struct compose *c, const char *head)
{
	const struct compose_step	*s;
	struct buf			 b;
	const char			*st;
	size_t				 i;

	buf_init(&b, 0);
	buf_addf(&b, "%s", head);
	for (i = 0; i < c->nsteps; i++) {
		s = &c->steps[i];
		switch (s->state) {
		case STEP_DONE:
			st = "done";
			break;
		case STEP_FAILED:
			st = "FAILED";
			break;
		case STEP_SKIPPED:
			st = "skipped";
			break;
		case STEP_WAIT:
		case STEP_RUNNING:
		default:
			st = "not run";
			break;
		}
		buf_addf(&b, "\n\nstep %s (%s%s%s) %s: %.*s", s->id,
		    s->profile, s->node ? ", agent " : "",
		    s->node ? s->node->path : "", st, COMPOSE_ANSWER_MAX,
		    s->answer ? s->answer : "");
	}
	return buf_release(&b, NULL);
}

static size_t
compose_count(const struct compose *c, enum compose_step_state st)
{
	size_t	i, n = 0;

	for (i = 0; i < c->nsteps; i++)
		n += c->steps[i].state == st;
	return n;
}

/* --- plan_execute -------------------------------------------------------- */

/* The parsed steps become the pattern's (their strings moved). */
static void
compose_take(struct compose *c, struct compose_stepdef *v, size_t n)
{
	size_t	i;

	c->steps = xcalloc(n + 1, sizeof(*c->steps));
	c->nsteps = n;
	for (i = 0; i < n; i++) {
		c->steps[i].c = c;
		c->steps[i].id = v[i].id;
		c->steps[i].task = v[i].task;
		c->steps[i].profile = v[i].profile;
		c->steps[i].deps = v[i].deps;
		c->steps[i].ndeps = v[i].ndeps;
	}
	free(v);
}

static int
compose_take_plan(struct compose *c, const char *text, char *err,
    size_t errsz)
{
	struct compose_stepdef	*v;
	size_t			 n;

	if (compose_plan_parse(text, &v, &n, err, errsz) == -1)
		return -1;
	compose_take(c, v, n);
	return 0;
}

static int
compose_step_depends(const struct compose_step *s, size_t i)
{
	size_t	j;

	for (j = 0; j < s->ndeps; j++)
		if (s->deps[j] == i)
			return 1;
	return 0;
}

static int
compose_dep_state(const struct compose *c, const struct compose_step *s)
{
	size_t	i;
	int	ready = 1;

	for (i = 0; i < s->ndeps; i++) {
		switch (c->steps[s->deps[i]].state) {
		case STEP_DONE:
			break;
		case STEP_FAILED:
		case STEP_SKIPPED:
			return -1;
		case STEP_WAIT:
		case STEP_RUNNING:
		default:
			ready = 0;
			break;
		}
	}
	return ready;
}

/* Start every step whose dependencies are done; skip those whose
 * dependencies failed. 1 if something changed. */
static int
compose_dag_start(struct compose *c)
{
	struct compose_step	*s;
	int64_t			*parents;
	size_t			 i, j, np;
	int			 dep, changed = 0;

	for (i = 0; i < c->nsteps; i++) {
		s = &c->steps[i];
		if (s->state != STEP_WAIT ||
		    (dep = compose_dep_state(c, s)) == 0)
			continue;
		changed = 1;
		if (dep == -1 || c->run->cancelling) {
			s->state = STEP_SKIPPED;
			xasprintf(&s->answer, c->run->cancelling ? "the run "
			    "is stopping" : "a step it depends on failed");
			continue;
		}
		parents = xcalloc(s->ndeps + 1, sizeof(*parents));
		for (j = np = 0; j < s->ndeps; j++)
			if (c->steps[s->deps[j]].mem > 0)
				parents[np++] = c->steps[s->deps[j]].mem;
		(void)compose_spawn(c, s, s->id, parents, np);
		free(parents);
	}
	return changed;
}

static void
compose_never_ready(struct compose *c)
{
	size_t	i;

	for (i = 0; i < c->nsteps; i++)
		if (c->steps[i].state == STEP_WAIT) {
			c->steps[i].state = STEP_SKIPPED;
			xasprintf(&c->steps[i].answer, "never ready: its "
			    "dependencies cannot all end");
		}
}

/* Every step ended with a result: the synthesis agent, under the steps
 * nothing depends on. */
static void
compose_synthesis(struct compose *c)
{
	struct compose_step	*x = &c->extra;
	int64_t			*parents;
	size_t			 i, j, np = 0;
	int			 sink;

	compose_step_clear(x);
	x->c = c;
	x->id = xstrdup("synthesis");
	x->profile = xstrdup("explore");
	xasprintf(&x->task, "Every step of the plan for this task is done: "
	    "%s\nFrom the steps' results in your context, write the answer "
	    "to the task and finish with complete(result).", c->task);
	parents = xcalloc(c->nsteps + 1, sizeof(*parents));
	for (i = 0; i < c->nsteps; i++) {
		for (j = 0, sink = 1; j < c->nsteps && sink; j++)
			sink = !compose_step_depends(&c->steps[j], i);
		if (sink && c->steps[i].mem > 0)
			parents[np++] = c->steps[i].mem;
	}
	c->phase = 2;
	(void)compose_spawn(c, x, "synthesis", parents, np);
	free(parents);
}

static void
compose_plan_advance(struct compose *c)
{
	char	err[512], *head;

	if (c->phase == 0) {
		if (c->extra.state == STEP_RUNNING)
			return;
		if (c->extra.state == STEP_FAILED) {
			xasprintf(&head, "plan_execute: the plan agent did not "
			    "plan: %s", c->extra.answer);
			compose_end(c, head, 1);
			return;
		}
		if (compose_take_plan(c, c->extra.answer, err,
		    sizeof(err)) == -1) {
			xasprintf(&head, "plan_execute: the plan is refused: "
			    "%s. Nothing was run; call plan_execute again or "
			    "delegate the work yourself.", err);
			compose_end(c, head, 1);
			return;
		}
		c->phase = 1;
		log_info("agent 0: plan_execute: the plan has %zu step%s",
		    c->nsteps, c->nsteps == 1 ? "" : "s");
		run_record_event(c->run, c->run->root, "pattern_plan",
		    "plan_execute", c->extra.answer);
	}
	if (c->phase == 1) {
		while (compose_dag_start(c))
			;
		if (c->nrunning > 0)
			return;
		/* Nothing runs and steps wait: they can never start (the
		 * plan's check makes this unreachable; never wedge the run). */
		compose_never_ready(c);
		if (compose_count(c, STEP_DONE) != c->nsteps) {
			compose_end(c, compose_report(c, "plan_execute: steps "
			    "failed, no synthesis was made; decide what to do "
			    "with the steps below."), 1);
			return;
		}
		compose_synthesis(c);
	}
	if (c->phase == 2 && c->extra.state != STEP_RUNNING) {
		xasprintf(&head, "plan_execute: %s\n\nsynthesis (%s%s): %s",
		    c->extra.state == STEP_DONE ? "every step done" :
		    "every step done but the synthesis FAILED",
		    c->extra.node ? "agent " : "refused",
		    c->extra.node ? c->extra.node->path : "", c->extra.answer);
		compose_end(c, compose_report(c, head),
		    c->extra.state != STEP_DONE);
		free(head);
	}
}

/* --- parallel_explore, sequential_delegate ------------------------------- */

static void
compose_explore_advance(struct compose *c)
{
	struct run	*r = c->run;
	struct buf	 b;
	char		*text, *summary;
	int64_t		 merge;
	size_t		 i;

	if (c->nrunning > 0)
		return;
	buf_init(&b, 0);
	for (i = 0; i < c->nsteps; i++) {
		summary = NULL;
		if (c->steps[i].state == STEP_DONE && r->store != NULL &&
		    store_node_summary(r->store, c->steps[i].mem,
		    &summary) == -1)
			run_store_warn(r, "summary of an aspect");
		if (c->steps[i].state == STEP_DONE)
			buf_addf(&b, "%saspect %s (%s): %s", b.len ? "\n\n" :
			    "", c->steps[i].id, c->steps[i].task, summary ?
			    summary : c->steps[i].answer);
		free(summary);
	}
	text = buf_release(&b, NULL);
	if ((merge = compose_merge(c, "merge", text ? text : "")) > 0)
		r->root->merge_node = merge;
	free(text);
	compose_end(c, compose_report(c, compose_count(c, STEP_DONE) ==
	    c->nsteps ? "parallel_explore: every aspect explored; merged "
	    "findings below." : "parallel_explore: some aspects FAILED; the "
	    "others' findings are below."),
	    compose_count(c, STEP_DONE) != c->nsteps);
}

static void
compose_seq_advance(struct compose *c)
{
	struct compose_step	*prev;
	size_t			 i;

	if (c->nrunning > 0)
		return;
	for (i = 0; i < c->nsteps; i++) {
		if (c->steps[i].state == STEP_DONE)
			continue;
		if (c->steps[i].state != STEP_WAIT)
			break;
		prev = i > 0 ? &c->steps[i - 1] : NULL;
		if (c->run->cancelling)
			break;
		if (compose_spawn(c, &c->steps[i], c->steps[i].id,
		    prev != NULL && prev->mem > 0 ? &prev->mem : NULL,
		    prev != NULL && prev->mem > 0) == 0)
			return;
		break;
	}
	for (; i < c->nsteps; i++)
		if (c->steps[i].state == STEP_WAIT) {
			c->steps[i].state = STEP_SKIPPED;
			xasprintf(&c->steps[i].answer, "an earlier step "
			    "failed");
		}
	compose_end(c, compose_report(c, compose_count(c, STEP_DONE) ==
	    c->nsteps ? "sequential_delegate: every step done; the last "
	    "step's result is the last below." : "sequential_delegate: a step "
	    "FAILED; the steps after it were not run."),
	    compose_count(c, STEP_DONE) != c->nsteps);
}

static void
compose_advance(struct compose *c)
{
	if (c->ended)
		return;
	if (c->driving) {
		c->again = 1;
		return;
	}
	c->driving = 1;
	do {
		c->again = 0;
		switch (c->kind) {
		case COMPOSE_PLAN_EXECUTE:
			compose_plan_advance(c);
			break;
		case COMPOSE_PARALLEL_EXPLORE:
			compose_explore_advance(c);
			break;
		case COMPOSE_SEQUENTIAL:
			compose_seq_advance(c);
			break;
		}
	} while (c->again && !c->ended);
	c->driving = 0;
}

/* --- starting ---------------------------------------------------------- */

static int
compose_args(struct compose *c, const char *args, char *err, size_t errsz)
{
	struct compose_stepdef	*v;
	size_t			 n;

	if (compose_plan_args(c->kind, args, &c->task, &v, &n, err,
	    errsz) == -1)
		return -1;
	if (n > 0)
		compose_take(c, v, n);
	else
		free(v);
	return 0;
}

/* Every aspect at once: --jobs and max agents decide what runs. */
static void
compose_start_explore(struct compose *c)
{
	struct compose_step	*s;
	size_t			 i;

	for (i = 0; i < c->nsteps; i++) {
		s = &c->steps[i];
		xasprintf(&s->prompt, "Explore this aspect: %s\nIt is for "
		    "this task: %s\nReport what you find (paths, lines, "
		    "facts) with complete(result).", s->task, c->task);
		(void)compose_spawn(c, s, s->id, NULL, 0);
	}
}

static int
compose_start_plan(struct compose *c)
{
	struct compose_step	*x = &c->extra;

	x->c = c;
	x->id = xstrdup("plan");
	x->profile = xstrdup("plan");
	xasprintf(&x->task, "Plan this task as steps that other agents will "
	    "run: %s\nFinish with complete(result) where result is only JSON: "
	    "{\"steps\":[{\"id\":\"A\",\"task\":\"a self-contained "
	    "subtask\",\"profile\":\"general\",\"depends_on\":[]}, ...]}. "
	    "Ids are short names; depends_on lists the ids a step needs the "
	    "results of; steps that depend on nothing in common run in "
	    "parallel. At most %d steps; no cycles.", c->task,
	    COMPOSE_MAX_STEPS);
	(void)compose_spawn(c, x, "plan", NULL, 0);
	return 0;
}

/* The pattern call's state, linked to the run; NULL and err if its
 * arguments are unusable. */
static struct compose *
compose_new(struct run *r, const char *name, const char *id,
    const char *args, compose_done_fn cb, void *arg, char *err, size_t errsz)
{
	struct compose	*c;
	enum compose_kind k;

	if (compose_kind_of(name, &k) == -1) {
		snprintf(err, errsz, "no composition pattern \"%s\"", name);
		return NULL;
	}
	c = xcalloc(1, sizeof(*c));
	c->run = r;
	c->kind = k;
	c->cb = cb;
	c->arg = arg;
	c->call_id = xstrdup(id ? id : "call");
	if (compose_args(c, args, err, errsz) == -1) {
		compose_free(c);
		return NULL;
	}
	c->next = r->composes;
	r->composes = c;
	return c;
}

/* Its first agents, then whatever follows. A resumed step may end at
 * once (compose_reuse): the advance waits until every one is started. */
static void
compose_begin(struct compose *c)
{
	c->driving = 1;
	if (c->kind == COMPOSE_PLAN_EXECUTE)
		compose_start_plan(c);
	else if (c->kind == COMPOSE_PARALLEL_EXPLORE)
		compose_start_explore(c);
	c->driving = 0;
	compose_advance(c);
}

int
compose_start(struct run *r, const struct agent_call *call,
    compose_done_fn cb, void *arg, char *err, size_t errsz)
{
	struct compose	*c;

	if ((c = compose_new(r, call->name, call->id, call->args, cb, arg,
	    err, errsz)) == NULL)
		return -1;
	/* plan_execute has no steps before its plan agent answers. */
	if (c->kind == COMPOSE_PLAN_EXECUTE)
		log_info("agent 0: plan_execute: planning: %s", c->task);
	else
		log_info("agent 0: %s with %zu step%s: %s",
		    compose_name(c->kind), c->nsteps, c->nsteps == 1 ? "" : "s",
		    c->task);
	run_record_event(r, r->root, "pattern_start", compose_name(c->kind),
	    c->task);
	compose_pattern_node(c);
	compose_begin(c);
	return 0;
}

int
compose_resume(struct run *r, const char *name, const char *id,
    const char *args, compose_done_fn cb, void *arg, char *err, size_t errsz)
{
	struct compose	*c;

	if ((c = compose_new(r, name, id, args, cb, arg, err, errsz)) == NULL)
		return -1;
	compose_resume_anchor(c);
	log_info("agent 0: %s resumed%s: %s", compose_name(c->kind),
	    c->resumed ? " (finished steps are not run again)" :
	    " (none of its agents was stored: from the start)", c->task);
	run_record_event(r, r->root, "pattern_resumed", compose_name(c->kind),
	    c->task);
	compose_begin(c);
	return 0;
}

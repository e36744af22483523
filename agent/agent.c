/*
 * The agent loop as a state machine (see agent/agent.h for the contract).
 *
 *	NEW --first agent_next--> READY --limits ok, context ready--> WAIT_LLM
 *	READY --a strategy asked for a summary--> WAIT_SUMMARY --fed--> READY
 *	WAIT_LLM --reply with calls--> WAIT_TOOLS --results--> READY
 *	WAIT_LLM --reply with no calls / only internal calls--> READY
 *	any --complete, fail, limit, loop, cancel, LLM error--> DONE
 *
 * The core knows turns, calls and limits; context surgery is in
 * agent_context.c. What to do on each event (remind, detect loops, keep
 * todos, compact) lives in the behaviors (behav_*.c), which the core calls
 * in registration order.
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "agent/agent_int.h"
#include "agent/profile.h"
#include "common/buf.h"
#include "agent/agent_testapi.h"

static int	agent_batch_finish(struct agent *a);

char *
agent_strdup(const char *s)
{
	return s == NULL ? NULL : strdup(s);
}

static const char *
agent_status_name(enum agent_status s)
{
	switch (s) {
	case AGENT_RUNNING:
		return "running";
	case AGENT_COMPLETE:
		return "complete";
	case AGENT_FAIL:
		return "fail";
	case AGENT_AUTO_COMPLETE:
		return "auto_complete";
	case AGENT_LIMIT:
		return "limit";
	}
	return "?";
}

void
agent_emit(struct agent *a, enum agent_event_type type, const char *name,
    const char *text, int is_error)
{
	struct agent_event	ev;

	if (a->on_event == NULL)
		return;
	ev.type = type;
	ev.path = a->path;
	ev.name = name;
	ev.text = text;
	ev.is_error = is_error;
	ev.iteration = a->iterations;
	a->on_event(&ev, a->event_arg);
}

void
agent_fire(struct agent *a, const struct agent_hook_info *h)
{
	size_t	i;

	for (i = 0; i < a->nbehs; i++)
		if (a->behs[i].ops.on_hook != NULL)
			a->behs[i].ops.on_hook(a->behs[i].self, a, h);
}

void
agent_finish(struct agent *a, enum agent_status st, const char *result,
    const char *reason)
{
	struct agent_hook_info	h;

	if (a->status != AGENT_RUNNING)
		return;
	a->status = st;
	a->result = strdup(result != NULL ? result : "");
	a->reason = strdup(reason != NULL ? reason : "");
	memset(&h, 0, sizeof(h));
	h.hook = AGENT_HOOK_GOAL_COMPLETE;
	h.result = a->result;
	h.is_error = st != AGENT_COMPLETE;
	agent_fire(a, &h);
	agent_emit(a, AGENT_EV_DONE, agent_status_name(st), a->result,
	    st != AGENT_COMPLETE && st != AGENT_AUTO_COMPLETE);
}

void
agent_cancel(struct agent *a, const char *reason)
{
	agent_finish(a, AGENT_LIMIT, a->last_text,
	    reason != NULL ? reason : "cancelled");
	agent_batch_free(a);
	a->state = AGENT_ST_DONE;
}

/* Append a message to the context and the log (takes m's strings). */
static int
agent_append(struct agent *a, struct msg *m)
{
	/* m is ours whatever happens: freed on failure, as below. */
	if (msg_list_add(&a->log, m) == -1) {
		msg_free(m);
		return -1;
	}
	if (msg_list_take(&a->ctx, m) == -1) {
		msg_free(m);
		return -1;
	}
	return 0;
}

int
agent_inject(struct agent *a, const char *text)
{
	struct msg	m;

	memset(&m, 0, sizeof(m));
	m.role = MSG_USER;
	if ((m.text = strdup(text)) == NULL)
		return -1;
	return agent_append(a, &m);
}

static void
agent_filter_free(struct agent_pending *p)
{
	size_t	i;

	for (i = 0; i < p->ntools; i++)
		free(p->tools[i]);
	free(p->tools);
	p->tools = NULL;
	p->ntools = 0;
}

void
agent_batch_free(struct agent *a)
{
	size_t	i;

	for (i = 0; i < a->npend; i++) {
		free(a->pend[i].text);
		free(a->pend[i].task);
		free(a->pend[i].profile);
		agent_filter_free(&a->pend[i]);
	}
	free(a->pend);
	free(a->calls);
	a->pend = NULL;
	a->calls = NULL;
	a->npend = a->ncalls = 0;
}

static char *
agent_system_prompt(struct agent *a)
{
	struct buf	 b;
	const char	*s;
	size_t		 i;

	buf_init(&b, 0);
	buf_addf(&b, "You are warren agent %s, profile %s%s.\n", a->path,
	    a->profile->name, a->depth == 0 ? " (the orchestrator)" : "");
	if (a->profile->prompt != NULL && *a->profile->prompt != '\0')
		buf_addf(&b, "\n%s\n", a->profile->prompt);
	for (i = 0; i < a->nbehs; i++) {
		if (a->behs[i].ops.instructions == NULL)
			continue;
		s = a->behs[i].ops.instructions(a->behs[i].self);
		if (s != NULL && *s != '\0')
			buf_addf(&b, "\n%s\n", s);
	}
	if (a->system_extra != NULL)
		buf_addf(&b, "\n%s\n", a->system_extra);
	return buf_release(&b, NULL);
}

/*
 * Results for calls a crashed run left unanswered, so no call is orphaned.
 * Each call's result is looked for among all the messages after its
 * assistant turn, in any order: results that came back out of call order
 * must not get a second, "interrupted", answer.
 */
static int
agent_resume_fix(struct agent *a)
{
	const struct msg	*last;
	struct msg		 m;
	size_t			 i, k, at, end, found;
	const char		*id, *name;

	for (at = a->ctx.n; at > 0; at--)
		if (a->ctx.v[at - 1].role == MSG_ASSISTANT)
			break;
	if (at == 0)
		return 0;
	at--;		/* the last assistant turn */
	end = a->ctx.n;	/* results appended below are not searched */
	for (k = 0; k < a->ctx.v[at].ncalls; k++) {
		/* agent_append may move the array: index, never keep. */
		last = &a->ctx.v[at];
		id = last->calls[k].id;
		name = last->calls[k].name;
		found = 0;
		for (i = at + 1; i < end && !found; i++)
			found = a->ctx.v[i].role == MSG_TOOL &&
			    a->ctx.v[i].call_id != NULL && id != NULL &&
			    strcmp(a->ctx.v[i].call_id, id) == 0;
		if (found)
			continue;
		memset(&m, 0, sizeof(m));
		m.role = MSG_TOOL;
		m.is_error = 1;
		m.call_id = agent_strdup(id);
		m.name = agent_strdup(name);
		m.text = strdup("interrupted: the run stopped before this "
		    "call returned; call it again if you still need it");
		if (m.text == NULL) {
			msg_free(&m);
			return -1;
		}
		if (agent_append(a, &m) == -1)
			return -1;
	}
	return 0;
}

int
agent_resume_has_turn(const struct msg_list *resume)
{
	size_t	i;

	for (i = 0; resume != NULL && i < resume->n; i++)
		if (resume->v[i].role == MSG_ASSISTANT)
			return 1;
	return 0;
}

static int
agent_start_resume(struct agent *a)
{
	size_t	i;

	/* The earlier run's log is the record so far. */
	if (msg_list_copy(&a->log, &a->resume) == -1 ||
	    msg_list_copy(&a->ctx, &a->resume) == -1)
		return -1;
	a->pinned = 0;
	for (i = 0; i < a->ctx.n; i++) {
		if (a->ctx.v[i].role == MSG_ASSISTANT)
			break;
		a->pinned = i + 1;
	}
	for (i = 0; i < a->ctx.n; i++)
		if (a->ctx.v[i].role == MSG_ASSISTANT)
			a->iterations++;
	msg_list_free(&a->resume);
	msg_list_init(&a->resume);
	return agent_resume_fix(a);
}

static int
agent_start(struct agent *a, uint64_t now)
{
	struct agent_hook_info	 h;
	struct buf		 b;
	struct msg		 m;
	size_t			 i;
	char			*t;

	a->start_ms = now;
	for (i = 0; i < a->ntools; i++) {
		a->wire[i] = a->tools[i].tool;
		a->tools_chars += strlen(a->wire[i].name) +
		    strlen(a->wire[i].description ? a->wire[i].description :
		    "") + strlen(a->wire[i].schema ? a->wire[i].schema : "");
	}
	/* Without a model turn the stored log is a start cut short (its
	 * system prompt stored, its task not yet): start as new. */
	if (agent_resume_has_turn(&a->resume)) {
		if (agent_start_resume(a) == -1)
			return -1;
		goto hooks;
	}
	memset(&m, 0, sizeof(m));
	m.role = MSG_SYSTEM;
	if ((m.text = agent_system_prompt(a)) == NULL ||
	    agent_append(a, &m) == -1)
		return -1;
	for (i = 0; i < a->inherited.n; i++) {
		if (msg_copy(&m, &a->inherited.v[i]) == -1 ||
		    agent_append(a, &m) == -1)
			return -1;
	}
	buf_init(&b, 0);
	if (a->depth > 0)
		buf_addf(&b, "DELEGATED TASK (you are subagent %s; your "
		    "result goes back to the agent that delegated it):\n",
		    a->path);
	buf_addstr(&b, a->task);
	if ((t = buf_release(&b, NULL)) == NULL || agent_inject(a, t) == -1) {
		free(t);
		return -1;
	}
	free(t);
	a->pinned = a->ctx.n;
 hooks:
	memset(&h, 0, sizeof(h));
	h.hook = AGENT_HOOK_GOAL_START;
	h.result = a->task;
	agent_fire(a, &h);
	return 0;
}

/* Limits that end or nudge a runaway; 1 when the agent ended. */
static int
agent_limits_check(struct agent *a, uint64_t now)
{
	struct agent_hook_info	h;
	uint64_t		age = now >= a->start_ms ? now - a->start_ms : 0;
	char			msg[256];

	memset(&h, 0, sizeof(h));
	h.hook = AGENT_HOOK_TIMEOUT;
	if (a->lim.timeout_ms != 0 && age >= a->lim.timeout_ms) {
		snprintf(msg, sizeof(msg), "timeout: ran %llu ms, limit %llu "
		    "ms", (unsigned long long)age,
		    (unsigned long long)a->lim.timeout_ms);
		h.name = "timeout";
		agent_fire(a, &h);
		agent_finish(a, AGENT_LIMIT, a->last_text, msg);
		return 1;
	}
	if (a->iterations >= a->lim.max_iterations) {
		snprintf(msg, sizeof(msg), "max iterations: %u turns without "
		    "complete() or fail()", a->iterations);
		h.name = "max_iterations";
		agent_fire(a, &h);
		agent_finish(a, AGENT_LIMIT, a->last_text, msg);
		return 1;
	}
	if (a->lim.timeout_ms != 0 && !a->nudged_time &&
	    age >= a->lim.nudge_ms) {
		a->nudged_time = 1;
		snprintf(msg, sizeof(msg), "Time is almost up: %llu of %llu s "
		    "used. Finish now: call complete(result) with what you "
		    "have, or fail(reason).", (unsigned long long)age / 1000,
		    (unsigned long long)a->lim.timeout_ms / 1000);
		if (agent_inject(a, msg) == -1)
			return -1;
		agent_emit(a, AGENT_EV_NUDGE, "timeout", msg, 0);
	}
	if (!a->nudged_iter &&
	    a->lim.max_iterations - a->iterations <= a->lim.nudge_iterations) {
		a->nudged_iter = 1;
		snprintf(msg, sizeof(msg), "Only %u turns left of %u. Finish "
		    "now: call complete(result) with what you have, or "
		    "fail(reason).", a->lim.max_iterations - a->iterations,
		    a->lim.max_iterations);
		if (agent_inject(a, msg) == -1)
			return -1;
		agent_emit(a, AGENT_EV_NUDGE, "max_iterations", msg, 0);
	}
	return 0;
}

static void
agent_action_llm(struct agent *a, struct agent_action *act)
{
	act->need = AGENT_NEED_LLM;
	if (a->state == AGENT_ST_WAIT_SUMMARY) {
		act->purpose = AGENT_LLM_SUMMARY;
		act->messages = &a->sumreq;
		act->tools = NULL;
		act->ntools = 0;
	} else {
		act->purpose = AGENT_LLM_TURN;
		act->messages = &a->ctx;
		act->tools = a->ntools ? a->wire : NULL;
		act->ntools = a->ntools;
	}
}

static enum agent_need
agent_done(struct agent *a, struct agent_action *act)
{
	a->state = AGENT_ST_DONE;
	agent_batch_free(a);
	act->need = AGENT_NEED_DONE;
	act->status = a->status;
	act->result = a->result;
	act->reason = a->reason;
	return AGENT_NEED_DONE;
}

static enum agent_need
agent_fatal(struct agent *a, struct agent_action *act, const char *what)
{
	agent_finish(a, AGENT_FAIL, a->last_text, what);
	return agent_done(a, act);
}

enum agent_need
agent_next(struct agent *a, uint64_t now, struct agent_action *act)
{
	size_t	i;

	memset(act, 0, sizeof(*act));
	a->last_now = now;
	if (a->state == AGENT_ST_NEW) {
		if (agent_start(a, now) == -1)
			return agent_fatal(a, act, "agent: out of memory");
		a->state = AGENT_ST_READY;
	}
	switch (a->state) {
	case AGENT_ST_NEW:
	case AGENT_ST_READY:
		break;
	case AGENT_ST_DONE:
		return agent_done(a, act);
	case AGENT_ST_WAIT_LLM:
	case AGENT_ST_WAIT_SUMMARY:
		agent_action_llm(a, act);
		return AGENT_NEED_LLM;
	case AGENT_ST_WAIT_TOOLS:
		act->need = AGENT_NEED_TOOLS;
		act->calls = a->calls;
		act->ncalls = a->ncalls;
		return AGENT_NEED_TOOLS;
	}
	if (a->status != AGENT_RUNNING)
		return agent_done(a, act);
	if (agent_limits_check(a, now) != 0)
		return a->status != AGENT_RUNNING ? agent_done(a, act) :
		    agent_fatal(a, act, "agent: out of memory");
	for (i = 0; i < a->nbehs; i++) {
		if (a->behs[i].ops.before_turn == NULL)
			continue;
		if (a->behs[i].ops.before_turn(a->behs[i].self, a, &a->ctx)
		    == -1)
			return agent_fatal(a, act, "agent: out of memory");
		if (a->status != AGENT_RUNNING)
			return agent_done(a, act);
		if (a->sum_wanted)
			break;
	}
	if (a->sum_wanted) {
		if (agent_summary_request(a) == -1)
			return agent_fatal(a, act, "agent: out of memory");
		a->sent_chars = agent_list_chars(&a->sumreq, 0, a->sumreq.n);
		a->state = AGENT_ST_WAIT_SUMMARY;
	} else {
		a->sent_chars = agent_list_chars(&a->ctx, 0, a->ctx.n) +
		    a->tools_chars;
		a->state = AGENT_ST_WAIT_LLM;
	}
	agent_action_llm(a, act);
	return AGENT_NEED_LLM;
}

static void
agent_account(struct agent *a, const struct msg_usage *u)
{
	a->usage.input += u->input;
	a->usage.output += u->output;
	/* Calibrate: tokens the API counted for the characters we sent. */
	if (u->input > 0 && a->sent_chars > 0)
		a->tok_per_char = (double)u->input / (double)a->sent_chars;
}

/* Check one call; on error p->text says what was wrong. */
static int
agent_round_end(struct agent *a, size_t ncalls, const char *text)
{
	struct agent_hook_info	h;

	memset(&h, 0, sizeof(h));
	h.hook = AGENT_HOOK_ROUND_END;
	h.ncalls = ncalls;
	h.result = text;
	agent_fire(a, &h);
	a->state = a->status != AGENT_RUNNING ? AGENT_ST_DONE :
	    AGENT_ST_READY;
	return 0;
}

int
agent_feed_llm(struct agent *a, const struct msg_reply *r)
{
	struct msg	 m;
	const struct msg *last;

	if (a->state == AGENT_ST_WAIT_SUMMARY) {
		agent_account(a, &r->usage);
		a->state = AGENT_ST_READY;
		if (agent_summary_apply(a, r->msg.text, NULL) == -1)
			goto nomem;
		return 0;
	}
	if (a->state != AGENT_ST_WAIT_LLM) {
		errno = EINVAL;
		return -1;
	}
	a->iterations++;
	agent_account(a, &r->usage);
	if (msg_copy(&m, &r->msg) == -1)
		goto nomem;
	m.role = MSG_ASSISTANT;
	free(m.call_id);
	free(m.name);
	m.call_id = m.name = NULL;
	if (agent_fix_ids(a, &m) == -1) {
		msg_free(&m);
		goto nomem;
	}
	if (m.text != NULL && *m.text != '\0') {
		free(a->last_text);
		if ((a->last_text = strdup(m.text)) == NULL) {
			msg_free(&m);
			goto nomem;
		}
	}
	if (agent_append(a, &m) == -1)
		goto nomem;
	last = &a->ctx.v[a->ctx.n - 1];
	agent_emit(a, AGENT_EV_LLM, NULL, last->text, 0);
	if (last->ncalls == 0)
		return agent_round_end(a, 0, last->text);
	if (agent_make_batch(a, last) == -1)
		goto nomem;
	if (a->ncalls > 0) {
		a->state = AGENT_ST_WAIT_TOOLS;
		return 0;
	}
	return agent_batch_finish(a);
 nomem:
	agent_cancel(a, "agent: out of memory");
	return -1;
}

int
agent_feed_llm_error(struct agent *a, const char *error)
{
	char	why[1024];

	if (a->state == AGENT_ST_WAIT_SUMMARY) {
		/* Losing the context is worse than a plain summary. */
		snprintf(why, sizeof(why), "(The summariser failed: %.900s; "
		    "only this list of what was dropped remains.)",
		    error ? error : "unknown error");
		a->state = AGENT_ST_READY;
		if (agent_summary_apply(a, NULL, why) == -1) {
			agent_cancel(a, "agent: out of memory");
			return -1;
		}
		return 0;
	}
	if (a->state != AGENT_ST_WAIT_LLM) {
		errno = EINVAL;
		return -1;
	}
	snprintf(why, sizeof(why), "llm: %.1000s", error ? error :
	    "unknown error");
	agent_finish(a, AGENT_FAIL, a->last_text, why);
	a->state = AGENT_ST_DONE;
	return 0;
}

int
agent_feed_results(struct agent *a, const struct agent_result *res, size_t n)
{
	struct agent_pending	*p;
	size_t			 i;

	if (a->state != AGENT_ST_WAIT_TOOLS || n != a->ncalls ||
	    (n > 0 && res == NULL)) {
		errno = EINVAL;
		return -1;
	}
	for (i = 0; i < n; i++) {
		p = &a->pend[a->calls[i].index];
		if ((p->text = agent_clip(res[i].text, a->lim.max_result)) ==
		    NULL) {
			agent_cancel(a, "agent: out of memory");
			return -1;
		}
		p->is_error = res[i].is_error != 0;
		p->answered = 1;
	}
	return agent_batch_finish(a);
}

/* Internal calls, then every result in call order, then the hooks. */
static int
agent_batch_finish(struct agent *a)
{
	struct agent_hook_info	 h;
	const struct msg	*am;
	struct agent_pending	*p;
	struct agent_beh	*b;
	struct msg		 m;
	size_t			 i, base;

	base = a->ctx.n - 1;	/* the assistant message of this turn */
	for (i = 0; i < a->npend; i++) {
		p = &a->pend[i];
		if (!p->valid || p->external)
			continue;
		am = &a->ctx.v[base];
		if (a->status != AGENT_RUNNING) {
			p->is_error = 1;
			p->text = strdup("not run: the agent had already "
			    "finished");
		} else {
			b = &a->behs[a->tools[p->entry].beh];
			if (b->ops.handle_tool(b->self, a, am->calls[i].name,
			    am->calls[i].args ? am->calls[i].args : "{}",
			    &p->text, &p->is_error) == -1)
				goto nomem;
		}
		if (p->text == NULL && (p->text = strdup("")) == NULL)
			goto nomem;
	}
	for (i = 0; i < a->npend; i++) {
		am = &a->ctx.v[base];
		memset(&m, 0, sizeof(m));
		m.role = MSG_TOOL;
		m.is_error = a->pend[i].is_error;
		m.text = a->pend[i].text;
		a->pend[i].text = NULL;
		if (m.text == NULL && (m.text = strdup("")) == NULL)
			goto nomem;
		if ((m.call_id = strdup(am->calls[i].id)) == NULL ||
		    (m.name = strdup(am->calls[i].name)) == NULL) {
			msg_free(&m);
			goto nomem;
		}
		agent_emit(a, AGENT_EV_TOOL_RESULT, m.name, m.text, m.is_error);
		if (agent_append(a, &m) == -1)
			goto nomem;
	}
	for (i = 0; i < a->npend; i++) {
		const struct msg *tm = &a->ctx.v[base + 1 + i];

		am = &a->ctx.v[base];
		memset(&h, 0, sizeof(h));
		h.hook = AGENT_HOOK_TOOL_CALL;
		h.name = am->calls[i].name;
		h.args = am->calls[i].args ? am->calls[i].args : "";
		h.result = tm->text;
		h.is_error = tm->is_error;
		h.writes = a->pend[i].entry != SIZE_MAX &&
		    a->tools[a->pend[i].entry].def != NULL &&
		    a->tools[a->pend[i].entry].def->writes;
		agent_fire(a, &h);
	}
	i = a->npend;
	agent_batch_free(a);
	return agent_round_end(a, i, a->ctx.v[base].text);
 nomem:
	agent_cancel(a, "agent: out of memory");
	return -1;
}

const struct msg_list *
agent_messages(const struct agent *a)
{
	return &a->log;
}

const struct msg_list *
agent_context(const struct agent *a)
{
	return &a->ctx;
}

struct msg_usage
agent_usage(const struct agent *a)
{
	return a->usage;
}

unsigned
agent_iterations(const struct agent *a)
{
	return a->iterations;
}

uint64_t
agent_deadline_ms(const struct agent *a)
{
	if (a->lim.timeout_ms == 0 || a->state == AGENT_ST_NEW)
		return 0;
	return a->start_ms + a->lim.timeout_ms;
}

enum agent_status
agent_status(const struct agent *a)
{
	return a->status;
}

const char *
agent_todo_text(const struct agent *a)
{
	return a->todo_text != NULL ? a->todo_text : "";
}

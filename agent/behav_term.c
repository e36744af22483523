/*
 * Termination: an agent ends by calling complete(result) or fail(reason).
 * A turn without any tool call gets a reminder; after max_reminders
 * reminders in a row the agent is auto-completed with its last text, and
 * its status (AGENT_AUTO_COMPLETE) and reason say so.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "agent/agent_int.h"

struct behav_term {
	struct msg_tool	tools[2];
	unsigned	reminders;
	unsigned	rejections;	/* complete() results refused */
};

#define BEHAV_TERM_WHY_MAX	4096	/* the errors a rejection lists */

static const char *
behav_term_instructions(void *self)
{
	(void)self;
	return "Work through tool calls. When the task is done, call "
	    "complete(result) with the whole result: the caller sees only "
	    "that text. If it cannot be done, call fail(reason).";
}

/*
 * complete(result) against the agent's check (the run's output schema):
 * a refused result answers the call with why, so the model can fix it;
 * max_rejections of them fail the agent, which must not loop to its
 * iteration limit. Returns the answer to the call, or NULL: accepted.
 */
static char *
behav_term_check(struct behav_term *t, struct agent *a, const char *s,
    int *is_error)
{
	char	 why[BEHAV_TERM_WHY_MAX], reason[BEHAV_TERM_WHY_MAX + 128];
	char	*text = NULL;

	if (a->check_result == NULL ||
	    a->check_result(a->check_arg, s ? s : "", why, sizeof(why)) == 0)
		return NULL;
	*is_error = 1;
	if (++t->rejections >= a->max_rejections) {
		snprintf(reason, sizeof(reason), "complete() refused %u times "
		    "by the output schema; the last result: %s",
		    t->rejections, why);
		agent_finish(a, AGENT_FAIL, s, reason);
		return strdup("refused; the agent has failed");
	}
	if (asprintf(&text, "complete() refused (%u of %u): the result does "
	    "not match the output schema:\n%s\nCall complete(result) again "
	    "with a result that matches it.", t->rejections,
	    a->max_rejections, why) == -1)
		return NULL;
	return text;
}

static int
behav_term_tool(void *self, struct agent *a, const char *name,
    const char *args, char **text, int *is_error)
{
	json_t		*root;
	const char	*s;

	*is_error = 0;
	if ((root = json_loads(args, 0, NULL)) == NULL)
		return -1;
	if (strcmp(name, "complete") == 0) {
		s = json_string_value(json_object_get(root, "result"));
		if ((*text = behav_term_check(self, a, s, is_error)) != NULL ||
		    *is_error) {
			json_decref(root);
			return *text == NULL ? -1 : 0;
		}
		agent_finish(a, AGENT_COMPLETE, s, "complete() called");
	} else {
		s = json_string_value(json_object_get(root, "reason"));
		agent_finish(a, AGENT_FAIL, a->last_text, s);
	}
	json_decref(root);
	*text = strdup("ok");
	return *text == NULL ? -1 : 0;
}

/*
 * No complete() after the reminders: the last text is the result, unless
 * the agent's check (the run's output schema) refuses it. A result the
 * schema refuses never ends an agent as done, called or not.
 */
static void
behav_term_auto(struct behav_term *t, struct agent *a)
{
	char	why[BEHAV_TERM_WHY_MAX], reason[BEHAV_TERM_WHY_MAX + 160];

	if (a->check_result != NULL && a->check_result(a->check_arg,
	    a->last_text ? a->last_text : "", why, sizeof(why)) != 0) {
		snprintf(reason, sizeof(reason), "no complete() call after %u "
		    "reminders, and the last text does not match the output "
		    "schema: %s", t->reminders, why);
		agent_finish(a, AGENT_FAIL, a->last_text, reason);
		return;
	}
	snprintf(reason, sizeof(reason), "auto-completed: no complete() or "
	    "fail() call after %u reminders; the result is the last text",
	    t->reminders);
	agent_finish(a, AGENT_AUTO_COMPLETE, a->last_text, reason);
}

static void
behav_term_hook(void *self, struct agent *a, const struct agent_hook_info *h)
{
	struct behav_term	*t = self;
	char			 msg[512];

	if (h->hook != AGENT_HOOK_ROUND_END || a->status != AGENT_RUNNING)
		return;
	if (h->ncalls > 0) {
		t->reminders = 0;
		return;
	}
	if (t->reminders >= a->lim.max_reminders) {
		behav_term_auto(t, a);
		return;
	}
	t->reminders++;
	snprintf(msg, sizeof(msg), "Reminder %u of %u: you answered without a "
	    "tool call. If the task is done, call complete(result) with the "
	    "result; if it cannot be done, call fail(reason); otherwise "
	    "continue with a tool call.", t->reminders, a->lim.max_reminders);
	if (agent_inject(a, msg) == 0)
		agent_emit(a, AGENT_EV_REMINDER, NULL, msg, 0);
}

static void
behav_term_free(void *self)
{
	struct behav_term	*t = self;

	if (t == NULL)
		return;
	behav_tools_free(t->tools, 2);
	free(t);
}

void *
behav_termination(struct agent_behavior *ops)
{
	struct behav_term	*t;

	memset(ops, 0, sizeof(*ops));
	if ((t = calloc(1, sizeof(*t))) == NULL)
		return NULL;
	if (behav_tool_from_def(tooldef_find("complete"), &t->tools[0]) == -1 ||
	    behav_tool_from_def(tooldef_find("fail"), &t->tools[1]) == -1) {
		behav_term_free(t);
		return NULL;
	}
	ops->name = "termination";
	ops->instructions = behav_term_instructions;
	ops->tools = t->tools;
	ops->ntools = 2;
	ops->handle_tool = behav_term_tool;
	ops->on_hook = behav_term_hook;
	ops->free = behav_term_free;
	return t;
}

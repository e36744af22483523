/*
 * todo: the agent's task list, kept in the agent's memory (the call and its
 * result are in the message record, so a resumed agent finds its list in
 * the transcript). Each call replaces the whole list, like Claude Code's
 * TodoWrite. An item turning completed is a subtask transition: the
 * hierarchical context strategy clears its context on it.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "agent/agent_int.h"
#include "common/buf.h"

#define TODO_MAX_ITEMS		100
#define TODO_MAX_CONTENT	1000

enum todo_status { TODO_PENDING, TODO_IN_PROGRESS, TODO_COMPLETED };

struct todo_item {
	char			*content;
	enum todo_status	 status;
};

struct behav_todo {
	struct msg_tool		 tool;
	struct todo_item	*items;
	size_t			 n;
};

static const char *todo_marks[] = { "[ ]", "[~]", "[x]" };

static void
todo_items_free(struct todo_item *v, size_t n)
{
	size_t	i;

	for (i = 0; i < n; i++)
		free(v[i].content);
	free(v);
}

static const char *
behav_todo_instructions(void *self)
{
	(void)self;
	return "For work with several steps, keep a task list with todo(): "
	    "mark one item in_progress at a time and completed when done.";
}

/* Parse and check the new list; NULL with err set when it is wrong. */
static struct todo_item *
todo_parse(const char *args, size_t *np, char *err, size_t errlen)
{
	json_t			*root, *arr, *it, *c, *s;
	struct todo_item	*v = NULL;
	const char		*st;
	size_t			 i, n = 0;

	if ((root = json_loads(args, 0, NULL)) == NULL) {
		snprintf(err, errlen, "todo: arguments are not JSON");
		return NULL;
	}
	arr = json_object_get(root, "todos");
	if ((n = json_array_size(arr)) > TODO_MAX_ITEMS) {
		snprintf(err, errlen, "todo: %zu items, limit %d", n,
		    TODO_MAX_ITEMS);
		goto fail;
	}
	if ((v = calloc(n ? n : 1, sizeof(*v))) == NULL) {
		snprintf(err, errlen, "todo: out of memory");
		goto fail;
	}
	json_array_foreach(arr, i, it) {
		c = json_object_get(it, "content");
		s = json_object_get(it, "status");
		if (!json_is_object(it) || !json_is_string(c) ||
		    !json_is_string(s)) {
			snprintf(err, errlen, "todo: item %zu must be an "
			    "object with string fields content and status", i);
			goto fail;
		}
		if (json_string_length(c) > TODO_MAX_CONTENT ||
		    json_string_length(c) == 0) {
			snprintf(err, errlen, "todo: item %zu: content must be "
			    "1 to %d bytes", i, TODO_MAX_CONTENT);
			goto fail;
		}
		st = json_string_value(s);
		if (strcmp(st, "pending") == 0)
			v[i].status = TODO_PENDING;
		else if (strcmp(st, "in_progress") == 0)
			v[i].status = TODO_IN_PROGRESS;
		else if (strcmp(st, "completed") == 0)
			v[i].status = TODO_COMPLETED;
		else {
			snprintf(err, errlen, "todo: item %zu: status must be "
			    "pending, in_progress or completed, not \"%.32s\"",
			    i, st);
			goto fail;
		}
		if ((v[i].content = strdup(json_string_value(c))) == NULL) {
			snprintf(err, errlen, "todo: out of memory");
			goto fail;
		}
	}
	json_decref(root);
	*np = n;
	return v;
 fail:
	if (v != NULL)
		todo_items_free(v, n);
	json_decref(root);
	return NULL;
}

static char *
todo_render(const struct todo_item *v, size_t n)
{
	struct buf	b;
	size_t		i;

	buf_init(&b, 0);
	buf_addstr(&b, "");
	for (i = 0; i < n; i++)
		buf_addf(&b, "%s %s\n", todo_marks[v[i].status], v[i].content);
	return buf_release(&b, NULL);
}

static int
todo_was_completed(const struct behav_todo *t, const char *content)
{
	size_t	i;

	for (i = 0; i < t->n; i++)
		if (t->items[i].status == TODO_COMPLETED &&
		    strcmp(t->items[i].content, content) == 0)
			return 1;
	return 0;
}

static int
behav_todo_tool(void *self, struct agent *a, const char *name,
    const char *args, char **text, int *is_error)
{
	struct behav_todo	*t = self;
	struct agent_hook_info	 h;
	struct todo_item	*v, *old;
	size_t			 n, i, oldn, done = 0;
	char			 err[256], *r;

	(void)name;
	if ((v = todo_parse(args, &n, err, sizeof(err))) == NULL) {
		*is_error = 1;
		*text = strdup(err);
		return *text == NULL ? -1 : 0;
	}
	if ((r = todo_render(v, n)) == NULL) {
		todo_items_free(v, n);
		return -1;
	}
	old = t->items;
	oldn = t->n;
	memset(&h, 0, sizeof(h));
	h.hook = AGENT_HOOK_SUBTASK;
	for (i = 0; i < n; i++) {
		if (v[i].status != TODO_COMPLETED)
			continue;
		done++;
		if (todo_was_completed(t, v[i].content))
			continue;
		h.name = v[i].content;
		agent_fire(a, &h);
	}
	t->items = v;
	t->n = n;
	todo_items_free(old, oldn);
	free(a->todo_text);
	a->todo_text = r;
	*is_error = 0;
	if (asprintf(text, "Task list (%zu of %zu done):\n%s", done, n, r) ==
	    -1) {
		*text = NULL;
		return -1;
	}
	return 0;
}

static void
behav_todo_free(void *self)
{
	struct behav_todo	*t = self;

	if (t == NULL)
		return;
	todo_items_free(t->items, t->n);
	msg_tool_free(&t->tool);
	free(t);
}

void *
behav_todo(struct agent_behavior *ops)
{
	struct behav_todo	*t;

	memset(ops, 0, sizeof(*ops));
	if ((t = calloc(1, sizeof(*t))) == NULL)
		return NULL;
	if (behav_tool_from_def(tooldef_find("todo"), &t->tool) == -1) {
		free(t);
		return NULL;
	}
	ops->name = "todo";
	ops->instructions = behav_todo_instructions;
	ops->tools = &t->tool;
	ops->ntools = 1;
	ops->handle_tool = behav_todo_tool;
	ops->free = behav_todo_free;
	return t;
}

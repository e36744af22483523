/*
 * note: facts the agent wants to keep when old context is summarised or
 * cleared. The notes are carried into every summary and every hierarchical
 * clear marker, so they survive any context strategy.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "agent/agent_int.h"
#include "common/buf.h"

#define NOTE_MAX_BYTES	(16 * 1024)	/* all notes together */

struct behav_note {
	struct msg_tool	tool;
	struct buf	notes;
	unsigned	n;
};

static const char *
behav_note_instructions(void *self)
{
	(void)self;
	return "Old context may be summarised or dropped: keep what you must "
	    "not forget with note(text).";
}

static int
behav_note_tool(void *self, struct agent *a, const char *name,
    const char *args, char **text, int *is_error)
{
	struct behav_note	*nb = self;
	json_t			*root;
	const char		*s;
	const char		*all;
	char			*copy;

	(void)name;
	if ((root = json_loads(args, 0, NULL)) == NULL)
		return -1;
	s = json_string_value(json_object_get(root, "text"));
	if (nb->notes.len + strlen(s) + 4 > NOTE_MAX_BYTES) {
		json_decref(root);
		*is_error = 1;
		*text = strdup("note: the notes are full (16 KiB); keep them "
		    "shorter");
		return *text == NULL ? -1 : 0;
	}
	buf_addf(&nb->notes, "- %s\n", s);
	json_decref(root);
	nb->n++;
	if ((all = buf_cstr(&nb->notes)) == NULL ||
	    (copy = strdup(all)) == NULL)
		return -1;
	free(a->notes_text);
	a->notes_text = copy;
	*is_error = 0;
	if (asprintf(text, "noted (%u notes)", nb->n) == -1) {
		*text = NULL;
		return -1;
	}
	return 0;
}

static void
behav_note_free(void *self)
{
	struct behav_note	*nb = self;

	if (nb == NULL)
		return;
	buf_free(&nb->notes);
	msg_tool_free(&nb->tool);
	free(nb);
}

void *
behav_note(struct agent_behavior *ops)
{
	struct behav_note	*nb;

	memset(ops, 0, sizeof(*ops));
	if ((nb = calloc(1, sizeof(*nb))) == NULL)
		return NULL;
	buf_init(&nb->notes, NOTE_MAX_BYTES + 1024);
	if (behav_tool_from_def(tooldef_find("note"), &nb->tool) == -1) {
		free(nb);
		return NULL;
	}
	ops->name = "notes";
	ops->instructions = behav_note_instructions;
	ops->tools = &nb->tool;
	ops->ntools = 1;
	ops->handle_tool = behav_note_tool;
	ops->free = behav_note_free;
	return nb;
}

/*
 * The tools an agent can be given: name, description, arguments. One table
 * serves the agent (schemas shown to the model, argument validation before a
 * call leaves the agent) and the worker (tools_run() finds them by name).
 * docs/tools.md documents every entry.
 */
#ifndef WARREN_TOOLDEF_H
#define WARREN_TOOLDEF_H

#include <stddef.h>

enum tooldef_type {
	TOOLDEF_STRING = 0,
	TOOLDEF_INTEGER,
	TOOLDEF_BOOLEAN,
	TOOLDEF_ARRAY,		/* of objects; items checked by the tool */
};

/* Where a tool runs. */
enum tooldef_where {
	TOOLDEF_WORKER = 0,	/* worker/tools.h, in the workspace */
	TOOLDEF_AGENT,		/* answered inside the agent (todo, note,
				   complete, fail) */
	TOOLDEF_DELEGATE,	/* the supervisor spawns a subagent */
	TOOLDEF_COMPOSE,	/* the supervisor runs a composition pattern
				   (plan_execute ...): the orchestrator's */
};

struct tooldef_param {
	const char		*name;
	enum tooldef_type	 type;
	int			 required;
	const char		*description;
	const char		*items;	/* TOOLDEF_ARRAY: JSON Schema of an item */
};

struct tooldef {
	const char			*name;
	const char			*description;
	const struct tooldef_param	*params;
	size_t				 nparams;
	enum tooldef_where		 where;
	int				 parallel;	/* safe to run concurrently */
	int				 writes;	/* needs a read-write workspace */
	int				 execs;		/* needs exec */
};

/* tooldef.c */
const struct tooldef	*tooldef_find(const char *name);
/* The canonical name for a tool name as users write it ("Read" → "read",
 * "TodoWrite" → "todo", "Task" → "delegate"); NULL if unknown. */
const char		*tooldef_canonical(const char *name);
/* The JSON Schema of its arguments, malloc'd JSON text; NULL on ENOMEM. */
char			*tooldef_schema(const struct tooldef *t);
/* The tool as sent to the model: {"type":"function","function":{...}};
 * malloc'd; its length / 4 is the per-call token cost. */
char			*tooldef_wire(const struct tooldef *t);
/*
 * Validate args (JSON text) against t: an object, every required field
 * present, every field of its type, no unknown field. 0, or -1 with a
 * message for the model in err ("edit: missing required field
 * \"old_string\"").
 */
int			 tooldef_validate(const struct tooldef *t,
			    const char *args, char *err, size_t errlen);

#endif

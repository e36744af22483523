/*
 * The neutral conversation model shared by every part of warren.
 *
 * The LLM client maps its three wire formats to and from it, the agent core
 * builds its context from it, the IPC layer carries it between worker and
 * supervisor, and the store writes it to SQLite. All strings are owned,
 * NUL-terminated, valid for the life of the struct that holds them, and
 * freed by msg_free()/msg_list_free().
 */
#ifndef WARREN_MSG_H
#define WARREN_MSG_H

#include <stddef.h>
#include <stdint.h>

enum msg_role {
	MSG_SYSTEM = 0,
	MSG_USER,
	MSG_ASSISTANT,
	MSG_TOOL,
};

/* One tool call the model asked for. */
struct msg_call {
	char	*id;		/* the model's call id (generated when it gave none) */
	char	*name;		/* tool name as the model wrote it */
	char	*args;		/* arguments: raw JSON text, unvalidated */
};

struct msg {
	enum msg_role	 role;
	char		*text;		/* text content; NULL when none */
	struct msg_call	*calls;		/* MSG_ASSISTANT: ncalls tool calls */
	size_t		 ncalls;
	char		*call_id;	/* MSG_TOOL: the call this answers */
	char		*name;		/* MSG_TOOL: the tool's name */
	int		 is_error;	/* MSG_TOOL: the result is an error */
};

struct msg_list {
	struct msg	*v;
	size_t		 n;
	size_t		 cap;
};

/* Token counts as the API reported them; 0 means not reported. */
struct msg_usage {
	uint64_t	input;
	uint64_t	output;
};

/* A tool as offered to the model. */
struct msg_tool {
	char	*name;
	char	*description;
	char	*schema;	/* JSON Schema of the arguments, as JSON text */
};

/* Why the model stopped. */
enum msg_stop {
	MSG_STOP_END = 0,	/* finished its turn */
	MSG_STOP_TOOL_CALLS,	/* asked for tool calls */
	MSG_STOP_LENGTH,	/* hit the output token limit */
	MSG_STOP_OTHER,		/* content filter, refusal, unknown */
};

/* One answer of the model: an assistant message and what it cost. */
struct msg_reply {
	struct msg	 msg;
	struct msg_usage usage;
	enum msg_stop	 stop;
};

/* msg.c */
const char	*msg_role_name(enum msg_role role);
int		 msg_role_parse(const char *name, enum msg_role *role);
const char	*msg_stop_name(enum msg_stop stop);
int		 msg_stop_parse(const char *name, enum msg_stop *stop);

/* Deep copy; -1 (ENOMEM) leaves dst zeroed. */
int		 msg_copy(struct msg *dst, const struct msg *src);
void		 msg_free(struct msg *m);
/* Append a call to an assistant message (copies the strings). */
int		 msg_add_call(struct msg *m, const char *id, const char *name,
		    const char *args);

void		 msg_list_init(struct msg_list *l);
/* Append a deep copy of m. */
int		 msg_list_add(struct msg_list *l, const struct msg *m);
/* Append m itself, taking ownership of its strings (m is zeroed). */
int		 msg_list_take(struct msg_list *l, struct msg *m);
/* Append a text message with role and text (copied). */
int		 msg_list_add_text(struct msg_list *l, enum msg_role role,
		    const char *text);
/* Remove n messages starting at index i, freeing them. */
void		 msg_list_remove(struct msg_list *l, size_t i, size_t n);
int		 msg_list_copy(struct msg_list *dst, const struct msg_list *src);
void		 msg_list_free(struct msg_list *l);

int		 msg_tool_copy(struct msg_tool *dst, const struct msg_tool *src);
void		 msg_tool_free(struct msg_tool *t);
void		 msg_reply_free(struct msg_reply *r);

/* Characters of text, call names and arguments: the base of token estimates. */
size_t		 msg_chars(const struct msg *m);

#endif

/*
 * Anthropic Messages: system prompt in its own field, tool_use and
 * tool_result content blocks, consecutive same-role turns merged (the API
 * insists on alternation), streaming by content-block events.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "llm/llm_int.h"

#define ANTHROPIC_DEFAULT_MAX_TOKENS	4096

static int
llm_anthropic_text_block(json_t *content, const char *text)
{
	json_t	*b;

	if (text == NULL || *text == '\0')
		return 0;	/* empty text blocks are refused by the API */
	if ((b = json_pack("{s:s}", "type", "text")) == NULL ||
	    llm_json_setstr(b, "text", text) == -1) {
		json_decref(b);
		return -1;
	}
	return json_array_append_new(content, b);
}

static int
llm_anthropic_blocks(json_t *content, const struct msg *m)
{
	json_t	*b;
	size_t	 i;

	if (m->role == MSG_TOOL) {
		b = json_pack("{s:s, s:s, s:b}", "type", "tool_result",
		    "tool_use_id", m->call_id != NULL ? m->call_id : "",
		    "is_error", m->is_error);
		if (b == NULL || llm_json_setstr(b, "content",
		    m->text != NULL ? m->text : "") == -1) {
			json_decref(b);
			return -1;
		}
		return json_array_append_new(content, b);
	}
	if (llm_anthropic_text_block(content, m->text) == -1)
		return -1;
	for (i = 0; i < m->ncalls; i++) {
		b = json_pack("{s:s, s:s, s:s, s:o}", "type", "tool_use",
		    "id", m->calls[i].id != NULL ? m->calls[i].id : "",
		    "name", m->calls[i].name != NULL ? m->calls[i].name : "",
		    "input", llm_json_args(m->calls[i].args));
		if (b == NULL || json_array_append_new(content, b) == -1)
			return -1;
	}
	return 0;
}

/* Append m to the message list, merging into the last turn of its role. */
static int
llm_anthropic_add(json_t *msgs, const struct msg *m)
{
	const char	*role;
	json_t		*last, *content;
	size_t		 n;

	role = m->role == MSG_ASSISTANT ? "assistant" : "user";
	n = json_array_size(msgs);
	last = n > 0 ? json_array_get(msgs, n - 1) : NULL;
	if (last != NULL && strcmp(llm_json_str(last, "role"), role) == 0)
		content = json_object_get(last, "content");
	else {
		last = json_pack("{s:s, s:[]}", "role", role, "content");
		if (last == NULL || json_array_append_new(msgs, last) == -1)
			return -1;
		content = json_object_get(last, "content");
	}
	return llm_anthropic_blocks(content, m);
}

/* {name, description, input_schema} */
static json_t *
llm_anthropic_tool(const struct msg_tool *tool, json_t **descp)
{
	json_t	*t;

	t = json_pack("{s:s, s:o}", "name", tool->name,
	    "input_schema", llm_json_schema(tool->schema));
	*descp = t;
	return t;
}

static char *
llm_anthropic_build(const struct llm_wire_req *req, char *err, size_t errsz)
{
	static const struct llm_body body = {
		.list_key = "messages",
		.system_key = "system",
		.add = llm_anthropic_add,
		.tool = llm_anthropic_tool,
	};

	return llm_json_body(req, json_pack("{s:s, s:I, s:b}", "model",
	    req->model, "max_tokens", (json_int_t)(req->max_tokens > 0 ?
	    req->max_tokens : ANTHROPIC_DEFAULT_MAX_TOKENS), "stream",
	    req->stream), &body, err, errsz);
}

static void
llm_anthropic_stop(struct llm_acc *a, const char *reason)
{
	if (reason == NULL)
		return;
	a->stopped = 1;
	if (strcmp(reason, "end_turn") == 0 ||
	    strcmp(reason, "stop_sequence") == 0)
		a->stop = MSG_STOP_END;
	else if (strcmp(reason, "tool_use") == 0)
		a->stop = MSG_STOP_TOOL_CALLS;
	else if (strcmp(reason, "max_tokens") == 0)
		a->stop = MSG_STOP_LENGTH;
	else
		a->stop = MSG_STOP_OTHER;
}

static void
llm_anthropic_usage(struct llm_acc *a, json_t *u)
{
	uint64_t	in;

	if (!json_is_object(u))
		return;
	/* Cached prompt tokens count as input too. */
	in = llm_json_u64(u, "input_tokens") +
	    llm_json_u64(u, "cache_creation_input_tokens") +
	    llm_json_u64(u, "cache_read_input_tokens");
	if (in > 0)
		a->usage.input = in;
	if (json_is_integer(json_object_get(u, "output_tokens")))
		a->usage.output = llm_json_u64(u, "output_tokens");
}

static int
llm_anthropic_error(struct llm_acc *a, json_t *o)
{
	json_t		*e = json_object_get(o, "error");
	const char	*msg = NULL, *type = NULL;

	a->server_error = 1;
	if (json_is_object(e)) {
		msg = llm_json_str(e, "message");
		type = llm_json_str(e, "type");
	}
	return llm_acc_fail(a, "server error: %.300s (%.60s)",
	    msg != NULL ? msg : "no message", type != NULL ? type : "error");
}

/* A tool_use block, whole (answer) or opening (stream). */
static int
llm_anthropic_tool_use(struct llm_acc *a, json_t *b, const char *key,
    int whole)
{
	struct llm_acc_call	*c;
	json_t			*in;
	char			*s;
	int			 rc;

	if ((c = llm_acc_call_open(a, key, llm_json_str(b, "id"),
	    llm_json_str(b, "name"))) == NULL)
		return -1;
	in = json_object_get(b, "input");
	/* Streams open with "input": {} and send the JSON as deltas. */
	if (!whole || !json_is_object(in))
		return 0;
	if ((s = llm_json_dump(in)) == NULL)
		return llm_acc_fail(a, "out of memory");
	rc = llm_acc_args(a, c, s, strlen(s));
	free(s);
	return rc;
}

static int
llm_anthropic_parse(struct llm_acc *a, const char *body, size_t len)
{
	json_t		*o, *content, *b;
	const char	*type, *t;
	char		 key[32];
	size_t		 i;
	int		 rc = -1;

	if ((o = llm_json_parse(body, len, a->err, sizeof(a->err))) == NULL)
		return -1;
	if ((type = llm_json_str(o, "type")) != NULL &&
	    strcmp(type, "error") == 0) {
		llm_anthropic_error(a, o);
		goto out;
	}
	content = json_object_get(o, "content");
	if (!json_is_array(content)) {
		llm_acc_fail(a, "answer has no content array");
		goto out;
	}
	json_array_foreach(content, i, b) {
		if (!json_is_object(b) || (type = llm_json_str(b, "type")) ==
		    NULL)
			continue;
		if (strcmp(type, "text") == 0 && (t = llm_json_str(b,
		    "text")) != NULL && llm_acc_text(a, t, strlen(t)) == -1)
			goto out;
		snprintf(key, sizeof(key), "%zu", i);
		if (strcmp(type, "tool_use") == 0 &&
		    llm_anthropic_tool_use(a, b, key, 1) == -1)
			goto out;
		/* thinking and other blocks are not part of the reply */
	}
	llm_anthropic_stop(a, llm_json_str(o, "stop_reason"));
	llm_anthropic_usage(a, json_object_get(o, "usage"));
	a->done = 1;
	rc = 0;
out:
	json_decref(o);
	return rc;
}

static int
llm_anthropic_block_start(struct llm_acc *a, json_t *o)
{
	json_t		*b = json_object_get(o, "content_block");
	const char	*type, *t;
	char		 key[32];

	if (!json_is_object(b) || (type = llm_json_str(b, "type")) == NULL)
		return llm_acc_fail(a, "content_block_start without a block");
	snprintf(key, sizeof(key), "%llu",
	    (unsigned long long)llm_json_u64(o, "index"));
	if (strcmp(type, "tool_use") == 0)
		return llm_anthropic_tool_use(a, b, key, 0);
	if (strcmp(type, "text") == 0 && (t = llm_json_str(b, "text")) != NULL)
		return llm_acc_text(a, t, strlen(t));
	return 0;
}

static int
llm_anthropic_block_delta(struct llm_acc *a, json_t *o)
{
	struct llm_acc_call	*c;
	json_t			*d = json_object_get(o, "delta");
	const char		*type, *t;
	char			 key[32];
	size_t			 i;

	if (!json_is_object(d) || (type = llm_json_str(d, "type")) == NULL)
		return llm_acc_fail(a, "content_block_delta without a delta");
	if (strcmp(type, "text_delta") == 0) {
		if ((t = llm_json_str(d, "text")) == NULL)
			return llm_acc_fail(a, "text_delta without text");
		return llm_acc_text(a, t, strlen(t));
	}
	if (strcmp(type, "input_json_delta") != 0)
		return 0;	/* thinking, signatures, citations */
	if ((t = llm_json_str(d, "partial_json")) == NULL)
		return llm_acc_fail(a, "input_json_delta without partial_json");
	snprintf(key, sizeof(key), "%llu",
	    (unsigned long long)llm_json_u64(o, "index"));
	/* Only add to a block that was opened as a tool_use. */
	for (i = 0; i < a->ncalls; i++) {
		c = &a->calls[i];
		if (strcmp(c->key, key) == 0)
			return llm_acc_args(a, c, t, strlen(t));
	}
	return llm_acc_fail(a, "input_json_delta for block %s, which is not "
	    "a tool_use", key);
}

static int
llm_anthropic_event(struct llm_acc *a, const char *event, const char *data,
    size_t len)
{
	json_t		*o, *d, *m;
	const char	*type;
	int		 rc = 0;

	if ((o = llm_json_parse(data, len, a->err, sizeof(a->err))) == NULL)
		return -1;
	/* The data's own "type" is authoritative; the event name agrees. */
	if ((type = llm_json_str(o, "type")) == NULL)
		type = event;
	if (strcmp(type, "message_start") == 0) {
		m = json_object_get(o, "message");
		if (json_is_object(m))
			llm_anthropic_usage(a, json_object_get(m, "usage"));
	} else if (strcmp(type, "content_block_start") == 0)
		rc = llm_anthropic_block_start(a, o);
	else if (strcmp(type, "content_block_delta") == 0)
		rc = llm_anthropic_block_delta(a, o);
	else if (strcmp(type, "message_delta") == 0) {
		d = json_object_get(o, "delta");
		if (json_is_object(d))
			llm_anthropic_stop(a, llm_json_str(d, "stop_reason"));
		llm_anthropic_usage(a, json_object_get(o, "usage"));
	} else if (strcmp(type, "message_stop") == 0)
		a->done = 1;
	else if (strcmp(type, "error") == 0)
		rc = llm_anthropic_error(a, o);
	/* ping, content_block_stop and future events need nothing */
	json_decref(o);
	return rc;
}

const struct llm_wire llm_anthropic_wire = {
	.name = "anthropic",
	.path = "/messages",
	.auth = "x-api-key: ",
	.fixed_header = "anthropic-version: 2023-06-01",
	.build = llm_anthropic_build,
	.parse = llm_anthropic_parse,
	.event = llm_anthropic_event,
};

/*
 * OpenAI-compatible chat completions (OpenAI, Ollama, vLLM, llama.cpp
 * server, LM Studio, OpenRouter): request body, whole answers and SSE
 * chunks with tool-call deltas keyed by their index.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "llm/llm_int.h"

static json_t *
llm_openai_calls(const struct msg *m)
{
	json_t	*arr, *c;
	size_t	 i;

	if ((arr = json_array()) == NULL)
		return NULL;
	for (i = 0; i < m->ncalls; i++) {
		c = json_pack("{s:s, s:s, s:{s:s, s:s}}",
		    "id", m->calls[i].id != NULL ? m->calls[i].id : "",
		    "type", "function", "function",
		    "name", m->calls[i].name != NULL ? m->calls[i].name : "",
		    "arguments", m->calls[i].args != NULL ? m->calls[i].args :
		    "{}");
		if (c == NULL || json_array_append_new(arr, c) == -1) {
			json_decref(arr);
			return NULL;
		}
	}
	return arr;
}

static json_t *
llm_openai_msg(const struct msg *m)
{
	json_t	*o;

	if ((o = json_object()) == NULL)
		return NULL;
	if (json_object_set_new(o, "role",
	    json_string(msg_role_name(m->role))) == -1)
		goto fail;
	if (m->role == MSG_ASSISTANT && m->text == NULL && m->ncalls > 0) {
		if (json_object_set_new(o, "content", json_null()) == -1)
			goto fail;
	} else if (llm_json_setstr(o, "content", m->text) == -1)
		goto fail;
	if (m->role == MSG_ASSISTANT && m->ncalls > 0 &&
	    json_object_set_new(o, "tool_calls", llm_openai_calls(m)) == -1)
		goto fail;
	if (m->role == MSG_TOOL) {
		if (llm_json_setstr(o, "tool_call_id", m->call_id) == -1)
			goto fail;
		if (m->name != NULL && llm_json_setstr(o, "name", m->name) == -1)
			goto fail;
	}
	return o;
fail:
	json_decref(o);
	return NULL;
}

/* {"type":"function","function":{name, description, parameters}} */
static json_t *
llm_openai_tool(const struct msg_tool *tool, json_t **descp)
{
	json_t	*t;

	t = json_pack("{s:s, s:{s:s, s:o}}", "type", "function",
	    "function", "name", tool->name,
	    "parameters", llm_json_schema(tool->schema));
	*descp = t != NULL ? json_object_get(t, "function") : NULL;
	return t;
}

static int
llm_openai_add(json_t *msgs, const struct msg *m)
{
	return json_array_append_new(msgs, llm_openai_msg(m));
}

static char *
llm_openai_build(const struct llm_wire_req *req, char *err, size_t errsz)
{
	static const struct llm_body body = {
		.list_key = "messages",
		.add = llm_openai_add,
		.tool = llm_openai_tool,
		.stream_usage = 1,
		.max_key = "max_tokens",
	};

	return llm_json_body(req, json_pack("{s:s, s:b}", "model", req->model,
	    "stream", req->stream), &body, err, errsz);
}

static void
llm_openai_stop(struct llm_acc *a, const char *reason)
{
	if (reason == NULL)
		return;
	a->stopped = 1;
	if (strcmp(reason, "stop") == 0)
		a->stop = MSG_STOP_END;
	else if (strcmp(reason, "tool_calls") == 0 ||
	    strcmp(reason, "function_call") == 0)
		a->stop = MSG_STOP_TOOL_CALLS;
	else if (strcmp(reason, "length") == 0)
		a->stop = MSG_STOP_LENGTH;
	else
		a->stop = MSG_STOP_OTHER;
}

static void
llm_openai_usage(struct llm_acc *a, json_t *o)
{
	json_t	*u = json_object_get(o, "usage");

	if (!json_is_object(u))
		return;
	a->usage.input = llm_json_u64(u, "prompt_tokens");
	a->usage.output = llm_json_u64(u, "completion_tokens");
}

/* Text content: a string, or (some servers) an array of text parts. */
static int
llm_openai_content(struct llm_acc *a, json_t *content)
{
	json_t		*part;
	const char	*t;
	size_t		 i;

	if (json_is_string(content))
		return llm_acc_text(a, json_string_value(content),
		    json_string_length(content));
	if (!json_is_array(content))
		return 0;
	json_array_foreach(content, i, part) {
		if (json_is_object(part) && (t = llm_json_str(part, "text")) &&
		    llm_acc_text(a, t, strlen(t)) == -1)
			return -1;
	}
	return 0;
}

/* Arguments: a JSON string per the spec, an object from Ollama. */
static int
llm_openai_args(struct llm_acc *a, struct llm_acc_call *c, json_t *args)
{
	char	*s;
	int	 rc;

	if (json_is_string(args))
		return llm_acc_args(a, c, json_string_value(args),
		    json_string_length(args));
	if (json_is_object(args)) {
		if ((s = llm_json_dump(args)) == NULL)
			return llm_acc_fail(a, "out of memory");
		rc = llm_acc_args(a, c, s, strlen(s));
		free(s);
		return rc;
	}
	return 0;
}

/* One tool call, whole or a delta; key is its index or position. */
static int
llm_openai_call(struct llm_acc *a, json_t *tc, size_t pos)
{
	struct llm_acc_call	*c;
	json_t			*fn, *idx;
	char			 key[32];

	if (!json_is_object(tc))
		return llm_acc_fail(a, "tool call is not an object");
	idx = json_object_get(tc, "index");
	if (json_is_integer(idx))
		snprintf(key, sizeof(key), "%lld",
		    (long long)json_integer_value(idx));
	else
		snprintf(key, sizeof(key), "%zu", pos);
	fn = json_object_get(tc, "function");
	if ((c = llm_acc_call_open(a, key, llm_json_str(tc, "id"),
	    json_is_object(fn) ? llm_json_str(fn, "name") : NULL)) == NULL)
		return -1;
	if (json_is_object(fn))
		return llm_openai_args(a, c, json_object_get(fn, "arguments"));
	return 0;
}

static int
llm_openai_calls_in(struct llm_acc *a, json_t *calls)
{
	json_t	*tc;
	size_t	 i;

	if (calls == NULL || json_is_null(calls))
		return 0;
	if (!json_is_array(calls))
		return llm_acc_fail(a, "tool_calls is not an array");
	json_array_foreach(calls, i, tc) {
		if (llm_openai_call(a, tc, i) == -1)
			return -1;
	}
	return 0;
}

static int
llm_openai_inband_error(struct llm_acc *a, json_t *o)
{
	json_t		*e = json_object_get(o, "error");
	const char	*m = NULL;
	char		*s;

	if (e == NULL || json_is_null(e))
		return 0;
	a->server_error = 1;
	if (json_is_object(e))
		m = llm_json_str(e, "message");
	else if (json_is_string(e))
		m = json_string_value(e);
	if (m != NULL)
		return llm_acc_fail(a, "server error: %.300s", m);
	s = llm_json_dump(e);
	llm_acc_fail(a, "server error: %.300s", s != NULL ? s : "?");
	free(s);
	return -1;
}

static int
llm_openai_parse(struct llm_acc *a, const char *body, size_t len)
{
	json_t	*o, *choices, *ch, *m;
	int	 rc = -1;

	if ((o = llm_json_parse(body, len, a->err, sizeof(a->err))) == NULL)
		return -1;
	if (llm_openai_inband_error(a, o) == -1)
		goto out;
	choices = json_object_get(o, "choices");
	if (!json_is_array(choices) || json_array_size(choices) == 0 ||
	    !json_is_object(ch = json_array_get(choices, 0)) ||
	    !json_is_object(m = json_object_get(ch, "message"))) {
		llm_acc_fail(a, "answer has no choices[0].message");
		goto out;
	}
	if (llm_openai_content(a, json_object_get(m, "content")) == -1 ||
	    llm_openai_calls_in(a, json_object_get(m, "tool_calls")) == -1)
		goto out;
	llm_openai_stop(a, llm_json_str(ch, "finish_reason"));
	llm_openai_usage(a, o);
	a->done = 1;
	rc = 0;
out:
	json_decref(o);
	return rc;
}

static int
llm_openai_event(struct llm_acc *a, const char *event, const char *data,
    size_t len)
{
	json_t	*o, *choices, *ch, *d;
	size_t	 i;
	int	 rc = -1;

	(void)event;
	if (len == 6 && memcmp(data, "[DONE]", 6) == 0) {
		a->done = 1;
		return 0;
	}
	if ((o = llm_json_parse(data, len, a->err, sizeof(a->err))) == NULL)
		return -1;
	if (llm_openai_inband_error(a, o) == -1)
		goto out;
	llm_openai_usage(a, o);
	choices = json_object_get(o, "choices");
	if (choices != NULL && !json_is_array(choices)) {
		llm_acc_fail(a, "choices is not an array");
		goto out;
	}
	json_array_foreach(choices, i, ch) {
		if (!json_is_object(ch))
			continue;
		/* Only the first choice matters; we never ask for n > 1. */
		if (json_is_integer(json_object_get(ch, "index")) &&
		    json_integer_value(json_object_get(ch, "index")) != 0)
			continue;
		d = json_object_get(ch, "delta");
		if (json_is_object(d) && (llm_openai_content(a,
		    json_object_get(d, "content")) == -1 ||
		    llm_openai_calls_in(a, json_object_get(d,
		    "tool_calls")) == -1))
			goto out;
		llm_openai_stop(a, llm_json_str(ch, "finish_reason"));
	}
	rc = 0;
out:
	json_decref(o);
	return rc;
}

const struct llm_wire llm_openai_wire = {
	.name = "openai",
	.path = "/chat/completions",
	.auth = "Authorization: Bearer ",
	.fixed_header = NULL,
	.build = llm_openai_build,
	.parse = llm_openai_parse,
	.event = llm_openai_event,
};

const struct llm_wire *
llm_wire_get(enum llm_provider p)
{
	switch (p) {
	case LLM_PROVIDER_OPENAI:
		return &llm_openai_wire;
	case LLM_PROVIDER_ANTHROPIC:
		return &llm_anthropic_wire;
	case LLM_PROVIDER_RESPONSES:
		return &llm_responses_wire;
	}
	return &llm_openai_wire;
}

/*
 * OpenAI Responses: the conversation as input items (messages,
 * function_call, function_call_output), system text as instructions,
 * output items in the answer, typed stream events keyed by output index.
 * Requests are sent with "store": false: warren keeps its own history.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "llm/llm_int.h"

static int
llm_responses_item(json_t *input, const struct msg *m)
{
	json_t	*it;
	size_t	 i;

	if (m->role == MSG_TOOL) {
		it = json_pack("{s:s, s:s}", "type", "function_call_output",
		    "call_id", m->call_id != NULL ? m->call_id : "");
		if (it == NULL || llm_json_setstr(it, "output",
		    m->text != NULL ? m->text : "") == -1) {
			json_decref(it);
			return -1;
		}
		return json_array_append_new(input, it);
	}
	if (m->text != NULL && *m->text != '\0') {
		it = json_pack("{s:s, s:s}", "type", "message", "role",
		    msg_role_name(m->role));
		if (it == NULL || llm_json_setstr(it, "content", m->text) == -1) {
			json_decref(it);
			return -1;
		}
		/* append_new takes it even when it fails: no decref. */
		if (json_array_append_new(input, it) == -1)
			return -1;
	}
	for (i = 0; i < m->ncalls; i++) {
		it = json_pack("{s:s, s:s, s:s, s:s}", "type", "function_call",
		    "call_id", m->calls[i].id != NULL ? m->calls[i].id : "",
		    "name", m->calls[i].name != NULL ? m->calls[i].name : "",
		    "arguments", m->calls[i].args != NULL ? m->calls[i].args :
		    "{}");
		if (it == NULL || json_array_append_new(input, it) == -1)
			return -1;
	}
	return 0;
}

/* {"type":"function", name, description, parameters} */
static json_t *
llm_responses_tool(const struct msg_tool *tool, json_t **descp)
{
	json_t	*t;

	t = json_pack("{s:s, s:s, s:o}", "type", "function",
	    "name", tool->name, "parameters", llm_json_schema(tool->schema));
	*descp = t;
	return t;
}

static char *
llm_responses_build(const struct llm_wire_req *req, char *err, size_t errsz)
{
	static const struct llm_body body = {
		.list_key = "input",
		.system_key = "instructions",
		.add = llm_responses_item,
		.tool = llm_responses_tool,
		.max_key = "max_output_tokens",
	};

	return llm_json_body(req, json_pack("{s:s, s:b, s:b}", "model",
	    req->model, "stream", req->stream, "store", 0), &body, err,
	    errsz);
}

static int
llm_responses_message(struct llm_acc *a, json_t *item)
{
	json_t		*content, *part;
	const char	*type, *t;
	size_t		 i;

	content = json_object_get(item, "content");
	json_array_foreach(content, i, part) {
		if (!json_is_object(part) ||
		    (type = llm_json_str(part, "type")) == NULL)
			continue;
		if (strcmp(type, "output_text") == 0 &&
		    (t = llm_json_str(part, "text")) != NULL &&
		    llm_acc_text(a, t, strlen(t)) == -1)
			return -1;
		if (strcmp(type, "refusal") == 0) {
			a->stop = MSG_STOP_OTHER;
			a->stopped = 1;
			if ((t = llm_json_str(part, "refusal")) != NULL &&
			    llm_acc_text(a, t, strlen(t)) == -1)
				return -1;
		}
	}
	return 0;
}

/* A function_call item; whole replaces arguments streamed so far. */
static int
llm_responses_call(struct llm_acc *a, json_t *item, const char *key,
    int whole)
{
	struct llm_acc_call	*c;
	json_t			*args;

	if ((c = llm_acc_call_open(a, key, llm_json_str(item, "call_id"),
	    llm_json_str(item, "name"))) == NULL)
		return -1;
	args = json_object_get(item, "arguments");
	if (!json_is_string(args) || (!whole && json_string_length(args) == 0))
		return 0;
	buf_reset(&c->args);
	return llm_acc_args(a, c, json_string_value(args),
	    json_string_length(args));
}

static void
llm_responses_status(struct llm_acc *a, json_t *r)
{
	json_t		*u, *inc;
	const char	*status, *reason = NULL;

	u = json_object_get(r, "usage");
	if (json_is_object(u)) {
		a->usage.input = llm_json_u64(u, "input_tokens");
		a->usage.output = llm_json_u64(u, "output_tokens");
	}
	if ((status = llm_json_str(r, "status")) == NULL)
		return;
	a->stopped = 1;
	if (strcmp(status, "completed") == 0) {
		if (a->stop != MSG_STOP_OTHER)
			a->stop = MSG_STOP_END;
		return;
	}
	inc = json_object_get(r, "incomplete_details");
	if (json_is_object(inc))
		reason = llm_json_str(inc, "reason");
	if (reason != NULL && strcmp(reason, "max_output_tokens") == 0)
		a->stop = MSG_STOP_LENGTH;
	else
		a->stop = MSG_STOP_OTHER;
}

static int
llm_responses_failed(struct llm_acc *a, json_t *r)
{
	json_t		*e = json_object_get(r, "error");
	const char	*msg = NULL;

	a->server_error = 1;
	if (json_is_object(e))
		msg = llm_json_str(e, "message");
	if (msg == NULL)
		msg = llm_json_str(r, "message");
	return llm_acc_fail(a, "server error: %.300s",
	    msg != NULL ? msg : "response failed");
}

static int
llm_responses_output(struct llm_acc *a, json_t *r)
{
	json_t		*out, *item;
	const char	*type;
	char		 key[32];
	size_t		 i;

	out = json_object_get(r, "output");
	if (!json_is_array(out))
		return llm_acc_fail(a, "answer has no output array");
	json_array_foreach(out, i, item) {
		if (!json_is_object(item) ||
		    (type = llm_json_str(item, "type")) == NULL)
			continue;
		snprintf(key, sizeof(key), "%zu", i);
		if (strcmp(type, "message") == 0 &&
		    llm_responses_message(a, item) == -1)
			return -1;
		if (strcmp(type, "function_call") == 0 &&
		    llm_responses_call(a, item, key, 1) == -1)
			return -1;
	}
	return 0;
}

static int
llm_responses_parse(struct llm_acc *a, const char *body, size_t len)
{
	json_t		*o;
	const char	*status;
	int		 rc = -1;

	if ((o = llm_json_parse(body, len, a->err, sizeof(a->err))) == NULL)
		return -1;
	status = llm_json_str(o, "status");
	if ((status != NULL && strcmp(status, "failed") == 0) ||
	    json_is_object(json_object_get(o, "error"))) {
		llm_responses_failed(a, o);
		goto out;
	}
	if (llm_responses_output(a, o) == -1)
		goto out;
	llm_responses_status(a, o);
	a->done = 1;
	rc = 0;
out:
	json_decref(o);
	return rc;
}

static int
llm_responses_event(struct llm_acc *a, const char *event, const char *data,
    size_t len)
{
	json_t		*o, *item, *r;
	const char	*type, *t;
	char		 key[32];
	int		 rc = 0;

	if ((o = llm_json_parse(data, len, a->err, sizeof(a->err))) == NULL)
		return -1;
	if ((type = llm_json_str(o, "type")) == NULL)
		type = event;
	snprintf(key, sizeof(key), "%llu",
	    (unsigned long long)llm_json_u64(o, "output_index"));
	item = json_object_get(o, "item");
	r = json_object_get(o, "response");
	if (strcmp(type, "response.output_text.delta") == 0 ||
	    strcmp(type, "response.refusal.delta") == 0) {
		if ((t = llm_json_str(o, "delta")) != NULL)
			rc = llm_acc_text(a, t, strlen(t));
	} else if ((strcmp(type, "response.output_item.added") == 0 ||
	    strcmp(type, "response.output_item.done") == 0) &&
	    json_is_object(item) && (t = llm_json_str(item, "type")) != NULL &&
	    strcmp(t, "function_call") == 0)
		rc = llm_responses_call(a, item, key,
		    strcmp(type, "response.output_item.done") == 0);
	else if (strcmp(type, "response.function_call_arguments.delta") == 0) {
		if ((t = llm_json_str(o, "delta")) != NULL) {
			struct llm_acc_call *c;

			if ((c = llm_acc_call(a, key)) == NULL)
				rc = -1;
			else
				rc = llm_acc_args(a, c, t, strlen(t));
		}
	} else if (strcmp(type, "response.completed") == 0 ||
	    strcmp(type, "response.incomplete") == 0) {
		if (json_is_object(r))
			llm_responses_status(a, r);
		a->stopped = 1;
		a->done = 1;
	} else if (strcmp(type, "response.failed") == 0)
		rc = llm_responses_failed(a, json_is_object(r) ? r : o);
	else if (strcmp(type, "error") == 0)
		rc = llm_responses_failed(a, o);
	json_decref(o);
	return rc;
}

const struct llm_wire llm_responses_wire = {
	.name = "responses",
	.path = "/responses",
	.auth = "Authorization: Bearer ",
	.fixed_header = NULL,
	.build = llm_responses_build,
	.parse = llm_responses_parse,
	.event = llm_responses_event,
};

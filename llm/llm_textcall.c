/*
 * Tool calling for models without it: the tools are described in the
 * system prompt, the model answers with Hermes-style
 * <tool_call>{"name": ..., "arguments": {...}}</tool_call> blocks (or a
 * fenced ```json block holding such an object or an array of them), and
 * the calls are moved out of the text into the neutral model. Earlier
 * calls and their results are written back as text the same way, so the
 * model sees a consistent transcript.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/str.h"
#include "llm/llm_int.h"

static const char textcall_intro[] =
    "# Tools\n\n"
    "You may call one or more tools to help with the task. The tools are "
    "described below as JSON: name, description and the JSON Schema of "
    "their arguments.\n\n<tools>\n";

static const char textcall_howto[] =
    "</tools>\n\n"
    "To call a tool, write a block like this, one per call, and then stop "
    "and wait for the results:\n"
    "<tool_call>\n{\"name\": \"TOOL_NAME\", \"arguments\": {...}}\n"
    "</tool_call>\n"
    "Results come back in <tool_response> blocks. When you need no tool, "
    "answer in plain text.\n";

static int
llm_textcall_tools(struct buf *b, const struct msg_tool *tools, size_t n)
{
	json_t	*t;
	char	*s;
	size_t	 i;
	int	 rc;

	if (buf_addstr(b, textcall_intro) == -1)
		return -1;
	for (i = 0; i < n; i++) {
		t = json_pack("{s:s, s:s, s:o}", "name", tools[i].name,
		    "description", tools[i].description != NULL ?
		    tools[i].description : "", "parameters",
		    llm_json_schema(tools[i].schema));
		if (t == NULL)
			return -1;
		s = json_dumps(t, JSON_COMPACT);
		json_decref(t);
		if (s == NULL)
			return -1;
		rc = buf_addf(b, "%s\n", s);
		free(s);
		if (rc == -1)
			return -1;
	}
	return buf_addstr(b, textcall_howto);
}

/* An assistant turn with calls, as the model would have written it. */
static int
llm_textcall_calls_text(struct buf *b, const struct msg *m)
{
	json_t	*o;
	char	*s;
	size_t	 i;
	int	 rc;

	if (m->text != NULL && buf_addf(b, "%s\n", m->text) == -1)
		return -1;
	for (i = 0; i < m->ncalls; i++) {
		o = json_pack("{s:s, s:o}", "name", m->calls[i].name != NULL ?
		    m->calls[i].name : "", "arguments",
		    llm_json_args(m->calls[i].args));
		if (o == NULL)
			return -1;
		s = json_dumps(o, JSON_COMPACT);
		json_decref(o);
		if (s == NULL)
			return -1;
		rc = buf_addf(b, "<tool_call>\n%s\n</tool_call>\n", s);
		free(s);
		if (rc == -1)
			return -1;
	}
	return 0;
}

/* A tool result as a <tool_response> block holding a JSON object. */
static int
llm_textcall_result(struct buf *b, const struct msg *m)
{
	json_t	*o;
	char	*s;
	int	 rc;

	o = json_pack("{s:s, s:b}", "name", m->name != NULL ? m->name : "",
	    "error", m->is_error);
	if (o == NULL || llm_json_setstr(o, "content", m->text) == -1) {
		json_decref(o);
		return -1;
	}
	s = json_dumps(o, JSON_COMPACT);
	json_decref(o);
	if (s == NULL)
		return -1;
	rc = buf_addf(b, "<tool_response>\n%s\n</tool_response>\n", s);
	free(s);
	return rc;
}

static int
llm_textcall_add(struct msg_list *out, enum msg_role role, struct buf *b)
{
	struct msg	m;

	memset(&m, 0, sizeof(m));
	m.role = role;
	if ((m.text = buf_release(b, NULL)) == NULL)
		return -1;
	if (msg_list_take(out, &m) == -1) {
		msg_free(&m);
		return -1;
	}
	return 0;
}

int
llm_textcall_rewrite(const struct msg_list *in, const struct msg_tool *tools,
    size_t ntools, struct msg_list *out)
{
	const struct msg	*m;
	struct buf		 b;
	size_t			 i = 0;

	msg_list_init(out);
	buf_init(&b, 0);
	/* The system prompt, then the tools. */
	if (in->n > 0 && in->v[0].role == MSG_SYSTEM) {
		if (in->v[0].text != NULL &&
		    buf_addf(&b, "%s\n\n", in->v[0].text) == -1)
			goto fail;
		i = 1;
	}
	if (ntools > 0 && llm_textcall_tools(&b, tools, ntools) == -1)
		goto fail;
	if (b.len > 0 && llm_textcall_add(out, MSG_SYSTEM, &b) == -1)
		goto fail;
	for (; i < in->n; i++) {
		m = &in->v[i];
		if (m->role == MSG_ASSISTANT && m->ncalls > 0) {
			if (llm_textcall_calls_text(&b, m) == -1 ||
			    llm_textcall_add(out, MSG_ASSISTANT, &b) == -1)
				goto fail;
		} else if (m->role == MSG_TOOL) {
			/* Consecutive results share one user turn. */
			for (; i < in->n && in->v[i].role == MSG_TOOL; i++) {
				if (llm_textcall_result(&b, &in->v[i]) == -1)
					goto fail;
			}
			i--;
			if (llm_textcall_add(out, MSG_USER, &b) == -1)
				goto fail;
		} else if (msg_list_add(out, m) == -1)
			goto fail;
	}
	buf_free(&b);
	return 0;
fail:
	buf_free(&b);
	msg_list_free(out);
	return -1;
}

/* One call object: {"name": "x", "arguments": {...} or "..."}. */
static int
llm_textcall_obj(json_t *o, struct msg *calls, size_t *n)
{
	json_t		*args;
	const char	*name;
	char		*s, id[32];
	int		 rc;

	if (!json_is_object(o) || (name = llm_json_str(o, "name")) == NULL ||
	    *name == '\0' || strlen(name) > LLM_MAX_NAME)
		return -1;
	if ((args = json_object_get(o, "arguments")) == NULL)
		args = json_object_get(o, "parameters");
	if (args == NULL)
		s = strdup("{}");
	else if (json_is_string(args))
		s = strdup(json_string_value(args));
	else if (json_is_object(args))
		s = json_dumps(args, JSON_COMPACT);
	else
		return -1;
	if (s == NULL)
		return -1;
	snprintf(id, sizeof(id), "call_%zu", *n);
	rc = *n >= LLM_MAX_CALLS ? -1 : msg_add_call(calls, id, name, s);
	free(s);
	if (rc == 0)
		(*n)++;
	return rc;
}

/*
 * JSON text holding one call object or an array of them. All or nothing:
 * -1 leaves calls as they were.
 */
static int
llm_textcall_json(const char *p, size_t len, struct msg *calls, size_t *n)
{
	json_t	*o, *it;
	size_t	 i, before = calls->ncalls, nbefore = *n;
	int	 rc = 0;

	while (len > 0 && strchr(" \t\r\n", *p) != NULL) {
		p++;
		len--;
	}
	if ((o = json_loadb(p, len, JSON_DECODE_ANY, NULL)) == NULL)
		return -1;
	if (json_is_array(o) && json_array_size(o) > 0) {
		json_array_foreach(o, i, it) {
			if ((rc = llm_textcall_obj(it, calls, n)) == -1)
				break;
		}
	} else
		rc = llm_textcall_obj(o, calls, n);
	json_decref(o);
	if (rc == -1) {
		/* Roll back a partly accepted array. */
		while (calls->ncalls > before) {
			calls->ncalls--;
			free(calls->calls[calls->ncalls].id);
			free(calls->calls[calls->ncalls].name);
			free(calls->calls[calls->ncalls].args);
		}
		*n = nbefore;
	}
	return rc;
}

/*
 * Find blocks between open and close markers; each that holds a call is
 * cut from the text (kept in rest otherwise). An open marker without a
 * close runs to the end (models often stop right before it).
 */
static int
llm_textcall_blocks(const char *text, const char *open, const char *close,
    int skip_lang, struct buf *rest, struct msg *calls, size_t *n)
{
	const char	*p = text, *s, *body, *e, *next;
	size_t		 found = 0;

	while ((s = strstr(p, open)) != NULL) {
		body = s + strlen(open);
		if (skip_lang) {
			/* ```json, ```tool_call ...: skip the info string. */
			while (*body != '\0' && *body != '\n' && *body != '{' &&
			    *body != '[')
				body++;
		}
		if ((e = strstr(body, close)) == NULL) {
			e = body + strlen(body);
			next = e;
		} else
			next = e + strlen(close);
		if (buf_add(rest, p, (size_t)(s - p)) == -1)
			return -1;
		if (llm_textcall_json(body, (size_t)(e - body), calls, n) == 0)
			found++;
		else if (buf_add(rest, s, (size_t)(next - s)) == -1)
			return -1;
		p = next;
	}
	if (buf_addstr(rest, p) == -1)
		return -1;
	return (int)found;
}

/* Trim and hand back the text around the calls (NULL when empty). */
static char *
llm_textcall_trim(struct buf *b)
{
	char	*s, *e, *t;

	if ((s = buf_cstr(b)) == NULL)
		return NULL;
	while (*s != '\0' && strchr(" \t\r\n", *s) != NULL)
		s++;
	e = s + strlen(s);
	while (e > s && strchr(" \t\r\n", e[-1]) != NULL)
		e--;
	if (e == s)
		return NULL;
	t = str_ndup(s, (size_t)(e - s));
	return t;
}

int
llm_textcall_parse(struct msg *m)
{
	struct msg	 calls;
	struct buf	 rest;
	size_t		 n = 0, i;
	int		 found;
	char		*text;

	if (m->text == NULL)
		return 0;
	memset(&calls, 0, sizeof(calls));
	buf_init(&rest, 0);
	found = llm_textcall_blocks(m->text, "<tool_call>", "</tool_call>", 0,
	    &rest, &calls, &n);
	if (found == 0) {
		buf_reset(&rest);
		found = llm_textcall_blocks(m->text, "```", "```", 1, &rest,
		    &calls, &n);
	}
	if (found == 0) {
		buf_reset(&rest);
		/* The whole answer may be one bare call object. */
		if (llm_textcall_json(m->text, strlen(m->text), &calls,
		    &n) == 0)
			found = 1;
	}
	if (found <= 0) {
		buf_free(&rest);
		msg_free(&calls);
		return found < 0 ? -1 : 0;
	}
	text = llm_textcall_trim(&rest);
	buf_free(&rest);
	for (i = 0; i < calls.ncalls; i++) {
		if (msg_add_call(m, calls.calls[i].id, calls.calls[i].name,
		    calls.calls[i].args) == -1) {
			free(text);
			msg_free(&calls);
			return -1;
		}
	}
	free(m->text);
	m->text = text;
	msg_free(&calls);
	return (int)n;
}

/*
 * JSON helpers shared by the wire formats: strict parsing with an error
 * that quotes the input safely, the server's own error message, and the
 * conversions of schemas and arguments that models get wrong.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/buf.h"
#include "common/str.h"
#include "llm/llm_int.h"

static void
llm_json_snippet(char *out, size_t outsz, const char *p, size_t len)
{
	size_t	n = len > LLM_SNIPPET ? LLM_SNIPPET : len;
	char	esc[LLM_SNIPPET * 4 + 8];

	str_escape_flags(esc, sizeof(esc), p, n, 0);
	snprintf(out, outsz, "\"%s\"%s", esc, n < len ? "..." : "");
}

json_t *
llm_json_parse(const char *p, size_t len, char *err, size_t errsz)
{
	json_error_t	 je;
	json_t		*o;
	char		 snip[LLM_SNIPPET * 4 + 16], why[JSON_ERROR_TEXT_LENGTH * 4];

	o = json_loadb(p, len, JSON_REJECT_DUPLICATES, &je);
	if (o == NULL) {
		llm_json_snippet(snip, sizeof(snip), p, len);
		/* jansson quotes the offending bytes raw: escape them. */
		str_escape(why, sizeof(why), je.text, strlen(je.text));
		snprintf(err, errsz, "malformed JSON (%s at byte %d): %s",
		    why, je.position, snip);
		return NULL;
	}
	if (!json_is_object(o)) {
		llm_json_snippet(snip, sizeof(snip), p, len);
		snprintf(err, errsz, "JSON is not an object: %s", snip);
		json_decref(o);
		return NULL;
	}
	return o;
}

void
llm_json_errmsg(char *out, size_t outsz, const char *p, size_t len)
{
	json_t		*o, *e;
	const char	*msg = NULL, *type = NULL;
	char		 esc[600];

	if (len == 0) {
		snprintf(out, outsz, "empty body");
		return;
	}
	o = json_loadb(p, len, 0, NULL);
	if (o != NULL && json_is_object(o)) {
		/* {"error":{"message":..,"type":..}} (OpenAI, Anthropic),
		 * {"error":"text"} (Ollama, llama.cpp), {"message":..}. */
		e = json_object_get(o, "error");
		if (json_is_object(e)) {
			msg = llm_json_str(e, "message");
			type = llm_json_str(e, "type");
		} else if (json_is_string(e))
			msg = json_string_value(e);
		if (msg == NULL)
			msg = llm_json_str(o, "message");
	}
	if (msg != NULL) {
		str_escape(esc, sizeof(esc), msg, strlen(msg));
		if (type != NULL)
			snprintf(out, outsz, "%s (%s)", esc, type);
		else
			snprintf(out, outsz, "%s", esc);
	} else
		llm_json_snippet(out, outsz, p, len);
	json_decref(o);
}

const char *
llm_json_str(json_t *o, const char *key)
{
	json_t	*v = json_object_get(o, key);

	return json_is_string(v) ? json_string_value(v) : NULL;
}

uint64_t
llm_json_u64(json_t *o, const char *key)
{
	json_t	*v = json_object_get(o, key);

	if (!json_is_integer(v) || json_integer_value(v) < 0)
		return 0;
	return (uint64_t)json_integer_value(v);
}

json_t *
llm_json_schema(const char *schema)
{
	json_t	*o = NULL;

	if (schema != NULL)
		o = json_loads(schema, 0, NULL);
	if (o != NULL && !json_is_object(o)) {
		json_decref(o);
		o = NULL;
	}
	if (o == NULL)
		o = json_pack("{s:s, s:{}}", "type", "object", "properties");
	return o;
}

json_t *
llm_json_args(const char *args)
{
	json_t	*o = NULL;

	if (args != NULL)
		o = json_loads(args, JSON_DECODE_ANY, NULL);
	if (o != NULL && !json_is_object(o)) {
		json_decref(o);
		o = NULL;
	}
	if (o == NULL)
		o = json_object();
	return o;
}

char *
llm_json_dump(json_t *o)
{
	return json_dumps(o, JSON_COMPACT | JSON_ENSURE_ASCII);
}

/* Every system message's text, joined, as the string under key. */
static int	 llm_json_system(json_t *o, const char *key, const struct msg_list *l);
/* A request's tools array; make() builds one tool's object in the wire's
 * shape and points *descp at the object its description goes in. */
static json_t	*llm_json_tools(const struct msg_tool *tools, size_t n,
	    json_t *(*make)(const struct msg_tool *tool, json_t **descp));

/*
 * A request body from its head o (model, stream and what else the format
 * puts first; taken, freed here): the messages under b->list_key, each
 * added by b->add, the system text lifted out to b->system_key where the
 * format wants it there, the tools, the sampling options. One place for
 * what the three formats share; their differences are b's fields.
 */
char *
llm_json_body(const struct llm_wire_req *req, json_t *o,
    const struct llm_body *b, char *err, size_t errsz)
{
	const struct msg	*m;
	json_t			*list;
	char			*s = NULL;
	size_t			 i;

	if (o == NULL || (list = json_array()) == NULL ||
	    json_object_set_new(o, b->list_key, list) == -1)
		goto out;
	for (i = 0; i < req->msgs->n; i++) {
		m = &req->msgs->v[i];
		if (m->role == MSG_SYSTEM && b->system_key != NULL)
			continue;	/* llm_json_system, below */
		if (b->add(list, m) == -1)
			goto out;
	}
	if (b->system_key != NULL && llm_json_system(o, b->system_key,
	    req->msgs) == -1)
		goto out;
	if (req->ntools > 0 && json_object_set_new(o, "tools",
	    llm_json_tools(req->tools, req->ntools, b->tool)) == -1)
		goto out;
	if (b->stream_usage && req->stream && json_object_set_new(o,
	    "stream_options", json_pack("{s:b}", "include_usage", 1)) == -1)
		goto out;
	if (req->cfg->temperature >= 0 && json_object_set_new(o,
	    "temperature", json_real(req->cfg->temperature)) == -1)
		goto out;
	if (b->max_key != NULL && req->max_tokens > 0 &&
	    json_object_set_new(o, b->max_key,
	    json_integer(req->max_tokens)) == -1)
		goto out;
	s = llm_json_dump(o);
out:
	if (s == NULL)
		snprintf(err, errsz, "cannot build the request: out of memory");
	json_decref(o);
	return s;
}

/*
 * A JSON string from text that may not be valid UTF-8 (tool output, file
 * contents): invalid bytes become U+FFFD, so the request stays valid JSON
 * and jansson never refuses it.
 */
json_t *
llm_json_string(const char *s)
{
	json_t	*o;
	struct buf b;
	size_t	 len, i, n;

	if (s == NULL)
		s = "";
	len = strlen(s);
	if (str_utf8_valid(s, len))
		return json_stringn(s, len);
	buf_init(&b, 0);
	for (i = 0; i < len; i += n) {
		for (n = 1; n <= 4 && i + n <= len; n++) {
			if (str_utf8_valid(s + i, n))
				break;
		}
		if (n <= 4 && i + n <= len) {
			if (buf_add(&b, s + i, n) == -1)
				goto fail;
		} else {
			n = 1;
			if (buf_add(&b, "\xef\xbf\xbd", 3) == -1)
				goto fail;
		}
	}
	o = json_stringn(b.len > 0 ? (char *)b.data : "", b.len);
	buf_free(&b);
	return o;
fail:
	buf_free(&b);
	return NULL;
}

/* Set key to a (repaired) string; -1 on allocation failure. */
int
llm_json_setstr(json_t *o, const char *key, const char *s)
{
	json_t	*v;

	if ((v = llm_json_string(s)) == NULL)
		return -1;
	return json_object_set_new(o, key, v);
}

/*
 * Anthropic and Responses take the system prompt as one top-level string:
 * the text of every system message in l, joined by blank lines, set under
 * key; nothing is set when there is none. -1 on allocation failure.
 */
static int
llm_json_system(json_t *o, const char *key, const struct msg_list *l)
{
	struct buf	 sys;
	size_t		 i;
	int		 rc = -1;

	buf_init(&sys, 0);
	for (i = 0; i < l->n; i++) {
		if (l->v[i].role != MSG_SYSTEM)
			continue;
		if ((sys.len > 0 && buf_addstr(&sys, "\n\n") == -1) ||
		    (l->v[i].text != NULL &&
		    buf_addstr(&sys, l->v[i].text) == -1))
			goto out;
	}
	if (sys.len > 0 && (buf_cstr(&sys) == NULL ||
	    llm_json_setstr(o, key, (char *)sys.data) == -1))
		goto out;
	rc = 0;
out:
	buf_free(&sys);
	return rc;
}

static json_t *
llm_json_tools(const struct msg_tool *tools, size_t n,
    json_t *(*make)(const struct msg_tool *tool, json_t **descp))
{
	json_t	*arr, *t, *desc;
	size_t	 i;

	if ((arr = json_array()) == NULL)
		return NULL;
	for (i = 0; i < n; i++) {
		t = make(&tools[i], &desc);
		if (t == NULL || desc == NULL || (tools[i].description != NULL &&
		    llm_json_setstr(desc, "description",
		    tools[i].description) == -1)) {
			json_decref(t);
			json_decref(arr);
			return NULL;
		}
		/* append_new takes t even when it fails: no decref. */
		if (json_array_append_new(arr, t) == -1) {
			json_decref(arr);
			return NULL;
		}
	}
	return arr;
}

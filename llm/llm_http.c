/*
 * Pass-through requests (docs/backends.md): a backend program's request,
 * sent as it is to the configured endpoint on the program's own wire with
 * the user's key added, through the same queue, concurrency cap, retries,
 * rate gate and cassettes as every turn. The answer comes back as the
 * endpoint sent it (bounded by max_response), with the tokens it reports
 * read from it for the run's budget.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <jansson.h>

#include "common/clock.h"
#include "common/log.h"
#include "common/urlmask.h"
#include "llm/llm_engine_int.h"

/* The wire of a request against the engine's: anthropic only to an
 * anthropic endpoint; openai and responses to an OpenAI-style one (the
 * two share a base URL and the Bearer key). */
const char *
llm_http_wire_check(const struct llm_engine *e, const char *wire)
{
	const char	*mine = e->wire->name;

	if (strcmp(wire, "anthropic") == 0)
		return strcmp(mine, "anthropic") == 0 ? NULL : mine;
	if (strcmp(wire, "openai") == 0 || strcmp(wire, "responses") == 0)
		return strcmp(mine, "anthropic") != 0 ? NULL : mine;
	return mine;
}

/*
 * What a program's request may not ask of the endpoint: to reach the
 * network for it. A server-side tool (web search and fetch, MCP
 * connectors), an MCP server list, or a URL for the endpoint to fetch (an
 * image or document source, a file URL) would carry the workspace past
 * the sandbox's "no network" through the model's provider. A tool_use's
 * own input and the schemas of tools are the program's, not the
 * endpoint's, and are not looked into.
 */
#define HTTP_NITEMS(a)	(sizeof(a) / sizeof((a)[0]))

static const char *const http_server_tools[] = { "web_search", "web_fetch",
    "mcp", "computer_use_preview", "file_search", "image_generation" };
static const char *const http_url_keys[] = { "url", "image_url", "file_url",
    "server_url" };
static const char *const http_skip_keys[] = { "input_schema",
    "parameters", "schema" };

static int
llm_http_in(const char *s, const char *const *set, size_t n, int prefix)
{
	size_t	i;

	for (i = 0; i < n; i++)
		if (prefix ? strncmp(s, set[i], strlen(set[i])) == 0 :
		    strcmp(s, set[i]) == 0)
			return 1;
	return 0;
}

static int
llm_http_walk(json_t *v, int depth, char *why, size_t whylen)
{
	const char	*k, *sv, *tv;
	json_t		*x;
	size_t		 i;

	if (depth > 128)
		return snprintf(why, whylen, "JSON nested deeper than 128"), -1;
	if (json_is_array(v)) {
		json_array_foreach(v, i, x)
			if (llm_http_walk(x, depth + 1, why, whylen) == -1)
				return -1;
		return 0;
	}
	if (!json_is_object(v))
		return 0;
	json_object_foreach(v, k, x) {
		sv = json_is_string(x) ? json_string_value(x) : NULL;
		if (strcmp(k, "mcp_servers") == 0)
			return snprintf(why, whylen, "mcp_servers: the endpoint "
			    "would connect to them"), -1;
		if (sv != NULL && strcmp(k, "type") == 0 && llm_http_in(sv,
		    http_server_tools, HTTP_NITEMS(http_server_tools), 1))
			return snprintf(why, whylen, "a server-side tool (%.64s):"
			    " the endpoint would reach the network", sv), -1;
		if (sv != NULL && llm_http_in(k, http_url_keys,
		    HTTP_NITEMS(http_url_keys), 0) && (strncasecmp(sv, "http:", 5) ==
		    0 || strncasecmp(sv, "https:", 6) == 0))
			return snprintf(why, whylen, "%s %.64s: the endpoint "
			    "would fetch it", k, sv), -1;
		if (llm_http_in(k, http_skip_keys, HTTP_NITEMS(http_skip_keys),
		    0) || (strcmp(k, "input") == 0 && (tv = json_string_value(
		    json_object_get(v, "type"))) != NULL &&
		    strcmp(tv, "tool_use") == 0))
			continue;
		if (llm_http_walk(x, depth + 1, why, whylen) == -1)
			return -1;
	}
	return 0;
}

int
llm_http_body_check(const char *body, char *why, size_t whylen)
{
	json_t	*o;
	int	 rc;

	if ((o = json_loads(body, 0, NULL)) == NULL) {
		snprintf(why, whylen, "the body is not JSON");
		return -1;
	}
	/* Responses' background mode answers "queued" and goes on with the
	 * work on the endpoint's side: its tokens would never be counted. */
	if (json_is_object(o) && json_is_true(json_object_get(o,
	    "background"))) {
		snprintf(why, whylen, "background: the answer would come after "
		    "the request, past the run's budget");
		json_decref(o);
		return -1;
	}
	rc = llm_http_walk(o, 0, why, whylen);
	json_decref(o);
	return rc;
}

/* One object's usage: usage, message.usage or response.usage; 1 if it
 * has one. */
static int
llm_http_usage_obj(json_t *o, struct msg_usage *u)
{
	static const char *const holders[] = { "message", "response" };
	json_t		*us, *v;
	uint64_t	 in = 0, out = 0;
	size_t		 i;

	if ((us = json_object_get(o, "usage")) == NULL) {
		for (i = 0; i < 2 && us == NULL; i++)
			if ((v = json_object_get(o, holders[i])) != NULL &&
			    json_is_object(v))
				us = json_object_get(v, "usage");
	}
	if (us == NULL || !json_is_object(us))
		return 0;
	if ((v = json_object_get(us, "input_tokens")) != NULL ||
	    (v = json_object_get(us, "prompt_tokens")) != NULL)
		in = json_is_integer(v) && json_integer_value(v) > 0 ?
		    (uint64_t)json_integer_value(v) : 0;
	if ((v = json_object_get(us, "cache_read_input_tokens")) != NULL &&
	    json_is_integer(v) && json_integer_value(v) > 0)
		in += (uint64_t)json_integer_value(v);
	if ((v = json_object_get(us, "cache_creation_input_tokens")) != NULL &&
	    json_is_integer(v) && json_integer_value(v) > 0)
		in += (uint64_t)json_integer_value(v);
	if ((v = json_object_get(us, "output_tokens")) != NULL ||
	    (v = json_object_get(us, "completion_tokens")) != NULL)
		out = json_is_integer(v) && json_integer_value(v) > 0 ?
		    (uint64_t)json_integer_value(v) : 0;
	/* Counts in a stream are running totals: the largest is the end. */
	if (in > u->input)
		u->input = in;
	if (out > u->output)
		u->output = out;
	return 1;
}

static int
llm_http_usage_json(const char *s, size_t len, struct msg_usage *u)
{
	json_t	*o;
	int	 found = 0;

	if ((o = json_loadb(s, len, JSON_DISABLE_EOF_CHECK, NULL)) == NULL)
		return 0;
	if (json_is_object(o))
		found = llm_http_usage_obj(o, u);
	json_decref(o);
	return found;
}

int
llm_http_usage(const char *body, size_t len, int sse, struct msg_usage *u)
{
	const char	*p = body, *end = body + len, *eol;
	int		 found = 0;

	memset(u, 0, sizeof(*u));
	if (!sse)
		return llm_http_usage_json(body, len, u);
	/* Each "data:" line of the stream that holds a usage. */
	for (; p < end; p = eol + 1) {
		if ((eol = memchr(p, '\n', (size_t)(end - p))) == NULL)
			eol = end;
		if (eol - p > 5 && memcmp(p, "data:", 5) == 0 &&
		    memmem(p, (size_t)(eol - p), "usage", 5) != NULL)
			found += llm_http_usage_json(p + 5,
			    (size_t)(eol - p - 5), u);
		if (eol == end)
			break;
	}
	return found;
}

/*
 * The tokens of an answer: those it reports; a 2xx answer that reports
 * none (an OpenAI-style stream asked without
 * stream_options.include_usage, a server that counts none) is counted by
 * its size, about four bytes a token: the program chooses what it asks,
 * and skipping the run's budget must not be one of its choices.
 */
static void
llm_http_count(struct llm_call *c)
{
	struct llm_result	*res = &c->res;

	if (llm_http_usage(res->http_body, res->http_len,
	    strstr(res->http_type, "text/event-stream") != NULL,
	    &res->reply.usage) > 0 || res->status < 200 || res->status > 299)
		return;
	res->reply.usage.input = (c->bodylen + 3) / 4;
	res->reply.usage.output = (res->http_len + 3) / 4;
	log_info("llm: agent %s step %u: the answer reports no tokens; "
	    "counted %llu in and %llu out by its size", c->agent, c->step,
	    (unsigned long long)res->reply.usage.input,
	    (unsigned long long)res->reply.usage.output);
}

/* The endpoint's URL for path: the base URL ends in /v1 as the program's
 * paths begin with it (docs/backends.md). */
static char *
llm_http_url(const struct llm_engine *e, const char *path)
{
	const char	*base = e->cfg.base_url;
	char		*url;
	size_t		 bl = strlen(base);

	if (bl >= 3 && strcmp(base + bl - 3, "/v1") == 0 &&
	    strncmp(path, "/v1/", 4) == 0)
		path += 3;
	if (asprintf(&url, "%s%s", base, path) == -1)
		return NULL;
	return url;
}

uint64_t
llm_submit_http(struct llm_engine *e, const struct llm_http_request *req,
    llm_done_fn done, void *arg)
{
	struct llm_call	*c;
	char		 why[160];
	size_t		 i;

	if (req == NULL || done == NULL || req->agent == NULL ||
	    req->wire == NULL || req->path == NULL || req->body == NULL ||
	    req->nheaders > LLM_HTTP_HEADERS_MAX ||
	    llm_http_wire_check(e, req->wire) != NULL) {
		errno = EINVAL;
		return 0;
	}
	if (llm_http_body_check(req->body, why, sizeof(why)) == -1) {
		log_warnx("llm: agent %s: request refused: %s", req->agent,
		    why);
		errno = EPERM;
		return 0;
	}
	if ((c = calloc(1, sizeof(*c))) == NULL)
		return 0;
	c->e = e;
	c->http = 1;
	c->step = req->step;
	c->purpose = LLM_PURPOSE_HTTP;
	c->done = done;
	c->arg = arg;
	c->start_ms = clock_mono_ms();
	c->http_wire = strcmp(req->wire, "anthropic") == 0 ? "anthropic" :
	    strcmp(req->wire, "responses") == 0 ? "responses" : "openai";
	if ((c->agent = strdup(req->agent)) == NULL ||
	    (c->model = strdup(e->cfg.model)) == NULL ||
	    (c->body = strdup(req->body)) == NULL ||
	    (c->http_url = llm_http_url(e, req->path)) == NULL ||
	    (c->http_shown = urlmask_dup(c->http_url)) == NULL)
		goto nomem;
	c->bodylen = strlen(c->body);
	c->on_part = req->on_part;
	c->part_arg = req->part_arg;
	for (i = 0; i < req->nheaders; i++) {
		if ((c->http_hdrs[i] = strdup(req->headers[i])) == NULL)
			goto nomem;
		c->nhttp_hdrs = i + 1;
	}
	c->id = e->next_id++;
	c->state = CALL_QUEUED;
	TAILQ_INSERT_TAIL(&e->queue, c, entry);
	e->npending++;
	if (e->replay) {
		if (llm_cassette_find_http(e->cassette, c->agent, c->step,
		    &c->res) == -1)
			llm_call_error(c, LLM_ERR_REPLAY_MISSING, 0, "cassette "
			    "%s has no answer for agent %s step %u (http)",
			    e->cfg.replay, c->agent, c->step);
		else if (c->res.err == LLM_OK)
			llm_http_count(c);
		llm_call_complete(c);
	}
	return c->id;
nomem:
	llm_call_free(c);
	errno = ENOMEM;
	return 0;
}

/*
 * Part of a stream, on to the caller with every copy of the key starred.
 * A copy may straddle two parts: an end of the part that begins the key
 * is held back and goes before the next part (or at the answer's end).
 */
int
llm_http_part(struct llm_call *c, const char *p, size_t len, long status)
{
	const char	*key = c->e->cfg.key;
	char		*buf;
	size_t		 n, hold;

	n = c->http_holdlen + len;
	if ((buf = malloc(n + 1)) == NULL)
		return -1;
	if (c->http_holdlen > 0)
		memcpy(buf, c->http_hold, c->http_holdlen);
	memcpy(buf + c->http_holdlen, p, len);
	(void)llm_key_redact(buf, n, key);
	hold = llm_key_partial(buf, n, key);
	free(c->http_hold);
	c->http_hold = NULL;
	c->http_holdlen = 0;
	if (hold > 0) {
		if ((c->http_hold = malloc(hold)) == NULL) {
			free(buf);
			return -1;
		}
		memcpy(c->http_hold, buf + n - hold, hold);
		c->http_holdlen = hold;
	}
	if (n - hold > 0)
		c->on_part(buf, n - hold, status, c->http_type, c->part_arg);
	free(buf);
	return 0;
}

/* The answer is in: as the endpoint sent it, with its usage read, and
 * the key starred wherever the endpoint echoed it. */
void
llm_http_answered(struct llm_call *c, long status)
{
	struct llm_result	*res = &c->res;

	if (c->resp.len > 0)
		(void)llm_key_redact((char *)c->resp.data, c->resp.len,
		    c->e->cfg.key);
	/* A held end of the stream was not the key after all. */
	if (c->http_parts && c->http_holdlen > 0 && c->on_part != NULL)
		c->on_part(c->http_hold, c->http_holdlen, status,
		    c->http_type, c->part_arg);
	free(c->http_hold);
	c->http_hold = NULL;
	c->http_holdlen = 0;
	if (memchr(c->resp.data != NULL ? (const char *)c->resp.data : "",
	    '\0', c->resp.len) != NULL) {
		llm_call_error(c, LLM_ERR_PARSE, status, "POST %s: the answer "
		    "holds a NUL byte", c->http_shown);
		return;
	}
	free(res->error);
	res->error = NULL;
	res->err = LLM_OK;
	res->status = status;
	if ((res->http_body = malloc(c->resp.len + 1)) == NULL ||
	    (res->http_type = strdup(c->http_type[0] != '\0' ? c->http_type :
	    "application/json")) == NULL) {
		llm_call_error(c, LLM_ERR_SYSTEM, status, "out of memory");
		return;
	}
	if (c->resp.len > 0)
		memcpy(res->http_body, c->resp.data, c->resp.len);
	res->http_body[c->resp.len] = '\0';
	res->http_len = c->resp.len;
	llm_http_count(c);
	if (c->e->gate.spent != NULL)
		c->e->gate.spent(c->e->gate.arg, res->reply.usage.input +
		    res->reply.usage.output);
}

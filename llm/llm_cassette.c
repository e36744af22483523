/*
 * Cassettes: every LLM exchange as one JSON line, keyed by the agent's
 * path in the tree, its step and the purpose, so a parallel run replays
 * deterministically whatever order the agents ask in. The reply is kept
 * in the neutral model, so a cassette recorded against one provider
 * replays under any. Format: docs/cassette.md.
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/str.h"
#include "llm/llm_int.h"

#define CASSETTE_VERSION	1
#define CASSETTE_MAX_LINE	(64u * 1024 * 1024)

struct cassette_entry {
	char		*agent;
	unsigned	 step;
	enum llm_purpose purpose;
	/*
	 * The answer as it will be handed out, decoded once at load: a
	 * reply (err LLM_OK), a recorded error, or why the recorded reply
	 * cannot be used (LLM_ERR_PARSE, told only to the step that asks).
	 * Kept as text and parsed again per answer, it cost every replayed
	 * turn a jansson dump at load and a load at its answer (issue 33);
	 * holding every parsed tree had cost 8 MB of heap a 5,000-line
	 * cassette.
	 */
	enum llm_err	 err;
	long		 status;
	char		*error;		/* escaped, readable; NULL if LLM_OK */
	struct msg_reply reply;		/* valid if LLM_OK */
	/* purpose http: the answer as the endpoint sent it. */
	char		*http_body;
	char		*http_type;
};

struct llm_cassette {
	FILE			*f;		/* record */
	char			*path;
	struct cassette_entry	*v;		/* replay */
	size_t			 n, cap;
	/* Replay index: open addressing on (agent, step, purpose), slot =
	 * entry + 1 (0 free), rebuilt when entries were added. */
	size_t			*idx;
	size_t			 idxcap, idxn;
};

static const char *const purpose_names[] = {
	[LLM_PURPOSE_TURN] = "turn",
	[LLM_PURPOSE_SUMMARY] = "summary",
	[LLM_PURPOSE_HTTP] = "http",
};

const char *
llm_purpose_name(enum llm_purpose p)
{
	if ((size_t)p >= sizeof(purpose_names) / sizeof(purpose_names[0]))
		return "turn";
	return purpose_names[p];
}

static int
llm_cassette_purpose(const char *s, enum llm_purpose *p)
{
	if (s == NULL || strcmp(s, "turn") == 0)
		*p = LLM_PURPOSE_TURN;
	else if (strcmp(s, "summary") == 0)
		*p = LLM_PURPOSE_SUMMARY;
	else if (strcmp(s, "http") == 0)
		*p = LLM_PURPOSE_HTTP;
	else
		return -1;
	return 0;
}

static int
llm_reply_to_json(const struct msg_reply *r, json_t **out)
{
	json_t	*o, *calls, *c;
	size_t	 i;

	o = json_pack("{s:s, s:{s:I, s:I}}", "stop", msg_stop_name(r->stop),
	    "usage", "input", (json_int_t)r->usage.input, "output",
	    (json_int_t)r->usage.output);
	if (o == NULL || (calls = json_array()) == NULL ||
	    json_object_set_new(o, "calls", calls) == -1)
		goto fail;
	if (r->msg.text != NULL && llm_json_setstr(o, "text", r->msg.text) == -1)
		goto fail;
	for (i = 0; i < r->msg.ncalls; i++) {
		if ((c = json_object()) == NULL ||
		    json_array_append_new(calls, c) == -1 ||
		    llm_json_setstr(c, "id", r->msg.calls[i].id) == -1 ||
		    llm_json_setstr(c, "name", r->msg.calls[i].name) == -1 ||
		    llm_json_setstr(c, "arguments", r->msg.calls[i].args) == -1)
			goto fail;
	}
	*out = o;
	return 0;
fail:
	json_decref(o);
	return -1;
}

static int
llm_reply_from_json(json_t *o, struct msg_reply *r, char *err, size_t errsz)
{
	json_t		*calls, *c, *u, *text;
	const char	*stop, *name, *args;
	char		 id[32];
	size_t		 i;

	memset(r, 0, sizeof(*r));
	r->msg.role = MSG_ASSISTANT;
	if (!json_is_object(o)) {
		snprintf(err, errsz, "reply is not an object");
		return -1;
	}
	text = json_object_get(o, "text");
	if (text != NULL && !json_is_null(text)) {
		if (!json_is_string(text)) {
			snprintf(err, errsz, "reply text is not a string");
			return -1;
		}
		if ((r->msg.text = strdup(json_string_value(text))) == NULL)
			goto nomem;
	}
	calls = json_object_get(o, "calls");
	if (calls != NULL && !json_is_array(calls)) {
		snprintf(err, errsz, "reply calls is not an array");
		goto fail;
	}
	json_array_foreach(calls, i, c) {
		if (!json_is_object(c) || (name = llm_json_str(c, "name")) ==
		    NULL) {
			snprintf(err, errsz, "call %zu has no name", i);
			goto fail;
		}
		if ((args = llm_json_str(c, "arguments")) == NULL)
			args = "{}";
		snprintf(id, sizeof(id), "call_%zu", i);
		if (msg_add_call(&r->msg, llm_json_str(c, "id") != NULL ?
		    llm_json_str(c, "id") : id, name, args) == -1)
			goto nomem;
	}
	stop = llm_json_str(o, "stop");
	if (stop != NULL && msg_stop_parse(stop, &r->stop) == -1) {
		snprintf(err, errsz, "unknown stop reason \"%.40s\"", stop);
		goto fail;
	}
	if (stop == NULL)
		r->stop = r->msg.ncalls > 0 ? MSG_STOP_TOOL_CALLS : MSG_STOP_END;
	u = json_object_get(o, "usage");
	if (json_is_object(u)) {
		r->usage.input = llm_json_u64(u, "input");
		r->usage.output = llm_json_u64(u, "output");
	}
	return 0;
nomem:
	snprintf(err, errsz, "out of memory");
fail:
	msg_reply_free(r);
	return -1;
}

static void
llm_cassette_free_entries(struct llm_cassette *c)
{
	size_t	i;

	for (i = 0; i < c->n; i++) {
		free(c->v[i].agent);
		free(c->v[i].error);
		free(c->v[i].http_body);
		free(c->v[i].http_type);
		msg_reply_free(&c->v[i].reply);
	}
	free(c->v);
	c->v = NULL;
	c->n = c->cap = 0;
	free(c->idx);
	c->idx = NULL;
	c->idxcap = c->idxn = 0;
}

static size_t
llm_cassette_hash(const char *agent, unsigned step, enum llm_purpose purpose)
{
	uint64_t	h = 1469598103934665603ULL;	/* FNV-1a */

	for (; *agent != '\0'; agent++)
		h = (h ^ (unsigned char)*agent) * 1099511628211ULL;
	h = (h ^ step) * 1099511628211ULL;
	h = (h ^ (unsigned)purpose) * 1099511628211ULL;
	return (size_t)(h ^ (h >> 29));
}

static int
llm_cassette_same(const struct cassette_entry *e, const char *agent,
    unsigned step, enum llm_purpose purpose)
{
	return e->step == step && e->purpose == purpose &&
	    strcmp(e->agent, agent) == 0;
}

/*
 * Index every entry; a later recording of a key replaces an earlier one
 * (a resumed run appends). Replay of N agents x S steps was a linear scan
 * per turn, O((N*S)^2) for a run. -1 on ENOMEM (callers scan instead).
 */
static int
llm_cassette_index(struct llm_cassette *c)
{
	struct cassette_entry	*e;
	size_t			 cap = 16, i, j, *idx;

	if (c->idx != NULL && c->idxn == c->n)
		return 0;
	while (cap < 2 * c->n)
		cap *= 2;
	if ((idx = calloc(cap, sizeof(*idx))) == NULL)
		return -1;
	for (i = 0; i < c->n; i++) {
		e = &c->v[i];
		j = llm_cassette_hash(e->agent, e->step, e->purpose) &
		    (cap - 1);
		while (idx[j] != 0 && !llm_cassette_same(&c->v[idx[j] - 1],
		    e->agent, e->step, e->purpose))
			j = (j + 1) & (cap - 1);
		idx[j] = i + 1;
	}
	free(c->idx);
	c->idx = idx;
	c->idxcap = cap;
	c->idxn = c->n;
	return 0;
}

void
llm_cassette_close(struct llm_cassette *c)
{
	if (c == NULL)
		return;
	if (c->f != NULL)
		fclose(c->f);
	llm_cassette_free_entries(c);
	free(c->path);
	free(c);
}

static enum llm_err
llm_cassette_kind(const char *s)
{
	int	k;

	for (k = LLM_ERR_EXHAUSTED; k <= LLM_ERR_SYSTEM; k++) {
		if (s != NULL && strcmp(s, llm_err_name((enum llm_err)k)) == 0)
			return (enum llm_err)k;
	}
	return LLM_ERR_SYSTEM;
}

/* A pass-through answer: {"status", "content_type", "body"}; a body with
 * a NUL byte or a status out of range is kept as the step's failure. */
static int
llm_cassette_http_answer(const struct llm_cassette *c,
    struct cassette_entry *e, json_t *ans)
{
	json_t		*b = json_object_get(ans, "body");
	const char	*t = llm_json_str(ans, "content_type");
	uint64_t	 st = llm_json_u64(ans, "status");

	if (!json_is_string(b) || memchr(json_string_value(b), '\0',
	    json_string_length(b)) != NULL || st < 100 || st > 599) {
		e->err = LLM_ERR_PARSE;
		if (asprintf(&e->error, "cassette %s: agent %s step %u: a bad "
		    "http answer", c->path, e->agent, e->step) == -1) {
			e->error = NULL;
			return -1;
		}
		return 0;
	}
	e->err = LLM_OK;
	e->status = (long)st;
	if ((e->http_body = strdup(json_string_value(b))) == NULL ||
	    (e->http_type = strdup(t != NULL ? t : "application/json")) ==
	    NULL)
		return -1;
	return 0;
}

/*
 * A recorded answer decoded into e, as llm_cassette_find hands it out. A
 * reply that cannot be used is kept as its reason (the run fails at that
 * step, not at load). -1 only when out of memory.
 */
static int
llm_cassette_answer(const struct llm_cassette *c, struct cassette_entry *e,
    json_t *ans, int is_error)
{
	const char	*m;
	char		 why[256];

	if (is_error == 2)
		return llm_cassette_http_answer(c, e, ans);
	if (is_error) {
		e->err = llm_cassette_kind(llm_json_str(ans, "kind"));
		e->status = (long)llm_json_u64(ans, "status");
		if ((m = llm_json_str(ans, "message")) == NULL)
			m = "recorded error";
		e->error = str_escape_dup(m, strlen(m), 0);
		return e->error != NULL ? 0 : -1;
	}
	if (llm_reply_from_json(ans, &e->reply, why, sizeof(why)) == 0) {
		e->err = LLM_OK;
		return 0;
	}
	e->err = LLM_ERR_PARSE;
	if (asprintf(&e->error, "cassette %s: agent %s step %u: %s", c->path,
	    e->agent, e->step, why) == -1) {
		e->error = NULL;
		return -1;
	}
	return 0;
}

/* One entry line; -1 with a reason in err. */
static int
llm_cassette_entry(struct llm_cassette *c, json_t *o, char *err, size_t errsz)
{
	struct cassette_entry	*v, e;
	json_t			*step, *ans;
	const char		*agent;
	int			 is_error;

	memset(&e, 0, sizeof(e));
	if ((agent = llm_json_str(o, "agent")) == NULL || *agent == '\0' ||
	    strlen(agent) > 1024) {
		snprintf(err, errsz, "missing or bad \"agent\"");
		return -1;
	}
	step = json_object_get(o, "step");
	if (!json_is_integer(step) || json_integer_value(step) < 0 ||
	    json_integer_value(step) > 0x7fffffff) {
		snprintf(err, errsz, "missing or bad \"step\"");
		return -1;
	}
	if (llm_cassette_purpose(llm_json_str(o, "purpose"), &e.purpose) == -1) {
		snprintf(err, errsz, "\"purpose\" is not turn, summary or "
		    "http");
		return -1;
	}
	if (e.purpose == LLM_PURPOSE_HTTP &&
	    json_is_object(ans = json_object_get(o, "http")))
		is_error = 2;
	else if (json_is_object(ans = json_object_get(o, "reply")))
		is_error = 0;
	else if (json_is_object(ans = json_object_get(o, "error")))
		is_error = 1;
	else {
		snprintf(err, errsz, "neither \"reply\" nor \"error\"");
		return -1;
	}
	/* Doubling: one more each line copied the array every line, 23 ms
	 * of a 5,000-line cassette's load before the first answer. */
	if (c->n == c->cap) {
		if ((v = reallocarray(c->v, c->cap != 0 ? 2 * c->cap : 64,
		    sizeof(*v))) == NULL) {
			snprintf(err, errsz, "out of memory");
			return -1;
		}
		c->v = v;
		c->cap = c->cap != 0 ? 2 * c->cap : 64;
	}
	e.step = (unsigned)json_integer_value(step);
	if ((e.agent = strdup(agent)) == NULL ||
	    llm_cassette_answer(c, &e, ans, is_error) == -1) {
		free(e.agent);
		free(e.error);
		msg_reply_free(&e.reply);
		snprintf(err, errsz, "out of memory");
		return -1;
	}
	c->v[c->n++] = e;
	return 0;
}

static int
llm_cassette_load(struct llm_cassette *c, FILE *f, char *err, size_t errsz)
{
	json_error_t	 je;
	json_t		*o;
	char		*line = NULL, why[256], esc[1200];
	size_t		 cap = 0;
	ssize_t		 len;
	unsigned	 lineno = 0;
	int		 rc = -1;

	while ((len = getline(&line, &cap, f)) != -1) {
		lineno++;
		if ((size_t)len > CASSETTE_MAX_LINE) {
			snprintf(why, sizeof(why), "line longer than %u bytes",
			    CASSETTE_MAX_LINE);
			goto bad;
		}
		if (len <= 1 && (len == 0 || line[0] == '\n'))
			continue;
		if ((o = json_loadb(line, (size_t)len, 0, &je)) == NULL) {
			snprintf(why, sizeof(why), "malformed JSON: %s",
			    je.text);
			goto bad;
		}
		if (json_object_get(o, "warren_cassette") != NULL) {
			if (llm_json_u64(o, "warren_cassette") !=
			    CASSETTE_VERSION) {
				snprintf(why, sizeof(why), "cassette version "
				    "is not %d", CASSETTE_VERSION);
				json_decref(o);
				goto bad;
			}
			json_decref(o);
			continue;
		}
		if (!json_is_object(o) ||
		    llm_cassette_entry(c, o, why, sizeof(why)) == -1) {
			if (!json_is_object(o))
				snprintf(why, sizeof(why), "not an object");
			json_decref(o);
			goto bad;
		}
		json_decref(o);
	}
	rc = 0;
	goto out;
bad:
	str_escape(esc, sizeof(esc), why, strlen(why));
	snprintf(err, errsz, "%s:%u: %s", c->path, lineno, esc);
out:
	free(line);
	return rc;
}

struct llm_cassette *
llm_cassette_open(const char *path, int record, char *err, size_t errsz)
{
	struct llm_cassette	*c;
	FILE			*f;

	if ((c = calloc(1, sizeof(*c))) == NULL ||
	    (c->path = strdup(path)) == NULL) {
		free(c);
		snprintf(err, errsz, "out of memory");
		return NULL;
	}
	if (record) {
		if ((c->f = fopen(path, "we")) == NULL)
			goto syserr;
		fprintf(c->f, "{\"warren_cassette\": %d}\n", CASSETTE_VERSION);
		if (fflush(c->f) == EOF)
			goto syserr;
		return c;
	}
	if ((f = fopen(path, "re")) == NULL)
		goto syserr;
	if (llm_cassette_load(c, f, err, errsz) == -1) {
		fclose(f);
		llm_cassette_close(c);
		return NULL;
	}
	fclose(f);
	return c;
syserr:
	snprintf(err, errsz, "cassette %s: %s", path, strerror(errno));
	llm_cassette_close(c);
	return NULL;
}

int
llm_cassette_find(struct llm_cassette *c, const char *agent, unsigned step,
    enum llm_purpose purpose, struct llm_result *res)
{
	struct cassette_entry	*e = NULL;
	size_t			 i;

	/* The last recording of a key wins (a resumed run appends). */
	if (llm_cassette_index(c) == 0) {
		i = llm_cassette_hash(agent, step, purpose) & (c->idxcap - 1);
		for (; c->idx[i] != 0; i = (i + 1) & (c->idxcap - 1)) {
			if (llm_cassette_same(&c->v[c->idx[i] - 1], agent, step,
			    purpose)) {
				e = &c->v[c->idx[i] - 1];
				break;
			}
		}
	} else {
		for (i = c->n; i > 0; i--) {
			if (llm_cassette_same(&c->v[i - 1], agent, step,
			    purpose)) {
				e = &c->v[i - 1];
				break;
			}
		}
	}
	if (e == NULL)
		return -1;
	res->err = e->err;
	res->status = e->status;
	memset(&res->reply, 0, sizeof(res->reply));
	if (e->err != LLM_OK) {
		if ((res->error = strdup(e->error)) == NULL)
			goto nomem;
		return 0;
	}
	res->reply.stop = e->reply.stop;
	res->reply.usage = e->reply.usage;
	if (msg_copy(&res->reply.msg, &e->reply.msg) == -1)
		goto nomem;
	return 0;
nomem:
	res->err = LLM_ERR_SYSTEM;
	if (asprintf(&res->error, "cassette %s: agent %s step %u: out of "
	    "memory", c->path, agent, step) == -1)
		res->error = NULL;
	return 0;
}

/* The body as sent, in o's "request": an object when it is JSON, else
 * a string. */
static int
llm_cassette_request(json_t *o, const char *request)
{
	json_t	*req;

	if (request == NULL)
		return 0;
	if ((req = json_loads(request, 0, NULL)) == NULL)
		req = llm_json_string(request);
	if (req != NULL && json_object_set_new(o, "request", req) == -1)
		return -1;
	return 0;
}

/* Append entry o as one line (when built, else nothing) and release it:
 * -1 with errno when it was not built or could not be written. */
static int
llm_cassette_put(struct llm_cassette *c, json_t *o, int built)
{
	char	*s = NULL;
	int	 rc = -1;

	if (built && (s = json_dumps(o, JSON_COMPACT)) != NULL &&
	    fprintf(c->f, "%s\n", s) >= 0 && fflush(c->f) != EOF)
		rc = 0;
	free(s);
	json_decref(o);
	if (rc == -1 && errno == 0)
		errno = ENOMEM;
	return rc;
}

int
llm_cassette_write(struct llm_cassette *c, const char *agent, unsigned step,
    enum llm_purpose purpose, const char *provider, const char *model,
    const char *request, const struct llm_result *res)
{
	json_t	*o, *ans = NULL;

	o = json_pack("{s:s, s:I, s:s, s:s, s:s}", "agent", agent,
	    "step", (json_int_t)step, "purpose", llm_purpose_name(purpose),
	    "provider", provider, "model", model != NULL ? model : "");
	if (o == NULL)
		goto out;
	if (llm_cassette_request(o, request) == -1)
		goto out;
	if (res->err == LLM_OK) {
		if (llm_reply_to_json(&res->reply, &ans) == -1 ||
		    json_object_set_new(o, "reply", ans) == -1)
			goto out;
	} else {
		ans = json_pack("{s:s, s:I}", "kind", llm_err_name(res->err),
		    "status", (json_int_t)res->status);
		if (ans == NULL || llm_json_setstr(ans, "message",
		    res->error != NULL ? res->error : "") == -1 ||
		    json_object_set_new(o, "error", ans) == -1)
			goto out;
	}
	return llm_cassette_put(c, o, 1);
out:
	return llm_cassette_put(c, o, 0);
}

int
llm_cassette_find_http(struct llm_cassette *c, const char *agent,
    unsigned step, struct llm_result *res)
{
	struct cassette_entry	*e = NULL;
	size_t			 i;

	for (i = c->n; i > 0 && e == NULL; i--)
		if (llm_cassette_same(&c->v[i - 1], agent, step,
		    LLM_PURPOSE_HTTP))
			e = &c->v[i - 1];
	if (e == NULL)
		return -1;
	res->err = e->err;
	res->status = e->status;
	if (e->err != LLM_OK)
		res->error = strdup(e->error != NULL ? e->error : "recorded");
	else if ((res->http_body = strdup(e->http_body)) == NULL ||
	    (res->http_type = strdup(e->http_type)) == NULL) {
		res->err = LLM_ERR_SYSTEM;
		res->error = strdup("out of memory");
		return 0;
	} else {
		res->http_len = strlen(res->http_body);
		llm_http_usage(res->http_body, res->http_len,
		    strstr(res->http_type, "text/event-stream") != NULL,
		    &res->reply.usage);
	}
	return 0;
}

int
llm_cassette_write_http(struct llm_cassette *c, const char *agent,
    unsigned step, const char *wire, const char *request,
    const struct llm_result *res)
{
	json_t	*o, *ans = NULL;

	if (res->err != LLM_OK)
		return llm_cassette_write(c, agent, step, LLM_PURPOSE_HTTP,
		    wire, "", request, res);
	o = json_pack("{s:s, s:I, s:s, s:s}", "agent", agent, "step",
	    (json_int_t)step, "purpose", "http", "provider", wire);
	if (o == NULL)
		goto out;
	if (llm_cassette_request(o, request) == -1)
		goto out;
	ans = json_pack("{s:I}", "status", (json_int_t)res->status);
	if (ans == NULL || llm_json_setstr(ans, "content_type",
	    res->http_type != NULL ? res->http_type : "") == -1 ||
	    llm_json_setstr(ans, "body", res->http_body != NULL ?
	    res->http_body : "") == -1 ||
	    json_object_set_new(o, "http", ans) == -1)
		goto out;
	return llm_cassette_put(c, o, 1);
out:
	return llm_cassette_put(c, o, 0);
}

/* Does s occur in a string of j (depth-bounded: j came from a file)? */
static int
llm_cassette_has_text(json_t *j, const char *s, int depth)
{
	const char	*k;
	json_t		*v;
	size_t		 i;

	if (depth > 16)
		return 0;
	if (json_is_string(j))
		return strstr(json_string_value(j), s) != NULL;
	if (json_is_array(j)) {
		json_array_foreach(j, i, v)
			if (llm_cassette_has_text(v, s, depth + 1))
				return 1;
	} else if (json_is_object(j)) {
		json_object_foreach(j, k, v)
			if (llm_cassette_has_text(v, s, depth + 1))
				return 1;
	}
	return 0;
}

int
llm_cassette_task_check(const char *path, const char *task)
{
	FILE	*f;
	char	*line = NULL;
	size_t	 cap = 0;
	json_t	*o, *req;
	int	 rc = 0, seen = 0;

	if ((f = fopen(path, "re")) == NULL)
		return 0;
	while (!seen && getline(&line, &cap, f) > 0) {
		/* Only a line that names "request" (plainly or by \u
		   escapes) can hold one: the others are not parsed, a second
		   parse of a whole cassette at every start (issue 33). */
		if (strstr(line, "\"request\"") == NULL &&
		    strstr(line, "\\u") == NULL)
			continue;
		if ((o = json_loads(line, 0, NULL)) == NULL)
			continue;
		req = json_object_get(o, "request");
		if (json_is_object(req) && llm_json_str(o, "agent") != NULL &&
		    strcmp(llm_json_str(o, "agent"), "0") == 0 &&
		    (llm_json_str(o, "purpose") == NULL ||
		    strcmp(llm_json_str(o, "purpose"), "turn") == 0)) {
			seen = 1;
			rc = !llm_cassette_has_text(req, task, 0);
		}
		json_decref(o);
	}
	free(line);
	fclose(f);
	return rc;
}

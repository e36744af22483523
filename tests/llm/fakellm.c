/*
 * fakellm: a scripted LLM endpoint on 127.0.0.1 for tests and benchmarks.
 *
 *	fakellm --script FILE [--port-file FILE] [--log FILE] [--port N]
 *
 * It speaks HTTP/1.1 (keep-alive, Content-Length requests) to any number
 * of clients at once from one poll() loop, answers each request from the
 * script (a JSON file, see tests/llm/README.md): raw bodies or SSE chunks,
 * any status and headers, delays, truncation, resets and silence, or a
 * neutral "reply" rendered in the wire format the request's path asks
 * for (chat completions, Anthropic messages, Responses), streamed when
 * the request says "stream": true. Every request is appended to the log
 * as one JSON line (method, path, headers, body) so tests can assert the
 * exact request on the wire. SIGTERM or SIGINT end it cleanly.
 */
#include <sys/socket.h>
#include <sys/stat.h>

#include <netinet/in.h>
#include <netinet/tcp.h>
#include <arpa/inet.h>

#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <poll.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>
#include <unistd.h>

#include <jansson.h>

#define MAX_CONNS	1024
#define MAX_REQUEST	(64u * 1024 * 1024)
#define MAX_HEADER	(64u * 1024)
#define PIECE		8	/* characters per streamed text delta */

enum conn_state {
	CONN_READ = 0,
	CONN_WAIT,		/* a delay before the next piece */
	CONN_WRITE,
	CONN_HANG,		/* never answer */
};

/* One piece of output, sent after a delay. */
struct piece {
	char	*data;
	size_t	 len;
	int	 delay_ms;
};

struct conn {
	int		 fd;
	enum conn_state	 state;
	char		*in;
	size_t		 inlen, incap;
	struct piece	*out;
	size_t		 nout, iout, off;
	uint64_t	 wake;		/* CONN_WAIT: monotonic ms */
	int		 close_after;	/* close once out is written */
};

struct rule {
	json_t		*match;		/* string or array of strings, or NULL */
	const char	*path;		/* substring of the path, or NULL */
	json_t		*responses;
	size_t		 next;
	int		 repeat;	/* keep serving the last one */
};

static struct conn	*conns[MAX_CONNS];
static struct rule	*rules;
static size_t		 nrules;
static json_t		*script;
static FILE		*reqlog;
static unsigned long	 nrequests;
/*
 * "gather": N in the script holds every answer until N requests have
 * arrived (10 s at most after the first), so a test can have N requests
 * on the wire at once however slowly a loaded machine sends them.
 */
static unsigned long	 gather;
static uint64_t		 gather_until;
static volatile sig_atomic_t quit;

static void
die(const char *fmt, ...)
{
	va_list	ap;

	va_start(ap, fmt);
	fprintf(stderr, "fakellm: ");
	vfprintf(stderr, fmt, ap);
	fprintf(stderr, "\n");
	va_end(ap);
	exit(1);
}

static uint64_t
now_ms(void)
{
	struct timespec	ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

static void
on_signal(int sig)
{
	(void)sig;
	quit = 1;
}

static void
conn_close(size_t i)
{
	struct conn	*c = conns[i];
	size_t		 j;

	close(c->fd);
	for (j = 0; j < c->nout; j++)
		free(c->out[j].data);
	free(c->out);
	free(c->in);
	free(c);
	conns[i] = NULL;
}

static void
conn_add_piece(struct conn *c, const char *data, size_t len, int delay)
{
	struct piece	*p;

	p = realloc(c->out, (c->nout + 1) * sizeof(*p));
	if (p == NULL)
		die("out of memory");
	c->out = p;
	p = &c->out[c->nout++];
	if ((p->data = malloc(len + 1)) == NULL)
		die("out of memory");
	memcpy(p->data, data, len);
	p->len = len;
	p->delay_ms = delay;
}

static void
conn_addf(struct conn *c, int delay, const char *fmt, ...)
{
	va_list	 ap;
	char	*s;
	int	 n;

	va_start(ap, fmt);
	n = vasprintf(&s, fmt, ap);
	va_end(ap);
	if (n < 0)
		die("out of memory");
	conn_add_piece(c, s, (size_t)n, delay);
	free(s);
}

/* One HTTP chunk (chunked transfer encoding). */
static void
conn_chunk(struct conn *c, const char *data, size_t len, int delay)
{
	char	*s;
	int	 n;

	if (len == 0)
		return;
	n = asprintf(&s, "%zx\r\n%.*s\r\n", len, (int)len, data);
	if (n < 0)
		die("out of memory");
	conn_add_piece(c, s, (size_t)n, delay);
	free(s);
}

static const char *
status_text(int status)
{
	switch (status) {
	case 200: return "OK";
	case 400: return "Bad Request";
	case 401: return "Unauthorized";
	case 403: return "Forbidden";
	case 404: return "Not Found";
	case 408: return "Request Timeout";
	case 429: return "Too Many Requests";
	case 500: return "Internal Server Error";
	case 502: return "Bad Gateway";
	case 503: return "Service Unavailable";
	default: return "Status";
	}
}

/* Status line and headers: the script's, then what the body needs. */
static void
conn_head(struct conn *c, json_t *r, int status, const char *ctype,
    long long clen, int delay)
{
	json_t		*h, *v;
	const char	*k;
	char		 head[MAX_HEADER];
	size_t		 n;

	n = (size_t)snprintf(head, sizeof(head), "HTTP/1.1 %d %s\r\n", status,
	    status_text(status));
	h = json_object_get(r, "headers");
	json_object_foreach(h, k, v) {
		if (json_is_string(v) && n < sizeof(head))
			n += (size_t)snprintf(head + n, sizeof(head) - n,
			    "%s: %s\r\n", k, json_string_value(v));
	}
	if (n < sizeof(head) && json_object_get(h, "Content-Type") == NULL)
		n += (size_t)snprintf(head + n, sizeof(head) - n,
		    "Content-Type: %s\r\n", ctype);
	if (n < sizeof(head)) {
		if (clen >= 0)
			n += (size_t)snprintf(head + n, sizeof(head) - n,
			    "Content-Length: %lld\r\n\r\n", clen);
		else
			n += (size_t)snprintf(head + n, sizeof(head) - n,
			    "Transfer-Encoding: chunked\r\n\r\n");
	}
	if (n >= sizeof(head))
		die("headers too long");
	conn_add_piece(c, head, n, delay);
}

/* ---- rendering a neutral reply in each wire format ---- */

enum fmt {
	FMT_OPENAI,
	FMT_ANTHROPIC,
	FMT_RESPONSES,
};

struct reply {
	const char	*text;
	json_t		*calls;		/* [{id, name, arguments}] */
	const char	*stop;		/* neutral name or NULL */
	json_int_t	 in, out;
	const char	*model;
};

/* Arguments as JSON text: a string kept as is, anything else dumped. */
static char *
call_args(json_t *call)
{
	json_t	*a = json_object_get(call, "arguments");

	if (json_is_string(a))
		return strdup(json_string_value(a));
	if (a == NULL)
		return strdup("{}");
	return json_dumps(a, JSON_COMPACT);
}

static const char *
call_str(json_t *call, const char *k, const char *def)
{
	json_t	*v = json_object_get(call, k);

	return json_is_string(v) ? json_string_value(v) : def;
}

static const char *
stop_for(const struct reply *r, enum fmt f)
{
	const char	*s = r->stop;

	if (s == NULL)
		s = json_array_size(r->calls) > 0 ? "tool_calls" : "end";
	if (strcmp(s, "end") == 0)
		return f == FMT_OPENAI ? "stop" : f == FMT_ANTHROPIC ?
		    "end_turn" : "completed";
	if (strcmp(s, "tool_calls") == 0)
		return f == FMT_OPENAI ? "tool_calls" : f == FMT_ANTHROPIC ?
		    "tool_use" : "completed";
	if (strcmp(s, "length") == 0)
		return f == FMT_OPENAI ? "length" : f == FMT_ANTHROPIC ?
		    "max_tokens" : "incomplete";
	return s;	/* passed through: lets a script send any reason */
}

static json_t *
render_openai(const struct reply *r)
{
	json_t	*calls, *c, *msg;
	char	*args;
	size_t	 i;

	calls = json_array();
	json_array_foreach(r->calls, i, c) {
		args = call_args(c);
		json_array_append_new(calls, json_pack("{s:s, s:s, s:{s:s, s:s}}",
		    "id", call_str(c, "id", "call_fake"), "type", "function",
		    "function", "name", call_str(c, "name", ""), "arguments",
		    args != NULL ? args : "{}"));
		free(args);
	}
	msg = json_pack("{s:s, s:o}", "role", "assistant", "content",
	    r->text != NULL ? json_string(r->text) : json_null());
	if (json_array_size(calls) > 0)
		json_object_set(msg, "tool_calls", calls);
	json_decref(calls);
	return json_pack("{s:s, s:s, s:i, s:s, s:[{s:i, s:o, s:s}], "
	    "s:{s:I, s:I, s:I}}", "id", "chatcmpl-fake", "object",
	    "chat.completion", "created", 0, "model", r->model, "choices",
	    "index", 0, "message", msg, "finish_reason",
	    stop_for(r, FMT_OPENAI), "usage", "prompt_tokens", r->in,
	    "completion_tokens", r->out, "total_tokens", r->in + r->out);
}

static json_t *
render_anthropic(const struct reply *r)
{
	json_t	*content, *c, *in;
	char	*args;
	size_t	 i;

	content = json_array();
	if (r->text != NULL)
		json_array_append_new(content, json_pack("{s:s, s:s}", "type",
		    "text", "text", r->text));
	json_array_foreach(r->calls, i, c) {
		args = call_args(c);
		in = args != NULL ? json_loads(args, 0, NULL) : NULL;
		free(args);
		json_array_append_new(content, json_pack("{s:s, s:s, s:s, s:o}",
		    "type", "tool_use", "id", call_str(c, "id", "toolu_fake"),
		    "name", call_str(c, "name", ""), "input",
		    in != NULL ? in : json_object()));
	}
	return json_pack("{s:s, s:s, s:s, s:s, s:o, s:s, s:n, s:{s:I, s:I}}",
	    "id", "msg_fake", "type", "message", "role", "assistant", "model",
	    r->model, "content", content, "stop_reason",
	    stop_for(r, FMT_ANTHROPIC), "stop_sequence", "usage",
	    "input_tokens", r->in, "output_tokens", r->out);
}

/* A call of a freeform ("custom") tool: {"type": "custom", "input"}. */
static int
call_custom(json_t *c)
{
	return strcmp(call_str(c, "type", "function"), "custom") == 0;
}

static json_t *
responses_call_item(json_t *c, size_t i, const char *args_override)
{
	char	 id[32], *args;
	json_t	*it;

	snprintf(id, sizeof(id), "fc_%zu", i);
	if (call_custom(c))
		return json_pack("{s:s, s:s, s:s, s:s, s:s, s:s}", "type",
		    "custom_tool_call", "id", id, "call_id", call_str(c, "id",
		    "call_fake"), "name", call_str(c, "name", ""), "input",
		    args_override != NULL ? args_override : call_str(c,
		    "input", ""), "status", "completed");
	args = call_args(c);
	it = json_pack("{s:s, s:s, s:s, s:s, s:s, s:s}", "type",
	    "function_call", "id", id, "call_id", call_str(c, "id",
	    "call_fake"), "name", call_str(c, "name", ""), "arguments",
	    args_override != NULL ? args_override : args != NULL ? args : "{}",
	    "status", "completed");
	free(args);
	return it;
}

/* The assistant's message item of a Responses answer, whole. */
static json_t *
responses_message_item(const char *text)
{
	return json_pack("{s:s, s:s, s:s, s:s, s:[{s:s, s:s, s:[]}]}", "type",
	    "message", "id", "msg_0", "role", "assistant", "status",
	    "completed", "content", "type", "output_text", "text", text,
	    "annotations");
}

static json_t *
render_responses(const struct reply *r, const char *status)
{
	json_t		*out, *c;
	const char	*st;
	size_t		 i;

	out = json_array();
	if (r->text != NULL)
		json_array_append_new(out, responses_message_item(r->text));
	json_array_foreach(r->calls, i, c)
		json_array_append_new(out, responses_call_item(c, i, NULL));
	st = status != NULL ? status : stop_for(r, FMT_RESPONSES);
	return json_pack("{s:s, s:s, s:s, s:s, s:o, s:o, s:{s:I, s:I, s:I}}",
	    "id", "resp_fake", "object", "response", "status", st, "model",
	    r->model, "output", out, "incomplete_details",
	    strcmp(st, "incomplete") == 0 ? json_pack("{s:s}", "reason",
	    "max_output_tokens") : json_null(), "usage", "input_tokens", r->in,
	    "output_tokens", r->out, "total_tokens", r->in + r->out);
}

/* The next piece of text: PIECE bytes, never splitting a UTF-8 sequence. */
static size_t
piece_len(const char *s, size_t off, size_t len)
{
	size_t	n = len - off < PIECE ? len - off : PIECE;

	while (off + n < len && n > 1 &&
	    ((unsigned char)s[off + n] & 0xc0) == 0x80)
		n--;
	if (n == 1 || (off + n < len &&
	    ((unsigned char)s[off + n] & 0xc0) == 0x80)) {
		/* A sequence longer than PIECE: take it whole. */
		n = 1;
		while (off + n < len && ((unsigned char)s[off + n] & 0xc0) ==
		    0x80)
			n++;
	}
	return n;
}

/* SSE event text: optional "event:" line, one data line, blank line. */
static void
sse_event(struct conn *c, const char *event, json_t *data, int delay)
{
	char	*d, *s;
	int	 n;

	if ((d = json_dumps(data, JSON_COMPACT)) == NULL)
		die("out of memory");
	json_decref(data);
	if (event != NULL)
		n = asprintf(&s, "event: %s\ndata: %s\n\n", event, d);
	else
		n = asprintf(&s, "data: %s\n\n", d);
	free(d);
	if (n < 0)
		die("out of memory");
	conn_chunk(c, s, (size_t)n, delay);
	free(s);
}

static void
stream_openai(struct conn *c, const struct reply *r, int delay)
{
	json_t	*call;
	char	*args;
	size_t	 i, off, len, n;

	sse_event(c, NULL, json_pack("{s:s, s:s, s:[{s:i, s:{s:s}, s:n}]}",
	    "id", "chatcmpl-fake", "object", "chat.completion.chunk", "choices",
	    "index", 0, "delta", "role", "assistant", "finish_reason"), delay);
	len = r->text != NULL ? strlen(r->text) : 0;
	for (off = 0; off < len; off += n) {
		n = piece_len(r->text, off, len);
		sse_event(c, NULL, json_pack("{s:s, s:[{s:i, s:{s:s%}, s:n}]}",
		    "object", "chat.completion.chunk", "choices", "index", 0,
		    "delta", "content", r->text + off, n, "finish_reason"),
		    delay);
	}
	json_array_foreach(r->calls, i, call) {
		sse_event(c, NULL, json_pack("{s:[{s:i, s:{s:[{s:i, s:s, s:s, "
		    "s:{s:s, s:s}}]}, s:n}]}", "choices", "index", 0, "delta",
		    "tool_calls", "index", (int)i, "id", call_str(call, "id",
		    "call_fake"), "type", "function", "function", "name",
		    call_str(call, "name", ""), "arguments", "",
		    "finish_reason"), delay);
		args = call_args(call);
		len = args != NULL ? strlen(args) : 0;
		for (off = 0; off < len; off += n) {
			n = piece_len(args, off, len);
			sse_event(c, NULL, json_pack("{s:[{s:i, s:{s:[{s:i, "
			    "s:{s:s%}}]}, s:n}]}", "choices", "index", 0,
			    "delta", "tool_calls", "index", (int)i, "function",
			    "arguments", args + off, n, "finish_reason"),
			    delay);
		}
		free(args);
	}
	sse_event(c, NULL, json_pack("{s:[{s:i, s:{}, s:s}]}", "choices",
	    "index", 0, "delta", "finish_reason", stop_for(r, FMT_OPENAI)),
	    delay);
	sse_event(c, NULL, json_pack("{s:[], s:{s:I, s:I, s:I}}", "choices",
	    "usage", "prompt_tokens", r->in, "completion_tokens", r->out,
	    "total_tokens", r->in + r->out), delay);
	conn_chunk(c, "data: [DONE]\n\n", 14, delay);
}

static void
stream_anthropic(struct conn *c, const struct reply *r, int delay)
{
	json_t	*call;
	char	*args;
	size_t	 i, off, len, n;
	int	 idx = 0;

	sse_event(c, "message_start", json_pack("{s:s, s:{s:s, s:s, s:s, "
	    "s:s, s:[], s:n, s:{s:I, s:i}}}", "type", "message_start",
	    "message", "id", "msg_fake", "type", "message", "role",
	    "assistant", "model", r->model, "content", "stop_reason", "usage",
	    "input_tokens", r->in, "output_tokens", 1), delay);
	sse_event(c, "ping", json_pack("{s:s}", "type", "ping"), delay);
	if (r->text != NULL) {
		sse_event(c, "content_block_start", json_pack("{s:s, s:i, "
		    "s:{s:s, s:s}}", "type", "content_block_start", "index",
		    idx, "content_block", "type", "text", "text", ""), delay);
		len = strlen(r->text);
		for (off = 0; off < len; off += n) {
			n = piece_len(r->text, off, len);
			sse_event(c, "content_block_delta", json_pack("{s:s, "
			    "s:i, s:{s:s, s:s%}}", "type",
			    "content_block_delta", "index", idx, "delta",
			    "type", "text_delta", "text", r->text + off, n),
			    delay);
		}
		sse_event(c, "content_block_stop", json_pack("{s:s, s:i}",
		    "type", "content_block_stop", "index", idx), delay);
		idx++;
	}
	json_array_foreach(r->calls, i, call) {
		sse_event(c, "content_block_start", json_pack("{s:s, s:i, "
		    "s:{s:s, s:s, s:s, s:{}}}", "type", "content_block_start",
		    "index", idx, "content_block", "type", "tool_use", "id",
		    call_str(call, "id", "toolu_fake"), "name",
		    call_str(call, "name", ""), "input"), delay);
		args = call_args(call);
		len = args != NULL ? strlen(args) : 0;
		for (off = 0; off < len; off += n) {
			n = piece_len(args, off, len);
			sse_event(c, "content_block_delta", json_pack("{s:s, "
			    "s:i, s:{s:s, s:s%}}", "type",
			    "content_block_delta", "index", idx, "delta",
			    "type", "input_json_delta", "partial_json",
			    args + off, n), delay);
		}
		free(args);
		sse_event(c, "content_block_stop", json_pack("{s:s, s:i}",
		    "type", "content_block_stop", "index", idx), delay);
		idx++;
	}
	sse_event(c, "message_delta", json_pack("{s:s, s:{s:s, s:n}, s:{s:I}}",
	    "type", "message_delta", "delta", "stop_reason",
	    stop_for(r, FMT_ANTHROPIC), "stop_sequence", "usage",
	    "output_tokens", r->out), delay);
	sse_event(c, "message_stop", json_pack("{s:s}", "type",
	    "message_stop"), delay);
}

/* A custom tool call's input, in pieces, then whole. */
static void
stream_responses_custom(struct conn *c, json_t *call, const char *id,
    int idx, int delay)
{
	const char	*in = call_str(call, "input", "");
	size_t		 off, n, len = strlen(in);

	for (off = 0; off < len; off += n) {
		n = piece_len(in, off, len);
		sse_event(c, "response.custom_tool_call_input.delta",
		    json_pack("{s:s, s:s, s:i, s:s%}", "type",
		    "response.custom_tool_call_input.delta", "item_id", id,
		    "output_index", idx, "delta", in + off, n), delay);
	}
	sse_event(c, "response.custom_tool_call_input.done", json_pack("{s:s, "
	    "s:s, s:i, s:s}", "type", "response.custom_tool_call_input.done",
	    "item_id", id, "output_index", idx, "input", in), delay);
}

static void
stream_responses(struct conn *c, const struct reply *r, int delay)
{
	json_t		*call;
	char		*args, id[32];
	const char	*st;
	size_t		 i, off, len, n;
	int		 idx = 0;

	sse_event(c, "response.created", json_pack("{s:s, s:{s:s, s:s, s:s, "
	    "s:[]}}", "type", "response.created", "response", "id",
	    "resp_fake", "object", "response", "status", "in_progress",
	    "output"), delay);
	if (r->text != NULL) {
		sse_event(c, "response.output_item.added", json_pack("{s:s, "
		    "s:i, s:{s:s, s:s, s:s, s:s, s:[]}}", "type",
		    "response.output_item.added", "output_index", idx, "item",
		    "type", "message", "id", "msg_0", "status", "in_progress",
		    "role", "assistant", "content"), delay);
		sse_event(c, "response.content_part.added", json_pack("{s:s, "
		    "s:s, s:i, s:i, s:{s:s, s:s, s:[]}}", "type",
		    "response.content_part.added", "item_id", "msg_0",
		    "output_index", idx, "content_index", 0, "part", "type",
		    "output_text", "text", "", "annotations"), delay);
		len = strlen(r->text);
		for (off = 0; off < len; off += n) {
			n = piece_len(r->text, off, len);
			sse_event(c, "response.output_text.delta", json_pack(
			    "{s:s, s:s, s:i, s:i, s:s%}", "type",
			    "response.output_text.delta", "item_id", "msg_0",
			    "output_index", idx, "content_index", 0, "delta",
			    r->text + off, n), delay);
		}
		sse_event(c, "response.output_text.done", json_pack("{s:s, "
		    "s:s, s:i, s:i, s:s}", "type", "response.output_text.done",
		    "item_id", "msg_0", "output_index", idx, "content_index", 0,
		    "text", r->text), delay);
		/* The whole part and item again, as the API does: a client
		 * may build its message from these alone (Codex does). */
		sse_event(c, "response.content_part.done", json_pack("{s:s, "
		    "s:s, s:i, s:i, s:{s:s, s:s, s:[]}}", "type",
		    "response.content_part.done", "item_id", "msg_0",
		    "output_index", idx, "content_index", 0, "part", "type",
		    "output_text", "text", r->text, "annotations"), delay);
		sse_event(c, "response.output_item.done", json_pack("{s:s, s:i, "
		    "s:o}", "type", "response.output_item.done", "output_index",
		    idx, "item", responses_message_item(r->text)), delay);
		idx++;
	}
	json_array_foreach(r->calls, i, call) {
		snprintf(id, sizeof(id), "fc_%zu", i);
		sse_event(c, "response.output_item.added", json_pack("{s:s, "
		    "s:i, s:o}", "type", "response.output_item.added",
		    "output_index", idx, "item",
		    responses_call_item(call, i, "")), delay);
		if (call_custom(call)) {
			stream_responses_custom(c, call, id, idx, delay);
			sse_event(c, "response.output_item.done", json_pack(
			    "{s:s, s:i, s:o}", "type",
			    "response.output_item.done", "output_index", idx,
			    "item", responses_call_item(call, i, NULL)), delay);
			idx++;
			continue;
		}
		args = call_args(call);
		len = args != NULL ? strlen(args) : 0;
		for (off = 0; off < len; off += n) {
			n = piece_len(args, off, len);
			sse_event(c, "response.function_call_arguments.delta",
			    json_pack("{s:s, s:s, s:i, s:s%}", "type",
			    "response.function_call_arguments.delta", "item_id",
			    id, "output_index", idx, "delta", args + off, n),
			    delay);
		}
		sse_event(c, "response.function_call_arguments.done",
		    json_pack("{s:s, s:s, s:i, s:s}", "type",
		    "response.function_call_arguments.done", "item_id", id,
		    "output_index", idx, "arguments", args != NULL ? args :
		    "{}"), delay);
		free(args);
		sse_event(c, "response.output_item.done", json_pack("{s:s, s:i, "
		    "s:o}", "type", "response.output_item.done", "output_index",
		    idx, "item", responses_call_item(call, i, NULL)), delay);
		idx++;
	}
	st = stop_for(r, FMT_RESPONSES);
	sse_event(c, strcmp(st, "incomplete") == 0 ? "response.incomplete" :
	    "response.completed", json_pack("{s:s, s:o}", "type",
	    strcmp(st, "incomplete") == 0 ? "response.incomplete" :
	    "response.completed", "response", render_responses(r, st)), delay);
}

static enum fmt
path_format(const char *path)
{
	if (strstr(path, "/messages") != NULL)
		return FMT_ANTHROPIC;
	if (strstr(path, "/responses") != NULL)
		return FMT_RESPONSES;
	return FMT_OPENAI;
}

/* A neutral reply, in the request's format, streamed if it asked. */
static void
respond_reply(struct conn *c, json_t *resp, json_t *reply, const char *path,
    json_t *body, int delay, int chunk_delay)
{
	struct reply	 r;
	json_t		*u, *doc;
	enum fmt	 f = path_format(path);
	char		*s;
	int		 stream;

	memset(&r, 0, sizeof(r));
	r.text = call_str(reply, "text", NULL);
	r.calls = json_object_get(reply, "calls");
	r.stop = call_str(reply, "stop", NULL);
	u = json_object_get(reply, "usage");
	r.in = json_integer_value(json_object_get(u, "input"));
	r.out = json_integer_value(json_object_get(u, "output"));
	r.model = call_str(body, "model", "fake-model");
	stream = json_is_true(json_object_get(body, "stream"));
	if (stream) {
		conn_head(c, resp, 200, "text/event-stream", -1, delay);
		if (f == FMT_OPENAI)
			stream_openai(c, &r, chunk_delay);
		else if (f == FMT_ANTHROPIC)
			stream_anthropic(c, &r, chunk_delay);
		else
			stream_responses(c, &r, chunk_delay);
		if (!json_is_true(json_object_get(resp, "truncate")))
			conn_addf(c, 0, "0\r\n\r\n");
		else
			c->close_after = 1;
		return;
	}
	doc = f == FMT_OPENAI ? render_openai(&r) : f == FMT_ANTHROPIC ?
	    render_anthropic(&r) : render_responses(&r, NULL);
	if (doc == NULL || (s = json_dumps(doc, JSON_COMPACT)) == NULL)
		die("cannot render a reply");
	json_decref(doc);
	conn_head(c, resp, 200, "application/json", (long long)strlen(s),
	    delay);
	conn_add_piece(c, s, strlen(s), 0);
	free(s);
}

/* A raw answer: body text/object, or SSE chunks, with any status. */
static void
respond_raw(struct conn *c, json_t *resp, int status, int delay,
    int chunk_delay)
{
	json_t	*body = json_object_get(resp, "body");
	json_t	*sse = json_object_get(resp, "sse");
	json_t	*ch;
	char	*s;
	size_t	 i, len;
	int	 trunc = json_is_true(json_object_get(resp, "truncate"));

	if (json_is_array(sse)) {
		conn_head(c, resp, status, "text/event-stream", -1, delay);
		json_array_foreach(sse, i, ch) {
			if (json_is_string(ch))
				conn_chunk(c, json_string_value(ch),
				    json_string_length(ch), chunk_delay);
			else if (json_is_object(ch) || json_is_array(ch))
				sse_event(c, NULL, json_incref(ch), chunk_delay);
		}
		if (trunc)
			c->close_after = 1;
		else
			conn_addf(c, 0, "0\r\n\r\n");
		return;
	}
	if (json_is_string(body))
		s = strdup(json_string_value(body));
	else if (body != NULL)
		s = json_dumps(body, JSON_COMPACT);
	else
		s = strdup("");
	if (s == NULL)
		die("out of memory");
	len = strlen(s);
	conn_head(c, resp, status, json_is_string(body) ? "text/plain" :
	    "application/json", (long long)len, delay);
	/* Truncated: promise the whole length, send half, close. */
	conn_add_piece(c, s, trunc ? len / 2 : len, 0);
	if (trunc)
		c->close_after = 1;
	free(s);
}

/* ---- the script ---- */

static int
rule_matches(struct rule *r, const char *path, const char *body)
{
	json_t	*m;
	size_t	 i;

	if (r->path != NULL && strstr(path, r->path) == NULL)
		return 0;
	if (json_is_string(r->match))
		return strstr(body, json_string_value(r->match)) != NULL;
	json_array_foreach(r->match, i, m) {
		if (!json_is_string(m) || strstr(body,
		    json_string_value(m)) == NULL)
			return 0;
	}
	return 1;
}

static json_t *
script_pick(const char *path, const char *body)
{
	struct rule	*r;
	size_t		 i, n;

	for (i = 0; i < nrules; i++) {
		r = &rules[i];
		n = json_array_size(r->responses);
		if (n == 0 || !rule_matches(r, path, body))
			continue;
		if (r->next < n)
			return json_array_get(r->responses, r->next++);
		if (r->repeat)
			return json_array_get(r->responses, n - 1);
	}
	return NULL;
}

static void
script_load(const char *path)
{
	json_error_t	 je;
	json_t		*arr, *it;
	size_t		 i;

	if ((script = json_load_file(path, 0, &je)) == NULL)
		die("%s:%d: %s", path, je.line, je.text);
	if (json_is_array(script)) {
		/* A bare array: the responses, in order. */
		arr = json_pack("[{s:O}]", "responses", script);
		json_decref(script);
		script = json_pack("{s:o}", "rules", arr);
	}
	arr = json_object_get(script, "rules");
	if (!json_is_array(arr)) {
		/* {"responses": [...], "repeat": ...}: one rule. */
		arr = json_pack("[O]", script);
		json_object_set_new(script, "rules", arr);
	}
	nrules = json_array_size(arr);
	if ((rules = calloc(nrules + 1, sizeof(*rules))) == NULL)
		die("out of memory");
	json_array_foreach(arr, i, it) {
		if (!json_is_object(it) ||
		    !json_is_array(json_object_get(it, "responses")))
			die("%s: rule %zu has no \"responses\" array", path, i);
		rules[i].match = json_object_get(it, "match");
		rules[i].path = call_str(it, "path", NULL);
		rules[i].responses = json_object_get(it, "responses");
		rules[i].repeat = json_is_true(json_object_get(it, "repeat"));
	}
	gather = (unsigned long)json_integer_value(json_object_get(script,
	    "gather"));
}

/*
 * The last request "gather" waited for is in: every held answer's delay
 * starts now, so answers come in the order of their delays however long
 * the requests took to arrive.
 */
static void
gather_release(void)
{
	uint64_t	now = now_ms();
	size_t		i;

	for (i = 0; i < MAX_CONNS; i++)
		if (conns[i] != NULL && conns[i]->state == CONN_WAIT &&
		    conns[i]->iout == 0 && conns[i]->nout > 0)
			conns[i]->wake = now +
			    (uint64_t)conns[i]->out[0].delay_ms;
}

/* Are answers still held for "gather"? */
static int
gathering(uint64_t now)
{
	return nrequests < gather && (gather_until == 0 || now < gather_until);
}

/* ---- HTTP ---- */

static void
log_request(const char *method, const char *path, json_t *headers,
    const char *body, size_t bodylen)
{
	json_t	*b, *o;
	char	*s;

	if (reqlog == NULL)
		return;
	if ((b = json_loadb(body, bodylen, 0, NULL)) == NULL)
		b = json_stringn_nocheck(body, bodylen);
	o = json_pack("{s:I, s:I, s:s, s:s, s:O, s:o}", "n",
	    (json_int_t)nrequests, "ms", (json_int_t)now_ms(), "method",
	    method, "path", path, "headers", headers, "body", b);
	if (o == NULL || (s = json_dumps(o, JSON_COMPACT)) == NULL)
		die("cannot log a request");
	fprintf(reqlog, "%s\n", s);
	fflush(reqlog);
	free(s);
	json_decref(o);
}

/* Parse a complete request in c->in; returns its length, 0 if partial. */
static size_t
http_request(struct conn *c)
{
	char		*end, *line, *next, *colon, method[16], path[2048];
	char		*body, *k, *v, *p, *hdr;
	json_t		*headers, *resp, *jbody, *reply;
	size_t		 hlen, clen = 0, total;
	int		 status, delay, chunk_delay;

	if ((end = memmem(c->in, c->inlen, "\r\n\r\n", 4)) == NULL) {
		if (c->inlen > MAX_HEADER)
			return (size_t)-1;
		return 0;
	}
	hlen = (size_t)(end - c->in) + 4;
	/* The head is parsed in a copy: c->in stays as read while the
	 * rest of a long body is still to come. */
	if ((hdr = strndup(c->in, hlen - 4)) == NULL)
		die("out of memory");
	if (sscanf(hdr, "%15s %2047s", method, path) != 2) {
		free(hdr);
		return (size_t)-1;
	}
	headers = json_object();
	line = strstr(hdr, "\r\n");
	for (line = line != NULL ? line + 2 : NULL; line != NULL && *line;
	    line = next) {
		if ((next = strstr(line, "\r\n")) != NULL) {
			*next = '\0';
			next += 2;
		}
		if ((colon = strchr(line, ':')) == NULL)
			continue;
		*colon = '\0';
		for (k = line; *k; k++)
			*k = (char)tolower((unsigned char)*k);
		for (v = colon + 1; *v == ' ' || *v == '\t'; v++)
			;
		if (strcmp(line, "content-length") == 0)
			clen = strtoul(v, NULL, 10);
		json_object_set_new(headers, line, json_string(v));
	}
	free(hdr);
	if (clen > MAX_REQUEST) {
		json_decref(headers);
		return (size_t)-1;
	}
	total = hlen + clen;
	if (c->inlen < total) {
		/* Wait for the rest of the body. */
		json_decref(headers);
		return 0;
	}
	body = c->in + hlen;
	if (nrequests++ == 0 && gather > 0)
		gather_until = now_ms() + 10000;
	/* NUL-terminate the body for matching, after a copy of the byte. */
	if ((p = malloc(clen + 1)) == NULL)
		die("out of memory");
	memcpy(p, body, clen);
	p[clen] = '\0';
	log_request(method, path, headers, p, clen);
	jbody = json_loadb(p, clen, 0, NULL);
	resp = script_pick(path, p);
	if (resp == NULL) {
		static const char nomatch[] = "{\"error\":{\"message\":"
		    "\"fakellm: no scripted response for this request\"}}";

		conn_addf(c, 0, "HTTP/1.1 404 Not Found\r\nContent-Type: "
		    "application/json\r\nContent-Length: %zu\r\n\r\n%s",
		    strlen(nomatch), nomatch);
		goto out;
	}
	status = (int)json_integer_value(json_object_get(resp, "status"));
	if (status == 0)
		status = 200;
	delay = (int)json_integer_value(json_object_get(resp, "delay_ms"));
	chunk_delay = (int)json_integer_value(json_object_get(resp,
	    "chunk_delay_ms"));
	if (json_is_true(json_object_get(resp, "hang"))) {
		c->state = CONN_HANG;
		goto out;
	}
	if (json_is_true(json_object_get(resp, "reset"))) {
		/* Close without a word (after the delay). */
		struct linger lg = { 1, 0 };

		setsockopt(c->fd, SOL_SOCKET, SO_LINGER, &lg, sizeof(lg));
		conn_add_piece(c, "", 0, delay);
		c->close_after = 1;
		goto out;
	}
	if ((reply = json_object_get(resp, "reply")) != NULL)
		respond_reply(c, resp, reply, path, jbody, delay, chunk_delay);
	else
		respond_raw(c, resp, status, delay, chunk_delay);
out:
	free(p);
	json_decref(jbody);
	json_decref(headers);
	return total;
}

static void
conn_read(size_t i)
{
	struct conn	*c = conns[i];
	char		*p;
	ssize_t		 n;
	size_t		 used;

	if (c->incap - c->inlen < 65536) {
		if ((p = realloc(c->in, c->incap + 65536 + 1)) == NULL)
			die("out of memory");
		c->in = p;
		c->incap += 65536;
	}
	n = read(c->fd, c->in + c->inlen, c->incap - c->inlen);
	if (n == 0 || (n == -1 && errno != EAGAIN && errno != EINTR)) {
		conn_close(i);
		return;
	}
	if (n == -1)
		return;
	c->inlen += (size_t)n;
	if (c->state != CONN_READ)
		return;		/* pipelining: keep it for later */
	used = http_request(c);
	if (used == (size_t)-1) {
		conn_close(i);
		return;
	}
	if (used == 0)
		return;
	memmove(c->in, c->in + used, c->inlen - used);
	c->inlen -= used;
	if (c->state == CONN_HANG)
		return;
	c->state = CONN_WAIT;
	c->iout = c->off = 0;
	c->wake = now_ms() + (uint64_t)(c->nout > 0 ? c->out[0].delay_ms : 0);
	if (gather > 0 && nrequests == gather)
		gather_release();
}

/* Write what is due; move to the next piece after its delay. */
static void
conn_write(size_t i)
{
	struct conn	*c = conns[i];
	struct piece	*p;
	ssize_t		 n;
	size_t		 j;

	while (c->iout < c->nout) {
		p = &c->out[c->iout];
		if (c->off < p->len) {
			n = write(c->fd, p->data + c->off, p->len - c->off);
			if (n == -1) {
				if (errno == EAGAIN || errno == EINTR) {
					c->state = CONN_WRITE;
					return;
				}
				conn_close(i);
				return;
			}
			c->off += (size_t)n;
			if (c->off < p->len) {
				c->state = CONN_WRITE;
				return;
			}
		}
		c->iout++;
		c->off = 0;
		if (c->iout < c->nout && c->out[c->iout].delay_ms > 0) {
			c->state = CONN_WAIT;
			c->wake = now_ms() + (uint64_t)c->out[c->iout].delay_ms;
			return;
		}
	}
	if (c->close_after) {
		conn_close(i);
		return;
	}
	for (j = 0; j < c->nout; j++)
		free(c->out[j].data);
	free(c->out);
	c->out = NULL;
	c->nout = c->iout = c->off = 0;
	c->state = CONN_READ;
	/* A pipelined request may already be waiting. */
	if (c->inlen > 0) {
		size_t used = http_request(c);

		if (used == (size_t)-1) {
			conn_close(i);
			return;
		}
		if (used > 0) {
			memmove(c->in, c->in + used, c->inlen - used);
			c->inlen -= used;
			if (c->state != CONN_HANG) {
				c->state = CONN_WAIT;
				c->wake = now_ms() + (uint64_t)(c->nout > 0 ?
				    c->out[0].delay_ms : 0);
			}
		}
	}
}

static void
conn_accept(int lfd)
{
	struct conn	*c;
	size_t		 i;
	int		 fd, one = 1;

	while ((fd = accept4(lfd, NULL, NULL, SOCK_NONBLOCK |
	    SOCK_CLOEXEC)) != -1) {
		for (i = 0; i < MAX_CONNS && conns[i] != NULL; i++)
			;
		if (i == MAX_CONNS) {
			close(fd);
			continue;
		}
		setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
		if ((c = calloc(1, sizeof(*c))) == NULL)
			die("out of memory");
		c->fd = fd;
		conns[i] = c;
	}
}

static void
write_port_file(const char *path, int port)
{
	char	tmp[4096];
	FILE	*f;

	snprintf(tmp, sizeof(tmp), "%s.tmp", path);
	if ((f = fopen(tmp, "w")) == NULL)
		die("%s: %s", tmp, strerror(errno));
	fprintf(f, "%d\n", port);
	if (fclose(f) == EOF || rename(tmp, path) == -1)
		die("%s: %s", path, strerror(errno));
}

static void
usage(void)
{
	fprintf(stderr, "usage: fakellm --script FILE [--port-file FILE] "
	    "[--log FILE] [--port N]\n");
	exit(2);
}

int
main(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "script", required_argument, NULL, 's' },
		{ "port-file", required_argument, NULL, 'p' },
		{ "log", required_argument, NULL, 'l' },
		{ "port", required_argument, NULL, 'P' },
		{ NULL, 0, NULL, 0 },
	};
	struct sockaddr_in	 sin;
	struct pollfd		*pfd;
	struct sigaction	 sa;
	sigset_t		 stop, waitmask;
	struct timespec		 ts, *tsp;
	socklen_t		 slen = sizeof(sin);
	const char		*portfile = NULL, *logpath = NULL;
	const char		*scriptpath = NULL;
	size_t			 idx[MAX_CONNS + 1], n, i;
	uint64_t		 now;
	int			 ch, lfd, one = 1, port = 0, timeout;

	while ((ch = getopt_long(argc, argv, "", opts, NULL)) != -1) {
		switch (ch) {
		case 's': scriptpath = optarg; break;
		case 'p': portfile = optarg; break;
		case 'l': logpath = optarg; break;
		case 'P': port = atoi(optarg); break;
		default: usage();
		}
	}
	if (scriptpath == NULL)
		usage();
	script_load(scriptpath);
	if (logpath != NULL && (reqlog = fopen(logpath, "a")) == NULL)
		die("%s: %s", logpath, strerror(errno));
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_signal;
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGINT, &sa, NULL);
	signal(SIGPIPE, SIG_IGN);
	/*
	 * SIGTERM and SIGINT arrive only inside ppoll(): one that came
	 * between the loop's check of quit and a poll() without a timeout
	 * would be lost, and the test waiting for us would hang (seen under
	 * load, the loop's scan of every slot widening the window).
	 */
	sigemptyset(&stop);
	sigaddset(&stop, SIGTERM);
	sigaddset(&stop, SIGINT);
	if (sigprocmask(SIG_BLOCK, &stop, &waitmask) == -1)
		die("sigprocmask: %s", strerror(errno));

	if ((lfd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC,
	    0)) == -1)
		die("socket: %s", strerror(errno));
	setsockopt(lfd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	memset(&sin, 0, sizeof(sin));
	sin.sin_family = AF_INET;
	sin.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	sin.sin_port = htons((uint16_t)port);
	if (bind(lfd, (struct sockaddr *)&sin, sizeof(sin)) == -1 ||
	    listen(lfd, 512) == -1 ||
	    getsockname(lfd, (struct sockaddr *)&sin, &slen) == -1)
		die("listen on 127.0.0.1: %s", strerror(errno));
	if (portfile != NULL)
		write_port_file(portfile, ntohs(sin.sin_port));
	else
		printf("%d\n", ntohs(sin.sin_port));
	fflush(stdout);

	if ((pfd = calloc(MAX_CONNS + 1, sizeof(*pfd))) == NULL)
		die("out of memory");
	while (!quit) {
		pfd[0].fd = lfd;
		pfd[0].events = POLLIN;
		n = 1;
		timeout = -1;
		now = now_ms();
		for (i = 0; i < MAX_CONNS; i++) {
			if (conns[i] == NULL)
				continue;
			if (conns[i]->state == CONN_WAIT) {
				uint64_t w = gathering(now) ? gather_until :
				    conns[i]->wake;
				int d = w > now ? (int)(w - now) : 0;

				if (timeout < 0 || d < timeout)
					timeout = d;
			}
			pfd[n].fd = conns[i]->fd;
			pfd[n].events = conns[i]->state == CONN_WRITE ?
			    POLLOUT : POLLIN;
			pfd[n].revents = 0;
			idx[n++] = i;
		}
		tsp = NULL;
		if (timeout >= 0) {
			ts.tv_sec = timeout / 1000;
			ts.tv_nsec = (long)(timeout % 1000) * 1000000;
			tsp = &ts;
		}
		if (ppoll(pfd, n, tsp, &waitmask) == -1) {
			if (errno == EINTR)
				continue;
			die("poll: %s", strerror(errno));
		}
		if (pfd[0].revents & POLLIN)
			conn_accept(lfd);
		now = now_ms();
		for (i = 1; i < n; i++) {
			struct conn *c = conns[idx[i]];

			if (c == NULL)
				continue;
			if (pfd[i].revents & (POLLIN | POLLHUP | POLLERR) &&
			    c->state != CONN_WRITE)
				conn_read(idx[i]);
			if ((c = conns[idx[i]]) == NULL)
				continue;
			if ((c->state == CONN_WAIT && now >= c->wake &&
			    !gathering(now)) ||
			    (c->state == CONN_WRITE &&
			    (pfd[i].revents & POLLOUT)))
				conn_write(idx[i]);
		}
	}
	for (i = 0; i < MAX_CONNS; i++) {
		if (conns[i] != NULL)
			conn_close(i);
	}
	if (reqlog != NULL)
		fclose(reqlog);
	free(pfd);
	free(rules);
	json_decref(script);
	close(lfd);
	return 0;
}

/*
 * Internals of the LLM client, shared by its files, tests, fuzzers and
 * benchmarks. Callers of the client use llm/llm.h only.
 */
#ifndef WARREN_LLM_INT_H
#define WARREN_LLM_INT_H

#include <stddef.h>
#include <stdint.h>

#include <jansson.h>

#include "common/buf.h"
#include "common/msg.h"
#include "llm/llm.h"

/* Bounds on what a server may send. */
#define LLM_MAX_EVENT		(8u * 1024 * 1024)	/* one SSE event */
#define LLM_MAX_CALLS		256			/* tool calls in one answer */
#define LLM_MAX_NAME		256			/* tool name, call id */
#define LLM_SNIPPET		160			/* bytes quoted in errors */
#define LLM_ERRSZ		512

/*
 * llm_sse.c: a Server-Sent Events parser (WHATWG rules: lines end in
 * \n, \r\n or \r; "data:" lines join with \n; "event:" names the event;
 * ':' starts a comment; a blank line dispatches). Bounded: an event over
 * max bytes is an error.
 */
typedef int (*llm_sse_fn)(const char *event, const char *data, size_t len,
    void *arg);

struct llm_sse {
	struct buf	 line;		/* the line being read */
	struct buf	 data;		/* data lines of the current event */
	char		 event[64];
	int		 has_data;
	int		 cr;		/* last byte was \r */
	size_t		 max;
	size_t		 nevents;
};

void	llm_sse_init(struct llm_sse *s, size_t max);
/* Feed bytes; fn is called per event. -1 if an event is too big or fn fails. */
int	llm_sse_feed(struct llm_sse *s, const char *p, size_t n, llm_sse_fn fn,
	    void *arg);
void	llm_sse_free(struct llm_sse *s);

/*
 * llm_acc.c: an answer being assembled, by a non-streaming parser in one
 * go or by a stream parser event by event. Calls are found by the wire's
 * own key (OpenAI's index, Anthropic's block index, a Responses item id).
 */
struct llm_acc_call {
	char		*key;
	char		*id;
	char		*name;
	struct buf	 args;
};

struct llm_acc {
	struct buf		 text;
	struct llm_acc_call	*calls;
	size_t			 ncalls;
	struct msg_usage	 usage;
	enum msg_stop		 stop;
	int			 stopped;	/* a stop reason was seen */
	int			 done;		/* the stream's terminal event came */
	int			 server_error;	/* the server reported an error in-band */
	size_t			 max;		/* cap on text + arguments */
	void			(*on_text)(const char *, size_t, void *);
	void			*arg;
	char			 err[LLM_ERRSZ];
	/* Anthropic: which content block index is a tool_use. */
	char			 cur_key[32];
};

void	llm_acc_init(struct llm_acc *a, size_t max);
void	llm_acc_free(struct llm_acc *a);
int	llm_acc_text(struct llm_acc *a, const char *s, size_t len);
/* Find the call with this key, or add one; NULL (acc->err set) if too many. */
struct llm_acc_call *llm_acc_call(struct llm_acc *a, const char *key);
/* The call with this key, found or added, its id and name set where
 * given (a block, item or tool call that opens or repeats it); NULL with
 * acc->err. For the three wires. */
struct llm_acc_call *llm_acc_call_open(struct llm_acc *a, const char *key,
	    const char *id, const char *name);
int	llm_acc_args(struct llm_acc *a, struct llm_acc_call *c, const char *s,
	    size_t len);
/* Move the answer into out (ids generated where missing). */
int	llm_acc_finish(struct llm_acc *a, struct msg_reply *out);
int	llm_acc_fail(struct llm_acc *a, const char *fmt, ...)
	    __attribute__((format(printf, 2, 3)));

/* llm_json.c: small JSON helpers for the wire files. */
/* A bounded, escaped quote of hostile bytes for error messages. */
/* Parse a JSON object; -1 with err quoting the input on failure. */
json_t	*llm_json_parse(const char *p, size_t len, char *err, size_t errsz);
/* The server's own error message in an error body, escaped; or a snippet. */
void	 llm_json_errmsg(char *out, size_t outsz, const char *p, size_t len);
const char *llm_json_str(json_t *o, const char *key);
uint64_t llm_json_u64(json_t *o, const char *key);
/* JSON text of a tool schema, or {"type":"object"} when NULL/invalid. */
json_t	*llm_json_schema(const char *schema);
/* Arguments as JSON: an object parsed from raw text, or {} on garbage. */
json_t	*llm_json_args(const char *args);
/* A JSON string from possibly invalid UTF-8 (bad bytes become U+FFFD). */
json_t	*llm_json_string(const char *s);
int	 llm_json_setstr(json_t *o, const char *key, const char *s);

/* The three wire formats. */
struct llm_wire_req {
	const struct llm_config	*cfg;
	const char		*model;
	unsigned		 max_tokens;
	const struct msg_list	*msgs;
	const struct msg_tool	*tools;
	size_t			 ntools;
	int			 stream;
};

/* What one wire format's request body differs in (llm_json_body). */
struct llm_body {
	const char	*list_key;	/* the messages: "messages", "input" */
	const char	*system_key;	/* system text lifted there; NULL: kept */
	/* One message appended to the list; -1 on no memory. */
	int		(*add)(json_t *list, const struct msg *m);
	json_t		*(*tool)(const struct msg_tool *tool, json_t **descp);
	int		 stream_usage;	/* stream_options.include_usage */
	const char	*max_key;	/* max_tokens when set; NULL: in the head */
};

struct llm_wire {
	const char	*name;
	const char	*path;		/* appended to the base URL */
	const char	*auth;		/* header prefix before the key */
	const char	*fixed_header;	/* sent with every request, or NULL */
	/* The request body (malloc'd JSON); NULL with err. */
	char		*(*build)(const struct llm_wire_req *req, char *err,
			    size_t errsz);
	/* A whole non-streamed answer into acc; -1 with acc->err. */
	int		 (*parse)(struct llm_acc *acc, const char *body,
			    size_t len);
	/* One SSE event into acc; -1 with acc->err. */
	int		 (*event)(struct llm_acc *acc, const char *event,
			    const char *data, size_t len);
};

/* llm_json.c: a request body, the formats' shared part (takes o). */
char	*llm_json_dump(json_t *o);
char	*llm_json_body(const struct llm_wire_req *req, json_t *o,
	    const struct llm_body *b, char *err, size_t errsz);

/* llm_openai.c, llm_anthropic.c, llm_responses.c */
extern const struct llm_wire llm_openai_wire;
extern const struct llm_wire llm_anthropic_wire;
extern const struct llm_wire llm_responses_wire;
const struct llm_wire *llm_wire_get(enum llm_provider p);

/* llm_textcall.c: tool calling for models without it. */
/*
 * Rewrite a conversation for text mode: the tool list is described in
 * the system message, earlier calls become <tool_call> text, tool results
 * become user messages in <tool_response> blocks.
 */
int	llm_textcall_rewrite(const struct msg_list *in,
	    const struct msg_tool *tools, size_t ntools, struct msg_list *out);
/*
 * Move the tool calls written in m->text (Hermes <tool_call> blocks or
 * fenced JSON with "name" and "arguments") into m->calls; the text keeps
 * what was around them. Returns the number of calls found.
 */
int	llm_textcall_parse(struct msg *m);

/* llm_cassette.c: record and replay (docs/cassette.md). */
struct llm_cassette;

struct llm_cassette *llm_cassette_open(const char *path, int record,
	    char *err, size_t errsz);
void	llm_cassette_close(struct llm_cassette *c);
/*
 * Replay: fill res (reply, or the recorded error) for agent/step/purpose.
 * -1 if the cassette has no such entry.
 */
int	llm_cassette_find(struct llm_cassette *c, const char *agent,
	    unsigned step, enum llm_purpose purpose, struct llm_result *res);
/* Record: append one exchange. -1 with errno on I/O failure. */
int	llm_cassette_write(struct llm_cassette *c, const char *agent,
	    unsigned step, enum llm_purpose purpose, const char *provider,
	    const char *model, const char *request, const struct llm_result *res);
const char *llm_purpose_name(enum llm_purpose p);
/* Pass-through exchanges ("purpose": "http"): the answer as sent. */
int	llm_cassette_find_http(struct llm_cassette *c, const char *agent,
	    unsigned step, struct llm_result *res);
int	llm_cassette_write_http(struct llm_cassette *c, const char *agent,
	    unsigned step, const char *wire, const char *request,
	    const struct llm_result *res);

/* llm_window.c: the adaptive cap on requests on the wire. */
struct llm_window {
	unsigned	 ceiling;	/* llm_concurrency */
	unsigned	 limit;		/* requests on the wire at most, now */
	unsigned	 credit;	/* answers since the last change */
	uint64_t	 epoch;		/* decreases so far */
};
void	llm_window_init(struct llm_window *w, unsigned ceiling);
/* A 429 to a request sent in sent_epoch, on_wire requests on the wire
 * (it included): 1 if the cap went down (to half), 0 if not. */
int	llm_window_throttled(struct llm_window *w, uint64_t sent_epoch,
	    size_t on_wire);
/* An answer: the cap creeps back up toward the ceiling. */
void	llm_window_answered(struct llm_window *w);

/* llm_key.c: the API key. */
/*
 * Read the key: the file if keyfile is set, else WARREN_API_KEY, else
 * the provider's own variable (envname). Then overwrite every key
 * variable's bytes in the environment block. *key is NULL when none is
 * found (keyless local servers). -1 with err on an unreadable file.
 */
int	llm_key_load(const char *keyfile, const char *envname, char **key,
	    char *err, size_t errsz);
/* Star every copy of key in buf; the count. */
size_t	llm_key_redact(char *buf, size_t len, const char *key);
/* The longest end of buf shorter than key that begins it. */
size_t	llm_key_partial(const char *buf, size_t len, const char *key);
/* Overwrite the value bytes of one environment variable in place. */

#endif

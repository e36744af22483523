/*
 * The LLM client: one engine per supervisor, driven by its event loop.
 *
 * Only the supervisor talks to the model. The engine turns a request in the
 * neutral message model (common/msg.h) into one of three wire formats
 * (OpenAI chat completions, Anthropic Messages, OpenAI Responses), sends it
 * on a libcurl multi handle, streams and parses the answer, retries what is
 * worth retrying with backoff timers, and calls back with a struct
 * msg_reply or an error. Many requests run at once on one thread; requests
 * beyond the concurrency cap wait in a queue. Record and replay of
 * cassettes (docs/cassette.md) live inside the engine, so every caller
 * gets them.
 *
 * Driving it from an epoll loop:
 *
 *	add llm_engine_fd(e) for EPOLLIN;
 *	loop:
 *		timeout = min(your timers, llm_engine_timeout_ms(e));
 *		epoll_wait(..., timeout);
 *		llm_engine_process(e);	   (always, or when the fd is ready
 *					    or the timeout expired)
 *
 * Completion callbacks and text-delta callbacks run only from inside
 * llm_engine_process() (or llm_complete_blocking()), never from
 * llm_submit() or llm_cancel(). Every successful llm_submit() gets exactly
 * one completion callback, cancelled or not. The engine is not thread safe:
 * one thread owns it.
 *
 * The API key never leaves the engine: not in a log line, an error, a
 * trace or a cassette. Every error message is escaped (common/str.h) and
 * bounded, safe to print.
 */
#ifndef WARREN_LLM_H
#define WARREN_LLM_H

#include <stddef.h>
#include <stdint.h>

#include "common/msg.h"

struct config;

/* Wire format; presets (ollama, openrouter, ...) map onto one of these. */
enum llm_provider {
	LLM_PROVIDER_OPENAI = 0,	/* POST {base}/chat/completions */
	LLM_PROVIDER_ANTHROPIC,		/* POST {base}/messages */
	LLM_PROVIDER_RESPONSES,		/* POST {base}/responses */
};

/* How tools reach the model. */
enum llm_tool_mode {
	LLM_TOOLS_NATIVE = 0,	/* the API's own tool calling */
	LLM_TOOLS_TEXT,		/* described in the prompt, parsed from text */
};

/*
 * Everything the engine needs, filled by llm_config_load() from flags,
 * environment and config files (docs/configuration.md), or by hand in
 * tests. Strings are owned; llm_config_free() releases them (the key with
 * freezero).
 */
struct llm_config {
	enum llm_provider	 provider;
	char			*preset;	/* "openai", "ollama", ... */
	char			*base_url;	/* without the endpoint path */
	char			*model;
	char			*summary_model;	/* for LLM_PURPOSE_SUMMARY; NULL = model */
	double			 temperature;	/* < 0: not sent */
	unsigned		 max_tokens;	/* output cap; 0: not sent (anthropic: 4096) */
	unsigned		 connect_timeout_ms;
	unsigned		 timeout_ms;	/* whole attempt */
	unsigned		 idle_timeout_ms; /* silence once the answer began */
	unsigned		 retries;	/* further attempts after the first */
	unsigned		 backoff_ms;	/* first backoff; doubles, with jitter */
	unsigned		 backoff_max_ms; /* cap on one wait (Retry-After too) */
	unsigned		 concurrency;	/* requests on the wire at once */
	unsigned		 rpm;		/* shared requests a minute; 0 none */
	int			 rate_share;	/* use the shared gate (llm_gate) */
	uint64_t		 tpm;		/* shared tokens a minute; 0 none */
	int			 stream;	/* ask for SSE */
	enum llm_tool_mode	 tool_mode;
	size_t			 max_response;	/* bytes of one answer */
	char			**headers;	/* extra "Name: value" lines */
	size_t			 nheaders;
	char			**aliases;	/* "sonnet=claude-sonnet-4-5":
						   the user's model_aliases */
	size_t			 naliases;
	char			*record;	/* cassette to write, or NULL */
	char			*replay;	/* cassette to serve from, or NULL */
	char			*key;		/* secret; NULL for keyless endpoints */
};

/* What a request is for; part of the cassette key. */
enum llm_purpose {
	LLM_PURPOSE_TURN = 0,	/* an agent's next turn */
	LLM_PURPOSE_SUMMARY,	/* summarising context or a finished node */
	LLM_PURPOSE_HTTP,	/* a backend program's request, passed
				   through (llm_submit_http only) */
};

/*
 * One request. Everything is borrowed and only read during llm_submit():
 * the engine builds the wire body and copies the strings it keeps, so the
 * caller may free it all as soon as llm_submit() returns.
 */
struct llm_request {
	const char		*agent;		/* path in the tree: "0", "0.1.2" */
	unsigned		 step;		/* the agent's step number */
	enum llm_purpose	 purpose;
	const struct msg_list	*msgs;		/* system first if any; in order */
	const struct msg_tool	*tools;		/* offered tools, may be NULL */
	size_t			 ntools;
	const char		*model;		/* override; NULL = configured */
	unsigned		 max_tokens;	/* override; 0 = configured */
	/*
	 * Optional: called with each piece of answer text as it streams in
	 * (raw model text, NOT escaped: escape before printing). In replay,
	 * or without streaming, called once with the whole text. When an
	 * attempt fails after some text and the request is retried, it is
	 * called with (NULL, 0): drop what was shown, the answer restarts.
	 */
	void			(*on_text)(const char *text, size_t len, void *arg);
	void			*text_arg;	/* on_text's arg */
};

enum llm_err {
	LLM_OK = 0,
	LLM_ERR_EXHAUSTED,	/* 429/5xx/reset/truncation, retries used up */
	LLM_ERR_HTTP,		/* a status not worth retrying (400, 401, ...) */
	LLM_ERR_TIMEOUT,	/* connect, total or idle timeout, retries used up */
	LLM_ERR_PARSE,		/* the answer is not what the format says */
	LLM_ERR_TRANSPORT,	/* bad URL, TLS failure: not retried */
	LLM_ERR_REPLAY_MISSING,	/* the cassette has no answer for agent/step */
	LLM_ERR_CANCELLED,	/* llm_cancel() or engine shutdown */
	LLM_ERR_SYSTEM,		/* out of memory, cassette I/O, curl setup */
};

/*
 * The outcome of one request. In a completion callback it belongs to the
 * engine and is freed when the callback returns: to keep the reply, move
 * it out (r = res->reply; memset(&res->reply, 0, sizeof(res->reply))).
 */
struct llm_result {
	uint64_t		 id;		/* as returned by llm_submit() */
	enum llm_err		 err;
	long			 status;	/* last HTTP status; 0 if none */
	char			*error;		/* escaped, readable; NULL if LLM_OK */
	struct msg_reply	 reply;		/* valid if LLM_OK */
	unsigned		 attempts;	/* HTTP attempts made (0 in replay) */
	uint64_t		 elapsed_ms;	/* submit to completion */
	/* llm_submit_http, LLM_OK: the answer as the endpoint sent it
	 * (status above, any 2xx or a status not retried), NUL-ended and
	 * NUL-free; its reported tokens in reply.usage. */
	char			*http_body;
	size_t			 http_len;
	char			*http_type;	/* its Content-Type */
};

/*
 * A backend program's request, passed through (docs/backends.md).
 * Borrowed and copied by llm_submit_http.
 */
#define LLM_HTTP_HEADERS_MAX	8
struct llm_http_request {
	const char		*agent;		/* path in the tree */
	unsigned		 step;		/* the agent's request number */
	const char		*wire;		/* "anthropic", "responses",
						   "openai" */
	const char		*path;		/* "/v1/messages" ... */
	const char *const	*headers;	/* "name: value", forwarded */
	size_t			 nheaders;
	const char		*body;		/* sent as it is */
	/*
	 * Optional: a streamed (text/event-stream) 2xx answer's bytes as
	 * they arrive, with its status and Content-Type. Once a part went,
	 * a failure of the attempt is not retried (the program has seen
	 * part of it): the callback's error ends it. Not in replay, where
	 * the answer comes whole.
	 */
	void			(*on_part)(const char *data, size_t len,
				    long status, const char *ctype, void *arg);
	void			*part_arg;
};

typedef void (*llm_done_fn)(struct llm_result *res, void *arg);

/*
 * A gate every request passes before it goes on the wire, for limits
 * shared with other processes (the supervisor's is run_rate.c, over the
 * queue's database). take: 0 to send now, else the ms to wait before
 * asking again; spent: the tokens an answer cost; pause: a 429 asked
 * everyone to wait ms. The engine asks one request at a time, in queue
 * order; it never asks in replay.
 */
struct llm_gate {
	uint64_t	(*take)(void *arg);
	void		(*spent)(void *arg, uint64_t tokens);
	void		(*pause)(void *arg, uint64_t ms);
	void		*arg;
};

struct llm_engine;

/* llm_config.c */
void		 llm_config_init(struct llm_config *lc);
/* Declare the llm keys in a generic config (before loading files). */
int		 llm_config_declare(struct config *c);
/*
 * Fill lc from a loaded config (flags > environment > files > defaults),
 * read the API key (llm_key.c) and scrub it from the environment block.
 * -1 with a message naming the key and where its value came from.
 */
int		 llm_config_load(struct llm_config *lc, const struct config *c,
		    char *err, size_t errsz);
void		 llm_config_free(struct llm_config *lc);
/* A deep copy, every string its own (-1: out of memory, dst freed). */
int		 llm_config_copy(struct llm_config *dst,
		    const struct llm_config *src);

/* llm_alias.c */
/*
 * lc->aliases from the model_aliases list of c ("NAME=ID" each): -1 with
 * err naming the entry and where it was set.
 */
int		 llm_alias_load(struct llm_config *lc, const struct config *c,
		    char *err, size_t errsz);
/*
 * The model id a request names: model through the user's table, then the
 * provider's built-in one (Claude Code's sonnet, opus and haiku for
 * anthropic), else model itself. Borrowed from lc or model.
 */
const char	*llm_alias_model(const struct llm_config *lc,
		    const char *model);
/* The i-th --provider name (openai, anthropic, ollama ...), NULL past the
 * end: for the shell completions. */
const char	*llm_preset_at(size_t i);

/* llm_engine.c */
/* Copies lc (key included); NULL with a message on failure. */
struct llm_engine *llm_engine_new(const struct llm_config *lc, char *err,
		    size_t errsz);
/* Requests from now on pass g (copied; NULL: none). */
void		 llm_engine_set_gate(struct llm_engine *e,
		    const struct llm_gate *g);
/* Pending requests are dropped without callbacks; records are flushed. */
void		 llm_engine_free(struct llm_engine *e);
/* Readable when the engine has work (sockets, completions). Borrowed. */
int		 llm_engine_fd(const struct llm_engine *e);
/* Milliseconds until the engine needs llm_engine_process(); -1 = none. */
int		 llm_engine_timeout_ms(const struct llm_engine *e);
/* Run curl, timers and the queue; fire callbacks. Never blocks. */
void		 llm_engine_process(struct llm_engine *e);
/* Requests submitted and not yet called back. */
size_t		 llm_engine_pending(const struct llm_engine *e);
/* Requests on the wire now (at most the concurrency cap). */
size_t		 llm_engine_active(const struct llm_engine *e);
/* Where request id is: waiting for a slot (the concurrency cap), on the
 * wire, waiting to be retried, or none (done, unknown). */
enum llm_wait {
	LLM_WAIT_NONE = 0,
	LLM_WAIT_SLOT,
	LLM_WAIT_ANSWER,
	LLM_WAIT_RETRY,
};
enum llm_wait	 llm_engine_wait(const struct llm_engine *e, uint64_t id);
/*
 * Queue a request. Returns its id (never 0), or 0 with errno (EINVAL for
 * a bad request, ENOMEM) and then no callback will come.
 */
uint64_t	 llm_submit(struct llm_engine *e, const struct llm_request *req,
		    llm_done_fn done, void *arg);
/*
 * Queue a pass-through request: sent to the base URL (its /v1 and the
 * path's joined) with the key in the wire's header; retried, capped,
 * gated and recorded as every request is (replayed from the cassette's
 * "http" entries). 0 with errno EINVAL when the wire does not fit the
 * engine's (llm_http_wire_check).
 */
uint64_t	 llm_submit_http(struct llm_engine *e,
		    const struct llm_http_request *req, llm_done_fn done,
		    void *arg);
/* NULL if requests of wire can go to this engine's endpoint, else the
 * engine's own wire (for the message that says what to configure). */
const char	*llm_http_wire_check(const struct llm_engine *e,
		    const char *wire);
/* The tokens an answer reports (a JSON body, or an SSE stream's events:
 * Anthropic's message_start and message_delta, Responses'
 * response.completed, chat completions' usage chunk); the number of
 * usage objects found. */
int		 llm_http_usage(const char *body, size_t len, int sse,
		    struct msg_usage *u);
/* -1 with why when a program's request body asks the endpoint to reach
 * the network (server-side tools, mcp_servers, a URL to fetch). */
int		 llm_http_body_check(const char *body, char *why,
		    size_t whylen);
/*
 * Stop a request: its callback comes (from the next llm_engine_process())
 * with LLM_ERR_CANCELLED. -1 (ENOENT) if it already completed.
 */
int		 llm_cancel(struct llm_engine *e, uint64_t id);
/*
 * Submit and run the engine until this request completes. Fills *res,
 * which the caller frees with llm_result_free(). Returns 0 if res->err is
 * LLM_OK, else -1. Other requests on the engine progress meanwhile.
 */
int		 llm_complete_blocking(struct llm_engine *e,
		    const struct llm_request *req, struct llm_result *res);
void		 llm_result_free(struct llm_result *res);
const char	*llm_err_name(enum llm_err err);

/*
 * llm_cassette.c: was the cassette at path recorded for another task? 1
 * when its root's first recorded request holds no text containing task; 0
 * when it does, or records no request (written by hand), or cannot be
 * read (replay says why). Replay answers by agent and step whatever the
 * task: a run replaying another task's session is told so.
 */
int	llm_cassette_task_check(const char *path, const char *task);

#endif

/*
 * The engine's state and a request's, shared by the engine (llm_engine.c:
 * the queue, curl's multi handle, the loop's fd) and one call on the wire
 * (llm_call.c). Private to those two files.
 */
#ifndef WARREN_LLM_ENGINE_INT_H
#define WARREN_LLM_ENGINE_INT_H

#include <sys/queue.h>

#include "llm/llm_curl.h"
#include "llm/llm_int.h"

enum call_state {
	CALL_QUEUED = 0,
	CALL_ACTIVE,
	CALL_BACKOFF,
	CALL_DONE,
};

struct llm_call {
	TAILQ_ENTRY(llm_call)	 entry;
	struct llm_engine	*e;
	uint64_t		 id;
	enum call_state		 state;
	char			*agent;
	unsigned		 step;
	enum llm_purpose	 purpose;
	char			*model;
	char			*body;
	size_t			 bodylen;
	int			 stream;
	void			(*on_text)(const char *, size_t, void *);
	void			*text_arg;
	llm_done_fn		 done;
	void			*arg;

	/* The attempt on the wire. */
	CURL			*easy;
	struct curl_slist	*hdrs;
	char			 errbuf[CURL_ERROR_SIZE];
	struct buf		 resp;		/* a non-SSE body */
	struct llm_sse		 sse;
	struct llm_acc		 acc;
	int			 is_sse;
	int			 text_sent;	/* on_text was called this attempt */
	char			 retry_after[64];
	uint64_t		 last_byte_ms;	/* 0: nothing received yet */
	size_t			 received;
	int			 idle;		/* stopped by the idle timer */
	int			 aborted;	/* stopped by a write callback error */
	int			 cancel;

	unsigned		 attempts;
	uint64_t		 epoch;		/* the window's, when sent */
	uint64_t		 start_ms;
	uint64_t		 wake_ms;	/* CALL_BACKOFF */
	struct llm_result	 res;

	/* llm_submit_http: a pass-through request (llm_http.c). */
	int			 http;
	const char		*http_wire;	/* static */
	char			*http_url;
	char			*http_shown;	/* masked, for messages */
	char			*http_hdrs[LLM_HTTP_HEADERS_MAX];
	size_t			 nhttp_hdrs;
	char			 http_type[256];
	void			(*on_part)(const char *, size_t, long,
				    const char *, void *);
	void			*part_arg;
	int			 http_parts;	/* parts went to the caller */
	char			*http_hold;	/* a stream's end that may
						 * begin the key */
	size_t			 http_holdlen;
};

TAILQ_HEAD(call_list, llm_call);

struct llm_engine {
	struct llm_config	 cfg;
	const struct llm_wire	*wire;
	char			*url;
	char			*shown_url;	/* url for messages: no secrets */
	CURLM			*multi;
	int			 epfd;
	int64_t			 curl_deadline;	/* monotonic ms; -1 none */
	struct call_list	 queue;
	struct call_list	 active;
	struct call_list	 backoff;
	struct call_list	 done;
	size_t			 nactive;
	size_t			 npending;
	uint64_t		 next_id;
	struct llm_cassette	*cassette;
	int			 replay;
	struct llm_gate		 gate;		/* take == NULL: none */
	uint64_t		 gate_wake_ms;	/* the gate said wait until */
	struct llm_window	 win;		/* the cap, under concurrency */
	uint64_t		 hold_ms;	/* a 429's Retry-After: no new
						 * request before */
};

/* llm_engine.c */
void	llm_call_error(struct llm_call *, enum llm_err, long, const char *,
	    ...) __attribute__((format(printf, 4, 5)));
void	llm_call_move(struct llm_call *, enum call_state to, int front);
void	llm_call_free_attempt(struct llm_call *);
void	llm_call_free(struct llm_call *);

/* llm_http.c */
void	llm_http_answered(struct llm_call *, long status);
int	llm_http_part(struct llm_call *, const char *, size_t, long status);

/* llm_call.c */
int	llm_call_start(struct llm_call *);
void	llm_call_complete(struct llm_call *);
void	llm_call_ended(struct llm_call *, CURLcode);

#endif

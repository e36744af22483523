/*
 * The LLM engine: a libcurl multi handle driven through an epoll fd the
 * supervisor's event loop polls, a queue with a concurrency cap, retries
 * on engine timers (never sleep), stream parsing as bytes arrive, and
 * record/replay, so every caller gets the same behaviour.
 *
 * A request (struct llm_call) moves QUEUED -> ACTIVE -> (BACKOFF ->
 * QUEUED ...) -> DONE. Completion callbacks run only from the DONE list,
 * drained at the end of llm_engine_process(), so no callback ever runs
 * inside a curl callback or inside llm_submit()/llm_cancel().
 */
#include <sys/epoll.h>
#include <sys/queue.h>

#include <errno.h>
#include <limits.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>


#include "common/clock.h"
#include "common/log.h"
#include "common/str.h"
#include "common/urlmask.h"
#include "common/version.h"
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
	uint64_t		 start_ms;
	uint64_t		 wake_ms;	/* CALL_BACKOFF */
	struct llm_result	 res;
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
};

static const char *const err_names[] = {
	[LLM_OK] = "ok",
	[LLM_ERR_EXHAUSTED] = "exhausted",
	[LLM_ERR_HTTP] = "http",
	[LLM_ERR_TIMEOUT] = "timeout",
	[LLM_ERR_PARSE] = "parse",
	[LLM_ERR_TRANSPORT] = "transport",
	[LLM_ERR_REPLAY_MISSING] = "replay_missing",
	[LLM_ERR_CANCELLED] = "cancelled",
	[LLM_ERR_SYSTEM] = "system",
};

const char *
llm_err_name(enum llm_err err)
{
	if ((size_t)err >= sizeof(err_names) / sizeof(err_names[0]))
		return "system";
	return err_names[err];
}

void
llm_result_free(struct llm_result *res)
{
	free(res->error);
	msg_reply_free(&res->reply);
	memset(res, 0, sizeof(*res));
}

/* Set the call's error once: kind, status and a message. */
static void llm_call_error(struct llm_call *, enum llm_err, long,
    const char *, ...) __attribute__((format(printf, 4, 5)));

static void
llm_call_error(struct llm_call *c, enum llm_err kind, long status,
    const char *fmt, ...)
{
	va_list	ap;
	char	msg[1024];

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	free(c->res.error);
	/* Pieces from the server are escaped already; escape the whole. */
	c->res.error = str_escape_dup(msg, strlen(msg), 0);
	c->res.err = kind;
	c->res.status = status;
}

/* curl: a socket wants watching (or no longer). */
static int
llm_engine_sockcb(CURL *easy, curl_socket_t s, int what, void *arg,
    void *sockp)
{
	struct llm_engine	*e = arg;
	struct epoll_event	 ev;

	(void)easy;
	if (what == CURL_POLL_REMOVE) {
		if (epoll_ctl(e->epfd, EPOLL_CTL_DEL, s, NULL) == -1 &&
		    errno != ENOENT && errno != EBADF)
			log_warn("llm: epoll_ctl del %d", s);
		lcurl.multi_assign(e->multi, s, NULL);
		return 0;
	}
	memset(&ev, 0, sizeof(ev));
	ev.data.fd = s;
	if (what == CURL_POLL_IN || what == CURL_POLL_INOUT)
		ev.events |= EPOLLIN;
	if (what == CURL_POLL_OUT || what == CURL_POLL_INOUT)
		ev.events |= EPOLLOUT;
	if (sockp == NULL) {
		if (epoll_ctl(e->epfd, EPOLL_CTL_ADD, s, &ev) == -1) {
			log_warn("llm: epoll_ctl add %d", s);
			return -1;
		}
		lcurl.multi_assign(e->multi, s, e);
	} else if (epoll_ctl(e->epfd, EPOLL_CTL_MOD, s, &ev) == -1) {
		log_warn("llm: epoll_ctl mod %d", s);
		return -1;
	}
	return 0;
}

/* curl: when to call it back with CURL_SOCKET_TIMEOUT. */
static int
llm_engine_timercb(CURLM *multi, long timeout_ms, void *arg)
{
	struct llm_engine	*e = arg;

	(void)multi;
	if (timeout_ms < 0)
		e->curl_deadline = -1;
	else
		e->curl_deadline = (int64_t)clock_mono_ms() + timeout_ms;
	return 0;
}

/*
 * The engine's private copy of the configuration, key and headers
 * included, so the caller may free its own (llm_config_copy: a deep
 * copy, field by field).
 */
static int
llm_engine_cfg_copy(struct llm_engine *e, const struct llm_config *lc,
    char *err, size_t errsz)
{
	if (lc->base_url == NULL || lc->model == NULL) {
		snprintf(err, errsz, "LLM configuration lacks a base URL or a "
		    "model");
		return -1;
	}
	if (llm_config_copy(&e->cfg, lc) == -1)
		goto nomem;
	if (e->cfg.concurrency == 0)
		e->cfg.concurrency = 1;
	if (e->cfg.max_response == 0)
		e->cfg.max_response = 32u * 1024 * 1024;
	return 0;
nomem:
	snprintf(err, errsz, "llm engine: out of memory");
	return -1;
}

/*
 * The epoll set and, unless replaying, the curl multi handle that fills
 * it. Only curl's sockets are in the set. Work that needs no socket (a
 * call done, queued, cancelled; every replayed call) makes
 * llm_engine_timeout_ms() 0, which callers must poll with: no eventfd, so
 * none of the three syscalls a wake-up through it cost on every turn.
 */
static int
llm_engine_multi_init(struct llm_engine *e, int replay, char *err,
    size_t errsz)
{
	if ((e->epfd = epoll_create1(EPOLL_CLOEXEC)) == -1) {
		snprintf(err, errsz, "llm engine: %s", strerror(errno));
		return -1;
	}
	if (replay)
		return 0;
	if ((e->multi = lcurl.multi_init()) == NULL) {
		snprintf(err, errsz, "llm engine: curl_multi_init failed");
		return -1;
	}
	lcurl.multi_setopt(e->multi, CURLMOPT_SOCKETFUNCTION,
	    llm_engine_sockcb);
	lcurl.multi_setopt(e->multi, CURLMOPT_SOCKETDATA, e);
	lcurl.multi_setopt(e->multi, CURLMOPT_TIMERFUNCTION,
	    llm_engine_timercb);
	lcurl.multi_setopt(e->multi, CURLMOPT_TIMERDATA, e);
	lcurl.multi_setopt(e->multi, CURLMOPT_MAXCONNECTS,
	    (long)(e->cfg.concurrency + 4));
	return 0;
}

/* The cassette to record to or replay from, if the configuration names
 * one; its path is kept in the copy only once it opened. */
static int
llm_engine_cassette(struct llm_engine *e, const struct llm_config *lc,
    char *err, size_t errsz)
{
	if (lc->record != NULL) {
		if ((e->cassette = llm_cassette_open(lc->record, 1, err,
		    errsz)) == NULL)
			return -1;
	} else if (lc->replay != NULL) {
		if ((e->cassette = llm_cassette_open(lc->replay, 0, err,
		    errsz)) == NULL)
			return -1;
		e->replay = 1;
	}
	return 0;
}

struct llm_engine *
llm_engine_new(const struct llm_config *lc, char *err, size_t errsz)
{
	struct llm_engine	*e;
	int			 replay = lc->record == NULL && lc->replay != NULL;

	/* Replay sends nothing: no libcurl (and the TLS libraries it
	 * loads), which took 10 ms or more before the first answer. */
	if (!replay && llm_curl_load(err, errsz) == -1)
		return NULL;
	if ((e = calloc(1, sizeof(*e))) == NULL)
		goto nomem;
	e->epfd = -1;
	TAILQ_INIT(&e->queue);
	TAILQ_INIT(&e->active);
	TAILQ_INIT(&e->backoff);
	TAILQ_INIT(&e->done);
	e->curl_deadline = -1;
	e->next_id = 1;
	if (llm_engine_cfg_copy(e, lc, err, errsz) == -1)
		goto fail;
	e->wire = llm_wire_get(lc->provider);
	if (asprintf(&e->url, "%s%s", lc->base_url, e->wire->path) == -1) {
		e->url = NULL;
		goto nomem;
	}
	if ((e->shown_url = urlmask_dup(e->url)) == NULL)
		goto nomem;
	if (llm_engine_multi_init(e, replay, err, errsz) == -1 ||
	    llm_engine_cassette(e, lc, err, errsz) == -1)
		goto fail;
	return e;
nomem:
	snprintf(err, errsz, "llm engine: out of memory");
fail:
	llm_engine_free(e);
	return NULL;
}

static void
llm_call_free_attempt(struct llm_call *c)
{
	struct curl_slist	*h;

	if (c->easy != NULL) {
		lcurl.multi_remove_handle(c->e->multi, c->easy);
		lcurl.easy_cleanup(c->easy);
		c->easy = NULL;
	}
	/* One of these lines holds the key. */
	for (h = c->hdrs; h != NULL; h = h->next)
		explicit_bzero(h->data, strlen(h->data));
	if (c->hdrs != NULL)
		lcurl.slist_free_all(c->hdrs);
	c->hdrs = NULL;
	buf_free(&c->resp);
	llm_sse_free(&c->sse);
	llm_acc_free(&c->acc);
}

static void
llm_call_free(struct llm_call *c)
{
	llm_call_free_attempt(c);
	llm_result_free(&c->res);
	free(c->agent);
	free(c->model);
	free(c->body);
	free(c);
}

static struct call_list *
llm_engine_list(struct llm_engine *e, enum call_state s)
{
	switch (s) {
	case CALL_QUEUED:	return &e->queue;
	case CALL_ACTIVE:	return &e->active;
	case CALL_BACKOFF:	return &e->backoff;
	case CALL_DONE:		return &e->done;
	}
	return &e->done;
}

static void
llm_call_move(struct llm_call *c, enum call_state to, int front)
{
	struct llm_engine	*e = c->e;

	TAILQ_REMOVE(llm_engine_list(e, c->state), c, entry);
	if (c->state == CALL_ACTIVE)
		e->nactive--;
	c->state = to;
	if (to == CALL_ACTIVE)
		e->nactive++;
	if (front)
		TAILQ_INSERT_HEAD(llm_engine_list(e, to), c, entry);
	else
		TAILQ_INSERT_TAIL(llm_engine_list(e, to), c, entry);
}

void
llm_engine_set_gate(struct llm_engine *e, const struct llm_gate *g)
{
	if (g != NULL && !e->replay)
		e->gate = *g;
	else
		memset(&e->gate, 0, sizeof(e->gate));
	e->gate_wake_ms = 0;
}

void
llm_engine_free(struct llm_engine *e)
{
	struct llm_call	*c;
	struct call_list *lists[4];
	size_t		 i;

	if (e == NULL)
		return;
	lists[0] = &e->queue;
	lists[1] = &e->active;
	lists[2] = &e->backoff;
	lists[3] = &e->done;
	for (i = 0; i < 4; i++) {
		while ((c = TAILQ_FIRST(lists[i])) != NULL) {
			TAILQ_REMOVE(lists[i], c, entry);
			llm_call_free(c);
		}
	}
	if (e->multi != NULL)
		lcurl.multi_cleanup(e->multi);
	if (e->epfd != -1)
		close(e->epfd);
	llm_cassette_close(e->cassette);
	free(e->url);
	free(e->shown_url);
	llm_config_free(&e->cfg);
	free(e);
}

int
llm_engine_fd(const struct llm_engine *e)
{
	return e->epfd;
}

size_t
llm_engine_pending(const struct llm_engine *e)
{
	return e->npending;
}

size_t
llm_engine_active(const struct llm_engine *e)
{
	return e->nactive;
}

/* A short walk of the queue (bounded by the run's agents), for the
 * live view's "waiting for an LLM slot". */
enum llm_wait
llm_engine_wait(const struct llm_engine *e, uint64_t id)
{
	const struct llm_call	*c;

	TAILQ_FOREACH(c, &e->queue, entry)
		if (c->id == id)
			return LLM_WAIT_SLOT;
	TAILQ_FOREACH(c, &e->backoff, entry)
		if (c->id == id)
			return LLM_WAIT_RETRY;
	TAILQ_FOREACH(c, &e->active, entry)
		if (c->id == id)
			return LLM_WAIT_ANSWER;
	return LLM_WAIT_NONE;
}

static int64_t
llm_min_deadline(int64_t a, int64_t b)
{
	if (a < 0)
		return b;
	if (b < 0)
		return a;
	return a < b ? a : b;
}

/* The earliest moment anything in the engine is due; -1 for never. */
static int64_t
llm_engine_deadline(const struct llm_engine *e)
{
	const struct llm_call	*c;
	int64_t			 d = e->curl_deadline;

	if (!TAILQ_EMPTY(&e->done))
		return 0;
	if (!TAILQ_EMPTY(&e->queue) && e->nactive < e->cfg.concurrency)
		d = llm_min_deadline(d, (int64_t)e->gate_wake_ms);
	TAILQ_FOREACH(c, &e->backoff, entry)
		d = llm_min_deadline(d, (int64_t)c->wake_ms);
	TAILQ_FOREACH(c, &e->active, entry) {
		if (c->cancel)
			return 0;
		if (c->last_byte_ms != 0)
			d = llm_min_deadline(d, (int64_t)(c->last_byte_ms +
			    e->cfg.idle_timeout_ms));
	}
	return d;
}

int
llm_engine_timeout_ms(const struct llm_engine *e)
{
	int64_t	d, now;

	if ((d = llm_engine_deadline(e)) < 0)
		return -1;
	now = (int64_t)clock_mono_ms();
	if (d <= now)
		return 0;
	return d - now > INT_MAX ? INT_MAX : (int)(d - now);
}

/* Text to the caller: answer deltas as they stream. */
static void
llm_call_text(const char *s, size_t len, void *arg)
{
	struct llm_call	*c = arg;

	c->text_sent = 1;
	if (c->on_text != NULL)
		c->on_text(s, len, c->text_arg);
}

static int
llm_call_sse(const char *event, const char *data, size_t len, void *arg)
{
	struct llm_call	*c = arg;

	return c->e->wire->event(&c->acc, event, data, len);
}

/* curl: response bytes. Returning less than given stops the transfer. */
static size_t
llm_call_write(char *p, size_t size, size_t n, void *arg)
{
	struct llm_call	*c = arg;
	size_t		 len = size * n;
	long		 status = 0;

	if (c->cancel)
		return 0;
	c->last_byte_ms = clock_mono_ms();
	c->received += len;
	if (c->received > c->e->cfg.max_response) {
		llm_acc_fail(&c->acc, "answer larger than max_response "
		    "(%zu bytes)", c->e->cfg.max_response);
		c->aborted = 1;
		return 0;
	}
	lcurl.easy_getinfo(c->easy, CURLINFO_RESPONSE_CODE, &status);
	if (c->is_sse && status >= 200 && status < 300) {
		if (llm_sse_feed(&c->sse, p, len, llm_call_sse, c) == -1) {
			if (c->acc.err[0] == '\0')
				llm_acc_fail(&c->acc, "stream event larger "
				    "than %zu bytes", c->sse.max);
			c->aborted = 1;
			return 0;
		}
		return len;
	}
	if (buf_add(&c->resp, p, len) == -1) {
		llm_acc_fail(&c->acc, "out of memory");
		c->aborted = 1;
		return 0;
	}
	return len;
}

/* curl: one header line; a new status line starts a new header block. */
static size_t
llm_call_header(char *p, size_t size, size_t n, void *arg)
{
	struct llm_call	*c = arg;
	size_t		 len = size * n, vlen;
	const char	*v;

	if (len >= 5 && strncmp(p, "HTTP/", 5) == 0) {
		c->is_sse = 0;
		c->retry_after[0] = '\0';
		return len;
	}
	if ((v = memchr(p, ':', len)) == NULL)
		return len;
	v++;
	while (v < p + len && (*v == ' ' || *v == '\t'))
		v++;
	vlen = (size_t)(p + len - v);
	while (vlen > 0 && (v[vlen - 1] == '\r' || v[vlen - 1] == '\n' ||
	    v[vlen - 1] == ' '))
		vlen--;
	if (len > 13 && strncasecmp(p, "content-type:", 13) == 0)
		c->is_sse = memmem(v, vlen, "text/event-stream", 17) != NULL;
	else if (len > 12 && strncasecmp(p, "retry-after:", 12) == 0) {
		if (vlen >= sizeof(c->retry_after))
			vlen = sizeof(c->retry_after) - 1;
		memcpy(c->retry_after, v, vlen);
		c->retry_after[vlen] = '\0';
	}
	return len;
}

static int
llm_call_headers(struct llm_call *c)
{
	struct llm_engine	*e = c->e;
	struct curl_slist	*h = NULL, *t;
	char			*auth = NULL;
	size_t			 i, len;

#define ADDH(s) do {							\
	if ((t = lcurl.slist_append(h, (s))) == NULL)			\
		goto fail;						\
	h = t;								\
} while (0)
	ADDH("Content-Type: application/json");
	ADDH(c->stream ? "Accept: text/event-stream" :
	    "Accept: application/json");
	ADDH("Expect:");	/* no 100-continue round trip */
	if (e->wire->fixed_header != NULL)
		ADDH(e->wire->fixed_header);
	if (e->cfg.key != NULL) {
		len = strlen(e->wire->auth) + strlen(e->cfg.key) + 1;
		if ((auth = malloc(len)) == NULL)
			goto fail;
		snprintf(auth, len, "%s%s", e->wire->auth, e->cfg.key);
		t = lcurl.slist_append(h, auth);
		freezero(auth, len);
		if (t == NULL)
			goto fail;
		h = t;
	}
	for (i = 0; i < e->cfg.nheaders; i++)
		ADDH(e->cfg.headers[i]);
#undef ADDH
	c->hdrs = h;
	return 0;
fail:
	for (t = h; t != NULL; t = t->next)
		explicit_bzero(t->data, strlen(t->data));
	lcurl.slist_free_all(h);
	return -1;
}

/* Put one attempt on the wire. */
static int
llm_call_start(struct llm_call *c)
{
	struct llm_engine	*e = c->e;
	CURL			*h;

	c->attempts++;
	c->is_sse = c->text_sent = c->idle = c->aborted = 0;
	c->last_byte_ms = 0;
	c->received = 0;
	c->retry_after[0] = c->errbuf[0] = '\0';
	buf_init(&c->resp, e->cfg.max_response);
	llm_sse_init(&c->sse, e->cfg.max_response < LLM_MAX_EVENT ?
	    e->cfg.max_response : LLM_MAX_EVENT);
	llm_acc_init(&c->acc, e->cfg.max_response);
	c->acc.on_text = llm_call_text;
	c->acc.arg = c;
	if (llm_call_headers(c) == -1 || (h = lcurl.easy_init()) == NULL)
		return -1;
	c->easy = h;
	lcurl.easy_setopt(h, CURLOPT_URL, e->url);
	lcurl.easy_setopt(h, CURLOPT_PROTOCOLS_STR, "http,https");
	lcurl.easy_setopt(h, CURLOPT_POST, 1L);
	lcurl.easy_setopt(h, CURLOPT_POSTFIELDS, c->body);
	lcurl.easy_setopt(h, CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t)c->bodylen);
	lcurl.easy_setopt(h, CURLOPT_HTTPHEADER, c->hdrs);
	lcurl.easy_setopt(h, CURLOPT_USERAGENT, "warren/" WARREN_VERSION);
	lcurl.easy_setopt(h, CURLOPT_NOSIGNAL, 1L);
	lcurl.easy_setopt(h, CURLOPT_TCP_KEEPALIVE, 1L);
	lcurl.easy_setopt(h, CURLOPT_CONNECTTIMEOUT_MS,
	    (long)e->cfg.connect_timeout_ms);
	lcurl.easy_setopt(h, CURLOPT_TIMEOUT_MS, (long)e->cfg.timeout_ms);
	lcurl.easy_setopt(h, CURLOPT_WRITEFUNCTION, llm_call_write);
	lcurl.easy_setopt(h, CURLOPT_WRITEDATA, c);
	lcurl.easy_setopt(h, CURLOPT_HEADERFUNCTION, llm_call_header);
	lcurl.easy_setopt(h, CURLOPT_HEADERDATA, c);
	lcurl.easy_setopt(h, CURLOPT_ERRORBUFFER, c->errbuf);
	lcurl.easy_setopt(h, CURLOPT_PRIVATE, c);
	if (lcurl.multi_add_handle(e->multi, h) != CURLM_OK)
		return -1;
	log_debug("llm: agent %s step %u: POST %s (attempt %u, %zu bytes)",
	    c->agent, c->step, e->shown_url, c->attempts, c->bodylen);
	return 0;
}

/* Finish: record, then hand to the DONE list for its callback. */
static void
llm_call_complete(struct llm_call *c)
{
	struct llm_engine	*e = c->e;

	c->res.id = c->id;
	c->res.attempts = c->attempts;
	c->res.elapsed_ms = clock_mono_ms() - c->start_ms;
	if (e->cassette != NULL && !e->replay &&
	    c->res.err != LLM_ERR_CANCELLED &&
	    llm_cassette_write(e->cassette, c->agent, c->step, c->purpose,
	    e->wire->name, c->model, c->body, &c->res) == -1)
		log_warn("llm: cassette %s", e->cfg.record);
	llm_call_free_attempt(c);
	llm_call_move(c, CALL_DONE, 0);
}

/* Retry-After: delta seconds or an HTTP date; milliseconds or 0. */
static uint64_t
llm_retry_after_ms(const char *v)
{
	const char	*errstr;
	long long	 secs;
	time_t		 t, now;

	if (*v == '\0')
		return 0;
	secs = strtonum(v, 0, 86400 * 7, &errstr);
	if (errstr == NULL)
		return (uint64_t)secs * 1000;
	if ((t = lcurl.getdate(v, NULL)) == -1)
		return 0;
	now = time(NULL);
	return t > now ? (uint64_t)(t - now) * 1000 : 0;
}

static uint64_t
llm_backoff_ms(const struct llm_engine *e, unsigned attempt,
    const char *retry_after)
{
	uint64_t	d = e->cfg.backoff_ms, ra;
	unsigned	i;

	for (i = 1; i < attempt && d < e->cfg.backoff_max_ms; i++)
		d *= 2;
	/* Equal jitter: half fixed, half random, so clients spread out. */
	d = d / 2 + arc4random_uniform((uint32_t)(d / 2 + 1));
	if ((ra = llm_retry_after_ms(retry_after)) > d)
		d = ra;
	if (d > e->cfg.backoff_max_ms)
		d = e->cfg.backoff_max_ms;
	return d;
}

/* A retryable failure: wait and go again, or give up. */
static void
llm_call_retry(struct llm_call *c)
{
	struct llm_engine	*e = c->e;
	uint64_t		 wait;
	char			*prev;

	wait = llm_backoff_ms(e, c->attempts, c->retry_after);
	/* A 429 is the endpoint's word to every client of the account:
	 * everyone sharing the gate waits, not only this request, and also
	 * when this one gives up. */
	if (c->res.status == 429 && e->gate.pause != NULL)
		e->gate.pause(e->gate.arg, wait);
	if (c->attempts > e->cfg.retries) {
		if (c->attempts > 1) {
			prev = c->res.error;
			c->res.error = NULL;
			llm_call_error(c, c->res.err, c->res.status,
			    "%s (gave up after %u attempts)",
			    prev != NULL ? prev : "", c->attempts);
			free(prev);
		}
		llm_call_complete(c);
		return;
	}
	log_info("llm: agent %s step %u: %s; retry %u/%u in %llu ms",
	    c->agent, c->step, c->res.error != NULL ? c->res.error : "failed",
	    c->attempts, e->cfg.retries, (unsigned long long)wait);
	if (c->text_sent && c->on_text != NULL)
		c->on_text(NULL, 0, c->text_arg);
	llm_call_free_attempt(c);
	c->wake_ms = clock_mono_ms() + wait;
	llm_call_move(c, CALL_BACKOFF, 0);
}

/* The answer bytes are in: parse them into the result. */
static int
llm_call_parse(struct llm_call *c)
{
	struct llm_engine	*e = c->e;
	struct msg_reply	*r = &c->res.reply;
	int			 found;

	if (!c->is_sse && e->wire->parse(&c->acc, (const char *)c->resp.data,
	    c->resp.len) == -1)
		goto fail;
	if (c->is_sse && c->acc.err[0] != '\0')
		goto fail;
	if (c->is_sse && !c->acc.done && !c->acc.stopped) {
		llm_call_error(c, LLM_ERR_EXHAUSTED, 200, "POST %s: the stream "
		    "ended before its final event (%zu events)", e->shown_url,
		    c->sse.nevents);
		return 1;
	}
	if (llm_acc_finish(&c->acc, r) == -1)
		goto fail;
	if (e->cfg.tool_mode == LLM_TOOLS_TEXT) {
		if ((found = llm_textcall_parse(&r->msg)) == -1) {
			llm_call_error(c, LLM_ERR_SYSTEM, 200, "out of memory");
			return 0;
		}
		if (found > 0 && r->stop == MSG_STOP_END)
			r->stop = MSG_STOP_TOOL_CALLS;
	}
	c->res.err = LLM_OK;
	c->res.status = 200;
	if (e->gate.spent != NULL)
		e->gate.spent(e->gate.arg, r->usage.input + r->usage.output);
	return 0;
fail:
	/* An error the server put in a 200 answer is worth retrying. */
	llm_call_error(c, c->acc.server_error ? LLM_ERR_EXHAUSTED :
	    LLM_ERR_PARSE, 200, "POST %s: %s", e->shown_url, c->acc.err);
	return c->acc.server_error;
}

/* A curl failure: 1 if worth retrying. */
static int
llm_call_curlerr(struct llm_call *c, CURLcode rc)
{
	struct llm_engine	*e = c->e;
	const char		*why = c->errbuf[0] != '\0' ? c->errbuf :
				    lcurl.easy_strerror(rc);
	double			 connect = 0;

	if (rc == CURLE_OPERATION_TIMEDOUT) {
		lcurl.easy_getinfo(c->easy, CURLINFO_CONNECT_TIME, &connect);
		if (connect <= 0)
			llm_call_error(c, LLM_ERR_TIMEOUT, 0, "POST %s: no "
			    "connection within %u ms", e->shown_url,
			    e->cfg.connect_timeout_ms);
		else
			llm_call_error(c, LLM_ERR_TIMEOUT, 0, "POST %s: no "
			    "complete answer within %u ms", e->shown_url,
			    e->cfg.timeout_ms);
		return 1;
	}
	/* Resets, refusals and cut answers pass; bad URLs and TLS do not. */
	if (rc == CURLE_COULDNT_CONNECT || rc == CURLE_COULDNT_RESOLVE_HOST ||
	    rc == CURLE_COULDNT_RESOLVE_PROXY || rc == CURLE_RECV_ERROR ||
	    rc == CURLE_SEND_ERROR || rc == CURLE_GOT_NOTHING ||
	    rc == CURLE_PARTIAL_FILE || rc == CURLE_HTTP2 ||
	    rc == CURLE_HTTP2_STREAM || rc == CURLE_SSL_CONNECT_ERROR ||
	    rc == CURLE_WEIRD_SERVER_REPLY) {
		llm_call_error(c, LLM_ERR_EXHAUSTED, 0, "POST %s: %s", e->shown_url,
		    why);
		return 1;
	}
	llm_call_error(c, LLM_ERR_TRANSPORT, 0, "POST %s: %s", e->shown_url, why);
	return 0;
}

/* An attempt ended (curl said done, or the engine stopped it). */
static void
llm_call_ended(struct llm_call *c, CURLcode rc)
{
	struct llm_engine	*e = c->e;
	char			 msg[700];
	long			 status = 0;
	int			 retry = 0;

	if (c->cancel) {
		llm_call_error(c, LLM_ERR_CANCELLED, 0, "cancelled");
		llm_call_complete(c);
		return;
	}
	lcurl.easy_getinfo(c->easy, CURLINFO_RESPONSE_CODE, &status);
	if (c->idle) {
		llm_call_error(c, LLM_ERR_TIMEOUT, status, "POST %s: no data "
		    "for %u ms in the middle of the answer", e->shown_url,
		    e->cfg.idle_timeout_ms);
		retry = 1;
	} else if (c->aborted) {
		/* An error event in the stream is the server's, and passes. */
		retry = c->acc.server_error;
		llm_call_error(c, retry ? LLM_ERR_EXHAUSTED : LLM_ERR_PARSE,
		    status, "POST %s: %s", e->shown_url, c->acc.err);
	}
	else if (rc != CURLE_OK)
		retry = llm_call_curlerr(c, rc);
	else if (status < 200 || status > 299) {
		llm_json_errmsg(msg, sizeof(msg), (const char *)c->resp.data,
		    c->resp.len);
		retry = status == 429 || status == 408 || status >= 500;
		llm_call_error(c, retry ? LLM_ERR_EXHAUSTED : LLM_ERR_HTTP,
		    status, "POST %s: HTTP %ld: %s", e->shown_url, status, msg);
	} else
		retry = llm_call_parse(c);
	if (retry) {
		llm_call_retry(c);
		return;
	}
	llm_call_complete(c);
}

static void
llm_engine_info(struct llm_engine *e)
{
	struct llm_call	*c;
	CURLMsg		*m;
	int		 left;

	if (e->multi == NULL)		/* replay */
		return;
	while ((m = lcurl.multi_info_read(e->multi, &left)) != NULL) {
		if (m->msg != CURLMSG_DONE)
			continue;
		c = NULL;
		lcurl.easy_getinfo(m->easy_handle, CURLINFO_PRIVATE, &c);
		if (c != NULL)
			llm_call_ended(c, m->data.result);
	}
}

/* Stop what the timers or llm_cancel() say must stop, outside curl. */
static void
llm_engine_sweep(struct llm_engine *e)
{
	struct llm_call	*c, *t;
	uint64_t	 now = clock_mono_ms();

	TAILQ_FOREACH_SAFE(c, &e->active, entry, t) {
		if (!c->cancel && c->last_byte_ms != 0 &&
		    now >= c->last_byte_ms + e->cfg.idle_timeout_ms)
			c->idle = 1;
		if (c->cancel || c->idle)
			llm_call_ended(c, CURLE_OK);
	}
	TAILQ_FOREACH_SAFE(c, &e->backoff, entry, t) {
		if (now >= c->wake_ms)
			llm_call_move(c, CALL_QUEUED, 1);
	}
}

/* May the next queued request go? Asks the gate, at most once until the
 * wait it gave has passed. */
static int
llm_engine_gate_open(struct llm_engine *e)
{
	uint64_t	now, wait;

	if (e->gate.take == NULL)
		return 1;
	now = clock_mono_ms();
	if (now < e->gate_wake_ms)
		return 0;
	if ((wait = e->gate.take(e->gate.arg)) == 0)
		return 1;
	e->gate_wake_ms = now + wait;
	return 0;
}

static void
llm_engine_start(struct llm_engine *e)
{
	struct llm_call	*c;

	while (e->nactive < e->cfg.concurrency &&
	    (c = TAILQ_FIRST(&e->queue)) != NULL && llm_engine_gate_open(e)) {
		llm_call_move(c, CALL_ACTIVE, 0);
		if (llm_call_start(c) == -1) {
			llm_call_error(c, LLM_ERR_SYSTEM, 0, "POST %s: cannot "
			    "start the transfer (out of memory)", e->shown_url);
			llm_call_complete(c);
		}
	}
}

static void
llm_engine_callbacks(struct llm_engine *e)
{
	struct llm_call	*c;

	while ((c = TAILQ_FIRST(&e->done)) != NULL) {
		TAILQ_REMOVE(&e->done, c, entry);
		e->npending--;
		c->done(&c->res, c->arg);
		llm_call_free(c);
	}
}

void
llm_engine_process(struct llm_engine *e)
{
	struct epoll_event	 ev[64];
	int			 n, i, running, mask, rounds;

	for (rounds = 0; rounds < 16; rounds++) {
		/* Replay opens no socket: nothing to ask the kernel. */
		n = e->replay ? 0 : epoll_wait(e->epfd, ev, 64, 0);
		for (i = 0; i < n; i++) {
			mask = 0;
			if (ev[i].events & EPOLLIN)
				mask |= CURL_CSELECT_IN;
			if (ev[i].events & EPOLLOUT)
				mask |= CURL_CSELECT_OUT;
			if (ev[i].events & (EPOLLERR | EPOLLHUP))
				mask |= CURL_CSELECT_ERR;
			lcurl.multi_socket_action(e->multi, ev[i].data.fd, mask,
			    &running);
		}
		if (e->multi != NULL && e->curl_deadline >= 0 &&
		    (uint64_t)e->curl_deadline <= clock_mono_ms()) {
			e->curl_deadline = -1;
			lcurl.multi_socket_action(e->multi, CURL_SOCKET_TIMEOUT,
			    0, &running);
		}
		llm_engine_info(e);
		llm_engine_sweep(e);
		llm_engine_start(e);
		llm_engine_callbacks(e);
		if (n < 64 && llm_engine_timeout_ms(e) != 0)
			break;
	}
}

static int
llm_agent_ok(const char *agent)
{
	size_t	len = strlen(agent);

	return len > 0 && len <= 1024 &&
	    strspn(agent, "0123456789.") == len;
}

/* Serve a request from the cassette; the callback comes on process. */
static void
llm_call_replay(struct llm_call *c)
{
	struct llm_engine	*e = c->e;

	if (llm_cassette_find(e->cassette, c->agent, c->step, c->purpose,
	    &c->res) == -1)
		llm_call_error(c, LLM_ERR_REPLAY_MISSING, 0, "cassette %s has "
		    "no answer for agent %s step %u (%s)", e->cfg.replay,
		    c->agent, c->step, llm_purpose_name(c->purpose));
	else if (c->res.err == LLM_OK && c->res.reply.msg.text != NULL &&
	    c->on_text != NULL)
		c->on_text(c->res.reply.msg.text,
		    strlen(c->res.reply.msg.text), c->text_arg);
}

static int
llm_call_body(struct llm_call *c, const struct llm_request *req)
{
	struct llm_engine	*e = c->e;
	struct llm_wire_req	 w;
	struct msg_list		 text;
	char			 err[LLM_ERRSZ];

	memset(&w, 0, sizeof(w));
	w.cfg = &e->cfg;
	w.model = c->model;
	w.max_tokens = req->max_tokens > 0 ? req->max_tokens :
	    e->cfg.max_tokens;
	w.stream = c->stream;
	if (e->cfg.tool_mode == LLM_TOOLS_TEXT) {
		if (llm_textcall_rewrite(req->msgs, req->tools, req->ntools,
		    &text) == -1)
			return -1;
		w.msgs = &text;
	} else {
		w.msgs = req->msgs;
		w.tools = req->tools;
		w.ntools = req->ntools;
	}
	c->body = e->wire->build(&w, err, sizeof(err));
	if (w.msgs == &text)
		msg_list_free(&text);
	if (c->body == NULL)
		return -1;
	c->bodylen = strlen(c->body);
	return 0;
}

uint64_t
llm_submit(struct llm_engine *e, const struct llm_request *req,
    llm_done_fn done, void *arg)
{
	struct llm_call	*c;
	const char	*model;
	size_t		 i;

	if (req == NULL || done == NULL || req->agent == NULL ||
	    !llm_agent_ok(req->agent) || req->msgs == NULL ||
	    (req->ntools > 0 && req->tools == NULL)) {
		errno = EINVAL;
		return 0;
	}
	for (i = 0; i < req->ntools; i++) {
		if (req->tools[i].name == NULL) {
			errno = EINVAL;
			return 0;
		}
	}
	if ((c = calloc(1, sizeof(*c))) == NULL)
		return 0;
	c->e = e;
	c->step = req->step;
	c->purpose = req->purpose;
	c->stream = e->cfg.stream;
	c->on_text = req->on_text;
	c->text_arg = req->text_arg;
	c->done = done;
	c->arg = arg;
	c->start_ms = clock_mono_ms();
	model = req->model;
	if (model == NULL && req->purpose == LLM_PURPOSE_SUMMARY)
		model = e->cfg.summary_model;
	if (model == NULL)
		model = e->cfg.model;
	model = llm_alias_model(&e->cfg, model);	/* sonnet: its id */
	/* Replay never sends the body: building it (the whole context as
	 * JSON, every turn) was most of the supervisor's CPU per step. */
	if ((c->agent = strdup(req->agent)) == NULL ||
	    (c->model = strdup(model)) == NULL ||
	    (!e->replay && llm_call_body(c, req) == -1)) {
		llm_call_free(c);
		errno = ENOMEM;
		return 0;
	}
	c->id = e->next_id++;
	c->state = CALL_QUEUED;
	TAILQ_INSERT_TAIL(&e->queue, c, entry);
	e->npending++;
	if (e->replay) {
		llm_call_replay(c);
		llm_call_complete(c);
	}
	return c->id;
}

int
llm_cancel(struct llm_engine *e, uint64_t id)
{
	struct llm_call	*c;
	struct call_list *lists[3];
	size_t		 i;

	lists[0] = &e->queue;
	lists[1] = &e->backoff;
	lists[2] = &e->active;
	for (i = 0; i < 3; i++) {
		TAILQ_FOREACH(c, lists[i], entry) {
			if (c->id != id)
				continue;
			if (c->cancel)
				return 0;
			c->cancel = 1;
			if (c->state == CALL_ACTIVE)
				return 0;	/* out of curl on the next process */
			llm_call_error(c, LLM_ERR_CANCELLED, 0, "cancelled");
			llm_call_complete(c);
			return 0;
		}
	}
	errno = ENOENT;
	return -1;
}

struct llm_blocking {
	struct llm_result	*res;
	int			 done;
};

static void
llm_blocking_done(struct llm_result *res, void *arg)
{
	struct llm_blocking	*b = arg;

	*b->res = *res;
	memset(res, 0, sizeof(*res));
	b->done = 1;
}

int
llm_complete_blocking(struct llm_engine *e, const struct llm_request *req,
    struct llm_result *res)
{
	struct llm_blocking	 b;
	struct pollfd		 pfd;
	uint64_t		 id;

	memset(res, 0, sizeof(*res));
	b.res = res;
	b.done = 0;
	if ((id = llm_submit(e, req, llm_blocking_done, &b)) == 0) {
		res->err = LLM_ERR_SYSTEM;
		if (asprintf(&res->error, "cannot submit the request: %s",
		    strerror(errno)) == -1)
			res->error = NULL;
		return -1;
	}
	pfd.fd = e->epfd;
	pfd.events = POLLIN;
	while (!b.done) {
		/* The callback writes into b: never leave before it came. */
		if (poll(&pfd, 1, llm_engine_timeout_ms(e)) == -1 &&
		    errno != EINTR) {
			log_warn("llm: poll");
			llm_cancel(e, id);
		}
		llm_engine_process(e);
	}
	return res->err == LLM_OK ? 0 : -1;
}

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

#include <errno.h>
#include <limits.h>
#include <poll.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/clock.h"
#include "common/log.h"
#include "common/str.h"
#include "common/urlmask.h"
#include "llm/llm_engine_int.h"
#include "llm/llm_testapi.h"

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
	free(res->http_body);
	free(res->http_type);
	msg_reply_free(&res->reply);
	memset(res, 0, sizeof(*res));
}

/* Set the call's error once: kind, status and a message. */
void
llm_call_error(struct llm_call *c, enum llm_err kind, long status,
    const char *fmt, ...)
{
	va_list	ap;
	char	msg[1024];

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	/* An endpoint's message may echo the request's key header. */
	(void)llm_key_redact(msg, strlen(msg), c->e->cfg.key);
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
	llm_window_init(&e->win, e->cfg.concurrency);
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

void
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
	free(c->http_hold);
	c->http_hold = NULL;
	c->http_holdlen = 0;
	llm_sse_free(&c->sse);
	llm_acc_free(&c->acc);
}

void
llm_call_free(struct llm_call *c)
{
	size_t	i;

	llm_call_free_attempt(c);
	llm_result_free(&c->res);
	free(c->http_url);
	free(c->http_shown);
	for (i = 0; i < c->nhttp_hdrs; i++)
		free(c->http_hdrs[i]);
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

void
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

unsigned
llm_engine_limit(const struct llm_engine *e)
{
	return e->win.limit;
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
	if (!TAILQ_EMPTY(&e->queue) && e->nactive < e->win.limit)
		d = llm_min_deadline(d, (int64_t)(e->gate_wake_ms >
		    e->hold_ms ? e->gate_wake_ms : e->hold_ms));
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

	if (!TAILQ_EMPTY(&e->queue) && clock_mono_ms() < e->hold_ms)
		return;
	while (e->nactive < e->win.limit &&
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

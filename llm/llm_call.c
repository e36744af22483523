/*
 * One request on the wire: its curl handle and headers, the bytes as they
 * arrive (a body, or a stream parsed as it comes), how an attempt ended,
 * and the retry with backoff that follows a failure worth retrying. The
 * engine (llm_engine.c) queues calls and drives curl.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "common/clock.h"
#include "common/log.h"
#include "common/version.h"
#include "llm/llm_engine_int.h"

/* Where the call goes, masked for messages. */
static const char *
llm_call_url(const struct llm_call *c)
{
	return c->http ? c->http_shown : c->e->shown_url;
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
	if (!c->http && c->is_sse && status >= 200 && status < 300) {
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
	/* A pass-through stream goes on as it comes (llm_http.c). */
	if (c->http && c->on_part != NULL && c->is_sse && status >= 200 &&
	    status < 300) {
		c->http_parts = 1;
		if (llm_http_part(c, p, len, status) == -1) {
			llm_acc_fail(&c->acc, "out of memory");
			c->aborted = 1;
			return 0;
		}
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
		c->http_type[0] = '\0';
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
	if (len > 13 && strncasecmp(p, "content-type:", 13) == 0) {
		c->is_sse = memmem(v, vlen, "text/event-stream", 17) != NULL;
		/* Kept for a pass-through answer: printable bytes only. */
		if (vlen < sizeof(c->http_type) && memchr(v, '\0', vlen) ==
		    NULL) {
			memcpy(c->http_type, v, vlen);
			c->http_type[vlen] = '\0';
			if (strspn(c->http_type, " !\"#$%&'()*+,-./0123456789"
			    ":;<=>?@ABCDEFGHIJKLMNOPQRSTUVWXYZ[\\]^_`abcdefghij"
			    "klmnopqrstuvwxyz{|}~") != vlen)
				c->http_type[0] = '\0';
		}
	}
	else if (len > 12 && strncasecmp(p, "retry-after:", 12) == 0) {
		if (vlen >= sizeof(c->retry_after))
			vlen = sizeof(c->retry_after) - 1;
		memcpy(c->retry_after, v, vlen);
		c->retry_after[vlen] = '\0';
	}
	return len;
}

/* Scrub a header list (it may hold the key) and free it. */
static void
llm_call_headers_free(struct curl_slist *h)
{
	struct curl_slist	*t;

	for (t = h; t != NULL; t = t->next)
		explicit_bzero(t->data, strlen(t->data));
	lcurl.slist_free_all(h);
}

/* The end of every request's headers: the wire's key header, the user's
 * extra headers; sets c->hdrs, or frees h and returns -1. */
static int
llm_call_headers_end(struct llm_call *c, const struct llm_wire *w,
    struct curl_slist *h)
{
	struct llm_engine	*e = c->e;
	struct curl_slist	*t;
	char			*auth;
	size_t			 i, len;

	if (e->cfg.key != NULL) {
		len = strlen(w->auth) + strlen(e->cfg.key) + 1;
		if ((auth = malloc(len)) == NULL)
			goto fail;
		snprintf(auth, len, "%s%s", w->auth, e->cfg.key);
		t = lcurl.slist_append(h, auth);
		freezero(auth, len);
		if (t == NULL)
			goto fail;
		h = t;
	}
	for (i = 0; i < e->cfg.nheaders; i++) {
		if ((t = lcurl.slist_append(h, e->cfg.headers[i])) == NULL)
			goto fail;
		h = t;
	}
	c->hdrs = h;
	return 0;
fail:
	llm_call_headers_free(h);
	return -1;
}

/* A pass-through request's headers: the program's own (checked by the
 * IPC decoder: content-type, accept, anthropic-version, anthropic-beta),
 * the wire's key header, the user's extra headers. */
static int
llm_call_http_headers(struct llm_call *c)
{
	const struct llm_wire	*w;
	struct curl_slist	*h = NULL, *t;
	size_t			 i;
	int			 version = 0, ctype = 0;

	w = strcmp(c->http_wire, "anthropic") == 0 ? &llm_anthropic_wire :
	    &llm_openai_wire;
#define ADDH(s) do {							\
	if ((t = lcurl.slist_append(h, (s))) == NULL)			\
		goto fail;						\
	h = t;								\
} while (0)
	for (i = 0; i < c->nhttp_hdrs; i++) {
		version |= strncmp(c->http_hdrs[i], "anthropic-version:",
		    18) == 0;
		ctype |= strncmp(c->http_hdrs[i], "content-type:", 13) == 0;
		ADDH(c->http_hdrs[i]);
	}
	if (!ctype)
		ADDH("Content-Type: application/json");
	ADDH("Expect:");
	if (!version && w->fixed_header != NULL)
		ADDH(w->fixed_header);
#undef ADDH
	return llm_call_headers_end(c, w, h);
fail:
	llm_call_headers_free(h);
	return -1;
}

static int
llm_call_headers(struct llm_call *c)
{
	struct llm_engine	*e = c->e;
	struct curl_slist	*h = NULL, *t;

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
#undef ADDH
	return llm_call_headers_end(c, e->wire, h);
fail:
	llm_call_headers_free(h);
	return -1;
}

/* Put one attempt on the wire. */
int
llm_call_start(struct llm_call *c)
{
	struct llm_engine	*e = c->e;
	CURL			*h;

	c->attempts++;
	c->epoch = e->win.epoch;
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
	if ((c->http ? llm_call_http_headers(c) : llm_call_headers(c)) == -1 ||
	    (h = lcurl.easy_init()) == NULL)
		return -1;
	c->easy = h;
	lcurl.easy_setopt(h, CURLOPT_URL, c->http ? c->http_url : e->url);
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
	    c->agent, c->step, llm_call_url(c), c->attempts, c->bodylen);
	return 0;
}

/* Finish: record, then hand to the DONE list for its callback. */
void
llm_call_complete(struct llm_call *c)
{
	struct llm_engine	*e = c->e;

	c->res.id = c->id;
	c->res.attempts = c->attempts;
	c->res.elapsed_ms = clock_mono_ms() - c->start_ms;
	if (e->cassette != NULL && !e->replay &&
	    c->res.err != LLM_ERR_CANCELLED && (c->http ?
	    llm_cassette_write_http(e->cassette, c->agent, c->step,
	    c->http_wire, c->body, &c->res) : llm_cassette_write(e->cassette,
	    c->agent, c->step, c->purpose, e->wire->name, c->model, c->body,
	    &c->res)) == -1)
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

	/* The caller has part of this answer: another attempt would
	 * answer twice. */
	if (c->http_parts) {
		llm_call_complete(c);
		return;
	}
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
		    "ended before its final event (%zu events)", llm_call_url(c),
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
	    LLM_ERR_PARSE, 200, "POST %s: %s", llm_call_url(c), c->acc.err);
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
			    "connection within %u ms", llm_call_url(c),
			    e->cfg.connect_timeout_ms);
		else
			llm_call_error(c, LLM_ERR_TIMEOUT, 0, "POST %s: no "
			    "complete answer within %u ms", llm_call_url(c),
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
		llm_call_error(c, LLM_ERR_EXHAUSTED, 0, "POST %s: %s", llm_call_url(c),
		    why);
		return 1;
	}
	llm_call_error(c, LLM_ERR_TRANSPORT, 0, "POST %s: %s", llm_call_url(c), why);
	return 0;
}

/*
 * A 429: the endpoint has more than it will take. Fewer requests on the
 * wire from now on (llm_window.c), and none new before its Retry-After.
 */
static void
llm_call_throttled(struct llm_call *c)
{
	struct llm_engine	*e = c->e;
	unsigned		 was = e->win.limit;
	uint64_t		 ra;

	if (llm_window_throttled(&e->win, c->epoch, e->nactive))
		log_info("llm: HTTP 429 from %s: at most %u requests at once "
		    "now (was %u; llm_concurrency %u)", llm_call_url(c),
		    e->win.limit, was, e->cfg.concurrency);
	ra = llm_retry_after_ms(c->retry_after);
	if (ra > e->cfg.backoff_max_ms)
		ra = e->cfg.backoff_max_ms;
	if (ra > 0 && clock_mono_ms() + ra > e->hold_ms)
		e->hold_ms = clock_mono_ms() + ra;
}

/* An attempt ended (curl said done, or the engine stopped it). */
void
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
		    "for %u ms in the middle of the answer", llm_call_url(c),
		    e->cfg.idle_timeout_ms);
		retry = 1;
	} else if (c->aborted) {
		/* An error event in the stream is the server's, and passes. */
		retry = c->acc.server_error;
		llm_call_error(c, retry ? LLM_ERR_EXHAUSTED : LLM_ERR_PARSE,
		    status, "POST %s: %s", llm_call_url(c), c->acc.err);
	}
	else if (rc != CURLE_OK)
		retry = llm_call_curlerr(c, rc);
	else if (status < 200 || status > 299) {
		llm_json_errmsg(msg, sizeof(msg), (const char *)c->resp.data,
		    c->resp.len);
		retry = status == 429 || status == 408 || status >= 500;
		llm_call_error(c, retry ? LLM_ERR_EXHAUSTED : LLM_ERR_HTTP,
		    status, "POST %s: HTTP %ld: %s", llm_call_url(c), status, msg);
		if (status == 429)
			llm_call_throttled(c);
		/* Not retried: the program reads the endpoint's answer. */
		if (c->http && !retry && status >= 100 && status <= 599)
			llm_http_answered(c, status);
	} else if (c->http) {
		llm_http_answered(c, status);
		if (c->res.err == LLM_OK)
			llm_window_answered(&e->win);
	} else if ((retry = llm_call_parse(c)) == 0 && c->res.err == LLM_OK)
		llm_window_answered(&e->win);
	if (retry) {
		llm_call_retry(c);
		return;
	}
	llm_call_complete(c);
}

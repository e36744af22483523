/*
 * Server-Sent Events, parsed incrementally from whatever chunks curl
 * hands over. Follows the WHATWG event-stream rules that matter to LLM
 * APIs and bounds every line and event.
 */
#include <errno.h>
#include <string.h>

#include "llm/llm_int.h"

void
llm_sse_init(struct llm_sse *s, size_t max)
{
	memset(s, 0, sizeof(*s));
	s->max = max == 0 ? LLM_MAX_EVENT : max;
	buf_init(&s->line, s->max + 64);
	buf_init(&s->data, s->max);
}

void
llm_sse_free(struct llm_sse *s)
{
	buf_free(&s->line);
	buf_free(&s->data);
	memset(s, 0, sizeof(*s));
}

static int
llm_sse_dispatch(struct llm_sse *s, llm_sse_fn fn, void *arg)
{
	const char	*data;
	int		 rc = 0;

	if (s->has_data) {
		if ((data = buf_cstr(&s->data)) == NULL)
			return -1;
		s->nevents++;
		rc = fn(s->event[0] != '\0' ? s->event : "message", data,
		    s->data.len, arg);
	}
	buf_reset(&s->data);
	s->event[0] = '\0';
	s->has_data = 0;
	return rc;
}

/* One complete line (without its terminator). */
static int
llm_sse_line(struct llm_sse *s, const char *p, size_t n, llm_sse_fn fn,
    void *arg)
{
	const char	*colon, *val;
	size_t		 flen, vlen;

	if (n == 0)
		return llm_sse_dispatch(s, fn, arg);
	if (p[0] == ':')
		return 0;	/* comment, keep-alive */
	if ((colon = memchr(p, ':', n)) != NULL) {
		flen = (size_t)(colon - p);
		val = colon + 1;
		vlen = n - flen - 1;
		if (vlen > 0 && *val == ' ') {
			val++;
			vlen--;
		}
	} else {
		flen = n;
		val = "";
		vlen = 0;
	}
	if (flen == 4 && memcmp(p, "data", 4) == 0) {
		if (s->has_data && buf_addc(&s->data, '\n') == -1)
			return -1;
		if (buf_add(&s->data, val, vlen) == -1)
			return -1;
		s->has_data = 1;
	} else if (flen == 5 && memcmp(p, "event", 5) == 0) {
		if (vlen >= sizeof(s->event))
			vlen = sizeof(s->event) - 1;
		memcpy(s->event, val, vlen);
		s->event[vlen] = '\0';
	}
	/* id:, retry: and unknown fields are ignored. */
	return 0;
}

int
llm_sse_feed(struct llm_sse *s, const char *p, size_t n, llm_sse_fn fn,
    void *arg)
{
	const char	*end = p + n, *eol;
	size_t		 len;

	while (p < end) {
		/* A \n right after a \r ends nothing new. */
		if (s->cr) {
			s->cr = 0;
			if (*p == '\n') {
				p++;
				continue;
			}
		}
		eol = p;
		while (eol < end && *eol != '\n' && *eol != '\r')
			eol++;
		len = (size_t)(eol - p);
		if (eol == end) {
			if (buf_add(&s->line, p, len) == -1)
				return -1;
			break;
		}
		if (s->line.len > 0) {
			if (buf_add(&s->line, p, len) == -1)
				return -1;
			if (llm_sse_line(s, (const char *)s->line.data,
			    s->line.len, fn, arg) == -1)
				return -1;
			buf_reset(&s->line);
		} else if (llm_sse_line(s, p, len, fn, arg) == -1)
			return -1;
		s->cr = *eol == '\r';
		p = eol + 1;
	}
	return 0;
}

/*
 * Shared body of the wire-format fuzzers: the first byte picks whole
 * answer or SSE stream (fed in chunks whose sizes come from the input),
 * the rest is the server's answer; whatever parses is finished into a
 * reply and run through the text-mode tool-call parser too.
 */
#include <stdint.h>
#include <string.h>

#include "llm/llm_int.h"

static int
fuzz_event(const char *event, const char *data, size_t len, void *arg)
{
	struct llm_acc	*a = arg;

	return ((const struct llm_wire *)a->arg)->event(a, event, data, len);
}

static void
fuzz_wire(const struct llm_wire *w, const uint8_t *data, size_t size)
{
	struct msg_reply	 r;
	struct llm_acc		 a;
	struct llm_sse		 s;
	size_t			 i, step;
	int			 rc = 0;

	if (size < 1)
		return;
	llm_acc_init(&a, 1u << 20);
	if (data[0] & 1) {
		a.arg = (void *)(uintptr_t)w;
		step = (size_t)(data[0] >> 1) + 1;
		llm_sse_init(&s, 1u << 16);
		for (i = 1; rc == 0 && i < size; i += step)
			rc = llm_sse_feed(&s, (const char *)data + i,
			    i + step > size ? size - i : step, fuzz_event, &a);
		llm_sse_free(&s);
	} else
		rc = w->parse(&a, (const char *)data + 1, size - 1);
	if (rc == 0 && llm_acc_finish(&a, &r) == 0) {
		llm_textcall_parse(&r.msg);
		msg_reply_free(&r);
	}
	llm_acc_free(&a);
}

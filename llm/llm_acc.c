/*
 * An answer being assembled from a wire format: text, tool calls found by
 * the wire's own key and completed piece by piece, usage and stop reason.
 * Every piece is bounded, so a hostile stream cannot grow it without end.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "llm/llm_int.h"

void
llm_acc_init(struct llm_acc *a, size_t max)
{
	memset(a, 0, sizeof(*a));
	a->max = max == 0 ? 64u * 1024 * 1024 : max;
	buf_init(&a->text, a->max);
}

void
llm_acc_free(struct llm_acc *a)
{
	size_t	i;

	for (i = 0; i < a->ncalls; i++) {
		free(a->calls[i].key);
		free(a->calls[i].id);
		free(a->calls[i].name);
		buf_free(&a->calls[i].args);
	}
	free(a->calls);
	buf_free(&a->text);
	a->calls = NULL;
	a->ncalls = 0;
}

int
llm_acc_fail(struct llm_acc *a, const char *fmt, ...)
{
	va_list	ap;

	if (a->err[0] != '\0')
		return -1;	/* keep the first cause */
	va_start(ap, fmt);
	vsnprintf(a->err, sizeof(a->err), fmt, ap);
	va_end(ap);
	return -1;
}

int
llm_acc_text(struct llm_acc *a, const char *s, size_t len)
{
	if (len == 0)
		return 0;
	if (buf_add(&a->text, s, len) == -1)
		return llm_acc_fail(a, "answer text over %zu bytes", a->max);
	if (a->on_text != NULL)
		a->on_text(s, len, a->arg);
	return 0;
}

struct llm_acc_call *
llm_acc_call(struct llm_acc *a, const char *key)
{
	struct llm_acc_call	*calls, *c;
	size_t			 i;

	for (i = 0; i < a->ncalls; i++) {
		if (strcmp(a->calls[i].key, key) == 0)
			return &a->calls[i];
	}
	if (a->ncalls >= LLM_MAX_CALLS) {
		llm_acc_fail(a, "more than %d tool calls in one answer",
		    LLM_MAX_CALLS);
		return NULL;
	}
	calls = reallocarray(a->calls, a->ncalls + 1, sizeof(*calls));
	if (calls == NULL) {
		llm_acc_fail(a, "out of memory");
		return NULL;
	}
	a->calls = calls;
	c = &calls[a->ncalls];
	memset(c, 0, sizeof(*c));
	if ((c->key = strdup(key)) == NULL) {
		llm_acc_fail(a, "out of memory");
		return NULL;
	}
	buf_init(&c->args, a->max);
	a->ncalls++;
	return c;
}

static int
llm_acc_setstr(struct llm_acc *a, char **dst, const char *s, const char *what)
{
	char	*d;

	if (s == NULL || *s == '\0')
		return 0;
	if (strlen(s) > LLM_MAX_NAME)
		return llm_acc_fail(a, "tool call %s longer than %d bytes",
		    what, LLM_MAX_NAME);
	if ((d = strdup(s)) == NULL)
		return llm_acc_fail(a, "out of memory");
	free(*dst);
	*dst = d;
	return 0;
}

struct llm_acc_call *
llm_acc_call_open(struct llm_acc *a, const char *key, const char *id,
    const char *name)
{
	struct llm_acc_call	*c;

	if ((c = llm_acc_call(a, key)) == NULL ||
	    llm_acc_setstr(a, &c->id, id, "id") == -1 ||
	    llm_acc_setstr(a, &c->name, name, "name") == -1)
		return NULL;
	return c;
}

int
llm_acc_args(struct llm_acc *a, struct llm_acc_call *c, const char *s,
    size_t len)
{
	if (buf_add(&c->args, s, len) == -1)
		return llm_acc_fail(a, "tool call arguments over %zu bytes",
		    a->max);
	return 0;
}

int
llm_acc_finish(struct llm_acc *a, struct msg_reply *out)
{
	struct llm_acc_call	*c;
	char			 genid[32];
	const char		*args, *id;
	size_t			 i;

	memset(out, 0, sizeof(*out));
	out->msg.role = MSG_ASSISTANT;
	if (a->text.len > 0 &&
	    (out->msg.text = buf_release(&a->text, NULL)) == NULL)
		goto nomem;
	for (i = 0; i < a->ncalls; i++) {
		c = &a->calls[i];
		if (c->name == NULL) {
			llm_acc_fail(a, "tool call %zu has no name", i);
			goto fail;
		}
		if ((args = buf_cstr(&c->args)) == NULL)
			goto nomem;
		if (c->args.len == 0)
			args = "{}";
		if ((id = c->id) == NULL) {
			snprintf(genid, sizeof(genid), "call_%zu", i);
			id = genid;
		}
		if (msg_add_call(&out->msg, id, c->name, args) == -1)
			goto nomem;
	}
	out->usage = a->usage;
	out->stop = a->stop;
	/* Some servers say "stop" even when they called tools. */
	if (out->msg.ncalls > 0 && out->stop == MSG_STOP_END)
		out->stop = MSG_STOP_TOOL_CALLS;
	return 0;
nomem:
	llm_acc_fail(a, "out of memory");
fail:
	msg_reply_free(out);
	return -1;
}

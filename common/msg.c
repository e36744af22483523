/*
 * The neutral conversation model: constructors, copies and frees.
 */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "common/msg.h"

static const char *const role_names[] = {
	[MSG_SYSTEM] = "system",
	[MSG_USER] = "user",
	[MSG_ASSISTANT] = "assistant",
	[MSG_TOOL] = "tool",
};

static const char *const stop_names[] = {
	[MSG_STOP_END] = "end",
	[MSG_STOP_TOOL_CALLS] = "tool_calls",
	[MSG_STOP_LENGTH] = "length",
	[MSG_STOP_OTHER] = "other",
};

#define NITEMS(a) (sizeof(a) / sizeof((a)[0]))

const char *
msg_role_name(enum msg_role role)
{
	if ((size_t)role >= NITEMS(role_names))
		return "unknown";
	return role_names[role];
}

int
msg_role_parse(const char *name, enum msg_role *role)
{
	size_t	i;

	for (i = 0; i < NITEMS(role_names); i++) {
		if (strcmp(name, role_names[i]) == 0) {
			*role = (enum msg_role)i;
			return 0;
		}
	}
	errno = EINVAL;
	return -1;
}

const char *
msg_stop_name(enum msg_stop stop)
{
	if ((size_t)stop >= NITEMS(stop_names))
		return "other";
	return stop_names[stop];
}

int
msg_stop_parse(const char *name, enum msg_stop *stop)
{
	size_t	i;

	for (i = 0; i < NITEMS(stop_names); i++) {
		if (strcmp(name, stop_names[i]) == 0) {
			*stop = (enum msg_stop)i;
			return 0;
		}
	}
	errno = EINVAL;
	return -1;
}

/* strdup that maps NULL to NULL; *ok cleared on allocation failure. */
static char *
dup_or_null(const char *s, int *ok)
{
	char	*d;

	if (s == NULL)
		return NULL;
	if ((d = strdup(s)) == NULL)
		*ok = 0;
	return d;
}

int
msg_add_call(struct msg *m, const char *id, const char *name, const char *args)
{
	struct msg_call	*calls, *c;
	int		 ok = 1;

	calls = reallocarray(m->calls, m->ncalls + 1, sizeof(*calls));
	if (calls == NULL)
		return -1;
	m->calls = calls;
	c = &calls[m->ncalls];
	c->id = dup_or_null(id, &ok);
	c->name = dup_or_null(name, &ok);
	c->args = dup_or_null(args != NULL ? args : "{}", &ok);
	if (!ok) {
		free(c->id);
		free(c->name);
		free(c->args);
		errno = ENOMEM;
		return -1;
	}
	m->ncalls++;
	return 0;
}

int
msg_copy(struct msg *dst, const struct msg *src)
{
	size_t	i;
	int	ok = 1;

	memset(dst, 0, sizeof(*dst));
	dst->role = src->role;
	dst->is_error = src->is_error;
	dst->text = dup_or_null(src->text, &ok);
	dst->call_id = dup_or_null(src->call_id, &ok);
	dst->name = dup_or_null(src->name, &ok);
	for (i = 0; ok && i < src->ncalls; i++) {
		if (msg_add_call(dst, src->calls[i].id, src->calls[i].name,
		    src->calls[i].args) == -1)
			ok = 0;
	}
	if (!ok) {
		msg_free(dst);
		errno = ENOMEM;
		return -1;
	}
	return 0;
}

void
msg_free(struct msg *m)
{
	size_t	i;

	if (m == NULL)
		return;
	for (i = 0; i < m->ncalls; i++) {
		free(m->calls[i].id);
		free(m->calls[i].name);
		free(m->calls[i].args);
	}
	free(m->calls);
	free(m->text);
	free(m->call_id);
	free(m->name);
	memset(m, 0, sizeof(*m));
}

void
msg_list_init(struct msg_list *l)
{
	memset(l, 0, sizeof(*l));
}

static int
msg_list_grow(struct msg_list *l)
{
	struct msg	*v;
	size_t		 cap;

	if (l->n < l->cap)
		return 0;
	cap = l->cap == 0 ? 16 : l->cap * 2;
	if ((v = reallocarray(l->v, cap, sizeof(*v))) == NULL)
		return -1;
	l->v = v;
	l->cap = cap;
	return 0;
}

int
msg_list_add(struct msg_list *l, const struct msg *m)
{
	if (msg_list_grow(l) == -1)
		return -1;
	if (msg_copy(&l->v[l->n], m) == -1)
		return -1;
	l->n++;
	return 0;
}

int
msg_list_take(struct msg_list *l, struct msg *m)
{
	if (msg_list_grow(l) == -1)
		return -1;
	l->v[l->n++] = *m;
	memset(m, 0, sizeof(*m));
	return 0;
}

int
msg_list_add_text(struct msg_list *l, enum msg_role role, const char *text)
{
	struct msg	m;

	memset(&m, 0, sizeof(m));
	m.role = role;
	m.text = (char *)(uintptr_t)text;	/* copied by msg_list_add */
	return msg_list_add(l, &m);
}

void
msg_list_remove(struct msg_list *l, size_t i, size_t n)
{
	size_t	j;

	if (i >= l->n)
		return;
	if (n > l->n - i)
		n = l->n - i;
	for (j = i; j < i + n; j++)
		msg_free(&l->v[j]);
	memmove(&l->v[i], &l->v[i + n], (l->n - i - n) * sizeof(*l->v));
	l->n -= n;
}

int
msg_list_copy(struct msg_list *dst, const struct msg_list *src)
{
	size_t	i;

	msg_list_init(dst);
	for (i = 0; i < src->n; i++) {
		if (msg_list_add(dst, &src->v[i]) == -1) {
			msg_list_free(dst);
			return -1;
		}
	}
	return 0;
}

void
msg_list_free(struct msg_list *l)
{
	size_t	i;

	for (i = 0; i < l->n; i++)
		msg_free(&l->v[i]);
	free(l->v);
	msg_list_init(l);
}

int
msg_tool_copy(struct msg_tool *dst, const struct msg_tool *src)
{
	int	ok = 1;

	dst->name = dup_or_null(src->name, &ok);
	dst->description = dup_or_null(src->description, &ok);
	dst->schema = dup_or_null(src->schema, &ok);
	if (!ok) {
		msg_tool_free(dst);
		errno = ENOMEM;
		return -1;
	}
	return 0;
}

void
msg_tool_free(struct msg_tool *t)
{
	free(t->name);
	free(t->description);
	free(t->schema);
	memset(t, 0, sizeof(*t));
}

void
msg_reply_free(struct msg_reply *r)
{
	msg_free(&r->msg);
	memset(r, 0, sizeof(*r));
}

size_t
msg_chars(const struct msg *m)
{
	size_t	n = 0, i;

	if (m->text != NULL)
		n += strlen(m->text);
	for (i = 0; i < m->ncalls; i++) {
		n += m->calls[i].name != NULL ? strlen(m->calls[i].name) : 0;
		n += m->calls[i].args != NULL ? strlen(m->calls[i].args) : 0;
	}
	return n;
}

/*
 * Context surgery: what the model sees before a turn. Its size (estimated
 * from characters), cuts that keep every tool result with its call,
 * replacing a range with one message, and the summary a strategy asks for
 * (the request the summariser reads, the summary put in the range's place
 * with the task list and notes carried over). The strategies that decide
 * when to cut are behaviors (behav_append.c, behav_hier.c).
 */
#include <stdlib.h>
#include <string.h>

#include "agent/agent_int.h"
#include "common/buf.h"
#include "common/str.h"
#include "agent/agent_testapi.h"

char *
agent_clip(const char *s, size_t max)
{
	struct buf	 b;
	size_t		 len, head, tail;
	char		*esc = NULL, *r;

	if (s == NULL)
		s = "";
	len = strlen(s);
	/* The JSON the APIs take carries only UTF-8: escape anything else. */
	if (!str_utf8_valid(s, len)) {
		if ((esc = str_escape_dup(s, len, STR_ESC_KEEP_NL)) == NULL)
			return NULL;
		s = esc;
		len = strlen(s);
	}
	if (len <= max || max < 64) {
		r = strdup(s);
		free(esc);
		return r;
	}
	/* Keep head and tail: errors tend to be at the end, context at the
	 * start. Never cut inside a UTF-8 sequence. */
	head = max / 2;
	tail = max - head;
	while (head > 0 && ((unsigned char)s[head] & 0xc0) == 0x80)
		head--;
	while (tail > 0 && ((unsigned char)s[len - tail] & 0xc0) == 0x80)
		tail--;
	buf_init(&b, 0);
	if (buf_add(&b, s, head) == -1 ||
	    buf_addf(&b, "\n[... %zu bytes cut ...]\n", len - head - tail) ==
	    -1 || buf_add(&b, s + len - tail, tail) == -1) {
		buf_free(&b);
		free(esc);
		return NULL;
	}
	free(esc);
	return buf_release(&b, NULL);
}

size_t
agent_list_chars(const struct msg_list *l, size_t from, size_t to)
{
	size_t	i, n = 0;

	for (i = from; i < to; i++)
		n += msg_chars(&l->v[i]);
	return n;
}

uint64_t
agent_estimate(const struct agent *a)
{
	size_t	chars;

	chars = agent_list_chars(&a->ctx, 0, a->ctx.n) + a->tools_chars;
	return (uint64_t)((double)chars * a->tok_per_char + 0.5);
}

uint64_t
agent_context_tokens(const struct agent *a)
{
	return agent_estimate(a);
}

size_t
agent_safe_cut(const struct agent *a, size_t cut)
{
	while (cut > a->pinned && cut < a->ctx.n &&
	    a->ctx.v[cut].role == MSG_TOOL)
		cut--;
	return cut;
}

char *
agent_describe(const struct agent *a, size_t from, size_t to)
{
	struct buf	 b;
	const char	*names[AGENT_MAX_TOOLS * 2];
	unsigned	 counts[AGENT_MAX_TOOLS * 2];
	size_t		 nnames = 0, i, j, k, turns = 0, users = 0, results = 0;

	for (i = from; i < to && i < a->ctx.n; i++) {
		const struct msg *m = &a->ctx.v[i];

		switch (m->role) {
		case MSG_ASSISTANT:
			turns++;
			for (k = 0; k < m->ncalls; k++) {
				for (j = 0; j < nnames; j++)
					if (strcmp(names[j],
					    m->calls[k].name) == 0)
						break;
				if (j == nnames) {
					if (nnames == sizeof(names) /
					    sizeof(names[0]))
						continue;
					names[nnames] = m->calls[k].name;
					counts[nnames++] = 0;
				}
				counts[j]++;
			}
			break;
		case MSG_TOOL:
			results++;
			break;
		case MSG_USER:
		case MSG_SYSTEM:
			users++;
			break;
		}
	}
	buf_init(&b, 0);
	buf_addf(&b, "%zu messages: %zu assistant turns, %zu tool results, "
	    "%zu other messages; tools used:", to - from, turns, results,
	    users);
	if (nnames == 0)
		buf_addstr(&b, " none");
	for (j = 0; j < nnames; j++)
		buf_addf(&b, " %.40s x%u", names[j], counts[j]);
	return buf_release(&b, NULL);
}

int
agent_replace(struct agent *a, size_t from, size_t to, const char *text,
    int record)
{
	struct msg	m;

	if (from > to || to > a->ctx.n)
		return -1;
	memset(&m, 0, sizeof(m));
	m.role = MSG_USER;
	if ((m.text = strdup(text)) == NULL)
		return -1;
	/* The record keeps everything it dropped; it gets the marker too. */
	if (record && msg_list_add(&a->log, &m) == -1) {
		msg_free(&m);
		return -1;
	}
	msg_list_remove(&a->ctx, from, to - from);
	/* Insert at from: append, then rotate into place. */
	if (msg_list_take(&a->ctx, &m) == -1) {
		msg_free(&m);
		return -1;
	}
	if (from < a->ctx.n - 1) {
		struct msg	tmp = a->ctx.v[a->ctx.n - 1];

		memmove(&a->ctx.v[from + 1], &a->ctx.v[from],
		    (a->ctx.n - 1 - from) * sizeof(struct msg));
		a->ctx.v[from] = tmp;
	}
	return 0;
}

void
agent_request_summary(struct agent *a, size_t from, size_t to)
{
	if (from < a->pinned || to > a->ctx.n || to <= from)
		return;
	a->sum_from = from;
	a->sum_to = to;
	a->sum_wanted = 1;
}

/* The transcript the summariser reads: roles, text, calls, results. */
int
agent_summary_request(struct agent *a)
{
	struct buf	 b;
	struct msg	 m;
	size_t		 i, k;
	char		*t;

	msg_list_free(&a->sumreq);
	msg_list_init(&a->sumreq);
	if (msg_list_add_text(&a->sumreq, MSG_SYSTEM,
	    "You compress the working context of an agent. Summarise the "
	    "transcript below: the facts found (file paths, names, line "
	    "numbers, values), what was done and its outcome, decisions, and "
	    "what remains open. Be concise; do not invent anything.") == -1)
		return -1;
	buf_init(&b, AGENT_MAX_TRANSCRIPT + 4096);
	if (a->todo_text != NULL && *a->todo_text != '\0')
		buf_addf(&b, "Current task list:\n%s\n\n", a->todo_text);
	for (i = a->sum_from; i < a->sum_to; i++) {
		const struct msg *mm = &a->ctx.v[i];

		if (b.len > AGENT_MAX_TRANSCRIPT) {
			buf_addf(&b, "[... %zu more messages not shown]\n",
			    a->sum_to - i);
			break;
		}
		if (mm->role == MSG_TOOL)
			buf_addf(&b, "[tool %s%s]\n", mm->name ? mm->name : "?",
			    mm->is_error ? " error" : "");
		else
			buf_addf(&b, "[%s]\n", msg_role_name(mm->role));
		if (mm->text != NULL)
			buf_addf(&b, "%.4000s%s\n", mm->text,
			    strlen(mm->text) > 4000 ? " [...]" : "");
		for (k = 0; k < mm->ncalls; k++)
			buf_addf(&b, "call %s(%.1000s)\n", mm->calls[k].name,
			    mm->calls[k].args ? mm->calls[k].args : "");
	}
	if ((t = buf_release(&b, NULL)) == NULL)
		return -1;
	memset(&m, 0, sizeof(m));
	m.role = MSG_USER;
	m.text = t;
	return msg_list_take(&a->sumreq, &m);
}

void
agent_carry(const struct agent *a, struct buf *b)
{
	if (a->todo_text != NULL && *a->todo_text != '\0')
		buf_addf(b, "\nTask list:\n%s", a->todo_text);
	if (a->notes_text != NULL && *a->notes_text != '\0')
		buf_addf(b, "\nNotes:\n%s", a->notes_text);
}

/* Replace the summarised range with the summary and a note of what went. */
int
agent_summary_apply(struct agent *a, const char *summary, const char *why)
{
	struct buf	 b;
	char		*what, *text;
	int		 rc;

	if ((what = agent_describe(a, a->sum_from, a->sum_to)) == NULL)
		return -1;
	buf_init(&b, 0);
	buf_addf(&b, "[Context summary. Dropped to stay under the context "
	    "budget: %s.]\n", what);
	if (why != NULL)
		buf_addf(&b, "%s\n", why);
	if (summary != NULL && *summary != '\0')
		buf_addf(&b, "\n%s\n", summary);
	agent_carry(a, &b);
	free(what);
	if ((text = buf_release(&b, NULL)) == NULL)
		return -1;
	rc = agent_replace(a, a->sum_from, a->sum_to, text, 1);
	if (rc == 0)
		agent_emit(a, AGENT_EV_SUMMARY, NULL, text, why != NULL);
	free(text);
	a->sum_wanted = 0;
	msg_list_free(&a->sumreq);
	msg_list_init(&a->sumreq);
	return rc;
}

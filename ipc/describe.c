/*
 * One bounded, escaped line per message for the IPC trace (-T ipc, like
 * OpenSMTPD's log_imsg): the type, ids and sizes, and the start of each
 * text with control characters escaped, so a trace of hostile traffic is
 * safe to print on a terminal.
 */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "common/str.h"
#include "ipc/ipc.h"

/* Characters of a text shown before it is cut with "...". */
#define DESCRIBE_TEXT	48

struct line {
	char	*dst;
	size_t	 sz;
	size_t	 len;
};

static void
describe_add(struct line *l, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

static void
describe_add(struct line *l, const char *fmt, ...)
{
	va_list	ap;
	int	n;

	if (l->len + 1 >= l->sz)
		return;
	va_start(ap, fmt);
	n = vsnprintf(l->dst + l->len, l->sz - l->len, fmt, ap);
	va_end(ap);
	if (n < 0)
		return;
	l->len += (size_t)n;
	if (l->len >= l->sz)
		l->len = l->sz - 1;
}

/* key="text..." escaped and cut; nothing for NULL. */
static void
describe_text(struct line *l, const char *key, const char *s)
{
	char	esc[DESCRIBE_TEXT + 4];
	size_t	len;

	if (s == NULL)
		return;
	len = strlen(s);
	str_escape(esc, sizeof(esc), s, len);
	describe_add(l, " %s=\"%s\"(%zu)", key, esc, len);
}

/* A name the decoder checked is a token, but m may be a local message
   that never went through it: escape anyway, "-" for NULL. */
static const char *
describe_name(char *dst, size_t dstsz, const char *s)
{
	if (s == NULL)
		return "-";
	str_escape(dst, dstsz, s, strlen(s));
	return dst;
}

static void
describe_msgs(struct line *l, const char *key, const struct msg_list *ml)
{
	size_t	i, chars = 0;

	for (i = 0; i < ml->n; i++)
		chars += msg_chars(&ml->v[i]);
	describe_add(l, " %s=%zu(%zu chars)", key, ml->n, chars);
}

static void
describe_body(struct line *l, const struct ipc_msg *m)
{
	char	a[DESCRIBE_TEXT + 4], b[DESCRIBE_TEXT + 4];
	size_t	i;

	switch (m->type) {
	case IPC_HELLO:
		describe_add(l, " version=%u pid=%u weaker=%d layers=",
		    m->u.hello.version, m->u.hello.pid, m->u.hello.weaker);
		for (i = 0; i < m->u.hello.nlayers && i < IPC_LAYERS_MAX; i++)
			describe_add(l, "%s%s", i ? "," : "", describe_name(a,
			    sizeof(a), m->u.hello.layers[i]));
		break;
	case IPC_START:
		describe_add(l, " path=%s depth=%u profile=%s tools=%zu",
		    describe_name(a, sizeof(a), m->u.start.path),
		    m->u.start.depth, describe_name(b, sizeof(b),
		    m->u.start.profile.name), m->u.start.profile.ntools);
		describe_msgs(l, "context", &m->u.start.context);
		if (m->u.start.history.n > 0)
			describe_msgs(l, "history", &m->u.start.history);
		if (m->u.start.schema != NULL)
			describe_add(l, " schema=%zu",
			    strlen(m->u.start.schema));
		if (m->u.start.nmcp_tools > 0)
			describe_add(l, " mcp_tools=%zu",
			    m->u.start.nmcp_tools);
		describe_text(l, "task", m->u.start.task);
		break;
	case IPC_LLM:
		describe_add(l, " id=%u step=%u purpose=%s tools=%zu",
		    m->u.llm.id, m->u.llm.step,
		    ipc_purpose_name(m->u.llm.purpose), m->u.llm.ntools);
		describe_msgs(l, "messages", &m->u.llm.messages);
		break;
	case IPC_LLM_OK:
		describe_add(l, " id=%u stop=%s calls=%zu in=%llu out=%llu",
		    m->u.llm_ok.id, msg_stop_name(m->u.llm_ok.reply.stop),
		    m->u.llm_ok.reply.msg.ncalls,
		    (unsigned long long)m->u.llm_ok.reply.usage.input,
		    (unsigned long long)m->u.llm_ok.reply.usage.output);
		describe_text(l, "text", m->u.llm_ok.reply.msg.text);
		break;
	case IPC_MCP:
		describe_add(l, " id=%u server=%s tool=%s", m->u.mcp.id,
		    describe_name(a, sizeof(a), m->u.mcp.server),
		    describe_name(b, sizeof(b), m->u.mcp.tool));
		describe_text(l, "args", m->u.mcp.args);
		break;
	case IPC_MCP_OK:
		describe_add(l, " id=%u is_error=%d", m->u.mcp_ok.id,
		    m->u.mcp_ok.is_error);
		describe_text(l, "text", m->u.mcp_ok.text);
		break;
	case IPC_LLM_ERR:
	case IPC_MCP_ERR:
	case IPC_SPAWN_ERR:
		describe_add(l, " id=%u code=%s", m->u.llm_err.id,
		    describe_name(a, sizeof(a), m->u.llm_err.code));
		describe_text(l, "message", m->u.llm_err.message);
		break;
	case IPC_SPAWN:
		describe_add(l, " id=%u profile=%s inherit=%d", m->u.spawn.id,
		    describe_name(a, sizeof(a), m->u.spawn.profile),
		    m->u.spawn.inherit_context);
		if (m->u.spawn.call_id != NULL && *m->u.spawn.call_id != '\0')
			describe_add(l, " call=%s", describe_name(a, sizeof(a),
			    m->u.spawn.call_id));
		describe_text(l, "task", m->u.spawn.task);
		break;
	case IPC_SPAWN_OK:
		describe_add(l, " id=%u path=%s", m->u.spawn_ok.id,
		    describe_name(a, sizeof(a), m->u.spawn_ok.path));
		describe_text(l, "result", m->u.spawn_ok.result);
		break;
	case IPC_EVENT:
		describe_add(l, " kind=%s", describe_name(a, sizeof(a),
		    m->u.event.kind));
		if (m->u.event.tool != NULL)
			describe_add(l, " tool=%s", describe_name(a,
			    sizeof(a), m->u.event.tool));
		if (m->u.event.has_level)
			describe_add(l, " level=%u", m->u.event.level);
		describe_text(l, "text", m->u.event.text);
		break;
	case IPC_CHECKPOINT:
		describe_add(l, " seq=%u", m->u.checkpoint.seq);
		describe_msgs(l, "messages", &m->u.checkpoint.messages);
		break;
	case IPC_DONE:
		describe_add(l, " status=%s iterations=%u in=%llu out=%llu",
		    ipc_status_name(m->u.done.status), m->u.done.iterations,
		    (unsigned long long)m->u.done.usage.input,
		    (unsigned long long)m->u.done.usage.output);
		describe_text(l, "result", m->u.done.result);
		describe_text(l, "reason", m->u.done.reason);
		break;
	case IPC_CANCEL:
		describe_text(l, "reason", m->u.cancel.reason);
		break;
	case IPC_HTTP:
		describe_add(l, " id=%u wire=%s method=%s headers=%zu",
		    m->u.http.id, describe_name(a, sizeof(a), m->u.http.wire),
		    describe_name(b, sizeof(b), m->u.http.method),
		    m->u.http.nheaders);
		describe_text(l, "path", m->u.http.path);
		describe_text(l, "body", m->u.http.body);
		break;
	case IPC_HTTP_OK:
		describe_add(l, " id=%u status=%u%s", m->u.http_ok.id,
		    m->u.http_ok.status, m->u.http_ok.more ? " more" : "");
		describe_text(l, "type", m->u.http_ok.content_type);
		describe_text(l, "body", m->u.http_ok.body);
		break;
	case IPC_HTTP_ERR:
		describe_add(l, " id=%u code=%s", m->u.http_err.id,
		    describe_name(a, sizeof(a), m->u.http_err.code));
		describe_text(l, "message", m->u.http_err.message);
		break;
	case IPC_NONE:
		break;
	}
}

size_t
ipc_msg_describe(const struct ipc_msg *m, char *dst, size_t dstsz)
{
	struct line	l = { dst, dstsz, 0 };

	if (dstsz == 0)
		return 0;
	dst[0] = '\0';
	describe_add(&l, "%s", ipc_type_name(m->type));
	describe_body(&l, m);
	return l.len;
}

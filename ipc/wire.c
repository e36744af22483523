/*
 * The neutral conversation model (common/msg.h) on the wire.
 *
 *   msg:   {role: str, text?: str, calls?: [call], call_id?: str,
 *           name?: str, is_error?: bool}
 *   call:  {id: str, name: str, args: str}
 *   tool:  {name: token, description: str, schema: str}
 *   usage: {input: uint, output: uint}
 *   reply: {msg: msg (assistant), usage: usage, stop: str}
 *
 * Absent optional keys decode as NULL/0; the encoder writes only what is
 * set, so a round trip gives back an equal struct.
 */
#include <stdlib.h>
#include <string.h>

#include "common/str.h"
#include "ipc/ipc.h"
#include "ipc/codec.h"

#define WIRE_ROLE_MAX	16

static void
wire_put_msg(struct enc *e, const struct msg *m, const char *what)
{
	uint32_t	n = 1;
	size_t		i;

	if ((unsigned)m->role > MSG_TOOL) {
		enc_fail(e, "%s: invalid role %d", what, (int)m->role);
		return;
	}
	n += m->text != NULL;
	n += m->ncalls > 0;
	n += m->call_id != NULL;
	n += m->name != NULL;
	n += m->is_error != 0;
	enc_map(e, n);
	enc_key(e, "role");
	enc_str(e, msg_role_name(m->role), WIRE_ROLE_MAX, what);
	if (m->text != NULL) {
		enc_key(e, "text");
		enc_str(e, m->text, IPC_STR_MAX, what);
	}
	if (m->ncalls > 0) {
		enc_key(e, "calls");
		enc_array(e, m->ncalls, IPC_CALLS_MAX, what);
		for (i = 0; i < m->ncalls && !e->failed; i++) {
			enc_map(e, 3);
			enc_key(e, "id");
			enc_str(e, m->calls[i].id, IPC_CALLSTR_MAX, what);
			enc_key(e, "name");
			enc_str(e, m->calls[i].name, IPC_CALLSTR_MAX, what);
			enc_key(e, "args");
			enc_str(e, m->calls[i].args, IPC_STR_MAX, what);
		}
	}
	if (m->call_id != NULL) {
		enc_key(e, "call_id");
		enc_str(e, m->call_id, IPC_CALLSTR_MAX, what);
	}
	if (m->name != NULL) {
		enc_key(e, "name");
		enc_str(e, m->name, IPC_CALLSTR_MAX, what);
	}
	if (m->is_error) {
		enc_key(e, "is_error");
		enc_bool(e, 1);
	}
}

void
wire_put_msgs(struct enc *e, const struct msg_list *l, const char *what)
{
	size_t	i;

	enc_array(e, l->n, IPC_MSGS_MAX, what);
	for (i = 0; i < l->n && !e->failed; i++)
		wire_put_msg(e, &l->v[i], what);
}

static void
wire_put_tool(struct enc *e, const struct msg_tool *t, const char *what)
{
	enc_map(e, 3);
	enc_key(e, "name");
	enc_tok(e, t->name, IPC_NAME_MAX, what);
	enc_key(e, "description");
	enc_str(e, t->description, IPC_STR_MAX, what);
	enc_key(e, "schema");
	enc_str(e, t->schema, IPC_STR_MAX, what);
}

void
wire_put_tools(struct enc *e, const struct msg_tool *t, size_t n,
    const char *what)
{
	size_t	i;

	enc_array(e, n, IPC_TOOLS_MAX, what);
	for (i = 0; i < n && !e->failed; i++)
		wire_put_tool(e, &t[i], what);
}

void
wire_put_usage(struct enc *e, const struct msg_usage *u)
{
	enc_map(e, 2);
	enc_key(e, "input");
	enc_u64(e, u->input);
	enc_key(e, "output");
	enc_u64(e, u->output);
}

void
wire_put_reply(struct enc *e, const struct msg_reply *r)
{
	if (r->msg.role != MSG_ASSISTANT) {
		enc_fail(e, "reply.msg: role %s, expected assistant",
		    msg_role_name(r->msg.role));
		return;
	}
	if ((unsigned)r->stop > MSG_STOP_OTHER) {
		enc_fail(e, "reply.stop: invalid value %d", (int)r->stop);
		return;
	}
	enc_map(e, 3);
	enc_key(e, "msg");
	wire_put_msg(e, &r->msg, "reply.msg");
	enc_key(e, "usage");
	wire_put_usage(e, &r->usage);
	enc_key(e, "stop");
	enc_str(e, msg_stop_name(r->stop), WIRE_ROLE_MAX, "reply.stop");
}

static int
wire_required(struct mp_reader *r, uint32_t seen, uint32_t need,
    const char *const *keys, const char *what)
{
	int	i;

	if (r->failed)
		return -1;
	for (i = 0; i < 32; i++)
		if ((need & (1u << i)) && !(seen & (1u << i)))
			return mp_fail(r, "%s: missing key \"%s\"", what,
			    keys[i]);
	return 0;
}

/* Each key and its value; -1 at once on a bad key, as the values' own
 * failures are left in r for the caller's checks. */
static int
wire_map_loop(struct mp_reader *r, uint32_t n, const struct wire_map *m,
    void *arg, const char *what, uint32_t *seen)
{
	uint32_t	i;
	int		key;

	/* seen and need hold a bit a key: a 33rd key would share one. */
	if (m->nkeys > 32)
		return mp_fail(r, "%s: a map of %d keys (wire_map holds 32 at "
		    "most)", what, m->nkeys);
	for (i = 0; i < n && !r->failed; i++) {
		if ((key = mp_get_key(r, m->keys, m->nkeys, seen, what)) == -1)
			return -1;
		m->member(r, key, arg, what);
	}
	return 0;
}

static int
wire_map_end(struct mp_reader *r, const struct wire_map *m, void *arg,
    const char *what, uint32_t seen)
{
	if (!r->failed && m->check != NULL && m->check(r, seen, arg) == -1)
		return -1;
	return wire_required(r, seen, m->need, m->keys, what);
}

int
wire_members(struct mp_reader *r, uint32_t n, const struct wire_map *m,
    void *arg, const char *what)
{
	uint32_t	seen = 0;

	if (wire_map_loop(r, n, m, arg, what, &seen) == -1)
		return -1;
	return wire_map_end(r, m, arg, what, seen);
}

int
wire_get_map(struct mp_reader *r, const struct wire_map *m, void *arg,
    const char *what)
{
	uint32_t	n, seen = 0;

	if (mp_get_map(r, &n, (uint32_t)m->nkeys, what) == -1 ||
	    wire_map_loop(r, n, m, arg, what, &seen) == -1)
		return -1;
	mp_leave(r);
	return wire_map_end(r, m, arg, what, seen);
}

int
wire_get_tok(struct mp_reader *r, char **s, size_t max, const char *what)
{
	const char	*p;
	size_t		 len;

	if (mp_get_str(r, &p, &len, max, what) == -1)
		return -1;
	if (!ipc_token_valid(p, len, max))
		return mp_fail(r, "%s: not a name ([A-Za-z0-9_.:-], 1 to %zu "
		    "bytes)", what, max);
	if ((*s = strndup(p, len)) == NULL)
		return mp_fail(r, "%s: out of memory", what);
	return 0;
}

int
wire_get_strs(struct mp_reader *r, char ***v, size_t *nv, size_t max,
    int (*get)(struct mp_reader *, char **, size_t, const char *),
    const char *what)
{
	uint32_t	n, i;

	if (*v != NULL)
		return mp_fail(r, "%s: given twice", what);
	if (mp_get_array(r, &n, IPC_TOOLS_MAX, what) == -1)
		return -1;
	if (n > 0) {
		if ((*v = calloc(n, sizeof(**v))) == NULL)
			return mp_fail(r, "%s: out of memory", what);
		*nv = n;
	}
	for (i = 0; i < n && !r->failed; i++)
		get(r, &(*v)[i], max, what);
	mp_leave(r);
	return r->failed ? -1 : 0;
}

/* A short enum name ("user", "tool_calls") into a stack buffer. */
static int
wire_get_name(struct mp_reader *r, char *dst, size_t dstsz, const char *what)
{
	const char	*p;
	size_t		 len;

	if (mp_get_str(r, &p, &len, dstsz - 1, what) == -1)
		return -1;
	memcpy(dst, p, len);
	dst[len] = '\0';
	return 0;
}

/* Name the bad value, escaped: it came from the peer. */
static int
wire_bad_name(struct mp_reader *r, const char *what, const char *name)
{
	char	esc[WIRE_ROLE_MAX * 4 + 1];

	str_escape(esc, sizeof(esc), name, strlen(name));
	return mp_fail(r, "%s: unknown value \"%s\"", what, esc);
}

static void
wire_get_call_member(struct mp_reader *r, int key, void *arg,
    const char *what)
{
	struct msg_call	*c = arg;

	switch (key) {
	case 0:
		mp_get_strdup(r, &c->id, IPC_CALLSTR_MAX, what);
		break;
	case 1:
		mp_get_strdup(r, &c->name, IPC_CALLSTR_MAX, what);
		break;
	case 2:
		mp_get_strdup(r, &c->args, IPC_STR_MAX, what);
		break;
	}
}

static int
wire_get_call(struct mp_reader *r, struct msg_call *c, const char *what)
{
	static const char *const keys[] = { "id", "name", "args" };
	static const struct wire_map map = {
		keys, WIRE_KEYS(keys), 0x7, wire_get_call_member, NULL
	};

	return wire_get_map(r, &map, c, what);
}

static int
wire_get_calls(struct mp_reader *r, struct msg *m, const char *what)
{
	uint32_t	n, i;

	if (mp_get_array(r, &n, IPC_CALLS_MAX, what) == -1)
		return -1;
	if (n > 0) {
		if ((m->calls = calloc(n, sizeof(*m->calls))) == NULL)
			return mp_fail(r, "%s: out of memory", what);
		m->ncalls = n;
	}
	for (i = 0; i < n && !r->failed; i++)
		wire_get_call(r, &m->calls[i], what);
	mp_leave(r);
	return r->failed ? -1 : 0;
}

static void
wire_get_msg_member(struct mp_reader *r, int key, void *arg,
    const char *what)
{
	struct msg	*m = arg;
	char		 role[WIRE_ROLE_MAX];

	switch (key) {
	case 0:
		if (wire_get_name(r, role, sizeof(role), what) == 0 &&
		    msg_role_parse(role, &m->role) == -1)
			wire_bad_name(r, what, role);
		break;
	case 1:
		mp_get_strdup(r, &m->text, IPC_STR_MAX, what);
		break;
	case 2:
		wire_get_calls(r, m, what);
		break;
	case 3:
		mp_get_strdup(r, &m->call_id, IPC_CALLSTR_MAX, what);
		break;
	case 4:
		mp_get_strdup(r, &m->name, IPC_CALLSTR_MAX, what);
		break;
	case 5:
		mp_get_bool(r, &m->is_error, what);
		break;
	}
}

static int
wire_get_msg(struct mp_reader *r, struct msg *m, const char *what)
{
	static const char *const keys[] = { "role", "text", "calls",
	    "call_id", "name", "is_error" };
	static const struct wire_map map = {
		keys, WIRE_KEYS(keys), 0x1, wire_get_msg_member, NULL
	};

	return wire_get_map(r, &map, m, what);
}

int
wire_get_msgs(struct mp_reader *r, struct msg_list *l, const char *what)
{
	uint32_t	n, i;

	msg_list_init(l);
	if (mp_get_array(r, &n, IPC_MSGS_MAX, what) == -1)
		return -1;
	if (n > 0) {
		if ((l->v = calloc(n, sizeof(*l->v))) == NULL)
			return mp_fail(r, "%s: out of memory", what);
		l->n = l->cap = n;
	}
	for (i = 0; i < n && !r->failed; i++)
		wire_get_msg(r, &l->v[i], what);
	mp_leave(r);
	return r->failed ? -1 : 0;
}

static void
wire_get_tool_member(struct mp_reader *r, int key, void *arg,
    const char *what)
{
	struct msg_tool	*t = arg;

	switch (key) {
	case 0:
		wire_get_tok(r, &t->name, IPC_NAME_MAX, what);
		break;
	case 1:
		mp_get_strdup(r, &t->description, IPC_STR_MAX, what);
		break;
	case 2:
		mp_get_strdup(r, &t->schema, IPC_STR_MAX, what);
		break;
	}
}

static int
wire_get_tool(struct mp_reader *r, struct msg_tool *t, const char *what)
{
	static const char *const keys[] = { "name", "description", "schema" };
	static const struct wire_map map = {
		keys, WIRE_KEYS(keys), 0x7, wire_get_tool_member, NULL
	};

	return wire_get_map(r, &map, t, what);
}

int
wire_get_tools(struct mp_reader *r, struct msg_tool **t, size_t *nt,
    const char *what)
{
	uint32_t	n, i;

	if (mp_get_array(r, &n, IPC_TOOLS_MAX, what) == -1)
		return -1;
	if (n > 0) {
		if ((*t = calloc(n, sizeof(**t))) == NULL)
			return mp_fail(r, "%s: out of memory", what);
		*nt = n;
	}
	for (i = 0; i < n && !r->failed; i++)
		wire_get_tool(r, &(*t)[i], what);
	mp_leave(r);
	return r->failed ? -1 : 0;
}

static void
wire_get_usage_member(struct mp_reader *r, int key, void *arg,
    const char *what)
{
	struct msg_usage	*u = arg;

	switch (key) {
	case 0:
		mp_get_u64(r, &u->input, what);
		break;
	case 1:
		mp_get_u64(r, &u->output, what);
		break;
	}
}

int
wire_get_usage(struct mp_reader *r, struct msg_usage *u, const char *what)
{
	static const char *const keys[] = { "input", "output" };
	static const struct wire_map map = {
		keys, WIRE_KEYS(keys), 0x3, wire_get_usage_member, NULL
	};

	return wire_get_map(r, &map, u, what);
}

static void
wire_get_reply_member(struct mp_reader *r, int key, void *arg,
    const char *what)
{
	struct msg_reply	*rep = arg;
	char		 stop[WIRE_ROLE_MAX];

	(void)what;
	switch (key) {
	case 0:
		if (wire_get_msg(r, &rep->msg, "reply.msg") == 0 &&
		    rep->msg.role != MSG_ASSISTANT)
			mp_fail(r, "reply.msg: role %s, expected "
			    "assistant", msg_role_name(rep->msg.role));
		break;
	case 1:
		wire_get_usage(r, &rep->usage, "reply.usage");
		break;
	case 2:
		if (wire_get_name(r, stop, sizeof(stop),
		    "reply.stop") == 0 &&
		    msg_stop_parse(stop, &rep->stop) == -1)
			wire_bad_name(r, "reply.stop", stop);
		break;
	}
}

int
wire_get_reply(struct mp_reader *r, struct msg_reply *rep, const char *what)
{
	static const char *const keys[] = { "msg", "usage", "stop" };
	static const struct wire_map map = {
		keys, WIRE_KEYS(keys), 0x7, wire_get_reply_member, NULL
	};

	return wire_get_map(r, &map, rep, what);
}

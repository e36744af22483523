/*
 * A node's messages: recording one (the checkpoint, with its tool calls
 * and the tokens it cost its agent), and reading them back byte for byte
 * as they were written: one row per message, one message_calls row per
 * tool call (schema v2).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <sqlite3.h>

#include "common/clock.h"
#include "store/store_int.h"

static const struct store_sql store_sql_agent_tokens = {
	SQ_AGENT_TOKENS, "UPDATE agents SET tokens_in = tokens_in + ?2,"
	    " tokens_out = tokens_out + ?3"
	    " WHERE id = (SELECT agent FROM memory_nodes WHERE id = ?1)"
};

static const struct store_sql store_sql_msg_nextseq = {
	SQ_MSG_NEXTSEQ, "SELECT coalesce(max(seq), 0) + 1 FROM messages"
	    " WHERE node = ?"
};

static const struct store_sql store_sql_msg_insert = {
	SQ_MSG_INSERT, "INSERT INTO messages (node, seq, role, text,"
	    " call_id, name, is_error, ncalls, tokens_in, tokens_out,"
	    " created_ms) VALUES (?,?,?,?,?,?,?,?,?,?,?)"
};

static const struct store_sql store_sql_call_insert = {
	SQ_CALL_INSERT, "INSERT INTO message_calls (message, idx, call_id,"
	    " name, args) VALUES (?,?,?,?,?)"
};

static const struct store_sql store_sql_msg_list = {
	SQ_MSG_LIST, "SELECT m.id, m.role, m.text, m.call_id, m.name,"
	    " m.is_error, m.ncalls, m.tokens_in, m.tokens_out,"
	    " c.idx, c.call_id, c.name, c.args"
	    " FROM messages m LEFT JOIN message_calls c ON c.message = m.id"
	    " WHERE m.node = ? ORDER BY m.seq, c.idx"
};

/* Fill m from the message columns of the current row. */
static int
store_msg_row(sqlite3_stmt *s, struct msg *m, struct msg_usage *u)
{
	const char	*role;
	int		 ok = 1;

	memset(m, 0, sizeof(*m));
	role = (const char *)sqlite3_column_text(s, 1);
	if (role == NULL || msg_role_parse(role, &m->role) == -1)
		m->role = MSG_USER;	/* unknown role: shown as the user's */
	m->text = store_col_dup(s, 2, &ok);
	m->call_id = store_col_dup(s, 3, &ok);
	m->name = store_col_dup(s, 4, &ok);
	m->is_error = sqlite3_column_int(s, 5) != 0;
	u->input = (uint64_t)sqlite3_column_int64(s, 7);
	u->output = (uint64_t)sqlite3_column_int64(s, 8);
	if (!ok) {
		msg_free(m);
		return -1;
	}
	return 0;
}

static int
store_msg_call(sqlite3_stmt *s, struct msg *m)
{
	return msg_add_call(m, (const char *)sqlite3_column_text(s, 10),
	    (const char *)sqlite3_column_text(s, 11),
	    (const char *)sqlite3_column_text(s, 12));
}

/* Append m (taken) and its usage to the outputs. */
static int
store_msg_push(struct msg_list *out, struct msg *m, struct msg_usage **usage,
    size_t *nusage, const struct msg_usage *u)
{
	struct msg_usage	*nu;

	if (usage != NULL) {
		nu = reallocarray(*usage, *nusage + 1, sizeof(*nu));
		if (nu == NULL)
			return -1;
		*usage = nu;
		nu[(*nusage)++] = *u;
	}
	if (msg_list_take(out, m) == -1) {
		if (usage != NULL)
			(*nusage)--;
		return -1;
	}
	return 0;
}

int
store_msg_load(struct store *st, int64_t node, struct msg_list *out,
    struct msg_usage **usage)
{
	sqlite3_stmt		*s;
	struct msg		 cur;
	struct msg_usage	 u;
	int64_t			 curid = 0, id;
	size_t			 nusage = 0;
	int			 rc, have = 0, ok = 1;

	if (usage != NULL)
		*usage = NULL;
	if (store_check_owner(st) == -1 ||
	    (s = store_stmt(st, &store_sql_msg_list)) == NULL)
		return -1;
	sqlite3_bind_int64(s, 1, node);
	while (ok && (rc = sqlite3_step(s)) == SQLITE_ROW) {
		id = sqlite3_column_int64(s, 0);
		if (!have || id != curid) {
			if (have && store_msg_push(out, &cur, usage, &nusage,
			    &u) == -1) {
				ok = 0;
				break;
			}
			have = 0;
			if (store_msg_row(s, &cur, &u) == -1) {
				ok = 0;
				break;
			}
			have = 1;
			curid = id;
		}
		if (sqlite3_column_type(s, 9) != SQLITE_NULL &&
		    store_msg_call(s, &cur) == -1)
			ok = 0;
	}
	if (ok && rc != SQLITE_DONE) {
		sqlite3_reset(s);
		if (have)
			msg_free(&cur);
		if (usage != NULL) {
			free(*usage);
			*usage = NULL;
		}
		return store_setdberr(st, rc, "reading messages");
	}
	sqlite3_reset(s);
	if (ok && have && store_msg_push(out, &cur, usage, &nusage, &u) == -1)
		ok = 0;
	if (!ok) {
		if (have)
			msg_free(&cur);
		if (usage != NULL) {
			free(*usage);
			*usage = NULL;
		}
		return store_seterr(st, STORE_ENOMEM, "reading messages: %s",
		    strerror(ENOMEM));
	}
	return 0;
}

int
store_node_messages(struct store *st, int64_t node, struct msg_list *out,
    struct msg_usage **usage)
{
	return store_msg_load(st, node, out, usage);
}

static int
store_msg_insert_calls(struct store *st, int64_t msgid, const struct msg *m)
{
	sqlite3_stmt	*s;
	size_t		 i;

	for (i = 0; i < m->ncalls; i++) {
		if ((s = store_stmt(st, &store_sql_call_insert)) == NULL)
			return -1;
		sqlite3_bind_int64(s, 1, msgid);
		sqlite3_bind_int64(s, 2, (int64_t)i);
		store_bind_text(s, 3, m->calls[i].id);
		store_bind_text(s, 4, m->calls[i].name);
		store_bind_text(s, 5, m->calls[i].args);
		if (store_exec_stmt(st, s, "recording a tool call") == -1)
			return -1;
	}
	return 0;
}

static int
store_msg_insert(struct store *st, int64_t node, const struct msg *m,
    const struct msg_usage *u)
{
	sqlite3_stmt	*s;
	int64_t		 seq = 0;
	int		 rc;

	if (store_node_exists(st, node) == -1)
		return -1;
	if ((s = store_stmt(st, &store_sql_msg_nextseq)) == NULL)
		return -1;
	sqlite3_bind_int64(s, 1, node);
	if ((rc = sqlite3_step(s)) == SQLITE_ROW)
		seq = sqlite3_column_int64(s, 0);
	sqlite3_reset(s);
	if (rc != SQLITE_ROW)
		return store_setdberr(st, rc, "numbering a message");
	if ((s = store_stmt(st, &store_sql_msg_insert)) == NULL)
		return -1;
	sqlite3_bind_int64(s, 1, node);
	sqlite3_bind_int64(s, 2, seq);
	store_bind_text(s, 3, msg_role_name(m->role));
	store_bind_text(s, 4, m->text);
	store_bind_text(s, 5, m->call_id);
	store_bind_text(s, 6, m->name);
	sqlite3_bind_int(s, 7, m->is_error != 0);
	sqlite3_bind_int64(s, 8, (int64_t)m->ncalls);
	sqlite3_bind_int64(s, 9, u != NULL ? (int64_t)u->input : 0);
	sqlite3_bind_int64(s, 10, u != NULL ? (int64_t)u->output : 0);
	sqlite3_bind_int64(s, 11, clock_wall_ms());
	if (store_exec_stmt(st, s, "recording a message") == -1)
		return -1;
	return store_msg_insert_calls(st, sqlite3_last_insert_rowid(st->db), m);
}

static int
store_msg_tokens(struct store *st, int64_t node, const struct msg_usage *u)
{
	sqlite3_stmt	*s;

	if (u == NULL || (u->input == 0 && u->output == 0))
		return 0;
	if ((s = store_stmt(st, &store_sql_agent_tokens)) == NULL)
		return -1;
	sqlite3_bind_int64(s, 1, node);
	sqlite3_bind_int64(s, 2, (int64_t)u->input);
	sqlite3_bind_int64(s, 3, (int64_t)u->output);
	return store_exec_stmt(st, s, "counting tokens");
}

/* The bytes store_sql_msg_chars counts for one message. */
static uint64_t
store_msg_chars(const struct msg *m)
{
	uint64_t	n = m->text != NULL ? strlen(m->text) : 0;
	size_t		i;

	for (i = 0; i < m->ncalls; i++)
		n += (m->calls[i].args ? strlen(m->calls[i].args) : 0) +
		    (m->calls[i].name ? strlen(m->calls[i].name) : 0);
	return n;
}

struct store_msg_op {
	struct store_op		 hdr;
	int64_t			 node;
	struct msg		 msg;
	int			 has_usage;
	struct msg_usage	 usage;
};

static int
store_msg_apply(struct store *st, struct store_op *op)
{
	struct store_msg_op	*o = (struct store_msg_op *)op;
	struct msg_usage	*u = o->has_usage ? &o->usage : NULL;
	int64_t			 node = store_real(st, o->node);
	int			 ok;

	if (store_op_begin(st) == -1)
		return -1;
	ok = store_msg_insert(st, node, &o->msg, u) == 0 &&
	    store_msg_tokens(st, node, u) == 0;
	return store_op_end(st, ok, 1 + o->msg.ncalls);
}

static void
store_msg_clear(struct store_op *op)
{
	msg_free(&((struct store_msg_op *)op)->msg);
}

static const struct store_op_type store_msg_type = {
	"recording a message", STORE_OP_ROWS, store_msg_apply, store_msg_clear
};

int
store_msg_append(struct store *st, int64_t node, const struct msg *m,
    const struct msg_usage *usage)
{
	struct store_msg_op	*o;
	uint64_t		 chars;

	if (m == NULL || (unsigned)m->role > MSG_TOOL ||
	    (m->ncalls > 0 && m->calls == NULL))
		return store_seterr(st, STORE_EINVAL, "bad message");
	if ((o = store_op_new(st, &store_msg_type, sizeof(*o))) == NULL)
		return -1;
	if (msg_copy(&o->msg, m) == -1) {
		free(o);
		return store_seterr(st, STORE_ENOMEM, "recording a message:"
		    " out of memory");
	}
	chars = store_msg_chars(m);
	o->node = node;
	o->hdr.bytes += chars + (m->call_id ? strlen(m->call_id) : 0);
	if (usage != NULL) {
		o->has_usage = 1;
		o->usage = *usage;
	}
	if (store_op_submit(st, &o->hdr) == -1)
		return -1;
	store_w_note_chars(st, node, chars);
	return 0;
}

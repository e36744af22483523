/*
 * Reading a node's messages back, byte for byte as they were written:
 * one row per message, one message_calls row per tool call (schema v2).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <sqlite3.h>

#include "store/store_int.h"

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
	    (s = store_stmt(st, SQ_MSG_LIST)) == NULL)
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

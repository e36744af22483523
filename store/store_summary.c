/*
 * Summaries of memory nodes: whether a finished agent's node needs an LLM
 * summary, the prompt that asks for one, and the summary itself (set, and
 * read back for the merge node of parallel children).
 */
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include <sqlite3.h>

#include "common/buf.h"
#include "store/store_int.h"

/* Longest transcript put in a summary request; the middle is cut. */
#define STORE_SUMMARY_PROMPT_MAX	(128u * 1024)

static const struct store_sql store_sql_node_summary = {
	SQ_NODE_SUMMARY, "UPDATE memory_nodes SET summary = ?2,"
	    " summary_kind = ?3, summary_in = ?4, summary_out = ?5"
	    " WHERE id = ?1"
};

static const struct store_sql store_sql_msg_chars = {
	SQ_MSG_CHARS, "SELECT coalesce(sum(length(CAST(m.text AS BLOB))), 0)"
	    " + coalesce((SELECT sum(length(CAST(c.args AS BLOB))"
	    " + length(CAST(c.name AS BLOB))) FROM message_calls c"
	    " JOIN messages m2 ON m2.id = c.message WHERE m2.node = ?1), 0)"
	    " FROM messages m WHERE m.node = ?1"
};

static const struct store_sql store_sql_node_info = {
	SQ_NODE_INFO, "SELECT n.summary, n.kind, n.label, a.path"
	    " FROM memory_nodes n LEFT JOIN agents a ON a.id = n.agent"
	    " WHERE n.id = ?"
};

static const char store_summary_system[] =
	"You summarise the work of one agent for the agents that come after"
	" it. Write a concise summary (at most 300 words) of what it found,"
	" decided and produced: facts, file paths, commands and their outcome,"
	" results and open problems. Leave out the steps that led nowhere."
	" Answer with the summary only.";

/* Column col (a text) of a node's store_sql_node_info row, malloc'd, or
 * NULL. */
static int
store_node_info_text(struct store *st, int64_t node, int col, char **out)
{
	sqlite3_stmt	*s;
	int		 ok = 1, rc;

	*out = NULL;
	if (store_check_owner(st) == -1 ||
	    (s = store_stmt(st, &store_sql_node_info)) == NULL)
		return -1;
	sqlite3_bind_int64(s, 1, node);
	if ((rc = sqlite3_step(s)) == SQLITE_ROW)
		*out = store_col_dup(s, col, &ok);
	sqlite3_reset(s);
	if (rc == SQLITE_DONE)
		return store_seterr(st, STORE_ENOTFOUND, "no memory node %lld",
		    (long long)node);
	if (rc != SQLITE_ROW)
		return store_setdberr(st, rc, "reading a memory node");
	if (!ok)
		return store_seterr(st, STORE_ENOMEM, "reading a memory node");
	return 0;
}

struct store_node_summary_arg {
	int64_t	  node;
	char	**summary;
};

static int
store_node_summary_on(struct store *st, void *arg)
{
	struct store_node_summary_arg	*a = arg;

	return store_node_info_text(st, store_real(st, a->node), 0,
	    a->summary);
}

int
store_node_summary(struct store *st, int64_t node, char **summary)
{
	struct store_node_summary_arg	a = { node, summary };

	/* The writer's front end knows the nodes it made (store_writer.c). */
	if (store_w_summary_of(st, node, summary) == 1)
		return 0;
	return store_call(st, store_node_summary_on, &a);
}

struct store_summary_op {
	struct store_op		 hdr;
	int64_t			 node;
	char			*summary;
	enum store_summary_kind	 kind;
	int			 has_usage;
	struct msg_usage	 usage;
};

static int
store_summary_apply(struct store *st, struct store_op *op)
{
	struct store_summary_op	*o = (struct store_summary_op *)op;
	int64_t			 node = store_real(st, o->node);
	sqlite3_stmt		*s;
	int			 ok;

	if (store_op_begin(st) == -1)
		return -1;
	ok = (s = store_stmt(st, &store_sql_node_summary)) != NULL;
	if (ok) {
		sqlite3_bind_int64(s, 1, node);
		store_bind_text(s, 2, o->summary);
		store_bind_text(s, 3, store_summary_kind_name(o->summary ?
		    o->kind : STORE_SUMMARY_NONE));
		sqlite3_bind_int64(s, 4, o->has_usage ?
		    (int64_t)o->usage.input : 0);
		sqlite3_bind_int64(s, 5, o->has_usage ?
		    (int64_t)o->usage.output : 0);
		ok = store_exec_stmt(st, s, "setting a summary") == 0;
		if (ok && sqlite3_changes(st->db) == 0) {
			st->op_done--;		/* it wrote nothing */
			ok = store_seterr(st, STORE_ENOTFOUND, "no memory node"
			    " %lld", (long long)node) == 0;
		}
	}
	return store_op_end(st, ok, 1);
}

static void
store_summary_clear(struct store_op *op)
{
	free(((struct store_summary_op *)op)->summary);
}

static const struct store_op_type store_summary_type = {
	"setting a summary", STORE_OP_ROWS, store_summary_apply,
	store_summary_clear
};

int
store_node_set_summary(struct store *st, int64_t node, const char *summary,
    enum store_summary_kind kind, const struct msg_usage *usage)
{
	struct store_summary_op	*o;

	if ((o = store_op_new(st, &store_summary_type, sizeof(*o))) == NULL)
		return -1;
	o->node = node;
	o->kind = kind;
	if (usage != NULL) {
		o->has_usage = 1;
		o->usage = *usage;
	}
	if (store_op_str(&o->hdr, &o->summary, summary) == -1)
		return store_op_nomem(st, &o->hdr);
	if (store_op_submit(st, &o->hdr) == -1)
		return -1;
	store_w_note_summary(st, node, summary);
	return 0;
}

/* Bytes of text, tool names and arguments in a node's messages. */
static int
store_transcript_chars(struct store *st, int64_t node, uint64_t *chars)
{
	sqlite3_stmt	*s;
	int		 rc;

	if ((s = store_stmt(st, &store_sql_msg_chars)) == NULL)
		return -1;
	sqlite3_bind_int64(s, 1, node);
	if ((rc = sqlite3_step(s)) == SQLITE_ROW)
		*chars = (uint64_t)sqlite3_column_int64(s, 0);
	sqlite3_reset(s);
	if (rc != SQLITE_ROW)
		return store_setdberr(st, rc, "measuring a transcript");
	return 0;
}

struct store_summary_needed_arg {
	int64_t					 node;
	const char				*result;
	const struct store_summary_policy	*policy;
};

static int
store_summary_needed_on(struct store *st, void *arg)
{
	struct store_summary_needed_arg		*a = arg;
	const struct store_summary_policy	*policy = a->policy;
	const char				*result = a->result;
	enum store_node_kind			 kind;
	uint64_t				 chars = 0;
	int64_t					 run, node;

	node = store_real(st, a->node);
	if (store_check_owner(st) == -1 ||
	    store_node_get(st, node, &run, &kind) == -1)
		return -1;
	if (policy->result_max > 0 && result != NULL &&
	    strlen(result) > policy->result_max)
		return 1;
	if (policy->transcript_max == 0)
		return 0;
	if (store_transcript_chars(st, node, &chars) == -1)
		return -1;
	return chars > policy->transcript_max;
}

int
store_summary_needed(struct store *st, int64_t node, const char *result,
    const struct store_summary_policy *policy)
{
	static const struct store_summary_policy	def = {
		STORE_SUMMARY_RESULT_MAX, STORE_SUMMARY_TRANSCRIPT_MAX
	};
	struct store_summary_needed_arg			a = { node, result,
							    policy };
	int						need;

	if (policy == NULL)
		a.policy = &def;
	/* The writer's front end knows the nodes it made (store_writer.c). */
	if (store_w_summary_known(st, node, result, a.policy, &need) == 1)
		return need;
	return store_call(st, store_summary_needed_on, &a);
}

static int	store_summary_prompt_on(struct store *, void *);

/* Append NULL-terminated pieces: cheaper than buf_addf for long text,
 * which would be formatted twice. */
int
store_cat(struct buf *b, ...)
{
	va_list		 ap;
	const char	*p;
	int		 rc = 0;

	va_start(ap, b);
	while (rc == 0 && (p = va_arg(ap, const char *)) != NULL)
		rc = buf_addstr(b, p);
	va_end(ap);
	return rc;
}

/* Render messages as plain text, one block per message. */
int
store_render(struct buf *b, const struct msg_list *l, int skip_system)
{
	const struct msg	*m;
	size_t			 i, j;
	int			 rc = 0;

	for (i = 0; rc == 0 && i < l->n; i++) {
		m = &l->v[i];
		if (skip_system && m->role == MSG_SYSTEM)
			continue;
		if (m->role == MSG_TOOL)
			rc = buf_addf(b, "[tool %s%s]\n", m->name != NULL ?
			    m->name : "?", m->is_error ? ", error" : "");
		else
			rc = buf_addf(b, "[%s]\n", msg_role_name(m->role));
		if (rc == 0 && m->text != NULL && *m->text != '\0')
			rc = store_cat(b, m->text, "\n", (char *)NULL);
		for (j = 0; rc == 0 && j < m->ncalls; j++)
			rc = store_cat(b, "-> ", m->calls[j].name != NULL ?
			    m->calls[j].name : "?", " ", m->calls[j].args != NULL ?
			    m->calls[j].args : "", "\n", (char *)NULL);
	}
	return rc;
}

/* Keep the head and the tail of a long transcript, say what was cut. */
static int
store_clip(struct buf *b, size_t max)
{
	struct buf	 o;
	size_t		 head, tail;
	char		*s;

	if (b->len <= max)
		return 0;
	head = max / 4;
	tail = max - head;
	buf_init(&o, 0);
	if (buf_add(&o, b->data, head) == -1 ||
	    buf_addf(&o, "\n[... %zu bytes left out ...]\n",
	    b->len - head - tail) == -1 ||
	    buf_add(&o, b->data + b->len - tail, tail) == -1) {
		buf_free(&o);
		return -1;
	}
	s = (char *)b->data;
	*b = o;
	free(s);
	return 0;
}

struct store_summary_prompt_arg {
	int64_t		 node;
	const char	*result;
	struct msg_list	*out;
};

int
store_summary_prompt(struct store *st, int64_t node, const char *result,
    struct msg_list *out)
{
	struct store_summary_prompt_arg	a = { node, result, out };

	return store_call(st, store_summary_prompt_on, &a);
}

static int
store_summary_prompt_on(struct store *st, void *arg)
{
	struct store_summary_prompt_arg	*a = arg;
	struct msg_list			*out = a->out;
	const char			*result = a->result;
	int64_t				 node = store_real(st, a->node);
	struct msg_list			 l;
	struct buf			 b;
	char				*label, *text;
	int				 ok = 1;

	if (store_node_info_text(st, node, 2, &label) == -1)
		return -1;
	msg_list_init(&l);
	buf_init(&b, 0);
	if (store_msg_load(st, node, &l, NULL) == -1) {
		ok = 0;
		goto out;
	}
	ok = store_cat(&b, "Task of the agent:\n", label != NULL ? label : "",
	    "\n\nTranscript:\n", (char *)NULL) == 0 &&
	    store_render(&b, &l, 1) == 0 &&
	    store_clip(&b, STORE_SUMMARY_PROMPT_MAX) == 0 &&
	    store_cat(&b, "\nIts final result:\n", result != NULL ?
	    result : "(none)", "\n", (char *)NULL) == 0 &&
	    (text = buf_cstr(&b)) != NULL &&
	    msg_list_add_text(out, MSG_SYSTEM, store_summary_system) == 0 &&
	    msg_list_add_text(out, MSG_USER, text) == 0;
	if (!ok)
		store_seterr(st, STORE_ENOMEM, "building a summary request");
out:
	msg_list_free(&l);
	buf_free(&b);
	free(label);
	return ok ? 0 : -1;
}

enum store_summary_kind
store_summary_kind_parse(const char *name)
{
	if (name != NULL && strcmp(name, "result") == 0)
		return STORE_SUMMARY_RESULT;
	if (name != NULL && strcmp(name, "llm") == 0)
		return STORE_SUMMARY_LLM;
	return STORE_SUMMARY_NONE;
}

const char *
store_summary_kind_name(enum store_summary_kind k)
{
	switch (k) {
	case STORE_SUMMARY_NONE:
		return "none";
	case STORE_SUMMARY_RESULT:
		return "result";
	case STORE_SUMMARY_LLM:
		return "llm";
	}
	return "none";
}

/*
 * The permission table: which side may send which message in which state
 * (OpenSSH monitor.c's {type, flags, handler} rows). Both ends run every
 * message they send and receive through it, so they agree on the state;
 * a message the table does not allow ends the conversation.
 */
#include <stdio.h>
#include <string.h>

#include "ipc/ipc.h"

#define S(x)		(1u << (x))
#define FROM_W		S(IPC_SIDE_WORKER)
#define FROM_S		S(IPC_SIDE_SUPERVISOR)

#define PERM_REQUEST	0x01	/* opens a request: id must be new */
#define PERM_ANSWER	0x02	/* closes the request of type .answers */
#define PERM_CLEAR	0x04	/* forgets outstanding requests */

#define KEEP		(-1)

struct perm {
	enum ipc_type	type;
	unsigned	from;		/* FROM_W, FROM_S */
	unsigned	states;		/* S(IPC_STATE_*) where it is allowed */
	int		flags;
	enum ipc_type	answers;	/* PERM_ANSWER: the request type */
	int		next;		/* state after it, or KEEP */
};

static const struct perm perm_table[] = {
	{ IPC_HELLO, FROM_W, S(IPC_STATE_NEW), 0, IPC_NONE, IPC_STATE_HELLO },
	{ IPC_START, FROM_S, S(IPC_STATE_HELLO), 0, IPC_NONE, IPC_STATE_RUN },
	{ IPC_LLM, FROM_W, S(IPC_STATE_RUN), PERM_REQUEST, IPC_NONE, KEEP },
	{ IPC_LLM_OK, FROM_S, S(IPC_STATE_RUN), PERM_ANSWER, IPC_LLM, KEEP },
	{ IPC_LLM_ERR, FROM_S, S(IPC_STATE_RUN), PERM_ANSWER, IPC_LLM, KEEP },
	{ IPC_SPAWN, FROM_W, S(IPC_STATE_RUN), PERM_REQUEST, IPC_NONE, KEEP },
	{ IPC_SPAWN_OK, FROM_S, S(IPC_STATE_RUN), PERM_ANSWER, IPC_SPAWN,
	    KEEP },
	{ IPC_SPAWN_ERR, FROM_S, S(IPC_STATE_RUN), PERM_ANSWER, IPC_SPAWN,
	    KEEP },
	{ IPC_MCP, FROM_W, S(IPC_STATE_RUN), PERM_REQUEST, IPC_NONE, KEEP },
	{ IPC_MCP_OK, FROM_S, S(IPC_STATE_RUN), PERM_ANSWER, IPC_MCP, KEEP },
	{ IPC_MCP_ERR, FROM_S, S(IPC_STATE_RUN), PERM_ANSWER, IPC_MCP, KEEP },
	/* Logs may come while the worker waits for start. */
	{ IPC_EVENT, FROM_W, S(IPC_STATE_HELLO) | S(IPC_STATE_RUN), 0,
	    IPC_NONE, KEEP },
	{ IPC_HTTP, FROM_W, S(IPC_STATE_RUN), PERM_REQUEST, IPC_NONE, KEEP },
	{ IPC_HTTP_OK, FROM_S, S(IPC_STATE_RUN), PERM_ANSWER, IPC_HTTP, KEEP },
	{ IPC_HTTP_ERR, FROM_S, S(IPC_STATE_RUN), PERM_ANSWER, IPC_HTTP,
	    KEEP },
	{ IPC_CHECKPOINT, FROM_W, S(IPC_STATE_RUN), 0, IPC_NONE, KEEP },
	/* A worker stopped by cancel may leave requests unanswered. */
	{ IPC_DONE, FROM_W, S(IPC_STATE_RUN), PERM_CLEAR, IPC_NONE,
	    IPC_STATE_DONE },
	/* Cancel may cross a done already on its way: allowed in DONE. */
	{ IPC_CANCEL, FROM_S, S(IPC_STATE_HELLO) | S(IPC_STATE_RUN) |
	    S(IPC_STATE_DONE), 0, IPC_NONE, KEEP },
};

static const char *
ipc_state_name(enum ipc_state state)
{
	switch (state) {
	case IPC_STATE_NEW:	return "new";
	case IPC_STATE_HELLO:	return "hello";
	case IPC_STATE_RUN:	return "run";
	case IPC_STATE_DONE:	return "done";
	}
	return "unknown";
}

static const char *
perm_side(enum ipc_side side)
{
	return side == IPC_SIDE_WORKER ? "worker" : "supervisor";
}

static const struct perm *
perm_find(enum ipc_type type)
{
	size_t	i;

	for (i = 0; i < sizeof(perm_table) / sizeof(perm_table[0]); i++)
		if (perm_table[i].type == type)
			return &perm_table[i];
	return NULL;
}

/* The id a request or an answer carries. */
static uint32_t
perm_id(const struct ipc_msg *m)
{
	switch (m->type) {
	case IPC_LLM:		return m->u.llm.id;
	case IPC_LLM_OK:	return m->u.llm_ok.id;
	case IPC_LLM_ERR:	return m->u.llm_err.id;
	case IPC_SPAWN:		return m->u.spawn.id;
	case IPC_SPAWN_OK:	return m->u.spawn_ok.id;
	case IPC_SPAWN_ERR:	return m->u.spawn_err.id;
	case IPC_MCP:		return m->u.mcp.id;
	case IPC_MCP_OK:	return m->u.mcp_ok.id;
	case IPC_MCP_ERR:	return m->u.mcp_err.id;
	case IPC_HTTP:		return m->u.http.id;
	case IPC_HTTP_OK:	return m->u.http_ok.id;
	case IPC_HTTP_ERR:	return m->u.http_err.id;
	case IPC_NONE:
	case IPC_HELLO:
	case IPC_START:
	case IPC_EVENT:
	case IPC_CHECKPOINT:
	case IPC_DONE:
	case IPC_CANCEL:
		break;
	}
	return 0;
}

static int
perm_request(struct ipc_peer *p, const struct ipc_msg *m)
{
	uint32_t	id = perm_id(m);
	size_t		i;

	for (i = 0; i < p->npending; i++) {
		if (p->pending[i].id == id) {
			snprintf(p->err, sizeof(p->err), "%s: request id %u "
			    "is already outstanding", ipc_type_name(m->type),
			    id);
			return -1;
		}
	}
	if (p->npending == IPC_PENDING_MAX) {
		snprintf(p->err, sizeof(p->err), "%s: more than %d requests "
		    "outstanding", ipc_type_name(m->type), IPC_PENDING_MAX);
		return -1;
	}
	p->pending[p->npending].type = m->type;
	p->pending[p->npending].id = id;
	p->npending++;
	return 0;
}

/* An answer closes its request; a part (keep) leaves it open. */
static int
perm_answer(struct ipc_peer *p, const struct ipc_msg *m, enum ipc_type req,
    int keep)
{
	uint32_t	id = perm_id(m);
	size_t		i;

	for (i = 0; i < p->npending; i++) {
		if (p->pending[i].id == id && p->pending[i].type == req) {
			if (!keep)
				p->pending[i] = p->pending[--p->npending];
			return 0;
		}
	}
	snprintf(p->err, sizeof(p->err), "%s: no %s request with id %u is "
	    "outstanding", ipc_type_name(m->type), ipc_type_name(req), id);
	return -1;
}

int
ipc_perm_check(struct ipc_peer *p, enum ipc_side from,
    const struct ipc_msg *m)
{
	const struct perm	*r;

	if ((r = perm_find(m->type)) == NULL) {
		snprintf(p->err, sizeof(p->err), "unknown message type %d",
		    (int)m->type);
		return -1;
	}
	if (!(r->from & S(from)) || !(r->states & S(p->state))) {
		snprintf(p->err, sizeof(p->err), "%s from the %s is not "
		    "permitted in state %s", ipc_type_name(m->type),
		    perm_side(from), ipc_state_name(p->state));
		return -1;
	}
	if (m->type == IPC_HELLO && m->u.hello.version != IPC_PROTOCOL_VERSION) {
		snprintf(p->err, sizeof(p->err), "hello: protocol version %u, "
		    "expected %d (warren and warren-worker are from different "
		    "builds)", m->u.hello.version, IPC_PROTOCOL_VERSION);
		return -1;
	}
	if ((r->flags & PERM_REQUEST) && perm_request(p, m) == -1)
		return -1;
	if ((r->flags & PERM_ANSWER) && perm_answer(p, m, r->answers,
	    m->type == IPC_HTTP_OK && m->u.http_ok.more) == -1)
		return -1;
	if (r->flags & PERM_CLEAR)
		p->npending = 0;
	if (r->next != KEEP)
		p->state = (enum ipc_state)r->next;
	return 0;
}

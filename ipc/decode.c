/*
 * Decoding a message, and ipc_msg_free().
 *
 * ipc_msg_decode reads "type" first, then hands the rest of the map to
 * that type's decoder: what a worker sends in decode_from_worker.c, what
 * the supervisor sends in decode_from_supervisor.c.
 *
 * Each decoder walks the rest of the top-level map: a key from its own
 * table (unknown or repeated keys fail in mp_get_key), the value with a
 * typed, bounded getter, then wire_required() for what was missing. Values
 * are copied once into the struct that owns them; on any failure the whole
 * message is freed and zeroed, so a caller never sees half a message.
 */
#include <stdlib.h>
#include <string.h>

#include "ipc/codec.h"
#include "ipc/decode_int.h"
#include "ipc/ipc.h"

static int
decode_body(struct mp_reader *r, uint32_t n, struct ipc_msg *m)
{
	switch (m->type) {
	case IPC_HELLO:		return decode_hello(r, n, &m->u.hello);
	case IPC_START:		return decode_start(r, n, &m->u.start);
	case IPC_LLM:		return decode_llm(r, n, &m->u.llm);
	case IPC_LLM_OK:	return decode_llm_ok(r, n, &m->u.llm_ok);
	case IPC_LLM_ERR:
		return decode_error(r, n, &m->u.llm_err, "llm_err");
	case IPC_SPAWN:		return decode_spawn(r, n, &m->u.spawn);
	case IPC_SPAWN_OK:	return decode_spawn_ok(r, n, &m->u.spawn_ok);
	case IPC_SPAWN_ERR:
		return decode_error(r, n, &m->u.spawn_err, "spawn_err");
	case IPC_MCP:		return decode_mcp(r, n, &m->u.mcp);
	case IPC_MCP_OK:	return decode_mcp_ok(r, n, &m->u.mcp_ok);
	case IPC_MCP_ERR:
		return decode_error(r, n, &m->u.mcp_err, "mcp_err");
	case IPC_EVENT:		return decode_event(r, n, &m->u.event);
	case IPC_CHECKPOINT:
		return decode_checkpoint(r, n, &m->u.checkpoint);
	case IPC_DONE:		return decode_done(r, n, &m->u.done);
	case IPC_CANCEL:	return decode_cancel(r, n, &m->u.cancel);
	case IPC_HTTP:		return decode_http(r, n, &m->u.http);
	case IPC_HTTP_OK:	return decode_http_ok(r, n, &m->u.http_ok);
	case IPC_HTTP_ERR:
		return decode_error(r, n, &m->u.http_err, "http_err");
	case IPC_NONE:
		break;
	}
	return -1;
}

/* "type" first, so the rest of the map can be read with its own table. */
static int
decode_type(struct mp_reader *r, struct ipc_msg *m)
{
	static const char *const keys[] = { "type" };
	uint32_t	seen = 0, t;

	if (mp_get_key(r, keys, 1, &seen, "message (first key must be "
	    "\"type\")") == -1)
		return -1;
	if (mp_get_u32(r, &t, "type") == -1)
		return -1;
	if (strcmp(ipc_type_name((enum ipc_type)t), "unknown") == 0)
		return mp_fail(r, "unknown message type %u", t);
	m->type = (enum ipc_type)t;
	return 0;
}

int
ipc_msg_decode(const void *data, size_t len, struct ipc_msg *m, char *err,
    size_t errsz)
{
	struct mp_reader	r;
	uint32_t		n;

	memset(m, 0, sizeof(*m));
	mp_reader_init(&r, data, len, err, errsz);
	if (mp_get_map(&r, &n, 16, "message") == -1)
		goto fail;
	if (n == 0) {
		mp_fail(&r, "message: empty map, no \"type\"");
		goto fail;
	}
	if (decode_type(&r, m) == -1 || decode_body(&r, n - 1, m) == -1)
		goto fail;
	mp_leave(&r);
	if (mp_end(&r) == -1)
		goto fail;
	return 0;
fail:
	ipc_msg_free(m);
	return -1;
}

static void
decode_free_error(struct ipc_error *x)
{
	free(x->code);
	free(x->message);
}

void
ipc_msg_free(struct ipc_msg *m)
{
	size_t	i;

	switch (m->type) {
	case IPC_HELLO:
		for (i = 0; i < m->u.hello.nlayers; i++)
			free(m->u.hello.layers[i]);
		break;
	case IPC_START:
		free(m->u.start.path);
		free(m->u.start.profile.name);
		free(m->u.start.profile.prompt);
		for (i = 0; i < m->u.start.profile.ntools; i++)
			free(m->u.start.profile.tools[i]);
		free(m->u.start.profile.tools);
		free(m->u.start.task);
		msg_list_free(&m->u.start.context);
		msg_list_free(&m->u.start.history);
		free(m->u.start.workspace);
		for (i = 0; i < m->u.start.ndelegates; i++)
			free(m->u.start.delegates[i]);
		for (i = 0; i < m->u.start.ndescs; i++)
			free(m->u.start.delegate_descs[i]);
		free(m->u.start.delegates);
		free(m->u.start.delegate_descs);
		free(m->u.start.schema);
		for (i = 0; i < m->u.start.nmcp_tools; i++)
			msg_tool_free(&m->u.start.mcp_tools[i]);
		free(m->u.start.mcp_tools);
		break;
	case IPC_LLM:
		msg_list_free(&m->u.llm.messages);
		for (i = 0; i < m->u.llm.ntools; i++)
			msg_tool_free(&m->u.llm.tools[i]);
		free(m->u.llm.tools);
		break;
	case IPC_LLM_OK:
		msg_reply_free(&m->u.llm_ok.reply);
		break;
	case IPC_LLM_ERR:
		decode_free_error(&m->u.llm_err);
		break;
	case IPC_SPAWN:
		free(m->u.spawn.profile);
		free(m->u.spawn.task);
		free(m->u.spawn.call_id);
		for (i = 0; i < m->u.spawn.ntools; i++)
			free(m->u.spawn.tools[i]);
		free(m->u.spawn.tools);
		break;
	case IPC_SPAWN_OK:
		free(m->u.spawn_ok.path);
		free(m->u.spawn_ok.result);
		break;
	case IPC_SPAWN_ERR:
		decode_free_error(&m->u.spawn_err);
		break;
	case IPC_MCP:
		free(m->u.mcp.server);
		free(m->u.mcp.tool);
		free(m->u.mcp.args);
		break;
	case IPC_MCP_OK:
		free(m->u.mcp_ok.text);
		break;
	case IPC_MCP_ERR:
		decode_free_error(&m->u.mcp_err);
		break;
	case IPC_EVENT:
		free(m->u.event.kind);
		free(m->u.event.text);
		free(m->u.event.tool);
		break;
	case IPC_CHECKPOINT:
		msg_list_free(&m->u.checkpoint.messages);
		break;
	case IPC_DONE:
		free(m->u.done.result);
		free(m->u.done.reason);
		break;
	case IPC_CANCEL:
		free(m->u.cancel.reason);
		break;
	case IPC_HTTP:
		free(m->u.http.wire);
		free(m->u.http.method);
		free(m->u.http.path);
		for (i = 0; i < m->u.http.nheaders; i++)
			free(m->u.http.headers[i]);
		free(m->u.http.body);
		break;
	case IPC_HTTP_OK:
		free(m->u.http_ok.content_type);
		free(m->u.http_ok.body);
		break;
	case IPC_HTTP_ERR:
		decode_free_error(&m->u.http_err);
		break;
	case IPC_NONE:
		break;
	}
	memset(m, 0, sizeof(*m));
}

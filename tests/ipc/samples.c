/* Sample messages of every type (see samples.h). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/xmalloc.h"
#include "tests/ipc/samples.h"

const enum ipc_type samples_types[] = {
	IPC_HELLO, IPC_START, IPC_LLM, IPC_LLM_OK, IPC_LLM_ERR, IPC_SPAWN,
	IPC_SPAWN_OK, IPC_SPAWN_ERR, IPC_EVENT, IPC_CHECKPOINT, IPC_MCP,
	IPC_MCP_OK, IPC_MCP_ERR, IPC_HTTP, IPC_HTTP_OK, IPC_HTTP_ERR, IPC_DONE,
	IPC_CANCEL,
};
const size_t samples_ntypes = sizeof(samples_types) / sizeof(samples_types[0]);

static void
samples_conversation(struct msg_list *l, int minimal)
{
	struct msg	m;

	msg_list_init(l);
	if (minimal)
		return;
	msg_list_add_text(l, MSG_SYSTEM, "You are an explorer.");
	msg_list_add_text(l, MSG_USER, "Find the bug in main.c, caf\xc3\xa9.");
	memset(&m, 0, sizeof(m));
	m.role = MSG_ASSISTANT;
	m.text = xstrdup("Let me look.");
	msg_add_call(&m, "call_1", "read", "{\"path\":\"main.c\"}");
	msg_add_call(&m, "call_2", "grep", "{\"pattern\":\"TODO\"}");
	msg_list_take(l, &m);
	memset(&m, 0, sizeof(m));
	m.role = MSG_TOOL;
	m.text = xstrdup("int main(void) {\n\treturn 1;\n}\n");
	m.call_id = xstrdup("call_1");
	m.name = xstrdup("read");
	msg_list_take(l, &m);
	memset(&m, 0, sizeof(m));
	m.role = MSG_TOOL;
	m.text = xstrdup("grep: bad pattern");
	m.call_id = xstrdup("call_2");
	m.name = xstrdup("grep");
	m.is_error = 1;
	msg_list_take(l, &m);
}

static void
samples_hello(struct ipc_hello *h, int minimal)
{
	static const char *const layers[] = { "rlimits", "nnp", "caps",
	    "landlock:abi7", "seccomp", "netns" };
	size_t	i;

	h->version = IPC_PROTOCOL_VERSION;
	h->pid = 4242;
	h->weaker = !minimal;
	h->nlayers = minimal ? 0 : sizeof(layers) / sizeof(layers[0]);
	for (i = 0; i < h->nlayers; i++)
		h->layers[i] = xstrdup(layers[i]);
}

static void
samples_start(struct ipc_start *s, int minimal)
{
	static const char *const tools[] = { "glob", "grep", "read", "list" };
	size_t	i;

	s->path = xstrdup(minimal ? "0" : "0.2.13");
	s->depth = minimal ? 0 : 2;
	s->profile.name = xstrdup("explore");
	s->profile.prompt = xstrdup("You explore the workspace read-only.");
	s->profile.ntools = minimal ? 0 : 4;
	s->profile.tools = s->profile.ntools ?
	    xcalloc(s->profile.ntools, sizeof(char *)) : NULL;
	for (i = 0; i < s->profile.ntools; i++)
		s->profile.tools[i] = xstrdup(tools[i]);
	s->task = xstrdup("Find where the config file is parsed.");
	samples_conversation(&s->context, minimal);
	/* A resumed agent's own messages; a fresh start has none. */
	if (!minimal)
		samples_conversation(&s->history, 0);
	s->limits.max_iterations = 50;
	s->limits.timeout_ms = 600000;
	s->limits.context_tokens = 32000;
	s->limits.loop_threshold = 3;
	s->limits.max_output_bytes = 65536;
	s->workspace = xstrdup("/home/user/project");
	/* The profiles its delegate may name (v4). */
	if (!minimal) {
		s->ndelegates = s->ndescs = 2;
		s->delegates = xcalloc(2, sizeof(char *));
		s->delegate_descs = xcalloc(2, sizeof(char *));
		s->delegates[0] = xstrdup("explore");
		s->delegate_descs[0] = xstrdup("Find things, read-only");
		s->delegates[1] = xstrdup("scout");
		s->delegate_descs[1] = xstrdup("");
		/* A root's output schema (v5). */
		s->schema = xstrdup("{\"type\":\"object\",\"required\":"
		    "[\"n\"]}");
		/* An MCP server's tools (v6). */
		s->nmcp_tools = 1;
		s->mcp_tools = xcalloc(1, sizeof(*s->mcp_tools));
		s->mcp_tools[0].name = xstrdup("mcp__fs__read_text_file");
		s->mcp_tools[0].description = xstrdup("Read a file.");
		s->mcp_tools[0].schema = xstrdup("{\"type\":\"object\"}");
	}
}

static void
samples_llm(struct ipc_llm *l, int minimal)
{
	l->id = 7;
	l->step = 3;
	l->purpose = minimal ? IPC_PURPOSE_TURN : IPC_PURPOSE_SUMMARY;
	samples_conversation(&l->messages, minimal);
	if (minimal)
		return;
	l->ntools = 2;
	l->tools = xcalloc(2, sizeof(*l->tools));
	l->tools[0].name = xstrdup("read");
	l->tools[0].description = xstrdup("Read a file of the workspace.");
	l->tools[0].schema = xstrdup("{\"type\":\"object\",\"properties\":"
	    "{\"path\":{\"type\":\"string\"}},\"required\":[\"path\"]}");
	l->tools[1].name = xstrdup("complete");
	l->tools[1].description = xstrdup("Finish with a result.");
	l->tools[1].schema = xstrdup("{\"type\":\"object\"}");
}

static void
samples_llm_ok(struct ipc_llm_ok *o, int minimal)
{
	o->id = 7;
	o->reply.msg.role = MSG_ASSISTANT;
	o->reply.usage.input = 1200;
	o->reply.usage.output = minimal ? 0 : 5000000000ull;
	o->reply.stop = minimal ? MSG_STOP_END : MSG_STOP_TOOL_CALLS;
	if (minimal)
		return;
	o->reply.msg.text = xstrdup("Reading the file.");
	msg_add_call(&o->reply.msg, "c1", "read", "{\"path\":\"a.c\"}");
}

void
samples_msg(struct ipc_msg *m, enum ipc_type type, int minimal)
{
	memset(m, 0, sizeof(*m));
	m->type = type;
	switch (type) {
	case IPC_HELLO:
		samples_hello(&m->u.hello, minimal);
		break;
	case IPC_START:
		samples_start(&m->u.start, minimal);
		break;
	case IPC_LLM:
		samples_llm(&m->u.llm, minimal);
		break;
	case IPC_LLM_OK:
		samples_llm_ok(&m->u.llm_ok, minimal);
		break;
	case IPC_LLM_ERR:
		m->u.llm_err.id = 7;
		m->u.llm_err.code = xstrdup(IPC_ERR_ENDPOINT);
		m->u.llm_err.message = xstrdup(minimal ? "" :
		    "HTTP 503 from 127.0.0.1:8080 after 3 tries");
		break;
	case IPC_SPAWN:
		m->u.spawn.id = 8;
		m->u.spawn.profile = xstrdup("explore");
		m->u.spawn.task = xstrdup("List the tests.");
		m->u.spawn.inherit_context = !minimal;
		m->u.spawn.call_id = xstrdup(minimal ? "" : "toolu_01Xy");
		if (!minimal) {
			m->u.spawn.filtered = 1;
			m->u.spawn.ntools = 2;
			m->u.spawn.tools = xcalloc(2, sizeof(char *));
			m->u.spawn.tools[0] = xstrdup("read");
			m->u.spawn.tools[1] = xstrdup("grep");
		}
		break;
	case IPC_SPAWN_OK:
		m->u.spawn_ok.id = 8;
		m->u.spawn_ok.path = xstrdup("0.2.13.1");
		m->u.spawn_ok.result = xstrdup("tests/ holds 12 files.");
		m->u.spawn_ok.usage.input = 300;
		m->u.spawn_ok.usage.output = 40;
		break;
	case IPC_SPAWN_ERR:
		m->u.spawn_err.id = 8;
		m->u.spawn_err.code = xstrdup(IPC_ERR_MAX_AGENTS);
		m->u.spawn_err.message = xstrdup("max agents 10 reached: "
		    "finish the work yourself");
		break;
	case IPC_EVENT:
		m->u.event.kind = xstrdup(minimal ? "note" : "log");
		m->u.event.text = xstrdup("worker ready \x1b[31mred\x1b[0m");
		if (minimal)
			break;
		m->u.event.tool = xstrdup("bash");
		m->u.event.has_level = 1;
		m->u.event.level = 2;
		break;
	case IPC_CHECKPOINT:
		m->u.checkpoint.seq = 4;
		samples_conversation(&m->u.checkpoint.messages, minimal);
		break;
	case IPC_DONE:
		m->u.done.status = minimal ? IPC_STATUS_COMPLETE :
		    IPC_STATUS_AUTO_COMPLETE;
		m->u.done.result = xstrdup("The parser is in config.c.");
		m->u.done.usage.input = 5000;
		m->u.done.usage.output = 600;
		m->u.done.iterations = 9;
		if (!minimal)
			m->u.done.reason = xstrdup("two turns without a tool "
			    "call");
		break;
	case IPC_MCP:
		m->u.mcp.id = 9;
		m->u.mcp.server = xstrdup("fs");
		m->u.mcp.tool = xstrdup("read_text_file");
		m->u.mcp.args = xstrdup(minimal ? "{}" :
		    "{\"path\":\"notes.txt\"}");
		break;
	case IPC_MCP_OK:
		m->u.mcp_ok.id = 9;
		m->u.mcp_ok.text = xstrdup(minimal ? "" : "hello \x1b[1m");
		m->u.mcp_ok.is_error = !minimal;
		break;
	case IPC_MCP_ERR:
		m->u.mcp_err.id = 9;
		m->u.mcp_err.code = xstrdup(IPC_ERR_TIMEOUT);
		m->u.mcp_err.message = xstrdup("MCP server fs did not answer "
		    "within 60000 ms");
		break;
	case IPC_CANCEL:
		m->u.cancel.reason = xstrdup("interrupted by the user");
		break;
	case IPC_HTTP:
		m->u.http.id = 9;
		m->u.http.wire = xstrdup(minimal ? "openai" : "anthropic");
		m->u.http.method = xstrdup("POST");
		m->u.http.path = xstrdup(minimal ? "/v1/chat/completions" :
		    "/v1/messages");
		m->u.http.body = xstrdup(minimal ? "" : "{\"model\":\"m\","
		    "\"max_tokens\":64,\"stream\":true}");
		if (minimal)
			break;
		m->u.http.nheaders = 2;
		m->u.http.headers[0] = xstrdup("content-type: application/json");
		m->u.http.headers[1] = xstrdup("anthropic-version: 2023-06-01");
		break;
	case IPC_HTTP_OK:
		m->u.http_ok.id = 9;
		m->u.http_ok.status = minimal ? 400 : 200;
		m->u.http_ok.content_type = xstrdup(minimal ? "" :
		    "text/event-stream");
		m->u.http_ok.body = xstrdup(minimal ? "" : "event: message_stop\n"
		    "data: {\"type\":\"message_stop\"}\n\n");
		m->u.http_ok.more = !minimal;
		break;
	case IPC_HTTP_ERR:
		m->u.http_err.id = 9;
		m->u.http_err.code = xstrdup(IPC_ERR_BUDGET);
		m->u.http_err.message = xstrdup("token budget 1000 spent");
		break;
	case IPC_NONE:
		break;
	}
}

void
samples_frame(struct buf *out, enum ipc_type type, int minimal)
{
	struct ipc_msg	m;
	char		err[IPC_ERR_LEN];

	buf_reset(out);
	samples_msg(&m, type, minimal);
	if (ipc_msg_frame(out, &m, err, sizeof(err)) == -1) {
		fprintf(stderr, "samples_frame %s: %s\n", ipc_type_name(type),
		    err);
		abort();
	}
	ipc_msg_free(&m);
}

/*
 * The IPC codec: every message round-trips; malformed input of every kind
 * gets a clear error and never a crash; a deterministic mutation pass (bit
 * flips at every position, every truncation) over a frame of every type.
 * Bad frames are built with msgpack-c's own packer, an encoder independent
 * of ours, which also checks that both speak the same msgpack.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>
#include <msgpack.h>

#include "common/buf.h"
#include "ipc/codec.h"
#include "ipc/ipc.h"
#include "ipc/ipc_testapi.h"
#include "ipc/mp.h"
#include "tests/ipc/samples.h"

static void
pk_str(msgpack_packer *pk, const char *s)
{
	msgpack_pack_str(pk, strlen(s));
	msgpack_pack_str_body(pk, s, strlen(s));
}

/* Decode sb; on failure, check that the error mentions want. */
static void
expect_fail(const msgpack_sbuffer *sb, const char *want)
{
	struct ipc_msg	m;
	char		err[IPC_ERR_LEN];

	if (ipc_msg_decode(sb->data, sb->size, &m, err, sizeof(err)) == 0)
		fail_msg("decoded, expected an error with \"%s\"", want);
	if (strstr(err, want) == NULL)
		fail_msg("error \"%s\" does not mention \"%s\"", err, want);
	assert_int_equal(m.type, IPC_NONE);
}

/* Decode, re-encode: byte-identical (encoding is deterministic). */
static void
roundtrip(enum ipc_type type, int minimal)
{
	struct buf	a, b;
	struct ipc_msg	m, d;
	char		err[IPC_ERR_LEN], line[IPC_DESCRIBE_LEN];

	buf_init(&a, 0);
	buf_init(&b, 0);
	samples_msg(&m, type, minimal);
	if (ipc_msg_encode(&a, &m, err, sizeof(err)) == -1)
		fail_msg("encode %s: %s", ipc_type_name(type), err);
	if (ipc_msg_decode(buf_head(&a), buf_left(&a), &d, err,
	    sizeof(err)) == -1)
		fail_msg("decode %s: %s", ipc_type_name(type), err);
	assert_int_equal(d.type, type);
	assert_int_equal(ipc_msg_encode(&b, &d, err, sizeof(err)), 0);
	assert_int_equal(buf_left(&a), buf_left(&b));
	assert_memory_equal(buf_head(&a), buf_head(&b), buf_left(&a));
	assert_true(ipc_msg_describe(&d, line, sizeof(line)) > 0);
	assert_true(strncmp(line, ipc_type_name(type),
	    strlen(ipc_type_name(type))) == 0);
	ipc_msg_free(&m);
	ipc_msg_free(&d);
	buf_free(&a);
	buf_free(&b);
}

static void
test_roundtrip_all(void **state)
{
	size_t	i;

	(void)state;
	for (i = 0; i < samples_ntypes; i++) {
		roundtrip(samples_types[i], 0);
		roundtrip(samples_types[i], 1);
	}
}

/* Spot checks that decoded values are the ones sent, field by field. */
static void
test_roundtrip_fields(void **state)
{
	struct buf	b;
	struct ipc_msg	m;
	char		err[IPC_ERR_LEN];

	(void)state;
	buf_init(&b, 0);
	samples_msg(&m, IPC_START, 0);
	assert_int_equal(ipc_msg_encode(&b, &m, err, sizeof(err)), 0);
	ipc_msg_free(&m);
	assert_int_equal(ipc_msg_decode(buf_head(&b), buf_left(&b), &m, err,
	    sizeof(err)), 0);
	assert_string_equal(m.u.start.path, "0.2.13");
	assert_int_equal(m.u.start.depth, 2);
	assert_string_equal(m.u.start.profile.name, "explore");
	assert_int_equal(m.u.start.profile.ntools, 4);
	assert_string_equal(m.u.start.profile.tools[3], "list");
	assert_int_equal(m.u.start.ndelegates, 2);
	assert_int_equal(m.u.start.ndescs, 2);
	assert_string_equal(m.u.start.delegates[1], "scout");
	assert_string_equal(m.u.start.delegate_descs[0],
	    "Find things, read-only");
	assert_int_equal(m.u.start.context.n, 5);
	assert_int_equal(m.u.start.context.v[2].role, MSG_ASSISTANT);
	assert_int_equal(m.u.start.context.v[2].ncalls, 2);
	assert_string_equal(m.u.start.context.v[2].calls[1].args,
	    "{\"pattern\":\"TODO\"}");
	assert_int_equal(m.u.start.context.v[4].is_error, 1);
	assert_string_equal(m.u.start.context.v[4].call_id, "call_2");
	assert_int_equal(m.u.start.limits.timeout_ms, 600000);
	assert_int_equal(m.u.start.limits.max_output_bytes, 65536);
	assert_string_equal(m.u.start.workspace, "/home/user/project");
	assert_string_equal(m.u.start.schema,
	    "{\"type\":\"object\",\"required\":[\"n\"]}");
	assert_int_equal(m.u.start.history.n, 5);
	assert_string_equal(m.u.start.history.v[4].call_id, "call_2");
	ipc_msg_free(&m);

	/* A fresh start: an empty history. */
	buf_reset(&b);
	samples_msg(&m, IPC_START, 1);
	assert_int_equal(ipc_msg_encode(&b, &m, err, sizeof(err)), 0);
	ipc_msg_free(&m);
	assert_int_equal(ipc_msg_decode(buf_head(&b), buf_left(&b), &m, err,
	    sizeof(err)), 0);
	assert_int_equal(m.u.start.history.n, 0);
	assert_null(m.u.start.schema);		/* not a root with one */
	ipc_msg_free(&m);

	/* spawn carries the delegate call's id (resume matches by it). */
	buf_reset(&b);
	samples_msg(&m, IPC_SPAWN, 0);
	assert_int_equal(ipc_msg_encode(&b, &m, err, sizeof(err)), 0);
	ipc_msg_free(&m);
	assert_int_equal(ipc_msg_decode(buf_head(&b), buf_left(&b), &m, err,
	    sizeof(err)), 0);
	assert_string_equal(m.u.spawn.call_id, "toolu_01Xy");
	/* and its tool_filter, when the call had one */
	assert_true(m.u.spawn.filtered);
	assert_int_equal(m.u.spawn.ntools, 2);
	assert_string_equal(m.u.spawn.tools[1], "grep");
	ipc_msg_free(&m);
	buf_reset(&b);
	samples_msg(&m, IPC_SPAWN, 1);
	assert_int_equal(ipc_msg_encode(&b, &m, err, sizeof(err)), 0);
	ipc_msg_free(&m);
	assert_int_equal(ipc_msg_decode(buf_head(&b), buf_left(&b), &m, err,
	    sizeof(err)), 0);
	assert_false(m.u.spawn.filtered);
	ipc_msg_free(&m);

	buf_reset(&b);
	samples_msg(&m, IPC_LLM_OK, 0);
	assert_int_equal(ipc_msg_encode(&b, &m, err, sizeof(err)), 0);
	ipc_msg_free(&m);
	assert_int_equal(ipc_msg_decode(buf_head(&b), buf_left(&b), &m, err,
	    sizeof(err)), 0);
	assert_int_equal(m.u.llm_ok.reply.usage.output, 5000000000ull);
	assert_int_equal(m.u.llm_ok.reply.stop, MSG_STOP_TOOL_CALLS);
	assert_string_equal(m.u.llm_ok.reply.msg.calls[0].name, "read");
	ipc_msg_free(&m);
	buf_free(&b);
}

/* msgpack-c reads what we write: the same map, key by key. */
static void
test_msgpack_c_reads_ours(void **state)
{
	struct buf		b;
	struct ipc_msg		m;
	msgpack_unpacked	u;
	msgpack_object_kv	*kv;
	char			err[IPC_ERR_LEN];
	size_t			off = 0;

	(void)state;
	buf_init(&b, 0);
	samples_msg(&m, IPC_SPAWN, 0);
	assert_int_equal(ipc_msg_encode(&b, &m, err, sizeof(err)), 0);
	ipc_msg_free(&m);
	msgpack_unpacked_init(&u);
	assert_int_equal(msgpack_unpack_next(&u, (const char *)buf_head(&b),
	    buf_left(&b), &off), MSGPACK_UNPACK_SUCCESS);
	assert_int_equal(off, buf_left(&b));
	assert_int_equal(u.data.type, MSGPACK_OBJECT_MAP);
	assert_int_equal(u.data.via.map.size, 7);	/* tool_filter too */
	kv = u.data.via.map.ptr;
	assert_memory_equal(kv[0].key.via.str.ptr, "type", 4);
	assert_int_equal(kv[0].val.via.u64, IPC_SPAWN);
	assert_memory_equal(kv[2].key.via.str.ptr, "profile", 7);
	assert_memory_equal(kv[2].val.via.str.ptr, "explore", 7);
	assert_int_equal(kv[4].val.type, MSGPACK_OBJECT_BOOLEAN);
	assert_memory_equal(kv[5].key.via.str.ptr, "call_id", 7);
	assert_memory_equal(kv[5].val.via.str.ptr, "toolu_01Xy", 10);
	assert_memory_equal(kv[6].key.via.str.ptr, "tool_filter", 11);
	assert_int_equal(kv[6].val.type, MSGPACK_OBJECT_ARRAY);
	assert_int_equal(kv[6].val.via.array.size, 2);
	msgpack_unpacked_destroy(&u);
	buf_free(&b);
}

/* We read what msgpack-c writes, including wider integer encodings. */
static void
test_ours_reads_msgpack_c(void **state)
{
	msgpack_sbuffer	sb;
	msgpack_packer	pk;
	struct ipc_msg	m;
	char		err[IPC_ERR_LEN];

	(void)state;
	msgpack_sbuffer_init(&sb);
	msgpack_packer_init(&pk, &sb, msgpack_sbuffer_write);
	msgpack_pack_map(&pk, 4);
	pk_str(&pk, "type");
	msgpack_pack_int64(&pk, IPC_SPAWN_ERR);	/* int64 0xd3, positive */
	pk_str(&pk, "message");
	pk_str(&pk, "no");
	pk_str(&pk, "id");
	msgpack_pack_fix_uint32(&pk, 5);	/* 0xce even though small */
	pk_str(&pk, "code");
	pk_str(&pk, "refused");
	if (ipc_msg_decode(sb.data, sb.size, &m, err, sizeof(err)) == -1)
		fail_msg("%s", err);
	assert_int_equal(m.type, IPC_SPAWN_ERR);
	assert_int_equal(m.u.spawn_err.id, 5);
	assert_string_equal(m.u.spawn_err.code, "refused");
	ipc_msg_free(&m);
	msgpack_sbuffer_destroy(&sb);
}

/* A hello with fields packed by the caller after "type". */
static void
begin(msgpack_sbuffer *sb, msgpack_packer *pk, uint32_t n, uint64_t type)
{
	msgpack_sbuffer_clear(sb);
	msgpack_pack_map(pk, n);
	pk_str(pk, "type");
	msgpack_pack_uint64(pk, type);
}

static void
hello_fields(msgpack_packer *pk, int skip)
{
	if (skip != 0) {
		pk_str(pk, "version");
		msgpack_pack_uint32(pk, IPC_PROTOCOL_VERSION);
	}
	if (skip != 1) {
		pk_str(pk, "pid");
		msgpack_pack_uint32(pk, 1);
	}
	if (skip != 2) {
		pk_str(pk, "layers");
		msgpack_pack_array(pk, 1);
		pk_str(pk, "nnp");
	}
	if (skip != 3) {
		pk_str(pk, "weaker");
		msgpack_pack_false(pk);
	}
}

/* An http request (v7) with one header line and path; skip names a key
 * left out. */
static void
http_msg(msgpack_sbuffer *sb, msgpack_packer *pk, const char *wire,
    const char *method, const char *path, const char *header)
{
	begin(sb, pk, 7, IPC_HTTP);
	pk_str(pk, "id");
	msgpack_pack_uint32(pk, 3);
	pk_str(pk, "wire");
	pk_str(pk, wire);
	pk_str(pk, "method");
	pk_str(pk, method);
	pk_str(pk, "path");
	pk_str(pk, path);
	pk_str(pk, "headers");
	msgpack_pack_array(pk, 1);
	pk_str(pk, header);
	pk_str(pk, "body");
	pk_str(pk, "{}");
}

/*
 * What a backend's worker may ask to be passed through, checked by the
 * decoder: only the wire's paths, only POST, only the headers that shape
 * the answer (never one that could carry a key of its own), an answer's
 * status in range.
 */
static void
test_http_strict(void **state)
{
	msgpack_sbuffer	sb;
	msgpack_packer	pk;
	struct ipc_msg	m;
	char		err[IPC_ERR_LEN];

	(void)state;
	msgpack_sbuffer_init(&sb);
	msgpack_packer_init(&pk, &sb, msgpack_sbuffer_write);
	http_msg(&sb, &pk, "anthropic", "POST", "/v1/messages?beta=true",
	    "anthropic-beta: tools-2024");
	if (ipc_msg_decode(sb.data, sb.size, &m, err, sizeof(err)) == -1)
		fail_msg("%s", err);
	assert_string_equal(m.u.http.headers[0], "anthropic-beta: tools-2024");
	ipc_msg_free(&m);
	http_msg(&sb, &pk, "anthropic", "POST", "/v1/messages",
	    "x-api-key: sk-other");
	expect_fail(&sb, "http.headers: not a header a request may carry");
	http_msg(&sb, &pk, "openai", "POST", "/v1/chat/completions",
	    "authorization: Bearer sk-other");
	expect_fail(&sb, "http.headers: not a header");
	http_msg(&sb, &pk, "anthropic", "POST", "/v1/messages",
	    "content-type: a\r\nx-api-key: b");
	expect_fail(&sb, "http.headers: not a header");
	http_msg(&sb, &pk, "anthropic", "POST", "/v1/files",
	    "accept: */*");
	expect_fail(&sb, "http.path: not a path of wire anthropic");
	http_msg(&sb, &pk, "openai", "POST", "/v1/messages", "accept: */*");
	expect_fail(&sb, "http.path: not a path of wire openai");
	http_msg(&sb, &pk, "anthropic", "POST", "/v1/messages?x=/../a",
	    "accept: */*");
	expect_fail(&sb, "http.path: not a path of wire anthropic");
	http_msg(&sb, &pk, "anthropic", "GET", "/v1/messages", "accept: */*");
	expect_fail(&sb, "http.method: only POST");
	http_msg(&sb, &pk, "gemini", "POST", "/v1/messages", "accept: */*");
	expect_fail(&sb, "http.wire: expected anthropic, responses or openai");
	begin(&sb, &pk, 5, IPC_HTTP_OK);
	pk_str(&pk, "id");
	msgpack_pack_uint32(&pk, 3);
	pk_str(&pk, "status");
	msgpack_pack_uint32(&pk, 99);
	pk_str(&pk, "content_type");
	pk_str(&pk, "");
	pk_str(&pk, "body");
	pk_str(&pk, "");
	expect_fail(&sb, "http_ok.status: 99 is not an HTTP status");
	/* more is true or absent: one message, one encoding. */
	begin(&sb, &pk, 6, IPC_HTTP_OK);
	pk_str(&pk, "id");
	msgpack_pack_uint32(&pk, 3);
	pk_str(&pk, "status");
	msgpack_pack_uint32(&pk, 200);
	pk_str(&pk, "content_type");
	pk_str(&pk, "text/event-stream");
	pk_str(&pk, "body");
	pk_str(&pk, "data: {}\n\n");
	pk_str(&pk, "more");
	msgpack_pack_false(&pk);
	expect_fail(&sb, "http_ok.more: false is left out");
	msgpack_sbuffer_destroy(&sb);
}

static void
test_malformed_maps(void **state)
{
	msgpack_sbuffer	sb;
	msgpack_packer	pk;
	int		i;

	(void)state;
	msgpack_sbuffer_init(&sb);
	msgpack_packer_init(&pk, &sb, msgpack_sbuffer_write);

	/* The reference hello decodes. */
	begin(&sb, &pk, 5, IPC_HELLO);
	hello_fields(&pk, -1);
	{
		struct ipc_msg	m;
		char		err[IPC_ERR_LEN];

		assert_int_equal(ipc_msg_decode(sb.data, sb.size, &m, err,
		    sizeof(err)), 0);
		ipc_msg_free(&m);
	}
	/* Each missing key is named. */
	begin(&sb, &pk, 4, IPC_HELLO);
	hello_fields(&pk, 1);
	expect_fail(&sb, "missing key \"pid\"");
	begin(&sb, &pk, 4, IPC_HELLO);
	hello_fields(&pk, 3);
	expect_fail(&sb, "missing key \"weaker\"");
	/* Unknown key, escaped. */
	begin(&sb, &pk, 6, IPC_HELLO);
	hello_fields(&pk, -1);
	pk_str(&pk, "ex\x1btra");
	msgpack_pack_nil(&pk);
	expect_fail(&sb, "unknown key \"ex\\x1btra\"");
	/* Duplicate key. */
	begin(&sb, &pk, 6, IPC_HELLO);
	hello_fields(&pk, -1);
	pk_str(&pk, "pid");
	msgpack_pack_uint32(&pk, 2);
	expect_fail(&sb, "duplicate key \"pid\"");
	/* Wrong types. */
	begin(&sb, &pk, 5, IPC_HELLO);
	hello_fields(&pk, 0);
	pk_str(&pk, "version");
	pk_str(&pk, "1");
	expect_fail(&sb, "hello.version: expected integer, got string");
	begin(&sb, &pk, 5, IPC_HELLO);
	hello_fields(&pk, 3);
	pk_str(&pk, "weaker");
	msgpack_pack_int(&pk, 1);
	expect_fail(&sb, "hello.weaker: expected boolean, got integer");
	begin(&sb, &pk, 5, IPC_HELLO);
	hello_fields(&pk, 1);
	pk_str(&pk, "pid");
	msgpack_pack_int(&pk, -5);
	expect_fail(&sb, "hello.pid: negative");
	begin(&sb, &pk, 5, IPC_HELLO);
	hello_fields(&pk, 1);
	pk_str(&pk, "pid");
	msgpack_pack_uint64(&pk, 1ull << 32);
	expect_fail(&sb, "does not fit 32 bits");
	begin(&sb, &pk, 5, IPC_HELLO);
	hello_fields(&pk, 1);
	pk_str(&pk, "pid");
	msgpack_pack_double(&pk, 1.0);
	expect_fail(&sb, "expected integer, got float");
	/* Layers: too many, too long, not a token. */
	begin(&sb, &pk, 5, IPC_HELLO);
	hello_fields(&pk, 2);
	pk_str(&pk, "layers");
	msgpack_pack_array(&pk, 17);
	for (i = 0; i < 17; i++)
		pk_str(&pk, "nnp");
	expect_fail(&sb, "hello.layers: 17 entries, at most 16 allowed");
	begin(&sb, &pk, 5, IPC_HELLO);
	hello_fields(&pk, 2);
	pk_str(&pk, "layers");
	msgpack_pack_array(&pk, 1);
	pk_str(&pk, "a-layer-name-that-is-much-too-long");
	expect_fail(&sb, "hello.layers: 34 bytes, at most 32 allowed");
	begin(&sb, &pk, 5, IPC_HELLO);
	hello_fields(&pk, 2);
	pk_str(&pk, "layers");
	msgpack_pack_array(&pk, 1);
	pk_str(&pk, "net ns");
	expect_fail(&sb, "hello.layers: not a name");
	/* A NUL inside a string would cut it silently. */
	begin(&sb, &pk, 5, IPC_HELLO);
	hello_fields(&pk, 2);
	pk_str(&pk, "layers");
	msgpack_pack_array(&pk, 1);
	msgpack_pack_str(&pk, 3);
	msgpack_pack_str_body(&pk, "n\0p", 3);
	expect_fail(&sb, "contains a NUL byte");
	/* Unknown type, type not first, empty map, not a map. */
	begin(&sb, &pk, 1, 999);
	expect_fail(&sb, "unknown message type 999");
	begin(&sb, &pk, 1, 0);
	expect_fail(&sb, "unknown message type 0");
	msgpack_sbuffer_clear(&sb);
	msgpack_pack_map(&pk, 2);
	pk_str(&pk, "pid");
	msgpack_pack_uint32(&pk, 1);
	pk_str(&pk, "type");
	msgpack_pack_uint32(&pk, IPC_HELLO);
	expect_fail(&sb, "first key must be \"type\"");
	msgpack_sbuffer_clear(&sb);
	msgpack_pack_map(&pk, 0);
	expect_fail(&sb, "empty map");
	msgpack_sbuffer_clear(&sb);
	msgpack_pack_array(&pk, 0);
	expect_fail(&sb, "message: expected map, got array");
	/* Trailing bytes after the map. */
	begin(&sb, &pk, 5, IPC_HELLO);
	hello_fields(&pk, -1);
	msgpack_pack_nil(&pk);
	expect_fail(&sb, "1 trailing bytes");
	/* Two whole messages in one frame. */
	begin(&sb, &pk, 5, IPC_HELLO);
	hello_fields(&pk, -1);
	msgpack_pack_map(&pk, 1);
	pk_str(&pk, "type");
	msgpack_pack_uint32(&pk, IPC_CANCEL);
	expect_fail(&sb, "trailing bytes");
	msgpack_sbuffer_destroy(&sb);
}

static void
test_malformed_values(void **state)
{
	msgpack_sbuffer	sb;
	msgpack_packer	pk;
	int		i;

	(void)state;
	msgpack_sbuffer_init(&sb);
	msgpack_packer_init(&pk, &sb, msgpack_sbuffer_write);
	/* A role the model never had. */
	begin(&sb, &pk, 3, IPC_CHECKPOINT);
	pk_str(&pk, "seq");
	msgpack_pack_uint32(&pk, 0);
	pk_str(&pk, "messages");
	msgpack_pack_array(&pk, 1);
	msgpack_pack_map(&pk, 1);
	pk_str(&pk, "role");
	pk_str(&pk, "root\x07");
	expect_fail(&sb, "unknown value \"root\\x07\"");
	/* A message without a role. */
	begin(&sb, &pk, 3, IPC_CHECKPOINT);
	pk_str(&pk, "seq");
	msgpack_pack_uint32(&pk, 0);
	pk_str(&pk, "messages");
	msgpack_pack_array(&pk, 1);
	msgpack_pack_map(&pk, 1);
	pk_str(&pk, "text");
	pk_str(&pk, "hi");
	expect_fail(&sb, "checkpoint.messages: missing key \"role\"");
	/* Deep nesting where a message map belongs. */
	begin(&sb, &pk, 3, IPC_CHECKPOINT);
	pk_str(&pk, "seq");
	msgpack_pack_uint32(&pk, 0);
	pk_str(&pk, "messages");
	for (i = 0; i < 40; i++)
		msgpack_pack_array(&pk, 1);
	msgpack_pack_nil(&pk);
	expect_fail(&sb, "checkpoint.messages: expected map, got array");
	/* An llm_ok reply that is not the assistant's. */
	begin(&sb, &pk, 3, IPC_LLM_OK);
	pk_str(&pk, "id");
	msgpack_pack_uint32(&pk, 1);
	pk_str(&pk, "reply");
	msgpack_pack_map(&pk, 3);
	pk_str(&pk, "msg");
	msgpack_pack_map(&pk, 1);
	pk_str(&pk, "role");
	pk_str(&pk, "user");
	pk_str(&pk, "usage");
	msgpack_pack_map(&pk, 2);
	pk_str(&pk, "input");
	msgpack_pack_uint32(&pk, 1);
	pk_str(&pk, "output");
	msgpack_pack_uint32(&pk, 1);
	pk_str(&pk, "stop");
	pk_str(&pk, "end");
	expect_fail(&sb, "role user, expected assistant");
	/* A log record over 8 KiB, an event level that is no level. */
	{
		char	*big = malloc(IPC_LOG_MAX + 2);

		assert_non_null(big);
		memset(big, 'x', IPC_LOG_MAX + 1);
		big[IPC_LOG_MAX + 1] = '\0';
		begin(&sb, &pk, 3, IPC_EVENT);
		pk_str(&pk, "text");
		pk_str(&pk, big);
		pk_str(&pk, "kind");
		pk_str(&pk, "log");
		expect_fail(&sb, "log record of 8193 bytes");
		free(big);
	}
	begin(&sb, &pk, 4, IPC_EVENT);
	pk_str(&pk, "kind");
	pk_str(&pk, "log");
	pk_str(&pk, "text");
	pk_str(&pk, "x");
	pk_str(&pk, "level");
	msgpack_pack_uint32(&pk, 9);
	expect_fail(&sb, "event.level: 9 is not a log level");
	/* Unknown enums. */
	begin(&sb, &pk, 5, IPC_DONE);
	pk_str(&pk, "status");
	pk_str(&pk, "exploded");
	expect_fail(&sb, "done.status: expected complete, fail");
	begin(&sb, &pk, 6, IPC_LLM);
	pk_str(&pk, "purpose");
	pk_str(&pk, "chat");
	expect_fail(&sb, "llm.purpose: expected \"turn\" or \"summary\"");
	/* A relative workspace. */
	begin(&sb, &pk, 2, IPC_START);
	pk_str(&pk, "workspace");
	pk_str(&pk, "tmp/ws");
	expect_fail(&sb, "start.workspace: not an absolute path");
	msgpack_sbuffer_destroy(&sb);
}

/* An array of n copies of s. */
static void
pk_strs(msgpack_packer *pk, uint32_t n, const char *s)
{
	uint32_t	i;

	msgpack_pack_array(pk, n);
	for (i = 0; i < n; i++)
		pk_str(pk, s);
}

/* start's "profile" key and a profile whose tools are n copies of tool. */
static void
pk_profile(msgpack_packer *pk, uint32_t n, const char *tool)
{
	pk_str(pk, "profile");
	msgpack_pack_map(pk, 3);
	pk_str(pk, "name");
	pk_str(pk, "general");
	pk_str(pk, "prompt");
	pk_str(pk, "p");
	pk_str(pk, "tools");
	pk_strs(pk, n, tool);
}

/* key and an array of n nils (a count the decoder judges first). */
static void
pk_nils(msgpack_packer *pk, const char *key, uint32_t n)
{
	uint32_t	i;

	pk_str(pk, key);
	msgpack_pack_array(pk, n);
	for (i = 0; i < n; i++)
		msgpack_pack_nil(pk);
}

/*
 * Every array of strings or tools the decoder reads holds at most 128
 * entries; an array of names holds each to the token rule and 64 bytes,
 * the delegates (strings) and their descriptions each to its length
 * (wire_get_strs, wire_get_tools).
 */
static void
test_decode_arrays(void **state)
{
	msgpack_sbuffer	sb;
	msgpack_packer	pk;
	char		long_str[IPC_CALLSTR_MAX + 2];

	(void)state;
	msgpack_sbuffer_init(&sb);
	msgpack_packer_init(&pk, &sb, msgpack_sbuffer_write);
	memset(long_str, 'a', sizeof(long_str) - 1);
	long_str[sizeof(long_str) - 1] = '\0';

	begin(&sb, &pk, 2, IPC_START);
	pk_profile(&pk, IPC_TOOLS_MAX + 1, "read");
	expect_fail(&sb, "start.profile.tools: 129 entries, at most 128 "
	    "allowed");
	begin(&sb, &pk, 2, IPC_START);
	pk_profile(&pk, 1, "not a name");
	expect_fail(&sb, "start.profile.tools: not a name");
	long_str[IPC_NAME_MAX + 1] = '\0';
	begin(&sb, &pk, 2, IPC_START);
	pk_profile(&pk, 1, long_str);
	expect_fail(&sb, "start.profile.tools: 65 bytes, at most 64 allowed");

	begin(&sb, &pk, 2, IPC_SPAWN);
	pk_str(&pk, "tool_filter");
	pk_strs(&pk, IPC_TOOLS_MAX + 1, "read");
	expect_fail(&sb, "spawn.tool_filter: 129 entries, at most 128 "
	    "allowed");
	begin(&sb, &pk, 2, IPC_SPAWN);
	pk_str(&pk, "tool_filter");
	pk_strs(&pk, 1, "not a name");
	expect_fail(&sb, "spawn.tool_filter: not a name");

	begin(&sb, &pk, 2, IPC_START);
	pk_str(&pk, "delegates");
	pk_strs(&pk, IPC_TOOLS_MAX + 1, "explore");
	expect_fail(&sb, "start.delegates: 129 entries, at most 128 allowed");
	begin(&sb, &pk, 2, IPC_START);
	pk_str(&pk, "delegates");
	pk_strs(&pk, 1, long_str);
	expect_fail(&sb, "start.delegates: 65 bytes, at most 64 allowed");
	/* Strings, not names: the message fails only for what it lacks. */
	begin(&sb, &pk, 3, IPC_START);
	pk_str(&pk, "delegates");
	pk_strs(&pk, 1, "not a name");
	pk_str(&pk, "delegate_descs");
	pk_strs(&pk, 1, "Explores the code.");
	expect_fail(&sb, "start: missing key \"path\"");
	long_str[IPC_NAME_MAX + 1] = 'a';
	begin(&sb, &pk, 2, IPC_START);
	pk_str(&pk, "delegate_descs");
	pk_strs(&pk, 1, long_str);
	expect_fail(&sb, "start.delegate_descs: 1025 bytes, at most 1024 "
	    "allowed");

	begin(&sb, &pk, 2, IPC_START);
	pk_nils(&pk, "mcp_tools", IPC_TOOLS_MAX + 1);
	expect_fail(&sb, "start.mcp_tools: 129 entries, at most 128 allowed");
	begin(&sb, &pk, 2, IPC_LLM);
	pk_nils(&pk, "tools", IPC_TOOLS_MAX + 1);
	expect_fail(&sb, "llm.tools: 129 entries, at most 128 allowed");
	msgpack_sbuffer_destroy(&sb);
}

/* Declared sizes far beyond the frame: refused before any allocation. */
static void
test_huge_declared(void **state)
{
	struct ipc_msg	m;
	char		err[IPC_ERR_LEN];
	/* {type: checkpoint, seq: 0, messages: array32(0xffffffff)} */
	static const unsigned char arr[] = { 0x83, 0xa4, 't', 'y', 'p', 'e',
	    0xcd, 0x00, 0xcf, 0xa3, 's', 'e', 'q', 0x00, 0xa8, 'm', 'e', 's',
	    's', 'a', 'g', 'e', 's', 0xdd, 0xff, 0xff, 0xff, 0xff };
	/* The same with 4000 messages declared in 28 bytes. */
	static const unsigned char arr2[] = { 0x83, 0xa4, 't', 'y', 'p', 'e',
	    0xcd, 0x00, 0xcf, 0xa3, 's', 'e', 'q', 0x00, 0xa8, 'm', 'e', 's',
	    's', 'a', 'g', 'e', 's', 0xdc, 0x0f, 0xa0, 0x90 };
	/* {type: cancel, reason: str32(0xffffffff)} */
	static const unsigned char str[] = { 0x82, 0xa4, 't', 'y', 'p', 'e',
	    0xcd, 0x01, 0x2d, 0xa6, 'r', 'e', 'a', 's', 'o', 'n', 0xdb, 0xff,
	    0xff, 0xff, 0xff, 'x' };
	/* {type: done, result: str32 of 1 MiB declared, 1 byte there} */
	static const unsigned char str2[] = { 0x82, 0xa4, 't', 'y', 'p', 'e',
	    0xcd, 0x01, 0x2c, 0xa6, 'r', 'e', 's', 'u', 'l', 't', 0xdb, 0x00,
	    0x10, 0x00, 0x00, 'x' };
	/* map32 of 2^32-1 entries at the top. */
	static const unsigned char map[] = { 0xdf, 0xff, 0xff, 0xff, 0xff };

	(void)state;
	assert_int_equal(ipc_msg_decode(arr, sizeof(arr), &m, err,
	    sizeof(err)), -1);
	assert_non_null(strstr(err, "4294967295 entries, at most 4096"));
	assert_int_equal(ipc_msg_decode(arr2, sizeof(arr2), &m, err,
	    sizeof(err)), -1);
	assert_non_null(strstr(err, "4000 entries declared, only 1 bytes"));
	assert_int_equal(ipc_msg_decode(str, sizeof(str), &m, err,
	    sizeof(err)), -1);
	assert_non_null(strstr(err, "cancel.reason: 4294967295 bytes, at "
	    "most"));
	assert_int_equal(ipc_msg_decode(str2, sizeof(str2), &m, err,
	    sizeof(err)), -1);
	assert_non_null(strstr(err, "1048576 bytes declared, only 1 left"));
	assert_int_equal(ipc_msg_decode(map, sizeof(map), &m, err,
	    sizeof(err)), -1);
	assert_non_null(strstr(err, "at most 16 allowed"));
	assert_int_equal(ipc_msg_decode(map, 0, &m, err, sizeof(err)), -1);
	assert_non_null(strstr(err, "truncated"));
}

/* The reader's own nesting cap, below what any message needs. */
static void
test_reader_depth(void **state)
{
	struct mp_reader	r;
	unsigned char		deep[40];
	char			err[IPC_ERR_LEN];
	uint32_t		n;
	int			i;

	(void)state;
	memset(deep, 0x91, sizeof(deep));	/* [[[[...]]]] */
	mp_reader_init(&r, deep, sizeof(deep), err, sizeof(err));
	for (i = 0; i < IPC_DEPTH_MAX; i++)
		assert_int_equal(mp_get_array(&r, &n, 1, "deep"), 0);
	assert_int_equal(mp_get_array(&r, &n, 1, "deep"), -1);
	assert_string_equal(err, "deep: nested deeper than 16");
	/* The first error sticks. */
	assert_int_equal(mp_get_u32(&r, &n, "next"), -1);
	assert_string_equal(err, "deep: nested deeper than 16");
	assert_int_equal(mp_end(&r), -1);
}

static void
test_paths(void **state)
{
	static const char *const good[] = { "0", "0.1", "0.2.1", "0.10.99",
	    "0.123456789" };
	static const char *const bad[] = { "", "1", "00", "0.", ".0", "0..1",
	    "0.01", "0.a", "0.1.", "/etc", "0.1234567890", "0 .1", "0.-1" };
	char	longp[IPC_PATH_MAX + 2];
	size_t	i;

	(void)state;
	for (i = 0; i < sizeof(good) / sizeof(good[0]); i++)
		if (!ipc_path_valid(good[i], strlen(good[i])))
			fail_msg("\"%s\" refused", good[i]);
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		if (ipc_path_valid(bad[i], strlen(bad[i])))
			fail_msg("\"%s\" accepted", bad[i]);
	/* 0.1.1.1... up to 65 bytes. */
	longp[0] = '0';
	for (i = 1; i + 1 < sizeof(longp) - 1; i += 2) {
		longp[i] = '.';
		longp[i + 1] = '1';
	}
	longp[i] = '\0';
	assert_true(strlen(longp) > IPC_PATH_MAX);
	assert_false(ipc_path_valid(longp, strlen(longp)));
	longp[IPC_PATH_MAX - 1] = '\0';
	assert_true(ipc_path_valid(longp, strlen(longp)));
}

/* An invalid path in start and spawn_ok is refused on both sides. */
static void
test_path_in_messages(void **state)
{
	struct ipc_msg	m;
	struct buf	b;
	char		err[IPC_ERR_LEN];
	msgpack_sbuffer	sb;
	msgpack_packer	pk;

	(void)state;
	buf_init(&b, 0);
	samples_msg(&m, IPC_SPAWN_OK, 0);
	free(m.u.spawn_ok.path);
	m.u.spawn_ok.path = strdup("0.2/../1");
	assert_int_equal(ipc_msg_encode(&b, &m, err, sizeof(err)), -1);
	assert_non_null(strstr(err, "spawn_ok.path"));
	assert_int_equal(buf_left(&b), 0);
	ipc_msg_free(&m);
	buf_free(&b);

	msgpack_sbuffer_init(&sb);
	msgpack_packer_init(&pk, &sb, msgpack_sbuffer_write);
	begin(&sb, &pk, 5, IPC_SPAWN_OK);
	pk_str(&pk, "path");
	pk_str(&pk, "0.2.");
	expect_fail(&sb, "spawn_ok.path: not an agent path");
	begin(&sb, &pk, 8, IPC_START);
	pk_str(&pk, "path");
	pk_str(&pk, "../0");
	expect_fail(&sb, "start.path: not an agent path");
	msgpack_sbuffer_destroy(&sb);
}

/* The encoder refuses what the decoder would refuse, and rolls back. */
static void
test_encode_checks(void **state)
{
	struct ipc_msg	m;
	struct buf	b;
	char		err[IPC_ERR_LEN];

	(void)state;
	buf_init(&b, 0);
	buf_add(&b, "keep", 4);
	samples_msg(&m, IPC_EVENT, 0);
	free(m.u.event.tool);
	m.u.event.tool = strdup("bad tool");
	assert_int_equal(ipc_msg_frame(&b, &m, err, sizeof(err)), -1);
	assert_non_null(strstr(err, "event.tool: not a name"));
	assert_int_equal(buf_left(&b), 4);
	ipc_msg_free(&m);

	samples_msg(&m, IPC_SPAWN, 0);
	free(m.u.spawn.task);
	m.u.spawn.task = NULL;
	assert_int_equal(ipc_msg_frame(&b, &m, err, sizeof(err)), -1);
	assert_non_null(strstr(err, "spawn.task: required string is NULL"));
	ipc_msg_free(&m);

	memset(&m, 0, sizeof(m));
	m.type = (enum ipc_type)555;
	assert_int_equal(ipc_msg_frame(&b, &m, err, sizeof(err)), -1);
	assert_non_null(strstr(err, "cannot encode message type 555"));
	assert_int_equal(buf_left(&b), 4);

	/* A frame over 16 MiB: four 4 MiB messages in one checkpoint. */
	{
		char	*big = malloc(IPC_STR_MAX + 1);
		size_t	 i;

		assert_non_null(big);
		memset(big, 'a', IPC_STR_MAX);
		big[IPC_STR_MAX] = '\0';
		memset(&m, 0, sizeof(m));
		m.type = IPC_CHECKPOINT;
		for (i = 0; i < 4; i++)
			msg_list_add_text(&m.u.checkpoint.messages, MSG_USER,
			    big);
		assert_int_equal(ipc_msg_frame(&b, &m, err, sizeof(err)), -1);
		assert_int_equal(errno, EMSGSIZE);
		assert_non_null(strstr(err, "over the frame limit of 16777216"));
		assert_int_equal(buf_left(&b), 4);
		/* One byte over the string limit. */
		msg_list_free(&m.u.checkpoint.messages);
		big[IPC_STR_MAX - 1] = 'b';
		msg_list_add_text(&m.u.checkpoint.messages, MSG_USER, big);
		free(m.u.checkpoint.messages.v[0].text);
		m.u.checkpoint.messages.v[0].text = malloc(IPC_STR_MAX + 2);
		memset(m.u.checkpoint.messages.v[0].text, 'c',
		    IPC_STR_MAX + 1);
		m.u.checkpoint.messages.v[0].text[IPC_STR_MAX + 1] = '\0';
		assert_int_equal(ipc_msg_frame(&b, &m, err, sizeof(err)), -1);
		assert_non_null(strstr(err, "4194305 bytes, at most 4194304"));
		ipc_msg_free(&m);
		free(big);
	}
	buf_free(&b);
}

/* Encode m: it must fail, and the error must mention want. */
static void
expect_encode_fail(const struct ipc_msg *m, const char *want)
{
	struct buf	b;
	char		err[IPC_ERR_LEN];

	buf_init(&b, 0);
	if (ipc_msg_encode(&b, m, err, sizeof(err)) == 0)
		fail_msg("%s encoded, expected an error with \"%s\"",
		    ipc_type_name(m->type), want);
	if (strstr(err, want) == NULL)
		fail_msg("error \"%s\" does not mention \"%s\"", err, want);
	assert_int_equal(buf_left(&b), 0);
	buf_free(&b);
}

/* Encode m: it must succeed. */
static void
expect_encode_ok(const struct ipc_msg *m)
{
	struct buf	b;
	char		err[IPC_ERR_LEN];

	buf_init(&b, 0);
	if (ipc_msg_encode(&b, m, err, sizeof(err)) == -1)
		fail_msg("%s: %s", ipc_type_name(m->type), err);
	buf_free(&b);
}

/* With *n at max, m encodes; with one entry more it fails with want. */
static void
expect_count_limit(const struct ipc_msg *m, size_t *n, size_t max,
    const char *want)
{
	*n = max;
	expect_encode_ok(m);
	*n = max + 1;
	expect_encode_fail(m, want);
}

/* The tool names at *a, v's: 128 encode, 129 fail, and so does one name
 * that breaks the token rule. */
static void
expect_name_array(const struct ipc_msg *m, char ***a, size_t *n, char **v,
    const char *what)
{
	static char	 bad[] = "not a name";
	char		 want[128], *last = v[IPC_TOOLS_MAX];

	*a = v;
	snprintf(want, sizeof(want), "%s: more than %d entries", what,
	    IPC_TOOLS_MAX);
	expect_count_limit(m, n, IPC_TOOLS_MAX, want);
	*n = 1;
	*a = &v[IPC_TOOLS_MAX];
	v[IPC_TOOLS_MAX] = bad;
	snprintf(want, sizeof(want), "%s: not a name", what);
	expect_encode_fail(m, want);
	*a = v;
	v[IPC_TOOLS_MAX] = last;
}

/*
 * Every array the encoder writes is held to its count: the limit encodes,
 * one entry more fails naming the field and the limit. An array of names
 * holds each to the token rule and its own length, an array of strings
 * each to its length (codec_put_strs, wire_put_tools, enc_array).
 */
static void
test_encode_arrays(void **state)
{
	static char	 name[] = "read", bad[] = "not a name", desc[] = "Reads.",
			 schema[] = "{}";
	char		*v[IPC_TOOLS_MAX + 1], long_name[IPC_CALLSTR_MAX + 2];
	struct msg_tool	 t[IPC_TOOLS_MAX + 1];
	struct msg_call	 c[IPC_CALLS_MAX + 1];
	struct msg	*msgs;
	struct ipc_msg	 m, keep;
	size_t		 i;

	(void)state;
	for (i = 0; i <= IPC_TOOLS_MAX; i++) {
		v[i] = name;
		t[i].name = name;
		t[i].description = desc;
		t[i].schema = schema;
	}
	for (i = 0; i <= IPC_CALLS_MAX; i++) {
		c[i].id = name;
		c[i].name = name;
		c[i].args = schema;
	}
	memset(long_name, 'a', sizeof(long_name) - 1);
	long_name[sizeof(long_name) - 1] = '\0';

	/* hello.layers: 16 tokens of at most 32 bytes. */
	samples_msg(&m, IPC_HELLO, 0);
	keep = m;
	for (i = 0; i < IPC_LAYERS_MAX; i++)
		m.u.hello.layers[i] = name;
	expect_count_limit(&m, &m.u.hello.nlayers, IPC_LAYERS_MAX,
	    "hello.layers: more than 16 entries");
	m.u.hello.nlayers = 1;
	m.u.hello.layers[0] = bad;
	expect_encode_fail(&m, "hello.layers: not a name");
	long_name[IPC_LAYER_MAX] = '\0';	/* 32 bytes: allowed */
	m.u.hello.layers[0] = long_name;
	expect_encode_ok(&m);
	long_name[IPC_LAYER_MAX] = 'a';
	long_name[IPC_LAYER_MAX + 1] = '\0';
	expect_encode_fail(&m, "hello.layers: not a name ([A-Za-z0-9_.:-], "
	    "1 to 32 bytes)");
	long_name[IPC_LAYER_MAX + 1] = 'a';
	m = keep;
	ipc_msg_free(&m);

	/* start: the profile's tool names, the delegates, the MCP tools. */
	samples_msg(&m, IPC_START, 0);
	keep = m;
	m.u.start.delegates = v;
	m.u.start.delegate_descs = v;
	m.u.start.mcp_tools = t;
	expect_name_array(&m, &m.u.start.profile.tools,
	    &m.u.start.profile.ntools, v, "start.profile.tools");
	expect_count_limit(&m, &m.u.start.ndelegates, IPC_TOOLS_MAX,
	    "start.delegates: more than 128 entries");
	m.u.start.ndelegates = IPC_TOOLS_MAX;
	/* Delegates are strings, as the decoder reads them: no token rule. */
	v[IPC_TOOLS_MAX] = bad;
	m.u.start.delegates = &v[1];
	expect_encode_ok(&m);
	v[IPC_TOOLS_MAX] = long_name;	/* 1,025 bytes */
	expect_encode_fail(&m, "start.delegates: 1025 bytes, at most 64 "
	    "allowed");
	m.u.start.delegates = v;
	m.u.start.delegate_descs = &v[1];
	expect_encode_fail(&m, "start.delegate_descs: 1025 bytes, at most "
	    "1024 allowed");
	v[IPC_TOOLS_MAX] = name;
	m.u.start.delegate_descs = v;
	expect_count_limit(&m, &m.u.start.nmcp_tools, IPC_TOOLS_MAX,
	    "start.mcp_tools: more than 128 entries");
	m = keep;
	ipc_msg_free(&m);

	/* spawn.tool_filter: tool names. */
	samples_msg(&m, IPC_SPAWN, 0);
	keep = m;
	expect_name_array(&m, &m.u.spawn.tools, &m.u.spawn.ntools, v,
	    "spawn.tool_filter");
	m = keep;
	ipc_msg_free(&m);

	/* llm: its tools, its messages, one message's calls. */
	samples_msg(&m, IPC_LLM, 0);
	keep = m;
	m.u.llm.tools = t;
	expect_count_limit(&m, &m.u.llm.ntools, IPC_TOOLS_MAX,
	    "llm.tools: more than 128 entries");
	m.u.llm.ntools = 0;
	msgs = calloc(IPC_MSGS_MAX + 1, sizeof(*msgs));
	assert_non_null(msgs);
	for (i = 0; i <= IPC_MSGS_MAX; i++) {
		msgs[i].role = MSG_USER;
		msgs[i].text = name;
	}
	m.u.llm.messages.v = msgs;
	expect_count_limit(&m, &m.u.llm.messages.n, IPC_MSGS_MAX,
	    "llm.messages: more than 4096 entries");
	msgs[0].role = MSG_ASSISTANT;
	msgs[0].calls = c;
	m.u.llm.messages.n = 1;
	expect_count_limit(&m, &msgs[0].ncalls, IPC_CALLS_MAX,
	    "llm.messages: more than 256 entries");
	free(msgs);
	m = keep;
	ipc_msg_free(&m);

	/* http.headers: at most 8. */
	samples_msg(&m, IPC_HTTP, 0);
	keep = m;
	m.u.http.nheaders = IPC_HTTP_HEADERS_MAX + 1;
	expect_encode_fail(&m, "http.headers: more than 8 entries");
	m = keep;
	ipc_msg_free(&m);
}

/*
 * Deterministic mutation (OpenSSH test_sshbuf_getput_fuzz.c): every single
 * bit flip of a valid body either decodes to something that re-encodes or
 * fails cleanly; every truncation fails. ASan/UBSan builds check the rest.
 */
static void
test_mutations(void **state)
{
	struct buf	b, re;
	struct ipc_msg	m;
	unsigned char	*copy;
	char		err[IPC_ERR_LEN];
	size_t		t, i, len, ok = 0, bad = 0;
	int		bit, variant;

	(void)state;
	buf_init(&b, 0);
	buf_init(&re, 0);
	for (t = 0; t < samples_ntypes; t++) {
		for (variant = 0; variant < 2; variant++) {
			samples_frame(&b, samples_types[t], variant);
			len = buf_left(&b) - IPC_HDR_LEN;
			copy = malloc(len);
			assert_non_null(copy);
			for (i = 0; i < len; i++) {
				for (bit = 0; bit < 8; bit++) {
					memcpy(copy, buf_head(&b) + IPC_HDR_LEN,
					    len);
					copy[i] ^= (unsigned char)(1 << bit);
					if (ipc_msg_decode(copy, len, &m, err,
					    sizeof(err)) == -1) {
						assert_true(err[0] != '\0');
						bad++;
						continue;
					}
					/* Accepted: must be a valid message. */
					buf_reset(&re);
					assert_int_equal(ipc_msg_encode(&re,
					    &m, err, sizeof(err)), 0);
					ipc_msg_free(&m);
					ok++;
				}
			}
			for (i = 0; i < len; i++) {
				memcpy(copy, buf_head(&b) + IPC_HDR_LEN, i);
				if (ipc_msg_decode(copy, i, &m, err,
				    sizeof(err)) == 0)
					fail_msg("%s truncated to %zu of %zu "
					    "bytes decoded",
					    ipc_type_name(samples_types[t]),
					    i, len);
			}
			free(copy);
		}
	}
	/* Most flips hit text bytes and still decode; many do not. */
	assert_true(ok > 0 && bad > 0);
	buf_free(&b);
	buf_free(&re);
}

static void
test_describe(void **state)
{
	struct ipc_msg	m;
	char		line[IPC_DESCRIBE_LEN], tiny[16];
	char		*big;

	(void)state;
	samples_msg(&m, IPC_EVENT, 0);
	ipc_msg_describe(&m, line, sizeof(line));
	assert_string_equal(line, "event kind=log tool=bash level=2 "
	    "text=\"worker ready \\x1b[31mred\\x1b[0m\"(25)");
	ipc_msg_free(&m);
	/* A long text is cut; the line stays bounded and has no newline. */
	big = malloc(100000);
	assert_non_null(big);
	memset(big, '\n', 99999);
	big[99999] = '\0';
	memset(&m, 0, sizeof(m));
	m.type = IPC_CANCEL;
	m.u.cancel.reason = big;
	assert_true(ipc_msg_describe(&m, line, sizeof(line)) < sizeof(line));
	assert_null(strchr(line, '\n'));
	assert_non_null(strstr(line, "(99999)"));
	ipc_msg_describe(&m, tiny, sizeof(tiny));
	assert_int_equal(strlen(tiny), sizeof(tiny) - 1);
	ipc_msg_free(&m);
	/* A local message that never passed the codec: escaped, NULL-safe. */
	memset(&m, 0, sizeof(m));
	m.type = IPC_SPAWN;
	m.u.spawn.profile = strdup("ex\x1b]0;pwn\x07");
	ipc_msg_describe(&m, line, sizeof(line));
	assert_string_equal(line, "spawn id=0 profile=ex\\x1b]0;pwn\\x07 "
	    "inherit=0");
	ipc_msg_free(&m);
	m.type = IPC_START;
	ipc_msg_describe(&m, line, sizeof(line));
	assert_non_null(strstr(line, "path=- depth=0 profile=-"));
}

/*
 * A checkpoint of n_text bytes of text in four messages, then a tool
 * result whose last field is a bool: what ends the body is never a
 * string, so only the frame's own length check can refuse it.
 */
static void
big_checkpoint(struct ipc_msg *m, uint64_t seq, size_t n_text)
{
	struct msg	 tool = { .role = MSG_TOOL, .call_id = (char *)"c",
			    .name = (char *)"t", .is_error = 1 };
	char		*text;
	size_t		 i, each = n_text / 4;

	memset(m, 0, sizeof(*m));
	m->type = IPC_CHECKPOINT;
	m->u.checkpoint.seq = seq;
	msg_list_init(&m->u.checkpoint.messages);
	assert_non_null(text = malloc(n_text - 3 * each + 1));
	for (i = 0; i < 4; i++) {
		memset(text, 'a' + (int)i, i < 3 ? each : n_text - 3 * each);
		text[i < 3 ? each : n_text - 3 * each] = '\0';
		assert_int_equal(msg_list_add_text(&m->u.checkpoint.messages,
		    MSG_USER, text), 0);
	}
	free(text);
	assert_int_equal(msg_list_add(&m->u.checkpoint.messages, &tool), 0);
}

/* The body ipc_msg_encode makes of m, however long. */
static size_t
body_len(const struct ipc_msg *m)
{
	struct buf	b;
	char		err[IPC_ERR_LEN];
	size_t		n;

	buf_init(&b, 0);
	if (ipc_msg_encode(&b, m, err, sizeof(err)) == -1)
		fail_msg("encode: %s", err);
	n = buf_left(&b);
	buf_free(&b);
	return n;
}

/*
 * docs/protocol.md: a body is at most IPC_FRAME_MAX bytes. A checkpoint of
 * exactly that many is framed and read back; the same with its seq one
 * byte longer (128 is a uint8, 127 a fixint) is refused with EMSGSIZE and
 * nothing is left queued: the limit holds when ints and bools, not a
 * string, carry the body over it.
 */
static void
test_frame_max_exact(void **state)
{
	struct ipc_msg	 m, back;
	struct buf	 b;
	char		 err[IPC_ERR_LEN];
	size_t		 probe = 15u * 1024 * 1024, body, got;

	(void)state;
	big_checkpoint(&m, 127, probe);
	body = body_len(&m);
	ipc_msg_free(&m);
	/* Strings over 64 KiB all have 5-byte headers: linear from here. */
	big_checkpoint(&m, 127, probe + (IPC_FRAME_MAX - body));
	assert_int_equal(body_len(&m), IPC_FRAME_MAX);
	buf_init(&b, 0);
	assert_int_equal(ipc_msg_frame(&b, &m, err, sizeof(err)), 0);
	assert_int_equal(buf_left(&b), IPC_HDR_LEN + IPC_FRAME_MAX);
	assert_int_equal(ipc_frame_check(buf_head(&b), buf_left(&b), &got), 1);
	assert_int_equal(got, IPC_FRAME_MAX);
	assert_int_equal(ipc_msg_decode(buf_head(&b) + IPC_HDR_LEN, got, &back,
	    err, sizeof(err)), 0);
	assert_int_equal(back.u.checkpoint.messages.n, 5);
	assert_int_equal(back.u.checkpoint.messages.v[4].is_error, 1);
	ipc_msg_free(&back);
	buf_free(&b);

	m.u.checkpoint.seq = 128;
	assert_int_equal(body_len(&m), IPC_FRAME_MAX + 1);
	buf_init(&b, 0);
	assert_int_equal(buf_addstr(&b, "queued"), 0);
	errno = 0;
	assert_int_equal(ipc_msg_frame(&b, &m, err, sizeof(err)), -1);
	assert_int_equal(errno, EMSGSIZE);
	assert_non_null(strstr(err, "over"));
	assert_int_equal(buf_left(&b), strlen("queued"));
	assert_memory_equal(buf_head(&b), "queued", strlen("queued"));
	buf_free(&b);
	ipc_msg_free(&m);
}

static void
map_member_count(struct mp_reader *r, int key, void *arg, const char *what)
{
	uint64_t	v;

	(void)key;
	if (mp_get_u64(r, &v, what) == 0)
		(*(int *)arg)++;
}

/* seen and need hold a bit a key: a map of 33 keys is refused, not read
 * with two keys on one bit (the 33rd would pass as the first, repeated). */
static void
test_map_keys_max(void **state)
{
	static char		 names[33][8];
	const char		*keys[33];
	struct wire_map		 m = { .keys = keys, .member = map_member_count };
	msgpack_sbuffer		 sb;
	msgpack_packer		 pk;
	struct mp_reader	 r;
	char			 err[256];
	int			 i, got = 0;

	(void)state;
	for (i = 0; i < 33; i++) {
		snprintf(names[i], sizeof(names[i]), "k%d", i);
		keys[i] = names[i];
	}
	msgpack_sbuffer_init(&sb);
	msgpack_packer_init(&pk, &sb, msgpack_sbuffer_write);
	msgpack_pack_map(&pk, 2);
	msgpack_pack_str_with_body(&pk, "k0", 2);
	msgpack_pack_uint64(&pk, 1);
	msgpack_pack_str_with_body(&pk, "k32", 3);
	msgpack_pack_uint64(&pk, 2);
	for (m.nkeys = 32; m.nkeys <= 33; m.nkeys++) {
		got = 0;
		mp_reader_init(&r, sb.data, sb.size, err, sizeof(err));
		if (m.nkeys == 32) {
			/* k32 is unknown to a map of 32 keys. */
			assert_int_equal(wire_get_map(&r, &m, &got, "t"), -1);
			continue;
		}
		assert_int_equal(wire_get_map(&r, &m, &got, "t"), -1);
		assert_non_null(strstr(err, "33 keys"));
		assert_int_equal(got, 0);
	}
	msgpack_sbuffer_destroy(&sb);
}

/*
 * A string at its documented limit (cancel.reason, IPC_ERRMSG_MAX bytes)
 * is encoded and decoded; one byte more is refused by both sides, also
 * when it is written by another encoder (msgpack-c), so the reader's
 * own check is seen, not the writer's.
 */
static void
test_str_max_exact(void **state)
{
	struct ipc_msg	 m, back;
	struct buf	 b;
	msgpack_sbuffer	 sb;
	msgpack_packer	 pk;
	char		 err[IPC_ERR_LEN], *s;
	size_t		 len;

	(void)state;
	assert_non_null(s = malloc(IPC_ERRMSG_MAX + 2));
	memset(s, 'r', IPC_ERRMSG_MAX + 1);
	s[IPC_ERRMSG_MAX] = '\0';
	memset(&m, 0, sizeof(m));
	m.type = IPC_CANCEL;
	m.u.cancel.reason = s;
	buf_init(&b, 0);
	assert_int_equal(ipc_msg_encode(&b, &m, err, sizeof(err)), 0);
	assert_int_equal(ipc_msg_decode(buf_head(&b), buf_left(&b), &back,
	    err, sizeof(err)), 0);
	assert_int_equal(strlen(back.u.cancel.reason), IPC_ERRMSG_MAX);
	ipc_msg_free(&back);
	buf_free(&b);

	s[IPC_ERRMSG_MAX] = 'r';
	s[IPC_ERRMSG_MAX + 1] = '\0';
	buf_init(&b, 0);
	assert_int_equal(ipc_msg_encode(&b, &m, err, sizeof(err)), -1);
	assert_non_null(strstr(err, "cancel.reason: 16385 bytes, at most "
	    "16384"));
	buf_free(&b);

	for (len = IPC_ERRMSG_MAX; len <= IPC_ERRMSG_MAX + 1; len++) {
		msgpack_sbuffer_init(&sb);
		msgpack_packer_init(&pk, &sb, msgpack_sbuffer_write);
		msgpack_pack_map(&pk, 2);
		pk_str(&pk, "type");
		msgpack_pack_uint64(&pk, IPC_CANCEL);
		pk_str(&pk, "reason");
		msgpack_pack_str_with_body(&pk, s, len);
		if (len == IPC_ERRMSG_MAX) {
			assert_int_equal(ipc_msg_decode(sb.data, sb.size,
			    &back, err, sizeof(err)), 0);
			assert_int_equal(strlen(back.u.cancel.reason), len);
			ipc_msg_free(&back);
		} else
			expect_fail(&sb, "cancel.reason: 16385 bytes, at most "
			    "16384 allowed");
		msgpack_sbuffer_destroy(&sb);
	}
	free(s);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_roundtrip_all),
		cmocka_unit_test(test_roundtrip_fields),
		cmocka_unit_test(test_msgpack_c_reads_ours),
		cmocka_unit_test(test_ours_reads_msgpack_c),
		cmocka_unit_test(test_malformed_maps),
		cmocka_unit_test(test_http_strict),
		cmocka_unit_test(test_malformed_values),
		cmocka_unit_test(test_decode_arrays),
		cmocka_unit_test(test_huge_declared),
		cmocka_unit_test(test_reader_depth),
		cmocka_unit_test(test_paths),
		cmocka_unit_test(test_path_in_messages),
		cmocka_unit_test(test_encode_checks),
		cmocka_unit_test(test_encode_arrays),
		cmocka_unit_test(test_mutations),
		cmocka_unit_test(test_describe),
		cmocka_unit_test(test_frame_max_exact),
		cmocka_unit_test(test_map_keys_max),
		cmocka_unit_test(test_str_max_exact),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}

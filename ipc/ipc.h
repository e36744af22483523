/*
 * The wire protocol between the supervisor (warren) and its workers
 * (warren-worker), over a pair of pipes. docs/protocol.md is the reference;
 * this header, the code and tests/ipc/ follow its table.
 *
 * One frame = a 4-byte big-endian length (1 .. IPC_FRAME_MAX) + exactly one
 * msgpack map. The map's first key is "type" (an enum ipc_type number); the
 * other keys are the message's fields. Decoding is strict: every field's type
 * and size is checked, unknown keys, duplicate keys, missing required keys
 * and trailing bytes after the map are refused.
 *
 * Bump IPC_PROTOCOL_VERSION if any of the numbers, names, keys or limits in
 * this file change. Retired type numbers stay reserved; new ones take fresh
 * numbers in their phase.
 *
 * Library code: every function returns -1 (or an error code) and never
 * exits. What to do with a bad peer is the caller's policy (see
 * docs/protocol.md, "Failure policy").
 */
#ifndef WARREN_IPC_H
#define WARREN_IPC_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "common/buf.h"
#include "common/msg.h"

#define IPC_PROTOCOL_VERSION	7

/* Message types, numbered by phase. Bump the version if any of these change. */
enum ipc_type {
	IPC_NONE = 0,		/* never on the wire */

	/* Handshake. */
	IPC_HELLO = 100,	/* W→S once, first message: version, sandbox layers */
	IPC_START,		/* S→W once, after hello: who you are, what to do */

	/* Work. Requests carry an id; answers echo it. */
	IPC_LLM = 200,		/* W→S request: run one LLM turn */
	IPC_LLM_OK,		/* S→W answer: the model's reply */
	IPC_LLM_ERR,		/* S→W answer: the turn failed */
	IPC_SPAWN,		/* W→S request: run a subagent */
	IPC_SPAWN_OK,		/* S→W answer: the subagent's result */
	IPC_SPAWN_ERR,		/* S→W answer: refused or failed */
	IPC_EVENT,		/* W→S: tool call/result, log record, note */
	IPC_CHECKPOINT,		/* W→S: messages appended since the last one */
	IPC_MCP,		/* W→S request (v6): call an MCP server's tool */
	IPC_MCP_OK,		/* S→W answer: the tool's result */
	IPC_MCP_ERR,		/* S→W answer: the server failed */
	IPC_HTTP = 211,		/* W→S request (v7): a backend program's HTTP
				   request to its model, passed through */
	IPC_HTTP_OK,		/* S→W answer: the endpoint's response */
	IPC_HTTP_ERR,		/* S→W answer: not sent, or no answer */

	/* End. */
	IPC_DONE = 300,		/* W→S once: the agent finished */
	IPC_CANCEL,		/* S→W: stop now */
};

/* Limits. Bump the version if any of these change. */
#define IPC_HDR_LEN		4			/* length prefix */
#define IPC_FRAME_MAX		(16u * 1024 * 1024)	/* body bytes */
#define IPC_STR_MAX		(4u * 1024 * 1024)	/* any string */
#define IPC_MSGS_MAX		4096	/* struct msg per array */
#define IPC_CALLS_MAX		256	/* tool calls per message */
#define IPC_TOOLS_MAX		128	/* tools offered / profile tool names */
#define IPC_DEPTH_MAX		16	/* msgpack container nesting */
#define IPC_LAYERS_MAX		16	/* sandbox layers in hello */
#define IPC_LAYER_MAX		32	/* bytes of one layer name */
#define IPC_PATH_MAX		64	/* agent path "0.2.1" */
#define IPC_NAME_MAX		64	/* tokens: profile, tool, code, kind */
#define IPC_CALLSTR_MAX		1024	/* msg_call id/name, msg call_id/name */
#define IPC_EVENT_MAX		(64u * 1024)	/* event text */
#define IPC_LOG_MAX		8192	/* event text when kind is "log" */
#define IPC_ERRMSG_MAX		(16u * 1024)	/* llm_err/spawn_err message */
#define IPC_WORKSPACE_MAX	4096	/* absolute path (PATH_MAX) */
#define IPC_PENDING_MAX		64	/* outstanding requests per peer */
#define IPC_QUEUE_MAX		(64u * 1024 * 1024)	/* output queue per peer */
#define IPC_HTTP_PATH_MAX	1024	/* http.path */
#define IPC_HTTP_HEADERS_MAX	8	/* http.headers entries */
#define IPC_HTTP_HEADER_MAX	1024	/* one "name: value" line */
#define IPC_HTTP_TYPE_MAX	256	/* http_ok.content_type */
#define IPC_PIPE_SIZE		(1024u * 1024)	/* F_SETPIPE_SZ wish, not a limit */

/* Room for an error string from the decoder or a peer. */
#define IPC_ERR_LEN		256
/* Room for one ipc_msg_describe() line. */
#define IPC_DESCRIBE_LEN	512

/* Token charset (layers, codes, kinds, names): [A-Za-z0-9_.:-]. */

/* Suggested codes (llm_err/spawn_err); any token is accepted. */
#define IPC_ERR_ENDPOINT	"endpoint"
#define IPC_ERR_BUDGET		"budget"
#define IPC_ERR_REPLAY_MISSING	"replay_missing"
#define IPC_ERR_CANCELLED	"cancelled"
#define IPC_ERR_MAX_DEPTH	"max_depth"
#define IPC_ERR_MAX_AGENTS	"max_agents"
#define IPC_ERR_CRASHED		"crashed"
#define IPC_ERR_KILLED		"killed"
#define IPC_ERR_TIMEOUT		"timeout"
#define IPC_ERR_PROTOCOL	"protocol"
#define IPC_ERR_REFUSED		"refused"
#define IPC_ERR_FAILED		"failed"	/* the child called fail() */
#define IPC_ERR_LIMIT		"limit"		/* its own turn/time limit */

enum ipc_purpose {
	IPC_PURPOSE_TURN = 0,	/* "turn": an agent step */
	IPC_PURPOSE_SUMMARY,	/* "summary": context compaction */
};

enum ipc_status {
	IPC_STATUS_COMPLETE = 0,	/* "complete": complete(result) called */
	IPC_STATUS_FAIL,		/* "fail": fail(reason) called */
	IPC_STATUS_AUTO_COMPLETE,	/* "auto_complete": no tool call twice */
	IPC_STATUS_LIMIT,		/* "limit": iterations/timeout/budget */
};

/*
 * Message bodies. Every string is owned, NUL-terminated and free of NUL
 * bytes, and freed by ipc_msg_free(); optional strings are NULL when absent.
 */
struct ipc_hello {
	uint32_t	 version;	/* IPC_PROTOCOL_VERSION */
	uint32_t	 pid;
	char		*layers[IPC_LAYERS_MAX];	/* "landlock:abi7", ... */
	size_t		 nlayers;
	int		 weaker;	/* the user accepted a weaker sandbox */
};

struct ipc_profile {
	char		*name;
	char		*prompt;	/* role prompt text */
	char		**tools;	/* tool names, ntools <= IPC_TOOLS_MAX */
	size_t		 ntools;
};

struct ipc_limits {
	uint32_t	max_iterations;
	uint64_t	timeout_ms;
	uint32_t	context_tokens;
	uint32_t	loop_threshold;
	uint32_t	max_output_bytes;
};

struct ipc_start {
	char		*path;		/* "0", "0.2", "0.2.1": digits and dots */
	uint32_t	 depth;
	struct ipc_profile profile;
	char		*task;
	struct msg_list	 context;	/* inherited summaries/messages */
	struct msg_list	 history;	/* resume: the agent's own messages
					   so far (empty: a fresh start) */
	struct ipc_limits limits;
	char		*workspace;	/* absolute path */
	/* Optional: the profiles its delegate may name, with what each is
	   for (the delegate schema's enum); ndelegates <= IPC_TOOLS_MAX. */
	char		**delegates;
	char		**delegate_descs;	/* <= IPC_CALLSTR_MAX B each */
	size_t		 ndelegates;
	size_t		 ndescs;	/* decoded descriptions (= ndelegates
					   in a valid message); sending: unused */
	/* Optional (v5): the run's output schema, JSON Schema text, sent
	   to a root only: complete()'s result is checked against it. */
	char		*schema;
	/* Optional (v6): the MCP servers' tools this agent may call
	   (mcp__SERVER__TOOL), <= IPC_TOOLS_MAX. */
	struct msg_tool	*mcp_tools;
	size_t		 nmcp_tools;
};

struct ipc_llm {
	uint32_t	 id;
	uint32_t	 step;
	enum ipc_purpose purpose;
	struct msg_list	 messages;
	struct msg_tool	*tools;
	size_t		 ntools;
};

struct ipc_llm_ok {
	uint32_t	 id;
	struct msg_reply reply;
};

/* llm_err and spawn_err. */
struct ipc_error {
	uint32_t	 id;
	char		*code;		/* token, e.g. IPC_ERR_MAX_AGENTS */
	char		*message;	/* readable by the model */
};

struct ipc_spawn {
	uint32_t	 id;
	char		*profile;
	char		*task;
	int		 inherit_context;
	char		*call_id;	/* the delegate tool call's id ("" if
					   none): resume matches children by it */
	/* tool_filter, optional: only these of the profile's tools. */
	int		 filtered;
	char		**tools;	/* ntools <= IPC_TOOLS_MAX */
	size_t		 ntools;
};

struct ipc_spawn_ok {
	uint32_t	 id;
	char		*path;		/* the child's agent path */
	char		*result;
	struct msg_usage usage;
};

/* mcp (v6): one call of an MCP server's tool, brokered by the supervisor. */
struct ipc_mcp {
	uint32_t	 id;
	char		*server;	/* token */
	char		*tool;		/* token */
	char		*args;		/* JSON object text, unvalidated */
};

struct ipc_mcp_ok {
	uint32_t	 id;
	char		*text;		/* the tool's result, for the model */
	int		 is_error;	/* the tool said isError */
};

struct ipc_event {
	char		*kind;		/* "tool_call", "tool_result", "log", "note" */
	char		*text;		/* <= IPC_EVENT_MAX (IPC_LOG_MAX for "log") */
	char		*tool;		/* optional */
	int		 has_level;
	uint32_t	 level;		/* optional: enum log_level for "log" */
};

struct ipc_checkpoint {
	uint32_t	 seq;		/* index of messages.v[0] in the history */
	struct msg_list	 messages;
};

struct ipc_done {
	enum ipc_status	 status;
	char		*result;
	struct msg_usage usage;
	uint32_t	 iterations;
	char		*reason;	/* optional */
};

struct ipc_cancel {
	char		*reason;
};

/*
 * http (v7): one request of a backend program (docs/backends.md), passed
 * through to the endpoint of its wire. Headers are "name: value" lines,
 * names lower case, only those the supervisor forwards
 * (ipc_http_header_ok). The body is the program's, unparsed.
 */
struct ipc_http {
	uint32_t	 id;
	char		*wire;		/* "anthropic", "responses", "openai" */
	char		*method;	/* "POST" */
	char		*path;		/* "/v1/messages": starts with '/' */
	char		*headers[IPC_HTTP_HEADERS_MAX];
	size_t		 nheaders;
	char		*body;
};

struct ipc_http_ok {
	uint32_t	 id;
	uint32_t	 status;	/* 100 .. 599 */
	char		*content_type;
	char		*body;
	int		 more;		/* a part: more follows, the request
					   stays open (a stream as it comes) */
};

struct ipc_msg {
	enum ipc_type	type;
	union {
		struct ipc_hello	hello;
		struct ipc_start	start;
		struct ipc_llm		llm;
		struct ipc_llm_ok	llm_ok;
		struct ipc_error	llm_err;
		struct ipc_spawn	spawn;
		struct ipc_spawn_ok	spawn_ok;
		struct ipc_error	spawn_err;
		struct ipc_mcp		mcp;
		struct ipc_mcp_ok	mcp_ok;
		struct ipc_error	mcp_err;
		struct ipc_event	event;
		struct ipc_checkpoint	checkpoint;
		struct ipc_done		done;
		struct ipc_cancel	cancel;
		struct ipc_http		http;
		struct ipc_http_ok	http_ok;
		struct ipc_error	http_err;
	} u;
};

/* Who is speaking; the permission table is keyed by it. */
enum ipc_side {
	IPC_SIDE_SUPERVISOR = 0,
	IPC_SIDE_WORKER,
};

/* Conversation state, shared by both directions of one pipe pair. */
enum ipc_state {
	IPC_STATE_NEW = 0,	/* nothing yet: only hello */
	IPC_STATE_HELLO,	/* hello seen: start (or cancel) */
	IPC_STATE_RUN,		/* start seen: requests, answers, events */
	IPC_STATE_DONE,		/* done seen: only a racing cancel */
};

/* One outstanding request (llm or spawn) awaiting its answer. */
struct ipc_pending {
	enum ipc_type	type;
	uint32_t	id;
};

/*
 * One end of a pipe pair. The reader keeps partial frames across reads and
 * hands out whole ones; the writer queues encoded frames and writes what the
 * pipe takes (never blocks when the fd is non-blocking). The caller owns the
 * fds, picks blocking or not, and ignores SIGPIPE (a dead peer is EPIPE).
 */
struct ipc_peer {
	int		 rfd;		/* we read the other side from here */
	int		 wfd;		/* we write to the other side here */
	enum ipc_side	 self;		/* which side this process is */
	enum ipc_state	 state;
	struct buf	 in;		/* received bytes, partial frames */
	struct buf	 out;		/* queued frames not yet written */
	struct ipc_pending pending[IPC_PENDING_MAX];
	size_t		 npending;
	int		 eof;		/* the other side closed */
	int		 drained;	/* the last fill read less than it
					   asked: the pipe was empty then */
	char		 err[IPC_ERR_LEN];	/* why the last call failed */
};

/* frame.c: the length prefix and the pipe size. */
/* Start a frame at the end of out; *mark remembers where. */
int	 ipc_frame_begin(struct buf *out, size_t *mark);
/* Fill in the length; EMSGSIZE (frame dropped) if 0 or over the max. */
int	 ipc_frame_end(struct buf *out, size_t mark);
/*
 * Look at avail bytes: 1 and *bodylen when a whole frame is there, 0 when
 * more bytes are needed, -1 (ERANGE: length 0, EMSGSIZE: over the max)
 * before anything is allocated for it.
 */
int	 ipc_frame_check(const unsigned char *p, size_t avail, size_t *bodylen);
/* Raise a pipe's size (F_SETPIPE_SZ) to up to want bytes; best effort. */
int	 ipc_frame_pipe_size(int fd, size_t want);

/* peer.c: one end of a pipe pair (non-blocking and blocking use). */
void	 ipc_peer_init(struct ipc_peer *p, int rfd, int wfd,
	    enum ipc_side self);
/* Free the buffers; the fds stay open (the caller owns them). */
void	 ipc_peer_free(struct ipc_peer *p);
/*
 * Read once from rfd into the input buffer: >0 bytes read, 0 at EOF, -1 on
 * error (EAGAIN when a non-blocking fd has nothing). After a short read
 * p->drained is set: a reader woken by a level-triggered poll can go back
 * to it instead of reading again for EAGAIN.
 */
ssize_t	 ipc_peer_fill(struct ipc_peer *p);
/*
 * Take the next whole message from the input buffer: 1 with *m filled (free
 * with ipc_msg_free), 0 when more bytes are needed, -1 when the peer broke
 * the protocol (bad frame, bad message, not permitted now): p->err says why
 * and the peer must be dropped. Call it until it returns 0 after each
 * ipc_peer_fill(), or the input buffer fills up.
 */
int	 ipc_peer_get(struct ipc_peer *p, struct ipc_msg *m);
/*
 * Encode m as one frame and queue it; -1 if m is invalid, not permitted
 * from this side now, or the queue is over IPC_QUEUE_MAX (p->err says why).
 */
int	 ipc_peer_queue(struct ipc_peer *p, const struct ipc_msg *m);
/* Write queued bytes: 0 when the queue is empty, 1 when bytes remain
   (EAGAIN: poll wfd for POLLOUT), -1 on error (EPIPE: the peer is gone). */
int	 ipc_peer_flush(struct ipc_peer *p);
/* Bytes queued but not yet written. */
size_t	 ipc_peer_queued(const struct ipc_peer *p);
/*
 * Blocking helpers (the worker): poll until done or timeout_ms (-1: none).
 * -1 with ETIMEDOUT, EPIPE at EOF, EPROTO on a protocol error; p->err
 * says why. A send that timed out leaves the rest of m queued. drain
 * writes everything queued (ipc_peer_queue), send is queue + drain, and
 * recv drains first: a side that queues several frames and then waits
 * for an answer writes them with one write(2), and wakes the other side
 * once instead of once a frame.
 */
int	 ipc_peer_drain(struct ipc_peer *p, int timeout_ms);
int	 ipc_peer_send(struct ipc_peer *p, const struct ipc_msg *m,
	    int timeout_ms);
int	 ipc_peer_recv(struct ipc_peer *p, struct ipc_msg *m, int timeout_ms);

/* codec.c: typed encoders, names and value checks. */
/* Append m as one whole frame (header + map) to out. */
int	 ipc_msg_frame(struct buf *out, const struct ipc_msg *m, char *err,
	    size_t errsz);
/* "llm", "spawn_ok", ...; "unknown" for others. */
const char *ipc_type_name(enum ipc_type type);
const char *ipc_purpose_name(enum ipc_purpose purpose);
const char *ipc_status_name(enum ipc_status status);
int	 ipc_status_parse(const char *name, enum ipc_status *status);
/* 1 if s is a valid agent path: digits and dots, "0" first, no empty part. */
int	 ipc_path_valid(const char *s, size_t len);
/* 1 if s is a token: 1..max bytes of [A-Za-z0-9_.:-]. */
int	 ipc_token_valid(const char *s, size_t len, size_t max);

/* 1 if line is "name: value" with name one of those an http request may
 * carry (content-type, accept, anthropic-version, anthropic-beta), lower
 * case, and value printable, without CR or LF. */
int	 ipc_http_header_ok(const char *line, size_t len);
/* 1 for "anthropic", "responses", "openai". */
int	 ipc_http_wire_ok(const char *wire);
/* 1 if path is one the wire serves (anthropic: /v1/messages and
 * /v1/messages/count_tokens; responses: /v1/responses; openai:
 * /v1/chat/completions), with at most a query of [A-Za-z0-9=&_.-]. */
int	 ipc_http_path_ok(const char *wire, const char *path);

/* decode.c: typed decoders. */
/* Decode exactly one map of len bytes into owned copies (data may go
   right after); -1 with err filled and m zeroed. */
int	 ipc_msg_decode(const void *data, size_t len, struct ipc_msg *m,
	    char *err, size_t errsz);
void	 ipc_msg_free(struct ipc_msg *m);

/* describe.c: one bounded, escaped line per message (the -T ipc trace). */
size_t	 ipc_msg_describe(const struct ipc_msg *m, char *dst, size_t dstsz);

/* perm.c: which side may send which type in which state. */
/*
 * Check that from may send m now and advance p's state and pending
 * requests: 0 if permitted, -1 with p->err filled if not.
 */
int	 ipc_perm_check(struct ipc_peer *p, enum ipc_side from,
	    const struct ipc_msg *m);

#endif

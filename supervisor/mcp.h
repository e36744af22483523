/*
 * MCP servers as an agent's tools (docs/mcp.md, "MCP servers as an
 * agent's tools"): the servers declared in mcp.json, each started as a
 * sandboxed sibling of the worker that uses it (through the spawn server,
 * every layer applied before its exec), its stdio pipes held here, in the
 * supervisor, which speaks JSON-RPC 2.0 to it (MCP's stdio transport: one
 * JSON object a line) without ever blocking its loop. A worker's call of
 * mcp__SERVER__TOOL comes as an IPC mcp request and goes back as mcp_ok or
 * mcp_err; everything a server prints is hostile input.
 */
#ifndef WARREN_MCP_H
#define WARREN_MCP_H

#include <stddef.h>
#include <stdint.h>

#include <jansson.h>

#include "common/buf.h"
#include "common/msg.h"
#include "ipc/ipc.h"
#include "sandbox/sandbox.h"

struct run;
struct worker;
struct spawn_child;

#define MCP_PREFIX		"mcp__"
#define MCP_SEP			"__"
#define MCP_NAME_MAX		24	/* bytes of a server's name */
#define MCP_TOOL_NAME_MAX	64	/* bytes of mcp__SERVER__TOOL */
#define MCP_DESC_MAX		2048	/* bytes of a tool's description */
#define MCP_SCHEMA_MAX		(32u * 1024)	/* bytes of an inputSchema */
#define MCP_LINE_MAX		(4u * 1024 * 1024)	/* one JSON-RPC message */
#define MCP_RESULT_MAX		(256u * 1024)	/* text of one call's result */
#define MCP_READ_MAX		(16u * 1024 * 1024)	/* bytes read for one
						   answer: beyond, killed */
#define MCP_OUT_MAX		(8u * 1024 * 1024)	/* bytes queued for
						   its stdin: beyond, refused */
#define MCP_TIMEOUT_MS		60000	/* per call, unless timeout_ms */
#define MCP_START_MS		30000	/* initialize + tools/list */
/* MCP tools one agent is offered, all its servers together: with its
 * profile's own (PROFILE_MAX_TOOLS) and the agent's (complete, fail,
 * todo, note) within the IPC_TOOLS_MAX an LLM request carries. */
#define MCP_TOOLS_MAX		(IPC_TOOLS_MAX - 16 - 8)
#define MCP_ARGS_MAX		32
#define MCP_ENV_MAX		16
#define MCP_PROTOCOL		"2025-06-18"

/* One server as declared in an mcp.json. */
struct mcp_entry {
	char		*name;
	char		*command;
	char		*args[MCP_ARGS_MAX];
	size_t		 nargs;
	char		*env[MCP_ENV_MAX];	/* "KEY=VALUE" */
	size_t		 nenv;
	char		*read[SANDBOX_READ_MAX];	/* extra read-only paths */
	size_t		 nread;
	int		 network;	/* user's file only */
	uint64_t	 timeout_ms;	/* per call; 0: MCP_TIMEOUT_MS */
	int		 project;	/* from the workspace's .mcp.json */
	char		*file;		/* where it was declared */
};

struct mcp_config {
	struct mcp_entry *v;
	size_t		  n;
};

/* mcp_config.c: the mcpServers of an mcp.json */
/*
 * Add the servers of one file's text. project: the workspace's .mcp.json
 * (trusted by the user): an entry may not grant network, read paths or
 * env (each is dropped, with one warning line in warn), and one whose
 * name the user's file declares is ignored. -1 with err naming file and
 * the fault (nothing added then).
 */
int	 mcp_config_parse(struct mcp_config *c, const char *text, size_t len,
	    const char *file, int project, char *warn, size_t warnsz,
	    char *err, size_t errsz);
const struct mcp_entry *mcp_config_find(const struct mcp_config *c,
	    const char *name);
void	 mcp_config_free(struct mcp_config *c);
/* "mcp__fs__read_text_file" -> server "fs" (in out); 0, or -1 if name is
 * no MCP tool name. tool: what follows the server ("" for "mcp__fs"). */
int	 mcp_split(const char *name, char *server, size_t serversz,
	    const char **tool);

/* mcp_rpc.c: JSON-RPC 2.0 over lines, every answer bounded */
struct mcp_lines {
	struct buf	 in;		/* bytes after the last newline */
	size_t		 read;		/* bytes read since the last answer */
};
/* Append a request (params may be NULL; stolen) as one line to out. */
int	 mcp_rpc_request(struct buf *out, uint64_t id, const char *method,
	    json_t *params);
int	 mcp_rpc_note(struct buf *out, const char *method);
/* Take n bytes; 0, or -1 when one line passes MCP_LINE_MAX (err). */
int	 mcp_lines_feed(struct mcp_lines *l, const char *p, size_t n,
	    char *err, size_t errsz);
/* The next whole line as a JSON object: 1 (*msg), 0 none left, -1 a line
 * that is no JSON object (err; the line is dropped). */
int	 mcp_lines_next(struct mcp_lines *l, json_t **msg, char *err,
	    size_t errsz);
void	 mcp_lines_free(struct mcp_lines *l);
/* An answer to request id: 1 with *result (borrowed) or an error text in
 * err, 0 if msg answers nothing of ours (a notification, a request). */
int	 mcp_rpc_answer(json_t *msg, uint64_t *id, json_t **result,
	    char *err, size_t errsz);
/* tools/list's result -> msg_tools named mcp__SERVER__TOOL, bounded;
 * -1 with err. */
int	 mcp_rpc_tools(const json_t *result, const char *server,
	    struct msg_tool **tools, size_t *ntools, char *err, size_t errsz);
/* tools/call's result -> text for the model (at most max bytes, escaped
 * where not UTF-8) and isError. */
char	*mcp_rpc_result_text(const json_t *result, size_t max, int *is_error);

/* mcp_sandbox.c: a server's sandbox policy */
/*
 * The policy of server e for an agent whose policy is agent: its
 * filesystem view (read-only where the agent's is), no network unless
 * the user's entry says so, and the program and the package directories
 * of its arguments readable and executable. argv0 gets the program's
 * absolute path. -1 with err.
 */
int	 mcp_sandbox_policy(const struct mcp_entry *e,
	    const struct sandbox_policy *agent, struct sandbox_policy *p,
	    char *prog, size_t progsz, char *err, size_t errsz);
/* How server e is started: its argv, the workers' clean environment
 * (no key) then the entry's, in a spawn request filled by
 * mcp_sandbox_launch; mcp_sandbox_launch_free frees it after the
 * request is sent. */
struct mcp_launch {
	char		*argv[MCP_ARGS_MAX + 2];
	char		*env[MCP_ENV_MAX + 8];
	char		**base;		/* spawn_env()'s, owned */
};
struct spawn_req;
void	 mcp_sandbox_launch(struct mcp_launch *l, const struct mcp_entry *e,
	    char *prog, const struct sandbox_policy *p, struct spawn_req *req);
void	 mcp_sandbox_launch_free(struct mcp_launch *l);
/* p in one line, for `warren mcp list`: the workspace and how, the
 * program, the paths read, the layers required. */
void	 mcp_sandbox_line(const struct sandbox_policy *p, char *out,
	    size_t outsz);

/* mcp_proc.c: the servers of a run's workers */
/* Start the servers w's profile names; 1 if start must wait for them
 * (mcp_ready calls proc back), 0 if there are none. */
int	 mcp_worker_start(struct worker *w);
/* The MCP tools w may call, once every server answered (borrowed). */
const struct msg_tool *mcp_worker_tools(struct worker *w, size_t *n);
/* Whether name is one of the MCP tools offered to w. */
int	 mcp_worker_offers(struct worker *w, const char *name);
/* Handle w's IPC mcp request (w->msg). */
void	 mcp_call(struct worker *w);
/* w is gone: kill its servers, answer nothing more. */
void	 mcp_worker_stop(struct worker *w);
/* The run ends: every server stopped and freed. */
void	 mcp_run_free(struct run *r);
/* The spawn server's answers about a server (cookie), and exits. 1 if
 * the cookie/pid was one of ours. */
int	 mcp_spawned(struct run *r, void *cookie, const struct spawn_child *c,
	    const char *err);
int	 mcp_exited(struct run *r, int pid);

#endif

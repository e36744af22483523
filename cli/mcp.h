/*
 * `warren mcp`: warren as an MCP server on stdio (docs/mcp.md, "warren as
 * an MCP server"). JSON-RPC 2.0, one message a line, from a client that is
 * hostile input. Every tool call is a child warren of its own (a run as
 * `warren run --json`, like a queue job: cli/queue_runner.c; the others
 * as `warren diff`, `warren runs --json`, ...), in its own process group,
 * watched by one poll() loop that keeps reading stdin meanwhile.
 */
#ifndef WARREN_MCP_H
#define WARREN_MCP_H

#include <sys/types.h>

#include <limits.h>
#include <stddef.h>
#include <stdint.h>

#include <jansson.h>

#include "cli/linebuf.h"
#include "cli/queue_work.h"

#define MCP_LINE_MAX	(4u << 20)	/* a longer request line is refused */
#define MCP_CALLS_MAX	16		/* tool calls in flight at once */
#define MCP_ROOTS_MAX	32		/* --root DIR, how many */
#define MCP_OUT_MAX	(1u << 20)	/* a tool's text, at most (cut) */
#define MCP_ERR_MAX	4096		/* a child's stderr kept (its tail) */
#define MCP_KILL_GRACE_MS	QRUN_KILL_GRACE_MS

/* JSON-RPC 2.0's error codes. */
#define MCP_EPARSE	-32700
#define MCP_EINVALID	-32600
#define MCP_ENOMETHOD	-32601
#define MCP_EPARAMS	-32602
#define MCP_EINTERNAL	-32603

struct mcp_server;
struct mcp_call;

/* A tool argument's type (mcp_tools.c checks each strictly). */
enum mcp_arg_type {
	MCP_ARG_STR,		/* a non-empty string */
	MCP_ARG_ID,		/* an integer >= 1 (a run or job id) */
	MCP_ARG_OBJ,		/* an object (a JSON Schema) */
	MCP_ARG_STRS,		/* an array of non-empty strings */
};

struct mcp_arg {
	const char		*name;
	enum mcp_arg_type	 type;
	int			 required;
	const char		*help;	/* for the model */
};

#define MCP_TOOL_ARGS_MAX	6
struct mcp_tool {
	const char	*name;
	const char	*help;		/* the tool's description */
	struct mcp_arg	 args[MCP_TOOL_ARGS_MAX];
	/* Start the call (args checked against the table): 0, or -1 after
	 * answering it (a tool error). */
	int		(*start)(struct mcp_server *, struct mcp_call *,
			    json_t *args);
	/* Its child ended: answer it. */
	void		(*done)(struct mcp_server *, struct mcp_call *);
};

/* A child warren that is not a run: its output, bounded. */
struct mcp_child {
	pid_t		 pid;		/* -1 once reaped */
	int		 out, err;	/* -1: closed */
	int		 status;
	char		*obuf;		/* stdout, the first MCP_OUT_MAX */
	size_t		 olen;
	int		 ocut;		/* more than MCP_OUT_MAX came */
	char		 ebuf[MCP_ERR_MAX];	/* stderr, its last bytes */
	size_t		 elen;
	uint64_t	 kill_at;	/* stopping: SIGKILL then (0: not) */
};

/* One tools/call in flight. */
struct mcp_call {
	json_t			*id;		/* the request's id */
	json_t			*token;		/* _meta.progressToken */
	const struct mcp_tool	*tool;
	unsigned		 progress;	/* notifications sent */
	int			 cancelled;	/* no answer: the client
						   gave it up */
	int			 is_run;
	struct qrun		 run;		/* is_run */
	struct mcp_child	 ch;		/* !is_run */
	char			*schema;	/* run: its schema's text */
	char			 ws[PATH_MAX];	/* the workspace it acts on */
};

struct mcp_server {
	char		*roots[MCP_ROOTS_MAX];	/* real paths */
	size_t		 nroots;
	int		 allow_apply;
	char		 exe[PATH_MAX];		/* this warren */
	char		 cwd[PATH_MAX];		/* real path */
	int		 initialized;
	struct mcp_call	*calls[MCP_CALLS_MAX];
	struct linebuf	 in;			/* stdin's lines */
	int		 eof;
	int		 out_failed;		/* stdout closed: stop */
};

/* mcp_server.c */
/* Serve on stdin/stdout until stdin ends; an exit code. */
int	mcp_serve(struct mcp_server *);
uint64_t mcp_now(void);

/* mcp_rpc.c: messages, checked and written */
/*
 * One request line (len bytes, no newline) into *req: 0, or an error
 * code (MCP_EPARSE, MCP_EINVALID) with why, and *id the request's id if
 * one could be read (else NULL: the answer's id is null). A notification
 * has no id: *req holds it and *id stays NULL.
 */
int	mcp_rpc_parse(const char *line, size_t len, json_t **req, json_t **id,
	    char *why, size_t whysz);
/* Each writes one message as a line on stdout (the results and params
 * given are taken); -1 if stdout failed. */
int	mcp_rpc_result(struct mcp_server *, json_t *id, json_t *result);
int	mcp_rpc_error(struct mcp_server *, json_t *id, int code,
	    const char *fmt, ...) __attribute__((format(printf, 4, 5)));
int	mcp_rpc_notify(struct mcp_server *, const char *method,
	    json_t *params);
/* A JSON string of untrusted bytes: as they are when UTF-8 without NUL,
 * else escaped (common/str.h). */
json_t	*mcp_rpc_text(const char *s, size_t len);

/* mcp_tools.c: the tools and their arguments */
extern const struct mcp_tool	mcp_tools[];
extern const size_t		mcp_ntools;
const struct mcp_tool *mcp_tool_find(const char *name);
json_t	*mcp_tools_list(void);
/* args against t's table: 0, or -1 with why (unknown, missing, a wrong
 * type). */
int	mcp_tool_check(const struct mcp_tool *t, json_t *args, char *why,
	    size_t whysz);
/* The answer to a call: content (text), isError, and structuredContent
 * if structured is not NULL (taken). Sends it; frees nothing else. */
void	mcp_tool_answer(struct mcp_server *, struct mcp_call *,
	    const char *text, size_t len, int is_error, json_t *structured);
void	mcp_tool_error(struct mcp_server *, struct mcp_call *,
	    const char *fmt, ...) __attribute__((format(printf, 3, 4)));

/* mcp_roots.c: where the server may act */
int	mcp_roots_add(struct mcp_server *, const char *dir, char *err,
	    size_t errsz);
/* The workspace a call names (NULL: the server's cwd), as a real path in
 * out, if it is a directory under a root: 0, or -1 with why. */
int	mcp_roots_workspace(const struct mcp_server *, const char *ws,
	    char *out, size_t outsz, char *why, size_t whysz);
/* Is the real path p under one of the roots? */
int	mcp_roots_under(const struct mcp_server *, const char *p);
/* The workspace run id ran in, from the state database, if it is under
 * a root: 0, or -1 with why (no such run, outside). */
int	mcp_roots_run(const struct mcp_server *, int64_t run, char *out,
	    size_t outsz, char *why, size_t whysz);

/* mcp_child.c: a child warren that is not a run */
/* Start exe with argv (argv[0] is "warren"), input (may be NULL) on its
 * stdin: 0, or -1 with err. */
int	mcp_child_start(struct mcp_child *, const char *exe,
	    char *const argv[], const char *input, char *err, size_t errsz);
void	mcp_child_read(struct mcp_child *, int fd);
void	mcp_child_stop(struct mcp_child *, uint64_t now);
void	mcp_child_tick(struct mcp_child *, uint64_t now);
int	mcp_child_reap(struct mcp_child *);
void	mcp_child_free(struct mcp_child *);
/* "exit 2" or "killed by signal 9" */
void	mcp_child_how(const struct mcp_child *, char *buf, size_t sz);

/* mcp_run.c: the run tool */
int	mcp_run_start(struct mcp_server *, struct mcp_call *, json_t *args);
void	mcp_run_done(struct mcp_server *, struct mcp_call *);
/* Progress from the run's last event, if it has a new one. */
void	mcp_run_progress(struct mcp_server *, struct mcp_call *);

/* mcp_cmds.c: the tools that run another warren command */
int	mcp_cmd_diff(struct mcp_server *, struct mcp_call *, json_t *args);
int	mcp_cmd_apply(struct mcp_server *, struct mcp_call *, json_t *args);
int	mcp_cmd_runs(struct mcp_server *, struct mcp_call *, json_t *args);
int	mcp_cmd_show(struct mcp_server *, struct mcp_call *, json_t *args);
int	mcp_cmd_queue_add(struct mcp_server *, struct mcp_call *,
	    json_t *args);
int	mcp_cmd_queue_status(struct mcp_server *, struct mcp_call *,
	    json_t *args);
/* The child's stdout as the answer; its stderr too when it failed. */
void	mcp_cmd_done(struct mcp_server *, struct mcp_call *);
void	mcp_cmd_queue_status_done(struct mcp_server *, struct mcp_call *);

#endif

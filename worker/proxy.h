/*
 * A backend's worker (docs/backends.md): instead of the reason-act loop,
 * it runs another agent program as its child and serves that program's
 * model requests on 127.0.0.1 in its own network namespace, carrying each
 * one over IPC to the supervisor (`http`), which passes it through to the
 * endpoint with the user's key. The program's standard output is the
 * agent's result.
 */
#ifndef WARREN_WORKER_PROXY_H
#define WARREN_WORKER_PROXY_H

#include <stddef.h>

#include "ipc/ipc.h"

/* The private HOME, in the sandbox's private /tmp (a mount namespace of
 * the worker's own): only this agent sees it, and it is gone with it. */
#define PROXY_HOME		"/tmp/warren-home"
#define PROXY_CONNS_MAX		16		/* connections at once */
#define PROXY_HEAD_MAX		(64u * 1024)	/* request line + headers */
#define PROXY_BODY_MAX		IPC_STR_MAX	/* a request body */
#define PROXY_OUT_MAX		(1024u * 1024)	/* stdout kept: the result */
#define PROXY_ERR_KEEP		2048		/* stderr tail kept: why */

struct worker_args;

/* The program a backend worker runs, from its argv (the supervisor's). */
struct proxy_cfg {
	const char	*backend;	/* "command", "claude-code", "codex" */
	const char	*program;	/* absolute */
	const char	*wire;		/* NULL: the launch's */
	const char	*model;		/* NULL: the program's default */
	char		*args[64];	/* --arg, in order */
	int		 nargs;
};

/* proxy.c */
/*
 * Run the backend for start s on peer (hello and start already done):
 * the program, its requests, its end as a done message. Returns the
 * worker's exit code; garbage from the supervisor is fatal.
 */
int	proxy_main(struct ipc_peer *peer, const struct worker_args *a,
	    const struct ipc_start *s);

/* proxy_http.c: one HTTP/1.1 request, parsed as it arrives. */
struct proxy_req {
	char	*head;		/* request line and headers, NUL-ended */
	size_t	 headlen;	/* bytes of the head, the blank line included */
	char	 method[16];
	char	 path[IPC_HTTP_PATH_MAX + 1];
	char	*headers[IPC_HTTP_HEADERS_MAX];	/* forwarded ones */
	size_t	 nheaders;
	int	 chunked;
	int	 expect100;
	size_t	 clen;		/* Content-Length */
	char	*body;		/* NUL-ended once complete */
	size_t	 bodylen;
};
/*
 * Parse what arrived in buf[0..len): 1 with r filled and *used the bytes
 * of this request, 0 when more is needed (*status 100 when the head asks
 * for 100-continue and it was not said yet), -1 with *status the HTTP
 * status to answer (400, 413, 431, 501) and why.
 */
int	proxy_http_parse(const char *buf, size_t len, struct proxy_req *r,
	    size_t *used, int *status, char *why, size_t whylen);
void	proxy_http_free(struct proxy_req *r);
/* 1 if method and path (before any '?') are what wire serves. */
int	proxy_http_route(const char *wire, const char *method,
	    const char *path);
/* A whole response in out (malloc'd), *outlen its bytes. */
int	proxy_http_response(int status, const char *ctype, const char *body,
	    size_t bodylen, char **out, size_t *outlen);
/* An error body in the wire's own shape, for the program to read. */
char	*proxy_http_error_body(const char *wire, const char *msg);

#endif

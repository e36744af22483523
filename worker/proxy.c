/*
 * A backend's worker: the program as its child, a proxy on 127.0.0.1 for
 * the program's model requests, and the supervisor over IPC for each of
 * them (docs/backends.md). One thread, one poll loop: the listening
 * socket, the program's connections, its stdout and stderr, and the
 * channel from the supervisor. The program is the worker's child, in its
 * process group, with the workspace as its working directory, the private
 * HOME, and an environment made from nothing (agent/backend.c).
 */
#include <sys/types.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>

#include <netinet/in.h>
#include <arpa/inet.h>

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "agent/backend.h"
#include "common/clock.h"
#include "common/log.h"
#include "common/xmalloc.h"
#include "ipc/ipc.h"
#include "worker/proxy.h"
#include "worker/worker.h"

enum conn_state {
	CONN_FREE = 0,
	CONN_READ,		/* reading a request */
	CONN_WAIT,		/* its request is with the supervisor */
	CONN_STREAM,		/* its answer streams in: parts are written
				   as they come, chunked */
	CONN_WRITE,		/* writing the answer (its end) */
};

struct conn {
	enum conn_state	 state;
	int		 fd;
	char		*in;
	size_t		 inlen, incap;
	char		*out;
	size_t		 outlen, outoff;
	uint32_t	 id;		/* the http request, in CONN_WAIT */
	int		 said100;
	int		 close_after;
};

struct proxy {
	struct ipc_peer		*peer;
	const struct worker_args *args;
	struct backend_launch	 launch;
	int			 lfd;
	char			 base_url[64];
	struct conn		 conns[PROXY_CONNS_MAX];
	uint32_t		 nextid;
	pid_t			 pid;		/* the program, 0 once reaped */
	int			 wstatus;
	int			 outfd, errfd;
	char			*out;
	size_t			 outlen;
	int			 outcut;
	char			 errtail[PROXY_ERR_KEEP + 1];
	size_t			 errlen;
	int			 cancelled;
	char			 cancel_why[256];
	unsigned		 nrequests;
};

/* --- the program ----------------------------------------------------- */

static int
proxy_mkdirs(const char *path)
{
	char	buf[PATH_MAX], *s;

	if (strlcpy(buf, path, sizeof(buf)) >= sizeof(buf))
		return -1;
	for (s = buf + 1; *s != '\0'; s++) {
		if (*s != '/')
			continue;
		*s = '\0';
		if (mkdir(buf, 0700) == -1 && errno != EEXIST)
			return -1;
		*s = '/';
	}
	return mkdir(buf, 0700) == -1 && errno != EEXIST ? -1 : 0;
}

/* HOME and the launch's files in it (never through a symlink). */
static void
proxy_home(const struct backend_launch *l)
{
	char	path[PATH_MAX], *slash;
	int	i, fd;
	size_t	len;

	if (proxy_mkdirs(PROXY_HOME) == -1)
		fatal("backend: make its HOME %s", PROXY_HOME);
	for (i = 0; i < l->nfiles; i++) {
		if (strstr(l->files[i].path, "..") != NULL ||
		    l->files[i].path[0] == '/')
			fatalx("backend: file %s is not under HOME",
			    l->files[i].path);
		snprintf(path, sizeof(path), "%s/%s", PROXY_HOME,
		    l->files[i].path);
		if ((slash = strrchr(path, '/')) != NULL) {
			*slash = '\0';
			if (proxy_mkdirs(path) == -1)
				fatal("backend: mkdir %s", path);
			*slash = '/';
		}
		if ((fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW |
		    O_CLOEXEC, l->files[i].mode & 0777)) == -1)
			fatal("backend: write %s", path);
		len = strlen(l->files[i].content);
		if (write(fd, l->files[i].content, len) != (ssize_t)len)
			fatal("backend: write %s", path);
		close(fd);
	}
}

static void
proxy_listen(struct proxy *px)
{
	struct sockaddr_in	 sin;
	socklen_t		 slen = sizeof(sin);

	if ((px->lfd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC |
	    SOCK_NONBLOCK, 0)) == -1)
		fatal("backend: socket(AF_INET) for its proxy");
	memset(&sin, 0, sizeof(sin));
	sin.sin_family = AF_INET;
	sin.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	sin.sin_port = 0;
	if (bind(px->lfd, (struct sockaddr *)&sin, sizeof(sin)) == -1 ||
	    listen(px->lfd, PROXY_CONNS_MAX) == -1 ||
	    getsockname(px->lfd, (struct sockaddr *)&sin, &slen) == -1)
		fatal("backend: listen on 127.0.0.1");
	snprintf(px->base_url, sizeof(px->base_url), "http://127.0.0.1:%u",
	    (unsigned)ntohs(sin.sin_port));
}

static void __attribute__((noreturn))
proxy_child(const struct backend_launch *l, const char *workspace,
    int out[2], int err[2])
{
	int	null;

	signal(SIGXFSZ, SIG_DFL);
	signal(SIGPIPE, SIG_DFL);
	signal(SIGXCPU, SIG_DFL);
	signal(SIGTERM, SIG_DFL);
	if ((null = open("/dev/null", O_RDONLY)) == -1 ||
	    dup2(null, 0) == -1 || dup2(out[1], 1) == -1 ||
	    dup2(err[1], 2) == -1)
		_exit(126);
	if (chdir(workspace) == -1) {
		dprintf(2, "backend: chdir %s: %s\n", workspace,
		    strerror(errno));
		_exit(126);
	}
	execve(l->argv[0], l->argv, l->envp);
	dprintf(2, "backend: exec %s: %s\n", l->argv[0], strerror(errno));
	_exit(127);
}

static void
proxy_spawn(struct proxy *px, const char *workspace)
{
	int	out[2], err[2];

	if (pipe2(out, O_CLOEXEC) == -1 || pipe2(err, O_CLOEXEC) == -1)
		fatal("backend: pipe");
	if ((px->pid = fork()) == -1)
		fatal("backend: fork");
	if (px->pid == 0)
		proxy_child(&px->launch, workspace, out, err);
	close(out[1]);
	close(err[1]);
	px->outfd = out[0];
	px->errfd = err[0];
	log_info("backend %s: started %s (pid %d), its model at %s",
	    px->args->backend.backend, px->launch.argv[0], (int)px->pid, px->base_url);
}

/* Its stdout is the result (bounded); of its stderr the tail is kept. */
static void
proxy_read_out(struct proxy *px, int *fd, int is_err)
{
	char	buf[8192];
	ssize_t	n;
	size_t	k;

	if ((n = read(*fd, buf, sizeof(buf))) <= 0) {
		if (n == -1 && errno == EINTR)
			return;
		close(*fd);
		*fd = -1;
		return;
	}
	if (is_err) {
		k = (size_t)n > PROXY_ERR_KEEP ? PROXY_ERR_KEEP : (size_t)n;
		if (px->errlen + k > PROXY_ERR_KEEP) {
			memmove(px->errtail, px->errtail + (px->errlen + k -
			    PROXY_ERR_KEEP), PROXY_ERR_KEEP - k);
			px->errlen = PROXY_ERR_KEEP - k;
		}
		memcpy(px->errtail + px->errlen, buf + n - k, k);
		px->errlen += k;
		px->errtail[px->errlen] = '\0';
		return;
	}
	k = (size_t)n;
	if (px->outlen + k > PROXY_OUT_MAX) {
		k = PROXY_OUT_MAX - px->outlen;
		px->outcut = 1;
	}
	px->out = xreallocarray(px->out, px->outlen + k + 1, 1);
	memcpy(px->out + px->outlen, buf, k);
	px->outlen += k;
	px->out[px->outlen] = '\0';
}

/* Reap: the program, and any orphan of it (we are pid 1). */
static void
proxy_reap(struct proxy *px)
{
	pid_t	pid;
	int	st;

	while ((pid = waitpid(-1, &st, WNOHANG)) > 0)
		if (pid == px->pid) {
			px->wstatus = st;
			px->pid = 0;
		}
}

/* --- connections ------------------------------------------------------ */

static void
proxy_conn_close(struct conn *c)
{
	if (c->fd != -1)
		close(c->fd);
	free(c->in);
	free(c->out);
	memset(c, 0, sizeof(*c));
	c->fd = -1;
}

static void
proxy_conn_answer(struct conn *c, int status, const char *ctype,
    const char *body, size_t bodylen)
{
	free(c->out);
	c->out = NULL;
	if (proxy_http_response(status, ctype, body, bodylen, &c->out,
	    &c->outlen) == -1) {
		c->close_after = 1;
		c->outlen = 0;
	}
	c->outoff = 0;
	c->state = CONN_WRITE;
}

static void
proxy_conn_error(struct proxy *px, struct conn *c, int status,
    const char *msg)
{
	char	*body = proxy_http_error_body(px->launch.wire, msg);

	proxy_conn_answer(c, status, "application/json", body ? body : "{}",
	    body ? strlen(body) : 2);
	free(body);
}

static void
proxy_accept(struct proxy *px)
{
	struct conn	*c = NULL;
	int		 fd, i;

	if ((fd = accept4(px->lfd, NULL, NULL, SOCK_CLOEXEC |
	    SOCK_NONBLOCK)) == -1)
		return;
	for (i = 0; i < PROXY_CONNS_MAX; i++)
		if (px->conns[i].state == CONN_FREE) {
			c = &px->conns[i];
			break;
		}
	if (c == NULL) {
		close(fd);	/* more than PROXY_CONNS_MAX at once */
		return;
	}
	memset(c, 0, sizeof(*c));
	c->fd = fd;
	c->state = CONN_READ;
}

/* A whole request: to the supervisor, or answered here. */
static void
proxy_request(struct proxy *px, struct conn *c, struct proxy_req *r)
{
	struct ipc_msg	m;
	size_t		i;

	if (!proxy_http_route(px->launch.wire, r->method, r->path)) {
		proxy_conn_error(px, c, 404, "warren serves only POST to the "
		    "API paths of this agent's wire");
		return;
	}
	memset(&m, 0, sizeof(m));
	m.type = IPC_HTTP;
	m.u.http.id = c->id = ++px->nextid;
	m.u.http.wire = (char *)(uintptr_t)px->launch.wire;
	m.u.http.method = r->method;
	m.u.http.path = r->path;
	for (i = 0; i < r->nheaders; i++)
		m.u.http.headers[i] = r->headers[i];
	m.u.http.nheaders = r->nheaders;
	m.u.http.body = r->body != NULL ? r->body : (char *)(uintptr_t)"";
	if (ipc_peer_queue(px->peer, &m) == -1)
		fatalx("send http to the supervisor: %s", px->peer->err);
	if (ipc_peer_drain(px->peer, -1) == -1)
		fatalx("write to the supervisor: %s", px->peer->err);
	c->state = CONN_WAIT;
	px->nrequests++;
}

static void	proxy_conn_parse(struct proxy *, struct conn *);

static void
proxy_conn_read(struct proxy *px, struct conn *c)
{
	ssize_t			 n;

	if (c->incap - c->inlen < 16384) {
		if (c->incap > PROXY_HEAD_MAX + PROXY_BODY_MAX + 65536) {
			proxy_conn_error(px, c, 413, "request too large");
			c->close_after = 1;
			return;
		}
		c->incap = c->incap * 2 + 65536;
		c->in = xreallocarray(c->in, c->incap, 1);
	}
	if ((n = read(c->fd, c->in + c->inlen, c->incap - c->inlen)) <= 0) {
		if (n == -1 && (errno == EAGAIN || errno == EINTR))
			return;
		proxy_conn_close(c);
		return;
	}
	c->inlen += (size_t)n;
	proxy_conn_parse(px, c);
}

/* What arrived so far: a whole request goes on, or an error answers. */
static void
proxy_conn_parse(struct proxy *px, struct conn *c)
{
	struct proxy_req	 r;
	char			 why[160];
	size_t			 used = 0;
	int			 rc, status;

	memset(&r, 0, sizeof(r));
	rc = proxy_http_parse(c->in, c->inlen, &r, &used, &status, why,
	    sizeof(why));
	if (rc == 0 && status == 100 && !c->said100) {
		c->said100 = 1;
		(void)!write(c->fd, "HTTP/1.1 100 Continue\r\n\r\n", 25);
	}
	if (rc == -1) {
		proxy_conn_error(px, c, status, why);
		c->close_after = 1;
	} else if (rc == 1) {
		memmove(c->in, c->in + used, c->inlen - used);
		c->inlen -= used;
		c->said100 = 0;
		proxy_request(px, c, &r);
	}
	proxy_http_free(&r);
}

static void
proxy_conn_write(struct proxy *px, struct conn *c)
{
	ssize_t	n;

	while (c->outoff < c->outlen) {
		n = write(c->fd, c->out + c->outoff, c->outlen - c->outoff);
		if (n == -1 && errno == EAGAIN)
			return;
		if (n <= 0) {
			proxy_conn_close(c);
			return;
		}
		c->outoff += (size_t)n;
	}
	free(c->out);
	c->out = NULL;
	c->outlen = c->outoff = 0;
	if (c->state == CONN_STREAM)
		return;		/* more parts to come */
	if (c->close_after)
		proxy_conn_close(c);
	else {
		c->state = CONN_READ;
		/* A request that came in behind the last one. */
		if (c->inlen > 0)
			proxy_conn_parse(px, c);
	}
}

/* --- the supervisor's answers ----------------------------------------- */

static struct conn *
proxy_conn_by_id(struct proxy *px, uint32_t id)
{
	int	i;

	for (i = 0; i < PROXY_CONNS_MAX; i++)
		if ((px->conns[i].state == CONN_WAIT ||
		    px->conns[i].state == CONN_STREAM) &&
		    px->conns[i].id == id)
			return &px->conns[i];
	return NULL;
}

/* Append to what the connection has still to write. */
static void
proxy_conn_add(struct conn *c, const char *s, size_t len)
{
	c->out = xreallocarray(c->out, c->outlen + len + 1, 1);
	memcpy(c->out + c->outlen, s, len);
	c->outlen += len;
}

static void
proxy_conn_chunk(struct conn *c, const char *s, size_t len)
{
	char	head[32];

	if (len == 0)
		return;
	snprintf(head, sizeof(head), "%zx\r\n", len);
	proxy_conn_add(c, head, strlen(head));
	proxy_conn_add(c, s, len);
	proxy_conn_add(c, "\r\n", 2);
}

/*
 * A part of a streamed answer (http_ok with more): the first writes the
 * head (chunked), each is one chunk; the end (http_ok) the last chunk. An
 * error after parts can only cut the connection.
 */
static void
proxy_conn_part(struct conn *c, const struct ipc_http_ok *o)
{
	char	head[512];

	if (c->state == CONN_WAIT) {
		snprintf(head, sizeof(head), "HTTP/1.1 %u OK\r\nContent-Type: "
		    "%s\r\nTransfer-Encoding: chunked\r\nCache-Control: "
		    "no-cache\r\n\r\n", o->status, *o->content_type != '\0' ?
		    o->content_type : "text/event-stream");
		free(c->out);
		c->out = NULL;
		c->outlen = c->outoff = 0;
		proxy_conn_add(c, head, strlen(head));
		c->state = CONN_STREAM;
	}
	proxy_conn_chunk(c, o->body, strlen(o->body));
	if (!o->more) {
		proxy_conn_add(c, "0\r\n\r\n", 5);
		c->state = CONN_WRITE;
	}
}

static int
proxy_err_status(const char *code)
{
	if (strcmp(code, IPC_ERR_BUDGET) == 0 ||
	    strcmp(code, IPC_ERR_CANCELLED) == 0 ||
	    strcmp(code, IPC_ERR_REFUSED) == 0 ||
	    strcmp(code, IPC_ERR_REPLAY_MISSING) == 0)
		return 400;	/* not worth the program's retry */
	return 502;
}

static void
proxy_dispatch(struct proxy *px, struct ipc_msg *m)
{
	struct conn	*c;

	switch (m->type) {
	case IPC_CANCEL:
		px->cancelled = 1;
		snprintf(px->cancel_why, sizeof(px->cancel_why), "%s",
		    m->u.cancel.reason);
		break;
	case IPC_HTTP_OK:
		/* A connection the program closed meanwhile: dropped. */
		if ((c = proxy_conn_by_id(px, m->u.http_ok.id)) == NULL)
			break;
		if (m->u.http_ok.more || c->state == CONN_STREAM)
			proxy_conn_part(c, &m->u.http_ok);
		else
			proxy_conn_answer(c, (int)m->u.http_ok.status,
			    m->u.http_ok.content_type, m->u.http_ok.body,
			    strlen(m->u.http_ok.body));
		break;
	case IPC_HTTP_ERR:
		if ((c = proxy_conn_by_id(px, m->u.http_err.id)) == NULL)
			break;
		if (c->state == CONN_STREAM) {
			log_warnx("backend: its stream broke: %s",
			    m->u.http_err.message);
			proxy_conn_close(c);
		} else
			proxy_conn_error(px, c, proxy_err_status(
			    m->u.http_err.code), m->u.http_err.message);
		break;
	case IPC_NONE:
	case IPC_HELLO:
	case IPC_START:
	case IPC_LLM:
	case IPC_LLM_OK:
	case IPC_LLM_ERR:
	case IPC_SPAWN:
	case IPC_SPAWN_OK:
	case IPC_SPAWN_ERR:
	case IPC_EVENT:
	case IPC_CHECKPOINT:
	case IPC_MCP:
	case IPC_MCP_OK:
	case IPC_MCP_ERR:
	case IPC_HTTP:
	case IPC_DONE:
	default:
		fatalx("unexpected %s from the supervisor",
		    ipc_type_name(m->type));
	}
}

static void
proxy_read_peer(struct proxy *px)
{
	struct ipc_msg	m;
	ssize_t		n;
	int		rc;

	if ((n = ipc_peer_fill(px->peer)) == 0)
		fatalx("the supervisor closed the channel");
	if (n == -1 && errno != EAGAIN && errno != EINTR)
		fatal("read from the supervisor");
	while ((rc = ipc_peer_get(px->peer, &m)) == 1) {
		proxy_dispatch(px, &m);
		ipc_msg_free(&m);
	}
	if (rc == -1)
		fatalx("from the supervisor: %s", px->peer->err);
}

/* --- the loop -------------------------------------------------------- */

static void
proxy_loop(struct proxy *px)
{
	struct pollfd	 pfd[PROXY_CONNS_MAX + 4];
	struct conn	*map[PROXY_CONNS_MAX + 4];
	uint64_t	 ended = 0;
	int		 n, i, killed = 0;

	/* Until the program is gone and its output read; what it left
	 * running that holds its stdout gets a second, then dies with us
	 * (pid 1 of the namespace). */
	while (px->pid != 0 || ((px->outfd != -1 || px->errfd != -1) &&
	    (ended == 0 || clock_mono_ms() < ended + 1000))) {
		if (px->pid == 0 && ended == 0)
			ended = clock_mono_ms();
		if (px->cancelled && !killed && px->pid != 0) {
			/* Its process group is ours: we ignore it. */
			signal(SIGTERM, SIG_IGN);
			kill(-getpgrp(), SIGTERM);
			killed = 1;
		}
		n = 0;
		pfd[n].fd = px->peer->rfd;
		pfd[n].events = POLLIN;
		map[n++] = NULL;
		pfd[n].fd = px->lfd;
		pfd[n].events = POLLIN;
		map[n++] = NULL;
		pfd[n].fd = px->outfd;
		pfd[n].events = POLLIN;
		map[n++] = NULL;
		pfd[n].fd = px->errfd;
		pfd[n].events = POLLIN;
		map[n++] = NULL;
		for (i = 0; i < PROXY_CONNS_MAX; i++) {
			struct conn	*c = &px->conns[i];

			if (c->state == CONN_FREE || c->state == CONN_WAIT ||
			    (c->state == CONN_STREAM && c->outoff == c->outlen))
				continue;
			pfd[n].fd = c->fd;
			pfd[n].events = c->state == CONN_READ ? POLLIN :
			    POLLOUT;
			map[n++] = c;
		}
		if (poll(pfd, (nfds_t)n, 100) == -1 && errno != EINTR)
			fatal("poll");
		if (pfd[0].revents & (POLLIN | POLLHUP))
			proxy_read_peer(px);
		if (pfd[1].revents & POLLIN)
			proxy_accept(px);
		if (px->outfd != -1 && (pfd[2].revents & (POLLIN | POLLHUP)))
			proxy_read_out(px, &px->outfd, 0);
		if (px->errfd != -1 && (pfd[3].revents & (POLLIN | POLLHUP)))
			proxy_read_out(px, &px->errfd, 1);
		for (i = 4; i < n; i++) {
			if (map[i]->state == CONN_READ &&
			    (pfd[i].revents & (POLLIN | POLLHUP | POLLERR)))
				proxy_conn_read(px, map[i]);
			else if ((map[i]->state == CONN_WRITE ||
			    map[i]->state == CONN_STREAM) &&
			    (pfd[i].revents & (POLLOUT | POLLHUP | POLLERR)))
				proxy_conn_write(px, map[i]);
		}
		proxy_reap(px);
	}
}

/* --- start and end ----------------------------------------------------- */

static void
proxy_launch(struct proxy *px, const struct proxy_cfg *cfg,
    const struct ipc_start *s)
{
	struct backend_args	 ba;
	enum backend_kind	 k;
	char			 err[512];

	if (backend_parse(cfg->backend, &k) == -1 || k == BACKEND_LOOP)
		fatalx("backend %s: not a backend", cfg->backend);
	memset(&ba, 0, sizeof(ba));
	ba.program = cfg->program;
	ba.args = cfg->args;
	ba.task = s->task;
	ba.base_url = px->base_url;
	ba.home = PROXY_HOME;
	ba.workspace = s->workspace;
	ba.model = cfg->model;
	ba.prompt = s->profile.prompt != NULL && *s->profile.prompt != '\0' ?
	    s->profile.prompt : NULL;
	ba.wire = cfg->wire;
	if (backend_launch_build(k, &ba, &px->launch, err, sizeof(err)) == -1)
		fatalx("backend %s: %s", cfg->backend, err);
}

/* What the store keeps of it: the task and the program's answer. */
static void
proxy_checkpoint(struct proxy *px, const struct ipc_start *s,
    const char *result)
{
	struct ipc_msg	m;
	struct msg_list	l;

	msg_list_init(&l);
	msg_list_add_text(&l, MSG_USER, s->task);
	msg_list_add_text(&l, MSG_ASSISTANT, result);
	memset(&m, 0, sizeof(m));
	m.type = IPC_CHECKPOINT;
	m.u.checkpoint.seq = 0;
	m.u.checkpoint.messages = l;
	if (ipc_peer_queue(px->peer, &m) == -1)
		fatalx("send checkpoint: %s", px->peer->err);
	msg_list_free(&l);
}

static void
proxy_done(struct proxy *px, const struct ipc_start *s)
{
	struct ipc_msg	 m;
	char		 reason[PROXY_ERR_KEEP + 256], *result;
	int		 ok;

	result = px->out != NULL ? px->out : xstrdup("");
	px->out = NULL;
	while (*result != '\0' && strchr(" \t\r\n", result[strlen(result) -
	    1]) != NULL)
		result[strlen(result) - 1] = '\0';
	ok = !px->cancelled && WIFEXITED(px->wstatus) &&
	    WEXITSTATUS(px->wstatus) == 0;
	memset(&m, 0, sizeof(m));
	m.type = IPC_DONE;
	m.u.done.status = px->cancelled ? IPC_STATUS_LIMIT : ok ?
	    IPC_STATUS_COMPLETE : IPC_STATUS_FAIL;
	if (px->cancelled)
		snprintf(reason, sizeof(reason), "cancelled: %s",
		    px->cancel_why);
	else if (WIFEXITED(px->wstatus))
		snprintf(reason, sizeof(reason), "%s exited with status %d "
		    "after %u model requests%s%s", px->launch.argv[0],
		    WEXITSTATUS(px->wstatus), px->nrequests,
		    px->errlen > 0 && !ok ? "; its stderr ends: " : "",
		    !ok ? px->errtail : "");
	else
		snprintf(reason, sizeof(reason), "%s was killed by signal %d",
		    px->launch.argv[0], WTERMSIG(px->wstatus));
	if (!ok && *result == '\0') {
		free(result);
		result = xstrdup(reason);
	}
	if (px->outcut)
		log_warnx("backend: its output was cut at %u bytes",
		    PROXY_OUT_MAX);
	proxy_checkpoint(px, s, result);
	m.u.done.result = result;
	m.u.done.reason = reason;
	m.u.done.iterations = px->nrequests;
	log_sethook(NULL, NULL);
	if (ipc_peer_queue(px->peer, &m) == -1 ||
	    ipc_peer_drain(px->peer, -1) == -1)
		fatalx("send done: %s", px->peer->err);
	free(result);
}

int
proxy_main(struct ipc_peer *peer, const struct worker_args *a,
    const struct ipc_start *s)
{
	struct proxy	 px;
	int		 i;

	memset(&px, 0, sizeof(px));
	px.peer = peer;
	px.args = a;
	px.outfd = px.errfd = -1;
	for (i = 0; i < PROXY_CONNS_MAX; i++)
		px.conns[i].fd = -1;
	signal(SIGPIPE, SIG_IGN);
	proxy_listen(&px);
	proxy_launch(&px, &a->backend, s);
	proxy_home(&px.launch);
	proxy_spawn(&px, s->workspace);
	proxy_loop(&px);
	proxy_done(&px, s);
	for (i = 0; i < PROXY_CONNS_MAX; i++)
		if (px.conns[i].state != CONN_FREE)
			proxy_conn_close(&px.conns[i]);
	close(px.lfd);
	backend_launch_free(&px.launch);
	return 0;
}

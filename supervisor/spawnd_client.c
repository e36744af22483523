/*
 * warren's side of the spawn server (spawnd/spawnd.c): fork the server,
 * send it requests, read its answers in the event loop. The server is a
 * process of its own; what crosses between the two is spawnd/spawnd.h.
 */
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/types.h>
#include <sys/wait.h>

#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <sys/epoll.h>

#include "common/log.h"
#include "common/xmalloc.h"
#include "spawnd/spawn.h"
#include "spawnd/spawnd.h"
#include "supervisor/loop.h"
#include "supervisor/spawnd_client.h"
#include "supervisor/spawnd_client_testapi.h"
#include "workspace/cow.h"

/* A SPAWN sent, its SPAWNED not yet read. */
struct spawnd_client_req {
	uint32_t		 id;
	void			*cookie;	/* NULL: forgotten, kill it */
	struct spawnd_client_req	*next;
};

/* A packet the socket did not take yet: header and payload, no fds. */
struct spawnd_client_pkt {
	struct spawnd_client_pkt	*next;
	struct spawnd_hdr	 h;
	char			 data[];	/* h.len bytes */
};

/*
 * Nothing here blocks: a packet the socket's buffer does not take waits
 * in outq, and every later one behind it (requests keep their order),
 * until the socket is writable again (EPOLLOUT, spawnd_client_flush).
 * The queue holds at most SPAWND_CLIENT_INFLIGHT_MAX SPAWNs and one KILL
 * per worker and signal (a repeated one is dropped while it waits).
 */
struct spawnd_client {
	int			 fd;
	pid_t			 pid;
	uint32_t		 nextid;
	unsigned		 ninflight;
	struct spawnd_client_req	*inflight;
	struct spawnd_client_pkt	*outq, **outtail;
	size_t			 nout;
	struct loop		*loop;		/* NULL: the caller polls */
	int			 out_armed;	/* EPOLLOUT asked of loop */
	int			 dead;		/* a send failed: server gone */
};

static void	spawnd_client_arm(struct spawnd_client *);
static int	spawnd_client_recv(struct spawnd_client *, struct spawnd_hdr *,
		    char *, size_t, int *, int *, int);

/*
 * The server's answer to LAYER: READY, pid 0. Anything else (its error,
 * its death, silence) fails: the run must not go on.
 */
static int
spawnd_client_ready(struct spawnd_client *d, int *memfd, char *err,
    size_t errsz)
{
	struct spawnd_hdr	 h;
	struct pollfd		 pfd;
	char			 data[1024];
	int			 fds[3], nfds, i, rc;

	pfd.fd = d->fd;
	pfd.events = POLLIN;
	while ((rc = poll(&pfd, 1, SPAWND_READY_MS)) == -1 && errno == EINTR)
		;
	if (rc == 0) {
		snprintf(err, errsz, "the spawn server did not enter the "
		    "copy-on-write layer within %d s", SPAWND_READY_MS / 1000);
		return -1;
	}
	if (rc == -1 || spawnd_client_recv(d, &h, data, sizeof(data) - 1, fds,
	    &nfds, MSG_DONTWAIT) != 1) {
		snprintf(err, errsz, "the spawn server ended before it entered "
		    "the copy-on-write layer");
		return -1;
	}
	for (i = 0; i < nfds; i++)
		if (i > 0 || h.type != SPAWND_READY || h.pid != 0)
			close(fds[i]);
	*memfd = nfds > 0 && h.type == SPAWND_READY && h.pid == 0 ? fds[0] :
	    -1;
	data[h.len] = '\0';
	if (h.type != SPAWND_READY || h.pid != 0) {
		snprintf(err, errsz, "%s", h.type == SPAWND_READY && h.len > 0 ?
		    data : "the spawn server's first answer is not READY");
		return -1;
	}
	return 0;
}

int
spawnd_client_layer(struct spawnd_client *d, const struct cow *cow,
    int *memfd, char *err, size_t errsz)
{
	struct spawnd_hdr	 h;

	memset(&h, 0, sizeof(h));
	h.type = SPAWND_LAYER;
	h.len = sizeof(*cow);
	/* The first packet on an empty socket: it is taken whole. */
	if (d->nout != 0 || d->ninflight != 0 ||
	    spawnd_sendmsg(d->fd, &h, cow, NULL, 0) == -1) {
		snprintf(err, errsz, "the spawn server cannot be asked to "
		    "enter the layer: %s", d->nout != 0 || d->ninflight != 0 ?
		    "workers were asked for first" : strerror(errno));
		return -1;
	}
	return spawnd_client_ready(d, memfd, err, errsz);
}

struct spawnd_client *
spawnd_client_start(char *err, size_t errsz)
{
	struct spawnd_client	*d;
	int		 sv[2];
	pid_t		 pid, parent;

	if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC | SOCK_NONBLOCK,
	    0, sv) == -1) {
		snprintf(err, errsz, "socketpair: %s", strerror(errno));
		return NULL;
	}
	parent = getpid();
	if ((pid = fork()) == -1) {
		snprintf(err, errsz, "fork the spawn server: %s",
		    strerror(errno));
		close(sv[0]);
		close(sv[1]);
		return NULL;
	}
	if (pid == 0) {
		/* Nothing of warren's: another server's channel kept open
		 * here would hide warren's EOF from that server for good. */
		if (sv[1] > 3)
			(void)syscall(SYS_close_range, 3U,
			    (unsigned)sv[1] - 1, 0U);
		(void)syscall(SYS_close_range, (unsigned)sv[1] + 1, ~0U, 0U);
		spawnd_main(sv[1], parent);
	}
	close(sv[1]);
	d = xcalloc(1, sizeof(*d));
	d->fd = sv[0];
	d->pid = pid;
	d->outtail = &d->outq;
	return d;
}

void
spawnd_client_watch(struct spawnd_client *d, struct loop *l)
{
	d->loop = l;
	d->out_armed = 0;
	spawnd_client_arm(d);
}

size_t
spawnd_client_queued(const struct spawnd_client *d)
{
	return d->nout;
}

int
spawnd_client_full(const struct spawnd_client *d)
{
	return d->ninflight >= SPAWND_CLIENT_INFLIGHT_MAX;
}

int
spawnd_client_fd(const struct spawnd_client *d)
{
	return d->fd;
}

pid_t
spawnd_client_pid(const struct spawnd_client *d)
{
	return d->pid;
}

/* Ask the loop for EPOLLOUT while packets wait, and only then. */
static void
spawnd_client_arm(struct spawnd_client *d)
{
	int	want = d->outq != NULL;

	if (d->loop == NULL || want == d->out_armed)
		return;
	if (loop_mod_fd(d->loop, d->fd, EPOLLIN | (want ? EPOLLOUT : 0)) == -1)
		log_warn("epoll_ctl spawn server");	/* tried again */
	else
		d->out_armed = want;
}

/* Drop what waits: nobody will read it. */
static void
spawnd_client_drop(struct spawnd_client *d)
{
	struct spawnd_client_pkt	*o;

	while ((o = d->outq) != NULL) {
		d->outq = o->next;
		free(o);
	}
	d->outtail = &d->outq;
	d->nout = 0;
	spawnd_client_arm(d);
}

/* A send failed for good: the server is gone, its EOF follows. */
static void
spawnd_client_lost(struct spawnd_client *d)
{
	if (!d->dead)
		log_warn("spawn server");
	d->dead = 1;
	spawnd_client_drop(d);
}

/* Keep the packet (its parts gathered) until the socket takes it. */
static void
spawnd_client_enqueue(struct spawnd_client *d, const struct spawnd_hdr *h,
    const struct iovec *iov, int niov)
{
	struct spawnd_client_pkt	*o;
	size_t			 off = 0;
	int			 i;

	o = xcalloc(1, sizeof(*o) + h->len);
	o->h = *h;
	for (i = 1; i < niov; i++) {
		memcpy(o->data + off, iov[i].iov_base, iov[i].iov_len);
		off += iov[i].iov_len;
	}
	*d->outtail = o;
	d->outtail = &o->next;
	d->nout++;
	spawnd_client_arm(d);
}

/*
 * Send now if nothing waits and the socket takes it, else queue it: -1
 * only when the server is gone.
 */
static int
spawnd_client_send(struct spawnd_client *d, const struct spawnd_hdr *h,
    struct iovec *iov, int niov)
{
	if (d->dead)
		return -1;
	if (d->outq == NULL) {
		if (spawnd_sendv(d->fd, h, iov, niov, NULL, 0) == 0)
			return 0;
		if (errno != EAGAIN) {
			spawnd_client_lost(d);
			return -1;
		}
	}
	spawnd_client_enqueue(d, h, iov, niov);
	return 0;
}

int
spawnd_client_flush(struct spawnd_client *d)
{
	struct spawnd_client_pkt	*o;

	while ((o = d->outq) != NULL) {
		if (spawnd_sendmsg(d->fd, &o->h, o->data, NULL, 0) == -1) {
			if (errno == EAGAIN)
				break;
			spawnd_client_lost(d);
			return -1;
		}
		if ((d->outq = o->next) == NULL)
			d->outtail = &d->outq;
		d->nout--;
		free(o);
	}
	spawnd_client_arm(d);
	return d->outq != NULL;
}

/* Receive one packet (and up to 3 fds); -1 when the server is gone. */
static int
spawnd_client_recv(struct spawnd_client *d, struct spawnd_hdr *h, char *data,
    size_t max, int *fds, int *nfds, int flags)
{
	struct msghdr	 mh;
	struct iovec	 iov[2];
	char		 cbuf[CMSG_SPACE(sizeof(int) * 3)];
	struct cmsghdr	*cm;
	ssize_t		 n;

	memset(&mh, 0, sizeof(mh));
	iov[0].iov_base = h;
	iov[0].iov_len = sizeof(*h);
	iov[1].iov_base = data;
	iov[1].iov_len = max;
	mh.msg_iov = iov;
	mh.msg_iovlen = 2;
	mh.msg_control = cbuf;
	mh.msg_controllen = sizeof(cbuf);
	*nfds = 0;
	while ((n = recvmsg(d->fd, &mh, MSG_CMSG_CLOEXEC | flags)) == -1 &&
	    errno == EINTR)
		;
	if (n < (ssize_t)sizeof(*h))
		return n == -1 && errno == EAGAIN ? 0 : -1;
	for (cm = CMSG_FIRSTHDR(&mh); cm != NULL; cm = CMSG_NXTHDR(&mh, cm)) {
		if (cm->cmsg_level == SOL_SOCKET &&
		    cm->cmsg_type == SCM_RIGHTS) {
			*nfds = (int)((cm->cmsg_len - CMSG_LEN(0)) / sizeof(int));
			if (*nfds > 3)
				*nfds = 3;
			memcpy(fds, CMSG_DATA(cm), sizeof(int) * (size_t)*nfds);
		}
	}
	if (h->len > max)
		h->len = (uint32_t)max;
	return 1;
}

/* NUL-terminated strings of v appended at *p (*left bytes free). */
static int
spawnd_client_put(char **p, size_t *left, const char *const *v, uint32_t *n)
{
	size_t	l;

	for (*n = 0; v != NULL && v[*n] != NULL; (*n)++) {
		l = strlen(v[*n]) + 1;
		if (*n == SPAWND_ARGS_MAX || l > *left)
			return -1;
		memcpy(*p, v[*n], l);
		*p += l;
		*left -= l;
	}
	return 0;
}

/*
 * The request is the policy (sent from where it lies: it is most of the
 * 9 KB), the two counts, then argv (the path first) and envp as strings.
 */
uint32_t
spawnd_client_request(struct spawnd_client *d, const struct spawn_req *req,
    void *cookie, char *err, size_t errsz)
{
	struct spawnd_hdr	 h;
	struct spawnd_client_req	*q;
	struct iovec		 iov[4];
	const char		*args[SPAWND_ARGS_MAX + 2];
	char			 strs[SPAWND_STRS_MAX], *p = strs;
	size_t			 left = sizeof(strs);
	uint32_t		 counts[2];
	int			 i;

	args[0] = req->bin;
	for (i = 0; i < SPAWND_ARGS_MAX && req->argv[i] != NULL; i++)
		args[i + 1] = req->argv[i];
	args[i + 1] = NULL;
	if (spawnd_client_put(&p, &left, args, &counts[0]) == -1 ||
	    spawnd_client_put(&p, &left, (const char *const *)req->envp,
	    &counts[1]) == -1) {
		snprintf(err, errsz, "spawn request too large");
		return 0;
	}
	iov[1].iov_base = (void *)(uintptr_t)req->policy;
	iov[1].iov_len = sizeof(*req->policy);
	iov[2].iov_base = counts;
	iov[2].iov_len = sizeof(counts);
	iov[3].iov_base = strs;
	iov[3].iov_len = (size_t)(p - strs);
	if (++d->nextid == 0)
		d->nextid = 1;
	memset(&h, 0, sizeof(h));
	h.type = SPAWND_SPAWN;
	h.id = d->nextid;
	h.a = req->mode;
	h.len = (uint32_t)(iov[1].iov_len + iov[2].iov_len + iov[3].iov_len);
	if (spawnd_client_send(d, &h, iov, 4) == -1) {
		snprintf(err, errsz, "the spawn server is gone");
		return 0;
	}
	q = xcalloc(1, sizeof(*q));
	q->id = h.id;
	q->cookie = cookie;
	q->next = d->inflight;
	d->inflight = q;
	d->ninflight++;
	return h.id;
}

void
spawnd_client_forget(struct spawnd_client *d, uint32_t id)
{
	struct spawnd_client_req	*q;

	for (q = d->inflight; q != NULL; q = q->next)
		if (q->id == id)
			q->cookie = NULL;
}

/* Take the request id off the in-flight list; its cookie, NULL if gone. */
static int
spawnd_client_answered(struct spawnd_client *d, uint32_t id, void **cookie)
{
	struct spawnd_client_req	**pp, *q;

	for (pp = &d->inflight; (q = *pp) != NULL; pp = &q->next) {
		if (q->id != id)
			continue;
		*pp = q->next;
		*cookie = q->cookie;
		free(q);
		d->ninflight--;
		return 0;
	}
	return -1;
}

void
spawnd_client_kill(struct spawnd_client *d, pid_t pid, int signo)
{
	struct spawnd_client_pkt	*o;
	struct spawnd_hdr	 h;
	struct iovec		 iov[1];

	if (pid <= 0)
		return;
	/* The same KILL waits already: it says all this one would. */
	for (o = d->outq; o != NULL; o = o->next)
		if (o->h.type == SPAWND_KILL && o->h.pid == pid &&
		    o->h.a == signo)
			return;
	memset(&h, 0, sizeof(h));
	h.type = SPAWND_KILL;
	h.pid = pid;
	h.a = signo;
	(void)spawnd_client_send(d, &h, iov, 1);
}

/* A SPAWNED: the worker to whoever asked, or killed if nobody waits. */
static void
spawnd_client_on_spawned(struct spawnd_client *d, const struct spawnd_hdr *h,
    char *data, const int *fds, int nfds, const struct spawnd_client_ops *ops,
    void *arg)
{
	struct spawn_child	 c;
	struct rlimit		 rl;
	void			*cookie = NULL;
	char			 why[160];
	int			 i;

	if (spawnd_client_answered(d, h->id, &cookie) == -1 || cookie == NULL ||
	    h->pid <= 0 || nfds != 3) {
		for (i = 0; i < nfds; i++)
			close(fds[i]);
		if (h->pid > 0)		/* started, but not ours to talk to */
			spawnd_client_kill(d, h->pid, SIGKILL);
		if (cookie == NULL)
			return;
		data[h->len] = '\0';
		if (h->pid > 0) {
			/* The kernel drops fds it cannot install (MSG_CTRUNC). */
			getrlimit(RLIMIT_NOFILE, &rl);
			snprintf(why, sizeof(why), "the worker's pipes did not "
			    "arrive (%d of 3 fds): is the supervisor out of "
			    "file descriptors? (RLIMIT_NOFILE %llu, ulimit -n)",
			    nfds, (unsigned long long)rl.rlim_cur);
			data = why;
		}
		ops->spawned(cookie, NULL, h->pid > 0 || h->len ? data :
		    "spawn failed", arg);
		return;
	}
	memset(&c, 0, sizeof(c));
	c.pid = h->pid;
	c.to_fd = fds[0];
	c.from_fd = fds[1];
	c.err_fd = fds[2];
	c.sb = NULL;
	c.remote = 1;
	ops->spawned(cookie, &c, NULL, arg);
}

int
spawnd_client_read(struct spawnd_client *d, const struct spawnd_client_ops *ops,
    void *arg)
{
	struct spawnd_hdr	 h;
	char			 data[1024];
	int			 fds[3], nfds, i, rc;

	for (;;) {
		rc = spawnd_client_recv(d, &h, data, sizeof(data) - 1, fds,
		    &nfds, MSG_DONTWAIT);
		if (rc == -1) {
			d->dead = 1;	/* nothing more goes out */
			spawnd_client_drop(d);
		}
		if (rc != 1)
			return rc;
		switch (h.type) {
		case SPAWND_EXIT:
			for (i = 0; i < nfds; i++)
				close(fds[i]);
			ops->exited(h.pid, h.a, h.b, arg);
			break;
		case SPAWND_SPAWNED:
			spawnd_client_on_spawned(d, &h, data, fds, nfds, ops,
			    arg);
			break;
		default:
			for (i = 0; i < nfds; i++)
				close(fds[i]);
			break;
		}
	}
}

/* Cookies of requests still unanswered (the server is gone): each once. */
void *
spawnd_client_orphan(struct spawnd_client *d)
{
	struct spawnd_client_req	*q;
	void			*cookie;

	while ((q = d->inflight) != NULL) {
		d->inflight = q->next;
		d->ninflight--;
		cookie = q->cookie;
		free(q);
		if (cookie != NULL)
			return cookie;
	}
	return NULL;
}

void
spawnd_client_stop(struct spawnd_client *d)
{
	int	st;

	if (d == NULL)
		return;
	d->loop = NULL;		/* freed or not, it has no say any more */
	spawnd_client_drop(d);	/* what waits is moot: the server ends */
	close(d->fd);
	(void)waitpid(d->pid, &st, 0);
	while (spawnd_client_orphan(d) != NULL)
		;
	free(d);
}

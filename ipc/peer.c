/*
 * One end of a worker's pipe pair: a reader that keeps partial frames and
 * hands out whole, decoded, permitted messages, and a writer that queues
 * frames and writes what the pipe takes. The supervisor uses it with
 * non-blocking fds from its event loop (fill/get on POLLIN, flush on
 * POLLOUT); the worker uses the blocking helpers at the end.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "common/clock.h"
#include "common/fd.h"
#include "ipc/ipc.h"
#include "ipc/ipc_testapi.h"

/*
 * Bytes asked of one read() when no frame is partly read: several small
 * frames. A frame's rest is read in one call whatever its size. Small
 * enough that the buffer (twice this) stays in malloc's heap: at 256 KiB
 * every peer's buffer was a fresh mmap, page-faulted in and unmapped
 * with a TLB shootdown, per worker on both sides of the pipe.
 */
#define PEER_READ_CHUNK	(16u * 1024)

int
ipc_peer_pipes(int sup[2], int wrk[2])
{
	int	w2s[2], s2w[2], saved;

	if (pipe2(w2s, O_CLOEXEC) == -1)
		return -1;
	if (pipe2(s2w, O_CLOEXEC) == -1)
		goto fail1;
	if (fd_set_nonblock(w2s[0], 1) == -1 ||
	    fd_set_nonblock(s2w[1], 1) == -1)
		goto fail2;
	/* Best effort: a bigger pipe is faster, never required. */
	(void)ipc_frame_pipe_size(w2s[1], IPC_PIPE_SIZE);
	(void)ipc_frame_pipe_size(s2w[1], IPC_PIPE_SIZE);
	sup[0] = w2s[0];
	sup[1] = s2w[1];
	wrk[0] = s2w[0];
	wrk[1] = w2s[1];
	return 0;
fail2:
	saved = errno;
	close(s2w[0]);
	close(s2w[1]);
	errno = saved;
fail1:
	saved = errno;
	close(w2s[0]);
	close(w2s[1]);
	errno = saved;
	return -1;
}

void
ipc_peer_init(struct ipc_peer *p, int rfd, int wfd, enum ipc_side self)
{
	memset(p, 0, sizeof(*p));
	p->rfd = rfd;
	p->wfd = wfd;
	p->self = self;
	p->state = IPC_STATE_NEW;
	/* A whole frame plus the start of the next read. */
	buf_init(&p->in, IPC_HDR_LEN + IPC_FRAME_MAX + PEER_READ_CHUNK);
	buf_init(&p->out, IPC_QUEUE_MAX);
}

void
ipc_peer_free(struct ipc_peer *p)
{
	buf_free(&p->in);
	buf_free(&p->out);
}

static enum ipc_side
peer_other(const struct ipc_peer *p)
{
	return p->self == IPC_SIDE_WORKER ? IPC_SIDE_SUPERVISOR :
	    IPC_SIDE_WORKER;
}

/* Move unread bytes to the front, so the cap counts only live bytes. */
static void
peer_compact(struct buf *b)
{
	if (b->off == 0)
		return;
	memmove(b->data, b->data + b->off, b->len - b->off);
	b->len -= b->off;
	b->off = 0;
}

ssize_t
ipc_peer_fill(struct ipc_peer *p)
{
	size_t	want = PEER_READ_CHUNK, body, have;
	ssize_t	n;

	peer_compact(&p->in);
	have = buf_left(&p->in);
	/* A valid header: read the rest of its frame in one call. */
	if (ipc_frame_check(buf_head(&p->in), have, &body) == 0 &&
	    have >= IPC_HDR_LEN && IPC_HDR_LEN + body - have > want)
		want = IPC_HDR_LEN + body - have;
	if (buf_reserve(&p->in, want) == -1) {
		snprintf(p->err, sizeof(p->err), "input buffer: %s",
		    strerror(errno));
		return -1;
	}
	do
		n = read(p->rfd, p->in.data + p->in.len, want);
	while (n == -1 && errno == EINTR);
	if (n == -1) {
		if (errno != EAGAIN)
			snprintf(p->err, sizeof(p->err), "read: %s",
			    strerror(errno));
		return -1;
	}
	if (n == 0)
		p->eof = 1;
	p->drained = (size_t)n < want;
	p->in.len += (size_t)n;
	return n;
}

int
ipc_peer_get(struct ipc_peer *p, struct ipc_msg *m)
{
	char		 err[IPC_ERR_LEN - 16];
	size_t		 body;
	int		 rv;

	memset(m, 0, sizeof(*m));
	rv = ipc_frame_check(buf_head(&p->in), buf_left(&p->in), &body);
	if (rv == 0)
		return 0;
	if (rv == -1) {
		snprintf(p->err, sizeof(p->err), "bad frame: length %s",
		    errno == ERANGE ? "0" : "over 16 MiB");
		return -1;
	}
	if (ipc_msg_decode(buf_head(&p->in) + IPC_HDR_LEN, body, m, err,
	    sizeof(err)) == -1) {
		snprintf(p->err, sizeof(p->err), "bad message: %s", err);
		return -1;
	}
	buf_consume(&p->in, IPC_HDR_LEN + body);
	if (ipc_perm_check(p, peer_other(p), m) == -1) {
		ipc_msg_free(m);
		return -1;
	}
	return 1;
}

int
ipc_peer_queue(struct ipc_peer *p, const struct ipc_msg *m)
{
	size_t	mark = buf_left(&p->out);

	if (ipc_msg_frame(&p->out, m, p->err, sizeof(p->err)) == -1)
		return -1;
	if (ipc_perm_check(p, p->self, m) == -1) {
		p->out.len = p->out.off + mark;
		if (p->out.len == p->out.off)
			buf_reset(&p->out);
		errno = EPERM;
		return -1;
	}
	return 0;
}

int
ipc_peer_flush(struct ipc_peer *p)
{
	ssize_t	n;

	while (buf_left(&p->out) > 0) {
		n = write(p->wfd, buf_head(&p->out), buf_left(&p->out));
		if (n == -1) {
			if (errno == EINTR)
				continue;
			if (errno == EAGAIN)
				return 1;
			snprintf(p->err, sizeof(p->err), "write: %s",
			    strerror(errno));
			return -1;
		}
		buf_consume(&p->out, (size_t)n);
	}
	return 0;
}

size_t
ipc_peer_queued(const struct ipc_peer *p)
{
	return buf_left(&p->out);
}

/* Wait for fd to be ready; ETIMEDOUT once deadline (ms, 0: none) passes. */
static int
peer_wait(struct ipc_peer *p, int fd, short events, uint64_t deadline)
{
	struct pollfd	pfd = { fd, events, 0 };
	int		timeout = -1, rv;
	uint64_t	now;

	if (deadline != 0) {
		now = clock_mono_ms();
		if (now >= deadline) {
			snprintf(p->err, sizeof(p->err), "timed out");
			errno = ETIMEDOUT;
			return -1;
		}
		timeout = deadline - now > 1000000 ? 1000000 :
		    (int)(deadline - now);
	}
	rv = poll(&pfd, 1, timeout);
	if (rv == -1 && errno != EINTR) {
		snprintf(p->err, sizeof(p->err), "poll: %s", strerror(errno));
		return -1;
	}
	return 0;
}

static uint64_t
peer_deadline(int timeout_ms)
{
	return timeout_ms < 0 ? 0 : clock_mono_ms() + (uint64_t)timeout_ms + 1;
}

static int
peer_drain_until(struct ipc_peer *p, uint64_t deadline)
{
	int	rv;

	while ((rv = ipc_peer_flush(p)) == 1)
		if (peer_wait(p, p->wfd, POLLOUT, deadline) == -1)
			return -1;
	if (rv == -1 && errno == EPIPE)
		snprintf(p->err, sizeof(p->err), "write: the other side "
		    "closed the pipe");
	return rv;
}

int
ipc_peer_drain(struct ipc_peer *p, int timeout_ms)
{
	return peer_drain_until(p, peer_deadline(timeout_ms));
}

int
ipc_peer_send(struct ipc_peer *p, const struct ipc_msg *m, int timeout_ms)
{
	if (ipc_peer_queue(p, m) == -1)
		return -1;
	return ipc_peer_drain(p, timeout_ms);
}

int
ipc_peer_recv(struct ipc_peer *p, struct ipc_msg *m, int timeout_ms)
{
	uint64_t	deadline = peer_deadline(timeout_ms);
	ssize_t		n;
	int		rv;

	/* What we queued may be what the other side is waiting for. */
	if (peer_drain_until(p, deadline) == -1)
		return -1;
	for (;;) {
		if ((rv = ipc_peer_get(p, m)) == 1)
			return 0;
		if (rv == -1) {
			errno = EPROTO;
			return -1;
		}
		if (p->eof) {
			snprintf(p->err, sizeof(p->err), "the other side "
			    "closed the pipe%s", buf_left(&p->in) > 0 ?
			    " in the middle of a frame" : "");
			errno = buf_left(&p->in) > 0 ? EPROTO : EPIPE;
			return -1;
		}
		/* No deadline: a blocking fd (the worker's) waits in the read
		 * itself, one syscall instead of a poll and a read; a
		 * non-blocking one says EAGAIN and is polled. */
		if (deadline == 0) {
			if (ipc_peer_fill(p) != -1)
				continue;
			if (errno != EAGAIN)
				return -1;
		}
		if (peer_wait(p, p->rfd, POLLIN, deadline) == -1)
			return -1;
		if ((n = ipc_peer_fill(p)) == -1 && errno != EAGAIN)
			return -1;
	}
}

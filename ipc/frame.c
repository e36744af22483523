/*
 * Framing: a 4-byte big-endian body length, then the body (one msgpack
 * map). The length is judged before anything is allocated for the body
 * (imsg_parse_hdr, mm_request_receive): 0 is ERANGE, more than
 * IPC_FRAME_MAX is EMSGSIZE, and the peer is dropped either way.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>

#include "ipc/ipc.h"

int
ipc_frame_begin(struct buf *out, size_t *mark)
{
	/* Head-relative: buf_reserve() may move consumed bytes away. */
	*mark = buf_left(out);
	return buf_add(out, "\0\0\0\0", IPC_HDR_LEN);
}

int
ipc_frame_end(struct buf *out, size_t mark)
{
	unsigned char	*p;
	size_t		 body;

	body = buf_left(out) - mark - IPC_HDR_LEN;
	if (body == 0 || body > IPC_FRAME_MAX) {
		out->len = out->off + mark;
		if (out->len == out->off)
			buf_reset(out);
		errno = body == 0 ? ERANGE : EMSGSIZE;
		return -1;
	}
	p = buf_head(out) + mark;
	p[0] = (unsigned char)(body >> 24);
	p[1] = (unsigned char)(body >> 16);
	p[2] = (unsigned char)(body >> 8);
	p[3] = (unsigned char)body;
	return 0;
}

int
ipc_frame_check(const unsigned char *p, size_t avail, size_t *bodylen)
{
	uint32_t	len;

	if (avail < IPC_HDR_LEN)
		return 0;
	len = (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 |
	    (uint32_t)p[2] << 8 | p[3];
	if (len == 0) {
		errno = ERANGE;
		return -1;
	}
	if (len > IPC_FRAME_MAX) {
		errno = EMSGSIZE;
		return -1;
	}
	*bodylen = len;
	return avail - IPC_HDR_LEN >= len ? 1 : 0;
}

/*
 * A pipe holds 64 KiB by default, so a 1 MiB frame takes 16 write/read
 * round trips and as many context switches. With a bigger pipe the writer
 * hands over a whole frame per call (docs/benchmarks.md). An unprivileged
 * process may go up to /proc/sys/fs/pipe-max-size (1 MiB by default), and
 * may be refused (EPERM) when its user already holds too much pipe memory:
 * the size is only an optimisation, so we halve and retry, and keep the
 * default if nothing fits. Returns the size in force, -1 if fd is no pipe.
 */
int
ipc_frame_pipe_size(int fd, size_t want)
{
	int	cur;

	if ((cur = fcntl(fd, F_GETPIPE_SZ)) == -1)
		return -1;
	while (want > (size_t)cur) {
		if (fcntl(fd, F_SETPIPE_SZ, (int)want) != -1)
			break;
		want /= 2;
	}
	return fcntl(fd, F_GETPIPE_SZ);
}

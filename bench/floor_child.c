/*
 * bench_floor_child: the worker's side of bench_floor_agent. It enters the
 * sandbox exactly as warren-worker does (the policy comes in the
 * environment from sandbox_spawn), then plays a worker's frames with
 * raw bytes: a hello of 154, then S requests of 2,700, each waiting for
 * the answer. Linked as warren-worker is (static), so its exec costs what
 * the smallest possible worker's would.
 *
 *	bench_floor_child S	(on fds 3 and 4, started by bench_floor_agent)
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "sandbox/sandbox.h"

#define HELLO_LEN	154
#define REQUEST_LEN	2700

static void
say(size_t len)
{
	unsigned char	f[4 + REQUEST_LEN];

	memset(f, 0, sizeof(f));
	f[2] = (unsigned char)(len >> 8);
	f[3] = (unsigned char)len;
	if (write(4, f, 4 + len) != (ssize_t)(4 + len))
		exit(3);
}

/* One answer: its length, then its body (small: one read each). */
static void
hear(void)
{
	unsigned char	buf[1024];
	size_t		len, got = 0;
	ssize_t		n;

	while (got < 4) {
		if ((n = read(3, buf + got, 4 - got)) <= 0)
			exit(4);
		got += (size_t)n;
	}
	len = (size_t)buf[2] << 8 | buf[3];
	if (len > sizeof(buf))
		exit(4);
	for (got = 0; got < len; got += (size_t)n)
		if ((n = read(3, buf, len - got)) <= 0)
			exit(4);
}

int
main(int argc, char **argv)
{
	struct sandbox_report	rep;
	struct sandbox_error	e;
	int			steps, i;

	if (argc != 2)
		return 2;
	steps = atoi(argv[1]);
	memset(&rep, 0, sizeof(rep));
	memset(&e, 0, sizeof(e));
	if (sandbox_enter(NULL, &rep, &e) == -1) {
		fprintf(stderr, "sandbox: %s\n", e.msg);
		return 5;
	}
	say(HELLO_LEN);
	hear();
	for (i = 0; i < steps; i++) {
		say(REQUEST_LEN);
		hear();
	}
	return 0;
}

/*
 * IPC throughput through a real pipe between two processes.
 *
 * The parent (the sender) encodes, frames and writes N checkpoint messages
 * with ipc_peer_queue + ipc_peer_flush; the child (the receiver) reads,
 * checks and decodes them with ipc_peer_fill + ipc_peer_get, then acks.
 * The floor is a plain write() of the same frame bytes and a read() of
 * them, with the same syscall pattern on the sending side. Frame sizes
 * 100 B, 10 KB and 1 MB; the median of RUNS runs is printed.
 *   bench_ipc [RUNS] [--pipe-default]
 * --pipe-default leaves the pipes at 64 KiB (no F_SETPIPE_SZ).
 *
 * Then, in one process, the cost of decoding one typical llm request
 * (a 12-message conversation with tool calls) and one 1 MB checkpoint:
 * our bounded reader (checks every field, copies into owned structs)
 * against msgpack-c's msgpack_unpack_next() (builds an object tree in a
 * zone, checks nothing): the reason for docs/protocol.md's choice.
 */
#include <err.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <msgpack.h>

#include "common/buf.h"
#include "common/clock.h"
#include "common/fd.h"
#include "ipc/ipc.h"
#include "ipc/ipc_testapi.h"

#define BENCH_RUNS_MAX	31

struct size {
	const char	*name;
	size_t		 frame;	/* bytes per frame, header included */
	size_t		 count;
};

static const struct size bench_sizes[] = {
	{ "100 B", 100, 400000 },
	{ "10 KB", 10000, 40000 },
	{ "1 MB", 1000000, 1000 },
};

static int	bench_pipe_default;

/* A checkpoint of one message whose text pads the frame to size. */
static void
bench_msg(struct ipc_msg *m, size_t frame)
{
	struct buf	b;
	char		emsg[IPC_ERR_LEN], *text;
	size_t		len = 0, over;

	memset(m, 0, sizeof(*m));
	m->type = IPC_CHECKPOINT;
	m->u.checkpoint.seq = 1;
	buf_init(&b, 0);
	for (;;) {
		if ((text = malloc(len + 1)) == NULL)
			err(1, "malloc");
		memset(text, 'x', len);
		text[len] = '\0';
		msg_list_free(&m->u.checkpoint.messages);
		if (msg_list_add_text(&m->u.checkpoint.messages, MSG_TOOL,
		    text) == -1)
			err(1, "msg_list_add_text");
		free(text);
		buf_reset(&b);
		if (ipc_msg_frame(&b, m, emsg, sizeof(emsg)) == -1)
			errx(1, "frame: %s", emsg);
		if (buf_left(&b) >= frame)
			break;
		over = frame - buf_left(&b);
		len += over;
	}
	buf_free(&b);
}

static void
bench_pipes(int w2s[2], int ack[2])
{
	if (pipe(w2s) == -1 || pipe(ack) == -1)
		err(1, "pipe");
	if (!bench_pipe_default) {
		ipc_frame_pipe_size(w2s[1], 1 << 20);
	}
}

/* Receiver: decode count messages, then ack with one byte. */
static void
bench_child_ipc(int rfd, int ackfd, size_t count)
{
	struct ipc_peer	p;
	struct ipc_msg	m;
	size_t		got = 0;
	ssize_t		n;
	int		rv;

	ipc_peer_init(&p, rfd, -1, IPC_SIDE_SUPERVISOR);
	p.state = IPC_STATE_RUN;
	while (got < count) {
		if ((n = ipc_peer_fill(&p)) <= 0)
			errx(1, "receiver: fill: %s", n == 0 ? "EOF" : p.err);
		while ((rv = ipc_peer_get(&p, &m)) == 1) {
			if (m.type != IPC_CHECKPOINT)
				errx(1, "receiver: got %s",
				    ipc_type_name(m.type));
			ipc_msg_free(&m);
			got++;
		}
		if (rv == -1)
			errx(1, "receiver: %s", p.err);
	}
	if (write(ackfd, "k", 1) != 1)
		err(1, "ack");
	ipc_peer_free(&p);
	_exit(0);
}

static void
bench_child_raw(int rfd, int ackfd, size_t total)
{
	static char	chunk[1 << 20];
	size_t		got = 0;
	ssize_t		n;

	while (got < total) {
		if ((n = read(rfd, chunk, sizeof(chunk))) <= 0)
			err(1, "receiver: read");
		got += (size_t)n;
	}
	if (write(ackfd, "k", 1) != 1)
		err(1, "ack");
	_exit(0);
}

/* One run: seconds from the first write to the receiver's ack. */
static double
bench_run(const struct size *s, const struct ipc_msg *m, const struct buf *fr,
    int raw)
{
	struct ipc_peer	p;
	int		w2s[2], ack[2];
	uint64_t	t0, t1;
	size_t		i;
	pid_t		pid;
	char		c;

	bench_pipes(w2s, ack);
	if ((pid = fork()) == -1)
		err(1, "fork");
	if (pid == 0) {
		close(w2s[1]);
		close(ack[0]);
		if (raw)
			bench_child_raw(w2s[0], ack[1], s->count *
			    buf_left(fr));
		bench_child_ipc(w2s[0], ack[1], s->count);
	}
	close(w2s[0]);
	close(ack[1]);
	ipc_peer_init(&p, -1, w2s[1], IPC_SIDE_WORKER);
	p.state = IPC_STATE_RUN;
	t0 = clock_mono_ns();
	for (i = 0; i < s->count; i++) {
		if (raw) {
			if (fd_write_all(w2s[1], buf_head(fr),
			    buf_left(fr)) == -1)
				err(1, "write");
			continue;
		}
		if (ipc_peer_queue(&p, m) == -1)
			errx(1, "queue: %s", p.err);
		if (ipc_peer_flush(&p) != 0)
			errx(1, "flush: %s", p.err);
	}
	if (read(ack[0], &c, 1) != 1)
		errx(1, "no ack from the receiver");
	t1 = clock_mono_ns();
	close(w2s[1]);
	close(ack[0]);
	if (waitpid(pid, NULL, 0) == -1)
		err(1, "waitpid");
	ipc_peer_free(&p);
	return (double)(t1 - t0) / 1e9;
}

/* A conversation like an agent's tenth turn. */
static void
bench_llm(struct ipc_msg *m)
{
	struct msg	a;
	int		i;

	memset(m, 0, sizeof(*m));
	m->type = IPC_LLM;
	m->u.llm.id = 10;
	m->u.llm.step = 10;
	msg_list_add_text(&m->u.llm.messages, MSG_SYSTEM, "You are a careful "
	    "engineer. Use the tools to read the code before answering.");
	msg_list_add_text(&m->u.llm.messages, MSG_USER, "Find where the "
	    "configuration file is parsed and list its options.");
	for (i = 0; i < 5; i++) {
		memset(&a, 0, sizeof(a));
		a.role = MSG_ASSISTANT;
		a.text = strdup("Let me look at the next file.");
		msg_add_call(&a, "call_0123456789", "read",
		    "{\"path\":\"src/config/parse.c\",\"offset\":0}");
		msg_list_take(&m->u.llm.messages, &a);
		memset(&a, 0, sizeof(a));
		a.role = MSG_TOOL;
		a.call_id = strdup("call_0123456789");
		a.name = strdup("read");
		a.text = malloc(1500);
		memset(a.text, 'c', 1499);
		a.text[1499] = '\0';
		msg_list_take(&m->u.llm.messages, &a);
	}
	m->u.llm.ntools = 4;
	m->u.llm.tools = calloc(4, sizeof(*m->u.llm.tools));
	for (i = 0; i < 4; i++) {
		m->u.llm.tools[i].name = strdup(i ? "grep" : "read");
		m->u.llm.tools[i].description = strdup("Read a file of the "
		    "workspace, or part of it.");
		m->u.llm.tools[i].schema = strdup("{\"type\":\"object\","
		    "\"properties\":{\"path\":{\"type\":\"string\"}},"
		    "\"required\":[\"path\"]}");
	}
}

/* Nanoseconds per decode of frame fr: ours, then msgpack-c's. */
static void
bench_decode(const char *name, const struct ipc_msg *m, size_t reps)
{
	struct buf		b;
	struct ipc_msg		d;
	msgpack_unpacked	u;
	char			emsg[IPC_ERR_LEN];
	uint64_t		t0, t1, t2, t3;
	size_t			i, off;

	buf_init(&b, 0);
	t0 = clock_mono_ns();
	for (i = 0; i < reps; i++) {
		buf_reset(&b);
		if (ipc_msg_encode(&b, m, emsg, sizeof(emsg)) == -1)
			errx(1, "encode: %s", emsg);
	}
	t1 = clock_mono_ns();
	for (i = 0; i < reps; i++) {
		if (ipc_msg_decode(buf_head(&b), buf_left(&b), &d, emsg,
		    sizeof(emsg)) == -1)
			errx(1, "decode: %s", emsg);
		ipc_msg_free(&d);
	}
	t2 = clock_mono_ns();
	msgpack_unpacked_init(&u);
	for (i = 0; i < reps; i++) {
		off = 0;
		if (msgpack_unpack_next(&u, (const char *)buf_head(&b),
		    buf_left(&b), &off) != MSGPACK_UNPACK_SUCCESS)
			errx(1, "msgpack_unpack_next failed");
	}
	t3 = clock_mono_ns();
	msgpack_unpacked_destroy(&u);
	printf("%-10s %8zu %12.0f %12.0f %14.0f\n", name, buf_left(&b),
	    (double)(t1 - t0) / reps, (double)(t2 - t1) / reps,
	    (double)(t3 - t2) / reps);
	buf_free(&b);
}

static int
bench_cmp(const void *a, const void *b)
{
	double	x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

static double
bench_median(const struct size *s, const struct ipc_msg *m,
    const struct buf *fr, int raw, int runs)
{
	double	t[BENCH_RUNS_MAX];
	int	i;

	for (i = 0; i < runs; i++)
		t[i] = bench_run(s, m, fr, raw);
	qsort(t, (size_t)runs, sizeof(t[0]), bench_cmp);
	return t[runs / 2];
}

int
main(int argc, char **argv)
{
	struct ipc_msg	m;
	struct buf	fr;
	char		errbuf[IPC_ERR_LEN];
	double		ti, tr;
	size_t		i, bytes;
	int		runs = 5, a;

	for (a = 1; a < argc; a++) {
		if (strcmp(argv[a], "--pipe-default") == 0)
			bench_pipe_default = 1;
		else if ((runs = atoi(argv[a])) < 1 || runs > BENCH_RUNS_MAX)
			errx(2, "usage: bench_ipc [RUNS] [--pipe-default]");
	}
	printf("# bench_ipc: %d runs, median; pipe %s\n", runs,
	    bench_pipe_default ? "64 KiB (default)" : "1 MiB (F_SETPIPE_SZ)");
	printf("%-6s %8s %9s %12s %10s %12s %10s %6s\n", "frame", "bytes",
	    "count", "ipc msg/s", "ipc MB/s", "raw msg/s", "raw MB/s",
	    "ratio");
	for (i = 0; i < sizeof(bench_sizes) / sizeof(bench_sizes[0]); i++) {
		const struct size *s = &bench_sizes[i];

		bench_msg(&m, s->frame);
		buf_init(&fr, 0);
		if (ipc_msg_frame(&fr, &m, errbuf, sizeof(errbuf)) == -1)
			errx(1, "frame: %s", errbuf);
		bytes = buf_left(&fr);
		ti = bench_median(s, &m, &fr, 0, runs);
		tr = bench_median(s, &m, &fr, 1, runs);
		printf("%-6s %8zu %9zu %12.0f %10.1f %12.0f %10.1f %6.2f\n",
		    s->name, bytes, s->count, s->count / ti,
		    s->count * bytes / ti / 1e6, s->count / tr,
		    s->count * bytes / tr / 1e6, tr / ti);
		buf_free(&fr);
		ipc_msg_free(&m);
	}
	printf("\n# decode cost, ns per message (one process)\n");
	printf("%-10s %8s %12s %12s %14s\n", "message", "bytes", "encode",
	    "decode", "msgpack-c tree");
	bench_llm(&m);
	bench_decode("llm", &m, 20000);
	ipc_msg_free(&m);
	bench_msg(&m, 1000000);
	bench_decode("1 MB ckpt", &m, 300);
	ipc_msg_free(&m);
	return 0;
}

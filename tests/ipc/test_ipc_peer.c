/*
 * The IPC peer: the reader fed byte by byte and many frames per read, bad
 * frame headers refused before allocation, the writer queue under a full
 * non-blocking pipe (EAGAIN, resumes, order kept), the queue cap, and the
 * permission table row by row.
 */
#include <sys/wait.h>

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "common/buf.h"
#include "common/fd.h"
#include "common/xmalloc.h"
#include "ipc/ipc.h"
#include "ipc/ipc_testapi.h"
#include "tests/ipc/samples.h"
#include "tests/test_wait.h"

/* w2s: worker writes, supervisor reads; s2w the other way. */
struct pair {
	int		w2s[2];
	int		s2w[2];
	struct ipc_peer	sup;
	struct ipc_peer	wrk;
};

static void
pair_open(struct pair *p)
{
	int	sup[2], wrk[2];

	/* Through ipc_peer_pipes, then the worker's ends non-blocking too
	   (these tests drive both ends from one process). */
	assert_int_equal(ipc_peer_pipes(sup, wrk), 0);
	assert_true(fcntl(sup[0], F_GETFL) & O_NONBLOCK);
	assert_true(fcntl(sup[1], F_GETFL) & O_NONBLOCK);
	assert_false(fcntl(wrk[0], F_GETFL) & O_NONBLOCK);
	assert_true(fcntl(wrk[1], F_GETFD) & FD_CLOEXEC);
	assert_int_equal(fd_set_nonblock(wrk[0], 1), 0);
	assert_int_equal(fd_set_nonblock(wrk[1], 1), 0);
	p->w2s[0] = sup[0];
	p->w2s[1] = wrk[1];
	p->s2w[0] = wrk[0];
	p->s2w[1] = sup[1];
	ipc_peer_init(&p->sup, p->w2s[0], p->s2w[1], IPC_SIDE_SUPERVISOR);
	ipc_peer_init(&p->wrk, p->s2w[0], p->w2s[1], IPC_SIDE_WORKER);
}

static void
pair_close(struct pair *p)
{
	ipc_peer_free(&p->sup);
	ipc_peer_free(&p->wrk);
	close(p->w2s[0]);
	close(p->w2s[1]);
	close(p->s2w[0]);
	close(p->s2w[1]);
}

/* What a worker says in one run, in order. */
static const enum ipc_type worker_says[] = { IPC_HELLO, IPC_EVENT, IPC_LLM,
    IPC_CHECKPOINT, IPC_SPAWN, IPC_EVENT, IPC_DONE };
#define NSAYS	(sizeof(worker_says) / sizeof(worker_says[0]))

static void
worker_stream(struct buf *out)
{
	struct buf	one;
	size_t		i;

	buf_init(out, 0);
	buf_init(&one, 0);
	for (i = 0; i < NSAYS; i++) {
		samples_frame(&one, worker_says[i], i == 1);
		buf_add(out, buf_head(&one), buf_left(&one));
	}
	buf_free(&one);
}

/* The supervisor's side of the handshake: start after hello. */
static void
sup_got(struct pair *p, const struct ipc_msg *m)
{
	struct ipc_msg	start;

	if (m->type != IPC_HELLO)
		return;
	samples_msg(&start, IPC_START, 0);
	assert_int_equal(ipc_peer_queue(&p->sup, &start), 0);
	assert_int_equal(ipc_peer_flush(&p->sup), 0);
	ipc_msg_free(&start);
}

static void
test_byte_by_byte(void **state)
{
	struct pair	p;
	struct buf	s;
	struct ipc_msg	m;
	size_t		i, got = 0;
	int		rv;

	(void)state;
	pair_open(&p);
	worker_stream(&s);
	for (i = 0; i < buf_left(&s); i++) {
		assert_int_equal(write(p.w2s[1], buf_head(&s) + i, 1), 1);
		assert_int_equal(ipc_peer_fill(&p.sup), 1);
		while ((rv = ipc_peer_get(&p.sup, &m)) == 1) {
			assert_int_equal(m.type, worker_says[got]);
			got++;
			sup_got(&p, &m);
			ipc_msg_free(&m);
		}
		if (rv == -1)
			fail_msg("byte %zu: %s", i, p.sup.err);
	}
	assert_int_equal(got, NSAYS);
	assert_int_equal(buf_left(&p.sup.in), 0);
	assert_int_equal(p.sup.state, IPC_STATE_DONE);
	/* Nothing more: -1/EAGAIN, then EOF once the writer closes. */
	assert_int_equal(ipc_peer_fill(&p.sup), -1);
	assert_int_equal(errno, EAGAIN);
	close(p.w2s[1]);
	p.w2s[1] = open("/dev/null", O_WRONLY);
	assert_int_equal(ipc_peer_fill(&p.sup), 0);
	assert_int_equal(p.sup.eof, 1);
	buf_free(&s);
	pair_close(&p);
}

static void
test_many_per_read(void **state)
{
	struct pair	p;
	struct buf	s;
	struct ipc_msg	m;
	size_t		got = 0, rounds;

	(void)state;
	pair_open(&p);
	worker_stream(&s);
	/* All frames in one write; a second copy's first half after. */
	assert_int_equal(write(p.w2s[1], buf_head(&s), buf_left(&s)),
	    (ssize_t)buf_left(&s));
	assert_int_equal(ipc_peer_fill(&p.sup), (ssize_t)buf_left(&s));
	/* Less than asked for: the pipe is empty, no read for EAGAIN. */
	assert_int_equal(p.sup.drained, 1);
	for (rounds = 0; ipc_peer_get(&p.sup, &m) == 1; rounds++) {
		assert_int_equal(m.type, worker_says[got]);
		got++;
		sup_got(&p, &m);
		ipc_msg_free(&m);
	}
	assert_int_equal(got, NSAYS);
	assert_int_equal(ipc_peer_get(&p.sup, &m), 0);
	/* A second hello after done breaks the protocol. */
	assert_int_equal(write(p.w2s[1], buf_head(&s), buf_left(&s) / 2),
	    (ssize_t)(buf_left(&s) / 2));
	assert_true(ipc_peer_fill(&p.sup) > 0);
	assert_int_equal(ipc_peer_get(&p.sup, &m), -1);
	assert_non_null(strstr(p.sup.err, "hello from the worker is not "
	    "permitted in state done"));
	buf_free(&s);
	pair_close(&p);
}

/* drained tells a full read (read again) from a short one (don't). */
static void
test_fill_drained(void **state)
{
	struct pair	p;
	char		junk[20000];
	ssize_t		n;

	(void)state;
	pair_open(&p);
	memset(junk, 0, sizeof(junk));
	assert_int_equal(write(p.w2s[1], junk, sizeof(junk)),
	    (ssize_t)sizeof(junk));
	assert_true((n = ipc_peer_fill(&p.sup)) > 0);
	assert_true((size_t)n < sizeof(junk));
	assert_int_equal(p.sup.drained, 0);
	assert_int_equal(ipc_peer_fill(&p.sup), (ssize_t)sizeof(junk) - n);
	assert_int_equal(p.sup.drained, 1);
	pair_close(&p);
}

static void
expect_bad_header(const unsigned char hdr[4], const char *want)
{
	struct pair	p;
	struct ipc_msg	m;

	pair_open(&p);
	assert_int_equal(write(p.w2s[1], hdr, 4), 4);
	assert_int_equal(write(p.w2s[1], "\x90\x90\x90\x90", 4), 4);
	assert_true(ipc_peer_fill(&p.sup) > 0);
	assert_int_equal(ipc_peer_get(&p.sup, &m), -1);
	if (strstr(p.sup.err, want) == NULL)
		fail_msg("error \"%s\" lacks \"%s\"", p.sup.err, want);
	/* Nothing was allocated for the declared body. */
	assert_true(p.sup.in.cap <= 512 * 1024);
	assert_true(ipc_peer_fill(&p.sup) == -1 && errno == EAGAIN);
	assert_true(p.sup.in.cap <= 512 * 1024);
	pair_close(&p);
}

static void
test_bad_headers(void **state)
{
	static const unsigned char zero[4] = { 0, 0, 0, 0 };
	static const unsigned char huge[4] = { 0xff, 0xff, 0xff, 0xff };
	static const unsigned char over[4] = { 0x01, 0x00, 0x00, 0x01 };
	static const unsigned char bodybad[4] = { 0, 0, 0, 4 };
	size_t	body;

	(void)state;
	expect_bad_header(zero, "bad frame: length 0");
	expect_bad_header(huge, "bad frame: length over 16 MiB");
	expect_bad_header(over, "bad frame: length over 16 MiB");
	expect_bad_header(bodybad, "bad message: message: expected map");
	/* Exactly the maximum is a frame (waiting for its body). */
	assert_int_equal(ipc_frame_check((const unsigned char *)"\x01\0\0\0",
	    4, &body), 0);
	assert_int_equal(body, IPC_FRAME_MAX);
	assert_int_equal(ipc_frame_check(over, 4, &body), -1);
	assert_int_equal(errno, EMSGSIZE);
	assert_int_equal(ipc_frame_check(zero, 4, &body), -1);
	assert_int_equal(errno, ERANGE);
	assert_int_equal(ipc_frame_check(zero, 3, &body), 0);
}

/* Drive the handshake so both peers are in RUN. */
static void
pair_run(struct pair *p)
{
	struct ipc_msg	m;

	samples_msg(&m, IPC_HELLO, 0);
	assert_int_equal(ipc_peer_queue(&p->wrk, &m), 0);
	assert_int_equal(ipc_peer_flush(&p->wrk), 0);
	ipc_msg_free(&m);
	assert_true(ipc_peer_fill(&p->sup) > 0);
	assert_int_equal(ipc_peer_get(&p->sup, &m), 1);
	ipc_msg_free(&m);
	samples_msg(&m, IPC_START, 1);
	assert_int_equal(ipc_peer_queue(&p->sup, &m), 0);
	assert_int_equal(ipc_peer_flush(&p->sup), 0);
	ipc_msg_free(&m);
	assert_true(ipc_peer_fill(&p->wrk) > 0);
	assert_int_equal(ipc_peer_get(&p->wrk, &m), 1);
	ipc_msg_free(&m);
	assert_int_equal(p->sup.state, IPC_STATE_RUN);
	assert_int_equal(p->wrk.state, IPC_STATE_RUN);
}

static void
test_writer_full_pipe(void **state)
{
	struct pair	p;
	struct ipc_msg	m;
	size_t		task = 3u * 1024 * 1024, first, got = 0;
	int		stalls = 0, rv;

	(void)state;
	pair_open(&p);
	pair_run(&p);
	/* The smallest pipe the kernel gives: one page. */
	assert_true(fcntl(p.s2w[1], F_SETPIPE_SZ, 4096) >= 4096);
	samples_msg(&m, IPC_LLM, 0);
	assert_int_equal(ipc_peer_queue(&p.wrk, &m), 0);
	assert_int_equal(ipc_peer_flush(&p.wrk), 0);
	ipc_msg_free(&m);
	assert_true(ipc_peer_fill(&p.sup) > 0);
	assert_int_equal(ipc_peer_get(&p.sup, &m), 1);
	ipc_msg_free(&m);

	/* A 3 MiB answer and a cancel behind it. */
	samples_msg(&m, IPC_LLM_OK, 0);
	free(m.u.llm_ok.reply.msg.text);
	m.u.llm_ok.reply.msg.text = xmalloc(task + 1);
	memset(m.u.llm_ok.reply.msg.text, 'r', task);
	m.u.llm_ok.reply.msg.text[task] = '\0';
	assert_int_equal(ipc_peer_queue(&p.sup, &m), 0);
	ipc_msg_free(&m);
	samples_msg(&m, IPC_CANCEL, 0);
	assert_int_equal(ipc_peer_queue(&p.sup, &m), 0);
	ipc_msg_free(&m);
	first = ipc_peer_queued(&p.sup);
	assert_int_equal(ipc_peer_flush(&p.sup), 1);
	assert_int_equal(errno, EAGAIN);
	assert_true(ipc_peer_queued(&p.sup) > 0);
	assert_true(ipc_peer_queued(&p.sup) < first);
	/* The reader drains a little at a time; the writer resumes. */
	for (;;) {
		rv = ipc_peer_flush(&p.sup);
		assert_true(rv >= 0);
		stalls += rv;
		if (ipc_peer_fill(&p.wrk) == -1)
			assert_int_equal(errno, EAGAIN);
		while ((rv = ipc_peer_get(&p.wrk, &m)) == 1) {
			if (got == 0) {
				assert_int_equal(m.type, IPC_LLM_OK);
				assert_int_equal(strlen(
				    m.u.llm_ok.reply.msg.text), task);
			} else
				assert_int_equal(m.type, IPC_CANCEL);
			got++;
			ipc_msg_free(&m);
		}
		assert_int_equal(rv, 0);
		if (got == 2)
			break;
	}
	assert_true(stalls > 10);
	assert_int_equal(ipc_peer_queued(&p.sup), 0);
	pair_close(&p);
}

/* A reader that never reads: the queue stops at IPC_QUEUE_MAX. */
static void
test_queue_cap(void **state)
{
	struct pair	p;
	struct ipc_msg	m;
	char		*big;
	size_t		i, n, one;
	int		rv = 0;

	(void)state;
	pair_open(&p);
	pair_run(&p);
	big = xmalloc(IPC_STR_MAX + 1);
	memset(big, 'q', IPC_STR_MAX);
	big[IPC_STR_MAX] = '\0';
	memset(&m, 0, sizeof(m));
	m.type = IPC_CHECKPOINT;
	for (i = 0; i < 3; i++)
		msg_list_add_text(&m.u.checkpoint.messages, MSG_TOOL, big);
	/* Nobody reads or flushes: every frame stays queued. */
	assert_int_equal(ipc_peer_queue(&p.wrk, &m), 0);
	one = ipc_peer_queued(&p.wrk);
	for (n = 1; n < 10; n++)
		if ((rv = ipc_peer_queue(&p.wrk, &m)) == -1)
			break;
	assert_int_equal(rv, -1);
	assert_non_null(strstr(p.wrk.err, "does not fit the output queue"));
	assert_true(n * one <= IPC_QUEUE_MAX);
	assert_true((n + 1) * one > IPC_QUEUE_MAX);
	/* What was queued is intact: the failed frame left nothing. */
	assert_int_equal(ipc_peer_queued(&p.wrk), n * one);
	ipc_msg_free(&m);
	free(big);
	pair_close(&p);
}

#define PART(id)	(1000000u + (id))

struct step {
	enum ipc_side	from;
	enum ipc_type	type;
	uint32_t	id;		/* request/answer id; hello: version */
	int		ok;
	const char	*why;		/* part of the error when !ok */
};

static void
step_msg(struct ipc_msg *m, const struct step *s)
{
	samples_msg(m, s->type, 1);
	switch (s->type) {
	case IPC_HELLO:
		m->u.hello.version = s->id;
		break;
	case IPC_LLM:
		m->u.llm.id = s->id;
		break;
	case IPC_LLM_OK:
		m->u.llm_ok.id = s->id;
		break;
	case IPC_LLM_ERR:
		m->u.llm_err.id = s->id;
		break;
	case IPC_SPAWN:
		m->u.spawn.id = s->id;
		break;
	case IPC_SPAWN_OK:
		m->u.spawn_ok.id = s->id;
		break;
	case IPC_SPAWN_ERR:
		m->u.spawn_err.id = s->id;
		break;
	case IPC_MCP:
		m->u.mcp.id = s->id;
		break;
	case IPC_MCP_OK:
		m->u.mcp_ok.id = s->id;
		break;
	case IPC_MCP_ERR:
		m->u.mcp_err.id = s->id;
		break;
	case IPC_HTTP:
		m->u.http.id = s->id;
		break;
	case IPC_HTTP_OK:
		/* PART(id): a part of a stream (more), not its end. */
		m->u.http_ok.id = s->id % PART(0);
		m->u.http_ok.more = s->id >= PART(0);
		break;
	case IPC_HTTP_ERR:
		m->u.http_err.id = s->id;
		break;
	case IPC_NONE:
	case IPC_START:
	case IPC_EVENT:
	case IPC_CHECKPOINT:
	case IPC_DONE:
	case IPC_CANCEL:
		break;
	}
}

#define W	IPC_SIDE_WORKER
#define SV	IPC_SIDE_SUPERVISOR
#define V	IPC_PROTOCOL_VERSION

static const struct step perm_steps[] = {
	{ SV, IPC_CANCEL, 0, 0, "cancel from the supervisor is not "
	    "permitted in state new" },
	{ W, IPC_LLM, 1, 0, "not permitted in state new" },
	{ W, IPC_EVENT, 0, 0, "not permitted in state new" },
	{ W, IPC_HELLO, V + 1, 0, "protocol version 8, expected 7" },
	{ W, IPC_HELLO, V, 1, NULL },
	{ W, IPC_HELLO, V, 0, "hello from the worker is not permitted in "
	    "state hello" },
	{ W, IPC_EVENT, 0, 1, NULL },
	{ W, IPC_CHECKPOINT, 0, 0, "not permitted in state hello" },
	{ W, IPC_START, 0, 0, "start from the worker is not permitted" },
	{ SV, IPC_LLM_OK, 1, 0, "not permitted in state hello" },
	{ SV, IPC_START, 0, 1, NULL },
	{ SV, IPC_START, 0, 0, "start from the supervisor is not permitted "
	    "in state run" },
	{ SV, IPC_EVENT, 0, 0, "event from the supervisor is not permitted" },
	{ W, IPC_CANCEL, 0, 0, "cancel from the worker is not permitted" },
	{ W, IPC_LLM_OK, 1, 0, "llm_ok from the worker is not permitted" },
	{ W, IPC_LLM, 1, 1, NULL },
	{ W, IPC_LLM, 1, 0, "llm: request id 1 is already outstanding" },
	{ W, IPC_SPAWN, 1, 0, "spawn: request id 1 is already outstanding" },
	{ W, IPC_SPAWN, 2, 1, NULL },
	{ SV, IPC_LLM_OK, 3, 0, "llm_ok: no llm request with id 3" },
	{ SV, IPC_SPAWN_OK, 1, 0, "spawn_ok: no spawn request with id 1" },
	{ SV, IPC_LLM_ERR, 2, 0, "llm_err: no llm request with id 2" },
	{ SV, IPC_LLM_OK, 1, 1, NULL },
	{ SV, IPC_LLM_OK, 1, 0, "no llm request with id 1" },
	{ W, IPC_LLM, 1, 1, NULL },
	{ SV, IPC_LLM_ERR, 1, 1, NULL },
	{ SV, IPC_SPAWN_ERR, 2, 1, NULL },
	{ SV, IPC_SPAWN_OK, 2, 0, "no spawn request with id 2" },
	/* mcp (v6): a request like the others, answered by its own kind. */
	{ SV, IPC_MCP, 4, 0, "mcp from the supervisor is not permitted" },
	{ W, IPC_MCP, 4, 1, NULL },
	{ W, IPC_LLM, 4, 0, "llm: request id 4 is already outstanding" },
	{ SV, IPC_LLM_OK, 4, 0, "llm_ok: no llm request with id 4" },
	{ SV, IPC_SPAWN_ERR, 4, 0, "spawn_err: no spawn request with id 4" },
	{ W, IPC_MCP_OK, 4, 0, "mcp_ok from the worker is not permitted" },
	{ SV, IPC_MCP_OK, 4, 1, NULL },
	{ SV, IPC_MCP_ERR, 4, 0, "mcp_err: no mcp request with id 4" },
	{ W, IPC_MCP, 4, 1, NULL },
	{ SV, IPC_MCP_ERR, 4, 1, NULL },
	{ W, IPC_HTTP, 3, 1, NULL },
	{ W, IPC_LLM, 3, 0, "llm: request id 3 is already outstanding" },
	{ SV, IPC_LLM_OK, 3, 0, "llm_ok: no llm request with id 3" },
	{ SV, IPC_HTTP_OK, 3, 1, NULL },
	{ SV, IPC_HTTP_ERR, 3, 0, "http_err: no http request with id 3" },
	{ W, IPC_HTTP, 4, 1, NULL },
	{ SV, IPC_HTTP_ERR, 4, 1, NULL },
	{ W, IPC_HTTP_OK, 4, 0, "http_ok from the worker is not permitted" },
	/* A stream's parts keep its request open; its end closes it. */
	{ W, IPC_HTTP, 6, 1, NULL },
	{ SV, IPC_HTTP_OK, PART(6), 1, NULL },
	{ SV, IPC_HTTP_OK, PART(6), 1, NULL },
	{ W, IPC_HTTP, 6, 0, "http: request id 6 is already outstanding" },
	{ SV, IPC_HTTP_OK, 6, 1, NULL },
	{ SV, IPC_HTTP_OK, PART(6), 0, "http_ok: no http request with id 6" },
	{ W, IPC_EVENT, 0, 1, NULL },
	{ W, IPC_CHECKPOINT, 0, 1, NULL },
	{ SV, IPC_CANCEL, 0, 1, NULL },
	{ W, IPC_SPAWN, 5, 1, NULL },
	{ W, IPC_DONE, 0, 1, NULL },
	{ SV, IPC_SPAWN_OK, 5, 0, "not permitted in state done" },
	{ SV, IPC_CANCEL, 0, 1, NULL },
	{ W, IPC_DONE, 0, 0, "done from the worker is not permitted in state "
	    "done" },
	{ W, IPC_EVENT, 0, 0, "not permitted in state done" },
	{ W, IPC_LLM, 9, 0, "not permitted in state done" },
};

/*
 * Both ends apply the same table: the worker's peer checks what it sends
 * and receives, and so does the supervisor's; they must agree at each step.
 */
static void
test_perm_table(void **state)
{
	struct ipc_peer	sup, wrk, *tx, *rx;
	struct ipc_msg	m;
	size_t		i;
	int		rv;

	(void)state;
	ipc_peer_init(&sup, -1, -1, IPC_SIDE_SUPERVISOR);
	ipc_peer_init(&wrk, -1, -1, IPC_SIDE_WORKER);
	for (i = 0; i < sizeof(perm_steps) / sizeof(perm_steps[0]); i++) {
		const struct step *s = &perm_steps[i];

		step_msg(&m, s);
		tx = s->from == W ? &wrk : &sup;
		rx = s->from == W ? &sup : &wrk;
		/* Sending side: through the queue when it is ours. */
		if (tx->self == s->from) {
			rv = ipc_peer_queue(tx, &m);
			if (rv != (s->ok ? 0 : -1))
				fail_msg("step %zu (%s): send %d: %s", i,
				    ipc_type_name(s->type), rv, tx->err);
			if (!s->ok && strstr(tx->err, s->why) == NULL)
				fail_msg("step %zu: \"%s\" lacks \"%s\"", i,
				    tx->err, s->why);
		}
		/* Receiving side: the same verdict. */
		rv = ipc_perm_check(rx, s->from, &m);
		if (rv != (s->ok ? 0 : -1))
			fail_msg("step %zu (%s): receive %d: %s", i,
			    ipc_type_name(s->type), rv, rx->err);
		if (!s->ok && strstr(rx->err, s->why) == NULL)
			fail_msg("step %zu: \"%s\" lacks \"%s\"", i, rx->err,
			    s->why);
		assert_int_equal(sup.state, wrk.state);
		ipc_msg_free(&m);
	}
	ipc_peer_free(&sup);
	ipc_peer_free(&wrk);
}

/* At most IPC_PENDING_MAX requests outstanding. */
static void
test_perm_pending_max(void **state)
{
	struct ipc_peer	sup;
	struct ipc_msg	m;
	uint32_t	i;

	(void)state;
	ipc_peer_init(&sup, -1, -1, IPC_SIDE_SUPERVISOR);
	sup.state = IPC_STATE_RUN;
	for (i = 0; i <= IPC_PENDING_MAX; i++) {
		samples_msg(&m, i % 2 ? IPC_LLM : IPC_SPAWN, 1);
		if (m.type == IPC_LLM)
			m.u.llm.id = i;
		else
			m.u.spawn.id = i;
		assert_int_equal(ipc_perm_check(&sup, IPC_SIDE_WORKER, &m),
		    i < IPC_PENDING_MAX ? 0 : -1);
		ipc_msg_free(&m);
	}
	assert_non_null(strstr(sup.err, "more than 64 requests outstanding"));
	ipc_peer_free(&sup);
}

static void
test_pipe_size(void **state)
{
	int	fds[2], got, fd;

	(void)state;
	assert_int_equal(pipe(fds), 0);
	got = ipc_frame_pipe_size(fds[1], 1024 * 1024);
	/* Root may always raise it; a user up to pipe-max-size, or less
	   when its pipe memory is used up: never below the default. */
	assert_true(got >= 65536);
	/* Asking for less never shrinks it. */
	assert_int_equal(ipc_frame_pipe_size(fds[1], 4096), got);
	close(fds[0]);
	close(fds[1]);
	assert_true((fd = open("/dev/null", O_RDONLY)) >= 0);
	assert_int_equal(ipc_frame_pipe_size(fd, 1 << 20), -1);
	close(fd);
}

/* Queued frames go out when their side waits for an answer, in order. */
static long
cpu_ms(void)
{
	struct timespec	ts;

	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
	return (long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* recv with no deadline, from a writer that comes later: on a
 * non-blocking fd (the read says EAGAIN, then it polls) and on a
 * blocking one (the read itself waits). */
static void
test_recv_no_deadline(void **state)
{
	struct pair	p;
	struct ipc_msg	m;
	pid_t		pid;
	long		cpu0;
	int		st, blocking;

	(void)state;
	for (blocking = 0; blocking <= 1; blocking++) {
		pair_open(&p);
		if (blocking)
			assert_int_equal(fd_set_nonblock(p.w2s[0], 0), 0);
		if ((pid = fork()) == 0) {
			usleep(50000);
			samples_msg(&m, IPC_HELLO, 0);
			_exit(ipc_peer_send(&p.wrk, &m, 1000) == 0 ? 0 : 1);
		}
		assert_true(pid > 0);
		/* The child is the only writer: if it fails, EOF, no hang. */
		close(p.w2s[1]);
		p.w2s[1] = open("/dev/null", O_WRONLY);
		cpu0 = cpu_ms();
		assert_int_equal(ipc_peer_recv(&p.sup, &m, -1), 0);
		/* It slept through the child's 50 ms: no busy loop. */
		assert_true(cpu_ms() - cpu0 < 20);
		assert_int_equal(m.type, IPC_HELLO);
		ipc_msg_free(&m);
		assert_true((st = test_waitpid(pid, 240,
		    "the child of test_recv_no_deadline")) != -1);
		assert_true(WIFEXITED(st) && WEXITSTATUS(st) == 0);
		/* The writer is gone: EOF, not a hang or a spin. */
		assert_int_equal(ipc_peer_recv(&p.sup, &m, -1), -1);
		assert_int_equal(errno, EPIPE);
		pair_close(&p);
	}
}

static void
test_recv_drains(void **state)
{
	struct pair	p;
	struct ipc_msg	m;

	(void)state;
	pair_open(&p);
	pair_run(&p);
	/* Nothing comes back, but the recv has written both frames. */
	samples_msg(&m, IPC_EVENT, 0);
	assert_int_equal(ipc_peer_queue(&p.wrk, &m), 0);
	ipc_msg_free(&m);
	samples_msg(&m, IPC_LLM, 0);
	assert_int_equal(ipc_peer_queue(&p.wrk, &m), 0);
	ipc_msg_free(&m);
	assert_int_equal(ipc_peer_recv(&p.wrk, &m, 1), -1);
	assert_int_equal(errno, ETIMEDOUT);
	assert_int_equal(ipc_peer_queued(&p.wrk), 0);
	assert_int_equal(ipc_peer_recv(&p.sup, &m, 1000), 0);
	assert_int_equal(m.type, IPC_EVENT);
	ipc_msg_free(&m);
	assert_int_equal(ipc_peer_recv(&p.sup, &m, 1000), 0);
	assert_int_equal(m.type, IPC_LLM);
	ipc_msg_free(&m);
	/* drain alone writes them too. */
	samples_msg(&m, IPC_CHECKPOINT, 0);
	assert_int_equal(ipc_peer_queue(&p.wrk, &m), 0);
	ipc_msg_free(&m);
	assert_int_equal(ipc_peer_drain(&p.wrk, 1000), 0);
	assert_int_equal(ipc_peer_recv(&p.sup, &m, 1000), 0);
	assert_int_equal(m.type, IPC_CHECKPOINT);
	ipc_msg_free(&m);
	pair_close(&p);
}

/* The worker's blocking helpers: timeout, EOF, a reader gone. */
static void
test_blocking_helpers(void **state)
{
	struct pair	p;
	struct ipc_msg	m;
	char		*big;
	size_t		n;

	(void)state;
	pair_open(&p);
	/* Nothing to read: ETIMEDOUT (a hang guard, not a timing check). */
	assert_int_equal(ipc_peer_recv(&p.sup, &m, 1), -1);
	assert_int_equal(errno, ETIMEDOUT);
	assert_non_null(strstr(p.sup.err, "timed out"));
	/* A hello arrives whole: received. */
	samples_msg(&m, IPC_HELLO, 0);
	assert_int_equal(ipc_peer_send(&p.wrk, &m, 1000), 0);
	ipc_msg_free(&m);
	assert_int_equal(ipc_peer_recv(&p.sup, &m, 1000), 0);
	assert_int_equal(m.type, IPC_HELLO);
	ipc_msg_free(&m);
	/* A start bigger than the pipe, nobody reading: ETIMEDOUT, and the
	   rest stays queued. */
	assert_true(fcntl(p.s2w[1], F_SETPIPE_SZ, 4096) >= 4096);
	samples_msg(&m, IPC_START, 0);
	n = 256 * 1024;
	big = xmalloc(n + 1);
	memset(big, 't', n);
	big[n] = '\0';
	free(m.u.start.task);
	m.u.start.task = big;
	assert_int_equal(ipc_peer_send(&p.sup, &m, 1), -1);
	assert_int_equal(errno, ETIMEDOUT);
	assert_true(ipc_peer_queued(&p.sup) > 0);
	ipc_msg_free(&m);
	/* The worker's end closes: the supervisor's flush sees EPIPE. */
	close(p.s2w[0]);
	p.s2w[0] = open("/dev/null", O_RDONLY);
	assert_int_equal(ipc_peer_flush(&p.sup), -1);
	assert_int_equal(errno, EPIPE);
	assert_non_null(strstr(p.sup.err, "write:"));
	/* The worker's writing end closes with nothing pending: EPIPE. */
	buf_reset(&p.sup.out);
	close(p.w2s[1]);
	p.w2s[1] = open("/dev/null", O_WRONLY);
	assert_int_equal(ipc_peer_recv(&p.sup, &m, 1000), -1);
	assert_int_equal(errno, EPIPE);
	assert_non_null(strstr(p.sup.err, "closed the pipe"));
	pair_close(&p);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_byte_by_byte),
		cmocka_unit_test(test_many_per_read),
		cmocka_unit_test(test_fill_drained),
		cmocka_unit_test(test_bad_headers),
		cmocka_unit_test(test_writer_full_pipe),
		cmocka_unit_test(test_queue_cap),
		cmocka_unit_test(test_perm_table),
		cmocka_unit_test(test_perm_pending_max),
		cmocka_unit_test(test_pipe_size),
		cmocka_unit_test(test_blocking_helpers),
		cmocka_unit_test(test_recv_drains),
		cmocka_unit_test(test_recv_no_deadline),
	};

	signal(SIGPIPE, SIG_IGN);
	return cmocka_run_group_tests(tests, NULL, NULL);
}

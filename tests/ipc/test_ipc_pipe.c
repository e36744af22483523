/*
 * Integration: a supervisor (this process, non-blocking event loop) and a
 * worker (a forked child, blocking helpers) talk through a real pipe pair:
 * a whole run including a 2 MiB turn; a worker that sends garbage is
 * killed and the supervisor goes on; a worker that receives garbage, or a
 * pipe closed mid-frame, ends the worker with the fatalx exit code.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "common/clock.h"
#include "common/fd.h"
#include "common/xmalloc.h"
#include "ipc/ipc.h"
#include "ipc/ipc_testapi.h"
#include "tests/ipc/samples.h"
#include "tests/test_wait.h"

#define BIG		(2u * 1024 * 1024)
#define GUARD_MS	20000	/* hang guard only */
#define EXIT_PROTO	3	/* what fatalx would do in a worker */

/* Child side: each returns the exit code for the parent to check. */
typedef int (*worker_fn)(struct ipc_peer *);

static pid_t
spawn_worker(struct ipc_peer *sup, worker_fn fn)
{
	struct ipc_peer	wrk;
	int		sfd[2], wfd[2];
	pid_t		pid;

	assert_int_equal(ipc_peer_pipes(sfd, wfd), 0);
	assert_true((pid = fork()) != -1);
	if (pid == 0) {
		close(sfd[0]);
		close(sfd[1]);
		ipc_peer_init(&wrk, wfd[0], wfd[1], IPC_SIDE_WORKER);
		_exit(fn(&wrk));
	}
	close(wfd[0]);
	close(wfd[1]);
	ipc_peer_init(sup, sfd[0], sfd[1], IPC_SIDE_SUPERVISOR);
	return pid;
}

static int
child_fail(struct ipc_peer *p, const char *what)
{
	fprintf(stderr, "worker: %s: %s\n", what, p->err);
	return errno == EPROTO ? EXIT_PROTO : 1;
}

/* A whole run from the worker's side. */
static int
worker_run(struct ipc_peer *p)
{
	struct ipc_msg	m;
	char		*big;

	samples_msg(&m, IPC_HELLO, 0);
	m.u.hello.pid = (uint32_t)getpid();
	if (ipc_peer_send(p, &m, GUARD_MS) == -1)
		return child_fail(p, "hello");
	ipc_msg_free(&m);
	if (ipc_peer_recv(p, &m, GUARD_MS) == -1)
		return child_fail(p, "start");
	if (m.type != IPC_START || strcmp(m.u.start.path, "0.2.13") != 0)
		return 10;
	ipc_msg_free(&m);

	samples_msg(&m, IPC_LLM, 0);
	m.u.llm.id = 1;
	if (ipc_peer_send(p, &m, GUARD_MS) == -1)
		return child_fail(p, "llm");
	ipc_msg_free(&m);
	if (ipc_peer_recv(p, &m, GUARD_MS) == -1)
		return child_fail(p, "llm_ok");
	if (m.type != IPC_LLM_OK || m.u.llm_ok.id != 1)
		return 11;
	ipc_msg_free(&m);

	samples_msg(&m, IPC_SPAWN, 0);
	m.u.spawn.id = 2;
	if (ipc_peer_send(p, &m, GUARD_MS) == -1)
		return child_fail(p, "spawn");
	ipc_msg_free(&m);
	if (ipc_peer_recv(p, &m, GUARD_MS) == -1)
		return child_fail(p, "spawn_err");
	if (m.type != IPC_SPAWN_ERR || strcmp(m.u.spawn_err.code,
	    IPC_ERR_MAX_AGENTS) != 0)
		return 12;
	ipc_msg_free(&m);

	samples_msg(&m, IPC_EVENT, 0);
	if (ipc_peer_send(p, &m, GUARD_MS) == -1)
		return child_fail(p, "event");
	ipc_msg_free(&m);
	samples_msg(&m, IPC_CHECKPOINT, 0);
	if (ipc_peer_send(p, &m, GUARD_MS) == -1)
		return child_fail(p, "checkpoint");
	ipc_msg_free(&m);

	/* A big turn both ways. */
	samples_msg(&m, IPC_LLM, 1);
	m.u.llm.id = 3;
	big = xmalloc(BIG + 1);
	memset(big, 'w', BIG);
	big[BIG] = '\0';
	msg_list_add_text(&m.u.llm.messages, MSG_USER, big);
	free(big);
	if (ipc_peer_send(p, &m, GUARD_MS) == -1)
		return child_fail(p, "big llm");
	ipc_msg_free(&m);
	if (ipc_peer_recv(p, &m, GUARD_MS) == -1)
		return child_fail(p, "big llm_ok");
	if (m.type != IPC_LLM_OK || m.u.llm_ok.id != 3 ||
	    strlen(m.u.llm_ok.reply.msg.text) != BIG)
		return 13;
	ipc_msg_free(&m);

	samples_msg(&m, IPC_DONE, 0);
	if (ipc_peer_send(p, &m, GUARD_MS) == -1)
		return child_fail(p, "done");
	ipc_msg_free(&m);
	ipc_peer_free(p);
	return 0;
}

struct tally {
	int	got[400];
	int	broken;
	char	why[IPC_ERR_LEN];
};

/* The supervisor's answers, as its dispatch would give them. */
static void
sup_dispatch(struct ipc_peer *p, struct ipc_msg *m)
{
	struct ipc_msg	a;
	size_t		len;

	switch (m->type) {
	case IPC_HELLO:
		samples_msg(&a, IPC_START, 0);
		break;
	case IPC_LLM:
		samples_msg(&a, IPC_LLM_OK, 0);
		a.u.llm_ok.id = m->u.llm.id;
		len = m->u.llm.messages.n ? strlen(m->u.llm.messages.v[
		    m->u.llm.messages.n - 1].text) : 0;
		if (len >= BIG) {
			free(a.u.llm_ok.reply.msg.text);
			a.u.llm_ok.reply.msg.text = xmalloc(len + 1);
			memset(a.u.llm_ok.reply.msg.text, 's', len);
			a.u.llm_ok.reply.msg.text[len] = '\0';
		}
		break;
	case IPC_SPAWN:
		samples_msg(&a, IPC_SPAWN_ERR, 0);
		a.u.spawn_err.id = m->u.spawn.id;
		break;
	case IPC_NONE:
	case IPC_START:
	case IPC_LLM_OK:
	case IPC_LLM_ERR:
	case IPC_SPAWN_OK:
	case IPC_SPAWN_ERR:
	case IPC_MCP:
	case IPC_MCP_OK:
	case IPC_MCP_ERR:
	case IPC_HTTP:
	case IPC_HTTP_OK:
	case IPC_HTTP_ERR:
	case IPC_EVENT:
	case IPC_CHECKPOINT:
	case IPC_DONE:
	case IPC_CANCEL:
	default:
		return;
	}
	assert_int_equal(ipc_peer_queue(p, &a), 0);
	ipc_msg_free(&a);
}

/* A non-blocking loop until EOF or a protocol error. */
static void
sup_loop(struct ipc_peer *p, struct tally *t)
{
	struct pollfd	pfd[2];
	struct ipc_msg	m;
	uint64_t	deadline = clock_mono_ms() + GUARD_MS;
	ssize_t		n;
	int		rv;

	memset(t, 0, sizeof(*t));
	for (;;) {
		if (clock_mono_ms() >= deadline)
			fail_msg("waited %d s for the worker's end of the pipe "
			    "(EOF)", GUARD_MS / 1000);
		pfd[0].fd = p->rfd;
		pfd[0].events = POLLIN;
		pfd[1].fd = p->wfd;
		pfd[1].events = ipc_peer_queued(p) ? POLLOUT : 0;
		assert_true(poll(pfd, 2, 1000) >= 0);
		if (pfd[1].revents & (POLLOUT | POLLERR))
			assert_true(ipc_peer_flush(p) >= 0);
		if (!(pfd[0].revents & (POLLIN | POLLHUP)))
			continue;
		if ((n = ipc_peer_fill(p)) == 0)
			return;
		assert_true(n > 0 || errno == EAGAIN);
		while ((rv = ipc_peer_get(p, &m)) == 1) {
			t->got[m.type]++;
			sup_dispatch(p, &m);
			ipc_msg_free(&m);
		}
		if (rv == -1) {
			t->broken = 1;
			strlcpy(t->why, p->err, sizeof(t->why));
			return;
		}
		if (ipc_peer_flush(p) == -1)
			return;
	}
}

/* The child's end, within 60 s: the test fails saying so, not at
 * ctest's timeout. */
static int
reap(pid_t pid)
{
	int	status;

	assert_true((status = test_waitpid(pid, 60, "the worker child")) !=
	    -1);
	if (WIFSIGNALED(status))
		return 1000 + WTERMSIG(status);
	return WEXITSTATUS(status);
}

static void
test_whole_run(void **state)
{
	struct ipc_peer	sup;
	struct tally	t;
	pid_t		pid;

	(void)state;
	pid = spawn_worker(&sup, worker_run);
	sup_loop(&sup, &t);
	assert_int_equal(t.broken, 0);
	assert_int_equal(reap(pid), 0);
	assert_int_equal(t.got[IPC_HELLO], 1);
	assert_int_equal(t.got[IPC_LLM], 2);
	assert_int_equal(t.got[IPC_SPAWN], 1);
	assert_int_equal(t.got[IPC_EVENT], 1);
	assert_int_equal(t.got[IPC_CHECKPOINT], 1);
	assert_int_equal(t.got[IPC_DONE], 1);
	assert_int_equal(sup.state, IPC_STATE_DONE);
	close(sup.rfd);
	close(sup.wfd);
	ipc_peer_free(&sup);
}

/* A worker that claims a 4 GiB frame after its hello. */
static int
worker_garbage(struct ipc_peer *p)
{
	struct ipc_msg	m;

	samples_msg(&m, IPC_HELLO, 0);
	if (ipc_peer_send(p, &m, GUARD_MS) == -1)
		return 1;
	ipc_msg_free(&m);
	if (fd_write_all(p->wfd, "\xff\xff\xff\xff" "abc", 7) == -1)
		return 1;
	pause();
	return 0;
}

static void
test_worker_garbage(void **state)
{
	struct ipc_peer	sup;
	struct tally	t;
	pid_t		pid;

	(void)state;
	pid = spawn_worker(&sup, worker_garbage);
	sup_loop(&sup, &t);
	/* Policy: kill that worker, record why, go on. */
	assert_int_equal(t.broken, 1);
	assert_non_null(strstr(t.why, "bad frame: length over 16 MiB"));
	assert_int_equal(kill(pid, SIGKILL), 0);
	assert_int_equal(reap(pid), 1000 + SIGKILL);
	assert_int_equal(t.got[IPC_HELLO], 1);
	close(sup.rfd);
	close(sup.wfd);
	ipc_peer_free(&sup);
}

/* A worker waiting for start: what it gets decides its exit. */
static int
worker_wait_start(struct ipc_peer *p)
{
	struct ipc_msg	m;

	samples_msg(&m, IPC_HELLO, 0);
	if (ipc_peer_send(p, &m, GUARD_MS) == -1)
		return 1;
	ipc_msg_free(&m);
	if (ipc_peer_recv(p, &m, GUARD_MS) == -1)
		return child_fail(p, "waiting for start");
	ipc_msg_free(&m);
	return 0;
}

static void
sup_send_raw(pid_t pid, struct ipc_peer *sup, const void *raw, size_t len,
    int want)
{
	struct ipc_msg	m;

	/* Take the hello, then answer with raw bytes and hang up. */
	assert_int_equal(fd_set_nonblock(sup->rfd, 0), 0);
	assert_int_equal(ipc_peer_recv(sup, &m, GUARD_MS), 0);
	assert_int_equal(m.type, IPC_HELLO);
	ipc_msg_free(&m);
	assert_int_equal(fd_set_nonblock(sup->wfd, 0), 0);
	assert_int_equal(fd_write_all(sup->wfd, raw, len), 0);
	close(sup->wfd);
	assert_int_equal(reap(pid), want);
	close(sup->rfd);
	ipc_peer_free(sup);
}

static void
test_supervisor_garbage(void **state)
{
	struct ipc_peer	sup;
	/* {type: start, bogus: nil} */
	static const unsigned char bad[] = { 0, 0, 0, 15, 0x82, 0xa4, 't',
	    'y', 'p', 'e', 0xcc, IPC_START, 0xa5, 'b', 'o', 'g', 'u', 's',
	    0xc0 };
	struct buf	b;
	pid_t		pid;

	(void)state;
	/* Garbage: the worker ends with the fatalx code. */
	pid = spawn_worker(&sup, worker_wait_start);
	sup_send_raw(pid, &sup, bad, sizeof(bad), EXIT_PROTO);
	/* Half a valid start, then EOF: also a protocol error. */
	buf_init(&b, 0);
	samples_frame(&b, IPC_START, 0);
	pid = spawn_worker(&sup, worker_wait_start);
	sup_send_raw(pid, &sup, buf_head(&b), buf_left(&b) / 2, EXIT_PROTO);
	/* The whole start: fine. */
	pid = spawn_worker(&sup, worker_wait_start);
	sup_send_raw(pid, &sup, buf_head(&b), buf_left(&b), 0);
	buf_free(&b);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_whole_run),
		cmocka_unit_test(test_worker_garbage),
		cmocka_unit_test(test_supervisor_garbage),
	};

	signal(SIGPIPE, SIG_IGN);
	return cmocka_run_group_tests(tests, NULL, NULL);
}

/*
 * The spawn channel under a mass kill: hundreds of workers started through
 * the spawn server, then killed with no answer read, while the server's
 * EXITs fill its socket buffer, then killed again. With blocking sends in
 * both directions the two processes used to deadlock there (the server
 * blocked sending EXITs, the supervisor blocked sending KILLs); now each
 * side queues what the socket does not take and keeps reading, and every
 * worker's exit comes back within seconds. An alarm turns a regression
 * into a failure instead of a hang. And a supervisor that never reads:
 * the server's queue stops at its cap, and the server exits.
 */
#include <sys/resource.h>
#include <sys/socket.h>

#include <errno.h>
#include <poll.h>
#include <signal.h>

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "common/clock.h"
#include "sandbox/sandbox.h"
#include "spawnd/spawn.h"
#include "spawnd/spawnd.h"
#include "supervisor/spawnd_client.h"
#include "supervisor/spawnd_client_testapi.h"
#include "tests/e2e/harness.h"

#define NWORKERS	500	/* more EXITs than the server's buffer holds */
#define DEADLINE_S	30

struct mass {
	pid_t		pid[NWORKERS];
	int		nspawned;
	int		nexits;
	int		exited[NWORKERS];
};

static volatile pid_t	server_pid;

static void
on_alarm(int signo)
{
	static const char msg[] = "test_spawnd: no progress in 30 s (the "
	    "spawn channel deadlocked?)\n";

	(void)signo;
	(void)write(2, msg, sizeof(msg) - 1);
	/* A stopped server would never see our death and would keep its
	 * workers (and ctest's output pipe) forever. */
	if (server_pid > 0)
		(void)kill(server_pid, SIGCONT);
	_exit(1);
}

/* A failed assertion while the server is stopped must not leave it so. */
static void
server_cont(void)
{
	if (server_pid > 0)
		(void)kill(server_pid, SIGCONT);
}

static void
on_spawned(void *cookie, const struct spawn_child *c, const char *err,
    void *arg)
{
	struct mass	*m = arg;
	struct spawn_child	 cc;

	(void)cookie;
	if (c == NULL)
		fail_msg("spawn %d: %s", m->nspawned, err);
	/* Only the pid matters here: 1,500 pipes would pass the fd limit. */
	cc = *c;
	m->pid[m->nspawned++] = c->pid;
	spawn_release(&cc);
}

static void
on_exited(pid_t pid, int code, int status, void *arg)
{
	struct mass	*m = arg;
	int		 i;

	(void)code;
	(void)status;
	for (i = 0; i < m->nspawned; i++)
		if (m->pid[i] == pid) {
			assert_int_equal(m->exited[i], 0);
			m->exited[i] = 1;
			m->nexits++;
			return;
		}
	fail_msg("exit of pid %d, never spawned", (int)pid);
}

static const struct spawnd_client_ops mass_ops = { on_spawned, on_exited };

/* One round of the channel: answers read, queued requests flushed. */
static void
mass_pump(struct spawnd_client *d, struct mass *m)
{
	struct pollfd	pfd;

	pfd.fd = spawnd_client_fd(d);
	pfd.events = POLLIN | (spawnd_client_queued(d) > 0 ? POLLOUT : 0);
	(void)poll(&pfd, 1, 1000);
	assert_int_not_equal(spawnd_client_flush(d), -1);
	assert_int_equal(spawnd_client_read(d, &mass_ops, m), 0);
}

/* Send what waits, reading nothing: the server must take it all. */
static void
mass_flush(struct spawnd_client *d)
{
	struct pollfd	pfd;
	uint64_t	end = clock_mono_ms() + 10000;

	while (spawnd_client_flush(d) == 1) {
		if (clock_mono_ms() > end)
			fail_msg("%zu KILLs still wait after 10 s: the spawn "
			    "server does not read", spawnd_client_queued(d));
		pfd.fd = spawnd_client_fd(d);
		pfd.events = POLLOUT;
		(void)poll(&pfd, 1, 1000);
	}
}

static void
test_mass_kill(void **state)
{
	struct sandbox_policy	 pol;
	struct sandbox_error	 e;
	struct spawn_req	 req;
	struct spawnd_client	*d;
	struct mass		*m;
	char			*argv[] = { "sleep", "600", NULL };
	char			**env = spawn_env(), err[256], *dir;
	size_t			 queued;
	int			 i, requested = 0, sz = 4096;
	uint64_t		 t0;

	(void)state;
	assert_non_null(dir = h_tmpdir());
	memset(&e, 0, sizeof(e));
	assert_int_equal(sandbox_policy_init(&pol, "explore", dir, 0, 0, &e),
	    0);
	memset(&req, 0, sizeof(req));
	req.bin = "/bin/sleep";
	req.argv = argv;
	req.envp = env;
	req.policy = &pol;
	assert_non_null(m = calloc(1, sizeof(*m)));
	signal(SIGALRM, on_alarm);
	alarm(DEADLINE_S);
	assert_non_null(d = spawnd_client_start(err, sizeof(err)));
	server_pid = spawnd_client_pid(d);
	atexit(server_cont);
	t0 = clock_mono_ms();
	while (m->nspawned < NWORKERS) {
		while (requested < NWORKERS && !spawnd_client_full(d)) {
			assert_int_not_equal(spawnd_client_request(d, &req, m,
			    err, sizeof(err)), 0);
			requested++;
		}
		mass_pump(d, m);
	}
	fprintf(stderr, "%d workers started in %llu ms\n", NWORKERS,
	    (unsigned long long)(clock_mono_ms() - t0));
	/* A small buffer our way (a SPAWN would not fit): a dozen KILLs
	 * fill it. */
	assert_int_equal(setsockopt(spawnd_client_fd(d), SOL_SOCKET,
	    SO_SNDBUF, &sz, sizeof(sz)), 0);
	t0 = clock_mono_ms();
	/* The server does not read: our KILLs wait in the client, and the
	 * calls return (blocking, they used to hang here). */
	assert_int_equal(kill(spawnd_client_pid(d), SIGSTOP), 0);
	for (i = 0; i < NWORKERS; i++)
		spawnd_client_kill(d, m->pid[i], SIGKILL);
	assert_true((queued = spawnd_client_queued(d)) > 0);
	/* The same KILL already waits: not queued twice. */
	spawnd_client_kill(d, m->pid[NWORKERS - 1], SIGKILL);
	assert_int_equal(spawnd_client_queued(d), queued);
	assert_int_equal(kill(spawnd_client_pid(d), SIGCONT), 0);
	mass_flush(d);
	/* Nothing read yet: the server's EXITs fill its buffer and wait in
	 * its queue. More KILLs still go through: the server reads them
	 * while its answers wait (blocking, it sat in its send). */
	sleep(1);
	for (i = 0; i < NWORKERS; i++)
		spawnd_client_kill(d, m->pid[i], SIGKILL);
	mass_flush(d);
	while (m->nexits < NWORKERS)
		mass_pump(d, m);
	alarm(0);
	fprintf(stderr, "%d workers killed in %llu ms\n", NWORKERS,
	    (unsigned long long)(clock_mono_ms() - t0));
	spawnd_client_stop(d);
	spawn_env_free(env);
	h_rm_rf(dir);
	free(dir);
	free(m);
}

/*
 * A supervisor that sends and never reads: the server's answers (a
 * malformed SPAWN is answered at once, no fork) pass its queue's cap, and
 * it exits instead of growing; the channel ends before every answer came.
 */
static void
test_unread_cap(void **state)
{
	struct spawnd_client	*d;
	struct spawnd_hdr	 h;
	struct pollfd		 pfd;
	char			 buf[1024], err[1024];
	unsigned		 sent = 0, got = 0, want = 65536 + 4096;
	ssize_t			 n;

	(void)state;
	signal(SIGALRM, on_alarm);
	alarm(DEADLINE_S);
	assert_non_null(d = spawnd_client_start(err, sizeof(err)));
	server_pid = 0;
	memset(&h, 0, sizeof(h));
	h.type = SPAWND_SPAWN;
	pfd.fd = spawnd_client_fd(d);
	pfd.events = POLLOUT;
	while (sent < want) {
		h.id = sent + 1;
		if (spawnd_sendmsg(pfd.fd, &h, NULL, NULL, 0) == 0) {
			sent++;
			continue;
		}
		if (errno != EAGAIN)
			break;		/* the server is gone */
		(void)poll(&pfd, 1, 1000);
	}
	pfd.events = POLLIN;
	while (got < sent) {	/* all answered: no cap, the server lives */
		(void)poll(&pfd, 1, 1000);
		n = recv(pfd.fd, buf, sizeof(buf), MSG_DONTWAIT);
		if (n == -1 && errno == EAGAIN)
			continue;
		if (n <= 0)
			break;
		got++;
	}
	alarm(0);
	fprintf(stderr, "%u requests sent, %u answers before the end\n",
	    sent, got);
	assert_true(got < sent);
	spawnd_client_stop(d);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_mass_kill),
		cmocka_unit_test(test_unread_cap),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}

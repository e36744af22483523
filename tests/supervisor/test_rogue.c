/*
 * The supervisor against workers that misbehave: one that never says
 * hello, one that sends garbage frames, one whose hello claims less
 * sandbox than its profile needs. Each is killed, the reason reaches the
 * orchestrator as its delegate call's result and the store's events, and
 * the run finishes. The rogue "workers" are small scripts given with
 * --worker; the supervisor starts them exactly as it starts warren-worker.
 * And the spawn server's side of it: requests answered without the
 * supervisor waiting, in order, a refused one with its reason, and a
 * worker nobody waits for any more killed, not leaked.
 */
#include <sys/stat.h>
#include <sys/wait.h>

#include <poll.h>
#include <signal.h>

#include <limits.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "common/buf.h"
#include "common/clock.h"
#include "ipc/ipc.h"
#include "sandbox/sandbox.h"
#include "supervisor/spawn.h"
#include "supervisor/store.h"
#include "tests/e2e/harness.h"

struct ctx {
	char	*dir;
	char	 ws[1024];
	char	 cas[PATH_MAX];
	char	 db[PATH_MAX];
	char	 worker[PATH_MAX];
};

static int
setup(void **state)
{
	struct ctx	*c = calloc(1, sizeof(*c));
	FILE		*f;

	c->dir = h_tmpdir();
	snprintf(c->ws, sizeof(c->ws), "%s/ws", c->dir);
	snprintf(c->cas, sizeof(c->cas), "%s/s.cassette", c->dir);
	snprintf(c->db, sizeof(c->db), "%s/warren.db", c->dir);
	/* In the workspace: the only place a worker's private /tmp shows. */
	snprintf(c->worker, sizeof(c->worker), "%s/rogue-worker", c->ws);
	h_write(c->ws, "a.txt", "a\n", 0);
	f = h_cassette_open(c->cas);
	h_turn(f, "0", 1, "[{\"id\":\"a\",\"name\":\"delegate\",\"arguments\":"
	    "\"{\\\"profile\\\":\\\"explore\\\",\\\"task\\\":\\\"x\\\"}\"}]");
	h_turn(f, "0", 2, "[{\"id\":\"b\",\"name\":\"complete\",\"arguments\":"
	    "\"{\\\"result\\\":\\\"HANDLED\\\"}\"}]");
	fclose(f);
	*state = c;
	return 0;
}

static int
teardown(void **state)
{
	struct ctx	*c = *state;

	h_rm_rf(c->dir);
	free(c->dir);
	free(c);
	return 0;
}

static void
run_rogue(struct ctx *c, struct h_run *r, const char *script)
{
	char	*argv[] = { "warren", "run", "--json", "--workspace", c->ws,
		    "--replay", c->cas, "--db", c->db, "--worker", c->worker,
		    "--hello-timeout", "2s", "rogue task", NULL };

	h_write(c->ws, "rogue-worker", script, 0755);
	assert_int_equal(h_warren(r, argv, NULL, NULL, NULL), 0);
}

/* The run finished, 0.1 died of a protocol violation saying why. */
static void
check_killed(struct ctx *c, struct h_run *r, const char *why)
{
	struct store		*st;
	struct store_event	*ev;
	size_t			 nev, i;
	int64_t			 run;
	char			 err[512];
	int			 found = 0;

	assert_int_equal(r->status, 0);
	assert_true(h_count_lines(r->out, "\"path\":\"0.1\"",
	    "\"end\":\"protocol\"") == 1);
	assert_true(h_count_lines(r->out, "\"path\":\"0.1\"", why) >= 1);
	assert_true(h_count_lines(r->out, "\"event\":\"tool_result\"",
	    "subagent 0.1 (explore) was killed for a protocol violation") >= 1);
	assert_true(h_count_lines(r->out, "\"event\":\"result\"", "HANDLED")
	    == 1);
	/* Recorded: a "killed" event for 0.1 in the run's store. */
	st = store_open(c->db, STORE_READ, err, sizeof(err));
	assert_non_null(st);
	assert_int_equal(store_run_latest(st, NULL, &run), 0);
	assert_int_equal(store_events_list(st, run, &ev, &nev), 0);
	for (i = 0; i < nev; i++)
		if (ev[i].path != NULL && strcmp(ev[i].path, "0.1") == 0 &&
		    strcmp(ev[i].type, "killed") == 0 &&
		    strstr(ev[i].detail, why) != NULL)
			found = 1;
	store_events_free(ev, nev);
	store_close(st);
	assert_true(found);
}

static void
test_hello_never_comes(void **state)
{
	struct ctx	*c = *state;
	struct h_run	 r;

	run_rogue(c, &r, "#!/bin/sh\nexec sleep 300\n");
	check_killed(c, &r, "no hello within 2000 ms");
	h_run_free(&r);
}

static void
test_garbage_frames(void **state)
{
	struct ctx	*c = *state;
	struct h_run	 r;

	/* A frame of 8 bytes that is no msgpack map. */
	run_rogue(c, &r, "#!/bin/sh\nprintf '\\000\\000\\000\\010garbage!' "
	    ">&4\nexec sleep 300\n");
	check_killed(c, &r, "");
	h_run_free(&r);
}

static void
test_huge_length(void **state)
{
	struct ctx	*c = *state;
	struct h_run	 r;

	/* A length over the maximum: refused before any allocation. */
	run_rogue(c, &r, "#!/bin/sh\nprintf '\\377\\377\\377\\377xxxx' >&4\n"
	    "exec sleep 300\n");
	check_killed(c, &r, "");
	h_run_free(&r);
}

/* A well-formed hello that claims no sandbox layer at all. */
static void
test_hello_lies(void **state)
{
	struct ctx	*c = *state;
	struct h_run	 r;
	struct ipc_msg	 m;
	struct buf	 b;
	char		 err[256], path[PATH_MAX], script[PATH_MAX + 64];
	FILE		*f;

	memset(&m, 0, sizeof(m));
	m.type = IPC_HELLO;
	m.u.hello.version = IPC_PROTOCOL_VERSION;
	m.u.hello.pid = 1;
	buf_init(&b, 0);
	assert_int_equal(ipc_msg_frame(&b, &m, err, sizeof(err)), 0);
	snprintf(path, sizeof(path), "%s/hello.bin", c->ws);
	f = fopen(path, "w");
	assert_non_null(f);
	assert_int_equal(fwrite(buf_head(&b), 1, buf_left(&b), f),
	    buf_left(&b));
	fclose(f);
	buf_free(&b);
	(void)chmod(path, 0644);
	snprintf(script, sizeof(script), "#!/bin/sh\ncat %s >&4\n"
	    "exec sleep 300\n", path);
	run_rogue(c, &r, script);
	check_killed(c, &r, "sandbox short of profile explore");
	h_run_free(&r);
}

/* What the spawn server delivered to the test. */
struct answers {
	int			 nspawned;
	void			*cookie[4];
	struct spawn_child	 child[4];
	char			 err[4][256];
	int			 nexits;
	pid_t			 exited[8];
};

static void
on_spawned(void *cookie, const struct spawn_child *c, const char *err,
    void *arg)
{
	struct answers	*a = arg;
	int		 i = a->nspawned++;

	assert_true(i < 4);
	a->cookie[i] = cookie;
	if (c != NULL)
		a->child[i] = *c;
	else {
		a->child[i].pid = -1;
		snprintf(a->err[i], sizeof(a->err[i]), "%s", err);
	}
}

static void
on_exited(pid_t pid, int code, int status, void *arg)
{
	struct answers	*a = arg;

	(void)code;
	(void)status;
	assert_true(a->nexits < 8);
	a->exited[a->nexits++] = pid;
}

static const struct spawnd_ops test_ops = { on_spawned, on_exited };

/* Read answers until spawned and exits reach the counts (hang guard 60 s). */
static void
spawnd_wait(struct spawnd *d, struct answers *a, int nspawned, int nexits)
{
	struct pollfd	pfd;
	uint64_t	end = clock_mono_ms() + 60000;

	while (a->nspawned < nspawned || a->nexits < nexits) {
		assert_true(clock_mono_ms() < end);
		pfd.fd = spawnd_fd(d);
		pfd.events = POLLIN;
		(void)poll(&pfd, 1, 1000);
		assert_int_equal(spawnd_read(d, &test_ops, a), 0);
	}
}

/* Read until the server's end of the channel is gone (hang guard 60 s). */
static void
spawnd_wait_gone(struct spawnd *d, struct answers *a)
{
	struct pollfd	pfd;
	uint64_t	end = clock_mono_ms() + 60000;

	for (;;) {
		assert_true(clock_mono_ms() < end);
		pfd.fd = spawnd_fd(d);
		pfd.events = POLLIN;
		(void)poll(&pfd, 1, 1000);
		if (spawnd_read(d, &test_ops, a) == -1)
			return;
	}
}

static void
test_spawnd_async(void **state)
{
	struct ctx		*c = *state;
	struct sandbox_policy	 pol, bad;
	struct sandbox_error	 e;
	struct spawn_req	 req;
	struct answers		 a;
	struct spawnd		*d;
	const char		*bin = getenv("WARREN_WORKER_BIN");
	char			*argv[] = { "warren-worker", "--path", "0.1",
				    "--depth", "1", "--profile", "explore", NULL };
	char			**env = spawn_env(), **big, err[256];
	int			 one, two, three, i, found;
	uint32_t		 id2;

	assert_non_null(bin);
	memset(&e, 0, sizeof(e));
	assert_int_equal(sandbox_policy_init(&pol, "explore", c->ws, 0, 0,
	    &e), 0);
	bad = pol;
	strlcpy(bad.workspace, "not/absolute", sizeof(bad.workspace));
	memset(&req, 0, sizeof(req));
	req.bin = bin;
	req.argv = argv;
	req.envp = env;
	req.policy = &pol;
	assert_non_null(d = spawnd_start());
	/* Three requests before any answer: nothing blocks. */
	assert_int_not_equal(spawnd_request(d, &req, &one, err,
	    sizeof(err)), 0);
	assert_int_not_equal(id2 = spawnd_request(d, &req, &two, err,
	    sizeof(err)), 0);
	req.policy = &bad;
	assert_int_not_equal(spawnd_request(d, &req, &three, err,
	    sizeof(err)), 0);
	/* Nobody waits for the second any more: killed when it comes. */
	spawnd_forget(d, id2);
	memset(&a, 0, sizeof(a));
	spawnd_wait(d, &a, 2, 1);
	assert_int_equal(a.nspawned, 2);
	assert_ptr_equal(a.cookie[0], &one);
	assert_true(a.child[0].pid > 0);
	assert_true(a.child[0].remote);
	assert_ptr_equal(a.cookie[1], &three);
	assert_int_equal(a.child[1].pid, -1);
	assert_non_null(strstr(a.err[1], "workspace must be absolute"));
	/* The forgotten worker's exit, and never the first's yet. */
	for (i = 0; i < a.nexits; i++)
		assert_int_not_equal(a.exited[i], a.child[0].pid);
	/* The first ends when its channel closes (no start will come). */
	spawn_release(&a.child[0]);
	spawnd_wait(d, &a, 2, 2);
	for (i = found = 0; i < a.nexits; i++)
		found += a.exited[i] == a.child[0].pid;
	assert_int_equal(found, 1);
	assert_int_equal(spawnd_full(d), 0);
	/* Over the server's bound for argv and environment: refused here. */
	big = calloc(41, sizeof(*big));
	assert_non_null(big);
	for (i = 0; i < 40; i++) {
		assert_non_null(big[i] = malloc(256));
		memset(big[i], 'x', 255);
		big[i][255] = '\0';
	}
	req.envp = big;
	req.policy = &pol;
	assert_int_equal(spawnd_request(d, &req, &one, err, sizeof(err)), 0);
	assert_non_null(strstr(err, "too large"));
	for (i = 0; i < 40; i++)
		free(big[i]);
	free(big);
	/* A request the server never answers (stopped, then killed): the
	 * channel's end says so, and the request's cookie comes back once. */
	req.envp = env;
	assert_int_equal(kill(spawnd_pid(d), SIGSTOP), 0);
	assert_int_not_equal(spawnd_request(d, &req, &two, err,
	    sizeof(err)), 0);
	assert_int_equal(kill(spawnd_pid(d), SIGKILL), 0);
	spawnd_wait_gone(d, &a);
	assert_int_equal(a.nspawned, 2);
	assert_ptr_equal(spawnd_orphan(d), &two);
	assert_null(spawnd_orphan(d));
	assert_int_equal(spawnd_full(d), 0);
	spawnd_stop(d);
	spawn_env_free(env);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_hello_never_comes, setup,
		    teardown),
		cmocka_unit_test_setup_teardown(test_garbage_frames, setup,
		    teardown),
		cmocka_unit_test_setup_teardown(test_huge_length, setup,
		    teardown),
		cmocka_unit_test_setup_teardown(test_hello_lies, setup,
		    teardown),
		cmocka_unit_test_setup_teardown(test_spawnd_async, setup,
		    teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}

/*
 * The orphan sweep that ends a run (proc_sweep_orphans): every process
 * reparented to us, the subreaper, is killed and reaped, one that escaped
 * with setsid and a double fork too, one that ignores SIGTERM too; the
 * spawn server's pid is spared; and it returns at once. Here the test is
 * the subreaper and forks the orphans itself: in a run none reaches warren
 * where pid namespaces exist (each worker's tree is in its own, and dies
 * with it), so removing the call at the end of run_main fails no test.
 */
#include <sys/prctl.h>
#include <sys/wait.h>

#include <errno.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "common/clock.h"
#include "supervisor/run.h"
#include "tests/test_wait.h"

/* A child that sleeps until killed; SIGTERM ignored. */
static pid_t
sleeper(void)
{
	pid_t	pid;

	if ((pid = fork()) == 0) {
		(void)alarm(0);
		(void)signal(SIGTERM, SIG_IGN);
		for (;;)
			pause();
	}
	return pid;
}

/* A grandchild in a session of its own whose parent exits: our orphan. */
static pid_t
escaped(void)
{
	pid_t	pid, g = -1;
	int	p[2];

	if (pipe(p) == -1 || (pid = fork()) == -1)
		return -1;
	if (pid == 0) {
		close(p[0]);
		(void)setsid();
		if ((g = sleeper()) > 0 && write(p[1], &g, sizeof(g)) == -1)
			_exit(1);
		_exit(0);
	}
	close(p[1]);
	if (read(p[0], &g, sizeof(g)) != sizeof(g))
		g = -1;
	close(p[0]);
	(void)test_waitpid(pid, 60, "the session leader that starts the "
	    "sleeper");
	return g;
}

/* 1 if pid is gone and reaped (no zombie left). */
static int
gone(pid_t pid)
{
	return pid > 0 && kill(pid, 0) == -1 && errno == ESRCH;
}

/*
 * In a process of its own, the subreaper, so that a sweep that does not
 * kill (it waits 5 s a round, 20 rounds) fails in seconds on the alarm:
 * 0 passed, else what failed (printed). The pids it made go to out[3].
 */
static int
sweep_run(int out)
{
	pid_t		pids[3];
	uint64_t	t0, ms;
	int		st;

	(void)alarm(5);
	if (prctl(PR_SET_CHILD_SUBREAPER, 1) == -1)
		return 10;
	pids[0] = sleeper();		/* the spawn server */
	pids[1] = sleeper();
	pids[2] = escaped();
	if (write(out, pids, sizeof(pids)) != sizeof(pids) || pids[0] <= 0 ||
	    pids[1] <= 0 || pids[2] <= 0 || gone(pids[2]))
		return 11;
	t0 = clock_mono_ms();
	proc_sweep_orphans(pids[0]);
	ms = clock_mono_ms() - t0;
	fprintf(stderr, "sweep: %llu ms\n", (unsigned long long)ms);
	if (!gone(pids[1]) || !gone(pids[2])) {
		fprintf(stderr, "left alive: %s%s\n", gone(pids[1]) ? "" :
		    "a child ", gone(pids[2]) ? "" : "an escaped orphan");
		return 1;
	}
	if (ms >= 2000)
		return 2;
	/* The spawn server lives on, unreaped. */
	if (waitpid(pids[0], &st, WNOHANG) != 0)
		return 3;
	/* Nothing left: the sweep returns at once. */
	t0 = clock_mono_ms();
	proc_sweep_orphans(pids[0]);
	if (clock_mono_ms() - t0 >= 500)
		return 4;
	(void)kill(pids[0], SIGKILL);
	/* After SIGKILL: it ends. */
	return waitpid(pids[0], &st, 0) == pids[0] ? 0 : 5;
}

static void
test_sweep(void **state)
{
	pid_t	runner, pids[3] = { -1, -1, -1 };
	int	p[2], st, i;

	(void)state;
	assert_int_equal(pipe(p), 0);
	assert_true((runner = fork()) != -1);
	if (runner == 0) {
		close(p[0]);
		_exit(sweep_run(p[1]));
	}
	close(p[1]);
	assert_true((st = test_waitpid(runner, 240,
	    "the child of test_sweep")) != -1);
	if (read(p[0], pids, sizeof(pids)) == sizeof(pids))
		for (i = 0; i < 3; i++)
			if (pids[i] > 0)	/* never -1: every process */
				(void)kill(pids[i], SIGKILL);	/* if left */
	close(p[0]);
	if (WIFSIGNALED(st))
		fail_msg("the sweep did not return within 5 s (signal %d)",
		    WTERMSIG(st));
	if (WEXITSTATUS(st) != 0)
		fail_msg("the sweep failed: check %d", WEXITSTATUS(st));
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_sweep),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}

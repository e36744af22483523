/*
 * The run's two worker counters (supervisor/run.c): a --jobs slot taken
 * per started worker, given back while it is parked on its children or
 * after its done, and a live count per process. Going below 0 is a bug
 * of ours: it must abort with a message naming the agent, in release
 * builds too (no assert), not be clamped at 0 as it once was. And
 * WARREN_BUG itself: the message, then SIGABRT.
 */
#include <sys/resource.h>
#include <sys/wait.h>

#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "common/log.h"
#include "supervisor/run.h"
#include "tests/test_wait.h"

/*
 * Run fn(arg) in a child with stderr into a pipe; 1 if it died of
 * SIGABRT, and what it wrote in out.
 */
static int
aborts(void (*fn)(void *), void *arg, char *out, size_t outsz)
{
	struct rlimit	 nocore = { 0, 0 };
	int		 fd[2], st;
	size_t		 len = 0;
	ssize_t		 n;
	pid_t		 pid;

	assert_int_equal(pipe(fd), 0);
	assert_true((pid = fork()) != -1);
	if (pid == 0) {
		(void)setrlimit(RLIMIT_CORE, &nocore);
		if (dup2(fd[1], STDERR_FILENO) == -1)
			_exit(126);
		close(fd[0]);
		fn(arg);
		_exit(0);
	}
	close(fd[1]);
	while (len + 1 < outsz &&
	    (n = read(fd[0], out + len, outsz - 1 - len)) > 0)
		len += (size_t)n;
	out[len] = '\0';
	close(fd[0]);
	assert_true((st = test_waitpid(pid, 240, "the child of aborts")) != -1);
	return WIFSIGNALED(st) && WTERMSIG(st) == SIGABRT;
}

static void
bug(void *arg)
{
	(void)arg;
	WARREN_BUG("count %d below 0", -1);
}

static void
test_bug_aborts(void **state)
{
	char	out[1024];

	(void)state;
	log_init("warren", LOG_LEVEL_ERROR);
	assert_true(aborts(bug, NULL, out, sizeof(out)));
	assert_non_null(strstr(out, "warren: internal error at "));
	assert_non_null(strstr(out, "test_run_slots.c:"));
	assert_non_null(strstr(out, ": count -1 below 0 (a bug in warren"));
}

struct slots {
	struct run	r;
	struct node	n;
	int		op;	/* 0 park, 1 unpark, 2 gone */
};

static void
slots_op(void *arg)
{
	struct slots	*s = arg;

	if (s->op == 2)
		run_worker_gone(&s->r, &s->n);
	else
		run_slot_park(&s->r, &s->n, s->op == 0);
}

/* One worker's life: started, parked, back, parked at done, gone. */
static void
test_slots_balance(void **state)
{
	struct slots	*s = calloc(1, sizeof(*s));

	(void)state;
	assert_non_null(s);
	strlcpy(s->n.path, "0.1", sizeof(s->n.path));
	s->r.nlive = s->r.nactive = 1;	/* proc_start, run_schedule */
	run_slot_park(&s->r, &s->n, 1);
	assert_int_equal(s->r.nactive, 0);
	run_slot_park(&s->r, &s->n, 0);
	assert_int_equal(s->r.nactive, 1);
	run_slot_park(&s->r, &s->n, 1);		/* its done */
	run_slot_park(&s->r, &s->n, 0);		/* proc_exited */
	run_worker_gone(&s->r, &s->n);
	assert_int_equal(s->r.nactive, 0);
	assert_int_equal(s->r.nlive, 0);
	free(s);
}

/* Below 0: abort, naming the agent. */
static void
check_underflow(int op, unsigned nlive, unsigned nactive, const char *want)
{
	struct slots	*s = calloc(1, sizeof(*s));
	char		 out[1024];

	assert_non_null(s);
	strlcpy(s->n.path, "0.7", sizeof(s->n.path));
	s->r.nlive = nlive;
	s->r.nactive = nactive;
	s->op = op;
	log_init("warren", LOG_LEVEL_ERROR);
	if (!aborts(slots_op, s, out, sizeof(out)))
		fail_msg("op %d with nlive %u nactive %u did not abort: %s",
		    op, nlive, nactive, out);
	if (strstr(out, want) == NULL)
		fail_msg("\"%s\" not in: %s", want, out);
	free(s);
}

static void
test_slots_underflow(void **state)
{
	(void)state;
	check_underflow(0, 1, 0,
	    "agent 0.7 parks with no --jobs slot taken");
	check_underflow(2, 0, 1,
	    "agent 0.7 gone with 0 workers alive and 1 slots taken");
	check_underflow(2, 1, 0,
	    "agent 0.7 gone with 1 workers alive and 0 slots taken");
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_bug_aborts),
		cmocka_unit_test(test_slots_balance),
		cmocka_unit_test(test_slots_underflow),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}

/*
 * `warren mcp list`'s talk with a server against its deadline
 * (cli/cmd_mcp_list.c): a deadline that has already passed is a timeout,
 * said as one, not poll's wait forever (a negative timeout). A server that
 * wrote across the deadline, then went quiet with its pipes open, made
 * the listing hang; so did one that stopped reading its stdin.
 *
 * Each call runs under an alarm of GUARD_S seconds: a call that waits
 * past it ends the test with what it waited for.
 */
#include <errno.h>
#include <fcntl.h>
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

#include "cli/cmd_mcp_list_testapi.h"
#include "common/clock.h"

#define GUARD_S	5

static const char *guard_what;

static void
guard_fired(int sig)
{
	char	msg[256];
	int	n;

	(void)sig;
	n = snprintf(msg, sizeof(msg), "%s: still waiting %d s after its "
	    "deadline had passed (a poll without a deadline)\n", guard_what,
	    GUARD_S);
	(void)write(STDERR_FILENO, msg, (size_t)n);
	_exit(1);
}

static void
guard_arm(const char *what)
{
	struct sigaction	sa;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = guard_fired;
	guard_what = what;
	assert_int_equal(sigaction(SIGALRM, &sa, NULL), 0);
	alarm(GUARD_S);
}

/* A pipe, both ends non-blocking as spawn_worker's are. */
static void
t_pipe(int p[2])
{
	assert_int_equal(pipe2(p, O_NONBLOCK | O_CLOEXEC), 0);
}

/*
 * The server wrote a line that answers nothing up to the deadline and
 * then nothing more, its stdout open: the line is read, then the answer
 * is "no answer within", at once.
 */
static void
test_answer_past_deadline(void **state)
{
	static const char	 stray[] =
	    "{\"jsonrpc\":\"2.0\",\"id\":424242,\"result\":{}}\n";
	struct mcp_lines	 l;
	json_t			*msg = NULL;
	char			 err[256] = "";
	long long		 end;
	int			 p[2];

	(void)state;
	t_pipe(p);
	assert_int_equal(write(p[1], stray, sizeof(stray) - 1),
	    (ssize_t)sizeof(stray) - 1);
	memset(&l, 0, sizeof(l));
	buf_init(&l.in, 0);
	end = (long long)clock_mono_ms() - 1;
	guard_arm("mcp_list_answer");
	assert_null(mcp_list_answer(p[0], &l, 1, end, &msg, err,
	    sizeof(err)));
	alarm(0);
	assert_null(msg);
	if (strstr(err, "no answer within") == NULL)
		fail_msg("a passed deadline: \"%s\", not a timeout", err);
	/* The line before the deadline was read, not left in the pipe. */
	assert_true(l.read >= sizeof(stray) - 1);
	mcp_lines_free(&l);
	close(p[0]);
	close(p[1]);
}

/*
 * The server stopped reading its stdin (the pipe is full) and the
 * deadline passed: "it does not read its stdin", at once.
 */
static void
test_write_past_deadline(void **state)
{
	struct buf	 out;
	char		 fill[4096], err[256] = "";
	long long	 end;
	int		 p[2];

	(void)state;
	t_pipe(p);
	memset(fill, 'x', sizeof(fill));
	while (write(p[1], fill, sizeof(fill)) > 0)
		;
	assert_int_equal(errno, EAGAIN);
	buf_init(&out, 0);
	buf_addstr(&out, "{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":"
	    "\"tools/list\",\"params\":{}}\n");
	end = (long long)clock_mono_ms() - 1;
	guard_arm("mcp_list_write");
	assert_int_equal(mcp_list_write(p[1], &out, end, err, sizeof(err)),
	    -1);
	alarm(0);
	if (strstr(err, "it does not read its stdin") == NULL)
		fail_msg("a passed deadline: \"%s\", not a timeout", err);
	buf_free(&out);
	close(p[0]);
	close(p[1]);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_answer_past_deadline),
		cmocka_unit_test(test_write_past_deadline),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}

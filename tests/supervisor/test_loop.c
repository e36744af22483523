/*
 * The event loop: timers fire in order and only when due, a deleted timer
 * never fires, fd callbacks see their events, and a handler that removes
 * another fd in the same batch never has that fd's stale event delivered,
 * and an fd with no events asked for is not in the epoll set at all.
 */
#include <sys/epoll.h>

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "supervisor/loop.h"
#include "supervisor/loop_testapi.h"

static int	order[8];
static int	norder;

static void
tick(void *arg)
{
	order[norder++] = (int)(intptr_t)arg;
}

static void
test_timers(void **state)
{
	struct loop	*l = loop_new();
	uint64_t	 id;
	int		 i;

	(void)state;
	norder = 0;
	loop_timer_add(l, 30, tick, (void *)3);
	loop_timer_add(l, 10, tick, (void *)1);
	id = loop_timer_add(l, 20, tick, (void *)99);
	loop_timer_add(l, 20, tick, (void *)2);
	loop_timer_del(l, id);
	for (i = 0; i < 1000 && norder < 3; i++)
		assert_int_equal(loop_once(l, 100), 0);
	assert_int_equal(norder, 3);
	assert_int_equal(order[0], 1);
	assert_int_equal(order[1], 2);
	assert_int_equal(order[2], 3);
	loop_free(l);
}

struct pair {
	struct loop	*l;
	int		 fds[2][2];
	int		 calls[2];
};

static void
on_read(int fd, uint32_t events, void *arg)
{
	struct pair	*p = arg;
	int		 which = fd == p->fds[0][0] ? 0 : 1;
	char		 c;

	assert_true(events & EPOLLIN);
	p->calls[which]++;
	(void)read(fd, &c, 1);
	/* The first one seen removes the other before its turn. */
	loop_del_fd(p->l, p->fds[!which][0]);
}

static void
test_fd_removed_in_batch(void **state)
{
	struct pair	p;

	(void)state;
	memset(&p, 0, sizeof(p));
	p.l = loop_new();
	assert_int_equal(pipe(p.fds[0]), 0);
	assert_int_equal(pipe(p.fds[1]), 0);
	assert_int_equal(loop_add_fd(p.l, p.fds[0][0], EPOLLIN, on_read, &p), 0);
	assert_int_equal(loop_add_fd(p.l, p.fds[1][0], EPOLLIN, on_read, &p), 0);
	assert_int_equal(write(p.fds[0][1], "x", 1), 1);
	assert_int_equal(write(p.fds[1][1], "y", 1), 1);
	assert_int_equal(loop_once(p.l, 1000), 0);
	assert_int_equal(p.calls[0] + p.calls[1], 1);
	loop_free(p.l);
	close(p.fds[0][0]); close(p.fds[0][1]);
	close(p.fds[1][0]); close(p.fds[1][1]);
}

static void
on_event(int fd, uint32_t events, void *arg)
{
	uint32_t	*seen = arg;

	(void)fd;
	*seen |= events;
}

/* An fd added or modified with no events is out of the epoll set: a pipe
 * whose reader is gone wakes nobody until EPOLLOUT is asked for. */
static void
test_fd_without_events(void **state)
{
	struct loop	*l = loop_new();
	uint32_t	 seen = 0;
	int		 p[2];

	(void)state;
	assert_int_equal(pipe(p), 0);
	close(p[0]);		/* the write end now reports EPOLLERR */
	assert_int_equal(loop_add_fd(l, p[1], 0, on_event, &seen), 0);
	assert_int_equal(loop_once(l, 20), 0);
	assert_int_equal(seen, 0);
	assert_int_equal(loop_mod_fd(l, p[1], EPOLLOUT), 0);
	assert_int_equal(loop_once(l, 1000), 0);
	assert_true(seen & EPOLLERR);
	seen = 0;
	assert_int_equal(loop_mod_fd(l, p[1], 0), 0);
	assert_int_equal(loop_once(l, 20), 0);
	assert_int_equal(seen, 0);
	loop_del_fd(l, p[1]);
	/* A bad fd is refused when it joins the set, not before. */
	assert_int_equal(loop_add_fd(l, 1000, 0, on_event, &seen), 0);
	assert_int_equal(loop_mod_fd(l, 1000, EPOLLIN), -1);
	loop_del_fd(l, 1000);
	loop_free(l);
	close(p[1]);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_timers),
		cmocka_unit_test(test_fd_removed_in_batch),
		cmocka_unit_test(test_fd_without_events),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}

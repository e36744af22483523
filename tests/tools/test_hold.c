/*
 * The progress hold (worker/hold.h): nothing is released before the hold
 * ends, exactly one release after it however many threads tick, none once
 * disarmed.
 */
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "worker/hold.h"
#include "worker/hold_testapi.h"

#define TICKERS	4
#define TICKS	20000

static void
count(void *arg)
{
	atomic_fetch_add((atomic_int *)arg, 1);
}

static void
test_hold_deadline(void **state)
{
	struct hold	h;
	atomic_int	n;

	(void)state;
	atomic_init(&n, 0);
	hold_init(&h, count, &n);
	hold_tick(&h, 5000);			/* not armed */
	assert_int_equal(atomic_load(&n), 0);
	hold_arm(&h, 1000, 50);
	hold_tick(&h, 1000);
	hold_tick(&h, 1049);
	assert_int_equal(atomic_load(&n), 0);
	hold_tick(&h, 1050);
	assert_int_equal(atomic_load(&n), 1);
	hold_tick(&h, 1051);
	hold_tick(&h, 9999);			/* released once */
	assert_int_equal(atomic_load(&n), 1);
	/* Armed again: a new hold, a new release. */
	hold_arm(&h, 2000, 0);
	hold_tick(&h, 2000);
	assert_int_equal(atomic_load(&n), 2);
	hold_free(&h);
}

static void
test_hold_disarm(void **state)
{
	struct hold	h;
	atomic_int	n;

	(void)state;
	atomic_init(&n, 0);
	hold_init(&h, count, &n);
	hold_arm(&h, 1000, 50);
	hold_disarm(&h);
	hold_tick(&h, 1100);
	assert_int_equal(atomic_load(&n), 0);
	hold_free(&h);
}

static void *
ticker(void *arg)
{
	struct hold	*h = arg;
	int		 i;

	for (i = 0; i < TICKS; i++)
		hold_tick(h, 100 + (uint64_t)i);
	return NULL;
}

/* Tool threads tick together past the end of the hold: one release. */
static void
test_hold_threads(void **state)
{
	struct hold	h;
	atomic_int	n;
	pthread_t	th[TICKERS];
	int		i;

	(void)state;
	atomic_init(&n, 0);
	hold_init(&h, count, &n);
	hold_arm(&h, 0, 100);
	for (i = 0; i < TICKERS; i++)
		assert_int_equal(pthread_create(&th[i], NULL, ticker, &h), 0);
	for (i = 0; i < TICKERS; i++)
		pthread_join(th[i], NULL);
	assert_int_equal(atomic_load(&n), 1);
	hold_free(&h);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_hold_deadline),
		cmocka_unit_test(test_hold_disarm),
		cmocka_unit_test(test_hold_threads),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}

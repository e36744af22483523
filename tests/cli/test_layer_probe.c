/*
 * cli/layer.c over workspace/cow_probe_cache.c: a run's choice of layer
 * takes the overlay answer kept in the state directory, and when the
 * spawn server then fails to enter an overlay (layer_enter_failed) the
 * answer is probed again and kept anew; a copy layer's failure probes
 * nothing. The state directory is $XDG_STATE_HOME/warren, as for a run.
 */
#include <sys/stat.h>

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

#include "cli/layer.h"
#include "tests/e2e/harness.h"

static char	 t_state[PATH_MAX], t_file[PATH_MAX + 32];

static char *
t_read(void)
{
	char	*s = h_read_file(t_file);

	assert_non_null(s);
	return s;
}

static void
t_write(const char *text)
{
	FILE	*f;

	assert_non_null(f = fopen(t_file, "w"));
	assert_true(fputs(text, f) >= 0);
	assert_int_equal(fclose(f), 0);
}

/* text with its answer turned over (a reason given to a "no"). */
static char *
t_flip(const char *text)
{
	const char	*yes = "\nanswer yes\nwhy \n", *no = "\nanswer no\nwhy ";
	const char	*at;
	char		*out;

	if ((at = strstr(text, yes)) != NULL)
		assert_true(asprintf(&out, "%.*s\nanswer no\nwhy KEPT\n",
		    (int)(at - text), text) > 0);
	else {
		assert_non_null(at = strstr(text, no));
		assert_true(asprintf(&out, "%.*s%s", (int)(at - text), text,
		    yes) > 0);
	}
	return out;
}

/* a and b keep the same answer for the same key (a "no"'s reason may
 * name the probe's scratch directory, new each time). */
static void
t_same(const char *a, const char *b)
{
	const char	*wa = strstr(a, "\nwhy "), *wb = strstr(b, "\nwhy ");

	assert_non_null(wa);
	assert_non_null(wb);
	assert_int_equal(wa - a, wb - b);
	assert_memory_equal(a, b, (size_t)(wa - a));
}

static int
t_setup(void **state)
{
	char	*dir = h_tmpdir();

	(void)state;
	assert_int_equal(setenv("XDG_STATE_HOME", dir, 1), 0);
	snprintf(t_state, sizeof(t_state), "%s/warren", dir);
	snprintf(t_file, sizeof(t_file), "%s/overlay-probe", t_state);
	free(dir);
	return 0;
}

static void
test_enter_failed_probes_again(void **state)
{
	struct cow	 cw;
	char		 why[1024], err[4096], *first, *flip, *now;
	int		 rc;

	(void)state;
	rc = layer_probe(t_state, 0, why, sizeof(why));
	assert_true(rc == 0 || rc == 1);
	first = t_read();
	/* The kept answer is the one taken, not a probe's. */
	flip = t_flip(first);
	t_write(flip);
	assert_int_equal(layer_probe(t_state, 0, why, sizeof(why)), !rc);
	if (rc == 1)
		assert_string_equal(why, "KEPT");
	/* A copy layer that fails to be entered probes nothing. */
	memset(&cw, 0, sizeof(cw));
	cw.mode = COW_COPY;
	snprintf(err, sizeof(err), "enter failed");
	layer_enter_failed(&cw, err, sizeof(err));
	now = t_read();
	assert_string_equal(now, flip);
	assert_string_equal(err, "enter failed");
	free(now);
	/* An overlay that fails: probed again, the probe's answer kept. */
	cw.mode = COW_OVERLAY;
	layer_enter_failed(&cw, err, sizeof(err));
	now = t_read();
	t_same(now, first);
	if (rc == 1)
		assert_string_equal(err, "enter failed");
	else
		assert_non_null(strstr(err, "enter failed (probed again: no "
		    "overlay here any more"));
	free(now);
	free(flip);
	free(first);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_enter_failed_probes_again),
	};

	return cmocka_run_group_tests(tests, t_setup, NULL);
}

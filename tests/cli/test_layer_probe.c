/*
 * cli/layer.c over workspace/cow_probe_cache.c: a run's choice of layer
 * takes the overlay answer kept in the state directory. When the spawn
 * server then fails to enter an overlay (layer_enter_failed, in a run
 * made non-dumpable as cmd_run_go makes it) the kept answer is dropped,
 * not probed again: a non-dumpable probe says "no" to every ordinary
 * user. A probe made while non-dumpable keeps nothing, and neither does
 * one that failed for want of a resource (EMFILE) rather than by the
 * kernel's refusal; the run's choice of layer takes the early probe's
 * answer, even one not kept. The state directory is $XDG_STATE_HOME/warren, as
 * for a run. As root and as an ordinary user (label sandbox).
 */
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/stat.h>

#include <errno.h>
#include <fcntl.h>
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

#include "cli/cmd.h"
#include "cli/layer.h"
#include "common/config.h"
#include "tests/e2e/harness.h"
#include "tests/e2e/harness_probe.h"

static char	 t_state[PATH_MAX], t_file[PATH_MAX + 32];

/* A fresh state directory for each test, the process dumpable. */
static int
t_setup(void **state)
{
	char	*dir = h_tmpdir();

	(void)state;
	assert_int_equal(setenv("XDG_STATE_HOME", dir, 1), 0);
	snprintf(t_state, sizeof(t_state), "%s/warren", dir);
	snprintf(t_file, sizeof(t_file), "%s/overlay-probe", t_state);
	free(dir);
	assert_int_equal(prctl(PR_SET_DUMPABLE, 1), 0);
	return 0;
}

static int
t_teardown(void **state)
{
	(void)state;
	return prctl(PR_SET_DUMPABLE, 1);
}

static void
t_gone(void)
{
	if (access(t_file, F_OK) == 0)
		fail_msg("%s is kept:\n%s", t_file, h_read_file(t_file));
	assert_int_equal(errno, ENOENT);
}

static void
test_enter_failed_drops(void **state)
{
	struct cow	 cw;
	char		 why[1024], err[4096], *first, *flip, *now;
	int		 rc;

	(void)state;
	rc = layer_probe(t_state, 0, why, sizeof(why));
	assert_true(rc == 0 || rc == 1);
	first = h_probe_read(t_file, NULL);
	/* The kept answer is the one taken, not a probe's. */
	flip = h_probe_flip(first);
	h_probe_put(t_file, flip);
	assert_int_equal(layer_probe(t_state, 0, why, sizeof(why)), !rc);
	if (rc == 1)
		assert_string_equal(why, H_PROBE_WHY);
	/* As in a run (cmd_run_go), from here on. */
	assert_int_equal(prctl(PR_SET_DUMPABLE, 0), 0);
	/* A copy layer that fails to be entered touches nothing. */
	memset(&cw, 0, sizeof(cw));
	cw.mode = COW_COPY;
	snprintf(err, sizeof(err), "enter failed");
	layer_enter_failed(&cw, err, sizeof(err));
	now = h_probe_read(t_file, NULL);
	assert_string_equal(now, flip);
	assert_string_equal(err, "enter failed");
	free(now);
	/* An overlay that fails: the kept answer is dropped, none kept. */
	cw.mode = COW_OVERLAY;
	layer_enter_failed(&cw, err, sizeof(err));
	t_gone();
	assert_string_equal(err, "enter failed (the kept overlay answer is "
	    "dropped: the next run probes again)");
	/* The next run's early probe, dumpable, keeps what it finds. */
	assert_int_equal(prctl(PR_SET_DUMPABLE, 1), 0);
	assert_int_equal(layer_probe(t_state, 0, why, sizeof(why)), rc);
	now = h_probe_read(t_file, NULL);
	h_probe_same(now, first);
	free(now);
	free(flip);
	free(first);
}

/* A non-dumpable process's probe is used, never kept. */
static void
test_nondumpable_keeps_nothing(void **state)
{
	char	 why[1024];
	int	 rc;

	(void)state;
	assert_int_equal(prctl(PR_SET_DUMPABLE, 0), 0);
	rc = layer_probe(t_state, 0, why, sizeof(why));
	assert_true(rc == 0 || rc == 1 || rc == -1);
	t_gone();
	rc = layer_probe(t_state, COW_PROBE_AGAIN, why, sizeof(why));
	t_gone();
}

/*
 * Every fd but two taken: the probe's pipe takes them, its child gets
 * one back and fsopen takes it, and fsmount fails with EMFILE. That is
 * no answer about the overlay: nothing kept, and the probe says -1.
 */
static void
test_emfile_keeps_nothing(void **state)
{
	struct rlimit	 rl, low;
	char		 why[1024];
	int		 fds[64], n = 0, rc;

	(void)state;
	if (cow_probe_overlay(t_state, why, sizeof(why)) != 1)
		skip();		/* no overlay here to fail for want of fds */
	assert_int_equal(getrlimit(RLIMIT_NOFILE, &rl), 0);
	low.rlim_cur = 64;
	low.rlim_max = rl.rlim_max;
	assert_int_equal(setrlimit(RLIMIT_NOFILE, &low), 0);
	while (n < 64 && (fds[n] = open("/dev/null", O_RDONLY |
	    O_CLOEXEC)) != -1)
		n++;
	assert_int_equal(errno, EMFILE);
	assert_true(n >= 2);
	close(fds[--n]);
	close(fds[--n]);
	rc = layer_probe(t_state, 0, why, sizeof(why));
	while (n > 0)
		close(fds[--n]);
	assert_int_equal(setrlimit(RLIMIT_NOFILE, &rl), 0);
	if (rc != -1)
		fail_msg("the probe with no fd to spare answered %d (%s)", rc,
		    why);
	assert_non_null(strstr(why, "fsmount"));
	t_gone();
}

/*
 * The early probe (a run, still dumpable) could not keep its answer (a
 * directory where the file goes): the run's choice of layer, made once
 * the run is non-dumpable, takes that answer and does not probe again,
 * which for an ordinary user would say no overlay.
 */
static void
test_early_answer_taken(void **state)
{
	struct config	*c;
	enum cow_mode	 mode;
	char		 why[1024], err[1024], sub[PATH_MAX + 40];
	int		 rc;

	(void)state;
	if ((rc = cow_probe_overlay(t_state, why, sizeof(why))) != 1)
		skip();		/* no overlay here: both would copy */
	snprintf(sub, sizeof(sub), "%s/keep", t_file);
	assert_int_equal(mkdir(t_file, 0700), 0);
	assert_int_equal(mkdir(sub, 0700), 0);
	assert_non_null(c = config_new());
	assert_int_equal(cmd_run_declare(c), 0);
	assert_int_equal(config_set(c, "workspace_mode", "cow",
	    CONFIG_SRC_FLAG, "test"), 0);
	assert_int_equal(config_set(c, "cow", "auto", CONFIG_SRC_FLAG,
	    "test"), 0);
	layer_probe_early(c);
	assert_int_equal(prctl(PR_SET_DUMPABLE, 0), 0);
	assert_int_equal(layer_mechanism("auto", &mode, err, sizeof(err)), 0);
	if (mode != COW_OVERLAY)
		fail_msg("the early probe said overlay; the run chose %s",
		    cow_mode_name(mode));
	config_free(c);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_enter_failed_drops,
		    t_setup, t_teardown),
		cmocka_unit_test_setup_teardown(test_nondumpable_keeps_nothing,
		    t_setup, t_teardown),
		cmocka_unit_test_setup_teardown(test_emfile_keeps_nothing,
		    t_setup, t_teardown),
		cmocka_unit_test_setup_teardown(test_early_answer_taken,
		    t_setup, t_teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}

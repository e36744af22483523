/*
 * The overlay probe's answer, kept (workspace/cow_probe_cache.c,
 * docs/workspaces.md): the real warren on a private workspace and state
 * directory. The first copy-on-write run probes and keeps the answer in
 * the state directory; the second does not probe (the file is neither
 * rewritten nor replaced) and takes the kept answer, even one that is not
 * what a probe would find; a kept answer of another kernel, uid, state
 * directory or device, or a corrupt file, is ignored and written again;
 * `warren sandbox check` probes again. As root and as an ordinary user
 * (label e2e).
 */
#include <sys/stat.h>
#include <sys/types.h>

#include <errno.h>
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

#include "tests/e2e/harness.h"
#include "tests/e2e/harness_probe.h"

struct t {
	struct h_ws	 w;
	char		 st[PATH_MAX + 32], cf[PATH_MAX + 32];
	char		 kept[PATH_MAX + 64];	/* the answer's file */
	char		*env[5];
	int		 runs;
};

static void
t_open(struct t *t)
{
	memset(t, 0, sizeof(*t));
	h_ws_open(&t->w, "data\n");
	h_turn(t->w.f, "0", 1, h_calls1("a", "write",
	    "{\"path\":\"new.txt\",\"content\":\"x\\n\"}"));
	h_turn(t->w.f, "0", 2, h_calls1("b", "complete",
	    "{\"result\":\"ok\"}"));
	h_ws_cassette_close(&t->w);
	snprintf(t->st, sizeof(t->st), "XDG_STATE_HOME=%s/state", t->w.dir);
	snprintf(t->cf, sizeof(t->cf), "XDG_CONFIG_HOME=%s/config", t->w.dir);
	snprintf(t->kept, sizeof(t->kept), "%s/state/warren/overlay-probe",
	    t->w.dir);
	t->env[0] = t->st;
	t->env[1] = t->cf;
	t->env[2] = "WARREN_WORKSPACE_MODE=cow";
	t->env[3] = "WARREN_COW=auto";
	t->env[4] = NULL;
}

static void
t_warren(struct t *t, struct h_run *r, char *a1, char *a2)
{
	char	*argv[] = { "warren", a1, a2, NULL };

	assert_int_equal(h_warren(r, argv, t->env, NULL, NULL), 0);
}

/*
 * One run that writes (a layer), then discarded: its layer's kind,
 * "upper" (an overlay) or "tree" (a copy), into mode.
 */
static void
t_run(struct t *t, char *mode, size_t modesz)
{
	char	*argv[] = { "warren", "run", "--profile", "general",
	    "--replay", t->w.cas, "--workspace", t->w.ws, "the task", NULL };
	char	 cmd[PATH_MAX + 128], id[16];
	struct h_run	 r;
	FILE	*p;

	assert_int_equal(h_warren(&r, argv, t->env, NULL, NULL), 0);
	if (r.status != 0)
		fail_msg("warren run: status %d: %s", r.status, r.err);
	h_run_free(&r);
	snprintf(cmd, sizeof(cmd), "ls %s/state/warren/cow/*/ | grep -x -e "
	    "upper -e tree", t->w.dir);
	assert_non_null(p = popen(cmd, "r"));
	if (fgets(mode, (int)modesz, p) == NULL)
		mode[0] = '\0';
	pclose(p);
	mode[strcspn(mode, "\n")] = '\0';
	snprintf(id, sizeof(id), "%d", ++t->runs);
	t_warren(t, &r, "discard", id);
	assert_int_equal(r.status, 0);
	h_run_free(&r);
}

/* The kept answer's text; its inode and change time into st. */
static char *
t_kept(struct t *t, struct stat *st)
{
	return h_probe_read(t->kept, st);
}

/* The first run probes and keeps; the second takes the kept answer
 * without a probe: the file is not written again. */
static void
test_second_run_kept(void **state)
{
	struct t	 t;
	struct stat	 a, b;
	char		 mode[32], *k1, *k2;

	(void)state;
	t_open(&t);
	assert_int_equal(access(t.kept, F_OK), -1);
	t_run(&t, mode, sizeof(mode));
	k1 = t_kept(&t, &a);
	assert_string_equal(mode, h_probe_kind(k1));
	assert_non_null(strstr(k1, "warren-overlay-probe 1\nkernel "));
	sleep(1);	/* a rewrite would change the times */
	t_run(&t, mode, sizeof(mode));
	k2 = t_kept(&t, &b);
	assert_string_equal(k1, k2);
	assert_true(a.st_ino == b.st_ino);
	assert_true(a.st_mtim.tv_sec == b.st_mtim.tv_sec &&
	    a.st_mtim.tv_nsec == b.st_mtim.tv_nsec);
	assert_true(a.st_ctim.tv_sec == b.st_ctim.tv_sec &&
	    a.st_ctim.tv_nsec == b.st_ctim.tv_nsec);
	assert_string_equal(mode, h_probe_kind(k1));
	free(k1);
	free(k2);
	h_ws_close(&t.w);
}

/*
 * The kept answer decides, even against what a probe would say: kept
 * "no" where there is an overlay, the run copies. Kept "yes" where there
 * is none, entering the layer fails, and warren drops the kept answer:
 * the next run probes, and keeps "no" again.
 */
static void
test_kept_answer_used(void **state)
{
	struct t	 t;
	struct stat	 st;
	char		 mode[32], *k1, *flip, *k2, *argv[8];
	struct h_run	 r;

	(void)state;
	t_open(&t);
	t_run(&t, mode, sizeof(mode));
	k1 = t_kept(&t, &st);
	flip = h_probe_flip(k1);
	h_probe_put(t.kept, flip);
	if (strcmp(h_probe_kind(k1), "upper") == 0) {
		t_run(&t, mode, sizeof(mode));
		assert_string_equal(mode, "tree");
		k2 = t_kept(&t, &st);
		assert_string_equal(k2, flip);
	} else {
		argv[0] = "warren"; argv[1] = "run"; argv[2] = "--replay";
		argv[3] = t.w.cas; argv[4] = "--workspace"; argv[5] = t.w.ws;
		argv[6] = "the task"; argv[7] = NULL;
		assert_int_equal(h_warren(&r, argv, t.env, NULL, NULL), 0);
		assert_int_not_equal(r.status, 0);
		assert_non_null(strstr(r.err, "the kept overlay answer is "
		    "dropped: the next run probes again"));
		h_run_free(&r);
		assert_int_equal(access(t.kept, F_OK), -1);
		t_run(&t, mode, sizeof(mode));
		assert_string_equal(mode, "tree");
		k2 = t_kept(&t, &st);
		h_probe_same(k2, k1);
	}
	free(k1);
	free(k2);
	free(flip);
	h_ws_close(&t.w);
}

/* A kept answer that does not hold here, with the opposite answer (so
 * that believing it would show): ignored, the probe's written again. */
static void
t_ignored(const char *key, const char *line, int corrupt)
{
	struct t	 t;
	struct stat	 st;
	char		 mode[32], *k1, *flip, *bad, *k2;

	t_open(&t);
	t_run(&t, mode, sizeof(mode));
	k1 = t_kept(&t, &st);
	flip = h_probe_flip(k1);
	bad = corrupt ? strdup(line) : h_probe_edit(flip, key, line);
	assert_non_null(bad);
	h_probe_put(t.kept, bad);
	t_run(&t, mode, sizeof(mode));
	assert_string_equal(mode, h_probe_kind(k1));
	k2 = t_kept(&t, &st);
	h_probe_same(k2, k1);
	free(k1);
	free(k2);
	free(flip);
	free(bad);
	h_ws_close(&t.w);
}

static void
test_other_kernel(void **state)
{
	(void)state;
	t_ignored("kernel ", "kernel 0.0.1-another-kernel", 0);
}

static void
test_other_uid(void **state)
{
	char	line[64];

	(void)state;
	snprintf(line, sizeof(line), "uid %lu", (unsigned long)geteuid() + 1);
	t_ignored("uid ", line, 0);
}

static void
test_other_state(void **state)
{
	(void)state;
	t_ignored("state ", "state /elsewhere/warren", 0);
	t_ignored("dev ", "dev 1", 0);
}

static void
test_corrupt(void **state)
{
	(void)state;
	t_ignored(NULL, "garbage\n", 1);
	t_ignored(NULL, "warren-overlay-probe 1\nkernel ", 1);
	t_ignored(NULL, "", 1);
}

/* Another user's file, whatever it says, is not believed (root can
 * give it away; an ordinary user cannot, and is shown by test_other_uid). */
static void
test_other_owner(void **state)
{
	struct t	 t;
	struct stat	 st;
	char		 mode[32], *k1, *flip, *k2;

	(void)state;
	if (geteuid() != 0)
		skip();
	t_open(&t);
	t_run(&t, mode, sizeof(mode));
	k1 = t_kept(&t, &st);
	flip = h_probe_flip(k1);
	h_probe_put(t.kept, flip);
	assert_int_equal(chown(t.kept, 65534, 65534), 0);
	t_run(&t, mode, sizeof(mode));
	assert_string_equal(mode, h_probe_kind(k1));
	k2 = t_kept(&t, &st);
	h_probe_same(k2, k1);
	assert_int_equal(st.st_uid, 0);
	free(k1);
	free(k2);
	free(flip);
	h_ws_close(&t.w);
}

/* `warren sandbox check` probes again, and keeps what it found. */
static void
test_check_probes_again(void **state)
{
	struct t	 t;
	struct stat	 st;
	struct h_run	 r;
	char		 mode[32], *k1, *flip, *k2;

	(void)state;
	t_open(&t);
	t_run(&t, mode, sizeof(mode));
	k1 = t_kept(&t, &st);
	flip = h_probe_flip(k1);
	h_probe_put(t.kept, flip);
	t_warren(&t, &r, "sandbox", "check");
	h_run_free(&r);
	k2 = t_kept(&t, &st);
	h_probe_same(k2, k1);
	free(k1);
	free(k2);
	free(flip);
	h_ws_close(&t.w);
}

/*
 * A FIFO where the kept answer goes does not hold the run (the file is
 * opened O_NONBLOCK): it is not believed, the probe runs, and its answer
 * replaces the FIFO with a regular file.
 */
static void
test_fifo(void **state)
{
	struct t	 t;
	struct stat	 st;
	char		 mode[32], dir[PATH_MAX + 32], *k;

	(void)state;
	t_open(&t);
	snprintf(dir, sizeof(dir), "%s/state", t.w.dir);
	(void)mkdir(dir, 0700);
	snprintf(dir, sizeof(dir), "%s/state/warren", t.w.dir);
	assert_int_equal(mkdir(dir, 0700), 0);
	assert_int_equal(mkfifo(t.kept, 0600), 0);
	h_hang_guard = 30;
	t_run(&t, mode, sizeof(mode));
	assert_int_equal(lstat(t.kept, &st), 0);
	assert_true(S_ISREG(st.st_mode));
	k = t_kept(&t, &st);
	assert_string_equal(mode, h_probe_kind(k));
	free(k);
	h_ws_close(&t.w);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_second_run_kept),
		cmocka_unit_test(test_kept_answer_used),
		cmocka_unit_test(test_other_kernel),
		cmocka_unit_test(test_other_uid),
		cmocka_unit_test(test_other_state),
		cmocka_unit_test(test_corrupt),
		cmocka_unit_test(test_other_owner),
		cmocka_unit_test(test_check_probes_again),
		cmocka_unit_test(test_fifo),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}

/*
 * The scaffold of the tests of `warren diff`, `apply`, `discard` and
 * `show` on a finished run (test_cow_cli, test_diff_review,
 * test_hostexec_names): a workspace, a store of the test's own, and a
 * run recorded in it with a copy-mode layer the test fills by hand, as a
 * copy-on-write run would have left it.
 */
#ifndef WARREN_TEST_HARNESS_COW_H
#define WARREN_TEST_HARNESS_COW_H

#include <limits.h>
#include <stdint.h>

#include "tests/e2e/harness.h"
#include "workspace/cow.h"

struct h_cowrun {
	char	*dir;			/* h_tmpdir */
	char	 ws[PATH_MAX];		/* dir/ws, canonical */
	char	 state[PATH_MAX];	/* dir/state: layers, the store */
	char	 db[PATH_MAX + 32];	/* state/warren.db */
};

/* dir/ws holding the files given as name, content pairs (NULL after the
 * last), dir/state (0700), and where the store goes. */
void	 h_cowrun_open(struct h_cowrun *t, ...);
void	 h_cowrun_close(struct h_cowrun *t);
/* A copy-mode layer of the workspace (cow_create): c->dir/tree is what
 * the agent left; the test changes it, then records the run. */
void	 h_cowrun_layer(struct h_cowrun *t, struct cow *c);
/* A run of task on the workspace recorded in the store with layer c
 * (NULL: none), as a copy-on-write run records itself; ended: finished
 * ("ok"), else still running. */
int64_t	 h_cowrun_record(struct h_cowrun *t, const struct cow *c,
	    const char *task, int ended);
/* warren CMD --db DB [A1 [A2]] RUN with env extra (or NULL). */
void	 h_cowrun_warren(struct h_cowrun *t, struct h_run *r,
	    char *const env[], char *cmd, char *a1, char *a2, int64_t run);

#endif

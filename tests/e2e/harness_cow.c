/* harness_cow.h: a recorded run with a copy-mode layer. */
#include <sys/stat.h>

#include <limits.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "store/store.h"
#include "store/store_testapi.h"
#include "tests/e2e/harness_cow.h"

void
h_cowrun_open(struct h_cowrun *t, ...)
{
	va_list		 ap;
	const char	*name, *content;
	char		 p[PATH_MAX + 16];

	memset(t, 0, sizeof(*t));
	t->dir = h_tmpdir();
	snprintf(p, sizeof(p), "%s/ws", t->dir);
	va_start(ap, t);
	while ((name = va_arg(ap, const char *)) != NULL) {
		content = va_arg(ap, const char *);
		h_write(p, name, content, 0);
	}
	va_end(ap);
	assert_non_null(realpath(p, t->ws));
	snprintf(t->state, sizeof(t->state), "%s/state", t->dir);
	assert_int_equal(mkdir(t->state, 0700), 0);
	snprintf(t->db, sizeof(t->db), "%s/warren.db", t->state);
}

void
h_cowrun_close(struct h_cowrun *t)
{
	h_rm_rf(t->dir);
	free(t->dir);
}

void
h_cowrun_layer(struct h_cowrun *t, struct cow *c)
{
	char	err[1024];

	if (cow_create(c, COW_COPY, t->ws, t->state, err, sizeof(err)) == -1)
		fail_msg("cow_create: %s", err);
}

int64_t
h_cowrun_record(struct h_cowrun *t, const struct cow *c, const char *task,
    int ended)
{
	struct store_run_params	 p;
	struct store		*st;
	char			 err[1024];
	int64_t			 run;

	memset(&p, 0, sizeof(p));
	p.task = task;
	p.workspace = t->ws;
	if (c != NULL) {
		p.cow_mode = "copy";
		p.cow_dir = c->dir;
	}
	if ((st = store_open(t->db, STORE_CREATE, err, sizeof(err))) == NULL)
		fail_msg("store_open: %s", err);
	assert_int_equal(store_run_begin(st, &p, &run), 0);
	if (ended)
		assert_int_equal(store_run_end(st, run, STORE_RUN_DONE, "ok"),
		    0);
	store_close(st);
	return run;
}

void
h_cowrun_warren(struct h_cowrun *t, struct h_run *r, char *const env[],
    char *cmd, char *a1, char *a2, int64_t run)
{
	char	 id[32], *argv[8];
	int	 n = 0;

	snprintf(id, sizeof(id), "%lld", (long long)run);
	argv[n++] = "warren";
	argv[n++] = cmd;
	argv[n++] = "--db";
	argv[n++] = t->db;
	if (a1 != NULL)
		argv[n++] = a1;
	if (a2 != NULL)
		argv[n++] = a2;
	argv[n++] = id;
	argv[n] = NULL;
	assert_int_equal(h_warren(r, argv, env, NULL, NULL), 0);
}

/*
 * What `warren queue work` says when it ends (cli/queue_progress.c), fed
 * attempts' ends directly: the summary event counts jobs, not attempts,
 * and names the first 20 dead jobs with their last errors, hostile text
 * whole (JSON escapes it), long text cut, the rest counted.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>
#include <jansson.h>

#include "cli/queue_work.h"

/* One attempt of job ends with status, its error err. */
static void
tp_end(struct qprogress *p, int64_t job, const char *status, const char *err)
{
	struct qrun	r;
	struct qoutcome	o;

	memset(&r, 0, sizeof(r));
	memset(&o, 0, sizeof(o));
	r.job.id = job;
	r.job.attempts = 1;
	o.ok = strcmp(status, "done") == 0;
	o.res.error = err;
	queue_progress_end(p, &r, &o, o.ok ? "done" : "failed", status);
}

/* stdout into a temporary file (fd 1 itself, as printf writes it). */
struct tp_cap {
	char	path[64];
	int	fd, saved;
};

static void
tp_capture(struct tp_cap *c)
{
	snprintf(c->path, sizeof(c->path), "/tmp/test_queue_progress.XXXXXX");
	fflush(stdout);
	assert_true((c->fd = mkstemp(c->path)) >= 0);
	assert_true((c->saved = dup(STDOUT_FILENO)) >= 0);
	assert_int_equal(dup2(c->fd, STDOUT_FILENO), STDOUT_FILENO);
}

/* stdout back; the last line written meanwhile. */
static char *
tp_last_line(struct tp_cap *c)
{
	FILE	*f;
	char	*s, *last, *nl;
	long	 len;

	fflush(stdout);
	assert_int_equal(dup2(c->saved, STDOUT_FILENO), STDOUT_FILENO);
	close(c->saved);
	assert_non_null(f = fdopen(c->fd, "r"));
	assert_int_equal(fseek(f, 0, SEEK_END), 0);
	len = ftell(f);
	rewind(f);
	assert_non_null(s = calloc(1, (size_t)len + 1));
	assert_int_equal(fread(s, 1, (size_t)len, f), (size_t)len);
	fclose(f);
	unlink(c->path);
	assert_true(len > 0 && s[len - 1] == '\n');
	s[len - 1] = '\0';
	last = (nl = strrchr(s, '\n')) != NULL ? nl + 1 : s;
	last = strdup(last);
	free(s);
	return last;
}

static void
test_summary_counts_jobs(void **state)
{
	struct qprogress	*p;
	struct tp_cap		 cap;
	json_t			*j, *d;
	char			*out, err[64], big[3000];
	const char		*e;
	int			 i;

	(void)state;
	tp_capture(&cap);
	assert_non_null(p = queue_progress_new(1, NULL));
	/* Job 1 fails twice, then is done: one job done, two retries. */
	tp_end(p, 1, "retrying", "first");
	tp_end(p, 1, "retrying", "second");
	tp_end(p, 1, "done", NULL);
	/* 25 jobs dead; the first's error hostile, the second's long. */
	memset(big, 'x', sizeof(big) - 1);
	big[sizeof(big) - 1] = '\0';
	for (i = 0; i < 25; i++) {
		snprintf(err, sizeof(err), "error of job %d", 100 + i);
		tp_end(p, 100 + i, "dead", i == 0 ? "\033]0;pwned\a\"x\"\n" :
		    i == 1 ? big : err);
	}
	tp_end(p, 200, "cancelled", "cancel asked");
	tp_end(p, 201, "running", "lease lost");
	queue_progress_free(p);
	out = tp_last_line(&cap);
	print_message("%s", out);
	assert_non_null(j = json_loads(out, 0, NULL));
	assert_string_equal(json_string_value(json_object_get(j, "event")),
	    "summary");
	assert_int_equal(json_integer_value(json_object_get(j, "done")), 1);
	assert_int_equal(json_integer_value(json_object_get(j, "failed")), 25);
	assert_int_equal(json_integer_value(json_object_get(j, "cancelled")),
	    1);
	assert_int_equal(json_integer_value(json_object_get(j, "retries")), 2);
	assert_int_equal(json_integer_value(json_object_get(j, "lost")), 1);
	d = json_object_get(j, "dead_jobs");
	assert_int_equal(json_array_size(d), 20);
	assert_int_equal(json_integer_value(json_object_get(j, "dead_more")),
	    5);
	for (i = 0; i < 20; i++)
		assert_int_equal(json_integer_value(json_object_get(
		    json_array_get(d, (size_t)i), "job")), 100 + i);
	e = json_string_value(json_object_get(json_array_get(d, 0), "error"));
	assert_string_equal(e, "\033]0;pwned\a\"x\"\n");
	assert_null(strchr(out, '\033'));	/* escaped by JSON */
	e = json_string_value(json_object_get(json_array_get(d, 1), "error"));
	assert_int_equal(strlen(e), 1024);
	e = json_string_value(json_object_get(json_array_get(d, 19), "error"));
	assert_string_equal(e, "error of job 119");
	json_decref(j);
	free(out);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_summary_counts_jobs),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}

/*
 * warren queue ls [--status S] [--limit N] [--json] | warren queue show
 * [--json] JOB: the jobs as a table (--limit: the newest N, in id order),
 * one job with every field and every attempt. The texts are the user's or
 * a model's: printed through cmd_store.c's escaping.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <jansson.h>

#include "cli/cmd.h"
#include "cli/cmd_queue.h"
#include "common/exitcode.h"
#include "common/jtext.h"
#include "workspace/cow.h"

#define CMD_QUEUE_TASK_WIDTH	60

json_t *
cmd_queue_json_text(const char *s)
{
	json_t	*j;

	if (s == NULL)
		return json_null();
	if ((j = json_loads(s, JSON_DECODE_ANY, NULL)) != NULL)
		return j;
	return jtext(s);
}

static json_t *
cmd_queue_json_job(const struct queue_job *j)
{
	return json_pack("{s:I, s:s, s:o, s:o, s:o, s:o, s:o, s:o, s:i, s:i,"
	    " s:i, s:I, s:I, s:I, s:I, s:I, s:I, s:o, s:b, s:o, s:o, s:o, s:o,"
	    " s:I, s:I, s:I, s:I, s:I, s:o, s:I, s:o}",
	    "id", (json_int_t)j->id, "status", queue_status_name(j->status),
	    "task", jtext(j->task), "profile", jtext(j->profile),
	    "workspace", jtext(j->workspace),
	    "schema", cmd_queue_json_text(j->schema), "key", jtext(j->key),
	    "params", cmd_queue_json_text(j->params),
	    "priority", j->priority, "attempts", j->attempts,
	    "max_attempts", j->max_attempts,
	    "timeout_ms", (json_int_t)j->timeout_ms,
	    "budget", (json_int_t)j->budget,
	    "created_ms", (json_int_t)j->created_ms,
	    "run_at_ms", (json_int_t)j->run_at_ms,
	    "lease_until_ms", (json_int_t)j->lease_until_ms,
	    "finished_ms", (json_int_t)j->finished_ms,
	    "worker", jtext(j->worker), "cancel_asked", j->cancel_asked,
	    "answer", jtext(j->answer),
	    "output", cmd_queue_json_text(j->output),
	    "error", jtext(j->error), "diff_stat", jtext(j->diff_stat),
	    "run_id", (json_int_t)j->run_id,
	    "tokens_in", (json_int_t)j->tokens_in,
	    "tokens_out", (json_int_t)j->tokens_out,
	    "wall_ms", (json_int_t)j->wall_ms,
	    "changes_bytes", (json_int_t)j->changes_len,
	    "run_where", jtext(j->run_where),
	    "applied_ms", (json_int_t)j->applied_ms,
	    "applied_by", jtext(j->applied_by));
}

static int
cmd_queue_ls_print(const struct queue_job *v, size_t n,
    const struct cmd_queue_opts *o)
{
	json_t	*arr;
	char	 att[32];
	size_t	 i;

	if (o->json) {
		if ((arr = json_array()) == NULL)
			return cmd_json_print(NULL);
		for (i = 0; i < n; i++)
			json_array_append_new(arr, cmd_queue_json_job(&v[i]));
		return cmd_json_print(arr);
	}
	if (n == 0) {
		printf("no jobs%s%s (`warren queue add` adds some)\n",
		    o->has_status ? " with status " : "",
		    o->has_status ? queue_status_name(o->status) : "");
		return WARREN_EXIT_OK;
	}
	printf("%-6s %-10s %-8s %8s  %s\n", "ID", "STATUS", "ATTEMPTS",
	    "PRIORITY", "TASK");
	for (i = 0; i < n; i++) {
		snprintf(att, sizeof(att), "%d/%d", v[i].attempts,
		    v[i].max_attempts);
		printf("%-6lld %-10s %-8s %8d  ", (long long)v[i].id,
		    v[i].cancel_asked && v[i].status == QUEUE_RUNNING ?
		    "cancelling" : queue_status_name(v[i].status), att,
		    v[i].priority);
		cmd_print_text(v[i].task, CMD_QUEUE_TASK_WIDTH);
		putchar('\n');
	}
	return ferror(stdout) ? WARREN_EXIT_INTERNAL : WARREN_EXIT_OK;
}

/* Under a table --limit cut: how many older jobs it left out. */
static void
cmd_queue_ls_older(struct queue *q, size_t shown,
    const struct cmd_queue_opts *o)
{
	struct queue_counts	c;
	uint64_t		total = 0;
	int			i;

	if (queue_counts(q, &c) == -1)
		return;
	for (i = 0; i < QUEUE_NSTATUS; i++)
		if (!o->has_status || i == (int)o->status)
			total += c.n[i];
	if (total > shown)
		printf("%llu older job%s not shown (--limit %u)\n",
		    (unsigned long long)(total - shown), total - shown == 1 ?
		    "" : "s", o->limit);
}

int
cmd_queue_ls(int argc, char **argv)
{
	struct cmd_queue_opts	 o;
	struct queue		*q;
	struct queue_job	*v;
	size_t			 n;
	int			 rc, ex = WARREN_EXIT_OK;

	if ((rc = cmd_queue_parse(argc, argv, CMD_QUEUE_O_JSON |
	    CMD_QUEUE_O_STATUS | CMD_QUEUE_O_LIMIT | CMD_QUEUE_O_NOARGS,
	    &o)) != 0)
		return rc == 1 ? WARREN_EXIT_OK : WARREN_EXIT_USAGE;
	if ((q = cmd_queue_open(argv[0], o.url, &ex)) == NULL)
		return ex;
	if ((o.limit > 0 ? queue_list_newest(q, o.has_status ? (int)o.status :
	    -1, o.limit, &v, &n) : queue_list(q, o.has_status ?
	    (int)o.status : -1, &v, &n)) == -1)
		ex = cmd_queue_fail(q, argv[0]);
	else {
		ex = cmd_queue_ls_print(v, n, &o);
		if (ex == WARREN_EXIT_OK && !o.json && n > 0 && n == o.limit)
			cmd_queue_ls_older(q, n, &o);
		queue_jobs_free(v, n);
	}
	queue_close(q);
	return ex;
}

/* A labelled block of text, when there is one. */
static void
cmd_queue_show_block(const char *label, const char *s)
{
	if (s == NULL)
		return;
	printf("%s:\n", label);
	cmd_print_block("    ", s, 0);
}

static void
cmd_queue_show_field(const char *label, const char *s)
{
	if (s == NULL)
		return;
	printf("%s: ", label);
	cmd_print_text(s, 0);
	putchar('\n');
}

static void
cmd_queue_show_limits(const struct queue_job *j)
{
	char	t[32], when[32];

	cmd_fmt_time(when, sizeof(when), j->created_ms);
	printf("created: %s", when);
	if (j->finished_ms > 0) {
		cmd_fmt_time(when, sizeof(when), j->finished_ms);
		printf(", finished: %s", when);
	} else if (j->status == QUEUE_RETRYING) {
		cmd_fmt_time(when, sizeof(when), j->run_at_ms);
		printf(", next attempt from: %s", when);
	}
	putchar('\n');
	if (j->timeout_ms > 0)
		cmd_fmt_duration(t, sizeof(t), (int64_t)j->timeout_ms);
	printf("timeout: %s, budget: ", j->timeout_ms > 0 ? t : "the run's");
	if (j->budget > 0)
		printf("%llu tokens\n", (unsigned long long)j->budget);
	else
		printf("none\n");
}

/* Where the changes are, and whether a machine applied them. */
static void
cmd_queue_show_apply(const struct queue_job *j)
{
	char	when[32], size[16];

	if (j->run_where != NULL) {
		printf("ran on: ");
		cmd_print_text(j->run_where, 0);
		putchar('\n');
	}
	if (j->changes_len > 0) {
		cmd_fmt_tokens(size, sizeof(size), j->changes_len);
		printf("changes in the queue: %sB (`warren queue diff %lld`, "
		    "`warren queue apply %lld` on any machine)\n", size,
		    (long long)j->id, (long long)j->id);
	} else if (j->diff_stat != NULL && j->status == QUEUE_DONE)
		printf("changes in the queue: none (over %d MiB): only where "
		    "it ran can apply them\n", COW_PACK_MAX >> 20);
	if (j->applied_ms > 0) {
		cmd_fmt_time(when, sizeof(when), j->applied_ms);
		printf("applied: %s, on ", when);
		cmd_print_text(j->applied_by != NULL ? j->applied_by : "?", 0);
		putchar('\n');
	}
}

static void
cmd_queue_show_result(const struct queue_job *j)
{
	char	tin[16], tout[16], dur[32];

	if (j->run_id > 0) {
		cmd_fmt_tokens(tin, sizeof(tin), j->tokens_in);
		cmd_fmt_tokens(tout, sizeof(tout), j->tokens_out);
		cmd_fmt_duration(dur, sizeof(dur), j->wall_ms);
		printf("run: %lld (`warren show %lld`), tokens %s in / %s out, "
		    "%s\n", (long long)j->run_id, (long long)j->run_id, tin,
		    tout, dur);
	}
	cmd_queue_show_block("answer", j->answer);
	cmd_queue_show_block("output", j->output);
	cmd_queue_show_block("error", j->error);
	cmd_queue_show_block("changes", j->diff_stat);
	cmd_queue_show_apply(j);
}

static void
cmd_queue_show_attempts(const struct queue_attempt *a, size_t n)
{
	char	when[32], dur[32];
	size_t	i;

	printf("attempts:%s\n", n == 0 ? " none yet" : "");
	for (i = 0; i < n; i++) {
		cmd_fmt_time(when, sizeof(when), a[i].started_ms);
		printf("  %d. %s, ", a[i].n, when);
		if (a[i].ended_ms > 0) {
			cmd_fmt_duration(dur, sizeof(dur),
			    a[i].ended_ms - a[i].started_ms);
			printf("%s, ", dur);
		}
		cmd_print_text(a[i].outcome != NULL ? a[i].outcome :
		    "running", 0);
		printf(", worker ");
		cmd_print_text(a[i].worker != NULL ? a[i].worker : "-", 0);
		if (a[i].run_id > 0)
			printf(", run %lld", (long long)a[i].run_id);
		putchar('\n');
		if (a[i].error != NULL)
			cmd_print_block("       ", a[i].error, 0);
	}
}

static void
cmd_queue_show_text(const struct queue_job *j, const struct queue_attempt *a,
    size_t n)
{
	printf("job %lld: %s%s, %d of %d attempts, priority %d\n",
	    (long long)j->id, queue_status_name(j->status),
	    j->cancel_asked && j->status == QUEUE_RUNNING ?
	    " (cancel asked)" : "", j->attempts, j->max_attempts,
	    j->priority);
	cmd_queue_show_field("key", j->key);
	cmd_queue_show_field("profile", j->profile != NULL ? j->profile :
	    "orchestrator");
	cmd_queue_show_field("workspace", j->workspace);
	if (j->status == QUEUE_RUNNING)
		cmd_queue_show_field("worker", j->worker);
	cmd_queue_show_limits(j);
	cmd_queue_show_block("task", j->task);
	cmd_queue_show_block("params", j->params);
	cmd_queue_show_block("schema", j->schema);
	cmd_queue_show_result(j);
	cmd_queue_show_attempts(a, n);
}

static int
cmd_queue_show_json(const struct queue_job *j, const struct queue_attempt *a,
    size_t n)
{
	json_t	*root, *arr;
	size_t	 i;

	if ((root = cmd_queue_json_job(j)) == NULL ||
	    (arr = json_array()) == NULL) {
		json_decref(root);
		return cmd_json_print(NULL);
	}
	for (i = 0; i < n; i++)
		json_array_append_new(arr, json_pack("{s:i, s:o, s:I, s:I, "
		    "s:o, s:o, s:I}", "n", a[i].n, "worker", jtext(a[i].worker),
		    "started_ms", (json_int_t)a[i].started_ms,
		    "ended_ms", (json_int_t)a[i].ended_ms,
		    "outcome", jtext(a[i].outcome), "error", jtext(a[i].error),
		    "run_id", (json_int_t)a[i].run_id));
	json_object_set_new(root, "attempt_list", arr);
	return cmd_json_print(root);
}

int
cmd_queue_show(int argc, char **argv)
{
	struct cmd_queue_opts	 o;
	struct queue		*q;
	struct queue_job	 j;
	struct queue_attempt	*a;
	size_t			 n;
	int64_t			 id;
	int			 rc, ex = WARREN_EXIT_OK;

	if ((rc = cmd_queue_parse(argc, argv, CMD_QUEUE_O_JSON, &o)) != 0)
		return rc == 1 ? WARREN_EXIT_OK : WARREN_EXIT_USAGE;
	if (cmd_queue_one_job(argc, argv, &id) == -1)
		return WARREN_EXIT_USAGE;
	if ((q = cmd_queue_open(argv[0], o.url, &ex)) == NULL)
		return ex;
	if (queue_get(q, id, &j, &a, &n) == -1)
		ex = cmd_queue_fail(q, argv[0]);
	else {
		if (o.json)
			ex = cmd_queue_show_json(&j, a, n);
		else {
			cmd_queue_show_text(&j, a, n);
			ex = ferror(stdout) ? WARREN_EXIT_INTERNAL :
			    WARREN_EXIT_OK;
		}
		queue_job_free(&j);
		queue_attempts_free(a, n);
	}
	queue_close(q);
	return ex;
}

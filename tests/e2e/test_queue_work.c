/*
 * `warren queue work` end to end (issue 21, docs/queue.md): the real
 * warren binary works a real SQLite queue file, each job one `warren run`
 * against the fakellm server, scripted by a marker in each job's task.
 * Jobs succeed with their answers, tokens and run ids; a job whose agent
 * fails twice then succeeds has 3 attempts; a dead job keeps every
 * attempt's error; a schema is checked; a cancel reaches a running job's
 * agents; two workers run every job exactly once; kill -9 of the worker
 * at random moments loses and duplicates no result; two parallel jobs on
 * one workspace never see each other's writes.
 */
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/wait.h>

#include <dirent.h>
#include <fcntl.h>
#include <limits.h>
#include <pty.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>
#include <jansson.h>
#include <sqlite3.h>

#include "queue/queue.h"
#include "queue/queue_testapi.h"
#include "tests/e2e/harness.h"

extern char **environ;

#define KEY	"sk-queue-e2e-3f1d"
#define USAGE	",\"usage\":{\"input\":11,\"output\":7}"

/* One test: its directory, workspace, queue file, fakellm, environment. */
struct tq {
	char		*dir;
	char		 ws[PATH_MAX];
	char		 db[PATH_MAX];
	char		 st[PATH_MAX + 32], cf[PATH_MAX + 32];
	struct h_fakellm fl;
	struct queue	*q;
	char		*env[12];
};

/* The script's text, built rule by rule. */
static char	tq_script[65536];

static void
tq_rule(const char *fmt, ...)
{
	size_t	len = strlen(tq_script);
	va_list	ap;

	va_start(ap, fmt);
	vsnprintf(tq_script + len, sizeof(tq_script) - len, fmt, ap);
	va_end(ap);
}

/* A rule: a request whose body holds marker gets the root's complete. */
static void
tq_rule_complete(const char *marker, const char *result_json)
{
	tq_rule("%s{\"match\":\"%s\",\"repeat\":true,\"responses\":[{\"reply\":"
	    "{\"calls\":[{\"id\":\"c1\",\"name\":\"complete\",\"arguments\":"
	    "{\"result\":%s}}]" USAGE "}}]}", tq_script[0] ? ",\n" : "",
	    marker, result_json);
}

static void	tq_rules_n(int n, int delay_ms);

/* Start fakellm on the rules so far, open the queue. 1: skip. */
static int
tq_open(struct tq *t, const char *extra_env)
{
	char	script[sizeof(tq_script) + 32];
	char	err[QUEUE_ERR_MAX];
	int	rc, n = 0;

	memset(t, 0, sizeof(*t));
	t->dir = h_tmpdir();
	snprintf(t->ws, sizeof(t->ws), "%s/ws", t->dir);
	h_write(t->ws, "data.txt", "data\n", 0);
	snprintf(t->db, sizeof(t->db), "%s/queue/queue.db", t->dir);
	snprintf(t->st, sizeof(t->st), "XDG_STATE_HOME=%s/state", t->dir);
	snprintf(t->cf, sizeof(t->cf), "XDG_CONFIG_HOME=%s/config", t->dir);
	snprintf(script, sizeof(script), "{\"rules\":[\n%s\n]}\n", tq_script);
	tq_script[0] = '\0';
	if ((rc = h_fakellm_start(&t->fl, t->dir, script)) == 1)
		return 1;
	assert_int_equal(rc, 0);
	t->env[n++] = t->st;
	t->env[n++] = t->cf;
	t->env[n++] = t->fl.env_url;
	t->env[n++] = "WARREN_API_KEY=" KEY;
	t->env[n++] = "WARREN_MODEL=fake-model";
	t->env[n++] = "WARREN_RETRIES=0";
	if (extra_env != NULL)
		t->env[n++] = (char *)(uintptr_t)extra_env;
	t->env[n] = NULL;
	t->q = queue_open(t->db, err, sizeof(err));
	if (t->q == NULL)
		fail_msg("queue_open %s: %s", t->db, err);
	return 0;
}

static void
tq_close(struct tq *t)
{
	queue_close(t->q);
	h_fakellm_stop(&t->fl);
	h_rm_rf(t->dir);
	free(t->dir);
}

static int64_t
tq_add(struct tq *t, const char *task, int max_attempts, const char *schema)
{
	struct queue_job_new	 j;
	int64_t			 id;
	int			 existed;

	memset(&j, 0, sizeof(j));
	j.task = task;
	j.workspace = t->ws;
	j.max_attempts = max_attempts;
	j.schema = schema;
	if (queue_add(t->q, &j, &id, &existed) == -1)
		fail_msg("queue_add: %s", queue_errmsg(t->q));
	return id;
}

/* warren queue work --queue DB --json [more...]. */
static void
tq_work(struct tq *t, struct h_run *r, void (*during)(pid_t, void *),
    void *arg, ...)
{
	char	*argv[24];
	va_list	 ap;
	int	 n = 0;

	argv[n++] = "warren";
	argv[n++] = "queue";
	argv[n++] = "work";
	argv[n++] = "--queue";
	argv[n++] = t->db;
	argv[n++] = "--json";
	va_start(ap, arg);
	while (n < 23 && (argv[n] = va_arg(ap, char *)) != NULL)
		n++;
	va_end(ap);
	argv[n] = NULL;
	assert_int_equal(h_warren(r, argv, t->env, during, arg), 0);
}

static void
tq_get(struct tq *t, int64_t id, struct queue_job *j,
    struct queue_attempt **a, size_t *na)
{
	if (queue_get(t->q, id, j, a, na) == -1)
		fail_msg("queue_get %lld: %s", (long long)id,
		    queue_errmsg(t->q));
}

/* Jobs succeed: their answers, run ids, tokens; one event per start/end. */
static void
test_jobs_succeed(void **state)
{
	struct tq		 t;
	struct h_run		 r;
	struct queue_job	 j;
	struct queue_attempt	*a;
	size_t			 na;
	int64_t			 id[3];
	char			 m[32], res[64];
	int			 i;

	(void)state;
	for (i = 0; i < 3; i++) {
		snprintf(m, sizeof(m), "QJOB-%03d-", i);
		snprintf(res, sizeof(res), "\"RESULT-%03d\"", i);
		tq_rule_complete(m, res);
	}
	if (tq_open(&t, NULL) == 1)
		skip();
	for (i = 0; i < 3; i++) {
		snprintf(m, sizeof(m), "QJOB-%03d- say hello", i);
		id[i] = tq_add(&t, m, 0, NULL);
	}
	tq_work(&t, &r, NULL, NULL, "--jobs", "2", NULL);
	assert_int_equal(r.status, 0);
	assert_int_equal(h_count_lines(r.out, "\"job_start\"", NULL), 3);
	assert_int_equal(h_count_lines(r.out, "\"job_end\"",
	    "\"outcome\":\"done\""), 3);
	h_run_free(&r);
	for (i = 0; i < 3; i++) {
		tq_get(&t, id[i], &j, &a, &na);
		snprintf(res, sizeof(res), "RESULT-%03d", i);
		assert_int_equal(j.status, QUEUE_DONE);
		assert_int_equal(j.attempts, 1);
		assert_non_null(j.answer);
		assert_string_equal(j.answer, res);
		assert_true(j.run_id > 0);
		assert_int_equal(j.tokens_in, 11);
		assert_int_equal(j.tokens_out, 7);
		assert_true(j.wall_ms > 0);
		assert_int_equal(na, 1);
		queue_job_free(&j);
		queue_attempts_free(a, na);
	}
	tq_close(&t);
}

/* A schema: a matching answer is kept as its output; one that does not
 * match fails with the validation errors. */
/* How many entries dir holds (. and .. aside); -1 if it cannot be read. */
static int
tq_entries(const char *dir)
{
	DIR		*d;
	struct dirent	*e;
	int		 n = 0;

	if ((d = opendir(dir)) == NULL)
		return -1;
	while ((e = readdir(d)) != NULL)
		if (strcmp(e->d_name, ".") != 0 && strcmp(e->d_name, "..") != 0)
			n++;
	closedir(d);
	return n;
}

static void
test_schema(void **state)
{
	static const char schema[] = "{\"type\":\"object\",\"required\":"
	    "[\"n\"],\"properties\":{\"n\":{\"type\":\"integer\"}}}";
	struct tq		 t;
	struct h_run		 r;
	struct queue_job	 j;
	struct queue_attempt	*a;
	size_t			 na;
	int64_t			 good, bad, unusable, fixed;
	char			 tmpenv[PATH_MAX + 16], tmp[PATH_MAX];
	size_t			 n;

	(void)state;
	/* The first answer does not match; the run sends it back with the
	 * errors and the model's second one does. */
	tq_rule("%s{\"match\":[\"QJOB-FIXED-\",\"expected integer\"],"
	    "\"repeat\":true,\"responses\":[{\"reply\":{\"calls\":[{\"id\":"
	    "\"c2\",\"name\":\"complete\",\"arguments\":{\"result\":"
	    "\"{\\\"n\\\": 6}\"}}]" USAGE "}}]}", tq_script[0] ? ",\n" : "");
	tq_rule_complete("QJOB-FIXED-", "\"{\\\"n\\\": \\\"six\\\"}\"");
	tq_rule_complete("QJOB-GOOD-", "\"{\\\"n\\\": 5}\"");
	tq_rule_complete("QJOB-BAD-", "\"{\\\"n\\\": \\\"five\\\"}\"");
	if (tq_open(&t, NULL) == 1)
		skip();
	good = tq_add(&t, "QJOB-GOOD- count", 1, schema);
	bad = tq_add(&t, "QJOB-BAD- count", 1, schema);
	/* A schema this subset cannot use: dead at once, not retried. */
	unusable = tq_add(&t, "QJOB-GOOD- again", 3, "{\"type\":\"thing\"}");
	fixed = tq_add(&t, "QJOB-FIXED- count", 1, schema);
	/* The runs' schema files go under a TMPDIR of the test's own. */
	snprintf(tmp, sizeof(tmp), "%s/qt", t.dir);
	assert_int_equal(mkdir(tmp, 0700), 0);
	snprintf(tmpenv, sizeof(tmpenv), "TMPDIR=%s", tmp);
	for (n = 0; t.env[n] != NULL; n++)
		;
	t.env[n++] = tmpenv;
	t.env[n] = NULL;
	tq_work(&t, &r, NULL, NULL, NULL);
	/* Each was removed when its attempt ended. */
	assert_int_equal(tq_entries(tmp), 0);
	assert_int_equal(r.status, 1);		/* one job dead */
	h_run_free(&r);
	tq_get(&t, good, &j, &a, &na);
	assert_int_equal(j.status, QUEUE_DONE);
	assert_non_null(j.output);
	assert_string_equal(j.output, "{\"n\":5}");
	queue_job_free(&j);
	queue_attempts_free(a, na);
	tq_get(&t, bad, &j, &a, &na);
	assert_int_equal(j.status, QUEUE_DEAD);
	assert_non_null(j.error);
	/* Refused inside the run three times: its attempt failed. */
	assert_non_null(strstr(j.error, "complete() refused 3 times by the "
	    "output schema"));
	assert_non_null(strstr(j.error, "$.n: expected integer, got string"));
	assert_null(j.output);
	queue_job_free(&j);
	queue_attempts_free(a, na);
	tq_get(&t, fixed, &j, &a, &na);
	assert_int_equal(j.status, QUEUE_DONE);
	assert_int_equal(j.attempts, 1);
	assert_non_null(j.output);
	assert_string_equal(j.output, "{\"n\":6}");
	queue_job_free(&j);
	queue_attempts_free(a, na);
	tq_get(&t, unusable, &j, &a, &na);
	assert_int_equal(j.status, QUEUE_DEAD);
	assert_int_equal(j.attempts, 1);
	assert_non_null(strstr(j.error, "the schema is not usable"));
	queue_job_free(&j);
	queue_attempts_free(a, na);
	tq_close(&t);
}

/*
 * A job whose root is a worker (--profile general, explore) is held to its
 * schema inside the run as under the orchestrator: the first answer
 * {"n": "six"} goes back to the model with the error, its {"n": 6} ends
 * the job done in one attempt with that output.
 */
static void
test_schema_worker_root(void **state)
{
	static const char schema[] = "{\"type\":\"object\",\"required\":"
	    "[\"n\"],\"properties\":{\"n\":{\"type\":\"integer\"}}}";
	static const char *const profiles[] = { "general", "explore" };
	struct tq		 t;
	struct h_run		 r;
	struct queue_job_new	 jn;
	struct queue_job	 j;
	struct queue_attempt	*a;
	size_t			 na, i;
	int64_t			 id[2];
	int			 existed;

	(void)state;
	tq_rule("{\"match\":[\"QJOB-WROOT-\",\"expected integer\"],"
	    "\"repeat\":true,\"responses\":[{\"reply\":{\"calls\":[{\"id\":"
	    "\"c2\",\"name\":\"complete\",\"arguments\":{\"result\":"
	    "\"{\\\"n\\\": 6}\"}}]" USAGE "}}]}");
	tq_rule_complete("QJOB-WROOT-", "\"{\\\"n\\\": \\\"six\\\"}\"");
	if (tq_open(&t, NULL) == 1)
		skip();
	for (i = 0; i < 2; i++) {
		memset(&jn, 0, sizeof(jn));
		jn.task = profiles[i][0] == 'g' ? "QJOB-WROOT- general" :
		    "QJOB-WROOT- explore";
		jn.profile = profiles[i];
		jn.workspace = t.ws;
		jn.max_attempts = 2;
		jn.schema = schema;
		if (queue_add(t.q, &jn, &id[i], &existed) == -1)
			fail_msg("queue_add: %s", queue_errmsg(t.q));
	}
	tq_work(&t, &r, NULL, NULL, NULL);
	if (r.status != 0)
		fail_msg("status %d\n%s\n%s", r.status, r.out, r.err);
	h_run_free(&r);
	for (i = 0; i < 2; i++) {
		tq_get(&t, id[i], &j, &a, &na);
		if (j.status != QUEUE_DONE || j.attempts != 1 ||
		    j.output == NULL || strcmp(j.output, "{\"n\":6}") != 0)
			fail_msg("%s: status %d, attempts %d, output %s, "
			    "error %s", profiles[i], (int)j.status,
			    (int)j.attempts, j.output ? j.output : "(none)",
			    j.error ? j.error : "(none)");
		queue_job_free(&j);
		queue_attempts_free(a, na);
	}
	tq_close(&t);
}

#define TQ_500	"{\"status\":500,\"body\":{\"error\":{\"message\":" \
		"\"FAKE-OUTAGE\"}}}"

/* Fails twice (the endpoint answers 500), then succeeds: attempts 3. */
static void
test_fails_twice_then_succeeds(void **state)
{
	struct tq		 t;
	struct h_run		 r;
	struct queue_job	 j;
	struct queue_attempt	*a;
	size_t			 na, i;
	int64_t			 id;

	(void)state;
	tq_rule("{\"match\":\"QJOB-FLAKY-\",\"repeat\":true,\"responses\":["
	    TQ_500 "," TQ_500 ",{\"reply\":{\"calls\":[{\"id\":\"c1\","
	    "\"name\":\"complete\",\"arguments\":{\"result\":\"THIRD-TIME\"}}]"
	    USAGE "}}]}");
	if (tq_open(&t, NULL) == 1)
		skip();
	id = tq_add(&t, "QJOB-FLAKY- try", 3, NULL);
	tq_work(&t, &r, NULL, NULL, NULL);
	assert_int_equal(r.status, 0);
	assert_int_equal(h_count_lines(r.out, "\"job_end\"",
	    "\"status\":\"retrying\""), 2);
	/* One job done, none failed: its two failed attempts are retries. */
	assert_int_equal(h_count_lines(r.out, "{\"event\":\"summary\",\"done\""
	    ":1,\"failed\":0,\"cancelled\":0,\"retries\":2,\"lost\":0,"
	    "\"dead_jobs\":[],\"dead_more\":0}", NULL), 1);
	h_run_free(&r);
	tq_get(&t, id, &j, &a, &na);
	assert_int_equal(j.status, QUEUE_DONE);
	assert_int_equal(j.attempts, 3);
	assert_string_equal(j.answer, "THIRD-TIME");
	assert_int_equal(na, 3);
	for (i = 0; i < 2; i++) {
		assert_string_equal(a[i].outcome, "failed");
		assert_non_null(a[i].error);
		assert_non_null(strstr(a[i].error, "exit 4 (the LLM endpoint"));
	}
	assert_string_equal(a[2].outcome, "done");
	queue_job_free(&j);
	queue_attempts_free(a, na);
	tq_close(&t);
}

/* The summary event (the last line of out) counts one job failed, dead
 * with an error that holds want, and no retry left. */
static void
tq_summary_dead(const char *out, int64_t id, const char *want)
{
	const char	*last = out, *p;
	json_t		*j, *d;

	for (p = out; (p = strstr(p, "{\"event\":\"summary\"")) != NULL; p++)
		last = p;
	if ((j = json_loads(last, JSON_DISABLE_EOF_CHECK, NULL)) == NULL)
		fail_msg("no summary event in: %s", out);
	assert_int_equal(json_integer_value(json_object_get(j, "done")), 0);
	assert_int_equal(json_integer_value(json_object_get(j, "failed")), 1);
	assert_int_equal(json_integer_value(json_object_get(j, "retries")), 1);
	d = json_object_get(j, "dead_jobs");
	assert_int_equal(json_array_size(d), 1);
	assert_int_equal(json_integer_value(json_object_get(json_array_get(d,
	    0), "job")), id);
	assert_non_null(strstr(json_string_value(json_object_get(
	    json_array_get(d, 0), "error")), want));
	json_decref(j);
}

/* Dead after its attempts, every attempt's error kept; exit 1. */
static void
test_dead(void **state)
{
	struct tq		 t;
	struct h_run		 r;
	struct queue_job	 j;
	struct queue_attempt	*a;
	size_t			 na, i;
	int64_t			 id;

	(void)state;
	tq_rule("{\"match\":\"QJOB-DOOMED-\",\"repeat\":true,\"responses\":["
	    TQ_500 "]}");
	if (tq_open(&t, NULL) == 1)
		skip();
	id = tq_add(&t, "QJOB-DOOMED- try", 2, NULL);
	tq_work(&t, &r, NULL, NULL, NULL);
	assert_int_equal(r.status, 1);
	assert_int_equal(h_count_lines(r.out, "\"job_end\"",
	    "\"status\":\"dead\""), 1);
	tq_summary_dead(r.out, id, "FAKE-OUTAGE");
	h_run_free(&r);
	tq_get(&t, id, &j, &a, &na);
	assert_int_equal(j.status, QUEUE_DEAD);
	assert_int_equal(j.attempts, 2);
	assert_int_equal(na, 2);
	for (i = 0; i < na; i++) {
		assert_string_equal(a[i].outcome, "failed");
		assert_non_null(a[i].error);
		assert_non_null(strstr(a[i].error, "exit 4"));
		assert_non_null(strstr(a[i].error, "FAKE-OUTAGE"));
		assert_non_null(strstr(a[i].error, "(last error line: "));
	}
	queue_job_free(&j);
	queue_attempts_free(a, na);
	tq_close(&t);
}

/* The root delegates to general, whose bash sleeps until cancelled. */
struct tq_cancel {
	struct tq	*t;
	int64_t		 id;
	unsigned long long asked_ms;	/* when the cancel was asked */
	int		 found;		/* the sleep was seen running */
	char		 why[1024];	/* if not, what was waited for */
};

static unsigned long long
tq_now_ms(void)
{
	struct timespec	ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (unsigned long long)ts.tv_sec * 1000 + (unsigned long long)
	    ts.tv_nsec / 1000000;
}

static void
tq_cancel_during(pid_t pid, void *arg)
{
	struct tq_cancel	*c = arg;

	c->found = h_wait_procs("sleep 47.5", 30, pid) == 0;
	if (!c->found)
		snprintf(c->why, sizeof(c->why), "%s", h_wait_why);
	c->asked_ms = tq_now_ms();
	assert_int_equal(queue_cancel(c->t->q, c->id), 0);
}

static void
test_cancel_running(void **state)
{
	struct tq		 t;
	struct tq_cancel	 c;
	struct h_run		 r;
	struct queue_job	 j;
	struct queue_attempt	*a;
	size_t			 na;
	pid_t			 p[4];

	(void)state;
	tq_rule("{\"match\":\"CANCEL-SUB\",\"repeat\":true,\"responses\":[{"
	    "\"reply\":{\"calls\":[{\"id\":\"b1\",\"name\":\"bash\","
	    "\"arguments\":{\"command\":\"sleep 47.5\"}}]}}]},\n"
	    "{\"match\":\"QJOB-CANCEL-\",\"repeat\":true,\"responses\":[{"
	    "\"reply\":{\"calls\":[{\"id\":\"d1\",\"name\":\"delegate\","
	    "\"arguments\":{\"profile\":\"general\",\"task\":\"CANCEL-SUB "
	    "wait\"}}]}}]}");
	if (tq_open(&t, NULL) == 1)
		skip();
	memset(&c, 0, sizeof(c));
	c.t = &t;
	c.id = tq_add(&t, "QJOB-CANCEL- wait", 3, NULL);
	h_hang_guard = 20;	/* a cancel that does not stop it: seconds */
	tq_work(&t, &r, tq_cancel_during, &c, "--lease", "1500ms", NULL);
	assert_false(r.hung);
	if (!c.found)
		fail_msg("%s", c.why);
	/* Heartbeat (lease / 3), SIGTERM, the run's own cancel: seconds. */
	print_message("cancel to end: %llu ms\n", tq_now_ms() - c.asked_ms);
	assert_true(tq_now_ms() - c.asked_ms < 8000);
	assert_int_equal(r.status, 1);
	assert_int_equal(h_count_lines(r.out, "\"job_end\"",
	    "\"outcome\":\"cancelled\""), 1);
	h_run_free(&r);
	/* The agents are gone with the run. */
	assert_int_equal(h_find_procs("sleep 47.5", p, 4), 0);
	tq_get(&t, c.id, &j, &a, &na);
	assert_int_equal(j.status, QUEUE_CANCELLED);
	assert_int_equal(j.attempts, 1);
	assert_int_equal(na, 1);
	assert_string_equal(a[0].outcome, "cancelled");
	queue_job_free(&j);
	queue_attempts_free(a, na);
	tq_close(&t);
}

/* A job whose general sleeps in bash (sleep SECS), then both complete. */
static void
tq_rules_sleeper(const char *secs)
{
	tq_rule("%s{\"match\":\"SUB-DONE\",\"repeat\":true,\"responses\":[{"
	    "\"reply\":{\"calls\":[{\"id\":\"r2\",\"name\":\"complete\","
	    "\"arguments\":{\"result\":\"SLEEPER-FINISHED\"}}]}}]},\n"
	    "{\"match\":\"SLEPT-OK\",\"repeat\":true,\"responses\":[{"
	    "\"reply\":{\"calls\":[{\"id\":\"g2\",\"name\":\"complete\","
	    "\"arguments\":{\"result\":\"SUB-DONE\"}}]}}]},\n"
	    "{\"match\":\"SLEEP-SUB\",\"repeat\":true,\"responses\":[{"
	    "\"reply\":{\"calls\":[{\"id\":\"g1\",\"name\":\"bash\","
	    "\"arguments\":{\"command\":\"sleep %s; echo SLEPT-%s\"}}]}}]},\n"
	    "{\"match\":\"QJOB-SLEEP-\",\"repeat\":true,\"responses\":[{"
	    "\"reply\":{\"calls\":[{\"id\":\"r1\",\"name\":\"delegate\","
	    "\"arguments\":{\"profile\":\"general\",\"task\":\"SLEEP-SUB "
	    "now\"}}]}}]}", tq_script[0] ? ",\n" : "", secs, "OK");
}

/* Signals to send once the sleep runs: sig1, then sig2 (0: none). */
struct tq_sig {
	const char	*needle;
	int		 sig1, sig2;
	int		 found;
	char		 why[1024];	/* if not found, what was waited for */
};

static void
tq_sig_during(pid_t pid, void *arg)
{
	struct tq_sig	*s = arg;

	s->found = h_wait_procs(s->needle, 30, pid) == 0;
	if (!s->found)
		snprintf(s->why, sizeof(s->why), "%s", h_wait_why);
	kill(pid, s->sig1);
	if (s->sig2 != 0) {
		usleep(200 * 1000);
		kill(pid, s->sig2);
	}
}

/* One SIGINT: no more claims, the running job finishes; exit 130. */
static void
test_sigint_finishes(void **state)
{
	struct tq		 t;
	struct tq_sig		 s = { "sleep 2.25", SIGINT, 0, 0, "" };
	struct h_run		 r;
	struct queue_job	 j;
	struct queue_attempt	*a;
	size_t			 na;
	int64_t			 one, two;

	(void)state;
	tq_rules_sleeper("2.25");
	if (tq_open(&t, NULL) == 1)
		skip();
	one = tq_add(&t, "QJOB-SLEEP- one", 3, NULL);
	two = tq_add(&t, "QJOB-SLEEP- two", 3, NULL);
	tq_work(&t, &r, tq_sig_during, &s, NULL);
	if (!s.found)
		fail_msg("%s", s.why);
	assert_int_equal(r.status, 130);
	h_run_free(&r);
	tq_get(&t, one, &j, &a, &na);
	assert_int_equal(j.status, QUEUE_DONE);
	assert_string_equal(j.answer, "SLEEPER-FINISHED");
	queue_job_free(&j);
	queue_attempts_free(a, na);
	tq_get(&t, two, &j, &a, &na);
	assert_int_equal(j.status, QUEUE_QUEUED);
	assert_int_equal(j.attempts, 0);
	queue_job_free(&j);
	queue_attempts_free(a, na);
	tq_close(&t);
}

/* A second SIGINT, or a SIGTERM: the runs stop, their attempts fail as
 * interrupted (the job retries); exit 130. */
static void
tq_interrupt(int sig1, int sig2)
{
	struct tq		 t;
	struct tq_sig		 s = { "sleep 31.25", sig1, sig2, 0, "" };
	struct h_run		 r;
	struct queue_job	 j;
	struct queue_attempt	*a;
	size_t			 na;
	pid_t			 p[4];
	int64_t			 id;

	tq_rules_sleeper("31.25");
	if (tq_open(&t, NULL) == 1)
		skip();
	id = tq_add(&t, "QJOB-SLEEP- one", 3, NULL);
	h_hang_guard = 20;
	tq_work(&t, &r, tq_sig_during, &s, NULL);
	if (!s.found)
		fail_msg("%s", s.why);
	assert_false(r.hung);
	assert_int_equal(r.status, 130);
	assert_true(r.ms < 15000);
	assert_int_equal(h_count_lines(r.out, "\"job_end\"",
	    "\"outcome\":\"interrupted\""), 1);
	h_run_free(&r);
	assert_int_equal(h_find_procs("sleep 31.25", p, 4), 0);
	tq_get(&t, id, &j, &a, &na);
	assert_int_equal(j.status, QUEUE_RETRYING);
	assert_int_equal(na, 1);
	assert_string_equal(a[0].outcome, "failed");
	assert_non_null(strstr(a[0].error, "interrupted"));
	queue_job_free(&j);
	queue_attempts_free(a, na);
	tq_close(&t);
}

static void
test_sigint_twice_stops(void **state)
{
	(void)state;
	tq_interrupt(SIGINT, SIGINT);
}

static void
test_sigterm_stops(void **state)
{
	(void)state;
	tq_interrupt(SIGTERM, 0);
}

/*
 * A lost lease: the worker stopped (SIGSTOP) past its lease, another
 * worker (the test) claims the job; at its next heartbeat the first
 * worker kills its run and records nothing.
 */
static void
tq_lost_during(pid_t pid, void *arg)
{
	struct tq		*t = arg;
	struct queue_job	 j;
	struct queue_result	 res;
	if (h_wait_procs("sleep 29.75", 30, pid) == -1) {
		kill(pid, SIGKILL);
		fail_msg("%s", h_wait_why);
	}
	kill(pid, SIGSTOP);
	usleep(1500 * 1000);
	memset(&j, 0, sizeof(j));
	assert_int_equal(queue_claim(t->q, "thief:1:1", 60000, 0, &j), 1);
	assert_int_equal(j.attempts, 2);
	kill(pid, SIGCONT);
	/* The first worker's run is killed at its next heartbeat. */
	if (h_wait_no_procs("sleep 29.75", 10) == -1) {
		kill(pid, SIGKILL);
		fail_msg("the lost lease's run was not stopped: %s",
		    h_wait_why);
	}
	memset(&res, 0, sizeof(res));
	res.answer = "THIEF-ANSWER";
	assert_int_equal(queue_complete(t->q, j.id, 2, "thief:1:1", &res), 0);
	queue_job_free(&j);
}

static void
test_lease_lost(void **state)
{
	struct tq		 t;
	struct h_run		 r;
	struct queue_job	 j;
	struct queue_attempt	*a;
	size_t			 na;
	int64_t			 id;

	(void)state;
	tq_rules_sleeper("29.75");
	if (tq_open(&t, NULL) == 1)
		skip();
	id = tq_add(&t, "QJOB-SLEEP- one", 3, NULL);
	h_hang_guard = 25;
	tq_work(&t, &r, tq_lost_during, &t, "--lease", "1s", NULL);
	assert_false(r.hung);
	assert_int_equal(r.status, 0);
	assert_int_equal(h_count_lines(r.out, "\"job_end\"",
	    "\"outcome\":\"lost\""), 1);
	h_run_free(&r);
	tq_get(&t, id, &j, &a, &na);
	assert_int_equal(j.status, QUEUE_DONE);
	assert_string_equal(j.answer, "THIEF-ANSWER");
	assert_int_equal(na, 2);
	assert_string_equal(a[0].outcome, "lease expired");
	assert_string_equal(a[1].outcome, "done");
	queue_job_free(&j);
	queue_attempts_free(a, na);
	tq_close(&t);
}

/* Exit 3 (an unknown profile: the configuration) is not retried. */
static void
test_config_error_final(void **state)
{
	struct tq		 t;
	struct h_run		 r;
	struct queue_job_new	 n;
	struct queue_job	 j;
	struct queue_attempt	*a;
	size_t			 na;
	int64_t			 id;
	int			 existed;

	(void)state;
	tq_rules_n(1, 0);
	if (tq_open(&t, NULL) == 1)
		skip();
	memset(&n, 0, sizeof(n));
	n.task = "QJOB-000- profile";
	n.workspace = t.ws;
	n.profile = "no-such-profile-q";
	n.max_attempts = 3;
	assert_int_equal(queue_add(t.q, &n, &id, &existed), 0);
	tq_work(&t, &r, NULL, NULL, NULL);
	assert_int_equal(r.status, 1);
	h_run_free(&r);
	tq_get(&t, id, &j, &a, &na);
	assert_int_equal(j.status, QUEUE_DEAD);
	assert_int_equal(j.attempts, 1);
	assert_non_null(strstr(j.error, "exit 3 (bad configuration"));
	queue_job_free(&j);
	queue_attempts_free(a, na);
	tq_close(&t);
}

/* A job's timeout bounds its run: the attempt fails in seconds. */
static void
test_job_timeout(void **state)
{
	struct tq		 t;
	struct h_run		 r;
	struct queue_job_new	 n;
	struct queue_job	 j;
	struct queue_attempt	*a;
	size_t			 na;
	pid_t			 p[4];
	int64_t			 id;
	int			 existed;

	(void)state;
	tq_rules_sleeper("28.5");
	if (tq_open(&t, NULL) == 1)
		skip();
	memset(&n, 0, sizeof(n));
	n.task = "QJOB-SLEEP- slow";
	n.workspace = t.ws;
	n.max_attempts = 1;
	n.timeout_ms = 1500;
	assert_int_equal(queue_add(t.q, &n, &id, &existed), 0);
	h_hang_guard = 20;
	tq_work(&t, &r, NULL, NULL, NULL);
	assert_false(r.hung);
	assert_int_equal(r.status, 1);
	assert_true(r.ms < 12000);
	h_run_free(&r);
	assert_int_equal(h_find_procs("sleep 28.5", p, 4), 0);
	tq_get(&t, id, &j, &a, &na);
	assert_int_equal(j.status, QUEUE_DEAD);
	print_message("timed out: %s\n", j.error);
	assert_non_null(strstr(j.error, "timed out (the job's --timeout)"));
	queue_job_free(&j);
	queue_attempts_free(a, na);
	tq_close(&t);
}

/* warren queue add --queue DB --workspace WS -, the task in the file in;
 * its exit code. */
static int
tq_add_cli(struct tq *t, const char *in)
{
	char		*argv[] = { "warren", "queue", "add", "--queue", t->db,
		"--workspace", t->ws, "-", NULL };
	struct h_run	 r;
	int		 st;

	h_stdin_path = in;
	assert_int_equal(h_warren(&r, argv, t->env, NULL, NULL), 0);
	st = r.status;
	h_run_free(&r);
	return st;
}

/*
 * Tasks of 200 KB and of the 1 MiB a run takes (CMD_RUN_TASK_MAX), added
 * on stdin as a user does, run to done: the task goes to the run on its
 * stdin, not as an argument (which holds 128 KiB: E2BIG, every attempt).
 */
static void
test_long_task(void **state)
{
	static const size_t	 len[] = { 200 * 1000, 1024 * 1024 };
	struct tq		 t;
	struct h_run		 r;
	struct queue_job	 j;
	struct queue_attempt	*a;
	size_t			 na, i;
	char			*task, res[32], name[32], path[PATH_MAX + 32];

	(void)state;
	tq_rule_complete("QJOB-LONG-0-", "\"LONG-DONE-0\"");
	tq_rule_complete("QJOB-LONG-1-", "\"LONG-DONE-1\"");
	if (tq_open(&t, NULL) == 1)
		skip();
	for (i = 0; i < 2; i++) {
		assert_non_null(task = malloc(len[i] + 1));
		memset(task, 'x', len[i]);
		snprintf(name, sizeof(name), "QJOB-LONG-%zu-", i);
		memcpy(task, name, strlen(name));
		task[len[i]] = '\0';
		snprintf(name, sizeof(name), "task%zu.txt", i);
		h_write(t.dir, name, task, 0);
		free(task);
		snprintf(path, sizeof(path), "%s/task%zu.txt", t.dir, i);
		assert_int_equal(tq_add_cli(&t, path), 0);
	}
	tq_work(&t, &r, NULL, NULL, NULL);
	if (r.status != 0)
		fail_msg("queue work: exit %d\n%s", r.status, r.err);
	h_run_free(&r);
	for (i = 0; i < 2; i++) {
		tq_get(&t, (int64_t)i + 1, &j, &a, &na);
		snprintf(res, sizeof(res), "LONG-DONE-%zu", i);
		if (j.status != QUEUE_DONE || j.attempts != 1)
			fail_msg("job %zu: status %d, %d attempts: %s", i + 1,
			    (int)j.status, j.attempts, j.error ? j.error : "");
		assert_int_equal(strlen(j.task), len[i]);
		assert_string_equal(j.answer, res);
		queue_job_free(&j);
		queue_attempts_free(a, na);
	}
	tq_close(&t);
}

/* Bad arguments: exit 2, said. */
static void
test_bad_args(void **state)
{
	static const char *bad[][3] = {
		{ "--jobs", "0", "--jobs '0'" },
		{ "--jobs", "x", "--jobs 'x'" },
		{ "--lease", "10ms", "--lease '10ms'" },
		{ "--lease", "soon", "--lease 'soon'" },
		{ "extra", NULL, "unexpected 'extra'" },
	};
	char		*argv[8];
	struct h_run	 r;
	size_t		 i;

	(void)state;
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		argv[0] = "warren";
		argv[1] = "queue";
		argv[2] = "work";
		argv[3] = "--queue";
		argv[4] = "/nonexistent-q/never.db";
		argv[5] = (char *)(uintptr_t)bad[i][0];
		argv[6] = (char *)(uintptr_t)bad[i][1];
		argv[7] = NULL;
		assert_int_equal(h_warren(&r, argv, NULL, NULL, NULL), 0);
		assert_int_equal(r.status, 2);
		assert_non_null(strstr(r.err, bad[i][2]));
		h_run_free(&r);
	}
	/* A queue that cannot be opened: exit 6, said. */
	argv[4] = "/proc/no-such-dir-q/queue.db";
	argv[5] = NULL;
	assert_int_equal(h_warren(&r, argv, NULL, NULL, NULL), 0);
	assert_int_equal(r.status, 6);
	assert_non_null(strstr(r.err, "warren queue work: "));
	h_run_free(&r);
}

#define TQ_NJOBS	12

/* A second worker on the same queue while the first runs. */
struct tq_second {
	struct tq	*t;
	struct h_run	 r;
};

static void
tq_second_during(pid_t pid, void *arg)
{
	struct tq_second	*s = arg;

	(void)pid;
	usleep(100 * 1000);
	tq_work(s->t, &s->r, NULL, NULL, "--jobs", "2", NULL);
}

/* Every job's answer is its own, its one attempt done. */
static void
tq_assert_each_once(struct tq *t, const int64_t *id, int n)
{
	struct queue_job	 j;
	struct queue_attempt	*a;
	size_t			 na, k, ndone;
	char			 res[64];
	int			 i;

	for (i = 0; i < n; i++) {
		tq_get(t, id[i], &j, &a, &na);
		snprintf(res, sizeof(res), "RESULT-%03d", i);
		assert_int_equal(j.status, QUEUE_DONE);
		assert_non_null(j.answer);
		assert_string_equal(j.answer, res);
		for (k = 0, ndone = 0; k < na; k++)
			if (strcmp(a[k].outcome, "done") == 0)
				ndone++;
		if (ndone != 1)
			fail_msg("job %lld: %zu attempts done", (long long)id[i],
			    ndone);
		queue_job_free(&j);
		queue_attempts_free(a, na);
	}
}

static void
tq_rules_n(int n, int delay_ms)
{
	char	m[32];
	int	i;

	for (i = 0; i < n; i++) {
		snprintf(m, sizeof(m), "QJOB-%03d-", i);
		tq_rule("%s{\"match\":\"%s\",\"repeat\":true,\"responses\":[{"
		    "\"delay_ms\":%d,\"reply\":{\"calls\":[{\"id\":\"c1\","
		    "\"name\":\"complete\",\"arguments\":{\"result\":"
		    "\"RESULT-%03d\"}}]" USAGE "}}]}", tq_script[0] ? ",\n" :
		    "", m, delay_ms, i);
	}
}

/* Jobs from to to (their markers), ids in id[from..to). */
static void
tq_add_range(struct tq *t, int64_t *id, int from, int to, int attempts)
{
	char	task[64];
	int	i;

	for (i = from; i < to; i++) {
		snprintf(task, sizeof(task), "QJOB-%03d- say it", i);
		id[i] = tq_add(t, task, attempts, NULL);
	}
}

static void
tq_add_n(struct tq *t, int64_t *id, int n, int attempts)
{
	tq_add_range(t, id, 0, n, attempts);
}

static void
test_two_workers(void **state)
{
	struct tq		 t;
	struct tq_second	 s;
	struct h_run		 r;
	int64_t			 id[TQ_NJOBS];
	int			 n;
	char			*log;

	(void)state;
	tq_rules_n(TQ_NJOBS, 200);
	if (tq_open(&t, NULL) == 1)
		skip();
	tq_add_n(&t, id, TQ_NJOBS, 3);
	memset(&s, 0, sizeof(s));
	s.t = &t;
	tq_work(&t, &r, tq_second_during, &s, "--jobs", "2", NULL);
	assert_int_equal(r.status, 0);
	assert_int_equal(s.r.status, 0);
	n = h_count_lines(r.out, "\"job_end\"", "\"outcome\":\"done\"");
	print_message("worker A ran %d jobs, worker B %d\n", n,
	    h_count_lines(s.r.out, "\"job_end\"", "\"outcome\":\"done\""));
	/* Both worked, and together ran each job once. */
	assert_true(n > 0 && n < TQ_NJOBS);
	assert_int_equal(n + h_count_lines(s.r.out, "\"job_end\"",
	    "\"outcome\":\"done\""), TQ_NJOBS);
	h_run_free(&r);
	h_run_free(&s.r);
	tq_assert_each_once(&t, id, TQ_NJOBS);
	/* One LLM request per job: none ran twice. */
	log = h_read_file(t.fl.log);
	assert_int_equal(h_count_lines(log, "QJOB-", NULL), TQ_NJOBS);
	free(log);
	tq_close(&t);
}

/* --follow: a job added while the worker waits is run (the worker polls
 * every second); an empty queue does not end it, SIGINT does. */
struct tq_follow {
	struct tq	*t;
	int64_t		 id;
	int		 done;
	char		 why[1024];	/* if not done, what was waited for */
};

static int
tq_follow_done(void *arg)
{
	struct tq_follow	*f = arg;
	struct queue_job	 j;
	struct queue_attempt	*a;
	size_t			 na;
	int			 done;

	tq_get(f->t, f->id, &j, &a, &na);
	done = j.status == QUEUE_DONE;
	queue_job_free(&j);
	queue_attempts_free(a, na);
	return done;
}

static void
tq_follow_during(pid_t pid, void *arg)
{
	struct tq_follow	*f = arg;

	usleep(1500 * 1000);	/* it looked, found nothing, waits */
	f->id = tq_add(f->t, "QJOB-000- late", 3, NULL);
	f->done = h_wait_for(tq_follow_done, f, 15, pid, "the job added to "
	    "an idle --follow worker (QJOB-000- late) to be done") == 0;
	if (!f->done)
		snprintf(f->why, sizeof(f->why), "%s", h_wait_why);
	kill(pid, SIGINT);
}

static void
test_follow(void **state)
{
	struct tq		 t;
	struct tq_follow	 f;
	struct h_run		 r;

	(void)state;
	tq_rules_n(1, 0);
	if (tq_open(&t, NULL) == 1)
		skip();
	memset(&f, 0, sizeof(f));
	f.t = &t;
	h_hang_guard = 30;
	tq_work(&t, &r, tq_follow_during, &f, "--follow", NULL);
	assert_false(r.hung);
	if (!f.done)
		fail_msg("%s", f.why);
	assert_int_equal(r.status, 130);
	assert_int_equal(h_count_lines(r.out, "\"job_end\"",
	    "\"outcome\":\"done\""), 1);
	h_run_free(&r);
	tq_close(&t);
}

/* On a terminal: a progress line and the running jobs' lines, redrawn in
 * place, no JSON events. */
static void
test_terminal_progress(void **state)
{
	struct tq		 t;
	char			*argv[] = { "warren", "queue", "work", "--queue",
				    NULL, "--jobs", "2", NULL };
	char			*env[256], buf[4096], *out;
	struct h_run		 r;
	size_t			 len;
	int			 i, k = 0, redraws;
	int64_t			 id[4];

	(void)state;
	tq_rules_n(3, 300);
	tq_rule(",\n{\"match\":\"QJOB-DOOMED-\",\"repeat\":true,"
	    "\"responses\":[" TQ_500 "]}");
	if (tq_open(&t, NULL) == 1)
		skip();
	tq_add_n(&t, id, 3, 3);
	id[3] = tq_add(&t, "QJOB-DOOMED- try", 1, NULL);
	argv[4] = t.db;
	for (i = 0; t.env[i] != NULL; i++)
		env[k++] = t.env[i];
	for (i = 0; environ[i] != NULL && k < 250; i++)
		env[k++] = environ[i];
	env[k] = NULL;
	assert_int_equal(h_pty_warren(&r, argv, env, NULL, 300), 0);
	out = r.out;
	len = strlen(out);
	print_message("terminal output: %zu bytes in %llu ms: %s\n", len,
	    r.ms, out);
	assert_int_equal(r.status, 1);	/* one dead */
	assert_null(strstr(out, "\"event\""));
	assert_non_null(strstr(out, "\r\033[Kdone 3  failed 1  running 0  "
	    "queued 0"));
	/* Under the last frame, the summary names the dead job and why. */
	assert_non_null(strstr(out, "warren queue work: done 3, failed 1, "
	    "cancelled 0; 0 failed attempts retried\r\n"));
	snprintf(buf, sizeof(buf), "\n  job %lld dead: warren run exit 4 ",
	    (long long)id[3]);
	assert_non_null(strstr(out, buf));
	assert_non_null(strstr(out, "FAKE-OUTAGE"));
	assert_non_null(strstr(out, "jobs/min  ETA"));
	assert_non_null(strstr(out, "tokens 54"));
	/* Under it, a line per running job: what its agents do. */
	assert_non_null(strstr(out, "\n\033[K  job "));
	assert_non_null(strstr(out, "s  [0 orchestrator] "));
	/* The last frame has no job line left under the progress line. */
	assert_non_null(strstr(out, "queued 0  "));
	assert_non_null(strstr(strstr(out, "\r\033[Kdone 3  failed 1  "
	    "running 0"), "\033[J"));
	/* At most 10 redraws a second (and the last one). */
	for (redraws = 0, i = 0; (size_t)i + 3 < len; i++)
		if (memcmp(out + i, "\r\033[K", 4) == 0)
			redraws++;
	assert_true(redraws >= 2);
	assert_true((unsigned long long)redraws <= r.ms / 100 + 2);
	h_run_free(&r);
	tq_close(&t);
}

#define TQ_KILL_JOBS	120	/* at first; 40 more when they all ended */
#define TQ_KILL_MORE	40
#define TQ_KILL_RULES	240
#define TQ_KILL_BUDGET_MS 60000
#define TQ_KILL_MAX	50

/* `queue work --jobs JOBS --lease 1s` as a child of ours, to kill. */
static pid_t
tq_spawn_worker(struct tq *t, const char *jobs)
{
	char	*argv[] = { "warren", "queue", "work", "--queue", t->db,
		    "--json", "--jobs", (char *)(uintptr_t)jobs, "--lease", "1s",
		    NULL };
	char	*env[256];
	int	 i, n = 0, fd;
	pid_t	 pid;

	for (i = 0; t->env[i] != NULL; i++)
		env[n++] = t->env[i];
	for (i = 0; environ[i] != NULL && n < 250; i++)
		env[n++] = environ[i];
	env[n] = NULL;
	if ((pid = fork()) == 0) {
		if ((fd = open("/dev/null", O_WRONLY)) != -1) {
			dup2(fd, 1);
			dup2(fd, 2);
		}
		execve(getenv("WARREN_BIN"), argv, env);
		_exit(127);
	}
	assert_true(pid > 0);
	return pid;
}

static int
tq_all_ended(struct tq *t)
{
	struct queue_counts	c;

	assert_int_equal(queue_counts(t->q, &c), 0);
	return c.n[QUEUE_QUEUED] + c.n[QUEUE_RUNNING] +
	    c.n[QUEUE_RETRYING] == 0;
}

/* kill -9 at random moments, restarting each time with a 1 s lease. */
static void
test_kill9(void **state)
{
	struct tq		 t;
	struct h_run		 r;
	int64_t			 id[TQ_KILL_RULES];
	struct queue_counts	 c;
	pid_t			 p[4];
	unsigned long long	 t0;
	unsigned		 seed = (unsigned)time(NULL);
	int			 kills = 0, seen = 0, st, njobs = TQ_KILL_JOBS;
	pid_t			 pid;
	char			 runs[PATH_MAX + 16];

	(void)state;
	tq_rules_n(TQ_KILL_RULES, 600);
	if (tq_open(&t, NULL) == 1)
		skip();
	/* This test's runs only: another tree may run this test at once. */
	snprintf(runs, sizeof(runs), "--workspace %s ", t.ws);
	/* A kill -9 costs the attempts it held (their leases expire): enough
	 * attempts that no job dies of the kills. */
	tq_add_n(&t, id, TQ_KILL_JOBS, 1000);
	srand(seed);
	t0 = tq_now_ms();
	while (kills < TQ_KILL_MAX && tq_now_ms() - t0 < TQ_KILL_BUDGET_MS) {
		/* Work to interrupt, for every kill. */
		if (tq_all_ended(&t)) {
			if (njobs + TQ_KILL_MORE > TQ_KILL_RULES)
				break;
			tq_add_range(&t, id, njobs, njobs + TQ_KILL_MORE, 1000);
			njobs += TQ_KILL_MORE;
		}
		pid = tq_spawn_worker(&t, "3");
		usleep((useconds_t)(50 + rand() % 1500) * 1000);
		/* The runs are seen by their command line (for the check of
		 * orphans below). */
		if (h_find_procs(runs, p, 4) > 0)
			seen++;
		kill(pid, SIGKILL);
		/* After SIGKILL: it ends, the wait may block. */
		assert_int_equal(waitpid(pid, &st, 0), pid);
		if (WIFSIGNALED(st))
			kills++;
	}
	assert_int_equal(queue_counts(t.q, &c), 0);
	print_message("kill -9 of queue work: %d times in %llu ms (seed %u), "
	    "%llu of %d jobs done by then\n", kills, tq_now_ms() - t0, seed,
	    (unsigned long long)c.n[QUEUE_DONE], njobs);
	assert_true(kills >= 10);
	assert_true(seen > 0);
	/* Then one worker to the end: the killed ones' leases run out. */
	tq_work(&t, &r, NULL, NULL, "--jobs", "4", "--lease", "1s", NULL);
	assert_int_equal(r.status, 0);
	h_run_free(&r);
	tq_assert_each_once(&t, id, njobs);
	/* No run outlived its killed worker (each got SIGTERM with it). */
	assert_int_equal(h_find_procs(runs, p, 4), 0);
	tq_close(&t);
}

/*
 * A job's run dies with its worker (issue 30): kill -9 of `queue work`
 * while one run waits on a slow LLM answer and another's agent sleeps in
 * bash; 2 s later no process of either run is left (the supervisors,
 * their spawn servers, workers and the sleep). A new worker then runs
 * both jobs again once their leases expire, and the database is free.
 */
#define TQ_GONE_MAX	256
#define TQ_GONE_MS	2000

/* A process of a run, as it was before the kill. */
struct tq_proc {
	pid_t			 pid;
	pid_t			 pgid;
	unsigned long long	 start;	/* clock ticks after boot */
};

/* From /proc/PID/stat: ppid, pgid, start time, and whether it is alive
 * (not a zombie). -1 when it is gone. */
static int
tq_stat(pid_t pid, pid_t *ppid, pid_t *pgid, unsigned long long *start)
{
	char	 path[64], buf[1024], *p, state;
	ssize_t	 n;
	int	 fd, a, b;

	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	if ((fd = open(path, O_RDONLY)) == -1)
		return -1;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return -1;
	buf[n] = '\0';
	/* "pid (comm) state ppid pgrp session tty tpgid flags minflt
	 * cminflt majflt cmajflt utime stime cutime cstime priority nice
	 * threads itrealvalue starttime": comm may hold ')'. */
	if ((p = strrchr(buf, ')')) == NULL || sscanf(p + 1, " %c %d %d %*d "
	    "%*d %*d %*u %*u %*u %*u %*u %*u %*u %*d %*d %*d %*d %*d %*d %llu",
	    &state, &a, &b, start) != 4)
		return -1;
	*ppid = a;
	*pgid = b;
	return state == 'Z' || state == 'X' ? -1 : 0;
}

/* Every live process under ancestor (its descendants), into v. */
static int
tq_descendants(pid_t ancestor, struct tq_proc *v, int max)
{
	DIR		*d;
	struct dirent	*de;
	pid_t		 pid, ppid;
	int		 n = 0;

	assert_non_null(d = opendir("/proc"));
	while ((de = readdir(d)) != NULL && n < max) {
		if ((pid = (pid_t)atoi(de->d_name)) <= 0 ||
		    !h_descends(pid, ancestor) || tq_stat(pid, &ppid,
		    &v[n].pgid, &v[n].start) == -1)
			continue;
		v[n++].pid = pid;
	}
	closedir(d);
	return n;
}

/* Is pid one of v's processes still (same start time), or in the
 * process group of one of them (but ours)? */
static int
tq_of_runs(pid_t pid, const struct tq_proc *v, int n)
{
	unsigned long long	 start;
	pid_t			 ppid, pgid;
	int			 i;

	if (pid == getpid() || tq_stat(pid, &ppid, &pgid, &start) == -1)
		return 0;
	for (i = 0; i < n; i++) {
		if (v[i].pid == pid && v[i].start == start)
			return 1;
		if (v[i].pgid == pgid && pgid != getpgrp())
			return 1;
	}
	return 0;
}

/* /proc/PID/NAME's text, NULs as spaces, no newline ("" if gone). */
static void
tq_proc_text(pid_t pid, const char *name, char *buf, size_t sz)
{
	char	 path[64];
	ssize_t	 k, i;
	int	 fd;

	snprintf(path, sizeof(path), "/proc/%d/%s", (int)pid, name);
	k = (fd = open(path, O_RDONLY)) == -1 ? 0 : read(fd, buf, sz - 1);
	if (fd != -1)
		close(fd);
	for (i = 0; i < k; i++)
		if (buf[i] == '\0' || buf[i] == '\n')
			buf[i] = ' ';
	while (k > 0 && buf[k - 1] == ' ')
		k--;
	buf[k > 0 ? k : 0] = '\0';
}

/* What is left of the runs: each survivor's pid, name, command line. */
static int
tq_survivors(const struct tq_proc *v, int n, char *out, size_t outsz)
{
	DIR		*d;
	struct dirent	*de;
	char		 comm[64], cmd[256];
	pid_t		 pid;
	size_t		 len = 0;
	int		 left = 0;

	out[0] = '\0';
	assert_non_null(d = opendir("/proc"));
	while ((de = readdir(d)) != NULL) {
		if ((pid = (pid_t)atoi(de->d_name)) <= 0 ||
		    !tq_of_runs(pid, v, n))
			continue;
		left++;
		tq_proc_text(pid, "comm", comm, sizeof(comm));
		tq_proc_text(pid, "cmdline", cmd, sizeof(cmd));
		if (len < outsz)
			len += (size_t)snprintf(out + len, outsz - len,
			    "\n  pid %d (%s): %s", (int)pid, comm, cmd);
	}
	closedir(d);
	return left;
}

/* The slow job: its first answer comes after 40 s, the next at once. */
static void
tq_rules_slow(void)
{
	tq_rule("%s{\"match\":\"QJOB-SLOW-\",\"repeat\":true,\"responses\":["
	    "{\"delay_ms\":40000,\"reply\":{\"calls\":[{\"id\":\"s1\",\"name\":"
	    "\"complete\",\"arguments\":{\"result\":\"SLOW-LATE\"}}]" USAGE
	    "}},{\"reply\":{\"calls\":[{\"id\":\"s2\",\"name\":\"complete\","
	    "\"arguments\":{\"result\":\"SLOW-FINISHED\"}}]" USAGE "}}]}",
	    tq_script[0] ? ",\n" : "");
}

/* The sleeper: its agent sleeps 43.5 s in bash the first time only. */
static void
tq_rules_sleep_once(void)
{
	tq_rule("{\"match\":\"SUB-DONE\",\"repeat\":true,\"responses\":[{"
	    "\"reply\":{\"calls\":[{\"id\":\"r2\",\"name\":\"complete\","
	    "\"arguments\":{\"result\":\"SLEEPER-FINISHED\"}}]}}]},\n"
	    "{\"match\":\"SLEPT-OK\",\"repeat\":true,\"responses\":[{"
	    "\"reply\":{\"calls\":[{\"id\":\"g2\",\"name\":\"complete\","
	    "\"arguments\":{\"result\":\"SUB-DONE\"}}]}}]},\n"
	    "{\"match\":\"SLEEP-SUB\",\"repeat\":true,\"responses\":[{"
	    "\"reply\":{\"calls\":[{\"id\":\"g1\",\"name\":\"bash\","
	    "\"arguments\":{\"command\":\"sleep 43.5; echo SLEPT-OK\"}}]}},{"
	    "\"reply\":{\"calls\":[{\"id\":\"g1\",\"name\":\"bash\","
	    "\"arguments\":{\"command\":\"echo SLEPT-OK\"}}]}}]},\n"
	    "{\"match\":\"QJOB-SLEEP-\",\"repeat\":true,\"responses\":[{"
	    "\"reply\":{\"calls\":[{\"id\":\"r1\",\"name\":\"delegate\","
	    "\"arguments\":{\"profile\":\"general\",\"task\":\"SLEEP-SUB "
	    "now\"}}]}}]}");
}

/* Both runs mid-flight: the sleep runs under the worker, and the slow
 * job's request reached the model. */
static void
tq_wait_busy(struct tq *t, pid_t worker)
{
	pid_t	p[4];
	int	i, k, n, sleeping = 0, asked = 0;

	for (i = 0; i < 600 && !(sleeping && asked); i++) {
		usleep(50 * 1000);
		n = h_find_procs("sleep 43.5", p, 4);
		for (k = 0; k < n; k++)
			sleeping |= h_descends(p[k], worker);
		asked = h_count_file(t->fl.log, "QJOB-SLOW-", NULL) > 0;
	}
	if (!sleeping || !asked)
		fail_msg("30 s and the runs were not busy: the bash sleep %s, "
		    "the slow job's request %s", sleeping ? "ran" :
		    "never ran", asked ? "came" : "never came");
}

/* What `warren runs` says of the killed runs: both status (cancelled
 * with their parent's death said, or interrupted: not recorded, their
 * supervisor gone); none looks running. */
static void
tq_runs_status(struct tq *t, const char *status)
{
	char		*argv[] = { "warren", "runs", "--workspace", t->ws,
			    "--json", NULL };
	char		 want[64];
	struct h_run	 r;
	int		 said;

	assert_int_equal(h_warren(&r, argv, t->env, NULL, NULL), 0);
	assert_int_equal(r.status, 0);
	snprintf(want, sizeof(want), "\"status\": \"%s\"", status);
	said = h_count_lines(r.out, "\"result\": \"interrupted: its parent "
	    "(pid ", NULL);
	if (h_count_lines(r.out, want, NULL) != 2 || strstr(r.out,
	    "\"running\"") != NULL || said != (strcmp(status, "cancelled") ==
	    0 ? 2 : 0))
		fail_msg("the killed runs are not both %s: %s", status, r.out);
	h_run_free(&r);
}

/* The state database's write lock, held (another process writing). */
static sqlite3 *
tq_lock_state(struct tq *t)
{
	char	 path[PATH_MAX + 32];
	sqlite3	*h;

	snprintf(path, sizeof(path), "%s/state/warren/warren.db", t->dir);
	if (sqlite3_open_v2(path, &h, SQLITE_OPEN_READWRITE, NULL) !=
	    SQLITE_OK)
		fail_msg("%s: %s", path, sqlite3_errmsg(h));
	sqlite3_busy_timeout(h, 10000);
	if (sqlite3_exec(h, "BEGIN IMMEDIATE", NULL, NULL, NULL) != SQLITE_OK)
		fail_msg("%s: BEGIN IMMEDIATE: %s", path, sqlite3_errmsg(h));
	return h;
}

/* A job whose root is a general agent (a worker of the run's). */
static int64_t
tq_add_general(struct tq *t, const char *task)
{
	struct queue_job_new	 j;
	int64_t			 id;
	int			 existed;

	memset(&j, 0, sizeof(j));
	j.task = task;
	j.workspace = t->ws;
	j.profile = "general";
	j.max_attempts = 3;
	if (queue_add(t->q, &j, &id, &existed) == -1)
		fail_msg("queue_add: %s", queue_errmsg(t->q));
	return id;
}

/*
 * locked: the state database's write lock is held by another process
 * (us) from before the kill until the check is over, as when many runs
 * share it: the runs cannot record their end, and must not wait for it.
 */
static void
tq_kill9_runs(int locked)
{
	struct tq		 t;
	struct tq_proc		 v[TQ_GONE_MAX];
	struct h_run		 r;
	struct queue_job	 j;
	struct queue_attempt	*a;
	size_t			 na;
	unsigned long long	 t0, ms;
	char			 left[4096];
	sqlite3			*lock = NULL;
	int64_t			 slow, sleeper;
	int			 n, st, nleft;
	pid_t			 pid;

	tq_rules_sleep_once();
	tq_rules_slow();
	if (tq_open(&t, NULL) == 1)
		skip();
	sleeper = tq_add(&t, "QJOB-SLEEP- one", 3, NULL);
	slow = tq_add_general(&t, "QJOB-SLOW- two");
	pid = tq_spawn_worker(&t, "2");
	tq_wait_busy(&t, pid);
	/* Every process of the runs: the supervisors, spawn servers,
	 * workers, the sleep. */
	n = tq_descendants(pid, v, TQ_GONE_MAX);
	print_message("%d processes under the worker\n", n);
	assert_true(n >= 4);
	if (locked)
		lock = tq_lock_state(&t);
	t0 = tq_now_ms();
	assert_int_equal(kill(pid, SIGKILL), 0);
	/* After SIGKILL: it ends, the wait may block. */
	assert_int_equal(waitpid(pid, &st, 0), pid);
	assert_true(WIFSIGNALED(st) && WTERMSIG(st) == SIGKILL);
	while ((nleft = tq_survivors(v, n, left, sizeof(left))) > 0 &&
	    tq_now_ms() - t0 < TQ_GONE_MS)
		usleep(20 * 1000);
	ms = tq_now_ms() - t0;
	if (lock != NULL)
		sqlite3_close(lock);	/* the rollback: nothing was written */
	if (nleft > 0)
		fail_msg("%d processes of the killed worker's runs alive %llu "
		    "ms after its kill -9:%s", nleft, ms, left);
	print_message("the runs were gone %llu ms after the kill\n", ms);
	tq_runs_status(&t, locked ? "interrupted" : "cancelled");
	/* A new worker: the jobs again after their leases, no lock. */
	h_hang_guard = 40;
	tq_work(&t, &r, NULL, NULL, "--jobs", "2", "--lease", "1s", NULL);
	assert_false(r.hung);
	if (r.status != 0 || strstr(r.err, "database is locked") != NULL)
		fail_msg("the restarted worker: exit %d: %s", r.status, r.err);
	h_run_free(&r);
	tq_get(&t, sleeper, &j, &a, &na);
	assert_int_equal(j.status, QUEUE_DONE);
	assert_string_equal(j.answer, "SLEEPER-FINISHED");
	queue_job_free(&j);
	queue_attempts_free(a, na);
	tq_get(&t, slow, &j, &a, &na);
	assert_int_equal(j.status, QUEUE_DONE);
	assert_string_equal(j.answer, "SLOW-FINISHED");
	queue_job_free(&j);
	queue_attempts_free(a, na);
	tq_close(&t);
}

static void
test_kill9_runs_die(void **state)
{
	(void)state;
	tq_kill9_runs(0);
}

static void
test_kill9_runs_die_locked(void **state)
{
	(void)state;
	tq_kill9_runs(1);
}

/* A job "QJOB-ME- ..." whose root delegates ME-SUB-TASK to a general
 * agent, whose bash runs cmd (JSON-escaped already) and says ME-WROTE;
 * the job's answer is M-FINISHED (M: ME's first letter). */
static void
tq_rules_bash(const char *me, const char *cmd)
{
	tq_rule("%s{\"match\":\"%c-SUBRESULT\",\"repeat\":true,\"responses\":"
	    "[{\"reply\":{\"calls\":[{\"id\":\"r2\",\"name\":\"complete\","
	    "\"arguments\":{\"result\":\"%c-FINISHED\"}}]}}]}",
	    tq_script[0] ? ",\n" : "", me[0], me[0]);
	tq_rule(",\n{\"match\":\"%s-WROTE\",\"repeat\":true,\"responses\":"
	    "[{\"reply\":{\"calls\":[{\"id\":\"g2\",\"name\":\"complete\","
	    "\"arguments\":{\"result\":\"%c-SUBRESULT\"}}]}}]}", me, me[0]);
	tq_rule(",\n{\"match\":\"%s-SUB-TASK\",\"repeat\":true,\"responses\":"
	    "[{\"reply\":{\"calls\":[{\"id\":\"g1\",\"name\":\"bash\","
	    "\"arguments\":{\"command\":\"%s\"}}]}}]}", me, cmd);
	tq_rule(",\n{\"match\":\"QJOB-%s-\",\"repeat\":true,\"responses\":"
	    "[{\"reply\":{\"calls\":[{\"id\":\"r1\",\"name\":\"delegate\","
	    "\"arguments\":{\"profile\":\"general\",\"task\":\"%s-SUB-TASK\"}}"
	    "]}}]}", me, me);
}

/* Two jobs on one workspace at once, each in its own layer: each bash
 * writes same.txt, sleeps, reads it back. */
static void
tq_rules_apart(const char *me)
{
	char	cmd[256];

	snprintf(cmd, sizeof(cmd), "printf '%s-%%s\\\\n' WROTE > same.txt; "
	    "sleep 1.5; cat same.txt", me);
	tq_rules_bash(me, cmd);
}

static void
test_parallel_jobs_apart(void **state)
{
	struct tq		 t;
	struct h_run		 r;
	struct queue_job	 j;
	struct queue_attempt	*a;
	size_t			 na;
	int64_t			 ia, ib;
	char			*log, *s, path[PATH_MAX + 16];

	(void)state;
	tq_rules_apart("AAA");
	tq_rules_apart("BBB");
	if (tq_open(&t, "WARREN_WORKSPACE_MODE=cow") == 1)
		skip();
	ia = tq_add(&t, "QJOB-AAA- write and read", 1, NULL);
	ib = tq_add(&t, "QJOB-BBB- write and read", 1, NULL);
	tq_work(&t, &r, NULL, NULL, "--jobs", "2", NULL);
	assert_int_equal(r.status, 0);
	/* They ran at once: both started before either ended. */
	s = strstr(r.out, "\"job_end\"");
	assert_non_null(s);
	assert_non_null(strstr(r.out, "\"job_start\""));
	assert_non_null(strstr(strstr(r.out, "\"job_start\"") + 1,
	    "\"job_start\""));
	assert_true(strstr(strstr(r.out, "\"job_start\"") + 1,
	    "\"job_start\"") < s);
	h_run_free(&r);
	log = h_read_file(t.fl.log);
	assert_true(h_count_lines(log, "AAA-SUB-TASK", "AAA-WROTE") >= 1);
	assert_true(h_count_lines(log, "BBB-SUB-TASK", "BBB-WROTE") >= 1);
	assert_int_equal(h_count_lines(log, "AAA-SUB-TASK", "BBB-WROTE"), 0);
	assert_int_equal(h_count_lines(log, "BBB-SUB-TASK", "AAA-WROTE"), 0);
	free(log);
	tq_get(&t, ia, &j, &a, &na);
	assert_string_equal(j.answer, "A-FINISHED");
	assert_non_null(j.diff_stat);
	assert_non_null(strstr(j.diff_stat, "same.txt"));
	queue_job_free(&j);
	queue_attempts_free(a, na);
	tq_get(&t, ib, &j, &a, &na);
	assert_string_equal(j.answer, "B-FINISHED");
	queue_job_free(&j);
	queue_attempts_free(a, na);
	/* The workspace itself is untouched. */
	snprintf(path, sizeof(path), "%s/same.txt", t.ws);
	assert_int_equal(access(path, F_OK), -1);
	tq_close(&t);
}

/* warren queue SUB --queue DB ARGS... with env (another machine's). */
#define tq_cli(t, r, env, sub, ...) assert_int_equal(h_warren_l((r), \
	(env), "queue", (sub), "--queue", (t)->db, __VA_ARGS__), 0)

static void
tq_expect(const char *dir, const char *rel, const char *want)
{
	char	p[PATH_MAX + 64], *got;

	snprintf(p, sizeof(p), "%s/%s", dir, rel);
	if (want == NULL) {
		assert_int_equal(access(p, F_OK), -1);
		return;
	}
	got = h_read_file(p);
	assert_string_equal(got, want);
	free(got);
}

/*
 * Results any machine applies (issue 22): one worker runs two jobs in
 * layers; "machine B" (a state directory of its own, a checkout at
 * another path) shows job 1's diff and applies it from the change set in
 * the queue; --all-done there skips job 1 (applied) and names job 2's
 * conflict (data.txt differs in B's checkout by then); the machine that
 * ran job 2 applies it from its own layer; then nothing is left.
 */
static void
test_apply_elsewhere(void **state)
{
	struct tq		 t;
	struct h_run		 r;
	struct queue_job	 j;
	char			 ws2[PATH_MAX + 8], stb[PATH_MAX + 48];
	char			 cmd[3 * PATH_MAX];
	char			*envb[3];
	int64_t			 i1, i2;

	(void)state;
	tq_rules_bash("EDIT", "echo new > new.txt; echo edited > data.txt; "
	    "printf 'EDIT-%s\\n' WROTE");
	tq_rules_bash("FIX", "echo fixed > data.txt; printf 'FIX-%s\\n' "
	    "WROTE");
	tq_rules_bash("BIG", "head -c 17000000 /dev/zero > big.bin; "
	    "printf 'BIG-%s\\n' WROTE");
	if (tq_open(&t, "WARREN_WORKSPACE_MODE=cow") == 1)
		skip();
	i1 = tq_add(&t, "QJOB-EDIT- change two files", 1, NULL);
	i2 = tq_add(&t, "QJOB-FIX- change one", 1, NULL);
	tq_work(&t, &r, NULL, NULL, NULL);
	assert_int_equal(r.status, 0);
	h_run_free(&r);
	tq_get(&t, i1, &j, NULL, NULL);
	assert_int_equal(j.status, QUEUE_DONE);
	assert_true(j.changes_len > 0);
	assert_non_null(j.run_where);
	assert_non_null(strstr(j.run_where, "/state/warren/warren.db"));
	queue_job_free(&j);

	snprintf(ws2, sizeof(ws2), "%s/ws2", t.dir);
	snprintf(cmd, sizeof(cmd), "cp -R --preserve=mode '%s' '%s'", t.ws,
	    ws2);
	assert_int_equal(system(cmd), 0);
	snprintf(stb, sizeof(stb), "XDG_STATE_HOME=%s/state-b", t.dir);
	envb[0] = stb;
	envb[1] = t.cf;
	envb[2] = NULL;
	tq_cli(&t, &r, envb, "diff", "--workspace", ws2, "1", NULL);
	if (r.status != 0)
		fail_msg("diff on B: %d\n%s\n%s", r.status, r.out, r.err);
	assert_non_null(strstr(r.out, "+++ b/new.txt\n@@ -0,0 +1 @@\n+new\n"));
	assert_non_null(strstr(r.out, "-data\n+edited\n"));
	h_run_free(&r);
	tq_cli(&t, &r, envb, "apply", "--workspace", ws2, "1", NULL);
	if (r.status != 0)
		fail_msg("apply on B: %d\n%s\n%s", r.status, r.out, r.err);
	assert_non_null(strstr(r.out, "its changes from the queue"));
	assert_non_null(strstr(r.out, "created new.txt\n"));
	assert_non_null(strstr(r.out, "changed data.txt\n"));
	h_run_free(&r);
	tq_expect(ws2, "new.txt", "new\n");
	tq_expect(ws2, "data.txt", "edited\n");
	tq_expect(t.ws, "new.txt", NULL);
	tq_expect(t.ws, "data.txt", "data\n");
	tq_get(&t, i1, &j, NULL, NULL);
	assert_true(j.applied_ms > 0);
	assert_non_null(j.applied_by);
	assert_non_null(strstr(j.applied_by, "/ws2"));
	queue_job_free(&j);

	/* Job 2 is of t.ws: --all-done into ws2 leaves it out unless told. */
	tq_cli(&t, &r, envb, "apply", "--workspace", ws2, "--all-done", NULL);
	assert_int_equal(r.status, 0);
	assert_non_null(strstr(r.err, "job 2 is of workspace "));
	assert_non_null(strstr(r.out, "applied the changes of 0 done jobs; 1 "
	    "of other workspaces left out"));
	h_run_free(&r);
	tq_cli(&t, &r, envb, "apply", "--workspace", ws2, "--any-workspace",
	    "--all-done", NULL);
	assert_int_equal(r.status, 1);
	assert_null(strstr(r.out, "job 1 "));
	assert_non_null(strstr(r.out, "conflict: data.txt: its content "
	    "differs from the run's base\n"));
	assert_non_null(strstr(r.out, "applied the changes of 0 done jobs; 1 "
	    "left to review"));
	h_run_free(&r);
	tq_expect(ws2, "data.txt", "edited\n");

	/* Where job 2 ran: its own layer, known by lstat, from its
	 * workspace. */
	assert_int_equal(chdir(t.ws), 0);
	tq_cli(&t, &r, t.env, "apply", "2", NULL);
	if (r.status != 0)
		fail_msg("apply on A: %d\n%s\n%s", r.status, r.out, r.err);
	assert_non_null(strstr(r.out, "job 2 (run "));
	assert_null(strstr(r.out, "from the queue"));
	h_run_free(&r);
	tq_expect(t.ws, "data.txt", "fixed\n");
	tq_get(&t, i2, &j, NULL, NULL);
	assert_non_null(j.applied_by);
	assert_non_null(strstr(j.applied_by, t.ws));
	queue_job_free(&j);
	tq_cli(&t, &r, envb, "apply", "--workspace", ws2, "--any-workspace",
	    "--all-done", NULL);
	assert_int_equal(r.status, 0);
	assert_string_equal(r.out, "applied the changes of 0 done jobs\n");
	h_run_free(&r);

	/* Over the bound: said by the worker, kept where it ran. */
	tq_add(&t, "QJOB-BIG- a big file", 1, NULL);
	tq_work(&t, &r, NULL, NULL, NULL);
	assert_int_equal(r.status, 0);
	assert_non_null(strstr(r.err, "job 3: the change set is over 16777216 "
	    "bytes at big.bin: it is kept on this machine only"));
	h_run_free(&r);
	tq_cli(&t, &r, envb, "apply", "--workspace", ws2, "3", NULL);
	assert_int_equal(r.status, 2);
	assert_non_null(strstr(r.err, "only the machine that ran it has them, "));
	assert_non_null(strstr(r.err, "/state/warren/warren.db: `warren queue "
	    "apply 3` there"));
	h_run_free(&r);
	/* Where it ran, its layer goes only to its own workspace. */
	tq_cli(&t, &r, t.env, "apply", "--workspace", ws2, "3", NULL);
	assert_int_equal(r.status, 2);
	assert_non_null(strstr(r.err, "job 3: the queue holds no change set of "
	    "it, and its run "));
	assert_non_null(strstr(r.err, "'s layer here goes only to the run's own "
	    "workspace, "));
	h_run_free(&r);
	/* Too large for the diff to show: unreviewed, left out until
	 * asked for (test_diff_review). */
	tq_cli(&t, &r, t.env, "apply", "3", NULL);
	assert_int_equal(r.status, 0);
	assert_non_null(strstr(r.out, "left out: big.bin: unreviewed: too "
	    "large"));
	h_run_free(&r);
	tq_expect(t.ws, "big.bin", NULL);
	tq_cli(&t, &r, t.env, "apply", "--include-unreviewed", "3", NULL);
	assert_int_equal(r.status, 0);
	h_run_free(&r);
	snprintf(cmd, sizeof(cmd), "test $(stat -c %%s '%s/big.bin') = "
	    "17000000", t.ws);
	assert_int_equal(system(cmd), 0);
	assert_int_equal(chdir("/"), 0);
	tq_close(&t);
}

/* --max-running 1: four slots, yet one job at a time, attempts apart. */
static void
test_max_running(void **state)
{
	struct tq		 t;
	struct h_run		 r;
	struct queue_job	 j;
	struct queue_attempt	*a;
	int64_t			 id[4], start[4], end[4];
	size_t			 na;
	int			 i, k;

	(void)state;
	tq_rules_n(4, 300);
	if (tq_open(&t, NULL) == 1)
		skip();
	tq_add_n(&t, id, 4, 1);
	tq_work(&t, &r, NULL, NULL, "--jobs", "4", "--max-running", "1",
	    NULL);
	assert_int_equal(r.status, 0);
	h_run_free(&r);
	for (i = 0; i < 4; i++) {
		tq_get(&t, id[i], &j, &a, &na);
		assert_int_equal(j.status, QUEUE_DONE);
		assert_int_equal(na, 1);
		start[i] = a[0].started_ms;
		end[i] = a[0].ended_ms;
		queue_attempts_free(a, na);
		queue_job_free(&j);
	}
	for (i = 0; i < 4; i++)
		for (k = 0; k < 4; k++)
			if (i != k && start[i] < end[k] && start[k] < end[i])
				fail_msg("jobs %lld and %lld ran at once",
				    (long long)id[i], (long long)id[k]);
	tq_close(&t);
}

/* The "ms" (arrival, monotonic) of every request in fakellm's log whose
 * body holds marker (NULL: all), in order; how many. */
static size_t
tq_arrivals(struct tq *t, const char *marker, long long *ms, size_t max)
{
	char		*log, *line, *save = NULL;
	json_t		*o;
	size_t		 n = 0;

	assert_non_null(log = h_read_file(t->fl.log));
	for (line = strtok_r(log, "\n", &save); line != NULL && n < max;
	    line = strtok_r(NULL, "\n", &save)) {
		if (marker != NULL && strstr(line, marker) == NULL)
			continue;
		assert_non_null(o = json_loads(line, 0, NULL));
		ms[n++] = json_integer_value(json_object_get(o, "ms"));
		json_decref(o);
	}
	free(log);
	return n;
}

/*
 * llm_rpm shared by two workers (docs/queue.md "Shared limits"): 8 jobs,
 * one request each, at 120 a minute (500 ms apart, a burst of 2), from
 * two `queue work --jobs 2`. No three requests within 500 ms, and the
 * eight take at least 6 * 500 ms; unshared, they all go within 1 s.
 */
#define TQ_RATE_JOBS	8

static void
test_shared_rpm(void **state)
{
	struct tq		 t;
	struct tq_second	 s;
	struct h_run		 r;
	int64_t			 id[TQ_RATE_JOBS];
	long long		 ms[TQ_RATE_JOBS + 1];
	size_t			 n, i;

	(void)state;
	tq_rules_n(TQ_RATE_JOBS, 0);
	if (tq_open(&t, "WARREN_LLM_RPM=120") == 1)
		skip();
	tq_add_n(&t, id, TQ_RATE_JOBS, 3);
	memset(&s, 0, sizeof(s));
	s.t = &t;
	tq_work(&t, &r, tq_second_during, &s, "--jobs", "2", NULL);
	assert_int_equal(r.status, 0);
	assert_int_equal(s.r.status, 0);
	/* Both workers ran jobs: the limit was shared, not one's own. */
	assert_true(h_count_lines(r.out, "\"job_end\"", "\"done\"") > 0);
	assert_true(h_count_lines(s.r.out, "\"job_end\"", "\"done\"") > 0);
	h_run_free(&r);
	h_run_free(&s.r);
	tq_assert_each_once(&t, id, TQ_RATE_JOBS);
	n = tq_arrivals(&t, "QJOB-", ms, TQ_RATE_JOBS + 1);
	assert_int_equal(n, TQ_RATE_JOBS);
	for (i = 2; i < n; i++)
		if (ms[i] - ms[i - 2] < 450)
			fail_msg("requests %zu and %zu came %lld ms apart: "
			    "three within 500 ms at 120 a minute", i - 1, i + 1,
			    ms[i] - ms[i - 2]);
	if (ms[n - 1] - ms[0] < (long long)(n - 2) * 500 - 100)
		fail_msg("%zu requests in %lld ms at 120 a minute", n,
		    ms[n - 1] - ms[0]);
	tq_close(&t);
}

/* A 429 in one worker's run pauses the other worker's runs. */
struct tq_429 {
	struct tq	*t;
	struct h_run	 r;
	int		 seen;
	char		 why[1024];	/* if not seen, what was waited for */
};

static int
tq_429_asked(void *arg)
{
	struct tq_429	*x = arg;
	long long	 ms[2];

	return tq_arrivals(x->t, "QJOB-000-", ms, 2) > 0;
}

static void
tq_429_during(pid_t pid, void *arg)
{
	struct tq_429	*x = arg;

	x->seen = h_wait_for(tq_429_asked, x, 5, pid, "job 0's first "
	    "request (QJOB-000-, answered 429) in fakellm's log") == 0;
	if (!x->seen) {
		snprintf(x->why, sizeof(x->why), "%s", h_wait_why);
		return;
	}
	(void)tq_add(x->t, "QJOB-001- after the 429", 1, NULL);
	tq_work(x->t, &x->r, NULL, NULL, NULL);
}

/*
 * Job 0's first request gets 429 with Retry-After: 3. Only then is job 1
 * added and a second worker started: its run's first request waits out
 * the pause job 0's run shared (without it, it would come within 1 s).
 */
static void
test_shared_429(void **state)
{
	struct tq	 t;
	struct tq_429	 x;
	struct h_run	 r;
	long long	 first[2], second[2];

	(void)state;
	tq_rule("{\"match\":\"QJOB-000-\",\"repeat\":true,\"responses\":["
	    "{\"status\":429,\"headers\":{\"Retry-After\":\"3\"},\"body\":"
	    "{\"error\":{\"message\":\"slow down\"}}},"
	    "{\"reply\":{\"calls\":[{\"id\":\"c1\",\"name\":\"complete\","
	    "\"arguments\":{\"result\":\"RESULT-000\"}}]" USAGE "}}]}");
	tq_rule(",\n{\"match\":\"QJOB-001-\",\"repeat\":true,\"responses\":["
	    "{\"reply\":{\"calls\":[{\"id\":\"c1\",\"name\":\"complete\","
	    "\"arguments\":{\"result\":\"RESULT-001\"}}]" USAGE "}}]}");
	if (tq_open(&t, NULL) == 1)
		skip();
	(void)tq_add(&t, "QJOB-000- hits the 429", 2, NULL);
	memset(&x, 0, sizeof(x));
	x.t = &t;
	h_hang_guard = 60;
	tq_work(&t, &r, tq_429_during, &x, NULL);
	assert_false(r.hung);
	if (!x.seen)
		fail_msg("%s", x.why);
	h_run_free(&r);
	assert_int_equal(x.r.status, 0);
	h_run_free(&x.r);
	assert_int_equal(tq_arrivals(&t, "QJOB-000-", first, 2), 2);
	assert_int_equal(tq_arrivals(&t, "QJOB-001-", second, 2), 1);
	if (second[0] - first[0] < 2900)
		fail_msg("the second worker's request came %lld ms after the "
		    "429 with Retry-After: 3", second[0] - first[0]);
	tq_close(&t);
}

/*
 * A run whose shared gate cannot reach its queue goes on without it and
 * says so, without the URL's password: a job must not fail, nor a run
 * stop, for a full or absent database (rate_gate.c, cmd_run_setup).
 */
static void
test_gate_unreachable(void **state)
{
	struct tq	 t;
	struct h_run	 r;
	char		*env[16];
	char		*argv[] = { "warren", "run", "--json", "--workspace", NULL,
			    "QJOB-000- without its gate", NULL };
	int		 n;

	(void)state;
	tq_rules_n(1, 0);
	if (tq_open(&t, NULL) == 1)
		skip();
	for (n = 0; t.env[n] != NULL; n++)
		env[n] = t.env[n];
	env[n++] = "WARREN_LLM_RATE_SHARE=1";
	env[n++] = "WARREN_QUEUE_URL=postgresql://u:sekrit@127.0.0.1:1/none";
	env[n] = NULL;
	argv[4] = t.ws;
	assert_int_equal(h_warren(&r, argv, env, NULL, NULL), 0);
	assert_int_equal(r.status, 0);
	assert_non_null(strstr(r.out, "RESULT-000"));
	if (strstr(r.err, "shared LLM rate limits (llm_rpm, llm_tpm, "
	    "llm_rate_share) are off for this run") == NULL)
		fail_msg("no warning that the gate is off: %s", r.err);
	assert_null(strstr(r.err, "sekrit"));
	h_run_free(&r);
	tq_close(&t);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_teardown(test_jobs_succeed,
		    h_fakellm_teardown),
		cmocka_unit_test_teardown(test_schema, h_fakellm_teardown),
		cmocka_unit_test_teardown(test_schema_worker_root,
		    h_fakellm_teardown),
		cmocka_unit_test_teardown(test_fails_twice_then_succeeds,
		    h_fakellm_teardown),
		cmocka_unit_test_teardown(test_dead, h_fakellm_teardown),
		cmocka_unit_test_teardown(test_cancel_running,
		    h_fakellm_teardown),
		cmocka_unit_test_teardown(test_sigint_finishes,
		    h_fakellm_teardown),
		cmocka_unit_test_teardown(test_sigint_twice_stops,
		    h_fakellm_teardown),
		cmocka_unit_test_teardown(test_sigterm_stops,
		    h_fakellm_teardown),
		cmocka_unit_test_teardown(test_lease_lost, h_fakellm_teardown),
		cmocka_unit_test_teardown(test_config_error_final,
		    h_fakellm_teardown),
		cmocka_unit_test_teardown(test_job_timeout, h_fakellm_teardown),
		cmocka_unit_test_teardown(test_long_task, h_fakellm_teardown),
		cmocka_unit_test(test_bad_args),
		cmocka_unit_test_teardown(test_two_workers,
		    h_fakellm_teardown),
		cmocka_unit_test_teardown(test_apply_elsewhere,
		    h_fakellm_teardown),
		cmocka_unit_test_teardown(test_max_running,
		    h_fakellm_teardown),
		cmocka_unit_test_teardown(test_parallel_jobs_apart,
		    h_fakellm_teardown),
		cmocka_unit_test_teardown(test_follow, h_fakellm_teardown),
		cmocka_unit_test_teardown(test_terminal_progress,
		    h_fakellm_teardown),
		cmocka_unit_test_teardown(test_kill9, h_fakellm_teardown),
		cmocka_unit_test_teardown(test_kill9_runs_die,
		    h_fakellm_teardown),
		cmocka_unit_test_teardown(test_kill9_runs_die_locked,
		    h_fakellm_teardown),
		cmocka_unit_test_teardown(test_shared_rpm, h_fakellm_teardown),
		cmocka_unit_test_teardown(test_shared_429, h_fakellm_teardown),
		cmocka_unit_test_teardown(test_gate_unreachable,
		    h_fakellm_teardown),
	};

	/* TQ_FILTER=test_name (a glob) runs the tests it names. */
	if (getenv("TQ_FILTER") != NULL)
		cmocka_set_test_filter(getenv("TQ_FILTER"));
	return cmocka_run_group_tests(tests, NULL, NULL);
}

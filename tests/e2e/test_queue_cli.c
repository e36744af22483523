/*
 * warren queue add | ls | show | cancel | retry | purge | export | apply
 * through the real binary, on a real SQLite queue under the test's
 * $XDG_STATE_HOME. Results are made here through the queue library (claim,
 * complete, fail) the way `warren queue work` records them, so these tests
 * need no model.
 */
#include <sys/file.h>
#include <sys/stat.h>

#include <dirent.h>
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
#include <time.h>
#include <unistd.h>

#include <cmocka.h>
#include <jansson.h>

#include "cli/csv.h"
#include "common/path.h"
#include "queue/queue.h"
#include "queue/queue_testapi.h"
#include "store/store.h"
#include "store/store_testapi.h"
#include "tests/e2e/harness.h"
#include "workspace/cow.h"

#define T_DAY_MS	(24LL * 3600 * 1000)

struct t {
	char	*dir;
	char	 ws[PATH_MAX];		/* dir/ws, canonical */
	char	 state[PATH_MAX];	/* $XDG_STATE_HOME */
};

/* The lock test_apply_locked holds until t_locked_during lets it go. */
static int	t_lock_fd = -1;

static void
t_open(struct t *t)
{
	char	p[PATH_MAX + 16];

	memset(t, 0, sizeof(*t));
	t->dir = h_tmpdir();
	snprintf(p, sizeof(p), "%s/ws", t->dir);
	h_write(p, "a.txt", "one\n", 0);
	assert_non_null(realpath(p, t->ws));
	snprintf(t->state, sizeof(t->state), "%s/state", t->dir);
	assert_int_equal(setenv("XDG_STATE_HOME", t->state, 1), 0);
	unsetenv("WARREN_QUEUE_URL");
	unsetenv("WARREN_DB");
	assert_int_equal(chdir(t->dir), 0);
}

static void
t_close(struct t *t)
{
	assert_int_equal(chdir("/"), 0);
	h_rm_rf(t->dir);
	free(t->dir);
}

/* warren queue ARG... (NULL-terminated), stdin from the file in. */
static void
t_q(struct h_run *r, const char *in, ...)
{
	va_list	ap;

	h_stdin_path = in;
	va_start(ap, in);
	assert_int_equal(h_warren_v(r, NULL, "queue", ap), 0);
	va_end(ap);
}

/* A file in the test's directory; its path (static, two in turn). */
static const char *
t_file(const struct t *t, const char *name, const char *content)
{
	static char	path[2][PATH_MAX + 64];
	static int	i;

	i = !i;
	h_write(t->dir, name, content, 0);
	snprintf(path[i], sizeof(path[i]), "%s/%s", t->dir, name);
	return path[i];
}

static struct queue *
t_queue(void)
{
	struct queue	*q;
	char		 err[QUEUE_ERR_MAX];

	if ((q = queue_open(NULL, err, sizeof(err))) == NULL)
		fail_msg("queue_open: %s", err);
	return q;
}

static size_t
t_count(void)
{
	struct queue		*q = t_queue();
	struct queue_job	*v;
	size_t			 n;

	assert_int_equal(queue_list(q, -1, &v, &n), 0);
	queue_jobs_free(v, n);
	queue_close(q);
	return n;
}

/* Job id, read back (free with queue_job_free). */
static void
t_job(int64_t id, struct queue_job *j)
{
	struct queue		*q = t_queue();
	struct queue_attempt	*a;
	size_t			 n;

	assert_int_equal(queue_get(q, id, j, &a, &n), 0);
	queue_attempts_free(a, n);
	queue_close(q);
}

/* The command failed with exit 2, saying want, and added nothing. */
static void
t_refused(struct h_run *r, const char *want, size_t count)
{
	assert_int_equal(r->status, 2);
	if (strstr(r->err, want) == NULL)
		fail_msg("stderr lacks \"%s\": %s", want, r->err);
	assert_int_equal(t_count(), count);
	h_run_free(r);
}

/* nul.csv: a NUL byte in its second row. */
static const char *
t_nul_file(const struct t *t)
{
	static char	 path[PATH_MAX + 16];
	FILE		*f;

	snprintf(path, sizeof(path), "%s/nul.csv", t->dir);
	assert_non_null(f = fopen(path, "w"));
	assert_int_equal(fwrite("a\nx\0y\n", 1, 6, f), 6);
	assert_int_equal(fclose(f), 0);
	return path;
}

/* big.csv: a (sparse) file over the 64 MB a file of jobs may have. */
static const char *
t_big_file(const struct t *t)
{
	static char	 path[PATH_MAX + 16];
	FILE		*f;

	snprintf(path, sizeof(path), "%s/big.csv", t->dir);
	assert_non_null(f = fopen(path, "w"));
	assert_int_equal(ftruncate(fileno(f), 65LL << 20), 0);
	assert_int_equal(fclose(f), 0);
	return path;
}

/* One job with every option; its key makes the second add a no-op. */
static void
test_add_one(void **state)
{
	struct t		 t;
	struct h_run		 r;
	struct queue_job	 j;
	const char		*schema;
	char			 rel[PATH_MAX];

	(void)state;
	t_open(&t);
	schema = t_file(&t, "s.json", "{ \"type\": \"object\",\n"
	    "  \"required\": [\"ok\"] }\n");
	snprintf(rel, sizeof(rel), "ws/../ws/.");	/* cwd is t.dir */
	t_q(&r, NULL, "add", "--workspace", rel, "--profile", "explore",
	    "--schema", schema, "--key", "k1", "--priority", "5",
	    "--max-attempts", "2", "--timeout", "90s", "--budget", "1000",
	    "Find the \033[31mbug", NULL);
	assert_int_equal(r.status, 0);
	assert_string_equal(r.out, "added job 1\n");
	h_run_free(&r);
	t_job(1, &j);
	assert_string_equal(j.task, "Find the \033[31mbug");
	assert_string_equal(j.workspace, t.ws);
	assert_string_equal(j.profile, "explore");
	assert_string_equal(j.schema, "{\"type\":\"object\",\"required\":"
	    "[\"ok\"]}");
	assert_string_equal(j.key, "k1");
	assert_int_equal(j.priority, 5);
	assert_int_equal(j.max_attempts, 2);
	assert_int_equal(j.timeout_ms, 90000);
	assert_int_equal(j.budget, 1000);
	assert_int_equal(j.status, QUEUE_QUEUED);
	queue_job_free(&j);

	/* The same key: nothing added, said, exit 0. */
	t_q(&r, NULL, "add", "--key", "k1", "--json", "another task", NULL);
	assert_int_equal(r.status, 0);
	assert_string_equal(r.out, "{\n  \"id\": 1,\n  \"existed\": true\n}\n");
	h_run_free(&r);
	t_q(&r, NULL, "add", "--key", "k1", "another task", NULL);
	assert_int_equal(r.status, 0);
	assert_string_equal(r.out, "the key k1 is job 1's already: not added "
	    "again\n");
	h_run_free(&r);
	assert_int_equal(t_count(), 1);

	/* The task from stdin, its last newline dropped. */
	t_q(&r, t_file(&t, "task.txt", "two lines\nof task\n\n"), "add", "-",
	    NULL);
	assert_int_equal(r.status, 0);
	assert_string_equal(r.out, "added job 2\n");
	h_run_free(&r);
	t_job(2, &j);
	assert_string_equal(j.task, "two lines\nof task");
	assert_non_null(realpath(".", rel));	/* the default: the cwd */
	assert_string_equal(j.workspace, rel);
	assert_null(j.schema);
	assert_int_equal(j.max_attempts, QUEUE_DEFAULT_ATTEMPTS);
	queue_job_free(&j);

	/* Refusals, each naming what is wrong; nothing added. */
	t_q(&r, NULL, "add", "--workspace", "nowhere", "x", NULL);
	t_refused(&r, "workspace nowhere: No such file or directory", 2);
	t_q(&r, NULL, "add", "--workspace", schema, "x", NULL);
	t_refused(&r, "not a directory", 2);
	t_q(&r, NULL, "add", "--schema", t_file(&t, "bad.json", "{\"a\":"),
	    "x", NULL);
	t_refused(&r, "bad.json: line 1: ", 2);
	t_q(&r, NULL, "add", "--schema", t_file(&t, "arr.json", "[1]"), "x",
	    NULL);
	t_refused(&r, "arr.json: not a usable JSON Schema: not an object", 2);
	t_q(&r, NULL, "add", "--max-attempts", "0", "x", NULL);
	t_refused(&r, "--max-attempts 0 is too small", 2);
	t_q(&r, NULL, "add", "--timeout", "soon", "x", NULL);
	t_refused(&r, "--timeout soon: not a duration", 2);
	/* ls and stats take no operands (CMD_QUEUE_O_NOARGS). */
	t_q(&r, NULL, "ls", "extra", NULL);
	t_refused(&r, "warren queue ls: unexpected argument \"extra\"", 2);
	t_q(&r, NULL, "stats", "extra", NULL);
	t_refused(&r, "warren queue stats: unexpected argument \"extra\"", 2);
	/* show, cancel and retry take one JOB (cmd_queue_one_job). */
	t_q(&r, NULL, "show", NULL);
	t_refused(&r, "warren queue show: give one JOB (an id from", 2);
	t_q(&r, NULL, "cancel", "1", "2", NULL);
	t_refused(&r, "warren queue cancel: give one JOB (an id from", 2);
	t_q(&r, NULL, "retry", "x", NULL);
	t_refused(&r, "warren queue retry: job \"x\" is invalid", 2);
	t_q(&r, NULL, "add", "two", "words", NULL);
	t_refused(&r, "one TASK only: quote it", 2);
	t_q(&r, t_file(&t, "empty.txt", "\n"), "add", "-", NULL);
	t_refused(&r, "the task is empty", 2);
	t_q(&r, NULL, "add", "--jsonl", "x.jsonl", "--key", "k", NULL);
	t_refused(&r, "--key with --jsonl", 2);
	t_q(&r, NULL, "add", "--template", "{a}", "x", NULL);
	t_refused(&r, "--csv and --template go together", 2);
	t_q(&r, NULL, "add", NULL);
	t_refused(&r, "give one TASK (quoted), or --jsonl FILE, or --csv", 2);
	t_q(&r, NULL, "add", "--jsonl", "x.jsonl", "task", NULL);
	t_refused(&r, "give one TASK (quoted), or --jsonl FILE, or --csv", 2);
	t_q(&r, NULL, "add", "bad \xff byte", NULL);
	t_refused(&r, "the task is not UTF-8 text", 2);
	t_q(&r, NULL, "add", "--budget", "0", "x", NULL);
	t_refused(&r, "--budget 0 is too small", 2);
	t_q(&r, NULL, "add", "--help", NULL);
	assert_int_equal(r.status, 0);
	assert_non_null(strstr(r.out, "usage: warren queue add"));
	h_run_free(&r);
	t_q(&r, NULL, "frobnicate", NULL);
	t_refused(&r, "unknown subcommand 'frobnicate'", 2);
	t_close(&t);
}

/* A CSV with CRLF ends, quoted commas, quotes and newlines: a job a row,
 * the template and the key filled from it, the row kept as params. */
static void
test_add_csv(void **state)
{
	struct t		 t;
	struct h_run		 r;
	struct queue_job	 j;
	const char		*csv;

	(void)state;
	t_open(&t);
	csv = t_file(&t, "jobs.csv", "\xef\xbb\xbfpath,issue\r\n"
	    "src/a.c,leaks\r\n"
	    "\"src/b,c.c\",\"says \"\"hi\"\"\"\r\n"
	    "\r\n"
	    "src/d.c,\"two\nlines\"\n"
	    "src/e.c,\n");
	t_q(&r, NULL, "add", "--csv", csv, "--template",
	    "Review {path} for {issue} {{as is}}", "--key", "k-{path}",
	    "--workspace", t.ws, NULL);
	assert_int_equal(r.status, 0);
	assert_string_equal(r.out, "added 4 jobs, ids 1 to 4\n");
	h_run_free(&r);
	t_job(1, &j);
	assert_string_equal(j.task, "Review src/a.c for leaks {as is}");
	assert_string_equal(j.key, "k-src/a.c");
	assert_string_equal(j.params, "{\"path\":\"src/a.c\",\"issue\":"
	    "\"leaks\"}");
	assert_string_equal(j.workspace, t.ws);
	queue_job_free(&j);
	t_job(2, &j);
	assert_string_equal(j.task, "Review src/b,c.c for says \"hi\" {as is}");
	queue_job_free(&j);
	t_job(3, &j);
	assert_string_equal(j.task, "Review src/d.c for two\nlines {as is}");
	queue_job_free(&j);
	t_job(4, &j);
	assert_string_equal(j.task, "Review src/e.c for  {as is}");
	queue_job_free(&j);

	/* Again, from stdin: every key is there, nothing added. */
	t_q(&r, csv, "add", "--csv", "-", "--template", "{path}", "--key",
	    "k-{path}", NULL);
	assert_int_equal(r.status, 0);
	/* A count, not a line a row. */
	assert_string_equal(r.out, "nothing added: the key of each of the 4 "
	    "jobs is there already\n");
	h_run_free(&r);
	assert_int_equal(t_count(), 4);

	/* Bad files: the line named, nothing added (good rows first). */
	t_q(&r, t_file(&t, "rag.csv", "a,b\n1,2\n3,4,5\n"), "add", "--csv",
	    "-", "--template", "{a}", NULL);
	t_refused(&r, "stdin: line 3: 3 fields where the header (line 1) has 2;"
	    " nothing added", 4);
	t_q(&r, NULL, "add", "--csv", t_file(&t, "ph.csv", "a,b\n1,2\n"),
	    "--template", "{a} and {c}", NULL);
	t_refused(&r, "--template: {c} is not a column of the header on line 1",
	    4);
	t_q(&r, NULL, "add", "--csv", t_file(&t, "br.csv", "a\n1\n"),
	    "--template", "{a} }", NULL);
	t_refused(&r, "--template: a lone } (write {{ or }} for a brace)", 4);
	t_q(&r, NULL, "add", "--csv", t_file(&t, "open.csv",
	    "a,b\n1,2\n3,\"open\n\n"), "--template", "{a}", NULL);
	t_refused(&r, "open.csv: line 3: a quoted field opened here is never "
	    "closed", 4);
	t_q(&r, NULL, "add", "--csv", t_file(&t, "inq.csv", "a\nx\ny\"z\n"),
	    "--template", "{a}", NULL);
	t_refused(&r, "line 3: a quote inside an unquoted field", 4);
	t_q(&r, NULL, "add", "--csv", t_file(&t, "after.csv",
	    "a\n\"x\"y\n"), "--template", "{a}", NULL);
	t_refused(&r, "line 2: text after a closing quote", 4);
	t_q(&r, NULL, "add", "--csv", t_file(&t, "dup.csv", "a,a\n1,2\n"),
	    "--template", "{a}", NULL);
	t_refused(&r, "line 1: the header's column 2 is named twice", 4);
	t_q(&r, NULL, "add", "--csv", t_file(&t, "u8.csv", "a\nok\n\xff\n"),
	    "--template", "{a}", NULL);
	t_refused(&r, "line 3: column a is not UTF-8 text", 4);
	t_q(&r, NULL, "add", "--csv", t_file(&t, "e.csv", "a\nok\n\"\"\n"),
	    "--template", "{a}", NULL);
	t_refused(&r, "line 3: the task comes out empty", 4);
	t_q(&r, NULL, "add", "--csv", t_file(&t, "k.csv", "a\n1\n"),
	    "--template", "{a}", "--key", "same", NULL);
	t_refused(&r, "--key with --csv is a template", 4);
	t_q(&r, NULL, "add", "--csv", t_file(&t, "h.csv", "a\n"),
	    "--template", "{a}", NULL);
	t_refused(&r, "no rows after the header", 4);
	t_q(&r, NULL, "add", "--csv", "missing.csv", "--template", "{a}",
	    NULL);
	t_refused(&r, "missing.csv: No such file or directory", 4);
	t_q(&r, NULL, "add", "--csv", t_file(&t, "h8.csv", "a,\xff\n1,2\n"),
	    "--template", "{a}", NULL);
	t_refused(&r, "line 1: the header's column 2 is not UTF-8 text", 4);
	t_q(&r, NULL, "add", "--csv", t_file(&t, "h0.csv", "a,\n1,2\n"),
	    "--template", "{a}", NULL);
	t_refused(&r, "line 1: the header's column 2 is unnamed", 4);
	t_q(&r, NULL, "add", "--csv", t_file(&t, "void.csv", "\n\n"),
	    "--template", "{a}", NULL);
	t_refused(&r, "void.csv: it is empty", 4);
	t_q(&r, NULL, "add", "--csv", t_nul_file(&t), "--template", "{a}",
	    NULL);
	t_refused(&r, "nul.csv holds a NUL byte", 4);
	t_q(&r, NULL, "add", "--csv", t_big_file(&t), "--template", "{a}",
	    NULL);
	t_refused(&r, "big.csv is over 64 MB", 4);
	/* Some new, some there: the new added, the rest counted. */
	t_q(&r, t_file(&t, "more.csv", "path\nsrc/a.c\nsrc/new.c\nsrc/d.c\n"),
	    "add", "--csv", "-", "--template", "{path}", "--key", "k-{path}",
	    NULL);
	assert_int_equal(r.status, 0);
	assert_string_equal(r.out, "added job 5\n2 of the 3 jobs not added "
	    "again: their keys are queued already (--json lists each)\n");
	h_run_free(&r);
	assert_int_equal(t_count(), 5);
	t_close(&t);
}

/* JSONL: each field taken, a blank line skipped; a bad line adds
 * nothing and is named. */
static void
test_add_jsonl(void **state)
{
	struct t		 t;
	struct h_run		 r;
	struct queue_job	 j;
	const char		*f;
	char			 ok[4096];

	(void)state;
	t_open(&t);
	t_file(&t, "s.json", "{\"type\": \"object\"}");
	snprintf(ok, sizeof(ok), "{\"task\": \"one\", \"profile\": \"review\", "
	    "\"workspace\": \"ws\", \"params\": {\"n\": 1}, \"schema\": "
	    "{\"type\": \"string\"}, \"key\": \"j1\", \"priority\": -3, "
	    "\"max_attempts\": 5}\n"
	    "\n"
	    "{\"task\": \"two\", \"schema\": \"s.json\"}\n");
	f = t_file(&t, "jobs.jsonl", ok);
	t_q(&r, f, "add", "--jsonl", "-", "--json", NULL);
	assert_int_equal(r.status, 0);
	assert_non_null(strstr(r.out, "\"added\": 2"));
	assert_non_null(strstr(r.out, "\"line\": 3"));
	h_run_free(&r);
	t_job(1, &j);
	assert_string_equal(j.task, "one");
	assert_string_equal(j.profile, "review");
	assert_string_equal(j.workspace, t.ws);
	assert_string_equal(j.params, "{\"n\":1}");
	assert_string_equal(j.schema, "{\"type\":\"string\"}");
	assert_string_equal(j.key, "j1");
	assert_int_equal(j.priority, -3);
	assert_int_equal(j.max_attempts, 5);
	queue_job_free(&j);
	t_job(2, &j);
	assert_string_equal(j.schema, "{\"type\":\"object\"}");
	queue_job_free(&j);

	t_q(&r, NULL, "add", "--jsonl", t_file(&t, "b1.jsonl",
	    "{\"task\": \"a\"}\n{\"task\": \"b\"\n"), NULL);
	t_refused(&r, "b1.jsonl: line 2: not valid JSON: ", 2);
	t_q(&r, NULL, "add", "--jsonl", t_file(&t, "b2.jsonl",
	    "{\"task\": \"a\"}\n{\"task\": \"b\", \"colour\": 1}\n"), NULL);
	t_refused(&r, "line 2: unknown field \"colour\"", 2);
	t_q(&r, NULL, "add", "--jsonl", t_file(&t, "b3.jsonl",
	    "{\"task\": \"a\", \"max_attempts\": 0}\n"), NULL);
	t_refused(&r, "line 1: \"max_attempts\" must be an integer from 1", 2);
	t_q(&r, NULL, "add", "--jsonl", t_file(&t, "b4.jsonl",
	    "{\"task\": \"a\"}\n{\"key\": \"b\"}\n"), NULL);
	t_refused(&r, "line 2: no \"task\"", 2);
	t_q(&r, NULL, "add", "--jsonl", t_file(&t, "b5.jsonl",
	    "{\"task\": \"a\"}\n{\"task\": \"b\", \"workspace\": \"gone\"}\n"),
	    NULL);
	t_refused(&r, "line 2: workspace gone: No such file", 2);
	t_q(&r, NULL, "add", "--jsonl", t_file(&t, "b6.jsonl",
	    "{\"task\": \"a\", \"schema\": \"nope.json\"}\n"), NULL);
	t_refused(&r, "line 1: schema nope.json", 2);
	t_q(&r, NULL, "add", "--jsonl", t_file(&t, "b7.jsonl",
	    "{\"task\": \"a\", \"params\": [1]}\n"), NULL);
	t_refused(&r, "line 1: \"params\" must be a JSON object", 2);
	t_q(&r, NULL, "add", "--jsonl", t_file(&t, "b8.jsonl", "[1]\n"),
	    NULL);
	t_refused(&r, "line 1: not a JSON object", 2);
	t_q(&r, NULL, "add", "--jsonl", t_file(&t, "b9.jsonl", "\n\n"),
	    NULL);
	t_refused(&r, "no jobs in it", 2);
	t_q(&r, NULL, "add", "--jsonl", t_file(&t, "b10.jsonl",
	    "{\"task\": \"\"}\n"), NULL);
	t_refused(&r, "line 1: \"task\" must be a string, not empty", 2);
	t_q(&r, NULL, "add", "--jsonl", t_file(&t, "b11.jsonl",
	    "{\"task\": \"a\", \"profile\": 5}\n"), NULL);
	t_refused(&r, "line 1: \"profile\" must be a string", 2);
	t_q(&r, NULL, "add", "--jsonl", t_file(&t, "b12.jsonl",
	    "{\"task\": \"a\\u0000b\"}\n"), NULL);
	t_refused(&r, "line 1: not valid JSON: \\u0000 is not allowed", 2);
	t_q(&r, NULL, "add", "--jsonl", t_file(&t, "b13.jsonl",
	    "{\"task\": \"a\", \"priority\": 2000000}\n"), NULL);
	t_refused(&r, "line 1: \"priority\" must be an integer from -1000000 "
	    "to 1000000", 2);
	t_q(&r, NULL, "add", "--jsonl", t_file(&t, "b14.jsonl",
	    "{\"task\": \"a\", \"schema\": 5}\n"), NULL);
	t_refused(&r, "line 1: \"schema\" must be a JSON object or a file", 2);
	t_q(&r, NULL, "add", "--jsonl", t_file(&t, "b15.jsonl",
	    "{\"task\": \"a\", \"key\": \"\"}\n"), NULL);
	t_refused(&r, "line 1: \"key\" must be a string, not empty", 2);
	t_q(&r, NULL, "add", "--jsonl", t_file(&t, "b16.jsonl",
	    "{\"task\": \"a\"}\n{\"task\": \"b\", \"profile\": \"revue\"}\n"),
	    NULL);
	t_refused(&r, "line 2: unknown profile \"revue\" for workspace", 2);
	t_close(&t);
}

/*
 * A schema the run could not use (jschema_usable), at the root or nested,
 * is refused by each form of add (one job's --schema, a JSONL line's
 * schema inline or in a file, --csv's --schema) with the input, the line
 * and the path of the keyword at fault: exit 2, nothing added.
 */
static void
test_add_unusable(void **state)
{
	static const char *const bad[][3] = {
		/* keyword: value, the reason */
		{ "required", "\"n\"", "must be a list of property names, "
		    "not string" },
		{ "properties", "[1,2]", "must be an object of a schema per "
		    "property, not array" },
		{ "type", "5", "must be a type's name or a list of them, not "
		    "integer" },
		{ "type", "\"nonsense\"", "\"nonsense\" is not a type (give "
		    "object, array, string, number, integer, boolean or null)" },
		{ "items", "3", "must be a schema (an object or true or false), "
		    "not integer" },
		{ "enum", "{}", "must be a list of the values allowed, not "
		    "object" },
		{ "additionalProperties", "1", "must be a schema (an object or "
		    "true or false), not integer" },
	};
	struct t	 t;
	struct h_run	 r;
	const char	*f;
	char		 sch[256], text[1024], want[512];
	size_t		 i;

	(void)state;
	t_open(&t);
	t_q(&r, NULL, "add", "a job that can run", NULL);
	assert_int_equal(r.status, 0);
	h_run_free(&r);
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		/* One job: at the root. */
		snprintf(sch, sizeof(sch), "{\"%s\": %s}", bad[i][0],
		    bad[i][1]);
		f = t_file(&t, "bad.json", sch);
		snprintf(want, sizeof(want), "schema %s: not a usable JSON "
		    "Schema: $.%s: %s", f, bad[i][0], bad[i][2]);
		t_q(&r, NULL, "add", "--schema", f, "x", NULL);
		t_refused(&r, want, 1);
		/* A JSONL line's, inline: under a property. */
		snprintf(text, sizeof(text), "{\"task\": \"a\"}\n{\"task\": "
		    "\"b\", \"schema\": {\"type\": \"object\", \"properties\": "
		    "{\"x\": {\"%s\": %s}}}}\n", bad[i][0], bad[i][1]);
		f = t_file(&t, "jobs.jsonl", text);
		snprintf(want, sizeof(want), "%s: line 2: \"schema\": not a "
		    "usable JSON Schema: $.properties.x.%s: %s; nothing added",
		    f, bad[i][0], bad[i][2]);
		t_q(&r, NULL, "add", "--jsonl", f, NULL);
		t_refused(&r, want, 1);
		/* A JSONL line's, in a file: under items. */
		snprintf(sch, sizeof(sch), "{\"items\": {\"%s\": %s}}",
		    bad[i][0], bad[i][1]);
		t_file(&t, "deep.json", sch);
		f = t_file(&t, "jobs.jsonl", "{\"task\": \"a\"}\n\n"
		    "{\"task\": \"b\", \"schema\": \"deep.json\"}\n");
		snprintf(want, sizeof(want), "%s: line 3: schema deep.json: not "
		    "a usable JSON Schema: $.items.%s: %s; nothing added", f,
		    bad[i][0], bad[i][2]);
		t_q(&r, NULL, "add", "--jsonl", f, NULL);
		t_refused(&r, want, 1);
		/* --csv's --schema, under additionalProperties. */
		snprintf(sch, sizeof(sch), "{\"additionalProperties\": "
		    "{\"%s\": %s}}", bad[i][0], bad[i][1]);
		f = t_file(&t, "add.json", sch);
		snprintf(want, sizeof(want), "schema %s: not a usable JSON "
		    "Schema: $.additionalProperties.%s: %s", f, bad[i][0],
		    bad[i][2]);
		t_q(&r, NULL, "add", "--csv", t_file(&t, "jobs.csv",
		    "a\none\ntwo\n"), "--template", "do {a}", "--schema", f,
		    NULL);
		t_refused(&r, want, 1);
	}
	/* queue ls: the one job that can run, no other. */
	t_q(&r, NULL, "ls", NULL);
	assert_int_equal(r.status, 0);
	assert_non_null(strstr(r.out, "a job that can run"));
	assert_int_equal(h_count_lines(r.out, "queued", NULL), 1);
	h_run_free(&r);
	t_close(&t);
}

/*
 * queue add as a user's shell limits it (sh -c 'ulimit -f N; exec warren
 * queue add ...', SIGXFSZ at its default), making the queue in a fresh
 * state directory: at 16 and 48 KiB it cannot, and says so with exit 6
 * naming the limit, not death by SIGXFSZ (exit 153, nothing said).
 */
static void
test_add_ulimit_f(void **state)
{
	static const long long	 kib[] = { 16, 48 };
	struct t		 t;
	struct h_run		 r;
	char			 st[PATH_MAX + 32], *env[2];
	char			*argv[] = { "warren", "queue", "add", "a task",
				    NULL };
	size_t			 i;

	(void)state;
	t_open(&t);
	for (i = 0; i < sizeof(kib) / sizeof(kib[0]); i++) {
		snprintf(st, sizeof(st), "XDG_STATE_HOME=%s/state-%lld",
		    t.dir, kib[i]);
		env[0] = st;
		env[1] = NULL;
		h_ulimit_f = kib[i] * 2;	/* POSIX sh: 512-byte blocks */
		assert_int_equal(h_warren(&r, argv, env, NULL, NULL), 0);
		if (r.status != 6 || strstr(r.err, "a file size limit of ") ==
		    NULL)
			fail_msg("ulimit -f %lld KiB: exit %d, stderr:\n%s",
			    kib[i], r.status, r.err);
		h_run_free(&r);
	}
	t_close(&t);
}

static char	*t_text(size_t);

/*
 * queue work under a file size limit its queue's writes cannot fit in (a
 * claim rewrites the job's row, here a 200 KB task, into the log: past
 * 64 KiB): the claim fails with EFBIG, which no retry cures, so the
 * worker says so, naming the limit, and ends with exit 6 (before, it said
 * "committing: disk I/O error" every second, forever).
 */
static void
test_work_ulimit_f(void **state)
{
	struct t	 t;
	struct h_run	 r;
	char		 st[PATH_MAX + 32], *env[2];
	char		 task[PATH_MAX + 16], *text;
	char		*add[] = { "warren", "queue", "add", "-", NULL };
	char		*work[] = { "warren", "queue", "work", "--json", NULL };

	(void)state;
	t_open(&t);
	snprintf(st, sizeof(st), "XDG_STATE_HOME=%s/state-work", t.dir);
	env[0] = st;
	env[1] = NULL;
	text = t_text(200 * 1000);
	h_write(t.dir, "task.txt", text, 0644);
	free(text);
	snprintf(task, sizeof(task), "%s/task.txt", t.dir);
	h_stdin_path = task;
	assert_int_equal(h_warren(&r, add, env, NULL, NULL), 0);
	assert_int_equal(r.status, 0);
	h_run_free(&r);
	h_ulimit_f = 64 * 2;	/* 64 KiB in POSIX sh's 512-byte blocks */
	h_hang_guard = 20;
	assert_int_equal(h_warren(&r, work, env, NULL, NULL), 0);
	if (r.hung || r.status != 6 || strstr(r.err, "file size limit of "
	    "65536 bytes") == NULL)
		fail_msg("queue work under ulimit -f 64: %s exit %d, "
		    "stderr:\n%.2000s", r.hung ? "hung," : "", r.status, r.err);
	h_run_free(&r);
	t_close(&t);
}

/* n bytes of 'x' (free it). */
static char *
t_text(size_t n)
{
	char	*s;

	assert_non_null(s = malloc(n + 1));
	memset(s, 'x', n);
	s[n] = '\0';
	return s;
}

/*
 * A task longer than the CMD_RUN_TASK_MAX (1 MiB) a run reads on stdin,
 * where queue work sends it, is refused with its line, after a CSV row
 * fills the template: exit 2, nothing added. One of 1 MiB is added.
 */
static void
test_add_too_long(void **state)
{
	struct t		 t;
	struct h_run		 r;
	struct queue_job	 j;
	char			*big, *text;
	size_t			 n;

	(void)state;
	t_open(&t);
	big = t_text(1024 * 1024);
	t_q(&r, t_file(&t, "task.txt", big), "add", "-", NULL);
	assert_int_equal(r.status, 0);
	assert_string_equal(r.out, "added job 1\n");
	h_run_free(&r);
	t_job(1, &j);
	assert_int_equal(strlen(j.task), 1024 * 1024);
	queue_job_free(&j);
	/* One byte more. */
	free(big);
	big = t_text(1024 * 1024 + 1);
	t_q(&r, t_file(&t, "task.txt", big), "add", "-", NULL);
	t_refused(&r, "the task is 1048577 bytes, over the 1048576 a run "
	    "takes", 1);
	/* A JSONL line's. */
	n = strlen(big) + 64;
	assert_non_null(text = malloc(n));
	snprintf(text, n, "{\"task\": \"a\"}\n{\"task\": \"%s\"}\n", big);
	t_q(&r, NULL, "add", "--jsonl", t_file(&t, "jobs.jsonl", text), NULL);
	t_refused(&r, "jobs.jsonl: line 2: the task is 1048577 bytes, over "
	    "the 1048576 a run takes", 1);
	free(text);
	/* A CSV row of 600 KB, the template using it twice: 1.2 MB. */
	big[600 * 1024] = '\0';
	n = strlen(big) + 64;
	assert_non_null(text = malloc(n));
	snprintf(text, n, "a\nshort\n%s\n", big);
	t_q(&r, NULL, "add", "--csv", t_file(&t, "jobs.csv", text),
	    "--template", "{a} {a}", NULL);
	t_refused(&r, "jobs.csv: line 3: the task is 1228801 bytes, over the "
	    "1048576 a run takes", 1);
	free(text);
	free(big);
	t_close(&t);
}

/*
 * A job's profile is checked where it will run (cmd_queue_profile.c):
 * a built-in or one of the user's agents is taken; a name neither has is
 * refused with nothing added, and so is a project's agent the user has
 * not trusted.
 */
static void
test_add_profile(void **state)
{
	struct t	 t;
	struct h_run	 r;
	char		 cf[PATH_MAX], *was = getenv("XDG_CONFIG_HOME");

	(void)state;
	assert_non_null(was = strdup(was != NULL ? was : ""));
	t_open(&t);
	snprintf(cf, sizeof(cf), "%s/config", t.dir);
	assert_int_equal(setenv("XDG_CONFIG_HOME", cf, 1), 0);
	h_write(t.dir, "config/warren/agents/mine.md", "---\nname: mine\n"
	    "tools: Grep\n---\nMine.\n", 0);
	t_q(&r, NULL, "add", "--workspace", t.ws, "--profile", "mine", "a",
	    NULL);
	assert_int_equal(r.status, 0);
	h_run_free(&r);
	t_q(&r, NULL, "add", "--workspace", t.ws, "--profile", "general", "b",
	    NULL);
	assert_int_equal(r.status, 0);
	h_run_free(&r);
	t_q(&r, NULL, "add", "--workspace", t.ws, "--profile", "nosuch", "c",
	    NULL);
	t_refused(&r, "unknown profile \"nosuch\" for workspace", 2);
	h_write(t.ws, ".warren/agents/theirs.md", "---\nname: theirs\n"
	    "tools: Grep\n---\nTheirs.\n", 0);
	t_q(&r, NULL, "add", "--workspace", t.ws, "--profile", "theirs", "d",
	    NULL);
	t_refused(&r, "unknown profile \"theirs\"", 2);
	assert_int_equal(setenv("XDG_CONFIG_HOME", was, 1), 0);
	free(was);
	t_close(&t);
}

/* Claim the next job and complete it with res (or fail it for good). */
static int64_t
t_finish(struct queue *q, const struct queue_result *res, int ok)
{
	struct queue_job	j;
	int64_t			id;

	assert_int_equal(queue_claim(q, "w1", 60000, 0, &j), 1);
	id = j.id;
	if (ok)
		assert_int_equal(queue_complete(q, j.id, j.attempts, "w1", res),
		    0);
	else
		assert_int_equal(queue_fail(q, j.id, j.attempts, "w1", res,
		    QUEUE_FAIL_FINAL), 0);
	queue_job_free(&j);
	return id;
}

#define T_ANSWER	"found \033]0;x\a it, \"quoted\"\nsecond line"

/* Three jobs: done (a hostile answer, an output), dead, queued. */
static void
t_three(struct t *t)
{
	struct queue_result	 res;
	struct queue		*q;
	struct h_run		 r;

	t_q(&r, NULL, "add", "--key", "a", "first, \"task\"", NULL);
	h_run_free(&r);
	t_q(&r, NULL, "add", "--max-attempts", "1", "second task", NULL);
	h_run_free(&r);
	t_q(&r, NULL, "add", "third \033[2J task", NULL);
	assert_int_equal(r.status, 0);
	h_run_free(&r);
	(void)t;
	q = t_queue();
	memset(&res, 0, sizeof(res));
	res.answer = T_ANSWER;
	res.output = "{\"ok\": true, \"n\": [1, 2]}";
	res.run_id = 77;
	res.tokens_in = 1200;
	res.tokens_out = 34;
	res.wall_ms = 5600;
	res.diff_stat = "say \"x\"\nnext";	/* a quote, a newline, no comma */
	res.changes = "WRNCHG1\n\0\0\0\0";
	res.changes_len = 12;
	res.run_where = "m1:/s/warren.db";
	assert_int_equal(t_finish(q, &res, 1), 1);
	assert_int_equal(queue_applied(q, 1, "m2:/ws"), 0);
	memset(&res, 0, sizeof(res));
	res.error = "the model gave up";
	assert_int_equal(t_finish(q, &res, 0), 2);
	queue_close(q);
}

static void
test_ls_show(void **state)
{
	struct t	 t;
	struct h_run	 r;
	json_t		*j, *a;

	(void)state;
	t_open(&t);
	t_three(&t);
	t_q(&r, NULL, "ls", NULL);
	assert_int_equal(r.status, 0);
	assert_non_null(strstr(r.out, "ID     STATUS     ATTEMPTS PRIORITY  "
	    "TASK\n"));
	assert_non_null(strstr(r.out, "\n1      done       1/3             0  "
	    "first, \"task\"\n"));
	assert_non_null(strstr(r.out, "\n2      dead       1/1"));
	assert_non_null(strstr(r.out, "third \\x1b[2J task"));
	assert_null(strchr(r.out, '\033'));
	h_run_free(&r);
	t_q(&r, NULL, "ls", "--status", "dead", "--json", NULL);
	assert_int_equal(r.status, 0);
	assert_non_null(j = json_loads(r.out, 0, NULL));
	assert_int_equal(json_array_size(j), 1);
	assert_string_equal(json_string_value(json_object_get(
	    json_array_get(j, 0), "error")), "the model gave up");
	json_decref(j);
	h_run_free(&r);
	t_q(&r, NULL, "ls", "--status", "sleeping", NULL);
	t_refused(&r, "--status sleeping: give queued, running", 3);

	t_q(&r, NULL, "show", "1", NULL);
	assert_int_equal(r.status, 0);
	assert_non_null(strstr(r.out, "job 1: done, 1 of 3 attempts, priority "
	    "0\nkey: a\n"));
	assert_non_null(strstr(r.out, "run: 77 (`warren show 77`), tokens "
	    "1200 in / 34 out, 5.6s\n"));
	assert_non_null(strstr(r.out, "answer:\n    found \\x1b]0;x\\x07 it, "
	    "\"quoted\"\n    second line\n"));
	assert_non_null(strstr(r.out, "attempts:\n  1. "));
	assert_non_null(strstr(r.out, "ran on: m1:/s/warren.db\nchanges in the "
	    "queue: 12B (`warren queue diff 1`, `warren queue apply 1` on any "
	    "machine)\napplied: "));
	assert_non_null(strstr(r.out, ", on m2:/ws\n"));
	assert_null(strchr(r.out, '\033'));
	h_run_free(&r);
	t_q(&r, NULL, "show", "--json", "2", NULL);
	assert_int_equal(r.status, 0);
	assert_non_null(j = json_loads(r.out, 0, NULL));
	assert_string_equal(json_string_value(json_object_get(j, "status")),
	    "dead");
	a = json_object_get(j, "attempt_list");
	assert_int_equal(json_array_size(a), 1);
	assert_string_equal(json_string_value(json_object_get(
	    json_array_get(a, 0), "error")), "the model gave up");
	json_decref(j);
	h_run_free(&r);
	t_q(&r, NULL, "show", "9", NULL);
	t_refused(&r, "no job 9", 3);
	t_q(&r, NULL, "show", "x1", NULL);
	t_refused(&r, "job \"x1\" is invalid", 3);
	t_q(&r, NULL, "show", "--status", "dead", "1", NULL);
	t_refused(&r, "--status is not an option of queue show", 3);
	t_close(&t);
}

/* queue stats, as text and JSON, and queue ls --limit: the newest. */
static void
test_stats_limit(void **state)
{
	struct t	 t;
	struct h_run	 r;
	json_t		*j;

	(void)state;
	t_open(&t);
	t_q(&r, NULL, "stats", NULL);
	t_refused(&r, "no queue at ", 0);
	t_three(&t);
	t_q(&r, NULL, "stats", NULL);
	assert_int_equal(r.status, 0);
	assert_non_null(strstr(r.out, "jobs: 3 (queued 1, running 0, "
	    "retrying 0, done 1, dead 1, cancelled 0)\nattempts: 2, failed "
	    "1\nrate: "));
	assert_non_null(strstr(r.out, " jobs/min (1 done in the last "));
	assert_non_null(strstr(r.out, "\noldest queued: job 3, waiting "));
	h_run_free(&r);
	t_q(&r, NULL, "stats", "--json", NULL);
	assert_int_equal(r.status, 0);
	assert_non_null(j = json_loads(r.out, 0, NULL));
	assert_int_equal(json_integer_value(json_object_get(j, "jobs")), 3);
	assert_int_equal(json_integer_value(json_object_get(j, "queued")), 1);
	assert_int_equal(json_integer_value(json_object_get(j, "dead")), 1);
	assert_int_equal(json_integer_value(json_object_get(j, "attempts")),
	    2);
	assert_int_equal(json_integer_value(json_object_get(j,
	    "attempts_failed")), 1);
	assert_int_equal(json_integer_value(json_object_get(j,
	    "done_recent")), 1);
	assert_true(json_real_value(json_object_get(j, "jobs_per_min")) > 0);
	assert_int_equal(json_integer_value(json_object_get(json_object_get(j,
	    "oldest_queued"), "job")), 3);
	json_decref(j);
	h_run_free(&r);
	t_q(&r, NULL, "stats", "--status", "done", NULL);
	t_refused(&r, "--status is not an option of queue stats", 3);

	t_q(&r, NULL, "ls", "--limit", "2", NULL);
	assert_int_equal(r.status, 0);
	assert_null(strstr(r.out, "\n1      done"));
	assert_non_null(strstr(r.out, "\n2      dead       1/1"));
	assert_non_null(strstr(r.out, "third \\x1b[2J task\n1 older job not "
	    "shown (--limit 2)\n"));
	h_run_free(&r);
	t_q(&r, NULL, "ls", "--status", "done", "--limit", "1", "--json", NULL);
	assert_int_equal(r.status, 0);
	assert_non_null(j = json_loads(r.out, 0, NULL));
	assert_int_equal(json_array_size(j), 1);
	assert_int_equal(json_integer_value(json_object_get(json_array_get(j,
	    0), "id")), 1);
	json_decref(j);
	h_run_free(&r);
	t_q(&r, NULL, "ls", "--limit", "0", NULL);
	t_refused(&r, "--limit 0: a number of jobs from 1 to 1000000", 3);
	t_q(&r, NULL, "ls", "--limit", "x", NULL);
	t_refused(&r, "--limit x: a number", 3);
	t_close(&t);
}

/* export, then parse what came out: every result field is there. */
static void
test_export(void **state)
{
	struct t		 t;
	struct h_run		 r;
	struct csv		 c;
	struct csv_record	 hdr, rec;
	json_t			*j;
	char			 err[256], *line, *next;
	int			 n = 0;

	(void)state;
	t_open(&t);
	t_three(&t);
	t_q(&r, NULL, "export", "--format", "jsonl", NULL);
	assert_int_equal(r.status, 0);
	for (line = r.out; (next = strchr(line, '\n')) != NULL;
	    line = next + 1, n++) {
		*next = '\0';
		assert_non_null(j = json_loads(line, 0, NULL));
		assert_int_equal(json_integer_value(json_object_get(j, "id")),
		    n + 1);
		if (n == 0) {
			assert_string_equal(json_string_value(json_object_get(
			    j, "answer")), T_ANSWER);
			assert_true(json_is_true(json_object_get(json_object_get(
			    j, "output"), "ok")));
			assert_int_equal(json_integer_value(json_object_get(j,
			    "tokens_in")), 1200);
			assert_int_equal(json_integer_value(json_object_get(j,
			    "wall_ms")), 5600);
			assert_int_equal(json_integer_value(json_object_get(j,
			    "run_id")), 77);
			assert_string_equal(json_string_value(json_object_get(
			    j, "key")), "a");
			assert_int_equal(json_integer_value(json_object_get(j,
			    "changes_bytes")), 12);
			assert_string_equal(json_string_value(json_object_get(
			    j, "run_where")), "m1:/s/warren.db");
			assert_string_equal(json_string_value(json_object_get(
			    j, "applied_by")), "m2:/ws");
		}
		if (n == 1)
			assert_string_equal(json_string_value(json_object_get(
			    j, "error")), "the model gave up");
		json_decref(j);
	}
	assert_int_equal(n, 3);
	assert_null(strchr(r.out, '\033'));
	h_run_free(&r);

	t_q(&r, NULL, "export", "--format", "csv", "--status", "done", NULL);
	assert_int_equal(r.status, 0);
	csv_init(&c, r.out, strlen(r.out));
	assert_int_equal(csv_next(&c, &hdr, err, sizeof(err)), 1);
	assert_int_equal(hdr.n, 18);
	assert_string_equal(hdr.v[3], "attempts");
	assert_string_equal(hdr.v[5], "answer");
	assert_string_equal(hdr.v[6], "output.ok");
	assert_string_equal(hdr.v[7], "output.n");
	assert_string_equal(hdr.v[13], "diff_stat");
	assert_string_equal(hdr.v[14], "changes_bytes");
	assert_string_equal(hdr.v[17], "applied_by");
	assert_int_equal(csv_next(&c, &rec, err, sizeof(err)), 1);
	assert_int_equal(rec.n, 18);
	assert_string_equal(rec.v[14], "12");
	assert_string_equal(rec.v[15], "m1:/s/warren.db");
	assert_true(strtoll(rec.v[16], NULL, 10) > 0);
	assert_string_equal(rec.v[17], "m2:/ws");
	assert_string_equal(rec.v[0], "1");
	assert_string_equal(rec.v[1], "a");
	assert_string_equal(rec.v[2], "done");
	assert_string_equal(rec.v[3], "1");
	assert_string_equal(rec.v[4], "first, \"task\"");
	assert_string_equal(rec.v[5], "found \\x1b]0;x\\x07 it, \"quoted\"\n"
	    "second line");
	assert_string_equal(rec.v[6], "true");
	assert_string_equal(rec.v[7], "[1,2]");
	assert_string_equal(rec.v[8], "");
	assert_string_equal(rec.v[9], "1200");
	assert_string_equal(rec.v[12], "77");
	/* The diff stat on one line. */
	assert_string_equal(rec.v[13], "say \"x\"; next");
	csv_record_free(&rec);
	csv_record_free(&hdr);
	assert_int_equal(csv_next(&c, &rec, err, sizeof(err)), 0);
	h_run_free(&r);
	t_q(&r, NULL, "export", "--format", "xml", NULL);
	t_refused(&r, "give --format jsonl or --format csv", 3);
	t_close(&t);
}

#define T_SCHEMA	"{\"type\":\"object\",\"properties\":{\"why\":{\"type\":" \
			"\"string\"},\"verdict\":{\"type\":\"string\"},\"n\":" \
			"{\"type\":\"integer\"}}}"
#define T_STAT		" a.c | 2 +-\n b.c | 1 +\n 2 files changed, 2 " \
			"insertions(+), 1 deletion(-)\n"

/* Three jobs done, their params, answers and outputs such as a hostile
 * model writes: formulas, a tab, a carriage return. */
static void
t_cells(struct t *t)
{
	static const char *const answers[] = {
		"=HYPERLINK(\"http://evil.example/\",\"click\")",
		"\rCR then text", "-1+1",
	};
	static const char *const outputs[] = {
		"{\"verdict\":\"+cmd|' /C calc'!A0\",\"n\":-3,\"extra\":"
		    "\"-1+1\",\"why\":\"\\tTAB\"}",
		"{\"why\":\"@SUM(A1:A2)\",\"verdict\":\"ok\"}",
		"[\"not\",\"an object\"]",
	};
	struct queue_result	 res;
	struct queue		*q;
	struct h_run		 r;
	const char		*f;
	int			 i;

	f = t_file(t, "jobs.jsonl", "{\"task\":\"one\",\"params\":{\"path\":"
	    "\"a.c\",\"status\":\"=1+1\",\"n\":5,\"deep\":{\"x\":[1]}},"
	    "\"schema\":" T_SCHEMA "}\n"
	    "{\"task\":\"two\",\"params\":{\"path\":\"b.c\",\"lang\":"
	    "\"@SUM(A1)\"},\"schema\":" T_SCHEMA "}\n"
	    "{\"task\":\"three\"}\n");
	t_q(&r, NULL, "add", "--jsonl", f, NULL);
	assert_int_equal(r.status, 0);
	h_run_free(&r);
	q = t_queue();
	for (i = 0; i < 3; i++) {
		memset(&res, 0, sizeof(res));
		res.answer = answers[i];
		res.output = outputs[i];
		res.diff_stat = i == 0 ? T_STAT : NULL;
		assert_int_equal(t_finish(q, &res, 1), i + 1);
	}
	queue_close(q);
}

/*
 * CSV: the params and the output's fields each in a column of their own
 * (prefixed, so that a param named status is not the job's), the diff
 * stat on one line, and every cell a spreadsheet would take for a
 * formula neutralised: quoted, a ' before it. A JSON number stays one.
 */
static void
test_export_cells(void **state)
{
	static const char *const cols[] = {
		"id", "key", "status", "attempts", "task", "param.path",
		"param.status", "param.n", "param.deep", "param.lang", "answer",
		"output.why", "output.verdict", "output.n", "output.extra",
		"output", "error", "tokens_in", "tokens_out", "wall_ms",
		"run_id", "diff_stat", "changes_bytes", "run_where",
		"applied_ms", "applied_by",
	};
	struct t		 t;
	struct h_run		 r;
	struct csv		 c;
	struct csv_record	 hdr, rec[3], end;
	char			 err[256];
	size_t			 i, k;

	(void)state;
	t_open(&t);
	t_cells(&t);
	t_q(&r, NULL, "export", "--format", "csv", NULL);
	assert_int_equal(r.status, 0);
	print_message("%s", r.out);
	csv_init(&c, r.out, strlen(r.out));
	assert_int_equal(csv_next(&c, &hdr, err, sizeof(err)), 1);
	assert_int_equal(hdr.n, sizeof(cols) / sizeof(cols[0]));
	for (i = 0; i < hdr.n; i++)
		assert_string_equal(hdr.v[i], cols[i]);
	for (i = 0; i < 3; i++) {
		assert_int_equal(csv_next(&c, &rec[i], err, sizeof(err)), 1);
		assert_int_equal(rec[i].n, hdr.n);
	}
	assert_int_equal(csv_next(&c, &end, err, sizeof(err)), 0);
	/* The input's columns. */
	assert_string_equal(rec[0].v[5], "a.c");
	assert_string_equal(rec[0].v[6], "'=1+1");
	assert_string_equal(rec[0].v[7], "5");
	assert_string_equal(rec[0].v[8], "{\"x\":[1]}");
	assert_string_equal(rec[0].v[9], "");
	assert_string_equal(rec[1].v[9], "'@SUM(A1)");
	assert_string_equal(rec[2].v[5], "");
	/* The answers. */
	assert_string_equal(rec[0].v[10],
	    "'=HYPERLINK(\"http://evil.example/\",\"click\")");
	assert_string_equal(rec[1].v[10], "'\\x0dCR then text");
	assert_string_equal(rec[2].v[10], "'-1+1");
	/* The output's fields, the schema's order first. */
	assert_string_equal(rec[0].v[11], "'\tTAB");
	assert_string_equal(rec[0].v[12], "'+cmd|' /C calc'!A0");
	assert_string_equal(rec[0].v[13], "-3");
	assert_string_equal(rec[0].v[14], "'-1+1");
	assert_string_equal(rec[0].v[15], "");
	assert_string_equal(rec[1].v[11], "'@SUM(A1:A2)");
	assert_string_equal(rec[1].v[12], "ok");
	assert_string_equal(rec[1].v[13], "");
	assert_string_equal(rec[2].v[11], "");
	assert_string_equal(rec[2].v[15], "[\"not\",\"an object\"]");
	assert_string_equal(rec[0].v[21], "a.c | 2 +-; b.c | 1 +; 2 files "
	    "changed, 2 insertions(+), 1 deletion(-)");
	/* No cell but the JSON number starts a formula, and each
	 * neutralised one is quoted in the file. */
	for (i = 0; i < 3; i++)
		for (k = 0; k < rec[i].n; k++)
			if (k != 13 && rec[i].v[k][0] != '\0' &&
			    strchr("=+-@\t\r", rec[i].v[k][0]) != NULL)
				fail_msg("row %zu, %s: a formula: %s", i + 1,
				    cols[k], rec[i].v[k]);
	assert_non_null(strstr(r.out, ",\"'=HYPERLINK(\"\"http"));
	assert_non_null(strstr(r.out, ",\"'-1+1\","));
	assert_null(strstr(r.out, ",="));
	assert_null(strstr(r.out, ",@"));
	assert_null(strstr(r.out, ",+"));
	for (i = 0; i < 3; i++)
		csv_record_free(&rec[i]);
	csv_record_free(&hdr);
	h_run_free(&r);
	t_close(&t);
}

/* The wall clock, *(int64_t *)arg days ago. */
static int64_t
t_old_clock(void *arg)
{
	return (int64_t)time(NULL) * 1000 - *(int64_t *)arg * T_DAY_MS;
}

/* A job done days ago. */
static void
t_done_ago(struct t *t, int64_t days)
{
	struct queue		*q = t_queue();
	struct queue_job_new	 nj;
	struct queue_result	 res;
	int64_t			 id;
	int			 existed;

	queue_set_clock(q, t_old_clock, &days);
	memset(&nj, 0, sizeof(nj));
	nj.task = "old";
	nj.workspace = t->ws;
	nj.priority = 9;	/* claimed before the others */
	assert_int_equal(queue_add(q, &nj, &id, &existed), 0);
	memset(&res, 0, sizeof(res));
	assert_int_equal(t_finish(q, &res, 1), id);
	queue_close(q);
}

static void
test_cancel_retry_purge(void **state)
{
	struct t		 t;
	struct h_run		 r;
	struct queue		*q;
	struct queue_job	 j;

	(void)state;
	t_open(&t);
	t_three(&t);		/* 1 done, 2 dead, 3 queued */
	t_q(&r, NULL, "cancel", "3", NULL);
	assert_int_equal(r.status, 0);
	assert_string_equal(r.out, "cancelled job 3\n");
	h_run_free(&r);
	t_job(3, &j);
	assert_int_equal(j.status, QUEUE_CANCELLED);
	queue_job_free(&j);
	t_q(&r, NULL, "cancel", "3", NULL);
	t_refused(&r, "job 3 is cancelled: there is nothing to cancel", 3);
	t_q(&r, NULL, "cancel", "1", NULL);
	t_refused(&r, "job 1 is done: there is nothing to cancel", 3);
	t_q(&r, NULL, "cancel", "42", NULL);
	t_refused(&r, "no job 42", 3);

	/* A running job is asked to stop. */
	t_q(&r, NULL, "add", "fourth", NULL);
	h_run_free(&r);
	q = t_queue();
	assert_int_equal(queue_claim(q, "w1", 60000, 0, &j), 1);
	assert_int_equal(j.id, 4);
	queue_job_free(&j);
	queue_close(q);
	t_q(&r, NULL, "cancel", "4", NULL);
	assert_int_equal(r.status, 0);
	assert_non_null(strstr(r.out, "job 4 is running: cancel asked"));
	h_run_free(&r);
	t_job(4, &j);
	assert_int_equal(j.status, QUEUE_RUNNING);
	assert_int_equal(j.cancel_asked, 1);
	queue_job_free(&j);
	t_q(&r, NULL, "ls", NULL);
	assert_non_null(strstr(r.out, "\n4      cancelling 1/3 "));
	h_run_free(&r);

	/* retry: a cancelled job, not a done one; then every dead one. */
	t_q(&r, NULL, "retry", "3", NULL);
	assert_int_equal(r.status, 0);
	assert_string_equal(r.out, "job 3 is queued again, its attempts "
	    "counted afresh\n");
	h_run_free(&r);
	t_job(3, &j);
	assert_int_equal(j.status, QUEUE_QUEUED);
	queue_job_free(&j);
	t_q(&r, NULL, "retry", "1", NULL);
	t_refused(&r, "job 1 is done: only a dead or cancelled job", 4);
	t_q(&r, NULL, "retry", "--dead", NULL);
	assert_int_equal(r.status, 0);
	assert_string_equal(r.out, "1 dead job queued again\n");
	h_run_free(&r);
	t_job(2, &j);
	assert_int_equal(j.status, QUEUE_QUEUED);
	queue_job_free(&j);
	t_q(&r, NULL, "retry", "--dead", "2", NULL);
	t_refused(&r, "give JOB or --dead, not both", 4);
	t_q(&r, NULL, "retry", "--done", NULL);
	t_refused(&r, "retry takes JOB or --dead only", 4);

	/* purge: a job done 8 days ago goes with --older-than 7d; one
	 * done 2 days ago and job 1, done today, stay until purged without
	 * an age. */
	t_done_ago(&t, 8);
	t_done_ago(&t, 2);
	t_q(&r, NULL, "purge", "--done", "--older-than", "7d", NULL);
	assert_int_equal(r.status, 0);
	assert_string_equal(r.out, "purged 1 job\n");
	h_run_free(&r);
	assert_int_equal(t_count(), 5);
	t_q(&r, NULL, "purge", "--done", "--older-than", "36h", NULL);
	assert_string_equal(r.out, "purged 1 job\n");
	h_run_free(&r);
	assert_int_equal(t_count(), 4);
	t_q(&r, NULL, "purge", "--dead", "--cancelled", NULL);
	assert_string_equal(r.out, "purged 0 jobs\n");
	h_run_free(&r);
	t_q(&r, NULL, "purge", "--done", NULL);
	assert_string_equal(r.out, "purged 1 job\n");
	h_run_free(&r);
	assert_int_equal(t_count(), 3);
	t_q(&r, NULL, "purge", "--older-than", "1d", NULL);
	t_refused(&r, "give which finished jobs to remove", 3);
	t_q(&r, NULL, "purge", "--done", "--older-than", "a week", NULL);
	t_refused(&r, "--older-than a week: not a duration", 3);
	t_q(&r, NULL, "purge", "--done", "--json", NULL);
	t_refused(&r, "--json is not an option of queue purge", 3);
	t_close(&t);
}

/* A done job's run with a copy-mode layer in which file rel became
 * content (and .envrc came, if envrc). */
static int64_t
t_layer_run(struct t *t, const char *rel, const char *content, int envrc)
{
	struct store_run_params	 p;
	struct store		*st;
	struct cow		 c;
	char			 err[1024], tree[PATH_MAX + 16], db[PATH_MAX];
	int64_t			 run;

	memset(&p, 0, sizeof(p));
	p.task = "a job";	/* the job's: apply checks the run is its */
	p.workspace = t->ws;
	if (cow_create(&c, COW_COPY, t->ws, t->state, err, sizeof(err)) == -1)
		fail_msg("cow_create: %s", err);
	snprintf(tree, sizeof(tree), "%s/tree", c.dir);
	h_write(tree, rel, content, 0);
	if (envrc)
		h_write(tree, ".envrc", "echo host\n", 0);
	p.cow_mode = "copy";
	p.cow_dir = c.dir;
	assert_int_equal(store_path(db, sizeof(db), NULL), 0);
	if ((st = store_open(db, STORE_CREATE, err, sizeof(err))) == NULL)
		fail_msg("store_open: %s", err);
	assert_int_equal(store_run_begin(st, &p, &run), 0);
	assert_int_equal(store_run_end(st, run, STORE_RUN_DONE, "ok"), 0);
	store_close(st);
	return run;
}

static void
t_expect(const struct t *t, const char *rel, const char *want)
{
	char	p[PATH_MAX + 64], *s;

	snprintf(p, sizeof(p), "%s/%s", t->ws, rel);
	s = h_read_file(p);
	assert_string_equal(s, want);
	free(s);
}

/* A job whose run ran make: the object its layer holds, which the
 * workspace's .gitignore ignores, is left out by queue apply (the layer
 * kept, the job not marked applied) until --include-ignored (issue 34). */
static void
test_apply_ignored(void **state)
{
	struct t		 t;
	struct h_run		 r;
	struct queue		*q;
	struct queue_result	 res;
	char			 cmd[PATH_MAX + 64];

	(void)state;
	t_open(&t);
	snprintf(cmd, sizeof(cmd), "git init -q '%s'", t.ws);
	if (system(cmd) != 0)
		skip();
	h_write(t.ws, ".gitignore", "*.o\n", 0);
	assert_int_equal(chdir(t.ws), 0);
	t_q(&r, NULL, "add", "--workspace", t.ws, "a job", NULL);
	h_run_free(&r);
	q = t_queue();
	memset(&res, 0, sizeof(res));
	res.diff_stat = " main.o | 1 +";
	res.run_id = t_layer_run(&t, "main.o", "OBJECT\n", 0);
	t_finish(q, &res, 1);
	queue_close(q);

	t_q(&r, NULL, "diff", "1", NULL);
	if (r.status != 0 || strstr(r.out, "OBJECT") != NULL ||
	    strstr(r.out, "#   main.o\n") == NULL)
		fail_msg("queue diff 1: %d\n%s\n%s", r.status, r.out, r.err);
	h_run_free(&r);
	t_q(&r, NULL, "apply", "1", NULL);
	if (r.status != 0 || strstr(r.out, "left out: main.o (the "
	    "workspace's .gitignore ignores it)") == NULL)
		fail_msg("queue apply 1: %d\n%s\n%s", r.status, r.out, r.err);
	h_run_free(&r);
	t_expect(&t, "main.o", "");
	t_q(&r, NULL, "apply", "--include-ignored", "1", NULL);
	if (r.status != 0)
		fail_msg("queue apply --include-ignored 1: %d\n%s\n%s",
		    r.status, r.out, r.err);
	h_run_free(&r);
	t_expect(&t, "main.o", "OBJECT\n");
	t_q(&r, NULL, "apply", "1", NULL);
	t_refused(&r, "job 1: its run 1 here has no layer left (applied", 1);
	t_close(&t);
}

/* Jobs 1 and 2 change a.txt (1 with an .envrc), 3 changes b.txt, 4 is
 * queued: apply 1, its .envrc with --include-sensitive; then --all-done
 * meets 2's conflict (1 changed a.txt under it) and goes on to 3. */
static void
test_apply(void **state)
{
	struct t		 t;
	struct h_run		 r;
	struct queue		*q;
	struct queue_result	 res;
	char			 want[PATH_MAX + 64];
	int			 i;

	(void)state;
	t_open(&t);
	assert_int_equal(chdir(t.ws), 0);
	for (i = 0; i < 4; i++) {
		t_q(&r, NULL, "add", "--workspace", t.ws, "a job", NULL);
		h_run_free(&r);
	}
	q = t_queue();
	memset(&res, 0, sizeof(res));
	res.diff_stat = " a.txt | 1 +";
	res.run_id = t_layer_run(&t, "a.txt", "from job 1\n", 1);
	t_finish(q, &res, 1);
	res.run_id = t_layer_run(&t, "a.txt", "from job 2\n", 0);
	t_finish(q, &res, 1);
	res.run_id = t_layer_run(&t, "b.txt", "from job 3\n", 0);
	t_finish(q, &res, 1);
	queue_close(q);

	t_q(&r, NULL, "apply", "4", NULL);
	t_refused(&r, "job 4 is queued: only a done job's run has changes", 4);
	t_q(&r, NULL, "apply", "1", NULL);
	assert_int_equal(r.status, 0);
	snprintf(want, sizeof(want), "job 1 (run 1) into %s:\n", t.ws);
	assert_non_null(strstr(r.out, want));
	assert_non_null(strstr(r.out, "left out: .envrc"));
	h_run_free(&r);
	t_expect(&t, "a.txt", "from job 1\n");
	t_expect(&t, ".envrc", "");
	t_q(&r, NULL, "apply", "--include-sensitive", "1", NULL);
	assert_int_equal(r.status, 0);
	h_run_free(&r);
	t_expect(&t, ".envrc", "echo host\n");
	t_q(&r, NULL, "apply", "1", NULL);
	t_refused(&r, "job 1: its run 1 here has no layer left (applied", 4);

	t_q(&r, NULL, "apply", "--all-done", NULL);
	assert_int_equal(r.status, 1);
	snprintf(want, sizeof(want), "job 2 (run 2) into %s:\nconflict: "
	    "a.txt", t.ws);
	assert_non_null(strstr(r.out, want));
	assert_non_null(strstr(r.out, "applied the changes of 1 done job; 1 "
	    "left to review"));
	h_run_free(&r);
	t_expect(&t, "a.txt", "from job 1\n");
	t_expect(&t, "b.txt", "from job 3\n");
	t_q(&r, NULL, "apply", "--all-done", "2", NULL);
	t_refused(&r, "give one JOB or --all-done", 4);

	/* Done without a run; done with a run the database lacks. */
	t_q(&r, NULL, "add", "five", NULL);
	h_run_free(&r);
	q = t_queue();
	res.diff_stat = NULL;
	res.run_id = 0;
	assert_int_equal(t_finish(q, &res, 1), 4);
	res.run_id = 999;
	assert_int_equal(t_finish(q, &res, 1), 5);
	queue_close(q);
	t_q(&r, NULL, "apply", "4", NULL);
	t_refused(&r, "job 4 is done without a run", 5);
	t_q(&r, NULL, "apply", "5", NULL);
	assert_int_equal(r.status, 0);
	assert_string_equal(r.out, "job 5 has no changes recorded: nothing to "
	    "apply\n");
	h_run_free(&r);
	t_close(&t);
}

/* The jobs' directories in dir (0 if it does not exist). */
static int
t_entries(const char *dir)
{
	struct dirent	*de;
	DIR		*d;
	int		 n = 0;

	if ((d = opendir(dir)) == NULL)
		return 0;
	while ((de = readdir(d)) != NULL)
		n += strncmp(de->d_name, "job-", 4) == 0;
	closedir(d);
	return n;
}

/*
 * A change set from another machine that is damaged, or a newer warren's:
 * refused with why (exit 6), nothing made in the workspace or left in
 * the state directory; a good one unpacks and goes, leaving nothing.
 */
static void
test_apply_set_refused(void **state)
{
	static const char	 damaged[] = "WRNCHG1\n\x01\0\0\0\x01\0";
	static const char	 newer[] = "WRNCHG2\n\0\0\0\0";
	static const char	 empty[] = "WRNCHG1\n\0\0\0\0";
	struct t		 t;
	struct h_run		 r;
	struct queue		*q;
	struct queue_result	 res;
	char			 cow[PATH_MAX + 128];

	(void)state;
	t_open(&t);
	assert_int_equal(chdir(t.ws), 0);
	t_q(&r, NULL, "add", "--workspace", t.ws, "one", NULL);
	h_run_free(&r);
	t_q(&r, NULL, "add", "--workspace", t.ws, "two", NULL);
	h_run_free(&r);
	t_q(&r, NULL, "add", "--workspace", t.ws, "three", NULL);
	h_run_free(&r);
	q = t_queue();
	memset(&res, 0, sizeof(res));
	res.run_id = 4;
	res.run_where = "elsewhere:/s/warren.db";
	res.diff_stat = " a.txt | 1 +";
	res.changes = damaged;
	res.changes_len = sizeof(damaged) - 1;
	t_finish(q, &res, 1);
	res.changes = newer;
	res.changes_len = sizeof(newer) - 1;
	t_finish(q, &res, 1);
	res.changes = empty;
	res.changes_len = sizeof(empty) - 1;
	t_finish(q, &res, 1);
	queue_close(q);
	t_q(&r, NULL, "apply", "1", NULL);
	assert_int_equal(r.status, 6);
	assert_non_null(strstr(r.err, "job 1: the change set is damaged or "
	    "not one (change 1: more changes than its bytes hold): refused"));
	h_run_free(&r);
	t_q(&r, NULL, "diff", "2", NULL);
	assert_int_equal(r.status, 6);
	assert_non_null(strstr(r.err, "a newer warren's"));
	h_run_free(&r);
	snprintf(cow, sizeof(cow), "%s/warren/cow", t.state);
	assert_int_equal(t_entries(cow), 0);
	t_q(&r, NULL, "apply", "3", NULL);
	assert_int_equal(r.status, 0);
	snprintf(cow, sizeof(cow), "job 3 (run 4 on elsewhere:/s/warren.db, "
	    "its changes from the queue) into %s:\n", t.ws);
	assert_non_null(strstr(r.out, cow));
	snprintf(cow, sizeof(cow), "%s/warren/cow", t.state);
	h_run_free(&r);
	assert_int_equal(t_entries(cow), 0);
	t_expect(&t, "a.txt", "one\n");
	t_close(&t);
}

/* The command failed with exit 2, saying there is no queue at path, and
 * made none there. */
static void
t_no_queue(struct h_run *r, const char *path, const char *why)
{
	struct queue	*q;
	char		 want[PATH_MAX + 64], err[QUEUE_ERR_MAX];

	assert_int_equal(r->status, 2);
	snprintf(want, sizeof(want), "no queue at %s: %s", path, why);
	if (strstr(r->err, want) == NULL ||
	    strstr(r->err, "`warren queue add` makes one") == NULL)
		fail_msg("stderr lacks \"%s\": %s", want, r->err);
	assert_string_equal(r->out, "");
	h_run_free(r);
	errno = 0;
	assert_null(q = queue_open_flags(path, QUEUE_OPEN_EXISTING, err,
	    sizeof(err)));
	assert_int_equal(errno, ENOENT);
}

/* Every command but add and work, on a queue that is not there (a file
 * that does not exist; the default queue.db before any add, beside a
 * state database that holds runs; the state database named as the
 * queue, which holds runs but no queue): exit 2, said, and nothing
 * made. */
static void
test_no_queue(void **state)
{
	static const char *const cmds[][4] = {
		{ "ls", NULL }, { "show", "1", NULL }, { "cancel", "1", NULL },
		{ "retry", "--dead", NULL }, { "purge", "--done", NULL },
		{ "export", "--format", "jsonl", NULL }, { "diff", "1", NULL },
		{ "apply", "1", NULL },
	};
	struct t	 t;
	struct h_run	 r;
	struct store	*st;
	struct stat	 sb;
	char		 nope[PATH_MAX + 32], db[PATH_MAX + 32];
	char		 qf[PATH_MAX + 32], err[STORE_ERRMSG_MAX];
	size_t		 i;

	(void)state;
	t_open(&t);
	snprintf(nope, sizeof(nope), "%s/nope/nope.db", t.dir);
	for (i = 0; i < sizeof(cmds) / sizeof(cmds[0]); i++) {
		t_q(&r, NULL, cmds[i][0], "--queue", nope, cmds[i][1],
		    cmds[i][2], NULL);
		t_no_queue(&r, nope, "the file does not exist");
		assert_int_equal(stat(nope, &sb), -1);
		assert_int_equal(errno, ENOENT);
	}
	snprintf(nope, sizeof(nope), "%s/nope", t.dir);
	assert_int_equal(stat(nope, &sb), -1);	/* nor its directory */
	/* The default before any add: no file, then a state database of
	 * runs beside it; the state database itself: runs only. */
	snprintf(qf, sizeof(qf), "%s/warren/queue.db", t.state);
	snprintf(db, sizeof(db), "%s/warren/warren.db", t.state);
	t_q(&r, NULL, "ls", NULL);
	t_no_queue(&r, qf, "the file does not exist");
	assert_int_equal(stat(qf, &sb), -1);
	assert_int_equal(stat(db, &sb), -1);
	assert_non_null(st = store_open(db, STORE_CREATE, err, sizeof(err)));
	store_close(st);
	for (i = 0; i < sizeof(cmds) / sizeof(cmds[0]); i++) {
		t_q(&r, NULL, cmds[i][0], cmds[i][1], cmds[i][2], NULL);
		t_no_queue(&r, qf, "the file does not exist");
		assert_int_equal(stat(qf, &sb), -1);
		t_q(&r, NULL, cmds[i][0], "--queue", db, cmds[i][1],
		    cmds[i][2], NULL);
		t_no_queue(&r, db, "the database holds no queue yet");
	}
	/* add makes it; then ls finds it. */
	t_q(&r, NULL, "add", "--queue", nope, "first", NULL);
	assert_int_equal(r.status, 0);
	h_run_free(&r);
	t_q(&r, NULL, "ls", "--queue", nope, NULL);
	assert_int_equal(r.status, 0);
	assert_non_null(strstr(r.out, "  first\n"));
	h_run_free(&r);
	t_close(&t);
}

/*
 * An older warren kept the queue in the state database. With no
 * queue.db yet, a command that reads says where the old queue is and how
 * to reach it (exit 2, nothing made) rather than show none; add makes
 * queue.db and says the old one still has jobs to run, as every command
 * does while it has; --queue reaches it; once its jobs are finished,
 * nothing more is said. Nothing is moved.
 */
static void
test_legacy_queue(void **state)
{
	struct t		 t;
	struct h_run		 r;
	struct queue		*q;
	struct queue_job_new	 n;
	struct stat		 sb;
	char			 db[PATH_MAX + 32], qf[PATH_MAX + 32];
	char			 want[4 * PATH_MAX], err[QUEUE_ERR_MAX];
	int64_t			 id;
	int			 existed, i;

	(void)state;
	t_open(&t);
	snprintf(db, sizeof(db), "%s/warren/warren.db", t.state);
	snprintf(qf, sizeof(qf), "%s/warren/queue.db", t.state);
	/* The old queue: two jobs in the state database. */
	if ((q = queue_open(db, err, sizeof(err))) == NULL)
		fail_msg("queue_open %s: %s", db, err);
	memset(&n, 0, sizeof(n));
	n.workspace = t.ws;
	n.max_attempts = 1;
	for (i = 0; i < 2; i++) {
		n.task = i == 0 ? "old one" : "old two";
		assert_int_equal(queue_add(q, &n, &id, &existed), 0);
	}
	queue_close(q);
	t_q(&r, NULL, "ls", NULL);
	assert_int_equal(r.status, 2);
	assert_string_equal(r.out, "");
	snprintf(want, sizeof(want), "no queue at %s: the file does not exist;"
	    " the state database %s holds the queue an older warren kept there"
	    " (2 jobs, 2 to run): give --queue %s", qf, db, db);
	if (strstr(r.err, want) == NULL)
		fail_msg("stderr lacks \"%s\": %s", want, r.err);
	h_run_free(&r);
	assert_int_equal(stat(qf, &sb), -1);
	t_q(&r, NULL, "export", "--format", "jsonl", NULL);
	assert_int_equal(r.status, 2);
	assert_non_null(strstr(r.err, want));
	h_run_free(&r);
	/* --queue reaches it. */
	t_q(&r, NULL, "ls", "--queue", db, NULL);
	assert_int_equal(r.status, 0);
	assert_non_null(strstr(r.out, "  old two\n"));
	h_run_free(&r);
	/* add makes queue.db, and says the old queue has jobs to run. */
	snprintf(want, sizeof(want), "note: the queue is %s; the state database"
	    " %s still holds 2 jobs to run in the queue an older warren kept "
	    "there: `warren queue work --queue %s` runs them", qf, db, db);
	t_q(&r, NULL, "add", "new one", NULL);
	assert_int_equal(r.status, 0);
	if (strstr(r.err, want) == NULL)
		fail_msg("stderr lacks \"%s\": %s", want, r.err);
	h_run_free(&r);
	t_q(&r, NULL, "ls", NULL);
	assert_int_equal(r.status, 0);
	assert_non_null(strstr(r.out, "  new one\n"));
	assert_null(strstr(r.out, "old"));
	assert_non_null(strstr(r.err, want));
	h_run_free(&r);
	/* The old jobs finished: nothing more to say. */
	for (i = 1; i <= 2; i++) {
		char	job[16];

		snprintf(job, sizeof(job), "%d", i);
		t_q(&r, NULL, "cancel", "--queue", db, job, NULL);
		assert_int_equal(r.status, 0);
		h_run_free(&r);
	}
	t_q(&r, NULL, "ls", NULL);
	assert_int_equal(r.status, 0);
	assert_string_equal(r.err, "");
	h_run_free(&r);
	t_close(&t);
}

/* While `queue apply` waits for the lock: it has changed nothing yet;
 * then the lock is let go. */
static void
t_locked_during(pid_t pid, void *arg)
{
	struct t	*t = arg;
	int		 i;

	(void)pid;
	for (i = 0; i < 8; i++) {
		usleep(100 * 1000);
		t_expect(t, "a.txt", "one\n");
	}
	close(t_lock_fd);
	t_lock_fd = -1;
}

/*
 * One change-set apply at a time on a machine: another holds the lock
 * (queue-apply.lock beside the jobs' directories), so this one waits,
 * changing nothing, and applies once it is free (the set made by
 * cow_pack from a copy layer, as a worker makes it).
 */
static void
test_apply_locked(void **state)
{
	struct t		 t;
	struct h_run		 r;
	struct queue		*q;
	struct queue_result	 res;
	struct cow_changes	 ch;
	struct cow		 c;
	char			 err[1024], tree[PATH_MAX + 16];
	char			 lock[PATH_MAX + 64];
	char			*argv[] = { "warren", "queue", "apply", "1", NULL };
	void			*set;
	size_t			 len;

	(void)state;
	t_open(&t);
	assert_int_equal(chdir(t.ws), 0);
	t_q(&r, NULL, "add", "--workspace", t.ws, "one", NULL);
	h_run_free(&r);
	if (cow_create(&c, COW_COPY, t.ws, t.dir, err, sizeof(err)) == -1)
		fail_msg("cow_create: %s", err);
	snprintf(tree, sizeof(tree), "%s/tree", c.dir);
	h_write(tree, "a.txt", "changed\n", 0);
	if (cow_changes(&c, &ch, err, sizeof(err)) == -1 ||
	    cow_pack(&c, &ch, COW_PACK_MAX, &set, &len, err, sizeof(err)) != 0)
		fail_msg("pack: %s", err);
	cow_changes_free(&ch);
	memset(&res, 0, sizeof(res));
	res.run_id = 4;
	res.run_where = "elsewhere:/s/warren.db";
	res.diff_stat = " a.txt | 2 +-";
	res.changes = set;
	res.changes_len = len;
	q = t_queue();
	t_finish(q, &res, 1);
	queue_close(q);
	free(set);
	snprintf(lock, sizeof(lock), "%s/warren/cow", t.state);
	assert_int_equal(path_mkdirs(lock, 0700, 0), 0);
	strlcat(lock, "/queue-apply.lock", sizeof(lock));
	/* Not inherited by warren: its copy would hold the lock too. */
	assert_true((t_lock_fd = open(lock, O_RDWR | O_CREAT | O_CLOEXEC,
	    0600)) != -1);
	assert_int_equal(flock(t_lock_fd, LOCK_EX), 0);
	assert_int_equal(h_warren(&r, argv, NULL, t_locked_during, &t), 0);
	assert_int_equal(t_lock_fd, -1);
	if (r.status != 0)
		fail_msg("apply: %d\n%s%s", r.status, r.out, r.err);
	assert_true(r.ms >= 700);
	h_run_free(&r);
	t_expect(&t, "a.txt", "changed\n");
	(void)cow_remove(&c, err, sizeof(err));
	t_close(&t);
}

/* A change set made by cow_pack over base: rel created with content. */
static void *
t_set(const struct t *t, const char *base, const char *const *rels,
    size_t *len)
{
	struct cow_changes	 ch;
	struct cow		 c;
	char			 err[1024], tree[PATH_MAX + 16];
	void			*set;
	size_t			 i;

	if (cow_create(&c, COW_COPY, base, t->dir, err, sizeof(err)) == -1)
		fail_msg("cow_create: %s", err);
	snprintf(tree, sizeof(tree), "%s/tree", c.dir);
	for (i = 0; rels[i] != NULL; i++)
		h_write(tree, rels[i], "#!/bin/sh\necho owned\n", 0755);
	if (cow_changes(&c, &ch, err, sizeof(err)) == -1 ||
	    cow_pack(&c, &ch, COW_PACK_MAX, &set, len, err, sizeof(err)) != 0)
		fail_msg("pack: %s", err);
	cow_changes_free(&ch);
	(void)cow_remove(&c, err, sizeof(err));
	return set;
}

/* Nothing at dir/rel. */
static void
t_absent(const char *dir, const char *rel)
{
	char	p[PATH_MAX + 64];

	snprintf(p, sizeof(p), "%s/%s", dir, rel);
	if (access(p, F_OK) == 0)
		fail_msg("%s was written", p);
}

/*
 * A forged job (issue 31): written through the queue API as anyone who
 * can write the queue would, done, its workspace a fake $HOME and its
 * change set .local/bin/git and .config/autostart/update.desktop. From
 * the user's project, --all-done applies this workspace's job and leaves
 * the forged one out, named with both paths (exit 0); `queue apply 1`
 * and `queue diff 1` refuse it (exit 2); nothing is written in the fake
 * home at any point; --any-workspace writes it here, the destination
 * said first.
 */
static void
test_apply_forged(void **state)
{
	static const char *const evil[] = { ".local/bin/git",
	    ".config/autostart/update.desktop", NULL };
	static const char *const mine[] = { "b.txt", NULL };
	struct t		 t;
	struct h_run		 r;
	struct queue		*q;
	struct queue_job_new	 jn;
	struct queue_result	 res;
	char			 home[PATH_MAX + 8], want[4 * PATH_MAX];
	void			*set;
	size_t			 len;
	int64_t			 id;
	int			 existed;

	(void)state;
	t_open(&t);
	snprintf(home, sizeof(home), "%s/home", t.dir);
	h_write(home, ".profile", "", 0);
	assert_int_equal(chdir(t.ws), 0);
	q = t_queue();
	memset(&jn, 0, sizeof(jn));
	jn.task = "forged";
	jn.workspace = home;
	assert_int_equal(queue_add(q, &jn, &id, &existed), 0);
	jn.task = "mine";
	jn.workspace = t.ws;
	assert_int_equal(queue_add(q, &jn, &id, &existed), 0);
	memset(&res, 0, sizeof(res));
	res.run_id = 7;
	res.run_where = "elsewhere:/s/warren.db";
	res.diff_stat = " .local/bin/git | 2 ++";
	res.changes = set = t_set(&t, home, evil, &len);
	res.changes_len = len;
	assert_int_equal(t_finish(q, &res, 1), 1);
	free(set);
	res.changes = set = t_set(&t, t.ws, mine, &len);
	res.changes_len = len;
	assert_int_equal(t_finish(q, &res, 1), 2);
	free(set);
	queue_close(q);

	t_q(&r, NULL, "apply", "--all-done", NULL);
	if (r.status != 0)
		fail_msg("apply --all-done: %d\n%s%s", r.status, r.out, r.err);
	snprintf(want, sizeof(want), "job 1 is of workspace %s, not this one "
	    "(%s): left out", home, t.ws);
	if (strstr(r.err, want) == NULL)
		fail_msg("stderr lacks \"%s\": %s", want, r.err);
	snprintf(want, sizeof(want), "job 2 (run 7 on elsewhere:/s/warren.db, "
	    "its changes from the queue) into %s:\n", t.ws);
	assert_non_null(strstr(r.out, want));
	assert_non_null(strstr(r.out, "applied the changes of 1 done job; 1 "
	    "of other workspaces left out"));
	h_run_free(&r);
	t_expect(&t, "b.txt", "#!/bin/sh\necho owned\n");
	t_absent(home, ".local");
	t_absent(home, ".config");
	t_absent(t.ws, ".local");

	t_q(&r, NULL, "apply", "1", NULL);
	snprintf(want, sizeof(want), "job 1 is of workspace %s, not this one "
	    "(%s): not applied here; `warren queue apply --workspace %s 1` "
	    "applies it here if you mean to", home, t.ws, t.ws);
	t_refused(&r, want, 2);
	t_q(&r, NULL, "diff", "1", NULL);
	t_refused(&r, "job 1 is of workspace ", 2);
	t_absent(home, ".local");
	t_absent(home, ".config");

	/* Told: here, never there, the destination said first. */
	t_q(&r, NULL, "apply", "--any-workspace", "--include-sensitive", "1",
	    NULL);
	if (r.status != 0)
		fail_msg("apply --any-workspace: %d\n%s%s", r.status, r.out,
		    r.err);
	snprintf(want, sizeof(want), "job 1 (run 7 on elsewhere:/s/warren.db, "
	    "its changes from the queue) into %s:\n", t.ws);
	assert_non_null(strstr(r.out, want));
	h_run_free(&r);
	t_expect(&t, ".local/bin/git", "#!/bin/sh\necho owned\n");
	t_absent(home, ".local");
	t_absent(home, ".config");
	t_close(&t);
}

/* --queue FILE, else $WARREN_QUEUE_URL, else queue_url in the user's
 * config, else queue.db beside the state database; a PostgreSQL URL that cannot be
 * reached: exit 6, its password not said. */
static void
test_queue_url(void **state)
{
	struct t	 t;
	struct h_run	 r;
	char		 url[PATH_MAX + 32], conf[PATH_MAX + 64];
	char		 cfg[PATH_MAX + 64], *old;

	(void)state;
	t_open(&t);
	old = getenv("XDG_CONFIG_HOME") != NULL ?
	    strdup(getenv("XDG_CONFIG_HOME")) : NULL;
	snprintf(cfg, sizeof(cfg), "%s/config", t.dir);
	assert_int_equal(setenv("XDG_CONFIG_HOME", cfg, 1), 0);
	snprintf(url, sizeof(url), "%s/other/q.db", t.dir);
	t_q(&r, NULL, "add", "--queue", url, "elsewhere", NULL);
	assert_int_equal(r.status, 0);
	h_run_free(&r);
	assert_int_equal(t_count(), 0);		/* not the default's */
	assert_int_equal(setenv("WARREN_QUEUE_URL", url, 1), 0);
	t_q(&r, NULL, "ls", NULL);
	assert_int_equal(r.status, 0);
	assert_non_null(strstr(r.out, "  elsewhere\n"));
	h_run_free(&r);
	unsetenv("WARREN_QUEUE_URL");
	t_q(&r, NULL, "ls", NULL);
	assert_non_null(strstr(r.out, "no jobs"));
	h_run_free(&r);
	/* The user's config names it; the environment wins over it. */
	snprintf(conf, sizeof(conf), "queue_url = %s\n", url);
	h_write(cfg, "warren/config", conf, 0);
	t_q(&r, NULL, "ls", NULL);
	assert_non_null(strstr(r.out, "  elsewhere\n"));
	h_run_free(&r);
	assert_int_equal(setenv("WARREN_QUEUE_URL", "", 1), 0);
	t_q(&r, NULL, "ls", NULL);
	assert_non_null(strstr(r.out, "no jobs"));
	h_run_free(&r);
	unsetenv("WARREN_QUEUE_URL");
	h_write(cfg, "warren/config", "queue_url = \"postgresql://u:pw-42"
	    "@127.0.0.1:1/q?connect_timeout=2\"\n", 0);
	t_q(&r, NULL, "ls", NULL);
	assert_int_equal(r.status, 6);
	assert_non_null(strstr(r.err, "postgresql://u:***@127.0.0.1:1/q"));
	assert_null(strstr(r.err, "pw-42"));
	h_run_free(&r);
	h_write(cfg, "warren/config", "queue_url = 7\nbogus = 1\n", 0);
	t_q(&r, NULL, "ls", NULL);
	assert_int_equal(r.status, 3);
	assert_non_null(strstr(r.err, "unknown key 'bogus'"));
	h_run_free(&r);
	t_q(&r, NULL, "ls", "--queue", "postgresql://u:pw-42@127.0.0.1:1/q?"
	    "connect_timeout=2", NULL);
	assert_int_equal(r.status, 6);
	assert_null(strstr(r.err, "pw-42"));
	h_run_free(&r);
	/* libpq quotes the URL, or the bad part of it, in its own
	 * message: scrubbed (review31: printed "p%zzpw-42" and the
	 * whole URI); a password with '/' is masked in ours. */
	t_q(&r, NULL, "ls", "--queue", "postgresql://u:p%zzpw-42@127.0.0.1:1/q",
	    NULL);
	if (r.status != 6 || strstr(r.err, "pw-42") != NULL ||
	    strstr(r.err, "invalid percent-encoded token") == NULL)
		fail_msg("bad %%: %d\n%s", r.status, r.err);
	h_run_free(&r);
	t_q(&r, NULL, "ls", "--queue", "postgresql://u:pw-42@[::1/q", NULL);
	if (r.status != 6 || strstr(r.err, "pw-42") != NULL ||
	    strstr(r.err, "IPv6") == NULL)
		fail_msg("bad IPv6: %d\n%s", r.status, r.err);
	h_run_free(&r);
	t_q(&r, NULL, "ls", "--queue", "postgresql://u:p/pw-42@127.0.0.1:1/q",
	    NULL);
	if (r.status != 6 || strstr(r.err, "pw-42") != NULL)
		fail_msg("'/' in the password: %d\n%s", r.status, r.err);
	h_run_free(&r);
	/* libpq's keywords without "postgresql:" are taken for a file;
	 * its name is said masked. */
	t_q(&r, NULL, "ls", "--queue", "host=127.0.0.1 port=1 password=pw-42",
	    NULL);
	if (r.status != 2 || strstr(r.err, "pw-42") != NULL ||
	    strstr(r.err, "no queue at host=127.0.0.1 port=1 password=***") ==
	    NULL)
		fail_msg("keywords as a file: %d\n%s", r.status, r.err);
	h_run_free(&r);
	if (old != NULL)
		setenv("XDG_CONFIG_HOME", old, 1);
	free(old);
	t_close(&t);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_add_one),
		cmocka_unit_test(test_add_csv),
		cmocka_unit_test(test_add_jsonl),
		cmocka_unit_test(test_add_profile),
		cmocka_unit_test(test_add_unusable),
		cmocka_unit_test(test_add_too_long),
		cmocka_unit_test(test_add_ulimit_f),
		cmocka_unit_test(test_work_ulimit_f),
		cmocka_unit_test(test_ls_show),
		cmocka_unit_test(test_export),
		cmocka_unit_test(test_export_cells),
		cmocka_unit_test(test_stats_limit),
		cmocka_unit_test(test_cancel_retry_purge),
		cmocka_unit_test(test_apply),
		cmocka_unit_test(test_apply_ignored),
		cmocka_unit_test(test_apply_set_refused),
		cmocka_unit_test(test_apply_locked),
		cmocka_unit_test(test_apply_forged),
		cmocka_unit_test(test_queue_url),
		cmocka_unit_test(test_no_queue),
		cmocka_unit_test(test_legacy_queue),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}

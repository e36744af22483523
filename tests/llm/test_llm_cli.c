/*
 * warren ask, run as a user would: answers, exit codes, messages, escaped
 * output, configuration files, and the API key gone from the process's
 * environment block (/proc/PID/environ) while it talks to the endpoint.
 */
#include <sys/stat.h>
#include <sys/wait.h>

#include <errno.h>
#include <fcntl.h>
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

#include "tests/llm/llm_testutil.h"
#include "tests/test_wait.h"

#define SECRET	"sk-cli-SECRET-31337"

struct run {
	int	 status;	/* exit code */
	char	*out;
	char	*err;
};

/* Start warren with argv in dir, stdout/stderr to files; returns pid. */
static pid_t
spawn_warren(const char *dir, char *const argv[], const char *key)
{
	char	path[512], home[512];
	pid_t	pid;
	int	fd;

	if ((pid = fork()) == -1)
		fail_msg("fork: %s", strerror(errno));
	if (pid != 0)
		return pid;
	if (chdir(dir) == -1)
		_exit(126);
	snprintf(path, sizeof(path), "%s/out", dir);
	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
	dup2(fd, 1);
	snprintf(path, sizeof(path), "%s/err", dir);
	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
	dup2(fd, 2);
	/* A private home: no user config file leaks in. */
	snprintf(home, sizeof(home), "%s/home", dir);
	mkdir(home, 0700);
	setenv("HOME", home, 1);
	unsetenv("XDG_CONFIG_HOME");
	unsetenv("WARREN_API_KEY");
	unsetenv("OPENAI_API_KEY");
	unsetenv("ANTHROPIC_API_KEY");
	if (key != NULL)
		setenv("WARREN_API_KEY", key, 1);
	execv(getenv("WARREN_BIN"), argv);
	_exit(127);
}

static void
collect(const char *dir, pid_t pid, struct run *r)
{
	char	path[512];
	int	status;

	assert_true((status = test_waitpid(pid, 120, "warren")) != -1);
	assert_true(WIFEXITED(status));
	r->status = WEXITSTATUS(status);
	snprintf(path, sizeof(path), "%s/out", dir);
	r->out = llm_test_slurp(path, NULL);
	snprintf(path, sizeof(path), "%s/err", dir);
	r->err = llm_test_slurp(path, NULL);
}

/* execv wants char *const[]; it does not write them. */
static char *
unconst(const char *s)
{
	return (char *)(uintptr_t)s;
}

static void
ask(const struct fakellm *f, const char *prov, const char *extra,
    const char *prompt, struct run *r)
{
	char	*argv[12];
	int	 n = 0;

	argv[n++] = "warren";
	argv[n++] = "ask";
	argv[n++] = "--provider";
	argv[n++] = unconst(prov);
	argv[n++] = "--base-url";
	argv[n++] = unconst(f->url);
	argv[n++] = "--model";
	argv[n++] = "cli-model";
	if (extra != NULL)
		argv[n++] = unconst(extra);
	argv[n++] = unconst(prompt);
	argv[n] = NULL;
	collect(f->dir, spawn_warren(f->dir, argv, SECRET), r);
}

static void
run_free(struct run *r)
{
	free(r->out);
	free(r->err);
}

static void
test_ask_answers(void **state)
{
	struct fakellm	 f;
	struct run	 r;
	json_t		*reqs;

	(void)state;
	fakellm_start(&f, "hello.json");
	ask(&f, "anthropic", NULL, "hello there", &r);
	assert_int_equal(r.status, 0);
	assert_non_null(strstr(r.out, "Hello from fakellm: caf\xc3\xa9 \xe2\x98\x83."));
	assert_non_null(strstr(r.out, "[tool call] read {\"path\":\"src/a.c\"}"));
	run_free(&r);
	reqs = fakellm_requests(&f);
	assert_string_equal(json_string_value(json_object_get(json_object_get(
	    json_array_get(reqs, 0), "headers"), "x-api-key")), SECRET);
	json_decref(reqs);
	fakellm_stop(&f);
}

/* --base-url http://host:port and http://host:port/v1 both post to
 * /v1/...: for an OpenAI-compatible endpoint as for anthropic. */
static void
test_ask_url_forms(void **state)
{
	static const char *const provs[] = { "openai", "anthropic",
	    "responses" };
	static const char *const paths[] = { "/v1/chat/completions",
	    "/v1/messages", "/v1/responses" };
	struct fakellm	 f;
	struct run	 r;
	json_t		*reqs;
	char		 bare[64];
	size_t		 i, form;

	(void)state;
	fakellm_start(&f, "hello.json");
	snprintf(bare, sizeof(bare), "http://127.0.0.1:%d", f.port);
	for (i = 0; i < 3; i++) {
		for (form = 0; form < 2; form++) {
			if (form == 0)
				snprintf(f.url, sizeof(f.url), "%s", bare);
			else
				snprintf(f.url, sizeof(f.url), "%s/v1", bare);
			ask(&f, provs[i], NULL, "hello", &r);
			if (r.status != 0)
				fail_msg("%s --base-url %s: exit %d: %s",
				    provs[i], f.url, r.status, r.err);
			run_free(&r);
			reqs = fakellm_requests(&f);
			assert_string_equal(json_string_value(json_object_get(
			    json_array_get(reqs, json_array_size(reqs) - 1),
			    "path")), paths[i]);
			json_decref(reqs);
		}
	}
	fakellm_stop(&f);
}

static void
test_ask_escapes(void **state)
{
	struct fakellm	f;
	struct run	r;

	(void)state;
	fakellm_start_json(&f, "{\"responses\": [{\"reply\": {\"text\": "
	    "\"red \\u001b[31m alert\\u0007\\nline two\"}}]}");
	ask(&f, "openai", "--no-stream", "x", &r);
	assert_int_equal(r.status, 0);
	assert_null(strchr(r.out, '\x1b'));
	assert_null(strchr(r.out, '\x07'));
	assert_non_null(strstr(r.out, "red \\x1b[31m alert\\x07\nline two"));
	run_free(&r);
	fakellm_stop(&f);
}

static void
test_ask_failures(void **state)
{
	struct fakellm	 f;
	struct run	 r;
	char		*argv[4], path[512];
	FILE		*cf;

	(void)state;
	fakellm_start(&f, "http_401.json");
	ask(&f, "openai", NULL, "x", &r);
	assert_int_equal(r.status, 4);		/* WARREN_EXIT_LLM */
	assert_non_null(strstr(r.err, "HTTP 401"));
	assert_non_null(strstr(r.err, f.url));
	assert_non_null(strstr(r.err, "Incorrect API key provided"));
	assert_null(strstr(r.err, SECRET));
	assert_null(strstr(r.out, SECRET));
	run_free(&r);

	/* An untrusted workspace config is ignored, and said to be. */
	snprintf(path, sizeof(path), "%s/.warren", f.dir);
	mkdir(path, 0700);
	snprintf(path, sizeof(path), "%s/.warren/config", f.dir);
	assert_non_null(cf = fopen(path, "w"));
	fprintf(cf, "# test\ntimeout = whenever\n");
	fclose(cf);
	ask(&f, "openai", NULL, "x", &r);
	assert_int_not_equal(r.status, 3);	/* the bad line is not read */
	assert_non_null(strstr(r.err, "is ignored: it is not trusted"));
	run_free(&r);
	/* `warren trust` checks it first: a bad line is exit 3, file:line. */
	argv[0] = "warren";
	argv[1] = "trust";
	argv[2] = NULL;
	collect(f.dir, spawn_warren(f.dir, argv, NULL), &r);
	assert_int_equal(r.status, 3);		/* WARREN_EXIT_CONFIG */
	assert_non_null(strstr(r.err, ".warren/config:2: timeout"));
	run_free(&r);
	unlink(path);

	/* No prompt, or a bad flag: usage, exit 2. */
	argv[0] = "warren";
	argv[1] = "ask";
	argv[2] = NULL;
	collect(f.dir, spawn_warren(f.dir, argv, NULL), &r);
	assert_int_equal(r.status, 2);
	assert_non_null(strstr(r.err, "give the PROMPT; try 'warren help ask'"));
	run_free(&r);
	argv[2] = "--retries=many";
	argv[3] = NULL;
	collect(f.dir, spawn_warren(f.dir, argv, NULL), &r);
	assert_int_equal(r.status, 2);
	assert_non_null(strstr(r.err, "--retries"));
	run_free(&r);

	/* A prompt on stdin that cannot be read is not sent half-read
	 * (here stdin is a directory: read fails with EISDIR). */
	{
		int	saved = dup(0), dfd = open(f.dir, O_RDONLY | O_DIRECTORY);

		assert_true(saved >= 0 && dfd >= 0);
		assert_int_equal(dup2(dfd, 0), 0);
		ask(&f, "openai", NULL, "-", &r);
		assert_int_equal(dup2(saved, 0), 0);
		close(saved);
		close(dfd);
		assert_int_equal(r.status, 2);
		assert_non_null(strstr(r.err, "reading the prompt"));
		run_free(&r);
	}
	fakellm_stop(&f);
}

static int
environ_has(pid_t pid, const char *needle)
{
	char	 path[64], env[65536];
	size_t	 len = 0, i, n = strlen(needle);
	ssize_t	 r;
	int	 fd;

	/* /proc files have no size: read until EOF. */
	snprintf(path, sizeof(path), "/proc/%d/environ", (int)pid);
	assert_true((fd = open(path, O_RDONLY)) != -1);
	while (len < sizeof(env) && (r = read(fd, env + len,
	    sizeof(env) - len)) > 0)
		len += (size_t)r;
	close(fd);
	assert_true(len > 0);
	for (i = 0; i + n <= len; i++) {
		if (memcmp(env + i, needle, n) == 0)
			return 1;
	}
	return 0;
}

static void
test_key_not_in_environ(void **state)
{
	struct fakellm	 f;
	struct timespec	 ts = { 0, 20 * 1000 * 1000 };
	char		*argv[10];
	json_t		*reqs;
	pid_t		 pid;
	int		 i;

	(void)state;
	fakellm_start(&f, "slow.json");
	argv[0] = "warren";
	argv[1] = "ask";
	argv[2] = "--provider";
	argv[3] = "openai";
	argv[4] = "--base-url";
	argv[5] = f.url;
	argv[6] = "hold on";
	argv[7] = NULL;
	pid = spawn_warren(f.dir, argv, SECRET);
	/* Once the request is on the wire the key has been read. */
	for (i = 0; i < 1000; i++) {
		reqs = fakellm_requests(&f);
		if (json_array_size(reqs) > 0)
			break;
		json_decref(reqs);
		reqs = NULL;
		nanosleep(&ts, NULL);
	}
	assert_non_null(reqs);
	assert_string_equal(json_string_value(json_object_get(json_object_get(
	    json_array_get(reqs, 0), "headers"), "authorization")),
	    "Bearer " SECRET);
	json_decref(reqs);
	/* The original environment block no longer holds it. */
	assert_true(environ_has(pid, "HOME="));
	assert_false(environ_has(pid, SECRET));
	assert_false(environ_has(pid, "sk-cli"));
	kill(pid, SIGTERM);
	assert_true(test_waitpid(pid, 30, "warren sent SIGTERM") != -1);
	fakellm_stop(&f);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_teardown(test_ask_answers,
		    fakellm_teardown),
		cmocka_unit_test_teardown(test_ask_url_forms,
		    fakellm_teardown),
		cmocka_unit_test_teardown(test_ask_escapes,
		    fakellm_teardown),
		cmocka_unit_test_teardown(test_ask_failures,
		    fakellm_teardown),
		cmocka_unit_test_teardown(test_key_not_in_environ,
		    fakellm_teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}

/*
 * The presets of agent/backend_presets.c run for real: Claude Code and
 * Codex CLI (the pinned npm installs, tests/npm) started with exactly the
 * argv, environment, settings files and working directory the preset
 * builds, against fakellm playing the model (claude_code.json and
 * codex.json here: a
 * shell tool saves the environment to env.txt, a file is written, a
 * final answer). No warren, no sandbox: what is checked is the launch.
 *
 * For each: it exits 0 within its deadline with the final answer on
 * stdout; every request reached fakellm on the API's path with the
 * launch's placeholder key, the task, the model and the role prompt in
 * it; the user's key (WARREN_API_KEY and the programs' own variables,
 * set in this test's environment) is in neither the launch, env.txt nor
 * any request; the file landed in the workspace; nothing was written to
 * the HOME of this process (a fresh directory that must stay empty).
 */
#include <sys/stat.h>
#include <sys/wait.h>

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
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

#include "agent/backend.h"
#include "tests/e2e/harness.h"
#include "tests/llm/llm_testutil.h"
#include "tests/test_wait.h"

#define REAL_KEY	"sk-test-REAL"
#define RUN_SECONDS	120	/* a hang guard; a run takes 1-3 s */

struct case_ {
	enum backend_kind	 kind;
	const char		*npm;		/* h_npm_path name */
	const char		*fixture;	/* under tests/agents/ */
	const char		*task;
	const char		*model;
	const char		*answer;	/* on stdout */
	const char		*path;		/* every request's */
	const char		*key_header;	/* where the key goes */
	const char		*key_prefix;	/* before it there */
	const char		*key_env;	/* the launch's variable */
	const char		*file;		/* what the model wrote */
};

static const struct case_ claude_case = {
	BACKEND_CLAUDE_CODE, "claude", "claude_code.json",
	"Save the environment, then write hello.txt. TASK-CLAUDE-CODE",
	"claude-warren-test", "CLAUDE-CODE-FINAL: env.txt saved, hello.txt "
	"written", "/v1/messages", "x-api-key", "", "ANTHROPIC_API_KEY",
	"written by claude code\n",
};

static const struct case_ codex_case = {
	BACKEND_CODEX, "codex", "codex.json",
	"Save the environment, then write hello.txt. TASK-CODEX",
	"gpt-5.4", "CODEX-FINAL: env.txt saved, hello.txt written",
	"/v1/responses", "authorization", "Bearer ", "WARREN_BROKER_KEY",
	"written by codex\n",
};

/* Codex's default model: its tools as one freeform `exec` tool running
 * JavaScript that calls them ("code mode"), run by a host program of
 * its package. */
static const struct case_ codex_code_mode_case = {
	BACKEND_CODEX, "codex", "codex_code_mode.json",
	"Save the environment, then write hello.txt. TASK-CODEX",
	NULL, "CODEX-FINAL: env.txt saved, hello.txt written",
	"/v1/responses", "authorization", "Bearer ", "WARREN_BROKER_KEY",
	"written by codex\n",
};

/* The role prompt: quotes, a backslash and a newline (TOML, argv). */
#define ROLE	"ROLE-MARKER: say \"done\" \\ then\nstop"

static char	tmproot[PATH_MAX];

/* A path of PATH_MAX at most, or the test fails saying which. */
static void
pathf(char *buf, const char *fmt, ...)
{
	va_list	ap;
	int	n;

	va_start(ap, fmt);
	n = vsnprintf(buf, PATH_MAX, fmt, ap);
	va_end(ap);
	if (n < 0 || n >= PATH_MAX)
		fail_msg("path too long: %s...", buf);
}

static void
mkdir_p(const char *path)
{
	char	buf[PATH_MAX], *p;

	snprintf(buf, sizeof(buf), "%s", path);
	for (p = buf + 1; *p; p++) {
		if (*p != '/')
			continue;
		*p = '\0';
		if (mkdir(buf, 0700) == -1 && errno != EEXIST)
			fail_msg("mkdir %s: %s", buf, strerror(errno));
		*p = '/';
	}
	if (mkdir(buf, 0700) == -1 && errno != EEXIST)
		fail_msg("mkdir %s: %s", buf, strerror(errno));
}

static char *
slurp(const char *path)
{
	FILE	*f;
	char	*s;
	long	 n;

	if ((f = fopen(path, "r")) == NULL)
		return NULL;
	fseek(f, 0, SEEK_END);
	n = ftell(f);
	rewind(f);
	s = calloc(1, (size_t)n + 1);
	assert_non_null(s);
	if (fread(s, 1, (size_t)n, f) != (size_t)n)
		fail_msg("short read of %s", path);
	fclose(f);
	return s;
}

static int
dir_entries(const char *path)
{
	DIR		*d;
	struct dirent	*e;
	int		 n = 0;

	if ((d = opendir(path)) == NULL)
		fail_msg("opendir %s: %s", path, strerror(errno));
	while ((e = readdir(d)) != NULL)
		if (strcmp(e->d_name, ".") != 0 && strcmp(e->d_name, "..") != 0)
			n++;
	closedir(d);
	return n;
}

/* The value of NAME in the launch's environment, or NULL. */
static const char *
launch_env(const struct backend_launch *l, const char *name)
{
	size_t	n = strlen(name);
	int	i;

	for (i = 0; i < l->envc; i++)
		if (strncmp(l->envp[i], name, n) == 0 && l->envp[i][n] == '=')
			return l->envp[i] + n + 1;
	return NULL;
}

static void
launch_free(struct backend_launch *l)
{
	int	i;

	for (i = 0; i < l->argc; i++)
		free(l->argv[i]);
	for (i = 0; i < l->envc; i++)
		free(l->envp[i]);
	for (i = 0; i < l->nfiles; i++) {
		free(l->files[i].path);
		free(l->files[i].content);
	}
}

/* The settings files, as the worker writes them into the private HOME. */
static void
write_files(const struct backend_launch *l, const char *home)
{
	char	 path[PATH_MAX], *slash;
	int	 i, fd;
	size_t	 len;

	for (i = 0; i < l->nfiles; i++) {
		assert_true(l->files[i].path[0] != '/');
		assert_null(strstr(l->files[i].path, ".."));
		pathf(path, "%s/%s", home, l->files[i].path);
		slash = strrchr(path, '/');
		*slash = '\0';
		mkdir_p(path);
		*slash = '/';
		fd = open(path, O_WRONLY | O_CREAT | O_EXCL, l->files[i].mode);
		if (fd == -1)
			fail_msg("%s: %s", path, strerror(errno));
		len = strlen(l->files[i].content);
		assert_int_equal(write(fd, l->files[i].content, len),
		    (ssize_t)len);
		close(fd);
	}
}

/*
 * strace, when it is there and can trace here: every connect() of the
 * program's tree is then checked (check_connects). It only runs the
 * launch's argv with the launch's environment; it adds nothing to it.
 */
static const char *
strace_path(void)
{
	static const char	*s = "/usr/bin/strace";
	pid_t			 pid;
	int			 st, fd;

	if (access(s, X_OK) == -1)
		return NULL;
	if ((pid = fork()) == -1)
		fail_msg("fork: %s", strerror(errno));
	if (pid == 0) {
		if ((fd = open("/dev/null", O_WRONLY)) != -1) {
			dup2(fd, 1);
			dup2(fd, 2);
		}
		execl(s, "strace", "-f", "-e", "trace=none", "/bin/true",
		    (char *)NULL);
		_exit(127);
	}
	st = test_waitpid(pid, 30, "strace /bin/true");
	return st != -1 && WIFEXITED(st) && WEXITSTATUS(st) == 0 ? s : NULL;
}

/*
 * The network destinations the program tried, from strace's log: each
 * connect() to an AF_INET or AF_INET6 address must be fakellm's (a DNS
 * query, port 53, is one to anywhere else).
 */
static void
check_connects(const char *trace, int port)
{
	char		*s, *line, *next, want[64];
	int		 bad = 0, n = 0;

	snprintf(want, sizeof(want), "sin_port=htons(%d), sin_addr=inet_addr("
	    "\"127.0.0.1\")", port);
	if ((s = slurp(trace)) == NULL)
		fail_msg("no strace log %s", trace);
	for (line = s; line != NULL && *line != '\0'; line = next) {
		if ((next = strchr(line, '\n')) != NULL)
			*next++ = '\0';
		if (strstr(line, "connect(") == NULL ||
		    (strstr(line, "AF_INET") == NULL))
			continue;
		n++;
		if (strstr(line, want) == NULL) {
			fprintf(stderr, "a connection elsewhere: %s\n", line);
			bad++;
		}
	}
	free(s);
	printf("%d connect() calls, %d not to fakellm\n", n, bad);
	assert_true(n > 0);
	assert_int_equal(bad, 0);
}

/* Run the launch in ws, stdin /dev/null, under strace when given; its
 * exit status. */
static int
run_launch(const struct backend_launch *l, const char *ws, const char *out,
    const char *err, const char *strace, const char *trace, double *secs)
{
	char		*argv[BACKEND_ARGV_MAX + 8];
	int		 n = 0, i;
	struct timespec	 t0, t1;
	pid_t		 pid;
	int		 st, fd;

	clock_gettime(CLOCK_MONOTONIC, &t0);
	if ((pid = fork()) == -1)
		fail_msg("fork: %s", strerror(errno));
	if (pid == 0) {
		/* A group of its own: what it leaves running is killed
		 * with it (Codex's node launcher spawns the binary). */
		if (setpgid(0, 0) == -1 || chdir(ws) == -1 ||
		    (fd = open("/dev/null", O_RDONLY)) == -1 ||
		    dup2(fd, 0) == -1 ||
		    (fd = open(out, O_WRONLY | O_CREAT | O_TRUNC, 0600)) ==
		    -1 || dup2(fd, 1) == -1 ||
		    (fd = open(err, O_WRONLY | O_CREAT | O_TRUNC, 0600)) ==
		    -1 || dup2(fd, 2) == -1)
			_exit(126);
		if (strace != NULL) {
			argv[n++] = (char *)(uintptr_t)"strace";
			argv[n++] = (char *)(uintptr_t)"-f";
			argv[n++] = (char *)(uintptr_t)"-e";
			argv[n++] = (char *)(uintptr_t)"trace=connect";
			argv[n++] = (char *)(uintptr_t)"-o";
			argv[n++] = (char *)(uintptr_t)trace;
		}
		for (i = 0; i <= l->argc; i++)
			argv[n++] = l->argv[i];
		execve(strace != NULL ? strace : l->argv[0], argv, l->envp);
		_exit(127);
	}
	st = test_waitpid(pid, RUN_SECONDS, l->argv[0]);
	(void)kill(-pid, SIGKILL);
	clock_gettime(CLOCK_MONOTONIC, &t1);
	*secs = (double)(t1.tv_sec - t0.tv_sec) +
	    (double)(t1.tv_nsec - t0.tv_nsec) / 1e9;
	return st;
}

/* Every request: on the API's path, with the launch's key, never ours. */
static void
check_requests(const struct case_ *c, const struct fakellm *f,
    const char *key)
{
	json_t		*reqs, *r, *h;
	const char	*v;
	char		*dump, want[256];
	size_t		 i;
	int		 task = 0;

	snprintf(want, sizeof(want), "%s%s", c->key_prefix, key);
	reqs = fakellm_requests(f);
	assert_true(json_array_size(reqs) >= 3);
	json_array_foreach(reqs, i, r) {
		v = json_string_value(json_object_get(r, "path"));
		assert_non_null(v);
		if (strncmp(v, c->path, strlen(c->path)) != 0)
			fail_msg("request %zu went to %s, not %s", i, v,
			    c->path);
		h = json_object_get(r, "headers");
		v = json_string_value(json_object_get(h, c->key_header));
		if (v == NULL || strcmp(v, want) != 0)
			fail_msg("request %zu: %s is %s, not the placeholder "
			    "%s", i, c->key_header, v ? v : "(absent)", want);
		dump = json_dumps(r, JSON_COMPACT);
		assert_non_null(dump);
		if (strstr(dump, REAL_KEY) != NULL)
			fail_msg("request %zu holds the user's key", i);
		if (strstr(dump, c->task) != NULL)
			task++;
		/* The profile's model, its role prompt (JSON-escaped). */
		if (c->model != NULL && strstr(dump, c->model) == NULL)
			fail_msg("request %zu is not for %s", i, c->model);
		assert_non_null(strstr(dump, "ROLE-MARKER: say \\\"done\\\""));
		free(dump);
	}
	assert_true(task > 0);
	json_decref(reqs);
}

static void
run_case(const struct case_ *c)
{
	struct backend_args	 a;
	struct backend_launch	 l;
	struct fakellm		 f;
	char			 dir[PATH_MAX], home[PATH_MAX], ws[PATH_MAX];
	char			 path[PATH_MAX], out[PATH_MAX], errp[PATH_MAX];
	char			 url[64], fixture[PATH_MAX], err[256];
	char			 trace[PATH_MAX];
	const char		*prog, *key, *strace;
	char			*s;
	double			 secs;
	int			 st, i;

	if ((prog = h_npm_path(c->npm)) == NULL)
		skip();
	pathf(fixture, "%s/tests/agents/%s",
	    getenv("WARREN_SOURCE_DIR"), c->fixture);
	fakellm_start(&f, fixture);
	snprintf(url, sizeof(url), "http://127.0.0.1:%d", f.port);
	/* Not under /tmp: Codex warns about a CODEX_HOME there. */
	pathf(dir, "%s/%s", tmproot, c->fixture);
	pathf(home, "%s/home", dir);
	pathf(ws, "%s/ws", dir);
	mkdir_p(home);
	mkdir_p(ws);

	memset(&a, 0, sizeof(a));
	a.program = prog;
	a.task = c->task;
	a.base_url = url;
	a.home = home;
	a.workspace = ws;
	a.model = c->model;
	a.prompt = ROLE;
	if (backend_preset_build(c->kind, &a, &l, err, sizeof(err)) == -1)
		fail_msg("backend_preset_build: %s", err);
	assert_string_equal(l.argv[0], prog);
	assert_null(l.argv[l.argc]);
	assert_null(l.envp[l.envc]);
	assert_non_null(l.wire);
	/* Built from nothing: not one variable of ours, the key least. */
	for (i = 0; i < l.envc; i++) {
		assert_null(strstr(l.envp[i], REAL_KEY));
		assert_true(strncmp(l.envp[i], "WARREN_API_KEY=", 15) != 0);
	}
	assert_string_equal(launch_env(&l, "HOME"), home);
	key = launch_env(&l, c->key_env);
	assert_non_null(key);
	write_files(&l, home);

	pathf(out, "%s/stdout", dir);
	pathf(errp, "%s/stderr", dir);
	pathf(trace, "%s/strace.log", dir);
	if ((strace = strace_path()) == NULL)
		printf("%s: no working strace: its connections are not "
		    "checked\n", c->npm);
	st = run_launch(&l, ws, out, errp, strace, trace, &secs);
	printf("%s: exit status %d after %.2f s\n", c->npm, st, secs);
	if (st == -1 || !WIFEXITED(st) || WEXITSTATUS(st) != 0) {
		s = slurp(errp);
		fail_msg("%s: status %d; its stderr:\n%s", c->npm, st,
		    s ? s : "(none)");
	}
	s = slurp(out);
	assert_non_null(s);
	if (strstr(s, c->answer) == NULL)
		fail_msg("%s: stdout has no final answer: %s", c->npm, s);
	free(s);

	check_requests(c, &f, key);
	if (strace != NULL)
		check_connects(trace, f.port);

	pathf(path, "%s/env.txt", ws);
	if ((s = slurp(path)) == NULL)
		fail_msg("%s: no env.txt in the workspace", c->npm);
	assert_null(strstr(s, REAL_KEY));
	assert_non_null(strstr(s, "HOME="));
	free(s);
	pathf(path, "%s/hello.txt", ws);
	if ((s = slurp(path)) == NULL)
		fail_msg("%s: no hello.txt in the workspace", c->npm);
	assert_string_equal(s, c->file);
	free(s);

	/* Nothing in the HOME of this process. */
	assert_int_equal(dir_entries(getenv("HOME")), 0);
	assert_true(secs < 60);
	launch_free(&l);
	fakellm_stop(&f);
}

static void
test_claude_code(void **state)
{
	(void)state;
	run_case(&claude_case);
}

static void
test_codex(void **state)
{
	(void)state;
	run_case(&codex_case);
}

static void
test_codex_code_mode(void **state)
{
	(void)state;
	run_case(&codex_code_mode_case);
}

/* What a preset cannot start without is refused, saying which. */
static void
test_refusals(void **state)
{
	struct backend_args	 a;
	struct backend_launch	 l;
	char			 err[256];

	(void)state;
	memset(&a, 0, sizeof(a));
	a.program = "/usr/bin/claude";
	a.task = "t";
	a.base_url = "http://127.0.0.1:1";
	a.home = "relative/home";
	a.workspace = "/ws";
	assert_int_equal(backend_preset_build(BACKEND_CLAUDE_CODE, &a, &l,
	    err, sizeof(err)), -1);
	assert_non_null(strstr(err, "home"));
	assert_int_equal(l.argc, 0);
	a.home = "/home/x";
	a.base_url = NULL;
	assert_int_equal(backend_preset_build(BACKEND_CODEX, &a, &l, err,
	    sizeof(err)), -1);
	assert_non_null(strstr(err, "base_url"));
	a.base_url = "http://127.0.0.1:1";
	assert_int_equal(backend_preset_build(BACKEND_LOOP, &a, &l, err,
	    sizeof(err)), -1);
	assert_non_null(strstr(err, "no preset"));
	assert_int_equal(backend_preset_build(BACKEND_CODEX, &a, &l, err,
	    sizeof(err)), 0);
	assert_string_equal(l.wire, "responses");
	launch_free(&l);
}

/*
 * node where the user installed it (nvm puts it in no system directory)
 * is in the launch's PATH: Codex's npm launcher needs it. A relative
 * entry of the caller's PATH is never taken.
 */
static void
test_node_path(void **state)
{
	struct backend_args	 a;
	struct backend_launch	 l;
	char			 bin[PATH_MAX], node[PATH_MAX], path[PATH_MAX];
	char			 err[256], *old;
	const char		*v;

	(void)state;
	pathf(bin, "%s/nvm/bin", tmproot);
	mkdir_p(bin);
	pathf(node, "%s/node", bin);
	if (symlink("/bin/true", node) == -1 && errno != EEXIST)
		fail_msg("symlink %s: %s", node, strerror(errno));
	old = strdup(getenv("PATH"));
	assert_non_null(old);
	pathf(path, "bin:%s:/usr/bin:/bin", bin);
	setenv("PATH", path, 1);
	memset(&a, 0, sizeof(a));
	a.program = "/opt/codex/bin/codex.js";
	a.task = "t";
	a.base_url = "http://127.0.0.1:1";
	a.home = "/home/x";
	a.workspace = "/ws";
	assert_int_equal(backend_preset_build(BACKEND_CODEX, &a, &l, err,
	    sizeof(err)), 0);
	v = launch_env(&l, "PATH");
	pathf(path, "/opt/codex/bin:%s:/usr/local/bin:/usr/bin:/bin", bin);
	assert_string_equal(v, path);
	launch_free(&l);

	/* node in a system directory first: not said twice. */
	if (access("/usr/bin/node", X_OK) == 0) {
		pathf(path, "/usr/bin:%s", bin);
		setenv("PATH", path, 1);
		assert_int_equal(backend_preset_build(BACKEND_CODEX, &a, &l,
		    err, sizeof(err)), 0);
		assert_string_equal(launch_env(&l, "PATH"),
		    "/opt/codex/bin:/usr/local/bin:/usr/bin:/bin");
		launch_free(&l);
	} else
		printf("no /usr/bin/node: its PATH not checked\n");
	setenv("PATH", old, 1);
	free(old);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_refusals),
		cmocka_unit_test(test_node_path),
		cmocka_unit_test_teardown(test_claude_code, fakellm_teardown),
		cmocka_unit_test_teardown(test_codex, fakellm_teardown),
		cmocka_unit_test_teardown(test_codex_code_mode,
		    fakellm_teardown),
	};
	const char	*build = getenv("WARREN_BUILD_DIR");
	char		 realhome[PATH_MAX];
	int		 rc;

	/* Under the build tree, not /tmp: Codex warns about a CODEX_HOME
	 * under a temporary directory. */
	snprintf(tmproot, sizeof(tmproot), "%s/test-home",
	    build != NULL ? build : ".");
	(void)mkdir(tmproot, 0755);
	strlcat(tmproot, "/presets.XXXXXX", sizeof(tmproot));
	if (mkdtemp(tmproot) == NULL) {
		perror(tmproot);
		return 1;
	}
	/* A HOME that must stay empty, and the user's key everywhere a
	 * program could look for one. */
	if (snprintf(realhome, sizeof(realhome), "%s/real-home", tmproot) >=
	    (int)sizeof(realhome) || mkdir(realhome, 0700) == -1) {
		perror(realhome);
		return 1;
	}
	setenv("HOME", realhome, 1);
	setenv("WARREN_API_KEY", REAL_KEY, 1);
	setenv("ANTHROPIC_API_KEY", REAL_KEY, 1);
	setenv("OPENAI_API_KEY", REAL_KEY, 1);
	rc = cmocka_run_group_tests(tests, NULL, NULL);
	if (rc == 0)
		h_rm_rf(tmproot);
	return rc;
}

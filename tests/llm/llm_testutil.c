/*
 * Test helpers for the LLM client (see llm_testutil.h).
 */
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "tests/llm/llm_testutil.h"
#include "tests/test_wait.h"

static void
testutil_die(const char *what)
{
	fprintf(stderr, "llm test: %s: %s\n", what, strerror(errno));
	abort();
}

const char *
llm_test_path(const char *rel)
{
	static char	 path[1024];
	const char	*src = getenv("WARREN_SOURCE_DIR");

	if (rel[0] == '/')
		return rel;
	snprintf(path, sizeof(path), "%s/tests/llm/%s",
	    src != NULL ? src : ".", rel);
	return path;
}

char *
llm_test_slurp(const char *path, size_t *len)
{
	FILE	*f;
	char	*s;
	long	 n;

	if ((f = fopen(path, "rb")) == NULL)
		testutil_die(path);
	fseek(f, 0, SEEK_END);
	n = ftell(f);
	fseek(f, 0, SEEK_SET);
	if ((s = malloc((size_t)n + 1)) == NULL)
		testutil_die("malloc");
	if (fread(s, 1, (size_t)n, f) != (size_t)n)
		testutil_die(path);
	s[n] = '\0';
	fclose(f);
	if (len != NULL)
		*len = (size_t)n;
	return s;
}

/* The servers started and not stopped yet, for fakellm_teardown. A copy:
 * the test's struct fakellm is gone with its stack frame. */
#define FAKELLM_LIVE_MAX	16
static struct fakellm	fakellm_live[FAKELLM_LIVE_MAX];

static void
fakellm_remember(const struct fakellm *f)
{
	size_t	i;

	for (i = 0; i < FAKELLM_LIVE_MAX; i++)
		if (fakellm_live[i].pid <= 0) {
			fakellm_live[i] = *f;
			return;
		}
	fprintf(stderr, "llm test: over %d fakellm servers at once\n",
	    FAKELLM_LIVE_MAX);
	abort();
}

static void
fakellm_forget(pid_t pid)
{
	size_t	i;

	for (i = 0; i < FAKELLM_LIVE_MAX; i++)
		if (fakellm_live[i].pid == pid)
			memset(&fakellm_live[i], 0, sizeof(fakellm_live[i]));
}

static void
fakellm_spawn(struct fakellm *f, const char *script)
{
	const char	*bin = getenv("WARREN_FAKELLM_BIN");
	char		 portfile[300];
	struct timespec	 ts = { 0, 10 * 1000 * 1000 };
	FILE		*pf;
	pid_t		 parent = getpid();
	int		 i;

	if (bin == NULL) {
		fprintf(stderr, "llm test: WARREN_FAKELLM_BIN is not set\n");
		abort();
	}
	snprintf(portfile, sizeof(portfile), "%s/port", f->dir);
	snprintf(f->log, sizeof(f->log), "%s/requests.jsonl", f->dir);
	if ((f->pid = fork()) == -1)
		testutil_die("fork");
	if (f->pid == 0) {
		/* Should the test program die (a crash, abort), the server
		 * must not outlive it and hold ctest's pipe open until the
		 * test's timeout; a parent already gone sent no signal. */
		if (prctl(PR_SET_PDEATHSIG, SIGTERM, 0, 0, 0) == -1 ||
		    getppid() != parent)
			_exit(127);
		execl(bin, "fakellm", "--script", script, "--port-file",
		    portfile, "--log", f->log, (char *)NULL);
		_exit(127);
	}
	/* A hang guard, not a timing assumption: 20 s to start. */
	for (i = 0; i < 2000; i++) {
		if ((pf = fopen(portfile, "r")) != NULL) {
			if (fscanf(pf, "%d", &f->port) != 1)
				f->port = 0;
			fclose(pf);
			if (f->port > 0)
				break;
		}
		nanosleep(&ts, NULL);
	}
	if (f->port <= 0) {
		fprintf(stderr, "llm test: fakellm did not start\n");
		abort();
	}
	snprintf(f->url, sizeof(f->url), "http://127.0.0.1:%d/v1", f->port);
	fakellm_remember(f);
}

static void
fakellm_mkdir(struct fakellm *f)
{
	memset(f, 0, sizeof(*f));
	/* A proxy in the environment must not catch 127.0.0.1 (libcurl, and
	 * warren children, read these). */
	setenv("no_proxy", "127.0.0.1,localhost", 1);
	setenv("NO_PROXY", "127.0.0.1,localhost", 1);
	snprintf(f->dir, sizeof(f->dir), "/tmp/warren-llmtest.XXXXXX");
	if (mkdtemp(f->dir) == NULL)
		testutil_die("mkdtemp");
}

void
fakellm_start(struct fakellm *f, const char *fixture)
{
	char	path[1024];

	fakellm_mkdir(f);
	if (fixture[0] == '/')
		snprintf(path, sizeof(path), "%s", fixture);
	else
		snprintf(path, sizeof(path), "%s/tests/llm/fixtures/%s",
		    getenv("WARREN_SOURCE_DIR") != NULL ?
		    getenv("WARREN_SOURCE_DIR") : ".", fixture);
	fakellm_spawn(f, path);
}

void
fakellm_start_json(struct fakellm *f, const char *json)
{
	char	 path[300];
	FILE	*s;

	fakellm_mkdir(f);
	snprintf(path, sizeof(path), "%s/script.json", f->dir);
	if ((s = fopen(path, "w")) == NULL || fputs(json, s) == EOF ||
	    fclose(s) == EOF)
		testutil_die(path);
	fakellm_spawn(f, path);
}

void
fakellm_stop(struct fakellm *f)
{
	char	cmd[400];
	pid_t	pid = f->pid;
	int	status;

	if (pid > 0) {
		f->pid = 0;
		fakellm_forget(pid);
		kill(pid, SIGTERM);
		status = test_waitpid(pid, 10, "fakellm sent SIGTERM");
		if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
			fprintf(stderr, "llm test: fakellm exit status %d\n",
			    status);
	}
	if (f->dir[0] == '/' && strncmp(f->dir, "/tmp/warren-llmtest.", 20) ==
	    0) {
		snprintf(cmd, sizeof(cmd), "rm -rf '%s'", f->dir);
		if (system(cmd) != 0)
			fprintf(stderr, "llm test: cannot remove %s\n", f->dir);
	}
}

int
fakellm_teardown(void **state)
{
	struct fakellm	f;
	size_t		i;

	(void)state;
	for (i = 0; i < FAKELLM_LIVE_MAX; i++)
		if (fakellm_live[i].pid > 0) {
			/* A copy: fakellm_stop clears the table's entry. */
			f = fakellm_live[i];
			fprintf(stderr, "llm test: stopping fakellm %d, left "
			    "running by its test\n", (int)f.pid);
			fakellm_stop(&f);
		}
	return 0;
}

json_t *
fakellm_requests(const struct fakellm *f)
{
	json_t	*arr = json_array(), *o;
	FILE	*l;
	char	*line = NULL;
	size_t	 cap = 0;

	if ((l = fopen(f->log, "r")) == NULL)
		return arr;
	while (getline(&line, &cap, l) != -1) {
		if ((o = json_loads(line, 0, NULL)) != NULL)
			json_array_append_new(arr, o);
	}
	free(line);
	fclose(l);
	return arr;
}

void
llm_test_config(struct llm_config *lc, const struct fakellm *f,
    enum llm_provider p)
{
	llm_config_init(lc);
	lc->provider = p;
	lc->base_url = strdup(f->url);
	lc->model = strdup("test-model");
	lc->backoff_ms = 5;
	lc->backoff_max_ms = 50;
	lc->retries = 3;
	lc->connect_timeout_ms = 5000;
	lc->timeout_ms = 20000;
	lc->idle_timeout_ms = 10000;
	if (lc->base_url == NULL || lc->model == NULL)
		abort();
}

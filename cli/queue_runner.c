/*
 * One queue job's attempt as a child `warren run --json`: its own agent
 * tree, memory graph and copy-on-write layer, which is what keeps parallel
 * jobs on one workspace apart. The child's stdout carries the run's JSON
 * events (supervisor/ui.c, cli/layer.c); its stderr's last line is kept
 * for the error; its stdin is the task, in a memory file. Everything it
 * prints came from a run of agents: parsed as hostile input, bounded.
 */
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/types.h>
#include <sys/wait.h>

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <jansson.h>

#include "common/jschema.h"

#include "cli/queue_work.h"
#include "supervisor/run.h"

#define QRUN_ARGV_MAX	64

/* The job's argv; extra options from $WARREN_QUEUE_RUN_ARGS (for tests:
 * --replay, --cow, ...), split on spaces, in words. */
static char **
queue_runner_argv(const struct qrun *r, const char *exe, char *words,
    char *budget, size_t bsz)
{
	const struct queue_job *j = &r->job;
	static char	*av[QRUN_ARGV_MAX];
	char		*w, *save = NULL;
	int		 n = 0;

	av[n++] = (char *)(uintptr_t)exe;
	av[n++] = "run";
	av[n++] = "--json";
	av[n++] = "--workspace";
	av[n++] = j->workspace;
	if (j->profile != NULL && *j->profile != '\0') {
		av[n++] = "--profile";
		av[n++] = j->profile;
	}
	if (j->budget > 0) {
		snprintf(budget, bsz, "%llu", (unsigned long long)j->budget);
		av[n++] = "--budget";
		av[n++] = budget;
	}
	if (r->schema_file[0] != '\0') {
		av[n++] = "--schema";
		av[n++] = (char *)(uintptr_t)r->schema_file;
	}
	for (w = strtok_r(words, " \t", &save); w != NULL && n <
	    QRUN_ARGV_MAX - 3; w = strtok_r(NULL, " \t", &save))
		av[n++] = w;
	/* The task on stdin (queue_runner_task): an argument's 128 KiB
	 * would refuse a task the run takes up to CMD_RUN_TASK_MAX. */
	av[n++] = "--";
	av[n++] = "-";
	av[n] = NULL;
	return av;
}

/* In the child: its own process group (a SIGINT at the terminal is the
 * worker's to handle), SIGTERM when the worker dies, then exec. A run
 * with a parent-death signal stops hard when its parent dies
 * (supervisor/run_parent.c). */
static void
queue_runner_child(const char *exe, char *const argv[], int in, int out,
    int err, pid_t parent, unsigned flags, const char *who)
{
	sigset_t	none;

	(void)setpgid(0, 0);
	/* The worker may have died before the call: then no signal comes. */
	if (prctl(PR_SET_PDEATHSIG, SIGTERM) == -1 || getppid() != parent)
		_exit(127);
	if (flags & QRUN_SPAWN_DFL) {
		signal(SIGINT, SIG_DFL);
		signal(SIGTERM, SIG_DFL);
	}
	signal(SIGPIPE, SIG_DFL);
	sigemptyset(&none);
	sigprocmask(SIG_SETMASK, &none, NULL);
	if (dup2(in, STDIN_FILENO) == -1 || dup2(out, STDOUT_FILENO) == -1 ||
	    dup2(err, STDERR_FILENO) == -1)
		_exit(127);
	execv(exe, argv);
	dprintf(STDERR_FILENO, "%s: %s: %s\n", who, exe, strerror(errno));
	_exit(127);
}

pid_t
queue_runner_spawn(const char *exe, char *const argv[], int in,
    unsigned flags, const char *who, int fds[2], const char **what)
{
	pid_t	parent = getpid(), pid;
	int	po[2] = { -1, -1 }, pe[2] = { -1, -1 }, e;

	*what = "pipe";
	if (pipe2(po, O_CLOEXEC) == -1 || pipe2(pe, O_CLOEXEC) == -1 ||
	    (*what = "fork", pid = fork()) == -1) {
		e = errno;
		close(in);
		if (po[0] != -1)
			close(po[0]), close(po[1]);
		if (pe[0] != -1)
			close(pe[0]), close(pe[1]);
		errno = e;
		return -1;
	}
	if (pid == 0)
		queue_runner_child(exe, argv, in, po[1], pe[1], parent, flags,
		    who);
	close(in);
	/* Also here: whichever of the two runs first. */
	(void)setpgid(pid, pid);
	close(po[1]);
	close(pe[1]);
	fds[0] = po[0];
	fds[1] = pe[0];
	(void)fcntl(fds[0], F_SETFL, O_NONBLOCK);
	(void)fcntl(fds[1], F_SETFL, O_NONBLOCK);
	return pid;
}

/* The schema's file and directory, once the run is over. */
static void
queue_runner_unschema(struct qrun *r)
{
	if (r->schema_file[0] != '\0')
		(void)unlink(r->schema_file);
	if (r->schema_dir[0] != '\0')
		(void)rmdir(r->schema_dir);
	r->schema_file[0] = r->schema_dir[0] = '\0';
}

/* Is the job's schema one the run can check? One that is not goes
 * without --schema: the check after the run fails it with why. (queue add
 * refuses such a schema; a queue of an older warren may hold one.) */
static int
queue_runner_usable(const char *schema)
{
	char	why[1024];

	return jschema_usable_text(schema, why, sizeof(why)) == 0;
}

/* The job's schema in a file of the worker's own for the run's --schema:
 * a directory only we can enter, a file only we can read. */
static int
queue_runner_schema(struct qrun *r, char *err, size_t errsz)
{
	const char	*tmp = getenv("TMPDIR");
	size_t		 len;
	int		 fd;

	if (r->job.schema == NULL || *r->job.schema == '\0' ||
	    !queue_runner_usable(r->job.schema))
		return 0;
	if (tmp == NULL || *tmp != '/' || strlen(tmp) > 32)
		tmp = "/tmp";
	snprintf(r->schema_dir, sizeof(r->schema_dir), "%s/warren-q-XXXXXX",
	    tmp);
	if (mkdtemp(r->schema_dir) == NULL) {
		snprintf(err, errsz, "the job's schema: mkdtemp %s: %s",
		    r->schema_dir, strerror(errno));
		r->schema_dir[0] = '\0';
		return -1;
	}
	snprintf(r->schema_file, sizeof(r->schema_file), "%s/schema.json",
	    r->schema_dir);
	len = strlen(r->job.schema);
	errno = 0;
	fd = open(r->schema_file, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC,
	    0600);
	if (fd == -1 || write(fd, r->job.schema, len) != (ssize_t)len) {
		snprintf(err, errsz, "the job's schema: %s: %s",
		    r->schema_file, errno ? strerror(errno) : "short write");
		if (fd != -1)
			close(fd);
		queue_runner_unschema(r);
		return -1;
	}
	if (close(fd) == -1) {
		snprintf(err, errsz, "the job's schema: %s: %s",
		    r->schema_file, strerror(errno));
		queue_runner_unschema(r);
		return -1;
	}
	return 0;
}

int
queue_runner_memfd(const char *name, const char *what, const char *s,
    char *err, size_t errsz)
{
	size_t		 len = strlen(s), left = len;
	ssize_t		 n;
	int		 fd;

	if ((fd = memfd_create(name, MFD_CLOEXEC)) == -1) {
		snprintf(err, errsz, "%s: memfd_create: %s", what,
		    strerror(errno));
		return -1;
	}
	errno = 0;
	while (left > 0) {
		if ((n = write(fd, s, left)) == -1 && errno == EINTR)
			continue;
		if (n <= 0)
			break;
		s += n;
		left -= (size_t)n;
	}
	if (left > 0 || lseek(fd, 0, SEEK_SET) == -1) {
		snprintf(err, errsz, "%s: writing %zu bytes to a memory file: "
		    "%s", what, len, errno ? strerror(errno) : "short write");
		close(fd);
		return -1;
	}
	return fd;
}

int
queue_runner_start(struct qrun *r, const char *exe, uint64_t now, char *err,
    size_t errsz)
{
	const char	*extra = getenv("WARREN_QUEUE_RUN_ARGS"), *what;
	char		 budget[32], *words, **av;
	int		 in, fds[2];

	r->pid = -1;
	r->out = r->err = -1;
	r->files = -1;
	if (queue_runner_schema(r, err, errsz) == -1 ||
	    (in = queue_runner_memfd("warren-task", "the job's task",
	    r->job.task, err, errsz)) == -1)
		return -1;
	words = strdup(extra ? extra : "");
	av = queue_runner_argv(r, exe, words ? words : (char *)"", budget,
	    sizeof(budget));
	r->pid = queue_runner_spawn(exe, av, in, QRUN_SPAWN_DFL,
	    "warren queue work", fds, &what);
	free(words);
	if (r->pid == -1) {
		snprintf(err, errsz, "%s: %s", what, strerror(errno));
		return -1;
	}
	r->out = fds[0];
	r->err = fds[1];
	r->started = now;
	/* The job's timeout is the attempt's wall clock, whole run. */
	if (r->job.timeout_ms > 0)
		r->deadline = now + r->job.timeout_ms;
	return 0;
}

/* What an agent's event says it does, for the progress lines. */
static void
queue_runner_doing(struct qrun *r, const char *ev, json_t *o)
{
	const char	*path = json_string_value(json_object_get(o, "path"));
	const char	*prof = json_string_value(json_object_get(o, "profile"));
	const char	*tool = json_string_value(json_object_get(o, "tool"));
	const char	*sum = json_string_value(json_object_get(o, "summary"));
	const char	*end = json_string_value(json_object_get(o, "end"));
	char		 what[QRUN_DOING_MAX / 2], *args;

	if (path == NULL || prof == NULL)
		return;
	what[0] = '\0';
	if (strcmp(ev, "tool_call") == 0 && tool != NULL) {
		args = json_dumps(json_object_get(o, "args"), JSON_COMPACT |
		    JSON_ENCODE_ANY);
		ui_sum_args(tool, args, what, sizeof(what));
		free(args);
		snprintf(r->doing, sizeof(r->doing), "[%s %s] %s: %s", path,
		    prof, tool, what);
	} else if (strcmp(ev, "tool_result") == 0 && tool != NULL)
		snprintf(r->doing, sizeof(r->doing), "[%s %s] %s%s -> %s",
		    path, prof, tool, json_is_true(json_object_get(o,
		    "failed")) ? " FAILED" : "", sum ? sum : "");
	else if (strcmp(ev, "spawned") == 0 || strcmp(ev, "done") == 0)
		snprintf(r->doing, sizeof(r->doing), "[%s %s] %s", path, prof,
		    end != NULL ? end : ev);
	else
		return;
	r->doing_new = 1;
}

/* One event line (linebuf_line): the result, the run's id, the layer's
 * changes, what its agents do; NULL, one past QRUN_LINE_MAX, is skipped. */
static void
queue_runner_event(void *arg, char *line, size_t len)
{
	struct qrun	*r = arg;
	json_t		*o, *x;
	const char	*ev;

	(void)len;
	if (line == NULL || (o = json_loads(line, 0, NULL)) == NULL)
		return;
	if ((ev = json_string_value(json_object_get(o, "event"))) == NULL)
		;
	else if (json_object_get(o, "path") != NULL)
		queue_runner_doing(r, ev, o);
	else if (strcmp(ev, "result") == 0) {
		r->have_result = 1;
		r->ok = json_is_true(json_object_get(o, "ok"));
		free(r->result);
		x = json_object_get(o, "result");
		r->result = json_is_string(x) ? strdup(json_string_value(x)) :
		    NULL;
	} else if (strcmp(ev, "run") == 0 && r->run_id == 0 &&
	    json_is_integer(x = json_object_get(o, "run")))
		r->run_id = json_integer_value(x);
	else if (strcmp(ev, "changes") == 0 &&
	    json_is_integer(x = json_object_get(o, "files")))
		r->files = (long)json_integer_value(x);
	json_decref(o);
}

/* stdout bytes (queue_runner_take): whole lines become events. */
static void
queue_runner_out(void *arg, const char *p, size_t n)
{
	struct qrun	*r = arg;

	linebuf_put(&r->ev, p, n, QRUN_LINE_MAX, queue_runner_event, r);
}

/* stderr bytes (queue_runner_take): keep the last line that is not
 * empty (its head); at the end, a last line without newline counts. */
static void
queue_runner_errout(void *arg, const char *p, size_t n)
{
	struct qrun	*r = arg;
	size_t		 i;

	if (p == NULL && r->errlen > 0)
		p = "\n", n = 1;

	for (i = 0; i < n; i++) {
		if (p[i] != '\n') {
			if (r->errlen < sizeof(r->errbuf) - 1)
				r->errbuf[r->errlen++] = p[i];
			continue;
		}
		if (r->errlen > 0) {
			r->errbuf[r->errlen] = '\0';
			memcpy(r->errline, r->errbuf, r->errlen + 1);
		}
		r->errlen = 0;
	}
}

void
queue_runner_drain(int *fd, queue_runner_take *take, void *arg)
{
	char	buf[65536];
	ssize_t	n;

	for (;;) {
		n = read(*fd, buf, sizeof(buf));
		if (n == -1 && errno == EINTR)
			continue;
		if (n == -1 && (errno == EAGAIN || errno == EWOULDBLOCK))
			return;
		if (n <= 0)
			break;
		take(arg, buf, (size_t)n);
	}
	take(arg, NULL, 0);	/* the end, or an error reading it */
	close(*fd);
	*fd = -1;
}

void
queue_runner_ended(int *out, int *err, queue_runner_take *take_out,
    queue_runner_take *take_err, void *arg)
{
	if (*out != -1)
		queue_runner_drain(out, take_out, arg);
	if (*err != -1)
		queue_runner_drain(err, take_err, arg);
	if (*out != -1)
		close(*out), *out = -1;
	if (*err != -1)
		close(*err), *err = -1;
}

void
queue_runner_read(struct qrun *r, int fd)
{
	if (fd == r->out)
		queue_runner_drain(&r->out, queue_runner_out, r);
	else
		queue_runner_drain(&r->err, queue_runner_errout, r);
}

void
queue_runner_stop(struct qrun *r, enum qrun_stop why, uint64_t now)
{
	if (r->stop == QRUN_NOT_STOPPED)
		r->stop = why;
	if (r->pid <= 0 || r->kill_at != 0)
		return;
	/* The run cancels its agents on SIGTERM (supervisor/run.c). */
	(void)kill(r->pid, SIGTERM);
	r->kill_at = now + QRUN_KILL_GRACE_MS;
}

void
queue_runner_tick(struct qrun *r, uint64_t now)
{
	if (r->pid > 0 && r->deadline != 0 && now >= r->deadline &&
	    r->kill_at == 0)
		queue_runner_stop(r, QRUN_TIMEOUT, now);
	if (r->pid > 0 && r->kill_at != 0 && now >= r->kill_at) {
		(void)kill(-r->pid, SIGKILL);
		(void)kill(r->pid, SIGKILL);
		r->kill_at = UINT64_MAX;
	}
}

int
queue_runner_waited(pid_t *pid, int *status)
{
	pid_t	p;

	if (*pid <= 0)
		return 1;
	if ((p = waitpid(*pid, status, WNOHANG)) == 0 || (p == -1 &&
	    errno == EINTR))
		return 0;
	if (p == -1)
		*status = W_EXITCODE(127, 0);
	*pid = -1;
	return 1;
}

int
queue_runner_reap(struct qrun *r)
{
	if (r->pid <= 0)
		return 1;
	if (!queue_runner_waited(&r->pid, &r->status))
		return 0;
	queue_runner_ended(&r->out, &r->err, queue_runner_out,
	    queue_runner_errout, r);
	return 1;
}

void
queue_runner_free(struct qrun *r)
{
	queue_runner_unschema(r);
	if (r->out != -1)
		close(r->out);
	if (r->err != -1)
		close(r->err);
	linebuf_free(&r->ev);
	free(r->result);
	queue_job_free(&r->job);
	memset(r, 0, sizeof(*r));
	r->out = r->err = -1;
}

/* The e2e harness: see harness.h. */
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/wait.h>

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
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

#include "sandbox/sandbox.h"
#include "tests/e2e/harness.h"

extern char **environ;

static void
h_die(const char *what)
{
	fprintf(stderr, "harness: %s: %s\n", what, strerror(errno));
	abort();
}

char *
h_tmpdir(void)
{
	const char	*t = getenv("TMPDIR");
	char		 tmpl[PATH_MAX], *d;

	snprintf(tmpl, sizeof(tmpl), "%s/warren-e2e.XXXXXX",
	    t && *t ? t : "/tmp");
	if ((d = mkdtemp(tmpl)) == NULL)
		h_die("mkdtemp");
	if (chmod(d, 0777) == -1)
		h_die("chmod");
	if ((d = strdup(d)) == NULL)
		h_die("strdup");
	return d;
}

void
h_ws_open(struct h_ws *w, const char *data)
{
	memset(w, 0, sizeof(*w));
	w->dir = h_tmpdir();
	snprintf(w->ws, sizeof(w->ws), "%s/ws", w->dir);
	snprintf(w->cas, sizeof(w->cas), "%s/session.cassette", w->dir);
	h_write(w->ws, "data.txt", data, 0);
	(void)chmod(w->ws, 0777);
	w->f = h_cassette_open(w->cas);
}

void
h_ws_cassette_close(struct h_ws *w)
{
	if (w->f != NULL)
		fclose(w->f);
	w->f = NULL;
}

void
h_ws_close(struct h_ws *w)
{
	h_ws_cassette_close(w);
	if (w->dir != NULL)
		h_rm_rf(w->dir);
	free(w->dir);
	w->dir = NULL;
}

struct h_ws *
h_ws_new(const char *data)
{
	struct h_ws	*w;

	if ((w = calloc(1, sizeof(*w))) == NULL)
		h_die("calloc");
	h_ws_open(w, data);
	return w;
}

int
h_ws_teardown(void **state)
{
	h_ws_close(*state);
	free(*state);
	return 0;
}

void
h_ws_replay(struct h_ws *w, struct h_run *r, const char *const *opts,
    const char *task, char *const *env, void (*during)(pid_t, void *),
    void *arg)
{
	char	*argv[40] = { "warren", "run", "--json", "--no-store",
		    "--workspace", w->ws, "--replay", w->cas };
	size_t	 n = 8, i;

	h_ws_cassette_close(w);
	for (i = 0; opts != NULL && opts[i] != NULL; i++) {
		if (n + 2 >= sizeof(argv) / sizeof(argv[0]))
			fail_msg("h_ws_replay: more than %zu options",
			    sizeof(argv) / sizeof(argv[0]) - 10);
		argv[n++] = (char *)(uintptr_t)opts[i];
	}
	argv[n++] = (char *)(uintptr_t)task;
	argv[n] = NULL;
	assert_int_equal(h_warren(r, argv, env, during, arg), 0);
}

void
h_write(const char *dir, const char *rel, const char *content, int mode)
{
	char	path[PATH_MAX], *slash;
	FILE	*f;

	(void)mkdir(dir, 0777);
	(void)chmod(dir, 0777);
	snprintf(path, sizeof(path), "%s/%s", dir, rel);
	for (slash = path + strlen(dir) + 1; (slash = strchr(slash, '/')) != NULL;
	    slash++) {
		*slash = '\0';
		(void)mkdir(path, 0777);
		*slash = '/';
	}
	if ((f = fopen(path, "w")) == NULL)
		h_die(path);
	fputs(content, f);
	fclose(f);
	if (chmod(path, (mode_t)(mode ? mode : 0666)) == -1)
		h_die("chmod");
}

FILE *
h_cassette_open(const char *path)
{
	FILE	*f;

	if ((f = fopen(path, "w")) == NULL)
		h_die(path);
	fprintf(f, "{\"warren_cassette\":1}\n");
	return f;
}

void
h_turn(FILE *f, const char *agent, unsigned step, const char *calls)
{
	fprintf(f, "{\"agent\":\"%s\",\"step\":%u,\"purpose\":\"turn\","
	    "\"reply\":{\"stop\":\"tool_calls\",\"usage\":{\"input\":100,"
	    "\"output\":10},\"calls\":%s}}\n", agent, step, calls);
	fflush(f);
}

const char *
h_js(const char *s)
{
	static char	buf[8][8192];
	static int	k;
	char		*o = buf[k = (k + 1) % 8], *e = o + sizeof(buf[0]) - 8;

	*o++ = '"';
	for (; *s != '\0' && o < e; s++) {
		if (*s == '"' || *s == '\\') {
			*o++ = '\\';
			*o++ = *s;
		} else if (*s == '\n') {
			*o++ = '\\';
			*o++ = 'n';
		} else
			*o++ = *s;
	}
	*o++ = '"';
	*o = '\0';
	return buf[k];
}

const char *
h_call(char *buf, size_t sz, const char *id, const char *name,
    const char *args)
{
	snprintf(buf, sz, "{\"id\":\"%s\",\"name\":\"%s\",\"arguments\":%s}",
	    id, name, h_js(args));
	return buf;
}

const char *
h_calls1(const char *id, const char *name, const char *args)
{
	static char	buf[4][8192];
	static int	k;
	char		call[8000];

	k = (k + 1) % 4;
	snprintf(buf[k], sizeof(buf[k]), "[%s]",
	    h_call(call, sizeof(call), id, name, args));
	return buf[k];
}

const char *
h_calls2(const char *id1, const char *n1, const char *a1, const char *id2,
    const char *n2, const char *a2)
{
	static char	buf[16384];
	char		c1[8000], c2[8000];

	snprintf(buf, sizeof(buf), "[%s,%s]", h_call(c1, sizeof(c1), id1, n1,
	    a1), h_call(c2, sizeof(c2), id2, n2, a2));
	return buf;
}

/* The servers started and not stopped yet, for h_fakellm_teardown (by
 * pid: the test's struct h_fakellm may be gone with its stack frame). */
#define H_FAKELLM_LIVE	16
static pid_t	h_fakellm_live[H_FAKELLM_LIVE];

static void
h_fakellm_remember(pid_t pid)
{
	int	i;

	for (i = 0; i < H_FAKELLM_LIVE; i++)
		if (h_fakellm_live[i] <= 0) {
			h_fakellm_live[i] = pid;
			return;
		}
	fprintf(stderr, "harness: over %d fakellm servers at once\n",
	    H_FAKELLM_LIVE);
	abort();
}

static void
h_fakellm_reap(pid_t pid, int sig)
{
	int	i;

	for (i = 0; i < H_FAKELLM_LIVE; i++)
		if (h_fakellm_live[i] == pid)
			h_fakellm_live[i] = 0;
	kill(pid, sig);
	(void)test_waitpid(pid, 10, sig == SIGKILL ? "fakellm, killed" :
	    "fakellm, told to stop");
}

int
h_fakellm_teardown(void **state)
{
	int	i;

	(void)state;
	for (i = 0; i < H_FAKELLM_LIVE; i++)
		if (h_fakellm_live[i] > 0) {
			fprintf(stderr, "harness: stopping fakellm %d, left "
			    "running by its test\n", (int)h_fakellm_live[i]);
			h_fakellm_reap(h_fakellm_live[i], SIGTERM);
		}
	return 0;
}

const char *
h_npm_path(const char *name)
{
	static char	 path[PATH_MAX];
	const char	*src = getenv("WARREN_SOURCE_DIR");

	snprintf(path, sizeof(path), "%s/tests/npm/node_modules/%s%s",
	    src != NULL ? src : ".", strchr(name, '/') != NULL ? "" : ".bin/",
	    name);
	if (access(path, R_OK) == 0)
		return path;
	if (getenv("WARREN_CI") != NULL)
		fail_msg("%s is not installed, and WARREN_CI says it must be: "
		    "run scripts/install-npm.sh", path);
	printf("SKIPPED: %s is not installed (sh scripts/install-npm.sh)\n",
	    path);
	return NULL;
}

int
h_fakellm_start(struct h_fakellm *fl, const char *dir, const char *script)
{
	const char	*fake = getenv("WARREN_FAKELLM_BIN");
	char		 spath[PATH_MAX], port[PATH_MAX], line[64] = "";
	FILE		*f;
	pid_t		 parent = getpid();
	int		 i;

	memset(fl, 0, sizeof(*fl));
	fl->pid = -1;
	if (fake == NULL || access(fake, X_OK) == -1) {
		fprintf(stderr, "skip: no fakellm (WARREN_FAKELLM_BIN)\n");
		return 1;
	}
	h_write(dir, "script.json", script, 0);
	snprintf(spath, sizeof(spath), "%s/script.json", dir);
	snprintf(port, sizeof(port), "%s/port", dir);
	snprintf(fl->log, sizeof(fl->log), "%s/requests.log", dir);
	if ((fl->pid = fork()) == -1)
		h_die("fork");
	if (fl->pid == 0) {
		/* Gone with the test program should it die (a crash, an
		 * abort); a parent already gone sent no signal. */
		if (prctl(PR_SET_PDEATHSIG, SIGTERM, 0, 0, 0) == -1 ||
		    getppid() != parent)
			_exit(127);
		execl(fake, "fakellm", "--script", spath, "--port-file", port,
		    "--log", fl->log, (char *)NULL);
		_exit(127);
	}
	h_fakellm_remember(fl->pid);
	if (h_wait_file(port, 60) == -1) {
		fprintf(stderr, "harness: fakellm wrote no %s\n", port);
		goto fail;
	}
	/* The file may exist before its line is written. */
	for (i = 0; i < 500 && line[0] == '\0'; i++) {
		if ((f = fopen(port, "r")) != NULL) {
			if (fgets(line, sizeof(line), f) == NULL)
				line[0] = '\0';
			fclose(f);
		}
		if (line[0] == '\0')
			usleep(10000);
	}
	line[strcspn(line, "\n")] = '\0';
	if (line[0] == '\0') {
		fprintf(stderr, "harness: fakellm: %s stays empty\n", port);
		goto fail;
	}
	snprintf(fl->env_url, sizeof(fl->env_url),
	    "WARREN_BASE_URL=http://127.0.0.1:%s/v1", line);
	return 0;
fail:
	h_fakellm_reap(fl->pid, SIGKILL);
	fl->pid = -1;
	return -1;
}

void
h_fakellm_stop(struct h_fakellm *fl)
{
	if (fl->pid <= 0)
		return;
	h_fakellm_reap(fl->pid, SIGTERM);
	fl->pid = -1;
}

static char *
h_slurp(const char *path)
{
	FILE	*f;
	char	*s;
	long	 n;

	if ((f = fopen(path, "r")) == NULL)
		return strdup("");
	fseek(f, 0, SEEK_END);
	n = ftell(f);
	fseek(f, 0, SEEK_SET);
	if ((s = calloc(1, (size_t)n + 1)) == NULL)
		h_die("calloc");
	if (n > 0 && fread(s, 1, (size_t)n, f) != (size_t)n)
		h_die("fread");
	fclose(f);
	return s;
}

long long	h_fsize_limit;
long long	h_ulimit_f;
const char	*h_stdin_path;
int		h_hang_guard;

static unsigned long long
h_now_ms(void)
{
	struct timespec	ts;

	if (clock_gettime(CLOCK_MONOTONIC, &ts) == -1)
		h_die("clock_gettime");
	return (unsigned long long)ts.tv_sec * 1000 +
	    (unsigned long long)ts.tv_nsec / 1000000;
}

const char *
h_deadline_missed(const struct h_run *r, const char *deadline)
{
	static char	msg[256];

	if (!r->hung)
		return NULL;
	snprintf(msg, sizeof(msg), "%s did not fire: warren still ran after "
	    "%.1f s and was killed", deadline, (double)r->ms / 1000);
	return msg;
}

/* Does env (NULL-terminated, may be NULL) set the name of "K=V" kv? */
static int
h_env_named(char *const env[], const char *kv)
{
	size_t	len = strcspn(kv, "=");
	int	i;

	for (i = 0; env != NULL && env[i] != NULL; i++)
		if (strncmp(env[i], kv, len + 1) == 0)
			return 1;
	return 0;
}

/* In h_warren's child: sh -c 'ulimit -f N && exec "$0" "$@"' bin
 * argv[1]...: the limit and SIGXFSZ as a user's shell sets them. */
static void __attribute__((noreturn))
h_exec_ulimit(const char *bin, char *const argv[], char *const env[],
    long long blocks)
{
	char	 cmd[96], *av[64];
	int	 n = 0, i;

	snprintf(cmd, sizeof(cmd), "ulimit -f %lld && exec \"$0\" \"$@\"",
	    blocks);
	av[n++] = "sh";
	av[n++] = "-c";
	av[n++] = cmd;
	av[n++] = (char *)(uintptr_t)bin;
	for (i = 1; argv[i] != NULL && n < 63; i++)
		av[n++] = argv[i];
	av[n] = NULL;
	execve("/bin/sh", av, env);
	_exit(127);
}

int
h_warren(struct h_run *r, char *const argv[], char *const extra_env[],
    void (*during)(pid_t, void *), void *arg)
{
	char		 outp[PATH_MAX], errp[PATH_MAX], *dir;
	char		*env[256];
	const char	*bin = getenv("WARREN_BIN");
	struct rlimit	 rl;
	long long	 fsize, ulimit_f;
	const char	*in;
	pid_t		 pid;
	int		 st, i, n = 0, fd, guard;
	unsigned long long t0;

	memset(r, 0, sizeof(*r));
	if (bin == NULL)
		h_die("WARREN_BIN not set");
	dir = h_tmpdir();
	snprintf(outp, sizeof(outp), "%s/stdout", dir);
	snprintf(errp, sizeof(errp), "%s/stderr", dir);
	/* Extras, and what they do not name of ours: a shell keeps the
	 * last of two equal names, getenv the first. */
	for (i = 0; extra_env != NULL && extra_env[i] != NULL && n < 50; i++)
		env[n++] = extra_env[i];
	for (i = 0; environ[i] != NULL && n < 250; i++)
		if (!h_env_named(extra_env, environ[i]))
			env[n++] = environ[i];
	env[n] = NULL;
	fsize = h_fsize_limit;
	h_fsize_limit = 0;
	ulimit_f = h_ulimit_f;
	h_ulimit_f = 0;
	in = h_stdin_path;
	h_stdin_path = NULL;
	guard = h_hang_guard > 0 ? h_hang_guard : H_HANG_GUARD_S;
	h_hang_guard = 0;
	if ((pid = fork()) == -1)
		h_die("fork");
	if (pid == 0) {
		if ((fd = open(outp, O_WRONLY | O_CREAT | O_TRUNC, 0644)) == -1 ||
		    dup2(fd, 1) == -1)
			_exit(127);
		if ((fd = open(errp, O_WRONLY | O_CREAT | O_TRUNC, 0644)) == -1 ||
		    dup2(fd, 2) == -1)
			_exit(127);
		if (in != NULL && ((fd = open(in, O_RDONLY)) == -1 ||
		    dup2(fd, 0) == -1))
			_exit(127);
		/* SIGXFSZ as a shell leaves it: warren must ignore it. */
		if (signal(SIGXFSZ, SIG_DFL) == SIG_ERR)
			_exit(127);
		if (fsize > 0) {
			rl.rlim_cur = rl.rlim_max = (rlim_t)fsize;
			if (setrlimit(RLIMIT_FSIZE, &rl) == -1)
				_exit(127);
		}
		if (ulimit_f > 0)
			h_exec_ulimit(bin, argv, env, ulimit_f);
		execve(bin, argv, env);
		_exit(127);
	}
	t0 = h_now_ms();
	if (during != NULL)
		during(pid, arg);
	for (;;) {
		if (waitpid(pid, &st, WNOHANG) == pid)
			break;
		if (!r->hung && h_now_ms() - t0 >= (unsigned long long)guard *
		    1000) {
			fprintf(stderr, "harness: warren still runs after "
			    "%d s: killing it\n", guard);
			kill(pid, SIGKILL);
			r->hung = 1;
		}
		usleep(20000);
	}
	r->ms = h_now_ms() - t0;
	r->status = WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
	r->out = h_slurp(outp);
	r->err = h_slurp(errp);
	fprintf(stderr, "---- warren exit %d; stderr:\n%s---- stdout:\n%s----\n",
	    r->status, r->err, r->out);
	h_rm_rf(dir);
	free(dir);
	return 0;
}

int
h_warren_v(struct h_run *r, char *const extra_env[], char *first,
    va_list ap)
{
	char	*argv[64];
	int	 n = 0;

	argv[n++] = "warren";
	if (first != NULL)
		argv[n++] = first;
	while (n < 63 && (argv[n] = va_arg(ap, char *)) != NULL)
		n++;
	if (n == 63) {
		fprintf(stderr, "harness: warren %s: over 62 arguments\n",
		    argv[1]);
		abort();
	}
	return h_warren(r, argv, extra_env, NULL, NULL);
}

int
h_warren_l(struct h_run *r, char *const extra_env[], ...)
{
	va_list	ap;
	int	rc;

	va_start(ap, extra_env);
	rc = h_warren_v(r, extra_env, NULL, ap);
	va_end(ap);
	return rc;
}

void
h_run_free(struct h_run *r)
{
	free(r->out);
	free(r->err);
}

char	h_wait_why[1024];

/* Has pid ended? Not reaped: h_warren reaps it. */
static int
h_ended(pid_t pid)
{
	siginfo_t	si;

	memset(&si, 0, sizeof(si));
	return pid > 0 && waitid(P_PID, (id_t)pid, &si, WEXITED | WNOHANG |
	    WNOWAIT) == 0 && si.si_pid == pid;
}

int
h_wait_for(int (*ready)(void *), void *arg, int seconds, pid_t warren,
    const char *what)
{
	unsigned long long	t0 = h_now_ms();

	h_wait_why[0] = '\0';
	for (;;) {
		if (ready(arg))
			return 0;
		if (h_ended(warren)) {
			/* It may have done it on its way out. */
			if (ready(arg))
				return 0;
			snprintf(h_wait_why, sizeof(h_wait_why), "waited %llu "
			    "ms for %s: warren (pid %d) ended first",
			    h_now_ms() - t0, what, (int)warren);
			break;
		}
		if (h_now_ms() - t0 >= (unsigned long long)seconds * 1000) {
			snprintf(h_wait_why, sizeof(h_wait_why), "waited %d s "
			    "for %s: not there", seconds, what);
			break;
		}
		usleep(20000);
	}
	fprintf(stderr, "harness: %s\n", h_wait_why);
	return -1;
}

static int
h_file_there(void *arg)
{
	return access(arg, F_OK) == 0;
}

int
h_wait_file(const char *path, int seconds)
{
	char	what[PATH_MAX + 16];

	snprintf(what, sizeof(what), "the file %s", path);
	return h_wait_for(h_file_there, (void *)(uintptr_t)path, seconds, -1,
	    what);
}

char *
h_read_all(int fd, int seconds, const char *what, size_t *lenp)
{
	unsigned long long	 t0 = h_now_ms(), left;
	struct pollfd		 pfd = { fd, POLLIN, 0 };
	char			*out = NULL, *p;
	size_t			 len = 0;
	ssize_t			 n;

	for (;;) {
		if ((p = realloc(out, len + 65536 + 1)) == NULL)
			h_die("realloc");
		out = p;
		left = (unsigned long long)seconds * 1000;
		if (h_now_ms() - t0 >= left || poll(&pfd, 1, (int)(left -
		    (h_now_ms() - t0))) == 0) {
			fprintf(stderr, "harness: %s: not at its end after "
			    "%d s (%zu bytes read)\n", what, seconds, len);
			free(out);
			return NULL;
		}
		if ((n = read(fd, out + len, 65536)) == -1 && errno == EINTR)
			continue;
		if (n <= 0)
			break;
		len += (size_t)n;
	}
	out[len] = '\0';
	if (lenp != NULL)
		*lenp = len;
	return out;
}

int
h_pty_warren(struct h_run *r, char *const argv[], char *const env[],
    const struct winsize *ws, int seconds)
{
	unsigned long long	t0 = h_now_ms();
	pid_t			pid;
	int			master, st;

	memset(r, 0, sizeof(*r));
	if ((pid = forkpty(&master, NULL, NULL, ws)) == 0) {
		execve(getenv("WARREN_BIN"), argv, env);
		_exit(127);
	}
	if (pid == -1) {
		fprintf(stderr, "harness: forkpty: %s\n", strerror(errno));
		return -1;
	}
	/* Until the slave side closes (EIO). */
	r->out = h_read_all(master, seconds, "warren's terminal output",
	    NULL);
	close(master);
	if (r->out == NULL)
		kill(pid, SIGKILL);
	if ((st = test_waitpid(pid, 10, "warren in a terminal")) == -1 ||
	    r->out == NULL) {
		r->hung = 1;
		free(r->out);
		r->out = NULL;
		return -1;
	}
	r->ms = h_now_ms() - t0;
	r->status = WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
	return 0;
}

int
h_kill_when(pid_t warren, int (*ready)(void *), void *arg, int seconds,
    const char *what)
{
	int	ok;

	ok = h_wait_for(ready, arg, seconds, warren, what) == 0;
	return kill(warren, SIGKILL) == 0 && ok;
}

static int
h_procs_gone(void *arg)
{
	pid_t	pids[1];

	return h_find_procs(arg, pids, 1) == 0;
}

int
h_wait_no_procs(const char *needle, int seconds)
{
	char	what[256];

	snprintf(what, sizeof(what), "no process with \"%s\" in its command "
	    "line", needle);
	return h_wait_for(h_procs_gone, (void *)(uintptr_t)needle, seconds, -1,
	    what);
}

static int
h_procs_there(void *arg)
{
	pid_t	pids[1];

	return h_find_procs(arg, pids, 1) > 0;
}

int
h_wait_procs(const char *needle, int seconds, pid_t warren)
{
	char	what[256];

	snprintf(what, sizeof(what), "a process with \"%s\" in its command "
	    "line", needle);
	return h_wait_for(h_procs_there, (void *)(uintptr_t)needle, seconds,
	    warren, what);
}

int
h_find_procs(const char *needle, pid_t *out, int max)
{
	DIR		*d;
	struct dirent	*de;
	char		 path[64], buf[4096];
	ssize_t		 n, i;
	int		 fd, found = 0;
	pid_t		 pid;

	if ((d = opendir("/proc")) == NULL)
		h_die("/proc");
	while ((de = readdir(d)) != NULL && found < max) {
		if ((pid = (pid_t)atoi(de->d_name)) <= 0 || pid == getpid())
			continue;
		snprintf(path, sizeof(path), "/proc/%d/cmdline", (int)pid);
		if ((fd = open(path, O_RDONLY)) == -1)
			continue;
		n = read(fd, buf, sizeof(buf) - 1);
		close(fd);
		if (n <= 0)
			continue;	/* a zombie or a kernel thread */
		for (i = 0; i < n; i++)
			if (buf[i] == '\0')
				buf[i] = ' ';
		buf[n] = '\0';
		if (strstr(buf, needle) != NULL)
			out[found++] = pid;
	}
	closedir(d);
	return found;
}

/* 1 if ancestor is pid's parent, grandparent ... (by /proc/PID/stat). */
pid_t
h_first_child(pid_t pid)
{
	char	 path[64], buf[64];
	ssize_t	 n;
	int	 fd;

	snprintf(path, sizeof(path), "/proc/%d/task/%d/children", (int)pid,
	    (int)pid);
	if ((fd = open(path, O_RDONLY)) == -1)
		return -1;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return -1;
	buf[n] = '\0';
	return (pid_t)atoi(buf) > 0 ? (pid_t)atoi(buf) : -1;
}

int
h_cgroups_of(pid_t owner)
{
	struct sandbox_caps	 caps;
	struct dirent		*de;
	DIR			*d;
	char			 prefix[32];
	int			 n = 0;

	memset(&caps, 0, sizeof(caps));
	if (sandbox_caps_probe(&caps, 0) == -1 || caps.cgroup == 0 ||
	    (d = opendir(caps.cgroup_path)) == NULL)
		return 0;
	snprintf(prefix, sizeof(prefix), "warren-%d-", (int)owner);
	while ((de = readdir(d)) != NULL)
		if (strncmp(de->d_name, prefix, strlen(prefix)) == 0)
			n++;
	closedir(d);
	return n;
}

int
h_descends(pid_t pid, pid_t ancestor)
{
	char	 path[64], buf[512], *p;
	ssize_t	 n;
	int	 fd, depth;

	for (depth = 0; depth < 64 && pid > 1; depth++) {
		snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
		if ((fd = open(path, O_RDONLY)) == -1)
			return 0;
		n = read(fd, buf, sizeof(buf) - 1);
		close(fd);
		if (n <= 0)
			return 0;
		buf[n] = '\0';
		/* "pid (comm) state ppid": comm may hold spaces and ')'. */
		if ((p = strrchr(buf, ')')) == NULL ||
		    sscanf(p + 1, " %*c %d", &pid) != 1)
			return 0;
		if (pid == ancestor)
			return 1;
	}
	return 0;
}

int
h_count_lines(const char *text, const char *a, const char *b)
{
	const char	*p = text, *nl;
	char		 line[65536];
	size_t		 len;
	int		 n = 0;

	while (*p != '\0') {
		nl = strchr(p, '\n');
		len = nl ? (size_t)(nl - p) : strlen(p);
		if (len >= sizeof(line))
			len = sizeof(line) - 1;
		memcpy(line, p, len);
		line[len] = '\0';
		if (strstr(line, a) != NULL && (b == NULL ||
		    strstr(line, b) != NULL))
			n++;
		p += nl ? (size_t)(nl - p) + 1 : strlen(p);
	}
	return n;
}

char *
h_read_file(const char *path)
{
	return h_slurp(path);
}

int
h_count_file(const char *path, const char *a, const char *b)
{
	char	*s = h_slurp(path);
	int	 n;

	n = h_count_lines(s, a, b);
	free(s);
	return n;
}

void
h_rm_rf(const char *dir)
{
	pid_t	pid;
	int	st;

	if ((pid = fork()) == 0) {
		execl("/bin/rm", "rm", "-rf", dir, (char *)NULL);
		_exit(127);
	}
	if (pid > 0 && (st = test_waitpid(pid, 120, "rm -rf of a test's "
	    "directory")) == -1)
		fprintf(stderr, "harness: %s is left behind\n", dir);
}

int
h_tmux_have(void)
{
	return system("tmux -V >/dev/null 2>&1") == 0;
}

/* The servers named and not yet killed, for h_tmux_teardown. */
#define H_TMUX_MAX	8
static char	h_tmux_socks[H_TMUX_MAX][64];

void
h_tmux_sock(char *buf, size_t sz, const char *tag)
{
	static int	n;
	size_t		i;

	snprintf(buf, sz, "%s-%ld-%d", tag, (long)getpid(), ++n);
	for (i = 0; i < H_TMUX_MAX; i++)
		if (h_tmux_socks[i][0] == '\0') {
			snprintf(h_tmux_socks[i], sizeof(h_tmux_socks[i]), "%s",
			    buf);
			return;
		}
	errno = ENOSPC;
	h_die("more than 8 tmux servers alive at once");
}

/* "tmux -u -L sock -f /dev/null " and fmt's arguments, into cmd. */
static void
h_tmux_cmd(char *cmd, size_t sz, const char *sock, const char *fmt,
    va_list ap)
{
	int	n;

	n = snprintf(cmd, sz, "tmux -u -L %s -f /dev/null ", sock);
	if (n < 0 || (size_t)n >= sz || vsnprintf(cmd + n, sz - (size_t)n,
	    fmt, ap) >= (int)(sz - (size_t)n))
		h_die("a tmux command line longer than 4 KiB");
}

int
h_tmux(const char *sock, const char *fmt, ...)
{
	char	cmd[4096];
	va_list	ap;

	va_start(ap, fmt);
	h_tmux_cmd(cmd, sizeof(cmd), sock, fmt, ap);
	va_end(ap);
	return system(cmd);
}

char *
h_tmux_out(const char *sock, const char *fmt, ...)
{
	char	 cmd[4096 + 16], buf[4096], *out = NULL;
	size_t	 len = 0, n;
	va_list	 ap;
	FILE	*p;

	va_start(ap, fmt);
	h_tmux_cmd(cmd, sizeof(cmd) - 16, sock, fmt, ap);
	va_end(ap);
	strcat(cmd, " 2>/dev/null");
	if ((p = popen(cmd, "r")) == NULL)
		h_die(cmd);
	while ((n = fread(buf, 1, sizeof(buf), p)) > 0) {
		if ((out = realloc(out, len + n + 1)) == NULL)
			h_die("realloc");
		memcpy(out + len, buf, n);
		len += n;
	}
	pclose(p);
	if (out == NULL && (out = strdup("")) == NULL)
		h_die("strdup");
	out[len] = '\0';
	return out;
}

char *
h_tmux_pane(const char *sock, const char *target, int lines)
{
	if (lines > 0)
		return h_tmux_out(sock, "capture-pane -p -S -%d -t %s", lines,
		    target);
	return h_tmux_out(sock, "capture-pane -p -t %s", target);
}

/* How many times want is in s. */
static int
h_tmux_count(const char *s, const char *want)
{
	int	n = 0;

	for (; (s = strstr(s, want)) != NULL; s++)
		n++;
	return n;
}

int
h_tmux_wait(const char *sock, const char *target, int lines,
    const char *want, int count, int seconds, char **pane)
{
	uint64_t	end = h_now_ms() + (uint64_t)seconds * 1000;

	*pane = NULL;
	for (;;) {
		free(*pane);
		*pane = h_tmux_pane(sock, target, lines);
		if (h_tmux_count(*pane, want) >= count)
			return 0;
		if (h_now_ms() > end)
			break;
		usleep(50 * 1000);
	}
	fprintf(stderr, "harness: waited %d s for %d x \"%s\" in tmux pane "
	    "%s (server %s); it shows:\n%s\n", seconds, count, want, target,
	    sock, *pane);
	return -1;
}

void
h_tmux_kill(const char *sock)
{
	size_t	i;

	(void)h_tmux(sock, "kill-server >/dev/null 2>&1");
	for (i = 0; i < H_TMUX_MAX; i++)
		if (strcmp(h_tmux_socks[i], sock) == 0)
			h_tmux_socks[i][0] = '\0';
}

int
h_tmux_teardown(void **state)
{
	size_t	i;

	for (i = 0; i < H_TMUX_MAX; i++)
		if (h_tmux_socks[i][0] != '\0')
			h_tmux_kill(h_tmux_socks[i]);
	return h_fakellm_teardown(state);
}

void
h_user_env(void)
{
	const char	*keep[] = { "WARREN_BIN", "WARREN_FAKELLM_BIN", "TMPDIR",
			    NULL };
	char		*val[3];
	int		 i;

	for (i = 0; keep[i] != NULL; i++)
		val[i] = getenv(keep[i]) ? strdup(getenv(keep[i])) : NULL;
	if (clearenv() != 0)
		abort();
	for (i = 0; keep[i] != NULL; i++) {
		if (val[i] != NULL && setenv(keep[i], val[i], 1) == -1)
			abort();
		free(val[i]);
	}
	if (setenv("PATH", "/usr/local/bin:/usr/bin:/bin:/usr/sbin:/sbin",
	    1) == -1)
		abort();
}

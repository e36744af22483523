/*
 * The copy-on-write layer's mount (workspace/cow_mount.c) as workers get
 * it: spawn servers asked to enter a layer (spawnd_client_layer), workers
 * (a sandboxed /bin/sh, profile general) that write, delete and read the
 * workspace's path, and what lands where: in the layer's upper/ or tree/,
 * never in the workspace. Two servers on one workspace do not see each
 * other's writes, two workers of one server do. A layer that cannot be
 * entered fails the start with its cause. And the sandbox inside the
 * layer is the one outside: the same layers applied to a worker, the same
 * answers from the namespace probe, .git still read-only.
 *
 * The cow directories are made by hand here (upper/ work/, or tree/):
 * what cow_create makes is tested with it.
 */
#include <sys/types.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <sys/xattr.h>

#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/seccomp.h>

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "agent/profile.h"
#include "sandbox/sandbox.h"
#include "spawnd/spawn.h"
#include "supervisor/spawnd_client.h"
#include "tests/e2e/harness.h"
#include "workspace/cow.h"
#include "tests/test_wait.h"

#define JOB_DEADLINE_MS	30000

/* One worker: started, its stderr read to EOF, its exit reported. */
struct job {
	int		 spawned, exited, failed;
	pid_t		 pid;
	struct spawn_child c;
	int		 code, status;
	char		 err[1024];
	char		 out[8192];
	size_t		 outlen;
};

/* A test's tree: the workspace and two cow directories beside it. */
struct fx {
	char		*dir;
	char		 ws[PATH_MAX];
	struct cow	 a, b;
};

static void
job_spawned(void *cookie, const struct spawn_child *c, const char *err,
    void *arg)
{
	struct job	*j = cookie;

	(void)arg;
	j->spawned = 1;
	if (c == NULL) {
		j->failed = 1;
		snprintf(j->err, sizeof(j->err), "%s", err);
		return;
	}
	j->c = *c;
	j->pid = c->pid;
}

static void
job_exited(pid_t pid, int code, int status, void *arg)
{
	struct job	*j = arg;

	if (pid != j->pid)
		fail_msg("exit of pid %d, not our worker %d", (int)pid,
		    (int)j->pid);
	j->exited = 1;
	j->code = code;
	j->status = status;
}

static void
on_alarm(int signo)
{
	static const char msg[] = "test_cow_mount: a test took over 30 s "
	    "(a spawn server that never ends?)\n";

	(void)signo;
	(void)write(2, msg, sizeof(msg) - 1);
	_exit(1);
}

/* A hang is a failure, in seconds. */
static int
deadline(void **state)
{
	(void)state;
	signal(SIGALRM, on_alarm);
	alarm(30);
	return 0;
}

static const struct spawnd_client_ops job_ops = { job_spawned, job_exited };
static void	start_fails(const struct cow *, const char *const *);

/* Read what the worker wrote on stderr; 1 at EOF. */
static int
job_drain(struct job *j)
{
	ssize_t	 n;

	while ((n = read(j->c.err_fd, j->out + j->outlen,
	    sizeof(j->out) - 1 - j->outlen)) > 0)
		j->outlen += (size_t)n;
	j->out[j->outlen] = '\0';
	return n == 0 || j->outlen == sizeof(j->out) - 1;
}

/*
 * sh -c script in a worker of d (profile general on ws): its stderr in
 * j->out; returns its exit status.
 */
static int
job_run(struct spawnd_client *d, const char *ws, const char *script,
    struct job *j)
{
	struct sandbox_policy	 pol;
	struct sandbox_error	 e;
	struct spawn_req	 req;
	struct pollfd		 pfd[2];
	char			*argv[] = { "sh", "-c", (char *)(uintptr_t)script,
				    NULL };
	char			**env = spawn_env(), err[256];
	int			 eof = 0, waited = 0;

	memset(j, 0, sizeof(*j));
	memset(&e, 0, sizeof(e));
	if (profile_policy(&pol, "general", ws, &e) == -1)
		fail_msg("policy: %s", e.msg);
	memset(&req, 0, sizeof(req));
	req.bin = "/bin/sh";
	req.argv = argv;
	req.envp = env;
	req.policy = &pol;
	if (spawnd_client_request(d, &req, j, err, sizeof(err)) == 0)
		fail_msg("request: %s", err);
	while (!j->spawned || (!j->failed && (!eof || !j->exited))) {
		pfd[0].fd = spawnd_client_fd(d);
		pfd[0].events = POLLIN;
		pfd[1].fd = j->spawned && !eof ? j->c.err_fd : -1;
		pfd[1].events = POLLIN;
		if (poll(pfd, 2, 1000) == 0 && (waited += 1000) >
		    JOB_DEADLINE_MS)
			fail_msg("worker: no end in %d s (%s)",
			    JOB_DEADLINE_MS / 1000, script);
		assert_int_equal(spawnd_client_read(d, &job_ops, j), 0);
		if (j->spawned && !j->failed && !eof)
			eof = job_drain(j);
	}
	spawn_env_free(env);
	if (j->failed)
		fail_msg("spawn: %s", j->err);
	spawn_release(&j->c);
	return j->code == CLD_EXITED ? j->status : 128 + j->status;
}

/* Like job_run, the script's exit status must be 0. */
static void
job_ok(struct spawnd_client *d, const char *ws, const char *script,
    struct job *j)
{
	int	 st;

	if ((st = job_run(d, ws, script, j)) != 0)
		fail_msg("worker exited %d: %s\n%s", st, script, j->out);
}

static void
fx_cow(struct fx *f, struct cow *c, const char *name, enum cow_mode mode)
{
	char	 p[PATH_MAX + 16];

	memset(c, 0, sizeof(*c));
	c->mode = mode;
	snprintf(c->dir, sizeof(c->dir), "%s/%s", f->dir, name);
	strlcpy(c->workspace, f->ws, sizeof(c->workspace));
	assert_int_equal(mkdir(c->dir, 0700), 0);
	if (mode == COW_OVERLAY) {
		snprintf(p, sizeof(p), "%s/upper", c->dir);
		assert_int_equal(mkdir(p, 0700), 0);
		snprintf(p, sizeof(p), "%s/work", c->dir);
		assert_int_equal(mkdir(p, 0700), 0);
		return;
	}
	/* copy mode: the copy cow_create would make */
	snprintf(p, sizeof(p), "%s/tree", c->dir);
	h_write(p, "a", "base\n", 0666);
	h_write(p, "c", "gone\n", 0666);
	h_write(p, "d/x", "x\n", 0666);
	h_write(p, ".git/HEAD", "ref: refs/heads/main\n", 0666);
}

/* ws: a "base", c (deleted by the tests), d/x, .git/HEAD. */
static void
fx_open(struct fx *f, const char *wsname, enum cow_mode mode)
{
	char	*d;

	memset(f, 0, sizeof(*f));
	f->dir = h_tmpdir();
	snprintf(f->ws, sizeof(f->ws), "%s/%s", f->dir, wsname);
	h_write(f->ws, "a", "base\n", 0666);
	h_write(f->ws, "c", "gone\n", 0666);
	h_write(f->ws, "d/x", "x\n", 0666);
	h_write(f->ws, ".git/HEAD", "ref: refs/heads/main\n", 0666);
	assert_non_null(d = realpath(f->ws, NULL));
	strlcpy(f->ws, d, sizeof(f->ws));
	free(d);
	fx_cow(f, &f->a, "cow-a", mode);
	fx_cow(f, &f->b, "cow-b", mode);
}

static void
fx_close(struct fx *f)
{
	h_rm_rf(f->dir);
	free(f->dir);
}

static void
file_is(const char *dir, const char *rel, const char *want)
{
	char	 p[PATH_MAX + 64], *s;

	snprintf(p, sizeof(p), "%s/%s", dir, rel);
	if ((s = h_read_file(p)) == NULL)
		fail_msg("%s: %s (want \"%s\")", p, strerror(errno), want);
	if (strcmp(s, want) != 0)
		fail_msg("%s holds \"%s\", want \"%s\"", p, s, want);
	free(s);
}

static void
file_absent(const char *dir, const char *rel)
{
	struct stat	 st;
	char		 p[PATH_MAX + 64];

	snprintf(p, sizeof(p), "%s/%s", dir, rel);
	if (lstat(p, &st) == 0)
		fail_msg("%s exists (mode 0%o)", p, (unsigned)st.st_mode);
}

/* The real workspace, as fx_open left it. */
static void
ws_untouched(const struct fx *f)
{
	file_is(f->ws, "a", "base\n");
	file_is(f->ws, "c", "gone\n");
	file_is(f->ws, "d/x", "x\n");
	file_absent(f->ws, "b");
	file_absent(f->ws, "d/y");
}

static struct spawnd_client *
server(const struct cow *c)
{
	struct spawnd_client	*d;
	char			 err[1024];
	int			 memfd = -1;

	if ((d = spawnd_client_start(err, sizeof(err))) == NULL)
		fail_msg("spawn server: %s", err);
	if (c != NULL && spawnd_client_layer(d, c, &memfd, err, sizeof(err))
	    == -1)
		fail_msg("spawn server's layer: %s", err);
	if (memfd != -1)
		close(memfd);
	return d;
}

/* The layers a worker of d got (WARREN_SANDBOX's a=), from its output. */
static unsigned
applied(const char *out)
{
	const char	*s;
	unsigned	 a;

	if ((s = strstr(out, "SB:v1;a=")) == NULL ||
	    sscanf(s, "SB:v1;a=%x", &a) != 1)
		fail_msg("no sandbox report in the worker's output:\n%s", out);
	return a;
}

/*
 * A worker's writes are in the workspace's path for it and the next
 * worker of the server, in upper/ as plain files, a whiteout and an
 * opaque directory, and nowhere in the real workspace.
 */
static void
test_overlay(void **state)
{
	struct spawnd_client	*d, *plain;
	struct job		 j;
	struct stat		 st;
	struct fx		 f;
	char			 p[PATH_MAX + 64], script[PATH_MAX + 512], v[8];
	unsigned		 in_layer;

	(void)state;
	fx_open(&f, "ws", COW_OVERLAY);
	d = server(&f.a);
	snprintf(script, sizeof(script), "cd '%s' && cat a >&2 && "
	    "echo mod > a && echo new > b && rm c && rm -r d && mkdir d && "
	    "echo y > d/y && { if (echo x > .git/HEAD) 2>/dev/null; then echo "
	    "GIT:ESCAPED; else echo GIT:HELD; fi; echo \"SB:$WARREN_SANDBOX\"; "
	    "} >&2", f.ws);
	job_ok(d, f.ws, script, &j);
	if (strncmp(j.out, "base\n", 5) != 0 ||
	    strstr(j.out, "GIT:HELD") == NULL)
		fail_msg("worker 1 said:\n%s", j.out);
	in_layer = applied(j.out);
	/* The next worker of the server sees it all. */
	snprintf(script, sizeof(script), "cd '%s' && cat a b d/y >&2 && "
	    "test ! -e c && test ! -e d/x", f.ws);
	job_ok(d, f.ws, script, &j);
	assert_string_equal(j.out, "mod\nnew\ny\n");
	ws_untouched(&f);
	snprintf(p, sizeof(p), "%s/upper", f.a.dir);
	file_is(p, "a", "mod\n");
	file_is(p, "b", "new\n");
	file_is(p, "d/y", "y\n");
	file_absent(p, "d/x");
	file_absent(p, ".git/HEAD");
	/* c deleted: a whiteout, a 0/0 character device. */
	snprintf(p, sizeof(p), "%s/upper/c", f.a.dir);
	assert_int_equal(lstat(p, &st), 0);
	assert_true(S_ISCHR(st.st_mode));
	assert_int_equal(st.st_rdev, 0);
	/* d removed and made again: opaque, in the xattr namespace of
	 * userxattr for an ordinary user. */
	snprintf(p, sizeof(p), "%s/upper/d", f.a.dir);
	memset(v, 0, sizeof(v));
	if (getxattr(p, geteuid() == 0 ? "trusted.overlay.opaque" :
	    "user.overlay.opaque", v, sizeof(v) - 1) != 1 || v[0] != 'y')
		fail_msg("%s is not opaque (%s)", p, strerror(errno));
	spawnd_client_stop(d);
	/* The same layers for a worker of a server without one. */
	plain = server(NULL);
	snprintf(script, sizeof(script), "echo \"SB:$WARREN_SANDBOX\" >&2");
	job_ok(plain, f.ws, script, &j);
	spawnd_client_stop(plain);
	assert_int_equal(applied(j.out), in_layer);
	assert_true(in_layer & SANDBOX_MNTNS);
	fx_close(&f);
}

/* KiB a saved layer may take beyond its bound: the tmpfs's
 * COW_BOUND_SLACK, and the upper's directories on disk (4 KiB blocks). */
#define BOUND_SLACK_KIB	(COW_BOUND_SLACK / 1024 + 32)
#define BOUND		(8 << 20)

/* KiB the tree under dir takes on disk (du -sk). */
static long long
du_kib(const char *dir)
{
	char		 cmd[PATH_MAX + 128];
	long long	 kib = -1;
	FILE		*p;

	snprintf(cmd, sizeof(cmd), "du -sk '%s'", dir);
	assert_non_null(p = popen(cmd, "r"));
	if (fscanf(p, "%lld", &kib) != 1)
		kib = -1;
	pclose(p);
	if (kib < 0)
		fail_msg("du -sk %s said nothing", dir);
	return kib;
}

/* path's lstat, or the test fails. */
static void
lstat_ok(const char *dir, const char *rel, struct stat *st)
{
	char	p[PATH_MAX + 64];

	snprintf(p, sizeof(p), "%s/%s", dir, rel);
	if (lstat(p, st) == -1)
		fail_msg("%s: %s", p, strerror(errno));
}

/* What the first server over a bounded layer wrote, saved in upper. */
static void
bound_saved(const char *up)
{
	struct stat	 st, st2;
	char		 p[PATH_MAX + 64], v[8];

	file_is(up, "a", "mod\n");
	file_is(up, "d/y", "y\n");
	lstat_ok(up, "c", &st);
	assert_true(S_ISCHR(st.st_mode) && st.st_rdev == 0);
	snprintf(p, sizeof(p), "%s/d", up);
	memset(v, 0, sizeof(v));
	if (getxattr(p, geteuid() == 0 ? "trusted.overlay.opaque" :
	    "user.overlay.opaque", v, sizeof(v) - 1) != 1 || v[0] != 'y')
		fail_msg("%s is not opaque (%s)", p, strerror(errno));
	lstat_ok(up, "h1", &st);
	lstat_ok(up, "h2", &st2);
	assert_int_equal(st.st_ino, st2.st_ino);
	lstat_ok(up, "sparse", &st);
	assert_int_equal(st.st_size, 4 << 20);
	assert_true(st.st_blocks * 512 < 1 << 20);
	lstat_ok(up, "l", &st);
	assert_true(S_ISLNK(st.st_mode));
}

/*
 * disk_max held by the kernel (workspace/cow_bound.c): a layer with a
 * bound has its upper on a tmpfs that big, in the server's namespace
 * (upper/ on disk holds none of it meanwhile). 64 writers of bound / 8
 * at once fail with ENOSPC past it. The server's end saves the layer to
 * upper/ whole: files, a whiteout, an opaque directory, a hard link kept
 * one file, a sparse file kept sparse, a symbolic link, and no more than
 * the bound. A second server over it goes on from it, a save cut short
 * (upper.new left) removed first.
 */
static void
test_bound(void **state)
{
	static const char *const small[] = { "No space left on device",
				    "already holds more than disk_max", NULL };
	struct spawnd_client	*d;
	struct job		 j;
	struct fx		 f;
	char			 up[PATH_MAX + 64], s[PATH_MAX + 512];
	char			 nw[PATH_MAX + 64], nwf[PATH_MAX + 80];
	long long		 kib;
	int			 fd;

	(void)state;
	fx_open(&f, "ws", COW_OVERLAY);
	f.a.bound = BOUND;
	snprintf(up, sizeof(up), "%s/upper", f.a.dir);
	d = server(&f.a);
	snprintf(s, sizeof(s), "cd '%s' && echo mod > a && rm c && rm -r d && "
	    "mkdir d && echo y > d/y && truncate -s 4M sparse && ln -s a l && "
	    "head -c 100000 /dev/zero > h1 && ln h1 h2 && { for i in "
	    "$(seq 64); do head -c 1048576 /dev/zero > f$i 2>/dev/null & "
	    "done; wait; } && if echo x > full 2>/dev/null; then echo "
	    "WROTE >&2; fi; df -k . >&2", f.ws);
	job_ok(d, f.ws, s, &j);
	if (strstr(j.out, "WROTE") != NULL)
		fail_msg("a write past the bound was taken:\n%s", j.out);
	file_absent(up, "a");
	spawnd_client_stop(d);
	ws_untouched(&f);
	bound_saved(up);
	kib = du_kib(up);
	print_message("64 writers of 1 MiB in a layer bounded at 8 MiB: "
	    "upper/ takes %lld KiB once saved\n", kib);
	assert_true(kib <= BOUND / 1024 + BOUND_SLACK_KIB);
	/* A save cut short left upper.new (upper is the last whole one):
	 * the next enter removes it, so that server's own save is made. */
	snprintf(nw, sizeof(nw), "%s/upper.new", f.a.dir);
	assert_int_equal(mkdir(nw, 0700), 0);
	snprintf(nwf, sizeof(nwf), "%s/partial", nw);
	assert_int_not_equal(fd = open(nwf, O_WRONLY | O_CREAT | O_EXCL |
	    O_CLOEXEC, 0600), -1);
	close(fd);
	/* A second server goes on from the saved layer. */
	d = server(&f.a);
	snprintf(s, sizeof(s), "cd '%s' && cat a d/y >&2 && test ! -e c && "
	    "test ! -e d/x && rm f* && echo more > b", f.ws);
	job_ok(d, f.ws, s, &j);
	assert_string_equal(j.out, "mod\ny\n");
	spawnd_client_stop(d);
	bound_saved(up);
	file_is(up, "b", "more\n");
	file_absent(up, "f1");
	file_absent(f.a.dir, "upper.new");
	/* A bound under what the layer holds: refused, the layer kept. */
	f.a.bound = 4096;	/* a tmpfs of 68 KiB; h1 is 98 */
	start_fails(&f.a, small);
	bound_saved(up);
	file_is(up, "b", "more\n");
	fx_close(&f);
}

/*
 * The supervisor killed (-9) while a worker writes a bounded layer: the
 * server kills the worker and saves the tmpfs before it ends, so what was
 * written is in upper/ for a resume. Here the supervisor is a child of
 * the test; it tells its server's pid once the worker has written. A
 * resume's server started at once waits for that save (the cow
 * directory's flock) and goes on from it: the 2,000 files the worker
 * wrote first make the save take long enough (0.3 s or more) for the
 * second server to come in while it runs.
 */
static void
bound_parent(const struct fx *f, int fd)
{
	struct spawnd_client	*d;
	struct sandbox_policy	 pol;
	struct sandbox_error	 e;
	struct spawn_req	 req;
	struct job		 j;
	struct pollfd		 pfd[2];
	char			 s[PATH_MAX + 256], err[256];
	char			*argv[] = { "sh", "-c", s, NULL };
	pid_t			 sp;

	d = server(&f->a);
	snprintf(s, sizeof(s), "cd '%s' && mkdir many && for i in $(seq "
	    "2000); do : > many/$i; done && echo kept > k && echo WRITTEN >&2 "
	    "&& sleep 600", f->ws);
	memset(&j, 0, sizeof(j));
	memset(&e, 0, sizeof(e));
	if (profile_policy(&pol, "general", f->ws, &e) == -1)
		_exit(2);
	memset(&req, 0, sizeof(req));
	req.bin = "/bin/sh";
	req.argv = argv;
	req.envp = spawn_env();
	req.policy = &pol;
	if (spawnd_client_request(d, &req, &j, err, sizeof(err)) == 0)
		_exit(3);
	while (strstr(j.out, "WRITTEN") == NULL) {
		pfd[0].fd = spawnd_client_fd(d);
		pfd[0].events = POLLIN;
		pfd[1].fd = j.spawned && !j.failed ? j.c.err_fd : -1;
		pfd[1].events = POLLIN;
		if (poll(pfd, 2, JOB_DEADLINE_MS) <= 0 ||
		    spawnd_client_read(d, &job_ops, &j) == -1 || j.failed ||
		    (j.spawned && job_drain(&j) && strstr(j.out, "WRITTEN") ==
		    NULL))
			_exit(4);
	}
	sp = spawnd_client_pid(d);
	(void)write(fd, &sp, sizeof(sp));
	pause();
	_exit(5);
}

static void
test_bound_killed(void **state)
{
	struct spawnd_client	*d;
	struct job	 j;
	struct fx	 f;
	char		 up[PATH_MAX + 64], s[PATH_MAX + 128];
	pid_t		 pid, sp = -1;
	int		 p[2], i, st;

	(void)state;
	fx_open(&f, "ws", COW_OVERLAY);
	f.a.bound = BOUND;
	snprintf(up, sizeof(up), "%s/upper", f.a.dir);
	assert_int_equal(pipe(p), 0);
	if ((pid = fork()) == 0) {
		close(p[0]);
		bound_parent(&f, p[1]);
	}
	close(p[1]);
	if (test_read(p[0], &sp, sizeof(sp), 60, "the spawn server's pid from "
	    "the supervisor's stand-in") != sizeof(sp)) {
		kill(pid, SIGKILL);
		(void)test_waitpid(pid, 10, "the stand-in, killed");
		fail_msg("the killed supervisor's stand-in ended, or did not "
		    "write, before its worker wrote (60 s)");
	}
	close(p[0]);
	file_absent(up, "k");
	assert_int_equal(kill(pid, SIGKILL), 0);
	assert_int_equal(waitpid(pid, &st, 0), pid);	/* after SIGKILL */
	/* A resume at once: it sees what the killed run wrote. */
	d = server(&f.a);
	snprintf(s, sizeof(s), "cd '%s' && cat k >&2 && ls many | wc -l >&2",
	    f.ws);
	job_ok(d, f.ws, s, &j);
	assert_string_equal(j.out, "kept\n2000\n");
	spawnd_client_stop(d);
	/* The old server saved, then ended: 10 s at most. */
	for (i = 0; i < 1000 && kill(sp, 0) == 0; i++)
		usleep(10 * 1000);
	if (kill(sp, 0) == 0)
		fail_msg("the spawn server %d did not end in 10 s after its "
		    "supervisor was killed", (int)sp);
	file_is(up, "k", "kept\n");
	fx_close(&f);
}

/*
 * Two servers on one workspace at once, each with its own layer: each
 * sees its own writes, never the other's, and the workspace neither.
 */
static void
parallel(enum cow_mode mode)
{
	struct spawnd_client	*da, *db;
	struct job		 j;
	struct fx		 f;
	char			 s[PATH_MAX + 128], p[PATH_MAX + 64];

	fx_open(&f, "ws", mode);
	da = server(&f.a);
	db = server(&f.b);
	snprintf(s, sizeof(s), "cd '%s' && echo A > f && rm c", f.ws);
	job_ok(da, f.ws, s, &j);
	snprintf(s, sizeof(s), "cd '%s' && echo B > f && echo B > a", f.ws);
	job_ok(db, f.ws, s, &j);
	snprintf(s, sizeof(s), "cd '%s' && cat f a >&2 && test ! -e c", f.ws);
	job_ok(da, f.ws, s, &j);
	assert_string_equal(j.out, "A\nbase\n");
	snprintf(s, sizeof(s), "cd '%s' && cat f a c >&2", f.ws);
	job_ok(db, f.ws, s, &j);
	assert_string_equal(j.out, "B\nB\ngone\n");
	spawnd_client_stop(da);
	spawnd_client_stop(db);
	ws_untouched(&f);
	file_absent(f.ws, "f");
	snprintf(p, sizeof(p), "%s/%s", f.a.dir, mode == COW_OVERLAY ?
	    "upper" : "tree");
	file_is(p, "f", "A\n");
	snprintf(p, sizeof(p), "%s/%s", f.b.dir, mode == COW_OVERLAY ?
	    "upper" : "tree");
	file_is(p, "f", "B\n");
	file_is(p, "a", "B\n");
	fx_close(&f);
}

static void
test_parallel_overlay(void **state)
{
	(void)state;
	parallel(COW_OVERLAY);
}

static void
test_parallel_copy(void **state)
{
	(void)state;
	parallel(COW_COPY);
}

/* Copy mode: the worker writes tree/, the next one sees it. */
static void
test_copy(void **state)
{
	struct spawnd_client	*d;
	struct job		 j;
	struct fx		 f;
	char			 s[PATH_MAX + 600], p[PATH_MAX + 64];

	(void)state;
	fx_open(&f, "ws", COW_COPY);
	d = server(&f.a);
	snprintf(s, sizeof(s), "cd '%s' && cat a >&2 && echo mod > a && "
	    "echo new > b && rm c && rm -r d && mkdir d && echo y > d/y && "
	    "{ if (echo x > .git/HEAD) 2>/dev/null; then echo GIT:ESCAPED; "
	    "else echo GIT:HELD; fi; } >&2", f.ws);
	job_ok(d, f.ws, s, &j);
	assert_string_equal(j.out, "base\nGIT:HELD\n");
	snprintf(s, sizeof(s), "cd '%s' && cat a b d/y >&2 && test ! -e c",
	    f.ws);
	job_ok(d, f.ws, s, &j);
	assert_string_equal(j.out, "mod\nnew\ny\n");
	spawnd_client_stop(d);
	ws_untouched(&f);
	snprintf(p, sizeof(p), "%s/tree", f.a.dir);
	file_is(p, "a", "mod\n");
	file_is(p, "b", "new\n");
	file_absent(p, "c");
	file_absent(p, "d/x");
	fx_close(&f);
}

/* ',' and ':' in the workspace's path: lowerdir+ takes it as it is. */
static void
test_odd_path(void **state)
{
	struct spawnd_client	*d;
	struct job		 j;
	struct fx		 f;
	char			 s[PATH_MAX + 128], p[PATH_MAX + 64];

	(void)state;
	fx_open(&f, "w,s:1", COW_OVERLAY);
	d = server(&f.a);
	snprintf(s, sizeof(s), "cd '%s' && echo new > b && cat a >&2", f.ws);
	job_ok(d, f.ws, s, &j);
	assert_string_equal(j.out, "base\n");
	spawnd_client_stop(d);
	ws_untouched(&f);
	snprintf(p, sizeof(p), "%s/upper", f.a.dir);
	file_is(p, "b", "new\n");
	fx_close(&f);
}

/* A spawn the server must refuse, saying want. */
static void
spawn_refused(struct spawnd_client *d, const char *ws, const char *want)
{
	struct sandbox_policy	 pol;
	struct sandbox_error	 e;
	struct spawn_req	 req;
	struct pollfd		 pfd;
	struct job		 j;
	char			*argv[] = { "sh", "-c", "exit 0", NULL };
	char			**env = spawn_env(), err[256];
	int			 waited;

	memset(&j, 0, sizeof(j));
	memset(&e, 0, sizeof(e));
	assert_int_equal(profile_policy(&pol, "general", ws, &e),
	    0);
	memset(&req, 0, sizeof(req));
	req.bin = "/bin/sh";
	req.argv = argv;
	req.envp = env;
	req.policy = &pol;
	assert_int_not_equal(spawnd_client_request(d, &req, &j, err,
	    sizeof(err)), 0);
	for (waited = 0; !j.spawned; waited += 1000) {
		if (waited > JOB_DEADLINE_MS)
			fail_msg("waited %d s for the spawn server's answer to "
			    "a worker it should refuse (%s)",
			    JOB_DEADLINE_MS / 1000, want);
		pfd.fd = spawnd_client_fd(d);
		pfd.events = POLLIN;
		(void)poll(&pfd, 1, 1000);
		assert_int_equal(spawnd_client_read(d, &job_ops, &j), 0);
	}
	spawn_env_free(env);
	if (!j.failed) {
		spawn_release(&j.c);
		fail_msg("a worker started (pid %d), want: %s", (int)j.pid,
		    want);
	}
	if (strstr(j.err, want) == NULL)
		fail_msg("\"%s\" not in: %s", want, j.err);
}

static void
start_fails(const struct cow *c, const char *const *want)
{
	struct spawnd_client	*d;
	char			 err[1024];
	size_t			 i;
	int			 memfd;

	assert_non_null(d = spawnd_client_start(err, sizeof(err)));
	assert_int_equal(spawnd_client_layer(d, c, &memfd, err, sizeof(err)),
	    -1);
	for (i = 0; want[i] != NULL; i++)
		if (strstr(err, want[i]) == NULL)
			fail_msg("\"%s\" not in the error: %s", want[i], err);
	fprintf(stderr, "as expected: %s\n", err);
	/* And no worker starts after it, nor a second layer. */
	spawn_refused(d, c->workspace[0] == '/' && access(c->workspace, F_OK)
	    == 0 ? c->workspace : "/tmp", "layer could not be entered");
	assert_int_equal(spawnd_client_layer(d, c, &memfd, err, sizeof(err)),
	    -1);
	assert_non_null(strstr(err, "asked for already"));
	spawnd_client_stop(d);
}

/* A layer that cannot be entered: no server, and the cause. */
static void
test_enter_fails(void **state)
{
	struct fx	 f;
	char		 p[PATH_MAX + 16], enoent[128];
	const char	*want[6];

	(void)state;
	snprintf(enoent, sizeof(enoent), "%s", strerror(ENOENT));
	fx_open(&f, "ws", COW_OVERLAY);
	snprintf(p, sizeof(p), "%s/upper", f.a.dir);
	assert_int_equal(rmdir(p), 0);
	want[0] = "copy-on-write layer ";
	want[1] = f.a.dir;
	want[2] = "overlay of ";
	want[3] = "upperdir=";
	want[4] = enoent;
	want[5] = NULL;
	start_fails(&f.a, want);
	fx_close(&f);
	fx_open(&f, "ws", COW_COPY);
	snprintf(p, sizeof(p), "%s/tree", f.a.dir);
	h_rm_rf(p);
	want[2] = "copy of ";
	want[3] = "open_tree ";
	start_fails(&f.a, want);
	/* A workspace that is not there to cover. */
	fx_close(&f);
	fx_open(&f, "ws", COW_OVERLAY);
	snprintf(f.a.workspace, sizeof(f.a.workspace), "%s/nowhere", f.dir);
	want[2] = "nowhere";
	want[3] = "lowerdir+=";
	start_fails(&f.a, want);
	fx_close(&f);
}

/* seccomp: unshare fails with EPERM, as where a container forbids it. */
static void
deny_unshare(void)
{
	struct sock_filter	 insns[] = {
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS,
		    offsetof(struct seccomp_data, nr)),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_unshare, 0, 1),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | EPERM),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
	};
	struct sock_fprog	 prog = { sizeof(insns) / sizeof(insns[0]),
				    insns };

	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) == -1 ||
	    prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &prog) == -1)
		_exit(3);
}

/* What cow_probe says: yes here, no where unshare is refused. */
static void
test_probe(void **state)
{
	char	*dir, why[2048], sd[PATH_MAX], dead[PATH_MAX + 64];
	char	 live[PATH_MAX + 64], p0[PATH_MAX + 80];
	pid_t	 pid;
	int	 p[2], st, rc;

	(void)state;
	dir = h_tmpdir();
	snprintf(sd, sizeof(sd), "%s/state", dir);
	rc = cow_probe_overlay(sd, why, sizeof(why));
	if (rc != 1)
		fail_msg("overlay probe: %d: %s", rc, why);
	rc = cow_probe(COW_COPY, sd, why, sizeof(why));
	if (rc != 1)
		fail_msg("copy probe: %d: %s", rc, why);
	/* Its scratch directories are gone. */
	assert_int_equal(rmdir(sd), 0);
	/* One a killed probe left is removed by the next, not one of a
	 * live process. */
	if ((pid = fork()) == 0)
		_exit(0);
	assert_true((st = test_waitpid(pid, 240,
	    "the child of test_probe")) != -1);
	snprintf(dead, sizeof(dead), "%s/cow-probe.%ld.AbC123", sd, (long)pid);
	assert_int_equal(mkdir(sd, 0700), 0);
	h_write(dead, "upper/x", "x\n", 0600);
	snprintf(p0, sizeof(p0), "%s/work", dead);
	assert_int_equal(mkdir(p0, 0700), 0);
	snprintf(p0, sizeof(p0), "%s/work/work", dead);
	assert_int_equal(mkdir(p0, 0), 0);
	snprintf(live, sizeof(live), "%s/cow-probe.%ld.AbC123", sd,
	    (long)getppid());
	assert_int_equal(mkdir(live, 0700), 0);
	assert_int_equal(cow_probe_overlay(sd, why, sizeof(why)), 1);
	file_absent(dead, "");
	assert_int_equal(rmdir(live), 0);
	assert_int_equal(rmdir(sd), 0);
	assert_int_equal(cow_probe_overlay("/proc/no-such-dir", why,
	    sizeof(why)), -1);
	assert_non_null(strstr(why, "/proc/no-such-dir"));
	assert_int_equal(pipe(p), 0);
	if ((pid = fork()) == 0) {
		deny_unshare();
		rc = cow_probe_overlay(sd, why, sizeof(why));
		(void)write(p[1], why, strlen(why));
		_exit(rc == 0 ? 0 : 10 + rc);
	}
	close(p[1]);
	memset(why, 0, sizeof(why));
	(void)read(p[0], why, sizeof(why) - 1);
	close(p[0]);
	assert_true((st = test_waitpid(pid, 60, "the overlay probe where "
	    "unshare is refused")) != -1);
	if (!WIFEXITED(st) || WEXITSTATUS(st) != 0 ||
	    strstr(why, "unshare") == NULL ||
	    strstr(why, strerror(EPERM)) == NULL)
		fail_msg("probe with unshare refused: status %d: %s", st, why);
	assert_int_equal(rmdir(sd), 0);
	h_rm_rf(dir);
	free(dir);
}

/* In the layer (a child): the checks of test_in_layer; 0 or a message. */
static int
in_layer(const struct fx *f, const struct sandbox_caps *out, char *msg,
    size_t msgsz)
{
	struct sandbox_caps	 c;
	struct statvfs		 sv;
	uid_t			 uid = geteuid();
	int			 fd;

	if (chdir(f->ws) == -1 || cow_enter(&f->a, msg, msgsz) == -1)
		return -1;
	/* The cwd was the real workspace: now the layer. */
	if ((fd = open("cwd-file", O_WRONLY | O_CREAT | O_EXCL, 0644)) == -1)
		return snprintf(msg, msgsz, "create cwd-file: %s",
		    strerror(errno)), -1;
	close(fd);
	if (geteuid() != uid)
		return snprintf(msg, msgsz, "euid %u in the layer, %u out",
		    (unsigned)geteuid(), (unsigned)uid), -1;
	if (statvfs(f->ws, &sv) == -1 || !(sv.f_flag & ST_NOSUID) ||
	    !(sv.f_flag & ST_NODEV))
		return snprintf(msg, msgsz, "the layer is not nosuid, nodev "
		    "(flags %#lx)", sv.f_flag), -1;
	sandbox_caps_probe(&c, 1);
	if (c.root != out->root || c.userns != out->userns ||
	    c.mntns != out->mntns || c.pidns != out->pidns ||
	    c.netns != out->netns || c.ipcns != out->ipcns ||
	    c.cgroup != out->cgroup || c.memcg != out->memcg ||
	    c.landlock_abi != out->landlock_abi || c.seccomp != out->seccomp)
		return snprintf(msg, msgsz, "the sandbox probe differs in the "
		    "layer: root %d/%d userns %d/%d mntns %d/%d pidns %d/%d "
		    "netns %d/%d ipcns %d/%d cgroup %d/%d memcg %d/%d",
		    c.root, out->root, c.userns, out->userns, c.mntns,
		    out->mntns, c.pidns, out->pidns, c.netns, out->netns,
		    c.ipcns, out->ipcns, c.cgroup, out->cgroup, c.memcg,
		    out->memcg), -1;
	return 0;
}

/*
 * cow_enter itself: the cwd walked into the layer, the same euid, a
 * nosuid nodev mount, the thorough sandbox probe (sandbox check's)
 * answering as outside, and no mount seen from the host.
 */
static void
in_layer_mode(enum cow_mode mode)
{
	struct sandbox_caps	 out;
	struct fx		 f;
	char			 msg[2048], p[PATH_MAX + 16], *mi;
	pid_t			 pid;
	int			 tochild[2], fromchild[2], st;

	fx_open(&f, "ws", mode);
	sandbox_caps_probe(&out, 1);
	assert_int_equal(pipe(tochild), 0);
	assert_int_equal(pipe(fromchild), 0);
	if ((pid = fork()) == 0) {
		close(tochild[1]);
		close(fromchild[0]);
		memset(msg, 0, sizeof(msg));
		if (in_layer(&f, &out, msg, sizeof(msg) - 1) == -1) {
			(void)write(fromchild[1], msg, strlen(msg));
			_exit(1);
		}
		(void)write(fromchild[1], "", 1);
		(void)read(tochild[0], msg, 1);
		_exit(0);
	}
	close(fromchild[1]);
	close(tochild[0]);
	memset(msg, 0, sizeof(msg));
	(void)read(fromchild[0], msg, sizeof(msg) - 1);
	if (msg[0] != '\0') {
		(void)test_waitpid(pid, 60, "the child that failed in the "
		    "layer");
		fail_msg("in the layer: %s", msg);
	}
	/* The child sits in the layer now: the host sees no mount. */
	assert_non_null(mi = h_read_file("/proc/self/mountinfo"));
	snprintf(p, sizeof(p), " %s ", f.ws);
	if (strstr(mi, p) != NULL)
		fail_msg("the host sees a mount on %s:\n%s", f.ws, mi);
	free(mi);
	close(tochild[1]);
	assert_true((st = test_waitpid(pid, 60, "the child in the layer, told "
	    "to go")) != -1);
	assert_true(WIFEXITED(st) && WEXITSTATUS(st) == 0);
	file_absent(f.ws, "cwd-file");
	snprintf(p, sizeof(p), "%s/%s", f.a.dir, mode == COW_OVERLAY ?
	    "upper" : "tree");
	file_is(p, "cwd-file", "");
	fx_close(&f);
}

static void
test_in_layer(void **state)
{
	(void)state;
	in_layer_mode(COW_OVERLAY);
}

static void
test_in_copy(void **state)
{
	(void)state;
	in_layer_mode(COW_COPY);
}

/* `warren sandbox check` names the mode this user gets. */
static void
test_check(void **state)
{
	struct h_run	 r;
	char		*argv[] = { "warren", "sandbox", "check", NULL };
	pid_t		 pid;
	int		 st;

	(void)state;
	assert_int_equal(h_warren(&r, argv, NULL, NULL, NULL), 0);
	if (h_count_lines(r.out, "  cow ", "yes  overlay: overlayfs over the "
	    "workspace") != 1)
		fail_msg("no overlay line in:\n%s", r.out);
	h_run_free(&r);
	/* Where unshare is refused: neither mode, and why. */
	if ((pid = fork()) == 0) {
		deny_unshare();
		if (h_warren(&r, argv, NULL, NULL, NULL) != 0 ||
		    h_count_lines(r.out, "  cow ", "no   none: copy-on-write "
		    "runs cannot start here") != 1 ||
		    h_count_lines(r.out, "note: no overlay", "unshare") != 1 ||
		    h_count_lines(r.out, "note: no copy mode either",
		    "unshare") != 1) {
			fprintf(stderr, "sandbox check without unshare:\n%s",
			    r.out);
			_exit(1);
		}
		_exit(0);
	}
	/* h_warren in it has its own hang guard; this is over it. */
	assert_true((st = test_waitpid(pid, H_HANG_GUARD_S + 30, "`warren "
	    "sandbox check` where unshare is refused")) != -1);
	assert_true(WIFEXITED(st) && WEXITSTATUS(st) == 0);
}

/*
 * A run whose layer the spawn server cannot enter (unshare refused, as
 * in a container that forbids it) ends with exit 5 and the cause, and
 * never runs in the workspace.
 */
static void
test_run_refused(void **state)
{
	struct h_run	 r;
	struct h_ws	 w;
	struct dirent	*de;
	DIR		*dp;
	char		 st[PATH_MAX + 32], *env[3], *argv[12];
	pid_t		 pid;
	int		 n = 0, status;

	(void)state;
	h_ws_open(&w, "data\n");
	h_turn(w.f, "0", 1, h_calls1("a", "delegate",
	    "{\"profile\":\"general\",\"task\":\"write\"}"));
	h_turn(w.f, "0.1", 1, h_calls1("b", "write",
	    "{\"path\":\"data.txt\",\"content\":\"changed\\n\"}"));
	h_turn(w.f, "0.1", 2, h_calls1("c", "complete", "{\"result\":\"x\"}"));
	h_turn(w.f, "0", 2, h_calls1("d", "complete", "{\"result\":\"ok\"}"));
	h_ws_cassette_close(&w);
	snprintf(st, sizeof(st), "XDG_STATE_HOME=%s/state", w.dir);
	env[0] = st;
	env[1] = "WARREN_WORKSPACE_MODE=cow";	/* tests run in place */
	env[2] = NULL;
	argv[n++] = "warren";
	argv[n++] = "run";
	argv[n++] = "--cow";
	argv[n++] = "copy";
	argv[n++] = "--workspace";
	argv[n++] = w.ws;
	argv[n++] = "--replay";
	argv[n++] = w.cas;
	argv[n++] = "write task";
	argv[n] = NULL;
	if ((pid = fork()) == 0) {
		deny_unshare();
		if (h_warren(&r, argv, env, NULL, NULL) != 0 ||
		    r.status != 5 ||
		    strstr(r.err, "copy-on-write layer ") == NULL ||
		    strstr(r.err, "(copy of ") == NULL ||
		    strstr(r.err, "unshare") == NULL ||
		    strstr(r.err, strerror(EPERM)) == NULL) {
			fprintf(stderr, "warren exit %d:\n%s", r.status,
			    r.err);
			_exit(1);
		}
		fprintf(stderr, "as expected: %s", r.err);
		_exit(0);
	}
	assert_true((status = test_waitpid(pid, H_HANG_GUARD_S + 30, "a copy-on-"
	    "write run where unshare is refused")) != -1);
	assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	file_is(w.ws, "data.txt", "data\n");
	/* The layer made for it is gone. */
	snprintf(st, sizeof(st), "%s/state/warren/cow", w.dir);
	if ((dp = opendir(st)) != NULL) {
		while ((de = readdir(dp)) != NULL)
			if (de->d_name[0] != '.')
				fail_msg("%s/%s left behind", st, de->d_name);
		closedir(dp);
	}
	h_ws_close(&w);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup(test_overlay, deadline),
		cmocka_unit_test_setup(test_bound, deadline),
		cmocka_unit_test_setup(test_bound_killed, deadline),
		cmocka_unit_test_setup(test_parallel_overlay, deadline),
		cmocka_unit_test_setup(test_parallel_copy, deadline),
		cmocka_unit_test_setup(test_copy, deadline),
		cmocka_unit_test_setup(test_odd_path, deadline),
		cmocka_unit_test_setup(test_enter_fails, deadline),
		cmocka_unit_test_setup(test_probe, deadline),
		cmocka_unit_test_setup(test_in_layer, deadline),
		cmocka_unit_test_setup(test_in_copy, deadline),
		cmocka_unit_test_setup(test_check, deadline),
		cmocka_unit_test_setup(test_run_refused, deadline),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}

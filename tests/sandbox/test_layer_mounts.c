/*
 * The mount layer on its own terms: inside a sandboxed worker (a general
 * agent's shell, started by the real supervisor and spawn server), its
 * /proc/self/mountinfo against the mount plan, the policy the supervisor
 * builds (profile_policy for the profile, from the one profile table,
 * then spawn_protect's state and config masks, as proc_policy does) and
 * what sandbox_ns_mounts adds to every read-write sandbox:
 *
 *   protected read-only	(.git, .warren)	a mount, read-only
 *   protected masked		(the state and config directories, put
 *				inside the workspace): a read-only tmpfs
 *   on the way to either	(.state, .config): a mount point, any
 *   /tmp, /dev/shm		private tmpfs, read-write, nosuid and
 *				nodev; the workspace bound back under /tmp
 *				where it lies there
 *   /proc			a fresh proc (with a pid namespace:
 *				nosuid, nodev, noexec), its sys and
 *				sysrq-trigger read-only
 *   the host's secrets	(/etc/shadow, ssh host keys, ...): masked,
 *				read-only, where the worker could read them
 *
 * test_spawned_mounts does the same for every built-in that runs in a
 * worker, read-only ones included (their worker has no shell): a child
 * spawned by the library as the spawn server spawns one (sandbox_spawn,
 * sandbox_child), which writes its mountinfo to a pipe. A read-only
 * profile with a Landlock ruleset gets the masks only. The read-write
 * ones are given a program in the test's directory, as `warren sandbox
 * exec` gives one: under /tmp, its directory is bound back read-only.
 *
 * Every mount of the worker is either one the test process has (same
 * mount point, root, type, source and read-only flag: so no host mount
 * turned writable) or one of the plan's, with the plan's flags; every
 * entry of the plan that exists is there. Runs as root (secrets masked)
 * and as an ordinary user (a user namespace; nothing of /etc readable to
 * mask).
 */
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/wait.h>

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
#include <unistd.h>

#include <cmocka.h>

#include "agent/profile.h"
#include "sandbox/sandbox_int.h"
#include "spawnd/spawn.h"
#include "tests/e2e/harness.h"
#include "sandbox/sandbox_testapi.h"

#define MI_MAX		512

/* One line of mountinfo. */
struct mnt {
	int	 id, parent;
	char	 point[PATH_MAX];
	char	 root[PATH_MAX];
	char	 fstype[32];
	char	 source[256];
	int	 ro;
	int	 nosuid, nodev, noexec;
	int	 used;		/* matched */
};

struct mnts {
	struct mnt	*v;
	size_t		 n;
};

/* mountinfo escapes space, tab, newline and backslash as \ooo. */
static void
unescape(char *s)
{
	char	*r = s, *w = s;

	while (*r != '\0') {
		if (r[0] == '\\' && r[1] >= '0' && r[1] <= '3' &&
		    r[2] >= '0' && r[2] <= '7' && r[3] >= '0' && r[3] <= '7') {
			*w++ = (char)((r[1] - '0') * 64 + (r[2] - '0') * 8 +
			    (r[3] - '0'));
			r += 4;
		} else
			*w++ = *r++;
	}
	*w = '\0';
}

static int
has_opt(const char *opts, const char *opt)
{
	size_t	 n = strlen(opt);
	const char *p = opts;

	while ((p = strstr(p, opt)) != NULL) {
		if ((p == opts || p[-1] == ',') && (p[n] == ',' ||
		    p[n] == '\0'))
			return 1;
		p += n;
	}
	return 0;
}

static void
parse(const char *text, struct mnts *m, const char *whose)
{
	char		 opts[512], *copy, *line, *save = NULL, *sep;
	struct mnt	*e;

	m->v = calloc(MI_MAX, sizeof(*m->v));
	assert_non_null(m->v);
	m->n = 0;
	copy = strdup(text);
	assert_non_null(copy);
	for (line = strtok_r(copy, "\n", &save); line != NULL;
	    line = strtok_r(NULL, "\n", &save)) {
		if (m->n == MI_MAX)
			fail_msg("%s: more than %d mounts", whose, MI_MAX);
		e = &m->v[m->n];
		if ((sep = strstr(line, " - ")) == NULL ||
		    sscanf(line, "%d %d %*s %4095s %4095s %511s", &e->id,
		    &e->parent, e->root, e->point, opts) != 5 || sscanf(sep + 3, "%31s %255s",
		    e->fstype, e->source) != 2)
			fail_msg("%s: unreadable mountinfo line: %s", whose,
			    line);
		unescape(e->root);
		unescape(e->point);
		e->ro = has_opt(opts, "ro");
		e->nosuid = has_opt(opts, "nosuid");
		e->nodev = has_opt(opts, "nodev");
		e->noexec = has_opt(opts, "noexec");
		m->n++;
	}
	free(copy);
	if (m->n == 0)
		fail_msg("%s: no mounts in its mountinfo", whose);
}

/* The host mount w is inherited from, if any (consumed). */
static int
inherited(struct mnts *host, const struct mnt *w)
{
	size_t	 i;

	for (i = 0; i < host->n; i++) {
		if (host->v[i].used || strcmp(host->v[i].point, w->point) != 0 ||
		    strcmp(host->v[i].root, w->root) != 0 ||
		    strcmp(host->v[i].fstype, w->fstype) != 0 ||
		    strcmp(host->v[i].source, w->source) != 0 ||
		    host->v[i].ro != w->ro)
			continue;
		host->v[i].used = 1;
		return 1;
	}
	return 0;
}

/* ---- the plan ---- */

enum kind {
	K_RO,		/* a read-only mount of what was there */
	K_MASK,		/* read-only tmpfs, or a file of one */
	K_PIN,		/* a mount point on the way, any flags */
	K_TMPFS,	/* a private read-write tmpfs */
	K_BINDBACK,	/* the workspace bound back into the private /tmp */
	K_PROC,		/* a fresh proc */
};

static const char *const kind_names[] = {
	"read-only", "masked", "mount point on the way", "private tmpfs",
	"workspace bound back", "fresh proc",
};

struct entry {
	char		 path[PATH_MAX];
	enum kind	 kind;
	int		 need;		/* must be present */
	int		 seen;
};

struct plan {
	struct entry	 v[64];
	size_t		 n;
};

static void
plan_add(struct plan *pl, const char *path, enum kind k, int need)
{
	size_t	 i;

	for (i = 0; i < pl->n; i++)
		if (strcmp(pl->v[i].path, path) == 0)
			return;
	assert_true(pl->n < sizeof(pl->v) / sizeof(pl->v[0]));
	strlcpy(pl->v[pl->n].path, path, sizeof(pl->v[pl->n].path));
	pl->v[pl->n].kind = k;
	pl->v[pl->n].need = need;
	pl->v[pl->n].seen = 0;
	pl->n++;
}

/* The directories between the workspace and rel ("a/b/c": a, a/b). */
static void
plan_pins(struct plan *pl, const char *ws, const char *rel)
{
	char	 buf[PATH_MAX], path[PATH_MAX * 2];
	char	*slash;

	strlcpy(buf, rel, sizeof(buf));
	while ((slash = strrchr(buf, '/')) != NULL) {
		*slash = '\0';
		snprintf(path, sizeof(path), "%s/%s", ws, buf);
		plan_add(pl, path, K_PIN, 1);
	}
}

/* landlocked: the child gets a Landlock ruleset (the machine has one). A
 * read-only profile with one gets the masks only (sandbox_ns_mounts). */
static void
plan_make(struct plan *pl, const struct sandbox_policy *p, int landlocked)
{
	static const char *const secrets[] = { "/etc/shadow", "/etc/shadow-",
	    "/etc/gshadow", "/etc/gshadow-", "/etc/security/opasswd" };
	struct sandbox_caps	 c;
	const char	*path;
	char		 abs[PATH_MAX * 2];
	unsigned	 flags;
	size_t		 ws_len = strlen(p->workspace);
	int		 i, all = p->fs_write || !landlocked;

	memset(pl, 0, sizeof(*pl));
	for (i = 0; (path = sandbox_policy_protected(p, i, &flags)) != NULL;
	    i++) {
		if (path[0] == '/' && strncmp(path, p->workspace, ws_len) == 0 &&
		    path[ws_len] == '/')
			path += ws_len + 1;
		if (!all && !(flags & SANDBOX_PROTECT_MASK))
			continue;
		if (path[0] == '/')
			strlcpy(abs, path, sizeof(abs));
		else {
			snprintf(abs, sizeof(abs), "%s/%s", p->workspace, path);
			if (all)
				plan_pins(pl, p->workspace, path);
		}
		plan_add(pl, abs, (flags & SANDBOX_PROTECT_MASK) ? K_MASK :
		    K_RO, access(abs, F_OK) == 0);
	}
	if (all) {
		plan_add(pl, "/tmp", K_TMPFS, 1);
		plan_add(pl, "/dev/shm", K_TMPFS, access("/dev/shm",
		    F_OK) == 0);
		if (strncmp(p->workspace, "/tmp/", 5) == 0 ||
		    strncmp(p->workspace, "/dev/shm/", 9) == 0)
			plan_add(pl, p->workspace, K_BINDBACK, 1);
		/* A program's directory there (`sandbox exec` of a program
		 * in /tmp): bound back read-only, where nothing is planted
		 * beside it for the next run. */
		strlcpy(abs, p->program, sizeof(abs));
		if (strncmp(abs, "/tmp/", 5) == 0 && strrchr(abs, '/') !=
		    NULL) {
			*strrchr(abs, '/') = '\0';
			if (strcmp(abs, p->workspace) != 0)
				plan_add(pl, abs, K_RO, 1);
		}
	}
	/* A fresh /proc where this machine gives a pid namespace. */
	sandbox_caps_probe(&c, 0);
	plan_add(pl, "/proc", K_PROC, c.pidns);
	if (all) {
		plan_add(pl, "/proc/sys", K_RO, c.pidns &&
		    access("/proc/sys", F_OK) == 0);
		plan_add(pl, "/proc/sysrq-trigger", K_RO, c.pidns &&
		    access("/proc/sysrq-trigger", F_OK) == 0);
	}
	/* What the worker could read, it must not: masked. */
	for (i = 0; i < (int)(sizeof(secrets) / sizeof(secrets[0])); i++)
		plan_add(pl, secrets[i], K_MASK, access(secrets[i], R_OK) == 0);
}

/* An /etc/ssh/ssh_host_*_key: masked where it is readable. */
static int
ssh_key(const char *path)
{
	size_t	 n = strlen(path);

	return strncmp(path, "/etc/ssh/ssh_host_", 18) == 0 && n > 22 &&
	    strcmp(path + n - 4, "_key") == 0;
}

static struct entry *
plan_find(struct plan *pl, const char *point)
{
	size_t	 i;

	for (i = 0; i < pl->n; i++)
		if (strcmp(pl->v[i].path, point) == 0)
			return &pl->v[i];
	if (ssh_key(point)) {
		plan_add(pl, point, K_MASK, 0);
		return &pl->v[pl->n - 1];
	}
	return NULL;
}

/* Whether mount w is what entry e plans: NULL if so, else why not. */
static const char *
plan_ok(const struct entry *e, const struct mnt *w)
{
	switch (e->kind) {
	case K_RO:
		return w->ro ? NULL : "writable, the plan says read-only";
	case K_MASK:
		if (!w->ro)
			return "writable, the plan says masked (read-only)";
		return strcmp(w->fstype, "tmpfs") == 0 ? NULL :
		    "not a tmpfs, the plan says masked";
	case K_PIN:
		return NULL;
	case K_TMPFS:
		if (w->ro)
			return "read-only, the plan says a writable tmpfs";
		/* Anyone may write it: no setuid file, no device there. */
		if (!w->nosuid || !w->nodev)
			return "without nosuid and nodev, which the plan's "
			    "tmpfs has";
		return strcmp(w->fstype, "tmpfs") == 0 ? NULL :
		    "not a tmpfs";
	case K_BINDBACK:
		if (w->ro)
			return "read-only, the plan says the workspace bound "
			    "back writable";
		return strcmp(w->fstype, "tmpfs") == 0 ? "a tmpfs, the plan "
		    "says the workspace bound back" : NULL;
	case K_PROC:
		if (!w->nosuid || !w->nodev || !w->noexec)
			return "without nosuid, nodev and noexec, which the "
			    "plan's proc has";
		return strcmp(w->fstype, "proc") == 0 ? NULL : "not a proc";
	}
	return "unknown kind";
}

/*
 * The mask file's tmpfs (sandbox_protect_stage): read-only, at /proc,
 * and beneath: another mount of the worker is on top of it, so nothing
 * at /proc is it.
 */
static int
mask_stage(const struct mnts *wk, const struct mnt *w)
{
	size_t	 i;

	if (strcmp(w->point, "/proc") != 0 || strcmp(w->fstype,
	    "tmpfs") != 0 || !w->ro)
		return 0;
	for (i = 0; i < wk->n; i++)
		if (wk->v[i].parent == w->id && strcmp(wk->v[i].point,
		    "/proc") == 0)
			return 1;
	return 0;
}

/* A mount another is mounted on, at the same point (a bind made
 * read-only by a second bind on top): no path reaches it. */
static int
covered(const struct mnts *wk, const struct mnt *w)
{
	size_t	 i;

	for (i = 0; i < wk->n; i++)
		if (wk->v[i].parent == w->id && strcmp(wk->v[i].point,
		    w->point) == 0)
			return 1;
	return 0;
}

/* Compare; returns the number of differences, each printed. */
static int
compare(struct mnts *host, struct mnts *wk, struct plan *pl)
{
	struct entry	*e;
	const char	*why;
	size_t		 i;
	int		 bad = 0;

	for (i = 0; i < wk->n; i++) {
		if (inherited(host, &wk->v[i]))
			continue;
		if (mask_stage(wk, &wk->v[i])) {
			fprintf(stderr, "  %-60s the mask file's tmpfs, beneath"
			    ": ok\n", wk->v[i].point);
			continue;
		}
		if (covered(wk, &wk->v[i])) {
			fprintf(stderr, "  %-60s covered by a mount on it: ok\n",
			    wk->v[i].point);
			continue;
		}
		if ((e = plan_find(pl, wk->v[i].point)) == NULL) {
			fprintf(stderr, "  %s (%s %s, %s): a mount not in the "
			    "plan\n", wk->v[i].point, wk->v[i].fstype,
			    wk->v[i].root, wk->v[i].ro ? "ro" : "rw");
			bad++;
			continue;
		}
		e->seen = 1;
		if ((why = plan_ok(e, &wk->v[i])) != NULL) {
			fprintf(stderr, "  %s (%s %s, %s): %s\n",
			    wk->v[i].point, wk->v[i].fstype, wk->v[i].root,
			    wk->v[i].ro ? "ro" : "rw", why);
			bad++;
		} else
			fprintf(stderr, "  %-60s %s: ok\n", wk->v[i].point,
			    kind_names[e->kind]);
	}
	for (i = 0; i < pl->n; i++)
		if (pl->v[i].need && !pl->v[i].seen) {
			fprintf(stderr, "  %s: planned (%s), not mounted\n",
			    pl->v[i].path, kind_names[pl->v[i].kind]);
			bad++;
		}
	return bad;
}

/* A /proc file (its size says 0): read to its end. */
static char *
read_proc(const char *path)
{
	char	*buf = NULL;
	size_t	 len = 0, n;
	FILE	*f;

	if ((f = fopen(path, "r")) == NULL)
		fail_msg("open %s: %s", path, strerror(errno));
	for (;;) {
		buf = realloc(buf, len + 4097);
		assert_non_null(buf);
		if ((n = fread(buf + len, 1, 4096, f)) == 0)
			break;
		len += n;
	}
	if (ferror(f))
		fail_msg("read %s: %s", path, strerror(errno));
	fclose(f);
	buf[len] = '\0';
	return buf;
}

/* ---- the worker ---- */

/* A general agent's shell copies its mountinfo into the workspace. */
static char *
worker_mountinfo(struct h_ws *w, char *const *env)
{
	struct h_run	 r;
	char		 args[512], path[PATH_MAX + 32], *argv[12], *text;
	int		 n = 0;

	snprintf(args, sizeof(args), "{\"command\":%s}",
	    h_js("cat /proc/self/mountinfo > mountinfo.txt"));
	h_turn(w->f, "0", 1, h_calls1("a", "delegate",
	    "{\"profile\":\"general\",\"task\":\"mounts\"}"));
	h_turn(w->f, "0.1", 1, h_calls1("b", "bash", args));
	h_turn(w->f, "0.1", 2, h_calls1("c", "complete", "{\"result\":\"x\"}"));
	h_turn(w->f, "0", 2, h_calls1("d", "complete", "{\"result\":\"ok\"}"));
	h_ws_cassette_close(w);
	argv[n++] = "warren";
	argv[n++] = "run";
	argv[n++] = "--in-place";
	argv[n++] = "--no-store";
	argv[n++] = "--workspace";
	argv[n++] = w->ws;
	argv[n++] = "--replay";
	argv[n++] = w->cas;
	argv[n++] = "mounts task";
	argv[n] = NULL;
	assert_int_equal(h_warren(&r, argv, env, NULL, NULL), 0);
	if (r.status != 0)
		fail_msg("warren run: status %d\n%s\n%s", r.status, r.out,
		    r.err);
	h_run_free(&r);
	snprintf(path, sizeof(path), "%s/mountinfo.txt", w->ws);
	if ((text = h_read_file(path)) == NULL)
		fail_msg("the worker wrote no %s", path);
	return text;
}

static void
test_worker_mounts(void **state)
{
	struct sandbox_policy	 p;
	struct sandbox_error	 e;
	struct h_ws		 w;
	struct mnts		 host, wk;
	struct plan		 pl;
	char			 st[PATH_MAX + 32], cf[PATH_MAX + 32], err[256];
	char			*env[3], *text, *mine;
	int			 bad;

	(void)state;
	h_ws_open(&w, "data\n");
	h_write(w.ws, ".git/HEAD", "ref: refs/heads/main\n", 0644);
	h_write(w.ws, ".warren/config", "max_agents = 4\n", 0644);
	h_write(w.ws, ".state/warren/keep", "x\n", 0644);
	h_write(w.ws, ".config/warren/config", "# settings\n", 0644);
	snprintf(st, sizeof(st), "XDG_STATE_HOME=%s/.state", w.ws);
	snprintf(cf, sizeof(cf), "XDG_CONFIG_HOME=%s/.config", w.ws);
	env[0] = st;
	env[1] = cf;
	env[2] = NULL;
	text = worker_mountinfo(&w, env);
	/* The plan, as the supervisor makes the worker's policy. */
	memset(&e, 0, sizeof(e));
	if (profile_policy(&p, "general", w.ws, &e) == -1)
		fail_msg("policy: %s", e.msg);
	assert_int_equal(setenv("XDG_STATE_HOME", st + 15, 1), 0);
	assert_int_equal(setenv("XDG_CONFIG_HOME", cf + 16, 1), 0);
	if (spawn_protect(&p, NULL, err, sizeof(err)) == -1)
		fail_msg("spawn_protect: %s", err);
	plan_make(&pl, &p, sandbox_landlock_abi() > 0);
	mine = read_proc("/proc/self/mountinfo");
	parse(mine, &host, "the test");
	parse(text, &wk, "the worker");
	fprintf(stderr, "uid %ld: %zu mounts here, %zu in the worker\n",
	    (long)getuid(), host.n, wk.n);
	bad = compare(&host, &wk, &pl);
	free(mine);
	free(text);
	free(host.v);
	free(wk.v);
	h_ws_close(&w);
	if (bad != 0)
		fail_msg("%d mounts of the worker differ from the plan (above)",
		    bad);
}

/* ---- every profile, through the library's spawn ---- */

/* In the child after sandbox_child (its mounts made): mountinfo to fd 3,
 * with no malloc (it shares the parent's memory). */
static void __attribute__((noreturn))
dump_mountinfo(struct sandbox *sb, int rc, struct sandbox_error *e, void *arg)
{
	char	 buf[4096];
	ssize_t	 n;
	int	 fd;

	(void)sb;
	(void)arg;
	if (rc == -1) {
		dprintf(3, "ERROR sandbox_child: %s\n", e->msg);
		_exit(91);
	}
	if ((fd = open("/proc/self/mountinfo", O_RDONLY | O_CLOEXEC)) == -1)
		_exit(92);
	while ((n = read(fd, buf, sizeof(buf))) > 0)
		if (write(3, buf, (size_t)n) != n)
			_exit(93);
	_exit(n == 0 ? 0 : 94);
}

static void
spawn_fn(struct sandbox *sb, void *arg)
{
	static const int	 keep[] = { 3 };
	struct sandbox_error	 e;

	if (dup2(*(const int *)arg, 3) == -1)
		_exit(90);
	sb->exec_fn = dump_mountinfo;
	(void)sandbox_child(sb, keep, 1, &e);
	_exit(95);
}

/* The mountinfo of a child spawned as the spawn server spawns a worker;
 * NULL, said why, if this machine lacks a layer the policy requires. */
static char *
spawned_mountinfo(const struct sandbox_policy *p)
{
	struct sandbox_error	 e;
	struct sandbox		 sb;
	char			*buf;
	size_t			 len = 0, cap = 1 << 20;
	ssize_t			 n;
	pid_t			 pid;
	int			 pfd[2], wfd, st;

	if (sandbox_prepare(&sb, p, &e) == -1) {
		if (!e.missing)
			fail_msg("sandbox_prepare %s: %s", p->name, e.msg);
		fprintf(stderr, "  SKIP %s: this machine lacks a layer it "
		    "requires: %s\n", p->name, e.msg);
		return NULL;
	}
	assert_int_equal(pipe2(pfd, O_CLOEXEC), 0);
	/* The child writes it all before we read (it shares our memory
	 * until it ends): room for it, and never a block. */
	(void)fcntl(pfd[1], F_SETPIPE_SZ, (int)cap);
	assert_int_not_equal(fcntl(pfd[1], F_SETFL, O_NONBLOCK), -1);
	wfd = pfd[1];
	if ((pid = sandbox_spawn(&sb, spawn_fn, &wfd, &e)) == -1)
		fail_msg("sandbox_spawn %s: %s", p->name, e.msg);
	close(pfd[1]);
	buf = malloc(cap + 1);
	assert_non_null(buf);
	if ((n = test_read(pfd[0], buf, cap, 60, p->name)) == -1) {
		kill(pid, SIGKILL);
		(void)test_waitpid(pid, 10, "the mountinfo child, killed");
		fail_msg("%s: the child's mountinfo had not ended after 60 s",
		    p->name);
	}
	len = (size_t)n;
	buf[len] = '\0';
	close(pfd[0]);
	if ((st = test_waitpid(pid, 60, p->name)) == -1)
		fail_msg("%s: the child had not ended after 60 s", p->name);
	sandbox_release(&sb);
	if (!WIFEXITED(st) || WEXITSTATUS(st) != 0)
		fail_msg("%s: the child ended with status 0x%x: %s", p->name,
		    st, buf);
	return buf;
}

/*
 * Every built-in that runs in a worker (the profile table), spawned by
 * the library as the spawn server spawns a worker, with the policy
 * proc_policy gives it: a read-only profile's plan is the masks only.
 */
static void
test_spawned_mounts(void **state)
{
	const struct profile	*b;
	struct sandbox_policy	 p;
	struct sandbox_error	 e;
	struct mnts		 host, wk;
	struct plan		 pl;
	char			 dir[PATH_MAX], ws[PATH_MAX + 8], err[256];
	char			 st[PATH_MAX + 32], cf[PATH_MAX + 32];
	char			 prog[PATH_MAX + 16];
	char			*text, *mine, *tmp;
	size_t			 i;
	int			 bad = 0, compared = 0;

	(void)state;
	tmp = h_tmpdir();
	snprintf(dir, sizeof(dir), "%s", tmp);
	free(tmp);
	snprintf(ws, sizeof(ws), "%s/ws", dir);
	h_write(ws, ".git/HEAD", "ref: refs/heads/main\n", 0644);
	h_write(ws, ".warren/config", "max_agents = 4\n", 0644);
	h_write(ws, ".state/warren/keep", "x\n", 0644);
	h_write(ws, ".config/warren/config", "# settings\n", 0644);
	snprintf(st, sizeof(st), "%s/.state", ws);
	snprintf(cf, sizeof(cf), "%s/.config", ws);
	h_write(dir, "bin/tool", "#!/bin/sh\nexit 0\n", 0755);
	snprintf(prog, sizeof(prog), "%s/bin/tool", dir);
	assert_int_equal(setenv("XDG_STATE_HOME", st, 1), 0);
	assert_int_equal(setenv("XDG_CONFIG_HOME", cf, 1), 0);
	for (i = 0; (b = profile_builtin_at(i)) != NULL; i++) {
		if (!profile_in_worker(b))
			continue;
		memset(&e, 0, sizeof(e));
		if (profile_policy(&p, b->name, ws, &e) == -1)
			fail_msg("policy %s: %s", b->name, e.msg);
		if (spawn_protect(&p, NULL, err, sizeof(err)) == -1)
			fail_msg("spawn_protect: %s", err);
		/* Read-write ones with a program beside the workspace, as
		 * `warren sandbox exec` gives one (in /tmp, it is bound
		 * back into the private /tmp). */
		if (p.fs_write)
			strlcpy(p.program, prog, sizeof(p.program));
		fprintf(stderr, "%s (%s), uid %ld:\n", b->name, p.fs_write ?
		    "read-write" : "read-only", (long)getuid());
		if ((text = spawned_mountinfo(&p)) == NULL)
			continue;
		plan_make(&pl, &p, sandbox_landlock_abi() > 0);
		mine = read_proc("/proc/self/mountinfo");
		parse(mine, &host, "the test");
		parse(text, &wk, b->name);
		bad += compare(&host, &wk, &pl);
		compared++;
		free(mine);
		free(text);
		free(host.v);
		free(wk.v);
	}
	h_rm_rf(dir);
	if (bad != 0)
		fail_msg("%d mounts differ from the plan (above)", bad);
	/* Every profile skipped is a test that compared nothing. */
	if (compared == 0)
		fail_msg("no built-in profile could be spawned here: nothing "
		    "was compared with its plan (the reasons are above)");
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_worker_mounts),
		cmocka_unit_test(test_spawned_mounts),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}

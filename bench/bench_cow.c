/*
 * bench_cow: what a copy-on-write workspace (workspace/cow.h) costs.
 *
 *  1. spawn -> hello of a worker through the spawn server, with no layer,
 *     in an overlay layer and in a copy layer: three servers, one worker
 *     at a time, interleaved so that a change of load hits them alike.
 *  2. The one-off costs of a run's layer: cow_create (overlay, copy) and
 *     spawnd_client_layer (the server enters it) on a small workspace
 *     (10 files) and on one of 10,000 files (100 dirs of 100 files of
 *     20 lines, 650 bytes), then cow_remove.
 *  3. The library's side of `warren diff` and `warren apply` on a layer
 *     where 1,000 files of 20 lines changed one line each (written into
 *     upper/ or tree/ directly): cow_changes + cow_diff to /dev/null,
 *     cow_changes + cow_apply. A fresh workspace and layer each time.
 *
 *  4. The same 1,000 files as a change set (another machine's apply):
 *     cow_changes + cow_pack, then cow_unpack + cow_apply by content into
 *     a copy of the workspace elsewhere.
 *
 *	bench_cow [N [PROFILE [REPS]]]	(N = 200, PROFILE = explore, REPS = 11)
 *	bench_cow sets [REPS]		(4. only)
 *	bench_cow usage [REPS]		(5. only)
 *	bench_cow bound [REPS]		(6. only)
 *
 *  5. cow_usage, the disk limit's measure of a layer (every 200 ms while
 *     a run's workers live): a copy layer of the 10,000-file workspace.
 *  6. An overlay layer held on a tmpfs (disk_max, workspace/cow_bound.c)
 *     or not: spawnd_client_layer (the server enters it, copying upper/
 *     in) and spawnd_client_stop (the server ends, copying it back), on
 *     an empty layer and on one of 1,000 files (10 dirs of 100 files of
 *     20 lines, in upper/ before the server starts), interleaved.
 *
 * WARREN_WORKER_BIN names the worker (default: ./worker/warren-worker).
 * The trees go under $TMPDIR (default /tmp); every layer's directory too.
 */
#include <sys/stat.h>
#include <sys/wait.h>

#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "agent/profile.h"
#include "common/clock.h"
#include "ipc/ipc.h"
#include "sandbox/sandbox.h"
#include "spawnd/spawn.h"
#include "supervisor/spawnd_client.h"
#include "workspace/cow.h"

#define NSERVERS	3	/* none, overlay, copy */

/* One request's answer and its worker's exit, as the client reads them. */
struct job {
	int			 spawned, exited;
	struct spawn_child	 c;
	char			 err[512];
};

static const char	*tmp;
static char		 statedir[PATH_MAX];

static int
cmp_u64(const void *a, const void *b)
{
	uint64_t	x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

static void
report(const char *what, uint64_t *ns, int n)
{
	qsort(ns, (size_t)n, sizeof(*ns), cmp_u64);
	printf("%-42s median %9.3f ms  min %9.3f  max %9.3f  (n=%d)\n", what,
	    ns[n / 2] / 1e6, ns[0] / 1e6, ns[n - 1] / 1e6, n);
}

static void
die(const char *what, const char *err)
{
	fprintf(stderr, "bench_cow: %s: %s\n", what, err);
	exit(1);
}

/* snprintf of a path; one too long ends the bench. */
static void __attribute__((format(printf, 3, 4)))
pathf(char *buf, size_t sz, const char *fmt, ...)
{
	va_list	ap;
	int	n;

	va_start(ap, fmt);
	n = vsnprintf(buf, sz, fmt, ap);
	va_end(ap);
	if (n < 0 || (size_t)n >= sz)
		die(fmt, "path too long");
}

static int
rm_one(const char *p, const struct stat *sb, int type, struct FTW *f)
{
	(void)sb;
	(void)f;
	return type == FTW_DP ? rmdir(p) : unlink(p);
}

static void
rm_tree(const char *dir)
{
	(void)nftw(dir, rm_one, 16, FTW_DEPTH | FTW_PHYS);
}

static void
write_file(const char *path, const char *s, size_t len)
{
	int	fd;

	if ((fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644)) == -1 ||
	    write(fd, s, len) != (ssize_t)len || close(fd) == -1)
		die(path, strerror(errno));
}

/* 20 lines of text; line 10 says which version it is. */
static size_t
text(char *buf, size_t sz, int file, const char *version)
{
	size_t	len = 0;
	int	l;

	for (l = 0; l < 20 && len < sz; l++)
		len += (size_t)snprintf(buf + len, sz - len, "file %d line %d "
		    "%s\n", file, l, l == 10 ? version : "unchanged");
	return len < sz ? len : sz - 1;
}

/* ndirs directories of nfiles files of text() each, under root (made). */
static void
make_tree(const char *root, int ndirs, int nfiles, const char *version)
{
	char	 p[PATH_MAX], buf[2048];
	int	 d, f;
	size_t	 len;

	if (mkdir(root, 0755) == -1 && errno != EEXIST)
		die(root, strerror(errno));
	for (d = 0; d < ndirs; d++) {
		pathf(p, sizeof(p), "%s/d%03d", root, d);
		if (mkdir(p, 0755) == -1 && errno != EEXIST)
			die(p, strerror(errno));
		for (f = 0; f < nfiles; f++) {
			pathf(p, sizeof(p), "%s/d%03d/f%03d.txt", root, d,
			    f);
			len = text(buf, sizeof(buf), d * nfiles + f, version);
			write_file(p, buf, len);
		}
	}
}

/* A fresh workspace $tmp/name of make_tree(); its canonical path in ws. */
static void
make_ws(char *ws, size_t wssz, const char *name, int ndirs, int nfiles)
{
	char	 p[PATH_MAX];

	pathf(p, sizeof(p), "%s/%s", tmp, name);
	rm_tree(p);
	make_tree(p, ndirs, nfiles, "base");
	if (realpath(p, ws) == NULL || strlen(ws) >= wssz)
		die(p, "realpath");
}

static void
job_spawned(void *cookie, const struct spawn_child *c, const char *err,
    void *arg)
{
	struct job	*j = cookie;

	(void)arg;
	j->spawned = 1;
	if (c == NULL)
		snprintf(j->err, sizeof(j->err), "%s", err);
	else
		j->c = *c;
}

static void
job_exited(pid_t pid, int code, int status, void *arg)
{
	struct job	*j = arg;

	(void)code;
	(void)status;
	if (pid == j->c.pid)
		j->exited = 1;
}

static const struct spawnd_client_ops job_ops = { job_spawned, job_exited };

/* Read the server's answers until *flag is set (10 s at most). */
static void
server_until(struct spawnd_client *d, struct job *j, const int *flag)
{
	struct pollfd	pfd;

	pfd.fd = spawnd_client_fd(d);
	pfd.events = POLLIN;
	while (!*flag) {
		if (poll(&pfd, 1, 10000) <= 0)
			die("spawn server", "no answer in 10 s");
		if (spawnd_client_read(d, &job_ops, j) == -1)
			die("spawn server", "gone");
	}
}

/* Block until a whole hello frame came; 0 on success. */
static int
wait_hello(struct spawn_child *c)
{
	struct ipc_peer	 p;
	struct ipc_msg	 m;
	struct pollfd	 pfd;
	int		 rc = -1;

	ipc_peer_init(&p, c->from_fd, c->to_fd, IPC_SIDE_SUPERVISOR);
	pfd.fd = c->from_fd;
	pfd.events = POLLIN;
	for (;;) {
		memset(&m, 0, sizeof(m));
		if (ipc_peer_get(&p, &m) == 1) {
			rc = m.type == IPC_HELLO ? 0 : -1;
			ipc_msg_free(&m);
			break;
		}
		if (poll(&pfd, 1, 10000) <= 0)
			break;
		if (ipc_peer_fill(&p) <= 0 && errno != EAGAIN)
			break;
	}
	ipc_peer_free(&p);
	return rc;
}

/* One worker of d: request -> hello, in ns; then killed and reaped. */
static uint64_t
spawn_hello(struct spawnd_client *d, const struct spawn_req *req)
{
	struct job	 j;
	uint64_t	 t0, ns;
	char		 err[512];

	memset(&j, 0, sizeof(j));
	t0 = clock_mono_ns();
	if (spawnd_client_request(d, req, &j, err, sizeof(err)) == 0)
		die("request", err);
	server_until(d, &j, &j.spawned);
	if (j.err[0] != '\0')
		die("spawn", j.err);
	if (wait_hello(&j.c) == -1)
		die("spawn", "no hello from the worker");
	ns = clock_mono_ns() - t0;
	spawnd_client_kill(d, j.c.pid, SIGKILL);
	server_until(d, &j, &j.exited);
	spawn_release(&j.c);
	return ns;
}

static struct spawnd_client *
server(const struct cow *c, uint64_t *layer_ns)
{
	struct spawnd_client	*d;
	uint64_t		 t0;
	char			 err[1024];
	int			 memfd = -1;

	if ((d = spawnd_client_start(err, sizeof(err))) == NULL)
		die("spawn server", err);
	t0 = clock_mono_ns();
	if (c != NULL && spawnd_client_layer(d, c, &memfd, err, sizeof(err))
	    == -1)
		die("spawn server's layer", err);
	if (memfd != -1)
		close(memfd);
	if (layer_ns != NULL)
		*layer_ns = clock_mono_ns() - t0;
	return d;
}

static void
layer_new(struct cow *c, enum cow_mode mode, const char *ws, uint64_t *ns)
{
	uint64_t	t0 = clock_mono_ns();
	char		err[1024];

	if (cow_create(c, mode, ws, statedir, err, sizeof(err)) == -1)
		die("cow_create", err);
	if (ns != NULL)
		*ns = clock_mono_ns() - t0;
}

static void
layer_gone(const struct cow *c, uint64_t *ns)
{
	uint64_t	t0 = clock_mono_ns();
	char		err[1024];

	if (cow_remove(c, err, sizeof(err)) == -1)
		die("cow_remove", err);
	if (ns != NULL)
		*ns = clock_mono_ns() - t0;
}

/* 1. spawn -> hello without a layer, in an overlay, in a copy. */
static void
bench_spawn(int n, const char *profile, const char *bin)
{
	static const char *const what[NSERVERS] = { "spawn -> hello, no layer",
	    "spawn -> hello, overlay layer", "spawn -> hello, copy layer" };
	struct sandbox_policy	 pol;
	struct sandbox_error	 e;
	struct spawn_req	 req;
	struct spawnd_client	*d[NSERVERS];
	struct cow		 ov, cp;
	char			*wargv[] = { "warren-worker", "--path", "0.1",
				    "--depth", "1", "--profile", NULL, NULL };
	char			 ws[PATH_MAX], **env;
	uint64_t		*lat[NSERVERS];
	int			 i, s;

	make_ws(ws, sizeof(ws), "spawn-ws", 1, 10);
	wargv[6] = (char *)(uintptr_t)profile;
	memset(&e, 0, sizeof(e));
	if (profile_policy(&pol, profile, ws, &e) == -1)
		die("policy", e.msg);
	env = spawn_env();
	req = (struct spawn_req){ .bin = bin, .argv = wargv, .envp = env,
	    .policy = &pol };
	layer_new(&ov, COW_OVERLAY, ws, NULL);
	layer_new(&cp, COW_COPY, ws, NULL);
	d[0] = server(NULL, NULL);
	d[1] = server(&ov, NULL);
	d[2] = server(&cp, NULL);
	for (s = 0; s < NSERVERS; s++)
		lat[s] = calloc((size_t)n, sizeof(*lat[s]));
	for (i = 0; i < n; i++)
		for (s = 0; s < NSERVERS; s++)
			lat[s][i] = spawn_hello(d[s], &req);
	printf("workspace %s (10 files), profile %s, worker %s\n", ws,
	    profile, bin);
	for (s = 0; s < NSERVERS; s++) {
		report(what[s], lat[s], n);
		spawnd_client_stop(d[s]);
	}
	printf("ratio of medians: overlay / none %.2fx, copy / none %.2fx\n",
	    (double)lat[1][n / 2] / (double)lat[0][n / 2],
	    (double)lat[2][n / 2] / (double)lat[0][n / 2]);
	for (s = 0; s < NSERVERS; s++)
		free(lat[s]);
	layer_gone(&ov, NULL);
	layer_gone(&cp, NULL);
	spawn_env_free(env);
	rm_tree(ws);
}

/* 2. cow_create, spawnd_client_layer, cow_remove, reps times each mode. */
static void
bench_layer(const char *label, int ndirs, int nfiles, int reps)
{
	static const enum cow_mode modes[2] = { COW_OVERLAY, COW_COPY };
	struct spawnd_client	*d;
	struct cow		 c;
	uint64_t		*cr[2], *la[2], *rm[2];
	char			 ws[PATH_MAX], what[128];
	int			 i, m;

	make_ws(ws, sizeof(ws), "layer-ws", ndirs, nfiles);
	for (m = 0; m < 2; m++) {
		cr[m] = calloc((size_t)reps, sizeof(*cr[m]));
		la[m] = calloc((size_t)reps, sizeof(*la[m]));
		rm[m] = calloc((size_t)reps, sizeof(*rm[m]));
	}
	for (i = 0; i < reps; i++)
		for (m = 0; m < 2; m++) {
			layer_new(&c, modes[m], ws, &cr[m][i]);
			d = server(&c, &la[m][i]);
			spawnd_client_stop(d);
			layer_gone(&c, &rm[m][i]);
		}
	for (m = 0; m < 2; m++) {
		snprintf(what, sizeof(what), "cow_create %s, %s",
		    cow_mode_name(modes[m]), label);
		report(what, cr[m], reps);
		snprintf(what, sizeof(what), "spawnd_client_layer %s, %s",
		    cow_mode_name(modes[m]), label);
		report(what, la[m], reps);
		snprintf(what, sizeof(what), "cow_remove %s, %s",
		    cow_mode_name(modes[m]), label);
		report(what, rm[m], reps);
		free(cr[m]);
		free(la[m]);
		free(rm[m]);
	}
	rm_tree(ws);
}

/* Write the changed version of every file into the layer's tree. */
static void
layer_write(const struct cow *c, int ndirs, int nfiles)
{
	char	 p[PATH_MAX];

	pathf(p, sizeof(p), "%s/%s", c->dir, c->mode == COW_OVERLAY ?
	    "upper" : "tree");
	make_tree(p, ndirs, nfiles, "changed by the run");
}

/* 3. One diff or apply of 1,000 changed files: its ns. */
static uint64_t
diff_apply_once(enum cow_mode mode, int apply)
{
	struct cow_changes	 ch;
	struct cow		 c;
	uint64_t		 t0, ns;
	FILE			*out;
	char			 ws[PATH_MAX], err[1024];
	int			 rc;

	make_ws(ws, sizeof(ws), "diff-ws", 10, 100);
	layer_new(&c, mode, ws, NULL);
	layer_write(&c, 10, 100);
	if ((out = fopen("/dev/null", "w")) == NULL)
		die("/dev/null", strerror(errno));
	t0 = clock_mono_ns();
	if (cow_changes(&c, &ch, err, sizeof(err)) == -1)
		die("cow_changes", err);
	if (ch.n != 1000)
		fprintf(stderr, "bench_cow: %zu changes, not 1000\n", ch.n);
	rc = apply ? cow_apply(&c, &ch, 0, out, err, sizeof(err)) :
	    cow_diff(&c, &ch, out, 0, err, sizeof(err));
	if (rc != 0)
		die(apply ? "cow_apply" : "cow_diff", rc == 1 ? "conflict" :
		    err);
	fflush(out);
	ns = clock_mono_ns() - t0;
	fclose(out);
	cow_changes_free(&ch);
	layer_gone(&c, NULL);
	rm_tree(ws);
	return ns;
}

static void
bench_diff_apply(int reps)
{
	static const enum cow_mode modes[2] = { COW_OVERLAY, COW_COPY };
	uint64_t	*ns[2][2];
	char		 what[128];
	int		 i, m, a;

	for (m = 0; m < 2; m++)
		for (a = 0; a < 2; a++)
			ns[m][a] = calloc((size_t)reps, sizeof(uint64_t));
	for (i = 0; i < reps; i++)
		for (m = 0; m < 2; m++)
			for (a = 0; a < 2; a++)
				ns[m][a][i] = diff_apply_once(modes[m], a);
	for (m = 0; m < 2; m++)
		for (a = 0; a < 2; a++) {
			snprintf(what, sizeof(what), "%s, %s, 1,000 files",
			    a ? "changes + apply" : "changes + diff",
			    cow_mode_name(modes[m]));
			report(what, ns[m][a], reps);
			free(ns[m][a]);
		}
}

/* 4. The same 1,000 changed files carried to another machine: pack (on
 * the worker: cow_changes + cow_pack), then unpack into a copy of the
 * workspace elsewhere and apply by content (cow_unpack + cow_apply). */
static void
sets_once(uint64_t *pack_ns, uint64_t *apply_ns, size_t *bytes)
{
	struct cow_changes	 ch, ch2;
	struct cow		 c, c2;
	uint64_t		 t0;
	FILE			*out;
	void			*set;
	char			 ws[PATH_MAX], ws2[PATH_MAX], dir[PATH_MAX];
	char			 err[1024];

	make_ws(ws, sizeof(ws), "set-ws", 10, 100);
	make_ws(ws2, sizeof(ws2), "set-ws2", 10, 100);
	layer_new(&c, COW_COPY, ws, NULL);
	layer_write(&c, 10, 100);
	t0 = clock_mono_ns();
	if (cow_changes(&c, &ch, err, sizeof(err)) == -1 ||
	    cow_pack(&c, &ch, COW_PACK_MAX, &set, bytes, err, sizeof(err)) !=
	    0)
		die("cow_pack", err);
	*pack_ns = clock_mono_ns() - t0;
	pathf(dir, sizeof(dir), "%s/set-dir", tmp);
	if ((out = fopen("/dev/null", "w")) == NULL)
		die("/dev/null", strerror(errno));
	t0 = clock_mono_ns();
	if (cow_unpack(set, *bytes, dir, ws2, &c2, &ch2, err, sizeof(err)) ==
	    -1 || cow_apply(&c2, &ch2, 0, out, err, sizeof(err)) != 0)
		die("cow_unpack + cow_apply", err);
	fflush(out);
	*apply_ns = clock_mono_ns() - t0;
	fclose(out);
	if (cow_remove(&c2, err, sizeof(err)) == -1)
		die("cow_remove", err);
	free(set);
	cow_changes_free(&ch);
	cow_changes_free(&ch2);
	layer_gone(&c, NULL);
	rm_tree(ws);
	rm_tree(ws2);
}

static void
bench_sets(int reps)
{
	uint64_t	*pack = calloc((size_t)reps, sizeof(uint64_t));
	uint64_t	*apply = calloc((size_t)reps, sizeof(uint64_t));
	uint64_t	*local = calloc((size_t)reps, sizeof(uint64_t));
	size_t		 bytes = 0;
	int		 i;

	if (pack == NULL || apply == NULL || local == NULL)
		die("calloc", strerror(errno));
	/* Beside the same machine's apply of the layer, interleaved. */
	for (i = 0; i < reps; i++) {
		sets_once(&pack[i], &apply[i], &bytes);
		local[i] = diff_apply_once(COW_COPY, 1);
	}
	report("changes + cow_pack, copy, 1,000 files", pack, reps);
	report("cow_unpack + cow_apply, 1,000 files", apply, reps);
	report("(here: changes + cow_apply, copy)", local, reps);
	printf("%-42s %zu bytes\n", "the change set", bytes);
	free(pack);
	free(apply);
	free(local);
}

/* 5. The disk limit's walk of a copy of 10,000 files. */
static void
bench_usage(int reps)
{
	uint64_t	*ns = calloc((size_t)reps, sizeof(uint64_t));
	uint64_t	 t0, bytes;
	struct cow	 c;
	char		 ws[PATH_MAX], err[1024];
	int		 i;

	if (ns == NULL)
		die("calloc", strerror(errno));
	make_ws(ws, sizeof(ws), "usage", 100, 100);
	layer_new(&c, COW_COPY, ws, NULL);
	for (i = 0; i < reps; i++) {
		t0 = clock_mono_ns();
		if (cow_usage(&c, &bytes, err, sizeof(err)) == -1)
			die("cow_usage", err);
		ns[i] = clock_mono_ns() - t0;
	}
	report("cow_usage, copy, 10,000 files", ns, reps);
	printf("%-42s %llu KiB\n", "the layer", (unsigned long long)(bytes /
	    1024));
	layer_gone(&c, NULL);
	rm_tree(ws);
	free(ns);
}

/* 6. Enter and end an overlay with and without a bound of 1 GiB. */
static void
bench_bound(int reps)
{
	static const uint64_t	 bounds[2] = { 0, 1ull << 30 };
	static const int	 files[2] = { 0, 1000 };
	struct spawnd_client	*d;
	struct cow		 c;
	uint64_t		*in[2][2], *out[2][2], t0;
	char			 ws[PATH_MAX], what[128];
	int			 i, b, f;

	make_ws(ws, sizeof(ws), "bound-ws", 10, 100);
	for (b = 0; b < 2; b++)
		for (f = 0; f < 2; f++) {
			in[b][f] = calloc((size_t)reps, sizeof(uint64_t));
			out[b][f] = calloc((size_t)reps, sizeof(uint64_t));
		}
	for (i = 0; i < reps; i++)
		for (f = 0; f < 2; f++)
			for (b = 0; b < 2; b++) {
				layer_new(&c, COW_OVERLAY, ws, NULL);
				if (files[f] != 0)
					layer_write(&c, 10, 100);
				c.bound = bounds[b];
				d = server(&c, &in[b][f][i]);
				t0 = clock_mono_ns();
				spawnd_client_stop(d);
				out[b][f][i] = clock_mono_ns() - t0;
				layer_gone(&c, NULL);
			}
	for (f = 0; f < 2; f++)
		for (b = 0; b < 2; b++) {
			snprintf(what, sizeof(what), "spawnd_client_layer, %d "
			    "files, %s", files[f], b ? "tmpfs" : "on disk");
			report(what, in[b][f], reps);
			snprintf(what, sizeof(what), "spawnd_client_stop, %d "
			    "files, %s", files[f], b ? "tmpfs" : "on disk");
			report(what, out[b][f], reps);
			free(in[b][f]);
			free(out[b][f]);
		}
	rm_tree(ws);
}

int
main(int argc, char **argv)
{
	const char	*bin = getenv("WARREN_WORKER_BIN");
	const char	*profile = argc > 2 ? argv[2] : "explore";
	char		 root[PATH_MAX];
	int		 n = argc > 1 ? atoi(argv[1]) : 200;
	int		 reps = argc > 3 ? atoi(argv[3]) : 11;
	int		 only_sets = argc > 1 && strcmp(argv[1], "sets") == 0;
	int		 only_usage = argc > 1 &&
			    strcmp(argv[1], "usage") == 0;
	int		 only_bound = argc > 1 &&
			    strcmp(argv[1], "bound") == 0;

	if (only_sets || only_usage || only_bound)
		reps = argc > 2 ? atoi(argv[2]) : 5;
	if (n < 10)
		n = 10;
	if (reps < 1)
		reps = 1;
	if (bin == NULL)
		bin = "./worker/warren-worker";
	if ((tmp = getenv("TMPDIR")) == NULL || *tmp == '\0')
		tmp = "/tmp";
	pathf(root, sizeof(root), "%s/bench-cow.XXXXXX", tmp);
	if (mkdtemp(root) == NULL)
		die(root, strerror(errno));
	tmp = root;
	pathf(statedir, sizeof(statedir), "%s/state", root);
	signal(SIGPIPE, SIG_IGN);
	setvbuf(stdout, NULL, _IOLBF, 0);	/* a long run shows its rows */
	if (only_usage || only_bound) {
		if (only_usage)
			bench_usage(reps);
		else
			bench_bound(reps);
		rm_tree(root);
		return 0;
	}
	if (!only_sets) {
		bench_spawn(n, profile, bin);
		bench_layer("10 files", 1, 10, reps);
		bench_layer("10,000 files", 100, 100, reps);
		bench_diff_apply(reps < 5 ? reps : 5);
	}
	bench_sets(reps < 5 ? reps : 5);
	rm_tree(root);
	return 0;
}

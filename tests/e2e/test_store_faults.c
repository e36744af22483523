/*
 * The store under faults, through the real `warren run` on real files:
 *   - the disk fills up mid-run (RLIMIT_FSIZE at several sizes, and a
 *     small tmpfs when root may mount one): exit 6, the run's status says
 *     so, nothing reported done is missing, and `warren resume` redoes
 *     only what was not written, to the same rows as a clean run;
 *   - garbage in the middle of the file: exit 6, never done with exit 0;
 *   - another process holds the write lock 8 s mid-run: no row lost,
 *     exit 0, and the run takes about as long as without the lock.
 * A clean run of the same cassette gives the reference rows.
 */
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/types.h>

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
#include <sqlite3.h>

#include "common/clock.h"
#include "store/store.h"
#include "tests/e2e/harness.h"

#define NPATHS		3
#define LOCK_HOLD_S	8

static const char *const paths[NPATHS] = { "0", "0.1", "0.2" };

/* What the database holds of the newest run. */
struct snap {
	int			found;	/* 1 run there, 0 none, -1 unreadable */
	int64_t			run;
	enum store_run_status	status;
	size_t			nagents;
	int			done[NPATHS];
	uint64_t		nmsg[NPATHS];
};

struct ctx {
	struct h_ws	w;
	struct snap	ref;		/* a clean run */
	uint64_t	ref_ms;		/* its wall time */
	char		refdb[PATH_MAX];
};

static struct ctx	*g;
static struct h_ws	*g_ws;		/* where warren_on runs */
static char		 g_mounted[PATH_MAX];	/* a tmpfs to unmount */

static void
snap_read(const char *db, struct snap *s)
{
	struct store		*st;
	struct store_run	 r;
	struct store_agent	*a;
	size_t			 n, i, k;
	char			 err[1024];

	memset(s, 0, sizeof(*s));
	if ((st = store_open(db, STORE_READ, err, sizeof(err))) == NULL) {
		s->found = -1;
		return;
	}
	if (store_run_latest(st, NULL, &s->run) == -1) {
		s->found = store_errcode(st) == STORE_ENOTFOUND ? 0 : -1;
		store_close(st);
		return;
	}
	if (store_run_get(st, s->run, &r) == -1 ||
	    store_agents_list(st, s->run, &a, &n) == -1) {
		s->found = -1;
		store_close(st);
		return;
	}
	s->found = 1;
	s->status = r.status;
	s->nagents = n;
	for (i = 0; i < n; i++)
		for (k = 0; k < NPATHS; k++)
			if (strcmp(a[i].path, paths[k]) == 0) {
				s->done[k] = a[i].status == STORE_AGENT_DONE;
				s->nmsg[k] = a[i].nmessages;
			}
	store_agents_free(a, n);
	store_run_free(&r);
	store_close(st);
}

/* The rows of a whole run, as the clean run (ref) wrote them. */
static void
assert_same(const struct snap *s, const struct snap *ref)
{
	size_t	k;

	assert_int_equal(s->found, 1);
	assert_int_equal(s->status, STORE_RUN_DONE);
	assert_int_equal(s->nagents, ref->nagents);
	for (k = 0; k < NPATHS; k++) {
		assert_true(s->done[k]);
		assert_int_equal(s->nmsg[k], ref->nmsg[k]);
	}
}

static void
assert_complete(const struct snap *s)
{
	assert_same(s, &g->ref);
}

static const char *
complete_args(const char *result)
{
	static char	buf[4][256];
	static int	k;

	k = (k + 1) % 4;
	snprintf(buf[k], sizeof(buf[k]), "{\"result\":%s}", h_js(result));
	return buf[k];
}

static const char *
bash_args(const char *cmd)
{
	static char	buf[4][256];
	static int	k;

	k = (k + 1) % 4;
	snprintf(buf[k], sizeof(buf[k]), "{\"command\":%s}", h_js(cmd));
	return buf[k];
}

/* Two subagents in parallel, each steps bash calls of sleep_s seconds,
 * then complete; the orchestrator completes with their results. */
static void
write_cassette(struct h_ws *w, unsigned sleep_s, unsigned steps)
{
	char		cmd[64], id[16];
	unsigned	i, k;

	h_turn(w->f, "0", 1, h_calls2("a", "delegate",
	    "{\"profile\":\"test\",\"task\":\"A-TASK\"}", "b", "delegate",
	    "{\"profile\":\"test\",\"task\":\"B-TASK\"}"));
	for (k = 1; k <= 2; k++) {
		for (i = 1; i <= steps; i++) {
			snprintf(cmd, sizeof(cmd), "echo %u.%u; sleep %u", k,
			    i, sleep_s);
			snprintf(id, sizeof(id), "c%u%u", k, i);
			h_turn(w->f, paths[k], i, h_calls1(id, "bash",
			    bash_args(cmd)));
		}
		h_turn(w->f, paths[k], steps + 1, h_calls1(k == 1 ? "e" : "h",
		    "complete", complete_args(k == 1 ? "A-RES" : "B-RES")));
	}
	h_turn(w->f, "0", 2, h_calls1("i", "complete",
	    complete_args("FINAL-RES")));
	h_ws_cassette_close(w);
}

/* warren run (or resume when resume is set) on db; returns ms taken. */
static uint64_t
warren_on(struct h_run *r, char *db, int resume,
    void (*during)(pid_t, void *), void *arg)
{
	char		*run[] = { "warren", "run", "--db", db,
			    "--workspace", g_ws->ws, "--replay", g_ws->cas,
			    "store fault task", NULL };
	char		*res[] = { "warren", "resume", "--json", "--db",
			    db, "--workspace", g_ws->ws, "--replay",
			    g_ws->cas, "last", NULL };
	uint64_t	 t0 = clock_mono_ms();

	assert_int_equal(h_warren(r, resume ? res : run, NULL, during, arg),
	    0);
	return clock_mono_ms() - t0;
}

/* A database with its schema and nothing else, checkpointed. */
static void
make_db(const char *db)
{
	struct store	*st;
	char		 err[1024];

	st = store_open(db, STORE_CREATE, err, sizeof(err));
	if (st == NULL)
		fail_msg("%s", err);
	store_close(st);
}

static int
setup(void **state)
{
	struct h_run	r;

	g = calloc(1, sizeof(*g));
	h_ws_open(&g->w, "data\n");
	write_cassette(&g->w, 1, 2);
	g_ws = &g->w;
	snprintf(g->refdb, sizeof(g->refdb), "%s/ref.db", g->w.dir);
	g->ref_ms = warren_on(&r, g->refdb, 0, NULL, NULL);
	if (r.status != 0)
		return -1;
	h_run_free(&r);
	snap_read(g->refdb, &g->ref);
	if (g->ref.found != 1 || g->ref.status != STORE_RUN_DONE ||
	    g->ref.nagents != NPATHS)
		return -1;
	*state = g;
	return 0;
}

static int
teardown(void **state)
{
	(void)state;
	if (*g_mounted != '\0')
		(void)umount(g_mounted);
	h_ws_close(&g->w);
	free(g);
	return 0;
}

/* Agents that the resume started again. */
static int
spawned(const char *out, const char *path)
{
	char	want[64];

	snprintf(want, sizeof(want), "\"path\":\"%s\"", path);
	return h_count_lines(out, "\"event\":\"spawned\"", want);
}

/*
 * A run whose writes failed (exit 6) on db: what it says, what it left,
 * and that resume completes it to the reference rows, starting again no
 * agent the database had as done. 1: the run row was there (mid-run),
 * 0: it failed before (nothing to resume).
 */
static int
after_lost_writes(const struct h_run *r, char *db)
{
	struct snap	 s;
	struct h_run	 rr;
	size_t		 k;

	assert_int_equal(r->status, 6);
	snap_read(db, &s);
	assert_true(s.found >= 0);
	if (s.found == 0)
		return 0;
	assert_non_null(strstr(r->err, "could not be written"));
	assert_non_null(strstr(r->err, "warren resume"));
	/* Never done; store_failed where that could be written. */
	assert_true(s.status == STORE_RUN_STORE_FAILED ||
	    s.status == STORE_RUN_RUNNING);
	if (s.status == STORE_RUN_RUNNING)
		assert_non_null(strstr(r->err, "could not be written either"));
	/* An agent stored as done has all of its messages. */
	for (k = 0; k < NPATHS; k++)
		if (s.done[k])
			assert_int_equal(s.nmsg[k], g->ref.nmsg[k]);
	warren_on(&rr, db, 1, NULL, NULL);
	assert_int_equal(rr.status, 0);
	for (k = 1; k < NPATHS; k++)
		if (s.done[k])
			assert_int_equal(spawned(rr.out, paths[k]), 0);
	h_run_free(&rr);
	snap_read(db, &s);
	assert_complete(&s);
	return 1;
}

/* One run with every file warren writes capped at limit bytes. */
static int
disk_full_at(long long limit)
{
	struct h_run	r;
	struct snap	s;
	char		db[PATH_MAX];
	int		mid;

	snprintf(db, sizeof(db), "%s/full-%lld.db", g->w.dir, limit);
	make_db(db);
	h_fsize_limit = limit;
	warren_on(&r, db, 0, NULL, NULL);
	if (r.status == 0) {
		snap_read(db, &s);
		assert_complete(&s);
		h_run_free(&r);
		fprintf(stderr, "limit %lld: the run fit\n", limit);
		return 2;
	}
	mid = after_lost_writes(&r, db);
	fprintf(stderr, "limit %lld: %s\n", limit, mid ? "failed mid-run" :
	    "failed before the run's row");
	h_run_free(&r);
	return mid;
}

static void
test_disk_full_rlimit(void **state)
{
	static const long long	sizes[] = { 8192, 40960, 65536, 131072 };
	size_t			i;
	int			mid = 0;

	(void)state;
	for (i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++)
		mid += disk_full_at(sizes[i]) == 1;
	/* The sizes were picked so that writes fail in the middle. */
	assert_true(mid >= 2);
}

/*
 * warren run as a user's shell limits it (sh -c 'ulimit -f N; exec
 * warren run ...', SIGXFSZ at its default), on a fresh state directory:
 * at 16 and 48 KiB the database cannot be made, at 128 KiB the run's
 * writes fail mid-run. Each is exit 6 with the store's words on stderr,
 * naming the limit, never death by SIGXFSZ (exit 153, nothing said).
 */
static void
test_ulimit_f(void **state)
{
	static const long long	 kib[] = { 16, 48, 128 };	/* KiB */
	char			 st[PATH_MAX + 32], *env[2];
	char			*run[] = { "warren", "run", "--workspace",
				    g_ws->ws, "--replay", g_ws->cas,
				    "store fault task", NULL };
	struct h_run		 r;
	size_t			 i;

	(void)state;
	for (i = 0; i < sizeof(kib) / sizeof(kib[0]); i++) {
		snprintf(st, sizeof(st), "XDG_STATE_HOME=%s/state-%lld",
		    g->w.dir, kib[i]);
		env[0] = st;
		env[1] = NULL;
		h_ulimit_f = kib[i] * 2;	/* POSIX sh: 512-byte blocks */
		assert_int_equal(h_warren(&r, run, env, NULL, NULL), 0);
		if (r.status != 6 || strstr(r.err, "database ") == NULL ||
		    strstr(r.err, "a file size limit of ") == NULL ||
		    strstr(r.err, " bytes is set (ulimit -f, RLIMIT_FSIZE)") ==
		    NULL)
			fail_msg("ulimit -f %lld: exit %d, stderr:\n%s", kib[i],
			    r.status, r.err);
		fprintf(stderr, "ulimit -f %lld: exit 6\n", kib[i]);
		h_run_free(&r);
	}
}

/* Copy a file (the database out of a full tmpfs, to resume it). */
static void
copy_file(const char *from, const char *to)
{
	char	buf[65536];
	ssize_t	n;
	int	in, out;

	if ((in = open(from, O_RDONLY)) == -1) {
		assert_int_equal(errno, ENOENT);
		return;
	}
	assert_true((out = open(to, O_WRONLY | O_CREAT | O_TRUNC,
	    0600)) != -1);
	while ((n = read(in, buf, sizeof(buf))) > 0)
		assert_int_equal(write(out, buf, (size_t)n), n);
	close(in);
	close(out);
}

/* A database on a tmpfs of kib KiB (root only). -1 cannot mount. */
static int
tmpfs_full_at(int kib)
{
	struct h_run	 r;
	char		 mnt[PATH_MAX], db[PATH_MAX + 8], copy[PATH_MAX];
	char		 from[PATH_MAX + 16], to[PATH_MAX + 16], opt[32];
	struct snap	 s;
	int		 mid;

	snprintf(mnt, sizeof(mnt), "%s/tmpfs-%d", g->w.dir, kib);
	assert_int_equal(mkdir(mnt, 0700), 0);
	snprintf(opt, sizeof(opt), "size=%dk,mode=0700", kib);
	if (mount("tmpfs", mnt, "tmpfs", 0, opt) == -1) {
		fprintf(stderr, "tmpfs: %s: using RLIMIT_FSIZE only\n",
		    strerror(errno));
		return -1;
	}
	strlcpy(g_mounted, mnt, sizeof(g_mounted));
	snprintf(db, sizeof(db), "%s/w.db", mnt);
	make_db(db);
	warren_on(&r, db, 0, NULL, NULL);
	if (r.status == 0) {
		snap_read(db, &s);
		assert_complete(&s);
		mid = 2;
	} else {
		/* Resume where there is room: the file and its WAL. */
		snprintf(copy, sizeof(copy), "%s/tmpfs-%d.db", g->w.dir, kib);
		copy_file(db, copy);
		snprintf(from, sizeof(from), "%s-wal", db);
		snprintf(to, sizeof(to), "%s-wal", copy);
		copy_file(from, to);
		mid = after_lost_writes(&r, copy);
	}
	h_run_free(&r);
	assert_int_equal(umount(mnt), 0);
	*g_mounted = '\0';
	fprintf(stderr, "tmpfs %d KiB: %s\n", kib, mid == 2 ? "the run fit" :
	    mid ? "failed mid-run" : "failed before the run's row");
	return mid;
}

static void
test_disk_full_tmpfs(void **state)
{
	static const int	sizes[] = { 160, 200, 240, 400 };
	size_t			i;
	int			rc, mid = 0;

	(void)state;
	if (geteuid() != 0) {
		fprintf(stderr, "not root: no tmpfs (test_disk_full_rlimit"
		    " covers a full disk)\n");
		skip();
	}
	for (i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++) {
		if ((rc = tmpfs_full_at(sizes[i])) == -1)
			skip();
		mid += rc == 1;
	}
	assert_true(mid >= 1);
}

/*
 * The pages of a table of db, from SQLite's dbstat (the pages the
 * next run's first message insert must read): out, at most max.
 */
static int
table_pages(const char *db, const char *table, int64_t *out, int max,
    int *pgsz)
{
	sqlite3		*h;
	sqlite3_stmt	*s;
	int		 n = 0;

	assert_int_equal(sqlite3_open_v2(db, &h, SQLITE_OPEN_READONLY, NULL),
	    SQLITE_OK);
	assert_int_equal(sqlite3_prepare_v2(h, "SELECT pageno FROM dbstat"
	    " WHERE name = ?", -1, &s, NULL), SQLITE_OK);
	sqlite3_bind_text(s, 1, table, -1, SQLITE_STATIC);
	while (n < max && sqlite3_step(s) == SQLITE_ROW)
		out[n++] = sqlite3_column_int64(s, 0);
	sqlite3_finalize(s);
	assert_int_equal(sqlite3_prepare_v2(h, "PRAGMA page_size", -1, &s,
	    NULL), SQLITE_OK);
	assert_int_equal(sqlite3_step(s), SQLITE_ROW);
	*pgsz = sqlite3_column_int(s, 0);
	sqlite3_finalize(s);
	sqlite3_close(h);
	return n;
}

/*
 * Garbage over the pages of the messages table, in the middle of a file
 * that holds a finished run: the next run writes its run and agent rows,
 * then fails on its first message. Exit 6, never done.
 */
static void
test_corrupt_pages(void **state)
{
	struct h_run	 r;
	struct snap	 s;
	char		 db[PATH_MAX], junk[65536];
	int64_t		 pages[64];
	int		 fd, n, i, pgsz;

	(void)state;
	snprintf(db, sizeof(db), "%s/corrupt.db", g->w.dir);
	copy_file(g->refdb, db);
	n = table_pages(db, "messages", pages, 64, &pgsz);
	assert_true(n >= 1 && pgsz <= (int)sizeof(junk));
	for (i = 0; i < (int)sizeof(junk); i++)
		junk[i] = (char)(i * 131 + 7);
	assert_true((fd = open(db, O_WRONLY)) != -1);
	for (i = 0; i < n; i++) {
		assert_true(pages[i] > 1);
		assert_int_equal(pwrite(fd, junk, (size_t)pgsz,
		    (off_t)(pages[i] - 1) * pgsz), pgsz);
	}
	close(fd);
	warren_on(&r, db, 0, NULL, NULL);
	assert_int_equal(r.status, 6);
	assert_non_null(strstr(r.err, "damaged"));
	assert_non_null(strstr(r.err, "could not be written"));
	/* Stopped at the loss, not at the end of the task. */
	assert_non_null(strstr(r.err, "stopping every agent"));
	assert_int_equal(h_count_lines(r.err, "bash", NULL), 0);
	snap_read(db, &s);
	/* The new run (run 2) was recorded, and is not done. */
	assert_int_equal(s.found, 1);
	assert_int_equal(s.run, 2);
	assert_true(s.status == STORE_RUN_STORE_FAILED ||
	    s.status == STORE_RUN_RUNNING);
	assert_false(s.done[0]);
	h_run_free(&r);
}

/* --- another process holds the lock -------------------------------------- */

struct locker {
	char		*db;
	int		 held;
	int		 midrun;	/* taken mid-run, as meant */
	char		 why[1024];	/* if not, what was waited for */
};

/* Mid-run: both subagents started their first step. */
static int
midrun(void *arg)
{
	struct locker	*l = arg;
	struct snap	 s;

	snap_read(l->db, &s);
	return s.found == 1 && s.nmsg[1] >= 3 && s.nmsg[2] >= 3;
}

static void
hold_lock(pid_t warren, void *arg)
{
	struct locker	*l = arg;
	sqlite3		*h;

	l->midrun = h_wait_for(midrun, l, H_HANG_GUARD_S / 2, warren, "both "
	    "subagents at their first step (3 messages each in the store)")
	    == 0;
	if (!l->midrun) {
		snprintf(l->why, sizeof(l->why), "%s", h_wait_why);
		return;
	}
	if (sqlite3_open(l->db, &h) != SQLITE_OK)
		return;
	sqlite3_busy_timeout(h, 10000);
	if (sqlite3_exec(h, "BEGIN EXCLUSIVE", NULL, NULL, NULL) ==
	    SQLITE_OK) {
		l->held = 1;
		sleep(LOCK_HOLD_S);
		sqlite3_exec(h, "COMMIT", NULL, NULL, NULL);
	}
	sqlite3_close(h);
}

/*
 * A run of about 12 s (two subagents, four 3 s steps each), another
 * process holding the write lock for 8 s from its first second: no row
 * lost, and the run ends about when it would without the lock (the
 * writer thread waits for the lock; the agents do not). With the writes
 * on the loop (WARREN_STORE_INLINE=1, for comparison) it takes 8 s more:
 * then the time is printed, not checked.
 */
static void
test_lock_held(void **state)
{
	struct locker	 l;
	struct h_run	 r;
	struct h_ws	 w;
	struct snap	 s, ref;
	char		 db[PATH_MAX], cleandb[PATH_MAX];
	uint64_t	 ms, clean_ms;

	(void)state;
	h_ws_open(&w, "data\n");
	write_cassette(&w, 3, 4);
	g_ws = &w;
	snprintf(cleandb, sizeof(cleandb), "%s/clean.db", w.dir);
	clean_ms = warren_on(&r, cleandb, 0, NULL, NULL);
	assert_int_equal(r.status, 0);
	h_run_free(&r);
	snap_read(cleandb, &ref);
	snprintf(db, sizeof(db), "%s/locked.db", w.dir);
	make_db(db);
	memset(&l, 0, sizeof(l));
	l.db = db;
	ms = warren_on(&r, db, 0, hold_lock, &l);
	g_ws = &g->w;
	if (!l.midrun)
		fail_msg("%s", l.why);
	assert_true(l.held);
	assert_int_equal(r.status, 0);
	snap_read(db, &s);
	assert_same(&s, &ref);
	fprintf(stderr, "lock held %d s: run %llu ms, clean run %llu ms,"
	    " ratio %.2f%s\n", LOCK_HOLD_S, (unsigned long long)ms,
	    (unsigned long long)clean_ms, (double)ms / (double)clean_ms,
	    getenv("WARREN_STORE_INLINE") ? " (writes on the loop)" : "");
	if (getenv("WARREN_STORE_INLINE") == NULL)
		assert_true(ms < clean_ms + 3000);
	h_run_free(&r);
	h_ws_close(&w);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_disk_full_rlimit),
		cmocka_unit_test(test_ulimit_f),
		cmocka_unit_test(test_disk_full_tmpfs),
		cmocka_unit_test(test_corrupt_pages),
		cmocka_unit_test(test_lock_held),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}

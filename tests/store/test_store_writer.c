/*
 * The store's writer thread (store/store_writer.c), on real files:
 *   - writes return at once while another connection holds the write
 *     lock, and all of them land once it is released;
 *   - the queue is bounded: a producer waits when it is full, and nothing
 *     is dropped;
 *   - ids handed out before their rows exist work in every later call,
 *     and reads see every write queued before them;
 *   - a write lost by the writer is sticky and reported by store_lost();
 *     so is a group commit that fails (the file size limit), the loop
 *     woken at once;
 *   - the writer commits on its own once it has applied what is queued:
 *     no store_flush() is needed, and another connection's write lock
 *     (a rate gate, a queue on the same file) waits for no timer.
 */
#include <sys/resource.h>
#include <sys/stat.h>

#include <poll.h>
#include <pthread.h>
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
#include <sqlite3.h>

#include "common/clock.h"
#include "store/store_int.h"
#include "tests/store/store_test.h"
#include "store/store_testapi.h"

struct fx {
	struct store_tdir	 t;
	struct store		*st;
	int64_t			 run;
	pthread_t		 producer;	/* test_bound_waits_never_drops' */
	int			 producing;
};

/* The lock lock_db holds: a test that fails while it holds it has it
 * released by teardown, which would else wait for it in store_close. */
static sqlite3	*held;

static int
setup(void **state)
{
	struct store_run_params	 p = { .task = "writer" };
	struct fx		*fx = calloc(1, sizeof(*fx));
	char			 err[1024];

	store_tdir_make(&fx->t);
	fx->st = store_open(fx->t.db, STORE_CREATE, err, sizeof(err));
	assert_non_null(fx->st);
	assert_int_equal(store_run_begin(fx->st, &p, &fx->run), 0);
	assert_int_equal(store_flush(fx->st), 0);
	*state = fx;
	return 0;
}

static int
teardown(void **state)
{
	struct fx	*fx = *state;
	struct timespec	 ts;

	if (held != NULL) {
		sqlite3_exec(held, "ROLLBACK", NULL, NULL, NULL);
		sqlite3_close(held);
		held = NULL;
	}
	/* A producer left by a failed test ends once the lock is gone. */
	if (fx->producing) {
		clock_gettime(CLOCK_REALTIME, &ts);
		ts.tv_sec += 30;
		if (pthread_timedjoin_np(fx->producer, NULL, &ts) != 0) {
			fprintf(stderr, "teardown: the producer thread did not "
			    "end within 30 s of the lock's release\n");
			abort();
		}
	}
	store_close(fx->st);
	store_tdir_remove(&fx->t);
	free(fx);
	return 0;
}

/* A count by another connection: what is committed. */
static int64_t
committed(const char *db, const char *sql)
{
	sqlite3		*h;
	sqlite3_stmt	*s;
	int64_t		 n = -1;

	assert_int_equal(sqlite3_open_v2(db, &h, SQLITE_OPEN_READONLY, NULL),
	    SQLITE_OK);
	assert_int_equal(sqlite3_prepare_v2(h, sql, -1, &s, NULL), SQLITE_OK);
	if (sqlite3_step(s) == SQLITE_ROW)
		n = sqlite3_column_int64(s, 0);
	sqlite3_finalize(s);
	sqlite3_close(h);
	return n;
}

/* Wait up to ms for committed(db, sql) to reach want: 0, or -1. */
static int
committed_within(const char *db, const char *sql, int64_t want, int ms)
{
	uint64_t	t0 = clock_mono_ms();

	while (committed(db, sql) != want) {
		if (clock_mono_ms() - t0 >= (uint64_t)ms)
			return -1;
		usleep(10 * 1000);
	}
	return 0;
}

static sqlite3 *
lock_db(const char *db)
{
	sqlite3	*h;

	assert_int_equal(sqlite3_open(db, &h), SQLITE_OK);
	assert_int_equal(sqlite3_exec(h, "BEGIN EXCLUSIVE", NULL, NULL, NULL),
	    SQLITE_OK);
	held = h;
	return h;
}

static void
unlock_db(sqlite3 *h)
{
	held = NULL;
	assert_int_equal(sqlite3_exec(h, "COMMIT", NULL, NULL, NULL),
	    SQLITE_OK);
	sqlite3_close(h);
}

/* 2000 writes while the lock is held: none waits for it. */
static void
test_writes_do_not_wait(void **state)
{
	struct fx	*fx = *state;
	sqlite3		*h;
	uint64_t	 t0, took;
	int		 i;

	assert_int_equal(store_writer_start(fx->st), 0);
	h = lock_db(fx->t.db);
	t0 = clock_mono_ms();
	for (i = 0; i < 2000; i++) {
		assert_int_equal(store_event(fx->st, fx->run, "0", "tick",
		    "while locked"), 0);
		if (i % 100 == 0)
			assert_int_equal(store_flush(fx->st), 0);
	}
	took = clock_mono_ms() - t0;
	sleep(1);
	assert_int_equal(committed(fx->t.db, "SELECT count(*) FROM events"),
	    0);
	unlock_db(h);
	assert_true(took < 500);
	assert_int_equal(store_sync(fx->st), 0);
	assert_null(store_lost(fx->st));
	assert_int_equal(committed(fx->t.db, "SELECT count(*) FROM events"),
	    2000);
}

struct producer {
	struct store	*st;
	int64_t		 run;
	long		 n, done;
	pthread_mutex_t	 mu;
};

static void *
produce(void *arg)
{
	struct producer	*p = arg;
	long		 i;

	for (i = 0; i < p->n; i++) {
		if (store_event(p->st, p->run, NULL, "flood", "x") == -1)
			break;
		pthread_mutex_lock(&p->mu);
		p->done = i + 1;
		pthread_mutex_unlock(&p->mu);
	}
	return NULL;
}

static long
produced(struct producer *p)
{
	long	n;

	pthread_mutex_lock(&p->mu);
	n = p->done;
	pthread_mutex_unlock(&p->mu);
	return n;
}

/* Past the bound the producer waits; after the lock, every row lands. */
static void
test_bound_waits_never_drops(void **state)
{
	/* Static: a failed test leaves its thread to teardown's join. */
	static struct producer	 p;
	struct fx		*fx = *state;
	pthread_t		 t;
	sqlite3			*h;
	long			 before;

	assert_int_equal(store_writer_start(fx->st), 0);
	memset(&p, 0, sizeof(p));
	p.st = fx->st;
	p.run = fx->run;
	p.n = 3L * STORE_WRITER_MAX_ITEMS;
	pthread_mutex_init(&p.mu, NULL);
	h = lock_db(fx->t.db);
	assert_int_equal(pthread_create(&t, NULL, produce, &p), 0);
	fx->producer = t;
	fx->producing = 1;
	sleep(2);
	before = produced(&p);
	/* It stopped at the bound (plus what the writer took at once). */
	assert_true(before >= STORE_WRITER_MAX_ITEMS);
	assert_true(before <= 2L * STORE_WRITER_MAX_ITEMS + 1);
	sleep(1);
	assert_int_equal(produced(&p), before);
	unlock_db(h);
	fx->producing = 0;
	assert_int_equal(pthread_join(t, NULL), 0);
	assert_int_equal(produced(&p), p.n);
	assert_int_equal(store_sync(fx->st), 0);
	assert_int_equal(committed(fx->t.db, "SELECT count(*) FROM events"
	    " WHERE type = 'flood'"), p.n);
	pthread_mutex_destroy(&p.mu);
}

/* Ids before rows: agents, messages, summaries, merges, edges, reads. */
static void
test_handles_and_reads(void **state)
{
	struct fx		*fx = *state;
	struct store_agent_new	 a = { .path = "0", .task = "root" };
	struct msg		 m = { .role = MSG_USER, .text = (char *)"hello" };
	struct msg_list		 ctx;
	int64_t			 root, n0, n1, n2, ag, merge, parts[2];
	char			*sum = NULL;
	sqlite3			*h;

	assert_int_equal(store_writer_start(fx->st), 0);
	h = lock_db(fx->t.db);
	assert_int_equal(store_agent_add(fx->st, fx->run, &a, &root, &n0), 0);
	assert_true(root >= STORE_HANDLE_BASE);
	a.path = "0.1";
	a.task = "one";
	assert_int_equal(store_agent_add(fx->st, fx->run, &a, &ag, &n1), 0);
	a.path = "0.2";
	a.inherit_context = 1;
	assert_int_equal(store_agent_add(fx->st, fx->run, &a, NULL, &n2), 0);
	assert_int_equal(store_msg_append(fx->st, n0, &m, NULL), 0);
	assert_int_equal(store_agent_started(fx->st, ag, 42), 0);
	assert_int_equal(store_node_set_summary(fx->st, n1, "SUM-ONE",
	    STORE_SUMMARY_RESULT, NULL), 0);
	/* Answered by the front end, while the lock is still held. */
	assert_int_equal(store_summary_needed(fx->st, n1, "short", NULL), 0);
	assert_int_equal(store_node_summary(fx->st, n1, &sum), 0);
	assert_string_equal(sum, "SUM-ONE");
	free(sum);
	parts[0] = n1;
	parts[1] = n2;
	assert_int_equal(store_node_merge(fx->st, fx->run, parts, 2, "merge",
	    &merge), 0);
	assert_int_equal(store_edge_add(fx->st, n1, n2), 0);
	unlock_db(h);
	/* A read through the queue sees every write before it. */
	msg_list_init(&ctx);
	assert_int_equal(store_context(fx->st, n0, 0, &ctx), 0);
	assert_int_equal(ctx.n, 1);
	assert_string_equal(ctx.v[0].text, "hello");
	msg_list_free(&ctx);
	assert_int_equal(store_sync(fx->st), 0);
	assert_int_equal(committed(fx->t.db, "SELECT count(*) FROM agents"),
	    3);
	assert_int_equal(committed(fx->t.db, "SELECT count(*) FROM agents"
	    " WHERE path = '0.1' AND pid = 42"), 1);
	assert_int_equal(committed(fx->t.db, "SELECT count(*) FROM"
	    " memory_nodes WHERE kind = 'merge'"), 1);
	assert_int_equal(committed(fx->t.db, "SELECT max(id) FROM"
	    " memory_nodes"), 4);
	assert_int_equal(committed(fx->t.db, "SELECT count(*) FROM messages"),
	    1);
	assert_int_equal(committed(fx->t.db, "SELECT count(*) FROM"
	    " memory_edges WHERE parent = 2 AND child = 3"), 1);
}

/*
 * Group commit: the writer commits once it has applied what is queued,
 * without a store_flush(). The caller here is the event loop that would
 * call store_flush() on its timer: it writes, then takes the write lock
 * on a second connection (a rate gate on the same file) and waits for
 * it; before group commit that lock waited for the flush the blocked
 * loop never sent, the whole busy timeout (issue 30).
 */
static void
test_commits_without_flush(void **state)
{
	struct fx	*fx = *state;
	sqlite3		*h;
	uint64_t	 t0, took;
	int		 i, rc;

	assert_int_equal(store_writer_start(fx->st), 0);
	for (i = 0; i < 3; i++) {
		assert_int_equal(store_event(fx->st, fx->run, "0", "turn",
		    "no flush after it"), 0);
		assert_int_equal(sqlite3_open(fx->t.db, &h), SQLITE_OK);
		sqlite3_busy_timeout(h, 3000);
		t0 = clock_mono_ms();
		rc = sqlite3_exec(h, "BEGIN IMMEDIATE", NULL, NULL, NULL);
		took = clock_mono_ms() - t0;
		if (rc != SQLITE_OK || took > 1000)
			fail_msg("write %d: the second connection's BEGIN "
			    "IMMEDIATE took %llu ms (%s): the writer held its"
			    " batch open waiting for a flush", i,
			    (unsigned long long)took, sqlite3_errmsg(h));
		/* Held: the writer's next batch waits for it, and goes in
		 * once it is let go. */
		assert_int_equal(sqlite3_exec(h, "COMMIT", NULL, NULL, NULL),
		    SQLITE_OK);
		sqlite3_close(h);
		if (committed_within(fx->t.db, "SELECT count(*) FROM events"
		    " WHERE type = 'turn'", i + 1, 2000) == -1)
			fail_msg("write %d not committed 2 s later without a"
			    " flush", i);
	}
	assert_int_equal(store_sync(fx->st), 0);
	assert_null(store_lost(fx->st));
}

/*
 * The barrier the supervisor tells a parent through: a mark taken while
 * another connection holds the lock is not committed, nor is the commit
 * descriptor readable, until the lock is let go; then both are, within
 * 2 s, with no flush and no wait on the caller's side.
 */
static void
test_commit_mark(void **state)
{
	struct fx	*fx = *state;
	struct pollfd	 pfd;
	sqlite3		*h;
	uint64_t	 mark;
	int		 i;

	assert_int_equal(store_committed(fx->st, store_commit_mark(fx->st)),
	    1);		/* no writer: store_flush commits */
	assert_int_equal(store_commit_fd(fx->st), -1);
	assert_int_equal(store_writer_start(fx->st), 0);
	pfd.fd = store_commit_fd(fx->st);
	pfd.events = POLLIN;
	assert_true(pfd.fd != -1);
	assert_int_equal(store_sync(fx->st), 0);
	store_commit_ack(fx->st);
	h = lock_db(fx->t.db);
	assert_int_equal(store_event(fx->st, fx->run, "0.1", "done",
	    "its end"), 0);
	assert_int_equal(store_flush(fx->st), 0);
	mark = store_commit_mark(fx->st);
	assert_true(mark > 0);
	usleep(300000);
	assert_int_equal(store_committed(fx->st, mark), 0);
	assert_int_equal(poll(&pfd, 1, 0), 0);
	unlock_db(h);
	for (i = 0; i < 100 && !store_committed(fx->st, mark); i++)
		usleep(20000);
	if (!store_committed(fx->st, mark))
		fail_msg("mark %llu not committed 2 s after the lock was let "
		    "go", (unsigned long long)mark);
	assert_int_equal(poll(&pfd, 1, 2000), 1);
	store_commit_ack(fx->st);
	assert_int_equal(committed(fx->t.db, "SELECT count(*) FROM events"
	    " WHERE type = 'done'"), 1);
}

/* A refusal is logged, not sticky; a lost write is, and it decides. */
static void
test_lost_is_sticky(void **state)
{
	struct fx		*fx = *state;
	struct store_agent_new	 a = { .path = "0", .task = "root" };
	struct pollfd		 pfd;
	sqlite3			*h;
	int64_t			 ag, node;

	assert_int_equal(store_writer_start(fx->st), 0);
	assert_int_equal(store_event(fx->st, 999, NULL, "x", "no such run"),
	    0);
	assert_int_equal(store_sync(fx->st), 0);
	assert_null(store_lost(fx->st));
	pfd.fd = store_lost_fd(fx->st);
	pfd.events = POLLIN;
	assert_true(pfd.fd >= 0);
	assert_int_equal(poll(&pfd, 1, 0), 0);
	assert_int_equal(store_agent_add(fx->st, fx->run, &a, &ag, &node), 0);
	assert_int_equal(store_sync(fx->st), 0);
	/* A child's third statement (its edge) fails behind the store's
	 * back: the batch with its first two is rolled back. */
	assert_int_equal(sqlite3_open(fx->t.db, &h), SQLITE_OK);
	assert_int_equal(sqlite3_exec(h, "CREATE TRIGGER no_edge BEFORE"
	    " INSERT ON memory_edges BEGIN SELECT RAISE(ABORT, 'injected');"
	    " END", NULL, NULL, NULL), SQLITE_OK);
	sqlite3_close(h);
	a.path = "0.1";
	/* One batch for the three: the writer waits for the lock with the
	 * first, meanwhile the others queue (it commits whenever it has
	 * applied what is queued). */
	h = lock_db(fx->t.db);
	assert_int_equal(store_event(fx->st, fx->run, NULL, "a", "b"), 0);
	assert_int_equal(store_agent_add(fx->st, fx->run, &a, NULL, NULL), 0);
	assert_int_equal(store_event(fx->st, fx->run, NULL, "c", "d"), 0);
	usleep(200 * 1000);
	unlock_db(h);
	/* The loop is woken without asking. */
	assert_int_equal(poll(&pfd, 1, 5000), 1);
	assert_int_equal(store_sync(fx->st), -1);
	assert_non_null(store_lost(fx->st));
	assert_non_null(strstr(store_lost(fx->st), "injected"));
	assert_non_null(strstr(store_lost(fx->st), "1 later writes refused"));
	/* Only the final status still goes in. */
	assert_int_equal(store_run_finish(fx->st, fx->run,
	    STORE_RUN_STORE_FAILED, store_lost(fx->st)), 0);
	assert_int_equal(committed(fx->t.db, "SELECT count(*) FROM events"),
	    0);
	assert_int_equal(committed(fx->t.db, "SELECT count(*) FROM runs"
	    " WHERE status = 'store_failed'"), 1);
}

/*
 * A group commit that fails (the file size limit, as a full disk) loses
 * its batch for good and says so at once: the loop is woken without
 * another write (store_lost_fd), store_lost names the commit, and the
 * rows are not there.
 */
static void
test_commit_fails_sticky(void **state)
{
	struct fx	*fx = *state;
	struct rlimit	 was, small;
	struct stat	 sb;
	struct pollfd	 pfd;
	char		 wal[1100], *big;
	const char	*lost;
	off_t		 most = 0;
	int		 woke;

	assert_int_equal(store_writer_start(fx->st), 0);
	assert_int_equal(store_event(fx->st, fx->run, NULL, "x", "first"), 0);
	assert_int_equal(store_sync(fx->st), 0);
	snprintf(wal, sizeof(wal), "%s-wal", fx->t.db);
	if (stat(fx->t.db, &sb) == 0)
		most = sb.st_size;
	if (stat(wal, &sb) == 0 && sb.st_size > most)
		most = sb.st_size;
	/* 512 KiB in one event: the commit writes it past the limit. */
	assert_non_null(big = malloc(512 * 1024 + 1));
	memset(big, 'b', 512 * 1024);
	big[512 * 1024] = '\0';
	pfd.fd = store_lost_fd(fx->st);
	pfd.events = POLLIN;
	assert_int_equal(poll(&pfd, 1, 0), 0);
	signal(SIGXFSZ, SIG_IGN);
	assert_int_equal(getrlimit(RLIMIT_FSIZE, &was), 0);
	small = was;
	small.rlim_cur = (rlim_t)most + 64 * 1024;
	assert_int_equal(setrlimit(RLIMIT_FSIZE, &small), 0);
	assert_int_equal(store_event(fx->st, fx->run, NULL, "big", big), 0);
	woke = poll(&pfd, 1, 5000);
	assert_int_equal(setrlimit(RLIMIT_FSIZE, &was), 0);
	signal(SIGXFSZ, SIG_DFL);
	free(big);
	if (woke != 1)
		fail_msg("the writer's failed commit did not wake the loop "
		    "within 5 s (store_lost_fd)");
	assert_non_null(lost = store_lost(fx->st));
	if (strstr(lost, "committing a batch") == NULL)
		fail_msg("store_lost does not name the failed commit: %s", lost);
	assert_int_equal(store_sync(fx->st), -1);
	assert_int_equal(committed(fx->t.db, "SELECT count(*) FROM events"
	    " WHERE type = 'big'"), 0);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_writes_do_not_wait,
		    setup, teardown),
		cmocka_unit_test_setup_teardown(test_bound_waits_never_drops,
		    setup, teardown),
		cmocka_unit_test_setup_teardown(test_handles_and_reads,
		    setup, teardown),
		cmocka_unit_test_setup_teardown(test_lost_is_sticky,
		    setup, teardown),
		cmocka_unit_test_setup_teardown(test_commit_fails_sticky,
		    setup, teardown),
		cmocka_unit_test_setup_teardown(test_commits_without_flush,
		    setup, teardown),
		cmocka_unit_test_setup_teardown(test_commit_mark,
		    setup, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}

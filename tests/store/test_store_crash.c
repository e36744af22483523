/*
 * kill -9 of the store's only writer, at many points, then resume.
 *
 * A child process plays a supervisor: it runs a scripted tree of agents
 * (interleaved like parallel workers) through the store API, flushing on
 * a "timer" (every F writes) and whenever an agent finishes, and it kills
 * itself with SIGKILL after its N-th write, or the parent kills it at a
 * random moment. The next child resumes from store_resume_plan() alone.
 * A side log (O_APPEND, survives the kill) records what the child knew to
 * be durable after each flush: the parent checks, after every kill, that
 * no durably finished agent is unfinished or started again and that no
 * flushed message is missing; at the end, that every agent's transcript
 * is exactly its script (nothing lost, nothing doubled).
 *
 * A second test checks that a batch lands whole or not at all.
 */
#include <sys/types.h>
#include <sys/wait.h>

#include <errno.h>
#include <fcntl.h>
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
#include <sqlite3.h>

#include "common/msg.h"
#include "store/store.h"
#include "store/store_testapi.h"
#include "tests/store/store_test.h"
#include "tests/test_wait.h"

#define NAGENTS		6
#define LEAF_ROUNDS	4	/* tool call + result pairs */
#define LEAF_STEPS	(2 + 2 * LEAF_ROUNDS)
#define EXIT_BADPLAN	10

struct sim_def {
	const char	*path;
	int		 nchildren;
	int		 children[3];
};

/* 0 -> {0.1 -> {0.1.1, 0.1.2}, 0.2, 0.3} */
static const struct sim_def sim_defs[NAGENTS] = {
	{ "0", 3, { 1, 4, 5 } },
	{ "0.1", 2, { 2, 3 } },
	{ "0.1.1", 0, { 0 } },
	{ "0.1.2", 0, { 0 } },
	{ "0.2", 0, { 0 } },
	{ "0.3", 0, { 0 } },
};

struct sim_agent {
	int64_t	id, node, merge;
	int	exists, finished, next, started_here;
};

struct sim {
	struct store		*st;
	int64_t			 run;
	struct sim_agent	 a[NAGENTS];
	long			 ops, kill_after, flush_every;
	int			 log;
};

static int
sim_steps(int i)
{
	return sim_defs[i].nchildren == 0 ? LEAF_STEPS :
	    3 + sim_defs[i].nchildren;
}

static const char *
sim_last(const char *path)
{
	const char	*dot = strrchr(path, '.');

	return dot != NULL ? dot + 1 : path;
}

/* The step-th message of agent i's script. */
static void
sim_script(int i, int step, struct msg *m)
{
	const struct sim_def	*d = &sim_defs[i];
	char			 buf[128], id[16];
	int			 k;

	memset(m, 0, sizeof(*m));
	if (step == 0) {
		m->role = MSG_USER;
		snprintf(buf, sizeof(buf), "task %s", d->path);
		m->text = strdup(buf);
	} else if (d->nchildren == 0) {
		if (step < LEAF_STEPS - 1 && step % 2 == 1) {
			m->role = MSG_ASSISTANT;
			snprintf(id, sizeof(id), "t%d", step);
			snprintf(buf, sizeof(buf), "{\"step\":%d,\"q\":\"\\\"%s\"}",
			    step, d->path);
			msg_add_call(m, id, step % 4 == 1 ? "read" : "bash", buf);
		} else if (step < LEAF_STEPS - 1) {
			m->role = MSG_TOOL;
			snprintf(id, sizeof(id), "t%d", step - 1);
			m->call_id = strdup(id);
			m->name = strdup(step % 4 == 2 ? "read" : "bash");
			snprintf(buf, sizeof(buf), "out%d %s\n\x01", step, d->path);
			m->text = strdup(buf);
		} else {
			m->role = MSG_ASSISTANT;
			snprintf(buf, sizeof(buf), "final %s", d->path);
			m->text = strdup(buf);
		}
	} else if (step == 1) {
		m->role = MSG_ASSISTANT;
		for (k = 0; k < d->nchildren; k++) {
			snprintf(id, sizeof(id), "d%s",
			    sim_last(sim_defs[d->children[k]].path));
			snprintf(buf, sizeof(buf), "{\"task\":\"task %s\"}",
			    sim_defs[d->children[k]].path);
			msg_add_call(m, id, "delegate", buf);
		}
	} else if (step < 2 + d->nchildren) {
		k = d->children[step - 2];
		m->role = MSG_TOOL;
		snprintf(id, sizeof(id), "d%s", sim_last(sim_defs[k].path));
		m->call_id = strdup(id);
		m->name = strdup("delegate");
		snprintf(buf, sizeof(buf), "result %s", sim_defs[k].path);
		m->text = strdup(buf);
	} else {
		m->role = MSG_ASSISTANT;
		snprintf(buf, sizeof(buf), "final %s", d->path);
		m->text = strdup(buf);
	}
}

static int
sim_streq(const char *a, const char *b)
{
	if (a == NULL || b == NULL)
		return a == b;
	return strcmp(a, b) == 0;
}

static int
sim_msg_equal(const struct msg *a, const struct msg *b)
{
	size_t	k;

	if (a->role != b->role || !sim_streq(a->text, b->text) ||
	    !sim_streq(a->call_id, b->call_id) || !sim_streq(a->name, b->name) ||
	    a->ncalls != b->ncalls)
		return 0;
	for (k = 0; k < a->ncalls; k++)
		if (!sim_streq(a->calls[k].id, b->calls[k].id) ||
		    !sim_streq(a->calls[k].name, b->calls[k].name) ||
		    !sim_streq(a->calls[k].args, b->calls[k].args))
			return 0;
	return 1;
}

/* A transcript is a prefix of the script, exactly. */
static int
sim_check_transcript(int i, const struct msg_list *l)
{
	struct msg	want;
	size_t		k;
	int		ok = 1;

	if (l->n > (size_t)sim_steps(i))
		return 0;
	for (k = 0; ok && k < l->n; k++) {
		sim_script(i, (int)k, &want);
		ok = sim_msg_equal(&want, &l->v[k]);
		msg_free(&want);
	}
	return ok;
}

static int
sim_index(const char *path)
{
	int	i;

	for (i = 0; i < NAGENTS; i++)
		if (strcmp(sim_defs[i].path, path) == 0)
			return i;
	return -1;
}

static void
sim_die(struct sim *s, const char *what)
{
	fprintf(stderr, "sim: %s: %s\n", what, store_errmsg(s->st));
	_exit(1);
}

/* Every write goes through here: the N-th one is the last. */
static void
sim_op(struct sim *s)
{
	if (++s->ops == s->kill_after)
		raise(SIGKILL);
}

static void
sim_log(struct sim *s, const char *fmt, ...)
{
	char	line[128];
	va_list	ap;
	int	n;

	va_start(ap, fmt);
	n = vsnprintf(line, sizeof(line), fmt, ap);
	va_end(ap);
	if (write(s->log, line, (size_t)n) != n)
		_exit(1);
}

/* Commit, then record what is now durable. */
static void
sim_flush(struct sim *s)
{
	int	i;

	if (store_flush(s->st) == -1)
		sim_die(s, "flush");
	for (i = 0; i < NAGENTS; i++)
		if (s->a[i].exists && !s->a[i].finished)
			sim_log(s, "M %s %d\n", sim_defs[i].path, s->a[i].next);
}

static void
sim_maybe_flush(struct sim *s)
{
	if (s->flush_every > 0 && s->ops % s->flush_every == 0)
		sim_flush(s);
}

static void
sim_create(struct sim *s, int i, int parent)
{
	struct store_agent_new	 n;
	char			 call[16];

	memset(&n, 0, sizeof(n));
	n.path = sim_defs[i].path;
	n.task = sim_defs[i].path;
	n.profile = sim_defs[i].nchildren > 0 ? "general" : "explore";
	if (parent >= 0) {
		snprintf(call, sizeof(call), "d%s", sim_last(n.path));
		n.call_id = call;
	}
	if (store_agent_add(s->st, s->run, &n, &s->a[i].id, &s->a[i].node) ==
	    -1)
		sim_die(s, "agent_add");
	s->a[i].exists = 1;
	sim_op(s);
	sim_maybe_flush(s);
}

static void
sim_finish(struct sim *s, int i)
{
	char	result[64];

	snprintf(result, sizeof(result), "result %s", sim_defs[i].path);
	if (store_node_set_summary(s->st, s->a[i].node, result,
	    STORE_SUMMARY_RESULT, NULL) == -1)
		sim_die(s, "summary");
	sim_op(s);
	if (store_agent_set_status(s->st, s->a[i].id, STORE_AGENT_DONE, result,
	    "completed") == -1)
		sim_die(s, "finish");
	sim_op(s);
	s->a[i].finished = 1;
	sim_flush(s);
	sim_log(s, "F %s\n", sim_defs[i].path);
}

static void
sim_merge(struct sim *s, int i)
{
	const struct sim_def	*d = &sim_defs[i];
	int64_t			 parents[3];
	char			 label[64];
	int			 k;

	for (k = 0; k < d->nchildren; k++)
		parents[k] = s->a[d->children[k]].node;
	snprintf(label, sizeof(label), "merge %s", d->path);
	if (store_node_merge(s->st, s->run, parents, (size_t)d->nchildren,
	    label, &s->a[i].merge) == -1)
		sim_die(s, "merge");
	sim_op(s);
}

/* One step of agent i if it can make one; 1 if it did. */
static int
sim_step(struct sim *s, int i)
{
	const struct sim_def	*d = &sim_defs[i];
	struct sim_agent	*a = &s->a[i];
	struct msg		 m;
	struct msg_usage	 u = { 10, 3 };
	int			 k;

	if (!a->exists || a->finished)
		return 0;
	if (d->nchildren > 0 && a->next >= 2) {
		/* Children exist once the delegate call is written. */
		for (k = 0; k < d->nchildren; k++)
			if (!s->a[d->children[k]].exists) {
				sim_create(s, d->children[k], i);
				return 1;
			}
		if (a->next < 2 + d->nchildren &&
		    !s->a[d->children[a->next - 2]].finished)
			return 0;
		if (a->next == 2 + d->nchildren && a->merge == 0) {
			sim_merge(s, i);
			return 1;
		}
	}
	if (a->next == sim_steps(i)) {
		sim_finish(s, i);
		return 1;
	}
	if (!a->started_here) {
		sim_log(s, "S %s %d\n", d->path, a->next);
		a->started_here = 1;
	}
	sim_script(i, a->next, &m);
	if (store_msg_append(s->st, a->node, &m,
	    m.role == MSG_ASSISTANT ? &u : NULL) == -1)
		sim_die(s, "append");
	msg_free(&m);
	a->next++;
	sim_op(s);
	sim_maybe_flush(s);
	return 1;
}

/* Rebuild the state from the file alone. */
static void
sim_resume(struct sim *s)
{
	struct store_plan	 p;
	struct store_graph	 g;
	size_t			 k;
	int			 i, j;

	if (store_run_resumed(s->st, s->run) == -1 ||
	    store_resume_plan(s->st, s->run, &p) == -1)
		sim_die(s, "plan");
	for (k = 0; k < p.nagents; k++) {
		if ((i = sim_index(p.agents[k].agent.path)) < 0)
			_exit(EXIT_BADPLAN);
		s->a[i].exists = 1;
		s->a[i].id = p.agents[k].agent.id;
		s->a[i].node = p.agents[k].agent.node;
		s->a[i].finished = p.agents[k].finished;
		s->a[i].next = p.agents[k].finished ? sim_steps(i) :
		    (int)p.agents[k].messages.n;
		if (!p.agents[k].finished &&
		    !sim_check_transcript(i, &p.agents[k].messages))
			_exit(EXIT_BADPLAN);
	}
	store_plan_free(&p);
	if (store_graph_load(s->st, s->run, &g) == -1)
		sim_die(s, "graph");
	for (k = 0; k < g.nnodes; k++) {
		if (g.nodes[k].kind != STORE_NODE_MERGE ||
		    g.nodes[k].label == NULL)
			continue;
		for (j = 0; j < NAGENTS; j++)
			if (strcmp(g.nodes[k].label + 6, sim_defs[j].path) == 0)
				s->a[j].merge = g.nodes[k].id;
	}
	store_graph_free(&g);
}

/* The child: run (or resume) until done or killed. */
static void
sim_main(const char *db, const char *logpath, long kill_after,
    long flush_every)
{
	struct sim		 s;
	struct store_run_params	 p = { .task = "crash test" };
	char			 err[STORE_ERRMSG_MAX];
	int			 i, progress;

	memset(&s, 0, sizeof(s));
	s.kill_after = kill_after;
	s.flush_every = flush_every;
	if ((s.log = open(logpath, O_WRONLY | O_APPEND | O_CREAT, 0600)) == -1)
		_exit(1);
	if ((s.st = store_open(db, STORE_CREATE, err, sizeof(err))) == NULL) {
		fprintf(stderr, "sim: %s\n", err);
		_exit(1);
	}
	if (store_run_latest(s.st, NULL, &s.run) == 0)
		sim_resume(&s);
	else {
		if (store_run_begin(s.st, &p, &s.run) == -1)
			sim_die(&s, "begin");
		sim_op(&s);
		sim_create(&s, 0, -1);
	}
	do {
		progress = 0;
		for (i = 0; i < NAGENTS; i++)
			progress |= sim_step(&s, i);
	} while (progress);
	if (!s.a[0].finished)
		_exit(EXIT_BADPLAN);
	if (store_run_end(s.st, s.run, STORE_RUN_DONE, "result 0") == -1)
		sim_die(&s, "end");
	sim_flush(&s);
	store_close(s.st);
	_exit(0);
}

/* What the log says was durable; checked against the file. */
static void
check_durable(const char *db, const char *logpath)
{
	struct store		*st;
	struct store_plan	 p;
	char			 line[128], path[64], err[STORE_ERRMSG_MAX];
	FILE			*f;
	int			 durable[NAGENTS], fin[NAGENTS], i, n;
	int64_t			 run;
	size_t			 k;

	for (i = 0; i < NAGENTS; i++)
		durable[i] = fin[i] = 0;
	if ((f = fopen(logpath, "r")) == NULL)
		return;	/* nothing was ever flushed */
	while (fgets(line, sizeof(line), f) != NULL) {
		if (sscanf(line, "M %63s %d", path, &n) == 2 &&
		    (i = sim_index(path)) >= 0 && n > durable[i])
			durable[i] = n;
		else if (sscanf(line, "F %63s", path) == 1 &&
		    (i = sim_index(path)) >= 0)
			fin[i] = 1;
		else if (sscanf(line, "S %63s", path) == 1 &&
		    (i = sim_index(path)) >= 0 && fin[i])
			fail_msg("finished agent %s was started again", path);
	}
	fclose(f);
	if ((st = store_open(db, STORE_READ, err, sizeof(err))) == NULL)
		fail_msg("%s", err);
	if (store_run_latest(st, NULL, &run) == -1) {
		for (i = 0; i < NAGENTS; i++)
			assert_int_equal(durable[i] + fin[i], 0);
		store_close(st);
		return;
	}
	assert_int_equal(store_resume_plan(st, run, &p), 0);
	for (i = 0; i < NAGENTS; i++) {
		for (k = 0; k < p.nagents; k++)
			if (strcmp(p.agents[k].agent.path, sim_defs[i].path) == 0)
				break;
		if (k == p.nagents) {
			if (durable[i] > 0 || fin[i])
				fail_msg("agent %s lost", sim_defs[i].path);
			continue;
		}
		if (fin[i] && !p.agents[k].finished)
			fail_msg("finished agent %s is unfinished in the file",
			    sim_defs[i].path);
		if (!p.agents[k].finished &&
		    (int)p.agents[k].messages.n < durable[i])
			fail_msg("agent %s: %zu messages, %d were flushed",
			    sim_defs[i].path, p.agents[k].messages.n,
			    durable[i]);
	}
	store_plan_free(&p);
	store_close(st);
}

static void
check_complete(const char *dbpath)
{
	const char		*db = dbpath;
	struct store		*st;
	struct store_agent	*v;
	struct store_graph	 g;
	struct store_run	 r;
	struct msg_list		 l;
	char			 err[STORE_ERRMSG_MAX];
	int64_t			 run;
	size_t			 n, k, merges = 0;
	int			 i;

	if ((st = store_open(db, STORE_READ, err, sizeof(err))) == NULL)
		fail_msg("%s", err);
	assert_int_equal(store_run_latest(st, NULL, &run), 0);
	assert_int_equal(store_run_get(st, run, &r), 0);
	assert_int_equal(r.status, STORE_RUN_DONE);
	assert_true(r.resumes > 0);
	store_run_free(&r);
	assert_int_equal(store_agents_list(st, run, &v, &n), 0);
	assert_int_equal(n, NAGENTS);
	for (k = 0; k < n; k++) {
		i = sim_index(v[k].path);
		assert_true(i >= 0);
		assert_int_equal(v[k].status, STORE_AGENT_DONE);
		assert_non_null(v[k].summary);
		msg_list_init(&l);
		assert_int_equal(store_node_messages(st, v[k].node, &l, NULL),
		    0);
		assert_int_equal(l.n, sim_steps(i));
		assert_true(sim_check_transcript(i, &l));
		msg_list_free(&l);
	}
	store_agents_free(v, n);
	assert_int_equal(store_graph_load(st, run, &g), 0);
	for (k = 0; k < g.nnodes; k++)
		merges += g.nodes[k].kind == STORE_NODE_MERGE;
	assert_int_equal(merges, 2);	/* one per parent, never doubled */
	store_graph_free(&g);
	store_close(st);
	/* Every reference of the schema holds in what the kills left. */
	{
		sqlite3		*raw;
		sqlite3_stmt	*s;

		assert_int_equal(sqlite3_open_v2(dbpath, &raw,
		    SQLITE_OPEN_READONLY, NULL), SQLITE_OK);
		assert_int_equal(sqlite3_prepare_v2(raw, "SELECT count(*) FROM"
		    " pragma_foreign_key_check", -1, &s, NULL), SQLITE_OK);
		assert_int_equal(sqlite3_step(s), SQLITE_ROW);
		assert_int_equal(sqlite3_column_int(s, 0), 0);
		sqlite3_finalize(s);
		sqlite3_close(raw);
	}
}

static pid_t
spawn_sim(const char *db, const char *logpath, long kill_after,
    long flush_every)
{
	pid_t	pid;

	if ((pid = fork()) == -1)
		fail_msg("fork: %s", strerror(errno));
	if (pid == 0)
		sim_main(db, logpath, kill_after, flush_every);
	return pid;
}

static void
test_kill9_resume(void **state)
{
	struct store_tdir	t;
	char			logpath[1100];
	struct timespec		ts;
	pid_t			pid;
	long			kill_after, flush_every;
	int			status, iter, kills = 0, done = 0;

	(void)state;
	store_tdir_make(&t);
	snprintf(logpath, sizeof(logpath), "%s/durable.log", t.dir);
	srand(4242);
	for (iter = 0; !done && iter < 300; iter++) {
		flush_every = iter % 3 == 0 ? 1 : (iter % 3 == 1 ? 4 : 9);
		/* Early kills at every small count, later ones further in:
		 * a process always outlives a few flushes eventually. Every
		 * 7th is also killed from outside at a random moment; its
		 * own kill stays as a backstop, so how far one gets does not
		 * depend on the machine's speed (a fast one finished the run
		 * with 19 kills). */
		kill_after = iter < 80 ? 1 + iter % 8 + iter / 10 : 0;
		pid = spawn_sim(t.db, logpath, kill_after, flush_every);
		if (iter % 7 == 6 && iter < 80) {
			ts.tv_sec = 0;
			ts.tv_nsec = (rand() % 4000) * 1000L;
			nanosleep(&ts, NULL);
			kill(pid, SIGKILL);
		}
		/* Killed above, by its own kill_after, or at its end. */
		if ((status = test_waitpid(pid, 60, "the store crash "
		    "simulator")) == -1)
			fail_msg("iteration %d: the simulator had not ended "
			    "after 60 s", iter);
		if (WIFEXITED(status)) {
			if (WEXITSTATUS(status) == EXIT_BADPLAN)
				fail_msg("iteration %d: the plan disagrees with"
				    " what was written", iter);
			assert_int_equal(WEXITSTATUS(status), 0);
			done = 1;
		} else {
			assert_true(WIFSIGNALED(status));
			assert_int_equal(WTERMSIG(status), SIGKILL);
			kills++;
		}
		check_durable(t.db, logpath);
	}
	printf("%d processes, %d killed with SIGKILL\n", iter, kills);
	assert_true(done);
	assert_true(kills >= 20);
	check_complete(t.db);
	store_tdir_remove(&t);
}

/* Messages of the run whose task is `task`; -1 if there is no such run. */
static int64_t
batch_rows(const char *db, const char *task)
{
	struct store		*st;
	struct store_run	*v;
	struct store_graph	 g;
	char			 err[STORE_ERRMSG_MAX];
	size_t			 n, k;
	int64_t			 rows = -1;

	if ((st = store_open(db, STORE_READ, err, sizeof(err))) == NULL)
		return -1;	/* killed before the file had a schema */
	assert_int_equal(store_runs_list(st, NULL, 0, &v, &n), 0);
	for (k = 0; k < n; k++) {
		if (strcmp(v[k].task, task) != 0)
			continue;
		assert_int_equal(store_graph_load(st, v[k].id, &g), 0);
		rows = 0;
		for (k = 0; k < g.nnodes; k++)
			rows += (int64_t)g.nodes[k].nmessages;
		store_graph_free(&g);
		break;
	}
	store_runs_free(v, n);
	store_close(st);
	return rows;
}

/*
 * A batch (a run, its root agent and 2000 messages) is committed while
 * the parent kills the writer: before the commit (never there), at a
 * random moment around it (all or nothing), after it (all there).
 */
static void
test_batch_all_or_nothing(void **state)
{
	struct store_tdir	 t;
	struct store		*st;
	struct store_run_params	 p;
	struct store_agent_new	 a = { .path = "0", .task = "t" };
	struct msg		 m = { .role = MSG_USER, .text = (char *)"row" };
	struct timespec		 ts;
	char			 err[STORE_ERRMSG_MAX], task[32], c, d;
	int64_t			 run, node, rows;
	int			 fds[2], status, iter, i, whole = 0, none = 0;
	pid_t			 pid;

	(void)state;
	store_tdir_make(&t);
	srand(77);
	for (iter = 0; iter < 24; iter++) {
		snprintf(task, sizeof(task), "batch %d", iter);
		assert_int_equal(pipe(fds), 0);
		if ((pid = fork()) == 0) {
			close(fds[0]);
			st = store_open(t.db, STORE_CREATE, err, sizeof(err));
			if (st == NULL)
				_exit(1);
			store_set_batch_max(st, 1000000);
			memset(&p, 0, sizeof(p));
			p.task = task;
			if (store_run_begin(st, &p, &run) == -1 ||
			    store_agent_add(st, run, &a, NULL, &node) == -1)
				_exit(1);
			for (i = 0; i < 2000; i++)
				if (store_msg_append(st, node, &m, NULL) == -1)
					_exit(1);
			if (iter % 4 == 0) {
				/* Die inside the batch. */
				if (write(fds[1], "k", 1) != 1)
					_exit(1);
				pause();
			}
			if (write(fds[1], "c", 1) != 1)
				_exit(1);
			if (store_flush(st) == -1 || write(fds[1], "d", 1) != 1)
				_exit(1);
			pause();	/* wait for the kill */
			_exit(0);
		}
		close(fds[1]);
		assert_int_equal(read(fds[0], &c, 1), 1);
		if (c == 'c' && iter % 4 == 1)
			assert_int_equal(read(fds[0], &d, 1), 1);
		else if (c == 'c') {
			ts.tv_sec = 0;
			ts.tv_nsec = (rand() % 3000) * 1000L;
			nanosleep(&ts, NULL);
		}
		kill(pid, SIGKILL);
		/* After SIGKILL: it ends. */
		assert_int_equal(waitpid(pid, &status, 0), pid);
		close(fds[0]);
		assert_true(WIFSIGNALED(status));
		rows = batch_rows(t.db, task);
		if (rows != -1 && rows != 2000)
			fail_msg("iteration %d: %lld of 2000 rows landed", iter,
			    (long long)rows);
		if (c == 'k' && rows != -1)
			fail_msg("iteration %d: killed before the commit, yet"
			    " the batch landed", iter);
		if (iter % 4 == 1 && rows != 2000)
			fail_msg("iteration %d: flushed, yet lost", iter);
		if (rows == 2000)
			whole++;
		else
			none++;
	}
	assert_true(none >= 6);
	assert_true(whole >= 6);
	store_tdir_remove(&t);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_kill9_resume),
		cmocka_unit_test(test_batch_all_or_nothing),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}

/*
 * warren resume of a run killed (SIGKILL of the supervisor) inside a
 * composition pattern (docs/composition.md, "Resuming inside a pattern"):
 * plan_execute with dependencies, parallel_explore of four aspects,
 * sequential_delegate of four steps. The fakellm server is the model:
 * some steps finish at once, one step's first turn hangs, and the run is
 * killed once the store holds the fast ones done and the hanging turn
 * was asked. The resumed run must not ask the model again for a finished
 * step, must restart the interrupted one in its own row, start the rest
 * as usual, leave no row cancelled and no second row for a step, and
 * answer the pattern call with the very text an uninterrupted run of the
 * same script gives. Also: a step that failed before the kill, a second
 * kill in the resumed run (inside the pattern, or in the orchestrator's
 * turn after it, for the merge node), a call id given twice, a finished
 * step whose summary was in flight, a step's profile gone.
 *
 * A step's own turns are told apart in the fakellm's log by its task as
 * the delegated-task message gives it ("...delegated it):\n[plan_execute
 * A] DO-A"); a later agent's request holds an earlier step's task only in
 * a memory line ("[memory of agent 0.2: [plan_execute A] DO-A]").
 */
#include <sys/types.h>
#include <sys/wait.h>

#include <limits.h>
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

#include "store/store.h"
#include "tests/e2e/harness.h"

#define KILL_WAIT_S	60	/* for the fast steps to be done */

/* A step's own request, as the fakellm logs it (a JSON-escaped \n). */
#define OWN(marker)	"delegated it):\\n" marker

#define COMPLETE(res) \
	"{\"id\": \"k\", \"name\": \"complete\", \"arguments\": " \
	"{\"result\": \"" res "\"}}"
/* A rule that answers every request it matches with complete(res). */
#define RULE(match, res) \
	"{\"match\": " match ", \"repeat\": true, \"responses\": [{\"reply\":" \
	" {\"calls\": [" COMPLETE(res) "]}}]}"
/* A slow step's rule: its turn gets the answer, after %s: a turn that
 * hangs (HANG), or nothing in the uninterrupted run. */
#define RULE_SLOW(match, res) \
	"{\"match\": " match ", \"responses\": [%s{\"reply\": {\"calls\":" \
	" [" COMPLETE(res) "]}}]}"
#define HANG		"{\"hang\": true}, "
#define CALL(name, args) \
	"{\"match\": \"ORCH-PAT\", \"repeat\": true, \"responses\": [{" \
	"\"reply\": {\"calls\": [{\"id\": \"p1\", \"name\": \"" name "\", " \
	"\"arguments\": " args "}]}}]}"

/* A text an agent's request must hold (its memory of another step). */
struct holds {
	const char	*own;		/* OWN(marker) of the agent */
	const char	*text;
};

/* One pattern's case. */
struct pat {
	const char	*name;		/* the tool */
	const char	*rules;		/* the rules; a %s per RULE_SLOW */
	const char	*jobs;
	const char	*final;		/* the orchestrator's result */
	/* Markers of the steps' tasks ("[plan_execute A]"): done before the
	 * kill, the one whose turn hangs, the ones not started. */
	const char *const *done;
	const char	*slow;
	const char *const *later;
	const struct holds *holds;
	/* NULL, or a later step whose first turn hangs too: the resumed run
	 * is killed again there, then resumed. */
	const char	*slow2;
	int		 ncalls;	/* pattern calls made */
	/* The orchestrator's turn after the pattern hangs in the resumed
	 * run (its rule a RULE_SLOW): killed there, resumed once more. */
	int		 orch_hangs;
	/* The parents of the pattern's one merge node; 0: it has none. */
	size_t		 merge_parents;
	/* NULL, or a step that failed (fail()) before the kill. */
	const char	*failed;
};

/* One run's directory, database and model. */
struct rc {
	char		*dir;
	char		 ws[1024];
	char		 db[PATH_MAX];
	struct h_fakellm fl;
	char		*env[6];	/* one free slot before the NULL */
};

static void
rc_start(struct rc *c, const struct pat *p, const char *first)
{
	char	*rules, *script;
	int	 rc;

	memset(c, 0, sizeof(*c));
	c->dir = h_tmpdir();
	snprintf(c->ws, sizeof(c->ws), "%s/ws", c->dir);
	snprintf(c->db, sizeof(c->db), "%s/w.db", c->dir);
	h_write(c->ws, "data.txt", "data\n", 0);
	if (asprintf(&rules, p->rules, first, first) == -1 ||
	    asprintf(&script, "{\"rules\": [%s]}\n", rules) == -1)
		fail();
	rc = h_fakellm_start(&c->fl, c->dir, script);
	free(script);
	free(rules);
	if (rc == 1) {
		h_rm_rf(c->dir);
		free(c->dir);
		skip();
	}
	assert_int_equal(rc, 0);
	c->env[0] = c->fl.env_url;
	c->env[1] = "WARREN_API_KEY=sk-resume-compose";
	c->env[2] = "WARREN_MODEL=fake-model";
	c->env[3] = "WARREN_RETRIES=0";
}

static void
rc_done(struct rc *c)
{
	h_fakellm_stop(&c->fl);
	h_rm_rf(c->dir);
	free(c->dir);
}

static void
rc_run(struct rc *c, const struct pat *p, void (*during)(pid_t, void *),
    void *arg, struct h_run *r)
{
	char	*argv[] = { "warren", "run", "--json", "--db", c->db,
		    "--workspace", c->ws, "--jobs", (char *)(uintptr_t)p->jobs,
		    "ORCH-PAT", NULL };

	h_hang_guard = KILL_WAIT_S + 30;
	assert_int_equal(h_warren(r, argv, c->env, during, arg), 0);
}

/* --- the store ----------------------------------------------------------- */

static struct store *
rc_open(const char *db)
{
	struct store	*st;
	char		 err[512];

	if ((st = store_open(db, STORE_READ, err, sizeof(err))) == NULL)
		fail_msg("store_open %s: %s", db, err);
	return st;
}

/* How many of the run's agents have a task starting with marker, and how
 * many of those have status st (-1: any). */
static int
rows_of(const struct store_agent *a, size_t n, const char *marker,
    int st, int *nst)
{
	size_t	i;
	int	k = 0;

	*nst = 0;
	for (i = 0; i < n; i++) {
		if (a[i].task == NULL ||
		    strncmp(a[i].task, marker, strlen(marker)) != 0)
			continue;
		k++;
		*nst += st == -1 || (int)a[i].status == st;
	}
	return k;
}

/* Every marker's one row is there (committed) with status want (-1:
 * any): a read of a live run's file. */
static int
rows_are(const char *db, const char *const *markers, int want)
{
	struct store		*st;
	struct store_agent	*a;
	size_t			 n, i;
	char			 err[512];
	int			 ok = 1, ndone;

	if ((st = store_open(db, STORE_READ, err, sizeof(err))) == NULL)
		return 0;
	if (store_agents_list(st, 1, &a, &n) == -1) {
		store_close(st);
		return 0;
	}
	for (i = 0; markers[i] != NULL && ok; i++)
		ok = rows_of(a, n, markers[i], want, &ndone) == 1 &&
		    ndone == 1;
	store_agents_free(a, n);
	store_close(st);
	return ok;
}

/* The root's answers to its pattern calls (call id p1), in order, one
 * line of dashes between them; *is_error if one is an error. */
static char *
pattern_answer(const char *db, int *is_error, int *interrupted)
{
	struct store	*st = rc_open(db);
	struct msg_list	 m;
	int64_t		 agent, node;
	char		*text = NULL, *more;
	size_t		 i;

	msg_list_init(&m);
	assert_int_equal(store_agent_find(st, 1, "0", &agent, &node), 0);
	assert_int_equal(store_node_messages(st, node, &m, NULL), 0);
	*interrupted = 0;
	*is_error = 0;
	for (i = 0; i < m.n; i++) {
		if (m.v[i].role != MSG_TOOL || m.v[i].call_id == NULL ||
		    strcmp(m.v[i].call_id, "p1") != 0)
			continue;
		if (m.v[i].text != NULL &&
		    strncmp(m.v[i].text, "interrupted", 11) == 0) {
			(*interrupted)++;
			continue;
		}
		if (asprintf(&more, "%s%s%s", text ? text : "", text ?
		    "\n----\n" : "", m.v[i].text ? m.v[i].text : "") == -1)
			fail();
		free(text);
		text = more;
		*is_error |= m.v[i].is_error;
	}
	msg_list_free(&m);
	store_close(st);
	if (text == NULL)
		fail_msg("the root has no answer to its %s call", "pattern");
	return text;
}

/* The pattern's nodes (merge-kind, label "pattern NAME: ", or with what
 * "pattern NAME merge: "): how many. */
static int
pattern_nodes(const char *db, const char *name, const char *what)
{
	struct store		*st = rc_open(db);
	struct store_graph	 g;
	char			 prefix[64];
	size_t			 i;
	int			 n = 0;

	snprintf(prefix, sizeof(prefix), "pattern %s%s: ", name, what);
	memset(&g, 0, sizeof(g));
	assert_int_equal(store_graph_load(st, 1, &g), 0);
	for (i = 0; i < g.nnodes; i++)
		n += g.nodes[i].kind == STORE_NODE_MERGE &&
		    g.nodes[i].label != NULL &&
		    strncmp(g.nodes[i].label, prefix, strlen(prefix)) == 0;
	store_graph_free(&g);
	store_close(st);
	return n;
}

/* How many parents the pattern's merge nodes have, all told. */
static size_t
merge_parents(const char *db, const char *name)
{
	struct store		*st = rc_open(db);
	struct store_graph	 g;
	char			 prefix[64];
	size_t			 i, e, n = 0;

	snprintf(prefix, sizeof(prefix), "pattern %s merge: ", name);
	memset(&g, 0, sizeof(g));
	assert_int_equal(store_graph_load(st, 1, &g), 0);
	for (i = 0; i < g.nnodes; i++) {
		if (g.nodes[i].label == NULL ||
		    strncmp(g.nodes[i].label, prefix, strlen(prefix)) != 0)
			continue;
		for (e = 0; e < g.nedges; e++)
			n += g.edges[e].child == g.nodes[i].id;
	}
	store_graph_free(&g);
	store_close(st);
	return n;
}

/* Does the live run's file hold the pattern's merge node (committed)? */
static int
has_merge(const char *db, const char *name)
{
	struct store		*st;
	struct store_graph	 g;
	char			 prefix[64], err[512];
	size_t			 i;
	int			 n = 0;

	snprintf(prefix, sizeof(prefix), "pattern %s merge: ", name);
	if ((st = store_open(db, STORE_READ, err, sizeof(err))) == NULL)
		return 0;
	memset(&g, 0, sizeof(g));
	if (store_graph_load(st, 1, &g) == 0)
		for (i = 0; i < g.nnodes; i++)
			n += g.nodes[i].label != NULL &&
			    strncmp(g.nodes[i].label, prefix,
			    strlen(prefix)) == 0;
	store_graph_free(&g);
	store_close(st);
	return n > 0;
}

/* --- killing the supervisor inside the pattern --------------------------- */

struct killer {
	const char *const	*done;		/* steps done before the kill */
	const char		*slow;		/* asked, hanging: a step */
	const char		*asked;		/* or any request holding it */
	const char		*merged;	/* and this pattern's merge node
						   written: committed */
	const char		*failed[2];	/* a step failed before */
	const char		*db;
	const char		*log;
	int			 killed;
	char			 why[512];	/* what was still awaited */
};

static int
kill_ready(void *arg)
{
	struct killer	*k = arg;
	const char	*slow[2] = { NULL, NULL };
	char		 own[256];

	if (k->asked != NULL)
		snprintf(own, sizeof(own), "%s", k->asked);
	else
		snprintf(own, sizeof(own), OWN("%s"), k->slow);
	if (!rows_are(k->db, k->done, STORE_AGENT_DONE) ||
	    (k->failed[0] != NULL &&
	    !rows_are(k->db, k->failed, STORE_AGENT_FAILED))) {
		snprintf(k->why, sizeof(k->why), "the steps done before the "
		    "kill (%s ...) to be done in %s", k->done[0], k->db);
		return 0;
	}
	slow[0] = k->slow;
	if (k->slow != NULL && !rows_are(k->db, slow, -1)) {
		snprintf(k->why, sizeof(k->why), "the row of %s in %s",
		    k->slow, k->db);
		return 0;
	}
	if (k->merged != NULL && !has_merge(k->db, k->merged)) {
		snprintf(k->why, sizeof(k->why), "the merge node of %s in %s",
		    k->merged, k->db);
		return 0;
	}
	if (h_count_file(k->log, own, NULL) < 1) {
		snprintf(k->why, sizeof(k->why), "a request with %s in %s",
		    own, k->log);
		return 0;
	}
	return 1;
}

static void
kill_inside(pid_t warren, void *arg)
{
	struct killer	*k = arg;

	k->killed = h_kill_when(warren, kill_ready, k, KILL_WAIT_S,
	    "the point of the kill");
}

/* --- the case ------------------------------------------------------------ */

/* How many own requests of marker the log holds, and how many of them
 * hold text too. */
static int
own_count(const char *log, const char *marker, const char *text)
{
	char	own[256];

	snprintf(own, sizeof(own), OWN("%s"), marker);
	return h_count_file(log, own, text);
}

/* The requests of every step: finished ones once (before the kill),
 * the interrupted one twice, the later ones once; each from the
 * pattern's memory. */
static void
assert_asked(const char *log, const char *marker, const char *ctx, int want,
    const char *what)
{
	int	n = own_count(log, marker, NULL), k = own_count(log, marker, ctx);

	if (n != want)
		fail_msg("%s was asked %d times, not %d: %s", marker, n, want,
		    what);
	if (k != n)
		fail_msg("%d of the %d requests of %s lack the pattern's memory "
		    "(\"%s\"): it started without its context", n - k, n,
		    marker, ctx);
}

static void
assert_requests(const struct pat *p, const char *log)
{
	char	ctx[64];
	size_t	i;

	snprintf(ctx, sizeof(ctx), "[merged memory: pattern %s: ", p->name);
	for (i = 0; p->done[i] != NULL; i++)
		assert_asked(log, p->done[i], ctx, 1, "a finished step ran "
		    "again");
	assert_asked(log, p->slow, ctx, 2, "the interrupted turn once more");
	if (p->failed != NULL)
		assert_asked(log, p->failed, ctx, 1, "a failed step ran again");
	if (p->slow2 != NULL)
		assert_asked(log, p->slow2, ctx, 2, "the turn the second kill "
		    "interrupted once more");
	for (i = 0; p->later[i] != NULL; i++)
		assert_asked(log, p->later[i], ctx, 1, "a step not started at "
		    "the kill runs once");
	for (i = 0; p->holds[i].own != NULL; i++)
		if (h_count_file(log, p->holds[i].own, p->holds[i].text) !=
		    h_count_file(log, p->holds[i].own, NULL) ||
		    h_count_file(log, p->holds[i].own, NULL) < 1)
			fail_msg("a request of %s lacks %s", p->holds[i].own,
			    p->holds[i].text);
}

/* One row a step, every row done (the failed step's failed): none
 * cancelled, none duplicated. */
static void
assert_rows(const struct pat *p, const char *db)
{
	const char *const	*lists[] = { p->done, p->later };
	struct store		*st = rc_open(db);
	struct store_agent	*a;
	size_t			 n, i, j, nsteps = 1;
	int			 k, failed;

	assert_int_equal(store_agents_list(st, 1, &a, &n), 0);
	for (i = 0; i < n; i++) {
		failed = p->failed != NULL && strncmp(a[i].task, p->failed,
		    strlen(p->failed)) == 0;
		if (a[i].status != (failed ? STORE_AGENT_FAILED :
		    STORE_AGENT_DONE))
			fail_msg("agent %s (%s) is %s after the resume", a[i].path,
			    a[i].task, store_agent_status_name(a[i].status));
	}
	for (j = 0; j < 2; j++)
		for (i = 0; lists[j][i] != NULL; i++, nsteps++)
			if (rows_of(a, n, lists[j][i], STORE_AGENT_DONE,
			    &k) != 1)
				fail_msg("%d rows for %s", rows_of(a, n,
				    lists[j][i], STORE_AGENT_DONE, &k),
				    lists[j][i]);
	assert_int_equal(rows_of(a, n, p->slow, STORE_AGENT_DONE, &k), 1);
	if (p->slow2 != NULL) {
		assert_int_equal(rows_of(a, n, p->slow2, STORE_AGENT_DONE,
		    &k), 1);
		nsteps++;
	}
	if (p->failed != NULL) {
		assert_int_equal(rows_of(a, n, p->failed, STORE_AGENT_FAILED,
		    &k), 1);
		nsteps++;
	}
	/* The root, the steps and the slow ones. */
	assert_int_equal(n, nsteps + 1);
	store_agents_free(a, n);
	store_close(st);
}

/* warren resume, killed as k says (k NULL: to its end). */
static void
rc_resume(struct rc *c, struct killer *k, struct h_run *r)
{
	char	*argv[] = { "warren", "resume", "--json", "--db", c->db, "1",
		    NULL };

	h_hang_guard = KILL_WAIT_S + 30;
	assert_int_equal(h_warren(r, argv, c->env, k ? kill_inside : NULL,
	    k), 0);
}

/* The killed run, resumed: killed again once slow is done and slow2's
 * turn (or the orchestrator's after the pattern: asked) hangs. */
static void
resume_killed(const struct pat *p, struct rc *c, const char *asked)
{
	const char	*done[16];
	struct killer	 k;
	struct h_run	 r;
	size_t		 i;

	for (i = 0; p->done[i] != NULL && i < 14; i++)
		done[i] = p->done[i];
	done[i++] = p->slow;
	done[i] = NULL;
	memset(&k, 0, sizeof(k));
	k.done = done;
	k.slow = p->slow2;
	k.asked = asked;
	if (asked != NULL && p->merge_parents > 0)
		k.merged = p->name;
	k.db = c->db;
	k.log = c->fl.log;
	rc_resume(c, &k, &r);
	if (!k.killed)
		fail_msg("%s (%s); the resumed run: %d\n%s", h_wait_why,
		    k.why, r.status, r.err);
	assert_int_equal(r.status, 128 + SIGKILL);
	h_run_free(&r);
}

static void
resume_case(const struct pat *p)
{
	struct rc	 ref, c;
	struct h_run	 r;
	struct killer	 k;
	char		*want, *got;
	int		 want_err, got_err, intr;

	/* What an uninterrupted run answers the pattern call with. */
	rc_start(&ref, p, "");
	rc_run(&ref, p, NULL, NULL, &r);
	if (r.hung)
		fail_msg("%s", h_deadline_missed(&r, "the pattern's end"));
	if (r.status != 0)
		fail_msg("uninterrupted run: %d\n%s", r.status, r.err);
	assert_int_equal(h_count_lines(r.out, "\"event\":\"result\"",
	    p->final), 1);
	h_run_free(&r);
	want = pattern_answer(ref.db, &want_err, &intr);
	assert_int_equal(want_err, p->failed != NULL);
	rc_done(&ref);

	/* Killed once the fast steps are done and the slow turn hangs. */
	rc_start(&c, p, HANG);
	memset(&k, 0, sizeof(k));
	k.done = p->done;
	k.failed[0] = p->failed;
	k.slow = p->slow;
	k.db = c.db;
	k.log = c.fl.log;
	rc_run(&c, p, kill_inside, &k, &r);
	if (!k.killed)
		fail_msg("%s (%s); the run: %d\n%s", h_wait_why, k.why,
		    r.status, r.err);
	assert_int_equal(r.status, 128 + SIGKILL);
	h_run_free(&r);

	if (p->slow2 != NULL)
		resume_killed(p, &c, NULL);
	if (p->orch_hangs)
		resume_killed(p, &c, "every aspect explored");
	rc_resume(&c, NULL, &r);
	if (r.hung)
		fail_msg("%s", h_deadline_missed(&r, "the resumed run's end"));
	if (r.status != 0)
		fail_msg("resume: %d\n%s", r.status, r.err);
	assert_int_equal(h_count_lines(r.out, "\"event\":\"result\"",
	    p->final), 1);
	h_run_free(&r);

	assert_requests(p, c.fl.log);
	assert_rows(p, c.db);
	got = pattern_answer(c.db, &got_err, &intr);
	assert_int_equal(intr, 0);
	assert_int_equal(got_err, want_err);
	assert_string_equal(got, want);
	/* One pattern node a pattern call, found again by the resume. */
	assert_int_equal(pattern_nodes(c.db, p->name, ""), p->ncalls);
	if (p->merge_parents > 0)
		assert_int_equal(pattern_nodes(c.db, p->name, " merge"), 1);
	assert_int_equal(merge_parents(c.db, p->name), p->merge_parents);
	free(want);
	free(got);
	rc_done(&c);
}

/* --- plan_execute: A, then B; C; D after B and C ------------------------- */

#define PLAN_STEPS \
	"{\\\"steps\\\":[" \
	"{\\\"id\\\":\\\"A\\\",\\\"task\\\":\\\"DO-A\\\",\\\"profile\\\":\\\"explore\\\"}," \
	"{\\\"id\\\":\\\"B\\\",\\\"task\\\":\\\"DO-B\\\",\\\"profile\\\":\\\"explore\\\"," \
	"\\\"depends_on\\\":[\\\"A\\\"]}," \
	"{\\\"id\\\":\\\"C\\\",\\\"task\\\":\\\"DO-C\\\",\\\"profile\\\":\\\"explore\\\"}," \
	"{\\\"id\\\":\\\"D\\\",\\\"task\\\":\\\"DO-D\\\",\\\"profile\\\":\\\"explore\\\"," \
	"\\\"depends_on\\\":[\\\"B\\\",\\\"C\\\"]}]}"

static const char *const plan_done[] = { "[plan_execute plan]",
	"[plan_execute A]", "[plan_execute B]", NULL };
static const char *const plan_later[] = { "[plan_execute D]",
	"[plan_execute synthesis]", NULL };
static const struct holds plan_holds[] = {
	/* D hangs under the reused B and the restarted C. */
	{ OWN("[plan_execute D]"), "RES-B" },
	{ OWN("[plan_execute D]"), "SLOW-RES" },
	{ OWN("[plan_execute B]"), "RES-A" },
	{ NULL, NULL },
};

/*
 * Killed once the plan agent, A and B (after A) are done and C's turn
 * hangs: D (after B and C) and the synthesis have not started.
 */
static void
test_resume_plan(void **state)
{
	const struct pat	p = { "plan_execute",
	    RULE("[\"ORCH-PAT\", \"RES-SYNTH\"]", "FINAL-PLAN") ",\n"
	    CALL("plan_execute", "{\"task\": \"PLAN-ME\"}") ",\n"
	    RULE("\"[plan_execute synthesis]\"", "RES-SYNTH") ",\n"
	    RULE("\"[plan_execute D]\"", "RES-D") ",\n"
	    RULE_SLOW("\"[plan_execute C]\"", "SLOW-RES") ",\n"
	    RULE("\"[plan_execute B]\"", "RES-B") ",\n"
	    RULE("\"[plan_execute A]\"", "RES-A") ",\n"
	    RULE("\"[plan_execute plan]\"", PLAN_STEPS),
	    "4", "FINAL-PLAN", plan_done, "[plan_execute C]", plan_later,
	    plan_holds, NULL, 1, 0, 0, NULL };

	(void)state;
	resume_case(&p);
}

static const char *const fail_done[] = { "[plan_execute plan]",
	"[plan_execute A]", NULL };
static const char *const fail_later[] = { NULL };
static const struct holds fail_holds[] = { { NULL, NULL } };

/*
 * The same plan; B failed (fail()) before the kill and C's turn hangs.
 * The failed step is not run again either: D is skipped, no synthesis,
 * and the orchestrator hears B's failure as the first run would have.
 */
static void
test_resume_plan_failed_step(void **state)
{
	const struct pat	p = { "plan_execute",
	    RULE("[\"ORCH-PAT\", \"no synthesis was made\"]", "FINAL-FAIL")
	    ",\n"
	    CALL("plan_execute", "{\"task\": \"PLAN-ME\"}") ",\n"
	    RULE("\"[plan_execute synthesis]\"", "RES-SYNTH") ",\n"
	    RULE("\"[plan_execute D]\"", "RES-D") ",\n"
	    RULE_SLOW("\"[plan_execute C]\"", "SLOW-RES") ",\n"
	    "{\"match\": \"[plan_execute B]\", \"repeat\": true, "
	    "\"responses\": [{\"reply\": {\"calls\": [{\"id\": \"f\", "
	    "\"name\": \"fail\", \"arguments\": {\"reason\": "
	    "\"B-CANNOT-WHY\"}}]}}]},\n"
	    RULE("\"[plan_execute A]\"", "RES-A") ",\n"
	    RULE("\"[plan_execute plan]\"", PLAN_STEPS),
	    "4", "FINAL-FAIL", fail_done, "[plan_execute C]", fail_later,
	    fail_holds, NULL, 1, 0, 0, "[plan_execute B]" };

	(void)state;
	resume_case(&p);
}

/* --- parallel_explore: four aspects, one at a time ----------------------- */

static const char *const explore_done[] = { "[parallel_explore 1]",
	"[parallel_explore 2]", NULL };
static const char *const explore_later[] = { "[parallel_explore 4]", NULL };
static const struct holds explore_holds[] = { { NULL, NULL } };

/*
 * --jobs 1: aspects 1 and 2 are done, 3's turn hangs, 4 waits for a slot
 * (its row is written, none of its messages). The merge is of all four.
 */
static void
test_resume_explore(void **state)
{
	const struct pat	p = { "parallel_explore",
	    RULE("[\"ORCH-PAT\", \"every aspect explored\"]", "FINAL-EXP")
	    ",\n"
	    CALL("parallel_explore", "{\"task\": \"EXP-T\", \"aspects\": "
	    "[\"ASP-ONE\", \"ASP-TWO\", \"ASP-THREE\", \"ASP-FOUR\"]}") ",\n"
	    RULE("\"[parallel_explore 1]\"", "FOUND-1") ",\n"
	    RULE("\"[parallel_explore 2]\"", "FOUND-2") ",\n"
	    RULE_SLOW("\"[parallel_explore 3]\"", "SLOW-RES") ",\n"
	    RULE("\"[parallel_explore 4]\"", "FOUND-4"),
	    "1", "FINAL-EXP", explore_done, "[parallel_explore 3]",
	    explore_later, explore_holds, NULL, 1, 0, 4, NULL };

	(void)state;
	resume_case(&p);
}

/*
 * As above, and the resumed run is killed again during the orchestrator's
 * turn after the pattern, before that turn stored the pattern's answer:
 * the second resume runs no aspect again and finds the merge node the
 * first one wrote (one merge node, four parents).
 */
static void
test_resume_explore_merge_once(void **state)
{
	const struct pat	p = { "parallel_explore",
	    RULE_SLOW("[\"ORCH-PAT\", \"every aspect explored\"]",
	    "FINAL-EXP") ",\n"
	    CALL("parallel_explore", "{\"task\": \"EXP-T\", \"aspects\": "
	    "[\"ASP-ONE\", \"ASP-TWO\", \"ASP-THREE\", \"ASP-FOUR\"]}") ",\n"
	    RULE("\"[parallel_explore 1]\"", "FOUND-1") ",\n"
	    RULE("\"[parallel_explore 2]\"", "FOUND-2") ",\n"
	    RULE_SLOW("\"[parallel_explore 3]\"", "SLOW-RES") ",\n"
	    RULE("\"[parallel_explore 4]\"", "FOUND-4"),
	    "1", "FINAL-EXP", explore_done, "[parallel_explore 3]",
	    explore_later, explore_holds, NULL, 1, 1, 4, NULL };

	(void)state;
	resume_case(&p);
}

/* --- sequential_delegate: four steps ------------------------------------ */

static const char *const seq_done[] = { "[sequential_delegate 1]",
	"[sequential_delegate 2]", NULL };
static const char *const seq_later[] = { "[sequential_delegate 4]", NULL };
static const struct holds seq_holds[] = {
	/* Each step from the previous one's summary, across the kill. */
	{ OWN("[sequential_delegate 3]"), "SEQ-RES-2" },
	{ OWN("[sequential_delegate 4]"), "SLOW-RES" },
	{ NULL, NULL },
};

#define SEQ_RULES(four) \
	RULE("[\"ORCH-PAT\", \"every step done\"]", "FINAL-SEQ") ",\n" \
	CALL("sequential_delegate", "{\"steps\": [" \
	"{\"task\": \"SEQ-ONE\", \"profile\": \"explore\"}, " \
	"{\"task\": \"SEQ-TWO\", \"profile\": \"explore\"}, " \
	"{\"task\": \"SEQ-THREE\", \"profile\": \"explore\"}, " \
	"{\"task\": \"SEQ-FOUR\", \"profile\": \"explore\"}]}") ",\n" \
	four ",\n" \
	RULE_SLOW("\"[sequential_delegate 3]\"", "SLOW-RES") ",\n" \
	RULE("\"[sequential_delegate 2]\"", "SEQ-RES-2") ",\n" \
	RULE("\"[sequential_delegate 1]\"", "SEQ-RES-1")

/* Steps 1 and 2 are done, 3's turn hangs, 4 has not started. */
static void
test_resume_sequence(void **state)
{
	const struct pat	p = { "sequential_delegate",
	    SEQ_RULES(RULE("\"[sequential_delegate 4]\"", "SEQ-RES-4")),
	    "4", "FINAL-SEQ", seq_done, "[sequential_delegate 3]", seq_later,
	    seq_holds, NULL, 1, 0, 0, NULL };

	(void)state;
	resume_case(&p);
}

static const char *const seq2_later[] = { NULL };
static const struct holds seq2_holds[] = {
	{ OWN("[sequential_delegate 3]"), "SEQ-RES-2" },
	{ OWN("[sequential_delegate 4]"), "SLOW-RES" },
	{ NULL, NULL },
};

/*
 * Killed twice: as above, then the resumed run once step 3 is done and
 * step 4's turn hangs. The second resume finds step 3, started again by
 * the first, as the first resume found steps 1 and 2.
 */
static void
test_resume_sequence_twice(void **state)
{
	const struct pat	p = { "sequential_delegate",
	    SEQ_RULES(RULE_SLOW("\"[sequential_delegate 4]\"", "SEQ-RES-4")),
	    "4", "FINAL-SEQ", seq_done, "[sequential_delegate 3]", seq2_later,
	    seq2_holds, "[sequential_delegate 4]", 1, 0, 0, NULL };

	(void)state;
	resume_case(&p);
}

/* --- a call id given again: the latest pattern's agents ------------------ */

static const char *const again_done[] = { "[sequential_delegate 1] SEQ-A1",
	"[sequential_delegate 2] SEQ-A2", "[sequential_delegate 3] SEQ-A3",
	"[sequential_delegate 1] SEQ-B1", NULL };
static const char *const again_later[] = { "[sequential_delegate 3] SEQ-B3",
	NULL };
static const struct holds again_holds[] = {
	{ OWN("[sequential_delegate 2] SEQ-B2"), "SEQ-RES-B1" },
	{ OWN("[sequential_delegate 3] SEQ-B3"), "SLOW-RES" },
	{ NULL, NULL },
};

#define SEQ_CALL(match, steps) \
	"{\"match\": " match ", \"repeat\": true, \"responses\": [{" \
	"\"reply\": {\"calls\": [{\"id\": \"p1\", \"name\": " \
	"\"sequential_delegate\", \"arguments\": {\"steps\": " steps "}}]}}]}"
#define SEQ_STEP(t)	"{\"task\": \"" t "\", \"profile\": \"explore\"}"

/*
 * The orchestrator calls sequential_delegate twice with one call id, as a
 * model may: the second call is killed once its step 1 is done and its
 * step 2 hangs. The resume reuses the second call's agents, never the
 * first call's steps of the same ids (p1#1, p1#2, and p1#3, which the
 * second call had not started).
 */
static void
test_resume_call_id_again(void **state)
{
	const struct pat	p = { "sequential_delegate",
	    RULE("[\"ORCH-PAT\", \"SEQ-RES-B3\"]", "FINAL-AGAIN") ",\n"
	    SEQ_CALL("[\"ORCH-PAT\", \"SEQ-RES-A3\"]", "[" SEQ_STEP("SEQ-B1")
	    ", " SEQ_STEP("SEQ-B2") ", " SEQ_STEP("SEQ-B3") "]") ",\n"
	    SEQ_CALL("\"ORCH-PAT\"", "[" SEQ_STEP("SEQ-A1") ", "
	    SEQ_STEP("SEQ-A2") ", " SEQ_STEP("SEQ-A3") "]") ",\n"
	    RULE("\"[sequential_delegate 3] SEQ-B3\"", "SEQ-RES-B3") ",\n"
	    RULE_SLOW("\"[sequential_delegate 2] SEQ-B2\"", "SLOW-RES") ",\n"
	    RULE("\"[sequential_delegate 1] SEQ-B1\"", "SEQ-RES-B1") ",\n"
	    RULE("\"[sequential_delegate 3] SEQ-A3\"", "SEQ-RES-A3") ",\n"
	    RULE("\"[sequential_delegate 2] SEQ-A2\"", "SEQ-RES-A2") ",\n"
	    RULE("\"[sequential_delegate 1] SEQ-A1\"", "SEQ-RES-A1"),
	    "4", "FINAL-AGAIN", again_done, "[sequential_delegate 2] SEQ-B2",
	    again_later, again_holds, NULL, 2, 0, 0, NULL };

	(void)state;
	resume_case(&p);
}

/* --- a finished step's summary in flight ---------------------------------- */

/*
 * Step 1's result is long, so its node's summary is asked of the model;
 * the run is killed while that request hangs (step 1 is stored done, its
 * node has no summary). The resume does not run step 1 again: it asks
 * for the summary once more, then starts step 2 from it, and answers the
 * call as an uninterrupted run does.
 */
static void
test_resume_step_summary(void **state)
{
	const char *const	 done[] = { "[sequential_delegate 1]", NULL };
	const struct holds	 holds[] = { { NULL, NULL } };
	char			 rules[4096], pad[301];
	const struct pat	 p = { "sequential_delegate", rules, "4",
	    "FINAL-SUM", done, NULL, done + 1, holds, NULL, 1, 0, 0, NULL };
	struct rc		 ref, c;
	struct killer		 k;
	struct h_run		 r;
	char			*want, *got;
	int			 want_err, got_err, intr;

	(void)state;
	memset(pad, 'x', sizeof(pad) - 1);
	pad[sizeof(pad) - 1] = '\0';
	snprintf(rules, sizeof(rules), "{\"match\": \"Its final result:\", "
	    "\"responses\": [%%s{\"reply\": {\"text\": \"SUMMARY-OF-1\"}}]},\n"
	    RULE("[\"ORCH-PAT\", \"every step done\"]", "FINAL-SUM") ",\n"
	    CALL("sequential_delegate", "{\"steps\": ["
	    "{\"task\": \"SEQ-ONE\", \"profile\": \"explore\"}, "
	    "{\"task\": \"SEQ-TWO\", \"profile\": \"explore\"}]}") ",\n"
	    RULE("\"[sequential_delegate 2]\"", "SEQ-RES-2") ",\n"
	    "{\"match\": \"[sequential_delegate 1]\", \"repeat\": true, "
	    "\"responses\": [{\"reply\": {\"calls\": [{\"id\": \"k\", "
	    "\"name\": \"complete\", \"arguments\": {\"result\": "
	    "\"LONGRES-%s\"}}]}}]}", pad);

	rc_start(&ref, &p, "");
	ref.env[4] = "WARREN_SUMMARY_RESULT_MAX=200";
	rc_run(&ref, &p, NULL, NULL, &r);
	if (r.status != 0 || r.hung)
		fail_msg("uninterrupted run: %d\n%s", r.status, r.err);
	h_run_free(&r);
	want = pattern_answer(ref.db, &want_err, &intr);
	rc_done(&ref);

	rc_start(&c, &p, HANG);
	c.env[4] = "WARREN_SUMMARY_RESULT_MAX=200";
	memset(&k, 0, sizeof(k));
	k.done = done;
	k.asked = "Its final result:";
	k.db = c.db;
	k.log = c.fl.log;
	rc_run(&c, &p, kill_inside, &k, &r);
	if (!k.killed)
		fail_msg("waited %d s for %s; the run: %d\n%s", KILL_WAIT_S,
		    k.why, r.status, r.err);
	h_run_free(&r);
	rc_resume(&c, NULL, &r);
	if (r.status != 0 || r.hung)
		fail_msg("resume: %d\n%s", r.status, r.err);
	assert_int_equal(h_count_lines(r.out, "\"event\":\"result\"",
	    "FINAL-SUM"), 1);
	h_run_free(&r);
	/* Step 1's turns (the summary requests hold its transcript too). */
	assert_int_equal(own_count(c.fl.log, "[sequential_delegate 1]", NULL) -
	    own_count(c.fl.log, "[sequential_delegate 1]", "Its final result:"),
	    1);
	assert_int_equal(h_count_file(c.fl.log, "Its final result:", NULL), 2);
	/* Step 2 started from step 1's summary, written by the resume. */
	assert_int_equal(own_count(c.fl.log, "[sequential_delegate 2]",
	    "SUMMARY-OF-1"), 1);
	assert_int_equal(own_count(c.fl.log, "[sequential_delegate 2]", NULL),
	    1);
	got = pattern_answer(c.db, &got_err, &intr);
	assert_int_equal(intr, 0);
	assert_int_equal(got_err, want_err);
	assert_string_equal(got, want);
	free(want);
	free(got);
	rc_done(&c);
}

/* --- a profile gone between the kill and the resume ----------------------- */

#define SCOUT_MD \
	"---\nname: scout\ndescription: Scouts for the test\n" \
	"tools: Read, Grep, Glob\n---\nYou scout.\n"

/* The rows of a step's marker: how many, and the first one's status and
 * exit reason (copied). */
static int
step_row(const char *db, const char *marker, enum store_agent_status *st,
    char *why, size_t whysz)
{
	struct store		*s = rc_open(db);
	struct store_agent	*a;
	size_t			 n, i;
	int			 k = 0;

	assert_int_equal(store_agents_list(s, 1, &a, &n), 0);
	for (i = 0; i < n; i++) {
		if (strncmp(a[i].task, marker, strlen(marker)) != 0)
			continue;
		if (k++ == 0) {
			*st = a[i].status;
			snprintf(why, whysz, "%s", a[i].exit_reason ?
			    a[i].exit_reason : "");
		}
	}
	store_agents_free(a, n);
	store_close(s);
	return k;
}

/*
 * Steps 1 and 2 run with the user's profile scout; 1 is done and 2's turn
 * hangs when the run is killed, and the profile file is removed before the
 * resume. Step 1, finished, is still not run again (its result needs no
 * profile). Step 2 cannot be restarted: its row stays cancelled
 * (interrupted), the step is tried anew and refused (unknown profile),
 * step 3 skipped, and the orchestrator hears which and why.
 */
static void
test_resume_profile_gone(void **state)
{
	const char *const	 done[] = { "[sequential_delegate 1]", NULL };
	const struct holds	 holds[] = { { NULL, NULL } };
	const struct pat	 p = { "sequential_delegate",
	    RULE("[\"ORCH-PAT\", \"a step FAILED\"]", "FINAL-GONE") ",\n"
	    CALL("sequential_delegate", "{\"steps\": ["
	    "{\"task\": \"SEQ-ONE\", \"profile\": \"scout\"}, "
	    "{\"task\": \"SEQ-TWO\", \"profile\": \"scout\"}, "
	    "{\"task\": \"SEQ-THREE\", \"profile\": \"explore\"}]}") ",\n"
	    RULE("\"[sequential_delegate 3]\"", "SEQ-RES-3") ",\n"
	    RULE_SLOW("\"[sequential_delegate 2]\"", "SLOW-RES") ",\n"
	    RULE("\"[sequential_delegate 1]\"", "SEQ-RES-1"),
	    "4", "FINAL-GONE", done, "[sequential_delegate 2]", done + 1,
	    holds, NULL, 1, 0, 0, NULL };
	struct rc		 c;
	struct killer		 k;
	struct h_run		 r;
	enum store_agent_status	 st;
	char			 cf[PATH_MAX + 32], agents[PATH_MAX], md[PATH_MAX + 16];
	char			 why[64], *got;
	int			 got_err, intr;

	(void)state;
	rc_start(&c, &p, HANG);
	snprintf(agents, sizeof(agents), "%s/config/warren/agents", c.dir);
	h_write(c.dir, "config/warren/agents/scout.md", SCOUT_MD, 0644);
	snprintf(cf, sizeof(cf), "XDG_CONFIG_HOME=%s/config", c.dir);
	c.env[4] = cf;
	memset(&k, 0, sizeof(k));
	k.done = p.done;
	k.slow = p.slow;
	k.db = c.db;
	k.log = c.fl.log;
	rc_run(&c, &p, kill_inside, &k, &r);
	if (!k.killed)
		fail_msg("waited %d s for %s; the run: %d\n%s", KILL_WAIT_S,
		    k.why, r.status, r.err);
	h_run_free(&r);
	snprintf(md, sizeof(md), "%s/scout.md", agents);
	assert_int_equal(unlink(md), 0);

	rc_resume(&c, NULL, &r);
	if (r.status != 0 || r.hung)
		fail_msg("resume: %d\n%s", r.status, r.err);
	assert_int_equal(h_count_lines(r.out, "\"event\":\"result\"",
	    "FINAL-GONE"), 1);
	assert_int_equal(h_count_lines(r.err, "agent 0.2 (scout) cannot be "
	    "restarted here", NULL), 1);
	h_run_free(&r);
	assert_int_equal(own_count(c.fl.log, "[sequential_delegate 1]", NULL),
	    1);
	assert_int_equal(own_count(c.fl.log, "[sequential_delegate 2]", NULL),
	    1);
	assert_int_equal(own_count(c.fl.log, "[sequential_delegate 3]", NULL),
	    0);
	got = pattern_answer(c.db, &got_err, &intr);
	assert_int_equal(got_err, 1);
	assert_non_null(strstr(got, "step 1 (scout, agent 0.1) done: "
	    "SEQ-RES-1"));
	assert_non_null(strstr(got, "step 2 (scout) FAILED: refused: unknown "
	    "profile \"scout\""));
	assert_non_null(strstr(got, "step 3 (explore) skipped"));
	free(got);
	/* One row a step that ran; the one nothing restarted says why. */
	assert_int_equal(step_row(c.db, "[sequential_delegate 1]", &st, why,
	    sizeof(why)), 1);
	assert_int_equal(st, STORE_AGENT_DONE);
	assert_int_equal(step_row(c.db, "[sequential_delegate 2]", &st, why,
	    sizeof(why)), 1);
	assert_int_equal(st, STORE_AGENT_CANCELLED);
	assert_string_equal(why, "interrupted");
	assert_int_equal(step_row(c.db, "[sequential_delegate 3]", &st, why,
	    sizeof(why)), 0);
	rc_done(&c);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_teardown(test_resume_plan,
		    h_fakellm_teardown),
		cmocka_unit_test_teardown(test_resume_plan_failed_step,
		    h_fakellm_teardown),
		cmocka_unit_test_teardown(test_resume_explore,
		    h_fakellm_teardown),
		cmocka_unit_test_teardown(test_resume_explore_merge_once,
		    h_fakellm_teardown),
		cmocka_unit_test_teardown(test_resume_sequence,
		    h_fakellm_teardown),
		cmocka_unit_test_teardown(test_resume_sequence_twice,
		    h_fakellm_teardown),
		cmocka_unit_test_teardown(test_resume_call_id_again,
		    h_fakellm_teardown),
		cmocka_unit_test_teardown(test_resume_step_summary,
		    h_fakellm_teardown),
		cmocka_unit_test_teardown(test_resume_profile_gone,
		    h_fakellm_teardown),
	};

	if (getenv("E2E_FILTER") != NULL)
		cmocka_set_test_filter(getenv("E2E_FILTER"));
	return cmocka_run_group_tests(tests, NULL, NULL);
}

/*
 * Composition patterns (docs/composition.md), with the real warren, real
 * workers and the fakellm server as the model: plan_execute's DAG (a
 * diamond: D after B and C, both after A; B and C at once; D's memory node
 * with two parents), parallel_explore's merge node, sequential_delegate
 * handing step 1's summary to step 2, a pattern that meets max agents, a
 * failed step reported to the orchestrator, a cyclic plan refused.
 *
 * The script tells agents apart by the marker compose.c puts before each
 * step's task ("[plan_execute B] ..."). A later step's request holds its
 * ancestors' markers too (their memory is in its context), so the rules
 * go from the most derived agent to the least.
 */
#include <sys/types.h>
#include <sys/wait.h>

#include <limits.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "store/store.h"
#include "tests/e2e/harness.h"

struct ctx {
	char		*dir;
	char		 ws[1024];
	char		 db[PATH_MAX];
	struct h_fakellm fl;
	struct h_run	 r;
	char		*reqs;		/* the requests the model got */
};

/* A rule: the first whose markers are all in the body answers. */
#define RULE(match, calls) \
	"{\"match\": " match ", \"repeat\": true, \"responses\": [{\"reply\":" \
	" {\"calls\": [" calls "]}}]}"
#define RULE_SLOW(match, ms, calls) \
	"{\"match\": " match ", \"repeat\": true, \"responses\": [{" \
	"\"delay_ms\": " #ms ", \"reply\": {\"calls\": [" calls "]}}]}"
/* The same, each answer costing 1,000 input tokens. */
#define RULE_1K(match, calls) \
	"{\"match\": " match ", \"repeat\": true, \"responses\": [{\"reply\":" \
	" {\"usage\": {\"input\": 1000, \"output\": 0}, \"calls\": [" \
	calls "]}}]}"
#define COMPLETE(res) \
	"{\"id\": \"k\", \"name\": \"complete\", \"arguments\": " \
	"{\"result\": \"" res "\"}}"
#define CALL(name, args) \
	"{\"id\": \"p1\", \"name\": \"" name "\", \"arguments\": " args "}"

/*
 * Run warren on task with the fakellm scripted by rules (a JSON array's
 * inside) and extra options; 0 ran, 1 fakellm not built (skip).
 */
static int
ctx_run(struct ctx *c, const char *rules, const char *task,
    const char *opt1, const char *opt2)
{
	char	*script;
	char	*argv[] = { "warren", "run", "--json", "--db", c->db,
		    "--workspace", c->ws, "--jobs", "4", (char *)(uintptr_t)task, NULL,
		    NULL, NULL };
	char	*env[] = { c->fl.env_url, "WARREN_API_KEY=sk-compose",
		    "WARREN_MODEL=fake-model", "WARREN_RETRIES=0", NULL };
	int	 rc;

	memset(c, 0, offsetof(struct ctx, ws));
	c->dir = h_tmpdir();
	snprintf(c->ws, sizeof(c->ws), "%s/ws", c->dir);
	snprintf(c->db, sizeof(c->db), "%s/w.db", c->dir);
	h_write(c->ws, "data.txt", "data\n", 0);
	if (opt1 != NULL) {
		argv[9] = (char *)(uintptr_t)opt1;
		argv[10] = (char *)(uintptr_t)opt2;
		argv[11] = (char *)(uintptr_t)task;
	}
	if (asprintf(&script, "{\"rules\": [%s]}\n", rules) == -1)
		fail();
	rc = h_fakellm_start(&c->fl, c->dir, script);
	free(script);
	if (rc == 1)
		return 1;
	assert_int_equal(rc, 0);
	/* A run of a few seconds: a wedged pattern fails the test in 30 s. */
	h_hang_guard = 30;
	assert_int_equal(h_warren(&c->r, argv, env, NULL, NULL), 0);
	h_fakellm_stop(&c->fl);
	if (c->r.hung)
		fail_msg("%s", h_deadline_missed(&c->r, "the pattern's end"));
	c->reqs = h_read_file(c->fl.log);
	if (c->r.status != 0 || c->r.hung)
		fprintf(stderr, "warren: %d\n%s\n%s\n", c->r.status, c->r.out,
		    c->r.err);
	return 0;
}

static void
ctx_done(struct ctx *c)
{
	h_run_free(&c->r);
	free(c->reqs);
	h_rm_rf(c->dir);
	free(c->dir);
}

#define CTX_RUN(c, rules, task, o1, o2) do {				\
	if (ctx_run(c, rules, task, o1, o2) == 1) {			\
		h_rm_rf((c)->dir);					\
		free((c)->dir);						\
		skip();							\
	}								\
} while (0)

static struct store *
ctx_store(struct ctx *c, struct store_graph *g)
{
	struct store	*st;
	char		 err[512];

	st = store_open(c->db, STORE_READ, err, sizeof(err));
	if (st == NULL)
		fail_msg("store_open %s: %s", c->db, err);
	memset(g, 0, sizeof(*g));
	assert_int_equal(store_graph_load(st, 1, g), 0);
	return st;
}

static const struct store_node *
node_of(const struct store_graph *g, const char *path)
{
	size_t	i;

	for (i = 0; i < g->nnodes; i++)
		if (g->nodes[i].path != NULL && !strcmp(g->nodes[i].path, path))
			return &g->nodes[i];
	fail_msg("no memory node for agent %s", path);
	return NULL;
}

static size_t
nparents(const struct store_graph *g, int64_t node)
{
	size_t	i, n = 0;

	for (i = 0; i < g->nedges; i++)
		n += g->edges[i].child == node;
	return n;
}

static int
has_edge(const struct store_graph *g, int64_t parent, int64_t child)
{
	size_t	i;

	for (i = 0; i < g->nedges; i++)
		if (g->edges[i].parent == parent && g->edges[i].child == child)
			return 1;
	return 0;
}

/* The merge-kind node whose label starts with prefix (exactly one). */
static const struct store_node *
label_node(const struct store_graph *g, const char *prefix)
{
	const struct store_node	*found = NULL;
	size_t			 i;

	for (i = 0; i < g->nnodes; i++)
		if (g->nodes[i].kind == STORE_NODE_MERGE &&
		    g->nodes[i].label != NULL &&
		    !strncmp(g->nodes[i].label, prefix, strlen(prefix))) {
			assert_null(found);
			found = &g->nodes[i];
		}
	if (found == NULL)
		fail_msg("no node labelled \"%s...\"", prefix);
	return found;
}

/* --- plan_execute: the diamond ------------------------------------------ */

#define DIAMOND_PLAN \
	"{\\\"steps\\\":[" \
	"{\\\"id\\\":\\\"A\\\",\\\"task\\\":\\\"DO-A\\\",\\\"profile\\\":\\\"explore\\\"}," \
	"{\\\"id\\\":\\\"B\\\",\\\"task\\\":\\\"DO-B\\\",\\\"profile\\\":\\\"explore\\\"," \
	"\\\"depends_on\\\":[\\\"A\\\"]}," \
	"{\\\"id\\\":\\\"C\\\",\\\"task\\\":\\\"DO-C\\\",\\\"profile\\\":\\\"explore\\\"," \
	"\\\"depends_on\\\":[\\\"A\\\"]}," \
	"{\\\"id\\\":\\\"D\\\",\\\"task\\\":\\\"DO-D\\\",\\\"profile\\\":\\\"explore\\\"," \
	"\\\"depends_on\\\":[\\\"B\\\",\\\"C\\\"]}]}"

static const char diamond_rules[] =
    RULE("[\"ORCH-DAG\", \"RES-SYNTH\"]", COMPLETE("FINAL-DAG")) ",\n"
    RULE("\"ORCH-DAG\"", CALL("plan_execute", "{\"task\": \"PLAN-ME\"}"))
    ",\n"
    RULE("\"[plan_execute synthesis]\"", COMPLETE("RES-SYNTH")) ",\n"
    RULE("\"[plan_execute D]\"", COMPLETE("RES-D")) ",\n"
    RULE_SLOW("\"[plan_execute B]\"", 800, COMPLETE("RES-B")) ",\n"
    RULE_SLOW("\"[plan_execute C]\"", 800, COMPLETE("RES-C")) ",\n"
    RULE("\"[plan_execute A]\"", COMPLETE("RES-A")) ",\n"
    RULE("\"[plan_execute plan]\"", COMPLETE(DIAMOND_PLAN));

static void
test_plan_diamond(void **state)
{
	struct ctx		 c;
	struct store		*st;
	struct store_graph	 g;
	struct store_agent	*a;
	const struct store_node	*pat, *na, *nb, *nc, *nd, *ns;
	struct msg_list		 m;
	size_t			 n, i;
	int			 seen = 0;

	(void)state;
	CTX_RUN(&c, diamond_rules, "ORCH-DAG", NULL, NULL);
	assert_int_equal(c.r.status, 0);
	assert_int_equal(h_count_lines(c.r.out, "\"event\":\"result\"",
	    "FINAL-DAG"), 1);
	assert_true(h_count_lines(c.reqs, "[plan_execute synthesis]",
	    "RES-D") >= 1);
	/* No step count before the plan exists: planning, then its size. */
	assert_int_equal(h_count_lines(c.r.err, "agent 0: plan_execute: "
	    "planning: PLAN-ME", NULL), 1);
	assert_int_equal(h_count_lines(c.r.err, "agent 0: plan_execute: the "
	    "plan has 4 steps", NULL), 1);
	assert_int_equal(h_count_lines(c.r.err, " steps: PLAN-ME", NULL), 0);

	st = ctx_store(&c, &g);
	pat = label_node(&g, "pattern plan_execute: PLAN-ME");
	na = node_of(&g, "0.2");	/* 0.1 is the plan agent */
	nb = node_of(&g, "0.3");
	nc = node_of(&g, "0.4");
	nd = node_of(&g, "0.5");
	ns = node_of(&g, "0.6");
	assert_true(has_edge(&g, node_of(&g, "0")->id, pat->id));
	assert_true(has_edge(&g, pat->id, node_of(&g, "0.1")->id));
	assert_true(has_edge(&g, pat->id, na->id));
	assert_int_equal(nparents(&g, na->id), 1);
	assert_true(has_edge(&g, na->id, nb->id));
	assert_true(has_edge(&g, na->id, nc->id));
	assert_int_equal(nparents(&g, nb->id), 1);
	/* The several-parents case: D under B and C, and nothing else. */
	assert_int_equal(nparents(&g, nd->id), 2);
	assert_true(has_edge(&g, nb->id, nd->id));
	assert_true(has_edge(&g, nc->id, nd->id));
	assert_true(has_edge(&g, nd->id, ns->id));
	assert_non_null(strstr(nd->label, "[plan_execute D] DO-D"));
	/* D started from both B's and C's results (and A's through them). */
	msg_list_init(&m);
	assert_int_equal(store_node_messages(st, nd->id, &m, NULL), 0);
	for (i = 0; i < m.n; i++)
		if (m.v[i].text != NULL)
			seen |= (strstr(m.v[i].text, "RES-A") != NULL) |
			    (strstr(m.v[i].text, "RES-B") != NULL) << 1 |
			    (strstr(m.v[i].text, "RES-C") != NULL) << 2;
	assert_int_equal(seen, 7);
	msg_list_free(&m);
	store_graph_free(&g);

	/* B and C ran at once: each started before the other ended. */
	assert_int_equal(store_agents_list(st, 1, &a, &n), 0);
	assert_int_equal(n, 7);
	assert_string_equal(a[3].path, "0.3");
	assert_string_equal(a[4].path, "0.4");
	assert_true(a[3].started_ms > 0 && a[4].started_ms > 0);
	if (!(a[3].started_ms < a[4].ended_ms &&
	    a[4].started_ms < a[3].ended_ms))
		fail_msg("B ran %lld-%lld, C %lld-%lld: not in parallel",
		    (long long)a[3].started_ms, (long long)a[3].ended_ms,
		    (long long)a[4].started_ms, (long long)a[4].ended_ms);
	/* D started after both ended. */
	assert_true(a[5].started_ms >= a[3].ended_ms &&
	    a[5].started_ms >= a[4].ended_ms);
	store_agents_free(a, n);
	store_close(st);
	ctx_done(&c);
}

/* --jobs 1 holds inside a pattern: B and C, ready together, run one
 * after the other. */
static void
test_plan_jobs_one(void **state)
{
	struct ctx		 c;
	struct store		*st;
	struct store_graph	 g;
	struct store_agent	*a;
	size_t			 n;

	(void)state;
	CTX_RUN(&c, diamond_rules, "ORCH-DAG", "--jobs", "1");
	assert_int_equal(c.r.status, 0);
	assert_int_equal(h_count_lines(c.r.out, "\"event\":\"result\"",
	    "FINAL-DAG"), 1);
	st = ctx_store(&c, &g);
	store_graph_free(&g);
	assert_int_equal(store_agents_list(st, 1, &a, &n), 0);
	assert_int_equal(n, 7);
	assert_string_equal(a[3].path, "0.3");
	assert_string_equal(a[4].path, "0.4");
	if (a[4].started_ms < a[3].ended_ms && a[3].started_ms <
	    a[4].ended_ms)
		fail_msg("B ran %lld-%lld, C %lld-%lld: at once under --jobs 1",
		    (long long)a[3].started_ms, (long long)a[3].ended_ms,
		    (long long)a[4].started_ms, (long long)a[4].ended_ms);
	store_agents_free(a, n);
	store_close(st);
	ctx_done(&c);
}

/* The token budget holds inside a pattern: once it is spent, B's and C's
 * turns never reach the model, D and the synthesis never start, and the
 * run ends (exit 1) instead of waiting. */
static void
test_plan_budget(void **state)
{
	struct ctx	c;
	const char	*rules =
	    RULE_1K("\"ORCH-BUD\"", CALL("plan_execute",
	    "{\"task\": \"PLAN-B\"}")) ",\n"
	    RULE_1K("\"[plan_execute D]\"", COMPLETE("RES-D")) ",\n"
	    RULE_1K("\"[plan_execute B]\"", COMPLETE("RES-B")) ",\n"
	    RULE_1K("\"[plan_execute C]\"", COMPLETE("RES-C")) ",\n"
	    RULE_1K("\"[plan_execute A]\"", COMPLETE("RES-A")) ",\n"
	    RULE_1K("\"[plan_execute plan]\"", COMPLETE(DIAMOND_PLAN));

	(void)state;
	CTX_RUN(&c, rules, "ORCH-BUD", "--budget", "2500");
	assert_int_equal(c.r.status, 1);
	assert_true(h_count_lines(c.reqs, "[plan_execute A] DO-A", NULL) >= 1);
	assert_int_equal(h_count_lines(c.reqs, "[plan_execute B] DO-B", NULL),
	    0);
	assert_int_equal(h_count_lines(c.reqs, "[plan_execute C] DO-C", NULL),
	    0);
	assert_int_equal(h_count_lines(c.reqs, "[plan_execute D]", NULL), 0);
	assert_int_equal(h_count_lines(c.r.out, "\"path\":\"0.5\"", NULL),
	    0);
	assert_true(h_count_lines(c.r.out, "\"event\":\"done\"",
	    "token budget of 2500 tokens for this run is spent") >= 2);
	ctx_done(&c);
}

/* `warren graph` and `warren show` name the pattern and its steps. */
static void
test_plan_graph_show(void **state)
{
	struct ctx	 c;
	struct h_run	 r;
	char		*gargv[] = { "warren", "graph", "--db", c.db, "--format",
			    "mermaid", "1", NULL };
	char		*sargv[] = { "warren", "show", "--db", c.db, "1", NULL };

	(void)state;
	CTX_RUN(&c, diamond_rules, "ORCH-DAG", NULL, NULL);
	assert_int_equal(c.r.status, 0);
	assert_int_equal(h_warren(&r, gargv, NULL, NULL, NULL), 0);
	assert_int_equal(r.status, 0);
	assert_int_equal(h_count_lines(r.out, "pattern plan_execute: PLAN-ME",
	    NULL), 1);
	/* A node's label: "PATH PROFILE [STATUS]", then its task. */
	assert_int_equal(h_count_lines(r.out, "0.5 explore [done]",
	    "[plan_execute D]"), 1);
	h_run_free(&r);
	assert_int_equal(h_warren(&r, sargv, NULL, NULL, NULL), 0);
	assert_int_equal(r.status, 0);
	assert_true(h_count_lines(r.out, "pattern plan_execute", NULL) >= 1);
	assert_true(h_count_lines(r.out, "[plan_execute synthesis]", NULL) >=
	    1);
	h_run_free(&r);
	ctx_done(&c);
}

/* --- plan_execute: refused plans, failed steps -------------------------- */

#define CYCLE_PLAN \
	"{\\\"steps\\\":[" \
	"{\\\"id\\\":\\\"A\\\",\\\"task\\\":\\\"DO-A\\\",\\\"depends_on\\\":[\\\"C\\\"]}," \
	"{\\\"id\\\":\\\"B\\\",\\\"task\\\":\\\"DO-B\\\",\\\"depends_on\\\":[\\\"A\\\"]}," \
	"{\\\"id\\\":\\\"C\\\",\\\"task\\\":\\\"DO-C\\\",\\\"depends_on\\\":[\\\"B\\\"]}]}"

static void
test_plan_cycle_refused(void **state)
{
	struct ctx	c;
	const char	*rules =
	    RULE("[\"ORCH-CYC\", \"plan is refused\"]", COMPLETE("SAW-REFUSAL"))
	    ",\n"
	    RULE("\"ORCH-CYC\"", CALL("plan_execute", "{\"task\": \"PLAN-C\"}"))
	    ",\n"
	    RULE("\"[plan_execute plan]\"", COMPLETE(CYCLE_PLAN));

	(void)state;
	CTX_RUN(&c, rules, "ORCH-CYC", NULL, NULL);
	assert_int_equal(c.r.status, 0);
	assert_int_equal(h_count_lines(c.r.out, "\"event\":\"result\"",
	    "SAW-REFUSAL"), 1);
	/* The orchestrator was told why, as a tool error. */
	assert_true(h_count_lines(c.reqs, "ORCH-CYC",
	    "form a cycle through A B C") >= 1);
	/* Nothing ran: only the plan agent was made. */
	assert_int_equal(h_count_lines(c.reqs, "[plan_execute A]", NULL), 0);
	assert_int_equal(h_count_lines(c.r.out, "\"path\":\"0.2\"", NULL), 0);
	ctx_done(&c);
}

static void
test_plan_unknown_dep_refused(void **state)
{
	struct ctx	c;
	const char	*rules =
	    RULE("[\"ORCH-UNK\", \"plan is refused\"]", COMPLETE("SAW-UNK"))
	    ",\n"
	    RULE("\"ORCH-UNK\"", CALL("plan_execute", "{\"task\": \"PLAN-U\"}"))
	    ",\n"
	    RULE("\"[plan_execute plan]\"", COMPLETE("Here: {\\\"steps\\\":["
	    "{\\\"id\\\":\\\"A\\\",\\\"task\\\":\\\"x\\\",\\\"depends_on\\\":"
	    "[\\\"Z\\\"]}]}"));

	(void)state;
	CTX_RUN(&c, rules, "ORCH-UNK", NULL, NULL);
	assert_int_equal(c.r.status, 0);
	assert_int_equal(h_count_lines(c.r.out, "\"event\":\"result\"",
	    "SAW-UNK"), 1);
	assert_true(h_count_lines(c.reqs, "ORCH-UNK",
	    "depends on unknown step \\\"Z\\\"") >= 1);
	ctx_done(&c);
}

/* B fails: D is skipped, no synthesis, and the orchestrator hears which
 * step failed and why. */
static void
test_plan_step_failed(void **state)
{
	struct ctx	c;
	const char	*rules =
	    RULE("[\"ORCH-FAIL\", \"no synthesis was made\"]",
	    COMPLETE("SAW-FAIL")) ",\n"
	    RULE("\"ORCH-FAIL\"", CALL("plan_execute", "{\"task\": \"PLAN-F\"}"))
	    ",\n"
	    RULE("\"[plan_execute D]\"", COMPLETE("RES-D")) ",\n"
	    RULE("\"[plan_execute B]\"", "{\"id\": \"f\", \"name\": \"fail\","
	    " \"arguments\": {\"reason\": \"B-CANNOT-WHY\"}}") ",\n"
	    RULE("\"[plan_execute C]\"", COMPLETE("RES-C")) ",\n"
	    RULE("\"[plan_execute A]\"", COMPLETE("RES-A")) ",\n"
	    RULE("\"[plan_execute plan]\"", COMPLETE(DIAMOND_PLAN));

	(void)state;
	CTX_RUN(&c, rules, "ORCH-FAIL", NULL, NULL);
	assert_int_equal(c.r.status, 0);
	assert_int_equal(h_count_lines(c.r.out, "\"event\":\"result\"",
	    "SAW-FAIL"), 1);
	/* The tool result the orchestrator got: B failed and why, D
	 * skipped, A and C done. */
	assert_true(h_count_lines(c.reqs, "ORCH-FAIL",
	    "step B (explore, agent 0.3) FAILED: subagent 0.3 (explore) "
	    "failed: B-CANNOT-WHY") >= 1);
	assert_true(h_count_lines(c.reqs, "ORCH-FAIL",
	    "step D (explore) skipped: a step it depends on failed") >= 1);
	assert_true(h_count_lines(c.reqs, "ORCH-FAIL",
	    "step C (explore, agent 0.4) done: RES-C") >= 1);
	assert_int_equal(h_count_lines(c.reqs, "[plan_execute D]", NULL), 0);
	assert_int_equal(h_count_lines(c.reqs, "[plan_execute synthesis]",
	    NULL), 0);
	ctx_done(&c);
}

/* --- parallel_explore ---------------------------------------------------- */

static void
test_explore_merge(void **state)
{
	struct ctx		 c;
	struct store		*st;
	struct store_graph	 g;
	const struct store_node	*pat, *mg;
	const char		*rules =
	    RULE("[\"ORCH-EXP\", \"every aspect explored\"]",
	    COMPLETE("FINAL-EXP")) ",\n"
	    RULE("\"ORCH-EXP\"", CALL("parallel_explore", "{\"task\": "
	    "\"EXP-T\", \"aspects\": [\"ASP-ONE\", \"ASP-TWO\", "
	    "\"ASP-THREE\"]}")) ",\n"
	    RULE("\"ASP-ONE\"", COMPLETE("FOUND-1")) ",\n"
	    RULE("\"ASP-TWO\"", COMPLETE("FOUND-2")) ",\n"
	    RULE("\"ASP-THREE\"", COMPLETE("FOUND-3"));
	size_t			 i;
	char			 path[8];

	(void)state;
	CTX_RUN(&c, rules, "ORCH-EXP", NULL, NULL);
	assert_int_equal(c.r.status, 0);
	assert_int_equal(h_count_lines(c.r.out, "\"event\":\"result\"",
	    "FINAL-EXP"), 1);
	/* Read-only agents: explore. */
	assert_int_equal(h_count_lines(c.r.out, "\"event\":\"spawned\"",
	    "\"profile\":\"explore\""), 3);
	st = ctx_store(&c, &g);
	pat = label_node(&g, "pattern parallel_explore: EXP-T");
	mg = label_node(&g, "pattern parallel_explore merge");
	assert_int_equal(nparents(&g, mg->id), 3);
	for (i = 1; i <= 3; i++) {
		snprintf(path, sizeof(path), "0.%zu", i);
		assert_true(has_edge(&g, pat->id, node_of(&g, path)->id));
		assert_true(has_edge(&g, node_of(&g, path)->id, mg->id));
	}
	assert_non_null(strstr(mg->summary, "FOUND-1"));
	assert_non_null(strstr(mg->summary, "FOUND-2"));
	assert_non_null(strstr(mg->summary, "FOUND-3"));
	store_graph_free(&g);
	store_close(st);
	ctx_done(&c);
}

/* --max-agents 2 and three aspects: the third is refused, reported, and
 * the run ends (not wedged waiting for it). */
static void
test_explore_max_agents(void **state)
{
	struct ctx	c;
	const char	*rules =
	    RULE("[\"ORCH-MAX\", \"some aspects FAILED\"]",
	    COMPLETE("SAW-MAX")) ",\n"
	    RULE("\"ORCH-MAX\"", CALL("parallel_explore", "{\"task\": "
	    "\"M-T\", \"aspects\": [\"ASP-ONE\", \"ASP-TWO\", "
	    "\"ASP-THREE\"]}")) ",\n"
	    RULE("\"ASP-ONE\"", COMPLETE("FOUND-1")) ",\n"
	    RULE("\"ASP-TWO\"", COMPLETE("FOUND-2")) ",\n"
	    RULE("\"ASP-THREE\"", COMPLETE("FOUND-3"));

	(void)state;
	CTX_RUN(&c, rules, "ORCH-MAX", "--max-agents", "2");
	assert_int_equal(c.r.status, 0);
	assert_int_equal(h_count_lines(c.r.out, "\"event\":\"result\"",
	    "SAW-MAX"), 1);
	assert_true(h_count_lines(c.reqs, "ORCH-MAX",
	    "step 3 (explore) FAILED: refused: ") >= 1);
	assert_true(h_count_lines(c.reqs, "ORCH-MAX", "FOUND-2") >= 1);
	assert_int_equal(h_count_lines(c.reqs, "ASP-THREE\\nIt is for", NULL),
	    0);
	ctx_done(&c);
}

/* --- sequential_delegate ------------------------------------------------- */

static void
test_sequential_summary(void **state)
{
	struct ctx		 c;
	struct store		*st;
	struct store_graph	 g;
	const char		*rules =
	    RULE("[\"ORCH-SEQ\", \"every step done\"]", COMPLETE("FINAL-SEQ"))
	    ",\n"
	    RULE("\"ORCH-SEQ\"", CALL("sequential_delegate", "{\"steps\": ["
	    "{\"task\": \"SEQ-ONE\", \"profile\": \"explore\"}, "
	    "{\"task\": \"SEQ-TWO\", \"profile\": \"explore\"}]}")) ",\n"
	    RULE("\"[sequential_delegate 2]\"", COMPLETE("SUMMARY-TWO")) ",\n"
	    RULE("\"[sequential_delegate 1]\"", COMPLETE("SUMMARY-ONE-77"));

	(void)state;
	CTX_RUN(&c, rules, "ORCH-SEQ", NULL, NULL);
	assert_int_equal(c.r.status, 0);
	assert_int_equal(h_count_lines(c.r.out, "\"event\":\"result\"",
	    "FINAL-SEQ"), 1);
	/* Step 2's request to the model held step 1's summary. */
	assert_true(h_count_lines(c.reqs, "[sequential_delegate 2] SEQ-TWO",
	    "SUMMARY-ONE-77") >= 1);
	/* Step 1's did not hold step 2's task: they ran in order. */
	assert_int_equal(h_count_lines(c.reqs, "[sequential_delegate 1]",
	    "SUMMARY-TWO"), 0);
	st = ctx_store(&c, &g);
	assert_true(has_edge(&g, node_of(&g, "0.1")->id,
	    node_of(&g, "0.2")->id));
	assert_int_equal(nparents(&g, node_of(&g, "0.2")->id), 1);
	store_graph_free(&g);
	store_close(st);
	ctx_done(&c);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_teardown(test_plan_diamond,
		    h_fakellm_teardown),
		cmocka_unit_test_teardown(test_plan_graph_show,
		    h_fakellm_teardown),
		cmocka_unit_test_teardown(test_plan_jobs_one,
		    h_fakellm_teardown),
		cmocka_unit_test_teardown(test_plan_budget,
		    h_fakellm_teardown),
		cmocka_unit_test_teardown(test_plan_cycle_refused,
		    h_fakellm_teardown),
		cmocka_unit_test_teardown(test_plan_unknown_dep_refused,
		    h_fakellm_teardown),
		cmocka_unit_test_teardown(test_plan_step_failed,
		    h_fakellm_teardown),
		cmocka_unit_test_teardown(test_explore_merge,
		    h_fakellm_teardown),
		cmocka_unit_test_teardown(test_explore_max_agents,
		    h_fakellm_teardown),
		cmocka_unit_test_teardown(test_sequential_summary,
		    h_fakellm_teardown),
	};

	if (getenv("E2E_FILTER") != NULL)
		cmocka_set_test_filter(getenv("E2E_FILTER"));
	return cmocka_run_group_tests(tests, NULL, NULL);
}

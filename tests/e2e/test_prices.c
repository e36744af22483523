/*
 * What a run cost, where the user gives prices (issue 34,
 * docs/configuration.md "model_prices"): the real warren on a private
 * workspace, state and config directory, the root scripted by a cassette
 * whose one turn reports 100 input and 10 output tokens. Without a price
 * for the run's model the end summary, `show` and `runs` show tokens only;
 * with `model_prices = pm-1=100,500` in the user's config they show
 * $0.0150 (100 x 100 / 1e6 + 10 x 500 / 1e6), `runs` in a COST column, and
 * so does the report. A bad entry stops a run (exit 3, file:line); a
 * project's .warren/config may not set the key.
 */
#include <limits.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "tests/e2e/harness.h"

struct t {
	struct h_ws	 w;
	char		 st[PATH_MAX + 32], cf[PATH_MAX + 32];
	char		*env[5];
};

static void
t_open(struct t *t)
{
	memset(t, 0, sizeof(*t));
	h_ws_open(&t->w, "data\n");
	snprintf(t->st, sizeof(t->st), "XDG_STATE_HOME=%s/state", t->w.dir);
	snprintf(t->cf, sizeof(t->cf), "XDG_CONFIG_HOME=%s/config", t->w.dir);
	t->env[0] = t->st;
	t->env[1] = t->cf;
	t->env[2] = "WARREN_MODEL=pm-1";
	t->env[3] = "WARREN_WORKSPACE_MODE=in-place";
	t->env[4] = NULL;
	h_turn(t->w.f, "0", 1, h_calls1("a", "complete",
	    "{\"result\":\"PRICED-DONE\"}"));
	h_ws_cassette_close(&t->w);
}

/* warren ARGS... in t's environment; the result in r. */
static void
t_warren(struct t *t, struct h_run *r, ...)
{
	va_list	ap;

	va_start(ap, r);
	assert_int_equal(h_warren_v(r, t->env, NULL, ap), 0);
	va_end(ap);
}

/* One run of the cassette: its end summary line is in r->err. */
static void
t_run(struct t *t, struct h_run *r)
{
	t_warren(t, r, "run", "--plain", "--replay", t->w.cas, "--workspace",
	    t->w.ws, "the task", NULL);
	if (r->status != 0 || strstr(r->out, "PRICED-DONE") == NULL)
		fail_msg("run: status %d\n%s\n%s", r->status, r->out, r->err);
}

/* One run of the cassette with --json: its events in r->out. */
static void
t_run_json(struct t *t, struct h_run *r)
{
	t_warren(t, r, "run", "--json", "--replay", t->w.cas, "--workspace",
	    t->w.ws, "the task", NULL);
	if (r->status != 0 || strstr(r->out, "PRICED-DONE") == NULL)
		fail_msg("run --json: status %d\n%s\n%s", r->status, r->out,
		    r->err);
}

/* s holds want; else fail, showing s. */
static void
t_has(const char *s, const char *want, const char *what)
{
	if (strstr(s, want) == NULL)
		fail_msg("%s: no \"%s\" in:\n%s", what, want, s);
}

static void
t_hasnt(const char *s, const char *unwanted, const char *what)
{
	if (strstr(s, unwanted) != NULL)
		fail_msg("%s: \"%s\" in:\n%s", what, unwanted, s);
}

static void	t_json(struct t *);

static void
test_cost_where_priced(void **state)
{
	struct t	 t;
	struct h_run	 r;
	char		 cfg[PATH_MAX], report[PATH_MAX], *html;

	(void)state;
	t_open(&t);
	snprintf(cfg, sizeof(cfg), "%s/config", t.w.dir);
	/* No price: tokens only, as before. */
	t_run(&t, &r);
	t_has(r.err, "tokens 100 in, 10 out\n", "summary without a price");
	h_run_free(&r);
	t_warren(&t, &r, "show", "--workspace", t.w.ws, "1", NULL);
	t_has(r.out, "tokens 100 in / 10 out, ", "show without a price");
	t_hasnt(r.out, "$", "show without a price");
	h_run_free(&r);
	t_warren(&t, &r, "runs", "--workspace", t.w.ws, NULL);
	t_hasnt(r.out, "COST", "runs without a price");
	t_hasnt(r.out, "$", "runs without a price");
	h_run_free(&r);
	/* Another model's price: still none for pm-1. */
	h_write(cfg, "warren/config", "model_prices = pm=1,1\n", 0);
	t_warren(&t, &r, "runs", "--workspace", t.w.ws, NULL);
	t_hasnt(r.out, "COST", "runs with another model's price");
	h_run_free(&r);

	/* The user's price for pm-1 (the last line for it wins). */
	h_write(cfg, "warren/config", "model_prices = pm-1=9,9\n"
	    "model_prices = pm-1=100,500\n", 0);
	t_run(&t, &r);
	t_has(r.err, "tokens 100 in, 10 out, $0.0150\n", "summary");
	h_run_free(&r);
	t_warren(&t, &r, "show", "--workspace", t.w.ws, "2", NULL);
	t_has(r.out, "tokens 100 in / 10 out, $0.0150, ", "show");
	h_run_free(&r);
	t_warren(&t, &r, "runs", "--workspace", t.w.ws, NULL);
	t_has(r.out, "COST", "runs");
	if (h_count_lines(r.out, "$0.0150", NULL) != 2)	/* both runs */
		fail_msg("runs: not both runs at $0.0150:\n%s", r.out);
	h_run_free(&r);
	snprintf(report, sizeof(report), "%s/r.html", t.w.dir);
	t_warren(&t, &r, "report", "--workspace", t.w.ws, "-o", report, "2",
	    NULL);
	assert_int_equal(r.status, 0);
	h_run_free(&r);
	html = h_read_file(report);
	t_has(html, "tokens 100 in / 10 out, cost $0.0150, model pm-1",
	    "report");
	free(html);
	t_json(&t);
	h_ws_close(&t.w);
}

/* The same in --json output: run's result event, show, runs; cost_usd
 * only where a price is given. Runs 1 and 2 were run before. */
static void
t_json(struct t *t)
{
	struct h_run	 r;
	char		 cfg[PATH_MAX];

	snprintf(cfg, sizeof(cfg), "%s/config", t->w.dir);
	t_run_json(t, &r);
	if (h_count_lines(r.out, "\"event\":\"result\"",
	    "\"tokens\":{\"in\":100,\"out\":10},\"cost_usd\":0.015,") != 1)
		fail_msg("run --json: no cost_usd 0.015 in its result:\n%s",
		    r.out);
	h_run_free(&r);
	t_warren(t, &r, "show", "--json", "--workspace", t->w.ws, "3", NULL);
	t_has(r.out, "\"cost_usd\": 0.015\n", "show --json");
	h_run_free(&r);
	t_warren(t, &r, "runs", "--json", "--workspace", t->w.ws, NULL);
	if (h_count_lines(r.out, "\"cost_usd\": 0.015", NULL) != 3)
		fail_msg("runs --json: not all three at 0.015:\n%s", r.out);
	h_run_free(&r);
	/* No price for pm-1: no cost_usd anywhere. */
	h_write(cfg, "warren/config", "model_prices = pm=1,1\n", 0);
	t_run_json(t, &r);
	t_has(r.out, "\"event\":\"result\"", "run --json, no price");
	t_hasnt(r.out, "cost_usd", "run --json, no price");
	h_run_free(&r);
	t_warren(t, &r, "show", "--json", "--workspace", t->w.ws, "4", NULL);
	t_has(r.out, "\"tokens_in\": 100,", "show --json, no price");
	t_hasnt(r.out, "cost_usd", "show --json, no price");
	h_run_free(&r);
	t_warren(t, &r, "runs", "--json", "--workspace", t->w.ws, NULL);
	t_has(r.out, "\"tokens_in\": 100,", "runs --json, no price");
	t_hasnt(r.out, "cost_usd", "runs --json, no price");
	h_run_free(&r);
}

static void
test_bad_and_project(void **state)
{
	struct t	 t;
	struct h_run	 r;
	char		 cfg[PATH_MAX];

	(void)state;
	t_open(&t);
	snprintf(cfg, sizeof(cfg), "%s/config", t.w.dir);
	t_run(&t, &r);
	h_run_free(&r);
	t_run(&t, &r);
	h_run_free(&r);
	/* A bad entry: a run stops before it starts, saying where; runs
	 * and show say why they show no cost. */
	h_write(cfg, "warren/config", "\nmodel_prices = pm-1=3\n", 0);
	t_warren(&t, &r, "run", "--plain", "--replay", t.w.cas, "--workspace",
	    t.w.ws, "the task", NULL);
	assert_int_equal(r.status, 3);
	t_has(r.err, "warren/config:2): 'pm-1=3' is not MODEL=IN,OUT",
	    "bad entry");
	h_run_free(&r);
	t_warren(&t, &r, "runs", "--workspace", t.w.ws, NULL);
	assert_int_equal(r.status, 0);
	t_has(r.err, "costs not shown: model_prices (", "runs, bad entry");
	t_has(r.err, "warren/config:2): 'pm-1=3' is not", "runs, bad entry");
	t_hasnt(r.out, "COST", "runs, bad entry");
	if (h_count_lines(r.err, "costs not shown", NULL) != 1)
		fail_msg("runs: the bad entry not said once:\n%s", r.err);
	if (h_count_lines(r.out, "the task", NULL) != 2)
		fail_msg("runs: the refused run recorded:\n%s", r.out);
	h_run_free(&r);
	/* A project may not set it: trusting it is refused. */
	h_write(cfg, "warren/config", "", 0);
	h_write(t.w.ws, ".warren/config", "model_prices = pm-1=0,0\n", 0);
	t_warren(&t, &r, "trust", t.w.ws, NULL);
	assert_int_equal(r.status, 3);
	t_has(r.err, "'model_prices' is never taken from a project's config",
	    "project");
	h_run_free(&r);
	h_ws_close(&t.w);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_cost_where_priced),
		cmocka_unit_test(test_bad_and_project),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}

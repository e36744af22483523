/*
 * warren report: a real run against fakellm (the orchestrator delegates
 * two explore agents at once, each waits 300 ms per LLM turn, one tool
 * call fails), then its HTML page. test_report checks the page's text:
 * every bar and row is there, hostile text from the task, a tool result
 * and a result is escaped, nothing is loaded from the network.
 * test_report_chromium (this file with REPORT_CHROMIUM) loads the page in
 * headless Chromium: its script runs with no console error, and the
 * screenshot shows the timeline's LLM and tool bars. Without chromium it
 * skips (exit 77), unless WARREN_REQUIRE_CHROMIUM is set (CI): then it
 * fails.
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

#define EVIL	"</script><script>alert(1)</script><img src=x onerror=alert(2)>"

static const char script[] =
"{\"rules\": [\n"
" {\"match\": [\"REPORT-TASK\", \"RESULT-A\", \"RESULT-B\"], \"repeat\": true,"
"  \"responses\": [{\"reply\": {\"calls\": [{\"id\": \"r2\", \"name\":"
"  \"complete\", \"arguments\": {\"result\": \"ALL-DONE " EVIL "\"}}]}}]},\n"
" {\"match\": [\"KID-A\", \"MAGIC-LINE\"], \"repeat\": true, \"responses\":"
"  [{\"delay_ms\": 300, \"reply\": {\"calls\": [{\"id\": \"a2\", \"name\":"
"  \"complete\", \"arguments\": {\"result\": \"RESULT-A\"}}]}}]},\n"
" {\"match\": \"KID-A\", \"repeat\": true, \"responses\": [{\"delay_ms\": 300,"
"  \"reply\": {\"calls\": [{\"id\": \"a1\", \"name\": \"read\","
"  \"arguments\": {\"path\": \"data.txt\"}}]}}]},\n"
" {\"match\": [\"KID-B\", \"call_b1\"], \"repeat\": true, \"responses\":"
"  [{\"delay_ms\": 300, \"reply\": {\"calls\": [{\"id\": \"b2\", \"name\":"
"  \"complete\", \"arguments\": {\"result\": \"RESULT-B\"}}]}}]},\n"
" {\"match\": \"KID-B\", \"repeat\": true, \"responses\": [{\"delay_ms\": 300,"
"  \"reply\": {\"calls\": [{\"id\": \"call_b1\", \"name\": \"read\","
"  \"arguments\": {\"path\": \"no-such-file\"}}]}}]},\n"
" {\"match\": \"REPORT-TASK\", \"repeat\": true, \"responses\": [{\"reply\":"
"  {\"calls\": ["
"  {\"id\": \"d1\", \"name\": \"delegate\", \"arguments\":"
"   {\"profile\": \"explore\", \"task\": \"KID-A: read data.txt\"}},"
"  {\"id\": \"d2\", \"name\": \"delegate\", \"arguments\":"
"   {\"profile\": \"explore\", \"task\": \"KID-B: read the missing file\"}}"
"  ]}}]}\n"
"]}\n";

struct rfx {
	char	*dir;
	char	 db[PATH_MAX], html[PATH_MAX];
};

/* Run the task against fakellm, then write its report; 1: skip. */
static int
report_make(struct rfx *fx)
{
	struct h_fakellm fl;
	struct h_run	 r;
	char		 ws[PATH_MAX], dbenv[PATH_MAX + 16];
	char		*run[] = { "warren", "run", "--json", "--jobs", "4",
			    "--workspace", ws, "REPORT-TASK " EVIL, NULL };
	char		*rep[] = { "warren", "report", "-o", fx->html, "last",
			    "--workspace", ws, NULL };
	char		*env[] = { fl.env_url, dbenv, "WARREN_API_KEY=k",
			    "WARREN_MODEL=fake", "WARREN_RETRIES=0", NULL };
	int		 rc;

	fx->dir = h_tmpdir();
	snprintf(ws, sizeof(ws), "%s/ws", fx->dir);
	h_write(ws, "data.txt", "MAGIC-LINE </pre><script>alert(3)</script>\n",
	    0);
	snprintf(fx->db, sizeof(fx->db), "%s/warren.db", fx->dir);
	snprintf(dbenv, sizeof(dbenv), "WARREN_DB=%s", fx->db);
	snprintf(fx->html, sizeof(fx->html), "%s/report.html", fx->dir);
	if ((rc = h_fakellm_start(&fl, fx->dir, script)) != 0)
		return rc == 1 ? 1 : -1;
	assert_int_equal(h_warren(&r, run, env, NULL, NULL), 0);
	h_fakellm_stop(&fl);
	if (r.status != 0)
		fail_msg("run: %d\n%s\n%s", r.status, r.out, r.err);
	h_run_free(&r);
	assert_int_equal(h_warren(&r, rep, env, NULL, NULL), 0);
	if (r.status != 0)
		fail_msg("report: %d\n%s", r.status, r.err);
	h_run_free(&r);
	return 0;
}

static void
report_done(struct rfx *fx)
{
	h_rm_rf(fx->dir);
	free(fx->dir);
}

#ifndef REPORT_CHROMIUM
static int
count_str(const char *s, const char *needle)
{
	int	n = 0;

	while ((s = strstr(s, needle)) != NULL) {
		n++;
		s += strlen(needle);
	}
	return n;
}

/* The store has what the timeline is drawn from: an "llm" event per turn
 * with its wait, and the two children overlapping in time. */
static void
check_store(const struct rfx *fx)
{
	struct store		*st;
	struct store_event	*ev;
	struct store_agent	*ag;
	size_t			 nev, nag, i, llm = 0, slow = 0;
	int64_t			 run;
	char			 err[STORE_ERRMSG_MAX];
	const char		*ms;

	assert_non_null(st = store_open(fx->db, STORE_READ, err, sizeof(err)));
	assert_int_equal(store_run_latest(st, NULL, &run), 0);
	assert_int_equal(store_events_list(st, run, &ev, &nev), 0);
	for (i = 0; i < nev; i++)
		if (strcmp(ev[i].type, "llm") == 0) {
			llm++;
			ms = strstr(ev[i].detail, "\"ms\":");
			assert_non_null(ms);
			slow += atoi(ms + 5) >= 290;
		}
	store_events_free(ev, nev);
	assert_int_equal(llm, 6);	/* 2 turns each of 0, 0.1, 0.2 */
	assert_int_equal(slow, 4);	/* the children's, 300 ms each */
	assert_int_equal(store_agents_list(st, run, &ag, &nag), 0);
	assert_int_equal(nag, 3);
	assert_true(ag[1].started_ms < ag[2].ended_ms &&
	    ag[2].started_ms < ag[1].ended_ms);
	store_agents_free(ag, nag);
	store_close(st);
}

/* Bad arguments and a run that is not there: usage errors, no file. */
static void
check_errors(const struct rfx *fx)
{
	struct h_run	 r;
	char		 out[PATH_MAX], dbenv[PATH_MAX + 16];
	char		*none[] = { "warren", "report", "-o", out, "7", NULL };
	char		*bare[] = { "warren", "report", NULL };
	char		*env[] = { dbenv, NULL };

	snprintf(dbenv, sizeof(dbenv), "WARREN_DB=%s", fx->db);
	snprintf(out, sizeof(out), "%s/r7.html", fx->dir);
	assert_int_equal(h_warren(&r, bare, env, NULL, NULL), 0);
	assert_int_equal(r.status, 2);
	assert_non_null(strstr(r.err, "give one RUN; try 'warren help report'"));
	h_run_free(&r);
	assert_int_equal(h_warren(&r, none, env, NULL, NULL), 0);
	assert_int_equal(r.status, 2);
	assert_non_null(strstr(r.err, "no run 7"));
	assert_int_equal(access(out, F_OK), -1);
	h_run_free(&r);
}

static void
test_report_html(void **state)
{
	struct rfx	 fx;
	char		*h;

	(void)state;
	memset(&fx, 0, sizeof(fx));
	if (report_make(&fx) == 1) {
		report_done(&fx);
		skip();
	}
	check_store(&fx);
	check_errors(&fx);
	h = h_read_file(fx.html);
	/* One script, ours; the hostile text is escaped wherever it is. */
	assert_int_equal(count_str(h, "<script"), 1);
	assert_int_equal(count_str(h, "</script>"), 1);
	assert_null(strstr(h, "<img"));
	assert_true(count_str(h, "&lt;/script&gt;&lt;script&gt;alert(1)") >= 3);
	assert_true(count_str(h, "&lt;/pre&gt;&lt;script&gt;alert(3)") >= 1);
	assert_true(count_str(h, "ALL-DONE &lt;/script&gt;") >= 1);
	/* Nothing from the network; no script but by its hash. */
	assert_null(strstr(h, " src=\""));
	assert_null(strstr(h, "@import"));
	assert_null(strstr(h, "href=\"http"));
	assert_null(strstr(h, "url(http"));
	assert_non_null(strstr(h, "default-src 'none'"));
	assert_non_null(strstr(h, "script-src 'sha256-"));
	/* A row per agent, a bar per LLM turn and tool call. */
	assert_int_equal(count_str(h, "<rect class=\"life "), 3);
	assert_int_equal(count_str(h, "<rect class=\"llm\""), 6);
	assert_true(count_str(h, "<rect class=\"tool\"") >= 3);
	assert_int_equal(count_str(h, "<rect class=\"toolerr\""), 1);
	/* The graph: three agents and the merge, with profile and status. */
	assert_int_equal(count_str(h, "<g class=\"node "), 4);
	assert_int_equal(count_str(h, "0.1 explore [done]"), 1);
	/* A folded transcript per agent, tokens per agent. */
	assert_int_equal(count_str(h, "<details id=\"agent-"), 3);
	assert_non_null(strstr(h, "<th>tokens in</th>"));
	free(h);
	report_done(&fx);
}

#else
#include "tests/e2e/png_check.h"
#endif

#ifdef REPORT_CHROMIUM
static int	chromium_skipped;

static const char *
chromium_bin(void)
{
	static const char *const bins[] = { "/usr/bin/chromium",
	    "/usr/bin/chromium-browser", NULL };
	size_t	i;

	for (i = 0; bins[i] != NULL; i++)
		if (access(bins[i], X_OK) == 0)
			return bins[i];
	return NULL;
}

/* chromium --headless on a page (the report, or page): what it logged,
 * and its DOM or PNG. */
static void
chromium_page(const struct rfx *fx, const char *bin, const char *what,
    const char *page, const char *out, const char *log)
{
	char	cmd[6 * PATH_MAX];
	int	rc;

	snprintf(cmd, sizeof(cmd), "cd '%s' && HOME='%s' timeout 120 '%s' "
	    "--headless --disable-gpu --no-sandbox --no-first-run "
	    "--user-data-dir='%s/chrome' --enable-logging=stderr --v=0 "
	    "--window-size=1200,1000 %s 'file://%s' > '%s' 2> '%s'", fx->dir,
	    fx->dir, bin, fx->dir, what, page, out, log);
	rc = system(cmd);
	if (rc != 0)
		fail_msg("chromium failed (%d):\n%s", rc, h_read_file(log));
}

static void
chromium_run(const struct rfx *fx, const char *bin, const char *what,
    const char *out, const char *log)
{
	chromium_page(fx, bin, what, fx->html, out, log);
}

/* No console message of the page: no error, no blocked script. */
static void
check_console(const char *log)
{
	char	*l = h_read_file(log);

	if (strstr(l, "CONSOLE") != NULL || strstr(l, "Uncaught") != NULL ||
	    strstr(l, "Refused to") != NULL)
		fail_msg("console messages loading the report:\n%s", l);
	free(l);
}

static void
test_report_chromium(void **state)
{
	struct rfx	 fx;
	const char	*bin = chromium_bin();
	char		 dom[PATH_MAX + 8], png[PATH_MAX + 8], log[PATH_MAX + 8];
	char		 shot[PATH_MAX + 32], *d;

	(void)state;
	if (bin == NULL) {
		if (getenv("WARREN_REQUIRE_CHROMIUM") != NULL)
			fail_msg("chromium is not installed, and "
			    "WARREN_REQUIRE_CHROMIUM says it must be "
			    "(apt-get install chromium)");
		printf("SKIPPED: chromium is not installed (apt-get install "
		    "chromium): the report was not loaded in a browser\n");
		chromium_skipped = 1;
		skip();
	}
	memset(&fx, 0, sizeof(fx));
	if (report_make(&fx) == 1) {
		printf("SKIPPED: fakellm is not built\n");
		chromium_skipped = 1;
		report_done(&fx);
		skip();
	}
	snprintf(dom, sizeof(dom), "%s/dom.html", fx.dir);
	snprintf(log, sizeof(log), "%s/chrome.log", fx.dir);
	chromium_run(&fx, bin, "--dump-dom", dom, log);
	check_console(log);
	d = h_read_file(dom);
	/* Its script ran (the CSP let it, by its hash) and raised nothing. */
	if (strstr(d, ">report-ready<") == NULL)
		fail_msg("the report's script did not run:\n%.2000s",
		    strstr(d, "report-") ? strstr(d, "report-") : d);
	free(d);
	snprintf(png, sizeof(png), "%s/shot.png", fx.dir);
	snprintf(shot, sizeof(shot), "--screenshot='%s'", png);
	chromium_run(&fx, bin, shot, dom, log);
	check_console(log);
	/* The screenshot shows the timeline: LLM bars and tool bars in their
	 * colours, not a blank page. */
	png_check_colours(png, 0x4a7fd0, 0xe39a2b, 200);
	report_done(&fx);
}

/* --- 60 agents: the page's width ---------------------------------------- */

#define WIDE_KIDS	60

/* The root delegates WIDE_KIDS explore agents at once, each answers at
 * once; its second turn (the only request with RES-WIDE) ends the run. */
static char *
wide_script(void)
{
	char	*s;
	size_t	 sz = 32768, n;
	int	 i;

	assert_non_null(s = malloc(sz));
	n = (size_t)snprintf(s, sz, "{\"rules\": [\n"
	    " {\"match\": \"RES-WIDE\", \"repeat\": true, \"responses\":"
	    "  [{\"reply\": {\"calls\": [{\"id\": \"z\", \"name\":"
	    "  \"complete\", \"arguments\": {\"result\": \"WIDE-DONE\"}}]}}]},"
	    "\n {\"match\": \"KID-WIDE\", \"repeat\": true, \"responses\":"
	    "  [{\"reply\": {\"calls\": [{\"id\": \"k\", \"name\":"
	    "  \"complete\", \"arguments\": {\"result\": \"RES-WIDE\"}}]}}]},"
	    "\n {\"match\": \"WIDE-TASK\", \"repeat\": true, \"responses\":"
	    "  [{\"reply\": {\"calls\": [");
	for (i = 1; i <= WIDE_KIDS; i++)
		n += (size_t)snprintf(s + n, sz - n, "%s{\"id\": \"d%d\", "
		    "\"name\": \"delegate\", \"arguments\": {\"profile\": "
		    "\"explore\", \"task\": \"KID-WIDE number %d\"}}",
		    i > 1 ? "," : "", i, i);
	assert_true(n + 32 < sz);
	strcat(s, "]}}]}\n]}\n");
	return s;
}

/* Run the 60-agent task, then write its report; 1: skip. */
static int
wide_make(struct rfx *fx)
{
	struct h_fakellm fl;
	struct h_run	 r;
	char		 ws[PATH_MAX], dbenv[PATH_MAX + 16], *wscript;
	char		*run[] = { "warren", "run", "--json", "--max-agents",
			    "60", "--workspace", ws, "WIDE-TASK", NULL };
	char		*rep[] = { "warren", "report", "-o", fx->html, "last",
			    "--workspace", ws, NULL };
	char		*env[] = { fl.env_url, dbenv, "WARREN_API_KEY=k",
			    "WARREN_MODEL=fake", "WARREN_RETRIES=0", NULL };
	int		 rc;

	fx->dir = h_tmpdir();
	snprintf(ws, sizeof(ws), "%s/ws", fx->dir);
	h_write(ws, "data.txt", "data\n", 0);
	snprintf(fx->db, sizeof(fx->db), "%s/warren.db", fx->dir);
	snprintf(dbenv, sizeof(dbenv), "WARREN_DB=%s", fx->db);
	snprintf(fx->html, sizeof(fx->html), "%s/report.html", fx->dir);
	wscript = wide_script();
	rc = h_fakellm_start(&fl, fx->dir, wscript);
	free(wscript);
	if (rc != 0)
		return rc == 1 ? 1 : -1;
	assert_int_equal(h_warren(&r, run, env, NULL, NULL), 0);
	h_fakellm_stop(&fl);
	if (r.status != 0 || strstr(r.out, "WIDE-DONE") == NULL)
		fail_msg("run: %d\n%s\n%s", r.status, r.out, r.err);
	h_run_free(&r);
	assert_int_equal(h_warren(&r, rep, env, NULL, NULL), 0);
	if (r.status != 0)
		fail_msg("report: %d\n%s", r.status, r.err);
	h_run_free(&r);
	return 0;
}

/* A page that loads the report in a frame and writes what the browser
 * laid out into its own DOM: the page's scroll width against its width,
 * the graph's drawn width against its own (its scale), the timeline's
 * right edge against its section's, its top against its names'. */
static const char wide_page[] =
"<!DOCTYPE html><html><body style=\"margin:0\">"
"<iframe id=\"f\" src=\"report.html\" style=\"border:0;width:1200px;"
"height:1000px\"></iframe><pre id=\"m\">pending</pre><script>"
"document.getElementById('f').onload=function(){"
"var d=this.contentDocument,e=d.documentElement,"
"g=d.querySelector('svg.graph'),t=d.querySelector('svg.timeline'),"
"s=d.getElementById('timeline'),gv=g.viewBox.baseVal;"
"document.getElementById('m').textContent='measured scroll='+e.scrollWidth"
"+' client='+e.clientWidth+' graph='+Math.round(g.getBoundingClientRect()"
".width)+' graphbox='+gv.width+' tlright='+Math.round(t."
"getBoundingClientRect().right)+' secright='+Math.round(s."
"getBoundingClientRect().right)+' tltop='+Math.round(t."
"getBoundingClientRect().top)+' namestop='+Math.round(d.querySelector("
"'svg.names').getBoundingClientRect().top)+' end';};</script></body></html>";

/*
 * A 60-agent run's report in headless Chromium, 1200 px wide: nothing
 * wider than the page (scrollWidth <= clientWidth), the graph drawn at
 * its own size (its 60 siblings wrapped, not shrunk to a smudge) and the
 * timeline reaching the right edge of its section (the page's width, not
 * 1,000 px) beside its column of names.
 */
static void
test_report_wide(void **state)
{
	struct rfx	 fx;
	const char	*bin = chromium_bin();
	char		 dom[PATH_MAX + 8], log[PATH_MAX + 8], page[PATH_MAX];
	char		*d, *m;
	int		 scroll, client, graph, box, tlr, secr, tlt, nt;

	(void)state;
	if (bin == NULL) {
		if (getenv("WARREN_REQUIRE_CHROMIUM") != NULL)
			fail_msg("chromium is not installed, and "
			    "WARREN_REQUIRE_CHROMIUM says it must be");
		chromium_skipped = 1;
		skip();
	}
	memset(&fx, 0, sizeof(fx));
	if (wide_make(&fx) == 1) {
		chromium_skipped = 1;
		report_done(&fx);
		skip();
	}
	h_write(fx.dir, "wide.html", wide_page, 0);
	snprintf(page, sizeof(page), "%s/wide.html", fx.dir);
	snprintf(dom, sizeof(dom), "%s/dom.html", fx.dir);
	snprintf(log, sizeof(log), "%s/chrome.log", fx.dir);
	chromium_page(&fx, bin, "--allow-file-access-from-files "
	    "--virtual-time-budget=10000 --dump-dom", page, dom, log);
	d = h_read_file(dom);
	if ((m = strstr(d, "measured ")) == NULL || sscanf(m, "measured "
	    "scroll=%d client=%d graph=%d graphbox=%d tlright=%d secright=%d "
	    "tltop=%d namestop=%d end", &scroll, &client, &graph, &box, &tlr,
	    &secr, &tlt, &nt) != 8)
		fail_msg("no measurements in the page:\n%.3000s\n%s", d,
		    h_read_file(log));
	print_message("60 agents at 1200 px: page %d of %d px, graph %d px "
	    "drawn of %d, timeline's right edge %d, its section's %d, its top "
	    "%d, its names' %d\n", scroll, client, graph, box, tlr, secr, tlt,
	    nt);
	assert_true(scroll <= client);
	assert_true(graph * 100 >= box * 95);
	assert_true(tlr >= secr - 2);
	assert_int_equal(tlt, nt);	/* beside its names, row for row */
	free(d);
	report_done(&fx);
}
#endif

int
main(void)
{
	const struct CMUnitTest tests[] = {
#ifdef REPORT_CHROMIUM
		cmocka_unit_test_teardown(test_report_chromium,
		    h_fakellm_teardown),
		cmocka_unit_test_teardown(test_report_wide,
		    h_fakellm_teardown),
#else
		cmocka_unit_test_teardown(test_report_html,
		    h_fakellm_teardown),
#endif
	};
	int	rc;

	rc = cmocka_run_group_tests(tests, NULL, NULL);
#ifdef REPORT_CHROMIUM
	if (rc == 0 && chromium_skipped)
		return 77;	/* ctest: SKIP_RETURN_CODE */
#endif
	return rc;
}

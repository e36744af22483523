/*
 * What a run shows (supervisor/ui.c, ui_live.c, ui_sum.c). On a terminal:
 * `warren run` in a detached tmux session of its own (tmux -L, 80 and 120
 * columns) against fakellm with 300 ms of latency and parallel agents,
 * read with capture-pane: the tree within 200 ms of the first spawn, a
 * queued agent, a running tool, a bash that exits 1 flagged, a finished
 * subtree folded, no line wider than the pane, a resize redrawn whole,
 * escape sequences from a tool never reaching the pane raw; with 60
 * agents, finished siblings folded to one line so every running one has
 * its own, and under each the call it makes, not its tool's output; on
 * a pty, at most 10 frames a second. Without a terminal (or --plain, TERM=dumb):
 * the line log's summaries, one line per refusal, the result once, the
 * end summary; and --json's run id, tokens and arguments as objects.
 */
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/wait.h>

#include <errno.h>
#include <limits.h>
#include <poll.h>
#include <pty.h>
#include <sys/ioctl.h>
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

#include "tests/e2e/harness.h"

extern char **environ;

/* '@' is the latency of every answer. */
static const char live_script[] =
"{\"rules\": [\n"
" {\"match\": [\"LIVE-ROOT\", \"RESULT-E\"], \"repeat\": true, \"responses\":"
"  [{\"delay_ms\": @, \"reply\": {\"calls\": [{\"id\": \"r2\", \"name\":"
"  \"complete\", \"arguments\": {\"result\": \"ALL-GOOD first\\nsecond "
"line\\u001b]2;PWNED\\u0007 end\"}}]}}]},\n"
" {\"match\": [\"CHILD-A\", \"[exit status\"], \"repeat\": true, \"responses\":"
"  [{\"delay_ms\": @, \"reply\": {\"calls\": [{\"id\": \"a2\", \"name\":"
"  \"fail\", \"arguments\": {\"reason\": \"the build failed\"}}]}}]},\n"
" {\"match\": [\"CHILD-B\", \"[exit status\"], \"repeat\": true, \"responses\":"
"  [{\"delay_ms\": @, \"reply\": {\"calls\": [{\"id\": \"b2\", \"name\":"
"  \"complete\", \"arguments\": {\"result\": \"RESULT-B\"}}]}}]},\n"
" {\"match\": [\"GRAND-D\", \"[exit status\"], \"repeat\": true, \"responses\":"
"  [{\"delay_ms\": @, \"reply\": {\"calls\": [{\"id\": \"d2\", \"name\":"
"  \"complete\", \"arguments\": {\"result\": \"RESULT-D\"}}]}}]},\n"
" {\"match\": [\"CHILD-C\", \"RESULT-D\"], \"repeat\": true, \"responses\":"
"  [{\"delay_ms\": @, \"reply\": {\"calls\": [{\"id\": \"c2\", \"name\":"
"  \"complete\", \"arguments\": {\"result\": \"RESULT-C\\nmore\"}}]}}]},\n"
" {\"match\": [\"CHILD-E\", \"[exit status\"], \"repeat\": true, \"responses\":"
"  [{\"delay_ms\": @, \"reply\": {\"calls\": [{\"id\": \"e2\", \"name\":"
"  \"complete\", \"arguments\": {\"result\": \"RESULT-E\"}}]}}]},\n"
" {\"match\": \"GRAND-D\", \"repeat\": true, \"responses\": [{\"delay_ms\": @,"
"  \"reply\": {\"calls\": [{\"id\": \"d1\", \"name\": \"bash\", \"arguments\":"
"  {\"command\": \"sleep 0.5; echo d\"}}]}}]},\n"
" {\"match\": \"CHILD-A\", \"repeat\": true, \"responses\": [{\"delay_ms\": @,"
"  \"reply\": {\"calls\": [{\"id\": \"a1\", \"name\": \"bash\", \"arguments\":"
"  {\"command\": \"sleep 1; echo compile error; exit 1\"}}]}}]},\n"
" {\"match\": \"CHILD-B\", \"repeat\": true, \"responses\": [{\"delay_ms\": @,"
"  \"reply\": {\"calls\": [{\"id\": \"b1\", \"name\": \"bash\", \"arguments\":"
"  {\"command\": \"sleep 1; printf 'alpha \\\\033]2;HACKED\\\\007\\\\033[31mred"
"\\\\n'\"}}]}}]},\n"
" {\"match\": \"CHILD-C\", \"repeat\": true, \"responses\": [{\"delay_ms\": @,"
"  \"reply\": {\"calls\": [{\"id\": \"c1\", \"name\": \"delegate\", "
"  \"arguments\": {\"profile\": \"general\", \"task\": \"GRAND-D dig\"}}]}}]},\n"
" {\"match\": \"CHILD-E\", \"repeat\": true, \"responses\": [{\"delay_ms\": @,"
"  \"reply\": {\"calls\": [{\"id\": \"e1\", \"name\": \"bash\", \"arguments\":"
"  {\"command\": \"sleep 4; echo e # a command longer than the 80 "
"columns of a terminal, cut where it ends\"}}]}}]},\n"
" {\"match\": \"LIVE-ROOT\", \"repeat\": true, \"responses\": [{\"delay_ms\": @,"
"  \"reply\": {\"calls\": ["
"  {\"id\": \"t1\", \"name\": \"delegate\", \"arguments\": {\"profile\":"
"  \"general\", \"task\": \"CHILD-A build it\"}},"
"  {\"id\": \"t2\", \"name\": \"delegate\", \"arguments\": {\"profile\":"
"  \"general\", \"task\": \"CHILD-B print it\"}},"
"  {\"id\": \"t3\", \"name\": \"delegate\", \"arguments\": {\"profile\":"
"  \"general\", \"task\": \"CHILD-C dig it\"}},"
"  {\"id\": \"t4\", \"name\": \"delegate\", \"arguments\": {\"profile\":"
"  \"general\", \"task\": \"CHILD-E wait for it\"}}]}}]}\n"
"]}\n";

static uint64_t
now_ms(void)
{
	struct timespec	ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

/* The script with every '@' replaced by delay (ms). */
static char *
script_with(unsigned delay)
{
	char		*s, *p;
	const char	*q;
	size_t		 n = 0;

	for (q = live_script; *q != '\0'; q++)
		n += *q == '@' ? 12 : 1;
	assert_non_null(s = malloc(n + 1));
	for (p = s, q = live_script; *q != '\0'; q++) {
		if (*q == '@')
			p += sprintf(p, "%u", delay);
		else
			*p++ = *q;
	}
	*p = '\0';
	return s;
}

/* A test's run: the fakellm, and the shell script tmux starts. */
struct live {
	char		*dir;
	char		 ws[PATH_MAX], sh[PATH_MAX], sock[64];
	struct h_fakellm fl;
};


/* dir/run.sh: warren run in the workspace with extra flags, then the exit
 * status, then a pause so the pane can still be read. */
static void
live_setup_script(struct live *l, const char *script, const char *flags,
    const char *envs)
{
	char	body[8192];
	int	rc;

	memset(l, 0, sizeof(*l));
	l->dir = h_tmpdir();
	snprintf(l->ws, sizeof(l->ws), "%s/ws", l->dir);
	h_write(l->ws, "data.txt", "data\n", 0);
	rc = h_fakellm_start(&l->fl, l->dir, script);
	if (rc == 1)
		skip();
	assert_int_equal(rc, 0);
	h_tmux_sock(l->sock, sizeof(l->sock), "warren-test");
	snprintf(body, sizeof(body),
	    "#!/bin/sh\n"
	    "export %s WARREN_API_KEY=k WARREN_MODEL=m WARREN_RETRIES=0\n"
	    "export WARREN_WORKSPACE_MODE=in-place LANG=C.UTF-8 LC_ALL=\n"
	    "export WARREN_WORKER_BIN='%s' XDG_STATE_HOME='%s/state'\n"
	    "export XDG_CONFIG_HOME='%s/config' %s\n"
	    "cd '%s' && '%s' run --jobs 2 %s 'LIVE-ROOT do the job'\n"
	    "echo \"EXIT $?\"\n"
	    "sleep 600\n", l->fl.env_url, getenv("WARREN_WORKER_BIN"),
	    l->dir, l->dir, envs ? envs : "", l->ws, getenv("WARREN_BIN"),
	    flags ? flags : "");
	h_write(l->dir, "run.sh", body, 0755);
	snprintf(l->sh, sizeof(l->sh), "%s/run.sh", l->dir);
}

static void
live_setup(struct live *l, unsigned delay, const char *flags,
    const char *envs)
{
	char	*script = script_with(delay);

	live_setup_script(l, script, flags, envs);
	free(script);
}

static void
live_start(struct live *l, unsigned cols, unsigned rows, const char *term)
{
	assert_int_equal(h_tmux(l->sock, "new-session -d -s live -x %u -y %u "
	    "'TERM=%s %s'", cols, rows, term, l->sh), 0);
}

/* The pane's text now (the caller frees it). */
static char *
live_capture(const struct live *l)
{
	return h_tmux_pane(l->sock, "live", 0);
}

static void
live_teardown(struct live *l)
{
	h_tmux_kill(l->sock);
	h_fakellm_stop(&l->fl);
	h_rm_rf(l->dir);
	free(l->dir);
}

/* Columns of a line of the pane (our glyphs are one column each). */
static size_t
cols_of(const char *s, size_t len)
{
	size_t	i, n = 0;

	for (i = 0; i < len; i++)
		if (((unsigned char)s[i] & 0xc0) != 0x80)
			n++;
	return n;
}

/* Lines of pane holding every one of the strings (NULL-ended). */
static int
pane_lines(const char *pane, ...)
{
	const char	*p, *nl, *s;
	char		 line[2048];
	size_t		 len;
	int		 n = 0, ok;
	va_list		 ap;

	for (p = pane; *p != '\0'; p = *nl ? nl + 1 : nl) {
		nl = p + strcspn(p, "\n");
		len = (size_t)(nl - p) < sizeof(line) - 1 ? (size_t)(nl - p) :
		    sizeof(line) - 1;
		memcpy(line, p, len);
		line[len] = '\0';
		ok = 1;
		va_start(ap, pane);
		while ((s = va_arg(ap, const char *)) != NULL)
			if (strstr(line, s) == NULL)
				ok = 0;
		va_end(ap);
		n += ok;
	}
	return n;
}

/* The widest line of the frame (from the root's line on); the log line
 * above it and the end summary below are not cut. */
static size_t
frame_width(const char *pane)
{
	const char	*p, *nl, *start = strstr(pane, " 0 orchestrator");
	size_t		 w, max = 0;

	if (start == NULL)
		return 0;
	while (start > pane && start[-1] != '\n')
		start--;
	for (p = start; *p != '\0'; p = *nl ? nl + 1 : nl) {
		nl = p + strcspn(p, "\n");
		if (strncmp(p, "warren: run ", 12) == 0)
			break;	/* the end summary */
		if ((w = cols_of(p, (size_t)(nl - p))) > max)
			max = w;
	}
	return max;
}

/* What the live run showed, and when. */
struct seen {
	uint64_t	 t_first_req, t_tree;
	int		 queued, tool, failed, folded, resized;
	int		 cut, one_footer_line, hostile_shown;
	int		 llm_wait, llm_slot, llm_footer;
	size_t		 widest;
	char		*last;
};

static void
live_look(struct live *l, struct seen *s, unsigned cols, unsigned rows,
    const char *pane, uint64_t now)
{
	size_t	w;

	if (s->t_tree == 0 && pane_lines(pane, "  ", " 0.1 general", NULL) &&
	    pane_lines(pane, "agents: ", NULL) && strstr(pane, "[0.1") == NULL)
		s->t_tree = now;
	s->queued |= pane_lines(pane, " 0.3 general",
	    "queued, waiting for a job slot", NULL) > 0;
	s->tool |= pane_lines(pane, " 0.1 general", "running bash", NULL) > 0 &&
	    pane_lines(pane, "\xe2\x94\x94 bash sleep 1;", NULL) > 0;
	s->failed |= pane_lines(pane, "\xe2\x9c\x97 bash -> exit 1: compile "
	    "error", NULL) > 0;
	s->cut |= pane_lines(pane, "\xe2\x94\x94 bash sleep 4; echo e # a",
	    "\xe2\x80\xa6", NULL) > 0;
	s->llm_wait |= pane_lines(pane, " general ", "waiting for the LLM",
	    NULL) > 0;
	s->llm_slot |= pane_lines(pane, " general ", "waiting for an LLM slot",
	    NULL) > 0;
	s->llm_footer |= pane_lines(pane, "LLM 1 in flight, 1 waiting",
	    NULL) > 0;
	s->hostile_shown |= pane_lines(pane, " exit 0: alpha "
	    "\\x1b]2;HACKED\\x07\\x1b[31mred", NULL) > 0;
	if (cols == 120 && pane_lines(pane, "agents: ", "tokens ", NULL))
		s->one_footer_line = 1;
	if ((w = frame_width(pane)) > s->widest && !s->resized)
		s->widest = w;
	if (!s->folded && pane_lines(pane, " 0.3 general", "done [+1 agent]",
	    NULL) && !pane_lines(pane, "0.3.1", NULL) &&
	    (pane_lines(pane, " 0.4 general", "running bash", NULL) ||
	    pane_lines(pane, " 0.4 general", "bash sleep 4", NULL))) {
		s->folded = 1;
		/* Now, while 0.4 runs: 20 columns fewer, then look. */
		assert_int_equal(h_tmux(l->sock, "resize-window -t live -x %u "
		    "-y %u", cols - 20, rows), 0);
		usleep(300 * 1000);
		free(s->last);
		s->last = live_capture(l);
		if (frame_width(s->last) > cols - 21 ||
		    pane_lines(s->last, " 0 orchestrator", NULL) != 1 ||
		    pane_lines(s->last, "agents: ", NULL) != 1)
			fail_msg("after a resize to %u columns:\n%s", cols - 20,
			    s->last);
		s->resized = 1;
	}
}

/* Watch the pane every 20 ms until the run's EXIT line. */
static void
live_watch(struct live *l, struct seen *s, unsigned cols, unsigned rows)
{
	uint64_t	 t0 = now_ms(), now;
	struct stat	 st;
	char		*pane;

	memset(s, 0, sizeof(*s));
	for (;;) {
		now = now_ms();
		if (s->t_first_req == 0 && stat(l->fl.log, &st) == 0 &&
		    st.st_size > 0)
			s->t_first_req = now;
		pane = live_capture(l);
		live_look(l, s, cols, rows, pane, now);
		if (strstr(pane, "EXIT ") != NULL) {
			free(s->last);
			s->last = pane;
			return;
		}
		free(pane);
		if (now - t0 > 60000)
			fail_msg("the run did not end in 60 s");
		usleep(20 * 1000);
	}
}

static void
live_run(unsigned cols, unsigned rows, const char *flags)
{
	struct live	 l;
	struct seen	 s;
	char		*title;

	if (!h_tmux_have()) {
		fprintf(stderr, "skip: no tmux\n");
		skip();
	}
	live_setup(&l, 300, flags, NULL);
	live_start(&l, cols, rows, "xterm-256color");
	live_watch(&l, &s, cols, rows);
	print_message("%u columns: the last pane:\n%s\n", cols, s.last);
	assert_non_null(strstr(s.last, "EXIT 0"));
	/* The first spawn follows the root's first answer, 300 ms after its
	 * request: the tree shows it within 200 ms of that. */
	assert_true(s.t_first_req > 0 && s.t_tree > 0);
	print_message("tree %llu ms after the first request\n",
	    (unsigned long long)(s.t_tree - s.t_first_req));
	assert_true(s.t_tree <= s.t_first_req + 300 + 200);
	assert_true(s.queued);
	assert_true(s.tool);
	assert_true(s.failed);
	assert_true(s.folded);
	assert_true(s.resized);
	assert_true(s.cut || cols > 80);
	assert_true(s.hostile_shown);
	assert_true(s.widest > 0 && s.widest <= cols - 1);
	if (cols >= 120)
		assert_true(s.one_footer_line);
	assert_true(s.llm_wait);
	if (flags != NULL) {
		/* --llm-concurrency 1: two agents' turns, one waits. */
		assert_true(s.llm_slot);
		assert_true(s.llm_footer);
	}
	/* The tool's and the result's escape sequences, shown escaped. */
	assert_true(pane_lines(s.last, "\\x1b]2;PWNED\\x07 end", NULL) == 1);
	title = h_tmux_out(l.sock, "display -p -t live '#{pane_title}'");
	assert_null(strstr(title, "HACKED"));
	assert_null(strstr(title, "PWNED"));
	free(title);
	/* The result once, its lines as lines; the summary after the tree. */
	assert_int_equal(pane_lines(s.last, "ALL-GOOD first", NULL), 1);
	assert_int_equal(pane_lines(s.last, "warren: run ", " done in ",
	    "6 agents (5 done, 1 failed)", NULL), 1);
	free(s.last);
	live_teardown(&l);
}

static void
test_live_80(void **state)
{
	(void)state;
	live_run(80, 24, NULL);
}

static void
test_live_120(void **state)
{
	(void)state;
	live_run(120, 30, "--llm-concurrency 1");
}

/* --plain, or TERM=dumb, on a terminal: the line log, no tree. */
static void
live_lines(const char *flags, const char *term)
{
	struct live	 l;
	char		*pane;

	if (!h_tmux_have())
		skip();
	live_setup(&l, 0, flags, NULL);
	live_start(&l, 100, 40, term);
	if (h_tmux_wait(l.sock, "live", 0, "EXIT ", 1, 60, &pane) == -1)
		fail_msg("the run did not end in 60 s:\n%s", pane);
	print_message("%s TERM=%s:\n%s\n", flags, term, pane);
	assert_non_null(strstr(pane, "EXIT 0"));
	assert_true(pane_lines(pane, "[0.1 general] bash FAILED -> exit 1: "
	    "compile error", NULL) == 1);
	assert_int_equal(pane_lines(pane, "agents: ", NULL), 0);
	assert_int_equal(pane_lines(pane, " 0 orchestrator", NULL), 0);
	free(pane);
	live_teardown(&l);
}

static void
test_plain_flag(void **state)
{
	(void)state;
	live_lines("--plain", "xterm-256color");
}

static void
test_term_dumb(void **state)
{
	(void)state;
	live_lines("", "dumb");
}

/* The line log and --json read a cassette: no terminal, no latency. */
static void
lines_cassette(struct h_ws *w)
{
	h_ws_open(w, "data\n");
	h_write(w->ws, "b.txt", "abc\nxa\n", 0);
	h_turn(w->f, "0", 1, h_calls2("a", "delegate",
	    "{\"profile\":\"general\",\"task\":\"do things\"}", "n",
	    "delegate", "{\"profile\":\"nosuch\",\"task\":\"nothing\"}"));
	h_turn(w->f, "0.1", 1, h_calls1("b", "bash",
	    "{\"command\":\"echo one; echo two; exit 3\"}"));
	h_turn(w->f, "0.1", 2, h_calls1("g", "glob", "{\"pattern\":\"*.txt\"}"));
	h_turn(w->f, "0.1", 3, h_calls1("r", "grep", "{\"pattern\":\"a\"}"));
	h_turn(w->f, "0.1", 4, h_calls1("e", "edit", "{\"path\":\"data.txt\","
	    "\"old_string\":\"data\",\"new_string\":\"DATA\\nMORE\"}"));
	h_turn(w->f, "0.1", 5, h_calls1("c", "complete",
	    "{\"result\":\"SUB-RES line1\\nline2\"}"));
	h_turn(w->f, "0", 2, h_calls1("d", "complete",
	    "{\"result\":\"FINAL-ONE\\nFINAL-TWO\\u001b[2J\"}"));
	h_ws_cassette_close(w);
}

static void
lines_run(struct h_ws *w, struct h_run *r, const char *flag)
{
	char	*argv[] = { "warren", "run", "--workspace", w->ws, "--replay",
		    w->cas, (char *)(uintptr_t)flag, "lines task", NULL };

	if (flag == NULL) {
		argv[6] = "lines task";
		argv[7] = NULL;
	}
	assert_int_equal(h_warren(r, argv, NULL, NULL, NULL), 0);
	if (r->status != 0)
		fail_msg("status %d\n%s\n%s", r->status, r->out, r->err);
}

static void
test_line_log(void **state)
{
	struct h_ws	 w;
	struct h_run	 r;

	(void)state;
	lines_cassette(&w);
	lines_run(&w, &r, NULL);
	print_message("%s", r.err);
	/* A call says what it does, not its JSON; a result its summary. */
	assert_int_equal(h_count_lines(r.err, "[0.1 general] bash: echo one; "
	    "echo two; exit 3", NULL), 1);
	assert_int_equal(h_count_lines(r.err, "[0.1 general] bash FAILED -> "
	    "exit 3: two", NULL), 1);
	assert_int_equal(h_count_lines(r.err, "[0.1 general] glob -> 2 files",
	    NULL), 1);
	assert_int_equal(h_count_lines(r.err, "[0.1 general] grep -> 3 "
	    "matches in 2 files", NULL), 1);
	assert_int_equal(h_count_lines(r.err, "{\"", NULL), 0);
	/* An edit: its path and a short diff. */
	assert_int_equal(h_count_lines(r.err, "[0.1 general] edit: data.txt",
	    NULL), 1);
	assert_non_null(strstr(r.err, "\n    - data\n    + DATA\n    + MORE\n"));
	/* One line per refusal. */
	assert_int_equal(h_count_lines(r.err, "refused", NULL), 1);
	assert_int_equal(h_count_lines(r.err, "[0 orchestrator] delegate "
	    "nosuch refused: ", NULL), 1);
	/* A subagent's result: its first line, how many more. */
	assert_int_equal(h_count_lines(r.err, "[0.1 general] done in ",
	    "s: SUB-RES line1 (+1 line)"), 1);
	/* The result once, whole, its lines as lines, escaped. */
	assert_null(strstr(r.err, "FINAL-ONE"));
	assert_string_equal(r.out, "FINAL-ONE\nFINAL-TWO\\x1b[2J\n");
	assert_null(strstr(r.err, "\\x0a"));
	/* The end summary. */
	assert_int_equal(h_count_lines(r.err, "warren: run ",
	    ": 2 agents (2 done, 0 failed), tokens 700 in, 70 out"), 1);
	h_run_free(&r);
	h_ws_close(&w);
}

/* --json: every event has the run's id, an agent's its tokens, a call
 * its arguments as an object. */
static void
test_json_events(void **state)
{
	struct h_ws	 w;
	struct h_run	 r;
	const char	*p, *nl;
	char		 want[32];
	int		 events = 0, id;

	(void)state;
	lines_cassette(&w);
	lines_run(&w, &r, "--json");
	assert_int_equal(h_count_lines(r.out, "\"event\":\"tool_call\"",
	    "\"args\":{\"command\":\"echo one; echo two; exit 3\"}"), 1);
	assert_int_equal(h_count_lines(r.out, "\"event\":\"tool_result\"",
	    "\"failed\":true,\"summary\":\"exit 3: two\""), 1);
	assert_int_equal(h_count_lines(r.out, "\"event\":\"done\"",
	    "\"path\":\"0.1\""), 1);
	assert_int_equal(h_count_lines(r.out, "\"event\":\"done\",\"path\":"
	    "\"0.1\"", "\"tokens\":{\"in\":500,\"out\":50}"), 1);
	assert_int_equal(h_count_lines(r.out, "\"event\":\"result\"",
	    "\"tokens\":{\"in\":700,\"out\":70}"), 1);
	assert_int_equal(sscanf(r.out, "{\"event\":\"run\",\"run\":%d}",
	    &id), 1);
	snprintf(want, sizeof(want), "\"run\":%d", id);
	for (p = r.out; *p != '\0'; p = *nl ? nl + 1 : nl) {
		nl = p + strcspn(p, "\n");
		if (nl == p)
			continue;
		events++;
		if (memmem(p, (size_t)(nl - p), want, strlen(want)) == NULL)
			fail_msg("an event without the run's id: %.*s",
			    (int)(nl - p), p);
	}
	assert_true(events > 10);
	h_run_free(&r);
	h_ws_close(&w);
}

/*
 * On a pty: the tree is drawn, at most 10 frames a second however fast
 * the events come (an agent's 40 quick bash calls from a cassette: about
 * 50 events a second).
 */
static void
test_frame_rate(void **state)
{
	struct h_ws	 w;
	char		*argv[] = { "warren", "run", "--no-store", "--workspace",
			    w.ws, "--replay", w.cas, "busy task", NULL };
	char		*env[260], *out;
	size_t		 len, i, k = 0, frames = 0;
	uint64_t	 ms;
	int		 step;
	struct h_run	 r;
	struct winsize	 ws = { .ws_row = 24, .ws_col = 80 };

	(void)state;
	h_ws_open(&w, "data\n");
	h_turn(w.f, "0", 1, h_calls1("a", "delegate",
	    "{\"profile\":\"general\",\"task\":\"busy\"}"));
	for (step = 1; step <= 40; step++)
		h_turn(w.f, "0.1", (unsigned)step, h_calls1("g", "bash",
		    "{\"command\":\"sleep 0.03\"}"));
	h_turn(w.f, "0.1", 41, h_calls1("c", "complete",
	    "{\"result\":\"busy done\"}"));
	h_turn(w.f, "0", 2, h_calls1("d", "complete", "{\"result\":\"ok\"}"));
	h_ws_cassette_close(&w);
	env[k++] = "TERM=xterm";
	env[k++] = "LANG=C.UTF-8";
	for (i = 0; environ[i] != NULL && k < 250; i++)
		if (strncmp(environ[i], "TERM=", 5) != 0 &&
		    strncmp(environ[i], "LANG=", 5) != 0)
			env[k++] = environ[i];
	env[k] = NULL;
	assert_int_equal(h_pty_warren(&r, argv, env, &ws, 120), 0);
	out = r.out;
	len = strlen(out);
	ms = r.ms;
	assert_int_equal(r.status, 0);
	assert_non_null(strstr(out, "agents: "));
	assert_non_null(strstr(out, " 0.1 general"));
	for (i = 0; i + 3 <= len; i++)
		if (memcmp(out + i, "\033[J", 3) == 0)
			frames++;
	print_message("%zu frames in %llu ms\n", frames,
	    (unsigned long long)ms);
	assert_true(ms > 1000);
	assert_true(frames >= 2);
	assert_true(frames <= ms / 100 + 2);
	h_run_free(&r);
	h_ws_close(&w);
}


/*
 * A terminal that takes nothing (output stopped with ^S) does not stop
 * the run: the frames wait (O_NONBLOCK), the agents go on, and the root's
 * last turn reaches the endpoint while the terminal is still stopped.
 * Then ^Q: the last frame, the result, exit 0.
 */
static void
test_stopped_terminal(void **state)
{
	struct live	 l;
	char		*argv[] = { "warren", "run", "--jobs", "2", "--workspace",
			    l.ws, "LIVE-ROOT do the job", NULL };
	char		*env[260], buf[4096], model[] = "WARREN_MODEL=m";
	size_t		 i, k = 0, len = 0;
	ssize_t		 n;
	int		 master, st, reached = 0, seen = 0;
	pid_t		 pid;
	uint64_t	 t0;
	struct winsize	 ws = { .ws_row = 24, .ws_col = 80 };
	struct pollfd	 pfd;

	(void)state;
	live_setup(&l, 0, NULL, NULL);
	env[k++] = l.fl.env_url;
	env[k++] = "WARREN_API_KEY=k";
	env[k++] = model;
	env[k++] = "WARREN_RETRIES=0";
	env[k++] = "TERM=xterm";
	env[k++] = "LANG=C.UTF-8";
	for (i = 0; environ[i] != NULL && k < 250; i++)
		if (strncmp(environ[i], "TERM=", 5) != 0 &&
		    strncmp(environ[i], "LANG=", 5) != 0)
			env[k++] = environ[i];
	env[k] = NULL;
	if ((pid = forkpty(&master, NULL, NULL, &ws)) == 0) {
		execve(getenv("WARREN_BIN"), argv, env);
		_exit(127);
	}
	assert_true(pid > 0);
	pfd.fd = master;
	pfd.events = POLLIN;
	/* The first frame, then ^S: its output stops. (What warren writes
	 * before its loop, like the run's id, is written blocking.) */
	for (t0 = now_ms(); !seen && now_ms() - t0 < 30000;) {
		if (poll(&pfd, 1, 1000) <= 0)
			continue;
		if ((n = read(master, buf, sizeof(buf) - 1)) <= 0)
			break;
		buf[n] = '\0';
		seen = strstr(buf, "agents: ") != NULL;
	}
	if (!seen)
		fail_msg("waited 30 s for the first frame (\"agents: \") on "
		    "warren's terminal");
	assert_int_equal(write(master, "\023", 1), 1);
	for (t0 = now_ms(); now_ms() - t0 < 20000 && !reached; usleep(50000))
		reached = h_count_file(l.fl.log, "RESULT-E", NULL) > 0;
	/* ^Q, then everything it held. */
	assert_int_equal(write(master, "\021", 1), 1);
	free(h_read_all(master, 60, "warren's terminal after ^Q", &len));
	st = test_waitpid(pid, 10, "warren in a stopped terminal");
	close(master);
	assert_true(st != -1);
	if (!reached)
		fail_msg("waited 20 s for the root's last turn (RESULT-E) to "
		    "reach the endpoint while the terminal was stopped");
	assert_true(WIFEXITED(st) && WEXITSTATUS(st) == 0);
	assert_true(len > 0);
	live_teardown(&l);
}

/* --- 60 agents ---------------------------------------------------------- */

#define MANY_FAST	40	/* children that finish at once */
#define MANY_SLOW	20	/* children that read a file, then run bash */

/* The root delegates MANY_FAST fast children, then MANY_SLOW slow ones
 * that read slow.txt (its last line a marker that must never show) and
 * run a long bash. The root's second turn is the only request that holds
 * the children's results (RES-FAST). */
static char *
many_script(void)
{
	char	*s;
	size_t	 sz = 65536, n;
	int	 i;

	assert_non_null(s = malloc(sz));
	n = (size_t)snprintf(s, sz, "{\"rules\": [\n"
	    " {\"match\": \"RES-FAST\", \"repeat\": true,"
	    "  \"responses\": [{\"reply\": {\"calls\": [{\"id\": \"z\","
	    "  \"name\": \"complete\", \"arguments\": {\"result\":"
	    "  \"MANY-DONE\"}}]}}]},\n"
	    " {\"match\": [\"SLOW-KID\", \"[exit status\"], \"repeat\": true,"
	    "  \"responses\": [{\"delay_ms\": 100, \"reply\": {\"calls\":"
	    "  [{\"id\": \"s3\", \"name\": \"complete\", \"arguments\":"
	    "  {\"result\": \"RES-SLOW\"}}]}}]},\n"
	    " {\"match\": [\"SLOW-KID\", \"LASTLINE-MARKER\"], \"repeat\":"
	    "  true, \"responses\": [{\"delay_ms\": 1500, \"reply\":"
	    "  {\"calls\": [{\"id\": \"s2\", \"name\": \"bash\","
	    "  \"arguments\": {\"command\": \"sleep 6; echo slept\"}}]}}]},\n"
	    " {\"match\": \"SLOW-KID\", \"repeat\": true, \"responses\":"
	    "  [{\"delay_ms\": 300, \"reply\": {\"calls\": [{\"id\": \"s1\","
	    "  \"name\": \"read\", \"arguments\": {\"path\":"
	    "  \"slow.txt\"}}]}}]},\n"
	    " {\"match\": \"FAST-KID\", \"repeat\": true, \"responses\":"
	    "  [{\"reply\": {\"calls\": [{\"id\": \"f1\", \"name\":"
	    "  \"complete\", \"arguments\": {\"result\": \"RES-FAST\"}}]}}]},"
	    "\n {\"match\": \"LIVE-ROOT\", \"repeat\": true, \"responses\":"
	    "  [{\"delay_ms\": 100, \"reply\": {\"calls\": [");
	for (i = 1; i <= MANY_FAST + MANY_SLOW; i++)
		n += (size_t)snprintf(s + n, sz - n, "%s{\"id\": \"t%d\", "
		    "\"name\": \"delegate\", \"arguments\": {\"profile\": "
		    "\"general\", \"task\": \"%s number %d\"}}", i > 1 ? ","
		    : "", i, i <= MANY_FAST ? "FAST-KID" : "SLOW-KID", i);
	assert_true(n + 32 < sz);
	strcat(s, "]}}]}\n]}\n");
	return s;
}

/* What the 60-agent run showed. */
struct many_seen {
	int	 checked, read_call, bash_call, marker;
	char	*frame;		/* the pane checked */
};

/* A pane with every fast child done and every slow one running: the slow
 * ones all have a line, the fast ones one line for all of them. */
static void
many_check(const char *pane)
{
	char	 path[32];
	int	 i;

	if (pane_lines(pane, "\xe2\x9c\x93 40 done", NULL) != 1)
		fail_msg("no \"\xe2\x9c\x93 40 done\" line:\n%s", pane);
	if (pane_lines(pane, "more agent", NULL) != 0)
		fail_msg("agents hidden:\n%s", pane);
	for (i = 1; i <= MANY_FAST + MANY_SLOW; i++) {
		snprintf(path, sizeof(path), " 0.%d general", i);
		if (pane_lines(pane, path, NULL) != (i > MANY_FAST))
			fail_msg("agent 0.%d: %d lines, want %d:\n%s", i,
			    pane_lines(pane, path, NULL), i > MANY_FAST, pane);
	}
}

static void
many_look(struct many_seen *m, const char *pane)
{
	m->read_call |= pane_lines(pane, "\xe2\x94\x94 read slow.txt",
	    NULL) > 0;
	m->bash_call |= pane_lines(pane, "\xe2\x94\x94 bash sleep 6; echo "
	    "slept", NULL) > 0;
	m->marker |= strstr(pane, "LASTLINE-MARKER") != NULL;
	if (!m->checked && pane_lines(pane, "agents: 21 running, 0 queued, 40 "
	    "done", NULL) == 1) {
		many_check(pane);
		m->checked = 1;
		m->frame = strdup(pane);
	}
}

/*
 * 60 agents on a 120x50 terminal: 40 finish at once, 20 run for seconds.
 * The 40 are one line ("✓ 40 done"), each of the 20 has its own line,
 * none hidden behind "... N more agents"; under a running agent the call
 * it makes ("read slow.txt", "bash sleep 6; ..."), never the last line of
 * what a tool returned (slow.txt's LASTLINE-MARKER).
 */
static void
test_live_60(void **state)
{
	struct live	 l;
	struct many_seen m;
	char		*script, *pane = NULL;
	uint64_t	 t0 = now_ms();

	(void)state;
	if (!h_tmux_have()) {
		fprintf(stderr, "skip: no tmux\n");
		skip();
	}
	memset(&m, 0, sizeof(m));
	script = many_script();
	live_setup_script(&l, script, "--jobs 60 --max-agents 60", NULL);
	free(script);
	h_write(l.ws, "slow.txt", "one\ntwo\nLASTLINE-MARKER\n", 0);
	live_start(&l, 120, 50, "xterm-256color");
	for (;;) {
		free(pane);
		pane = live_capture(&l);
		many_look(&m, pane);
		if (strstr(pane, "EXIT ") != NULL)
			break;
		if (now_ms() - t0 > 120000)
			fail_msg("the 60-agent run did not end in 120 s:\n%s",
			    pane);
		usleep(50 * 1000);
	}
	print_message("the frame checked:\n%s\nthe last pane:\n%s\n",
	    m.frame ? m.frame : "(none)", pane);
	assert_non_null(strstr(pane, "EXIT 0"));
	assert_false(m.marker);
	assert_true(m.checked);
	assert_true(m.read_call);
	assert_true(m.bash_call);
	free(m.frame);
	free(pane);
	live_teardown(&l);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_line_log),
		cmocka_unit_test(test_json_events),
		cmocka_unit_test(test_frame_rate),
		cmocka_unit_test_teardown(test_stopped_terminal,
		    h_tmux_teardown),
		cmocka_unit_test_teardown(test_live_80,
		    h_tmux_teardown),
		cmocka_unit_test_teardown(test_live_120,
		    h_tmux_teardown),
		cmocka_unit_test_teardown(test_plain_flag,
		    h_tmux_teardown),
		cmocka_unit_test_teardown(test_term_dumb,
		    h_tmux_teardown),
		cmocka_unit_test_teardown(test_live_60,
		    h_tmux_teardown),
	};

	if (getenv("E2E_FILTER") != NULL)
		cmocka_set_test_filter(getenv("E2E_FILTER"));
	return cmocka_run_group_tests(tests, NULL, NULL);
}

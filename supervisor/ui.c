/*
 * What the user sees while a run goes, in one of three modes: on a
 * terminal the live tree (ui_live.c); otherwise (or --plain, or
 * TERM=dumb) one plain line per event on stderr ("[0.2 explore] grep
 * ..."), tool calls and results summarised (ui_sum.c); or with --json
 * one JSON object per line on stdout. Every text from a model, a tool or
 * a file is escaped before it reaches a terminal, and cut to a line.
 * Colour only on a terminal and without NO_COLOR. At the end, a summary
 * and the result, once.
 */
#include <jansson.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "agent/profile.h"
#include "common/clock.h"
#include "common/str.h"
#include "common/xmalloc.h"
#include "workspace/hostexec.h"
#include "supervisor/run.h"

#define UI_TEXT_MAX	160	/* characters of a text shown on a line */
#define UI_JSON_TEXT_MAX 4096	/* bytes of a tool result in --json */
#define UI_HOST_FILES_MAX 50	/* files that run code listed on stderr */
#define UI_DIFF_LINES	6	/* lines of an edit's diff in the line log */

enum ui_mode { UI_PLAIN = 0, UI_JSON, UI_LIVE };

static enum ui_mode	 ui_mode;
static int		 ui_color;
static uint64_t		 ui_t0;
static const struct run	*ui_run;

/* The live view wants a terminal that can move its cursor. */
static int
ui_can_live(const struct run *r)
{
	const char	*term = getenv("TERM");

	return !r->opts.plain && isatty(STDERR_FILENO) && term != NULL &&
	    *term != '\0' && strcmp(term, "dumb") != 0;
}

void
ui_init(struct run *r)
{
	const char	*nc = getenv("NO_COLOR");

	if (ui_mode == UI_LIVE && ui_live_on())
		return;
	ui_run = r;
	ui_t0 = clock_mono_ms();
	ui_mode = r != NULL && r->opts.json ? UI_JSON : UI_PLAIN;
	ui_color = ui_mode == UI_PLAIN && isatty(STDERR_FILENO) &&
	    (nc == NULL || *nc == '\0');
}

void
ui_start(struct run *r)
{
	if (ui_mode == UI_PLAIN && ui_can_live(r) && ui_live_start(r) == 0)
		ui_mode = UI_LIVE;
}

void
ui_end(struct run *r)
{
	(void)r;
	if (ui_mode == UI_LIVE)
		ui_live_stop();
}

void
ui_node_free(struct node *n)
{
	free(n->ui.tool);
	free(n->ui.args);
	free(n->ui.last);
	memset(&n->ui, 0, sizeof(n->ui));
}

/* One escaped line of at most UI_TEXT_MAX input bytes. */
static char *
ui_clip(const char *text)
{
	size_t	len;
	char	*s;

	if (text == NULL)
		return str_escape_dup("", 0, 0);
	len = strlen(text);
	if (len > UI_TEXT_MAX)
		len = UI_TEXT_MAX;
	s = str_escape_dup(text, len, 0);
	return s;
}

/* The event's run and time, and the line out (has_run: it said its run). */
static void
ui_emit(int has_run)
{
	if (ui_run != NULL && ui_run->run_id > 0 && !has_run)
		ui_json_int("run", (long long)ui_run->run_id);
	ui_json_int("ms", (long long)(clock_mono_ms() - ui_t0));
	/* Buffered: ui_flush() writes what one pass of the event loop said. */
	ui_json_end(stdout);
}

void
ui_flush(void)
{
	fflush(stdout);
}

/* An event's first members: what it is and, for an agent's, who. */
static void
ui_obj(const char *event, const struct node *n)
{
	ui_json_begin(event);
	if (n == NULL)
		return;
	ui_json_str("path", n->path);
	ui_json_str("profile", n->profile->name);
	ui_json_int("depth", n->depth);
	ui_json_open("tokens");
	ui_json_int("in", (long long)n->usage.input);
	ui_json_int("out", (long long)n->usage.output);
	ui_json_close();
}

/* A result's head for --json (UI_JSON_TEXT_MAX bytes, UTF-8 kept whole). */
static void
ui_jclip(const char *key, const char *text)
{
	size_t	 len;

	if (text == NULL || (len = strlen(text)) <= UI_JSON_TEXT_MAX) {
		ui_json_str(key, text);
		return;
	}
	len = UI_JSON_TEXT_MAX;
	while (len > 0 && ((unsigned char)text[len] & 0xc0) == 0x80)
		len--;
	ui_json_strn(key, text, len);
}

static void
ui_line(const struct node *n, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

static void
ui_line(const struct node *n, const char *fmt, ...)
{
	char	line[1024];
	va_list	ap;

	va_start(ap, fmt);
	vsnprintf(line, sizeof(line), fmt, ap);
	va_end(ap);
	if (ui_color)
		fprintf(stderr, "\033[2m[%s %s]\033[0m %s\n", n->path,
		    n->profile->name, line);
	else
		fprintf(stderr, "[%s %s] %s\n", n->path, n->profile->name,
		    line);
}

/* "<pre><a><mid><b>", a and b escaped and clipped. */
static void
ui_line2(const struct node *n, const char *pre, const char *a,
    const char *mid, const char *b)
{
	char	*x = ui_clip(a), *y = ui_clip(b);

	ui_line(n, "%s%s%s%s", pre, x, mid, y);
	free(x);
	free(y);
}

void
ui_spawned(struct node *n, pid_t pid)
{
	char	*task;

	n->ui.hello = 1;
	if (ui_mode == UI_LIVE) {
		ui_live_dirty();
		return;
	}
	if (ui_mode == UI_JSON) {
		ui_obj("spawned", n);
		ui_json_int("pid", pid);
		ui_json_str("task", n->task);
		ui_emit(0);
		return;
	}
	task = ui_clip(n->task);
	ui_line(n, "spawned (pid %d, depth %u): %s", (int)pid, n->depth, task);
	free(task);
}

void
ui_queued(const struct node *n)
{
	if (ui_mode == UI_LIVE)
		ui_live_dirty();
	if (ui_mode != UI_JSON)
		return;
	ui_obj("queued", n);
	ui_json_str("parent", n->parent ? n->parent->path : "");
	ui_json_str("task", n->task);
	ui_emit(0);
}

/* Arguments as the JSON object they are; a string if they are not one. */
static void
ui_jargs(const char *args)
{
	json_t	*j;
	int	 rc = -1;

	if (args != NULL && (j = json_loads(args, JSON_REJECT_DUPLICATES,
	    NULL)) != NULL) {
		if (json_is_object(j))
			rc = ui_json_tree("args", j);
		json_decref(j);
	}
	if (rc == -1)
		ui_json_str("args", args);
}

/* The line log's edit: its path, then a few lines of its diff. */
static void
ui_line_edit(const struct node *n, const char *sum, const char *args)
{
	char	**v, *x;
	size_t	  more, i;

	ui_line2(n, "", "edit", ": ", sum);
	if ((v = ui_sum_diff(args, UI_DIFF_LINES, UI_TEXT_MAX, &more)) == NULL)
		return;
	for (i = 0; v[i] != NULL; i++) {
		x = ui_clip(v[i]);
		if (ui_color)
			fprintf(stderr, "    \033[%sm%s\033[0m\n",
			    v[i][0] == '-' ? "31" : "32", x);
		else
			fprintf(stderr, "    %s\n", x);
		free(x);
	}
	if (more > 0)
		fprintf(stderr, "    (%zu more line%s)\n", more,
		    more == 1 ? "" : "s");
	ui_sum_lines_free(v);
}

void
ui_tool(struct node *n, const char *tool, const char *args)
{
	char	 sum[512];

	ui_sum_args(tool, args, sum, sizeof(sum));
	free(n->ui.tool);
	free(n->ui.args);
	n->ui.tool = xstrdup(tool);
	n->ui.args = xstrdup(sum);
	n->ui.tool_ms = clock_mono_ms();
	if (ui_mode == UI_LIVE) {
		ui_live_dirty();
	} else if (ui_mode == UI_JSON) {
		ui_obj("tool_call", n);
		ui_json_str("tool", tool);
		ui_jargs(args);
		ui_emit(0);
	} else if (strcmp(tool, "complete") == 0 || strcmp(tool, "fail") == 0)
		return;		/* the done line says it, once */
	else if (strcmp(tool, "edit") == 0)
		ui_line_edit(n, sum, args);
	else
		ui_line2(n, "", tool, ": ", sum);
}

/* Which results get a line of their own in the line log. */
static int
ui_result_shown(const char *tool, int bad)
{
	if (strcmp(tool, "delegate") == 0 || strcmp(tool, "complete") == 0 ||
	    strcmp(tool, "fail") == 0)
		return 0;	/* the refusal's or the child's line says it */
	return bad || strcmp(tool, "bash") == 0 || strcmp(tool, "glob") == 0 ||
	    strcmp(tool, "grep") == 0;
}

/*
 * What the live view shows under an agent between its tool calls: the
 * last call with its main argument ("read src/main.c"), never the tail of
 * what it returned; a result that says something on its own (bash's exit
 * status, glob's and grep's counts, an error) instead of the argument
 * ("bash -> exit 2: error"), as the line log does. Raw: the live view
 * escapes it.
 */
static char *
ui_last_call(const char *tool, const char *args, const char *sum, int bad)
{
	char	*s;

	if (ui_result_shown(tool, bad) && *sum != '\0')
		xasprintf(&s, "%s -> %s", tool, sum);
	else
		xasprintf(&s, "%s %s", tool, args ? args : "");
	return s;
}

void
ui_tool_result(struct node *n, const char *tool, const char *text,
    int is_error)
{
	char	 sum[512];
	int	 bad;

	ui_sum_result(tool, text, is_error, &bad, sum, sizeof(sum));
	free(n->ui.tool);
	free(n->ui.last);
	n->ui.tool = NULL;
	n->ui.last = ui_last_call(tool, n->ui.args, sum, bad);
	n->ui.last_bad = bad;
	if (ui_mode == UI_LIVE) {
		ui_live_dirty();
	} else if (ui_mode == UI_JSON) {
		ui_obj("tool_result", n);
		ui_json_str("tool", tool);
		ui_json_bool("error", is_error);
		ui_json_int("bytes", text ? (long long)strlen(text) : 0);
		ui_jclip("text", text);
		ui_json_bool("failed", bad);
		ui_json_str("summary", sum);
		ui_emit(0);
	} else if (ui_result_shown(tool, bad))
		ui_line2(n, "", tool, bad ? " FAILED -> " : " -> ", sum);
}

void
ui_refused(struct node *parent, const char *profile, const char *msg)
{
	if (ui_mode == UI_LIVE) {
		free(parent->ui.last);
		xasprintf(&parent->ui.last, "delegate %s refused: %s",
		    profile ? profile : "general", msg);
		parent->ui.last_bad = 1;
		ui_live_dirty();
		return;
	}
	if (ui_mode == UI_JSON) {
		ui_obj("refused", parent);
		ui_json_str("want", profile);
		ui_json_str("message", msg);
		ui_emit(0);
		return;
	}
	ui_line2(parent, "delegate ", profile ? profile : "general",
	    " refused: ", msg);
}

/* "first line (+N lines)" of a subagent's result, escaped. */
static char *
ui_first_line(const char *text)
{
	size_t		 len = strcspn(text, "\n"), lines = 0;
	char		*cut, *head, *out;
	const char	*p;

	for (p = text + len; *p != '\0'; p++)
		if (*p == '\n' && p[1] != '\0')
			lines++;
	cut = str_ndup(text, len);
	head = ui_clip(cut);
	free(cut);
	if (lines == 0)
		return head;
	xasprintf(&out, "%s (+%zu line%s)", head, lines, lines == 1 ? "" : "s");
	free(head);
	return out;
}

static void
ui_done_json(const struct node *n, unsigned long ms)
{
	ui_obj("done", n);
	ui_json_str("end", run_end_name(n->end));
	ui_json_str("result", n->result);
	ui_json_str("error", run_end_ok(n->end) ? NULL : n->error);
	if (n->end == NODE_END_AUTO_COMPLETE)
		ui_json_str("reason", n->error);
	ui_json_int("iterations", n->iterations);
	ui_json_int("elapsed_ms", (long long)ms);
	ui_emit(0);
}

/*
 * The line log's done line: how it ended and how long it took, with the
 * first line of a subagent's result or of why it failed. The root's
 * result is not here: it is printed once, whole, at the end.
 */
void
ui_done(struct node *n)
{
	unsigned long	 ms = (unsigned long)(n->ended_ms - n->started_ms);
	const char	*text = run_end_ok(n->end) ? n->result : n->error;
	char		*x, how[64];

	free(n->ui.tool);
	n->ui.tool = NULL;
	if (ui_mode == UI_LIVE) {
		ui_live_dirty();
		return;
	}
	if (ui_mode == UI_JSON) {
		ui_done_json(n, ms);
		return;
	}
	snprintf(how, sizeof(how), "%s", n->end == NODE_END_COMPLETE ? "done" :
	    run_end_ok(n->end) ? "done (auto_complete)" : "FAILED");
	if (!run_end_ok(n->end) && n->end != NODE_END_FAIL)
		snprintf(how + 6, sizeof(how) - 6, " (%s)", run_end_name(n->end));
	if (text == NULL || (n->parent == NULL && run_end_ok(n->end))) {
		ui_line(n, "%s in %lu.%03lus", how, ms / 1000, ms % 1000);
		return;
	}
	x = ui_first_line(text);
	ui_line(n, "%s in %lu.%03lus: %s", how, ms / 1000, ms % 1000, x);
	free(x);
}

void
ui_note(const struct node *n, const char *what, const char *text)
{
	if (ui_mode == UI_LIVE)
		return;
	if (ui_mode == UI_JSON) {
		ui_obj("note", n);
		ui_json_str("kind", what);
		ui_json_str("text", text);
		ui_emit(0);
		return;
	}
	ui_line2(n, "", what, ": ", text);
}

/* The run's totals: agents and how they ended, tokens in and out. */
struct ui_totals {
	unsigned	agents, done, failed;
	uint64_t	in, out;
};

static void
ui_totals(const struct run *r, struct ui_totals *t)
{
	size_t	i;

	memset(t, 0, sizeof(*t));
	for (i = 0; r != NULL && i < r->nnodes; i++) {
		t->agents++;
		t->in += r->nodes[i]->usage.input;
		t->out += r->nodes[i]->usage.output;
		if (r->nodes[i]->state != NODE_DONE)
			continue;
		if (run_end_ok(r->nodes[i]->end))
			t->done++;
		else
			t->failed++;
	}
}

/* What the totals cost at the run's model's price (r->opts.priced). */
static double
ui_cost(const struct run *r, const struct ui_totals *t)
{
	struct msg_usage	u;

	u.input = t->in;
	u.output = t->out;
	return price_cost(&r->opts.price, &u);
}

/* "warren: run 35 done in 12.3 s (or 340 ms): 7 agents (6 done, 1 failed),
 * tokens 12345 in, 678 out" on stderr. */
static void
ui_summary(const struct run *r, int ok)
{
	struct ui_totals	t;
	uint64_t		ms = clock_mono_ms() - ui_t0;
	char			id[32] = "", took[32], cost[48] = "";

	ui_totals(r, &t);
	if (r->opts.priced) {	/* ", $0.0123": only where a price is given */
		memcpy(cost, ", ", 3);
		price_fmt(cost + 2, sizeof(cost) - 2, ui_cost(r, &t));
	}
	if (r->run_id > 0)
		snprintf(id, sizeof(id), " %lld", (long long)r->run_id);
	ui_sum_took(took, sizeof(took), ms);
	fprintf(stderr, "warren: run%s %s in %s: %u agent%s (%u "
	    "done, %u failed), tokens %llu in, %llu out%s\n", id, ok ? "done" :
	    "failed", took, t.agents,
	    t.agents == 1 ? "" : "s", t.done, t.failed,
	    (unsigned long long)t.in, (unsigned long long)t.out, cost);
}

static void
ui_result_json(const struct run *r, const char *text, int ok, int code)
{
	struct ui_totals	 t;

	ui_obj("result", NULL);
	ui_json_bool("ok", ok);
	ui_json_int("exit", code);
	ui_json_str("result", text);
	if (r != NULL) {
		ui_totals(r, &t);
		ui_json_open("agents");
		ui_json_int("all", (int)t.agents);
		ui_json_int("done", (int)t.done);
		ui_json_int("failed", (int)t.failed);
		ui_json_close();
		ui_json_open("tokens");
		ui_json_int("in", (long long)t.in);
		ui_json_int("out", (long long)t.out);
		ui_json_close();
		if (r->opts.priced)	/* only where a price is given */
			ui_json_usd("cost_usd", ui_cost(r, &t));
	}
	ui_emit(0);
	ui_flush();
}

void
ui_result(const struct run *r, const char *text, int ok, int code)
{
	char	*esc;

	if (ui_mode == UI_JSON) {
		ui_result_json(r, text, ok, code);
		return;
	}
	if (r != NULL && r->nnodes > 0)
		ui_summary(r, ok);
	if (text == NULL)
		return;
	/* The answer itself, once: escaped for a terminal, lines kept. */
	esc = str_escape_dup(text, strlen(text), STR_ESC_KEEP_NL);
	if (ok) {
		fflush(stderr);
		fprintf(stdout, "%s\n", esc ? esc : "");
		fflush(stdout);
	} else
		fprintf(stderr, "warren: run failed: %s\n", esc ? esc : "");
	free(esc);
}

void
ui_host_files(json_t *report)
{
	json_t	*o;

	if (ui_mode == UI_JSON) {
		/* As one object, so that the report's own members keep
		   jansson's rules (a later one of the same key replaces). */
		o = json_object();
		json_object_set_new(o, "event", json_string("host_files"));
		json_object_update(o, report);
		if (ui_json_object(o) == 0)
			ui_emit(json_object_get(o, "run") != NULL);
		json_decref(o);
		return;
	}
	(void)hostexec_print(stderr, "warren: ", report, UI_HOST_FILES_MAX);
}

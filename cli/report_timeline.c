/*
 * The report's timeline: a row per agent, from when it was recorded
 * (queued, pale) through its life, with a bar for each LLM turn (the
 * broker's "llm" events: when asked, how long) and each tool call (a
 * tool_call event paired with the next tool_result or tool_error of the
 * same tool). Rows share one time axis, so agents that ran at once are
 * visibly side by side. The names are a column of their own; the time
 * axis is as wide as the page: its x coordinates are percentages of it.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "cli/report.h"
#include "common/xmalloc.h"

/* An open tool call of an agent, waiting for its result. */
struct report_open {
	char	*name;
	char	*args;
	int64_t	 start_ms;
};

struct report_acc {
	struct report_bar	*v;
	size_t			 n, cap;
	struct report_open	*open;
	size_t			 nopen;
};

static void
report_bar_add(struct report_acc *acc, int64_t start, int64_t end, int kind,
    char *title)
{
	if (acc->n == acc->cap) {
		acc->cap = acc->cap == 0 ? 16 : acc->cap * 2;
		acc->v = xreallocarray(acc->v, acc->cap, sizeof(*acc->v));
	}
	acc->v[acc->n].start_ms = start;
	acc->v[acc->n].end_ms = end < start ? start : end;
	acc->v[acc->n].kind = kind;
	acc->v[acc->n++].title = title;
}

/* "read: {...}" into the tool's name and the rest, both malloc'd. */
static void
report_split(const char *detail, char **name, char **rest)
{
	const char	*d = detail != NULL ? detail : "";
	const char	*sep = strstr(d, ": ");

	if (sep != NULL)
		xasprintf(name, "%.*s", (int)(sep - d), d);
	else
		*name = xstrdup(d);
	*rest = xstrdup(sep != NULL ? sep + 2 : "");
}

static void
report_llm(struct report_acc *acc, const struct store_event *ev)
{
	json_t		*j;
	json_int_t	 start, ms, in = 0, out = 0;
	int		 step = 0, ok = 1;
	char		*title;

	j = json_loads(ev->detail != NULL ? ev->detail : "", 0, NULL);
	if (j == NULL || json_unpack(j, "{s:I, s:I, s?i, s?I, s?I, s?b}",
	    "start_ms", &start, "ms", &ms, "step", &step, "in", &in,
	    "out", &out, "ok", &ok) == -1 || ms < 0) {
		json_decref(j);
		return;		/* not ours, or damaged: no bar */
	}
	json_decref(j);
	xasprintf(&title, "LLM turn %d: %lld ms, %lld tokens in, %lld out%s",
	    step, (long long)ms, (long long)in, (long long)out,
	    ok ? "" : " (failed)");
	report_bar_add(acc, start, start + ms, REPORT_BAR_LLM, title);
}

static void
report_tool_call(struct report_acc *acc, const struct store_event *ev)
{
	struct report_open	*o;

	acc->open = xreallocarray(acc->open, acc->nopen + 1,
	    sizeof(*acc->open));
	o = &acc->open[acc->nopen++];
	report_split(ev->detail, &o->name, &o->args);
	o->start_ms = ev->time_ms;
}

/* A result ends the oldest open call of the same tool. */
static void
report_tool_end(struct report_acc *acc, const struct store_event *ev,
    int is_err)
{
	char	*name, *rest, *title;
	size_t	 i;

	report_split(ev->detail, &name, &rest);
	for (i = 0; i < acc->nopen; i++)
		if (strcmp(acc->open[i].name, name) == 0)
			break;
	if (i < acc->nopen) {
		struct report_open o = acc->open[i];

		xasprintf(&title, "%s %.200s: %lld ms%s%.200s", o.name,
		    o.args, (long long)(ev->time_ms - o.start_ms),
		    is_err ? ", error: " : " \xe2\x86\x92 ", rest);
		report_bar_add(acc, o.start_ms, ev->time_ms, is_err ?
		    REPORT_BAR_TOOL_ERR : REPORT_BAR_TOOL, title);
		free(o.name);
		free(o.args);
		memmove(&acc->open[i], &acc->open[i + 1],
		    (acc->nopen - i - 1) * sizeof(*acc->open));
		acc->nopen--;
	}
	free(name);
	free(rest);
}

static struct report_bar *
report_bars(const struct report *r, const struct store_agent *a, size_t *n)
{
	struct report_acc	 acc;
	const struct store_event *ev;
	size_t			 i;
	char			*title;

	memset(&acc, 0, sizeof(acc));
	for (i = 0; i < r->nevents; i++) {
		ev = &r->events[i];
		if (ev->path == NULL || strcmp(ev->path, a->path) != 0)
			continue;
		if (strcmp(ev->type, "llm") == 0)
			report_llm(&acc, ev);
		else if (strcmp(ev->type, "tool_call") == 0)
			report_tool_call(&acc, ev);
		else if (strcmp(ev->type, "tool_result") == 0 ||
		    strcmp(ev->type, "tool_error") == 0)
			report_tool_end(&acc, ev, ev->type[5] == 'e');
	}
	/* Calls never answered (delegations of the root, a killed agent)
	 * last until the agent ended. */
	for (i = 0; i < acc.nopen; i++) {
		xasprintf(&title, "%s %.200s (no result recorded)",
		    acc.open[i].name, acc.open[i].args);
		report_bar_add(&acc, acc.open[i].start_ms, a->ended_ms > 0 ?
		    a->ended_ms : r->t1, REPORT_BAR_TOOL, title);
		free(acc.open[i].name);
		free(acc.open[i].args);
	}
	free(acc.open);
	*n = acc.n;
	return acc.v;
}

static void
report_bars_free(struct report_bar *v, size_t n)
{
	size_t	i;

	for (i = 0; i < n; i++)
		free(v[i].title);
	free(v);
}

/* The time axis from REPORT_TL_PAD% to 100 - REPORT_TL_PAD%: the last
 * tick's label stays on the page. */
#define REPORT_TL_PAD	3.0

/* Where t is on the axis, in percent of its width. */
static double
report_x(const struct report *r, int64_t t)
{
	if (t < r->t0)
		t = r->t0;
	if (t > r->t1)
		t = r->t1;
	return REPORT_TL_PAD + (double)(t - r->t0) * (100 - 2 * REPORT_TL_PAD) /
	    (double)(r->t1 - r->t0);
}

/* A width in percent; a bar too short to see gets 0.15%. */
static double
report_w(double x0, double x1)
{
	return x1 - x0 < 0.15 ? 0.15 : x1 - x0;
}

/* Ticks every 1, 2 or 5 times a power of ten ms: at most ten. */
static void
report_axis(const struct report *r, int height)
{
	int64_t	span = r->t1 - r->t0, step = 1, t;
	int	m = 0;
	static const int mult[] = { 1, 2, 5 };

	while (span / (step * mult[m]) > 10) {
		if (++m == 3) {
			m = 0;
			step *= 10;
		}
	}
	step *= mult[m];
	for (t = 0; t <= span; t += step)
		fprintf(r->f, "<line class=\"tick\" x1=\"%.2f%%\" x2=\"%.2f%%\" "
		    "y1=\"16\" y2=\"%d\"/><text class=\"tick\" x=\"%.2f%%\" "
		    "y=\"12\">%.*f s</text>\n", report_x(r, r->t0 + t),
		    report_x(r, r->t0 + t), height, report_x(r, r->t0 + t),
		    step < 1000 ? (step < 100 ? 2 : 1) : 0, (double)t / 1000);
}

static void
report_bar_svg(const struct report *r, const struct report_bar *b, int y)
{
	static const char *cls[] = { "llm", "tool", "toolerr" };
	double	x0 = report_x(r, b->start_ms), x1 = report_x(r, b->end_ms);

	fprintf(r->f, "<rect class=\"%s\" x=\"%.2f%%\" y=\"%d\" "
	    "width=\"%.2f%%\" height=\"8\"><title>", cls[b->kind], x0,
	    y + (b->kind == REPORT_BAR_LLM ? 3 : 13), report_w(x0, x1));
	report_esc(r->f, b->title, 0);
	fprintf(r->f, "</title></rect>\n");
}

/* The agent's name in the names' column, a link to its transcript. */
static void
report_name(struct report *r, const struct store_agent *a, int y)
{
	fprintf(r->f, "<a href=\"#agent-");
	report_esc(r->f, a->path, 64);
	fprintf(r->f, "\"><text class=\"name\" x=\"%d\" y=\"%d\">",
	    4 + 10 * (a->depth > 8 ? 8 : a->depth), y + 16);
	report_esc(r->f, a->path, 64);
	fprintf(r->f, " ");
	report_esc(r->f, a->profile != NULL ? a->profile : "-", 24);
	fprintf(r->f, "</text></a>\n");
}

static void
report_row(struct report *r, const struct store_agent *a, int y)
{
	struct report_bar	*bars;
	size_t			 i, n;
	int64_t			 end = a->ended_ms > 0 ? a->ended_ms : r->t1;
	int64_t			 start = a->started_ms > 0 ? a->started_ms :
				    end;

	fprintf(r->f, "<rect class=\"queued\" x=\"%.2f%%\" y=\"%d\" "
	    "width=\"%.2f%%\" height=\"22\"/>\n", report_x(r, a->created_ms),
	    y + 1, report_x(r, start) - report_x(r, a->created_ms));
	fprintf(r->f, "<rect class=\"life %s\" x=\"%.2f%%\" y=\"%d\" "
	    "width=\"%.2f%%\" height=\"22\"/>\n",
	    store_agent_status_name(a->status), report_x(r, start), y + 1,
	    report_x(r, end) - report_x(r, start));
	bars = report_bars(r, a, &n);
	for (i = 0; i < n; i++)
		report_bar_svg(r, &bars[i], y);
	report_bars_free(bars, n);
}

int
report_timeline(struct report *r)
{
	size_t	i;
	int	height = 20 + (int)r->nagents * REPORT_TL_ROW;

	fprintf(r->f, "<section id=\"timeline\"><h2>Timeline</h2>\n"
	    "<p class=\"legend\"><span class=\"k llm\"></span> waiting for the "
	    "LLM <span class=\"k tool\"></span> tool call "
	    "<span class=\"k toolerr\"></span> tool error "
	    "<span class=\"k queued\"></span> queued</p>\n<div class=\"tl\">"
	    "<svg class=\"names\" xmlns=\"http://www.w3.org/2000/svg\" "
	    "width=\"%d\" height=\"%d\">\n", REPORT_TL_LABEL, height + 4);
	for (i = 0; i < r->nagents; i++)
		report_name(r, &r->agents[i], 20 + (int)i * REPORT_TL_ROW);
	fprintf(r->f, "</svg><svg class=\"timeline\" "
	    "xmlns=\"http://www.w3.org/2000/svg\" width=\"100%%\" "
	    "height=\"%d\">\n", height + 4);
	report_axis(r, height);
	for (i = 0; i < r->nagents; i++)
		report_row(r, &r->agents[i], 20 + (int)i * REPORT_TL_ROW);
	fprintf(r->f, "</svg></div></section>\n");
	return ferror(r->f) ? -1 : 0;
}

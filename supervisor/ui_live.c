/*
 * The live view: on a terminal, the agent tree redrawn in place at most
 * 10 times a second (a 100 ms tick of the event loop), each agent on one
 * line (its path, profile, elapsed time, tokens and what it does now),
 * under a running agent the tool call it makes now, with its main
 * argument ("read src/main.c"), or between calls the last one and how it
 * ended; finished subtrees folded to one line, and a footer with the
 * run's totals. When the tree does not fit, finished siblings are folded
 * to one line ("✓ 32 done"), then queued ones, so running agents get the
 * rows first.
 *
 * Every line is cut to the terminal's width minus one column, with an
 * ellipsis, so the terminal never wraps one; every text that came from a
 * model, a tool or a file is escaped (common/str.h) before it is measured.
 * The frame is written to a descriptor of its own on the terminal (the
 * tty opened again, O_NONBLOCK): a terminal that does not take it (a
 * stopped output, a slow link) costs the loop nothing; the frame waits
 * and the next one is drawn once it is gone. Log records go above the
 * frame through the log hook.
 */
#include <sys/ioctl.h>

#include <errno.h>
#include <fcntl.h>
#include <locale.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>
#include <wchar.h>

#include "agent/profile.h"
#include "common/buf.h"
#include "common/clock.h"
#include "common/log.h"
#include "common/str.h"
#include "common/xmalloc.h"
#include "llm/llm.h"
#include "supervisor/loop.h"
#include "supervisor/run.h"

#define UI_LIVE_TICK_MS		100	/* 10 frames a second at most */
#define UI_LIVE_IDLE_MS		250	/* the spinner and clocks, unchanged */
#define UI_LIVE_OUT_MAX		(256u * 1024)	/* log bytes held for a
						   terminal that takes none */
#define UI_LIVE_LINE		1024	/* bytes of one line, escaped */

enum ui_live_style { UI_PLAIN_STYLE = 0, UI_DIM, UI_RED, UI_GREEN };

struct ui_live {
	struct run	*run;
	int		 fd;		/* the terminal, O_NONBLOCK */
	int		 on;
	unsigned	 cols, rows;
	unsigned	 shown;		/* lines of the frame on the screen */
	unsigned	*widths;	/* their columns, for a resize */
	size_t		 nwidths;
	struct buf	 out;		/* written when the terminal takes it */
	uint64_t	 timer, drawn, t0;
	unsigned	 spin;
	int		 dirty, utf8, color, final;
	unsigned long	 dropped;	/* log records the terminal did not take */
	locale_t	 loc;		/* for wcwidth; (locale_t)0: none */
	struct sigaction oldwinch;
	void		(*oldhook)(enum log_level, const char *, void *);
};

static struct ui_live		ui_L = { .fd = -1 };
static volatile sig_atomic_t	ui_live_winch;

static void
ui_live_on_winch(int sig)
{
	(void)sig;
	ui_live_winch = 1;
}

int
ui_live_on(void)
{
	return ui_L.on;
}

void
ui_live_dirty(void)
{
	ui_L.dirty = 1;
}

/* The terminal's size; 80x24 when it says nothing (a size of 0). */
static void
ui_live_size(void)
{
	struct winsize	ws;

	ui_L.cols = 80;
	ui_L.rows = 24;
	if (ioctl(ui_L.fd, TIOCGWINSZ, &ws) == 0) {
		if (ws.ws_col > 0)
			ui_L.cols = ws.ws_col;
		if (ws.ws_row > 0)
			ui_L.rows = ws.ws_row;
	}
	if (ui_L.cols < 20)
		ui_L.cols = 20;
	if (ui_L.rows < 4)
		ui_L.rows = 4;
}

static int
ui_live_env_utf8(void)
{
	static const char *const vars[] = { "LC_ALL", "LC_CTYPE", "LANG" };
	const char	*v;
	size_t		 i;

	for (i = 0; i < sizeof(vars) / sizeof(vars[0]); i++)
		if ((v = getenv(vars[i])) != NULL && *v != '\0')
			return strcasestr(v, "utf-8") != NULL ||
			    strcasestr(v, "utf8") != NULL;
	return 0;
}

/* Columns of the code point at s (len bytes); 2 when we cannot tell, so
 * a line is cut too early rather than wrapped. */
static unsigned
ui_live_cp_width(const unsigned char *s, size_t len)
{
	wchar_t		wc;
	mbstate_t	st;
	locale_t	old;
	int		w;

	if (s[0] < 0x80)
		return 1;
	if (!ui_L.utf8)
		return (unsigned)len;	/* a byte a cell, at most */
	if (ui_L.loc == (locale_t)0)
		return 2;
	old = uselocale(ui_L.loc);
	memset(&st, 0, sizeof(st));
	w = mbrtowc(&wc, (const char *)s, len, &st) == len ? wcwidth(wc) : 2;
	uselocale(old);
	return w < 0 ? 2 : (unsigned)w;
}

/* Bytes of s that fit in max columns; *cols gets their width. */
static size_t
ui_live_fit(const char *s, unsigned max, unsigned *cols)
{
	const unsigned char	*p = (const unsigned char *)s;
	size_t			 i = 0, n;
	unsigned		 w = 0, cw;

	while (p[i] != '\0') {
		n = 1;
		if (p[i] >= 0xc0)
			while (p[i + n] != '\0' && (p[i + n] & 0xc0) == 0x80)
				n++;
		cw = ui_live_cp_width(p + i, n);
		if (w + cw > max)
			break;
		w += cw;
		i += n;
	}
	*cols = w;
	return i;
}

static const char *const ui_live_sgr[] = {
	[UI_PLAIN_STYLE] = "", [UI_DIM] = "\033[2m", [UI_RED] = "\033[31m",
	[UI_GREEN] = "\033[32m",
};

/* One line of the frame: cut to cols - 1 columns (an ellipsis where it
 * was cut), the rest of the terminal line erased. Its width is kept. */
static void
ui_live_put(const char *line, enum ui_live_style style)
{
	unsigned	max = ui_L.cols - 1, w;
	size_t		n = ui_live_fit(line, max, &w);
	const char	*ell = ui_L.utf8 ? "\xe2\x80\xa6" : "...";

	if (line[n] != '\0') {
		n = ui_live_fit(line, max - (ui_L.utf8 ? 1 : 3), &w);
		w += ui_L.utf8 ? 1 : 3;
	}
	if (ui_L.shown < ui_L.nwidths)
		ui_L.widths[ui_L.shown++] = w;
	if (ui_L.color && style != UI_PLAIN_STYLE)
		buf_addstr(&ui_L.out, ui_live_sgr[style]);
	buf_add(&ui_L.out, line, n);
	if (line[n] != '\0')
		buf_addstr(&ui_L.out, ell);
	if (ui_L.color && style != UI_PLAIN_STYLE)
		buf_addstr(&ui_L.out, "\033[0m");
	buf_addstr(&ui_L.out, "\033[K\r\n");
}

/*
 * Back to the frame's first line, and everything below it erased. After
 * a resize to fewer columns a terminal that reflows its lines (tmux, VTE,
 * kitty ...) has wrapped the longer ones: each takes ceil(width / cols)
 * rows now. (One that does not reflow, like xterm, loses as many lines
 * above the frame.)
 */
static void
ui_live_erase(void)
{
	unsigned	up = 0, i, w;

	for (i = 0; i < ui_L.shown; i++) {
		w = ui_L.widths[i];
		up += w <= ui_L.cols ? 1 : (w + ui_L.cols - 1) / ui_L.cols;
	}
	buf_addstr(&ui_L.out, "\r");
	if (up > 0)
		buf_addf(&ui_L.out, "\033[%uA", up);
	buf_addstr(&ui_L.out, "\033[J");
	ui_L.shown = 0;
}

/* Write what the terminal takes now; a dead terminal ends the view. */
static void
ui_live_write(void)
{
	ssize_t	n;

	while (buf_left(&ui_L.out) > 0) {
		n = write(ui_L.fd, buf_head(&ui_L.out), buf_left(&ui_L.out));
		if (n > 0) {
			buf_consume(&ui_L.out, (size_t)n);
			continue;
		}
		if (n == -1 && errno == EINTR)
			continue;
		if (n == -1 && errno == EAGAIN)
			return;
		ui_L.on = 0;	/* EIO: the terminal is gone */
		buf_reset(&ui_L.out);
		return;
	}
	buf_reset(&ui_L.out);
}

/* A log record: above the frame, which the next tick draws again. */
static void
ui_live_log(enum log_level level, const char *line, void *arg)
{
	(void)arg;
	if (buf_left(&ui_L.out) > UI_LIVE_OUT_MAX) {
		ui_L.dropped++;
		return;
	}
	ui_live_erase();
	buf_addf(&ui_L.out, "warren: %s\r\n", line);
	ui_L.dirty = 1;
	ui_live_write();
	if (level == LOG_LEVEL_ERROR && ui_L.on) {
		/* fatal() exits next: the record must be out. */
		(void)fcntl(ui_L.fd, F_SETFL, 0);
		ui_live_write();
	}
}

/* "12.3k" for token counts. */
static void
ui_live_num(char *buf, size_t sz, uint64_t n)
{
	if (n < 10000)
		snprintf(buf, sz, "%llu", (unsigned long long)n);
	else if (n < 1000000)
		snprintf(buf, sz, "%.1fk", (double)n / 1000);
	else
		snprintf(buf, sz, "%.1fM", (double)n / 1000000);
}

static void
ui_live_time(char *buf, size_t sz, uint64_t ms)
{
	if (ms < 1000)
		snprintf(buf, sz, "%llums", (unsigned long long)ms);
	else if (ms < 60000)
		snprintf(buf, sz, "%.1fs", (double)ms / 1000);
	else
		snprintf(buf, sz, "%llum%02llus",
		    (unsigned long long)(ms / 60000),
		    (unsigned long long)(ms / 1000 % 60));
}

/* Escaped text appended to line (at most UI_LIVE_LINE bytes in all). */
static void
ui_live_cat(char *line, const char *raw)
{
	size_t	len = strlen(line);

	if (raw == NULL || len + 1 >= UI_LIVE_LINE)
		return;
	str_escape(line + len, UI_LIVE_LINE - len, raw,
	    strnlen(raw, UI_LIVE_LINE));
}

/* Agents under n (not n) that have not ended. */
static unsigned
ui_live_busy_kids(const struct node *n)
{
	const struct node	*k;
	unsigned		 c = 0;

	for (k = n->kids; k != NULL; k = k->next_kid)
		if (k->state != NODE_DONE)
			c++;
	return c;
}

/* Agents under n, all depths. */
static unsigned
ui_live_count(const struct node *n)
{
	const struct node	*k;
	unsigned		 c = 0;

	for (k = n->kids; k != NULL; k = k->next_kid)
		c += 1 + ui_live_count(k);
	return c;
}

/* What a running agent does now, raw but for our own words. With
 * details the call itself is on the line under it (ui_live_call). */
static void
ui_live_doing(const struct node *n, char *line, int details)
{
	unsigned	 kids = ui_live_busy_kids(n);
	char		 tmp[64];

	if (n->summarizing)
		strlcat(line, "summarizing its result", UI_LIVE_LINE);
	else if (n->parent != NULL && !n->ui.hello)
		strlcat(line, "starting", UI_LIVE_LINE);
	else if (n->ui.tool != NULL && strcmp(n->ui.tool, "delegate") != 0 &&
	    details) {
		strlcat(line, "running ", UI_LIVE_LINE);
		ui_live_cat(line, n->ui.tool);
	} else if (n->ui.tool != NULL && strcmp(n->ui.tool, "delegate") != 0) {
		ui_live_cat(line, n->ui.tool);
		strlcat(line, " ", UI_LIVE_LINE);
		ui_live_cat(line, n->ui.args);
	} else if (n->ui.llm > 0) {
		switch (llm_engine_wait(n->run->llm, n->ui.llm_id)) {
		case LLM_WAIT_SLOT:
			strlcat(line, "waiting for an LLM slot", UI_LIVE_LINE);
			break;
		case LLM_WAIT_RETRY:
			strlcat(line, "waiting to retry the LLM", UI_LIVE_LINE);
			break;
		case LLM_WAIT_NONE:
		case LLM_WAIT_ANSWER:
		default:
			strlcat(line, "waiting for the LLM", UI_LIVE_LINE);
			break;
		}
	} else if (kids > 0) {
		snprintf(tmp, sizeof(tmp), "waiting for %u subagent%s", kids,
		    kids == 1 ? "" : "s");
		strlcat(line, tmp, UI_LIVE_LINE);
	} else
		strlcat(line, "working", UI_LIVE_LINE);
}

/* The first line of a finished agent's result or error. */
static void
ui_live_ended(const struct node *n, char *line)
{
	const char	*text = run_end_ok(n->end) ? n->result : n->error;
	char		 tmp[64], first[UI_LIVE_LINE];
	unsigned	 under = ui_live_count(n);

	if (n->end == NODE_END_FAIL)
		strlcat(line, "failed", UI_LIVE_LINE);
	else if (!run_end_ok(n->end)) {
		snprintf(tmp, sizeof(tmp), "failed (%s)", run_end_name(n->end));
		strlcat(line, tmp, UI_LIVE_LINE);
	} else
		strlcat(line, "done", UI_LIVE_LINE);
	if (under > 0) {
		snprintf(tmp, sizeof(tmp), " [+%u agent%s]", under,
		    under == 1 ? "" : "s");
		strlcat(line, tmp, UI_LIVE_LINE);
	}
	if (text != NULL && *text != '\0' && n->parent != NULL) {
		strlcat(line, ": ", UI_LIVE_LINE);
		snprintf(first, sizeof(first), "%.*s", (int)strcspn(text, "\n"),
		    text);
		ui_live_cat(line, first);
	}
}

static const char *const ui_live_spin_utf8[] = {
	"\xe2\xa0\x8b", "\xe2\xa0\x99", "\xe2\xa0\xb9", "\xe2\xa0\xb8",
	"\xe2\xa0\xbc", "\xe2\xa0\xb4", "\xe2\xa0\xa6", "\xe2\xa0\xa7",
	"\xe2\xa0\x87", "\xe2\xa0\x8f",
};
static const char *const ui_live_spin_ascii[] = { "|", "/", "-", "\\" };

static const char *
ui_live_glyph(const struct node *n)
{
	if (n->state == NODE_QUEUED)
		return ui_L.utf8 ? "\xc2\xb7" : ".";
	if (n->state == NODE_DONE && run_end_ok(n->end))
		return ui_L.utf8 ? "\xe2\x9c\x93" : "+";
	if (n->state == NODE_DONE)
		return ui_L.utf8 ? "\xe2\x9c\x97" : "x";
	return ui_L.utf8 ? ui_live_spin_utf8[ui_L.spin % 10] :
	    ui_live_spin_ascii[ui_L.spin % 4];
}

/* "  ⠋ 0.1 explore  2.1s  1.2k tok  running bash" */
static enum ui_live_style
ui_live_node_line(const struct node *n, unsigned depth, uint64_t now,
    char *line, int details)
{
	char		 t[32], tok[32];
	uint64_t	 end = n->state == NODE_DONE ? n->ended_ms : now;

	snprintf(line, UI_LIVE_LINE, "%*s%s %s ", (int)(depth * 2), "",
	    ui_live_glyph(n), n->path);
	ui_live_cat(line, n->profile->name);
	/* A resumed root waits for its subagents, not for a slot. */
	if (n->state == NODE_QUEUED && n->parent != NULL) {
		strlcat(line, "  queued, waiting for a job slot", UI_LIVE_LINE);
		return UI_DIM;
	}
	ui_live_time(t, sizeof(t), n->started_ms && end > n->started_ms ?
	    end - n->started_ms : 0);
	ui_live_num(tok, sizeof(tok), n->usage.input + n->usage.output);
	snprintf(line + strlen(line), UI_LIVE_LINE - strlen(line),
	    "  %s  %s tok  ", t, tok);
	if (n->state == NODE_DONE) {
		ui_live_ended(n, line);
		return run_end_ok(n->end) ? UI_GREEN : UI_RED;
	}
	ui_live_doing(n, line, details);
	return UI_PLAIN_STYLE;
}

/* The frame's lines, kept until they are written. */
struct ui_live_frame {
	char			(*v)[UI_LIVE_LINE];
	enum ui_live_style	*style;
	size_t			 n, max;
	unsigned		 hidden, hidden_busy;
};

static char *
ui_live_add(struct ui_live_frame *f, enum ui_live_style style)
{
	if (f->n == f->max)
		return NULL;
	f->style[f->n] = style;
	f->v[f->n][0] = '\0';
	return f->v[f->n++];
}

/* The line under a running agent: the tool call it makes now, or the
 * last one and how it ended (ui.c keeps it, raw). */
static void
ui_live_call(struct ui_live_frame *f, const struct node *n, unsigned depth)
{
	int	 now = n->ui.tool != NULL && strcmp(n->ui.tool, "delegate") != 0;
	int	 bad = !now && n->ui.last_bad;
	char	*line;

	if (!now && n->ui.last == NULL)
		return;
	if ((line = ui_live_add(f, now ? UI_PLAIN_STYLE : bad ? UI_RED :
	    UI_DIM)) == NULL)
		return;
	snprintf(line, UI_LIVE_LINE, "%*s  %s ", (int)(depth * 2), "",
	    bad ? (ui_L.utf8 ? "\xe2\x9c\x97" : "x") :
	    (ui_L.utf8 ? "\xe2\x94\x94" : "`"));
	if (now) {
		ui_live_cat(line, n->ui.tool);
		strlcat(line, " ", UI_LIVE_LINE);
		ui_live_cat(line, n->ui.args);
	} else
		ui_live_cat(line, n->ui.last);
}

/* What a layout pass folds: nothing, finished siblings, queued ones too. */
enum ui_live_fold { UI_FOLD_NONE = 0, UI_FOLD_DONE, UI_FOLD_QUEUED };

/* The kinds of siblings a fold line stands for, in the order shown. */
enum ui_live_kind { UI_KIND_OK = 0, UI_KIND_FAILED, UI_KIND_QUEUED,
	UI_KIND_RUNNING };

static enum ui_live_kind
ui_live_kind(const struct node *n)
{
	if (n->state == NODE_DONE)
		return run_end_ok(n->end) ? UI_KIND_OK : UI_KIND_FAILED;
	return n->state == NODE_QUEUED ? UI_KIND_QUEUED : UI_KIND_RUNNING;
}

static int
ui_live_folded(const struct node *n, enum ui_live_fold fold)
{
	enum ui_live_kind	k = ui_live_kind(n);

	return (fold >= UI_FOLD_DONE && (k == UI_KIND_OK ||
	    k == UI_KIND_FAILED)) || (fold >= UI_FOLD_QUEUED &&
	    k == UI_KIND_QUEUED);
}

/* "✓ 32 done", "✗ 2 failed", "· 5 queued": the folded children of n. */
static void
ui_live_fold_lines(struct ui_live_frame *f, const struct node *n,
    unsigned depth, enum ui_live_fold fold)
{
	static const char *const what[] = { "done", "failed", "queued" };
	static const char *const g8[] = { "\xe2\x9c\x93", "\xe2\x9c\x97",
	    "\xc2\xb7" };
	static const char *const g7[] = { "+", "x", "." };
	static const enum ui_live_style st[] = { UI_GREEN, UI_RED, UI_DIM };
	const struct node	*k;
	unsigned		 c[UI_KIND_RUNNING] = { 0 }, i;
	char			*line;

	for (k = n->kids; k != NULL; k = k->next_kid)
		if (ui_live_folded(k, fold))
			c[ui_live_kind(k)]++;
	for (i = 0; i < UI_KIND_RUNNING; i++) {
		if (c[i] == 0)
			continue;
		if ((line = ui_live_add(f, st[i])) == NULL) {
			f->hidden += c[i];
			f->hidden_busy += i == UI_KIND_QUEUED ? c[i] : 0;
			continue;
		}
		snprintf(line, UI_LIVE_LINE, "%*s%s %u %s", (int)((depth + 1) *
		    2), "", ui_L.utf8 ? g8[i] : g7[i], c[i], what[i]);
	}
}

/* n and (unless it ended, or does not fit) its subtree, depth first;
 * folded siblings after the others, on a line of their own. */
static void
ui_live_tree(struct ui_live_frame *f, const struct node *n, unsigned depth,
    uint64_t now, int details, enum ui_live_fold fold)
{
	const struct node	*k;
	char			*line, tmp[UI_LIVE_LINE];
	enum ui_live_style	 st;

	st = ui_live_node_line(n, depth, now, tmp, details);
	if ((line = ui_live_add(f, st)) == NULL) {
		f->hidden++;
		f->hidden_busy += n->state != NODE_DONE;
	} else
		memcpy(line, tmp, sizeof(tmp));
	if (line != NULL && details && n->state == NODE_RUNNING)
		ui_live_call(f, n, depth);
	/* A finished subtree is folded into its line (the root's children
	 * stay in the last frame: they are the run's summary). */
	if (n->state == NODE_DONE && !(ui_L.final && n->parent == NULL))
		return;
	for (k = n->kids; k != NULL; k = k->next_kid)
		if (!ui_live_folded(k, fold))
			ui_live_tree(f, k, depth + 1, now, details, fold);
	if (fold != UI_FOLD_NONE)
		ui_live_fold_lines(f, n, depth, fold);
}

/* The totals: one line if it fits, else two. Returns the lines used. */
static size_t
ui_live_footer(char (*v)[UI_LIVE_LINE], uint64_t now)
{
	struct run	*r = ui_L.run;
	unsigned	 run = 0, queued = 0, done = 0, failed = 0, w;
	uint64_t	 in = 0, out = 0;
	size_t		 i, active, pending;
	char		 a[32], b[32], t[32];

	for (i = 0; i < r->nnodes; i++) {
		const struct node *n = r->nodes[i];

		in += n->usage.input;
		out += n->usage.output;
		if (n->state == NODE_QUEUED)
			queued++;
		else if (n->state == NODE_RUNNING)
			run++;
		else if (run_end_ok(n->end))
			done++;
		else
			failed++;
	}
	active = llm_engine_active(r->llm);
	pending = llm_engine_pending(r->llm);
	ui_live_num(a, sizeof(a), in);
	ui_live_num(b, sizeof(b), out);
	ui_live_time(t, sizeof(t), now - ui_L.t0);
	snprintf(v[0], UI_LIVE_LINE, "agents: %u running, %u queued, %u done, "
	    "%u failed", run, queued, done, failed);
	snprintf(v[1], UI_LIVE_LINE, "tokens %s in / %s out  LLM %zu in "
	    "flight, %zu waiting  %s", a, b, active, pending > active ?
	    pending - active : 0, t);
	(void)ui_live_fit(v[0], UI_LIVE_LINE, &w);
	if (w + 3 + strlen(v[1]) <= ui_L.cols - 1) {
		strlcat(v[0], "  |  ", UI_LIVE_LINE);
		strlcat(v[0], v[1], UI_LIVE_LINE);
		return 1;
	}
	return 2;
}

/*
 * The tree in the lines it may take: whole, with the line under each
 * running agent, if it fits; else with finished siblings folded; else
 * without the lines under; else queued siblings folded too; else cut,
 * with a line saying how many are not shown.
 */
static void
ui_live_layout(struct ui_live_frame *f, size_t avail, uint64_t now)
{
	static const struct {
		int			details;
		enum ui_live_fold	fold;
	} pass[] = {
		{ 1, UI_FOLD_NONE }, { 1, UI_FOLD_DONE }, { 0, UI_FOLD_DONE },
		{ 0, UI_FOLD_QUEUED }, { 0, UI_FOLD_QUEUED },
	};
	size_t	i, last = sizeof(pass) / sizeof(pass[0]) - 1;

	for (i = 0; i <= last; i++) {
		f->n = f->hidden = f->hidden_busy = 0;
		f->max = i < last ? avail : avail - 1;
		ui_live_tree(f, ui_L.run->root, 0, now, pass[i].details,
		    pass[i].fold);
		if (f->hidden == 0)
			return;
	}
	f->max = avail;
	snprintf(ui_live_add(f, UI_DIM), UI_LIVE_LINE, "... %u more agent%s "
	    "(%u running or queued)", f->hidden, f->hidden == 1 ? "" : "s",
	    f->hidden_busy);
}

/* Erase the last frame and draw this one. */
static void
ui_live_draw(uint64_t now)
{
	struct ui_live_frame	 f;
	char			 foot[2][UI_LIVE_LINE];
	size_t			 nfoot, i, avail;

	nfoot = ui_live_footer(foot, now);
	avail = ui_L.rows - 1 > nfoot + 1 ? ui_L.rows - 1 - nfoot : 1;
	memset(&f, 0, sizeof(f));
	f.v = calloc(avail, sizeof(*f.v));
	f.style = calloc(avail, sizeof(*f.style));
	if (f.v == NULL || f.style == NULL)
		goto out;
	ui_live_layout(&f, avail, now);
	ui_live_erase();
	if (ui_L.nwidths < f.n + nfoot) {
		free(ui_L.widths);
		ui_L.nwidths = f.n + nfoot;
		ui_L.widths = xcalloc(ui_L.nwidths, sizeof(*ui_L.widths));
	}
	for (i = 0; i < f.n; i++)
		ui_live_put(f.v[i], f.style[i]);
	for (i = 0; i < nfoot; i++)
		ui_live_put(foot[i], UI_DIM);
	ui_L.spin++;
	ui_L.drawn = now;
	ui_L.dirty = 0;
	ui_live_write();
out:
	free(f.v);
	free(f.style);
}

static void
ui_live_tick(void *arg)
{
	uint64_t	now = clock_mono_ms();
	unsigned	cols = ui_L.cols, rows = ui_L.rows;

	(void)arg;
	ui_L.timer = 0;
	if (!ui_L.on)
		return;
	if (ui_live_winch) {
		ui_live_winch = 0;
		ui_live_size();
		if (cols != ui_L.cols || rows != ui_L.rows)
			ui_L.dirty = 1;
	}
	ui_live_write();
	/* The last frame is not all out: no new one on top of it. */
	if (ui_L.on && buf_left(&ui_L.out) == 0 && (ui_L.dirty ||
	    now - ui_L.drawn >= UI_LIVE_IDLE_MS))
		ui_live_draw(now);
	if (ui_L.on)
		ui_L.timer = loop_timer_add(ui_L.run->loop, UI_LIVE_TICK_MS,
		    ui_live_tick, NULL);
}

/* The terminal again, a file description of our own: O_NONBLOCK on it
 * does not reach the shell's (or anyone's) stderr. */
static int
ui_live_open(void)
{
	char	path[64];

	snprintf(path, sizeof(path), "/proc/self/fd/%d", STDERR_FILENO);
	return open(path, O_WRONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
}

int
ui_live_start(struct run *r)
{
	struct sigaction	sa;

	if (ui_L.on)
		return 0;
	if ((ui_L.fd = ui_live_open()) == -1 || !isatty(ui_L.fd)) {
		if (ui_L.fd != -1)
			close(ui_L.fd);
		ui_L.fd = -1;
		return -1;
	}
	ui_L.run = r;
	ui_L.on = 1;
	ui_L.t0 = clock_mono_ms();
	ui_L.utf8 = ui_live_env_utf8();
	ui_L.color = getenv("NO_COLOR") == NULL || *getenv("NO_COLOR") == '\0';
	if (ui_L.utf8 && (ui_L.loc = newlocale(LC_CTYPE_MASK, "C.UTF-8",
	    (locale_t)0)) == (locale_t)0)
		ui_L.loc = newlocale(LC_CTYPE_MASK, "en_US.UTF-8", (locale_t)0);
	buf_init(&ui_L.out, 0);
	ui_live_size();
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = ui_live_on_winch;
	sa.sa_flags = SA_RESTART;
	sigemptyset(&sa.sa_mask);
	(void)sigaction(SIGWINCH, &sa, &ui_L.oldwinch);
	log_sethook(ui_live_log, NULL);
	ui_L.dirty = 1;
	ui_live_tick(NULL);
	return 0;
}

void
ui_live_stop(void)
{
	if (ui_L.fd == -1)
		return;
	if (ui_L.timer != 0)
		loop_timer_del(ui_L.run->loop, ui_L.timer);
	ui_L.timer = 0;
	log_sethook(NULL, NULL);
	(void)sigaction(SIGWINCH, &ui_L.oldwinch, NULL);
	if (ui_L.on) {
		/* The last frame, whole: the terminal may block us now. */
		(void)fcntl(ui_L.fd, F_SETFL, 0);
		ui_L.final = 1;
		ui_live_write();
		ui_live_draw(clock_mono_ms());
		if (ui_L.dropped > 0) {
			buf_addf(&ui_L.out, "warren: %lu log records were not "
			    "shown (the terminal took no output)\r\n",
			    ui_L.dropped);
			ui_live_write();
		}
	}
	ui_L.on = 0;
	buf_free(&ui_L.out);
	free(ui_L.widths);
	ui_L.widths = NULL;
	ui_L.nwidths = ui_L.shown = 0;
	if (ui_L.loc != (locale_t)0)
		freelocale(ui_L.loc);
	ui_L.loc = (locale_t)0;
	close(ui_L.fd);
	ui_L.fd = -1;
}

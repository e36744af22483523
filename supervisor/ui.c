/*
 * What the user sees while a run goes: one plain line per event on stderr
 * ("[0.2 explore] grep ..."), or with --json one JSON object per line on
 * stdout. Every text from a model, a tool or a file is escaped before it
 * reaches a terminal, and cut to a line. Colour only on a terminal and
 * without NO_COLOR.
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
#include "workspace/hostexec.h"
#include "common/jtext.h"
#include "supervisor/run.h"

#define UI_TEXT_MAX	160	/* characters of a text shown on a line */
#define UI_JSON_TEXT_MAX 4096	/* bytes of a tool result in --json */
#define UI_HOST_FILES_MAX 50	/* files that run code listed on stderr */

static int	ui_json;
static int	ui_color;
static uint64_t	ui_t0;

void
ui_init(int json)
{
	const char	*nc = getenv("NO_COLOR");

	ui_json = json;
	ui_color = !json && isatty(STDERR_FILENO) &&
	    (nc == NULL || *nc == '\0');
	ui_t0 = clock_mono_ms();
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

static void
ui_emit(json_t *o)
{
	char	*s;

	json_object_set_new(o, "ms", json_integer((json_int_t)
	    (clock_mono_ms() - ui_t0)));
	/* Buffered: ui_flush() writes what one pass of the event loop said. */
	if ((s = json_dumps(o, JSON_COMPACT | JSON_ENSURE_ASCII)) != NULL) {
		fprintf(stdout, "%s\n", s);
		free(s);
	}
	json_decref(o);
}

void
ui_flush(void)
{
	fflush(stdout);
}

static json_t *
ui_obj(const char *event, const struct node *n)
{
	json_t	*o = json_object();

	json_object_set_new(o, "event", json_string(event));
	if (n != NULL) {
		json_object_set_new(o, "path", json_string(n->path));
		json_object_set_new(o, "profile",
		    json_string(n->profile->name));
		json_object_set_new(o, "depth", json_integer(n->depth));
	}
	return o;
}


/* A result's head for --json (UI_JSON_TEXT_MAX bytes, UTF-8 kept whole). */
static json_t *
ui_jclip(const char *text)
{
	json_t	*j;
	size_t	 len;
	char	*cut;

	if (text == NULL)
		return json_null();
	len = strlen(text);
	if (len <= UI_JSON_TEXT_MAX)
		return jtext(text);
	len = UI_JSON_TEXT_MAX;
	while (len > 0 && ((unsigned char)text[len] & 0xc0) == 0x80)
		len--;
	cut = str_ndup(text, len);
	j = jtext(cut);
	free(cut);
	return j;
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
ui_spawned(const struct node *n, pid_t pid)
{
	json_t	*o;
	char	*task;

	if (ui_json) {
		o = ui_obj("spawned", n);
		json_object_set_new(o, "pid", json_integer(pid));
		json_object_set_new(o, "task", jtext(n->task));
		ui_emit(o);
		return;
	}
	task = ui_clip(n->task);
	ui_line(n, "spawned (pid %d, depth %u): %s", (int)pid, n->depth, task);
	free(task);
}

void
ui_queued(const struct node *n)
{
	json_t	*o;

	if (ui_json) {
		o = ui_obj("queued", n);
		json_object_set_new(o, "parent",
		    json_string(n->parent ? n->parent->path : ""));
		json_object_set_new(o, "task", jtext(n->task));
		ui_emit(o);
	}
}

void
ui_tool(const struct node *n, const char *tool, const char *args)
{
	json_t	*o;

	if (ui_json) {
		o = ui_obj("tool_call", n);
		json_object_set_new(o, "tool", jtext(tool));
		json_object_set_new(o, "args", jtext(args));
		ui_emit(o);
		return;
	}
	ui_line2(n, "", tool, " ", args);
}

void
ui_tool_result(const struct node *n, const char *tool, const char *text,
    int is_error)
{
	json_t	*o;

	if (ui_json) {
		o = ui_obj("tool_result", n);
		json_object_set_new(o, "tool", jtext(tool));
		json_object_set_new(o, "error", json_boolean(is_error));
		json_object_set_new(o, "bytes",
		    json_integer(text ? (json_int_t)strlen(text) : 0));
		json_object_set_new(o, "text", ui_jclip(text));
		ui_emit(o);
		return;
	}
	if (!is_error)
		return;	/* results are long: only errors get a line */
	ui_line2(n, "", tool, " failed: ", text);
}

void
ui_refused(const struct node *parent, const char *profile, const char *msg)
{
	json_t	*o;

	if (ui_json) {
		o = ui_obj("refused", parent);
		json_object_set_new(o, "want", jtext(profile));
		json_object_set_new(o, "message", jtext(msg));
		ui_emit(o);
		return;
	}
	ui_line2(parent, "delegate ", profile, " refused: ", msg);
}

void
ui_done(const struct node *n)
{
	json_t		*o;
	char		*x;
	unsigned long	 ms = (unsigned long)(n->ended_ms - n->started_ms);

	if (ui_json) {
		o = ui_obj("done", n);
		json_object_set_new(o, "end", json_string(run_end_name(n->end)));
		json_object_set_new(o, "result", jtext(n->result));
		json_object_set_new(o, "error", jtext(run_end_ok(n->end) ?
		    NULL : n->error));
		if (n->end == NODE_END_AUTO_COMPLETE)
			json_object_set_new(o, "reason", jtext(n->error));
		json_object_set_new(o, "iterations",
		    json_integer(n->iterations));
		json_object_set_new(o, "elapsed_ms", json_integer((json_int_t)ms));
		ui_emit(o);
		return;
	}
	x = ui_clip(run_end_ok(n->end) ? n->result : n->error);
	ui_line(n, "done: %s in %lu.%03lus: %s", run_end_name(n->end),
	    ms / 1000, ms % 1000, x);
	free(x);
}

void
ui_note(const struct node *n, const char *what, const char *text)
{
	json_t	*o;

	if (ui_json) {
		o = ui_obj("note", n);
		json_object_set_new(o, "kind", jtext(what));
		json_object_set_new(o, "text", jtext(text));
		ui_emit(o);
		return;
	}
	ui_line2(n, "", what, ": ", text);
}

void
ui_result(const char *text, int ok, int code)
{
	json_t	*o;
	char	*esc;

	if (ui_json) {
		o = json_object();
		json_object_set_new(o, "event", json_string("result"));
		json_object_set_new(o, "ok", json_boolean(ok));
		json_object_set_new(o, "exit", json_integer(code));
		json_object_set_new(o, "result", jtext(text));
		ui_emit(o);
		ui_flush();
		return;
	}
	if (text == NULL)
		return;
	if (ok) {
		/* The answer itself: escaped for a terminal, lines kept. */
		esc = str_escape_dup(text, strlen(text), STR_ESC_KEEP_NL);
		fprintf(stdout, "%s\n", esc ? esc : "");
		free(esc);
		fflush(stdout);
	} else {
		esc = str_escape_dup(text, strlen(text), STR_ESC_KEEP_NL);
		fprintf(stderr, "warren: run failed: %s\n", esc ? esc : "");
		free(esc);
	}
}

void
ui_host_files(json_t *report)
{
	json_t	*o;

	if (ui_json) {
		o = json_object();
		json_object_set_new(o, "event", json_string("host_files"));
		json_object_update(o, report);
		ui_emit(o);
		return;
	}
	(void)hostexec_print(stderr, "warren: ", report, UI_HOST_FILES_MAX);
}

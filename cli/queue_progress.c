/*
 * What `warren queue work` shows: on a terminal one progress line (done,
 * failed, running, queued, jobs per minute, ETA, tokens) and under it one
 * line per running job (its id, attempt, time, and what its agents do,
 * from its run's last event), redrawn at most 10 times a second, each
 * line cut to the terminal's width; otherwise, or with --json, one JSON
 * event per job start and end on stdout. Tasks, errors and what agents
 * do are escaped for the terminal.
 */
#include <sys/ioctl.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <jansson.h>

#include "cli/queue_work.h"
#include "common/clock.h"
#include "common/jtext.h"
#include "common/str.h"

#define QPROG_REDRAW_MS	100	/* 10 redraws a second at most */
#define QPROG_COUNTS_MS	1000	/* the queue's counts, once a second */
#define QPROG_CLOCK_MS	500	/* the jobs' clocks, unchanged otherwise */
#define QPROG_LINE	512

struct qprogress {
	int		 json;
	struct queue	*q;
	uint64_t	 t0, drawn, counted;
	uint64_t	 done, failed, tokens;
	uint64_t	 queued;		/* queued + retrying, last count */
	int		 dirty, shown;
	unsigned	 below;		/* job lines under the progress line */
};

struct qprogress *
queue_progress_new(int json, struct queue *q)
{
	struct qprogress	*p;

	if ((p = calloc(1, sizeof(*p))) == NULL)
		return NULL;
	p->json = json || !isatty(STDOUT_FILENO);
	p->q = q;
	p->t0 = clock_mono_ms();
	p->dirty = 1;
	return p;
}

static void
queue_progress_emit(json_t *o)
{
	char	*s;

	if (o != NULL && (s = json_dumps(o, JSON_COMPACT |
	    JSON_ENSURE_ASCII)) != NULL) {
		printf("%s\n", s);
		fflush(stdout);
		free(s);
	}
	json_decref(o);
}

void
queue_progress_start(struct qprogress *p, const struct qrun *r)
{
	p->dirty = 1;
	p->counted = 0;		/* one job fewer queued: count again */
	if (!p->json)
		return;
	queue_progress_emit(json_pack("{s:s, s:I, s:i, s:o, s:o}", "event",
	    "job_start", "job", (json_int_t)r->job.id, "attempt",
	    r->job.attempts, "task", jtext(r->job.task), "workspace",
	    jtext(r->job.workspace)));
}

void
queue_progress_end(struct qprogress *p, const struct qrun *r,
    const struct qoutcome *o, const char *outcome, const char *status)
{
	p->dirty = 1;
	p->counted = 0;
	p->tokens += o->res.tokens_in + o->res.tokens_out;
	if (strcmp(outcome, "done") == 0)
		p->done++;
	else if (strcmp(outcome, "lost") != 0)
		p->failed++;
	if (!p->json)
		return;
	queue_progress_emit(json_pack("{s:s, s:I, s:i, s:s, s:s, s:o, s:I,"
	    " s:I, s:I, s:I}", "event", "job_end", "job",
	    (json_int_t)r->job.id, "attempt", r->job.attempts, "outcome",
	    outcome, "status", status, "error", o->ok ? json_null() :
	    jtext(o->res.error), "run", (json_int_t)o->res.run_id,
	    "tokens_in", (json_int_t)o->res.tokens_in, "tokens_out",
	    (json_int_t)o->res.tokens_out, "wall_ms",
	    (json_int_t)o->res.wall_ms));
}

/* The queue's jobs waiting to run (queued, or retrying later). */
static void
queue_progress_count(struct qprogress *p, uint64_t now)
{
	struct queue_counts	c;

	if (queue_counts(p->q, &c) == 0) {
		p->queued = c.n[QUEUE_QUEUED] + c.n[QUEUE_RETRYING];
		p->counted = now;
		p->dirty = 1;
	}
}

/* Columns of the terminal on stdout (80 when it does not say). */
static void
queue_progress_size(unsigned *cols, unsigned *rows)
{
	struct winsize	ws;

	*cols = 80;
	*rows = 24;
	if (ioctl(STDOUT_FILENO, TIOCGWINSZ, &ws) == 0) {
		if (ws.ws_col > 10)
			*cols = ws.ws_col;
		if (ws.ws_row > 3)
			*rows = ws.ws_row;
	}
}

/* s (escaped) cut to cols - 1 columns, a character not ASCII counted as
 * two (never fewer than the terminal draws), "..." where it was cut. */
static void
queue_progress_cut(char *s, unsigned cols)
{
	size_t		i = 0, last3 = 0;
	unsigned	w = 0, cw;

	while (s[i] != '\0') {
		cw = ((unsigned char)s[i] & 0x80) ? 2 : 1;
		if (w + cw + 3 <= cols - 1)
			last3 = i + 1;
		if (w + cw > cols - 1) {
			while (last3 < i && ((unsigned char)s[last3] & 0xc0) ==
			    0x80)
				last3++;
			strcpy(s + last3, "...");
			return;
		}
		w += cw;
		i++;
		while (((unsigned char)s[i] & 0xc0) == 0x80)
			i++;
	}
}

/* "  job 7 #1  12s  [0.1 explore] bash: make" */
static void
queue_progress_job(const struct qrun *r, uint64_t now, unsigned cols)
{
	char	line[QPROG_LINE], esc[QPROG_LINE];
	int	n;

	str_escape(esc, sizeof(esc), r->doing[0] ? r->doing : r->job.task,
	    strlen(r->doing[0] ? r->doing : r->job.task));
	n = snprintf(line, sizeof(line), "  job %lld #%d  %llus  %s",
	    (long long)r->job.id, r->job.attempts,
	    (unsigned long long)((now - r->started) / 1000), esc);
	if (n < 0)
		return;
	queue_progress_cut(line, cols);
	printf("\n\033[K%s", line);
}

/* Back to the progress line, over the job lines of the last frame. */
static void
queue_progress_draw(struct qprogress *p, const struct qrun *runs,
    unsigned running, uint64_t now)
{
	double	 min = (double)(now - p->t0) / 60000.0, rate;
	uint64_t ended = p->done + p->failed;
	char	 eta[32] = "-", line[QPROG_LINE];
	unsigned cols, rows, i, n;

	queue_progress_size(&cols, &rows);
	rate = min > 0 ? (double)ended / min : 0;
	if (rate > 0) {
		unsigned long long s = (unsigned long long)((double)(p->queued +
		    running) / rate * 60);

		snprintf(eta, sizeof(eta), "%llum%02llus", s / 60, s % 60);
	}
	if (p->below > 0)
		printf("\033[%uA", p->below);
	snprintf(line, sizeof(line), "done %llu  failed %llu  running %u  "
	    "queued %llu  %.1f jobs/min  ETA %s  tokens %llu",
	    (unsigned long long)p->done, (unsigned long long)p->failed,
	    running, (unsigned long long)p->queued, rate, eta,
	    (unsigned long long)p->tokens);
	queue_progress_cut(line, cols);
	printf("\r\033[K%s", line);
	n = running < rows - 2 ? running : rows - 2;
	for (i = 0; runs != NULL && i < n; i++)
		queue_progress_job(&runs[i], now, cols);
	if (p->below > n)
		printf("\033[J");
	p->below = n;
	fflush(stdout);
	p->shown = 1;
}

void
queue_progress_tick(struct qprogress *p, struct qrun *runs,
    unsigned running, uint64_t now)
{
	unsigned	i;

	if (p->json || now - p->drawn < QPROG_REDRAW_MS)
		return;
	if (p->counted == 0 || now - p->counted >= QPROG_COUNTS_MS)
		queue_progress_count(p, now);
	for (i = 0; i < running; i++)
		if (runs[i].doing_new) {
			runs[i].doing_new = 0;
			p->dirty = 1;
		}
	if (!p->dirty && !(running > 0 && now - p->drawn >= QPROG_CLOCK_MS))
		return;
	queue_progress_draw(p, runs, running, now);
	p->drawn = now;
	p->dirty = 0;
}

void
queue_progress_free(struct qprogress *p)
{
	if (p == NULL)
		return;
	if (!p->json) {
		queue_progress_count(p, clock_mono_ms());
		queue_progress_draw(p, NULL, 0, clock_mono_ms());
		printf("\n");
	} else
		queue_progress_emit(json_pack("{s:s, s:I, s:I}", "event",
		    "summary", "done", (json_int_t)p->done, "failed",
		    (json_int_t)p->failed));
	free(p);
}

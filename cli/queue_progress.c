/*
 * What `warren queue work` shows: on a terminal one progress line redrawn
 * at most 10 times a second (done, failed, running, queued, jobs per
 * minute, ETA, tokens); otherwise, or with --json, one JSON event per job
 * start and end on stdout. Tasks and errors are escaped for the terminal.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <jansson.h>

#include "cli/queue_work.h"
#include "common/clock.h"
#include "common/jtext.h"

#define QPROG_REDRAW_MS	100	/* 10 redraws a second at most */
#define QPROG_COUNTS_MS	1000	/* the queue's counts, once a second */

struct qprogress {
	int		 json;
	struct queue	*q;
	uint64_t	 t0, drawn, counted;
	uint64_t	 done, failed, tokens;
	uint64_t	 queued;		/* queued + retrying, last count */
	int		 dirty, shown;
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

static void
queue_progress_draw(struct qprogress *p, unsigned running, uint64_t now)
{
	double	 min = (double)(now - p->t0) / 60000.0, rate;
	uint64_t ended = p->done + p->failed;
	char	 eta[32] = "-";

	rate = min > 0 ? (double)ended / min : 0;
	if (rate > 0) {
		unsigned long long s = (unsigned long long)((double)(p->queued +
		    running) / rate * 60);

		snprintf(eta, sizeof(eta), "%llum%02llus", s / 60, s % 60);
	}
	printf("\r\033[Kdone %llu  failed %llu  running %u  queued %llu  "
	    "%.1f jobs/min  ETA %s  tokens %llu", (unsigned long long)p->done,
	    (unsigned long long)p->failed, running,
	    (unsigned long long)p->queued, rate, eta,
	    (unsigned long long)p->tokens);
	fflush(stdout);
	p->shown = 1;
}

void
queue_progress_tick(struct qprogress *p, unsigned running, uint64_t now)
{
	if (p->json || now - p->drawn < QPROG_REDRAW_MS)
		return;
	if (p->counted == 0 || now - p->counted >= QPROG_COUNTS_MS)
		queue_progress_count(p, now);
	if (!p->dirty)
		return;
	queue_progress_draw(p, running, now);
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
		queue_progress_draw(p, 0, clock_mono_ms());
		printf("\n");
	} else
		queue_progress_emit(json_pack("{s:s, s:I, s:I}", "event",
		    "summary", "done", (json_int_t)p->done, "failed",
		    (json_int_t)p->failed));
	free(p);
}

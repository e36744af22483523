/*
 * What `warren queue work` shows: on a terminal one progress line (jobs
 * done, failed and cancelled, attempts retried, running, queued, jobs per
 * minute, ETA, tokens) and under it one line per running job (its id,
 * attempt, time, and what its agents do, from its run's last event),
 * redrawn at most 10 times a second, each line cut to the terminal's
 * width; otherwise, or with --json, one JSON event per job start and end
 * on stdout. At the end a summary: the counts and the dead jobs with their
 * last errors (the first QPROG_DEAD_MAX), on stderr under the terminal's
 * line, or as the JSON summary event. Tasks, errors and what agents do
 * are escaped for the terminal.
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
#define QPROG_DEAD_MAX	20	/* dead jobs the summary names */
#define QPROG_ERR_MAX	1024	/* bytes of each one's error kept */

/* A job that ended dead here, and its last attempt's error. */
struct qprogress_dead {
	int64_t		 job;
	char		*error;		/* raw: escaped when shown */
};

struct qprogress {
	int		 json;
	struct queue	*q;
	uint64_t	 t0, drawn, counted;
	/* Jobs this worker ended, by what they became; attempts that failed
	 * and left the job retrying; attempts whose lease was lost. */
	uint64_t	 done, dead, cancelled, retries, lost, tokens;
	uint64_t	 queued;		/* queued + retrying, last count */
	struct qprogress_dead dead_v[QPROG_DEAD_MAX];
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

/* The first QPROG_ERR_MAX bytes of s, cut before a UTF-8 character. */
static char *
queue_progress_errdup(const char *s)
{
	size_t	len = s != NULL ? strlen(s) : 0;

	if (len > QPROG_ERR_MAX) {
		len = QPROG_ERR_MAX;
		while (len > 0 && ((unsigned char)s[len] & 0xc0) == 0x80)
			len--;
	}
	return s != NULL ? strndup(s, len) : NULL;
}

/* Count the job by what it became: a job, not an attempt, is done or
 * failed; a failed attempt that leaves it retrying is a retry. */
static void
queue_progress_count_end(struct qprogress *p, int64_t job,
    const char *error, const char *status)
{
	struct qprogress_dead	*d;

	if (strcmp(status, "done") == 0)
		p->done++;
	else if (strcmp(status, "retrying") == 0)
		p->retries++;
	else if (strcmp(status, "cancelled") == 0)
		p->cancelled++;
	else if (strcmp(status, "dead") == 0) {
		if (p->dead < QPROG_DEAD_MAX) {
			d = &p->dead_v[p->dead];
			d->job = job;
			d->error = queue_progress_errdup(error);
		}
		p->dead++;
	} else
		p->lost++;
}

void
queue_progress_end(struct qprogress *p, const struct qrun *r,
    const struct qoutcome *o, const char *outcome, const char *status)
{
	p->dirty = 1;
	p->counted = 0;
	p->tokens += o->res.tokens_in + o->res.tokens_out;
	queue_progress_count_end(p, r->job.id, o->res.error, status);
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

/* "  cancelled 1  retries 2", each only once there is one. */
static void
queue_progress_extra(const struct qprogress *p, char *buf, size_t sz)
{
	int	n = 0;

	buf[0] = '\0';
	if (p->cancelled > 0)
		n = snprintf(buf, sz, "  cancelled %llu",
		    (unsigned long long)p->cancelled);
	if (p->retries > 0 && n >= 0 && (size_t)n < sz)
		snprintf(buf + n, sz - (size_t)n, "  retries %llu",
		    (unsigned long long)p->retries);
}

/* Back to the progress line, over the job lines of the last frame. */
static void
queue_progress_draw(struct qprogress *p, const struct qrun *runs,
    unsigned running, uint64_t now)
{
	double	 min = (double)(now - p->t0) / 60000.0, rate;
	uint64_t ended = p->done + p->dead + p->cancelled;
	char	 eta[32] = "-", line[QPROG_LINE], extra[64];
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
	queue_progress_extra(p, extra, sizeof(extra));
	snprintf(line, sizeof(line), "done %llu  failed %llu%s  running %u  "
	    "queued %llu  %.1f jobs/min  ETA %s  tokens %llu",
	    (unsigned long long)p->done, (unsigned long long)p->dead, extra,
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

/* The summary under the terminal's last frame, on stderr. */
static void
queue_progress_say_end(const struct qprogress *p)
{
	const char	*e;
	char		 esc[QPROG_LINE];
	uint64_t	 i;

	fprintf(stderr, "warren queue work: done %llu, failed %llu, cancelled "
	    "%llu; %llu failed attempt%s retried\n",
	    (unsigned long long)p->done, (unsigned long long)p->dead,
	    (unsigned long long)p->cancelled, (unsigned long long)p->retries,
	    p->retries == 1 ? "" : "s");
	for (i = 0; i < p->dead && i < QPROG_DEAD_MAX; i++) {
		e = p->dead_v[i].error != NULL ? p->dead_v[i].error :
		    "(no error)";
		str_escape(esc, sizeof(esc), e, strlen(e));
		fprintf(stderr, "  job %lld dead: %s\n",
		    (long long)p->dead_v[i].job, esc);
	}
	if (p->dead > QPROG_DEAD_MAX)
		fprintf(stderr, "  and %llu more dead (`warren queue ls --status "
		    "dead`)\n", (unsigned long long)(p->dead - QPROG_DEAD_MAX));
}

/* The summary event: the counts and the dead jobs. */
static void
queue_progress_emit_end(const struct qprogress *p)
{
	json_t		*dead;
	uint64_t	 i;

	if ((dead = json_array()) == NULL)
		return;
	for (i = 0; i < p->dead && i < QPROG_DEAD_MAX; i++)
		json_array_append_new(dead, json_pack("{s:I, s:o}", "job",
		    (json_int_t)p->dead_v[i].job, "error",
		    jtext(p->dead_v[i].error)));
	queue_progress_emit(json_pack("{s:s, s:I, s:I, s:I, s:I, s:I, s:o, "
	    "s:I}", "event", "summary", "done", (json_int_t)p->done, "failed",
	    (json_int_t)p->dead, "cancelled", (json_int_t)p->cancelled,
	    "retries", (json_int_t)p->retries, "lost", (json_int_t)p->lost,
	    "dead_jobs", dead, "dead_more", (json_int_t)(p->dead >
	    QPROG_DEAD_MAX ? p->dead - QPROG_DEAD_MAX : 0)));
}

void
queue_progress_free(struct qprogress *p)
{
	uint64_t	i;

	if (p == NULL)
		return;
	if (!p->json) {
		queue_progress_count(p, clock_mono_ms());
		queue_progress_draw(p, NULL, 0, clock_mono_ms());
		printf("\n");
		fflush(stdout);
		queue_progress_say_end(p);
	} else
		queue_progress_emit_end(p);
	for (i = 0; i < p->dead && i < QPROG_DEAD_MAX; i++)
		free(p->dead_v[i].error);
	free(p);
}

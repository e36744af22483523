/*
 * A run's shared LLM gate over the queue's database. The engine asks
 * before each request; the answer is one short transaction on the
 * queue's database (queue_rate), in the supervisor's loop: a few
 * hundred microseconds on SQLite, one round trip on PostgreSQL, next to
 * a request of hundreds of milliseconds.
 *
 * A gate that cannot reach its database lets requests through and says
 * so (at most every 10 s): the endpoint's own 429s still slow this run,
 * and a stalled database must not stall every agent of every run.
 */
#include <stdlib.h>
#include <string.h>

#include "cli/rate_gate.h"
#include "common/clock.h"
#include "common/log.h"
#include "common/urlmask.h"
#include "llm/llm.h"
#include "queue/queue.h"

#define RATE_GATE_WARN_MS	10000

struct rate_gate {
	struct queue	*q;
	char		*endpoint;	/* the base URL, redacted */
	unsigned	 rpm;
	uint64_t	 tpm;
	uint64_t	 warned_ms;	/* monotonic; 0: never */
};

static void
rate_gate_warn(struct rate_gate *g, const char *what)
{
	uint64_t	now = clock_mono_ms();

	if (g->warned_ms != 0 && now - g->warned_ms < RATE_GATE_WARN_MS)
		return;
	g->warned_ms = now;
	log_warnx("llm: the shared rate limits could not be %s (%s); "
	    "requests go on without them", what, queue_errmsg(g->q));
}

static uint64_t
rate_gate_take(void *arg)
{
	struct rate_gate	*g = arg;
	struct queue_rate_req	 r = { QUEUE_RATE_TAKE, g->rpm, g->tpm, 0 };
	uint64_t		 wait;

	if (queue_rate(g->q, g->endpoint, &r, &wait) == -1) {
		rate_gate_warn(g, "read");
		return 0;
	}
	return wait;
}

static void
rate_gate_spent(void *arg, uint64_t tokens)
{
	struct rate_gate	*g = arg;
	struct queue_rate_req	 r = { QUEUE_RATE_SPEND, g->rpm, g->tpm,
				     tokens };
	uint64_t		 wait;

	if (g->tpm > 0 && queue_rate(g->q, g->endpoint, &r, &wait) == -1)
		rate_gate_warn(g, "charged");
}

static void
rate_gate_pause(void *arg, uint64_t ms)
{
	struct rate_gate	*g = arg;
	struct queue_rate_req	 r = { QUEUE_RATE_PAUSE, g->rpm, g->tpm, ms };
	uint64_t		 wait;

	if (queue_rate(g->q, g->endpoint, &r, &wait) == -1)
		rate_gate_warn(g, "paused");
}

struct rate_gate *
rate_gate_open(const struct llm_config *lc, struct llm_engine *e,
    const char *url, char *err, size_t errsz)
{
	struct rate_gate	*g;
	struct llm_gate		 lg;

	if (url != NULL && *url == '\0')
		url = NULL;
	if ((g = calloc(1, sizeof(*g))) == NULL ||
	    (g->endpoint = urlmask_dup(lc->base_url)) == NULL) {
		snprintf(err, errsz, "shared rate limits: out of memory");
		goto fail;
	}
	if ((g->q = queue_open(url, err, errsz)) == NULL)
		goto fail;
	g->rpm = lc->rpm;
	g->tpm = lc->tpm;
	lg.take = rate_gate_take;
	lg.spent = rate_gate_spent;
	lg.pause = rate_gate_pause;
	lg.arg = g;
	llm_engine_set_gate(e, &lg);
	return g;
fail:
	if (g != NULL)
		free(g->endpoint);
	free(g);
	return NULL;
}

void
rate_gate_close(struct rate_gate *g, struct llm_engine *e)
{
	if (g == NULL)
		return;
	if (e != NULL)
		llm_engine_set_gate(e, NULL);
	queue_close(g->q);
	free(g->endpoint);
	free(g);
}

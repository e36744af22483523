/*
 * The LLM rate limits shared through the queue's database: the arithmetic,
 * a generic cell rate algorithm (GCRA) for requests and one for tokens.
 * queue_rate() (queue.c) checks a call; a backend only reads the endpoint's row,
 * runs queue_rate_step() at its own time and writes the row back, in one
 * transaction, so every process on the database sees one schedule.
 *
 * GCRA keeps, per rate, the time the rate is "caught up" (the theoretical
 * arrival time, tat): each request moves it 60000 / rpm ms on from
 * max(tat, now); a request may go while tat is at most the burst
 * tolerance ahead of now. Tokens move their tat by tokens * 60000 / tpm
 * when spent, since a request's cost is known only from its answer: a
 * long answer is paid for by the requests after it.
 */
#include "queue/queue_int.h"

/* Tokens one SPEND may charge: more is a worker's bad count. */
#define QUEUE_RATE_TOKENS_MAX	((uint64_t)1 << 40)

/* ms one unit of a rate of per_min a minute costs, rounded up. */
static int64_t
queue_rate_cost(uint64_t units, uint64_t per_min)
{
	return (int64_t)((units * 60000 + per_min - 1) / per_min);
}

/* How far ahead of now the request rate's tat may run: a burst of one
 * second's worth of requests, at least one (so a limit under 60 a minute
 * still lets one go). */
static int64_t
queue_rate_tolerance(uint64_t per_min)
{
	int64_t	one = queue_rate_cost(1, per_min);

	return one >= 1000 ? 0 : 1000 - one;
}

/* The token rate's: one second's worth of tokens spent ahead. */
#define QUEUE_RATE_TOKEN_TOLERANCE_MS	1000

/* ms until tat is back within tolerance of now; 0 if it is. */
static uint64_t
queue_rate_behind(int64_t tat, int64_t now, int64_t tolerance)
{
	if (tat - now <= tolerance)
		return 0;
	return (uint64_t)(tat - now - tolerance);
}

static int64_t
queue_rate_max(int64_t a, int64_t b)
{
	return a > b ? a : b;
}

static uint64_t
queue_rate_take(struct queue_rate_state *st, int64_t now,
    const struct queue_rate_req *r)
{
	uint64_t	wait = 0, w;

	if (st->pause_until_ms > now)
		wait = (uint64_t)(st->pause_until_ms - now);
	if (r->rpm > 0 && (w = queue_rate_behind(st->req_tat_ms, now,
	    queue_rate_tolerance(r->rpm))) > wait)
		wait = w;
	if (r->tpm > 0 && (w = queue_rate_behind(st->tok_tat_ms, now,
	    QUEUE_RATE_TOKEN_TOLERANCE_MS)) > wait)
		wait = w;
	if (wait > 0)
		return wait;
	if (r->rpm > 0)
		st->req_tat_ms = queue_rate_max(st->req_tat_ms, now) +
		    queue_rate_cost(1, r->rpm);
	return 0;
}

uint64_t
queue_rate_step(struct queue_rate_state *st, int64_t now,
    const struct queue_rate_req *r)
{
	uint64_t	n;

	switch (r->op) {
	case QUEUE_RATE_TAKE:
		return queue_rate_take(st, now, r);
	case QUEUE_RATE_SPEND:
		if (r->tpm > 0 && r->n > 0) {
			n = r->n < QUEUE_RATE_TOKENS_MAX ? r->n :
			    QUEUE_RATE_TOKENS_MAX;
			st->tok_tat_ms = queue_rate_max(st->tok_tat_ms, now) +
			    queue_rate_cost(n, r->tpm);
		}
		return 0;
	case QUEUE_RATE_PAUSE:
		n = r->n < QUEUE_RATE_PAUSE_MAX_MS ? r->n :
		    QUEUE_RATE_PAUSE_MAX_MS;
		st->pause_until_ms = queue_rate_max(st->pause_until_ms,
		    now + (int64_t)n);
		return 0;
	}
	return 0;
}

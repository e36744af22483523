/*
 * A run's shared LLM gate: the engine's llm_gate over the queue's
 * database (queue_rate), so every run on one database keeps to one
 * llm_rpm and llm_tpm, and one 429 pauses them all (docs/queue.md
 * "Shared limits").
 */
#ifndef WARREN_RATE_GATE_H
#define WARREN_RATE_GATE_H

#include <stddef.h>

struct llm_config;
struct llm_engine;
struct rate_gate;

/*
 * Open the queue at url (queue_url: $WARREN_QUEUE_URL or the user's
 * config; NULL or "": queue.db beside the state database, queue_path)
 * for lc's endpoint and limits,
 * and put the gate on e. NULL with err when the queue cannot be opened.
 */
struct rate_gate	*rate_gate_open(const struct llm_config *lc,
			    struct llm_engine *e, const char *url, char *err,
			    size_t errsz);
/* Take the gate off e, then close. */
void			 rate_gate_close(struct rate_gate *,
			    struct llm_engine *e);

#endif

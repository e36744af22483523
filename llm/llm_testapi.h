/*
 * What tests call directly of the LLM engine: production reaches each
 * only through llm_engine.c. Only tests and the files defining these
 * include this (scripts/check-exports.py).
 */

#ifndef WARREN_LLM_TESTAPI_H
#define WARREN_LLM_TESTAPI_H

#include "llm/llm.h"

/* The cap on requests on the wire now: llm_concurrency, lowered by the
 * endpoint's 429s and raised again by its answers (llm_window.c). */
unsigned	 llm_engine_limit(const struct llm_engine *e);

#endif

/*
 * What tests call directly of the hold: production reaches each only
 * through hold_progress (the monotonic clock). Only tests and the files
 * defining these include this (scripts/check-exports.py).
 */

#ifndef WARREN_HOLD_TESTAPI_H
#define WARREN_HOLD_TESTAPI_H

#include <stdint.h>

#include "worker/hold.h"

/* From any thread: release, once, if armed and the hold has ended. */
void	hold_tick(struct hold *h, uint64_t now);

#endif

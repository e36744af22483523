/*
 * What tests call directly of the event loop: production reaches each
 * only through loop_run. Only tests and the files defining these include
 * this (scripts/check-exports.py).
 */

#ifndef WARREN_LOOP_TESTAPI_H
#define WARREN_LOOP_TESTAPI_H

#include "supervisor/loop.h"

/* One iteration waiting at most max_ms (-1: as long as needed). */
int		 loop_once(struct loop *, long max_ms);

#endif

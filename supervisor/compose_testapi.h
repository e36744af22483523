/*
 * What tests call directly of a composition's plan: production reaches
 * each only through compose.c (which takes the parsed steps over). Only
 * tests and the files defining these include this
 * (scripts/check-exports.py).
 */

#ifndef WARREN_COMPOSE_TESTAPI_H
#define WARREN_COMPOSE_TESTAPI_H

#include <stddef.h>

#include "supervisor/compose.h"

/* compose_plan.c: what compose_plan_parse and compose_plan_args gave. */
void		 compose_plan_free(struct compose_stepdef *, size_t);

#endif

/*
 * What tests call directly of the tool definitions: production reaches
 * each only through tooldef_find (by name). Only tests and the files
 * defining these include this (scripts/check-exports.py).
 */

#ifndef WARREN_TOOLDEF_TESTAPI_H
#define WARREN_TOOLDEF_TESTAPI_H

#include <stddef.h>

#include "agent/tooldef.h"

/* tooldef.c: the i-th definition. */
const struct tooldef	*tooldef_at(size_t i);	/* NULL past the end */

#endif

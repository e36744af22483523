/*
 * What tests and fuzzers call directly of the copy-on-write workspace:
 * production reaches each only through another function of its file.
 * Only tests and the files defining these include this
 * (scripts/check-exports.py).
 */

#ifndef WARREN_COW_TESTAPI_H
#define WARREN_COW_TESTAPI_H

#include <stddef.h>

/* cow_unpack.c: a change set only parsed (what cow_unpack checks before
 * it writes anything): 0 if apply could take it, -1 with err. */
int		 cow_unpack_check(const void *data, size_t len, char *err,
		    size_t errsz);

#endif

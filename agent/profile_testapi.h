/*
 * What tests call directly of profiles: production reaches it only
 * through profile_file.c (profile_set_load reads the files). Only tests
 * and profile_file.c include this (scripts/check-exports.py).
 */

#ifndef WARREN_PROFILE_TESTAPI_H
#define WARREN_PROFILE_TESTAPI_H

#include <stddef.h>

#include "agent/profile.h"

/* Parse one profile file's text; filename names it in errors ("FILE:LINE:
 * what"). name_hint (the file's base name without .md) is used when the
 * header has no name. 0, or -1 with err set. */
int			 profile_parse(const char *text, size_t len,
			    const char *filename, const char *name_hint,
			    struct profile **out, char *err, size_t errlen);

#endif

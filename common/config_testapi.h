/*
 * What tests call directly of the configuration: production reaches each
 * only through config_load (the user's file and the environment). Only
 * tests and the files defining these include this
 * (scripts/check-exports.py).
 */

#ifndef WARREN_CONFIG_TESTAPI_H
#define WARREN_CONFIG_TESTAPI_H

#include <stddef.h>

#include "common/config.h"

/* Read a file; a missing file is not an error when optional. */
int		 config_load_file(struct config *c, const char *path,
		    enum config_source src, int optional);
/* Every declared key that has an env variable set. */
int		 config_load_env(struct config *c);
/* The i-th declared key, in declaration order; NULL past the last. */
const struct config_key *config_key_at(const struct config *c, size_t i);

#endif

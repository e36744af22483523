/*
 * What tests call directly of the JSON schema validator: production
 * reaches each only through jschema_check_text. Only tests and the files
 * defining these include this (scripts/check-exports.py).
 */

#ifndef WARREN_JSCHEMA_TESTAPI_H
#define WARREN_JSCHEMA_TESTAPI_H

#include <stddef.h>

#include "common/jschema.h"

/*
 * Validate v against schema. Returns how many errors it found (0: valid),
 * each as a line "$.path: what" in out (cut to outsz, "..." when cut);
 * -1 when the schema itself is not usable (out says why, as
 * jschema_usable would, true and false allowed at the root).
 */
int	jschema_validate(const json_t *schema, const json_t *v, char *out,
	    size_t outsz);

#endif

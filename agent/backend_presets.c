/*
 * PLACEHOLDER (lead, 2026-11-29): the presets are being written on the
 * branch extprograms; this file is replaced when it merges. Until then a
 * preset is refused with a message that says so.
 */
#include <stdio.h>

#include "agent/backend.h"

int
backend_preset_build(enum backend_kind k, const struct backend_args *a,
    struct backend_launch *l, char *err, size_t errlen)
{
	(void)a;
	(void)l;
	snprintf(err, errlen, "backend %s: not in this build",
	    backend_name(k));
	return -1;
}

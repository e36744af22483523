/*
 * Untrusted text as a JSON string: jansson refuses invalid UTF-8, so such
 * text is escaped (common/str.h) first and never silently dropped.
 */
#ifndef WARREN_JTEXT_H
#define WARREN_JTEXT_H

#include <jansson.h>

/* jtext.c */
json_t	*jtext(const char *s);	/* json null for NULL; NULL on no memory */

#endif

/*
 * Text from an LLM, a tool, a file or the database as a JSON string, for
 * every --json output (warren run, show, graph, profiles).
 */
#include <stdlib.h>
#include <string.h>

#include "common/str.h"
#include "common/jtext.h"

json_t *
jtext(const char *s)
{
	json_t	*j;
	char	*e;

	if (s == NULL)
		return json_null();
	if (str_utf8_valid(s, strlen(s)))
		return json_string(s);
	if ((e = str_escape_dup(s, strlen(s), STR_ESC_KEEP_NL)) == NULL)
		return NULL;
	j = json_string(e);
	free(e);
	return j;
}

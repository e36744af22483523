/*
 * One mask for every URL warren prints, logs or stores: an LLM base URL,
 * a queue's PostgreSQL URL (URI or keyword form), a rate gate's endpoint.
 *
 * - The userinfo ends at the LAST '@' before the first '/', '?' or '#'
 *   after the scheme's "//" (a password may hold '@'): "user:pw@" shows
 *   as "user:***@"; a userinfo without ':' ("KEY@", as some services take
 *   a token) as "***@". Where that part has a ':' and no '@' but an '@'
 *   follows ("user:p/ss@host", a password with '/', '?' or '#' not
 *   escaped), the userinfo runs to that '@' (and any more before the
 *   host's end): "user:***@host".
 * - A query's values show as "***", but for the names of a short list
 *   that never hold a secret (host, port, dbname, user, sslmode, ...):
 *   "?user=u&password=***&sslpassword=***&key=***".
 * - A fragment shows as "#***".
 * - "postgresql:" or "postgres:" without "//" is libpq's keyword form:
 *   every value but those of the same list, quoted ('a b\' c') or not,
 *   shows as "***".
 * - Anything else (a path) is shown as it is.
 *
 * The result is cut to the buffer; a cut never shows what "***" hides.
 */
#ifndef WARREN_URLMASK_H
#define WARREN_URLMASK_H

#include <stddef.h>

/* urlmask.c */
void	 urlmask(const char *url, char *out, size_t outsz);
/* The same, allocated (free it); NULL: no memory. */
char	*urlmask_dup(const char *url);
/*
 * A message about url from another library (libpq's "invalid
 * percent-encoded token: \"p%zzSECRET\"", or the whole URI) with every
 * part the mask hides, as written and %-decoded, replaced by "***" in
 * place, cut to msgsz; a URL with more than URLMASK_HIDDEN_MAX hidden
 * parts replaces the whole message. 0, or -1 for no memory (msg then
 * unchanged).
 */
int	 urlmask_scrub(const char *url, char *msg, size_t msgsz);

/* At most this many hidden parts of one URL are scrubbed (more are
 * still masked in urlmask's output). */
#define URLMASK_HIDDEN_MAX	64

#endif

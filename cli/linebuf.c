/*
 * A stream's bytes as whole lines, bounded (cli/linebuf.h).
 */
#include <stdlib.h>
#include <string.h>

#include "cli/linebuf.h"

#define LINEBUF_SLACK	65536	/* grown by this beyond what it needs */

/* Room for k more bytes and a NUL; 0 when there is no memory. */
static int
linebuf_grow(struct linebuf *b, size_t k)
{
	char	*t;

	if (b->len + k + 1 <= b->cap)
		return 1;
	if ((t = realloc(b->line, b->len + k + 1 + LINEBUF_SLACK)) == NULL)
		return 0;
	b->line = t;
	b->cap = b->len + k + 1 + LINEBUF_SLACK;
	return 1;
}

void
linebuf_put(struct linebuf *b, const char *p, size_t n, size_t max,
    linebuf_line *line, void *arg)
{
	const char	*nl;
	size_t		 k;

	while (n > 0) {
		nl = memchr(p, '\n', n);
		k = nl ? (size_t)(nl - p) : n;
		if (!b->skipping && (b->len + k > max || !linebuf_grow(b, k)))
			b->skipping = 1;
		if (!b->skipping) {
			memcpy(b->line + b->len, p, k);
			b->len += k;
		}
		if (nl == NULL)
			return;
		if (b->skipping)
			line(arg, NULL, 0);
		else {
			b->line[b->len] = '\0';
			line(arg, b->line, b->len);
		}
		b->len = 0;
		b->skipping = 0;
		p += k + 1;
		n -= k + 1;
	}
}

void
linebuf_free(struct linebuf *b)
{
	free(b->line);
	memset(b, 0, sizeof(*b));
}

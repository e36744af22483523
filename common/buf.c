/*
 * Growable, capped byte buffers.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/buf.h"

void
buf_init(struct buf *b, size_t max)
{
	memset(b, 0, sizeof(*b));
	b->max = max;
}

static size_t
buf_max(const struct buf *b)
{
	return b->max == 0 ? BUF_DEFAULT_MAX : b->max;
}

/* Make room for more bytes after len (plus one for a NUL). */
int
buf_reserve(struct buf *b, size_t more)
{
	unsigned char	*p;
	size_t		 need, cap;

	if (more > SIZE_MAX - b->len - 1 || b->len + more > buf_max(b)) {
		errno = EMSGSIZE;
		return -1;
	}
	need = b->len + more + 1;
	if (need <= b->cap)
		return 0;
	/* Reclaim consumed space before growing. */
	if (b->off > 0) {
		memmove(b->data, b->data + b->off, b->len - b->off);
		b->len -= b->off;
		b->off = 0;
		need = b->len + more + 1;
		if (need <= b->cap)
			return 0;
	}
	cap = b->cap < 256 ? 256 : b->cap;
	while (cap < need)
		cap = cap > SIZE_MAX / 2 ? need : cap * 2;
	if ((p = realloc(b->data, cap)) == NULL)
		return -1;
	b->data = p;
	b->cap = cap;
	return 0;
}

int
buf_add(struct buf *b, const void *data, size_t len)
{
	if (len == 0)
		return 0;
	if (buf_reserve(b, len) == -1)
		return -1;
	memcpy(b->data + b->len, data, len);
	b->len += len;
	return 0;
}

int
buf_addstr(struct buf *b, const char *s)
{
	return buf_add(b, s, strlen(s));
}

int
buf_addc(struct buf *b, int c)
{
	unsigned char	ch = (unsigned char)c;

	return buf_add(b, &ch, 1);
}

static int
buf_vaddf(struct buf *b, const char *fmt, va_list ap)
{
	va_list	ap2;
	int	n;

	va_copy(ap2, ap);
	n = vsnprintf(NULL, 0, fmt, ap2);
	va_end(ap2);
	if (n < 0)
		return -1;
	if (buf_reserve(b, (size_t)n) == -1)
		return -1;
	vsnprintf((char *)b->data + b->len, (size_t)n + 1, fmt, ap);
	b->len += (size_t)n;
	return 0;
}

int
buf_addf(struct buf *b, const char *fmt, ...)
{
	va_list	ap;
	int	rv;

	va_start(ap, fmt);
	rv = buf_vaddf(b, fmt, ap);
	va_end(ap);
	return rv;
}

unsigned char *
buf_head(const struct buf *b)
{
	return b->data == NULL ? NULL : b->data + b->off;
}

size_t
buf_left(const struct buf *b)
{
	return b->len - b->off;
}

void
buf_consume(struct buf *b, size_t n)
{
	if (n > b->len - b->off)
		n = b->len - b->off;
	b->off += n;
	if (b->off == b->len)
		b->off = b->len = 0;
}

char *
buf_cstr(struct buf *b)
{
	if (buf_reserve(b, 0) == -1)
		return NULL;
	b->data[b->len] = '\0';
	return (char *)b->data + b->off;
}

char *
buf_release(struct buf *b, size_t *lenp)
{
	char	*s;
	size_t	 len;

	if (buf_cstr(b) == NULL)
		return NULL;
	if (b->off > 0)
		memmove(b->data, b->data + b->off, b->len - b->off + 1);
	len = b->len - b->off;
	s = (char *)b->data;
	if (lenp != NULL)
		*lenp = len;
	b->data = NULL;
	b->len = b->cap = b->off = 0;
	return s;
}

void
buf_reset(struct buf *b)
{
	b->len = b->off = 0;
}

void
buf_free(struct buf *b)
{
	free(b->data);
	b->data = NULL;
	b->len = b->cap = b->off = 0;
}


/*
 * A bounded, zero-copy msgpack reader and a small writer.
 *
 * Why not msgpack-c's unpacker for decoding: msgpack_unpack_next() allocates
 * a msgpack_object array for a container's declared count before it has
 * read the elements, builds a whole object tree in a zone (a second copy of
 * every frame) and knows nothing of our limits. This reader checks every
 * length against the bytes left first, allocates nothing, and lets the
 * codec copy each string exactly once into the struct that owns it
 * (docs/protocol.md, "Why a reader of our own").
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/str.h"
#include "ipc/ipc.h"
#include "ipc/mp.h"

void
mp_reader_init(struct mp_reader *r, const void *data, size_t len, char *err,
    size_t errsz)
{
	r->p = data;
	r->end = r->p + len;
	r->depth = 0;
	r->failed = 0;
	r->err = err;
	r->errsz = errsz;
	if (err != NULL && errsz > 0)
		err[0] = '\0';
}

int
mp_fail(struct mp_reader *r, const char *fmt, ...)
{
	va_list	ap;

	if (r->failed)
		return -1;
	r->failed = 1;
	if (r->err != NULL && r->errsz > 0) {
		va_start(ap, fmt);
		vsnprintf(r->err, r->errsz, fmt, ap);
		va_end(ap);
	}
	return -1;
}

static size_t
mp_left(const struct mp_reader *r)
{
	return (size_t)(r->end - r->p);
}

/* Read an n-byte big-endian unsigned integer (n <= 8). */
static int
mp_be(struct mp_reader *r, size_t n, uint64_t *v, const char *what)
{
	size_t	i;

	if (mp_left(r) < n)
		return mp_fail(r, "%s: truncated", what);
	*v = 0;
	for (i = 0; i < n; i++)
		*v = (*v << 8) | r->p[i];
	r->p += n;
	return 0;
}

static const char *
mp_kind(unsigned char c)
{
	if (c <= 0x7f || (c >= 0xcc && c <= 0xd3) || c >= 0xe0)
		return "integer";
	if ((c >= 0x80 && c <= 0x8f) || c == 0xde || c == 0xdf)
		return "map";
	if ((c >= 0x90 && c <= 0x9f) || c == 0xdc || c == 0xdd)
		return "array";
	if ((c >= 0xa0 && c <= 0xbf) || (c >= 0xd9 && c <= 0xdb))
		return "string";
	if (c == 0xc0)
		return "nil";
	if (c == 0xc2 || c == 0xc3)
		return "boolean";
	if (c == 0xca || c == 0xcb)
		return "float";
	if (c >= 0xc4 && c <= 0xc6)
		return "binary";
	if (c == 0xc1)
		return "reserved byte 0xc1";
	return "extension";
}

/* Take the type byte; fail with "what: expected X, got Y" when none. */
static int
mp_tag(struct mp_reader *r, unsigned char *c, const char *what)
{
	if (r->failed)
		return -1;
	if (r->p >= r->end)
		return mp_fail(r, "%s: truncated", what);
	*c = *r->p++;
	return 0;
}

static int
mp_wrong(struct mp_reader *r, unsigned char c, const char *want,
    const char *what)
{
	return mp_fail(r, "%s: expected %s, got %s", what, want, mp_kind(c));
}

static int
mp_container(struct mp_reader *r, int map, uint32_t *n, uint32_t max,
    const char *what)
{
	unsigned char	c = 0;
	uint64_t	v = 0;
	size_t		least;

	if (mp_tag(r, &c, what) == -1)
		return -1;
	if (map && c >= 0x80 && c <= 0x8f)
		v = c & 0x0f;
	else if (!map && c >= 0x90 && c <= 0x9f)
		v = c & 0x0f;
	else if (c == (map ? 0xde : 0xdc)) {
		if (mp_be(r, 2, &v, what) == -1)
			return -1;
	} else if (c == (map ? 0xdf : 0xdd)) {
		if (mp_be(r, 4, &v, what) == -1)
			return -1;
	} else
		return mp_wrong(r, c, map ? "map" : "array", what);
	if (v > max)
		return mp_fail(r, "%s: %llu entries, at most %u allowed", what,
		    (unsigned long long)v, max);
	/* Each entry takes at least one byte (two for a key and a value). */
	least = map ? (size_t)v * 2 : (size_t)v;
	if (least > mp_left(r))
		return mp_fail(r, "%s: %llu entries declared, only %zu bytes "
		    "left", what, (unsigned long long)v, mp_left(r));
	if (r->depth >= IPC_DEPTH_MAX)
		return mp_fail(r, "%s: nested deeper than %d", what,
		    IPC_DEPTH_MAX);
	r->depth++;
	*n = (uint32_t)v;
	return 0;
}

int
mp_get_map(struct mp_reader *r, uint32_t *n, uint32_t max, const char *what)
{
	return mp_container(r, 1, n, max, what);
}

int
mp_get_array(struct mp_reader *r, uint32_t *n, uint32_t max,
    const char *what)
{
	return mp_container(r, 0, n, max, what);
}

void
mp_leave(struct mp_reader *r)
{
	if (r->depth > 0)
		r->depth--;
}

int
mp_get_str(struct mp_reader *r, const char **s, size_t *len, size_t max,
    const char *what)
{
	unsigned char	c = 0;
	uint64_t	v = 0;

	if (mp_tag(r, &c, what) == -1)
		return -1;
	if (c >= 0xa0 && c <= 0xbf)
		v = c & 0x1f;
	else if (c >= 0xd9 && c <= 0xdb) {
		if (mp_be(r, (size_t)1 << (c - 0xd9), &v, what) == -1)
			return -1;
	} else
		return mp_wrong(r, c, "string", what);
	if (v > max)
		return mp_fail(r, "%s: %llu bytes, at most %zu allowed", what,
		    (unsigned long long)v, max);
	if (v > mp_left(r))
		return mp_fail(r, "%s: %llu bytes declared, only %zu left",
		    what, (unsigned long long)v, mp_left(r));
	/* A NUL would silently cut the C string the codec hands out. */
	if (memchr(r->p, '\0', (size_t)v) != NULL)
		return mp_fail(r, "%s: contains a NUL byte", what);
	*s = (const char *)r->p;
	*len = (size_t)v;
	r->p += v;
	return 0;
}

int
mp_get_strdup(struct mp_reader *r, char **s, size_t max, const char *what)
{
	const char	*p;
	size_t		 len;
	char		*d;

	if (mp_get_str(r, &p, &len, max, what) == -1)
		return -1;
	if ((d = malloc(len + 1)) == NULL)
		return mp_fail(r, "%s: out of memory", what);
	memcpy(d, p, len);
	d[len] = '\0';
	*s = d;
	return 0;
}

int
mp_get_u64(struct mp_reader *r, uint64_t *v, const char *what)
{
	unsigned char	c = 0;
	uint64_t	u = 0;

	if (mp_tag(r, &c, what) == -1)
		return -1;
	if (c <= 0x7f) {
		*v = c;
		return 0;
	}
	if (c >= 0xcc && c <= 0xcf) {
		if (mp_be(r, (size_t)1 << (c - 0xcc), v, what) == -1)
			return -1;
		return 0;
	}
	if (c >= 0xd0 && c <= 0xd3) {
		/* Signed encodings are fine when the value is not negative. */
		if (mp_be(r, (size_t)1 << (c - 0xd0), &u, what) == -1)
			return -1;
		if (u >> ((8u << (c - 0xd0)) - 1))
			return mp_fail(r, "%s: negative", what);
		*v = u;
		return 0;
	}
	if (c >= 0xe0)
		return mp_fail(r, "%s: negative", what);
	return mp_wrong(r, c, "integer", what);
}

int
mp_get_u32(struct mp_reader *r, uint32_t *v, const char *what)
{
	uint64_t	u = 0;

	if (mp_get_u64(r, &u, what) == -1)
		return -1;
	if (u > UINT32_MAX)
		return mp_fail(r, "%s: %llu does not fit 32 bits", what,
		    (unsigned long long)u);
	*v = (uint32_t)u;
	return 0;
}

int
mp_get_bool(struct mp_reader *r, int *v, const char *what)
{
	unsigned char	c = 0;

	if (mp_tag(r, &c, what) == -1)
		return -1;
	if (c != 0xc2 && c != 0xc3)
		return mp_wrong(r, c, "boolean", what);
	*v = c == 0xc3;
	return 0;
}

int
mp_end(struct mp_reader *r)
{
	if (r->failed)
		return -1;
	if (r->p != r->end)
		return mp_fail(r, "%zu trailing bytes after the message",
		    mp_left(r));
	/* Every container a getter opened is closed: a decoder that leaves
	   one open reads what follows at the wrong depth. */
	if (r->depth != 0)
		return mp_fail(r, "decoder: %d containers left open",
		    r->depth);
	return 0;
}

int
mp_get_key(struct mp_reader *r, const char *const *keys, int nkeys,
    uint32_t *seen, const char *what)
{
	char		 esc[IPC_NAME_MAX * 4 + 1];
	const char	*s;
	size_t		 len;
	int		 i;

	if (mp_get_str(r, &s, &len, IPC_NAME_MAX, what) == -1)
		return -1;
	for (i = 0; i < nkeys; i++) {
		if (strlen(keys[i]) != len || memcmp(keys[i], s, len) != 0)
			continue;
		if (*seen & (1u << i))
			return mp_fail(r, "%s: duplicate key \"%s\"", what,
			    keys[i]);
		*seen |= 1u << i;
		return i;
	}
	/* The key is bounded, but may hold control bytes: escape it. */
	str_escape(esc, sizeof(esc), s, len);
	return mp_fail(r, "%s: unknown key \"%s\"", what, esc);
}

static int
mp_put(struct buf *b, const unsigned char *p, size_t n)
{
	return buf_add(b, p, n);
}

/* Type byte c followed by v in n big-endian bytes. */
static int
mp_put_be(struct buf *b, unsigned char c, uint64_t v, size_t n)
{
	unsigned char	t[9];
	size_t		i;

	t[0] = c;
	for (i = 0; i < n; i++)
		t[1 + i] = (unsigned char)(v >> (8 * (n - 1 - i)));
	return mp_put(b, t, n + 1);
}

int
mp_put_map(struct buf *b, uint32_t n)
{
	if (n <= 15)
		return mp_put_be(b, (unsigned char)(0x80 | n), 0, 0);
	if (n <= UINT16_MAX)
		return mp_put_be(b, 0xde, n, 2);
	return mp_put_be(b, 0xdf, n, 4);
}

int
mp_put_array(struct buf *b, uint32_t n)
{
	if (n <= 15)
		return mp_put_be(b, (unsigned char)(0x90 | n), 0, 0);
	if (n <= UINT16_MAX)
		return mp_put_be(b, 0xdc, n, 2);
	return mp_put_be(b, 0xdd, n, 4);
}

int
mp_put_str(struct buf *b, const char *s, size_t len)
{
	int	rv;

	if (len > UINT32_MAX) {
		errno = EMSGSIZE;
		return -1;
	}
	if (len <= 31)
		rv = mp_put_be(b, (unsigned char)(0xa0 | len), 0, 0);
	else if (len <= UINT8_MAX)
		rv = mp_put_be(b, 0xd9, len, 1);
	else if (len <= UINT16_MAX)
		rv = mp_put_be(b, 0xda, len, 2);
	else
		rv = mp_put_be(b, 0xdb, len, 4);
	if (rv == -1)
		return -1;
	return buf_add(b, s, len);
}

int
mp_put_cstr(struct buf *b, const char *s)
{
	return mp_put_str(b, s, strlen(s));
}

int
mp_put_u64(struct buf *b, uint64_t v)
{
	if (v <= 0x7f)
		return mp_put_be(b, (unsigned char)v, 0, 0);
	if (v <= UINT8_MAX)
		return mp_put_be(b, 0xcc, v, 1);
	if (v <= UINT16_MAX)
		return mp_put_be(b, 0xcd, v, 2);
	if (v <= UINT32_MAX)
		return mp_put_be(b, 0xce, v, 4);
	return mp_put_be(b, 0xcf, v, 8);
}

int
mp_put_bool(struct buf *b, int v)
{
	return mp_put_be(b, v ? 0xc3 : 0xc2, 0, 0);
}

/*
 * Bounded msgpack primitives for the IPC codec (internal to ipc/).
 *
 * The reader never allocates: it walks a frame that is already in memory,
 * and every declared length or count is checked against the bytes left
 * before the caller may allocate anything for it (a 20-byte frame claiming
 * 2^32 elements is refused, not honoured). The first error sticks: later
 * getters fail at once, so a decoder can call a run of getters and check
 * once. Strings are borrowed from the frame.
 *
 * The writer appends to a struct buf and picks the smallest encoding, as
 * msgpack-c's packer does, so either side can be swapped for msgpack-c.
 */
#ifndef WARREN_IPC_MP_H
#define WARREN_IPC_MP_H

#include <stddef.h>
#include <stdint.h>

#include "common/buf.h"

struct mp_reader {
	const unsigned char	*p;
	const unsigned char	*end;
	int			 depth;		/* open containers */
	int			 failed;
	char			*err;		/* caller's buffer */
	size_t			 errsz;
};

/* mp.c: reading */
void	 mp_reader_init(struct mp_reader *r, const void *data, size_t len,
	    char *err, size_t errsz);
/* Record the first error (printf-style); always returns -1. */
int	 mp_fail(struct mp_reader *r, const char *fmt, ...)
	    __attribute__((format(printf, 2, 3)));
/* A map or array header: n entries, n <= max and plausible for the bytes
   left; counts one level of nesting (mp_leave closes it). */
int	 mp_get_map(struct mp_reader *r, uint32_t *n, uint32_t max,
	    const char *what);
int	 mp_get_array(struct mp_reader *r, uint32_t *n, uint32_t max,
	    const char *what);
void	 mp_leave(struct mp_reader *r);
/* A str of at most max bytes with no NUL in it; *s is borrowed. */
int	 mp_get_str(struct mp_reader *r, const char **s, size_t *len,
	    size_t max, const char *what);
/* The same, copied to a NUL-terminated malloc'd string. */
int	 mp_get_strdup(struct mp_reader *r, char **s, size_t max,
	    const char *what);
/* A non-negative integer of any msgpack width that fits. */
int	 mp_get_u64(struct mp_reader *r, uint64_t *v, const char *what);
int	 mp_get_u32(struct mp_reader *r, uint32_t *v, const char *what);
int	 mp_get_bool(struct mp_reader *r, int *v, const char *what);
/* Everything consumed: "trailing bytes" otherwise. */
int	 mp_end(struct mp_reader *r);
/*
 * Read a map key and find it in keys[0..nkeys): its index, or -1 for an
 * unknown key or one already in *seen (a bit per index; nkeys <= 32).
 */
int	 mp_get_key(struct mp_reader *r, const char *const *keys, int nkeys,
	    uint32_t *seen, const char *what);

/* mp.c: writing (-1 with errno from struct buf: ENOMEM, EMSGSIZE) */
int	 mp_put_map(struct buf *b, uint32_t n);
int	 mp_put_array(struct buf *b, uint32_t n);
int	 mp_put_str(struct buf *b, const char *s, size_t len);
int	 mp_put_cstr(struct buf *b, const char *s);
int	 mp_put_u64(struct buf *b, uint64_t v);
int	 mp_put_bool(struct buf *b, int v);

#endif

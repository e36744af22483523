/*
 * A growable byte buffer with a hard size cap.
 *
 * Used for IPC queues, HTTP bodies and tool output. Every growth is checked
 * for overflow and against buf.max (0 means BUF_DEFAULT_MAX); functions
 * return -1 with errno set (ENOMEM, EMSGSIZE) and leave the buffer as it was.
 */
#ifndef WARREN_BUF_H
#define WARREN_BUF_H

#include <stdarg.h>
#include <stddef.h>

#define BUF_DEFAULT_MAX	(256u * 1024 * 1024)

struct buf {
	unsigned char	*data;
	size_t		 len;	/* bytes in use */
	size_t		 cap;	/* bytes allocated */
	size_t		 off;	/* bytes already consumed from the front */
	size_t		 max;	/* cap on len, 0 = BUF_DEFAULT_MAX */
};

/* buf.c */
void	 buf_init(struct buf *b, size_t max);
int	 buf_reserve(struct buf *b, size_t more);
int	 buf_add(struct buf *b, const void *data, size_t len);
int	 buf_addstr(struct buf *b, const char *s);
int	 buf_addc(struct buf *b, int c);
int	 buf_addf(struct buf *b, const char *fmt, ...)
	    __attribute__((format(printf, 2, 3)));
/* Unconsumed bytes start here; valid until the next call that grows b. */
unsigned char *buf_head(const struct buf *b);
size_t	 buf_left(const struct buf *b);
void	 buf_consume(struct buf *b, size_t n);
/* NUL-terminate without counting the NUL; NULL on allocation failure. */
char	*buf_cstr(struct buf *b);
/* Hand the bytes to the caller (NUL-terminated) and reset b. */
char	*buf_release(struct buf *b, size_t *lenp);
void	 buf_reset(struct buf *b);
void	 buf_free(struct buf *b);

#endif

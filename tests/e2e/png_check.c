/*
 * Decoding a PNG well enough to count colours (png_check.h): the chunks,
 * the IDAT stream inflated, each row unfiltered (PNG filters 0-4).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>
#include <zlib.h>

#include "tests/e2e/harness.h"
#include "tests/e2e/png_check.h"

struct png {
	uint32_t	 w, h;
	int		 bpp;		/* bytes per pixel: 3 or 4 */
	unsigned char	*idat;
	size_t		 nidat;
};

static uint32_t
png_be32(const unsigned char *p)
{
	return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 |
	    (uint32_t)p[2] << 8 | p[3];
}

static void
png_chunks(const unsigned char *d, size_t n, struct png *p)
{
	size_t		off = 8;
	uint32_t	len;

	assert_true(n > 8 && memcmp(d, "\x89PNG\r\n\x1a\n", 8) == 0);
	while (off + 12 <= n) {
		len = png_be32(d + off);
		assert_true(len <= n - off - 12);
		if (memcmp(d + off + 4, "IHDR", 4) == 0) {
			p->w = png_be32(d + off + 8);
			p->h = png_be32(d + off + 12);
			assert_int_equal(d[off + 16], 8);	/* depth */
			assert_true(d[off + 17] == 2 || d[off + 17] == 6);
			assert_int_equal(d[off + 20], 0);	/* interlace */
			p->bpp = d[off + 17] == 6 ? 4 : 3;
		} else if (memcmp(d + off + 4, "IDAT", 4) == 0) {
			p->idat = realloc(p->idat, p->nidat + len);
			memcpy(p->idat + p->nidat, d + off + 8, len);
			p->nidat += len;
		}
		off += 12 + len;
	}
	assert_true(p->w > 0 && p->h > 0 && p->nidat > 0);
}

static int
png_paeth(int a, int b, int c)
{
	int	p = a + b - c, pa = abs(p - a), pb = abs(p - b), pc = abs(p - c);

	return pa <= pb && pa <= pc ? a : pb <= pc ? b : c;
}

/* Undo row y's filter in place; prev is the row above (NULL for 0). */
static void
png_unfilter(unsigned char *row, const unsigned char *prev, size_t len,
    int ft, int bpp)
{
	size_t	i;
	int	a, b, c;

	for (i = 0; i < len; i++) {
		a = i >= (size_t)bpp ? row[i - bpp] : 0;
		b = prev != NULL ? prev[i] : 0;
		c = prev != NULL && i >= (size_t)bpp ? prev[i - bpp] : 0;
		switch (ft) {
		case 1: row[i] += a; break;
		case 2: row[i] += b; break;
		case 3: row[i] += (a + b) / 2; break;
		case 4: row[i] += png_paeth(a, b, c); break;
		default: break;
		}
	}
}

void
png_check_colours(const char *path, uint32_t ca, uint32_t cb, size_t min)
{
	struct png	 p;
	unsigned char	*d, *raw, *row, *prev = NULL;
	size_t		 n, stride, y, x, na = 0, nb = 0;
	uLongf		 rawlen;
	FILE		*f;
	uint32_t	 px;

	memset(&p, 0, sizeof(p));
	assert_non_null(f = fopen(path, "rb"));
	d = malloc(64 << 20);
	n = fread(d, 1, 64 << 20, f);
	fclose(f);
	png_chunks(d, n, &p);
	stride = (size_t)p.w * (size_t)p.bpp;
	rawlen = (uLongf)((stride + 1) * p.h);
	raw = malloc(rawlen);
	assert_int_equal(uncompress(raw, &rawlen, p.idat, p.nidat), Z_OK);
	assert_int_equal(rawlen, (stride + 1) * p.h);
	for (y = 0; y < p.h; y++) {
		row = raw + y * (stride + 1);
		png_unfilter(row + 1, prev, stride, row[0], p.bpp);
		prev = row + 1;
		for (x = 0; x < p.w; x++) {
			px = (uint32_t)prev[x * p.bpp] << 16 |
			    (uint32_t)prev[x * p.bpp + 1] << 8 |
			    prev[x * p.bpp + 2];
			na += px == ca;
			nb += px == cb;
		}
	}
	free(raw);
	free(p.idat);
	free(d);
	if (na < min || nb < min)
		fail_msg("%s (%ux%u): %zu pixels of #%06x, %zu of #%06x; want "
		    "%zu of each", path, p.w, p.h, na, ca, nb, cb, min);
}

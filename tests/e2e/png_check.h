/*
 * A screenshot's pixels, for test_report_chromium: decode a PNG (8-bit
 * RGB or RGBA, not interlaced: what Chromium writes) with zlib and count
 * the pixels of given colours.
 */
#ifndef WARREN_PNG_CHECK_H
#define WARREN_PNG_CHECK_H

#include <stddef.h>
#include <stdint.h>

/* Fails the test unless the image at path has at least min pixels of
 * colour a and min of colour b (0xRRGGBB). */
void	png_check_colours(const char *path, uint32_t a, uint32_t b,
	    size_t min);

#endif

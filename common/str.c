/*
 * Bounded strings and escaping of untrusted text for terminals and logs.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/str.h"

/*
 * Length of the valid UTF-8 sequence at s (at most len bytes), 0 if the bytes
 * there are not one. Overlong forms, surrogates and C1 controls (U+0080 to
 * U+009F, which some terminals obey as escape sequences) count as invalid.
 */
static size_t
utf8_seq(const unsigned char *s, size_t len)
{
	uint32_t	cp;
	size_t		n, i;

	if (s[0] < 0x80)
		return 1;
	if (s[0] >= 0xc2 && s[0] <= 0xdf)
		n = 2, cp = s[0] & 0x1f;
	else if (s[0] >= 0xe0 && s[0] <= 0xef)
		n = 3, cp = s[0] & 0x0f;
	else if (s[0] >= 0xf0 && s[0] <= 0xf4)
		n = 4, cp = s[0] & 0x07;
	else
		return 0;
	if (n > len)
		return 0;
	for (i = 1; i < n; i++) {
		if ((s[i] & 0xc0) != 0x80)
			return 0;
		cp = (cp << 6) | (s[i] & 0x3f);
	}
	if ((n == 3 && cp < 0x800) || (n == 4 && (cp < 0x10000 || cp > 0x10ffff)))
		return 0;
	if (cp >= 0xd800 && cp <= 0xdfff)
		return 0;
	if (cp >= 0x80 && cp <= 0x9f)
		return 0;
	return n;
}

int
str_utf8_valid(const char *s, size_t len)
{
	const unsigned char	*p = (const unsigned char *)s;
	size_t			 i = 0, n;

	while (i < len) {
		if ((n = utf8_seq(p + i, len - i)) == 0)
			return 0;
		i += n;
	}
	return 1;
}

/*
 * Is the UTF-8 sequence at s (n bytes) a bidirectional control? They are
 * valid text, but they reorder what a terminal shows, so a line can read
 * differently from what it holds ("Trojan Source"): U+061C, U+200E, U+200F,
 * U+202A to U+202E and U+2066 to U+2069 are escaped like control bytes.
 */
static int
bidi_control(const unsigned char *s, size_t n)
{
	if (n == 2)
		return s[0] == 0xd8 && s[1] == 0x9c;
	if (n != 3 || s[0] != 0xe2)
		return 0;
	if (s[1] == 0x80)
		return s[2] == 0x8e || s[2] == 0x8f || (s[2] >= 0xaa && s[2] <= 0xae);
	return s[1] == 0x81 && s[2] >= 0xa6 && s[2] <= 0xa9;
}

/*
 * Is the UTF-8 sequence at s (n bytes) a character that shows as nothing
 * (STR_ESC_STRICT)? Text can hide in them: zero-width spaces and joiners,
 * the soft hyphen, U+2028/U+2029, U+2060 to U+206F, the BOM, interlinear
 * annotations, tag characters (U+E0000 to U+E007F) and the supplementary
 * variation selectors (U+E0100 to U+E01EF).
 */
static int
invisible(const unsigned char *s, size_t n)
{
	static const uint32_t	range[][2] = {
		{ 0x00ad, 0x00ad }, { 0x034f, 0x034f }, { 0x115f, 0x1160 },
		{ 0x17b4, 0x17b5 }, { 0x180b, 0x180e }, { 0x200b, 0x200f },
		{ 0x2028, 0x202e }, { 0x2060, 0x206f }, { 0x3164, 0x3164 },
		{ 0xfeff, 0xfeff }, { 0xffa0, 0xffa0 }, { 0xfff9, 0xfffb },
		{ 0x1d173, 0x1d17a }, { 0xe0000, 0xe007f },
		{ 0xe0100, 0xe01ef },
	};
	uint32_t	cp;
	size_t		i;

	if (n < 2)
		return 0;
	cp = s[0] & (n == 2 ? 0x1f : n == 3 ? 0x0f : 0x07);
	for (i = 1; i < n; i++)
		cp = (cp << 6) | (s[i] & 0x3f);
	for (i = 0; i < sizeof(range) / sizeof(range[0]); i++)
		if (cp >= range[i][0] && cp <= range[i][1])
			return 1;
	return 0;
}

/* Is this single byte safe to print as itself? */
static int
byte_safe(unsigned char c, int flags)
{
	if (c == '\n' || c == '\t')
		return (flags & STR_ESC_KEEP_NL) != 0;
	return c >= 0x20 && c != 0x7f;
}

/*
 * Escape src into dst, writing whole pieces only (never half an escape or
 * half a UTF-8 sequence) while they fit in limit bytes. Returns the length
 * the full escape would have; *written gets what was written.
 */
static size_t
escape_into(char *dst, size_t limit, const char *src, size_t len, int flags,
    size_t *written)
{
	const unsigned char	*p = (const unsigned char *)src;
	size_t			 i = 0, out = 0, w = 0, n;
	char			 tmp[5];
	const char		*piece;

	while (i < len) {
		n = utf8_seq(p + i, len - i);
		if ((n == 1 && !byte_safe(p[i], flags)) || bidi_control(p + i,
		    n) || ((flags & STR_ESC_STRICT) && invisible(p + i, n)))
			n = 0;
		if (n == 1 && p[i] == '\\' && (flags & STR_ESC_STRICT)) {
			piece = "\\\\";
			n = 2;
			i++;
		} else if (n > 0) {
			piece = (const char *)p + i;
			i += n;
		} else {
			snprintf(tmp, sizeof(tmp), "\\x%02x", p[i]);
			piece = tmp;
			n = 4;
			i++;
		}
		if (dst != NULL && w == out && out + n <= limit) {
			memcpy(dst + out, piece, n);
			w = out + n;
		}
		out += n;
	}
	*written = w;
	return out;
}

size_t
str_escape_flags(char *dst, size_t dstsz, const char *src, size_t len,
    int flags)
{
	size_t	w;

	if (dst == NULL || dstsz == 0)
		return escape_into(NULL, 0, src, len, flags, &w);
	len = escape_into(dst, dstsz - 1, src, len, flags, &w);
	dst[w] = '\0';
	return len;
}

/* Escape for a log line: a record that does not fit ends in "...". */
size_t
str_escape(char *dst, size_t dstsz, const char *src, size_t len)
{
	size_t	n, w;

	if (dst == NULL || dstsz < 4)
		return str_escape_flags(dst, dstsz, src, len, 0);
	n = escape_into(dst, dstsz - 1, src, len, 0, &w);
	if (n > w) {
		escape_into(dst, dstsz - 4, src, len, 0, &w);
		memcpy(dst + w, "...", 3);
		w += 3;
	}
	dst[w] = '\0';
	return n;
}

size_t
str_escape_len(const char *src, size_t len, int flags)
{
	return str_escape_flags(NULL, 0, src, len, flags);
}

char *
str_escape_dup(const char *src, size_t len, int flags)
{
	size_t	 n = str_escape_flags(NULL, 0, src, len, flags);
	char	*dst;

	if ((dst = malloc(n + 1)) == NULL)
		return NULL;
	str_escape_flags(dst, n + 1, src, len, flags);
	return dst;
}

int
str_has_prefix(const char *s, const char *prefix)
{
	return strncmp(s, prefix, strlen(prefix)) == 0;
}

char *
str_ndup(const char *s, size_t len)
{
	char	*d;

	if ((d = malloc(len + 1)) == NULL)
		return NULL;
	memcpy(d, s, len);
	d[len] = '\0';
	return d;
}

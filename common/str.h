/*
 * Bounded string helpers and terminal-safe escaping.
 *
 * Text from an LLM, a tool or a file is hostile to whoever prints it: before
 * it reaches a terminal or a log, str_escape turns every control character,
 * C1 control, bidirectional control (U+202E and kin) and invalid UTF-8 byte
 * into a visible \xNN (other valid UTF-8 text passes unchanged, so
 * non-English output stays readable).
 */
#ifndef WARREN_STR_H
#define WARREN_STR_H

#include <stddef.h>

/* Keep '\n' and '\t' (multi-line output); otherwise they are escaped too. */
#define STR_ESC_KEEP_NL	0x01
/*
 * For a review (warren diff): a backslash is written \\, so every \xNN
 * read is an escaped byte, and invisible format characters (zero-width
 * spaces and joiners, U+2060 to U+206F, the BOM, tag characters and the
 * supplementary variation selectors) are escaped like bidi controls.
 */
#define STR_ESC_STRICT	0x02

/* str.c */
size_t	 str_escape(char *dst, size_t dstsz, const char *src, size_t len);
size_t	 str_escape_flags(char *dst, size_t dstsz, const char *src, size_t len,
	    int flags);
char	*str_escape_dup(const char *src, size_t len, int flags);
size_t	 str_escape_len(const char *src, size_t len, int flags);
int	 str_has_prefix(const char *s, const char *prefix);
char	*str_ndup(const char *s, size_t len);
int	 str_utf8_valid(const char *s, size_t len);

#endif

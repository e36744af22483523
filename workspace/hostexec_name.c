/*
 * Names compared the way a case-insensitive filesystem may compare them
 * (hostexec.h): a path's parts folded so that every spelling some
 * filesystem treats as one of the table's names folds to that name.
 *
 * The table's names are ASCII, so what matters is which spellings a
 * filesystem takes for ASCII: upper and lower case (vfat, exFAT, NTFS,
 * SMB, ext4 and tmpfs casefold, WSL's drvfs); the code points whose case
 * folding or upper-casing is ASCII (KELVIN SIGN is k, LONG S is s, DOTLESS
 * i and DOTTED I are i, SHARP S is ss, the ligatures ff fi fl ffi ffl st);
 * the default-ignorable code points, which ext4's casefold dropped before
 * Linux 6.12 (".g\u200cit" was ".git", as on HFS+); trailing dots and
 * spaces, which vfat and Windows drop (".git." is ".git"); and an NTFS
 * stream (".git::$INDEX_ALLOCATION" is the directory). Anything else is
 * kept byte for byte: a name with a code point left over cannot fold to
 * an ASCII name, and invalid UTF-8 is no name a casefold filesystem takes.
 * Folding only ever shortens.
 */
#include <limits.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "workspace/hostexec.h"

/* Default_Ignorable_Code_Point (Unicode DerivedCoreProperties). */
static const uint32_t hx_ignorable[][2] = {
	{ 0x00ad, 0x00ad }, { 0x034f, 0x034f }, { 0x061c, 0x061c },
	{ 0x115f, 0x1160 }, { 0x17b4, 0x17b5 }, { 0x180b, 0x180f },
	{ 0x200b, 0x200f }, { 0x202a, 0x202e }, { 0x2060, 0x206f },
	{ 0x3164, 0x3164 }, { 0xfe00, 0xfe0f }, { 0xfeff, 0xfeff },
	{ 0xffa0, 0xffa0 }, { 0xfff0, 0xfff8 }, { 0x1bca0, 0x1bca3 },
	{ 0x1d173, 0x1d17a }, { 0xe0000, 0xe0fff },
};

/* Code points that fold, upper-case or lower-case to ASCII. */
static const struct {
	uint32_t	 cp;
	const char	*ascii;
} hx_to_ascii[] = {
	{ 0x00df, "ss" },	/* LATIN SMALL LETTER SHARP S */
	{ 0x0130, "i" },	/* LATIN CAPITAL LETTER I WITH DOT ABOVE */
	{ 0x0131, "i" },	/* LATIN SMALL LETTER DOTLESS I */
	{ 0x017f, "s" },	/* LATIN SMALL LETTER LONG S */
	{ 0x1e9e, "ss" },	/* LATIN CAPITAL LETTER SHARP S */
	{ 0x212a, "k" },	/* KELVIN SIGN */
	{ 0xfb00, "ff" }, { 0xfb01, "fi" }, { 0xfb02, "fl" },
	{ 0xfb03, "ffi" }, { 0xfb04, "ffl" }, { 0xfb05, "st" },
	{ 0xfb06, "st" },
};

/* One UTF-8 sequence at s (n bytes): its code point and *len, or -1
 * (*len 1) for a byte that starts none. Overlong forms are refused. */
static int32_t
hx_utf8(const unsigned char *s, size_t n, size_t *len)
{
	static const uint32_t	 min[] = { 0, 0, 0x80, 0x800, 0x10000 };
	uint32_t		 cp;
	size_t			 k, i;

	*len = 1;
	if (s[0] < 0x80)
		return s[0];
	if ((s[0] & 0xe0) == 0xc0)
		k = 2, cp = s[0] & 0x1f;
	else if ((s[0] & 0xf0) == 0xe0)
		k = 3, cp = s[0] & 0x0f;
	else if ((s[0] & 0xf8) == 0xf0)
		k = 4, cp = s[0] & 0x07;
	else
		return -1;
	if (k > n)
		return -1;
	for (i = 1; i < k; i++) {
		if ((s[i] & 0xc0) != 0x80)
			return -1;
		cp = cp << 6 | (s[i] & 0x3f);
	}
	if (cp < min[k] || cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff))
		return -1;
	*len = k;
	return (int32_t)cp;
}

static int
hx_is_ignorable(uint32_t cp)
{
	size_t	i;

	for (i = 0; i < sizeof(hx_ignorable) / sizeof(hx_ignorable[0]); i++)
		if (cp >= hx_ignorable[i][0] && cp <= hx_ignorable[i][1])
			return 1;
	return 0;
}

static const char *
hx_ascii_of(uint32_t cp)
{
	size_t	i;

	for (i = 0; i < sizeof(hx_to_ascii) / sizeof(hx_to_ascii[0]); i++)
		if (hx_to_ascii[i].cp == cp)
			return hx_to_ascii[i].ascii;
	return NULL;
}

/* One part of a path, n bytes at s, folded into out; out's length. */
static size_t
hx_fold_part(const char *s, size_t n, char *out)
{
	const unsigned char	*u = (const unsigned char *)s;
	const char		*a;
	size_t			 i = 0, o = 0, len;
	int32_t			 cp;

	while (i < n) {
		cp = hx_utf8(u + i, n - i, &len);
		if (cp == ':')		/* an NTFS stream of the name */
			break;
		if (cp >= 'A' && cp <= 'Z')
			out[o++] = (char)(cp - 'A' + 'a');
		else if (cp >= 0 && (a = hx_ascii_of((uint32_t)cp)) != NULL)
			for (; *a != '\0'; a++)
				out[o++] = *a;
		else if (cp < 0 || !hx_is_ignorable((uint32_t)cp)) {
			memcpy(out + o, s + i, len);
			o += len;
		}
		i += len;
	}
	while (o > 0 && (out[o - 1] == '.' || out[o - 1] == ' '))
		o--;
	return o;
}

size_t
hostexec_fold(const char *path, char *out, size_t outsz)
{
	const char	*p = path, *slash;
	size_t		 o = 0, n;

	if (outsz < strlen(path) + 1)
		return (size_t)-1;
	for (;;) {
		slash = strchr(p, '/');
		n = slash != NULL ? (size_t)(slash - p) : strlen(p);
		o += hx_fold_part(p, n, out + o);
		if (slash == NULL)
			break;
		out[o++] = '/';
		p = slash + 1;
	}
	out[o] = '\0';
	return o;
}

static int
hx_lower(char c)
{
	return c >= 'A' && c <= 'Z' ? c - 'A' + 'a' : c;
}

/* Does the folded part (n bytes at s) match the pn bytes of pat, where
 * '*' is any run of bytes? */
int
hostexec_glob(const char *pat, size_t pn, const char *s, size_t n)
{
	size_t	i;

	for (; pn > 0; pat++, pn--, s++, n--) {
		if (*pat == '*') {
			for (i = 0; i <= n; i++)
				if (hostexec_glob(pat + 1, pn - 1, s + i,
				    n - i))
					return 1;
			return 0;
		}
		if (n == 0 || *s != hx_lower(*pat))
			return 0;
	}
	return n == 0;
}

/*
 * An 8.3 short name (BASE~N or BASE~N.EXT, folded): on vfat and NTFS it
 * names the file whose long name it abbreviates, so GIT~1 may be .git and
 * VSCODE~1 .vscode. What it names is not known here: it counts as one of
 * the names.
 */
int
hostexec_shortname(const char *s, size_t n)
{
	size_t	i = 0, base, digits = 0, ext = 0;

	while (i < n && s[i] != '~' && s[i] != '.')
		i++;
	if ((base = i) == 0 || base > 7 || i == n || s[i] != '~')
		return 0;
	for (i++; i < n && s[i] >= '0' && s[i] <= '9'; i++)
		digits++;
	if (digits == 0 || base + 1 + digits > 8)
		return 0;
	if (i < n && s[i] == '.')
		for (i++; i < n && s[i] != '.'; i++)
			ext++;
	return i == n && ext <= 3;
}

int
hostexec_is(const char *name, const char *ascii)
{
	char	buf[NAME_MAX + 1];
	size_t	n = strlen(name);

	if (n > NAME_MAX)
		return 0;
	n = hx_fold_part(name, n, buf);
	return n == strlen(ascii) && memcmp(buf, ascii, n) == 0;
}

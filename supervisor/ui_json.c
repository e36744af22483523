/*
 * One --json event line, written straight into a buffer that lives for
 * the run: no jansson tree built and dumped for each event (issue 33:
 * 30,000 instructions and a dozen mallocs an event, a fifth of the
 * supervisor's CPU on a 1,000-agent replay). The bytes are jansson's
 * json_dumps(JSON_COMPACT | JSON_ENSURE_ASCII) of the same object, keys
 * in the order written (test_ui_json compares them). Text that is not
 * valid UTF-8 is escaped first (common/str.h), as jtext() does.
 */
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/log.h"
#include "common/price.h"
#include "common/str.h"
#include "common/xmalloc.h"
#include "supervisor/run.h"

static struct {
	char	*b;
	size_t	 n, cap;
	int	 first;		/* no member yet in the open object */
} uj;

static void
ui_json_put(const char *s, size_t len)
{
	size_t	cap;

	if (uj.n + len + 1 > uj.cap) {
		for (cap = uj.cap != 0 ? uj.cap : 1024; cap < uj.n + len + 1;)
			cap *= 2;
		uj.b = xreallocarray(uj.b, cap, 1);
		uj.cap = cap;
	}
	memcpy(uj.b + uj.n, s, len);
	uj.n += len;
}

static void
ui_json_putc(char c)
{
	ui_json_put(&c, 1);
}

/* "key": after a comma unless it is the object's first member. */
static void
ui_json_key(const char *key)
{
	if (!uj.first)
		ui_json_putc(',');
	uj.first = 0;
	ui_json_putc('"');
	ui_json_put(key, strlen(key));
	ui_json_put("\":", 2);
}

/* \uXXXX of a code unit, upper-case hex as jansson writes it. */
static void
ui_json_u(unsigned cu)
{
	static const char	hex[] = "0123456789ABCDEF";
	char			seq[6] = { '\\', 'u', hex[cu >> 12 & 15],
				    hex[cu >> 8 & 15], hex[cu >> 4 & 15],
				    hex[cu & 15] };

	ui_json_put(seq, sizeof(seq));
}

/* The code point of the valid UTF-8 sequence at s; *n its length. */
static unsigned
ui_json_cp(const unsigned char *s, size_t *n)
{
	unsigned	cp;
	size_t		i;

	if (s[0] < 0xe0)
		*n = 2, cp = s[0] & 0x1f;
	else if (s[0] < 0xf0)
		*n = 3, cp = s[0] & 0x0f;
	else
		*n = 4, cp = s[0] & 0x07;
	for (i = 1; i < *n; i++)
		cp = cp << 6 | (s[i] & 0x3f);
	return cp;
}

/* s[0..len) as a JSON string; s is valid UTF-8. */
static void
ui_json_quote(const char *s, size_t len)
{
	const unsigned char	*p = (const unsigned char *)s;
	size_t			 i, run, n;
	unsigned		 cp;

	ui_json_putc('"');
	for (i = 0; i < len; i += n) {
		for (run = i; run < len && p[run] >= 0x20 && p[run] < 0x80 &&
		    p[run] != '"' && p[run] != '\\'; run++)
			;
		ui_json_put(s + i, run - i);
		if ((i = run) == len)
			break;
		n = 1;
		switch (p[i]) {
		case '"':	ui_json_put("\\\"", 2); break;
		case '\\':	ui_json_put("\\\\", 2); break;
		case '\b':	ui_json_put("\\b", 2); break;
		case '\f':	ui_json_put("\\f", 2); break;
		case '\n':	ui_json_put("\\n", 2); break;
		case '\r':	ui_json_put("\\r", 2); break;
		case '\t':	ui_json_put("\\t", 2); break;
		default:
			if (p[i] < 0x20) {
				ui_json_u(p[i]);
				break;
			}
			if ((cp = ui_json_cp(p + i, &n)) < 0x10000) {
				ui_json_u(cp);
				break;
			}
			cp -= 0x10000;
			ui_json_u(0xd800 | (cp >> 10));
			ui_json_u(0xdc00 | (cp & 0x3ff));
			break;
		}
	}
	ui_json_putc('"');
}

void
ui_json_begin(const char *event)
{
	uj.n = 0;
	uj.first = 1;
	ui_json_putc('{');
	ui_json_str("event", event);
}

void
ui_json_open(const char *key)
{
	ui_json_key(key);
	ui_json_putc('{');
	uj.first = 1;
}

void
ui_json_close(void)
{
	ui_json_putc('}');
	uj.first = 0;
}

/* Untrusted text, at most len bytes of it; null for NULL. */
void
ui_json_strn(const char *key, const char *s, size_t len)
{
	char	*e;

	ui_json_key(key);
	if (s == NULL) {
		ui_json_put("null", 4);
		return;
	}
	if (str_utf8_valid(s, len)) {
		ui_json_quote(s, len);
		return;
	}
	if ((e = str_escape_dup(s, len, STR_ESC_KEEP_NL)) == NULL)
		fatal("out of memory");
	ui_json_quote(e, strlen(e));
	free(e);
}

void
ui_json_str(const char *key, const char *s)
{
	ui_json_strn(key, s, s != NULL ? strlen(s) : 0);
}

void
ui_json_int(const char *key, long long v)
{
	char	num[32];

	ui_json_key(key);
	ui_json_put(num, (size_t)snprintf(num, sizeof(num), "%lld", v));
}

void
ui_json_usd(const char *key, double usd)
{
	char	num[48];
	int	n;

	n = snprintf(num, sizeof(num), "%.6f", price_usd(usd));
	while (n > 1 && num[n - 1] == '0' && num[n - 2] != '.')
		n--;
	ui_json_key(key);
	ui_json_put(num, (size_t)n);
}

void
ui_json_bool(const char *key, int v)
{
	ui_json_key(key);
	if (v)
		ui_json_put("true", 4);
	else
		ui_json_put("false", 5);
}

/* A value built elsewhere (parsed arguments, a report): jansson's dump.
 * 0, or -1 when it could not be dumped (nothing written). */
int
ui_json_tree(const char *key, const json_t *j)
{
	char	*s;

	if ((s = json_dumps(j, JSON_COMPACT | JSON_ENCODE_ANY |
	    JSON_ENSURE_ASCII)) == NULL)
		return -1;
	ui_json_key(key);
	ui_json_put(s, strlen(s));
	free(s);
	return 0;
}

/* A line begun with the members of object o. -1 if it was not dumped. */
int
ui_json_object(const json_t *o)
{
	char	*s;

	if ((s = json_dumps(o, JSON_COMPACT | JSON_ENSURE_ASCII)) == NULL)
		return -1;
	uj.n = 0;
	ui_json_put(s, strlen(s) - 1);		/* without its '}' */
	uj.first = strcmp(s, "{}") == 0;
	free(s);
	return 0;
}

/* The line, closed and handed to out's buffer (ui_flush writes it). */
void
ui_json_end(FILE *out)
{
	ui_json_put("}\n", 2);
	(void)fwrite(uj.b, 1, uj.n, out);
}

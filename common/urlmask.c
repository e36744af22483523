/*
 * The URL mask (urlmask.h): the userinfo's password, the query's values
 * and the fragment of a URL, and the values of libpq's keyword form, as
 * "***"; the names of a short list that never hold a secret show theirs.
 */
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "common/urlmask.h"

/* The output: a bounded buffer, always terminated; and, for
 * urlmask_scrub, the parts of the input that "***" hid. */
struct urlmask_out {
	char		*o, *end;
	const char	*hid[URLMASK_HIDDEN_MAX];
	size_t		 hidlen[URLMASK_HIDDEN_MAX], nhid;
	int		 over;	/* more hidden parts than hid[] */
};

/* Names whose values are never secrets: shown. */
static const char *const urlmask_shown[] = {
	"host", "hostaddr", "port", "dbname", "user", "sslmode",
	"connect_timeout", "application_name", "target_session_attrs",
	"gssencmode", "channel_binding", "api-version",
};

static void
urlmask_put(struct urlmask_out *w, const char *s, size_t n)
{
	while (n-- > 0 && *s != '\0' && w->o < w->end - 1)
		*w->o++ = *s++;
	*w->o = '\0';
}

/* "***" in place of the n bytes at s, which are noted. */
static void
urlmask_hide(struct urlmask_out *w, const char *s, size_t n)
{
	if (n > 0 && w->nhid < URLMASK_HIDDEN_MAX) {
		w->hid[w->nhid] = s;
		w->hidlen[w->nhid++] = n;
	} else if (n > 0)
		w->over = 1;
	urlmask_put(w, "***", 3);
}

static int
urlmask_is_shown(const char *name, size_t len)
{
	size_t	i;

	for (i = 0; i < sizeof(urlmask_shown) / sizeof(urlmask_shown[0]); i++)
		if (strlen(urlmask_shown[i]) == len &&
		    strncasecmp(urlmask_shown[i], name, len) == 0)
			return 1;
	return 0;
}

/* "name=value" (or a bare "name") of a query, to its end. */
static void
urlmask_item(struct urlmask_out *w, const char *s, size_t len)
{
	const char	*eq = memchr(s, '=', len);

	if (eq == NULL) {
		if (urlmask_is_shown(s, len) || len == 0)
			urlmask_put(w, s, len);
		else
			urlmask_hide(w, s, len);
		return;
	}
	urlmask_put(w, s, (size_t)(eq + 1 - s));
	if (urlmask_is_shown(s, (size_t)(eq - s)) || eq + 1 == s + len)
		urlmask_put(w, eq + 1, (size_t)(s + len - eq - 1));
	else
		urlmask_hide(w, eq + 1, (size_t)(s + len - eq - 1));
}

/* From '?' or '#' on: the query's items, then the fragment. */
static void
urlmask_query(struct urlmask_out *w, const char *p)
{
	size_t	n;

	if (*p == '?') {
		urlmask_put(w, p++, 1);
		while (*p != '\0' && *p != '#') {
			n = strcspn(p, "&;#");
			urlmask_item(w, p, n);
			p += n;
			if (*p == '&' || *p == ';')
				urlmask_put(w, p++, 1);
		}
	}
	if (*p == '#') {
		urlmask_put(w, p, 1);
		if (p[1] != '\0')
			urlmask_hide(w, p + 1, strlen(p + 1));
	}
}

/* A keyword form value's length: 'quoted, with \ escapes' or to a space. */
static size_t
urlmask_kw_value(const char *v)
{
	const char	*p = v;

	if (*p != '\'')
		return strcspn(v, " \t\n\r\f\v");
	for (p++; *p != '\0' && *p != '\''; p++)
		if (*p == '\\' && p[1] != '\0')
			p++;
	return (size_t)(p - v) + (*p == '\'');
}

/* libpq's keyword form: "host=h password='p w' dbname=d". */
static void
urlmask_keywords(struct urlmask_out *w, const char *p)
{
	const char	*name, *v;
	size_t		 n, vlen;

	while (*p != '\0') {
		n = strspn(p, " \t\n\r\f\v");
		urlmask_put(w, p, n);
		p += n;
		name = p;
		n = strcspn(p, "= \t\n\r\f\v");
		p += n;
		v = p + strspn(p, " \t\n\r\f\v");
		if (*v != '=') {
			urlmask_put(w, name, (size_t)(p - name));
			continue;
		}
		v++;
		v += strspn(v, " \t\n\r\f\v");
		urlmask_put(w, name, (size_t)(v - name));
		vlen = urlmask_kw_value(v);
		if (urlmask_is_shown(name, n) || vlen == 0)
			urlmask_put(w, v, vlen);
		else
			urlmask_hide(w, v, vlen);
		p = v + vlen;
	}
}

/* The last '@' in [p, end), or at. */
static const char *
urlmask_last_at(const char *p, const char *end, const char *at)
{
	for (; p < end; p++)
		if (*p == '@')
			at = p;
	return at;
}

/*
 * Where the userinfo ends: the last '@' before the first '/', '?' or '#'.
 * A password with one of those unescaped ("user:p/ss@host") leaves a ':'
 * and no '@' there, and curl and libpq then fail and print the URL: the
 * userinfo is taken to the '@' after it (and any more before the host's
 * end), so the password is hidden. A port with '@' in the path after it
 * ("host:8080/a@b") is hidden too, which shows less but no secret.
 */
static const char *
urlmask_userinfo_end(const char *auth)
{
	const char	*end = auth + strcspn(auth, "/?#"), *at;

	if ((at = urlmask_last_at(auth, end, NULL)) != NULL ||
	    memchr(auth, ':', (size_t)(end - auth)) == NULL ||
	    (at = strchr(end, '@')) == NULL)
		return at;
	return urlmask_last_at(at, at + strcspn(at, "/?#"), at);
}

/* scheme://[userinfo@]host...: the userinfo to its last '@'. */
static void
urlmask_uri(struct urlmask_out *w, const char *url, const char *auth)
{
	const char	*end, *at, *colon, *p;

	if ((at = urlmask_userinfo_end(auth)) == NULL) {
		urlmask_put(w, url, (size_t)(auth - url));
		p = auth;
	} else {
		colon = memchr(auth, ':', (size_t)(at - auth));
		p = colon != NULL ? colon + 1 : auth;
		urlmask_put(w, url, (size_t)(p - url));
		urlmask_hide(w, p, (size_t)(at - p));
		p = at;
	}
	end = p + strcspn(p, "?#");
	urlmask_put(w, p, (size_t)(end - p));
	urlmask_query(w, end);
}

/*
 * Not a URI ("://" missing: "https:/user:pw@host", "user:pw@host/db",
 * typed wrong; warren's "not an http:// URL" and curl's and libpq's
 * errors print it): after any "scheme:" and slashes (or from the start,
 * "user:" looking like one), a ':' and then an '@' are taken as a
 * userinfo, hidden from that ':' to the last '@' before the host's
 * end. A path (from '/' or '.') and anything with '=' (libpq's
 * keywords) are not. 1 done, 0 not such a string.
 */
static int
urlmask_loose(struct urlmask_out *w, const char *url)
{
	const char	*p = url, *colon, *at;

	if (*url == '/' || *url == '.' || strchr(url, '=') != NULL)
		return 0;
	if ((colon = strchr(p, ':')) != NULL && colon > p &&
	    strspn(p, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
	    "0123456789+.-") == (size_t)(colon - p) && strchr(colon + 1, ':') !=
	    NULL)
		p = colon + 1 + strspn(colon + 1, "/");
	if (((colon = strchr(p, ':')) == NULL ||
	    (at = strchr(colon, '@')) == NULL) && (p == url ||
	    (colon = strchr(url, ':')) == NULL ||
	    (at = strchr(colon, '@')) == NULL))
		return 0;
	at = urlmask_last_at(at, at + strcspn(at, "/?#"), at);
	urlmask_put(w, url, (size_t)(colon + 1 - url));
	urlmask_hide(w, colon + 1, (size_t)(at - colon - 1));
	urlmask_put(w, at, strlen(at));
	return 1;
}

/* Does s name a password keyword ("password=", any case)? */
static int
urlmask_has_password(const char *s)
{
	for (; *s != '\0'; s++)
		if (strncasecmp(s, "password", 8) == 0 &&
		    s[8 + strspn(s + 8, " \t")] == '=')
			return 1;
	return 0;
}

static void
urlmask_into(struct urlmask_out *w0, const char *url, char *out,
    size_t outsz)
{
	struct urlmask_out	 w;
	const char		*auth;

	memset(&w, 0, sizeof(w));
	w.o = out;
	w.end = out + outsz;
	*out = '\0';
	if (url == NULL) {
		*w0 = w;
		return;
	}
	if ((auth = strstr(url, "://")) != NULL &&
	    strcspn(url, "/?#") > (size_t)(auth - url))
		urlmask_uri(&w, url, auth + 3);
	else if (urlmask_loose(&w, url))
		;
	else if (strncasecmp(url, "postgresql:", 11) == 0) {
		urlmask_put(&w, url, 11);
		urlmask_keywords(&w, url + 11);
	} else if (strncasecmp(url, "postgres:", 9) == 0) {
		urlmask_put(&w, url, 9);
		urlmask_keywords(&w, url + 9);
	} else if (*url != '/' && urlmask_has_password(url))
		urlmask_keywords(&w, url);	/* no "postgresql:" */
	else
		urlmask_put(&w, url, strlen(url));
	*w0 = w;
}

void
urlmask(const char *url, char *out, size_t outsz)
{
	struct urlmask_out	 w;

	if (outsz > 0)
		urlmask_into(&w, url, out, outsz);
}

char *
urlmask_dup(const char *url)
{
	size_t	 sz;
	char	*out;

	sz = (url != NULL ? strlen(url) : 0) * 2 + 32;
	if ((out = malloc(sz)) == NULL)
		return NULL;
	urlmask(url, out, sz);
	return out;
}

/* A hex digit's value, or -1. */
static int
urlmask_hex(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	c = (char)(c | 0x20);
	return c >= 'a' && c <= 'f' ? c - 'a' + 10 : -1;
}

/* s[0..n) with %XX decoded, into out (n + 1 bytes). */
static void
urlmask_decode(const char *s, size_t n, char *out)
{
	size_t	i;

	for (i = 0; i < n; i++) {
		if (s[i] == '%' && i + 2 < n && urlmask_hex(s[i + 1]) >= 0 &&
		    urlmask_hex(s[i + 2]) >= 0) {
			*out++ = (char)(urlmask_hex(s[i + 1]) << 4 |
			    urlmask_hex(s[i + 2]));
			i += 2;
		} else
			*out++ = s[i];
	}
	*out = '\0';
}

/* The first s[0..n) in h, or NULL. */
static const char *
urlmask_find(const char *h, const char *s, size_t n)
{
	for (; *h != '\0'; h++)
		if (strncmp(h, s, n) == 0)
			return h;
	return NULL;
}

/* Every s[0..n) in msg as "***", cut to msgsz. -1: no memory. */
static int
urlmask_scrub_one(char *msg, size_t msgsz, const char *s, size_t n)
{
	const char	*p, *hit;
	char		*copy;
	size_t		 len = 0;

	if (n == 0 || urlmask_find(msg, s, n) == NULL)
		return 0;
	if ((copy = strdup(msg)) == NULL)
		return -1;
	for (p = copy; (hit = urlmask_find(p, s, n)) != NULL && len < msgsz;
	    p = hit + n)
		len += (size_t)snprintf(msg + len, msgsz - len, "%.*s***",
		    (int)(hit - p), p);
	if (len < msgsz)
		snprintf(msg + len, msgsz - len, "%s", p);
	free(copy);
	return 0;
}

int
urlmask_scrub(const char *url, char *msg, size_t msgsz)
{
	struct urlmask_out	 w;
	char			*out, *dec;
	size_t			 i, sz;
	int			 rc = 0;

	if (url == NULL || msgsz == 0)
		return 0;
	sz = strlen(url) + 32;
	if ((out = malloc(sz)) == NULL || (dec = malloc(sz)) == NULL) {
		free(out);
		return -1;
	}
	urlmask_into(&w, url, out, sz);
	if (w.over)
		snprintf(msg, msgsz, "(not shown: it may hold a secret of the "
		    "URL)");
	for (i = 0; i < w.nhid && rc == 0; i++) {
		rc = urlmask_scrub_one(msg, msgsz, w.hid[i], w.hidlen[i]);
		urlmask_decode(w.hid[i], w.hidlen[i], dec);
		if (rc == 0)
			rc = urlmask_scrub_one(msg, msgsz, dec, strlen(dec));
	}
	free(dec);
	free(out);
	return rc;
}

/*
 * The URL mask (urlmask.h): the userinfo's password, the query's values
 * and the fragment of a URL, and the values of libpq's keyword form, as
 * "***"; the names of a short list that never hold a secret show theirs.
 */
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "common/urlmask.h"

/* The output: a bounded buffer, always terminated. */
struct urlmask_out {
	char	*o, *end;
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
		urlmask_put(w, urlmask_is_shown(s, len) || len == 0 ? s : "***",
		    urlmask_is_shown(s, len) || len == 0 ? len : 3);
		return;
	}
	urlmask_put(w, s, (size_t)(eq + 1 - s));
	if (urlmask_is_shown(s, (size_t)(eq - s)) || eq + 1 == s + len)
		urlmask_put(w, eq + 1, (size_t)(s + len - eq - 1));
	else
		urlmask_put(w, "***", 3);
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
	if (*p == '#')
		urlmask_put(w, p[1] != '\0' ? "#***" : "#", p[1] != '\0' ? 4 : 1);
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
			urlmask_put(w, "***", 3);
		p = v + vlen;
	}
}

/* scheme://[userinfo@]host...: the userinfo to its last '@'. */
static void
urlmask_uri(struct urlmask_out *w, const char *url, const char *auth)
{
	const char	*end, *at = NULL, *colon, *p;

	end = auth + strcspn(auth, "/?#");
	for (p = auth; p < end; p++)
		if (*p == '@')
			at = p;
	if (at == NULL) {
		urlmask_put(w, url, (size_t)(auth - url));
		p = auth;
	} else {
		colon = memchr(auth, ':', (size_t)(at - auth));
		urlmask_put(w, url, (size_t)((colon != NULL ? colon + 1 :
		    auth) - url));
		urlmask_put(w, "***", 3);
		p = at;
	}
	end = p + strcspn(p, "?#");
	urlmask_put(w, p, (size_t)(end - p));
	urlmask_query(w, end);
}

void
urlmask(const char *url, char *out, size_t outsz)
{
	struct urlmask_out	 w;
	const char		*auth;

	if (outsz == 0)
		return;
	w.o = out;
	w.end = out + outsz;
	*out = '\0';
	if (url == NULL)
		return;
	if ((auth = strstr(url, "://")) != NULL &&
	    strcspn(url, "/?#") > (size_t)(auth - url))
		urlmask_uri(&w, url, auth + 3);
	else if (strncasecmp(url, "postgresql:", 11) == 0) {
		urlmask_put(&w, url, 11);
		urlmask_keywords(&w, url + 11);
	} else if (strncasecmp(url, "postgres:", 9) == 0) {
		urlmask_put(&w, url, 9);
		urlmask_keywords(&w, url + 9);
	} else
		urlmask_put(&w, url, strlen(url));
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

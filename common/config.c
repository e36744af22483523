/*
 * Generic configuration loader: declared keys, typed values, four sources
 * with a fixed precedence, `key = value` files with errors at file:line.
 */
#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/config.h"
#include "common/config_testapi.h"
#include "common/log.h"
#include "common/str.h"
#include "common/urlmask.h"
#include "common/xdg.h"

static const char	*config_user_path(void);

#define CONFIG_MAX_LINE		4096
#define CONFIG_MAX_FILE		(1024 * 1024)
#define CONFIG_MAX_LIST		256

struct config_val {
	const struct config_key	*key;
	enum config_source	 src;
	char			*where;
	char			**v;		/* one value, or a list */
	size_t			 n;
	double			 num;		/* parsed number/uint/ms/bytes */
	int			 set;
};

struct config {
	struct config_val	*vals;
	size_t			 nvals;
	char			 err[1024];
};

static const char *const config_src_names[] = {
	[CONFIG_SRC_DEFAULT] = "default",
	[CONFIG_SRC_USER] = "user config",
	[CONFIG_SRC_PROJECT] = "project config",
	[CONFIG_SRC_RUN] = "resumed run",
	[CONFIG_SRC_ENV] = "environment",
	[CONFIG_SRC_FLAG] = "flag",
};

static void config_seterr(struct config *, const char *, ...)
    __attribute__((format(printf, 2, 3)));

static void
config_seterr(struct config *c, const char *fmt, ...)
{
	char	raw[1024];
	va_list	ap;

	va_start(ap, fmt);
	vsnprintf(raw, sizeof(raw), fmt, ap);
	va_end(ap);
	/* Values come from files and the environment: escape them. */
	str_escape(c->err, sizeof(c->err), raw, strlen(raw));
}

struct config *
config_new(void)
{
	return calloc(1, sizeof(struct config));
}

static void
config_val_clear(struct config_val *v)
{
	size_t	i;

	for (i = 0; i < v->n; i++) {
		if (v->key->flags & CONFIG_SECRET)
			explicit_bzero(v->v[i], strlen(v->v[i]));
		free(v->v[i]);
	}
	free(v->v);
	free(v->where);
	v->v = NULL;
	v->where = NULL;
	v->n = 0;
	v->num = 0;
	v->set = 0;
}

void
config_free(struct config *c)
{
	size_t	i;

	if (c == NULL)
		return;
	for (i = 0; i < c->nvals; i++)
		config_val_clear(&c->vals[i]);
	free(c->vals);
	free(c);
}

const char *
config_error(const struct config *c)
{
	return c->err;
}

static struct config_val *
config_find(const struct config *c, const char *name)
{
	size_t	i;

	for (i = 0; i < c->nvals; i++) {
		if (strcmp(c->vals[i].key->name, name) == 0)
			return &c->vals[i];
	}
	return NULL;
}

/* A unit a number may end with, and what it multiplies the number by. */
struct config_unit {
	const char	*suffix;
	double		 times;
};

static const struct config_unit config_units_ms[] = {
	{ "", 1000 }, { "s", 1000 }, { "ms", 1 }, { "m", 60 * 1000 },
	{ "min", 60 * 1000 }, { "h", 3600 * 1000 }, { "d", 24 * 3600 * 1000 },
	{ NULL, 0 },
};

static const struct config_unit config_units_bytes[] = {
	{ "", 1 }, { "b", 1 },
	{ "k", 1024 }, { "kb", 1024 }, { "kib", 1024 },
	{ "m", 1024 * 1024 }, { "mb", 1024 * 1024 }, { "mib", 1024 * 1024 },
	{ "g", 1024.0 * 1024 * 1024 }, { "gb", 1024.0 * 1024 * 1024 },
	{ "gib", 1024.0 * 1024 * 1024 },
	{ "t", 1024.0 * 1024 * 1024 * 1024 },
	{ "tb", 1024.0 * 1024 * 1024 * 1024 },
	{ "tib", 1024.0 * 1024 * 1024 * 1024 },
	{ NULL, 0 },
};

/* A number, not negative, fractions allowed, then one of units' suffixes
 * (compared ignoring case if nocase), into *out in whole units: at most
 * 1e15. 0, or -1. */
static int
config_parse_unit(const char *s, const struct config_unit *units,
    int nocase, double *out)
{
	char	*end;
	double	 d;

	errno = 0;
	d = strtod(s, &end);
	if (end == s || errno != 0 || !isfinite(d) || d < 0)
		return -1;
	for (; units->suffix != NULL; units++)
		if ((nocase ? strcasecmp(end, units->suffix) :
		    strcmp(end, units->suffix)) == 0)
			break;
	if (units->suffix == NULL || (d *= units->times) > 1e15)
		return -1;
	*out = floor(d);
	return 0;
}

/* "30s", "500ms", "2m", "1h", "7d", bare seconds; fractions allowed
 * ("1.5s"). */
int
config_parse_duration(const char *s, double *ms)
{
	return config_parse_unit(s, config_units_ms, 0, ms);
}

int
config_parse_size(const char *s, double *bytes)
{
	return config_parse_unit(s, config_units_bytes, 1, bytes);
}

static int
config_parse_bool(const char *s, double *b)
{
	if (strcasecmp(s, "true") == 0 || strcasecmp(s, "yes") == 0 ||
	    strcasecmp(s, "on") == 0 || strcmp(s, "1") == 0)
		*b = 1;
	else if (strcasecmp(s, "false") == 0 || strcasecmp(s, "no") == 0 ||
	    strcasecmp(s, "off") == 0 || strcmp(s, "0") == 0)
		*b = 0;
	else
		return -1;
	return 0;
}

static int
config_parse_enum(const struct config_key *k, const char *s, double *idx)
{
	size_t	i;

	for (i = 0; k->choices != NULL && k->choices[i] != NULL; i++) {
		if (strcmp(s, k->choices[i]) == 0) {
			*idx = (double)i;
			return 0;
		}
	}
	return -1;
}

static void
config_choices(const struct config_key *k, char *out, size_t outsz)
{
	size_t	i;

	out[0] = '\0';
	for (i = 0; k->choices != NULL && k->choices[i] != NULL; i++) {
		if (i > 0)
			strlcat(out, ", ", outsz);
		strlcat(out, k->choices[i], outsz);
	}
}

static const char *
config_type_name(enum config_type t)
{
	switch (t) {
	case CONFIG_STRING:	return "a string";
	case CONFIG_UINT:	return "a whole number";
	case CONFIG_NUMBER:	return "a number";
	case CONFIG_BOOL:	return "true or false";
	case CONFIG_ENUM:	return "one of the choices";
	case CONFIG_DURATION:	return "a duration such as 30s, 500ms, 2m";
	case CONFIG_SIZE:	return "a size such as 512k, 16M";
	case CONFIG_LIST:	return "a string";
	}
	return "a value";
}

/*
 * Check a value against its key's type and bounds. 0 with *num set, or -1
 * with a reason in why.
 */
static int
config_check(const struct config_key *k, const char *s, double *num,
    char *why, size_t whysz)
{
	char	*end, choices[512];
	double	 d = 0;
	int	 bad = 0;

	if (strlen(s) > CONFIG_MAX_LINE) {
		snprintf(why, whysz, "value longer than %d bytes",
		    CONFIG_MAX_LINE);
		return -1;
	}
	switch (k->type) {
	case CONFIG_STRING:
	case CONFIG_LIST:
		if (!str_utf8_valid(s, strlen(s))) {
			snprintf(why, whysz, "value is not valid UTF-8");
			return -1;
		}
		*num = 0;
		return 0;
	case CONFIG_UINT:
		errno = 0;
		if (*s == '-' || !isdigit((unsigned char)*s))
			bad = 1;
		else {
			d = (double)strtoull(s, &end, 10);
			bad = errno != 0 || *end != '\0';
		}
		break;
	case CONFIG_NUMBER:
		errno = 0;
		d = strtod(s, &end);
		bad = end == s || *end != '\0' || errno != 0 || !isfinite(d);
		break;
	case CONFIG_BOOL:
		bad = config_parse_bool(s, &d) == -1;
		break;
	case CONFIG_ENUM:
		if (config_parse_enum(k, s, &d) == -1) {
			config_choices(k, choices, sizeof(choices));
			snprintf(why, whysz, "'%s' is not one of: %s", s,
			    choices);
			return -1;
		}
		break;
	case CONFIG_DURATION:
		bad = config_parse_duration(s, &d) == -1;
		break;
	case CONFIG_SIZE:
		bad = config_parse_size(s, &d) == -1;
		break;
	}
	if (bad) {
		snprintf(why, whysz, "'%s' is not %s", s,
		    config_type_name(k->type));
		return -1;
	}
	if ((k->min != 0 || k->max != 0) && (d < k->min || d > k->max)) {
		if (k->type == CONFIG_DURATION)
			snprintf(why, whysz, "'%s' is outside %.0fms..%.0fms",
			    s, k->min, k->max);
		else
			snprintf(why, whysz, "'%s' is outside %g..%g", s,
			    k->min, k->max);
		return -1;
	}
	*num = d;
	return 0;
}

int
config_declare(struct config *c, const struct config_key *keys, size_t n)
{
	struct config_val	*vals, *v;
	char			 why[600];
	size_t			 i;

	for (i = 0; i < n; i++) {
		if (config_find(c, keys[i].name) != NULL) {
			config_seterr(c, "config key '%s' declared twice",
			    keys[i].name);
			errno = EEXIST;
			return -1;
		}
	}
	vals = reallocarray(c->vals, c->nvals + n, sizeof(*vals));
	if (vals == NULL)
		return -1;
	c->vals = vals;
	for (i = 0; i < n; i++) {
		v = &c->vals[c->nvals];
		memset(v, 0, sizeof(*v));
		v->key = &keys[i];
		c->nvals++;
		if (keys[i].def == NULL || keys[i].type == CONFIG_LIST)
			continue;
		if (config_check(&keys[i], keys[i].def, &v->num, why,
		    sizeof(why)) == -1) {
			config_seterr(c, "default of '%s': %s", keys[i].name,
			    why);
			errno = EINVAL;
			return -1;
		}
	}
	return 0;
}

/* Store a checked value; lists append within one source. */
static int
config_store(struct config_val *v, const char *value, double num,
    enum config_source src, const char *where)
{
	char	**nv, *dup, *wdup;
	int	  append;

	append = v->key->type == CONFIG_LIST && v->set && v->src == src;
	if (append && v->n >= CONFIG_MAX_LIST) {
		errno = E2BIG;
		return -1;
	}
	if ((dup = strdup(value)) == NULL)
		return -1;
	if ((wdup = strdup(where)) == NULL) {
		free(dup);
		return -1;
	}
	if (!append)
		config_val_clear(v);
	nv = reallocarray(v->v, v->n + 1, sizeof(*nv));
	if (nv == NULL) {
		free(dup);
		free(wdup);
		return -1;
	}
	v->v = nv;
	v->v[v->n++] = dup;
	free(v->where);
	v->where = wdup;
	v->num = num;
	v->src = src;
	v->set = 1;
	return 0;
}

/* The value as text: the last one set, else the default. */
static const char *
config_str_of(const struct config_val *v)
{
	if (v->set)
		return v->v[v->n - 1];
	return v->key->def != NULL ? v->key->def : "unset";
}

/* Would num raise the limit v holds? An unset limit without a default
 * is no limit at all; so is 0 for a CONFIG_ZEROINF key. */
static int
config_raises(const struct config_val *v, double num)
{
	double	cur;

	if (!(v->key->flags & CONFIG_LOWER))
		return 0;
	if (!v->set && v->key->def == NULL)
		return 0;
	cur = v->num;
	if (v->key->flags & CONFIG_ZEROINF) {
		if (cur == 0)
			return 0;
		if (num == 0)
			return 1;
	}
	return num > cur;
}

int
config_set(struct config *c, const char *name, const char *value,
    enum config_source src, const char *where)
{
	struct config_val	*v;
	char			 why[600];
	double			 num;

	if ((v = config_find(c, name)) == NULL) {
		config_seterr(c, "%s: unknown key '%s'", where, name);
		errno = ENOENT;
		return -1;
	}
	if ((v->key->flags & CONFIG_NOFILE) &&
	    (src == CONFIG_SRC_USER || src == CONFIG_SRC_PROJECT)) {
		config_seterr(c, "%s: '%s' is not allowed in a config file; "
		    "%s", where, name, v->key->help != NULL ? v->key->help :
		    "set it in the environment");
		errno = EPERM;
		return -1;
	}
	if (config_check(v->key, value, &num, why, sizeof(why)) == -1) {
		/* Never echo a secret back. */
		if (v->key->flags & CONFIG_SECRET)
			strlcpy(why, "bad value", sizeof(why));
		config_seterr(c, "%s: %s: %s", where, name, why);
		errno = EINVAL;
		return -1;
	}
	if (src == CONFIG_SRC_PROJECT && (v->key->flags & CONFIG_NOPROJECT)) {
		config_seterr(c, "%s: '%s' is never taken from a project's "
		    "config: it decides where your API key or warren's files "
		    "go. Set it in %s, the environment or a flag", where, name,
		    config_user_path() != NULL ? config_user_path() :
		    "~/.config/warren/config");
		errno = EPERM;
		return -1;
	}
	if (v->set && src < v->src)
		return 0;
	if (src == CONFIG_SRC_PROJECT && config_raises(v, num)) {
		log_warnx("%s: %s = %s is ignored: a project may lower a limit,"
		    " not raise it (yours: %s, from %s)", where, name, value,
		    config_str_of(v), v->set ? v->where : "the default");
		return 0;
	}
	if (config_store(v, value, num, src, where) == -1) {
		config_seterr(c, "%s: %s: %s", where, name, strerror(errno));
		return -1;
	}
	return 0;
}

/* Undo a "quoted value" in place; -1 if the quote is not closed. */
static int
config_unquote(char *s)
{
	char	*r = s + 1, *w = s;

	while (*r != '\0' && *r != '"') {
		if (*r == '\\' && r[1] != '\0') {
			r++;
			switch (*r) {
			case 'n':	*w++ = '\n'; break;
			case 't':	*w++ = '\t'; break;
			default:	*w++ = *r; break;
			}
			r++;
			continue;
		}
		*w++ = *r++;
	}
	if (*r != '"')
		return -1;
	r++;
	while (*r == ' ' || *r == '\t')
		r++;
	if (*r != '\0' && *r != '#')
		return -1;
	*w = '\0';
	return 0;
}

static char *
config_trim(char *s)
{
	char	*e;

	while (*s == ' ' || *s == '\t')
		s++;
	e = s + strlen(s);
	while (e > s && (e[-1] == ' ' || e[-1] == '\t' || e[-1] == '\r'))
		*--e = '\0';
	return s;
}

/* One line of a file: key = value. */
static int
config_line(struct config *c, char *line, enum config_source src,
    const char *where)
{
	char	*eq, *key, *val, *hash;

	key = config_trim(line);
	if (*key == '\0' || *key == '#')
		return 0;
	if ((eq = strchr(key, '=')) == NULL) {
		config_seterr(c, "%s: expected 'key = value'", where);
		errno = EINVAL;
		return -1;
	}
	*eq = '\0';
	key = config_trim(key);
	val = config_trim(eq + 1);
	if (*val == '"') {
		if (config_unquote(val) == -1) {
			config_seterr(c, "%s: %s: unterminated quote or text "
			    "after the closing quote", where, key);
			errno = EINVAL;
			return -1;
		}
	} else if ((hash = strchr(val, '#')) != NULL) {
		*hash = '\0';
		val = config_trim(val);
	}
	if (*key == '\0') {
		config_seterr(c, "%s: missing key before '='", where);
		errno = EINVAL;
		return -1;
	}
	return config_set(c, key, val, src, where);
}

int
config_load_text(struct config *c, const char *text, size_t len,
    const char *name, enum config_source src)
{
	const char	*p, *end = text + len, *nl;
	char		*line, where[PATH_MAX + 32];
	unsigned	 lineno = 0;
	size_t		 n;
	int		 rc;

	if (len > CONFIG_MAX_FILE) {
		config_seterr(c, "%s: file too long (%zu bytes, at most %d)",
		    name, len, CONFIG_MAX_FILE);
		errno = EFBIG;
		return -1;
	}
	for (p = text; p < end; p = nl + 1) {
		lineno++;
		snprintf(where, sizeof(where), "%s:%u", name, lineno);
		if ((nl = memchr(p, '\n', (size_t)(end - p))) == NULL)
			nl = end;
		n = (size_t)(nl - p);
		if (n > CONFIG_MAX_LINE) {
			config_seterr(c, "%s: line too long", where);
			errno = EFBIG;
			return -1;
		}
		if (memchr(p, '\0', n) != NULL) {
			config_seterr(c, "%s: NUL byte in a text file", where);
			errno = EINVAL;
			return -1;
		}
		if ((line = strndup(p, n)) == NULL) {
			config_seterr(c, "%s: out of memory", where);
			return -1;
		}
		rc = config_line(c, line, src, where);
		free(line);
		if (rc == -1)
			return -1;
	}
	return 0;
}

int
config_load_file(struct config *c, const char *path, enum config_source src,
    int optional)
{
	FILE	*f;
	char	*text;
	size_t	 len;
	int	 rc = -1, saved;

	if ((f = fopen(path, "re")) == NULL) {
		if (optional && errno == ENOENT)
			return 0;
		config_seterr(c, "%s: %s", path, strerror(errno));
		return -1;
	}
	/* One byte over the limit tells a file too long from one at it. */
	if ((text = malloc(CONFIG_MAX_FILE + 1)) == NULL) {
		config_seterr(c, "%s: out of memory", path);
		goto out;
	}
	len = fread(text, 1, CONFIG_MAX_FILE + 1, f);
	if (ferror(f)) {
		config_seterr(c, "%s: %s", path, strerror(errno));
		goto out;
	}
	rc = config_load_text(c, text, len, path, src);
out:
	saved = errno;
	free(text);
	fclose(f);
	errno = saved;
	return rc;
}

/* Lists come from the environment one per line. */
static int
config_env_list(struct config *c, const char *name, const char *value,
    const char *where)
{
	char	*copy, *p, *nl;
	int	 rc = 0;

	if ((copy = strdup(value)) == NULL)
		return -1;
	for (p = copy; rc == 0 && p != NULL; p = nl) {
		if ((nl = strchr(p, '\n')) != NULL)
			*nl++ = '\0';
		p = config_trim(p);
		if (*p != '\0')
			rc = config_set(c, name, p, CONFIG_SRC_ENV, where);
	}
	free(copy);
	return rc;
}

int
config_load_env(struct config *c)
{
	const struct config_key	*k;
	const char		*value;
	char			 where[128];
	size_t			 i;

	for (i = 0; i < c->nvals; i++) {
		k = c->vals[i].key;
		if (k->env == NULL || (value = getenv(k->env)) == NULL)
			continue;
		snprintf(where, sizeof(where), "environment %s", k->env);
		if (k->type == CONFIG_LIST) {
			if (config_env_list(c, k->name, value, where) == -1)
				return -1;
		} else if (config_set(c, k->name, value, CONFIG_SRC_ENV,
		    where) == -1)
			return -1;
	}
	return 0;
}

static const char *
config_user_path(void)
{
	static char	 path[PATH_MAX];
	char		 dir[PATH_MAX];

	if (xdg_config_dir(dir, sizeof(dir)) == -1 ||
	    (size_t)snprintf(path, sizeof(path), "%s/config", dir) >=
	    sizeof(path))
		return NULL;
	return path;
}

int
config_load_standard(struct config *c)
{
	const char	*user;

	if ((user = config_user_path()) != NULL &&
	    config_load_file(c, user, CONFIG_SRC_USER, 1) == -1)
		return -1;
	return config_load_env(c);
}

const char *
config_str(const struct config *c, const char *name)
{
	struct config_val	*v;

	if ((v = config_find(c, name)) == NULL)
		return NULL;
	if (v->set)
		return v->v[v->n - 1];
	return v->key->type == CONFIG_LIST ? NULL : v->key->def;
}

static double
config_num(const struct config *c, const char *name)
{
	struct config_val	*v;

	if ((v = config_find(c, name)) == NULL)
		return 0;
	return v->num;	/* the default's value is parsed at declaration */
}

uint64_t
config_uint(const struct config *c, const char *name)
{
	return (uint64_t)config_num(c, name);
}

double
config_number(const struct config *c, const char *name)
{
	return config_num(c, name);
}

int
config_bool(const struct config *c, const char *name)
{
	return config_num(c, name) != 0;
}

uint64_t
config_ms(const struct config *c, const char *name)
{
	return (uint64_t)config_num(c, name);
}

uint64_t
config_bytes(const struct config *c, const char *name)
{
	return (uint64_t)config_num(c, name);
}

size_t
config_list(const struct config *c, const char *name,
    const char *const **values)
{
	struct config_val	*v;

	*values = NULL;
	if ((v = config_find(c, name)) == NULL || !v->set)
		return 0;
	*values = (const char *const *)v->v;
	return v->n;
}

int
config_isset(const struct config *c, const char *name)
{
	struct config_val	*v;

	return (v = config_find(c, name)) != NULL && v->set;
}

const char *
config_where(const struct config *c, const char *name)
{
	struct config_val	*v;

	if ((v = config_find(c, name)) == NULL || !v->set)
		return "default";
	return v->where;
}

const struct config_key *
config_key_at(const struct config *c, size_t i)
{
	return i < c->nvals ? c->vals[i].key : NULL;
}

void
config_dump(const struct config *c, FILE *f)
{
	const struct config_val	*v;
	const char		*s, *colon;
	char			 esc[CONFIG_MAX_LINE * 4 + 1];
	char			 url[CONFIG_MAX_LINE * 2 + 32];
	size_t			 i, j, len;

	for (i = 0; i < c->nvals; i++) {
		v = &c->vals[i];
		if (v->key->flags & CONFIG_SECRET) {
			fprintf(f, "%s = (%s)  # %s\n", v->key->name,
			    v->set ? "set" : "unset",
			    v->set ? v->where : "default");
			continue;
		}
		if (v->key->type == CONFIG_LIST) {
			for (j = 0; j < v->n; j++) {
				len = strlen(v->v[j]);
				if ((v->key->flags & CONFIG_MASKHDR) &&
				    (colon = strchr(v->v[j], ':')) != NULL)
					len = (size_t)(colon - v->v[j]);
				str_escape(esc, sizeof(esc), v->v[j], len);
				fprintf(f, "%s = %s%s  # %s\n", v->key->name,
				    esc, len < strlen(v->v[j]) ?
				    ": (hidden)" : "", v->where);
			}
			continue;
		}
		s = config_str(c, v->key->name);
		if (s == NULL)
			continue;
		if (v->key->flags & CONFIG_URL) {
			urlmask(s, url, sizeof(url));
			s = url;
		}
		str_escape(esc, sizeof(esc), s, strlen(s));
		fprintf(f, "%s = %s  # %s\n", v->key->name, esc,
		    v->set ? v->where : config_src_names[CONFIG_SRC_DEFAULT]);
	}
}

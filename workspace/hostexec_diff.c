/*
 * Two snapshots of the files that run code on the host (hostexec.h): the
 * first stored as JSON so that a resumed run compares with it, the
 * comparison, and the report it makes for stderr, --json and the store.
 *
 * Paths are the agent's: a stored path round-trips byte for byte (one that
 * is not valid UTF-8 is stored as hex), and a printed one is escaped.
 */
#include <sys/stat.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/log.h"
#include "common/str.h"
#include "common/xmalloc.h"
#include "workspace/hostexec.h"
#include "common/jtext.h"

#define HOSTEXEC_SNAP_VERSION	1
/* A file missing from an incomplete first snapshot is listed as created
 * only if its ctime is this close to the snapshot or later: timestamps
 * are coarser than the clock the snapshot time comes from. */
#define HOSTEXEC_SLACK_MS	2000

static json_t *
hx_jpath(const char *path)
{
	static const char	 hex[] = "0123456789abcdef";
	json_t			*j;
	char			*h;
	size_t			 i, n = strlen(path);

	if (str_utf8_valid(path, n))
		return json_string(path);
	h = xmalloc(2 * n + 1);
	for (i = 0; i < n; i++) {
		h[2 * i] = hex[(unsigned char)path[i] >> 4];
		h[2 * i + 1] = hex[(unsigned char)path[i] & 15];
	}
	h[2 * n] = '\0';
	j = json_pack("{s:s}", "hex", h);
	free(h);
	return j;
}

static char *
hx_unhex(const char *h)
{
	size_t	 i, n = strlen(h);
	char	*p;
	int	 hi, lo;

	if (n == 0 || n % 2 != 0)
		return NULL;
	p = xmalloc(n / 2 + 1);
	for (i = 0; i < n / 2; i++) {
		hi = h[2 * i] >= 'a' ? h[2 * i] - 'a' + 10 : h[2 * i] - '0';
		lo = h[2 * i + 1] >= 'a' ? h[2 * i + 1] - 'a' + 10 :
		    h[2 * i + 1] - '0';
		if (hi < 0 || hi > 15 || lo < 0 || lo > 15 ||
		    (hi == 0 && lo == 0)) {
			free(p);
			return NULL;
		}
		p[i] = (char)(hi << 4 | lo);
	}
	p[n / 2] = '\0';
	return p;
}

char *
hostexec_snap_encode(const struct hostexec_snap *sn)
{
	const struct hostexec_entry	*e;
	json_t				*o, *arr;
	char				*s;
	size_t				 i;

	arr = json_array();
	for (i = 0; i < sn->n; i++) {
		e = &sn->v[i];
		json_array_append_new(arr, json_pack("[o,I,I,I,I,I]",
		    hx_jpath(e->path), (json_int_t)e->mode, (json_int_t)e->ino,
		    (json_int_t)e->size, (json_int_t)e->mtime_ns,
		    (json_int_t)e->ctime_ns));
	}
	o = json_pack("{s:i,s:I,s:b,s:o,s:o}", "v", HOSTEXEC_SNAP_VERSION,
	    "taken_ms", (json_int_t)sn->taken_ms, "at_resume", sn->at_resume,
	    "incomplete", jtext(sn->incomplete), "entries", arr);
	if (o == NULL || (s = json_dumps(o, JSON_COMPACT)) == NULL)
		fatalx("hostexec: encoding a snapshot of %zu entries", sn->n);
	json_decref(o);
	return s;
}

/* One stored entry; -1 if it is not one. */
static int
hx_decode_entry(json_t *a, struct hostexec_entry *e)
{
	json_t		*p;
	json_int_t	 mode, ino, size, mt, ct;
	const char	*hex = NULL;

	if (json_unpack(a, "[o,I,I,I,I,I!]", &p, &mode, &ino, &size, &mt,
	    &ct) == -1)
		return -1;
	if (json_is_string(p))
		e->path = xstrdup(json_string_value(p));
	else if (json_unpack(p, "{s:s!}", "hex", &hex) == 0)
		e->path = hx_unhex(hex);
	if (e->path == NULL || *e->path == '\0' ||
	    strlen(e->path) != (json_is_string(p) ?
	    json_string_length(p) : strlen(hex) / 2)) {
		free(e->path);
		e->path = NULL;
		return -1;
	}
	e->mode = (mode_t)mode;
	e->ino = (uint64_t)ino;
	e->size = size;
	e->mtime_ns = mt;
	e->ctime_ns = ct;
	return 0;
}

int
hostexec_snap_decode(const char *text, struct hostexec_snap *sn, char *err,
    size_t errsz)
{
	json_t		*o, *arr, *inc = NULL;
	json_int_t	 taken;
	size_t		 i;
	int		 v, at_resume = 0;

	memset(sn, 0, sizeof(*sn));
	if ((o = json_loads(text, 0, NULL)) == NULL ||
	    json_unpack(o, "{s:i,s:I,s?b,s?o,s:o}", "v", &v, "taken_ms", &taken,
	    "at_resume", &at_resume, "incomplete", &inc, "entries",
	    &arr) == -1 ||
	    v != HOSTEXEC_SNAP_VERSION || !json_is_array(arr)) {
		snprintf(err, errsz, "not a snapshot of version %d",
		    HOSTEXEC_SNAP_VERSION);
		json_decref(o);
		return -1;
	}
	sn->taken_ms = taken;
	sn->at_resume = at_resume;
	if (json_is_string(inc))
		sn->incomplete = xstrdup(json_string_value(inc));
	sn->cap = json_array_size(arr) + 1;
	sn->v = xcalloc(sn->cap, sizeof(*sn->v));
	for (i = 0; i < json_array_size(arr); i++) {
		if (hx_decode_entry(json_array_get(arr, i),
		    &sn->v[sn->n]) == -1) {
			snprintf(err, errsz, "entry %zu is not one", i);
			json_decref(o);
			hostexec_snap_free(sn);
			return -1;
		}
		sn->n++;
	}
	json_decref(o);
	hostexec_snap_sort(sn);
	return 0;
}

static int
hx_differs(const struct hostexec_entry *a, const struct hostexec_entry *b)
{
	if ((a->mode & S_IFMT) != (b->mode & S_IFMT) || a->ino != b->ino)
		return 1;
	/* A directory's times move with its entries, which are compared
	 * themselves; only its replacement counts. */
	if (S_ISDIR(a->mode))
		return 0;
	return a->mode != b->mode || a->size != b->size ||
	    a->mtime_ns != b->mtime_ns || a->ctime_ns != b->ctime_ns;
}

static void
hx_add(struct hostexec_report *r, const struct hostexec_entry *e,
    enum hostexec_change c)
{
	struct hostexec_item	*it;

	r->v = xreallocarray(r->v, r->n + 1, sizeof(*r->v));
	it = &r->v[r->n++];
	memset(it, 0, sizeof(*it));
	it->path = xstrdup(e->path);
	it->change = c;
	it->mode = e->mode;
	it->why = hostexec_why(e->path);
}

static size_t
hx_under(const struct hostexec_report *r, size_t k)
{
	size_t	n = strlen(r->v[k].path), j;

	for (j = k + 1; j < r->n; j++)
		if (strncmp(r->v[j].path, r->v[k].path, n) != 0 ||
		    r->v[j].path[n] != '/')
			break;
	return j - k - 1;
}

/*
 * A created, removed or replaced git directory is one line with a count
 * of what is under it (git init alone makes twenty files). Any other
 * directory runs nothing itself: its files are listed on their own lines
 * (an empty .git/hooks made by the sandbox's carve-out is not news).
 */
static void
hx_collapse(struct hostexec_report *r)
{
	const char	*base;
	size_t		 k, j, out = 0, under;

	for (k = 0; k < r->n; k++) {
		under = hx_under(r, k);
		base = strrchr(r->v[k].path, '/');
		base = base ? base + 1 : r->v[k].path;
		if (hostexec_is(base, ".git") && under > 0) {
			for (j = k + 1; j <= k + under; j++)
				free(r->v[j].path);
			r->v[k].inside = under;
			r->v[out++] = r->v[k];
			k += under;
		} else if (S_ISDIR(r->v[k].mode) && !hostexec_is(base, ".git"))
			free(r->v[k].path);
		else
			r->v[out++] = r->v[k];
	}
	r->n = out;
}

static char *
hx_incomplete(const struct hostexec_snap *b, const struct hostexec_snap *a)
{
	char	*s;

	if (b->incomplete == NULL && a->incomplete == NULL)
		return NULL;
	if (xasprintf(&s, "%s%s%s%s%s", b->incomplete ? "at the start: " : "",
	    b->incomplete ? b->incomplete : "", b->incomplete &&
	    a->incomplete ? "; " : "", a->incomplete ? "at the end: " : "",
	    a->incomplete ? a->incomplete : "") == -1)
		fatal("asprintf");
	return s;
}

void
hostexec_compare(const struct hostexec_snap *b, const struct hostexec_snap *a,
    struct hostexec_report *r)
{
	size_t	i = 0, j = 0;
	int	c;

	memset(r, 0, sizeof(*r));
	while (i < b->n || j < a->n) {
		c = i >= b->n ? 1 : j >= a->n ? -1 :
		    hostexec_pathcmp(b->v[i].path, a->v[j].path);
		if (c == 0) {
			if (hx_differs(&b->v[i], &a->v[j]))
				hx_add(r, &a->v[j], HOSTEXEC_CHANGED);
			i++, j++;
		} else if (c < 0) {
			/* Not seen at the end may be not looked at. */
			if (a->incomplete == NULL)
				hx_add(r, &b->v[i], HOSTEXEC_REMOVED);
			i++;
		} else {
			/* Not seen at the start may be not looked at. */
			if (b->incomplete == NULL || a->v[j].ctime_ns >=
			    (b->taken_ms - HOSTEXEC_SLACK_MS) * 1000000)
				hx_add(r, &a->v[j], HOSTEXEC_CREATED);
			j++;
		}
	}
	hx_collapse(r);
	r->incomplete = hx_incomplete(b, a);
	r->since_resume = b->at_resume;
}

void
hostexec_report_free(struct hostexec_report *r)
{
	size_t	i;

	if (r == NULL)
		return;
	for (i = 0; i < r->n; i++)
		free(r->v[i].path);
	free(r->v);
	free(r->incomplete);
	memset(r, 0, sizeof(*r));
}

static const char *
hx_change_name(enum hostexec_change c)
{
	switch (c) {
	case HOSTEXEC_CREATED:
		return "created";
	case HOSTEXEC_REMOVED:
		return "removed";
	case HOSTEXEC_CHANGED:
	default:
		return "changed";
	}
}

static const char *
hx_type_name(mode_t m)
{
	if (S_ISREG(m))
		return "file";
	if (S_ISDIR(m))
		return "dir";
	if (S_ISLNK(m))
		return "symlink";
	return "other";
}

json_t *
hostexec_report_json(const struct hostexec_report *r)
{
	json_t	*files, *f;
	size_t	 i, n = r->n < HOSTEXEC_LIST_MAX ? r->n : HOSTEXEC_LIST_MAX;

	files = json_array();
	for (i = 0; i < n; i++) {
		f = json_pack("{s:o,s:s,s:s,s:s}", "path", jtext(r->v[i].path),
		    "change", hx_change_name(r->v[i].change),
		    "type", hx_type_name(r->v[i].mode),
		    "why", r->v[i].why ? r->v[i].why : "");
		if (f != NULL && r->v[i].inside > 0)
			json_object_set_new(f, "entries",
			    json_integer((json_int_t)r->v[i].inside));
		json_array_append_new(files, f);
	}
	return json_pack("{s:o,s:I,s:b,s:o,s:s}", "files", files,
	    "more", (json_int_t)(r->n - n), "complete", r->incomplete == NULL,
	    "incomplete", jtext(r->incomplete),
	    "baseline", r->since_resume ? "resume" : "start");
}

static const char *
hx_jstr(const json_t *o, const char *key)
{
	const char	*s = json_string_value(json_object_get(o, key));

	return s ? s : "";
}

/* An untrusted string on f, escaped. */
static void
hx_put(FILE *f, const char *s)
{
	char	*e = str_escape_dup(s, strlen(s), 0);

	fputs(e ? e : "?", f);
	free(e);
}

size_t
hostexec_print(FILE *f, const char *prefix, const json_t *rep, size_t max)
{
	const json_t	*files = json_object_get(rep, "files"), *it;
	const char	*inc = json_string_value(json_object_get(rep,
			    "incomplete"));
	size_t		 n = json_array_size(files), i, more;
	json_int_t	 inside;

	more = (size_t)json_integer_value(json_object_get(rep, "more"));
	if (n > 0)
		fprintf(f, "%sthis run created or changed files that run code "
		    "on the host; check them before you use git, a shell or an "
		    "editor in this workspace:\n", prefix);
	for (i = 0; i < n && i < max; i++) {
		it = json_array_get(files, i);
		fprintf(f, "  %-7s ", hx_jstr(it, "change"));
		hx_put(f, hx_jstr(it, "path"));
		if (strcmp(hx_jstr(it, "type"), "dir") == 0)
			fputc('/', f);
		inside = json_integer_value(json_object_get(it, "entries"));
		if (inside > 0)
			fprintf(f, " (%lld entries in it)", (long long)inside);
		fprintf(f, "  [%s]\n", hx_jstr(it, "why"));
	}
	if (n + more > i)
		fprintf(f, "  ... and %zu more\n", n + more - i);
	if (inc != NULL) {
		fprintf(f, "%sthe check for such files is incomplete: ", prefix);
		hx_put(f, inc);
		fputc('\n', f);
	}
	if (strcmp(hx_jstr(rep, "baseline"), "resume") == 0)
		fprintf(f, "%sthe check compared with the workspace as it was "
		    "when the run resumed: no snapshot from its start was "
		    "stored\n", prefix);
	return i;
}

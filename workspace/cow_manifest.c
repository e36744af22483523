/*
 * The base manifest of a cow directory (cow_int.h): what lstat() said of
 * every entry of a tree when a run started, the walk that makes it, and
 * the reader that loads it into a sorted array.
 *
 * A manifest is text a reader can split with no escaping: a header line,
 * then one record per entry, its fields in decimal (the mode in octal)
 * and its path last, ended by a NUL byte, the one byte no name holds,
 * and last the number of records:
 *
 *	warren cow base 2\n
 *	100644 INO SIZE MTIME_NS CTIME_NS a/b\n.c\0 ... end N\0
 *
 * It is written to NAME.tmp and renamed, not fsync'd: a kill at any
 * point leaves NAME whole or absent (the page cache outlives the
 * process); a power loss may leave it cut short on disk (its data later
 * than its rename), which the count at its end tells, so a reader
 * refuses it rather than take a short list for the tree. That is the
 * store's own durability (docs/memory.md): what a power loss takes is
 * lost, never read as good. Version 1, without the count, is still read.
 *
 * The walk is the one every cow file uses on trees agents wrote (or may
 * write): directories are opened with O_NOFOLLOW under their parent's
 * fd, never by path; another filesystem is seen but not entered; an
 * entry removed while it reads (agents may be writing) is skipped; it is
 * bounded in entries and depth, and a bound reached is an error, never
 * a short answer.
 */
#include <sys/stat.h>

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/str.h"
#include "common/xmalloc.h"
#include "workspace/cow_int.h"
#include "workspace/hostexec.h"

#define COW_MANIFEST_MAGIC	"warren cow base 2\n"
#define COW_MANIFEST_MAGIC1	"warren cow base 1\n"
#define COW_MANIFEST_END	"end "

/* path, escaped for a message (names are hostile), in buf. */
const char *
cow_esc(char *buf, size_t bufsz, const char *path)
{
	str_escape(buf, bufsz, path, strlen(path));
	return buf;
}

static int
cw_fail(struct cow_walk *w, int errnum, const char *what)
{
	char	esc[512];

	snprintf(w->err, w->errsz, "%s \"%s\": %s", what,
	    cow_esc(esc, sizeof(esc), w->path), strerror(errnum));
	return -1;
}

void
cow_stat_set(struct cow_stat *st, const struct stat *sb)
{
	st->mode = sb->st_mode;
	st->ino = (uint64_t)sb->st_ino;
	st->size = (int64_t)sb->st_size;
	st->mtime_ns = (int64_t)sb->st_mtim.tv_sec * 1000000000 +
	    sb->st_mtim.tv_nsec;
	st->ctime_ns = (int64_t)sb->st_ctim.tv_sec * 1000000000 +
	    sb->st_ctim.tv_nsec;
}

/* w->path = its first len bytes + "/" + name; the new length or -1. */
static int
cw_push(struct cow_walk *w, size_t len, const char *name)
{
	int	n;

	n = snprintf(w->path + len, sizeof(w->path) - len, "%s%s",
	    len > 0 ? "/" : "", name);
	if (n < 0 || (size_t)n >= sizeof(w->path) - len) {
		w->path[len] = '\0';
		return cw_fail(w, ENAMETOOLONG, "a name under");
	}
	return (int)(len + (size_t)n);
}

static int	cw_dir(struct cow_walk *, int, size_t);

/* Into the directory name (sb: its lstat) of dirfd, if it is ours. */
static int
cw_descend(struct cow_walk *w, int dirfd, const char *name,
    const struct stat *sb, size_t len)
{
	struct stat	now;
	int		fd, rv;

	if (sb->st_dev != w->dev)
		return 0;	/* a mount point: not entered */
	if (w->depth + 1 >= COW_MAX_DEPTH) {
		snprintf(w->err, w->errsz, "more than %d directories deep: "
		    "refused", COW_MAX_DEPTH);
		return -1;
	}
	if ((fd = openat(dirfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW |
	    O_CLOEXEC)) == -1) {
		if (errno == EACCES && w->unreadable_ok)
			return w->leave != NULL ? w->leave(w, -1, sb) : 0;
		if (errno == ENOENT)
			return 0;	/* removed since lstat */
		return cw_fail(w, errno, "cannot open directory");
	}
	if (fstat(fd, &now) == -1 || now.st_ino != sb->st_ino ||
	    now.st_dev != sb->st_dev) {
		close(fd);
		return cw_fail(w, EAGAIN, "changed while read:");
	}
	w->depth++;
	rv = cw_dir(w, fd, len);
	w->depth--;
	w->path[len] = '\0';
	if (rv == 0 && w->leave != NULL)
		rv = w->leave(w, fd, sb);
	close(fd);
	return rv;
}

static int
cw_entry(struct cow_walk *w, int dirfd, const char *name, size_t len)
{
	struct stat	sb;
	int		nlen, rv;

	if ((nlen = cw_push(w, len, name)) == -1)
		return -1;
	if (++w->n > w->max) {
		snprintf(w->err, w->errsz, "more than %zu entries: refused "
		    "(a tree this large is not reviewed file by file)", w->max);
		return -1;
	}
	if (fstatat(dirfd, name, &sb, AT_SYMLINK_NOFOLLOW) == -1) {
		if (errno != ENOENT)
			return cw_fail(w, errno, "cannot lstat");
		w->path[len] = '\0';	/* removed since readdir: gone */
		return 0;
	}
	if ((rv = w->entry(w, dirfd, name, &sb)) == 0 && S_ISDIR(sb.st_mode))
		rv = cw_descend(w, dirfd, name, &sb, (size_t)nlen);
	w->path[len] = '\0';
	return rv == -1 ? -1 : 0;
}

/* Every entry of the directory fd (its path: w->path's len bytes). */
static int
cw_dir(struct cow_walk *w, int fd, size_t len)
{
	struct dirent	*de;
	DIR		*d;
	int		 dfd, rv = 0;

	/* A new open file: its offset is not fd's (a dup would share it,
	 * and a second walk of the same fd would read nothing). */
	if ((dfd = openat(fd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC)) ==
	    -1 || (d = fdopendir(dfd)) == NULL) {
		if (dfd != -1)
			close(dfd);
		return cw_fail(w, errno, "cannot read directory");
	}
	while (rv == 0) {
		errno = 0;
		if ((de = readdir(d)) == NULL) {
			if (errno != 0)
				rv = cw_fail(w, errno, "cannot read directory");
			break;
		}
		if (strcmp(de->d_name, ".") == 0 ||
		    strcmp(de->d_name, "..") == 0)
			continue;
		rv = cw_entry(w, fd, de->d_name, len);
	}
	closedir(d);
	return rv;
}

int
cow_walk(struct cow_walk *w, int rootfd, char *err, size_t errsz)
{
	struct stat	sb;

	w->err = err;
	w->errsz = errsz;
	w->n = 0;
	w->depth = 0;
	w->path[0] = '\0';
	if (w->max == 0)
		w->max = COW_MAX_ENTRIES;
	if (fstat(rootfd, &sb) == -1)
		return cw_fail(w, errno, "cannot stat the root");
	w->dev = sb.st_dev;
	return cw_dir(w, rootfd, 0);
}

int
cow_manifest_begin(struct cow_mwriter *m, int dirfd, const char *name,
    char *err, size_t errsz)
{
	int	fd;

	memset(m, 0, sizeof(*m));
	m->dirfd = dirfd;
	if (strlcpy(m->name, name, sizeof(m->name)) >= sizeof(m->name)) {
		snprintf(err, errsz, "manifest name %s: too long", name);
		return -1;
	}
	snprintf(m->tmp, sizeof(m->tmp), "%s.tmp", name);
	if ((fd = openat(dirfd, m->tmp, O_WRONLY | O_CREAT | O_EXCL |
	    O_NOFOLLOW | O_CLOEXEC, 0600)) == -1) {
		snprintf(err, errsz, "cannot create %s: %s", m->tmp,
		    strerror(errno));
		return -1;
	}
	if ((m->f = fdopen(fd, "w")) == NULL) {
		snprintf(err, errsz, "fdopen %s: %s", m->tmp, strerror(errno));
		close(fd);
		unlinkat(dirfd, m->tmp, 0);
		return -1;
	}
	fputs(COW_MANIFEST_MAGIC, m->f);
	return 0;
}

int
cow_manifest_add(struct cow_mwriter *m, const char *path,
    const struct stat *sb, char *err, size_t errsz)
{
	struct cow_stat	st;

	m->n++;
	cow_stat_set(&st, sb);
	if (fprintf(m->f, "%o %" PRIu64 " %" PRId64 " %" PRId64 " %" PRId64
	    " %s", (unsigned)st.mode, st.ino, st.size, st.mtime_ns,
	    st.ctime_ns, path) < 0 || fputc('\0', m->f) == EOF) {
		snprintf(err, errsz, "cannot write %s: %s", m->tmp,
		    strerror(errno));
		return -1;
	}
	return 0;
}

int
cow_manifest_end(struct cow_mwriter *m, char *err, size_t errsz)
{
	FILE	*f = m->f;

	m->f = NULL;
	if (fprintf(f, COW_MANIFEST_END "%zu", m->n) < 0 ||
	    fputc('\0', f) == EOF || fflush(f) == EOF) {
		snprintf(err, errsz, "cannot write %s: %s", m->tmp,
		    strerror(errno));
		fclose(f);
		unlinkat(m->dirfd, m->tmp, 0);
		return -1;
	}
	if (fclose(f) == EOF || renameat(m->dirfd, m->tmp, m->dirfd,
	    m->name) == -1) {
		snprintf(err, errsz, "cannot write %s: %s", m->name,
		    strerror(errno));
		unlinkat(m->dirfd, m->tmp, 0);
		return -1;
	}
	return 0;
}

void
cow_manifest_abort(struct cow_mwriter *m)
{
	if (m->f == NULL)
		return;
	fclose(m->f);
	m->f = NULL;
	unlinkat(m->dirfd, m->tmp, 0);
}

static int
cm_entry(struct cow_walk *w, int dirfd, const char *name,
    const struct stat *sb)
{
	(void)dirfd;
	(void)name;
	return cow_manifest_add(w->arg, w->path, sb, w->err, w->errsz);
}

int
cow_manifest_write(int rootfd, int dirfd, const char *name, char *err,
    size_t errsz)
{
	struct cow_mwriter	m;
	struct cow_walk		w;

	if (cow_manifest_begin(&m, dirfd, name, err, errsz) == -1)
		return -1;
	memset(&w, 0, sizeof(w));
	w.entry = cm_entry;
	w.arg = &m;
	w.unreadable_ok = 1;	/* no agent can write under it either */
	if (cow_walk(&w, rootfd, err, errsz) == -1) {
		cow_manifest_abort(&m);
		return -1;
	}
	return cow_manifest_end(&m, err, errsz);
}

/* A path as a walk writes it: no "", ".", ".." or empty parts. */
static int
cm_path_ok(const char *p)
{
	const char	*s;
	size_t		 n;

	if (*p == '\0' || strlen(p) >= PATH_MAX)
		return 0;
	for (;;) {
		s = strchr(p, '/');
		n = s != NULL ? (size_t)(s - p) : strlen(p);
		if (n == 0 || (n == 1 && p[0] == '.') ||
		    (n == 2 && p[0] == '.' && p[1] == '.'))
			return 0;
		if (s == NULL)
			return 1;
		p = s + 1;
	}
}

/* One record (len bytes, NUL included) into e; -1 if it is not one. */
static int
cm_parse(const char *rec, size_t len, struct cow_base_ent *e)
{
	unsigned	mode;
	int		off = -1;

	if (len < 2 || rec[len - 1] != '\0' || strlen(rec) != len - 1)
		return -1;
	/* The path starts right after one space: it may begin with more. */
	if (sscanf(rec, "%o %" SCNu64 " %" SCNd64 " %" SCNd64 " %" SCNd64
	    "%n", &mode, &e->st.ino, &e->st.size, &e->st.mtime_ns,
	    &e->st.ctime_ns, &off) != 5 || off <= 0 || rec[off] != ' ' ||
	    !cm_path_ok(rec + off + 1))
		return -1;
	e->st.mode = (mode_t)mode;
	e->path = xstrdup(rec + off + 1);
	return 0;
}

static int
cm_entcmp(const void *a, const void *b)
{
	return hostexec_pathcmp(((const struct cow_base_ent *)a)->path,
	    ((const struct cow_base_ent *)b)->path);
}

/* The count that ends a version 2 manifest: 0 if rec is it, for n. */
static int
cm_end(const char *rec, size_t len, size_t n)
{
	char	want[32];

	snprintf(want, sizeof(want), COW_MANIFEST_END "%zu", n);
	return len == strlen(want) + 1 && memcmp(rec, want, len) == 0 ? 0 :
	    -1;
}

/*
 * Read the records of f into b; -1 with err filled on the first bad one.
 * counted: version 2, whose last record is their count.
 */
static int
cm_records(FILE *f, const char *name, int counted, struct cow_base *b,
    char *err, size_t errsz)
{
	char	*rec = NULL;
	size_t	 cap = 0, alloc = 0;
	ssize_t	 len;
	int	 rv = 0, ended = 0;

	while ((len = getdelim(&rec, &cap, '\0', f)) != -1) {
		if (ended) {
			snprintf(err, errsz, "%s: records after its end; "
			    "discard the run", name);
			rv = -1;
			break;
		}
		if (counted && strncmp(rec, COW_MANIFEST_END,
		    strlen(COW_MANIFEST_END)) == 0) {
			if (cm_end(rec, (size_t)len, b->n) == -1) {
				snprintf(err, errsz, "%s: its count is not "
				    "its %zu records; discard the run", name,
				    b->n);
				rv = -1;
				break;
			}
			ended = 1;
			continue;
		}
		if (b->n >= COW_MAX_ENTRIES) {
			snprintf(err, errsz, "%s: more than %d entries",
			    name, COW_MAX_ENTRIES);
			rv = -1;
			break;
		}
		if (b->n == alloc) {
			alloc = alloc ? alloc * 2 : 256;
			b->v = xreallocarray(b->v, alloc, sizeof(*b->v));
		}
		if (cm_parse(rec, (size_t)len, &b->v[b->n]) == -1) {
			snprintf(err, errsz, "%s: record %zu is corrupt; "
			    "discard the run", name, b->n + 1);
			rv = -1;
			break;
		}
		b->n++;
	}
	if (rv == 0 && ferror(f)) {
		snprintf(err, errsz, "cannot read %s: %s", name,
		    strerror(errno));
		rv = -1;
	}
	if (rv == 0 && counted && !ended) {
		snprintf(err, errsz, "%s: cut short after %zu records (a "
		    "power loss while it was written?); discard the run",
		    name, b->n);
		rv = -1;
	}
	free(rec);
	return rv;
}

/* Sort b; a path twice is a corrupt manifest. */
static int
cm_sort(struct cow_base *b, const char *name, char *err, size_t errsz)
{
	size_t	i;

	if (b->n > 0)
		qsort(b->v, b->n, sizeof(*b->v), cm_entcmp);
	for (i = 1; i < b->n; i++) {
		if (strcmp(b->v[i - 1].path, b->v[i].path) == 0) {
			snprintf(err, errsz, "%s: a path is there twice; "
			    "discard the run", name);
			return -1;
		}
	}
	return 0;
}

int
cow_manifest_read(int dirfd, const char *name, struct cow_base *b,
    char *err, size_t errsz)
{
	char	 head[sizeof(COW_MANIFEST_MAGIC)];
	FILE	*f;
	int	 fd, counted;

	memset(b, 0, sizeof(*b));
	if ((fd = openat(dirfd, name, O_RDONLY | O_NOFOLLOW | O_CLOEXEC)) ==
	    -1 || (f = fdopen(fd, "r")) == NULL) {
		snprintf(err, errsz, "cannot open %s: %s", name,
		    strerror(errno));
		if (fd != -1)
			close(fd);
		return -1;
	}
	if (fgets(head, sizeof(head), f) == NULL ||
	    ((counted = strcmp(head, COW_MANIFEST_MAGIC) == 0) == 0 &&
	    strcmp(head, COW_MANIFEST_MAGIC1) != 0)) {
		snprintf(err, errsz, "%s is not a warren cow manifest "
		    "(version 1 or 2)", name);
		fclose(f);
		return -1;
	}
	if (cm_records(f, name, counted, b, err, errsz) == -1 ||
	    cm_sort(b, name, err, errsz) == -1) {
		fclose(f);
		cow_base_free(b);
		return -1;
	}
	fclose(f);
	return 0;
}

void
cow_base_free(struct cow_base *b)
{
	size_t	i;

	if (b == NULL)
		return;
	for (i = 0; i < b->n; i++)
		free(b->v[i].path);
	free(b->v);
	memset(b, 0, sizeof(*b));
}

ssize_t
cow_base_find(const struct cow_base *b, const char *path)
{
	size_t	lo = 0, hi = b->n, mid;
	int	c;

	while (lo < hi) {
		mid = lo + (hi - lo) / 2;
		if ((c = hostexec_pathcmp(path, b->v[mid].path)) == 0)
			return (ssize_t)mid;
		if (c < 0)
			hi = mid;
		else
			lo = mid + 1;
	}
	return -1;
}

size_t
cow_base_end(const struct cow_base *b, size_t i)
{
	const char	*p = b->v[i].path;
	size_t		 n = strlen(p), j;

	for (j = i + 1; j < b->n; j++)
		if (strncmp(b->v[j].path, p, n) != 0 || b->v[j].path[n] != '/')
			break;
	return j;
}

int
cow_open_parent(int rootfd, const char *rel, const char **last)
{
	char		 name[NAME_MAX + 1];
	const char	*p = rel, *s;
	int		 fd, next;

	if ((fd = dup(rootfd)) == -1)
		return -1;
	while ((s = strchr(p, '/')) != NULL) {
		if ((size_t)(s - p) > NAME_MAX) {
			close(fd);
			errno = ENAMETOOLONG;
			return -1;
		}
		memcpy(name, p, (size_t)(s - p));
		name[s - p] = '\0';
		next = openat(fd, name, O_PATH | O_DIRECTORY | O_NOFOLLOW |
		    O_CLOEXEC);
		close(fd);
		if (next == -1)
			return -1;
		fd = next;
		p = s + 1;
	}
	*last = p;
	return fd;
}

int
cow_open_under(int rootfd, const char *rel, int flags)
{
	const char	*last;
	int		 dfd, fd, saved;

	if ((dfd = cow_open_parent(rootfd, rel, &last)) == -1)
		return -1;
	fd = openat(dfd, last, flags | O_NOFOLLOW | O_CLOEXEC);
	saved = errno;
	close(dfd);
	errno = saved;
	return fd;
}

/*
 * hardlinks_outside (hardlinks.h): an inode table of the regular files
 * with st_nlink > 1, filled by one walk of the workspace. A file whose
 * names the walk found number fewer than its links has a link outside
 * the walk. Files with one link (nearly all) cost one fstatat and no
 * memory.
 */
#include <sys/stat.h>

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/str.h"
#include "workspace/hardlinks.h"

#define HL_MAX_DEPTH	256

struct hl_ino {
	dev_t	 dev;
	ino_t	 ino;
	nlink_t	 nlink, seen;
	char	*first;		/* its first name; NULL: an empty slot */
};

struct hl_walk {
	struct hl_ino	*v;
	size_t		 cap, n;
	struct hardlinks *h;
	char		 path[PATH_MAX];
	char		*err;
	size_t		 errsz;
};

static int
hl_fail(struct hl_walk *w, const char *what, int e)
{
	char	*s;

	s = str_escape_dup(w->path, strlen(w->path), 0);
	snprintf(w->err, w->errsz, "cannot check the workspace for hard "
	    "links (%s %s: %s)", what, s != NULL ? s : "?", strerror(e));
	free(s);
	return -1;
}

static size_t
hl_slot(const struct hl_ino *v, size_t cap, dev_t dev, ino_t ino)
{
	size_t	i = ((size_t)ino * 2654435761u ^ (size_t)dev) & (cap - 1);

	while (v[i].first != NULL && (v[i].dev != dev || v[i].ino != ino))
		i = (i + 1) & (cap - 1);
	return i;
}

static int
hl_grow(struct hl_walk *w)
{
	struct hl_ino	*nv;
	size_t		 ncap = w->cap == 0 ? 256 : w->cap * 2, i, j;

	if ((nv = calloc(ncap, sizeof(*nv))) == NULL)
		return -1;
	for (i = 0; i < w->cap; i++)
		if (w->v[i].first != NULL) {
			j = hl_slot(nv, ncap, w->v[i].dev, w->v[i].ino);
			nv[j] = w->v[i];
		}
	free(w->v);
	w->v = nv;
	w->cap = ncap;
	return 0;
}

/* One more name of a file with several links (w->path). */
static int
hl_note(struct hl_walk *w, const struct stat *sb)
{
	struct hl_ino	*e;

	if ((w->n + 1) * 2 > w->cap && hl_grow(w) == -1)
		return hl_fail(w, "at", errno);
	e = &w->v[hl_slot(w->v, w->cap, sb->st_dev, sb->st_ino)];
	if (e->first == NULL) {
		if ((e->first = strdup(w->path)) == NULL)
			return hl_fail(w, "at", errno);
		e->dev = sb->st_dev;
		e->ino = sb->st_ino;
		e->nlink = sb->st_nlink;
		w->n++;
	}
	e->seen++;
	return 0;
}

static int	hl_dir(struct hl_walk *, int, size_t, int);

/*
 * A directory this walk may not read or search (sb): passed by only
 * when an agent, which runs as this user, cannot reach in either: not
 * this user's (the owner may chmod it back: review31 found an agent's
 * `chmod 755 vendor; echo >> vendor/lib.js` writing through a link in a
 * 000 directory the walk had passed by) and not searchable by them (a
 * known name in it could be opened). 0 passed by, -1 said.
 */
static int
hl_shut(struct hl_walk *w, const struct stat *sb, int searchable)
{
	char	*s;

	if (sb->st_uid != geteuid() && !searchable)
		return 0;
	s = str_escape_dup(w->path, strlen(w->path), 0);
	snprintf(w->err, w->errsz, "cannot check the workspace for hard "
	    "links: the directory %s cannot be read, and an agent running as "
	    "you could %s (its files may have links outside)", s != NULL &&
	    *s != '\0' ? s : ".", sb->st_uid == geteuid() ? "make it readable "
	    "(it is yours: chmod)" : "open a file in it by name (it can be "
	    "searched)");
	free(s);
	return -1;
}

/* One entry of the directory dfd; w->path is its relative path. */
static int
hl_entry(struct hl_walk *w, int dfd, const char *name, size_t len,
    int depth)
{
	struct stat	sb;
	int		fd;

	if (fstatat(dfd, name, &sb, AT_SYMLINK_NOFOLLOW) == -1) {
		if (errno == ENOENT)
			return 0;	/* gone */
		if (errno != EACCES || fstat(dfd, &sb) == -1)
			return hl_fail(w, "looking at", errno);
		/* Its directory can be listed, not searched. */
		w->path[len - strlen(name) - (len > strlen(name))] = '\0';
		return hl_shut(w, &sb, 0);
	}
	w->h->nentries++;
	if (S_ISREG(sb.st_mode))
		return sb.st_nlink > 1 ? hl_note(w, &sb) : 0;
	if (!S_ISDIR(sb.st_mode))
		return 0;
	if (depth >= HL_MAX_DEPTH)
		return hl_fail(w, "too deep at", ELOOP);
	if ((fd = openat(dfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW |
	    O_CLOEXEC)) == -1)
		return errno == ENOENT ? 0 : errno == EACCES ? hl_shut(w, &sb,
		    faccessat(dfd, name, X_OK, AT_EACCESS) == 0) :
		    hl_fail(w, "opening", errno);
	return hl_dir(w, fd, len, depth + 1);
}

/* The directory fd (closed here), whose path in w->path is len long. */
static int
hl_dir(struct hl_walk *w, int fd, size_t len, int depth)
{
	struct dirent	*de;
	DIR		*d;
	size_t		 nl;
	int		 rc = 0;

	if ((d = fdopendir(fd)) == NULL) {
		close(fd);
		return hl_fail(w, "reading", errno);
	}
	while (rc == 0 && (errno = 0, de = readdir(d)) != NULL) {
		if (strcmp(de->d_name, ".") == 0 || strcmp(de->d_name, "..") ==
		    0 || (depth == 0 && (strcmp(de->d_name, ".git") == 0 ||
		    strcmp(de->d_name, ".warren") == 0)))
			continue;
		nl = strlen(de->d_name);
		if (len + (len > 0) + nl >= sizeof(w->path)) {
			w->path[len] = '\0';
			rc = hl_fail(w, "a name too long under", ENAMETOOLONG);
			break;
		}
		if (len > 0)
			w->path[len] = '/';
		memcpy(w->path + len + (len > 0), de->d_name, nl + 1);
		rc = hl_entry(w, dirfd(d), de->d_name, len + (len > 0) + nl,
		    depth);
	}
	if (rc == 0 && de == NULL && errno != 0) {
		w->path[len] = '\0';
		rc = hl_fail(w, "reading", errno);
	}
	w->path[len] = '\0';
	closedir(d);
	return rc;
}

/* The files with a link the walk did not find: counted, the first few
 * (in the table's order) named. */
static int
hl_collect(struct hl_walk *w)
{
	size_t	i, k;

	for (i = 0; i < w->cap; i++) {
		if (w->v[i].first == NULL || w->v[i].seen >= w->v[i].nlink)
			continue;
		if ((k = w->h->nout++) < HARDLINKS_NAMED &&
		    (w->h->named[k] = strdup(w->v[i].first)) == NULL)
			return -1;
	}
	return 0;
}

int
hardlinks_outside(const char *ws, struct hardlinks *h, char *err,
    size_t errsz)
{
	struct hl_walk	 w;
	size_t		 i;
	int		 fd, rc = -1;

	memset(h, 0, sizeof(*h));
	memset(&w, 0, sizeof(w));
	w.h = h;
	w.err = err;
	w.errsz = errsz;
	snprintf(w.path, sizeof(w.path), "%s", ws);
	if ((fd = open(ws, O_RDONLY | O_DIRECTORY | O_CLOEXEC)) == -1) {
		hl_fail(&w, "opening", errno);
		return -1;
	}
	w.path[0] = '\0';
	if (hl_dir(&w, fd, 0, 0) == 0) {
		if (hl_collect(&w) == 0)
			rc = 0;
		else
			hl_fail(&w, "listing", errno);
	}
	for (i = 0; i < w.cap; i++)
		free(w.v[i].first);
	free(w.v);
	if (rc == -1)
		hardlinks_free(h);
	return rc;
}

void
hardlinks_free(struct hardlinks *h)
{
	size_t	i;

	for (i = 0; i < HARDLINKS_NAMED; i++)
		free(h->named[i]);
	memset(h, 0, sizeof(*h));
}

/*
 * What a run changed (cow.h): the layer against the base manifest.
 *
 * Overlay mode reads upper/ as overlayfs wrote it. An entry there is new
 * or changed, unless it is a directory or a copied-up file whose type,
 * mode and content (bytes, compared with the workspace's) equal the
 * base's: overlayfs copies a file up for a mode change or an open for
 * writing, and its parents with it. A character device 0/0 is a
 * whiteout: the base entry is gone, and everything under it. An opaque
 * directory (the overlay.opaque xattr "y") hides what the base held under
 * it; so does a file that replaced a directory. The xattrs are read in
 * the namespace the overlay was mounted with: trusted.overlay.* by root,
 * user.overlay.* (userxattr) by anyone else, so that an agent that sets
 * user.overlay.opaque on a directory of a root-mounted overlay (where it
 * is a plain xattr) deletes nothing. Redirects and metacopy files (data
 * left in the lower layer) are not carried: they are unsupported entries.
 *
 * Copy mode compares tree/ with tree.base, what tree/ held right after
 * the copy: an entry whose lstat moved is compared by content with the
 * workspace's.
 *
 * Anything else an agent left in the layer (a FIFO, a socket, a device,
 * a directory we may not read) is a COW_UNSUPPORTED entry: the caller
 * sees it, apply refuses it.
 */
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/xattr.h>

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/xmalloc.h"
#include "workspace/cow_int.h"
#include "workspace/hostexec.h"

struct cc_run {
	const struct cow	*c;
	struct cow_base		 base;	/* the workspace when the run began */
	struct cow_base		 tbase;	/* copy mode: tree/ after the copy */
	unsigned char		*seen;	/* per base (overlay) or tbase (copy)
					   entry: in the layer */
	unsigned char		*hidden; /* overlay: per base entry, under a
					    whiteout, an opaque dir or a file */
	int			 lowerfd; /* the workspace */
	const char		*xattr;	/* "trusted" or "user" */
	char			 layer[PATH_MAX + 16]; /* upper/, tree/ */
	struct cow_changes	*out;
	size_t			 cap;
};

static int
cc_add(struct cc_run *r, struct cow_walk *w, const char *path,
    enum cow_kind kind, const struct cow_stat *base, mode_t new_mode)
{
	struct cow_change	*ch;

	if (r->out->n >= COW_MAX_ENTRIES) {
		snprintf(w->err, w->errsz, "more than %d changes: refused",
		    COW_MAX_ENTRIES);
		return -1;
	}
	if (r->out->n == r->cap) {
		r->cap = r->cap ? r->cap * 2 : 64;
		r->out->v = xreallocarray(r->out->v, r->cap,
		    sizeof(*r->out->v));
	}
	ch = &r->out->v[r->out->n++];
	memset(ch, 0, sizeof(*ch));
	ch->path = xstrdup(path);
	ch->kind = kind;
	if (base != NULL)
		ch->base = *base;
	if (kind != COW_DELETED) {
		ch->new_mode = new_mode;
		xasprintf(&ch->src, "%s/%s", r->layer, path);
	}
	ch->sensitive = hostexec_why(path);
	return 0;
}

/* Content of the layer's name in dirfd against the workspace's path:
 * 1 the same, 0 not (or no longer there), -1 error. */
static int
cc_same_file(struct cc_run *r, struct cow_walk *w, int dirfd,
    const char *name)
{
	struct stat	sb;
	char		esc[512];
	int		a, b, same;

	if ((a = openat(dirfd, name, O_RDONLY | O_NOFOLLOW | O_NOCTTY |
	    O_CLOEXEC)) == -1) {
		if (errno == EACCES || errno == ENOENT)
			return 0;	/* mode 000 both sides, or just removed
					   (a live run): say changed */
		snprintf(w->err, w->errsz, "cannot read \"%s\" in the layer: "
		    "%s", cow_esc(esc, sizeof(esc), w->path), strerror(errno));
		return -1;
	}
	if ((b = cow_open_under(r->lowerfd, w->path, O_RDONLY | O_NOCTTY)) ==
	    -1 || fstat(b, &sb) == -1 || !S_ISREG(sb.st_mode)) {
		if (b != -1)
			close(b);
		close(a);
		return 0;
	}
	if ((same = cow_same_bytes(a, b)) == -1)
		snprintf(w->err, w->errsz, "cannot compare \"%s\" with the "
		    "workspace's: %s", cow_esc(esc, sizeof(esc), w->path),
		    strerror(errno));
	close(a);
	close(b);
	return same;
}

/* The layer's link name in dirfd against the workspace's: 1 same target,
 * 0 not (or no longer a link), -1 error. */
static int
cc_same_link(struct cc_run *r, struct cow_walk *w, int dirfd,
    const char *name)
{
	char		 a[PATH_MAX + 1], b[PATH_MAX + 1], esc[512];
	const char	*last;
	ssize_t		 na, nb;
	int		 pfd;

	if ((na = readlinkat(dirfd, name, a, sizeof(a))) == -1) {
		if (errno == ENOENT)
			return 0;	/* just removed: say changed */
		snprintf(w->err, w->errsz, "cannot read the link \"%s\" in "
		    "the layer: %s", cow_esc(esc, sizeof(esc), w->path),
		    strerror(errno));
		return -1;
	}
	if ((pfd = cow_open_parent(r->lowerfd, w->path, &last)) == -1)
		return 0;
	nb = readlinkat(pfd, last, b, sizeof(b));
	close(pfd);
	return na == nb && memcmp(a, b, (size_t)na) == 0;
}

/* Does the layer's entry hold what the base's (same type) did? */
static int
cc_same(struct cc_run *r, struct cow_walk *w, int dirfd, const char *name,
    const struct stat *sb, const struct cow_stat *was)
{
	if ((was->mode & S_IFMT) != (sb->st_mode & S_IFMT) ||
	    (was->mode & 07777) != (sb->st_mode & 07777))
		return 0;
	if (S_ISREG(sb->st_mode))
		return cc_same_file(r, w, dirfd, name);
	if (S_ISLNK(sb->st_mode))
		return cc_same_link(r, w, dirfd, name);
	return 1;
}

/* 1 if the overlay xattr key of name in dirfd is "y". */
static int
cc_xattr_y(struct cc_run *r, int dirfd, const char *name, const char *key)
{
	char	path[64 + NAME_MAX], attr[64], val[8];
	ssize_t	n;

	snprintf(path, sizeof(path), "/proc/self/fd/%d/%s", dirfd, name);
	snprintf(attr, sizeof(attr), "%s.overlay.%s", r->xattr, key);
	n = lgetxattr(path, attr, val, sizeof(val));
	return n == 1 && val[0] == 'y';
}

/* Is there an overlay xattr key on name in dirfd (any value)? */
static int
cc_xattr_has(struct cc_run *r, int dirfd, const char *name, const char *key)
{
	char	path[64 + NAME_MAX], attr[64];

	snprintf(path, sizeof(path), "/proc/self/fd/%d/%s", dirfd, name);
	snprintf(attr, sizeof(attr), "%s.overlay.%s", r->xattr, key);
	return lgetxattr(path, attr, NULL, 0) >= 0;
}

/* Mark base entries from..to as hidden by the layer. */
static void
cc_hide(struct cc_run *r, size_t from, size_t to)
{
	for (; from < to; from++)
		r->hidden[from] = 1;
}

static int
cc_upper_entry(struct cow_walk *w, int dirfd, const char *name,
    const struct stat *sb)
{
	struct cc_run		*r = w->arg;
	const struct cow_stat	*was = NULL;
	ssize_t			 i;
	int			 same;

	i = cow_base_find(&r->base, w->path);
	if (i >= 0)
		was = &r->base.v[i].st;
	if (S_ISCHR(sb->st_mode) && sb->st_rdev == makedev(0, 0)) {
		if (i >= 0)	/* a whiteout: it and all under it */
			cc_hide(r, (size_t)i, cow_base_end(&r->base, (size_t)i));
		return 1;
	}
	if (i >= 0)
		r->seen[i] = 1;
	if ((!S_ISREG(sb->st_mode) && !S_ISDIR(sb->st_mode) &&
	    !S_ISLNK(sb->st_mode)) || cc_xattr_has(r, dirfd, name,
	    "redirect") || cc_xattr_has(r, dirfd, name, "metacopy"))
		return cc_add(r, w, w->path, COW_UNSUPPORTED, was,
		    sb->st_mode) == -1 ? -1 : 1;
	if (i >= 0 && (!S_ISDIR(sb->st_mode) ||
	    cc_xattr_y(r, dirfd, name, "opaque")))
		cc_hide(r, (size_t)i + 1, cow_base_end(&r->base, (size_t)i));
	if (was == NULL)
		return cc_add(r, w, w->path, COW_ADDED, NULL, sb->st_mode);
	if ((same = cc_same(r, w, dirfd, name, sb, was)) == -1)
		return -1;
	if (!same)
		return cc_add(r, w, w->path, COW_MODIFIED, was, sb->st_mode);
	return 0;
}

/*
 * A directory of the layer we may not read (an agent made it 000; root
 * reads it anyway): what it holds is unknown, so it is an unsupported
 * change, the one entry() made for it (if any) turned into that.
 */
static int
cc_unreadable(struct cow_walk *w, int fd, const struct stat *sb)
{
	struct cc_run		*r = w->arg;
	struct cow_change	*last;
	ssize_t			 i;

	if (fd != -1)
		return 0;
	last = r->out->n > 0 ? &r->out->v[r->out->n - 1] : NULL;
	if (last != NULL && strcmp(last->path, w->path) == 0) {
		last->kind = COW_UNSUPPORTED;
		return 0;
	}
	i = cow_base_find(&r->base, w->path);
	return cc_add(r, w, w->path, COW_UNSUPPORTED, i >= 0 ?
	    &r->base.v[i].st : NULL, sb->st_mode);
}

/* After the walk of upper/: what it hides and does not hold is gone. */
static int
cc_upper_deleted(struct cc_run *r, struct cow_walk *w)
{
	size_t	i;

	for (i = 0; i < r->base.n; i++)
		if (r->hidden[i] && !r->seen[i] && cc_add(r, w,
		    r->base.v[i].path, COW_DELETED, &r->base.v[i].st, 0) == -1)
			return -1;
	return 0;
}

static int
cc_copy_entry(struct cow_walk *w, int dirfd, const char *name,
    const struct stat *sb)
{
	struct cc_run		*r = w->arg;
	const struct cow_stat	*was = NULL, *copied;
	struct cow_stat		 now;
	ssize_t			 i, j;
	int			 same;

	if ((i = cow_base_find(&r->base, w->path)) >= 0)
		was = &r->base.v[i].st;
	j = cow_base_find(&r->tbase, w->path);
	if (!S_ISREG(sb->st_mode) && !S_ISDIR(sb->st_mode) &&
	    !S_ISLNK(sb->st_mode))
		return cc_add(r, w, w->path, COW_UNSUPPORTED, was,
		    sb->st_mode) == -1 ? -1 : 1;
	if (j < 0)	/* not copied: new, or where a FIFO ... was */
		return cc_add(r, w, w->path, was ? COW_MODIFIED : COW_ADDED,
		    was, sb->st_mode);
	r->seen[j] = 1;
	copied = &r->tbase.v[j].st;
	cow_stat_set(&now, sb);
	if (now.mode == copied->mode && now.ino == copied->ino &&
	    now.size == copied->size && now.mtime_ns == copied->mtime_ns &&
	    now.ctime_ns == copied->ctime_ns)
		return 0;	/* untouched (ctime: no agent sets it) */
	if ((same = cc_same(r, w, dirfd, name, sb, copied)) == -1)
		return -1;
	if (!same)
		return cc_add(r, w, w->path, COW_MODIFIED, was ? was : copied,
		    sb->st_mode);
	return 0;
}

/* After the walk of tree/: what was copied and is not there is gone. */
static int
cc_copy_deleted(struct cc_run *r, struct cow_walk *w)
{
	const struct cow_stat	*st;
	ssize_t			 i;
	size_t			 j;

	for (j = 0; j < r->tbase.n; j++) {
		if (r->seen[j])
			continue;
		i = cow_base_find(&r->base, r->tbase.v[j].path);
		st = i >= 0 ? &r->base.v[i].st : &r->tbase.v[j].st;
		if (cc_add(r, w, r->tbase.v[j].path, COW_DELETED, st, 0) == -1)
			return -1;
	}
	return 0;
}

static int
cc_pathcmp(const void *a, const void *b)
{
	return hostexec_pathcmp(((const struct cow_change *)a)->path,
	    ((const struct cow_change *)b)->path);
}

/* The manifests, the workspace and the layer's root: its fd, or -1. */
static int
cc_open(struct cc_run *r, char *err, size_t errsz)
{
	const struct cow	*c = r->c;
	const char		*sub;
	size_t			 n;
	int			 dfd, fd = -1;

	sub = c->mode == COW_OVERLAY ? COW_UPPER : COW_TREE;
	snprintf(r->layer, sizeof(r->layer), "%s/%s", c->dir, sub);
	if ((dfd = open(c->dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW |
	    O_CLOEXEC)) == -1) {
		snprintf(err, errsz, "cow directory %s: %s", c->dir,
		    strerror(errno));
		return -1;
	}
	if (cow_manifest_read(dfd, COW_BASE, &r->base, err, errsz) == -1 ||
	    (c->mode == COW_COPY && cow_manifest_read(dfd, COW_TREE_BASE,
	    &r->tbase, err, errsz) == -1))
		goto out;
	if ((r->lowerfd = open(c->workspace, O_RDONLY | O_DIRECTORY |
	    O_CLOEXEC)) == -1) {
		snprintf(err, errsz, "workspace %s: %s", c->workspace,
		    strerror(errno));
		goto out;
	}
	if ((fd = openat(dfd, sub, O_RDONLY | O_DIRECTORY | O_NOFOLLOW |
	    O_CLOEXEC)) == -1)
		snprintf(err, errsz, "%s: %s", r->layer, strerror(errno));
	n = c->mode == COW_OVERLAY ? r->base.n : r->tbase.n;
	r->seen = xcalloc(n + 1, 1);
	r->hidden = xcalloc(r->base.n + 1, 1);
out:
	close(dfd);
	return fd;
}

int
cow_changes(const struct cow *c, struct cow_changes *out, char *err,
    size_t errsz)
{
	struct cc_run	r;
	struct cow_walk	w;
	int		fd, rv = -1;

	memset(out, 0, sizeof(*out));
	memset(&r, 0, sizeof(r));
	memset(&w, 0, sizeof(w));
	r.c = c;
	r.out = out;
	r.lowerfd = -1;
	r.xattr = geteuid() == 0 ? "trusted" : "user";
	if (c->mode != COW_OVERLAY && c->mode != COW_COPY) {
		snprintf(err, errsz, "cow_changes: mode %s has no layer",
		    cow_mode_name(c->mode));
		return -1;
	}
	if ((fd = cc_open(&r, err, errsz)) == -1)
		goto out;
	w.entry = c->mode == COW_OVERLAY ? cc_upper_entry : cc_copy_entry;
	w.leave = cc_unreadable;
	w.unreadable_ok = 1;
	w.arg = &r;
	if (cow_walk(&w, fd, err, errsz) == 0 && (c->mode == COW_OVERLAY ?
	    cc_upper_deleted(&r, &w) : cc_copy_deleted(&r, &w)) == 0)
		rv = 0;
	close(fd);
	if (rv == 0 && out->n > 0)
		qsort(out->v, out->n, sizeof(*out->v), cc_pathcmp);
out:
	if (r.lowerfd != -1)
		close(r.lowerfd);
	cow_base_free(&r.base);
	cow_base_free(&r.tbase);
	free(r.seen);
	free(r.hidden);
	if (rv == -1)
		cow_changes_free(out);
	return rv;
}

void
cow_changes_free(struct cow_changes *ch)
{
	size_t	i;

	if (ch == NULL)
		return;
	for (i = 0; i < ch->n; i++) {
		free(ch->v[i].path);
		free(ch->v[i].src);
	}
	free(ch->v);
	memset(ch, 0, sizeof(*ch));
}

/*
 * cow_unpack (cow.h): a change set read back for diff and apply on this
 * machine. The bytes come from the queue's database, which anyone with
 * its password can write: every field is checked before anything is
 * made (cow_unpack_check), paths as strictly as cow_changes makes them,
 * and nothing in the set is trusted for what apply decides itself (which
 * paths run code on the host comes from hostexec_why, setuid bits are
 * stripped by apply). The contents go to files named by their index
 * under the caller's directory, never by the set's paths.
 */
#include <sys/stat.h>

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/fd.h"
#include "common/xmalloc.h"
#include "workspace/cow.h"
#include "workspace/cow_testapi.h"
#include "workspace/cow_int.h"
#include "workspace/cow_pack_int.h"
#include "workspace/hostexec.h"

#define COW_UNPACK_DATA	"data"

/* One change as the set holds it: pointers into the bytes. */
struct cu_ent {
	enum cow_kind		 kind;
	enum cow_base_by	 base_by;
	mode_t			 base_mode, new_mode;
	const unsigned char	*sum;
	const char		*path;
	size_t			 plen;
	const unsigned char	*data;
	size_t			 dlen;
};

struct cu_read {
	const unsigned char	*p, *end;
	size_t			 i;		/* the change being read */
	char			*err;
	size_t			 errsz;
};

static int
cu_bad(struct cu_read *r, const char *why)
{
	snprintf(r->err, r->errsz, "the change set is damaged or not one "
	    "(change %zu: %s): refused", r->i + 1, why);
	return -1;
}

static int
cu_int(struct cu_read *r, size_t n, uint64_t *v)
{
	size_t	i;

	if ((size_t)(r->end - r->p) < n)
		return cu_bad(r, "it ends early");
	for (*v = 0, i = 0; i < n; i++)
		*v |= (uint64_t)r->p[i] << (8 * i);
	r->p += n;
	return 0;
}

static int
cu_bytes(struct cu_read *r, size_t n, const unsigned char **out)
{
	if ((size_t)(r->end - r->p) < n)
		return cu_bad(r, "it ends early");
	*out = r->p;
	r->p += n;
	return 0;
}

/* A change whose new content goes into the workspace. */
static int
cu_carried(const struct cu_ent *e)
{
	return e->kind == COW_ADDED || e->kind == COW_MODIFIED;
}

/* A path cow_changes could have made: relative, its parts neither empty
 * nor "." nor "..", no NUL, under PATH_MAX. */
static int
cu_path_ok(const char *p, size_t len)
{
	size_t	i, start = 0;

	if (len == 0 || len >= PATH_MAX || memchr(p, '\0', len) != NULL)
		return 0;
	for (i = 0; i <= len; i++) {
		if (i < len && p[i] != '/')
			continue;
		if (i == start || (i - start == 1 && p[start] == '.') ||
		    (i - start == 2 && p[start] == '.' && p[start + 1] == '.'))
			return 0;
		start = i + 1;
	}
	return 1;
}

static int
cu_type_ok(mode_t m)
{
	switch (m & S_IFMT) {
	case S_IFREG: case S_IFDIR: case S_IFLNK: case S_IFIFO:
	case S_IFSOCK: case S_IFCHR: case S_IFBLK:
		return (m & ~(mode_t)(S_IFMT | 07777)) == 0;
	default:
		return 0;
	}
}

/* The fields of e that hang together, as cow_changes makes them: an
 * ADDED change has no base, a MODIFIED or DELETED one has one (known by
 * content or not), an UNSUPPORTED one may; only a file or a link carries
 * data. A FIFO, socket or device passes here: apply refuses it by its
 * mode, as it does a layer's. */
static int
cu_base_ok(const struct cu_ent *e)
{
	int	none = e->base_by == COW_BASE_STAT && e->base_mode == 0;
	int	some = (e->base_by == COW_BASE_SUM ||
		    e->base_by == COW_BASE_UNKNOWN) && cu_type_ok(e->base_mode);

	switch (e->kind) {
	case COW_ADDED:
		return none;
	case COW_UNSUPPORTED:
		return none || some;
	case COW_MODIFIED:
	case COW_DELETED:
		break;
	}
	return some;
}

static int
cu_new_ok(const struct cu_ent *e)
{
	if (e->kind == COW_DELETED)
		return e->new_mode == 0;
	if (e->kind == COW_UNSUPPORTED && e->new_mode == 0)
		return 1;
	return cu_type_ok(e->new_mode);
}

static int
cu_data_ok(const struct cu_ent *e)
{
	if (cu_carried(e) && S_ISLNK(e->new_mode))
		return e->dlen > 0 && e->dlen < PATH_MAX &&
		    memchr(e->data, '\0', e->dlen) == NULL;
	if (cu_carried(e) && S_ISREG(e->new_mode))
		return 1;
	return e->dlen == 0;
}

static int
cu_check(struct cu_read *r, const struct cu_ent *e)
{
	if (e->kind < COW_ADDED || e->kind > COW_UNSUPPORTED)
		return cu_bad(r, "an unknown kind of change");
	if (!cu_base_ok(e))
		return cu_bad(r, "its base is not one a change has");
	if (!cu_new_ok(e))
		return cu_bad(r, "its new mode is not one a change has");
	if (!cu_path_ok(e->path, e->plen))
		return cu_bad(r, "its path is not a relative path without "
		    "\".\", \"..\" or empty parts");
	if (!cu_data_ok(e))
		return cu_bad(r, "its data is not what its kind holds");
	return 0;
}

/* The next change, checked; prev: the path before it (sorted, once). */
static int
cu_next(struct cu_read *r, struct cu_ent *e, const char *prev,
    char *path, size_t pathsz)
{
	uint64_t	v[6];

	memset(e, 0, sizeof(*e));
	if (cu_int(r, 1, &v[0]) == -1 || cu_int(r, 1, &v[1]) == -1 ||
	    cu_int(r, 4, &v[2]) == -1 || cu_bytes(r, COW_SUM_LEN, &e->sum) ==
	    -1 || cu_int(r, 4, &v[3]) == -1 || cu_int(r, 2, &v[4]) == -1 ||
	    cu_bytes(r, v[4], (const unsigned char **)&e->path) == -1 ||
	    cu_int(r, 4, &v[5]) == -1 || cu_bytes(r, v[5], &e->data) == -1)
		return -1;
	e->kind = (enum cow_kind)v[0];
	e->base_by = (enum cow_base_by)v[1];
	e->base_mode = (mode_t)v[2];
	e->new_mode = (mode_t)v[3];
	e->plen = v[4];
	e->dlen = v[5];
	if (cu_check(r, e) == -1)
		return -1;
	/* cu_check: plen < PATH_MAX = pathsz */
	memcpy(path, e->path, e->plen < pathsz ? e->plen : pathsz - 1);
	path[e->plen < pathsz ? e->plen : pathsz - 1] = '\0';
	if (prev != NULL && hostexec_pathcmp(prev, path) >= 0)
		return cu_bad(r, "its path is out of order or given twice");
	return 0;
}

/* Every change read and checked; each one to fn if not NULL. */
static int
cu_walk(const void *data, size_t len, int (*fn)(void *, size_t,
    const struct cu_ent *, const char *), void *arg, char *err, size_t errsz)
{
	struct cu_read	 r = { .p = data, .end = (const unsigned char *)data +
	    len, .err = err, .errsz = errsz };
	struct cu_ent	 e;
	char		 path[2][PATH_MAX];
	uint64_t	 n;

	if (len < COW_PACK_MAGIC_LEN || memcmp(data, COW_PACK_MAGIC,
	    COW_PACK_MAGIC_LEN) != 0) {
		snprintf(err, errsz, "not a change set this warren reads (a "
		    "newer warren's, or damaged): refused");
		return -1;
	}
	r.p += COW_PACK_MAGIC_LEN;
	if (cu_int(&r, 4, &n) == -1)
		return -1;
	if (n > COW_MAX_ENTRIES || n > (len - COW_PACK_MAGIC_LEN - 4) /
	    COW_PACK_FIXED)
		return cu_bad(&r, "more changes than its bytes hold");
	for (r.i = 0; r.i < n; r.i++) {
		if (cu_next(&r, &e, r.i > 0 ? path[(r.i - 1) % 2] : NULL,
		    path[r.i % 2], sizeof(path[0])) == -1)
			return -1;
		if (fn != NULL && fn(arg, r.i, &e, path[r.i % 2]) == -1)
			return -1;
	}
	if (r.p != r.end)
		return cu_bad(&r, "bytes after the last change");
	return 0;
}

int
cow_unpack_check(const void *data, size_t len, char *err, size_t errsz)
{
	return cu_walk(data, len, NULL, NULL, err, errsz);
}

/* Where the contents go: dir (ours, 0700, made if missing; its journal
 * kept for apply), and a fresh dir/data. */
static int
cu_dir(const char *dir, int *datafd, char *err, size_t errsz)
{
	struct stat	sb;
	int		fd;

	*datafd = -1;
	if (mkdir(dir, 0700) == -1 && errno != EEXIST) {
		snprintf(err, errsz, "cannot make %s: %s", dir, strerror(errno));
		return -1;
	}
	if ((fd = open(dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW |
	    O_CLOEXEC)) == -1 || fstat(fd, &sb) == -1) {
		snprintf(err, errsz, "%s: %s", dir, strerror(errno));
		if (fd != -1)
			close(fd);
		return -1;
	}
	if (sb.st_uid != geteuid() || (sb.st_mode & 07777) != 0700) {
		snprintf(err, errsz, "%s: not a directory of ours with mode "
		    "0700 (owner %u, mode %04o): refused", dir,
		    (unsigned)sb.st_uid, (unsigned)sb.st_mode & 07777);
		close(fd);
		return -1;
	}
	if (fstatat(fd, COW_UNPACK_DATA, &sb, AT_SYMLINK_NOFOLLOW) == 0) {
		char	sub[PATH_MAX + 8];

		snprintf(sub, sizeof(sub), "%s/" COW_UNPACK_DATA, dir);
		if (cow_rmtree(sub, err, errsz) == -1) {
			close(fd);
			return -1;
		}
	}
	if (mkdirat(fd, COW_UNPACK_DATA, 0700) == -1 || (*datafd = openat(fd,
	    COW_UNPACK_DATA, O_RDONLY | O_DIRECTORY | O_NOFOLLOW |
	    O_CLOEXEC)) == -1)
		snprintf(err, errsz, "%s/%s: %s", dir, COW_UNPACK_DATA,
		    strerror(errno));
	close(fd);
	return *datafd == -1 ? -1 : 0;
}

struct cu_out {
	int			 datafd;
	const char		*dir;
	struct cow_changes	*out;
	char			*err;
	size_t			 errsz;
};

/* A change's new content in data/INDEX: a file 0600 or a link. */
static int
cu_write(struct cu_out *o, const struct cu_ent *e, const char *name)
{
	char	target[PATH_MAX];
	int	fd, rc;

	if (S_ISLNK(e->new_mode)) {
		memcpy(target, e->data, e->dlen);
		target[e->dlen] = '\0';
		return symlinkat(target, o->datafd, name);
	}
	if ((fd = openat(o->datafd, name, O_WRONLY | O_CREAT | O_EXCL |
	    O_NOFOLLOW | O_CLOEXEC, 0600)) == -1)
		return -1;
	rc = fd_write_all(fd, e->data, e->dlen);
	if (close(fd) == -1)
		rc = -1;
	return rc;
}

static int
cu_put(void *arg, size_t i, const struct cu_ent *e, const char *path)
{
	struct cu_out		*o = arg;
	struct cow_change	*ch = &o->out->v[i];
	char			 name[32];

	ch->path = xstrdup(path);
	o->out->n = i + 1;
	ch->kind = e->kind;
	ch->base_by = e->kind == COW_ADDED ? COW_BASE_STAT : e->base_by;
	ch->base.mode = e->base_mode;
	memcpy(ch->base_sum, e->sum, COW_SUM_LEN);
	ch->new_mode = e->new_mode;
	/* Never what the set says: what this warren knows runs on a host. */
	ch->sensitive = hostexec_why(path);
	if (!cu_carried(e) || (!S_ISREG(e->new_mode) &&
	    !S_ISLNK(e->new_mode)))
		return 0;
	snprintf(name, sizeof(name), "%zu", i);
	if (cu_write(o, e, name) == -1) {
		snprintf(o->err, o->errsz, "cannot write %s/%s/%s: %s", o->dir,
		    COW_UNPACK_DATA, name, strerror(errno));
		return -1;
	}
	xasprintf(&ch->src, "%s/%s/%s", o->dir, COW_UNPACK_DATA, name);
	return 0;
}

int
cow_unpack(const void *data, size_t len, const char *dir,
    const char *workspace, struct cow *c, struct cow_changes *out,
    char *err, size_t errsz)
{
	const unsigned char	*p = data;
	struct cu_out		 o;
	size_t			 n;
	int			 rc;

	memset(c, 0, sizeof(*c));
	memset(out, 0, sizeof(*out));
	if (cu_walk(data, len, NULL, NULL, err, errsz) == -1)
		return -1;
	if (cow_paths(c, dir, workspace, err, errsz) == -1)
		return -1;
	c->mode = COW_COPY;
	n = (size_t)p[8] | (size_t)p[9] << 8 | (size_t)p[10] << 16 |
	    (size_t)p[11] << 24;
	o = (struct cu_out){ .dir = c->dir, .out = out, .err = err,
	    .errsz = errsz };
	if (cu_dir(c->dir, &o.datafd, err, errsz) == -1)
		return -1;
	out->v = xcalloc(n > 0 ? n : 1, sizeof(*out->v));
	rc = cu_walk(data, len, cu_put, &o, err, errsz);
	close(o.datafd);
	if (rc == -1)
		cow_changes_free(out);
	return rc;
}

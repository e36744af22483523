/*
 * A run's cow directory (cow.h): made (its layer by cow_copy.c in copy
 * mode, its base by cow_manifest.c) and checked when opened. Its removal
 * is cow_remove.c, its measure cow_usage.c: everything in it but base
 * was written by agents, and both cope with what an agent may leave.
 * Nothing is left behind when making it fails half way.
 */
#include <sys/stat.h>

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/path.h"
#include "common/xdg.h"
#include "workspace/cow_int.h"

static const char *const cow_mode_names[] = {
	[COW_NONE] = "none",
	[COW_OVERLAY] = "overlay",
	[COW_COPY] = "copy",
};

const char *
cow_mode_name(enum cow_mode m)
{
	if ((unsigned)m >= sizeof(cow_mode_names) / sizeof(cow_mode_names[0]))
		return "unknown";
	return cow_mode_names[m];
}

int
cow_mode_parse(const char *s, enum cow_mode *m)
{
	size_t	i;

	for (i = 0; i < sizeof(cow_mode_names) / sizeof(cow_mode_names[0]);
	    i++) {
		if (strcmp(s, cow_mode_names[i]) == 0) {
			*m = (enum cow_mode)i;
			return 0;
		}
	}
	errno = EINVAL;
	return -1;
}

/* Is the directory sb ours alone (owned by us, no one else may write)? */
static int
cow_ours(const struct stat *sb)
{
	return S_ISDIR(sb->st_mode) && sb->st_uid == geteuid() &&
	    (sb->st_mode & 022) == 0;
}

/* STATEDIR/cow, made 0700 if it is not there; out gets its path. */
static int
cow_parent(const char *statedir, char *out, size_t outsz, char *err,
    size_t errsz)
{
	char		xdg[PATH_MAX];
	struct stat	sb;

	if (statedir == NULL) {
		if (xdg_state_dir(xdg, sizeof(xdg)) == -1) {
			snprintf(err, errsz, "no state directory (%s): set "
			    "XDG_STATE_HOME or HOME", strerror(errno));
			return -1;
		}
		statedir = xdg;
	}
	if ((size_t)snprintf(out, outsz, "%s/%s", statedir, COW_SUBDIR) >=
	    outsz) {
		snprintf(err, errsz, "state directory %s: too long", statedir);
		return -1;
	}
	if (path_mkdirs(out, 0700, 0) == -1 || lstat(out, &sb) == -1) {
		snprintf(err, errsz, "cannot make %s: %s", out,
		    strerror(errno));
		return -1;
	}
	if (!cow_ours(&sb)) {
		snprintf(err, errsz, "%s is not a directory of ours that only "
		    "we may write: refused (fix or remove it)", out);
		return -1;
	}
	return 0;
}

/* The root of a layer (upper/ or tree/): the workspace root's mode, and
 * its owner as root, so the workers see the root they would see. */
static int
cow_mkroot(int dfd, const char *name, const struct stat *ws, char *err,
    size_t errsz)
{
	int	fd, rv = 0;

	if (mkdirat(dfd, name, 0700) == -1 || (fd = openat(dfd, name,
	    O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)) == -1) {
		snprintf(err, errsz, "cannot make %s: %s", name,
		    strerror(errno));
		return -1;
	}
	if ((geteuid() == 0 && fchown(fd, ws->st_uid, ws->st_gid) == -1) ||
	    fchmod(fd, ws->st_mode & 07777) == -1) {
		snprintf(err, errsz, "cannot set the mode of %s: %s", name,
		    strerror(errno));
		rv = -1;
	}
	close(fd);
	return rv;
}

static int
cow_make_overlay(int dfd, int wfd, const struct stat *ws, char *err,
    size_t errsz)
{
	if (cow_mkroot(dfd, COW_UPPER, ws, err, errsz) == -1)
		return -1;
	if (mkdirat(dfd, COW_WORK, 0700) == -1) {
		snprintf(err, errsz, "cannot make %s: %s", COW_WORK,
		    strerror(errno));
		return -1;
	}
	return cow_manifest_write(wfd, dfd, COW_BASE, err, errsz);
}

static int
cow_make_copy(int dfd, int wfd, const struct stat *ws, char *err,
    size_t errsz)
{
	struct cow_mwriter	m;
	int			tfd, rv;

	if (cow_mkroot(dfd, COW_TREE, ws, err, errsz) == -1)
		return -1;
	if ((tfd = openat(dfd, COW_TREE, O_RDONLY | O_DIRECTORY | O_NOFOLLOW |
	    O_CLOEXEC)) == -1) {
		snprintf(err, errsz, "cannot open %s: %s", COW_TREE,
		    strerror(errno));
		return -1;
	}
	if ((rv = cow_manifest_begin(&m, dfd, COW_BASE, err, errsz)) == 0) {
		if ((rv = cow_copy(wfd, tfd, &m, err, errsz)) == -1)
			cow_manifest_abort(&m);
		else
			rv = cow_manifest_end(&m, err, errsz);
	}
	if (rv == 0)
		rv = cow_manifest_write(tfd, dfd, COW_TREE_BASE, err, errsz);
	close(tfd);
	return rv;
}

/* c->dir made: fill it for c->mode from the workspace. */
static int
cow_fill(struct cow *c, char *err, size_t errsz)
{
	struct stat	ws;
	int		dfd, wfd, rv;

	if ((wfd = open(c->workspace, O_RDONLY | O_DIRECTORY | O_CLOEXEC)) ==
	    -1 || fstat(wfd, &ws) == -1) {
		snprintf(err, errsz, "workspace %s: %s", c->workspace,
		    strerror(errno));
		if (wfd != -1)
			close(wfd);
		return -1;
	}
	if ((dfd = open(c->dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW |
	    O_CLOEXEC)) == -1) {
		snprintf(err, errsz, "cannot open %s: %s", c->dir,
		    strerror(errno));
		close(wfd);
		return -1;
	}
	if (c->mode == COW_OVERLAY)
		rv = cow_make_overlay(dfd, wfd, &ws, err, errsz);
	else
		rv = cow_make_copy(dfd, wfd, &ws, err, errsz);
	close(dfd);
	close(wfd);
	return rv;
}

int
cow_create(struct cow *c, enum cow_mode mode, const char *workspace,
    const char *statedir, char *err, size_t errsz)
{
	char	parent[PATH_MAX], rmerr[256];

	memset(c, 0, sizeof(*c));
	if (mode != COW_OVERLAY && mode != COW_COPY) {
		snprintf(err, errsz, "a cow directory for mode %s: no such "
		    "thing (overlay or copy)", cow_mode_name(mode));
		return -1;
	}
	if (workspace[0] != '/' || strlcpy(c->workspace, workspace,
	    sizeof(c->workspace)) >= sizeof(c->workspace)) {
		snprintf(err, errsz, "workspace %s: not an absolute path that "
		    "fits PATH_MAX", workspace);
		return -1;
	}
	if (cow_parent(statedir, parent, sizeof(parent), err, errsz) == -1)
		return -1;
	if ((size_t)snprintf(c->dir, sizeof(c->dir), "%s/XXXXXX", parent) >=
	    sizeof(c->dir) || mkdtemp(c->dir) == NULL) {
		snprintf(err, errsz, "cannot make a directory in %s: %s",
		    parent, strerror(errno));
		memset(c, 0, sizeof(*c));
		return -1;
	}
	c->mode = mode;
	if (cow_fill(c, err, errsz) == -1) {
		if (cow_remove(c, rmerr, sizeof(rmerr)) == -1)
			snprintf(err + strlen(err), errsz - strlen(err),
			    "; and %s", rmerr);
		memset(c, 0, sizeof(*c));
		return -1;
	}
	return 0;
}

/* name in dfd is what type says (S_IFDIR or S_IFREG), and ours. */
static int
cow_has(int dfd, const char *name, mode_t type, char *err, size_t errsz)
{
	struct stat	sb;

	if (fstatat(dfd, name, &sb, AT_SYMLINK_NOFOLLOW) == -1) {
		snprintf(err, errsz, "%s: %s", name, strerror(errno));
		return -1;
	}
	if ((sb.st_mode & S_IFMT) != type || sb.st_uid != geteuid()) {
		snprintf(err, errsz, "%s: not a %s of ours", name,
		    type == S_IFDIR ? "directory" : "file");
		return -1;
	}
	return 0;
}

static int
cow_check(const char *dir, enum cow_mode mode, char *err, size_t errsz)
{
	struct stat	sb;
	int		dfd, rv = -1;

	if ((dfd = open(dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW |
	    O_CLOEXEC)) == -1 || fstat(dfd, &sb) == -1) {
		snprintf(err, errsz, "%s", strerror(errno));
		goto out;
	}
	if (sb.st_uid != geteuid() || (sb.st_mode & 07777) != 0700) {
		snprintf(err, errsz, "not ours with mode 0700 (owner %u, mode "
		    "%04o)", (unsigned)sb.st_uid, (unsigned)sb.st_mode & 07777);
		goto out;
	}
	if (cow_has(dfd, COW_BASE, S_IFREG, err, errsz) == -1)
		goto out;
	if (mode == COW_OVERLAY)
		rv = cow_has(dfd, COW_UPPER, S_IFDIR, err, errsz) == -1 ||
		    cow_has(dfd, COW_WORK, S_IFDIR, err, errsz) == -1 ? -1 : 0;
	else
		rv = cow_has(dfd, COW_TREE, S_IFDIR, err, errsz) == -1 ||
		    cow_has(dfd, COW_TREE_BASE, S_IFREG, err, errsz) == -1 ?
		    -1 : 0;
out:
	if (dfd != -1)
		close(dfd);
	return rv;
}

int
cow_paths(struct cow *c, const char *dir, const char *workspace, char *err,
    size_t errsz)
{
	if (dir[0] != '/' || workspace[0] != '/' ||
	    strlcpy(c->dir, dir, sizeof(c->dir)) >= sizeof(c->dir) ||
	    strlcpy(c->workspace, workspace, sizeof(c->workspace)) >=
	    sizeof(c->workspace)) {
		snprintf(err, errsz, "cow directory %s of %s: not absolute "
		    "paths that fit PATH_MAX", dir, workspace);
		memset(c, 0, sizeof(*c));
		return -1;
	}
	return 0;
}

int
cow_open(struct cow *c, enum cow_mode mode, const char *dir,
    const char *workspace, char *err, size_t errsz)
{
	char	why[256];

	memset(c, 0, sizeof(*c));
	if (mode != COW_OVERLAY && mode != COW_COPY) {
		snprintf(err, errsz, "cow directory %s: mode %s is neither "
		    "overlay nor copy", dir, cow_mode_name(mode));
		return -1;
	}
	if (cow_paths(c, dir, workspace, err, errsz) == -1)
		return -1;
	if (cow_check(dir, mode, why, sizeof(why)) == -1) {
		snprintf(err, errsz, "cow directory %s (%s): %s; refused",
		    dir, cow_mode_name(mode), why);
		memset(c, 0, sizeof(*c));
		return -1;
	}
	c->mode = mode;
	return 0;
}

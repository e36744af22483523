/*
 * cow_remove (cow.h): rm -rf of a cow directory, and of the temporary
 * files a killed apply left in the workspace (apply.journal).
 *
 * What is removed was written by agents: no link is followed (every
 * directory is opened O_NOFOLLOW under its parent's fd), a directory an
 * agent made 000 or read-only is made 0700 before it is entered, and the
 * walk holds one directory open at a time, going back up through ".."
 * (checked against the inode it came from), so no depth of nesting runs
 * it out of file descriptors or of PATH_MAX.
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

#include "common/path.h"
#include "common/xmalloc.h"
#include "workspace/cow_int.h"

/* One directory on the way down: its name in its parent, the parent. */
struct rm_level {
	char	*name;
	dev_t	 pdev;
	ino_t	 pino;
};

struct rm_walk {
	struct rm_level	*v;
	size_t		 n, cap;
	dev_t		 dev;		/* the cow directory's filesystem */
	char		*err;
	size_t		 errsz;
};

static int
rm_fail(struct rm_walk *r, const char *what, const char *name)
{
	char	esc[512];
	int	saved = errno;

	snprintf(r->err, r->errsz, "cannot remove the cow directory: %s "
	    "\"%s\": %s", what, cow_esc(esc, sizeof(esc), name),
	    strerror(saved));
	return -1;
}

/* Open the directory name of pfd, made 0700 first if we may not write
 * or search it. */
static int
rm_opendir(struct rm_walk *r, int pfd, const char *name)
{
	struct stat	sb;
	int		fd;

	if (fstatat(pfd, name, &sb, AT_SYMLINK_NOFOLLOW) == -1)
		return rm_fail(r, "lstat", name);
	if (sb.st_dev != r->dev) {
		errno = EBUSY;
		return rm_fail(r, "a filesystem is mounted on", name);
	}
	if ((sb.st_mode & 0700) != 0700 && fchmodat(pfd, name, 0700,
	    AT_SYMLINK_NOFOLLOW) == -1)
		return rm_fail(r, "chmod", name);
	if ((fd = openat(pfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW |
	    O_CLOEXEC)) == -1)
		return rm_fail(r, "open", name);
	return fd;
}

/*
 * Unlink every entry of fd that is not a directory; *sub gets the name
 * of a directory left (NULL if none). 0, or -1.
 */
static int
rm_clear(struct rm_walk *r, int fd, char **sub)
{
	struct dirent	*de;
	struct stat	 sb;
	DIR		*d;
	int		 dfd, isdir, rv = 0;

	*sub = NULL;
	/* Its own open file, read from the start: a DIR reads ahead, and
	 * the entries it read past were not handled. */
	if ((dfd = openat(fd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC)) ==
	    -1 || (d = fdopendir(dfd)) == NULL) {
		if (dfd != -1)
			close(dfd);
		return rm_fail(r, "read", "a directory");
	}
	while (rv == 0 && *sub == NULL) {
		errno = 0;
		if ((de = readdir(d)) == NULL) {
			if (errno != 0)
				rv = rm_fail(r, "read", "a directory");
			break;
		}
		if (strcmp(de->d_name, ".") == 0 ||
		    strcmp(de->d_name, "..") == 0)
			continue;
		isdir = de->d_type == DT_DIR;
		if (de->d_type == DT_UNKNOWN)
			isdir = fstatat(fd, de->d_name, &sb,
			    AT_SYMLINK_NOFOLLOW) == 0 && S_ISDIR(sb.st_mode);
		if (isdir)
			*sub = xstrdup(de->d_name);
		else if (unlinkat(fd, de->d_name, 0) == -1 && errno != ENOENT)
			rv = rm_fail(r, "unlink", de->d_name);
	}
	closedir(d);
	return rv;
}

static void
rm_push(struct rm_walk *r, char *name, int parent)
{
	struct stat	sb;

	if (fstat(parent, &sb) == -1)
		memset(&sb, 0, sizeof(sb));
	if (r->n == r->cap) {
		r->cap = r->cap ? r->cap * 2 : 16;
		r->v = xreallocarray(r->v, r->cap, sizeof(*r->v));
	}
	r->v[r->n].name = name;
	r->v[r->n].pdev = sb.st_dev;
	r->v[r->n].pino = sb.st_ino;
	r->n++;
}

/* fd's directory is empty: up to its parent (via "..", the inode it came
 * from), remove it there; the parent's fd, or -1 (fd left open). */
static int
rm_up(struct rm_walk *r, int fd)
{
	struct rm_level	*l = &r->v[r->n - 1];
	struct stat	 sb;
	int		 up;

	if ((up = openat(fd, "..", O_RDONLY | O_DIRECTORY | O_NOFOLLOW |
	    O_CLOEXEC)) == -1 || fstat(up, &sb) == -1 ||
	    sb.st_dev != l->pdev || sb.st_ino != l->pino) {
		if (up != -1)
			close(up);
		errno = ESTALE;
		return rm_fail(r, "moved while removed:", l->name);
	}
	if (unlinkat(up, l->name, AT_REMOVEDIR) == -1 && errno != ENOENT) {
		rm_fail(r, "rmdir", l->name);
		close(up);
		return -1;
	}
	free(l->name);
	r->n--;
	return up;
}

/* Everything under the directory fd (name top in pfd), then it. */
static int
rm_tree(struct rm_walk *r, int pfd, const char *top, int fd)
{
	char	*sub;
	int	 next;

	for (;;) {
		if (rm_clear(r, fd, &sub) == -1)
			break;
		if (sub != NULL) {
			if ((next = rm_opendir(r, fd, sub)) == -1) {
				free(sub);
				break;
			}
			rm_push(r, sub, fd);
			close(fd);
			fd = next;
			continue;
		}
		if (r->n == 0) {
			close(fd);
			if (unlinkat(pfd, top, AT_REMOVEDIR) == -1)
				return rm_fail(r, "rmdir", top);
			return 0;
		}
		if ((next = rm_up(r, fd)) == -1)
			break;
		close(fd);
		fd = next;
	}
	close(fd);
	return -1;
}

/* rm -rf of the directory dir (absolute). */
int
cow_rmtree(const char *dir, char *err, size_t errsz)
{
	struct rm_walk	 r;
	struct stat	 sb;
	char		 pdir[PATH_MAX], *slash;
	const char	*top;
	int		 pfd, fd, rv = -1;
	size_t		 i;

	memset(&r, 0, sizeof(r));
	r.err = err;
	r.errsz = errsz;
	strlcpy(pdir, dir, sizeof(pdir));
	if ((slash = strrchr(pdir, '/')) == NULL || slash[1] == '\0') {
		snprintf(err, errsz, "cow directory %s: not a path to remove",
		    dir);
		return -1;
	}
	top = dir + (slash - pdir) + 1;
	*slash = '\0';
	if ((pfd = open(pdir[0] ? pdir : "/", O_RDONLY | O_DIRECTORY |
	    O_CLOEXEC)) == -1) {
		snprintf(err, errsz, "cannot open %s: %s", pdir,
		    strerror(errno));
		return -1;
	}
	if (fstatat(pfd, top, &sb, AT_SYMLINK_NOFOLLOW) == -1)
		rv = errno == ENOENT ? 0 : rm_fail(&r, "lstat", dir);
	else if (!S_ISDIR(sb.st_mode)) {
		errno = ENOTDIR;
		rv = rm_fail(&r, "not a directory:", dir);
	} else {
		r.dev = sb.st_dev;
		if ((fd = rm_opendir(&r, pfd, top)) != -1)
			rv = rm_tree(&r, pfd, top, fd);
	}
	for (i = 0; i < r.n; i++)
		free(r.v[i].name);
	free(r.v);
	close(pfd);
	return rv;
}

/* One line of the journal: an apply's temporary, removed if it is one (a
 * regular file or a symbolic link named .warren-apply.* in the
 * workspace; the link itself, never what it points to). */
static int
cow_journal_one(const struct cow *c, int wfd, const char *line, char *err,
    size_t errsz)
{
	const char	*rel, *last;
	struct stat	 sb;
	char		 esc[512];
	int		 pfd, rv = 0;

	if (!path_under(line, c->workspace) || strstr(line, "/../") ||
	    strstr(line, "/./") || strstr(line, "//"))
		return 0;
	rel = line + strlen(c->workspace);
	while (*rel == '/')
		rel++;
	if (*rel == '\0')
		return 0;
	if ((pfd = cow_open_parent(wfd, rel, &last)) == -1)
		return 0;	/* its directory is gone: so is the file */
	if (strncmp(last, COW_APPLY_PREFIX, strlen(COW_APPLY_PREFIX)) == 0 &&
	    fstatat(pfd, last, &sb, AT_SYMLINK_NOFOLLOW) == 0 &&
	    (S_ISREG(sb.st_mode) || S_ISLNK(sb.st_mode)) &&
	    unlinkat(pfd, last, 0) == -1 &&
	    errno != ENOENT) {
		snprintf(err, errsz, "cannot remove %s, left by an apply: %s; "
		    "the cow directory is kept", cow_esc(esc, sizeof(esc),
		    line), strerror(errno));
		rv = -1;
	}
	close(pfd);
	return rv;
}

/* The journal's text (NUL-terminated), or NULL: none (or err filled). */
static char *
cow_journal_read(const struct cow *c, char *err, size_t errsz)
{
	char	 path[PATH_MAX + 32], *buf;
	ssize_t	 n;
	int	 fd;

	snprintf(path, sizeof(path), "%s/%s", c->dir, COW_JOURNAL);
	if ((fd = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC)) == -1) {
		if (errno != ENOENT)
			snprintf(err, errsz, "cannot read %s: %s", path,
			    strerror(errno));
		return NULL;
	}
	buf = xmalloc(COW_JOURNAL_MAX + 1);
	if ((n = read(fd, buf, COW_JOURNAL_MAX)) == -1) {
		snprintf(err, errsz, "cannot read %s: %s", path,
		    strerror(errno));
		free(buf);
		close(fd);
		return NULL;
	}
	close(fd);
	buf[n] = '\0';
	return buf;
}

static int
cow_journal(const struct cow *c, char *err, size_t errsz)
{
	char	*buf, *line, *next;
	int	 wfd, rv = 0;

	err[0] = '\0';
	if ((buf = cow_journal_read(c, err, errsz)) == NULL)
		return err[0] ? -1 : 0;
	if ((wfd = open(c->workspace, O_RDONLY | O_DIRECTORY |
	    O_CLOEXEC)) == -1) {
		free(buf);
		if (errno == ENOENT)
			return 0;	/* no workspace: nothing left in it */
		snprintf(err, errsz, "workspace %s: %s", c->workspace,
		    strerror(errno));
		return -1;
	}
	for (line = buf; line != NULL && *line != '\0'; line = next) {
		if ((next = strchr(line, '\n')) != NULL)
			*next++ = '\0';
		if (cow_journal_one(c, wfd, line, err, errsz) == -1)
			rv = -1;
	}
	close(wfd);
	free(buf);
	return rv;
}

int
cow_remove(const struct cow *c, char *err, size_t errsz)
{
	if (c->dir[0] != '/') {
		snprintf(err, errsz, "cow_remove: no cow directory");
		return -1;
	}
	if (cow_journal(c, err, errsz) == -1)
		return -1;
	return cow_rmtree(c->dir, err, errsz);
}

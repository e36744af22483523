/*
 * Paths beneath the workspace. The tool itself refuses anything outside the
 * root (the sandbox is the second wall): openat2(RESOLVE_BENEATH) makes the
 * kernel refuse "..", absolute paths and symlinks that leave the root, with
 * no race between a check and the open. Where openat2 is missing (kernel
 * < 5.6, or a seccomp filter that denies it, as the read-only profiles do)
 * tool_open_walk() resolves the path itself with O_NOFOLLOW at every step.
 */
#include <sys/stat.h>
#include <sys/syscall.h>

#include <errno.h>
#include <fcntl.h>
#include <linux/openat2.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "worker/tool_int.h"
#include "worker/tools_testapi.h"

int
tool_path_rel(const struct tool_ctx *ctx, const char *path, char *rel,
    size_t relsz, char *err, size_t errlen)
{
	size_t	rootlen = strlen(ctx->root);

	if (path == NULL || *path == '\0')
		path = ".";
	if (path[0] == '/') {
		/* The model often writes the workspace's absolute path. */
		if (strncmp(path, ctx->root, rootlen) == 0 &&
		    (path[rootlen] == '/' || path[rootlen] == '\0')) {
			path += rootlen;
			while (*path == '/')
				path++;
			if (*path == '\0')
				path = ".";
		} else if (rootlen == 1) {	/* the root is "/" */
			while (*path == '/')
				path++;
			if (*path == '\0')
				path = ".";
		} else {
			snprintf(err, errlen, "path \"%.200s\" is outside the "
			    "workspace %s", path, ctx->root);
			return -1;
		}
	}
	if (strlcpy(rel, path, relsz) >= relsz) {
		snprintf(err, errlen, "path too long (limit %zu bytes)",
		    relsz - 1);
		return -1;
	}
	return 0;
}

void
tool_path_clean(char *rel)
{
	size_t	l;

	while (rel[0] == '.' && rel[1] == '/') {
		l = strlen(rel);
		memmove(rel, rel + 2, l - 1);
		while (rel[0] == '/')
			memmove(rel, rel + 1, strlen(rel));
	}
	l = strlen(rel);
	while (l > 1 && rel[l - 1] == '/')
		rel[--l] = '\0';
	if (l == 0)
		strcpy(rel, ".");
}

/* The fd stack of the fallback walk: stack[0] is the root. */
struct walkstk {
	int	fd[TOOL_MAX_DEPTH + 1];
	int	depth;
};

static void
walkstk_reset(struct walkstk *w)
{
	while (w->depth > 0)
		close(w->fd[w->depth--]);
}

/* Replace *pathp with the symlink's target followed by the rest; -1 with
 * errno (EXDEV when it leaves the root). */
static int
tool_walk_link(const struct tool_ctx *ctx, struct walkstk *w,
    const char *comp, const char *rest, char *work, size_t worksz,
    const char **pathp)
{
	char	target[4096], tmp[8192];
	size_t	rootlen = strlen(ctx->root);
	ssize_t	n;
	const char *t = target;

	if ((n = readlinkat(w->fd[w->depth], comp, target,
	    sizeof(target) - 1)) == -1)
		return -1;
	target[n] = '\0';
	if (target[0] == '/') {
		if (strncmp(target, ctx->root, rootlen) != 0 ||
		    (target[rootlen] != '/' && target[rootlen] != '\0')) {
			errno = EXDEV;
			return -1;
		}
		t = target + rootlen;
		walkstk_reset(w);
	}
	if ((size_t)snprintf(tmp, sizeof(tmp), "%s/%s", t, rest ? rest : "")
	    >= sizeof(tmp) || strlcpy(work, tmp, worksz) >= worksz) {
		errno = ENAMETOOLONG;
		return -1;
	}
	*pathp = work;
	return 0;
}

/*
 * The next component of the path at *pp into comp: *pp moves past it,
 * *nextp to what follows its slashes (NULL after the last), *last says it
 * is the last one. -1 (ENAMETOOLONG) for a component comp cannot hold.
 */
static int
tool_walk_component(const char **pp, char *comp, size_t compsz,
    const char **nextp, int *last)
{
	const char	*p = *pp, *end, *next;
	size_t		 len;

	end = strchr(p, '/');
	len = end ? (size_t)(end - p) : strlen(p);
	if (len >= compsz) {
		errno = ENAMETOOLONG;
		return -1;
	}
	memcpy(comp, p, len);
	comp[len] = '\0';
	next = end ? end + 1 : NULL;
	while (next != NULL && *next == '/')
		next++;
	*last = next == NULL || *next == '\0';
	*nextp = next;
	*pp = end ? end : p + len;
	return 0;
}

/* "..": one level up; -1 (EXDEV) at the root, which it may not leave. */
static int
tool_walk_up(struct walkstk *w)
{
	if (w->depth == 0) {
		errno = EXDEV;
		return -1;
	}
	close(w->fd[w->depth--]);
	return 0;
}

/*
 * comp is a symlink: walk its target in its place, at most 40 links per
 * path (ELOOP). tool_walk_link rewrites work, which next points into, so
 * the rest of the path is copied first.
 */
static int
tool_walk_follow(const struct tool_ctx *ctx, struct walkstk *w,
    const char *comp, const char *next, int last, int *hops, char *work,
    size_t worksz, const char **pathp)
{
	char	rest[8192];

	if (++*hops > 40) {
		errno = ELOOP;
		return -1;
	}
	strlcpy(rest, last ? "" : next, sizeof(rest));
	return tool_walk_link(ctx, w, comp, rest, work, worksz, pathp);
}

/*
 * Open the last component, never through a symlink: one swapped in since
 * the check fails the open with ELOOP, reported as EXDEV (outside).
 */
static int
tool_walk_open_last(const struct walkstk *w, const char *comp, int flags,
    mode_t mode)
{
	int	 fd;

	fd = openat(w->fd[w->depth], comp, flags | O_NOFOLLOW | O_CLOEXEC,
	    mode);
	if (fd == -1 && errno == ELOOP)
		errno = EXDEV;
	return fd;
}

/* Step into directory comp, never through a symlink (as above). */
static int
tool_walk_down(struct walkstk *w, const char *comp)
{
	int	 fd;

	if (w->depth == TOOL_MAX_DEPTH) {
		errno = ENAMETOOLONG;
		return -1;
	}
	if ((fd = openat(w->fd[w->depth], comp, O_PATH | O_DIRECTORY |
	    O_NOFOLLOW | O_CLOEXEC)) == -1) {
		if (errno == ELOOP)
			errno = EXDEV;
		return -1;
	}
	w->fd[++w->depth] = fd;
	return 0;
}

/*
 * Resolve rel beneath the root without openat2: one component at a time,
 * each opened with O_NOFOLLOW relative to the previous one; ".." pops a
 * level and fails with EXDEV at the root; a symlink is read and its target
 * walked the same way (an absolute target must lie under the root). A
 * component swapped for a symlink between the check and the open makes the
 * O_NOFOLLOW open fail: refused, never followed.
 */
int
tool_open_walk(const struct tool_ctx *ctx, const char *rel, int flags,
    mode_t mode)
{
	struct walkstk	 w;
	struct stat	 st;
	char		 work[8192], comp[256];
	const char	*p, *next;
	int		 fd = -1, hops = 0, saved, last;

	if (strlcpy(work, rel, sizeof(work)) >= sizeof(work)) {
		errno = ENAMETOOLONG;
		return -1;
	}
	/* Level 0 is the root's own fd: never closed here. */
	w.depth = 0;
	w.fd[0] = ctx->rootfd;
	p = work;
	for (;;) {
		while (*p == '/')
			p++;
		if (*p == '\0') {	/* the path names a directory */
			fd = openat(w.fd[w.depth], ".", flags | O_CLOEXEC,
			    mode);
			break;
		}
		if (tool_walk_component(&p, comp, sizeof(comp), &next,
		    &last) == -1)
			break;
		if (strcmp(comp, ".") == 0)
			continue;
		if (strcmp(comp, "..") == 0) {
			if (tool_walk_up(&w) == -1)
				break;
			continue;
		}
		if (fstatat(w.fd[w.depth], comp, &st, AT_SYMLINK_NOFOLLOW) ==
		    0 && S_ISLNK(st.st_mode)) {
			if (tool_walk_follow(ctx, &w, comp, next, last, &hops,
			    work, sizeof(work), &p) == -1)
				break;
			continue;
		}
		if (last) {
			fd = tool_walk_open_last(&w, comp, flags, mode);
			break;
		}
		if (tool_walk_down(&w, comp) == -1)
			break;
	}
	saved = errno;
	walkstk_reset(&w);
	errno = saved;
	return fd;
}

static int tool_path_fallback;

void
tool_path_force_fallback(int on)
{
	tool_path_fallback = on;
}

int
tool_open(const struct tool_ctx *ctx, const char *rel, int flags,
    mode_t mode)
{
	struct open_how	how;
	long		fd;

	if (tool_path_fallback || ctx->walk_only)
		return tool_open_walk(ctx, rel, flags, mode);

	memset(&how, 0, sizeof(how));
	how.flags = (uint64_t)(flags | O_CLOEXEC);
	if (flags & O_CREAT)
		how.mode = mode;
	how.resolve = RESOLVE_BENEATH | RESOLVE_NO_MAGICLINKS;
	fd = syscall(SYS_openat2, ctx->rootfd, rel, &how, sizeof(how));
	if (fd >= 0)
		return (int)fd;
	if (errno == ENOSYS || errno == EPERM)
		return tool_open_walk(ctx, rel, flags, mode);
	return -1;
}

/*
 * Whether openat2 is refused here (ENOSYS, or EPERM from the seccomp
 * filter of the read-only profiles): asked once per workspace, so that
 * each open does not try it first.
 */
int
tool_path_openat2_refused(int rootfd)
{
	struct open_how	how;
	long		fd;

	memset(&how, 0, sizeof(how));
	how.flags = O_PATH | O_CLOEXEC;
	how.resolve = RESOLVE_BENEATH | RESOLVE_NO_MAGICLINKS;
	if ((fd = syscall(SYS_openat2, rootfd, ".", &how, sizeof(how))) >= 0) {
		close((int)fd);
		return 0;
	}
	return errno == ENOSYS || errno == EPERM;
}

void
tool_path_error(const char *tool, const char *path, int err, char *msg,
    size_t msglen)
{
	switch (err) {
	case EXDEV:
		snprintf(msg, msglen, "%s: path \"%.200s\" is outside the "
		    "workspace (\"..\" or a symlink leaving it); refused", tool,
		    path);
		break;
	case ENOENT:
		snprintf(msg, msglen, "%s: %.200s: no such file or directory",
		    tool, path);
		break;
	default:
		snprintf(msg, msglen, "%s: %.200s: %s", tool, path,
		    strerror(err));
		break;
	}
}

int
tool_mkdirs(const struct tool_ctx *ctx, const char *rel)
{
	char	buf[4096], *slash;
	int	fd, pfd;

	if (strlcpy(buf, rel, sizeof(buf)) >= sizeof(buf)) {
		errno = ENAMETOOLONG;
		return -1;
	}
	for (slash = strchr(buf, '/'); slash != NULL;
	    slash = strchr(slash + 1, '/')) {
		if (slash == buf)
			continue;
		*slash = '\0';
		fd = tool_open(ctx, buf, O_PATH | O_DIRECTORY, 0);
		if (fd == -1 && errno == ENOENT) {
			/* Create it inside its parent, itself beneath root. */
			char	*last = strrchr(buf, '/');

			if (last == NULL) {
				pfd = tool_open(ctx, ".", O_PATH | O_DIRECTORY,
				    0);
				last = buf;
			} else {
				*last = '\0';
				pfd = tool_open(ctx, buf, O_PATH | O_DIRECTORY,
				    0);
				*last++ = '/';
			}
			if (pfd == -1)
				return -1;
			if (mkdirat(pfd, last, 0755) == -1 && errno != EEXIST) {
				close(pfd);
				return -1;
			}
			close(pfd);
		} else if (fd == -1)
			return -1;
		else
			close(fd);
		*slash = '/';
	}
	return 0;
}

int
tool_slurp(int fd, size_t max, char **data, size_t *len)
{
	struct stat	 st;
	char		*p;
	size_t		 got = 0, cap;
	ssize_t		 n;

	if (fstat(fd, &st) == -1)
		return -1;
	if (S_ISDIR(st.st_mode)) {
		errno = EISDIR;
		return -1;
	}
	if (!S_ISREG(st.st_mode)) {
		errno = EINVAL;
		return -1;
	}
	if ((size_t)st.st_size > max) {
		errno = EFBIG;
		return -1;
	}
	cap = (size_t)st.st_size + 1;
	if ((p = malloc(cap)) == NULL)
		return -1;
	while (got < cap - 1) {
		if ((n = read(fd, p + got, cap - 1 - got)) == -1) {
			if (errno == EINTR)
				continue;
			free(p);
			return -1;
		}
		if (n == 0)
			break;
		got += n;
	}
	p[got] = '\0';
	*data = p;
	*len = got;
	return 0;
}

int
tool_is_binary(const char *data, size_t len)
{
	return memchr(data, '\0', len < TOOL_BINARY_PROBE ? len :
	    TOOL_BINARY_PROBE) != NULL;
}

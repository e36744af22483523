/*
 * Paths beneath the workspace. The tool itself refuses anything outside the
 * root (the sandbox is the second wall): openat2(RESOLVE_BENEATH) makes the
 * kernel refuse "..", absolute paths and symlinks that leave the root, with
 * no race between a check and the open. Where openat2 is missing (kernel
 * < 5.6, or a seccomp filter that denies it) the fallback walks the path
 * one component at a time with O_NOFOLLOW and refuses every ".." and every
 * symlink: stricter, never looser.
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

/* Walk rel from the root, one component at a time, no symlink, no "..". */
int
tool_open_walk(const struct tool_ctx *ctx, const char *rel, int flags,
    mode_t mode)
{
	char	 buf[4096], *p, *next;
	int	 dfd, fd, saved;

	if (strlcpy(buf, rel, sizeof(buf)) >= sizeof(buf)) {
		errno = ENAMETOOLONG;
		return -1;
	}
	if ((dfd = openat(ctx->rootfd, ".", O_PATH | O_DIRECTORY |
	    O_CLOEXEC)) == -1)
		return -1;
	p = buf;
	for (;;) {
		while (*p == '/')
			p++;
		if ((next = strchr(p, '/')) != NULL)
			*next++ = '\0';
		while (next != NULL && *next == '/')
			next++;
		if (next != NULL && *next == '\0')
			next = NULL;
		if (strcmp(p, "..") == 0) {
			close(dfd);
			errno = EXDEV;
			return -1;
		}
		if (next == NULL)
			break;
		if (*p == '\0' || strcmp(p, ".") == 0) {
			p = next;
			continue;
		}
		fd = openat(dfd, p, O_PATH | O_DIRECTORY | O_NOFOLLOW |
		    O_CLOEXEC);
		saved = errno;
		close(dfd);
		if (fd == -1) {
			errno = saved == ELOOP || saved == ENOTDIR ? EXDEV :
			    saved;
			return -1;
		}
		dfd = fd;
		p = next;
	}
	fd = openat(dfd, *p == '\0' ? "." : p, flags | O_NOFOLLOW | O_CLOEXEC,
	    mode);
	saved = errno;
	close(dfd);
	if (fd == -1 && saved == ELOOP)
		saved = EXDEV;
	errno = saved;
	return fd;
}

int
tool_open(const struct tool_ctx *ctx, const char *rel, int flags,
    mode_t mode)
{
	struct open_how	how;
	long		fd;

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

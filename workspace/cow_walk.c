/*
 * Walking the workspace and the layer one component at a time: see
 * cow_walk.h. Both trees are written by someone else while we read them
 * (the user edits the workspace, agents wrote the layer), so no path is
 * handed whole to the kernel.
 */
#include <sys/stat.h>

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "workspace/cow_walk.h"
#include "workspace/hostexec.h"

#define COW_WALK_DIR	(O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)

int
cow_walk_parent(int rootfd, const char *path, const char **name)
{
	char	 part[NAME_MAX + 1];
	const char *p, *slash;
	size_t	 len;
	int	 fd, next, save;

	if ((fd = fcntl(rootfd, F_DUPFD_CLOEXEC, 0)) == -1)
		return -1;
	for (p = path; (slash = strchr(p, '/')) != NULL; p = slash + 1) {
		len = (size_t)(slash - p);
		if (len == 0 || len > NAME_MAX) {
			close(fd);
			errno = EINVAL;
			return -1;
		}
		memcpy(part, p, len);
		part[len] = '\0';
		next = openat(fd, part, COW_WALK_DIR);
		save = errno;
		close(fd);
		if (next == -1) {
			errno = save;
			return -1;
		}
		fd = next;
	}
	*name = p;
	return fd;
}

int
cow_walk_lstat(int rootfd, const char *path, struct stat *sb)
{
	const char	*name;
	int		 dfd, rc, save;

	if ((dfd = cow_walk_parent(rootfd, path, &name)) == -1)
		return -1;
	rc = fstatat(dfd, name, sb, AT_SYMLINK_NOFOLLOW);
	save = errno;
	close(dfd);
	errno = save;
	return rc;
}

int
cow_walk_open(int rootfd, const char *path, int flags)
{
	const char	*name;
	int		 dfd, fd, save;

	if ((dfd = cow_walk_parent(rootfd, path, &name)) == -1)
		return -1;
	fd = openat(dfd, name, flags | O_NOFOLLOW | O_CLOEXEC);
	save = errno;
	close(dfd);
	errno = save;
	return fd;
}

int
cow_walk_readlink(int rootfd, const char *path, char *buf, size_t bufsz)
{
	const char	*name;
	ssize_t		 n;
	int		 dfd, save;

	if ((dfd = cow_walk_parent(rootfd, path, &name)) == -1)
		return -1;
	n = readlinkat(dfd, name, buf, bufsz);
	save = errno;
	close(dfd);
	errno = save;
	if (n == -1)
		return -1;
	if ((size_t)n >= bufsz) {
		errno = ENAMETOOLONG;
		return -1;
	}
	buf[n] = '\0';
	return 0;
}

int
cow_walk_src(const struct cow *c, const struct cow_change *ch, char *buf,
    size_t bufsz)
{
	struct stat	 sb;
	const char	*rel;
	size_t		 len = strlen(c->dir);
	int		 rootfd, rc, save;

	if (ch->src == NULL) {
		errno = ENOENT;
		return -1;
	}
	if (strncmp(ch->src, c->dir, len) == 0 && ch->src[len] == '/') {
		rel = ch->src + len + 1;
		rootfd = open(c->dir, COW_WALK_DIR);
	} else {
		rel = ch->src + (ch->src[0] == '/');
		rootfd = open("/", COW_WALK_DIR);
	}
	if (rootfd == -1)
		return -1;
	if (cow_walk_lstat(rootfd, rel, &sb) == -1)
		rc = -1;
	else if (S_ISLNK(sb.st_mode))
		rc = cow_walk_readlink(rootfd, rel, buf, bufsz) == 0 ? -2 : -1;
	else if (S_ISREG(sb.st_mode))
		rc = cow_walk_open(rootfd, rel, O_RDONLY | O_NONBLOCK);
	else {
		errno = EINVAL;
		rc = -1;
	}
	save = errno;
	close(rootfd);
	errno = save;
	return rc;
}

int
cow_walk_read(int fd, size_t max, char **data, size_t *len)
{
	char	*p = NULL, *np;
	size_t	 n = 0, cap = 0;
	ssize_t	 r;

	for (;;) {
		if (n == cap) {
			cap = cap == 0 ? 65536 : cap * 2;
			if (cap > max + 1)
				cap = max + 1;
			if ((np = realloc(p, cap + 1)) == NULL)
				goto fail;
			p = np;
		}
		if ((r = read(fd, p + n, cap - n)) == -1) {
			if (errno == EINTR)
				continue;
			goto fail;
		}
		if (r == 0)
			break;
		n += (size_t)r;
		if (n > max) {
			errno = EFBIG;
			goto fail;
		}
	}
	if (p == NULL && (p = malloc(1)) == NULL)
		return -1;
	p[n] = '\0';
	*data = p;
	*len = n;
	return 0;
fail:
	free(p);
	return -1;
}

const struct cow_change *
cow_walk_find(const struct cow_changes *ch, const char *path)
{
	size_t	lo = 0, hi = ch->n, mid;
	int	r;

	while (lo < hi) {
		mid = lo + (hi - lo) / 2;
		if ((r = hostexec_pathcmp(path, ch->v[mid].path)) == 0)
			return &ch->v[mid];
		if (r < 0)
			hi = mid;
		else
			lo = mid + 1;
	}
	return NULL;
}

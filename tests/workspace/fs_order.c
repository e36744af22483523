/*
 * fs_order.h: the wrapped calls. A test binary is linked with
 * -Wl,--wrap=syncfs and the rest: every call of the code under test goes
 * to __wrap_X, which records it while recording is on and makes the real
 * call (__real_X).
 */
#include <sys/stat.h>

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "fs_order.h"

struct fs_order	fs_order;

int	__real_syncfs(int);
int	__real_fsync(int);
int	__real_renameat(int, const char *, int, const char *);
int	__real_unlinkat(int, const char *, int);
int	__real_unlink(const char *);
int	__real_symlinkat(const char *, int, const char *);
int	__real_mkdirat(int, const char *, mode_t);
int	__real_openat(int, const char *, int, ...);
int	__real_open(const char *, int, ...);

int	__wrap_syncfs(int);
int	__wrap_fsync(int);
int	__wrap_renameat(int, const char *, int, const char *);
int	__wrap_unlinkat(int, const char *, int);
int	__wrap_unlink(const char *);
int	__wrap_symlinkat(const char *, int, const char *);
int	__wrap_mkdirat(int, const char *, mode_t);
int	__wrap_openat(int, const char *, int, ...);
int	__wrap_open(const char *, int, ...);

static void
fs_order_add(const char *fmt, ...)
{
	va_list	 ap;
	char	*s;
	int	 save = errno;

	if (!fs_order.on)
		return;
	va_start(ap, fmt);
	if (vasprintf(&s, fmt, ap) == -1 || fs_order.n == FS_ORDER_MAX)
		abort();	/* a test that cannot record cannot judge */
	va_end(ap);
	fs_order.v[fs_order.n++] = s;
	errno = save;
}

void
fs_order_start(void)
{
	while (fs_order.n > 0)
		free(fs_order.v[--fs_order.n]);
	fs_order.on = 1;
}

/* Is this a temporary that is to fail, name in dfd? (ENOSPC set.) */
static int
fs_order_full(int dfd, const char *name)
{
	char	proc[64], dir[PATH_MAX];
	ssize_t	n;

	if (!fs_order.on || fs_order.fail_in == NULL ||
	    strncmp(name, ".warren-apply.", 14) != 0)
		return 0;
	snprintf(proc, sizeof(proc), "/proc/self/fd/%d", dfd);
	if ((n = readlink(proc, dir, sizeof(dir) - 1)) == -1)
		return 0;
	dir[n] = '\0';
	if (strcmp(dir, fs_order.fail_in) != 0)
		return 0;
	errno = ENOSPC;
	return 1;
}

void
fs_order_stop(void)
{
	fs_order.on = 0;
}

static int
fs_order_match(size_t i, const char *prefix, const char *sub)
{
	return strncmp(fs_order.v[i], prefix, strlen(prefix)) == 0 &&
	    (sub == NULL || strstr(fs_order.v[i], sub) != NULL);
}

long
fs_order_first(const char *prefix, const char *sub)
{
	size_t	i;

	for (i = 0; i < fs_order.n; i++)
		if (fs_order_match(i, prefix, sub))
			return (long)i;
	return -1;
}

long
fs_order_last(const char *prefix, const char *sub)
{
	size_t	i;

	for (i = fs_order.n; i-- > 0;)
		if (fs_order_match(i, prefix, sub))
			return (long)i;
	return -1;
}

long
fs_order_index(const char *s)
{
	size_t	i;

	for (i = 0; i < fs_order.n; i++)
		if (strcmp(fs_order.v[i], s) == 0)
			return (long)i;
	return -1;
}

char *
fs_order_dump(void)
{
	char	*buf = NULL;
	size_t	 len = 0, i;
	FILE	*f;

	if ((f = open_memstream(&buf, &len)) == NULL)
		abort();
	for (i = 0; i < fs_order.n; i++)
		fprintf(f, "%zu %s\n", i, fs_order.v[i]);
	fclose(f);
	return buf;
}

int
__wrap_syncfs(int fd)
{
	fs_order_add("syncfs");
	return __real_syncfs(fd);
}

int
__wrap_fsync(int fd)
{
	char	proc[64], path[PATH_MAX];
	ssize_t	n;

	snprintf(proc, sizeof(proc), "/proc/self/fd/%d", fd);
	if ((n = readlink(proc, path, sizeof(path) - 1)) == -1)
		n = 0;
	path[n] = '\0';
	fs_order_add("fsync %s", path);
	return __real_fsync(fd);
}

int
__wrap_renameat(int ofd, const char *from, int nfd, const char *to)
{
	fs_order_add("rename %s %s", from, to);
	return __real_renameat(ofd, from, nfd, to);
}

int
__wrap_unlinkat(int dfd, const char *name, int flags)
{
	fs_order_add("unlink %s", name);
	if (fs_order.on && fs_order.vanish != NULL &&
	    strcmp(name, fs_order.vanish) == 0)
		(void)__real_unlinkat(dfd, name, flags);
	return __real_unlinkat(dfd, name, flags);
}

int
__wrap_unlink(const char *path)
{
	fs_order_add("unlink %s", path);
	return __real_unlink(path);
}

int
__wrap_symlinkat(const char *target, int dfd, const char *name)
{
	fs_order_add("create %s", name);
	if (fs_order_full(dfd, name))
		return -1;
	return __real_symlinkat(target, dfd, name);
}

int
__wrap_mkdirat(int dfd, const char *name, mode_t mode)
{
	fs_order_add("mkdir %s", name);
	return __real_mkdirat(dfd, name, mode);
}

int
__wrap_openat(int dfd, const char *name, int flags, ...)
{
	va_list	ap;
	mode_t	mode = 0;

	if (flags & (O_CREAT | O_TMPFILE)) {
		va_start(ap, flags);
		mode = (mode_t)va_arg(ap, int);
		va_end(ap);
		fs_order_add("create %s", name);
		if (fs_order_full(dfd, name))
			return -1;
	}
	return __real_openat(dfd, name, flags, mode);
}

int
__wrap_open(const char *path, int flags, ...)
{
	va_list	ap;
	mode_t	mode = 0;

	if (flags & (O_CREAT | O_TMPFILE)) {
		va_start(ap, flags);
		mode = (mode_t)va_arg(ap, int);
		va_end(ap);
		fs_order_add("create %s", path);
	}
	return __real_open(path, flags, mode);
}

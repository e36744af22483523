/* File descriptor helpers. */
#include <errno.h>
#include <fcntl.h>
#include <unistd.h>

#include "common/fd.h"

static int
fd_flag(int fd, int get, int set, int flag, int on)
{
	int	flags;

	if ((flags = fcntl(fd, get)) == -1)
		return -1;
	flags = on ? (flags | flag) : (flags & ~flag);
	return fcntl(fd, set, flags) == -1 ? -1 : 0;
}

int
fd_set_nonblock(int fd, int on)
{
	return fd_flag(fd, F_GETFL, F_SETFL, O_NONBLOCK, on);
}

/* FD_CLOEXEC is the only descriptor flag: set it without reading. */
int
fd_set_cloexec(int fd, int on)
{
	return fcntl(fd, F_SETFD, on ? FD_CLOEXEC : 0) == -1 ? -1 : 0;
}

int
fd_write_all(int fd, const void *buf, size_t len)
{
	const char	*p = buf;
	ssize_t		 n;

	while (len > 0) {
		if ((n = write(fd, p, len)) == -1) {
			if (errno == EINTR)
				continue;
			return -1;
		}
		p += n;
		len -= (size_t)n;
	}
	return 0;
}

/* File descriptor flags and bounded reads/writes. */
#ifndef WARREN_FD_H
#define WARREN_FD_H

#include <stddef.h>
#include <sys/types.h>

/* fd.c */
int	fd_set_nonblock(int fd, int on);
int	fd_set_cloexec(int fd, int on);
/* Write all of buf, retrying on EINTR/partial writes (blocking fds). */
int	fd_write_all(int fd, const void *buf, size_t len);

#endif

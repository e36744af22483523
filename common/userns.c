/*
 * Mapping a new user namespace's ids to ours (userns.h).
 */
#include <sys/types.h>

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "common/userns.h"

static int
userns_write(const char *path, const char *s)
{
	ssize_t	 n;
	int	 fd, saved;

	if ((fd = open(path, O_WRONLY | O_CLOEXEC)) == -1)
		return -1;
	n = write(fd, s, strlen(s));
	saved = errno;
	close(fd);
	errno = saved;
	return n == (ssize_t)strlen(s) ? 0 : -1;
}

int
userns_map_self(uid_t uid, gid_t gid, const char **step)
{
	char	 map[64];

	*step = "/proc/self/setgroups";
	if (userns_write(*step, "deny") == -1 && errno != ENOENT)
		return -1;
	snprintf(map, sizeof(map), "%u %u 1\n", (unsigned)uid, (unsigned)uid);
	*step = "/proc/self/uid_map";
	if (userns_write(*step, map) == -1)
		return -1;
	snprintf(map, sizeof(map), "%u %u 1\n", (unsigned)gid, (unsigned)gid);
	*step = "/proc/self/gid_map";
	return userns_write(*step, map);
}

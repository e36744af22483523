/*
 * Paths as warren compares and makes them (common/path.h).
 */
#include <sys/stat.h>

#include <errno.h>
#include <limits.h>
#include <string.h>

#include "common/path.h"

int
path_under(const char *path, const char *dir)
{
	size_t	n;

	if (strcmp(dir, "/") == 0)
		return path[0] == '/';
	n = strlen(dir);
	return strncmp(path, dir, n) == 0 && (path[n] == '/' ||
	    path[n] == '\0');
}

int
path_mkdirs(const char *dir, mode_t mode, int flags)
{
	struct stat	 sb;
	char		 buf[PATH_MAX], *p, c;

	if (strlcpy(buf, dir, sizeof(buf)) >= sizeof(buf)) {
		errno = ENAMETOOLONG;
		return -1;
	}
	for (p = buf + 1;; p++) {
		if (*p != '/' && *p != '\0')
			continue;
		c = *p;
		*p = '\0';
		if (mkdir(buf, mode) == -1 && errno != EEXIST)
			return -1;
		if (((flags & PATH_NOFOLLOW) ? lstat(buf, &sb) :
		    stat(buf, &sb)) == -1)
			return -1;
		if (!S_ISDIR(sb.st_mode)) {
			errno = S_ISLNK(sb.st_mode) ? ELOOP : ENOTDIR;
			return -1;
		}
		if (c == '\0')
			return 0;
		*p = c;
	}
}

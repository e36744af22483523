/*
 * Who holds the database: the processes that have it open, found by
 * reading /proc/PID/fd, for the message of a write that waits or fails on
 * a lock ("pid 4242 (sqlite3)"). Best effort: another user's processes
 * cannot be read, and one that has the file open need not be the one that
 * holds the lock; the message lists them all.
 */
#include <sys/stat.h>
#include <sys/types.h>

#include <dirent.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "store/store_int.h"

#define STORE_LOCK_MAX_PIDS	8

/* Does process pid have a descriptor on the file (dev, ino)? */
static int
store_lock_has(const char *pid, dev_t dev, ino_t ino)
{
	char		 dir[64], link[PATH_MAX];
	struct dirent	*de;
	struct stat	 sb;
	DIR		*d;
	int		 found = 0;

	snprintf(dir, sizeof(dir), "/proc/%s/fd", pid);
	if ((d = opendir(dir)) == NULL)
		return 0;
	while (!found && (de = readdir(d)) != NULL) {
		if (de->d_name[0] == '.')
			continue;
		snprintf(link, sizeof(link), "%s/%s", dir, de->d_name);
		if (stat(link, &sb) == 0 && sb.st_dev == dev &&
		    sb.st_ino == ino)
			found = 1;
	}
	closedir(d);
	return found;
}

/* "pid N (comm)" appended to out. */
static void
store_lock_name(const char *pid, char *out, size_t outsz)
{
	char	 path[300], comm[64] = "?";
	FILE	*f;
	size_t	 len;

	snprintf(path, sizeof(path), "/proc/%s/comm", pid);
	if ((f = fopen(path, "r")) != NULL) {
		if (fgets(comm, sizeof(comm), f) == NULL)
			strlcpy(comm, "?", sizeof(comm));
		fclose(f);
	}
	comm[strcspn(comm, "\n")] = '\0';
	len = strlen(out);
	if (len < outsz)
		snprintf(out + len, outsz - len, "%spid %s (%s)",
		    len > 0 ? ", " : "", pid, comm);
}

void
store_lock_holders(const char *path, char *out, size_t outsz)
{
	struct dirent	*de;
	struct stat	 sb;
	DIR		*d;
	char		 self[32];
	int		 n = 0;

	if (outsz == 0)
		return;
	out[0] = '\0';
	if (stat(path, &sb) == -1 || (d = opendir("/proc")) == NULL)
		return;
	snprintf(self, sizeof(self), "%ld", (long)getpid());
	while (n < STORE_LOCK_MAX_PIDS && (de = readdir(d)) != NULL) {
		if (de->d_name[0] < '1' || de->d_name[0] > '9' ||
		    strcmp(de->d_name, self) == 0)
			continue;
		if (store_lock_has(de->d_name, sb.st_dev, sb.st_ino)) {
			store_lock_name(de->d_name, out, outsz);
			n++;
		}
	}
	closedir(d);
}

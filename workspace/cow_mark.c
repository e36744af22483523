/*
 * Which run a layer belongs to, and the sweep of layers no run was
 * recorded for (cow.h). A layer is made before its run's row (the row
 * names it); warren killed between the two leaves a layer nothing names,
 * which `warren forget`, `discard` and `apply` can never reach. The run's
 * marker file tells those apart from layers whose run exists, and the age
 * from a layer whose run is being recorded right now.
 *
 * The marker is not fsync'd. What counts is that it exists, and a kill
 * of warren leaves it (the page cache outlives the process:
 * test_default_kill9, test_resume_keeps_layer). A power loss is the
 * store's case (docs/memory.md, synchronous=NORMAL: the run's own rows
 * may be lost with it): a journalling filesystem commits the marker's
 * creation no later than any later change of its metadata, every file an
 * agent of the run makes in the layer included, so a layer that kept any
 * of its run's work kept its marker; one that lost the marker lost its
 * writes too, and the sweep takes it as one nothing recorded.
 */
#include <sys/stat.h>
#include <sys/types.h>

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "common/xdg.h"
#include "workspace/cow.h"
#include "workspace/cow_int.h"

#define COW_MARK	"run"

int
cow_mark(const struct cow *c, const char *db, int64_t run, char *err,
    size_t errsz)
{
	char	 path[PATH_MAX + 8];
	FILE	*f;
	int	 fd, bad;

	snprintf(path, sizeof(path), "%s/" COW_MARK, c->dir);
	if ((fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW |
	    O_CLOEXEC, 0600)) == -1 || (f = fdopen(fd, "w")) == NULL) {
		snprintf(err, errsz, "%s: %s", path, strerror(errno));
		if (fd != -1)
			close(fd);
		return -1;
	}
	bad = fprintf(f, "%s\n%lld\n", db != NULL ? db : "",
	    (long long)run) < 0;
	if (fclose(f) == EOF || bad) {
		snprintf(err, errsz, "%s: %s", path, strerror(errno));
		return -1;
	}
	return 0;
}

/* A layer directory of ours: 0700, ours, with a base, no marker, old. */
static int
cow_sweepable(int dfd, const char *name, int64_t now_ms, int64_t min_age_ms)
{
	struct stat	 st;
	char		 rel[NAME_MAX + 8];

	if (fstatat(dfd, name, &st, AT_SYMLINK_NOFOLLOW) == -1 ||
	    !S_ISDIR(st.st_mode) || st.st_uid != geteuid() ||
	    (st.st_mode & 07777) != 0700)
		return 0;
	if ((int64_t)st.st_mtim.tv_sec * 1000 + min_age_ms > now_ms)
		return 0;
	snprintf(rel, sizeof(rel), "%s/" COW_MARK, name);
	if (fstatat(dfd, rel, &st, AT_SYMLINK_NOFOLLOW) == 0 || errno != ENOENT)
		return 0;
	snprintf(rel, sizeof(rel), "%s/base", name);
	return fstatat(dfd, rel, &st, AT_SYMLINK_NOFOLLOW) == 0;
}

int
cow_sweep(const char *statedir, int64_t min_age_ms, int *n, char *err,
    size_t errsz)
{
	char		 state[PATH_MAX], dir[PATH_MAX + 8], sub[PATH_MAX * 2];
	struct dirent	*de;
	struct timespec	 ts;
	DIR		*d;
	int64_t		 now;
	int		 rc = 0;

	*n = 0;
	if (statedir == NULL && xdg_state_dir(state, sizeof(state)) == -1) {
		snprintf(err, errsz, "no state directory: %s", strerror(errno));
		return -1;
	}
	snprintf(dir, sizeof(dir), "%s/cow", statedir != NULL ? statedir :
	    state);
	if ((d = opendir(dir)) == NULL) {
		if (errno == ENOENT)
			return 0;
		snprintf(err, errsz, "%s: %s", dir, strerror(errno));
		return -1;
	}
	clock_gettime(CLOCK_REALTIME, &ts);
	now = (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
	while ((de = readdir(d)) != NULL) {
		if (de->d_name[0] == '.' || !cow_sweepable(dirfd(d), de->d_name,
		    now, min_age_ms))
			continue;
		snprintf(sub, sizeof(sub), "%s/%s", dir, de->d_name);
		if (cow_rmtree(sub, err, errsz) == -1)
			rc = -1;
		else
			(*n)++;
	}
	closedir(d);
	return rc;
}

/* Helpers of the copy-on-write tests (cow_test.h). */
#include <sys/stat.h>

#include <dirent.h>
#include <err.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "tests/workspace/cow_test.h"

void
cow_tdir_make(struct cow_tdir *t)
{
	const char	*tmp = getenv("TMPDIR");

	snprintf(t->root, sizeof(t->root), "%s/warren-cow.XXXXXX",
	    tmp != NULL && *tmp == '/' ? tmp : "/tmp");
	if (mkdtemp(t->root) == NULL)
		err(1, "mkdtemp %s", t->root);
	snprintf(t->ws, sizeof(t->ws), "%s/ws", t->root);
	snprintf(t->state, sizeof(t->state), "%s/state", t->root);
	if (mkdir(t->ws, 0755) == -1 || mkdir(t->state, 0700) == -1)
		err(1, "mkdir in %s", t->root);
}

void
cow_tdir_remove(struct cow_tdir *t)
{
	char	cmd[PATH_MAX * 2 + 64];

	if (t->root[0] == '\0')
		return;
	snprintf(cmd, sizeof(cmd), "chmod -R u+rwx '%s' 2>/dev/null; "
	    "rm -rf '%s'", t->root, t->root);
	if (system(cmd) != 0)
		warnx("cannot remove %s", t->root);
	t->root[0] = '\0';
}

static void
tpath(char *out, size_t outsz, const char *dir, const char *rel)
{
	if ((size_t)snprintf(out, outsz, "%s/%s", dir, rel) >= outsz)
		errx(1, "path too long: %s/%s", dir, rel);
}

void
tput(const char *dir, const char *rel, const char *data, size_t len,
    mode_t mode)
{
	char	p[PATH_MAX];
	int	fd;

	tpath(p, sizeof(p), dir, rel);
	if ((fd = open(p, O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW, mode)) ==
	    -1 || write(fd, data, len) != (ssize_t)len || fchmod(fd, mode) ==
	    -1 || close(fd) == -1)
		err(1, "write %s", p);
}

void
tmkdir(const char *dir, const char *rel, mode_t mode)
{
	char	p[PATH_MAX];

	tpath(p, sizeof(p), dir, rel);
	if (mkdir(p, mode) == -1 || chmod(p, mode) == -1)
		err(1, "mkdir %s", p);
}

void
tlink(const char *dir, const char *rel, const char *target)
{
	char	p[PATH_MAX];

	tpath(p, sizeof(p), dir, rel);
	if (symlink(target, p) == -1)
		err(1, "symlink %s", p);
}

int
texists(const char *dir, const char *rel)
{
	struct stat	sb;
	char		p[PATH_MAX];

	tpath(p, sizeof(p), dir, rel);
	return lstat(p, &sb) == 0;
}

size_t
tcount(const char *dir)
{
	struct dirent	*de;
	DIR		*d;
	size_t		 n = 0;

	if ((d = opendir(dir)) == NULL)
		err(1, "opendir %s", dir);
	while ((de = readdir(d)) != NULL)
		if (strcmp(de->d_name, ".") != 0 && strcmp(de->d_name, "..") != 0)
			n++;
	closedir(d);
	return n;
}

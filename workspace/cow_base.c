/*
 * Is the workspace's entry still a change's base? Two ways to know (enum
 * cow_base_by in cow.h): on the machine that ran the job, by what lstat
 * said when the run began (the same inode, size and times: cheap and
 * exact); on any machine, by content (type, the owner's execute bit, and
 * the SHA-256 of a file's bytes or a link's target), which a change set
 * carries (cow_pack.c) because inodes and times mean nothing elsewhere.
 * Only the owner's execute bit of the mode is compared by content: git
 * keeps no other, and two checkouts under different umasks differ in
 * the rest.
 */
#include <sys/stat.h>

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <string.h>
#include <unistd.h>

#include <sha2.h>

#include "workspace/cow_int.h"
#include "workspace/cow_walk.h"

const char *
cow_base_stat_diff(const struct stat *sb, const struct cow_stat *b)
{
	if ((sb->st_mode & S_IFMT) != (b->mode & S_IFMT))
		return "it is another type of file now";
	if ((uint64_t)sb->st_ino != b->ino)
		return "it was replaced";
	if ((sb->st_mode & 07777) != (b->mode & 07777))
		return "its mode changed";
	/* A directory's size and times move with every entry made or
	 * removed in it (by the user or by a killed apply). */
	if (S_ISDIR(sb->st_mode))
		return NULL;
	if ((int64_t)sb->st_size != b->size ||
	    (int64_t)sb->st_mtim.tv_sec * 1000000000 + sb->st_mtim.tv_nsec !=
	    b->mtime_ns)
		return "its content changed";
	if ((int64_t)sb->st_ctim.tv_sec * 1000000000 + sb->st_ctim.tv_nsec !=
	    b->ctime_ns)
		return "it changed (its ctime moved)";
	return NULL;
}

/* SHA-256 of what fd reads to its end. */
static int
cow_base_sum_fd(int fd, unsigned char sum[COW_SUM_LEN])
{
	SHA2_CTX	ctx;
	unsigned char	buf[65536];
	ssize_t		n;

	SHA256Init(&ctx);
	while ((n = read(fd, buf, sizeof(buf))) != 0) {
		if (n == -1) {
			if (errno == EINTR)
				continue;
			return -1;
		}
		SHA256Update(&ctx, buf, (size_t)n);
	}
	SHA256Final(sum, &ctx);
	return 0;
}

static void
cow_base_sum_mem(const void *data, size_t len, unsigned char sum[COW_SUM_LEN])
{
	SHA2_CTX	ctx;

	SHA256Init(&ctx);
	SHA256Update(&ctx, data, len);
	SHA256Final(sum, &ctx);
}

int
cow_base_sum(int rootfd, const char *path, const struct stat *sb,
    unsigned char sum[COW_SUM_LEN])
{
	struct stat	now;
	char		target[PATH_MAX];
	int		fd, rc;

	memset(sum, 0, COW_SUM_LEN);
	if (S_ISDIR(sb->st_mode))
		return 0;
	if (S_ISLNK(sb->st_mode)) {
		if (cow_walk_readlink(rootfd, path, target, sizeof(target)) ==
		    -1)
			return -1;
		cow_base_sum_mem(target, strlen(target), sum);
		return 0;
	}
	if (!S_ISREG(sb->st_mode)) {
		errno = EINVAL;
		return -1;
	}
	if ((fd = cow_walk_open(rootfd, path, O_RDONLY | O_NONBLOCK |
	    O_NOCTTY)) == -1)
		return -1;
	/* The file sb described, not one put there since. */
	if (fstat(fd, &now) == -1 || now.st_ino != sb->st_ino ||
	    now.st_dev != sb->st_dev) {
		close(fd);
		errno = ESTALE;
		return -1;
	}
	rc = cow_base_sum_fd(fd, sum);
	close(fd);
	return rc;
}

const char *
cow_base_sum_diff(int rootfd, const struct cow_change *ch,
    const struct stat *sb)
{
	unsigned char	sum[COW_SUM_LEN];

	if (ch->base_by == COW_BASE_UNKNOWN)
		return "the machine that ran it could not record its base "
		    "(the workspace there changed under it during the run)";
	if ((sb->st_mode & S_IFMT) != (ch->base.mode & S_IFMT))
		return "it is another type of file now";
	if ((sb->st_mode & S_IXUSR) != (ch->base.mode & S_IXUSR))
		return "its mode changed";
	if (S_ISDIR(sb->st_mode))
		return NULL;
	if (cow_base_sum(rootfd, ch->path, sb, sum) == -1)
		return "it cannot be read to compare";
	if (memcmp(sum, ch->base_sum, COW_SUM_LEN) != 0)
		return "its content differs from the run's base";
	return NULL;
}

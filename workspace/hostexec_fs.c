/*
 * Does the workspace's filesystem take two spellings of a name for one
 * (hostexec.h)? Then the read-only mount points an --in-place sandbox puts
 * on .git and .warren may not hold: on a FUSE passthrough (ntfs-3g,
 * exfat-fuse, a case-insensitive overlay of a share) or 9p (WSL's /mnt/c)
 * a lookup of ".GIT" makes a dentry of its own, which is no mount point,
 * and a write through it lands in .git/hooks.
 *
 * Asked of the filesystem itself, not guessed from its type: a file of a
 * new lower-case name is made in the directory and looked up in upper
 * case. Where no file can be made (a read-only workspace), the directory's
 * casefold flag and the filesystem's type decide.
 */
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/statfs.h>

#include <linux/fs.h>

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "workspace/hostexec.h"

#ifndef FS_CASEFOLD_FL
#define FS_CASEFOLD_FL	0x40000000
#endif

/* Filesystems that compare names case-insensitively as a rule. */
static const struct {
	unsigned long	 magic;
	const char	*name;
} hx_fs_folding[] = {
	{ 0x4d44, "vfat" },
	{ 0x2011bab0, "exFAT" },
	{ 0x5346544e, "NTFS" },
	{ 0xff534d42, "SMB (cifs)" },
	{ 0xfe534d42, "SMB 2/3" },
	{ 0x517b, "SMB" },
	{ 0x482b, "HFS+" },
	{ 0x786f4256, "VirtualBox shared folder" },
};

static int
hx_fs_by_type(int dirfd, const char *dir, char *why, size_t whysz)
{
	struct statfs	sf;
	unsigned	flags = 0;
	size_t		i;

	if (ioctl(dirfd, FS_IOC_GETFLAGS, &flags) == 0 &&
	    (flags & FS_CASEFOLD_FL)) {
		snprintf(why, whysz, "%s is a casefold directory", dir);
		return 1;
	}
	if (fstatfs(dirfd, &sf) == -1) {
		snprintf(why, whysz, "statfs %s: %s", dir, strerror(errno));
		return -1;
	}
	for (i = 0; i < sizeof(hx_fs_folding) / sizeof(hx_fs_folding[0]); i++)
		if ((unsigned long)sf.f_type == hx_fs_folding[i].magic) {
			snprintf(why, whysz, "%s is on %s", dir,
			    hx_fs_folding[i].name);
			return 1;
		}
	return 0;
}

int
hostexec_fs_folds(const char *dir, char *why, size_t whysz)
{
	struct stat	 a, b;
	char		 lower[64], upper[64];
	size_t		 i;
	int		 dfd, fd, rc;

	if ((dfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC)) == -1) {
		snprintf(why, whysz, "%s: %s", dir, strerror(errno));
		return -1;
	}
	snprintf(lower, sizeof(lower), ".warren-case-%ld-%08lx", (long)getpid(),
	    (unsigned long)arc4random());
	for (i = 0; i <= strlen(lower); i++)
		upper[i] = lower[i] >= 'a' && lower[i] <= 'z' ?
		    (char)(lower[i] - 'a' + 'A') : lower[i];
	if ((fd = openat(dfd, lower, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW |
	    O_CLOEXEC, 0600)) == -1) {
		rc = hx_fs_by_type(dfd, dir, why, whysz);
		close(dfd);
		return rc;
	}
	rc = fstat(fd, &a) == 0 && fstatat(dfd, upper, &b,
	    AT_SYMLINK_NOFOLLOW) == 0 && a.st_ino == b.st_ino &&
	    a.st_dev == b.st_dev;
	close(fd);
	(void)unlinkat(dfd, lower, 0);
	close(dfd);
	if (rc)
		snprintf(why, whysz, "%s is on a case-insensitive filesystem "
		    "(%s is found as %s)", dir, lower, upper);
	return rc;
}

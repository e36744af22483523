#!/usr/bin/env python3
"""A case-insensitive, case-preserving FUSE passthrough, as the red team of
issue 31 used: cifuse.py BACKING MOUNTPOINT.

Every name of a path is looked up in its directory of BACKING as given,
and where that is not there, as the first entry whose casefolded name
(str.casefold: full Unicode case folding) is the same: .GIT finds .git,
.Envrc finds .envrc, .\u212aube finds .kube. A new name is made as spelled.
The kernel keeps a dentry per spelling (FUSE has no d_compare), so a bind
mount on .git does not cover .GIT: what the sandbox's read-only .git meets
on ntfs-3g, exfat-fuse or a case-insensitive share mounted through FUSE.

Runs in the foreground until unmounted (fusermount -u, umount) or killed.
Used by tests/e2e/test_hostexec_names.c.
"""
import errno
import os
import sys

import fusepy


def resolve(root, path):
    """The backing path of a mounted path, each name matched casefolded."""
    real = root
    for name in [p for p in path.split("/") if p]:
        cand = os.path.join(real, name)
        if not os.path.lexists(cand):
            try:
                folded = name.casefold()
                for e in os.listdir(real):
                    if e.casefold() == folded:
                        cand = os.path.join(real, e)
                        break
            except OSError:
                pass
        real = cand
    return real


class CaseInsensitive(fusepy.Operations):
    def __init__(self, root):
        self.root = os.path.realpath(root)

    def _p(self, path):
        return resolve(self.root, path)

    def _new(self, path):
        """A path whose parent is resolved and last name kept as given,
        unless a spelling of it is there already."""
        head, tail = os.path.split(path)
        have = self._p(path)
        if os.path.lexists(have):
            return have
        return os.path.join(self._p(head), tail)

    def __call__(self, op, *args):
        try:
            return super().__call__(op, *args)
        except OSError as e:
            raise fusepy.FuseOSError(e.errno or errno.EIO)

    def access(self, path, mode):
        if not os.access(self._p(path), mode, follow_symlinks=False):
            raise fusepy.FuseOSError(errno.EACCES)

    def getattr(self, path, fh=None):
        st = os.lstat(self._p(path))
        return {k: getattr(st, k) for k in (
            "st_atime", "st_ctime", "st_gid", "st_mode", "st_mtime",
            "st_nlink", "st_size", "st_uid", "st_ino")}

    def readdir(self, path, fh):
        return [".", ".."] + os.listdir(self._p(path))

    def readlink(self, path):
        return os.readlink(self._p(path))

    def chmod(self, path, mode):
        os.chmod(self._p(path), mode, follow_symlinks=False)

    def chown(self, path, uid, gid):
        os.lchown(self._p(path), uid, gid)

    def utimens(self, path, times=None):
        os.utime(self._p(path), times=times, follow_symlinks=False)

    def mkdir(self, path, mode):
        os.mkdir(self._new(path), mode)

    def rmdir(self, path):
        os.rmdir(self._p(path))

    def unlink(self, path):
        os.unlink(self._p(path))

    def symlink(self, target, source):
        os.symlink(source, self._new(target))

    def link(self, target, source):
        os.link(self._p(source), self._new(target))

    def rename(self, old, new):
        os.rename(self._p(old), self._new(new))

    def statfs(self, path):
        sv = os.statvfs(self._p(path))
        return {k: getattr(sv, k) for k in (
            "f_bavail", "f_bfree", "f_blocks", "f_bsize", "f_favail",
            "f_ffree", "f_files", "f_flag", "f_frsize", "f_namemax")}

    def open(self, path, flags):
        return os.open(self._p(path), flags)

    def create(self, path, mode, fi=None):
        return os.open(self._new(path), os.O_WRONLY | os.O_CREAT |
                       os.O_TRUNC, mode)

    def read(self, path, size, offset, fh):
        return os.pread(fh, size, offset)

    def write(self, path, data, offset, fh):
        return os.pwrite(fh, data, offset)

    def truncate(self, path, length, fh=None):
        if fh is not None:
            os.ftruncate(fh, length)
        else:
            os.truncate(self._p(path), length)

    def flush(self, path, fh):
        return 0

    def release(self, path, fh):
        os.close(fh)

    def fsync(self, path, datasync, fh):
        os.fsync(fh)


def main():
    if len(sys.argv) != 3:
        sys.stderr.write("usage: cifuse.py BACKING MOUNTPOINT\n")
        return 2
    fusepy.FUSE(CaseInsensitive(sys.argv[1]), sys.argv[2], foreground=True,
                nothreads=True, allow_other=os.geteuid() == 0,
                default_permissions=True, use_ino=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())

/*
 * Regular files only. An agent owns the workspace and may leave anything
 * in it for the tools, and for later agents, to open: a FIFO blocks
 * open(2) for reading until a writer comes (the agent would hang until its
 * timeout), a device's open runs its driver, a socket cannot be opened at
 * all. So the tools that read or write a file's content open it here: an
 * O_PATH look first (it opens nothing, and names what the file is), then
 * the real open with O_NONBLOCK so that it cannot block, the type checked
 * with fstat on that descriptor (a file swapped after the look is caught
 * there, with no window between the check and the use), and O_NONBLOCK
 * cleared again.
 */
#include <sys/stat.h>

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "worker/tool_int.h"
#include "worker/tools_testapi.h"

const char *
tool_file_kind(mode_t mode)
{
	switch (mode & S_IFMT) {
	case S_IFREG:
		return "a regular file";
	case S_IFDIR:
		return "a directory";
	case S_IFIFO:
		return "a FIFO";
	case S_IFSOCK:
		return "a socket";
	case S_IFCHR:
		return "a character device";
	case S_IFBLK:
		return "a block device";
	case S_IFLNK:
		return "a symlink";
	default:
		return "not a regular file";
	}
}

/* -1 with errno when st is not a regular file: EISDIR, or EINVAL. */
static int
tool_file_check(const struct stat *st)
{
	if (S_ISREG(st->st_mode))
		return 0;
	errno = S_ISDIR(st->st_mode) ? EISDIR : EINVAL;
	return -1;
}

static int tool_file_nolook;

void
tool_file_skip_look(int on)
{
	tool_file_nolook = on;
}

/* The O_PATH look: fills st; 0 for a regular file, 1 when rel does not
 * exist, -1 with errno otherwise. */
static int
tool_file_look(const struct tool_ctx *ctx, const char *rel, struct stat *st)
{
	int	fd, e;

	if ((fd = tool_open(ctx, rel, O_PATH, 0)) == -1)
		return errno == ENOENT ? 1 : -1;
	if (fstat(fd, st) == -1) {
		e = errno;
		close(fd);
		errno = e;
		return -1;
	}
	close(fd);
	return tool_file_check(st);
}

int
tool_file_open(const struct tool_ctx *ctx, const char *rel, int flags,
    mode_t mode, struct stat *st)
{
	int	fd, e, fl;

	memset(st, 0, sizeof(*st));
	if (!tool_file_nolook && tool_file_look(ctx, rel, st) == -1)
		return -1;
	if ((fd = tool_open(ctx, rel, flags | O_NONBLOCK | O_NOCTTY,
	    mode)) == -1) {
		/* A socket, or a FIFO opened for writing with no reader (both
		 * swapped in after the look): look again to say what it is. */
		e = errno;
		if (e == ENXIO && tool_file_look(ctx, rel, st) == -1)
			return -1;
		errno = e;
		return -1;
	}
	if (fstat(fd, st) == -1 || tool_file_check(st) == -1 ||
	    (fl = fcntl(fd, F_GETFL)) == -1 ||
	    fcntl(fd, F_SETFL, fl & ~O_NONBLOCK) == -1) {
		e = errno;
		close(fd);
		errno = e;
		return -1;
	}
	return fd;
}

void
tool_file_error(const char *tool, const char *path, int err,
    const struct stat *st, char *msg, size_t msglen)
{
	if (err == EISDIR || S_ISDIR(st->st_mode))
		snprintf(msg, msglen, "%s: %.200s is a directory%s", tool, path,
		    strcmp(tool, "write") == 0 ? "" : "; use list");
	else if ((st->st_mode & S_IFMT) != 0 && !S_ISREG(st->st_mode))
		snprintf(msg, msglen, "%s: %.200s is %s, not a regular file; "
		    "refused (the file tools read and write regular files "
		    "only)", tool, path, tool_file_kind(st->st_mode));
	else
		tool_path_error(tool, path, err, msg, msglen);
}

/*
 * Which of a layer's changes the workspace's .gitignore ignores (the .o
 * files and the binary of a run that ran make): `warren diff` lists them
 * apart, `warren apply` leaves them out without --include-ignored.
 *
 * git decides, as it does for the user: `git check-ignore --stdin -z` run
 * in the workspace on the host, which reads the workspace as it is, not
 * the layer. An agent may have rewritten .gitignore (or added one in a
 * new directory) in the layer; those rules are not used: only the
 * workspace's own .gitignore files, .git/info/exclude and the user's
 * core.excludesFile. Tracked files are never ignored (git's rule). The
 * paths go to git in a memory file and its answer comes back on a pipe
 * read while it runs, under a deadline; core.fsmonitor is off, so no
 * hook of the repository runs. No git, or a workspace outside a git
 * work tree: nothing is set apart, and *note says why when there is a
 * .gitignore it could have meant.
 */
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/wait.h>

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli/layer.h"
#include "common/clock.h"
#include "workspace/cow_walk.h"

#define LAYER_IGNORE_MS		30000	/* git's time to answer */

/* Is the change a directory (then it goes to git as "path/", which is
 * how a dir-only pattern, "build/", matches a path not on disk)? */
static int
layer_ignore_isdir(const struct cow_change *ch)
{
	return ch->kind == COW_DELETED ? S_ISDIR(ch->base.mode) :
	    S_ISDIR(ch->new_mode);
}

/* Every path, NUL-terminated, in a memory file at offset 0. */
static int
layer_ignore_input(const struct cow_changes *ch)
{
	size_t	i, l;
	int	fd;

	if ((fd = memfd_create("warren-check-ignore", MFD_CLOEXEC)) == -1)
		return -1;
	for (i = 0; i < ch->n; i++) {
		l = strlen(ch->v[i].path);
		if (write(fd, ch->v[i].path, l) != (ssize_t)l ||
		    (layer_ignore_isdir(&ch->v[i]) && write(fd, "/", 1) != 1) ||
		    write(fd, "", 1) != 1) {
			close(fd);
			return -1;
		}
	}
	if (lseek(fd, 0, SEEK_SET) == -1) {
		close(fd);
		return -1;
	}
	return fd;
}

static void
layer_ignore_child(const char *ws, int in, int out)
{
	int	null;

	if (dup2(in, 0) == -1 || dup2(out, 1) == -1)
		_exit(127);
	if ((null = open("/dev/null", O_WRONLY)) != -1)
		(void)dup2(null, 2);
	if (chdir(ws) == -1)
		_exit(127);
	/* The workspace's repository, not one the caller's environment
	 * points at. */
	unsetenv("GIT_DIR");
	unsetenv("GIT_WORK_TREE");
	unsetenv("GIT_INDEX_FILE");
	unsetenv("GIT_COMMON_DIR");
	execlp("git", "git", "-c", "core.fsmonitor=false", "check-ignore",
	    "--stdin", "-z", (char *)NULL);
	_exit(127);
}

/* git's answer, read until it closes its end or the deadline. */
static int
layer_ignore_read(int fd, char **buf, size_t *len)
{
	struct pollfd	 p = { .fd = fd, .events = POLLIN };
	uint64_t	 end = clock_mono_ms() + LAYER_IGNORE_MS, now;
	size_t		 cap = 4096;
	ssize_t		 n;
	char		*nb;

	*len = 0;
	if ((*buf = malloc(cap)) == NULL)
		return -1;
	for (;;) {
		if ((now = clock_mono_ms()) >= end) {
			errno = ETIMEDOUT;
			return -1;
		}
		if (poll(&p, 1, (int)(end - now)) == -1) {
			if (errno == EINTR)
				continue;
			return -1;
		}
		if (*len == cap) {
			if ((nb = realloc(*buf, cap * 2)) == NULL)
				return -1;
			*buf = nb;
			cap *= 2;
		}
		if ((n = read(fd, *buf + *len, cap - *len)) == -1) {
			if (errno == EINTR || errno == EAGAIN)
				continue;
			return -1;
		}
		if (n == 0)
			return 0;
		*len += n;
	}
}

/* Mark each path git named (NUL-separated in buf). */
static void
layer_ignore_mark(const struct cow_changes *ch, const char *buf, size_t len,
    unsigned char *ign)
{
	const struct cow_change	*c;
	const char		*p, *nul;
	char			 path[PATH_MAX];
	size_t			 l;

	for (p = buf; p < buf + len && (nul = memchr(p, '\0',
	    buf + len - p)) != NULL; p = nul + 1) {
		l = nul - p;
		if (l > 1 && p[l - 1] == '/')
			l--;
		if (l >= sizeof(path))
			continue;
		memcpy(path, p, l);
		path[l] = '\0';
		if ((c = cow_walk_find(ch, path)) != NULL)
			ign[c - ch->v] = 1;
	}
}

/* No answer from git: say so if the workspace has a .gitignore. */
static void
layer_ignore_none(const char *ws, const char *why, char *note,
    size_t notesz)
{
	char	gi[PATH_MAX + 16];

	snprintf(gi, sizeof(gi), "%s/.gitignore", ws);
	if (access(gi, F_OK) == 0)
		snprintf(note, notesz, "the workspace's .gitignore is not "
		    "used (%s): files it ignores are not set apart", why);
}

int
layer_ignore(const char *ws, const struct cow_changes *ch,
    unsigned char *ign, char *note, size_t notesz)
{
	char	*buf = NULL;
	size_t	 len;
	pid_t	 pid;
	int	 in, pfd[2], st, rc, e;

	memset(ign, 0, ch->n);
	note[0] = '\0';
	if (ch->n == 0)
		return 0;
	if ((in = layer_ignore_input(ch)) == -1)
		return -1;
	if (pipe2(pfd, O_CLOEXEC) == -1) {
		close(in);
		return -1;
	}
	if ((pid = fork()) == -1) {
		close(in);
		close(pfd[0]);
		close(pfd[1]);
		return -1;
	}
	if (pid == 0)
		layer_ignore_child(ws, in, pfd[1]);
	close(in);
	close(pfd[1]);
	rc = layer_ignore_read(pfd[0], &buf, &len);
	e = errno;
	close(pfd[0]);
	if (rc == -1)
		(void)kill(pid, SIGKILL);
	while (waitpid(pid, &st, 0) == -1 && errno == EINTR)
		;
	if (rc == -1)
		layer_ignore_none(ws, e == ETIMEDOUT ? "git check-ignore "
		    "did not answer in 30 s" : strerror(e), note, notesz);
	else if (WIFEXITED(st) && WEXITSTATUS(st) <= 1)
		layer_ignore_mark(ch, buf, len, ign);
	else
		layer_ignore_none(ws, WIFEXITED(st) && WEXITSTATUS(st) == 127 ?
		    "git is not installed" : "git check-ignore failed here: is"
		    " the workspace in a git work tree, owned by you?", note,
		    notesz);
	free(buf);
	return 0;
}

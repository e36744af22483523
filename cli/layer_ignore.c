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
 * hook of the repository runs. A path in a submodule (under a gitlink of
 * the index, `git ls-files -s`) is not asked about, as git would refuse
 * the whole question for it, and is not set apart; *note says how many.
 * No git, or a workspace outside a git work tree: nothing is set apart,
 * and *note says why (git's own words) when there is a .gitignore it
 * could have meant.
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
#include "common/str.h"
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

/* Every path not skipped, NUL-terminated, in a memory file at offset 0. */
static int
layer_ignore_input(const struct cow_changes *ch, const unsigned char *skip)
{
	size_t	i, l;
	int	fd;

	if ((fd = memfd_create("warren-check-ignore", MFD_CLOEXEC)) == -1)
		return -1;
	for (i = 0; i < ch->n; i++) {
		if (skip[i])
			continue;
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

/*
 * fd again at 3 or above: warren may have been started with fd 0 or 1
 * closed, and then the memory file or the pipe is fd 0 or 1, where
 * dup2(fd, fd) would do nothing and leave it close-on-exec (git would run
 * with it closed), or a later dup2 would close it.
 */
static int
layer_ignore_high(int fd)
{
	return fcntl(fd, F_DUPFD_CLOEXEC, 3);
}

static void
layer_ignore_child(const char *ws, char *const argv[], int in, int out,
    int err)
{
	if ((in = layer_ignore_high(in)) == -1 ||
	    (out = layer_ignore_high(out)) == -1 ||
	    (err = layer_ignore_high(err)) == -1 ||
	    dup2(in, 0) == -1 || dup2(out, 1) == -1 || dup2(err, 2) == -1)
		_exit(126);
	if (chdir(ws) == -1)
		_exit(126);
	/* The workspace's repository, not one the caller's environment
	 * points at. */
	unsetenv("GIT_DIR");
	unsetenv("GIT_WORK_TREE");
	unsetenv("GIT_INDEX_FILE");
	unsetenv("GIT_COMMON_DIR");
	execvp("git", argv);
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

/* What git said on stderr, escaped, bounded. */
static void
layer_ignore_stderr(int fd, char *err, size_t errsz)
{
	char	buf[512];
	ssize_t	n;

	err[0] = '\0';
	if ((n = pread(fd, buf, sizeof(buf), 0)) <= 0)
		return;
	while (n > 0 && (buf[n - 1] == '\n' || buf[n - 1] == '\r'))
		n--;
	(void)str_escape(err, errsz, buf, n);
}

/* git's answer: its output, its status, the start of its stderr; rerr
 * the errno if it could not be read (ETIMEDOUT: not in time). */
struct layer_ignore_git {
	char	*out;
	size_t	 len;
	int	 status;
	int	 rerr;
	char	 err[200];
};

/* Run git argv in ws with stdin in. -1 (errno) if it could not be
 * started; else 0, its answer in g (free g->out). */
static int
layer_ignore_git(const char *ws, char *const argv[], int in,
    struct layer_ignore_git *g)
{
	pid_t	pid;
	int	pfd[2], efd, e;

	memset(g, 0, sizeof(*g));
	if ((efd = memfd_create("warren-git-stderr", MFD_CLOEXEC)) == -1)
		return -1;
	if (pipe2(pfd, O_CLOEXEC) == -1) {
		close(efd);
		return -1;
	}
	if ((pid = fork()) == -1) {
		e = errno;
		close(efd);
		close(pfd[0]);
		close(pfd[1]);
		errno = e;
		return -1;
	}
	if (pid == 0)
		layer_ignore_child(ws, argv, in, pfd[1], efd);
	close(pfd[1]);
	if (layer_ignore_read(pfd[0], &g->out, &g->len) == -1) {
		g->rerr = errno;
		(void)kill(pid, SIGKILL);
	}
	close(pfd[0]);
	while (waitpid(pid, &g->status, 0) == -1 && errno == EINTR)
		;
	layer_ignore_stderr(efd, g->err, sizeof(g->err));
	close(efd);
	return 0;
}

/* Did git answer (exit status at most ok)? If not, why, for the note. */
static int
layer_ignore_answered(const struct layer_ignore_git *g, const char *what,
    int ok, char *why, size_t whysz)
{
	if (g->rerr == ETIMEDOUT)
		snprintf(why, whysz, "%s did not answer in 30 s", what);
	else if (g->rerr != 0)
		snprintf(why, whysz, "reading %s: %s", what,
		    strerror(g->rerr));
	else if (WIFEXITED(g->status) && WEXITSTATUS(g->status) <= ok)
		return 1;
	else if (WIFEXITED(g->status) && WEXITSTATUS(g->status) == 127)
		snprintf(why, whysz, "git is not installed");
	else if (WIFEXITED(g->status))
		snprintf(why, whysz, "%s exited with %d: %s", what,
		    WEXITSTATUS(g->status), g->err[0] != '\0' ? g->err :
		    "it said nothing");
	else
		snprintf(why, whysz, "%s was killed by signal %d", what,
		    WTERMSIG(g->status));
	return 0;
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

/* Is path the gitlink l, or under it? */
static int
layer_ignore_under(const char *path, const char *l, size_t ll)
{
	return strncmp(path, l, ll) == 0 &&
	    (path[ll] == '\0' || path[ll] == '/');
}

/*
 * skip[i]: change i lies in a submodule (a gitlink, mode 160000, in the
 * index `git ls-files -s -z` printed to buf): check-ignore refuses such a
 * path ("Pathspec 'sub/b.o' is in submodule 'sub'") and with it the
 * whole answer. The number skipped; *first the first such gitlink.
 */
static size_t
layer_ignore_gitlinks(const struct cow_changes *ch, const char *buf,
    size_t len, unsigned char *skip, const char **first)
{
	const char	*p, *nul, *tab;
	size_t		 i, n = 0;

	*first = NULL;
	for (p = buf; p < buf + len && (nul = memchr(p, '\0',
	    buf + len - p)) != NULL; p = nul + 1) {
		if (strncmp(p, "160000 ", 7) != 0 ||
		    (tab = memchr(p, '\t', nul - p)) == NULL)
			continue;
		for (i = 0; i < ch->n; i++) {
			if (skip[i] || !layer_ignore_under(ch->v[i].path,
			    tab + 1, nul - tab - 1))
				continue;
			skip[i] = 1;
			n++;
			if (*first == NULL)
				*first = tab + 1;
		}
	}
	return n;
}

/* Say which paths are not set apart for lying in a submodule. */
static void
layer_ignore_subnote(size_t n, const char *first, char *note, size_t notesz)
{
	char	e[128];

	(void)str_escape(e, sizeof(e), first, strlen(first));
	snprintf(note, notesz, "%zu changed path%s in a git submodule (%s) "
	    "%s not checked against .gitignore: %s not set apart", n,
	    n == 1 ? "" : "s", e, n == 1 ? "is" : "are", n == 1 ? "it is" :
	    "they are");
}

/* The gitlinks of the workspace's index, as skip (layer_ignore_gitlinks).
 * -1 (errno) if git could not be started; 0 and why if it did not answer. */
static int
layer_ignore_skip(const char *ws, const struct cow_changes *ch,
    unsigned char *skip, char *why, size_t whysz, char *note, size_t notesz)
{
	char *const		 argv[] = { "git", "-c", "core.fsmonitor=false",
	    "ls-files", "-s", "-z", NULL };
	struct layer_ignore_git	 g;
	const char		*first;
	size_t			 n;
	int			 in, rc;

	why[0] = '\0';
	if ((in = open("/dev/null", O_RDONLY | O_CLOEXEC)) == -1)
		return -1;
	rc = layer_ignore_git(ws, argv, in, &g);
	close(in);
	if (rc == -1)
		return -1;
	if (layer_ignore_answered(&g, "git ls-files", 0, why, whysz) &&
	    (n = layer_ignore_gitlinks(ch, g.out, g.len, skip, &first)) > 0)
		layer_ignore_subnote(n, first, note, notesz);
	free(g.out);
	return 0;
}

int
layer_ignore(const char *ws, const struct cow_changes *ch,
    unsigned char *ign, char *note, size_t notesz)
{
	char *const		 argv[] = { "git", "-c", "core.fsmonitor=false",
	    "check-ignore", "--stdin", "-z", NULL };
	struct layer_ignore_git	 g;
	unsigned char		*skip;
	char			 why[320];
	int			 in = -1, rc = -1;

	memset(ign, 0, ch->n);
	note[0] = '\0';
	if (ch->n == 0)
		return 0;
	if ((skip = calloc(ch->n, 1)) == NULL)
		return -1;
	if (layer_ignore_skip(ws, ch, skip, why, sizeof(why), note,
	    notesz) == -1)
		goto out;
	if (why[0] != '\0') {
		layer_ignore_none(ws, why, note, notesz);
		rc = 0;
		goto out;
	}
	if ((in = layer_ignore_input(ch, skip)) == -1 ||
	    layer_ignore_git(ws, argv, in, &g) == -1)
		goto out;
	if (layer_ignore_answered(&g, "git check-ignore", 1, why, sizeof(why)))
		layer_ignore_mark(ch, g.out, g.len, ign);
	else
		layer_ignore_none(ws, why, note, notesz);
	free(g.out);
	rc = 0;
 out:
	if (in != -1)
		close(in);
	free(skip);
	return rc;
}

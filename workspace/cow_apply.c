/*
 * warren apply: the changes of a run's layer written into the workspace.
 *
 * First every change is checked against the workspace as it is now
 * (cow_apply_check.c): a conflict or a refusal is named and nothing is
 * touched. Then each new file and link is written as a temporary
 * .warren-apply.XXXXXXXX beside its target (every one named in
 * apply.journal, fsync'd, before it is created), all are flushed (one
 * syncfs), and each is renamed into place; then what was deleted goes,
 * deepest first; directories get their modes last; a second syncfs; then
 * the journal goes. So a kill at any point leaves every file either old
 * or new, and the next apply (or cow_remove) removes the temporaries
 * (the order: test_cow_order).
 *
 * The workspace is walked one component at a time, never through a
 * link (cow_walk.c); the layer was written by agents: a setuid or setgid
 * bit is not applied, a mode the layer set is applied as the user's umask
 * allows and never writable by others (cow_apply_perms), a FIFO, socket
 * or device is refused.
 */
#include <sys/random.h>
#include <sys/stat.h>

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/fd.h"
#include "common/str.h"
#include "workspace/cow.h"
#include "workspace/cow_apply_int.h"
#include "workspace/cow_int.h"
#include "workspace/cow_walk.h"

/* A path for out: escaped, never a control byte of the agent's. */
void
cow_apply_say(const struct cow_apply *a, const char *what, const char *path,
    const char *why)
{
	char	*e;

	e = str_escape_dup(path, strlen(path), 0);
	fprintf(a->out, "%s %s%s%s\n", what, e != NULL ? e : "?",
	    why != NULL ? ": " : "", why != NULL ? why : "");
	free(e);
}

/*
 * The permissions apply gives ch's file or directory. An entry whose mode
 * the layer left as the workspace has it now keeps it (the user's own);
 * any other gets the layer's bits as the user's umask allows them, never
 * writable by others and never sticky: an agent's chmod 0777 is applied
 * as 0755 under umask 022. Setuid and setgid are never applied.
 */
mode_t
cow_apply_perms(const struct cow_apply *a, const struct cow_change *ch)
{
	const struct stat	*cur = &a->cur[ch - a->ch->v];
	mode_t			 m = ch->new_mode & 07777 &
				    ~(mode_t)(S_ISUID | S_ISGID);

	if (cur->st_mode != 0 && (cur->st_mode & (S_IFMT | 07777)) ==
	    (ch->new_mode & (S_IFMT | 07777)))
		return m;
	return m & ~a->umask & ~(mode_t)(S_IWOTH | S_ISVTX);
}

/* The process's umask, read once, before anything is made; 077 stands
 * in for the moment it is read. */
static mode_t
cow_apply_umask(void)
{
	mode_t	m = umask(077);

	umask(m);
	return m;
}

/* One journal line: a temporary's absolute path, removed if it is one. */
static void
cow_apply_clean_one(int rootfd, const char *ws, const char *line)
{
	const char	*rel, *name;
	struct stat	 sb;
	size_t		 len = strlen(ws);
	int		 dfd;

	if (strncmp(line, ws, len) != 0 || line[len] != '/' ||
	    strstr(line, "/../") != NULL || strstr(line, "/./") != NULL)
		return;
	rel = line + len + 1;
	if ((dfd = cow_walk_parent(rootfd, rel, &name)) == -1)
		return;		/* its directory is gone: so is it */
	if (strncmp(name, COW_APPLY_PREFIX, strlen(COW_APPLY_PREFIX)) == 0 &&
	    fstatat(dfd, name, &sb, AT_SYMLINK_NOFOLLOW) == 0 &&
	    (S_ISREG(sb.st_mode) || S_ISLNK(sb.st_mode)))
		(void)unlinkat(dfd, name, 0);
	close(dfd);
}

int
cow_apply_clean(const struct cow *c, char *err, size_t errsz)
{
	char	 path[PATH_MAX + 32], *buf = NULL, *line, *next;
	size_t	 len;
	int	 fd, rootfd;

	snprintf(path, sizeof(path), "%s/%s", c->dir, COW_JOURNAL);
	if ((fd = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC)) == -1) {
		if (errno == ENOENT)
			return 0;
		snprintf(err, errsz, "cannot read %s: %s", path,
		    strerror(errno));
		return -1;
	}
	if (cow_walk_read(fd, COW_JOURNAL_MAX, &buf, &len) == -1) {
		snprintf(err, errsz, "cannot read %s: %s", path,
		    strerror(errno));
		close(fd);
		return -1;
	}
	close(fd);
	if ((rootfd = open(c->workspace, O_RDONLY | O_DIRECTORY |
	    O_CLOEXEC)) != -1) {
		for (line = buf; line != NULL && *line != '\0'; line = next) {
			if ((next = strchr(line, '\n')) != NULL)
				*next++ = '\0';
			cow_apply_clean_one(rootfd, c->workspace, line);
		}
		close(rootfd);
	}
	free(buf);
	if (unlink(path) == -1 && errno != ENOENT) {
		snprintf(err, errsz, "cannot remove %s: %s", path,
		    strerror(errno));
		return -1;
	}
	return 0;
}

/* A temporary's name beside path: DIR/.warren-apply.XXXXXXXX. */
static char *
cow_apply_tmpname(const char *path)
{
	static const char	 set[] = "abcdefghijklmnopqrstuvwxyz"
	    "ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789";
	const char		*slash = strrchr(path, '/');
	unsigned char		 r[8];
	char			*out;
	size_t			 i;

	if (getrandom(r, sizeof(r), 0) != sizeof(r))
		return NULL;
	if (asprintf(&out, "%.*s%s%s00000000", slash != NULL ?
	    (int)(slash - path) : 0, path, slash != NULL ? "/" : "",
	    COW_APPLY_PREFIX) == -1)
		return NULL;
	for (i = 0; i < sizeof(r); i++)
		out[strlen(out) - sizeof(r) + i] = set[r[i] % (sizeof(set) -
		    1)];
	return out;
}

static int
cow_apply_fsync_path(const char *path, int flags)
{
	int	fd, rc;

	if ((fd = open(path, flags | O_CLOEXEC)) == -1)
		return -1;
	rc = fsync(fd);
	close(fd);
	return rc;
}

/* Name every temporary, and write them all to the journal, on disk
 * before the first is made. */
static int
cow_apply_journal(struct cow_apply *a)
{
	char	 path[PATH_MAX + 32];
	size_t	 i;
	FILE	*f;
	int	 fd, ok;

	snprintf(path, sizeof(path), "%s/%s", a->c->dir, COW_JOURNAL);
	if ((fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW |
	    O_CLOEXEC, 0600)) == -1 || (f = fdopen(fd, "w")) == NULL) {
		snprintf(a->err, a->errsz, "cannot write %s: %s", path,
		    strerror(errno));
		if (fd != -1)
			close(fd);
		return -1;
	}
	for (i = 0; i < a->ch->n; i++) {
		if (a->act[i] != ACT_WRITE && a->act[i] != ACT_WRITE_LATE)
			continue;
		if ((a->tmp[i] = cow_apply_tmpname(a->ch->v[i].path)) == NULL)
			break;
		fprintf(f, "%s/%s\n", a->c->workspace, a->tmp[i]);
	}
	ok = i == a->ch->n && fflush(f) != EOF && fsync(fd) == 0;
	if (fclose(f) == EOF)
		ok = 0;
	if (!ok || cow_apply_fsync_path(a->c->dir, O_RDONLY | O_DIRECTORY) ==
	    -1) {
		snprintf(a->err, a->errsz, "cannot write %s: %s", path,
		    strerror(errno));
		return -1;
	}
	return 0;
}

static int
cow_apply_fail(struct cow_apply *a, const char *what, const char *path)
{
	char	*e;
	int	 save = errno;

	e = str_escape_dup(path, strlen(path), 0);
	snprintf(a->err, a->errsz, "%s %s in the workspace: %s", what,
	    e != NULL ? e : "?", strerror(save));
	free(e);
	return -1;
}

static int
cow_apply_copy(int from, int to)
{
	char	buf[65536];
	ssize_t	n;

	while ((n = read(from, buf, sizeof(buf))) != 0) {
		if (n == -1) {
			if (errno == EINTR)
				continue;
			return -1;
		}
		if (fd_write_all(to, buf, (size_t)n) == -1)
			return -1;
	}
	return 0;
}

/* The new file's temporary, its bytes on disk: the user's owner and group
 * kept when we can (root), its mode without setuid and setgid. */
static int
cow_apply_tmp_file(struct cow_apply *a, size_t i, int dfd, const char *tname)
{
	const struct cow_change	*ch = &a->ch->v[i];
	struct stat		 sb;
	char			 target[PATH_MAX];
	int			 src, fd, rc = -1;

	if ((src = cow_walk_src(a->c, ch, target, sizeof(target))) < 0 ||
	    fstat(src, &sb) == -1 || !S_ISREG(sb.st_mode)) {
		if (src >= 0)
			close(src);
		if (errno == 0 || src == -2)
			errno = EINVAL;
		return -1;
	}
	if ((fd = openat(dfd, tname, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW |
	    O_CLOEXEC, 0600)) == -1) {
		close(src);
		return -1;
	}
	if (cow_apply_copy(src, fd) == 0 && (geteuid() != 0 ||
	    a->cur[i].st_mode == 0 || S_ISDIR(a->cur[i].st_mode) ||
	    fchown(fd, a->cur[i].st_uid, a->cur[i].st_gid) == 0) &&
	    fchmod(fd, cow_apply_perms(a, ch)) == 0)
		rc = 0;
	close(src);
	if (close(fd) == -1)
		rc = -1;
	return rc;
}

static int
cow_apply_tmp_link(struct cow_apply *a, size_t i, int dfd, const char *tname)
{
	const struct cow_change	*ch = &a->ch->v[i];
	char			 target[PATH_MAX];
	int			 r;

	if ((r = cow_walk_src(a->c, ch, target, sizeof(target))) != -2) {
		if (r >= 0) {
			close(r);
			errno = EINVAL;
		}
		return -1;
	}
	if (symlinkat(target, dfd, tname) == -1)
		return -1;
	if (geteuid() == 0 && a->cur[i].st_mode != 0 &&
	    !S_ISDIR(a->cur[i].st_mode) && fchownat(dfd, tname,
	    a->cur[i].st_uid, a->cur[i].st_gid, AT_SYMLINK_NOFOLLOW) == -1)
		return -1;
	return 0;
}

/* One change of the write phase: a directory made (where a file or link
 * was, that goes first), or a file's or link's temporary. */
static int
cow_apply_write_one(struct cow_apply *a, size_t i)
{
	const struct cow_change	*ch = &a->ch->v[i];
	const char		*name, *tname;
	int			 dfd, rc = -1;

	if ((dfd = cow_walk_parent(a->rootfd, ch->path, &name)) == -1)
		return cow_apply_fail(a, "cannot open the directory of", ch->path);
	if (a->act[i] == ACT_MKDIR || a->act[i] == ACT_MKDIR_REPLACE) {
		/* 0700 until the last phase: its files go in first. */
		if ((a->act[i] == ACT_MKDIR || unlinkat(dfd, name, 0) == 0) &&
		    mkdirat(dfd, name, 0700) == 0)
			rc = 0;
		if (rc == 0)
			cow_apply_say(a, "created", ch->path, NULL);
	} else {
		tname = strrchr(a->tmp[i], '/') != NULL ?
		    strrchr(a->tmp[i], '/') + 1 : a->tmp[i];
		rc = S_ISLNK(ch->new_mode) ? cow_apply_tmp_link(a, i, dfd,
		    tname) : cow_apply_tmp_file(a, i, dfd, tname);
	}
	if (rc == -1)
		cow_apply_fail(a, "cannot write", ch->path);
	close(dfd);
	return rc;
}

static const char *
cow_apply_verb(const struct cow_apply *a, size_t i)
{
	switch (a->act[i]) {
	case ACT_CHMOD:
		return "mode of";
	case ACT_DELETE:
		return "deleted";
	case ACT_WRITE:
	case ACT_WRITE_LATE:
		return a->ch->v[i].kind == COW_ADDED ? "created" : "changed";
	case ACT_DONE:
	case ACT_NONE:
	case ACT_SKIP:
	case ACT_MKDIR:
	case ACT_MKDIR_REPLACE:
		break;
	}
	return "applied";
}

/* The rename phase (WRITE, CHMOD) and the delete phase (DELETE, and
 * WRITE_LATE once the directory it replaces is empty). */
static int
cow_apply_place(struct cow_apply *a, size_t i)
{
	const struct cow_change	*ch = &a->ch->v[i];
	const char		*name, *tname;
	int			 dfd, rc = 0;

	if ((dfd = cow_walk_parent(a->rootfd, ch->path, &name)) == -1)
		return cow_apply_fail(a, "cannot open the directory of", ch->path);
	tname = a->tmp[i] == NULL ? NULL : strrchr(a->tmp[i], '/') != NULL ?
	    strrchr(a->tmp[i], '/') + 1 : a->tmp[i];
	switch (a->act[i]) {
	case ACT_DELETE:
		if (unlinkat(dfd, name, S_ISDIR(a->cur[i].st_mode) ?
		    AT_REMOVEDIR : 0) == -1 && errno != ENOENT)
			rc = -1;
		break;
	case ACT_WRITE_LATE:
		if (unlinkat(dfd, name, AT_REMOVEDIR) == -1 && errno != ENOENT)
			rc = -1;
		/* FALLTHROUGH */
	case ACT_WRITE:
		if (rc == 0 && renameat(dfd, tname, dfd, name) == -1)
			rc = -1;
		break;
	case ACT_NONE:
	case ACT_DONE:
	case ACT_SKIP:
	case ACT_MKDIR:
	case ACT_MKDIR_REPLACE:
	case ACT_CHMOD:
		break;
	}
	if (rc == -1)
		cow_apply_fail(a, "cannot apply", ch->path);
	else
		cow_apply_say(a, cow_apply_verb(a, i), ch->path, NULL);
	close(dfd);
	return rc;
}

/* A directory's mode, set last (deepest first): a read-only directory
 * must still take the files renamed into it. */
static int
cow_apply_chmod(struct cow_apply *a, size_t i)
{
	const struct cow_change	*ch = &a->ch->v[i];
	int			 fd, rc = -1;

	if ((fd = cow_walk_open(a->rootfd, ch->path, O_RDONLY |
	    O_DIRECTORY)) != -1) {
		rc = fchmod(fd, cow_apply_perms(a, ch));
		close(fd);
	}
	if (rc == -1)
		return cow_apply_fail(a, "cannot set the mode of", ch->path);
	if (a->act[i] == ACT_CHMOD)
		cow_apply_say(a, "mode of", ch->path, NULL);
	return 0;
}

/* Is change i a directory that takes a file's place, or in one? Its
 * write removes the user's file: it waits until everything else is
 * written. */
static int
cow_apply_replacing(const struct cow_apply *a, size_t i)
{
	const struct cow_change	*p;
	char			 buf[PATH_MAX], *slash;

	if (a->act[i] == ACT_MKDIR_REPLACE)
		return 1;
	if (strlcpy(buf, a->ch->v[i].path, sizeof(buf)) >= sizeof(buf))
		return 0;
	while ((slash = strrchr(buf, '/')) != NULL) {
		*slash = '\0';
		if ((p = cow_walk_find(a->ch, buf)) != NULL &&
		    a->act[p - a->ch->v] == ACT_MKDIR_REPLACE)
			return 1;
	}
	return 0;
}

/* The write phase, in path order: first what only adds (temporaries,
 * new directories), then the directories that replace a file and what
 * goes in them. A disk that fills fails the apply before a file of the
 * user's is gone. */
static int
cow_apply_write(struct cow_apply *a)
{
	size_t	i;
	int	replacing;

	for (replacing = 0; replacing <= 1; replacing++)
		for (i = 0; i < a->ch->n; i++)
			if ((a->act[i] == ACT_MKDIR || a->act[i] ==
			    ACT_MKDIR_REPLACE || a->act[i] == ACT_WRITE ||
			    a->act[i] == ACT_WRITE_LATE) &&
			    cow_apply_replacing(a, i) == replacing &&
			    cow_apply_write_one(a, i) == -1)
				return -1;
	return 0;
}

/* Write, rename in path order, delete deepest first; a line per file. */
static int
cow_apply_run(struct cow_apply *a)
{
	size_t		 i;

	for (i = 0; i < a->ch->n; i++)
		if (a->act[i] == ACT_DONE)
			cow_apply_say(a, "already applied:", a->ch->v[i].path,
			    NULL);
	for (i = 0; i < a->ch->n; i++)
		if (a->act[i] != ACT_NONE && a->act[i] != ACT_DONE &&
		    a->act[i] != ACT_SKIP && (a->ch->v[i].new_mode &
		    (S_ISUID | S_ISGID)) && a->ch->v[i].kind != COW_DELETED)
			cow_apply_say(a, "not applied: the setuid or setgid bit "
			    "of", a->ch->v[i].path, NULL);
	if (cow_apply_write(a) == -1)
		return -1;
	/* Every temporary on disk before the first rename: one syncfs
	 * costs what one fsync does, not one per file. */
	if (syncfs(a->rootfd) == -1) {
		snprintf(a->err, a->errsz, "flushing the new files to disk: %s",
		    strerror(errno));
		return -1;
	}
	for (i = 0; i < a->ch->n; i++)
		if (a->act[i] == ACT_WRITE && cow_apply_place(a, i) == -1)
			return -1;
	for (i = a->ch->n; i-- > 0;)
		if ((a->act[i] == ACT_DELETE || a->act[i] == ACT_WRITE_LATE) &&
		    cow_apply_place(a, i) == -1)
			return -1;
	for (i = a->ch->n; i-- > 0;)
		if ((a->act[i] == ACT_MKDIR || a->act[i] == ACT_MKDIR_REPLACE ||
		    a->act[i] == ACT_CHMOD) && cow_apply_chmod(a, i) == -1)
			return -1;
	return 0;
}

int
cow_apply(const struct cow *c, const struct cow_changes *ch, unsigned flags,
    FILE *out, char *err, size_t errsz)
{
	struct cow_apply	a;
	char			path[PATH_MAX + 32];
	size_t			i;
	int			rc = -1;

	memset(&a, 0, sizeof(a));
	a = (struct cow_apply){ .c = c, .ch = ch, .flags = flags, .out = out,
	    .rootfd = -1, .err = err, .errsz = errsz,
	    .umask = cow_apply_umask() };
	if ((a.act = calloc(ch->n + 1, sizeof(*a.act))) == NULL ||
	    (a.cur = calloc(ch->n + 1, sizeof(*a.cur))) == NULL ||
	    (a.tmp = calloc(ch->n + 1, sizeof(*a.tmp))) == NULL) {
		snprintf(err, errsz, "apply: %s", strerror(errno));
		goto out;
	}
	if (cow_apply_clean(c, err, errsz) == -1)
		goto out;
	if ((a.rootfd = open(c->workspace, O_RDONLY | O_DIRECTORY |
	    O_CLOEXEC)) == -1) {
		snprintf(err, errsz, "the workspace %s: %s", c->workspace,
		    strerror(errno));
		goto out;
	}
	if ((rc = cow_apply_check(&a)) != 0 || (rc = cow_apply_journal(&a)) ==
	    -1 || (rc = cow_apply_run(&a)) == -1)
		goto out;
	snprintf(path, sizeof(path), "%s/%s", c->dir, COW_JOURNAL);
	if (syncfs(a.rootfd) == -1 || unlink(path) == -1) {
		snprintf(err, errsz, "applied, but %s: %s", path,
		    strerror(errno));
		rc = -1;
	}
out:
	if (fflush(out) == EOF && rc == 0) {
		snprintf(err, errsz, "writing the report: %s", strerror(errno));
		rc = -1;
	}
	for (i = 0; a.tmp != NULL && i < ch->n; i++)
		free(a.tmp[i]);
	free(a.tmp);
	free(a.act);
	free(a.cur);
	if (a.rootfd != -1)
		close(a.rootfd);
	return rc;
}

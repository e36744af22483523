/*
 * The directory walk under glob and grep: depth-first, names sorted (the
 * output is stable), never into .git, never through a directory symlink
 * (a link cannot lead the walk out of the workspace), bounded in depth and
 * in entries visited. Only regular files and symlinks reach the visitor:
 * FIFOs, sockets and devices are skipped without being opened.
 */
#include <sys/stat.h>

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "worker/tool_int.h"

struct walk {
	const struct tool_ctx *ctx;
	int		 use_ignore;	/* honour .gitignore files */
	struct ignore	 ig;
	tool_walk_fn	 fn;
	void		*arg;
	size_t		 visited;
	char		 path[4096];
	char		*err;
	size_t		 errlen;
	/* One directory's entries at a time; aligned for struct dirent64. */
	char		 dents[8192] __attribute__((aligned(8)));
};

struct walk_ent {
	char		*name;
	unsigned char	 type;
};

static int
walk_cmp(const void *a, const void *b)
{
	return strcmp(((const struct walk_ent *)a)->name,
	    ((const struct walk_ent *)b)->name);
}

static int	walk_dir(struct walk *w, int fd, size_t plen, int depth);

static int
walk_entry(struct walk *w, int dfd, const struct walk_ent *e, size_t plen,
    int depth)
{
	unsigned char	type = e->type;
	struct stat	st;
	size_t		nlen = strlen(e->name);
	int		fd, rc;

	tool_progress(w->ctx);
	if (plen + nlen + 2 >= sizeof(w->path))
		return 0;	/* too deep a path: skip it */
	if (plen > 0)
		w->path[plen] = '/';
	memcpy(w->path + plen + (plen > 0), e->name, nlen + 1);
	if (type == DT_UNKNOWN) {
		if (fstatat(dfd, e->name, &st, AT_SYMLINK_NOFOLLOW) == -1)
			return 0;
		type = S_ISDIR(st.st_mode) ? DT_DIR : S_ISLNK(st.st_mode) ?
		    DT_LNK : S_ISREG(st.st_mode) ? DT_REG : DT_UNKNOWN;
	}
	if (w->use_ignore && ignore_match(&w->ig, w->path, type == DT_DIR)) {
		w->path[plen] = '\0';
		return 0;
	}
	if (type == DT_DIR) {
		if (strcmp(e->name, ".git") == 0 || depth >= TOOL_MAX_DEPTH) {
			w->path[plen] = '\0';
			return 0;
		}
		if ((fd = openat(dfd, e->name, O_RDONLY | O_DIRECTORY |
		    O_NOFOLLOW | O_CLOEXEC)) == -1)
			return 0;	/* unreadable: skip */
		rc = walk_dir(w, fd, plen + (plen > 0) + nlen, depth + 1);
		w->path[plen] = '\0';
		return rc;
	}
	/* FIFOs, sockets and devices are skipped, never opened: opening a
	 * FIFO blocks until a writer comes (tool_file.c). */
	if (type != DT_REG && type != DT_LNK) {
		w->path[plen] = '\0';
		return 0;
	}
	rc = w->fn(w->path, dfd, e->name, type == DT_LNK, w->arg);
	w->path[plen] = '\0';
	return rc;
}

/* Walk the directory open on fd (closed here); w->path[0, plen) names it.
 * getdents64 into the walk's one buffer, not a DIR: its entries are all
 * copied out before any subdirectory is read. */
static int
walk_dir(struct walk *w, int fd, size_t plen, int depth)
{
	struct walk_ent	*v = NULL, *nv;
	struct dirent64	*de;
	size_t		 n = 0, cap = 0, i, added = 0;
	ssize_t		 got, off;
	int		 rc = 0;

	w->path[plen] = '\0';
	if (w->use_ignore && ignore_load(&w->ig, fd, w->path, &added) == -1) {
		snprintf(w->err, w->errlen, "out of memory");
		close(fd);
		return -1;
	}
	while ((got = getdents64(fd, w->dents, sizeof(w->dents))) > 0) {
		for (off = 0; off < got; off += de->d_reclen) {
			de = (struct dirent64 *)(void *)(w->dents + off);
			if (strcmp(de->d_name, ".") == 0 ||
			    strcmp(de->d_name, "..") == 0)
				continue;
			if (++w->visited > TOOL_MAX_WALK) {
				snprintf(w->err, w->errlen, "more than %d "
				    "entries visited; narrow the path",
				    TOOL_MAX_WALK);
				rc = -1;
				goto out;
			}
			if (n == cap) {
				cap = cap ? cap * 2 : 32;
				if ((nv = reallocarray(v, cap,
				    sizeof(*v))) == NULL) {
					snprintf(w->err, w->errlen,
					    "out of memory");
					rc = -1;
					goto out;
				}
				v = nv;
			}
			if ((v[n].name = strdup(de->d_name)) == NULL) {
				snprintf(w->err, w->errlen, "out of memory");
				rc = -1;
				goto out;
			}
			v[n++].type = de->d_type;
		}
	}
	/* An unreadable directory is skipped, as one we cannot open. */
	if (n > 1)
		qsort(v, n, sizeof(*v), walk_cmp);
	w->path[plen] = '\0';
	for (i = 0; i < n && rc == 0; i++)
		rc = walk_entry(w, fd, &v[i], plen, depth);
 out:
	for (i = 0; i < n; i++)
		free(v[i].name);
	free(v);
	close(fd);
	ignore_pop(&w->ig, added);
	return rc;
}

/* rel names one regular file: hand it to fn with its directory, as a
 * link (fn opens it by its path, beneath the root). */
static int
walk_one_file(const struct tool_ctx *ctx, const char *rel, tool_walk_fn fn,
    void *arg, char *err, size_t errlen)
{
	const char	*slash;
	char		 dir[4096];
	int		 dfd, rc;

	strlcpy(dir, rel, sizeof(dir));
	slash = strrchr(dir, '/');
	if (slash != NULL)
		dir[slash - dir] = '\0';
	if ((dfd = tool_open(ctx, slash ? dir : ".", O_PATH | O_DIRECTORY,
	    0)) == -1) {
		tool_path_error("walk", rel, errno, err, errlen);
		return -1;
	}
	rc = fn(rel, dfd, slash ? rel + (slash - dir) + 1 : rel, 1, arg);
	close(dfd);
	return rc;
}

/* The .gitignore files of the directories above the walk's start, root
 * first: their rules apply below them too. */
static int
walk_ancestors(struct walk *w, const char *start)
{
	char	dir[4096];
	size_t	i, added;
	int	fd, rc = 0;

	for (i = 0; rc == 0; i++) {
		if (start[i] != '/' && start[i] != '\0' && i > 0)
			continue;
		if (start[i] == '\0' && i > 0)
			break;		/* the start itself: walk_dir loads it */
		memcpy(dir, start, i);
		dir[i] = '\0';
		if ((fd = tool_open(w->ctx, i > 0 ? dir : ".", O_RDONLY |
		    O_DIRECTORY, 0)) == -1)
			continue;
		rc = ignore_load(&w->ig, fd, dir, &added);
		close(fd);
		if (start[i] == '\0')
			break;
	}
	return rc;
}

static int	walk_start(struct walk *w, const char *rel);

int
tool_walk(const struct tool_ctx *ctx, const char *rel, int flags,
    tool_walk_fn fn, void *arg, char *err, size_t errlen)
{
	struct walk	*w;
	int		 rc;

	/* On the heap: the walk's buffers are large for a tool thread. */
	if ((w = calloc(1, sizeof(*w))) == NULL) {
		snprintf(err, errlen, "out of memory");
		return -1;
	}
	w->ctx = ctx;
	w->use_ignore = !(flags & TOOL_WALK_IGNORED);
	w->fn = fn;
	w->arg = arg;
	w->err = err;
	w->errlen = errlen;
	rc = walk_start(w, rel);
	ignore_free(&w->ig);
	free(w);
	return rc;
}

static int
walk_start(struct walk *w, const char *rel)
{
	struct stat	st;
	int		fd, pfd;

	/* O_PATH: a FIFO or a device named here is looked at, not opened. */
	if ((pfd = tool_open(w->ctx, rel, O_PATH, 0)) == -1) {
		tool_path_error("walk", rel, errno, w->err, w->errlen);
		return -1;
	}
	if (fstat(pfd, &st) == -1) {
		close(pfd);
		snprintf(w->err, w->errlen, "%s: %s", rel, strerror(errno));
		return -1;
	}
	if (!S_ISDIR(st.st_mode)) {
		close(pfd);
		/* A file named is searched, ignored or not. */
		if (S_ISREG(st.st_mode))
			return walk_one_file(w->ctx, rel, w->fn, w->arg,
			    w->err, w->errlen);
		snprintf(w->err, w->errlen, "%.200s is %s, not a regular file"
		    " or a directory; refused", rel,
		    tool_file_kind(st.st_mode));
		return -1;
	}
	/* The directory itself, through the fd just checked. */
	fd = openat(pfd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	close(pfd);
	if (fd == -1) {
		tool_path_error("walk", rel, errno, w->err, w->errlen);
		return -1;
	}
	if (strcmp(rel, ".") == 0)
		w->path[0] = '\0';
	else if (strlcpy(w->path, rel, sizeof(w->path)) >= sizeof(w->path)) {
		close(fd);
		snprintf(w->err, w->errlen, "path too long");
		return -1;
	}
	/* Strip "./" and trailing slashes from the prefix shown in results. */
	{
		size_t	l = strlen(w->path);

		while (l > 0 && w->path[l - 1] == '/')
			w->path[--l] = '\0';
		if (strncmp(w->path, "./", 2) == 0)
			memmove(w->path, w->path + 2, l - 1);
	}
	if (w->use_ignore && *w->path != '\0' &&
	    walk_ancestors(w, w->path) == -1) {
		close(fd);
		snprintf(w->err, w->errlen, "out of memory");
		return -1;
	}
	return walk_dir(w, fd, strlen(w->path), 0);
}

/*
 * read, write, edit and list: the file tools. Every path goes through
 * tool_path_rel() and tool_open(), so nothing outside the workspace is
 * opened; results are plain text for the model.
 */
#include <sys/stat.h>

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "worker/tool_int.h"

#define READ_MAX_LINE	2000		/* chars of one line shown */
#define LIST_MAX	1000		/* entries of one directory */

static const char *
tool_str(json_t *args, const char *key)
{
	return json_string_value(json_object_get(args, key));
}

/* Open args.path beneath the root; -1 with res filled on failure. */
static int
tool_open_arg(const struct tool_ctx *ctx, const char *tool, const char *path,
    int flags, mode_t mode, char *rel, size_t relsz, struct tool_result *res)
{
	char	err[512];
	int	fd;

	if (tool_path_rel(ctx, path, rel, relsz, err, sizeof(err)) == -1) {
		tool_fail(res, "%s: %s", tool, err);
		return -1;
	}
	if ((fd = tool_open(ctx, rel, flags, mode)) == -1) {
		tool_path_error(tool, path, errno, err, sizeof(err));
		tool_fail(res, "%s", err);
		return -1;
	}
	return fd;
}

/* tool_open_arg for a file's content: a regular file only (tool_file.c). */
static int
tool_open_file_arg(const struct tool_ctx *ctx, const char *tool,
    const char *path, int flags, mode_t mode, char *rel, size_t relsz,
    struct stat *st, struct tool_result *res)
{
	char	err[512];
	int	fd;

	if (tool_path_rel(ctx, path, rel, relsz, err, sizeof(err)) == -1) {
		tool_fail(res, "%s: %s", tool, err);
		return -1;
	}
	if ((fd = tool_file_open(ctx, rel, flags, mode, st)) == -1) {
		tool_file_error(tool, path, errno, st, err, sizeof(err));
		tool_fail(res, "%s", err);
		return -1;
	}
	return fd;
}

static int
tool_slurp_error(struct tool_result *res, const char *tool, const char *path,
    int err)
{
	switch (err) {
	case EISDIR:
		return tool_fail(res, "%s: %.200s is a directory; use list",
		    tool, path);
	case EFBIG:
		return tool_fail(res, "%s: %.200s is larger than %u MiB", tool,
		    path, TOOL_MAX_FILE >> 20);
	case EINVAL:
		return tool_fail(res, "%s: %.200s is not a regular file", tool,
		    path);
	default:
		return tool_fail(res, "%s: %.200s: %s", tool, path,
		    strerror(err));
	}
}

int
tool_read(const struct tool_ctx *ctx, json_t *args, struct tool_result *res)
{
	const char	*path = tool_str(args, "path"), *p, *end, *nl;
	json_int_t	 offset = 1, limit = TOOLS_DEFAULT_READ_LINES;
	struct buf	 b;
	struct stat	 st;
	char		 rel[4096], *data;
	size_t		 len, line = 0, shown = 0, max;
	int		 fd;

	if (json_object_get(args, "offset") != NULL)
		offset = json_integer_value(json_object_get(args, "offset"));
	if (json_object_get(args, "limit") != NULL)
		limit = json_integer_value(json_object_get(args, "limit"));
	if (offset < 1 || limit < 1)
		return tool_fail(res, "read: offset and limit must be at least "
		    "1");
	if ((fd = tool_open_file_arg(ctx, "read", path, O_RDONLY, 0, rel,
	    sizeof(rel), &st, res)) == -1)
		return res->text == NULL ? -1 : 0;
	if (tool_slurp(fd, TOOL_MAX_FILE, &data, &len) == -1) {
		close(fd);
		return tool_slurp_error(res, "read", path, errno);
	}
	close(fd);
	if (tool_is_binary(data, len)) {
		free(data);
		return tool_fail(res, "read: %.200s is a binary file (%zu "
		    "bytes); not shown", path, len);
	}
	if (len == 0) {
		free(data);
		res->text = strdup("(empty file)");
		return res->text == NULL ? -1 : 0;
	}
	max = ctx->max_output ? ctx->max_output : TOOLS_DEFAULT_MAX_OUTPUT;
	buf_init(&b, 0);
	for (p = data, end = data + len; p < end; p = nl + 1) {
		if ((nl = memchr(p, '\n', end - p)) == NULL)
			nl = end;
		line++;
		if ((json_int_t)line < offset)
			continue;
		if ((json_int_t)shown == limit || b.len > max) {
			buf_addf(&b, "[stopped at line %zu; read on with "
			    "offset=%zu]\n", line - 1, line);
			break;
		}
		shown++;
		buf_addf(&b, "%6zu\t%.*s%s\n", line,
		    (int)(nl - p > READ_MAX_LINE ? READ_MAX_LINE : nl - p), p,
		    nl - p > READ_MAX_LINE ? " [line cut]" : "");
	}
	free(data);
	if (shown == 0) {
		buf_free(&b);
		return tool_fail(res, "read: offset %lld is past the end of "
		    "%.200s (%zu lines)", (long long)offset, path, line);
	}
	return tool_done(ctx, res, &b);
}

static int
tool_write_all(int fd, const char *s, size_t len)
{
	ssize_t	n;

	while (len > 0) {
		if ((n = write(fd, s, len)) == -1) {
			if (errno == EINTR)
				continue;
			return -1;
		}
		s += n;
		len -= n;
	}
	return 0;
}

/*
 * Replace rel's content through a temporary file beside it and rename(2).
 * A worker killed in the middle (timeout, cancel) leaves the old file or
 * the new one, never half of one; and the bytes never land in the old
 * file's inode, so a hard link planted in the workspace to a file outside
 * it only loses this name: the file outside keeps its content. The mode
 * is kept without set-id and sticky bits (they would otherwise carry over
 * to content the agent chose). Returns 0 when done, -1 with errno when
 * writing failed, 1 when this way does not apply and the caller writes in
 * place: a symlink (the link survives; tool_open resolves its target
 * beneath the root), anything not a regular file (refused there), or a
 * directory where the sandbox lets us write files but not create or
 * rename them.
 */
static int
tool_replace_atomic(const struct tool_ctx *ctx, const char *rel,
    const char *data, size_t len)
{
	struct stat	 st;
	const char	*base, *slash;
	char		 dir[4096], tmp[300];
	mode_t		 mode = 0644;
	int		 dfd, fd, e;

	slash = strrchr(rel, '/');
	base = slash ? slash + 1 : rel;
	if (*base == '\0' || strcmp(base, ".") == 0 || strcmp(base, "..") == 0)
		return 1;
	strlcpy(dir, rel, sizeof(dir));
	if (slash != NULL)
		dir[slash - rel] = '\0';
	if ((dfd = tool_open(ctx, slash ? dir : ".", O_PATH | O_DIRECTORY,
	    0)) == -1)
		return 1;
	if (fstatat(dfd, base, &st, AT_SYMLINK_NOFOLLOW) == 0) {
		if (!S_ISREG(st.st_mode)) {
			close(dfd);
			return 1;
		}
		mode = st.st_mode & 0777;
	}
	snprintf(tmp, sizeof(tmp), ".%.200s.warren-%08x", base, arc4random());
	if ((fd = openat(dfd, tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW |
	    O_CLOEXEC, 0600)) == -1) {
		close(dfd);
		return 1;
	}
	if (tool_write_all(fd, data, len) == -1 || fchmod(fd, mode) == -1 ||
	    close(fd) == -1) {
		e = errno;
		unlinkat(dfd, tmp, 0);
		close(dfd);
		errno = e;
		return -1;
	}
	/* Whatever the name is now (swapped since the fstatat or not), the
	 * rename replaces the entry and writes into no inode of it. */
	if (renameat(dfd, tmp, dfd, base) == -1) {
		unlinkat(dfd, tmp, 0);
		close(dfd);
		return 1;
	}
	close(dfd);
	return 0;
}

/*
 * The in-place way, on fd open for writing (tool_file_open): only for a
 * file with one link, since writing into an inode changes every name it
 * has, and another may lie outside the workspace. -1 with errno, EMLINK
 * for a file with several links (*nlink says how many).
 */
static int
tool_write_in_place(int fd, const char *data, size_t len, nlink_t *nlink)
{
	struct stat	st;

	if (fstat(fd, &st) == -1)
		return -1;
	*nlink = st.st_nlink;
	if (st.st_nlink > 1) {
		errno = EMLINK;
		return -1;
	}
	if (ftruncate(fd, 0) == -1 || lseek(fd, 0, SEEK_SET) == -1 ||
	    tool_write_all(fd, data, len) == -1)
		return -1;
	return 0;
}

static int
tool_write_error(struct tool_result *res, const char *tool, const char *path,
    int err, nlink_t nlink)
{
	if (err == EMLINK)
		return tool_fail(res, "%s: %.200s has %ju hard links (other "
		    "names of the same file, perhaps outside the workspace) "
		    "and cannot be replaced by a new file here; refused, so "
		    "the other names keep their content", tool, path,
		    (uintmax_t)nlink);
	return tool_fail(res, "%s: %.200s: %s", tool, path, strerror(err));
}

int
tool_write(const struct tool_ctx *ctx, json_t *args, struct tool_result *res)
{
	const char	*path = tool_str(args, "path");
	json_t		*content = json_object_get(args, "content");
	const char	*data = json_string_value(content);
	size_t		 len = json_string_length(content);
	struct stat	 st;
	nlink_t		 nlink = 0;
	char		 rel[4096], err[512];
	int		 fd, existed, e;

	if (tool_path_rel(ctx, path, rel, sizeof(rel), err, sizeof(err)) == -1)
		return tool_fail(res, "write: %s", err);
	if (tool_mkdirs(ctx, rel) == -1) {
		tool_path_error("write", path, errno, err, sizeof(err));
		return tool_fail(res, "%s (creating its directories)", err);
	}
	if ((fd = tool_open(ctx, rel, O_PATH, 0)) != -1) {
		existed = fstat(fd, &st) == 0;
		close(fd);
	} else
		existed = 0;
	switch (tool_replace_atomic(ctx, rel, data, len)) {
	case 0:
		goto done;
	case -1:
		return tool_fail(res, "write: %.200s: %s", path,
		    strerror(errno));
	default:
		break;
	}
	if ((fd = tool_open_file_arg(ctx, "write", path, O_WRONLY | O_CREAT,
	    0644, rel, sizeof(rel), &st, res)) == -1)
		return res->text == NULL ? -1 : 0;
	if (tool_write_in_place(fd, data, len, &nlink) == -1) {
		e = errno;
		close(fd);
		return tool_write_error(res, "write", path, e, nlink);
	}
	if (close(fd) == -1)
		return tool_fail(res, "write: %.200s: %s", path,
		    strerror(errno));
 done:
	if (asprintf(&res->text, "wrote %zu bytes to %s (%s)", len, rel,
	    existed ? "overwritten" : "created") == -1) {
		res->text = NULL;
		return -1;
	}
	return 0;
}

static size_t
tool_count(const char *hay, size_t hlen, const char *needle, size_t nlen)
{
	const char	*p = hay, *end = hay + hlen;
	size_t		 n = 0;

	while ((p = memmem(p, end - p, needle, nlen)) != NULL) {
		n++;
		p += nlen;
	}
	return n;
}

/* data with every old replaced by new, into b; -1 when memory runs out. */
static int
tool_edit_subst(const char *data, size_t len, const char *old, size_t olen,
    const char *new, size_t nlen, struct buf *b)
{
	const char	*p, *q, *end = data + len;

	buf_init(b, 0);
	for (p = data; (q = memmem(p, end - p, old, olen)) != NULL;
	    p = q + olen) {
		buf_add(b, p, q - p);
		buf_add(b, new, nlen);
	}
	if (buf_add(b, p, end - p) == -1) {
		buf_free(b);
		return -1;
	}
	return 0;
}

/* Store the edited text b: a new file renamed over rel, or else in place
 * through fd (open for reading and writing). 0 stored, -1 not, with the
 * failure in res (res->text NULL when memory ran out). */
static int
tool_edit_store(const struct tool_ctx *ctx, int fd, const char *rel,
    const struct buf *b, struct tool_result *res)
{
	nlink_t	nlink = 0;

	switch (tool_replace_atomic(ctx, rel, (const char *)b->data, b->len)) {
	case 0:
		return 0;
	case -1:
		tool_write_error(res, "edit", rel, errno, 0);
		return -1;
	default:
		break;
	}
	if (tool_write_in_place(fd, (const char *)b->data, b->len,
	    &nlink) == -1) {
		tool_write_error(res, "edit", rel, errno, nlink);
		return -1;
	}
	return 0;
}

/* 0 if old occurs in the text data once, or at all with all (*count
 * times); else -1 with the failure in res. */
static int
tool_edit_check(const char *rel, const char *data, size_t len,
    const char *old, size_t olen, int all, size_t *count,
    struct tool_result *res)
{
	if (tool_is_binary(data, len)) {
		tool_fail(res, "edit: %s is a binary file; refused", rel);
		return -1;
	}
	*count = tool_count(data, len, old, olen);
	if (*count == 0) {
		tool_fail(res, "edit: old_string not found in %s (it must "
		    "match exactly, whitespace included)", rel);
		return -1;
	}
	if (*count > 1 && !all) {
		tool_fail(res, "edit: old_string occurs %zu times in %s; add "
		    "surrounding text to make it unique, or set replace_all",
		    *count, rel);
		return -1;
	}
	return 0;
}

int
tool_edit(const struct tool_ctx *ctx, json_t *args, struct tool_result *res)
{
	const char	*path = tool_str(args, "path");
	const char	*old = tool_str(args, "old_string");
	const char	*new = tool_str(args, "new_string");
	size_t		 olen = json_string_length(json_object_get(args,
			    "old_string"));
	size_t		 nlen = json_string_length(json_object_get(args,
			    "new_string"));
	int		 all = json_is_true(json_object_get(args, "replace_all"));
	struct buf	 b;
	struct stat	 st;
	char		 rel[4096], *data;
	size_t		 len, count;
	int		 fd, rc, stored;

	if (olen == 0)
		return tool_fail(res, "edit: old_string is empty; use write to "
		    "create a file");
	if (olen == nlen && memcmp(old, new, olen) == 0)
		return tool_fail(res, "edit: old_string and new_string are the "
		    "same");
	if ((fd = tool_open_file_arg(ctx, "edit", path, O_RDWR, 0, rel,
	    sizeof(rel), &st, res)) == -1)
		return res->text == NULL ? -1 : 0;
	if (tool_slurp(fd, TOOL_MAX_FILE, &data, &len) == -1) {
		rc = tool_slurp_error(res, "edit", path, errno);
		close(fd);
		return rc;
	}
	if (tool_edit_check(rel, data, len, old, olen, all, &count,
	    res) == -1 || tool_edit_subst(data, len, old, olen, new, nlen,
	    &b) == -1) {
		free(data);
		close(fd);
		return res->text == NULL ? -1 : 0;
	}
	free(data);
	stored = tool_edit_store(ctx, fd, rel, &b, res);
	buf_free(&b);
	if (close(fd) == -1 && stored == 0)
		return tool_fail(res, "edit: %s: %s", rel, strerror(errno));
	if (stored == -1)
		return res->text == NULL ? -1 : 0;
	if (asprintf(&res->text, "edited %s: %zu replacement%s", rel, count,
	    count == 1 ? "" : "s") == -1) {
		res->text = NULL;
		return -1;
	}
	return 0;
}

static int
tool_name_cmp(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

int
tool_list(const struct tool_ctx *ctx, json_t *args, struct tool_result *res)
{
	const char	*path = tool_str(args, "path");
	struct dirent	*de;
	struct stat	 st;
	struct buf	 b;
	DIR		*d;
	char		 rel[4096], **names = NULL, **nn;
	size_t		 n = 0, cap = 0, i, more = 0;
	int		 fd, rc = -1;

	if ((fd = tool_open_arg(ctx, "list", path, O_RDONLY | O_DIRECTORY, 0,
	    rel, sizeof(rel), res)) == -1)
		return res->text == NULL ? -1 : 0;
	if ((d = fdopendir(fd)) == NULL) {
		close(fd);
		return tool_fail(res, "list: %s: %s", rel, strerror(errno));
	}
	while ((de = readdir(d)) != NULL) {
		if (strcmp(de->d_name, ".") == 0 ||
		    strcmp(de->d_name, "..") == 0)
			continue;
		if (n == LIST_MAX) {
			more++;
			continue;
		}
		if (n == cap) {
			cap = cap ? cap * 2 : 64;
			if ((nn = reallocarray(names, cap, sizeof(*nn))) ==
			    NULL)
				goto out;
			names = nn;
		}
		if ((names[n] = strdup(de->d_name)) == NULL)
			goto out;
		n++;
	}
	qsort(names, n, sizeof(*names), tool_name_cmp);
	buf_init(&b, 0);
	for (i = 0; i < n; i++) {
		if (fstatat(dirfd(d), names[i], &st, AT_SYMLINK_NOFOLLOW) == -1)
			buf_addf(&b, "%s\n", names[i]);
		else if (S_ISDIR(st.st_mode))
			buf_addf(&b, "%s/\n", names[i]);
		else if (S_ISLNK(st.st_mode))
			buf_addf(&b, "%s@\n", names[i]);
		else if (S_ISREG(st.st_mode))
			buf_addf(&b, "%s\t%lld\n", names[i],
			    (long long)st.st_size);
		else	/* never opened by the tools: say so */
			buf_addf(&b, "%s\t(%s)\n", names[i],
			    tool_file_kind(st.st_mode));
	}
	if (more > 0)
		buf_addf(&b, "[%zu more entries not shown]\n", more);
	if (n == 0)
		buf_addstr(&b, "(empty directory)\n");
	rc = tool_done(ctx, res, &b);
 out:
	for (i = 0; i < n; i++)
		free(names[i]);
	free(names);
	closedir(d);
	return rc;
}

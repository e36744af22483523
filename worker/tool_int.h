/*
 * Inside the workspace tools: path resolution beneath the root, the output
 * buffer every tool writes into, and one entry point per tool.
 */
#ifndef WARREN_TOOL_INT_H
#define WARREN_TOOL_INT_H

#include <sys/stat.h>
#include <sys/types.h>

#include <stddef.h>

#include <jansson.h>

#include "common/buf.h"
#include "worker/tools.h"

#define TOOL_MAX_FILE		(32u * 1024 * 1024)	/* read, edit, grep */
#define TOOL_MAX_DEPTH		64			/* directory walk */
#define TOOL_MAX_WALK		2000000			/* entries visited */
#define TOOL_BINARY_PROBE	8192

/* A long tool's tick: the worker may send what it held back (tools.h). */
static inline void
tool_progress(const struct tool_ctx *ctx)
{
	if (ctx->progress != NULL)
		ctx->progress(ctx->progress_arg);
}

/* tool_path.c */
/* A user's path as a path relative to the root ("." for the root itself);
 * -1 with err set when it is absolute outside the root or too long. */
int	tool_path_rel(const struct tool_ctx *ctx, const char *path, char *rel,
	    size_t relsz, char *err, size_t errlen);
/* openat beneath the root: "..", absolute paths and symlinks that leave
 * the root fail with EXDEV (openat2 RESOLVE_BENEATH, or tool_open_walk
 * where openat2 is unavailable). */
int	tool_open(const struct tool_ctx *ctx, const char *rel, int flags,
	    mode_t mode);
/* Drop leading "./" and trailing "/" in place ("" becomes "."). */
void	tool_path_clean(char *rel);
/* 1 if openat2 fails with ENOSYS or EPERM under rootfd (tool_ctx_open). */
int	tool_path_openat2_refused(int rootfd);
/* A message for errno after tool_open of path. */
void	tool_path_error(const char *tool, const char *path, int err,
	    char *msg, size_t msglen);
/* mkdir -p of rel's parent directories, beneath the root. */
int	tool_mkdirs(const struct tool_ctx *ctx, const char *rel);
/* Read a whole regular file (at most max bytes); -1 with errno. EFBIG when
 * larger, EISDIR for a directory. */
int	tool_slurp(int fd, size_t max, char **data, size_t *len);
int	tool_is_binary(const char *data, size_t len);

/* tool_file.c */
/*
 * Open rel beneath the root (tool_open) for its content, only if it is a
 * regular file: never blocks on a FIFO, never opens a device or a socket,
 * the type checked on the opened descriptor; O_NONBLOCK and O_NOCTTY are
 * added for the open, O_NONBLOCK cleared after it. st is the file's (its
 * type also on failure, when known). -1 with errno: EISDIR for a
 * directory, EINVAL for anything else not a regular file.
 */
int	tool_file_open(const struct tool_ctx *ctx, const char *rel, int flags,
	    mode_t mode, struct stat *st);
/* "a FIFO", "a socket", "a character device"... for a message. */
const char *tool_file_kind(mode_t mode);
/* A message for errno after tool_file_open of path (st as it left it). */
void	tool_file_error(const char *tool, const char *path, int err,
	    const struct stat *st, char *msg, size_t msglen);

/* tool_glob.c */
/* Match a relative path against a glob: * and ? within a segment, ** any
 * number of segments; a pattern without '/' matches the base name. */
int	tool_glob_match(const char *pattern, const char *path);
/* 0 if pattern is usable (bounded length and wildcards), else -1 + err. */
int	tool_glob_valid(const char *pattern, char *err, size_t errlen);

/* tools.c */
int	tool_fail(struct tool_result *res, const char *fmt, ...)
	    __attribute__((format(printf, 2, 3)));
/* Finish res from b, keeping head and tail when over the cap. */
int	tool_done(const struct tool_ctx *ctx, struct tool_result *res,
	    struct buf *b);

/* One function per tool; args is a parsed JSON object. */
int	tool_read(const struct tool_ctx *, json_t *, struct tool_result *);
int	tool_write(const struct tool_ctx *, json_t *, struct tool_result *);
int	tool_edit(const struct tool_ctx *, json_t *, struct tool_result *);
int	tool_list(const struct tool_ctx *, json_t *, struct tool_result *);
int	tool_glob(const struct tool_ctx *, json_t *, struct tool_result *);
int	tool_grep(const struct tool_ctx *, json_t *, struct tool_result *);
int	tool_bash(const struct tool_ctx *, json_t *, struct tool_result *);

/*
 * tool_walk.c: visit every regular file and symlink under rel in sorted
 * order (FIFOs, sockets and devices are skipped, never opened), never
 * entering .git or following a directory symlink. fn gets the path
 * relative to the root, the directory's fd, the entry's name and whether it
 * is a symlink; it returns 0 to go on, 1 to stop, -1 on error.
 */
typedef int (*tool_walk_fn)(const char *relpath, int dirfd,
    const char *name, int is_link, void *arg);
/* flags: TOOL_WALK_IGNORED also visits what .gitignore files exclude. */
#define TOOL_WALK_IGNORED	0x01
int	tool_walk(const struct tool_ctx *ctx, const char *rel, int flags,
	    tool_walk_fn fn, void *arg, char *err, size_t errlen);

/* tool_ignore.c: the .gitignore rules in force during a walk */
#define IGNORE_FILE_MAX		(64u * 1024)	/* bytes read of one file */
#define IGNORE_RULES_MAX	2000		/* rules at once, in all */
struct ignore_rule {
	char	*pat;		/* for tool_glob_match */
	char	*base;		/* its .gitignore's directory ("" root) */
	int	 neg, dironly, anchored;
};
struct ignore {
	struct ignore_rule	*v;
	size_t			 n, cap;
};
/* Add dfd/.gitignore's rules (dir: its path from the root); *added of
 * them. 0, or -1 out of memory. No file, or a link: nothing added. */
int	ignore_load(struct ignore *ig, int dfd, const char *dir, size_t *added);
void	ignore_pop(struct ignore *ig, size_t n);
void	ignore_free(struct ignore *ig);
/* Is path (from the root) ignored? */
int	ignore_match(const struct ignore *ig, const char *path, int isdir);

#endif

/*
 * Copy-on-write workspaces: the agents of a run write a layer over the
 * workspace, never the workspace itself; the user reviews the layer
 * (`warren diff`), applies it (`warren apply`) or throws it away
 * (`warren discard`). docs/workspaces.md is the user's page.
 *
 * A run's layer lives in its cow directory, created 0700 under
 * $XDG_STATE_HOME/warren/cow/ (never in the workspace, which agents
 * write), and named in the run's row of the store:
 *
 *	base		what the workspace held when the run started: one
 *			record per entry (cow_manifest.c), for the conflict
 *			check of apply
 *	upper/ work/	overlay mode: the overlay's upper and work dirs
 *	mem/ upper.new/	overlay mode with a bound (disk_max): where the
 *			layer's tmpfs is mounted in the spawn server's
 *			namespace, and a save of it being written; upper/
 *			is then the layer as last saved (cow_bound.c)
 *	tree/		copy mode: a copy of the workspace (reflinked where
 *			the filesystem can), and tree.base, what tree/ held
 *			right after the copy
 *	apply.journal	temporary files an apply made in the workspace, so
 *			that a later apply or discard removes what a killed
 *			one left behind
 *
 * The spawn server enters the layer before it forks any worker
 * (cow_enter): a mount namespace of its own (with a user namespace when
 * not root) where the workspace's path is the overlay (or the copy,
 * bound), so every worker of the run sees one tree and what the others
 * wrote, and the host's namespace never sees the layer mounted.
 *
 * Everything under a cow directory but base was written by agents:
 * hostile input to whoever reads it (names, modes, link targets, sizes,
 * file types; whiteouts and opaque markers are trusted only as what
 * overlayfs writes).
 *
 * Functions return 0 or -1 with err filled (what failed, on which path,
 * what to do), unless said otherwise.
 */
#ifndef WARREN_COW_H
#define WARREN_COW_H

#include <sys/types.h>

#include <limits.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

enum cow_mode {
	COW_NONE = 0,		/* in place: agents write the workspace */
	COW_OVERLAY,		/* an overlayfs over the workspace */
	COW_COPY,		/* a copy of the workspace bound over it */
};

struct cow {
	enum cow_mode	 mode;
	char		 dir[PATH_MAX];		/* the run's cow directory */
	char		 workspace[PATH_MAX];	/* the real tree, canonical */
	uint64_t	 bound;		/* overlay: the upper on a tmpfs of
					   this many bytes (disk_max), which
					   the kernel holds (cow_bound.c);
					   0: on disk, unbounded */
};

/* What lstat() said of one entry (the base manifest's records). */
struct cow_stat {
	mode_t		 mode;		/* st_mode: type and permissions */
	uint64_t	 ino;
	int64_t		 size;
	int64_t		 mtime_ns;
	int64_t		 ctime_ns;
};

enum cow_kind {
	COW_ADDED = 1,		/* not in the base */
	COW_MODIFIED,		/* content, type or mode changed */
	COW_DELETED,		/* in the base, gone from the layer */
	COW_UNSUPPORTED,	/* in the layer but no file apply can carry
				   (a FIFO, a socket, a device, an overlay
				   redirect or metacopy): diff names it,
				   apply refuses the run */
};

/*
 * How apply checks that the workspace still holds a change's base. On
 * the machine that ran the job, lstat says it: the same inode, size and
 * times. A change set carried to another machine (cow_pack) cannot: its
 * base is known by content there (type, the owner's execute bit and the
 * SHA-256 of a file's bytes or a link's target; a directory by type).
 */
enum cow_base_by {
	COW_BASE_STAT = 0,	/* base.ino, size, mtime, ctime, mode */
	COW_BASE_SUM,		/* base.mode's type and S_IXUSR, base_sum */
	COW_BASE_UNKNOWN,	/* not recorded: the workspace had changed
				   under the path while the run went; apply
				   calls it a conflict */
};
#define COW_SUM_LEN	32

/* One changed path of a run's layer. */
struct cow_change {
	char		*path;		/* relative to the workspace; no "",
					   ".", ".." or empty parts */
	enum cow_kind	 kind;
	struct cow_stat	 base;		/* in the base manifest (not ADDED) */
	mode_t		 new_mode;	/* st_mode in the layer (not DELETED) */
	char		*src;		/* the new content's absolute path in
					   the layer; NULL if DELETED */
	const char	*sensitive;	/* hostexec_why(path): what runs it on
					   the host, or NULL */
	enum cow_base_by base_by;	/* how apply knows the base (not
					   ADDED) */
	unsigned char	 base_sum[COW_SUM_LEN]; /* COW_BASE_SUM: SHA-256 of
					   a file's bytes or a link's target */
	const char	*unreviewed;	/* set by cow_review: why the diff
					   cannot show the new content (a
					   static string), or NULL */
};

/* Sorted by path, '/' before any other byte: a directory comes before
 * what it holds (apply creates in this order and deletes in reverse). */
struct cow_changes {
	struct cow_change	*v;
	size_t			 n;
};

/* cow.c: the directory */
const char	*cow_mode_name(enum cow_mode);	/* "overlay", "copy", "none" */
int		 cow_mode_parse(const char *, enum cow_mode *);
/*
 * A new cow directory for workspace (canonical) in mode (OVERLAY or
 * COPY): the base manifest, upper/ and work/ or the copy. statedir NULL:
 * xdg_state_dir(). Fills c; nothing is left behind on failure.
 */
int		 cow_create(struct cow *c, enum cow_mode mode,
		    const char *workspace, const char *statedir,
		    char *err, size_t errsz);
/* A cow directory as the store names it: checks it is ours (a directory
 * owned by us, mode 0700, with a base). */
int		 cow_open(struct cow *c, enum cow_mode mode, const char *dir,
		    const char *workspace, char *err, size_t errsz);
/* Remove the cow directory and everything in it, never following a
 * link; also the temporary files a killed apply left (apply.journal). */
int		 cow_remove(const struct cow *c, char *err, size_t errsz);
/* cow_mark.c */
/* The layer belongs to run `run` of database db (a file "run" in it): a
 * layer without one was never recorded (its warren died first). */
int		 cow_mark(const struct cow *c, const char *db, int64_t run,
		    char *err, size_t errsz);
/* Remove the layers under statedir/cow/ (NULL: xdg_state_dir()) that no
 * run was recorded for and that are older than min_age_ms; *n how many. */
int		 cow_sweep(const char *statedir, int64_t min_age_ms, int *n,
		    char *err, size_t errsz);
/* Bytes of disk the layer could take (each file's allocated blocks or
 * its size, whichever is more); -1 with errno kept, EACCES when a
 * directory in it cannot be read (cow_usage.c). */
int		 cow_usage(const struct cow *c, uint64_t *bytes,
		    char *err, size_t errsz);

/* cow_mount.c: in the spawn server (or `sandbox exec --cow`) */
/*
 * The calling process moves into a mount namespace of its own (and, when
 * not root, a user namespace mapping its uid and gid to themselves)
 * where c->workspace is the run's tree. Call before forking workers:
 * they inherit it. The cwd is walked again, into the layer. On failure
 * the caller may already be in the new namespaces without the layer: it
 * must fork no worker (the spawn server answers the error and forks none).
 */
int		 cow_enter(const struct cow *c, char *err, size_t errsz);
/* Can this process have an overlay here (forks a child that tries, under
 * statedir)? 1 yes, 0 no (the kernel refused it: an answer that lasts)
 * with why filled, -1 on any other failure, why filled. */
int		 cow_probe_overlay(const char *statedir, char *why,
		    size_t whysz);
/* The same for mode (OVERLAY or COPY): `sandbox check` says which. */
int		 cow_probe(enum cow_mode mode, const char *statedir,
		    char *why, size_t whysz);

/* cow_probe_cache.c: in warren (a run's choice of layer, `sandbox check`) */
/* The kept answer's file, in the state directory. */
#define COW_PROBE_CACHE		"overlay-probe"
/* cow_probe_cached() flags: probe whatever answer is kept. */
#define COW_PROBE_AGAIN		0x1
/* *probed: the kept answer was used (0), or a probe ran and its answer
 * was kept, or could not be (errno says why). */
#define COW_PROBED		1
#define COW_PROBED_UNKEPT	2
/*
 * cow_probe_overlay()'s answer for statedir (NULL: the user's), kept in
 * statedir/COW_PROBE_CACHE for this kernel release, effective uid, state
 * directory and its device: a later call answers from the file, without
 * a probe. A file that does not read exactly as this process would
 * write it is ignored and written again. -1 (an error) is never kept,
 * nor anything a non-dumpable process probed (*probed UNKEPT, EPERM).
 */
int		 cow_probe_cached(const char *statedir, unsigned flags,
		    int *probed, char *why, size_t whysz);
/* Drop the answer kept in statedir: the next call probes. */
int		 cow_probe_forget(const char *statedir);

/* cow_bound.c: the layer's upper on a tmpfs of c->bound bytes */
/* Bytes the tmpfs has beyond c->bound rounded up to pages: the watch
 * (supervisor/run_disk.c) sees the layer over disk_max before the kernel
 * says ENOSPC, and stops the run as it always did. */
#define COW_BOUND_SLACK		(64 * 1024)
/* In cow_enter, in the new namespaces: mount the tmpfs on c->dir/mem and
 * copy c->dir/upper into it. */
int		 cow_bound_enter(const struct cow *c, char *err, size_t errsz);
/* Copy the tmpfs back to c->dir/upper (in the namespace, no writer
 * left): upper.new, swapped in whole. -1: err says what could not be
 * copied (what could is kept). */
int		 cow_bound_save(const struct cow *c, char *err, size_t errsz);
/* The tmpfs's root (in the namespace), for cow_bound_used outside it. */
int		 cow_bound_open(const struct cow *c, char *err, size_t errsz);
/* Bytes the tmpfs under fd holds (statfs: no agent can hide them). */
int		 cow_bound_used(int fd, uint64_t *bytes);

/* cow_changes.c */
int		 cow_changes(const struct cow *c, struct cow_changes *out,
		    char *err, size_t errsz);
void		 cow_changes_free(struct cow_changes *);

/* cow_diff.c */
#define COW_DIFF_STAT		0x1	/* a diffstat, not the diff */
#define COW_DIFF_COLOR		0x2	/* colour, for a terminal */
#define COW_DIFF_RAW		0x4	/* content as raw bytes, for patch */
/*
 * Without COW_DIFF_RAW every line an agent wrote that holds a control
 * byte (CR, ESC, DEL, C1), invalid UTF-8, a bidi control or an invisible
 * character is printed escaped (str.h, STR_ESC_STRICT: \xNN, and a
 * backslash as \\) and followed by the line "\ escaped: ...", so what is
 * read is what is there; a line without such bytes is printed as is.
 * Names are quoted as git quotes them in every mode. A file whose new
 * content is not shown (binary, too large, unreadable) is named on a
 * "# unreviewed:" line (--stat: "unreviewed" on its row).
 */
int		 cow_diff(const struct cow *c, const struct cow_changes *ch,
		    FILE *out, unsigned flags, char *err, size_t errsz);

/* cow_review.c */
/* Set each change's unreviewed (what the diff cannot show: cow_diff's
 * rule) against the workspace as it is now. Call it before cow_apply:
 * changes never reviewed are applied as if they had been shown. */
int		 cow_review(const struct cow *c, struct cow_changes *ch,
		    char *err, size_t errsz);
/* Why apply with flags leaves the change out (what runs it on the host,
 * or why the diff could not show it), or NULL. */
const char	*cow_review_held(const struct cow_change *, unsigned flags);

/* cow_apply.c */
#define COW_APPLY_SENSITIVE	0x1	/* also paths that run code on the host */
#define COW_APPLY_UNREVIEWED	0x2	/* also changes the diff cannot show */
/*
 * Apply the changes to the workspace, each file atomically (a temporary
 * file, then rename). A change cow_review_held names for flags (it runs
 * code on the host, or cow_review found the diff cannot show it) is left
 * out and listed on out. Refused as a whole, with every conflict named on
 * out, when the workspace changed under a path since the run started:
 * returns 1 and changes nothing. 0 applied; -1 error.
 */
int		 cow_apply(const struct cow *c, const struct cow_changes *ch,
		    unsigned flags, FILE *out, char *err, size_t errsz);
/* cow_pack.c: a layer's changes in one portable blob, a change set, that
 * another machine applies (the queue on PostgreSQL, docs/queue.md "Running
 * on many machines"). The changes of c (its workspace read for each
 * base's content: a base the workspace no longer holds is packed as
 * COW_BASE_UNKNOWN). 0 with *data (malloc'd) and *len; 1 when the set
 * would be over max bytes (err says how big it got; nothing in *data);
 * -1 error. */
#define COW_PACK_MAX		(16 * 1024 * 1024)
int		 cow_pack(const struct cow *c, const struct cow_changes *ch,
		    size_t max, void **data, size_t *len, char *err,
		    size_t errsz);
/* cow_unpack.c: a change set read back (hostile bytes: a database anyone
 * with the queue's password writes). cow_unpack checks it (as
 * cow_unpack_check, cow_testapi.h), then writes its
 * contents under dir (a directory of ours, 0700, made if missing: where
 * apply keeps its journal, so a killed apply's temporaries are removed by
 * the next one over the same dir) and fills c (mode COW_COPY, c->dir =
 * dir, c->workspace = workspace) and out (every base COW_BASE_SUM or
 * COW_BASE_UNKNOWN, sensitive from the path, never from the set) for
 * cow_diff and cow_apply. cow_remove(c) removes dir after. */
int		 cow_unpack(const void *data, size_t len, const char *dir,
		    const char *workspace, struct cow *c,
		    struct cow_changes *out, char *err, size_t errsz);

/* Remove the temporary files a killed apply left in the workspace (named
 * in apply.journal: one absolute path a line), then the journal. */
int		 cow_apply_clean(const struct cow *c, char *err, size_t errsz);

#endif

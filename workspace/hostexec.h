/*
 * Files in the workspace that run code on the host: names that git, shells,
 * editors and CI read and execute outside any sandbox (.git, .envrc,
 * .vscode/, .github/workflows/, shell rc files ...). The table of names is
 * in hostexec.c, and docs/workspaces.md renders it and says why each is
 * (or is not) in it. Names are compared folded (hostexec_name.c), the way
 * a case-insensitive filesystem may compare them: .GIT is .git.
 *
 * A snapshot lstat()s what lies under those names, never following a
 * symbolic link and never reading a file: type, mode, inode, size, mtime
 * and ctime. An agent can set mtime but not ctime, and any change to an
 * inode (content, mode, a link, a rename) moves its ctime, so two
 * snapshots tell created, changed and removed files apart. The names are
 * looked for at the workspace root, and those of any depth below, by a walk
 * that is bounded in entries, depth and time, stays on the workspace's
 * filesystem and says when it stopped short (the snapshot is then
 * incomplete, and the report says where).
 */
#ifndef WARREN_HOSTEXEC_H
#define WARREN_HOSTEXEC_H

#include <sys/types.h>

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include <jansson.h>

#define HOSTEXEC_MAX_ENTRIES	20000		/* recorded entries */
#define HOSTEXEC_MAX_DIRENTS	1000000		/* directory entries read */
#define HOSTEXEC_MAX_DEPTH	64		/* directories below the root */
#define HOSTEXEC_MAX_MS		5000		/* wall clock of one scan */
#define HOSTEXEC_LIST_MAX	1000		/* files in a report (JSON) */

/* The run's events (store.h): the first snapshot, and the report. */
#define HOSTEXEC_EVENT_BASELINE	"host_files_baseline"
#define HOSTEXEC_EVENT		"host_files"

/* One row of the table: a name, with everything under it. */
struct hostexec_row {
	const char	*name;	/* parts joined by '/', '*' any run of bytes */
	unsigned	 flags;
	const char	*why;	/* what runs it, for the report */
};
#define HOSTEXEC_ANY	0x1	/* at any depth, not only at the root */
#define HOSTEXEC_SHORT	0x2	/* the name says a shape: an 8.3 short name */

struct hostexec_limits {
	size_t		max_entries;
	size_t		max_dirents;
	unsigned	max_depth;
	uint64_t	max_ms;
};

/* What lstat() said of one path under a sensitive name. */
struct hostexec_entry {
	char		*path;		/* relative to the workspace */
	mode_t		 mode;		/* st_mode: type and permissions */
	uint64_t	 ino;
	int64_t		 size;
	int64_t		 mtime_ns;
	int64_t		 ctime_ns;
};

struct hostexec_snap {
	struct hostexec_entry	*v;	/* sorted by path, '/' first */
	size_t			 n, cap;
	int64_t			 taken_ms;	/* wall clock when it began */
	int			 at_resume;	/* taken when a run resumed */
	char			*incomplete;	/* NULL, or what was not scanned */
};

enum hostexec_change {
	HOSTEXEC_CREATED = 0,
	HOSTEXEC_CHANGED,
	HOSTEXEC_REMOVED,
};

struct hostexec_item {
	char			*path;
	enum hostexec_change	 change;
	mode_t			 mode;	/* now; before, if removed */
	size_t			 inside; /* a created or removed git dir's
					    entries, not listed one by one */
	const char		*why;	/* static text from the table */
};

struct hostexec_report {
	struct hostexec_item	*v;
	size_t			 n;
	char			*incomplete;	/* either snapshot's, or NULL */
	int			 since_resume;	/* baseline taken on resume */
};

/* hostexec.c: the table and the snapshot */
void		 hostexec_limits_default(struct hostexec_limits *);
/* What runs a file at path, from the table; NULL if nothing does. */
const char	*hostexec_why(const char *path);
/* The table's rows (static), *n of them. */
const struct hostexec_row *hostexec_table(size_t *n);
/* -1 only when the workspace itself cannot be opened (err says why);
 * every bound reached inside it makes the snapshot incomplete instead. */
int		 hostexec_snapshot(const char *workspace,
		    const struct hostexec_limits *, struct hostexec_snap *,
		    char *err, size_t errsz);
void		 hostexec_snap_free(struct hostexec_snap *);
/* Sort by path ('/' before any other byte) and drop duplicates. */
void		 hostexec_snap_sort(struct hostexec_snap *);
int		 hostexec_pathcmp(const char *, const char *);

/* hostexec_name.c: names compared folded */
/* path folded into out (outsz >= strlen(path) + 1), its length; or
 * (size_t)-1 if out is too small. */
size_t		 hostexec_fold(const char *path, char *out, size_t outsz);
/* Does a name, folded (n bytes at s), match the pn bytes of pat ('*':
 * any run of bytes; pat's ASCII letters in either case)? */
int		 hostexec_glob(const char *pat, size_t pn, const char *s,
		    size_t n);
/* Is a folded name (n bytes at s) an 8.3 short name, BASE~N[.EXT]? */
int		 hostexec_shortname(const char *s, size_t n);
/* Is name, folded, the ASCII name ascii (lower case)? */
int		 hostexec_is(const char *name, const char *ascii);

/* hostexec_fs.c: the workspace's filesystem */
/* 1 if dir's filesystem may take two spellings of a name for one (why
 * says how it was told), 0 if not, -1 if it cannot be asked (why). */
int		 hostexec_fs_folds(const char *dir, char *why, size_t whysz);

/* hostexec_diff.c: storing a snapshot, comparing two, the report */
/* JSON text that hostexec_snap_decode reads back byte for byte. */
char		*hostexec_snap_encode(const struct hostexec_snap *);
int		 hostexec_snap_decode(const char *text, struct hostexec_snap *,
		    char *err, size_t errsz);
void		 hostexec_compare(const struct hostexec_snap *before,
		    const struct hostexec_snap *after, struct hostexec_report *);
void		 hostexec_report_free(struct hostexec_report *);
/* {"files":[{path,change,type,why[,entries]}],"more","complete",
 * "incomplete","baseline"}: the --json event and the stored one. */
json_t		*hostexec_report_json(const struct hostexec_report *);
/*
 * The report as lines for a terminal (names escaped), at most max files;
 * prefix starts the header lines ("warren: " on stderr). Prints nothing
 * for a complete report without files. Returns the files listed.
 */
size_t		 hostexec_print(FILE *, const char *prefix, const json_t *report,
		    size_t max);

#endif

/*
 * The names in a workspace that run code on the host, in one table, and
 * the snapshot of what lies under them (hostexec.h). docs/sandbox.md,
 * "Files that run code on the host", has the same table and the reasons
 * for what is left out.
 *
 * The workspace is hostile: an agent owned it a moment ago. Nothing here
 * follows a symbolic link (fstatat AT_SYMLINK_NOFOLLOW, openat O_NOFOLLOW),
 * reads a file, or leaves the workspace's filesystem; every walk has a
 * bound, and a bound reached is written in the snapshot, never ignored.
 */
#include <sys/stat.h>

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/clock.h"
#include "common/log.h"
#include "common/xmalloc.h"
#include "workspace/hostexec.h"

#define HOSTEXEC_GIT_WHY	"git: runs its hooks and the commands its " \
				"config names (fsmonitor, aliases, filters, pager)"
#define HOSTEXEC_SHELL_WHY	"a shell runs it at start or login (a workspace " \
				"that is a home directory, or sourced)"
#define HOSTEXEC_VIM_WHY	"vim and neovim with 'exrc' run it on start here"
#define HOSTEXEC_CI_WHY		"CI runs it on push, with the repository's secrets"
#define HOSTEXEC_TIME_EVERY	1024	/* directory entries between clock reads */

struct hostexec_rule {
	const char	*path;	/* relative to the workspace root */
	const char	*why;	/* what runs it, for the report */
};

/*
 * The names, at the workspace root (".git" at any depth too). A directory
 * counts with everything under it. What is left out, and why (Makefile,
 * .env, .tool-versions ...): docs/sandbox.md.
 */
static const struct hostexec_rule hostexec_rules[] = {
	{ ".git", HOSTEXEC_GIT_WHY },
	{ ".gitattributes", "git: picks the filter, diff and merge drivers "
	    "that run on checkout, diff and merge" },
	{ ".gitmodules", "git: the submodules it clones and checks out" },
	{ ".husky", "husky: git hooks (core.hooksPath), run on commit and "
	    "push" },
	{ ".pre-commit-config.yaml", "pre-commit: the hooks it names run on "
	    "git commit" },
	{ ".envrc", "direnv: run when a shell enters the directory" },
	{ ".direnv", "direnv: cached environments it sources on entering, "
	    "layouts on PATH" },
	{ ".mise.toml", "mise: hooks, tasks and env scripts run on entering "
	    "the directory" },
	{ "mise.toml", "mise: hooks, tasks and env scripts run on entering "
	    "the directory" },
	{ ".vscode", "VS Code: tasks run on folder open; settings name the "
	    "interpreters, shells and tools it runs" },
	{ ".devcontainer", "VS Code: a dev container's initializeCommand runs "
	    "on the host when the folder opens" },
	{ ".devcontainer.json", "VS Code: a dev container's initializeCommand "
	    "runs on the host when the folder opens" },
	{ ".idea", "JetBrains IDEs: run configurations, startup tasks, "
	    "external tools" },
	{ ".exrc", HOSTEXEC_VIM_WHY },
	{ ".vimrc", HOSTEXEC_VIM_WHY },
	{ ".gvimrc", HOSTEXEC_VIM_WHY },
	{ ".nvimrc", HOSTEXEC_VIM_WHY },
	{ ".nvim.lua", HOSTEXEC_VIM_WHY },
	{ ".dir-locals.el", "Emacs: eval forms of directory-local variables" },
	{ ".dir-locals-2.el", "Emacs: eval forms of directory-local "
	    "variables" },
	{ ".github/workflows", "GitHub Actions: " HOSTEXEC_CI_WHY },
	{ ".github/actions", "GitHub Actions: local actions the workflows "
	    "run" },
	{ ".gitlab-ci.yml", "GitLab CI: " HOSTEXEC_CI_WHY },
	{ ".gitlab", "GitLab CI: files a pipeline includes" },
	{ ".forgejo/workflows", "Forgejo Actions: " HOSTEXEC_CI_WHY },
	{ ".gitea/workflows", "Gitea Actions: " HOSTEXEC_CI_WHY },
	{ ".circleci", "CircleCI: " HOSTEXEC_CI_WHY },
	{ ".travis.yml", "Travis CI: " HOSTEXEC_CI_WHY },
	{ ".drone.yml", "Drone CI: " HOSTEXEC_CI_WHY },
	{ ".woodpecker.yml", "Woodpecker CI: " HOSTEXEC_CI_WHY },
	{ ".woodpecker", "Woodpecker CI: " HOSTEXEC_CI_WHY },
	{ ".buildkite", "Buildkite: " HOSTEXEC_CI_WHY },
	{ "Jenkinsfile", "Jenkins: " HOSTEXEC_CI_WHY },
	{ "azure-pipelines.yml", "Azure Pipelines: " HOSTEXEC_CI_WHY },
	{ "bitbucket-pipelines.yml", "Bitbucket Pipelines: " HOSTEXEC_CI_WHY },
	{ ".npmrc", "npm: node-options, script-shell, and the registry its "
	    "tokens go to" },
	{ ".yarnrc", "yarn 1: yarn-path, and the registry" },
	{ ".yarnrc.yml", "yarn: every yarn command runs the yarnPath it "
	    "names" },
	{ ".pnpmfile.cjs", "pnpm: run on install" },
	{ ".profile", HOSTEXEC_SHELL_WHY },
	{ ".bashrc", HOSTEXEC_SHELL_WHY },
	{ ".bash_profile", HOSTEXEC_SHELL_WHY },
	{ ".bash_login", HOSTEXEC_SHELL_WHY },
	{ ".bash_logout", HOSTEXEC_SHELL_WHY },
	{ ".zshenv", HOSTEXEC_SHELL_WHY },
	{ ".zprofile", HOSTEXEC_SHELL_WHY },
	{ ".zshrc", HOSTEXEC_SHELL_WHY },
	{ ".zlogin", HOSTEXEC_SHELL_WHY },
	{ ".zlogout", HOSTEXEC_SHELL_WHY },
	{ ".gitconfig", "git: the user's config (a workspace that is a home "
	    "directory)" },
	{ ".ssh", "ssh: config (ProxyCommand, LocalCommand) and "
	    "authorized_keys (a workspace that is a home directory)" },
};

#define HOSTEXEC_NRULES	(sizeof(hostexec_rules) / sizeof(hostexec_rules[0]))

/*
 * Inside a git directory, what git keeps as data and rewrites on every
 * commit, fetch or status: never executed, and listing it would drown the
 * report. Everything else there is watched: config, hooks/, info/,
 * commondir, rebase and sequencer todo lists (their exec lines run),
 * and the git directories of submodules and worktrees.
 */
static const char *const hostexec_git_data[] = {
	"objects", "refs", "logs", "lfs", "annex", "rr-cache", "index", "HEAD",
	"packed-refs", "COMMIT_EDITMSG", "MERGE_MSG", "MERGE_MODE",
	"SQUASH_MSG", "AUTO_MERGE", "gc.pid", "gc.log", "shallow",
	"fsmonitor--daemon", "fsmonitor--daemon.ipc",
};

/* How a directory's entries are walked. */
enum hx_mode {
	HX_HUNT = 0,	/* outside the names: look for .git only */
	HX_PLAIN,	/* under a name: record everything */
	HX_GITDIR,	/* a git directory: record all but its data */
	HX_GITSUB,	/* modules/ or worktrees/: each dir a git directory */
};

struct hx_scan {
	const struct hostexec_limits	*lim;
	struct hostexec_snap		*snap;
	dev_t				 dev;	/* the workspace's filesystem */
	size_t				 ndirents;
	uint64_t			 t0;	/* monotonic ms */
	unsigned			 nmissed; /* places not scanned */
	int				 stop;	/* a hard bound: unwind */
	char				 path[PATH_MAX]; /* being looked at */
};

static void	hx_dir(struct hx_scan *, DIR *, size_t, unsigned, enum hx_mode);

void
hostexec_limits_default(struct hostexec_limits *l)
{
	l->max_entries = HOSTEXEC_MAX_ENTRIES;
	l->max_dirents = HOSTEXEC_MAX_DIRENTS;
	l->max_depth = HOSTEXEC_MAX_DEPTH;
	l->max_ms = HOSTEXEC_MAX_MS;
}

static int
hx_has_git(const char *path)
{
	const char	*p = path;

	for (;;) {
		if (strncmp(p, ".git", 4) == 0 && (p[4] == '\0' || p[4] == '/'))
			return 1;
		if ((p = strchr(p, '/')) == NULL)
			return 0;
		p++;
	}
}

const char *
hostexec_why(const char *path)
{
	size_t	i, n, plen = strlen(path);

	if (hx_has_git(path))
		return HOSTEXEC_GIT_WHY;
	for (i = 0; i < HOSTEXEC_NRULES; i++) {
		n = strlen(hostexec_rules[i].path);
		/* The name or under it; or a part of its path (".github"
		 * made a symbolic link). */
		if ((strncmp(path, hostexec_rules[i].path, n) == 0 &&
		    (path[n] == '\0' || path[n] == '/')) ||
		    (plen < n && strncmp(hostexec_rules[i].path, path,
		    plen) == 0 && hostexec_rules[i].path[plen] == '/'))
			return hostexec_rules[i].why;
	}
	return NULL;
}

/* Is rel one of the table's names (walked by the rules already)? */
static int
hx_is_rule(const char *rel)
{
	size_t	i;

	for (i = 0; i < HOSTEXEC_NRULES; i++)
		if (strcmp(rel, hostexec_rules[i].path) == 0)
			return 1;
	return 0;
}

static int
hx_git_data(const char *name)
{
	size_t	i, n = strlen(name);

	for (i = 0; i < sizeof(hostexec_git_data) /
	    sizeof(hostexec_git_data[0]); i++)
		if (strcmp(name, hostexec_git_data[i]) == 0)
			return 1;
	/* FETCH_HEAD, ORIG_HEAD ...; locks; the split index's parts. */
	return (n > 5 && strcmp(name + n - 5, "_HEAD") == 0) ||
	    (n > 5 && strcmp(name + n - 5, ".lock") == 0) ||
	    strncmp(name, "sharedindex.", 12) == 0;
}

/* A place not scanned: the first one is kept, the others counted. */
static void __attribute__((format(printf, 2, 3)))
hx_note(struct hx_scan *s, const char *fmt, ...)
{
	va_list	ap;

	s->nmissed++;
	if (s->snap->incomplete != NULL)
		return;
	va_start(ap, fmt);
	if (vasprintf(&s->snap->incomplete, fmt, ap) == -1)
		fatal("vasprintf");
	va_end(ap);
}

/* One more directory entry read: -1 once a hard bound is reached. */
static int
hx_bound(struct hx_scan *s)
{
	uint64_t	ms;

	if (++s->ndirents > s->lim->max_dirents) {
		hx_note(s, "stopped after reading %zu directory entries, at "
		    "\"%s\"", s->lim->max_dirents, s->path);
		s->stop = 1;
		return -1;
	}
	if (s->ndirents % HOSTEXEC_TIME_EVERY == 0 &&
	    (ms = clock_mono_ms() - s->t0) >= s->lim->max_ms) {
		hx_note(s, "stopped after %llu ms, at \"%s\"",
		    (unsigned long long)ms, s->path);
		s->stop = 1;
		return -1;
	}
	return 0;
}

static int
hx_record(struct hx_scan *s, const struct stat *sb)
{
	struct hostexec_snap	*sn = s->snap;
	struct hostexec_entry	*e;

	if (sn->n >= s->lim->max_entries) {
		hx_note(s, "more than %zu files under these names; stopped at "
		    "\"%s\"", s->lim->max_entries, s->path);
		s->stop = 1;
		return -1;
	}
	if (sn->n == sn->cap) {
		sn->cap = sn->cap ? sn->cap * 2 : 64;
		sn->v = xreallocarray(sn->v, sn->cap, sizeof(*sn->v));
	}
	e = &sn->v[sn->n++];
	e->path = xstrdup(s->path);
	e->mode = sb->st_mode;
	e->ino = (uint64_t)sb->st_ino;
	e->size = (int64_t)sb->st_size;
	e->mtime_ns = (int64_t)sb->st_mtim.tv_sec * 1000000000 +
	    sb->st_mtim.tv_nsec;
	e->ctime_ns = (int64_t)sb->st_ctim.tv_sec * 1000000000 +
	    sb->st_ctim.tv_nsec;
	return 0;
}

/* s->path = its first len bytes + "/" + name; the new length or -1. */
static int
hx_push(struct hx_scan *s, size_t len, const char *name)
{
	int	n;

	n = snprintf(s->path + len, sizeof(s->path) - len, "%s%s",
	    len > 0 ? "/" : "", name);
	if (n < 0 || (size_t)n >= sizeof(s->path) - len) {
		s->path[len] = '\0';
		hx_note(s, "a name under \"%s\" is too long: not scanned",
		    s->path);
		return -1;
	}
	return (int)(len + (size_t)n);
}

/* Open s->path's last name under parent as a directory of our
 * filesystem, never through a link; NULL (noted) otherwise. */
static DIR *
hx_open(struct hx_scan *s, int parent, const char *name, unsigned depth)
{
	struct stat	 sb;
	DIR		*d;
	int		 fd;

	if (depth > s->lim->max_depth) {
		hx_note(s, "\"%s\" is deeper than %u directories: not scanned",
		    s->path, s->lim->max_depth);
		return NULL;
	}
	if ((fd = openat(parent, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW |
	    O_CLOEXEC)) == -1) {
		if (errno != ENOENT)
			hx_note(s, "\"%s\" cannot be read (%s): not scanned",
			    s->path, strerror(errno));
		return NULL;
	}
	if (fstat(fd, &sb) == -1 || sb.st_dev != s->dev) {
		hx_note(s, "\"%s\" is another filesystem: not scanned",
		    s->path);
		close(fd);
		return NULL;
	}
	if ((d = fdopendir(fd)) == NULL) {
		hx_note(s, "\"%s\": %s: not scanned", s->path, strerror(errno));
		close(fd);
	}
	return d;
}

/* lstat name under fd (its path in s->path): -1 if it is not there, or
 * (noted) cannot be looked at. */
static int
hx_lstat(struct hx_scan *s, int fd, const char *name, struct stat *sb)
{
	if (fstatat(fd, name, sb, AT_SYMLINK_NOFOLLOW) == 0)
		return 0;
	if (errno != ENOENT)
		hx_note(s, "\"%s\": %s: not scanned", s->path, strerror(errno));
	return -1;
}

static void
hx_descend(struct hx_scan *s, DIR *parent, const char *name, size_t len,
    unsigned depth, enum hx_mode mode)
{
	DIR	*d;

	if ((d = hx_open(s, dirfd(parent), name, depth)) == NULL)
		return;
	hx_dir(s, d, len, depth, mode);
	closedir(d);
}

static enum hx_mode
hx_child_mode(enum hx_mode mode, const char *name)
{
	switch (mode) {
	case HX_GITDIR:
		if (strcmp(name, "modules") == 0 ||
		    strcmp(name, "worktrees") == 0)
			return HX_GITSUB;
		return HX_PLAIN;
	case HX_GITSUB:
		return HX_GITDIR;
	case HX_HUNT:
	case HX_PLAIN:
	default:
		return strcmp(name, ".git") == 0 ? HX_GITDIR : mode;
	}
}

/* Record one entry of a directory under a name (and what is under it). */
static void
hx_entry(struct hx_scan *s, DIR *d, const char *name, size_t len,
    unsigned depth, enum hx_mode mode)
{
	struct stat	sb;
	int		nlen;

	if (mode == HX_GITDIR && hx_git_data(name))
		return;
	if ((nlen = hx_push(s, len, name)) == -1)
		return;
	if (hx_lstat(s, dirfd(d), name, &sb) == 0 && hx_record(s, &sb) == 0 &&
	    S_ISDIR(sb.st_mode))
		hx_descend(s, d, name, (size_t)nlen, depth + 1,
		    hx_child_mode(mode, name));
	s->path[len] = '\0';
}

/* Look for .git in one directory entry outside the names. */
static void
hx_hunt(struct hx_scan *s, DIR *d, const struct dirent *de, size_t len,
    unsigned depth)
{
	struct stat	sb;
	int		nlen;

	if (strcmp(de->d_name, ".git") == 0) {
		if (depth > 0)	/* the root's is a name of the table */
			hx_entry(s, d, de->d_name, len, depth, HX_HUNT);
		return;
	}
	if (de->d_type != DT_DIR && de->d_type != DT_UNKNOWN)
		return;
	if ((nlen = hx_push(s, len, de->d_name)) == -1)
		return;
	/* The table's names were walked whole already. */
	if ((de->d_type == DT_DIR || (hx_lstat(s, dirfd(d), de->d_name,
	    &sb) == 0 && S_ISDIR(sb.st_mode))) &&
	    (depth > 1 || !hx_is_rule(s->path)))
		hx_descend(s, d, de->d_name, (size_t)nlen, depth + 1, HX_HUNT);
	s->path[len] = '\0';
}

/* Every entry of d, whose path is s->path (len bytes). */
static void
hx_dir(struct hx_scan *s, DIR *d, size_t len, unsigned depth,
    enum hx_mode mode)
{
	struct dirent	*de;

	while (!s->stop) {
		errno = 0;
		if ((de = readdir(d)) == NULL) {
			if (errno != 0)
				hx_note(s, "\"%s\": %s: not all read", s->path,
				    strerror(errno));
			break;
		}
		if (strcmp(de->d_name, ".") == 0 ||
		    strcmp(de->d_name, "..") == 0)
			continue;
		if (hx_bound(s) == -1)
			break;
		if (mode == HX_HUNT)
			hx_hunt(s, d, de, len, depth);
		else
			hx_entry(s, d, de->d_name, len, depth, mode);
	}
	s->path[len] = '\0';
}

/*
 * One name of the table: its leading directories are walked without
 * following links (one that is not a directory is recorded: a link
 * planted there counts), then the name and everything under it.
 */
static void
hx_rule(struct hx_scan *s, int root, const char *rule)
{
	char		 name[NAME_MAX + 1];
	const char	*p = rule, *slash;
	struct stat	 sb;
	DIR		*d = NULL, *next;
	size_t		 len = 0;
	unsigned	 depth = 0;
	int		 nlen;

	for (; (slash = strchr(p, '/')) != NULL; p = slash + 1, depth++) {
		snprintf(name, sizeof(name), "%.*s", (int)(slash - p), p);
		if ((nlen = hx_push(s, len, name)) == -1)
			goto out;
		len = (size_t)nlen;
		if (hx_lstat(s, d ? dirfd(d) : root, name, &sb) == -1)
			goto out;
		if (!S_ISDIR(sb.st_mode)) {
			(void)hx_record(s, &sb);
			goto out;
		}
		if ((next = hx_open(s, d ? dirfd(d) : root, name,
		    depth + 1)) == NULL)
			goto out;
		if (d != NULL)
			closedir(d);
		d = next;
	}
	if ((nlen = hx_push(s, len, p)) == -1)
		goto out;
	len = (size_t)nlen;
	if (hx_lstat(s, d ? dirfd(d) : root, p, &sb) == 0 &&
	    hx_record(s, &sb) == 0 && S_ISDIR(sb.st_mode) &&
	    (next = hx_open(s, d ? dirfd(d) : root, p, depth + 1)) != NULL) {
		hx_dir(s, next, len, depth + 1,
		    strcmp(p, ".git") == 0 ? HX_GITDIR : HX_PLAIN);
		closedir(next);
	}
out:
	if (d != NULL)
		closedir(d);
	s->path[0] = '\0';
}

static void
hx_finish(struct hx_scan *s)
{
	char	*more;

	if (s->nmissed > 1 && s->snap->incomplete != NULL) {
		if (asprintf(&more, "%s (and %u more places not scanned)",
		    s->snap->incomplete, s->nmissed - 1) == -1)
			fatal("asprintf");
		free(s->snap->incomplete);
		s->snap->incomplete = more;
	}
	hostexec_snap_sort(s->snap);
}

int
hostexec_snapshot(const char *workspace, const struct hostexec_limits *lim,
    struct hostexec_snap *snap, char *err, size_t errsz)
{
	struct hx_scan	 s;
	struct stat	 sb;
	DIR		*d;
	size_t		 i;
	int		 root;

	memset(snap, 0, sizeof(*snap));
	memset(&s, 0, sizeof(s));
	s.lim = lim;
	s.snap = snap;
	s.t0 = clock_mono_ms();
	snap->taken_ms = clock_wall_ms();
	if ((root = open(workspace, O_RDONLY | O_DIRECTORY | O_CLOEXEC)) == -1 ||
	    fstat(root, &sb) == -1) {
		snprintf(err, errsz, "workspace %s: %s", workspace,
		    strerror(errno));
		if (root != -1)
			close(root);
		return -1;
	}
	s.dev = sb.st_dev;
	/* The names first: the walk's bounds must not cut them short. */
	for (i = 0; i < HOSTEXEC_NRULES && !s.stop; i++)
		hx_rule(&s, root, hostexec_rules[i].path);
	if (!s.stop && (d = hx_open(&s, root, ".", 0)) != NULL) {
		hx_dir(&s, d, 0, 0, HX_HUNT);
		closedir(d);
	}
	close(root);
	hx_finish(&s);
	return 0;
}

void
hostexec_snap_free(struct hostexec_snap *snap)
{
	size_t	i;

	if (snap == NULL)
		return;
	for (i = 0; i < snap->n; i++)
		free(snap->v[i].path);
	free(snap->v);
	free(snap->incomplete);
	memset(snap, 0, sizeof(*snap));
}

/* A byte's rank: '/' right after NUL, the bytes below '/' moved up one. */
static unsigned
hx_rank(unsigned char c)
{
	if (c == '/')
		return 1;
	return c < '/' && c != '\0' ? c + 1u : c;
}

/* Byte order, but '/' first: a directory's entries follow it at once
 * (names may hold any byte but NUL and '/': "a/b" and "a\001b" differ). */
int
hostexec_pathcmp(const char *a, const char *b)
{
	unsigned	ca, cb;

	for (;; a++, b++) {
		ca = hx_rank(*(const unsigned char *)a);
		cb = hx_rank(*(const unsigned char *)b);
		if (ca != cb || ca == 0)
			return ca < cb ? -1 : ca > cb;
	}
}

static int
hx_entrycmp(const void *a, const void *b)
{
	return hostexec_pathcmp(((const struct hostexec_entry *)a)->path,
	    ((const struct hostexec_entry *)b)->path);
}

void
hostexec_snap_sort(struct hostexec_snap *snap)
{
	size_t	i, j;

	if (snap->n == 0)
		return;
	qsort(snap->v, snap->n, sizeof(*snap->v), hx_entrycmp);
	for (i = 1, j = 0; i < snap->n; i++) {
		if (strcmp(snap->v[i].path, snap->v[j].path) == 0) {
			free(snap->v[i].path);
			continue;
		}
		snap->v[++j] = snap->v[i];
	}
	snap->n = j + 1;
}

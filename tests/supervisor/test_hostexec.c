/*
 * Files that run code on the host (supervisor/hostexec.c, hostexec_diff.c):
 * two snapshots of a real directory around changes made the way an agent
 * would make them, and the report. Each check of the code has a case here
 * that fails without it: the table's names (and what is left out), .git at
 * any depth, git's data left out but not its hooks and config, links never
 * followed, a forged mtime, each bound of the walk, the stored snapshot's
 * round trip, and escaping.
 */
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/wait.h>

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <sched.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "workspace/hostexec.h"
#include "tests/test_wait.h"

struct ws {
	char	dir[256];
};

static void
ws_path(const struct ws *w, const char *rel, char *out, size_t outsz)
{
	if (snprintf(out, outsz, "%s/%s", w->dir, rel) >= (int)outsz)
		fail_msg("path too long: %s", rel);
}

/* mkdir -p of rel's parents, then the file. */
static void
put(const struct ws *w, const char *rel, const char *content)
{
	char	path[PATH_MAX], *slash;
	FILE	*f;

	ws_path(w, rel, path, sizeof(path));
	for (slash = path + strlen(w->dir) + 1;
	    (slash = strchr(slash, '/')) != NULL; slash++) {
		*slash = '\0';
		(void)mkdir(path, 0755);
		*slash = '/';
	}
	assert_non_null(f = fopen(path, "w"));
	fputs(content, f);
	fclose(f);
}

static void
mkdirs(const struct ws *w, const char *rel)
{
	char	path[PATH_MAX], *slash;

	ws_path(w, rel, path, sizeof(path));
	for (slash = path + strlen(w->dir) + 1;
	    (slash = strchr(slash, '/')) != NULL; slash++) {
		*slash = '\0';
		(void)mkdir(path, 0755);
		*slash = '/';
	}
	(void)mkdir(path, 0755);
}

static int
setup(void **state)
{
	struct ws	*w = calloc(1, sizeof(*w));
	const char	*t = getenv("TMPDIR");

	snprintf(w->dir, sizeof(w->dir), "%s/warren-hostexec.XXXXXX",
	    t && *t ? t : "/tmp");
	if (mkdtemp(w->dir) == NULL)
		return -1;
	*state = w;
	return 0;
}

static int
teardown(void **state)
{
	struct ws	*w = *state;
	char		 cmd[600];

	snprintf(cmd, sizeof(cmd), "chmod -R u+rwx '%s'; rm -rf '%s'", w->dir,
	    w->dir);
	if (system(cmd) != 0)
		return -1;
	free(w);
	return 0;
}

static void
snap(const struct ws *w, const struct hostexec_limits *lim,
    struct hostexec_snap *s)
{
	struct hostexec_limits	def;
	char			err[512];

	hostexec_limits_default(&def);
	assert_int_equal(hostexec_snapshot(w->dir, lim ? lim : &def, s, err,
	    sizeof(err)), 0);
}

/* The report of what happened between before and now. */
static void
diff(const struct ws *w, const struct hostexec_snap *before,
    struct hostexec_report *r)
{
	struct hostexec_snap	now;

	snap(w, NULL, &now);
	hostexec_compare(before, &now, r);
	hostexec_snap_free(&now);
}

static const struct hostexec_item *
find(const struct hostexec_report *r, const char *path)
{
	size_t	i;

	for (i = 0; i < r->n; i++)
		if (strcmp(r->v[i].path, path) == 0)
			return &r->v[i];
	return NULL;
}

static void
assert_listed(const struct hostexec_report *r, const char *path,
    enum hostexec_change c)
{
	const struct hostexec_item	*it = find(r, path);

	if (it == NULL)
		fail_msg("%s is not listed", path);
	if (it->change != c)
		fail_msg("%s is listed as change %d, not %d", path,
		    (int)it->change, (int)c);
	assert_non_null(it->why);
}

/* The names of the table, created as an agent would; nothing else. */
static void
test_names_created(void **state)
{
	struct ws		*w = *state;
	struct hostexec_snap	 b;
	struct hostexec_report	 r;

	put(w, "README", "x");
	put(w, ".github/ISSUE_TEMPLATE/bug.md", "x");
	snap(w, NULL, &b);
	assert_int_equal(b.n, 0);
	assert_null(b.incomplete);
	put(w, ".envrc", "eval x");
	put(w, ".vscode/tasks.json", "{}");
	put(w, ".github/workflows/x.yml", "on: push");
	put(w, ".husky/pre-commit", "x");
	put(w, ".bashrc", "x");
	put(w, ".pre-commit-config.yaml", "x");
	put(w, ".gitattributes", "* filter=x");
	put(w, ".npmrc", "x");
	put(w, ".devcontainer/devcontainer.json", "{}");
	put(w, ".idea/workspace.xml", "x");
	/* Nested copies of the names of any depth; spellings that a
	 * case-insensitive filesystem takes for the names. */
	put(w, "sub/.envrc", "x");
	put(w, "sub/.env", "A=1");
	put(w, "sub/deeper/.vscode/tasks.json", "x");
	put(w, ".GIT/hooks/post-checkout", "x");
	put(w, ".Envrc", "x");
	put(w, ".VSCODE/tasks.json", "x");
	put(w, "lefthook.yml", "x");
	put(w, "x.code-workspace", "x");
	/* Left out: project files, data, CI files below the root. */
	put(w, "Makefile", "all:");
	put(w, ".tool-versions", "nodejs 20");
	put(w, "sub/.github/workflows/x.yml", "x");
	put(w, ".github/ISSUE_TEMPLATE/feature.md", "x");
	diff(w, &b, &r);
	assert_listed(&r, "sub/.envrc", HOSTEXEC_CREATED);
	assert_listed(&r, "sub/.env", HOSTEXEC_CREATED);
	assert_listed(&r, "sub/deeper/.vscode/tasks.json", HOSTEXEC_CREATED);
	assert_listed(&r, ".GIT", HOSTEXEC_CREATED);
	assert_int_equal(find(&r, ".GIT")->inside, 2);
	assert_listed(&r, ".Envrc", HOSTEXEC_CREATED);
	assert_listed(&r, ".VSCODE/tasks.json", HOSTEXEC_CREATED);
	assert_listed(&r, "lefthook.yml", HOSTEXEC_CREATED);
	assert_listed(&r, "x.code-workspace", HOSTEXEC_CREATED);
	assert_listed(&r, ".envrc", HOSTEXEC_CREATED);
	assert_listed(&r, ".vscode/tasks.json", HOSTEXEC_CREATED);
	assert_listed(&r, ".github/workflows/x.yml", HOSTEXEC_CREATED);
	assert_listed(&r, ".husky/pre-commit", HOSTEXEC_CREATED);
	assert_listed(&r, ".bashrc", HOSTEXEC_CREATED);
	assert_listed(&r, ".pre-commit-config.yaml", HOSTEXEC_CREATED);
	assert_listed(&r, ".gitattributes", HOSTEXEC_CREATED);
	assert_listed(&r, ".npmrc", HOSTEXEC_CREATED);
	assert_listed(&r, ".devcontainer/devcontainer.json", HOSTEXEC_CREATED);
	assert_listed(&r, ".idea/workspace.xml", HOSTEXEC_CREATED);
	/* Directories are not lines of their own; a created .GIT is one
	 * line with its entries, as .git is. */
	assert_null(find(&r, ".vscode"));
	assert_int_equal(r.n, 18);
	assert_null(r.incomplete);
	hostexec_report_free(&r);
	hostexec_snap_free(&b);
}

/* Unchanged, changed, removed; an mtime put back does not hide a change,
 * nor a file renamed over with the same size and times. */
static void
test_changed_removed(void **state)
{
	struct ws		*w = *state;
	struct hostexec_snap	 b;
	struct hostexec_report	 r;
	struct timespec		 ts[2];
	struct stat		 sb;
	char			 path[PATH_MAX], other[PATH_MAX];

	put(w, ".envrc", "same");
	put(w, ".zshrc", "aaaa");
	put(w, ".profile", "bbbb");
	put(w, ".vscode/settings.json", "{}");
	put(w, "staged", "cccc");
	ws_path(w, ".zshrc", path, sizeof(path));
	assert_int_equal(stat(path, &sb), 0);
	ts[0] = sb.st_atim;
	ts[1] = sb.st_mtim;
	ws_path(w, ".profile", other, sizeof(other));
	assert_int_equal(utimensat(AT_FDCWD, other, ts, 0), 0);
	ws_path(w, "staged", other, sizeof(other));
	assert_int_equal(utimensat(AT_FDCWD, other, ts, 0), 0);
	snap(w, NULL, &b);
	/* Rewritten, same size, mtime put back: only ctime tells. */
	usleep(20000);
	put(w, ".zshrc", "AAAA");
	assert_int_equal(utimensat(AT_FDCWD, path, ts, 0), 0);
	/* Another file with the same size and times renamed over it. */
	ws_path(w, ".profile", path, sizeof(path));
	assert_int_equal(rename(other, path), 0);
	ws_path(w, ".vscode/settings.json", path, sizeof(path));
	assert_int_equal(unlink(path), 0);
	diff(w, &b, &r);
	assert_null(find(&r, ".envrc"));
	assert_listed(&r, ".zshrc", HOSTEXEC_CHANGED);
	assert_listed(&r, ".profile", HOSTEXEC_CHANGED);
	assert_listed(&r, ".vscode/settings.json", HOSTEXEC_REMOVED);
	assert_int_equal(r.n, 3);
	hostexec_report_free(&r);
	hostexec_snap_free(&b);
}

/* git init at any depth is one line; an existing repository's hooks and
 * config are watched, its data is not, wherever it is. */
static void
test_git(void **state)
{
	struct ws		*w = *state;
	struct hostexec_snap	 b;
	struct hostexec_report	 r;
	const struct hostexec_item *it;

	put(w, ".git/config", "[core]");
	put(w, ".git/HEAD", "ref: refs/heads/main");
	put(w, ".git/objects/ab/cdef", "x");
	put(w, "vendor/lib/.git/config", "[core]");
	put(w, ".git/modules/objects/config", "[core]");
	snap(w, NULL, &b);
	put(w, "a/b/c/d/e/.git/config", "[core]\nfsmonitor = evil");
	put(w, "a/b/c/d/e/.git/hooks/pre-commit", "evil");
	put(w, ".git/config", "[core]\nfsmonitor = evil");
	put(w, ".git/hooks/post-checkout", "evil");
	put(w, ".git/rebase-merge/git-rebase-todo", "exec evil");
	put(w, "vendor/lib/.git/hooks/pre-push", "evil");
	/* A submodule named like git's data is still a git directory. */
	put(w, ".git/modules/objects/hooks/pre-commit", "evil");
	/* What git itself rewrites all day. */
	put(w, ".git/HEAD", "ref: refs/heads/other");
	put(w, ".git/objects/ab/cdef2", "x");
	put(w, ".git/refs/heads/main", "x");
	put(w, ".git/logs/HEAD", "x");
	put(w, ".git/index", "x");
	put(w, ".git/ORIG_HEAD", "x");
	put(w, ".git/config.lock", "x");
	put(w, ".git/modules/objects/objects/x", "x");
	diff(w, &b, &r);
	assert_non_null(it = find(&r, "a/b/c/d/e/.git"));
	assert_int_equal(it->change, HOSTEXEC_CREATED);
	assert_int_equal(it->inside, 3);	/* config, hooks/, pre-commit */
	assert_listed(&r, ".git/config", HOSTEXEC_CHANGED);
	assert_listed(&r, ".git/hooks/post-checkout", HOSTEXEC_CREATED);
	assert_listed(&r, ".git/rebase-merge/git-rebase-todo",
	    HOSTEXEC_CREATED);
	assert_listed(&r, "vendor/lib/.git/hooks/pre-push", HOSTEXEC_CREATED);
	assert_listed(&r, ".git/modules/objects/hooks/pre-commit",
	    HOSTEXEC_CREATED);
	assert_int_equal(r.n, 6);
	hostexec_report_free(&r);
	hostexec_snap_free(&b);
}

/* mv .git .git.orig && mkdir .git && cp -a: the same names and times,
 * but another directory: one line for the whole replaced .git. */
static void
test_git_replaced(void **state)
{
	struct ws		*w = *state;
	struct hostexec_snap	 b;
	struct hostexec_report	 r;
	const struct hostexec_item *it;
	char			 cmd[800];

	put(w, ".git/config", "[core]");
	put(w, ".git/hooks/pre-commit.sample", "x");
	snap(w, NULL, &b);
	snprintf(cmd, sizeof(cmd), "cd '%s' && mv .git .git.orig && mkdir .git"
	    " && cp -a .git.orig/. .git/", w->dir);
	assert_int_equal(system(cmd), 0);
	diff(w, &b, &r);
	assert_non_null(it = find(&r, ".git"));
	assert_int_equal(it->change, HOSTEXEC_CHANGED);
	assert_int_equal(it->inside, 3);
	assert_int_equal(r.n, 1);
	hostexec_report_free(&r);
	hostexec_snap_free(&b);
}

/* A link planted under a name is a change, and is never followed. */
static void
test_symlinks(void **state)
{
	struct ws		*w = *state;
	struct hostexec_snap	 b, after;
	struct hostexec_report	 r;
	char			 path[PATH_MAX], target[PATH_MAX];
	size_t			 i;

	put(w, "elsewhere/tasks.json", "{}");
	put(w, "elsewhere/workflows/x.yml", "x");
	put(w, "elsewhere/.git/config", "x");
	snap(w, NULL, &b);
	ws_path(w, "elsewhere", target, sizeof(target));
	ws_path(w, ".vscode", path, sizeof(path));
	assert_int_equal(symlink(target, path), 0);
	ws_path(w, ".github", path, sizeof(path));
	assert_int_equal(symlink(target, path), 0);
	ws_path(w, ".envrc", path, sizeof(path));
	assert_int_equal(symlink("/etc/passwd", path), 0);
	ws_path(w, "sub", path, sizeof(path));
	assert_int_equal(symlink(target, path), 0);
	snap(w, NULL, &after);
	for (i = 0; i < after.n; i++)
		if (strncmp(after.v[i].path, "elsewhere", 9) != 0 &&
		    strchr(after.v[i].path, '/') != NULL)
			fail_msg("followed a link to %s", after.v[i].path);
	hostexec_compare(&b, &after, &r);
	assert_listed(&r, ".vscode", HOSTEXEC_CREATED);
	assert_true(S_ISLNK(find(&r, ".vscode")->mode));
	assert_listed(&r, ".github", HOSTEXEC_CREATED);
	assert_listed(&r, ".envrc", HOSTEXEC_CREATED);
	assert_int_equal(r.n, 3);
	hostexec_report_free(&r);
	hostexec_snap_free(&after);
	hostexec_snap_free(&b);
}

/* Each bound stops the walk and says so; what was found is kept. */
static void
test_bounds(void **state)
{
	struct ws		*w = *state;
	struct hostexec_limits	 lim;
	struct hostexec_snap	 s;
	char			 name[64];
	int			 i;

	put(w, ".vscode/a", "x");
	put(w, ".vscode/b", "x");
	put(w, ".vscode/c", "x");
	put(w, "d1/d2/d3/d4/d5/d6/.git/config", "x");
	for (i = 0; i < 1100; i++) {
		snprintf(name, sizeof(name), "many/f%d", i);
		put(w, name, "");
	}
	hostexec_limits_default(&lim);
	snap(w, &lim, &s);
	if (s.incomplete != NULL)
		fail_msg("incomplete: %s", s.incomplete);
	assert_int_equal(s.n, 6);
	hostexec_snap_free(&s);

	lim.max_depth = 4;
	snap(w, &lim, &s);
	assert_non_null(s.incomplete);
	assert_non_null(strstr(s.incomplete, "deeper than 4 directories"));
	assert_int_equal(s.n, 4);	/* .vscode and its files */
	hostexec_snap_free(&s);

	hostexec_limits_default(&lim);
	lim.max_entries = 2;
	snap(w, &lim, &s);
	assert_non_null(s.incomplete);
	assert_non_null(strstr(s.incomplete, "more than 2 files"));
	assert_int_equal(s.n, 2);
	hostexec_snap_free(&s);

	hostexec_limits_default(&lim);
	lim.max_dirents = 100;
	snap(w, &lim, &s);
	assert_non_null(s.incomplete);
	assert_non_null(strstr(s.incomplete, "stopped after reading 100"));
	hostexec_snap_free(&s);

	hostexec_limits_default(&lim);
	lim.max_ms = 0;
	snap(w, &lim, &s);
	assert_non_null(s.incomplete);
	assert_non_null(strstr(s.incomplete, "stopped after"));
	assert_non_null(strstr(s.incomplete, " ms, at "));
	hostexec_snap_free(&s);
}

/* A directory the supervisor cannot read hides nothing silently. */
static void
test_unreadable(void **state)
{
	struct ws		*w = *state;
	struct hostexec_snap	 s;
	char			 path[PATH_MAX];

	if (geteuid() == 0)
		skip();	/* root reads it anyway */
	put(w, "hidden/.git/config", "x");
	ws_path(w, "hidden", path, sizeof(path));
	assert_int_equal(chmod(path, 0), 0);
	snap(w, NULL, &s);
	assert_non_null(s.incomplete);
	assert_non_null(strstr(s.incomplete, "\"hidden\" cannot be read"));
	hostexec_snap_free(&s);
}

static int
write_file(const char *path, const char *text)
{
	int	fd, ok;

	if ((fd = open(path, O_WRONLY)) == -1)
		return -1;
	ok = write(fd, text, strlen(text)) == (ssize_t)strlen(text);
	close(fd);
	return ok ? 0 : -1;
}

/* A user namespace (as an ordinary user) mapping us to ourselves. */
static int
as_user_ns(void)
{
	char	map[64];
	uid_t	uid = geteuid();
	gid_t	gid = getegid();

	if (unshare(CLONE_NEWUSER | CLONE_NEWNS) == -1)
		return -1;
	snprintf(map, sizeof(map), "%u %u 1", (unsigned)uid, (unsigned)uid);
	if (write_file("/proc/self/uid_map", map) == -1 ||
	    write_file("/proc/self/setgroups", "deny") == -1)
		return -1;
	snprintf(map, sizeof(map), "%u %u 1", (unsigned)gid, (unsigned)gid);
	return write_file("/proc/self/gid_map", map);
}

/* Another filesystem inside the workspace is not walked, and said. */
static void
test_mount(void **state)
{
	struct ws		*w = *state;
	struct hostexec_limits	 lim;
	struct hostexec_snap	 s;
	char			 path[PATH_MAX], err[512];
	pid_t			 pid;
	int			 st;

	mkdirs(w, "mnt");
	ws_path(w, "mnt", path, sizeof(path));
	hostexec_limits_default(&lim);
	if ((pid = fork()) == 0) {
		if (unshare(CLONE_NEWNS) == -1 && as_user_ns() == -1)
			_exit(77);
		if (mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) == -1 ||
		    mount("tmpfs", path, "tmpfs", 0, "size=1m") == -1)
			_exit(77);
		if (mkdir(strcat(path, "/.git"), 0755) == -1)
			_exit(1);
		if (hostexec_snapshot(w->dir, &lim, &s, err, sizeof(err)) == -1)
			_exit(2);
		_exit(s.incomplete != NULL && strstr(s.incomplete,
		    "\"mnt\" is another filesystem") != NULL && s.n == 0 ? 0 :
		    3);
	}
	assert_true((st = test_waitpid(pid, 240,
	    "the child of test_mount")) != -1);
	assert_true(WIFEXITED(st));
	if (WEXITSTATUS(st) == 77)
		skip();	/* no mount namespace here */
	assert_int_equal(WEXITSTATUS(st), 0);
}

/*
 * The stored snapshot reads back the same (hostile bytes in names too),
 * and one that is not a snapshot is refused.
 */
static void
test_encode(void **state)
{
	struct ws		*w = *state;
	struct hostexec_snap	 b, d, after;
	struct hostexec_report	 r;
	char			*text, err[256];
	size_t			 i;

	put(w, ".vscode/\xff\xfe bad utf8", "x");
	put(w, ".vscode/ctl\x1b[31m", "x");
	put(w, ".vscode/ok \xc3\xa9", "x");
	put(w, ".envrc", "x");
	snap(w, NULL, &b);
	b.incomplete = strdup("a note");
	text = hostexec_snap_encode(&b);
	assert_int_equal(hostexec_snap_decode(text, &d, err, sizeof(err)), 0);
	assert_int_equal(d.n, b.n);
	assert_int_equal(d.taken_ms, b.taken_ms);
	assert_string_equal(d.incomplete, "a note");
	for (i = 0; i < b.n; i++) {
		assert_string_equal(d.v[i].path, b.v[i].path);
		assert_int_equal(d.v[i].ctime_ns, b.v[i].ctime_ns);
		assert_int_equal(d.v[i].ino, b.v[i].ino);
	}
	free(d.incomplete);
	d.incomplete = NULL;
	snap(w, NULL, &after);
	hostexec_compare(&d, &after, &r);
	assert_int_equal(r.n, 0);
	hostexec_report_free(&r);
	hostexec_snap_free(&after);
	hostexec_snap_free(&d);
	free(text);
	assert_int_equal(hostexec_snap_decode("{\"v\":2,\"taken_ms\":1,"
	    "\"entries\":[]}", &d, err, sizeof(err)), -1);
	assert_int_equal(hostexec_snap_decode("{\"v\":1,\"taken_ms\":1,"
	    "\"entries\":[[\"x\",1,2,3,4]]}", &d, err, sizeof(err)), -1);
	assert_int_equal(hostexec_snap_decode("{\"v\":1,\"taken_ms\":1,"
	    "\"entries\":[[{\"hex\":\"6100\"},1,2,3,4,5]]}", &d, err,
	    sizeof(err)), -1);
	assert_int_equal(hostexec_snap_decode("not json", &d, err,
	    sizeof(err)), -1);
	hostexec_snap_free(&b);
}

/*
 * Incomplete snapshots: a file missing from the first is listed only if
 * it is new since (its ctime), a file missing from the last is not
 * called removed.
 */
static void
test_incomplete_compare(void **state)
{
	struct hostexec_snap	b, a;
	struct hostexec_entry	old, young, gone;
	struct hostexec_report	r;

	(void)state;
	memset(&b, 0, sizeof(b));
	memset(&a, 0, sizeof(a));
	memset(&old, 0, sizeof(old));
	old.path = strdup(".envrc");
	old.mode = S_IFREG | 0644;
	old.ctime_ns = (int64_t)1000 * 1000000;
	young = old;
	young.path = strdup(".zshrc");
	young.ctime_ns = (int64_t)100000 * 1000000;
	gone = old;
	gone.path = strdup(".npmrc");
	b.taken_ms = 100000;
	b.v = calloc(1, sizeof(*b.v));
	b.v[b.n++] = gone;
	a.v = calloc(2, sizeof(*a.v));
	a.v[a.n++] = old;
	a.v[a.n++] = young;
	hostexec_compare(&b, &a, &r);	/* both complete */
	assert_int_equal(r.n, 3);
	assert_null(r.incomplete);
	hostexec_report_free(&r);
	b.incomplete = strdup("start note");
	a.incomplete = strdup("end note");
	hostexec_compare(&b, &a, &r);
	assert_int_equal(r.n, 1);
	assert_listed(&r, ".zshrc", HOSTEXEC_CREATED);
	assert_string_equal(r.incomplete,
	    "at the start: start note; at the end: end note");
	hostexec_report_free(&r);
	hostexec_snap_free(&a);
	hostexec_snap_free(&b);
}

/* The printed report escapes names and says where it stopped. */
static void
test_print(void **state)
{
	struct ws		*w = *state;
	struct hostexec_snap	 b;
	struct hostexec_report	 r;
	json_t			*j;
	char			*out = NULL;
	size_t			 len = 0;
	FILE			*f;

	snap(w, NULL, &b);
	put(w, ".github/workflows/\x1b]0;owned\x07.yml", "x");
	put(w, ".envrc", "x");
	diff(w, &b, &r);
	free(r.incomplete);
	r.incomplete = strdup("\"a\x1b[2J\" cannot be read");
	assert_non_null(j = hostexec_report_json(&r));
	assert_non_null(f = open_memstream(&out, &len));
	assert_int_equal(hostexec_print(f, "warren: ", j, 1), 1);
	fclose(f);
	assert_null(memchr(out, 0x1b, len));
	assert_null(memchr(out, 0x07, len));
	assert_non_null(strstr(out, "warren: this run created or changed "
	    "files that run code on the host"));
	assert_non_null(strstr(out, "  created .envrc  [direnv"));
	assert_non_null(strstr(out, "  ... and 1 more"));
	assert_non_null(strstr(out, "incomplete: \"a\\x1b[2J\" cannot"));
	free(out);
	json_decref(j);
	hostexec_report_free(&r);
	/* Nothing to say: nothing printed. */
	memset(&r, 0, sizeof(r));
	assert_non_null(j = hostexec_report_json(&r));
	out = NULL;
	assert_non_null(f = open_memstream(&out, &len));
	assert_int_equal(hostexec_print(f, "warren: ", j, 10), 0);
	fclose(f);
	assert_int_equal(len, 0);
	free(out);
	json_decref(j);
	hostexec_snap_free(&b);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_names_created, setup,
		    teardown),
		cmocka_unit_test_setup_teardown(test_changed_removed, setup,
		    teardown),
		cmocka_unit_test_setup_teardown(test_git, setup, teardown),
		cmocka_unit_test_setup_teardown(test_git_replaced, setup,
		    teardown),
		cmocka_unit_test_setup_teardown(test_symlinks, setup, teardown),
		cmocka_unit_test_setup_teardown(test_bounds, setup, teardown),
		cmocka_unit_test_setup_teardown(test_unreadable, setup,
		    teardown),
		cmocka_unit_test_setup_teardown(test_mount, setup, teardown),
		cmocka_unit_test_setup_teardown(test_encode, setup, teardown),
		cmocka_unit_test(test_incomplete_compare),
		cmocka_unit_test_setup_teardown(test_print, setup, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}

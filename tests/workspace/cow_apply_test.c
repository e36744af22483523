/*
 * The harness of the apply tests (test_cow_apply.c, test_cow_pack.c): a
 * workspace W laid out by shell commands, the view V an agent left (the
 * cow directory's upper/, a whole tree here, so every change's src is in
 * the cow directory), and the changes between them as cow_changes would
 * list them, with W's lstat() as the base.
 */
#include <sys/stat.h>

#include <ftw.h>
#include <limits.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "workspace/cow.h"
#include "workspace/hostexec.h"

#include "cow_apply_test.h"

void
sh(const char *fmt, ...)
{
	char	cmd[8192];
	va_list	ap;
	int	rc;

	va_start(ap, fmt);
	vsnprintf(cmd, sizeof(cmd), fmt, ap);
	va_end(ap);
	rc = system(cmd);
	if (rc != 0)
		fail_msg("command failed (%d): %s", rc, cmd);
}

/* Everything of a tree as text: type, mode, name, link target, and each
 * file's hash. */
char *
tree(const char *dir)
{
	char	 cmd[PATH_MAX + 512], *buf;
	size_t	 n = 0, cap = 1 << 20;
	FILE	*p;

	snprintf(cmd, sizeof(cmd), "cd '%s' && find . -mindepth 1 -printf "
	    "'%%y %%#m %%p -> %%l\\n' | LC_ALL=C sort && find . -type f "
	    "-exec sha256sum {} + | LC_ALL=C sort", dir);
	assert_non_null(p = popen(cmd, "r"));
	assert_non_null(buf = malloc(cap));
	n = fread(buf, 1, cap - 1, p);
	buf[n] = '\0';
	assert_int_equal(pclose(p), 0);
	return buf;
}

void
t_open(struct t *t)
{
	char	tmpl[] = "/tmp/test_cow_apply.XXXXXX";

	memset(t, 0, sizeof(*t));
	assert_non_null(mkdtemp(tmpl));
	snprintf(t->root, sizeof(t->root), "%s", tmpl);
	snprintf(t->ws, sizeof(t->ws), "%s/ws", t->root);
	snprintf(t->c.dir, sizeof(t->c.dir), "%.60s/cow", t->root);
	snprintf(t->view, sizeof(t->view), "%s/upper", t->c.dir);
	assert_int_equal(mkdir(t->ws, 0755), 0);
	assert_int_equal(mkdir(t->c.dir, 0700), 0);
	snprintf(t->c.workspace, sizeof(t->c.workspace), "%s", t->ws);
	t->c.mode = COW_COPY;
}

/* V starts as a copy of W. */
void
t_fork(struct t *t)
{
	sh("cp -a '%s' '%s'", t->ws, t->view);
}

void
t_close(struct t *t)
{
	size_t	i;

	for (i = 0; i < t->ch.n; i++) {
		free(t->ch.v[i].path);
		free(t->ch.v[i].src);
	}
	free(t->ch.v);
	sh("chmod -R u+rwX '%s' 2>/dev/null; rm -rf '%s'", t->root, t->root);
}

static char	**g_paths;
static size_t	  g_npaths;
static size_t	  g_prefix;

static int
t_collect(const char *fpath, const struct stat *sb, int flag, struct FTW *ftw)
{
	(void)sb;
	(void)flag;
	if (ftw->level == 0)
		return 0;
	assert_non_null(g_paths = realloc(g_paths, (g_npaths + 1) *
	    sizeof(*g_paths)));
	assert_non_null(g_paths[g_npaths++] = strdup(fpath + g_prefix + 1));
	return 0;
}

static int
t_pathcmp(const void *a, const void *b)
{
	return hostexec_pathcmp(*(char *const *)a, *(char *const *)b);
}

static int
t_same_file(const char *a, const char *b)
{
	char	cmd[5 * PATH_MAX];

	snprintf(cmd, sizeof(cmd), "cmp -s '%s' '%s'", a, b);
	return system(cmd) == 0;
}

static void
t_stat(struct cow_stat *cs, const struct stat *sb)
{
	cs->mode = sb->st_mode;
	cs->ino = sb->st_ino;
	cs->size = sb->st_size;
	cs->mtime_ns = (int64_t)sb->st_mtim.tv_sec * 1000000000 +
	    sb->st_mtim.tv_nsec;
	cs->ctime_ns = (int64_t)sb->st_ctim.tv_sec * 1000000000 +
	    sb->st_ctim.tv_nsec;
}

/* Did path change between W (sw) and V (sv)? */
static int
t_differs(const struct t *t, const char *path, const struct stat *sw,
    const struct stat *sv)
{
	char	 pw[2 * PATH_MAX], pv[2 * PATH_MAX], lw[PATH_MAX], lv[PATH_MAX];
	ssize_t	 nw, nv;

	if (sw->st_mode != sv->st_mode)
		return 1;
	snprintf(pw, sizeof(pw), "%s/%s", t->ws, path);
	snprintf(pv, sizeof(pv), "%s/%s", t->view, path);
	if (S_ISREG(sw->st_mode))
		return !t_same_file(pw, pv);
	if (S_ISLNK(sw->st_mode)) {
		nw = readlink(pw, lw, sizeof(lw));
		nv = readlink(pv, lv, sizeof(lv));
		return nw != nv || memcmp(lw, lv, (size_t)nw) != 0;
	}
	return 0;
}

static void
t_add(struct t *t, const char *path, enum cow_kind kind,
    const struct stat *sw, const struct stat *sv)
{
	struct cow_change	*c;

	assert_non_null(t->ch.v = realloc(t->ch.v, (t->ch.n + 1) *
	    sizeof(*t->ch.v)));
	c = &t->ch.v[t->ch.n++];
	memset(c, 0, sizeof(*c));
	assert_non_null(c->path = strdup(path));
	c->kind = kind;
	if (kind != COW_ADDED)
		t_stat(&c->base, sw);
	if (kind != COW_DELETED) {
		c->new_mode = sv->st_mode;
		assert_true(asprintf(&c->src, "%s/%s", t->view, path) > 0);
	}
	c->sensitive = hostexec_why(path);
}

/* The changes from W to V, W's entries as the base (what cow_changes
 * lists from the manifest and the layer). */
void
t_changes(struct t *t)
{
	struct stat	 sw, sv;
	char		 p[2 * PATH_MAX];
	size_t		 i;
	int		 inw, inv;

	g_prefix = strlen(t->ws);
	assert_int_equal(nftw(t->ws, t_collect, 16, FTW_PHYS), 0);
	g_prefix = strlen(t->view);
	assert_int_equal(nftw(t->view, t_collect, 16, FTW_PHYS), 0);
	qsort(g_paths, g_npaths, sizeof(*g_paths), t_pathcmp);
	for (i = 0; i < g_npaths; i++) {
		if (i > 0 && strcmp(g_paths[i], g_paths[i - 1]) == 0)
			continue;
		snprintf(p, sizeof(p), "%s/%s", t->ws, g_paths[i]);
		inw = lstat(p, &sw) == 0;
		snprintf(p, sizeof(p), "%s/%s", t->view, g_paths[i]);
		inv = lstat(p, &sv) == 0;
		if (inw && !inv)
			t_add(t, g_paths[i], COW_DELETED, &sw, NULL);
		else if (!inw && inv)
			t_add(t, g_paths[i], COW_ADDED, NULL, &sv);
		else if (t_differs(t, g_paths[i], &sw, &sv))
			t_add(t, g_paths[i], COW_MODIFIED, &sw, &sv);
	}
	for (i = 0; i < g_npaths; i++)
		free(g_paths[i]);
	free(g_paths);
	g_paths = NULL;
	g_npaths = 0;
}

/* cow_diff's output as a string (NUL bytes kept out of the way). */
char *
t_diff(struct t *t, unsigned flags, size_t *lenp)
{
	char	*buf = NULL, err[512];
	size_t	 len = 0;
	FILE	*f;

	assert_non_null(f = open_memstream(&buf, &len));
	if (cow_diff(&t->c, &t->ch, f, flags, err, sizeof(err)) != 0)
		fail_msg("cow_diff: %s", err);
	assert_int_equal(fclose(f), 0);
	if (lenp != NULL)
		*lenp = len;
	return buf;
}

/* cow_apply's return, its report in *report. */
int
t_apply(struct t *t, unsigned flags, char **report)
{
	return t_apply_set(&t->c, &t->ch, flags, report);
}

int
t_apply_set(const struct cow *c, const struct cow_changes *ch,
    unsigned flags, char **report)
{
	char	*buf = NULL, err[512];
	size_t	 len = 0;
	FILE	*f;
	int	 rc;

	assert_non_null(f = open_memstream(&buf, &len));
	err[0] = '\0';
	rc = cow_apply(c, ch, flags, f, err, sizeof(err));
	assert_int_equal(fclose(f), 0);
	if (rc == -1)
		print_message("cow_apply: %s\n", err);
	if (report != NULL)
		*report = buf;
	else
		free(buf);
	return rc;
}

void
t_no_journal(const struct t *t)
{
	char	p[PATH_MAX + 32];

	snprintf(p, sizeof(p), "%s/apply.journal", t->c.dir);
	assert_int_equal(access(p, F_OK), -1);
}

void
t_unchanged(const struct t *t, int rc, char *rep, const char *want,
    char *before)
{
	char	*after;

	if (rc != 1 || strstr(rep, want) == NULL || strstr(rep, "): the "
	    "workspace is unchanged\n") == NULL)
		fail_msg("apply: %d, want 1 and \"%s\":\n%s", rc, want, rep);
	after = tree(t->ws);
	assert_string_equal(after, before);
	t_no_journal(t);
	free(after);
	free(before);
	free(rep);
}

/* W with one of each kind of entry; V with one of each kind of change. */
void
t_layout_all(struct t *t)
{
	sh("cd '%s' && seq 1 20 | sed 's/^/line /' > mod.txt && echo bye > "
	    "gone.txt && echo moving > old-name.txt && ln -s mod.txt link && "
	    "echo 'echo hi' > script.sh && chmod 644 script.sh && "
	    "printf 'bin\\000ary\\001' > bin.dat && mkdir emptydir-gone d "
	    "keepdir && echo in-d > d/a.txt && echo was-a-file > tc && "
	    "printf 'no newline' > noeol && chmod 755 keepdir && mkdir d2",
	    t->ws);
	t_fork(t);
	sh("cd '%s' && sed -i -e 's/^line 3$/line three/' -e '/^line 15$/d' "
	    "mod.txt && echo 'line 21' >> mod.txt && rm gone.txt && "
	    "mv old-name.txt new-name.txt && ln -sfn new-target link && "
	    "chmod 755 script.sh && printf 'bin\\000ary\\002' > bin.dat && "
	    "mkdir new-empty && mkdir -p new-dir/sub && echo hello > "
	    "new-dir/sub/file.txt && rmdir emptydir-gone && rm -r d && "
	    "rm tc && ln -s mod.txt tc && printf 'no newline, changed' > "
	    "noeol && chmod 700 keepdir && ln -s ../elsewhere newlink && "
	    "mkdir ro && echo x > ro/f && chmod 555 ro && echo y > d2/f && "
	    "chmod 555 d2", t->view);
	t_changes(t);
}

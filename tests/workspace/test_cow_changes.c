/*
 * cow_changes() on real layers: an overlay mounted over a workspace in a
 * forked child (a mount namespace of its own; as an ordinary user in a
 * user namespace too, with userxattr), where an agent's file operations
 * run, and a copy (the same operations on tree/). One table says what
 * each operation must show: create, modify, delete, rename of a file
 * and of a directory, symbolic links, a mode change, a binary file, an
 * empty directory, a directory deleted and made again (opaque), a file
 * made a directory and back, names with newlines, paths that run code on
 * the host, a FIFO (unsupported); and what must not show: a file
 * rewritten with the same bytes, a mode changed and changed back.
 */
#include <sys/ioctl.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <sys/xattr.h>

#include <err.h>
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <sched.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include <linux/fiemap.h>
#include <linux/fs.h>

#include "tests/test_wait.h"
#include "tests/workspace/cow_test.h"
#include "workspace/cow.h"
#include "workspace/cow_int.h"
#include "workspace/hostexec.h"

struct exp {
	const char	*path;
	enum cow_kind	 kind;
	int		 sensitive;
};

/* What the agent's operations (agent_ops) must show, in any order. */
static const struct exp expected[] = {
	{ ".envrc", COW_ADDED, 1 },
	{ ".git/config", COW_MODIFIED, 1 },
	{ "bin.dat", COW_MODIFIED, 0 },
	{ "chmod.sh", COW_MODIFIED, 0 },
	{ "d2f", COW_MODIFIED, 0 },
	{ "d2f/q", COW_DELETED, 0 },
	{ "del.txt", COW_DELETED, 0 },
	{ "dir_a", COW_DELETED, 0 },
	{ "dir_a/f1", COW_DELETED, 0 },
	{ "dir_a/f2", COW_DELETED, 0 },
	{ "dir_a/sub", COW_DELETED, 0 },
	{ "dir_a/sub/g", COW_DELETED, 0 },
	{ "dir_b", COW_ADDED, 0 },
	{ "dir_b/f1", COW_ADDED, 0 },
	{ "dir_b/f2", COW_ADDED, 0 },
	{ "dir_b/sub", COW_ADDED, 0 },
	{ "dir_b/sub/g", COW_ADDED, 0 },
	{ "emptydir", COW_ADDED, 0 },
	{ "f2d", COW_MODIFIED, 0 },
	{ "f2d/in", COW_ADDED, 0 },
	{ "fifo", COW_UNSUPPORTED, 0 },
	{ "gone", COW_DELETED, 0 },
	{ "gone/x", COW_DELETED, 0 },
	{ "gone/y", COW_DELETED, 0 },
	{ "gone/y/z", COW_DELETED, 0 },
	{ "link_old", COW_MODIFIED, 0 },
	{ "mod.txt", COW_MODIFIED, 0 },
	{ "nd", COW_ADDED, 0 },
	{ "nd/x", COW_ADDED, 0 },
	{ "new\nline", COW_ADDED, 0 },
	{ "new.txt", COW_ADDED, 0 },
	{ "newlink", COW_ADDED, 0 },
	{ "nl\nname", COW_MODIFIED, 0 },
	{ "opq/b", COW_DELETED, 0 },
	{ "opq/c", COW_DELETED, 0 },
	{ "opq/c/d", COW_DELETED, 0 },
	{ "opq/new", COW_ADDED, 0 },
	{ "ren_from.txt", COW_DELETED, 0 },
	{ "ren_to.txt", COW_ADDED, 0 },
};
#define NEXPECTED	(sizeof(expected) / sizeof(expected[0]))

struct fx {
	struct cow_tdir	t;
	struct cow	c;
	char		merged[PATH_MAX];
};

static int
setup(void **state)
{
	struct fx	*fx = calloc(1, sizeof(*fx));

	umask(022);
	cow_tdir_make(&fx->t);
	snprintf(fx->merged, sizeof(fx->merged), "%s/merged", fx->t.root);
	if (mkdir(fx->merged, 0755) == -1)
		err(1, "mkdir %s", fx->merged);
	*state = fx;
	return 0;
}

static int
teardown(void **state)
{
	struct fx	*fx = *state;

	cow_tdir_remove(&fx->t);
	free(fx);
	return 0;
}

/* The workspace when the run starts. */
static void
ws_base(const char *ws)
{
	char	bin[4096];
	size_t	i;

	for (i = 0; i < sizeof(bin); i++)
		bin[i] = (char)(i * 7);
	tput(ws, "keep.txt", "keep\n", 5, 0644);
	tput(ws, "mod.txt", "old\n", 4, 0644);
	tput(ws, "del.txt", "del\n", 4, 0644);
	tput(ws, "ren_from.txt", "ren\n", 4, 0644);
	tmkdir(ws, "dir_a", 0755);
	tput(ws, "dir_a/f1", "1", 1, 0644);
	tput(ws, "dir_a/f2", "2", 1, 0644);
	tmkdir(ws, "dir_a/sub", 0755);
	tput(ws, "dir_a/sub/g", "g", 1, 0644);
	tput(ws, "chmod.sh", "#!/bin/sh\n", 10, 0644);
	tput(ws, "touch_only.txt", "same\n", 5, 0644);
	tput(ws, "chmod_back.txt", "cb\n", 3, 0644);
	tput(ws, "bin.dat", bin, sizeof(bin), 0644);
	tlink(ws, "link_old", "keep.txt");
	tmkdir(ws, "opq", 0755);
	tput(ws, "opq/a", "A", 1, 0644);
	tput(ws, "opq/b", "B", 1, 0644);
	tmkdir(ws, "opq/c", 0755);
	tput(ws, "opq/c/d", "D", 1, 0644);
	tmkdir(ws, "gone", 0755);
	tput(ws, "gone/x", "X", 1, 0644);
	tmkdir(ws, "gone/y", 0755);
	tput(ws, "gone/y/z", "Z", 1, 0644);
	tput(ws, "f2d", "file", 4, 0644);
	tmkdir(ws, "d2f", 0755);
	tput(ws, "d2f/q", "Q", 1, 0644);
	tput(ws, "nl\nname", "nl", 2, 0644);
	tmkdir(ws, ".git", 0755);
	tput(ws, ".git/config", "[core]\n", 7, 0644);
	tmkdir(ws, "emptybase", 0755);
}

static int
rm_one(const char *p, const struct stat *sb, int flag, struct FTW *ftw)
{
	(void)sb;
	(void)flag;
	(void)ftw;
	return remove(p);
}

static void
op_rmrf(const char *root, const char *rel)
{
	char	p[PATH_MAX];

	snprintf(p, sizeof(p), "%s/%s", root, rel);
	if (nftw(p, rm_one, 16, FTW_DEPTH | FTW_PHYS) == -1)
		err(1, "rm -rf %s", p);
}

static void
op(int rv, const char *what)
{
	if (rv == -1)
		err(1, "%s", what);
}

/* What mv does when rename(2) says EXDEV (overlayfs without redirect_dir
 * renaming a directory of the lower layer): copy, then remove. */
static void
op_mvdir(const char *root)
{
	char	a[PATH_MAX], b[PATH_MAX];

	snprintf(a, sizeof(a), "%s/dir_a", root);
	snprintf(b, sizeof(b), "%s/dir_b", root);
	if (rename(a, b) == 0)
		return;
	if (errno != EXDEV)
		err(1, "rename %s", a);
	tmkdir(root, "dir_b", 0755);
	tput(root, "dir_b/f1", "1", 1, 0644);
	tput(root, "dir_b/f2", "2", 1, 0644);
	tmkdir(root, "dir_b/sub", 0755);
	tput(root, "dir_b/sub/g", "g", 1, 0644);
	op_rmrf(root, "dir_a");
}

static void
op_bin(const char *root)
{
	char	p[PATH_MAX], c;
	int	fd;

	snprintf(p, sizeof(p), "%s/bin.dat", root);
	if ((fd = open(p, O_RDWR)) == -1 || pread(fd, &c, 1, 2000) != 1)
		err(1, "%s", p);
	c ^= (char)0xff;
	if (pwrite(fd, &c, 1, 2000) != 1 || close(fd) == -1)
		err(1, "%s", p);
}

/* An agent's work, in root (the merged overlay, or tree/). */
static void
agent_ops(const char *root)
{
	char	p[PATH_MAX];

	if (chdir(root) == -1)
		err(1, "chdir %s", root);
	tput(root, "mod.txt", "new\n", 4, 0644);
	op(unlink("del.txt"), "unlink del.txt");
	op(rename("ren_from.txt", "ren_to.txt"), "rename ren_from.txt");
	op_mvdir(root);
	op(chmod("chmod.sh", 0755), "chmod chmod.sh");
	tput(root, "touch_only.txt", "same\n", 5, 0644);
	op(chmod("chmod_back.txt", 0600), "chmod chmod_back.txt");
	op(chmod("chmod_back.txt", 0644), "chmod chmod_back.txt");
	op_bin(root);
	op(unlink("link_old"), "unlink link_old");
	tlink(root, "link_old", "mod.txt");
	tlink(root, "newlink", "../outside");
	tmkdir(root, "emptydir", 0755);
	tput(root, "new.txt", "new file\n", 9, 0644);
	tmkdir(root, "nd", 0755);
	tput(root, "nd/x", "x", 1, 0644);
	op_rmrf(root, "opq");
	tmkdir(root, "opq", 0755);
	tput(root, "opq/a", "A", 1, 0644);
	tput(root, "opq/new", "N", 1, 0644);
	op_rmrf(root, "gone");
	op(unlink("f2d"), "unlink f2d");
	tmkdir(root, "f2d", 0755);
	tput(root, "f2d/in", "in", 2, 0644);
	op_rmrf(root, "d2f");
	tput(root, "d2f", "now a file", 10, 0644);
	tput(root, "nl\nname", "changed", 7, 0644);
	tput(root, "new\nline", "x", 1, 0644);
	tput(root, ".envrc", "use nix\n", 8, 0644);
	tput(root, ".git/config", "[core]\n\tfsmonitor = evil\n", 25, 0644);
	snprintf(p, sizeof(p), "%s/fifo", root);
	op(mkfifo(p, 0644), "mkfifo");
	if (chdir("/") == -1)
		err(1, "chdir /");
}

static void
write_file(const char *path, const char *s)
{
	int	fd;

	if ((fd = open(path, O_WRONLY | O_CLOEXEC)) == -1 ||
	    write(fd, s, strlen(s)) != (ssize_t)strlen(s) || close(fd) == -1)
		err(1, "write %s", path);
}

/* In the child: a mount namespace of our own (and a user namespace,
 * mapping our ids to themselves, when not root). */
static void
child_ns(void)
{
	uid_t	uid = geteuid();
	gid_t	gid = getegid();
	char	map[64];

	if (uid == 0) {
		if (unshare(CLONE_NEWNS) == -1)
			err(1, "unshare(CLONE_NEWNS)");
	} else {
		if (unshare(CLONE_NEWUSER | CLONE_NEWNS) == -1)
			err(1, "unshare(CLONE_NEWUSER|CLONE_NEWNS)");
		write_file("/proc/self/setgroups", "deny");
		snprintf(map, sizeof(map), "%u %u 1\n", uid, uid);
		write_file("/proc/self/uid_map", map);
		snprintf(map, sizeof(map), "%u %u 1\n", gid, gid);
		write_file("/proc/self/gid_map", map);
	}
	if (mount("none", "/", NULL, MS_REC | MS_PRIVATE, NULL) == -1)
		err(1, "make / private");
}

/* Mount the run's overlay (with extra options, unless opts is NULL) on
 * fx->merged in a child and run fn there; the child's exit status. */
static int
in_child(struct fx *fx, const char *extra, void (*fn)(struct fx *))
{
	char	opts[PATH_MAX * 4];
	pid_t	pid;
	int	status;

	snprintf(opts, sizeof(opts), "lowerdir=%s,upperdir=%s/%s,workdir=%s/%s"
	    "%s%s", fx->t.ws, fx->c.dir, COW_UPPER, fx->c.dir, COW_WORK,
	    geteuid() == 0 ? "" : ",userxattr", extra ? extra : "");
	fflush(NULL);
	if ((pid = fork()) == -1)
		err(1, "fork");
	if (pid == 0) {
		child_ns();
		if (extra != NULL && mount("overlay", fx->merged, "overlay", 0,
		    opts) == -1)
			err(1, "mount overlay %s", opts);
		fn(fx);
		fflush(NULL);
		_exit(0);
	}
	if ((status = test_waitpid(pid, 120, "the test's child in its mount "
	    "namespace")) == -1)
		errx(1, "no end of the child in its mount namespace");
	return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

static int
in_overlay(struct fx *fx, const char *extra, void (*fn)(struct fx *))
{
	return in_child(fx, extra, fn);
}

static void
run_agent(struct fx *fx)
{
	agent_ops(fx->merged);
}

static int
expcmp(const void *a, const void *b)
{
	return hostexec_pathcmp(((const struct exp *)a)->path,
	    ((const struct exp *)b)->path);
}

static void
check_one(const struct cow_change *ch, const struct exp *e)
{
	struct stat	sb;

	assert_string_equal(ch->path, e->path);
	if (ch->kind != e->kind)
		fail_msg("%s: kind %d, expected %d", e->path, ch->kind, e->kind);
	assert_int_equal(ch->sensitive != NULL, e->sensitive);
	if (ch->kind == COW_DELETED) {
		assert_null(ch->src);
		assert_int_not_equal(ch->base.mode, 0);
		return;
	}
	assert_non_null(ch->src);
	if (lstat(ch->src, &sb) == -1)
		fail_msg("%s: %s", ch->src, strerror(errno));
	assert_int_equal(sb.st_mode, ch->new_mode);
	if (ch->kind == COW_MODIFIED)
		assert_int_not_equal(ch->base.mode, 0);
}

/* out lists exactly the expected changes, sorted. */
static void
check_changes(const struct cow_changes *out)
{
	struct exp	want[NEXPECTED];
	size_t		i;

	memcpy(want, expected, sizeof(want));
	qsort(want, NEXPECTED, sizeof(want[0]), expcmp);
	for (i = 0; i < out->n && i < NEXPECTED; i++) {
		if (strcmp(out->v[i].path, want[i].path) != 0)
			fail_msg("change %zu is \"%s\" (kind %d), expected "
			    "\"%s\"", i, out->v[i].path, out->v[i].kind,
			    want[i].path);
		check_one(&out->v[i], &want[i]);
	}
	if (out->n != NEXPECTED)
		fail_msg("%zu changes, expected %zu (next: \"%s\")", out->n,
		    NEXPECTED, out->n > NEXPECTED ? out->v[NEXPECTED].path :
		    want[out->n].path);
}

/* The changed bytes are where src says, and base holds the old mode. */
static void
check_content(const struct cow_changes *out)
{
	char	buf[64];
	ssize_t	n;
	size_t	i;
	int	fd;

	for (i = 0; i < out->n; i++) {
		if (strcmp(out->v[i].path, "mod.txt") == 0) {
			assert_true((fd = open(out->v[i].src, O_RDONLY)) != -1);
			n = read(fd, buf, sizeof(buf));
			close(fd);
			assert_int_equal(n, 4);
			assert_memory_equal(buf, "new\n", 4);
		}
		if (strcmp(out->v[i].path, "chmod.sh") == 0) {
			assert_int_equal(out->v[i].base.mode & 07777, 0644);
			assert_int_equal(out->v[i].new_mode & 07777, 0755);
		}
		if (strcmp(out->v[i].path, "d2f") == 0) {
			assert_true(S_ISDIR(out->v[i].base.mode));
			assert_true(S_ISREG(out->v[i].new_mode));
		}
	}
}

static void
changes_of(struct fx *fx, struct cow_changes *out)
{
	char	err[1024];

	if (cow_changes(&fx->c, out, err, sizeof(err)) == -1)
		fail_msg("cow_changes: %s", err);
}

static void
test_overlay_changes(void **state)
{
	struct fx		*fx = *state;
	struct cow_changes	 out;
	char			 err[1024];

	ws_base(fx->t.ws);
	if (cow_create(&fx->c, COW_OVERLAY, fx->t.ws, fx->t.state, err,
	    sizeof(err)) == -1)
		fail_msg("cow_create: %s", err);
	assert_int_equal(in_overlay(fx, "", run_agent), 0);
	changes_of(fx, &out);
	check_changes(&out);
	check_content(&out);
	cow_changes_free(&out);
	/* The workspace itself was never written. */
	assert_true(texists(fx->t.ws, "del.txt"));
	assert_false(texists(fx->t.ws, "new.txt"));
	assert_int_equal(cow_remove(&fx->c, err, sizeof(err)), 0);
}

static void
test_copy_changes(void **state)
{
	struct fx		*fx = *state;
	struct cow_changes	 out;
	char			 err[1024], tree[PATH_MAX + 16];

	ws_base(fx->t.ws);
	if (cow_create(&fx->c, COW_COPY, fx->t.ws, fx->t.state, err,
	    sizeof(err)) == -1)
		fail_msg("cow_create: %s", err);
	changes_of(fx, &out);
	assert_int_equal(out.n, 0);	/* a fresh copy changes nothing */
	cow_changes_free(&out);
	snprintf(tree, sizeof(tree), "%s/%s", fx->c.dir, COW_TREE);
	agent_ops(tree);
	changes_of(fx, &out);
	check_changes(&out);
	check_content(&out);
	cow_changes_free(&out);
	assert_int_equal(cow_remove(&fx->c, err, sizeof(err)), 0);
}

/* A mount with nothing written, and one where the agent only rewrote a
 * file with its bytes and changed a mode back: no change. */
static void
run_noop(struct fx *fx)
{
	tput(fx->merged, "touch_only.txt", "same\n", 5, 0644);
	op(chmod(fx->merged, 0755), "chmod");
	tput(fx->merged, "opq/a", "A", 1, 0600);
	tput(fx->merged, "opq/a", "A", 1, 0644);
}

static void
test_overlay_noop(void **state)
{
	struct fx		*fx = *state;
	struct cow_changes	 out;
	char			 err[1024], p[PATH_MAX + 32];
	struct stat		 sb;

	ws_base(fx->t.ws);
	if (cow_create(&fx->c, COW_OVERLAY, fx->t.ws, fx->t.state, err,
	    sizeof(err)) == -1)
		fail_msg("cow_create: %s", err);
	assert_int_equal(in_overlay(fx, "", run_noop), 0);
	/* It was copied up ... */
	snprintf(p, sizeof(p), "%s/%s/opq/a", fx->c.dir, COW_UPPER);
	assert_int_equal(lstat(p, &sb), 0);
	/* ... and is no change. */
	changes_of(fx, &out);
	assert_int_equal(out.n, 0);
	cow_changes_free(&out);
	assert_int_equal(cow_remove(&fx->c, err, sizeof(err)), 0);
}

/* An agent sets user.overlay.opaque on a directory of a root's overlay,
 * where it is a plain xattr: nothing under it is deleted. */
static void
run_forge(struct fx *fx)
{
	char	p[PATH_MAX + 32];

	tput(fx->merged, "opq/new", "N", 1, 0644);
	snprintf(p, sizeof(p), "%s/opq", fx->merged);
	op(setxattr(p, "user.overlay.opaque", "y", 1, 0), "setxattr");
}

static void
test_overlay_forged_opaque(void **state)
{
	struct fx		*fx = *state;
	struct cow_changes	 out;
	char			 err[1024], p[PATH_MAX + 32], v[4];

	if (geteuid() != 0)
		skip();		/* user.* is the overlay's own namespace */
	ws_base(fx->t.ws);
	if (cow_create(&fx->c, COW_OVERLAY, fx->t.ws, fx->t.state, err,
	    sizeof(err)) == -1)
		fail_msg("cow_create: %s", err);
	assert_int_equal(in_overlay(fx, "", run_forge), 0);
	snprintf(p, sizeof(p), "%s/%s/opq", fx->c.dir, COW_UPPER);
	assert_int_equal(lgetxattr(p, "user.overlay.opaque", v, sizeof(v)), 1);
	changes_of(fx, &out);
	assert_int_equal(out.n, 1);
	assert_string_equal(out.v[0].path, "opq/new");
	assert_int_equal(out.v[0].kind, COW_ADDED);
	cow_changes_free(&out);
	assert_int_equal(cow_remove(&fx->c, err, sizeof(err)), 0);
}

static void
run_redirect(struct fx *fx)
{
	char	a[PATH_MAX + 32], b[PATH_MAX + 32];

	snprintf(a, sizeof(a), "%s/dir_a", fx->merged);
	snprintf(b, sizeof(b), "%s/dir_b", fx->merged);
	op(rename(a, b), "rename with redirect_dir=on");
	snprintf(a, sizeof(a), "%s/keep.txt", fx->merged);
	op(chmod(a, 0600), "chmod with metacopy=on");
}

/* A redirect (a renamed directory) and a metacopy file keep their data in
 * the lower layer: not carried, so each is an unsupported change. */
static void
test_overlay_redirect_metacopy(void **state)
{
	struct fx		*fx = *state;
	struct cow_changes	 out;
	char			 err[1024];
	size_t			 i, nunsup = 0;

	if (geteuid() != 0)
		skip();		/* userxattr refuses redirect_dir, metacopy */
	ws_base(fx->t.ws);
	if (cow_create(&fx->c, COW_OVERLAY, fx->t.ws, fx->t.state, err,
	    sizeof(err)) == -1)
		fail_msg("cow_create: %s", err);
	assert_int_equal(in_overlay(fx, ",redirect_dir=on,metacopy=on",
	    run_redirect), 0);
	changes_of(fx, &out);
	for (i = 0; i < out.n; i++) {
		if (strcmp(out.v[i].path, "dir_b") == 0 ||
		    strcmp(out.v[i].path, "keep.txt") == 0) {
			assert_int_equal(out.v[i].kind, COW_UNSUPPORTED);
			nunsup++;
		}
	}
	assert_int_equal(nunsup, 2);
	cow_changes_free(&out);
	assert_int_equal(cow_remove(&fx->c, err, sizeof(err)), 0);
}

static void
run_shut(struct fx *fx)
{
	char	p[PATH_MAX + 16];

	tmkdir(fx->merged, "shut", 0755);
	tput(fx->merged, "shut/f", "x", 1, 0644);
	tput(fx->merged, "opq/a", "changed", 7, 0644);
	snprintf(p, sizeof(p), "%s/opq", fx->merged);
	op(chmod(p, 0), "chmod 0 opq");
	snprintf(p, sizeof(p), "%s/shut", fx->merged);
	op(chmod(p, 0), "chmod 0 shut");
	snprintf(p, sizeof(p), "%s/zero", fx->merged);
	op(chmod(p, 0644), "chmod zero");
	tput(fx->merged, "zero", "new", 3, 0);
}

/* An agent makes directories of the layer 000: root reads them, anyone
 * else gets each as an unsupported change, not an error. A file of mode
 * 000 before and after that we cannot compare is a change. */
static void
test_overlay_unreadable(void **state)
{
	struct fx		*fx = *state;
	struct cow_changes	 out;
	char			 err[1024];

	ws_base(fx->t.ws);
	tput(fx->t.ws, "zero", "old", 3, 0);
	if (cow_create(&fx->c, COW_OVERLAY, fx->t.ws, fx->t.state, err,
	    sizeof(err)) == -1)
		fail_msg("cow_create: %s", err);
	assert_int_equal(in_overlay(fx, "", run_shut), 0);
	changes_of(fx, &out);
	assert_true(out.n > 0);
	assert_string_equal(out.v[out.n - 1].path, "zero");
	assert_int_equal(out.v[out.n - 1].kind, COW_MODIFIED);
	out.n--;
	if (geteuid() == 0) {
		assert_int_equal(out.n, 4);
		assert_string_equal(out.v[0].path, "opq");
		assert_int_equal(out.v[0].kind, COW_MODIFIED);
		assert_string_equal(out.v[1].path, "opq/a");
		assert_int_equal(out.v[1].kind, COW_MODIFIED);
		assert_string_equal(out.v[2].path, "shut");
		assert_int_equal(out.v[2].kind, COW_ADDED);
		assert_string_equal(out.v[3].path, "shut/f");
	} else {
		assert_int_equal(out.n, 2);
		assert_string_equal(out.v[0].path, "opq");
		assert_int_equal(out.v[0].kind, COW_UNSUPPORTED);
		assert_int_equal(out.v[0].base.mode & 07777, 0755);
		assert_string_equal(out.v[1].path, "shut");
		assert_int_equal(out.v[1].kind, COW_UNSUPPORTED);
		assert_int_equal(out.v[1].new_mode & 07777, 0);
	}
	out.n++;
	cow_changes_free(&out);
	assert_int_equal(cow_remove(&fx->c, err, sizeof(err)), 0);
}

/* Agents make, remove and remake files while the user runs diff. */
static void
test_copy_changes_live(void **state)
{
	struct fx		*fx = *state;
	struct cow_changes	 out;
	struct timespec		 t0, t;
	char			 err[1024], tree[PATH_MAX + 16];
	char			 name[PATH_MAX + 48];
	pid_t			 pid;
	int			 i, status, fails = 0;

	for (i = 0; i < 16; i++) {
		snprintf(name, sizeof(name), "f%d", i);
		tput(fx->t.ws, name, "base", 4, 0644);
	}
	if (cow_create(&fx->c, COW_COPY, fx->t.ws, fx->t.state, err,
	    sizeof(err)) == -1)
		fail_msg("cow_create: %s", err);
	snprintf(tree, sizeof(tree), "%s/%s", fx->c.dir, COW_TREE);
	fflush(NULL);
	if ((pid = fork()) == 0) {
		for (i = 0;; i++) {
			snprintf(name, sizeof(name), "%s/f%d", tree, i % 16);
			(void)unlink(name);
			tput(tree, name + strlen(tree) + 1, "base", 4, 0644);
			snprintf(name, sizeof(name), "%s/n%d", tree, i % 16);
			(void)unlink(name);
			tput(tree, name + strlen(tree) + 1, "x", 1, 0644);
		}
	}
	assert_true(pid > 0);
	assert_int_equal(clock_gettime(CLOCK_MONOTONIC, &t0), 0);
	do {
		if (cow_changes(&fx->c, &out, err, sizeof(err)) == -1 &&
		    fails++ == 0)
			print_error("cow_changes: %s\n", err);
		cow_changes_free(&out);
		assert_int_equal(clock_gettime(CLOCK_MONOTONIC, &t), 0);
	} while (t.tv_sec - t0.tv_sec < 2);
	kill(pid, SIGKILL);
	/* After SIGKILL: it ends. */
	assert_int_equal(waitpid(pid, &status, 0), pid);
	assert_int_equal(fails, 0);
	assert_int_equal(cow_remove(&fx->c, err, sizeof(err)), 0);
}

/* In the child: what a filesystem mounted in the workspace becomes. */
static void
run_mounted(struct fx *fx)
{
	struct cow_base	 b;
	struct cow	 c;
	char		 why[1024], mnt[PATH_MAX + 8], tree[PATH_MAX + 16];
	enum cow_mode	 m;
	int		 dfd;

	snprintf(mnt, sizeof(mnt), "%s/mnt", fx->t.ws);
	if (mount("tmpfs", mnt, "tmpfs", 0, "size=1m") == -1)
		err(1, "mount tmpfs on %s", mnt);
	tput(mnt, "on-the-mount", "x", 1, 0644);
	for (m = COW_OVERLAY; m <= COW_COPY; m++) {
		if (cow_create(&c, m, fx->t.ws, fx->t.state, why,
		    sizeof(why)) == -1)
			errx(1, "cow_create %s: %s", cow_mode_name(m), why);
		if ((dfd = open(c.dir, O_RDONLY | O_DIRECTORY)) == -1 ||
		    cow_manifest_read(dfd, COW_BASE, &b, why, sizeof(why)) == -1)
			errx(1, "base of %s: %s", c.dir, why);
		if (cow_base_find(&b, "mnt") < 0 || cow_base_find(&b,
		    "mnt/on-the-mount") >= 0 || b.n != 2)
			errx(1, "%s: the base has %zu entries, mnt %zd, "
			    "mnt/on-the-mount %zd", cow_mode_name(m), b.n,
			    cow_base_find(&b, "mnt"),
			    cow_base_find(&b, "mnt/on-the-mount"));
		cow_base_free(&b);
		close(dfd);
		snprintf(tree, sizeof(tree), "%s/tree/mnt", c.dir);
		if (m == COW_COPY && (!texists(tree, "") || tcount(tree) != 0))
			errx(1, "the copy's mnt is not an empty directory");
		if (cow_remove(&c, why, sizeof(why)) == -1)
			errx(1, "cow_remove: %s", why);
	}
}

/* A filesystem mounted in the workspace is seen, not entered: the base
 * has its mount point, not what is on it, and the copy an empty dir. */
static void
test_mount_point_not_entered(void **state)
{
	struct fx	*fx = *state;

	tmkdir(fx->t.ws, "mnt", 0755);
	tput(fx->t.ws, "f", "f", 1, 0644);
	assert_int_equal(in_child(fx, NULL, run_mounted), 0);
	assert_int_equal(tcount(fx->t.state), 1);	/* cow/, empty */
}

/* 1 if the extents of the file at path are shared (a reflink). */
static int
extents_shared(const char *path)
{
	struct {
		struct fiemap		fm;
		struct fiemap_extent	fe[1];
	}	m;
	int	fd;

	memset(&m, 0, sizeof(m));
	m.fm.fm_length = FIEMAP_MAX_OFFSET;
	m.fm.fm_flags = FIEMAP_FLAG_SYNC;
	m.fm.fm_extent_count = 1;
	if ((fd = open(path, O_RDONLY)) == -1 ||
	    ioctl(fd, FS_IOC_FIEMAP, &m.fm) == -1)
		err(1, "FIEMAP %s", path);
	close(fd);
	return m.fm.fm_mapped_extents == 1 &&
	    (m.fe[0].fe_flags & FIEMAP_EXTENT_SHARED) != 0;
}

/* In the child: a btrfs, a workspace and a state dir on it, a copy. */
static void
run_reflink(struct fx *fx)
{
	char		 cmd[PATH_MAX * 3], mnt[PATH_MAX + 8], ws[PATH_MAX + 16];
	char		 why[1024], p[PATH_MAX * 2], *mb;
	struct cow	 c;
	size_t		 i;

	snprintf(mnt, sizeof(mnt), "%s/btrfs", fx->t.root);
	snprintf(cmd, sizeof(cmd), "truncate -s 256M %s/img && mkfs.btrfs -q "
	    "%s/img >/dev/null && mkdir %s && mount -o loop %s/img %s", fx->t.root,
	    fx->t.root, mnt, fx->t.root, mnt);
	if (system(cmd) != 0)
		errx(1, "%s: failed", cmd);
	tmkdir(mnt, "ws", 0755);
	tmkdir(mnt, "state", 0700);
	snprintf(ws, sizeof(ws), "%s/ws", mnt);
	mb = malloc(1 << 20);
	for (i = 0; i < 1 << 20; i++)
		mb[i] = (char)(i * 13 + 5);
	tput(ws, "big", mb, 1 << 20, 0640);
	free(mb);
	snprintf(p, sizeof(p), "%s/state", mnt);
	if (cow_create(&c, COW_COPY, ws, p, why, sizeof(why)) == -1)
		errx(1, "cow_create: %s", why);
	snprintf(p, sizeof(p), "%s/tree/big", c.dir);
	if (!extents_shared(p))
		errx(1, "%s: not a reflink", p);
	if (cow_remove(&c, why, sizeof(why)) == -1)
		errx(1, "cow_remove: %s", why);
}

/* Where the filesystem can, the copy shares the workspace's extents. */
static void
test_copy_reflink(void **state)
{
	struct fx	*fx = *state;

	if (geteuid() != 0 || system("command -v mkfs.btrfs >/dev/null") != 0)
		skip();		/* a loop device, and btrfs-progs */
	assert_int_equal(in_child(fx, NULL, run_reflink), 0);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_overlay_changes, setup,
		    teardown),
		cmocka_unit_test_setup_teardown(test_copy_changes, setup,
		    teardown),
		cmocka_unit_test_setup_teardown(test_overlay_noop, setup,
		    teardown),
		cmocka_unit_test_setup_teardown(test_overlay_forged_opaque,
		    setup, teardown),
		cmocka_unit_test_setup_teardown(test_overlay_redirect_metacopy,
		    setup, teardown),
		cmocka_unit_test_setup_teardown(test_copy_changes_live,
		    setup, teardown),
		cmocka_unit_test_setup_teardown(test_overlay_unreadable,
		    setup, teardown),
		cmocka_unit_test_setup_teardown(test_mount_point_not_entered,
		    setup, teardown),
		cmocka_unit_test_setup_teardown(test_copy_reflink, setup,
		    teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}

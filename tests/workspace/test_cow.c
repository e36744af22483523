/*
 * The cow directory (workspace/cow.c, cow_copy.c, cow_remove.c,
 * cow_manifest.c): made and removed with nothing left behind, also when
 * making it fails; checked when opened; removed without following what
 * an agent planted (links, 000 directories, nesting past any fd limit),
 * with the temporary files a killed apply left; its disk use; the base
 * manifest with any name, and its reader against corrupt files.
 */
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/wait.h>

#include <err.h>
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <limits.h>
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

#include "common/xdg.h"
#include "tests/test_wait.h"
#include "tests/workspace/cow_test.h"
#include "workspace/cow.h"
#include "workspace/cow_int.h"
#include "workspace/hostexec.h"

struct fx {
	struct cow_tdir	t;
	char		cowdir[PATH_MAX + 8];	/* state/cow */
};

static int
setup(void **state)
{
	struct fx	*fx = calloc(1, sizeof(*fx));

	umask(022);
	cow_tdir_make(&fx->t);
	snprintf(fx->cowdir, sizeof(fx->cowdir), "%s/cow", fx->t.state);
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

static void
mk(struct fx *fx, struct cow *c, enum cow_mode mode)
{
	char	err[1024];

	if (cow_create(c, mode, fx->t.ws, fx->t.state, err, sizeof(err)) == -1)
		fail_msg("cow_create %s: %s", cow_mode_name(mode), err);
}

static void
rm(struct cow *c)
{
	char	err[1024];

	if (cow_remove(c, err, sizeof(err)) == -1)
		fail_msg("cow_remove: %s", err);
}

static void
test_mode_names(void **state)
{
	enum cow_mode	m;

	(void)state;
	assert_int_equal(cow_mode_parse("overlay", &m), 0);
	assert_int_equal(m, COW_OVERLAY);
	assert_int_equal(cow_mode_parse("copy", &m), 0);
	assert_int_equal(m, COW_COPY);
	assert_int_equal(cow_mode_parse("none", &m), 0);
	assert_int_equal(m, COW_NONE);
	assert_int_equal(cow_mode_parse("Overlay", &m), -1);
	assert_string_equal(cow_mode_name(COW_OVERLAY), "overlay");
	assert_string_equal(cow_mode_name(COW_COPY), "copy");
	assert_string_equal(cow_mode_name(COW_NONE), "none");
}

/* '/' sorts before every other byte, and no two names compare equal. */
static void
test_pathcmp(void **state)
{
	(void)state;
	assert_int_not_equal(hostexec_pathcmp("a/b", "a\001b"), 0);
	assert_true(hostexec_pathcmp("a/z", "a\001") < 0);
	assert_true(hostexec_pathcmp("a", "a/b") < 0);
	assert_true(hostexec_pathcmp("a/b", "a\nb") < 0);
	assert_true(hostexec_pathcmp("a\001", "a\002") < 0);
	assert_true(hostexec_pathcmp("a.b", "a/b") > 0);
}

static void
test_create_remove_overlay(void **state)
{
	struct fx	*fx = *state;
	struct cow	 c, o;
	struct stat	 sb;
	char		 err[1024];

	tput(fx->t.ws, "f", "x", 1, 0644);
	mk(fx, &c, COW_OVERLAY);
	assert_true(strncmp(c.dir, fx->cowdir, strlen(fx->cowdir)) == 0);
	assert_string_equal(c.workspace, fx->t.ws);
	assert_int_equal(lstat(c.dir, &sb), 0);
	assert_int_equal(sb.st_mode & 07777, 0700);
	assert_true(texists(c.dir, "base"));
	assert_true(texists(c.dir, "upper"));
	assert_true(texists(c.dir, "work"));
	assert_false(texists(c.dir, "tree"));
	assert_int_equal(cow_open(&o, COW_OVERLAY, c.dir, fx->t.ws, err,
	    sizeof(err)), 0);
	assert_int_equal(o.mode, COW_OVERLAY);
	assert_int_equal(cow_open(&o, COW_COPY, c.dir, fx->t.ws, err,
	    sizeof(err)), -1);
	rm(&c);
	assert_int_equal(tcount(fx->cowdir), 0);
	rm(&c);		/* gone already: not an error */
}

/* The copy keeps modes, mtimes and links, leaves FIFOs out, and its base
 * still lists them. */
static void
test_create_remove_copy(void **state)
{
	struct fx		*fx = *state;
	struct cow		 c;
	struct cow_base		 b;
	struct timespec		 ts[2] = { { 1000000, 5 }, { 2000000, 7 } };
	struct stat		 sb;
	char			 err[1024], p[PATH_MAX * 2], tgt[64];
	int			 dfd;

	tmkdir(fx->t.ws, "d", 0711);
	tput(fx->t.ws, "d/f", "data", 4, 0751);
	snprintf(p, sizeof(p), "%s/d/f", fx->t.ws);
	assert_int_equal(utimensat(AT_FDCWD, p, ts, 0), 0);
	tlink(fx->t.ws, "l", "d/f");
	snprintf(p, sizeof(p), "%s/fifo", fx->t.ws);
	assert_int_equal(mkfifo(p, 0600), 0);
	mk(fx, &c, COW_COPY);
	snprintf(p, sizeof(p), "%s/tree/d/f", c.dir);
	assert_int_equal(lstat(p, &sb), 0);
	assert_int_equal(sb.st_mode & 07777, 0751);
	assert_int_equal(sb.st_mtim.tv_sec, 2000000);
	assert_int_equal(sb.st_mtim.tv_nsec, 7);
	assert_int_equal(sb.st_size, 4);
	snprintf(p, sizeof(p), "%s/tree/d", c.dir);
	assert_int_equal(lstat(p, &sb), 0);
	assert_int_equal(sb.st_mode & 07777, 0711);
	snprintf(p, sizeof(p), "%s/tree/l", c.dir);
	assert_int_equal(readlink(p, tgt, sizeof(tgt)), 3);
	assert_memory_equal(tgt, "d/f", 3);
	snprintf(p, sizeof(p), "%s/tree", c.dir);
	assert_false(texists(p, "fifo"));
	assert_true((dfd = open(c.dir, O_RDONLY | O_DIRECTORY)) != -1);
	assert_int_equal(cow_manifest_read(dfd, "base", &b, err, sizeof(err)),
	    0);
	assert_int_equal(b.n, 4);
	assert_true(cow_base_find(&b, "fifo") >= 0);
	assert_true(S_ISFIFO(b.v[cow_base_find(&b, "fifo")].st.mode));
	cow_base_free(&b);
	assert_int_equal(cow_manifest_read(dfd, "tree.base", &b, err,
	    sizeof(err)), 0);
	assert_int_equal(b.n, 3);
	cow_base_free(&b);
	close(dfd);
	rm(&c);
	assert_int_equal(tcount(fx->cowdir), 0);
}

/* Nested deeper than COW_MAX_DEPTH: the walk refuses it. */
static void
mk_deep(const char *ws, int levels)
{
	int	fd, next, i;

	if ((fd = open(ws, O_RDONLY | O_DIRECTORY)) == -1)
		err(1, "%s", ws);
	for (i = 0; i < levels; i++) {
		if (mkdirat(fd, "d", 0755) == -1 ||
		    (next = openat(fd, "d", O_RDONLY | O_DIRECTORY)) == -1)
			err(1, "deep %d", i);
		close(fd);
		fd = next;
	}
	close(fd);
}

static void
test_create_fails_clean(void **state)
{
	struct fx	*fx = *state;
	struct cow	 c;
	char		 err[1024], nows[PATH_MAX + 8];

	snprintf(nows, sizeof(nows), "%s/nope", fx->t.root);
	assert_int_equal(cow_create(&c, COW_OVERLAY, nows, fx->t.state, err,
	    sizeof(err)), -1);
	assert_non_null(strstr(err, "nope"));
	assert_int_equal(tcount(fx->cowdir), 0);
	assert_int_equal(cow_create(&c, COW_NONE, fx->t.ws, fx->t.state, err,
	    sizeof(err)), -1);
	assert_int_equal(cow_create(&c, COW_OVERLAY, "rel/ws", fx->t.state,
	    err, sizeof(err)), -1);
	tput(fx->t.ws, "f", "x", 1, 0644);
	mk_deep(fx->t.ws, COW_MAX_DEPTH + 4);
	assert_int_equal(cow_create(&c, COW_OVERLAY, fx->t.ws, fx->t.state,
	    err, sizeof(err)), -1);
	assert_non_null(strstr(err, "deep"));
	assert_int_equal(tcount(fx->cowdir), 0);
	/* The copy fails half way: the half copy goes too. */
	assert_int_equal(cow_create(&c, COW_COPY, fx->t.ws, fx->t.state, err,
	    sizeof(err)), -1);
	assert_non_null(strstr(err, "deep"));
	assert_int_equal(tcount(fx->cowdir), 0);
}

/* A directory we may not read (a 000 one of ours; as root, we read it):
 * in the base, its entries only if we could read them; copied empty. */
static void
test_create_unreadable_dir(void **state)
{
	struct fx	*fx = *state;
	struct cow_base	 b;
	struct cow	 c;
	struct stat	 sb;
	char		 err[1024], p[PATH_MAX * 2];
	int		 dfd, root = geteuid() == 0;
	enum cow_mode	 m;

	tmkdir(fx->t.ws, "shut", 0755);
	tput(fx->t.ws, "shut/f", "x", 1, 0644);
	tput(fx->t.ws, "after", "y", 1, 0644);
	snprintf(p, sizeof(p), "%s/shut", fx->t.ws);
	assert_int_equal(chmod(p, 0), 0);
	for (m = COW_OVERLAY; m <= COW_COPY; m++) {
		mk(fx, &c, m);
		assert_true((dfd = open(c.dir, O_RDONLY | O_DIRECTORY)) != -1);
		assert_int_equal(cow_manifest_read(dfd, "base", &b, err,
		    sizeof(err)), 0);
		assert_true(cow_base_find(&b, "shut") >= 0);
		assert_true(cow_base_find(&b, "after") >= 0);
		assert_int_equal(cow_base_find(&b, "shut/f") >= 0, root);
		cow_base_free(&b);
		close(dfd);
		snprintf(p, sizeof(p), "%s/tree/shut", c.dir);
		if (m == COW_COPY) {
			assert_int_equal(lstat(p, &sb), 0);
			assert_int_equal(sb.st_mode & 07777, 0);
			assert_int_equal(texists(p, "f"), root);
		}
		rm(&c);
	}
	assert_int_equal(tcount(fx->cowdir), 0);
}

static void
test_open_refuses(void **state)
{
	struct fx	*fx = *state;
	struct cow	 c, o;
	char		 err[1024], p[PATH_MAX * 2];

	mk(fx, &c, COW_OVERLAY);
	assert_int_equal(chmod(c.dir, 0750), 0);
	assert_int_equal(cow_open(&o, COW_OVERLAY, c.dir, fx->t.ws, err,
	    sizeof(err)), -1);
	assert_non_null(strstr(err, "0700"));
	assert_int_equal(chmod(c.dir, 0700), 0);
	snprintf(p, sizeof(p), "%s/lnk", fx->t.root);
	assert_int_equal(symlink(c.dir, p), 0);
	assert_int_equal(cow_open(&o, COW_OVERLAY, p, fx->t.ws, err,
	    sizeof(err)), -1);
	snprintf(p, sizeof(p), "%s/base", c.dir);
	assert_int_equal(unlink(p), 0);
	assert_int_equal(cow_open(&o, COW_OVERLAY, c.dir, fx->t.ws, err,
	    sizeof(err)), -1);
	assert_non_null(strstr(err, "base"));
	assert_int_equal(cow_open(&o, COW_OVERLAY, "rel", fx->t.ws, err,
	    sizeof(err)), -1);
	rm(&c);
}

/* Directories and files mixed, more than one read of a directory takes. */
static void
mk_wide(const char *dir)
{
	char	name[64];
	int	i;

	tmkdir(dir, "wide", 0755);
	for (i = 0; i < 400; i++) {
		snprintf(name, sizeof(name), "wide/a-rather-long-name-%04d", i);
		if (i % 2)
			tput(dir, name, "", 0, 0644);
		else {
			tmkdir(dir, name, 0755);
			strlcat(name, "/f", sizeof(name));
			tput(dir, name, "", 0, 0644);
		}
	}
}

/* What an agent may plant in its layer: links out, a 000 directory, a
 * read-only one, nesting deeper than file descriptors go, a wide one. */
static void
test_remove_hostile(void **state)
{
	struct fx	*fx = *state;
	struct cow	 c;
	char		 up[PATH_MAX + 16], out[PATH_MAX + 16], p[PATH_MAX * 2];

	snprintf(out, sizeof(out), "%s/outside", fx->t.root);
	tmkdir(fx->t.root, "outside", 0755);
	tput(out, "precious", "keep me", 7, 0644);
	mk(fx, &c, COW_OVERLAY);
	snprintf(up, sizeof(up), "%s/upper", c.dir);
	tlink(up, "link_dir", out);
	snprintf(p, sizeof(p), "%s/precious", out);
	tlink(up, "link_file", p);
	tmkdir(up, "locked", 0755);
	tput(up, "locked/f", "x", 1, 0644);
	tmkdir(up, "locked/sub", 0755);
	tlink(up, "locked/sub/out", out);
	snprintf(p, sizeof(p), "%s/locked/sub", up);
	assert_int_equal(chmod(p, 0), 0);
	snprintf(p, sizeof(p), "%s/locked", up);
	assert_int_equal(chmod(p, 0), 0);
	tmkdir(up, "ro", 0755);
	tput(up, "ro/f", "x", 1, 0644);
	snprintf(p, sizeof(p), "%s/ro", up);
	assert_int_equal(chmod(p, 0500), 0);
	mk_deep(up, 1500);
	mk_wide(up);
	rm(&c);
	assert_false(texists(c.dir, ""));
	assert_int_equal(tcount(fx->cowdir), 0);
	assert_true(texists(out, "precious"));
	assert_int_equal(tcount(out), 1);
}

static void
put_journal(const struct cow *c, const char *text)
{
	tput(c->dir, "apply.journal", text, strlen(text), 0600);
}

/* Only regular files and links named .warren-apply.* in the workspace
 * go (a link, not what it points to). */
static void
test_remove_journal(void **state)
{
	struct fx	*fx = *state;
	struct cow	 c;
	char		 j[PATH_MAX * 8], out[PATH_MAX + 16], sib[PATH_MAX + 8];

	snprintf(out, sizeof(out), "%s/outside", fx->t.root);
	tmkdir(fx->t.root, "outside", 0755);
	tput(out, ".warren-apply.o", "o", 1, 0644);
	tput(out, ".warren-apply.q", "q", 1, 0644);
	tput(fx->t.ws, ".warren-apply.a", "a", 1, 0600);
	tmkdir(fx->t.ws, "sub", 0755);
	tput(fx->t.ws, "sub/.warren-apply.b", "b", 1, 0600);
	tput(fx->t.ws, "keep.txt", "k", 1, 0644);
	tmkdir(fx->t.ws, ".warren-apply.dir", 0755);
	tlink(fx->t.ws, ".warren-apply.lnk", "keep.txt");
	tlink(fx->t.ws, "lnkdir", out);
	/* A sibling that only shares the workspace's name as a prefix. */
	snprintf(sib, sizeof(sib), "%sX", fx->t.ws);
	tmkdir(fx->t.root, "wsX", 0755);
	tput(sib, ".warren-apply.s", "s", 1, 0644);
	tmkdir(fx->t.ws, "X", 0755);
	tput(fx->t.ws, "X/.warren-apply.s", "s", 1, 0644);
	mk(fx, &c, COW_OVERLAY);
	snprintf(j, sizeof(j), "%s/.warren-apply.a\n%s/sub/.warren-apply.b\n"
	    "%s/keep.txt\n%s/.warren-apply.dir\n%s/.warren-apply.lnk\n"
	    "%s/.warren-apply.o\n%s/lnkdir/.warren-apply.q\n"
	    "%s/sub/../.warren-apply.x\nnot absolute\n%s/gone/.warren-apply.c\n"
	    "%s/.warren-apply.s", fx->t.ws, fx->t.ws, fx->t.ws, fx->t.ws,
	    fx->t.ws, out, fx->t.ws, fx->t.ws, fx->t.ws, sib);
	put_journal(&c, j);
	rm(&c);
	assert_false(texists(fx->t.ws, ".warren-apply.a"));
	assert_false(texists(fx->t.ws, "sub/.warren-apply.b"));
	assert_true(texists(fx->t.ws, "keep.txt"));
	assert_true(texists(fx->t.ws, ".warren-apply.dir"));
	assert_false(texists(fx->t.ws, ".warren-apply.lnk"));
	assert_true(texists(fx->t.ws, "keep.txt"));
	assert_true(texists(out, ".warren-apply.o"));
	assert_true(texists(out, ".warren-apply.q"));
	assert_true(texists(sib, ".warren-apply.s"));
	assert_true(texists(fx->t.ws, "X/.warren-apply.s"));
	assert_int_equal(tcount(fx->cowdir), 0);
}

static void
test_usage(void **state)
{
	struct fx	*fx = *state;
	struct cow	 c;
	uint64_t	 before, after;
	char		 err[1024], up[PATH_MAX + 16], *mb;
	size_t		 i;

	mk(fx, &c, COW_OVERLAY);
	assert_int_equal(cow_usage(&c, &before, err, sizeof(err)), 0);
	assert_true(before > 0);
	mb = malloc(1 << 20);
	for (i = 0; i < 1 << 20; i++)
		mb[i] = (char)(i * 31 + 1);
	snprintf(up, sizeof(up), "%s/upper", c.dir);
	tmkdir(up, "d", 0755);
	tput(up, "d/big", mb, 1 << 20, 0644);
	free(mb);
	assert_int_equal(cow_usage(&c, &after, err, sizeof(err)), 0);
	assert_true(after >= before + (1 << 20));
	assert_true(after < before + (1 << 20) + (1 << 18));
	rm(&c);
}

/* A sparse file counts at its size: apply would write it whole. */
static void
test_usage_sparse(void **state)
{
	struct fx	*fx = *state;
	struct cow	 c;
	uint64_t	 before, after;
	char		 err[1024], p[PATH_MAX + 16];
	int		 fd;

	mk(fx, &c, COW_OVERLAY);
	assert_int_equal(cow_usage(&c, &before, err, sizeof(err)), 0);
	snprintf(p, sizeof(p), "%s/upper/hole", c.dir);
	assert_true((fd = open(p, O_WRONLY | O_CREAT | O_EXCL, 0644)) != -1);
	assert_int_equal(ftruncate(fd, 8 << 20), 0);
	assert_int_equal(close(fd), 0);
	assert_int_equal(cow_usage(&c, &after, err, sizeof(err)), 0);
	assert_true(after >= before + (8 << 20));
	rm(&c);
}

/*
 * In a child that is not root (root reads every directory): cow_usage
 * of c, 0 if it went as want says (0: measured; EACCES: refused, naming
 * name), else 1 with why on stderr.
 */
static int
usage_as_user(const struct cow *c, int want, const char *name)
{
	char		 q[NAME_MAX + 8];
	uint64_t	 bytes;
	char		 err[1024];
	int		 rv;

	if (getuid() == 0 && (setgroups(0, NULL) == -1 ||
	    setresgid(65534, 65534, 65534) == -1 ||
	    setresuid(65534, 65534, 65534) == -1)) {
		perror("drop to 65534");
		return 1;
	}
	snprintf(q, sizeof(q), "\"%s\"", name != NULL ? name : "");
	rv = cow_usage(c, &bytes, err, sizeof(err));
	if (want == 0 && rv == 0)
		return 0;
	if (want != 0 && rv == -1 && errno == want &&
	    strstr(err, q) != NULL)
		return 0;
	fprintf(stderr, "cow_usage: %d, errno %d (want %d): %s\n", rv, errno,
	    want, rv == 0 ? "measured" : err);
	return 1;
}

static void
usage_expect(const struct cow *c, int want, const char *name)
{
	pid_t	 pid;
	int	 status;

	fflush(NULL);
	if ((pid = fork()) == 0)
		_exit(usage_as_user(c, want, name));
	assert_true(pid > 0);
	assert_true((status = test_waitpid(pid, 60, "cow_usage as another "
	    "user")) != -1);
	assert_true(WIFEXITED(status));
	assert_int_equal(WEXITSTATUS(status), 0);
}

/*
 * A directory the walk may not read (an agent's chmod 0) fails it with
 * EACCES and its name: what it holds is unknown. The overlay's own
 * work/work, mode 0 by the kernel, does not.
 */
static void
test_usage_unreadable(void **state)
{
	struct fx	*fx = *state;
	struct cow	 c;
	char		 up[PATH_MAX + 16], wk[PATH_MAX + 16];
	char		 cmd[2 * PATH_MAX + 64];

	mk(fx, &c, COW_OVERLAY);
	snprintf(up, sizeof(up), "%s/upper", c.dir);
	snprintf(wk, sizeof(wk), "%s/work", c.dir);
	tmkdir(wk, "work", 0);
	tmkdir(up, "d", 0755);
	tput(up, "d/f", "data", 4, 0644);
	if (getuid() == 0) {
		/* The child's walk reaches the layer through these. */
		snprintf(cmd, sizeof(cmd), "chown -R 65534:65534 %s",
		    fx->t.root);
		assert_int_equal(system(cmd), 0);
	}
	usage_expect(&c, 0, NULL);
	snprintf(cmd, sizeof(cmd), "%s/d", up);
	assert_int_equal(chmod(cmd, 0), 0);
	usage_expect(&c, EACCES, "d");
	/* Listed but not searched: its entry cannot be looked up. */
	assert_int_equal(chmod(cmd, 0400), 0);
	usage_expect(&c, EACCES, "f");
	assert_int_equal(chmod(cmd, 0755), 0);
	snprintf(cmd, sizeof(cmd), "%s/work", wk);
	assert_int_equal(chmod(cmd, 0700), 0);
	rm(&c);
}

/* Nesting deeper than any walk with a descriptor per level: measured. */
static void
test_usage_deep(void **state)
{
	struct fx	*fx = *state;
	struct cow	 c;
	uint64_t	 before, after;
	char		 err[1024], up[PATH_MAX + 16];

	mk(fx, &c, COW_OVERLAY);
	assert_int_equal(cow_usage(&c, &before, err, sizeof(err)), 0);
	snprintf(up, sizeof(up), "%s/upper", c.dir);
	mk_deep(up, 2000);
	tput(up, "after", "x", 1, 0644);
	if (cow_usage(&c, &after, err, sizeof(err)) == -1)
		fail_msg("cow_usage: %s", err);
	assert_true(after >= before + 2000 * 4096);
	rm(&c);
}

/* Agents make and remove files while the disk limit measures. */
static void
test_usage_live(void **state)
{
	struct fx	*fx = *state;
	struct cow	 c;
	uint64_t	 bytes;
	char		 err[1024], up[PATH_MAX + 16], name[PATH_MAX + 48];
	struct timespec	 t0, t;
	pid_t		 pid;
	int		 i, status, fails = 0;

	mk(fx, &c, COW_OVERLAY);
	snprintf(up, sizeof(up), "%s/upper", c.dir);
	tmkdir(up, "busy", 0755);
	fflush(NULL);
	if ((pid = fork()) == 0) {
		for (i = 0;; i++) {
			snprintf(name, sizeof(name), "busy/f%d", i % 64);
			tput(up, name, "x", 1, 0644);
			snprintf(name, sizeof(name), "%s/busy/f%d", up,
			    (i + 32) % 64);
			(void)unlink(name);
		}
	}
	assert_true(pid > 0);
	assert_int_equal(clock_gettime(CLOCK_MONOTONIC, &t0), 0);
	do {
		if (cow_usage(&c, &bytes, err, sizeof(err)) == -1 && fails++ == 0)
			print_error("cow_usage: %s\n", err);
		assert_int_equal(clock_gettime(CLOCK_MONOTONIC, &t), 0);
	} while (t.tv_sec - t0.tv_sec < 2);
	kill(pid, SIGKILL);
	/* After SIGKILL: it ends. */
	assert_int_equal(waitpid(pid, &status, 0), pid);
	assert_int_equal(fails, 0);
	rm(&c);
}

/* Names with every byte but NUL and '/' come back from the manifest. */
static void
test_manifest_names(void **state)
{
	static const char *const names[] = { "a\nb", "x\ny", "x\ny/z\n",
	    " lead", "trail ", "\001", "tab\there", "100644 1 2 3 4 fake",
	    "\xff\xfe" };
	struct fx	*fx = *state;
	struct cow_base	 b;
	char		 err[1024];
	size_t		 i;
	ssize_t		 k;
	int		 wfd, dfd;

	for (i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		if (strcmp(names[i], "x\ny") == 0)
			tmkdir(fx->t.ws, names[i], 0700);
		else
			tput(fx->t.ws, names[i], "", 0, 0640);
	}
	assert_true((wfd = open(fx->t.ws, O_RDONLY | O_DIRECTORY)) != -1);
	assert_true((dfd = open(fx->t.state, O_RDONLY | O_DIRECTORY)) != -1);
	if (cow_manifest_write(wfd, dfd, "m", err, sizeof(err)) == -1)
		fail_msg("%s", err);
	assert_int_equal(cow_manifest_read(dfd, "m", &b, err, sizeof(err)), 0);
	assert_int_equal(b.n, sizeof(names) / sizeof(names[0]));
	for (i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		if ((k = cow_base_find(&b, names[i])) < 0)
			fail_msg("\"%s\" not found", names[i]);
		assert_int_equal(b.v[k].st.mode & 07777,
		    strcmp(names[i], "x\ny") == 0 ? 0700 : 0640);
	}
	k = cow_base_find(&b, "x\ny");
	assert_int_equal(cow_base_end(&b, (size_t)k), (size_t)k + 2);
	cow_base_free(&b);
	assert_false(texists(fx->t.state, "m.tmp"));
	close(wfd);
	close(dfd);
}

static void
bad_manifest(struct fx *fx, const char *data, size_t len, const char *why)
{
	struct cow_base	b;
	char		err[1024];
	int		dfd;

	tput(fx->t.state, "bad", data, len, 0600);
	assert_true((dfd = open(fx->t.state, O_RDONLY | O_DIRECTORY)) != -1);
	if (cow_manifest_read(dfd, "bad", &b, err, sizeof(err)) != -1)
		fail_msg("a manifest with %s was read", why);
	assert_int_equal(b.n, 0);
	close(dfd);
}

#define M	"warren cow base 1\n"
#define M2	"warren cow base 2\n"
static void
test_manifest_corrupt(void **state)
{
	struct fx	*fx = *state;

	bad_manifest(fx, "warren cow base 3\n", 18, "a newer header");
	bad_manifest(fx, "", 0, "nothing");
	bad_manifest(fx, M "100644 1 2 3 4 ../x", sizeof(M "100644 1 2 3 4 "
	    "../x"), "a path with ..");
	bad_manifest(fx, M "100644 1 2 3 4 /x", sizeof(M "100644 1 2 3 4 /x"),
	    "an absolute path");
	bad_manifest(fx, M "100644 1 2 3 4 a//b", sizeof(M "100644 1 2 3 4 "
	    "a//b"), "an empty part");
	bad_manifest(fx, M "100644 1 2 3 4 a\0" "100644 1 2 3 4 a",
	    sizeof(M "100644 1 2 3 4 a\0" "100644 1 2 3 4 a"), "a duplicate");
	bad_manifest(fx, M "100644 1 2 3 4 a", sizeof(M "100644 1 2 3 4 a") - 1,
	    "a record cut short");
	bad_manifest(fx, M "100644 1 2 x 4 a", sizeof(M "100644 1 2 x 4 a"),
	    "a field not a number");
	bad_manifest(fx, M "100644 1 2 3 4 ", sizeof(M "100644 1 2 3 4 "),
	    "an empty path");
	/* Version 2 ends in its count: one cut at a record's end (what a
	 * power loss leaves of a manifest not fsync'd) is refused. */
	bad_manifest(fx, M2 "100644 1 2 3 4 a", sizeof(M2 "100644 1 2 3 4 a"),
	    "no count (cut short)");
	bad_manifest(fx, M2 "100644 1 2 3 4 a\0end 2", sizeof(M2 "100644 1 "
	    "2 3 4 a\0end 2"), "a count not its records'");
	bad_manifest(fx, M2 "100644 1 2 3 4 a\0end 1\0" "100644 1 2 3 4 b",
	    sizeof(M2 "100644 1 2 3 4 a\0end 1\0" "100644 1 2 3 4 b"),
	    "a record after the count");
	bad_manifest(fx, M2 "end 0", sizeof(M2 "end 0") - 1,
	    "a count cut short");
}

/* Both versions are read: 1 without its count, 2 with it. */
static void
test_manifest_versions(void **state)
{
	struct fx	*fx = *state;
	struct cow_base	 b;
	char		 err[1024];
	int		 dfd;

	assert_true((dfd = open(fx->t.state, O_RDONLY | O_DIRECTORY)) != -1);
	tput(fx->t.state, "v1", M "100644 1 2 3 4 a\0" "100644 1 2 3 4 b",
	    sizeof(M "100644 1 2 3 4 a\0" "100644 1 2 3 4 b"), 0600);
	if (cow_manifest_read(dfd, "v1", &b, err, sizeof(err)) == -1)
		fail_msg("version 1: %s", err);
	assert_int_equal(b.n, 2);
	cow_base_free(&b);
	tput(fx->t.state, "v2", M2 "100644 1 2 3 4 a\0end 1",
	    sizeof(M2 "100644 1 2 3 4 a\0end 1"), 0600);
	if (cow_manifest_read(dfd, "v2", &b, err, sizeof(err)) == -1)
		fail_msg("version 2: %s", err);
	assert_int_equal(b.n, 1);
	cow_base_free(&b);
	tput(fx->t.state, "v2e", M2 "end 0", sizeof(M2 "end 0"), 0600);
	if (cow_manifest_read(dfd, "v2e", &b, err, sizeof(err)) == -1)
		fail_msg("version 2, empty: %s", err);
	assert_int_equal(b.n, 0);
	cow_base_free(&b);
	close(dfd);
}

static int
count_entry(struct cow_walk *w, int dirfd, const char *name,
    const struct stat *sb)
{
	(void)w;
	(void)dirfd;
	(void)name;
	(void)sb;
	return 0;
}

/* The walk refuses a tree past its bound, never answers short. */
static void
test_walk_bound(void **state)
{
	struct fx	*fx = *state;
	struct cow_walk	 w;
	char		 err[1024], name[16];
	int		 i, fd;

	for (i = 0; i < 10; i++) {
		snprintf(name, sizeof(name), "f%d", i);
		tput(fx->t.ws, name, "", 0, 0644);
	}
	assert_true((fd = open(fx->t.ws, O_RDONLY | O_DIRECTORY)) != -1);
	memset(&w, 0, sizeof(w));
	w.entry = count_entry;
	w.max = 10;
	assert_int_equal(cow_walk(&w, fd, err, sizeof(err)), 0);
	w.max = 9;
	assert_int_equal(cow_walk(&w, fd, err, sizeof(err)), -1);
	assert_non_null(strstr(err, "more than 9 entries"));
	close(fd);
}

/* Without a state dir, the XDG one (ctest gives each test its own). */
static void
test_default_statedir(void **state)
{
	struct fx	*fx = *state;
	struct cow	 c;
	char		 err[1024], xdg[PATH_MAX], want[PATH_MAX + 8];

	if (xdg_state_dir(xdg, sizeof(xdg)) == -1)
		skip();
	if (cow_create(&c, COW_OVERLAY, fx->t.ws, NULL, err, sizeof(err)) ==
	    -1)
		fail_msg("%s", err);
	snprintf(want, sizeof(want), "%s/cow/", xdg);
	assert_true(strncmp(c.dir, want, strlen(want)) == 0);
	rm(&c);
}

int
main(void)
{
#define T(f)	cmocka_unit_test_setup_teardown(f, setup, teardown)
	const struct CMUnitTest tests[] = {
		T(test_mode_names),
		T(test_pathcmp),
		T(test_create_remove_overlay),
		T(test_create_remove_copy),
		T(test_create_fails_clean),
		T(test_create_unreadable_dir),
		T(test_open_refuses),
		T(test_remove_hostile),
		T(test_remove_journal),
		T(test_usage),
		T(test_usage_sparse),
		T(test_usage_unreadable),
		T(test_usage_deep),
		T(test_usage_live),
		T(test_manifest_names),
		T(test_manifest_corrupt),
		T(test_manifest_versions),
		T(test_walk_bound),
		T(test_default_statedir),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}

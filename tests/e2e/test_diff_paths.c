/*
 * Review what you want, apply what you want (issue 34), through the real
 * binary: `warren diff RUN PATH...` and `warren apply RUN PATH...` act on
 * the named paths only (a directory names what is under it), a path the
 * run did not change is an error naming it; the .o files and the binary
 * of a run that ran make, which the workspace's .gitignore ignores, are
 * listed apart by diff and --stat and applied only with
 * --include-ignored. The layer rewrote .gitignore to ignore nothing: the
 * workspace's own one is what counts.
 *
 * The run is recorded here the way a copy-on-write run records itself
 * (a copy-mode cow directory named in the run's row, its tree/ written
 * as an agent running make would), as test_cow_cli does.
 */
#include <sys/stat.h>
#include <sys/wait.h>

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

#include "store/store.h"
#include "store/store_testapi.h"
#include "tests/e2e/harness.h"
#include "workspace/cow.h"

#define T_IGNORE	"*.o\n/wordfreq\nbuild/\n"

struct t {
	char	*dir;
	char	 ws[PATH_MAX];		/* canonical */
	char	 state[PATH_MAX];
	char	 db[PATH_MAX + 32];
	char	 id[32];
};

/* A git work tree (git decides what .gitignore ignores); 0, or 1 when
 * there is no git to make one with. */
static int
t_open(struct t *t)
{
	char	p[PATH_MAX + 16], cmd[PATH_MAX + 64];

	memset(t, 0, sizeof(*t));
	t->dir = h_tmpdir();
	snprintf(p, sizeof(p), "%s/ws", t->dir);
	h_write(p, ".gitignore", T_IGNORE, 0);
	h_write(p, "src/main.c", "int main(void) { return 0; }\n", 0);
	h_write(p, "src/util.c", "int util;\n", 0);
	h_write(p, "Makefile", "wordfreq: src/main.o src/util.o\n", 0);
	assert_non_null(realpath(p, t->ws));
	snprintf(cmd, sizeof(cmd), "git init -q '%s' 2>&1", t->ws);
	if (system(cmd) != 0)
		return 1;
	snprintf(t->state, sizeof(t->state), "%s/state", t->dir);
	assert_int_equal(mkdir(t->state, 0700), 0);
	snprintf(t->db, sizeof(t->db), "%s/warren.db", t->state);
	return 0;
}

/* A finished run whose layer holds what `make` and an edit left: two
 * sources changed, their objects and the binary, a build/ directory, a
 * new doc, and .gitignore emptied of its rules. */
static void
t_run(struct t *t, struct cow *c)
{
	struct store_run_params	 p;
	struct store		*st;
	char			 err[1024], tree[PATH_MAX + 16];
	int64_t			 run;

	memset(&p, 0, sizeof(p));
	p.task = "DIFF-PATHS-TASK";
	p.workspace = t->ws;
	if (cow_create(c, COW_COPY, t->ws, t->state, err, sizeof(err)) == -1)
		fail_msg("cow_create: %s", err);
	snprintf(tree, sizeof(tree), "%s/tree", c->dir);
	h_write(tree, "src/main.c", "int main(void) { return 1; }\n", 0);
	h_write(tree, "src/util.c", "int util = 2;\n", 0);
	h_write(tree, "src/main.o", "MAIN-OBJECT\n", 0);
	h_write(tree, "src/util.o", "UTIL-OBJECT\n", 0);
	h_write(tree, "wordfreq", "WORDFREQ-BINARY\n", 0);
	h_write(tree, "build/log.txt", "BUILD-LOG\n", 0);
	h_write(tree, "docs/new.md", "# new\n", 0);
	h_write(tree, ".gitignore", "# nothing ignored\n", 0);
	p.cow_mode = "copy";
	p.cow_dir = c->dir;
	if ((st = store_open(t->db, STORE_CREATE, err, sizeof(err))) == NULL)
		fail_msg("store_open: %s", err);
	assert_int_equal(store_run_begin(st, &p, &run), 0);
	assert_int_equal(store_run_end(st, run, STORE_RUN_DONE, "ok"), 0);
	store_close(st);
	snprintf(t->id, sizeof(t->id), "%lld", (long long)run);
}

/* warren CMD --db DB ARG... (NULL-terminated; "RUN" is the run's id). */
static void
t_warren(struct t *t, struct h_run *r, const char *cmd, ...)
{
	va_list	 ap;
	char	*argv[32], *a;
	int	 n = 0;

	argv[n++] = "warren";
	argv[n++] = (char *)(uintptr_t)cmd;
	argv[n++] = "--db";
	argv[n++] = t->db;
	va_start(ap, cmd);
	while (n < 31 && (a = va_arg(ap, char *)) != NULL)
		argv[n++] = strcmp(a, "RUN") == 0 ? t->id : a;
	va_end(ap);
	argv[n] = NULL;
	assert_int_equal(h_warren(r, argv, NULL, NULL, NULL), 0);
}

/* The workspace's file rel ("" if there is none). */
static int
t_is(const struct t *t, const char *rel, const char *want)
{
	char	p[PATH_MAX + 64], *s;
	int	same;

	snprintf(p, sizeof(p), "%s/%s", t->ws, rel);
	s = h_read_file(p);
	same = strcmp(s, want) == 0;
	free(s);
	return same;
}

static char *
t_state(struct t *t)
{
	struct store_run	 r;
	struct store		*st;
	char			 err[512], *s;

	assert_non_null(st = store_open(t->db, STORE_READ, err, sizeof(err)));
	assert_int_equal(store_run_get(st, strtoll(t->id, NULL, 10), &r), 0);
	s = strdup(r.cow_state != NULL ? r.cow_state : "pending");
	store_run_free(&r);
	store_close(st);
	return s;
}

/* diff RUN PATH..., a path it did not change, --stat and the full diff
 * with what .gitignore ignores listed apart. */
static void
test_diff_paths(void **state)
{
	struct t	 t;
	struct h_run	 r;
	struct cow	 c;
	const char	*apart;

	(void)state;
	if (t_open(&t) == 1)
		skip();
	t_run(&t, &c);

	t_warren(&t, &r, "diff", "RUN", "src/main.c", NULL);
	if (r.status != 0 || strstr(r.out, "+int main(void) { return 1; }") ==
	    NULL || strstr(r.out, "util") != NULL ||
	    strstr(r.out, "docs/new.md") != NULL)
		fail_msg("diff RUN src/main.c: %d\n%s\n%s", r.status, r.out,
		    r.err);
	h_run_free(&r);

	/* A directory: what is under it, .o files apart. */
	t_warren(&t, &r, "diff", "RUN", "./src/", NULL);
	if (r.status != 0 || strstr(r.out, "b/src/util.c") == NULL ||
	    strstr(r.out, "b/src/main.c") == NULL ||
	    strstr(r.out, "MAIN-OBJECT") != NULL ||
	    (apart = strstr(r.out, "# 2 paths the workspace's .gitignore "
	    "ignores, not applied without --include-ignored:\n#   "
	    "src/main.o\n#   src/util.o\n")) == NULL ||
	    strstr(r.out, "docs/new.md") != NULL)
		fail_msg("diff RUN src/: %d\n%s\n%s", r.status, r.out, r.err);
	h_run_free(&r);

	t_warren(&t, &r, "diff", "RUN", "src/main.c", "nosuch.c", NULL);
	if (r.status != 2 || strstr(r.err, "nosuch.c: the run changed "
	    "nothing there") == NULL || r.out[0] != '\0')
		fail_msg("diff RUN nosuch.c: %d\n%s\n%s", r.status, r.out,
		    r.err);
	h_run_free(&r);
	t_warren(&t, &r, "apply", "RUN", "../ws2/x", NULL);
	if (r.status != 2 || strstr(r.err, "../ws2/x: not a path in the "
	    "workspace") == NULL)
		fail_msg("apply RUN ../ws2/x: %d\n%s\n%s", r.status, r.out,
		    r.err);
	h_run_free(&r);

	/* --stat: the sources, the doc and .gitignore above; the objects,
	 * the binary and build/ apart, below (the layer's .gitignore, which
	 * ignores nothing, is not the one used). */
	t_warren(&t, &r, "diff", "--stat", "RUN", NULL);
	apart = strstr(r.out, "# 5 paths the workspace's .gitignore ignores");
	if (r.status != 0 || apart == NULL ||
	    strstr(r.out, " src/main.c ") > apart ||
	    strstr(r.out, " docs/new.md ") > apart ||
	    strstr(r.out, " .gitignore ") > apart ||
	    strstr(r.out, " src/main.c ") == NULL ||
	    strstr(apart, " src/main.o ") == NULL ||
	    strstr(apart, " wordfreq ") == NULL ||
	    strstr(apart, " build/log.txt ") == NULL ||
	    strstr(r.out, " src/main.o ") < apart)
		fail_msg("diff --stat RUN: %d\n%s\n%s", r.status, r.out,
		    r.err);
	h_run_free(&r);
	/* --raw: stdout is for patch; the list goes to stderr. */
	t_warren(&t, &r, "diff", "--raw", "RUN", NULL);
	if (r.status != 0 || strstr(r.out, "MAIN-OBJECT") != NULL ||
	    strstr(r.out, "src/main.o") != NULL ||
	    strstr(r.out, "+int util = 2;") == NULL ||
	    strstr(r.err, "# 5 paths the workspace's .gitignore") == NULL ||
	    strstr(r.err, "#   src/main.o\n") == NULL)
		fail_msg("diff --raw RUN: %d\n%s\n%s", r.status, r.out, r.err);
	h_run_free(&r);
	t_warren(&t, &r, "diff", "RUN", NULL);
	if (r.status != 0 || strstr(r.out, "WORDFREQ-BINARY") != NULL ||
	    strstr(r.out, "+# new") == NULL ||
	    strstr(r.out, "#   wordfreq\n") == NULL ||
	    strstr(r.out, "#   build/log.txt\n") == NULL)
		fail_msg("diff RUN: %d\n%s\n%s", r.status, r.out, r.err);
	h_run_free(&r);
	h_rm_rf(t.dir);
	free(t.dir);
}

/* apply RUN FILE, apply RUN DIR, apply RUN (the ignored left out, the
 * layer kept), apply --include-ignored RUN (all, the layer gone). */
static void
test_apply_paths(void **state)
{
	struct t	 t;
	struct h_run	 r;
	struct cow	 c;
	struct stat	 sb;
	char		*s;

	(void)state;
	if (t_open(&t) == 1)
		skip();
	t_run(&t, &c);

	t_warren(&t, &r, "apply", "RUN", "src/main.c", NULL);
	if (r.status != 0 || !t_is(&t, "src/main.c",
	    "int main(void) { return 1; }\n") || !t_is(&t, "src/util.c",
	    "int util;\n") || !t_is(&t, "docs/new.md", "") ||
	    strstr(r.out, "is kept for the 9 paths not applied") == NULL)
		fail_msg("apply RUN src/main.c: %d\n%s\n%s", r.status, r.out,
		    r.err);
	h_run_free(&r);
	assert_string_equal(s = t_state(&t), "pending");
	free(s);

	t_warren(&t, &r, "apply", "RUN", "src", NULL);
	if (r.status != 0 || !t_is(&t, "src/util.c", "int util = 2;\n") ||
	    !t_is(&t, "src/main.o", "") || strstr(r.out, "left out: "
	    "src/main.o (the workspace's .gitignore ignores it)") == NULL ||
	    strstr(r.out, "2 paths the workspace's .gitignore ignores left "
	    "out: apply them with --include-ignored") == NULL)
		fail_msg("apply RUN src: %d\n%s\n%s", r.status, r.out, r.err);
	h_run_free(&r);

	/* Named exactly, an ignored file is applied, as --include does. */
	t_warren(&t, &r, "apply", "RUN", "src/util.o", NULL);
	if (r.status != 0 || !t_is(&t, "src/util.o", "UTIL-OBJECT\n"))
		fail_msg("apply RUN src/util.o: %d\n%s\n%s", r.status, r.out,
		    r.err);
	h_run_free(&r);

	/* Named exactly in a new directory .gitignore ignores (build/):
	 * the directory comes too, not set apart as ignored. */
	t_warren(&t, &r, "apply", "RUN", "build/log.txt", NULL);
	if (r.status != 0 || !t_is(&t, "build/log.txt", "BUILD-LOG\n") ||
	    !t_is(&t, "wordfreq", "") || strstr(r.out, "left out: ") != NULL)
		fail_msg("apply RUN build/log.txt: %d\n%s\n%s", r.status,
		    r.out, r.err);
	h_run_free(&r);

	/* A file in a directory the run made: the directory comes too. */
	t_warren(&t, &r, "apply", "RUN", "docs/new.md", NULL);
	if (r.status != 0 || !t_is(&t, "docs/new.md", "# new\n") ||
	    !t_is(&t, ".gitignore", T_IGNORE))
		fail_msg("apply RUN docs/new.md: %d\n%s\n%s", r.status, r.out,
		    r.err);
	h_run_free(&r);

	t_warren(&t, &r, "apply", "RUN", NULL);
	if (r.status != 0 || !t_is(&t, "docs/new.md", "# new\n") ||
	    !t_is(&t, ".gitignore", "# nothing ignored\n") ||
	    !t_is(&t, "wordfreq", "") || stat(c.dir, &sb) != 0 ||
	    strstr(r.out, "5 paths the workspace's .gitignore ignores left "
	    "out") == NULL)
		fail_msg("apply RUN: %d\n%s\n%s", r.status, r.out, r.err);
	h_run_free(&r);
	assert_string_equal(s = t_state(&t), "pending");
	free(s);

	t_warren(&t, &r, "apply", "--include-ignored", "RUN", NULL);
	if (r.status != 0 || !t_is(&t, "wordfreq", "WORDFREQ-BINARY\n") ||
	    !t_is(&t, "src/main.o", "MAIN-OBJECT\n") ||
	    !t_is(&t, "build/log.txt", "BUILD-LOG\n"))
		fail_msg("apply --include-ignored RUN: %d\n%s\n%s", r.status,
		    r.out, r.err);
	h_run_free(&r);
	assert_string_equal(s = t_state(&t), "applied");
	free(s);
	assert_int_equal(stat(c.dir, &sb), -1);
	assert_int_equal(errno, ENOENT);
	h_rm_rf(t.dir);
	free(t.dir);
}

/* sh -c CMD with $1 the workspace and $2 arg (or ""); 0 or fail. */
static void
t_sh(const struct t *t, const char *cmd, const char *arg)
{
	pid_t	pid;
	int	st;

	if ((pid = fork()) == -1)
		fail_msg("fork: %s", strerror(errno));
	if (pid == 0) {
		execl("/bin/sh", "sh", "-c", cmd, "sh", t->ws,
		    arg != NULL ? arg : "", (char *)NULL);
		_exit(127);
	}
	if (waitpid(pid, &st, 0) != pid || !WIFEXITED(st) ||
	    WEXITSTATUS(st) != 0)
		fail_msg("%s (in %s) failed", cmd, t->ws);
}

/* A run whose layer changed a file in a git submodule of the workspace
 * (sub/b.o) besides src/main.o: diff still sets src/main.o apart and
 * apply leaves it out (git check-ignore, asked about sub/b.o, fails the
 * whole answer with "is in submodule"), and both say that sub/b.o was
 * not checked. */
static void
test_ignore_submodule(void **state)
{
	struct t	 t;
	struct h_run	 r;
	struct cow	 c;
	char		 p[PATH_MAX + 16], tree[PATH_MAX + 16];

	(void)state;
	if (t_open(&t) == 1)
		skip();
	snprintf(p, sizeof(p), "%s/subsrc", t.dir);
	h_write(p, "a.c", "int a;\n", 0);
	t_sh(&t, "cd \"$1\"/../subsrc && git init -q . && git add a.c && "
	    "git -c user.email=t@t -c user.name=t commit -qm a", NULL);
	t_sh(&t, "cd \"$1\" && git -c protocol.file.allow=always submodule "
	    "add -q ../subsrc sub", NULL);
	t_run(&t, &c);
	snprintf(tree, sizeof(tree), "%s/tree", c.dir);
	h_write(tree, "sub/b.o", "SUB-OBJECT\n", 0);

	t_warren(&t, &r, "diff", "RUN", NULL);
	if (r.status != 0 || strstr(r.out, "#   src/main.o\n") == NULL ||
	    strstr(r.out, "MAIN-OBJECT") != NULL ||
	    strstr(r.err, "1 changed path in a git submodule (sub) is not "
	    "checked against .gitignore") == NULL ||
	    strstr(r.err, "is not used") != NULL)
		fail_msg("diff RUN with sub/b.o: %d\n%s\n%s", r.status, r.out,
		    r.err);
	h_run_free(&r);
	/* apply: the objects stay out, the submodule's file is written. */
	t_warren(&t, &r, "apply", "RUN", NULL);
	if (r.status != 0 || !t_is(&t, "src/main.o", "") ||
	    !t_is(&t, "wordfreq", "") || !t_is(&t, "sub/b.o", "SUB-OBJECT\n") ||
	    strstr(r.out, "left out: src/main.o") == NULL)
		fail_msg("apply RUN with sub/b.o: %d\n%s\n%s", r.status, r.out,
		    r.err);
	h_run_free(&r);
	h_rm_rf(t.dir);
	free(t.dir);
}

/* git's own words when it fails: a workspace git refuses (its .git a
 * file that points nowhere). */
static void
test_ignore_git_fails(void **state)
{
	struct t	 t;
	struct h_run	 r;
	struct cow	 c;

	(void)state;
	if (t_open(&t) == 1)
		skip();
	t_run(&t, &c);
	t_sh(&t, "rm -rf \"$1\"/.git && echo \"gitdir: /nonexistent\" > "
	    "\"$1\"/.git", NULL);
	t_warren(&t, &r, "diff", "RUN", NULL);
	if (r.status != 0 || strstr(r.err, "the workspace's .gitignore is not "
	    "used (git ls-files exited with 128: fatal: not a git "
	    "repository: /nonexistent)") == NULL ||
	    strstr(r.out, "WORDFREQ-BINARY") == NULL)
		fail_msg("diff RUN, .git broken: %d\n%s\n%s", r.status, r.out,
		    r.err);
	h_run_free(&r);
	h_rm_rf(t.dir);
	free(t.dir);
}

/* The workspace's .git/config names a core.fsmonitor command: asking
 * git what .gitignore ignores must not run it. */
static void
test_ignore_fsmonitor(void **state)
{
	struct t	 t;
	struct h_run	 r;
	struct cow	 c;
	struct stat	 sb;
	char		 hook[PATH_MAX + 16], mark[PATH_MAX + 16], body[PATH_MAX + 64];

	(void)state;
	if (t_open(&t) == 1)
		skip();
	snprintf(mark, sizeof(mark), "%s/fsmonitor-ran", t.dir);
	snprintf(body, sizeof(body), "#!/bin/sh\ntouch '%s'\n", mark);
	h_write(t.dir, "fsmonitor.sh", body, 0755);
	snprintf(hook, sizeof(hook), "%s/fsmonitor.sh", t.dir);
	t_run(&t, &c);
	t_sh(&t, "git -C \"$1\" config core.fsmonitor \"$2\"", hook);
	t_warren(&t, &r, "diff", "RUN", NULL);
	if (r.status != 0 || strstr(r.out, "#   src/main.o\n") == NULL)
		fail_msg("diff RUN: %d\n%s\n%s", r.status, r.out, r.err);
	h_run_free(&r);
	if (stat(mark, &sb) == 0)
		fail_msg("warren diff ran the workspace's core.fsmonitor "
		    "(%s)", hook);
	h_rm_rf(t.dir);
	free(t.dir);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_diff_paths),
		cmocka_unit_test(test_apply_paths),
		cmocka_unit_test(test_ignore_submodule),
		cmocka_unit_test(test_ignore_git_fails),
		cmocka_unit_test(test_ignore_fsmonitor),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}

/*
 * Help and usage of the commands: `warren help CMD`, each command's
 * --help on stdout with exit 0, a bare or unknown subcommand exit 2; and
 * the option table (cli/opttab.h) against the getopt options of run,
 * resume and ask, so a new option cannot miss its --help line or its
 * man page entry (test_man_page checks the page is what the table makes).
 */
#include <sys/stat.h>

#include <getopt.h>
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

#include "cli/opttab.h"
#include "cli/opttab_testapi.h"
#include "sandbox/sandbox_int.h"
#include "tests/e2e/harness.h"

/* warren with args; its status; stdout and stderr checked for needles. */
static void
expect(int status, const char *out, const char *err, ...)
{
	struct h_run	 r;
	char		*argv[8];
	va_list		 ap;
	int		 n = 0;

	argv[n++] = "warren";
	va_start(ap, err);
	while (n < 7 && (argv[n] = va_arg(ap, char *)) != NULL)
		n++;
	va_end(ap);
	argv[n] = NULL;
	assert_int_equal(h_warren(&r, argv, NULL, NULL, NULL), 0);
	if (r.status != status || (out != NULL && strstr(r.out, out) == NULL)
	    || (err != NULL && strstr(r.err, err) == NULL))
		fail_msg("warren %s %s: exit %d (want %d)\nstdout:\n%s\n"
		    "stderr:\n%s", argv[1], n > 2 ? argv[2] : "", r.status,
		    status, r.out, r.err);
	h_run_free(&r);
}

static void
test_help(void **state)
{
	(void)state;
	expect(0, "usage: warren resume [options] RUN", NULL, "resume",
	    "--help", NULL);
	expect(0, "usage: warren run [options] TASK", NULL, "run", "--help",
	    NULL);
	expect(0, "usage: warren run [options] TASK", NULL, "help", "run",
	    NULL);
	expect(0, "usage: warren resume", NULL, "help", "resume", NULL);
	expect(0, "usage: warren sandbox exec", NULL, "sandbox", "exec",
	    "--help", NULL);
	expect(0, "usage: warren sandbox exec", NULL, "help", "sandbox",
	    "exec", NULL);
	expect(0, "usage: warren sandbox exec", NULL, "sandbox", "--help",
	    NULL);
	expect(2, NULL, "usage: warren sandbox exec", "sandbox", NULL);
	expect(2, NULL, "unknown subcommand", "sandbox", "nope", NULL);
	expect(2, NULL, "unknown command 'nope'", "help", "nope", NULL);
	expect(0, "commands:", NULL, "help", NULL);
	/* A bad sandbox exec line stays 125, as env(1) and timeout(1). */
	expect(125, NULL, "--profile is required", "sandbox", "exec", "--",
	    "true", NULL);
	/* The table's lines are in the help. */
	expect(0, "  -T                      Trace every IPC message", NULL,
	    "run", "--help", NULL);
	expect(0, "  --hello-timeout D", NULL, "resume", "--help", NULL);
	expect(0, "  --show-config", NULL, "ask", "--help", NULL);
}

/* One config file for every command: ask takes the keys of run (and
 * ignores them) instead of refusing the file. */
static void
test_ask_run_keys(void **state)
{
	struct h_run	 r;
	char		*dir, cfg[PATH_MAX], env[PATH_MAX + 32];
	char		*argv[] = { "warren", "ask", "--show-config", NULL };
	char		*extra[] = { env, NULL };

	(void)state;
	dir = h_tmpdir();
	snprintf(cfg, sizeof(cfg), "%s/warren", dir);
	h_write(cfg, "config", "max_agents = 4\njobs = 2\nmodel = m-from-"
	    "file\n", 0);
	snprintf(env, sizeof(env), "XDG_CONFIG_HOME=%s", dir);
	assert_int_equal(h_warren(&r, argv, extra, NULL, NULL), 0);
	if (r.status != 0 || strstr(r.out, "model = m-from-file") == NULL)
		fail_msg("ask with run's keys: exit %d\n%s\n%s", r.status,
		    r.out, r.err);
	h_run_free(&r);
	/* A key no command knows is still an error, named. */
	h_write(cfg, "config", "max_agentz = 4\n", 0);
	assert_int_equal(h_warren(&r, argv, extra, NULL, NULL), 0);
	assert_int_equal(r.status, 3);
	assert_non_null(strstr(r.err, "unknown key 'max_agentz'"));
	h_run_free(&r);
	h_rm_rf(dir);
	free(dir);
}

/* A workspace that is a file, or that cannot be read: said up front,
 * exit 3, before any agent starts. */
static void
test_bad_workspace(void **state)
{
	struct h_run	 r;
	char		*dir, file[PATH_MAX], locked[PATH_MAX];
	char		*argv[] = { "warren", "run", "--no-store", "--in-place",
			    "--workspace", file, "a task", NULL };

	(void)state;
	dir = h_tmpdir();
	h_write(dir, "wsfile", "x\n", 0);
	snprintf(file, sizeof(file), "%s/wsfile", dir);
	assert_int_equal(h_warren(&r, argv, NULL, NULL, NULL), 0);
	if (r.status != 3 || strstr(r.err, "is not a directory: give the "
	    "directory") == NULL || strstr(r.err, ".warren") != NULL)
		fail_msg("workspace is a file: exit %d\n%s", r.status, r.err);
	h_run_free(&r);
	snprintf(locked, sizeof(locked), "%s/locked", dir);
	assert_int_equal(mkdir(locked, 0), 0);
	if (geteuid() == 0)
		printf("not checked as root (it reads every directory): an "
		    "unreadable workspace\n");
	else {
		argv[5] = locked;
		assert_int_equal(h_warren(&r, argv, NULL, NULL, NULL), 0);
		if (r.status != 3 || strstr(r.err, "cannot be read") == NULL)
			fail_msg("unreadable workspace: exit %d\n%s",
			    r.status, r.err);
		h_run_free(&r);
	}
	chmod(locked, 0700);
	h_rm_rf(dir);
	free(dir);
}

/* A usage error is one line: what was wrong, then where the help is
 * (not the command's whole --help). */
static void
one_line(int status, const char *what, const char *cmd, ...)
{
	struct h_run	 r;
	char		*argv[10], want[128];
	va_list		 ap;
	int		 n = 1;

	argv[0] = "warren";
	va_start(ap, cmd);
	while (n < 9 && (argv[n] = va_arg(ap, char *)) != NULL)
		n++;
	va_end(ap);
	argv[n] = NULL;
	snprintf(want, sizeof(want), "; try 'warren help %s'\n", cmd);
	assert_int_equal(h_warren(&r, argv, NULL, NULL, NULL), 0);
	if (r.status != status || strstr(r.err, what) == NULL ||
	    strchr(r.err, '\n') != r.err + strlen(r.err) - 1 ||
	    strstr(r.err, want) == NULL)
		fail_msg("warren %s %s: exit %d (want %d), stderr (want one "
		    "line with \"%s\" ending \"%s\"):\n%s", argv[1], argv[2],
		    r.status, status, what, want, r.err);
	h_run_free(&r);
}

static void
test_usage_one_line(void **state)
{
	(void)state;
	one_line(2, "unknown option '--bogus'", "run", "run", "--bogus", "t",
	    NULL);
	one_line(2, "give exactly one TASK", "run", "run", "a", "b", NULL);
	one_line(2, "--jobs needs a value", "run", "run", "t", "--jobs",
	    NULL);
	one_line(2, "--json takes no value", "run", "run", "--json=1", "t",
	    NULL);
	one_line(2, "give exactly one RUN", "resume", "resume", NULL);
	one_line(2, "give the PROMPT", "ask", "ask", NULL);
	one_line(2, "unknown option '-x'", "profiles", "profiles", "-x",
	    NULL);
	one_line(2, "one DIR at most", "trust", "trust", "a", "b", NULL);
	one_line(2, "give one RUN", "show", "show", NULL);
	one_line(2, "--limit is not an option of show", "show", "show",
	    "--limit", "3", "1", NULL);
	one_line(2, "unknown option '--bogus'", "queue ls", "queue", "ls",
	    "--bogus", NULL);
	one_line(2, "--csv needs a value", "queue add", "queue", "add",
	    "--csv", NULL);
	one_line(2, "unexpected 'x'", "queue work", "queue", "work", "x",
	    NULL);
	one_line(2, "unknown subcommand 'nope'", "sandbox", "sandbox",
	    "nope", NULL);
	/* sandbox exec stays 125 (env(1), timeout(1)). */
	one_line(125, "no command", "sandbox exec", "sandbox", "exec",
	    "--profile", "explore", NULL);
}

/* A mistyped command or option: the one meant, when one slip away. */
static void
test_did_you_mean(void **state)
{
	(void)state;
	expect(2, NULL, "unknown command 'rnu': did you mean 'run'?", "rnu",
	    NULL);
	expect(2, NULL, "unknown command 'rnu': did you mean 'run'?", "help",
	    "rnu", NULL);
	expect(2, NULL, "unknown command 'shwo': did you mean 'show'?",
	    "shwo", NULL);
	expect(2, NULL, "unknown subcommand 'lss': did you mean 'ls'?",
	    "queue", "lss", NULL);
	one_line(2, "unknown option '--profle': did you mean '--profile'?",
	    "run", "run", "--profle", "general", "t", NULL);
	one_line(2, "unknown option '--budgte': did you mean '--budget'?",
	    "run", "run", "t", "--budgte=5", NULL);
	one_line(2, "unknown option '--mesages': did you mean '--messages'?",
	    "show", "show", "--mesages", "1", NULL);
	one_line(2, "unknown option '--modle': did you mean '--model'?",
	    "ask", "ask", "--modle", "m", "hi", NULL);
	/* Nothing near: no guess. */
	one_line(2, "unknown option '--zzzzzz'", "run", "run", "--zzzzzz",
	    "t", NULL);
	expect(2, NULL, "unknown command 'xyzzy'; try 'warren --help'",
	    "xyzzy", NULL);
}

/* Options after the first operand are options (before "--"), except
 * where the operands are a command line of their own. */
static void
test_options_anywhere(void **state)
{
	struct h_run	 r;
	char		*dir, ws[PATH_MAX], want[PATH_MAX + 64];
	char		*cont[] = { "warren", "run", "--continue", "last",
			    "--profile", "general", "-w", ws, "the task", NULL };
	char		*prof[] = { "warren", "run", "the task", "--profile",
			    "nosuch", NULL };
	char		*dash[] = { "warren", "run", "--profile", "nosuch", "--",
			    "--bogus", NULL };
	char		*sbx[] = { "warren", "sandbox", "exec", "--profile",
			    "explore", "--workspace", ws, "/bin/echo", "-v",
			    "--timeout=x", NULL };
	char		*key[] = { "WARREN_API_KEY=k", NULL };

	(void)state;
	dir = h_tmpdir();
	snprintf(ws, sizeof(ws), "%s", dir);
	/* -w after RUN is read: the run to continue is looked for there. */
	assert_int_equal(h_warren(&r, cont, key, NULL, NULL), 0);
	snprintf(want, sizeof(want), "no run to continue in %s", ws);
	if (strstr(r.err, want) == NULL || strstr(r.err, "TASK") != NULL)
		fail_msg("run --continue last --profile ... -w DIR TASK: exit "
		    "%d\n%s", r.status, r.err);
	h_run_free(&r);
	/* --profile after TASK is read, so its value is checked. */
	assert_int_equal(h_warren(&r, prof, key, NULL, NULL), 0);
	if (r.status != 3 || strstr(r.err, "unknown profile \"nosuch\"") ==
	    NULL)
		fail_msg("run TASK --profile nosuch: exit %d\n%s", r.status,
		    r.err);
	h_run_free(&r);
	/* After "--" an option-like word is the TASK. */
	assert_int_equal(h_warren(&r, dash, key, NULL, NULL), 0);
	if (r.status != 3 || strstr(r.err, "unknown profile") == NULL)
		fail_msg("run --profile nosuch -- --bogus: exit %d\n%s",
		    r.status, r.err);
	h_run_free(&r);
	/* sandbox exec CMD ARGS: CMD's options are its own, "--" or not. */
	assert_int_equal(h_warren(&r, sbx, NULL, NULL, NULL), 0);
	if (r.status != 0 || strcmp(r.out, "-v --timeout=x\n") != 0)
		fail_msg("sandbox exec ... /bin/echo -v --timeout=x: exit "
		    "%d\nstdout:\n%s\nstderr:\n%s", r.status, r.out, r.err);
	h_run_free(&r);
	h_rm_rf(dir);
	free(dir);
}

/* sandbox exec --rlimit takes sizes as --disk-max does (50M, 1M), and
 * the process gets them. */
static void
test_rlimit_sizes(void **state)
{
	struct h_run	 r;
	char		*dir;
	char		*ok[] = { "warren", "sandbox", "exec", "--profile",
			    "explore", "--workspace", NULL, "--rlimit",
			    "as=512M", "--rlimit", "fsize=1M", "--rlimit",
			    "mem=50M", "--", "/bin/cat", "/proc/self/limits",
			    NULL };
	char		*bad[] = { "warren", "sandbox", "exec", "--profile",
			    "explore", "--rlimit", "mem=50X", "--", "/bin/true",
			    NULL };

	(void)state;
	dir = h_tmpdir();
	ok[6] = dir;
	assert_int_equal(h_warren(&r, ok, NULL, NULL, NULL), 0);
	/* A sanitizer build skips RLIMIT_AS (sandbox_rlimit.c): its
	 * shadow memory needs the address space. */
	if (r.status != 0 || (!SANDBOX_SANITIZER &&
	    strstr(r.out, "Max address space         536870912") == NULL) ||
	    strstr(r.out, "Max file size             1048576 ") == NULL)
		fail_msg("--rlimit as=512M fsize=1M mem=50M: exit %d\n"
		    "stdout:\n%s\nstderr:\n%s", r.status, r.out, r.err);
	h_run_free(&r);
	assert_int_equal(h_warren(&r, bad, NULL, NULL, NULL), 0);
	if (r.status != 125 || strstr(r.err, "bad --rlimit 'mem=50X'") == NULL
	    || strstr(r.err, "a size such as 50M") == NULL)
		fail_msg("--rlimit mem=50X: exit %d\n%s", r.status, r.err);
	h_run_free(&r);
	h_rm_rf(dir);
	free(dir);
}

/* sandbox exec --profile nosuch: one line that names it (no errno text
 * after it), and with --cow no run is recorded for the refused line. */
static void
test_sandbox_unknown_profile(void **state)
{
	struct h_run	 r;
	char		*dir;
	char		*argv[] = { "warren", "sandbox", "exec", "--profile",
			    "nosuch", "--cow", "--workspace", NULL, "--",
			    "/bin/true", NULL };
	char		*runs[] = { "warren", "runs", "--workspace", NULL, NULL };

	(void)state;
	dir = h_tmpdir();
	argv[7] = dir;
	runs[3] = dir;
	assert_int_equal(h_warren(&r, argv, NULL, NULL, NULL), 0);
	if (r.status != 125 || strcmp(r.err, "warren sandbox exec: unknown "
	    "profile 'nosuch' (explore, plan, review, test, general); try "
	    "'warren help sandbox exec'\n") != 0)
		fail_msg("sandbox exec --profile nosuch: exit %d\n%s",
		    r.status, r.err);
	h_run_free(&r);
	assert_int_equal(h_warren(&r, runs, NULL, NULL, NULL), 0);
	/* "no runs in this workspace", or no database at all yet */
	if (r.status != 0 || strstr(r.out, "no runs") == NULL ||
	    strstr(r.out, "sandbox exec") != NULL)
		fail_msg("a run recorded for the refused line:\n%s", r.out);
	h_run_free(&r);
	h_rm_rf(dir);
	free(dir);
}

/* An error longer than 2 KiB is said whole, escaped: `warren runs` beside
 * an old database in a workspace whose path is over 1 KiB (and holds an
 * ESC byte) names that path twice and ends with what to do. cmd_verror's
 * 2 KiB buffer cut it short (cmd_store_error printed it whole before). */
static void
test_error_whole(void **state)
{
	struct h_run	 r;
	char		*dir, ws[PATH_MAX], comp[201], *p, *q;
	char		*argv[] = { "warren", "runs", "--workspace", NULL, NULL };
	char		*noenv[] = { "WARREN_DB=", NULL };
	int		 i, n;

	(void)state;
	dir = h_tmpdir();
	memset(comp, 'a', sizeof(comp) - 1);
	comp[sizeof(comp) - 1] = '\0';
	comp[7] = '\x1b';
	n = snprintf(ws, sizeof(ws), "%s", dir);
	for (i = 0; i < 5; i++) {
		n += snprintf(ws + n, sizeof(ws) - (size_t)n, "/%s", comp);
		assert_true(mkdir(ws, 0755) == 0);
	}
	h_write(ws, ".warren/warren.db", "", 0644);
	argv[3] = ws;
	assert_int_equal(h_warren(&r, argv, noenv, NULL, NULL), 0);
	if (r.status != 0 || strchr(r.err, '\x1b') != NULL ||
	    strstr(r.err, "name it that way\n") == NULL)
		fail_msg("warren runs beside an old database (%zu bytes of "
		    "path): exit %d, stderr cut or not escaped:\n%s",
		    strlen(ws), r.status, r.err);
	/* The path twice, each ESC as \x1b. */
	for (i = 0, p = r.err; (q = strstr(p, "aaaaaaa\\x1b")) != NULL;
	    p = q + 1)
		i++;
	assert_int_equal(i, 2 * 5);
	h_run_free(&r);
	h_rm_rf(dir);
	free(dir);
}

static const struct opt_doc *
row(const char *cmd, const char *name)
{
	size_t	i;

	for (i = 0; i < opt_ndocs; i++)
		if (opt_doc_for(&opt_docs[i], cmd) &&
		    opt_docs[i].long_name != NULL &&
		    strcmp(opt_docs[i].long_name, name) == 0)
			return &opt_docs[i];
	return NULL;
}

static int
has_getopt(const struct option *o, const char *name)
{
	for (; o->name != NULL; o++)
		if (strcmp(o->name, name) == 0)
			return 1;
	return 0;
}

/* Every getopt option has its row, every row its getopt option, and an
 * option with an argument shows one (an optional operand in brackets). */
static void
check_cmd(const char *cmd, const struct option *o)
{
	const struct opt_doc	*d;
	size_t			 i;

	for (; o->name != NULL; o++) {
		/* resume takes run's options but lists the ones it honours */
		if (strcmp(cmd, "resume") == 0)
			continue;
		if ((d = row(cmd, o->name)) == NULL)
			fail_msg("warren %s --%s has no row in cli/opttab.c",
			    cmd, o->name);
		/* "[RUN]": an optional operand after the flag (--continue) */
		if ((o->has_arg == required_argument) != (d->arg != NULL &&
		    d->arg[0] != '['))
			fail_msg("warren %s --%s: the table says %s argument",
			    cmd, o->name, d->arg ? "an" : "no");
	}
	for (i = 0; i < opt_ndocs; i++)
		if (opt_doc_for(&opt_docs[i], cmd) &&
		    opt_docs[i].long_name != NULL && !has_getopt(strcmp(cmd,
		    "ask") == 0 ? cmd_ask_options() : cmd_run_options(),
		    opt_docs[i].long_name))
			fail_msg("cli/opttab.c: warren %s --%s is not an "
			    "option", cmd, opt_docs[i].long_name);
}

static void
test_table(void **state)
{
	(void)state;
	check_cmd("run", cmd_run_options());
	check_cmd("resume", cmd_run_options());
	check_cmd("ask", cmd_ask_options());
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_help),
		cmocka_unit_test(test_table),
		cmocka_unit_test(test_usage_one_line),
		cmocka_unit_test(test_did_you_mean),
		cmocka_unit_test(test_rlimit_sizes),
		cmocka_unit_test(test_sandbox_unknown_profile),
		cmocka_unit_test(test_options_anywhere),
		cmocka_unit_test(test_ask_run_keys),
		cmocka_unit_test(test_bad_workspace),
		cmocka_unit_test(test_error_whole),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}

/*
 * Files that run code on the host (SANDBOX-TESTS.md cases 43 and 49): a
 * general agent, replayed from a cassette, writes them with its real tools
 * in a real sandbox; the end of the run lists each on stderr, in the
 * --json event and in `warren show`, and lists nothing when nothing of
 * the kind changed. The snapshot from the start survives a kill -9 of the
 * supervisor: the resumed run still lists what the agent wrote before.
 */
#include <sys/stat.h>
#include <sys/types.h>

#include <limits.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "store/store.h"
#include "tests/e2e/harness.h"

#define HOST_EVENT	"\"event\":\"host_files\""
#define HOST_HEADER	"files that run code on the host"

struct t {
	struct h_ws	w;
	char		db[PATH_MAX];
};

static int
setup(void **state)
{
	struct t	*c = calloc(1, sizeof(*c));

	h_ws_open(&c->w, "data\n");
	snprintf(c->db, sizeof(c->db), "%s/w.db", c->w.dir);
	/* Already there, and left alone by the agent: never listed. */
	h_write(c->w.ws, ".envrc", "export A=1\n", 0);
	h_write(c->w.ws, ".vscode/settings.json", "{}\n", 0);
	*state = c;
	return 0;
}

static int
teardown(void **state)
{
	struct t	*c = *state;

	h_ws_close(&c->w);
	free(c);
	return 0;
}

/* warren run [--json] --db DB --workspace WS --replay CAS TASK */
static void
run(struct t *c, struct h_run *r, int json)
{
	char	*argv[16];
	int	 n = 0;

	h_ws_cassette_close(&c->w);
	argv[n++] = "warren";
	argv[n++] = "run";
	if (json)
		argv[n++] = "--json";
	argv[n++] = "--db";
	argv[n++] = c->db;
	argv[n++] = "--workspace";
	argv[n++] = c->w.ws;
	argv[n++] = "--replay";
	argv[n++] = c->w.cas;
	argv[n++] = "hostexec task";
	argv[n] = NULL;
	assert_int_equal(h_warren(r, argv, NULL, NULL, NULL), 0);
}

/* warren show [--json] --db DB --workspace WS last */
static void
show(struct t *c, struct h_run *r, int json)
{
	char	*argv[] = { "warren", "show", "--db", c->db, "--workspace",
		    c->w.ws, "last", NULL, NULL };

	if (json) {
		argv[6] = "--json";
		argv[7] = "last";
	}
	assert_int_equal(h_warren(r, argv, NULL, NULL, NULL), 0);
	assert_int_equal(r->status, 0);
}

/* 0 delegates to 0.1 general, which runs calls1 then calls2. */
static void
script(struct t *c, const char *calls1, const char *calls2)
{
	FILE	*f = c->w.f;

	h_turn(f, "0", 1, h_calls1("a", "delegate",
	    "{\"profile\":\"general\",\"task\":\"change things\"}"));
	h_turn(f, "0.1", 1, calls1);
	h_turn(f, "0.1", 2, calls2);
	h_turn(f, "0.1", 3, h_calls1("z", "complete", "{\"result\":\"ok\"}"));
	h_turn(f, "0", 2, h_calls1("y", "complete",
	    "{\"result\":\"HOSTEXEC-DONE\"}"));
}

/* The agent writes every kind of file that runs code, and two that do
 * not: git init with an fsmonitor, .vscode, CI, husky, a shell rc; a
 * nested .VSCODE and an .Envrc (what a case-insensitive filesystem takes
 * for .vscode and .envrc), a lefthook config (case 53). */
static void
script_sensitive(struct t *c)
{
	char	bash[1024], args[1200];

	snprintf(bash, sizeof(bash), "git init -q sub && "
	    "git -C sub config core.fsmonitor 'touch /tmp/hostexec-owned' && "
	    "mkdir -p .husky && printf 'evil\\n' > .husky/pre-commit && "
	    "echo 'alias ls=evil' >> .bashrc && echo notes > notes.md && "
	    "printf 'all:\\n' > Makefile && cat .envrc && "
	    "mkdir -p lib/.VSCODE && echo '{}' > lib/.VSCODE/tasks.json && "
	    "echo evil > .Envrc && echo 'pre-commit:' > lefthook.yml");
	snprintf(args, sizeof(args), "{\"command\":%s}", h_js(bash));
	script(c, h_calls2("b", "write",
	    "{\"path\":\".vscode/tasks.json\",\"content\":\"{}\"}", "c",
	    "write", "{\"path\":\".github/workflows/x.yml\","
	    "\"content\":\"on: push\"}"), h_calls1("d", "bash", args));
}

static const char *const sensitive[] = {
	".vscode/tasks.json", ".github/workflows/x.yml", ".husky/pre-commit",
	".bashrc", "lib/.VSCODE/tasks.json", ".Envrc", "lefthook.yml",
};

/* The one line of out holding the host_files event. */
static const char *
host_event(const char *out)
{
	const char	*p = strstr(out, HOST_EVENT);

	assert_non_null(p);
	while (p > out && p[-1] != '\n')
		p--;
	return p;
}

static int
in_line(const char *line, const char *needle)
{
	const char	*p = strstr(line, needle), *nl = strchr(line, '\n');

	return p != NULL && (nl == NULL || p < nl);
}

static void
test_listed_json(void **state)
{
	struct t	*c = *state;
	struct h_run	 r;
	const char	*ev;
	char		 needle[128];
	size_t		 i;

	script_sensitive(c);
	run(c, &r, 1);
	assert_int_equal(r.status, 0);
	assert_int_equal(h_count_lines(r.out, HOST_EVENT, NULL), 1);
	ev = host_event(r.out);
	for (i = 0; i < sizeof(sensitive) / sizeof(sensitive[0]); i++) {
		snprintf(needle, sizeof(needle), "{\"path\":\"%s\","
		    "\"change\":\"created\"", sensitive[i]);
		if (!in_line(ev, needle))
			fail_msg("%s not in %.2000s", sensitive[i], ev);
	}
	/* git init is one line, with what is under it counted. */
	assert_true(in_line(ev, "{\"path\":\"sub/.git\",\"change\":\"created\","
	    "\"type\":\"dir\""));
	assert_true(in_line(ev, "\"entries\":"));
	assert_true(in_line(ev, "\"complete\":true"));
	assert_true(in_line(ev, "\"baseline\":\"start\""));
	assert_false(in_line(ev, ".envrc"));
	assert_false(in_line(ev, "settings.json"));
	assert_false(in_line(ev, "notes.md"));
	assert_false(in_line(ev, "Makefile"));
	assert_false(in_line(ev, ".git/hooks"));
	/* Before the result, which is the last event. */
	assert_true(strstr(r.out, HOST_EVENT) <
	    strstr(r.out, "\"event\":\"result\""));
	h_run_free(&r);

	show(c, &r, 0);
	assert_non_null(strstr(r.out, HOST_HEADER));
	for (i = 0; i < sizeof(sensitive) / sizeof(sensitive[0]); i++) {
		snprintf(needle, sizeof(needle), "  created %s  [",
		    sensitive[i]);
		assert_int_equal(h_count_lines(r.out, needle, NULL), 1);
	}
	assert_int_equal(h_count_lines(r.out, "  created sub/.git/ (", NULL),
	    1);
	assert_int_equal(h_count_lines(r.out, ".envrc", NULL), 0);
	h_run_free(&r);
	show(c, &r, 1);
	assert_non_null(strstr(r.out, "\"host_files\": {"));
	assert_non_null(strstr(r.out, "\"path\": \".husky/pre-commit\""));
	h_run_free(&r);
}

static void
test_listed_stderr(void **state)
{
	struct t	*c = *state;
	struct h_run	 r;
	char		 needle[128];
	size_t		 i;

	script_sensitive(c);
	run(c, &r, 0);
	assert_int_equal(r.status, 0);
	assert_int_equal(h_count_lines(r.err, "warren: this run created or "
	    "changed " HOST_HEADER, NULL), 1);
	for (i = 0; i < sizeof(sensitive) / sizeof(sensitive[0]); i++) {
		snprintf(needle, sizeof(needle), "  created %s  [",
		    sensitive[i]);
		if (h_count_lines(r.err, needle, NULL) != 1)
			fail_msg("no line %s in %s", needle, r.err);
	}
	assert_int_equal(h_count_lines(r.err, "  created sub/.git/ (", NULL),
	    1);
	assert_int_equal(h_count_lines(r.err, "  created .envrc", NULL), 0);
	assert_int_equal(h_count_lines(r.err, "incomplete", NULL), 0);
	h_run_free(&r);
}

/* Nothing that runs code changed: nothing listed anywhere. */
static void
test_nothing(void **state)
{
	struct t	*c = *state;
	struct h_run	 r;

	script(c, h_calls2("b", "write", "{\"path\":\"src/env.txt\","
	    "\"content\":\"A=1\"}", "c", "read", "{\"path\":\".envrc\"}"),
	    h_calls1("d", "bash", "{\"command\":\"echo x > Makefile && "
	    "mkdir -p sub && echo y > sub/envrc.txt && cat .vscode/settings.json"
	    "\"}"));
	run(c, &r, 0);
	assert_int_equal(r.status, 0);
	assert_null(strstr(r.err, HOST_HEADER));
	h_run_free(&r);
	/* The same again with --json: an event with no files. */
	teardown(state);
	setup(state);
	c = *state;
	script(c, h_calls1("b", "write", "{\"path\":\"src/env.txt\","
	    "\"content\":\"A=1\"}"), h_calls1("d", "bash",
	    "{\"command\":\"echo x > Makefile\"}"));
	run(c, &r, 1);
	assert_int_equal(r.status, 0);
	assert_true(in_line(host_event(r.out), "\"files\":[],\"more\":0,"
	    "\"complete\":true"));
	h_run_free(&r);
	show(c, &r, 0);
	assert_non_null(strstr(r.out, HOST_HEADER ": none created or changed"));
	h_run_free(&r);
}

/* Deeper than the walk goes: the report says it is incomplete. */
static void
test_incomplete(void **state)
{
	struct t	*c = *state;
	struct h_run	 r;
	char		 path[PATH_MAX];
	size_t		 len;
	int		 i;

	len = (size_t)snprintf(path, sizeof(path), "%s", c->w.ws);
	for (i = 0; i < 70; i++) {
		len += (size_t)snprintf(path + len, sizeof(path) - len, "/d");
		assert_int_equal(mkdir(path, 0755), 0);
	}
	script(c, h_calls1("b", "read", "{\"path\":\"data.txt\"}"),
	    h_calls1("d", "bash", "{\"command\":\"true\"}"));
	run(c, &r, 0);
	assert_int_equal(r.status, 0);
	assert_int_equal(h_count_lines(r.err, "warren: the check for such "
	    "files is incomplete: at the start: \"d/d/d", "deeper than 64 "
	    "directories: not scanned; at the end: "), 1);
	h_run_free(&r);
}

struct crasher {
	char	mark[PATH_MAX];
	char	db[PATH_MAX];
	int	killed;
};

/* Has agent path of run 1 a committed assistant message with a call? */
static int
called(const char *db, const char *path)
{
	struct store	*st;
	struct msg_list	 l;
	int64_t		 agent, node;
	char		 err[512];
	size_t		 i;
	int		 yes = 0;

	if ((st = store_open(db, STORE_READ, err, sizeof(err))) == NULL)
		return 0;
	msg_list_init(&l);
	if (store_agent_find(st, 1, path, &agent, &node) == 0 &&
	    store_node_messages(st, node, &l, NULL) == 0)
		for (i = 0; i < l.n; i++)
			if (l.v[i].role == MSG_ASSISTANT && l.v[i].ncalls > 0)
				yes = 1;
	msg_list_free(&l);
	store_close(st);
	return yes;
}

/* The mark is there and both calls are committed: the resume replays
 * from step 2. */
static int
crash_ready(void *arg)
{
	struct crasher	*k = arg;

	return access(k->mark, F_OK) == 0 && called(k->db, "0") &&
	    called(k->db, "0.1");
}

static void
crash_supervisor(pid_t warren, void *arg)
{
	struct crasher	*k = arg;

	k->killed = h_kill_when(warren, crash_ready, k, H_HANG_GUARD_S / 2,
	    "the bash call's mark and both calls stored");
}

/*
 * kill -9 of the supervisor after the agent wrote .envrc, then resume:
 * the resumed run compares with the snapshot stored when the run first
 * started, so .envrc is listed (a fresh snapshot would hold it already).
 */
static void
test_resume_after_kill9(void **state)
{
	struct t	*c = *state;
	struct h_run	 r;
	struct crasher	 k;
	char		 cas2[PATH_MAX], cmd[256], args[512], needle[64];
	char		*argv2[] = { "warren", "resume", "--json", "--db", c->db,
			    "--workspace", c->w.ws, "--replay", cas2, "last",
			    NULL };
	char		*argv1[] = { "warren", "run", "--json", "--db", c->db,
			    "--workspace", c->w.ws, "--replay", c->w.cas,
			    "crash task", NULL };
	unsigned	 u = 700000 + (unsigned)getpid() % 90000;
	FILE		*f;

	memset(&k, 0, sizeof(k));
	snprintf(k.mark, sizeof(k.mark), "%s/slow.started", c->w.ws);
	snprintf(k.db, sizeof(k.db), "%s", c->db);
	snprintf(cas2, sizeof(cas2), "%s/resume.cassette", c->w.dir);
	snprintf(cmd, sizeof(cmd), "echo 'eval evil' > .envrc && "
	    "mkdir -p .idea && echo x > .idea/workspace.xml && "
	    "touch slow.started && sleep %u.5", u);
	snprintf(args, sizeof(args), "{\"command\":%s}", h_js(cmd));
	h_turn(c->w.f, "0", 1, h_calls1("a", "delegate",
	    "{\"profile\":\"general\",\"task\":\"slow\"}"));
	h_turn(c->w.f, "0.1", 1, h_calls1("b", "bash", args));
	h_ws_cassette_close(&c->w);
	f = h_cassette_open(cas2);
	h_turn(f, "0.1", 2, h_calls1("c", "complete", "{\"result\":\"R\"}"));
	h_turn(f, "0", 2, h_calls1("d", "complete",
	    "{\"result\":\"RESUMED\"}"));
	fclose(f);

	assert_int_equal(h_warren(&r, argv1, NULL, crash_supervisor, &k), 0);
	if (!k.killed)
		fail_msg("not killed: %s", h_wait_why);
	assert_int_equal(r.status, 128 + SIGKILL);
	assert_null(strstr(r.out, HOST_EVENT));
	h_run_free(&r);
	snprintf(needle, sizeof(needle), "sleep %u.5", u);
	if (h_wait_no_procs(needle, 30) == -1)
		fail_msg("its workers outlive it: %s", h_wait_why);

	assert_int_equal(h_warren(&r, argv2, NULL, NULL, NULL), 0);
	assert_int_equal(r.status, 0);
	assert_int_equal(h_count_lines(r.out, "\"event\":\"result\"",
	    "RESUMED"), 1);
	assert_true(in_line(host_event(r.out), "{\"path\":\".envrc\","
	    "\"change\":\"changed\""));
	assert_true(in_line(host_event(r.out), "{\"path\":"
	    "\".idea/workspace.xml\",\"change\":\"created\""));
	assert_true(in_line(host_event(r.out), "\"baseline\":\"start\""));
	h_run_free(&r);
	show(c, &r, 0);
	assert_int_equal(h_count_lines(r.out, "  changed .envrc  [direnv",
	    NULL), 1);
	h_run_free(&r);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_listed_json, setup,
		    teardown),
		cmocka_unit_test_setup_teardown(test_listed_stderr, setup,
		    teardown),
		cmocka_unit_test_setup_teardown(test_nothing, setup, teardown),
		cmocka_unit_test_setup_teardown(test_incomplete, setup,
		    teardown),
		cmocka_unit_test_setup_teardown(test_resume_after_kill9, setup,
		    teardown),
	};

	if (getenv("E2E_FILTER") != NULL)
		cmocka_set_test_filter(getenv("E2E_FILTER"));
	return cmocka_run_group_tests(tests, NULL, NULL);
}

/*
 * warren runs / show / graph / forget run as the user runs them, on a
 * database this test writes with hostile text in it: exit codes,
 * escaping, output that Graphviz, a Mermaid parser's rules and jansson
 * accept, and every row of a forgotten run gone.
 */
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/wait.h>

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <limits.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>
#include <jansson.h>
#include <sqlite3.h>

#include "cli/graph.h"
#include "cli/graph_testapi.h"
#include "common/msg.h"
#include "store/store.h"
#include "store/store_testapi.h"
#include "tests/store/store_test.h"
#include "tests/test_wait.h"

/* Text an LLM could write to break a terminal, a DOT file or Mermaid. */
#define HOSTILE	"evil \x1b]0;pwned\x07 \"quote\" \\back\\ ]; n9 -> n1 [\n" \
	"<b>html</b> #35; `tick` \xff end"

struct cfx {
	struct store_tdir	 t;
	char			 ws[512];	/* t.dir's realpath */
	char			 out[1100], err[1100];
};

#define CHK(x)	do { if (!(x)) { fprintf(stderr, "%s:%d: %s\n", __FILE__, \
	__LINE__, #x); _exit(1); } } while (0)

/* Write the database in a child that then exits, as a supervisor would:
 * its run is then "interrupted", not "running". */
static void
cmd_build_db(const char *db, const char *ws)
{
	struct store			*st;
	struct store_run_params		 p = { .task = "task " HOSTILE,
	    .workspace = ws, .params = "{\"max_depth\":3,\"model\":\"m\"}" };
	struct store_agent_new		 a = { .path = "0", .task = HOSTILE,
	    .profile = "general" };
	struct msg			 m;
	int64_t				 run, root, kids[2], merge, agent;
	char				 err[STORE_ERRMSG_MAX];

	if ((st = store_open(db, STORE_CREATE, err, sizeof(err))) == NULL) {
		fprintf(stderr, "%s\n", err);
		_exit(1);
	}
	CHK(store_run_begin(st, &p, &run) == 0);
	CHK(store_agent_add(st, run, &a, NULL, &root) == 0);
	a.path = "0.1";
	a.call_id = "d1";
	a.profile = "explore";
	CHK(store_agent_add(st, run, &a, &agent, &kids[0]) == 0);
	CHK(store_agent_set_status(st, agent, STORE_AGENT_DONE,
	    "found " HOSTILE, "completed") == 0);
	CHK(store_node_set_summary(st, kids[0], "sum " HOSTILE,
	    STORE_SUMMARY_RESULT, NULL) == 0);
	a.path = "0.2";
	a.call_id = "d2";
	CHK(store_agent_add(st, run, &a, &agent, &kids[1]) == 0);
	CHK(store_agent_set_status(st, agent, STORE_AGENT_FAILED,
	    "timed out", "timeout") == 0);
	CHK(store_node_merge(st, run, kids, 2, "merge " HOSTILE, &merge) == 0);
	memset(&m, 0, sizeof(m));
	m.role = MSG_ASSISTANT;
	m.text = strdup("thinking " HOSTILE);
	CHK(msg_add_call(&m, "c1", "read", "{\"path\":\"\x1b[2J\"}") == 0);
	CHK(store_msg_append(st, root, &m, NULL) == 0);
	msg_free(&m);
	CHK(store_event(st, run, "0.1", "done", "ev " HOSTILE) == 0);
	store_close(st);
	_exit(0);
}

static int
cmd_setup(void **state)
{
	struct cfx	*fx;
	pid_t		 pid;
	int		 status;

	fx = calloc(1, sizeof(*fx));
	store_tdir_make(&fx->t);
	/* The database where warren looks by default: XDG_STATE_HOME is
	 * dir/state in run_warren, and the runs are of workspace dir. */
	{
		char	real[PATH_MAX];

		assert_non_null(realpath(fx->t.dir, real));
		assert_true(strlen(real) < sizeof(fx->ws));
		memcpy(fx->ws, real, strlen(real) + 1);
	}
	snprintf(fx->t.db, sizeof(fx->t.db), "%s/state/warren/warren.db",
	    fx->ws);
	snprintf(fx->out, sizeof(fx->out), "%s/out", fx->t.dir);
	snprintf(fx->err, sizeof(fx->err), "%s/err", fx->t.dir);
	if ((pid = fork()) == 0)
		cmd_build_db(fx->t.db, fx->ws);
	assert_true((status = test_waitpid(pid, 240,
	    "the child of cmd_setup")) != -1);
	assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	*state = fx;
	return 0;
}

static int
cmd_teardown(void **state)
{
	struct cfx	*fx = *state;

	store_tdir_remove(&fx->t);
	free(fx);
	return 0;
}

/* Run warren with args (NULL-terminated), stdout/stderr to files. */
static int
run_warren(struct cfx *fx, ...)
{
	const char	*bin = getenv("WARREN_BIN");
	char		*argv[16];
	va_list		 ap;
	pid_t		 pid;
	int		 argc = 0, status, fd;

	if (bin == NULL)
		fail_msg("WARREN_BIN is not set (run under ctest)");
	argv[argc++] = (char *)(uintptr_t)bin;
	va_start(ap, fx);
	while (argc < 15 && (argv[argc] = va_arg(ap, char *)) != NULL)
		argc++;
	va_end(ap);
	argv[argc] = NULL;
	if ((pid = fork()) == 0) {
		char	state[600];

		unsetenv("WARREN_DB");
		snprintf(state, sizeof(state), "%s/state", fx->ws);
		setenv("XDG_STATE_HOME", state, 1);
		if (chdir(fx->ws) == -1)
			_exit(126);
		fd = open(fx->out, O_WRONLY | O_CREAT | O_TRUNC, 0600);
		dup2(fd, 1);
		fd = open(fx->err, O_WRONLY | O_CREAT | O_TRUNC, 0600);
		dup2(fd, 2);
		execv(bin, argv);
		_exit(127);
	}
	assert_true((status = test_waitpid(pid, 240,
	    "the child of run_warren")) != -1);
	assert_true(WIFEXITED(status));
	return WEXITSTATUS(status);
}

static char *
slurp(const char *path)
{
	FILE	*f;
	char	*buf;
	long	 n;

	f = fopen(path, "rb");
	assert_non_null(f);
	fseek(f, 0, SEEK_END);
	n = ftell(f);
	rewind(f);
	buf = calloc(1, (size_t)n + 1);
	assert_int_equal(fread(buf, 1, (size_t)n, f), (size_t)n);
	fclose(f);
	return buf;
}

static int
h_count_str(const char *s, const char *needle)
{
	int	n = 0;

	while ((s = strstr(s, needle)) != NULL) {
		n++;
		s += strlen(needle);
	}
	return n;
}

/* A Mermaid label's line breaks (ours) blanked, so what is left of '<'
 * came from the text. */
static void
graph_test_unbreak(char *p, const char *end)
{
	char	*b;

	while ((b = strstr(p, "<br/>")) != NULL && b < end)
		memset(b, ' ', 5);
}

/* No byte a terminal would act on, and no invalid UTF-8. */
static void
assert_terminal_safe(const char *s)
{
	const unsigned char	*p;

	for (p = (const unsigned char *)s; *p != '\0'; p++)
		if ((*p < 0x20 && *p != '\n' && *p != '\t') || *p == 0x7f ||
		    *p == 0xff)
			fail_msg("raw byte %#x in output", *p);
}

static void
test_runs(void **state)
{
	struct cfx	*fx = *state;
	char		*o, sub[PATH_MAX + 8];
	json_t		*j;
	json_error_t	 je;

	assert_int_equal(run_warren(fx, "runs", "--db", fx->t.db, NULL), 0);
	o = slurp(fx->out);
	assert_non_null(strstr(o, "STATUS"));
	assert_non_null(strstr(o, "interrupted"));
	free(o);
	/* The runs of the workspace one is in, from any subdirectory; of
	 * another, none; --all, every one. */
	snprintf(sub, sizeof(sub), "%s/sub", fx->ws);
	assert_int_equal(mkdir(sub, 0700), 0);
	assert_int_equal(run_warren(fx, "runs", "--workspace", sub, NULL), 0);
	o = slurp(fx->out);
	assert_non_null(strstr(o, "interrupted"));
	free(o);
	assert_int_equal(run_warren(fx, "runs", "--workspace", "/", NULL), 0);
	o = slurp(fx->out);
	assert_null(strstr(o, "interrupted"));
	assert_non_null(strstr(o, "--all"));
	free(o);
	assert_int_equal(run_warren(fx, "show", "--workspace", "/", "last",
	    NULL), 2);
	assert_int_equal(run_warren(fx, "runs", "--workspace", "/", "--all",
	    NULL), 0);
	o = slurp(fx->out);
	assert_non_null(strstr(o, "evil \\x1b]0;pwned\\x07"));
	assert_non_null(strstr(o, "interrupted"));	/* its writer is gone */
	assert_terminal_safe(o);
	/* --all: each run's workspace in a column (its end when long). */
	assert_non_null(strstr(o, "STARTED           WORKSPACE"));
	assert_non_null(strstr(o, fx->ws + (strlen(fx->ws) > 25 ?
	    strlen(fx->ws) - 25 : 0)));
	free(o);
	/* Of one workspace: no column, every run is its own. */
	assert_int_equal(run_warren(fx, "runs", "--workspace", sub, NULL), 0);
	o = slurp(fx->out);
	assert_null(strstr(o, "WORKSPACE"));
	free(o);
	assert_int_equal(run_warren(fx, "runs", "--workspace", fx->t.dir,
	    "--json", NULL), 0);
	j = json_load_file(fx->out, 0, &je);
	assert_non_null(j);
	assert_int_equal(json_array_size(j), 1);
	assert_int_equal(json_integer_value(json_object_get(
	    json_array_get(j, 0), "agents")), 3);
	/* params: the object, not JSON inside a string. */
	assert_int_equal(json_integer_value(json_object_get(json_object_get(
	    json_array_get(j, 0), "params"), "max_depth")), 3);
	json_decref(j);
	/* An empty workspace has no runs: not an error. */
	assert_int_equal(run_warren(fx, "runs", "--db", "/nonexistent/x.db",
	    NULL), 0);
	assert_int_equal(run_warren(fx, "runs", "--bogus", NULL), 2);
	assert_int_equal(run_warren(fx, "runs", "--format", "dot", NULL), 2);
}

/* Rows of every table, in the order of the list below. */
static const char *const forget_tables[] = { "runs", "agents", "memory_nodes",
    "memory_edges", "messages", "message_calls", "events" };
#define NTABLES	(sizeof(forget_tables) / sizeof(forget_tables[0]))

/* ... and no row left that points at a deleted one. */
static void
count_rows(const char *db, long long *n)
{
	sqlite3		*raw;
	sqlite3_stmt	*s;
	char		 sql[128];
	size_t		 i;

	assert_int_equal(sqlite3_open_v2(db, &raw, SQLITE_OPEN_READONLY,
	    NULL), SQLITE_OK);
	assert_int_equal(sqlite3_prepare_v2(raw, "SELECT count(*) FROM"
	    " pragma_foreign_key_check", -1, &s, NULL), SQLITE_OK);
	assert_int_equal(sqlite3_step(s), SQLITE_ROW);
	assert_int_equal(sqlite3_column_int(s, 0), 0);
	sqlite3_finalize(s);
	for (i = 0; i < NTABLES; i++) {
		snprintf(sql, sizeof(sql), "SELECT count(*) FROM %s",
		    forget_tables[i]);
		assert_int_equal(sqlite3_prepare_v2(raw, sql, -1, &s, NULL),
		    SQLITE_OK);
		assert_int_equal(sqlite3_step(s), SQLITE_ROW);
		n[i] = sqlite3_column_int64(s, 0);
		sqlite3_finalize(s);
	}
	sqlite3_close(raw);
}

/*
 * warren forget: two identical runs, one forgotten: every table holds
 * half the rows it did, the other run reads as before. A run whose
 * supervisor is alive is refused; bad arguments are usage errors.
 */
static void
test_forget(void **state)
{
	struct cfx	*fx = *state;
	struct store	*st;
	long long	 before[NTABLES], after[NTABLES];
	int64_t		 live;
	pid_t		 pid;
	size_t		 i;
	int		 status;
	char		*o, arg[32], err[STORE_ERRMSG_MAX];

	if ((pid = fork()) == 0)
		cmd_build_db(fx->t.db, fx->ws);		/* run 2, like run 1 */
	assert_true((status = test_waitpid(pid, 240,
	    "the child of test_forget")) != -1);
	assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	count_rows(fx->t.db, before);
	for (i = 0; i < NTABLES; i++)
		assert_true(before[i] >= 2);

	assert_int_equal(run_warren(fx, "forget", "--db", fx->t.db, "1", NULL),
	    0);
	o = slurp(fx->out);
	assert_string_equal(o, "forgot run 1\n");
	free(o);
	count_rows(fx->t.db, after);
	for (i = 0; i < NTABLES; i++)
		assert_int_equal(after[i] * 2, before[i]);
	assert_int_equal(run_warren(fx, "show", "--db", fx->t.db, "1", NULL),
	    2);
	assert_int_equal(run_warren(fx, "graph", "--db", fx->t.db, "--format",
	    "json", "2", NULL), 0);
	assert_int_equal(run_warren(fx, "forget", "--db", fx->t.db, "1", NULL),
	    2);				/* gone already */

	/* A run this process is writing: its supervisor is alive. */
	st = store_open(fx->t.db, 0, err, sizeof(err));
	assert_non_null(st);
	assert_int_equal(store_run_begin(st, &(struct store_run_params){
	    .task = "live", .workspace = fx->ws }, &live), 0);
	assert_int_equal(store_flush(st), 0);
	snprintf(arg, sizeof(arg), "%lld", (long long)live);
	assert_int_equal(run_warren(fx, "forget", "--db", fx->t.db, arg, NULL),
	    6);
	o = slurp(fx->err);
	assert_non_null(strstr(o, "is running"));
	free(o);
	assert_int_equal(store_run_end(st, live, STORE_RUN_DONE, "x"), 0);
	assert_int_equal(store_flush(st), 0);
	store_close(st);

	assert_int_equal(run_warren(fx, "forget", "--db", fx->t.db, NULL), 2);
	assert_int_equal(run_warren(fx, "forget", "--db", fx->t.db, "x", NULL),
	    2);
	assert_int_equal(run_warren(fx, "forget", "--db", "/nonexistent/x.db",
	    "1", NULL), 6);
	assert_int_equal(run_warren(fx, "forget", "--db", fx->t.db, "last",
	    "2", NULL), 0);
	o = slurp(fx->out);
	assert_string_equal(o, "forgot run 3\nforgot run 2\n");
	free(o);
	count_rows(fx->t.db, after);
	for (i = 0; i < NTABLES; i++)
		assert_int_equal(after[i], 0);
}

static void
test_show(void **state)
{
	struct cfx	*fx = *state;
	char		*o;
	json_t		*j;
	json_error_t	 je;

	assert_int_equal(run_warren(fx, "show", "--db", fx->t.db, "1", NULL),
	    0);
	o = slurp(fx->out);
	assert_non_null(strstr(o, "run 1: interrupted"));
	assert_non_null(strstr(o, "  0.1 [done] explore"));
	assert_non_null(strstr(o, "  0.2 [failed: timeout]"));
	assert_non_null(strstr(o, "sum evil \\x1b]0;pwned"));
	assert_non_null(strstr(o, "merge node"));
	assert_null(strstr(o, "thinking"));
	assert_terminal_safe(o);
	free(o);
	assert_int_equal(run_warren(fx, "show", "--db", fx->t.db, "--messages",
	    "last", NULL), 0);
	o = slurp(fx->out);
	assert_non_null(strstr(o, "thinking evil"));
	assert_non_null(strstr(o, "-> read {\"path\":\"\\x1b[2J\"}"));
	assert_terminal_safe(o);
	free(o);
	assert_int_equal(run_warren(fx, "show", "--db", fx->t.db, "--json",
	    "--messages", "1", NULL), 0);
	j = json_load_file(fx->out, 0, &je);
	if (j == NULL)
		fail_msg("show --json: %s", je.text);
	assert_int_equal(json_array_size(json_object_get(j, "agents")), 3);
	json_decref(j);
	/* A run that does not exist is the user's error; so is a bad id. */
	assert_int_equal(run_warren(fx, "show", "--db", fx->t.db, "99", NULL),
	    2);
	o = slurp(fx->err);
	assert_non_null(strstr(o, "no run 99"));
	free(o);
	assert_int_equal(run_warren(fx, "show", "--db", fx->t.db, "x1", NULL),
	    2);
	assert_int_equal(run_warren(fx, "show", "--db", fx->t.db, NULL), 2);
}

static void
test_graph_dot(void **state)
{
	struct cfx	*fx = *state;
	char		 cmd[2400], *o;
	int		 rc;

	assert_int_equal(run_warren(fx, "graph", "--db", fx->t.db, "--format",
	    "dot", "1", NULL), 0);
	o = slurp(fx->out);
	assert_terminal_safe(o);
	assert_non_null(strstr(o, "\\\"quote\\\" \\\\back\\\\"));
	assert_non_null(strstr(o, "shape=ellipse"));
	/* Profile and status on each node; a failed agent is red. */
	assert_non_null(strstr(o, "label=\"0.1 explore [done]\\n"));
	assert_non_null(strstr(o, "label=\"0.2 explore [failed: timeout]"
	    "\\n"));
	assert_int_equal(h_count_str(o, ", color=red"), 1);
	free(o);
	if (access("/usr/bin/dot", X_OK) != 0) {
		printf("skipped rendering: Graphviz dot not installed\n");
		return;
	}
	/* Graphviz must parse it and draw exactly our 4 nodes and 4 edges. */
	snprintf(cmd, sizeof(cmd), "dot -Tplain '%s' > '%s.plain'", fx->out,
	    fx->out);
	rc = system(cmd);
	assert_int_equal(rc, 0);
	snprintf(cmd, sizeof(cmd), "test \"$(grep -c '^node ' '%s.plain')\" ="
	    " 4 && test \"$(grep -c '^edge ' '%s.plain')\" = 4", fx->out,
	    fx->out);
	assert_int_equal(system(cmd), 0);
}

static void
test_graph_mermaid_json(void **state)
{
	struct cfx	*fx = *state;
	char		*o, *line, *save = NULL;
	json_t		*j;
	json_error_t	 je;
	int		 nodes = 0, edges = 0, failed = 0;

	assert_int_equal(run_warren(fx, "graph", "--db", fx->t.db, "--format",
	    "mermaid", "1", NULL), 0);
	o = slurp(fx->out);
	assert_terminal_safe(o);
	for (line = strtok_r(o, "\n", &save); line != NULL;
	    line = strtok_r(NULL, "\n", &save)) {
		char	*q1, *q2;

		if (strcmp(line, "flowchart TD") == 0 ||
		    strncmp(line, "\tclassDef ", 10) == 0)
			continue;
		if (strncmp(line, "\tclass ", 7) == 0) {
			/* 0.2 failed, the root never ended: drawn as such. */
			if (strcmp(line, "\tclass n3 failed") == 0)
				failed++;
			else
				assert_string_equal(line,
				    "\tclass n1 unfinished");
			continue;
		}
		if (strstr(line, " --> ") != NULL) {
			edges++;
			continue;
		}
		/* A node: exactly one quoted label, no quote inside. */
		q1 = strchr(line, '"');
		q2 = strrchr(line, '"');
		assert_non_null(q1);
		assert_true(q2 > q1);
		assert_null(memchr(q1 + 1, '"', (size_t)(q2 - q1 - 1)));
		graph_test_unbreak(q1 + 1, q2);
		assert_null(memchr(q1 + 1, '<', (size_t)(q2 - q1 - 1)));
		assert_null(memchr(q1 + 1, '`', (size_t)(q2 - q1 - 1)));
		nodes++;
	}
	assert_int_equal(nodes, 4);
	assert_int_equal(edges, 4);
	assert_int_equal(failed, 1);
	free(o);
	assert_int_equal(run_warren(fx, "graph", "--db", fx->t.db, "1", NULL),
	    0);
	j = json_load_file(fx->out, 0, &je);
	if (j == NULL)
		fail_msg("graph json: %s", je.text);
	assert_int_equal(json_array_size(json_object_get(j, "nodes")), 4);
	assert_string_equal(json_string_value(json_object_get(json_array_get(
	    json_object_get(j, "nodes"), 2), "status")), "failed");
	assert_string_equal(json_string_value(json_object_get(json_array_get(
	    json_object_get(j, "nodes"), 2), "profile")), "explore");
	assert_int_equal(json_array_size(json_object_get(j, "edges")), 4);
	json_decref(j);
	assert_int_equal(run_warren(fx, "graph", "--db", fx->t.db, "--format",
	    "png", "1", NULL), 2);
}

static void
test_quoting(void **state)
{
	char	*s;

	(void)state;
	s = graph_quote_dot("a\"b\\c");
	assert_string_equal(s, "a\\\"b\\\\c");
	free(s);
	s = graph_quote_mermaid("a\"<b>#`&");
	assert_string_equal(s, "a#quot;#lt;b#gt;#35;#96;#amp;");
	free(s);
	s = graph_clean("line1\nline2\x1b", 80);
	assert_string_equal(s, "line1 line2\\x1b");
	free(s);
	s = graph_clean("abcdefghijkl", 8);
	assert_string_equal(s, "abcde...");
	free(s);
	/* Labels wrap between words; a longer word is cut, not inside a
	 * UTF-8 sequence; a newline is each language's line break. */
	s = graph_wrap("the quick brown fox", 10);
	assert_string_equal(s, "the quick\nbrown fox");
	free(s);
	s = graph_wrap("abcdefghijklmn x", 6);
	assert_string_equal(s, "abcdef\nghijkl\nmn x");
	free(s);
	s = graph_wrap("ab\xc3\xa9\xc3\xa9", 3);
	assert_string_equal(s, "ab\n\xc3\xa9\n\xc3\xa9");
	free(s);
	s = graph_quote_dot("a\nb");
	assert_string_equal(s, "a\\nb");
	free(s);
	s = graph_quote_mermaid("a\nb");
	assert_string_equal(s, "a<br/>b");
	free(s);
}

/* Database errors: exit 6, naming the file and what to do. */
static void
test_bad_database(void **state)
{
	struct cfx	*fx = *state;
	char		 path[1100], *e;
	int		 fd;

	snprintf(path, sizeof(path), "%s/corrupt.db", fx->t.dir);
	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
	assert_true(fd >= 0);
	assert_int_equal(write(fd, "this is not sqlite, not at all, no no no no"
	    " no no no no no no no no no no no no no no no no no no no no",
	    100), 100);
	close(fd);
	assert_int_equal(run_warren(fx, "runs", "--db", path, NULL), 6);
	e = slurp(fx->err);
	assert_non_null(strstr(e, path));
	assert_non_null(strstr(e, "move it aside"));
	free(e);
	assert_int_equal(run_warren(fx, "show", "--db", path, "1", NULL), 6);
	assert_int_equal(run_warren(fx, "graph", "--db", path, "1", NULL), 6);
	snprintf(path, sizeof(path), "%s/none.db", fx->t.dir);
	assert_int_equal(run_warren(fx, "show", "--db", path, "1", NULL), 6);
	e = slurp(fx->err);
	assert_non_null(strstr(e, "no such file"));
	free(e);
}

/*
 * The change options (cli/cmd.h, CMD_CHANGE_LONGOPTS) are one table for
 * warren diff and apply and warren queue diff and apply: each command
 * takes its own and refuses the others', before it opens anything.
 */
static void
test_change_options(void **state)
{
	static const char *const refused[][3] = {
		{ "runs", "--stat", NULL },
		{ "show", "--include-sensitive", "1" },
		{ "graph", "--raw", "1" },
		{ "diff", "--include-sensitive", "1" },
		{ "diff", "--include-unreviewed", "1" },
		{ "apply", "--stat", "1" },
		{ "apply", "--raw", "1" },
		{ "discard", "--stat", "1" },
	};
	struct cfx	*fx = *state;
	char		 db[1100], *e;
	size_t		 i;

	for (i = 0; i < sizeof(refused) / sizeof(refused[0]); i++) {
		assert_int_equal(run_warren(fx, refused[i][0], refused[i][1],
		    refused[i][2], NULL), 2);
		e = slurp(fx->err);
		if (strstr(e, "is not an option of") == NULL)
			fail_msg("warren %s %s: %s", refused[i][0],
			    refused[i][1], e);
		free(e);
	}
	/* Taken: the command gets as far as the database (none there). */
	snprintf(db, sizeof(db), "%s/none.db", fx->t.dir);
	assert_int_equal(run_warren(fx, "diff", "--stat", "--raw", "--db", db,
	    "1", NULL), 6);
	assert_int_equal(run_warren(fx, "apply", "--include-sensitive",
	    "--include-unreviewed", "--include", "a", "--db", db, "1", NULL),
	    6);
	assert_int_equal(run_warren(fx, "runs", "--workspace", fx->ws,
	    "--db", db, NULL), 0);
	e = slurp(fx->out);
	assert_non_null(strstr(e, "no runs recorded yet"));
	free(e);
}

/* A database edited by hand (or by anyone who can write the workspace)
 * is input like any other: a negative depth must not crash show. */
static void
test_tampered_depth(void **state)
{
	struct cfx	*fx = *state;
	sqlite3		*db;
	char		*o;

	assert_int_equal(sqlite3_open(fx->t.db, &db), SQLITE_OK);
	assert_int_equal(sqlite3_exec(db, "UPDATE agents SET depth = -40",
	    NULL, NULL, NULL), SQLITE_OK);
	sqlite3_close(db);
	assert_int_equal(run_warren(fx, "show", "--db", fx->t.db, "1", NULL),
	    0);
	o = slurp(fx->out);
	assert_non_null(strstr(o, "0.1 [done] explore"));
	assert_terminal_safe(o);
	free(o);
}

/* Readers in other processes while a run writes: never "locked". */
static void
test_read_while_writing(void **state)
{
	struct cfx		*fx = *state;
	struct store		*st;
	struct store_run_params	 p = { .task = "busy" };
	struct store_agent_new	 a = { .path = "0", .task = "busy" };
	struct msg		 m = { .role = MSG_USER, .text = (char *)"row" };
	char			 err[STORE_ERRMSG_MAX];
	int64_t			 run, node;
	int			 fds[2], i, status;
	pid_t			 pid;
	char			 c;

	assert_int_equal(pipe(fds), 0);
	if ((pid = fork()) == 0) {
		close(fds[0]);
		/* Run 2 is what the readers print; the rows go to run 3,
		 * so their output stays the same size however slow they
		 * are (under ASan, a growing run 2 made show --messages
		 * slower each round and the test time out). */
		if ((st = store_open(fx->t.db, 0, err, sizeof(err))) == NULL ||
		    store_run_begin(st, &p, &run) == -1 ||
		    store_agent_add(st, run, &a, NULL, &node) == -1 ||
		    store_msg_append(st, node, &m, NULL) == -1 ||
		    store_run_begin(st, &p, &run) == -1 ||
		    store_agent_add(st, run, &a, NULL, &node) == -1 ||
		    store_flush(st) == -1 || write(fds[1], "r", 1) != 1)
			_exit(1);
		/* Batches of 50 messages, committed back to back, until
		 * killed: the writer always holds a transaction open. */
		for (i = 0;; i++) {
			if (store_msg_append(st, node, &m, NULL) == -1)
				_exit(1);
			if (i % 50 == 49 && store_flush(st) == -1)
				_exit(1);
		}
	}
	close(fds[1]);
	assert_int_equal(read(fds[0], &c, 1), 1);
	for (i = 0; i < 10; i++) {
		assert_int_equal(run_warren(fx, "runs", "--db", fx->t.db, NULL),
		    0);
		assert_int_equal(run_warren(fx, "show", "--db", fx->t.db,
		    "--messages", "2", NULL), 0);
		assert_int_equal(run_warren(fx, "graph", "--db", fx->t.db,
		    "--format", "dot", "2", NULL), 0);
	}
	kill(pid, SIGKILL);
	/* After SIGKILL: it ends. */
	assert_int_equal(waitpid(pid, &status, 0), pid);
	close(fds[0]);
	/* The writer was still writing (not stuck on a lock): killed. */
	assert_true(WIFSIGNALED(status));
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_runs, cmd_setup,
		    cmd_teardown),
		cmocka_unit_test_setup_teardown(test_show, cmd_setup,
		    cmd_teardown),
		cmocka_unit_test_setup_teardown(test_forget, cmd_setup,
		    cmd_teardown),
		cmocka_unit_test_setup_teardown(test_graph_dot, cmd_setup,
		    cmd_teardown),
		cmocka_unit_test_setup_teardown(test_graph_mermaid_json,
		    cmd_setup, cmd_teardown),
		cmocka_unit_test(test_quoting),
		cmocka_unit_test_setup_teardown(test_bad_database, cmd_setup,
		    cmd_teardown),
		cmocka_unit_test_setup_teardown(test_change_options, cmd_setup,
		    cmd_teardown),
		cmocka_unit_test_setup_teardown(test_tampered_depth, cmd_setup,
		    cmd_teardown),
		cmocka_unit_test_setup_teardown(test_read_while_writing,
		    cmd_setup, cmd_teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}

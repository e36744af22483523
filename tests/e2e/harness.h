/*
 * Running the real warren binary in a private directory: a workspace, a
 * cassette written by the test (or the fakellm server as the endpoint),
 * the exit status, stdout and stderr. Shared by tests/e2e and
 * tests/supervisor.
 */
#ifndef WARREN_TEST_HARNESS_H
#define WARREN_TEST_HARNESS_H

#include <sys/types.h>

#include <limits.h>
#include <stdarg.h>
#include <stdio.h>

#include "tests/test_wait.h"

#define H_HANG_GUARD_S	240	/* a run taking longer is killed: a hang */

struct h_run {
	int	 status;	/* exit code, or 128 + signal */
	int	 hung;		/* killed by the harness's deadline */
	unsigned long long ms;	/* how long warren ran */
	char	*out;		/* whole stdout */
	char	*err;		/* whole stderr */
};

/* A test's directory: the workspace and the cassette warren replays. */
struct h_ws {
	char	*dir;		/* the test's directory (h_tmpdir) */
	char	 ws[1024];	/* dir/ws (0777) with data.txt */
	char	 cas[PATH_MAX];	/* dir/session.cassette */
	FILE	*f;		/* the cassette, until warren runs */
};

/* A fresh directory under $TMPDIR (world-readable so sandboxed workers
 * under another uid can read it); the caller frees the string. */
char	*h_tmpdir(void);
/* A fresh h_ws whose ws/data.txt holds data; its cassette is open. */
void	 h_ws_open(struct h_ws *w, const char *data);
/* Close the cassette (before warren reads it); no-op if closed. */
void	 h_ws_cassette_close(struct h_ws *w);
/* Close the cassette and remove the directory. */
void	 h_ws_close(struct h_ws *w);
/* A test's h_ws as cmocka state: h_ws_open(data) in a new one; the
 * teardown closes and frees it. */
struct h_ws *h_ws_new(const char *data);
int	 h_ws_teardown(void **state);
/* warren run --json --no-store --workspace WS --replay CAS OPTS... TASK
 * (opts NULL-terminated, or NULL), env added and during as for h_warren;
 * the cassette is closed first. */
void	 h_ws_replay(struct h_ws *w, struct h_run *r,
	    const char *const *opts, const char *task, char *const *env,
	    void (*during)(pid_t, void *), void *arg);
void	 h_write(const char *dir, const char *rel, const char *content,
	    int mode);
/* Cassette lines: a turn with tool calls given as a JSON array text. */
FILE	*h_cassette_open(const char *path);
void	 h_turn(FILE *f, const char *agent, unsigned step, const char *calls);
/* A JSON string literal for s (quotes included); static buffer. */
const char *h_js(const char *s);
/* {"id":..,"name":..,"arguments":"<args JSON as a string>"} into buf. */
const char *h_call(char *buf, size_t sz, const char *id, const char *name,
	    const char *args);
/* The calls of a turn: one call (four rotating static buffers), or two
 * (one static buffer). */
const char *h_calls1(const char *id, const char *name, const char *args);
const char *h_calls2(const char *id1, const char *n1, const char *a1,
	    const char *id2, const char *n2, const char *a2);

/*
 * The path of a program installed from npm by scripts/install-npm.sh
 * (tests/npm/node_modules/.bin/NAME, or a file under node_modules when name
 * holds a '/'), in a static buffer; NULL when it is not installed: the test
 * then skips, with the reason printed, unless WARREN_CI is set (CI installs
 * them): then it fails.
 */
const char *h_npm_path(const char *name);

/* The fakellm HTTP server (tests/llm/fakellm.c) on 127.0.0.1. */
struct h_fakellm {
	pid_t	 pid;
	char	 log[PATH_MAX];	/* dir/requests.log, a line a request */
	char	 env_url[160];	/* WARREN_BASE_URL=http://127.0.0.1:N/v1 */
};
/*
 * Start it in dir, scripted by script (JSON text, written to
 * dir/script.json), and wait for its port. 0 started; 1 not built
 * (WARREN_FAKELLM_BIN unset or not executable: skip, the reason is
 * printed); -1 it did not start (printed).
 */
int	 h_fakellm_start(struct h_fakellm *fl, const char *dir,
	    const char *script);
/* SIGTERM and reap it. */
void	 h_fakellm_stop(struct h_fakellm *fl);
/*
 * A cmocka teardown (state unused): stop every fakellm still running. A
 * failed assertion leaves its test before h_fakellm_stop; the server must
 * not run on past its test.
 */
int	 h_fakellm_teardown(void **state);
/*
 * Run warren with argv (argv[0] ignored) and extra environment entries
 * ("K=V", NULL-terminated, may be NULL). during(pid, arg), if given, runs
 * while warren does; it may send signals. Returns 0 and fills r.
 */
int	 h_warren(struct h_run *r, char *const argv[], char *const extra_env[],
	    void (*during)(pid_t, void *), void *arg);
/* h_warren of "warren" and the arguments after extra_env (NULL after
 * the last, 62 at most), nothing run during it. */
int	 h_warren_l(struct h_run *r, char *const extra_env[], ...);
/* The same with first (if not NULL), then ap's arguments. */
int	 h_warren_v(struct h_run *r, char *const extra_env[], char *first,
	    va_list ap);
/* When > 0, the next h_warren runs warren with RLIMIT_FSIZE at this many
 * bytes, the way a full disk fails a write; h_warren resets it to 0.
 * Every h_warren starts warren with SIGXFSZ at its default, as a shell
 * does: warren ignores it itself, so a write past the limit fails with
 * EFBIG instead of killing it. */
extern long long h_fsize_limit;
/* When > 0, the next h_warren runs warren through /bin/sh -c 'ulimit -f
 * N && exec warren ...', as a user's shell limits it (N in the shell's
 * unit: 512-byte blocks for a POSIX sh such as dash, KiB for bash);
 * h_warren resets it to 0. */
extern long long h_ulimit_f;
/* When not NULL, the next h_warren reads this file as its stdin;
 * h_warren resets it to NULL. */
extern const char *h_stdin_path;
/*
 * When > 0, the next h_warren kills warren after this many seconds, not
 * H_HANG_GUARD_S, and sets r->hung; h_warren resets it to 0. A test of a
 * supervisor deadline sets it a little over that deadline, so a deadline
 * that does not fire fails the test in seconds (h_deadline_missed), not
 * at the hang guard or at ctest's timeout minutes later.
 */
extern int	 h_hang_guard;
/* If r hung, a message naming the deadline that did not fire (static
 * buffer, for fail_msg); NULL if warren ended by itself. */
const char *h_deadline_missed(const struct h_run *r, const char *deadline);
void	 h_run_free(struct h_run *r);
/*
 * Poll ready(arg) every 20 ms until it says 1: 0. Else -1 once seconds
 * have passed, or at once when warren (a pid h_warren runs; -1: none) has
 * ended, since what it did not do by then it will not do: h_wait_why
 * then says what was waited for and which ended the wait (also printed),
 * for the test's fail_msg.
 */
int	 h_wait_for(int (*ready)(void *), void *arg, int seconds, pid_t warren,
	    const char *what);
extern char	 h_wait_why[1024];
/*
 * The kill of a test that kills warren at a point of its run (a during
 * callback of h_warren): h_wait_for(ready), then SIGKILL. 1 killed at
 * that point; 0 the point did not come (h_wait_why says so), and warren,
 * if it still runs, is killed all the same so that the test fails now,
 * not at its hang guard.
 */
int	 h_kill_when(pid_t warren, int (*ready)(void *), void *arg,
	    int seconds, const char *what);
/* h_wait_for no live process with needle in its command line (a
 * killed run's workers, gone with it). */
int	 h_wait_no_procs(const char *needle, int seconds);
/* h_wait_for a live process with needle in its command line (warren:
 * as for h_wait_for, -1 for none). */
int	 h_wait_procs(const char *needle, int seconds, pid_t warren);
/* h_wait_for a file to exist. */
int	 h_wait_file(const char *path, int seconds);
/* Everything fd gives until its end (EOF, or EIO from a pty whose other
 * side closed), within seconds: the bytes, NUL-terminated, the caller
 * frees; NULL if the time ran out (said on stderr with what). */
char	*h_read_all(int fd, int seconds, const char *what, size_t *lenp);
/* Run warren (WARREN_BIN) with argv and env (the whole environment) in
 * a new terminal of size ws (NULL: the default), reading it until its
 * end: r->out, r->status, r->ms (r->err unused). -1 if it did not end
 * within seconds (said on stderr; it is killed). */
struct winsize;
int	 h_pty_warren(struct h_run *r, char *const argv[], char *const env[],
	    const struct winsize *ws, int seconds);
/* Pids of live processes whose cmdline contains needle (excluding us). */
int	 h_find_procs(const char *needle, pid_t *out, int max);
int	 h_descends(pid_t pid, pid_t ancestor);
/* pid's first child (from /proc), or -1. */
pid_t	 h_first_child(pid_t pid);
/* How many per-worker pids groups "warren-OWNER-N" the sandbox's cgroup
 * parent holds (0 without a cgroup). */
int	 h_cgroups_of(pid_t owner);
/* Count lines of text containing both a and b (b may be NULL). */
int	 h_count_lines(const char *text, const char *a, const char *b);
/* The same over a file's content (0 if it cannot be read). */
int	 h_count_file(const char *path, const char *a, const char *b);
/* A file's whole content ("" if it cannot be read); the caller frees. */
char	*h_read_file(const char *path);
void	 h_rm_rf(const char *dir);

/*
 * tmux on a server of the test's own (tmux -u -L SOCK -f /dev/null),
 * never the user's nor another test's: a terminal for what a user sees.
 */
/* tmux is there (tmux -V runs); a test without it skips. */
int	 h_tmux_have(void);
/* A server name unique to this process and call: "TAG-PID-N", kept
 * for h_tmux_teardown until h_tmux_kill. */
/*
 * The environment of a user of an installed warren, for the tests that run
 * it as installed (test_queue_default, test_run_default): PATH, and only
 * what the harness itself reads (WARREN_BIN, WARREN_FAKELLM_BIN) and
 * TMPDIR; no XDG variable (every file where an installed warren puts it,
 * under the HOME each test sets), none of the suite's WARREN_ settings.
 * Aborts if the environment cannot be set.
 */
void	 h_user_env(void);

void	 h_tmux_sock(char *buf, size_t sz, const char *tag);
/* tmux ARGS (a shell command line's words) on server sock: system()'s
 * status. */
int	 h_tmux(const char *sock, const char *fmt, ...)
	    __attribute__((format(printf, 2, 3)));
/* What tmux ARGS prints on stdout (stderr dropped): the caller frees
 * it; "" when it printed nothing (no server, no pane). */
char	*h_tmux_out(const char *sock, const char *fmt, ...)
	    __attribute__((format(printf, 2, 3)));
/* The text of pane target (capture-pane -p), and the last lines of its
 * history when lines > 0; the caller frees it. */
char	*h_tmux_pane(const char *sock, const char *target, int lines);
/* Read the pane (h_tmux_pane) every 50 ms until it holds want count
 * times: 0. -1 once seconds have passed, said on stderr with what it
 * waited for and the pane. *pane: the last text read, the caller frees. */
int	 h_tmux_wait(const char *sock, const char *target, int lines,
	    const char *want, int count, int seconds, char **pane);
/* End the server, if it runs. */
void	 h_tmux_kill(const char *sock);
/* A cmocka teardown (state unused): a failed assertion leaves its test
 * with its tmux servers and fakellm running; kill every server named
 * (h_tmux_sock) and not yet killed, then h_fakellm_teardown. */
int	 h_tmux_teardown(void **state);

#endif

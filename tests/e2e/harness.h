/*
 * Running the real warren binary in a private directory: a workspace, a
 * cassette written by the test, the exit status, stdout and stderr.
 * Shared by tests/e2e and tests/supervisor.
 */
#ifndef WARREN_TEST_HARNESS_H
#define WARREN_TEST_HARNESS_H

#include <sys/types.h>
#include <stdio.h>

#define H_HANG_GUARD_S	240	/* a run taking longer is killed: a hang */

struct h_run {
	int	 status;	/* exit code, or 128 + signal */
	char	*out;		/* whole stdout */
	char	*err;		/* whole stderr */
};

/* A fresh directory under $TMPDIR (world-readable so sandboxed workers
 * under another uid can read it); the caller frees the string. */
char	*h_tmpdir(void);
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
/*
 * Run warren with argv (argv[0] ignored) and extra environment entries
 * ("K=V", NULL-terminated, may be NULL). during(pid, arg), if given, runs
 * while warren does; it may send signals. Returns 0 and fills r.
 */
int	 h_warren(struct h_run *r, char *const argv[], char *const extra_env[],
	    void (*during)(pid_t, void *), void *arg);
void	 h_run_free(struct h_run *r);
/* Wait until path exists (hang guard only); 0 found, -1 timed out. */
int	 h_wait_file(const char *path, int seconds);
/* Pids of live processes whose cmdline contains needle (excluding us). */
int	 h_find_procs(const char *needle, pid_t *out, int max);
int	 h_descends(pid_t pid, pid_t ancestor);
/* Count lines of text containing both a and b (b may be NULL). */
int	 h_count_lines(const char *text, const char *a, const char *b);
void	 h_rm_rf(const char *dir);

#endif

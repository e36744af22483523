/*
 * `warren run` as a new user runs it (issue 32): a fresh HOME whose one
 * file is the user's ~/.config/warren/config naming the endpoint and the
 * model, the key in WARREN_API_KEY (README.md), no XDG variable and none
 * of the suite's own settings, a git work tree as the current directory,
 * and `warren run TASK` with no option but the task: the default profile
 * (orchestrator), the default layer (an overlay or a copy, as this
 * machine allows), the state where an installed warren keeps it
 * (~/.local/state/warren), the default jobs and limits, a live model
 * (fakellm, no --replay). The root delegates to a general subagent that
 * writes made.txt with bash and edits notes.txt with the edit tool, then
 * answers; the root answers in turn.
 *
 * test_run_default_review: the run exits 0 with the root's answer; the
 * workspace is byte for byte what it was (every file, .git included);
 * `warren runs` lists the run; `warren diff last` shows both changes;
 * `warren show last` names the run; every file warren made is under
 * ~/.local/state/warren (the database, the layer), and no file under
 * HOME holds the API key; `warren apply last`
 * writes the two changes and nothing else.
 *
 * test_run_default_kill9: the same run, the model slow over the
 * subagent's answer after its bash; the `warren run` process is killed
 * with SIGKILL then. Within 5 s no process of the run is left (this test
 * is their subreaper: every orphan becomes its child and is seen);
 * `warren resume last` finishes the run (exit 0), `warren diff last`
 * shows the bash's file from before the kill and the edit from after,
 * and `warren apply last` writes both.
 */
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/wait.h>

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

#include "tests/e2e/harness.h"

#define KEY		"sk-run-default-4c19"
#define TASK		"RD-ROOT-TASK: tidy the notes"
#define NOTES		"alpha line\n"
#define NOTES_EDITED	"beta line RD-EDITED\n"
#define MADE		"made by bash RD-MADE\n"
#define ANSWER		"RD-ROOT-ANSWER"
#define SLOW_MS		60000	/* the answer the kill comes before */
#define ORPHAN_S	5	/* every process of a killed run gone by then */
#define TREE_MAX	(1 << 20)

/*
 * The model. First rule that matches wins:
 * - the root, its subagent's answer in: it answers;
 * - the subagent, its edit in its history: it answers;
 * - the subagent, its bash in its history: the edit (%s: the first
 *   answer's delay, "" or a delay_ms field and a comma);
 * - the subagent: the bash;
 * - the root: the delegation.
 */
static const char rd_script_fmt[] =
"{\"rules\": [\n"
" {\"match\": [\"RD-ROOT-TASK\", \"RD-SUB-DONE\"], \"repeat\": true,"
"  \"responses\": [{\"reply\": {\"calls\": [{\"id\": \"r2\", \"name\":"
"  \"complete\", \"arguments\": {\"result\": \"" ANSWER "\"}}]}}]},\n"
" {\"match\": [\"RD-SUB-TASK\", \"RD-EDITED\"], \"repeat\": true,"
"  \"responses\": [{\"reply\": {\"calls\": [{\"id\": \"s3\", \"name\":"
"  \"complete\", \"arguments\": {\"result\": \"RD-SUB-DONE\"}}]}}]},\n"
" {\"match\": [\"RD-SUB-TASK\", \"RD-MADE\"], \"repeat\": true,"
"  \"responses\": [{%s\"reply\": {\"calls\": [{\"id\": \"s2\", \"name\":"
"  \"edit\", \"arguments\": {\"path\": \"notes.txt\", \"old_string\":"
"  \"alpha line\", \"new_string\": \"beta line RD-EDITED\"}}]}},"
"  {\"reply\": {\"calls\": [{\"id\": \"s2\", \"name\":"
"  \"edit\", \"arguments\": {\"path\": \"notes.txt\", \"old_string\":"
"  \"alpha line\", \"new_string\": \"beta line RD-EDITED\"}}]}}]},\n"
" {\"match\": \"RD-SUB-TASK\", \"repeat\": true,"
"  \"responses\": [{\"reply\": {\"calls\": [{\"id\": \"s1\", \"name\":"
"  \"bash\", \"arguments\": {\"command\":"
"  \"printf 'made by bash RD-MADE\\\\n' > made.txt\"}}]}}]},\n"
" {\"match\": \"RD-ROOT-TASK\", \"repeat\": true,"
"  \"responses\": [{\"reply\": {\"calls\": [{\"id\": \"r1\", \"name\":"
"  \"delegate\", \"arguments\": {\"profile\": \"general\", \"task\":"
"  \"RD-SUB-TASK: write made.txt with bash, then edit notes.txt\"}}]}}]}\n"
"]}\n";

/* One test's user: a home, a git workspace, the model. */
struct rd {
	char		*dir;
	char		 home[PATH_MAX];
	char		 ws[PATH_MAX];
	char		 state[PATH_MAX + 32];
	struct h_fakellm fl;
	char		*env[2];
	char		*tree0;		/* the workspace before the run */
};

static unsigned long long
rd_now_ms(void)
{
	struct timespec	ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (unsigned long long)ts.tv_sec * 1000 +
	    (unsigned long long)ts.tv_nsec / 1000000;
}

/* cmd (a shell command line) run in dir: must exit 0. */
static void
rd_sh(const char *dir, const char *cmd)
{
	char	line[2 * PATH_MAX + 256];
	int	st;

	snprintf(line, sizeof(line), "cd '%s' && { %s; } >/dev/null 2>&1",
	    dir, cmd);
	st = system(line);
	if (st == -1 || !WIFEXITED(st) || WEXITSTATUS(st) != 0)
		fail_msg("%s (in %s): exit status %d", cmd, dir, st);
}

static unsigned long long
rd_hash(const char *path)
{
	unsigned long long	h = 1469598103934665603ULL;
	unsigned char		buf[8192];
	FILE			*f;
	size_t			n, i;

	if ((f = fopen(path, "rb")) == NULL)
		fail_msg("%s: %s", path, strerror(errno));
	while ((n = fread(buf, 1, sizeof(buf), f)) > 0)
		for (i = 0; i < n; i++)
			h = (h ^ buf[i]) * 1099511628211ULL;
	fclose(f);
	return h;
}

/* Every entry under dir (rel its path from the top) as a line: path,
 * type and mode, size and a hash of a file's bytes, a link's target. */
static void
rd_walk(const char *dir, const char *rel, char *out, size_t *len)
{
	struct dirent	**de;
	struct stat	  st;
	char		  p[PATH_MAX], r[PATH_MAX], lnk[PATH_MAX];
	ssize_t		  ln;
	int		  n, i;

	if ((n = scandir(dir, &de, NULL, alphasort)) == -1)
		fail_msg("scandir %s: %s", dir, strerror(errno));
	for (i = 0; i < n; i++) {
		if (strcmp(de[i]->d_name, ".") == 0 ||
		    strcmp(de[i]->d_name, "..") == 0) {
			free(de[i]);
			continue;
		}
		snprintf(p, sizeof(p), "%s/%s", dir, de[i]->d_name);
		snprintf(r, sizeof(r), "%s%s", rel, de[i]->d_name);
		free(de[i]);
		if (lstat(p, &st) == -1)
			fail_msg("lstat %s: %s", p, strerror(errno));
		*len += (size_t)snprintf(out + *len, TREE_MAX - *len,
		    "%s %o %lld", r, (unsigned)st.st_mode,
		    (long long)st.st_size);
		if (S_ISREG(st.st_mode))
			*len += (size_t)snprintf(out + *len, TREE_MAX - *len,
			    " %llx", rd_hash(p));
		else if (S_ISLNK(st.st_mode) &&
		    (ln = readlink(p, lnk, sizeof(lnk) - 1)) >= 0) {
			lnk[ln] = '\0';
			*len += (size_t)snprintf(out + *len, TREE_MAX - *len,
			    " -> %s", lnk);
		}
		*len += (size_t)snprintf(out + *len, TREE_MAX - *len, "\n");
		if (*len >= TREE_MAX - 1)
			fail_msg("%s: more than %d bytes of listing", dir,
			    TREE_MAX);
		if (S_ISDIR(st.st_mode)) {
			strncat(r, "/", sizeof(r) - strlen(r) - 1);
			rd_walk(p, r, out, len);
		}
	}
	free(de);
}

/* dir's whole tree as text (rd_walk); the caller frees it. */
static char *
rd_tree(const char *dir)
{
	char	*out;
	size_t	 len = 0;

	if ((out = malloc(TREE_MAX)) == NULL)
		abort();
	out[0] = '\0';
	rd_walk(dir, "", out, &len);
	return out;
}

/* The workspace is what it was before the run (after what). */
static void
rd_ws_unchanged(struct rd *u, const char *what)
{
	char	*now = rd_tree(u->ws);

	if (strcmp(now, u->tree0) != 0)
		fail_msg("after %s the workspace changed; before:\n%s\nnow:\n%s",
		    what, u->tree0, now);
	free(now);
}

/* path with content (0644), its directories made (0755) as needed. */
static void
rd_file(const char *path, const char *content)
{
	char	 p[PATH_MAX], *s;
	FILE	*f;

	snprintf(p, sizeof(p), "%s", path);
	for (s = p + 1; (s = strchr(s, '/')) != NULL; s++) {
		*s = '\0';
		if (mkdir(p, 0755) == -1 && errno != EEXIST)
			fail_msg("mkdir %s: %s", p, strerror(errno));
		*s = '/';
	}
	if ((f = fopen(p, "w")) == NULL || fputs(content, f) == EOF ||
	    fclose(f) != 0)
		fail_msg("%s: %s", p, strerror(errno));
}

/* A user: HOME with the config naming the endpoint and the model, the
 * key in the environment, a git work tree as the current directory;
 * the model answering first after slow_ms (0: at once). 1: fakellm is
 * not built (skip). */
static int
rd_open(struct rd *u, int slow_ms)
{
	char	 cfg[PATH_MAX + 64], text[512], script[sizeof(rd_script_fmt) +
		    64], delay[48];
	int	 rc;

	memset(u, 0, sizeof(*u));
	u->dir = h_tmpdir();
	snprintf(u->home, sizeof(u->home), "%s/home", u->dir);
	snprintf(u->ws, sizeof(u->ws), "%s/home/project", u->dir);
	snprintf(u->state, sizeof(u->state), "%s/.local/state/warren",
	    u->home);
	delay[0] = '\0';
	if (slow_ms > 0)
		snprintf(delay, sizeof(delay), "\"delay_ms\": %d, ", slow_ms);
	snprintf(script, sizeof(script), rd_script_fmt, delay);
	rc = h_fakellm_start(&u->fl, u->dir, script);
	if (rc == 1)
		return 1;
	assert_int_equal(rc, 0);
	/* What the user writes: ~/.config/warren/config. */
	snprintf(cfg, sizeof(cfg), "%s/.config/warren/config", u->home);
	snprintf(text, sizeof(text), "# my endpoint\nbase_url = %s\n"
	    "model = fake-model\n", strchr(u->fl.env_url, '=') + 1);
	rd_file(cfg, text);
	snprintf(cfg, sizeof(cfg), "%s/notes.txt", u->ws);
	rd_file(cfg, NOTES);
	snprintf(cfg, sizeof(cfg), "%s/src/main.c", u->ws);
	rd_file(cfg, "int main(void) { return 0; }\n");
	/* Open to the sandboxed workers' uid, as the suite's workspaces. */
	(void)chmod(u->ws, 0777);
	if (setenv("HOME", u->home, 1) == -1)
		fail_msg("setenv HOME: %s", strerror(errno));
	rd_sh(u->ws, "git init -q . && git add -A && git -c user.name=U "
	    "-c user.email=u@example.org commit -q -m start");
	if (chdir(u->ws) == -1)
		fail_msg("chdir %s: %s", u->ws, strerror(errno));
	u->tree0 = rd_tree(u->ws);
	u->env[0] = "WARREN_API_KEY=" KEY;
	u->env[1] = NULL;
	return 0;
}

static void
rd_close(struct rd *u)
{
	h_fakellm_stop(&u->fl);
	if (chdir("/") == -1)
		fail_msg("chdir /: %s", strerror(errno));
	h_rm_rf(u->dir);
	free(u->dir);
	free(u->tree0);
}

/* warren ARGS... in u's environment and workspace: its exit must be 0. */
static void
rd_warren(struct rd *u, struct h_run *r, ...)
{
	va_list	 ap;
	int	 rc;

	va_start(ap, r);
	rc = h_warren_v(r, u->env, NULL, ap);
	va_end(ap);
	assert_int_equal(rc, 0);
	if (r->hung || r->status != 0)
		fail_msg("warren exited %d%s\nstdout:\n%s\nstderr:\n%s",
		    r->status, r->hung ? " (killed: it hung)" : "", r->out,
		    r->err);
}

/* s holds want, or the test fails saying what was read. */
static void
rd_has(const char *what, const char *s, const char *want)
{
	if (s == NULL || strstr(s, want) == NULL)
		fail_msg("%s does not hold \"%s\":\n%s", what, want,
		    s != NULL ? s : "(nothing)");
}

/* The file of HOME nftw is at holds the key (the user's config, which
 * names it nowhere either, included): its path, else nothing. */
static char	rd_key_in[PATH_MAX];

static int
rd_key_file(const char *path, const struct stat *sb, int flag,
    struct FTW *ftw)
{
	char	*buf;
	ssize_t	 n;
	size_t	 len = 0;
	int	 fd;

	(void)ftw;
	if (flag != FTW_F || !S_ISREG(sb->st_mode))
		return 0;	/* an overlay's work dir may be unreadable */
	if ((fd = open(path, O_RDONLY | O_CLOEXEC)) == -1)
		return 0;
	if ((buf = malloc((size_t)sb->st_size + 1)) == NULL)
		abort();
	while (len < (size_t)sb->st_size && (n = read(fd, buf + len,
	    (size_t)sb->st_size - len)) > 0)
		len += (size_t)n;
	close(fd);
	if (memmem(buf, len, KEY, strlen(KEY)) != NULL)
		snprintf(rd_key_in, sizeof(rd_key_in), "%s", path);
	free(buf);
	return rd_key_in[0] != '\0';
}

/* The API key (in the environment only) is in no file warren wrote:
 * the database and its journal, the layers, the workspace. */
static void
rd_no_key(struct rd *u)
{
	rd_key_in[0] = '\0';
	if (nftw(u->home, rd_key_file, 16, FTW_PHYS) == -1)
		fail_msg("walking %s: %s", u->home, strerror(errno));
	if (rd_key_in[0] != '\0')
		fail_msg("the API key is in %s", rd_key_in);
}

/* The state is where an installed warren keeps it: the database and
 * nlayers layers (the run's before apply, none after) under
 * ~/.local/state/warren; HOME holds nothing else of warren's but the
 * user's own config. */
static void
rd_state_installed(struct rd *u, int nlayers)
{
	struct stat	 st;
	struct dirent	*de;
	DIR		*d;
	char		 p[PATH_MAX + 64];
	int		 layers = 0;

	snprintf(p, sizeof(p), "%s/warren.db", u->state);
	if (stat(p, &st) == -1 || !S_ISREG(st.st_mode))
		fail_msg("no state database at %s: %s", p, strerror(errno));
	snprintf(p, sizeof(p), "%s/cow", u->state);
	if ((d = opendir(p)) == NULL)
		fail_msg("no layer directory at %s: %s", p, strerror(errno));
	while ((de = readdir(d)) != NULL)
		if (de->d_name[0] != '.')
			layers++;
	closedir(d);
	if (layers != nlayers)
		fail_msg("%s holds %d layers, not %d", p, layers, nlayers);
	/* HOME: the config the user wrote, the state, the workspace. */
	if ((d = opendir(u->home)) == NULL)
		fail_msg("%s: %s", u->home, strerror(errno));
	while ((de = readdir(d)) != NULL)
		if (strcmp(de->d_name, ".") != 0 &&
		    strcmp(de->d_name, "..") != 0 &&
		    strcmp(de->d_name, ".config") != 0 &&
		    strcmp(de->d_name, ".local") != 0 &&
		    strcmp(de->d_name, "project") != 0)
			fail_msg("warren made %s/%s, not under %s",
			    u->home, de->d_name, u->state);
	closedir(d);
}

/* diff last shows both changes, applied by apply last: then the
 * workspace is what it was plus exactly these two. */
static void
rd_diff_apply(struct rd *u)
{
	struct h_run	 r;
	char		*s, p[PATH_MAX + 32];

	rd_warren(u, &r, "diff", "last", NULL);
	rd_has("warren diff last", r.out, "made.txt");
	rd_has("warren diff last", r.out, "+made by bash RD-MADE");
	rd_has("warren diff last", r.out, "-alpha line");
	rd_has("warren diff last", r.out, "+beta line RD-EDITED");
	h_run_free(&r);
	rd_ws_unchanged(u, "warren diff");
	rd_warren(u, &r, "apply", "last", NULL);
	h_run_free(&r);
	snprintf(p, sizeof(p), "%s/made.txt", u->ws);
	s = h_read_file(p);
	if (strcmp(s, MADE) != 0)
		fail_msg("after apply %s holds \"%s\", not \"%s\"", p, s, MADE);
	free(s);
	snprintf(p, sizeof(p), "%s/notes.txt", u->ws);
	s = h_read_file(p);
	if (strcmp(s, NOTES_EDITED) != 0)
		fail_msg("after apply %s holds \"%s\", not \"%s\"", p, s,
		    NOTES_EDITED);
	free(s);
	/* Nothing else: git sees the one new file and the one change. */
	rd_sh(u->ws, "test \"$(git status --porcelain | tr '\\n' ' ')\" = "
	    "' M notes.txt ?? made.txt '");
}

static void
test_run_default_review(void **state)
{
	struct rd	u;
	struct h_run	r;

	(void)state;
	if (rd_open(&u, 0) == 1)
		skip();
	rd_warren(&u, &r, "run", TASK, NULL);
	rd_has("warren run's output", r.out, ANSWER);
	print_message("warren run: %llu ms\n", r.ms);
	h_run_free(&r);
	rd_ws_unchanged(&u, "warren run");
	rd_state_installed(&u, 1);
	rd_no_key(&u);
	rd_warren(&u, &r, "runs", NULL);
	rd_has("warren runs", r.out, "RD-ROOT-TASK");
	h_run_free(&r);
	rd_warren(&u, &r, "show", "last", NULL);
	rd_has("warren show last", r.out, "RD-ROOT-TASK");
	rd_has("warren show last", r.out, "RD-SUB-TASK");
	rd_has("warren show last", r.out, "changes: 2 files not applied");
	/* The default layer: an overlay, or a copy where there is none. */
	if (strstr(r.out, "(overlay layer)") == NULL &&
	    strstr(r.out, "(copy layer)") == NULL)
		fail_msg("warren show last names no copy-on-write layer:\n%s",
		    r.out);
	print_message("layer: %s\n", strstr(r.out, "(overlay layer)") !=
	    NULL ? "overlay" : "copy");
	h_run_free(&r);
	rd_ws_unchanged(&u, "warren runs and show");
	rd_diff_apply(&u);
	rd_state_installed(&u, 0);
	rd_close(&u);
}

/* --- kill -9 ------------------------------------------------------------ */

struct rd_kill {
	struct rd	*u;
	int		 killed;
};

/* The subagent's request after its bash is in: it waits on the model. */
static int
rd_after_bash(void *arg)
{
	struct rd	*u = arg;

	return h_count_file(u->fl.log, "RD-SUB-TASK", "RD-MADE") > 0;
}

static void
rd_kill_during(pid_t pid, void *arg)
{
	struct rd_kill	*k = arg;

	k->killed = h_kill_when(pid, rd_after_bash, k->u, 60,
	    "the subagent's request after its bash (the model slow over it)");
}

/* Live processes below this one but the model's server: what the killed
 * run left (this process is their subreaper). Reaps our zombies first.
 * Their pids and names into what. */
static int
rd_leftovers(struct rd *u, char *what, size_t wsz)
{
	pid_t	pids[512];
	char	p[64], comm[64];
	FILE	*f;
	size_t	len = 0;
	int	n, i, left = 0;

	while (waitpid(-1, NULL, WNOHANG) > 0)
		;
	what[0] = '\0';
	n = h_find_procs("", pids, 512);
	for (i = 0; i < n; i++) {
		if (pids[i] == u->fl.pid || !h_descends(pids[i], getpid()) ||
		    h_descends(pids[i], u->fl.pid))
			continue;
		left++;
		comm[0] = '\0';
		snprintf(p, sizeof(p), "/proc/%d/comm", (int)pids[i]);
		if ((f = fopen(p, "r")) != NULL) {
			if (fgets(comm, sizeof(comm), f) == NULL)
				comm[0] = '\0';
			comm[strcspn(comm, "\n")] = '\0';
			fclose(f);
		}
		if (len < wsz)
			len += (size_t)snprintf(what + len, wsz - len,
			    " %d (%s)", (int)pids[i], comm);
	}
	return left;
}

static int
rd_none_left(void *arg)
{
	char	what[1024];

	return rd_leftovers(arg, what, sizeof(what)) == 0;
}

static void
test_run_default_kill9(void **state)
{
	struct rd	 u;
	struct rd_kill	 k;
	struct h_run	 r;
	char		*argv[] = { "warren", "run", TASK, NULL };
	char		 what[1024];
	unsigned long long t0;

	(void)state;
	if (rd_open(&u, SLOW_MS) == 1)
		skip();
	k.u = &u;
	k.killed = 0;
	assert_int_equal(h_warren(&r, argv, u.env, rd_kill_during, &k), 0);
	if (!k.killed)
		fail_msg("warren run was not killed mid-run: %s\nstderr:\n%s",
		    h_wait_why, r.err);
	if (r.status != 128 + SIGKILL)
		fail_msg("warren run ended %d, not by the kill", r.status);
	h_run_free(&r);
	t0 = rd_now_ms();
	if (h_wait_for(rd_none_left, &u, ORPHAN_S, -1,
	    "no process of the killed run left") != 0) {
		(void)rd_leftovers(&u, what, sizeof(what));
		fail_msg("%d s after the kill of warren run these still run:%s",
		    ORPHAN_S, what);
	}
	print_message("nothing of the killed run left after %llu ms\n",
	    rd_now_ms() - t0);
	rd_ws_unchanged(&u, "the killed run");
	rd_warren(&u, &r, "runs", NULL);
	rd_has("warren runs", r.out, "RD-ROOT-TASK");
	rd_has("warren runs", r.out, "interrupted");
	h_run_free(&r);
	/* The first half's work is in the killed run's layer, the second's
	 * not yet. */
	rd_warren(&u, &r, "diff", "last", NULL);
	rd_has("warren diff last of the killed run", r.out,
	    "+made by bash RD-MADE");
	if (strstr(r.out, "RD-EDITED") != NULL)
		fail_msg("the killed run's layer holds the edit made after "
		    "the kill:\n%s", r.out);
	h_run_free(&r);
	rd_warren(&u, &r, "resume", "last", NULL);
	rd_has("warren resume's output", r.out, ANSWER);
	print_message("warren resume: %llu ms\n", r.ms);
	h_run_free(&r);
	rd_ws_unchanged(&u, "warren resume");
	rd_state_installed(&u, 1);
	rd_no_key(&u);
	rd_diff_apply(&u);
	rd_state_installed(&u, 0);
	rd_close(&u);
}


int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_teardown(test_run_default_review,
		    h_fakellm_teardown),
		cmocka_unit_test_teardown(test_run_default_kill9,
		    h_fakellm_teardown),
	};

	h_user_env();
	/* Orphans of a killed run become ours, to be seen and reaped. */
	if (prctl(PR_SET_CHILD_SUBREAPER, 1) == -1)
		abort();
	return cmocka_run_group_tests(tests, NULL, NULL);
}

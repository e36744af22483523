/*
 * warren sandbox exec|check: run one command under a profile's sandbox
 * (like bwrap or nsjail), or say which layers this machine can apply.
 *
 * exec forwards the command's exit status (128 + signal if it was killed)
 * and prints nothing of its own unless asked (-v), except a weaker sandbox
 * accepted with --allow-weaker-sandbox, which is always said. Its own
 * failures use the codes of env(1) and timeout(1):
 *	124  the --timeout expired and the command was killed
 *	1    --cow --disk-max: the command exited 0 but its layer holds more
 *	     than the limit (sparse files counted at their size)
 *	125  warren failed (bad usage, a layer failed to apply)
 *	126  the command is not executable
 *	127  the command was not found
 *	5    (WARREN_EXIT_SANDBOX) a layer the profile requires is missing
 */
#include <sys/types.h>
#include <sys/signalfd.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>

#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <getopt.h>
#include <limits.h>
#include <stddef.h>
#include <stdint.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <strings.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "agent/profile.h"
#include "cli/cmd.h"
#include "common/clock.h"
#include "common/config.h"
#include "cli/layer.h"
#include "common/exitcode.h"
#include "common/str.h"
#include "common/xmalloc.h"
#include "sandbox/sandbox.h"
#include "spawnd/spawn.h"
#include "store/store.h"
#include "workspace/cow.h"
#include "workspace/hostexec.h"

#define SANDBOX_EXIT_TIMEOUT	124
#define SANDBOX_KILL_GRACE_MS	2000

struct sandbox_opts {
	const char	*profile;
	const char	*workspace;
	long long	 timeout_ms;	/* 0 = none */
	int		 allow_weaker;
	int		 verbose;
	int		 cow;		/* --cow: write a layer, as a run */
	uint64_t	 disk_max;	/* --disk-max: the layer's bound */
	struct sandbox_limits limits;	/* --rlimit overrides, 0 = default */
};

/* --help: stdout and 0; a bare or unknown subcommand: stderr and 2; a
 * bad `sandbox exec` line: stderr and 125, as env(1) and timeout(1). */
static int
cmd_sandbox_usage_to(FILE *f, int rc)
{
	fprintf(f, "usage: warren sandbox exec --profile P [--workspace "
	    "DIR] [--timeout S]\n"
	    "                           [--rlimit cpu|as|fsize|nofile|nproc|"
	    "tmpfs|mem=N]\n"
	    "                           [--allow-weaker-sandbox] [--cow "
	    "[--disk-max SIZE]] [-v]\n"
	    "                           -- CMD [ARG ...]\n"
	    "       warren sandbox check\n");
	return rc;
}

/* A bad `sandbox exec` line, said already in one line. */
static int
cmd_sandbox_usage(void)
{
	return WARREN_EXIT_EXEC_FAILED;
}

static void
cmd_sandbox_err(const char *what, const struct sandbox_error *e)
{
	char	 buf[SANDBOX_ERR_LEN * 4 + 1];

	str_escape(buf, sizeof(buf), e->msg, strlen(e->msg));
	fprintf(stderr, "warren: sandbox %s: %s\n", what, buf);
}

static int
cmd_sandbox_code(const struct sandbox_error *e)
{
	return e->missing ? WARREN_EXIT_SANDBOX : WARREN_EXIT_EXEC_FAILED;
}

/* execvp's search, done before fork so a missing command is 127 and the
 * sandbox knows the one file it will exec. */
static int
cmd_sandbox_resolve(const char *cmd, char *out, size_t len)
{
	const char	*path, *p, *end;
	char		 cand[PATH_MAX];
	struct stat	 st;
	int		 seen_noexec = 0;

	if (strchr(cmd, '/') != NULL) {
		if (realpath(cmd, out) == NULL)
			return WARREN_EXIT_EXEC_NOTFOUND;
		if (stat(out, &st) == -1 || !S_ISREG(st.st_mode) ||
		    access(out, X_OK) == -1)
			return WARREN_EXIT_EXEC_NOEXEC;
		return 0;
	}
	if ((path = getenv("PATH")) == NULL || *path == '\0')
		path = "/usr/local/bin:/usr/bin:/bin";
	for (p = path; *p != '\0'; p = *end != '\0' ? end + 1 : end) {
		end = strchrnul(p, ':');
		if ((size_t)snprintf(cand, sizeof(cand), "%.*s/%s",
		    (int)(end - p), end == p ? "." : p, cmd) >= sizeof(cand))
			continue;
		if (stat(cand, &st) == -1 || !S_ISREG(st.st_mode))
			continue;
		if (access(cand, X_OK) == -1) {
			seen_noexec = 1;
			continue;
		}
		if (realpath(cand, out) == NULL)
			continue;
		(void)len;
		return 0;
	}
	return seen_noexec ? WARREN_EXIT_EXEC_NOEXEC :
	    WARREN_EXIT_EXEC_NOTFOUND;
}

/* In the child, at the end of phase 1 (sandbox exec_fn): phase 2, exec.
 * Never returns. */
static void
cmd_sandbox_child(struct sandbox *sb, int rc, struct sandbox_error *e,
    void *arg)
{
	struct sandbox_report	 r;
	char			**argv = arg;

	if (rc == -1) {
		cmd_sandbox_err("exec", e);
		_exit(cmd_sandbox_code(e));
	}
	/* The parent prints a phase 2 error it receives with the report. */
	if (sandbox_enter_exec(sb, &r, e) == -1)
		_exit(cmd_sandbox_code(e));
	/* warren ignores it (main.c); the command's --rlimit fsize is
	 * met as in a shell. */
	signal(SIGXFSZ, SIG_DFL);
	execv(sb->policy.program, argv);
	fprintf(stderr, "warren: sandbox exec: %s: %s\n", argv[0],
	    strerror(errno));
	_exit(errno == ENOENT ? WARREN_EXIT_EXEC_NOTFOUND :
	    WARREN_EXIT_EXEC_NOEXEC);
}

static int
cmd_sandbox_status(int status)
{
	if (WIFEXITED(status))
		return WEXITSTATUS(status);
	if (WIFSIGNALED(status))
		return 128 + WTERMSIG(status);
	return WARREN_EXIT_EXEC_FAILED;
}

/*
 * The parent: answer the seccomp listener, pass signals on, enforce the
 * timeout (SIGTERM, then SIGKILL after a grace period), reap.
 */
static int
cmd_sandbox_wait(struct sandbox *sb, const struct sandbox_opts *o, int sfd)
{
	struct pollfd			 pfd[3];
	struct signalfd_siginfo		 si;
	long long			 deadline = 0, killat = 0, now;
	int				 pidfd, status, n, timeout, timedout = 0;
	pid_t				 w;

	if ((pidfd = (int)syscall(SYS_pidfd_open, sb->pid, 0)) == -1)
		return -1;
	if (o->timeout_ms > 0)
		deadline = (long long)clock_mono_ms() + o->timeout_ms;
	for (;;) {
		pfd[0].fd = pidfd;
		pfd[0].events = POLLIN;
		pfd[1].fd = sfd;
		pfd[1].events = POLLIN;
		pfd[2].fd = sb->notify_fd;
		pfd[2].events = POLLIN;
		timeout = -1;
		now = (long long)clock_mono_ms();
		if (killat != 0)
			timeout = killat > now ? (int)(killat - now) : 0;
		else if (deadline != 0)
			timeout = deadline > now ? (int)(deadline - now) : 0;
		n = poll(pfd, 3, timeout);
		if (n == -1 && errno != EINTR)
			break;
		if (n > 0 && (pfd[2].revents & POLLIN))
			sandbox_notify_handle(sb, o->verbose ? stderr : NULL);
		else if (n > 0 && (pfd[2].revents & (POLLHUP | POLLERR))) {
			close(sb->notify_fd);
			sb->notify_fd = -1;
		}
		if (n > 0 && (pfd[1].revents & POLLIN) &&
		    read(sfd, &si, sizeof(si)) == sizeof(si))
			sandbox_kill(sb, (int)si.ssi_signo);
		if (n > 0 && (pfd[0].revents & POLLIN)) {
			w = waitpid(sb->pid, &status, WNOHANG);
			if (w == sb->pid) {
				close(pidfd);
				if (timedout)
					return SANDBOX_EXIT_TIMEOUT;
				return cmd_sandbox_status(status);
			}
		}
		now = (long long)clock_mono_ms();
		if (killat != 0 && now >= killat) {
			sandbox_kill(sb, SIGKILL);
			killat = 0;
			deadline = 0;
		} else if (deadline != 0 && killat == 0 && now >= deadline) {
			timedout = 1;
			sandbox_kill(sb, SIGTERM);
			killat = now + SANDBOX_KILL_GRACE_MS;
		}
	}
	close(pidfd);
	return -1;
}

/* --rlimit NAME=N: seconds for cpu, bytes for as/fsize/tmpfs/mem, counts. */
static int
cmd_sandbox_rlimit(const char *arg, struct sandbox_limits *l)
{
	static const struct {
		const char	*name;
		size_t		 off;
		int		 size;	/* bytes: 50M as --disk-max takes */
	} names[] = {
		{ "cpu", offsetof(struct sandbox_limits, cpu_sec), 0 },
		{ "as", offsetof(struct sandbox_limits, as_bytes), 1 },
		{ "fsize", offsetof(struct sandbox_limits, fsize_bytes), 1 },
		{ "nofile", offsetof(struct sandbox_limits, nofile), 0 },
		{ "nproc", offsetof(struct sandbox_limits, nproc), 0 },
		{ "tmpfs", offsetof(struct sandbox_limits, tmpfs_bytes), 1 },
		{ "mem", offsetof(struct sandbox_limits, mem_bytes), 1 },
	};
	const char	*eq, *errstr;
	double		 d;
	long long	 v;
	size_t		 i;

	if ((eq = strchr(arg, '=')) == NULL)
		goto bad;
	for (i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		if (strlen(names[i].name) != (size_t)(eq - arg) ||
		    strncmp(arg, names[i].name, (size_t)(eq - arg)) != 0)
			continue;
		if (names[i].size) {
			if (config_parse_size(eq + 1, &d) == -1 || d < 1)
				goto bad;
			v = (long long)d;
		} else {
			v = strtonum(eq + 1, 1, LLONG_MAX, &errstr);
			if (errstr != NULL)
				goto bad;
		}
		*(rlim_t *)(void *)((char *)l + names[i].off) = (rlim_t)v;
		return 0;
	}
bad:
	fprintf(stderr, "warren: sandbox exec: bad --rlimit '%s' (cpu, "
	    "nofile or nproc = a positive number; as, fsize, tmpfs or mem = "
	    "a size such as 50M, 1G)\n", arg);
	return -1;
}

/* --disk-max N[K|M|G]: bytes, > 0. */
static int
cmd_sandbox_size(const char *arg, uint64_t *bytes)
{
	static const char	 units[] = "KMG";
	const char		*u;
	char			*end;
	double			 d;

	errno = 0;
	d = strtod(arg, &end);
	if (end != arg && errno == 0 && d > 0 && *end != '\0' &&
	    (end[1] == '\0' || strcasecmp(end + 1, "iB") == 0 ||
	    strcasecmp(end + 1, "B") == 0) &&
	    (u = strchr(units, toupper((unsigned char)*end))) != NULL)
		d *= (double)(1ull << (10 * (u - units + 1)));
	else if (end == arg || errno != 0 || d <= 0 || *end != '\0')
		d = 0;
	if (d >= 1 && d <= 1e15) {
		*bytes = (uint64_t)d;
		return 0;
	}
	fprintf(stderr, "warren: sandbox exec: bad --disk-max '%s' (bytes, "
	    "or a number with K, M or G)\n", arg);
	return -1;
}

static int
cmd_sandbox_opts(int argc, char **argv, struct sandbox_opts *o)
{
	static const struct option longopts[] = {
		{ "profile", required_argument, NULL, 'p' },
		{ "workspace", required_argument, NULL, 'w' },
		{ "timeout", required_argument, NULL, 't' },
		{ "allow-weaker-sandbox", no_argument, NULL, 'W' },
		{ "rlimit", required_argument, NULL, 'r' },
		{ "verbose", no_argument, NULL, 'v' },
		{ "cow", no_argument, NULL, 'c' },
		{ "disk-max", required_argument, NULL, 'd' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	double		 secs;
	char		*end;
	int		 ch;

	memset(o, 0, sizeof(*o));
	optind = 1;
	/* "+": what follows the first operand is CMD's own. */
	while ((ch = cmd_getopt("sandbox exec", argc, argv, "+p:w:t:vh",
	    longopts)) != -1) {
		switch (ch) {
		case 'p':
			o->profile = optarg;
			break;
		case 'w':
			o->workspace = optarg;
			break;
		case 't':
			secs = strtod(optarg, &end);
			if (*optarg == '\0' || *end != '\0' || secs <= 0 ||
			    secs > 86400 * 7) {
				fprintf(stderr, "warren: sandbox exec: bad "
				    "--timeout '%s' (seconds, > 0)\n", optarg);
				return -1;
			}
			o->timeout_ms = (long long)(secs * 1000);
			break;
		case 'W':
			o->allow_weaker = 1;
			break;
		case 'r':
			if (cmd_sandbox_rlimit(optarg, &o->limits) == -1)
				return -1;
			break;
		case 'v':
			o->verbose = 1;
			break;
		case 'c':
			o->cow = 1;
			break;
		case 'd':
			if (cmd_sandbox_size(optarg, &o->disk_max) == -1)
				return -1;
			break;
		case 'h':
			return -2;
		default:
			return -1;
		}
	}
	if (o->profile == NULL) {
		cmd_usage_error("sandbox exec", "--profile is required "
		    "(explore, plan, review, test, general)");
		return -1;
	}
	if (optind >= argc) {
		cmd_usage_error("sandbox exec", "no command: give it after "
		    "--");
		return -1;
	}
	if (o->disk_max != 0 && !o->cow) {
		fprintf(stderr, "warren: sandbox exec: --disk-max bounds the "
		    "copy-on-write layer: add --cow\n");
		return -1;
	}
	return optind;
}

/* The --rlimit overrides over the profile's limits (0: not given). */
static void
cmd_sandbox_limits(struct sandbox_limits *l, const struct sandbox_limits *o)
{
	if (o->cpu_sec != 0)
		l->cpu_sec = o->cpu_sec;
	if (o->as_bytes != 0)
		l->as_bytes = o->as_bytes;
	if (o->fsize_bytes != 0)
		l->fsize_bytes = o->fsize_bytes;
	if (o->nofile != 0)
		l->nofile = o->nofile;
	if (o->nproc != 0)
		l->nproc = o->nproc;
	if (o->tmpfs_bytes != 0)
		l->tmpfs_bytes = o->tmpfs_bytes;
	if (o->mem_bytes != 0)
		l->mem_bytes = o->mem_bytes;
}

/* The profile's policy with warren's own directories protected, the
 * options applied and cmd resolved to the program to run: 0, or the exit
 * code, said why on stderr. */
static int
cmd_sandbox_policy(const struct sandbox_opts *o, const char *cmd,
    struct sandbox_policy *p)
{
	struct sandbox_error	 e;
	int			 rc;

	memset(&e, 0, sizeof(e));
	if (profile_policy(p, o->profile, o->workspace, &e) == -1) {
		cmd_sandbox_err("exec", &e);
		return WARREN_EXIT_EXEC_FAILED;
	}
	if (spawn_protect(p, NULL, e.msg, sizeof(e.msg)) == -1) {
		fprintf(stderr, "warren: sandbox exec: %s\n", e.msg);
		return WARREN_EXIT_EXEC_FAILED;
	}
	p->allow_weaker = o->allow_weaker;
	cmd_sandbox_limits(&p->limits, &o->limits);
	/* No file bigger than the whole layer may be, as in a run. */
	if (o->disk_max != 0 && p->limits.fsize_bytes > o->disk_max)
		p->limits.fsize_bytes = (rlim_t)o->disk_max;
	if ((rc = cmd_sandbox_resolve(cmd, p->program,
	    sizeof(p->program))) != 0) {
		fprintf(stderr, "warren: sandbox exec: %s: %s\n", cmd,
		    rc == WARREN_EXIT_EXEC_NOTFOUND ? "command not found" :
		    "not executable");
		return rc;
	}
	return 0;
}

/*
 * Fork the sandboxed child, which runs cmd (it never returns here). The
 * signals for the command stay blocked in the parent, to arrive through
 * a signalfd; set holds them.
 */
static pid_t
cmd_sandbox_start(struct sandbox *sb, char **cmd, sigset_t *set,
    struct sandbox_error *e)
{
	sigset_t	 old;
	pid_t		 pid;

	sigemptyset(set);
	sigaddset(set, SIGINT);
	sigaddset(set, SIGTERM);
	sigaddset(set, SIGHUP);
	sigaddset(set, SIGQUIT);
	sigprocmask(SIG_BLOCK, set, &old);
	fflush(NULL);
	if ((pid = sandbox_fork(sb, e)) != 0)
		return pid;
	sigprocmask(SIG_SETMASK, &old, NULL);
	sb->exec_fn = cmd_sandbox_child;
	sb->exec_arg = cmd;
	memset(e, 0, sizeof(*e));
	sandbox_child(sb, NULL, 0, e);
	_exit(WARREN_EXIT_EXEC_FAILED);
}

/* The layers the command got, with -v or when weaker than required. */
static void
cmd_sandbox_report(const struct sandbox_opts *o,
    const struct sandbox_policy *p, const struct sandbox_report *r)
{
	char	 line[SANDBOX_REPORT_MAX * SANDBOX_LAYER_LEN +
		     SANDBOX_ERR_LEN];

	sandbox_report_string(r, line, sizeof(line));
	if (o->verbose || r->weaker)
		fprintf(stderr, "warren: sandbox: profile %s (%s, %s): %s\n",
		    p->name, p->fs_write ? "read-write" : "read-only",
		    p->exec ? "exec" : "no exec", line);
	if (r->note[0] != '\0' && (o->verbose || r->weaker))
		fprintf(stderr, "warren: sandbox: note: %s\n", r->note);
}

/* Run cmd in the sandbox and wait: its exit status, or ours (125-127). */
/*
 * In place on a workspace that takes .GIT for .git, the read-only mount
 * points on .git and .warren would not hold (docs/sandbox.md, "The
 * workspace's filesystem"): a profile that writes is refused there.
 */
static int
cmd_sandbox_folds(const struct sandbox_policy *p,
    const struct sandbox_opts *o)
{
	char	why[PATH_MAX + 256];
	int	rc;

	/* We are in the workspace (cmd_sandbox_exec). */
	if (!p->fs_write || (rc = hostexec_fs_folds(".", why,
	    sizeof(why))) == 0)
		return 0;
	fprintf(stderr, "warren: sandbox exec: workspace %s: %s: a profile "
	    "that writes is refused in place on a case-insensitive workspace (its read-only "
	    ".git and .warren would not hold against .GIT and .WARREN); use "
	    "--cow\n", o->workspace != NULL ? o->workspace : ".", rc == 1 ?
	    why : "cannot tell whether it is case-insensitive");
	return WARREN_EXIT_SANDBOX;
}

static int
cmd_sandbox_run(const struct sandbox_opts *o, char **cmd)
{
	struct sandbox_policy	 p;
	struct sandbox_report	 r;
	struct sandbox_error	 e;
	struct sandbox		 sb;
	sigset_t		 set;
	int			 rc, sfd;

	if ((rc = cmd_sandbox_policy(o, cmd[0], &p)) != 0)
		return rc;
	if ((rc = cmd_sandbox_folds(&p, o)) != 0)
		return rc;
	memset(&e, 0, sizeof(e));
	if (sandbox_prepare(&sb, &p, &e) == -1) {
		cmd_sandbox_err("exec", &e);
		return cmd_sandbox_code(&e);
	}
	sb.use_notify = 1;
	if (cmd_sandbox_start(&sb, cmd, &set, &e) == -1) {
		cmd_sandbox_err("exec", &e);
		sandbox_release(&sb);
		return cmd_sandbox_code(&e);
	}
	sfd = signalfd(-1, &set, SFD_CLOEXEC | SFD_NONBLOCK);
	if (sandbox_parent_report(&sb, &r, &e) == -1) {
		/* EPIPE: the child said why itself. */
		if (e.msg[0] != '\0' && e.errnum != EPIPE)
			cmd_sandbox_err("exec", &e);
		rc = cmd_sandbox_wait(&sb, o, sfd);
		sandbox_release(&sb);
		return e.missing ? WARREN_EXIT_SANDBOX : rc > 0 ? rc :
		    WARREN_EXIT_EXEC_FAILED;
	}
	cmd_sandbox_report(o, &p, &r);
	rc = cmd_sandbox_wait(&sb, o, sfd);
	sandbox_release(&sb);
	if (sfd != -1)
		close(sfd);
	return rc == -1 ? WARREN_EXIT_EXEC_FAILED : rc;
}

/* The command line as a run's task: its words, space-separated. */
static char *
cmd_sandbox_task(char **cmd)
{
	size_t	 len = sizeof("sandbox exec:"), i;
	char	*t;

	for (i = 0; cmd[i] != NULL; i++)
		len += strlen(cmd[i]) + 1;
	t = xmalloc(len);
	strlcpy(t, "sandbox exec:", len);
	for (i = 0; cmd[i] != NULL; i++) {
		strlcat(t, " ", len);
		strlcat(t, cmd[i], len);
	}
	return t;
}

/* A run for the command, with the layer cw: its id, or -1 (said why). */
static int64_t
cmd_sandbox_record(struct store *st, const struct sandbox_opts *o,
    const struct cow *cw, char **cmd)
{
	struct store_run_params	 sp;
	char			 err[1024];
	int64_t			 run;
	int			 rc;

	memset(&sp, 0, sizeof(sp));
	sp.task = cmd_sandbox_task(cmd);
	sp.workspace = cw->workspace;
	sp.profile = o->profile;
	sp.cow_mode = cow_mode_name(cw->mode);
	sp.cow_dir = cw->dir;
	rc = store_run_begin(st, &sp, &run);
	free((char *)(uintptr_t)sp.task);
	if (rc == -1 || store_flush(st) == -1) {
		fprintf(stderr, "warren: sandbox exec: %s\n", store_errmsg(st));
		return -1;
	}
	if (cow_mark(cw, store_filename(st), run, err, sizeof(err)) == -1) {
		fprintf(stderr, "warren: sandbox exec: its layer: %s\n", err);
		return -1;
	}
	return run;
}

/*
 * --disk-max: the kernel held the tmpfs at the limit (a write past it
 * failed with ENOSPC); sparse files, which take less than their size,
 * are counted at it here, as a run's watch counts them. 1 (said why) if
 * the layer is over, or cannot be measured.
 */
static int
cmd_sandbox_over(const struct cow *cw)
{
	struct cow	 m;
	uint64_t	 used = 0, blocks = 0;
	char		 err[1024];
	int		 fd, rc = 0;

	if ((fd = cow_bound_open(cw, err, sizeof(err))) == -1)
		goto bad;
	memset(&m, 0, sizeof(m));
	m.mode = COW_OVERLAY;
	snprintf(m.dir, sizeof(m.dir), "/proc/self/fd/%d/.", fd);
	if (cow_bound_used(fd, &blocks) == -1 || cow_usage(&m, &used, err,
	    sizeof(err)) == -1) {
		close(fd);
		goto bad;
	}
	close(fd);
	if (blocks > used)
		used = blocks;
	if (used > cw->bound) {
		fprintf(stderr, "warren: sandbox exec: disk limit: the "
		    "copy-on-write layer holds %" PRIu64 " KiB, over "
		    "--disk-max %" PRIu64 " KiB (writes past it failed with "
		    "ENOSPC)\n", used / 1024, cw->bound / 1024);
		rc = 1;
	}
	return rc;
bad:
	fprintf(stderr, "warren: sandbox exec: disk limit: the layer cannot "
	    "be measured, which counts as over --disk-max: %s\n", err);
	return 1;
}

/* In the child: enter the layer, then run as without --cow. */
static int
cmd_sandbox_layered(const struct sandbox_opts *o, const struct cow *cw,
    char **cmd)
{
	char	err[1024];
	int	rc;

	signal(SIGINT, SIG_DFL);
	signal(SIGTERM, SIG_DFL);
	signal(SIGHUP, SIG_DFL);
	signal(SIGQUIT, SIG_DFL);
	if (cow_enter(cw, err, sizeof(err)) == -1) {
		fprintf(stderr, "warren: sandbox exec: the copy-on-write "
		    "layer: %s\n", err);
		return WARREN_EXIT_SANDBOX;
	}
	rc = cmd_sandbox_run(o, cmd);
	if (cw->bound == 0)
		return rc;
	/* The tmpfs goes with this process: its layer to disk first. */
	if (cmd_sandbox_over(cw) && rc == 0)
		rc = WARREN_EXIT_FAIL;
	if (cow_bound_save(cw, err, sizeof(err)) == -1)
		fprintf(stderr, "warren: sandbox exec: saving the layer: %s\n",
		    err);
	return rc;
}

/*
 * --cow: the command writes a layer over the workspace, recorded as a run
 * for `warren diff RUN` and `warren apply RUN`. A child enters the layer
 * and runs the command; we stay outside, where the real workspace is, to
 * record how the run ended and say what its layer holds.
 */
static int
cmd_sandbox_exec_cow(struct sandbox_opts *o, char **cmd)
{
	static char	 ws[PATH_MAX];
	struct store	*st;
	struct cow	 cw;
	const char	*want = getenv("WARREN_COW");
	char		 db[PATH_MAX], err[1024];
	enum cow_mode	 mode;
	int64_t		 run;
	pid_t		 pid;
	int		 status, rc;

	if (realpath(o->workspace ? o->workspace : ".", ws) == NULL) {
		fprintf(stderr, "warren: sandbox exec: workspace %s: %s\n",
		    o->workspace ? o->workspace : ".", strerror(errno));
		return WARREN_EXIT_EXEC_FAILED;
	}
	o->workspace = ws;
	if (layer_mechanism(want != NULL && *want != '\0' ? want : "auto",
	    &mode, err, sizeof(err)) == -1 || store_path(db, sizeof(db),
	    NULL) == -1 || (st = store_open(db, STORE_CREATE, err,
	    sizeof(err))) == NULL) {
		fprintf(stderr, "warren: sandbox exec: %s\n", err);
		return WARREN_EXIT_EXEC_FAILED;
	}
	if (o->disk_max != 0 && mode != COW_OVERLAY) {
		fprintf(stderr, "warren: sandbox exec: --disk-max needs the "
		    "overlay layer (the kernel holds it at the limit), and "
		    "this layer is a %s (see warren sandbox check)\n",
		    cow_mode_name(mode));
		store_close(st);
		return WARREN_EXIT_SANDBOX;
	}
	if (cow_create(&cw, mode, ws, NULL, err, sizeof(err)) == -1) {
		fprintf(stderr, "warren: sandbox exec: %s\n", err);
		store_close(st);
		return WARREN_EXIT_EXEC_FAILED;
	}
	/* The overlay's upper on a tmpfs of disk_max (cow_bound.c). */
	cw.bound = o->disk_max;
	if ((run = cmd_sandbox_record(st, o, &cw, cmd)) == -1) {
		(void)cow_remove(&cw, err, sizeof(err));
		store_close(st);
		return WARREN_EXIT_EXEC_FAILED;
	}
	fprintf(stderr, "warren: sandbox exec: run %lld writes a "
	    "copy-on-write layer (%s)\n", (long long)run, cow_mode_name(mode));
	/* The command's terminal signals are the child's to handle. */
	signal(SIGINT, SIG_IGN);
	signal(SIGTERM, SIG_IGN);
	signal(SIGHUP, SIG_IGN);
	signal(SIGQUIT, SIG_IGN);
	fflush(NULL);
	if ((pid = fork()) == 0)
		_exit(cmd_sandbox_layered(o, &cw, cmd));
	while (pid > 0 && waitpid(pid, &status, 0) == -1 && errno == EINTR)
		;
	rc = pid == -1 ? WARREN_EXIT_EXEC_FAILED : WIFEXITED(status) ?
	    WEXITSTATUS(status) : 128 + WTERMSIG(status);
	snprintf(err, sizeof(err), "exit %d", rc);
	if (store_run_finish(st, run, rc == 0 ? STORE_RUN_DONE :
	    STORE_RUN_FAILED, err) == -1)
		fprintf(stderr, "warren: sandbox exec: run %lld: %s\n",
		    (long long)run, store_errmsg(st));
	store_close(st);
	return layer_end(db, run, &cw, 0, 0, rc);
}

static int
cmd_sandbox_exec(int argc, char **argv)
{
	struct sandbox_opts	 o;
	int			 first;

	if ((first = cmd_sandbox_opts(argc, argv, &o)) == -2)
		return cmd_sandbox_usage_to(stdout, WARREN_EXIT_OK);
	if (first == -1)
		return cmd_sandbox_usage();
	/* An unknown profile is refused before anything is made of the
	 * line: no run recorded, no layer (--cow). */
	if (profile_builtin(o.profile) == NULL) {
		cmd_usage_error("sandbox exec", "unknown profile '%s' "
		    "(explore, plan, review, test, general)", o.profile);
		return WARREN_EXIT_EXEC_FAILED;
	}
	/* The command runs in its workspace, not where we were called. */
	if (o.workspace != NULL && chdir(o.workspace) == -1) {
		fprintf(stderr, "warren: sandbox exec: workspace %s: %s\n",
		    o.workspace, strerror(errno));
		return WARREN_EXIT_EXEC_FAILED;
	}
	if (o.cow)
		return cmd_sandbox_exec_cow(&o, argv + first);
	return cmd_sandbox_run(&o, argv + first);
}

/*
 * Which copy-on-write mode runs get here: each is tried for real
 * (cow_probe, a child and a scratch layer under the state directory).
 * The overlay's answer is kept for the runs that follow (layer_probe):
 * this is how a user probes again.
 */
static void
cmd_sandbox_check_cow(void)
{
	char	 why[1536], cwhy[1536];
	int	 crc;

	if (layer_probe(NULL, COW_PROBE_AGAIN, why, sizeof(why)) == 1) {
		printf("  %-16s %-4s %s\n", "cow", "yes", geteuid() == 0 ?
		    "overlay: overlayfs over the workspace, in the spawn "
		    "server's mount namespace" : "overlay: overlayfs over the "
		    "workspace, in the spawn server's user and mount "
		    "namespaces (userxattr)");
		return;
	}
	crc = cow_probe(COW_COPY, NULL, cwhy, sizeof(cwhy));
	printf("  %-16s %-4s %s\n", "cow", crc == 1 ? "yes" : "no", crc == 1 ?
	    "copy: a copy of the workspace bound over it (no overlay)" :
	    "none: copy-on-write runs cannot start here");
	printf("note: no overlay for copy-on-write runs: %s\n", why);
	if (crc != 1)
		printf("note: no copy mode either: %s\n", cwhy);
}

static int
cmd_sandbox_check(void)
{
	const struct profile	*b;
	struct sandbox_caps	 c;
	struct sandbox_policy	 p;
	struct sandbox_error	 e;
	unsigned		 have;
	size_t			 i;
	int			 worst = WARREN_EXIT_OK;

	sandbox_caps_probe(&c, 1);
	sandbox_caps_print(&c, stdout);
	cmd_sandbox_check_cow();
	have = SANDBOX_SETSID | SANDBOX_CLOSEFDS | SANDBOX_RLIMITS |
	    SANDBOX_CAPS | SANDBOX_NNP | SANDBOX_NODUMP;
	if (c.cgroup != 0 || !c.root || c.uiddrop)
		have |= SANDBOX_PIDS;
	if (c.landlock_abi > 0)
		have |= SANDBOX_LANDLOCK;
	if (c.seccomp)
		have |= SANDBOX_SECCOMP;
	if (c.mntns)
		have |= SANDBOX_MNTNS;
	printf("profiles:\n");
	for (i = 0; (b = profile_builtin_at(i)) != NULL; i++) {
		if (!profile_in_worker(b) ||
		    profile_policy(&p, b->name, "/tmp", &e) == -1)
			continue;
		sandbox_policy_require(&p, &c);
		if ((p.require & ~have) == 0)
			printf("  %-8s ok\n", b->name);
		else {
			printf("  %-8s refused: missing %s (use "
			    "--allow-weaker-sandbox to run weaker)\n",
			    b->name, sandbox_layer_name(p.require &
			    ~have & -(p.require & ~have)));
			worst = WARREN_EXIT_SANDBOX;
		}
	}
	return worst;
}

int
cmd_sandbox(int argc, char **argv)
{
	if (argc < 2)
		return cmd_sandbox_usage_to(stderr, WARREN_EXIT_USAGE);
	if (strcmp(argv[1], "exec") == 0)
		return cmd_sandbox_exec(argc - 1, argv + 1);
	if (strcmp(argv[1], "check") == 0)
		return cmd_sandbox_check();
	if (strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0)
		return cmd_sandbox_usage_to(stdout, WARREN_EXIT_OK);
	cmd_usage_error("sandbox", "unknown subcommand '%s' (exec or check)",
	    argv[1]);
	return WARREN_EXIT_USAGE;
}

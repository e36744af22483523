/*
 * fork + exec of a worker (OpenSMTPD's re-exec of each child, ntpd's
 * start_child). The child owns nothing of the supervisor but the two pipe
 * ends it is given: a fresh exec drops the address space, close_range drops
 * every inherited fd (a parent shell may leak some), and the environment is
 * rebuilt from scratch so no API key can be inherited.
 */
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/types.h>

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/path.h"
#include "common/xdg.h"
#include "common/xmalloc.h"
#include "sandbox/sandbox.h"
#include "spawnd/spawn.h"

#ifndef CLOSE_RANGE_CLOEXEC
#define CLOSE_RANGE_CLOEXEC	(1U << 2)
#endif

/* Only these survive into a worker's environment, with fixed values. */
static const char *const spawn_env_fixed[] = {
	"PATH=/usr/local/bin:/usr/bin:/bin",
	"LANG=C.UTF-8",
	"LC_ALL=C.UTF-8",
	"TERM=dumb",
	"HOME=/nonexistent",
	"TMPDIR=/tmp",
};

/*
 * The state directory holds every run's database (an agent that rewrote
 * one would choose the workspace of the next resume) and the recorded
 * cassettes: masked. The config directory holds the user's trusted
 * settings and agent files, a header with a credential perhaps: masked
 * too (no worker reads config). Where either lies inside the
 * workspace (a workspace of $HOME, say) and does not exist yet, it is
 * made first: a worker must not be the one to create ~/.config/warren
 * and fill it. Each costs a mount per worker only where the sandbox
 * could otherwise reach it (sandbox_policy_protect). files: more paths to
 * mask (a --db file, its WAL, a key file), NULL-terminated, or NULL.
 */
int
spawn_protect(struct sandbox_policy *p, const char *const *files, char *err,
    size_t errsz)
{
	static const struct {
		int		(*dir)(char *, size_t);
		const char	*what;
		unsigned	 flags;
	} dirs[] = {
		{ xdg_state_dir, "state", SANDBOX_PROTECT_MASK },
		{ xdg_config_dir, "config", SANDBOX_PROTECT_MASK },
	};
	struct sandbox_error	 e;
	char			 dir[PATH_MAX];
	size_t			 i;

	memset(&e, 0, sizeof(e));
	for (i = 0; i < sizeof(dirs) / sizeof(dirs[0]); i++) {
		if (dirs[i].dir(dir, sizeof(dir)) == -1) {
			/* No $HOME and no XDG variable: no such directory. */
			if (errno == ENOENT)
				continue;
			snprintf(err, errsz, "warren's %s directory: %s",
			    dirs[i].what, strerror(errno));
			return -1;
		}
		if (path_under(dir, p->workspace) &&
		    path_mkdirs(dir, 0700, PATH_NOFOLLOW) == -1) {
			snprintf(err, errsz, "warren's %s directory %s: %s",
			    dirs[i].what, dir, errno == ELOOP ? "a symlink lies "
			    "on its path: warren will not follow it" :
			    strerror(errno));
			return -1;
		}
		if (sandbox_policy_protect(p, dir, dirs[i].flags, &e) == -1) {
			snprintf(err, errsz, "warren's %s directory: %s",
			    dirs[i].what, e.msg);
			return -1;
		}
	}
	for (i = 0; files != NULL && files[i] != NULL; i++)
		if (sandbox_policy_protect(p, files[i], SANDBOX_PROTECT_MASK,
		    &e) == -1) {
			snprintf(err, errsz, "%s: %s", files[i], e.msg);
			return -1;
		}
	return 0;
}

char **
spawn_env(void)
{
	size_t	 i, n = sizeof(spawn_env_fixed) / sizeof(spawn_env_fixed[0]);
	char	**env;

	env = xcalloc(n + 1, sizeof(*env));
	for (i = 0; i < n; i++)
		env[i] = xstrdup(spawn_env_fixed[i]);
	return env;
}

void
spawn_env_free(char **env)
{
	size_t	i;

	if (env == NULL)
		return;
	for (i = 0; env[i] != NULL; i++)
		free(env[i]);
	free(env);
}

void
spawn_kill(struct spawn_child *c, int signo)
{
	if (c->sb != NULL && c->pid > 0)
		(void)sandbox_kill(c->sb, signo);
	else if (c->pid > 1)
		(void)kill(-c->pid, signo);
}

int
spawn_oom_killed(const struct spawn_child *c)
{
	return c->sb != NULL && sandbox_oom_killed(c->sb);
}

void
spawn_release(struct spawn_child *c)
{
	if (c->sb != NULL) {
		sandbox_release(c->sb);
		free(c->sb);
		c->sb = NULL;
	}
	if (c->to_fd != -1)
		close(c->to_fd);
	if (c->from_fd != -1)
		close(c->from_fd);
	if (c->err_fd != -1)
		close(c->err_fd);
	c->to_fd = c->from_fd = c->err_fd = -1;
}

/*
 * Undo what the forking process set, dispositions first (nothing pending
 * may reach ours once unblocked), then the mask: warren's event loop
 * blocks these for its signalfd and ignores SIGPIPE (supervisor/loop.c,
 * loop_sigs); the spawn server blocks SIGCHLD and SIGUSR1 and ignores the
 * others (spawnd.c, spawnd_main), SIGXFSZ as warren does (cli/main.c).
 */
static void
spawn_child_sigreset(void)
{
	static const int	 sigs[] = { SIGCHLD, SIGINT, SIGTERM, SIGHUP,
				    SIGPIPE, SIGXFSZ };
	sigset_t		 set;
	size_t			 i;

	for (i = 0; i < sizeof(sigs) / sizeof(sigs[0]); i++)
		signal(sigs[i], SIG_DFL);
	sigemptyset(&set);
	sigprocmask(SIG_SETMASK, &set, NULL);
}

/* Report a failure in the child on its stderr pipe and die. */
static void __attribute__((noreturn))
spawn_child_fail(const char *what, const char *detail, int code)
{
	dprintf(STDERR_FILENO, "warren-worker: %s: %s\n", what, detail);
	_exit(code);
}

/* The clean environment plus the sandbox's phase-1 record. */
static void
spawn_child_env(char *const *envp, struct sandbox *sb, char *env[32])
{
	size_t		 n = 0;

	while (envp != NULL && envp[n] != NULL && n < 30) {
		env[n] = envp[n];
		n++;
	}
	if (sb->env[0] != '\0')
		env[n++] = sb->env;
	env[n] = NULL;
}

/* The request and the child's ends of its pipes, for the child. */
struct spawn_exec {
	const struct spawn_req	*req;
	int			 in, out, err;
};

/*
 * A program that sandboxes nothing itself (an MCP server): phase 2 here,
 * just before its exec, as `warren sandbox exec` does; nothing of it has
 * run yet. Never returns.
 */
static void __attribute__((noreturn))
spawn_child_exec_stdio(struct sandbox *sb, char *env[32],
    const struct spawn_req *req)
{
	struct sandbox_report	 rep;
	struct sandbox_error	 e;

	sandbox_close_from(sb, SPAWN_FD_BIN + 1);
	close(SPAWN_FD_IN);
	close(SPAWN_FD_OUT);
	sb->env[0] = '\0';	/* phase 2 is done here: no record to pass */
	spawn_child_env(req->envp, sb, env);
	memset(&e, 0, sizeof(e));
	if (sandbox_enter_exec(sb, &rep, &e) == -1)
		spawn_child_fail("sandbox", e.msg, 126);
	(void)syscall(SYS_execveat, SPAWN_FD_BIN, "", req->argv, env,
	    AT_EMPTY_PATH);
	execve(req->bin, req->argv, env);
	spawn_child_fail(req->bin, strerror(errno), 127);
}

/* The end of phase 1 (sandbox exec_fn): exec the worker. Never returns. */
static void __attribute__((noreturn))
spawn_child_exec(struct sandbox *sb, int rc, struct sandbox_error *e,
    void *arg)
{
	const struct spawn_exec	*x = arg;
	const struct spawn_req	*req = x->req;
	char			*env[32];

	if (rc == -1)
		spawn_child_fail("sandbox", e->msg, 126);
	if (req->mode == SPAWN_STDIO)
		spawn_child_exec_stdio(sb, env, req);
	/* Belt and braces: nothing above the channel survives exec but the
	   ruleset sandbox_enter restricts the worker with and closes. */
	sandbox_close_from(sb, SPAWN_FD_BIN + 1);
	spawn_child_env(req->envp, sb, env);
	(void)syscall(SYS_execveat, SPAWN_FD_BIN, "", req->argv, env,
	    AT_EMPTY_PATH);
	/* A script through a close-on-exec fd cannot run: try the path. */
	execve(req->bin, req->argv, env);
	spawn_child_fail(req->bin, strerror(errno), 127);
}

/*
 * In the child (sandbox_spawn): move fds into place, sandbox, exec. It
 * shares the supervisor's memory until the exec, so it writes nothing but
 * its stack and the copy of the sandbox it is given.
 */
static void
spawn_child(struct sandbox *sb, void *arg)
{
	static const int	 keep[] = { SPAWN_FD_IN, SPAWN_FD_OUT,
				    SPAWN_FD_BIN };
	const struct spawn_exec	*x = arg;
	struct sandbox_error	 e;
	int			 null, hi_in, hi_out, hi_err, bin;

	spawn_child_sigreset();
	if (prctl(PR_SET_PDEATHSIG, SIGKILL) == -1)
		_exit(126);
	/* Lift every fd above the fixed slots first so dup2 cannot clobber. */
	if ((hi_in = fcntl(x->in, F_DUPFD_CLOEXEC, 10)) == -1 ||
	    (hi_out = fcntl(x->out, F_DUPFD_CLOEXEC, 10)) == -1 ||
	    (hi_err = fcntl(x->err, F_DUPFD_CLOEXEC, 10)) == -1 ||
	    (null = open("/dev/null", O_RDWR | O_CLOEXEC)) == -1)
		_exit(126);
	if (x->req->mode == SPAWN_STDIO) {
		if (dup2(hi_in, STDIN_FILENO) == -1 ||
		    dup2(hi_out, STDOUT_FILENO) == -1 ||
		    dup2(hi_err, STDERR_FILENO) == -1 ||
		    dup2(null, SPAWN_FD_IN) == -1 ||
		    dup2(null, SPAWN_FD_OUT) == -1)
			_exit(126);
	} else if (dup2(null, STDIN_FILENO) == -1 ||
	    dup2(null, STDOUT_FILENO) == -1 ||
	    dup2(hi_err, STDERR_FILENO) == -1 ||
	    dup2(hi_in, SPAWN_FD_IN) == -1 || dup2(hi_out, SPAWN_FD_OUT) == -1)
		_exit(126);
	/* The pipes were made non-blocking for the supervisor's ends; ours
	   (their own open file descriptions) block. */
	if (fcntl(STDIN_FILENO, F_SETFL, 0) == -1 ||
	    fcntl(STDOUT_FILENO, F_SETFL, 0) == -1 ||
	    fcntl(SPAWN_FD_IN, F_SETFL, 0) == -1 ||
	    fcntl(SPAWN_FD_OUT, F_SETFL, 0) == -1 ||
	    fcntl(STDERR_FILENO, F_SETFL, 0) == -1)
		_exit(126);
	/*
	 * Hold the program by an fd: the sandbox may mount a private /tmp
	 * (or more) over the directory it lives in. Close-on-exec, so the
	 * worker never sees it.
	 */
	if ((bin = open(x->req->bin, O_PATH | O_CLOEXEC)) == -1)
		spawn_child_fail(x->req->bin, strerror(errno), 127);
	if (dup3(bin, SPAWN_FD_BIN, O_CLOEXEC) == -1)
		_exit(126);
	/* sandbox_child starts the session and ends in spawn_child_exec. */
	sb->exec_fn = spawn_child_exec;
	sb->exec_arg = arg;
	(void)sandbox_child(sb, keep, 3, &e);
	spawn_child_exec(sb, -1, &e, arg);
}

int
spawn_worker(const struct spawn_req *req, struct spawn_child *c, char *err,
    size_t errsz)
{
	int			to[2] = { -1, -1 }, from[2] = { -1, -1 };
	int			errp[2] = { -1, -1 };
	struct sandbox_error	e;
	struct sandbox		*sb;
	struct spawn_exec	x;
	pid_t			pid;
	int			dumpable;

	memset(c, 0, sizeof(*c));
	c->to_fd = c->from_fd = c->err_fd = -1;
	sb = xcalloc(1, sizeof(*sb));
	memset(&e, 0, sizeof(e));
	if (sandbox_prepare(sb, req->policy, &e) == -1) {
		snprintf(err, errsz, "sandbox for %s: %s", req->policy->name,
		    e.msg);
		free(sb);
		return -1;
	}
	/* Non-blocking at birth: the child makes its own ends blocking. */
	if (pipe2(to, O_CLOEXEC | O_NONBLOCK) == -1 ||
	    pipe2(from, O_CLOEXEC | O_NONBLOCK) == -1 ||
	    pipe2(errp, O_CLOEXEC | O_NONBLOCK) == -1) {
		snprintf(err, errsz, "pipe: %s", strerror(errno));
		goto fail;
	}
	x.req = req;
	x.in = to[0];
	x.out = from[1];
	x.err = errp[1];
	/*
	 * A SPAWN_STDIO child runs phase 2 before its exec, in our memory
	 * (sandbox_spawn's CLONE_VM): its PR_SET_DUMPABLE 0 is the memory's,
	 * ours, and a spawner that is not dumpable can no longer write a
	 * child's /proc/self/uid_map in a user namespace (EACCES). Taken
	 * back once it has exec'd.
	 */
	dumpable = prctl(PR_GET_DUMPABLE, 0, 0, 0, 0);
	/* Returns once the worker runs: its session and group are its own. */
	pid = sandbox_spawn(sb, spawn_child, &x, &e);
	if (req->mode == SPAWN_STDIO && dumpable > 0)
		(void)prctl(PR_SET_DUMPABLE, dumpable, 0, 0, 0);
	if (pid == -1) {
		snprintf(err, errsz, "fork of a %s worker: %s",
		    req->policy->name, e.msg);
		goto fail;
	}
	close(to[0]);
	close(from[1]);
	close(errp[1]);
	c->pid = pid;
	c->sb = sb;
	c->to_fd = to[1];
	c->from_fd = from[0];
	c->err_fd = errp[0];
	return 0;
fail:
	if (to[0] != -1) { close(to[0]); close(to[1]); }
	if (from[0] != -1) { close(from[0]); close(from[1]); }
	if (errp[0] != -1) { close(errp[0]); close(errp[1]); }
	sandbox_release(sb);
	free(sb);
	return -1;
}

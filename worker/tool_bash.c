/*
 * bash: /bin/sh -c COMMAND in the workspace. The child gets its own
 * process group, stdin from /dev/null and one pipe for stdout and stderr
 * (interleaved as on a terminal). On timeout the whole group is killed
 * (SIGKILL), and when the shell exits whatever it left running in its group
 * is killed too: nothing a call starts outlives it. Output is capped by
 * keeping its head and its tail (errors are usually at the end) with a note
 * of how much was cut.
 */
#include <sys/types.h>
#include <sys/wait.h>

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "worker/tool_int.h"

/* Head kept whole, tail kept in a ring: bounded memory for any output. */
struct bash_out {
	char	*head;
	size_t	 headcap, headlen;
	char	*tail;
	size_t	 tailcap, tailpos;	/* ring, tailpos = next write */
	size_t	 total;
};

static void
bash_out_add(struct bash_out *o, const char *p, size_t n)
{
	size_t	k;

	o->total += n;
	k = o->headcap - o->headlen;
	if (k > n)
		k = n;
	memcpy(o->head + o->headlen, p, k);
	o->headlen += k;
	p += k;
	n -= k;
	for (; n > 0; p++, n--) {
		o->tail[o->tailpos % o->tailcap] = *p;
		o->tailpos++;
	}
}

static uint64_t
bash_now_ms(void)
{
	struct timespec	ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

static void
bash_child(const struct tool_ctx *ctx, int wfd, const char *cmd)
{
	int	nullfd;

	setpgid(0, 0);
	if (fchdir(ctx->rootfd) == -1)
		_exit(126);
	if ((nullfd = open("/dev/null", O_RDONLY)) == -1 ||
	    dup2(nullfd, 0) == -1 || dup2(wfd, 1) == -1 || dup2(wfd, 2) == -1)
		_exit(126);
	closefrom(3);
	signal(SIGPIPE, SIG_DFL);
	/* The worker ignores it (main.c); a command under the sandbox's
	 * RLIMIT_FSIZE meets it as in a shell of its own. */
	signal(SIGXFSZ, SIG_DFL);
	execl("/bin/sh", "sh", "-c", cmd, (char *)NULL);
	_exit(127);
}

/*
 * Read the output until the shell has exited and the pipe is at EOF, or
 * the deadline passes (1). When the shell exits while something it started
 * still holds the pipe, the group is killed and the rest drained (1 s).
 */
static int
bash_pump(int rfd, pid_t pid, int *status, struct bash_out *o,
    uint64_t deadline)
{
	struct pollfd	pfd;
	char		chunk[16384];
	uint64_t	now;
	ssize_t		n;
	int		eof = 0, exited = 0;

	pfd.events = POLLIN;
	for (;;) {
		now = bash_now_ms();
		if (now >= deadline)
			return exited ? 0 : 1;
		pfd.fd = eof ? -1 : rfd;
		if (poll(&pfd, 1, (int)(deadline - now > 50 ? 50 :
		    deadline - now)) > 0) {
			n = read(rfd, chunk, sizeof(chunk));
			if (n > 0)
				bash_out_add(o, chunk, (size_t)n);
			else if (n == 0 || (errno != EINTR && errno != EAGAIN))
				eof = 1;
		}
		if (!exited && waitpid(pid, status, WNOHANG) == pid) {
			exited = 1;
			kill(-pid, SIGKILL);
			if (deadline > now + 1000)
				deadline = now + 1000;
		}
		if (eof && exited)
			return 0;
	}
}

static int
bash_result(const struct tool_ctx *ctx, struct tool_result *res,
    struct bash_out *o, int status, int timedout, uint64_t timeout)
{
	struct buf	b;
	size_t		taillen, start, i;

	buf_init(&b, 0);
	buf_add(&b, o->head, o->headlen);
	taillen = o->tailpos < o->tailcap ? o->tailpos : o->tailcap;
	if (o->total > o->headlen + taillen)
		buf_addf(&b, "\n[... %zu bytes of output cut from the middle "
		    "...]\n", o->total - o->headlen - taillen);
	start = o->tailpos - taillen;
	for (i = 0; i < taillen; i++)
		buf_addc(&b, o->tail[(start + i) % o->tailcap]);
	if (b.len > 0 && b.data[b.len - 1] != '\n')
		buf_addc(&b, '\n');
	if (timedout) {
		buf_addf(&b, "[killed: timeout after %llu ms; the process "
		    "group was killed]\n", (unsigned long long)timeout);
		res->exit_status = -1;
		res->is_error = 1;
	} else if (WIFSIGNALED(status)) {
		buf_addf(&b, "[killed by signal %d]\n", WTERMSIG(status));
		res->exit_status = 128 + WTERMSIG(status);
	} else {
		buf_addf(&b, "[exit status %d]\n", WEXITSTATUS(status));
		res->exit_status = WEXITSTATUS(status);
	}
	/* The head and tail already bound the size: allow the notes. */
	{
		struct tool_ctx	big = *ctx;

		big.max_output = b.len + 1;
		return tool_done(&big, res, &b);
	}
}

int
tool_bash(const struct tool_ctx *ctx, json_t *args, struct tool_result *res)
{
	const char	*cmd = json_string_value(json_object_get(args,
			    "command"));
	json_t		*jt = json_object_get(args, "timeout_ms");
	struct bash_out	 o;
	uint64_t	 timeout = ctx->bash_timeout_ms ? ctx->bash_timeout_ms :
			    TOOLS_DEFAULT_BASH_TIMEOUT;
	size_t		 max = ctx->max_output ? ctx->max_output :
			    TOOLS_DEFAULT_MAX_OUTPUT;
	pid_t		 pid;
	int		 p[2], status = 0, timedout, rc;

	if (*cmd == '\0')
		return tool_fail(res, "bash: empty command");
	if (jt != NULL) {
		if (json_integer_value(jt) < 1)
			return tool_fail(res, "bash: timeout_ms must be "
			    "positive");
		if ((uint64_t)json_integer_value(jt) < timeout)
			timeout = json_integer_value(jt);
	}
	memset(&o, 0, sizeof(o));
	o.headcap = max / 2;
	o.tailcap = max - o.headcap;
	if ((o.head = malloc(o.headcap)) == NULL ||
	    (o.tail = malloc(o.tailcap)) == NULL) {
		free(o.head);
		return -1;
	}
	if (pipe2(p, O_CLOEXEC) == -1) {
		rc = tool_fail(res, "bash: pipe: %s", strerror(errno));
		goto out;
	}
	(void)fcntl(p[0], F_SETFL, O_NONBLOCK);
	if ((pid = fork()) == -1) {
		rc = tool_fail(res, "bash: fork: %s", strerror(errno));
		close(p[0]);
		close(p[1]);
		goto out;
	}
	if (pid == 0)
		bash_child(ctx, p[1], cmd);
	/* Both sides set the group, so no signal can miss it. */
	setpgid(pid, pid);
	close(p[1]);
	timedout = bash_pump(p[0], pid, &status, &o, bash_now_ms() +
	    timeout);
	/* Timeout, or the shell is done: nothing of the group stays. */
	kill(-pid, SIGKILL);
	close(p[0]);
	if (timedout)
		while (waitpid(pid, &status, 0) == -1 && errno == EINTR)
			;
	rc = bash_result(ctx, res, &o, status, timedout, timeout);
	/*
	 * The worker is pid 1 of its namespace (sandbox_spawn): whatever the
	 * shell left behind and has since exited is ours to reap.
	 */
	while (waitpid(-1, NULL, WNOHANG) > 0)
		;
 out:
	free(o.head);
	free(o.tail);
	return rc;
}

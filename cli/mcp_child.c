/*
 * A child warren for a tool that is not a run (`warren diff`, `warren
 * runs --json`, `warren queue add --jsonl -`, ...): its own process group,
 * SIGTERM when the server dies, its input in a memory file, its stdout
 * kept up to MCP_OUT_MAX and the tail of its stderr. Like a run's child
 * (cli/queue_runner.c), but its output is the answer, not events.
 */
#include <sys/types.h>
#include <sys/wait.h>

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli/mcp.h"

int
mcp_child_start(struct mcp_child *c, const char *exe, char *const argv[],
    const char *input, char *err, size_t errsz)
{
	const char	*what;
	int		 in, fds[2];

	memset(c, 0, sizeof(*c));
	c->pid = -1;
	c->out = c->err = -1;
	/* The input in a memory file; /dev/null without. */
	if ((in = input == NULL ? open("/dev/null", O_RDONLY | O_CLOEXEC) :
	    queue_runner_memfd("warren-mcp-input", "the tool's input", input,
	    err, errsz)) == -1)
		return -1;
	if ((c->pid = queue_runner_spawn(exe, argv, in, 0, "warren mcp", fds,
	    &what)) == -1) {
		snprintf(err, errsz, "starting warren %s: %s", argv[1],
		    strerror(errno));
		return -1;
	}
	c->out = fds[0];
	c->err = fds[1];
	return 0;
}

/* stdout (queue_runner_take): the first MCP_OUT_MAX bytes; the rest
 * only counted as cut. */
static void
mcp_child_out(void *arg, const char *p, size_t n)
{
	struct mcp_child	*c = arg;
	size_t			 k = n;
	char			*t;

	if (c->olen + k > MCP_OUT_MAX) {
		k = MCP_OUT_MAX - c->olen;
		c->ocut = 1;
	}
	if (k == 0)
		return;
	if ((t = realloc(c->obuf, c->olen + k + 1)) == NULL) {
		c->ocut = 1;
		return;
	}
	c->obuf = t;
	memcpy(c->obuf + c->olen, p, k);
	c->olen += k;
	c->obuf[c->olen] = '\0';
}

/* stderr (queue_runner_take): its last MCP_ERR_MAX - 1 bytes. */
static void
mcp_child_errout(void *arg, const char *p, size_t n)
{
	struct mcp_child	*c = arg;
	size_t			 keep = sizeof(c->ebuf) - 1;

	if (n == 0)
		return;
	if (n >= keep) {
		memcpy(c->ebuf, p + n - keep, keep);
		c->elen = keep;
	} else {
		if (c->elen + n > keep) {
			memmove(c->ebuf, c->ebuf + (c->elen + n - keep),
			    keep - n);
			c->elen = keep - n;
		}
		memcpy(c->ebuf + c->elen, p, n);
		c->elen += n;
	}
	c->ebuf[c->elen] = '\0';
}

void
mcp_child_read(struct mcp_child *c, int fd)
{
	if (fd == c->out)
		queue_runner_drain(&c->out, mcp_child_out, c);
	else
		queue_runner_drain(&c->err, mcp_child_errout, c);
}

void
mcp_child_stop(struct mcp_child *c, uint64_t now)
{
	if (c->pid <= 0 || c->kill_at != 0)
		return;
	(void)kill(-c->pid, SIGTERM);
	c->kill_at = now + MCP_KILL_GRACE_MS;
}

void
mcp_child_tick(struct mcp_child *c, uint64_t now)
{
	if (c->pid > 0 && c->kill_at != 0 && now >= c->kill_at) {
		(void)kill(-c->pid, SIGKILL);
		c->kill_at = UINT64_MAX;
	}
}

int
mcp_child_reap(struct mcp_child *c)
{
	if (c->pid <= 0)
		return 1;
	if (!queue_runner_waited(&c->pid, &c->status))
		return 0;
	queue_runner_ended(&c->out, &c->err, mcp_child_out, mcp_child_errout,
	    c);
	return 1;
}

void
mcp_child_free(struct mcp_child *c)
{
	if (c->out != -1)
		close(c->out);
	if (c->err != -1)
		close(c->err);
	free(c->obuf);
	memset(c, 0, sizeof(*c));
	c->pid = -1;
	c->out = c->err = -1;
}

void
mcp_child_how(const struct mcp_child *c, char *buf, size_t sz)
{
	if (WIFSIGNALED(c->status))
		snprintf(buf, sz, "killed by signal %d", WTERMSIG(c->status));
	else
		snprintf(buf, sz, "exit %d", WEXITSTATUS(c->status));
}

/*
 * warren chat's lines (cmd_chat.c). Piped: one message a line. On a
 * terminal: a prompt; Ctrl-C clears the line, a second Ctrl-C (or Ctrl-D)
 * at an empty prompt ends the conversation; every line typed is appended
 * to chat-history in warren's state directory (common/xdg.h), never in
 * the workspace.
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli/cmd_chat.h"
#include "common/xdg.h"

static volatile sig_atomic_t cmd_chat_line_intr;

static void
cmd_chat_line_onint(int sig)
{
	(void)sig;
	cmd_chat_line_intr = 1;
}

void
cmd_chat_line_init(struct cmd_chat *c)
{
	struct sigaction	sa;
	char			dir[PATH_MAX];

	if (!c->tty)
		return;
	/* No SA_RESTART: Ctrl-C ends the read that waits for a line. */
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = cmd_chat_line_onint;
	sigaction(SIGINT, &sa, NULL);
	if (xdg_state_dir(dir, sizeof(dir)) == 0 &&
	    (size_t)snprintf(c->hist, sizeof(c->hist), "%s/chat-history",
	    dir) >= sizeof(c->hist))
		c->hist[0] = '\0';
	printf("warren chat in %s: type a message; /quit to end\n",
	    c->wsreal);
}

/* A line from stdin without its newline; NULL at the end. */
static char *
cmd_chat_line_get(struct cmd_chat *c)
{
	char	*line = NULL;
	size_t	 cap = 0;
	ssize_t	 n;

	for (;;) {
		if (c->tty) {
			printf("> ");
			fflush(stdout);
		}
		cmd_chat_line_intr = 0;
		errno = 0;
		if ((n = getline(&line, &cap, stdin)) >= 0)
			break;
		clearerr(stdin);
		if (!c->tty || !cmd_chat_line_intr) {
			if (c->tty)
				printf("\n");
			free(line);
			return NULL;
		}
		/* Ctrl-C: the line is gone; a second one in a row ends. */
		if (c->sigint) {
			printf("\n");
			free(line);
			return NULL;
		}
		c->sigint = 1;
		printf("\n(Ctrl-C again, Ctrl-D or /quit to end)\n");
	}
	c->sigint = 0;
	while (n > 0 && (line[n - 1] == '\n' || line[n - 1] == '\r'))
		line[--n] = '\0';
	return line;
}

char *
cmd_chat_line_read(struct cmd_chat *c)
{
	return cmd_chat_line_get(c);
}

void
cmd_chat_line_history(struct cmd_chat *c, const char *line)
{
	int	fd;

	if (c->hist[0] == '\0' || *line == '\0')
		return;
	if ((fd = open(c->hist, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC |
	    O_NOFOLLOW, 0600)) == -1)
		return;
	(void)dprintf(fd, "%s\n", line);
	close(fd);
}

void
cmd_chat_line_end(struct cmd_chat *c)
{
	(void)c;
}

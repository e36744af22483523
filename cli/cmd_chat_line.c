/*
 * warren chat's lines (cmd_chat.c). Piped: one message a line. On a
 * terminal: a prompt; Ctrl-C clears the line, a second Ctrl-C (or Ctrl-D)
 * at an empty prompt ends the conversation; every line typed is appended
 * to chat-history in warren's state directory (common/xdg.h), never in
 * the workspace, and its last CHAT_HIST_MAX lines are read back for
 * up/down.
 */
#include <sys/stat.h>

#include <errno.h>
#include <limits.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli/cmd_chat.h"
#include "common/xdg.h"

#define CHAT_HIST_MAX	500	/* lines of history kept for up/down */

/* The state directory (and its parent), made as the store would: a
 * conversation's first line comes before its first run. */
static void
cmd_chat_line_mkdir(const char *dir)
{
	char	parent[PATH_MAX], *slash;

	snprintf(parent, sizeof(parent), "%s", dir);
	if ((slash = strrchr(parent, '/')) != NULL && slash != parent) {
		*slash = '\0';
		(void)mkdir(parent, 0700);
	}
	(void)mkdir(dir, 0700);
}

/* A line to the history in memory; the oldest goes past CHAT_HIST_MAX. */
static void
cmd_chat_line_keep(struct cmd_chat *c, const char *line)
{
	char	**v, *s;

	if ((s = strdup(line)) == NULL)
		return;
	if (c->nhist == CHAT_HIST_MAX) {
		free(c->histv[0]);
		memmove(c->histv, c->histv + 1, --c->nhist * sizeof(*v));
	}
	if ((v = reallocarray(c->histv, c->nhist + 1, sizeof(*v))) == NULL) {
		free(s);
		return;
	}
	c->histv = v;
	c->histv[c->nhist++] = s;
}

/* The history file's lines, read back (none if it cannot be read). */
static void
cmd_chat_line_load(struct cmd_chat *c)
{
	FILE	*f;
	char	*line = NULL;
	size_t	 cap = 0;
	ssize_t	 n;
	int	 fd;

	if (c->hist[0] == '\0' || (fd = open(c->hist, O_RDONLY | O_CLOEXEC |
	    O_NOFOLLOW)) == -1)
		return;
	if ((f = fdopen(fd, "r")) == NULL) {
		close(fd);
		return;
	}
	while ((n = getline(&line, &cap, f)) > 0) {
		if (line[n - 1] == '\n')
			line[--n] = '\0';
		if (n > 0)
			cmd_chat_line_keep(c, line);
	}
	free(line);
	fclose(f);
}

/* A Ctrl-C between a line and its turn's start: the turn's SIGINT is
 * ignored here (cmd_chat_call), the prompt's is a key (cmd_chat_edit.c);
 * none of them ends the conversation. */
static void
cmd_chat_line_onint(int sig)
{
	(void)sig;
}

void
cmd_chat_line_init(struct cmd_chat *c)
{
	struct sigaction	sa;
	char			dir[PATH_MAX];

	if (!c->tty)
		return;
	memset(&sa, 0, sizeof(sa));
	sa.sa_flags = SA_RESTART;
	sa.sa_handler = cmd_chat_line_onint;
	sigaction(SIGINT, &sa, NULL);
	if (xdg_state_dir(dir, sizeof(dir)) == 0)
		cmd_chat_line_mkdir(dir);
	if (xdg_state_dir(dir, sizeof(dir)) == 0 &&
	    (size_t)snprintf(c->hist, sizeof(c->hist), "%s/chat-history",
	    dir) >= sizeof(c->hist))
		c->hist[0] = '\0';
	cmd_chat_line_load(c);
	printf("warren chat in %s: type a message; /quit to end\n",
	    c->wsreal);
}

/* Piped: a line from stdin without its newline; NULL at the end. */
static char *
cmd_chat_line_get(void)
{
	char	*line = NULL;
	size_t	 cap = 0;
	ssize_t	 n;

	if ((n = getline(&line, &cap, stdin)) < 0) {
		free(line);
		return NULL;
	}
	while (n > 0 && (line[n - 1] == '\n' || line[n - 1] == '\r'))
		line[--n] = '\0';
	return line;
}

/* On the terminal: the editor; Ctrl-C drops the line, a second one in
 * a row ends. */
static char *
cmd_chat_line_tty(struct cmd_chat *c)
{
	char	*line;
	int	 intr;

	for (;;) {
		if ((line = cmd_chat_edit(c, &intr)) == NULL || !intr)
			break;
		free(line);
		if (c->sigint)
			return NULL;
		c->sigint = 1;
		printf("(Ctrl-C again, Ctrl-D or /quit to end)\n");
	}
	c->sigint = 0;
	return line;
}

char *
cmd_chat_line_read(struct cmd_chat *c)
{
	if (c->tty)
		return cmd_chat_line_tty(c);
	return cmd_chat_line_get();
}

void
cmd_chat_line_history(struct cmd_chat *c, const char *line)
{
	int	fd;

	if (*line == '\0')
		return;
	cmd_chat_line_keep(c, line);
	if (c->hist[0] == '\0')
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
	size_t	i;

	for (i = 0; i < c->nhist; i++)
		free(c->histv[i]);
	free(c->histv);
}

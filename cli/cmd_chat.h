/*
 * warren chat (cmd_chat.c): the conversation, and reading its lines
 * (cmd_chat_line.c).
 */
#ifndef WARREN_CMD_CHAT_H
#define WARREN_CMD_CHAT_H

#include <limits.h>
#include <stdint.h>

struct cmd_chat {
	char		**fwd;		/* "run" and the options every turn
					   takes; borrowed strings */
	int		  nfwd;
	const char	 *db;		/* --db FILE, or NULL */
	const char	 *ws;		/* --workspace DIR, or NULL */
	char		  wsreal[PATH_MAX];
	int64_t		  cont;		/* --continue RUN; -1 the latest */
	int64_t		  last;		/* the last turn's run, 0: none */
	int		  tty;		/* a terminal: prompt and editing */
	int		  sigint;	/* Ctrl-C at the prompt, not yet
					   followed by a line */
	char		  hist[PATH_MAX];	/* chat-history, or "" */
	char		**histv;	/* its lines, oldest first */
	size_t		  nhist;
};

/* cmd_chat_line.c */
void	 cmd_chat_line_init(struct cmd_chat *);
/* The next line (the caller frees it), NULL at the end (EOF, or a
 * second Ctrl-C at an empty prompt). */
char	*cmd_chat_line_read(struct cmd_chat *);
/* Keep a line typed on the terminal in the history file. */
void	 cmd_chat_line_history(struct cmd_chat *, const char *line);
void	 cmd_chat_line_end(struct cmd_chat *);
/* cmd_chat_edit.c: a line typed on the terminal, edited in raw mode
 * (the caller frees it); NULL at the end. *intr: Ctrl-C dropped it. */
char	*cmd_chat_edit(struct cmd_chat *, int *intr);

#endif

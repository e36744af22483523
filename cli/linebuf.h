/*
 * Whole lines out of a stream's bytes, each at most a given length: a
 * run's events on its stdout (cli/queue_runner.c) and an MCP client's
 * requests on our stdin (cli/mcp_server.c). A longer line, or one there
 * is no memory for, is skipped to its end and given as one NULL line.
 */
#ifndef WARREN_LINEBUF_H
#define WARREN_LINEBUF_H

#include <stddef.h>

struct linebuf {
	char	*line;		/* the line being read */
	size_t	 len, cap;
	int	 skipping;	/* past the most (or out of memory) */
};

/* Each whole line, without its newline, as line(arg, s, len) with
 * s[len] '\0'; one over max bytes as line(arg, NULL, 0). */
typedef void linebuf_line(void *arg, char *s, size_t len);

/* linebuf.c */
/* Take n bytes of the stream; a line ends at its newline. */
void	linebuf_put(struct linebuf *, const char *p, size_t n, size_t max,
	    linebuf_line *line, void *arg);
void	linebuf_free(struct linebuf *);

#endif

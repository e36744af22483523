/*
 * warren chat's line editor on a terminal (cmd_chat_line.c): raw mode
 * while a line is typed, and only then (a turn runs with the terminal as
 * the user left it). Left/right (and Ctrl-B/F), Home/End (Ctrl-A/E),
 * backspace, up/down through the history, Enter; Ctrl-C drops the line,
 * Ctrl-D at an empty line is the end. A UTF-8 sequence moves as one
 * character; a terminal column is taken for each. Keys typed ahead during
 * a turn are kept (TCSADRAIN, not TCSAFLUSH).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <termios.h>
#include <unistd.h>

#include "cli/cmd_chat.h"

#define EDIT_MAX	8192	/* bytes of one line typed */

struct edit {
	char	buf[EDIT_MAX];
	size_t	len, pos;
	size_t	hi;		/* history index; nhist: the new line */
};

static int
edit_cont(unsigned char c)
{
	return (c & 0xC0) == 0x80;
}

/* Columns from byte a to byte b of the line. */
static size_t
edit_cols(const struct edit *e, size_t a, size_t b)
{
	size_t	n = 0;

	for (; a < b; a++)
		n += !edit_cont((unsigned char)e->buf[a]);
	return n;
}

static void
edit_redraw(const struct edit *e)
{
	size_t	back = edit_cols(e, e->pos, e->len);

	printf("\r> %.*s\033[K", (int)e->len, e->buf);
	if (back > 0)
		printf("\033[%zuD", back);
	fflush(stdout);
}

static void
edit_set(struct edit *e, const char *s)
{
	size_t	n = strlen(s);

	if (n >= EDIT_MAX)
		n = EDIT_MAX - 1;
	memcpy(e->buf, s, n);
	e->len = e->pos = n;
}

static void
edit_left(struct edit *e)
{
	while (e->pos > 0 && edit_cont((unsigned char)e->buf[--e->pos]))
		;
}

static void
edit_right(struct edit *e)
{
	if (e->pos < e->len)
		e->pos++;
	while (e->pos < e->len && edit_cont((unsigned char)e->buf[e->pos]))
		e->pos++;
}

static void
edit_backspace(struct edit *e)
{
	size_t	end = e->pos;

	edit_left(e);
	memmove(e->buf + e->pos, e->buf + end, e->len - end);
	e->len -= end - e->pos;
}

static void
edit_insert(struct edit *e, char c)
{
	if (e->len + 1 >= EDIT_MAX)
		return;
	memmove(e->buf + e->pos + 1, e->buf + e->pos, e->len - e->pos);
	e->buf[e->pos++] = c;
	e->len++;
}

static void
edit_hist(struct cmd_chat *c, struct edit *e, int up)
{
	if (up && e->hi > 0)
		e->hi--;
	else if (!up && e->hi < c->nhist)
		e->hi++;
	else
		return;
	edit_set(e, e->hi < c->nhist ? c->histv[e->hi] : "");
}

/* An escape sequence: ESC [ X or ESC O X, ESC [ N ~. */
static void
edit_escape(struct cmd_chat *c, struct edit *e)
{
	char	s[3];

	if (read(STDIN_FILENO, &s[0], 1) != 1 || read(STDIN_FILENO, &s[1],
	    1) != 1)
		return;
	if (s[1] >= '0' && s[1] <= '9') {
		if (read(STDIN_FILENO, &s[2], 1) == 1 && s[2] == '~')
			e->pos = s[1] == '1' || s[1] == '7' ? 0 :
			    s[1] == '4' || s[1] == '8' ? e->len : e->pos;
		return;
	}
	switch (s[1]) {
	case 'A': edit_hist(c, e, 1); break;
	case 'B': edit_hist(c, e, 0); break;
	case 'C': edit_right(e); break;
	case 'D': edit_left(e); break;
	case 'H': e->pos = 0; break;
	case 'F': e->pos = e->len; break;
	default: break;
	}
}

/*
 * One key. 0 go on, 1 the line is done, 2 Ctrl-C, 3 the end (Ctrl-D at
 * an empty line, or no more input).
 */
static int
edit_key(struct cmd_chat *c, struct edit *e)
{
	char	ch;

	if (read(STDIN_FILENO, &ch, 1) != 1)
		return 3;
	switch (ch) {
	case '\r': case '\n': return 1;
	case 3: return 2;
	case 4:
		if (e->len == 0)
			return 3;
		break;
	case 127: case 8:
		if (e->pos > 0)
			edit_backspace(e);
		break;
	case 1: e->pos = 0; break;
	case 5: e->pos = e->len; break;
	case 2: edit_left(e); break;
	case 6: edit_right(e); break;
	case 21: e->len = e->pos = 0; break;
	case 27: edit_escape(c, e); break;
	default:
		if ((unsigned char)ch >= 32)
			edit_insert(e, ch);
		break;
	}
	return 0;
}

/* A line typed; NULL at the end. *intr: it ended with Ctrl-C. */
char *
cmd_chat_edit(struct cmd_chat *c, int *intr)
{
	struct termios	 old, raw;
	struct edit	 e;
	int		 k = 0;
	char		*line = NULL;

	*intr = 0;
	if (tcgetattr(STDIN_FILENO, &old) == -1)
		return NULL;
	raw = old;
	raw.c_lflag &= ~(ICANON | ECHO | ISIG | IEXTEN);
	raw.c_iflag &= ~(ICRNL | IXON);
	raw.c_cc[VMIN] = 1;
	raw.c_cc[VTIME] = 0;
	if (tcsetattr(STDIN_FILENO, TCSADRAIN, &raw) == -1)
		return NULL;
	memset(&e, 0, sizeof(e));
	e.hi = c->nhist;
	edit_redraw(&e);
	while ((k = edit_key(c, &e)) == 0)
		edit_redraw(&e);
	(void)tcsetattr(STDIN_FILENO, TCSADRAIN, &old);
	if (k == 2)
		printf("^C");
	printf("\n");
	fflush(stdout);
	if (k == 1 && (line = strndup(e.buf, e.len)) == NULL)
		return NULL;
	*intr = k == 2;
	if (k == 2)
		line = strdup("");
	return line;
}

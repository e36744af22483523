/*
 * Every command's options are read through cmd_getopt: options anywhere
 * before "--" (GNU permutation), except where the operands are a command
 * line of its own ("+" first: sandbox exec -- CMD ARGS); a bad option is
 * said in one line, with the option meant when it is a near miss, and
 * "try 'warren help CMD'" instead of the command's whole --help.
 */
#include <getopt.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cmd.h"
#include "common/str.h"

/* Edit distance (insert, delete, substitute, swap two neighbours) of a
 * and the first bn bytes of b; stops counting at 9. */
static size_t
cmd_getopt_distance(const char *a, const char *b, size_t bn)
{
	size_t	 an = strlen(a), i, j, d[32][32], best;

	if (an > 30 || bn > 30)
		return 9;
	for (i = 0; i <= an; i++)
		d[i][0] = i;
	for (j = 0; j <= bn; j++)
		d[0][j] = j;
	for (i = 1; i <= an; i++) {
		for (j = 1; j <= bn; j++) {
			best = d[i - 1][j - 1] + (a[i - 1] != b[j - 1]);
			if (d[i - 1][j] + 1 < best)
				best = d[i - 1][j] + 1;
			if (d[i][j - 1] + 1 < best)
				best = d[i][j - 1] + 1;
			if (i > 1 && j > 1 && a[i - 1] == b[j - 2] &&
			    a[i - 2] == b[j - 1] && d[i - 2][j - 2] + 1 < best)
				best = d[i - 2][j - 2] + 1;
			d[i][j] = best;
		}
	}
	return d[an][bn] < 9 ? d[an][bn] : 9;
}

/* The closest of names (n of them) to the first len bytes of s, if near
 * enough to be a slip (one edit in short words, two in longer), else NULL. */
const char *
cmd_getopt_near(const char *s, size_t len, const char *const *names,
    size_t n)
{
	const char	*best = NULL;
	size_t		 i, d, bestd = 9, most = len > 4 ? 2 : 1;

	for (i = 0; i < n; i++) {
		d = cmd_getopt_distance(names[i], s, len);
		if (d < bestd) {
			bestd = d;
			best = names[i];
		}
	}
	return bestd <= most ? best : NULL;
}

/* tail: what follows MSG, not escaped (ours: "; try ..."), "" for none.
 * MSG is said whole up to CMD_ERROR_MAX bytes (a store or copy-on-write
 * error may quote a path twice: 2 * PATH_MAX and more); only a longer
 * one (a huge argument echoed back) or one without memory is cut. */
void
cmd_verror(const char *cmd, const char *tail, const char *fmt, va_list ap)
{
	char	 buf[2048], *msg = buf, *big = NULL, *e;
	size_t	 sz;
	va_list	 aq;
	int	 n;

	va_copy(aq, ap);
	n = vsnprintf(buf, sizeof(buf), fmt, ap);
	if (n >= (int)sizeof(buf)) {
		sz = (size_t)n + 1 < CMD_ERROR_MAX ? (size_t)n + 1 :
		    CMD_ERROR_MAX;
		if ((big = malloc(sz)) != NULL) {
			vsnprintf(big, sz, fmt, aq);
			msg = big;
		}
	}
	va_end(aq);
	e = str_escape_dup(msg, strlen(msg), 0);
	fprintf(stderr, "warren %s: %s%s\n", cmd, e != NULL ? e : msg, tail);
	free(e);
	free(big);
}

void
cmd_error(const char *cmd, const char *fmt, ...)
{
	va_list	ap;

	va_start(ap, fmt);
	cmd_verror(cmd, "", fmt, ap);
	va_end(ap);
}

void
cmd_usage_error(const char *cmd, const char *fmt, ...)
{
	va_list	ap;
	char	tail[128];

	snprintf(tail, sizeof(tail), "; try 'warren help %s'", cmd);
	va_start(ap, fmt);
	cmd_verror(cmd, tail, fmt, ap);
	va_end(ap);
}

/* --NAME that getopt did not take: unknown (maybe a near miss), or
 * ambiguous, or given a value it does not take. */
static void
cmd_getopt_bad_long(const char *cmd, const char *arg,
    const struct option *lo)
{
	const char	*names[128], *near;
	const char	*name = arg + 2;
	size_t		 len = strcspn(name, "="), n = 0, i, pre = 0;

	for (i = 0; lo[i].name != NULL && n < 128; i++) {
		names[n++] = lo[i].name;
		if (strncmp(lo[i].name, name, len) == 0) {
			if (strlen(lo[i].name) == len && name[len] == '=') {
				cmd_usage_error(cmd, "--%s takes no value",
				    lo[i].name);
				return;
			}
			pre++;
		}
	}
	if (pre > 1) {
		cmd_usage_error(cmd, "'--%.*s' is ambiguous: give more of "
		    "the option's name", (int)len, name);
		return;
	}
	if ((near = cmd_getopt_near(name, len, names, n)) != NULL)
		cmd_usage_error(cmd, "unknown option '--%.*s': did you mean "
		    "'--%s'?", (int)len, name, near);
	else
		cmd_usage_error(cmd, "unknown option '--%.*s'", (int)len, name);
}

static void
cmd_getopt_bad(const char *cmd, int ch, char **argv,
    const struct option *lo)
{
	const char	*arg = argv[optind - 1];

	if (ch == ':' && strncmp(arg, "--", 2) == 0)
		cmd_usage_error(cmd, "%.*s needs a value", (int)strcspn(arg,
		    "="), arg);
	else if (ch == ':')
		cmd_usage_error(cmd, "-%c needs a value", optopt);
	else if (strncmp(arg, "--", 2) == 0 && lo != NULL &&
	    (optopt == 0 || strchr(arg, '=') != NULL))
		cmd_getopt_bad_long(cmd, arg, lo);
	else
		cmd_usage_error(cmd, "unknown option '-%c'", optopt);
}

int
cmd_getopt(const char *cmd, int argc, char **argv, const char *shortopts,
    const struct option *longopts)
{
	char	 opts[128];
	int	 ch, keep = shortopts[0] == '+';

	/* '+': stop at the first operand; ':': a missing value is ':'. */
	snprintf(opts, sizeof(opts), "%s:%s", keep ? "+" : "",
	    shortopts + keep);
	opterr = 0;
	ch = getopt_long(argc, argv, opts, longopts, NULL);
	if (ch == '?' || ch == ':') {
		cmd_getopt_bad(cmd, ch, argv, longopts);
		return '?';
	}
	return ch;
}

/* cmd_getopt_ws's options. */
static const struct option cmd_getopt_ws_opts[] = {
	{ "workspace", required_argument, NULL, 'w' },
	{ "json", no_argument, NULL, 'j' },
	{ "help", no_argument, NULL, 'h' },
	{ NULL, 0, NULL, 0 },
};

int
cmd_getopt_ws(const char *cmd, int argc, char **argv, const char **ws,
    int *json)
{
	int	ch;

	*ws = ".";
	*json = 0;
	optind = 1;
	while ((ch = cmd_getopt(cmd, argc, argv, "w:jh",
	    cmd_getopt_ws_opts)) != -1) {
		switch (ch) {
		case 'w':
			*ws = optarg;
			break;
		case 'j':
			*json = 1;
			break;
		case 'h':
			return 1;
		default:
			return -1;
		}
	}
	return 0;
}

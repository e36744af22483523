/*
 * warren-gen-man: write docs/warren.1's generated parts from the option
 * table (cli/opttab.h). Between a line
 *	.\" BEGIN opttab synopsis|list COMMAND
 * and the next
 *	.\" END opttab
 * it puts the synopsis options or the option list of COMMAND; every other
 * line is copied as is.
 *
 *	warren-gen-man FILE		the page, regenerated, on stdout
 *	warren-gen-man --check FILE	exit 1 if FILE is not what it would be
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/opttab.h"
#include "common/gendoc.h"

#define BEGIN	".\\\" BEGIN opttab "
#define END	".\\\" END opttab"

/* Regenerate in into out; -1 on a malformed marker (said on stderr). */
static int
gen_man(FILE *in, FILE *out, const char *name)
{
	char	line[4096], what[32], cmd[32];
	int	skipping = 0, lineno = 0;

	while (fgets(line, sizeof(line), in) != NULL) {
		lineno++;
		if (skipping && strncmp(line, END, strlen(END)) != 0)
			continue;
		fputs(line, out);
		if (skipping) {
			skipping = 0;
			continue;
		}
		if (strncmp(line, BEGIN, strlen(BEGIN)) != 0)
			continue;
		if (sscanf(line + strlen(BEGIN), "%31s %31s", what, cmd) != 2 ||
		    (strcmp(what, "synopsis") != 0 &&
		    strcmp(what, "list") != 0)) {
			fprintf(stderr, "%s:%d: bad marker\n", name, lineno);
			return -1;
		}
		if (strcmp(what, "synopsis") == 0)
			opt_doc_man_synopsis(out, cmd);
		else
			opt_doc_man_list(out, cmd);
		skipping = 1;
	}
	if (skipping) {
		fprintf(stderr, "%s: a BEGIN opttab without its END\n", name);
		return -1;
	}
	return ferror(in) ? -1 : 0;
}

int
main(int argc, char **argv)
{
	static const struct gendoc g = { "warren-gen-man",
	    "the option table (cli/opttab.c)", "man", gen_man };

	return gendoc_main(&g, argc, argv);
}

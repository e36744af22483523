/*
 * warren-gen-hostexec: write docs/workspaces.md's table of names that run
 * code on the host from the table itself (hostexec.c, hostexec_table).
 * Between a line
 *	<!-- BEGIN hostexec table -->
 * and the next
 *	<!-- END hostexec table -->
 * it puts one Markdown row a name; every other line is copied as is.
 *
 *	warren-gen-hostexec FILE		the page, regenerated, on stdout
 *	warren-gen-hostexec --check FILE	exit 1 if FILE is not what it
 *						would be
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/gendoc.h"
#include "workspace/hostexec.h"

#define BEGIN	"<!-- BEGIN hostexec table -->"
#define END	"<!-- END hostexec table -->"

static void
gen_table(FILE *out)
{
	const struct hostexec_row	*t;
	size_t				 n, i;

	t = hostexec_table(&n);
	fputs("| name | where | what runs it |\n| --- | --- | --- |\n", out);
	for (i = 0; i < n; i++)
		fprintf(out, "| `%s` | %s | %s |\n", t[i].name,
		    t[i].flags & HOSTEXEC_ANY ? "any depth" : "root",
		    t[i].why);
}

/* Regenerate in into out; -1 on a malformed marker (said on stderr). */
static int
gen_page(FILE *in, FILE *out, const char *name)
{
	char	line[4096];
	int	skipping = 0, done = 0;

	while (fgets(line, sizeof(line), in) != NULL) {
		if (skipping && strncmp(line, END, strlen(END)) != 0)
			continue;
		fputs(line, out);
		if (skipping) {
			skipping = 0;
			continue;
		}
		if (strncmp(line, BEGIN, strlen(BEGIN)) != 0)
			continue;
		gen_table(out);
		skipping = done = 1;
	}
	if (skipping || !done) {
		fprintf(stderr, "%s: no \"%s\" ... \"%s\" block\n", name,
		    BEGIN, END);
		return -1;
	}
	return ferror(in) ? -1 : 0;
}

int
main(int argc, char **argv)
{
	static const struct gendoc g = { "warren-gen-hostexec",
	    "the table of names that run code on the host (workspace/hostexec.c)", "hostexec-doc", gen_page };

	return gendoc_main(&g, argc, argv);
}

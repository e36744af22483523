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

static char *
gen_slurp(FILE *f, size_t *len)
{
	char	*buf = NULL, *nb;
	size_t	 cap = 0, n;

	*len = 0;
	do {
		if (*len + 4096 > cap) {
			if ((nb = realloc(buf, cap = cap * 2 + 8192)) == NULL) {
				free(buf);
				return NULL;
			}
			buf = nb;
		}
		n = fread(buf + *len, 1, cap - *len, f);
		*len += n;
	} while (n > 0);
	return buf;
}

int
main(int argc, char **argv)
{
	FILE	*in, *mem;
	char	*want, *have;
	size_t	 nwant, nhave;
	int	 check = argc == 3 && strcmp(argv[1], "--check") == 0, rc;

	if (argc != 2 && !check) {
		fprintf(stderr, "usage: warren-gen-hostexec [--check] FILE\n");
		return 2;
	}
	if ((in = fopen(argv[argc - 1], "r")) == NULL) {
		perror(argv[argc - 1]);
		return 2;
	}
	if (!check)
		return gen_page(in, stdout, argv[1]) == -1 ? 1 : 0;
	if ((mem = tmpfile()) == NULL || gen_page(in, mem, argv[2]) == -1)
		return 2;
	rewind(in);
	rewind(mem);
	want = gen_slurp(mem, &nwant);
	have = gen_slurp(in, &nhave);
	fclose(mem);
	fclose(in);
	if (want == NULL || have == NULL)
		rc = 2;
	else if (nwant != nhave || memcmp(want, have, nwant) != 0) {
		fprintf(stderr, "%s is not what the table of names that run "
		    "code on the host (workspace/hostexec.c) makes: run `cmake "
		    "--build build --target hostexec-doc` and commit it\n",
		    argv[2]);
		rc = 1;
	} else
		rc = 0;
	free(want);
	free(have);
	return rc;
}

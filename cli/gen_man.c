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
		fprintf(stderr, "usage: warren-gen-man [--check] FILE\n");
		return 2;
	}
	if ((in = fopen(argv[argc - 1], "r")) == NULL) {
		perror(argv[argc - 1]);
		return 2;
	}
	if (!check)
		return gen_man(in, stdout, argv[1]) == -1 ? 1 : 0;
	if ((mem = tmpfile()) == NULL || gen_man(in, mem, argv[2]) == -1)
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
		fprintf(stderr, "%s is not what the option table "
		    "(cli/opttab.c) makes: run `cmake --build build --target "
		    "man` and commit it\n", argv[2]);
		rc = 1;
	} else
		rc = 0;
	free(want);
	free(have);
	return rc;
}

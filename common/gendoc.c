/* The generated-document tools' main (gendoc.h). */
#include <stdlib.h>
#include <string.h>

#include "common/gendoc.h"

static char *
gendoc_slurp(FILE *f, size_t *len)
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

/* Is path what g makes of it? 0 yes, 1 no (said), 2 it cannot tell. */
static int
gendoc_check(const struct gendoc *g, FILE *in, const char *path)
{
	FILE	*mem;
	char	*want, *have;
	size_t	 nwant, nhave;
	int	 rc;

	if ((mem = tmpfile()) == NULL || g->gen(in, mem, path) == -1) {
		if (mem != NULL)
			fclose(mem);
		return 2;
	}
	rewind(in);
	rewind(mem);
	want = gendoc_slurp(mem, &nwant);
	have = gendoc_slurp(in, &nhave);
	fclose(mem);
	if (want == NULL || have == NULL)
		rc = 2;
	else if (nwant != nhave || memcmp(want, have, nwant) != 0) {
		fprintf(stderr, "%s is not what %s makes: run `cmake --build "
		    "build --target %s` and commit it\n", path, g->table,
		    g->target);
		rc = 1;
	} else
		rc = 0;
	free(want);
	free(have);
	return rc;
}

int
gendoc_main(const struct gendoc *g, int argc, char **argv)
{
	FILE	*in;
	int	 check = argc == 3 && strcmp(argv[1], "--check") == 0, rc;

	if (argc != 2 && !check) {
		fprintf(stderr, "usage: %s [--check] FILE\n", g->prog);
		return 2;
	}
	if ((in = fopen(argv[argc - 1], "r")) == NULL) {
		perror(argv[argc - 1]);
		return 2;
	}
	if (!check)
		rc = g->gen(in, stdout, argv[1]) == -1 ? 1 : 0;
	else
		rc = gendoc_check(g, in, argv[2]);
	fclose(in);
	return rc;
}

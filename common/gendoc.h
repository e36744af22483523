/*
 * The main of a tool that writes a generated part of a document from a
 * table in the code (warren-gen-man: the man page's options;
 * warren-gen-hostexec: docs/workspaces.md's names), so the page and the
 * table cannot drift apart:
 *
 *	TOOL FILE		the page, regenerated, on stdout
 *	TOOL --check FILE	exit 1 if FILE is not what it would be
 */
#ifndef WARREN_GENDOC_H
#define WARREN_GENDOC_H

#include <stdio.h>

struct gendoc {
	const char	*prog;		/* "warren-gen-man" */
	const char	*table;		/* "the option table (cli/opttab.c)" */
	const char	*target;	/* the CMake target that rewrites it */
	/* Copy in to out, the generated part made anew; -1 said on stderr
	 * (name is the file's, for messages). */
	int		(*gen)(FILE *in, FILE *out, const char *name);
};

int	gendoc_main(const struct gendoc *, int argc, char **argv);

#endif

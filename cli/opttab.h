/*
 * The options of `warren run`, `warren resume` and `warren ask` in one
 * table: their --help lists and the man page's synopsis and option lists
 * (docs/warren.1, written by warren-gen-man at build time) are both drawn
 * from it, so the two cannot drift, and test_opttab checks every getopt
 * option of those commands has its row.
 */
#ifndef WARREN_OPTTAB_H
#define WARREN_OPTTAB_H

#include <stdio.h>

struct option;

struct opt_doc {
	const char	*cmds;	/* the commands that take it: "run resume" */
	char		 short_name;	/* 'j', or 0 */
	const char	*long_name;	/* "jobs", or NULL for a short one */
	const char	*arg;	/* "N", "auto|overlay|copy", or NULL */
	const char	*help;	/* plain text; sentences end with ". " */
};

/* opttab.c */
extern const struct opt_doc	opt_docs[];
extern const size_t		opt_ndocs;
/* --help: each option of cmd and its help, wrapped at 79 columns. */
void	opt_doc_help(FILE *f, const char *cmd);
/* Does cmd take the option of row d? (the completions, gen_completion.c) */
int	opt_doc_for(const struct opt_doc *d, const char *cmd);
/* The man page: the synopsis options (.Op lines) and the option list
 * (.Bl -tag ... .El) of cmd, in mdoc. */
void	opt_doc_man_synopsis(FILE *f, const char *cmd);
void	opt_doc_man_list(FILE *f, const char *cmd);

#endif

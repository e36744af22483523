/*
 * warren-gen-completion bash|zsh|fish: the shell completion script for
 * warren on stdout, from the command table (cmdtab.c) and the option table
 * (opttab.c), as warren-gen-man writes the man page's options from the
 * latter: a new command or option completes without an edit here. Values
 * complete where the table knows them: a choice (auto|overlay|copy), the
 * built-in profiles, the providers, a DIR or a FILE.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "agent/profile.h"
#include "cli/cmd.h"
#include "cli/opttab.h"
#include "llm/llm.h"

enum gen_value { GEN_NONE, GEN_FREE, GEN_CHOICE, GEN_DIR, GEN_FILE };

/* What follows the option of row d on the command line. */
static enum gen_value
gen_value(const struct opt_doc *d)
{
	if (d->arg == NULL || d->arg[0] == '[')	/* [RUN]: its own word */
		return GEN_NONE;
	if (strchr(d->arg, '|') != NULL ||
	    strcmp(d->long_name != NULL ? d->long_name : "", "profile") == 0 ||
	    strcmp(d->long_name != NULL ? d->long_name : "", "provider") == 0)
		return GEN_CHOICE;
	if (strcmp(d->arg, "DIR") == 0)
		return GEN_DIR;
	if (strcmp(d->arg, "FILE") == 0)
		return GEN_FILE;
	return GEN_FREE;
}

/* The choices of row d, separated by sep. */
static void
gen_choices(FILE *f, const struct opt_doc *d, const char *sep)
{
	const struct profile	*p;
	const char		*s;
	size_t			 i, n = 0;

	if (strcmp(d->long_name, "profile") == 0) {
		for (i = 0; (p = profile_builtin_at(i)) != NULL; i++)
			if (profile_in_worker(p))
				fprintf(f, "%s%s", n++ > 0 ? sep : "", p->name);
	} else if (strcmp(d->long_name, "provider") == 0) {
		for (i = 0; (s = llm_preset_at(i)) != NULL; i++)
			fprintf(f, "%s%s", i > 0 ? sep : "", s);
	} else {
		for (s = d->arg; *s != '\0'; s++) {
			if (*s == '|')
				fputs(sep, f);
			else
				fputc(*s, f);
		}
	}
}

/* The first sentence of the help, quoted for a shell's single quotes
 * (zsh: with [ ] : escaped for _arguments; fish: \' for '). */
static void
gen_help(FILE *f, const char *help, int zsh)
{
	const char	*s, *end;

	/* The first sentence, cut at a word within 70 bytes. */
	for (end = help; *end != '\0'; end++)
		if (*end == '.' && (end[1] == ' ' || end[1] == '\0'))
			break;
	if (end - help > 70) {
		for (end = help + 70; end > help && *end != ' '; end--)
			;
		while (end > help && strchr(" ,;:(", end[-1]) != NULL)
			end--;
	}
	for (s = help; s < end; s++) {
		if (*s == '\'')
			fputs(zsh ? "'\\''" : "\\'", f);
		else if (zsh && strchr("[]:\\", *s) != NULL)
			fprintf(f, "\\%c", *s);
		else if (!zsh && *s == '\\')
			fputs("\\\\", f);
		else
			fputc(*s, f);
	}
}

static void
gen_bash_values(FILE *f, const char *cmd)
{
	const struct opt_doc	*d;
	size_t			 i;
	enum gen_value		 v;

	for (i = 0; i < opt_ndocs; i++) {
		d = &opt_docs[i];
		if (!opt_doc_for(d, cmd) || (v = gen_value(d)) == GEN_NONE)
			continue;
		fprintf(f, "\t%s:--%s", cmd, d->long_name);
		if (d->short_name != 0)
			fprintf(f, "|%s:-%c", cmd, d->short_name);
		if (v == GEN_CHOICE) {
			fputs(")\n\t\tCOMPREPLY=($(compgen -W '", f);
			gen_choices(f, d, " ");
			fputs("' -- \"$cur\"))\n\t\treturn 0 ;;\n", f);
		} else if (v == GEN_DIR)
			fputs(")\n\t\tCOMPREPLY=($(compgen -d -- \"$cur\"))\n"
			    "\t\treturn 0 ;;\n", f);
		else if (v == GEN_FILE)
			fputs(")\n\t\tCOMPREPLY=($(compgen -f -- \"$cur\"))\n"
			    "\t\treturn 0 ;;\n", f);
		else
			fputs(")\n\t\treturn 0 ;;\n", f);
	}
}

static void
gen_bash(FILE *f)
{
	const struct opt_doc	*d;
	size_t			 i, j;

	fputs("# bash completion for warren: written by warren-gen-completion"
	    "\n# from cli/cmdtab.c and cli/opttab.c; do not edit.\n"
	    "_warren()\n{\n\tlocal cur prev cmd opts\n"
	    "\tcur=${COMP_WORDS[COMP_CWORD]}\n"
	    "\tprev=${COMP_WORDS[COMP_CWORD-1]}\n\tCOMPREPLY=()\n"
	    "\tif [ \"$COMP_CWORD\" -eq 1 ]; then\n"
	    "\t\tCOMPREPLY=($(compgen -W '", f);
	for (i = 0; i < warren_ncmds; i++)
		fprintf(f, "%s%s", i > 0 ? " " : "", warren_cmds[i].name);
	fputs(" help' -- \"$cur\"))\n\t\treturn 0\n\tfi\n"
	    "\tcmd=${COMP_WORDS[1]}\n\tcase \"$cmd:$prev\" in\n"
	    "\thelp:help)\n\t\tCOMPREPLY=($(compgen -W '", f);
	for (i = 0; i < warren_ncmds; i++)
		fprintf(f, "%s%s", i > 0 ? " " : "", warren_cmds[i].name);
	fputs("' -- \"$cur\"))\n\t\treturn 0 ;;\n", f);
	for (i = 0; i < warren_ncmds; i++)
		gen_bash_values(f, warren_cmds[i].name);
	fputs("\tesac\n\tcase \"$cmd\" in\n", f);
	for (i = 0; i < warren_ncmds; i++) {
		fprintf(f, "\t%s)\n\t\topts='", warren_cmds[i].name);
		for (j = 0; j < opt_ndocs; j++) {
			d = &opt_docs[j];
			if (!opt_doc_for(d, warren_cmds[i].name))
				continue;
			if (d->long_name != NULL)
				fprintf(f, "--%s ", d->long_name);
			if (d->short_name != 0)
				fprintf(f, "-%c ", d->short_name);
		}
		fputs("--help' ;;\n", f);
	}
	fputs("\t*)\n\t\topts='--help' ;;\n\tesac\n"
	    "\tcase \"$cur\" in\n"
	    "\t-*)\n\t\tCOMPREPLY=($(compgen -W \"$opts\" -- \"$cur\")) ;;\n"
	    "\t*)\n\t\tCOMPREPLY=($(compgen -f -- \"$cur\")) ;;\n"
	    "\tesac\n\treturn 0\n}\ncomplete -F _warren warren\n", f);
}

/* One _arguments spec of row d, for its long or short name. */
static void
gen_zsh_spec(FILE *f, const struct opt_doc *d, const char *name)
{
	enum gen_value	v = gen_value(d);

	fprintf(f, " \\\n\t\t'%s[", name);
	gen_help(f, d->help, 1);
	fputc(']', f);
	if (v == GEN_CHOICE) {
		fprintf(f, ":%s:(", d->arg);
		gen_choices(f, d, " ");
		fputc(')', f);
	} else if (v == GEN_DIR)
		fputs(":DIR:_files -/", f);
	else if (v == GEN_FILE)
		fputs(":FILE:_files", f);
	else if (v == GEN_FREE)
		fprintf(f, ":%s: ", d->arg);
	fputc('\'', f);
}

static void
gen_zsh(FILE *f)
{
	const struct opt_doc	*d;
	char			 name[64];
	size_t			 i, j;

	fputs("#compdef warren\n# zsh completion for warren: written by "
	    "warren-gen-completion\n# from cli/cmdtab.c and cli/opttab.c; do "
	    "not edit.\n_warren()\n{\n\tlocal -a cmds\n\tcmds=(", f);
	for (i = 0; i < warren_ncmds; i++) {
		fprintf(f, "\n\t\t'%s:", warren_cmds[i].name);
		gen_help(f, warren_cmds[i].summary, 1);
		fputc('\'', f);
	}
	fputs("\n\t)\n\tif (( CURRENT == 2 )); then\n"
	    "\t\t_describe -t commands 'warren command' cmds\n\t\treturn\n"
	    "\tfi\n\tlocal cmd=$words[2]\n\tshift words\n\t(( CURRENT-- ))\n"
	    "\tcase $cmd in\n", f);
	for (i = 0; i < warren_ncmds; i++) {
		fprintf(f, "\t%s)\n\t\t_arguments -s", warren_cmds[i].name);
		for (j = 0; j < opt_ndocs; j++) {
			d = &opt_docs[j];
			if (!opt_doc_for(d, warren_cmds[i].name))
				continue;
			if (d->long_name != NULL) {
				snprintf(name, sizeof(name), "--%s",
				    d->long_name);
				gen_zsh_spec(f, d, name);
			}
			if (d->short_name != 0) {
				snprintf(name, sizeof(name), "-%c",
				    d->short_name);
				gen_zsh_spec(f, d, name);
			}
		}
		fputs(" \\\n\t\t'--help[describe the command]' \\\n"
		    "\t\t'*:argument:_files' ;;\n", f);
	}
	fputs("\t*)\n\t\t_files ;;\n\tesac\n}\n_warren \"$@\"\n", f);
}

static void
gen_fish_opt(FILE *f, const char *cmd, const struct opt_doc *d)
{
	enum gen_value	v = gen_value(d);

	fprintf(f, "complete -c warren -n '__fish_seen_subcommand_from %s'",
	    cmd);
	if (d->long_name != NULL)
		fprintf(f, " -l %s", d->long_name);
	if (d->short_name != 0)
		fprintf(f, " -s %c", d->short_name);
	if (v == GEN_CHOICE) {
		fputs(" -x -a '", f);
		gen_choices(f, d, " ");
		fputc('\'', f);
	} else if (v == GEN_DIR)
		fputs(" -r -a '(__fish_complete_directories)'", f);
	else if (v == GEN_FILE)
		fputs(" -r -F", f);
	else if (v == GEN_FREE)
		fputs(" -x", f);
	fputs(" -d '", f);
	gen_help(f, d->help, 0);
	fputs("'\n", f);
}

static void
gen_fish(FILE *f)
{
	size_t	i, j;

	fputs("# fish completion for warren: written by warren-gen-completion"
	    "\n# from cli/cmdtab.c and cli/opttab.c; do not edit.\n"
	    "complete -c warren -f\n", f);
	for (i = 0; i < warren_ncmds; i++) {
		fprintf(f, "complete -c warren -n __fish_use_subcommand -a %s "
		    "-d '", warren_cmds[i].name);
		gen_help(f, warren_cmds[i].summary, 0);
		fputs("'\n", f);
	}
	for (i = 0; i < warren_ncmds; i++)
		for (j = 0; j < opt_ndocs; j++)
			if (opt_doc_for(&opt_docs[j], warren_cmds[i].name))
				gen_fish_opt(f, warren_cmds[i].name,
				    &opt_docs[j]);
}

int
main(int argc, char **argv)
{
	if (argc != 2)
		goto usage;
	if (strcmp(argv[1], "bash") == 0)
		gen_bash(stdout);
	else if (strcmp(argv[1], "zsh") == 0)
		gen_zsh(stdout);
	else if (strcmp(argv[1], "fish") == 0)
		gen_fish(stdout);
	else
		goto usage;
	if (fflush(stdout) == EOF || ferror(stdout)) {
		perror("warren-gen-completion: stdout");
		return 1;
	}
	return 0;
usage:
	fprintf(stderr, "usage: warren-gen-completion bash|zsh|fish\n");
	return 2;
}

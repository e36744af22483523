/*
 * Agent backends: what program an agent is. Most agents are warren's own
 * reason-act loop (BACKEND_LOOP); an agent file may instead name another
 * agent program (`backend: claude-code`, `codex`, or `command` with its
 * program and arguments), which the worker runs as its child inside its
 * sandbox, with a private HOME and a base URL on 127.0.0.1 that the worker
 * serves and brokers to the supervisor (docs/backends.md).
 *
 * backend.c: the names, finding a program, and the launch of `command`;
 * backend_presets.c: the launches of claude-code and codex (their argv,
 * environment and the settings files written into the private HOME).
 */
#ifndef WARREN_BACKEND_H
#define WARREN_BACKEND_H

#include <sys/types.h>

#include <stddef.h>

#define BACKEND_ARGV_MAX	64
#define BACKEND_ENV_MAX		48
#define BACKEND_FILES_MAX	8
/* What a launch puts where a program insists on an API key: never a key
 * (the supervisor adds the real one upstream, docs/backends.md). */
#define BACKEND_KEY_PLACEHOLDER	"warren-brokered"

enum backend_kind {
	BACKEND_LOOP = 0,	/* warren's own reason-act loop */
	BACKEND_COMMAND,	/* any agent CLI: a program and its arguments */
	BACKEND_CLAUDE_CODE,	/* Claude Code (`claude`), Anthropic Messages */
	BACKEND_CODEX,		/* Codex CLI (`codex`), OpenAI Responses */
};

/* What a backend program is started with. */
struct backend_args {
	const char	*program;	/* absolute path, found */
	char *const	*args;		/* BACKEND_COMMAND: the profile's
					   arguments (NULL-terminated); "{task}"
					   and "{base_url}" are replaced */
	const char	*task;
	const char	*base_url;	/* http://127.0.0.1:PORT, no path */
	const char	*home;		/* the private HOME: absolute, exists */
	const char	*workspace;	/* its working directory */
	const char	*model;		/* model to ask for; NULL: its default */
	const char	*prompt;	/* the profile's role prompt, or NULL */
	const char	*wire;		/* BACKEND_COMMAND: the profile's wire:
					   "anthropic" (NULL), "responses" or
					   "openai" (extbroker) */
};

/* A file the launch needs in the private HOME (its settings). */
struct backend_file {
	char	*path;			/* relative to HOME */
	char	*content;
	mode_t	 mode;
};

/* How to start it: all strings owned, freed by backend_launch_free. */
struct backend_launch {
	int			 argc;
	char			*argv[BACKEND_ARGV_MAX + 1];	/* [0]: program */
	int			 envc;
	char			*envp[BACKEND_ENV_MAX + 1];	/* the whole
							   environment, K=V */
	int			 nfiles;
	struct backend_file	 files[BACKEND_FILES_MAX];
	const char		*wire;	/* the API it speaks: "anthropic",
					   "responses" or "openai" */
};

/* backend.c */
/* "claude-code", "codex", "command" or "loop"; -1 for anything else. */
int		 backend_parse(const char *s, enum backend_kind *k);
const char	*backend_name(enum backend_kind k);
/* The program a preset runs ("claude", "codex"); NULL for loop, command. */
const char	*backend_program_name(enum backend_kind k);
/* What to install when the program is missing, one line. */
const char	*backend_install_hint(enum backend_kind k);
/*
 * Find name (a path, or a name looked up in PATH) as an executable file;
 * its absolute path in out. 0, or -1 with errno (ENOENT: not found).
 */
int		 backend_find_program(const char *name, char *out, size_t len);
/* Fill l for kind k; 0, or -1 with a message in err. */
int		 backend_launch_build(enum backend_kind k,
		    const struct backend_args *a, struct backend_launch *l,
		    char *err, size_t errlen);
void		 backend_launch_free(struct backend_launch *l);

/* backend_presets.c */
/* backend_launch_build for BACKEND_CLAUDE_CODE and BACKEND_CODEX. */
int		 backend_preset_build(enum backend_kind k,
		    const struct backend_args *a, struct backend_launch *l,
		    char *err, size_t errlen);

#endif

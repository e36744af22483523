/*
 * Profiles: what an agent is for, which tools it is shown and which
 * sandbox it needs. Built-ins (explore, plan, review, test, general,
 * orchestrator) and user profiles read from .warren/agents/NAME.md:
 *
 *	---
 *	name: reviewer
 *	description: Reviews a diff for bugs
 *	tools: Read, Grep, Glob          (or a YAML list: "- Read")
 *	model: gpt-4o-mini               (optional)
 *	context: hierarchical            (optional: append | hierarchical)
 *	keep: 12                         (optional: messages / exchanges kept)
 *	compact: 75                      (optional: % of the budget)
 *	budget: 32000                    (optional: context tokens)
 *	backend: command                 (optional: claude-code | codex |
 *	command: /usr/bin/my-agent        command; loop is warren's own)
 *	args: [--task, "{task}"]         (command: its arguments)
 *	wire: anthropic                  (command: anthropic | responses |
 *	---                               openai)
 *	The role prompt (the body).
 *
 * Claude Code's tool names (Read, Write, Edit, Glob, Grep, Bash, TodoWrite,
 * LS, Task) are accepted. A profile without a tools line gets explore's.
 * complete and fail are always given; they are not listed.
 */
#ifndef WARREN_PROFILE_H
#define WARREN_PROFILE_H

#include <stddef.h>

#include "agent/agent.h"
#include "agent/backend.h"
#include "sandbox/sandbox.h"

#define PROFILE_MAX_FILE	(256 * 1024)	/* bytes of one .md file */
#define PROFILE_MAX_TOOLS	16

struct profile {
	char			*name;
	char			*description;
	char			*model;		/* NULL: the run's model */
	char			*prompt;	/* role prompt */
	const char		*tools[PROFILE_MAX_TOOLS]; /* canonical names
					   (static strings), complete/fail
					   not included */
	size_t			 ntools;
	int			 fs_write;	/* write or edit: rw workspace */
	int			 exec;		/* bash: exec allowed */
	int			 delegate;	/* may spawn subagents */
	int			 builtin;
	struct agent_context_cfg context;
	char			*source;	/* file path, or "built-in" */
	/* Another agent program instead of the loop (docs/backends.md):
	 * for BACKEND_COMMAND its program as written (a path, or a name
	 * looked up in PATH), its arguments (NULL-terminated) and wire. */
	enum backend_kind	 backend;
	char			*command;
	char			*args[BACKEND_ARGV_MAX];
	size_t			 nargs;
	char			*wire;		/* NULL: anthropic */
};

struct profile_set {
	const struct profile	**v;	/* built-ins first, then files */
	size_t			  n;
	struct profile		**owned; /* the file ones, freed with the set */
	size_t			  nowned;
	size_t			  layer;  /* owned[layer..]: the current layer */
};

/* profile.c */
/* Built-ins are static and never freed. */
const struct profile	*profile_builtin(const char *name);
const struct profile	*profile_builtin_at(size_t i);	/* NULL past end */
/* Whether p lists tool (canonical name). */
int			 profile_has_tool(const struct profile *p,
			    const char *tool);
/* Tokens the tool schemas cost per call: chars/4 of the tools as sent
 * (complete and fail included). */
size_t			 profile_schema_tokens(const struct profile *p);
/* fs_write, exec and delegate from p's tools (the sandbox follows); a
 * backend's program writes and runs programs: fs_write and exec. */
void			 profile_derive(struct profile *p);
/* Whether p has a tool that runs in a worker, in the workspace: the
 * profiles a sandbox is for (not the orchestrator's routing tools). */
int			 profile_in_worker(const struct profile *p);
/*
 * The sandbox policy of built-in profile name in workspace: its fs_write
 * and exec as its tools say. -1 with e filled (ENOENT) for a name that is
 * no built-in, or as sandbox_policy_init fails.
 */
int			 profile_policy(struct sandbox_policy *sp,
			    const char *name, const char *workspace,
			    struct sandbox_error *e);
/*
 * p narrowed to the n tools named (a delegate call's tool_filter, names
 * as users write them): a new profile (profile_free) whose sandbox is
 * derived from the tools left, so general without bash runs no program.
 * NULL with err naming a tool p does not have.
 */
struct profile		*profile_narrow(const struct profile *p,
			    const char *const *tools, size_t n, char *err,
			    size_t errsz);
void			 profile_free(struct profile *p);

/* profile_file.c */
/*
 * A warning about a file (a tool warren lacks) goes to fn, with the file's
 * name and whole text (a caller may say it once per version of the file:
 * cli/agent_warn.c), instead of the log; fn NULL: the log again. One hook
 * for the process.
 */
typedef void		(*profile_warn_fn)(void *arg, const char *file,
			    const char *text, size_t len, const char *msg);
void			 profile_warn_hook(profile_warn_fn fn, void *arg);
/*
 * Profiles come in layers, each over the ones before it: the built-ins,
 * the user's directory ($XDG_CONFIG_HOME/warren/agents), a trusted
 * project's files. A profile replaces one of the same name from an
 * earlier layer; two of one name in one layer are an error.
 *
 * profile_set_load: built-ins plus dir/ *.md as one layer (dir NULL:
 * built-ins only). A missing directory is not an error; a malformed file
 * is (-1, err names file and line).
 */
int			 profile_set_load(struct profile_set *set,
			    const char *dir, char *err, size_t errlen);
/* Start a new layer. */
void			 profile_set_layer(struct profile_set *set);
/* One file's text into the current layer; filename names it in errors. */
int			 profile_set_add_text(struct profile_set *set,
			    const char *text, size_t len, const char *filename,
			    char *err, size_t errlen);
const struct profile	*profile_set_find(const struct profile_set *set,
			    const char *name);
void			 profile_set_free(struct profile_set *set);

#endif

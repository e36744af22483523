/*
 * A project's own config: WORKSPACE/.warren/config,
 * WORKSPACE/.warren/agents/NAME.md and Claude Code's
 * WORKSPACE/.claude/agents/NAME.md (one trusted set; a name in both agent
 * directories is .warren's; .warren/agents may be a symlink to the
 * workspace's .claude/agents, read once as that, docs/agent.md).
 *
 * Whoever can write the workspace can write these, write-capable agents
 * included, so warren reads them only once the user has trusted their
 * current contents with `warren trust` (the SHA-256 of each file is kept
 * in the state database, store_trust.c). A changed, added or removed file
 * makes the whole set untrusted again. Each file is read once, into
 * memory; what is hashed is what is parsed. Symlinks and anything but
 * regular files are never followed or read.
 *
 * Even trusted, a project file never sets the endpoint, headers, key file
 * or any path (CONFIG_NOPROJECT in config.h), and its limits only lower
 * the user's (CONFIG_LOWER).
 */
#ifndef WARREN_PROJECT_H
#define WARREN_PROJECT_H

#include <limits.h>
#include <stddef.h>

struct config;
struct profile_set;

#define PROJECT_MAX_FILES	64	/* .warren's */
#define PROJECT_MAX_CLAUDE	64	/* .claude/agents' */
#define PROJECT_WARREN_AGENTS	".warren/agents"
#define PROJECT_CLAUDE_AGENTS	".claude/agents"	/* Claude Code's */
#define PROJECT_WHY_MAX		1024
#define PROJECT_MCP_JSON	".mcp.json"	/* Claude Code's MCP servers */

struct project_file {
	char	*path;		/* below the workspace: ".warren/config" */
	char	*text;		/* its contents, NUL-terminated */
	size_t	 len;
	char	 sha256[65];	/* hex */
};

struct project {
	char			 workspace[PATH_MAX];	/* a realpath */
	struct project_file	*files;
	size_t			 nfiles;
	int			 unsafe;	/* a symlink or special file
						   where a config file goes:
						   never trusted */
	int			 trusted;	/* set by project_check */
	char			 why[PROJECT_WHY_MAX];	/* if not trusted */
	/* .claude/agents has its own verdict: a symlink, a special file, a
	 * file too large or too many skip it (none of its files is in
	 * files), not the project. */
	int			 claude_skip;
	char			 claude_why[PROJECT_WHY_MAX];
	int			 in_claude;	/* scanning .claude */
	size_t			 cap;		/* files' limit now */
};

/* project.c */
/*
 * Read the project files of workspace (a realpath). 0, or -1 with err
 * set when a file cannot be read (too large, I/O error).
 */
int	project_scan(struct project *pr, const char *workspace, char *err,
	    size_t errlen);
/*
 * Compare with the trusted set in the database db names (store_path):
 * pr->trusted, or pr->why says which files changed, were added or removed.
 * A database that is missing or cannot be read trusts nothing.
 */
/*
 * Scan the workspace dir is (its realpath) and check it against database
 * db (NULL: the default, store_path), then warn on stderr when there are
 * project files that are not trusted (they are ignored): for command cmd,
 * which files, what to run. -1 with err set on a read error.
 */
int	project_open(struct project *pr, const char *dir, const char *db,
	    const char *cmd, char *err, size_t errlen);
/* If .claude/agents was skipped (a symlink, a special file, one too large,
 * more than PROJECT_MAX_CLAUDE), say so and why on stderr, for cmd. */
void	project_claude_warn(const struct project *pr, const char *cmd);
/* A trusted project's file of that path (".mcp.json"); NULL when the
 * project is not trusted or has none. Borrowed. */
const struct project_file *project_file(const struct project *pr,
	    const char *path);
/* A trusted project's .warren/config into c (CONFIG_SRC_PROJECT); nothing
 * when untrusted. -1 with config_error(c) set. */
int	project_load_config(const struct project *pr, struct config *c);
/*
 * Profiles: the built-ins, the user's agents directory, then a trusted
 * project's agents as a layer over them. -1 with err set.
 */
int	project_load_profiles(const struct project *pr, struct profile_set *ps,
	    char *err, size_t errlen);
/* Record the scanned files as the trusted set of pr->workspace. */
int	project_trust(const struct project *pr, const char *db, char *err,
	    size_t errlen);
void	project_free(struct project *pr);

/* mcp_load.c */
struct mcp_config;
/*
 * The MCP servers: the user's $XDG_CONFIG_HOME/warren/mcp.json, then a
 * trusted project's .mcp.json (pr NULL: none), its grants dropped; what
 * was dropped is said on stderr for cmd, escaped. -1 with err.
 */
int	mcp_load(struct mcp_config *c, const struct project *pr,
	    const char *cmd, char *err, size_t errsz);
/* The user's file: path into out; 0, or -1 with no config directory. */
int	mcp_load_user_path(char *out, size_t outsz);

/* Warnings about agent files, once per version of a file (agent_warn.c). */
struct agent_warn {
	char	 path[PATH_MAX];	/* the list; "" with no state dir */
	char	*seen;			/* its text: keys already warned of */
	char	 noted[65];		/* the last key this command noted */
	int	 restart;		/* the list is rewritten, not appended */
	int	 failed;
};

/* agent_warn.c */
void	agent_warn_open(struct agent_warn *aw);
/* A profile_warn_fn (agent/profile.h), arg an open struct agent_warn. */
void	agent_warn_file(void *arg, const char *file, const char *text,
	    size_t len, const char *msg);
void	agent_warn_close(struct agent_warn *aw);

#endif

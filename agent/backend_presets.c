/*
 * The presets: how a worker starts Claude Code (`claude`) and Codex CLI
 * (`codex`) as a subagent (docs/backends.md, "Claude Code and Codex").
 *
 * Each launch is built from nothing: the environment is the whole of it
 * (nothing of warren's own environment is passed on, so no key or token
 * of the user's can reach the program), and the settings files are
 * written into the private HOME the worker made, never the user's
 * ~/.claude or ~/.codex. What each program would do on its own that
 * warren does instead is switched off here, each with the reason:
 *
 *	- its permission prompts and its own sandbox: warren's sandbox
 *	  (namespaces, Landlock, seccomp, no network) confines the whole
 *	  process tree, and nobody is there to answer a prompt;
 *	- its telemetry, error reports, update checks, plugin and catalog
 *	  downloads: the sandbox has no network, and only model requests to
 *	  the base URL are brokered;
 *	- its server-side web tools (search, fetch): a subagent of warren has
 *	  no network, and a search run by the endpoint would be one around it.
 *
 * The key is a placeholder: the worker's proxy on the base URL carries
 * each request to the supervisor, which drops the header that holds it
 * and adds the user's key. Checked against the pinned versions (tests/npm/
 * package-lock.json) by tests/agents/test_backend_presets.c, which runs
 * each launch against fakellm and traces nothing but 127.0.0.1.
 */
#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "agent/backend.h"

/* What the program sends as its key; the broker replaces it. */
#define PRESET_KEY	BACKEND_KEY_PLACEHOLDER
/* Codex reads its provider's key from this variable (config.toml). */
#define PRESET_CODEX_KEY_ENV	"WARREN_BROKER_KEY"

struct preset {
	enum backend_kind	 kind;
	const char		*name;	/* the agent file's spelling, for
					   messages (backend.c has the table) */
	const char		*wire;
	int			(*build)(const struct backend_args *,
				    struct backend_launch *);
};

static int	preset_claude(const struct backend_args *,
		    struct backend_launch *);
static int	preset_codex(const struct backend_args *,
		    struct backend_launch *);

static const struct preset preset_table[] = {
	{ BACKEND_CLAUDE_CODE, "claude-code", "anthropic", preset_claude },
	{ BACKEND_CODEX, "codex", "responses", preset_codex },
};

static int
preset_arg(struct backend_launch *l, const char *s)
{
	if (l->argc >= BACKEND_ARGV_MAX) {
		errno = E2BIG;
		return -1;
	}
	if ((l->argv[l->argc] = strdup(s)) == NULL)
		return -1;
	l->argc++;
	return 0;
}

static int
preset_env(struct backend_launch *l, const char *fmt, ...)
{
	va_list	ap;
	int	n;

	if (l->envc >= BACKEND_ENV_MAX) {
		errno = E2BIG;
		return -1;
	}
	va_start(ap, fmt);
	n = vasprintf(&l->envp[l->envc], fmt, ap);
	va_end(ap);
	if (n < 0) {
		l->envp[l->envc] = NULL;
		return -1;
	}
	l->envc++;
	return 0;
}

/* A settings file; content is taken over (freed here on failure). */
static int
preset_file(struct backend_launch *l, const char *path, char *content)
{
	struct backend_file	*f;

	if (content == NULL)
		return -1;
	if (l->nfiles >= BACKEND_FILES_MAX) {
		free(content);
		errno = E2BIG;
		return -1;
	}
	f = &l->files[l->nfiles];
	if ((f->path = strdup(path)) == NULL) {
		free(content);
		return -1;
	}
	f->content = content;
	f->mode = 0600;
	l->nfiles++;
	return 0;
}

/*
 * The directory of `node` in the caller's PATH (absolute entries only),
 * into dir; 0, or -1 when there is none. Codex's npm launcher is a node
 * script (#!/usr/bin/env node), and a node installed for the user (nvm,
 * a tarball) is in no system directory.
 */
static int
preset_node_dir(char *dir, size_t len)
{
	const char	*path = getenv("PATH"), *p, *colon;
	char		 cand[PATH_MAX];
	size_t		 n;

	for (p = path; p != NULL && *p != '\0'; p = *colon ? colon + 1 :
	    colon) {
		if ((colon = strchr(p, ':')) == NULL)
			colon = p + strlen(p);
		n = (size_t)(colon - p);
		if (n == 0 || p[0] != '/' || n >= len ||
		    snprintf(cand, sizeof(cand), "%.*s/node", (int)n, p) >=
		    (int)sizeof(cand) || access(cand, X_OK) == -1)
			continue;
		/* A system directory is in the launch's PATH anyway. */
		if ((n == 14 && strncmp(p, "/usr/local/bin", n) == 0) ||
		    (n == 8 && strncmp(p, "/usr/bin", n) == 0) ||
		    (n == 4 && strncmp(p, "/bin", n) == 0))
			return -1;
		snprintf(dir, len, "%.*s", (int)n, p);
		return 0;
	}
	return -1;
}

/*
 * What both programs get: the private HOME; a PATH of the program's own
 * directory, node's (above) and the system directories; a dumb terminal
 * and no colours (their stdout is read as the answer); UTF-8.
 */
static int
preset_env_common(const struct backend_args *a, struct backend_launch *l)
{
	const char	*slash = strrchr(a->program, '/');
	int		 dirlen = (int)(slash - a->program);
	char		 node[PATH_MAX];

	if (preset_node_dir(node, sizeof(node)) == -1)
		node[0] = '\0';
	if (preset_env(l, "HOME=%s", a->home) == -1 ||
	    preset_env(l, "PATH=%.*s:%s%s/usr/local/bin:/usr/bin:/bin",
	    dirlen, a->program, node, node[0] != '\0' ? ":" : "") == -1 ||
	    preset_env(l, "TERM=dumb") == -1 ||
	    preset_env(l, "NO_COLOR=1") == -1 ||
	    preset_env(l, "LANG=C.UTF-8") == -1)
		return -1;
	return 0;
}

/*
 * Claude Code 2.1: `claude --print` runs one task headless and prints
 * the final answer (--output-format text) on stdout.
 *	--dangerously-skip-permissions: no permission prompts (warren's
 *	  sandbox confines it); refused as root unless IS_SANDBOX=1, which
 *	  says the process is deliberately sandboxed, as it is;
 *	--no-session-persistence: no transcript to resume; a subagent's
 *	  record is warren's;
 *	--setting-sources user: only the settings written here, none from
 *	  the workspace (.claude/settings*.json of the project could point
 *	  the base URL elsewhere or turn prompts back on); CLAUDE.md is
 *	  still read;
 *	--disallowedTools WebSearch,WebFetch: the web tools (see above);
 *	--model, --append-system-prompt: the profile's model and role;
 *	-- TASK: the task, never taken for an option.
 * Environment: ANTHROPIC_BASE_URL (it appends /v1/messages) and
 * ANTHROPIC_API_KEY (the placeholder, sent as x-api-key);
 * CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1 (no telemetry, error
 * reports, update checks, release notes, plugin syncs, nor the HEAD
 * /api/hello preconnect: traced, only the base URL is left), and the
 * narrower DISABLE_* it implies, so that a version that splits them
 * keeps them off.
 * ~/.claude/settings.json: bypassPermissions as the default mode (the
 * same as the flag, for a tool run from a hook or a sub-agent), its own
 * Bash sandbox off (it would nest bubblewrap in warren's sandbox).
 */
static int
preset_claude(const struct backend_args *a, struct backend_launch *l)
{
	static const char settings[] =
	    "{\n"
	    "  \"permissions\": {\"defaultMode\": \"bypassPermissions\"},\n"
	    "  \"skipDangerousModePermissionPrompt\": true,\n"
	    "  \"sandbox\": {\"enabled\": false}\n"
	    "}\n";

	if (preset_arg(l, a->program) == -1 ||
	    preset_arg(l, "--print") == -1 ||
	    preset_arg(l, "--output-format") == -1 ||
	    preset_arg(l, "text") == -1 ||
	    preset_arg(l, "--dangerously-skip-permissions") == -1 ||
	    preset_arg(l, "--no-session-persistence") == -1 ||
	    preset_arg(l, "--setting-sources") == -1 ||
	    preset_arg(l, "user") == -1 ||
	    preset_arg(l, "--disallowedTools") == -1 ||
	    preset_arg(l, "WebSearch,WebFetch") == -1)
		return -1;
	if (a->model != NULL && (preset_arg(l, "--model") == -1 ||
	    preset_arg(l, a->model) == -1))
		return -1;
	if (a->prompt != NULL && (preset_arg(l, "--append-system-prompt") ==
	    -1 || preset_arg(l, a->prompt) == -1))
		return -1;
	if (preset_arg(l, "--") == -1 || preset_arg(l, a->task) == -1)
		return -1;
	if (preset_env_common(a, l) == -1 ||
	    preset_env(l, "ANTHROPIC_BASE_URL=%s", a->base_url) == -1 ||
	    preset_env(l, "ANTHROPIC_API_KEY=%s", PRESET_KEY) == -1 ||
	    preset_env(l, "IS_SANDBOX=1") == -1 ||
	    preset_env(l, "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1") == -1 ||
	    preset_env(l, "DISABLE_AUTOUPDATER=1") == -1 ||
	    preset_env(l, "DISABLE_TELEMETRY=1") == -1 ||
	    preset_env(l, "DISABLE_ERROR_REPORTING=1") == -1)
		return -1;
	return preset_file(l, ".claude/settings.json", strdup(settings));
}

/* s as a TOML basic string, quotes included (malloc'd). */
static char *
preset_toml_str(const char *s)
{
	char	*out, *p;

	/* \uXXXX, the longest escape, is 6 bytes a byte. */
	if ((out = malloc(strlen(s) * 6 + 3)) == NULL)
		return NULL;
	p = out;
	*p++ = '"';
	for (; *s != '\0'; s++) {
		unsigned char c = (unsigned char)*s;

		if (c == '"' || c == '\\') {
			*p++ = '\\';
			*p++ = (char)c;
		} else if (c == '\n') {
			*p++ = '\\';
			*p++ = 'n';
		} else if (c < 0x20 || c == 0x7f)
			p += sprintf(p, "\\u%04x", c);
		else
			*p++ = (char)c;
	}
	*p++ = '"';
	*p = '\0';
	return out;
}

/*
 * ~/.codex/config.toml: a model provider "warren" on BASE/v1 (Codex
 * appends /responses to it) speaking Responses, its key read from
 * PRESET_CODEX_KEY_ENV (the placeholder); approvals never asked and its
 * own sandbox off (danger-full-access: warren's confines it, and Codex's
 * bubblewrap would nest in it); no update check, analytics, feedback
 * upload, hosted web search, nor plugins (their sync clones a catalog
 * from github.com: traced); the profile's model and role.
 */
static char *
preset_codex_config(const struct backend_args *a)
{
	char	*v1, *url = NULL, *model = NULL, *role = NULL, *s = NULL;

	/* Requests go to BASE/v1/responses, the API's own path, as
	 * Claude Code's go to BASE/v1/messages. */
	if (asprintf(&v1, "%s/v1", a->base_url) < 0)
		return NULL;
	url = preset_toml_str(v1);
	free(v1);
	if (url == NULL ||
	    (a->model != NULL && (model = preset_toml_str(a->model)) ==
	    NULL) ||
	    (a->prompt != NULL && (role = preset_toml_str(a->prompt)) == NULL))
		goto out;
	if (asprintf(&s,
	    "# Written by warren for one subagent (docs/backends.md).\n"
	    "%s%s%s"
	    "%s%s%s"
	    "model_provider = \"warren\"\n"
	    "approval_policy = \"never\"\n"
	    "sandbox_mode = \"danger-full-access\"\n"
	    "check_for_update_on_startup = false\n"
	    "web_search = \"disabled\"\n"
	    "\n"
	    "[analytics]\n"
	    "enabled = false\n"
	    "\n"
	    "[feedback]\n"
	    "enabled = false\n"
	    "\n"
	    "[features]\n"
	    "plugins = false\n"
	    "\n"
	    "[model_providers.warren]\n"
	    "name = \"warren\"\n"
	    "base_url = %s\n"
	    "wire_api = \"responses\"\n"
	    "env_key = \"" PRESET_CODEX_KEY_ENV "\"\n",
	    model != NULL ? "model = " : "", model != NULL ? model : "",
	    model != NULL ? "\n" : "",
	    role != NULL ? "developer_instructions = " : "",
	    role != NULL ? role : "", role != NULL ? "\n" : "", url) < 0)
		s = NULL;
out:
	free(url);
	free(model);
	free(role);
	return s;
}

/*
 * Codex CLI 0.171: `codex exec` runs one task headless; with stdout not
 * a terminal it prints only the final message there (its transcript
 * goes to stderr).
 *	--dangerously-bypass-approvals-and-sandbox: as the config says,
 *	  for an externally sandboxed process;
 *	--skip-git-repo-check: a workspace need not be a git repository;
 *	--strict-config: a config key this version does not know is an
 *	  error, not a setting silently dropped (telemetry left on);
 *	--ephemeral: no session files to resume;
 *	--color never, --cd WORKSPACE, -m MODEL; -- TASK.
 * Environment: CODEX_HOME (~/.codex of the private HOME) and the
 * placeholder key. The workspace's own .codex/config.toml is not read:
 * Codex reads a project's layer only once the project is trusted, and
 * nothing here trusts it. Its stdin must be empty (/dev/null): it
 * appends what it reads there to the task.
 */
static int
preset_codex(const struct backend_args *a, struct backend_launch *l)
{
	if (preset_arg(l, a->program) == -1 ||
	    preset_arg(l, "exec") == -1 ||
	    preset_arg(l, "--dangerously-bypass-approvals-and-sandbox") == -1 ||
	    preset_arg(l, "--skip-git-repo-check") == -1 ||
	    preset_arg(l, "--strict-config") == -1 ||
	    preset_arg(l, "--ephemeral") == -1 ||
	    preset_arg(l, "--color") == -1 ||
	    preset_arg(l, "never") == -1 ||
	    preset_arg(l, "--cd") == -1 ||
	    preset_arg(l, a->workspace) == -1)
		return -1;
	if (a->model != NULL && (preset_arg(l, "--model") == -1 ||
	    preset_arg(l, a->model) == -1))
		return -1;
	if (preset_arg(l, "--") == -1 || preset_arg(l, a->task) == -1)
		return -1;
	if (preset_env_common(a, l) == -1 ||
	    preset_env(l, "CODEX_HOME=%s/.codex", a->home) == -1 ||
	    preset_env(l, PRESET_CODEX_KEY_ENV "=%s", PRESET_KEY) == -1)
		return -1;
	return preset_file(l, ".codex/config.toml", preset_codex_config(a));
}

/* The arguments a preset cannot do without; NULL when all are there. */
static const char *
preset_missing(const struct backend_args *a)
{
	if (a->program == NULL || a->program[0] != '/')
		return "program (an absolute path)";
	if (a->task == NULL)
		return "task";
	if (a->base_url == NULL || strncmp(a->base_url, "http://", 7) != 0)
		return "base_url (http://127.0.0.1:PORT)";
	if (a->home == NULL || a->home[0] != '/')
		return "home (an absolute path)";
	if (a->workspace == NULL || a->workspace[0] != '/')
		return "workspace (an absolute path)";
	return NULL;
}

int
backend_preset_build(enum backend_kind k, const struct backend_args *a,
    struct backend_launch *l, char *err, size_t errlen)
{
	const struct preset	*p = NULL;
	const char		*missing;
	size_t			 i;

	memset(l, 0, sizeof(*l));
	for (i = 0; i < sizeof(preset_table) / sizeof(preset_table[0]); i++)
		if (preset_table[i].kind == k)
			p = &preset_table[i];
	if (p == NULL) {
		snprintf(err, errlen, "backend %d has no preset (only "
		    "claude-code and codex have)", (int)k);
		return -1;
	}
	if ((missing = preset_missing(a)) != NULL) {
		snprintf(err, errlen, "backend %s: no %s to start it with",
		    p->name, missing);
		return -1;
	}
	if (p->build(a, l) == -1) {
		snprintf(err, errlen, "backend %s: building its launch: %s",
		    p->name, strerror(errno));
		backend_launch_free(l);
		return -1;
	}
	l->wire = p->wire;
	return 0;
}

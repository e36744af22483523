/*
 * The names in a workspace that run code on the host, in one table, and
 * the snapshot of what lies under them (hostexec.h). docs/workspaces.md,
 * "Files that run code on the host", renders the table (generated from it
 * by gen_hostexec.c) and gives the reasons for what is left out.
 *
 * The workspace is hostile: an agent owned it a moment ago. Nothing here
 * follows a symbolic link (fstatat AT_SYMLINK_NOFOLLOW, openat O_NOFOLLOW),
 * reads a file, or leaves the workspace's filesystem; every walk has a
 * bound, and a bound reached is written in the snapshot, never ignored.
 */
#include <sys/stat.h>

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/clock.h"
#include "common/log.h"
#include "common/xmalloc.h"
#include "workspace/hostexec.h"

#define HOSTEXEC_GIT_WHY	"git: runs its hooks and the commands its " \
				"config names (fsmonitor, aliases, filters, pager)"
#define HOSTEXEC_SHELL_WHY	"a shell runs it at start or login (a workspace " \
				"that is a home directory, or sourced)"
#define HOSTEXEC_HOME_WHY(what) what " (a workspace that is a home directory)"
#define HOSTEXEC_VIM_WHY	"vim and neovim with 'exrc' run it on start here"
#define HOSTEXEC_CI_WHY		"CI runs it on push, with the repository's secrets"
#define HOSTEXEC_DIRENV_WHY	"direnv: run when a shell enters the directory"
#define HOSTEXEC_MISE_WHY	"mise: hooks, env scripts and tool paths it " \
				"runs on entering the directory"
#define HOSTEXEC_HOOK_WHY(tool)	tool ": the commands it names run on git commit"
#define HOSTEXEC_MCP_WHY(tool)	tool ": MCP servers and hooks it starts on " \
				"opening the project"
#define HOSTEXEC_TIME_EVERY	1024	/* directory entries between clock reads */

#define ANY	HOSTEXEC_ANY
#define ROOT	0

/*
 * The names that run code on the host: one row a name, a directory with
 * everything under it. A name is in when a tool runs it without the user
 * asking to run the project's code: entering the directory, opening it in
 * an editor or an AI tool, any git command or commit, a push, any npm or
 * yarn command, starting a REPL or debugger there, a login shell. ANY: at
 * any depth (the tool reads it in whatever directory it is started in, or
 * looks up from there); ROOT: at the workspace root only. Each part is
 * matched folded (hostexec_name.c), '*' standing for any run of bytes.
 * docs/workspaces.md renders this table (warren-gen-hostexec) and says
 * what is left out and why.
 */
static const struct hostexec_row hostexec_rules[] = {
	/* Version control: any git, hg, jj or sl command in or below. */
	{ ".git", ANY, HOSTEXEC_GIT_WHY },
	{ ".gitattributes", ANY, "git: picks the filter, diff and merge "
	    "drivers that run on checkout, diff and merge" },
	{ ".gitmodules", ANY, "git: the submodules it clones and checks out" },
	{ ".lfsconfig", ANY, "git-lfs: custom transfer agents it runs on "
	    "checkout and push" },
	{ ".hg/hgrc", ANY, "Mercurial: hooks and extensions it runs on any "
	    "command" },
	{ ".hg/hgrc-not-shared", ANY, "Mercurial: hooks and extensions it "
	    "runs on any command" },
	{ ".hg/sharedpath", ANY, "Mercurial: the repository whose hgrc it "
	    "reads" },
	{ ".jj/repo/config.toml", ANY, "Jujutsu: the commands its config "
	    "names (diff and merge tools, fix tools, signing)" },
	{ ".sl/config", ANY, "Sapling: hooks and extensions it runs on any "
	    "command" },
	/* Commit hooks and what they run. */
	{ ".husky", ANY, "husky: git hooks (core.hooksPath), run on commit "
	    "and push" },
	{ ".githooks", ANY, "git hooks kept in the tree (core.hooksPath), "
	    "run on commit and push" },
	{ ".pre-commit-config.yaml", ANY, HOSTEXEC_HOOK_WHY("pre-commit") },
	{ ".pre-commit-config.yml", ANY, HOSTEXEC_HOOK_WHY("pre-commit") },
	{ "lefthook.*", ANY, HOSTEXEC_HOOK_WHY("lefthook") },
	{ ".lefthook.*", ANY, HOSTEXEC_HOOK_WHY("lefthook") },
	{ "lefthook-local.*", ANY, HOSTEXEC_HOOK_WHY("lefthook") },
	{ ".lefthook-local.*", ANY, HOSTEXEC_HOOK_WHY("lefthook") },
	{ ".lefthook", ANY, "lefthook: the scripts its hooks run on commit" },
	{ ".lintstagedrc*", ANY, HOSTEXEC_HOOK_WHY("lint-staged") },
	{ "lint-staged.config.*", ANY, HOSTEXEC_HOOK_WHY("lint-staged") },
	{ "commitlint.config.*", ANY, "commitlint: a JavaScript or TypeScript "
	    "config it loads on git commit" },
	{ ".commitlintrc*", ANY, "commitlint: a config (JavaScript, or one "
	    "that extends a package) it loads on git commit" },
	{ ".simple-git-hooks*", ANY, HOSTEXEC_HOOK_WHY("simple-git-hooks") },
	{ "simple-git-hooks.*", ANY, HOSTEXEC_HOOK_WHY("simple-git-hooks") },
	{ ".overcommit.yml", ANY, HOSTEXEC_HOOK_WHY("overcommit") },
	/* On entering the directory. */
	{ ".envrc", ANY, HOSTEXEC_DIRENV_WHY },
	{ ".envrc.*", ANY, "direnv: files an .envrc commonly sources "
	    "(source_env, .envrc.local)" },
	{ ".env", ANY, "direnv (load_dotenv, dotenv) and autoenv: sets or "
	    "runs it on entering the directory (PATH, LD_PRELOAD)" },
	{ ".env.leave", ANY, "autoenv: run on leaving the directory" },
	{ ".autoenv.zsh", ANY, "zsh-autoenv: run on entering the directory" },
	{ ".autoenv_leave.zsh", ANY, "zsh-autoenv: run on leaving the "
	    "directory" },
	{ ".direnv", ANY, "direnv: cached environments it sources on "
	    "entering, layouts on PATH" },
	{ "mise.toml", ANY, HOSTEXEC_MISE_WHY },
	{ ".mise.toml", ANY, HOSTEXEC_MISE_WHY },
	{ "mise.*.toml", ANY, HOSTEXEC_MISE_WHY },
	{ ".mise.*.toml", ANY, HOSTEXEC_MISE_WHY },
	{ ".mise", ANY, HOSTEXEC_MISE_WHY },
	{ "mise/config*.toml", ANY, HOSTEXEC_MISE_WHY },
	{ ".config/mise*", ANY, HOSTEXEC_MISE_WHY },
	{ ".rtx.toml", ANY, "rtx (mise's old name): hooks and env scripts on "
	    "entering the directory" },
	{ "flake.nix", ROOT, "nix-direnv (use flake): evaluated, and its "
	    "shellHook run, on entering the directory" },
	{ "flake.lock", ROOT, "nix-direnv (use flake): the inputs whose "
	    "shellHook runs on entering the directory" },
	{ "shell.nix", ROOT, "nix-direnv (use nix): evaluated, and its "
	    "shellHook run, on entering the directory" },
	{ "default.nix", ROOT, "nix-direnv (use nix, without shell.nix): "
	    "evaluated on entering the directory" },
	{ "devenv.nix", ROOT, "devenv (use devenv): evaluated on entering the "
	    "directory" },
	{ "devenv.yaml", ROOT, "devenv (use devenv): the inputs it evaluates "
	    "on entering the directory" },
	/* Editors and AI tools, on opening the folder. */
	{ ".vscode", ANY, "VS Code: tasks run on folder open; settings name "
	    "the interpreters, shells and tools it runs" },
	{ "*.code-workspace", ANY, "VS Code: a workspace file's tasks and "
	    "settings, as .vscode's" },
	{ ".devcontainer", ANY, "VS Code: a dev container's "
	    "initializeCommand runs on the host when the folder opens" },
	{ ".devcontainer.json", ANY, "VS Code: a dev container's "
	    "initializeCommand runs on the host when the folder opens" },
	{ ".idea", ANY, "JetBrains IDEs: run configurations, startup tasks, "
	    "external tools" },
	{ ".fleet", ANY, "JetBrains Fleet: run configurations and the tools "
	    "its settings name" },
	{ ".zed", ANY, "Zed: tasks, and the language servers and formatters "
	    "its settings run on open" },
	{ ".helix", ANY, "Helix: the language servers and formatters its "
	    "languages.toml runs on open" },
	{ ".exrc", ANY, HOSTEXEC_VIM_WHY },
	{ ".vimrc", ANY, HOSTEXEC_VIM_WHY },
	{ ".gvimrc", ANY, HOSTEXEC_VIM_WHY },
	{ ".nvimrc", ANY, HOSTEXEC_VIM_WHY },
	{ ".nvim.lua", ANY, HOSTEXEC_VIM_WHY },
	{ ".lazy.lua", ANY, "lazy.nvim: the project's plugin spec, loaded on "
	    "start here" },
	{ ".dir-locals.el", ANY, "Emacs: eval forms of directory-local "
	    "variables" },
	{ ".dir-locals-2.el", ANY, "Emacs: eval forms of directory-local "
	    "variables" },
	{ ".claude", ANY, "Claude Code: hooks and MCP servers in "
	    "settings.json, commands, run on start and on its tools' use" },
	{ ".mcp.json", ANY, HOSTEXEC_MCP_WHY("Claude Code") },
	{ ".cursor", ANY, HOSTEXEC_MCP_WHY("Cursor (mcp.json, hooks.json)") },
	{ ".gemini", ANY, HOSTEXEC_MCP_WHY("Gemini CLI (settings.json)") },
	{ ".codex", ANY, HOSTEXEC_MCP_WHY("Codex CLI (config.toml)") },
	{ ".roo", ANY, HOSTEXEC_MCP_WHY("Roo Code (mcp.json)") },
	{ ".kiro", ANY, HOSTEXEC_MCP_WHY("Kiro (settings/mcp.json, hooks)") },
	{ ".continue", ANY, HOSTEXEC_MCP_WHY("Continue (mcpServers)") },
	{ ".amazonq", ANY, HOSTEXEC_MCP_WHY("Amazon Q (mcp.json)") },
	{ "opencode.json", ANY, HOSTEXEC_MCP_WHY("opencode") },
	{ "opencode.jsonc", ANY, HOSTEXEC_MCP_WHY("opencode") },
	{ ".opencode", ANY, HOSTEXEC_MCP_WHY("opencode (plugins)") },
	{ ".aider.conf.yml", ANY, "aider: the lint and test commands it runs "
	    "after each edit" },
	/* REPLs and debuggers started here. */
	{ ".pdbrc", ANY, "pdb: commands run when the debugger starts here" },
	{ "ipython_config.py", ANY, "IPython: run when IPython starts here" },
	{ "*.pth", ANY, "Python: a .pth line that imports runs on every start "
	    "of the interpreter whose site-packages holds it (.venv)" },
	{ "sitecustomize.py", ANY, "Python: imported on every start of the "
	    "interpreter whose path holds it (.venv)" },
	{ "usercustomize.py", ANY, "Python: imported on every start of the "
	    "interpreter whose path holds it (.venv)" },
	{ ".irbrc", ANY, "irb: run when irb starts here" },
	{ ".pryrc", ANY, "pry: run when pry starts here" },
	{ ".byebugrc", ANY, "byebug: commands run when the debugger starts "
	    "here" },
	{ ".Rprofile", ANY, "R: sourced when R or RStudio starts here" },
	{ ".Renviron", ANY, "R: its variables (R_PROFILE_USER, PATH) set when R "
	    "starts here" },
	{ ".perldb", ANY, "perl -d: run when the debugger starts here" },
	{ ".gdbinit", ANY, "gdb: run when gdb starts here (where auto-load "
	    "allows it)" },
	{ ".lldbinit", ANY, "lldb: run when lldb starts here (where "
	    "target.load-cwd-lldbinit allows it)" },
	/* Package managers: any command. */
	{ ".npmrc", ANY, "npm: node-options, script-shell, and the registry "
	    "its tokens go to" },
	{ ".yarnrc", ANY, "yarn 1: yarn-path, and the registry" },
	{ ".yarnrc.yml", ANY, "yarn: every yarn command runs the yarnPath it "
	    "names" },
	{ ".yarn/releases", ROOT, "yarn: the release every yarn command runs" },
	{ ".yarn/plugins", ROOT, "yarn: plugins every yarn command loads" },
	{ ".yarn/sdks", ROOT, "yarn: the SDKs editors run on opening the "
	    "project" },
	{ ".pnp.cjs", ROOT, "yarn Plug'n'Play: loaded by every yarn run and by "
	    "editors' SDKs" },
	{ ".pnp.loader.mjs", ROOT, "yarn Plug'n'Play: loaded by every yarn "
	    "run" },
	{ ".pnpmfile.cjs", ANY, "pnpm: run on install" },
	{ ".pnpmfile.mjs", ANY, "pnpm: run on install" },
	{ "bunfig.toml", ANY, "bun: preload scripts and the registry of every "
	    "bun command" },
	/* CI, on push. */
	{ ".github/workflows", ROOT, "GitHub Actions: " HOSTEXEC_CI_WHY },
	{ ".github/actions", ROOT, "GitHub Actions: local actions the "
	    "workflows run" },
	{ ".gitlab-ci.yml", ROOT, "GitLab CI: " HOSTEXEC_CI_WHY },
	{ ".gitlab", ROOT, "GitLab CI: files a pipeline includes" },
	{ ".forgejo/workflows", ROOT, "Forgejo Actions: " HOSTEXEC_CI_WHY },
	{ ".gitea/workflows", ROOT, "Gitea Actions: " HOSTEXEC_CI_WHY },
	{ ".circleci", ROOT, "CircleCI: " HOSTEXEC_CI_WHY },
	{ ".travis.yml", ROOT, "Travis CI: " HOSTEXEC_CI_WHY },
	{ ".drone.yml", ROOT, "Drone CI: " HOSTEXEC_CI_WHY },
	{ ".woodpecker.yml", ROOT, "Woodpecker CI: " HOSTEXEC_CI_WHY },
	{ ".woodpecker", ROOT, "Woodpecker CI: " HOSTEXEC_CI_WHY },
	{ ".buildkite", ROOT, "Buildkite: " HOSTEXEC_CI_WHY },
	{ "Jenkinsfile", ROOT, "Jenkins: " HOSTEXEC_CI_WHY },
	{ "azure-pipelines.yml", ROOT, "Azure Pipelines: " HOSTEXEC_CI_WHY },
	{ "bitbucket-pipelines.yml", ROOT, "Bitbucket Pipelines: "
	    HOSTEXEC_CI_WHY },
	/* warren's own. */
	{ ".warren", ROOT, "warren: project config and agent files, read "
	    "once trusted (warren trust)" },
	/* A workspace that is a home directory. */
	{ ".profile", ROOT, HOSTEXEC_SHELL_WHY },
	{ ".bashrc", ROOT, HOSTEXEC_SHELL_WHY },
	{ ".bash_profile", ROOT, HOSTEXEC_SHELL_WHY },
	{ ".bash_login", ROOT, HOSTEXEC_SHELL_WHY },
	{ ".bash_logout", ROOT, HOSTEXEC_SHELL_WHY },
	{ ".bashrc.d", ROOT, HOSTEXEC_SHELL_WHY },
	{ ".zshenv", ROOT, HOSTEXEC_SHELL_WHY },
	{ ".zprofile", ROOT, HOSTEXEC_SHELL_WHY },
	{ ".zshrc", ROOT, HOSTEXEC_SHELL_WHY },
	{ ".zlogin", ROOT, HOSTEXEC_SHELL_WHY },
	{ ".zlogout", ROOT, HOSTEXEC_SHELL_WHY },
	{ ".xprofile", ROOT, HOSTEXEC_HOME_WHY("the X session: run at "
	    "login") },
	{ ".xinitrc", ROOT, HOSTEXEC_HOME_WHY("startx: run at start") },
	{ ".xsession", ROOT, HOSTEXEC_HOME_WHY("the X session: run at "
	    "login") },
	{ ".pam_environment", ROOT, HOSTEXEC_HOME_WHY("pam_env: variables "
	    "set at login") },
	{ ".gitconfig", ROOT, "git: the user's config (a workspace that is a "
	    "home directory)" },
	{ ".hgrc", ROOT, HOSTEXEC_HOME_WHY("Mercurial: the user's hooks and "
	    "extensions") },
	{ ".ssh", ROOT, "ssh: config (ProxyCommand, LocalCommand) and "
	    "authorized_keys (a workspace that is a home directory)" },
	{ ".vim", ROOT, HOSTEXEC_HOME_WHY("vim: plugins run on start") },
	{ ".emacs", ROOT, HOSTEXEC_HOME_WHY("Emacs: run on start") },
	{ ".emacs.d", ROOT, HOSTEXEC_HOME_WHY("Emacs: run on start") },
	{ ".tmux.conf", ROOT, HOSTEXEC_HOME_WHY("tmux: run-shell lines run on "
	    "start") },
	{ ".docker", ROOT, HOSTEXEC_HOME_WHY("docker: the credential helpers "
	    "it runs") },
	{ ".kube", ROOT, HOSTEXEC_HOME_WHY("kubectl: exec credential plugins "
	    "it runs") },
	{ ".aws", ROOT, HOSTEXEC_HOME_WHY("AWS CLI and SDKs: "
	    "credential_process commands") },
	{ ".config/autostart", ROOT, HOSTEXEC_HOME_WHY("the desktop: run at "
	    "login") },
	{ ".config/systemd", ROOT, HOSTEXEC_HOME_WHY("systemd --user: units "
	    "run at login") },
	{ ".config/environment.d", ROOT, HOSTEXEC_HOME_WHY("systemd --user: "
	    "variables set at login") },
	{ ".config/git", ROOT, HOSTEXEC_HOME_WHY("git: the user's config and "
	    "attributes") },
	{ ".config/fish", ROOT, HOSTEXEC_HOME_WHY("fish: run at start") },
	{ ".config/nvim", ROOT, HOSTEXEC_HOME_WHY("neovim: run on start") },
	{ ".config/direnv", ROOT, HOSTEXEC_HOME_WHY("direnv: direnvrc, and the "
	    "directories it trusts without asking") },
	{ ".local/bin", ROOT, HOSTEXEC_HOME_WHY("commands found on PATH before "
	    "the system's") },
	/* Any filesystem that keeps them. */
	{ "NAME~N (an 8.3 short name)", ANY | HOSTEXEC_SHORT, "vfat and NTFS: "
	    "a short name may be another name of the table (GIT~1 of .git)" },
};

#undef ANY
#undef ROOT

#define HOSTEXEC_NRULES	(sizeof(hostexec_rules) / sizeof(hostexec_rules[0]))

/*
 * Inside a git directory, what git keeps as data and rewrites on every
 * commit, fetch or status: never executed, and listing it would drown the
 * report. Everything else there is watched: config, hooks/, info/,
 * commondir, rebase and sequencer todo lists (their exec lines run),
 * and the git directories of submodules and worktrees.
 */
static const char *const hostexec_git_data[] = {
	"objects", "refs", "logs", "lfs", "annex", "rr-cache", "index", "HEAD",
	"packed-refs", "COMMIT_EDITMSG", "MERGE_MSG", "MERGE_MODE",
	"SQUASH_MSG", "AUTO_MERGE", "gc.pid", "gc.log", "shallow",
	"fsmonitor--daemon", "fsmonitor--daemon.ipc",
};

/* How a directory's entries are walked. */
enum hx_mode {
	HX_HUNT = 0,	/* outside the names: look for .git only */
	HX_PLAIN,	/* under a name: record everything */
	HX_GITDIR,	/* a git directory: record all but its data */
	HX_GITSUB,	/* modules/ or worktrees/: each dir a git directory */
};

struct hx_scan {
	const struct hostexec_limits	*lim;
	struct hostexec_snap		*snap;
	dev_t				 dev;	/* the workspace's filesystem */
	size_t				 ndirents;
	uint64_t			 t0;	/* monotonic ms */
	unsigned			 nmissed; /* places not scanned */
	int				 stop;	/* a hard bound: unwind */
	int				 names_pass; /* 1: the root's names */
	char				 path[PATH_MAX]; /* being looked at */
};

static void	hx_dir(struct hx_scan *, DIR *, size_t, unsigned, enum hx_mode);

void
hostexec_limits_default(struct hostexec_limits *l)
{
	l->max_entries = HOSTEXEC_MAX_ENTRIES;
	l->max_dirents = HOSTEXEC_MAX_DIRENTS;
	l->max_depth = HOSTEXEC_MAX_DEPTH;
	l->max_ms = HOSTEXEC_MAX_MS;
}

#define HX_PARTS_FIXED	64	/* parts kept without an allocation */

/* A path's parts, folded (hostexec_name.c); base: how many parts of the
 * whole path come before the first (a tail of it was folded). */
struct hx_parts {
	char		 *buf;
	const char	**p;
	size_t		 *n;
	size_t		  m, base;
	char		  fbuf[PATH_MAX];
	const char	 *fp[HX_PARTS_FIXED];
	size_t		  fn[HX_PARTS_FIXED];
};

static void
hx_parts(const char *path, size_t base, struct hx_parts *ps)
{
	size_t	len = strlen(path), i, cap = 1;
	char	*q;

	for (i = 0; i < len; i++)
		cap += path[i] == '/';
	ps->base = base;
	ps->buf = len < sizeof(ps->fbuf) ? ps->fbuf : xmalloc(len + 1);
	ps->p = cap <= HX_PARTS_FIXED ? ps->fp :
	    xreallocarray(NULL, cap, sizeof(*ps->p));
	ps->n = cap <= HX_PARTS_FIXED ? ps->fn :
	    xreallocarray(NULL, cap, sizeof(*ps->n));
	(void)hostexec_fold(path, ps->buf, len + 1);
	for (ps->m = 0, q = ps->buf;; ps->m++) {
		ps->p[ps->m] = q;
		if ((q = strchr(q, '/')) == NULL) {
			ps->n[ps->m] = strlen(ps->p[ps->m]);
			ps->m++;
			break;
		}
		ps->n[ps->m] = (size_t)(q - ps->p[ps->m]);
		q++;
	}
}

static void
hx_parts_free(struct hx_parts *ps)
{
	if (ps->buf != ps->fbuf)
		free(ps->buf);
	if (ps->p != ps->fp)
		free(ps->p);
	if (ps->n != ps->fn)
		free(ps->n);
}

/* One part against one part of a row's name (n bytes at pat). */
static int
hx_part_is(const struct hostexec_row *r, const char *pat, size_t n,
    const char *s, size_t sn)
{
	if (r->flags & HOSTEXEC_SHORT)
		return hostexec_shortname(s, sn);
	/* Most parts differ at once. */
	if (n > 0 && *pat != '*' && (sn == 0 || *s != (*pat >= 'A' &&
	    *pat <= 'Z' ? *pat - 'A' + 'a' : *pat)))
		return 0;
	return hostexec_glob(pat, n, s, sn);
}

/* Row r against ps's parts from start on: 2 they are its name or under
 * it, 1 they end on the way to it, 0 neither. */
static int
hx_row_at(const struct hostexec_row *r, const struct hx_parts *ps,
    size_t start)
{
	const char	*pat = r->name, *slash;
	size_t		 j = start, n;

	/* Most rows differ at their first byte. */
	if (!(r->flags & HOSTEXEC_SHORT) && *pat != '*' && (ps->n[j] == 0 ||
	    ps->p[j][0] != (*pat >= 'A' && *pat <= 'Z' ? *pat - 'A' + 'a' :
	    *pat)))
		return 0;
	for (;; j++) {
		if (j == ps->m)
			return 1;
		slash = r->flags & HOSTEXEC_SHORT ? NULL : strchr(pat, '/');
		n = slash != NULL ? (size_t)(slash - pat) : strlen(pat);
		if (!hx_part_is(r, pat, n, ps->p[j], ps->n[j]))
			return 0;
		if (slash == NULL)
			return 2;
		pat = slash + 1;
	}
}

/*
 * The row ps is (or is under), or leads to (*part: ".github" made a link
 * leads to .github/workflows); rows that match at any depth are tried at
 * every start from `from` on, the others at the root only.
 */
static const struct hostexec_row *
hx_match(const struct hx_parts *ps, size_t from, int *part)
{
	const struct hostexec_row	*r, *lead = NULL;
	size_t				 i, s;
	int				 hit;

	for (i = 0; i < HOSTEXEC_NRULES; i++) {
		r = &hostexec_rules[i];
		for (s = from; s < ps->m; s++) {
			if (ps->base + s > 0 && !(r->flags & HOSTEXEC_ANY))
				break;
			if ((hit = hx_row_at(r, ps, s)) == 2) {
				*part = 0;
				return r;
			}
			if (hit == 1 && lead == NULL)
				lead = r;
		}
	}
	*part = lead != NULL;
	return lead;
}

const char *
hostexec_why(const char *path)
{
	const struct hostexec_row	*r;
	struct hx_parts			 ps;
	int				 part;

	hx_parts(path, 0, &ps);
	r = hx_match(&ps, 0, &part);
	hx_parts_free(&ps);
	return r != NULL ? r->why : NULL;
}

const struct hostexec_row *
hostexec_table(size_t *n)
{
	*n = HOSTEXEC_NRULES;
	return hostexec_rules;
}

/* The most parts a row's name has. */
static size_t
hx_max_parts(void)
{
	static size_t	max;
	const char	*p;
	size_t		i, k;

	if (max > 0)
		return max;
	for (i = 0; i < HOSTEXEC_NRULES; i++) {
		for (k = 1, p = hostexec_rules[i].name; (p = strchr(p, '/')) !=
		    NULL; p++)
			k++;
		if (k > max)
			max = k;
	}
	return max;
}

/* The row an entry of the walk (its path in s->path) is, or leads to. */
static const struct hostexec_row *
hx_hit(const char *path, int *part)
{
	const struct hostexec_row	*r;
	struct hx_parts			 ps;
	const char			*tail = path + strlen(path);
	size_t				 k = hx_max_parts(), depth = 0, n;

	/* Its parents matched nothing: only a match that ends here, so the
	 * last k parts are all that is folded. */
	for (n = 0; tail > path; tail--)
		if (tail[-1] == '/' && ++n == k)
			break;
	for (n = 0; n < (size_t)(tail - path); n++)
		depth += path[n] == '/';
	hx_parts(tail, depth, &ps);
	r = hx_match(&ps, 0, part);
	hx_parts_free(&ps);
	return r;
}

static int
hx_git_data(const char *name)
{
	size_t	i, n = strlen(name);

	for (i = 0; i < sizeof(hostexec_git_data) /
	    sizeof(hostexec_git_data[0]); i++)
		if (strcmp(name, hostexec_git_data[i]) == 0)
			return 1;
	/* FETCH_HEAD, ORIG_HEAD ...; locks; the split index's parts. */
	return (n > 5 && strcmp(name + n - 5, "_HEAD") == 0) ||
	    (n > 5 && strcmp(name + n - 5, ".lock") == 0) ||
	    strncmp(name, "sharedindex.", 12) == 0;
}

/* A place not scanned: the first one is kept, the others counted. */
static void __attribute__((format(printf, 2, 3)))
hx_note(struct hx_scan *s, const char *fmt, ...)
{
	va_list	ap;

	s->nmissed++;
	if (s->snap->incomplete != NULL)
		return;
	va_start(ap, fmt);
	if (vasprintf(&s->snap->incomplete, fmt, ap) == -1)
		fatal("vasprintf");
	va_end(ap);
}

/* One more directory entry read: -1 once a hard bound is reached. */
static int
hx_bound(struct hx_scan *s)
{
	uint64_t	ms;

	if (++s->ndirents > s->lim->max_dirents) {
		hx_note(s, "stopped after reading %zu directory entries, at "
		    "\"%s\"", s->lim->max_dirents, s->path);
		s->stop = 1;
		return -1;
	}
	if (s->ndirents % HOSTEXEC_TIME_EVERY == 0 &&
	    (ms = clock_mono_ms() - s->t0) >= s->lim->max_ms) {
		hx_note(s, "stopped after %llu ms, at \"%s\"",
		    (unsigned long long)ms, s->path);
		s->stop = 1;
		return -1;
	}
	return 0;
}

static int
hx_record(struct hx_scan *s, const struct stat *sb)
{
	struct hostexec_snap	*sn = s->snap;
	struct hostexec_entry	*e;

	if (sn->n >= s->lim->max_entries) {
		hx_note(s, "more than %zu files under these names; stopped at "
		    "\"%s\"", s->lim->max_entries, s->path);
		s->stop = 1;
		return -1;
	}
	if (sn->n == sn->cap) {
		sn->cap = sn->cap ? sn->cap * 2 : 64;
		sn->v = xreallocarray(sn->v, sn->cap, sizeof(*sn->v));
	}
	e = &sn->v[sn->n++];
	e->path = xstrdup(s->path);
	e->mode = sb->st_mode;
	e->ino = (uint64_t)sb->st_ino;
	e->size = (int64_t)sb->st_size;
	e->mtime_ns = (int64_t)sb->st_mtim.tv_sec * 1000000000 +
	    sb->st_mtim.tv_nsec;
	e->ctime_ns = (int64_t)sb->st_ctim.tv_sec * 1000000000 +
	    sb->st_ctim.tv_nsec;
	return 0;
}

/* s->path = its first len bytes + "/" + name; the new length or -1. */
static int
hx_push(struct hx_scan *s, size_t len, const char *name)
{
	int	n;

	n = snprintf(s->path + len, sizeof(s->path) - len, "%s%s",
	    len > 0 ? "/" : "", name);
	if (n < 0 || (size_t)n >= sizeof(s->path) - len) {
		s->path[len] = '\0';
		hx_note(s, "a name under \"%s\" is too long: not scanned",
		    s->path);
		return -1;
	}
	return (int)(len + (size_t)n);
}

/* Open s->path's last name under parent as a directory of our
 * filesystem, never through a link; NULL (noted) otherwise. */
static DIR *
hx_open(struct hx_scan *s, int parent, const char *name, unsigned depth)
{
	struct stat	 sb;
	DIR		*d;
	int		 fd;

	if (depth > s->lim->max_depth) {
		hx_note(s, "\"%s\" is deeper than %u directories: not scanned",
		    s->path, s->lim->max_depth);
		return NULL;
	}
	if ((fd = openat(parent, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW |
	    O_CLOEXEC)) == -1) {
		if (errno != ENOENT)
			hx_note(s, "\"%s\" cannot be read (%s): not scanned",
			    s->path, strerror(errno));
		return NULL;
	}
	if (fstat(fd, &sb) == -1 || sb.st_dev != s->dev) {
		hx_note(s, "\"%s\" is another filesystem: not scanned",
		    s->path);
		close(fd);
		return NULL;
	}
	if ((d = fdopendir(fd)) == NULL) {
		hx_note(s, "\"%s\": %s: not scanned", s->path, strerror(errno));
		close(fd);
	}
	return d;
}

/* lstat name under fd (its path in s->path): -1 if it is not there, or
 * (noted) cannot be looked at. */
static int
hx_lstat(struct hx_scan *s, int fd, const char *name, struct stat *sb)
{
	if (fstatat(fd, name, sb, AT_SYMLINK_NOFOLLOW) == 0)
		return 0;
	if (errno != ENOENT)
		hx_note(s, "\"%s\": %s: not scanned", s->path, strerror(errno));
	return -1;
}

static void
hx_descend(struct hx_scan *s, DIR *parent, const char *name, size_t len,
    unsigned depth, enum hx_mode mode)
{
	DIR	*d;

	if ((d = hx_open(s, dirfd(parent), name, depth)) == NULL)
		return;
	hx_dir(s, d, len, depth, mode);
	closedir(d);
}

static enum hx_mode
hx_child_mode(enum hx_mode mode, const char *name)
{
	switch (mode) {
	case HX_GITDIR:
		if (strcmp(name, "modules") == 0 ||
		    strcmp(name, "worktrees") == 0)
			return HX_GITSUB;
		return HX_PLAIN;
	case HX_GITSUB:
		return HX_GITDIR;
	case HX_HUNT:
	case HX_PLAIN:
	default:
		return hostexec_is(name, ".git") ? HX_GITDIR : mode;
	}
}

/* Record one entry of a directory under a name (and what is under it). */
static void
hx_entry(struct hx_scan *s, DIR *d, const char *name, size_t len,
    unsigned depth, enum hx_mode mode)
{
	struct stat	sb;
	int		nlen;

	if (mode == HX_GITDIR && hx_git_data(name))
		return;
	if ((nlen = hx_push(s, len, name)) == -1)
		return;
	if (hx_lstat(s, dirfd(d), name, &sb) == 0 && hx_record(s, &sb) == 0 &&
	    S_ISDIR(sb.st_mode))
		hx_descend(s, d, name, (size_t)nlen, depth + 1,
		    hx_child_mode(mode, name));
	s->path[len] = '\0';
}

/* An entry that is one of the names (s->path, nlen bytes), or on the
 * way to one: a link planted at .github is recorded, a directory walked
 * on. */
static void
hx_named(struct hx_scan *s, DIR *d, const char *name, size_t len,
    size_t nlen, unsigned depth, int part)
{
	struct stat	sb;

	if (!part) {
		s->path[len] = '\0';
		hx_entry(s, d, name, len, depth, HX_PLAIN);
	} else if (hx_lstat(s, dirfd(d), name, &sb) == 0) {
		if (!S_ISDIR(sb.st_mode))
			(void)hx_record(s, &sb);
		else
			hx_descend(s, d, name, nlen, depth + 1, HX_HUNT);
	}
}

/*
 * One directory entry outside the names: one of them (the root's in the
 * first pass, so that no bound of the walk cuts them short; the others in
 * the second), or a directory to look in.
 */
static void
hx_hunt(struct hx_scan *s, DIR *d, const struct dirent *de, size_t len,
    unsigned depth)
{
	struct stat	sb;
	int		nlen, part, named;

	if ((nlen = hx_push(s, len, de->d_name)) == -1)
		return;
	named = hx_hit(s->path, &part) != NULL;
	if (depth == 0 && named != s->names_pass)
		;	/* the other pass's */
	else if (named)
		hx_named(s, d, de->d_name, len, (size_t)nlen, depth, part);
	else if (de->d_type == DT_DIR || (de->d_type == DT_UNKNOWN &&
	    hx_lstat(s, dirfd(d), de->d_name, &sb) == 0 &&
	    S_ISDIR(sb.st_mode)))
		hx_descend(s, d, de->d_name, (size_t)nlen, depth + 1, HX_HUNT);
	s->path[len] = '\0';
}

/* Every entry of d, whose path is s->path (len bytes). */
static void
hx_dir(struct hx_scan *s, DIR *d, size_t len, unsigned depth,
    enum hx_mode mode)
{
	struct dirent	*de;

	while (!s->stop) {
		errno = 0;
		if ((de = readdir(d)) == NULL) {
			if (errno != 0)
				hx_note(s, "\"%s\": %s: not all read", s->path,
				    strerror(errno));
			break;
		}
		if (strcmp(de->d_name, ".") == 0 ||
		    strcmp(de->d_name, "..") == 0)
			continue;
		if (hx_bound(s) == -1)
			break;
		if (mode == HX_HUNT)
			hx_hunt(s, d, de, len, depth);
		else
			hx_entry(s, d, de->d_name, len, depth, mode);
	}
	s->path[len] = '\0';
}

static void
hx_finish(struct hx_scan *s)
{
	char	*more;

	if (s->nmissed > 1 && s->snap->incomplete != NULL) {
		if (asprintf(&more, "%s (and %u more places not scanned)",
		    s->snap->incomplete, s->nmissed - 1) == -1)
			fatal("asprintf");
		free(s->snap->incomplete);
		s->snap->incomplete = more;
	}
	hostexec_snap_sort(s->snap);
}

int
hostexec_snapshot(const char *workspace, const struct hostexec_limits *lim,
    struct hostexec_snap *snap, char *err, size_t errsz)
{
	struct hx_scan	 s;
	struct stat	 sb;
	DIR		*d;
	int		 root;

	memset(snap, 0, sizeof(*snap));
	memset(&s, 0, sizeof(s));
	s.lim = lim;
	s.snap = snap;
	s.t0 = clock_mono_ms();
	snap->taken_ms = clock_wall_ms();
	if ((root = open(workspace, O_RDONLY | O_DIRECTORY | O_CLOEXEC)) == -1 ||
	    fstat(root, &sb) == -1) {
		snprintf(err, errsz, "workspace %s: %s", workspace,
		    strerror(errno));
		if (root != -1)
			close(root);
		return -1;
	}
	s.dev = sb.st_dev;
	/* The root's names first, then everything else. */
	for (s.names_pass = 1; s.names_pass >= 0 && !s.stop; s.names_pass--) {
		if ((d = hx_open(&s, root, ".", 0)) == NULL)
			break;
		hx_dir(&s, d, 0, 0, HX_HUNT);
		closedir(d);
	}
	close(root);
	hx_finish(&s);
	return 0;
}

void
hostexec_snap_free(struct hostexec_snap *snap)
{
	size_t	i;

	if (snap == NULL)
		return;
	for (i = 0; i < snap->n; i++)
		free(snap->v[i].path);
	free(snap->v);
	free(snap->incomplete);
	memset(snap, 0, sizeof(*snap));
}

/* A byte's rank: '/' right after NUL, the bytes below '/' moved up one. */
static unsigned
hx_rank(unsigned char c)
{
	if (c == '/')
		return 1;
	return c < '/' && c != '\0' ? c + 1u : c;
}

/* Byte order, but '/' first: a directory's entries follow it at once
 * (names may hold any byte but NUL and '/': "a/b" and "a\001b" differ). */
int
hostexec_pathcmp(const char *a, const char *b)
{
	unsigned	ca, cb;

	for (;; a++, b++) {
		ca = hx_rank(*(const unsigned char *)a);
		cb = hx_rank(*(const unsigned char *)b);
		if (ca != cb || ca == 0)
			return ca < cb ? -1 : ca > cb;
	}
}

static int
hx_entrycmp(const void *a, const void *b)
{
	return hostexec_pathcmp(((const struct hostexec_entry *)a)->path,
	    ((const struct hostexec_entry *)b)->path);
}

void
hostexec_snap_sort(struct hostexec_snap *snap)
{
	size_t	i, j;

	if (snap->n == 0)
		return;
	qsort(snap->v, snap->n, sizeof(*snap->v), hx_entrycmp);
	for (i = 1, j = 0; i < snap->n; i++) {
		if (strcmp(snap->v[i].path, snap->v[j].path) == 0) {
			free(snap->v[i].path);
			continue;
		}
		snap->v[++j] = snap->v[i];
	}
	snap->n = j + 1;
}

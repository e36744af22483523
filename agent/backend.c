/*
 * Agent backends: their names, finding a backend's program, and the
 * launch of `command` (any agent CLI: a program and its arguments). The
 * presets (claude-code, codex) are built in backend_presets.c.
 *
 * A launch's environment is made here from nothing: the program never
 * inherits the worker's (nor, through it, the supervisor's) environment.
 * It gets PATH, HOME (the private one), LANG, TERM=dumb and the base URLs
 * of the wire it speaks; where a program insists on a key it gets the
 * placeholder BACKEND_KEY_PLACEHOLDER, which the supervisor never forwards
 * (the real key is added to the request upstream: docs/backends.md).
 */
#include <sys/stat.h>

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "agent/backend.h"

#define BACKEND_PATH	"/usr/local/bin:/usr/bin:/bin"

static const struct backend_row {
	enum backend_kind	 kind;
	const char		*name;
	const char		*program;
	const char		*hint;
} backend_rows[] = {
	{ BACKEND_LOOP, "loop", NULL, "" },
	{ BACKEND_COMMAND, "command", NULL,
	    "install the program named by the agent file's command: line, "
	    "or give its absolute path" },
	{ BACKEND_CLAUDE_CODE, "claude-code", "claude",
	    "install Claude Code: npm install -g @anthropic-ai/claude-code "
	    "(the program `claude` in PATH)" },
	{ BACKEND_CODEX, "codex", "codex",
	    "install Codex CLI: npm install -g @openai/codex (the program "
	    "`codex` in PATH)" },
};
#define BACKEND_NROWS	(sizeof(backend_rows) / sizeof(backend_rows[0]))

static const struct backend_row *
backend_row(enum backend_kind k)
{
	size_t	i;

	for (i = 0; i < BACKEND_NROWS; i++)
		if (backend_rows[i].kind == k)
			return &backend_rows[i];
	return NULL;
}

int
backend_parse(const char *s, enum backend_kind *k)
{
	size_t	i;

	for (i = 0; s != NULL && i < BACKEND_NROWS; i++) {
		if (strcmp(s, backend_rows[i].name) == 0) {
			*k = backend_rows[i].kind;
			return 0;
		}
	}
	errno = EINVAL;
	return -1;
}

const char *
backend_name(enum backend_kind k)
{
	const struct backend_row	*r = backend_row(k);

	return r != NULL ? r->name : "unknown";
}

const char *
backend_program_name(enum backend_kind k)
{
	const struct backend_row	*r = backend_row(k);

	return r != NULL ? r->program : NULL;
}

const char *
backend_install_hint(enum backend_kind k)
{
	const struct backend_row	*r = backend_row(k);

	return r != NULL ? r->hint : "";
}

/* path names an executable regular file: its canonical form in out. */
static int
backend_exec_file(const char *path, char *out, size_t len)
{
	char		 real[PATH_MAX];
	struct stat	 st;

	if (realpath(path, real) == NULL)
		return -1;
	if (stat(real, &st) == -1)
		return -1;
	if (!S_ISREG(st.st_mode) || access(real, X_OK) == -1) {
		errno = EACCES;
		return -1;
	}
	if (strlcpy(out, real, len) >= len) {
		errno = ENAMETOOLONG;
		return -1;
	}
	return 0;
}

int
backend_find_program(const char *name, char *out, size_t len)
{
	const char	*path, *p, *colon;
	char		 cand[PATH_MAX];
	size_t		 n;

	if (name == NULL || name[0] == '\0') {
		errno = ENOENT;
		return -1;
	}
	if (strchr(name, '/') != NULL)
		return backend_exec_file(name, out, len);
	if ((path = getenv("PATH")) == NULL || *path == '\0')
		path = BACKEND_PATH;
	for (p = path; *p != '\0'; p = *colon ? colon + 1 : colon) {
		if ((colon = strchr(p, ':')) == NULL)
			colon = p + strlen(p);
		n = (size_t)(colon - p);
		/* An empty or relative entry would be the current
		 * directory: the workspace, which an agent writes. */
		if (n == 0 || p[0] != '/')
			continue;
		if (snprintf(cand, sizeof(cand), "%.*s/%s", (int)n, p,
		    name) >= (int)sizeof(cand))
			continue;
		if (backend_exec_file(cand, out, len) == 0)
			return 0;
	}
	errno = ENOENT;
	return -1;
}

void
backend_launch_free(struct backend_launch *l)
{
	int	i;

	for (i = 0; i < l->argc; i++)
		free(l->argv[i]);
	for (i = 0; i < l->envc; i++)
		free(l->envp[i]);
	for (i = 0; i < l->nfiles; i++) {
		free(l->files[i].path);
		free(l->files[i].content);
	}
	memset(l, 0, sizeof(*l));
}

/* s with every {task} and {base_url} replaced; NULL: out of memory. */
static char *
backend_subst(const char *s, const struct backend_args *a)
{
	static const char	*keys[] = { "{task}", "{base_url}" };
	const char		*vals[2], *p, *hit;
	char			*out, *o;
	size_t			 len = 0, i, best;

	vals[0] = a->task != NULL ? a->task : "";
	vals[1] = a->base_url != NULL ? a->base_url : "";
	/* Two passes: the length, then the bytes. */
	for (o = NULL, out = NULL;; ) {
		for (p = s; *p != '\0'; ) {
			best = 2;
			hit = NULL;
			for (i = 0; i < 2; i++) {
				const char *h = strstr(p, keys[i]);

				if (h != NULL && (hit == NULL || h < hit)) {
					hit = h;
					best = i;
				}
			}
			if (hit == NULL)
				hit = p + strlen(p);
			if (o != NULL)
				memcpy(o, p, (size_t)(hit - p));
			if (o != NULL)
				o += hit - p;
			else
				len += (size_t)(hit - p);
			if (best == 2)
				break;
			if (o != NULL) {
				memcpy(o, vals[best], strlen(vals[best]));
				o += strlen(vals[best]);
			} else
				len += strlen(vals[best]);
			p = hit + strlen(keys[best]);
		}
		if (o != NULL) {
			*o = '\0';
			return out;
		}
		if ((out = malloc(len + 1)) == NULL)
			return NULL;
		o = out;
	}
}

static int
backend_env(struct backend_launch *l, const char *name, const char *value,
    char *err, size_t errlen)
{
	if (l->envc == BACKEND_ENV_MAX) {
		snprintf(err, errlen, "more than %d environment variables",
		    BACKEND_ENV_MAX);
		return -1;
	}
	if (asprintf(&l->envp[l->envc], "%s=%s", name, value) == -1) {
		l->envp[l->envc] = NULL;
		snprintf(err, errlen, "out of memory");
		return -1;
	}
	l->envc++;
	return 0;
}

/* The wire's URLs: what SDKs of each API read. */
static int
backend_env_urls(struct backend_launch *l, const struct backend_args *a,
    char *err, size_t errlen)
{
	char	v1[PATH_MAX];

	snprintf(v1, sizeof(v1), "%s/v1", a->base_url);
	if (backend_env(l, "WARREN_AGENT_BASE_URL", a->base_url, err,
	    errlen) == -1 ||
	    backend_env(l, "ANTHROPIC_BASE_URL", a->base_url, err,
	    errlen) == -1 ||
	    backend_env(l, "OPENAI_BASE_URL", v1, err, errlen) == -1)
		return -1;
	/* A placeholder where SDKs refuse to start without a key: never
	 * a key, and the supervisor drops every header that could carry
	 * one (ipc_http_header_ok). */
	if (backend_env(l, "ANTHROPIC_API_KEY", BACKEND_KEY_PLACEHOLDER, err,
	    errlen) == -1 ||
	    backend_env(l, "OPENAI_API_KEY", BACKEND_KEY_PLACEHOLDER, err,
	    errlen) == -1)
		return -1;
	return 0;
}

/* The environment a command starts from: PATH, HOME (the private one),
 * LANG, TERM=dumb, TMPDIR, the base URLs and the placeholder keys. */
static int
backend_env_base(struct backend_launch *l, const struct backend_args *a,
    char *err, size_t errlen)
{
	const char	*lang = getenv("LANG");

	if (backend_env(l, "PATH", BACKEND_PATH, err, errlen) == -1 ||
	    backend_env(l, "HOME", a->home, err, errlen) == -1 ||
	    backend_env(l, "LANG", lang != NULL && *lang != '\0' &&
	    strlen(lang) < 64 ? lang : "C.UTF-8", err, errlen) == -1 ||
	    backend_env(l, "TERM", "dumb", err, errlen) == -1 ||
	    backend_env(l, "TMPDIR", "/tmp", err, errlen) == -1)
		return -1;
	return backend_env_urls(l, a, err, errlen);
}

static int
backend_command_build(const struct backend_args *a,
    struct backend_launch *l, char *err, size_t errlen)
{
	int	i;

	if ((l->argv[0] = strdup(a->program)) == NULL)
		goto nomem;
	l->argc = 1;
	for (i = 0; a->args != NULL && a->args[i] != NULL; i++) {
		if (l->argc == BACKEND_ARGV_MAX) {
			snprintf(err, errlen, "more than %d arguments",
			    BACKEND_ARGV_MAX - 1);
			return -1;
		}
		if ((l->argv[l->argc] = backend_subst(a->args[i], a)) == NULL)
			goto nomem;
		l->argc++;
	}
	if (backend_env_base(l, a, err, errlen) == -1)
		return -1;
	if (a->wire == NULL || strcmp(a->wire, "anthropic") == 0)
		l->wire = "anthropic";
	else if (strcmp(a->wire, "responses") == 0)
		l->wire = "responses";
	else if (strcmp(a->wire, "openai") == 0)
		l->wire = "openai";
	else {
		snprintf(err, errlen, "wire \"%.32s\" is not anthropic, "
		    "responses or openai", a->wire);
		return -1;
	}
	return 0;
nomem:
	snprintf(err, errlen, "out of memory");
	return -1;
}

int
backend_launch_build(enum backend_kind k, const struct backend_args *a,
    struct backend_launch *l, char *err, size_t errlen)
{
	int	rc;

	memset(l, 0, sizeof(*l));
	if (a->program == NULL || a->program[0] != '/' || a->home == NULL ||
	    a->home[0] != '/' || a->base_url == NULL) {
		snprintf(err, errlen, "backend %s: the program and the home "
		    "must be absolute paths, and the base URL given",
		    backend_name(k));
		return -1;
	}
	switch (k) {
	case BACKEND_COMMAND:
		rc = backend_command_build(a, l, err, errlen);
		break;
	case BACKEND_CLAUDE_CODE:
	case BACKEND_CODEX:
		rc = backend_preset_build(k, a, l, err, errlen);
		break;
	case BACKEND_LOOP:
	default:
		snprintf(err, errlen, "backend %s runs no program",
		    backend_name(k));
		rc = -1;
		break;
	}
	if (rc == -1)
		backend_launch_free(l);
	return rc;
}

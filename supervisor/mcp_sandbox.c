/*
 * The sandbox of an MCP server: its agent's policy (the workspace
 * read-only where the agent's is, the protected and masked paths, no
 * network unless the user's own entry grants the host's, the rlimits and
 * cgroup limits), plus what the server needs to
 * run: its program, executable, and for an argument that names a file
 * of the user's entry (a script), its package (the outermost
 * node_modules above it, or its directory; only the file itself when
 * that directory is /, $HOME or above it) readable. A directory named
 * in the arguments (the filesystem server's allowed roots, "/" even) is
 * not granted: what the server may read is the agent's view, not what it
 * is told.
 */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/path.h"
#include "spawnd/spawn.h"
#include "supervisor/mcp.h"

/* The command as the worker's PATH finds it, made canonical. */
static int
mcp_sandbox_program(const char *cmd, char *out, size_t outsz)
{
	static const char *const dirs[] = { "/usr/local/bin", "/usr/bin",
	    "/bin" };
	char	 try[PATH_MAX], real[PATH_MAX];
	size_t	 i;

	if (strchr(cmd, '/') != NULL) {
		if (cmd[0] != '/' || realpath(cmd, real) == NULL ||
		    access(real, X_OK) == -1)
			return -1;
		return strlcpy(out, real, outsz) < outsz ? 0 : -1;
	}
	for (i = 0; i < sizeof(dirs) / sizeof(dirs[0]); i++) {
		snprintf(try, sizeof(try), "%s/%s", dirs[i], cmd);
		if (realpath(try, real) != NULL && access(real, X_OK) == 0)
			return strlcpy(out, real, outsz) < outsz ? 0 : -1;
	}
	errno = ENOENT;
	return -1;
}

/* A script's package: the outermost node_modules above it, or its
 * directory. */
static void
mcp_sandbox_package(const char *file, char *out, size_t outsz)
{
	const char	*nm;
	char		*slash;

	if ((nm = strstr(file, "/node_modules/")) != NULL) {
		snprintf(out, outsz, "%.*s/node_modules", (int)(nm - file),
		    file);
		return;
	}
	strlcpy(out, file, outsz);
	if ((slash = strrchr(out, '/')) != NULL && slash != out)
		*slash = '\0';
}

/* Whether dir is /, $HOME or above it: a package no script's
 * directory may grant. */
static int
mcp_sandbox_too_wide(const char *dir)
{
	const char	*home = getenv("HOME");
	char		 real[PATH_MAX];

	if (strcmp(dir, "/") == 0)
		return 1;
	if (home == NULL || home[0] != '/' || realpath(home, real) == NULL)
		return 0;
	return path_under(real, dir);
}

static int
mcp_sandbox_args(const struct mcp_entry *e, struct sandbox_policy *p,
    char *err, size_t errsz)
{
	struct sandbox_error	 se;
	struct stat		 st;
	char			 real[PATH_MAX], pkg[PATH_MAX];
	size_t			 i;

	for (i = 0; i < e->nargs; i++) {
		if (e->args[i][0] != '/' ||
		    realpath(e->args[i], real) == NULL ||
		    stat(real, &st) == -1 || !S_ISREG(st.st_mode))
			continue;
		mcp_sandbox_package(real, pkg, sizeof(pkg));
		if (path_under(pkg, p->workspace))
			continue;
		/* A script straight in $HOME (or /): that file, not the
		   directory, whose .ssh and the rest are no package. */
		if (mcp_sandbox_too_wide(pkg))
			strlcpy(pkg, real, sizeof(pkg));
		memset(&se, 0, sizeof(se));
		if (sandbox_policy_read(p, pkg, &se) == -1) {
			snprintf(err, errsz, "server %s: %s", e->name, se.msg);
			return -1;
		}
	}
	for (i = 0; i < e->nread; i++) {
		memset(&se, 0, sizeof(se));
		if (sandbox_policy_read(p, e->read[i], &se) == -1) {
			snprintf(err, errsz, "server %s: %s", e->name, se.msg);
			return -1;
		}
	}
	return 0;
}

int
mcp_sandbox_policy(const struct mcp_entry *e,
    const struct sandbox_policy *agent, struct sandbox_policy *p, char *prog,
    size_t progsz, char *err, size_t errsz)
{
	*p = *agent;
	p->nread = 0;
	p->read_used = 0;
	snprintf(p->name, sizeof(p->name), "mcp-%s", e->name);
	/* A backend worker's sockets are its own (docs/backends.md); a
	 * server's network is the host's, granted by the user's own
	 * mcp.json only (docs/mcp.md). */
	p->inet = 0;
	p->hostnet = 0;
	if (e->network && !e->project)
		sandbox_policy_hostnet(p);
	/* Its own exec; the filter and Landlock still hold it. */
	p->exec = 1;
	if (mcp_sandbox_program(e->command, prog, progsz) == -1) {
		snprintf(err, errsz, "server %s: command %s: %s (an absolute "
		    "path, or a name in /usr/local/bin, /usr/bin or /bin)",
		    e->name, e->command, strerror(errno));
		return -1;
	}
	if (strlcpy(p->program, prog, sizeof(p->program)) >=
	    sizeof(p->program)) {
		snprintf(err, errsz, "server %s: command path too long",
		    e->name);
		return -1;
	}
	/* A project's entry grants nothing: the agent's view and its
	 * program only. */
	if (e->project)
		return 0;
	return mcp_sandbox_args(e, p, err, errsz);
}

void
mcp_sandbox_launch(struct mcp_launch *l, const struct mcp_entry *e,
    char *prog, const struct sandbox_policy *p, struct spawn_req *req)
{
	size_t	i, n = 0;

	l->argv[0] = prog;
	for (i = 0; i < e->nargs; i++)
		l->argv[i + 1] = e->args[i];
	l->argv[i + 1] = NULL;
	l->base = spawn_env();
	for (i = 0; l->base[i] != NULL && n < MCP_ENV_MAX / 2; i++)
		l->env[n++] = l->base[i];
	for (i = 0; i < e->nenv; i++)
		l->env[n++] = e->env[i];
	l->env[n] = NULL;
	memset(req, 0, sizeof(*req));
	req->bin = prog;
	req->argv = l->argv;
	req->envp = l->env;
	req->policy = p;
	req->mode = SPAWN_STDIO;
}

void
mcp_sandbox_launch_free(struct mcp_launch *l)
{
	spawn_env_free(l->base);
	l->base = NULL;
}

void
mcp_sandbox_line(const struct sandbox_policy *p, char *out, size_t outsz)
{
	size_t	 len, off;
	unsigned bit;
	int	 i, first = 1;

	snprintf(out, outsz, "workspace %s %s, program %s, read", p->workspace,
	    p->fs_write ? "read-write" : "read-only", p->program);
	for (i = 0, off = 0; i < p->nread && off < p->read_used; i++) {
		len = strlen(out);
		snprintf(out + len, outsz - len, "%s%s", i ? "," : " ",
		    p->read_pool + off);
		off += strlen(p->read_pool + off) + 1;
	}
	len = strlen(out);
	snprintf(out + len, outsz - len, "%s, %s, requires ",
	    p->nread == 0 ? " nothing more" : "", p->hostnet ?
	    "the host's network" : "no network");
	for (bit = 1; bit <= SANDBOX_ALL; bit <<= 1) {
		if (!(p->require & bit))
			continue;
		len = strlen(out);
		snprintf(out + len, outsz - len, "%s%s", first ? "" : ",",
		    sandbox_layer_name(bit));
		first = 0;
	}
}

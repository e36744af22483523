/*
 * What a worker is started with: its command line and its profile's
 * sandbox policy, with a backend's checks (its program found outside the
 * workspace, its package directory holding no secret, its wire one the
 * run's endpoint speaks). Separate from proc.c, the worker's lifecycle
 * table, because it decides before there is a process: proc_start calls
 * proc_policy and proc_argv, then hands the request to the spawn server.
 */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "agent/profile.h"
#include "common/log.h"
#include "common/path.h"
#include "common/str.h"
#include "common/xdg.h"
#include "common/xmalloc.h"
#include "llm/llm.h"
#include "sandbox/sandbox.h"
#include "spawnd/spawn.h"
#include "supervisor/proc_int.h"
#include "supervisor/run.h"

/* A backend's worker runs its program (worker/proxy.c): the program as
 * found when the run made its policy, and the profile's settings. */
static void
proc_argv_backend(const struct profile *p, const struct sandbox_policy *sp,
    char **argv, int *i)
{
	size_t	k;

	argv[(*i)++] = xstrdup("--backend");
	argv[(*i)++] = xstrdup(backend_name(p->backend));
	argv[(*i)++] = xstrdup("--program");
	argv[(*i)++] = xstrdup(sp->program);
	if (p->wire != NULL) {
		argv[(*i)++] = xstrdup("--wire");
		argv[(*i)++] = xstrdup(p->wire);
	}
	if (p->model != NULL) {
		argv[(*i)++] = xstrdup("--model");
		argv[(*i)++] = xstrdup(p->model);
	}
	for (k = 0; k < p->nargs; k++) {
		argv[(*i)++] = xstrdup("--arg");
		argv[(*i)++] = xstrdup(p->args[k]);
	}
}

char **
proc_argv(struct worker *w)
{
	struct node	*n = w->node;
	char		**argv, depth[16];
	int		 i = 0;

	argv = xcalloc(24 + 2 * n->profile->nargs, sizeof(*argv));
	snprintf(depth, sizeof(depth), "%u", n->depth);
	argv[i++] = xstrdup("warren-worker");
	argv[i++] = xstrdup("--path");
	argv[i++] = xstrdup(n->path);
	argv[i++] = xstrdup("--depth");
	argv[i++] = xstrdup(depth);
	argv[i++] = xstrdup("--profile");
	argv[i++] = xstrdup(n->profile->name);
	if (w->run->opts.trace)
		argv[i++] = xstrdup("-T");
	if (n->profile->backend != BACKEND_LOOP)
		proc_argv_backend(n->profile, w->policy, argv, &i);
	argv[i] = NULL;
	return argv;
}

void
proc_argv_free(char **argv)
{
	size_t	i;

	for (i = 0; argv[i] != NULL; i++)
		free(argv[i]);
	free(argv);
}

/*
 * What a backend's program gets readable besides the workspace (its
 * package directory, sandbox_package_dir) may not hold the user's HOME,
 * warren's config or state directory or a masked file (the key file, the
 * database, the cassette): a program at ~/bin/agent with a ~/package.json,
 * or at ~/agent, would read ~/.ssh and the key file.
 */
static int
proc_backend_holds(const struct profile *pr, const char *program,
    const char *dir, const char *secret, char *err, size_t errsz)
{
	char	real[PATH_MAX];

	if (secret == NULL || secret[0] != '/')
		return 0;
	if (realpath(secret, real) != NULL)
		secret = real;
	if (!path_under(secret, dir))
		return 0;
	if (snprintf(err, errsz, "profile %s (backend %s): the program's "
	    "package directory %.160s, which it may read, holds %.160s: "
	    "install %.160s in a directory of its own, outside HOME",
	    pr->name, backend_name(pr->backend), dir, secret, program) >=
	    (int)errsz)
		log_debug("proc: a backend's refusal was cut to %zu bytes",
		    errsz);
	return 1;
}

static int
proc_backend_package(struct run *r, const struct profile *pr,
    const char *program, char *err, size_t errsz)
{
	char	dir[PATH_MAX], cfg[PATH_MAX], state[PATH_MAX];
	size_t	i;
	int	exec;

	if (sandbox_package_dir(program, dir, sizeof(dir), &exec) == -1) {
		snprintf(err, errsz, "profile %s (backend %s): program %.256s "
		    "has no package directory (%s): install it in a "
		    "directory of its own", pr->name, backend_name(pr->backend),
		    program, strerror(errno));
		return -1;
	}
	if (xdg_config_dir(cfg, sizeof(cfg)) == -1)
		cfg[0] = '\0';
	if (xdg_state_dir(state, sizeof(state)) == -1)
		state[0] = '\0';
	if (proc_backend_holds(pr, program, dir, getenv("HOME"), err, errsz) ||
	    proc_backend_holds(pr, program, dir, cfg, err, errsz) ||
	    proc_backend_holds(pr, program, dir, state, err, errsz))
		return -1;
	for (i = 0; r->opts.masks != NULL && r->opts.masks[i] != NULL; i++)
		if (proc_backend_holds(pr, program, dir, r->opts.masks[i], err,
		    errsz))
			return -1;
	return 0;
}

/*
 * A backend's policy (docs/backends.md): its program found now, outside
 * the workspace (which agents write: a program there would be an agent's),
 * executable and its package readable; sockets on its own loopback; no
 * RLIMIT_AS (V8, Bun and Rust runtimes reserve far more address space
 * than they use), the memory group bounds it instead. Its wire must be
 * one the run's endpoint speaks.
 */
static int
proc_backend_policy(struct run *r, const struct profile *pr,
    struct sandbox_policy *p, char *err, size_t errsz)
{
	const char	*name, *wire, *mine;
	char		 path[PATH_MAX], ws[PATH_MAX];
	size_t		 wl;

	name = pr->command != NULL ? pr->command :
	    backend_program_name(pr->backend);
	if (name == NULL || backend_find_program(name, path,
	    sizeof(path)) == -1) {
		snprintf(err, errsz, "profile %s (backend %s): program %s "
		    "not found: %s", pr->name, backend_name(pr->backend),
		    name != NULL ? name : "(none)",
		    backend_install_hint(pr->backend));
		return -1;
	}
	if (realpath(r->opts.workspace, ws) != NULL &&
	    strncmp(path, ws, (wl = strlen(ws))) == 0 &&
	    (path[wl] == '/' || wl == 1)) {
		snprintf(err, errsz, "profile %s (backend %s): program %.256s "
		    "lies in the workspace, which agents write: install it "
		    "outside", pr->name, backend_name(pr->backend), path);
		return -1;
	}
	if (proc_backend_package(r, pr, path, err, errsz) == -1)
		return -1;
	wire = pr->backend == BACKEND_CODEX ? "responses" :
	    pr->wire != NULL ? pr->wire : "anthropic";
	if ((mine = llm_http_wire_check(r->llm, wire)) != NULL) {
		snprintf(err, errsz, "profile %s (backend %s) speaks the %s "
		    "API and the run's endpoint speaks %s: set provider = %s "
		    "(or --provider %s) with its base_url and key", pr->name,
		    backend_name(pr->backend), wire, mine,
		    strcmp(wire, "anthropic") == 0 ? "anthropic" : "openai",
		    strcmp(wire, "anthropic") == 0 ? "anthropic" : "openai");
		return -1;
	}
	strlcpy(p->program, path, sizeof(p->program));
	p->inet = 1;
	p->limits.as_bytes = 0;
	return 0;
}

/*
 * The sandbox policy of n's profile, shared by its workers until the run
 * ends. Made once per profile and run: it resolves the workspace (a
 * realpath per spawn before), and the run's workspace, caps and --weaker
 * do not change while it lasts.
 */
const struct sandbox_policy *
proc_policy(struct run *r, const struct node *n, char *err, size_t errsz)
{
	struct run_policy	*rp;
	struct sandbox_policy	*p;
	struct sandbox_error	 e;

	for (rp = r->policies; rp != NULL; rp = rp->next)
		if (rp->profile == n->profile)
			break;
	if (rp == NULL) {
		p = xcalloc(1, sizeof(*p));
		memset(&e, 0, sizeof(e));
		if (sandbox_policy_init(p, n->profile->name,
		    r->opts.workspace, n->profile->fs_write,
		    n->profile->exec, &e) == -1) {
			snprintf(err, errsz, "sandbox policy: %s", e.msg);
			free(p);
			return NULL;
		}
		if (spawn_protect(p, r->opts.masks, err, errsz) == -1) {
			free(p);
			return NULL;
		}
		if (r->opts.limits.mem_bytes != 0)
			p->limits.mem_bytes = (rlim_t)r->opts.limits.mem_bytes;
		if (n->profile->backend != BACKEND_LOOP &&
		    proc_backend_policy(r, n->profile, p, err, errsz) == -1) {
			free(p);
			return NULL;
		}
		run_disk_policy(r, p);
		sandbox_policy_require(p, r->caps);
		p->allow_weaker = r->opts.weaker;
		rp = xcalloc(1, sizeof(*rp));
		rp->profile = n->profile;
		rp->policy = p;
		rp->next = r->policies;
		r->policies = rp;
	}
	return rp->policy;
}

void
proc_policies_free(struct run *r)
{
	struct run_policy	*rp;

	while ((rp = r->policies) != NULL) {
		r->policies = rp->next;
		free(rp->policy);
		free(rp);
	}
}

/*
 * warren profiles [--workspace DIR] [--json] [NAME]: the agent profiles a
 * run can use (built-in, the user's agents/NAME.md, and a trusted
 * workspace's .warren/agents/NAME.md: project.h), their
 * tools, the sandbox each needs (derived from the tools) and what their
 * tool schemas cost per LLM call, and its backend: warren's own loop, or
 * another agent program (docs/backends.md) and whether that program is
 * found here, with what to install when it is not. With NAME, one profile
 * in full, with its role prompt.
 */
#include <getopt.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <jansson.h>

#include "agent/backend.h"
#include "agent/profile.h"
#include "cli/cmd.h"
#include "cli/project.h"
#include "common/exitcode.h"
#include "common/str.h"
#include "common/jtext.h"

static void
profiles_usage(void)
{
	fprintf(stderr, "usage: warren profiles [--workspace DIR] [--json] "
	    "[NAME]\n");
}

static void
profiles_print_str(const char *s)
{
	char	*e;

	if ((e = str_escape_dup(s, strlen(s), STR_ESC_KEEP_NL)) == NULL)
		return;
	fputs(e, stdout);
	free(e);
}

static void
profiles_tools(const struct profile *p, char *dst, size_t dstsz)
{
	size_t	i;

	dst[0] = '\0';
	for (i = 0; i < p->ntools; i++) {
		if (i > 0)
			strlcat(dst, ",", dstsz);
		strlcat(dst, p->tools[i], dstsz);
	}
}

static const char *
profiles_strategy(const struct profile *p)
{
	switch (p->context.strategy) {
	case AGENT_CTX_HIERARCHICAL:
		return "hierarchical";
	case AGENT_CTX_NONE:
		return "none";
	case AGENT_CTX_DEFAULT:
	case AGENT_CTX_APPEND:
		break;
	}
	return "append";
}

/* The program a profile's backend runs, as looked up (a preset's name,
 * or the agent file's command: line); NULL for the loop. */
static const char *
profiles_program(const struct profile *p)
{
	if (p->backend == BACKEND_COMMAND)
		return p->command;
	return backend_program_name(p->backend);
}

/*
 * Whether p's program is found here (as a worker will look it up: PATH,
 * or the absolute path given): 1 with its path in path, 0 when it is not
 * (path empty), -1 for the loop, which runs none.
 */
static int
profiles_found(const struct profile *p, char *path, size_t len)
{
	const char	*name = profiles_program(p);

	path[0] = '\0';
	if (p->backend == BACKEND_LOOP || name == NULL)
		return -1;
	if (backend_find_program(name, path, len) == -1) {
		path[0] = '\0';
		return 0;
	}
	return 1;
}

/* "program": {"name", "path" (null: not found), "install" when not}, or
 * null for the loop. */
static json_t *
profiles_json_program(const struct profile *p)
{
	char	path[PATH_MAX];
	json_t	*o;
	int	 found = profiles_found(p, path, sizeof(path));

	if (found == -1)
		return json_null();
	o = json_object();
	json_object_set_new(o, "name", jtext(profiles_program(p)));
	json_object_set_new(o, "path", found ? jtext(path) : json_null());
	if (!found)
		json_object_set_new(o, "install",
		    json_string(backend_install_hint(p->backend)));
	return o;
}

static json_t *
profiles_json(const struct profile *p, int full)
{
	json_t	*o, *t;
	size_t	 i;

	o = json_object();
	t = json_array();
	for (i = 0; i < p->ntools; i++)
		json_array_append_new(t, json_string(p->tools[i]));
	json_object_set_new(o, "name", jtext(p->name));
	json_object_set_new(o, "description", jtext(p->description));
	json_object_set_new(o, "tools", t);
	json_object_set_new(o, "fs", json_string(p->fs_write ? "rw" : "ro"));
	json_object_set_new(o, "exec", json_boolean(p->exec));
	json_object_set_new(o, "delegate", json_boolean(p->delegate));
	json_object_set_new(o, "schema_tokens",
	    json_integer(profile_schema_tokens(p)));
	json_object_set_new(o, "context", json_string(profiles_strategy(p)));
	json_object_set_new(o, "model", p->model ? jtext(p->model) :
	    json_null());
	json_object_set_new(o, "source", jtext(p->source));
	json_object_set_new(o, "backend",
	    json_string(backend_name(p->backend)));
	json_object_set_new(o, "program", profiles_json_program(p));
	if (full)
		json_object_set_new(o, "prompt", jtext(p->prompt));
	return o;
}

/* What the table's last column and the full view say of p's program. */
static void
profiles_print_program(const struct profile *p)
{
	char	path[PATH_MAX];

	if (profiles_found(p, path, sizeof(path)) == 1) {
		profiles_print_str(path);
		return;
	}
	profiles_print_str(profiles_program(p));
	printf(" not found: ");
	profiles_print_str(backend_install_hint(p->backend));
}

static void
profiles_one(const struct profile *p)
{
	char	tools[256];

	profiles_tools(p, tools, sizeof(tools));
	printf("name:        ");
	profiles_print_str(p->name);
	printf("\ndescription: ");
	profiles_print_str(p->description);
	printf("\ntools:       %s (+ complete, fail)\n", tools);
	printf("sandbox:     fs %s, exec %s, network no\n",
	    p->fs_write ? "rw" : "ro", p->exec ? "yes" : "no");
	printf("schemas:     ~%zu tokens per call\n", profile_schema_tokens(p));
	printf("context:     %s\n", profiles_strategy(p));
	printf("backend:     %s", backend_name(p->backend));
	if (p->backend == BACKEND_LOOP)
		printf(" (warren's own)");
	else {
		printf("\nprogram:     ");
		profiles_print_program(p);
	}
	printf("\nmodel:       ");
	profiles_print_str(p->model ? p->model : "(the run's)");
	printf("\nsource:      ");
	profiles_print_str(p->source);
	printf("\n\n");
	profiles_print_str(p->prompt);
	printf("\n");
}

/* Print and free j (NULL: out of memory); -1 when nothing was written. */
static int
profiles_json_print(json_t *j)
{
	int	rc;

	if (j == NULL) {
		fprintf(stderr, "warren profiles: out of memory\n");
		return -1;
	}
	rc = json_dumpf(j, stdout, JSON_INDENT(2) | JSON_PRESERVE_ORDER);
	json_decref(j);
	if (rc == -1 || putchar('\n') == EOF)
		return -1;
	return 0;
}

/* The exit code: a failed write to stdout (a full disk, a closed pipe) is
 * said, not hidden behind exit 0. */
static int
profiles_done(int rc)
{
	if (fflush(stdout) == EOF || ferror(stdout) || rc == -1) {
		fprintf(stderr, "warren profiles: writing the output failed\n");
		return WARREN_EXIT_INTERNAL;
	}
	return WARREN_EXIT_OK;
}

/* What a run in workspace dir would load (untrusted project files are
 * named on stderr and left out). */
static int
profiles_load(struct profile_set *set, const char *dir, char *err,
    size_t errlen)
{
	struct project	 pr;
	int		 rc = -1;

	if (project_open(&pr, dir, NULL, "profiles", err, errlen) == 0)
		rc = project_load_profiles(&pr, set, err, errlen);
	project_free(&pr);
	return rc;
}

/* `warren profiles NAME`: the one profile, or a usage error naming NAME
 * escaped and cut (it may hold any bytes) when no profile has it. */
static int
profiles_show(const struct profile_set *set, const char *name, int json)
{
	const struct profile	*p;
	char			*e;

	if ((p = profile_set_find(set, name)) == NULL) {
		e = str_escape_dup(name, strnlen(name, 64), 0);
		fprintf(stderr, "warren profiles: no profile named "
		    "\"%s\" (warren profiles lists them)\n",
		    e != NULL ? e : "?");
		free(e);
		return WARREN_EXIT_USAGE;
	}
	if (json)
		return profiles_done(profiles_json_print(profiles_json(p, 1)));
	profiles_one(p);
	return profiles_done(0);
}

/* `warren profiles --json`: every profile, one array. */
static int
profiles_list_json(const struct profile_set *set)
{
	json_t	*arr;
	size_t	 i;

	if ((arr = json_array()) != NULL)
		for (i = 0; i < set->n; i++)
			json_array_append_new(arr, profiles_json(set->v[i], 0));
	return profiles_done(profiles_json_print(arr));
}

/* `warren profiles`: one line per profile. */
static int
profiles_table(const struct profile_set *set)
{
	const struct profile	*p;
	char			 tools[256];
	size_t			 i;

	printf("%-14s %-4s %-5s %7s  %-8s %-11s %s\n", "PROFILE", "FS",
	    "EXEC", "TOKENS", "SOURCE", "BACKEND",
	    "TOOLS (+ complete, fail), or PROGRAM");
	for (i = 0; i < set->n; i++) {
		p = set->v[i];
		printf("%-14.64s %-4s %-5s %7zu  %-8s %-11s ", p->name,
		    p->fs_write ? "rw" : "ro", p->exec ? "yes" : "no",
		    profile_schema_tokens(p), p->builtin ? "built-in" : "file",
		    backend_name(p->backend));
		if (p->backend == BACKEND_LOOP) {
			profiles_tools(p, tools, sizeof(tools));
			printf("%s", tools);
		} else
			profiles_print_program(p);
		printf("\n");
	}
	return profiles_done(0);
}

int
cmd_profiles(int argc, char **argv)
{
	struct profile_set	 set;
	const char		*ws;
	char			 err[1024], *e;
	int			 json, rc;

	if ((rc = cmd_getopt_ws("profiles", argc, argv, &ws, &json)) == 1) {
		profiles_usage();
		return WARREN_EXIT_OK;
	}
	if (rc == -1)
		return WARREN_EXIT_USAGE;
	argc -= optind;
	argv += optind;
	if (argc > 1) {
		cmd_usage_error("profiles", "one NAME at most, not '%s'",
		    argv[1]);
		return WARREN_EXIT_USAGE;
	}
	if (profiles_load(&set, ws, err, sizeof(err)) == -1) {
		e = str_escape_dup(err, strlen(err), 0);
		fflush(stdout);
		fprintf(stderr, "warren profiles: %s\n", e ? e : "error");
		free(e);
		return WARREN_EXIT_CONFIG;
	}
	if (argc == 1)
		rc = profiles_show(&set, argv[0], json);
	else if (json)
		rc = profiles_list_json(&set);
	else
		rc = profiles_table(&set);
	profile_set_free(&set);
	return rc;
}

/*
 * warren profiles [--workspace DIR] [--json] [NAME]: the agent profiles a
 * run can use (built-in, the user's agents/NAME.md, and a trusted
 * workspace's .warren/agents/NAME.md: project.h), their
 * tools, the sandbox each needs (derived from the tools) and what their
 * tool schemas cost per LLM call. With NAME, one profile in full, with its
 * role prompt.
 */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <jansson.h>

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
	if (full)
		json_object_set_new(o, "prompt", jtext(p->prompt));
	return o;
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
	printf("model:       ");
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

	printf("%-14s %-4s %-5s %7s  %-8s %s\n", "PROFILE", "FS", "EXEC",
	    "TOKENS", "SOURCE", "TOOLS (+ complete, fail)");
	for (i = 0; i < set->n; i++) {
		p = set->v[i];
		profiles_tools(p, tools, sizeof(tools));
		printf("%-14.64s %-4s %-5s %7zu  %-8s %s\n", p->name,
		    p->fs_write ? "rw" : "ro", p->exec ? "yes" : "no",
		    profile_schema_tokens(p), p->builtin ? "built-in" : "file",
		    tools);
	}
	return profiles_done(0);
}

int
cmd_profiles(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "workspace", required_argument, NULL, 'w' },
		{ "json", no_argument, NULL, 'j' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	struct profile_set	 set;
	const char		*ws = ".";
	char			 err[1024], *e;
	int			 ch, json = 0, rc;

	optind = 1;
	while ((ch = cmd_getopt("profiles", argc, argv, "w:jh", opts)) != -1) {
		switch (ch) {
		case 'w':
			ws = optarg;
			break;
		case 'j':
			json = 1;
			break;
		case 'h':
			profiles_usage();
			return WARREN_EXIT_OK;
		default:
			return WARREN_EXIT_USAGE;
		}
	}
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

/*
 * What a composition pattern is given: the orchestrator's arguments, and
 * the plan a plan agent returns. Both are the model's output (a plan
 * agent may also have read hostile files): every field is checked, the
 * counts and lengths bounded, and a plan must be a DAG over known ids
 * before anything runs. docs/composition.md.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "common/str.h"
#include "common/xmalloc.h"
#include "supervisor/compose.h"
#include "supervisor/compose_testapi.h"

#define COMPOSE_PLAN_TEXT_MAX	(256u * 1024)

void
compose_plan_free(struct compose_stepdef *v, size_t n)
{
	size_t	i;

	for (i = 0; v != NULL && i < n; i++) {
		free(v[i].id);
		free(v[i].task);
		free(v[i].profile);
		free(v[i].deps);
	}
	free(v);
}

static int
compose_plan_id_ok(const char *id)
{
	size_t	len = strlen(id);

	return len > 0 && len <= COMPOSE_ID_MAX &&
	    strspn(id, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
	    "0123456789_-.") == len;
}

/* A non-empty string field of at most max bytes, or NULL. */
static const char *
compose_str(json_t *o, const char *key, size_t max)
{
	json_t	*v = json_object_get(o, key);

	if (!json_is_string(v) || json_string_length(v) == 0 ||
	    json_string_length(v) > max ||
	    strlen(json_string_value(v)) != json_string_length(v))
		return NULL;
	return json_string_value(v);
}

static int
compose_find(const struct compose_stepdef *v, size_t n, const char *id)
{
	size_t	i;

	for (i = 0; i < n; i++)
		if (strcmp(v[i].id, id) == 0)
			return (int)i;
	return -1;
}

/* Step i's depends_on, once every id is known. */
static int
compose_plan_deps(struct compose_stepdef *v, size_t n, size_t i, json_t *o,
    char *err, size_t errsz)
{
	json_t		*deps = json_object_get(o, "depends_on"), *d;
	size_t		 j;
	int		 k;

	if (deps == NULL || json_is_null(deps))
		return 0;
	if (!json_is_array(deps) || json_array_size(deps) > n) {
		snprintf(err, errsz, "step \"%s\": depends_on must be an "
		    "array of step ids", v[i].id);
		return -1;
	}
	v[i].deps = xcalloc(json_array_size(deps) + 1, sizeof(*v[i].deps));
	json_array_foreach(deps, j, d) {
		if (!json_is_string(d) || (k = compose_find(v, n,
		    json_string_value(d))) == -1) {
			snprintf(err, errsz, "step \"%s\" depends on unknown "
			    "step \"%.32s\"", v[i].id, json_is_string(d) ?
			    json_string_value(d) : "(not a string)");
			return -1;
		}
		if ((size_t)k == i) {
			snprintf(err, errsz, "step \"%s\" depends on itself",
			    v[i].id);
			return -1;
		}
		v[i].deps[v[i].ndeps++] = (size_t)k;
	}
	return 0;
}

/* Kahn's algorithm: -1 and the steps left on or after a cycle. */
static int
compose_plan_acyclic(const struct compose_stepdef *v, size_t n, char *err,
    size_t errsz)
{
	int	done[COMPOSE_MAX_STEPS] = { 0 };
	size_t	i, j, left = n, len;
	int	progress = 1, ready;

	while (left > 0 && progress) {
		progress = 0;
		for (i = 0; i < n; i++) {
			if (done[i])
				continue;
			for (j = 0, ready = 1; j < v[i].ndeps; j++)
				ready &= done[v[i].deps[j]];
			if (ready) {
				done[i] = progress = 1;
				left--;
			}
		}
	}
	if (left == 0)
		return 0;
	len = (size_t)snprintf(err, errsz, "the steps' depends_on form a "
	    "cycle through");
	for (i = 0; i < n && len < errsz; i++)
		if (!done[i])
			len += (size_t)snprintf(err + len, errsz - len, " %s",
			    v[i].id);
	return -1;
}

static int
compose_plan_steps(json_t *arr, struct compose_stepdef **out, size_t *np,
    char *err, size_t errsz)
{
	struct compose_stepdef	*v;
	json_t			*o;
	const char		*id, *task, *profile;
	size_t			 i, n = json_array_size(arr);

	if (n == 0 || n > COMPOSE_MAX_STEPS) {
		snprintf(err, errsz, "a plan has 1 to %d steps, not %zu",
		    COMPOSE_MAX_STEPS, n);
		return -1;
	}
	v = xcalloc(n, sizeof(*v));
	json_array_foreach(arr, i, o) {
		if (!json_is_object(o) ||
		    (id = compose_str(o, "id", COMPOSE_ID_MAX)) == NULL ||
		    !compose_plan_id_ok(id) ||
		    (task = compose_str(o, "task", COMPOSE_TASK_MAX)) == NULL) {
			snprintf(err, errsz, "step %zu needs an \"id\" (1-%d of "
			    "A-Z a-z 0-9 _ - .) and a \"task\" (a string)",
			    i + 1, COMPOSE_ID_MAX);
			goto fail;
		}
		if (compose_find(v, i, id) != -1) {
			snprintf(err, errsz, "two steps have the id \"%s\"", id);
			goto fail;
		}
		profile = compose_str(o, "profile", 64);
		v[i].id = xstrdup(id);
		v[i].task = xstrdup(task);
		v[i].profile = xstrdup(profile ? profile : "general");
	}
	json_array_foreach(arr, i, o)
		if (compose_plan_deps(v, n, i, o, err, errsz) == -1)
			goto fail;
	if (compose_plan_acyclic(v, n, err, errsz) == -1)
		goto fail;
	*out = v;
	*np = n;
	return 0;
fail:
	compose_plan_free(v, n);
	return -1;
}

int
compose_plan_parse(const char *text, struct compose_stepdef **out,
    size_t *n, char *err, size_t errsz)
{
	const char	*open, *close;
	json_t		*root, *steps;
	char		*json;
	int		 rc;

	*out = NULL;
	*n = 0;
	/* The JSON may sit in prose or a code fence: from the first bracket
	 * to the last of its kind. */
	open = text != NULL ? strpbrk(text, "{[") : NULL;
	close = open != NULL ? strrchr(text, *open == '{' ? '}' : ']') : NULL;
	if (open == NULL || close == NULL || close < open ||
	    strlen(text) > COMPOSE_PLAN_TEXT_MAX) {
		snprintf(err, errsz, "the plan agent's result holds no JSON "
		    "plan");
		return -1;
	}
	json = str_ndup(open, (size_t)(close - open) + 1);
	root = json_loads(json, JSON_REJECT_DUPLICATES, NULL);
	free(json);
	steps = json_is_array(root) ? root : json_object_get(root, "steps");
	if (!json_is_array(steps)) {
		json_decref(root);
		snprintf(err, errsz, "the plan is not JSON with a \"steps\" "
		    "array");
		return -1;
	}
	rc = compose_plan_steps(steps, out, n, err, errsz);
	json_decref(root);
	return rc;
}

/* parallel_explore's aspects: "1", "2" ... each an explore step. */
static int
compose_plan_aspects(json_t *arr, struct compose_stepdef **out, size_t *np,
    char *err, size_t errsz)
{
	struct compose_stepdef	*v;
	json_t			*a;
	size_t			 i, n = json_array_size(arr);

	if (n == 0 || n > COMPOSE_MAX_STEPS) {
		snprintf(err, errsz, "parallel_explore takes 1 to %d aspects, "
		    "not %zu", COMPOSE_MAX_STEPS, n);
		return -1;
	}
	v = xcalloc(n, sizeof(*v));
	json_array_foreach(arr, i, a) {
		if (!json_is_string(a) || json_string_length(a) == 0 ||
		    json_string_length(a) > COMPOSE_TASK_MAX) {
			compose_plan_free(v, n);
			snprintf(err, errsz, "parallel_explore: aspect %zu must "
			    "be a non-empty string", i + 1);
			return -1;
		}
		xasprintf(&v[i].id, "%zu", i + 1);
		v[i].task = xstrdup(json_string_value(a));
		v[i].profile = xstrdup("explore");
	}
	*out = v;
	*np = n;
	return 0;
}

/* sequential_delegate's steps: {task, profile}, in order. */
static int
compose_plan_seq(json_t *arr, struct compose_stepdef **out, size_t *np,
    char *err, size_t errsz)
{
	struct compose_stepdef	*v;
	json_t			*o;
	const char		*task, *profile;
	size_t			 i, n = json_array_size(arr);

	if (n == 0 || n > COMPOSE_MAX_STEPS) {
		snprintf(err, errsz, "sequential_delegate takes 1 to %d steps, "
		    "not %zu", COMPOSE_MAX_STEPS, n);
		return -1;
	}
	v = xcalloc(n, sizeof(*v));
	json_array_foreach(arr, i, o) {
		if ((task = compose_str(o, "task", COMPOSE_TASK_MAX)) == NULL) {
			compose_plan_free(v, n);
			snprintf(err, errsz, "sequential_delegate: step %zu "
			    "needs a non-empty \"task\"", i + 1);
			return -1;
		}
		profile = compose_str(o, "profile", 64);
		xasprintf(&v[i].id, "%zu", i + 1);
		v[i].task = xstrdup(task);
		v[i].profile = xstrdup(profile ? profile : "general");
	}
	*out = v;
	*np = n;
	return 0;
}

int
compose_plan_args(enum compose_kind k, const char *args, char **task,
    struct compose_stepdef **out, size_t *n, char *err, size_t errsz)
{
	json_t		*root;
	const char	*t;
	int		 rc = 0;

	*task = NULL;
	*out = NULL;
	*n = 0;
	if ((root = json_loads(args ? args : "", 0, NULL)) == NULL)
		return snprintf(err, errsz, "arguments are not JSON"), -1;
	t = compose_str(root, "task", COMPOSE_TASK_MAX);
	if (k != COMPOSE_SEQUENTIAL && t == NULL) {
		snprintf(err, errsz, "%s needs a non-empty \"task\"",
		    compose_name(k));
		rc = -1;
	} else if (k == COMPOSE_PARALLEL_EXPLORE)
		rc = compose_plan_aspects(json_object_get(root, "aspects"),
		    out, n, err, errsz);
	else if (k == COMPOSE_SEQUENTIAL)
		rc = compose_plan_seq(json_object_get(root, "steps"), out, n,
		    err, errsz);
	if (rc == 0)
		*task = xstrdup(t != NULL ? t : (*n > 0 ? (*out)[0].task :
		    ""));
	json_decref(root);
	return rc;
}

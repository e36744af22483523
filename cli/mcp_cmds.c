/*
 * The tools that are another warren command, run as a child warren (see
 * mcp_child.c): diff, apply, runs, show, queue_add, queue_status. Each
 * checks where it would act (a run's or a workspace's directory under a
 * root) before the child starts; values go after "--" or on stdin, never
 * where they could be read as options.
 */
#include <sys/types.h>
#include <sys/wait.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cmd.h"
#include "cli/layer.h"
#include "cli/mcp.h"
#include "common/str.h"
#include "store/store.h"
#include "workspace/cow.h"

static int
mcp_cmd_start(struct mcp_server *s, struct mcp_call *c, char *const argv[],
    const char *input)
{
	char	err[1024];

	if (mcp_child_start(&c->ch, s->exe, argv, input, err,
	    sizeof(err)) == -1) {
		mcp_tool_error(s, c, "%s", err);
		return -1;
	}
	return 0;
}

/* The call's run id as text, if the run ran under a root. */
static int
mcp_cmd_run(struct mcp_server *s, struct mcp_call *c, json_t *args,
    char *id, size_t idsz)
{
	json_int_t	run = json_integer_value(json_object_get(args, "run"));
	char		why[2048];

	if (mcp_roots_run(s, run, c->ws, sizeof(c->ws), why,
	    sizeof(why)) == -1) {
		mcp_tool_error(s, c, "%s", why);
		return -1;
	}
	snprintf(id, idsz, "%lld", (long long)run);
	return 0;
}

int
mcp_cmd_diff(struct mcp_server *s, struct mcp_call *c, json_t *args)
{
	char	 id[32];
	char	*argv[] = { "warren", "diff", "--color=never", "--", id, NULL };

	if (mcp_cmd_run(s, c, args, id, sizeof(id)) == -1)
		return -1;
	return mcp_cmd_start(s, c, argv, NULL);
}

/*
 * Is a change that apply holds back (it runs code on the host, or the
 * diff cannot show it) named exactly by one of paths? `warren apply RUN
 * PATH` releases such a path as --include would: the user's choice, never
 * a client's (the tool says they are held back for the user). 1 with why
 * (or the layer cannot be read here: refused), 0 none.
 */
static int
mcp_cmd_apply_held(int64_t run, char *const *paths, size_t n, char *why,
    size_t whysz)
{
	struct store		*st;
	struct store_run	 r;
	struct cow_changes	 ch = { 0 };
	struct cow		 cw;
	unsigned char		*sel = NULL;
	const char		*what;
	char			 db[PATH_MAX], err[1024], *e;
	size_t			 i;
	int			 held = 1, got = 0;

	snprintf(why, whysz, "run %lld: its layer cannot be read", (long long)
	    run);
	if (store_path(db, sizeof(db), NULL) == -1 ||
	    (st = store_open(db, STORE_READ, err, sizeof(err))) == NULL)
		return 1;
	if ((got = store_run_get(st, run, &r) == 0) && r.cow_mode == NULL)
		held = 0;	/* no layer: apply says so itself */
	else if (got && layer_open(&r, &cw, err, sizeof(err)) == 0 &&
	    cow_changes(&cw, &ch, err, sizeof(err)) == 0 &&
	    cow_review(&cw, &ch, err, sizeof(err)) == 0 &&
	    (sel = calloc(ch.n + 1, 1)) != NULL)
		held = 0;
	/* A path that selects nothing: apply refuses it itself, saying so. */
	if (!held && sel != NULL && layer_paths_select(cw.workspace, &ch,
	    paths, n, sel, err, sizeof(err)) == -1)
		memset(sel, 0, ch.n);
	for (i = 0; !held && i < ch.n; i++) {
		if (!(sel[i] & LAYER_NAMED) || (ch.v[i].sensitive == NULL &&
		    ch.v[i].unreviewed == NULL))
			continue;
		held = 1;
		what = ch.v[i].sensitive != NULL ? "runs code on the host" :
		    "the diff cannot show it";
		e = str_escape_dup(ch.v[i].path, strlen(ch.v[i].path), 0);
		snprintf(why, whysz, "%s: %s (%s): apply holds it back for the "
		    "user, even when named. Ask the user to review it and apply "
		    "it with `warren apply --include PATH %lld`; name the other "
		    "paths without it.", e ? e : "?", what, ch.v[i].sensitive ?
		    ch.v[i].sensitive : ch.v[i].unreviewed, (long long)run);
		free(e);
	}
	free(sel);
	cow_changes_free(&ch);
	if (got)
		store_run_free(&r);
	store_close(st);
	return held;
}

int
mcp_cmd_apply(struct mcp_server *s, struct mcp_call *c, json_t *args)
{
	json_t	*paths = json_object_get(args, "paths"), *p;
	char	 id[32], *argv[CMD_INCLUDE_MAX + 6], why[2048];
	size_t	 i, n = 0;

	if (!s->allow_apply) {
		mcp_tool_error(s, c, "apply is not allowed: this server was "
		    "started without --allow-apply. Ask the user to review the "
		    "run with `warren diff %lld` and apply it with `warren "
		    "apply %lld`, or to start the server as `warren mcp "
		    "--allow-apply`.", (long long)json_integer_value(
		    json_object_get(args, "run")), (long long)
		    json_integer_value(json_object_get(args, "run")));
		return -1;
	}
	if (mcp_cmd_run(s, c, args, id, sizeof(id)) == -1)
		return -1;
	argv[n++] = "warren";
	argv[n++] = "apply";
	argv[n++] = "--";
	argv[n++] = id;
	json_array_foreach(paths, i, p)
		argv[n++] = (char *)(uintptr_t)json_string_value(p);
	argv[n] = NULL;
	if (n > 4 && mcp_cmd_apply_held(json_integer_value(json_object_get(
	    args, "run")), argv + 4, n - 4, why, sizeof(why))) {
		mcp_tool_error(s, c, "%s", why);
		return -1;
	}
	return mcp_cmd_start(s, c, argv, NULL);
}

int
mcp_cmd_runs(struct mcp_server *s, struct mcp_call *c, json_t *args)
{
	json_t	*lim = json_object_get(args, "limit");
	char	 why[2048], limit[32];
	char	*argv[] = { "warren", "runs", "--json", "--workspace", c->ws,
		    lim ? "--limit" : NULL, limit, NULL };

	if (mcp_roots_workspace(s, json_string_value(json_object_get(args,
	    "workspace")), c->ws, sizeof(c->ws), why, sizeof(why)) == -1) {
		mcp_tool_error(s, c, "%s", why);
		return -1;
	}
	snprintf(limit, sizeof(limit), "%lld", (long long)
	    json_integer_value(lim));
	return mcp_cmd_start(s, c, argv, NULL);
}

int
mcp_cmd_show(struct mcp_server *s, struct mcp_call *c, json_t *args)
{
	char	 id[32];
	char	*argv[] = { "warren", "show", "--json", "--", id, NULL };

	if (mcp_cmd_run(s, c, args, id, sizeof(id)) == -1)
		return -1;
	return mcp_cmd_start(s, c, argv, NULL);
}

/* The job as one line of `warren queue add --jsonl -`: every value a
 * JSON field, none an argument. */
int
mcp_cmd_queue_add(struct mcp_server *s, struct mcp_call *c, json_t *args)
{
	char	 why[2048], *line;
	char	*argv[] = { "warren", "queue", "add", "--json", "--jsonl", "-",
		    NULL };
	json_t	*job;
	int	 rc;

	if (mcp_roots_workspace(s, json_string_value(json_object_get(args,
	    "workspace")), c->ws, sizeof(c->ws), why, sizeof(why)) == -1) {
		mcp_tool_error(s, c, "%s", why);
		return -1;
	}
	if ((job = json_deep_copy(args)) == NULL ||
	    json_object_set_new(job, "workspace", json_string(c->ws)) == -1 ||
	    (line = json_dumps(job, JSON_COMPACT)) == NULL) {
		json_decref(job);
		mcp_tool_error(s, c, "out of memory");
		return -1;
	}
	json_decref(job);
	rc = mcp_cmd_start(s, c, argv, line);
	free(line);
	return rc;
}

int
mcp_cmd_queue_status(struct mcp_server *s, struct mcp_call *c,
    json_t *args)
{
	json_t	*job = json_object_get(args, "job");
	char	 id[32];
	char	*show[] = { "warren", "queue", "show", "--json", "--", id,
		    NULL };
	char	*stats[] = { "warren", "queue", "stats", "--json", NULL };

	snprintf(id, sizeof(id), "%lld", (long long)json_integer_value(job));
	return mcp_cmd_start(s, c, job != NULL ? show : stats, NULL);
}

void
mcp_cmd_done(struct mcp_server *s, struct mcp_call *c)
{
	struct mcp_child *ch = &c->ch;
	char		*text = NULL, how[64];
	size_t		 len = 0;
	FILE		*f;
	int		 failed;

	failed = !WIFEXITED(ch->status) || WEXITSTATUS(ch->status) != 0;
	if ((f = open_memstream(&text, &len)) == NULL) {
		mcp_tool_error(s, c, "out of memory");
		return;
	}
	if (failed) {
		mcp_child_how(ch, how, sizeof(how));
		fprintf(f, "warren %s failed (%s)%s", c->tool->name, how,
		    ch->elen > 0 ? ":\n" : "\n");
	}
	if (failed || strcmp(c->tool->name, "apply") == 0)
		fwrite(ch->ebuf, 1, ch->elen, f);
	if (ch->olen > 0)
		fwrite(ch->obuf, 1, ch->olen, f);
	if (ch->ocut)
		fprintf(f, "\n(cut at %u bytes: run the command in a terminal "
		    "for the rest)\n", MCP_OUT_MAX);
	fclose(f);
	mcp_tool_answer(s, c, text, len, failed, NULL);
	free(text);
}

/* A job's status, if the job's workspace is under a root. */
void
mcp_cmd_queue_status_done(struct mcp_server *s, struct mcp_call *c)
{
	json_t		*j;
	const char	*ws;

	if (c->ch.olen == 0 || !WIFEXITED(c->ch.status) ||
	    WEXITSTATUS(c->ch.status) != 0 ||
	    (j = json_loadb(c->ch.obuf, c->ch.olen, 0, NULL)) == NULL) {
		mcp_cmd_done(s, c);
		return;
	}
	ws = json_string_value(json_object_get(j, "workspace"));
	if (ws != NULL && !mcp_roots_under(s, ws))
		mcp_tool_error(s, c, "that job runs in %s, outside the "
		    "directories this server may use", ws);
	else
		mcp_cmd_done(s, c);
	json_decref(j);
}

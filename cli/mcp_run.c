/*
 * The run tool: an ordinary run, as a queue job's is (cli/queue_runner.c:
 * a child `warren run --json --workspace WS [--profile P] [--schema FILE]
 * -- -`, the task on its stdin, in a process group of its own), so it is
 * in `warren runs`, resumable and reviewable. Its events become progress
 * notifications; its end, the answer: the result, the run's id, how it
 * ended and the files its layer changed.
 */
#include <sys/types.h>
#include <sys/wait.h>

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cmd.h"
#include "cli/layer.h"
#include "cli/mcp.h"
#include "common/exitcode.h"
#include "common/jschema.h"
#include "common/str.h"
#include "store/store.h"
#include "workspace/cow.h"

#define MCP_RUN_FILES_MAX	200	/* files named in the answer */

int
mcp_run_start(struct mcp_server *s, struct mcp_call *c, json_t *args)
{
	const char	*task = json_string_value(json_object_get(args, "task"));
	const char	*ws = json_string_value(json_object_get(args,
			    "workspace"));
	const char	*prof = json_string_value(json_object_get(args,
			    "profile"));
	json_t		*schema = json_object_get(args, "schema");
	struct queue_job *j = &c->run.job;
	char		 why[2048];

	if (strlen(task) > CMD_RUN_TASK_MAX) {
		mcp_tool_error(s, c, "the task is %zu bytes, over the %d a run "
		    "takes", strlen(task), CMD_RUN_TASK_MAX);
		return -1;
	}
	if (schema != NULL && jschema_usable(schema, why, sizeof(why)) == -1) {
		mcp_tool_error(s, c, "\"schema\" is not a usable JSON Schema: "
		    "%s", why);
		return -1;
	}
	if (mcp_roots_workspace(s, ws, c->ws, sizeof(c->ws), why,
	    sizeof(why)) == -1) {
		mcp_tool_error(s, c, "%s", why);
		return -1;
	}
	c->is_run = 1;
	j->task = strdup(task);
	j->workspace = strdup(c->ws);
	j->profile = prof != NULL ? strdup(prof) : NULL;
	if (schema != NULL)
		j->schema = json_dumps(schema, JSON_COMPACT);
	if (j->task == NULL || j->workspace == NULL || (prof && !j->profile) ||
	    (schema != NULL && j->schema == NULL)) {
		mcp_tool_error(s, c, "out of memory");
		return -1;
	}
	if (schema != NULL && (c->schema = strdup(j->schema)) == NULL) {
		mcp_tool_error(s, c, "out of memory");
		return -1;
	}
	if (queue_runner_start(&c->run, s->exe, mcp_now(), why,
	    sizeof(why)) == -1) {
		mcp_tool_error(s, c, "the run could not start: %s", why);
		return -1;
	}
	fprintf(stderr, "warren mcp: run started (pid %d) in %s\n",
	    (int)c->run.pid, c->ws);
	return 0;
}

static void
mcp_run_notify(struct mcp_server *s, struct mcp_call *c, const char *msg)
{
	mcp_rpc_notify(s, "notifications/progress", json_pack("{s:O, s:I, "
	    "s:o}", "progressToken", c->token, "progress",
	    (json_int_t)++c->progress, "message", mcp_rpc_text(msg,
	    strlen(msg))));
}

void
mcp_run_progress(struct mcp_server *s, struct mcp_call *c)
{
	char	msg[QRUN_DOING_MAX + 64], *e;

	if (c->token == NULL || c->cancelled)
		return;
	if (c->progress == 0 && c->run.run_id > 0) {
		snprintf(msg, sizeof(msg), "run %lld started",
		    (long long)c->run.run_id);
		mcp_run_notify(s, c, msg);
	}
	if (!c->run.doing_new)
		return;
	c->run.doing_new = 0;
	/* What its agents do: text of the run's agents, escaped. */
	if ((e = str_escape_dup(c->run.doing, strlen(c->run.doing), 0)) ==
	    NULL)
		return;
	mcp_run_notify(s, c, e);
	free(e);
}

static const char *
mcp_run_kind(enum cow_kind k)
{
	switch (k) {
	case COW_ADDED:		return "added";
	case COW_MODIFIED:	return "modified";
	case COW_DELETED:	return "deleted";
	case COW_UNSUPPORTED:	return "unsupported";
	}
	return "changed";
}

/* The files the run's layer changed, a line each, into f. */
static void
mcp_run_files(int64_t run, FILE *f)
{
	struct store		*st;
	struct store_run	 r;
	struct cow_changes	 ch;
	struct cow		 cw;
	char			 path[PATH_MAX], err[1024], *e;
	size_t			 i;

	memset(&ch, 0, sizeof(ch));
	if (store_path(path, sizeof(path), NULL) == -1 ||
	    (st = store_open(path, STORE_READ, err, sizeof(err))) == NULL)
		return;
	memset(&r, 0, sizeof(r));
	if (store_run_get(st, run, &r) == -1) {
		store_close(st);
		return;
	}
	if (r.cow_mode == NULL)
		fprintf(f, "It wrote the workspace in place (no layer).\n");
	else if (layer_open(&r, &cw, err, sizeof(err)) == -1 ||
	    cow_changes(&cw, &ch, err, sizeof(err)) == -1)
		fprintf(f, "Its layer could not be read: %s\n", err);
	else if (ch.n == 0)
		fprintf(f, "Its layer changed no file.\n");
	else
		fprintf(f, "Its layer changed %zu file%s (the workspace is "
		    "untouched until applied; `diff` shows them, `apply` "
		    "writes them):\n", ch.n, ch.n == 1 ? "" : "s");
	for (i = 0; i < ch.n && i < MCP_RUN_FILES_MAX; i++) {
		e = str_escape_dup(ch.v[i].path, strlen(ch.v[i].path), 0);
		fprintf(f, "  %s %s%s%s\n", mcp_run_kind(ch.v[i].kind),
		    e ? e : "?", ch.v[i].sensitive ? " (runs code on the "
		    "host: apply holds it back)" : "", ch.v[i].unreviewed ?
		    " (the diff cannot show it: apply holds it back)" : "");
		free(e);
	}
	if (ch.n > MCP_RUN_FILES_MAX)
		fprintf(f, "  ... and %zu more\n", ch.n - MCP_RUN_FILES_MAX);
	cow_changes_free(&ch);
	store_run_free(&r);
	store_close(st);
}

/* How the run ended, in words; 1 if it is done. */
static int
mcp_run_status(const struct qrun *r, char *buf, size_t sz)
{
	int	code = WIFEXITED(r->status) ? WEXITSTATUS(r->status) : -1;

	if (code == WARREN_EXIT_OK && r->have_result && r->ok) {
		snprintf(buf, sz, "done");
		return 1;
	}
	if (WIFSIGNALED(r->status))
		snprintf(buf, sz, "failed: killed by signal %d",
		    WTERMSIG(r->status));
	else
		snprintf(buf, sz, "failed: exit %d%s%s", code,
		    r->errline[0] ? ": " : "", r->errline);
	return 0;
}

/* With a schema: the answer as structured content (an object; any other
 * JSON value as {"value": V}), or NULL. */
static json_t *
mcp_run_structured(const struct mcp_call *c)
{
	char	*out = NULL, err[1024];
	json_t	*v;

	if (c->schema == NULL || c->run.result == NULL ||
	    jschema_check_text(c->schema, c->run.result, &out, err,
	    sizeof(err)) != 0) {
		free(out);
		return NULL;
	}
	v = json_loads(out, JSON_DECODE_ANY, NULL);
	free(out);
	if (v != NULL && !json_is_object(v))
		v = json_pack("{s:o}", "value", v);
	return v;
}

void
mcp_run_done(struct mcp_server *s, struct mcp_call *c)
{
	struct qrun	*r = &c->run;
	char		 status[QRUN_ERRLINE_MAX + 64], *text = NULL;
	size_t		 len = 0;
	FILE		*f;
	int		 ok;

	ok = mcp_run_status(r, status, sizeof(status));
	fprintf(stderr, "warren mcp: run %lld in %s: %s\n",
	    (long long)r->run_id, c->ws, status);
	if ((f = open_memstream(&text, &len)) == NULL) {
		mcp_tool_error(s, c, "out of memory");
		return;
	}
	fprintf(f, "%s\n\n", r->result != NULL && *r->result ? r->result :
	    "(no answer)");
	if (r->run_id > 0)
		fprintf(f, "Run %lld: %s.\n", (long long)r->run_id, status);
	else
		fprintf(f, "The run did not start: %s.\n", status);
	if (r->run_id > 0)
		mcp_run_files(r->run_id, f);
	fclose(f);
	mcp_tool_answer(s, c, text, len, !ok, ok ? mcp_run_structured(c) :
	    NULL);
	free(text);
}

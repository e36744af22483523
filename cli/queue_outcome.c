/*
 * What a queue job's attempt produced, from its reaped `warren run`: the
 * answer (checked against the job's schema), the run's id and tokens (its
 * row in the runs database), the wall time, the layer's diff stat and
 * change set (what any machine applies: cmd_queue_apply.c); or
 * why it failed: the exit code and its meaning, the run's reason, its last
 * error line. docs/queue.md, "Working the queue".
 */
#include <sys/types.h>
#include <sys/wait.h>

#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cmd_queue.h"
#include "cli/layer.h"
#include "cli/queue_work.h"
#include "common/exitcode.h"
#include "common/jschema.h"
#include "store/store.h"
#include "workspace/cow.h"

#define QOUT_ERR_MAX	4096

static const char *
queue_outcome_meaning(int code)
{
	switch (code) {
	case WARREN_EXIT_OK:		return "the task completed";
	case WARREN_EXIT_FAIL:		return "the task ran and failed";
	case WARREN_EXIT_USAGE:		return "bad command line";
	case WARREN_EXIT_CONFIG:	return "bad configuration, profile or "
					    "key file";
	case WARREN_EXIT_LLM:		return "the LLM endpoint failed after "
					    "retries";
	case WARREN_EXIT_SANDBOX:	return "a required sandbox layer is "
					    "unavailable";
	case WARREN_EXIT_STORE:		return "the database could not be used";
	case WARREN_EXIT_INTERNAL:	return "an internal error";
	case WARREN_EXIT_INTERRUPTED:	return "interrupted";
	case 127:			return "warren could not be started";
	default:			return "unknown exit code";
	}
}

static void
queue_outcome_exit(char *buf, size_t sz, int status)
{
	if (WIFSIGNALED(status))
		snprintf(buf, sz, "killed by signal %d (%s)", WTERMSIG(status),
		    strsignal(WTERMSIG(status)));
	else
		snprintf(buf, sz, "exit %d (%s)", WEXITSTATUS(status),
		    queue_outcome_meaning(WEXITSTATUS(status)));
}

/* A retry cannot help: the job's command line, config or sandbox. */
static int
queue_outcome_final(int status)
{
	return WIFEXITED(status) && (WEXITSTATUS(status) == WARREN_EXIT_USAGE ||
	    WEXITSTATUS(status) == WARREN_EXIT_CONFIG ||
	    WEXITSTATUS(status) == WARREN_EXIT_SANDBOX);
}

/* The layer's diff stat, through a memory stream, and (a done job) its
 * change set, which any machine can apply (cmd_queue_apply.c). */
static void
queue_outcome_layer(struct qoutcome *o, const struct store_run *run)
{
	struct cow_changes	 ch;
	struct cow		 cw;
	char			 err[1024];
	size_t			 len;
	FILE			*f;

	memset(&ch, 0, sizeof(ch));
	if (layer_open(run, &cw, err, sizeof(err)) == -1 ||
	    cow_changes(&cw, &ch, err, sizeof(err)) == -1)
		return;
	if (ch.n > 0 && (f = open_memstream(&o->diff, &len)) != NULL) {
		if (cow_diff(&cw, &ch, f, COW_DIFF_STAT, err, sizeof(err)) ==
		    -1)
			fprintf(f, "(no diff stat: %s)", err);
		fclose(f);
	}
	if (ch.n > 0 && o->ok && cow_pack(&cw, &ch, COW_PACK_MAX, &o->changes,
	    &o->res.changes_len, err, sizeof(err)) != 0)
		o->changes_note = strdup(err);
	cow_changes_free(&ch);
}

/* Tokens, the diff stat and the change set from the run's row (best
 * effort: a run that could not be read still has its answer). */
static void
queue_outcome_store(struct qoutcome *o, const struct qrun *r)
{
	struct store_run	 run;
	struct store		*st;
	char			 path[PATH_MAX], err[1024];

	if (r->run_id <= 0 || store_path(path, sizeof(path), NULL) == -1)
		return;
	queue_where(o->where, sizeof(o->where), path);
	o->res.run_where = o->where;
	if ((st = store_open(path, STORE_READ, err, sizeof(err))) == NULL)
		return;
	memset(&run, 0, sizeof(run));
	if (store_run_get(st, r->run_id, &run) == 0) {
		o->res.tokens_in = run.usage.input;
		o->res.tokens_out = run.usage.output;
		if (r->files > 0 && run.cow_mode != NULL)
			queue_outcome_layer(o, &run);
		store_run_free(&run);
	}
	store_close(st);
}

/* The failure's text: how it ended, the run's reason, its last line. */
static void
queue_outcome_failed(struct qoutcome *o, const struct qrun *r,
    const char *why)
{
	char	how[128], *e;
	size_t	n = QOUT_ERR_MAX;

	if ((e = malloc(n)) == NULL)
		return;
	queue_outcome_exit(how, sizeof(how), r->status);
	snprintf(e, n, "%s%s%s%s%s%s%s", why ? why : "warren run ", why ? "" :
	    how, r->have_result && r->result && *r->result ? ": " : "",
	    r->have_result && r->result ? r->result : "",
	    r->errline[0] ? " (last error line: " : "", r->errline,
	    r->errline[0] ? ")" : "");
	o->error = e;
	o->ok = 0;
}

/* A result that claims success: the schema, if the job has one. */
static void
queue_outcome_done(struct qoutcome *o, const struct qrun *r)
{
	char	err[QOUT_ERR_MAX], buf[QOUT_ERR_MAX + 64];
	int	rc;

	o->answer = r->result ? strdup(r->result) : NULL;
	o->ok = 1;
	if (r->job.schema == NULL || *r->job.schema == '\0')
		return;
	rc = jschema_check_text(r->job.schema, r->result, &o->output, err,
	    sizeof(err));
	if (rc == 0)
		return;
	snprintf(buf, sizeof(buf), "the answer does not match the job's "
	    "schema: %s", err);
	o->error = strdup(buf);
	o->ok = 0;
	/* A schema that is not usable fails every attempt alike. */
	if (rc == -1)
		o->flags |= QUEUE_FAIL_FINAL;
}

void
queue_outcome_make(struct qoutcome *o, struct qrun *r, uint64_t now)
{
	memset(o, 0, sizeof(*o));
	switch (r->stop) {
	case QRUN_CANCEL:
		queue_outcome_failed(o, r, "cancelled while it ran");
		o->flags |= QUEUE_FAIL_CANCELLED;
		break;
	case QRUN_INTERRUPT:
		queue_outcome_failed(o, r, "interrupted: `warren queue work` "
		    "was stopped");
		break;
	case QRUN_TIMEOUT:
		queue_outcome_failed(o, r, "timed out (the job's --timeout)");
		break;
	case QRUN_LOST:
	case QRUN_NOT_STOPPED:
		if (WIFEXITED(r->status) && WEXITSTATUS(r->status) == 0 &&
		    r->have_result && r->ok)
			queue_outcome_done(o, r);
		else if (WIFEXITED(r->status) && WEXITSTATUS(r->status) == 0)
			queue_outcome_failed(o, r, "warren run ended without "
			    "a result");
		else {
			queue_outcome_failed(o, r, NULL);
			if (queue_outcome_final(r->status))
				o->flags |= QUEUE_FAIL_FINAL;
		}
		break;
	}
	queue_outcome_store(o, r);
	o->res.answer = o->answer;
	o->res.output = o->output;
	o->res.error = o->error ? o->error : (o->ok ? NULL : "failed");
	o->res.run_id = r->run_id;
	o->res.wall_ms = (int64_t)(now - r->started);
	o->res.diff_stat = o->diff;
	o->res.changes = o->changes;
}

void
queue_outcome_free(struct qoutcome *o)
{
	free(o->answer);
	free(o->output);
	free(o->error);
	free(o->diff);
	free(o->changes);
	free(o->changes_note);
	memset(o, 0, sizeof(*o));
}

/*
 * What a run writes to its database as it goes: each agent, event,
 * message and end, the run's own end, and what it says when a write is
 * lost (the run stops: exit 6).
 */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "agent/profile.h"
#include "common/exitcode.h"
#include "common/log.h"
#include "store/store.h"
#include "supervisor/run.h"

#define RUN_EVENT_MAX		4096	/* chars of an event's detail stored */

void
run_store_agent(struct run *r, struct node *n, const char *call_id,
    const int64_t *mem_parents, size_t nmem_parents)
{
	struct store_agent_new	a;
	char			filter[PROFILE_MAX_TOOLS * 16];
	size_t			i, len;

	if (r->store == NULL)
		return;
	memset(&a, 0, sizeof(a));
	/* Kept so a resumed agent gets its narrower sandbox again. */
	if (n->narrowed != NULL) {
		filter[0] = '\0';
		for (i = 0; i < n->narrowed->ntools; i++) {
			len = strlen(filter);
			snprintf(filter + len, sizeof(filter) - len, "%s%s",
			    i ? "," : "", n->narrowed->tools[i]);
		}
		a.tool_filter = filter;
	}
	a.path = n->path;
	a.profile = n->profile->name;
	a.task = n->task;
	a.call_id = call_id;
	a.inherit_context = n->inherit;
	a.parent_nodes = mem_parents;
	a.nparent_nodes = nmem_parents;
	if (store_agent_add(r->store, r->run_id, &a, &n->store_agent,
	    &n->store_node) == -1) {
		run_store_warn(r, "agent %s", n->path);
		return;
	}
	/* Delegated after a parallel batch with inherit_context: the batch's
	 * merge node is an ancestor too, so its memory is in the context. */
	if (n->inherit && n->parent != NULL && n->parent->merge_node > 0 &&
	    nmem_parents == 0 && store_edge_add(r->store,
	    n->parent->merge_node, n->store_node) == -1)
		run_store_warn(r, "edge to %s", n->path);
}

void
run_record_event(struct run *r, const struct node *n, const char *kind,
    const char *tool, const char *text)
{
	char	detail[RUN_EVENT_MAX];

	if (r->store == NULL)
		return;
	snprintf(detail, sizeof(detail), "%s%s%s", tool ? tool : "",
	    tool ? ": " : "", text ? text : "");
	if (store_event(r->store, r->run_id, n ? n->path : NULL, kind,
	    detail) == -1)
		run_store_warn(r, "event");
}

void
run_store_warn(struct run *r, const char *fmt, ...)
{
	char	what[256];
	va_list	ap;

	if (store_lost(r->store) != NULL)
		return;		/* run_store_check says it, once */
	va_start(ap, fmt);
	vsnprintf(what, sizeof(what), fmt, ap);
	va_end(ap);
	log_warnx("store: %s%s%s", what, *what ? ": " : "",
	    store_errmsg(r->store));
}

/*
 * A write was lost: nothing the run does from now on can be recorded, and
 * what it did since the last commit is gone. Stop it (exit 6) rather than
 * spend tokens on work that `warren resume` would redo anyway.
 */
void
run_store_check(struct run *r)
{
	const char	*lost;

	if (r->store == NULL || r->store_failed ||
	    (lost = store_lost(r->store)) == NULL)
		return;
	r->store_failed = 1;
	log_warnx("store: %s", lost);
	log_warnx("run %lld: stopping every agent: the database cannot be"
	    " written", (long long)r->run_id);
	if (!r->finished)
		run_cancel(r, 0);
}

size_t
run_event_bytes(const char *kind, const char *tool, const char *text)
{
	size_t	n;

	n = (tool ? strlen(tool) + 2 : 0) + (text ? strlen(text) : 0);
	if (n > RUN_EVENT_MAX - 1)
		n = RUN_EVENT_MAX - 1;	/* the rest is cut (run_record_event) */
	return strlen(kind) + n;
}

void
run_store_msg(struct run *r, struct node *n, const struct msg *m)
{
	const struct msg_usage	*u = NULL;

	if (r->store == NULL || n->store_node <= 0)
		return;
	if (m->role == MSG_ASSISTANT && (n->usage_unsaved.input > 0 ||
	    n->usage_unsaved.output > 0))
		u = &n->usage_unsaved;
	if (store_msg_append(r->store, n->store_node, m, u) == -1)
		run_store_warn(r, "run %lld", (long long)r->run_id);
	else if (u != NULL)
		memset(&n->usage_unsaved, 0, sizeof(n->usage_unsaved));
}

void
run_store_done(struct run *r, struct node *n)
{
	enum store_agent_status	 st;
	const char		*text;

	if (r->store == NULL || n->store_agent <= 0)
		return;
	st = run_end_ok(n->end) ? STORE_AGENT_DONE : n->end ==
	    NODE_END_CANCELLED ? STORE_AGENT_CANCELLED : STORE_AGENT_FAILED;
	text = run_end_ok(n->end) ? n->result : n->error;
	if (n->end == NODE_END_AUTO_COMPLETE)
		run_record_event(r, n, "auto_complete", NULL, n->error);
	if (store_agent_set_status(r->store, n->store_agent, st, text,
	    run_end_name(n->end)) == -1)
		run_store_warn(r, "run %lld", (long long)r->run_id);
	/* Committed with its summary by run_summary_start, which follows. */
}

/* What was lost and what to do, on stderr: the run's last words. */
static void
run_store_report(struct run *r, int status_written)
{
	const char	*lost = store_lost(r->store);

	fprintf(stderr, "warren: run %lld: the database could not be "
	    "written: %s\n", (long long)r->run_id, lost ? lost :
	    store_errmsg(r->store));
	fprintf(stderr, "warren: run %lld stopped. The database keeps "
	    "everything committed before the failure; the rows above were not "
	    "written%s. Fix the cause, then `warren resume %lld` redoes only "
	    "what is not in the database.\n", (long long)r->run_id,
	    status_written ? " (its status is store_failed)" :
	    "; its status could not be written either (it shows as "
	    "interrupted)", (long long)r->run_id);
}

/* The run's status, and the exit code: 6 whenever a write was lost,
 * whatever the agents did. */
int
run_store_end(struct run *r, int code)
{
	int	ok;

	if (r->store == NULL)
		return code;
	if (!r->store_failed) {
		if (store_run_finish(r->store, r->run_id, code == 0 ?
		    STORE_RUN_DONE : code == WARREN_EXIT_INTERRUPTED ?
		    STORE_RUN_CANCELLED : STORE_RUN_FAILED,
		    code == 0 ? r->root->result : r->root->error) == 0 &&
		    store_lost(r->store) == NULL)
			return code;
		if (store_lost(r->store) == NULL) {
			/* A refused status (the run's row is gone). */
			run_store_warn(r, "run %lld", (long long)r->run_id);
			return code;
		}
		r->store_failed = 1;
	}
	ok = store_run_finish(r->store, r->run_id, STORE_RUN_STORE_FAILED,
	    store_lost(r->store)) == 0;
	run_store_report(r, ok);
	return WARREN_EXIT_STORE;
}

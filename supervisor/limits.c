/*
 * Every limit of a run in one place: the defaults and the checks. A request
 * beyond a limit is refused with a message the requesting model can read
 * and act on, never with a crash.
 */
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "agent/profile.h"
#include "store/store.h"
#include "supervisor/run.h"

void
limits_default(struct run_limits *l)
{
	memset(l, 0, sizeof(*l));
	l->max_depth = LIMITS_DEFAULT_MAX_DEPTH;
	l->max_agents = LIMITS_DEFAULT_MAX_AGENTS;
	l->jobs = LIMITS_DEFAULT_JOBS;
	l->hello_ms = LIMITS_DEFAULT_HELLO_MS;
	l->agent_timeout_ms = LIMITS_DEFAULT_TIMEOUT_MS;
	l->grace_ms = LIMITS_DEFAULT_GRACE_MS;
	l->max_iterations = LIMITS_DEFAULT_ITERATIONS;
	l->max_output_bytes = LIMITS_DEFAULT_OUTPUT;
	l->summary_result_max = STORE_SUMMARY_RESULT_MAX;
	l->summary_transcript_max = STORE_SUMMARY_TRANSCRIPT_MAX;
	l->store_rows = LIMITS_DEFAULT_STORE_ROWS;
	l->store_bytes = LIMITS_DEFAULT_STORE_BYTES;
	l->mem_bytes = LIMITS_DEFAULT_MEM_BYTES;
	l->disk_max = LIMITS_DEFAULT_DISK_MAX;
}

const char *
limits_check_delegate(const struct run *r, const struct node *parent,
    char *msg, size_t msgsz)
{
	const struct run_limits	*l = &r->opts.limits;

	if (r->cancelling) {
		snprintf(msg, msgsz, "the run is being cancelled: "
		    "no new subagents; stop now");
		return IPC_ERR_CANCELLED;
	}
	if (!parent->profile->delegate) {
		snprintf(msg, msgsz, "profile %s may not delegate: "
		    "do the work yourself", parent->profile->name);
		return IPC_ERR_REFUSED;
	}
	if (parent->depth + 1 > l->max_depth) {
		snprintf(msg, msgsz, "max depth %u reached: "
		    "finish the work yourself", l->max_depth);
		return IPC_ERR_MAX_DEPTH;
	}
	if (r->nagents >= l->max_agents) {
		snprintf(msg, msgsz, "max agents %u reached: "
		    "finish the work yourself", l->max_agents);
		return IPC_ERR_MAX_AGENTS;
	}
	return NULL;
}

int
limits_slot_free(const struct run *r)
{
	return r->nactive < r->opts.limits.jobs;
}

int
limits_budget_left(const struct run *r, char *msg, size_t msgsz)
{
	uint64_t	budget = r->opts.limits.token_budget;

	if (budget == 0 || r->tokens < budget)
		return 1;
	snprintf(msg, msgsz, "token budget of %llu tokens for this run is "
	    "spent (%llu used): finish now with what you have",
	    (unsigned long long)budget, (unsigned long long)r->tokens);
	return 0;
}

int
limits_store_quota(const struct run *r, uint64_t *rows, uint64_t *bytes,
    uint64_t addrows, uint64_t addbytes, char *msg, size_t msgsz)
{
	const struct run_limits	*l = &r->opts.limits;

	if (addrows > l->store_rows - *rows) {
		snprintf(msg, msgsz, "asked the store to keep more than %llu "
		    "rows of events and messages (agent_store_rows; raise it "
		    "if a real agent needs more)",
		    (unsigned long long)l->store_rows);
		return -1;
	}
	if (addbytes > l->store_bytes - *bytes) {
		snprintf(msg, msgsz, "asked the store to keep more than %llu "
		    "bytes of events and messages (agent_store_bytes; raise it "
		    "if a real agent needs more)",
		    (unsigned long long)l->store_bytes);
		return -1;
	}
	*rows += addrows;
	*bytes += addbytes;
	return 0;
}

/*
 * bench_agent: the agent loop's own cost per step against an instant
 * scripted model and instant tools. A step = agent_next (LLM turn) +
 * agent_feed_llm (one read call, validated) + agent_next (NEED_TOOLS) +
 * agent_feed_results. The context is held at about 50 messages by the
 * hierarchical strategy (24 exchanges kept), as in a long-running subagent.
 *
 *	bench_agent [STEPS] [RUNS]	(default 20000 5)
 *
 * Prints the median ns per step and steps per second. Target: <= 20 us.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "agent/agent.h"
#include "agent/agent_testapi.h"
#include "agent/profile.h"
#include "common/clock.h"
#include "common/msg.h"

#define NREPLIES	256

static int
cmp_u64(const void *a, const void *b)
{
	uint64_t	x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

static uint64_t
bench_run(const struct msg_reply *replies, long steps, size_t *ctxn)
{
	struct agent_context_cfg c = { .strategy = AGENT_CTX_HIERARCHICAL,
				    .keep_exchanges = 24 };
	struct agent_limits	 lim = { .max_iterations = 1u << 30 };
	struct agent_config	 cfg;
	struct agent_action	 act;
	struct agent_result	 res = { "     1\tint main(void) { return 0; }\n"
				    "     2\t/* a short file */\n", 0 };
	struct agent		*a;
	char			 err[256];
	uint64_t		 t0, t1;
	long			 i;

	memset(&cfg, 0, sizeof(cfg));
	cfg.profile = profile_builtin("explore");
	cfg.task = "Find where the configuration file is parsed and report "
	    "the function names with their files and lines.";
	cfg.limits = lim;
	cfg.context = c;
	if ((a = agent_new(&cfg, err, sizeof(err))) == NULL) {
		fprintf(stderr, "agent_new: %s\n", err);
		exit(1);
	}
	/* warm up to the steady 50-message context */
	for (i = 0; i < 30; i++) {
		agent_next(a, 0, &act);
		agent_feed_llm(a, &replies[i % NREPLIES]);
		agent_next(a, 0, &act);
		agent_feed_results(a, &res, 1);
	}
	t0 = clock_mono_ns();
	for (i = 0; i < steps; i++) {
		if (agent_next(a, 0, &act) != AGENT_NEED_LLM) {
			fprintf(stderr, "unexpected need at step %ld\n", i);
			exit(1);
		}
		agent_feed_llm(a, &replies[(i + 30) % NREPLIES]);
		if (agent_next(a, 0, &act) != AGENT_NEED_TOOLS ||
		    act.ncalls != 1) {
			fprintf(stderr, "no tool call at step %ld\n", i);
			exit(1);
		}
		agent_feed_results(a, &res, 1);
	}
	t1 = clock_mono_ns();
	agent_next(a, 0, &act);
	*ctxn = agent_context(a)->n;
	agent_free(a);
	return (t1 - t0) / (uint64_t)steps;
}

int
main(int argc, char **argv)
{
	struct msg_reply	 replies[NREPLIES];
	uint64_t		 ns[64];
	long			 steps = argc > 1 ? atol(argv[1]) : 20000;
	int			 runs = argc > 2 ? atoi(argv[2]) : 5, i;
	size_t			 ctxn = 0;
	char			 args[128], id[32];

	if (steps < 1 || runs < 1 || runs > 64) {
		fprintf(stderr, "usage: bench_agent [STEPS] [RUNS<=64]\n");
		return 2;
	}
	memset(replies, 0, sizeof(replies));
	for (i = 0; i < NREPLIES; i++) {
		replies[i].msg.role = MSG_ASSISTANT;
		replies[i].msg.text = strdup("Let me look at the next file.");
		snprintf(args, sizeof(args), "{\"path\":\"src/file%03d.c\","
		    "\"offset\":1,\"limit\":200}", i);
		snprintf(id, sizeof(id), "call_%d", i);
		msg_add_call(&replies[i].msg, id, "read", args);
		replies[i].usage.input = 1200;
		replies[i].usage.output = 40;
		replies[i].stop = MSG_STOP_TOOL_CALLS;
	}
	for (i = 0; i < runs; i++)
		ns[i] = bench_run(replies, steps, &ctxn);
	qsort(ns, runs, sizeof(ns[0]), cmp_u64);
	printf("agent loop: %ld steps x %d runs, context %zu messages\n",
	    steps, runs, ctxn);
	printf("median %.2f us/step (%.0f steps/s), min %.2f, max %.2f\n",
	    ns[runs / 2] / 1000.0, 1e9 / (double)ns[runs / 2],
	    ns[0] / 1000.0, ns[runs - 1] / 1000.0);
	for (i = 0; i < NREPLIES; i++)
		msg_free(&replies[i].msg);
	return 0;
}

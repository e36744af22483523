/*
 * bench_agent_strategies: what each context strategy does to an agent's
 * context over a long task (the seeds' strategy comparison, scripted): 300
 * turns, each one read call with a 2 KB result, an instant model that
 * answers summaries with 400 characters and reports usage at 0.3 tokens
 * per character; every 25 turns a todo item is completed (a subtask
 * transition). Prints, per strategy, the context it ends with (messages,
 * estimated tokens), its peak, the summaries it asked for and the time per
 * turn (the loop plus the script's own counting). JSON with --json.
 *
 *	bench_agent_strategies [--json]
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "agent/agent.h"
#include "agent/agent_testapi.h"
#include "agent/profile.h"
#include "common/clock.h"

#define TURNS	300

struct outcome {
	const char	*name;
	size_t		 messages, peak_messages;
	uint64_t	 tokens, peak_tokens;
	unsigned	 summaries;
	double		 us_per_turn;
};

static size_t
chars(const struct msg_list *l)
{
	size_t	i, n = 0;

	for (i = 0; i < l->n; i++)
		n += msg_chars(&l->v[i]);
	return n;
}

static void
run(const char *name, const struct agent_context_cfg *c, struct outcome *o)
{
	struct agent_limits	 lim = { .max_iterations = TURNS + 10 };
	struct agent_config	 cfg;
	struct agent_action	 act;
	struct agent_result	 res;
	struct msg_reply	 r;
	struct agent		*a;
	char			 big[2048], sum[401], args[64], err[256];
	char			 todo[128];
	uint64_t		 t0, tok;
	int			 turn = 0;

	memset(big, 'x', sizeof(big) - 1);
	big[sizeof(big) - 1] = '\0';
	memset(sum, 's', sizeof(sum) - 1);
	sum[sizeof(sum) - 1] = '\0';
	memset(&cfg, 0, sizeof(cfg));
	memset(o, 0, sizeof(*o));
	o->name = name;
	cfg.profile = profile_builtin("plan");
	cfg.task = "Map the code base.";
	cfg.limits = lim;
	cfg.context = *c;
	if ((a = agent_new(&cfg, err, sizeof(err))) == NULL) {
		fprintf(stderr, "%s\n", err);
		exit(1);
	}
	res.text = big;
	res.is_error = 0;
	t0 = clock_mono_ns();
	while (turn < TURNS) {
		if (agent_next(a, 0, &act) != AGENT_NEED_LLM)
			break;
		memset(&r, 0, sizeof(r));
		r.msg.role = MSG_ASSISTANT;
		r.usage.input = (uint64_t)(chars(act.messages) * 0.3);
		if (act.purpose == AGENT_LLM_SUMMARY) {
			o->summaries++;
			r.msg.text = sum;
			agent_feed_llm(a, &r);
			continue;
		}
		snprintf(args, sizeof(args), "{\"path\":\"f%d.c\"}", turn);
		msg_add_call(&r.msg, "c", "read", args);
		/* every 25 turns a subtask is done (hierarchical clears) */
		if (turn % 25 == 24) {
			snprintf(todo, sizeof(todo), "{\"todos\":[{\"content\":"
			    "\"part %d\",\"status\":\"completed\"}]}", turn / 25);
			msg_add_call(&r.msg, "t", "todo", todo);
		}
		agent_feed_llm(a, &r);
		free(r.msg.calls[0].id);
		free(r.msg.calls[0].name);
		free(r.msg.calls[0].args);
		if (r.msg.ncalls > 1) {
			free(r.msg.calls[1].id);
			free(r.msg.calls[1].name);
			free(r.msg.calls[1].args);
		}
		free(r.msg.calls);
		if (agent_next(a, 0, &act) == AGENT_NEED_TOOLS)
			agent_feed_results(a, &res, act.ncalls);
		turn++;
		tok = agent_context_tokens(a);
		if (tok > o->peak_tokens)
			o->peak_tokens = tok;
		if (agent_context(a)->n > o->peak_messages)
			o->peak_messages = agent_context(a)->n;
	}
	o->us_per_turn = (clock_mono_ns() - t0) / 1e3 / TURNS;
	o->messages = agent_context(a)->n;
	o->tokens = agent_context_tokens(a);
	agent_free(a);
}

int
main(int argc, char **argv)
{
	struct agent_context_cfg cs[] = {
		{ .strategy = AGENT_CTX_NONE },
		{ .strategy = AGENT_CTX_APPEND, .budget_tokens = 8000 },
		{ .strategy = AGENT_CTX_APPEND, .budget_tokens = 32000 },
		{ .strategy = AGENT_CTX_HIERARCHICAL, .keep_exchanges = 12 },
	};
	const char *names[] = { "none", "append-8k", "append-32k",
	    "hierarchical-12" };
	struct outcome	o[4];
	int		json = argc > 1 && strcmp(argv[1], "--json") == 0, i;

	for (i = 0; i < 4; i++)
		run(names[i], &cs[i], &o[i]);
	if (json)
		printf("[\n");
	else
		printf("%d turns, 2 KB result each\n%-16s %9s %9s %10s %10s "
		    "%9s %8s\n", TURNS, "strategy", "messages", "peak",
		    "tokens", "peak", "summaries", "us/turn");
	for (i = 0; i < 4; i++) {
		if (json)
			printf("  {\"strategy\":\"%s\",\"turns\":%d,"
			    "\"messages\":%zu,\"peak_messages\":%zu,"
			    "\"tokens\":%llu,\"peak_tokens\":%llu,"
			    "\"summaries\":%u,\"us_per_turn\":%.2f}%s\n",
			    o[i].name, TURNS, o[i].messages,
			    o[i].peak_messages,
			    (unsigned long long)o[i].tokens,
			    (unsigned long long)o[i].peak_tokens,
			    o[i].summaries, o[i].us_per_turn, i < 3 ? "," : "");
		else
			printf("%-16s %9zu %9zu %10llu %10llu %9u %8.2f\n",
			    o[i].name, o[i].messages, o[i].peak_messages,
			    (unsigned long long)o[i].tokens,
			    (unsigned long long)o[i].peak_tokens,
			    o[i].summaries, o[i].us_per_turn);
	}
	if (json)
		printf("]\n");
	return 0;
}

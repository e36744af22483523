/*
 * The agent loop driven by a scripted model: termination, reminders and
 * auto-complete, limits, loop detection, bad arguments, parallel calls,
 * context strategies, behaviors, delegation, resume. No process, no
 * network, time passed in.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "agent/agent.h"
#include "agent/agent_testapi.h"
#include "agent/profile.h"
#include "common/str.h"
#include "tests/agent/script.h"

struct evlog {
	unsigned	counts[16];
};

static void
ev_count(const struct agent_event *ev, void *arg)
{
	struct evlog	*l = arg;

	l->counts[ev->type]++;
}

static void
test_complete(void **state)
{
	struct agent_action	 act;
	struct agent		*a;

	(void)state;
	a = script_agent("explore", "find main", NULL, NULL);
	assert_int_equal(agent_next(a, 0, &act), AGENT_NEED_LLM);
	assert_int_equal(act.purpose, AGENT_LLM_TURN);
	/* system, task; tools = explore's 4 + complete + fail */
	assert_int_equal(act.messages->n, 2);
	assert_int_equal(act.messages->v[0].role, MSG_SYSTEM);
	assert_non_null(strstr(act.messages->v[1].text, "DELEGATED TASK"));
	assert_int_equal(act.ntools, 6);
	/* idempotent while waiting */
	assert_int_equal(agent_next(a, 1, &act), AGENT_NEED_LLM);
	script_feed(a, script_reply("done", 1, "complete",
	    "{\"result\":\"main is in src/main.c:12\"}"));
	assert_int_equal(agent_next(a, 2, &act), AGENT_NEED_DONE);
	assert_int_equal(act.status, AGENT_COMPLETE);
	assert_string_equal(act.result, "main is in src/main.c:12");
	assert_int_equal(agent_iterations(a), 1);
	/* the call got its result in the record */
	assert_true(script_pairs_intact(agent_messages(a)));
	assert_int_equal(agent_next(a, 3, &act), AGENT_NEED_DONE);
	agent_free(a);
}

static void
test_fail(void **state)
{
	struct agent_action	 act;
	struct agent		*a;

	(void)state;
	a = script_agent("explore", "x", NULL, NULL);
	agent_next(a, 0, &act);
	script_feed(a, script_reply(NULL, 1, "fail",
	    "{\"reason\":\"no such file\"}"));
	assert_int_equal(agent_next(a, 0, &act), AGENT_NEED_DONE);
	assert_int_equal(act.status, AGENT_FAIL);
	assert_string_equal(act.reason, "no such file");
	agent_free(a);
}

static void
test_reminders_autocomplete(void **state)
{
	struct agent_action	 act;
	struct evlog		 ev;
	struct agent_config	 cfg;
	struct agent		*a;
	char			 err[128];

	(void)state;
	memset(&ev, 0, sizeof(ev));
	memset(&cfg, 0, sizeof(cfg));
	cfg.profile = profile_builtin("explore");
	cfg.task = "t";
	cfg.on_event = ev_count;
	cfg.event_arg = &ev;
	a = agent_new(&cfg, err, sizeof(err));
	assert_non_null(a);
	agent_next(a, 0, &act);
	script_feed(a, script_reply("thinking", 0));
	assert_int_equal(agent_next(a, 0, &act), AGENT_NEED_LLM);
	assert_non_null(strstr(act.messages->v[act.messages->n - 1].text,
	    "Reminder 1 of 2"));
	script_feed(a, script_reply("still thinking", 0));
	assert_int_equal(agent_next(a, 0, &act), AGENT_NEED_LLM);
	assert_non_null(strstr(act.messages->v[act.messages->n - 1].text,
	    "Reminder 2 of 2"));
	script_feed(a, script_reply("the answer is 42", 0));
	assert_int_equal(agent_next(a, 0, &act), AGENT_NEED_DONE);
	assert_int_equal(act.status, AGENT_AUTO_COMPLETE);
	assert_string_equal(act.result, "the answer is 42");
	assert_non_null(strstr(act.reason, "auto-completed"));
	assert_int_equal(ev.counts[AGENT_EV_REMINDER], 2);
	assert_int_equal(ev.counts[AGENT_EV_DONE], 1);
	assert_int_equal(script_count_text(agent_messages(a), "Reminder"), 2);
	agent_free(a);
}

static void
test_reminder_resets(void **state)
{
	struct agent_action	 act;
	struct agent		*a;

	(void)state;
	a = script_agent("explore", "t", NULL, NULL);
	agent_next(a, 0, &act);
	script_feed(a, script_reply("a", 0));
	agent_next(a, 0, &act);
	script_feed(a, script_reply("b", 0));
	agent_next(a, 0, &act);
	/* a tool call: the count starts again */
	script_feed(a, script_reply(NULL, 1, "list", "{}"));
	assert_int_equal(agent_next(a, 0, &act), AGENT_NEED_TOOLS);
	script_results(a, &act, NULL);
	agent_next(a, 0, &act);
	script_feed(a, script_reply("c", 0));
	assert_int_equal(agent_next(a, 0, &act), AGENT_NEED_LLM);
	assert_non_null(strstr(act.messages->v[act.messages->n - 1].text,
	    "Reminder 1 of 2"));
	agent_free(a);
}

static void
test_max_iterations(void **state)
{
	struct agent_limits	 lim = { .max_iterations = 4,
				    .nudge_iterations = 1 };
	struct agent_action	 act;
	struct agent		*a;
	char			 args[64];
	int			 i;

	(void)state;
	a = script_agent("explore", "t", &lim, NULL);
	for (i = 0; i < 4; i++) {
		assert_int_equal(agent_next(a, 0, &act), AGENT_NEED_LLM);
		snprintf(args, sizeof(args), "{\"path\":\"f%d\"}", i);
		script_feed(a, script_reply(NULL, 1, "read", args));
		assert_int_equal(agent_next(a, 0, &act), AGENT_NEED_TOOLS);
		script_results(a, &act, NULL);
	}
	assert_int_equal(agent_next(a, 0, &act), AGENT_NEED_DONE);
	assert_int_equal(act.status, AGENT_LIMIT);
	assert_non_null(strstr(act.reason, "max iterations"));
	assert_int_equal(script_count_text(agent_messages(a),
	    "Only 1 turns left"), 1);
	agent_free(a);
}

static void
test_timeout(void **state)
{
	struct agent_limits	 lim = { .timeout_ms = 10000 };
	struct agent_action	 act;
	struct agent		*a;

	(void)state;
	a = script_agent("explore", "t", &lim, NULL);
	assert_int_equal(agent_next(a, 1000, &act), AGENT_NEED_LLM);
	assert_int_equal(agent_deadline_ms(a), 11000);
	script_feed(a, script_reply(NULL, 1, "list", "{}"));
	agent_next(a, 2000, &act);
	script_results(a, &act, NULL);
	/* 8.5 s in: past the nudge (80%), before the stop */
	assert_int_equal(agent_next(a, 9500, &act), AGENT_NEED_LLM);
	assert_non_null(strstr(act.messages->v[act.messages->n - 1].text,
	    "Time is almost up"));
	script_feed(a, script_reply(NULL, 1, "list", "{\"path\":\"src\"}"));
	agent_next(a, 10000, &act);
	script_results(a, &act, NULL);
	assert_int_equal(agent_next(a, 11000, &act), AGENT_NEED_DONE);
	assert_int_equal(act.status, AGENT_LIMIT);
	assert_non_null(strstr(act.reason, "timeout"));
	assert_int_equal(script_count_text(agent_messages(a),
	    "Time is almost up"), 1);
	agent_free(a);
}

static void
test_loop_detection(void **state)
{
	struct agent_limits	 lim = { .loop_threshold = 3, .loop_stop = 5 };
	struct agent_action	 act;
	struct evlog		 ev;
	struct agent		*a;
	int			 i;

	(void)state;
	a = script_agent("explore", "t", &lim, NULL);
	for (i = 0; i < 4; i++) {
		assert_int_equal(agent_next(a, 0, &act), AGENT_NEED_LLM);
		script_feed(a, script_reply(NULL, 1, "read",
		    "{\"path\":\"same.c\"}"));
		assert_int_equal(agent_next(a, 0, &act), AGENT_NEED_TOOLS);
		script_results(a, &act, NULL);
	}
	/* warned at the 3rd and 4th identical call */
	assert_int_equal(script_count_text(agent_context(a),
	    "same arguments"), 2);
	assert_int_equal(agent_next(a, 0, &act), AGENT_NEED_LLM);
	script_feed(a, script_reply(NULL, 1, "read", "{\"path\":\"same.c\"}"));
	assert_int_equal(agent_next(a, 0, &act), AGENT_NEED_TOOLS);
	script_results(a, &act, NULL);
	assert_int_equal(agent_next(a, 0, &act), AGENT_NEED_DONE);
	assert_int_equal(act.status, AGENT_LIMIT);
	assert_non_null(strstr(act.reason, "loop detected: read called 5"));
	agent_free(a);
	(void)ev;
}

static void
test_loop_reset_by_write(void **state)
{
	struct agent_limits	 lim = { .loop_threshold = 2, .loop_stop = 3 };
	struct agent_action	 act;
	struct agent		*a;
	int			 i;

	(void)state;
	a = script_agent("general", "t", &lim, NULL);
	/* bash, read, bash, read ...: bash may change files, so not a loop */
	for (i = 0; i < 8; i++) {
		assert_int_equal(agent_next(a, 0, &act), AGENT_NEED_LLM);
		if (i % 2 == 0)
			script_feed(a, script_reply(NULL, 1, "bash",
			    "{\"command\":\"make test\"}"));
		else
			script_feed(a, script_reply(NULL, 1, "read",
			    "{\"path\":\"a.c\"}"));
		assert_int_equal(agent_next(a, 0, &act), AGENT_NEED_TOOLS);
		script_results(a, &act, NULL);
	}
	assert_int_equal(agent_next(a, 0, &act), AGENT_NEED_LLM);
	assert_int_equal(agent_status(a), AGENT_RUNNING);
	agent_free(a);
}

static void
test_bad_arguments(void **state)
{
	struct agent_action	 act;
	const struct msg_list	*ctx;
	struct agent		*a;
	size_t			 n;

	(void)state;
	a = script_agent("explore", "t", NULL, NULL);
	agent_next(a, 0, &act);
	script_feed(a, script_reply(NULL, 7,
	    "read", "{\"path\": ",			/* bad JSON */
	    "read", "{}",				/* missing field */
	    "read", "{\"path\": 7}",			/* wrong type */
	    "write", "{\"path\":\"x\",\"content\":\"y\"}",	/* not its tool */
	    "grep", "{\"pattern\":\"x\",\"colour\":1}",	/* unknown field */
	    "read", "[1,2]",				/* not an object */
	    "glob", "{\"pattern\":\"*.c\"}"));		/* valid */
	/* only the valid call reaches the driver */
	assert_int_equal(agent_next(a, 0, &act), AGENT_NEED_TOOLS);
	assert_int_equal(act.ncalls, 1);
	assert_string_equal(act.calls[0].name, "glob");
	assert_int_equal(act.calls[0].index, 6);
	script_results(a, &act, NULL);
	ctx = agent_context(a);
	n = ctx->n;
	assert_true(script_pairs_intact(ctx));
	assert_int_equal(ctx->v[n - 7].is_error, 1);
	assert_non_null(strstr(ctx->v[n - 7].text, "not valid JSON"));
	assert_non_null(strstr(ctx->v[n - 6].text,
	    "missing required field \"path\""));
	assert_non_null(strstr(ctx->v[n - 5].text,
	    "\"path\" must be a string, not an integer"));
	assert_non_null(strstr(ctx->v[n - 4].text, "unknown tool \"write\""));
	assert_non_null(strstr(ctx->v[n - 4].text, "glob"));
	assert_non_null(strstr(ctx->v[n - 3].text, "unknown field \"colour\""));
	assert_non_null(strstr(ctx->v[n - 2].text, "must be a JSON object"));
	assert_int_equal(ctx->v[n - 1].is_error, 0);
	assert_string_equal(ctx->v[n - 1].text, "ok glob");
	/* and the agent goes on */
	assert_int_equal(agent_next(a, 0, &act), AGENT_NEED_LLM);
	agent_free(a);
}

static void
test_parallel_calls_in_order(void **state)
{
	struct agent_action	 act;
	struct agent_result	 res[3];
	const struct msg_list	*ctx;
	struct agent		*a;
	size_t			 n;

	(void)state;
	a = script_agent("general", "t", NULL, NULL);
	agent_next(a, 0, &act);
	script_feed(a, script_reply("three at once", 4,
	    "read", "{\"path\":\"a\"}",
	    "todo", "{\"todos\":[{\"content\":\"x\",\"status\":\"pending\"}]}",
	    "grep", "{\"pattern\":\"b\"}",
	    "write", "{\"path\":\"c\",\"content\":\"\"}"));
	assert_int_equal(agent_next(a, 0, &act), AGENT_NEED_TOOLS);
	assert_int_equal(act.ncalls, 3);	/* todo is the agent's own */
	assert_string_equal(act.calls[0].name, "read");
	assert_int_equal(act.calls[0].parallel, 1);
	assert_int_equal(act.calls[1].parallel, 1);
	assert_int_equal(act.calls[2].parallel, 0);
	assert_int_equal(act.calls[2].index, 3);
	res[0].text = "A";
	res[1].text = "B";
	res[2].text = "C";
	res[0].is_error = res[1].is_error = 0;
	res[2].is_error = 1;
	/* wrong count is refused and changes nothing */
	assert_int_equal(agent_feed_results(a, res, 2), -1);
	assert_int_equal(agent_feed_results(a, res, 3), 0);
	ctx = agent_context(a);
	n = ctx->n;
	assert_string_equal(ctx->v[n - 4].text, "A");
	assert_non_null(strstr(ctx->v[n - 3].text, "Task list (0 of 1"));
	assert_string_equal(ctx->v[n - 2].text, "B");
	assert_string_equal(ctx->v[n - 1].text, "C");
	assert_int_equal(ctx->v[n - 1].is_error, 1);
	assert_string_equal(ctx->v[n - 1].call_id, ctx->v[n - 5].calls[3].id);
	assert_true(script_pairs_intact(ctx));
	assert_string_equal(agent_todo_text(a), "[ ] x\n");
	agent_free(a);
}

/* Results from the driver are clipped (head and tail, never inside a UTF-8
 * sequence) and made valid UTF-8 before they reach the context. */
static void
test_result_clip_utf8(void **state)
{
	struct agent_limits	 lim = { .max_result = 100 };
	struct agent_action	 act;
	struct agent_result	 res[2];
	const struct msg_list	*ctx;
	struct agent		*a;
	char			 big[400];
	size_t			 i;

	(void)state;
	for (i = 0; i + 2 < sizeof(big); i += 2)
		memcpy(big + i, "\xc3\xa9", 2);	/* é */
	big[i] = '\0';
	a = script_agent("explore", "t", &lim, NULL);
	agent_next(a, 0, &act);
	script_feed(a, script_reply(NULL, 2, "list", "{}", "glob",
	    "{\"pattern\":\"*\"}"));
	agent_next(a, 0, &act);
	res[0].text = big;
	res[1].text = "bad \xff byte";
	res[0].is_error = res[1].is_error = 0;
	assert_int_equal(agent_feed_results(a, res, 2), 0);
	ctx = agent_context(a);
	assert_non_null(strstr(ctx->v[ctx->n - 2].text, "bytes cut"));
	assert_true(strlen(ctx->v[ctx->n - 2].text) < 160);
	assert_true(str_utf8_valid(ctx->v[ctx->n - 2].text,
	    strlen(ctx->v[ctx->n - 2].text)));
	assert_string_equal(ctx->v[ctx->n - 1].text, "bad \\xff byte");
	agent_free(a);
}

static void
test_complete_after_tools(void **state)
{
	struct agent_action	 act;
	struct agent		*a;

	(void)state;
	a = script_agent("general", "t", NULL, NULL);
	agent_next(a, 0, &act);
	/* complete in the same turn as a write: the write still runs */
	script_feed(a, script_reply(NULL, 2,
	    "complete", "{\"result\":\"written\"}",
	    "write", "{\"path\":\"c\",\"content\":\"x\"}"));
	assert_int_equal(agent_next(a, 0, &act), AGENT_NEED_TOOLS);
	assert_int_equal(act.ncalls, 1);
	script_results(a, &act, NULL);
	assert_int_equal(agent_next(a, 0, &act), AGENT_NEED_DONE);
	assert_int_equal(act.status, AGENT_COMPLETE);
	assert_string_equal(act.result, "written");
	assert_true(script_pairs_intact(agent_messages(a)));
	agent_free(a);
}

static void
test_llm_error(void **state)
{
	struct agent_action	 act;
	struct agent		*a;

	(void)state;
	a = script_agent("explore", "t", NULL, NULL);
	/* nothing to feed before a request */
	assert_int_equal(agent_feed_llm_error(a, "x"), -1);
	agent_next(a, 0, &act);
	assert_int_equal(agent_feed_results(a, NULL, 0), -1);
	assert_int_equal(agent_feed_llm_error(a, "HTTP 500 after 5 retries"),
	    0);
	assert_int_equal(agent_next(a, 0, &act), AGENT_NEED_DONE);
	assert_int_equal(act.status, AGENT_FAIL);
	assert_non_null(strstr(act.reason, "HTTP 500"));
	agent_free(a);
}

static void
test_cancel(void **state)
{
	struct agent_action	 act;
	struct agent		*a;

	(void)state;
	a = script_agent("explore", "t", NULL, NULL);
	agent_next(a, 0, &act);
	script_feed(a, script_reply(NULL, 1, "list", "{}"));
	assert_int_equal(agent_next(a, 0, &act), AGENT_NEED_TOOLS);
	agent_cancel(a, "worker killed");
	assert_int_equal(agent_next(a, 0, &act), AGENT_NEED_DONE);
	assert_int_equal(act.status, AGENT_LIMIT);
	assert_string_equal(act.reason, "worker killed");
	agent_free(a);
}

/* Turns with big tool results until the strategy asks for a summary. */
static void
test_compression(void **state)
{
	struct agent_context_cfg c = { .strategy = AGENT_CTX_APPEND,
				    .budget_tokens = 2000, .compact_pct = 75,
				    .keep_recent = 4 };
	struct agent_action	 act;
	struct evlog		 ev;
	const struct msg_list	*ctx;
	struct msg_reply	*r;
	struct agent		*a;
	char			 big[320], args[64], dir[64];
	size_t			 logn, i;
	uint64_t		 est = 0;
	int			 turn;

	(void)state;
	(void)ev;
	memset(big, 'x', sizeof(big) - 1);
	big[sizeof(big) - 1] = '\0';
	a = script_agent("explore", "t", NULL, &c);
	for (turn = 0;; turn++) {
		assert_true(turn < 20);
		est = agent_context_tokens(a);
		assert_int_equal(agent_next(a, 0, &act), AGENT_NEED_LLM);
		if (act.purpose == AGENT_LLM_SUMMARY)
			break;
		/* from turn 3 on there is a range to cut: only the
		   budget holds the summary back */
		if (turn >= 3 && est >= 1500)
			fail_msg("turn %d: %llu tokens, over 75%% of 2000, and "
			    "no summary", turn, (unsigned long long)est);
		/* two calls a turn, so pairs could be split by a naive cut
		   (none repeated: the loop guard would stop the agent) */
		snprintf(args, sizeof(args), "{\"path\":\"f%d\"}", turn);
		snprintf(dir, sizeof(dir), "{\"path\":\"d%d\"}", turn);
		script_feed(a, script_reply(NULL, 2, "read", args, "list",
		    dir));
		assert_int_equal(agent_next(a, 0, &act), AGENT_NEED_TOOLS);
		script_results(a, &act, big);
	}
	/*
	 * The summary comes at the first turn at 75% of the budget, and not
	 * before: each turn adds 2 results of ~80 tokens and 2 calls, the
	 * context (system prompt, tools and task included) crosses 1500 at
	 * turn 6 (1,548 tokens). A range to cut exists from turn 3 on.
	 */
	print_message("summary at turn %d, %llu tokens\n", turn,
	    (unsigned long long)est);
	if (est < 1500)
		fail_msg("summary at turn %d with %llu tokens, under 75%% of "
		    "2000", turn, (unsigned long long)est);
	assert_int_equal(turn, 6);
	assert_null(act.tools);
	assert_int_equal(act.messages->n, 2);
	assert_non_null(strstr(act.messages->v[1].text, "call read("));
	logn = agent_messages(a)->n;
	r = script_reply("Read f0 and f1: all x.", 0);
	r->usage.input = 100;
	script_feed(a, r);
	ctx = agent_context(a);
	/* system, task, summary, then the most recent messages */
	assert_int_equal(ctx->v[0].role, MSG_SYSTEM);
	assert_non_null(strstr(ctx->v[1].text, "DELEGATED TASK"));
	assert_non_null(strstr(ctx->v[2].text, "[Context summary"));
	assert_non_null(strstr(ctx->v[2].text, "tools used: read x"));
	assert_non_null(strstr(ctx->v[2].text, "Read f0 and f1: all x."));
	/* the 4 most recent messages, the cut moved back to the start of
	   their turn (an assistant message and its 2 results) */
	assert_true(ctx->n <= 3 + 4 + 2);
	assert_true(script_pairs_intact(ctx));
	for (i = 3; i < ctx->n; i++)
		assert_true(ctx->v[i].role != MSG_TOOL ||
		    ctx->v[i - 1].role != MSG_USER);
	/* the record lost nothing: it only grew by the summary */
	assert_int_equal(agent_messages(a)->n, logn + 1);
	assert_int_equal(agent_usage(a).input, 100);
	/* and the turn goes on, under the budget */
	assert_int_equal(agent_next(a, 0, &act), AGENT_NEED_LLM);
	assert_int_equal(act.purpose, AGENT_LLM_TURN);
	agent_free(a);
}

static void
test_compression_summary_fails(void **state)
{
	struct agent_context_cfg c = { .strategy = AGENT_CTX_APPEND,
				    .budget_tokens = 1000, .keep_recent = 2 };
	struct agent_action	 act;
	struct agent		*a;
	char			 big[1500];
	int			 turn;

	(void)state;
	memset(big, 'y', sizeof(big) - 1);
	big[sizeof(big) - 1] = '\0';
	a = script_agent("explore", "t", NULL, &c);
	for (turn = 0; turn < 10; turn++) {
		agent_next(a, 0, &act);
		if (act.purpose == AGENT_LLM_SUMMARY)
			break;
		script_feed(a, script_reply(NULL, 1, "list", turn % 2 ?
		    "{\"path\":\"a\"}" : "{\"path\":\"b\"}"));
		agent_next(a, 0, &act);
		script_results(a, &act, big);
	}
	assert_int_equal(act.purpose, AGENT_LLM_SUMMARY);
	assert_int_equal(agent_feed_llm_error(a, "timeout"), 0);
	assert_non_null(strstr(agent_context(a)->v[2].text,
	    "The summariser failed: timeout"));
	assert_non_null(strstr(agent_context(a)->v[2].text, "tools used: list"));
	assert_true(script_pairs_intact(agent_context(a)));
	assert_int_equal(agent_next(a, 0, &act), AGENT_NEED_LLM);
	assert_int_equal(act.purpose, AGENT_LLM_TURN);
	agent_free(a);
}

static void
test_calibration(void **state)
{
	struct agent_context_cfg c = { .strategy = AGENT_CTX_NONE };
	struct agent_action	 act;
	struct msg_reply	*r;
	struct agent		*a;
	uint64_t		 before, after;

	(void)state;
	a = script_agent("explore", "t", NULL, &c);
	agent_next(a, 0, &act);
	before = agent_context_tokens(a);	/* chars / 4 */
	r = script_reply(NULL, 1, "list", "{}");
	/* the API says the request cost twice the chars/4 estimate */
	r->usage.input = before * 2;
	r->usage.output = 10;
	script_feed(a, r);
	after = agent_context_tokens(a);
	/* the estimate now uses the API's ratio: about twice chars/4 */
	assert_true(after >= before * 2);
	assert_true(after <= before * 2 + 40);
	assert_int_equal(agent_usage(a).output, 10);
	agent_free(a);
}

static void
test_hierarchical(void **state)
{
	struct agent_context_cfg c = { .strategy = AGENT_CTX_HIERARCHICAL,
				    .keep_exchanges = 2 };
	struct agent_action	 act;
	struct evlog		 ev;
	struct agent_config	 cfg;
	const struct msg_list	*ctx;
	struct agent		*a;
	char			 args[64], err[128];
	int			 i;

	(void)state;
	memset(&ev, 0, sizeof(ev));
	memset(&cfg, 0, sizeof(cfg));
	cfg.profile = profile_builtin("plan");
	cfg.task = "plan it";
	cfg.context = c;
	cfg.on_event = ev_count;
	cfg.event_arg = &ev;
	a = agent_new(&cfg, err, sizeof(err));
	assert_non_null(a);
	for (i = 0; i < 5; i++) {
		agent_next(a, 0, &act);
		snprintf(args, sizeof(args), "{\"path\":\"f%d\"}", i);
		script_feed(a, script_reply(NULL, 1, "read", args));
		agent_next(a, 0, &act);
		script_results(a, &act, NULL);
	}
	agent_next(a, 0, &act);
	ctx = agent_context(a);
	/* system, task, marker, 2 x (assistant, tool) */
	assert_int_equal(ctx->n, 3 + 4);
	assert_non_null(strstr(ctx->v[2].text, "[Earlier context dropped"));
	assert_non_null(strstr(ctx->v[3].calls[0].args, "f3"));
	assert_true(script_pairs_intact(ctx));
	/* the rolling marker is not recorded, every message it hid is */
	assert_int_equal(script_count_text(agent_messages(a),
	    "[Earlier context dropped"), 0);
	assert_int_equal(agent_messages(a)->n, 2 + 5 * 2);
	/* a completed todo item clears all but the current exchange */
	script_feed(a, script_reply(NULL, 2,
	    "todo", "{\"todos\":[{\"content\":\"map the code\","
	    "\"status\":\"completed\"},{\"content\":\"write plan\","
	    "\"status\":\"in_progress\"}]}",
	    "read", "{\"path\":\"g\"}"));
	agent_next(a, 0, &act);
	script_results(a, &act, NULL);
	agent_next(a, 0, &act);
	ctx = agent_context(a);
	assert_int_equal(ctx->n, 3 + 3);
	assert_non_null(strstr(ctx->v[2].text,
	    "subtask \"map the code\" completed"));
	assert_non_null(strstr(ctx->v[2].text, "[~] write plan"));
	assert_int_equal(ctx->v[3].ncalls, 2);
	assert_true(script_pairs_intact(ctx));
	assert_int_equal(ev.counts[AGENT_EV_CLEAR], 1);
	assert_int_equal(script_count_text(agent_messages(a),
	    "subtask \"map the code\" completed"), 1);
	agent_free(a);
}

static const char *
custom_instr(void *self)
{
	(void)self;
	return "CUSTOM INSTRUCTIONS";
}

static int
custom_tool(void *self, struct agent *a, const char *name, const char *args,
    char **text, int *is_error)
{
	(void)a;
	(*(int *)self)++;
	*is_error = 0;
	return asprintf(text, "%s got %s", name, args) == -1 ? -1 : 0;
}

static void
test_behaviors(void **state)
{
	struct msg_tool		 t1 = { "read", "dup", "{}" };
	struct msg_tool		 t2 = { "echo", "echo", "{}" };
	struct agent_behavior	 b;
	struct agent_action	 act;
	struct agent		*a;
	char			 err[256];
	int			 calls = 0;

	(void)state;
	a = script_agent("explore", "t", NULL, NULL);
	memset(&b, 0, sizeof(b));
	b.name = "dup";
	b.tools = &t1;
	b.ntools = 1;
	b.handle_tool = custom_tool;
	assert_int_equal(agent_add_behavior(a, &b, &calls, err, sizeof(err)),
	    -1);
	assert_non_null(strstr(err, "tool \"read\" is already provided by "
	    "behavior workspace-tools"));
	/* a tool without a handler is refused too */
	b.name = "nohandler";
	b.tools = &t2;
	b.handle_tool = NULL;
	assert_int_equal(agent_add_behavior(a, &b, &calls, err, sizeof(err)),
	    -1);
	b.name = "echo";
	b.handle_tool = custom_tool;
	b.instructions = custom_instr;
	assert_int_equal(agent_add_behavior(a, &b, &calls, err, sizeof(err)),
	    0);
	agent_next(a, 0, &act);
	assert_int_equal(act.ntools, 7);
	assert_non_null(strstr(act.messages->v[0].text, "CUSTOM INSTRUCTIONS"));
	/* too late once started */
	b.name = "late";
	t2.name = "late";
	assert_int_equal(agent_add_behavior(a, &b, &calls, err, sizeof(err)),
	    -1);
	script_feed(a, script_reply(NULL, 1, "echo", "{\"x\":1}"));
	assert_int_equal(agent_next(a, 0, &act), AGENT_NEED_LLM);
	assert_int_equal(calls, 1);
	assert_string_equal(agent_context(a)->v[agent_context(a)->n - 1].text,
	    "echo got {\"x\":1}");
	agent_free(a);
}

static void
test_orchestrator_delegate(void **state)
{
	struct agent_action	 act;
	struct agent_result	 res[2];
	struct agent_config	 cfg;
	struct msg_list		 inh;
	struct agent		*a;
	char			 err[128];

	(void)state;
	msg_list_init(&inh);
	msg_list_add_text(&inh, MSG_USER, "Summary of agent 0: the repo is C.");
	memset(&cfg, 0, sizeof(cfg));
	cfg.profile = profile_builtin("orchestrator");
	cfg.task = "review and test";
	cfg.inherited = &inh;
	a = agent_new(&cfg, err, sizeof(err));
	assert_non_null(a);
	agent_next(a, 0, &act);
	/* delegate, the composition patterns, complete, fail: no file or
	 * shell tool */
	assert_int_equal(act.ntools, 6);
	assert_string_equal(act.tools[0].name, "delegate");
	assert_string_equal(act.tools[1].name, "plan_execute");
	assert_string_equal(act.tools[2].name, "parallel_explore");
	assert_string_equal(act.tools[3].name, "sequential_delegate");
	assert_string_equal(act.messages->v[1].text,
	    "Summary of agent 0: the repo is C.");
	assert_string_equal(act.messages->v[2].text, "review and test");
	script_feed(a, script_reply(NULL, 3,
	    "delegate", "{\"task\":\"review a.c\",\"profile\":\"review\"}",
	    "delegate", "{\"task\":\"run tests\",\"profile\":\"test\","
	    "\"inherit_context\":true}",
	    "read", "{\"path\":\"a.c\"}"));
	assert_int_equal(agent_next(a, 0, &act), AGENT_NEED_TOOLS);
	assert_int_equal(act.ncalls, 2);
	assert_int_equal(act.calls[0].kind, AGENT_CALL_DELEGATE);
	assert_string_equal(act.calls[0].profile, "review");
	assert_string_equal(act.calls[0].task, "review a.c");
	assert_int_equal(act.calls[0].inherit_context, 0);
	assert_int_equal(act.calls[0].parallel, 1);
	assert_string_equal(act.calls[1].profile, "test");
	assert_int_equal(act.calls[1].inherit_context, 1);
	res[0].text = "no bugs";
	res[1].text = "refused: max depth 3 reached";
	res[0].is_error = 0;
	res[1].is_error = 1;
	assert_int_equal(agent_feed_results(a, res, 2), 0);
	assert_non_null(strstr(agent_context(a)->v[agent_context(a)->n - 1].text,
	    "unknown tool \"read\""));
	agent_free(a);
	msg_list_free(&inh);
}

/* A composition pattern's call reaches the driver as AGENT_CALL_COMPOSE
 * with its arguments checked against the tool's schema first. */
static void
test_orchestrator_compose(void **state)
{
	struct agent_action	 act;
	struct agent_config	 cfg;
	struct agent_result	 res[1];
	struct agent		*a;
	char			 err[128];

	(void)state;
	memset(&cfg, 0, sizeof(cfg));
	cfg.profile = profile_builtin("orchestrator");
	cfg.task = "big job";
	a = agent_new(&cfg, err, sizeof(err));
	assert_non_null(a);
	agent_next(a, 0, &act);
	script_feed(a, script_reply(NULL, 3,
	    "plan_execute", "{\"task\":\"do it\"}",
	    "parallel_explore", "{\"task\":\"t\"}",
	    "sequential_delegate", "{\"steps\":[{\"task\":\"one\"}]}"));
	assert_int_equal(agent_next(a, 0, &act), AGENT_NEED_TOOLS);
	/* parallel_explore without its aspects never leaves the agent. */
	assert_int_equal(act.ncalls, 2);
	assert_int_equal(act.calls[0].kind, AGENT_CALL_COMPOSE);
	assert_string_equal(act.calls[0].name, "plan_execute");
	assert_string_equal(act.calls[0].args, "{\"task\":\"do it\"}");
	assert_int_equal(act.calls[1].kind, AGENT_CALL_COMPOSE);
	assert_string_equal(act.calls[1].name, "sequential_delegate");
	res[0].text = "done";
	res[0].is_error = 0;
	assert_int_equal(agent_feed_results(a, res, 1), -1);
	agent_free(a);
}

static void
test_resume(void **state)
{
	struct agent_action	 act;
	struct agent_config	 cfg;
	struct msg_list		 saved;
	struct agent		*a, *b;
	char			 err[128];

	(void)state;
	a = script_agent("explore", "t", NULL, NULL);
	agent_next(a, 0, &act);
	script_feed(a, script_reply(NULL, 1, "list", "{}"));
	agent_next(a, 0, &act);
	script_results(a, &act, NULL);
	agent_next(a, 0, &act);
	script_feed(a, script_reply(NULL, 2, "read", "{\"path\":\"a\"}",
	    "read", "{\"path\":\"b\"}"));
	/* the process dies here, with two calls unanswered */
	msg_list_init(&saved);
	msg_list_copy(&saved, agent_messages(a));
	agent_free(a);

	memset(&cfg, 0, sizeof(cfg));
	cfg.profile = profile_builtin("explore");
	cfg.task = "t";
	cfg.resume = &saved;
	b = agent_new(&cfg, err, sizeof(err));
	assert_non_null(b);
	assert_int_equal(agent_next(b, 0, &act), AGENT_NEED_LLM);
	assert_int_equal(agent_iterations(b), 2);
	assert_true(script_pairs_intact(agent_context(b)));
	assert_int_equal(script_count_text(agent_context(b), "interrupted"), 2);
	assert_int_equal(act.messages->n, saved.n + 2);
	agent_free(b);
	msg_list_free(&saved);
}

/* Results saved out of call order are answers all the same. */
static void
test_resume_out_of_order(void **state)
{
	struct agent_action	 act;
	struct agent_config	 cfg;
	struct msg_list		 saved;
	struct msg		 m;
	const struct msg	*am;
	struct agent		*a, *b;
	char			 err[128];
	size_t			 k, ai;

	(void)state;
	a = script_agent("explore", "t", NULL, NULL);
	agent_next(a, 0, &act);
	script_feed(a, script_reply(NULL, 2, "read", "{\"path\":\"a\"}",
	    "read", "{\"path\":\"b\"}"));
	msg_list_init(&saved);
	msg_list_copy(&saved, agent_messages(a));
	agent_free(a);
	ai = saved.n - 1;
	am = &saved.v[ai];
	assert_int_equal(am->role, MSG_ASSISTANT);
	assert_int_equal(am->ncalls, 2);
	for (k = 2; k > 0; k--) {	/* the second call's result first */
		memset(&m, 0, sizeof(m));
		m.role = MSG_TOOL;
		/* msg_list_take may move the array: index it afresh. */
		m.call_id = strdup(saved.v[ai].calls[k - 1].id);
		m.name = strdup("read");
		m.text = strdup("contents");
		assert_int_equal(msg_list_take(&saved, &m), 0);
	}
	memset(&cfg, 0, sizeof(cfg));
	cfg.profile = profile_builtin("explore");
	cfg.task = "t";
	cfg.resume = &saved;
	b = agent_new(&cfg, err, sizeof(err));
	assert_non_null(b);
	assert_int_equal(agent_next(b, 0, &act), AGENT_NEED_LLM);
	assert_int_equal(script_count_text(agent_context(b), "interrupted"), 0);
	assert_int_equal(act.messages->n, saved.n);
	agent_free(b);
	msg_list_free(&saved);
}

static void
test_bad_config(void **state)
{
	struct agent_config	cfg;
	char			err[128];

	(void)state;
	memset(&cfg, 0, sizeof(cfg));
	cfg.task = "t";
	assert_null(agent_new(&cfg, err, sizeof(err)));
	assert_non_null(strstr(err, "profile"));
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_complete),
		cmocka_unit_test(test_fail),
		cmocka_unit_test(test_reminders_autocomplete),
		cmocka_unit_test(test_reminder_resets),
		cmocka_unit_test(test_max_iterations),
		cmocka_unit_test(test_timeout),
		cmocka_unit_test(test_loop_detection),
		cmocka_unit_test(test_loop_reset_by_write),
		cmocka_unit_test(test_bad_arguments),
		cmocka_unit_test(test_parallel_calls_in_order),
		cmocka_unit_test(test_result_clip_utf8),
		cmocka_unit_test(test_complete_after_tools),
		cmocka_unit_test(test_llm_error),
		cmocka_unit_test(test_cancel),
		cmocka_unit_test(test_compression),
		cmocka_unit_test(test_compression_summary_fails),
		cmocka_unit_test(test_calibration),
		cmocka_unit_test(test_hierarchical),
		cmocka_unit_test(test_behaviors),
		cmocka_unit_test(test_orchestrator_delegate),
		cmocka_unit_test(test_orchestrator_compose),
		cmocka_unit_test(test_resume),
		cmocka_unit_test(test_resume_out_of_order),
		cmocka_unit_test(test_bad_config),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}

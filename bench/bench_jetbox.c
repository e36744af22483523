/*
 * bench_jetbox: the strategy benchmark of the Jetbox refactoring
 * (../shared/seeds/001), for warren's context strategies and composition
 * patterns. Five tasks of growing length: read part-1.txt ... part-N.txt
 * (1.5 KB each; N = 12 to 192, so a transcript reaches 1.3 to 20 times
 * the 4,000-token context budget), with three facts planted in the first
 * three files that the last turn must still see. Each task runs under each
 * context strategy (hierarchical, the same with a model that notes facts,
 * append-until-full) and each composition pattern (none: one agent;
 * sequential_delegate: 4 steps; parallel_explore: 3 aspects then a
 * synthesis turn; plan_execute: a plan agent, a diamond A, B|C, D, a
 * synthesis).
 *
 * The patterns run in this process with warren's own pieces: the sans-IO
 * agent, the store's memory graph (a step's node under the steps it
 * depends on, store_context() for what it inherits, merge nodes) and
 * compose_plan_parse() for the plan. Steps that would run in parallel run
 * one after another here; "rounds" counts LLM round trips on the critical
 * path (what the wall time is with a real model), "llm_calls" all of them.
 *
 * The scripted model reads the files in order, one per turn, and then
 * completes with every FACT line it can see in what it is sent; asked for
 * a summary, it keeps every FACT line it is sent. Success: all three
 * facts are in what the model is sent on the task's last turn.
 *
 * With WARREN_BASE_URL set (and WARREN_API_KEY, WARREN_MODEL as for warren
 * run), the five tasks also run against that model (one agent, each
 * strategy); without it that part is skipped and the output says so.
 *
 *	bench_jetbox [--json FILE] [--max-turns N]
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <jansson.h>

#include "agent/agent.h"
#include "agent/profile.h"
#include "common/buf.h"
#include "common/clock.h"
#include "common/config.h"
#include "common/config_testapi.h"
#include "common/log.h"
#include "common/xmalloc.h"
#include "llm/llm.h"
#include "store/store.h"
#include "supervisor/compose.h"
#include "supervisor/compose_testapi.h"

#define NFACTS		3
#define FILE_BYTES	1536
#define BUDGET		4000
#define NTASKS		5

static const char *const facts[NFACTS] = {
	"FACT-1: the build port is 7431",
	"FACT-2: the release owner is mira",
	"FACT-3: the schema version is 42",
};

struct strat {
	const char		*name;
	struct agent_context_cfg cfg;
	int			 notes;		/* the model notes facts */
};

static const struct strat strats[] = {
	{ "hierarchical", { AGENT_CTX_HIERARCHICAL, BUDGET, 0, 0, 12 }, 0 },
	{ "hierarchical+notes", { AGENT_CTX_HIERARCHICAL, BUDGET, 0, 0, 12 },
	  1 },
	{ "append", { AGENT_CTX_APPEND, BUDGET, 75, 10, 0 }, 0 },
};
#define NSTRATS	(sizeof(strats) / sizeof(strats[0]))

enum pattern { PAT_NONE = 0, PAT_SEQ, PAT_EXPLORE, PAT_PLAN };
static const char *const pat_names[] = { "none", "sequential_delegate",
    "parallel_explore", "plan_execute" };
#define NPATS	4

/* One cell of the table. */
struct cell {
	int		 success;
	unsigned	 facts_seen;	/* in the last turn's request */
	unsigned	 rounds;	/* on the critical path */
	unsigned	 llm_calls;
	unsigned	 agents;
	double		 wall_ms;
	uint64_t	 tokens_total;	/* estimated, every request */
	uint64_t	 tokens_max;	/* the largest request */
	uint64_t	 usage_input;	/* as the API reported (real model) */
	size_t		 messages;	/* of the last request */
	uint64_t	*per_turn;	/* tokens of each request, in order */
	size_t		 nturns;
	char		*error;		/* a real model's failure */
};

struct bench {
	struct llm_engine	*llm;		/* NULL: the scripted model */
	struct store		*st;
	int64_t			 run;
	struct profile		 prof;		/* explore + note */
	struct cell		*c;
	unsigned		 last_facts;	/* of the latest request */
	size_t			 last_messages;
};

/* One agent of a pattern. */
struct job {
	const char		*path;
	const char		*task;
	unsigned		 first, nreads;	/* files it reads */
	const int64_t		*parents;	/* its memory node's */
	size_t			 nparents;
	const char		*answer;	/* scripted complete(), or NULL:
						   the facts it sees */
	int64_t			 node;		/* out */
	char			*result;	/* out */
	unsigned		 rounds;	/* out */
};

static char *
bench_file(unsigned n)
{
	struct buf	b;
	unsigned	i;

	buf_init(&b, FILE_BYTES + 128);
	if (n >= 1 && n <= NFACTS)
		buf_addf(&b, "%s\n", facts[n - 1]);
	for (i = 0; b.len < FILE_BYTES; i++)
		buf_addf(&b, "part %u line %u: nothing to remember here.\n", n,
		    i);
	return buf_release(&b, NULL);
}

/* Which facts a request holds (a bit each). */
static unsigned
bench_facts_in(const struct msg_list *l)
{
	unsigned	found = 0;
	size_t		i, k, j;

	for (i = 0; i < l->n; i++) {
		for (k = 0; k < NFACTS; k++) {
			if (l->v[i].text != NULL &&
			    strstr(l->v[i].text, facts[k]) != NULL)
				found |= 1u << k;
			for (j = 0; j < l->v[i].ncalls; j++)
				if (l->v[i].calls[j].args != NULL &&
				    strstr(l->v[i].calls[j].args,
				    facts[k] + 8) != NULL)
					found |= 1u << k;
		}
	}
	return found;
}

static unsigned
bench_nfacts(unsigned bits)
{
	return (bits & 1) + (bits >> 1 & 1) + (bits >> 2 & 1);
}

static void
bench_add_facts(struct buf *b, unsigned bits)
{
	size_t	k;

	for (k = 0; k < NFACTS; k++)
		if (bits & (1u << k))
			buf_addf(b, "\n%s", facts[k]);
}

/* --- the model ----------------------------------------------------------- */

/* A call whose one argument is a string (escaped as JSON). */
static void
bench_call_json(struct msg_reply *r, const char *id, const char *name,
    const char *key, const char *value)
{
	json_t	*o = json_pack("{s:s}", key, value);
	char	*args = o != NULL ? json_dumps(o, JSON_COMPACT) : NULL;

	if (args == NULL || msg_add_call(&r->msg, id, name, args) == -1)
		fatalx("bench: out of memory");
	free(args);
	json_decref(o);
}

/* The scripted model's turn: the next read (and a note of a fact the
 * last result held), or complete() with the facts it sees. */
static void
bench_script_turn(struct job *j, unsigned done, const struct msg_list *req,
    int notes, struct msg_reply *r)
{
	const struct msg	*m;
	struct buf		 b;
	char			 args[256], *text;
	size_t			 i, k;

	if (done < j->nreads) {
		snprintf(args, sizeof(args), "{\"path\":\"part-%u.txt\"}",
		    j->first + done);
		msg_add_call(&r->msg, "r", "read", args);
		/* The results of its last turn: a fact there is noted. */
		for (i = req->n; notes && i > 0 &&
		    req->v[i - 1].role == MSG_TOOL; i--) {
			m = &req->v[i - 1];
			for (k = 0; m->text != NULL && k < NFACTS; k++)
				if (strstr(m->text, facts[k]) != NULL)
					bench_call_json(r, "n", "note", "text",
					    facts[k]);
		}
		return;
	}
	buf_init(&b, 0);
	if (j->answer != NULL)
		buf_addf(&b, "%s", j->answer);
	else {
		buf_addf(&b, "Done: read %u files.", j->nreads);
		bench_add_facts(&b, bench_facts_in(req));
	}
	text = buf_release(&b, NULL);
	bench_call_json(r, "c", "complete", "result", text);
	free(text);
}

/* Asked for a summary: it keeps the facts it is sent. */
static void
bench_script_summary(const struct msg_list *req, struct msg_reply *r)
{
	struct buf	b;

	buf_init(&b, 0);
	buf_addf(&b, "Summary: earlier turns read files, nothing else "
	    "happened.");
	bench_add_facts(&b, bench_facts_in(req));
	r->msg.text = buf_release(&b, NULL);
}

/* What a request costs: its characters (messages and tool schemas) at
 * 4 per token, the scripted model's usage too. */
static uint64_t
bench_tokens(const struct agent_action *act)
{
	size_t	i, n = 0;

	for (i = 0; i < act->messages->n; i++)
		n += msg_chars(&act->messages->v[i]);
	for (i = 0; i < act->ntools; i++)
		n += strlen(act->tools[i].name) +
		    strlen(act->tools[i].description) +
		    strlen(act->tools[i].schema);
	return (n + 3) / 4;
}

/* One request to the model, measured. 0, or -1 (a real model failed). */
static int
bench_llm(struct bench *b, struct job *j, unsigned done,
    const struct agent_action *act, int notes, struct msg_reply *r)
{
	struct llm_request	 req;
	struct llm_result	 res;
	struct cell		*c = b->c;
	uint64_t		 tok = bench_tokens(act);

	c->llm_calls++;
	c->tokens_total += tok;
	if (tok > c->tokens_max)
		c->tokens_max = tok;
	c->per_turn = xreallocarray(c->per_turn, c->nturns + 1,
	    sizeof(*c->per_turn));
	c->per_turn[c->nturns++] = tok;
	b->last_facts = bench_facts_in(act->messages);
	b->last_messages = act->messages->n;
	memset(r, 0, sizeof(*r));
	r->msg.role = MSG_ASSISTANT;
	r->usage.input = tok;
	if (b->llm == NULL) {
		if (act->purpose == AGENT_LLM_SUMMARY)
			bench_script_summary(act->messages, r);
		else
			bench_script_turn(j, done, act->messages, notes, r);
		return 0;
	}
	memset(&req, 0, sizeof(req));
	req.agent = j->path;
	req.step = c->llm_calls;
	req.purpose = act->purpose == AGENT_LLM_SUMMARY ?
	    LLM_PURPOSE_SUMMARY : LLM_PURPOSE_TURN;
	req.msgs = act->messages;
	req.tools = act->tools;
	req.ntools = act->ntools;
	if (llm_complete_blocking(b->llm, &req, &res) == -1) {
		xasprintf(&c->error, "%s: %s", llm_err_name(res.err),
		    res.error ? res.error : "?");
		llm_result_free(&res);
		return -1;
	}
	*r = res.reply;
	memset(&res.reply, 0, sizeof(res.reply));
	c->usage_input += r->usage.input;
	llm_result_free(&res);
	return 0;
}

/* The tools: read serves the part files; anything else answers ok. */
static int
bench_tools(struct agent *a, const struct agent_action *act, unsigned *done)
{
	struct agent_result	*res;
	char			**texts, path[64];
	unsigned		 n;
	size_t			 i;
	int			 rc;

	res = xcalloc(act->ncalls + 1, sizeof(*res));
	texts = xcalloc(act->ncalls + 1, sizeof(*texts));
	for (i = 0; i < act->ncalls; i++) {
		if (strcmp(act->calls[i].name, "read") == 0 &&
		    strstr(act->calls[i].args, "part-") != NULL &&
		    sscanf(strstr(act->calls[i].args, "part-"),
		    "part-%u.txt", &n) == 1) {
			texts[i] = bench_file(n);
			(*done)++;
		} else {
			snprintf(path, sizeof(path), "ok");
			texts[i] = xstrdup(path);
		}
		res[i].text = texts[i];
	}
	rc = agent_feed_results(a, res, act->ncalls);
	for (i = 0; i < act->ncalls; i++)
		free(texts[i]);
	free(texts);
	free(res);
	return rc;
}

/* --- one agent ----------------------------------------------------------- */

/* Its agent row and memory node, and what it inherits from the graph. */
static void
bench_node(struct bench *b, struct job *j, struct msg_list *inh)
{
	struct store_agent_new	 an;
	int64_t			 agent;

	memset(&an, 0, sizeof(an));
	an.path = j->path;
	an.profile = b->prof.name;
	an.task = j->task;
	an.inherit_context = j->nparents > 0;
	an.parent_nodes = j->parents;
	an.nparent_nodes = j->nparents;
	if (store_agent_add(b->st, b->run, &an, &agent, &j->node) == -1)
		fatalx("bench: store: %s", store_errmsg(b->st));
	msg_list_init(inh);
	if (j->nparents > 0 &&
	    store_context(b->st, j->node, 0, inh) == -1)
		fatalx("bench: store: %s", store_errmsg(b->st));
}

/* Run j to its end under strategy s; 0, or -1 (a real model failed). */
static int
bench_agent(struct bench *b, struct job *j, const struct strat *s)
{
	struct agent_config	 cfg;
	struct agent_action	 act;
	struct msg_reply	 r;
	struct msg_list		 inh;
	struct agent		*a;
	char			 err[256];
	unsigned		 done = 0;
	int			 rc = 0;

	bench_node(b, j, &inh);
	memset(&cfg, 0, sizeof(cfg));
	cfg.profile = &b->prof;
	cfg.path = j->path;
	cfg.depth = j->nparents > 0;
	cfg.task = j->task;
	cfg.inherited = &inh;
	cfg.limits.max_iterations = j->nreads + 8;
	cfg.context = s->cfg;
	if ((a = agent_new(&cfg, err, sizeof(err))) == NULL)
		fatalx("bench: agent: %s", err);
	b->c->agents++;
	for (;;) {
		switch (agent_next(a, clock_mono_ms(), &act)) {
		case AGENT_NEED_LLM:
			j->rounds++;
			if ((rc = bench_llm(b, j, done, &act, s->notes,
			    &r)) == -1)
				goto out;
			(void)agent_feed_llm(a, &r);
			msg_reply_free(&r);
			continue;
		case AGENT_NEED_TOOLS:
			(void)bench_tools(a, &act, &done);
			continue;
		case AGENT_NEED_DONE:
		default:
			break;
		}
		break;
	}
	j->result = xstrdup(act.result ? act.result : "");
	if (store_node_set_summary(b->st, j->node, j->result,
	    STORE_SUMMARY_RESULT, NULL) == -1)
		fatalx("bench: store: %s", store_errmsg(b->st));
out:
	agent_free(a);
	msg_list_free(&inh);
	return rc;
}

/* --- patterns ------------------------------------------------------------ */

static void
bench_job(struct job *j, const char *path, unsigned first, unsigned n,
    const int64_t *parents, size_t np)
{
	static char	tasks[8][256];
	static int	k;
	char		*t = tasks[k = (k + 1) % 8];

	memset(j, 0, sizeof(*j));
	j->path = path;
	j->first = first;
	j->nreads = n;
	j->parents = parents;
	j->nparents = np;
	if (n > 0)
		snprintf(t, sizeof(tasks[0]), "Read part-%u.txt to part-%u.txt, "
		    "one file per turn, then complete with every line starting "
		    "with FACT that you have seen.", first, first + n - 1);
	else
		snprintf(t, sizeof(tasks[0]), "Complete with every line "
		    "starting with FACT in your context.");
	j->task = t;
}

static void
bench_job_free(struct job *j)
{
	free(j->result);
	j->result = NULL;
}

/* A node with one parent (a pattern's) or several (a merge). */
static int64_t
bench_merge(struct bench *b, const int64_t *parents, size_t n,
    const char *label, const char *summary)
{
	int64_t	node;

	if (store_node_merge(b->st, b->run, parents, n, label, &node) == -1 ||
	    store_node_set_summary(b->st, node, summary, STORE_SUMMARY_RESULT,
	    NULL) == -1)
		fatalx("bench: store: %s", store_errmsg(b->st));
	return node;
}

static int
bench_pat_none(struct bench *b, const struct strat *s, unsigned n)
{
	struct job	j;
	int		rc;

	bench_job(&j, "0.1", 1, n, NULL, 0);
	rc = bench_agent(b, &j, s);
	b->c->rounds = j.rounds;
	bench_job_free(&j);
	return rc;
}

static int
bench_pat_seq(struct bench *b, const struct strat *s, unsigned n,
    int64_t pattern)
{
	struct job	j[4];
	char		path[4][8];
	unsigned	i, per = n / 4;
	int		rc = 0;

	for (i = 0; i < 4 && rc == 0; i++) {
		snprintf(path[i], sizeof(path[i]), "0.%u", i + 1);
		bench_job(&j[i], path[i], 1 + i * per, per,
		    i == 0 ? &pattern : &j[i - 1].node, 1);
		rc = bench_agent(b, &j[i], s);
		b->c->rounds += j[i].rounds;
	}
	while (i-- > 0)
		bench_job_free(&j[i]);
	return rc;
}

static int
bench_pat_explore(struct bench *b, const struct strat *s, unsigned n,
    int64_t pattern)
{
	struct job	j[3], syn;
	struct buf	sum;
	char		path[3][8], *text;
	int64_t		nodes[3], merge;
	unsigned	i, per = n / 3, longest = 0;
	int		rc = 0;

	buf_init(&sum, 0);
	for (i = 0; i < 3 && rc == 0; i++) {
		snprintf(path[i], sizeof(path[i]), "0.%u", i + 1);
		bench_job(&j[i], path[i], 1 + i * per, per, &pattern, 1);
		rc = bench_agent(b, &j[i], s);
		nodes[i] = j[i].node;
		if (j[i].rounds > longest)
			longest = j[i].rounds;
		buf_addf(&sum, "aspect %u: %s\n", i + 1, j[i].result ?
		    j[i].result : "");
	}
	text = buf_release(&sum, NULL);
	if (rc == 0) {
		merge = bench_merge(b, nodes, 3, "parallel_explore merge",
		    text);
		bench_job(&syn, "0.4", 0, 0, &merge, 1);
		rc = bench_agent(b, &syn, s);
		b->c->rounds = longest + syn.rounds;
		bench_job_free(&syn);
	}
	free(text);
	while (i-- > 0)
		bench_job_free(&j[i]);
	return rc;
}

/* The diamond the scripted plan agent returns: A reads the first quarter
 * (the facts), B and C the middle ones after A, D the last after both. */
static char *
bench_plan_text(unsigned n)
{
	unsigned	per = n / 4;
	char		*s;

	xasprintf(&s, "{\"steps\":["
	    "{\"id\":\"A\",\"task\":\"%u\",\"depends_on\":[]},"
	    "{\"id\":\"B\",\"task\":\"%u\",\"depends_on\":[\"A\"]},"
	    "{\"id\":\"C\",\"task\":\"%u\",\"depends_on\":[\"A\"]},"
	    "{\"id\":\"D\",\"task\":\"%u\",\"depends_on\":[\"B\",\"C\"]}]}",
	    1, 1 + per, 1 + 2 * per, 1 + 3 * per);
	return s;
}

/* Step i of the plan once its dependencies ran: its first file is its
 * task (the scripted plan's convention), its parents their nodes. */
static int
bench_plan_step(struct bench *b, const struct strat *s,
    const struct compose_stepdef *v, size_t i, struct job *j,
    unsigned *finish, unsigned per, int64_t pattern)
{
	static char	paths[COMPOSE_MAX_STEPS][24];
	int64_t		parents[COMPOSE_MAX_STEPS];
	unsigned	start = 0;
	size_t		k, np = 0;
	int		rc;

	for (k = 0; k < v[i].ndeps; k++) {
		parents[np++] = j[v[i].deps[k]].node;
		if (finish[v[i].deps[k]] > start)
			start = finish[v[i].deps[k]];
	}
	if (np == 0)
		parents[np++] = pattern;
	snprintf(paths[i], sizeof(paths[i]), "0.%zu", i + 2);
	bench_job(&j[i], paths[i], (unsigned)strtoul(v[i].task, NULL, 10),
	    per, parents, np);
	rc = bench_agent(b, &j[i], s);
	finish[i] = start + j[i].rounds;
	return rc;
}

static int
bench_pat_plan(struct bench *b, const struct strat *s, unsigned n,
    int64_t pattern)
{
	struct compose_stepdef	*v = NULL;
	struct job		 plan, j[COMPOSE_MAX_STEPS], syn;
	unsigned		 finish[COMPOSE_MAX_STEPS] = { 0 }, longest = 0;
	int64_t			 sinks[COMPOSE_MAX_STEPS];
	char			*text, err[256];
	size_t			 nv = 0, i, k, d, ns = 0;
	int			 rc, sink;

	text = bench_plan_text(n);
	bench_job(&plan, "0.1", 0, 0, &pattern, 1);
	plan.answer = text;
	rc = bench_agent(b, &plan, s);
	if (rc == 0 && compose_plan_parse(plan.result, &v, &nv, err,
	    sizeof(err)) == -1)
		fatalx("bench: the plan: %s", err);
	memset(j, 0, sizeof(j));
	/* The diamond is in topological order; compose.c would start B and
	 * C together, here they run one after the other. */
	for (i = 0; i < nv && rc == 0; i++)
		rc = bench_plan_step(b, s, v, i, j, finish, n / 4, pattern);
	for (i = 0; i < nv && rc == 0; i++) {
		for (k = 0, sink = 1; k < nv; k++)
			for (d = 0; d < v[k].ndeps; d++)
				sink &= v[k].deps[d] != i;
		if (sink)
			sinks[ns++] = j[i].node;
		if (finish[i] > longest)
			longest = finish[i];
	}
	if (rc == 0) {
		bench_job(&syn, "0.6", 0, 0, sinks, ns);
		rc = bench_agent(b, &syn, s);
		b->c->rounds = plan.rounds + longest + syn.rounds;
		bench_job_free(&syn);
	}
	for (i = 0; i < nv; i++)
		bench_job_free(&j[i]);
	compose_plan_free(v, nv);
	bench_job_free(&plan);
	free(text);
	return rc;
}

/* --- cells, output ------------------------------------------------------- */

static const unsigned task_turns[NTASKS] = { 12, 24, 48, 96, 192 };

/* One task under one strategy and one pattern, in a run of its own. */
static void
bench_cell(struct bench *b, unsigned t, const struct strat *s,
    enum pattern p, struct cell *c)
{
	struct store_run_params	 rp;
	struct store_agent_new	 an;
	int64_t			 agent, root, pattern = 0;
	char			 task[128];
	uint64_t		 t0;
	int			 rc;

	memset(c, 0, sizeof(*c));
	b->c = c;
	b->last_facts = 0;
	snprintf(task, sizeof(task), "task %u (%u files) %s %s", t + 1,
	    task_turns[t], s->name, pat_names[p]);
	memset(&rp, 0, sizeof(rp));
	rp.task = task;
	memset(&an, 0, sizeof(an));
	an.path = "0";
	an.task = task;
	if (store_run_begin(b->st, &rp, &b->run) == -1 ||
	    store_agent_add(b->st, b->run, &an, &agent, &root) == -1)
		fatalx("bench: store: %s", store_errmsg(b->st));
	if (p != PAT_NONE)
		pattern = bench_merge(b, &root, 1, pat_names[p], task);
	t0 = clock_mono_ns();
	switch (p) {
	case PAT_SEQ:
		rc = bench_pat_seq(b, s, task_turns[t], pattern);
		break;
	case PAT_EXPLORE:
		rc = bench_pat_explore(b, s, task_turns[t], pattern);
		break;
	case PAT_PLAN:
		rc = bench_pat_plan(b, s, task_turns[t], pattern);
		break;
	case PAT_NONE:
	default:
		rc = bench_pat_none(b, s, task_turns[t]);
		break;
	}
	c->wall_ms = (double)(clock_mono_ns() - t0) / 1e6;
	c->facts_seen = bench_nfacts(b->last_facts);
	c->success = rc == 0 && c->facts_seen == NFACTS;
	c->messages = b->last_messages;
	if (store_flush(b->st) == -1)
		fatalx("bench: store: %s", store_errmsg(b->st));
}

static void
bench_json_cell(FILE *f, unsigned t, const char *strat, const char *pat,
    const struct cell *c, int last)
{
	size_t	i;

	fprintf(f, "    {\"task\":%u,\"files\":%u,\"transcript_x_budget\":%.1f,"
	    "\"strategy\":\"%s\",\"pattern\":\"%s\",\"success\":%s,"
	    "\"facts_seen\":%u,\"rounds\":%u,\"llm_calls\":%u,\"agents\":%u,"
	    "\"wall_ms\":%.2f,\"tokens_total\":%llu,\"tokens_max\":%llu,"
	    "\"usage_input\":%llu,\"messages\":%zu,\"error\":", t + 1,
	    task_turns[t], task_turns[t] * FILE_BYTES / 4.0 / BUDGET, strat,
	    pat, c->success ? "true" : "false", c->facts_seen, c->rounds,
	    c->llm_calls, c->agents, c->wall_ms,
	    (unsigned long long)c->tokens_total,
	    (unsigned long long)c->tokens_max,
	    (unsigned long long)c->usage_input, c->messages);
	if (c->error != NULL) {
		json_t *e = json_string(c->error);
		char *s = e != NULL ? json_dumps(e, JSON_ENCODE_ANY) : NULL;

		fprintf(f, "%s", s != NULL ? s : "\"?\"");
		free(s);
		json_decref(e);
	} else
		fprintf(f, "null");
	fprintf(f, ",\"tokens_per_turn\":[");
	for (i = 0; i < c->nturns; i++)
		fprintf(f, "%s%llu", i ? "," : "",
		    (unsigned long long)c->per_turn[i]);
	fprintf(f, "]}%s\n", last ? "" : ",");
}

static void
bench_row(unsigned t, const char *strat, const char *pat,
    const struct cell *c)
{
	printf("| %u (%u files, %.1fx) | %s | %s | %s (%u/3) | %u | %u | %.1f "
	    "| %llu | %llu | %zu |\n", t + 1, task_turns[t],
	    task_turns[t] * FILE_BYTES / 4.0 / BUDGET, strat, pat,
	    c->success ? "yes" : "no", c->facts_seen, c->rounds, c->llm_calls,
	    c->wall_ms, (unsigned long long)c->tokens_total,
	    (unsigned long long)c->tokens_max, c->messages);
}

/* The run's model from the environment, as warren run reads it; NULL and
 * why when no endpoint is configured or it cannot be used. */
static struct llm_engine *
bench_endpoint(char *why, size_t whysz)
{
	struct llm_config	 lc;
	struct llm_engine	*e;
	struct config		*c;
	const char		*url = getenv("WARREN_BASE_URL");

	if (url == NULL || *url == '\0') {
		snprintf(why, whysz, "no endpoint configured (WARREN_BASE_URL "
		    "is unset): the real-model runs were skipped");
		return NULL;
	}
	if ((c = config_new()) == NULL || llm_config_declare(c) == -1 ||
	    config_load_env(c) == -1) {
		snprintf(why, whysz, "reading the environment: %s",
		    c != NULL ? config_error(c) : "out of memory");
		config_free(c);
		return NULL;
	}
	if (llm_config_load(&lc, c, why, whysz) == -1) {
		config_free(c);
		return NULL;
	}
	config_free(c);
	e = llm_engine_new(&lc, why, whysz);
	llm_config_free(&lc);
	return e;
}

static void
bench_matrix(struct bench *b, FILE *json, unsigned max_turns)
{
	struct cell	c;
	unsigned	t, p;
	size_t		s, n = 0, total = 0;

	for (t = 0; t < NTASKS; t++)
		total += task_turns[t] <= max_turns ? NSTRATS * NPATS : 0;
	printf("| task | strategy | pattern | success (facts) | rounds | LLM "
	    "calls | wall ms | tokens sent | largest request | messages |\n"
	    "| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |\n");
	for (t = 0; t < NTASKS; t++)
		for (s = 0; s < NSTRATS && task_turns[t] <= max_turns; s++)
			for (p = 0; p < NPATS; p++) {
				bench_cell(b, t, &strats[s], p, &c);
				bench_row(t, strats[s].name, pat_names[p], &c);
				if (json != NULL)
					bench_json_cell(json, t, strats[s].name,
					    pat_names[p], &c, ++n == total);
				free(c.per_turn);
				free(c.error);
			}
}

/* The same five tasks against the configured model: one agent each. */
static void
bench_real(struct bench *b, FILE *json, unsigned max_turns)
{
	struct cell	c;
	unsigned	t;
	size_t		s, n = 0, total = 0;

	for (t = 0; t < NTASKS; t++)
		total += task_turns[t] <= max_turns ? NSTRATS : 0;
	for (t = 0; t < NTASKS; t++)
		for (s = 0; s < NSTRATS && task_turns[t] <= max_turns; s++) {
			bench_cell(b, t, &strats[s], PAT_NONE, &c);
			bench_row(t, strats[s].name, "none (real model)", &c);
			if (c.error != NULL)
				printf("|   | error: %s |\n", c.error);
			if (json != NULL)
				bench_json_cell(json, t, strats[s].name, "none",
				    &c, ++n == total);
			free(c.per_turn);
			free(c.error);
		}
}

static void
bench_profile(struct bench *b)
{
	const struct profile	*ex = profile_builtin("explore");

	b->prof = *ex;
	b->prof.name = (char *)(uintptr_t)"jetbox";
	b->prof.tools[b->prof.ntools++] = "note";
}

int
main(int argc, char **argv)
{
	struct bench	 b;
	FILE		*json = NULL;
	char		 dir[] = "/tmp/bench_jetbox.XXXXXX", db[64], why[512];
	char		 err[512];
	unsigned	 max_turns = 1000;
	int		 i;

	log_init("bench_jetbox", LOG_LEVEL_WARN);
	for (i = 1; i < argc; i++) {
		if (strcmp(argv[i], "--json") == 0 && i + 1 < argc) {
			if ((json = fopen(argv[++i], "w")) == NULL)
				fatal("bench_jetbox: %s", argv[i]);
		} else if (strcmp(argv[i], "--max-turns") == 0 && i + 1 < argc)
			max_turns = (unsigned)strtoul(argv[++i], NULL, 10);
		else {
			fprintf(stderr, "usage: bench_jetbox [--json FILE] "
			    "[--max-turns N]\n");
			return 2;
		}
	}
	memset(&b, 0, sizeof(b));
	bench_profile(&b);
	if (mkdtemp(dir) == NULL)
		fatal("bench_jetbox: mkdtemp");
	snprintf(db, sizeof(db), "%s/bench.db", dir);
	if ((b.st = store_open(db, STORE_CREATE, err, sizeof(err))) == NULL)
		fatalx("bench_jetbox: %s", err);
	if (json != NULL)
		fprintf(json, "{\"budget_tokens\":%d,\"file_bytes\":%d,"
		    "\"facts\":%d,\n  \"scripted\":[\n", BUDGET, FILE_BYTES,
		    NFACTS);
	printf("Scripted model, context budget %d tokens:\n\n", BUDGET);
	bench_matrix(&b, json, max_turns);
	if ((b.llm = bench_endpoint(why, sizeof(why))) == NULL) {
		printf("\nReal model: skipped: %s\n", why);
		if (json != NULL) {
			json_t *w = json_string(why);
			char *s = json_dumps(w, JSON_ENCODE_ANY);

			fprintf(json, "  ],\n  \"real\":{\"skipped\":%s}}\n", s);
			free(s);
			json_decref(w);
		}
	} else {
		printf("\nReal model (WARREN_BASE_URL):\n\n");
		if (json != NULL)
			fprintf(json, "  ],\n  \"real\":{\"cells\":[\n");
		bench_real(&b, json, max_turns);
		if (json != NULL)
			fprintf(json, "  ]}}\n");
		llm_engine_free(b.llm);
	}
	store_close(b.st);
	unlink(db);
	(void)rmdir(dir);
	if (json != NULL && fclose(json) == EOF)
		fatal("bench_jetbox: writing the JSON");
	return 0;
}

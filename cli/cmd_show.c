/*
 * warren show RUN: a run, its agents (their messages with --messages),
 * merges, layer and the files that run code on the host, as text or JSON.
 * Every stored text came from an LLM or a tool and is escaped before it
 * reaches the terminal.
 */
#include <sys/stat.h>

#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "cli/cmd.h"
#include "cli/cmd_store.h"
#include "cli/layer.h"
#include "common/exitcode.h"
#include "common/jtext.h"
#include "common/str.h"
#include "store/store.h"
#include "workspace/cow.h"
#include "workspace/hostexec.h"

static void
cmd_show_messages(struct store *st, const struct store_agent *a,
    const char *indent)
{
	struct msg_list	 l;
	struct msg	*m;
	char		 pfx[300];
	size_t		 i, j;

	msg_list_init(&l);
	if (store_node_messages(st, a->node, &l, NULL) == -1) {
		printf("%s(messages unreadable: ", indent);
		cmd_print_text(store_errmsg(st), 0);
		printf(")\n");
		return;
	}
	snprintf(pfx, sizeof(pfx), "%s    ", indent);
	for (i = 0; i < l.n; i++) {
		m = &l.v[i];
		printf("%s  [%zu %s", indent, i + 1, msg_role_name(m->role));
		if (m->role == MSG_TOOL) {
			printf(" ");
			cmd_print_text(m->name, 64);
			printf("%s", m->is_error ? ", error" : "");
		}
		printf("]\n");
		cmd_print_block(pfx, m->text, 0);
		for (j = 0; j < m->ncalls; j++) {
			printf("%s-> ", pfx);
			cmd_print_text(m->calls[j].name, 64);
			printf(" ");
			cmd_print_text(m->calls[j].args, 0);
			printf("\n");
		}
	}
	msg_list_free(&l);
}

static void
cmd_show_agent(struct store *st, const struct store_agent *a, int messages)
{
	char	indent[2 * 64 + 1], deeper[2 * 64 + 8];
	char	tin[16], tout[16], dur[32];
	int	d = a->depth > 64 ? 64 : a->depth < 0 ? 0 : a->depth;

	memset(indent, ' ', (size_t)d * 2);
	indent[d * 2] = '\0';
	snprintf(deeper, sizeof(deeper), "%s    ", indent);
	cmd_fmt_tokens(tin, sizeof(tin), a->usage.input);
	cmd_fmt_tokens(tout, sizeof(tout), a->usage.output);
	cmd_fmt_duration(dur, sizeof(dur), a->ended_ms > 0 && a->started_ms > 0 ?
	    a->ended_ms - a->started_ms : 0);
	printf("%s", indent);
	cmd_print_text(a->path, 0);
	printf(" [%s", store_agent_status_name(a->status));
	/* Of a done agent, only auto-complete is worth saying. */
	if (a->exit_reason != NULL && (a->status != STORE_AGENT_DONE ||
	    strcmp(a->exit_reason, "auto_complete") == 0) &&
	    strcmp(a->exit_reason, store_agent_status_name(a->status)) != 0) {
		printf(": ");
		cmd_print_text(a->exit_reason, 80);
	}
	printf("] ");
	cmd_print_text(a->profile != NULL ? a->profile : "-", 32);
	printf(", %llu message%s, tokens %s/%s, %s: ",
	    (unsigned long long)a->nmessages, a->nmessages == 1 ? "" : "s",
	    tin, tout, dur);
	cmd_print_text(a->task, CMD_TASK_WIDTH);
	putchar('\n');
	if (a->summary != NULL) {
		printf("%s  summary:\n", indent);
		cmd_print_block(deeper, a->summary, messages ? 0 :
		    CMD_SUMMARY_MAX);
	} else if (a->result != NULL) {
		printf("%s  %s:\n", indent, a->status == STORE_AGENT_DONE ?
		    "result" : "reason");
		cmd_print_block(deeper, a->result, messages ? 0 :
		    CMD_SUMMARY_MAX);
	}
	if (messages)
		cmd_show_messages(st, a, indent);
}

/* Merge nodes are not agents: list them with their parents' paths. */
static void
cmd_show_merges(const struct store_graph *g)
{
	const struct store_node	*n;
	size_t			 i, j, k;

	for (i = 0; i < g->nnodes; i++) {
		n = &g->nodes[i];
		if (n->kind != STORE_NODE_MERGE)
			continue;
		printf("merge node %lld of", (long long)n->id);
		for (j = 0; j < g->nedges; j++) {
			if (g->edges[j].child != n->id)
				continue;
			for (k = 0; k < g->nnodes; k++)
				if (g->nodes[k].id == g->edges[j].parent)
					break;
			printf(" ");
			if (k < g->nnodes && g->nodes[k].path != NULL)
				cmd_print_text(g->nodes[k].path, 0);
			else
				printf("node %lld", (long long)g->edges[j].parent);
		}
		printf(": ");
		cmd_print_text(n->label, CMD_TASK_WIDTH);
		putchar('\n');
		if (n->summary != NULL) {
			printf("  summary:\n");
			cmd_print_block("    ", n->summary, CMD_SUMMARY_MAX);
		}
	}
}

static json_t *
cmd_json_messages(struct store *st, int64_t node)
{
	struct msg_list	 l;
	json_t		*arr, *m, *calls;
	size_t		 i, j;

	msg_list_init(&l);
	if (store_node_messages(st, node, &l, NULL) == -1 ||
	    (arr = json_array()) == NULL) {
		msg_list_free(&l);
		return NULL;
	}
	for (i = 0; i < l.n; i++) {
		calls = json_array();
		for (j = 0; calls != NULL && j < l.v[i].ncalls; j++)
			json_array_append_new(calls, json_pack("{s:o, s:o, s:o}",
			    "id", jtext(l.v[i].calls[j].id),
			    "name", jtext(l.v[i].calls[j].name),
			    "args", jtext(l.v[i].calls[j].args)));
		m = json_pack("{s:s, s:o, s:o, s:o, s:b, s:o}",
		    "role", msg_role_name(l.v[i].role),
		    "text", jtext(l.v[i].text),
		    "call_id", jtext(l.v[i].call_id),
		    "name", jtext(l.v[i].name),
		    "is_error", l.v[i].is_error,
		    "calls", calls);
		json_array_append_new(arr, m);
	}
	msg_list_free(&l);
	return arr;
}

/* The run's last report of files that run code on the host
 * (run_hostexec.c), or NULL: none was stored (the run has not ended, or
 * an older warren ran it). */
static json_t *
cmd_show_host_files(struct store *st, int64_t run)
{
	struct store_event	 ev;
	json_t			*j;

	if (store_event_last(st, run, HOSTEXEC_EVENT, &ev) == -1)
		return NULL;
	j = ev.detail ? json_loads(ev.detail, 0, NULL) : NULL;
	store_event_free(&ev);
	if (j != NULL && !json_is_object(j)) {
		json_decref(j);
		j = NULL;
	}
	return j;
}

static void
cmd_show_host_text(struct store *st, int64_t run)
{
	json_t	*j;

	printf("\n");
	if ((j = cmd_show_host_files(st, run)) == NULL) {
		printf("files that run code on the host: no check stored (the "
		    "run has not ended, or an older warren ran it)\n");
		return;
	}
	if (json_array_size(json_object_get(j, "files")) == 0)
		printf("files that run code on the host: none created or "
		    "changed by this run\n");
	(void)hostexec_print(stdout, "", j, CMD_HOST_FILES_MAX);
	json_decref(j);
}

static int
cmd_show_json(struct store *st, const struct store_run *r,
    const struct store_agent *v, size_t n, int messages)
{
	json_t	*root, *arr, *a;
	size_t	 i;

	if ((root = json_object()) == NULL || (arr = json_array()) == NULL) {
		json_decref(root);
		return cmd_json_print(NULL);
	}
	json_object_set_new(root, "run", cmd_json_run(r));
	json_object_set_new(root, "agents", arr);
	json_object_set_new(root, "host_files", (a = cmd_show_host_files(st,
	    r->id)) != NULL ? a : json_null());
	for (i = 0; i < n; i++) {
		a = json_pack("{s:o, s:o, s:s, s:o, s:o, s:o, s:o, s:o, s:I,"
		    " s:I, s:I, s:I, s:I}",
		    "path", jtext(v[i].path), "profile", jtext(v[i].profile),
		    "status", store_agent_status_name(v[i].status),
		    "task", jtext(v[i].task),
		    "result", jtext(v[i].result),
		    "exit_reason", jtext(v[i].exit_reason),
		    "summary", jtext(v[i].summary),
		    "call_id", jtext(v[i].call_id),
		    "pid", (json_int_t)v[i].pid,
		    "messages", (json_int_t)v[i].nmessages,
		    "tokens_in", (json_int_t)v[i].usage.input,
		    "tokens_out", (json_int_t)v[i].usage.output,
		    "node", (json_int_t)v[i].node);
		if (a != NULL && messages)
			json_object_set_new(a, "transcript",
			    cmd_json_messages(st, v[i].node));
		json_array_append_new(arr, a);
	}
	return cmd_json_print(root);
}

/* What the run's layer holds, and the commands for it. */
static void
cmd_show_layer(const struct store_run *r)
{
	struct cow		 cw;
	struct cow_changes	 ch;
	char			 err[1024];

	if (r->cow_mode == NULL)
		return;
	if (!layer_pending(r)) {
		printf("changes: %s\n", strcmp(r->cow_state, "empty") == 0 ?
		    "none" : r->cow_state);
		return;
	}
	memset(&ch, 0, sizeof(ch));
	if (layer_open(r, &cw, err, sizeof(err)) == -1 ||
	    cow_changes(&cw, &ch, err, sizeof(err)) == -1) {
		printf("changes: its layer cannot be read: ");
		cmd_print_text(err, 0);
		printf("\n");
		return;
	}
	printf("changes: %zu file%s not applied (%s layer): warren diff "
	    "%lld, warren apply %lld, warren discard %lld\n", ch.n,
	    ch.n == 1 ? "" : "s", r->cow_mode, (long long)r->id,
	    (long long)r->id, (long long)r->id);
	cow_changes_free(&ch);
}

static void
cmd_show_header(const struct store_run *r)
{
	char	tin[16], tout[16], dur[32], when[32], cost[48] = "";

	if (cmd_run_cost(r, cost + 2, sizeof(cost) - 2))
		memcpy(cost, ", ", 2);	/* only where a price is given */
	else
		cost[0] = '\0';
	cmd_fmt_tokens(tin, sizeof(tin), r->usage.input);
	cmd_fmt_tokens(tout, sizeof(tout), r->usage.output);
	cmd_fmt_duration(dur, sizeof(dur), cmd_run_duration(r));
	cmd_fmt_time(when, sizeof(when), r->started_ms);
	printf("run %lld: %s, %llu agents, tokens %s in / %s out%s, %s, "
	    "started %s", (long long)r->id, cmd_run_status(r),
	    (unsigned long long)r->nagents, tin, tout, cost, dur, when);
	if (r->resumes > 0)
		printf(", resumed %d time%s", r->resumes,
		    r->resumes == 1 ? "" : "s");
	printf("\n");
	/* run --continue: the runs of one conversation. */
	if (r->continues > 0)
		printf("continues run %lld\n", (long long)r->continues);
	if (r->continued_by != NULL)
		printf("continued by run %s\n", r->continued_by);
	cmd_show_layer(r);
	printf("task:\n");
	cmd_print_block("    ", r->task, 0);
	if (r->result != NULL) {
		printf("%s:\n", r->status == STORE_RUN_DONE ? "result" : "reason");
		cmd_print_block("    ", r->result, 0);
	}
	printf("\n");
}

static int
cmd_show_run(struct store *st, int64_t run, const struct cmd_store_opts *o)
{
	struct store_run	 r;
	struct store_agent	*v = NULL;
	struct store_graph	 g;
	size_t			 n = 0, i;
	int			 ex;

	if (store_run_get(st, run, &r) == -1)
		return cmd_store_fail(st, "show");
	if (store_agents_list(st, run, &v, &n) == -1 ||
	    store_graph_load(st, run, &g) == -1) {
		ex = cmd_store_fail(st, "show");
		store_agents_free(v, n);
		store_run_free(&r);
		return ex;
	}
	if (o->json)
		ex = cmd_show_json(st, &r, v, n, o->messages);
	else {
		cmd_show_header(&r);
		for (i = 0; i < n; i++)
			cmd_show_agent(st, &v[i], o->messages);
		cmd_show_merges(&g);
		/* A layer's run never wrote the workspace: its diff flags
		 * these files instead. */
		if (r.cow_mode == NULL)
			cmd_show_host_text(st, run);
		ex = ferror(stdout) ? WARREN_EXIT_INTERNAL : WARREN_EXIT_OK;
	}
	store_graph_free(&g);
	store_agents_free(v, n);
	store_run_free(&r);
	return ex;
}

int
cmd_show(int argc, char **argv)
{
	struct cmd_store_opts	 o;
	struct store		*st;
	int64_t			 run;
	int			 ex = WARREN_EXIT_OK;

	if ((st = cmd_store_open_run(argc, argv, ALLOW(OPT_JSON) |
	    ALLOW(OPT_MESSAGES), &o, &run, &ex)) == NULL)
		return ex;
	ex = cmd_show_run(st, run, &o);
	store_close(st);
	return ex;
}

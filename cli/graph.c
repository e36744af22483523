/*
 * A run's memory graph as JSON, Graphviz DOT or Mermaid (graph.h).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "cli/graph.h"
#include "cli/graph_testapi.h"
#include "common/buf.h"
#include "common/str.h"
#include "common/jtext.h"

int
graph_format_parse(const char *name, enum graph_format *f)
{
	if (strcmp(name, "json") == 0)
		*f = GRAPH_JSON;
	else if (strcmp(name, "dot") == 0)
		*f = GRAPH_DOT;
	else if (strcmp(name, "mermaid") == 0)
		*f = GRAPH_MERMAID;
	else {
		errno = EINVAL;
		return -1;
	}
	return 0;
}

char *
graph_clean(const char *s, size_t max)
{
	char	*flat, *out, *p;
	size_t	 len;

	if (s == NULL)
		s = "";
	if ((flat = strdup(s)) == NULL)
		return NULL;
	for (p = flat; *p != '\0'; p++)
		if (*p == '\n' || *p == '\r' || *p == '\t')
			*p = ' ';
	len = strlen(flat);
	if ((out = malloc(max + 1)) != NULL)
		str_escape(out, max + 1, flat, len);
	free(flat);
	return out;
}

char *
graph_quote_dot(const char *s)
{
	struct buf	b;
	int		rc = 0;

	buf_init(&b, 0);
	for (; rc == 0 && *s != '\0'; s++) {
		if (*s == '\n') {		/* a wrapped label's break */
			rc = buf_addstr(&b, "\\n");
			continue;
		}
		if (*s == '"' || *s == '\\')
			rc = buf_addc(&b, '\\');
		if (rc == 0)
			rc = buf_addc(&b, *s);
	}
	if (rc == -1 || buf_cstr(&b) == NULL) {
		buf_free(&b);
		return NULL;
	}
	return buf_release(&b, NULL);
}

/* Mermaid reads entity codes (#quot;) inside quoted labels; HTML tags and
 * markdown would otherwise be interpreted. */
char *
graph_quote_mermaid(const char *s)
{
	struct buf	b;
	int		rc = 0;

	buf_init(&b, 0);
	for (; rc == 0 && *s != '\0'; s++) {
		switch (*s) {
		case '"':
			rc = buf_addstr(&b, "#quot;");
			break;
		case '#':
			rc = buf_addstr(&b, "#35;");
			break;
		case '<':
			rc = buf_addstr(&b, "#lt;");
			break;
		case '>':
			rc = buf_addstr(&b, "#gt;");
			break;
		case '&':
			rc = buf_addstr(&b, "#amp;");
			break;
		case '`':
			rc = buf_addstr(&b, "#96;");
			break;
		case '\n':		/* a wrapped label's break */
			rc = buf_addstr(&b, "<br/>");
			break;
		default:
			rc = buf_addc(&b, *s);
			break;
		}
	}
	if (rc == -1 || buf_cstr(&b) == NULL) {
		buf_free(&b);
		return NULL;
	}
	return buf_release(&b, NULL);
}

const char *
graph_status(const struct store_node *n, char *buf, size_t sz)
{
	const char	*st = store_agent_status_name(n->status);

	if (n->exit_reason != NULL && *n->exit_reason != '\0' &&
	    strcmp(n->exit_reason, st) != 0 &&
	    (n->status != STORE_AGENT_DONE ||
	    strcmp(n->exit_reason, "auto_complete") == 0))
		snprintf(buf, sz, "%s: %s", st, n->exit_reason);
	else
		snprintf(buf, sz, "%s", st);
	return buf;
}

char *
graph_wrap(const char *s, size_t width)
{
	struct buf	 b;
	const char	*word, *p;
	size_t		 col = 0, len;
	int		 rc = 0;

	buf_init(&b, 0);
	for (p = s; rc == 0 && *p != '\0'; ) {
		while (*p == ' ')
			p++;
		for (word = p; *p != '\0' && *p != ' '; p++)
			;
		if ((len = (size_t)(p - word)) == 0)
			break;
		if (col > 0 && col + 1 + len > width) {
			rc = buf_addc(&b, '\n');
			col = 0;
		} else if (col > 0) {
			rc = buf_addc(&b, ' ');
			col++;
		}
		/* A word longer than a line is cut, never inside a UTF-8
		 * sequence. */
		while (rc == 0 && len > width) {
			size_t cut = width;

			while (cut > 1 && (word[cut] & 0xc0) == 0x80)
				cut--;
			if ((rc = buf_add(&b, word, cut)) == 0)
				rc = buf_addc(&b, '\n');
			word += cut;
			len -= cut;
		}
		if (rc == 0)
			rc = buf_add(&b, word, len);
		col += len;
	}
	if (rc == -1 || buf_cstr(&b) == NULL) {
		buf_free(&b);
		return NULL;
	}
	return buf_release(&b, NULL);
}

/*
 * A node's label, cleaned, cut and wrapped: "0.1 explore [failed: timeout]"
 * then its task, or "merge" then the merge's label.
 */
static char *
graph_node_label(const struct store_node *n, size_t max)
{
	char	 status[96], *head, *clean, *wrapped, *out = NULL;
	int	 rc;

	if (n->kind == STORE_NODE_MERGE)
		rc = asprintf(&head, "merge");
	else
		rc = asprintf(&head, "%s %s [%s]", n->path != NULL ? n->path :
		    "?", n->profile != NULL ? n->profile : "-",
		    graph_status(n, status, sizeof(status)));
	if (rc == -1)
		return NULL;
	clean = graph_clean(head, max);
	free(head);
	head = clean;
	clean = graph_clean(n->label, max);
	wrapped = clean != NULL ? graph_wrap(clean, GRAPH_WRAP) : NULL;
	if (head != NULL && wrapped != NULL &&
	    asprintf(&out, "%s\n%s", head, wrapped) == -1)
		out = NULL;
	free(head);
	free(clean);
	free(wrapped);
	return out;
}

static json_t *
graph_json_node(const struct store_node *n)
{
	return json_pack("{s:I, s:o, s:o, s:o, s:o, s:o, s:s, s:o, s:o, s:s,"
	    " s:{s:I, s:I}, s:I, s:I}",
	    "id", (json_int_t)n->id,
	    "agent", n->agent > 0 ? json_integer(n->agent) : json_null(),
	    "path", jtext(n->path),
	    "profile", jtext(n->profile),
	    "status", n->kind == STORE_NODE_MERGE ? json_null() :
	    json_string(store_agent_status_name(n->status)),
	    "exit_reason", jtext(n->exit_reason),
	    "kind", n->kind == STORE_NODE_MERGE ? "merge" : "agent",
	    "label", jtext(n->label),
	    "summary", jtext(n->summary),
	    "summary_kind", store_summary_kind_name(n->summary_kind),
	    "summary_tokens",
	    "input", (json_int_t)n->summary_usage.input,
	    "output", (json_int_t)n->summary_usage.output,
	    "messages", (json_int_t)n->nmessages,
	    "created_ms", (json_int_t)n->created_ms);
}

static int
graph_write_json(FILE *f, const struct store_run *run,
    const struct store_graph *g)
{
	json_t	*root, *nodes, *edges, *x;
	size_t	 i;
	int	 rc = -1;

	root = json_pack("{s:I, s:o, s:s, s:[], s:[]}", "run", (json_int_t)run->id,
	    "task", jtext(run->task), "status",
	    store_run_status_name(run->status), "nodes", "edges");
	if (root == NULL)
		goto out;
	nodes = json_object_get(root, "nodes");
	edges = json_object_get(root, "edges");
	for (i = 0; i < g->nnodes; i++)
		if ((x = graph_json_node(&g->nodes[i])) == NULL ||
		    json_array_append_new(nodes, x) == -1)
			goto out;
	for (i = 0; i < g->nedges; i++)
		if ((x = json_pack("{s:I, s:I}", "parent",
		    (json_int_t)g->edges[i].parent, "child",
		    (json_int_t)g->edges[i].child)) == NULL ||
		    json_array_append_new(edges, x) == -1)
			goto out;
	if (json_dumpf(root, f, JSON_INDENT(2)) == -1 || fputc('\n', f) == EOF)
		goto out;
	rc = 0;
out:
	json_decref(root);
	if (rc == -1 && errno == 0)
		errno = ENOMEM;
	return rc;
}

/* One quoted, cleaned attribute value for DOT. */
static char *
graph_dot_text(const char *s, size_t max)
{
	char	*c, *q;

	if ((c = graph_clean(s, max)) == NULL)
		return NULL;
	q = graph_quote_dot(c);
	free(c);
	return q;
}

/* A failed agent is red, a cancelled or unfinished one dashed. */
static const char *
graph_dot_style(const struct store_node *n)
{
	if (n->kind == STORE_NODE_MERGE)
		return "";
	switch (n->status) {
	case STORE_AGENT_FAILED:
		return ", color=red, fontcolor=red, penwidth=2";
	case STORE_AGENT_CANCELLED:
	case STORE_AGENT_PENDING:
	case STORE_AGENT_RUNNING:
		return ", style=\"rounded,dashed\"";
	case STORE_AGENT_DONE:
	default:
		return "";
	}
}

static int
graph_write_dot(FILE *f, const struct store_run *run,
    const struct store_graph *g)
{
	const struct store_node	*n;
	char			*label, *tip, *task, *raw;
	size_t			 i;

	if ((task = graph_dot_text(run->task, GRAPH_LABEL_MAX)) == NULL)
		return -1;
	fprintf(f, "digraph \"warren run %lld\" {\n"
	    "\tlabel=\"run %lld: %s\";\n\tlabelloc=t;\n\trankdir=TB;\n"
	    "\tnode [shape=box, style=rounded, fontname=\"monospace\"];\n",
	    (long long)run->id, (long long)run->id, task);
	free(task);
	for (i = 0; i < g->nnodes; i++) {
		n = &g->nodes[i];
		if ((raw = graph_node_label(n, GRAPH_LABEL_MAX)) == NULL)
			return -1;
		label = graph_quote_dot(raw);
		free(raw);
		tip = graph_dot_text(n->summary != NULL ? n->summary : "",
		    GRAPH_TOOLTIP_MAX);
		if (label == NULL || tip == NULL) {
			free(label);
			free(tip);
			return -1;
		}
		fprintf(f, "\tn%lld [label=\"%s\\n%llu message%s%s\", "
		    "tooltip=\"%s\"%s%s];\n", (long long)n->id, label,
		    (unsigned long long)n->nmessages, n->nmessages == 1 ? "" :
		    "s", n->summary != NULL ?
		    ", summarised" : "", tip, n->kind == STORE_NODE_MERGE ?
		    ", shape=ellipse" : "", graph_dot_style(n));
		free(label);
		free(tip);
	}
	for (i = 0; i < g->nedges; i++)
		fprintf(f, "\tn%lld -> n%lld;\n", (long long)g->edges[i].parent,
		    (long long)g->edges[i].child);
	fprintf(f, "}\n");
	return ferror(f) ? -1 : 0;
}

static int
graph_write_mermaid(FILE *f, const struct store_graph *g)
{
	const struct store_node	*n;
	char			*label, *raw;
	size_t			 i;

	fprintf(f, "flowchart TD\n");
	for (i = 0; i < g->nnodes; i++) {
		n = &g->nodes[i];
		if ((raw = graph_node_label(n, GRAPH_LABEL_MAX)) == NULL)
			return -1;
		label = graph_quote_mermaid(raw);
		free(raw);
		if (label == NULL)
			return -1;
		if (n->kind == STORE_NODE_MERGE)
			fprintf(f, "\tn%lld([\"%s\"])\n", (long long)n->id,
			    label);
		else
			fprintf(f, "\tn%lld[\"%s\"]\n", (long long)n->id, label);
		free(label);
		if (n->kind == STORE_NODE_AGENT &&
		    n->status != STORE_AGENT_DONE)
			fprintf(f, "\tclass n%lld %s\n", (long long)n->id,
			    n->status == STORE_AGENT_FAILED ? "failed" :
			    "unfinished");
	}
	fprintf(f, "\tclassDef failed stroke:#c00,stroke-width:3px,"
	    "color:#c00\n\tclassDef unfinished stroke-dasharray:5 5\n");
	for (i = 0; i < g->nedges; i++)
		fprintf(f, "\tn%lld --> n%lld\n", (long long)g->edges[i].parent,
		    (long long)g->edges[i].child);
	return ferror(f) ? -1 : 0;
}

int
graph_write(FILE *f, enum graph_format fmt, const struct store_run *run,
    const struct store_graph *g)
{
	errno = 0;
	switch (fmt) {
	case GRAPH_JSON:
		return graph_write_json(f, run, g);
	case GRAPH_DOT:
		return graph_write_dot(f, run, g);
	case GRAPH_MERMAID:
		return graph_write_mermaid(f, g);
	}
	errno = EINVAL;
	return -1;
}

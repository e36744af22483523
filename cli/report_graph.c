/*
 * The report's memory graph, drawn as SVG: each node in the layer of its
 * longest path from a root (so a merge sits below every agent it joins),
 * nodes of a layer side by side in creation order, wrapped to rows of
 * REPORT_GR_ROW nodes so the picture fits a page however many agents a
 * layer holds (60 siblings are 15 rows, not 16,790 px), edges as curves
 * from parent to child. A node shows its path, profile and status (a failed
 * agent red, an unfinished one dashed), its task wrapped, and its summary
 * as a tooltip.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/graph.h"
#include "cli/report.h"
#include "common/xmalloc.h"

#define REPORT_GR_GAP		30	/* between nodes of a layer */
#define REPORT_GR_VGAP		50	/* between layers */
#define REPORT_GR_WRAP		34	/* columns of a label's lines */
#define REPORT_GR_ROW		4	/* nodes of a row: 4 boxes are 1,130
					   px, a page's width */
#define REPORT_GR_RGAP		20	/* between the rows of a layer */

struct report_place {
	int	 layer, col;
	int	 x, y, h;
	char	*head, *body;	/* cleaned, not yet HTML-escaped */
};

/* Nodes come in id order (store_graph_load). */
static size_t
report_node_index(const struct store_graph *g, int64_t id)
{
	size_t	lo = 0, hi = g->nnodes, mid;

	while (lo < hi) {
		mid = lo + (hi - lo) / 2;
		if (g->nodes[mid].id == id)
			return mid;
		if (g->nodes[mid].id < id)
			lo = mid + 1;
		else
			hi = mid;
	}
	return SIZE_MAX;
}

/* Longest path from a root; a bounded number of passes, so a damaged
 * (cyclic) graph still ends. */
static void
report_layers(const struct store_graph *g, struct report_place *p)
{
	size_t	pass, i, *a, *b;
	int	changed = 1;

	a = xcalloc(g->nedges + 1, sizeof(*a));
	b = xcalloc(g->nedges + 1, sizeof(*b));
	for (i = 0; i < g->nedges; i++) {
		a[i] = report_node_index(g, g->edges[i].parent);
		b[i] = report_node_index(g, g->edges[i].child);
	}
	for (pass = 0; changed && pass <= g->nnodes; pass++) {
		changed = 0;
		for (i = 0; i < g->nedges; i++) {
			if (a[i] == SIZE_MAX || b[i] == SIZE_MAX ||
			    p[b[i]].layer > p[a[i]].layer)
				continue;
			p[b[i]].layer = p[a[i]].layer + 1;
			changed = 1;
		}
	}
	free(a);
	free(b);
}

static int
report_lines(const char *s)
{
	int	n = 1;

	for (; *s != '\0'; s++)
		n += *s == '\n';
	return n;
}

static void
report_label(const struct store_node *n, struct report_place *p)
{
	char	status[96], *raw, *clean;

	if (n->kind == STORE_NODE_MERGE)
		xasprintf(&raw, "merge");
	else
		xasprintf(&raw, "%s %s [%s]", n->path != NULL ? n->path : "?",
		    n->profile != NULL ? n->profile : "-",
		    graph_status(n, status, sizeof(status)));
	p->head = graph_clean(raw, GRAPH_LABEL_MAX);
	free(raw);
	clean = graph_clean(n->label, GRAPH_LABEL_MAX);
	p->body = clean != NULL ? graph_wrap(clean, REPORT_GR_WRAP) : NULL;
	free(clean);
	if (p->head == NULL || p->body == NULL)
		abort();	/* out of memory, as xmalloc would */
	p->h = (1 + report_lines(p->body) + 1) * REPORT_GR_LINE + 12;
}

/* The nodes of one layer, REPORT_GR_ROW a row, from y; the next y. */
static int
report_place_layer(const struct store_graph *g, struct report_place *p,
    int layer, int y, int *w)
{
	int	tall = 0, col = 0;
	size_t	i;

	for (i = 0; i < g->nnodes; i++) {
		if (p[i].layer != layer)
			continue;
		if (col == REPORT_GR_ROW) {
			y += tall + REPORT_GR_RGAP;
			tall = col = 0;
		}
		p[i].x = 10 + col++ * (REPORT_GR_BOX + REPORT_GR_GAP);
		p[i].y = y;
		if (p[i].h > tall)
			tall = p[i].h;
		if (p[i].x + REPORT_GR_BOX + 10 > *w)
			*w = p[i].x + REPORT_GR_BOX + 10;
	}
	return y + tall + REPORT_GR_VGAP;
}

/* Place every node; the picture's size in *w, *h. */
static void
report_place(const struct store_graph *g, struct report_place *p, int *w,
    int *h)
{
	int	layer, nlayers = 0, y = 10;
	size_t	i;

	report_layers(g, p);
	for (i = 0; i < g->nnodes; i++) {
		report_label(&g->nodes[i], &p[i]);
		if (p[i].layer + 1 > nlayers)
			nlayers = p[i].layer + 1;
	}
	*w = 0;
	for (layer = 0; layer < nlayers; layer++)
		y = report_place_layer(g, p, layer, y, w);
	*h = y;
}

static void
report_tspans(FILE *f, int x, const char *s)
{
	const char	*nl;
	char		*line;

	for (; s != NULL; s = nl != NULL ? nl + 1 : NULL) {
		nl = strchr(s, '\n');
		xasprintf(&line, "%.*s", nl != NULL ? (int)(nl - s) :
		    (int)strlen(s), s);
		fprintf(f, "<tspan x=\"%d\" dy=\"%d\">", x, REPORT_GR_LINE);
		report_esc(f, line, 0);
		fprintf(f, "</tspan>");
		free(line);
	}
}

static void
report_node_svg(FILE *f, const struct store_node *n,
    const struct report_place *p)
{
	fprintf(f, "<g class=\"node %s\"><title>", n->kind == STORE_NODE_MERGE ?
	    "merge" : store_agent_status_name(n->status));
	report_esc(f, n->summary != NULL ? n->summary : "(no summary)",
	    GRAPH_TOOLTIP_MAX);
	fprintf(f, "</title><rect x=\"%d\" y=\"%d\" width=\"%d\" height=\"%d\""
	    " rx=\"%d\"/>\n<text x=\"%d\" y=\"%d\"><tspan class=\"head\" "
	    "x=\"%d\" dy=\"%d\">", p->x, p->y, REPORT_GR_BOX, p->h,
	    n->kind == STORE_NODE_MERGE ? 20 : 6, p->x + 8, p->y + 4, p->x + 8,
	    REPORT_GR_LINE);
	report_esc(f, p->head, 0);
	fprintf(f, "</tspan>");
	report_tspans(f, p->x + 8, p->body);
	fprintf(f, "<tspan class=\"dim\" x=\"%d\" dy=\"%d\">%llu message%s"
	    "</tspan></text></g>\n", p->x + 8, REPORT_GR_LINE,
	    (unsigned long long)n->nmessages, n->nmessages == 1 ? "" : "s");
}

static void
report_edges_svg(FILE *f, const struct store_graph *g,
    const struct report_place *p)
{
	size_t	i, a, b;
	int	x0, y0, x1, y1;

	for (i = 0; i < g->nedges; i++) {
		a = report_node_index(g, g->edges[i].parent);
		b = report_node_index(g, g->edges[i].child);
		if (a == SIZE_MAX || b == SIZE_MAX)
			continue;
		x0 = p[a].x + REPORT_GR_BOX / 2;
		y0 = p[a].y + p[a].h;
		x1 = p[b].x + REPORT_GR_BOX / 2;
		y1 = p[b].y;
		fprintf(f, "<path class=\"edge\" d=\"M%d %d C%d %d %d %d %d %d\""
		    " marker-end=\"url(#arrow)\"/>\n", x0, y0, x0,
		    y0 + REPORT_GR_VGAP / 2, x1, y1 - REPORT_GR_VGAP / 2, x1,
		    y1 - 2);
	}
}

int
report_graph(struct report *r)
{
	const struct store_graph *g = &r->graph;
	struct report_place	*p;
	size_t			 i;
	int			 w, h;

	p = xcalloc(g->nnodes + 1, sizeof(*p));
	report_place(g, p, &w, &h);
	fprintf(r->f, "<section id=\"graph\"><h2>Memory graph</h2>\n"
	    "<svg class=\"graph\" xmlns=\"http://www.w3.org/2000/svg\" "
	    "width=\"%d\" height=\"%d\" viewBox=\"0 0 %d %d\">\n<defs><marker "
	    "id=\"arrow\" viewBox=\"0 0 10 10\" refX=\"9\" refY=\"5\" "
	    "markerWidth=\"7\" markerHeight=\"7\" orient=\"auto\"><path "
	    "d=\"M0 0L10 5L0 10z\"/></marker></defs>\n", w, h, w, h);
	report_edges_svg(r->f, g, p);
	for (i = 0; i < g->nnodes; i++)
		report_node_svg(r->f, &g->nodes[i], &p[i]);
	fprintf(r->f, "</svg></section>\n");
	for (i = 0; i < g->nnodes; i++) {
		free(p[i].head);
		free(p[i].body);
	}
	free(p);
	return ferror(r->f) ? -1 : 0;
}

/*
 * Printing a run's memory graph: JSON (jansson), Graphviz DOT and Mermaid.
 * Every label came from an LLM or a tool: control characters and invalid
 * UTF-8 are escaped (common/str.h), then the text is quoted for the target
 * language, so no label can end a string, inject an attribute or a node.
 */
#ifndef WARREN_GRAPH_H
#define WARREN_GRAPH_H

#include <stdio.h>

#include "store/store.h"

enum graph_format {
	GRAPH_JSON = 0,
	GRAPH_DOT,
	GRAPH_MERMAID,
};

/* Longest label, in bytes, before it is cut with "..."; it wraps at
 * GRAPH_WRAP columns. */
#define GRAPH_LABEL_MAX		120
#define GRAPH_TOOLTIP_MAX	600
/* Columns of a wrapped label's lines. */
#define GRAPH_WRAP		36

/* graph.c */
int	graph_format_parse(const char *name, enum graph_format *f);
/* -1 with errno on an allocation or write error. */
int	graph_write(FILE *f, enum graph_format fmt, const struct store_run *run,
	    const struct store_graph *g);
/* Terminal-safe one-line text: newlines become spaces, the rest escaped,
 * cut at max bytes; malloc'd. */
char	*graph_clean(const char *s, size_t max);
/* "done", "failed: timeout": a node's status and the exit reason when it
 * says more (buf, escaped by the caller). */
const char *graph_status(const struct store_node *n, char *buf, size_t sz);
/* s with '\n' between words so no line is over width (a longer word is
 * cut); malloc'd. */
char	*graph_wrap(const char *s, size_t width);

#endif

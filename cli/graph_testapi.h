/*
 * What tests call directly of the graph writers: production reaches each
 * only through the DOT and Mermaid writers of graph.c. Only tests and
 * the files defining these include this (scripts/check-exports.py).
 */

#ifndef WARREN_GRAPH_TESTAPI_H
#define WARREN_GRAPH_TESTAPI_H

#include "cli/graph.h"

/* The text quoted for the language, without the surrounding quotes; a
 * newline becomes the language's line break. */
char	*graph_quote_dot(const char *s);
char	*graph_quote_mermaid(const char *s);

#endif

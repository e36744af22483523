/*
 * `warren report`: one self-contained HTML file of a run (docs/report.md):
 * a timeline of its agents (LLM waits and tool calls), its memory graph,
 * tokens per agent and each agent's transcript, folded.
 *
 * Everything read from the store came from an LLM, a tool or a workspace:
 * every string is made valid, visible UTF-8 (common/str.h) and then
 * HTML-escaped before it is written, in text and in attributes alike. The
 * page loads nothing (a Content-Security-Policy forbids it) and its one
 * script is allowed by its hash only, so text that escaped the escaping
 * still could not run.
 */
#ifndef WARREN_REPORT_H
#define WARREN_REPORT_H

#include <stdint.h>
#include <stdio.h>

#include "store/store.h"

/* Longest message text shown whole in a transcript, in bytes. */
#define REPORT_TEXT_MAX		(64 * 1024)
/* Geometry of the pictures, in SVG pixels. */
#define REPORT_TL_LABEL		220	/* the timeline's name column; its
					   time axis takes the rest of the
					   page (percentages) */
#define REPORT_TL_ROW		24
#define REPORT_GR_BOX		250	/* a graph node's width */
#define REPORT_GR_LINE		15	/* a line of its label */

/* One bar of the timeline. */
struct report_bar {
	int64_t	 start_ms, end_ms;
	int	 kind;			/* REPORT_BAR_* */
	char	*title;			/* tooltip, raw (escaped on output) */
};
#define REPORT_BAR_LLM		0
#define REPORT_BAR_TOOL		1
#define REPORT_BAR_TOOL_ERR	2

struct report {
	FILE			*f;
	struct store		*st;
	struct store_run	 run;
	struct store_agent	*agents;
	size_t			 nagents;
	struct store_graph	 graph;
	struct store_event	*events;
	size_t			 nevents;
	int64_t			 t0, t1;	/* the timeline's span */
};

/* report.c */
/* Write the report of run to f; -1 with the reason in err. */
int	report_write(FILE *f, struct store *st, int64_t run, char *err,
	    size_t errsz);
/* s as HTML text (valid UTF-8, controls visible, &<>"' escaped), cut at
 * max bytes of input (0: whole). */
void	report_esc(FILE *f, const char *s, size_t max);

/* report_timeline.c */
/* The bars of agent a, from the run's events; malloc'd, *n of them. */
int	report_timeline(struct report *r);

/* report_graph.c */
int	report_graph(struct report *r);

#endif

/*
 * `warren report`: the page around the pictures (report.h): the run's
 * header, tokens per agent, each agent's transcript in a <details>, the
 * style and the one script, all inline.
 */
#include <sys/types.h>

#include <sha2.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cmd.h"
#include "cli/graph.h"
#include "cli/cmd_store.h"
#include "cli/report.h"
#include "common/str.h"
#include "common/version.h"
#include "common/xmalloc.h"

static const char report_css[] =
	"body{font:14px/1.4 system-ui,sans-serif;margin:1.5em;color:#222}"
	"h1{font-size:1.3em}h2{font-size:1.1em;margin-top:1.5em}"
	"pre{white-space:pre-wrap;word-break:break-word;background:#f6f6f6;"
	"padding:.4em;margin:.2em 0}"
	"table{border-collapse:collapse}td,th{padding:2px 8px;text-align:left;"
	"border-bottom:1px solid #ddd}td.n{text-align:right}"
	".failed{color:#b00}.dim{fill:#777;color:#777}"
	"svg text{font:12px monospace}svg .tick{stroke:#eee;fill:#777}"
	"svg text.tick{stroke:none}"
	/* The graph shrinks to a page narrower than its rows; the timeline's
	 * axis is the page's width beside the names. */
	"svg.graph{max-width:100%;height:auto}"
	".tl{display:grid;grid-template-columns:220px minmax(0,1fr)}"
	"rect.life{fill:#e8eef7}rect.life.failed{fill:#f7dede}"
	"rect.queued{fill:#f2f2f2}rect.llm{fill:#4a7fd0}"
	"rect.tool{fill:#e39a2b}rect.toolerr{fill:#c22}"
	".k{display:inline-block;width:1em;height:.7em;margin:0 .3em 0 1em}"
	".k.llm{background:#4a7fd0}.k.tool{background:#e39a2b}"
	".k.toolerr{background:#c22}.k.queued{background:#ddd}"
	"g.node rect{fill:#fff;stroke:#2a7;stroke-width:1.5}"
	"g.node.failed rect{stroke:#c00;stroke-width:3}"
	"g.node.failed .head{fill:#c00}"
	"g.node.running rect,g.node.pending rect,g.node.cancelled rect"
	"{stroke:#888;stroke-dasharray:5 4}"
	"g.node.merge rect{stroke:#88a;fill:#f4f4fb}"
	".head{font-weight:bold}path.edge{fill:none;stroke:#999}"
	"details{margin:.4em 0;border-left:3px solid #ccd;padding-left:.6em}"
	"summary{cursor:pointer}.role{font-weight:bold;margin-top:.5em}"
	".call{color:#555}";

/* The page's one script: it opens the transcript a timeline row links
 * to, and says in the page that it ran (report-ready) or what failed
 * (report-error), which a test reads from the DOM. */
static const char report_js[] =
	"(function(){var s=document.getElementById('report-status');"
	"window.onerror=function(m){s.textContent='report-error: '+m;};"
	"function show(){var id=decodeURIComponent(location.hash.slice(1));"
	"var e=id?document.getElementById(id):null;"
	"if(e&&e.tagName==='DETAILS')e.open=true;}"
	"window.addEventListener('hashchange',show);show();"
	"s.textContent='report-ready';})();";

void
report_esc(FILE *f, const char *s, size_t max)
{
	char		*e;
	const char	*p;
	size_t		 len;

	if (s == NULL)
		return;
	len = strlen(s);
	if (max > 0 && len > max)
		len = max;
	if ((e = str_escape_dup(s, len, STR_ESC_KEEP_NL)) == NULL)
		abort();	/* out of memory, as xmalloc would */
	for (p = e; *p != '\0'; p++) {
		switch (*p) {
		case '&':
			fputs("&amp;", f);
			break;
		case '<':
			fputs("&lt;", f);
			break;
		case '>':
			fputs("&gt;", f);
			break;
		case '"':
			fputs("&quot;", f);
			break;
		case '\'':
			fputs("&#39;", f);
			break;
		default:
			fputc(*p, f);
			break;
		}
	}
	if (max > 0 && strlen(s) > max)
		fprintf(f, "\xe2\x80\xa6 (%zu bytes more)", strlen(s) - max);
	free(e);
}

/* The script's SHA-256 in base64, for the Content-Security-Policy. */
static void
report_js_hash(char *out, size_t outsz)
{
	static const char b64[] =
	    "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
	SHA2_CTX	ctx;
	uint8_t		d[SHA256_DIGEST_LENGTH + 2];
	size_t		i, o = 0;
	uint32_t	v;

	memset(d, 0, sizeof(d));
	SHA256Init(&ctx);
	SHA256Update(&ctx, (const uint8_t *)report_js, strlen(report_js));
	SHA256Final(d, &ctx);
	for (i = 0; i < SHA256_DIGEST_LENGTH && o + 5 < outsz; i += 3) {
		v = (uint32_t)d[i] << 16 | (uint32_t)d[i + 1] << 8 | d[i + 2];
		out[o++] = b64[v >> 18 & 63];
		out[o++] = b64[v >> 12 & 63];
		out[o++] = i + 1 < SHA256_DIGEST_LENGTH ? b64[v >> 6 & 63] : '=';
		out[o++] = i + 2 < SHA256_DIGEST_LENGTH ? b64[v & 63] : '=';
	}
	out[o] = '\0';
}

static void
report_head(struct report *r)
{
	char	hash[64], dur[32], tin[16], tout[16], cost[48] = "";

	report_js_hash(hash, sizeof(hash));
	fprintf(r->f, "<!DOCTYPE html>\n<html lang=\"en\"><head>"
	    "<meta charset=\"utf-8\">\n<meta http-equiv=\"Content-Security-"
	    "Policy\" content=\"default-src 'none'; style-src 'unsafe-inline';"
	    " script-src 'sha256-%s'\">\n<title>warren run %lld</title>\n"
	    "<style>%s</style></head><body>\n<h1>warren run %lld: ", hash,
	    (long long)r->run.id, report_css, (long long)r->run.id);
	report_esc(r->f, r->run.task, 300);
	cmd_fmt_duration(dur, sizeof(dur), r->t1 - r->t0);
	cmd_fmt_tokens(tin, sizeof(tin), r->run.usage.input);
	cmd_fmt_tokens(tout, sizeof(tout), r->run.usage.output);
	if (cmd_run_cost(&r->run, cost + 7, sizeof(cost) - 7))
		memcpy(cost, ", cost ", 7);	/* only where a price is given */
	else
		cost[0] = '\0';
	fprintf(r->f, "</h1>\n<p><span class=\"%s\">%s</span>, %llu agent%s, "
	    "%s, tokens %s in / %s out%s, model ",
	    store_run_status_name(r->run.status),
	    store_run_status_name(r->run.status),
	    (unsigned long long)r->nagents, r->nagents == 1 ? "" : "s", dur,
	    tin, tout, cost);
	report_esc(r->f, r->run.model != NULL ? r->run.model : "-", 100);
	fprintf(r->f, ", workspace ");
	report_esc(r->f, r->run.workspace != NULL ? r->run.workspace : "-",
	    1000);
	fprintf(r->f, ".</p>\n<h2>Result</h2><pre>");
	report_esc(r->f, r->run.result != NULL ? r->run.result : "(none)",
	    REPORT_TEXT_MAX);
	fprintf(r->f, "</pre>\n");
}

static void
report_tokens(struct report *r)
{
	const struct store_agent	*a;
	char				 dur[32], status[96];
	size_t				 i;

	fprintf(r->f, "<section id=\"tokens\"><h2>Agents and tokens</h2>\n"
	    "<table><tr><th>agent</th><th>profile</th><th>status</th>"
	    "<th>tokens in</th><th>tokens out</th><th>messages</th>"
	    "<th>time</th></tr>\n");
	for (i = 0; i < r->nagents; i++) {
		a = &r->agents[i];
		snprintf(status, sizeof(status), "%s",
		    store_agent_status_name(a->status));
		cmd_fmt_duration(dur, sizeof(dur), a->ended_ms > 0 &&
		    a->started_ms > 0 ? a->ended_ms - a->started_ms : 0);
		fprintf(r->f, "<tr><td><a href=\"#agent-");
		report_esc(r->f, a->path, 64);
		fprintf(r->f, "\">");
		report_esc(r->f, a->path, 64);
		fprintf(r->f, "</a></td><td>");
		report_esc(r->f, a->profile != NULL ? a->profile : "-", 64);
		fprintf(r->f, "</td><td class=\"%s\">%s</td><td class=\"n\">"
		    "%llu</td><td class=\"n\">%llu</td><td class=\"n\">%llu</td>"
		    "<td class=\"n\">%s</td></tr>\n", status, status,
		    (unsigned long long)a->usage.input,
		    (unsigned long long)a->usage.output,
		    (unsigned long long)a->nmessages, dur);
	}
	fprintf(r->f, "</table></section>\n");
}

static void
report_msg(struct report *r, const struct msg *m)
{
	size_t	i;

	fprintf(r->f, "<div class=\"role%s\">%s", m->is_error ? " failed" : "",
	    msg_role_name(m->role));
	if (m->role == MSG_TOOL) {
		fprintf(r->f, " (");
		report_esc(r->f, m->name != NULL ? m->name : "?", 64);
		fprintf(r->f, "%s)", m->is_error ? ", error" : "");
	}
	fprintf(r->f, "</div>\n");
	if (m->text != NULL && *m->text != '\0') {
		fprintf(r->f, "<pre>");
		report_esc(r->f, m->text, REPORT_TEXT_MAX);
		fprintf(r->f, "</pre>\n");
	}
	for (i = 0; i < m->ncalls; i++) {
		fprintf(r->f, "<pre class=\"call\">&#8594; ");
		report_esc(r->f, m->calls[i].name, 64);
		fputc(' ', r->f);
		report_esc(r->f, m->calls[i].args, REPORT_TEXT_MAX);
		fprintf(r->f, "</pre>\n");
	}
}

static int
report_transcript(struct report *r, const struct store_agent *a)
{
	struct msg_list	 l;
	size_t		 i;

	msg_list_init(&l);
	if (store_node_messages(r->st, a->node, &l, NULL) == -1)
		return -1;
	fprintf(r->f, "<details id=\"agent-");
	report_esc(r->f, a->path, 64);
	fprintf(r->f, "\"><summary>");
	report_esc(r->f, a->path, 64);
	fputc(' ', r->f);
	report_esc(r->f, a->profile != NULL ? a->profile : "-", 64);
	fprintf(r->f, " <span class=\"%s\">[%s]</span>, %zu messages: ",
	    store_agent_status_name(a->status),
	    store_agent_status_name(a->status), l.n);
	report_esc(r->f, a->task, 200);
	fprintf(r->f, "</summary>\n");
	if (a->result != NULL) {
		fprintf(r->f, "<div class=\"role\">%s</div><pre>",
		    a->status == STORE_AGENT_DONE ? "result" : "reason");
		report_esc(r->f, a->result, REPORT_TEXT_MAX);
		fprintf(r->f, "</pre>\n");
	}
	for (i = 0; i < l.n; i++)
		report_msg(r, &l.v[i]);
	fprintf(r->f, "</details>\n");
	msg_list_free(&l);
	return 0;
}

/* The run's span: from its start to the last thing recorded. */
static void
report_span(struct report *r)
{
	size_t	i;

	r->t0 = r->run.started_ms;
	r->t1 = r->run.ended_ms > r->t0 ? r->run.ended_ms : r->t0;
	for (i = 0; i < r->nagents; i++) {
		if (r->agents[i].ended_ms > r->t1)
			r->t1 = r->agents[i].ended_ms;
		if (r->agents[i].created_ms > 0 &&
		    r->agents[i].created_ms < r->t0)
			r->t0 = r->agents[i].created_ms;
	}
	for (i = 0; i < r->nevents; i++)
		if (r->events[i].time_ms > r->t1)
			r->t1 = r->events[i].time_ms;
	if (r->t1 <= r->t0)
		r->t1 = r->t0 + 1;
}

static int
report_load(struct report *r, int64_t run)
{
	if (store_run_get(r->st, run, &r->run) == -1)
		return -1;
	if (store_agents_list(r->st, run, &r->agents, &r->nagents) == -1 ||
	    store_graph_load(r->st, run, &r->graph) == -1 ||
	    store_events_list(r->st, run, &r->events, &r->nevents) == -1)
		return -1;
	report_span(r);
	return 0;
}

static void
report_free(struct report *r)
{
	store_run_free(&r->run);
	store_agents_free(r->agents, r->nagents);
	store_graph_free(&r->graph);
	store_events_free(r->events, r->nevents);
}

int
report_write(FILE *f, struct store *st, int64_t run, char *err,
    size_t errsz)
{
	struct report	r;
	size_t		i;
	int		rc = -1;

	memset(&r, 0, sizeof(r));
	r.f = f;
	r.st = st;
	if (report_load(&r, run) == -1) {
		snprintf(err, errsz, "%s", store_errmsg(st));
		goto out;
	}
	report_head(&r);
	if (report_timeline(&r) == -1 || report_graph(&r) == -1)
		goto write;
	report_tokens(&r);
	fprintf(f, "<section id=\"transcripts\"><h2>Transcripts</h2>\n");
	for (i = 0; i < r.nagents; i++)
		if (report_transcript(&r, &r.agents[i]) == -1) {
			snprintf(err, errsz, "%s", store_errmsg(st));
			goto out;
		}
	fprintf(f, "</section>\n<p class=\"dim\">warren %s. <span "
	    "id=\"report-status\">report-static</span></p>\n<script>%s"
	    "</script>\n</body></html>\n", WARREN_VERSION, report_js);
write:
	if (fflush(f) == EOF || ferror(f))
		snprintf(err, errsz, "writing the report failed");
	else
		rc = 0;
out:
	report_free(&r);
	return rc;
}

/*
 * The option table of run, resume and ask (opttab.h), and its two
 * renderings: --help text and mdoc for docs/warren.1.
 */
#include <stdio.h>
#include <string.h>

#include "cli/opttab.h"

#define RR	"run resume"

const struct opt_doc opt_docs[] = {
	{ "run", 0, "profile", "P", "The root agent's profile (default "
	  "orchestrator, which only delegates, completes and fails). Any "
	  "other profile (explore, general, ...) runs as one agent in a "
	  "sandboxed worker, delegating when its profile may." },
	{ "run", 0, "continue", "[RUN]", "A follow-up of run RUN (a run id "
	  "or last; default this workspace's latest run): the new root's "
	  "memory node hangs under that run's root, so it sees the earlier "
	  "runs' summaries; show links them. It goes on in that run's "
	  "copy-on-write layer if it is still to review, and sees what it "
	  "wrote. Needs the store; a run still running is refused (exit "
	  "2)." },
	{ RR " ask", 'w', "workspace", "DIR", "The workspace (default the "
	  "current directory). A resume runs where the run ran: another "
	  "DIR is refused." },
	{ RR, 0, "max-depth", "N", "The deepest subagent; the orchestrator "
	  "is depth 0 (default 3)." },
	{ RR, 0, "max-agents", "N", "Subagents per run (default 10). A "
	  "request beyond this or --max-depth is answered to the model as a "
	  "tool error it can act on." },
	{ RR, 'j', "jobs", "N", "Worker processes at once (default 64: agents "
	  "mostly wait for the LLM, not for a core); further agents are "
	  "queued until a slot frees." },
	{ RR, 0, "budget", "TOKENS", "Input plus output tokens for the whole "
	  "run; 0 means no budget." },
	{ RR, 0, "llm-concurrency", "N", "LLM requests on the wire at once, "
	  "at most (default 128); the endpoint's 429 answers lower it for a "
	  "while." },
	{ RR " ask", 0, "provider", "P", "The LLM API: openai, anthropic, "
	  "responses, openrouter, ollama, vllm, llamacpp or lmstudio." },
	{ RR " ask", 0, "base-url", "URL", "The endpoint's base URL; "
	  "http://host:port and http://host:port/v1 both work (a bare host "
	  "gets /v1), for every provider." },
	{ RR " ask", 0, "model", "M", "The model name." },
	{ "run ask", 0, "record", "FILE", "Write every LLM exchange to a "
	  "cassette (docs/cassette.md)." },
	{ "run ask", 0, "replay", "FILE", "Answer every LLM turn from a "
	  "cassette, with no network. Answers are keyed by agent path and "
	  "step, so parallel runs replay deterministically." },
	{ RR, 0, "json", NULL, "One JSON event per line on standard output "
	  "instead of the progress on standard error." },
	{ RR, 0, "plain", NULL, "One line per event on standard error, also "
	  "on a terminal (as with TERM=dumb), instead of the live tree of "
	  "the agents." },
	{ RR, 0, "db", "FILE", "The database (default "
	  "$XDG_STATE_HOME/warren/warren.db, outside every workspace)." },
	{ "run", 0, "no-store", NULL, "Keep nothing (with --in-place only: a "
	  "layer needs a run to review it by)." },
	{ RR, 0, "allow-weaker-sandbox", NULL, "Run even when this machine "
	  "lacks a sandbox layer a profile requires; the weaker state is "
	  "printed and recorded." },
	{ RR, 0, "agent-timeout", "D", "Wall clock of one subagent (default "
	  "30m): a nudge first, then a stop." },
	{ RR, 0, "hello-timeout", "D", "Time a new worker has to say hello "
	  "before it is killed (default 10s)." },
	{ RR, 0, "worker", "PATH", "The worker program (default "
	  "$WARREN_WORKER_BIN, else warren-worker next to warren, in "
	  "../libexec/warren/ or in the build tree)." },
	{ "run", 0, "in-place", NULL, "Agents write the workspace itself, not "
	  "a copy-on-write layer (workspace_mode = in-place). Refused (exit "
	  "5) when a workspace file has a hard link outside the workspace: "
	  "a write would change that file too." },
	{ RR, 0, "allow-hard-links", NULL, "In place: run even when a "
	  "workspace file has a hard link outside the workspace (an agent's "
	  "write to it changes the file outside too)." },
	{ "run", 0, "cow", "auto|overlay|copy", "How the layer is made: an "
	  "overlay where this kernel and user can mount one, else a copy of "
	  "the workspace (default auto)." },
	{ "run", 0, "disk-max", "SIZE", "Disk the layer may take (default 1G;"
	  " 0 for none), a sparse file at its size, and the most one file "
	  "may grow to: past it every worker is killed and the run ends "
	  "failed with disk limit. An overlay layer is held on a tmpfs of "
	  "SIZE (memory) while the run goes, where a write past it fails "
	  "with ENOSPC, and saved to disk at its end." },
	{ "run", 0, "apply", NULL, "Apply the layer at the end when the run "
	  "is done and no file that runs code on the host changed; otherwise "
	  "say why and keep it (exit 1)." },
	{ "run", 0, "schema", "FILE", "The result must be JSON matching the "
	  "JSON Schema in FILE: a complete() that does not is answered with "
	  "the errors, and the third refusal fails the run (exit 1). A resume"
	  " keeps the run's schema." },
	{ RR " ask", 'v', "verbose", NULL, "More detail (ask: the request "
	  "and the endpoint's answer, on standard error)." },
	{ RR, 'T', NULL, NULL, "Trace every IPC message, one escaped line "
	  "each, on standard error." },
	{ "ask", 0, "system", "TEXT", "A system prompt." },
	{ "ask", 0, "max-tokens", "N", "The most output tokens." },
	{ "ask", 0, "temperature", "T", "The sampling temperature." },
	{ "ask", 0, "timeout", "DUR", "How long the request may take." },
	{ "ask", 0, "retries", "N", "Retries of a failed request." },
	{ "ask", 0, "no-stream", NULL, "Ask for the whole answer at once, "
	  "not streamed." },
	{ "ask", 0, "tool-mode", "native|text", "How tools are offered: the "
	  "API's tool calls, or described in the prompt." },
	{ "ask", 0, "header", "HEADER", "An extra HTTP header, \"Name: value\";"
	  " may be given more than once." },
	{ "ask", 0, "show-config", NULL, "Print the configuration ask would "
	  "use, and where each value came from, and send nothing." },
	{ "mcp", 0, "root", "DIR", "A directory the MCP client may name as "
	  "a workspace, with everything under it (real paths: symlinks are "
	  "resolved); may be given more than once (default: the current "
	  "directory). A workspace or run outside them is refused." },
	{ "mcp", 0, "allow-apply", NULL, "Let the client's apply tool write "
	  "a run's changes into its workspace, as warren apply does (files "
	  "that run code on the host held back). Without it, apply is "
	  "refused with a tool error that says so." },
	{ RR " ask mcp", 'h', "help", NULL, "Print this help." },
};

const size_t opt_ndocs = sizeof(opt_docs) / sizeof(opt_docs[0]);

int
opt_doc_for(const struct opt_doc *d, const char *cmd)
{
	size_t		 n = strlen(cmd);
	const char	*p;

	for (p = d->cmds; (p = strstr(p, cmd)) != NULL; p += n)
		if ((p == d->cmds || p[-1] == ' ') && (p[n] == ' ' ||
		    p[n] == '\0'))
			return 1;
	return 0;
}

/* "-j, --jobs N" */
static int
opt_doc_flags(char *out, size_t outsz, const struct opt_doc *d)
{
	return snprintf(out, outsz, "%s%c%s%s%s%s%s",
	    d->short_name ? "-" : "", d->short_name ? d->short_name : ' ',
	    d->short_name && d->long_name ? ", " : "",
	    d->long_name ? "--" : "", d->long_name ? d->long_name : "",
	    d->arg ? " " : "", d->arg ? d->arg : "");
}

/* Words of text, wrapped to width after an indent. */
static void
opt_doc_wrap(FILE *f, const char *text, int col, int indent, int width)
{
	const char	*w, *p = text;
	int		 len;

	while (*p != '\0') {
		while (*p == ' ')
			p++;
		for (w = p; *p != '\0' && *p != ' '; p++)
			;
		if ((len = (int)(p - w)) == 0)
			break;
		if (col > indent && col + 1 + len > width) {
			fprintf(f, "\n%*s", indent, "");
			col = indent;
		} else if (col > indent) {
			fputc(' ', f);
			col++;
		}
		fprintf(f, "%.*s", len, w);
		col += len;
	}
	fputc('\n', f);
}

void
opt_doc_help(FILE *f, const char *cmd)
{
	char	flags[64];
	size_t	i;
	int	n;

	fprintf(f, "\nOptions:\n");
	for (i = 0; i < opt_ndocs; i++) {
		if (!opt_doc_for(&opt_docs[i], cmd))
			continue;
		n = opt_doc_flags(flags, sizeof(flags), &opt_docs[i]);
		fprintf(f, "  %s", flags + (flags[0] == ' '));
		n += 2 - (flags[0] == ' ');
		if (n >= 26) {
			fprintf(f, "\n%26s", "");
			n = 26;
		} else {
			fprintf(f, "%*s", 26 - n, "");
			n = 26;
		}
		opt_doc_wrap(f, opt_docs[i].help, n, 26, 79);
	}
}

/* One mdoc text line per sentence; nothing read as a request. */
static void
opt_doc_mdoc_text(FILE *f, const char *s)
{
	int	bol = 1;

	for (; *s != '\0'; s++) {
		if (bol && (*s == '.' || *s == '\''))
			fputs("\\&", f);
		bol = 0;
		if (*s == '\\')
			fputs("\\e", f);
		else if (*s == '.' && s[1] == ' ' && s[2] != '\0') {
			fputs(".\n", f);
			s++;
			bol = 1;
		} else
			fputc(*s, f);
	}
	fputc('\n', f);
}

/* "Fl j , Fl -jobs Ar N"; in a synopsis (one) only the long one. */
static void
opt_doc_mdoc_flags(FILE *f, const struct opt_doc *d, int one)
{
	const char	*a;

	if (d->short_name && !(one && d->long_name))
		fprintf(f, "Fl %c%s", d->short_name, d->long_name ? " , " :
		    "");
	if (d->long_name)
		fprintf(f, "Fl -%s", d->long_name);
	if (d->arg == NULL)
		return;
	if (strchr(d->arg, '|') == NULL) {
		fprintf(f, " Ar %s", d->arg);
		return;
	}
	fputs(" Cm ", f);
	for (a = d->arg; *a != '\0'; a++)
		if (*a == '|')
			fputs(" | ", f);
		else
			fputc(*a, f);
}

void
opt_doc_man_synopsis(FILE *f, const char *cmd)
{
	size_t	i;

	for (i = 0; i < opt_ndocs; i++) {
		if (!opt_doc_for(&opt_docs[i], cmd) ||
		    opt_docs[i].short_name == 'h')
			continue;
		fputs(".Op ", f);
		opt_doc_mdoc_flags(f, &opt_docs[i], 1);
		fputc('\n', f);
	}
}

void
opt_doc_man_list(FILE *f, const char *cmd)
{
	size_t	i;

	fputs(".Bl -tag -width Ds\n", f);
	for (i = 0; i < opt_ndocs; i++) {
		if (!opt_doc_for(&opt_docs[i], cmd))
			continue;
		fputs(".It ", f);
		opt_doc_mdoc_flags(f, &opt_docs[i], 0);
		fputc('\n', f);
		opt_doc_mdoc_text(f, opt_docs[i].help);
	}
	fputs(".El\n", f);
}

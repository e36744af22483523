/*
 * The commands of warren: main.c dispatches on them, `warren --help`
 * lists them, and warren-gen-completion writes the shell completions'
 * command names from them.
 */
#include <stddef.h>

#include "cli/cmd.h"

const struct cmd warren_cmds[] = {
	{ "run", "[options] TASK", "run a task with an orchestrator and sandboxed subagents",
	    cmd_run },
	{ "chat", "[run options] [--continue [RUN]]",
	    "a conversation: each message a follow-up run", cmd_chat },
	{ "resume", "RUN", "continue an interrupted run", cmd_resume },
	{ "ask", "[--provider P] [--base-url URL] [--model M] PROMPT",
	    "send one prompt to an LLM endpoint and print the answer", cmd_ask },
	{ "sandbox", "exec|check ...", "run a command under a profile's sandbox",
	    cmd_sandbox },
	{ "profiles", "[NAME]", "list agent profiles, their tools and sandbox",
	    cmd_profiles },
	{ "runs", "", "list recent runs", cmd_runs },
	{ "show", "[--messages] RUN", "show a run's agent tree", cmd_show },
	{ "graph", "[--format json|dot|mermaid] RUN", "print a run's memory graph",
	    cmd_graph },
	{ "report", "[-o FILE] RUN", "write a run's report: one HTML page",
	    cmd_report },
	{ "forget", "RUN ...", "delete runs and all they stored", cmd_forget },
	{ "diff", "[--stat] [--color=WHEN | --raw] RUN [PATH ...]",
	    "show what a copy-on-write run changed", cmd_diff },
	{ "apply", "[--include-sensitive] [--include-unreviewed] "
	    "[--include-ignored] [--include PATH ...] RUN [PATH ...]",
	    "write a copy-on-write run's changes into the workspace",
	    cmd_apply },
	{ "discard", "RUN", "throw a copy-on-write run's changes away",
	    cmd_discard },
	{ "queue", "add|work|ls|show|cancel|retry|purge|export|apply ...",
	    "a durable queue of tasks, each run as its own run", cmd_queue },
	{ "mcp", "[--root DIR ...] [--allow-apply] | list ...",
	    "serve MCP on stdio: other agents run tasks with warren", cmd_mcp },
	{ "trust", "[--revoke] [DIR]", "trust a project's .warren/config and agents",
	    cmd_trust },
};
const size_t warren_ncmds = sizeof(warren_cmds) / sizeof(warren_cmds[0]);

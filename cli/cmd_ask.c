/*
 * warren ask: send one prompt to the configured endpoint and print the
 * answer, streamed when stdout is a terminal. The way to try an endpoint
 * (and a key, a proxy, a model name) before running agents on it.
 */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli/cmd.h"
#include "cli/opttab.h"
#include "cli/opttab_testapi.h"
#include "cli/project.h"
#include "common/buf.h"
#include "common/config.h"
#include "common/exitcode.h"
#include "common/log.h"
#include "common/str.h"
#include "llm/llm.h"

#define ASK_MAX_PROMPT	(4u * 1024 * 1024)

struct ask_out {
	char	carry[4];	/* an incomplete UTF-8 sequence */
	size_t	ncarry;
	int	printed;	/* some text went out streamed */
};

static void
ask_usage(FILE *f)
{
	fprintf(f,
	    "usage: warren ask [options] PROMPT... | -\n"
	    "\n"
	    "Sends PROMPT (or standard input, for -) to the configured LLM "
	    "endpoint and\nprints the answer, streamed on a terminal. "
	    "Configuration: docs/configuration.md;\nthe key from "
	    "WARREN_API_KEY, the provider's variable or api_key_file.\n");
	opt_doc_help(f, "ask");
}

/* Bytes at the end of s that start an unfinished UTF-8 sequence. */
static size_t
ask_utf8_tail(const char *s, size_t len)
{
	size_t		i, need;
	unsigned char	c;

	for (i = 1; i <= 3 && i <= len; i++) {
		c = (unsigned char)s[len - i];
		if ((c & 0xc0) == 0x80)
			continue;
		if (c >= 0xf0)
			need = 4;
		else if (c >= 0xe0)
			need = 3;
		else if (c >= 0xc0)
			need = 2;
		else
			return 0;
		return need > i ? i : 0;
	}
	return 0;
}

static void
ask_print(const char *s, size_t len)
{
	char	*esc;

	if ((esc = str_escape_dup(s, len, STR_ESC_KEEP_NL)) == NULL)
		return;
	fputs(esc, stdout);
	free(esc);
}

/* Streamed text: escape whole UTF-8 sequences only. */
static void
ask_on_text(const char *s, size_t len, void *arg)
{
	struct ask_out	*o = arg;
	struct buf	 b;
	size_t		 tail;

	if (s == NULL) {
		/* The endpoint failed mid-answer; the retry starts over. */
		fputs("\n[answer interrupted; retrying]\n", stdout);
		fflush(stdout);
		o->ncarry = 0;
		return;
	}
	buf_init(&b, 0);
	if (buf_add(&b, o->carry, o->ncarry) == -1 || buf_add(&b, s, len) == -1) {
		buf_free(&b);
		return;
	}
	tail = ask_utf8_tail((const char *)b.data, b.len);
	ask_print((const char *)b.data, b.len - tail);
	memcpy(o->carry, b.data + b.len - tail, tail);
	o->ncarry = tail;
	o->printed = 1;
	fflush(stdout);
	buf_free(&b);
}

static char *
ask_prompt(int argc, char **argv)
{
	struct buf	 b;
	char		 chunk[8192];
	size_t		 n;
	int		 i;

	buf_init(&b, ASK_MAX_PROMPT);
	if (argc == 1 && strcmp(argv[0], "-") == 0) {
		while ((n = fread(chunk, 1, sizeof(chunk), stdin)) > 0) {
			if (buf_add(&b, chunk, n) == -1) {
				fprintf(stderr, "warren ask: prompt on standard "
				    "input is over %u bytes\n", ASK_MAX_PROMPT);
				buf_free(&b);
				return NULL;
			}
		}
		if (ferror(stdin)) {
			/* Never send half a prompt as if it were all. */
			fprintf(stderr, "warren ask: reading the prompt from "
			    "standard input: %s\n", strerror(errno));
			buf_free(&b);
			return NULL;
		}
	} else {
		for (i = 0; i < argc; i++) {
			if ((i > 0 && buf_addc(&b, ' ') == -1) ||
			    buf_addstr(&b, argv[i]) == -1) {
				buf_free(&b);
				return NULL;
			}
		}
	}
	return buf_release(&b, NULL);
}

static const struct option ask_opts[] = {
	{ "provider", required_argument, NULL, 'p' },
	{ "base-url", required_argument, NULL, 'u' },
	{ "model", required_argument, NULL, 'm' },
	{ "system", required_argument, NULL, 's' },
	{ "max-tokens", required_argument, NULL, 'n' },
	{ "temperature", required_argument, NULL, 't' },
	{ "timeout", required_argument, NULL, 'T' },
	{ "retries", required_argument, NULL, 'r' },
	{ "no-stream", no_argument, NULL, 'S' },
	{ "tool-mode", required_argument, NULL, 'M' },
	{ "header", required_argument, NULL, 'H' },
	{ "record", required_argument, NULL, 'R' },
	{ "replay", required_argument, NULL, 'P' },
	{ "workspace", required_argument, NULL, 'w' },
	{ "show-config", no_argument, NULL, 'C' },
	{ "verbose", no_argument, NULL, 'v' },
	{ "help", no_argument, NULL, 'h' },
	{ NULL, 0, NULL, 0 },
};

const struct option *
cmd_ask_options(void)
{
	return ask_opts;
}

/* Options that are config keys: (option letter, key, flag name). */
static const struct {
	int		 opt;
	const char	*key;
	const char	*flag;
} ask_keys[] = {
	{ 'p', "provider", "--provider" },
	{ 'u', "base_url", "--base-url" },
	{ 'm', "model", "--model" },
	{ 'n', "max_tokens", "--max-tokens" },
	{ 't', "temperature", "--temperature" },
	{ 'T', "timeout", "--timeout" },
	{ 'r', "retries", "--retries" },
	{ 'M', "tool_mode", "--tool-mode" },
	{ 'H', "header", "--header" },
	{ 'R', "record", "--record" },
	{ 'P', "replay", "--replay" },
};

static int
ask_flag(struct config *c, int opt, const char *value)
{
	size_t	i;

	for (i = 0; i < sizeof(ask_keys) / sizeof(ask_keys[0]); i++) {
		if (ask_keys[i].opt == opt)
			return config_set(c, ask_keys[i].key, value,
			    CONFIG_SRC_FLAG, ask_keys[i].flag);
	}
	return -1;
}

/* The exchange itself; returns an exit code. */
static int
ask_run(const struct llm_config *lc, const char *system, const char *prompt,
    int verbose)
{
	struct llm_engine	*e;
	struct llm_request	 req;
	struct llm_result	 res;
	struct msg_list		 msgs;
	struct ask_out		 out;
	char			 err[1024];
	size_t			 i;
	int			 rc = WARREN_EXIT_LLM, tty;

	if ((e = llm_engine_new(lc, err, sizeof(err))) == NULL) {
		fprintf(stderr, "warren ask: %s\n", err);
		return WARREN_EXIT_CONFIG;
	}
	msg_list_init(&msgs);
	memset(&out, 0, sizeof(out));
	memset(&req, 0, sizeof(req));
	if ((system != NULL && msg_list_add_text(&msgs, MSG_SYSTEM,
	    system) == -1) || msg_list_add_text(&msgs, MSG_USER, prompt) == -1)
		fatal("warren ask");
	tty = isatty(STDOUT_FILENO);
	req.agent = "0";
	req.step = 0;
	req.msgs = &msgs;
	req.on_text = tty ? ask_on_text : NULL;
	req.text_arg = &out;
	if (llm_complete_blocking(e, &req, &res) == -1) {
		if (out.printed)
			fputc('\n', stdout);
		fprintf(stderr, "warren ask: %s [%s]\n", res.error != NULL ?
		    res.error : "unknown error", llm_err_name(res.err));
		goto out;
	}
	if (tty && out.ncarry > 0)
		ask_print(out.carry, out.ncarry);
	if (!tty && res.reply.msg.text != NULL)
		ask_print(res.reply.msg.text, strlen(res.reply.msg.text));
	if (res.reply.msg.text != NULL)
		fputc('\n', stdout);
	for (i = 0; i < res.reply.msg.ncalls; i++) {
		fputs("[tool call] ", stdout);
		ask_print(res.reply.msg.calls[i].name,
		    strlen(res.reply.msg.calls[i].name));
		fputc(' ', stdout);
		ask_print(res.reply.msg.calls[i].args,
		    strlen(res.reply.msg.calls[i].args));
		fputc('\n', stdout);
	}
	if (verbose)
		fprintf(stderr, "warren ask: %s, %llu input + %llu output "
		    "tokens, stop %s, %u attempt(s), %llu ms\n", lc->model,
		    (unsigned long long)res.reply.usage.input,
		    (unsigned long long)res.reply.usage.output,
		    msg_stop_name(res.reply.stop), res.attempts,
		    (unsigned long long)res.elapsed_ms);
	if (res.reply.stop == MSG_STOP_LENGTH)
		fprintf(stderr, "warren ask: the answer was cut at the output "
		    "token limit\n");
	rc = fflush(stdout) == EOF ? WARREN_EXIT_INTERNAL : WARREN_EXIT_OK;
out:
	llm_result_free(&res);
	msg_list_free(&msgs);
	llm_engine_free(e);
	return rc;
}

/* The user's config, a trusted project's, the environment; errors on
 * stderr (escaped: they may quote a project file). */
static int
ask_config(struct config *c, const char *workspace)
{
	struct project	 pr;
	char		 err[1024], esc[1024];
	const char	*msg = err;
	int		 rc = -1;

	if (project_open(&pr, workspace, NULL, "ask", err, sizeof(err)) == 0) {
		if (config_load_standard(c) == -1 ||
		    project_load_config(&pr, c) == -1)
			msg = config_error(c);
		else
			rc = 0;
	}
	if (rc == -1) {
		str_escape(esc, sizeof(esc), msg, strlen(msg));
		fprintf(stderr, "warren ask: %s\n", esc);
	}
	project_free(&pr);
	return rc;
}

int
cmd_ask(int argc, char **argv)
{
	struct config		*c;
	struct llm_config	 lc;
	const char		*system = NULL, *workspace = ".";
	char			*prompt = NULL, err[1024];
	int			 ch, verbose = 0, show = 0, rc;

	/* One config for every command: ask reads the LLM's keys and
	 * ignores run's (max_agents ...), rather than refusing them. */
	if ((c = config_new()) == NULL || cmd_run_declare(c) == -1)
		fatal("warren ask: config");
	optind = 1;
	while ((ch = cmd_getopt("ask", argc, argv, "+m:s:vh", ask_opts)) !=
	    -1) {
		switch (ch) {
		case 's':
			system = optarg;
			break;
		case 'S':
			if (config_set(c, "stream", "false", CONFIG_SRC_FLAG,
			    "--no-stream") == -1)
				goto badflag;
			break;
		case 'w':
			workspace = optarg;
			break;
		case 'C':
			show = 1;
			break;
		case 'v':
			verbose = 1;
			log_setlevel(LOG_LEVEL_DEBUG);
			break;
		case 'h':
			ask_usage(stdout);
			config_free(c);
			return WARREN_EXIT_OK;
		case '?':
			config_free(c);
			return WARREN_EXIT_USAGE;
		default:
			if (ask_flag(c, ch, optarg) == -1)
				goto badflag;
			break;
		}
	}
	argc -= optind;
	argv += optind;
	if (ask_config(c, workspace) == -1) {
		config_free(c);
		return WARREN_EXIT_CONFIG;
	}
	if (show) {
		config_dump(c, stdout);
		config_free(c);
		return WARREN_EXIT_OK;
	}
	if (argc == 0) {
		cmd_usage_error("ask", "give the PROMPT");
		config_free(c);
		return WARREN_EXIT_USAGE;
	}
	if (llm_config_load(&lc, c, err, sizeof(err)) == -1) {
		fprintf(stderr, "warren ask: %s\n", err);
		config_free(c);
		return WARREN_EXIT_CONFIG;
	}
	config_free(c);
	if ((prompt = ask_prompt(argc, argv)) == NULL) {
		llm_config_free(&lc);
		return WARREN_EXIT_USAGE;
	}
	rc = ask_run(&lc, system, prompt, verbose);
	free(prompt);
	llm_config_free(&lc);
	return rc;
badflag:
	fprintf(stderr, "warren ask: %s\n", config_error(c));
	config_free(c);
	return WARREN_EXIT_USAGE;
}

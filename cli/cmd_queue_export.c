/*
 * warren queue export --format jsonl|csv [--status S]: every job's result
 * on stdout, a JSON object a line or a CSV row (RFC 4180, CRLF) a job
 * (cmd_queue_export_csv.c: its columns). The answers came from models:
 * JSONL escapes control characters as JSON does, and CSV fields are
 * escaped as the terminal output is (\xNN for control bytes and invalid
 * UTF-8, newlines and tabs kept), so neither can drive a terminal it is
 * printed on, and a CSV cell never reads as a spreadsheet's formula.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <jansson.h>

#include "cli/cmd.h"
#include "cli/cmd_queue.h"
#include "common/exitcode.h"
#include "common/jtext.h"

static int
cmd_queue_export_jsonl(const struct queue_job *j)
{
	json_t	*o;
	int	 rc;

	o = json_pack("{s:I, s:o, s:s, s:o, s:o, s:o, s:o, s:i, s:I, s:I, "
	    "s:I, s:I, s:o, s:o, s:I, s:o, s:I, s:o}",
	    "id", (json_int_t)j->id, "key", jtext(j->key),
	    "status", queue_status_name(j->status), "task", jtext(j->task),
	    "answer", jtext(j->answer),
	    "output", cmd_queue_json_text(j->output),
	    "error", jtext(j->error), "attempts", j->attempts,
	    "tokens_in", (json_int_t)j->tokens_in,
	    "tokens_out", (json_int_t)j->tokens_out,
	    "wall_ms", (json_int_t)j->wall_ms, "run_id", (json_int_t)j->run_id,
	    "diff_stat", jtext(j->diff_stat),
	    "params", cmd_queue_json_text(j->params),
	    "changes_bytes", (json_int_t)j->changes_len,
	    "run_where", jtext(j->run_where),
	    "applied_ms", (json_int_t)j->applied_ms,
	    "applied_by", jtext(j->applied_by));
	if (o == NULL)
		return -1;
	rc = json_dumpf(o, stdout, JSON_COMPACT | JSON_PRESERVE_ORDER);
	json_decref(o);
	return rc == -1 || putchar('\n') == EOF ? -1 : 0;
}

static int
cmd_queue_export_print(const struct queue_job *v, size_t n, int csv)
{
	size_t	i;
	int	rc = 0;

	if (csv)
		rc = cmd_queue_export_csv(v, n);
	for (i = 0; !csv && i < n && rc == 0; i++)
		rc = cmd_queue_export_jsonl(&v[i]);
	if (rc == -1 || fflush(stdout) == EOF) {
		cmd_queue_error("export", "writing the output: %s",
		    strerror(errno));
		return WARREN_EXIT_INTERNAL;
	}
	return WARREN_EXIT_OK;
}

int
cmd_queue_export(int argc, char **argv)
{
	struct cmd_queue_opts	 o;
	struct queue		*q;
	struct queue_job	*v;
	size_t			 n;
	int			 rc, csv, ex = WARREN_EXIT_OK;

	if ((rc = cmd_queue_parse(argc, argv, CMD_QUEUE_O_STATUS |
	    CMD_QUEUE_O_FORMAT, &o)) != 0)
		return rc == 1 ? WARREN_EXIT_OK : WARREN_EXIT_USAGE;
	if (o.format == NULL || (strcmp(o.format, "jsonl") != 0 &&
	    strcmp(o.format, "csv") != 0) || optind != argc) {
		cmd_queue_error(argv[0], "give --format jsonl or --format csv "
		    "(and --status S for one status's jobs)");
		return WARREN_EXIT_USAGE;
	}
	csv = strcmp(o.format, "csv") == 0;
	if ((q = cmd_queue_open(argv[0], o.url, &ex)) == NULL)
		return ex;
	if (queue_list(q, o.has_status ? (int)o.status : -1, &v, &n) == -1)
		ex = cmd_queue_fail(q, argv[0]);
	else {
		ex = cmd_queue_export_print(v, n, csv);
		queue_jobs_free(v, n);
	}
	queue_close(q);
	return ex;
}

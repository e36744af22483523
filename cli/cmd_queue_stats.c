/*
 * warren queue stats [--json]: the queue's figures, read in one snapshot
 * at the queue's time (queue_stats): jobs by status, attempts and how many
 * failed, jobs done a minute, and the job queued the longest.
 *
 * The rate is the jobs done within the last QUEUE_STATS_WINDOW_MS (10
 * minutes) over the time from the later of its start and the start of
 * the earliest attempt running or ended within it to now: a batch begun
 * two minutes ago is measured over those two minutes, a queue worked all
 * day over the last ten (queue_stats_rate). docs/queue.md, "Seeing and
 * steering".
 */
#include <stdio.h>
#include <unistd.h>

#include <jansson.h>

#include "cli/cmd.h"
#include "cli/cmd_queue.h"
#include "common/exitcode.h"

static uint64_t
cmd_queue_stats_jobs(const struct queue_stats *st)
{
	uint64_t	n = 0;
	int		i;

	for (i = 0; i < QUEUE_NSTATUS; i++)
		n += st->counts.n[i];
	return n;
}

static int64_t
cmd_queue_stats_waiting(const struct queue_stats *st)
{
	return st->now_ms > st->oldest_queued_ms ?
	    st->now_ms - st->oldest_queued_ms : 0;
}

static int
cmd_queue_stats_json(const struct queue_stats *st)
{
	json_t	*o, *oldest;
	int64_t	 span;
	double	 rate = queue_stats_rate(st, QUEUE_STATS_WINDOW_MS, &span);
	int	 i;

	oldest = st->oldest_queued > 0 ? json_pack("{s:I, s:I}", "job",
	    (json_int_t)st->oldest_queued, "waiting_ms",
	    (json_int_t)cmd_queue_stats_waiting(st)) : json_null();
	if ((o = json_object()) == NULL) {
		json_decref(oldest);
		return cmd_json_print(NULL);
	}
	for (i = 0; i < QUEUE_NSTATUS; i++)
		json_object_set_new(o, queue_status_name((enum queue_status)i),
		    json_integer((json_int_t)st->counts.n[i]));
	json_object_set_new(o, "jobs",
	    json_integer((json_int_t)cmd_queue_stats_jobs(st)));
	json_object_set_new(o, "attempts",
	    json_integer((json_int_t)st->attempts));
	json_object_set_new(o, "attempts_failed",
	    json_integer((json_int_t)st->attempts_failed));
	json_object_set_new(o, "done_recent",
	    json_integer((json_int_t)st->done_recent));
	json_object_set_new(o, "span_ms", json_integer((json_int_t)span));
	json_object_set_new(o, "jobs_per_min", json_real(rate));
	json_object_set_new(o, "oldest_queued", oldest);
	return cmd_json_print(o);
}

static int
cmd_queue_stats_text(const struct queue_stats *st)
{
	char	d[32];
	int64_t	span;
	double	rate = queue_stats_rate(st, QUEUE_STATS_WINDOW_MS, &span);

	printf("jobs: %llu (queued %llu, running %llu, retrying %llu, done "
	    "%llu, dead %llu, cancelled %llu)\n",
	    (unsigned long long)cmd_queue_stats_jobs(st),
	    (unsigned long long)st->counts.n[QUEUE_QUEUED],
	    (unsigned long long)st->counts.n[QUEUE_RUNNING],
	    (unsigned long long)st->counts.n[QUEUE_RETRYING],
	    (unsigned long long)st->counts.n[QUEUE_DONE],
	    (unsigned long long)st->counts.n[QUEUE_DEAD],
	    (unsigned long long)st->counts.n[QUEUE_CANCELLED]);
	printf("attempts: %llu, failed %llu\n",
	    (unsigned long long)st->attempts,
	    (unsigned long long)st->attempts_failed);
	if (span > 0) {
		cmd_fmt_duration(d, sizeof(d), span);
		printf("rate: %.1f jobs/min (%llu done in the last %s)\n", rate,
		    (unsigned long long)st->done_recent, d);
	} else {
		cmd_fmt_duration(d, sizeof(d), QUEUE_STATS_WINDOW_MS);
		printf("rate: none (no attempt ran in the last %s)\n", d);
	}
	if (st->oldest_queued > 0) {
		cmd_fmt_duration(d, sizeof(d), cmd_queue_stats_waiting(st));
		printf("oldest queued: job %lld, waiting %s\n",
		    (long long)st->oldest_queued, d);
	} else
		printf("oldest queued: none\n");
	return ferror(stdout) ? WARREN_EXIT_INTERNAL : WARREN_EXIT_OK;
}

int
cmd_queue_stats(int argc, char **argv)
{
	struct cmd_queue_opts	 o;
	struct queue_stats	 st;
	struct queue		*q;
	int			 rc, ex = WARREN_EXIT_OK;

	if ((rc = cmd_queue_parse(argc, argv, CMD_QUEUE_O_JSON |
	    CMD_QUEUE_O_NOARGS, &o)) != 0)
		return rc == 1 ? WARREN_EXIT_OK : WARREN_EXIT_USAGE;
	if ((q = cmd_queue_open(argv[0], o.url, &ex)) == NULL)
		return ex;
	if (queue_stats(q, QUEUE_STATS_WINDOW_MS, &st) == -1)
		ex = cmd_queue_fail(q, argv[0]);
	else
		ex = o.json ? cmd_queue_stats_json(&st) :
		    cmd_queue_stats_text(&st);
	queue_close(q);
	return ex;
}

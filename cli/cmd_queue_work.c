/*
 * warren queue work [--queue URL] [--jobs N] [--follow] [--lease D] [--json]
 *
 * The queue: --queue URL, else queue_url ($WARREN_QUEUE_URL or the user's
 * config), else queue.db beside the state database.
 * Claims jobs with a lease, up to --jobs at once, and runs each as one
 * `warren run` child (queue_runner.c). One poll() loop, no threads: the
 * children's pipes, a heartbeat per job every lease / 3 (a lost lease
 * kills the run without recording; a cancel stops it and ends the job
 * cancelled), the claim of new jobs (every second when there were none),
 * and SIGINT: the first stops claiming and lets the running jobs finish,
 * a second (or SIGTERM) stops them, their attempts failed as interrupted
 * so they run again. docs/queue.md, "Working the queue".
 */
#include <sys/types.h>

#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <sys/random.h>

#include "cli/cmd.h"
#include "cli/cmd_queue.h"
#include "cli/queue_work.h"
#include "common/clock.h"
#include "common/config.h"
#include "common/exitcode.h"

#define QWORK_JOBS_MAX		256
#define QWORK_POLL_MS		1000	/* claim again after none claimable */
#define QWORK_NOTIFY_POLL_MS	5000	/* the same when new work is told
					   (queue_wait_fd): for backoffs and
					   leases that end, which nobody
					   announces */
#define QWORK_TICK_MS		100	/* the loop's longest sleep */
#define QWORK_LEASE_MIN_MS	300

struct qwork {
	struct queue		*q;
	struct qprogress	*prog;
	char			 worker[HOST_NAME_MAX + 64];
	char			 exe[PATH_MAX];
	unsigned		 jobs;
	unsigned		 max_running;	/* across every worker; 0 none */
	int			 follow;
	uint64_t		 lease_ms;
	struct qrun		*run;		/* jobs slots */
	unsigned		 nrun;
	uint64_t		 next_claim;
	int			 failed;	/* a job it ran ended dead or
						   cancelled */
	int			 interrupted;
	int			 stuck;		/* the queue cannot be written
						   and retrying will not cure
						   it: end, exit 6 */
};

static volatile sig_atomic_t	qwork_sigint, qwork_sigterm;

static void
qwork_on_signal(int sig)
{
	if (sig == SIGINT)
		qwork_sigint++;
	else
		qwork_sigterm = 1;
}

static int
qwork_usage(FILE *f)
{
	fprintf(f, "usage: warren queue work [--queue URL] [--jobs N] "
	    "[--max-running N] [--follow] [--lease D] [--json]\n");
	return f == stdout ? WARREN_EXIT_OK : WARREN_EXIT_USAGE;
}

/* A duration as config reads it ("30s", "500ms", "2m", "1h"). */
static int
qwork_duration(const char *s, uint64_t *ms)
{
	double	d;

	if (config_parse_duration(s, &d) == -1 || d > 1e12)
		return -1;
	*ms = (uint64_t)d;
	return 0;
}

/* "host:pid:random": unique across hosts, processes and pid reuse. */
static void
qwork_worker_id(struct qwork *w)
{
	char		host[HOST_NAME_MAX + 1];
	uint32_t	r = 0;

	if (gethostname(host, sizeof(host)) == -1)
		strlcpy(host, "localhost", sizeof(host));
	host[sizeof(host) - 1] = '\0';
	if (getrandom(&r, sizeof(r), 0) != sizeof(r))
		r = (uint32_t)clock_mono_ns();
	snprintf(w->worker, sizeof(w->worker), "%s:%ld:%08x", host,
	    (long)getpid(), r);
}

static int
qwork_args(struct qwork *w, int argc, char **argv, const char **url,
    int *json)
{
	static const struct option opts[] = {
		{ "queue", required_argument, NULL, 'q' },
		{ "jobs", required_argument, NULL, 'j' },
		{ "max-running", required_argument, NULL, 'm' },
		{ "follow", no_argument, NULL, 'f' },
		{ "lease", required_argument, NULL, 'l' },
		{ "json", no_argument, NULL, 'J' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	char	*end;
	long	 n;
	int	 ch;

	optind = 1;
	while ((ch = cmd_getopt("queue work", argc, argv, "hj:", opts)) !=
	    -1) {
		switch (ch) {
		case 'q': *url = optarg; break;
		case 'f': w->follow = 1; break;
		case 'J': *json = 1; break;
		case 'h':
			qwork_usage(stdout);
			return 1;
		case 'j':
			n = strtol(optarg, &end, 10);
			if (*end != '\0' || n < 1 || n > QWORK_JOBS_MAX) {
				fprintf(stderr, "warren queue work: --jobs "
				    "'%s': a number from 1 to %d\n", optarg,
				    QWORK_JOBS_MAX);
				return -1;
			}
			w->jobs = (unsigned)n;
			break;
		case 'm':
			n = strtol(optarg, &end, 10);
			if (*end != '\0' || n < 1 || n > 1000000) {
				fprintf(stderr, "warren queue work: "
				    "--max-running '%s': a number from 1 to "
				    "1000000\n", optarg);
				return -1;
			}
			w->max_running = (unsigned)n;
			break;
		case 'l':
			if (qwork_duration(optarg, &w->lease_ms) == -1 ||
			    w->lease_ms < QWORK_LEASE_MIN_MS) {
				fprintf(stderr, "warren queue work: --lease "
				    "'%s': a duration of %dms or more, such as "
				    "30s, 500ms, 2m\n", optarg,
				    QWORK_LEASE_MIN_MS);
				return -1;
			}
			break;
		default:
			return -1;
		}
	}
	if (optind != argc) {
		cmd_usage_error("queue work", "unexpected '%s'", argv[optind]);
		return -1;
	}
	return 0;
}

static void
qwork_signals(void)
{
	struct sigaction	sa;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = qwork_on_signal;	/* no SA_RESTART: poll wakes */
	sigemptyset(&sa.sa_mask);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	signal(SIGPIPE, SIG_IGN);
}

/* The run could not start (fork, pipe): the attempt fails with why. */
static void
qwork_not_started(struct qwork *w, struct qrun *r, const char *why)
{
	struct queue_result	res;
	char			msg[600];

	snprintf(msg, sizeof(msg), "warren run could not be started: %s",
	    why);
	fprintf(stderr, "warren queue work: job %lld: %s\n",
	    (long long)r->job.id, msg);
	memset(&res, 0, sizeof(res));
	res.error = msg;
	if (queue_fail(w->q, r->job.id, r->job.attempts, w->worker, &res,
	    0) == -1)
		fprintf(stderr, "warren queue work: job %lld: %s (its lease "
		    "runs out, then it runs again)\n", (long long)r->job.id,
		    queue_errmsg(w->q));
	queue_runner_free(r);
}

/* Claim and start jobs while slots are free. */
static void
qwork_claim(struct qwork *w, uint64_t now)
{
	struct qrun	*r;
	char		 err[512];
	int		 rc;

	while (w->nrun < w->jobs) {
		r = &w->run[w->nrun];
		memset(r, 0, sizeof(*r));
		r->out = r->err = -1;
		rc = queue_claim(w->q, w->worker, w->lease_ms, w->max_running,
		    &r->job);
		if (rc != 1) {
			if (rc == -1)
				fprintf(stderr, "warren queue work: %s\n",
				    queue_errmsg(w->q));
			/* A file size limit: no claim will ever go through;
			 * the running jobs finish (their own writes meet the
			 * same limit), then the worker ends. */
			if (rc == -1 && queue_err_final(w->q))
				w->stuck = 1;
			w->next_claim = now + (rc == 0 &&
			    queue_wait_fd(w->q) >= 0 ? QWORK_NOTIFY_POLL_MS :
			    QWORK_POLL_MS);
			return;
		}
		r->held_until = now + w->lease_ms;
		if (queue_runner_start(r, w->exe, now, err, sizeof(err)) ==
		    -1) {
			qwork_not_started(w, r, err);
			w->next_claim = now + QWORK_POLL_MS;
			return;
		}
		r->next_beat = now + w->lease_ms / 3;
		w->nrun++;
		queue_progress_start(w->prog, r);
	}
}

static void
qwork_beat(struct qwork *w, struct qrun *r, uint64_t now)
{
	int	rc;

	if (now < r->next_beat || r->pid <= 0 || r->stop == QRUN_LOST ||
	    r->stop == QRUN_CANCEL)
		return;
	r->next_beat = now + w->lease_ms / 3;
	rc = queue_heartbeat(w->q, r->job.id, r->job.attempts, w->worker,
	    w->lease_ms);
	if (rc == 0 || rc == 2)
		r->held_until = now + w->lease_ms;
	if (rc == -1 && now >= r->held_until) {
		/* Cut off from the queue past the lease: another worker
		 * may run the job now; this run's result would be refused. */
		fprintf(stderr, "warren queue work: job %lld: no heartbeat got "
		    "through for the whole lease: stopping its run (it runs "
		    "again elsewhere): %s\n", (long long)r->job.id,
		    queue_errmsg(w->q));
		queue_runner_stop(r, QRUN_LOST, now);
	} else if (rc == -1)
		fprintf(stderr, "warren queue work: job %lld: heartbeat: %s "
		    "(trying again)\n", (long long)r->job.id,
		    queue_errmsg(w->q));
	else if (rc == 1)
		queue_runner_stop(r, QRUN_LOST, now);
	else if (rc == 2)
		queue_runner_stop(r, QRUN_CANCEL, now);
}

/* What the job became after a failed attempt. */
static const char *
qwork_fail_status(const struct qrun *r, const struct qoutcome *o)
{
	if (o->flags & QUEUE_FAIL_CANCELLED)
		return "cancelled";
	if ((o->flags & QUEUE_FAIL_FINAL) ||
	    r->job.attempts >= r->job.max_attempts)
		return "dead";
	return "retrying";
}

/* Record the attempt of a reaped run (or nothing, its lease lost). */
static void
qwork_finish(struct qwork *w, struct qrun *r, uint64_t now)
{
	struct qoutcome	 o;
	const char	*outcome, *status;
	int		 rc;

	queue_outcome_make(&o, r, now);
	if (r->stop == QRUN_LOST) {
		queue_progress_end(w->prog, r, &o, "lost", "running");
		queue_outcome_free(&o);
		return;
	}
	if (o.ok) {
		rc = queue_complete(w->q, r->job.id, r->job.attempts,
		    w->worker, &o.res);
		outcome = "done";
		status = "done";
	} else {
		rc = queue_fail(w->q, r->job.id, r->job.attempts, w->worker,
		    &o.res, o.flags);
		outcome = r->stop == QRUN_INTERRUPT ? "interrupted" :
		    r->stop == QRUN_CANCEL ? "cancelled" : "failed";
		status = qwork_fail_status(r, &o);
	}
	if (rc == 0 && o.ok && o.changes_note != NULL)
		fprintf(stderr, "warren queue work: job %lld: %s: `warren "
		    "queue apply %lld` here applies it\n",
		    (long long)r->job.id, o.changes_note,
		    (long long)r->job.id);
	if (rc == -1)
		fprintf(stderr, "warren queue work: job %lld: the attempt's "
		    "%s is not recorded: %s (the lease runs out and the job "
		    "runs again)\n", (long long)r->job.id, outcome,
		    queue_errmsg(w->q));
	if (rc != 0) {
		outcome = "lost";
		status = "running";
	} else if (strcmp(status, "dead") == 0 ||
	    strcmp(status, "cancelled") == 0)
		w->failed = 1;
	queue_progress_end(w->prog, r, &o, outcome, status);
	queue_outcome_free(&o);
}

/* Reap what ended; keep the slots packed. */
static void
qwork_reap(struct qwork *w, uint64_t now)
{
	unsigned	i = 0;

	while (i < w->nrun) {
		if (!queue_runner_reap(&w->run[i])) {
			i++;
			continue;
		}
		qwork_finish(w, &w->run[i], now);
		queue_runner_free(&w->run[i]);
		if (i != w->nrun - 1)
			w->run[i] = w->run[w->nrun - 1];
		w->nrun--;
		w->next_claim = now;
	}
}

/* New work was announced: claim at once (with a slot free). */
static void
qwork_woken(struct qwork *w)
{
	if (queue_woken(w->q))
		w->next_claim = 0;
}

/* Wait for the children's output, new work or the next tick, then read
 * it. */
static void
qwork_poll(struct qwork *w)
{
	struct pollfd	 pfd[2 * QWORK_JOBS_MAX + 1];
	struct qrun	*who[2 * QWORK_JOBS_MAX];
	nfds_t		 n = 0, i;
	unsigned	 k;
	int		 qfd = -1;

	for (k = 0; k < w->nrun; k++) {
		if (w->run[k].out != -1) {
			who[n] = &w->run[k];
			pfd[n].fd = w->run[k].out;
			pfd[n++].events = POLLIN;
		}
		if (w->run[k].err != -1) {
			who[n] = &w->run[k];
			pfd[n].fd = w->run[k].err;
			pfd[n++].events = POLLIN;
		}
	}
	if (w->nrun < w->jobs && !qwork_sigint && !qwork_sigterm &&
	    (qfd = queue_wait_fd(w->q)) >= 0) {
		qwork_woken(w);	/* told during another call */
		pfd[n].fd = qfd;
		pfd[n].events = POLLIN;
	}
	if (poll(pfd, n + (qfd >= 0), qfd >= 0 && w->next_claim == 0 ? 0 :
	    QWORK_TICK_MS) <= 0)
		return;
	if (qfd >= 0 && pfd[n].revents != 0)
		qwork_woken(w);
	for (i = 0; i < n; i++)
		if (pfd[i].revents & (POLLIN | POLLHUP | POLLERR))
			queue_runner_read(who[i], pfd[i].fd);
}

/* Nothing left to wait for: no job queued, retrying or running. */
static int
qwork_queue_empty(struct qwork *w)
{
	struct queue_counts	c;

	if (queue_counts(w->q, &c) == -1) {
		fprintf(stderr, "warren queue work: %s\n", queue_errmsg(w->q));
		return 0;
	}
	return c.n[QUEUE_QUEUED] + c.n[QUEUE_RETRYING] +
	    c.n[QUEUE_RUNNING] == 0;
}

/* The signals' effects: stop claiming; then stop the runs. */
static int
qwork_signalled(struct qwork *w, uint64_t now)
{
	unsigned	i;

	if (qwork_sigint == 0 && !qwork_sigterm)
		return 0;
	if (qwork_sigint >= 2 || qwork_sigterm) {
		if (!w->interrupted)
			for (i = 0; i < w->nrun; i++)
				queue_runner_stop(&w->run[i], QRUN_INTERRUPT,
				    now);
		w->interrupted = 1;
	}
	return 1;
}

static int
qwork_loop(struct qwork *w)
{
	uint64_t	now;
	unsigned	i;
	int		stopping;

	for (;;) {
		now = clock_mono_ms();
		stopping = qwork_signalled(w, now) || w->stuck;
		if (!stopping && w->nrun < w->jobs && now >= w->next_claim)
			qwork_claim(w, now);
		if (w->nrun == 0 && (stopping || (!w->follow &&
		    qwork_queue_empty(w))))
			break;
		queue_progress_tick(w->prog, w->run, w->nrun, now);
		qwork_poll(w);
		now = clock_mono_ms();
		for (i = 0; i < w->nrun; i++) {
			qwork_beat(w, &w->run[i], now);
			queue_runner_tick(&w->run[i], now);
		}
		qwork_reap(w, now);
	}
	if (w->stuck)
		return WARREN_EXIT_STORE;
	if (w->interrupted || qwork_sigint > 0)
		return WARREN_EXIT_INTERRUPTED;
	return w->failed ? WARREN_EXIT_FAIL : WARREN_EXIT_OK;
}

int
cmd_queue_work(int argc, char **argv)
{
	struct qwork	 w;
	const char	*url = NULL;
	ssize_t		 n;
	int		 json = 0, rc;

	memset(&w, 0, sizeof(w));
	w.jobs = 1;
	w.lease_ms = QUEUE_DEFAULT_LEASE_MS;
	if ((rc = qwork_args(&w, argc, argv, &url, &json)) != 0)
		return rc == 1 ? WARREN_EXIT_OK : WARREN_EXIT_USAGE;
	if ((n = readlink("/proc/self/exe", w.exe, sizeof(w.exe) - 1)) <= 0) {
		fprintf(stderr, "warren queue work: /proc/self/exe: %s\n",
		    strerror(errno));
		return WARREN_EXIT_INTERNAL;
	}
	w.exe[n] = '\0';
	if ((w.q = cmd_queue_create("work", url, &rc)) == NULL)
		return rc;
	/* Every job's run shares the LLM rate limits and 429 pauses of this
	 * queue's database (rate_gate.c), through the environment it
	 * inherits: the run's own flags stay the user's. */
	if ((url != NULL && setenv("WARREN_QUEUE_URL", url, 1) == -1) ||
	    setenv("WARREN_LLM_RATE_SHARE", "1", 1) == -1) {
		fprintf(stderr, "warren queue work: setenv: %s\n",
		    strerror(errno));
		queue_close(w.q);
		return WARREN_EXIT_INTERNAL;
	}
	if ((w.run = calloc(w.jobs, sizeof(*w.run))) == NULL ||
	    (w.prog = queue_progress_new(json, w.q)) == NULL) {
		fprintf(stderr, "warren queue work: out of memory\n");
		free(w.run);
		queue_close(w.q);
		return WARREN_EXIT_INTERNAL;
	}
	qwork_worker_id(&w);
	qwork_signals();
	rc = qwork_loop(&w);
	queue_progress_free(w.prog);
	free(w.run);
	queue_close(w.q);
	return rc;
}

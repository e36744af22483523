/*
 * `warren queue work` (cmd_queue_work.c): the jobs it runs as children
 * (queue_runner.c), what each attempt produced (queue_outcome.c) and what
 * the user sees (queue_progress.c). docs/queue.md, "Working the queue".
 */
#ifndef WARREN_QUEUE_WORK_H
#define WARREN_QUEUE_WORK_H

#include <sys/types.h>

#include <limits.h>
#include <stddef.h>
#include <stdint.h>

#include "cli/linebuf.h"
#include "queue/queue.h"

#define QRUN_KILL_GRACE_MS	5000	/* SIGTERM, then SIGKILL this later */
#define QRUN_LINE_MAX		((16u << 20) - 1) /* the longest event line:
						     longer ones are skipped */
#define QRUN_ERRLINE_MAX	512
#define QRUN_DOING_MAX		256

/* Why a run was stopped before it ended by itself. */
enum qrun_stop {
	QRUN_NOT_STOPPED = 0,
	QRUN_LOST,		/* the lease was lost: record nothing */
	QRUN_CANCEL,		/* cancel asked: the job ends cancelled */
	QRUN_INTERRUPT,		/* the worker was interrupted: retry */
	QRUN_TIMEOUT,		/* the job's timeout ran out: retry */
};

/* One job's attempt, run as `warren run --json` in a child. */
struct qrun {
	struct queue_job job;		/* as claimed; attempt = job.attempts */
	pid_t		 pid;		/* -1 once reaped */
	int		 out, err;	/* our ends of its pipes; -1: closed */
	int		 status;	/* wait status, once reaped */
	/* From its events (stdout) and its last error line (stderr). */
	struct linebuf	 ev;		/* stdout's lines */
	char		 errbuf[QRUN_ERRLINE_MAX];
	size_t		 errlen;
	char		 errline[QRUN_ERRLINE_MAX];
	int		 have_result, ok;
	char		*result;	/* the result event's text */
	int64_t		 run_id;	/* the run event's id, 0 if none */
	long		 files;		/* the changes event's, -1 if none */
	/* What its agents do now, from its last event ("[0.1 explore]
	   bash: make"), raw: escaped when shown; doing_new: not yet shown. */
	char		 doing[QRUN_DOING_MAX];
	int		 doing_new;
	/* Its clock (monotonic ms). */
	uint64_t	 started, next_beat, deadline;	/* deadline 0: none */
	uint64_t	 held_until;	/* the lease is surely held until then:
					   the last claim or heartbeat that
					   got through, plus the lease */
	uint64_t	 kill_at;	/* stopping: SIGKILL then (0: not) */
	enum qrun_stop	 stop;
	/* The job's schema for the run's --schema: a 0600 file in a 0700
	   directory of the worker's own, removed with the run; "": none. */
	char		 schema_dir[64], schema_file[80];
};

/* queue_runner.c */
/*
 * Start the job's run: exe run --json --workspace WS [--profile P]
 * [--budget N] [--schema FILE] [$WARREN_QUEUE_RUN_ARGS] -- -, in a process
 * group of its own, the task on its stdin (a memory file: as long as the
 * run takes, CMD_RUN_TASK_MAX); the job's timeout is its deadline (stopped
 * then, by queue_runner_tick). 0, or -1 with err.
 */
int	queue_runner_start(struct qrun *r, const char *exe, uint64_t now,
	    char *err, size_t errsz);
/*
 * Fork a child warren, exe with argv: stdin from in (closed here), its
 * stdout and stderr into pipes whose read ends are fds[0] and fds[1]
 * (non-blocking), in a process group of its own, SIGTERM when we die;
 * who names it in its exec error. Its pid, or -1 with errno and *what
 * ("pipe", "fork"). For a run's child and the MCP server's other
 * children (cli/mcp_child.c).
 */
pid_t	queue_runner_spawn(const char *exe, char *const argv[], int in,
	    unsigned flags, const char *who, int fds[2], const char **what);
#define QRUN_SPAWN_DFL	0x01	/* SIGINT, SIGTERM at their defaults in it
				   (the worker handles them) */
/* Read what fd (r->out or r->err) has; closes it at its end. */
void	queue_runner_read(struct qrun *r, int fd);
/* A child's output as it comes, take(arg, p, n), then its end,
 * take(arg, NULL, 0). */
typedef void queue_runner_take(void *arg, const char *p, size_t n);
/* Read what *fd has, each chunk to take, until it would block; at its
 * end (or an error reading it) take's end, then *fd closed and -1. For
 * a run's child and the MCP server's other children (cli/mcp_child.c). */
void	queue_runner_drain(int *fd, queue_runner_take *take, void *arg);
/* A child has exited: what its pipes *out and *err hold now, then both
 * closed (a grandchild holding one open does not keep it running). */
void	queue_runner_ended(int *out, int *err, queue_runner_take *take_out,
	    queue_runner_take *take_err, void *arg);
/* SIGTERM (once), SIGKILL QRUN_KILL_GRACE_MS later (queue_runner_tick). */
void	queue_runner_stop(struct qrun *r, enum qrun_stop why, uint64_t now);
void	queue_runner_tick(struct qrun *r, uint64_t now);
/* A memory file holding s, read from its start, for a child's stdin
 * (a run's task, an MCP tool's input: cli/mcp_child.c); -1 with err
 * saying what (its name in messages) failed. */
int	queue_runner_memfd(const char *name, const char *what, const char *s,
	    char *err, size_t errsz);
/* 1 when child *pid has ended or is no more (*pid -1, its wait status
 * in *status: exit 127 if waitpid failed), 0 while it runs. For a run's
 * child and the MCP server's other children (cli/mcp_child.c). */
int	queue_runner_waited(pid_t *pid, int *status);
/* 1 when the run has exited (its pipes drained and closed), else 0. */
int	queue_runner_reap(struct qrun *r);
void	queue_runner_free(struct qrun *r);

/* queue_outcome.c */
struct qoutcome {
	struct queue_result res;	/* its strings point into the fields
					   below */
	int		 ok;		/* complete, not fail */
	unsigned	 flags;		/* queue_fail's */
	char		*answer, *output, *error, *diff;
	void		*changes;	/* the layer's change set, or NULL */
	char		*changes_note;	/* why the set is not stored */
	char		 where[PATH_MAX + 300];	/* res.run_where */
};
/* What a reaped run produced: done, or failed with why. */
void	queue_outcome_make(struct qoutcome *o, struct qrun *r, uint64_t now);
void	queue_outcome_free(struct qoutcome *o);
/* "exit 4 (the LLM endpoint failed after retries)" for a wait status. */

/* queue_progress.c */
struct qprogress;
struct qprogress *queue_progress_new(int json, struct queue *q);
void	queue_progress_start(struct qprogress *p, const struct qrun *r);
/* An attempt ended: outcome "done", "failed", "cancelled", "lost" or
 * "interrupted"; status what the job became ("retrying", "dead" ...). */
void	queue_progress_end(struct qprogress *p, const struct qrun *r,
	    const struct qoutcome *o, const char *outcome,
	    const char *status);
/* Redraw the terminal's lines if due (10 per second at most): the
 * progress line, then one line per running job. */
void	queue_progress_tick(struct qprogress *p, struct qrun *runs,
	    unsigned running, uint64_t now);
/* The line's last state, then a newline, then the summary on stderr (a
 * terminal), or the summary event (JSON): the jobs done, failed (dead)
 * and cancelled, the attempts retried, and the first QPROG_DEAD_MAX dead
 * jobs with their last errors. Frees p. */
void	queue_progress_free(struct qprogress *p);

#endif

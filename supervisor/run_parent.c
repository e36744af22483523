/*
 * A run that dies with its parent. A parent that set a parent-death
 * signal before it exec'd us (`warren queue work` sets SIGTERM on each
 * job's run, cli/queue_runner.c) wants no run of its own left once it is
 * gone. Its signal alone would start the graceful stop (cancel, a grace,
 * the LLM requests in flight), which may take a minute, and a loop stuck
 * in a call never reads it. So a thread of ours watches the parent (its
 * pidfd, or its pid every RUN_PARENT_POLL_MS) and stops the run hard:
 * the spawn server is told its supervisor is gone (it kills every worker
 * tree, removes their groups and exits), our own children (workers we
 * forked ourselves, tool processes reparented to us) are SIGKILLed with
 * their process groups, and the loop is woken to record the run as
 * cancelled. Whatever the loop does, the process exits
 * RUN_PARENT_RECORD_MS later. A run nobody asked to die with its parent
 * (a shell's `warren run`, `nohup`) is not watched.
 */
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/types.h>

#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/exitcode.h"
#include "common/log.h"
#include "store/store.h"
#include "supervisor/run.h"
#include "supervisor/spawnd_client.h"

#define RUN_PARENT_POLL_MS	50	/* without a pidfd: getppid() */
#define RUN_PARENT_RECORD_MS	700	/* the loop's time to record */
#define RUN_PARENT_SIGNAL	SIGUSR1	/* the spawn server's "parent gone" */

static pid_t	run_parent_pid;		/* 0: not watched */
static pid_t	run_parent_spawnd;	/* the spawn server, or 0 */
static int	run_parent_spawnd_fd = -1;	/* its pidfd */

int
run_parent_gone(void)
{
	return run_parent_pid > 0 && getppid() != run_parent_pid;
}

void
run_parent_note(void)
{
	int	sig = 0;

	if (prctl(PR_GET_PDEATHSIG, &sig) == -1 || sig == 0)
		return;
	run_parent_pid = getppid();
}

/* A process's pidfd, -1 where the kernel has none (before 5.3). */
static int
run_parent_pidfd(pid_t pid)
{
#ifdef SYS_pidfd_open
	return (int)syscall(SYS_pidfd_open, pid, 0);
#else
	(void)pid;
	errno = ENOSYS;
	return -1;
#endif
}

/* The spawn server's "your supervisor is gone": by its pidfd, so a pid
 * reused once it was reaped gets nothing. */
static void
run_parent_tell_spawnd(void)
{
#ifdef SYS_pidfd_send_signal
	if (run_parent_spawnd_fd != -1) {
		(void)syscall(SYS_pidfd_send_signal, run_parent_spawnd_fd,
		    RUN_PARENT_SIGNAL, NULL, 0);
		return;
	}
#endif
	if (run_parent_spawnd > 0)
		(void)kill(run_parent_spawnd, RUN_PARENT_SIGNAL);
}

/* Until the parent is gone: its pidfd, then (or without one) getppid. */
static void
run_parent_wait(void)
{
	struct pollfd	pfd;

	pfd.fd = run_parent_pidfd(run_parent_pid);
	pfd.events = POLLIN;
	while (!run_parent_gone()) {
		if (pfd.fd == -1)
			(void)poll(NULL, 0, RUN_PARENT_POLL_MS);
		else if (poll(&pfd, 1, -1) != 0) {
			/* It exited (or the pidfd failed): we are reparented
			 * a moment later, and the pidfd stays readable. */
			close(pfd.fd);
			pfd.fd = -1;
		}
	}
	if (pfd.fd != -1)
		close(pfd.fd);
}

static void *
run_parent_main(void *arg)
{
	(void)arg;
	run_parent_wait();
	log_warnx("the run's parent (pid %d) died: killing every agent",
	    (int)run_parent_pid);
	run_parent_tell_spawnd();
	proc_kill_children(run_parent_spawnd);
	/* The loop records the run (run_parent_stop), if it can in time. */
	(void)kill(getpid(), SIGTERM);
	(void)poll(NULL, 0, RUN_PARENT_RECORD_MS);
	_exit(WARREN_EXIT_INTERRUPTED);
}

void
run_parent_watch(struct run *r)
{
	pthread_t	t;
	sigset_t	all, old;
	int		rc;

	if (run_parent_pid <= 0)
		return;
	if (r->spawnd != NULL) {
		run_parent_spawnd = spawnd_client_pid(r->spawnd);
		run_parent_spawnd_fd = run_parent_pidfd(run_parent_spawnd);
	}
	/* Signals are the loop's (its signalfd), never the thread's. */
	sigfillset(&all);
	pthread_sigmask(SIG_BLOCK, &all, &old);
	rc = pthread_create(&t, NULL, run_parent_main, NULL);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (rc != 0) {
		/* Its signal still comes: the graceful stop, then. */
		log_warnx("the thread watching the run's parent (pid %d): %s; "
		    "the run stops gracefully if its parent dies",
		    (int)run_parent_pid, strerror(rc));
		return;
	}
	(void)pthread_detach(t);
}

/* In the loop, its parent gone: the run is cancelled, recorded if the
 * store takes it before the thread's deadline, and we exit. */
void
run_parent_stop(struct run *r)
{
	char	why[128];

	snprintf(why, sizeof(why), "interrupted: its parent (pid %d) died",
	    (int)run_parent_pid);
	run_parent_tell_spawnd();
	if (r->store != NULL && r->run_id > 0 && store_run_finish(r->store,
	    r->run_id, STORE_RUN_CANCELLED, why) == -1)
		log_warnx("run %lld: its status: %s", (long long)r->run_id,
		    store_errmsg(r->store));
	_exit(WARREN_EXIT_INTERRUPTED);
}

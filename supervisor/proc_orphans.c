/*
 * The children a run leaves behind: tool processes that escaped their
 * group (setsid, double fork) and were reparented to warren, the
 * subreaper. Found through /proc, killed and reaped after the run
 * (proc_sweep_orphans) or killed from any thread (proc_kill_children).
 * Separate from proc.c because it knows no worker: it reads /proc, not
 * the run's table of workers.
 */
#include <sys/types.h>
#include <sys/wait.h>

#include <dirent.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "supervisor/run.h"

/* Our live children from /proc/self/task/T/children (each of our threads'
 * own); -1 if the kernel has no such file (CONFIG_PROC_CHILDREN). */
static int
proc_children_listed(pid_t *out, int max, pid_t keep)
{
	DIR		*d;
	struct dirent	*de;
	char		 path[300], buf[4096], *p, *end;
	long		 pid;
	int		 n = 0, fd, seen = 0;
	ssize_t		 len;

	if ((d = opendir("/proc/self/task")) == NULL)
		return -1;
	while ((de = readdir(d)) != NULL && n < max) {
		if (de->d_name[0] == '.')
			continue;
		if ((size_t)snprintf(path, sizeof(path),
		    "/proc/self/task/%s/children", de->d_name) >= sizeof(path) ||
		    (fd = open(path, O_RDONLY | O_CLOEXEC)) == -1)
			continue;
		seen = 1;
		/* A short list: more than fits is read next round. */
		len = read(fd, buf, sizeof(buf) - 1);
		close(fd);
		if (len <= 0)
			continue;
		buf[len] = '\0';
		for (p = buf; n < max; p = end) {
			pid = strtol(p, &end, 10);
			/* Each pid ends with a space: one cut off by a full
			 * buffer is not a pid to kill. */
			if (end == p || (*end != ' ' && *end != '\n'))
				break;
			if (pid > 0 && (pid_t)pid != keep)
				out[n++] = (pid_t)pid;
		}
	}
	closedir(d);
	return seen ? n : -1;
}

/* Our live children (tool processes reparented to us): listed by the
 * kernel, or else found among all of /proc by their parent. */
static int
proc_children(pid_t *out, int max, pid_t keep)
{
	DIR		*d;
	struct dirent	*de;
	char		 path[64], buf[512], *p;
	pid_t		 self = getpid(), pid;
	int		 n = 0, fd, ppid;
	ssize_t		 len;

	if ((n = proc_children_listed(out, max, keep)) >= 0)
		return n;
	n = 0;
	if ((d = opendir("/proc")) == NULL)
		return 0;
	while ((de = readdir(d)) != NULL && n < max) {
		if ((pid = (pid_t)strtol(de->d_name, &p, 10)) <= 0 || *p != '\0')
			continue;
		snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
		if ((fd = open(path, O_RDONLY | O_CLOEXEC)) == -1)
			continue;
		len = read(fd, buf, sizeof(buf) - 1);
		close(fd);
		if (len <= 0)
			continue;
		buf[len] = '\0';
		/* "pid (comm) S ppid ...": comm may hold spaces and ')'. */
		if ((p = strrchr(buf, ')')) == NULL ||
		    sscanf(p + 1, " %*c %d", &ppid) != 1)
			continue;
		if (ppid == (int)self && pid != keep)
			out[n++] = pid;
	}
	closedir(d);
	return n;
}

void
proc_kill_children(pid_t keep)
{
	pid_t	pids[256];
	int	i, n;

	n = proc_children(pids, 256, keep);
	for (i = 0; i < n; i++) {
		(void)kill(-pids[i], SIGKILL);
		(void)kill(pids[i], SIGKILL);
	}
}

/*
 * After the run: every process still our child is a tool process that
 * escaped its group (setsid, double fork) and was reparented to us, the
 * subreaper. Kill them, then reap everything, until none is left.
 */
void
proc_sweep_orphans(pid_t keep)
{
	pid_t		pids[256];
	siginfo_t	si;
	int		round, n, i, waits = 0;

	for (round = 0; round < 20; round++) {
		n = proc_children(pids, 256, keep);
		for (i = 0; i < n; i++)
			(void)kill(pids[i], SIGKILL);
		for (;;) {
			memset(&si, 0, sizeof(si));
			if (waitid(P_ALL, 0, &si, WEXITED | WNOHANG) == -1)
				break;
			if (si.si_pid == 0) {
				if (n == 0 || ++waits > 5000)
					break;
				usleep(1000);	/* SIGKILLed, not yet dead */
				continue;
			}
			if (si.si_pid == keep)
				continue;	/* reaped: spawnd_client_stop copes */
			if (n > 0 && --n == 0)
				break;
		}
		if (proc_children(pids, 1, keep) == 0)
			break;
	}
}

/*
 * bench_floor_agent: what N subagents x S steps cost on this machine with
 * every per-agent layer the supervisor issue requires and none of warren's
 * own logic. Each agent is a fork + exec (sandbox_spawn, as the spawn
 * server does it) of bench_floor_child, a static program that enters the
 * same sandbox as a worker of PROFILE (cgroup, namespaces and mounts,
 * rlimits, caps, Landlock, seccomp: sandbox_enter) and then plays a
 * worker's IPC with raw frames of a worker's sizes: a hello, then S
 * requests of 2.7 KB, each answered with 130 bytes, then exit. No
 * msgpack, no agent core, no tools, no events, no spawn server hop.
 *
 *	bench_floor_agent [-n N] [-s S] [-j JOBS] [-p PROFILE] [-c CHILD]
 *
 * N = 1000, S = 5, JOBS = 2, PROFILE = explore, CHILD =
 * ./bench/bench_floor_child. Compare with bench_run N S JOBS: the
 * difference is warren's own work.
 */
#include <sys/resource.h>
#include <sys/wait.h>

#include <errno.h>
#include <limits.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "agent/profile.h"
#include "common/clock.h"
#include "sandbox/sandbox.h"
#include "spawnd/spawn.h"

#define JOBS_MAX	64
#define START_LEN	422	/* a start frame's body, as warren sends it */
#define REPLY_LEN	130	/* a replayed llm_ok's body */

struct slot {
	struct spawn_child	c;
	int			live;
	int			said;	/* frames read from the child */
};

static void __attribute__((noreturn))
die(const char *what)
{
	perror(what);
	exit(1);
}

/* One frame to the child: a length, then body bytes. */
static void
answer(int fd, size_t len)
{
	unsigned char	f[4 + START_LEN];
	struct pollfd	p = { fd, POLLOUT, 0 };

	memset(f, 0, sizeof(f));
	f[2] = (unsigned char)(len >> 8);
	f[3] = (unsigned char)len;
	/* Non-blocking, but the pipe is empty: the child waits for this. */
	while (write(fd, f, 4 + len) == -1) {
		if (errno != EAGAIN && errno != EINTR)
			die("write to a child");
		(void)poll(&p, 1, -1);
	}
}

static void
start(struct slot *s, const struct spawn_req *req)
{
	char	err[512];

	if (spawn_worker(req, &s->c, err, sizeof(err)) == -1) {
		fprintf(stderr, "bench_floor_agent: %s\n", err);
		exit(1);
	}
	s->live = 1;
	s->said = 0;
}

/* The child spoke or closed: answer it, or reap it. 1 when it ended. */
static int
serve(struct slot *s)
{
	char	buf[8192];
	ssize_t	n;
	int	st;

	n = read(s->c.from_fd, buf, sizeof(buf));
	if (n == -1 && (errno == EAGAIN || errno == EINTR))
		return 0;
	if (n > 0) {
		/* Frames of a few KB are written whole, and the child
		   waits for the answer: one read is one frame. */
		answer(s->c.to_fd, s->said++ == 0 ? START_LEN : REPLY_LEN);
		return 0;
	}
	if (waitpid(s->c.pid, &st, 0) == -1)
		die("waitpid");
	if (!WIFEXITED(st) || WEXITSTATUS(st) != 0) {
		n = read(s->c.err_fd, buf, sizeof(buf) - 1);
		buf[n > 0 ? n : 0] = '\0';
		fprintf(stderr, "bench_floor_agent: a child ended with status "
		    "%d: %s\n", st, buf);
		exit(1);
	}
	spawn_release(&s->c);
	s->live = 0;
	return 1;
}

int
main(int argc, char **argv)
{
	struct slot		 slots[JOBS_MAX];
	struct pollfd		 pfd[JOBS_MAX];
	struct sandbox_policy	 pol;
	struct sandbox_caps	 caps;
	struct sandbox_error	 e;
	struct spawn_req	 req;
	struct rusage		 self, kids;
	const char		*profile = "explore";
	const char		*child = "./bench/bench_floor_child";
	char			 ws[] = "/tmp/bench-floor.XXXXXX", steps[16];
	char			*cargv[3], **env;
	int			 n = 1000, s = 5, jobs = 2, ch, i, started = 0;
	int			 done = 0, live;
	uint64_t		 t0;

	while ((ch = getopt(argc, argv, "n:s:j:p:c:")) != -1) {
		switch (ch) {
		case 'n': n = atoi(optarg); break;
		case 's': s = atoi(optarg); break;
		case 'j': jobs = atoi(optarg); break;
		case 'p': profile = optarg; break;
		case 'c': child = optarg; break;
		default:
			fprintf(stderr, "usage: bench_floor_agent [-n N] [-s S] "
			    "[-j JOBS] [-p PROFILE] [-c CHILD]\n");
			return 2;
		}
	}
	if (n < 1 || s < 0 || jobs < 1 || jobs > JOBS_MAX)
		return 2;
	if (mkdtemp(ws) == NULL)
		die("mkdtemp");
	memset(&e, 0, sizeof(e));
	if (sandbox_caps_probe(&caps, 0) == -1 ||
	    profile_policy(&pol, profile, ws, &e) == -1) {
		fprintf(stderr, "bench_floor_agent: policy: %s\n", e.msg);
		return 1;
	}
	sandbox_policy_require(&pol, &caps);
	/* As the spawn server sets itself up (spawnd/spawnd.c). */
	if (geteuid() == 0)
		(void)sandbox_netns_share(&e);
	sandbox_caps_freeze();
	(void)sandbox_caps_bound(&e);
	snprintf(steps, sizeof(steps), "%d", s);
	cargv[0] = "bench_floor_child";
	cargv[1] = steps;
	cargv[2] = NULL;
	env = spawn_env();
	req = (struct spawn_req){ .bin = child, .argv = cargv, .envp = env,
	    .policy = &pol };
	memset(slots, 0, sizeof(slots));
	t0 = clock_mono_ns();
	while (done < n) {
		for (i = 0; i < jobs && started < n; i++)
			if (!slots[i].live) {
				start(&slots[i], &req);
				started++;
			}
		for (i = 0, live = 0; i < jobs; i++) {
			pfd[i].fd = slots[i].live ? slots[i].c.from_fd : -1;
			pfd[i].events = POLLIN;
			live += slots[i].live;
		}
		if (live == 0)
			break;
		if (poll(pfd, (nfds_t)jobs, -1) == -1 && errno != EINTR)
			die("poll");
		for (i = 0; i < jobs; i++)
			if (slots[i].live && pfd[i].revents != 0)
				done += serve(&slots[i]);
	}
	printf("%d agents x %d steps, %d at a time, profile %s: wall %.3f s",
	    n, s, jobs, profile, (clock_mono_ns() - t0) / 1e9);
	getrusage(RUSAGE_SELF, &self);
	getrusage(RUSAGE_CHILDREN, &kids);
	printf(", cpu %.3f s (this process %.3f s)\n",
	    self.ru_utime.tv_sec + self.ru_stime.tv_sec + kids.ru_utime.tv_sec +
	    kids.ru_stime.tv_sec + (self.ru_utime.tv_usec +
	    self.ru_stime.tv_usec + kids.ru_utime.tv_usec +
	    kids.ru_stime.tv_usec) / 1e6, self.ru_utime.tv_sec +
	    self.ru_stime.tv_sec + (self.ru_utime.tv_usec +
	    self.ru_stime.tv_usec) / 1e6);
	spawn_env_free(env);
	(void)rmdir(ws);
	return 0;
}

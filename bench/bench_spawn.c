/*
 * bench_spawn: spawn -> hello latency of a fully sandboxed worker (the
 * supervisor's own spawn path: sandbox_prepare/spawn/child phase, exec,
 * sandbox_enter, hello frame), against bare fork + exec of /bin/true and
 * against the kernel's floor for it: one clone into the same namespaces
 * and an exec of /bin/true, no sandbox code at all. The three are
 * interleaved, so a change of load hits them alike.
 * Also the RSS of an idle worker (waiting for start) and the memory the
 * spawning process holds per live worker.
 *
 *	bench_spawn [N [PROFILE [PAUSE_MS]]]	(1000, explore, 0)
 *
 * PAUSE_MS: sleep that long before each spawn, as a supervisor whose
 * agents spawn one now and then does: a cgroup join after a quiet spell
 * is the one that paid an RCU grace period (docs/benchmarks.md, "cgroup
 * join"); spawns back to back hide it.
 *
 * WARREN_WORKER_BIN names the worker (default: ./worker/warren-worker).
 */
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/wait.h>

#include <errno.h>
#include <limits.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "agent/profile.h"
#include "common/clock.h"
#include "ipc/ipc.h"
#include "sandbox/sandbox.h"
#include "spawnd/spawn.h"

static int
cmp_u64(const void *a, const void *b)
{
	uint64_t	x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

static void
report(const char *what, uint64_t *ns, int n)
{
	qsort(ns, (size_t)n, sizeof(*ns), cmp_u64);
	printf("%-28s median %8.3f ms  p99 %8.3f ms  (n=%d)\n", what,
	    ns[n / 2] / 1e6, ns[(n * 99) / 100] / 1e6, n);
}

static uint64_t
bare_true(void)
{
	uint64_t	t0 = clock_mono_ns();
	pid_t		pid;
	int		st;

	if ((pid = fork()) == 0) {
		execl("/bin/true", "true", (char *)NULL);
		_exit(127);
	}
	(void)waitpid(pid, &st, 0);
	return clock_mono_ns() - t0;
}

/* clone(2) into flags (what sandbox_fork would use) and exec /bin/true. */
static uint64_t
ns_true(int flags)
{
	uint64_t	t0 = clock_mono_ns();
	pid_t		pid;
	int		st;

	pid = (pid_t)syscall(SYS_clone, (long)flags | SIGCHLD, NULL, NULL,
	    NULL, NULL);
	if (pid == 0) {
		execl("/bin/true", "true", (char *)NULL);
		_exit(127);
	}
	if (pid > 0)
		(void)waitpid(pid, &st, 0);
	return clock_mono_ns() - t0;
}

/* Block until a whole hello frame came; 0 on success. */
static int
wait_hello(struct spawn_child *c)
{
	struct ipc_peer	 p;
	struct ipc_msg	 m;
	struct pollfd	 pfd;
	int		 rc = -1;

	ipc_peer_init(&p, c->from_fd, c->to_fd, IPC_SIDE_SUPERVISOR);
	pfd.fd = c->from_fd;
	pfd.events = POLLIN;
	for (;;) {
		memset(&m, 0, sizeof(m));
		if (ipc_peer_get(&p, &m) == 1) {
			rc = m.type == IPC_HELLO ? 0 : -1;
			ipc_msg_free(&m);
			break;
		}
		if (poll(&pfd, 1, 10000) <= 0)
			break;
		if (ipc_peer_fill(&p) <= 0 && errno != EAGAIN)
			break;
	}
	ipc_peer_free(&p);
	return rc;
}

static long
rss_kb(pid_t pid)
{
	char	path[64], line[256];
	long	kb = -1;
	FILE	*f;

	snprintf(path, sizeof(path), "/proc/%d/status", (int)pid);
	if ((f = fopen(path, "r")) == NULL)
		return -1;
	while (fgets(line, sizeof(line), f) != NULL)
		if (sscanf(line, "VmRSS: %ld kB", &kb) == 1)
			break;
	fclose(f);
	return kb;
}

static void
finish(struct spawn_child *c)
{
	int	st;

	spawn_kill(c, SIGKILL);
	(void)waitpid(c->pid, &st, 0);
	spawn_release(c);
}

int
main(int argc, char **argv)
{
	struct sandbox_policy	 pol;
	struct sandbox_caps	 caps;
	struct sandbox_error	 e;
	struct spawn_req	 req;
	struct spawn_child	*kids;
	const char		*bin = getenv("WARREN_WORKER_BIN");
	const char		*profile = argc > 2 ? argv[2] : "explore";
	char			 ws[] = "/tmp/bench-spawn.XXXXXX", err[512];
	char			*wargv[] = { "warren-worker", "--path", "0.1",
				    "--depth", "1", "--profile", NULL, NULL };
	char			**env;
	struct sandbox		 sb;
	uint64_t		*base, *lat, *nsf, t0;
	long			 before, after, wrss = -1;
	int			 n = argc > 1 ? atoi(argv[1]) : 1000, i, live;
	int			 pause_ms = argc > 3 ? atoi(argv[3]) : 0;
	int			 flags;

	if (n < 10)
		n = 10;
	if (bin == NULL)
		bin = "./worker/warren-worker";
	if (mkdtemp(ws) == NULL)
		return 1;
	wargv[6] = (char *)(uintptr_t)profile;
	memset(&e, 0, sizeof(e));
	(void)sandbox_caps_probe(&caps, 0);
	if (profile_policy(&pol, profile, ws, &e) == -1) {
		fprintf(stderr, "policy: %s\n", e.msg);
		return 1;
	}
	sandbox_policy_require(&pol, &caps);
	env = spawn_env();
	req = (struct spawn_req){ .bin = bin, .argv = wargv, .envp = env,
	    .policy = &pol };
	base = calloc((size_t)n, sizeof(*base));
	lat = calloc((size_t)n, sizeof(*lat));
	nsf = calloc((size_t)n, sizeof(*nsf));
	kids = calloc(100, sizeof(*kids));
	signal(SIGPIPE, SIG_IGN);
	/* As the spawn server does (spawnd.c), unless told not to. */
	if (geteuid() == 0 && getenv("BENCH_SPAWN_OWN_NETNS") == NULL &&
	    sandbox_netns_share(&e) == -1)
		fprintf(stderr, "shared netns: %s\n", e.msg);
	sandbox_caps_freeze();
	/* The namespaces a worker's clone gets here. */
	if (sandbox_prepare(&sb, &pol, &e) == -1) {
		fprintf(stderr, "sandbox: %s\n", e.msg);
		return 1;
	}
	flags = sb.cloneflags;
	sandbox_release(&sb);

	for (i = 0; i < n; i++) {
		base[i] = bare_true();
		nsf[i] = ns_true(flags);
		if (pause_ms > 0)
			usleep((useconds_t)pause_ms * 1000);
		t0 = clock_mono_ns();
		if (spawn_worker(&req, &kids[0], err, sizeof(err)) == -1) {
			fprintf(stderr, "spawn: %s\n", err);
			return 1;
		}
		if (wait_hello(&kids[0]) == -1) {
			fprintf(stderr, "no hello from %s\n", bin);
			return 1;
		}
		lat[i] = clock_mono_ns() - t0;
		if (i == 0)
			wrss = rss_kb(kids[0].pid);
		finish(&kids[0]);
	}
	printf("workspace %s, profile %s, worker %s\n", ws, profile, bin);
	report("fork+exec /bin/true", base, n);
	report("ns clone+exec /bin/true", nsf, n);
	report("spawn -> hello (sandboxed)", lat, n);
	qsort(base, (size_t)n, sizeof(*base), cmp_u64);
	qsort(nsf, (size_t)n, sizeof(*nsf), cmp_u64);
	qsort(lat, (size_t)n, sizeof(*lat), cmp_u64);
	printf("ratio of medians %.2fx (target <= 1.5x); the namespaces alone "
	    "%.2fx; spawn / namespaces alone %.2fx\n",
	    (double)lat[n / 2] / (double)base[n / 2],
	    (double)nsf[n / 2] / (double)base[n / 2],
	    (double)lat[n / 2] / (double)nsf[n / 2]);
	printf("idle worker RSS %ld kB (target <= 4096 kB)\n", wrss);

	/* Memory the spawning side holds per live worker. */
	before = rss_kb(getpid());
	for (live = 0; live < 100; live++) {
		if (spawn_worker(&req, &kids[live], err, sizeof(err)) == -1 ||
		    wait_hello(&kids[live]) == -1)
			break;
	}
	after = rss_kb(getpid());
	printf("spawner RSS per live worker %.1f kB (%d live)\n",
	    live ? (double)(after - before) / live : 0.0, live);
	for (i = 0; i < live; i++)
		finish(&kids[i]);
	spawn_env_free(env);
	rmdir(ws);
	free(base);
	free(lat);
	free(nsf);
	free(kids);
	return 0;
}

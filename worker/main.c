/*
 * warren-worker: one sandboxed subagent. Started by the supervisor with its
 * IPC channel on fds 3 (in) and 4 (out); see docs/supervisor.md. The
 * sandbox is entered before anything untrusted is read: argv is the
 * supervisor's, everything after sandbox_enter() may come from a model.
 */
#include <sys/random.h>

#include <errno.h>
#include <limits.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <jansson.h>

#include "common/exitcode.h"
#include "common/fd.h"
#include "common/log.h"
#include "common/version.h"
#include "sandbox/sandbox.h"
#include "worker/worker.h"

static int
worker_argv_keep(struct proxy_cfg *b)
{
	int	i;

	if ((b->backend = strdup(b->backend)) == NULL ||
	    (b->program = strdup(b->program)) == NULL ||
	    (b->wire != NULL && (b->wire = strdup(b->wire)) == NULL) ||
	    (b->model != NULL && (b->model = strdup(b->model)) == NULL))
		return -1;
	for (i = 0; i < b->nargs; i++)
		if ((b->args[i] = strdup(b->args[i])) == NULL)
			return -1;
	return 0;
}

/* What worker_argv_keep copied (a NULL backend: nothing). */
static void
worker_argv_free(struct proxy_cfg *b)
{
	int	i;

	if (b->backend == NULL)
		return;
	free((char *)(uintptr_t)b->backend);
	free((char *)(uintptr_t)b->program);
	free((char *)(uintptr_t)b->wire);
	free((char *)(uintptr_t)b->model);
	for (i = 0; i < b->nargs; i++)
		free(b->args[i]);
}

static void __attribute__((noreturn))
usage(void)
{
	fprintf(stderr, "warren-worker: this program is started by warren, "
	    "not by hand\n");
	exit(WARREN_EXIT_USAGE);
}

extern char **environ;

/*
 * The worker is pid 1 of its pid namespace, and the kernel does not let
 * a signal it has no handler for kill pid 1: RLIMIT_CPU's SIGXCPU would
 * be lost, and the hard limit's SIGKILL would tell the supervisor nothing.
 * So say it, and exit with the code the supervisor reads as that limit.
 */
static void
cpu_limit(int sig)
{
	static const char	 msg[] = "warren-worker: the CPU time limit "
				    "(RLIMIT_CPU) ran out\n";

	(void)sig;
	(void)!write(STDERR_FILENO, msg, sizeof(msg) - 1);
	_exit(WARREN_EXIT_WORKER_CPU);
}

int
main(int argc, char **argv)
{
	struct worker_args	 a;
	struct sandbox_report	 rep;
	struct sandbox_error	 e;
	const char		*errstr;
	uint32_t		 seed;
	int			 i, rc;

	worker_prefault();
	log_init("warren-worker", LOG_LEVEL_INFO);
	if (argc == 2 && strcmp(argv[1], "--version") == 0) {
		printf("warren-worker %s\n", WARREN_VERSION);
		return WARREN_EXIT_OK;
	}
	memset(&a, 0, sizeof(a));
	a.in_fd = 3;
	a.out_fd = 4;
	for (i = 1; i < argc; i++) {
		if (strcmp(argv[i], "-T") == 0)
			a.trace = 1;
		else if (i + 1 >= argc)
			usage();
		else if (strcmp(argv[i], "--path") == 0)
			a.path = argv[++i];
		else if (strcmp(argv[i], "--profile") == 0)
			a.profile = argv[++i];
		else if (strcmp(argv[i], "--backend") == 0)
			a.backend.backend = argv[++i];
		else if (strcmp(argv[i], "--program") == 0)
			a.backend.program = argv[++i];
		else if (strcmp(argv[i], "--wire") == 0)
			a.backend.wire = argv[++i];
		else if (strcmp(argv[i], "--model") == 0)
			a.backend.model = argv[++i];
		else if (strcmp(argv[i], "--arg") == 0) {
			if (a.backend.nargs == 63)
				usage();
			a.backend.args[a.backend.nargs++] = argv[++i];
		}
		else if (strcmp(argv[i], "--depth") == 0) {
			a.depth = (unsigned)strtonum(argv[++i], 0, 64, &errstr);
			if (errstr != NULL)
				usage();
		} else
			usage();
	}
	if (a.path == NULL || a.profile == NULL ||
	    (a.backend.backend != NULL && a.backend.program == NULL))
		usage();
	/* setproctitle reuses argv's memory, the backend's strings too. */
	if (a.backend.backend != NULL && worker_argv_keep(&a.backend) == -1)
		fatal("strdup");
	/* setproctitle reuses argv's memory: keep copies. */
	if ((a.path = strdup(a.path)) == NULL ||
	    (a.profile = strdup(a.profile)) == NULL)
		fatal("strdup");
	/* Tools this worker runs must not inherit the channel. */
	if (fd_set_cloexec(a.in_fd, 1) == -1 || fd_set_cloexec(a.out_fd, 1) == -1)
		fatal("the IPC channel (fds 3 and 4) is not open");
	setproctitle_init(argc, argv, environ);
	setproctitle("%s %s (depth %u)", a.profile, a.path, a.depth);
	if (signal(SIGXCPU, cpu_limit) == SIG_ERR)
		fatal("signal(SIGXCPU)");
	/* The sandbox's RLIMIT_FSIZE: a write tool's write past it fails
	 * with EFBIG, which the tool reports, rather than ending the
	 * worker (as pid 1 of its pid namespace the kernel drops the
	 * signal anyway; without one it would kill). Its commands get the
	 * default back (tool_bash.c). */
	if (signal(SIGXFSZ, SIG_IGN) == SIG_ERR)
		fatal("signal(SIGXFSZ)");
	/* jansson would seed its hash tables (the model's JSON arguments
	 * are hostile) from /dev/urandom: an open, a read and a close, the
	 * open checked by Landlock. getrandom is one call. */
	if (getrandom(&seed, sizeof(seed), GRND_NONBLOCK) == sizeof(seed) &&
	    seed != 0)
		json_object_seed(seed);
	/* The sandbox first: the policy comes from the supervisor's env. */
	memset(&rep, 0, sizeof(rep));
	memset(&e, 0, sizeof(e));
	if (sandbox_enter(NULL, &rep, &e) == -1) {
		log_warnx("sandbox: %s", e.msg);
		return WARREN_EXIT_SANDBOX;
	}
	rc = worker_main(&a, &rep);
	worker_argv_free(&a.backend);
	free((char *)(uintptr_t)a.path);
	free((char *)(uintptr_t)a.profile);
	return rc;
}

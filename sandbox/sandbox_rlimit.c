/*
 * Resource limits: CPU, address space, file size, open files, no core
 * dumps, and RLIMIT_NPROC when no pids cgroup bounds the process count.
 *
 * Limits only ever go down: a hard limit lower than asked is kept. RLIMIT_AS
 * is skipped in AddressSanitizer builds, whose shadow memory reserves
 * terabytes of address space, and the report's note says so.
 */
#include <sys/types.h>
#include <sys/resource.h>

#include <errno.h>

#include "sandbox/sandbox_int.h"

static int
sandbox_rlimit_set(int resource, const char *name, rlim_t soft, rlim_t hard,
    struct sandbox_error *e)
{
	struct rlimit	 rl;

	if (getrlimit(resource, &rl) == -1)
		return sandbox_fail(e, SANDBOX_RLIMITS, errno, "getrlimit %s",
		    name);
	if (rl.rlim_max != RLIM_INFINITY && hard > rl.rlim_max)
		hard = rl.rlim_max;
	if (soft > hard)
		soft = hard;
	rl.rlim_cur = soft;
	rl.rlim_max = hard;
	if (setrlimit(resource, &rl) == -1)
		return sandbox_fail(e, SANDBOX_RLIMITS, errno,
		    "setrlimit %s %llu", name, (unsigned long long)soft);
	return 0;
}

/*
 * nproc is the process count for RLIMIT_NPROC, 0 to leave it (a pids
 * cgroup does the job). The kernel does not enforce it for uid 0.
 */
int
sandbox_rlimit_apply(const struct sandbox_limits *l, int nproc, char *note,
    size_t notelen, struct sandbox_error *e)
{
	if (l->cpu_sec != 0 && sandbox_rlimit_set(RLIMIT_CPU, "CPU",
	    l->cpu_sec, l->cpu_sec + 2, e) == -1)
		return -1;
	if (l->as_bytes != 0) {
		if (SANDBOX_SANITIZER)
			sandbox_note(note, notelen, "RLIMIT_AS skipped: "
			    "sanitizer build reserves terabytes of address "
			    "space");
		else if (sandbox_rlimit_set(RLIMIT_AS, "AS", l->as_bytes,
		    l->as_bytes, e) == -1)
			return -1;
	}
	if (l->fsize_bytes != 0 && sandbox_rlimit_set(RLIMIT_FSIZE, "FSIZE",
	    l->fsize_bytes, l->fsize_bytes, e) == -1)
		return -1;
	if (l->nofile != 0 && sandbox_rlimit_set(RLIMIT_NOFILE, "NOFILE",
	    l->nofile, l->nofile, e) == -1)
		return -1;
	if (sandbox_rlimit_set(RLIMIT_CORE, "CORE", 0, 0, e) == -1)
		return -1;
	if (nproc > 0 && sandbox_rlimit_set(RLIMIT_NPROC, "NPROC",
	    (rlim_t)nproc, (rlim_t)nproc, e) == -1)
		return -1;
	return 0;
}

/*
 * The worker's seccomp filter, compiled once by the spawner and handed to
 * every worker as a sealed memfd, instead of being rebuilt by libseccomp
 * in each worker after its exec (seccomp_init, a rule per call, the
 * optimizer, the API-level probes: the largest single cost of a spawn
 * in bench_sandbox, +2 ms against +0.4 ms for loading a ready program).
 *
 * Why this is as strong as building it in the worker: the program is
 * built by the same function (sandbox_seccomp_export) from the same policy
 * fields the filter depends on (fs_write, exec; see sandbox_bpf_slot), in
 * the trusted spawner, and loaded by the worker before it reads any
 * untrusted input, exactly where it built it before. The memfd is sealed
 * (no write, grow or shrink) before any worker gets it, so no worker can
 * change the program its siblings will load; the worker closes its copy
 * before it returns from sandbox_enter. A header names the policy it was
 * built for, and a program for another policy, a bad size or missing
 * seals make the worker build its own filter instead (never no filter).
 */
#include <sys/types.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/filter.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "sandbox/sandbox_int.h"

#ifndef MFD_ALLOW_SEALING
#define MFD_ALLOW_SEALING	0x0002U
#endif
#ifndef F_ADD_SEALS
#define F_ADD_SEALS		1033
#define F_GET_SEALS		1034
#define F_SEAL_SEAL		0x0001
#define F_SEAL_SHRINK		0x0002
#define F_SEAL_GROW		0x0004
#define F_SEAL_WRITE		0x0008
#endif

#define SANDBOX_BPF_MAGIC	0x46504257u	/* "WBPF" */
#define SANDBOX_BPF_MAXLEN	4096		/* BPF_MAXINSNS */
#define SANDBOX_BPF_SEALS	(F_SEAL_SEAL | F_SEAL_SHRINK | F_SEAL_GROW | \
				 F_SEAL_WRITE)

struct sandbox_bpf_hdr {
	uint32_t	magic;
	uint8_t		fs_write, exec, sanitizer, pad;
	uint32_t	len;		/* instructions after the header */
};

/* One sealed memfd per (fs_write, exec) in the spawner, made on first use. */
static int	sandbox_bpf_fds[4] = { -1, -1, -1, -1 };

static int
sandbox_bpf_index(const struct sandbox_policy *p)
{
	return (p->fs_write ? 1 : 0) | (p->exec ? 2 : 0);
}

int
sandbox_bpf_fd(const struct sandbox_policy *p, struct sandbox_error *e)
{
	struct sandbox_bpf_hdr	 h;
	struct sock_fprog	 prog;
	struct sandbox_policy	 q;
	size_t			 sz;
	int			 i = sandbox_bpf_index(p), fd;

	if (sandbox_bpf_fds[i] != -1)
		return sandbox_bpf_fds[i];
	/* The worker's filter never has a notify target (program unset). */
	memcpy(&q, p, sizeof(q));
	q.program[0] = '\0';
	if (sandbox_seccomp_export(&q, SANDBOX_SECCOMP_SELF, &prog, e) == -1)
		return -1;
	if (prog.len == 0 || prog.len > SANDBOX_BPF_MAXLEN) {
		free(prog.filter);
		return sandbox_fail(e, SANDBOX_SECCOMP, EINVAL,
		    "exported filter of %u instructions", prog.len);
	}
	memset(&h, 0, sizeof(h));
	h.magic = SANDBOX_BPF_MAGIC;
	h.fs_write = p->fs_write ? 1 : 0;
	h.exec = p->exec ? 1 : 0;
	h.sanitizer = SANDBOX_SANITIZER ? 1 : 0;
	h.len = prog.len;
	sz = (size_t)prog.len * sizeof(struct sock_filter);
	fd = (int)syscall(SYS_memfd_create, "warren-seccomp",
	    MFD_CLOEXEC | MFD_ALLOW_SEALING);
	if (fd == -1) {
		free(prog.filter);
		return sandbox_fail(e, SANDBOX_SECCOMP, errno, "memfd_create");
	}
	if (write(fd, &h, sizeof(h)) != (ssize_t)sizeof(h) ||
	    write(fd, prog.filter, sz) != (ssize_t)sz ||
	    fcntl(fd, F_ADD_SEALS, SANDBOX_BPF_SEALS) == -1) {
		sandbox_fail(e, SANDBOX_SECCOMP, errno ? errno : EIO,
		    "seal the prebuilt filter");
		free(prog.filter);
		close(fd);
		return -1;
	}
	free(prog.filter);
	sandbox_bpf_fds[i] = fd;
	return fd;
}

/*
 * In the worker: the program from the fd named by SANDBOX_BPF_ENV, if it
 * is sealed and was built for p. 0 with prog->filter malloc'd, or -1 (the
 * caller builds the filter itself). The fd is closed and the variable
 * removed either way.
 */
int
sandbox_bpf_inherited(const struct sandbox_policy *p, struct sock_fprog *prog)
{
	struct sandbox_bpf_hdr	 h;
	const char		*env, *errstr = NULL;
	struct stat		 st;
	size_t			 sz;
	void			*buf = NULL;
	int			 fd, seals, rc = -1;

	memset(prog, 0, sizeof(*prog));
	if ((env = getenv(SANDBOX_BPF_ENV)) == NULL)
		return -1;
	fd = (int)strtonum(env, 3, 1023, &errstr);
	unsetenv(SANDBOX_BPF_ENV);
	if (errstr != NULL)
		return -1;
	if ((seals = fcntl(fd, F_GET_SEALS)) == -1 ||
	    (seals & SANDBOX_BPF_SEALS) != SANDBOX_BPF_SEALS ||
	    fstat(fd, &st) == -1 || st.st_size < (off_t)sizeof(h) ||
	    pread(fd, &h, sizeof(h), 0) != (ssize_t)sizeof(h))
		goto out;
	sz = (size_t)h.len * sizeof(struct sock_filter);
	if (h.magic != SANDBOX_BPF_MAGIC || h.len == 0 ||
	    h.len > SANDBOX_BPF_MAXLEN ||
	    h.fs_write != (p->fs_write ? 1 : 0) ||
	    h.exec != (p->exec ? 1 : 0) ||
	    h.sanitizer != (SANDBOX_SANITIZER ? 1 : 0) ||
	    (off_t)(sizeof(h) + sz) != st.st_size)
		goto out;
	if ((buf = malloc(sz)) == NULL ||
	    pread(fd, buf, sz, sizeof(h)) != (ssize_t)sz)
		goto out;
	prog->filter = buf;
	prog->len = (unsigned short)h.len;
	buf = NULL;
	rc = 0;
out:
	free(buf);
	close(fd);
	return rc;
}

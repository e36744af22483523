/*
 * seccomp-bpf, loaded last ("it cuts off all the other privilege-dropping
 * syscalls", minijail). The programs are compiled at build time from the
 * rules in sandbox_seccomp_rules.c (see there for what they deny) into
 * sandbox_bpf_table.c, one per (fs_write, exec, mode): loading one is a
 * single seccomp(2) call, with no libseccomp in the process and nothing a
 * sandboxed process could have changed (the table is read-only data of
 * the binary that loads it).
 */
#include <sys/types.h>
#include <sys/prctl.h>
#include <sys/syscall.h>

#include <errno.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <stdint.h>
#include <string.h>
#include <unistd.h>

#include "sandbox/sandbox_int.h"
#include "sandbox/sandbox_testapi.h"

int
sandbox_seccomp_available(void)
{
	return prctl(PR_GET_SECCOMP, 0, 0, 0, 0) != -1 || errno != EINVAL;
}

void
sandbox_seccomp_program(const struct sandbox_policy *p, int flags,
    struct sock_fprog *prog)
{
	const struct sandbox_bpf_prog	*b;

	b = &sandbox_bpf_table[sandbox_bpf_index(p->fs_write, p->exec,
	    sandbox_bpf_mode(p, flags), p->inet || p->hostnet)];
	/* The kernel only reads the program; sock_fprog has no const. */
	prog->filter = (struct sock_filter *)(uintptr_t)b->insns;
	prog->len = b->len;
}

/* Load p's program (no_new_privs already set); with
 * SANDBOX_SECCOMP_NOTIFY, the listener fd goes to *notify_fd. */
int
sandbox_seccomp_apply(const struct sandbox_policy *p, int flags,
    int *notify_fd, struct sandbox_error *e)
{
	struct sock_fprog	 prog;
	unsigned int		 f;
	long			 rc;

	*notify_fd = -1;
	sandbox_seccomp_program(p, flags, &prog);
	f = (flags & SANDBOX_SECCOMP_NOTIFY) ? SECCOMP_FILTER_FLAG_NEW_LISTENER :
	    SECCOMP_FILTER_FLAG_TSYNC;
	rc = syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, f, &prog);
	if (rc < 0)
		return sandbox_fail(e, SANDBOX_SECCOMP, errno,
		    "seccomp(SET_MODE_FILTER)");
	if (flags & SANDBOX_SECCOMP_NOTIFY)
		*notify_fd = (int)rc;
	return 0;
}

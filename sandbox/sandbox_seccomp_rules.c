/*
 * The seccomp rules, compiled with libseccomp. This file runs at build
 * time only: sandbox_bpfgen compiles every variant into
 * sandbox_bpf_table.c, and warren and warren-worker load those programs
 * (sandbox_seccomp.c) without linking libseccomp. Compiling at run time
 * cost 1-2 ms of CPU per sandboxed process (seccomp_init, a rule per call,
 * the optimizer, the API-level probes), the largest single layer in
 * bench_sandbox.
 *
 * Native architecture only: libseccomp adds no other arch, so an int 0x80
 * (i386) or x32 syscall hits the bad-arch action, which kills the process.
 * The default is to allow: the filter is a deny list of what no profile
 * needs (sockets, ptrace, bpf, io_uring, keyrings, mount and namespace
 * calls, TIOCSTI), plus, per profile, every way to write (read-only
 * profiles) and to exec, use SysV IPC or make memfds (no-exec profiles).
 * Denied calls fail with EPERM, so programs see an ordinary error;
 * fallocate in read-write profiles fails with EOPNOTSUPP; clone3
 * fails with ENOSYS so libc falls back to clone, whose flags the filter
 * can inspect.
 *
 * With SANDBOX_SECCOMP_NOTIFY (`warren sandbox exec`), execve and socket
 * go to a user-notification listener in the parent instead: it lets the
 * first execve of a no-exec profile through (our own, of the command) and
 * denies and names every later one, and names every socket() it denies.
 */
#include <sys/types.h>
#include <sys/ioctl.h>
#include <sys/prctl.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>

#include <errno.h>
#include <fcntl.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <sched.h>
#include <seccomp.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "sandbox/sandbox_int.h"
#include "sandbox/sandbox_testapi.h"

#ifndef CLONE_NEWTIME
#define CLONE_NEWTIME	0x00000080
#endif
#ifndef __O_TMPFILE
#define __O_TMPFILE	020000000
#endif

/* Denied in every profile. */
const struct sandbox_sc sandbox_seccomp_deny[] = {
	{ "ptrace", -1 }, { "process_vm_readv", -1 },
	{ "process_vm_writev", -1 }, { "kcmp", -1 }, { "pidfd_getfd", 438 },
	{ "process_madvise", 440 },
	{ "bpf", -1 }, { "perf_event_open", -1 }, { "userfaultfd", -1 },
	{ "io_uring_setup", 425 }, { "io_uring_enter", 426 },
	{ "io_uring_register", 427 },
	{ "keyctl", -1 }, { "add_key", -1 }, { "request_key", -1 },
	{ "mount", -1 }, { "umount2", -1 }, { "open_tree", 428 },
	{ "move_mount", 429 }, { "fsopen", 430 }, { "fsconfig", 431 },
	{ "fsmount", 432 }, { "fspick", 433 }, { "mount_setattr", 442 },
	{ "pivot_root", -1 }, { "chroot", -1 },
	{ "unshare", -1 }, { "setns", -1 },
	{ "init_module", -1 }, { "finit_module", -1 },
	{ "delete_module", -1 }, { "kexec_load", -1 },
	{ "kexec_file_load", -1 }, { "reboot", -1 }, { "swapon", -1 },
	{ "swapoff", -1 }, { "acct", -1 }, { "quotactl", -1 },
	{ "quotactl_fd", 443 }, { "syslog", -1 }, { "vhangup", -1 },
	{ "open_by_handle_at", -1 }, { "name_to_handle_at", -1 },
	{ "lookup_dcookie", -1 }, { "iopl", -1 }, { "ioperm", -1 },
	{ "uselib", -1 }, { "fanotify_init", -1 }, { "modify_ldt", -1 },
	{ "move_pages", -1 }, { "migrate_pages", -1 },
};

/* Denied in read-only profiles: every call that changes the filesystem. */
const struct sandbox_sc sandbox_seccomp_deny_ro[] = {
	{ "creat", -1 }, { "openat2", -1 }, { "truncate", -1 },
	{ "ftruncate", -1 }, { "fallocate", -1 },
	{ "chmod", -1 }, { "fchmod", -1 }, { "fchmodat", -1 },
	{ "fchmodat2", 452 }, { "chown", -1 }, { "fchown", -1 },
	{ "lchown", -1 }, { "fchownat", -1 },
	{ "utime", -1 }, { "utimes", -1 }, { "utimensat", -1 },
	{ "futimesat", -1 }, { "setxattr", -1 }, { "lsetxattr", -1 },
	{ "fsetxattr", -1 }, { "removexattr", -1 }, { "lremovexattr", -1 },
	{ "fremovexattr", -1 }, { "setxattrat", 463 },
	{ "removexattrat", 466 },
	{ "rename", -1 }, { "renameat", -1 }, { "renameat2", -1 },
	{ "unlink", -1 }, { "unlinkat", -1 }, { "mkdir", -1 },
	{ "mkdirat", -1 }, { "rmdir", -1 }, { "link", -1 }, { "linkat", -1 },
	{ "symlink", -1 }, { "symlinkat", -1 }, { "mknod", -1 },
	{ "mknodat", -1 },
};

/*
 * Denied in no-exec profiles, which have no IPC namespace (sandbox_policy.c):
 * SysV IPC, POSIX message queues, and the hostname that CLONE_NEWUTS
 * would have made their own (a capless process cannot set it anyway);
 * and memfds.
 */
const struct sandbox_sc sandbox_seccomp_deny_ipc[] = {
	{ "shmget", -1 }, { "shmat", -1 }, { "shmdt", -1 },
	{ "shmctl", -1 }, { "semget", -1 }, { "semop", -1 },
	{ "semtimedop", -1 }, { "semctl", -1 }, { "msgget", -1 },
	{ "msgsnd", -1 }, { "msgrcv", -1 }, { "msgctl", -1 },
	{ "mq_open", -1 }, { "mq_unlink", -1 }, { "mq_timedsend", -1 },
	{ "mq_timedreceive", -1 }, { "mq_notify", -1 },
	{ "mq_getsetattr", -1 }, { "sethostname", -1 },
	{ "setdomainname", -1 },
	/*
	 * Not IPC, but memory out of RLIMIT_AS's reach: a memfd's pages
	 * count only while mapped, so with no memory cgroup one process
	 * could hold RLIMIT_NOFILE memfds of RLIMIT_FSIZE each. warren's
	 * own code uses none (docs/sandbox.md, "Memory").
	 */
	{ "memfd_create", -1 },
};

/* Open flags that write or create, each tested on its own. */
const unsigned long sandbox_seccomp_wflags[] = {
	O_WRONLY, O_RDWR, O_CREAT, O_TRUNC, O_APPEND, __O_TMPFILE,
};

const unsigned long sandbox_seccomp_nsflags[] = {
	CLONE_NEWNS, CLONE_NEWUTS, CLONE_NEWIPC, CLONE_NEWUSER, CLONE_NEWPID,
	CLONE_NEWNET, CLONE_NEWCGROUP, CLONE_NEWTIME,
};

#define SANDBOX_NELEM(a)	(sizeof(a) / sizeof((a)[0]))
const size_t sandbox_seccomp_ndeny = SANDBOX_NELEM(sandbox_seccomp_deny);
const size_t sandbox_seccomp_ndeny_ro = SANDBOX_NELEM(sandbox_seccomp_deny_ro);
const size_t sandbox_seccomp_ndeny_ipc =
    SANDBOX_NELEM(sandbox_seccomp_deny_ipc);
const size_t sandbox_seccomp_nwflags = SANDBOX_NELEM(sandbox_seccomp_wflags);
const size_t sandbox_seccomp_nnsflags =
    SANDBOX_NELEM(sandbox_seccomp_nsflags);

/* One argument comparison, every field set (clang's
 * -Wmissing-field-initializers rejects libseccomp's short macros). */
static struct scmp_arg_cmp
sandbox_seccomp_cmp(unsigned int arg, enum scmp_compare op, uint64_t a,
    uint64_t b)
{
	struct scmp_arg_cmp	 c;

	memset(&c, 0, sizeof(c));
	c.arg = arg;
	c.op = op;
	c.datum_a = a;
	c.datum_b = b;
	return c;
}

int
sandbox_seccomp_nr(const struct sandbox_sc *sc)
{
	int	 nr;

	nr = seccomp_syscall_resolve_name(sc->name);
	if (nr == __NR_SCMP_ERROR || nr < 0)
		nr = sc->nr;
	return nr;
}

static int
sandbox_seccomp_list(scmp_filter_ctx ctx, const struct sandbox_sc *list,
    size_t n, uint32_t act, struct sandbox_error *e)
{
	size_t	 i;
	int	 nr, rc;

	for (i = 0; i < n; i++) {
		if ((nr = sandbox_seccomp_nr(&list[i])) < 0)
			continue;
		if ((rc = seccomp_rule_add(ctx, act, nr, 0)) < 0)
			return sandbox_fail(e, SANDBOX_SECCOMP, -rc,
			    "seccomp rule for %s", list[i].name);
	}
	return 0;
}

/* A rule on one syscall by name; a name libseccomp lacks is skipped. */
static int
sandbox_seccomp_rule(scmp_filter_ctx ctx, uint32_t act, const char *name,
    unsigned int argc, const struct scmp_arg_cmp *cmp,
    struct sandbox_error *e)
{
	int	 nr, rc;

	nr = seccomp_syscall_resolve_name(name);
	if (nr == __NR_SCMP_ERROR || nr < 0)
		return 0;
	if ((rc = seccomp_rule_add_array(ctx, act, nr, argc, cmp)) < 0)
		return sandbox_fail(e, SANDBOX_SECCOMP, -rc,
		    "seccomp rule for %s", name);
	return 0;
}

/*
 * A backend's worker (p->inet): socket() for AF_UNIX, AF_INET and AF_INET6
 * only; every other family (netlink, packet, ...) fails with EPERM. Its
 * network namespace has nothing but loopback. The family is an int: the
 * low 32 bits of a value are what the kernel reads, so the named families
 * are matched on them, and anything above AF_INET6 in all 64 bits is
 * refused (a value with high bits set is never let through that way).
 */
static int
sandbox_seccomp_inet(scmp_filter_ctx ctx, struct sandbox_error *e)
{
	struct scmp_arg_cmp	 c;
	uint32_t		 eperm = SCMP_ACT_ERRNO(EPERM);
	int			 fam;

	for (fam = 0; fam < AF_INET6; fam++) {
		if (fam == AF_UNIX || fam == AF_INET)
			continue;
		c = sandbox_seccomp_cmp(0, SCMP_CMP_MASKED_EQ, 0xffffffffUL,
		    (uint64_t)fam);
		if (sandbox_seccomp_rule(ctx, eperm, "socket", 1, &c, e) == -1)
			return -1;
	}
	c = sandbox_seccomp_cmp(0, SCMP_CMP_GT, AF_INET6, 0);
	return sandbox_seccomp_rule(ctx, eperm, "socket", 1, &c, e);
}

static int
sandbox_seccomp_common(scmp_filter_ctx ctx, const struct sandbox_policy *p,
    int flags, struct sandbox_error *e)
{
	struct scmp_arg_cmp	 c[2];
	uint32_t		 eperm = SCMP_ACT_ERRNO(EPERM);
	size_t			 i;
	int			 lsan;

	/* LeakSanitizer's exit-time check ptraces its own threads after
	 * setting itself dumpable: a sanitizer build that keeps running
	 * under the filter (the worker) must let it. Logged by the caller. */
	lsan = SANDBOX_SANITIZER && (flags & SANDBOX_SECCOMP_SELF);
	for (i = 0; i < sizeof(sandbox_seccomp_deny) /
	    sizeof(sandbox_seccomp_deny[0]); i++) {
		if (lsan && strcmp(sandbox_seccomp_deny[i].name, "ptrace") == 0)
			continue;
		if (sandbox_seccomp_list(ctx, &sandbox_seccomp_deny[i], 1,
		    eperm, e) == -1)
			return -1;
	}
	/* No network: socket() for any family; socketpair only AF_UNIX. A
	 * hostnet policy loads the inet program (sandbox_seccomp_program). */
	if (p->inet || p->hostnet) {
		if (sandbox_seccomp_inet(ctx, e) == -1)
			return -1;
	} else if (sandbox_seccomp_rule(ctx, (flags & SANDBOX_SECCOMP_NOTIFY) ?
	    SCMP_ACT_NOTIFY : eperm, "socket", 0, NULL, e) == -1)
		return -1;
	c[0] = sandbox_seccomp_cmp(0, SCMP_CMP_NE, AF_UNIX, 0);
	if (sandbox_seccomp_rule(ctx, eperm, "socketpair", 1, c, e) == -1)
		return -1;
	/* No new namespaces through clone's flags; clone3 hides them. */
	for (i = 0; i < sizeof(sandbox_seccomp_nsflags) /
	    sizeof(sandbox_seccomp_nsflags[0]); i++) {
		c[0] = sandbox_seccomp_cmp(0, SCMP_CMP_MASKED_EQ,
		    sandbox_seccomp_nsflags[i], sandbox_seccomp_nsflags[i]);
		if (sandbox_seccomp_rule(ctx, eperm, "clone", 1, c, e) == -1)
			return -1;
	}
	if (sandbox_seccomp_rule(ctx, SCMP_ACT_ERRNO(ENOSYS), "clone3", 0,
	    NULL, e) == -1)
		return -1;
	/*
	 * int arguments are compared on their low 32 bits only (MASKED_EQ
	 * with 0xffffffff): the kernel truncates them, so high bits set by
	 * the caller must not make a denied value look different.
	 */
	c[0] = sandbox_seccomp_cmp(1, SCMP_CMP_MASKED_EQ, 0xffffffffUL,
	    TIOCSTI);
	if (sandbox_seccomp_rule(ctx, eperm, "ioctl", 1, c, e) == -1)
		return -1;
	c[0] = sandbox_seccomp_cmp(1, SCMP_CMP_MASKED_EQ, 0xffffffffUL,
	    TIOCLINUX);
	if (sandbox_seccomp_rule(ctx, eperm, "ioctl", 1, c, e) == -1)
		return -1;
	/* prctl: no way back to dumpable, no rewriting of mm fields. */
	if (!lsan) {
		c[0] = sandbox_seccomp_cmp(0, SCMP_CMP_MASKED_EQ, 0xffffffffUL,
		    PR_SET_DUMPABLE);
		if (sandbox_seccomp_rule(ctx, eperm, "prctl", 1, c, e) == -1)
			return -1;
	}
	c[0] = sandbox_seccomp_cmp(0, SCMP_CMP_MASKED_EQ, 0xffffffffUL,
	    PR_SET_MM);
	if (sandbox_seccomp_rule(ctx, eperm, "prctl", 1, c, e) == -1)
		return -1;
	/*
	 * personality: only the 0xffffffff query. Any other value sets a
	 * persona (the kernel keeps unknown bits), so flag masks could be
	 * dodged; two rules, below and above the query, deny the rest.
	 */
	c[0] = sandbox_seccomp_cmp(0, SCMP_CMP_LT, 0xffffffffUL, 0);
	if (sandbox_seccomp_rule(ctx, eperm, "personality", 1, c, e) == -1)
		return -1;
	c[0] = sandbox_seccomp_cmp(0, SCMP_CMP_GT, 0xffffffffUL, 0);
	if (sandbox_seccomp_rule(ctx, eperm, "personality", 1, c, e) == -1)
		return -1;
	return 0;
}

/*
 * Read-write profiles: fallocate fails with EOPNOTSUPP, as on a
 * filesystem without it. It takes blocks in one call, faster than any
 * watch of the disk: 4 GiB in under 3 ms, and with FALLOC_FL_KEEP_SIZE
 * past RLIMIT_FSIZE, which bounds only a file's size. Programs fall back
 * to writing (glibc's posix_fallocate does), which RLIMIT_FSIZE bounds.
 */
static int
sandbox_seccomp_write(scmp_filter_ctx ctx, struct sandbox_error *e)
{
	return sandbox_seccomp_rule(ctx, SCMP_ACT_ERRNO(EOPNOTSUPP),
	    "fallocate", 0, NULL, e);
}

static int
sandbox_seccomp_readonly(scmp_filter_ctx ctx, struct sandbox_error *e)
{
	struct scmp_arg_cmp	 c;
	uint32_t		 eperm = SCMP_ACT_ERRNO(EPERM);
	size_t			 i;

	if (sandbox_seccomp_list(ctx, sandbox_seccomp_deny_ro,
	    sizeof(sandbox_seccomp_deny_ro) / sizeof(sandbox_seccomp_deny_ro[0]),
	    eperm, e) == -1)
		return -1;
	for (i = 0; i < sizeof(sandbox_seccomp_wflags) /
	    sizeof(sandbox_seccomp_wflags[0]); i++) {
		c = sandbox_seccomp_cmp(1, SCMP_CMP_MASKED_EQ,
		    sandbox_seccomp_wflags[i], sandbox_seccomp_wflags[i]);
		if (sandbox_seccomp_rule(ctx, eperm, "open", 1, &c, e) == -1)
			return -1;
		c = sandbox_seccomp_cmp(2, SCMP_CMP_MASKED_EQ,
		    sandbox_seccomp_wflags[i], sandbox_seccomp_wflags[i]);
		if (sandbox_seccomp_rule(ctx, eperm, "openat", 1, &c, e) == -1)
			return -1;
	}
	return 0;
}

/* Build the filter for p into a libseccomp context. */
static scmp_filter_ctx
sandbox_seccomp_build(const struct sandbox_policy *p, int flags,
    struct sandbox_error *e)
{
	scmp_filter_ctx	 ctx;
	uint32_t	 xact;
	int		 rc;

	if ((ctx = seccomp_init(SCMP_ACT_ALLOW)) == NULL) {
		sandbox_fail(e, SANDBOX_SECCOMP, ENOMEM, "seccomp_init");
		return NULL;
	}
	if ((rc = seccomp_attr_set(ctx, SCMP_FLTATR_ACT_BADARCH,
	    SCMP_ACT_KILL_PROCESS)) < 0) {
		sandbox_fail(e, SANDBOX_SECCOMP, -rc, "bad-arch action");
		goto fail;
	}
	/* A binary tree of syscall numbers, not a list: fewer instructions
	 * on the path of every allowed syscall. */
	if ((rc = seccomp_attr_set(ctx, SCMP_FLTATR_CTL_OPTIMIZE, 2)) < 0) {
		sandbox_fail(e, SANDBOX_SECCOMP, -rc, "filter optimization");
		goto fail;
	}
	if (sandbox_seccomp_common(ctx, p, flags, e) == -1)
		goto fail;
	if (!p->fs_write && sandbox_seccomp_readonly(ctx, e) == -1)
		goto fail;
	if (p->fs_write && sandbox_seccomp_write(ctx, e) == -1)
		goto fail;
	if (!p->exec) {
		xact = (flags & SANDBOX_SECCOMP_NOTIFY) &&
		    p->program[0] != '\0' ? SCMP_ACT_NOTIFY :
		    SCMP_ACT_ERRNO(EPERM);
		if (sandbox_seccomp_rule(ctx, xact, "execve", 0, NULL,
		    e) == -1 || sandbox_seccomp_rule(ctx, xact, "execveat", 0,
		    NULL, e) == -1)
			goto fail;
		if (sandbox_seccomp_list(ctx, sandbox_seccomp_deny_ipc,
		    sizeof(sandbox_seccomp_deny_ipc) /
		    sizeof(sandbox_seccomp_deny_ipc[0]), SCMP_ACT_ERRNO(EPERM),
		    e) == -1)
			goto fail;
	}
	return ctx;
fail:
	seccomp_release(ctx);
	return NULL;
}

/* The filter as a BPF program (malloc'd instructions in prog->filter). */
int
sandbox_seccomp_compile(const struct sandbox_policy *p, int flags,
    struct sock_fprog *prog, struct sandbox_error *e)
{
	scmp_filter_ctx	 ctx;
	struct stat	 st;
	void		*buf = NULL;
	int		 fd = -1, rc, ret = -1;

	memset(prog, 0, sizeof(*prog));
	if ((ctx = sandbox_seccomp_build(p, flags, e)) == NULL)
		return -1;
	if ((fd = (int)syscall(SYS_memfd_create, "warren-bpf",
	    MFD_CLOEXEC)) == -1) {
		sandbox_fail(e, SANDBOX_SECCOMP, errno, "memfd_create");
		goto out;
	}
	if ((rc = seccomp_export_bpf(ctx, fd)) < 0) {
		sandbox_fail(e, SANDBOX_SECCOMP, -rc, "seccomp_export_bpf");
		goto out;
	}
	if (fstat(fd, &st) == -1 || st.st_size <= 0 || st.st_size > 65536 ||
	    st.st_size % sizeof(struct sock_filter) != 0) {
		sandbox_fail(e, SANDBOX_SECCOMP, EINVAL, "exported BPF size");
		goto out;
	}
	if ((buf = malloc((size_t)st.st_size)) == NULL ||
	    pread(fd, buf, (size_t)st.st_size, 0) != st.st_size) {
		sandbox_fail(e, SANDBOX_SECCOMP, errno, "read exported BPF");
		free(buf);
		goto out;
	}
	prog->filter = buf;
	prog->len = (unsigned short)(st.st_size / sizeof(struct sock_filter));
	ret = 0;
out:
	if (fd != -1)
		close(fd);
	seccomp_release(ctx);
	return ret;
}


/*
 * The seccomp layer on its own: every program the sandbox can load
 * (sandbox_bpf_table, looked up as sandbox_seccomp_apply looks it up)
 * against the tables it is made from (sandbox_seccomp_rules.c).
 *
 * The programs are run here, in a small classic-BPF interpreter, on a
 * struct seccomp_data built for each row, not loaded in a child that
 * then makes each call: that way every row is checked (reboot, kexec,
 * swapoff, iopl included, which a child could not safely try if the
 * filter let them through, as root above all), with every argument the
 * rules look at (clone's flags, ioctl's request with high bits set, open's
 * flags), for every architecture value the kernel may pass (only the
 * native one is handled: the others, and x32 numbers, must kill), and in
 * every mode (worker, `sandbox exec`, its notifying variants). Two things
 * keep the interpreter honest: a child that loads only the filter makes a
 * sample of calls whose kernel answer must be what the interpreter said
 * (test_kernel_agrees), and an unknown instruction fails the test.
 *
 * The check runs both ways: each row of a table gets its action, and
 * every other syscall number up to SC_SWEEP is allowed, so a program that
 * lost a row or gained one fails. A floor (the calls SANDBOX-TESTS.md
 * assigns to seccomp alone) must be in the tables: a row dropped from a
 * table fails there, since no other layer test sees it.
 */
#include <sys/types.h>
#include <sys/ioctl.h>
#include <sys/personality.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>

#include <errno.h>
#include <fcntl.h>
#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <sched.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "agent/profile.h"
#include "sandbox/sandbox_int.h"
#include "sandbox/sandbox_testapi.h"
#include "tests/test_wait.h"

#if defined(__x86_64__)
#define SC_ARCH		AUDIT_ARCH_X86_64
#define SC_X32_BIT	0x40000000U
#elif defined(__aarch64__)
#define SC_ARCH		AUDIT_ARCH_AARCH64
#else
#error "test_layer_seccomp: add this architecture's AUDIT_ARCH"
#endif
#define SC_SWEEP	512	/* syscall numbers swept for "allowed" */
#define ACT_ALLOW	SECCOMP_RET_ALLOW
#define ACT_KILL	SECCOMP_RET_KILL_PROCESS
#define ACT_NOTIFY	SECCOMP_RET_USER_NOTIF
#define ACT_ERRNO(n)	(SECCOMP_RET_ERRNO | ((uint32_t)(n) & 0xffff))

/* One program under test, and what it was made for. */
struct prog {
	struct sock_fprog	 fp;
	int			 fs_write, exec;
	int			 notify;	/* socket() notifies */
	int			 notify_exec;	/* execve notifies */
	int			 self;		/* the worker's mode */
	char			 what[96];
	int			 nfail;
};

/* ---- the interpreter ---- */

static uint32_t
bpf_load(const struct seccomp_data *d, uint32_t off, const char *what)
{
	uint32_t	 v;

	if (off % 4 != 0 || off + 4 > sizeof(*d))
		fail_msg("%s: load at offset %u outside seccomp_data", what,
		    off);
	memcpy(&v, (const char *)d + off, 4);
	return v;
}

static uint32_t
bpf_alu(uint16_t op, uint32_t a, uint32_t x, const char *what)
{
	switch (op) {
	case BPF_ADD:	return a + x;
	case BPF_SUB:	return a - x;
	case BPF_MUL:	return a * x;
	case BPF_AND:	return a & x;
	case BPF_OR:	return a | x;
	case BPF_XOR:	return a ^ x;
	case BPF_LSH:	return x < 32 ? a << x : 0;
	case BPF_RSH:	return x < 32 ? a >> x : 0;
	case BPF_NEG:	return -a;
	default:
		fail_msg("%s: ALU op 0x%x not known to this test", what, op);
	}
	return 0;
}

static int
bpf_jump(uint16_t op, uint32_t a, uint32_t v, const char *what)
{
	switch (op) {
	case BPF_JEQ:	return a == v;
	case BPF_JGT:	return a > v;
	case BPF_JGE:	return a >= v;
	case BPF_JSET:	return (a & v) != 0;
	default:
		fail_msg("%s: jump op 0x%x not known to this test", what, op);
	}
	return 0;
}

/* The action the program returns for d, as the kernel computes it. */
static uint32_t
bpf_run(const struct prog *p, const struct seccomp_data *d)
{
	const struct sock_filter	*f;
	uint32_t			 a = 0, x = 0, mem[BPF_MEMWORDS], v;
	unsigned			 pc = 0, steps = 0;

	memset(mem, 0, sizeof(mem));
	while (pc < p->fp.len && steps++ < 65536) {
		f = &p->fp.filter[pc++];
		v = BPF_SRC(f->code) == BPF_X ? x : f->k;
		switch (BPF_CLASS(f->code)) {
		case BPF_LD:
			if (f->code == (BPF_LD | BPF_W | BPF_ABS))
				a = bpf_load(d, f->k, p->what);
			else if (f->code == (BPF_LD | BPF_IMM))
				a = f->k;
			else if (f->code == (BPF_LD | BPF_MEM) &&
			    f->k < BPF_MEMWORDS)
				a = mem[f->k];
			else
				fail_msg("%s: load 0x%x", p->what, f->code);
			break;
		case BPF_LDX:
			if (f->code == (BPF_LDX | BPF_IMM))
				x = f->k;
			else if (f->code == (BPF_LDX | BPF_MEM) &&
			    f->k < BPF_MEMWORDS)
				x = mem[f->k];
			else
				fail_msg("%s: loadx 0x%x", p->what, f->code);
			break;
		case BPF_ST:
		case BPF_STX:
			if (f->k >= BPF_MEMWORDS)
				fail_msg("%s: store to M[%u]", p->what, f->k);
			mem[f->k] = BPF_CLASS(f->code) == BPF_ST ? a : x;
			break;
		case BPF_ALU:
			a = bpf_alu(BPF_OP(f->code), a, v, p->what);
			break;
		case BPF_JMP:
			if (BPF_OP(f->code) == BPF_JA)
				pc += f->k;
			else
				pc += bpf_jump(BPF_OP(f->code), a, v,
				    p->what) ? f->jt : f->jf;
			break;
		case BPF_RET:
			return BPF_RVAL(f->code) == BPF_A ? a : f->k;
		case BPF_MISC:
			if (BPF_MISCOP(f->code) == BPF_TAX)
				x = a;
			else
				a = x;
			break;
		default:
			fail_msg("%s: instruction 0x%x", p->what, f->code);
		}
	}
	fail_msg("%s: ran off the end or looped (pc %u)", p->what, pc);
	return 0;
}

/* ---- checking ---- */

static const char *
act_name(uint32_t act, char *buf, size_t len)
{
	switch (act & SECCOMP_RET_ACTION_FULL) {
	case ACT_ALLOW:
		return "allow";
	case ACT_KILL:
		return "kill-process";
	case SECCOMP_RET_KILL_THREAD:
		return "kill-thread";
	case ACT_NOTIFY:
		return "notify";
	case SECCOMP_RET_ERRNO:
		snprintf(buf, len, "errno %s", strerror((int)(act & 0xffff)));
		return buf;
	default:
		snprintf(buf, len, "action 0x%08x", act);
		return buf;
	}
}

static uint32_t
eval(const struct prog *p, uint32_t arch, int nr, const uint64_t *args)
{
	struct seccomp_data	 d;

	memset(&d, 0, sizeof(d));
	d.nr = nr;
	d.arch = arch;
	if (args != NULL)
		memcpy(d.args, args, sizeof(d.args));
	return bpf_run(p, &d);
}

/* One row: nr with args (NULL: all 0) must get want. */
static void
check(struct prog *p, const char *what, int nr, const uint64_t *args,
    uint32_t want)
{
	char		 b1[64], b2[64];
	uint32_t	 got;

	got = eval(p, SC_ARCH, nr, args);
	if (got == want)
		return;
	p->nfail++;
	fprintf(stderr, "  %s: %s (nr %d): got %s, want %s\n", p->what, what,
	    nr, act_name(got, b1, sizeof(b1)), act_name(want, b2, sizeof(b2)));
}

static void
check1(struct prog *p, const char *what, const char *name, int argn,
    uint64_t arg, uint32_t want)
{
	struct sandbox_sc	 sc = { name, -1 };
	uint64_t		 args[6] = { 0 };
	char			 buf[96];
	int			 nr;

	if ((nr = sandbox_seccomp_nr(&sc)) < 0)
		fail_msg("%s: no syscall number for %s", p->what, name);
	args[argn] = arg;
	snprintf(buf, sizeof(buf), "%s(%s)", name, what);
	check(p, buf, nr, args, want);
}

/* Whether nr is a row of list (so the sweep leaves it to the rows). */
static int
in_list(const struct sandbox_sc *list, size_t n, int nr)
{
	size_t	 i;

	for (i = 0; i < n; i++)
		if (sandbox_seccomp_nr(&list[i]) == nr)
			return 1;
	return 0;
}

/* The calls with argument rules, checked one by one below. */
static const char *const argrules[] = {
	"socket", "socketpair", "clone", "clone3", "ioctl", "prctl",
	"personality", "open", "openat", "execve", "execveat", "fallocate",
};

static int
has_argrule(int nr)
{
	struct sandbox_sc	 sc;
	size_t			 i;

	for (i = 0; i < sizeof(argrules) / sizeof(argrules[0]); i++) {
		sc.name = argrules[i];
		sc.nr = -1;
		if (sandbox_seccomp_nr(&sc) == nr)
			return 1;
	}
	return 0;
}

static void
check_list(struct prog *p, const struct sandbox_sc *list, size_t n,
    uint32_t want)
{
	size_t	 i;
	int	 nr;

	for (i = 0; i < n; i++) {
		if ((nr = sandbox_seccomp_nr(&list[i])) < 0)
			continue;
		/* A sanitizer build's worker lets LeakSanitizer ptrace. */
		if (SANDBOX_SANITIZER && p->self &&
		    strcmp(list[i].name, "ptrace") == 0)
			check(p, list[i].name, nr, NULL, ACT_ALLOW);
		/* Read-write profiles: as on a filesystem without it. */
		else if (p->fs_write && strcmp(list[i].name, "fallocate") == 0)
			check(p, list[i].name, nr, NULL, ACT_ERRNO(EOPNOTSUPP));
		else
			check(p, list[i].name, nr, NULL, want);
	}
}

/* Every row of every table, with the action this program must give. */
static void
check_tables(struct prog *p)
{
	uint32_t	 eperm = ACT_ERRNO(EPERM);

	check_list(p, sandbox_seccomp_deny, sandbox_seccomp_ndeny, eperm);
	check_list(p, sandbox_seccomp_deny_ro, sandbox_seccomp_ndeny_ro,
	    p->fs_write ? ACT_ALLOW : eperm);
	check_list(p, sandbox_seccomp_deny_ipc, sandbox_seccomp_ndeny_ipc,
	    p->exec ? ACT_ALLOW : eperm);
}

/*
 * What docs/sandbox.md ("The seccomp filter") says the argument rules
 * refuse, spelled here rather than read from the tables: a flag dropped
 * from sandbox_seccomp_wflags or sandbox_seccomp_nsflags fails below,
 * which the loops over those tables cannot see.
 */
#ifndef CLONE_NEWTIME
#define CLONE_NEWTIME	0x00000080
#endif
#ifndef __O_TMPFILE
#define __O_TMPFILE	020000000
#endif
static const unsigned long doc_wflags[] = {
	O_WRONLY, O_RDWR, O_CREAT, O_TRUNC, O_APPEND, __O_TMPFILE,
};
static const unsigned long doc_nsflags[] = {
	CLONE_NEWNS, CLONE_NEWUTS, CLONE_NEWIPC, CLONE_NEWUSER, CLONE_NEWPID,
	CLONE_NEWNET, CLONE_NEWCGROUP, CLONE_NEWTIME,
};

/* The calls whose rules look at an argument. */
static void
check_args(struct prog *p)
{
	uint32_t	 eperm = ACT_ERRNO(EPERM), w;
	size_t		 i;
	char		 what[32];

	check1(p, "AF_INET", "socket", 0, AF_INET, p->notify ? ACT_NOTIFY :
	    eperm);
	check1(p, "AF_UNIX", "socket", 0, AF_UNIX, p->notify ? ACT_NOTIFY :
	    eperm);
	check1(p, "AF_UNIX", "socketpair", 0, AF_UNIX, ACT_ALLOW);
	check1(p, "AF_INET", "socketpair", 0, AF_INET, eperm);
	for (i = 0; i < sandbox_seccomp_nnsflags; i++) {
		snprintf(what, sizeof(what), "0x%lx", sandbox_seccomp_nsflags[i]);
		check1(p, what, "clone", 0, sandbox_seccomp_nsflags[i] |
		    SIGCHLD, eperm);
	}
	for (i = 0; i < sizeof(doc_nsflags) / sizeof(doc_nsflags[0]); i++) {
		snprintf(what, sizeof(what), "docs' 0x%lx", doc_nsflags[i]);
		check1(p, what, "clone", 0, doc_nsflags[i] | SIGCHLD, eperm);
	}
	check1(p, "a thread", "clone", 0, CLONE_VM | CLONE_FS | CLONE_FILES |
	    CLONE_SIGHAND | CLONE_THREAD | CLONE_SYSVSEM, ACT_ALLOW);
	check1(p, "fork", "clone", 0, SIGCHLD, ACT_ALLOW);
	check1(p, "any", "clone3", 0, 0, ACT_ERRNO(ENOSYS));
	check1(p, "TIOCSTI", "ioctl", 1, TIOCSTI, eperm);
	check1(p, "TIOCSTI, high bits", "ioctl", 1, 0xdead00000000ULL | TIOCSTI,
	    eperm);
	check1(p, "TIOCLINUX", "ioctl", 1, TIOCLINUX, eperm);
	check1(p, "TCGETS", "ioctl", 1, TCGETS, ACT_ALLOW);
	check1(p, "PR_SET_DUMPABLE", "prctl", 0, PR_SET_DUMPABLE,
	    SANDBOX_SANITIZER && p->self ? ACT_ALLOW : eperm);
	check1(p, "PR_SET_MM, high bits", "prctl", 0, (1ULL << 40) | PR_SET_MM,
	    eperm);
	check1(p, "PR_GET_DUMPABLE", "prctl", 0, PR_GET_DUMPABLE, ACT_ALLOW);
	check1(p, "query", "personality", 0, 0xffffffffULL, ACT_ALLOW);
	check1(p, "0", "personality", 0, 0, eperm);
	check1(p, "READ_IMPLIES_EXEC", "personality", 0, READ_IMPLIES_EXEC,
	    eperm);
	check1(p, "above the query", "personality", 0, 0x1ffffffffULL, eperm);
	/* The query's neighbours: the two rules meet at it exactly. */
	check1(p, "just below the query", "personality", 0, 0xfffffffeULL,
	    eperm);
	check1(p, "just above the query", "personality", 0, 0x100000000ULL,
	    eperm);
	w = p->fs_write ? ACT_ALLOW : eperm;
	for (i = 0; i < sandbox_seccomp_nwflags; i++) {
		snprintf(what, sizeof(what), "0%lo", sandbox_seccomp_wflags[i]);
		check1(p, what, "open", 1, sandbox_seccomp_wflags[i], w);
		check1(p, what, "openat", 2, sandbox_seccomp_wflags[i], w);
	}
	/* The flags docs/sandbox.md names, whatever the table says. */
	for (i = 0; i < sizeof(doc_wflags) / sizeof(doc_wflags[0]); i++) {
		snprintf(what, sizeof(what), "docs' 0%lo", doc_wflags[i]);
		check1(p, what, "open", 1, doc_wflags[i], w);
		check1(p, what, "openat", 2, doc_wflags[i], w);
	}
	check1(p, "O_RDONLY|O_CLOEXEC", "openat", 2, O_CLOEXEC, ACT_ALLOW);
	check1(p, "O_RDONLY", "open", 1, O_RDONLY, ACT_ALLOW);
	check1(p, "any", "fallocate", 0, 0, p->fs_write ?
	    ACT_ERRNO(EOPNOTSUPP) : eperm);
	w = p->exec ? ACT_ALLOW : p->notify_exec ? ACT_NOTIFY : eperm;
	check1(p, "any", "execve", 0, 0, w);
	check1(p, "any", "execveat", 0, 0, w);
}

/* Every number that no table and no argument rule names: allowed. */
static void
check_sweep(struct prog *p)
{
	char	 what[32];
	int	 nr;

	for (nr = 0; nr < SC_SWEEP; nr++) {
		if (in_list(sandbox_seccomp_deny, sandbox_seccomp_ndeny, nr) ||
		    in_list(sandbox_seccomp_deny_ro, sandbox_seccomp_ndeny_ro,
		    nr) || in_list(sandbox_seccomp_deny_ipc,
		    sandbox_seccomp_ndeny_ipc, nr) || has_argrule(nr))
			continue;
		snprintf(what, sizeof(what), "unlisted syscall %d", nr);
		check(p, what, nr, NULL, ACT_ALLOW);
	}
}

/* Only the native architecture: any other, and x32 numbers, kill. */
static void
check_arch(struct prog *p)
{
	static const uint32_t	 foreign[] = { AUDIT_ARCH_I386,
	    AUDIT_ARCH_X86_64, AUDIT_ARCH_AARCH64, AUDIT_ARCH_ARM,
	    AUDIT_ARCH_PPC64LE, AUDIT_ARCH_S390X, AUDIT_ARCH_RISCV64, 0 };
	char			 b[64];
	uint32_t		 got;
	size_t			 i;

	for (i = 0; i < sizeof(foreign) / sizeof(foreign[0]); i++) {
		if (foreign[i] == SC_ARCH)
			continue;
		/* getpid's native number: allowed natively, so a kill can
		 * only be the architecture check's. */
		if ((got = eval(p, foreign[i], SYS_getpid, NULL)) != ACT_KILL) {
			p->nfail++;
			fprintf(stderr, "  %s: arch 0x%08x: got %s, want "
			    "kill-process\n", p->what, foreign[i],
			    act_name(got, b, sizeof(b)));
		}
	}
#ifdef SC_X32_BIT
	if ((got = eval(p, SC_ARCH, SYS_getpid | SC_X32_BIT, NULL)) !=
	    ACT_KILL) {
		p->nfail++;
		fprintf(stderr, "  %s: x32 getpid: got %s, want kill-process\n",
		    p->what, act_name(got, b, sizeof(b)));
	}
#endif
}

static const char *const mode_names[] = {
	"worker", "exec", "sandbox exec (notify)",
	"sandbox exec (notify, one command)",
};

/* The program the loader picks for (fs_write, exec, mode). */
static void
prog_for(struct prog *p, int fs_write, int exec, int mode)
{
	struct sandbox_policy	 pol;
	int			 flags;

	memset(p, 0, sizeof(*p));
	memset(&pol, 0, sizeof(pol));
	pol.fs_write = fs_write;
	pol.exec = exec;
	flags = mode == 0 ? SANDBOX_SECCOMP_SELF : mode == 1 ? 0 :
	    SANDBOX_SECCOMP_NOTIFY;
	if (mode == 3)
		strlcpy(pol.program, "/bin/true", sizeof(pol.program));
	sandbox_seccomp_program(&pol, flags, &p->fp);
	p->fs_write = fs_write;
	p->exec = exec;
	p->self = mode == 0;
	p->notify = mode >= 2;
	p->notify_exec = mode == 3 && !exec;
	snprintf(p->what, sizeof(p->what), "%s%s, %s",
	    fs_write ? "read-write" : "read-only", exec ? ", exec" : "",
	    mode_names[mode]);
}

/*
 * Every program the built-in profiles use (their fs_write and exec from
 * the one profile table, agent/profile.c), and the combination only a
 * user profile has (write and edit without bash), in every mode.
 */
static void
test_programs_match_tables(void **state)
{
	const struct profile	*b;
	struct prog		 p;
	int			 seen[4] = { 0 }, combo, mode, nfail = 0;
	size_t			 i;

	(void)state;
	for (i = 0; (b = profile_builtin_at(i)) != NULL; i++)
		seen[(b->fs_write ? 1 : 0) | (b->exec ? 2 : 0)] = 1;
	/* Built-ins cover read-only and read-write + exec at least. */
	assert_true(seen[0] && seen[3]);
	seen[1] = 1;
	for (combo = 0; combo < 4; combo++) {
		if (!seen[combo])
			continue;
		for (mode = 0; mode < 4; mode++) {
			prog_for(&p, combo & 1, (combo >> 1) & 1, mode);
			fprintf(stderr, "%s: %u instructions\n", p.what,
			    p.fp.len);
			check_tables(&p);
			check_args(&p);
			check_sweep(&p);
			check_arch(&p);
			nfail += p.nfail;
		}
	}
	if (nfail != 0)
		fail_msg("%d rows differ from the tables (above)", nfail);
}

/*
 * A backend's worker (policy inet, docs/backends.md): socket() for
 * AF_UNIX, AF_INET and AF_INET6 only; netlink, packet and every other
 * family refused, high bits included; every other table as before. An
 * MCP server granted the host's network (policy hostnet, docs/mcp.md)
 * loads the same programs.
 */
static void
test_inet_programs(void **state)
{
	struct sandbox_policy	 pol;
	struct prog		 p;
	uint32_t		 eperm = ACT_ERRNO(EPERM);
	int			 mode, fam, nfail = 0;

	(void)state;
	for (mode = 0; mode < 4; mode++) {
		memset(&p, 0, sizeof(p));
		memset(&pol, 0, sizeof(pol));
		pol.fs_write = pol.exec = 1;
		pol.inet = mode < 2;
		pol.hostnet = mode >= 2;
		sandbox_seccomp_program(&pol, mode % 2 == 0 ?
		    SANDBOX_SECCOMP_SELF : 0, &p.fp);
		p.fs_write = p.exec = 1;
		p.self = mode % 2 == 0;
		snprintf(p.what, sizeof(p.what), "%s, %s", pol.inet ? "inet" :
		    "hostnet", mode_names[mode % 2]);
		check_tables(&p);
		for (fam = 0; fam < 64; fam++)
			check1(&p, "family", "socket", 0, (uint64_t)fam,
			    fam == AF_UNIX || fam == AF_INET ||
			    fam == AF_INET6 ? ACT_ALLOW : eperm);
		check1(&p, "AF_INET | 1 << 32", "socket", 0,
		    (1ULL << 32) | AF_INET, eperm);
		check1(&p, "AF_NETLINK | 1 << 32", "socket", 0,
		    (1ULL << 32) | AF_NETLINK, eperm);
		check1(&p, "AF_INET", "socketpair", 0, AF_INET, eperm);
		nfail += p.nfail;
	}
	if (nfail != 0)
		fail_msg("%d rows differ (above)", nfail);
}

/*
 * The floor: calls SANDBOX-TESTS.md says seccomp alone stops (cases 10,
 * 11, 13, 15, 18-23, 26) or stops besides a layer other tests cannot
 * take away from it. The tables may deny more, never less. This list is
 * the specification, not a copy of the table: it fails when a row is
 * dropped from the table, which no check of program against table can.
 */
static const char *const floor_every[] = {
	"chroot", "pivot_root", "mount", "umount2", "open_tree", "move_mount",
	"fsopen", "fsconfig", "fsmount", "fspick", "mount_setattr", "ptrace",
	"process_vm_readv", "process_vm_writev", "kcmp", "pidfd_getfd",
	"keyctl", "add_key", "request_key", "unshare", "setns", "bpf",
	"perf_event_open", "userfaultfd", "io_uring_setup", "io_uring_enter",
	"io_uring_register", "init_module", "finit_module", "kexec_load",
	"kexec_file_load", "reboot", "open_by_handle_at", "iopl", "ioperm",
	"modify_ldt",
	/* and the rest of what docs/sandbox.md says every profile denies */
	"process_madvise", "delete_module", "swapon", "swapoff", "acct",
	"quotactl", "quotactl_fd", "syslog", "name_to_handle_at",
	"move_pages", "migrate_pages",
};
static const char *const floor_ro[] = {
	"creat", "openat2", "truncate", "ftruncate", "rename", "renameat",
	"renameat2", "unlink", "unlinkat", "mkdir", "mkdirat", "rmdir", "link",
	"linkat", "symlink", "symlinkat", "mknod", "mknodat", "chmod",
	"fchmodat", "chown", "fchownat", "setxattr",
	/* docs/sandbox.md: fallocate, chmod*, chown*, utime*, xattr */
	"fallocate", "fchmod", "fchown", "lchown", "utime", "utimes",
	"utimensat", "futimesat", "lsetxattr", "fsetxattr", "removexattr",
	"lremovexattr", "fremovexattr",
};
static const char *const floor_noexec[] = {
	"shmget", "semget", "msgget", "mq_open", "memfd_create",
	/* docs/sandbox.md: SysV IPC, POSIX message queues, the hostname */
	"shmat", "shmctl", "semop", "semctl", "msgsnd", "msgrcv", "msgctl",
	"mq_timedsend", "mq_timedreceive", "mq_notify", "mq_unlink",
	"sethostname", "setdomainname",
};

static int
floor_missing(const char *const *names, size_t n,
    const struct sandbox_sc *list, size_t ln, const char *table)
{
	size_t	 i, j;
	int	 missing = 0;

	for (i = 0; i < n; i++) {
		for (j = 0; j < ln; j++)
			if (strcmp(names[i], list[j].name) == 0)
				break;
		if (j == ln) {
			fprintf(stderr, "  %s: SANDBOX-TESTS.md has seccomp deny "
			    "it; the %s table no longer does\n", names[i],
			    table);
			missing++;
		}
	}
	return missing;
}

static void
test_floor_in_tables(void **state)
{
	int	 n;

	(void)state;
	n = floor_missing(floor_every, sizeof(floor_every) /
	    sizeof(floor_every[0]), sandbox_seccomp_deny, sandbox_seccomp_ndeny,
	    "every-profile (sandbox_seccomp_deny)");
	n += floor_missing(floor_ro, sizeof(floor_ro) / sizeof(floor_ro[0]),
	    sandbox_seccomp_deny_ro, sandbox_seccomp_ndeny_ro,
	    "read-only (sandbox_seccomp_deny_ro)");
	n += floor_missing(floor_noexec, sizeof(floor_noexec) /
	    sizeof(floor_noexec[0]), sandbox_seccomp_deny_ipc,
	    sandbox_seccomp_ndeny_ipc, "no-exec (sandbox_seccomp_deny_ipc)");
	if (n != 0)
		fail_msg("%d calls of the floor missing from the tables", n);
}

/* ---- the kernel agrees with the interpreter ---- */

struct probe {
	const char	*what;
	long		 nr;
	long		 a[3];
};

/* Calls that fail harmlessly if let through (bad fd, pointer or
 * command), so each verdict can be seen in errno. */
static const struct probe probes[] = {
	{ "kcmp", SYS_kcmp, { 0, 0, 99 } },
	{ "keyctl", SYS_keyctl, { 9999, 0, 0 } },
	{ "bpf", SYS_bpf, { 9999, 0, 0 } },
	{ "fallocate(-1)", SYS_fallocate, { -1, 0, 0 } },
	{ "ftruncate(-1)", SYS_ftruncate, { -1, 0, 0 } },
	{ "openat(NULL, O_WRONLY)", SYS_openat, { AT_FDCWD, 0, O_WRONLY } },
	{ "openat(NULL, O_RDONLY)", SYS_openat, { AT_FDCWD, 0, O_RDONLY } },
	{ "clone3(NULL)", SYS_clone3, { 0, 0, 0 } },
	{ "ioctl(-1, TIOCSTI)", SYS_ioctl, { -1, TIOCSTI, 0 } },
	{ "ioctl(-1, TCGETS)", SYS_ioctl, { -1, TCGETS, 0 } },
	{ "execve(NULL)", SYS_execve, { 0, 0, 0 } },
	{ "memfd_create(NULL)", SYS_memfd_create, { 0, 0, 0 } },
	{ "shmctl(-1)", SYS_shmctl, { -1, 0, 0 } },
	{ "socketpair(AF_INET, NULL)", SYS_socketpair, { AF_INET, 0, 0 } },
	{ "getpid", SYS_getpid, { 0, 0, 0 } },
};

/* In the child, under p's filter: each probe as the interpreter says. */
static int
kernel_probe(const struct prog *p)
{
	uint64_t	 args[6] = { 0 };
	uint32_t	 act;
	size_t		 i;
	long		 rc;
	int		 err, bad = 0;

	for (i = 0; i < sizeof(probes) / sizeof(probes[0]); i++) {
		args[0] = (uint64_t)probes[i].a[0];
		args[1] = (uint64_t)probes[i].a[1];
		args[2] = (uint64_t)probes[i].a[2];
		act = eval(p, SC_ARCH, (int)probes[i].nr, args);
		errno = 0;
		rc = syscall(probes[i].nr, probes[i].a[0], probes[i].a[1],
		    probes[i].a[2], 0, 0, 0);
		err = rc == -1 ? errno : 0;
		if ((act & SECCOMP_RET_ACTION_FULL) == SECCOMP_RET_ERRNO ?
		    err == (int)(act & 0xffff) : act == ACT_ALLOW &&
		    err != EPERM && err != EOPNOTSUPP && err != ENOSYS)
			continue;
		fprintf(stderr, "  %s: %s: interpreter says 0x%08x, kernel "
		    "gave rc %ld errno %s\n", p->what, probes[i].what, act,
		    rc, strerror(err));
		bad++;
	}
	return bad;
}

static void
test_kernel_agrees(void **state)
{
	struct prog	 p;
	int		 combo, st;
	pid_t		 pid;

	(void)state;
	if (!sandbox_seccomp_available()) {
		fprintf(stderr, "SKIP: this kernel has no seccomp filter mode\n");
		skip();
	}
	for (combo = 0; combo < 4; combo += 3) {
		prog_for(&p, combo & 1, (combo >> 1) & 1, 0);
		fflush(NULL);
		pid = fork();
		assert_int_not_equal(pid, -1);
		if (pid == 0) {
			struct sandbox_policy	 pol;
			struct sandbox_error	 e;
			int			 nfd;

			memset(&pol, 0, sizeof(pol));
			pol.fs_write = p.fs_write;
			pol.exec = p.exec;
			if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) == -1 ||
			    sandbox_seccomp_apply(&pol, SANDBOX_SECCOMP_SELF,
			    &nfd, &e) == -1) {
				fprintf(stderr, "  seccomp: %s\n", e.msg);
				_exit(100);
			}
			_exit(kernel_probe(&p));
		}
		if ((st = test_waitpid(pid, 60, p.what)) == -1)
			fail_msg("%s: the kernel probe had not ended after 60 s",
			    p.what);
		if (!WIFEXITED(st) || WEXITSTATUS(st) != 0)
			fail_msg("%s: the kernel disagreed with the interpreter "
			    "(status 0x%x, above)", p.what, st);
	}
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_programs_match_tables),
		cmocka_unit_test(test_inet_programs),
		cmocka_unit_test(test_floor_in_tables),
		cmocka_unit_test(test_kernel_agrees),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}

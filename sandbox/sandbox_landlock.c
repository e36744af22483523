/*
 * Landlock: path rules, TCP rules and scopes, applied to the calling
 * process (after no_new_privs, before seccomp).
 *
 * Debian 12's <linux/landlock.h> stops at ABI 2, so the constants of ABI
 * 3-7 are defined here. The ABI used is the lower of what the kernel
 * reports and what this file knows (SANDBOX_LANDLOCK_MAX), and the ruleset
 * handles only the rights of that ABI, so an older kernel gets a weaker
 * but valid ruleset instead of EINVAL.
 *
 * Rules: system directories readable (and executable for exec profiles),
 * the workspace readable, writable for read-write profiles, executable for
 * exec profiles; /tmp and /dev/shm writable for read-write profiles; a few
 * character devices (/dev/null, /dev/zero, /dev/urandom) usable; /dev only
 * listable. Anything else, $HOME and block devices included, is denied. No TCP bind or connect (ABI >= 4);
 * signals and abstract unix sockets scoped to the sandbox (ABI >= 6).
 */
#include <sys/types.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>

#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <string.h>
#include <unistd.h>


#include "sandbox/sandbox_int.h"

#define SANDBOX_LANDLOCK_MAX	7

/* ABI 1 and 2 (also in Debian 12's header). */
#define LL_FS_EXECUTE		(1ULL << 0)
#define LL_FS_WRITE_FILE	(1ULL << 1)
#define LL_FS_READ_FILE		(1ULL << 2)
#define LL_FS_READ_DIR		(1ULL << 3)
#define LL_FS_REMOVE_DIR	(1ULL << 4)
#define LL_FS_REMOVE_FILE	(1ULL << 5)
#define LL_FS_MAKE_CHAR		(1ULL << 6)
#define LL_FS_MAKE_DIR		(1ULL << 7)
#define LL_FS_MAKE_REG		(1ULL << 8)
#define LL_FS_MAKE_SOCK		(1ULL << 9)
#define LL_FS_MAKE_FIFO		(1ULL << 10)
#define LL_FS_MAKE_BLOCK	(1ULL << 11)
#define LL_FS_MAKE_SYM		(1ULL << 12)
#define LL_FS_REFER		(1ULL << 13)	/* ABI 2 */
#define LL_FS_TRUNCATE		(1ULL << 14)	/* ABI 3 */
#define LL_FS_IOCTL_DEV		(1ULL << 15)	/* ABI 5 */
#define LL_NET_BIND_TCP		(1ULL << 0)	/* ABI 4 */
#define LL_NET_CONNECT_TCP	(1ULL << 1)	/* ABI 4 */
#define LL_SCOPE_ABSTRACT_UNIX	(1ULL << 0)	/* ABI 6 */
#define LL_SCOPE_SIGNAL		(1ULL << 1)	/* ABI 6 */
/* ABI 7: landlock_restrict_self() audit flags (unused: 0 keeps defaults). */
#define LL_RESTRICT_SELF_LOG_SAME_EXEC_OFF	(1U << 0)
#define LL_RESTRICT_SELF_LOG_NEW_EXEC_ON	(1U << 1)
#define LL_RESTRICT_SELF_LOG_SUBDOMAINS_OFF	(1U << 2)

#define LL_CREATE_RULESET_VERSION	(1U << 0)
#define LL_RULE_PATH_BENEATH		1

/* The kernel's struct landlock_ruleset_attr as of ABI 6. */
struct sandbox_ll_attr {
	uint64_t	 handled_access_fs;
	uint64_t	 handled_access_net;
	uint64_t	 scoped;
};

struct sandbox_ll_path {
	uint64_t	 allowed_access;
	int32_t		 parent_fd;
} __attribute__((packed));

#define LL_READ		(LL_FS_READ_FILE | LL_FS_READ_DIR)
#define LL_WRITE	(LL_FS_WRITE_FILE | LL_FS_REMOVE_DIR | \
			 LL_FS_REMOVE_FILE | LL_FS_MAKE_DIR | LL_FS_MAKE_REG | \
			 LL_FS_MAKE_SOCK | LL_FS_MAKE_FIFO | LL_FS_MAKE_SYM | \
			 LL_FS_REFER | LL_FS_TRUNCATE)
#define LL_FILE		(LL_FS_EXECUTE | LL_FS_WRITE_FILE | LL_FS_READ_FILE | \
			 LL_FS_TRUNCATE | LL_FS_IOCTL_DEV)

/*
 * Not /dev or /sys as a whole: root without capabilities still owns the
 * block devices (raw disk reads would bypass every path rule) and many
 * sysfs files. /sys/devices/system has the CPU and NUMA topology libc and
 * runtimes read.
 */
static const char *const sandbox_landlock_system[] = {
	"/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32",
	"/etc", "/opt", "/proc", "/sys/devices/system",
};
static const char *const sandbox_landlock_devices[] = {
	"/dev/null", "/dev/zero", "/dev/full", "/dev/random", "/dev/urandom",
};

int
sandbox_landlock_abi(void)
{
	long	 abi;

	abi = syscall(SYS_landlock_create_ruleset, NULL, 0,
	    LL_CREATE_RULESET_VERSION);
	if (abi < 0)
		return 0;
	return abi > SANDBOX_LANDLOCK_MAX ? SANDBOX_LANDLOCK_MAX : (int)abi;
}

static uint64_t
sandbox_landlock_handled(int abi)
{
	uint64_t	 fs;

	fs = (LL_FS_MAKE_SYM << 1) - 1;		/* ABI 1: bits 0-12 */
	if (abi >= 2)
		fs |= LL_FS_REFER;
	if (abi >= 3)
		fs |= LL_FS_TRUNCATE;
	if (abi >= 5)
		fs |= LL_FS_IOCTL_DEV;
	return fs;
}

/* Add a rule for path; a missing path is skipped (not every system has
 * /lib32). Rights not handled at this ABI, or not for files, are masked. */
static int
sandbox_landlock_rule(int rfd, const char *path, uint64_t access,
    uint64_t handled, struct sandbox_error *e)
{
	struct sandbox_ll_path	 pb;
	struct stat		 st;
	int			 fd, saved;

	if ((fd = open(path, O_PATH | O_CLOEXEC)) == -1) {
		if (errno == ENOENT || errno == ENOTDIR || errno == EACCES)
			return 0;
		return sandbox_fail(e, SANDBOX_LANDLOCK, errno, "open %s",
		    path);
	}
	if (fstat(fd, &st) == -1) {
		saved = errno;
		close(fd);
		return sandbox_fail(e, SANDBOX_LANDLOCK, saved, "stat %s",
		    path);
	}
	if (!S_ISDIR(st.st_mode))
		access &= LL_FILE;
	memset(&pb, 0, sizeof(pb));
	pb.allowed_access = access & handled;
	pb.parent_fd = fd;
	if (pb.allowed_access != 0 && syscall(SYS_landlock_add_rule, rfd,
	    LL_RULE_PATH_BENEATH, &pb, 0) == -1) {
		saved = errno;
		close(fd);
		return sandbox_fail(e, SANDBOX_LANDLOCK, saved,
		    "landlock_add_rule %s", path);
	}
	close(fd);
	return 0;
}

/*
 * The ELF interpreter of path (PT_INTERP), so a no-exec `sandbox exec` can
 * grant EXECUTE on its one command: the kernel opens ld.so for exec too.
 * A "#!" script names its interpreter instead. Returns 0 and "" if none.
 */
static int
sandbox_landlock_interp(const char *path, char *out, size_t len)
{
	Elf64_Ehdr	 eh;
	Elf64_Phdr	 ph;
	char		 buf[256], *nl, *sp;
	ssize_t		 n;
	int		 fd, i, rc = 0;

	out[0] = '\0';
	if ((fd = open(path, O_RDONLY | O_CLOEXEC)) == -1)
		return -1;
	n = pread(fd, buf, sizeof(buf) - 1, 0);
	if (n >= 2 && buf[0] == '#' && buf[1] == '!') {
		buf[n] = '\0';
		if ((nl = strchr(buf, '\n')) != NULL)
			*nl = '\0';
		for (sp = buf + 2; *sp == ' ' || *sp == '\t'; sp++)
			;
		sp[strcspn(sp, " \t")] = '\0';
		strlcpy(out, sp, len);
		goto out;
	}
	if (pread(fd, &eh, sizeof(eh), 0) != sizeof(eh) ||
	    memcmp(eh.e_ident, ELFMAG, SELFMAG) != 0 ||
	    eh.e_ident[EI_CLASS] != ELFCLASS64 || eh.e_phnum > 256)
		goto out;
	for (i = 0; i < eh.e_phnum; i++) {
		if (pread(fd, &ph, sizeof(ph), (off_t)(eh.e_phoff +
		    (uint64_t)i * eh.e_phentsize)) != sizeof(ph))
			break;
		if (ph.p_type != PT_INTERP || ph.p_filesz == 0 ||
		    ph.p_filesz >= len)
			continue;
		if (pread(fd, out, ph.p_filesz, (off_t)ph.p_offset) !=
		    (ssize_t)ph.p_filesz) {
			out[0] = '\0';
			rc = -1;
		} else
			out[ph.p_filesz - 1] = '\0';
		break;
	}
out:
	close(fd);
	return rc;
}

/* EXECUTE on the program exec'd after phase 2 (`sandbox exec`), its
 * interpreter, and that one's (a script's shell needs ld.so). */
static int
sandbox_landlock_program(int rfd, const char *path, uint64_t handled,
    struct sandbox_error *e)
{
	char	 cur[PATH_MAX], interp[PATH_MAX];
	int	 depth;

	strlcpy(cur, path, sizeof(cur));
	for (depth = 0; depth < 3 && cur[0] != '\0'; depth++) {
		if (sandbox_landlock_rule(rfd, cur, LL_FS_EXECUTE |
		    LL_FS_READ_FILE, handled, e) == -1)
			return -1;
		if (sandbox_landlock_interp(cur, interp, sizeof(interp)) == -1)
			break;
		strlcpy(cur, interp, sizeof(cur));
	}
	return 0;
}

static int
sandbox_landlock_rules(int rfd, const struct sandbox_policy *p,
    uint64_t handled, struct sandbox_error *e)
{
	uint64_t	 sys, ws;
	size_t		 i;

	sys = LL_READ | (p->exec ? LL_FS_EXECUTE : 0);
	for (i = 0; i < sizeof(sandbox_landlock_system) /
	    sizeof(sandbox_landlock_system[0]); i++)
		if (sandbox_landlock_rule(rfd, sandbox_landlock_system[i], sys,
		    handled, e) == -1)
			return -1;
	/* /dev: listing only, then the few devices below. */
	if (sandbox_landlock_rule(rfd, "/dev", LL_FS_READ_DIR, handled,
	    e) == -1)
		return -1;
	for (i = 0; i < sizeof(sandbox_landlock_devices) /
	    sizeof(sandbox_landlock_devices[0]); i++)
		if (sandbox_landlock_rule(rfd, sandbox_landlock_devices[i],
		    LL_FS_READ_FILE | LL_FS_IOCTL_DEV | (p->fs_write ||
		    p->exec ? LL_FS_WRITE_FILE : 0), handled, e) == -1)
			return -1;
	ws = LL_READ | (p->exec ? LL_FS_EXECUTE : 0) |
	    (p->fs_write ? LL_WRITE : 0);
	if (sandbox_landlock_rule(rfd, p->workspace[0] != '\0' ?
	    p->workspace : ".", ws, handled, e) == -1)
		return -1;
	if (p->fs_write) {
		if (sandbox_landlock_rule(rfd, "/tmp", LL_READ | LL_WRITE |
		    (p->exec ? LL_FS_EXECUTE : 0), handled, e) == -1 ||
		    sandbox_landlock_rule(rfd, "/dev/shm", LL_READ | LL_WRITE,
		    handled, e) == -1)
			return -1;
	}
	if (p->program[0] != '\0' && sandbox_landlock_program(rfd,
	    p->program, handled, e) == -1)
		return -1;
	return 0;
}

/*
 * The report bits a ruleset of this ABI enforces: the path rules from
 * ABI 1, the signal and abstract-unix scopes from ABI 6. The ruleset is
 * built from the same answer, so the report cannot claim a scope the
 * kernel was not asked for.
 */
unsigned
sandbox_landlock_layers(int abi)
{
	if (abi < 1)
		return 0;
	return SANDBOX_LANDLOCK | (abi >= 6 ? SANDBOX_LLSCOPE : 0);
}

/* Needs no_new_privs (or CAP_SYS_ADMIN) already set. */
int
sandbox_landlock_apply(const struct sandbox_policy *p, int *abip,
    struct sandbox_error *e)
{
	return sandbox_landlock_apply_max(p, SANDBOX_LANDLOCK_MAX, abip, e);
}

/*
 * The same, using at most ABI maxabi. Only tests pass less than
 * SANDBOX_LANDLOCK_MAX: tests/sandbox/test_sandbox_scope.c applies the
 * layer as an ABI 5 kernel would (no scopes) to show that what the
 * scopes deny is otherwise allowed, and to run the ABI < 6 branch on a
 * newer kernel. Nothing reachable from the command line or the
 * environment lowers it.
 */
int
sandbox_landlock_apply_max(const struct sandbox_policy *p, int maxabi,
    int *abip, struct sandbox_error *e)
{
	struct sandbox_ll_attr	 attr;
	int			 abi, rfd, saved;

	*abip = 0;
	if ((abi = sandbox_landlock_abi()) < 1)
		return sandbox_missing(e, SANDBOX_LANDLOCK,
		    "Landlock is not available on this kernel (ABI 0)");
	if (maxabi < 1)
		return sandbox_fail(e, SANDBOX_LANDLOCK, EINVAL,
		    "Landlock ABI limit %d (at least 1)", maxabi);
	if (abi > maxabi)
		abi = maxabi;
	memset(&attr, 0, sizeof(attr));
	attr.handled_access_fs = sandbox_landlock_handled(abi);
	if (abi >= 4)
		attr.handled_access_net = LL_NET_BIND_TCP | LL_NET_CONNECT_TCP;
	if (sandbox_landlock_layers(abi) & SANDBOX_LLSCOPE)
		attr.scoped = LL_SCOPE_ABSTRACT_UNIX | LL_SCOPE_SIGNAL;
	if ((rfd = (int)syscall(SYS_landlock_create_ruleset, &attr,
	    sizeof(attr), 0)) == -1)
		return sandbox_fail(e, SANDBOX_LANDLOCK, errno,
		    "landlock_create_ruleset (ABI %d)", abi);
	if (sandbox_landlock_rules(rfd, p, attr.handled_access_fs, e) == -1)
		goto fail;
	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) == -1) {
		sandbox_fail(e, SANDBOX_NNP, errno, "PR_SET_NO_NEW_PRIVS");
		goto fail;
	}
	if (syscall(SYS_landlock_restrict_self, rfd, 0) == -1) {
		sandbox_fail(e, SANDBOX_LANDLOCK, errno,
		    "landlock_restrict_self (ABI %d)", abi);
		goto fail;
	}
	close(rfd);
	*abip = abi;
	return 0;
fail:
	saved = errno;
	close(rfd);
	errno = saved;
	return -1;
}

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
 * listable. Anything else, $HOME and block devices included, is denied. No
 * TCP bind or connect (ABI >= 4); signals and abstract unix sockets scoped
 * to the sandbox (ABI >= 6).
 *
 * Building the ruleset is most of the layer's cost: an open, an fstat, a
 * rule and a close per path. So the parent builds it before the clone,
 * from fds it opened once (sandbox_landlock_preopen) for the paths no
 * mount of ours replaces; the child adds its own /proc (and /tmp and
 * /dev/shm) after its mounts and hands the ruleset across its exec to
 * phase 2, which only restricts itself with it (docs/sandbox.md,
 * "Landlock's ruleset, built before the exec").
 */
#include <sys/types.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>

#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "sandbox/sandbox_int.h"
#include "sandbox/sandbox_testapi.h"

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
 * The paths every sandbox gets a rule for and no mount of ours replaces
 * (not /proc, /tmp or /dev/shm: a child's mount namespace has its own).
 * Not /dev or /sys as a whole: root without capabilities still owns the
 * block devices (raw disk reads would bypass every path rule) and many
 * sysfs files. /sys/devices/system has the CPU and NUMA topology libc and
 * runtimes read.
 */
enum sandbox_ll_kind {
	LL_KIND_SYS,		/* read (and execute for exec profiles) */
	LL_KIND_DEVDIR,		/* list only */
	LL_KIND_DEV,		/* a character device to use */
};
static const struct sandbox_ll_fixed {
	const char	*path;
	int		 kind;
} sandbox_ll_fixed[] = {
	{ "/usr", LL_KIND_SYS }, { "/bin", LL_KIND_SYS },
	{ "/sbin", LL_KIND_SYS }, { "/lib", LL_KIND_SYS },
	{ "/lib32", LL_KIND_SYS }, { "/lib64", LL_KIND_SYS },
	{ "/libx32", LL_KIND_SYS }, { "/etc", LL_KIND_SYS },
	{ "/opt", LL_KIND_SYS }, { "/sys/devices/system", LL_KIND_SYS },
	{ "/dev", LL_KIND_DEVDIR },
	{ "/dev/null", LL_KIND_DEV }, { "/dev/zero", LL_KIND_DEV },
	{ "/dev/full", LL_KIND_DEV }, { "/dev/random", LL_KIND_DEV },
	{ "/dev/urandom", LL_KIND_DEV },
};
#define SANDBOX_LL_NFIXED	(sizeof(sandbox_ll_fixed) / \
				 sizeof(sandbox_ll_fixed[0]))

/*
 * sandbox_ll_fixed opened once per process (sandbox_landlock_preopen) for
 * the rulesets it builds: fd -1 for a path this machine lacks, or one
 * another rule already covers (/bin when it is a symlink to /usr/bin).
 * Only this process uses them; a child's close_range drops its copies.
 */
static struct {
	int	 ready;
	int	 fd[SANDBOX_LL_NFIXED];
	int	 dir[SANDBOX_LL_NFIXED];
	int	 link[SANDBOX_LL_NFIXED];	/* the path is a symlink */
} sandbox_ll_open;

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

static uint64_t
sandbox_ll_fixed_access(int kind, const struct sandbox_policy *p)
{
	switch (kind) {
	case LL_KIND_SYS:
		return LL_READ | (p->exec ? LL_FS_EXECUTE : 0);
	case LL_KIND_DEVDIR:
		/* Not in read-only profiles: their /dev/shm is the host's
		 * (no tmpfs there, sandbox_child), its names included. */
		return p->fs_write ? LL_FS_READ_DIR : 0;
	default:
		return LL_FS_READ_FILE | LL_FS_IOCTL_DEV |
		    (p->fs_write || p->exec ? LL_FS_WRITE_FILE : 0);
	}
}

/* Open path for a rule: the fd and whether it is a directory, 0 and fd -1
 * if it is missing (not every system has /lib32), or -1. */
static int
sandbox_landlock_open(const char *path, int *fdp, int *dirp,
    struct sandbox_error *e)
{
	struct stat	 st;
	int		 fd, saved;

	*fdp = -1;
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
	*fdp = fd;
	*dirp = S_ISDIR(st.st_mode);
	return 0;
}

/* A rule for the file or directory at fd. Rights not handled at this ABI,
 * or not for files, are masked. */
static int
sandbox_landlock_rule_fd(int rfd, int fd, int dir, const char *path,
    uint64_t access, uint64_t handled, struct sandbox_error *e)
{
	struct sandbox_ll_path	 pb;

	if (!dir)
		access &= LL_FILE;
	memset(&pb, 0, sizeof(pb));
	pb.allowed_access = access & handled;
	pb.parent_fd = fd;
	if (pb.allowed_access != 0 && syscall(SYS_landlock_add_rule, rfd,
	    LL_RULE_PATH_BENEATH, &pb, 0) == -1)
		return sandbox_fail(e, SANDBOX_LANDLOCK, errno,
		    "landlock_add_rule %s", path);
	return 0;
}

/* Add a rule for path; a missing path is skipped. */
static int
sandbox_landlock_rule(int rfd, const char *path, uint64_t access,
    uint64_t handled, struct sandbox_error *e)
{
	int	 fd, dir, rc;

	if (sandbox_landlock_open(path, &fd, &dir, e) == -1)
		return -1;
	if (fd == -1)
		return 0;
	rc = sandbox_landlock_rule_fd(rfd, fd, dir, path, access, handled, e);
	close(fd);
	return rc;
}

/*
 * Is fixed path i a symlink into another system directory of the table,
 * whose rule (the same rights) already covers it? On a merged-/usr system
 * /bin, /sbin, /lib and /lib64 are: Landlock checks the resolved path.
 */
static int
sandbox_ll_covered(size_t i)
{
	char		 real[PATH_MAX];
	size_t		 j, len;

	if (sandbox_ll_fixed[i].kind != LL_KIND_SYS ||
	    !sandbox_ll_open.link[i] ||
	    realpath(sandbox_ll_fixed[i].path, real) == NULL)
		return 0;
	for (j = 0; j < SANDBOX_LL_NFIXED; j++) {
		if (j == i || sandbox_ll_fixed[j].kind != LL_KIND_SYS ||
		    sandbox_ll_open.fd[j] == -1 || !sandbox_ll_open.dir[j] ||
		    sandbox_ll_open.link[j])
			continue;
		len = strlen(sandbox_ll_fixed[j].path);
		if (strncmp(real, sandbox_ll_fixed[j].path, len) == 0 &&
		    (real[len] == '/' || real[len] == '\0'))
			return 1;
	}
	return 0;
}

void
sandbox_landlock_preopen(void)
{
	struct sandbox_error	 e;
	struct stat		 st;
	size_t			 i;
	int			 fd, high;

	if (sandbox_ll_open.ready)
		return;
	for (i = 0; i < SANDBOX_LL_NFIXED; i++) {
		sandbox_ll_open.link[i] = lstat(sandbox_ll_fixed[i].path,
		    &st) == 0 && S_ISLNK(st.st_mode);
		if (sandbox_landlock_open(sandbox_ll_fixed[i].path, &fd,
		    &sandbox_ll_open.dir[i], &e) == -1)
			goto undo;
		/* Out of the way of a caller's dup2 onto a low fd. */
		if (fd != -1 && fd < SANDBOX_FD_OWN) {
			high = fcntl(fd, F_DUPFD_CLOEXEC, SANDBOX_FD_OWN);
			close(fd);
			if ((fd = high) == -1)
				goto undo;
		}
		sandbox_ll_open.fd[i] = fd;
	}
	for (i = 0; i < SANDBOX_LL_NFIXED; i++)
		if (sandbox_ll_open.fd[i] != -1 && sandbox_ll_covered(i)) {
			close(sandbox_ll_open.fd[i]);
			sandbox_ll_open.fd[i] = -1;
		}
	sandbox_ll_open.ready = 1;
	return;
undo:
	/* Each ruleset opens the paths itself, and reports what fails. */
	while (i-- > 0)
		if (sandbox_ll_open.fd[i] != -1)
			close(sandbox_ll_open.fd[i]);
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

/* The policy's extra readable paths (an MCP server's package). */
static int
sandbox_landlock_rules_read(int rfd, const struct sandbox_policy *p,
    uint64_t handled, struct sandbox_error *e)
{
	size_t	 off = 0;
	int	 i;

	for (i = 0; i < p->nread && off < p->read_used &&
	    p->read_used <= sizeof(p->read_pool); i++) {
		if (memchr(p->read_pool + off, '\0', p->read_used - off) ==
		    NULL)
			return sandbox_fail(e, SANDBOX_LANDLOCK, EINVAL,
			    "read paths: not NUL-terminated");
		if (sandbox_landlock_rule(rfd, p->read_pool + off,
		    sandbox_ll_fixed_access(LL_KIND_SYS, p), handled, e) == -1)
			return -1;
		off += strlen(p->read_pool + off) + 1;
	}
	return 0;
}

/*
 * The node_modules directory that holds the package dir (dir itself, its
 * parent, or for a scoped package "@scope/name" its grandparent), in out;
 * 0 found, -1 not in one.
 */
static int
sandbox_landlock_modules(const char *dir, char *out, size_t len)
{
	char	*slash;
	int	 up;

	strlcpy(out, dir, len);
	for (up = 0; up < 3; up++) {
		if ((slash = strrchr(out, '/')) == NULL || slash == out)
			return -1;
		if (strcmp(slash + 1, "node_modules") == 0)
			return 0;
		*slash = '\0';
	}
	return -1;
}

/*
 * A backend's program reads its package: node's script its modules, a
 * native binary's wrapper the binary beside it. The package directory is
 * the nearest of the program's directory and its three parents that holds
 * a package.json, else the program's own directory; read-only. A package
 * inside a node_modules directory gets that whole directory, readable and
 * executable: npm installs a program's native part as a sibling package
 * (Codex's launcher execs @openai/codex-linux-x64's binary, which execs
 * the rg beside it); docs/backends.md says what this opens. The
 * directory in out, *exec set for a node_modules one; -1 (EINVAL) for
 * a program in /. The supervisor refuses a directory that holds the
 * user's HOME or warren's secrets (proc_backend_policy).
 */
int
sandbox_package_dir(const char *program, char *out, size_t len, int *exec)
{
	char		 dir[PATH_MAX], cand[PATH_MAX];
	char		*slash;
	struct stat	 st;
	int		 up;

	*exec = 0;
	strlcpy(dir, program, sizeof(dir));
	if ((slash = strrchr(dir, '/')) == NULL) {
		errno = EINVAL;
		return -1;
	}
	*slash = '\0';
	strlcpy(cand, dir, sizeof(cand));
	for (up = 0; up < 4 && cand[0] != '\0'; up++) {
		char	pj[PATH_MAX];

		if ((size_t)snprintf(pj, sizeof(pj), "%s/package.json",
		    cand) < sizeof(pj) && stat(pj, &st) == 0 &&
		    S_ISREG(st.st_mode)) {
			strlcpy(dir, cand, sizeof(dir));
			break;
		}
		if ((slash = strrchr(cand, '/')) == NULL || slash == cand)
			break;
		*slash = '\0';
	}
	if (dir[0] == '\0' || strcmp(dir, "/") == 0) {
		errno = EINVAL;
		return -1;
	}
	if (sandbox_landlock_modules(dir, cand, sizeof(cand)) == 0) {
		*exec = 1;
		strlcpy(dir, cand, sizeof(dir));
	}
	if (strlcpy(out, dir, len) >= len) {
		errno = ENAMETOOLONG;
		return -1;
	}
	return 0;
}

static int
sandbox_landlock_package(int rfd, const char *program, uint64_t handled,
    struct sandbox_error *e)
{
	char	dir[PATH_MAX];
	int	exec;

	if (sandbox_package_dir(program, dir, sizeof(dir), &exec) == -1)
		return sandbox_fail(e, SANDBOX_LANDLOCK, errno, "the program "
		    "%s: no package directory to open", program);
	return sandbox_landlock_rule(rfd, dir, exec ? LL_READ | LL_FS_EXECUTE :
	    LL_READ, handled, e);
}

/* The rules on what every child sees as we do: the fixed paths, the
 * workspace (bound back at the same place), the program. */
static int
sandbox_landlock_rules_shared(int rfd, const struct sandbox_policy *p,
    uint64_t handled, struct sandbox_error *e)
{
	uint64_t	 access;
	size_t		 i;
	int		 rc;

	for (i = 0; i < SANDBOX_LL_NFIXED; i++) {
		access = sandbox_ll_fixed_access(sandbox_ll_fixed[i].kind, p);
		if (access == 0)
			continue;
		if (!sandbox_ll_open.ready)
			rc = sandbox_landlock_rule(rfd, sandbox_ll_fixed[i].path,
			    access, handled, e);
		else if (sandbox_ll_open.fd[i] != -1)
			rc = sandbox_landlock_rule_fd(rfd, sandbox_ll_open.fd[i],
			    sandbox_ll_open.dir[i], sandbox_ll_fixed[i].path,
			    access, handled, e);
		else
			rc = 0;
		if (rc == -1)
			return -1;
	}
	access = sandbox_ll_fixed_access(LL_KIND_SYS, p) |
	    (p->fs_write ? LL_WRITE : 0);
	if (sandbox_landlock_rule(rfd, p->workspace[0] != '\0' ?
	    p->workspace : ".", access, handled, e) == -1)
		return -1;
	if (p->program[0] != '\0' && sandbox_landlock_program(rfd,
	    p->program, handled, e) == -1)
		return -1;
	if (p->inet && p->program[0] != '\0' && sandbox_landlock_package(rfd,
	    p->program, handled, e) == -1)
		return -1;
	return sandbox_landlock_rules_read(rfd, p, handled, e);
}

/* The rules on what a child's mount namespace replaces: /proc (fresh with
 * a pid namespace), and /tmp and /dev/shm (private) for read-write. */
static int
sandbox_landlock_rules_own(int rfd, const struct sandbox_policy *p,
    uint64_t handled, struct sandbox_error *e)
{
	if (sandbox_landlock_rule(rfd, "/proc", sandbox_ll_fixed_access(
	    LL_KIND_SYS, p), handled, e) == -1)
		return -1;
	if (p->fs_write && (sandbox_landlock_rule(rfd, "/tmp", LL_READ |
	    LL_WRITE | (p->exec ? LL_FS_EXECUTE : 0), handled, e) == -1 ||
	    sandbox_landlock_rule(rfd, "/dev/shm", LL_READ | LL_WRITE, handled,
	    e) == -1))
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

int
sandbox_landlock_reads(const char *path)
{
	size_t	 i, n;

	for (i = 0; i < SANDBOX_LL_NFIXED; i++) {
		if (sandbox_ll_fixed[i].kind != LL_KIND_SYS)
			continue;
		n = strlen(sandbox_ll_fixed[i].path);
		if (strncmp(path, sandbox_ll_fixed[i].path, n) == 0 &&
		    (path[n] == '/' || path[n] == '\0'))
			return 1;
	}
	return 0;
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
	int	 abi, rfd;

	*abip = 0;
	if ((abi = sandbox_landlock_abi()) < 1)
		return sandbox_missing(e, SANDBOX_LANDLOCK,
		    "Landlock is not available on this kernel (ABI 0)");
	if (maxabi < 1)
		return sandbox_fail(e, SANDBOX_LANDLOCK, EINVAL,
		    "Landlock ABI limit %d (at least 1)", maxabi);
	if (abi > maxabi)
		abi = maxabi;
	if ((rfd = sandbox_landlock_ruleset(p, abi, e)) == -1)
		return -1;
	if (sandbox_landlock_ruleset_own(rfd, p, abi, e) == -1) {
		close(rfd);
		return -1;
	}
	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) == -1) {
		sandbox_fail(e, SANDBOX_NNP, errno, "PR_SET_NO_NEW_PRIVS");
		close(rfd);
		return -1;
	}
	if (sandbox_landlock_restrict(rfd, abi, e) == -1)
		return -1;
	*abip = abi;
	return 0;
}

int
sandbox_landlock_ruleset(const struct sandbox_policy *p, int abi,
    struct sandbox_error *e)
{
	struct sandbox_ll_attr	 attr;
	int			 rfd, saved;

	if (abi < 1 || abi > SANDBOX_LANDLOCK_MAX)
		return sandbox_fail(e, SANDBOX_LANDLOCK, EINVAL,
		    "Landlock ABI %d (1 to %d)", abi, SANDBOX_LANDLOCK_MAX);
	memset(&attr, 0, sizeof(attr));
	attr.handled_access_fs = sandbox_landlock_handled(abi);
	/* A backend's worker (inet) binds and connects on loopback: its
	 * network namespace, which has nothing else, is the wall there. A
	 * hostnet MCP server was granted the host's network. */
	if (abi >= 4 && !p->inet && !p->hostnet)
		attr.handled_access_net = LL_NET_BIND_TCP | LL_NET_CONNECT_TCP;
	if (sandbox_landlock_layers(abi) & SANDBOX_LLSCOPE)
		attr.scoped = LL_SCOPE_ABSTRACT_UNIX | LL_SCOPE_SIGNAL;
	if ((rfd = (int)syscall(SYS_landlock_create_ruleset, &attr,
	    sizeof(attr), 0)) == -1)
		return sandbox_fail(e, SANDBOX_LANDLOCK, errno,
		    "landlock_create_ruleset (ABI %d)", abi);
	if (sandbox_landlock_rules_shared(rfd, p, attr.handled_access_fs,
	    e) == -1) {
		saved = errno;
		close(rfd);
		errno = saved;
		return -1;
	}
	return rfd;
}

int
sandbox_landlock_ruleset_own(int rfd, const struct sandbox_policy *p, int abi,
    struct sandbox_error *e)
{
	return sandbox_landlock_rules_own(rfd, p, sandbox_landlock_handled(abi),
	    e);
}

int
sandbox_landlock_restrict(int rfd, int abi, struct sandbox_error *e)
{
	int	 saved;

	if (syscall(SYS_landlock_restrict_self, rfd, 0) == -1) {
		saved = errno;
		close(rfd);
		return sandbox_fail(e, SANDBOX_LANDLOCK, saved,
		    "landlock_restrict_self (ABI %d, ruleset fd %d)", abi, rfd);
	}
	close(rfd);
	return 0;
}

/*
 * The escape probe: one attempt per case of SANDBOX-TESTS.md, run under
 * `warren sandbox exec` by test_sandbox_escape.c.
 *
 *	probe CASE
 *
 * Exit status: 0 the attempt succeeded (allowed), 10 it was stopped the
 * way the case expects (blocked), 20 something else happened (the line on
 * stderr says what). Like bubblewrap's try-syscall.c, a call that could do
 * harm if it got through is made with a bad pointer or fd, so an allowed
 * call fails harmlessly (EFAULT, EBADF) and a filtered one fails with the
 * filter's EPERM or ENOSYS.
 *
 * Environment: PROBE_VICTIM, a readable file outside the workspace the
 * sandbox must not truncate or move; PROBE_SECRET, a string that must not
 * be found in another process's environment; PROBE_SUID, a set-user-ID
 * copy of this program (root runs only); PROBE_SHMID and PROBE_MQ, a SysV
 * shared memory segment and a POSIX message queue of the host, both open
 * to anyone; PROBE_TMP and PROBE_SHM, files of the host's /tmp and
 * /dev/shm that anyone may read; PROBE_MEM and PROBE_TMPFS, the memory
 * and /tmp limits the suite set for the cases that fill them.
 *
 * The workspace has .git (hooks, config, HEAD), .warren/config, and
 * warren's state (.state/warren/warren.db) and config (.config/warren)
 * directories, which the suite points XDG_STATE_HOME and XDG_CONFIG_HOME
 * at for case 41.
 */
#include <sys/types.h>
#include <sys/file.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/mount.h>
#include <sys/personality.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/shm.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/sysmacros.h>
#include <sys/uio.h>
#include <sys/un.h>
#include <sys/wait.h>

#include <linux/capability.h>

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <glob.h>
#include <locale.h>
#include <mqueue.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define ALLOWED	0
#define BLOCKED	10
#define ODD	20

#ifndef TIOCLINUX
#define TIOCLINUX	0x541C
#endif

static const char	*probe_case = "";

static int	p_listed(const char *, const char *);

static int
odd(const char *what, int err)
{
	fprintf(stderr, "probe %s: %s: unexpected %s\n", probe_case, what,
	    err != 0 ? strerror(err) : "success");
	return ODD;
}

/*
 * A case's child that has not ended in this long is a hang (a broken
 * sandbox flag), said and given up on now, not a wait until the suite's
 * timeout. The slowest child ends in a few seconds (the cpu case's 2 s
 * RLIMIT_CPU, the compile of the toolchain case).
 */
#define PROBE_WAIT_S	60

static void
probe_alarm(int sig)
{
	(void)sig;
}

/* A SIGALRM in PROBE_WAIT_S that interrupts the blocking call it is
 * armed for (EINTR); probe_disarm() after it. */
static void
probe_arm(void)
{
	struct sigaction	sa;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = probe_alarm;	/* no SA_RESTART: the call ends */
	sigemptyset(&sa.sa_mask);
	sigaction(SIGALRM, &sa, NULL);
	alarm(PROBE_WAIT_S);
}

static void
probe_disarm(void)
{
	alarm(0);
}

/* The child what has not ended (or not closed its output) within
 * PROBE_WAIT_S: say so, kill and reap it; ODD. */
static int
probe_hung(pid_t pid, const char *what)
{
	fprintf(stderr, "probe %s: %s (pid %d) still runs after %d s: killed "
	    "(a hang, not a verdict)\n", probe_case, what, (int)pid,
	    PROBE_WAIT_S);
	kill(pid, SIGKILL);
	(void)waitpid(pid, NULL, 0);	/* after SIGKILL: it ends */
	return ODD;
}

/* waitpid(pid) within PROBE_WAIT_S: pid, or -1 with errno; past the
 * deadline -1 with ETIMEDOUT, the child killed, reaped and said
 * (probe_hung). */
static pid_t
probe_wait(pid_t pid, int *status, const char *what)
{
	pid_t	r;
	int	err;

	probe_arm();
	r = waitpid(pid, status, 0);
	err = errno;
	probe_disarm();
	if (r == -1 && err == EINTR) {
		(void)probe_hung(pid, what);
		err = ETIMEDOUT;
	}
	errno = err;
	return r;
}

/* What a failed probe_wait gives: ODD, said once. */
static int
probe_wait_odd(void)
{
	return errno == ETIMEDOUT ? ODD : odd("waitpid", errno);
}

/* A call that returned r with errno: blocked if errno is one of ok[]. */
static int
verdict(const char *what, long r, const int *ok, int nok)
{
	int	 i, err = errno;

	if (r != -1)
		return ALLOWED;
	for (i = 0; i < nok; i++)
		if (err == ok[i])
			return BLOCKED;
	return odd(what, err);
}

static const int denied[] = { EACCES, EPERM, EROFS, EXDEV };
#define DENIED(what, r)	verdict(what, r, denied, 4)
static const int perm[] = { EPERM, ENOSYS };
#define PERM(what, r)	verdict(what, r, perm, 2)
/* A rename or unlink refused: EBUSY for a mount point. */
static const int moved[] = { EACCES, EPERM, EROFS, EXDEV, EBUSY };
#define MOVED(what, r)	verdict(what, r, moved, 5)

/* Fold sub-results: allowed wins, then odd, else blocked. */
static int
fold(int a, int b)
{
	if (a == ALLOWED || b == ALLOWED)
		return ALLOWED;
	if (a == ODD || b == ODD)
		return ODD;
	return BLOCKED;
}

static int
try_open(const char *path, int flags)
{
	int	 fd, rc;

	fd = open(path, flags, 0600);
	rc = DENIED(path, fd);
	if (fd != -1)
		close(fd);
	return rc;
}

static const char *
victim(void)
{
	const char	*v = getenv("PROBE_VICTIM");

	return v != NULL ? v : "/etc/passwd";
}

static int
c_write_outside(void)
{
	char		 path[4096];
	const char	*home = getenv("HOME");
	int		 rc;

	rc = try_open("/etc/warren-probe-x", O_WRONLY | O_CREAT);
	snprintf(path, sizeof(path), "%s/warren-probe-x",
	    home != NULL ? home : "/root");
	return fold(rc, try_open(path, O_WRONLY | O_CREAT));
}

static int
c_truncate(void)
{
	int	 rc;

	rc = try_open(victim(), O_RDONLY | O_TRUNC);
	return fold(rc, DENIED("truncate", truncate(victim(), 0)));
}

static int
c_symlink_out(void)
{
	int	 rc;

	unlink("probe-link");
	if (symlink("/etc/warren-probe-y", "probe-link") == -1)
		return DENIED("symlink", -1);
	rc = try_open("probe-link", O_WRONLY | O_CREAT);
	unlink("probe-link");
	return rc;
}

static int
c_hardlink_in(void)
{
	int	 r;

	r = link(victim(), "probe-hardlink");
	if (r == 0)
		unlink("probe-hardlink");
	return DENIED("link", r);
}

static int
c_rename(void)
{
	int	 fd, rc;

	/* The workspace file exists beforehand (made by the suite). */
	rc = DENIED("rename out", rename("renameme", "/etc/warren-probe-z"));
	if (rc == ALLOWED)
		rename("/etc/warren-probe-z", "renameme");
	rc = fold(rc, DENIED("rename in", rename(victim(), "probe-stolen")));
	if ((fd = open("probe-stolen", O_RDONLY)) != -1) {
		close(fd);
		rename("probe-stolen", victim());
	}
	return rc;
}

static int
c_proc_paths(void)
{
	int	 rc;

	rc = try_open("/proc/self/root/etc/warren-probe-x", O_WRONLY | O_CREAT);
	return fold(rc, try_open("/proc/self/cwd/../../../../../../../../../"
	    "../../../../../../../../../../../../../../../../../../../../../"
	    "etc/warren-probe-x", O_WRONLY | O_CREAT));
}

static int
c_git(void)
{
	int	 rc;

	rc = try_open(".git/hooks/pre-commit", O_WRONLY | O_CREAT);
	rc = fold(rc, try_open(".git/config", O_WRONLY | O_APPEND));
	/* EBUSY: a mount point (the read-only bind) cannot be unlinked. */
	return fold(rc, verdict("unlink .git/config", unlink(".git/config"),
	    (const int[]){ EACCES, EPERM, EROFS, EBUSY }, 4));
}

static int
c_mknod(void)
{
	int	 r;

	r = mknod("probe-null", S_IFCHR | 0666, makedev(1, 3));
	if (r == 0)
		unlink("probe-null");
	return DENIED("mknod", r);
}

static int
c_leaked_fd(void)
{
	char	 p[64];
	int	 fds[] = { 10, 251 }, i, fd;

	for (i = 0; i < 2; i++) {
		if (fcntl(fds[i], F_GETFD) != -1)
			return ALLOWED;
		snprintf(p, sizeof(p), "/proc/self/fd/%d", fds[i]);
		if ((fd = open(p, O_RDONLY | O_DIRECTORY)) != -1) {
			close(fd);
			return ALLOWED;
		}
	}
	return errno == ENOENT || errno == EBADF ? BLOCKED :
	    odd("leaked fd", errno);
}

/* Rename from to to: ALLOWED (and renamed back) if it worked. */
static int
p_rename(const char *from, const char *to)
{
	if (rename(from, to) == 0) {
		fprintf(stderr, "probe %s: renamed %s\n", probe_case, from);
		rename(to, from);
		return ALLOWED;
	}
	return MOVED(from, -1);
}

/* 39: .warren is a read-only mount point: no config, no agent file. */
static int
c_warren_dir(void)
{
	int	 rc, r;

	rc = try_open(".warren/config", O_WRONLY | O_APPEND);
	rc = fold(rc, try_open(".warren/explore.md", O_WRONLY | O_CREAT));
	unlink(".warren/explore.md");
	r = mkdir(".warren/agents", 0755);
	if (r == 0)
		rmdir(".warren/agents");
	rc = fold(rc, DENIED("mkdir .warren/agents", r));
	return fold(rc, p_rename(".warren", ".warren.orig"));
}

/*
 * 41: warren's state directory inside the workspace is masked: its
 * database can be neither read nor listed, and no directory on the way
 * to it renamed (a planted copy would be read next); nor is the config
 * directory (it may hold a header with a credential), nor can it be
 * written.
 */
static int
c_state_dir(void)
{
	char	 buf[64];
	int	 fd, rc;

	fd = open(".state/warren/warren.db", O_RDONLY | O_CLOEXEC);
	rc = verdict("read the database", fd,
	    (const int[]){ EACCES, ENOENT }, 2);
	if (fd != -1)
		close(fd);
	rc = fold(rc, p_listed(".state/warren", "warren.db"));
	rc = fold(rc, p_rename(".state/warren", ".state/warren.orig"));
	rc = fold(rc, p_rename(".state", ".state.orig"));
	rc = fold(rc, try_open(".config/warren/config", O_WRONLY | O_APPEND));
	rc = fold(rc, try_open(".config/warren/agents.md", O_WRONLY |
	    O_CREAT));
	unlink(".config/warren/agents.md");
	rc = fold(rc, p_rename(".config", ".config.orig"));
	fd = open(".config/warren/config", O_RDONLY | O_CLOEXEC);
	rc = fold(rc, verdict("read the user's config", fd,
	    (const int[]){ EACCES, ENOENT }, 2));
	if (fd != -1) {
		(void)read(fd, buf, sizeof(buf));
		close(fd);
	}
	return rc;
}

/*
 * 42: .git is a read-only mount point: it cannot be renamed away (and a
 * copy with a hook put in its place), nor anything in it written.
 */
static int
c_git_rename(void)
{
	int	 rc;

	rc = p_rename(".git", ".git.orig");
	rc = fold(rc, try_open(".git/HEAD", O_WRONLY | O_TRUNC));
	rc = fold(rc, try_open(".git/hooks/post-checkout", O_WRONLY |
	    O_CREAT));
	return fold(rc, try_open(".git/fsmonitor", O_WRONLY | O_CREAT));
}

/* 42, a worktree's .git file: read-only, not renamed, not removed. */
static int
c_git_file(void)
{
	char	 buf[128];
	ssize_t	 n;
	int	 fd, rc;

	if ((fd = open(".git", O_RDONLY | O_CLOEXEC)) == -1 ||
	    (n = read(fd, buf, sizeof(buf))) <= 0)
		return odd("read .git", errno);
	close(fd);
	rc = try_open(".git", O_WRONLY | O_APPEND);
	rc = fold(rc, p_rename(".git", ".git.orig"));
	if (unlink(".git") == 0) {
		if ((fd = open(".git", O_WRONLY | O_CREAT, 0644)) != -1) {
			if (write(fd, buf, (size_t)n) != n)
				rc = ODD;
			close(fd);
		}
		return ALLOWED;
	}
	return fold(rc, MOVED("unlink .git", -1));
}

/* 44: the host's password hashes and SSH host keys, as many as exist. */
static int
c_host_secrets(void)
{
	static const char *const files[] = { "/etc/shadow", "/etc/gshadow",
	    "/etc/shadow-", "/etc/gshadow-" };
	struct stat	 st;
	glob_t		 g;
	size_t		 i, n = 0;
	int		 fd, rc = BLOCKED;

	memset(&g, 0, sizeof(g));
	if (glob("/etc/ssh/ssh_host_*_key", 0, NULL, &g) != 0)
		g.gl_pathc = 0;
	for (i = 0; i < 4 + g.gl_pathc; i++) {
		const char *path = i < 4 ? files[i] : g.gl_pathv[i - 4];

		if (lstat(path, &st) == -1 && errno == ENOENT)
			continue;
		n++;
		fd = open(path, O_RDONLY | O_CLOEXEC);
		rc = fold(rc, verdict(path, fd,
		    (const int[]){ EACCES, ENOENT }, 2));
		if (fd != -1)
			close(fd);
		/* Nor made readable: a chmod to the mode it has (harmless
		 * should it pass) must fail on the read-only mask. */
		if (stat(path, &st) == 0)
			rc = fold(rc, DENIED("chmod", chmod(path,
			    st.st_mode & 07777)));
	}
	globfree(&g);
	return n > 0 ? rc : odd("no /etc/shadow, gshadow or host key here",
	    ENOENT);
}

/* The limit the suite set in env var name, in bytes. */
static size_t
p_limit(const char *name)
{
	const char	*v = getenv(name);

	return v != NULL ? (size_t)strtoull(v, NULL, 10) : 0;
}

/*
 * 45: twice the memory limit in memfds of 1 MiB each, every one under
 * RLIMIT_FSIZE: the memory cgroup kills the probe (SIGKILL), seccomp
 * refuses memfd_create in no-exec profiles, and without either it works
 * (the suite expects that, and says why).
 */
static int
c_memfd_limit(void)
{
	static char	 buf[1 << 20];
	size_t		 total, want = 2 * p_limit("PROBE_MEM");
	ssize_t		 r;
	int		 fd;

	if (want == 0)
		return odd("PROBE_MEM", EINVAL);
	memset(buf, 'x', sizeof(buf));
	for (total = 0; total < want; total += sizeof(buf)) {
		if ((fd = (int)syscall(SYS_memfd_create, "probe", 0)) == -1)
			return PERM("memfd_create", -1);
		if ((r = write(fd, buf, sizeof(buf))) != (ssize_t)sizeof(buf)) {
			if (r >= 0)
				errno = ENOMEM;		/* a short write */
			return verdict("write a memfd", -1,
			    (const int[]){ ENOMEM }, 1);
		}
	}
	return ALLOWED;
}

/* 45: twice the private /tmp's size in files of 1 MiB: ENOSPC. */
static int
c_tmpfs_fill(void)
{
	static char	 buf[1 << 20];
	char		 path[64];
	size_t		 total, want = 2 * p_limit("PROBE_TMPFS");
	ssize_t		 r;
	int		 fd, i, n, rc = ALLOWED;

	if (want == 0)
		return odd("PROBE_TMPFS", EINVAL);
	memset(buf, 'x', sizeof(buf));
	for (n = 0, total = 0; total < want; total += sizeof(buf), n++) {
		snprintf(path, sizeof(path), "/tmp/probe-fill-%d", n);
		if ((fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0600)) ==
		    -1) {
			rc = verdict(path, -1, (const int[]){ EACCES, EPERM,
			    ENOSPC }, 3);
			break;
		}
		if ((r = write(fd, buf, sizeof(buf))) != (ssize_t)sizeof(buf)) {
			if (r >= 0)
				errno = ENOSPC;		/* a short write */
			rc = verdict("write /tmp", -1,
			    (const int[]){ ENOSPC }, 1);
			close(fd);
			n++;
			break;
		}
		close(fd);
	}
	for (i = 0; i < n; i++) {
		snprintf(path, sizeof(path), "/tmp/probe-fill-%d", i);
		unlink(path);
	}
	return rc;
}

/* Extra: root without capabilities still owns block devices and sysctls. */
static int
c_rawdisk(void)
{
	char		 path[300];
	struct dirent	*de;
	struct stat	 st;
	DIR		*d;
	int		 fd, rc = BLOCKED, tried = 0;

	if ((d = opendir("/sys/class/block")) == NULL)
		return BLOCKED;
	while ((de = readdir(d)) != NULL) {
		if (de->d_name[0] == '.')
			continue;
		snprintf(path, sizeof(path), "/dev/%s", de->d_name);
		if (stat(path, &st) == -1 && errno != EACCES)
			continue;
		tried++;
		fd = open(path, O_RDONLY);
		rc = fold(rc, verdict(path, fd,
		    (const int[]){ EACCES, EPERM, ENOENT }, 3));
		if (fd != -1)
			close(fd);
	}
	closedir(d);
	return tried ? rc : BLOCKED;
}

static int
c_sysctl(void)
{
	return fold(try_open("/proc/sys/kernel/core_pattern", O_WRONLY),
	    try_open("/proc/sys/vm/drop_caches", O_WRONLY));
}

/*
 * 52: the host's SysV IPC and POSIX message queues. Blocked by seccomp
 * (EPERM) in no-exec profiles, not there (EINVAL, ENOENT) in the IPC
 * namespace of the others.
 */
static int
c_sysv_ipc(void)
{
	const char	*id = getenv("PROBE_SHMID"), *mq = getenv("PROBE_MQ");
	void		*p;
	mqd_t		 q;
	int		 rc;

	if (id == NULL || mq == NULL)
		return odd("PROBE_SHMID, PROBE_MQ", EINVAL);
	p = shmat(atoi(id), NULL, SHM_RDONLY);
	rc = verdict("shmat", p == (void *)-1 ? -1 : 0,
	    (const int[]){ EPERM, EINVAL }, 2);
	if (p != (void *)-1)
		shmdt(p);
	q = mq_open(mq, O_RDONLY);
	rc = fold(rc, verdict("mq_open", q == (mqd_t)-1 ? -1 : 0,
	    (const int[]){ EPERM, ENOENT }, 2));
	if (q != (mqd_t)-1)
		mq_close(q);
	return rc;
}

/* Whether dir lists name: ALLOWED if it does, BLOCKED if not or denied. */
static int
p_listed(const char *dir, const char *name)
{
	struct dirent	*de;
	DIR		*d;

	if ((d = opendir(dir)) == NULL)
		return DENIED(dir, -1);
	while ((de = readdir(d)) != NULL)
		if (strcmp(de->d_name, name) == 0) {
			closedir(d);
			return ALLOWED;
		}
	closedir(d);
	return BLOCKED;
}

/*
 * 53: files of the host's /tmp and /dev/shm, readable by anyone: neither
 * their contents nor their names. Hidden under a private tmpfs (ENOENT)
 * in read-write profiles, outside every Landlock rule (EACCES) in the
 * others.
 */
static int
c_tmp_read(void)
{
	const char	*path[2] = { getenv("PROBE_TMP"), getenv("PROBE_SHM") };
	char		 dir[PATH_MAX], *slash;
	int		 i, fd, rc = BLOCKED;

	for (i = 0; i < 2; i++) {
		if (path[i] == NULL || (size_t)snprintf(dir, sizeof(dir), "%s",
		    path[i]) >= sizeof(dir) || (slash = strrchr(dir, '/')) ==
		    NULL)
			return odd("PROBE_TMP, PROBE_SHM", EINVAL);
		fd = open(path[i], O_RDONLY | O_CLOEXEC);
		rc = fold(rc, verdict(path[i], fd,
		    (const int[]){ EACCES, ENOENT }, 2));
		if (fd != -1)
			close(fd);
		*slash = '\0';
		rc = fold(rc, p_listed(dir, slash + 1));
	}
	return rc;
}

static int
c_chroot(void)
{
	int	 rc;

	rc = PERM("chroot", chroot("/"));
	return fold(rc, PERM("pivot_root", syscall(SYS_pivot_root, ".",
	    ".")));
}

static int
c_mount(void)
{
	int	 rc;

	rc = PERM("mount", mount(NULL, NULL, NULL, 0, NULL));
	rc = fold(rc, PERM("umount2", umount2(NULL, 0)));
	rc = fold(rc, PERM("open_tree", syscall(428, -1, NULL, 0)));
	rc = fold(rc, PERM("move_mount", syscall(429, -1, NULL, -1, NULL,
	    0)));
	rc = fold(rc, PERM("fsopen", syscall(430, NULL, 0)));
	rc = fold(rc, PERM("fsmount", syscall(432, -1, 0, 0)));
	return fold(rc, PERM("mount_setattr", syscall(442, -1, NULL, 0, NULL,
	    0)));
}

static int
c_environ(void)
{
	const char	*secret = getenv("PROBE_SECRET");
	char		 path[300], buf[65536];
	struct dirent	*de;
	ssize_t		 n, i;
	size_t		 slen;
	DIR		*d;
	int		 fd;

	if (secret == NULL || (slen = strlen(secret)) == 0)
		return odd("PROBE_SECRET unset", 0);
	if ((d = opendir("/proc")) == NULL)
		return BLOCKED;
	while ((de = readdir(d)) != NULL) {
		if (de->d_name[0] < '1' || de->d_name[0] > '9' ||
		    atoi(de->d_name) == getpid())
			continue;
		snprintf(path, sizeof(path), "/proc/%s/environ", de->d_name);
		if ((fd = open(path, O_RDONLY)) == -1)
			continue;
		n = read(fd, buf, sizeof(buf));
		close(fd);
		for (i = 0; n > 0 && i + (ssize_t)slen <= n; i++)
			if (memcmp(buf + i, secret, slen) == 0) {
				fprintf(stderr, "probe: secret in %s\n", path);
				closedir(d);
				return ALLOWED;
			}
	}
	closedir(d);
	return BLOCKED;
}

static int
c_ptrace(void)
{
	struct iovec	 l = { NULL, 8 }, r = { (void *)8, 8 };
	char		 path[64];
	pid_t		 pp = getppid();
	int		 rc;

	rc = PERM("ptrace attach", syscall(SYS_ptrace, 16 /* PTRACE_ATTACH */, pp, 0,
	    0));
	rc = fold(rc, PERM("ptrace seize", syscall(SYS_ptrace, 0x4206, pp, 0,
	    0)));
	rc = fold(rc, PERM("process_vm_readv", process_vm_readv(pp, &l, 1,
	    &r, 1, 0)));
	snprintf(path, sizeof(path), "/proc/%d/mem", (int)pp);
	rc = fold(rc, verdict("/proc/ppid/mem", open(path, O_RDONLY),
	    (const int[]){ EACCES, EPERM, ENOENT }, 3));
	return fold(rc, PERM("kcmp", syscall(SYS_kcmp, getpid(), pp, 0, 0,
	    0)));
}

static int
c_kill(void)
{
	int	 rc;

	rc = verdict("kill ppid", kill(getppid(), 0),
	    (const int[]){ EPERM, ESRCH }, 2);
	return fold(rc, verdict("kill -1", kill(-1, 0),
	    (const int[]){ EPERM, ESRCH }, 2));
}

static int
c_keyctl(void)
{
	int	 rc;

	rc = PERM("keyctl", syscall(SYS_keyctl, 0 /* GET_KEYRING_ID */,
	    -3 /* SESSION */, 0));
	rc = fold(rc, PERM("add_key", syscall(SYS_add_key, NULL, NULL, NULL,
	    0, 0)));
	return fold(rc, PERM("request_key", syscall(SYS_request_key, NULL,
	    NULL, NULL, 0)));
}

static int
c_setuid_bin(void)
{
	const char	*suid = getenv("PROBE_SUID");
	char		 buf[4096], *p;
	ssize_t		 n;
	pid_t		 pid;
	int		 fd, status, pfd[2];

	if ((fd = open("/proc/self/status", O_RDONLY)) == -1)
		return odd("/proc/self/status", errno);
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	buf[n > 0 ? n : 0] = '\0';
	if ((p = strstr(buf, "NoNewPrivs:")) == NULL || atoi(p + 11) != 1)
		return ALLOWED;
	if (suid == NULL || suid[0] == '\0')
		return BLOCKED;
	/* The set-user-ID copy prints its euid; it must still be ours. */
	if (pipe(pfd) == -1 || (pid = fork()) == -1)
		return odd("fork", errno);
	if (pid == 0) {
		dup2(pfd[1], 1);
		execl(suid, suid, "euid", (char *)NULL);
		_exit(errno == EACCES || errno == EPERM ? BLOCKED : ODD);
	}
	close(pfd[1]);
	probe_arm();
	n = read(pfd[0], buf, sizeof(buf) - 1);
	probe_disarm();
	if (n == -1 && errno == EINTR)
		return probe_hung(pid, "the set-user-ID copy");
	buf[n > 0 ? n : 0] = '\0';
	if (probe_wait(pid, &status, "the set-user-ID copy") == -1)
		return probe_wait_odd();
	if (n <= 0)
		return WIFEXITED(status) && WEXITSTATUS(status) == BLOCKED ?
		    BLOCKED : odd("setuid copy", 0);
	return (uid_t)atoi(buf) == geteuid() ? BLOCKED : ALLOWED;
}

static int
c_privs(void)
{
	struct __user_cap_header_struct	 h = { _LINUX_CAPABILITY_VERSION_3, 0 };
	struct __user_cap_data_struct	 d[2];
	uid_t				 to = getuid() == 0 ? 1 : 0;
	int				 rc;

	/* EINVAL: in a user namespace uid 0 is not even mapped. */
	rc = verdict("setresuid", setresuid(to, to, to),
	    (const int[]){ EPERM, EINVAL }, 2);
	memset(d, 0, sizeof(d));
	d[0].effective = d[0].permitted = 1U << CAP_SYS_ADMIN;
	rc = fold(rc, PERM("capset", syscall(SYS_capset, &h, d)));
	rc = fold(rc, PERM("ambient raise", prctl(PR_CAP_AMBIENT,
	    PR_CAP_AMBIENT_RAISE, CAP_NET_RAW, 0, 0)));
	rc = fold(rc, PERM("PR_SET_MM", prctl(PR_SET_MM, PR_SET_MM_START_CODE,
	    0, 0, 0)));
	rc = fold(rc, PERM("PR_SET_DUMPABLE", prctl(PR_SET_DUMPABLE, 1, 0,
	    0, 0)));
	/* The kernel reads the option as an int: high bits must not help. */
	return fold(rc, PERM("PR_SET_DUMPABLE high bits", syscall(SYS_prctl,
	    (1UL << 32) | PR_SET_DUMPABLE, 1UL, 0UL, 0UL, 0UL)));
}

static int
c_personality(void)
{
	int	 rc;

	rc = PERM("personality", personality(READ_IMPLIES_EXEC |
	    ADDR_NO_RANDOMIZE));
	/* Bit 31 and the high word must not dodge the rule either. */
	rc = fold(rc, PERM("personality bit 31", syscall(SYS_personality,
	    0x80000000UL | READ_IMPLIES_EXEC)));
	return fold(rc, PERM("personality high bits", syscall(SYS_personality,
	    (1UL << 32) | ADDR_NO_RANDOMIZE)));
}

static int
c_core(void)
{
	struct rlimit	 rl = { RLIM_INFINITY, RLIM_INFINITY };
	pid_t		 pid;
	int		 status;

	if ((pid = fork()) == -1)
		return odd("fork", errno);
	if (pid == 0) {
		setrlimit(RLIMIT_CORE, &rl);
		prctl(PR_SET_DUMPABLE, 1, 0, 0, 0);
		abort();
	}
	if (probe_wait(pid, &status, "the aborting child") == -1)
		return probe_wait_odd();
	return WIFSIGNALED(status) && WCOREDUMP(status) ? ALLOWED : BLOCKED;
}

static int
c_namespaces(void)
{
	int	 rc;

	rc = PERM("unshare", unshare(CLONE_NEWUSER));
	rc = fold(rc, PERM("clone newuser", syscall(SYS_clone, CLONE_NEWUSER |
	    CLONE_NEWNET | SIGCHLD, (void *)8, NULL, NULL, 0)));
	return fold(rc, PERM("setns", setns(-1, 0)));
}

static int
c_clone3(void)
{
	long	 r;

	r = syscall(435 /* clone3 */, NULL, 0);
	if (r == -1 && errno == ENOSYS)
		return BLOCKED;
	return r == -1 ? ALLOWED : odd("clone3", 0);
}

static int
c_io_uring(void)
{
	return PERM("io_uring_setup", syscall(425, 1, NULL));
}

static int
c_bpf(void)
{
	int	 rc;

	rc = PERM("bpf", syscall(SYS_bpf, 0, NULL, 0));
	rc = fold(rc, PERM("perf_event_open", syscall(SYS_perf_event_open,
	    NULL, 0, -1, -1, 0)));
	return fold(rc, PERM("userfaultfd", syscall(SYS_userfaultfd, 0)));
}

static int
c_int80(void)
{
	long	 r;

	/* i386 getpid (20) through the 32-bit entry: the filter must kill. */
	__asm__ volatile ("int $0x80" : "=a"(r) : "a"(20L) : "memory");
	(void)r;
	return ALLOWED;
}

static int
c_x32(void)
{
	syscall(0x40000000L | SYS_getpid);
	return ALLOWED;
}

static int
c_tiocsti(void)
{
	char	 ch = 'x';
	int	 rc;

	rc = PERM("TIOCSTI", ioctl(-1, TIOCSTI, &ch));
	rc = fold(rc, PERM("TIOCSTI high bits", syscall(SYS_ioctl, -1,
	    0x100000000UL | TIOCSTI, &ch)));
	return fold(rc, PERM("TIOCLINUX", ioctl(-1, TIOCLINUX, &ch)));
}

static int
c_socket(void)
{
	static const int fam[] = { AF_INET, AF_INET6, AF_NETLINK, AF_PACKET,
	    AF_VSOCK };
	size_t		 i;
	int		 fd, rc = BLOCKED;

	for (i = 0; i < sizeof(fam) / sizeof(fam[0]); i++) {
		fd = socket(fam[i], SOCK_DGRAM, 0);
		rc = fold(rc, verdict("socket", fd,
		    (const int[]){ EPERM, EAFNOSUPPORT, EACCES }, 3));
		if (fd != -1)
			close(fd);
	}
	return rc;
}

static int
c_unix(const char *path, int abstract)
{
	struct sockaddr_un	 sun;
	socklen_t		 len;
	int			 fd, r;

	if ((fd = socket(AF_UNIX, SOCK_STREAM, 0)) == -1)
		return PERM("socket(AF_UNIX)", -1);
	memset(&sun, 0, sizeof(sun));
	sun.sun_family = AF_UNIX;
	if (abstract) {
		memcpy(sun.sun_path + 1, path, strlen(path));
		len = (socklen_t)(offsetof(struct sockaddr_un, sun_path) + 1 +
		    strlen(path));
	} else {
		strncpy(sun.sun_path, path, sizeof(sun.sun_path) - 1);
		len = sizeof(sun);
	}
	r = connect(fd, (struct sockaddr *)&sun, len);
	close(fd);
	return verdict("connect", r, (const int[]){ EPERM, EACCES }, 2);
}

static int
c_memfd_exec(void)
{
	char	 buf[65536], *argv[] = { "true", NULL }, *envp[] = { NULL };
	ssize_t	 n;
	int	 mfd, src;

	if ((mfd = (int)syscall(SYS_memfd_create, "probe", 0)) == -1)
		return PERM("memfd_create", -1);
	if ((src = open("/bin/true", O_RDONLY)) == -1)
		return odd("open /bin/true", errno);
	while ((n = read(src, buf, sizeof(buf))) > 0)
		if (write(mfd, buf, (size_t)n) != n)
			return odd("write memfd", errno);
	close(src);
	syscall(SYS_execveat, mfd, "", argv, envp, AT_EMPTY_PATH);
	return DENIED("execveat", -1);
}

static int
c_forkbomb(void)
{
	static pid_t	 pids[4096];
	int		 n, i, err = 0;

	for (n = 0; n < 4096; n++) {
		if ((pids[n] = fork()) == -1) {
			err = errno;
			break;
		}
		if (pids[n] == 0) {
			pause();
			_exit(0);
		}
	}
	for (i = 0; i < n; i++)
		kill(pids[i], SIGKILL);
	for (i = 0; i < n; i++)
		waitpid(pids[i], NULL, 0);	/* after SIGKILL: they end */
	if (n == 4096)
		return ALLOWED;
	return err == EAGAIN ? BLOCKED : odd("fork", err);
}

static int
c_membomb(void)
{
	char	 buf[1 << 16];
	size_t	 total = 0, chunk = 64UL << 20;
	int	 fd;

	/* Address space: an 8 GiB reservation must fail. */
	while (total < (8UL << 30)) {
		if (malloc(chunk) == NULL)
			break;
		total += chunk;
	}
	if (total >= (8UL << 30))
		return ALLOWED;
	/* /dev/shm: a private, size-bounded tmpfs (or not writable). */
	signal(SIGXFSZ, SIG_IGN);
	if ((fd = open("/dev/shm/probe-fill", O_WRONLY | O_CREAT | O_TRUNC,
	    0600)) == -1)
		return BLOCKED;
	memset(buf, 'x', sizeof(buf));
	for (total = 0; total < (1UL << 30); total += sizeof(buf))
		if (write(fd, buf, sizeof(buf)) != (ssize_t)sizeof(buf))
			break;
	close(fd);
	unlink("/dev/shm/probe-fill");
	return total >= (1UL << 30) ? ALLOWED : BLOCKED;
}

static int
c_cpu(void)
{
	struct rlimit	 rl;
	pid_t		 pid;
	int		 status;

	if (getrlimit(RLIMIT_CPU, &rl) == -1)
		return odd("getrlimit", errno);
	if (rl.rlim_max == RLIM_INFINITY)
		return ALLOWED;
	rl.rlim_max = RLIM_INFINITY;
	if (setrlimit(RLIMIT_CPU, &rl) == 0)
		return ALLOWED;
	if ((pid = fork()) == -1)
		return odd("fork", errno);
	if (pid == 0)
		for (;;)
			__asm__ volatile ("" ::: "memory");
	if (probe_wait(pid, &status, "the spinning child (RLIMIT_CPU)") == -1)
		return probe_wait_odd();
	return WIFSIGNALED(status) && (WTERMSIG(status) == SIGXCPU ||
	    WTERMSIG(status) == SIGKILL) ? BLOCKED : odd("cpu spin", 0);
}

/* Case 33: ignore SIGTERM, leave a setsid grandchild holding a lock on
 * "lockfile"; the suite checks that the lock is free once warren returns. */
static int
c_timeout(void)
{
	pid_t	 pid;
	int	 fd;

	signal(SIGTERM, SIG_IGN);
	if ((pid = fork()) == 0) {
		setsid();
		if (fork() == 0) {
			if ((fd = open("lockfile", O_RDONLY)) != -1)
				flock(fd, LOCK_EX);
			signal(SIGTERM, SIG_IGN);
			for (;;)
				pause();
		}
		_exit(0);
	}
	/* It ends as soon as it has forked the grandchild. */
	if (probe_wait(pid, NULL, "the child that leaves the grandchild") ==
	    -1)
		return probe_wait_odd();
	for (;;)
		pause();
}

static int
c_bigfile(void)
{
	off_t	 off = 4L << 20;
	int	 fd, r;

	signal(SIGXFSZ, SIG_IGN);
	if ((fd = open("probe-big", O_WRONLY | O_CREAT | O_TRUNC, 0600)) == -1)
		return DENIED("create", -1);
	r = pwrite(fd, "x", 1, off) == 1 ? 0 : -1;
	close(fd);
	unlink("probe-big");
	return verdict("pwrite past RLIMIT_FSIZE", r,
	    (const int[]){ EFBIG }, 1);
}

/*
 * fallocate takes blocks faster than the disk limit's watch, and with
 * KEEP_SIZE past RLIMIT_FSIZE: read-write profiles get EOPNOTSUPP
 * (seccomp), read-only ones cannot make the file at all.
 */
static int
c_fallocate(void)
{
	int	 fd, rc;

	if ((fd = open("probe-falloc", O_WRONLY | O_CREAT | O_TRUNC,
	    0600)) == -1)
		return DENIED("create", -1);
	rc = verdict("fallocate 1 MiB", fallocate(fd, 0, 0, 1 << 20),
	    (const int[]){ EOPNOTSUPP }, 1);
	rc = fold(rc, verdict("fallocate KEEP_SIZE 1 MiB", fallocate(fd,
	    FALLOC_FL_KEEP_SIZE, 0, 1 << 20), (const int[]){ EOPNOTSUPP }, 1));
	close(fd);
	unlink("probe-falloc");
	return rc;
}

static int
c_fds(void)
{
	int	 n, fd;

	for (n = 0; n < 100000; n++)
		if ((fd = open("/dev/null", O_RDONLY)) == -1)
			return errno == EMFILE ? BLOCKED : odd("open", errno);
	return ALLOWED;
}

static int
c_exec(void)
{
	execl("/bin/true", "true", (char *)NULL);
	return DENIED("execve /bin/true", -1);
}

static int
c_ro_write(void)
{
	int	 rc;

	rc = try_open("probe-new", O_WRONLY | O_CREAT);
	unlink("probe-new");
	rc = fold(rc, try_open("renameme", O_RDWR));
	rc = fold(rc, DENIED("mkdir", mkdir("probe-dir", 0700)));
	rmdir("probe-dir");
	return fold(rc, DENIED("chmod", chmod("renameme", 0600)));
}

/* Positive: read, list, glob, grep the workspace. */
static int
p_explore(void)
{
	char	 buf[256];
	glob_t	 g;
	DIR	*d;
	FILE	*f;
	int	 found = 0;

	if ((f = fopen("notes.txt", "r")) == NULL)
		return odd("read notes.txt", errno);
	while (fgets(buf, sizeof(buf), f) != NULL)
		if (strstr(buf, "needle") != NULL)
			found = 1;
	fclose(f);
	if (!found)
		return odd("grep needle", 0);
	if ((d = opendir(".")) == NULL)
		return odd("opendir", errno);
	closedir(d);
	if (glob("*.txt", 0, NULL, &g) != 0 || g.gl_pathc < 1)
		return odd("glob", errno);
	globfree(&g);
	return ALLOWED;
}

static int
p_run(const char *cmd)
{
	pid_t	 pid;
	int	 status;

	if ((pid = fork()) == -1)
		return odd("fork", errno);
	if (pid == 0) {
		execl("/bin/sh", "sh", "-c", cmd, (char *)NULL);
		_exit(errno == EACCES || errno == EPERM ? BLOCKED : ODD);
	}
	if (probe_wait(pid, &status, cmd) == -1)
		return probe_wait_odd();
	if (WIFEXITED(status) && WEXITSTATUS(status) == 0)
		return ALLOWED;
	if (WIFEXITED(status) && WEXITSTATUS(status) == BLOCKED)
		return BLOCKED;
	fprintf(stderr, "probe: '%s' exited with %d\n", cmd, status);
	return ODD;
}

/* Positive: sh -c, make and a compiler in the workspace. */
static int
p_test(void)
{
	int	 rc, id;

	if ((rc = p_run("echo ok >/dev/null")) != ALLOWED)
		return rc;
	/* Programs keep SysV IPC, in their own namespace. */
	if ((id = shmget(IPC_PRIVATE, 4096, IPC_CREAT | 0600)) == -1)
		return odd("shmget", errno);
	if (shmctl(id, IPC_RMID, NULL) == -1)
		return odd("shmctl", errno);
	return p_run("printf 'int main(void){return 0;}\\n' > t.c && "
	    "printf 'all:\\n\\tcc -o t t.c && ./t\\n' > Makefile && "
	    "make -s >/dev/null && rm -f t t.c Makefile");
}

/* Positive: write, edit, remove a file in the workspace. */
static int
p_general(void)
{
	FILE	*f;
	int	 err;

	if ((f = fopen("probe-edit.txt", "w")) == NULL) {
		/* A positive case: say why, should it ever be refused. */
		err = errno;
		fprintf(stderr, "probe general: create probe-edit.txt: %s\n",
		    strerror(err));
		errno = err;
		return DENIED("create", -1);
	}
	fputs("one\n", f);
	fclose(f);
	if ((f = fopen("probe-edit.txt", "a")) == NULL)
		return odd("append", errno);
	fputs("two\n", f);
	fclose(f);
	if (rename("probe-edit.txt", "probe-edited.txt") == -1 ||
	    unlink("probe-edited.txt") == -1)
		return odd("rename/unlink", errno);
	return ALLOWED;
}

static void *
p_thread(void *arg)
{
	return arg;
}

/* Positive, every profile: memory, threads, shared libraries, locale,
 * stdout and stderr. */
/* 0 if path opens for reading or does not exist here, else -1. */
static int
p_readable(const char *path)
{
	int	 fd;

	if ((fd = open(path, O_RDONLY | O_CLOEXEC)) == -1)
		return errno == ENOENT ? 0 : -1;
	close(fd);
	return 0;
}

static int
p_basics(void)
{
	pthread_t	 t;
	void		*ret = NULL;
	char		*m;

	if ((m = malloc(64 << 20)) == NULL)
		return odd("malloc", errno);
	memset(m, 1, 64 << 20);
	free(m);
	/* p_thread returns at once: the join is bounded by it. */
	if (pthread_create(&t, NULL, p_thread, (void *)1) != 0 ||
	    pthread_join(t, &ret) != 0 || ret != (void *)1)
		return odd("threads", errno);
	if (access("/usr/lib/x86_64-linux-gnu/libc.so.6", R_OK) == -1 &&
	    access("/lib64/ld-linux-x86-64.so.2", R_OK) == -1)
		return odd("shared libraries", errno);
	/* Through merged /usr's symlinks, whose own Landlock rules the
	 * spawner drops as covered by /usr's (access() is not checked). */
	if (p_readable("/bin/sh") == -1 ||
	    p_readable("/lib64/ld-linux-x86-64.so.2") == -1)
		return odd("/bin or /lib64", errno);
	if (setlocale(LC_ALL, "C.UTF-8") == NULL)
		return odd("locale C.UTF-8", errno);
	if (printf("probe stdout\n") < 0 || fflush(stdout) != 0 ||
	    fprintf(stderr, "probe stderr\n") < 0)
		return odd("stdio", errno);
	return ALLOWED;
}

static const struct {
	const char	*name;
	int		(*fn)(void);
} probes[] = {
	{ "write-outside", c_write_outside },
	{ "truncate", c_truncate },
	{ "symlink-out", c_symlink_out },
	{ "hardlink-in", c_hardlink_in },
	{ "rename", c_rename },
	{ "proc-paths", c_proc_paths },
	{ "git-carveout", c_git },
	{ "mknod", c_mknod },
	{ "leaked-fd", c_leaked_fd },
	{ "chroot", c_chroot },
	{ "mount", c_mount },
	{ "environ", c_environ },
	{ "ptrace", c_ptrace },
	{ "kill", c_kill },
	{ "keyctl", c_keyctl },
	{ "setuid-bin", c_setuid_bin },
	{ "privs", c_privs },
	{ "personality", c_personality },
	{ "core", c_core },
	{ "namespaces", c_namespaces },
	{ "clone3", c_clone3 },
	{ "io-uring", c_io_uring },
	{ "bpf", c_bpf },
	{ "int80", c_int80 },
	{ "x32", c_x32 },
	{ "tiocsti", c_tiocsti },
	{ "socket", c_socket },
	{ "memfd-exec", c_memfd_exec },
	{ "forkbomb", c_forkbomb },
	{ "membomb", c_membomb },
	{ "cpu", c_cpu },
	{ "timeout", c_timeout },
	{ "bigfile", c_bigfile },
	{ "fallocate", c_fallocate },
	{ "fds", c_fds },
	{ "exec", c_exec },
	{ "ro-write", c_ro_write },
	{ "warren-dir", c_warren_dir },
	{ "state-dir", c_state_dir },
	{ "git-rename", c_git_rename },
	{ "git-file", c_git_file },
	{ "host-secrets", c_host_secrets },
	{ "memfd-limit", c_memfd_limit },
	{ "tmpfs-fill", c_tmpfs_fill },
	{ "rawdisk", c_rawdisk },
	{ "sysctl", c_sysctl },
	{ "sysv-ipc", c_sysv_ipc },
	{ "tmp-read", c_tmp_read },
	{ "explore", p_explore },
	{ "test", p_test },
	{ "general", p_general },
	{ "basics", p_basics },
};

static int
c_unix_abstract(void)
{
	return c_unix("warren-probe-abstract", 1);
}

static int
c_unix_path(void)
{
	const char	*p = getenv("PROBE_UNIX");

	return c_unix(p != NULL ? p : "/run/warren-probe.sock", 0);
}

int
main(int argc, char **argv)
{
	size_t	 i;

	if (argc == 2 && strcmp(argv[1], "euid") == 0) {
		printf("%u\n", (unsigned)geteuid());
		return 0;
	}
	if (argc != 2) {
		fprintf(stderr, "usage: probe CASE\n");
		return ODD;
	}
	probe_case = argv[1];
	if (strcmp(argv[1], "unix-abstract") == 0)
		return c_unix_abstract();
	if (strcmp(argv[1], "unix-path") == 0)
		return c_unix_path();
	for (i = 0; i < sizeof(probes) / sizeof(probes[0]); i++)
		if (strcmp(argv[1], probes[i].name) == 0)
			return probes[i].fn();
	fprintf(stderr, "probe: unknown case '%s'\n", argv[1]);
	return ODD;
}

/*
 * The escape suite: every case of SANDBOX-TESTS.md, as the probe program
 * run through `warren sandbox exec` under every profile, with the outcome
 * each profile must give on this machine in this mode (root or not). It
 * prints a table, case x profile, and fails on any cell that differs.
 *
 * Limits are lowered with --rlimit so the bombs end quickly (cpu 2 s,
 * fsize 1 MiB, nproc 64; memory 64 MiB and /tmp 16 MiB for the cases
 * that fill them). Runs as root and as an unprivileged user.
 *
 * Numbers are SANDBOX-TESTS.md's: 1-38 what the sandbox must stop, 39-49
 * what crosses back from the workspace to the host; 50 and up are this
 * suite's own additions.
 */
#include <sys/types.h>
#include <sys/file.h>
#include <sys/shm.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>

#include <errno.h>
#include <fcntl.h>
#include <mqueue.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "agent/profile.h"
#include "sandbox/sandbox.h"
#include "tests/test_wait.h"

#define P_ALLOWED	0
#define P_BLOCKED	10
#define P_KILLED	(128 + SIGSYS)
#define P_TIMEOUT	124
#define P_OOM		(128 + SIGKILL)	/* the memory cgroup's OOM kill */
#define HANG_GUARD_S	120
#define MEM_LIMIT	(64UL << 20)	/* --rlimit mem= of the memory cases */
#define TMPFS_LIMIT	(16UL << 20)	/* --rlimit tmpfs= of case 45 */

enum expect {
	ALL,		/* blocked in every profile */
	NOEXEC,		/* blocked without exec, allowed with */
	RO,		/* blocked read-only, allowed read-write */
	POS,		/* allowed everywhere */
	KILL,		/* the process is killed (SIGSYS) */
	TIMEOUT,	/* killed at --timeout, nothing survives */
	MEMORY,		/* killed by the memory cgroup, or no memfd at all */
};

/* What a case needs besides the common flags. */
#define C_XDG		0x1	/* warren's state and config dirs inside ws */
#define C_GITFILE	0x2	/* a workspace whose .git is a file */
#define C_MEM		0x4	/* --rlimit mem=MEM_LIMIT */
#define C_TMPFS		0x8	/* --rlimit tmpfs=TMPFS_LIMIT */

static const struct {
	int		 num;
	const char	*name;
	enum expect	 expect;
	int		 flags;
} cases[] = {
	{ 1, "write-outside", ALL, 0 },
	{ 2, "truncate", ALL, 0 },
	{ 3, "symlink-out", ALL, 0 },
	{ 4, "hardlink-in", ALL, 0 },
	{ 5, "rename", ALL, 0 },
	{ 6, "proc-paths", ALL, 0 },
	{ 7, "git-carveout", ALL, 0 },
	{ 8, "mknod", ALL, 0 },
	{ 9, "leaked-fd", ALL, 0 },
	{ 10, "chroot", ALL, 0 },
	{ 11, "mount", ALL, 0 },
	{ 12, "environ", ALL, 0 },
	{ 13, "ptrace", ALL, 0 },
	{ 14, "kill", ALL, 0 },
	{ 15, "keyctl", ALL, 0 },
	{ 16, "setuid-bin", ALL, 0 },
	{ 17, "privs", ALL, 0 },
	{ 18, "personality", ALL, 0 },
	{ 19, "core", ALL, 0 },
	{ 20, "namespaces", ALL, 0 },
	{ 21, "clone3", ALL, 0 },
	{ 22, "io-uring", ALL, 0 },
	{ 23, "bpf", ALL, 0 },
	{ 24, "int80", KILL, 0 },
	{ 24, "x32", KILL, 0 },
	{ 25, "tiocsti", ALL, 0 },
	{ 26, "socket", ALL, 0 },
	{ 27, "unix-abstract", ALL, 0 },
	{ 28, "unix-path", ALL, 0 },
	{ 29, "memfd-exec", NOEXEC, 0 },
	{ 30, "forkbomb", ALL, 0 },
	{ 31, "membomb", ALL, 0 },
	{ 32, "cpu", ALL, 0 },
	{ 33, "timeout", TIMEOUT, 0 },
	{ 34, "bigfile", ALL, 0 },
	{ 35, "fds", ALL, 0 },
	{ 37, "exec", NOEXEC, 0 },
	{ 38, "ro-write", RO, 0 },
	{ 39, "warren-dir", ALL, 0 },
	{ 41, "state-dir", ALL, C_XDG },
	{ 42, "git-rename", ALL, 0 },
	{ 42, "git-file", ALL, C_GITFILE },
	{ 44, "host-secrets", ALL, 0 },
	{ 45, "memfd-limit", MEMORY, C_MEM },
	{ 45, "tmpfs-fill", ALL, C_TMPFS },
	{ 48, "fallocate", ALL, 0 },
	{ 50, "rawdisk", ALL, 0 },
	{ 51, "sysctl", ALL, 0 },
	{ 52, "sysv-ipc", ALL, 0 },
	{ 53, "tmp-read", ALL, 0 },
	{ 0, "explore", POS, 0 },
	{ 0, "test", NOEXEC, 0 },
	{ 0, "general", RO, 0 },
	{ 0, "basics", POS, 0 },
};
#define NCASES (sizeof(cases) / sizeof(cases[0]))

/*
 * The profiles: every built-in that runs tools in a worker, with its
 * fs_write and exec as the one profile table (agent/profile.c) derives
 * them from its tools; filled by profiles_load().
 */
#define NPROFILES	8
static const struct profile	*profiles[NPROFILES];
static size_t			 nprofiles;

static void
profiles_load(void)
{
	const struct profile	*b;
	size_t			 i;

	for (i = 0; (b = profile_builtin_at(i)) != NULL; i++)
		if (profile_in_worker(b)) {
			assert_true(nprofiles < NPROFILES);
			profiles[nprofiles++] = b;
		}
	assert_true(nprofiles > 0);
}

struct suite {
	char			 base[PATH_MAX];
	char			 victim[PATH_MAX];
	char			 suid[PATH_MAX];
	char			 sock[PATH_MAX];
	char			 secret[64];
	const char		*warren;
	const char		*probe;
	struct sandbox_caps	 caps;
	int			 weaker;	/* pass --allow-weaker-sandbox */
	int			 int80_bare;	/* the probe's status unsandboxed */
	int			 lsock, asock;
	int			 shmid;		/* the host's, mode 0666 */
	char			 mq[64];	/* the host's, mode 0666 */
	char			 tmp[2][64];	/* in /tmp, /dev/shm: 0644 */
};

static struct suite	 S;
static FILE		*table;	/* a copy of the table, for CI logs */

/* printf to stdout and to the table file. */
static void __attribute__((format(printf, 1, 2)))
out(const char *fmt, ...)
{
	va_list	 ap;

	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	if (table != NULL) {
		va_start(ap, fmt);
		vfprintf(table, fmt, ap);
		va_end(ap);
	}
}

static void
write_file(const char *dir, const char *name, const char *text)
{
	char	 path[PATH_MAX];
	FILE	*f;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	f = fopen(path, "w");
	assert_non_null(f);
	fputs(text, f);
	fclose(f);
}

static void
make_dir(const char *ws, const char *name)
{
	char	 path[PATH_MAX];

	snprintf(path, sizeof(path), "%s/%s", ws, name);
	assert_int_equal(mkdir(path, 0755), 0);
}

/* A workspace with .git, .warren and, inside it, warren's state and
 * config directories for case 41 (the suite points XDG_* there). */
static void
make_workspace(const char *ws)
{
	assert_int_equal(mkdir(ws, 0755), 0);
	write_file(ws, "notes.txt", "a line with the needle in it\n");
	write_file(ws, "renameme", "workspace file\n");
	write_file(ws, "lockfile", "");
	make_dir(ws, ".git");
	make_dir(ws, ".git/hooks");
	write_file(ws, ".git/config", "[core]\n");
	write_file(ws, ".git/HEAD", "ref: refs/heads/main\n");
	make_dir(ws, ".warren");
	write_file(ws, ".warren/config", "max_agents = 4\n");
	make_dir(ws, ".state");
	make_dir(ws, ".state/warren");
	write_file(ws, ".state/warren/warren.db", "every run's database\n");
	make_dir(ws, ".config");
	make_dir(ws, ".config/warren");
	write_file(ws, ".config/warren/config", "model = m\n");
}

/* A workspace whose .git is a file, as a git worktree's is. */
static void
make_workspace_gitfile(const char *ws)
{
	assert_int_equal(mkdir(ws, 0755), 0);
	write_file(ws, "lockfile", "");
	write_file(ws, ".git", "gitdir: /nonexistent/.git/worktrees/w\n");
}

static int
listen_unix(const char *path, int abstract)
{
	struct sockaddr_un	 sun;
	socklen_t		 len;
	int			 fd;

	if ((fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0)) == -1)
		return -1;
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
	if (bind(fd, (struct sockaddr *)&sun, len) == -1 ||
	    listen(fd, 4) == -1) {
		close(fd);
		return -1;
	}
	return fd;
}

static int
copy_file(const char *from, const char *to, mode_t mode)
{
	char	 buf[65536];
	ssize_t	 n;
	int	 in, out;

	if ((in = open(from, O_RDONLY)) == -1)
		return -1;
	if ((out = open(to, O_WRONLY | O_CREAT | O_TRUNC, mode)) == -1) {
		close(in);
		return -1;
	}
	while ((n = read(in, buf, sizeof(buf))) > 0)
		if (write(out, buf, (size_t)n) != n)
			break;
	close(in);
	close(out);
	return n == 0 ? 0 : -1;
}

/* The probe with no sandbox at all: its exit code, 128 + signal. */
static int
run_bare(const char *name)
{
	pid_t	 pid;
	int	 status, fd;
	char	 what[128];

	fflush(NULL);
	if ((pid = fork()) == -1)
		return -1;
	if (pid == 0) {
		if ((fd = open("/dev/null", O_WRONLY)) != -1)
			dup2(fd, 2);
		execl(S.probe, S.probe, name, (char *)NULL);
		_exit(98);
	}
	/* A case whose call got through and blocks is a failure, said. */
	snprintf(what, sizeof(what), "the escape probe of case %s", name);
	if ((status = test_waitpid(pid, 60, what)) == -1)
		return -1;
	return WIFEXITED(status) ? WEXITSTATUS(status) :
	    128 + WTERMSIG(status);
}

static int
suite_setup(void **state)
{
	const char	*bdir;
	char		 ws[PATH_MAX + 32], shmid[16], num[32];
	mqd_t		 mq;
	size_t		 i;

	(void)state;
	memset(&S, 0, sizeof(S));
	S.shmid = -1;
	S.warren = getenv("WARREN_BIN");
	S.probe = SANDBOX_PROBE;
	bdir = getenv("WARREN_BUILD_DIR");
	assert_non_null(S.warren);
	assert_non_null(bdir);
	sandbox_caps_probe(&S.caps, 1);
	profiles_load();
	snprintf(S.base, sizeof(S.base), "%s/tests/sandbox/run-%ld", bdir,
	    (long)getpid());
	assert_int_equal(mkdir(S.base, 0755), 0);
	for (i = 0; i < nprofiles; i++) {
		snprintf(ws, sizeof(ws), "%s/ws-%s", S.base, profiles[i]->name);
		make_workspace(ws);
		snprintf(ws, sizeof(ws), "%s/ws-%s-gitfile", S.base,
		    profiles[i]->name);
		make_workspace_gitfile(ws);
	}
	snprintf(S.secret, sizeof(S.secret), "warren-secret-%08x",
	    (unsigned)arc4random());
	setenv("PROBE_SECRET", S.secret, 1);
	if (geteuid() == 0) {
		/* A file only Landlock keeps a capless root from writing. */
		snprintf(S.victim, sizeof(S.victim),
		    "/etc/warren-probe-victim-%ld", (long)getpid());
		write_file("/", S.victim + 1, "intact\n");
		snprintf(S.suid, sizeof(S.suid), "%s/probe-suid", S.base);
		assert_int_equal(copy_file(S.probe, S.suid, 0755), 0);
		assert_int_equal(chown(S.suid, 65534, 65534), 0);
		assert_int_equal(chmod(S.suid, 04755), 0);
		setenv("PROBE_SUID", S.suid, 1);
	} else
		strlcpy(S.victim, "/etc/passwd", sizeof(S.victim));
	setenv("PROBE_VICTIM", S.victim, 1);
	snprintf(S.sock, sizeof(S.sock), "%s/outside.sock", S.base);
	S.lsock = listen_unix(S.sock, 0);
	S.asock = listen_unix("warren-probe-abstract", 1);
	setenv("PROBE_UNIX", S.sock, 1);
	/* IPC objects of the host, open to anyone (case 41). */
	S.shmid = shmget(IPC_PRIVATE, 4096, IPC_CREAT | 0666);
	assert_int_not_equal(S.shmid, -1);
	snprintf(shmid, sizeof(shmid), "%d", S.shmid);
	setenv("PROBE_SHMID", shmid, 1);
	snprintf(S.mq, sizeof(S.mq), "/warren-probe-%ld", (long)getpid());
	mq = mq_open(S.mq, O_RDONLY | O_CREAT | O_EXCL, 0666, NULL);
	assert_int_not_equal(mq, (mqd_t)-1);
	mq_close(mq);
	setenv("PROBE_MQ", S.mq, 1);
	/* Files of the host's /tmp and /dev/shm, open to anyone (42). */
	for (i = 0; i < 2; i++) {
		snprintf(S.tmp[i], sizeof(S.tmp[i]), "%s/warren-probe-%ld",
		    i == 0 ? "/tmp" : "/dev/shm", (long)getpid());
		write_file("/", S.tmp[i] + 1, "host file\n");
		assert_int_equal(chmod(S.tmp[i], 0644), 0);
	}
	setenv("PROBE_TMP", S.tmp[0], 1);
	setenv("PROBE_SHM", S.tmp[1], 1);
	snprintf(num, sizeof(num), "%lu", MEM_LIMIT);
	setenv("PROBE_MEM", num, 1);
	snprintf(num, sizeof(num), "%lu", TMPFS_LIMIT);
	setenv("PROBE_TMPFS", num, 1);
	/* Some kernels (no IA32 emulation, PVM guests) fault on int 0x80
	 * before seccomp sees it: learn what this one does unsandboxed. */
	S.int80_bare = run_bare("int80");
	/* Without a mount namespace the carve-outs cannot exist: such a
	 * machine runs the suite with the weaker sandbox accepted. */
	S.weaker = !S.caps.root && !S.caps.mntns;
	return 0;
}

static int
suite_teardown(void **state)
{
	char	 cmd[PATH_MAX + 32];
	int	 i;

	(void)state;
	if (S.lsock != -1)
		close(S.lsock);
	if (S.asock != -1)
		close(S.asock);
	if (geteuid() == 0)
		unlink(S.victim);
	if (S.shmid != -1)
		shmctl(S.shmid, IPC_RMID, NULL);
	if (S.mq[0] != '\0')
		mq_unlink(S.mq);
	for (i = 0; i < 2; i++)
		if (S.tmp[i][0] != '\0')
			unlink(S.tmp[i]);
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", S.base);
	if (system(cmd) != 0)
		fprintf(stderr, "could not remove %s\n", S.base);
	return 0;
}

/* Run the probe under warren; its exit code, or -1 on a hang. */
static int
run_probe(const char *profile, const char *name, const char *log, int timeout,
    int flags)
{
	char		 ws[PATH_MAX + 32], mem[32], tmpfs[32];
	char		 xdg[2][PATH_MAX + 48];
	const char	*argv[28];
	struct timespec	 ts = { 0, 10 * 1000 * 1000 };
	time_t		 start;
	pid_t		 pid, w;
	int		 n = 0, status, fd;

	snprintf(ws, sizeof(ws), "%s/ws-%s%s", S.base, profile,
	    (flags & C_GITFILE) ? "-gitfile" : "");
	snprintf(mem, sizeof(mem), "mem=%lu", MEM_LIMIT);
	snprintf(tmpfs, sizeof(tmpfs), "tmpfs=%lu", TMPFS_LIMIT);
	snprintf(xdg[0], sizeof(xdg[0]), "%s/.state", ws);
	snprintf(xdg[1], sizeof(xdg[1]), "%s/.config", ws);
	argv[n++] = "warren";
	argv[n++] = "sandbox";
	argv[n++] = "exec";
	argv[n++] = "--profile";
	argv[n++] = profile;
	argv[n++] = "--workspace";
	argv[n++] = ws;
	argv[n++] = "--rlimit";
	argv[n++] = "cpu=2";
	argv[n++] = "--rlimit";
	argv[n++] = "fsize=1048576";
	argv[n++] = "--rlimit";
	argv[n++] = "nproc=64";
	if (timeout) {
		argv[n++] = "--timeout";
		argv[n++] = "1";
	}
	if (flags & C_MEM) {
		argv[n++] = "--rlimit";
		argv[n++] = mem;
	}
	if (flags & C_TMPFS) {
		argv[n++] = "--rlimit";
		argv[n++] = tmpfs;
	}
	if (S.weaker)
		argv[n++] = "--allow-weaker-sandbox";
	argv[n++] = "--";
	argv[n++] = S.probe;
	argv[n++] = name;
	argv[n] = NULL;
	fflush(NULL);
	if ((pid = fork()) == -1)
		return -1;
	if (pid == 0) {
		if (chdir(ws) == -1)
			_exit(99);
		/* Stray fds a parent shell may hand down (case 9). */
		if ((fd = open(S.base, O_RDONLY | O_DIRECTORY)) != -1) {
			dup2(fd, 10);
			dup2(fd, 251);
		}
		if ((fd = open(log, O_WRONLY | O_CREAT | O_TRUNC, 0644)) != -1) {
			dup2(fd, 1);
			dup2(fd, 2);
		}
		/* Where warren finds its own directories (spawn_protect). */
		if ((flags & C_XDG) && (setenv("XDG_STATE_HOME", xdg[0],
		    1) == -1 || setenv("XDG_CONFIG_HOME", xdg[1], 1) == -1))
			_exit(99);
		execv(S.warren, (char *const *)(uintptr_t)argv);
		_exit(98);
	}
	start = time(NULL);
	for (;;) {
		w = waitpid(pid, &status, WNOHANG);
		if (w == pid)
			break;
		if (time(NULL) - start > HANG_GUARD_S) {
			kill(pid, SIGKILL);
			waitpid(pid, &status, 0);	/* after SIGKILL */
			return -1;
		}
		nanosleep(&ts, NULL);
	}
	if (WIFEXITED(status))
		return WEXITSTATUS(status);
	return 128 + WTERMSIG(status);
}

/* Case 33: once warren returns, the setsid grandchild must be gone. */
static int
lock_free(const char *profile)
{
	char		 path[PATH_MAX + 48];
	struct timespec	 ts = { 0, 50 * 1000 * 1000 };
	int		 fd, i, ok = 0;

	snprintf(path, sizeof(path), "%s/ws-%s/lockfile", S.base, profile);
	if ((fd = open(path, O_RDONLY)) == -1)
		return 0;
	for (i = 0; i < 40 && !ok; i++) {
		if (flock(fd, LOCK_EX | LOCK_NB) == 0)
			ok = 1;
		else
			nanosleep(&ts, NULL);
	}
	close(fd);
	return ok;
}

static int
expected(size_t c, size_t p, const char **why)
{
	*why = NULL;
	switch (cases[c].expect) {
	case ALL:
		if (strcmp(cases[c].name, "membomb") == 0 &&
		    S.caps.sanitizer) {
			*why = "RLIMIT_AS skipped in sanitizer builds";
			return P_ALLOWED;
		}
		if ((strcmp(cases[c].name, "git-carveout") == 0 ||
		    strcmp(cases[c].name, "git-rename") == 0 ||
		    strcmp(cases[c].name, "git-file") == 0 ||
		    strcmp(cases[c].name, "warren-dir") == 0) && S.weaker &&
		    profiles[p]->fs_write) {
			*why = "no mount namespace for the read-only .git and "
			    ".warren";
			return P_ALLOWED;
		}
		if (strcmp(cases[c].name, "state-dir") == 0 && S.weaker) {
			*why = "no mount namespace to mask the state directory";
			return P_ALLOWED;
		}
		if (strcmp(cases[c].name, "tmpfs-fill") == 0 && S.weaker &&
		    profiles[p]->fs_write) {
			*why = "no mount namespace for a sized private /tmp";
			return P_ALLOWED;
		}
		if (strcmp(cases[c].name, "tmp-read") == 0 && S.weaker &&
		    profiles[p]->fs_write) {
			*why = "no mount namespace for a private /tmp";
			return P_ALLOWED;
		}
		if (strcmp(cases[c].name, "sysv-ipc") == 0 && S.weaker &&
		    profiles[p]->exec) {
			*why = "no IPC namespace";
			return P_ALLOWED;
		}
		return P_BLOCKED;
	case NOEXEC:
		return profiles[p]->exec ? P_ALLOWED : P_BLOCKED;
	case RO:
		return profiles[p]->fs_write ? P_ALLOWED : P_BLOCKED;
	case POS:
		return P_ALLOWED;
	case KILL:
		if (strcmp(cases[c].name, "int80") == 0 &&
		    S.int80_bare == 128 + SIGSEGV) {
			*why = "int 0x80 faults (SIGSEGV) on this kernel even "
			    "unsandboxed: no 32-bit syscall entry to filter";
			return 128 + SIGSEGV;
		}
		return P_KILLED;
	case TIMEOUT:
		return P_TIMEOUT;
	case MEMORY:
		/* Denied by seccomp where no program runs. */
		if (!profiles[p]->exec)
			return P_BLOCKED;
		if (S.caps.memcg != 0)
			return P_OOM;
		*why = "no memory cgroup for this user: memfd pages are "
		    "bounded only by RLIMIT_FSIZE x RLIMIT_NOFILE (docs/"
		    "sandbox.md, \"Memory\")";
		return P_ALLOWED;
	}
	return -1;
}

static const char *
outcome(int code)
{
	switch (code) {
	case P_ALLOWED:
		return "allowed";
	case P_BLOCKED:
		return "blocked";
	case P_KILLED:
		return "killed";
	case P_TIMEOUT:
		return "timeout";
	case 128 + SIGSEGV:
		return "segv";
	case P_OOM:
		return "oom-kill";
	case -1:
		return "hang";
	default:
		return "other";
	}
}

static void
show_log(const char *log)
{
	char	 buf[1024];
	FILE	*f;

	if ((f = fopen(log, "r")) == NULL)
		return;
	while (fgets(buf, sizeof(buf), f) != NULL)
		printf("      | %s", buf);
	fclose(f);
}

/* WARREN_ESCAPE_ONLY=case,case...: run only those (while debugging). */
static int
selected(const char *name)
{
	const char	*only = getenv("WARREN_ESCAPE_ONLY"), *s;
	size_t		 n = strlen(name);

	if (only == NULL || *only == '\0')
		return 1;
	for (s = only; (s = strstr(s, name)) != NULL; s += n)
		if ((s == only || s[-1] == ',') && (s[n] == ',' ||
		    s[n] == '\0'))
			return 1;
	return 0;
}

static void
test_escape_suite(void **state)
{
	char		 log[PATH_MAX + 64], cell[NPROFILES][32];
	const char	*why, *notes[NCASES * NPROFILES];
	size_t		 c, p, nnotes = 0, i, ncells = 0;
	int		 got, want, bad = 0, ok;

	(void)state;
	snprintf(log, sizeof(log), "%s/tests/sandbox/escape-table-uid%u.txt",
	    getenv("WARREN_BUILD_DIR"), (unsigned)geteuid());
	table = fopen(log, "w");
	out("escape suite as %s (uid %u): landlock ABI %d, %s, userns %s, "
	    "pids %s, memory %s\n", S.caps.root ? "root" : "a user",
	    (unsigned)geteuid(), S.caps.landlock_abi, S.caps.seccomp ?
	    "seccomp" : "no seccomp", S.caps.userns ? "yes" : "no",
	    S.caps.cgroup ? "cgroup" : "RLIMIT_NPROC", S.caps.memcg ?
	    "cgroup" : "no cgroup");
	out("%-3s %-14s", "#", "case");
	for (p = 0; p < nprofiles; p++)
		out(" %-10s", profiles[p]->name);
	out("\n");
	for (c = 0; c < NCASES; c++) {
		if (!selected(cases[c].name))
			continue;
		for (p = 0; p < nprofiles; p++) {
			snprintf(log, sizeof(log), "%s/log-%s-%s", S.base,
			    cases[c].name, profiles[p]->name);
			want = expected(c, p, &why);
			ncells++;
			got = run_probe(profiles[p]->name, cases[c].name, log,
			    cases[c].expect == TIMEOUT, cases[c].flags);
			ok = got == want;
			if (ok && cases[c].expect == TIMEOUT)
				ok = lock_free(profiles[p]->name);
			snprintf(cell[p], sizeof(cell[p]), "%s%s",
			    outcome(got), ok ? "" : "!");
			if (why != NULL && nnotes < NCASES * NPROFILES)
				notes[nnotes++] = why;
			if (!ok) {
				bad++;
				out("  MISMATCH case %s profile %s: want "
				    "%s (%d), got %s (%d)\n", cases[c].name,
				    profiles[p]->name, outcome(want), want,
				    outcome(got), got);
				show_log(log);
			}
		}
		if (cases[c].num != 0)
			out("%-3d %-14s", cases[c].num, cases[c].name);
		else
			out("%-3s %-14s", "+", cases[c].name);
		for (p = 0; p < nprofiles; p++)
			out(" %-10s", cell[p]);
		out("\n");
	}
	for (i = 0; i < nnotes; i++)
		if (i == 0 || strcmp(notes[i], notes[i - 1]) != 0)
			out("note: %s\n", notes[i]);
	out("%d of %zu cells differ from what this mode must enforce "
	    "(\"!\")\n", bad, ncells);
	if (table != NULL)
		fclose(table);
	table = NULL;
	assert_int_equal(bad, 0);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_escape_suite),
	};

	return cmocka_run_group_tests(tests, suite_setup, suite_teardown);
}

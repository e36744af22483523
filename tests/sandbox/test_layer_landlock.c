/*
 * The Landlock layer on its own: for each built-in profile that runs in
 * a worker (its fs_write and exec from the one profile table,
 * agent/profile.c), a forked child applies only the Landlock ruleset
 * (sandbox_landlock_apply: no mount namespace, no seccomp, no capability
 * drop) and tries each path: read, write, create, remove, truncate, link,
 * list, exec. Each must succeed exactly where the profile's rules say
 * (docs/sandbox.md, "landlock:abiN") and fail with EACCES (EXDEV for a
 * link or rename across rules) elsewhere.
 *
 * The files outside the rules are the test's own, mode 0666 in a
 * directory of mode 0777, so DAC lets any user write them: a refusal is
 * Landlock's, as root and as an ordinary user alike. The workspace and
 * the "outside" directory lie under the build directory, which no rule
 * covers (or /var/tmp, when the build is under /tmp). With no mount namespace, /tmp is the host's: read-write
 * profiles' rule for it applies there.
 *
 * A kernel without Landlock skips, saying so.
 */
#include <sys/types.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <arpa/inet.h>
#include <limits.h>
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
#include "tests/test_wait.h"

#define CHILD_DEADLINE_S	30

/* When an access must succeed. */
enum when {
	ALWAYS,
	NEVER,
	IF_WRITE,		/* fs_write */
	IF_EXEC,		/* exec */
	IF_WRITE_OR_EXEC,	/* the devices' WRITE_FILE */
	IF_NET,			/* inet or hostnet: TCP is not handled */
};

enum op {
	OP_READ,	/* open O_RDONLY and read a byte */
	OP_WRITE,	/* open an existing file O_WRONLY */
	OP_TRUNC,	/* truncate() */
	OP_CREATE,	/* open O_CREAT|O_EXCL a new name, then remove it */
	OP_MKDIR,	/* mkdir a new name, then rmdir it */
	OP_UNLINK,	/* unlink an existing file (made again afterwards) */
	OP_LINK,	/* link(path, path2) inside one directory */
	OP_LIST,	/* opendir + readdir */
	OP_EXEC,	/* execve in a grandchild */
	OP_RENAME_OUT,	/* rename(path, path2) across rules */
	OP_RENAME_IN,	/* rename(path, path2) between two directories of
			 * one rule (Landlock's REFER right) */
	OP_CONNECT,	/* TCP connect to 127.0.0.1 port 1 (ABI 4): refused
			 * by nobody listening counts as let through */
};

static const char *const op_names[] = {
	"read", "write", "truncate", "create", "mkdir", "unlink", "link",
	"list", "exec", "rename out", "rename in", "connect",
};

/* A path: "W/" the workspace, "O/" outside every rule, else absolute. */
static const struct row {
	enum op		 op;
	const char	*path;
	const char	*path2;		/* OP_LINK, OP_RENAME_OUT */
	enum when	 when;
} rows[] = {
	{ OP_READ, "W/file", NULL, ALWAYS },
	{ OP_LIST, "W/", NULL, ALWAYS },
	{ OP_WRITE, "W/file", NULL, IF_WRITE },
	{ OP_TRUNC, "W/file", NULL, IF_WRITE },
	{ OP_CREATE, "W/new", NULL, IF_WRITE },
	{ OP_MKDIR, "W/newdir", NULL, IF_WRITE },
	{ OP_UNLINK, "W/victim", NULL, IF_WRITE },
	{ OP_LINK, "W/file", "W/link", IF_WRITE },
	{ OP_EXEC, "W/true", NULL, IF_EXEC },
	{ OP_RENAME_OUT, "W/file", "O/moved", NEVER },
	{ OP_RENAME_IN, "W/file", "W/sub/moved", IF_WRITE },
	{ OP_READ, "O/secret", NULL, NEVER },
	{ OP_LIST, "O/", NULL, NEVER },
	{ OP_WRITE, "O/secret", NULL, NEVER },
	{ OP_TRUNC, "O/secret", NULL, NEVER },
	{ OP_CREATE, "O/new", NULL, NEVER },
	{ OP_UNLINK, "O/victim", NULL, NEVER },
	{ OP_EXEC, "O/true", NULL, NEVER },
	{ OP_READ, "/etc/passwd", NULL, ALWAYS },
	{ OP_LIST, "/usr", NULL, ALWAYS },
	{ OP_READ, "/usr/bin/true", NULL, ALWAYS },
	{ OP_EXEC, "/usr/bin/true", NULL, IF_EXEC },
	{ OP_READ, "/proc/self/status", NULL, ALWAYS },
	{ OP_READ, "/sys/devices/system/cpu/online", NULL, ALWAYS },
	{ OP_READ, "/dev/null", NULL, ALWAYS },
	{ OP_WRITE, "/dev/null", NULL, IF_WRITE_OR_EXEC },
	{ OP_READ, "/dev/urandom", NULL, ALWAYS },
	{ OP_LIST, "/dev", NULL, IF_WRITE },
	{ OP_CREATE, "/tmp/warren-layer-landlock", NULL, IF_WRITE },
	{ OP_EXEC, "/tmp/warren-layer-landlock-true", NULL, IF_EXEC },
	{ OP_CONNECT, "127.0.0.1:1", NULL, IF_NET },
	{ OP_LIST, "/", NULL, NEVER },
};
#define NROWS	(sizeof(rows) / sizeof(rows[0]))

static char	 base[PATH_MAX], ws[PATH_MAX], outside[PATH_MAX];
/*
 * A program in /tmp that needs no other file: a copy of the dynamic
 * loader, run as `ld.so --version`. A copy of true would need its loader
 * in /lib, which a profile without exec cannot run either, so it could
 * not show /tmp's own EXECUTE right.
 */
static char	 tmp_true[PATH_MAX];
static int	 tmp_noexec;		/* /tmp will not exec even unsandboxed */

/* "W/x" and "O/x" to absolute paths. */
static void
resolve(const char *in, char *out, size_t len)
{
	if (strncmp(in, "W/", 2) == 0)
		snprintf(out, len, "%s/%s", ws, in + 2);
	else if (strncmp(in, "O/", 2) == 0)
		snprintf(out, len, "%s/%s", outside, in + 2);
	else
		snprintf(out, len, "%s", in);
	if (strcmp(in, "/tmp/warren-layer-landlock") == 0)
		snprintf(out, len, "/tmp/warren-layer-landlock-%ld",
		    (long)getpid());
	if (strcmp(in, "/tmp/warren-layer-landlock-true") == 0)
		snprintf(out, len, "%s", tmp_true);
}

static int
want_ok(enum when w, const struct sandbox_policy *p)
{
	switch (w) {
	case ALWAYS:		return 1;
	case NEVER:		return 0;
	case IF_WRITE:		return p->fs_write;
	case IF_EXEC:		return p->exec;
	case IF_WRITE_OR_EXEC:	return p->fs_write || p->exec;
	case IF_NET:		return p->inet || p->hostnet;
	}
	return 0;
}

/* exec path (with arg, if not NULL) in a grandchild: its status says
 * whether execve worked. */
static int
try_exec(const char *path, const char *arg)
{
	char	*argv[3];
	pid_t	 pid;
	int	 st;

	if ((pid = fork()) == -1)
		return -1;
	if (pid == 0) {
		argv[0] = (char *)(uintptr_t)path;
		argv[1] = (char *)(uintptr_t)arg;
		argv[2] = NULL;
		if (arg != NULL)
			close(STDOUT_FILENO);	/* what it prints */
		execv(path, argv);
		_exit(errno > 0 && errno < 100 ? 100 + errno : 99);
	}
	if ((st = test_waitpid(pid, 30, path)) == -1) {
		errno = ETIMEDOUT;
		return -1;
	}
	if (WIFEXITED(st) && WEXITSTATUS(st) == 0)
		return 0;
	errno = WIFEXITED(st) && WEXITSTATUS(st) > 100 ?
	    WEXITSTATUS(st) - 100 : EIO;
	return -1;
}

/* A TCP connect to 127.0.0.1 port 1: 0 if Landlock let it through
 * (connected, or refused by the port), -1 with errno else. */
static int
try_connect(void)
{
	struct sockaddr_in	 sin;
	int			 fd, rc, err;

	if ((fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0)) == -1)
		return -1;
	memset(&sin, 0, sizeof(sin));
	sin.sin_family = AF_INET;
	sin.sin_port = htons(1);
	sin.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	rc = connect(fd, (struct sockaddr *)&sin, sizeof(sin));
	err = errno;
	close(fd);
	if (rc == 0 || err == ECONNREFUSED)
		return 0;
	errno = err;
	return -1;
}

/* One attempt: 0 if it worked, -1 with errno; undone where it changed
 * something, so the next profile starts from the same files. */
static int
attempt(enum op op, const char *path, const char *path2)
{
	char	 c;
	DIR	*d;
	int	 fd, rc = -1;

	switch (op) {
	case OP_READ:
		if ((fd = open(path, O_RDONLY | O_CLOEXEC)) == -1)
			return -1;
		rc = read(fd, &c, 1) == -1 ? -1 : 0;
		close(fd);
		return rc;
	case OP_WRITE:
		if ((fd = open(path, O_WRONLY | O_CLOEXEC)) == -1)
			return -1;
		close(fd);
		return 0;
	case OP_TRUNC:
		return truncate(path, 5);
	case OP_CREATE:
		if ((fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC,
		    0644)) == -1)
			return -1;
		close(fd);
		return unlink(path);
	case OP_MKDIR:
		if (mkdir(path, 0755) == -1)
			return -1;
		return rmdir(path);
	case OP_UNLINK:
		if (unlink(path) == -1)
			return -1;
		if ((fd = open(path, O_WRONLY | O_CREAT | O_CLOEXEC,
		    0666)) == -1)
			return -1;
		close(fd);
		return chmod(path, 0666);
	case OP_LINK:
		if (link(path, path2) == -1)
			return -1;
		return unlink(path2);
	case OP_LIST:
		if ((d = opendir(path)) == NULL)
			return -1;
		errno = 0;
		rc = readdir(d) == NULL && errno != 0 ? -1 : 0;
		closedir(d);
		return rc;
	case OP_EXEC:
		return try_exec(path, strcmp(path, tmp_true) == 0 ?
		    "--version" : NULL);
	case OP_RENAME_OUT:
	case OP_RENAME_IN:
		if (rename(path, path2) == -1)
			return -1;
		return rename(path2, path);
	case OP_CONNECT:
		return try_connect();
	}
	errno = EINVAL;
	return -1;
}

/* In the child, after the layer of ABI abi: every row; returns the
 * failures. */
static int
child_rows(const struct sandbox_policy *p, int abi)
{
	char	 path[PATH_MAX], path2[PATH_MAX];
	size_t	 i;
	int	 ok, rc, err, want, bad = 0;

	for (i = 0; i < NROWS; i++) {
		if ((rows[i].op == OP_TRUNC && abi < 3) ||
		    (rows[i].op == OP_RENAME_IN && abi < 2) ||
		    (rows[i].op == OP_CONNECT && abi < 4)) {
			fprintf(stderr, "    %-10s %-34s skipped: Landlock ABI "
			    "%d has no right for it\n",
			    op_names[rows[i].op], rows[i].path, abi);
			continue;
		}
		if (strcmp(rows[i].path, "/tmp/warren-layer-landlock-true") ==
		    0 && tmp_noexec) {
			fprintf(stderr, "    %-10s %-34s skipped: /tmp runs "
			    "nothing here even unsandboxed (noexec)\n",
			    op_names[rows[i].op], rows[i].path);
			continue;
		}
		resolve(rows[i].path, path, sizeof(path));
		path2[0] = '\0';
		if (rows[i].path2 != NULL)
			resolve(rows[i].path2, path2, sizeof(path2));
		errno = 0;
		rc = attempt(rows[i].op, path, path2);
		err = errno;
		want = want_ok(rows[i].when, p);
		ok = want ? rc == 0 : rc == -1 && (err == EACCES ||
		    (err == EXDEV && (rows[i].op == OP_LINK ||
		    rows[i].op == OP_RENAME_OUT)));
		fprintf(stderr, "    %-10s %-34s want %-7s %s%s%s\n",
		    op_names[rows[i].op], rows[i].path, want ? "allowed" :
		    "EACCES", ok ? "ok" : "FAIL: got ", ok ? "" : rc == 0 ?
		    "success" : strerror(err), ok ? "" : "");
		bad += !ok;
	}
	return bad;
}

static void
write_file(const char *dir, const char *name, mode_t mode)
{
	char	 path[PATH_MAX];
	int	 fd;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, mode);
	if (fd == -1)
		fail_msg("create %s: %s", path, strerror(errno));
	if (write(fd, "secret data\n", 12) != 12)
		fail_msg("write %s: %s", path, strerror(errno));
	close(fd);
	/* Past the umask: writable by whoever runs the test. */
	if (chmod(path, mode) == -1)
		fail_msg("chmod %s: %s", path, strerror(errno));
}

/* A new file to, mode 0755, with from's bytes; -1 with errno. */
static int
copy_file(const char *from, const char *to)
{
	char	 buf[65536];
	ssize_t	 n;
	int	 in, out, rc = 0;

	if ((in = open(from, O_RDONLY | O_CLOEXEC)) == -1)
		return -1;
	if ((out = open(to, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW |
	    O_CLOEXEC, 0755)) == -1) {
		close(in);
		return -1;
	}
	while (rc == 0 && (n = read(in, buf, sizeof(buf))) > 0)
		if (write(out, buf, (size_t)n) != n)
			rc = -1;
	if (n == -1 || close(out) == -1)
		rc = -1;
	close(in);
	return rc;
}

/* A copy of /usr/bin/true in dir, mode 0755. */
static void
copy_true(const char *dir)
{
	char	 path[PATH_MAX];

	snprintf(path, sizeof(path), "%s/true", dir);
	if (copy_file("/usr/bin/true", path) == -1)
		fail_msg("copy /usr/bin/true to %s: %s", path, strerror(errno));
}

static void
make_dirs(void)
{
	static const char *const loaders[] = {
		"/lib64/ld-linux-x86-64.so.2", "/lib/ld-linux-aarch64.so.1",
		"/lib/x86_64-linux-gnu/ld-linux-x86-64.so.2",
		"/lib/aarch64-linux-gnu/ld-linux-aarch64.so.1",
	};
	const char	*bdir;
	char		*d, path[PATH_MAX];
	size_t		 i;

	bdir = getenv("WARREN_BUILD_DIR");
	assert_non_null(bdir);
	/* Not under /tmp or /dev/shm, which read-write profiles may write
	 * (without a mount namespace, the host's). */
	if (strncmp(bdir, "/tmp/", 5) == 0 || strncmp(bdir, "/dev/shm/",
	    9) == 0)
		snprintf(base, sizeof(base), "/var/tmp/layer-landlock-XXXXXX");
	else
		snprintf(base, sizeof(base),
		    "%s/tests/sandbox/layer-landlock-XXXXXX", bdir);
	if ((d = mkdtemp(base)) == NULL)
		fail_msg("mkdtemp %s: %s", base, strerror(errno));
	snprintf(ws, sizeof(ws), "%s/ws", base);
	snprintf(outside, sizeof(outside), "%s/outside", base);
	if (mkdir(ws, 0777) == -1 || mkdir(outside, 0777) == -1 ||
	    chmod(ws, 0777) == -1 || chmod(outside, 0777) == -1)
		fail_msg("mkdir under %s: %s", base, strerror(errno));
	snprintf(path, sizeof(path), "%s/sub", ws);
	if (mkdir(path, 0777) == -1 || chmod(path, 0777) == -1)
		fail_msg("mkdir %s: %s", path, strerror(errno));
	write_file(ws, "file", 0666);
	write_file(ws, "victim", 0666);
	write_file(outside, "secret", 0666);
	write_file(outside, "victim", 0666);
	copy_true(ws);
	copy_true(outside);
	/* Tried once unsandboxed: a /tmp mounted noexec skips its row. */
	for (i = 0; i < sizeof(loaders) / sizeof(loaders[0]); i++)
		if (access(loaders[i], X_OK) == 0)
			break;
	if (i == sizeof(loaders) / sizeof(loaders[0]))
		fail_msg("no dynamic loader found (%s, ...): add this "
		    "machine's to loaders[]", loaders[0]);
	snprintf(tmp_true, sizeof(tmp_true), "/tmp/warren-layer-landlock-"
	    "true-%ld", (long)getpid());
	if (copy_file(loaders[i], tmp_true) == -1)
		fail_msg("copy %s to %s: %s", loaders[i], tmp_true,
		    strerror(errno));
	tmp_noexec = try_exec(tmp_true, "--version") == -1;
}

static void
remove_dirs(void)
{
	static const char *const names[] = { "ws/file", "ws/victim",
	    "ws/true", "ws/sub", "outside/secret", "outside/victim",
	    "outside/true", "ws", "outside", "" };
	char	 path[PATH_MAX + 16];
	size_t	 i;

	if (tmp_true[0] != '\0' && unlink(tmp_true) == -1 && errno != ENOENT)
		fprintf(stderr, "remove %s: %s\n", tmp_true, strerror(errno));
	for (i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		snprintf(path, sizeof(path), "%s/%s", base, names[i]);
		if (remove(path) == -1 && errno != ENOENT)
			fprintf(stderr, "remove %s: %s\n", path,
			    strerror(errno));
	}
}

/* Fork; the child applies only Landlock for p, runs the rows. */
static int
run_policy(const struct sandbox_policy *pp, const char *name)
{
	struct sandbox_policy	 p = *pp;
	struct sandbox_error	 e;
	pid_t			 pid;
	int			 abi, st, bad;

	memset(&e, 0, sizeof(e));
	fprintf(stderr, "  %s (%s%s%s), Landlock only:\n", name,
	    p.fs_write ? "read-write" : "read-only", p.exec ? ", exec" : "",
	    p.inet ? ", inet" : "");
	fflush(NULL);
	if ((pid = fork()) == -1)
		fail_msg("fork: %s", strerror(errno));
	if (pid == 0) {
		(void)prctl(PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0);
		alarm(CHILD_DEADLINE_S);
		if (sandbox_landlock_apply(&p, &abi, &e) == -1) {
			fprintf(stderr, "    landlock: %s\n", e.msg);
			_exit(100);
		}
		bad = child_rows(&p, abi);
		_exit(bad > 99 ? 99 : bad);
	}
	/* Its own alarm ends it at 30 s; this is the bound if that fails. */
	if ((st = test_waitpid(pid, 60, name)) == -1)
		fail_msg("%s: the child (pid %ld) had not ended after 60 s",
		    name, (long)pid);
	if (WIFSIGNALED(st))
		fail_msg("%s: the child died of signal %d%s", name,
		    WTERMSIG(st), WTERMSIG(st) == SIGALRM ? " (its deadline, "
		    "30 s, passed)" : "");
	return WEXITSTATUS(st);
}

/* A profile (or a variant of a read-write one's policy) and its rows. */
static void
run_checked(const char *name, int exec, int inet)
{
	struct sandbox_policy	 p;
	struct sandbox_error	 e;
	char			 what[128];
	int			 bad;

	memset(&e, 0, sizeof(e));
	if (profile_policy(&p, name, ws, &e) == -1)
		fail_msg("policy %s: %s", name, e.msg);
	snprintf(what, sizeof(what), "%s", name);
	if (exec != -1 && exec != p.exec) {
		p.exec = exec;
		snprintf(what, sizeof(what), "%s without exec (a user profile "
		    "with write and edit, no bash)", name);
	}
	if (inet) {
		p.inet = 1;
		snprintf(what, sizeof(what), "%s as a backend's worker (inet)",
		    name);
	}
	if ((bad = run_policy(&p, what)) != 0) {
		remove_dirs();
		fail_msg("%s: %d paths not as the profile says (above)", what,
		    bad);
	}
}

static void
test_landlock_paths(void **state)
{
	const struct profile	*b, *rw = NULL;
	size_t			 i;
	int			 abi, n = 0;

	(void)state;
	if ((abi = sandbox_landlock_abi()) < 1) {
		fprintf(stderr, "SKIP: this kernel has no Landlock (ABI 0): "
		    "the layer cannot be tested here\n");
		skip();
	}
	fprintf(stderr, "Landlock ABI %d, uid %ld\n", abi, (long)getuid());
	make_dirs();
	for (i = 0; (b = profile_builtin_at(i)) != NULL; i++) {
		if (!profile_in_worker(b))
			continue;
		run_checked(b->name, -1, 0);
		if (b->fs_write && rw == NULL)
			rw = b;
		n++;
	}
	/* The combinations only a user profile or a backend has: write
	 * without exec (test_layer_seccomp has it too), and inet. */
	assert_non_null(rw);
	run_checked(rw->name, 0, 0);
	run_checked(rw->name, -1, 1);
	remove_dirs();
	assert_true(n >= 2);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_landlock_paths),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}

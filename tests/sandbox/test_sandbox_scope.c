/*
 * Landlock's scopes (ABI 6) tested on their own. The escape suite cannot
 * see the abstract-unix scope: seccomp denies socket() first in every
 * profile. Here a forked child applies only the Landlock layer, through
 * the library's own sandbox_landlock_apply() (internal: sandbox_int.h),
 * and tries what the scopes must stop and what they must leave alone:
 *
 *   abstract unix	connect() and sendto() to sockets the parent bound
 *			outside the domain: EPERM; a socket bound inside the
 *			domain, a socketpair, pathname sockets: as before,
 *			and as the profile's path rules say
 *   signals		kill() of the parent or of a sibling: EPERM, root
 *			included; the child's own children: delivered
 *
 * The same checks with the layer applied as an ABI 5 kernel would
 * (sandbox_landlock_apply_max) must all be allowed, so the EPERMs are the
 * scopes' and nothing else's. On a kernel below ABI 6 the scope tests
 * check that the layer reports no scope, print why, and skip.
 */
#include <sys/types.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <sys/wait.h>

#include <errno.h>
#include <fcntl.h>
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
#include "sandbox/sandbox_testapi.h"

#define SCOPE_FULL	0	/* sandbox_landlock_apply: the kernel's ABI */
#define SCOPE_ABI5	5	/* the last ABI without scopes */

struct fx {
	char	 ws[PATH_MAX];		/* the workspace, a fresh directory */
	char	 psock[PATH_MAX];	/* the parent's pathname socket in ws */
	char	 vsock[PATH_MAX];	/* a path Landlock denies, DAC allows */
	char	 abs[64];		/* abstract names: abs, abs-dg */
	int	 abs_stream;		/* the parent's, listening */
	int	 abs_dgram;
	int	 path_stream;		/* on psock, listening */
	pid_t	 sibling;		/* outside the domain, or -1 */
};

static int	 kernel_abi;	/* sandbox_landlock_abi() in the parent */
static int	 nfail;		/* in the child: failed checks */

/* In the child: one line per check, so a failure names itself. */
static void
expect(const char *what, int rc, int want_errno)
{
	int	 err = errno, ok;

	ok = want_errno == 0 ? rc != -1 : rc == -1 && err == want_errno;
	fprintf(stderr, "    %-44s %-8s %s", what, want_errno == 0 ?
	    "allowed" : want_errno == EPERM ? "EPERM" : want_errno == EACCES ?
	    "EACCES" : "error", ok ? "ok\n" : "FAIL: ");
	if (ok)
		return;
	nfail++;
	fprintf(stderr, "got %s\n", rc == -1 ? strerror(err) : "success");
}

static void
expect_true(const char *what, int cond)
{
	fprintf(stderr, "    %-53s %s\n", what, cond ? "ok" : "FAIL");
	if (!cond)
		nfail++;
}

static socklen_t
abstract_addr(struct sockaddr_un *sun, const char *name)
{
	size_t	 n = strlen(name);

	memset(sun, 0, sizeof(*sun));
	sun->sun_family = AF_UNIX;
	if (n > sizeof(sun->sun_path) - 1)
		n = sizeof(sun->sun_path) - 1;
	memcpy(sun->sun_path + 1, name, n);	/* sun_path[0] = '\0' */
	return (socklen_t)(offsetof(struct sockaddr_un, sun_path) + 1 + n);
}

static socklen_t
path_addr(struct sockaddr_un *sun, const char *path)
{
	memset(sun, 0, sizeof(*sun));
	sun->sun_family = AF_UNIX;
	strlcpy(sun->sun_path, path, sizeof(sun->sun_path));
	return (socklen_t)sizeof(*sun);
}

/* connect() a stream socket, or sendto() a datagram, to sun; errno kept. */
static int
reach(int type, const struct sockaddr_un *sun, socklen_t len)
{
	int	 s, rc, saved;

	if ((s = socket(AF_UNIX, type | SOCK_CLOEXEC, 0)) == -1)
		return -1;
	if (type == SOCK_STREAM)
		rc = connect(s, (const struct sockaddr *)sun, len);
	else
		rc = sendto(s, "x", 1, 0, (const struct sockaddr *)sun, len) ==
		    1 ? 0 : -1;
	saved = errno;
	close(s);
	errno = saved;
	return rc;
}

/* A listening stream socket on sun, or -1 (errno kept). */
static int
listen_on(const struct sockaddr_un *sun, socklen_t len)
{
	int	 s, saved;

	if ((s = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0)) == -1)
		return -1;
	if (bind(s, (const struct sockaddr *)sun, len) == -1 ||
	    listen(s, 8) == -1) {
		saved = errno;
		close(s);
		errno = saved;
		return -1;
	}
	return s;
}

/* (a) unix sockets, in the child once the layer is on. */
static void
body_unix(const struct fx *fx, int scoped, int fs_write)
{
	struct sockaddr_un	 sun;
	socklen_t		 len;
	char			 name[80], path[PATH_MAX + 32], c = 0;
	int			 sv[2], s, rc;

	len = abstract_addr(&sun, fx->abs);
	expect("connect abstract stream bound outside", reach(SOCK_STREAM,
	    &sun, len), scoped ? EPERM : 0);
	snprintf(name, sizeof(name), "%s-dg", fx->abs);
	len = abstract_addr(&sun, name);
	expect("sendto abstract dgram bound outside", reach(SOCK_DGRAM, &sun,
	    len), scoped ? EPERM : 0);

	/* Bound inside the domain: reachable from it. */
	snprintf(name, sizeof(name), "%s-in", fx->abs);
	len = abstract_addr(&sun, name);
	s = listen_on(&sun, len);
	expect("bind abstract inside the domain", s, 0);
	expect("connect abstract bound inside", reach(SOCK_STREAM, &sun, len),
	    0);
	if (s != -1)
		close(s);

	rc = socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv);
	expect("socketpair", rc, 0);
	if (rc == 0) {
		expect_true("socketpair carries a byte", write(sv[0], "z", 1) ==
		    1 && read(sv[1], &c, 1) == 1 && c == 'z');
		close(sv[0]);
		close(sv[1]);
	}

	/* Pathname sockets are the path rules' business, not the scope's. */
	len = path_addr(&sun, fx->psock);
	expect("connect pathname socket in the workspace", reach(SOCK_STREAM,
	    &sun, len), 0);
	snprintf(path, sizeof(path), "%s/c%d.sock", fx->ws, (int)getpid());
	len = path_addr(&sun, path);
	s = listen_on(&sun, len);
	expect(fs_write ? "bind pathname socket in the workspace" :
	    "bind pathname socket in a read-only workspace", s,
	    fs_write ? 0 : EACCES);
	if (s != -1) {
		expect("connect it", reach(SOCK_STREAM, &sun, len), 0);
		close(s);
		(void)unlink(path);
	}
	if (fx->vsock[0] != '\0') {
		len = path_addr(&sun, fx->vsock);
		s = listen_on(&sun, len);
		expect("bind pathname socket in /var/tmp", s, EACCES);
		if (s != -1) {
			close(s);
			(void)unlink(fx->vsock);
		}
	}
}

/* (b) signals, in the child once the layer is on. */
static void
body_signal(const struct fx *fx, int scoped, int fs_write)
{
	pid_t	 pid;
	int	 st;

	(void)fs_write;
	expect("kill(parent, 0)", kill(getppid(), 0), scoped ? EPERM : 0);
	expect("kill(sibling, SIGTERM)", kill(fx->sibling, SIGTERM),
	    scoped ? EPERM : 0);

	/* Children forked inside the domain: signalled, and signalling. */
	if ((pid = fork()) == 0) {
		for (;;)
			pause();
	}
	expect("fork", pid, 0);
	if (pid == -1)
		return;
	expect("kill(own child, SIGTERM)", kill(pid, SIGTERM), 0);
	expect_true("own child died of SIGTERM", (st = test_waitpid(pid, 10,
	    "the own child sent SIGTERM")) != -1 && WIFSIGNALED(st) &&
	    WTERMSIG(st) == SIGTERM);

	if ((pid = fork()) == 0)
		_exit(kill(getppid(), SIGCONT) == -1 ? 1 : 0);
	expect_true("own child signals its parent", pid != -1 &&
	    (st = test_waitpid(pid, 10, "the own child signalling its "
	    "parent")) != -1 && WIFEXITED(st) && WEXITSTATUS(st) == 0);
}

static void
body_none(const struct fx *fx, int scoped, int fs_write)
{
	(void)fx;
	(void)scoped;
	(void)fs_write;
}

/*
 * Fork; the child applies only the Landlock layer of profile (maxabi
 * SCOPE_FULL: sandbox_landlock_apply, else at most that ABI), checks what
 * the layer reports, runs body and exits with its count of failures.
 */
static void
run_child(const struct fx *fx, const char *profile, int maxabi, int scoped,
    void (*body)(const struct fx *, int, int))
{
	struct sandbox_policy	 p;
	struct sandbox_error	 e;
	unsigned		 layers;
	pid_t			 pid;
	int			 abi, want, rc, st;

	assert_int_equal(profile_policy(&p, profile, fx->ws, &e),
	    0);
	want = maxabi == SCOPE_FULL || kernel_abi < maxabi ? kernel_abi :
	    maxabi;
	fprintf(stderr, "  %s, Landlock %s (ABI %d):\n", profile,
	    maxabi == SCOPE_FULL ? "as applied" : "capped", want);
	fflush(NULL);
	pid = fork();
	assert_int_not_equal(pid, -1);
	if (pid == 0) {
		(void)prctl(PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0);
		memset(&e, 0, sizeof(e));
		rc = maxabi == SCOPE_FULL ? sandbox_landlock_apply(&p, &abi,
		    &e) : sandbox_landlock_apply_max(&p, maxabi, &abi, &e);
		if (rc == -1) {
			fprintf(stderr, "    landlock: %s\n", e.msg);
			_exit(100);
		}
		layers = sandbox_landlock_layers(abi);
		expect_true("the ABI used", abi == want);
		expect_true(scoped ? "reports landlock:scope" :
		    "reports no landlock:scope", (layers & SANDBOX_LANDLOCK) &&
		    (!(layers & SANDBOX_LLSCOPE) == !scoped));
		body(fx, scoped, p.fs_write);
		_exit(nfail > 99 ? 99 : nfail);
	}
	assert_true((st = test_waitpid(pid, 240,
	    "the child of run_child")) != -1);
	assert_true(WIFEXITED(st));
	assert_int_equal(WEXITSTATUS(st), 0);
}

/* With fewer than ABI 6 the layer must say it applied no scope. */
static int
scope_available(const struct fx *fx)
{
	struct sandbox_policy	 p;
	struct sandbox_error	 e;
	int			 abi;

	if (kernel_abi >= 6)
		return 1;
	assert_int_equal(sandbox_landlock_layers(kernel_abi) & SANDBOX_LLSCOPE,
	    0);
	if (kernel_abi >= 1)
		run_child(fx, "explore", SCOPE_FULL, 0, body_none);
	else {
		/* No Landlock at all: a missing layer, not a failure. */
		assert_int_equal(profile_policy(&p, "explore",
		    fx->ws, &e), 0);
		memset(&e, 0, sizeof(e));
		assert_int_equal(sandbox_landlock_apply(&p, &abi, &e), -1);
		assert_true(e.missing);
		assert_int_equal(e.layer, SANDBOX_LANDLOCK);
		assert_int_equal(abi, 0);
	}
	printf("skip: this kernel's Landlock ABI is %d: signal and "
	    "abstract-unix scopes need ABI 6 (Linux 6.12)\n", kernel_abi);
	return 0;
}

/* A process outside the domain to signal: the parent's child. */
static pid_t
sibling_start(void)
{
	pid_t	 pid;

	fflush(NULL);
	if ((pid = fork()) == 0) {
		(void)prctl(PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0);
		for (;;)
			pause();
	}
	assert_int_not_equal(pid, -1);
	return pid;
}

/* It must have died of SIGTERM (delivered) or be alive (refused). */
static void
sibling_end(pid_t pid, int delivered)
{
	int	 st;

	if (!delivered) {
		assert_int_equal(waitpid(pid, &st, WNOHANG), 0);
		assert_int_equal(kill(pid, SIGKILL), 0);
	}
	/* Dead of SIGTERM, or of the SIGKILL just sent. */
	assert_true((st = test_waitpid(pid, 10, "the sibling, signalled")) !=
	    -1);
	assert_true(WIFSIGNALED(st));
	assert_int_equal(WTERMSIG(st), delivered ? SIGTERM : SIGKILL);
}

static void
test_layers_by_abi(void **state)
{
	const struct fx		*fx = *state;
	struct sandbox_policy	 p;
	struct sandbox_report	 r;
	struct sandbox_error	 e;
	char			 s[512];
	pid_t			 pid;
	int			 st, want;

	assert_int_equal(sandbox_landlock_layers(0), 0);
	assert_int_equal(sandbox_landlock_layers(1), SANDBOX_LANDLOCK);
	assert_int_equal(sandbox_landlock_layers(5), SANDBOX_LANDLOCK);
	assert_int_equal(sandbox_landlock_layers(6), SANDBOX_LANDLOCK |
	    SANDBOX_LLSCOPE);
	assert_int_equal(sandbox_landlock_layers(7), SANDBOX_LANDLOCK |
	    SANDBOX_LLSCOPE);
	assert_int_equal(profile_policy(&p, "explore", fx->ws,
	    &e), 0);
	assert_int_equal(sandbox_landlock_apply_max(&p, 0, &st, &e), -1);
	assert_int_equal(e.layer, SANDBOX_LANDLOCK);

	/* The whole phase 2, as a worker gets it: the report agrees. */
	p.allow_weaker = 1;
	want = kernel_abi >= 6;
	fflush(NULL);
	pid = fork();
	assert_int_not_equal(pid, -1);
	if (pid == 0) {
		if (sandbox_apply_self(&p, &r, &e) == -1) {
			fprintf(stderr, "apply_self: %s\n", e.msg);
			_exit(1);
		}
		sandbox_report_string(&r, s, sizeof(s));
		fprintf(stderr, "  report: %s\n", s);
		if (kernel_abi > 0 && r.landlock_abi != kernel_abi)
			_exit(2);
		if (!(r.applied & SANDBOX_LLSCOPE) != !want)
			_exit(3);
		if ((strstr(s, "landlock:scope") == NULL) == want)
			_exit(4);
		_exit(0);
	}
	assert_true((st = test_waitpid(pid, 240,
	    "the child of test_layers_by_abi")) != -1);
	assert_true(WIFEXITED(st));
	assert_int_equal(WEXITSTATUS(st), 0);
}

static void
test_scope_unix_readonly(void **state)
{
	const struct fx	*fx = *state;

	if (!scope_available(fx))
		skip();
	run_child(fx, "explore", SCOPE_FULL, 1, body_unix);
}

static void
test_scope_unix_readwrite(void **state)
{
	const struct fx	*fx = *state;

	if (!scope_available(fx))
		skip();
	run_child(fx, "general", SCOPE_FULL, 1, body_unix);
}

static void
test_scope_signal(void **state)
{
	struct fx	*fx = *state;

	if (!scope_available(fx))
		skip();
	fx->sibling = sibling_start();
	run_child(fx, "explore", SCOPE_FULL, 1, body_signal);
	sibling_end(fx->sibling, 0);
	fx->sibling = -1;
}

/* The control: without the scopes every one of those is allowed. */
static void
test_without_scope_allowed(void **state)
{
	struct fx	*fx = *state;

	if (kernel_abi < 1) {
		printf("skip: no Landlock in this kernel\n");
		skip();
	}
	run_child(fx, "explore", SCOPE_ABI5, 0, body_unix);
	run_child(fx, "general", SCOPE_ABI5, 0, body_unix);
	fx->sibling = sibling_start();
	run_child(fx, "explore", SCOPE_ABI5, 0, body_signal);
	sibling_end(fx->sibling, 1);
	fx->sibling = -1;
}

static int
setup(void **state)
{
	struct fx		*fx;
	struct sockaddr_un	 sun;
	const char		*t = getenv("TMPDIR");
	char			 name[80];

	if ((fx = calloc(1, sizeof(*fx))) == NULL)
		return -1;
	fx->abs_stream = fx->abs_dgram = fx->path_stream = -1;
	fx->sibling = -1;
	*state = fx;
	snprintf(fx->ws, sizeof(fx->ws), "%s/warren-scope.XXXXXX",
	    t != NULL && *t != '\0' ? t : "/tmp");
	if (mkdtemp(fx->ws) == NULL) {
		fprintf(stderr, "mkdtemp %s: %s\n", fx->ws, strerror(errno));
		return -1;
	}
	if ((size_t)snprintf(fx->psock, sizeof(fx->psock), "%s/p.sock",
	    fx->ws) >= sizeof(sun.sun_path) - 16) {
		fprintf(stderr, "%s: too long for a unix socket path; set "
		    "TMPDIR to a shorter directory\n", fx->ws);
		return -1;
	}
	snprintf(fx->abs, sizeof(fx->abs), "warren-scope-%d", (int)getpid());
	if ((fx->abs_stream = listen_on(&sun, abstract_addr(&sun,
	    fx->abs))) == -1 ||
	    (fx->path_stream = listen_on(&sun, path_addr(&sun,
	    fx->psock))) == -1) {
		fprintf(stderr, "listen %s: %s\n", fx->abs, strerror(errno));
		return -1;
	}
	snprintf(name, sizeof(name), "%s-dg", fx->abs);
	if ((fx->abs_dgram = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC,
	    0)) == -1 || bind(fx->abs_dgram, (struct sockaddr *)&sun,
	    abstract_addr(&sun, name)) == -1) {
		fprintf(stderr, "bind %s: %s\n", name, strerror(errno));
		return -1;
	}
	/* World-writable, sticky, and in no Landlock rule of any profile. */
	if (access("/var/tmp", W_OK) == 0)
		snprintf(fx->vsock, sizeof(fx->vsock),
		    "/var/tmp/warren-scope-%d-%08x.sock", (int)getpid(),
		    (unsigned)arc4random());
	else
		printf("note: /var/tmp not writable: the bind outside the "
		    "workspace is not tried\n");
	kernel_abi = sandbox_landlock_abi();
	printf("Landlock ABI %d, uid %u\n", kernel_abi, (unsigned)getuid());
	return 0;
}

static int
teardown(void **state)
{
	struct fx	*fx = *state;
	char		 path[PATH_MAX];

	if (fx == NULL)
		return 0;
	if (fx->abs_stream != -1)
		close(fx->abs_stream);
	if (fx->abs_dgram != -1)
		close(fx->abs_dgram);
	if (fx->path_stream != -1)
		close(fx->path_stream);
	if (fx->sibling > 0) {
		kill(fx->sibling, SIGKILL);
		(void)waitpid(fx->sibling, NULL, 0);	/* after SIGKILL */
	}
	if (fx->vsock[0] != '\0')
		(void)unlink(fx->vsock);
	if (fx->psock[0] != '\0')
		(void)unlink(fx->psock);
	snprintf(path, sizeof(path), "%s", fx->ws);
	if (path[0] != '\0' && strstr(path, "XXXXXX") == NULL)
		(void)rmdir(path);
	free(fx);
	return 0;
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_layers_by_abi),
		cmocka_unit_test(test_scope_unix_readonly),
		cmocka_unit_test(test_scope_unix_readwrite),
		cmocka_unit_test(test_scope_signal),
		cmocka_unit_test(test_without_scope_allowed),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}

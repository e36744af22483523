/*
 * The sandbox in one place: policies, the order the layers are applied in,
 * and the report a worker sends in its hello.
 *
 *   phase 1 (child, before exec): userns map, cgroup join, mounts, [pid 1
 *	init], setsid, rlimits, uid drop, close_range
 *   phase 2 (after exec, before untrusted input): caps, no_new_privs,
 *	not dumpable, Landlock, seccomp last
 *
 * A layer a profile requires but this machine cannot give fails the call
 * with e->missing set, unless the policy allows a weaker sandbox; then the
 * report says so (weaker = 1) and the note says what was skipped.
 */
#include <sys/types.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <sys/wait.h>

#include <linux/filter.h>
#include <linux/seccomp.h>

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>


#include "sandbox/sandbox_int.h"

#define SANDBOX_BASE_REQUIRE	(SANDBOX_SETSID | SANDBOX_CLOSEFDS | \
				 SANDBOX_PIDS | SANDBOX_RLIMITS | \
				 SANDBOX_CAPS | SANDBOX_NNP | SANDBOX_NODUMP | \
				 SANDBOX_LANDLOCK | SANDBOX_SECCOMP)

static const struct {
	const char	*name;
	int		 fs_write;
	int		 exec;
} sandbox_profiles[] = {
	{ "explore", 0, 0 },
	{ "plan", 0, 0 },
	{ "review", 0, 0 },
	{ "orchestrator", 0, 0 },	/* runs no tool at all */
	{ "test", 1, 1 },
	{ "general", 1, 1 },
};

/* The report of a child to the parent of `sandbox exec`. */
struct sandbox_msg {
	int			 ok;
	struct sandbox_report	 report;
	struct sandbox_error	 error;
};

/* policies */

void
sandbox_policy_require(struct sandbox_policy *p, const struct sandbox_caps *c)
{
	p->require = SANDBOX_BASE_REQUIRE;
	/* The protected paths are mounts: they exist only in a mount
	 * namespace, and so do the masks over the host's secrets, which a
	 * root-started worker would read by owning them. */
	p->require |= sandbox_protect_require(p);
	if (c != NULL ? c->root : geteuid() == 0)
		p->require |= SANDBOX_MNTNS;
}

int
sandbox_policy_init(struct sandbox_policy *p, const char *name,
    const char *workspace, int fs_write, int exec, struct sandbox_error *e)
{
	char	 real[PATH_MAX];

	memset(p, 0, sizeof(*p));
	if (name == NULL || name[0] == '\0' || strlcpy(p->name, name,
	    sizeof(p->name)) >= sizeof(p->name) || strchr(name, ';') != NULL)
		return sandbox_fail(e, 0, EINVAL, "bad profile name");
	if (workspace == NULL || workspace[0] == '\0')
		workspace = ".";
	if (realpath(workspace, real) == NULL)
		return sandbox_fail(e, 0, errno, "workspace %s", workspace);
	/* A writable "/" would hand root the whole system. */
	if (fs_write && strcmp(real, "/") == 0)
		return sandbox_fail(e, 0, EINVAL, "workspace / is the whole "
		    "filesystem: give a project directory for profile %s",
		    name);
	strlcpy(p->workspace, real, sizeof(p->workspace));
	p->fs_write = fs_write != 0;
	p->exec = exec != 0;
	p->want = SANDBOX_ALL;
	/*
	 * A worker of a profile that runs no program runs only our own
	 * code, which uses no SysV IPC or POSIX message queue: seccomp
	 * denies those calls there (sandbox_seccomp_rules.c; so it does to
	 * the one command of `sandbox exec`), which reaches no IPC object at
	 * all, where a namespace of its own would still let it make some.
	 * It also spares each worker a namespace's mqueue mount and its
	 * deferred free. Profiles that run programs keep CLONE_NEWIPC.
	 */
	if (!p->exec)
		p->want &= ~SANDBOX_IPCNS;
	p->limits.cpu_sec = 600;
	p->limits.as_bytes = 4ULL << 30;
	p->limits.fsize_bytes = 1ULL << 30;
	p->limits.nofile = 1024;
	p->limits.nproc = 256;
	p->limits.tmpfs_bytes = 256ULL << 20;
	p->limits.mem_bytes = 4ULL << 30;
	p->uid = 65534;
	p->gid = 65534;
	/*
	 * What git and warren read outside any sandbox: the whole of .git
	 * (hooks, config and its fsmonitor, and the rest: a renamed and
	 * rebuilt copy of it ran them all), and .warren.
	 */
	if (sandbox_policy_protect(p, ".git", SANDBOX_PROTECT_RO, e) == -1 ||
	    sandbox_policy_protect(p, ".warren", SANDBOX_PROTECT_RO, e) == -1)
		return -1;
	sandbox_policy_require(p, NULL);
	return 0;
}

int
sandbox_policy_for_profile(struct sandbox_policy *p, const char *name,
    const char *workspace, struct sandbox_error *e)
{
	size_t	 i;

	for (i = 0; i < sizeof(sandbox_profiles) / sizeof(sandbox_profiles[0]);
	    i++)
		if (name != NULL && strcmp(name, sandbox_profiles[i].name) == 0)
			return sandbox_policy_init(p, name, workspace,
			    sandbox_profiles[i].fs_write,
			    sandbox_profiles[i].exec, e);
	return sandbox_fail(e, 0, ENOENT, "unknown profile '%s' (explore, "
	    "plan, review, test, general)", name == NULL ? "" : name);
}

/* "v1;a=HEX;w=0;x=0;aw=0;want=HEX;req=HEX;u=N;ll=FD;lla=ABI;n=NAME;ws=PATH"
 * (ws last: a path may hold ';'). */
int
sandbox_policy_encode(const struct sandbox_policy *p,
    const struct sandbox_phase1 *ph1, char *buf, size_t len)
{
	int	 n;

	n = snprintf(buf, len, "v1;a=%x;w=%d;x=%d;aw=%d;want=%x;req=%x;u=%u;"
	    "ll=%d;lla=%d;n=%s;ws=%s", ph1->applied, p->fs_write, p->exec,
	    p->allow_weaker, p->want, p->require, (unsigned)p->uid,
	    ph1->landlock_fd, ph1->landlock_abi, p->name, p->workspace);
	if (n < 0 || (size_t)n >= len) {
		errno = ENAMETOOLONG;
		return -1;
	}
	return 0;
}

static int
sandbox_decode_hex(const char *s, unsigned *out)
{
	char		*end;
	unsigned long	 v;

	errno = 0;
	v = strtoul(s, &end, 16);
	if (errno != 0 || end == s || (*end != ';' && *end != '\0') ||
	    v > SANDBOX_ALL)
		return -1;
	*out = (unsigned)v;
	return 0;
}

int
sandbox_policy_decode(const char *s, struct sandbox_policy *p,
    struct sandbox_phase1 *ph1, struct sandbox_error *e)
{
	char		 name[SANDBOX_NAME_LEN];
	const char	*ws, *f;
	unsigned	 a, want, req, w, x, aw, uid;
	int		 llfd, llabi;
	size_t		 n;

	if (s == NULL || strncmp(s, "v1;", 3) != 0)
		return sandbox_fail(e, 0, EINVAL, "bad %s (version)",
		    SANDBOX_ENV);
	if ((f = strstr(s, ";a=")) == NULL ||
	    sandbox_decode_hex(f + 3, &a) == -1 ||
	    (f = strstr(s, ";want=")) == NULL ||
	    sandbox_decode_hex(f + 6, &want) == -1 ||
	    (f = strstr(s, ";req=")) == NULL ||
	    sandbox_decode_hex(f + 5, &req) == -1 ||
	    sscanf(s, "v1;a=%*x;w=%u;x=%u;aw=%u;want=%*x;req=%*x;u=%u;"
	    "ll=%d;lla=%d;", &w, &x, &aw, &uid, &llfd, &llabi) != 6 ||
	    w > 1 || x > 1 || aw > 1 ||
	    (f = strstr(s, ";n=")) == NULL || (ws = strstr(s, ";ws=")) == NULL ||
	    ws < f)
		return sandbox_fail(e, 0, EINVAL, "bad %s", SANDBOX_ENV);
	/* No ruleset, or one on an fd above stdio with an ABI we know. */
	if (llfd == -1 ? llabi != 0 : llfd < 3 || llabi < 1 ||
	    llabi > SANDBOX_LANDLOCK_MAX)
		return sandbox_fail(e, 0, EINVAL, "bad %s (Landlock ruleset "
		    "fd %d, ABI %d)", SANDBOX_ENV, llfd, llabi);
	n = (size_t)(ws - (f + 3));
	if (n == 0 || n >= sizeof(name))
		return sandbox_fail(e, 0, EINVAL, "bad %s (name)", SANDBOX_ENV);
	memcpy(name, f + 3, n);
	name[n] = '\0';
	ws += 4;
	if (ws[0] != '/')
		return sandbox_fail(e, 0, EINVAL, "bad %s (workspace)",
		    SANDBOX_ENV);
	if (sandbox_policy_init(p, name, ws, (int)w, (int)x, e) == -1)
		return -1;
	p->allow_weaker = (int)aw;
	p->want = want;
	p->require = req;
	p->uid = (uid_t)uid;
	if (ph1 != NULL) {
		ph1->applied = a & SANDBOX_PHASE1;
		ph1->landlock_fd = llfd;
		ph1->landlock_abi = llabi;
	}
	return 0;
}

/* reports */

void
sandbox_report_init(struct sandbox_report *r, unsigned required)
{
	memset(r, 0, sizeof(*r));
	r->required = required;
}

static void
sandbox_report_add(struct sandbox_report *r, const char *s)
{
	if (r->nlayers < SANDBOX_REPORT_MAX)
		strlcpy(r->layers[r->nlayers++], s, SANDBOX_LAYER_LEN);
}

void
sandbox_report_fill(struct sandbox_report *r, unsigned applied,
    int landlock_abi, uid_t uid, int cgroup)
{
	char	 s[SANDBOX_LAYER_LEN];
	size_t	 i;

	r->applied = applied;
	r->landlock_abi = landlock_abi;
	r->nlayers = 0;
	for (i = 0; i < sandbox_nlayers; i++) {
		if (!(applied & sandbox_layers[i].bit))
			continue;
		switch (sandbox_layers[i].bit) {
		case SANDBOX_PIDS:
			sandbox_report_add(r, cgroup ? "cgroup:pids" : "nproc");
			break;
		case SANDBOX_MEMORY:
			sandbox_report_add(r, "cgroup:memory");
			break;
		case SANDBOX_UIDDROP:
			snprintf(s, sizeof(s), "uid:%u", (unsigned)uid);
			sandbox_report_add(r, s);
			break;
		case SANDBOX_LANDLOCK:
			snprintf(s, sizeof(s), "landlock:abi%d", landlock_abi);
			sandbox_report_add(r, s);
			break;
		default:
			sandbox_report_add(r, sandbox_layers[i].name);
			break;
		}
	}
	r->weaker = (r->required & ~applied) != 0;
}

static int
sandbox_report_bit(const char *s, unsigned *bit, int *abi)
{
	const char	*errstr;
	size_t		 i;

	*abi = 0;
	if (strcmp(s, "cgroup:pids") == 0 || strcmp(s, "nproc") == 0) {
		*bit = SANDBOX_PIDS;
		return 0;
	}
	if (strcmp(s, "cgroup:memory") == 0) {
		*bit = SANDBOX_MEMORY;
		return 0;
	}
	if (strncmp(s, "uid:", 4) == 0) {
		strtonum(s + 4, 1, UINT_MAX, &errstr);
		*bit = SANDBOX_UIDDROP;
		return errstr == NULL ? 0 : -1;
	}
	if (strncmp(s, "landlock:abi", 12) == 0) {
		*abi = (int)strtonum(s + 12, 1, 99, &errstr);
		*bit = SANDBOX_LANDLOCK;
		return errstr == NULL ? 0 : -1;
	}
	for (i = 0; i < sandbox_nlayers; i++)
		if (strcmp(s, sandbox_layers[i].name) == 0 &&
		    sandbox_layers[i].bit != SANDBOX_PIDS &&
		    sandbox_layers[i].bit != SANDBOX_MEMORY &&
		    sandbox_layers[i].bit != SANDBOX_UIDDROP &&
		    sandbox_layers[i].bit != SANDBOX_LANDLOCK) {
			*bit = sandbox_layers[i].bit;
			return 0;
		}
	return -1;
}

int
sandbox_report_parse(struct sandbox_report *r, const char *const *layers,
    int n, struct sandbox_error *e)
{
	unsigned	 bit;
	int		 i, abi;

	sandbox_report_init(r, 0);
	if (n < 0 || n > SANDBOX_REPORT_MAX)
		return sandbox_fail(e, 0, ERANGE, "report of %d layers", n);
	for (i = 0; i < n; i++) {
		if (layers[i] == NULL ||
		    strnlen(layers[i], SANDBOX_LAYER_LEN) >= SANDBOX_LAYER_LEN ||
		    sandbox_report_bit(layers[i], &bit, &abi) == -1)
			return sandbox_fail(e, 0, EINVAL,
			    "unknown layer in report (#%d)", i);
		if (r->applied & bit)
			return sandbox_fail(e, 0, EINVAL,
			    "layer %s reported twice", layers[i]);
		r->applied |= bit;
		if (abi != 0)
			r->landlock_abi = abi;
		strlcpy(r->layers[r->nlayers++], layers[i], SANDBOX_LAYER_LEN);
	}
	return 0;
}

static void
sandbox_mask_names(unsigned mask, char *buf, size_t len)
{
	size_t	 i;

	buf[0] = '\0';
	for (i = 0; i < sandbox_nlayers; i++) {
		if (!(mask & sandbox_layers[i].bit))
			continue;
		if (buf[0] != '\0')
			strlcat(buf, ", ", len);
		strlcat(buf, sandbox_layers[i].name, len);
	}
}

int
sandbox_report_check(const struct sandbox_policy *p,
    const struct sandbox_report *r, struct sandbox_error *e)
{
	char		 names[SANDBOX_ERR_LEN];
	unsigned	 missing;

	missing = p->require & ~r->applied;
	if (missing == 0 || p->allow_weaker)
		return 0;
	sandbox_mask_names(missing, names, sizeof(names));
	if (e != NULL) {
		e->layer = missing;
		e->missing = 1;
		e->errnum = 0;
		snprintf(e->msg, sizeof(e->msg), "profile %s requires "
		    "layers this worker did not apply: %s", p->name, names);
	}
	errno = EPERM;
	return -1;
}

void
sandbox_report_string(const struct sandbox_report *r, char *buf, size_t len)
{
	int	 i;

	if (len == 0)
		return;
	buf[0] = '\0';
	for (i = 0; i < r->nlayers; i++) {
		if (i > 0)
			strlcat(buf, ",", len);
		strlcat(buf, r->layers[i], len);
	}
	if (r->weaker) {
		char	 names[SANDBOX_ERR_LEN];

		sandbox_mask_names(r->required & ~r->applied, names,
		    sizeof(names));
		strlcat(buf, " (weaker: missing ", len);
		strlcat(buf, names, len);
		strlcat(buf, ")", len);
	}
}

/* A missing layer: fatal when required, unless weaker is accepted. */
static int
sandbox_lack(const struct sandbox_policy *p, unsigned bit, char *note,
    size_t notelen, struct sandbox_error *e)
{
	if ((p->require & bit) && !p->allow_weaker)
		return -1;
	sandbox_note(note, notelen, "%s", e->msg);
	return 0;
}

/* phase 1 */

/* sandbox_caps_freeze(): the probe of the first call, for every later one. */
static struct sandbox_caps	sandbox_caps_cache;
static int			sandbox_caps_cached;

void
sandbox_caps_freeze(void)
{
	sandbox_caps_probe(&sandbox_caps_cache, 0);
	sandbox_caps_cached = 1;
}

int
sandbox_cgroup_sweep(void)
{
	struct sandbox_caps	c;
	int			n;

	if (sandbox_caps_cached)
		memcpy(&c, &sandbox_caps_cache, sizeof(c));
	else
		sandbox_caps_probe(&c, 0);
	n = c.cgroup != 0 ? sandbox_cgroup_sweep_dir(c.cgroup_path) : 0;
	if (c.memcg != 0 && (c.cgroup == 0 ||
	    strcmp(c.memcg_path, c.cgroup_path) != 0))
		n += sandbox_cgroup_sweep_dir(c.memcg_path);
	return n;
}

int
sandbox_prepare(struct sandbox *sb, const struct sandbox_policy *p,
    struct sandbox_error *e)
{
	char		 names[SANDBOX_ERR_LEN];
	unsigned	 planned, missing;
	int		 flags;

	memset(sb, 0, sizeof(*sb));
	memcpy(&sb->policy, p, sizeof(*p));
	sb->pid = -1;
	sb->notify_fd = -1;
	sb->sock[0] = sb->sock[1] = -1;
	sb->landlock_fd = -1;
	if (sb->policy.workspace[0] != '/')
		return sandbox_fail(e, 0, EINVAL, "workspace must be absolute");
	if (sandbox_caps_cached)
		memcpy(&sb->caps, &sandbox_caps_cache, sizeof(sb->caps));
	else
		sandbox_caps_probe(&sb->caps, 0);
	planned = SANDBOX_SETSID | SANDBOX_CLOSEFDS | SANDBOX_RLIMITS;
	if ((p->want & SANDBOX_PIDS) && sb->caps.cgroup != 0) {
		if (sandbox_cgroup_create(sb, e) == 0)
			planned |= SANDBOX_PIDS;
		else
			sandbox_note(sb->note, sizeof(sb->note), "%s", e->msg);
	}
	if ((p->want & SANDBOX_MEMORY) && p->limits.mem_bytes != 0 &&
	    sb->caps.memcg != 0) {
		if (sandbox_cgroup_create_mem(sb, e) == 0)
			planned |= SANDBOX_MEMORY;
		else
			sandbox_note(sb->note, sizeof(sb->note), "%s", e->msg);
	}
	if ((p->want & SANDBOX_PIDS) && !(planned & SANDBOX_PIDS)) {
		/* RLIMIT_NPROC, which needs a uid other than 0. */
		if (!sb->caps.root)
			planned |= SANDBOX_PIDS;
		else if ((p->want & SANDBOX_UIDDROP) && p->uid != 0)
			planned |= SANDBOX_PIDS | SANDBOX_UIDDROP;
	}
	flags = sandbox_ns_flags(sb);
	if (flags & CLONE_NEWUSER)
		planned |= SANDBOX_USERNS;
	if (flags & CLONE_NEWNS)
		planned |= SANDBOX_MNTNS;
	if (flags & CLONE_NEWPID)
		planned |= SANDBOX_PIDNS;
	if ((flags & CLONE_NEWNET) || sandbox_ns_netns_inherited(sb))
		planned |= SANDBOX_NETNS;
	if (flags & CLONE_NEWIPC)
		planned |= SANDBOX_IPCNS;
	if (sb->caps.landlock_abi == 0)
		missing = SANDBOX_LANDLOCK;
	else {
		missing = 0;
		if (p->want & SANDBOX_LANDLOCK)
			sandbox_landlock_preopen();
	}
	if (!sb->caps.seccomp)
		missing |= SANDBOX_SECCOMP;
	missing |= p->require & SANDBOX_PHASE1 & ~planned;
	sb->cloneflags = flags;
	sb->planned = planned;
	sb->outer_uid = getuid();
	sb->outer_gid = getgid();
	if (missing != 0) {
		sandbox_mask_names(missing, names, sizeof(names));
		if ((missing & p->require) && !p->allow_weaker) {
			sandbox_missing(e, missing & p->require, "this machine "
			    "cannot apply %s, which profile %s requires (%s); "
			    "--allow-weaker-sandbox runs it anyway", names,
			    p->name, sb->caps.detail[0] != '\0' ?
			    sb->caps.detail : "see warren sandbox check");
			sandbox_release(sb);
			return -1;
		}
		sandbox_note(sb->note, sizeof(sb->note), "weaker sandbox: "
		    "no %s", names);
	}
	return 0;
}

/*
 * Clone with the namespaces planned; when the kernel refuses them and the
 * profile allows it, clone again without. clonefn returns like fork().
 */
static pid_t
sandbox_clone(struct sandbox *sb, pid_t (*clonefn)(int, void *), void *arg,
    struct sandbox_error *e)
{
	pid_t	 pid;

	pid = clonefn(sb->cloneflags, arg);
	if (pid == -1 && sb->cloneflags != 0 && (errno == EPERM ||
	    errno == EINVAL || errno == ENOSPC || errno == EUSERS)) {
		sandbox_note(sb->note, sizeof(sb->note), "namespaces refused "
		    "by the kernel (clone: %s)", strerror(errno));
		if ((sb->policy.require & SANDBOX_NAMESPACES & sb->planned) &&
		    !sb->policy.allow_weaker)
			return sandbox_missing(e, sb->planned &
			    SANDBOX_NAMESPACES & sb->policy.require,
			    "clone into namespaces: %s", strerror(errno));
		sb->planned &= ~SANDBOX_NAMESPACES;
		sb->cloneflags = 0;
		pid = clonefn(0, arg);
	}
	if (pid == -1)
		return sandbox_fail(e, 0, errno, "clone");
	return pid;
}

static pid_t
sandbox_fork_clone(int flags, void *arg)
{
	(void)arg;
	return sandbox_ns_clone(flags);
}

/*
 * Before the clone: the seccomp-notify channel if asked for, and the
 * Landlock ruleset with the rules on what the child sees as we do (the
 * child adds those on its own mounts). Building it here, from the paths
 * this process opened once, is what makes the layer cheap per child.
 */
static int
sandbox_parent_open(struct sandbox *sb, struct sandbox_error *e)
{
	int	 fd;

	if (sb->use_notify && socketpair(AF_UNIX, SOCK_SEQPACKET |
	    SOCK_CLOEXEC, 0, sb->sock) == -1)
		return sandbox_fail(e, 0, errno, "socketpair");
	if (!(sb->policy.want & SANDBOX_LANDLOCK) || sb->caps.landlock_abi < 1)
		return 0;
	if ((fd = sandbox_landlock_ruleset(&sb->policy, sb->caps.landlock_abi,
	    e)) == -1)
		return -1;
	/* Out of the way of the caller's dup2s in the child. */
	if (fd < SANDBOX_FD_OWN) {
		sb->landlock_fd = fcntl(fd, F_DUPFD_CLOEXEC, SANDBOX_FD_OWN);
		close(fd);
		if (sb->landlock_fd == -1)
			return sandbox_fail(e, SANDBOX_LANDLOCK, errno,
			    "move the Landlock ruleset to an fd from %d up",
			    SANDBOX_FD_OWN);
	} else
		sb->landlock_fd = fd;
	sb->landlock_abi = sb->caps.landlock_abi;
	return 0;
}

/* Our copy of the ruleset, once the child has its own (or none). */
static void
sandbox_ruleset_close(struct sandbox *sb)
{
	if (sb->landlock_fd != -1) {
		close(sb->landlock_fd);
		sb->landlock_fd = -1;
	}
}

/* In the child: no pid, and not the parent's end of the channel. */
static void
sandbox_forked_child(struct sandbox *sb)
{
	if (sb->sock[0] != -1)
		close(sb->sock[0]);
	sb->sock[0] = -1;
	sb->pid = 0;
}

/* In the parent: the child's pid, and not its end of the channel. */
static void
sandbox_forked_parent(struct sandbox *sb, pid_t pid)
{
	sandbox_ruleset_close(sb);
	sb->pid = pid;
	if (sb->sock[1] != -1) {
		close(sb->sock[1]);
		sb->sock[1] = -1;
	}
}

pid_t
sandbox_fork(struct sandbox *sb, struct sandbox_error *e)
{
	pid_t	 pid;

	if (sandbox_parent_open(sb, e) == -1)
		return -1;
	if ((pid = sandbox_clone(sb, sandbox_fork_clone, NULL, e)) == -1) {
		sandbox_ruleset_close(sb);
		return -1;
	}
	if (pid == 0)
		sandbox_forked_child(sb);
	else
		sandbox_forked_parent(sb, pid);
	return pid;
}

struct sandbox_spawn {
	struct sandbox		*sb;
	sandbox_spawn_fn	 fn;
	void			*arg;
};

/*
 * The child of sandbox_spawn. With CLONE_VM it shares the parent's memory
 * until its exec, so it works on a copy of the sandbox: nothing it writes
 * may change what the parent holds.
 */
static int
sandbox_spawn_main(void *arg)
{
	struct sandbox_spawn	*s = arg;
	struct sandbox		 sb;

	memcpy(&sb, s->sb, sizeof(sb));
	sandbox_forked_child(&sb);
	sb.direct = 1;
	s->fn(&sb, s->arg);
	_exit(WARREN_SANDBOX_EXEC_FAILED);
}

/*
 * The stack the child runs on, above a guard page. One is enough:
 * CLONE_VFORK holds this thread until the child has exec'd or died, and
 * it is kept, so its pages are faulted in once per process, not once per
 * spawn.
 */
#define SANDBOX_SPAWN_STACK	(256 * 1024)
#define SANDBOX_SPAWN_GUARD	4096
static char	*sandbox_spawn_stack;

static int
sandbox_spawn_stack_get(struct sandbox_error *e)
{
	void	*p;

	if (sandbox_spawn_stack != NULL)
		return 0;
	p = mmap(NULL, SANDBOX_SPAWN_GUARD + SANDBOX_SPAWN_STACK, PROT_READ |
	    PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_STACK, -1, 0);
	if (p == MAP_FAILED)
		return sandbox_fail(e, 0, errno, "mmap a stack of %d kB for "
		    "the child", SANDBOX_SPAWN_STACK / 1024);
	if (mprotect(p, SANDBOX_SPAWN_GUARD, PROT_NONE) == -1) {
		sandbox_fail(e, 0, errno, "mprotect the child's guard page");
		munmap(p, SANDBOX_SPAWN_GUARD + SANDBOX_SPAWN_STACK);
		return -1;
	}
	sandbox_spawn_stack = (char *)p + SANDBOX_SPAWN_GUARD;
	return 0;
}

static pid_t
sandbox_spawn_clone(int flags, void *arg)
{
	pid_t	 pid;

	if (SANDBOX_SANITIZER) {
		/* ASan cannot follow a CLONE_VM child on its own stack. */
		pid = sandbox_ns_clone(flags | CLONE_VFORK);
		if (pid == 0)
			(void)sandbox_spawn_main(arg);
		return pid;
	}
	return clone(sandbox_spawn_main, sandbox_spawn_stack +
	    SANDBOX_SPAWN_STACK, flags | CLONE_VM | CLONE_VFORK | SIGCHLD,
	    arg);
}

pid_t
sandbox_spawn(struct sandbox *sb, sandbox_spawn_fn fn, void *arg,
    struct sandbox_error *e)
{
	struct sandbox_spawn	 s;
	sigset_t		 all, old;
	pid_t			 pid;

	if (!SANDBOX_SANITIZER && sandbox_spawn_stack_get(e) == -1)
		return -1;
	if (sandbox_parent_open(sb, e) == -1)
		return -1;
	s.sb = sb;
	s.fn = fn;
	s.arg = arg;
	/* No handler of ours may run in the child while it shares memory. */
	sigfillset(&all);
	sigprocmask(SIG_SETMASK, &all, &old);
	pid = sandbox_clone(sb, sandbox_spawn_clone, &s, e);
	sigprocmask(SIG_SETMASK, &old, NULL);
	if (pid == -1) {
		sandbox_ruleset_close(sb);
		return -1;
	}
	sandbox_forked_parent(sb, pid);
	return pid;
}

/* close_range around the fds kept (0-2, keep[] and the two others). */
static int
sandbox_closefds(const int *keep, int nkeep, int also, int also2,
    struct sandbox_error *e)
{
	int	 fds[72], n = 0, i, j, t, lo;

	if (nkeep < 0 || nkeep > 64)
		return sandbox_fail(e, SANDBOX_CLOSEFDS, EINVAL,
		    "%d fds to keep (at most 64)", nkeep);

	for (i = 0; i < 3; i++)
		fds[n++] = i;
	for (i = 0; i < nkeep && n < 70; i++)
		if (keep[i] > 2)
			fds[n++] = keep[i];
	if (also > 2)
		fds[n++] = also;
	if (also2 > 2)
		fds[n++] = also2;
	for (i = 1; i < n; i++)
		for (j = i; j > 0 && fds[j - 1] > fds[j]; j--) {
			t = fds[j];
			fds[j] = fds[j - 1];
			fds[j - 1] = t;
		}
	lo = 0;
	for (i = 0; i < n; i++) {
		if (fds[i] > lo && syscall(SYS_close_range, (unsigned)lo,
		    (unsigned)fds[i] - 1, 0U) == -1)
			return sandbox_fail(e, SANDBOX_CLOSEFDS, errno,
			    "close_range");
		if (fds[i] + 1 > lo)
			lo = fds[i] + 1;
	}
	if (syscall(SYS_close_range, (unsigned)lo, ~0U, 0U) == -1)
		return sandbox_fail(e, SANDBOX_CLOSEFDS, errno, "close_range");
	return 0;
}

void
sandbox_close_from(const struct sandbox *sb, int lowfd)
{
	int	 ll = sb->landlock_fd;

	if (ll >= lowfd) {
		if (ll > lowfd)
			(void)syscall(SYS_close_range, (unsigned)lowfd,
			    (unsigned)ll - 1, 0U);
		lowfd = ll + 1;
	}
	(void)syscall(SYS_close_range, (unsigned)lowfd, ~0U, 0U);
}

/* Phase 1 after the pid-1 split: in the process that will exec. */
static int
sandbox_child_rest(struct sandbox *sb, const int *keep, int nkeep,
    unsigned a, struct sandbox_error *e)
{
	const struct sandbox_policy	*p = &sb->policy;
	struct sandbox_phase1		 ph1;
	int				 nproc = 0;

	if (setsid() == -1)
		return sandbox_fail(e, SANDBOX_SETSID, errno, "setsid%s",
		    errno == EPERM && getpgrp() == getpid() ? " (the child is "
		    "already a process group leader: do not setpgid it, "
		    "sandbox_child starts a session)" : "");
	a |= SANDBOX_SETSID;
	if ((sb->planned & SANDBOX_PIDS) && !(a & SANDBOX_PIDS)) {
		nproc = (int)p->limits.nproc;
		a |= SANDBOX_PIDS;
	}
	if (sandbox_rlimit_apply(&p->limits, nproc, sb->note, sizeof(sb->note),
	    e) == -1)
		return -1;
	a |= SANDBOX_RLIMITS;
	if (sandbox_caps_bound_child((sb->cloneflags & CLONE_NEWUSER) != 0,
	    e) == -1)
		return -1;
	if (sb->planned & SANDBOX_UIDDROP) {
		if (sandbox_caps_uid_drop(p->uid, p->gid, e) == -1)
			return -1;
		a |= SANDBOX_UIDDROP;
	}
	/*
	 * The parent's Landlock ruleset (sandbox_parent_open), with the
	 * rules for our own mounts now that they are done. Phase 2
	 * restricts itself with it, so it stays open across the exec.
	 */
	if (sb->landlock_fd != -1) {
		if (sandbox_landlock_ruleset_own(sb->landlock_fd, p,
		    sb->landlock_abi, e) == -1)
			return -1;
		if (fcntl(sb->landlock_fd, F_SETFD, 0) == -1)
			return sandbox_fail(e, SANDBOX_LANDLOCK, errno,
			    "keep the Landlock ruleset (fd %d) across exec",
			    sb->landlock_fd);
	}
	if (sandbox_closefds(keep, nkeep, sb->sock[1], sb->landlock_fd,
	    e) == -1)
		return -1;
	a |= SANDBOX_CLOSEFDS;
	sb->applied = a;
	ph1.applied = a;
	ph1.landlock_fd = sb->landlock_fd;
	ph1.landlock_abi = sb->landlock_fd != -1 ? sb->landlock_abi : 0;
	memcpy(sb->env, SANDBOX_ENV "=", sizeof(SANDBOX_ENV));
	if (sandbox_policy_encode(p, &ph1, sb->env + sizeof(SANDBOX_ENV),
	    sizeof(sb->env) - sizeof(SANDBOX_ENV)) == -1)
		return sandbox_fail(e, 0, ENAMETOOLONG, "encode %s",
		    SANDBOX_ENV);
	return 0;
}

struct sandbox_vfork {
	struct sandbox		*sb;
	const int		*keep;
	int			 nkeep;
	unsigned		 applied;
	sigset_t		 old;
	struct sandbox_error	*e;
};

#define SANDBOX_VFORK_STACK	(512 * 1024)

/* The command's process, sharing pid 1's memory until it execs. */
static int
sandbox_vfork_main(void *arg)
{
	struct sandbox_vfork	*v = arg;
	int			 rc;

	sandbox_ns_init_restore(&v->old);
	prctl(PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0);
	rc = sandbox_child_rest(v->sb, v->keep, v->nkeep, v->applied, v->e);
	v->sb->exec_fn(v->sb, rc, v->e, v->sb->exec_arg);
	_exit(WARREN_SANDBOX_EXEC_FAILED);
}

/* pid 1 starts the command: vfork-style with exec_fn, else fork(). */
static int
sandbox_child_init(struct sandbox *sb, const int *keep, int nkeep,
    unsigned a, struct sandbox_error *e)
{
	struct sandbox_vfork	 v;
	void			*stack;
	pid_t			 pid;

	memset(&v, 0, sizeof(v));
	sandbox_ns_init_signals(&v.old);
	if (sb->exec_fn != NULL && !SANDBOX_SANITIZER) {
		v.sb = sb;
		v.keep = keep;
		v.nkeep = nkeep;
		v.applied = a;
		v.e = e;
		if ((stack = mmap(NULL, SANDBOX_VFORK_STACK, PROT_READ |
		    PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_STACK, -1,
		    0)) == MAP_FAILED)
			return sandbox_fail(e, SANDBOX_PIDNS, errno,
			    "mmap a stack for the command");
		pid = clone(sandbox_vfork_main, (char *)stack +
		    SANDBOX_VFORK_STACK, CLONE_VM | CLONE_VFORK | SIGCHLD, &v);
		if (pid == -1)
			return sandbox_fail(e, SANDBOX_PIDNS, errno,
			    "clone the command from pid 1");
		munmap(stack, SANDBOX_VFORK_STACK);
		sandbox_ruleset_close(sb);	/* the command has its own */
		sandbox_ns_init(pid);
	}
	if ((pid = fork()) == -1)
		return sandbox_fail(e, SANDBOX_PIDNS, errno,
		    "fork the command from pid 1");
	if (pid != 0) {
		sandbox_ruleset_close(sb);
		sandbox_ns_init(pid);
	}
	sandbox_ns_init_restore(&v.old);
	prctl(PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0);
	return 0;
}

int
sandbox_child(struct sandbox *sb, const int *keep, int nkeep,
    struct sandbox_error *e)
{
	const struct sandbox_policy	*p = &sb->policy;
	int				 flags = sb->cloneflags, rc;
	unsigned			 a = 0;

	prctl(PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0);
	if (flags & CLONE_NEWUSER) {
		if (sandbox_ns_userns_map(sb->outer_uid, sb->outer_gid,
		    e) == -1)
			goto done;
		a |= SANDBOX_USERNS;
	}
	if (sb->cgroup[0] != '\0') {
		if (sandbox_cgroup_join(sb->cgroup, SANDBOX_PIDS, e) == -1)
			goto done;
		a |= SANDBOX_PIDS;
	}
	if (sb->memcg[0] != '\0' &&
	    sandbox_cgroup_join(sb->memcg, SANDBOX_MEMORY, e) == -1)
		goto done;
	if (sb->memory)
		a |= SANDBOX_MEMORY;
	if (flags & CLONE_NEWNS) {
		/*
		 * A read-only profile with a Landlock ruleset gets neither a
		 * private /tmp and /dev/shm nor read-only binds of /proc/sys
		 * and /proc/sysrq-trigger, nor read-only protected paths.
		 * Its ruleset grants nothing under the first two and only
		 * reads under /proc and the workspace, and seccomp denies it
		 * every open for writing and every rename: two walls
		 * already, where those mounts, four a worker, would hide
		 * only what it cannot open. It keeps the masks (what it
		 * must not even read). A child whose ruleset fails to apply
		 * does not run (phase 2). Read-write profiles keep them all.
		 */
		if (sandbox_ns_mounts(p, (flags & CLONE_NEWPID) != 0,
		    sb->landlock_fd != -1, e) == -1)
			goto done;
		a |= SANDBOX_MNTNS;
		if (flags & CLONE_NEWPID)
			a |= SANDBOX_PIDNS;
	}
	if ((flags & CLONE_NEWNET) || sandbox_ns_netns_inherited(sb))
		a |= SANDBOX_NETNS;
	if (flags & CLONE_NEWIPC)
		a |= SANDBOX_IPCNS;
	if ((flags & CLONE_NEWPID) && !sb->direct &&
	    sandbox_child_init(sb, keep, nkeep, a, e) == -1)
		goto done;
	if (sandbox_child_rest(sb, keep, nkeep, a, e) == -1)
		goto done;
	if (sb->exec_fn != NULL)
		sb->exec_fn(sb, 0, e, sb->exec_arg);
	return 0;
done:
	rc = -1;
	if (sb->exec_fn != NULL) {
		sb->exec_fn(sb, rc, e, sb->exec_arg);
		_exit(WARREN_SANDBOX_EXEC_FAILED);
	}
	return rc;
}

/* phase 2 */

static int
sandbox_phase2(const struct sandbox_policy *p, const struct sandbox_phase1 *ph1,
    int scflags, int *notify_fd, uid_t uid, int cgroup,
    struct sandbox_report *r, struct sandbox_error *e)
{
	unsigned	 applied = ph1->applied;
	int		 abi = 0, llfd = ph1->landlock_fd, rc;

	sandbox_report_init(r, p->require);
	if (sandbox_caps_drop(e) == -1)
		goto fail;
	applied |= SANDBOX_CAPS;
	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) == -1) {
		sandbox_fail(e, SANDBOX_NNP, errno, "PR_SET_NO_NEW_PRIVS");
		goto fail;
	}
	applied |= SANDBOX_NNP;
	if (prctl(PR_SET_DUMPABLE, 0, 0, 0, 0) == -1) {
		sandbox_fail(e, SANDBOX_NODUMP, errno, "PR_SET_DUMPABLE 0");
		goto fail;
	}
	applied |= SANDBOX_NODUMP;
	if (!(p->want & SANDBOX_LANDLOCK))
		rc = -1;
	else if (llfd != -1) {
		/* Phase 1's ruleset (sandbox_child_rest); closed either way. */
		rc = sandbox_landlock_restrict(llfd, ph1->landlock_abi, e);
		llfd = -1;
		abi = rc == 0 ? ph1->landlock_abi : 0;
	} else
		rc = sandbox_landlock_apply(p, &abi, e);
	if (rc == 0)
		applied |= sandbox_landlock_layers(abi);
	else if (!(p->want & SANDBOX_LANDLOCK) || e->missing) {
		if (sandbox_lack(p, SANDBOX_LANDLOCK, r->note, sizeof(r->note),
		    e) == -1)
			goto fail;
	} else
		goto fail;
	if (llfd != -1) {
		close(llfd);
		llfd = -1;
	}
	if (SANDBOX_SANITIZER && (scflags & SANDBOX_SECCOMP_SELF))
		sandbox_note(r->note, sizeof(r->note), "sanitizer build: "
		    "ptrace and PR_SET_DUMPABLE allowed for LeakSanitizer");
	if (sandbox_seccomp_apply(p, scflags, notify_fd, e) == -1)
		return -1;
	applied |= SANDBOX_SECCOMP;
	sandbox_report_fill(r, applied, abi, uid, cgroup);
	if (r->weaker && !p->allow_weaker) {
		char	 names[SANDBOX_ERR_LEN];

		sandbox_mask_names(p->require & ~applied, names,
		    sizeof(names));
		return sandbox_missing(e, p->require & ~applied,
		    "profile %s requires %s", p->name, names);
	}
	return 0;
fail:
	/* Never leave an unapplied ruleset to what runs next. */
	if (llfd != -1)
		close(llfd);
	return -1;
}

int
sandbox_enter(const struct sandbox_policy *p, struct sandbox_report *r,
    struct sandbox_error *e)
{
	struct sandbox_policy	 envp;
	struct sandbox_phase1	 ph1 = { 0, -1, 0 };
	const char		*env;
	int			 nfd;

	env = getenv(SANDBOX_ENV);
	if (env != NULL) {
		if (sandbox_policy_decode(env, &envp, &ph1, e) == -1)
			return -1;
		if (p == NULL)
			p = &envp;
		else if (strcmp(p->name, envp.name) != 0 ||
		    p->fs_write != envp.fs_write || p->exec != envp.exec)
			return sandbox_fail(e, 0, EINVAL, "%s was set up for "
			    "profile %s, not %s", SANDBOX_ENV, envp.name,
			    p->name);
		unsetenv(SANDBOX_ENV);
	} else if (p == NULL)
		return sandbox_fail(e, 0, EINVAL, "no policy and no %s",
		    SANDBOX_ENV);
	if (sandbox_phase2(p, &ph1, SANDBOX_SECCOMP_SELF, &nfd,
	    (ph1.applied & SANDBOX_UIDDROP) ? geteuid() : 0,
	    (ph1.applied & SANDBOX_PIDS) &&
	    (ph1.applied & SANDBOX_UIDDROP) == 0 && getuid() == 0, r,
	    e) == -1)
		return -1;
	return 0;
}

int
sandbox_apply_self(const struct sandbox_policy *p, struct sandbox_report *r,
    struct sandbox_error *e)
{
	char			 note[SANDBOX_ERR_LEN] = "";
	struct sandbox_phase1	 ph1 = { 0, -1, 0 };
	unsigned		 a = 0;
	int			 nfd;

	if (setsid() != -1 || errno == EPERM)
		a |= SANDBOX_SETSID;
	if (sandbox_rlimit_apply(&p->limits, getuid() != 0 ?
	    (int)p->limits.nproc : 0, note, sizeof(note), e) == -1)
		return -1;
	a |= SANDBOX_RLIMITS | (getuid() != 0 ? SANDBOX_PIDS : 0);
	ph1.applied = a;
	if (sandbox_phase2(p, &ph1, SANDBOX_SECCOMP_SELF, &nfd, 0, 0, r,
	    e) == -1 && !(p->allow_weaker && e->missing))
		return -1;
	if (note[0] != '\0')
		sandbox_note(r->note, sizeof(r->note), "%s", note);
	return 0;
}

/* Send the report (and the listener fd) to the parent of sandbox exec. */
static int
sandbox_send(int sock, const struct sandbox_msg *m, int fd)
{
	struct msghdr	 msg;
	struct iovec	 iov;
	union {
		struct cmsghdr	 h;
		char		 buf[CMSG_SPACE(sizeof(int))];
	} cm;

	memset(&msg, 0, sizeof(msg));
	memset(&cm, 0, sizeof(cm));
	iov.iov_base = (void *)(uintptr_t)m;
	iov.iov_len = sizeof(*m);
	msg.msg_iov = &iov;
	msg.msg_iovlen = 1;
	if (fd != -1) {
		msg.msg_control = cm.buf;
		msg.msg_controllen = sizeof(cm.buf);
		cm.h.cmsg_level = SOL_SOCKET;
		cm.h.cmsg_type = SCM_RIGHTS;
		cm.h.cmsg_len = CMSG_LEN(sizeof(int));
		memcpy(CMSG_DATA(&cm.h), &fd, sizeof(int));
	}
	return sendmsg(sock, &msg, MSG_NOSIGNAL) == (ssize_t)sizeof(*m) ?
	    0 : -1;
}

int
sandbox_enter_exec(struct sandbox *sb, struct sandbox_report *r,
    struct sandbox_error *e)
{
	struct sandbox_msg	 m;
	struct sandbox_phase1	 ph1;
	int			 nfd = -1, rc;

	ph1.applied = sb->applied;
	ph1.landlock_fd = sb->landlock_fd;
	ph1.landlock_abi = sb->landlock_abi;
	sb->landlock_fd = -1;		/* phase 2 closes it */
	rc = sandbox_phase2(&sb->policy, &ph1, sb->use_notify ?
	    SANDBOX_SECCOMP_NOTIFY : 0, &nfd, sb->policy.uid,
	    sb->cgroup[0] != '\0', r, e);
	if (sb->note[0] != '\0')
		sandbox_note(r->note, sizeof(r->note), "%s", sb->note);
	if (sb->sock[1] == -1)
		return rc;
	memset(&m, 0, sizeof(m));
	m.ok = rc == 0;
	memcpy(&m.report, r, sizeof(*r));
	if (rc == -1)
		memcpy(&m.error, e, sizeof(*e));
	if (sandbox_send(sb->sock[1], &m, nfd) == -1 && rc == 0)
		rc = sandbox_fail(e, SANDBOX_SECCOMP, errno,
		    "send the seccomp listener to the parent");
	close(sb->sock[1]);
	sb->sock[1] = -1;
	if (nfd != -1)
		close(nfd);
	return rc;
}

int
sandbox_parent_report(struct sandbox *sb, struct sandbox_report *r,
    struct sandbox_error *e)
{
	struct sandbox_msg	 m;
	struct msghdr		 msg;
	struct iovec		 iov;
	struct cmsghdr		*h;
	union {
		struct cmsghdr	 h;
		char		 buf[CMSG_SPACE(sizeof(int))];
	} cm;
	ssize_t			 n;

	if (sb->sock[0] == -1)
		return sandbox_fail(e, 0, EBADF, "no channel to the child");
	memset(&msg, 0, sizeof(msg));
	iov.iov_base = &m;
	iov.iov_len = sizeof(m);
	msg.msg_iov = &iov;
	msg.msg_iovlen = 1;
	msg.msg_control = cm.buf;
	msg.msg_controllen = sizeof(cm.buf);
	do
		n = recvmsg(sb->sock[0], &msg, MSG_CMSG_CLOEXEC);
	while (n == -1 && errno == EINTR);
	close(sb->sock[0]);
	sb->sock[0] = -1;
	if (n != (ssize_t)sizeof(m))
		return sandbox_fail(e, 0, n == -1 ? errno : EPIPE,
		    "the sandboxed child failed before reporting");
	for (h = CMSG_FIRSTHDR(&msg); h != NULL; h = CMSG_NXTHDR(&msg, h))
		if (h->cmsg_level == SOL_SOCKET && h->cmsg_type == SCM_RIGHTS)
			memcpy(&sb->notify_fd, CMSG_DATA(h), sizeof(int));
	m.report.layers[SANDBOX_REPORT_MAX - 1][SANDBOX_LAYER_LEN - 1] = '\0';
	m.report.note[sizeof(m.report.note) - 1] = '\0';
	m.error.msg[sizeof(m.error.msg) - 1] = '\0';
	if (m.report.nlayers < 0 || m.report.nlayers > SANDBOX_REPORT_MAX)
		m.report.nlayers = 0;
	memcpy(r, &m.report, sizeof(*r));
	if (!m.ok) {
		if (e != NULL)
			memcpy(e, &m.error, sizeof(*e));
		return -1;
	}
	return 0;
}

/* The listener: one execve of a no-exec profile, then none; sockets never.
 * Every denial is named on log (if not NULL). */
int
sandbox_notify_handle(struct sandbox *sb, FILE *log)
{
	struct seccomp_notif		 req;
	struct seccomp_notif_resp	 resp;
	const char			*name;

	if (sb->notify_fd == -1)
		return -1;
	memset(&req, 0, sizeof(req));
	if (ioctl(sb->notify_fd, SECCOMP_IOCTL_NOTIF_RECV, &req) == -1) {
		if (errno == EINTR || errno == ENOENT)
			return 0;
		close(sb->notify_fd);
		sb->notify_fd = -1;
		return -1;
	}
	memset(&resp, 0, sizeof(resp));
	resp.id = req.id;
	/* The filter sends only these three here. */
	name = req.data.nr == __NR_execve ? "execve" :
	    req.data.nr == __NR_execveat ? "execveat" :
	    req.data.nr == __NR_socket ? "socket" : "syscall";
	if (req.data.nr != __NR_socket && sb->execs == 0) {
		/* Our own exec of the command, before anything ran. */
		sb->execs++;
		resp.flags = SECCOMP_USER_NOTIF_FLAG_CONTINUE;
	} else {
		resp.error = -EPERM;
		if (log != NULL && strcmp(name, "socket") == 0)
			fprintf(log, "warren: sandbox: %s profile: pid %u tried "
			    "socket(%s): denied\n", sb->policy.name,
			    (unsigned)req.pid, req.data.args[0] == AF_INET ?
			    "AF_INET" : req.data.args[0] == AF_INET6 ?
			    "AF_INET6" : req.data.args[0] == AF_UNIX ?
			    "AF_UNIX" : req.data.args[0] == AF_NETLINK ?
			    "AF_NETLINK" : req.data.args[0] == AF_PACKET ?
			    "AF_PACKET" : "another family");
		else if (log != NULL)
			fprintf(log, "warren: sandbox: %s profile: pid %u tried "
			    "%s: denied (no exec in this profile)\n",
			    sb->policy.name, (unsigned)req.pid, name);
	}
	if (ioctl(sb->notify_fd, SECCOMP_IOCTL_NOTIF_SEND, &resp) == -1 &&
	    errno != ENOENT) {
		close(sb->notify_fd);
		sb->notify_fd = -1;
		return -1;
	}
	return 0;
}

int
sandbox_kill(struct sandbox *sb, int sig)
{
	if (sb->pid <= 0)
		return -1;
	/* SIGKILL of pid 1 ends the whole pid namespace. */
	if (kill(sb->pid, sig) == -1 && errno != ESRCH)
		return -1;
	if (!(sb->planned & SANDBOX_PIDNS))
		kill(-sb->pid, sig);
	if (sig == SIGKILL) {
		sandbox_cgroup_kill(sb->cgroup, sb->cgroup_version);
		sandbox_cgroup_kill(sb->memcg, sb->caps.memcg);
	}
	return 0;
}

void
sandbox_release(struct sandbox *sb)
{
	if (sb->pid > 0 && !(sb->planned & SANDBOX_PIDNS))
		kill(-sb->pid, SIGKILL);
	/* Kills only if a process is left (rmdir says EBUSY): after a pid
	 * namespace's init is reaped, none is. */
	sandbox_cgroup_remove(sb->cgroup, sb->cgroup_version);
	sb->cgroup[0] = '\0';
	sandbox_cgroup_remove(sb->memcg, sb->caps.memcg);
	sb->memcg[0] = '\0';
	if (sb->notify_fd != -1)
		close(sb->notify_fd);
	if (sb->sock[0] != -1)
		close(sb->sock[0]);
	if (sb->sock[1] != -1)
		close(sb->sock[1]);
	sb->notify_fd = sb->sock[0] = sb->sock[1] = -1;
}

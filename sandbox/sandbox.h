/*
 * The sandbox: what the OS, not the prompt, refuses a worker.
 *
 * Applied in two phases, one file per mechanism (OpenSSH sandbox-*.c,
 * minijail's minijail_enter order):
 *
 *   parent	sandbox_prepare()	probe the machine, create the pids and
 *					memory cgroups
 *		sandbox_spawn()		clone into new namespaces sharing our
 *					memory until the exec; the program is
 *					pid 1 (workers)
 *		sandbox_fork()		or fork (clone) into them; with a pid
 *					namespace a tiny init stays pid 1
 *					(`sandbox exec`)
 *   child	sandbox_child()		setsid, cgroup join, uid drop, rlimits,
 *					mount setup (private /tmp, protected
 *					paths read-only or masked, host
 *					secrets masked, fresh /proc),
 *					close_range
 *					above the kept fds; then the caller execs
 *   program	sandbox_enter()		right after exec, before any untrusted
 *					input: caps, no_new_privs, not dumpable,
 *					Landlock, seccomp last
 *   parent	sandbox_kill(), sandbox_release()
 *
 * The child passes what phase 1 applied to phase 2 across exec in the
 * environment variable SANDBOX_ENV (so exec with environ, or copy it),
 * with the Landlock ruleset the parent built and the child completed
 * after its mounts: an fd left open across the exec, which phase 2
 * restricts itself with and closes.
 * sandbox_enter() removes it and fills a report whose short strings go into
 * the worker's hello; the supervisor checks them with sandbox_report_check().
 *
 * Nothing here exits or prints: every function returns -1 and fills a
 * struct sandbox_error naming the layer and the cause.
 */
#ifndef WARREN_SANDBOX_H
#define WARREN_SANDBOX_H

#include <sys/types.h>
#include <sys/resource.h>

#include <limits.h>
#include <stdint.h>
#include <stdio.h>

/* Layers, as bits of a mask. The order is the order they are applied. */
#define SANDBOX_SETSID		0x0001	/* "setsid": own session, no tty */
#define SANDBOX_CLOSEFDS	0x0002	/* "closefds": close_range above kept */
#define SANDBOX_PIDS		0x0004	/* "cgroup:pids" or "nproc" */
#define SANDBOX_UIDDROP		0x0008	/* "uid:N": root ran it as uid N */
#define SANDBOX_RLIMITS		0x0010	/* "rlimits": CPU AS FSIZE NOFILE CORE */
#define SANDBOX_USERNS		0x0020	/* "userns" */
#define SANDBOX_MNTNS		0x0040	/* "mntns": private /tmp, protected */
#define SANDBOX_PIDNS		0x0080	/* "pidns": with a fresh /proc */
#define SANDBOX_NETNS		0x0100	/* "netns" */
#define SANDBOX_IPCNS		0x0200	/* "ipcns" (and uts) */
#define SANDBOX_CAPS		0x0400	/* "caps": all dropped, securebits */
#define SANDBOX_NNP		0x0800	/* "nnp": PR_SET_NO_NEW_PRIVS */
#define SANDBOX_NODUMP		0x1000	/* "nodump": PR_SET_DUMPABLE 0 */
#define SANDBOX_LANDLOCK	0x2000	/* "landlock:abiN" */
#define SANDBOX_LLSCOPE		0x4000	/* "landlock:scope" (ABI >= 6) */
#define SANDBOX_SECCOMP		0x8000	/* "seccomp" */
#define SANDBOX_MEMORY		0x10000	/* "cgroup:memory" (applied with pids) */
#define SANDBOX_ALL		0x1ffff

#define SANDBOX_NAMESPACES	(SANDBOX_USERNS | SANDBOX_MNTNS | \
				 SANDBOX_PIDNS | SANDBOX_NETNS | SANDBOX_IPCNS)

/* Phase 1 (before exec) and phase 2 (after exec) layers. */
#define SANDBOX_PHASE1		(SANDBOX_SETSID | SANDBOX_CLOSEFDS | \
				 SANDBOX_PIDS | SANDBOX_MEMORY | \
				 SANDBOX_UIDDROP | \
				 SANDBOX_RLIMITS | SANDBOX_NAMESPACES)
#define SANDBOX_PHASE2		(SANDBOX_CAPS | SANDBOX_NNP | \
				 SANDBOX_NODUMP | SANDBOX_LANDLOCK | \
				 SANDBOX_LLSCOPE | SANDBOX_SECCOMP)

/*
 * Strings in a report (IPC hello, IPC_LAYERS_MAX). There are 17 layers,
 * but "uid" (root only) and "userns" (not root) never come together.
 */
#define SANDBOX_REPORT_MAX	16
#define SANDBOX_LAYER_LEN	32	/* bytes per string, NUL included */
#define SANDBOX_NAME_LEN	32	/* profile name, NUL included */
#define SANDBOX_PROTECT_MAX	16	/* protected paths of a policy */
#define SANDBOX_PROTECT_POOL	(2 * PATH_MAX)	/* their bytes */
#define SANDBOX_READ_MAX	8	/* extra read-only paths of a policy */
#define SANDBOX_READ_POOL	(2 * PATH_MAX)	/* their bytes */

/* How a protected path is protected (sandbox_policy_protect). */
#define SANDBOX_PROTECT_RO	0x1	/* a read-only mount point */
#define SANDBOX_PROTECT_MASK	0x2	/* hidden: an empty mode-000 mount */
#define SANDBOX_ERR_LEN		256

#define SANDBOX_ENV		"WARREN_SANDBOX"
#define SANDBOX_ENV_LEN		(PATH_MAX + 256)

/* What a failure was about. */
struct sandbox_error {
	unsigned	 layer;		/* SANDBOX_* bit, 0 if none */
	int		 missing;	/* 1: layer unavailable here, 0: failed */
	int		 errnum;	/* errno of the failing call, or 0 */
	char		 msg[SANDBOX_ERR_LEN];
};

/* Resource limits; 0 means "leave as it is". */
struct sandbox_limits {
	rlim_t		 cpu_sec;	/* RLIMIT_CPU soft; hard = soft + 2 */
	rlim_t		 as_bytes;	/* RLIMIT_AS (skipped under ASan) */
	rlim_t		 fsize_bytes;	/* RLIMIT_FSIZE */
	rlim_t		 nofile;	/* RLIMIT_NOFILE */
	rlim_t		 nproc;		/* pids.max, or RLIMIT_NPROC */
	rlim_t		 tmpfs_bytes;	/* size of the private /tmp, /dev/shm */
	rlim_t		 mem_bytes;	/* memory cgroup limit, swap 0 */
};

/* One protected path: its bytes in the policy's pool. */
struct sandbox_protect {
	unsigned short	 off;		/* into protect_pool */
	unsigned short	 flags;		/* SANDBOX_PROTECT_* */
};

struct sandbox_policy {
	char		 name[SANDBOX_NAME_LEN];	/* "explore", ... */
	char		 workspace[PATH_MAX];	/* absolute; "" = cwd */
	int		 fs_write;	/* workspace read-write */
	int		 exec;		/* may exec programs */
	int		 allow_weaker;	/* run even if a required layer lacks */
	unsigned	 want;		/* layers to try (SANDBOX_*) */
	unsigned	 require;	/* layers that must be applied */
	struct sandbox_limits limits;
	uid_t		 uid;		/* uid/gid for the root uid drop */
	gid_t		 gid;
	/*
	 * Paths made read-only mount points or masked in the mount namespace
	 * (sandbox_policy_protect): relative to the workspace (".git",
	 * ".warren"), or absolute and canonical. Plain bytes, so the policy
	 * crosses to the spawn server as it is.
	 */
	int		 nprotect;
	struct sandbox_protect protect[SANDBOX_PROTECT_MAX];
	size_t		 protect_used;	/* bytes of protect_pool in use */
	char		 protect_pool[SANDBOX_PROTECT_POOL];
	/*
	 * The program the caller will exec (absolute), or "": kept visible
	 * under a private /tmp (its directory is bound back read-only) and
	 * given Landlock EXECUTE when phase 2 runs before exec. In a no-exec
	 * profile under `sandbox exec`, its execve is the only one allowed.
	 */
	char		 program[PATH_MAX];
	/*
	 * Extra paths readable (Landlock read, and execute where the policy
	 * has exec), absolute and canonical, NUL-separated in read_pool: an
	 * MCP server's package directory (supervisor/mcp_sandbox.c). Not in
	 * the one-line form: only a policy whose phase 2 runs before the
	 * exec (spawnd's SPAWN_STDIO) may have them.
	 */
	int		 nread;
	size_t		 read_used;
	char		 read_pool[SANDBOX_READ_POOL];
	/*
	 * A backend's worker (docs/backends.md): TCP and UDP sockets
	 * (AF_INET, AF_INET6) and AF_UNIX ones allowed by seccomp and left
	 * to the network namespace by Landlock, for its proxy on loopback;
	 * requires a network namespace (never waived by allow_weaker: on
	 * the host's network, loopback is the host's) and a mount
	 * namespace (the private HOME in the private /tmp), and brings lo
	 * up in it. With program set, the program's package directory is
	 * readable.
	 */
	int		 inet;
	/*
	 * An MCP server granted "network": true in the user's own mcp.json
	 * (docs/mcp.md, sandbox_policy_hostnet): the host's network. No
	 * network namespace (as root, the child leaves the spawn server's
	 * shared empty one for the host's), Landlock leaves TCP alone, and
	 * seccomp loads the inet program (AF_UNIX, AF_INET, AF_INET6
	 * sockets). Every other layer stays. Never with inet; not in the
	 * one-line form (a policy that loses it there gets no sockets):
	 * only spawnd's SPAWN_STDIO, whose phase 2 runs before the exec,
	 * honours it.
	 */
	int		 hostnet;
};

/* What was applied, for the worker's hello and for `sandbox exec -v`. */
struct sandbox_report {
	unsigned	 applied;	/* SANDBOX_* bits */
	unsigned	 required;	/* what the policy required */
	int		 landlock_abi;	/* ABI used, 0 if none */
	int		 weaker;	/* a required layer is missing */
	int		 nlayers;
	char		 layers[SANDBOX_REPORT_MAX][SANDBOX_LAYER_LEN];
	char		 note[SANDBOX_ERR_LEN];	/* e.g. why a layer was skipped */
};

/* What this kernel and user can apply (sandbox_check.c). */
struct sandbox_caps {
	int		 root;		/* euid 0 */
	int		 landlock_abi;	/* 0 = none */
	int		 seccomp;	/* seccomp filter mode available */
	int		 userns;	/* unprivileged user ns (or root) */
	int		 mntns, pidns, netns, ipcns;
	int		 cgroup;	/* 0 none, 1 v1 pids, 2 v2 pids */
	char		 cgroup_path[PATH_MAX];	/* parent for per-worker groups */
	int		 memcg;		/* 0 none, 1 v1 memory, 2 v2 memory */
	char		 memcg_path[PATH_MAX];	/* parent of the memory groups */
	int		 memsw;		/* the memory group can forbid swap */
	int		 uiddrop;	/* root: can run as another uid */
	int		 sanitizer;	/* built with ASan: no RLIMIT_AS */
	char		 detail[SANDBOX_LAYER_LEN * 4];	/* why not, if not */
};

/* What phase 1 hands to phase 2 across the exec (in SANDBOX_ENV). */
struct sandbox_phase1 {
	unsigned	 applied;	/* the phase 1 bits applied */
	int		 landlock_fd;	/* its Landlock ruleset, or -1 */
	int		 landlock_abi;	/* the ruleset's ABI, 0 if none */
};

/* Parent-side state of one sandboxed child. */
struct sandbox {
	struct sandbox_policy	 policy;
	struct sandbox_caps	 caps;
	unsigned		 applied;	/* phase 1 bits, set by the child */
	unsigned		 planned;	/* phase 1 bits planned by parent */
	pid_t			 pid;		/* child (init with a pid ns) */
	char			 cgroup[PATH_MAX];	/* "" if none */
	int			 cgroup_version;
	/* The memory group, "" if none or if the pids group (v2) is it. */
	char			 memcg[PATH_MAX];
	int			 memory;	/* a memory limit is planned */
	int			 cloneflags;	/* namespaces of sandbox_fork */
	uid_t			 outer_uid;	/* ids before a user ns */
	gid_t			 outer_gid;
	int			 use_notify;	/* set before sandbox_fork */
	int			 notify_fd;	/* seccomp listener, or -1 */
	int			 sock[2];	/* parent/child channel, or -1 */
	int			 execs;		/* execve calls let through */
	int			 direct;	/* sandbox_spawn: no init */
	/* The worker's Landlock ruleset: the parent's until the clone,
	 * then the child's until phase 2 closes it; -1 if none. */
	int			 landlock_fd;
	int			 landlock_abi;
	char			 note[SANDBOX_ERR_LEN];
	/* "WARREN_SANDBOX=...": put it in the environment you exec with. */
	char			 env[SANDBOX_ENV_LEN];
	/*
	 * Optional, set before sandbox_child: called at its end instead of
	 * returning (rc 0, or -1 with e filled); it must exec or _exit. With
	 * a pid namespace the command then shares pid 1's memory until its
	 * exec (CLONE_VM | CLONE_VFORK) instead of copying it: one fork less.
	 */
	void			(*exec_fn)(struct sandbox *, int rc,
				    struct sandbox_error *, void *arg);
	void			*exec_arg;
};

/* sandbox_policy.c */
/* A profile's policy: its tools say fs_write (write/edit) and exec (a
 * built-in's, by name: profile_policy() in agent/profile.h). */
int	 sandbox_policy_init(struct sandbox_policy *p, const char *name,
	    const char *workspace, int fs_write, int exec,
	    struct sandbox_error *e);
/* Fill policy->require from what the profile needs on this machine
 * (c NULL: this process's). */
void	 sandbox_policy_require(struct sandbox_policy *p,
	    const struct sandbox_caps *c);
/* Give p the host's network (the hostnet field): no network namespace
 * wanted or required, no backend's inet. */
void	 sandbox_policy_hostnet(struct sandbox_policy *p);
/* Serialise to one line (for SANDBOX_ENV / argv); 0 or -1 (ENAMETOOLONG). */
int	 sandbox_policy_encode(const struct sandbox_policy *p,
	    const struct sandbox_phase1 *ph1, char *buf, size_t len);
/* ph1 may be NULL. */
int	 sandbox_policy_decode(const char *s, struct sandbox_policy *p,
	    struct sandbox_phase1 *ph1, struct sandbox_error *e);

/* Make path (absolute; made canonical here) readable in p's sandbox;
 * -1 with e filled if it does not exist or p has no room (ENOSPC). */
int	 sandbox_policy_read(struct sandbox_policy *p, const char *path,
	    struct sandbox_error *e);

/* sandbox_protect.c */
/*
 * Protect path in every sandbox of p: SANDBOX_PROTECT_RO makes it a
 * read-only mount point (it cannot be written, renamed or removed),
 * SANDBOX_PROTECT_MASK hides it (an empty mode-000 read-only tmpfs or
 * file over it). A relative path is under the workspace; an absolute one
 * is made canonical here (a part that does not exist yet is kept as
 * given), and one outside the workspace is covered only where Landlock
 * would let the sandbox reach it. Adds SANDBOX_MNTNS to p->require where
 * the workspace needs it. -1 if the workspace lies inside path, if path
 * has "." or ".." parts, or if the policy has no room (ENOSPC).
 */
int	 sandbox_policy_protect(struct sandbox_policy *p, const char *path,
	    unsigned flags, struct sandbox_error *e);

/* sandbox_landlock.c */
/*
 * The directory a backend's program (p->inet) gets readable: its package
 * directory, or the node_modules directory holding it (*exec set: that
 * one is executable too). -1 with errno for a program in /.
 */
int	 sandbox_package_dir(const char *program, char *out, size_t len,
	    int *exec);

/* sandbox_prepare.c: the spawner's side */
int	 sandbox_prepare(struct sandbox *sb, const struct sandbox_policy *p,
	    struct sandbox_error *e);
/*
 * Like fork(): 0 in the child, its pid in the parent, -1 on error. The
 * child runs no malloc until exec (a raw clone shares no atfork handling),
 * so it is safe from a parent with threads.
 */
pid_t	 sandbox_fork(struct sandbox *sb, struct sandbox_error *e);
/*
 * Like posix_spawn: clone into the namespaces and run fn(child's sandbox,
 * arg) there; fn must end in sandbox_child with an exec_fn, or _exit. The
 * child shares this process's memory until then (CLONE_VM | CLONE_VFORK;
 * a plain vfork-style clone in sanitizer builds), so no page table is
 * copied and this thread waits until the child has exec'd or died. It runs
 * with every signal blocked and on a copy of *sb; fn resets its handlers
 * before it unblocks any. The program exec'd is pid 1 of its pid
 * namespace, with no init before it: it must reap the orphans of what it
 * runs, and from outside only SIGKILL reaches it. Only one thread of a
 * process may call this at a time. The child's pid, or -1 with e set.
 */
typedef void	(*sandbox_spawn_fn)(struct sandbox *, void *);
pid_t	 sandbox_spawn(struct sandbox *sb, sandbox_spawn_fn fn, void *arg,
	    struct sandbox_error *e);
/* Parent: signal the whole tree (pid ns init, cgroup, process group). */
int	 sandbox_kill(struct sandbox *sb, int sig);
/* Parent, after reaping: kill stragglers, remove the cgroup, close fds. */
void	 sandbox_release(struct sandbox *sb);
/* Parent, before sandbox_release: 1 if the OOM killer of the child's
 * memory group killed a process in it, 0 if not or if it cannot tell. */
int	 sandbox_oom_killed(const struct sandbox *sb);
/* A spawner that forks many children: probe now, and let every later
 * sandbox_prepare() use this probe instead of its own (the kernel's
 * features, cgroup mounts and our uid do not change during a run). */
void	 sandbox_caps_freeze(void);
/* A spawner at start, before its first sandbox_prepare: remove the empty
 * per-child pids groups that a spawner killed with SIGKILL left behind
 * ("warren-PID-N" whose PID is gone, or is now ours). Returns how many
 * went. */
int	 sandbox_cgroup_sweep(void);

/* sandbox_child.c: the two phases in the child */
/* In the child: keep fds 0-2 and keep[0..nkeep-1] (at most 64) and the
 * Landlock ruleset for phase 2 (sb->landlock_fd); fills sb->env. With a
 * pid namespace, unless from sandbox_spawn, this forks: the caller
 * continues in pid 2, pid 1 stays. The caller must not have made the child
 * a process group leader (setpgid): sandbox_child starts a session. */
int	 sandbox_child(struct sandbox *sb, const int *keep, int nkeep,
	    struct sandbox_error *e);
/* In the child after sandbox_child: close every fd from lowfd up but the
 * ruleset phase 2 needs. */
void	 sandbox_close_from(const struct sandbox *sb, int lowfd);
/* In the program after exec; policy NULL = the one in SANDBOX_ENV. */
int	 sandbox_enter(const struct sandbox_policy *p, struct sandbox_report *r,
	    struct sandbox_error *e);

/* sandbox_exec.c */
/* `sandbox exec`: phase 2 in the child just before exec; with
 * sb->use_notify the listener and the report go to the parent. */
int	 sandbox_enter_exec(struct sandbox *sb, struct sandbox_report *r,
	    struct sandbox_error *e);
/* Parent of sandbox_enter_exec: the report (and notify_fd), or -1 with
 * the child's error. */
int	 sandbox_parent_report(struct sandbox *sb, struct sandbox_report *r,
	    struct sandbox_error *e);
/* Parent of a no-exec `sandbox exec`: answer the seccomp notifier (one
 * execve allowed, the rest denied and logged). Call when notify_fd is
 * readable; returns 0, or -1 when the notifier is gone. */
int	 sandbox_notify_handle(struct sandbox *sb, FILE *log);

/* sandbox_ns.c */
/* Spawner, root only, once: move the calling process into an empty
 * network namespace; its children then inherit it and get no netns of
 * their own (still reported as "netns"). It keeps the host's namespace
 * open (close-on-exec) for a hostnet child to go back to. -1 if not root
 * or it fails. */
int	 sandbox_netns_share(struct sandbox_error *e);

/* sandbox_report.c */
void	 sandbox_report_init(struct sandbox_report *r, unsigned required);
/* Add the strings for the bits in applied (landlock_abi for its name). */
void	 sandbox_report_fill(struct sandbox_report *r, unsigned applied,
	    int landlock_abi, uid_t uid, int cgroup);
/* From the strings of a hello back to bits; unknown strings are refused. */
int	 sandbox_report_parse(struct sandbox_report *r, const char *const *layers,
	    int n, struct sandbox_error *e);
/* Supervisor: 0 if r covers p->require (or p->allow_weaker and r->weaker),
 * else -1 naming the missing layers. */
int	 sandbox_report_check(const struct sandbox_policy *p,
	    const struct sandbox_report *r, struct sandbox_error *e);
/* "rlimits,caps,..." for logs and the store. */
void	 sandbox_report_string(const struct sandbox_report *r, char *buf,
	    size_t len);

/* sandbox_error.c */
const char *sandbox_layer_name(unsigned bit);

/* sandbox_check.c */
int	 sandbox_caps_probe(struct sandbox_caps *c, int thorough);
void	 sandbox_caps_print(const struct sandbox_caps *c, FILE *f);

/* sandbox_caps.c */
/*
 * A spawner that execs nothing but sandboxed children: lock its securebits
 * and empty its bounding set once (it keeps its effective capabilities),
 * so that each child's own drop, which must still come, has no bounding
 * set left to empty: 41 credential changes fewer per child. Without
 * CAP_SETPCAP, or for children in a user namespace, nothing changes.
 */
int	 sandbox_caps_bound(struct sandbox_error *e);

#endif

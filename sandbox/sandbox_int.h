/*
 * Internal interface of the sandbox library: one group per mechanism file.
 * Nothing here is for callers outside sandbox/; see sandbox.h.
 */
#ifndef WARREN_SANDBOX_INT_H
#define WARREN_SANDBOX_INT_H

#include <signal.h>
#include <stdarg.h>

#include "sandbox/sandbox.h"

#if defined(__SANITIZE_ADDRESS__)
#define SANDBOX_SANITIZER 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define SANDBOX_SANITIZER 1
#endif
#endif
#ifndef SANDBOX_SANITIZER
#define SANDBOX_SANITIZER 0
#endif

/* sandbox_error.c: the layers by name, in the order they are applied. */
struct sandbox_layer {
	unsigned	 bit;
	const char	*name;
};
extern const struct sandbox_layer sandbox_layers[];
extern const size_t sandbox_nlayers;
int	 sandbox_fail(struct sandbox_error *e, unsigned layer, int errnum,
	    const char *fmt, ...) __attribute__((format(printf, 4, 5)));
int	 sandbox_missing(struct sandbox_error *e, unsigned layer,
	    const char *fmt, ...) __attribute__((format(printf, 3, 4)));
void	 sandbox_mask_names(unsigned mask, char *buf, size_t len);
void	 sandbox_note(char *note, size_t len, const char *fmt, ...)
	    __attribute__((format(printf, 3, 4)));

/* sandbox_rlimit.c */
int	 sandbox_rlimit_apply(const struct sandbox_limits *l, int nproc,
	    char *note, size_t notelen, struct sandbox_error *e);

/* sandbox_caps.c */
int	 sandbox_caps_drop(struct sandbox_error *e);
int	 sandbox_caps_bound_child(int newuser, struct sandbox_error *e);
int	 sandbox_caps_uid_drop(uid_t uid, gid_t gid, struct sandbox_error *e);

/* sandbox_ns.c */
int	 sandbox_ns_flags(const struct sandbox *sb);
int	 sandbox_ns_netns_inherited(const struct sandbox *sb);
pid_t	 sandbox_ns_clone(int flags);
int	 sandbox_ns_userns_map(uid_t uid, gid_t gid, struct sandbox_error *e);
/* Bring the loopback interface of our network namespace up (a policy
 * with inet: a backend's proxy listens on it). No malloc. */
int	 sandbox_ns_lo_up(struct sandbox_error *e);
int	 sandbox_ns_hostnet(struct sandbox_error *e);
int	 sandbox_ns_mounts(const struct sandbox_policy *p, int pidns,
	    int landlocked, struct sandbox_error *e);
void	 sandbox_ns_init_signals(sigset_t *old);
void	 sandbox_ns_init_restore(const sigset_t *old);
void	 sandbox_ns_init(pid_t child) __attribute__((noreturn));
#define SANDBOX_INIT_LOST	125	/* init lost its command (ECHILD) */
#define WARREN_SANDBOX_EXEC_FAILED 125	/* exec_fn returned */

/* sandbox_protect.c */
unsigned sandbox_protect_require(const struct sandbox_policy *p);
int	 sandbox_protect_masks_ws(const struct sandbox_policy *p);
int	 sandbox_protect_mounts(const struct sandbox_policy *p, int wsfd,
	    int landlocked, struct sandbox_error *e);

/* sandbox_cgroup.c */
int	 sandbox_cgroup_find(struct sandbox_caps *c);
int	 sandbox_cgroup_create(struct sandbox *sb, struct sandbox_error *e);
/* The memory group, after sandbox_cgroup_create (sb->memory set if one). */
int	 sandbox_cgroup_create_mem(struct sandbox *sb, struct sandbox_error *e);
/* In the child: join group path of cgroup version 1 or 2. */
int	 sandbox_cgroup_join(const char *path, int version, unsigned layer,
	    struct sandbox_error *e);
int	 sandbox_cgroup_kill(const char *path, int version);
void	 sandbox_cgroup_remove(const char *path, int version);
int	 sandbox_cgroup_sweep_dir(const char *base);

/* sandbox_prepare.c */
/* Our copy of the Landlock ruleset, once the child has its own (or none). */
void	 sandbox_ruleset_close(struct sandbox *sb);

/* sandbox_child.c */
/* Phase 2 on the calling process, as sandbox_enter and sandbox exec's
 * child apply it. */
int	 sandbox_phase2(const struct sandbox_policy *p,
	    const struct sandbox_phase1 *ph1, int scflags, int *notify_fd,
	    uid_t uid, int cgroup, struct sandbox_report *r,
	    struct sandbox_error *e);

/* Below this the caller arranges the child's fds (dup2 onto 3, 4, ...);
 * the fds the sandbox itself keeps open are moved to it or above. */
#define SANDBOX_FD_OWN	10

/* sandbox_landlock.c */
#define SANDBOX_LANDLOCK_MAX	7	/* the highest ABI this code knows */
int	 sandbox_landlock_abi(void);
/* Parent, before it sandboxes children: open the paths every ruleset has
 * (once per process; best effort, a child opens what is not open). */
void	 sandbox_landlock_preopen(void);
/* A ruleset for p at ABI abi, its fd (close-on-exec), or -1: the rules on
 * what a child sees as its parent does. */
int	 sandbox_landlock_ruleset(const struct sandbox_policy *p, int abi,
	    struct sandbox_error *e);
/* Then, in the child after its mounts, its own /proc, /tmp and /dev/shm.
 * A rfd that is not a ruleset fails (EBADFD): nothing weaker is built. */
int	 sandbox_landlock_ruleset_own(int rfd, const struct sandbox_policy *p,
	    int abi, struct sandbox_error *e);
/* Restrict the calling thread (no_new_privs set) with ruleset rfd; closes
 * rfd either way. */
int	 sandbox_landlock_restrict(int rfd, int abi, struct sandbox_error *e);
int	 sandbox_landlock_apply(const struct sandbox_policy *p, int *abi,
	    struct sandbox_error *e);
unsigned sandbox_landlock_layers(int abi);
/* 1 if a ruleset lets a sandbox read the canonical path (it lies under a
 * system directory the rules open for reading). */
int	 sandbox_landlock_reads(const char *path);

/* sandbox_seccomp.c: load the program built for a policy at build time */
#define SANDBOX_SECCOMP_NOTIFY	0x1	/* sandbox exec: a listener answers */
#define SANDBOX_SECCOMP_SELF	0x2	/* the caller keeps running (not exec) */
struct sock_fprog;
int	 sandbox_seccomp_available(void);
int	 sandbox_seccomp_apply(const struct sandbox_policy *p, int flags,
	    int *notify_fd, struct sandbox_error *e);

/*
 * sandbox_bpf_table.c, generated by sandbox_bpfgen: one program per
 * (fs_write, exec, mode), at index sandbox_bpf_index().
 */
#define SANDBOX_BPF_MODE_SELF	0	/* worker: keeps running after load */
#define SANDBOX_BPF_MODE_EXEC	1	/* a child that execs its command */
#define SANDBOX_BPF_MODE_NOTIFY	2	/* sandbox exec: socket() notifies */
#define SANDBOX_BPF_MODE_NOTIFY_EXEC 3	/* ... and execve notifies too */
#define SANDBOX_BPF_NPROGS	32	/* 16 and up: inet (a backend's) */
struct sandbox_bpf_prog {
	const void	*insns;		/* struct sock_filter[len] */
	unsigned short	 len;
};
extern const struct sandbox_bpf_prog sandbox_bpf_table[SANDBOX_BPF_NPROGS];
/* Shared by the loader and the generator, so both index the same way. */
static inline int
sandbox_bpf_index(int fs_write, int exec, int mode, int inet)
{
	return (fs_write ? 1 : 0) | (exec ? 2 : 0) | (mode << 2) |
	    (inet ? 16 : 0);
}

/* What the filter depends on besides fs_write and exec. */
static inline int
sandbox_bpf_mode(const struct sandbox_policy *p, int flags)
{
	if (flags & SANDBOX_SECCOMP_NOTIFY)
		return !p->exec && p->program[0] != '\0' ?
		    SANDBOX_BPF_MODE_NOTIFY_EXEC : SANDBOX_BPF_MODE_NOTIFY;
	return (flags & SANDBOX_SECCOMP_SELF) ? SANDBOX_BPF_MODE_SELF :
	    SANDBOX_BPF_MODE_EXEC;
}

/*
 * sandbox_seccomp_rules.c: the rules, with libseccomp (build time only).
 * The tables they are made from are the layer's facts: the calls denied
 * in every profile (EPERM), in read-only ones (EPERM; fallocate fails with
 * EOPNOTSUPP in read-write ones) and in no-exec ones (EPERM), the open
 * flags a read-only profile may not pass, the clone flags no profile may.
 * tests/sandbox/test_layer_seccomp.c checks every generated program
 * against them.
 */
struct sandbox_sc {
	const char	*name;
	int		 nr;	/* x86_64 number if libseccomp lacks the name */
};
extern const struct sandbox_sc sandbox_seccomp_deny[];
extern const struct sandbox_sc sandbox_seccomp_deny_ro[];
extern const struct sandbox_sc sandbox_seccomp_deny_ipc[];
extern const unsigned long sandbox_seccomp_wflags[];
extern const unsigned long sandbox_seccomp_nsflags[];
extern const size_t sandbox_seccomp_ndeny, sandbox_seccomp_ndeny_ro,
	    sandbox_seccomp_ndeny_ipc, sandbox_seccomp_nwflags,
	    sandbox_seccomp_nnsflags;
int	 sandbox_seccomp_compile(const struct sandbox_policy *p, int flags,
	    struct sock_fprog *prog, struct sandbox_error *e);

#endif

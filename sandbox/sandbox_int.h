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

/* sandbox.c */
int	 sandbox_fail(struct sandbox_error *e, unsigned layer, int errnum,
	    const char *fmt, ...) __attribute__((format(printf, 4, 5)));
int	 sandbox_missing(struct sandbox_error *e, unsigned layer,
	    const char *fmt, ...) __attribute__((format(printf, 3, 4)));
void	 sandbox_note(char *note, size_t len, const char *fmt, ...)
	    __attribute__((format(printf, 3, 4)));

/* sandbox_rlimit.c */
int	 sandbox_rlimit_apply(const struct sandbox_limits *l, int nproc,
	    char *note, size_t notelen, struct sandbox_error *e);

/* sandbox_caps.c */
int	 sandbox_caps_drop(struct sandbox_error *e);
int	 sandbox_caps_uid_drop(uid_t uid, gid_t gid, struct sandbox_error *e);
int	 sandbox_caps_none(void);

/* sandbox_ns.c */
int	 sandbox_ns_flags(const struct sandbox *sb);
int	 sandbox_ns_netns_inherited(const struct sandbox *sb);
pid_t	 sandbox_ns_clone(int flags);
int	 sandbox_ns_userns_map(uid_t uid, gid_t gid, struct sandbox_error *e);
int	 sandbox_ns_mounts(const struct sandbox_policy *p, int pidns,
	    struct sandbox_error *e);
void	 sandbox_ns_init_signals(sigset_t *old);
void	 sandbox_ns_init_restore(const sigset_t *old);
void	 sandbox_ns_init(pid_t child) __attribute__((noreturn));
#define SANDBOX_INIT_LOST	125	/* init lost its command (ECHILD) */
#define WARREN_SANDBOX_EXEC_FAILED 125	/* exec_fn returned */

/* sandbox_cgroup.c */
int	 sandbox_cgroup_find(struct sandbox_caps *c);
int	 sandbox_cgroup_create(struct sandbox *sb, struct sandbox_error *e);
int	 sandbox_cgroup_join(const char *path, struct sandbox_error *e);
int	 sandbox_cgroup_kill(const char *path, int version);
void	 sandbox_cgroup_remove(const char *path, int version);

/* sandbox_landlock.c */
int	 sandbox_landlock_abi(void);
int	 sandbox_landlock_apply(const struct sandbox_policy *p, int *abi,
	    struct sandbox_error *e);
int	 sandbox_landlock_apply_max(const struct sandbox_policy *p,
	    int maxabi, int *abi, struct sandbox_error *e);
unsigned sandbox_landlock_layers(int abi);

/* sandbox_seccomp.c */
#define SANDBOX_SECCOMP_NOTIFY	0x1	/* sandbox exec: a listener answers */
#define SANDBOX_SECCOMP_SELF	0x2	/* the caller keeps running (not exec) */
int	 sandbox_seccomp_apply(const struct sandbox_policy *p, int flags,
	    int *notify_fd, struct sandbox_error *e);
int	 sandbox_seccomp_available(void);
struct sock_fprog;
int	 sandbox_seccomp_export(const struct sandbox_policy *p, int flags,
	    struct sock_fprog *prog, struct sandbox_error *e);
/* sandbox_bpffd.c */
int	 sandbox_bpf_inherited(const struct sandbox_policy *p,
	    struct sock_fprog *prog);
int	 sandbox_seccomp_load(const struct sock_fprog *prog, int flags,
	    int *notify_fd, struct sandbox_error *e);

#endif

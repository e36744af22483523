/*
 * What tests and benches call directly of the sandbox: production
 * reaches each only through sandbox_enter, sandbox_landlock_apply,
 * sandbox_seccomp_apply and the build-time BPF table. Only tests and
 * the files defining these include this (scripts/check-exports.py).
 */

#ifndef WARREN_SANDBOX_TESTAPI_H
#define WARREN_SANDBOX_TESTAPI_H

#include "sandbox/sandbox.h"
#include "sandbox/sandbox_int.h"

/* sandbox_child.c */
/* What can be applied to the calling process without a fork: setsid,
 * rlimits (RLIMIT_NPROC if not root), then phase 2. No namespaces, no
 * cgroup, so only with allow_weaker for a read-write profile. */
int	 sandbox_apply_self(const struct sandbox_policy *p,
	    struct sandbox_report *r, struct sandbox_error *e);

/* sandbox_protect.c */
/* Protected path i: its flags and path (borrowed from p), or NULL. */
const char *sandbox_policy_protected(const struct sandbox_policy *p, int i,
	    unsigned *flags);

/* sandbox_landlock.c: sandbox_landlock_apply with the ABI taken as at
 * most maxabi (a kernel's older ABI, tried on a newer one). */
int	 sandbox_landlock_apply_max(const struct sandbox_policy *p,
	    int maxabi, int *abi, struct sandbox_error *e);

/* sandbox_seccomp.c */
struct sock_fprog;
/* The program for p and flags, from sandbox_bpf_table (never fails). */
void	 sandbox_seccomp_program(const struct sandbox_policy *p, int flags,
	    struct sock_fprog *prog);

/* sandbox_seccomp_rules.c */
/* The native syscall number of sc, or -1 if this machine has none. */
int	 sandbox_seccomp_nr(const struct sandbox_sc *sc);

#endif

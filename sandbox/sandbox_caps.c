/*
 * Capabilities and the root uid drop.
 *
 * A worker started by root (or holding capabilities in its own user
 * namespace) gives them all up: securebits locked so a later setuid or exec
 * cannot bring them back, ambient set cleared, bounding set emptied, then
 * effective, permitted and inheritable set to zero with capset.
 */
#include <sys/types.h>
#include <sys/prctl.h>
#include <sys/syscall.h>

#include <linux/capability.h>
#include <linux/securebits.h>

#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "sandbox/sandbox_int.h"

static int
sandbox_caps_last(void)
{
	char	 buf[16];
	ssize_t	 n;
	int	 fd, last = 63;

	if ((fd = open("/proc/sys/kernel/cap_last_cap", O_RDONLY |
	    O_CLOEXEC)) == -1)
		return last;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n > 0) {
		buf[n] = '\0';
		last = atoi(buf);
	}
	if (last < 0 || last > 63)
		last = 63;
	return last;
}

static int
sandbox_caps_get(struct __user_cap_data_struct d[2])
{
	struct __user_cap_header_struct	 h;

	memset(&h, 0, sizeof(h));
	h.version = _LINUX_CAPABILITY_VERSION_3;
	return (int)syscall(SYS_capget, &h, d);
}

/* 1 if the process holds no capability at all (effective or permitted). */
static int
sandbox_caps_none(void)
{
	struct __user_cap_data_struct	 d[2];

	memset(d, 0, sizeof(d));
	if (sandbox_caps_get(d) == -1)
		return 0;
	return (d[0].effective | d[1].effective | d[0].permitted |
	    d[1].permitted | d[0].inheritable | d[1].inheritable) == 0;
}

static int
sandbox_caps_has_setpcap(void)
{
	struct __user_cap_data_struct	 d[2];

	memset(d, 0, sizeof(d));
	if (sandbox_caps_get(d) == -1)
		return 0;
	return (d[0].effective & (1U << CAP_SETPCAP)) != 0;
}

/* Set by sandbox_caps_bound in a spawner; read, never written, by the
   children it clones (some share its memory until they exec). */
static int	sandbox_caps_bounded;

/*
 * Lock the securebits and empty the bounding set, if we may (CAP_SETPCAP):
 * no exec of ours or of a child's can gain a capability after this. Both
 * are inherited across fork and exec, except into a new user namespace,
 * which starts with a full bounding set.
 */
static int
sandbox_caps_bound_now(struct sandbox_error *e)
{
	int	cap, last;

	if (!sandbox_caps_has_setpcap())
		return 0;	/* nothing we could do, nothing to do */
	if (prctl(PR_SET_SECUREBITS, SECBIT_KEEP_CAPS_LOCKED |
	    SECBIT_NO_SETUID_FIXUP | SECBIT_NO_SETUID_FIXUP_LOCKED |
	    SECBIT_NOROOT | SECBIT_NOROOT_LOCKED |
	    SECBIT_NO_CAP_AMBIENT_RAISE |
	    SECBIT_NO_CAP_AMBIENT_RAISE_LOCKED, 0, 0, 0) == -1)
		return sandbox_fail(e, SANDBOX_CAPS, errno,
		    "PR_SET_SECUREBITS");
	last = sandbox_caps_last();
	for (cap = 0; cap <= last; cap++) {
		if (prctl(PR_CAPBSET_DROP, cap, 0, 0, 0) == -1 &&
		    errno != EINVAL)
			return sandbox_fail(e, SANDBOX_CAPS, errno,
			    "PR_CAPBSET_DROP %d", cap);
	}
	return 1;
}

int
sandbox_caps_bound(struct sandbox_error *e)
{
	int	rv;

	if ((rv = sandbox_caps_bound_now(e)) == 1)
		sandbox_caps_bounded = 1;
	return rv == -1 ? -1 : 0;
}

/*
 * In a child before exec, while it still holds CAP_SETPCAP (before a uid
 * drop, and in its user namespace): then the program it execs starts
 * with none. Skipped when the spawner did it and no new user namespace
 * gave the bounding set back.
 */
int
sandbox_caps_bound_child(int newuser, struct sandbox_error *e)
{
	if (sandbox_caps_bounded && !newuser)
		return 0;
	return sandbox_caps_bound_now(e) == -1 ? -1 : 0;
}

int
sandbox_caps_drop(struct sandbox_error *e)
{
	struct __user_cap_header_struct	 h;
	struct __user_cap_data_struct	 d[2];

	if (sandbox_caps_bound_now(e) == -1)
		return -1;
	if (prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0) == -1 &&
	    errno != EINVAL)
		return sandbox_fail(e, SANDBOX_CAPS, errno,
		    "PR_CAP_AMBIENT_CLEAR_ALL");
	memset(&h, 0, sizeof(h));
	memset(d, 0, sizeof(d));
	h.version = _LINUX_CAPABILITY_VERSION_3;
	if (syscall(SYS_capset, &h, d) == -1)
		return sandbox_fail(e, SANDBOX_CAPS, errno, "capset to none");
	if (!sandbox_caps_none())
		return sandbox_fail(e, SANDBOX_CAPS, 0,
		    "capabilities still held after capset");
	return 0;
}

/* Root with no pids cgroup: become uid/gid so RLIMIT_NPROC applies. */
int
sandbox_caps_uid_drop(uid_t uid, gid_t gid, struct sandbox_error *e)
{
	if (uid == 0)
		return sandbox_fail(e, SANDBOX_UIDDROP, EINVAL,
		    "uid drop to uid 0");
	if (setgroups(0, NULL) == -1)
		return sandbox_fail(e, SANDBOX_UIDDROP, errno, "setgroups");
	if (setresgid(gid, gid, gid) == -1)
		return sandbox_fail(e, SANDBOX_UIDDROP, errno,
		    "setresgid %u", (unsigned)gid);
	if (setresuid(uid, uid, uid) == -1)
		return sandbox_fail(e, SANDBOX_UIDDROP, errno,
		    "setresuid %u", (unsigned)uid);
	if (geteuid() != uid || getuid() != uid)
		return sandbox_fail(e, SANDBOX_UIDDROP, 0,
		    "uid is %u after setresuid %u", (unsigned)geteuid(),
		    (unsigned)uid);
	return 0;
}

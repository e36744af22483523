/*
 * `sandbox exec`: the child's phase 2 that reports to its parent over a
 * socket (with the seccomp listener's fd), the parent's read of that
 * report, and the parent answering the listener.
 */

#include <sys/types.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/uio.h>

#include <linux/seccomp.h>

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "sandbox/sandbox_int.h"

/* The report of a child to the parent of `sandbox exec`. */
struct sandbox_msg {
	int			 ok;
	struct sandbox_report	 report;
	struct sandbox_error	 error;
};

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

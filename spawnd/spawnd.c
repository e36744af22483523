/*
 * The spawn server: a small child of the supervisor, forked before the
 * supervisor reads the API key or grows its heap, that forks every worker
 * on the supervisor's behalf (the zygote pattern).
 *
 * Why: every fork makes the forking process's heap copy-on-write, and each
 * page it writes afterwards faults and flushes TLBs. For the supervisor,
 * busy with hundreds of agents, that was most of its CPU time. The server
 * writes almost nothing between forks. And a worker's sandbox phase 1
 * (user namespace maps in /proc/self) needs a dumpable parent, which the
 * supervisor, holding the key, must not be; the server holds no secret:
 * it is forked before the key is read and wipes its environment block.
 *
 * The protocol is in spawnd.h; warren's side of it is
 * supervisor/spawnd_client.c. The server reaps its children (killing each
 * worker's tree first, while the zombie pins it), and on EOF from the
 * supervisor kills every worker, reaps everything and exits.
 *
 * The supervisor never waits for an answer: its event loop reads SPAWNED
 * and EXIT as they come (spawnd_client_read), so a spawn (the sandbox's
 * cgroup, the clone into new namespaces: milliseconds) never stalls the
 * other workers' turns, and up to SPAWND_CLIENT_INFLIGHT_MAX requests
 * queue in the socket while the server works. Answers come in request
 * order, and a worker's EXIT always after its SPAWNED.
 *
 * Neither side blocks on the socket (MSG_DONTWAIT both ways): a packet it
 * does not take waits in the sender's queue, and every later one behind
 * it, until POLLOUT (here) or EPOLLOUT (the supervisor's loop). Blocking,
 * a mass kill deadlocked the two: the server stuck sending EXITs nobody
 * read, the supervisor stuck sending KILLs nobody read. So the server
 * keeps reading requests while its answers wait; a queued SPAWNED keeps
 * its 3 fds open until it is sent (or the server exits). The queue is
 * capped at SPAWND_OUT_MAX answers: a supervisor that reads never comes
 * near it, and past it the server exits (killing every worker) rather
 * than grow without end.
 */
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/signalfd.h>
#include <sys/types.h>
#include <sys/wait.h>

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/fd.h"
#include "common/log.h"
#include "common/xmalloc.h"
#include "sandbox/sandbox.h"
#include "spawnd/spawn.h"
#include "spawnd/spawnd.h"
#include "workspace/cow.h"

#define SPAWND_PARENT_GONE	SIGUSR1	/* our parent-death signal */

extern char **environ;

struct spawnd_kid {
	struct spawn_child	 c;
	struct spawnd_kid	*next;
};

/*
 * An answer the socket did not take yet, with the fds it carries (still
 * ours: closed once sent, or when the server exits).
 */
struct spawnd_out {
	struct spawnd_out	*next;
	struct spawnd_hdr	 h;
	int			 fds[3];
	int			 nfds;
	char			 data[];	/* h.len bytes */
};

/*
 * Answers waiting at most. A trusted supervisor that reads its socket
 * leaves a few hundred at worst (one EXIT per live worker, jobs <= 4096,
 * and 8 SPAWNED); past this one it has stopped reading: the server exits
 * rather than grow without end.
 */
#define SPAWND_OUT_MAX	65536u

static struct spawnd_kid	*spawnd_kids;
static int			 spawnd_forked;	/* a SPAWN came: no layer now */
static int			 spawnd_layer;	/* 1 entered; -1 failed: no
						   worker may start */
static struct cow		 spawnd_cow;	/* the layer entered */
static struct spawnd_out	*spawnd_outq;
static struct spawnd_out	**spawnd_outtail = &spawnd_outq;
static unsigned			 spawnd_nout;

static void	spawnd_exit_all(void) __attribute__((noreturn));

/*
 * The parts go out as they lie, with no buffer to gather them in first.
 * Never blocks: EAGAIN when the socket's buffer is full.
 */
int
spawnd_sendv(int fd, const struct spawnd_hdr *h, struct iovec *iov, int niov,
    const int *fds, int nfds)
{
	struct msghdr	 mh;
	char		 cbuf[CMSG_SPACE(sizeof(int) * 3)];
	struct cmsghdr	*cm;

	memset(&mh, 0, sizeof(mh));
	iov[0].iov_base = (void *)(uintptr_t)h;
	iov[0].iov_len = sizeof(*h);
	mh.msg_iov = iov;
	mh.msg_iovlen = (size_t)niov;
	if (nfds > 0) {
		memset(cbuf, 0, sizeof(cbuf));
		mh.msg_control = cbuf;
		mh.msg_controllen = CMSG_SPACE(sizeof(int) * (size_t)nfds);
		cm = CMSG_FIRSTHDR(&mh);
		cm->cmsg_level = SOL_SOCKET;
		cm->cmsg_type = SCM_RIGHTS;
		cm->cmsg_len = CMSG_LEN(sizeof(int) * (size_t)nfds);
		memcpy(CMSG_DATA(cm), fds, sizeof(int) * (size_t)nfds);
	}
	while (sendmsg(fd, &mh, MSG_NOSIGNAL | MSG_DONTWAIT) == -1) {
		if (errno != EINTR)
			return -1;
	}
	return 0;
}

int
spawnd_sendmsg(int fd, const struct spawnd_hdr *h, const void *data,
    const int *fds, int nfds)
{
	struct iovec	iov[2];

	iov[1].iov_base = (void *)(uintptr_t)data;
	iov[1].iov_len = h->len;
	return spawnd_sendv(fd, h, iov, h->len ? 2 : 1, fds, nfds);
}

/*
 * The server's side: answers go out in order, through the queue once one
 * waits there; a full socket queues the packet (POLLOUT flushes it). A
 * failed send means the supervisor is gone.
 */
static void
spawnd_send(int fd, const struct spawnd_hdr *h, const void *data,
    const int *fds, int nfds)
{
	struct spawnd_out	*o;
	int			 i;

	if (spawnd_outq == NULL) {
		if (spawnd_sendmsg(fd, h, data, fds, nfds) == 0) {
			for (i = 0; i < nfds; i++)
				close(fds[i]);
			return;
		}
		if (errno != EAGAIN)
			spawnd_exit_all();
	}
	if (spawnd_nout >= SPAWND_OUT_MAX) {
		log_warnx("spawn server: %u answers wait for the supervisor, "
		    "which does not read them: exiting (every worker is "
		    "killed)", spawnd_nout);
		spawnd_exit_all();
	}
	o = xcalloc(1, sizeof(*o) + h->len);
	o->h = *h;
	if (h->len > 0)
		memcpy(o->data, data, h->len);
	if (nfds > 0)
		memcpy(o->fds, fds, sizeof(int) * (size_t)nfds);
	o->nfds = nfds;
	*spawnd_outtail = o;
	spawnd_outtail = &o->next;
	spawnd_nout++;
}

/* Send what waits, oldest first, until the socket is full again. */
static void
spawnd_flush(int fd)
{
	struct spawnd_out	*o;
	int			 i;

	while ((o = spawnd_outq) != NULL) {
		if (spawnd_sendmsg(fd, &o->h, o->data, o->fds, o->nfds) == -1) {
			if (errno == EAGAIN)
				return;
			spawnd_exit_all();
		}
		for (i = 0; i < o->nfds; i++)
			close(o->fds[i]);
		if ((spawnd_outq = o->next) == NULL)
			spawnd_outtail = &spawnd_outq;
		spawnd_nout--;
		free(o);
	}
}

/*
 * Split n NUL-terminated strings from p (len bytes) into v, copied to
 * *out (*outlen bytes left): the request buffer is not inherited by the
 * child (spawnd_main), which needs its argv and environment.
 */
static int
spawnd_strings(const char **p, size_t *len, char **v, int n, char **out,
    size_t *outlen)
{
	int	i;
	size_t	l;

	for (i = 0; i < n; i++) {
		l = strnlen(*p, *len);
		if (l == *len || l + 1 > *outlen)
			return -1;
		memcpy(*out, *p, l + 1);
		v[i] = *out;
		*out += l + 1;
		*outlen -= l + 1;
		*p += l + 1;
		*len -= l + 1;
	}
	v[n] = NULL;
	return 0;
}

/*
 * p is the request after its header, in the server's buffer: the policy
 * is used in place (sandbox_prepare copies it), so it is not copied to
 * the stack on the way.
 */
static void
spawnd_do_spawn(int fd, const struct spawnd_hdr *h, const char *p, size_t len)
{
	const struct sandbox_policy *pol = (const void *)p;
	struct spawn_req	 req;
	struct spawnd_kid	*k;
	struct spawnd_hdr	 r;
	char			*argv[SPAWND_ARGS_MAX + 1];
	char			*envp[SPAWND_ARGS_MAX + 1], err[512] = "";
	char			 strs[SPAWND_STRS_MAX], *out = strs;
	size_t			 outlen = sizeof(strs);
	uint32_t		 na, ne;
	int			 fds[3];

	memset(&r, 0, sizeof(r));
	r.type = SPAWND_SPAWNED;
	r.id = h->id;
	if (len < sizeof(*pol) + 2 * sizeof(uint32_t))
		goto bad;
	memcpy(&na, p + sizeof(*pol), sizeof(na));
	memcpy(&ne, p + sizeof(*pol) + sizeof(na), sizeof(ne));
	p += sizeof(*pol) + 2 * sizeof(uint32_t);
	len -= sizeof(*pol) + 2 * sizeof(uint32_t);
	if (na > SPAWND_ARGS_MAX || ne > SPAWND_ARGS_MAX ||
	    spawnd_strings(&p, &len, argv, (int)na, &out, &outlen) == -1 ||
	    spawnd_strings(&p, &len, envp, (int)ne, &out, &outlen) == -1 ||
	    na == 0)
		goto bad;
	if (spawnd_layer == -1) {
		/* Half in its namespaces, the workspace not covered. */
		snprintf(err, sizeof(err), "spawn server: the copy-on-write "
		    "layer could not be entered: no worker starts");
		r.len = (uint32_t)strlen(err) + 1;
		spawnd_send(fd, &r, err, NULL, 0);
		return;
	}
	memset(&req, 0, sizeof(req));
	req.bin = argv[0];	/* argv[0] carries the path; ps shows the title */
	req.argv = argv + 1;
	req.envp = envp;
	req.policy = pol;
	req.mode = h->a == SPAWN_STDIO ? SPAWN_STDIO : SPAWN_WORKER;
	k = xcalloc(1, sizeof(*k));
	spawnd_forked = 1;
	if (spawn_worker(&req, &k->c, err, sizeof(err)) == -1) {
		free(k);
		r.len = (uint32_t)strlen(err) + 1;
		spawnd_send(fd, &r, err, NULL, 0);
		return;
	}
	k->next = spawnd_kids;
	spawnd_kids = k;
	r.pid = k->c.pid;
	fds[0] = k->c.to_fd;
	fds[1] = k->c.from_fd;
	fds[2] = k->c.err_fd;
	/* The fds are the queue's now: closed once sent. */
	k->c.to_fd = k->c.from_fd = k->c.err_fd = -1;
	spawnd_send(fd, &r, NULL, fds, 3);
	return;
bad:
	snprintf(err, sizeof(err), "spawn server: malformed request");
	r.len = (uint32_t)strlen(err) + 1;
	spawnd_send(fd, &r, err, NULL, 0);
}

static struct spawnd_kid *
spawnd_find(pid_t pid, struct spawnd_kid ***prevp)
{
	struct spawnd_kid	**pp;

	for (pp = &spawnd_kids; *pp != NULL; pp = &(*pp)->next) {
		if ((*pp)->c.pid == pid) {
			if (prevp != NULL)
				*prevp = pp;
			return *pp;
		}
	}
	return NULL;
}

/* Reap what exited; a worker's tree dies first, its exit is reported. */
static void
spawnd_reap(int fd)
{
	struct spawnd_kid	*k, **pp;
	struct spawnd_hdr	 r;
	siginfo_t		 si, si2;

	for (;;) {
		memset(&si, 0, sizeof(si));
		if (waitid(P_ALL, 0, &si, WEXITED | WNOHANG | WNOWAIT) == -1 ||
		    si.si_pid == 0)
			return;
		if ((k = spawnd_find(si.si_pid, &pp)) != NULL)
			spawn_kill(&k->c, SIGKILL);
		memset(&si2, 0, sizeof(si2));
		if (waitid(P_PID, (id_t)si.si_pid, &si2, WEXITED) == -1 ||
		    k == NULL)
			continue;
		*pp = k->next;
		memset(&r, 0, sizeof(r));
		r.type = SPAWND_EXIT;
		r.pid = si2.si_pid;
		r.a = si2.si_code;
		r.b = si2.si_status;
		if (spawn_oom_killed(&k->c))
			r.a = SPAWN_CLD_OOM;	/* before its group goes */
		spawn_release(&k->c);
		free(k);
		spawnd_send(fd, &r, NULL, NULL, 0);
	}
}

/*
 * A layer on a tmpfs (disk_max, workspace/cow_bound.c) lives as long as
 * this namespace: with every worker gone, it is copied back to the cow
 * directory, whether the supervisor closed the channel or died.
 */
static void
spawnd_save(void)
{
	char	err[1024];

	if (spawnd_layer != 1 || spawnd_cow.bound == 0)
		return;
	if (cow_bound_save(&spawnd_cow, err, sizeof(err)) == -1)
		log_warnx("spawn server: saving the copy-on-write layer: %s",
		    err);
}

/* The supervisor is gone or done: nothing of ours may survive. */
static void
spawnd_exit_all(void)
{
	struct spawnd_kid	*k;

	for (k = spawnd_kids; k != NULL; k = k->next)
		spawn_kill(&k->c, SIGKILL);
	while (waitpid(-1, NULL, 0) > 0 || errno == EINTR)
		;
	for (k = spawnd_kids; k != NULL; k = k->next)
		spawn_release(&k->c);
	spawnd_save();
	/* The fds of answers never sent go with the process. */
	_exit(0);
}

/* Overwrite the environment block: /proc/PID/environ shows its bytes. */
static void
spawnd_wipe_env(void)
{
	size_t	i;

	for (i = 0; environ != NULL && environ[i] != NULL; i++)
		explicit_bzero(environ[i], strlen(environ[i]));
}

/*
 * The run's copy-on-write layer (workspace/cow.h), asked for once the
 * supervisor knows it and before the first SPAWN: every worker forked
 * later inherits it. The sandbox's probe is taken again inside it. A
 * failure is the supervisor's to report (READY, pid -1, the error): the
 * run must not go on in the real tree.
 */
static void
spawnd_enter(int fd, const struct spawnd_hdr *req, const char *p, size_t len)
{
	struct spawnd_hdr	 h;
	struct cow		 cow;
	char			 err[1000];
	int			 memfd = -1;

	memset(&h, 0, sizeof(h));
	h.type = SPAWND_READY;
	h.id = req->id;
	err[0] = '\0';
	if (len != sizeof(cow))
		snprintf(err, sizeof(err), "a layer request of %zu bytes", len);
	else if (spawnd_forked)
		snprintf(err, sizeof(err), "the layer must be entered before "
		    "the first worker");
	else if (spawnd_layer != 0)
		snprintf(err, sizeof(err), "a layer was asked for already");
	else {
		memcpy(&cow, p, sizeof(cow));
		cow.dir[sizeof(cow.dir) - 1] = '\0';
		cow.workspace[sizeof(cow.workspace) - 1] = '\0';
		spawnd_layer = -1;
		if (cow_enter(&cow, err, sizeof(err)) == 0) {
			spawnd_layer = 1;
			spawnd_cow = cow;
			sandbox_caps_freeze();
		}
		/* The tmpfs, for the supervisor's watch (run_disk.c). */
		if (spawnd_layer == 1 && cow.bound != 0)
			memfd = cow_bound_open(&cow, err, sizeof(err));
	}
	if (err[0] != '\0') {
		h.pid = -1;
		h.len = (uint32_t)strlen(err) + 1;
	}
	spawnd_send(fd, &h, err[0] != '\0' ? err : NULL, &memfd,
	    memfd != -1 ? 1 : 0);
}

/* One request from the supervisor, read into buf; EOF ends the server. */
static void
spawnd_dispatch(int fd, char *buf)
{
	struct spawnd_hdr	 h;
	struct spawnd_kid	*k;
	ssize_t			 n;

	n = recv(fd, buf, SPAWND_MSG_MAX, MSG_DONTWAIT);
	if (n == -1 && (errno == EINTR || errno == EAGAIN))
		return;
	if (n < (ssize_t)sizeof(h))
		spawnd_exit_all();	/* EOF: the supervisor ended */
	memcpy(&h, buf, sizeof(h));
	if (h.len != (size_t)n - sizeof(h))
		spawnd_exit_all();
	switch (h.type) {
	case SPAWND_SPAWN:
		spawnd_do_spawn(fd, &h, buf + sizeof(h), h.len);
		break;
	case SPAWND_KILL:
		if ((k = spawnd_find(h.pid, NULL)) != NULL)
			spawn_kill(&k->c, h.a);
		break;
	case SPAWND_LAYER:
		spawnd_enter(fd, &h, buf + sizeof(h), h.len);
		break;
	default:
		spawnd_exit_all();
	}
}

void
spawnd_main(int fd, pid_t parent)
{
	struct sandbox_error	 e;
	struct signalfd_siginfo	 ssi;
	struct pollfd		 pfd[2];
	sigset_t		 set;
	char			*buf;
	int			 sfd;

	spawnd_wipe_env();
	/*
	 * The supervisor's death is a signal we read, not SIGKILL: the
	 * workers' pids groups are ours to remove (spawnd_exit_all), and a
	 * SIGKILLed supervisor would otherwise leave them behind for good.
	 */
	sigemptyset(&set);
	sigaddset(&set, SIGCHLD);
	sigaddset(&set, SPAWND_PARENT_GONE);
	if (sigprocmask(SIG_BLOCK, &set, NULL) == -1 ||
	    (sfd = signalfd(-1, &set, SFD_CLOEXEC | SFD_NONBLOCK)) == -1 ||
	    prctl(PR_SET_PDEATHSIG, SPAWND_PARENT_GONE) == -1)
		_exit(1);
	if (getppid() != parent)
		spawnd_exit_all();	/* it died before the prctl */
	/*
	 * As root, one empty network namespace for the server and every
	 * worker, instead of one per worker (a netns costs 1 ms or more to
	 * create and more to tear down): see docs/sandbox.md. Ordinary
	 * users keep one per worker, inside its user namespace.
	 */
	memset(&e, 0, sizeof(e));
	if (geteuid() == 0)
		(void)sandbox_netns_share(&e);
	sandbox_caps_freeze();
	/* Best effort: every worker still drops what it holds itself. */
	(void)sandbox_caps_bound(&e);
	(void)prctl(PR_SET_CHILD_SUBREAPER, 1);
	/* The terminal's ^C is the supervisor's to handle. */
	signal(SIGINT, SIG_IGN);
	signal(SIGTERM, SIG_IGN);
	signal(SIGHUP, SIG_IGN);
	signal(SIGPIPE, SIG_IGN);
	signal(SIGXFSZ, SIG_IGN);	/* EFBIG, as warren's (cli/main.c) */
	/* Groups left by a server that was killed before it could clean. */
	(void)sandbox_cgroup_sweep();
	/* One request at a time, the largest a frame may be. */
	buf = mmap(NULL, SPAWND_MSG_MAX, PROT_READ | PROT_WRITE,
	    MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (buf == MAP_FAILED)
		_exit(1);
	pfd[0].fd = fd;
	pfd[1].fd = sfd;
	pfd[1].events = POLLIN;
	for (;;) {
		/* Requests are read while answers wait: KILLs keep coming. */
		pfd[0].events = POLLIN | (spawnd_outq != NULL ? POLLOUT : 0);
		if (poll(pfd, 2, -1) == -1) {
			if (errno == EINTR)
				continue;
			spawnd_exit_all();
		}
		if (pfd[1].revents & POLLIN) {
			while (read(sfd, &ssi, sizeof(ssi)) == sizeof(ssi))
				if (ssi.ssi_signo == SPAWND_PARENT_GONE)
					spawnd_exit_all();
			spawnd_reap(fd);
		}
		if (pfd[0].revents & (POLLOUT | POLLERR))
			spawnd_flush(fd);
		if (pfd[0].revents & (POLLIN | POLLHUP))
			spawnd_dispatch(fd, buf);
	}
}

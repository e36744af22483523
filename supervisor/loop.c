/*
 * The event loop: one epoll set, a signalfd and a list of one-shot timers.
 *
 * An fd's handler is looked up by fd with a generation number packed in the
 * epoll data, so a handler that closes another fd (a worker killed while its
 * events are still in this batch) never sees a stale callback run.
 */
#include <sys/epoll.h>
#include <sys/signalfd.h>

#include <errno.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/clock.h"
#include "common/log.h"
#include "common/xmalloc.h"
#include "supervisor/loop.h"
#include "supervisor/loop_testapi.h"

#define LOOP_MAX_EVENTS	64

struct loop_fd {
	loop_fd_cb	 cb;
	void		*arg;
	uint32_t	 gen;
	int		 used;
	int		 armed;	/* in the epoll set: asked for events */
};

struct loop_timer {
	uint64_t	 id;
	uint64_t	 due;
	loop_timer_cb	 cb;
	void		*arg;
};

struct loop {
	int			 epfd;
	int			 sigfd;
	struct loop_fd		*fds;
	size_t			 nfds;
	uint32_t		 gen;
	struct loop_timer	*timers;
	size_t			 ntimers, timercap;
	uint64_t		 nextid;
	loop_signal_cb		 sigcb;
	void			*sigarg;
	loop_timeout_cb		 tocb;
	void			*toarg;
	void			(*idlecb)(void *);
	void			*idlearg;
	int			 stop;
};

/* A worker undoes these before its exec (spawnd/spawn.c, spawn_child_sigreset). */
static const int loop_sigs[] = { SIGCHLD, SIGINT, SIGTERM, SIGHUP };

struct loop *
loop_new(void)
{
	struct loop	*l;

	l = xcalloc(1, sizeof(*l));
	l->sigfd = -1;
	if ((l->epfd = epoll_create1(EPOLL_CLOEXEC)) == -1) {
		free(l);
		return NULL;
	}
	return l;
}

void
loop_free(struct loop *l)
{
	if (l == NULL)
		return;
	if (l->sigfd != -1)
		close(l->sigfd);
	close(l->epfd);
	free(l->fds);
	free(l->timers);
	free(l);
}

int
loop_add_fd(struct loop *l, int fd, uint32_t events, loop_fd_cb cb, void *arg)
{
	struct epoll_event	 ev;
	size_t			 n;

	if (fd < 0) {
		errno = EBADF;
		return -1;
	}
	if ((size_t)fd >= l->nfds) {
		n = (size_t)fd + 64;
		l->fds = xreallocarray(l->fds, n, sizeof(*l->fds));
		memset(l->fds + l->nfds, 0, (n - l->nfds) * sizeof(*l->fds));
		l->nfds = n;
	}
	l->fds[fd].cb = cb;
	l->fds[fd].arg = arg;
	l->fds[fd].gen = ++l->gen;
	l->fds[fd].used = 1;
	l->fds[fd].armed = 0;
	/*
	 * No events yet (a worker's input pipe, until a write would block):
	 * it joins the epoll set when loop_mod_fd asks for some, so a worker
	 * that never fills its pipe costs no epoll_ctl ADD and DEL.
	 */
	if (events == 0)
		return 0;
	memset(&ev, 0, sizeof(ev));
	ev.events = events;
	ev.data.u64 = (uint64_t)(uint32_t)fd | ((uint64_t)l->fds[fd].gen << 32);
	if (epoll_ctl(l->epfd, EPOLL_CTL_ADD, fd, &ev) == -1) {
		l->fds[fd].used = 0;
		return -1;
	}
	l->fds[fd].armed = 1;
	return 0;
}

int
loop_mod_fd(struct loop *l, int fd, uint32_t events)
{
	struct epoll_event	ev;

	if (fd < 0 || (size_t)fd >= l->nfds || !l->fds[fd].used) {
		errno = EBADF;
		return -1;
	}
	memset(&ev, 0, sizeof(ev));
	ev.events = events;
	ev.data.u64 = (uint64_t)(uint32_t)fd | ((uint64_t)l->fds[fd].gen << 32);
	if (events == 0) {
		/* Out of the set: not even EPOLLERR and EPOLLHUP wake us. */
		if (l->fds[fd].armed &&
		    epoll_ctl(l->epfd, EPOLL_CTL_DEL, fd, NULL) == -1)
			return -1;
		l->fds[fd].armed = 0;
		return 0;
	}
	if (l->fds[fd].armed)
		return epoll_ctl(l->epfd, EPOLL_CTL_MOD, fd, &ev);
	if (epoll_ctl(l->epfd, EPOLL_CTL_ADD, fd, &ev) == -1)
		return -1;
	l->fds[fd].armed = 1;
	return 0;
}

void
loop_del_fd(struct loop *l, int fd)
{
	if (fd < 0 || (size_t)fd >= l->nfds || !l->fds[fd].used)
		return;
	if (l->fds[fd].armed)
		(void)epoll_ctl(l->epfd, EPOLL_CTL_DEL, fd, NULL);
	l->fds[fd].used = l->fds[fd].armed = 0;
	l->fds[fd].cb = NULL;
}

uint64_t
loop_timer_add(struct loop *l, uint64_t ms, loop_timer_cb cb, void *arg)
{
	struct loop_timer	*t;

	if (l->ntimers == l->timercap) {
		l->timercap = l->timercap ? l->timercap * 2 : 64;
		l->timers = xreallocarray(l->timers, l->timercap,
		    sizeof(*l->timers));
	}
	t = &l->timers[l->ntimers++];
	t->id = ++l->nextid;
	t->due = clock_mono_ms() + ms;
	t->cb = cb;
	t->arg = arg;
	return t->id;
}

void
loop_timer_del(struct loop *l, uint64_t id)
{
	size_t	i;

	if (id == 0)
		return;
	for (i = 0; i < l->ntimers; i++) {
		if (l->timers[i].id == id) {
			l->timers[i] = l->timers[--l->ntimers];
			return;
		}
	}
}

static void
loop_signal_read(int fd, uint32_t events, void *arg)
{
	struct loop			*l = arg;
	struct signalfd_siginfo		 si;
	ssize_t				 n;

	(void)events;
	for (;;) {
		n = read(fd, &si, sizeof(si));
		if (n != (ssize_t)sizeof(si)) {
			if (n == -1 && errno == EINTR)
				continue;
			return;
		}
		if (l->sigcb != NULL)
			l->sigcb((int)si.ssi_signo, l->sigarg);
	}
}

int
loop_signals(struct loop *l, loop_signal_cb cb, void *arg)
{
	sigset_t	set;
	size_t		i;

	sigemptyset(&set);
	for (i = 0; i < sizeof(loop_sigs) / sizeof(loop_sigs[0]); i++)
		sigaddset(&set, loop_sigs[i]);
	if (sigprocmask(SIG_BLOCK, &set, NULL) == -1)
		return -1;
	signal(SIGPIPE, SIG_IGN);
	if ((l->sigfd = signalfd(-1, &set, SFD_NONBLOCK | SFD_CLOEXEC)) == -1)
		return -1;
	l->sigcb = cb;
	l->sigarg = arg;
	return loop_add_fd(l, l->sigfd, EPOLLIN, loop_signal_read, l);
}

void
loop_set_timeout_hook(struct loop *l, loop_timeout_cb cb, void *arg)
{
	l->tocb = cb;
	l->toarg = arg;
}

void
loop_set_idle_hook(struct loop *l, void (*cb)(void *), void *arg)
{
	l->idlecb = cb;
	l->idlearg = arg;
}

/* Milliseconds until the first timer (or the hook) is due; -1 if none. */
static long
loop_next_timeout(struct loop *l, long max_ms)
{
	uint64_t	now = clock_mono_ms(), due = UINT64_MAX;
	long		ms, hook;
	size_t		i;

	for (i = 0; i < l->ntimers; i++)
		if (l->timers[i].due < due)
			due = l->timers[i].due;
	if (due == UINT64_MAX)
		ms = -1;
	else
		ms = due <= now ? 0 : (long)(due - now);
	if (l->tocb != NULL && (hook = l->tocb(l->toarg)) >= 0 &&
	    (ms < 0 || hook < ms))
		ms = hook;
	if (max_ms >= 0 && (ms < 0 || max_ms < ms))
		ms = max_ms;
	return ms;
}

/*
 * Fire the timers due now, earliest first (a late pass under load must
 * not reorder them); timers added by a callback wait for the next pass.
 */
static void
loop_fire_timers(struct loop *l)
{
	uint64_t		now = clock_mono_ms(), last = l->nextid;
	struct loop_timer	t;
	size_t			i, best;

	for (;;) {
		best = l->ntimers;
		for (i = 0; i < l->ntimers; i++) {
			if (l->timers[i].due > now || l->timers[i].id > last)
				continue;
			if (best == l->ntimers ||
			    l->timers[i].due < l->timers[best].due ||
			    (l->timers[i].due == l->timers[best].due &&
			    l->timers[i].id < l->timers[best].id))
				best = i;
		}
		if (best == l->ntimers)
			return;
		t = l->timers[best];
		l->timers[best] = l->timers[--l->ntimers];
		t.cb(t.arg);	/* it may change the array: scan again */
	}
}

int
loop_once(struct loop *l, long max_ms)
{
	struct epoll_event	 evs[LOOP_MAX_EVENTS];
	struct loop_fd		*f;
	uint32_t		 gen;
	int			 i, n, fd;

	n = epoll_wait(l->epfd, evs, LOOP_MAX_EVENTS,
	    (int)loop_next_timeout(l, max_ms));
	if (n == -1) {
		if (errno == EINTR)
			return 0;
		return -1;
	}
	for (i = 0; i < n; i++) {
		fd = (int)(uint32_t)evs[i].data.u64;
		gen = (uint32_t)(evs[i].data.u64 >> 32);
		if ((size_t)fd >= l->nfds)
			continue;
		f = &l->fds[fd];
		if (!f->used || f->gen != gen || f->cb == NULL)
			continue;
		f->cb(fd, evs[i].events, f->arg);
	}
	loop_fire_timers(l);
	if (l->idlecb != NULL)
		l->idlecb(l->idlearg);
	return 0;
}

int
loop_run(struct loop *l)
{
	l->stop = 0;
	while (!l->stop) {
		if (loop_once(l, -1) == -1) {
			log_warn("epoll_wait");
			return -1;
		}
	}
	return 0;
}

void
loop_break(struct loop *l)
{
	l->stop = 1;
}

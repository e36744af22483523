/*
 * The supervisor's one event loop: epoll over worker channels, curl's
 * sockets (one epoll fd of the LLM engine), a signalfd (SIGCHLD, SIGINT,
 * SIGTERM, SIGHUP) and timers. Nothing in the supervisor blocks: every
 * handler runs to completion and returns to the loop.
 */
#ifndef WARREN_LOOP_H
#define WARREN_LOOP_H

#include <stdint.h>

struct loop;

/* Called with the epoll events (EPOLLIN, EPOLLOUT, EPOLLHUP ...) of fd. */
typedef void	(*loop_fd_cb)(int fd, uint32_t events, void *arg);
typedef void	(*loop_timer_cb)(void *arg);
typedef void	(*loop_signal_cb)(int signo, void *arg);
/* Asked before every wait: ms until the callee needs to run, -1 = never. */
typedef long	(*loop_timeout_cb)(void *arg);

/* loop.c */
struct loop	*loop_new(void);
void		 loop_free(struct loop *);
/* events 0 keeps fd out of the epoll set (no EPOLLERR or EPOLLHUP
 * either) until loop_mod_fd asks for some; loop_mod_fd(0) takes it out. */
int		 loop_add_fd(struct loop *, int fd, uint32_t events, loop_fd_cb,
		    void *arg);
int		 loop_mod_fd(struct loop *, int fd, uint32_t events);
void		 loop_del_fd(struct loop *, int fd);
/* One-shot timer in ms from now; returns an id > 0 for loop_timer_del. */
uint64_t	 loop_timer_add(struct loop *, uint64_t ms, loop_timer_cb,
		    void *arg);
void		 loop_timer_del(struct loop *, uint64_t id);
/* Block the signals (SIGCHLD, SIGINT, SIGTERM, SIGHUP, SIGPIPE ignored) and
 * deliver them through a signalfd to cb. */
int		 loop_signals(struct loop *, loop_signal_cb, void *arg);
void		 loop_set_timeout_hook(struct loop *, loop_timeout_cb, void *arg);
/* Called after every batch of events (for work deferred to a safe point). */
void		 loop_set_idle_hook(struct loop *, void (*)(void *), void *arg);
/* Run until loop_break(); -1 on an epoll error. */
int		 loop_run(struct loop *);
void		 loop_break(struct loop *);

#endif

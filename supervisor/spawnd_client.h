/*
 * warren's side of the spawn server (spawnd/spawnd.h): the server forks
 * every worker on the supervisor's behalf, in a process of its own.
 */
#ifndef WARREN_SPAWND_CLIENT_H
#define WARREN_SPAWND_CLIENT_H

#include <sys/types.h>

#include <stdint.h>

#include "spawnd/spawn.h"

struct cow;
struct loop;
struct spawnd_client;

/* spawnd_client.c */
/* What the server's answers are delivered to (spawnd_client_read). */
struct spawnd_client_ops {
	/* The answer to spawnd_client_request(cookie): the worker
	 * (c->remote set, c->sb NULL), or c NULL and a readable reason in
	 * err. */
	void	(*spawned)(void *cookie, const struct spawn_child *c,
		    const char *err, void *arg);
	/* The server reaped worker pid (si_code, si_status). */
	void	(*exited)(pid_t pid, int code, int status, void *arg);
};

/* Requests in flight at most: beyond it, wait for an answer (the
 * requests of the server's queue then stay in the socket's buffer). */
#define SPAWND_CLIENT_INFLIGHT_MAX	8

/*
 * Fork the spawn server (spawnd_main) now, before the key is read and the
 * heap grows; NULL with a readable reason in err.
 */
struct spawnd_client *spawnd_client_start(char *err, size_t errsz);
/*
 * Before the first spawn: the server enters the run's copy-on-write layer
 * (cow_enter), which every worker then inherits, and this waits until it
 * has (SPAWND_READY_MS at most: a layer on a tmpfs, cow->bound, is
 * copied in first). *memfd: that tmpfs's root (the caller closes it), or
 * -1. -1: the layer could not be had (err names it and the cause), and
 * the run must not go on.
 */
int	spawnd_client_layer(struct spawnd_client *d, const struct cow *cow,
	    int *memfd, char *err, size_t errsz);
#define SPAWND_READY_MS	60000
/*
 * The loop that watches the channel (the caller added the fd for
 * EPOLLIN): the client asks it for EPOLLOUT while packets wait, and the
 * caller's handler calls spawnd_client_flush on EPOLLOUT. Without a loop,
 * the caller (a test) polls for POLLOUT while spawnd_client_queued
 * (spawnd_client_testapi.h) says some wait.
 */
void		 spawnd_client_watch(struct spawnd_client *, struct loop *);
int		 spawnd_client_fd(const struct spawnd_client *);
pid_t		 spawnd_client_pid(const struct spawnd_client *);
/* SPAWND_CLIENT_INFLIGHT_MAX requests are unanswered: ask later. */
int		 spawnd_client_full(const struct spawnd_client *);
/*
 * Ask the server for a worker, without waiting: the answer comes through
 * spawnd_client_read's ops->spawned(cookie, ...). Returns the request's
 * id, or 0 with a reason in err (nothing will be delivered then).
 */
uint32_t	 spawnd_client_request(struct spawnd_client *,
		    const struct spawn_req *, void *cookie, char *err,
		    size_t errsz);
/* Nobody waits for request id any more: its worker is killed on arrival. */
void		 spawnd_client_forget(struct spawnd_client *, uint32_t id);
/* Signal a worker's whole tree. */
void		 spawnd_client_kill(struct spawnd_client *, pid_t, int signo);
/* Send what waits until the socket is full: 0 all sent, 1 some wait, -1
 * the server is gone (its EOF follows through spawnd_client_read). */
int		 spawnd_client_flush(struct spawnd_client *);
/* Deliver every answer and exit the server sent. 0 when drained, -1 when
 * the server is gone. */
int		 spawnd_client_read(struct spawnd_client *,
		    const struct spawnd_client_ops *, void *arg);
/* The server is gone: the cookie of each request left unanswered, once;
 * then NULL. */
void		*spawnd_client_orphan(struct spawnd_client *);
/* Close the channel (the server kills what is left and exits); reap it. */
void		 spawnd_client_stop(struct spawnd_client *);

#endif

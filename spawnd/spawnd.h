/*
 * The spawn server's protocol: what crosses the socket between warren
 * (supervisor/spawnd_client.c) and the spawn server (spawnd.c), a process
 * forked from warren before it reads the API key.
 *
 * SOCK_SEQPACKET, both ends trusted, one message per packet: a struct
 * spawnd_hdr, then h.len bytes of payload, and up to 3 fds (SCM_RIGHTS).
 *   S -> Z  SPAWN  id, policy, argv, envp      Z -> S  SPAWNED id, pid | err,
 *                                                       + 3 fds
 *   S -> Z  KILL   pid, signal                 Z -> S  EXIT pid, code, status
 *   S -> Z  LAYER  struct cow                  Z -> S  READY pid 0 | -1, err
 * LAYER comes before any SPAWN, once the supervisor knows the run's
 * copy-on-write layer (after the server started, which is before warren
 * reads the key): the server enters it, and every worker inherits it.
 * A SPAWN's payload is the struct sandbox_policy, two uint32_t counts, then
 * argv (the program's path first) and envp as NUL-terminated strings.
 * Sends never block (spawnd.c says why): each side queues what the
 * socket does not take.
 */
#ifndef WARREN_SPAWND_H
#define WARREN_SPAWND_H

#include <sys/types.h>
#include <sys/uio.h>

#include <stdint.h>

#include "sandbox/sandbox.h"

#define SPAWND_MSG_MAX	(128u * 1024)
#define SPAWND_ARGS_MAX	64
#define SPAWND_STRS_MAX	(8u * 1024)	/* argv + envp bytes of a spawn */

enum spawnd_type {
	SPAWND_SPAWN = 1,
	SPAWND_SPAWNED,
	SPAWND_KILL,
	SPAWND_EXIT,
	SPAWND_LAYER,		/* enter this copy-on-write layer */
	SPAWND_READY,		/* the layer entered, or why not */
};

struct spawnd_hdr {
	uint32_t	type;
	uint32_t	id;
	int32_t		pid;
	int32_t		a;		/* SPAWN: spawn_req.mode; KILL: signal;
					   EXIT: si_code, or
					   SPAWN_CLD_OOM (spawn.h) */
	int32_t		b;		/* EXIT: si_status */
	uint32_t	len;		/* bytes of payload after the header */
};

/* The policy follows the header; the server reads it in place. */
_Static_assert(sizeof(struct spawnd_hdr) % _Alignof(struct sandbox_policy) ==
    0, "a spawn request's policy must be aligned after its header");

/* spawnd.c */
/*
 * One packet either way: the header in iov[0] (filled in here), the
 * payload in iov[1 .. niov) and up to 3 fds; -1 with errno (EAGAIN: the
 * socket's buffer is full, nothing was sent).
 */
int	spawnd_sendv(int fd, const struct spawnd_hdr *h, struct iovec *iov,
	    int niov, const int *fds, int nfds);
/* A header and h->len bytes of data. */
int	spawnd_sendmsg(int fd, const struct spawnd_hdr *h, const void *data,
	    const int *fds, int nfds);
/*
 * The server, in the child forked by spawnd_client_start: it serves fd
 * until the supervisor (pid parent) closes it or dies, then kills every
 * worker it started and exits.
 */
void	spawnd_main(int fd, pid_t parent) __attribute__((noreturn));

#endif

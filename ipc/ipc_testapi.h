/*
 * What tests call directly of the IPC codec and pipes: production reaches
 * the encoder only through ipc_msg_frame (a map in its frame), and makes a
 * worker's pipes in the spawn server (spawnd/spawn.c). Only tests and the
 * files defining these include this (scripts/check-exports.py).
 */

#ifndef WARREN_IPC_TESTAPI_H
#define WARREN_IPC_TESTAPI_H

#include <stddef.h>

#include "ipc/ipc.h"

/* Append m's msgpack map (no frame header) to out. */
int	 ipc_msg_encode(struct buf *out, const struct ipc_msg *m, char *err,
	    size_t errsz);
/*
 * Two pipes as the framing tests use them: sup[0] the supervisor reads,
 * sup[1] it writes; wrk[0] the worker reads, wrk[1] it writes. All
 * O_CLOEXEC; the supervisor's ends O_NONBLOCK; both raised to
 * IPC_PIPE_SIZE where the kernel allows (a real worker's pipes keep the
 * default size: docs/protocol.md, "Pipe size").
 */
int	 ipc_peer_pipes(int sup[2], int wrk[2]);

#endif

/*
 * What tests call directly of the IPC codec: production reaches each
 * only through ipc_msg_frame (a map in its frame). Only tests and the
 * files defining these include this (scripts/check-exports.py).
 */

#ifndef WARREN_IPC_TESTAPI_H
#define WARREN_IPC_TESTAPI_H

#include <stddef.h>

#include "ipc/ipc.h"

/* Append m's msgpack map (no frame header) to out. */
int	 ipc_msg_encode(struct buf *out, const struct ipc_msg *m, char *err,
	    size_t errsz);

#endif

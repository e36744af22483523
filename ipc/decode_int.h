/*
 * Inside the decoder: one function a message type, each reading the rest
 * of the top-level map into its struct. decode.c reads "type" and hands
 * the body to one of these; decode_from_worker.c holds what a worker
 * sends, decode_from_supervisor.c what the supervisor sends. Private to
 * those three files.
 */
#ifndef WARREN_IPC_DECODE_INT_H
#define WARREN_IPC_DECODE_INT_H

#include <stdint.h>

#include "ipc/ipc.h"
#include "ipc/mp.h"

/* decode_from_worker.c */
int	decode_hello(struct mp_reader *, uint32_t n, struct ipc_hello *);
int	decode_llm(struct mp_reader *, uint32_t n, struct ipc_llm *);
int	decode_mcp(struct mp_reader *, uint32_t n, struct ipc_mcp *);
int	decode_spawn(struct mp_reader *, uint32_t n, struct ipc_spawn *);
int	decode_event(struct mp_reader *, uint32_t n, struct ipc_event *);
int	decode_checkpoint(struct mp_reader *, uint32_t n,
	    struct ipc_checkpoint *);
int	decode_done(struct mp_reader *, uint32_t n, struct ipc_done *);
int	decode_http(struct mp_reader *, uint32_t n, struct ipc_http *);

/* decode_from_supervisor.c */
int	decode_start(struct mp_reader *, uint32_t n, struct ipc_start *);
int	decode_llm_ok(struct mp_reader *, uint32_t n, struct ipc_llm_ok *);
/* llm_err, spawn_err, mcp_err, http_err: what names the message. */
int	decode_error(struct mp_reader *, uint32_t n, struct ipc_error *,
	    const char *what);
int	decode_mcp_ok(struct mp_reader *, uint32_t n, struct ipc_mcp_ok *);
int	decode_spawn_ok(struct mp_reader *, uint32_t n,
	    struct ipc_spawn_ok *);
int	decode_cancel(struct mp_reader *, uint32_t n, struct ipc_cancel *);
int	decode_http_ok(struct mp_reader *, uint32_t n, struct ipc_http_ok *);

#endif

/*
 * Sample IPC messages for tests, the fuzz corpus generator and the
 * benchmark: one full message per type (every optional field set), and
 * the same with the optional fields left out.
 */
#ifndef WARREN_TESTS_IPC_SAMPLES_H
#define WARREN_TESTS_IPC_SAMPLES_H

#include <stddef.h>

#include "common/buf.h"
#include "ipc/ipc.h"

/* Every type, in protocol order. */
extern const enum ipc_type samples_types[];
extern const size_t samples_ntypes;

/* samples.c */
/* Fill m with a sample of type; minimal leaves optional fields out. */
void	samples_msg(struct ipc_msg *m, enum ipc_type type, int minimal);
/* A whole frame of the sample in out (reset first); aborts on failure. */
void	samples_frame(struct buf *out, enum ipc_type type, int minimal);

#endif

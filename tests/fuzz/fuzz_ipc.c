/*
 * libFuzzer harness for the IPC decoder: the input is a byte stream as a
 * peer would send it. It goes through the frame reader of both sides in
 * each state (frame check, decoder, permission table), and is decoded as a
 * bare message body too; whatever decodes must re-encode to a body that
 * decodes again to the same bytes, and must describe in one bounded line.
 * Seeds: tests/fuzz/corpus/ipc (written by tests/ipc/gen_corpus.c).
 */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "common/buf.h"
#include "ipc/ipc.h"
#include "ipc/ipc_testapi.h"

int	LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void
fuzz_check(const struct ipc_msg *m)
{
	struct buf	a, b;
	struct ipc_msg	d;
	char		err[IPC_ERR_LEN], line[IPC_DESCRIBE_LEN];

	if (ipc_msg_describe(m, line, sizeof(line)) >= sizeof(line) ||
	    memchr(line, '\n', strlen(line)) != NULL)
		abort();
	buf_init(&a, 0);
	buf_init(&b, 0);
	if (ipc_msg_encode(&a, m, err, sizeof(err)) == -1)
		abort();	/* decoded but not encodable: a codec bug */
	if (ipc_msg_decode(buf_head(&a), buf_left(&a), &d, err,
	    sizeof(err)) == -1)
		abort();
	if (ipc_msg_encode(&b, &d, err, sizeof(err)) == -1 ||
	    buf_left(&a) != buf_left(&b) ||
	    memcmp(buf_head(&a), buf_head(&b), buf_left(&a)) != 0)
		abort();
	ipc_msg_free(&d);
	buf_free(&a);
	buf_free(&b);
}

static void
fuzz_stream(const uint8_t *data, size_t size, enum ipc_side self,
    enum ipc_state state)
{
	struct ipc_peer	p;
	struct ipc_msg	m;

	ipc_peer_init(&p, -1, -1, self);
	p.state = state;
	if (buf_add(&p.in, data, size) == 0) {
		while (ipc_peer_get(&p, &m) == 1) {
			fuzz_check(&m);
			ipc_msg_free(&m);
		}
	}
	ipc_peer_free(&p);
}

static void
fuzz_body(const uint8_t *data, size_t size)
{
	struct ipc_msg	m;
	char		err[IPC_ERR_LEN];

	if (ipc_msg_decode(data, size, &m, err, sizeof(err)) == 0) {
		fuzz_check(&m);
		ipc_msg_free(&m);
	} else if (err[0] == '\0')
		abort();	/* every failure says why */
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	fuzz_stream(data, size, IPC_SIDE_SUPERVISOR, IPC_STATE_NEW);
	fuzz_stream(data, size, IPC_SIDE_SUPERVISOR, IPC_STATE_RUN);
	fuzz_stream(data, size, IPC_SIDE_WORKER, IPC_STATE_HELLO);
	fuzz_stream(data, size, IPC_SIDE_WORKER, IPC_STATE_RUN);
	fuzz_body(data, size);
	if (size > IPC_HDR_LEN)
		fuzz_body(data + IPC_HDR_LEN, size - IPC_HDR_LEN);
	return 0;
}

/*
 * Write the seed corpus of tests/fuzz/fuzz_ipc.c: one valid frame per
 * message type (full and minimal), and a few malformed ones.
 *   ipc_gen_corpus DIR
 */
#include <err.h>
#include <stdio.h>
#include <string.h>

#include "common/buf.h"
#include "ipc/ipc.h"
#include "tests/ipc/samples.h"

static void
gen_write(const char *dir, const char *name, const void *p, size_t len)
{
	char	path[4096];
	FILE	*f;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	if ((f = fopen(path, "wb")) == NULL)
		err(1, "%s", path);
	if (fwrite(p, 1, len, f) != len || fclose(f) != 0)
		err(1, "%s", path);
}

int
main(int argc, char **argv)
{
	static const unsigned char zero[] = { 0, 0, 0, 0 };
	static const unsigned char huge[] = { 0xff, 0xff, 0xff, 0xff, 0x80 };
	static const unsigned char arr[] = { 0, 0, 0, 5, 0xdd, 0xff, 0xff,
	    0xff, 0xff };
	static const unsigned char trail[] = { 0, 0, 0, 5, 0x81, 0xa4, 't',
	    'y', 'p' };
	static const enum ipc_type says[] = { IPC_HELLO, IPC_EVENT, IPC_LLM,
	    IPC_CHECKPOINT, IPC_SPAWN, IPC_MCP, IPC_DONE };
	struct buf	b, all;
	char		name[64];
	size_t		i;
	int		minimal;

	if (argc != 2)
		errx(2, "usage: ipc_gen_corpus DIR");
	buf_init(&b, 0);
	buf_init(&all, 0);
	for (i = 0; i < samples_ntypes; i++) {
		for (minimal = 0; minimal < 2; minimal++) {
			samples_frame(&b, samples_types[i], minimal);
			snprintf(name, sizeof(name), "%s%s",
			    ipc_type_name(samples_types[i]),
			    minimal ? "-min" : "");
			gen_write(argv[1], name, buf_head(&b), buf_left(&b));
		}
	}
	/* What a worker says in a run, as one stream. */
	buf_reset(&all);
	for (i = 0; i < sizeof(says) / sizeof(says[0]); i++) {
		samples_frame(&b, says[i], 0);
		buf_add(&all, buf_head(&b), buf_left(&b));
	}
	gen_write(argv[1], "stream-worker", buf_head(&all), buf_left(&all));
	gen_write(argv[1], "bad-zero-length", zero, sizeof(zero));
	gen_write(argv[1], "bad-huge-length", huge, sizeof(huge));
	gen_write(argv[1], "bad-huge-array", arr, sizeof(arr));
	gen_write(argv[1], "bad-truncated", trail, sizeof(trail));
	buf_free(&b);
	buf_free(&all);
	return 0;
}

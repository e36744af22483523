/*
 * Fuzz the reading of a change set (workspace/cow_unpack.c): the bytes
 * come from the queue's database. A set that is accepted must be what
 * apply relies on without checking again; this walks it again, apart,
 * and checks every path is relative without "." or ".." parts, sorted
 * and unique, and the set ends where its last change does.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "workspace/cow.h"
#include "workspace/cow_testapi.h"
#include "workspace/hostexec.h"

int	LLVMFuzzerTestOneInput(const uint8_t *, size_t);

static uint64_t
fuzz_le(const uint8_t *p, size_t n)
{
	uint64_t	v = 0;
	size_t		i;

	for (i = 0; i < n; i++)
		v |= (uint64_t)p[i] << (8 * i);
	return v;
}

/* The path of len bytes at p: no empty, "." or ".." part, no NUL. */
static void
fuzz_path(const uint8_t *p, size_t len)
{
	size_t	i, start = 0;

	if (len == 0 || p[0] == '/' || memchr(p, '\0', len) != NULL)
		abort();
	for (i = 0; i <= len; i++) {
		if (i < len && p[i] != '/')
			continue;
		if (i == start || (i - start == 1 && p[start] == '.') ||
		    (i - start == 2 && memcmp(p + start, "..", 2) == 0))
			abort();
		start = i + 1;
	}
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char		 err[512], *prev = NULL, *path;
	size_t		 off = 12, n, i, plen, dlen;

	if (cow_unpack_check(data, size, err, sizeof(err)) == -1)
		return 0;
	n = fuzz_le(data + 8, 4);
	for (i = 0; i < n; i++) {
		/* kind, base_by, base_mode, sum, new_mode: 42 bytes */
		plen = fuzz_le(data + off + 42, 2);
		fuzz_path(data + off + 44, plen);
		if ((path = strndup((const char *)data + off + 44, plen)) ==
		    NULL)
			abort();
		if (prev != NULL && hostexec_pathcmp(prev, path) >= 0)
			abort();
		free(prev);
		prev = path;
		dlen = fuzz_le(data + off + 44 + plen, 4);
		off += 44 + plen + 4 + dlen;
	}
	free(prev);
	if (off != size)
		abort();
	return 0;
}

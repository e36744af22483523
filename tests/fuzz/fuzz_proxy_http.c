/*
 * Fuzz a backend proxy's HTTP parser (worker/proxy_http.c): what an agent
 * program sends its base URL, fed whole and then in two pieces split at
 * the first byte's offset, as it arrives from a socket. Whatever it is, the
 * parser answers "more", a request it checks (method, path, bounded body,
 * only the headers an IPC http may carry) or an error status, never more
 * than it was given.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "ipc/ipc.h"
#include "worker/proxy.h"

int	LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void
fuzz_one(const char *buf, size_t len)
{
	struct proxy_req	 r;
	char			 why[160];
	size_t			 used = 0, i;
	int			 rc, status = 0;

	memset(&r, 0, sizeof(r));
	rc = proxy_http_parse(buf, len, &r, &used, &status, why, sizeof(why));
	if (rc == 1) {
		if (used == 0 || used > len || r.bodylen > PROXY_BODY_MAX ||
		    (r.body != NULL && memchr(r.body, '\0', r.bodylen) != NULL))
			abort();
		for (i = 0; i < r.nheaders; i++)
			if (!ipc_http_header_ok(r.headers[i],
			    strlen(r.headers[i])))
				abort();
		(void)proxy_http_route("anthropic", r.method, r.path);
	} else if (rc == -1 && (status < 400 || status > 599))
		abort();
	else if (rc == 0 && status != 0 && status != 100)
		abort();
	proxy_http_free(&r);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char	*buf;
	size_t	 cut;

	if (size < 1 || size > 256 * 1024)
		return 0;
	if ((buf = malloc(size)) == NULL)
		return 0;
	memcpy(buf, data + 1, size - 1);
	fuzz_one(buf, size - 1);
	cut = data[0] % size;
	fuzz_one(buf, cut);
	free(buf);
	return 0;
}

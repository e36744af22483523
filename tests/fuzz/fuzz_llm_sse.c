/*
 * libFuzzer: the SSE parser on its own, fed in chunks whose sizes come
 * from the input, with a small bound so the size checks are reached.
 */
#include <stdint.h>
#include <string.h>

#include "llm/llm_int.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static int
fuzz_sse_event(const char *event, const char *data, size_t len, void *arg)
{
	size_t	*total = arg;

	/* The callback's view must be consistent: NUL at len. */
	if (data[len] != '\0' || strlen(event) >= 64)
		__builtin_trap();
	*total += len;
	return len == 4 && memcmp(data, "stop", 4) == 0 ? -1 : 0;
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct llm_sse	s;
	size_t		i, step, total = 0;

	if (size < 1)
		return 0;
	step = (size_t)data[0] % 17 + 1;
	llm_sse_init(&s, 512);
	for (i = 1; i < size; i += step) {
		if (llm_sse_feed(&s, (const char *)data + i, i + step > size ?
		    size - i : step, fuzz_sse_event, &total) == -1)
			break;
	}
	llm_sse_free(&s);
	return 0;
}

/*
 * libFuzzer: the text-mode tool-call parser on arbitrary model output
 * (Hermes <tool_call> blocks, fenced JSON, bare objects, and garbage).
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "common/str.h"
#include "llm/llm_int.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct msg	m;
	size_t		i;
	int		n;

	memset(&m, 0, sizeof(m));
	m.role = MSG_ASSISTANT;
	if ((m.text = str_ndup((const char *)data, size)) == NULL)
		return 0;
	n = llm_textcall_parse(&m);
	/* What it found is consistent: as many calls, each complete. */
	if (n > 0 && (size_t)n != m.ncalls)
		__builtin_trap();
	for (i = 0; i < m.ncalls; i++) {
		if (m.calls[i].name == NULL || m.calls[i].args == NULL ||
		    m.calls[i].id == NULL)
			__builtin_trap();
	}
	msg_free(&m);
	return 0;
}

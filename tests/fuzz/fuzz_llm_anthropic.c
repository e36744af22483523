/* libFuzzer: the anthropic wire format's answer parser, whole and streamed. */
#include "tests/fuzz/fuzz_llm_wire.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	fuzz_wire(&llm_anthropic_wire, data, size);
	return 0;
}

/*
 * Fuzz the two parsers of the sandbox library: the layer strings a worker
 * sends in its hello (hostile: sandbox_report_parse, then
 * sandbox_report_check) and the WARREN_SANDBOX encoding
 * (sandbox_policy_decode). Input: NUL-separated strings; the first byte
 * picks the parser.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "agent/profile.h"
#include "sandbox/sandbox.h"

int	LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct sandbox_policy	 p;
	struct sandbox_report	 r;
	struct sandbox_error	 e;
	const char		*strs[SANDBOX_REPORT_MAX + 2];
	char			*buf, *s, line[1024];
	struct sandbox_phase1	 ph1;
	size_t			 i;
	int			 n = 0;

	if (size < 1 || size > 4096)
		return 0;
	if ((buf = malloc(size + 1)) == NULL)
		return 0;
	memcpy(buf, data + 1, size - 1);
	buf[size - 1] = '\0';
	if (data[0] & 1) {
		/* Phase 1's bits only; no ruleset, or one above stdio. */
		if (sandbox_policy_decode(buf, &p, &ph1, &e) == 0 &&
		    ((ph1.applied & ~SANDBOX_PHASE1) != 0 ||
		    (ph1.landlock_fd == -1 ? ph1.landlock_abi != 0 :
		    ph1.landlock_fd < 3 || ph1.landlock_abi < 1)))
			abort();
		free(buf);
		return 0;
	}
	for (s = buf, i = 0; i < size && n < SANDBOX_REPORT_MAX + 2; ) {
		strs[n++] = s;
		s += strlen(s) + 1;
		i = (size_t)(s - buf);
	}
	if (sandbox_report_parse(&r, strs, n, &e) == 0) {
		if (r.nlayers != n || r.nlayers > SANDBOX_REPORT_MAX)
			abort();
		sandbox_report_string(&r, line, sizeof(line));
		if (profile_policy(&p, "general", "/tmp", &e) == 0)
			(void)sandbox_report_check(&p, &r, &e);
	}
	free(buf);
	return 0;
}

/*
 * bench_grep: the grep and glob tools over a large tree, against
 * grep -rn and find on the same tree and pattern.
 *
 *	bench_grep [DIR] [PATTERN] [RUNS]	(default /usr/include EINVAL 5)
 *
 * Both sides print every match (warren's caps raised so nothing is cut);
 * grep's and find's output goes to /dev/null. Medians in ms.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/clock.h"
#include "worker/tools.h"
#include "worker/tools_testapi.h"

static int
cmp_u64(const void *a, const void *b)
{
	uint64_t	x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

static double
median_ms(uint64_t *v, int n)
{
	qsort(v, n, sizeof(v[0]), cmp_u64);
	return v[n / 2] / 1e6;
}

static size_t
count_lines(const char *s)
{
	size_t	n = 0;

	for (; *s != '\0'; s++)
		n += *s == '\n';
	return n;
}

int
main(int argc, char **argv)
{
	const char		*dir = argc > 1 ? argv[1] : "/usr/include";
	const char		*pat = argc > 2 ? argv[2] : "EINVAL";
	int			 runs = argc > 3 ? atoi(argv[3]) : 5, i;
	struct tool_ctx		 ctx;
	struct tool_result	 r;
	uint64_t		 tw[32], tg[32], gw[32], gf[32], t0;
	char			 err[256], args[512], cmd[1024];
	size_t			 lines = 0, files = 0;

	if (runs < 1 || runs > 32 || strpbrk(pat, "'\"\\") != NULL) {
		fprintf(stderr, "usage: bench_grep [DIR] [PATTERN] [RUNS<=32]"
		    "\n");
		return 2;
	}
	if (tool_ctx_open(&ctx, dir, err, sizeof(err)) == -1) {
		fprintf(stderr, "%s\n", err);
		return 1;
	}
	ctx.max_output = 256u * 1024 * 1024;
	snprintf(args, sizeof(args), "{\"pattern\":\"%s\","
	    "\"max_results\":100000}", pat);
	for (i = 0; i < runs; i++) {
		t0 = clock_mono_ns();
		if (tools_run(&ctx, "grep", args, &r) == -1 || r.is_error) {
			fprintf(stderr, "grep: %s\n", r.text ? r.text : "?");
			return 1;
		}
		tw[i] = clock_mono_ns() - t0;
		lines = count_lines(r.text);
		tool_result_free(&r);

		snprintf(cmd, sizeof(cmd), "grep -rn '%s' '%s' >/dev/null", pat,
		    dir);
		t0 = clock_mono_ns();
		if (system(cmd) == -1)
			return 1;
		tg[i] = clock_mono_ns() - t0;

		t0 = clock_mono_ns();
		if (tools_run(&ctx, "glob", "{\"pattern\":\"**/*.h\"}", &r) ==
		    -1 || r.is_error)
			return 1;
		gw[i] = clock_mono_ns() - t0;
		files = count_lines(r.text);
		tool_result_free(&r);

		snprintf(cmd, sizeof(cmd), "find '%s' -name '*.h' >/dev/null",
		    dir);
		t0 = clock_mono_ns();
		if (system(cmd) == -1)
			return 1;
		gf[i] = clock_mono_ns() - t0;
	}
	printf("tree %s, %d runs (medians)\n", dir, runs);
	printf("grep  %-10s warren %8.1f ms  grep -rn %8.1f ms  ratio %.2f  "
	    "(%zu output lines)\n", pat, median_ms(tw, runs),
	    median_ms(tg, runs), median_ms(tw, runs) / median_ms(tg, runs),
	    lines);
	printf("glob  **/*.h     warren %8.1f ms  find     %8.1f ms  ratio %.2f  "
	    "(%zu output lines; glob caps at %u)\n", median_ms(gw, runs),
	    median_ms(gf, runs), median_ms(gw, runs) / median_ms(gf, runs),
	    files, TOOLS_DEFAULT_MAX_MATCHES);
	tool_ctx_close(&ctx);
	return 0;
}

/*
 * bench_hardlinks: what the in-place hard-link check (workspace/
 * hardlinks.c) costs on a tree: entries walked, files with a link
 * outside, wall time of each of N runs (the first with a cold cache if
 * the caller dropped it).
 *
 *	bench_hardlinks DIR [N]
 */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "workspace/hardlinks.h"

static double
bench_hl_ms(void)
{
	struct timespec	ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

int
main(int argc, char **argv)
{
	struct hardlinks	 hl;
	char			 err[1024];
	double			 t0;
	int			 i, n;

	if (argc < 2) {
		fprintf(stderr, "usage: bench_hardlinks DIR [N]\n");
		return 2;
	}
	n = argc > 2 ? atoi(argv[2]) : 5;
	for (i = 0; i < n; i++) {
		t0 = bench_hl_ms();
		if (hardlinks_outside(argv[1], &hl, err, sizeof(err)) == -1) {
			fprintf(stderr, "bench_hardlinks: %s\n", err);
			return 1;
		}
		printf("run %d: %zu entries, %zu files with a link outside, "
		    "%.1f ms\n", i + 1, hl.nentries, hl.nout,
		    bench_hl_ms() - t0);
		hardlinks_free(&hl);
	}
	return 0;
}

/*
 * bench_cow: `warren diff` and `warren apply` of a run that changed N
 * files (issue 20's figure: 1,000).
 *
 *   bench_cow [-n FILES] [-d DIR]
 *
 * A workspace of N text files of 40 lines in 10 directories, a copy-mode
 * layer (cow_create) in which every file has one line changed; then,
 * each timed by the wall clock: cow_changes, cow_diff to /dev/null,
 * cow_diff --stat, and cow_apply (the journal, the temporaries, a
 * syncfs, the renames, a syncfs). DIR: where (default $TMPDIR or /tmp);
 * the filesystem (and how busy it is) decides what the flushes and
 * renames cost: /dev/shm shows the CPU's share.
 */
#include <sys/stat.h>

#include <err.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/clock.h"
#include "workspace/cow.h"

static void
bench_tree(const char *root, int n, const char *fmt)
{
	char	 p[PATH_MAX + 64];
	FILE	*f;
	int	 i, l;

	for (i = 0; i < n; i++) {
		snprintf(p, sizeof(p), "%s/d%d", root, i % 10);
		(void)mkdir(p, 0755);
		snprintf(p, sizeof(p), "%s/d%d/f%04d.txt", root, i % 10, i);
		if ((f = fopen(p, "w")) == NULL)
			err(1, "%s", p);
		for (l = 0; l < 40; l++)
			fprintf(f, l == 20 ? fmt : "line %d of file %d\n", l, i);
		fclose(f);
	}
}

static double
bench_ms(uint64_t t0)
{
	return (double)(clock_mono_ns() - t0) / 1e6;
}

int
main(int argc, char **argv)
{
	struct cow_changes	 ch;
	struct cow		 c;
	const char		*dir = getenv("TMPDIR") ? getenv("TMPDIR") :
				    "/tmp";
	char			 root[PATH_MAX], ws[PATH_MAX + 8];
	char			 tree[PATH_MAX + 16], e[1024], cmd[PATH_MAX + 16];
	uint64_t		 t0;
	FILE			*null;
	int			 ch_, n = 1000;

	while ((ch_ = getopt(argc, argv, "n:d:")) != -1) {
		if (ch_ == 'n')
			n = atoi(optarg);
		else if (ch_ == 'd')
			dir = optarg;
		else
			errx(2, "usage: bench_cow [-n FILES] [-d DIR]");
	}
	snprintf(root, sizeof(root), "%s/bench_cow.XXXXXX", dir);
	if (mkdtemp(root) == NULL)
		err(1, "%s", root);
	snprintf(ws, sizeof(ws), "%s/ws", root);
	if (mkdir(ws, 0755) == -1)
		err(1, "%s", ws);
	bench_tree(ws, n, "line %d of file %d\n");
	if (cow_create(&c, COW_COPY, ws, root, e, sizeof(e)) == -1)
		errx(1, "cow_create: %s", e);
	snprintf(tree, sizeof(tree), "%s/tree", c.dir);
	bench_tree(tree, n, "LINE %d OF FILE %d, CHANGED\n");
	if ((null = fopen("/dev/null", "w")) == NULL)
		err(1, "/dev/null");
	t0 = clock_mono_ns();
	if (cow_changes(&c, &ch, e, sizeof(e)) == -1)
		errx(1, "cow_changes: %s", e);
	printf("%d files: cow_changes %.1f ms (%zu changes)\n", n,
	    bench_ms(t0), ch.n);
	t0 = clock_mono_ns();
	if (cow_diff(&c, &ch, null, 0, e, sizeof(e)) == -1)
		errx(1, "cow_diff: %s", e);
	printf("diff %.1f ms\n", bench_ms(t0));
	t0 = clock_mono_ns();
	if (cow_diff(&c, &ch, null, COW_DIFF_STAT, e, sizeof(e)) == -1)
		errx(1, "cow_diff: %s", e);
	printf("diff --stat %.1f ms\n", bench_ms(t0));
	t0 = clock_mono_ns();
	if (cow_apply(&c, &ch, 0, null, e, sizeof(e)) != 0)
		errx(1, "cow_apply: %s", e);
	printf("apply %.1f ms\n", bench_ms(t0));
	cow_changes_free(&ch);
	fclose(null);
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", root);
	return system(cmd) == 0 ? 0 : 1;
}

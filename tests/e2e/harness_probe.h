/*
 * The overlay probe's kept answer (workspace/cow_probe_cache.c) as the
 * tests see it: test_probe_kept (the real warren) and test_layer_probe
 * (cli/layer.c) read it, compare it and write a turned-over one.
 */
#ifndef WARREN_TEST_HARNESS_PROBE_H
#define WARREN_TEST_HARNESS_PROBE_H

#include <sys/stat.h>

/* The kept file's text (fails the test when there is none); its inode
 * and times into st when st is not NULL. */
char		*h_probe_read(const char *path, struct stat *st);
/* Write text as the kept file, mode 0600. */
void		 h_probe_put(const char *path, const char *text);
/* a and b keep the same answer for the same key (a "no"'s reason may
 * name the probe's scratch directory, new each time). */
void		 h_probe_same(const char *a, const char *b);
/* The layer kind a kept text says: "upper" (yes, an overlay) or "tree"
 * (no, a copy). */
const char	*h_probe_kind(const char *kept);
/* kept, its line starting with key replaced by line (the whole line). */
char		*h_probe_edit(const char *kept, const char *key,
		    const char *line);
/* The opposite answer, with the same key (a "no" says H_PROBE_WHY). */
#define H_PROBE_WHY	"KEPT-BY-THE-TEST"
char		*h_probe_flip(const char *kept);

#endif

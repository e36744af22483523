/*
 * Helpers shared by the store's tests: a private directory per test and a
 * fresh database in it.
 */
#ifndef WARREN_STORE_TEST_H
#define WARREN_STORE_TEST_H

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

struct store_tdir {
	char	dir[512];
	char	db[1024];
};

static inline void
store_tdir_make(struct store_tdir *t)
{
	const char	*tmp = getenv("TMPDIR");

	snprintf(t->dir, sizeof(t->dir), "%s/warren-store-XXXXXX",
	    tmp != NULL && *tmp != '\0' ? tmp : "/tmp");
	if (mkdtemp(t->dir) == NULL) {
		perror("mkdtemp");
		abort();
	}
	snprintf(t->db, sizeof(t->db), "%s/.warren/warren.db", t->dir);
}

static inline void
store_tdir_remove(struct store_tdir *t)
{
	char	cmd[600];

	/* Our own mkdtemp directory: nothing else can be named by it. */
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", t->dir);
	if (system(cmd) != 0)
		fprintf(stderr, "could not remove %s\n", t->dir);
}

#endif

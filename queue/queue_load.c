/*
 * The PostgreSQL backend, loaded when a PostgreSQL URL is opened. It is a
 * module of its own (warren-queue-pg.so, built from queue_pg*.c and
 * queue_module.c) so that libpq and the two dozen libraries it pulls in
 * (libssl, krb5, ldap, sasl ...) are mapped only by the processes that
 * talk to a server, not at every start of warren (docs/queue.md, "The
 * PostgreSQL module"). It sits at ../lib/warren/ from the warren program,
 * in the build tree as after `cmake --install`.
 *
 * A program linked with the backend itself (the queue's unit tests) has
 * queue_pg_ops defined, and loads nothing.
 */
#include <dlfcn.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "queue/queue_int.h"

#define QUEUE_LOAD_REL	"../lib/warren/" QUEUE_MODULE_FILE

/* Defined when the backend is linked in, not loaded. */
extern const struct queue_ops queue_pg_ops __attribute__((weak));

/* The module's path: QUEUE_LOAD_REL from the running program. */
static int
queue_load_path(char *out, size_t outsz, char *err, size_t errsz)
{
	char	 self[PATH_MAX], *slash;
	ssize_t	 n;

	if ((n = readlink("/proc/self/exe", self, sizeof(self) - 1)) <= 0) {
		snprintf(err, errsz, "queue: cannot find warren's PostgreSQL "
		    "module: /proc/self/exe: %s", strerror(errno));
		return -1;
	}
	self[n] = '\0';
	if ((slash = strrchr(self, '/')) != NULL)
		*slash = '\0';
	if ((size_t)snprintf(out, outsz, "%s/%s", self, QUEUE_LOAD_REL) >=
	    outsz) {
		snprintf(err, errsz, "queue: the PostgreSQL module's path is "
		    "too long (%s/%s)", self, QUEUE_LOAD_REL);
		errno = ENAMETOOLONG;
		return -1;
	}
	return 0;
}

/* The module's table, if it is this program's version. */
static const struct queue_ops *
queue_load_ops(void *h, const char *path, char *err, size_t errsz)
{
	static const struct queue_module_abi	 want = QUEUE_MODULE_ABI_INIT;
	const struct queue_module_abi		*abi;
	const struct queue_ops			*ops;

	abi = dlsym(h, "queue_module_abi");
	if (abi == NULL || strncmp(abi->version, want.version,
	    sizeof(want.version)) != 0 || abi->ops_size != want.ops_size ||
	    abi->queue_size != want.queue_size) {
		snprintf(err, errsz, "queue: %s is not this warren's "
		    "PostgreSQL module (it is %.32s, this is warren %s): "
		    "install the two from one build", path,
		    abi != NULL ? abi->version : "no warren module",
		    want.version);
		errno = ENOPKG;
		return NULL;
	}
	if ((ops = dlsym(h, "queue_pg_ops")) == NULL) {
		snprintf(err, errsz, "queue: %s has no queue_pg_ops: %s",
		    path, dlerror());
		errno = ENOPKG;
	}
	return ops;
}

const struct queue_ops *
queue_load_pg(char *err, size_t errsz)
{
	static const struct queue_ops	*ops;
	char				 path[PATH_MAX + 64];
	const char			*why;
	void				*h;

	if (&queue_pg_ops != NULL)
		return &queue_pg_ops;
	if (ops != NULL)
		return ops;
	if (queue_load_path(path, sizeof(path), err, errsz) == -1)
		return NULL;
	/* Every symbol now: a missing one is said here, not mid-claim. */
	if ((h = dlopen(path, RTLD_NOW | RTLD_LOCAL)) == NULL) {
		why = dlerror();
		snprintf(err, errsz, "queue: a PostgreSQL queue needs warren's "
		    "PostgreSQL module %s, which did not load: %s (install "
		    "warren with it: `cmake --install` puts it in "
		    "PREFIX/lib/warren/, and it needs libpq, Debian's "
		    "libpq5)", path, why != NULL ? why : "unknown error");
		errno = ENOPKG;
		return NULL;
	}
	if ((ops = queue_load_ops(h, path, err, errsz)) == NULL)
		dlclose(h);
	return ops;
}

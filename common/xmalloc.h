/*
 * Allocation for process code (supervisor and worker main loops), which
 * cannot go on without memory: these call fatal() on failure. Libraries
 * (ipc/, agent/, sandbox/) use malloc and return errors instead.
 */
#ifndef WARREN_XMALLOC_H
#define WARREN_XMALLOC_H

#include <stddef.h>

/* xmalloc.c */
void	*xmalloc(size_t size);
void	*xcalloc(size_t nmemb, size_t size);
void	*xreallocarray(void *ptr, size_t nmemb, size_t size);
char	*xstrdup(const char *s);
int	 xasprintf(char **ret, const char *fmt, ...)
	    __attribute__((format(printf, 2, 3)));

#endif

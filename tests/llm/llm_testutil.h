/*
 * Test helpers for the LLM client: start fakellm on a fixture, read back
 * the requests it logged, build a config aimed at it.
 */
#ifndef WARREN_LLM_TESTUTIL_H
#define WARREN_LLM_TESTUTIL_H

#include <sys/types.h>

#include <jansson.h>

#include "llm/llm.h"

struct fakellm {
	pid_t	 pid;
	int	 port;
	char	 dir[256];	/* private temporary directory */
	char	 log[300];	/* its request log (JSON lines) */
	char	 url[128];	/* http://127.0.0.1:PORT/v1 */
};

/* Start on tests/llm/fixtures/NAME (or an absolute path); aborts on failure. */
void	 fakellm_start(struct fakellm *f, const char *fixture);
/* Start on a script given inline as JSON text. */
void	 fakellm_start_json(struct fakellm *f, const char *json);
void	 fakellm_stop(struct fakellm *f);
/*
 * A cmocka teardown: stop every fakellm still running and remove its
 * directory. A failed assertion leaves its test before fakellm_stop; the
 * server must not run on (and hold ctest's pipe) past its test.
 */
int	 fakellm_teardown(void **state);
/* The requests received so far, as an array of objects. */
json_t	*fakellm_requests(const struct fakellm *f);
/* Path of a file under tests/llm/ in the source tree (static buffer). */
const char *llm_test_path(const char *rel);
/* A configuration aimed at f: provider p, fast retries, no key. */
void	 llm_test_config(struct llm_config *lc, const struct fakellm *f,
	    enum llm_provider p);
/* Read a whole file (NUL-terminated); aborts on failure. */
char	*llm_test_slurp(const char *path, size_t *len);


#endif

/*
 * Fuzz the check of a plan agent's plan (supervisor/compose_plan.c): the
 * input is the agent's answer as it comes. A plan that is accepted must
 * be what compose.c relies on without checking again: 1 to 16 steps, ids
 * unique and of the allowed characters, a non-empty task, a profile,
 * dependencies in range and not the step itself, and no cycle (checked
 * here again, differently: by depth-first search).
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "supervisor/compose.h"
#include "supervisor/compose_testapi.h"

int	LLVMFuzzerTestOneInput(const uint8_t *, size_t);

/* 0 white, 1 on the stack, 2 done: 1 when a cycle is reachable from i. */
static int
fuzz_cycle(const struct compose_stepdef *v, size_t i, int *mark)
{
	size_t	k;

	if (mark[i] == 1)
		return 1;
	if (mark[i] == 2)
		return 0;
	mark[i] = 1;
	for (k = 0; k < v[i].ndeps; k++)
		if (fuzz_cycle(v, v[i].deps[k], mark))
			return 1;
	mark[i] = 2;
	return 0;
}

static void
fuzz_check(const struct compose_stepdef *v, size_t n)
{
	int	mark[COMPOSE_MAX_STEPS] = { 0 };
	size_t	i, j, len;

	if (n == 0 || n > COMPOSE_MAX_STEPS)
		abort();
	for (i = 0; i < n; i++) {
		len = strlen(v[i].id);
		if (len == 0 || len > COMPOSE_ID_MAX || strspn(v[i].id,
		    "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
		    "0123456789_-.") != len || v[i].task[0] == '\0' ||
		    v[i].profile == NULL)
			abort();
		for (j = 0; j < i; j++)
			if (strcmp(v[i].id, v[j].id) == 0)
				abort();
		for (j = 0; j < v[i].ndeps; j++)
			if (v[i].deps[j] >= n || v[i].deps[j] == i)
				abort();
	}
	for (i = 0; i < n; i++)
		if (fuzz_cycle(v, i, mark))
			abort();
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct compose_stepdef	*v;
	char			*text, err[256];
	size_t			 n;

	if ((text = malloc(size + 1)) == NULL)
		return 0;
	memcpy(text, data, size);
	text[size] = '\0';
	if (compose_plan_parse(text, &v, &n, err, sizeof(err)) == 0) {
		fuzz_check(v, n);
		compose_plan_free(v, n);
	} else if (v != NULL || err[0] == '\0')
		abort();
	free(text);
	return 0;
}

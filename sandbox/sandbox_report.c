/*
 * The report: which layers a sandbox got, as bits and as the strings a
 * worker sends in its hello, and the supervisor's check of it against
 * what the policy requires.
 */

#include <sys/types.h>

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sandbox/sandbox_int.h"

void
sandbox_report_init(struct sandbox_report *r, unsigned required)
{
	memset(r, 0, sizeof(*r));
	r->required = required;
}

static void
sandbox_report_add(struct sandbox_report *r, const char *s)
{
	if (r->nlayers < SANDBOX_REPORT_MAX)
		strlcpy(r->layers[r->nlayers++], s, SANDBOX_LAYER_LEN);
}

void
sandbox_report_fill(struct sandbox_report *r, unsigned applied,
    int landlock_abi, uid_t uid, int cgroup)
{
	char	 s[SANDBOX_LAYER_LEN];
	size_t	 i;

	r->applied = applied;
	r->landlock_abi = landlock_abi;
	r->nlayers = 0;
	for (i = 0; i < sandbox_nlayers; i++) {
		if (!(applied & sandbox_layers[i].bit))
			continue;
		switch (sandbox_layers[i].bit) {
		case SANDBOX_PIDS:
			sandbox_report_add(r, cgroup ? "cgroup:pids" : "nproc");
			break;
		case SANDBOX_MEMORY:
			sandbox_report_add(r, "cgroup:memory");
			break;
		case SANDBOX_UIDDROP:
			snprintf(s, sizeof(s), "uid:%u", (unsigned)uid);
			sandbox_report_add(r, s);
			break;
		case SANDBOX_LANDLOCK:
			snprintf(s, sizeof(s), "landlock:abi%d", landlock_abi);
			sandbox_report_add(r, s);
			break;
		default:
			sandbox_report_add(r, sandbox_layers[i].name);
			break;
		}
	}
	r->weaker = (r->required & ~applied) != 0;
}

static int
sandbox_report_bit(const char *s, unsigned *bit, int *abi)
{
	const char	*errstr;
	size_t		 i;

	*abi = 0;
	if (strcmp(s, "cgroup:pids") == 0 || strcmp(s, "nproc") == 0) {
		*bit = SANDBOX_PIDS;
		return 0;
	}
	if (strcmp(s, "cgroup:memory") == 0) {
		*bit = SANDBOX_MEMORY;
		return 0;
	}
	if (strncmp(s, "uid:", 4) == 0) {
		strtonum(s + 4, 1, UINT_MAX, &errstr);
		*bit = SANDBOX_UIDDROP;
		return errstr == NULL ? 0 : -1;
	}
	if (strncmp(s, "landlock:abi", 12) == 0) {
		*abi = (int)strtonum(s + 12, 1, 99, &errstr);
		*bit = SANDBOX_LANDLOCK;
		return errstr == NULL ? 0 : -1;
	}
	for (i = 0; i < sandbox_nlayers; i++)
		if (strcmp(s, sandbox_layers[i].name) == 0 &&
		    sandbox_layers[i].bit != SANDBOX_PIDS &&
		    sandbox_layers[i].bit != SANDBOX_MEMORY &&
		    sandbox_layers[i].bit != SANDBOX_UIDDROP &&
		    sandbox_layers[i].bit != SANDBOX_LANDLOCK) {
			*bit = sandbox_layers[i].bit;
			return 0;
		}
	return -1;
}

int
sandbox_report_parse(struct sandbox_report *r, const char *const *layers,
    int n, struct sandbox_error *e)
{
	unsigned	 bit;
	int		 i, abi;

	sandbox_report_init(r, 0);
	if (n < 0 || n > SANDBOX_REPORT_MAX)
		return sandbox_fail(e, 0, ERANGE, "report of %d layers", n);
	for (i = 0; i < n; i++) {
		if (layers[i] == NULL ||
		    strnlen(layers[i], SANDBOX_LAYER_LEN) >= SANDBOX_LAYER_LEN ||
		    sandbox_report_bit(layers[i], &bit, &abi) == -1)
			return sandbox_fail(e, 0, EINVAL,
			    "unknown layer in report (#%d)", i);
		if (r->applied & bit)
			return sandbox_fail(e, 0, EINVAL,
			    "layer %s reported twice", layers[i]);
		r->applied |= bit;
		if (abi != 0)
			r->landlock_abi = abi;
		strlcpy(r->layers[r->nlayers++], layers[i], SANDBOX_LAYER_LEN);
	}
	return 0;
}

int
sandbox_report_check(const struct sandbox_policy *p,
    const struct sandbox_report *r, struct sandbox_error *e)
{
	char		 names[SANDBOX_ERR_LEN];
	unsigned	 missing;

	missing = p->require & ~r->applied;
	if (missing == 0 || p->allow_weaker)
		return 0;
	sandbox_mask_names(missing, names, sizeof(names));
	if (e != NULL) {
		e->layer = missing;
		e->missing = 1;
		e->errnum = 0;
		snprintf(e->msg, sizeof(e->msg), "profile %s requires "
		    "layers this worker did not apply: %s", p->name, names);
	}
	errno = EPERM;
	return -1;
}

void
sandbox_report_string(const struct sandbox_report *r, char *buf, size_t len)
{
	int	 i;

	if (len == 0)
		return;
	buf[0] = '\0';
	for (i = 0; i < r->nlayers; i++) {
		if (i > 0)
			strlcat(buf, ",", len);
		strlcat(buf, r->layers[i], len);
	}
	if (r->weaker) {
		char	 names[SANDBOX_ERR_LEN];

		sandbox_mask_names(r->required & ~r->applied, names,
		    sizeof(names));
		strlcat(buf, " (weaker: missing ", len);
		strlcat(buf, names, len);
		strlcat(buf, ")", len);
	}
}

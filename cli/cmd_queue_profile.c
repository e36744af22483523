/*
 * `queue add` checks each job's profile where the job will run: the
 * built-ins, the user's agents, and a trusted project's agents in the
 * job's workspace, as `warren run` loads them. The run checks again (the
 * files may change before it starts); this catches a mistyped name
 * before a thousand jobs go dead one by one.
 */
#include <limits.h>
#include <stdio.h>
#include <string.h>

#include "agent/profile.h"
#include "cli/cmd_queue.h"
#include "cli/project.h"

/* The profiles of the last workspace asked about: jobs of one file
 * mostly share one. */
struct qprof_cache {
	char			 ws[PATH_MAX];
	struct profile_set	 ps;
	int			 loaded;
};

static int
qprof_load(struct qprof_cache *c, const char *ws, char *err, size_t errsz)
{
	struct project	pr;
	int		rc;

	if (c->loaded && strcmp(c->ws, ws) == 0)
		return 0;
	if (c->loaded)
		profile_set_free(&c->ps);
	c->loaded = 0;
	memset(&pr, 0, sizeof(pr));
	if (project_open(&pr, ws, NULL, "queue add", err, errsz) == -1) {
		project_free(&pr);
		return -1;
	}
	rc = project_load_profiles(&pr, &c->ps, err, errsz);
	project_free(&pr);
	if (rc == -1)
		return -1;
	snprintf(c->ws, sizeof(c->ws), "%s", ws);
	c->loaded = 1;
	return 0;
}

int
cmd_queue_profiles_check(const struct queue_job_new *jobs, size_t n,
    size_t *bad, char *err, size_t errsz)
{
	struct qprof_cache	c;
	size_t			i;
	int			rc = 0;

	memset(&c, 0, sizeof(c));
	for (i = 0; i < n && rc == 0; i++) {
		if (jobs[i].profile == NULL)
			continue;
		*bad = i;
		if (qprof_load(&c, jobs[i].workspace, err, errsz) == -1)
			rc = -1;
		else if (profile_set_find(&c.ps, jobs[i].profile) == NULL) {
			snprintf(err, errsz, "unknown profile \"%s\" for "
			    "workspace %s ('warren profiles' there lists "
			    "them)", jobs[i].profile, jobs[i].workspace);
			rc = -1;
		}
	}
	if (c.loaded)
		profile_set_free(&c.ps);
	return rc;
}

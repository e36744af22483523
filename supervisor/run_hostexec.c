/*
 * A run's check of the files that run code on the host (hostexec.h): a
 * snapshot before any agent starts, and at the end of the run the files
 * created, changed or removed under those names since, on stderr (or a
 * --json event) and as an event of the run for `warren show`.
 *
 * The snapshot is stored as an event of the run before any worker starts,
 * so a run resumed after its supervisor was killed compares with the
 * workspace as it was when the run first started, not when it resumed. A
 * run without a stored snapshot (started by an older warren, or the store
 * failed) takes one when it resumes, and its report says so.
 */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/clock.h"
#include "common/log.h"
#include "common/xmalloc.h"
#include "store/store.h"
#include "workspace/hostexec.h"
#include "supervisor/run.h"

/* The snapshot stored when the run started: 0, or -1 (none usable). */
static int
run_hostexec_load(struct run *r)
{
	struct store_event	 ev;
	char			 err[256];
	int			 rc;

	if (store_event_last(r->store, r->run_id, HOSTEXEC_EVENT_BASELINE,
	    &ev) == -1) {
		if (store_errcode(r->store) != STORE_ENOTFOUND)
			run_store_warn(r, "run %lld", (long long)r->run_id);
		return -1;
	}
	if ((rc = hostexec_snap_decode(ev.detail ? ev.detail : "", r->hx_base,
	    err, sizeof(err))) == -1)
		log_warnx("run %lld: the stored snapshot of files that run "
		    "code on the host is unreadable (%s): taking a new one",
		    (long long)r->run_id, err);
	store_event_free(&ev);
	return rc;
}

static void
run_hostexec_store(struct run *r)
{
	char	*text;

	if (r->store == NULL)
		return;
	text = hostexec_snap_encode(r->hx_base);
	/* Committed before any agent runs: a kill -9 keeps it. */
	if (store_event(r->store, r->run_id, NULL, HOSTEXEC_EVENT_BASELINE,
	    text) == -1 || store_flush(r->store) == -1)
		log_warnx("store: the snapshot of files that run code on the "
		    "host: %s (a resume will compare with the workspace as it "
		    "is then)", store_errmsg(r->store));
	free(text);
}

void
run_hostexec_begin(struct run *r, int resumed)
{
	struct hostexec_limits	lim;
	char			err[PATH_MAX + 128];
	uint64_t		t0 = clock_mono_ms();

	/* Copy-on-write: agents never write the real tree; `warren diff`
	 * and `apply` flag these files in the layer instead. */
	if (r->opts.cow != NULL)
		return;
	r->hx_base = xcalloc(1, sizeof(*r->hx_base));
	if (resumed && r->store != NULL && run_hostexec_load(r) == 0)
		return;
	hostexec_limits_default(&lim);
	if (hostexec_snapshot(r->opts.workspace, &lim, r->hx_base, err,
	    sizeof(err)) == -1) {
		log_warnx("files that run code on the host: %s: not checked",
		    err);
		free(r->hx_base);
		r->hx_base = NULL;
		return;
	}
	r->hx_base->at_resume = resumed;
	log_debug("files that run code on the host: %zu recorded in %llu ms%s",
	    r->hx_base->n, (unsigned long long)(clock_mono_ms() - t0),
	    r->hx_base->incomplete ? " (incomplete)" : "");
	run_hostexec_store(r);
}

void
run_hostexec_end(struct run *r)
{
	struct hostexec_limits	 lim;
	struct hostexec_snap	 now;
	struct hostexec_report	 rep;
	json_t			*j;
	char			 err[PATH_MAX + 128], *text;

	if (r->hx_base == NULL)
		return;
	hostexec_limits_default(&lim);
	if (hostexec_snapshot(r->opts.workspace, &lim, &now, err,
	    sizeof(err)) == -1) {
		log_warnx("files that run code on the host: %s: not checked",
		    err);
		return;
	}
	hostexec_compare(r->hx_base, &now, &rep);
	if ((j = hostexec_report_json(&rep)) == NULL)
		fatalx("hostexec: the report of %zu files", rep.n);
	ui_host_files(j);
	if (r->store != NULL) {
		if ((text = json_dumps(j, JSON_COMPACT)) == NULL)
			fatalx("hostexec: the report of %zu files", rep.n);
		if (store_event(r->store, r->run_id, NULL, HOSTEXEC_EVENT,
		    text) == -1)
			run_store_warn(r, "run %lld", (long long)r->run_id);
		free(text);
	}
	json_decref(j);
	hostexec_report_free(&rep);
	hostexec_snap_free(&now);
}

void
run_hostexec_free(struct run *r)
{
	hostexec_snap_free(r->hx_base);
	free(r->hx_base);
	r->hx_base = NULL;
}

/*
 * The queue's frontend: open and close, the clock, errors, status names,
 * and every call checked here once, then handed to the backend
 * (queue_int.h's struct queue_ops), leases through queue_lease.c's one
 * algorithm over the backend's primitives. What a job goes through is in
 * queue.h; how the SQLite backend keeps it, in queue_sqlite.c.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include <jansson.h>

#include "common/clock.h"
#include "common/urlmask.h"
#include "queue/queue_int.h"
#include "queue/queue_testapi.h"

static const char *const queue_status_names[QUEUE_NSTATUS] = {
	"queued", "running", "retrying", "done", "dead", "cancelled",
};

/* Statuses a job ends in; only these may be purged. */
#define QUEUE_FINISHED_MASK	((1u << QUEUE_DONE) | (1u << QUEUE_DEAD) | \
				 (1u << QUEUE_CANCELLED))

int
queue_seterr(struct queue *q, const char *fmt, ...)
{
	va_list	ap;

	va_start(ap, fmt);
	vsnprintf(q->err, sizeof(q->err), fmt, ap);
	va_end(ap);
	q->final = 0;
	return -1;
}

int
queue_notfound(struct queue *q, int64_t id)
{
	queue_seterr(q, "no job %lld in the queue (see `warren queue ls`)",
	    (long long)id);
	errno = ENOENT;
	return -1;
}

static int
queue_einval(struct queue *q, const char *fmt, ...)
{
	va_list	ap;

	va_start(ap, fmt);
	vsnprintf(q->err, sizeof(q->err), fmt, ap);
	va_end(ap);
	errno = EINVAL;
	return -1;
}

/* In [0, 1): the jitter of a backoff. */
double
queue_jitter(struct queue *q)
{
	(void)q;
	return (double)arc4random() / 4294967296.0;
}

static int64_t
queue_wall_ms(void *arg)
{
	(void)arg;
	return clock_wall_ms();
}

int
queue_url_is_pg(const char *url)
{
	return url != NULL && (strncmp(url, "postgresql://", 13) == 0 ||
	    strncmp(url, "postgres://", 11) == 0 ||
	    strncmp(url, "postgresql:", 11) == 0);
}

struct queue *
queue_open_flags(const char *url, unsigned flags, char *err, size_t errsz)
{
	const struct queue_ops	*ops;
	struct queue		*q;
	int			 e;

	if (flags & ~(unsigned)QUEUE_OPEN_EXISTING) {
		snprintf(err, errsz, "queue: unknown open flags %#x", flags);
		errno = EINVAL;
		return NULL;
	}
	if (queue_url_is_pg(url)) {
		if ((ops = queue_load_pg(err, errsz)) == NULL)
			return NULL;
	} else
		ops = &queue_sqlite_ops;
	if ((q = calloc(1, sizeof(*q))) == NULL) {
		snprintf(err, errsz, "queue: out of memory");
		return NULL;
	}
	q->ops = ops;
	q->owner = getpid();
	q->now_ms = queue_wall_ms;
	if (q->ops->open(q, url, flags) == -1) {
		/* ENOENT says no queue there, and nothing else does. */
		e = q->absent ? ENOENT : errno != ENOENT && errno != 0 ?
		    errno : EIO;
		snprintf(err, errsz, "%s", q->err);
		queue_close(q);
		errno = e;
		return NULL;
	}
	return q;
}

struct queue *
queue_open(const char *url, char *err, size_t errsz)
{
	return queue_open_flags(url, 0, err, errsz);
}

/* An open with QUEUE_OPEN_EXISTING found no queue at where (masked: a
 * PostgreSQL keyword string without its "postgresql:" is taken for a
 * file, and its password would be said). */
int
queue_absent(struct queue *q, const char *where, const char *why)
{
	char	shown[QUEUE_ERR_MAX / 2];

	urlmask(where, shown, sizeof(shown));
	queue_seterr(q, "no queue at %s: %s (`warren queue add` makes one; "
	    "--queue or WARREN_QUEUE_URL names another)", shown, why);
	q->absent = 1;
	errno = ENOENT;
	return -1;
}

void
queue_close(struct queue *q)
{
	if (q == NULL)
		return;
	q->ops->close(q);
	free(q);
}

const char *
queue_errmsg(const struct queue *q)
{
	return q->err;
}

int
queue_err_final(const struct queue *q)
{
	return q->final;
}

void
queue_set_clock(struct queue *q, int64_t (*now_ms)(void *), void *arg)
{
	q->now_ms = now_ms != NULL ? now_ms : queue_wall_ms;
	q->now_arg = now_ms != NULL ? arg : NULL;
	q->clock_set = now_ms != NULL;
}

int64_t
queue_now(struct queue *q)
{
	return q->now_ms(q->now_arg);
}

const char *
queue_status_name(enum queue_status s)
{
	if ((unsigned)s >= QUEUE_NSTATUS)
		return "unknown";
	return queue_status_names[s];
}

int
queue_status_parse(const char *name, enum queue_status *s)
{
	int	i;

	for (i = 0; name != NULL && i < QUEUE_NSTATUS; i++)
		if (strcmp(name, queue_status_names[i]) == 0) {
			*s = (enum queue_status)i;
			return 0;
		}
	errno = EINVAL;
	return -1;
}

/*
 * A connection does not cross a fork (STYLE.md 16): a child that inherited
 * the handle must open its own, or two processes would share one SQLite
 * connection's locks and cache.
 */
static int
queue_check(struct queue *q)
{
	if (q->owner != getpid())
		return queue_einval(q, "queue used by process %ld but opened "
		    "by %ld: open it again after fork", (long)getpid(),
		    (long)q->owner);
	return 0;
}

static int
queue_check_lease(struct queue *q, int64_t job, int attempt,
    const char *worker)
{
	if (queue_check(q) == -1)
		return -1;
	if (job <= 0 || attempt <= 0)
		return queue_einval(q, "job %lld attempt %d: no such lease "
		    "(ids and attempts start at 1)", (long long)job, attempt);
	if (worker == NULL || *worker == '\0')
		return queue_einval(q, "job %lld: the worker's name is empty",
		    (long long)job);
	return 0;
}

/* Text that must be a JSON object when given (params, schema). */
static int
queue_check_object(struct queue *q, const char *what, const char *text)
{
	json_error_t	 je;
	json_t		*j;
	int		 ok;

	if (text == NULL)
		return 0;
	if ((j = json_loads(text, JSON_REJECT_DUPLICATES, &je)) == NULL)
		return queue_einval(q, "job %s is not JSON: %s (line %d, "
		    "column %d)", what, je.text, je.line, je.column);
	ok = json_is_object(j);
	json_decref(j);
	if (!ok)
		return queue_einval(q, "job %s must be a JSON object", what);
	return 0;
}

static int
queue_check_new(struct queue *q, const struct queue_job_new *j)
{
	if (j->task == NULL || *j->task == '\0')
		return queue_einval(q, "a job needs a task (it is empty)");
	if (j->workspace == NULL || j->workspace[0] != '/')
		return queue_einval(q, "job workspace %s is not an absolute "
		    "path", j->workspace != NULL ? j->workspace : "(none)");
	if (j->max_attempts < 0)
		return queue_einval(q, "job max attempts %d: give 1 or more "
		    "(0 takes the default, %d)", j->max_attempts,
		    QUEUE_DEFAULT_ATTEMPTS);
	if (j->key != NULL && *j->key == '\0')
		return queue_einval(q, "job key is empty: give a key or none");
	if (queue_check_object(q, "params", j->params) == -1 ||
	    queue_check_object(q, "schema", j->schema) == -1)
		return -1;
	return 0;
}

int
queue_add(struct queue *q, const struct queue_job_new *j, int64_t *id,
    int *existed)
{
	int64_t	dummy_id;
	int	dummy;

	if (queue_check(q) == -1 || queue_check_new(q, j) == -1)
		return -1;
	return queue_add_all(q, j, 1, id != NULL ? id : &dummy_id,
	    existed != NULL ? existed : &dummy);
}

int
queue_add_many(struct queue *q, const struct queue_job_new *j, size_t n,
    int64_t *ids, int *existed)
{
	char	why[QUEUE_ERR_MAX];
	size_t	i;

	if (queue_check(q) == -1)
		return -1;
	if (n == 0)
		return 0;
	if (ids == NULL || existed == NULL)
		return queue_einval(q, "add many: give arrays for the ids and"
		    " the existed flags");
	for (i = 0; i < n; i++) {
		if (queue_check_new(q, &j[i]) == -1) {
			snprintf(why, sizeof(why), "%s", q->err);
			return queue_einval(q, "job %zu of %zu: %s; none was "
			    "added", i + 1, n, why);
		}
	}
	return queue_add_all(q, j, n, ids, existed);
}

int
queue_claim(struct queue *q, const char *worker, uint64_t lease_ms,
    unsigned max_running, struct queue_job *out)
{
	if (queue_check(q) == -1)
		return -1;
	if (worker == NULL || *worker == '\0')
		return queue_einval(q, "claim: the worker's name is empty");
	if (lease_ms == 0 || lease_ms > INT64_MAX / 4)
		return queue_einval(q, "claim: lease of %llu ms: give more "
		    "than 0", (unsigned long long)lease_ms);
	memset(out, 0, sizeof(*out));
	return queue_lease_claim(q, worker, lease_ms, max_running, out);
}

int
queue_heartbeat(struct queue *q, int64_t job, int attempt,
    const char *worker, uint64_t lease_ms)
{
	if (queue_check_lease(q, job, attempt, worker) == -1)
		return -1;
	if (lease_ms == 0 || lease_ms > INT64_MAX / 4)
		return queue_einval(q, "job %lld: lease of %llu ms: give more "
		    "than 0", (long long)job, (unsigned long long)lease_ms);
	return queue_lease_heartbeat(q, job, attempt, worker, lease_ms);
}

int
queue_complete(struct queue *q, int64_t job, int attempt,
    const char *worker, const struct queue_result *r)
{
	static const struct queue_result none;

	if (queue_check_lease(q, job, attempt, worker) == -1)
		return -1;
	if (r != NULL && (r->changes == NULL) != (r->changes_len == 0))
		return queue_einval(q, "job %lld attempt %d: a change set "
		    "without bytes, or bytes without a set", (long long)job,
		    attempt);
	return queue_lease_complete(q, job, attempt, worker,
	    r != NULL ? r : &none);
}

int
queue_fail(struct queue *q, int64_t job, int attempt, const char *worker,
    const struct queue_result *r, unsigned flags)
{
	if (queue_check_lease(q, job, attempt, worker) == -1)
		return -1;
	if (r == NULL || r->error == NULL || *r->error == '\0')
		return queue_einval(q, "job %lld attempt %d failed without an "
		    "error: say why", (long long)job, attempt);
	if (flags & ~(unsigned)(QUEUE_FAIL_CANCELLED | QUEUE_FAIL_FINAL))
		return queue_einval(q, "job %lld: unknown fail flags %#x",
		    (long long)job, flags);
	return queue_lease_fail(q, job, attempt, worker, r, flags);
}

int
queue_cancel(struct queue *q, int64_t job)
{
	if (queue_check(q) == -1)
		return -1;
	if (job <= 0)
		return queue_notfound(q, job);
	return queue_admin_cancel(q, job);
}

int
queue_retry(struct queue *q, int64_t job)
{
	if (queue_check(q) == -1)
		return -1;
	if (job <= 0)
		return queue_notfound(q, job);
	return queue_admin_retry(q, job);
}

int
queue_retry_dead(struct queue *q, uint64_t *n)
{
	uint64_t	dummy;

	if (queue_check(q) == -1)
		return -1;
	return queue_admin_retry_dead(q, n != NULL ? n : &dummy);
}

int
queue_purge(struct queue *q, unsigned mask, int64_t before_ms, uint64_t *n)
{
	uint64_t	dummy;

	if (queue_check(q) == -1)
		return -1;
	if (mask == 0 || (mask & ~QUEUE_FINISHED_MASK))
		return queue_einval(q, "purge removes done, dead or cancelled "
		    "jobs only (status mask %#x)", mask);
	return queue_admin_purge(q, mask, before_ms, n != NULL ? n : &dummy);
}

int
queue_list(struct queue *q, int status, struct queue_job **v, size_t *n)
{
	*v = NULL;
	*n = 0;
	if (queue_check(q) == -1)
		return -1;
	if (status < -1 || status >= QUEUE_NSTATUS)
		return queue_einval(q, "list: no status %d", status);
	return q->ops->list(q, status, 0, v, n);
}

int
queue_list_newest(struct queue *q, int status, unsigned limit,
    struct queue_job **v, size_t *n)
{
	*v = NULL;
	*n = 0;
	if (queue_check(q) == -1)
		return -1;
	if (status < -1 || status >= QUEUE_NSTATUS || limit == 0)
		return queue_einval(q, "list: no status %d, or a limit of %u",
		    status, limit);
	return q->ops->list(q, status, limit, v, n);
}

int
queue_get(struct queue *q, int64_t id, struct queue_job *j,
    struct queue_attempt **attempts, size_t *nattempts)
{
	memset(j, 0, sizeof(*j));
	if (attempts != NULL) {
		*attempts = NULL;
		*nattempts = 0;
	}
	if (queue_check(q) == -1)
		return -1;
	if (id <= 0)
		return queue_notfound(q, id);
	return q->ops->get(q, id, j, attempts, nattempts);
}

int
queue_changes(struct queue *q, int64_t id, void **data, size_t *len)
{
	*data = NULL;
	*len = 0;
	if (queue_check(q) == -1)
		return -1;
	if (id <= 0)
		return queue_notfound(q, id);
	return q->ops->changes(q, id, data, len);
}

int
queue_applied(struct queue *q, int64_t id, const char *by)
{
	if (queue_check(q) == -1)
		return -1;
	if (id <= 0)
		return queue_notfound(q, id);
	if (by == NULL || *by == '\0')
		return queue_einval(q, "applied: job %lld: say where it was "
		    "applied", (long long)id);
	return q->ops->applied(q, id, by);
}

int
queue_rate(struct queue *q, const char *endpoint,
    const struct queue_rate_req *r, uint64_t *wait_ms)
{
	*wait_ms = 0;
	if (queue_check(q) == -1)
		return -1;
	if (endpoint == NULL || *endpoint == '\0' ||
	    strlen(endpoint) > QUEUE_RATE_ENDPOINT_MAX)
		return queue_einval(q, "rate: the endpoint is empty or longer "
		    "than %d bytes", QUEUE_RATE_ENDPOINT_MAX);
	if (r->op != QUEUE_RATE_TAKE && r->op != QUEUE_RATE_SPEND &&
	    r->op != QUEUE_RATE_PAUSE)
		return queue_einval(q, "rate: unknown operation %d",
		    (int)r->op);
	return q->ops->rate(q, endpoint, r, wait_ms);
}

int
queue_wait_fd(struct queue *q)
{
	if (q->owner != getpid() || q->ops->wait_fd == NULL)
		return -1;
	return q->ops->wait_fd(q);
}

int
queue_woken(struct queue *q)
{
	if (q->owner != getpid() || q->ops->woken == NULL)
		return 0;
	return q->ops->woken(q);
}

int
queue_counts(struct queue *q, struct queue_counts *c)
{
	memset(c, 0, sizeof(*c));
	if (queue_check(q) == -1)
		return -1;
	return q->ops->counts(q, c);
}

int
queue_stats(struct queue *q, uint64_t window_ms, struct queue_stats *st)
{
	memset(st, 0, sizeof(*st));
	if (queue_check(q) == -1)
		return -1;
	if (window_ms == 0 || window_ms > INT64_MAX / 2)
		return queue_einval(q, "stats: a window of %llu ms",
		    (unsigned long long)window_ms);
	return q->ops->stats(q, window_ms, st);
}

double
queue_stats_rate(const struct queue_stats *st, uint64_t window_ms,
    int64_t *span_ms)
{
	int64_t	from = st->now_ms - (int64_t)window_ms;

	*span_ms = 0;
	if (st->first_active_ms == 0)
		return 0;
	if (st->first_active_ms > from)
		from = st->first_active_ms;
	if ((*span_ms = st->now_ms - from) <= 0)
		return 0;
	return (double)st->done_recent * 60000.0 / (double)*span_ms;
}

void
queue_job_free(struct queue_job *j)
{
	if (j == NULL)
		return;
	free(j->task);
	free(j->profile);
	free(j->workspace);
	free(j->schema);
	free(j->key);
	free(j->params);
	free(j->worker);
	free(j->answer);
	free(j->output);
	free(j->error);
	free(j->diff_stat);
	free(j->run_where);
	free(j->applied_by);
	memset(j, 0, sizeof(*j));
}

void
queue_jobs_free(struct queue_job *v, size_t n)
{
	size_t	i;

	for (i = 0; v != NULL && i < n; i++)
		queue_job_free(&v[i]);
	free(v);
}

void
queue_attempts_free(struct queue_attempt *v, size_t n)
{
	size_t	i;

	for (i = 0; v != NULL && i < n; i++) {
		free(v[i].worker);
		free(v[i].outcome);
		free(v[i].error);
	}
	free(v);
}

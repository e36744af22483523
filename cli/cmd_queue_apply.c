/*
 * warren queue apply JOB | --all-done, and warren queue diff JOB: a done
 * job's changes, shown or written into the workspace, from any machine.
 *
 * The workspace is the user's: --workspace DIR or the current directory,
 * never the one the job records, which anyone who writes the queue
 * writes (qapply_where refuses a job of another workspace unless told).
 *
 * Two ways to them. On the machine whose state database holds the job's
 * run (the result's run_where is this host and database, and the run's
 * row has the job's task and workspace), its copy-on-write layer is
 * there: it is applied as `warren apply RUN` does (cmd_cow.c), each base
 * known by lstat. Anywhere else, and with --workspace, the change set the
 * worker stored with the result (workspace/cow.h, cow_pack) is unpacked
 * under the state directory and applied by content: the same checks, the
 * same refusals. A job whose set was too big to store can only be applied
 * where it ran; that is said, with where.
 *
 * An apply that wrote everything records where in the queue (applied_ms,
 * applied_by): --all-done takes the done jobs no machine applied yet, one
 * after the other; one whose changes conflict with the workspace (an
 * earlier job's included) is named and left for review, and the others go
 * on.
 */
#include <sys/file.h>
#include <sys/stat.h>

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <sha2.h>

#include "cli/cmd.h"
#include "cli/cmd_queue.h"
#include "cli/layer.h"
#include "common/exitcode.h"
#include "common/path.h"
#include "common/str.h"
#include "common/urlmask.h"
#include "common/xdg.h"
#include "store/store.h"
#include "workspace/cow.h"

struct qapply {
	const char	*name;		/* "apply" or "diff" */
	struct queue	*q;
	struct store	*st;		/* this machine's runs */
	char		 where[PATH_MAX + 300];	/* this database's */
	char		 qid[QUEUE_ERR_MAX];	/* the queue, to name dirs */
	char		 dest[PATH_MAX];	/* where to: canonical */
	int		 named;		/* dest is --workspace DIR */
	int		 any;		/* --any-workspace */
	int		 all;		/* --all-done */
	unsigned	 flags;		/* COW_APPLY_* or COW_DIFF_* */
	const struct cmd_include *include;	/* apply --include PATH */
};

/* This machine's runs (a->st stays NULL if none was ever recorded here:
 * then every job comes from the queue's change sets). 0, or -1 (said). */
static int
qapply_store(struct qapply *a, const struct cmd_queue_opts *o, int *exitp)
{
	char	path[PATH_MAX], err[STORE_ERRMSG_MAX + 64];

	if (store_path(path, sizeof(path), o->chg.db) == -1) {
		cmd_queue_error(a->name, "no run database path (%s): set HOME "
		    "or XDG_STATE_HOME, or give --db FILE", strerror(errno));
		*exitp = WARREN_EXIT_USAGE;
		return -1;
	}
	queue_where(a->where, sizeof(a->where), path);
	if (o->chg.db == NULL && access(path, F_OK) == -1 && errno == ENOENT)
		return 0;
	if ((a->st = store_open(path, strcmp(a->name, "diff") == 0 ?
	    STORE_READ : 0, err, sizeof(err))) == NULL) {
		cmd_queue_error(a->name, "%s", err);
		*exitp = WARREN_EXIT_STORE;
		return -1;
	}
	return 0;
}

/* A database copied to another host under the same name holds other
 * runs under the same ids: is this row the job's run? */
static int
qapply_is_jobs(const struct store_run *r, const struct queue_job *j)
{
	return r->task != NULL && r->workspace != NULL &&
	    strcmp(r->task, j->task) == 0 && strcmp(r->workspace,
	    j->workspace) == 0;
}

/* Is the job's recorded workspace (hostile: anyone who writes the queue
 * writes it) the destination? Compared canonical where it resolves
 * here. */
static int
qapply_same(const struct qapply *a, const struct queue_job *j)
{
	char	real[PATH_MAX];

	if (j->workspace == NULL)
		return 0;
	if (realpath(j->workspace, real) == NULL)
		return strcmp(j->workspace, a->dest) == 0;
	return strcmp(real, a->dest) == 0;
}

/*
 * The destination is never the job's to choose: it is --workspace DIR,
 * else the current directory. A job recorded in another workspace is
 * written there only when the user said so: --any-workspace, or for one
 * JOB named by id, --workspace DIR. 0 go on; -1 refused (said on
 * stderr, both paths escaped).
 */
static int
qapply_where(const struct qapply *a, const struct queue_job *j)
{
	if (qapply_same(a, j) || a->any || (a->named && !a->all))
		return 0;
	if (a->all)
		cmd_queue_error(a->name, "job %lld is of workspace %s, not this "
		    "one (%s): left out (`warren queue diff --workspace %s "
		    "%lld` shows it; --any-workspace applies every done job "
		    "here)", (long long)j->id, j->workspace != NULL ?
		    j->workspace : "?", a->dest, a->dest, (long long)j->id);
	else
		cmd_queue_error(a->name, "job %lld is of workspace %s, not this "
		    "one (%s): not %s here; `warren queue %s --workspace %s "
		    "%lld` %s it here if you mean to", (long long)j->id,
		    j->workspace != NULL ? j->workspace : "?", a->dest,
		    strcmp(a->name, "diff") == 0 ? "shown" : "applied",
		    a->name, a->dest, (long long)j->id,
		    strcmp(a->name, "diff") == 0 ? "shows" : "applies");
	return -1;
}

/* The job's run, if this machine's database holds it and its layer is
 * still to apply: 1 with *r filled, else 0. */
static int
qapply_local(struct qapply *a, const struct queue_job *j,
    struct store_run *r)
{
	/* No run_where: a result from before change sets, recorded here
	 * or nowhere. */
	if (a->st == NULL || a->named || !qapply_same(a, j) ||
	    (j->run_where != NULL &&
	    strcmp(j->run_where, a->where) != 0) ||
	    store_run_get(a->st, j->run_id, r) == -1)
		return 0;
	if (qapply_is_jobs(r, j) && r->cow_mode != NULL && layer_pending(r))
		return 1;
	store_run_free(r);
	return 0;
}

/* Did this machine's database record the job's run (applied or not)? */
static int
qapply_ran_here(struct qapply *a, const struct queue_job *j)
{
	struct store_run	r;
	int			mine;

	if (j->run_where != NULL)
		return strcmp(j->run_where, a->where) == 0;
	if (a->st == NULL || store_run_get(a->st, j->run_id, &r) == -1)
		return 0;
	mine = qapply_is_jobs(&r, j);
	store_run_free(&r);
	return mine;
}

/* Where the job's set is unpacked: the state directory's cow/, named by
 * the queue and the job, so that a killed apply's journal is found by
 * the next apply of the same job. */
static int
qapply_dir(const struct qapply *a, const struct queue_job *j, char *dir,
    size_t dirsz)
{
	SHA2_CTX	ctx;
	unsigned char	sum[SHA256_DIGEST_LENGTH];
	char		state[PATH_MAX], id[32];
	size_t		i;
	int		n;

	if (xdg_state_dir(state, sizeof(state)) == -1)
		return -1;
	snprintf(id, sizeof(id), ":%lld", (long long)j->id);
	SHA256Init(&ctx);
	SHA256Update(&ctx, (const uint8_t *)a->qid, strlen(a->qid));
	SHA256Update(&ctx, (const uint8_t *)id, strlen(id));
	SHA256Final(sum, &ctx);
	n = snprintf(dir, dirsz, "%s/cow", state);
	if (n < 0 || (size_t)n >= dirsz || path_mkdirs(dir, 0700, 0) == -1)
		return -1;
	n = snprintf(dir, dirsz, "%s/cow/job-", state);
	for (i = 0; i < 8 && n > 0 && (size_t)n + 3 < dirsz; i++)
		n += snprintf(dir + n, dirsz - (size_t)n, "%02x", sum[i]);
	return n > 0 && (size_t)n + 3 < dirsz ? 0 : -1;
}

/* All of it written: the queue says where, for every machine. */
static int
qapply_mark(struct qapply *a, const struct queue_job *j, const char *ws)
{
	char	by[PATH_MAX + 300];

	queue_where(by, sizeof(by), ws);
	if (queue_applied(a->q, j->id, by) == -1)
		return cmd_queue_fail(a->q, a->name);
	return WARREN_EXIT_OK;
}

/* One `queue apply` or `queue diff` of a change set at a time on this
 * machine: two of one job would share its directory (one clearing what
 * the other reads), two of any jobs would check and write one workspace
 * at once. A lock file beside the jobs' directories; -1 (said) if it
 * cannot be had. */
static int
qapply_lock(const struct qapply *a, const char *dir)
{
	char	path[PATH_MAX + 16], *slash;
	int	fd;

	snprintf(path, sizeof(path), "%s", dir);
	if ((slash = strrchr(path, '/')) != NULL)
		*slash = '\0';
	strlcat(path, "/queue-apply.lock", sizeof(path));
	if ((fd = open(path, O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC,
	    0600)) == -1 || flock(fd, LOCK_EX) == -1) {
		cmd_queue_error(a->name, "%s: %s", path, strerror(errno));
		if (fd != -1)
			close(fd);
		return -1;
	}
	return fd;
}

/* A line on stdout, escaped: it quotes paths and what the queue holds. */
static void qapply_say(const char *, ...)
    __attribute__((format(printf, 1, 2)));

static void
qapply_say(const char *fmt, ...)
{
	va_list	 ap;
	char	 msg[3 * PATH_MAX], *e;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	e = str_escape_dup(msg, strlen(msg), STR_ESC_KEEP_NL);
	fputs(e != NULL ? e : "?\n", stdout);
	free(e);
	fflush(stdout);
}

/* diff: what it is against, on stderr (stdout stays a patch). */
static void
qapply_said_diff(const struct queue_job *j, const char *ws)
{
	char	msg[PATH_MAX + 64], *e;

	snprintf(msg, sizeof(msg), "job %lld's changes against %s",
	    (long long)j->id, ws);
	e = str_escape_dup(msg, strlen(msg), 0);
	fprintf(stderr, "warren queue diff: %s\n", e != NULL ? e : "?");
	free(e);
}

/* The unpacked set shown, or applied (and the queue told). */
static int
qapply_set_run(struct qapply *a, const struct queue_job *j, struct cow *c,
    struct cow_changes *ch, const char *ws)
{
	char	err[1024];
	size_t	left;
	int	rc;

	if (strcmp(a->name, "diff") == 0) {
		qapply_said_diff(j, ws);
		rc = cow_diff(c, ch, stdout, a->flags, err, sizeof(err));
	} else {
		qapply_say("job %lld (run %lld on %s, its changes from the "
		    "queue) into %s:\n", (long long)j->id, (long long)j->run_id,
		    j->run_where != NULL ? j->run_where : "another machine", ws);
		if (cow_review(c, ch, err, sizeof(err)) == -1)
			rc = -1;
		else if (cmd_cow_include("queue apply", ch, a->flags,
		    a->include) == -1)
			return WARREN_EXIT_USAGE;
		else
			rc = cow_apply(c, ch, a->flags, stdout, err,
			    sizeof(err));
	}
	left = cmd_cow_left_out(ch, a->flags);
	if (rc == -1) {
		cmd_queue_error(a->name, "job %lld: %s", (long long)j->id, err);
		if (strcmp(a->name, "apply") == 0)
			fprintf(stderr, "warren queue apply: run it again once "
			    "that is fixed: what was applied is kept, the rest "
			    "follows\n");
		return WARREN_EXIT_INTERNAL;
	}
	if (rc == 1)
		return WARREN_EXIT_FAIL;
	if (strcmp(a->name, "diff") == 0)
		return WARREN_EXIT_OK;
	if (left > 0) {
		printf("%zu path%s left out: `warren queue apply "
		    "--include-sensitive --include-unreviewed %lld` applies "
		    "them\n", left, left == 1 ? "" : "s", (long long)j->id);
		return WARREN_EXIT_OK;
	}
	return qapply_mark(a, j, ws);
}

/* The stored change set, unpacked here and shown or applied by content. */
static int
qapply_set(struct qapply *a, const struct queue_job *j)
{
	struct cow_changes	 ch;
	struct cow		 c;
	char			 dir[PATH_MAX], ws[PATH_MAX], err[1024];
	void			*data = NULL;
	size_t			 len;
	int			 lock, ex;

	memset(&c, 0, sizeof(c));
	snprintf(ws, sizeof(ws), "%s", a->dest);
	if (qapply_dir(a, j, dir, sizeof(dir)) == -1) {
		cmd_queue_error(a->name, "no state directory for job %lld's "
		    "changes (%s): set HOME or XDG_STATE_HOME",
		    (long long)j->id, strerror(errno));
		return WARREN_EXIT_USAGE;
	}
	if ((lock = qapply_lock(a, dir)) == -1)
		return WARREN_EXIT_INTERNAL;
	if (queue_changes(a->q, j->id, &data, &len) == -1)
		ex = cmd_queue_fail(a->q, a->name);
	else if (data == NULL) {
		cmd_queue_error(a->name, "job %lld: its changes are gone from "
		    "the queue (purged or run again meanwhile)",
		    (long long)j->id);
		ex = WARREN_EXIT_USAGE;
	} else if (cow_unpack(data, len, dir, ws, &c, &ch, err,
	    sizeof(err)) == -1) {
		cmd_queue_error(a->name, "job %lld: %s", (long long)j->id, err);
		ex = WARREN_EXIT_STORE;
	} else {
		ex = qapply_set_run(a, j, &c, &ch, ws);
		cow_changes_free(&ch);
	}
	free(data);
	/* What was unpacked goes, and what a killed apply left. */
	if (c.dir[0] == '/' && access(c.dir, F_OK) == 0 &&
	    cow_remove(&c, err, sizeof(err)) == -1)
		cmd_queue_error(a->name, "job %lld: %s (remove it by hand)",
		    (long long)j->id, err);
	close(lock);
	return ex;
}

/* The layer in this machine's database, as `warren diff` and `warren
 * apply` take it; applied whole: the queue says so. */
static int
qapply_layer(struct qapply *a, const struct queue_job *j,
    const struct store_run *r)
{
	struct store_run	after;
	char			name[32];
	int			ex, done;

	snprintf(name, sizeof(name), "queue %s", a->name);
	if ((ex = cmd_cow_check(name, r, strcmp(a->name, "apply") == 0)) != 0)
		return ex;
	if (strcmp(a->name, "diff") == 0) {
		qapply_said_diff(j, a->dest);
		return cmd_cow_diff(r, a->flags);
	}
	qapply_say("job %lld (run %lld) into %s:\n", (long long)j->id,
	    (long long)r->id, a->dest);
	if ((ex = cmd_cow_apply(a->st, r, a->flags, a->include)) !=
	    WARREN_EXIT_OK)
		return ex;
	if (store_run_get(a->st, r->id, &after) == -1)
		return WARREN_EXIT_OK;
	done = !layer_pending(&after);
	store_run_free(&after);
	return done ? qapply_mark(a, j, r->workspace) : WARREN_EXIT_OK;
}

/* A done job with changes: from this machine's layer or the queue's set. */
static int
qapply_job(struct qapply *a, const struct queue_job *j)
{
	struct store_run	r;
	int			ex;

	if (j->status != QUEUE_DONE || j->run_id <= 0) {
		cmd_queue_error(a->name, "job %lld is %s%s: only a done job's "
		    "run has changes to %s", (long long)j->id,
		    queue_status_name(j->status), j->run_id <= 0 &&
		    j->status == QUEUE_DONE ? " without a run" : "", a->name);
		return WARREN_EXIT_USAGE;
	}
	if (qapply_where(a, j) == -1)
		return WARREN_EXIT_USAGE;
	if (qapply_local(a, j, &r)) {
		ex = qapply_layer(a, j, &r);
		store_run_free(&r);
		return ex;
	}
	if (j->changes_len > 0)
		return qapply_set(a, j);
	if (j->diff_stat == NULL) {
		printf("job %lld has no changes recorded: nothing to %s\n",
		    (long long)j->id, a->name);
		return WARREN_EXIT_OK;
	}
	if (qapply_ran_here(a, j) && (a->named || !qapply_same(a, j))) {
		cmd_queue_error(a->name, "job %lld: the queue holds no change "
		    "set of it, and its run %lld's layer here goes only to the "
		    "run's own workspace, %s: `warren queue %s %lld` from there",
		    (long long)j->id, (long long)j->run_id, j->workspace,
		    a->name, (long long)j->id);
		return WARREN_EXIT_USAGE;
	}
	if (qapply_ran_here(a, j)) {
		cmd_queue_error(a->name, "job %lld: its run %lld here has no "
		    "layer left (applied or discarded: `warren show %lld`), and "
		    "the queue holds no change set of it", (long long)j->id,
		    (long long)j->run_id, (long long)j->run_id);
		return WARREN_EXIT_USAGE;
	}
	cmd_queue_error(a->name, "job %lld: its changes are not in the queue "
	    "(over %d MiB, or done by a warren before change sets): only the "
	    "machine that ran it has them, %s: `warren queue %s %lld` there",
	    (long long)j->id, COW_PACK_MAX >> 20, j->run_where != NULL ?
	    j->run_where : j->worker != NULL ? j->worker : "?", a->name,
	    (long long)j->id);
	return WARREN_EXIT_USAGE;
}

/* The worse of two exit codes: internal over database over conflict. */
static int
qapply_worse(int x, int y)
{
	if (x == WARREN_EXIT_INTERNAL || y == WARREN_EXIT_INTERNAL)
		return WARREN_EXIT_INTERNAL;
	return x > y ? x : y;
}

/* A done job with changes no machine applied yet: in the queue, named
 * by its diff stat (kept elsewhere), or in a layer here. */
static int
qapply_pending(struct qapply *a, const struct queue_job *j)
{
	struct store_run	r;

	if (j->applied_ms != 0 || j->run_id <= 0)
		return 0;
	if (j->changes_len > 0 || j->diff_stat != NULL)
		return 1;
	if (!qapply_local(a, j, &r))
		return 0;
	store_run_free(&r);
	return 1;
}

/* Every done job with changes that no machine applied yet. */
static int
qapply_all(struct qapply *a)
{
	struct queue_job	*v;
	size_t			 n, i, applied = 0, left = 0, other = 0;
	int			 ex = WARREN_EXIT_OK, rc;

	if (queue_list(a->q, QUEUE_DONE, &v, &n) == -1)
		return cmd_queue_fail(a->q, a->name);
	for (i = 0; i < n; i++) {
		if (!qapply_pending(a, &v[i]))
			continue;
		if (qapply_where(a, &v[i]) == -1) {
			other++;
			continue;
		}
		if ((rc = qapply_job(a, &v[i])) == 0)
			applied++;
		else
			left++;
		ex = qapply_worse(ex, rc);
	}
	queue_jobs_free(v, n);
	printf("applied the changes of %zu done job%s", applied,
	    applied == 1 ? "" : "s");
	if (left > 0)
		printf("; %zu left to review (`warren queue show JOB`, `warren "
		    "queue diff JOB`)", left);
	if (other > 0)
		printf("; %zu of other workspaces left out (named above)",
		    other);
	printf("\n");
	return ex;
}

/* One job: said first if a machine applied it already. */
static int
qapply_one(struct qapply *a, int64_t id)
{
	struct queue_job	j;
	int			ex;

	if (queue_get(a->q, id, &j, NULL, NULL) == -1)
		return cmd_queue_fail(a->q, a->name);
	if (j.applied_ms != 0 && strcmp(a->name, "apply") == 0)
		printf("job %lld was applied before, on %s; again here, "
		    "checked by content:\n", (long long)id, j.applied_by !=
		    NULL ? j.applied_by : "?");
	ex = qapply_job(a, &j);
	queue_job_free(&j);
	return ex;
}

/* Where to: --workspace DIR, else the directory the user is in (as
 * `warren runs` takes it), canonical and a directory. 0, or -1 said. */
static int
qapply_dest(struct qapply *a, const struct cmd_queue_opts *o)
{
	const char	*dir = o->chg.workspace != NULL ? o->chg.workspace :
			    ".";
	struct stat	 sb;

	a->named = o->chg.workspace != NULL;
	a->any = o->any_workspace;
	a->all = o->all_done;
	errno = 0;
	if (realpath(dir, a->dest) == NULL || stat(a->dest, &sb) == -1 ||
	    !S_ISDIR(sb.st_mode)) {
		cmd_queue_error(a->name, "%s %s: %s", a->named ?
		    "--workspace" : "the current directory", dir,
		    strerror(errno != 0 ? errno : ENOTDIR));
		return -1;
	}
	return 0;
}

static int
qapply_main(int argc, char **argv, const char *name)
{
	struct cmd_queue_opts	 o;
	struct qapply		 a;
	const char		*url;
	int64_t			 id = 0;
	int			 rc, ex = WARREN_EXIT_OK, diff;

	diff = strcmp(name, "diff") == 0;
	if ((rc = cmd_queue_parse(argc, argv, CMD_QUEUE_O_WHERE | (diff ?
	    CMD_QUEUE_O_STAT : CMD_QUEUE_O_APPLY), &o)) != 0)
		return rc == 1 ? WARREN_EXIT_OK : WARREN_EXIT_USAGE;
	if (o.all_done != (optind == argc) || argc - optind > 1) {
		cmd_queue_error(name, "give one JOB%s", diff ? "" :
		    " or --all-done");
		return WARREN_EXIT_USAGE;
	}
	if (!o.all_done && cmd_queue_job_arg(name, argv[optind], &id) == -1)
		return WARREN_EXIT_USAGE;
	if (o.all_done && o.chg.include.n > 0) {
		cmd_queue_error(name, "--include names a path of one job: give "
		    "the JOB, not --all-done");
		return WARREN_EXIT_USAGE;
	}
	memset(&a, 0, sizeof(a));
	a.name = name;
	if (qapply_dest(&a, &o) == -1)
		return WARREN_EXIT_USAGE;
	if (diff)
		a.flags = o.chg.diff | ((o.chg.diff & COW_DIFF_RAW) == 0 &&
		    isatty(STDOUT_FILENO) && getenv("NO_COLOR") == NULL ?
		    COW_DIFF_COLOR : 0);
	else
		a.flags = o.chg.apply;
	a.include = &o.chg.include;
	/* Names the unpack directory only: two queues under one name
	 * share a journal, which removes only apply's own temporaries. */
	url = o.url != NULL ? o.url : getenv("WARREN_QUEUE_URL");
	urlmask(url != NULL ? url : "", a.qid, sizeof(a.qid));
	if ((a.q = cmd_queue_open(name, o.url, &ex)) == NULL)
		return ex;
	if (qapply_store(&a, &o, &ex) == 0)
		ex = o.all_done ? qapply_all(&a) : qapply_one(&a, id);
	store_close(a.st);
	queue_close(a.q);
	return ex;
}

int
cmd_queue_apply(int argc, char **argv)
{
	return qapply_main(argc, argv, "apply");
}

int
cmd_queue_diff(int argc, char **argv)
{
	return qapply_main(argc, argv, "diff");
}

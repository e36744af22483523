/*
 * The workspace tools' entry points: open the workspace, run one tool,
 * run a batch of calls with the parallel-safe ones on threads.
 *
 * Threads, not processes, for parallel calls: read, list, glob and grep
 * only read through their own fds beneath rootfd and keep no shared state,
 * so a thread each is safe and costs microseconds, where a fork per call
 * would cost a millisecond and copy the worker. Calls that change the
 * workspace or exec (write, edit, bash) run alone, in call order, so a
 * batch behaves as if run one by one; bash forks only while no tool thread
 * runs.
 */
#include <sys/stat.h>

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "agent/tooldef.h"
#include "worker/tool_int.h"
#include "worker/tools_testapi.h"

static const struct {
	const char	*name;
	int		(*fn)(const struct tool_ctx *, json_t *,
			    struct tool_result *);
} tools_table[] = {
	{ "read", tool_read }, { "write", tool_write }, { "edit", tool_edit },
	{ "list", tool_list }, { "glob", tool_glob }, { "grep", tool_grep },
	{ "bash", tool_bash },
};

int
tool_ctx_open(struct tool_ctx *ctx, const char *root, char *err,
    size_t errlen)
{
	char	*real;
	size_t	 len;

	memset(ctx, 0, sizeof(*ctx));
	ctx->rootfd = -1;
	if ((real = realpath(root, NULL)) == NULL) {
		snprintf(err, errlen, "workspace %s: %s", root,
		    strerror(errno));
		return -1;
	}
	len = strlen(real);
	while (len > 1 && real[len - 1] == '/')
		real[--len] = '\0';
	if ((ctx->rootfd = open(real, O_PATH | O_DIRECTORY | O_CLOEXEC)) ==
	    -1) {
		snprintf(err, errlen, "workspace %s: %s", real,
		    strerror(errno));
		free(real);
		return -1;
	}
	ctx->root = real;
	ctx->walk_only = tool_path_openat2_refused(ctx->rootfd);
	ctx->max_output = TOOLS_DEFAULT_MAX_OUTPUT;
	ctx->bash_timeout_ms = TOOLS_DEFAULT_BASH_TIMEOUT;
	ctx->max_threads = 4;
	return 0;
}

void
tool_ctx_close(struct tool_ctx *ctx)
{
	if (ctx->rootfd != -1)
		close(ctx->rootfd);
	free(ctx->root);
	ctx->root = NULL;
	ctx->rootfd = -1;
}

void
tool_result_free(struct tool_result *res)
{
	free(res->text);
	memset(res, 0, sizeof(*res));
}

int
tool_fail(struct tool_result *res, const char *fmt, ...)
{
	va_list	ap;
	int	rc;

	va_start(ap, fmt);
	rc = vasprintf(&res->text, fmt, ap);
	va_end(ap);
	res->is_error = 1;
	if (rc == -1) {
		res->text = NULL;
		return -1;
	}
	return 0;
}

/* Length of the valid UTF-8 sequence at p (1-4), 0 when invalid. */
static size_t
tool_utf8_len(const unsigned char *p, size_t left)
{
	size_t	n, i;

	if (p[0] < 0x80)
		return p[0] == 0 ? 0 : 1;
	if (p[0] >= 0xc2 && p[0] <= 0xdf)
		n = 2;
	else if (p[0] >= 0xe0 && p[0] <= 0xef)
		n = 3;
	else if (p[0] >= 0xf0 && p[0] <= 0xf4)
		n = 4;
	else
		return 0;
	if (n > left)
		return 0;
	for (i = 1; i < n; i++)
		if ((p[i] & 0xc0) != 0x80)
			return 0;
	if (n == 3 && ((p[0] == 0xe0 && p[1] < 0xa0) ||
	    (p[0] == 0xed && p[1] >= 0xa0)))
		return 0;
	if (n == 4 && ((p[0] == 0xf0 && p[1] < 0x90) ||
	    (p[0] == 0xf4 && p[1] >= 0x90)))
		return 0;
	return n;
}

/* Copy s into out as valid UTF-8: the JSON encoders refuse anything else,
 * and files and command output are often not. Bad bytes become \xNN. */
static int
tool_utf8_add(struct buf *out, const unsigned char *s, size_t len)
{
	size_t	i = 0, n, run = 0;

	while (i < len) {
		if ((n = tool_utf8_len(s + i, len - i)) > 0) {
			i += n;
			run += n;
			continue;
		}
		if (buf_add(out, s + i - run, run) == -1 ||
		    buf_addf(out, "\\x%02x", s[i]) == -1)
			return -1;
		run = 0;
		i++;
	}
	return buf_add(out, s + i - run, run);
}

int
tool_done(const struct tool_ctx *ctx, struct tool_result *res, struct buf *b)
{
	size_t		max = ctx->max_output ? ctx->max_output :
	    TOOLS_DEFAULT_MAX_OUTPUT;
	size_t		head, tail;
	struct buf	out;
	int		rc = -1;

	buf_init(&out, 0);
	if (b->len <= max) {
		if (tool_utf8_add(&out, b->data, b->len) == -1)
			goto done;
	} else {
		head = max / 2;
		tail = max - head;
		/* Do not split a UTF-8 sequence at either cut. */
		while (head > 0 && (b->data[head] & 0xc0) == 0x80)
			head--;
		while (tail > 0 && (b->data[b->len - tail] & 0xc0) == 0x80)
			tail--;
		if (tool_utf8_add(&out, b->data, head) == -1 ||
		    buf_addf(&out, "\n[... %zu bytes cut from the middle "
		    "...]\n", b->len - head - tail) == -1 ||
		    tool_utf8_add(&out, b->data + b->len - tail, tail) == -1)
			goto done;
	}
	if ((res->text = buf_release(&out, NULL)) != NULL)
		rc = 0;
 done:
	buf_free(&out);
	buf_free(b);
	return rc;
}

int
tools_parallel_safe(const char *name)
{
	const struct tooldef	*t = tooldef_find(name);

	return t != NULL && t->where == TOOLDEF_WORKER && t->parallel;
}

int
tools_in_process(const char *name)
{
	const struct tooldef	*t = tooldef_find(name);

	return t != NULL && t->where == TOOLDEF_WORKER && !t->execs;
}

int
tools_run(const struct tool_ctx *ctx, const char *name, const char *args,
    struct tool_result *res)
{
	const struct tooldef	*t;
	json_t			*root;
	char			 err[512];
	size_t			 i;
	int			 rc;

	memset(res, 0, sizeof(*res));
	if ((t = tooldef_find(name)) == NULL)
		return tool_fail(res, "unknown tool \"%.64s\"", name ? name :
		    "");
	if (t->where == TOOLDEF_COMPOSE)
		return tool_fail(res, "%s runs in the orchestrator only: use "
		    "delegate", t->name);
	if (t->where != TOOLDEF_WORKER)
		return tool_fail(res, "%s is not a workspace tool: the %s "
		    "answers it", t->name, t->where == TOOLDEF_DELEGATE ||
		    t->where == TOOLDEF_COMPOSE ? "supervisor" : "agent core");
	if (tooldef_validate(t, args, err, sizeof(err)) == -1)
		return tool_fail(res, "%s", err);
	if (args == NULL || args[strspn(args, " \t\r\n")] == '\0')
		root = json_object();
	else
		root = json_loads(args, 0, NULL);
	if (root == NULL)
		return -1;
	for (i = 0; i < sizeof(tools_table) / sizeof(tools_table[0]); i++)
		if (strcmp(tools_table[i].name, t->name) == 0)
			break;
	if (i == sizeof(tools_table) / sizeof(tools_table[0])) {
		/* tooldef.c lists a worker tool this table lacks. */
		json_decref(root);
		return tool_fail(res, "%s: this worker has no "
		    "implementation of it", t->name);
	}
	rc = tools_table[i].fn(ctx, root, res);
	json_decref(root);
	if (rc == 0 && res->text == NULL && (res->text = strdup("")) == NULL)
		rc = -1;
	return rc;
}

struct tools_job {
	const struct tool_ctx	*ctx;
	const struct agent_call	*calls;
	struct tool_result	*res;
	size_t			 from, to;
	size_t			 next;		/* under lock */
	int			 failed;
	pthread_mutex_t		 lock;
};

static void
tools_run_one(const struct tool_ctx *ctx, const struct agent_call *c,
    struct tool_result *r, int *failed)
{
	if (c->kind == AGENT_CALL_DELEGATE) {
		if (tool_fail(r, "delegate is answered by the supervisor, not "
		    "the workspace tools") == -1)
			*failed = 1;
		return;
	}
	if (tools_run(ctx, c->name, c->args, r) == -1)
		*failed = 1;
}

static void *
tools_thread(void *arg)
{
	struct tools_job	*j = arg;
	size_t			 i;
	int			 failed = 0;

	for (;;) {
		pthread_mutex_lock(&j->lock);
		i = j->next++;
		pthread_mutex_unlock(&j->lock);
		if (i >= j->to)
			break;
		tools_run_one(j->ctx, &j->calls[i], &j->res[i], &failed);
	}
	if (failed) {
		pthread_mutex_lock(&j->lock);
		j->failed = 1;
		pthread_mutex_unlock(&j->lock);
	}
	return NULL;
}

/* calls[from, to) all parallel-safe: run them on threads. */
static int
tools_run_group(const struct tool_ctx *ctx, const struct agent_call *calls,
    size_t from, size_t to, struct tool_result *res)
{
	struct tools_job	j;
	pthread_t		th[TOOLS_MAX_THREADS];
	size_t			nth, i, started = 0;
	unsigned		max = ctx->max_threads;

	if (max == 0 || max > TOOLS_MAX_THREADS)
		max = max == 0 ? 4 : TOOLS_MAX_THREADS;
	memset(&j, 0, sizeof(j));
	j.ctx = ctx;
	j.calls = calls;
	j.res = res;
	j.from = j.next = from;
	j.to = to;
	pthread_mutex_init(&j.lock, NULL);
	nth = to - from - 1 < max ? to - from - 1 : max;
	/* This thread works too: one call needs no thread at all. */
	for (i = 0; i < nth; i++) {
		if (pthread_create(&th[i], NULL, tools_thread, &j) != 0)
			break;
		started++;
	}
	tools_thread(&j);
	for (i = 0; i < started; i++)
		pthread_join(th[i], NULL);
	pthread_mutex_destroy(&j.lock);
	return j.failed ? -1 : 0;
}

int
tools_run_batch(const struct tool_ctx *ctx, const struct agent_call *calls,
    size_t n, struct tool_result *res)
{
	size_t	i, end;
	int	failed = 0;

	memset(res, 0, n * sizeof(*res));
	for (i = 0; i < n; i = end) {
		end = i + 1;
		if (calls[i].parallel && tools_parallel_safe(calls[i].name)) {
			while (end < n && calls[end].parallel &&
			    tools_parallel_safe(calls[end].name))
				end++;
			if (tools_run_group(ctx, calls, i, end, res) == -1)
				failed = 1;
		} else
			tools_run_one(ctx, &calls[i], &res[i], &failed);
		if (failed)
			break;
	}
	if (failed) {
		for (i = 0; i < n; i++)
			tool_result_free(&res[i]);
		errno = ENOMEM;
		return -1;
	}
	return 0;
}

/*
 * warren mcp list [--workspace DIR] [--json]: every MCP server an agent
 * could use here, where it is declared (the user's mcp.json, the
 * workspace's .mcp.json), whether that file is trusted, the sandbox it
 * would run in, and its tools: each trusted server is started once,
 * sandboxed as for the explore profile (the workspace read-only: listing
 * needs no more), asked for its tools, and killed. What a server prints
 * is escaped and bounded as in a run (supervisor/mcp_rpc.c).
 */
#include <sys/types.h>
#include <sys/wait.h>

#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <jansson.h>

#include "agent/profile.h"
#include "cli/cmd.h"
#include "cli/cmd_mcp_list_testapi.h"
#include "cli/project.h"
#include "common/clock.h"
#include "common/exitcode.h"
#include "common/str.h"
#include "spawnd/spawn.h"
#include "supervisor/mcp.h"

#define MCP_LIST_MS	MCP_START_MS

struct mcp_list_srv {
	const struct mcp_entry	*e;
	int			 trusted;
	struct sandbox_policy	 policy;
	char			 sandbox[2048];
	struct msg_tool		*tools;
	size_t			 ntools;
	char			 err[512];
};

static void
cmd_mcp_list_usage(FILE *f)
{
	fprintf(f, "usage: warren mcp list [--workspace DIR] [--json]\n"
	    "  Each MCP server of the user's mcp.json and the workspace's "
	    ".mcp.json:\n  where it is declared, whether it is trusted, its "
	    "sandbox, and its tools\n  (each trusted server is started once, "
	    "sandboxed, to list them).\n"
	    "  -w, --workspace DIR  the workspace (default: .)\n"
	    "  -j, --json           one JSON document on stdout\n");
}

/* Milliseconds to the deadline, for poll: 0 once it passed (a negative
 * timeout would wait forever). */
static int
mcp_list_left(long long end)
{
	long long	left = end - (long long)clock_mono_ms();

	return left > 0 ? (int)left : 0;
}

/* Write all of out to fd before the deadline; -1 with err. */
int
mcp_list_write(int fd, struct buf *out, long long end, char *err,
    size_t errsz)
{
	struct pollfd	 p = { fd, POLLOUT, 0 };
	ssize_t		 n;

	while (buf_left(out) > 0) {
		if (poll(&p, 1, mcp_list_left(end)) <= 0) {
			snprintf(err, errsz, "it does not read its stdin");
			return -1;
		}
		n = write(fd, buf_head(out), buf_left(out));
		if (n == -1 && (errno == EAGAIN || errno == EINTR))
			continue;
		if (n == -1) {
			snprintf(err, errsz, "its stdin: %s", strerror(errno));
			return -1;
		}
		buf_consume(out, (size_t)n);
	}
	return 0;
}

/* The answer to request id, before the deadline: its result (the
 * caller frees msg), or NULL with err. */
json_t *
mcp_list_answer(int fd, struct mcp_lines *l, uint64_t want, long long end,
    json_t **msgp, char *err, size_t errsz)
{
	struct pollfd	 p = { fd, POLLIN, 0 };
	json_t		*msg, *result;
	uint64_t	 id;
	char		 b[65536];
	ssize_t		 n;
	int		 rc;

	for (;;) {
		while ((rc = mcp_lines_next(l, &msg, err, errsz)) != 0) {
			if (rc == -1)
				return NULL;
			if (mcp_rpc_answer(msg, &id, &result, err, errsz) == 1 &&
			    id == want) {
				*msgp = msg;
				return result;	/* NULL: err says why */
			}
			json_decref(msg);
		}
		if (poll(&p, 1, mcp_list_left(end)) <= 0) {
			snprintf(err, errsz, "no answer within %u ms",
			    MCP_LIST_MS);
			return NULL;
		}
		n = read(fd, b, sizeof(b));
		if (n == -1 && (errno == EAGAIN || errno == EINTR))
			continue;
		if (n <= 0) {
			snprintf(err, errsz, "it closed its stdout (exited?)");
			return NULL;
		}
		if (mcp_lines_feed(l, b, (size_t)n, err, errsz) == -1)
			return NULL;
		if (l->read > MCP_READ_MAX) {
			snprintf(err, errsz, "it wrote more than %u bytes "
			    "without answering", MCP_READ_MAX);
			return NULL;
		}
	}
}

/* initialize, notifications/initialized, tools/list. */
static int
mcp_list_talk(struct mcp_list_srv *s, const struct spawn_child *c)
{
	struct mcp_lines	 l;
	struct buf		 out;
	json_t			*msg = NULL, *res;
	long long		 end = (long long)clock_mono_ms() + MCP_LIST_MS;
	int			 rc = -1;

	memset(&l, 0, sizeof(l));
	buf_init(&out, 0);
	if (mcp_rpc_request(&out, 1, "initialize", json_pack("{s:s, s:{}, "
	    "s:{s:s, s:s}}", "protocolVersion", MCP_PROTOCOL, "capabilities",
	    "clientInfo", "name", "warren", "version", "1")) == -1 ||
	    mcp_list_write(c->to_fd, &out, end, s->err, sizeof(s->err)) == -1)
		goto out;
	if ((res = mcp_list_answer(c->from_fd, &l, 1, end, &msg, s->err,
	    sizeof(s->err))) == NULL)
		goto out;
	json_decref(msg);
	msg = NULL;
	if (mcp_rpc_note(&out, "notifications/initialized") == -1 ||
	    mcp_rpc_request(&out, 2, "tools/list", json_object()) == -1 ||
	    mcp_list_write(c->to_fd, &out, end, s->err, sizeof(s->err)) == -1)
		goto out;
	if ((res = mcp_list_answer(c->from_fd, &l, 2, end, &msg, s->err,
	    sizeof(s->err))) == NULL)
		goto out;
	rc = mcp_rpc_tools(res, s->e->name, &s->tools, &s->ntools, s->err,
	    sizeof(s->err));
out:
	json_decref(msg);
	mcp_lines_free(&l);
	buf_free(&out);
	return rc;
}

/* A failed server's stderr, its last line (escaped, bounded), after
 * its error. */
static void
mcp_list_stderr(struct mcp_list_srv *s, int fd)
{
	char	 b[4096], esc[512], *nl, *line;
	ssize_t	 n;
	size_t	 len;

	if ((n = read(fd, b, sizeof(b) - 1)) <= 0)
		return;
	b[n] = '\0';
	while (n > 0 && b[n - 1] == '\n')
		b[--n] = '\0';
	line = (nl = strrchr(b, '\n')) != NULL ? nl + 1 : b;
	str_escape(esc, sizeof(esc), line, strlen(line));
	len = strlen(s->err);
	snprintf(s->err + len, sizeof(s->err) - len, " (its stderr: %s)", esc);
}

/* Start s sandboxed, list its tools, kill it. */
static void
mcp_list_start(struct mcp_list_srv *s)
{
	struct spawn_req	 req;
	struct spawn_child	 c;
	struct mcp_launch	 l;

	mcp_sandbox_launch(&l, s->e, s->policy.program, &s->policy, &req);
	/* A server that dies makes its stdin EPIPE, not our death. */
	signal(SIGPIPE, SIG_IGN);
	if (spawn_worker(&req, &c, s->err, sizeof(s->err)) == 0) {
		if (mcp_list_talk(s, &c) == -1)
			mcp_list_stderr(s, c.err_fd);
		spawn_kill(&c, SIGKILL);
		while (waitpid(c.pid, NULL, 0) == -1 && errno == EINTR)
			;
		spawn_release(&c);
	}
	mcp_sandbox_launch_free(&l);
}

/* The policy as for explore in ws; the server's on top. */
static int
mcp_list_policy(struct mcp_list_srv *s, const char *ws)
{
	struct sandbox_policy	 agent;
	struct sandbox_error	 e;
	char			 prog[PATH_MAX];

	memset(&e, 0, sizeof(e));
	if (profile_policy(&agent, "explore", ws, &e) == -1) {
		snprintf(s->err, sizeof(s->err), "%s", e.msg);
		return -1;
	}
	if (spawn_protect(&agent, NULL, s->err, sizeof(s->err)) == -1)
		return -1;
	sandbox_policy_require(&agent, NULL);
	if (mcp_sandbox_policy(s->e, &agent, &s->policy, prog, sizeof(prog),
	    s->err, sizeof(s->err)) == -1)
		return -1;
	mcp_sandbox_line(&s->policy, s->sandbox, sizeof(s->sandbox));
	return 0;
}

static void
mcp_list_print(const struct mcp_list_srv *s)
{
	size_t	i;

	printf("%s\n", s->e->name);
	printf("  declared: %s (%s)\n", s->e->file, s->e->project ?
	    (s->trusted ? "the workspace's, trusted" :
	    "the workspace's, NOT trusted: ignored; `warren trust` uses it") :
	    "yours");
	printf("  command:  ");
	cmd_print_text(s->e->command, 4096);
	for (i = 0; i < s->e->nargs; i++) {
		putchar(' ');
		cmd_print_text(s->e->args[i], 4096);
	}
	putchar('\n');
	if (s->sandbox[0] != '\0') {
		printf("  sandbox:  ");
		cmd_print_text(s->sandbox, 0);
		putchar('\n');
	}
	if (s->err[0] != '\0') {
		printf("  error:    ");
		cmd_print_text(s->err, 1024);
		putchar('\n');
	}
	if (!s->trusted)
		return;
	printf("  tools:   ");
	for (i = 0; i < s->ntools; i++) {
		printf(" %s", s->tools[i].name);
	}
	printf(" (%zu)\n", s->ntools);
}

static json_t *
mcp_list_json(const struct mcp_list_srv *s)
{
	json_t	*o, *t;
	size_t	 i;

	o = json_pack("{s:s, s:s, s:s, s:b, s:s}", "name", s->e->name,
	    "file", s->e->file, "declared", s->e->project ? "workspace" :
	    "user", "trusted", s->trusted, "command", s->e->command);
	json_object_set_new(o, "args", json_array());
	for (i = 0; i < s->e->nargs; i++)
		json_array_append_new(json_object_get(o, "args"),
		    json_string(s->e->args[i]));
	json_object_set_new(o, "sandbox", s->sandbox[0] ?
	    json_string(s->sandbox) : json_null());
	json_object_set_new(o, "error", s->err[0] ? json_string(s->err) :
	    json_null());
	t = json_array();
	for (i = 0; i < s->ntools; i++)
		json_array_append_new(t, json_pack("{s:s, s:s}", "name",
		    s->tools[i].name, "description", s->tools[i].description));
	json_object_set_new(o, "tools", t);
	return o;
}

/* An untrusted project's .mcp.json, to say what it would declare. */
static int
mcp_list_untrusted(struct mcp_config *c, const struct project *pr)
{
	char	path[PATH_MAX + 16], warn[1024], err[512];
	size_t	i;

	if (pr->trusted)
		return 0;
	for (i = 0; i < pr->nfiles; i++) {
		if (strcmp(pr->files[i].path, PROJECT_MCP_JSON) != 0)
			continue;
		snprintf(path, sizeof(path), "%s/%s", pr->workspace,
		    pr->files[i].path);
		return mcp_config_parse(c, pr->files[i].text, pr->files[i].len,
		    path, 1, warn, sizeof(warn), err, sizeof(err)) == -1 ?
		    -1 : 1;
	}
	return 0;
}

static int
mcp_list_run(const char *ws, int json)
{
	struct project		 pr;
	struct mcp_config	 c, u;
	struct mcp_list_srv	*v;
	json_t			*all = NULL;
	char			 err[1024], path[PATH_MAX];
	size_t			 i, n;
	int			 rc = WARREN_EXIT_OK;

	if (project_open(&pr, ws, NULL, "mcp list", err, sizeof(err)) == -1 ||
	    mcp_load(&c, &pr, "mcp list", err, sizeof(err)) == -1) {
		str_escape(path, sizeof(path), err, strlen(err));
		fprintf(stderr, "warren mcp list: %s\n", path);
		project_free(&pr);
		return WARREN_EXIT_CONFIG;
	}
	memset(&u, 0, sizeof(u));
	/* The untrusted file's servers, listed but never started. */
	(void)mcp_list_untrusted(&u, &pr);
	n = c.n + u.n;
	v = calloc(n + 1, sizeof(*v));
	for (i = 0; v != NULL && i < n; i++) {
		v[i].e = i < c.n ? &c.v[i] : &u.v[i - c.n];
		v[i].trusted = i < c.n;
		if (mcp_list_policy(&v[i], pr.workspace) == 0 && v[i].trusted)
			mcp_list_start(&v[i]);
		if (v[i].err[0] != '\0' && v[i].trusted)
			rc = WARREN_EXIT_FAIL;
	}
	if (json) {
		all = json_array();
		for (i = 0; v != NULL && i < n; i++)
			json_array_append_new(all, mcp_list_json(&v[i]));
		rc = cmd_json_print(json_pack("{s:o}", "servers", all)) != 0 ?
		    WARREN_EXIT_INTERNAL : rc;
	} else if (n == 0) {
		if (mcp_load_user_path(path, sizeof(path)) == -1)
			strlcpy(path, "$XDG_CONFIG_HOME/warren/mcp.json",
			    sizeof(path));
		printf("no MCP servers (declare them in %s, or in the "
		    "workspace's .mcp.json)\n", path);
	} else
		for (i = 0; v != NULL && i < n; i++)
			mcp_list_print(&v[i]);
	for (i = 0; v != NULL && i < n; i++) {
		while (v[i].ntools > 0)
			msg_tool_free(&v[i].tools[--v[i].ntools]);
		free(v[i].tools);
	}
	free(v);
	mcp_config_free(&c);
	mcp_config_free(&u);
	project_free(&pr);
	return rc;
}

int
cmd_mcp_list(int argc, char **argv)
{
	const char	*ws;
	int		 rc, json;

	if ((rc = cmd_getopt_ws("mcp list", argc, argv, &ws, &json)) == 1) {
		cmd_mcp_list_usage(stdout);
		return WARREN_EXIT_OK;
	}
	if (rc == -1)
		return WARREN_EXIT_USAGE;
	if (optind < argc) {
		cmd_usage_error("mcp list", "no arguments, not '%s'",
		    argv[optind]);
		return WARREN_EXIT_USAGE;
	}
	return mcp_list_run(ws, json);
}

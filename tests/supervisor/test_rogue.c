/*
 * The supervisor against workers that misbehave: one that never says
 * hello, one that sends garbage frames, one whose hello claims less
 * sandbox than its profile needs. Each is killed, the reason reaches the
 * orchestrator as its delegate call's result and the store's events, and
 * the run finishes. A bad frame is killed for its own reason before the
 * hello deadline would kill the silent rogue anyway. One that ignores its
 * cancel meets the agent timeout and the kill after the grace period; a
 * deadline that does not fire fails its test after 20 s, by name. The
 * rogue "workers" are small scripts given with --worker; the supervisor
 * starts them exactly as it starts warren-worker.
 * A worker that floods the store with events or checkpointed messages is
 * stopped at its quota, and the store keeps every row up to the quota
 * (exactly 100 of 100: one that sends exactly that many is not stopped);
 * its MCP calls count too (each is recorded, offered or not).
 * And the spawn server's side of it: requests answered without the
 * supervisor waiting, in order, a refused one with its reason, and a
 * worker nobody waits for any more killed, not leaked.
 */
#include <sys/stat.h>
#include <sys/wait.h>

#include <poll.h>
#include <signal.h>

#include <limits.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "common/buf.h"
#include "common/clock.h"
#include "common/log.h"
#include "common/msg.h"
#include "ipc/ipc.h"
#include "sandbox/sandbox.h"
#include "spawnd/spawn.h"
#include "store/store.h"
#include "supervisor/spawnd_client.h"
#include "tests/e2e/harness.h"

struct ctx {
	char	*dir;
	char	 ws[1024];
	char	 cas[PATH_MAX];
	char	 db[PATH_MAX];
	char	 worker[PATH_MAX];
};

static int
setup(void **state)
{
	struct ctx	*c = calloc(1, sizeof(*c));
	FILE		*f;

	c->dir = h_tmpdir();
	snprintf(c->ws, sizeof(c->ws), "%s/ws", c->dir);
	snprintf(c->cas, sizeof(c->cas), "%s/s.cassette", c->dir);
	snprintf(c->db, sizeof(c->db), "%s/warren.db", c->dir);
	/* In the workspace: the only place a worker's private /tmp shows. */
	snprintf(c->worker, sizeof(c->worker), "%s/rogue-worker", c->ws);
	h_write(c->ws, "a.txt", "a\n", 0);
	f = h_cassette_open(c->cas);
	h_turn(f, "0", 1, "[{\"id\":\"a\",\"name\":\"delegate\",\"arguments\":"
	    "\"{\\\"profile\\\":\\\"explore\\\",\\\"task\\\":\\\"x\\\"}\"}]");
	h_turn(f, "0", 2, "[{\"id\":\"b\",\"name\":\"complete\",\"arguments\":"
	    "\"{\\\"result\\\":\\\"HANDLED\\\"}\"}]");
	fclose(f);
	*state = c;
	return 0;
}

static int
teardown(void **state)
{
	struct ctx	*c = *state;

	h_rm_rf(c->dir);
	free(c->dir);
	free(c);
	return 0;
}

/* How long a rogue may keep warren waiting before the test calls it a
 * missed deadline: the 2 s hello deadline, with room for a loaded box. */
#define ROGUE_GUARD_S	20

static void
run_rogue(struct ctx *c, struct h_run *r, const char *script)
{
	char	*argv[] = { "warren", "run", "--json", "--workspace", c->ws,
		    "--replay", c->cas, "--db", c->db, "--worker", c->worker,
		    "--hello-timeout", "2s", "rogue task", NULL };
	const char *missed;

	h_write(c->ws, "rogue-worker", script, 0755);
	h_hang_guard = ROGUE_GUARD_S;
	assert_int_equal(h_warren(r, argv, NULL, NULL, NULL), 0);
	if ((missed = h_deadline_missed(r, "the hello deadline (2 s), or "
	    "the refusal of the rogue's first frame,")) != NULL)
		fail_msg("%s", missed);
}

/* The elapsed_ms of 0.1's done line; -1 if there is none. */
static long
done_ms(const char *out)
{
	const char	*p = out, *e;

	while ((p = strstr(p, "{\"event\":\"done\",\"path\":\"0.1\"")) !=
	    NULL) {
		e = strchr(p, '\n');
		p = strstr(p, "\"elapsed_ms\":");
		if (p != NULL && (e == NULL || p < e))
			return strtol(p + strlen("\"elapsed_ms\":"), NULL, 10);
		if (p == NULL)
			break;
	}
	return -1;
}

/* The run finished, 0.1 died of a protocol violation saying why. */
static void
check_killed(struct ctx *c, struct h_run *r, const char *why)
{
	struct store		*st;
	struct store_event	*ev;
	size_t			 nev, i;
	int64_t			 run;
	char			 err[512];
	int			 found = 0;

	assert_int_equal(r->status, 0);
	assert_true(h_count_lines(r->out, "\"path\":\"0.1\"",
	    "\"end\":\"protocol\"") == 1);
	if (h_count_lines(r->out, "\"event\":\"done\",\"path\":\"0.1\"",
	    why) != 1)
		fail_msg("0.1 was not killed for \"%s\"", why);
	assert_true(h_count_lines(r->out, "\"event\":\"tool_result\"",
	    "subagent 0.1 (explore) was killed for a protocol violation") >= 1);
	assert_true(h_count_lines(r->out, "\"event\":\"result\"", "HANDLED")
	    == 1);
	/* Recorded: a "killed" event for 0.1 in the run's store. */
	st = store_open(c->db, STORE_READ, err, sizeof(err));
	assert_non_null(st);
	assert_int_equal(store_run_latest(st, NULL, &run), 0);
	assert_int_equal(store_events_list(st, run, &ev, &nev), 0);
	for (i = 0; i < nev; i++)
		if (ev[i].path != NULL && strcmp(ev[i].path, "0.1") == 0 &&
		    strcmp(ev[i].type, "killed") == 0 &&
		    strstr(ev[i].detail, why) != NULL)
			found = 1;
	store_events_free(ev, nev);
	store_close(st);
	assert_true(found);
}

/*
 * Killed for why, and by the frame's check, not by the hello deadline
 * that would kill a silent rogue anyway (2 s): a check that stopped
 * working would leave the worker waiting for the rest of the frame.
 */
static void
check_killed_early(struct ctx *c, struct h_run *r, const char *why)
{
	char	whole[256];
	long	ms;

	check_killed(c, r, why);
	/* The whole reason, not a prefix of another. */
	snprintf(whole, sizeof(whole), "\"error\":\"%s\"", why);
	if (h_count_lines(r->out, "\"event\":\"done\",\"path\":\"0.1\"",
	    whole) != 1)
		fail_msg("0.1's reason is not exactly \"%s\"", why);
	ms = done_ms(r->out);
	if (ms < 0 || ms >= 2000)
		fail_msg("0.1 ended after %ld ms, not before its hello "
		    "deadline (2000 ms)", ms);
}

static void
test_hello_never_comes(void **state)
{
	struct ctx	*c = *state;
	struct h_run	 r;

	run_rogue(c, &r, "#!/bin/sh\nexec sleep 300\n");
	check_killed(c, &r, "no hello within 2000 ms");
	h_run_free(&r);
}

static void
test_garbage_frames(void **state)
{
	struct ctx	*c = *state;
	struct h_run	 r;

	/* A frame of 8 bytes that is no msgpack map. */
	run_rogue(c, &r, "#!/bin/sh\nprintf '\\000\\000\\000\\010garbage!' "
	    ">&4\nexec sleep 300\n");
	check_killed_early(c, &r, "bad message: message: expected map, got "
	    "integer");
	h_run_free(&r);
}

static void
test_huge_length(void **state)
{
	struct ctx	*c = *state;
	struct h_run	 r;

	/* A length over the maximum: refused before any allocation. */
	run_rogue(c, &r, "#!/bin/sh\nprintf '\\377\\377\\377\\377xxxx' >&4\n"
	    "exec sleep 300\n");
	check_killed_early(c, &r, "bad frame: length over 16 MiB");
	h_run_free(&r);
}

static void
test_zero_length(void **state)
{
	struct ctx	*c = *state;
	struct h_run	 r;

	/* A length of 0: no message is empty. */
	run_rogue(c, &r, "#!/bin/sh\nprintf '\\000\\000\\000\\000xxxx' >&4\n"
	    "exec sleep 300\n");
	check_killed_early(c, &r, "bad frame: length 0");
	h_run_free(&r);
}

/* A well-formed hello that claims no sandbox layer at all. */
static void
test_hello_lies(void **state)
{
	struct ctx	*c = *state;
	struct h_run	 r;
	struct ipc_msg	 m;
	struct buf	 b;
	char		 err[256], path[PATH_MAX], script[PATH_MAX + 64];
	FILE		*f;

	memset(&m, 0, sizeof(m));
	m.type = IPC_HELLO;
	m.u.hello.version = IPC_PROTOCOL_VERSION;
	m.u.hello.pid = 1;
	buf_init(&b, 0);
	assert_int_equal(ipc_msg_frame(&b, &m, err, sizeof(err)), 0);
	snprintf(path, sizeof(path), "%s/hello.bin", c->ws);
	f = fopen(path, "w");
	assert_non_null(f);
	assert_int_equal(fwrite(buf_head(&b), 1, buf_left(&b), f),
	    buf_left(&b));
	fclose(f);
	buf_free(&b);
	(void)chmod(path, 0644);
	snprintf(script, sizeof(script), "#!/bin/sh\ncat %s >&4\n"
	    "exec sleep 300\n", path);
	run_rogue(c, &r, script);
	check_killed(c, &r, "sandbox short of profile explore");
	h_run_free(&r);
}

/* Append m as a frame to f. */
static void
frame_put(FILE *f, const struct ipc_msg *m)
{
	struct buf	b;
	char		err[256];

	buf_init(&b, 0);
	if (ipc_msg_frame(&b, m, err, sizeof(err)) == -1)
		fail_msg("frame: %s", err);
	assert_int_equal(fwrite(buf_head(&b), 1, buf_left(&b), f),
	    buf_left(&b));
	buf_free(&b);
}

static FILE *
flood_open(struct ctx *c, const char *name, char *path, size_t pathsz)
{
	FILE	*f;

	snprintf(path, pathsz, "%s/%s", c->ws, name);
	assert_non_null(f = fopen(path, "w"));
	(void)chmod(path, 0644);
	return f;
}

/* A hello that claims no layer (the run accepts a weaker sandbox). */
static void
flood_hello(struct ctx *c, char *path, size_t pathsz)
{
	struct ipc_msg	 m;
	FILE		*f = flood_open(c, "hello.bin", path, pathsz);

	memset(&m, 0, sizeof(m));
	m.type = IPC_HELLO;
	m.u.hello.version = IPC_PROTOCOL_VERSION;
	m.u.hello.pid = 1;
	m.u.hello.weaker = 1;
	frame_put(f, &m);
	fclose(f);
}

/* n debug log events of len bytes each (stored, never printed) on f;
 * each counts strlen("log") + len bytes against the store quota. */
static void
events_put(FILE *f, unsigned n, size_t len)
{
	struct ipc_msg	 m;
	char		*text = malloc(len + 1);
	unsigned	 i;

	assert_non_null(text);
	memset(text, 'e', len);
	text[len] = '\0';
	memset(&m, 0, sizeof(m));
	m.type = IPC_EVENT;
	m.u.event.kind = "log";
	m.u.event.text = text;
	m.u.event.has_level = 1;
	m.u.event.level = LOG_LEVEL_DEBUG;
	for (i = 0; i < n; i++)
		frame_put(f, &m);
	free(text);
}

/* n debug log events of len bytes each, in the file events.bin. */
static void
flood_events(struct ctx *c, unsigned n, size_t len, char *path,
    size_t pathsz)
{
	FILE	*f = flood_open(c, "events.bin", path, pathsz);

	events_put(f, n, len);
	fclose(f);
}

/* A done frame with result, in the file done.bin. */
static void
flood_done(struct ctx *c, char *result, char *path, size_t pathsz)
{
	struct ipc_msg	 m;
	FILE		*f = flood_open(c, "done.bin", path, pathsz);

	memset(&m, 0, sizeof(m));
	m.type = IPC_DONE;
	m.u.done.status = IPC_STATUS_COMPLETE;
	m.u.done.result = result;
	frame_put(f, &m);
	fclose(f);
}

/* n MCP calls of a server nobody declared (each refused, and recorded). */
static void
flood_mcp(struct ctx *c, unsigned n, char *path, size_t pathsz)
{
	struct ipc_msg	 m;
	FILE		*f = flood_open(c, "mcp.bin", path, pathsz);
	unsigned	 i;

	memset(&m, 0, sizeof(m));
	m.type = IPC_MCP;
	m.u.mcp.server = "nowhere";
	m.u.mcp.tool = "flood";
	m.u.mcp.args = "{\"pad\": \"mcp flood mcp flood mcp flood\"}";
	for (i = 0; i < n; i++) {
		m.u.mcp.id = i + 1;
		frame_put(f, &m);
	}
	fclose(f);
}

/* n checkpoints of 4 user messages of len bytes, in order. */
static void
flood_checkpoints(struct ctx *c, unsigned n, size_t len, char *path,
    size_t pathsz)
{
	struct ipc_msg	 m;
	struct msg	 v[4];
	FILE		*f = flood_open(c, "ckpt.bin", path, pathsz);
	char		*text = malloc(len + 1);
	unsigned	 i;

	assert_non_null(text);
	memset(text, 'm', len);
	text[len] = '\0';
	memset(v, 0, sizeof(v));
	for (i = 0; i < 4; i++) {
		v[i].role = MSG_USER;
		v[i].text = text;
	}
	memset(&m, 0, sizeof(m));
	m.type = IPC_CHECKPOINT;
	m.u.checkpoint.messages.v = v;
	m.u.checkpoint.messages.n = 4;
	for (i = 0; i < n; i++) {
		m.u.checkpoint.seq = 4 * i;
		frame_put(f, &m);
	}
	fclose(f);
	free(text);
}

/*
 * A root in a worker with --schema whose done claims a complete() the
 * schema refuses (a worker that skipped its own check): the supervisor
 * checks the result itself, a complete() and an auto-complete alike, and
 * the run fails with the errors instead of
 * printing it.
 */
static void
test_done_off_schema(void **state)
{
	/* A complete() and an auto-complete (the worker's claim that its
	 * model never called complete()) alike. */
	static const struct {
		enum ipc_status	 status;
		const char	*said;
	} ends[] = {
		{ IPC_STATUS_COMPLETE, "the worker's complete() result" },
		{ IPC_STATUS_AUTO_COMPLETE, "the worker's result" },
	};
	struct ctx	*c = *state;
	struct h_run	 r;
	struct ipc_msg	 m;
	FILE		*f;
	char		 hello[PATH_MAX], done[PATH_MAX], schema[PATH_MAX];
	char		 script[2 * PATH_MAX + 64], want[128];
	char		*argv[] = { "warren", "run", "--json", "--workspace",
			    c->ws, "--replay", c->cas, "--db", c->db,
			    "--worker", c->worker, "--allow-weaker-sandbox",
			    "--profile", "explore", "--schema", schema,
			    "rogue root", NULL };
	size_t		 i;

	flood_hello(c, hello, sizeof(hello));
	snprintf(schema, sizeof(schema), "%s/s.json", c->dir);
	h_write(c->dir, "s.json", "{\"type\":\"object\",\"required\":[\"n\"],"
	    "\"properties\":{\"n\":{\"type\":\"integer\"}}}", 0644);
	for (i = 0; i < sizeof(ends) / sizeof(ends[0]); i++) {
		f = flood_open(c, "done.bin", done, sizeof(done));
		memset(&m, 0, sizeof(m));
		m.type = IPC_DONE;
		m.u.done.status = ends[i].status;
		m.u.done.result = "{\"n\": \"six\"}";
		m.u.done.reason = "no complete() call";
		frame_put(f, &m);
		fclose(f);
		snprintf(script, sizeof(script), "#!/bin/sh\ncat %s %s >&4\n",
		    hello, done);
		h_write(c->ws, "rogue-worker", script, 0755);
		snprintf(want, sizeof(want), "%s does not match the output "
		    "schema: $.n: expected integer, got string", ends[i].said);
		h_hang_guard = ROGUE_GUARD_S;
		assert_int_equal(h_warren(&r, argv, NULL, NULL, NULL), 0);
		if (r.status != 1 || h_count_lines(r.out, "\"event\":\"done\"",
		    want) != 1 || h_count_lines(r.out,
		    "\"event\":\"result\",\"ok\":false", "\"exit\":1") != 1)
			fail_msg("%s: status %d\n%s\n%s", ends[i].said,
			    r.status, r.out, r.err);
		h_run_free(&r);
	}
}

/*
 * A worker of a profile without a backend that asks for a pass-through
 * (protocol v7 http, docs/backends.md) is killed for it: only a backend's
 * worker has a program whose requests the supervisor carries.
 */
static void
test_http_not_backend(void **state)
{
	struct ctx	*c = *state;
	struct h_run	 r;
	struct ipc_msg	 m;
	FILE		*f;
	char		 hello[PATH_MAX], req[PATH_MAX];
	char		 script[2 * PATH_MAX + 128];
	char		*argv[] = { "warren", "run", "--json", "--workspace",
			    c->ws, "--replay", c->cas, "--db", c->db,
			    "--worker", c->worker, "--allow-weaker-sandbox",
			    "--hello-timeout", "2s", "rogue task", NULL };

	flood_hello(c, hello, sizeof(hello));
	f = flood_open(c, "http.bin", req, sizeof(req));
	memset(&m, 0, sizeof(m));
	m.type = IPC_HTTP;
	m.u.http.id = 1;
	m.u.http.wire = "anthropic";
	m.u.http.method = "POST";
	m.u.http.path = "/v1/messages";
	m.u.http.body = "{}";
	frame_put(f, &m);
	fclose(f);
	/* hello, then wait for start's first bytes, then the request. */
	snprintf(script, sizeof(script), "#!/bin/sh\ncat %s >&4\n"
	    "head -c 4 <&3 >/dev/null\ncat %s >&4\nexec sleep 30\n", hello,
	    req);
	h_write(c->ws, "rogue-worker", script, 0755);
	h_hang_guard = ROGUE_GUARD_S;
	assert_int_equal(h_warren(&r, argv, NULL, NULL, NULL), 0);
	check_killed(c, &r, "sent http, but its profile explore runs no "
	    "backend");
	h_run_free(&r);
}

/* Run a flooding worker: script, with extra environment (the quota).
 * Without a quota it would run into its timeout (20 s), not hang. */
static void
run_flood(struct ctx *c, struct h_run *r, const char *script,
    char *const env[])
{
	char	*argv[] = { "warren", "run", "--json", "--workspace", c->ws,
		    "--replay", c->cas, "--db", c->db, "--worker", c->worker,
		    "--allow-weaker-sandbox", "--agent-timeout", "20s",
		    "flood task", NULL };

	h_write(c->ws, "rogue-worker", script, 0755);
	assert_int_equal(h_warren(r, argv, env, NULL, NULL), 0);
}

/* Rows of kind the store kept for 0.1 in the latest run, and their
 * bytes as the quota counts them (detail and kind). */
static uint64_t
kept_events(struct ctx *c, const char *kind, uint64_t *bytes, int *killed,
    const char *key)
{
	struct store		*st;
	struct store_event	*ev;
	size_t			 nev, i;
	uint64_t		 rows = 0;
	int64_t			 run;
	char			 err[512];

	st = store_open(c->db, STORE_READ, err, sizeof(err));
	if (st == NULL)
		fail_msg("%s", err);
	assert_int_equal(store_run_latest(st, NULL, &run), 0);
	assert_int_equal(store_events_list(st, run, &ev, &nev), 0);
	for (i = 0; i < nev; i++) {
		if (ev[i].path == NULL || strcmp(ev[i].path, "0.1") != 0)
			continue;
		if (strcmp(ev[i].type, "killed") == 0 &&
		    strstr(ev[i].detail, key) != NULL)
			(*killed)++;
		if (strcmp(ev[i].type, kind) == 0) {
			rows++;
			*bytes += strlen(ev[i].detail) + strlen(kind);
		}
	}
	store_events_free(ev, nev);
	store_close(st);
	return rows;
}

/*
 * The run finished; 0.1 ended store_quota, its parent was told, the
 * "killed" event names the key; what the store kept of 0.1 (events of
 * kind, messages of msglen bytes) is at most maxrows rows and maxbytes
 * bytes of text. Returns the rows kept.
 */
static uint64_t
check_quota(struct ctx *c, struct h_run *r, const char *key,
    const char *kind, size_t msglen, uint64_t maxrows, uint64_t maxbytes)
{
	struct store		*st;
	struct store_agent	*ag;
	size_t			 nag, i;
	uint64_t		 rows, bytes = 0;
	int64_t			 run;
	char			 err[512];
	int			 killed = 0;

	assert_int_equal(r->status, 0);
	assert_int_equal(h_count_lines(r->out, "\"path\":\"0.1\"",
	    "\"end\":\"store_quota\""), 1);
	assert_true(h_count_lines(r->out, "\"event\":\"tool_result\"",
	    "subagent 0.1 (explore) was stopped by its store quota") >= 1);
	assert_int_equal(h_count_lines(r->out, "\"event\":\"result\"",
	    "HANDLED"), 1);
	rows = kept_events(c, kind, &bytes, &killed, key);
	assert_int_equal(killed, 1);
	st = store_open(c->db, STORE_READ, err, sizeof(err));
	assert_non_null(st);
	assert_int_equal(store_run_latest(st, NULL, &run), 0);
	assert_int_equal(store_agents_list(st, run, &ag, &nag), 0);
	for (i = 0; i < nag; i++)
		if (strcmp(ag[i].path, "0.1") == 0) {
			assert_int_equal(ag[i].status, STORE_AGENT_FAILED);
			assert_string_equal(ag[i].exit_reason, "store_quota");
			rows += ag[i].nmessages;
			bytes += ag[i].nmessages * msglen;
		}
	store_agents_free(ag, nag);
	store_close(st);
	assert_true(rows > 0);
	assert_true(rows <= maxrows);
	assert_true(bytes <= maxbytes);
	return rows;
}

/* The quota is kept with the run, for its resume. */
static void
check_params(struct ctx *c, const char *want)
{
	struct store		*st;
	struct store_run	 run;
	int64_t			 id;
	char			 err[512];

	st = store_open(c->db, STORE_READ, err, sizeof(err));
	assert_non_null(st);
	assert_int_equal(store_run_latest(st, NULL, &id), 0);
	assert_int_equal(store_run_get(st, id, &run), 0);
	assert_non_null(run.params);
	if (strstr(run.params, want) == NULL)
		fail_msg("params %s lack %s", run.params, want);
	store_run_free(&run);
	store_close(st);
}

/* 5,000 events against a quota of 100 rows. */
static void
test_flood_event_rows(void **state)
{
	struct ctx	*c = *state;
	struct h_run	 r;
	char		 hello[PATH_MAX], evs[PATH_MAX], script[3 * PATH_MAX];
	char		*env[] = { "WARREN_AGENT_STORE_ROWS=100", NULL };

	flood_hello(c, hello, sizeof(hello));
	flood_events(c, 5000, 100, evs, sizeof(evs));
	snprintf(script, sizeof(script), "#!/bin/sh\ncat %s %s >&4\n"
	    "exec sleep 300\n", hello, evs);
	run_flood(c, &r, script, env);
	/* Every row up to the quota is kept, the one past it is not. */
	assert_int_equal(check_quota(c, &r, "agent_store_rows", "log", 0, 100,
	    UINT64_MAX), 100);
	check_params(c, "\"agent_store_rows\":100");
	h_run_free(&r);
}

/* 5,000 MCP calls (of a server it was never offered) against a quota of
 * 100 rows: each call's tool_call event counts. */
static void
test_flood_mcp_rows(void **state)
{
	struct ctx	*c = *state;
	struct h_run	 r;
	char		 hello[PATH_MAX], calls[PATH_MAX], script[3 * PATH_MAX];
	char		*env[] = { "WARREN_AGENT_STORE_ROWS=100", NULL };

	flood_hello(c, hello, sizeof(hello));
	flood_mcp(c, 5000, calls, sizeof(calls));
	snprintf(script, sizeof(script), "#!/bin/sh\ncat %s %s >&4\n"
	    "exec sleep 300\n", hello, calls);
	run_flood(c, &r, script, env);
	assert_int_equal(check_quota(c, &r, "agent_store_rows", "tool_call",
	    0, 100, UINT64_MAX), 100);
	h_run_free(&r);
}

/* 100 events of len bytes of data under the quota env sets, then done: the worker is not stopped and all 100 are kept;
 * the bytes the quota counted for them. */
static uint64_t
flood_at_quota(struct ctx *c, char *env, size_t len, const char *quota)
{
	struct h_run	 r;
	char		 hello[PATH_MAX], evs[PATH_MAX], done[PATH_MAX];
	char		 script[4 * PATH_MAX];
	char		*envv[] = { env, NULL };
	uint64_t	 bytes = 0;
	int		 killed = 0;

	flood_hello(c, hello, sizeof(hello));
	flood_events(c, 100, len, evs, sizeof(evs));
	flood_done(c, "ALL KEPT", done, sizeof(done));
	snprintf(script, sizeof(script), "#!/bin/sh\ncat %s %s %s >&4\n"
	    "exec sleep 300\n", hello, evs, done);
	run_flood(c, &r, script, envv);
	if (r.status != 0 || h_count_lines(r.out, "\"path\":\"0.1\"",
	    "store_quota") != 0 || h_count_lines(r.out, "\"event\":\"result\"",
	    "HANDLED") != 1)
		fail_msg("status %d\n%s\n%s", r.status, r.out, r.err);
	assert_int_equal(kept_events(c, "log", &bytes, &killed, quota), 100);
	assert_int_equal(killed, 0);
	h_run_free(&r);
	return bytes;
}

/* Exactly the quota: 100 events against 100 rows, then done. */
static void
test_flood_rows_at_quota(void **state)
{
	char	env[] = "WARREN_AGENT_STORE_ROWS=100";

	(void)flood_at_quota(*state, env, 100, "agent_store_rows");
}

/* Exactly the byte quota: 100 events of 1,000 bytes as the quota counts
 * them against 100,000 bytes, then done. */
static void
test_flood_bytes_at_quota(void **state)
{
	char	env[] = "WARREN_AGENT_STORE_BYTES=100000";

	/* 1,000 bytes an event as the quota counts them: data and name. */
	assert_int_equal(flood_at_quota(*state, env, 1000 - strlen("log"),
	    "agent_store_bytes"), 100000);
}

/* Past the byte quota, nothing more is kept, also what would still fit:
 * 9,000 bytes of events, one of 2,000 against 10,000 (stopped), then
 * 50 of 10 bytes in the same write: 9 events kept, not 9 + 50. */
static void
test_flood_nothing_after_quota(void **state)
{
	struct ctx	*c = *state;
	struct h_run	 r;
	FILE		*f;
	char		 hello[PATH_MAX], evs[PATH_MAX], script[3 * PATH_MAX];
	char		*env[] = { "WARREN_AGENT_STORE_BYTES=10000", NULL };

	flood_hello(c, hello, sizeof(hello));
	f = flood_open(c, "events.bin", evs, sizeof(evs));
	events_put(f, 9, 1000 - strlen("log"));
	events_put(f, 1, 2000 - strlen("log"));
	events_put(f, 50, 10 - strlen("log"));
	fclose(f);
	snprintf(script, sizeof(script), "#!/bin/sh\ncat %s %s >&4\n"
	    "exec sleep 300\n", hello, evs);
	run_flood(c, &r, script, env);
	assert_int_equal(check_quota(c, &r, "agent_store_bytes", "log", 0, 9,
	    9000), 9);
	h_run_free(&r);
}

/* 40 checkpoints of 4 x 60,000 bytes against a quota of 1 MiB. */
static void
test_flood_checkpoint_bytes(void **state)
{
	struct ctx	*c = *state;
	struct h_run	 r;
	char		 hello[PATH_MAX], ck[PATH_MAX], script[3 * PATH_MAX];
	char		*env[] = { "WARREN_AGENT_STORE_BYTES=1M", NULL };

	flood_hello(c, hello, sizeof(hello));
	flood_checkpoints(c, 40, 60000, ck, sizeof(ck));
	snprintf(script, sizeof(script), "#!/bin/sh\ncat %s %s >&4\n"
	    "exec sleep 300\n", hello, ck);
	run_flood(c, &r, script, env);
	check_quota(c, &r, "agent_store_bytes", "log", 60000, 1000000,
	    1024 * 1024);
	check_params(c, "\"agent_store_bytes\":1048576");
	h_run_free(&r);
}

/*
 * The defaults: a worker writing 4 KB events as fast as its pipe takes
 * them (100 MB, then it waits) is stopped at 64 MiB within seconds (the
 * default agent timeout is 30 minutes) and the run goes on.
 */
static void
test_flood_defaults(void **state)
{
	struct ctx	*c = *state;
	struct h_run	 r;
	char		 hello[PATH_MAX], evs[PATH_MAX], script[3 * PATH_MAX];
	uint64_t	 t0 = clock_mono_ms(), ms;

	flood_hello(c, hello, sizeof(hello));
	flood_events(c, 1000, 4000, evs, sizeof(evs));
	snprintf(script, sizeof(script), "#!/bin/sh\ncat %s >&4\n"
	    "i=0; while [ $i -lt 25 ] && cat %s >&4; do i=$((i+1)); done\n"
	    "exec sleep 300\n", hello, evs);
	run_flood(c, &r, script, NULL);
	ms = clock_mono_ms() - t0;
	print_message("flood with the default quota: stopped after %llu ms\n",
	    (unsigned long long)ms);
	check_quota(c, &r, "agent_store_bytes", "log", 0, 20000,
	    64u * 1024 * 1024);
	assert_true(ms < 20000);
	h_run_free(&r);
}

/* 1 if the (binary) file at path holds the bytes of s. */
static int
file_holds(const char *path, const char *s)
{
	char	buf[65536];
	size_t	n;
	FILE	*f;

	if ((f = fopen(path, "r")) == NULL)
		return 0;
	n = fread(buf, 1, sizeof(buf), f);
	fclose(f);
	return memmem(buf, n, s, strlen(s)) != NULL;
}

/*
 * A worker that says hello, then neither works nor heeds the cancel: the
 * agent timeout (1 s, plus the 2 s the worker has to stop itself) sends
 * the cancel, and the kill after the grace period (2 s) ends it. Each
 * deadline, gone, would leave warren waiting on it for ever: the test
 * gives up after 20 s and names the one that did not fire, by what the
 * worker received (the rogue copies its channel to a file).
 */
static void
test_cancel_ignored(void **state)
{
	struct ctx	*c = *state;
	struct h_run	 r;
	char		 hello[PATH_MAX], got[PATH_MAX], script[3 * PATH_MAX];
	char		*argv[] = { "warren", "run", "--json", "--workspace",
		    c->ws, "--replay", c->cas, "--db", c->db, "--worker",
		    c->worker, "--allow-weaker-sandbox", "--agent-timeout",
		    "1s", "deaf task", NULL };
	const char	*why = "no result after 1000 ms (--agent-timeout)";
	FILE		*f;
	long		 ms;
	int		 cancelled;

	/* The test profile writes in the workspace: the rogue's copy. */
	f = h_cassette_open(c->cas);
	h_turn(f, "0", 1, "[{\"id\":\"a\",\"name\":\"delegate\",\"arguments\":"
	    "\"{\\\"profile\\\":\\\"test\\\",\\\"task\\\":\\\"x\\\"}\"}]");
	h_turn(f, "0", 2, "[{\"id\":\"b\",\"name\":\"complete\",\"arguments\":"
	    "\"{\\\"result\\\":\\\"HANDLED\\\"}\"}]");
	fclose(f);
	flood_hello(c, hello, sizeof(hello));
	snprintf(got, sizeof(got), "%s/to-worker.bin", c->ws);
	snprintf(script, sizeof(script), "#!/bin/sh\ncat %s >&4\n"
	    "cat <&3 >%s &\nexec sleep 300\n", hello, got);
	h_write(c->ws, "rogue-worker", script, 0755);
	h_hang_guard = ROGUE_GUARD_S;
	assert_int_equal(h_warren(&r, argv, NULL, NULL, NULL), 0);
	cancelled = file_holds(got, why);
	if (r.hung)
		fail_msg("%s", h_deadline_missed(&r, cancelled ?
		    "the kill after the grace period (2 s)" :
		    "the agent timeout (1 s + 2 s)"));
	assert_true(cancelled);
	assert_int_equal(r.status, 0);
	if (h_count_lines(r.out, "\"event\":\"done\",\"path\":\"0.1\"",
	    "\"end\":\"timeout\"") != 1)
		fail_msg("0.1 did not end on its timeout");
	assert_true(h_count_lines(r.out, "\"event\":\"result\"", "HANDLED")
	    == 1);
	/* Killed after the timeout and the grace, not before. */
	ms = done_ms(r.out);
	if (ms < 1000 + 2000 + 2000)
		fail_msg("0.1 ended after %ld ms, before its deadlines "
		    "(5000 ms)", ms);
	h_run_free(&r);
}

/* What the spawn server delivered to the test. */
struct answers {
	int			 nspawned;
	void			*cookie[4];
	struct spawn_child	 child[4];
	char			 err[4][256];
	int			 nexits;
	pid_t			 exited[8];
};

static void
on_spawned(void *cookie, const struct spawn_child *c, const char *err,
    void *arg)
{
	struct answers	*a = arg;
	int		 i = a->nspawned++;

	assert_true(i < 4);
	a->cookie[i] = cookie;
	if (c != NULL)
		a->child[i] = *c;
	else {
		a->child[i].pid = -1;
		snprintf(a->err[i], sizeof(a->err[i]), "%s", err);
	}
}

static void
on_exited(pid_t pid, int code, int status, void *arg)
{
	struct answers	*a = arg;

	(void)code;
	(void)status;
	assert_true(a->nexits < 8);
	a->exited[a->nexits++] = pid;
}

static const struct spawnd_client_ops test_ops = { on_spawned, on_exited };

/* Read answers until spawned and exits reach the counts (hang guard 60 s). */
static void
spawnd_wait(struct spawnd_client *d, struct answers *a, int nspawned,
    int nexits)
{
	struct pollfd	pfd;
	uint64_t	end = clock_mono_ms() + 60000;

	while (a->nspawned < nspawned || a->nexits < nexits) {
		if (clock_mono_ms() >= end)
			fail_msg("waited 60 s for %d spawned and %d exits from "
			    "the spawn server: %d and %d came", nspawned, nexits,
			    a->nspawned, a->nexits);
		pfd.fd = spawnd_client_fd(d);
		pfd.events = POLLIN;
		(void)poll(&pfd, 1, 1000);
		assert_int_equal(spawnd_client_read(d, &test_ops, a), 0);
	}
}

/* Read until the server's end of the channel is gone (hang guard 60 s). */
static void
spawnd_wait_gone(struct spawnd_client *d, struct answers *a)
{
	struct pollfd	pfd;
	uint64_t	end = clock_mono_ms() + 60000;

	for (;;) {
		if (clock_mono_ms() >= end)
			fail_msg("waited 60 s for the spawn server to close "
			    "its end of the channel");
		pfd.fd = spawnd_client_fd(d);
		pfd.events = POLLIN;
		(void)poll(&pfd, 1, 1000);
		if (spawnd_client_read(d, &test_ops, a) == -1)
			return;
	}
}

static void
test_spawnd_async(void **state)
{
	struct ctx		*c = *state;
	struct sandbox_policy	 pol, bad;
	struct sandbox_error	 e;
	struct spawn_req	 req;
	struct answers		 a;
	struct spawnd_client		*d;
	const char		*bin = getenv("WARREN_WORKER_BIN");
	char			*argv[] = { "warren-worker", "--path", "0.1",
				    "--depth", "1", "--profile", "explore", NULL };
	char			**env = spawn_env(), **big, err[256];
	int			 one, two, three, i, found;
	uint32_t		 id2;

	assert_non_null(bin);
	memset(&e, 0, sizeof(e));
	assert_int_equal(sandbox_policy_init(&pol, "explore", c->ws, 0, 0,
	    &e), 0);
	bad = pol;
	strlcpy(bad.workspace, "not/absolute", sizeof(bad.workspace));
	memset(&req, 0, sizeof(req));
	req.bin = bin;
	req.argv = argv;
	req.envp = env;
	req.policy = &pol;
	assert_non_null(d = spawnd_client_start(err, sizeof(err)));
	/* Three requests before any answer: nothing blocks. */
	assert_int_not_equal(spawnd_client_request(d, &req, &one, err,
	    sizeof(err)), 0);
	assert_int_not_equal(id2 = spawnd_client_request(d, &req, &two, err,
	    sizeof(err)), 0);
	req.policy = &bad;
	assert_int_not_equal(spawnd_client_request(d, &req, &three, err,
	    sizeof(err)), 0);
	/* Nobody waits for the second any more: killed when it comes. */
	spawnd_client_forget(d, id2);
	memset(&a, 0, sizeof(a));
	spawnd_wait(d, &a, 2, 1);
	assert_int_equal(a.nspawned, 2);
	assert_ptr_equal(a.cookie[0], &one);
	assert_true(a.child[0].pid > 0);
	assert_true(a.child[0].remote);
	assert_ptr_equal(a.cookie[1], &three);
	assert_int_equal(a.child[1].pid, -1);
	assert_non_null(strstr(a.err[1], "workspace must be absolute"));
	/* The forgotten worker's exit, and never the first's yet. */
	for (i = 0; i < a.nexits; i++)
		assert_int_not_equal(a.exited[i], a.child[0].pid);
	/* The first ends when its channel closes (no start will come). */
	spawn_release(&a.child[0]);
	spawnd_wait(d, &a, 2, 2);
	for (i = found = 0; i < a.nexits; i++)
		found += a.exited[i] == a.child[0].pid;
	assert_int_equal(found, 1);
	assert_int_equal(spawnd_client_full(d), 0);
	/* Over the server's bound for argv and environment: refused here. */
	big = calloc(41, sizeof(*big));
	assert_non_null(big);
	for (i = 0; i < 40; i++) {
		assert_non_null(big[i] = malloc(256));
		memset(big[i], 'x', 255);
		big[i][255] = '\0';
	}
	req.envp = big;
	req.policy = &pol;
	assert_int_equal(spawnd_client_request(d, &req, &one, err,
	    sizeof(err)), 0);
	assert_non_null(strstr(err, "too large"));
	for (i = 0; i < 40; i++)
		free(big[i]);
	free(big);
	/* A request the server never answers (stopped, then killed): the
	 * channel's end says so, and the request's cookie comes back once. */
	req.envp = env;
	assert_int_equal(kill(spawnd_client_pid(d), SIGSTOP), 0);
	assert_int_not_equal(spawnd_client_request(d, &req, &two, err,
	    sizeof(err)), 0);
	assert_int_equal(kill(spawnd_client_pid(d), SIGKILL), 0);
	spawnd_wait_gone(d, &a);
	assert_int_equal(a.nspawned, 2);
	assert_ptr_equal(spawnd_client_orphan(d), &two);
	assert_null(spawnd_client_orphan(d));
	assert_int_equal(spawnd_client_full(d), 0);
	spawnd_client_stop(d);
	spawn_env_free(env);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_http_not_backend, setup,
		    teardown),
		cmocka_unit_test_setup_teardown(test_hello_never_comes, setup,
		    teardown),
		cmocka_unit_test_setup_teardown(test_garbage_frames, setup,
		    teardown),
		cmocka_unit_test_setup_teardown(test_huge_length, setup,
		    teardown),
		cmocka_unit_test_setup_teardown(test_zero_length, setup,
		    teardown),
		cmocka_unit_test_setup_teardown(test_hello_lies, setup,
		    teardown),
		cmocka_unit_test_setup_teardown(test_flood_rows_at_quota, setup,
		    teardown),
		cmocka_unit_test_setup_teardown(test_flood_mcp_rows, setup,
		    teardown),
		cmocka_unit_test_setup_teardown(test_flood_event_rows, setup,
		    teardown),
		cmocka_unit_test_setup_teardown(test_flood_bytes_at_quota,
		    setup, teardown),
		cmocka_unit_test_setup_teardown(test_flood_nothing_after_quota,
		    setup, teardown),
		cmocka_unit_test_setup_teardown(test_flood_checkpoint_bytes,
		    setup, teardown),
		cmocka_unit_test_setup_teardown(test_flood_defaults, setup,
		    teardown),
		cmocka_unit_test_setup_teardown(test_cancel_ignored, setup,
		    teardown),
		cmocka_unit_test_setup_teardown(test_done_off_schema, setup,
		    teardown),
		cmocka_unit_test_setup_teardown(test_spawnd_async, setup,
		    teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}

/*
 * The supervisor's checks on what a worker claims and does, each against
 * a rogue worker that breaks it: a script given with --worker, started
 * exactly as warren-worker is, that writes frames the test prepared and
 * reads what the supervisor sends (its fd 3 copied to a file). A
 * checkpoint that resends or skips messages, a done that claims tokens
 * never spent, a worker that never reads its channel or floods its
 * stderr, a done that crosses a cancel or a timeout, a worker that
 * ignores its cancel, a spawn from a profile without delegate, a child
 * that outlives its parent, the death of the spawn server, a summary the
 * LLM fails to write, a worker out of memory (its allocation failed, or
 * its memory group's OOM killer struck). docs/supervisor.md, "Each check
 * and the test that fails without it", lists them.
 *
 * Every run has a watchdog of a few seconds: with a check removed the
 * test fails in seconds, it does not hang until ctest's timeout.
 */
#include <sys/stat.h>
#include <sys/wait.h>

#include <errno.h>
#include <limits.h>
#include <setjmp.h>
#include <signal.h>
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
#include "common/msg.h"
#include "ipc/ipc.h"
#include "sandbox/sandbox.h"
#include "store/store.h"
#include "tests/e2e/harness.h"

struct ctx {
	char	*dir;
	char	 ws[1024];
	char	 cas[PATH_MAX];
	char	 db[PATH_MAX];
	char	 worker[PATH_MAX];
	FILE	*f;		/* the cassette, until warren runs */
	char	*const *env;	/* extra environment for warren, or NULL */
};

/* Bounds a run: warren killed after limit_s; hook, if set, runs meanwhile. */
struct watch {
	int	 limit_s;
	int	 fired;		/* warren had to be killed */
	uint64_t ms;		/* how long warren ran */
	int	(*hook)(pid_t, void *);	/* 1: done with it */
	void	*arg;
};

#define DONE_AS(out, path, end) h_count_lines(out, "\"path\":\"" path "\"", \
	"\"end\":\"" end "\"")
#define SPAWNED(out, path) h_count_lines(out, "\"event\":\"spawned\"", \
	"\"path\":\"" path "\"")

static int
setup(void **state)
{
	struct ctx	*c = calloc(1, sizeof(*c));

	assert_non_null(c);
	c->dir = h_tmpdir();
	snprintf(c->ws, sizeof(c->ws), "%s/ws", c->dir);
	snprintf(c->cas, sizeof(c->cas), "%s/s.cassette", c->dir);
	snprintf(c->db, sizeof(c->db), "%s/warren.db", c->dir);
	/* In the workspace: the only place a worker's private /tmp shows. */
	snprintf(c->worker, sizeof(c->worker), "%s/rogue-worker", c->ws);
	h_write(c->ws, "a.txt", "a\n", 0);
	c->f = h_cassette_open(c->cas);
	h_turn(c->f, "0", 1, h_calls1("a", "delegate",
	    "{\"profile\":\"general\",\"task\":\"x\"}"));
	h_turn(c->f, "0", 2, h_calls1("b", "complete",
	    "{\"result\":\"HANDLED\"}"));
	*state = c;
	return 0;
}

static int
teardown(void **state)
{
	struct ctx	*c = *state;

	if (c->f != NULL)
		fclose(c->f);
	h_rm_rf(c->dir);
	free(c->dir);
	free(c);
	return 0;
}

/* --- frames the rogue writes ------------------------------------------ */

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

/* ws/name, opened for frames; its path in path. */
static FILE *
frames_open(struct ctx *c, const char *name, char *path, size_t pathsz)
{
	FILE	*f;

	snprintf(path, pathsz, "%s/%s", c->ws, name);
	assert_non_null(f = fopen(path, "w"));
	(void)chmod(path, 0644);
	return f;
}

/* A hello that claims no layer (the run accepts a weaker sandbox). */
static void
put_hello(FILE *f)
{
	struct ipc_msg	m;

	memset(&m, 0, sizeof(m));
	m.type = IPC_HELLO;
	m.u.hello.version = IPC_PROTOCOL_VERSION;
	m.u.hello.pid = 1;
	m.u.hello.weaker = 1;
	frame_put(f, &m);
}

/* ws/name: a hello alone. */
static void
write_hello(struct ctx *c, const char *name)
{
	char	path[PATH_MAX];
	FILE	*f = frames_open(c, name, path, sizeof(path));

	put_hello(f);
	fclose(f);
}

static void
put_done(FILE *f, const char *result, uint64_t in, uint64_t out)
{
	struct ipc_msg	m;

	memset(&m, 0, sizeof(m));
	m.type = IPC_DONE;
	m.u.done.status = IPC_STATUS_COMPLETE;
	m.u.done.result = (char *)(uintptr_t)result;
	m.u.done.usage.input = in;
	m.u.done.usage.output = out;
	m.u.done.iterations = 1;
	frame_put(f, &m);
}

/* ws/name: a done(complete, result) alone. */
static void
write_done(struct ctx *c, const char *name, const char *result)
{
	char	path[PATH_MAX];
	FILE	*f = frames_open(c, name, path, sizeof(path));

	put_done(f, result, 0, 0);
	fclose(f);
}

static void
put_spawn(FILE *f, uint32_t id, const char *profile, const char *task)
{
	struct ipc_msg	m;

	memset(&m, 0, sizeof(m));
	m.type = IPC_SPAWN;
	m.u.spawn.id = id;
	m.u.spawn.profile = (char *)(uintptr_t)profile;
	m.u.spawn.task = (char *)(uintptr_t)task;
	m.u.spawn.call_id = "";
	frame_put(f, &m);
}

static void
put_llm(FILE *f, uint32_t id, uint32_t step)
{
	struct ipc_msg	m;
	struct msg	u;

	memset(&u, 0, sizeof(u));
	u.role = MSG_USER;
	u.text = "go";
	memset(&m, 0, sizeof(m));
	m.type = IPC_LLM;
	m.u.llm.id = id;
	m.u.llm.step = step;
	m.u.llm.purpose = IPC_PURPOSE_TURN;
	m.u.llm.messages.v = &u;
	m.u.llm.messages.n = 1;
	frame_put(f, &m);
}

/* A checkpoint of the user messages texts[0..n-1] from index seq on. */
static void
put_checkpoint(FILE *f, uint32_t seq, const char *const *texts, size_t n)
{
	struct ipc_msg	m;
	struct msg	v[8];
	size_t		i;

	assert_true(n <= 8);
	memset(v, 0, sizeof(v));
	for (i = 0; i < n; i++) {
		v[i].role = MSG_USER;
		v[i].text = (char *)(uintptr_t)texts[i];
	}
	memset(&m, 0, sizeof(m));
	m.type = IPC_CHECKPOINT;
	m.u.checkpoint.seq = seq;
	m.u.checkpoint.messages.v = v;
	m.u.checkpoint.messages.n = n;
	frame_put(f, &m);
}

/* --- running warren ----------------------------------------------------- */

static void
watchdog(pid_t pid, void *arg)
{
	struct watch	*w = arg;
	siginfo_t	 si;
	uint64_t	 t0 = clock_mono_ms();
	int		 hook_done = w->hook == NULL;

	for (;;) {
		memset(&si, 0, sizeof(si));
		/* WNOWAIT: h_warren reaps it. */
		if (waitid(P_PID, (id_t)pid, &si, WEXITED | WNOHANG |
		    WNOWAIT) == 0 && si.si_pid == pid)
			break;
		if (!hook_done)
			hook_done = w->hook(pid, w->arg);
		if (clock_mono_ms() - t0 > (uint64_t)w->limit_s * 1000) {
			fprintf(stderr, "watchdog: warren still runs after "
			    "%d s: killing it\n", w->limit_s);
			w->fired = 1;
			(void)kill(pid, SIGKILL);
			break;
		}
		usleep(10000);
	}
	w->ms = clock_mono_ms() - t0;
}

/*
 * warren run -T --json --in-place with the rogue worker script, a weaker
 * sandbox accepted (the rogue's hello claims none), opts added, bounded
 * by w.
 */
static void
run_guard(struct ctx *c, struct h_run *r, const char *script,
    const char *const *opts, struct watch *w)
{
	char	*argv[32];
	int	 n = 0, i;

	if (c->f != NULL)
		fclose(c->f);
	c->f = NULL;
	h_write(c->ws, "rogue-worker", script, 0755);
	argv[n++] = "warren";
	argv[n++] = "run";
	argv[n++] = "--json";
	argv[n++] = "-T";
	argv[n++] = "--workspace";
	argv[n++] = c->ws;
	argv[n++] = "--replay";
	argv[n++] = c->cas;
	argv[n++] = "--db";
	argv[n++] = c->db;
	argv[n++] = "--worker";
	argv[n++] = c->worker;
	argv[n++] = "--allow-weaker-sandbox";
	argv[n++] = "--in-place";	/* what the rogues write is read back */
	for (i = 0; opts != NULL && opts[i] != NULL && n < 28; i++)
		argv[n++] = (char *)(uintptr_t)opts[i];
	argv[n++] = "guard task";
	argv[n] = NULL;
	assert_int_equal(h_warren(r, argv, c->env, watchdog, w), 0);
	print_message("warren ran %llu ms\n", (unsigned long long)w->ms);
	if (w->fired)
		fail_msg("warren did not end within %d s (a check let the "
		    "rogue worker go on)", w->limit_s);
}

/* --- what the store kept ------------------------------------------------- */

/* The store's row of the agent at path in the latest run (found: 1):
 * its counts, status and summary (the caller frees it). */
static int
agent_row(struct ctx *c, const char *path, struct store_agent *out)
{
	struct store		*st;
	struct store_agent	*ag;
	size_t			 nag, i;
	int64_t			 run;
	char			 err[512];
	int			 found = 0;

	st = store_open(c->db, STORE_READ, err, sizeof(err));
	assert_non_null(st);
	assert_int_equal(store_run_latest(st, NULL, &run), 0);
	assert_int_equal(store_agents_list(st, run, &ag, &nag), 0);
	for (i = 0; i < nag; i++)
		if (strcmp(ag[i].path, path) == 0) {
			out->nmessages = ag[i].nmessages;
			out->status = ag[i].status;
			out->summary = ag[i].summary != NULL ?
			    strdup(ag[i].summary) : NULL;
			found = 1;
		}
	store_agents_free(ag, nag);
	store_close(st);
	return found;
}

/* How many events of type for path hold text in their detail. */
static int
events_of(struct ctx *c, const char *path, const char *type,
    const char *text)
{
	struct store		*st;
	struct store_event	*ev;
	size_t			 nev, i;
	int64_t			 run;
	char			 err[512];
	int			 n = 0;

	st = store_open(c->db, STORE_READ, err, sizeof(err));
	assert_non_null(st);
	assert_int_equal(store_run_latest(st, NULL, &run), 0);
	assert_int_equal(store_events_list(st, run, &ev, &nev), 0);
	for (i = 0; i < nev; i++)
		if (ev[i].path != NULL && strcmp(ev[i].path, path) == 0 &&
		    strcmp(ev[i].type, type) == 0 && (text == NULL ||
		    (ev[i].detail != NULL && strstr(ev[i].detail, text) != NULL)))
			n++;
	store_events_free(ev, nev);
	store_close(st);
	return n;
}

/* The run went on after 0.1: the orchestrator's answer is the result. */
static void
check_handled(const struct h_run *r)
{
	if (r->status != 0 || h_count_lines(r->out, "\"event\":\"result\"",
	    "HANDLED") != 1)
		fail_msg("the run did not finish with HANDLED: status %d",
		    r->status);
}

/* A rogue script: for agent path p1 do s1, for p2 s2 (may be NULL). */
static void
rogue_script(char *buf, size_t sz, const char *p1, const char *s1,
    const char *p2, const char *s2)
{
	int	n;

	n = snprintf(buf, sz, "#!/bin/sh\n# argv: --path P --depth D "
	    "--profile X\ncase \"$2\" in\n%s)\n%s\n;;\n", p1, s1);
	assert_true(n > 0 && (size_t)n < sz);
	if (p2 != NULL)
		n += snprintf(buf + n, sz - (size_t)n, "%s)\n%s\n;;\n", p2, s2);
	assert_true((size_t)n < sz);
	n += snprintf(buf + n, sz - (size_t)n, "esac\nexec sleep 300\n");
	assert_true((size_t)n < sz);
}

#define SH_WAIT_LEN	(2 * PATH_MAX + 256)

/*
 * Shell: copy what the supervisor sends (fd 3) to file, then wait until
 * it holds text (at most about 20 s).
 */
static void
sh_wait_for(char *buf, size_t sz, const char *file, const char *text)
{
	snprintf(buf, sz, "cat <&3 >%s &\ni=0\nwhile [ $i -lt 400 ] && "
	    "! grep -qa '%s' %s; do sleep 0.05; i=$((i+1)); done\n",
	    file, text, file);
}

/* --- the checks ------------------------------------------------------------ */

/*
 * Checkpoints arrive in order: a resent prefix is skipped (M1, M2 come
 * twice, kept once), a gap is a lie (seq 9 when 3 are kept) and kills the
 * worker. proc_msg.c:proc_do_checkpoint.
 */
static void
test_checkpoint_order(void **state)
{
	static const char *const opts[] = { "--agent-timeout", "1s", NULL };
	static const char *const two[] = { "M1", "M2" };
	static const char *const three[] = { "M1", "M2", "M3" };
	static const char *const gap[] = { "M6" };
	struct ctx		*c = *state;
	struct h_run		 r;
	struct store_agent	 a;
	struct watch		 w = { 30, 0, 0, NULL, NULL };
	char			 fr[PATH_MAX], cmd[PATH_MAX + 64], script[8192];
	FILE			*f = frames_open(c, "ckpt.bin", fr, sizeof(fr));

	put_hello(f);
	put_checkpoint(f, 0, two, 2);
	put_checkpoint(f, 0, three, 3);
	put_checkpoint(f, 9, gap, 1);
	fclose(f);
	snprintf(cmd, sizeof(cmd), "cat %s >&4", fr);
	rogue_script(script, sizeof(script), "0.1", cmd, NULL, NULL);
	run_guard(c, &r, script, opts, &w);
	check_handled(&r);
	if (DONE_AS(r.out, "0.1", "protocol") != 1 ||
	    events_of(c, "0.1", "killed", "checkpoint skips messages") != 1)
		fail_msg("the checkpoint with a gap did not kill 0.1");
	memset(&a, 0, sizeof(a));
	assert_int_equal(agent_row(c, "0.1", &a), 1);
	if (a.nmessages != 3)
		fail_msg("0.1 has %zu messages kept, want 3 (M1, M2 resent "
		    "once, M3)", (size_t)a.nmessages);
	h_run_free(&r);
}

/*
 * A child's usage, as its parent hears it (spawn_ok), is what the broker
 * counted of its LLM turns (one turn: 100 + 10), not what its done
 * claims (a million each). proc_msg.c:proc_do_done.
 */
static void
test_claimed_usage(void **state)
{
	struct ctx	*c = *state;
	struct h_run	 r;
	struct watch	 w = { 30, 0, 0, NULL, NULL };
	struct ipc_msg	 m;
	char		 p1[PATH_MAX], p2[PATH_MAX], in[PATH_MAX], err[256];
	char		 wait1[SH_WAIT_LEN], wait2[SH_WAIT_LEN];
	char		 s1[SH_WAIT_LEN + 2 * PATH_MAX + 64];
	char		 s2[SH_WAIT_LEN + 2 * PATH_MAX + 64];
	char		 script[3 * SH_WAIT_LEN + 4 * PATH_MAX + 512], *data;
	FILE		*f;
	size_t		 len, off, body;
	int		 found = 0;

	fprintf(c->f, "{\"agent\":\"0.1.1\",\"step\":1,\"purpose\":\"turn\","
	    "\"reply\":{\"stop\":\"end\",\"usage\":{\"input\":100,"
	    "\"output\":10},\"text\":\"CHILD-LLM\"}}\n");
	f = frames_open(c, "parent.bin", p1, sizeof(p1));
	put_hello(f);
	put_spawn(f, 7, "general", "count");
	fclose(f);
	f = frames_open(c, "child.bin", p2, sizeof(p2));
	put_hello(f);
	put_llm(f, 1, 1);
	fclose(f);
	write_done(c, "parent-done.bin", "PARENT-DONE");
	f = frames_open(c, "child-done.bin", in, sizeof(in));
	put_done(f, "CHILD-DONE", 1000000, 1000000);
	fclose(f);
	snprintf(in, sizeof(in), "%s/in-0.1.bin", c->ws);
	sh_wait_for(wait1, sizeof(wait1), in, "CHILD-DONE");
	/* the parent: hello, spawn, then its done once the child's answer is in */
	snprintf(s1, sizeof(s1), "cat %s >&4\n%scat %s/parent-done.bin >&4",
	    p1, wait1, c->ws);
	snprintf(in, sizeof(in), "%s/in-0.1.1.bin", c->ws);
	sh_wait_for(wait2, sizeof(wait2), in, "CHILD-LLM");
	/* the child: hello, an LLM turn, then its done once answered */
	snprintf(s2, sizeof(s2), "cat %s >&4\n%scat %s/child-done.bin >&4",
	    p2, wait2, c->ws);
	rogue_script(script, sizeof(script), "0.1", s1, "0.1.1", s2);
	run_guard(c, &r, script, NULL, &w);
	check_handled(&r);
	assert_int_equal(DONE_AS(r.out, "0.1.1", "complete"), 1);
	/* What the parent read: find the spawn_ok. */
	snprintf(in, sizeof(in), "%s/in-0.1.bin", c->ws);
	data = h_read_file(in);
	assert_non_null(f = fopen(in, "r"));
	fseek(f, 0, SEEK_END);
	len = (size_t)ftell(f);
	fclose(f);
	for (off = 0; off < len; off += IPC_HDR_LEN + body) {
		assert_int_equal(ipc_frame_check((unsigned char *)data + off,
		    len - off, &body), 1);
		memset(&m, 0, sizeof(m));
		if (ipc_msg_decode(data + off + IPC_HDR_LEN, body, &m, err,
		    sizeof(err)) == -1)
			fail_msg("frame at %zu: %s", off, err);
		if (m.type == IPC_SPAWN_OK) {
			found++;
			assert_string_equal(m.u.spawn_ok.result, "CHILD-DONE");
			if (m.u.spawn_ok.usage.input != 100 ||
			    m.u.spawn_ok.usage.output != 10)
				fail_msg("the parent heard usage %llu + %llu, "
				    "want the broker's 100 + 10",
				    (unsigned long long)
				    m.u.spawn_ok.usage.input,
				    (unsigned long long)
				    m.u.spawn_ok.usage.output);
		}
		ipc_msg_free(&m);
	}
	free(data);
	assert_int_equal(found, 1);
	h_run_free(&r);
}

/*
 * A worker that never reads its channel while its answers pile up (18
 * LLM answers of 4 MB) is killed when its output queue passes its cap
 * (64 MiB), for the protocol, and the supervisor goes on. The answer that
 * overflows is not taken for one too large for the protocol (that would
 * be an LLM error for the agent, not the worker's fault).
 * proc.c:proc_send_answer, ipc/peer.c's queue cap.
 */
static void
test_queue_cap(void **state)
{
	static const char *const opts[] = { "--agent-timeout", "10s", NULL };
	struct ctx	*c = *state;
	struct h_run	 r;
	struct watch	 w = { 60, 0, 0, NULL, NULL };
	char		 fr[PATH_MAX], cmd[PATH_MAX + 64], script[8192];
	char		*big;
	size_t		 n = 4190000;
	uint32_t	 i;
	FILE		*f;

	assert_non_null(big = malloc(n + 1));
	memset(big, 'q', n);
	big[n] = '\0';
	fprintf(c->f, "{\"agent\":\"0.1\",\"step\":1,\"purpose\":\"turn\","
	    "\"reply\":{\"stop\":\"end\",\"usage\":{\"input\":1,"
	    "\"output\":1},\"text\":\"%s\"}}\n", big);
	free(big);
	f = frames_open(c, "asks.bin", fr, sizeof(fr));
	put_hello(f);
	for (i = 1; i <= 18; i++)
		put_llm(f, i, 1);
	fclose(f);
	snprintf(cmd, sizeof(cmd), "cat %s >&4", fr);
	rogue_script(script, sizeof(script), "0.1", cmd, NULL, NULL);
	run_guard(c, &r, script, opts, &w);
	check_handled(&r);
	if (DONE_AS(r.out, "0.1", "protocol") != 1 ||
	    events_of(c, "0.1", "killed", "does not fit the output queue")
	    != 1)
		fail_msg("0.1 was not killed for its full output queue");
	if (events_of(c, "0.1", "llm_error", NULL) != 0)
		fail_msg("the full queue was taken for an answer too large");
	h_run_free(&r);
}

/*
 * A worker's stderr is logged up to 64 KiB (PROC_ERRMAX), then no more:
 * a rogue writes 1 MB of lines. proc.c:proc_err_line.
 */
static void
test_stderr_cap(void **state)
{
	struct ctx	*c = *state;
	struct h_run	 r;
	struct watch	 w = { 30, 0, 0, NULL, NULL };
	char		 fr[PATH_MAX], cmd[2 * PATH_MAX + 512], script[8192];
	FILE		*f;
	const char	*p, *nl;
	size_t		 logged = 0;
	int		 lines = 0;

	f = frames_open(c, "hello.bin", fr, sizeof(fr));
	put_hello(f);
	fclose(f);
	write_done(c, "done.bin", "NOISY-DONE");
	/* 4,000 lines of 250 bytes */
	snprintf(cmd, sizeof(cmd), "cat %s >&4\nl=ERRLINE:xy\n"
	    "l=$l$l$l$l$l\nl=$l$l$l$l$l\ni=0\n"
	    "while [ $i -lt 4000 ]; do echo \"$l\"; i=$((i+1)); done >&2\n"
	    "cat %s/done.bin >&4", fr, c->ws);
	rogue_script(script, sizeof(script), "0.1", cmd, NULL, NULL);
	run_guard(c, &r, script, NULL, &w);
	check_handled(&r);
	assert_int_equal(DONE_AS(r.out, "0.1", "complete"), 1);
	for (p = r.err; (p = strstr(p, "agent 0.1 stderr: ")) != NULL;
	    p = nl) {
		p += strlen("agent 0.1 stderr: ");
		nl = strchr(p, '\n');
		if (nl == NULL)
			nl = p + strlen(p);
		logged += (size_t)(nl - p);
		lines++;
	}
	print_message("stderr logged: %d lines, %zu bytes\n", lines, logged);
	/* The first lines are there, and at most 64 KiB of them (and the
	   line that crossed it). */
	assert_true(lines > 100);
	if (logged > 64 * 1024 + 250)
		fail_msg("%zu bytes of 0.1's stderr logged (%d lines), the cap "
		    "is 64 KiB", logged, lines);
	h_run_free(&r);
}

/*
 * A done that crosses the cancel of a timeout: the rogue answers the
 * cancel (it reads "no result after") with done(complete); it ended by
 * its timeout, and that is what its parent hears.
 * proc_msg.c:proc_do_done (kill_end wins).
 */
static void
test_done_after_timeout(void **state)
{
	static const char *const opts[] = { "--agent-timeout", "1s", NULL };
	struct ctx	*c = *state;
	struct h_run	 r;
	struct watch	 w = { 30, 0, 0, NULL, NULL };
	char		 fr[PATH_MAX], in[PATH_MAX], wait[SH_WAIT_LEN];
	char		 cmd[SH_WAIT_LEN + 3 * PATH_MAX], script[16384];
	FILE		*f;

	f = frames_open(c, "hello.bin", fr, sizeof(fr));
	put_hello(f);
	fclose(f);
	write_done(c, "done.bin", "LATE-RESULT");
	snprintf(in, sizeof(in), "%s/in.bin", c->ws);
	sh_wait_for(wait, sizeof(wait), in, "no result after");
	snprintf(cmd, sizeof(cmd), "cat %s >&4\n%scat %s/done.bin >&4", fr,
	    wait, c->ws);
	rogue_script(script, sizeof(script), "0.1", cmd, NULL, NULL);
	run_guard(c, &r, script, opts, &w);
	check_handled(&r);
	/* The done came after the cancel. */
	assert_int_equal(h_count_lines(r.err, "ipc 0.1 <- cancel", NULL), 1);
	assert_int_equal(h_count_lines(r.err, "ipc 0.1 -> done",
	    "LATE-RESULT"), 1);
	assert_true(strstr(r.err, "ipc 0.1 <- cancel") <
	    strstr(r.err, "ipc 0.1 -> done"));
	if (DONE_AS(r.out, "0.1", "timeout") != 1 ||
	    h_count_lines(r.out, "\"event\":\"tool_result\"",
	    "subagent 0.1 (general) timed out") < 1)
		fail_msg("a done after the timeout's cancel was taken as the "
		    "result");
	h_run_free(&r);
}

/*
 * A finished parent cancels its children: 0.1 spawns 0.1.1, waits for it
 * to be up, and finishes. 0.1.1 is cancelled because its parent finished
 * (not later, when the run does), and its done, which crosses that
 * cancel, does not make it complete. run.c:run_cancel_children,
 * proc_msg.c:proc_do_done.
 */
static void
test_parent_done_cancels_child(void **state)
{
	static const char *const opts[] = { "--agent-timeout", "5s", NULL };
	struct ctx	*c = *state;
	struct h_run	 r;
	struct watch	 w = { 30, 0, 0, NULL, NULL };
	char		 p1[PATH_MAX], up[PATH_MAX], in[PATH_MAX];
	char		 wait[SH_WAIT_LEN], s1[4 * PATH_MAX + 256];
	char		 s2[SH_WAIT_LEN + 4 * PATH_MAX];
	char		 script[3 * SH_WAIT_LEN + 8 * PATH_MAX];
	FILE		*f;

	f = frames_open(c, "parent.bin", p1, sizeof(p1));
	put_hello(f);
	put_spawn(f, 1, "general", "outlive");
	fclose(f);
	write_hello(c, "child.bin");
	write_done(c, "parent-done.bin", "PARENT-DONE");
	write_done(c, "child-done.bin", "CHILD-LATE");
	snprintf(up, sizeof(up), "%s/child.up", c->ws);
	snprintf(s1, sizeof(s1), "cat %s >&4\ni=0\nwhile [ $i -lt 400 ] && "
	    "[ ! -e %s ]; do sleep 0.05; i=$((i+1)); done\n"
	    "cat %s/parent-done.bin >&4", p1, up, c->ws);
	snprintf(in, sizeof(in), "%s/in-0.1.1.bin", c->ws);
	/* "its parent finished", or "the run finished" without the check */
	sh_wait_for(wait, sizeof(wait), in, "finished");
	snprintf(s2, sizeof(s2), "cat %s/child.bin >&4\ntouch %s\n%s"
	    "cat %s/child-done.bin >&4", c->ws, up, wait, c->ws);
	rogue_script(script, sizeof(script), "0.1", s1, "0.1.1", s2);
	run_guard(c, &r, script, opts, &w);
	check_handled(&r);
	assert_int_equal(DONE_AS(r.out, "0.1", "complete"), 1);
	if (DONE_AS(r.out, "0.1.1", "cancelled") != 1)
		fail_msg("0.1.1 did not end cancelled (its done crossed the "
		    "cancel)");
	if (h_count_lines(r.out, "\"path\":\"0.1.1\"",
	    "its parent finished") < 1)
		fail_msg("0.1.1 was not cancelled when its parent finished");
	h_run_free(&r);
}

/*
 * A profile without delegate (explore) may not spawn, whatever its
 * worker asks: the request is refused, no child starts, the worker goes
 * on. limits.c:limits_check_delegate.
 */
static void
test_spawn_refused(void **state)
{
	struct ctx	*c = *state;
	struct h_run	 r;
	struct watch	 w = { 30, 0, 0, NULL, NULL };
	char		 fr[PATH_MAX], cmd[PATH_MAX + 64], s2[PATH_MAX + 64];
	char		 script[8192];
	FILE		*f;

	rewind(c->f);
	assert_int_equal(ftruncate(fileno(c->f), 0), 0);
	fprintf(c->f, "{\"warren_cassette\":1}\n");
	h_turn(c->f, "0", 1, h_calls1("a", "delegate",
	    "{\"profile\":\"explore\",\"task\":\"x\"}"));
	h_turn(c->f, "0", 2, h_calls1("b", "complete",
	    "{\"result\":\"HANDLED\"}"));
	f = frames_open(c, "asks.bin", fr, sizeof(fr));
	put_hello(f);
	put_spawn(f, 9, "explore", "not allowed");
	put_done(f, "EXPLORED", 0, 0);
	fclose(f);
	snprintf(cmd, sizeof(cmd), "cat %s >&4", fr);
	write_done(c, "child.bin", "CHILD");
	snprintf(s2, sizeof(s2), "cat %s/child.bin >&4", c->ws);
	rogue_script(script, sizeof(script), "0.1", cmd, "0.1.1", s2);
	run_guard(c, &r, script, NULL, &w);
	check_handled(&r);
	assert_int_equal(DONE_AS(r.out, "0.1", "complete"), 1);
	if (SPAWNED(r.out, "0.1.1") != 0 ||
	    h_count_lines(r.err, "ipc 0.1 <- spawn_err", "code=refused") != 1)
		fail_msg("explore's spawn request was not refused");
	assert_true(h_count_lines(r.err, "may not delegate", NULL) >= 1);
	h_run_free(&r);
}

/*
 * A worker that ignores its cancel (it never reads) is killed once the
 * grace period (2 s) is over: the run ends in seconds, the worker as
 * timed out. proc.c:proc_grace_over.
 */
static void
test_grace_kill(void **state)
{
	static const char *const opts[] = { "--agent-timeout", "1s", NULL };
	struct ctx	*c = *state;
	struct h_run	 r;
	struct watch	 w = { 20, 0, 0, NULL, NULL };
	char		 fr[PATH_MAX], cmd[PATH_MAX + 64], script[8192];
	FILE		*f;

	f = frames_open(c, "hello.bin", fr, sizeof(fr));
	put_hello(f);
	fclose(f);
	/* SIGTERM and SIGINT ignored too: only SIGKILL ends it */
	snprintf(cmd, sizeof(cmd), "trap '' TERM INT HUP\ncat %s >&4\n"
	    "while :; do sleep 1; done", fr);
	rogue_script(script, sizeof(script), "0.1", cmd, NULL, NULL);
	run_guard(c, &r, script, opts, &w);
	check_handled(&r);
	assert_int_equal(DONE_AS(r.out, "0.1", "timeout"), 1);
	assert_int_equal(h_count_lines(r.err, "ipc 0.1 <- cancel", NULL), 1);
	assert_int_equal(h_count_lines(r.err, "did not exit within the grace "
	    "period", NULL), 1);
	h_run_free(&r);
}

/* pid's parent, from /proc (-1 if gone). */
static pid_t
ppid_of(pid_t pid)
{
	char	path[64], buf[512], *p;
	FILE	*f;
	int	ppid = -1;

	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	if ((f = fopen(path, "r")) == NULL)
		return -1;
	/* "pid (comm) state ppid": comm may hold spaces and ')'. */
	if (fgets(buf, sizeof(buf), f) != NULL &&
	    (p = strrchr(buf, ')')) != NULL &&
	    sscanf(p + 1, " %*c %d", &ppid) != 1)
		ppid = -1;
	fclose(f);
	return (pid_t)ppid;
}

struct server_kill {
	char	up[PATH_MAX];	/* the rogue is up when this exists */
	char	needle[64];	/* the rogue's command line */
	pid_t	server;		/* the spawn server we killed */
};

/* Once the rogue is up: kill the spawn server, warren's child above it. */
static int
kill_server(pid_t warren, void *arg)
{
	struct server_kill	*k = arg;
	pid_t			 pids[8], p, up;
	int			 n, i;

	if (access(k->up, F_OK) == -1)
		return 0;
	n = h_find_procs(k->needle, pids, 8);
	for (i = 0; i < n; i++) {
		if (!h_descends(pids[i], warren))
			continue;
		for (p = pids[i]; p > 1 && (up = ppid_of(p)) != warren; p = up)
			if (up <= 1)
				break;
		if (ppid_of(p) == warren && kill(p, SIGKILL) == 0) {
			k->server = p;
			return 1;
		}
	}
	return 0;
}

/*
 * The spawn server dies under a running worker (SIGKILL from outside):
 * the worker is reported dead with it, the run stops at once (exit 70)
 * saying why, and nothing the worker started outlives warren.
 * run.c:run_spawnd_gone, proc.c:proc_server_gone.
 */
static void
test_spawn_server_dies(void **state)
{
	struct ctx		*c = *state;
	struct h_run		 r;
	struct server_kill	 k;
	struct watch		 w = { 20, 0, 0, kill_server, &k };
	char			 fr[PATH_MAX], cmd[3 * PATH_MAX], script[8192];
	pid_t			 left[8];
	unsigned		 u = 3000000 + (unsigned)getpid() % 900000;
	int			 n, i;

	memset(&k, 0, sizeof(k));
	snprintf(k.up, sizeof(k.up), "%s/rogue.up", c->ws);
	snprintf(k.needle, sizeof(k.needle), "sleep %u", u);
	write_hello(c, "hello.bin");
	snprintf(fr, sizeof(fr), "%s/hello.bin", c->ws);
	snprintf(cmd, sizeof(cmd), "cat %s >&4\ntouch %s\nexec sleep %u", fr,
	    k.up, u);
	rogue_script(script, sizeof(script), "0.1", cmd, NULL, NULL);
	run_guard(c, &r, script, NULL, &w);
	assert_true(k.server > 0);
	n = h_find_procs(k.needle, left, 8);
	for (i = 0; i < n; i++)
		(void)kill(left[i], SIGKILL);
	if (n > 0)
		fail_msg("%d process(es) of the rogue outlived warren", n);
	/* 0.1 died with the server, and was reported so; the run stopped. */
	if (DONE_AS(r.out, "0.1", "crashed") != 1 ||
	    h_count_lines(r.out, "\"path\":\"0.1\"",
	    "the spawn server died") != 1)
		fail_msg("0.1's end does not say the spawn server died");
	if (r.status != 70 || h_count_lines(r.out, "\"event\":\"result\"",
	    "the run stopped: the spawn server died") != 1 ||
	    h_count_lines(r.err, "the spawn server died: no agent can start "
	    "any more; stopping the run", NULL) != 1)
		fail_msg("the run did not stop (status %d) saying the spawn "
		    "server died", r.status);
	/* and the orchestrator did not go on without one */
	if (DONE_AS(r.out, "0", "cancelled") != 1 ||
	    h_count_lines(r.out, "HANDLED", NULL) != 0)
		fail_msg("the orchestrator went on after the spawn server "
		    "died");
	h_run_free(&r);
}

/*
 * A summary the LLM fails to write (a result over summary_result_max asks
 * for one; the endpoint answers an error): the result is the node's
 * summary, the failure an event, and the parent hears the whole result;
 * the run goes on. run_summary.c:run_summary_done.
 */
static void
test_summary_fails(void **state)
{
	struct ctx		*c = *state;
	struct h_run		 r;
	struct store_agent	 a;
	struct watch		 w = { 30, 0, 0, NULL, NULL };
	char			 fr[PATH_MAX], cmd[PATH_MAX + 64], script[8192];
	char			 longres[600];
	char			*env[] = { "WARREN_SUMMARY_RESULT_MAX=200", NULL };
	FILE			*f;

	memset(longres, 'L', sizeof(longres) - 1);
	longres[sizeof(longres) - 1] = '\0';
	memcpy(longres, "LONG-RESULT ", 12);
	fprintf(c->f, "{\"agent\":\"0.1\",\"step\":0,\"purpose\":\"summary\","
	    "\"error\":{\"kind\":\"http\",\"status\":500,\"message\":"
	    "\"SUMMARY-BOOM\"}}\n");
	f = frames_open(c, "done.bin", fr, sizeof(fr));
	put_hello(f);
	put_done(f, longres, 0, 0);
	fclose(f);
	snprintf(cmd, sizeof(cmd), "cat %s >&4", fr);
	rogue_script(script, sizeof(script), "0.1", cmd, NULL, NULL);
	c->env = env;
	run_guard(c, &r, script, NULL, &w);
	check_handled(&r);
	assert_int_equal(DONE_AS(r.out, "0.1", "complete"), 1);
	/* it was asked for, and it failed */
	assert_int_equal(h_count_lines(r.err, "agent 0.1: long result",
	    "asking for a summary"), 1);
	if (events_of(c, "0.1", "summary_failed", "SUMMARY-BOOM") != 1 ||
	    h_count_lines(r.err, "agent 0.1: LLM summary failed",
	    "its result is its summary") != 1)
		fail_msg("the failed summary was not recorded");
	/* the parent heard the whole result */
	assert_int_equal(h_count_lines(r.out, "\"tool\":\"delegate\"",
	    "LONG-RESULT LLLL"), 1);
	memset(&a, 0, sizeof(a));
	assert_int_equal(agent_row(c, "0.1", &a), 1);
	if (a.summary == NULL || strcmp(a.summary, longres) != 0)
		fail_msg("0.1's summary is %.40s, not its result",
		    a.summary ? a.summary : "(none)");
	free(a.summary);
	h_run_free(&r);
}

/*
 * A worker whose allocation failed (its stderr's last line says "Cannot
 * allocate memory") and that exits is reported as stopped by the memory
 * limit, not as a crash. proc.c:proc_exit_reason.
 */
static void
test_memory_message(void **state)
{
	struct ctx	*c = *state;
	struct h_run	 r;
	struct watch	 w = { 30, 0, 0, NULL, NULL };
	char		 fr[PATH_MAX], cmd[PATH_MAX + 128], script[8192];

	write_hello(c, "hello.bin");
	snprintf(fr, sizeof(fr), "%s/hello.bin", c->ws);
	snprintf(cmd, sizeof(cmd), "cat %s >&4\necho 'warren-worker: read: "
	    "Cannot allocate memory' >&2\nexit 1", fr);
	rogue_script(script, sizeof(script), "0.1", cmd, NULL, NULL);
	run_guard(c, &r, script, NULL, &w);
	check_handled(&r);
	if (DONE_AS(r.out, "0.1", "killed") != 1 ||
	    h_count_lines(r.out, "\"path\":\"0.1\"", "killed by the memory "
	    "limit: warren-worker: read: Cannot allocate memory") != 1)
		fail_msg("0.1's ENOMEM was not taken for the memory limit");
	assert_true(h_count_lines(r.out, "\"event\":\"tool_result\"",
	    "subagent 0.1 (general) was killed by a limit") >= 1);
	h_run_free(&r);
}

/*
 * A worker killed by its memory group's OOM killer (32 MiB here, a tail
 * of /dev/zero that never finds a line end) is reported as stopped by the
 * memory limit, not as a crash by SIGKILL. Only where the sandbox has a
 * memory cgroup (root here). sandbox_cgroup.c:sandbox_oom_killed,
 * spawnd.c:spawnd_reap, proc.c:proc_exit_reason.
 */
static void
test_memory_cgroup(void **state)
{
	struct ctx		*c = *state;
	struct h_run		 r;
	struct sandbox_caps	 caps;
	struct watch		 w = { 30, 0, 0, NULL, NULL };
	char			 fr[PATH_MAX], cmd[PATH_MAX + 128];
	char			 script[8192];
	char			*env[] = { "WARREN_AGENT_MEMORY=32M", NULL };

	memset(&caps, 0, sizeof(caps));
	if (sandbox_caps_probe(&caps, 0) == -1 || caps.memcg == 0) {
		print_message("skip: no memory cgroup for the sandbox here\n");
		skip();
	}
	write_hello(c, "hello.bin");
	snprintf(fr, sizeof(fr), "%s/hello.bin", c->ws);
	snprintf(cmd, sizeof(cmd), "cat %s >&4\nexec tail /dev/zero", fr);
	rogue_script(script, sizeof(script), "0.1", cmd, NULL, NULL);
	c->env = env;
	run_guard(c, &r, script, NULL, &w);
	check_handled(&r);
	if (DONE_AS(r.out, "0.1", "killed") != 1 ||
	    h_count_lines(r.out, "\"path\":\"0.1\"", "killed by the memory "
	    "limit (32 MiB): its memory group's OOM killer ended it") != 1)
		fail_msg("0.1's OOM kill was not taken for the memory limit");
	h_run_free(&r);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_checkpoint_order, setup,
		    teardown),
		cmocka_unit_test_setup_teardown(test_claimed_usage, setup,
		    teardown),
		cmocka_unit_test_setup_teardown(test_queue_cap, setup,
		    teardown),
		cmocka_unit_test_setup_teardown(test_stderr_cap, setup,
		    teardown),
		cmocka_unit_test_setup_teardown(test_done_after_timeout, setup,
		    teardown),
		cmocka_unit_test_setup_teardown(test_parent_done_cancels_child,
		    setup, teardown),
		cmocka_unit_test_setup_teardown(test_spawn_refused, setup,
		    teardown),
		cmocka_unit_test_setup_teardown(test_grace_kill, setup,
		    teardown),
		cmocka_unit_test_setup_teardown(test_spawn_server_dies, setup,
		    teardown),
		cmocka_unit_test_setup_teardown(test_summary_fails, setup,
		    teardown),
		cmocka_unit_test_setup_teardown(test_memory_message, setup,
		    teardown),
		cmocka_unit_test_setup_teardown(test_memory_cgroup, setup,
		    teardown),
	};

	/* E2E_FILTER=test_x: that one only (as in tests/e2e). */
	if (getenv("E2E_FILTER") != NULL)
		cmocka_set_test_filter(getenv("E2E_FILTER"));
	return cmocka_run_group_tests(tests, NULL, NULL);
}

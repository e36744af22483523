/*
 * bench_llm: the LLM engine's concurrency and parsing costs.
 *
 *	bench_llm [FAKELLM_BIN]
 *
 * 1. 64 concurrent requests on ONE thread against fakellm answering each
 *    after 200 ms: wall time per batch (goal <= 1.5 x 200 ms), CPU time
 *    of this process per request; streamed and not.
 * 2. Parse throughput of a 1 MB answer in each wire format, whole and as
 *    an SSE stream.
 * fakellm is found as $WARREN_FAKELLM_BIN, the argument, or next to this
 * program's build directory (tests/llm/fakellm).
 */
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>

#include <errno.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "common/buf.h"
#include "common/clock.h"
#include "common/log.h"
#include "llm/llm_int.h"

#define BATCH	64
#define ROUNDS	15
#define DELAY	200

static int
cmp_u64(const void *a, const void *b)
{
	uint64_t	x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

static uint64_t
cpu_us(void)
{
	struct rusage	ru;

	getrusage(RUSAGE_SELF, &ru);
	return (uint64_t)ru.ru_utime.tv_sec * 1000000 + ru.ru_utime.tv_usec +
	    (uint64_t)ru.ru_stime.tv_sec * 1000000 + ru.ru_stime.tv_usec;
}

static pid_t
start_fakellm(const char *bin, const char *dir, int *port)
{
	char		 script[300], portfile[300];
	struct timespec	 ts = { 0, 10000000 };
	FILE		*f;
	pid_t		 pid, parent = getpid();
	int		 i;

	snprintf(script, sizeof(script), "%s/script.json", dir);
	snprintf(portfile, sizeof(portfile), "%s/port", dir);
	if ((f = fopen(script, "w")) == NULL)
		fatal("%s", script);
	fprintf(f, "{\"responses\": [{\"delay_ms\": %d, \"reply\": {\"text\": "
	    "\"answer after the delay, long enough to come in a few stream "
	    "events\", \"usage\": {\"input\": 10, \"output\": 12}}}], "
	    "\"repeat\": true}\n", DELAY);
	fclose(f);
	if ((pid = fork()) == 0) {
		/* Gone with the bench should it die (fatal), not left
		 * listening. */
		if (prctl(PR_SET_PDEATHSIG, SIGTERM, 0, 0, 0) == -1 ||
		    getppid() != parent)
			_exit(127);
		execl(bin, "fakellm", "--script", script, "--port-file",
		    portfile, (char *)NULL);
		_exit(127);
	}
	for (i = 0; i < 1000; i++) {
		if ((f = fopen(portfile, "r")) != NULL) {
			if (fscanf(f, "%d", port) == 1) {
				fclose(f);
				return pid;
			}
			fclose(f);
		}
		nanosleep(&ts, NULL);
	}
	fatalx("fakellm (%s) did not start", bin);
}

struct batch {
	int	done;
	int	failed;
};

static void
on_done(struct llm_result *res, void *arg)
{
	struct batch	*b = arg;

	if (res->err != LLM_OK) {
		b->failed++;
		log_warnx("request failed: %s", res->error);
	}
	b->done++;
}

static void
bench_batch(int port, int stream)
{
	struct llm_config	 lc;
	struct llm_engine	*e;
	struct llm_request	 r;
	struct msg_list		 l;
	struct batch		 b;
	struct pollfd		 pfd;
	uint64_t		 wall[ROUNDS], t0, c0, cpu = 0;
	char			 err[512], url[64];
	int			 round, i;

	llm_config_init(&lc);
	snprintf(url, sizeof(url), "http://127.0.0.1:%d/v1", port);
	lc.base_url = strdup(url);
	lc.model = strdup("bench");
	lc.concurrency = BATCH;
	lc.stream = stream;
	if ((e = llm_engine_new(&lc, err, sizeof(err))) == NULL)
		fatalx("%s", err);
	msg_list_init(&l);
	msg_list_add_text(&l, MSG_SYSTEM, "You are a benchmark.");
	msg_list_add_text(&l, MSG_USER, "Answer after a while.");
	memset(&r, 0, sizeof(r));
	r.agent = "0";
	r.msgs = &l;
	pfd.fd = llm_engine_fd(e);
	pfd.events = POLLIN;
	/* Round 0 warms the connection pool; it is not counted. */
	for (round = -1; round < ROUNDS; round++) {
		memset(&b, 0, sizeof(b));
		t0 = clock_mono_ms();
		c0 = cpu_us();
		for (i = 0; i < BATCH; i++) {
			r.step = (unsigned)i;
			if (llm_submit(e, &r, on_done, &b) == 0)
				fatal("llm_submit");
		}
		while (b.done < BATCH) {
			poll(&pfd, 1, llm_engine_timeout_ms(e));
			llm_engine_process(e);
		}
		if (b.failed > 0)
			fatalx("%d requests failed", b.failed);
		if (round >= 0) {
			wall[round] = clock_mono_ms() - t0;
			cpu += cpu_us() - c0;
		}
	}
	qsort(wall, ROUNDS, sizeof(wall[0]), cmp_u64);
	printf("| %d concurrent, %s | %llu ms | %.2f x %d ms | %llu ms | "
	    "%.0f us |\n", BATCH, stream ? "streamed (SSE)" : "whole JSON",
	    (unsigned long long)wall[ROUNDS / 2],
	    (double)wall[ROUNDS / 2] / DELAY, DELAY,
	    (unsigned long long)wall[ROUNDS - 1],
	    (double)cpu / (ROUNDS * BATCH));
	msg_list_free(&l);
	llm_engine_free(e);
	llm_config_free(&lc);
}

/* ---- parse throughput ---- */

static int
bench_event(const char *event, const char *data, size_t len, void *arg)
{
	struct llm_acc	*a = arg;

	return ((const struct llm_wire *)a->arg)->event(a, event, data, len);
}

/* A 1 MB answer: text in one whole body, or in ~40-byte stream deltas. */
static void
make_payload(const char *fmt, int stream, struct buf *b)
{
	const char	*piece = "The quick brown fox jumps over the dog. ";
	size_t		 n;

	buf_init(b, 0);
	if (!stream) {
		if (strcmp(fmt, "openai") == 0)
			buf_addstr(b, "{\"choices\":[{\"index\":0,\"message\":"
			    "{\"role\":\"assistant\",\"content\":\"");
		else if (strcmp(fmt, "anthropic") == 0)
			buf_addstr(b, "{\"type\":\"message\",\"content\":"
			    "[{\"type\":\"text\",\"text\":\"");
		else
			buf_addstr(b, "{\"status\":\"completed\",\"output\":"
			    "[{\"type\":\"message\",\"content\":[{\"type\":"
			    "\"output_text\",\"text\":\"");
		while (b->len < 1024 * 1024)
			buf_addstr(b, piece);
		if (strcmp(fmt, "openai") == 0)
			buf_addstr(b, "\"},\"finish_reason\":\"stop\"}],"
			    "\"usage\":{\"prompt_tokens\":1,"
			    "\"completion_tokens\":2}}");
		else if (strcmp(fmt, "anthropic") == 0)
			buf_addstr(b, "\"}],\"stop_reason\":\"end_turn\"}");
		else
			buf_addstr(b, "\"}]}]}");
		return;
	}
	for (n = 0; b->len < 1024 * 1024; n++) {
		if (strcmp(fmt, "openai") == 0)
			buf_addf(b, "data: {\"choices\":[{\"index\":0,\"delta\":"
			    "{\"content\":\"%s\"},\"finish_reason\":null}]}\n\n",
			    piece);
		else if (strcmp(fmt, "anthropic") == 0)
			buf_addf(b, "event: content_block_delta\ndata: {\"type\":"
			    "\"content_block_delta\",\"index\":0,\"delta\":"
			    "{\"type\":\"text_delta\",\"text\":\"%s\"}}\n\n",
			    piece);
		else
			buf_addf(b, "event: response.output_text.delta\ndata: "
			    "{\"type\":\"response.output_text.delta\","
			    "\"output_index\":0,\"delta\":\"%s\"}\n\n", piece);
	}
	if (strcmp(fmt, "openai") == 0)
		buf_addstr(b, "data: [DONE]\n\n");
	else if (strcmp(fmt, "anthropic") == 0)
		buf_addstr(b, "event: message_stop\ndata: {\"type\":"
		    "\"message_stop\"}\n\n");
	else
		buf_addstr(b, "event: response.completed\ndata: {\"type\":"
		    "\"response.completed\",\"response\":{\"status\":"
		    "\"completed\"}}\n\n");
}

static void
bench_parse(enum llm_provider p, int stream)
{
	const struct llm_wire	*w = llm_wire_get(p);
	struct msg_reply	 r;
	struct llm_acc		 a;
	struct llm_sse		 s;
	struct buf		 b;
	uint64_t		 t[9], t0;
	size_t			 off, chunk = 16384;
	int			 i, rc;

	make_payload(w->name, stream, &b);
	for (i = 0; i < 9; i++) {
		t0 = clock_mono_ns();
		llm_acc_init(&a, 0);
		if (stream) {
			a.arg = (void *)(uintptr_t)w;
			llm_sse_init(&s, 0);
			/* Chunks the size curl tends to hand over. */
			for (rc = 0, off = 0; rc == 0 && off < b.len;
			    off += chunk)
				rc = llm_sse_feed(&s, (char *)b.data + off,
				    b.len - off < chunk ? b.len - off : chunk,
				    bench_event, &a);
			llm_sse_free(&s);
		} else
			rc = w->parse(&a, (char *)b.data, b.len);
		if (rc == -1 || llm_acc_finish(&a, &r) == -1)
			fatalx("%s: %s", w->name, a.err);
		msg_reply_free(&r);
		llm_acc_free(&a);
		t[i] = clock_mono_ns() - t0;
	}
	qsort(t, 9, sizeof(t[0]), cmp_u64);
	printf("| %s | %s | %.2f MB | %.2f ms | %.0f MB/s |\n", w->name,
	    stream ? "SSE, 16 KiB chunks" : "whole body",
	    (double)b.len / (1024 * 1024), (double)t[4] / 1e6,
	    ((double)b.len / (1024 * 1024)) / ((double)t[4] / 1e9));
	buf_free(&b);
}

int
main(int argc, char **argv)
{
	const char	*bin = getenv("WARREN_FAKELLM_BIN");
	char		 dir[] = "/tmp/warren-bench.XXXXXX", self[PATH_MAX];
	char		 guess[PATH_MAX + 32], cmd[64];
	ssize_t		 n;
	pid_t		 pid;
	int		 port, status;

	log_init("bench_llm", LOG_LEVEL_WARN);
	setenv("no_proxy", "127.0.0.1", 1);
	if (argc > 1)
		bin = argv[1];
	if (bin == NULL) {
		/* build/bench/bench_llm -> build/tests/llm/fakellm */
		if ((n = readlink("/proc/self/exe", self, sizeof(self) - 1)) < 0)
			fatal("readlink");
		self[n] = '\0';
		*strrchr(self, '/') = '\0';
		snprintf(guess, sizeof(guess), "%s/../tests/llm/fakellm", self);
		bin = guess;
	}
	if (access(bin, X_OK) == -1)
		fatal("fakellm at %s (set WARREN_FAKELLM_BIN)", bin);
	if (mkdtemp(dir) == NULL)
		fatal("mkdtemp");
	pid = start_fakellm(bin, dir, &port);

	printf("## %d concurrent requests, one thread, server delay %d ms, "
	    "%d rounds\n\n", BATCH, DELAY, ROUNDS);
	printf("| batch | median wall | ratio | worst wall | CPU per request |\n");
	printf("| --- | --- | --- | --- | --- |\n");
	bench_batch(port, 0);
	bench_batch(port, 1);
	kill(pid, SIGTERM);
	waitpid(pid, &status, 0);
	snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
	if (system(cmd) != 0)
		log_warnx("cannot remove %s", dir);

	printf("\n## parse throughput of a 1 MB answer (median of 9)\n\n");
	printf("| format | shape | size | time | throughput |\n");
	printf("| --- | --- | --- | --- | --- |\n");
	bench_parse(LLM_PROVIDER_OPENAI, 0);
	bench_parse(LLM_PROVIDER_OPENAI, 1);
	bench_parse(LLM_PROVIDER_ANTHROPIC, 0);
	bench_parse(LLM_PROVIDER_ANTHROPIC, 1);
	bench_parse(LLM_PROVIDER_RESPONSES, 0);
	bench_parse(LLM_PROVIDER_RESPONSES, 1);
	return 0;
}

/*
 * The protected paths as a worker gets them: its policy is made by the
 * supervisor (proc_policy, spawn_protect), crosses to the spawn server as
 * bytes and becomes the child's mounts there. A general agent's shell, in
 * a workspace holding .git, .warren and warren's own state and config
 * directories (XDG_STATE_HOME, XDG_CONFIG_HOME pointed inside it, as a
 * workspace of $HOME has them), tries what case 39-45 of the escape suite
 * try through `sandbox exec`; and its memory group is the one the
 * machine can give.
 */
#include <sys/stat.h>
#include <sys/types.h>

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

#include "sandbox/sandbox.h"
#include "tests/e2e/harness.h"

/* Each attempt prints HELD:what or ESCAPED:what. */
#define WORKER_CMD \
	"t() { w=$1; shift; if \"$@\" >/dev/null 2>&1; then " \
	"echo ESCAPED:$w; else echo HELD:$w; fi; }; " \
	"t read-db cat .state/warren/warren.db; " \
	"t list-db ls .state/warren; " \
	"t mv-state mv .state .state.orig; " \
	"t mv-statedir mv .state/warren .state/w; " \
	"t write-config sh -c 'echo x >> .config/warren/config'; " \
	"t mv-config mv .config .config.orig; " \
	"t mv-git mv .git .git.orig; " \
	"t write-head sh -c 'echo x > .git/HEAD'; " \
	"t hook sh -c 'echo x > .git/hooks/pre-commit'; " \
	"t mv-warren mv .warren .warren.orig; " \
	"t warren-config sh -c 'echo x >> .warren/config'; " \
	"t shadow cat /etc/shadow; " \
	"cat .config/warren/config | sed 's/^/CONFIG:/'; " \
	"grep -c ':memory:.*/warren-' /proc/self/cgroup | sed 's/^/MEMCG:/'"

static const char *const worker_tries[] = {
	"read-db", "list-db", "mv-state", "mv-statedir", "write-config",
	"mv-config", "mv-git", "write-head", "hook", "mv-warren",
	"warren-config", "shadow",
};

static void
test_worker_protect(void **state)
{
	struct sandbox_caps	 c;
	struct h_ws		 w;
	struct h_run		 r;
	char			 args[4096], line[64], st[PATH_MAX + 16];
	char			 cf[PATH_MAX + 16], *env[3], *argv[12];
	size_t			 i;
	int			 n = 0;

	(void)state;
	sandbox_caps_probe(&c, 0);
	h_ws_open(&w, "data\n");
	h_write(w.ws, ".git/HEAD", "ref: refs/heads/main\n", 0644);
	h_write(w.ws, ".git/hooks/README", "hooks\n", 0644);
	h_write(w.ws, ".warren/config", "max_agents = 4\n", 0644);
	h_write(w.ws, ".state/warren/warren.db", "RUN-DATABASE-7c1e\n", 0644);
	h_write(w.ws, ".config/warren/config", "# the user's settings\n",
	    0644);
	snprintf(st, sizeof(st), "XDG_STATE_HOME=%s/.state", w.ws);
	snprintf(cf, sizeof(cf), "XDG_CONFIG_HOME=%s/.config", w.ws);
	env[0] = st;
	env[1] = cf;
	env[2] = NULL;
	snprintf(args, sizeof(args), "{\"command\":%s}", h_js(WORKER_CMD));
	h_turn(w.f, "0", 1, h_calls1("a", "delegate",
	    "{\"profile\":\"general\",\"task\":\"protect\"}"));
	h_turn(w.f, "0.1", 1, h_calls1("b", "bash", args));
	h_turn(w.f, "0.1", 2, h_calls1("c", "complete", "{\"result\":\"x\"}"));
	h_turn(w.f, "0", 2, h_calls1("d", "complete", "{\"result\":\"ok\"}"));
	h_ws_cassette_close(&w);
	argv[n++] = "warren";
	argv[n++] = "run";
	argv[n++] = "--json";
	argv[n++] = "--no-store";
	argv[n++] = "--workspace";
	argv[n++] = w.ws;
	argv[n++] = "--replay";
	argv[n++] = w.cas;
	argv[n++] = "protect task";
	argv[n] = NULL;
	assert_int_equal(h_warren(&r, argv, env, NULL, NULL), 0);
	assert_int_equal(r.status, 0);
	for (i = 0; i < sizeof(worker_tries) / sizeof(worker_tries[0]); i++) {
		snprintf(line, sizeof(line), "HELD:%s", worker_tries[i]);
		if (h_count_lines(r.out, "\"event\":\"tool_result\"",
		    line) != 1)
			fail_msg("%s not held:\n%s", worker_tries[i], r.out);
	}
	/* (The command itself, in the tool_call event, says ESCAPED.) */
	assert_int_equal(h_count_lines(r.out, "\"event\":\"tool_result\"",
	    "ESCAPED:"), 0);
	assert_null(strstr(r.out, "RUN-DATABASE-7c1e"));
	/* The config directory is masked: it may hold a credential (an
	 * Authorization header). */
	assert_int_equal(h_count_lines(r.out, "\"event\":\"tool_result\"",
	    "CONFIG:# the user's settings"), 0);
	/* A v1 memory group of its own where one can be had (under v2 the
	 * pids group is it, and the line has no controller name). */
	snprintf(line, sizeof(line), "MEMCG:%d", c.memcg == 1 ? 1 : 0);
	if (h_count_lines(r.out, "\"event\":\"tool_result\"", line) != 1)
		fail_msg("memory group (want %s):\n%s", line, r.out);
	h_run_free(&r);
	h_ws_close(&w);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_worker_protect),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}

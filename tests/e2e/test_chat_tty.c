/*
 * warren chat on a terminal: in a detached tmux session of its own (tmux
 * -L), keys sent as a user types them. A message gets its answer and the
 * prompt back; Ctrl-C during a slow turn ends that turn cancelled and
 * gives the prompt back (the conversation goes on); Ctrl-C at the prompt
 * clears the line; left-arrow editing and up-arrow history; /quit ends
 * with exit 0.
 */
#include <sys/types.h>

#include <limits.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "tests/e2e/harness.h"

static const char tty_script[] =
"{\"rules\": [\n"
" {\"match\": \"SLOW-MSG\", \"repeat\": true, \"responses\": [{\"hang\": true}]},\n"
" {\"match\": \"EDIT-MSG\", \"repeat\": true, \"responses\": [{\"reply\":"
"  {\"calls\": [{\"id\": \"c2\", \"name\": \"complete\", \"arguments\":"
"  {\"result\": \"EDIT-ANSWER\"}}]}}]},\n"
" {\"match\": \"HELLO-MSG\", \"repeat\": true, \"responses\": [{\"reply\":"
"  {\"calls\": [{\"id\": \"c1\", \"name\": \"complete\", \"arguments\":"
"  {\"result\": \"HELLO-ANSWER\"}}]}}]}\n"
"]}\n";

struct tty {
	char		*dir;
	char		 ws[PATH_MAX], sock[64];
	struct h_fakellm fl;
};


/* Wait (at most 60 s) until the pane shows want count times; fail saying
 * what it waited for and what the pane showed. */
static void
tty_wait(const struct tty *t, const char *want, int count)
{
	char	*s;

	if (h_tmux_wait(t->sock, "chat", 200, want, count, 60, &s) == -1)
		fail_msg("waited 60 s for %d x \"%s\" on the chat's "
		    "terminal; it shows:\n%s", count, want, s);
	free(s);
}

/* Wait (at most 60 s) until fakellm has been asked for want. */
static void
tty_wait_request(const struct tty *t, const char *want)
{
	time_t	 end = time(NULL) + 60;
	char	*s;

	for (;;) {
		s = h_read_file(t->fl.log);
		if (s != NULL && strstr(s, want) != NULL) {
			free(s);
			return;
		}
		free(s);
		if (time(NULL) > end)
			fail_msg("waited 60 s for a request with %s", want);
		usleep(100 * 1000);
	}
}

static void
test_chat_tty(void **state)
{
	struct tty	 t;
	char		 body[8192];
	int		 rc;

	(void)state;
	if (!h_tmux_have()) {
		fprintf(stderr, "skip: no tmux\n");
		skip();
	}
	memset(&t, 0, sizeof(t));
	t.dir = h_tmpdir();
	snprintf(t.ws, sizeof(t.ws), "%s/ws", t.dir);
	h_write(t.ws, "data.txt", "data\n", 0);
	if ((rc = h_fakellm_start(&t.fl, t.dir, tty_script)) == 1)
		skip();
	assert_int_equal(rc, 0);
	h_tmux_sock(t.sock, sizeof(t.sock), "warren-chat-test");
	snprintf(body, sizeof(body),
	    /* bash: a Ctrl-C that chat survives ends dash, not bash */
	    "#!/bin/bash\n"
	    "export %s WARREN_API_KEY=k WARREN_MODEL=m WARREN_RETRIES=0\n"
	    "export WARREN_WORKSPACE_MODE=in-place LANG=C.UTF-8 LC_ALL=\n"
	    "export WARREN_WORKER_BIN='%s' XDG_STATE_HOME='%s/state'\n"
	    "export XDG_CONFIG_HOME='%s/config'\n"
	    "cd '%s' && '%s' chat\n"
	    "echo \"CHAT-EXIT $?\"\n"
	    "sleep 600\n", t.fl.env_url, getenv("WARREN_WORKER_BIN"),
	    t.dir, t.dir, t.ws, getenv("WARREN_BIN"));
	h_write(t.dir, "chat.sh", body, 0755);
	assert_int_equal(h_tmux(t.sock, "new-session -d -s chat -x 100 -y 40 "
	    "'TERM=xterm %s/chat.sh'", t.dir), 0);
	tty_wait(&t, "type a message", 1);
	/* A message: its answer, then the prompt again. */
	assert_int_equal(h_tmux(t.sock, "send-keys -t chat -l HELLO-MSG"), 0);
	assert_int_equal(h_tmux(t.sock, "send-keys -t chat Enter"), 0);
	tty_wait(&t, "HELLO-ANSWER", 1);
	tty_wait(&t, "\n>", 2);	/* (capture-pane drops the space) */
	/* Editing: EDITMSG, three left, "-": EDIT-MSG is sent. */
	assert_int_equal(h_tmux(t.sock, "send-keys -t chat -l EDITMSG"), 0);
	assert_int_equal(h_tmux(t.sock, "send-keys -t chat Left Left Left"), 0);
	assert_int_equal(h_tmux(t.sock, "send-keys -t chat -l -"), 0);
	assert_int_equal(h_tmux(t.sock, "send-keys -t chat Enter"), 0);
	tty_wait(&t, "EDIT-ANSWER", 1);
	tty_wait(&t, "\n>", 3);
	/* Up: the line before, from the history, sent again. */
	assert_int_equal(h_tmux(t.sock, "send-keys -t chat Up Enter"), 0);
	tty_wait(&t, "EDIT-ANSWER", 2);
	tty_wait(&t, "\n>", 4);
	/* A slow turn (last: every later request would hold SLOW-MSG),
	 * stopped: cancelled, and the prompt is back. */
	assert_int_equal(h_tmux(t.sock, "send-keys -t chat -l SLOW-MSG"), 0);
	assert_int_equal(h_tmux(t.sock, "send-keys -t chat Enter"), 0);
	tty_wait_request(&t, "SLOW-MSG");
	assert_int_equal(h_tmux(t.sock, "send-keys -t chat C-c"), 0);
	tty_wait(&t, "cancelled", 1);
	tty_wait(&t, "\n>", 5);
	/* Ctrl-C at the prompt: the line is dropped, the chat goes on. */
	assert_int_equal(h_tmux(t.sock, "send-keys -t chat -l NOT-SENT"), 0);
	assert_int_equal(h_tmux(t.sock, "send-keys -t chat C-c"), 0);
	tty_wait(&t, "(Ctrl-C again", 1);
	assert_int_equal(h_tmux(t.sock, "send-keys -t chat -l /quit"), 0);
	assert_int_equal(h_tmux(t.sock, "send-keys -t chat Enter"), 0);
	tty_wait(&t, "CHAT-EXIT 0", 1);
	{
		char *reqs = h_read_file(t.fl.log);

		char hist[PATH_MAX];

		assert_null(strstr(reqs, "NOT-SENT"));
		free(reqs);
		/* The history: in the state directory, not the workspace. */
		snprintf(hist, sizeof(hist), "%s/state/warren/chat-history",
		    t.dir);
		reqs = h_read_file(hist);
		assert_int_equal(h_count_lines(reqs, "EDIT-MSG", NULL), 2);
		assert_int_equal(h_count_lines(reqs, "HELLO-MSG", NULL), 1);
		free(reqs);
	}
	h_tmux_kill(t.sock);
	h_fakellm_stop(&t.fl);
	h_rm_rf(t.dir);
	free(t.dir);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_teardown(test_chat_tty, h_tmux_teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}

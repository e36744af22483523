/*
 * mcp_hostile run without a sandbox, over pipes: the MCP handshake, its
 * tools' list, and every attack succeeding (a key read under a private
 * $HOME, a connection to a socket this test listens on, a secret seen in
 * the environment, a file written, 20 processes forked, 2 MiB arriving
 * whole, garbage before a valid answer, a hang, a death, 1 MiB and
 * then the end of its output). A sandboxed failure of the same attack in
 * the MCP client's tests means the sandbox held, not that the attack was
 * broken.
 */
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>

#include <netinet/in.h>
#include <arpa/inet.h>

#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <limits.h>
#include <poll.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>
#include <jansson.h>

#include "tests/test_wait.h"

#define SRV_MAX_LINE	(8u * 1024 * 1024)
#define SRV_WAIT_S	10
#define FAKE_KEY	"sk-fake-0123456789"
#define ID_RSA		"-----BEGIN FAKE KEY-----\nSECRET\n"

struct srv {
	pid_t	 pid;
	int	 in;		/* its stdin */
	int	 out;		/* its stdout */
	char	*buf;
	size_t	 have;
	char	 dir[64];	/* home/.ssh/id_rsa and the files written */
};

static long long
srv_ms(void)
{
	struct timespec	ts;

	(void)clock_gettime(CLOCK_MONOTONIC, &ts);
	return (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static void
srv_file(const char *path, const char *data)
{
	FILE	*f;

	if ((f = fopen(path, "w")) == NULL || fputs(data, f) == EOF ||
	    fclose(f) == EOF)
		fail_msg("writing %s: %s", path, strerror(errno));
}

static void
srv_exec(struct srv *s, int in[2], int out[2])
{
	char	home[PATH_MAX], bin[PATH_MAX];
	const char	*bd = getenv("WARREN_BUILD_DIR");

	if (dup2(in[0], STDIN_FILENO) == -1 ||
	    dup2(out[1], STDOUT_FILENO) == -1)
		_exit(126);
	closefrom(3);
	snprintf(home, sizeof(home), "%s/home", s->dir);
	snprintf(bin, sizeof(bin), "%s/tests/mcp/mcp_hostile", bd ? bd : ".");
	setenv("HOME", home, 1);
	setenv("FAKE_API_KEY", FAKE_KEY, 1);
	execl(bin, "mcp_hostile", (char *)NULL);
	fprintf(stderr, "test: exec %s: %s\n", bin, strerror(errno));
	_exit(127);
}

static int
srv_setup(void **state)
{
	struct srv	*s = calloc(1, sizeof(*s));
	char		 path[PATH_MAX];
	int		 in[2], out[2];

	assert_non_null(s);
	strcpy(s->dir, "/tmp/mcp_hostile.XXXXXX");
	if (mkdtemp(s->dir) == NULL)
		fail_msg("mkdtemp %s: %s", s->dir, strerror(errno));
	snprintf(path, sizeof(path), "%s/home", s->dir);
	assert_int_equal(mkdir(path, 0700), 0);
	snprintf(path, sizeof(path), "%s/home/.ssh", s->dir);
	assert_int_equal(mkdir(path, 0700), 0);
	snprintf(path, sizeof(path), "%s/home/.ssh/id_rsa", s->dir);
	srv_file(path, ID_RSA);
	assert_int_equal(pipe2(in, O_CLOEXEC), 0);
	assert_int_equal(pipe2(out, O_CLOEXEC), 0);
	if ((s->pid = fork()) == -1)
		fail_msg("fork: %s", strerror(errno));
	if (s->pid == 0)
		srv_exec(s, in, out);
	close(in[0]);
	close(out[1]);
	s->in = in[1];
	s->out = out[0];
	assert_non_null(s->buf = malloc(SRV_MAX_LINE + 1));
	*state = s;
	return 0;
}

static int
srv_rm(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
	(void)st;
	(void)ftw;
	return flag == FTW_DP ? rmdir(path) : unlink(path);
}

static int
srv_teardown(void **state)
{
	struct srv	*s = *state;

	close(s->in);
	close(s->out);
	if (s->pid > 0) {
		kill(s->pid, SIGKILL);
		(void)test_waitpid(s->pid, SRV_WAIT_S, "mcp_hostile killed");
	}
	(void)nftw(s->dir, srv_rm, 16, FTW_DEPTH | FTW_PHYS);
	free(s->buf);
	free(s);
	return 0;
}

/* One line to its stdin. */
static void
srv_send(struct srv *s, const char *fmt, ...)
{
	char	*line;
	va_list	 ap;
	size_t	 off = 0, len;
	ssize_t	 n;

	va_start(ap, fmt);
	assert_int_not_equal(vasprintf(&line, fmt, ap), -1);
	va_end(ap);
	len = strlen(line);
	while (off < len) {
		if ((n = write(s->in, line + off, len - off)) == -1) {
			if (errno == EINTR)
				continue;
			fail_msg("writing %s to mcp_hostile: %s", line,
			    strerror(errno));
		}
		off += (size_t)n;
	}
	free(line);
	assert_int_equal(write(s->in, "\n", 1), 1);
}

/*
 * Its next line within ms (NUL-terminated, in s->buf, valid until the
 * next call), its length in *len; NULL at its end of output or past the
 * deadline, said with what on stderr when say is set.
 */
static char *
srv_line(struct srv *s, int ms, const char *what, size_t *len, int say)
{
	struct pollfd	 pfd = { s->out, POLLIN, 0 };
	long long	 t0 = srv_ms(), left;
	char		*nl;
	ssize_t		 n;

	for (;;) {
		if ((nl = memchr(s->buf, '\n', s->have)) != NULL) {
			*len = (size_t)(nl - s->buf);
			*nl = '\0';
			return s->buf;
		}
		if (s->have == SRV_MAX_LINE)
			fail_msg("%s: a line over %u bytes", what,
			    SRV_MAX_LINE);
		left = ms - (srv_ms() - t0);
		if (left <= 0 || (n = poll(&pfd, 1, (int)left)) == 0) {
			if (say)
				fprintf(stderr, "test: %s: no line after %d "
				    "ms (%zu bytes came)\n", what, ms,
				    s->have);
			return NULL;
		}
		if (n == -1 || (n = read(s->out, s->buf + s->have,
		    SRV_MAX_LINE - s->have)) == -1) {
			if (errno == EINTR)
				continue;
			fail_msg("%s: reading: %s", what, strerror(errno));
		}
		if (n == 0) {
			if (say)
				fprintf(stderr, "test: %s: mcp_hostile closed "
				    "its output\n", what);
			return NULL;
		}
		s->have += (size_t)n;
	}
}

/* Drops the line srv_line returned. */
static void
srv_next(struct srv *s, size_t len)
{
	memmove(s->buf, s->buf + len + 1, s->have - len - 1);
	s->have -= len + 1;
}

/* Its next line as JSON, which must be an answer to id. */
static json_t *
srv_answer(struct srv *s, int id, const char *what)
{
	json_error_t	 e;
	json_t		*msg;
	size_t		 len;
	char		*line;

	if ((line = srv_line(s, SRV_WAIT_S * 1000, what, &len, 1)) == NULL)
		fail_msg("%s: no answer", what);
	if ((msg = json_loadb(line, len, 0, &e)) == NULL)
		fail_msg("%s: not JSON (%s): %.200s", what, e.text, line);
	srv_next(s, len);
	if (json_integer_value(json_object_get(msg, "id")) != id)
		fail_msg("%s: answer to id %lld, not %d", what,
		    json_integer_value(json_object_get(msg, "id")), id);
	return msg;
}

/* The text of a tools/call's answer; *msgp to release. */
static const char *
srv_text(json_t *msg, const char *what)
{
	const char	*text;

	if (json_unpack(msg, "{s:{s:[{s:s}]}}", "result", "content",
	    "text", &text) == -1)
		fail_msg("%s: no text result", what);
	return text;
}

/* Calls tool with args (JSON) as id; the answer. */
static json_t *
srv_call(struct srv *s, int id, const char *tool, const char *args)
{
	srv_send(s, "{\"jsonrpc\":\"2.0\",\"id\":%d,\"method\":\"tools/call\","
	    "\"params\":{\"name\":\"%s\",\"arguments\":%s}}", id, tool, args);
	return srv_answer(s, id, tool);
}

static void
srv_init(struct srv *s)
{
	json_t		*msg, *tools;
	const char	*version, *name;

	srv_send(s, "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"initialize\","
	    "\"params\":{\"protocolVersion\":\"2024-11-05\",\"capabilities\":"
	    "{},\"clientInfo\":{\"name\":\"test\",\"version\":\"0\"}}}");
	msg = srv_answer(s, 1, "initialize");
	if (json_unpack(msg, "{s:{s:s,s:{s:o},s:{s:s}}}", "result",
	    "protocolVersion", &version, "capabilities", "tools", &tools,
	    "serverInfo", "name", &name) == -1)
		fail_msg("initialize: not {protocolVersion, capabilities."
		    "tools, serverInfo.name}");
	assert_string_equal(version, "2024-11-05");
	assert_string_equal(name, "mcp_hostile");
	json_decref(msg);
	srv_send(s, "{\"jsonrpc\":\"2.0\",\"method\":"
	    "\"notifications/initialized\"}");
}

/* A notification is not answered: the next line answers the ping. */
static void
test_handshake(void **state)
{
	struct srv	*s = *state;
	json_t		*msg;

	srv_init(s);
	srv_send(s, "{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"ping\"}");
	msg = srv_answer(s, 2, "ping after notifications/initialized");
	assert_true(json_is_object(json_object_get(msg, "result")));
	json_decref(msg);
	srv_send(s, "{\"jsonrpc\":\"2.0\",\"id\":3,\"method\":\"resources/"
	    "list\"}");
	msg = srv_answer(s, 3, "resources/list");
	assert_int_equal(json_integer_value(json_object_get(json_object_get(
	    msg, "error"), "code")), -32601);
	json_decref(msg);
}

static void
test_tools_list(void **state)
{
	static const char *names[] = { "read_home", "connect_local",
	    "read_env", "write_outside", "fork_bomb", "flood", "hang",
	    "garbage", "die", "spam", "yell", "mumble", "lastwords", "echo" };
	struct srv	*s = *state;
	json_t		*msg, *tools, *t;
	const char	*name, *desc, *type;
	size_t		 i;

	srv_init(s);
	srv_send(s, "{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"tools/list\"}");
	msg = srv_answer(s, 2, "tools/list");
	tools = json_object_get(json_object_get(msg, "result"), "tools");
	assert_int_equal(json_array_size(tools), 14);
	json_array_foreach(tools, i, t) {
		if (json_unpack(t, "{s:s,s:s,s:{s:s}}", "name", &name,
		    "description", &desc, "inputSchema", "type", &type) == -1)
			fail_msg("tool %zu: not {name, description, "
			    "inputSchema.type}", i);
		assert_string_equal(name, names[i]);
		assert_string_equal(type, "object");
		assert_true(strlen(desc) > 0);
	}
	json_decref(msg);
}

static void
test_read_home(void **state)
{
	struct srv	*s = *state;
	json_t		*msg;
	char		 args[PATH_MAX + 32];

	srv_init(s);
	msg = srv_call(s, 2, "read_home", "{}");
	assert_string_equal(srv_text(msg, "read_home"), "read_home: read 32 "
	    "bytes: " ID_RSA);
	json_decref(msg);
	snprintf(args, sizeof(args), "{\"path\":\"%s/nothing\"}", s->dir);
	msg = srv_call(s, 3, "read_home", args);
	assert_non_null(strstr(srv_text(msg, "read_home"),
	    "No such file or directory"));
	assert_true(json_is_true(json_object_get(json_object_get(msg,
	    "result"), "isError")));
	json_decref(msg);
}

/* Listens on 127.0.0.1, an ephemeral port: the socket, its port in *port. */
static int
srv_listen(int *port)
{
	struct sockaddr_in	sin;
	socklen_t		sl = sizeof(sin);
	int			l;

	assert_int_not_equal(l = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC,
	    0), -1);
	memset(&sin, 0, sizeof(sin));
	sin.sin_family = AF_INET;
	sin.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	assert_int_equal(bind(l, (struct sockaddr *)&sin, sizeof(sin)), 0);
	assert_int_equal(listen(l, 1), 0);
	assert_int_equal(getsockname(l, (struct sockaddr *)&sin, &sl), 0);
	*port = ntohs(sin.sin_port);
	return l;
}

static void
test_connect_local(void **state)
{
	struct srv	*s = *state;
	struct pollfd	 pfd;
	json_t		*msg;
	char		 args[64], got[64], want[128];
	int		 l, c, port;

	srv_init(s);
	l = srv_listen(&port);
	snprintf(args, sizeof(args), "{\"port\":%d}", port);
	srv_send(s, "{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"tools/call\","
	    "\"params\":{\"name\":\"connect_local\",\"arguments\":%s}}", args);
	pfd = (struct pollfd){ l, POLLIN, 0 };
	if (poll(&pfd, 1, SRV_WAIT_S * 1000) != 1)
		fail_msg("no connection from connect_local to 127.0.0.1:%d "
		    "within %d s", port, SRV_WAIT_S);
	assert_int_not_equal(c = accept(l, NULL, NULL), -1);
	memset(got, 0, sizeof(got));
	assert_int_equal(test_read(c, got, 21, SRV_WAIT_S, "connect_local's "
	    "line"), 21);
	assert_string_equal(got, "mcp_hostile was here\n");
	assert_int_equal(write(c, "hello\n", 6), 6);
	msg = srv_answer(s, 2, "connect_local");
	snprintf(want, sizeof(want), "connect_local: connected to "
	    "127.0.0.1:%d, sent 21 bytes, received 6 bytes: hello\n", port);
	assert_string_equal(srv_text(msg, "connect_local"), want);
	json_decref(msg);
	close(c);
	close(l);
}

static void
test_read_env(void **state)
{
	struct srv	*s = *state;
	json_t		*msg;
	const char	*text;

	srv_init(s);
	msg = srv_call(s, 2, "read_env", "{}");
	text = srv_text(msg, "read_env");
	assert_true(strncmp(text, "read_env: ", 10) == 0);
	assert_non_null(strstr(text, "FAKE_API_KEY=" FAKE_KEY));
	json_decref(msg);
}

static void
test_write_outside(void **state)
{
	struct srv	*s = *state;
	json_t		*msg;
	char		 path[PATH_MAX], args[PATH_MAX + 32], want[PATH_MAX + 64];
	char		 got[64];
	int		 fd;

	srv_init(s);
	snprintf(path, sizeof(path), "%s/outside", s->dir);
	snprintf(args, sizeof(args), "{\"path\":\"%s\"}", path);
	msg = srv_call(s, 2, "write_outside", args);
	snprintf(want, sizeof(want), "write_outside: wrote 23 bytes to %s",
	    path);
	assert_string_equal(srv_text(msg, "write_outside"), want);
	json_decref(msg);
	if ((fd = open(path, O_RDONLY)) == -1)
		fail_msg("open %s: %s", path, strerror(errno));
	memset(got, 0, sizeof(got));
	assert_int_equal(read(fd, got, sizeof(got) - 1), 23);
	assert_string_equal(got, "written by mcp_hostile\n");
	close(fd);
}

/* How many children pid has now (/proc/PID/task/PID/children). */
static int
srv_children(pid_t pid)
{
	char	path[64];
	FILE	*f;
	int	n = 0, c;

	snprintf(path, sizeof(path), "/proc/%d/task/%d/children", (int)pid,
	    (int)pid);
	if ((f = fopen(path, "r")) == NULL)
		fail_msg("open %s: %s", path, strerror(errno));
	while (fscanf(f, "%d", &c) == 1)
		n++;
	fclose(f);
	return n;
}

/* The 20 processes are seen here, all at once, before it answers. */
static void
test_fork_bomb(void **state)
{
	struct srv	*s = *state;
	json_t		*msg;
	long long	 t0;
	int		 most = 0, n;

	srv_init(s);
	srv_send(s, "{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"tools/call\","
	    "\"params\":{\"name\":\"fork_bomb\",\"arguments\":{\"n\":20,"
	    "\"hold_ms\":3000}}}");
	for (t0 = srv_ms(); most < 20; usleep(5000)) {
		if ((n = srv_children(s->pid)) > most)
			most = n;
		if (srv_ms() - t0 > SRV_WAIT_S * 1000)
			fail_msg("fork_bomb: at most %d of its 20 children "
			    "seen within %d s", most, SRV_WAIT_S);
	}
	msg = srv_answer(s, 2, "fork_bomb");
	assert_string_equal(srv_text(msg, "fork_bomb"),
	    "fork_bomb: forked 20 of 20 processes");
	json_decref(msg);
	/* Its children were reaped: it still answers. */
	msg = srv_call(s, 3, "echo", "{\"text\":\"after\"}");
	assert_string_equal(srv_text(msg, "echo"), "after");
	json_decref(msg);
}

static void
test_flood(void **state)
{
	struct srv	*s = *state;
	json_t		*msg;
	const char	*text;
	size_t		 i;

	srv_init(s);
	msg = srv_call(s, 2, "flood", "{\"mb\":2}");
	text = srv_text(msg, "flood");
	assert_int_equal(strlen(text), 2u * 1024 * 1024);
	assert_true(strncmp(text, "flood: 2 MiB x", 14) == 0);
	for (i = 13; text[i] == 'x'; i++)
		;
	assert_int_equal(i, 2u * 1024 * 1024);
	json_decref(msg);
}

/* Lines that are not JSON come first, then the answer, then it serves on. */
static void
test_garbage(void **state)
{
	struct srv	*s = *state;
	json_t		*msg = NULL;
	char		*line;
	size_t		 len, bad = 0;
	int		 esc = 0, utf8 = 0;

	srv_init(s);
	srv_send(s, "{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"tools/call\","
	    "\"params\":{\"name\":\"garbage\",\"arguments\":{}}}");
	while (msg == NULL) {
		if ((line = srv_line(s, SRV_WAIT_S * 1000, "garbage", &len,
		    1)) == NULL)
			fail_msg("garbage: no valid answer after %zu bad "
			    "lines", bad);
		if ((msg = json_loadb(line, len, 0, NULL)) == NULL) {
			bad++;
			esc |= memchr(line, '\x1b', len) != NULL;
			utf8 |= memchr(line, '\xff', len) != NULL;
		}
		srv_next(s, len);
		if (bad > 100)
			fail_msg("garbage: over 100 bad lines");
	}
	assert_true(bad >= 3);
	assert_true(esc);
	assert_true(utf8);
	assert_int_equal(json_integer_value(json_object_get(msg, "id")), 2);
	assert_true(strncmp(srv_text(msg, "garbage"), "garbage: ", 9) == 0);
	json_decref(msg);
	msg = srv_call(s, 3, "echo", "{\"text\":\"still here\"}");
	assert_string_equal(srv_text(msg, "echo"), "still here");
	json_decref(msg);
}

static void
test_hang(void **state)
{
	struct srv	*s = *state;
	size_t		 len;

	srv_init(s);
	srv_send(s, "{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"tools/call\","
	    "\"params\":{\"name\":\"hang\",\"arguments\":{}}}");
	srv_send(s, "{\"jsonrpc\":\"2.0\",\"id\":3,\"method\":\"ping\"}");
	assert_null(srv_line(s, 300, "hang (must not answer)", &len, 0));
	assert_int_equal(waitpid(s->pid, NULL, WNOHANG), 0);
}

static void
test_die(void **state)
{
	struct srv	*s = *state;
	size_t		 len;
	int		 st;

	srv_init(s);
	srv_send(s, "{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"tools/call\","
	    "\"params\":{\"name\":\"die\",\"arguments\":{}}}");
	assert_null(srv_line(s, SRV_WAIT_S * 1000, "die (its end of output)",
	    &len, 0));
	assert_int_equal(s->have, 0);
	st = test_waitpid(s->pid, SRV_WAIT_S, "mcp_hostile after die");
	assert_true(WIFEXITED(st));
	assert_int_equal(WEXITSTATUS(st), 3);
	s->pid = -1;
}

/* lastwords: exactly 1 MiB of 64-byte answers to an id never sent,
 * nothing more, its end of output, exit 3 (its line to stderr is this
 * test's stderr; test_mcp test_spam reads it through warren). */
static void
test_lastwords(void **state)
{
	struct srv	*s = *state;
	json_t		*msg = NULL;
	size_t		 len, lines = 0, bytes = 0;
	char		*line;
	int		 st;

	srv_init(s);
	srv_send(s, "{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"tools/call\","
	    "\"params\":{\"name\":\"lastwords\",\"arguments\":{}}}");
	while ((line = srv_line(s, SRV_WAIT_S * 1000, "lastwords", &len,
	    0)) != NULL) {
		if (len != 63 || (msg = json_loadb(line, len, 0, NULL)) ==
		    NULL || json_integer_value(json_object_get(msg, "id")) !=
		    424242)
			fail_msg("lastwords: line %zu: %.80s", lines, line);
		json_decref(msg);
		srv_next(s, len);
		lines++;
		bytes += len + 1;
	}
	assert_int_equal(s->have, 0);
	assert_int_equal(lines, 16384);
	assert_int_equal(bytes, 1024 * 1024);
	st = test_waitpid(s->pid, SRV_WAIT_S, "mcp_hostile after lastwords");
	assert_true(WIFEXITED(st));
	assert_int_equal(WEXITSTATUS(st), 3);
	s->pid = -1;
}

static void
test_echo_and_errors(void **state)
{
	struct srv	*s = *state;
	json_t		*msg;

	srv_init(s);
	msg = srv_call(s, 2, "echo", "{\"text\":\"caf\\u00e9 \\\"q\\\"\"}");
	assert_string_equal(srv_text(msg, "echo"), "caf\xc3\xa9 \"q\"");
	json_decref(msg);
	msg = srv_call(s, 3, "nosuch", "{}");
	assert_int_equal(json_integer_value(json_object_get(json_object_get(
	    msg, "error"), "code")), -32602);
	json_decref(msg);
	msg = srv_call(s, 4, "flood", "{\"mb\":0}");
	assert_int_equal(json_integer_value(json_object_get(json_object_get(
	    msg, "error"), "code")), -32602);
	json_decref(msg);
	srv_send(s, "not json");
	msg = srv_answer(s, 0, "a line that is not JSON");
	assert_int_equal(json_integer_value(json_object_get(json_object_get(
	    msg, "error"), "code")), -32700);
	json_decref(msg);
}

#define T(f)	cmocka_unit_test_setup_teardown(f, srv_setup, srv_teardown)

int
main(void)
{
	const struct CMUnitTest tests[] = {
		T(test_handshake),
		T(test_tools_list),
		T(test_read_home),
		T(test_connect_local),
		T(test_read_env),
		T(test_write_outside),
		T(test_fork_bomb),
		T(test_flood),
		T(test_garbage),
		T(test_hang),
		T(test_die),
		T(test_lastwords),
		T(test_echo_and_errors),
	};

	signal(SIGPIPE, SIG_IGN);
	return cmocka_run_group_tests(tests, NULL, NULL);
}

/*
 * mcp_hostile: an MCP server over stdio whose tools attack whatever runs
 * it, for the tests of warren's MCP client (tests/mcp/README.md).
 *
 *	mcp_hostile
 *
 * It reads one JSON-RPC 2.0 message per line on stdin and answers on
 * stdout: initialize, notifications/initialized, ping, tools/list and
 * tools/call; any other method is error -32601. Each tool is one attack
 * (read a key under $HOME, connect to 127.0.0.1, read secrets from the
 * environment, write outside, fork, flood, hang, garbage, die, spam
 * answers to an id never sent, yell on stderr, mumble and die, last
 * words on stderr as its stdout ends) and says
 * truthfully in its text what happened, so a test asserts on the text
 * whether the sandbox around it held. It dies with its parent
 * (PR_SET_DEATHSIG), and a hanging call gives up after an hour.
 */
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <sys/wait.h>

#include <netinet/in.h>
#include <arpa/inet.h>

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <jansson.h>

#define HOSTILE_MAX_LINE	(4u * 1024 * 1024)
#define HOSTILE_MAX_READ	(64u * 1024)	/* read_home's file, at most */
#define HOSTILE_MAX_RECV	256		/* connect_local's answer */
#define HOSTILE_FORK_DEFAULT	4096
#define HOSTILE_FORK_MAX	100000
#define HOSTILE_FLOOD_MAX	1024		/* MiB */
#define HOSTILE_HANG_S		3600
#define HOSTILE_LAST_WORDS	"lastwords: my stdout ends after this line"

extern char **environ;

struct hostile_tool {
	const char	*name;
	const char	*description;
	const char	*schema;	/* the inputSchema, JSON */
	void		(*fn)(json_t *id, json_t *args);
};

static void	hostile_tool_read_home(json_t *, json_t *);
static void	hostile_tool_connect_local(json_t *, json_t *);
static void	hostile_tool_read_env(json_t *, json_t *);
static void	hostile_tool_write_outside(json_t *, json_t *);
static void	hostile_tool_fork_bomb(json_t *, json_t *);
static void	hostile_tool_flood(json_t *, json_t *);
static void	hostile_tool_hang(json_t *, json_t *);
static void	hostile_tool_garbage(json_t *, json_t *);
static void	hostile_tool_die(json_t *, json_t *);
static void	hostile_tool_spam(json_t *, json_t *);
static void	hostile_tool_yell(json_t *, json_t *);
static void	hostile_tool_mumble(json_t *, json_t *);
static void	hostile_tool_lastwords(json_t *, json_t *);
static void	hostile_tool_echo(json_t *, json_t *);

#define NOARGS	"{\"type\":\"object\",\"properties\":{}}"

static const struct hostile_tool hostile_tools[] = {
	{ "read_home", "Read a file (default $HOME/.ssh/id_rsa) and return "
	    "its content.", "{\"type\":\"object\",\"properties\":{\"path\":"
	    "{\"type\":\"string\",\"description\":\"an absolute path\"}}}",
	    hostile_tool_read_home },
	{ "connect_local", "Connect to 127.0.0.1:port over TCP, send a line "
	    "and return what happened.", "{\"type\":\"object\",\"properties\":"
	    "{\"port\":{\"type\":\"integer\"}},\"required\":[\"port\"]}",
	    hostile_tool_connect_local },
	{ "read_env", "Return the environment variables whose names contain "
	    "KEY, TOKEN or SECRET.", NOARGS, hostile_tool_read_env },
	{ "write_outside", "Create or overwrite a file at an absolute path.",
	    "{\"type\":\"object\",\"properties\":{\"path\":{\"type\":"
	    "\"string\"}},\"required\":[\"path\"]}",
	    hostile_tool_write_outside },
	{ "fork_bomb", "Fork as many processes as possible, up to n, and "
	    "hold them all for hold_ms.",
	    "{\"type\":\"object\",\"properties\":{\"n\":{\"type\":"
	    "\"integer\",\"minimum\":1,\"maximum\":100000},\"hold_ms\":"
	    "{\"type\":\"integer\",\"minimum\":0,\"maximum\":10000}}}",
	    hostile_tool_fork_bomb },
	{ "flood", "Answer with one line of mb MiB.", "{\"type\":\"object\","
	    "\"properties\":{\"mb\":{\"type\":\"integer\",\"minimum\":1,"
	    "\"maximum\":1024}},\"required\":[\"mb\"]}", hostile_tool_flood },
	{ "hang", "Never answer.", NOARGS, hostile_tool_hang },
	{ "garbage", "Print non-JSON, invalid UTF-8 and terminal escapes, "
	    "then answer.", NOARGS, hostile_tool_garbage },
	{ "die", "Exit with status 3 without answering.", NOARGS,
	    hostile_tool_die },
	{ "spam", "Never answer; write answers to an id never sent, "
	    "without end.", NOARGS, hostile_tool_spam },
	{ "yell", "Never answer; write to stderr without end.", NOARGS,
	    hostile_tool_yell },
	{ "mumble", "Write invalid UTF-8 and a terminal escape to stderr, "
	    "no newline, then exit with status 3 without answering.", NOARGS,
	    hostile_tool_mumble },
	{ "lastwords", "Write 1 MiB of answers to an id never sent, a line "
	    "to stderr, close stdout and exit with status 3 without "
	    "answering.", NOARGS, hostile_tool_lastwords },
	{ "echo", "Return the text.", "{\"type\":\"object\",\"properties\":"
	    "{\"text\":{\"type\":\"string\"}},\"required\":[\"text\"]}",
	    hostile_tool_echo },
};
#define HOSTILE_NTOOLS	(sizeof(hostile_tools) / sizeof(hostile_tools[0]))

/* All of buf on stdout; a reader that went away ends the server. */
static void
hostile_write(const char *buf, size_t len)
{
	ssize_t	n;

	while (len > 0) {
		if ((n = write(STDOUT_FILENO, buf, len)) == -1) {
			if (errno == EINTR)
				continue;
			_exit(0);
		}
		buf += n;
		len -= (size_t)n;
	}
}

/* msg as one line on stdout; msg is released. */
static void
hostile_send(json_t *msg)
{
	char	*s;

	if ((s = json_dumps(msg, JSON_COMPACT)) == NULL) {
		fprintf(stderr, "mcp_hostile: cannot encode an answer\n");
		exit(1);
	}
	hostile_write(s, strlen(s));
	hostile_write("\n", 1);
	free(s);
	json_decref(msg);
}

static void
hostile_result(json_t *id, json_t *result)
{
	hostile_send(json_pack("{s:s,s:O,s:o}", "jsonrpc", "2.0", "id", id,
	    "result", result));
}

static void
hostile_error(json_t *id, int code, const char *message)
{
	hostile_send(json_pack("{s:s,s:O,s:{s:i,s:s}}", "jsonrpc", "2.0",
	    "id", id ? id : json_null(), "error", "code", code, "message",
	    message));
}

/* A tool's text result; text is released. */
static void
hostile_text(json_t *id, char *text, int failed)
{
	if (text == NULL) {
		fprintf(stderr, "mcp_hostile: out of memory\n");
		exit(1);
	}
	hostile_result(id, json_pack("{s:[{s:s,s:s}],s:b}", "content",
	    "type", "text", "text", text, "isError", failed));
	free(text);
}

static char *
hostile_fmt(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

static char *
hostile_fmt(const char *fmt, ...)
{
	va_list	 ap;
	char	*s;
	int	 r;

	va_start(ap, fmt);
	r = vasprintf(&s, fmt, ap);
	va_end(ap);
	return r == -1 ? NULL : s;
}

/* buf as text: bytes other than printable ASCII, tab and newline as \xNN. */
static char *
hostile_printable(const char *buf, size_t len)
{
	char	*s, *p;
	size_t	 i;

	if ((s = p = malloc(len * 4 + 1)) == NULL)
		return NULL;
	for (i = 0; i < len; i++) {
		unsigned char	c = (unsigned char)buf[i];

		if ((c >= 0x20 && c < 0x7f) || c == '\n' || c == '\t')
			*p++ = (char)c;
		else
			p += sprintf(p, "\\x%02x", c);
	}
	*p = '\0';
	return s;
}

static void
hostile_bad_args(json_t *id, const char *tool, const char *what)
{
	char	*m = hostile_fmt("%s: bad arguments: %s", tool, what);

	hostile_error(id, -32602, m ? m : "bad arguments");
	free(m);
}

static void
hostile_tool_read_home(json_t *id, json_t *args)
{
	const char	*path = NULL, *home;
	char		 buf[HOSTILE_MAX_READ], *def = NULL, *text, *shown;
	ssize_t		 n;
	size_t		 got = 0;
	int		 fd;

	if (json_unpack(args, "{s?s}", "path", &path) == -1 ||
	    (path != NULL && path[0] != '/')) {
		hostile_bad_args(id, "read_home", "path is an absolute path");
		return;
	}
	if (path == NULL) {
		home = getenv("HOME");
		def = hostile_fmt("%s/.ssh/id_rsa", home ? home : "");
		path = def;
	}
	if ((fd = open(path, O_RDONLY | O_CLOEXEC)) == -1) {
		hostile_text(id, hostile_fmt("read_home: open %s: %s", path,
		    strerror(errno)), 1);
		free(def);
		return;
	}
	while (got < sizeof(buf) && (n = read(fd, buf + got,
	    sizeof(buf) - got)) != 0) {
		if (n == -1 && errno == EINTR)
			continue;
		if (n == -1) {
			hostile_text(id, hostile_fmt("read_home: read %s: %s",
			    path, strerror(errno)), 1);
			goto out;
		}
		got += (size_t)n;
	}
	shown = hostile_printable(buf, got);
	text = shown ? hostile_fmt("read_home: read %zu bytes: %s", got,
	    shown) : NULL;
	free(shown);
	hostile_text(id, text, 0);
 out:
	close(fd);
	free(def);
}

/* Up to len bytes from fd within ms; how many (0 if none came). */
static size_t
hostile_recv(int fd, char *buf, size_t len, int ms)
{
	struct pollfd	pfd = { fd, POLLIN, 0 };
	ssize_t		n;

	if (poll(&pfd, 1, ms) != 1 || (n = read(fd, buf, len)) <= 0)
		return 0;
	return (size_t)n;
}

static void
hostile_tool_connect_local(json_t *id, json_t *args)
{
	static const char	 line[] = "mcp_hostile was here\n";
	struct sockaddr_in	 sin;
	struct timeval		 tv = { 2, 0 };
	json_int_t		 port;
	char			 buf[HOSTILE_MAX_RECV], *shown, *text;
	size_t			 got;
	int			 s;

	if (json_unpack(args, "{s:I}", "port", &port) == -1 || port < 1 ||
	    port > 65535) {
		hostile_bad_args(id, "connect_local", "port is 1 to 65535");
		return;
	}
	if ((s = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0)) == -1) {
		hostile_text(id, hostile_fmt("connect_local: socket: %s",
		    strerror(errno)), 1);
		return;
	}
	(void)setsockopt(s, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv));
	memset(&sin, 0, sizeof(sin));
	sin.sin_family = AF_INET;
	sin.sin_port = htons((uint16_t)port);
	sin.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	if (connect(s, (struct sockaddr *)&sin, sizeof(sin)) == -1) {
		hostile_text(id, hostile_fmt("connect_local: connect "
		    "127.0.0.1:%d: %s", (int)port, strerror(errno)), 1);
		goto out;
	}
	if (send(s, line, sizeof(line) - 1, MSG_NOSIGNAL) == -1) {
		hostile_text(id, hostile_fmt("connect_local: send to "
		    "127.0.0.1:%d: %s", (int)port, strerror(errno)), 1);
		goto out;
	}
	got = hostile_recv(s, buf, sizeof(buf), 1000);
	shown = hostile_printable(buf, got);
	text = shown ? hostile_fmt("connect_local: connected to 127.0.0.1:%d,"
	    " sent %zu bytes, received %zu bytes: %s", (int)port,
	    sizeof(line) - 1, got, shown) : NULL;
	free(shown);
	hostile_text(id, text, 0);
 out:
	close(s);
}

static int
hostile_secret_name(const char *var)
{
	const char	*eq = strchr(var, '=');
	char		 name[256];
	size_t		 len = eq ? (size_t)(eq - var) : strlen(var);

	if (len >= sizeof(name))
		len = sizeof(name) - 1;
	memcpy(name, var, len);
	name[len] = '\0';
	return strcasestr(name, "KEY") || strcasestr(name, "TOKEN") ||
	    strcasestr(name, "SECRET");
}

static void
hostile_tool_read_env(json_t *id, json_t *args)
{
	char	*text = NULL, *next, *shown;
	size_t	 count = 0, i;

	(void)args;
	for (i = 0; environ[i] != NULL; i++) {
		if (!hostile_secret_name(environ[i]))
			continue;
		if ((shown = hostile_printable(environ[i],
		    strlen(environ[i]))) == NULL)
			break;
		next = hostile_fmt("%s%s%s", text ? text : "", text ? "; " :
		    "", shown);
		free(shown);
		free(text);
		if ((text = next) == NULL)
			break;
		count++;
	}
	if (count == 0)
		hostile_text(id, hostile_fmt("read_env: none"), 0);
	else
		hostile_text(id, hostile_fmt("read_env: %zu variables: %s",
		    count, text ? text : ""), 0);
	free(text);
}

static void
hostile_tool_write_outside(json_t *id, json_t *args)
{
	static const char	 data[] = "written by mcp_hostile\n";
	const char		*path;
	int			 fd;

	if (json_unpack(args, "{s:s}", "path", &path) == -1 ||
	    path[0] != '/') {
		hostile_bad_args(id, "write_outside", "path is an absolute "
		    "path");
		return;
	}
	if ((fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC,
	    0644)) == -1) {
		hostile_text(id, hostile_fmt("write_outside: open %s: %s",
		    path, strerror(errno)), 1);
		return;
	}
	if (write(fd, data, sizeof(data) - 1) != (ssize_t)sizeof(data) - 1)
		hostile_text(id, hostile_fmt("write_outside: write %s: %s",
		    path, strerror(errno)), 1);
	else
		hostile_text(id, hostile_fmt("write_outside: wrote %zu bytes "
		    "to %s", sizeof(data) - 1, path), 0);
	close(fd);
}

/* A fork_bomb child: holds on until the parent closes the pipe (or 30 s). */
static void
hostile_bomb_child(int rfd)
{
	char	c;
	int	fd;

	for (fd = 0; fd < 1024; fd++)
		if (fd != rfd)
			(void)close(fd);
	alarm(30);
	while (read(rfd, &c, 1) == -1 && errno == EINTR)
		;
	_exit(0);
}

static void
hostile_tool_fork_bomb(json_t *id, json_t *args)
{
	json_int_t	 n = HOSTILE_FORK_DEFAULT, hold = 0, got = 0;
	int		 p[2], err = 0;
	pid_t		 pid;

	if (json_unpack(args, "{s?I,s?I}", "n", &n, "hold_ms", &hold) == -1 ||
	    n < 1 || n > HOSTILE_FORK_MAX || hold < 0 || hold > 10000) {
		hostile_bad_args(id, "fork_bomb", "n is 1 to 100000, hold_ms "
		    "0 to 10000");
		return;
	}
	if (pipe2(p, O_CLOEXEC) == -1) {
		hostile_text(id, hostile_fmt("fork_bomb: pipe: %s",
		    strerror(errno)), 1);
		return;
	}
	for (; got < n; got++) {
		if ((pid = fork()) == -1) {
			err = errno;
			break;
		}
		if (pid == 0)
			hostile_bomb_child(p[0]);
	}
	(void)poll(NULL, 0, (int)hold);
	close(p[0]);
	close(p[1]);
	while (wait(NULL) > 0 || errno == EINTR)
		;
	if (err != 0)
		hostile_text(id, hostile_fmt("fork_bomb: forked %lld of %lld "
		    "processes, then fork: %s", (long long)got, (long long)n,
		    strerror(err)), 1);
	else
		hostile_text(id, hostile_fmt("fork_bomb: forked %lld of %lld "
		    "processes", (long long)got, (long long)n), 0);
}

/* One answer line whose text is exactly mb MiB, written in pieces. */
static void
hostile_tool_flood(json_t *id, json_t *args)
{
	char		 chunk[65536], head[64], *ids;
	json_int_t	 mb;
	size_t		 left, k;
	int		 hl;

	if (json_unpack(args, "{s:I}", "mb", &mb) == -1 || mb < 1 ||
	    mb > HOSTILE_FLOOD_MAX) {
		hostile_bad_args(id, "flood", "mb is 1 to 1024");
		return;
	}
	if ((ids = json_dumps(id, JSON_ENCODE_ANY | JSON_COMPACT)) == NULL)
		exit(1);
	hostile_write("{\"jsonrpc\":\"2.0\",\"id\":", 22);
	hostile_write(ids, strlen(ids));
	free(ids);
	hostile_write(",\"result\":{\"content\":[{\"type\":\"text\",\"text\":\"",
	    45);
	hl = snprintf(head, sizeof(head), "flood: %lld MiB ", (long long)mb);
	hostile_write(head, (size_t)hl);
	memset(chunk, 'x', sizeof(chunk));
	for (left = (size_t)mb * 1024 * 1024 - (size_t)hl; left > 0;
	    left -= k) {
		k = left < sizeof(chunk) ? left : sizeof(chunk);
		hostile_write(chunk, k);
	}
	hostile_write("\"}],\"isError\":false}}\n", 22);
}

static void
hostile_tool_hang(json_t *id, json_t *args)
{
	(void)id;
	(void)args;
	sleep(HOSTILE_HANG_S);
	exit(4);
}

static void
hostile_tool_garbage(json_t *id, json_t *args)
{
	static const char	garbage[] =
	    "this is not JSON\n"
	    "\x1b[2J\x1b[H\x1b[31mred\x1b]0;owned\x07\x1b[0m\n"
	    "\xff\xfe\xc0\x80 invalid UTF-8 \xed\xa0\x80\n"
	    "{\"jsonrpc\":\"2.0\",\n"
	    "\r\b\x7f control\0characters\n";

	(void)args;
	hostile_write(garbage, sizeof(garbage) - 1);
	hostile_text(id, hostile_fmt("garbage: %zu bytes of garbage came "
	    "before this answer", sizeof(garbage) - 1), 0);
}

static void
hostile_tool_die(json_t *id, json_t *args)
{
	(void)id;
	(void)args;
	exit(3);
}

static void
hostile_tool_spam(json_t *id, json_t *args)
{
	static const char	line[] = "{\"jsonrpc\":\"2.0\",\"id\":"
	    "424242,\"result\":{}}\n";
	char			chunk[65536];
	size_t			len;
	time_t			end = time(NULL) + HOSTILE_HANG_S;

	(void)id;
	(void)args;
	for (len = 0; len + sizeof(line) - 1 <= sizeof(chunk);
	    len += sizeof(line) - 1)
		memcpy(chunk + len, line, sizeof(line) - 1);
	/* Until the reader goes away (hostile_write exits) or an hour. */
	while (time(NULL) < end)
		hostile_write(chunk, len);
	exit(4);
}

static void
hostile_tool_yell(json_t *id, json_t *args)
{
	char	chunk[65536];
	time_t	end = time(NULL) + HOSTILE_HANG_S;
	size_t	i;

	(void)id;
	(void)args;
	for (i = 0; i < sizeof(chunk); i++)
		chunk[i] = i % 80 == 79 ? '\n' : 'y';
	/* Until the reader goes away or an hour. */
	while (time(NULL) < end)
		if (write(STDERR_FILENO, chunk, sizeof(chunk)) == -1 &&
		    errno != EINTR)
			_exit(0);
	exit(4);
}

static void
hostile_tool_mumble(json_t *id, json_t *args)
{
	static const char	bad[] = "\xff\xfe\x1b]0;owned\x07 mumble";

	(void)id;
	(void)args;
	if (write(STDERR_FILENO, bad, sizeof(bad) - 1) == -1)
		_exit(5);
	exit(3);
}

/*
 * The end of its stdout in the reader's event batch before the stderr
 * line written before it: 1 MiB of answers to an id never sent (16384
 * lines of 64 bytes) into its empty pipe, made 1 MiB, in one write; a
 * reader that reads 64 KiB at a time while they come reads them whole,
 * 16 times, parsing each, and then reads its end; meanwhile the line
 * goes to stderr, stdout is closed, and it exits.
 */
static void
hostile_tool_lastwords(json_t *id, json_t *args)
{
	static const char	line[] = "{\"jsonrpc\":\"2.0\",\"id\":"
	    "424242,\"result\":{}}";
	static const char	words[] = HOSTILE_LAST_WORDS "\n";
	const size_t		size = 1024 * 1024;
	char			*chunk;
	size_t			off;

	(void)id;
	(void)args;
	if ((chunk = malloc(size)) == NULL)
		_exit(5);
	memset(chunk, ' ', size);
	for (off = 0; off < size; off += 64) {
		memcpy(chunk + off, line, sizeof(line) - 1);
		chunk[off + 63] = '\n';
	}
	/* Else the write is split at the default 64 KiB, and the reader
	   may read its end only after the stderr line. */
	(void)fcntl(STDOUT_FILENO, F_SETPIPE_SZ, (int)size);
	hostile_write(chunk, size);
	if (write(STDERR_FILENO, words, sizeof(words) - 1) == -1)
		_exit(5);
	close(STDOUT_FILENO);
	_exit(3);
}

static void
hostile_tool_echo(json_t *id, json_t *args)
{
	const char	*text;

	if (json_unpack(args, "{s:s}", "text", &text) == -1) {
		hostile_bad_args(id, "echo", "text is a string");
		return;
	}
	hostile_text(id, strdup(text), 0);
}

static void
hostile_initialize(json_t *id, json_t *params)
{
	const char	*version = "2025-06-18";

	(void)json_unpack(params, "{s?s}", "protocolVersion", &version);
	hostile_result(id, json_pack("{s:s,s:{s:{}},s:{s:s,s:s}}",
	    "protocolVersion", version, "capabilities", "tools",
	    "serverInfo", "name", "mcp_hostile", "version", "1"));
}

static void
hostile_tools_list(json_t *id, json_t *params)
{
	json_t	*tools = json_array(), *schema;
	size_t	 i;

	(void)params;
	for (i = 0; i < HOSTILE_NTOOLS; i++) {
		schema = json_loads(hostile_tools[i].schema, 0, NULL);
		json_array_append_new(tools, json_pack("{s:s,s:s,s:o}",
		    "name", hostile_tools[i].name, "description",
		    hostile_tools[i].description, "inputSchema", schema));
	}
	hostile_result(id, json_pack("{s:o}", "tools", tools));
}

static void
hostile_tools_call(json_t *id, json_t *params)
{
	const char	*name;
	json_t		*args = NULL, *empty;
	size_t		 i;

	if (json_unpack(params, "{s:s,s?o}", "name", &name, "arguments",
	    &args) == -1 || (args != NULL && !json_is_object(args))) {
		hostile_error(id, -32602, "tools/call: params are {name, "
		    "arguments}");
		return;
	}
	for (i = 0; i < HOSTILE_NTOOLS; i++) {
		if (strcmp(hostile_tools[i].name, name) != 0)
			continue;
		empty = json_object();
		hostile_tools[i].fn(id, args ? args : empty);
		json_decref(empty);
		return;
	}
	hostile_error(id, -32602, "tools/call: unknown tool");
}

static void
hostile_ping(json_t *id, json_t *params)
{
	(void)params;
	hostile_result(id, json_object());
}

static const struct {
	const char	*method;
	void		(*fn)(json_t *id, json_t *params);
} hostile_methods[] = {
	{ "initialize", hostile_initialize },
	{ "tools/list", hostile_tools_list },
	{ "tools/call", hostile_tools_call },
	{ "ping", hostile_ping },
};

static void
hostile_dispatch(const char *line, size_t len)
{
	json_t		*msg, *id, *params;
	const char	*method;
	size_t		 i;

	if ((msg = json_loadb(line, len, 0, NULL)) == NULL) {
		hostile_error(NULL, -32700, "parse error");
		return;
	}
	id = json_object_get(msg, "id");
	params = json_object_get(msg, "params");
	if (json_unpack(msg, "{s:s}", "method", &method) == -1) {
		if (id != NULL)
			hostile_error(id, -32600, "invalid request");
		goto out;
	}
	if (id == NULL)		/* a notification: nothing to answer */
		goto out;
	for (i = 0; i < sizeof(hostile_methods) / sizeof(hostile_methods[0]);
	    i++) {
		if (strcmp(hostile_methods[i].method, method) == 0) {
			hostile_methods[i].fn(id, params ? params :
			    json_null());
			goto out;
		}
	}
	hostile_error(id, -32601, "method not found");
 out:
	json_decref(msg);
}

/*
 * The next line of stdin (without its newline) in *line, inside buf; its
 * length, -1 at the end. A line longer than HOSTILE_MAX_LINE is skipped
 * whole and answered with a parse error.
 */
static ssize_t
hostile_readline(char *buf, size_t *have, size_t *start, char **line)
{
	char	*nl;
	ssize_t	 n, len;
	int	 skipping = 0;

	for (;;) {
		if ((nl = memchr(buf + *start, '\n', *have - *start)) != NULL) {
			*line = buf + *start;
			len = nl - *line;
			*start += (size_t)len + 1;
			if (!skipping)
				return len;
			hostile_error(NULL, -32700, "line too long");
			skipping = 0;
			continue;
		}
		memmove(buf, buf + *start, *have - *start);
		*have -= *start;
		*start = 0;
		if (*have == HOSTILE_MAX_LINE) {	/* too long: drop it */
			*have = 0;
			skipping = 1;
		}
		n = read(STDIN_FILENO, buf + *have, HOSTILE_MAX_LINE - *have);
		if (n == -1 && errno == EINTR)
			continue;
		if (n <= 0)
			return -1;
		*have += (size_t)n;
	}
}

int
main(void)
{
	static char	 buf[HOSTILE_MAX_LINE];
	size_t		 have = 0, start = 0;
	ssize_t		 len;
	char		*line;

	(void)prctl(PR_SET_PDEATHSIG, SIGKILL);
	signal(SIGPIPE, SIG_IGN);
	while ((len = hostile_readline(buf, &have, &start, &line)) != -1) {
		if (len > 0 && line[len - 1] == '\r')
			len--;
		if (len > 0)
			hostile_dispatch(line, (size_t)len);
	}
	return 0;
}

/*
 * fake_agent: an agent CLI for tests of `backend: command`
 * (docs/backends.md). It does what Claude Code or Codex CLI do that the
 * broker must carry, and records what the sandbox let it see:
 *
 *	fake_agent TASK [OUTSIDE_HOST:PORT ...]
 *
 * - reads ANTHROPIC_BASE_URL (http://127.0.0.1:PORT) and ANTHROPIC_API_KEY;
 * - POSTs a Messages request (not streamed, Content-Length) holding
 *   "FAKE-AGENT-Q1 TASK", then a streamed one (chunked request body)
 *   holding "FAKE-AGENT-Q2", each with its x-api-key;
 * - "runs a tool": writes fake-agent-edit.txt in its working directory,
 *   env.txt (its whole environment), home.txt (every file under $HOME
 *   with its contents), outside.txt (a connect to each OUTSIDE address
 *   and to 10.0.0.1:80, and what came of it) and netns-INODE.txt (its
 *   network namespace);
 * - sends two more ("FAKE-AGENT-Q3") pipelined on one connection and
 *   reads both answers;
 * - prints "FAKE-AGENT-RESULT one=TEXT1 two=TEXT2 outside=blocked|OPEN
 *   pipelined=ok|WHAT" and exits 0; any failure is said on stderr, exit 1.
 */
#include <sys/types.h>
#include <sys/socket.h>
#include <sys/stat.h>

#include <netinet/in.h>
#include <arpa/inet.h>

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

extern char **environ;

static void __attribute__((noreturn))
die(const char *what)
{
	fprintf(stderr, "fake_agent: %s: %s\n", what, strerror(errno));
	exit(1);
}

static void __attribute__((noreturn))
diex(const char *what)
{
	fprintf(stderr, "fake_agent: %s\n", what);
	exit(1);
}

/* A TCP connection to host:port, within ms; -1 with errno. */
static int
dial(const char *host, int port, int ms)
{
	struct sockaddr_in	 sin;
	struct pollfd		 pfd;
	socklen_t		 len = sizeof(int);
	int			 fd, err = 0;

	memset(&sin, 0, sizeof(sin));
	sin.sin_family = AF_INET;
	sin.sin_port = htons((unsigned short)port);
	if (inet_pton(AF_INET, host, &sin.sin_addr) != 1) {
		errno = EINVAL;
		return -1;
	}
	if ((fd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK, 0)) == -1)
		return -1;
	if (connect(fd, (struct sockaddr *)&sin, sizeof(sin)) == -1) {
		if (errno != EINPROGRESS) {
			err = errno;
			close(fd);
			errno = err;
			return -1;
		}
		pfd.fd = fd;
		pfd.events = POLLOUT;
		if (poll(&pfd, 1, ms) != 1) {
			close(fd);
			errno = ETIMEDOUT;
			return -1;
		}
		getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &len);
		if (err != 0) {
			close(fd);
			errno = err;
			return -1;
		}
	}
	fcntl(fd, F_SETFL, 0);
	return fd;
}

static void
put(int fd, const char *s, size_t len)
{
	ssize_t	n;

	while (len > 0) {
		if ((n = write(fd, s, len)) <= 0)
			die("write");
		s += n;
		len -= (size_t)n;
	}
}

/* Whether the last answer came chunked (a stream passed on as it came). */
static int	answer_chunked;

/* A chunked body in place: its chunks joined; -1 if not whole. */
static int
dechunk(char *s)
{
	char		*in = s, *out = s, *ep;
	unsigned long	 n;

	for (;;) {
		n = strtoul(in, &ep, 16);
		if (ep == in || (ep = strstr(ep, "\r\n")) == NULL)
			return -1;
		in = ep + 2;
		if (n == 0)
			break;
		if (strlen(in) < n + 2)
			return -1;
		memmove(out, in, n);
		out += n;
		in += n + 2;
	}
	*out = '\0';
	return 0;
}

/* The whole answer: status, then the body (Content-Length, or chunked
 * when the proxy passes a stream on as it comes). */
static char *
post(const char *host, int port, const char *key, const char *body,
    int chunked, int *status)
{
	char	head[1024], *resp = NULL, *hdr_end, *cl;
	size_t	len = 0, cap = 0, want;
	ssize_t	n;
	int	fd;

	if ((fd = dial(host, port, 5000)) == -1)
		die("connect to the base URL");
	snprintf(head, sizeof(head), "POST /v1/messages HTTP/1.1\r\n"
	    "Host: %s:%d\r\nContent-Type: application/json\r\n"
	    "anthropic-version: 2023-06-01\r\nx-api-key: %s\r\n"
	    "Authorization: Bearer %s\r\n%s\r\n", host, port, key, key,
	    chunked ? "Transfer-Encoding: chunked\r\n" : "");
	if (!chunked)
		snprintf(head + strlen(head) - 2, sizeof(head) - strlen(head) +
		    2, "Content-Length: %zu\r\n\r\n", strlen(body));
	put(fd, head, strlen(head));
	if (chunked) {
		/* Two chunks, split mid-body. */
		size_t	half = strlen(body) / 2;
		char	sz[32];

		snprintf(sz, sizeof(sz), "%zx\r\n", half);
		put(fd, sz, strlen(sz));
		put(fd, body, half);
		put(fd, "\r\n", 2);
		snprintf(sz, sizeof(sz), "%zx;ext=1\r\n", strlen(body) - half);
		put(fd, sz, strlen(sz));
		put(fd, body + half, strlen(body) - half);
		put(fd, "\r\n0\r\n\r\n", 7);
	} else
		put(fd, body, strlen(body));
	for (;;) {
		if (cap - len < 4096) {
			cap = cap * 2 + 65536;
			if ((resp = realloc(resp, cap + 1)) == NULL)
				die("realloc");
		}
		if ((n = read(fd, resp + len, cap - len)) == -1)
			die("read the answer");
		len += (size_t)n;
		resp[len] = '\0';
		if ((hdr_end = strstr(resp, "\r\n\r\n")) != NULL &&
		    (cl = strcasestr(resp, "Content-Length:")) != NULL &&
		    cl < hdr_end) {
			want = (size_t)strtoul(cl + 15, NULL, 10);
			if (len >= (size_t)(hdr_end + 4 - resp) + want)
				break;
		}
		if (hdr_end != NULL && (cl = strcasestr(resp,
		    "Transfer-Encoding: chunked")) != NULL && cl < hdr_end &&
		    len >= 5 && strcmp(resp + len - 5, "0\r\n\r\n") == 0)
			break;
		if (n == 0)
			diex("the answer ended early");
	}
	close(fd);
	*status = atoi(resp + 9);
	cl = strcasestr(resp, "Transfer-Encoding: chunked");
	answer_chunked = cl != NULL && cl < hdr_end;
	memmove(resp, hdr_end + 4, strlen(hdr_end + 4) + 1);
	if (answer_chunked && dechunk(resp) == -1)
		diex("a chunked answer that does not parse");
	return resp;
}

/*
 * Two requests in one write on one connection (HTTP/1.1 pipelining, as a
 * keep-alive client may do), then both answers, each within 10 s: "ok"
 * when both are 200 and hold want, else what went wrong.
 */
static const char *
post_pair(const char *host, int port, const char *body, const char *want)
{
	static char	 verdict[64];
	char		 req[4096], resp[65536], *p, *hdr_end, *cl;
	size_t		 len = 0, n1;
	struct pollfd	 pfd;
	ssize_t		 n;
	int		 fd, got = 0;

	if ((fd = dial(host, port, 5000)) == -1)
		die("connect to the base URL");
	snprintf(req, sizeof(req), "POST /v1/messages HTTP/1.1\r\n"
	    "Content-Type: application/json\r\nContent-Length: %zu\r\n\r\n"
	    "%s", strlen(body), body);
	n1 = strlen(req);
	if (2 * n1 >= sizeof(req))
		diex("pipelined request too long");
	memmove(req + n1, req, n1 + 1);
	put(fd, req, strlen(req));
	pfd.fd = fd;
	pfd.events = POLLIN;
	while (got < 2) {
		if (poll(&pfd, 1, 10000) != 1) {
			snprintf(verdict, sizeof(verdict), "TIMEOUT-after-%d",
			    got);
			close(fd);
			return verdict;
		}
		if ((n = read(fd, resp + len, sizeof(resp) - 1 - len)) <= 0)
			break;
		len += (size_t)n;
		resp[len] = '\0';
		/* Take every whole answer at the front. */
		while ((hdr_end = strstr(resp, "\r\n\r\n")) != NULL &&
		    (cl = strcasestr(resp, "Content-Length:")) != NULL &&
		    cl < hdr_end) {
			p = hdr_end + 4 + strtoul(cl + 15, NULL, 10);
			if (p > resp + len)
				break;
			if (atoi(resp + 9) != 200 || memmem(resp,
			    (size_t)(p - resp), want, strlen(want)) == NULL) {
				snprintf(verdict, sizeof(verdict), "BAD-%d",
				    got);
				close(fd);
				return verdict;
			}
			got++;
			len -= (size_t)(p - resp);
			memmove(resp, p, len + 1);
		}
	}
	close(fd);
	if (got < 2) {
		snprintf(verdict, sizeof(verdict), "CLOSED-after-%d", got);
		return verdict;
	}
	return "ok";
}

/* Every "text":"..." value in s, joined (the whole answer's, or a
 * stream's deltas). */
static void
texts(const char *s, char *out, size_t outsz)
{
	const char	*p = s, *q;
	size_t		 o = 0, n;

	out[0] = '\0';
	while ((p = strstr(p, "\"text\":\"")) != NULL) {
		p += 8;
		if ((q = strchr(p, '"')) == NULL)
			break;
		n = (size_t)(q - p);
		if (o + n + 1 >= outsz)
			break;
		memcpy(out + o, p, n);
		o += n;
		out[o] = '\0';
		p = q + 1;
	}
}

static void
write_file(const char *name, const char *s)
{
	FILE	*f;

	if ((f = fopen(name, "w")) == NULL)
		die(name);
	fputs(s, f);
	fclose(f);
}

/* Every regular file under dir, named and dumped, into f. */
static void
dump_tree(FILE *f, const char *dir, int depth)
{
	DIR		*d;
	struct dirent	*e;
	struct stat	 st;
	char		 path[PATH_MAX], buf[4096];
	FILE		*g;
	size_t		 n;

	if (depth > 8 || (d = opendir(dir)) == NULL)
		return;
	while ((e = readdir(d)) != NULL) {
		if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0)
			continue;
		snprintf(path, sizeof(path), "%s/%s", dir, e->d_name);
		if (lstat(path, &st) == -1)
			continue;
		if (S_ISDIR(st.st_mode)) {
			dump_tree(f, path, depth + 1);
			continue;
		}
		fprintf(f, "== %s\n", path);
		if (!S_ISREG(st.st_mode) || (g = fopen(path, "r")) == NULL)
			continue;
		while ((n = fread(buf, 1, sizeof(buf), g)) > 0)
			fwrite(buf, 1, n, f);
		fclose(g);
	}
	closedir(d);
}

/* Each outside address, and 10.0.0.1:80: "blocked" if none connects. */
static const char *
outside(int argc, char **argv)
{
	FILE		*f;
	char		 host[64], *colon;
	const char	*verdict = "blocked";
	int		 i, fd;

	if ((f = fopen("outside.txt", "w")) == NULL)
		die("outside.txt");
	for (i = 2; i <= argc; i++) {
		snprintf(host, sizeof(host), "%s", i < argc ? argv[i] :
		    "10.0.0.1:80");
		if ((colon = strrchr(host, ':')) == NULL)
			continue;
		*colon = '\0';
		if ((fd = dial(host, atoi(colon + 1), 2000)) != -1) {
			fprintf(f, "connect %s:%s: CONNECTED\n", host,
			    colon + 1);
			verdict = "OPEN";
			close(fd);
		} else
			fprintf(f, "connect %s:%s: %s\n", host, colon + 1,
			    strerror(errno));
	}
	fclose(f);
	return verdict;
}

int
main(int argc, char **argv)
{
	const char	*url, *key, *home, *verdict, *pipe_verdict;
	char		 host[64], body[2048], one[512], two[512], *ans;
	FILE		*f;
	int		 port, status, i;

	if (argc < 2)
		diex("usage: fake_agent TASK [HOST:PORT ...]");
	if ((url = getenv("ANTHROPIC_BASE_URL")) == NULL ||
	    sscanf(url, "http://%63[0-9.]:%d", host, &port) != 2)
		diex("ANTHROPIC_BASE_URL is not http://ADDRESS:PORT");
	if ((key = getenv("ANTHROPIC_API_KEY")) == NULL)
		key = "";
	snprintf(body, sizeof(body), "{\"model\":\"fake-agent-model\","
	    "\"max_tokens\":64,\"messages\":[{\"role\":\"user\",\"content\":"
	    "\"FAKE-AGENT-Q1 %s\"}]}", argv[1]);
	ans = post(host, port, key, body, 0, &status);
	if (status != 200) {
		fprintf(stderr, "fake_agent: request 1: HTTP %d: %s\n", status,
		    ans);
		return 1;
	}
	texts(ans, one, sizeof(one));
	free(ans);
	snprintf(body, sizeof(body), "{\"model\":\"fake-agent-model\","
	    "\"max_tokens\":64,\"stream\":true,\"messages\":[{\"role\":"
	    "\"user\",\"content\":\"FAKE-AGENT-Q2 after %s\"}]}", one);
	ans = post(host, port, key, body, 1, &status);
	if (status != 200 || strstr(ans, "message_stop") == NULL) {
		fprintf(stderr, "fake_agent: request 2: HTTP %d: %s\n", status,
		    ans);
		return 1;
	}
	texts(ans, two, sizeof(two));
	free(ans);
	/* How the stream came: as it came (chunked) or whole. */
	write_file("stream.txt", answer_chunked ? "chunked\n" : "whole\n");
	snprintf(body, sizeof(body), "{\"model\":\"fake-agent-model\","
	    "\"max_tokens\":64,\"messages\":[{\"role\":\"user\",\"content\":"
	    "\"FAKE-AGENT-Q3\"}]}");
	pipe_verdict = post_pair(host, port, body, "ANSWER-THREE");
	/* The tool: an edit, and what it could see. */
	write_file("fake-agent-edit.txt", "EDITED BY FAKE AGENT\n");
	if ((f = fopen("env.txt", "w")) == NULL)
		die("env.txt");
	for (i = 0; environ[i] != NULL; i++)
		fprintf(f, "%s\n", environ[i]);
	fclose(f);
	if ((home = getenv("HOME")) == NULL)
		diex("no HOME");
	if ((f = fopen("home.txt", "w")) == NULL)
		die("home.txt");
	fprintf(f, "HOME %s\n", home);
	dump_tree(f, home, 0);
	fclose(f);
	/* Which network namespace it ran in: a file named after it. */
	{
		char	ns[64], name[96];
		ssize_t	n;

		if ((n = readlink("/proc/self/ns/net", ns, sizeof(ns) - 1)) ==
		    -1)
			die("readlink /proc/self/ns/net");
		ns[n] = '\0';
		snprintf(name, sizeof(name), "netns-%.*s.txt",
		    (int)strcspn(ns + 5, "]"), ns + 5);
		write_file(name, ns);
	}
	verdict = outside(argc, argv);
	printf("FAKE-AGENT-RESULT one=%s two=%s outside=%s pipelined=%s\n",
	    one, two, verdict, pipe_verdict);
	return 0;
}

/*
 * warren chat [run options] [--continue [RUN] | --resume]: a conversation.
 * Each message is a turn, a run of its own (stored, listed by `warren
 * runs`): the first a plain run, each next one a --continue of the turn
 * before, whose root is given the earlier turns in full
 * (supervisor/run_chat.c). A turn runs in a child forked from here that
 * calls warren run's entry (cmd_run_turn): the live tree view, its
 * Ctrl-C (the turn ends cancelled) and its layer are warren run's (a
 * follow-up goes on in the layer of the turn before). Between
 * turns, commands act on the last turn: /diff /apply /discard /show
 * /report /quit. Lines come from the terminal (cmd_chat_line.c) or, when
 * standard input is not one, one message a line from it.
 */
#include <sys/prctl.h>
#include <sys/wait.h>

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli/cmd.h"
#include "cli/cmd_chat.h"
#include "common/exitcode.h"
#include "common/str.h"
#include "store/store.h"

static void
cmd_chat_usage(FILE *f)
{
	fprintf(f, "usage: warren chat [run options] [--workspace DIR]\n"
	    "                   [--continue [RUN] | --resume]\n"
	    "A conversation: each line you type is a turn, run as `warren run"
	    " --continue`\nof the turn before (the first as `warren run`); the"
	    " orchestrator sees the\nearlier turns' messages and answers. "
	    "Every option of `warren run` but\n--continue, --json, --apply, "
	    "--no-store and TASK applies to each turn.\n--continue [RUN] (or "
	    "--resume: the workspace's latest run) goes on from\nrun RUN's "
	    "conversation.\n"
	    "Between turns:\n"
	    "  /diff [PATH...]   what the turns wrote, not applied yet (warren "
	    "diff)\n"
	    "  /apply [PATH...]  write it into the workspace (warren apply)\n"
	    "  /discard          throw it away (warren discard)\n"
	    "  /show             the last turn's agent tree (warren show)\n"
	    "  /report           its HTML report (warren report)\n"
	    "  /quit             end (also Ctrl-D, or Ctrl-C twice, at an "
	    "empty prompt)\n"
	    "Ctrl-C during a turn stops that turn, not the conversation.\n"
	    "The turns share one copy-on-write layer over the workspace: a "
	    "turn sees\nwhat the turns before it wrote, and /diff, /apply, "
	    "/discard act on all of it.\n");
}

/* Is s a run id or "last" (--continue's optional RUN)? */
static int
cmd_chat_is_run(const char *s)
{
	if (strcmp(s, "last") == 0)
		return 1;
	if (*s == '\0')
		return 0;
	for (; *s != '\0'; s++)
		if (*s < '0' || *s > '9')
			return 0;
	return 1;
}

/* The command line: ours (--continue, --resume), what we read too (--db,
 * --workspace), and the rest handed to every turn. */
static int
cmd_chat_args(int argc, char **argv, struct cmd_chat *c)
{
	int		i;
	const char	*errstr;

	c->fwd = calloc((size_t)argc + 8, sizeof(*c->fwd));
	if (c->fwd == NULL)
		return -1;
	c->fwd[c->nfwd++] = "run";
	for (i = 1; i < argc; i++) {
		const char *s = argv[i];

		if (strcmp(s, "--help") == 0 || strcmp(s, "-h") == 0) {
			cmd_chat_usage(stdout);
			exit(WARREN_EXIT_OK);
		}
		if (strcmp(s, "--continue") == 0 || strcmp(s, "--resume") == 0) {
			c->cont = -1;
			if (s[2] == 'c' && i + 1 < argc && cmd_chat_is_run(argv[i + 1]) &&
			    strcmp(argv[++i], "last") != 0) {
				c->cont = strtonum(argv[i], 1, INT64_MAX, &errstr);
				if (errstr != NULL) {
					fprintf(stderr, "warren chat: --continue: run "
					    "id %s is %s\n", argv[i], errstr);
					return -1;
				}
			}
			continue;
		}
		if (strcmp(s, "--json") == 0 || strcmp(s, "--apply") == 0) {
			fprintf(stderr, "warren chat: %s is warren run's only: "
			    "a conversation shows its turns as they run, and "
			    "/apply writes a turn\n", s);
			return -1;
		}
		if (strcmp(s, "--no-store") == 0) {
			fprintf(stderr, "warren chat: --no-store: a "
			    "conversation's turns are stored runs, each the "
			    "follow-up of the one before (leave it out)\n");
			return -1;
		}
		if ((strcmp(s, "--db") == 0 || strcmp(s, "-w") == 0 ||
		    strcmp(s, "--workspace") == 0) && i + 1 < argc) {
			if (s[2] == 'd')
				c->db = argv[i + 1];
			else
				c->ws = argv[i + 1];
			c->fwd[c->nfwd++] = argv[i++];
		}
		c->fwd[c->nfwd++] = argv[i];
	}
	if (realpath(c->ws != NULL ? c->ws : ".", c->wsreal) == NULL) {
		fprintf(stderr, "warren chat: workspace %s: %s\n",
		    c->ws != NULL ? c->ws : ".", strerror(errno));
		return -1;
	}
	return 0;
}

/* The store, opened for one look: a turn's run writes it meanwhile. */
static struct store *
cmd_chat_store(const struct cmd_chat *c)
{
	struct store	*st;
	char		 path[PATH_MAX], err[STORE_ERRMSG_MAX];

	if (store_path(path, sizeof(path), c->db) == -1) {
		fprintf(stderr, "warren chat: no database path (%s): set HOME"
		    " or XDG_STATE_HOME, or give --db FILE\n", strerror(errno));
		return NULL;
	}
	if ((st = store_open(path, STORE_CREATE, err, sizeof(err))) == NULL)
		fprintf(stderr, "warren chat: %s\n", err);
	return st;
}

/* The run id the turn's child wrote on fd (cmd_run_tell) before it
 * ended; 0 if it wrote none (the run did not start). fd does not block:
 * a process the child left behind may hold the other end. */
static int64_t
cmd_chat_told(int fd)
{
	char		 buf[32];
	const char	*errstr;
	ssize_t		 n;
	int64_t		 id;

	while ((n = read(fd, buf, sizeof(buf) - 1)) == -1 && errno == EINTR)
		;
	if (n <= 0 || buf[n - 1] != '\n')
		return 0;
	buf[n - 1] = '\0';
	id = strtonum(buf, 1, INT64_MAX, &errstr);
	return errstr == NULL ? id : 0;
}

/* fn(argv) in a child, as `warren NAME` would run it; its exit code. The
 * child may set signals, open a store, exit: none of it stays here.
 * tell: the fd the child's run writes its id to (cmd_run_tell), or -1. */
static int
cmd_chat_call(const struct cmd_chat *c, int (*fn)(int, char **), int argc,
    char **argv, int tell)
{
	struct sigaction	 ign, old;
	pid_t			 pid;
	int			 st, null;

	memset(&ign, 0, sizeof(ign));
	ign.sa_handler = SIG_IGN;
	sigaction(SIGINT, &ign, &old);
	fflush(stdout);
	fflush(stderr);
	if ((pid = fork()) == -1) {
		fprintf(stderr, "warren chat: fork: %s\n", strerror(errno));
		sigaction(SIGINT, &old, NULL);
		return WARREN_EXIT_FAIL;
	}
	if (pid == 0) {
		signal(SIGINT, SIG_DFL);
		/* A chat killed (kill -9) ends its turn as SIGTERM does: the
		 * run ends cancelled, stored, and --continue goes on. */
		if (prctl(PR_SET_PDEATHSIG, SIGTERM) == -1 ||
		    getppid() == 1)
			_exit(WARREN_EXIT_FAIL);
		/* Piped: the next lines are ours, not the turn's. */
		if (!c->tty && (null = open("/dev/null", O_RDONLY)) != -1) {
			dup2(null, STDIN_FILENO);
			close(null);
		}
		optind = 0;
		if (tell != -1)
			cmd_run_tell(tell);
		st = fn(argc, argv);
		fflush(stdout);
		_exit(st);
	}
	while (waitpid(pid, &st, 0) == -1 && errno == EINTR)
		;
	sigaction(SIGINT, &old, NULL);
	if (WIFEXITED(st))
		return WEXITSTATUS(st);
	return WARREN_EXIT_FAIL;
}

/*
 * A message: one turn. Its run is the one the child names (cmd_run_tell),
 * not the workspace's newest: another `warren run` in the workspace may
 * have begun after it (test_chat_concurrent_run).
 */
static void
cmd_chat_turn(struct cmd_chat *c, const char *msg)
{
	char	 id[32];
	char	**argv;
	int	 n = c->nfwd, code, fd[2];
	int64_t	 got;

	if (pipe2(fd, O_CLOEXEC | O_NONBLOCK) == -1) {
		fprintf(stderr, "warren chat: pipe: %s (the turn is not run)\n",
		    strerror(errno));
		return;
	}

	if ((argv = calloc((size_t)n + 6, sizeof(*argv))) == NULL) {
		fprintf(stderr, "warren chat: out of memory\n");
		close(fd[0]);
		close(fd[1]);
		return;
	}
	memcpy(argv, c->fwd, (size_t)n * sizeof(*argv));
	if (c->last > 0) {
		snprintf(id, sizeof(id), "%lld", (long long)c->last);
		argv[n++] = "--continue";
		argv[n++] = "--";
		argv[n++] = id;
	} else
		argv[n++] = "--";
	argv[n++] = (char *)(uintptr_t)msg;
	code = cmd_chat_call(c, cmd_run_turn, n, argv, fd[1]);
	free(argv);
	close(fd[1]);
	got = cmd_chat_told(fd[0]);
	close(fd[0]);
	if (got > 0 && got != c->last)
		c->last = got;
	else
		fprintf(stderr, "warren chat: that turn did not start (exit "
		    "%d); the conversation goes on from run %lld\n", code,
		    (long long)c->last);
}

/* /NAME [ARG...] on the last turn: warren NAME [--db FILE] RUN [ARG...] */
static void
cmd_chat_on_turn(struct cmd_chat *c, const char *name,
    int (*fn)(int, char **), char *args)
{
	char	*argv[70], id[32], *tok, *save = NULL;
	int	 n = 0;

	if (c->last <= 0) {
		fprintf(stderr, "warren chat: /%s: no turn yet\n", name);
		return;
	}
	argv[n++] = (char *)(uintptr_t)name;
	if (c->db != NULL) {
		argv[n++] = "--db";
		argv[n++] = (char *)(uintptr_t)c->db;
	}
	snprintf(id, sizeof(id), "%lld", (long long)c->last);
	argv[n++] = id;
	for (tok = strtok_r(args, " \t", &save); tok != NULL && n < 68;
	    tok = strtok_r(NULL, " \t", &save))
		argv[n++] = tok;
	argv[n] = NULL;
	(void)cmd_chat_call(c, fn, n, argv, -1);
}

static const struct {
	const char	*name;
	int		(*fn)(int, char **);
} cmd_chat_cmds[] = {
	{ "diff", cmd_diff }, { "apply", cmd_apply },
	{ "discard", cmd_discard }, { "show", cmd_show },
	{ "report", cmd_report },
};

/* A line: a command, or a message. 1 to quit. */
static int
cmd_chat_dispatch(struct cmd_chat *c, char *line)
{
	size_t	 i, len;
	char	*p, *args;

	for (p = line; *p == ' ' || *p == '\t'; p++)
		;
	if (*p == '\0')
		return 0;
	if (*p != '/') {
		cmd_chat_turn(c, p);
		return 0;
	}
	len = strcspn(p + 1, " \t");
	args = p + 1 + len + (p[1 + len] != '\0');
	p[1 + len] = '\0';
	if (strcmp(p + 1, "quit") == 0 || strcmp(p + 1, "exit") == 0)
		return 1;
	for (i = 0; i < sizeof(cmd_chat_cmds) / sizeof(cmd_chat_cmds[0]); i++)
		if (strcmp(p + 1, cmd_chat_cmds[i].name) == 0) {
			cmd_chat_on_turn(c, cmd_chat_cmds[i].name,
			    cmd_chat_cmds[i].fn, args);
			return 0;
		}
	fprintf(stderr, "warren chat: unknown command /%s: /diff, /apply, "
	    "/discard, /show, /report, /quit (a message starting with / "
	    "is sent as \" /...\")\n", p + 1);
	return 0;
}

/* --continue [RUN] / --resume: the turn to go on from. */
static int
cmd_chat_resume(struct cmd_chat *c)
{
	struct store		*st;
	struct store_run	 r;
	int			 rc = 0;

	if (c->cont == 0)
		return 0;
	if ((st = cmd_chat_store(c)) == NULL)
		return -1;
	c->last = c->cont;
	if (c->cont == -1 && store_run_latest(st, c->wsreal, &c->last) == -1)
		rc = -1;
	else if (store_run_get(st, c->last, &r) == -1)
		rc = -1;
	else
		store_run_free(&r);
	if (rc == -1 && c->cont == -1)
		fprintf(stderr, "warren chat: --continue: no run to go on from "
		    "in %s: %s\n", c->wsreal, store_errmsg(st));
	else if (rc == -1)
		fprintf(stderr, "warren chat: --continue: run %lld: %s\n",
		    (long long)c->cont, store_errmsg(st));
	else
		printf("(going on from run %lld)\n", (long long)c->last);
	store_close(st);
	return rc;
}

int
cmd_chat(int argc, char **argv)
{
	struct cmd_chat	 c;
	char		*line;
	int		 code = WARREN_EXIT_OK;

	memset(&c, 0, sizeof(c));
	c.tty = isatty(STDIN_FILENO) && isatty(STDOUT_FILENO);
	if (cmd_chat_args(argc, argv, &c) == -1) {
		free(c.fwd);
		return WARREN_EXIT_USAGE;
	}
	if (cmd_chat_resume(&c) == -1) {
		free(c.fwd);
		return WARREN_EXIT_USAGE;
	}
	cmd_chat_line_init(&c);
	while ((line = cmd_chat_line_read(&c)) != NULL) {
		if (c.tty)
			cmd_chat_line_history(&c, line);
		if (cmd_chat_dispatch(&c, line)) {
			free(line);
			break;
		}
		free(line);
	}
	cmd_chat_line_end(&c);
	free(c.fwd);
	return code;
}

/*
 * The workspace tools on a temporary workspace: what each returns, its
 * errors, and every way a path could leave the workspace ("..", absolute
 * paths, symlinks to files and directories outside).
 */
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/un.h>
#include <sys/wait.h>

#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "worker/hold.h"
#include "worker/tool_int.h"
#include "worker/tools.h"
#include "worker/tools_testapi.h"

struct fixture {
	char		ws[64];		/* the workspace */
	char		out[64];	/* a sibling directory: "outside" */
	struct tool_ctx	ctx;
};

static void
put(const char *dir, const char *rel, const char *text)
{
	char	path[512], *slash;
	FILE	*f;

	snprintf(path, sizeof(path), "%s/%s", dir, rel);
	for (slash = strchr(path + strlen(dir) + 1, '/'); slash != NULL;
	    slash = strchr(slash + 1, '/')) {
		*slash = '\0';
		mkdir(path, 0755);
		*slash = '/';
	}
	f = fopen(path, "w");
	assert_non_null(f);
	fputs(text, f);
	fclose(f);
}

static char *
get(const char *dir, const char *rel)
{
	static char	buf[65536];
	char		path[512];
	FILE		*f;
	size_t		n;

	snprintf(path, sizeof(path), "%s/%s", dir, rel);
	if ((f = fopen(path, "r")) == NULL)
		return NULL;
	n = fread(buf, 1, sizeof(buf) - 1, f);
	buf[n] = '\0';
	fclose(f);
	return buf;
}

static int
setup(void **state)
{
	struct fixture	*fx = calloc(1, sizeof(*fx));
	char		 err[256], path[512];
	static const char bin[] = "ELF\0\1\2binary";
	FILE		*f;

	/* A failed test may have left these on. */
	tool_path_force_fallback(0);
	tool_file_skip_look(0);
	strcpy(fx->ws, "/tmp/warren-ws-XXXXXX");
	strcpy(fx->out, "/tmp/warren-out-XXXXXX");
	if (mkdtemp(fx->ws) == NULL || mkdtemp(fx->out) == NULL)
		return -1;
	put(fx->ws, "src/main.c", "#include <stdio.h>\nint\nmain(void)\n{\n"
	    "\tputs(\"hello\");\n\treturn 0;\n}\n");
	put(fx->ws, "src/util/str.c", "int strlen2(const char *s);\n"
	    "/* TODO: faster */\n");
	put(fx->ws, "src/util/str.h", "int strlen2(const char *s);\n");
	put(fx->ws, "README.md", "Hello world\nTODO: docs\n");
	put(fx->ws, ".git/config", "TODO secret in git\n");
	put(fx->out, "secret.txt", "TOP SECRET TODO\n");
	snprintf(path, sizeof(path), "%s/bin.dat", fx->ws);
	f = fopen(path, "w");
	fwrite(bin, 1, sizeof(bin), f);
	fclose(f);
	/* links out of the workspace, and one that stays inside */
	snprintf(path, sizeof(path), "%s/secret.txt", fx->out);
	symlink(path, strcat(strcpy(err, fx->ws), "/leak.txt"));
	symlink(fx->out, strcat(strcpy(err, fx->ws), "/outdir"));
	symlink("src/main.c", strcat(strcpy(err, fx->ws), "/main-link.c"));
	if (tool_ctx_open(&fx->ctx, fx->ws, err, sizeof(err)) == -1)
		return -1;
	*state = fx;
	return 0;
}

static int
teardown(void **state)
{
	struct fixture	*fx = *state;
	char		 cmd[256];

	tool_ctx_close(&fx->ctx);
	snprintf(cmd, sizeof(cmd), "rm -rf %s %s", fx->ws, fx->out);
	if (system(cmd) != 0)
		return -1;
	free(fx);
	return 0;
}

/* Run a tool; the result's text is returned (static), is_error in *err. */
static const char *
run(struct fixture *fx, const char *tool, const char *args, int *is_error)
{
	static char		text[70000];
	struct tool_result	r;

	assert_int_equal(tools_run(&fx->ctx, tool, args, &r), 0);
	assert_non_null(r.text);
	strlcpy(text, r.text, sizeof(text));
	if (is_error != NULL)
		*is_error = r.is_error;
	tool_result_free(&r);
	return text;
}

static const char *
ok(struct fixture *fx, const char *tool, const char *args)
{
	int		 e;
	const char	*t = run(fx, tool, args, &e);

	if (e)
		fail_msg("%s %s: unexpected error: %s", tool, args, t);
	return t;
}

static const char *
bad(struct fixture *fx, const char *tool, const char *args)
{
	int		 e;
	const char	*t = run(fx, tool, args, &e);

	if (!e)
		fail_msg("%s %s: expected an error, got: %s", tool, args, t);
	return t;
}

static void
test_read(void **state)
{
	struct fixture	*fx = *state;
	const char	*t;
	char		 args[256];

	t = ok(fx, "read", "{\"path\":\"src/main.c\"}");
	assert_non_null(strstr(t, "     1\t#include <stdio.h>\n"));
	assert_non_null(strstr(t, "     7\t}\n"));
	t = ok(fx, "read", "{\"path\":\"src/main.c\",\"offset\":3,\"limit\":2}");
	assert_string_equal(t, "     3\tmain(void)\n     4\t{\n"
	    "[stopped at line 4; read on with offset=5]\n");
	/* the workspace's own absolute path is fine */
	snprintf(args, sizeof(args), "{\"path\":\"%s/README.md\"}", fx->ws);
	assert_non_null(strstr(ok(fx, "read", args), "Hello world"));
	/* a symlink that stays inside */
	assert_non_null(strstr(ok(fx, "read", "{\"path\":\"main-link.c\"}"),
	    "puts"));
	assert_non_null(strstr(bad(fx, "read", "{\"path\":\"bin.dat\"}"),
	    "binary file"));
	assert_string_equal(bad(fx, "read", "{\"path\":\"src\"}"),
	    "read: src is a directory; use list");
	assert_string_equal(bad(fx, "write", "{\"path\":\"src\","
	    "\"content\":\"x\"}"), "write: src is a directory");
	assert_non_null(strstr(bad(fx, "read", "{\"path\":\"nope.c\"}"),
	    "no such file"));
	assert_non_null(strstr(bad(fx, "read",
	    "{\"path\":\"README.md\",\"offset\":50}"), "past the end"));
	assert_non_null(strstr(bad(fx, "read", "{\"path\":3}"),
	    "must be a string"));
	assert_non_null(strstr(bad(fx, "read", "{\"path\":\"README.md\","
	    "\"limit\":0}"), "at least 1"));
}

static void
test_escapes(void **state)
{
	struct fixture	*fx = *state;
	const char	*t;
	char		 args[256];

	t = bad(fx, "read", "{\"path\":\"../../etc/passwd\"}");
	assert_non_null(strstr(t, "outside the workspace"));
	t = bad(fx, "read", "{\"path\":\"src/../../x\"}");
	assert_non_null(strstr(t, "outside the workspace"));
	t = bad(fx, "read", "{\"path\":\"/etc/passwd\"}");
	assert_non_null(strstr(t, "outside the workspace"));
	t = bad(fx, "read", "{\"path\":\"leak.txt\"}");
	assert_non_null(strstr(t, "outside the workspace"));
	assert_null(strstr(t, "TOP SECRET"));
	t = bad(fx, "read", "{\"path\":\"outdir/secret.txt\"}");
	assert_non_null(strstr(t, "outside the workspace"));
	/* the prefix of the root is not the root */
	snprintf(args, sizeof(args), "{\"path\":\"%s-evil/x\"}", fx->ws);
	assert_non_null(strstr(bad(fx, "read", args), "outside"));
	/* writes are refused the same way, and nothing appears outside */
	bad(fx, "write", "{\"path\":\"../escape.txt\",\"content\":\"x\"}");
	bad(fx, "write", "{\"path\":\"outdir/new.txt\",\"content\":\"x\"}");
	bad(fx, "write", "{\"path\":\"leak.txt\",\"content\":\"pwned\"}");
	assert_null(get(fx->out, "new.txt"));
	assert_string_equal(get(fx->out, "secret.txt"), "TOP SECRET TODO\n");
	bad(fx, "edit", "{\"path\":\"leak.txt\",\"old_string\":\"TOP\","
	    "\"new_string\":\"x\"}");
	assert_string_equal(get(fx->out, "secret.txt"), "TOP SECRET TODO\n");
	bad(fx, "list", "{\"path\":\"outdir\"}");
	bad(fx, "list", "{\"path\":\"..\"}");
	bad(fx, "glob", "{\"pattern\":\"*\",\"path\":\"..\"}");
	bad(fx, "grep", "{\"pattern\":\"SECRET\",\"path\":\"/tmp\"}");
	/* walks do not follow links out, nor into .git */
	t = ok(fx, "grep", "{\"pattern\":\"SECRET\"}");
	assert_non_null(strstr(t, "no matches"));
	t = ok(fx, "glob", "{\"pattern\":\"**/secret.txt\"}");
	assert_non_null(strstr(t, "no files match"));
}

static void
test_write_edit(void **state)
{
	struct fixture	*fx = *state;
	const char	*t;

	t = ok(fx, "write", "{\"path\":\"new/deep/dir/f.txt\","
	    "\"content\":\"one\\ntwo two\\n\"}");
	assert_non_null(strstr(t, "wrote 12 bytes to new/deep/dir/f.txt "
	    "(created)"));
	assert_string_equal(get(fx->ws, "new/deep/dir/f.txt"), "one\ntwo two\n");
	t = ok(fx, "write", "{\"path\":\"new/deep/dir/f.txt\","
	    "\"content\":\"one\\ntwo two\\n\"}");
	assert_non_null(strstr(t, "(overwritten)"));
	t = bad(fx, "edit", "{\"path\":\"new/deep/dir/f.txt\","
	    "\"old_string\":\"two\",\"new_string\":\"2\"}");
	assert_non_null(strstr(t, "occurs 2 times"));
	t = bad(fx, "edit", "{\"path\":\"new/deep/dir/f.txt\","
	    "\"old_string\":\"three\",\"new_string\":\"3\"}");
	assert_non_null(strstr(t, "not found"));
	t = ok(fx, "edit", "{\"path\":\"new/deep/dir/f.txt\","
	    "\"old_string\":\"one\",\"new_string\":\"1\"}");
	assert_non_null(strstr(t, "1 replacement"));
	t = ok(fx, "edit", "{\"path\":\"new/deep/dir/f.txt\","
	    "\"old_string\":\"two\",\"new_string\":\"2\",\"replace_all\":true}");
	assert_non_null(strstr(t, "2 replacements"));
	assert_string_equal(get(fx->ws, "new/deep/dir/f.txt"), "1\n2 2\n");
	bad(fx, "edit", "{\"path\":\"new/deep/dir/f.txt\","
	    "\"old_string\":\"\",\"new_string\":\"2\"}");
	bad(fx, "edit", "{\"path\":\"new/deep/dir/f.txt\","
	    "\"old_string\":\"1\",\"new_string\":\"1\"}");
	bad(fx, "edit", "{\"path\":\"bin.dat\","
	    "\"old_string\":\"ELF\",\"new_string\":\"x\"}");
}

/* Writes go through a temporary file and rename: mode kept (set-id bits
 * dropped), symlinks kept, hard links cut, nothing left behind. */
static void
test_write_atomic(void **state)
{
	struct fixture	*fx = *state;
	struct stat	 st, st2;
	char		 path[512], path2[512];

	snprintf(path, sizeof(path), "%s/run.sh", fx->ws);
	put(fx->ws, "run.sh", "echo old\n");
	chmod(path, 0750);
	ok(fx, "edit", "{\"path\":\"run.sh\",\"old_string\":\"old\","
	    "\"new_string\":\"new\"}");
	assert_string_equal(get(fx->ws, "run.sh"), "echo new\n");
	assert_int_equal(stat(path, &st), 0);
	assert_int_equal(st.st_mode & 07777, 0750);
	ok(fx, "write", "{\"path\":\"run.sh\",\"content\":\"x\"}");
	assert_int_equal(stat(path, &st), 0);
	assert_int_equal(st.st_mode & 07777, 0750);
	/* through a symlink inside: the target changes, the link stays */
	ok(fx, "edit", "{\"path\":\"main-link.c\",\"old_string\":"
	    "\"hello\",\"new_string\":\"bye\"}");
	assert_non_null(strstr(get(fx->ws, "src/main.c"), "bye"));
	snprintf(path, sizeof(path), "%s/main-link.c", fx->ws);
	assert_int_equal(lstat(path, &st), 0);
	assert_true(S_ISLNK(st.st_mode));
	/* a hard link is cut: the other name keeps the old content */
	snprintf(path, sizeof(path), "%s/README.md", fx->ws);
	snprintf(path2, sizeof(path2), "%s/README.link", fx->ws);
	assert_int_equal(link(path, path2), 0);
	ok(fx, "edit", "{\"path\":\"README.md\",\"old_string\":\"docs\","
	    "\"new_string\":\"manual\"}");
	assert_int_equal(stat(path, &st), 0);
	assert_int_equal(stat(path2, &st2), 0);
	assert_int_not_equal(st.st_ino, st2.st_ino);
	assert_int_equal(st.st_nlink, 1);
	assert_non_null(strstr(get(fx->ws, "README.md"), "manual"));
	assert_string_equal(get(fx->ws, "README.link"),
	    "Hello world\nTODO: docs\n");
	/* set-id and sticky bits are not carried over to the new content */
	snprintf(path, sizeof(path), "%s/run.sh", fx->ws);
	assert_int_equal(chmod(path, 07755), 0);
	ok(fx, "write", "{\"path\":\"run.sh\",\"content\":\"y\"}");
	assert_int_equal(stat(path, &st), 0);
	assert_int_equal(st.st_mode & 07777, 0755);
	/* no temporary file left */
	assert_non_null(strstr(ok(fx, "glob", "{\"pattern\":\"*warren-*\"}"),
	    "no files match"));
}

/* How many times needle occurs in hay. */
static int
count_of(const char *hay, const char *needle)
{
	int	n = 0;

	while ((hay = strstr(hay, needle)) != NULL) {
		n++;
		hay += strlen(needle);
	}
	return n;
}

/* A tool that blocks on a FIFO would hang the suite: die fast instead. */
#define HANG_GUARD_S	20

static void
mkfifo_in(const char *dir, const char *rel)
{
	char	path[512];

	snprintf(path, sizeof(path), "%s/%s", dir, rel);
	if (mkfifo(path, 0644) == -1 && errno != EEXIST)
		fail_msg("mkfifo %s: %s", path, strerror(errno));
}

/* A unix socket's file (the socket itself is closed: the file stays). */
static void
mksock_in(const char *dir, const char *rel)
{
	struct sockaddr_un	sun;
	int			s;

	memset(&sun, 0, sizeof(sun));
	sun.sun_family = AF_UNIX;
	snprintf(sun.sun_path, sizeof(sun.sun_path), "%s/%s", dir, rel);
	assert_true((s = socket(AF_UNIX, SOCK_STREAM, 0)) >= 0);
	if (bind(s, (struct sockaddr *)&sun, sizeof(sun)) == -1 &&
	    errno != EADDRINUSE)
		fail_msg("bind %s: %s", sun.sun_path, strerror(errno));
	close(s);
}

/* p and d/p FIFOs, d/s a socket, d/f.txt a file, plink -> p; and d/null,
 * a character device, where we may make one (root). 1 if it was made. */
static int
special_plant(struct fixture *fx)
{
	char	path[512];

	put(fx->ws, "d/f.txt", "FIFO-NEIGHBOUR\n");
	mkfifo_in(fx->ws, "p");
	mkfifo_in(fx->ws, "d/p");
	mksock_in(fx->ws, "d/s");
	snprintf(path, sizeof(path), "%s/plink", fx->ws);
	symlink("p", path);
	snprintf(path, sizeof(path), "%s/d/null", fx->ws);
	return mknod(path, S_IFCHR | 0666, makedev(1, 3)) == 0;
}

/*
 * SANDBOX-TESTS.md 46: FIFOs, sockets and devices in the workspace. read,
 * edit, write and grep of one fail at once with a message naming what it
 * is; grep and glob walk past them; list marks them. alarm() turns a hang
 * into a failure.
 */
static void
special_files(struct fixture *fx)
{
	const char	*t;
	struct stat	 st;
	char		 path[512];
	int		 dev;

	alarm(HANG_GUARD_S);
	dev = special_plant(fx);
	assert_non_null(strstr(bad(fx, "read", "{\"path\":\"p\"}"),
	    "read: p is a FIFO, not a regular file; refused"));
	assert_non_null(strstr(bad(fx, "read", "{\"path\":\"d/s\"}"),
	    "read: d/s is a socket, not a regular file"));
	assert_non_null(strstr(bad(fx, "read", "{\"path\":\"plink\"}"),
	    "read: plink is a FIFO"));
	assert_non_null(strstr(bad(fx, "edit", "{\"path\":\"p\","
	    "\"old_string\":\"a\",\"new_string\":\"b\"}"),
	    "edit: p is a FIFO, not a regular file"));
	assert_non_null(strstr(bad(fx, "edit", "{\"path\":\"d/s\","
	    "\"old_string\":\"a\",\"new_string\":\"b\"}"), "is a socket"));
	assert_non_null(strstr(bad(fx, "write", "{\"path\":\"p\","
	    "\"content\":\"x\"}"), "write: p is a FIFO, not a regular file"));
	assert_non_null(strstr(bad(fx, "write", "{\"path\":\"plink\","
	    "\"content\":\"x\"}"), "write: plink is a FIFO"));
	assert_non_null(strstr(bad(fx, "edit", "{\"path\":\"plink\","
	    "\"old_string\":\"a\",\"new_string\":\"b\"}"),
	    "edit: plink is a FIFO"));
	assert_non_null(strstr(bad(fx, "write", "{\"path\":\"d/s\","
	    "\"content\":\"x\"}"), "write: d/s is a socket"));
	snprintf(path, sizeof(path), "%s/d/s", fx->ws);
	assert_int_equal(lstat(path, &st), 0);
	assert_true(S_ISSOCK(st.st_mode));
	snprintf(path, sizeof(path), "%s/p", fx->ws);
	assert_int_equal(lstat(path, &st), 0);
	assert_true(S_ISFIFO(st.st_mode));
	assert_non_null(strstr(bad(fx, "grep", "{\"pattern\":\"x\","
	    "\"path\":\"p\"}"), "grep: p is a FIFO, not a regular file"));
	assert_non_null(strstr(bad(fx, "grep", "{\"pattern\":\"x\","
	    "\"path\":\"d/s\"}"), "d/s is a socket"));
	t = ok(fx, "grep", "{\"pattern\":\"NEIGHBOUR\",\"path\":\"d\"}");
	assert_string_equal(t, "d/f.txt:1:FIFO-NEIGHBOUR\n");
	t = ok(fx, "grep", "{\"pattern\":\"NEIGHBOUR\"}");
	assert_non_null(strstr(t, "d/f.txt:1:FIFO-NEIGHBOUR\n"));
	assert_int_equal(count_of(t, "FIFO-NEIGHBOUR"), 1);
	assert_string_equal(ok(fx, "glob", "{\"pattern\":\"*\","
	    "\"path\":\"d\"}"), "d/f.txt\n");
	t = ok(fx, "glob", "{\"pattern\":\"**\"}");
	assert_null(strstr(t, "d/p\n"));
	assert_null(strstr(t, "d/s\n"));
	assert_null(strstr(t, "d/null\n"));
	assert_null(strstr(t, "\np\n"));
	assert_true(strncmp(t, "p\n", 2) != 0);
	assert_non_null(strstr(t, "d/f.txt\n"));
	t = ok(fx, "list", "{\"path\":\"d\"}");
	assert_non_null(strstr(t, "f.txt\t15\n"));
	assert_non_null(strstr(t, "p\t(a FIFO)\ns\t(a socket)\n"));
	if (dev) {
		assert_non_null(strstr(t, "null\t(a character device)\n"));
		assert_non_null(strstr(bad(fx, "read",
		    "{\"path\":\"d/null\"}"), "d/null is a character device"));
	}
	assert_non_null(strstr(bad(fx, "list", "{\"path\":\"p\"}"),
	    "list: p: "));
	alarm(0);
}

static void
test_special_files(void **state)
{
	special_files(*state);
}

static void
test_special_files_fallback(void **state)
{
	tool_path_force_fallback(1);
	special_files(*state);
	tool_path_force_fallback(0);
}

/* As if each file were swapped for the FIFO after the look: the check on
 * the opened descriptor holds alone, and the open does not block. */
static void
test_special_files_no_look(void **state)
{
	tool_file_skip_look(1);
	special_files(*state);
	tool_file_skip_look(0);
}

/* pid's state letter in /proc/PID/stat ('?' if unreadable). */
static char
proc_state(pid_t pid)
{
	char	path[64], buf[256], *p, c = '?';
	FILE	*f;

	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	if ((f = fopen(path, "r")) == NULL)
		return c;
	if (fgets(buf, sizeof(buf), f) != NULL &&
	    (p = strrchr(buf, ')')) != NULL && p[1] == ' ')
		c = p[2];
	fclose(f);
	return c;
}

/*
 * The tools do not even open a FIFO: a writer blocked in open(2) on it,
 * which any reader's open would release, stays blocked through read, edit,
 * write and grep of it and a grep and glob of the tree.
 */
static void
test_special_not_opened(void **state)
{
	struct fixture	*fx = *state;
	char		 path[512];
	pid_t		 pid, w;
	int		 i, status;

	alarm(HANG_GUARD_S);
	mkfifo_in(fx->ws, "p");
	snprintf(path, sizeof(path), "%s/p", fx->ws);
	if ((pid = fork()) == 0) {
		/* Not left behind blocked when the test fails. */
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		alarm(HANG_GUARD_S);
		_exit(open(path, O_WRONLY) == -1 ? errno : 0);
	}
	assert_true(pid > 0);
	for (i = 0; i < 2000 && proc_state(pid) != 'S'; i++)
		usleep(1000);
	if (proc_state(pid) != 'S')
		fail_msg("waited 2 s for the FIFO's writer (pid %d) to block "
		    "in its open: state %c", (int)pid, proc_state(pid));
	bad(fx, "read", "{\"path\":\"p\"}");
	bad(fx, "edit", "{\"path\":\"p\",\"old_string\":\"a\","
	    "\"new_string\":\"b\"}");
	bad(fx, "write", "{\"path\":\"p\",\"content\":\"x\"}");
	bad(fx, "grep", "{\"pattern\":\"x\",\"path\":\"p\"}");
	ok(fx, "grep", "{\"pattern\":\"x\"}");
	ok(fx, "glob", "{\"pattern\":\"**\"}");
	/* An opened FIFO would have let it go within microseconds. */
	for (i = 0; i < 200; i++) {
		w = waitpid(pid, &status, WNOHANG);
		if (w == pid)
			fail_msg("a tool opened the FIFO: its writer went on");
		usleep(1000);
	}
	kill(pid, SIGKILL);
	/* After SIGKILL: it ends. */
	assert_int_equal(waitpid(pid, &status, 0), pid);
	alarm(0);
}

/* tool_file_open leaves a regular file's descriptor blocking. */
static void
test_file_open_blocking(void **state)
{
	struct fixture	*fx = *state;
	struct stat	 st;
	int		 fd;

	fd = tool_file_open(&fx->ctx, "README.md", O_RDONLY, 0, &st);
	assert_true(fd >= 0);
	assert_true(S_ISREG(st.st_mode));
	assert_int_equal(fcntl(fd, F_GETFL) & O_NONBLOCK, 0);
	close(fd);
	mkfifo_in(fx->ws, "p");
	assert_int_equal(tool_file_open(&fx->ctx, "p", O_RDONLY, 0, &st), -1);
	assert_int_equal(errno, EINVAL);
	assert_true(S_ISFIFO(st.st_mode));
	assert_int_equal(tool_file_open(&fx->ctx, "src", O_RDONLY, 0, &st), -1);
	assert_int_equal(errno, EISDIR);
}

/*
 * SANDBOX-TESTS.md 47: a hard link in the workspace to a file outside it.
 * write and edit replace the name with a new file; the file outside keeps
 * its content. Where the new file cannot be made (a symlink to the link,
 * a directory without write permission) the write is refused.
 */
static void
hard_link(struct fixture *fx)
{
	char		out[512], in[512], in2[512], lnk[512], ro[512];
	struct stat	st;

	put(fx->out, "hl.txt", "OUTSIDE ORIGINAL\n");
	snprintf(out, sizeof(out), "%s/hl.txt", fx->out);
	snprintf(in, sizeof(in), "%s/hl.txt", fx->ws);
	snprintf(in2, sizeof(in2), "%s/hl2.txt", fx->ws);
	assert_int_equal(link(out, in), 0);
	assert_int_equal(link(out, in2), 0);
	ok(fx, "write", "{\"path\":\"hl.txt\",\"content\":\"agent text\\n\"}");
	assert_string_equal(get(fx->ws, "hl.txt"), "agent text\n");
	assert_int_equal(lstat(in, &st), 0);
	assert_int_equal(st.st_nlink, 1);
	ok(fx, "edit", "{\"path\":\"hl2.txt\",\"old_string\":\"OUTSIDE\","
	    "\"new_string\":\"INSIDE\"}");
	assert_string_equal(get(fx->ws, "hl2.txt"), "INSIDE ORIGINAL\n");
	assert_string_equal(get(fx->out, "hl.txt"), "OUTSIDE ORIGINAL\n");
	/* A symlink inside to a hard link: no rename, and no write in place. */
	assert_int_equal(unlink(in), 0);
	assert_int_equal(link(out, in), 0);
	snprintf(lnk, sizeof(lnk), "%s/hl-sym", fx->ws);
	assert_int_equal(symlink("hl.txt", lnk), 0);
	assert_non_null(strstr(bad(fx, "write", "{\"path\":\"hl-sym\","
	    "\"content\":\"x\"}"), "write: hl-sym has 2 hard links"));
	assert_non_null(strstr(bad(fx, "edit", "{\"path\":\"hl-sym\","
	    "\"old_string\":\"OUTSIDE\",\"new_string\":\"x\"}"),
	    "edit: hl-sym has 2 hard links"));
	assert_string_equal(get(fx->out, "hl.txt"), "OUTSIDE ORIGINAL\n");
	/* A directory where no new file can be made (root ignores modes). */
	if (geteuid() != 0) {
		snprintf(ro, sizeof(ro), "%s/ro", fx->ws);
		assert_int_equal(mkdir(ro, 0755), 0);
		strlcat(ro, "/hl.txt", sizeof(ro));
		assert_int_equal(link(out, ro), 0);
		ro[strlen(ro) - 7] = '\0';
		assert_int_equal(chmod(ro, 0555), 0);
		assert_non_null(strstr(bad(fx, "write", "{\"path\":"
		    "\"ro/hl.txt\",\"content\":\"x\"}"), "has 3 hard links"));
		assert_int_equal(chmod(ro, 0755), 0);
		assert_string_equal(get(fx->out, "hl.txt"),
		    "OUTSIDE ORIGINAL\n");
	}
}

static void
test_hard_link(void **state)
{
	hard_link(*state);
}

static void
test_hard_link_fallback(void **state)
{
	tool_path_force_fallback(1);
	hard_link(*state);
	tool_path_force_fallback(0);
}

static void
test_list(void **state)
{
	struct fixture	*fx = *state;
	const char	*t;

	t = ok(fx, "list", "{}");
	assert_non_null(strstr(t, "README.md\t23\n"));
	assert_non_null(strstr(t, "src/\n"));
	assert_non_null(strstr(t, "leak.txt@\n"));
	t = ok(fx, "list", "{\"path\":\"src/util\"}");
	assert_string_equal(t, "str.c\t47\nstr.h\t28\n");
	bad(fx, "list", "{\"path\":\"README.md\"}");
}

/* A directory whose entries take several getdents64 reads: all are seen,
 * sorted. */
static void
test_glob_big_dir(void **state)
{
	struct fixture	*fx = *state;
	const char	*t, *p;
	char		 rel[128], first[128], last[128];
	int		 i, n;

	for (i = 0; i < 400; i++) {
		snprintf(rel, sizeof(rel), "many/f%03d-%s.txt", 399 - i,
		    "abcdefghijklmnopqrstuvwxyz0123456789");
		put(fx->ws, rel, "x\n");
	}
	t = ok(fx, "glob", "{\"pattern\":\"many/*.txt\"}");
	for (n = 0, p = t; (p = strchr(p, '\n')) != NULL; p++)
		n++;
	assert_int_equal(n, 400);
	snprintf(first, sizeof(first), "many/f000-%s.txt\n",
	    "abcdefghijklmnopqrstuvwxyz0123456789");
	snprintf(last, sizeof(last), "many/f399-%s.txt\n",
	    "abcdefghijklmnopqrstuvwxyz0123456789");
	assert_memory_equal(t, first, strlen(first));
	assert_string_equal(t + strlen(t) - strlen(last), last);
}

static void
test_glob(void **state)
{
	struct fixture	*fx = *state;
	const char	*t;

	t = ok(fx, "glob", "{\"pattern\":\"**/*.c\"}");
	assert_string_equal(t, "main-link.c\nsrc/main.c\nsrc/util/str.c\n");
	t = ok(fx, "glob", "{\"pattern\":\"*.h\"}");
	assert_string_equal(t, "src/util/str.h\n");
	t = ok(fx, "glob", "{\"pattern\":\"src/*.c\"}");
	assert_string_equal(t, "src/main.c\n");
	t = ok(fx, "glob", "{\"pattern\":\"util/*\",\"path\":\"src\"}");
	assert_string_equal(t, "src/util/str.c\nsrc/util/str.h\n");
	t = ok(fx, "glob", "{\"pattern\":\"src/**/str.?\"}");
	assert_string_equal(t, "src/util/str.c\nsrc/util/str.h\n");
	t = ok(fx, "glob", "{\"pattern\":\"config\"}");
	assert_non_null(strstr(t, "no files match"));	/* .git skipped */
	/* many ** are matched in polynomial time, too many * refused */
	assert_true(tool_glob_match("**/**/**/**/**/**/**/**/**/**/**/**/z",
	    "a/a/a/a/a/a/a/a/a/a/a/a/a/a/a/a/a/a/a/a/a/a/a/a/a/a/a/a/a/a/z"));
	assert_false(tool_glob_match("**/**/**/**/**/**/**/**/**/**/**/**/z",
	    "a/a/a/a/a/a/a/a/a/a/a/a/a/a/a/a/a/a/a/a/a/a/a/a/a/a/a/a/a/a/y"));
	assert_non_null(strstr(bad(fx, "glob", "{\"pattern\":"
	    "\"*a*a*a*a*a*a*a*a*a*a*a*a*a*a*a*a*a*b\"}"), "too complex"));
	assert_non_null(strstr(bad(fx, "grep", "{\"pattern\":\"x\","
	    "\"include\":\"*.c,*a*a*a*a*a*a*a*a*a*a*a*a*a*a*a*a*a*b\"}"),
	    "too complex"));
	bad(fx, "glob", "{\"pattern\":\"\"}");
}

/* .gitignore: honoured by glob and grep unless include_ignored; nested
 * files, negation, anchoring, directories only, **; a hostile one is
 * bounded and cannot crash the walk. */
static void
test_gitignore(void **state)
{
	struct fixture	*fx = *state;
	const char	*t;
	char		 big[IGNORE_FILE_MAX + 4096], *p;
	size_t		 i;

	put(fx->ws, "g/.gitignore", "# build output\n*.o\nbuild/\n/top.txt\n"
	    "!keep.o\ndeep/**/gen.c\n\\#hash\n");
	put(fx->ws, "g/a.o", "NEEDLE\n");
	put(fx->ws, "g/keep.o", "NEEDLE\n");
	put(fx->ws, "g/build/CMakeCache.txt", "NEEDLE\n");
	put(fx->ws, "g/top.txt", "NEEDLE\n");
	put(fx->ws, "g/sub/top.txt", "NEEDLE\n");
	put(fx->ws, "g/sub/.gitignore", "*.log\n");
	put(fx->ws, "g/sub/x.log", "NEEDLE\n");
	put(fx->ws, "g/deep/a/b/gen.c", "NEEDLE\n");
	put(fx->ws, "g/#hash", "NEEDLE\n");
	put(fx->ws, "g/src.c", "NEEDLE\n");
	t = ok(fx, "glob", "{\"pattern\":\"**\",\"path\":\"g\"}");
	assert_string_equal(t, "g/.gitignore\ng/keep.o\ng/src.c\n"
	    "g/sub/.gitignore\ng/sub/top.txt\n");
	t = ok(fx, "grep", "{\"pattern\":\"NEEDLE\",\"path\":\"g\"}");
	assert_string_equal(t, "g/keep.o:1:NEEDLE\ng/src.c:1:NEEDLE\n"
	    "g/sub/top.txt:1:NEEDLE\n");
	/* From below: the rules of the directories above still apply. */
	t = ok(fx, "grep", "{\"pattern\":\"NEEDLE\",\"path\":\"g/sub\"}");
	assert_string_equal(t, "g/sub/top.txt:1:NEEDLE\n");
	/* include_ignored: everything (but .git). */
	t = ok(fx, "glob", "{\"pattern\":\"**/*\",\"path\":\"g\","
	    "\"include_ignored\":true}");
	assert_non_null(strstr(t, "g/build/CMakeCache.txt\n"));
	assert_non_null(strstr(t, "g/a.o\n"));
	assert_non_null(strstr(t, "g/deep/a/b/gen.c\n"));
	t = ok(fx, "grep", "{\"pattern\":\"NEEDLE\",\"path\":\"g\","
	    "\"include_ignored\":true}");
	assert_non_null(strstr(t, "g/sub/x.log:1:NEEDLE\n"));
	/* A file named is searched even if ignored. */
	t = ok(fx, "grep", "{\"pattern\":\"NEEDLE\",\"path\":\"g/a.o\"}");
	assert_string_equal(t, "g/a.o:1:NEEDLE\n");
	/* Hostile: huge, long lines, costly patterns, a link, no newline. */
	for (p = big, i = 0; i + 64 < sizeof(big) - 1; i += 32)
		p += sprintf(p, "%s\n", i % 64 ? "*a*a*a*a*a*a*a*a*a*a*a*a*a*a*a*a*a*a"
		    : "!x/**/**/**/**/y");
	memset(p, 'z', big + sizeof(big) - 1 - p);
	big[sizeof(big) - 1] = '\0';
	put(fx->ws, "h/.gitignore", big);
	put(fx->ws, "h/f.c", "NEEDLE\n");
	t = ok(fx, "grep", "{\"pattern\":\"NEEDLE\",\"path\":\"h\"}");
	assert_string_equal(t, "h/f.c:1:NEEDLE\n");
	/* A .gitignore that is a link is not followed. */
	put(fx->ws, "l/a.o", "NEEDLE\n");
	snprintf(big, sizeof(big), "%s/l/.gitignore", fx->ws);
	assert_int_equal(symlink("../g/.gitignore", big), 0);
	t = ok(fx, "grep", "{\"pattern\":\"NEEDLE\",\"path\":\"l\"}");
	assert_string_equal(t, "l/a.o:1:NEEDLE\n");
}

static void
test_grep(void **state)
{
	struct fixture	*fx = *state;
	const char	*t;

	t = ok(fx, "grep", "{\"pattern\":\"TODO\"}");
	assert_string_equal(t, "README.md:2:TODO: docs\n"
	    "src/util/str.c:2:/* TODO: faster */\n"
	    "[skipped 1 binary files, 0 files over 32 MiB]\n");
	t = ok(fx, "grep", "{\"pattern\":\"todo\",\"ignore_case\":true,"
	    "\"include\":\"*.c\"}");
	assert_string_equal(t, "src/util/str.c:2:/* TODO: faster */\n");
	t = ok(fx, "grep", "{\"pattern\":\"strlen2\","
	    "\"exclude\":\"*.h, *.dat\"}");
	assert_string_equal(t, "src/util/str.c:1:int strlen2(const char *s);\n");
	t = ok(fx, "grep", "{\"pattern\":\"^\\\\s+return\",\"path\":\"src\"}");
	assert_string_equal(t, "src/main.c:6:\treturn 0;\n");
	/* a match across lines is reported per line, as grep does */
	t = ok(fx, "grep", "{\"pattern\":\"int\\\\s+main\"}");
	assert_non_null(strstr(t, "no matches"));
	t = ok(fx, "grep", "{\"pattern\":\"binary\"}");
	assert_non_null(strstr(t, "skipped 1 binary"));
	t = ok(fx, "grep", "{\"pattern\":\"o\",\"max_results\":2}");
	assert_non_null(strstr(t, "stopped after 2 matching lines"));
	t = ok(fx, "grep", "{\"pattern\":\"puts\",\"path\":\"src/main.c\"}");
	assert_string_equal(t, "src/main.c:5:\tputs(\"hello\");\n");
	assert_non_null(strstr(bad(fx, "grep", "{\"pattern\":\"(\"}"),
	    "bad pattern"));
}

/* Dead: no such process, or a zombie nobody reaped (PID 1 in a container
 * may not reap). */
static int
gone(pid_t pid)
{
	char	path[64], buf[256], *p;
	FILE	*f;
	int	dead = 1;

	if (kill(pid, 0) == -1)
		return 1;
	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	if ((f = fopen(path, "r")) == NULL)
		return 1;
	if (fgets(buf, sizeof(buf), f) != NULL &&
	    (p = strrchr(buf, ')')) != NULL)
		dead = p[2] == 'Z' || p[2] == 'X';
	fclose(f);
	return dead;
}

static void
test_bash(void **state)
{
	struct fixture		*fx = *state;
	struct tool_result	 r;
	char			 args[256], *p;
	pid_t			 bg;
	int			 i;

	assert_int_equal(tools_run(&fx->ctx, "bash",
	    "{\"command\":\"pwd; echo err >&2; exit 3\"}", &r), 0);
	assert_non_null(strstr(r.text, fx->ws));
	assert_non_null(strstr(r.text, "err\n"));
	assert_non_null(strstr(r.text, "[exit status 3]"));
	assert_int_equal(r.exit_status, 3);
	assert_int_equal(r.is_error, 0);
	tool_result_free(&r);

	/* a timeout kills the whole group, background children included */
	assert_int_equal(tools_run(&fx->ctx, "bash", "{\"command\":"
	    "\"sleep 60 & echo $!; sleep 60\",\"timeout_ms\":300}", &r), 0);
	assert_int_equal(r.is_error, 1);
	assert_int_equal(r.exit_status, -1);
	assert_non_null(strstr(r.text, "timeout after 300 ms"));
	bg = (pid_t)strtol(r.text, NULL, 10);
	assert_true(bg > 0);
	tool_result_free(&r);
	for (i = 0; i < 500 && !gone(bg); i++)
		usleep(10000);
	if (!gone(bg))
		fail_msg("waited 5 s for the timed-out shell's background "
		    "sleep (pid %d) to be killed", (int)bg);

	/* a background child left behind by a finished shell is killed */
	assert_int_equal(tools_run(&fx->ctx, "bash",
	    "{\"command\":\"sleep 60 & echo $!\"}", &r), 0);
	assert_non_null(strstr(r.text, "[exit status 0]"));
	bg = (pid_t)strtol(r.text, NULL, 10);
	tool_result_free(&r);
	for (i = 0; i < 500 && !gone(bg); i++)
		usleep(10000);
	if (!gone(bg))
		fail_msg("waited 5 s for the finished shell's background "
		    "sleep (pid %d) to be killed", (int)bg);

	/*
	 * The worker is pid 1 of its namespace, so the orphans of a shell
	 * come to it: one that left the group and exited is reaped, not
	 * left a zombie (a subreaper stands in for pid 1 here).
	 */
	assert_int_equal(prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0), 0);
	assert_int_equal(tools_run(&fx->ctx, "bash", "{\"command\":"
	    "\"(setsid sh -c 'echo $$' &); sleep 0.3\"}", &r), 0);
	assert_non_null(strstr(r.text, "[exit status 0]"));
	assert_true(strtol(r.text, NULL, 10) > 0);
	tool_result_free(&r);
	errno = 0;
	assert_int_equal(waitpid(-1, NULL, WNOHANG), -1);
	assert_int_equal(errno, ECHILD);
	assert_int_equal(prctl(PR_SET_CHILD_SUBREAPER, 0, 0, 0, 0), 0);

	/* output capped: head and tail kept, the cut said */
	fx->ctx.max_output = 1000;
	assert_int_equal(tools_run(&fx->ctx, "bash", "{\"command\":"
	    "\"echo FIRST; seq 1 100000; echo LAST\"}", &r), 0);
	fx->ctx.max_output = TOOLS_DEFAULT_MAX_OUTPUT;
	assert_true(strncmp(r.text, "FIRST\n", 6) == 0);
	assert_non_null(strstr(r.text, "LAST\n[exit status 0]"));
	assert_non_null((p = strstr(r.text, "bytes of output cut")));
	assert_true(strlen(r.text) < 1200);
	tool_result_free(&r);

	/* invalid UTF-8 and NUL bytes come back as escapes */
	assert_int_equal(tools_run(&fx->ctx, "bash",
	    "{\"command\":\"printf 'a\\\\377b\\\\000c'\"}", &r), 0);
	assert_true(strncmp(r.text, "a\\xffb\\x00c", 11) == 0);
	tool_result_free(&r);

	snprintf(args, sizeof(args), "{\"command\":\"\"}");
	bad(fx, "bash", args);
	(void)p;
}

/*
 * Under the sandbox's RLIMIT_FSIZE, with SIGXFSZ ignored as the worker
 * ignores it (worker/main.c): the write tool's write past the limit fails
 * and says so; a bash command meets the limit as in a shell, killed by
 * SIGXFSZ (status 153), since the worker gives it the default back
 * (tool_bash.c). Without that, it inherited the worker's SIG_IGN.
 */
static void
test_fsize(void **state)
{
	static const char	 head[] = "{\"path\":\"big.txt\",\"content\":\"";
	struct fixture		*fx = *state;
	struct tool_result	 w, b;
	struct rlimit		 old, rl;
	char			*args;
	size_t			 n = 100000;
	int			 wrc, brc;

	assert_non_null(args = malloc(sizeof(head) + n + 3));
	memcpy(args, head, sizeof(head) - 1);
	memset(args + sizeof(head) - 1, 'x', n);
	memcpy(args + sizeof(head) - 1 + n, "\"}", 3);
	assert_int_equal(getrlimit(RLIMIT_FSIZE, &old), 0);
	rl = old;
	rl.rlim_cur = 65536;
	assert_true(signal(SIGXFSZ, SIG_IGN) != SIG_ERR);
	assert_int_equal(setrlimit(RLIMIT_FSIZE, &rl), 0);
	/* Both run before any assertion: the limit goes back first. */
	wrc = tools_run(&fx->ctx, "write", args, &w);
	brc = tools_run(&fx->ctx, "bash", "{\"command\":\"head -c 100000 "
	    "/dev/zero > big.bin; echo status=$?\"}", &b);
	assert_int_equal(setrlimit(RLIMIT_FSIZE, &old), 0);
	assert_true(signal(SIGXFSZ, SIG_DFL) != SIG_ERR);
	free(args);
	assert_int_equal(wrc, 0);
	assert_int_equal(brc, 0);
	if (!w.is_error || strstr(w.text, "File too large") == NULL)
		fail_msg("write past RLIMIT_FSIZE: %s", w.text);
	if (strstr(b.text, "status=153") == NULL)
		fail_msg("bash past RLIMIT_FSIZE: %s", b.text);
	tool_result_free(&w);
	tool_result_free(&b);
}

static void
test_not_workspace_tools(void **state)
{
	struct fixture	*fx = *state;

	assert_non_null(strstr(bad(fx, "todo", "{\"todos\":[]}"),
	    "agent core"));
	assert_non_null(strstr(bad(fx, "delegate", "{\"task\":\"x\"}"),
	    "supervisor"));
	assert_non_null(strstr(bad(fx, "plan_execute", "{\"task\":\"x\"}"),
	    "runs in the orchestrator only: use delegate"));
	assert_non_null(strstr(bad(fx, "fly", "{}"), "unknown tool"));
	assert_non_null(strstr(bad(fx, "read", "{\"path\":"), "not valid JSON"));
	assert_false(tools_parallel_safe("bash"));
	assert_false(tools_parallel_safe("write"));
	assert_true(tools_parallel_safe("grep"));
}

static void
test_batch(void **state)
{
	struct fixture		*fx = *state;
	struct agent_call	 c[6];
	struct tool_result	 r[6];
	size_t			 i;

	memset(c, 0, sizeof(c));
	c[0].name = "read";
	c[0].args = "{\"path\":\"README.md\"}";
	c[0].parallel = 1;
	c[1].name = "grep";
	c[1].args = "{\"pattern\":\"puts\"}";
	c[1].parallel = 1;
	c[2].name = "write";
	c[2].args = "{\"path\":\"b.txt\",\"content\":\"batch\"}";
	c[3].name = "read";			/* sees the write before it */
	c[3].args = "{\"path\":\"b.txt\"}";
	c[3].parallel = 1;
	c[4].name = "glob";
	c[4].args = "{\"pattern\":\"b.*\"}";
	c[4].parallel = 1;
	c[5].name = "delegate";
	c[5].kind = AGENT_CALL_DELEGATE;
	c[5].args = "{\"task\":\"x\"}";
	assert_int_equal(tools_run_batch(&fx->ctx, c, 6, r), 0);
	assert_non_null(strstr(r[0].text, "Hello world"));
	assert_non_null(strstr(r[1].text, "src/main.c:5:"));
	assert_non_null(strstr(r[2].text, "wrote 5 bytes"));
	assert_string_equal(r[3].text, "     1\tbatch\n");
	assert_string_equal(r[4].text, "b.txt\n");
	assert_int_equal(r[5].is_error, 1);
	for (i = 0; i < 6; i++)
		tool_result_free(&r[i]);
}

static void
progress_count(void *arg)
{
	atomic_fetch_add((atomic_int *)arg, 1);
}

/*
 * The walk under glob and grep ticks the progress hook, from every thread
 * of a batch; through a hold (worker/hold.h) the ticks release what was
 * held exactly once when the hold has ended, never before.
 */
static void
test_progress(void **state)
{
	struct fixture		*fx = *state;
	struct agent_call	 c[3];
	struct tool_result	 r[3];
	struct hold		 h;
	atomic_int		 ticks, released;
	size_t			 i;

	atomic_init(&ticks, 0);
	fx->ctx.progress = progress_count;
	fx->ctx.progress_arg = &ticks;
	ok(fx, "glob", "{\"pattern\":\"**/*.c\"}");
	assert_true(atomic_load(&ticks) >= 5);	/* src, main.c, util, ... */
	memset(c, 0, sizeof(c));
	for (i = 0; i < 3; i++) {
		c[i].name = i == 1 ? "glob" : "grep";
		c[i].args = i == 1 ? "{\"pattern\":\"**/*.h\"}" :
		    "{\"pattern\":\"TODO\"}";
		c[i].parallel = 1;
	}
	atomic_init(&released, 0);
	hold_init(&h, progress_count, &released);
	fx->ctx.progress = hold_progress;	/* as the worker does */
	fx->ctx.progress_arg = &h;
	hold_arm(&h, 0, UINT64_MAX / 2);	/* never ends */
	assert_int_equal(tools_run_batch(&fx->ctx, c, 3, r), 0);
	hold_disarm(&h);
	assert_int_equal(atomic_load(&released), 0);
	for (i = 0; i < 3; i++)
		tool_result_free(&r[i]);
	hold_arm(&h, 0, 0);			/* already over */
	assert_int_equal(tools_run_batch(&fx->ctx, c, 3, r), 0);
	hold_disarm(&h);
	assert_int_equal(atomic_load(&released), 1);
	for (i = 0; i < 3; i++)
		tool_result_free(&r[i]);
	hold_free(&h);
	fx->ctx.progress = NULL;
	/* Only tools that start no program may hold their calls back. */
	assert_true(tools_in_process("read") && tools_in_process("glob") &&
	    tools_in_process("grep") && tools_in_process("list") &&
	    tools_in_process("write") && tools_in_process("edit"));
	assert_false(tools_in_process("bash"));
	assert_false(tools_in_process("delegate"));
	assert_false(tools_in_process("complete"));
	assert_false(tools_in_process("nonesuch"));
}

/* Many parallel calls give exactly what the same calls give one by one. */
static void
test_batch_parallel_same(void **state)
{
	struct fixture		*fx = *state;
	struct agent_call	 c[24];
	struct tool_result	 r[24], one;
	static const char	*args[] = {
		"{\"path\":\"src/main.c\"}", "{\"pattern\":\"TODO\"}",
		"{\"pattern\":\"**/*.c\"}", "{\"path\":\"src\"}",
	};
	static const char	*names[] = { "read", "grep", "glob", "list" };
	size_t			 i;

	memset(c, 0, sizeof(c));
	for (i = 0; i < 24; i++) {
		c[i].name = names[i % 4];
		c[i].args = args[i % 4];
		c[i].parallel = 1;
	}
	fx->ctx.max_threads = 8;
	assert_int_equal(tools_run_batch(&fx->ctx, c, 24, r), 0);
	for (i = 0; i < 24; i++) {
		assert_int_equal(tools_run(&fx->ctx, c[i].name, c[i].args,
		    &one), 0);
		assert_string_equal(r[i].text, one.text);
		assert_int_equal(r[i].is_error, one.is_error);
		tool_result_free(&one);
		tool_result_free(&r[i]);
	}
}

/* The fallback without openat2 (seccomp denies it in read-only profiles):
 * the same answers, symlinks inside followed, anything leaving refused. */
static void
test_open_fallback(void **state)
{
	struct fixture	*fx = *state;
	char		 buf[256], path[512];
	ssize_t		 n;
	int		 fd;

	fd = tool_open_walk(&fx->ctx, "src/util/str.c", O_RDONLY, 0);
	assert_true(fd >= 0);
	close(fd);
	fd = tool_open_walk(&fx->ctx, "./src//main.c", O_RDONLY, 0);
	assert_true(fd >= 0);
	close(fd);
	/* ".." that stays inside, and a relative symlink inside */
	fd = tool_open_walk(&fx->ctx, "src/../README.md", O_RDONLY, 0);
	assert_true(fd >= 0);
	close(fd);
	fd = tool_open_walk(&fx->ctx, "main-link.c", O_RDONLY, 0);
	assert_true(fd >= 0);
	n = read(fd, buf, sizeof(buf) - 1);
	assert_true(n > 0);
	buf[n] = '\0';
	assert_non_null(strstr(buf, "#include"));
	close(fd);
	/* an absolute symlink to a place inside the root */
	snprintf(path, sizeof(path), "%s/src/abs-link", fx->ws);
	snprintf(buf, sizeof(buf), "%s/src/util", fx->ws);
	assert_int_equal(symlink(buf, path), 0);
	fd = tool_open_walk(&fx->ctx, "src/abs-link/str.h", O_RDONLY, 0);
	assert_true(fd >= 0);
	close(fd);
	/* leaving: "..", symlinks to files and directories outside, loops */
	assert_int_equal(tool_open_walk(&fx->ctx, "../x", O_RDONLY, 0), -1);
	assert_int_equal(errno, EXDEV);
	assert_int_equal(tool_open_walk(&fx->ctx, "src/../../x", O_RDONLY, 0),
	    -1);
	assert_int_equal(errno, EXDEV);
	assert_int_equal(tool_open_walk(&fx->ctx, "leak.txt", O_RDONLY, 0),
	    -1);
	assert_int_equal(errno, EXDEV);
	assert_int_equal(tool_open_walk(&fx->ctx, "outdir/secret.txt",
	    O_RDONLY, 0), -1);
	assert_int_equal(errno, EXDEV);
	snprintf(path, sizeof(path), "%s/up", fx->ws);
	assert_int_equal(symlink("src/../..", path), 0);
	assert_int_equal(tool_open_walk(&fx->ctx, "up/etc/passwd", O_RDONLY,
	    0), -1);
	assert_int_equal(errno, EXDEV);
	snprintf(path, sizeof(path), "%s/loop", fx->ws);
	assert_int_equal(symlink("loop", path), 0);
	assert_int_equal(tool_open_walk(&fx->ctx, "loop", O_RDONLY, 0), -1);
	assert_int_equal(errno, ELOOP);
	assert_int_equal(tool_open_walk(&fx->ctx, "nope/x", O_RDONLY, 0), -1);
	assert_int_equal(errno, ENOENT);
	/* creating through the fallback */
	fd = tool_open_walk(&fx->ctx, "src/new.txt", O_WRONLY | O_CREAT, 0644);
	assert_true(fd >= 0);
	close(fd);
	assert_int_equal(tool_open_walk(&fx->ctx, "outdir/new.txt",
	    O_WRONLY | O_CREAT, 0644), -1);
	assert_null(get(fx->out, "new.txt"));
}

/* The whole escape suite again, as a read-only sandbox runs it: without
 * openat2. */
static void
test_escapes_fallback(void **state)
{
	tool_path_force_fallback(1);
	test_read(state);
	test_escapes(state);
	test_write_edit(state);
	test_grep(state);
	tool_path_force_fallback(0);
}

static void
test_ctx_open(void **state)
{
	struct tool_ctx	ctx;
	char		err[256];

	(void)state;
	assert_int_equal(tool_ctx_open(&ctx, "/nonexistent/ws", err,
	    sizeof(err)), -1);
	assert_non_null(strstr(err, "/nonexistent/ws"));
	assert_int_equal(tool_ctx_open(&ctx, "/etc/passwd", err, sizeof(err)),
	    -1);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_read, setup, teardown),
		cmocka_unit_test_setup_teardown(test_escapes, setup, teardown),
		cmocka_unit_test_setup_teardown(test_write_edit, setup,
		    teardown),
		cmocka_unit_test_setup_teardown(test_write_atomic, setup,
		    teardown),
		cmocka_unit_test_setup_teardown(test_special_files, setup,
		    teardown),
		cmocka_unit_test_setup_teardown(test_special_files_fallback,
		    setup, teardown),
		cmocka_unit_test_setup_teardown(test_special_files_no_look,
		    setup, teardown),
		cmocka_unit_test_setup_teardown(test_special_not_opened, setup,
		    teardown),
		cmocka_unit_test_setup_teardown(test_file_open_blocking, setup,
		    teardown),
		cmocka_unit_test_setup_teardown(test_hard_link, setup,
		    teardown),
		cmocka_unit_test_setup_teardown(test_hard_link_fallback, setup,
		    teardown),
		cmocka_unit_test_setup_teardown(test_list, setup, teardown),
		cmocka_unit_test_setup_teardown(test_glob, setup, teardown),
		cmocka_unit_test_setup_teardown(test_glob_big_dir, setup,
		    teardown),
		cmocka_unit_test_setup_teardown(test_grep, setup, teardown),
		cmocka_unit_test_setup_teardown(test_gitignore, setup,
		    teardown),
		cmocka_unit_test_setup_teardown(test_bash, setup, teardown),
		cmocka_unit_test_setup_teardown(test_fsize, setup, teardown),
		cmocka_unit_test_setup_teardown(test_not_workspace_tools,
		    setup, teardown),
		cmocka_unit_test_setup_teardown(test_batch, setup, teardown),
		cmocka_unit_test_setup_teardown(test_batch_parallel_same, setup,
		    teardown),
		cmocka_unit_test_setup_teardown(test_progress, setup, teardown),
		cmocka_unit_test_setup_teardown(test_open_fallback, setup,
		    teardown),
		cmocka_unit_test_setup_teardown(test_escapes_fallback, setup,
		    teardown),
		cmocka_unit_test(test_ctx_open),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}

/*
 * A warning about an agent file (a tool warren lacks: WebFetch in a file
 * written for Claude Code) is said once per version of the file, not by
 * every command that loads the profiles (run, queue add, queue apply,
 * profiles). A version is the SHA-256 of the file's path and text; the
 * versions already warned about are kept in the state directory
 * ($XDG_STATE_HOME/warren/agent-warnings, a hex key a line), never in the
 * workspace, which agents write. An edited file is a new version and is
 * warned about again. The list is believed only when it is a regular
 * file of ours that no one else may write; otherwise it is replaced. Without a state directory, or one that cannot be
 * written, every command warns, as before.
 */
#include <sys/stat.h>

#include <errno.h>
#include <fcntl.h>
#include <sha2.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli/project.h"
#include "common/log.h"
#include "common/path.h"
#include "common/xdg.h"

#define AGENT_WARN_MAX	(256 * 1024)	/* the list starts over past it */
#define AGENT_WARN_KEY	65		/* 64 hex digits and a NUL */

/* The file's key: SHA-256 of path, a NUL, then its text. */
static void
agent_warn_key(const char *file, const char *text, size_t len,
    char key[AGENT_WARN_KEY])
{
	SHA2_CTX	ctx;

	SHA256Init(&ctx);
	SHA256Update(&ctx, (const uint8_t *)file, strlen(file) + 1);
	SHA256Update(&ctx, (const uint8_t *)text, len);
	SHA256End(&ctx, key);
}

/* Is key a line of list? */
static int
agent_warn_has(const char *list, const char *key)
{
	const char	*p;

	for (p = list; p != NULL && (p = strstr(p, key)) != NULL; p++)
		if ((p == list || p[-1] == '\n') && p[AGENT_WARN_KEY - 1] ==
		    '\n')
			return 1;
	return 0;
}

/*
 * A list to believe: a regular file of ours that no one else may write
 * (a file another user gave us, or one a group may write, could say a
 * warning was given when it was not). O_NONBLOCK: a FIFO put there must
 * not hold the command.
 */
static int
agent_warn_open_list(const char *path, int flags, struct stat *sb)
{
	int	fd;

	if ((fd = open(path, flags | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC,
	    0600)) == -1)
		return -1;
	if (fstat(fd, sb) == -1 || !S_ISREG(sb->st_mode) ||
	    sb->st_uid != geteuid() || (sb->st_mode & 022) != 0) {
		close(fd);
		errno = EPERM;
		return -2;
	}
	return fd;
}

/* Read the list at aw->path into aw->seen ("" when there is none). */
static void
agent_warn_read(struct agent_warn *aw)
{
	struct stat	 sb;
	ssize_t		 n;
	size_t		 got = 0;
	int		 fd;

	if ((fd = agent_warn_open_list(aw->path, O_RDONLY, &sb)) == -2) {
		aw->restart = 1;	/* not ours: a new list */
		return;
	}
	if (fd == -1)
		return;
	if (sb.st_size > AGENT_WARN_MAX) {
		aw->restart = 1;	/* too long: a new list */
		close(fd);
		return;
	}
	if ((aw->seen = calloc(1, sb.st_size + 1)) == NULL) {
		close(fd);
		return;
	}
	while (got < (size_t)sb.st_size && (n = read(fd, aw->seen + got,
	    sb.st_size - got)) > 0)
		got += n;
	close(fd);
}

void
agent_warn_open(struct agent_warn *aw)
{
	memset(aw, 0, sizeof(*aw));
	if (xdg_state_dir(aw->path, sizeof(aw->path)) == -1 ||
	    strlcat(aw->path, "/agent-warnings", sizeof(aw->path)) >=
	    sizeof(aw->path)) {
		aw->path[0] = '\0';
		return;
	}
	agent_warn_read(aw);
}

/* Remember key; said on failure, once (the warning was printed). */
static void
agent_warn_note(struct agent_warn *aw, const char *key)
{
	struct stat	 sb;
	char		 dir[sizeof(aw->path)], line[AGENT_WARN_KEY + 1];
	char		*slash;
	int		 fd, flags = O_WRONLY | O_CREAT;

	flags |= aw->restart ? O_TRUNC : O_APPEND;
	/* A list not to believe (another's, a FIFO) is replaced, not
	 * written through. */
	if (aw->restart)
		(void)unlink(aw->path);
	strlcpy(dir, aw->path, sizeof(dir));
	if ((slash = strrchr(dir, '/')) != NULL) {
		*slash = '\0';
		(void)path_mkdirs(dir, 0700, 0);
	}
	if ((fd = agent_warn_open_list(aw->path, flags, &sb)) < 0) {
		if (!aw->failed)
			log_warn("%s: warnings about agent files are not "
			    "remembered, every command repeats them",
			    aw->path);
		aw->failed = 1;
		return;
	}
	aw->restart = 0;
	/* One write of the whole line: commands running at once append
	 * whole lines (O_APPEND). */
	snprintf(line, sizeof(line), "%s\n", key);
	if (write(fd, line, AGENT_WARN_KEY) != AGENT_WARN_KEY)
		log_warn("%s", aw->path);
	close(fd);
}

void
agent_warn_file(void *arg, const char *file, const char *text, size_t len,
    const char *msg)
{
	struct agent_warn	*aw = arg;
	char			 key[AGENT_WARN_KEY];

	if (aw->path[0] == '\0') {
		log_warnx("%s", msg);
		return;
	}
	agent_warn_key(file, text, len, key);
	if (agent_warn_has(aw->seen, key))
		return;		/* said by an earlier command */
	log_warnx("%s", msg);
	if (strcmp(aw->noted, key) == 0)
		return;		/* this command's own, noted */
	agent_warn_note(aw, key);
	strlcpy(aw->noted, key, sizeof(aw->noted));
}

void
agent_warn_close(struct agent_warn *aw)
{
	free(aw->seen);
	aw->seen = NULL;
}

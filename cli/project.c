/*
 * A project's own config, read only when trusted (cli/project.h).
 */
#include <sys/stat.h>

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <sha2.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "agent/profile.h"
#include "cli/project.h"
#include "common/config.h"
#include "common/log.h"
#include "common/str.h"
#include "common/xdg.h"
#include "store/store.h"

#define PROJECT_CONFIG_MAX	(1024 * 1024)

/* Append to pr->why, "; " between parts, cut where it is full. */
static void __attribute__((format(printf, 2, 3)))
project_why(struct project *pr, const char *fmt, ...)
{
	size_t	used = strlen(pr->why);
	va_list	ap;

	if (used + 3 >= sizeof(pr->why))
		return;
	if (used > 0) {
		strlcat(pr->why, "; ", sizeof(pr->why));
		used += 2;
	}
	va_start(ap, fmt);
	vsnprintf(pr->why + used, sizeof(pr->why) - used, fmt, ap);
	va_end(ap);
}

/* What is found where a project file goes and cannot be read: in
 * .claude, .claude/agents is skipped; elsewhere the project is unsafe. */
static void __attribute__((format(printf, 2, 3)))
project_refuse(struct project *pr, const char *fmt, ...)
{
	char	msg[PROJECT_WHY_MAX];
	va_list	ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	if (pr->in_claude) {
		if (!pr->claude_skip)
			strlcpy(pr->claude_why, msg, sizeof(pr->claude_why));
		pr->claude_skip = 1;
		return;
	}
	pr->unsafe = 1;
	project_why(pr, "%s", msg);
}

/* Read all of fd (a regular file of at most max bytes) into *text. */
static int
project_slurp(int fd, size_t max, char **text, size_t *len)
{
	char	*buf;
	size_t	 got = 0;
	ssize_t	 n;

	if ((buf = malloc(max + 2)) == NULL)
		return -1;
	while (got <= max) {
		if ((n = read(fd, buf + got, max + 1 - got)) == -1) {
			if (errno == EINTR)
				continue;
			free(buf);
			return -1;
		}
		if (n == 0)
			break;
		got += (size_t)n;
	}
	if (got > max) {
		free(buf);
		errno = EFBIG;
		return -1;
	}
	buf[got] = '\0';
	*text = buf;
	*len = got;
	return 0;
}

/*
 * One file, dirfd/name, shown as rel. A file that is not there is
 * skipped; a symlink, a special file, one too large or one past pr->cap
 * is refused (project_refuse: the project unsafe, never trusted, never
 * read; in .claude, .claude/agents skipped). -1 on an I/O error.
 */
static int
project_add(struct project *pr, int dirfd, const char *name, const char *rel,
    size_t max, char *err, size_t errlen)
{
	struct project_file	*f, *nv;
	struct stat		 sb;
	int			 fd;

	fd = openat(dirfd, name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK |
	    O_CLOEXEC | O_NOCTTY);
	if (fd == -1 && errno == ENOENT)
		return 0;
	if (fd == -1 && errno == ELOOP) {
		project_refuse(pr, "%s is a symlink", rel);
		return 0;
	}
	if (fd == -1 || fstat(fd, &sb) == -1) {
		snprintf(err, errlen, "%s/%s: %s", pr->workspace, rel,
		    strerror(errno));
		if (fd != -1)
			close(fd);
		return -1;
	}
	if (!S_ISREG(sb.st_mode) || (size_t)sb.st_size > max ||
	    pr->nfiles == pr->cap) {
		project_refuse(pr, "%s is %s", rel, !S_ISREG(sb.st_mode) ?
		    "not a regular file" : pr->nfiles == pr->cap ?
		    "one file too many" : "too large");
		close(fd);
		return 0;
	}
	if ((nv = reallocarray(pr->files, pr->nfiles + 1, sizeof(*nv))) ==
	    NULL) {
		close(fd);
		snprintf(err, errlen, "project config: out of memory");
		return -1;
	}
	pr->files = nv;
	f = &pr->files[pr->nfiles];
	memset(f, 0, sizeof(*f));
	if ((f->path = strdup(rel)) == NULL ||
	    project_slurp(fd, max, &f->text, &f->len) == -1) {
		snprintf(err, errlen, "%s/%s: %s", pr->workspace, rel,
		    errno == EFBIG ? "grew while read" : strerror(errno));
		free(f->path);
		close(fd);
		return -1;
	}
	close(fd);
	SHA256Data((const uint8_t *)f->text, f->len, f->sha256);
	pr->nfiles++;
	return 0;
}

/* Open dirfd/name as a directory without following a symlink: -1 with
 * errno ENOENT if absent; a symlink or non-directory is refused
 * (project_refuse). */
static int
project_opendir(struct project *pr, int dirfd, const char *name,
    const char *rel)
{
	struct stat	sb;
	int		fd;

	fd = openat(dirfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW |
	    O_CLOEXEC);
	if (fd == -1 && (errno == ELOOP || errno == ENOTDIR)) {
		/* O_DIRECTORY meets a symlink as ENOTDIR: say which. */
		project_refuse(pr, "%s is %s", rel, errno == ELOOP ||
		    (fstatat(dirfd, name, &sb, AT_SYMLINK_NOFOLLOW) == 0 &&
		    S_ISLNK(sb.st_mode)) ? "a symlink" : "not a directory");
		errno = ENOENT;
	}
	return fd;
}

static int
project_file_cmp(const void *a, const void *b)
{
	return strcmp(((const struct project_file *)a)->path,
	    ((const struct project_file *)b)->path);
}

/* The *.md files of the directory afd, as project_add reads them, shown
 * as prefix/NAME. */
static int
project_scan_md(struct project *pr, int afd, const char *prefix, char *err,
    size_t errlen)
{
	struct dirent	*de;
	DIR		*d;
	char		 rel[PATH_MAX];
	size_t		 l;
	int		 rc = 0;

	if ((d = fdopendir(afd)) == NULL) {
		close(afd);
		return -1;
	}
	while (rc == 0 && (de = readdir(d)) != NULL) {
		l = strlen(de->d_name);
		if (l < 4 || strcmp(de->d_name + l - 3, ".md") != 0 ||
		    de->d_name[0] == '.')
			continue;
		snprintf(rel, sizeof(rel), "%s/%s", prefix, de->d_name);
		rc = project_add(pr, afd, de->d_name, rel, PROFILE_MAX_FILE,
		    err, errlen);
	}
	closedir(d);
	return rc;
}

/* .claude/agents: a directory in the workspace (neither it nor .claude a
 * symlink), opened; -1 with errno ENOENT when there is none. */
static int
project_claude_dir(struct project *pr, int wsfd)
{
	int	cfd, afd;

	if ((cfd = project_opendir(pr, wsfd, ".claude", ".claude")) == -1)
		return -1;
	afd = project_opendir(pr, cfd, "agents", ".claude/agents");
	close(cfd);
	return afd;
}

/* Drop the files from the first on (what .claude/agents added). */
static void
project_drop(struct project *pr, size_t first)
{
	while (pr->nfiles > first) {
		pr->nfiles--;
		free(pr->files[pr->nfiles].path);
		free(pr->files[pr->nfiles].text);
	}
}

/*
 * Claude Code's agent files, .claude/agents/ *.md, at most
 * PROJECT_MAX_CLAUDE. What project_refuse finds there skips them all
 * (pr->claude_why says why), and leaves the rest of the project as it is.
 */
static int
project_scan_claude(struct project *pr, int wsfd, char *err, size_t errlen)
{
	size_t	first = pr->nfiles;
	int	afd, rc = 0;

	pr->in_claude = 1;
	pr->cap = first + PROJECT_MAX_CLAUDE;
	if ((afd = project_claude_dir(pr, wsfd)) == -1)
		rc = errno == ENOENT ? 0 : -1;
	else
		rc = project_scan_md(pr, afd, PROJECT_CLAUDE_AGENTS, err,
		    errlen);
	pr->in_claude = 0;
	if (pr->claude_skip)
		project_drop(pr, first);
	return rc;
}

/*
 * Is .warren/agents, a symlink, the workspace's own .claude/agents (what
 * users make: ln -s ../.claude/agents .warren/agents)? Compared by device
 * and inode; nothing is read through the link, so it cannot be a way out
 * of the workspace: its files are read once, as .claude/agents/ *.md.
 */
static int
project_agents_alias(int wsfd, int wfd)
{
	struct project	 tmp;
	struct stat	 lsb, csb;
	int		 cfd, same;

	if (fstatat(wfd, "agents", &lsb, 0) == -1)
		return 0;
	memset(&tmp, 0, sizeof(tmp));
	if ((cfd = project_claude_dir(&tmp, wsfd)) == -1)
		return 0;
	same = fstat(cfd, &csb) == 0 && csb.st_dev == lsb.st_dev &&
	    csb.st_ino == lsb.st_ino;
	close(cfd);
	return same;
}

/* .warren/agents/ *.md. */
static int
project_scan_agents(struct project *pr, int wsfd, int wfd, char *err,
    size_t errlen)
{
	struct stat	sb;
	int		afd;

	if (fstatat(wfd, "agents", &sb, AT_SYMLINK_NOFOLLOW) == 0 &&
	    S_ISLNK(sb.st_mode)) {
		if (project_agents_alias(wsfd, wfd))
			return 0;
		pr->unsafe = 1;
		project_why(pr, "%s is a symlink, and not to the workspace's "
		    "%s", PROJECT_WARREN_AGENTS, PROJECT_CLAUDE_AGENTS);
		return 0;
	}
	if ((afd = project_opendir(pr, wfd, "agents", PROJECT_WARREN_AGENTS)) ==
	    -1)
		return errno == ENOENT ? 0 : -1;
	return project_scan_md(pr, afd, PROJECT_WARREN_AGENTS, err, errlen);
}

int
project_scan(struct project *pr, const char *workspace, char *err,
    size_t errlen)
{
	int	wsfd, wfd = -1, rc = -1;

	memset(pr, 0, sizeof(*pr));
	err[0] = '\0';
	strlcpy(pr->workspace, workspace, sizeof(pr->workspace));
	if ((wsfd = open(workspace, O_PATH | O_DIRECTORY | O_CLOEXEC)) == -1) {
		snprintf(err, errlen, "workspace %s: %s", workspace,
		    strerror(errno));
		return -1;
	}
	if (project_scan_claude(pr, wsfd, err, errlen) == -1)
		goto out;
	pr->cap = pr->nfiles + PROJECT_MAX_FILES;
	if ((wfd = project_opendir(pr, wsfd, ".warren", ".warren")) == -1 &&
	    errno != ENOENT)
		goto out;
	if (wfd != -1 && (project_add(pr, wfd, "config", ".warren/config",
	    PROJECT_CONFIG_MAX, err, errlen) == -1 ||
	    project_scan_agents(pr, wsfd, wfd, err, errlen) == -1))
		goto out;
	/* Claude Code's .mcp.json: its servers, once trusted (mcp_load.c). */
	if (project_add(pr, wsfd, PROJECT_MCP_JSON, PROJECT_MCP_JSON,
	    PROJECT_CONFIG_MAX, err, errlen) == -1)
		goto out;
	if (pr->nfiles > 1)
		qsort(pr->files, pr->nfiles, sizeof(pr->files[0]),
		    project_file_cmp);
	rc = 0;
out:
	if (rc == -1 && err[0] == '\0')
		snprintf(err, errlen, "%s/.warren: %s", workspace,
		    strerror(errno));
	if (wfd != -1)
		close(wfd);
	close(wsfd);
	return rc;
}

/* pr->why from the differences between the files and the trusted set. */
static void
project_compare(struct project *pr, const struct store_trusted *t, size_t nt)
{
	size_t	i = 0, j = 0;
	int	c;

	if (nt == 0) {
		project_why(pr, "never trusted:");
		for (i = 0; i < pr->nfiles; i++) {
			strlcat(pr->why, i == 0 ? " " : ", ", sizeof(pr->why));
			strlcat(pr->why, pr->files[i].path, sizeof(pr->why));
		}
		return;
	}
	while (i < pr->nfiles || j < nt) {
		c = i == pr->nfiles ? 1 : j == nt ? -1 :
		    strcmp(pr->files[i].path, t[j].path);
		if (c < 0)
			project_why(pr, "%s added", pr->files[i++].path);
		else if (c > 0)
			project_why(pr, "%s removed", t[j++].path);
		else {
			if (strcmp(pr->files[i].sha256, t[j].sha256) != 0)
				project_why(pr, "%s changed",
				    pr->files[i].path);
			i++;
			j++;
		}
	}
}

static void
project_check(struct project *pr, const char *db)
{
	struct store_trusted	*t = NULL;
	struct store		*st;
	char			 err[STORE_ERRMSG_MAX];
	size_t			 nt = 0;

	pr->trusted = 0;
	if (pr->unsafe)
		return;
	if (pr->nfiles == 0) {
		pr->trusted = 1;	/* nothing to trust */
		return;
	}
	/* No database yet: nothing was ever trusted. One that cannot be
	 * read trusts nothing either: this fails closed. */
	if ((st = store_open(db, STORE_READ, err, sizeof(err))) == NULL) {
		if (access(db, F_OK) == -1 && errno == ENOENT)
			project_compare(pr, NULL, 0);
		else
			project_why(pr, "the trust records cannot be read: %s",
			    err);
		return;
	}
	if (store_trust_get(st, pr->workspace, &t, &nt) == -1)
		project_why(pr, "the trust records cannot be read: %s",
		    store_errmsg(st));
	else {
		project_compare(pr, t, nt);
		pr->trusted = pr->why[0] == '\0';
	}
	store_trusted_free(t, nt);
	store_close(st);
}

void
project_claude_warn(const struct project *pr, const char *cmd)
{
	char	why[PROJECT_WHY_MAX], ews[PATH_MAX];

	if (!pr->claude_skip)
		return;
	str_escape(ews, sizeof(ews), pr->workspace, strlen(pr->workspace));
	str_escape(why, sizeof(why), pr->claude_why, strlen(pr->claude_why));
	fprintf(stderr, "warren %s: %s/%s is skipped (none of its agents is "
	    "read): %s. warren reads only regular files there, through no "
	    "symlink, at most %d; the rest of the project is not affected\n",
	    cmd, ews, PROJECT_CLAUDE_AGENTS, why, PROJECT_MAX_CLAUDE);
}

int
project_open(struct project *pr, const char *dir, const char *db,
    const char *cmd, char *err, size_t errlen)
{
	char	workspace[PATH_MAX], path[PATH_MAX];
	char	ews[PATH_MAX], why[PROJECT_WHY_MAX];

	memset(pr, 0, sizeof(*pr));
	if (realpath(dir, workspace) == NULL) {
		snprintf(err, errlen, "workspace %s: %s", dir,
		    strerror(errno));
		return -1;
	}
	if (db == NULL && store_path(path, sizeof(path), NULL) == -1) {
		snprintf(err, errlen, "no state directory (%s): set HOME or "
		    "XDG_STATE_HOME", strerror(errno));
		return -1;
	}
	if (project_scan(pr, workspace, err, errlen) == -1)
		return -1;
	project_check(pr, db != NULL ? db : path);
	str_escape(ews, sizeof(ews), workspace, strlen(workspace));
	project_claude_warn(pr, cmd);
	if (pr->trusted)
		return 0;
	str_escape(why, sizeof(why), pr->why, strlen(pr->why));
	if (pr->unsafe)
		fprintf(stderr, "warren %s: the project config in %s/.warren, "
		    ".claude/agents and .mcp.json is ignored: %s. warren "
		    "reads only regular files there, and "
		    "an agent may have put these\n", cmd, ews, why);
	else
		fprintf(stderr, "warren %s: the project config in %s/.warren, "
		    ".claude/agents and .mcp.json is ignored: it is not "
		    "trusted (%s). "
		    "Anyone who can write the workspace can write it, agents "
		    "included: read it, then "
		    "run `warren trust %s` to use it\n", cmd, ews, why, ews);
	return 0;
}

const struct project_file *
project_file(const struct project *pr, const char *path)
{
	size_t	i;

	if (!pr->trusted)
		return NULL;
	for (i = 0; i < pr->nfiles; i++)
		if (strcmp(pr->files[i].path, path) == 0)
			return &pr->files[i];
	return NULL;
}

int
project_load_config(const struct project *pr, struct config *c)
{
	size_t	i;
	char	name[PATH_MAX + 16];

	if (!pr->trusted)
		return 0;
	for (i = 0; i < pr->nfiles; i++) {
		if (strcmp(pr->files[i].path, ".warren/config") != 0)
			continue;
		snprintf(name, sizeof(name), "%s/%s", pr->workspace,
		    pr->files[i].path);
		return config_load_text(c, pr->files[i].text, pr->files[i].len,
		    name, CONFIG_SRC_PROJECT);
	}
	return 0;
}

/* A trusted project's agent files under prefix, as one layer. */
static int
project_load_layer(const struct project *pr, struct profile_set *ps,
    const char *prefix, char *err, size_t errlen)
{
	char	name[PATH_MAX + 16];
	size_t	i, plen = strlen(prefix);

	profile_set_layer(ps);
	for (i = 0; i < pr->nfiles; i++) {
		if (strncmp(pr->files[i].path, prefix, plen) != 0 ||
		    pr->files[i].path[plen] != '/')
			continue;
		snprintf(name, sizeof(name), "%s/%s", pr->workspace,
		    pr->files[i].path);
		if (profile_set_add_text(ps, pr->files[i].text,
		    pr->files[i].len, name, err, errlen) == -1)
			return -1;
	}
	return 0;
}

int
project_load_profiles(const struct project *pr, struct profile_set *ps,
    char *err, size_t errlen)
{
	struct agent_warn	aw;
	char			dir[PATH_MAX];
	int			rc = -1;

	if (xdg_config_dir(dir, sizeof(dir)) == -1 ||
	    strlcat(dir, "/agents", sizeof(dir)) >= sizeof(dir))
		dir[0] = '\0';
	agent_warn_open(&aw);
	profile_warn_hook(agent_warn_file, &aw);
	if (profile_set_load(ps, dir[0] != '\0' ? dir : NULL, err,
	    errlen) == -1)
		goto out;
	rc = 0;
	if (pr == NULL || !pr->trusted)
		goto out;
	/* .warren/agents over .claude/agents: a name in both is warren's. */
	if (project_load_layer(pr, ps, PROJECT_CLAUDE_AGENTS, err,
	    errlen) == -1 || project_load_layer(pr, ps,
	    PROJECT_WARREN_AGENTS, err, errlen) == -1) {
		profile_set_free(ps);
		rc = -1;
	}
out:
	profile_warn_hook(NULL, NULL);
	agent_warn_close(&aw);
	return rc;
}

int
project_trust(const struct project *pr, const char *db, char *err,
    size_t errlen)
{
	struct store_trusted	*t;
	struct store		*st;
	size_t			 i;
	int			 rc = 0;

	if (pr->unsafe) {
		snprintf(err, errlen, "%s", pr->why);
		return -1;
	}
	if ((t = calloc(pr->nfiles + 1, sizeof(*t))) == NULL) {
		snprintf(err, errlen, "out of memory");
		return -1;
	}
	for (i = 0; i < pr->nfiles; i++) {
		t[i].path = pr->files[i].path;	/* borrowed */
		memcpy(t[i].sha256, pr->files[i].sha256, sizeof(t[i].sha256));
	}
	if ((st = store_open(db, STORE_CREATE, err, errlen)) == NULL)
		rc = -1;
	else if (store_trust_set(st, pr->workspace, t, pr->nfiles) == -1) {
		snprintf(err, errlen, "%s", store_errmsg(st));
		rc = -1;
	}
	store_close(st);
	free(t);
	return rc;
}

void
project_free(struct project *pr)
{
	size_t	i;

	for (i = 0; i < pr->nfiles; i++) {
		free(pr->files[i].path);
		free(pr->files[i].text);
	}
	free(pr->files);
	pr->files = NULL;
	pr->nfiles = 0;
}

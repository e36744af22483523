/*
 * The MCP servers a command may start: the user's mcp.json (trusted, in
 * warren's config directory) first, then the workspace's .mcp.json, read
 * only from a trusted project (cli/project.c hashes it with the rest of
 * the project's files) and granting nothing beyond an agent's sandbox
 * (supervisor/mcp_config.c).
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli/project.h"
#include "common/str.h"
#include "common/xdg.h"
#include "supervisor/mcp.h"

#define MCP_LOAD_MAX	(1024 * 1024)	/* bytes of the user's mcp.json */

int
mcp_load_user_path(char *out, size_t outsz)
{
	char	dir[PATH_MAX];
	int	n;

	if (xdg_config_dir(dir, sizeof(dir)) == -1)
		return -1;
	n = snprintf(out, outsz, "%s/mcp.json", dir);
	return n < 0 || (size_t)n >= outsz ? -1 : 0;
}

/* The whole file, or NULL (*missing set when there is none). */
static char *
mcp_load_read(const char *path, size_t *len, int *missing, char *err,
    size_t errsz)
{
	char	*text;
	ssize_t	 n;
	int	 fd;

	*missing = 0;
	if ((fd = open(path, O_RDONLY | O_CLOEXEC)) == -1) {
		if (errno == ENOENT)
			*missing = 1;
		else
			snprintf(err, errsz, "%s: %s", path, strerror(errno));
		return NULL;
	}
	text = malloc(MCP_LOAD_MAX + 1);
	*len = 0;
	while (text != NULL && *len <= MCP_LOAD_MAX && (n = read(fd,
	    text + *len, MCP_LOAD_MAX + 1 - *len)) > 0)
		*len += (size_t)n;
	close(fd);
	if (text == NULL || *len > MCP_LOAD_MAX) {
		snprintf(err, errsz, "%s: %s", path, text == NULL ?
		    "out of memory" : "larger than 1 MiB");
		free(text);
		return NULL;
	}
	text[*len] = '\0';
	return text;
}

static void
mcp_load_warn(const char *cmd, const char *warn)
{
	char	esc[2048];

	if (warn[0] == '\0')
		return;
	str_escape_flags(esc, sizeof(esc), warn, strlen(warn),
	    STR_ESC_KEEP_NL);
	fprintf(stderr, "warren %s: %s", cmd, esc);
}

int
mcp_load(struct mcp_config *c, const struct project *pr, const char *cmd,
    char *err, size_t errsz)
{
	const struct project_file	*f;
	char				 path[PATH_MAX + 16], warn[2048] = "";
	char				*text;
	size_t				 len;
	int				 missing, rc;

	memset(c, 0, sizeof(*c));
	if (mcp_load_user_path(path, sizeof(path)) == 0) {
		text = mcp_load_read(path, &len, &missing, err, errsz);
		if (text == NULL && !missing)
			return -1;
		rc = text == NULL ? 0 : mcp_config_parse(c, text, len, path, 0,
		    warn, sizeof(warn), err, errsz);
		free(text);
		if (rc == -1)
			return -1;
	}
	if (pr == NULL || (f = project_file(pr, PROJECT_MCP_JSON)) == NULL)
		return 0;
	snprintf(path, sizeof(path), "%s/%s", pr->workspace, f->path);
	if (mcp_config_parse(c, f->text, f->len, path, 1, warn, sizeof(warn),
	    err, errsz) == -1) {
		mcp_config_free(c);
		return -1;
	}
	mcp_load_warn(cmd, warn);
	return 0;
}
